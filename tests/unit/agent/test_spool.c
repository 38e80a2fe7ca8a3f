// SPDX-License-Identifier: GPL-2.0
/* Spool: header format, ordering, caps, age, corruption, temp files, lock. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <zlib.h>

#include "spool.h"
#include "tu_common.h"

struct ctx {
	char *dir;
	char *qdir;
	int64_t wall;
};

static int64_t fake_wall(void *c)
{
	return ((struct ctx *)c)->wall;
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->dir = tu_mkdtemp("spool");
	assert_non_null(c->dir);
	assert_true(asprintf(&c->qdir, "%s/quarantine", c->dir) > 0);
	c->wall = 1764700000;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	tu_rmrf(c->dir);
	free(c->dir);
	free(c->qdir);
	free(c);
	return 0;
}

static struct twl_spool *open_sp(struct ctx *c, uint64_t max_bytes,
				 unsigned max_age)
{
	struct twl_spool_opts o = {
		.dir = c->dir,
		.max_bytes = max_bytes,
		.max_age_s = max_age,
		.quarantine_max = 3,
		.wall_s = fake_wall,
		.ctx = c,
	};
	return twl_spool_open(&o);
}

static void put_str(struct twl_spool *sp, const char *s, uint64_t *id)
{
	assert_int_equal(twl_spool_put(sp, s, strlen(s), id), 0);
}

static char *path_of(struct ctx *c, uint64_t id)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%020llu.batch", c->dir,
			     (unsigned long long)id) > 0);
	return p;
}

static void test_header_roundtrip_and_rejects(void **state)
{
	uint8_t h[TWL_SPOOL_HDR_LEN];
	struct twl_spool_hdr d;
	const char *why = NULL;

	twl_spool_hdr_encode(h, 1234, 0xdeadbeef, 1764700000);
	assert_memory_equal(h, "TWSP", 4);
	assert_int_equal(twl_spool_hdr_decode(h, sizeof(h), &d, &why), 0);
	assert_int_equal(d.length, 1234);
	assert_int_equal(d.crc, 0xdeadbeef);
	assert_int_equal(d.created, 1764700000);
	assert_int_equal(d.version, 1);

	assert_int_equal(twl_spool_hdr_decode(h, 31, &d, &why), -EBADMSG);
	assert_string_equal(why, "truncated header");
	h[0] = 'X';
	assert_int_equal(twl_spool_hdr_decode(h, sizeof(h), &d, &why),
			 -EBADMSG);
	assert_string_equal(why, "bad magic");
	h[0] = 'T';
	h[17] ^= 1; /* created time changed: header CRC must catch it */
	assert_int_equal(twl_spool_hdr_decode(h, sizeof(h), &d, &why),
			 -EBADMSG);
	assert_string_equal(why, "header CRC mismatch");
	h[17] ^= 1;
	assert_int_equal(twl_spool_hdr_decode(h, sizeof(h), &d, NULL), 0);
	/* A length beyond the limit is refused even with a valid header CRC. */
	twl_spool_hdr_encode(h, TWL_SPOOL_MAX_BATCH + 1, 0, 0);
	assert_int_equal(twl_spool_hdr_decode(h, sizeof(h), &d, &why),
			 -EBADMSG);
	assert_string_equal(why, "payload length over limit");
}

/* Enough files that directory order differs from age order. */
#define ORDER_N 300

static void test_order_and_reopen(void **state)
{
	struct ctx *c = *state;
	struct twl_spool *sp = open_sp(c, 1 << 20, 0);
	uint64_t ids[ORDER_N], id;
	char *data, buf[32];
	size_t len;

	assert_non_null(sp);
	for (int i = 0; i < ORDER_N; i++) {
		snprintf(buf, sizeof(buf), "batch-%d", i);
		put_str(sp, buf, &ids[i]);
		if (i)
			assert_true(ids[i] > ids[i - 1]);
	}
	twl_spool_close(sp);
	sp = open_sp(c, 1 << 20, 0);
	assert_non_null(sp);
	/* Oldest first, across a reopen, with content intact. */
	for (int i = 0; i < ORDER_N; i++) {
		assert_int_equal(twl_spool_oldest(sp, &id), 0);
		assert_int_equal(id, ids[i]);
		assert_int_equal(twl_spool_load(sp, id, &data, &len), 0);
		snprintf(buf, sizeof(buf), "batch-%d", i);
		assert_int_equal(len, strlen(buf));
		assert_string_equal(data, buf);
		free(data);
		assert_int_equal(twl_spool_remove(sp, id), 0);
	}
	assert_int_equal(twl_spool_oldest(sp, &id), -ENOENT);
	/* New ids after a reopen still sort after anything left. */
	put_str(sp, "x", &id);
	assert_true(id > ids[ORDER_N - 1]);
	twl_spool_close(sp);
}

