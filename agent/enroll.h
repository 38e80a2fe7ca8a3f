/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enroll: the host's per-host key (the host id itself comes from
 * identity.h and is passed in).
 *
 * Per-host key: obtained on first contact with `POST /api/v1/enroll`,
 * `Authorization: Bearer <enrolment token>`, body {"host_id", "hostname"};
 * the server answers 200/201 {"host_key": "..."}; kept in state_dir/host.key
 * (mode 0600, written atomically).
 */
#ifndef TWL_AGENT_ENROLL_H
#define TWL_AGENT_ENROLL_H

#include <stddef.h>

struct twl_transport;
struct twl_http_result;

#define TWL_HOST_KEY_MAX 512
#define TWL_TOKEN_MAX 1024

/*
 * twl_secret_valid() - true if @s (length @n) can be sent as a bearer
 * token: 1..TWL_HOST_KEY_MAX visible ASCII characters (no space, no
 * control characters, so it can never split an HTTP header).
 */
int twl_secret_valid(const char *s, size_t n);

/*
 * twl_read_secret() - read a token or key file (at most TWL_TOKEN_MAX
 * bytes), strip surrounding white space and check it with
 * twl_secret_valid(). *@out is a new string (free() it). Returns 0,
 * -ENOENT, -EINVAL (empty or invalid content) or another negative errno.
 */
int twl_read_secret(const char *path, char **out);

/* twl_hostkey_load() - read state_dir/host.key; as twl_read_secret(). */
int twl_hostkey_load(const char *state_dir, char **key);

/*
 * twl_hostkey_store() - write @key to state_dir/host.key (0600, atomic),
 * creating state_dir (0700) if it does not exist.
 */
int twl_hostkey_store(const char *state_dir, const char *key);

/* twl_hostkey_forget() - delete state_dir/host.key. 0 if it is gone. */
int twl_hostkey_forget(const char *state_dir);

/*
 * twl_enroll() - POST /api/v1/enroll with @token as bearer. On 200/201 with
 * a valid {"host_key": str} (or {"key": str}) the key is returned in *@key (free() it) and 0.
 * Otherwise: -EACCES (401/403: token rejected), -EAGAIN (network, 408, 429,
 * 5xx: retry later), -EPROTO (2xx without a usable host_key), -EINVAL
 * (other 4xx). @res receives the HTTP details in every case.
 */
int twl_enroll(struct twl_transport *t, const char *token, const char *host_id,
	       const char *hostname, char **key, struct twl_http_result *res);

#endif /* TWL_AGENT_ENROLL_H */
