// SPDX-License-Identifier: GPL-2.0
/* Per-host key: enrolment with the enrolment token, storage in state_dir. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <twilight/util.h>

#include "enroll.h"
#include "transport.h"

/* Strip white space at both ends of @s (length *@n), in place. */
static char *trim(char *s, size_t *n)
{
	while (*n && isspace((unsigned char)s[*n - 1]))
		s[--*n] = 0;
	while (*n && isspace((unsigned char)*s)) {
		s++;
		--*n;
	}
	return s;
}

int twl_secret_valid(const char *s, size_t n)
{
	if (!s || n == 0 || n > TWL_HOST_KEY_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return 0;
	return 1;
}

int twl_read_secret(const char *path, char **out)
{
	char *buf = NULL, *t;
	size_t n = 0;
	int ret;

	*out = NULL;
	ret = twl_read_file(path, TWL_TOKEN_MAX, &buf, &n);
	if (ret)
		return ret == -EFBIG ? -EINVAL : ret;
	t = trim(buf, &n);
	if (!twl_secret_valid(t, n)) {
		ret = -EINVAL;
		goto out;
	}
	*out = strndup(t, n);
	ret = *out ? 0 : -ENOMEM;
out:
	explicit_bzero(buf, strlen(buf));
	free(buf);
	return ret;
}

static int state_path(const char *state_dir, const char *name, char **out)
{
	if (!state_dir || !state_dir[0])
		return -EINVAL;
	if (asprintf(out, "%s/%s", state_dir, name) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

int twl_hostkey_load(const char *state_dir, char **key)
{
	char *path = NULL;
	int ret;

	*key = NULL;
	ret = state_path(state_dir, "host.key", &path);
	if (ret)
		return ret;
	ret = twl_read_secret(path, key);
	free(path);
	return ret;
}

int twl_hostkey_store(const char *state_dir, const char *key)
{
	char *path = NULL;
	int ret;

	if (!twl_secret_valid(key, strlen(key)))
		return -EINVAL;
	ret = state_path(state_dir, "host.key", &path);
	if (ret)
		return ret;
	/* The agent creates its state directory; be safe if it has not. */
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		goto out;
	}
	ret = twl_write_file_atomic(path, key, strlen(key), 0600);
out:
	free(path);
	return ret;
}

int twl_hostkey_forget(const char *state_dir)
{
	char *path = NULL;
	int ret;

	ret = state_path(state_dir, "host.key", &path);
	if (ret)
		return ret;
	ret = unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	free(path);
	return ret;
}

int twl_enroll(struct twl_transport *t, const char *token, const char *host_id,
	       const char *hostname, char **key, struct twl_http_result *res)
{
	json_t *req = NULL, *ans = NULL;
	char *body = NULL;
	const char *k;
	int ret;

	*key = NULL;
	req = json_pack("{s:s, s:s}", "host_id", host_id, "hostname",
			hostname ? hostname : "");
	if (!req)
		return -EINVAL;
	body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!body)
		return -ENOMEM;
	ret = twl_transport_post(t, "/api/v1/enroll", token, body, strlen(body),
				 false, res);
	free(body);
	if (ret == -ENOMEM)
		return ret;
	switch (twl_classify(res)) {
	case TWL_V_DELIVERED:
		break;
	case TWL_V_KEY_REJECTED:
		return -EACCES;
	case TWL_V_QUARANTINE:
	case TWL_V_SPLIT:
		return -EINVAL;
	default:
		return -EAGAIN;
	}
	ans = json_loadb(res->body, res->body_len, 0, NULL);
	k = json_string_value(json_object_get(ans, "host_key"));
	if (!k) /* the name the server used in its first version */
		k = json_string_value(json_object_get(ans, "key"));
	if (!k || !twl_secret_valid(k, strlen(k))) {
		ret = -EPROTO;
		goto out;
	}
	*key = strdup(k);
	ret = *key ? 0 : -ENOMEM;
out:
	json_decref(ans);
	return ret;
}