static void test_size_cap_drops_oldest(void **state)
{
	struct ctx *c = *state;
	char payload[1000];
	struct twl_spool_counts cnt;
	struct twl_spool *sp;
	uint64_t id, first = 0;
	char *data;

	memset(payload, 'a', sizeof(payload));
	/* Room for 3 batches of 1032 bytes, not 4. */
	sp = open_sp(c, 3 * (1000 + TWL_SPOOL_HDR_LEN) + 100, 0);
	assert_non_null(sp);
	for (int i = 0; i < 5; i++) {
		payload[0] = (char)('0' + i);
		assert_int_equal(
			twl_spool_put(sp, payload, sizeof(payload), &id), 0);
		if (!i)
			first = id;
	}
	twl_spool_counts(sp, &cnt);
	assert_int_equal(cnt.files, 3);
	assert_int_equal(cnt.dropped, 2);
	assert_int_equal(cnt.bytes, 3 * (1000 + TWL_SPOOL_HDR_LEN));
	assert_int_equal(tu_count(c->dir, ".batch"), 3);
	assert_int_equal(twl_spool_oldest(sp, &id), 0);
	assert_int_equal(id, first + 2);
	assert_int_equal(twl_spool_load(sp, id, &data, NULL), 0);
	assert_int_equal(data[0], '2');
	free(data);
	/* A batch larger than the whole cap is refused, nothing dropped. */
	{
		char *big = calloc(1, 4000);

		assert_non_null(big);
		assert_int_equal(twl_spool_put(sp, big, 4000, NULL), -E2BIG);
		free(big);
	}
	twl_spool_counts(sp, &cnt);
	assert_int_equal(cnt.files, 3);
	assert_int_equal(cnt.dropped, 2);
	twl_spool_close(sp);
}

static void test_age_limit(void **state)
{
	struct ctx *c = *state;
	struct twl_spool_counts cnt;
	struct twl_spool *sp = open_sp(c, 1 << 20, 30 * 86400);
	uint64_t old_id, new_id, id;

	assert_non_null(sp);
	put_str(sp, "old", &old_id);
	c->wall += 20 * 86400;
	put_str(sp, "new", &new_id);
	c->wall += 11 * 86400; /* "old" is now 31 days old, "new" 11 */
	assert_int_equal(twl_spool_expire(sp), 1);
	twl_spool_counts(sp, &cnt);
	assert_int_equal(cnt.files, 1);
	assert_int_equal(cnt.dropped, 1);
	assert_int_equal(twl_spool_oldest(sp, &id), 0);
	assert_int_equal(id, new_id);
	twl_spool_close(sp);
	/* Expiry also happens at open. */
	c->wall += 20 * 86400;
	sp = open_sp(c, 1 << 20, 30 * 86400);
	assert_non_null(sp);
	twl_spool_counts(sp, &cnt);
	assert_int_equal(cnt.files, 0);
	assert_int_equal(cnt.dropped, 1);
	assert_int_equal(tu_count(c->dir, ".batch"), 0);
	twl_spool_close(sp);
}

static void corrupt_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void test_corrupt_payload_quarantined(void **state)
{
	struct ctx *c = *state;
	struct twl_spool *sp = open_sp(c, 1 << 20, 0);
	struct twl_spool_counts cnt;
	uint64_t a, b, id;
	char *p, *data = (char *)1, *why, *wp = NULL;

	assert_non_null(sp);
	put_str(sp, "{\"first\":1}", &a);
	put_str(sp, "{\"second\":2}", &b);
	p = path_of(c, a);
	corrupt_byte(p, TWL_SPOOL_HDR_LEN + 3);
	/* Header fine, so open keeps it; the CRC check at load catches it. */
	assert_int_equal(twl_spool_load(sp, a, &data, NULL), -EBADMSG);
	assert_null(data);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(tu_count(c->qdir, ".batch"), 1);
	assert_int_equal(tu_count(c->qdir, ".why"), 1);
	/* The reason is written beside the quarantined batch. */
	{
		DIR *d = opendir(c->qdir);
		struct dirent *de;

		assert_non_null(d);
		while ((de = readdir(d)))
			if (strstr(de->d_name, ".why"))
				assert_true(asprintf(&wp, "%s/%s", c->qdir,
						     de->d_name) > 0);
		closedir(d);
	}
	assert_non_null(wp);
	why = tu_slurp(wp, NULL);
	assert_non_null(why);
	assert_non_null(strstr(why, "payload CRC mismatch"));
	free(why);
	free(wp);
	twl_spool_counts(sp, &cnt);
	assert_int_equal(cnt.quarantined, 1);
	assert_int_equal(cnt.files, 1);
	/* The next batch is still delivered. */
	assert_int_equal(twl_spool_oldest(sp, &id), 0);
	assert_int_equal(id, b);
	assert_int_equal(twl_spool_load(sp, id, &data, NULL), 0);
	assert_string_equal(data, "{\"second\":2}");
	free(data);
	free(p);
	twl_spool_close(sp);
}

static void test_corrupt_header_and_truncation_at_open(void **state)
{
	struct ctx *c = *state;
	struct twl_spool *sp = open_sp(c, 1 << 20, 0);
	struct twl_spool_counts cnt;
	uint64_t a, b, d, id;
	char *pa, *pb, *junk = NULL;
	int fd;

	assert_non_null(sp);
	put_str(sp, "aaaaaaaaaaaaaaaa", &a);
	put_str(sp, "bbbbbbbbbbbbbbbb", &b);
	put_str(sp, "dddddddddddddddd", &d);
	twl_spool_close(sp);
	pa = path_of(c, a);
	pb = path_of(c, b);
	corrupt_byte(pa, 1); /* magic */
	assert_int_equal(truncate(pb, TWL_SPOOL_HDR_LEN + 5), 0);
	/* A zero-length batch file (crash on a filesystem without rename order). */
	assert_true(asprintf(&junk, "%s/%020llu.batch", c->dir,
			     (unsigned long long)d + 1) > 0);
	fd = open(junk, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);

	sp = open_sp(c, 1 << 20, 0);
	assert_non_null(sp);
	twl_spool_counts(sp, &cnt);
	assert_int_equal(cnt.files, 1);
	assert_int_equal(cnt.quarantined, 3);
	assert_int_equal(twl_spool_oldest(sp, &id), 0);
	assert_int_equal(id, d);
	/* New batches never reuse the id of a quarantined one. */
	put_str(sp, "e", &id);
	assert_true(id > d + 1);
	assert_int_equal(tu_count(c->qdir, ".batch"), 3);
	twl_spool_close(sp);
	free(pa);
	free(pb);
	free(junk);
}

static void test_quarantine_capped(void **state)
{
	struct ctx *c = *state;
	struct twl_spool *sp = open_sp(c, 1 << 20, 0);
	uint64_t id;

	assert_non_null(sp);
	for (int i = 0; i < 6; i++) {
		put_str(sp, "reject me", &id);
		c->wall++; /* distinct quarantine names, in age order */
		assert_int_equal(twl_spool_quarantine(sp, id,
						      "HTTP 400 (bad_value)"),
				 0);
	}
	assert_int_equal(tu_count(c->qdir, ".batch"), 3); /* quarantine_max */
	assert_int_equal(tu_count(c->qdir, ".why"), 3);
	twl_spool_close(sp);
}

static void test_temp_files_removed_and_strangers_kept(void **state)
{
	struct ctx *c = *state;
	struct twl_spool *sp = open_sp(c, 1 << 20, 0);
	struct twl_spool_counts cnt;
	char *tmp = NULL, *other = NULL;
	int fd;

	assert_non_null(sp);
	put_str(sp, "kept", NULL);
	twl_spool_close(sp);
	assert_true(asprintf(&tmp, "%s/.tmp-7-abcdef", c->dir) > 0);
	assert_true(asprintf(&other, "%s/README", c->dir) > 0);
	fd = open(tmp, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "TWSP", 4), 4);
	close(fd);
	fd = open(other, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	sp = open_sp(c, 1 << 20, 0);
	assert_non_null(sp);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(access(other, F_OK), 0);
	twl_spool_counts(sp, &cnt);
	assert_int_equal(cnt.files, 1);
	assert_int_equal(cnt.quarantined, 0);
	twl_spool_close(sp);
	free(tmp);
	free(other);
}

/* Fork a process that tries to open the spool; its exit status says how it went. */
static int open_in_child(struct ctx *c)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct twl_spool *x = open_sp(c, 1 << 20, 0);

		_exit(x ? 0 : errno == EBUSY ? 1 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_lock_excludes_other_process(void **state)
{
	struct ctx *c = *state;
	struct twl_spool *a = open_sp(c, 1 << 20, 0), *b;

	assert_non_null(a);
	assert_int_equal(open_in_child(c), 1); /* EBUSY */
	/* This process may open it again (reload); the lock outlives the old one. */
	b = open_sp(c, 1 << 20, 0);
	assert_non_null(b);
	twl_spool_close(a);
	assert_int_equal(open_in_child(c), 1);
	twl_spool_close(b);
	/* Released once the last holder closes. */
	assert_int_equal(open_in_child(c), 0);
	twl_spool_close(NULL);
}

static void test_vanished_file(void **state)
{
	struct ctx *c = *state;
	struct twl_spool *sp = open_sp(c, 1 << 20, 0);
	uint64_t id;
	char *p, *data;

	assert_non_null(sp);
	put_str(sp, "gone", &id);
	p = path_of(c, id);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(twl_spool_load(sp, id, &data, NULL), -ENOENT);
	assert_int_equal(twl_spool_oldest(sp, &id), -ENOENT);
	free(p);
	twl_spool_close(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_roundtrip_and_rejects),
		cmocka_unit_test_setup_teardown(test_order_and_reopen, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_size_cap_drops_oldest,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_age_limit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_corrupt_payload_quarantined, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_corrupt_header_and_truncation_at_open, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_quarantine_capped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_temp_files_removed_and_strangers_kept, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_lock_excludes_other_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vanished_file, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
