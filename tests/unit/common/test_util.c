// SPDX-License-Identifier: GPL-2.0
/* Shared utilities: capped buffer, UTF-8 table, hex/random, SHA-256, files, log. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include <twilight/util.h>

static void test_buf_caps(void **state)
{
	struct twl_buf b;
	char big[1000];
	int i;

	twl_buf_init(&b, 10);
	assert_null(b.data);
	assert_int_equal(twl_buf_append(&b, "0123456789", 10), 0);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.data, "0123456789");
	/* one byte over the cap: refused, buffer unchanged */
	assert_int_equal(twl_buf_append(&b, "x", 1), -E2BIG);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.data, "0123456789");
	assert_int_equal(twl_buf_printf(&b, "%d", 7), -E2BIG);
	assert_int_equal(b.len, 10);
	assert_int_equal(twl_buf_append(&b, "", 0), 0);
	twl_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	assert_int_equal(twl_buf_printf(&b, "%s-%03d", "ab", 7), 0);
	assert_string_equal(b.data, "ab-007");
	/* all or nothing: 6 + 5 > 10 */
	assert_int_equal(twl_buf_printf(&b, "%s", "12345"), -E2BIG);
	assert_string_equal(b.data, "ab-007");
	assert_int_equal(twl_buf_printf(&b, "%s", "1234"), 0);
	assert_string_equal(b.data, "ab-0071234");
	/* a huge length cannot wrap around the cap check */
	assert_int_equal(twl_buf_append(&b, "x", SIZE_MAX), -E2BIG);
	twl_buf_fini(&b);
	assert_null(b.data);
	twl_buf_fini(&b); /* twice is fine */
	twl_buf_fini(NULL);

	/* growth up to exactly the cap */
	memset(big, 'z', sizeof(big));
	twl_buf_init(&b, 100000);
	for (i = 0; i < 100; i++)
		assert_int_equal(twl_buf_append(&b, big, sizeof(big)), 0);
	assert_int_equal(b.len, 100000);
	assert_true(b.cap <= 100001);
	assert_int_equal(twl_buf_append(&b, big, 1), -E2BIG);
	assert_int_equal(b.data[b.len], '\0');
	twl_buf_fini(&b);

	/* max 0 holds only the empty string */
	twl_buf_init(&b, 0);
	assert_int_equal(twl_buf_append(&b, "", 0), 0);
	assert_string_equal(b.data, "");
	assert_int_equal(twl_buf_append(&b, "a", 1), -E2BIG);
	twl_buf_fini(&b);
}

/*
 * twl_buf_reserve: one allocation of exactly the claimed size, which the
 * appends then fill without moving; claims over the cap reserve nothing,
 * claims over max are refused, and the content never changes.
 */
static void test_buf_reserve(void **state)
{
	char fill[100];
	struct twl_buf b;
	char *at;

	memset(fill, 'r', sizeof(fill));
	twl_buf_init(&b, 100);
	assert_int_equal(twl_buf_reserve(&b, 0, 64), 0);
	assert_null(b.data);
	/* a claim over the cap: nothing reserved, appends still work */
	assert_int_equal(twl_buf_reserve(&b, 65, 64), 0);
	assert_null(b.data);
	assert_int_equal(b.cap, 0);
	/* over max: refused whatever the cap */
	assert_int_equal(twl_buf_reserve(&b, 101, 1000), -E2BIG);
	assert_int_equal(twl_buf_reserve(&b, SIZE_MAX, SIZE_MAX), -E2BIG);
	assert_null(b.data);

	assert_int_equal(twl_buf_reserve(&b, 40, 64), 0);
	assert_non_null(b.data);
	assert_string_equal(b.data, "");
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 41);
	at = b.data;
	assert_int_equal(twl_buf_append(&b, fill, 25), 0);
	assert_int_equal(twl_buf_append(&b, fill, 15), 0);
	assert_ptr_equal(b.data, at); /* filled without a realloc */
	assert_int_equal(b.cap, 41);
	assert_int_equal(b.len, 40);

	/* with content: room for n more, content kept */
	assert_int_equal(twl_buf_reserve(&b, 61, 64), -E2BIG);
	assert_int_equal(b.cap, 41);
	assert_int_equal(twl_buf_reserve(&b, 60, 64), 0);
	assert_int_equal(b.cap, 101);
	assert_int_equal(b.len, 40);
	assert_memory_equal(b.data, fill, 40);
	assert_int_equal(b.data[40], '\0');
	/* enough room already: nothing changes */
	at = b.data;
	assert_int_equal(twl_buf_reserve(&b, 10, 64), 0);
	assert_ptr_equal(b.data, at);
	assert_int_equal(b.cap, 101);
	assert_int_equal(twl_buf_append(&b, fill, 60), 0);
	assert_ptr_equal(b.data, at);
	assert_int_equal(twl_buf_append(&b, "x", 1), -E2BIG);
	twl_buf_fini(&b);
}

static const struct {
	const char *s;
	size_t len;
	bool ok;
	const char *what;
} utf8_cases[] = {
	{ "", 0, true, "empty" },
	{ "plain ascii ~", 13, true, "ASCII" },
	{ "\x7f", 1, true, "DEL" },
	{ "\xc2\x80", 2, true, "U+0080, smallest 2-byte" },
	{ "\xc3\xa9", 2, true, "U+00E9" },
	{ "\xdf\xbf", 2, true, "U+07FF, largest 2-byte" },
	{ "\xe0\xa0\x80", 3, true, "U+0800, smallest 3-byte" },
	{ "\xe2\x82\xac", 3, true, "U+20AC euro" },
	{ "\xed\x9f\xbf", 3, true, "U+D7FF, just below surrogates" },
	{ "\xee\x80\x80", 3, true, "U+E000, just above surrogates" },
	{ "\xef\xbf\xbf", 3, true, "U+FFFF" },
	{ "\xf0\x90\x80\x80", 4, true, "U+10000, smallest 4-byte" },
	{ "\xf0\x9d\x84\x9e", 4, true, "U+1D11E" },
	{ "\xf4\x8f\xbf\xbf", 4, true, "U+10FFFF, largest" },
	{ "a\0b", 3, false, "NUL inside" },
	{ "\0", 1, false, "NUL alone" },
	{ "\x80", 1, false, "lone continuation" },
	{ "\xbf", 1, false, "lone continuation BF" },
	{ "\xc0\x80", 2, false, "overlong NUL" },
	{ "\xc0\xaf", 2, false, "overlong '/'" },
	{ "\xc1\xbf", 2, false, "overlong C1" },
	{ "\xe0\x80\xaf", 3, false, "overlong 3-byte '/'" },
	{ "\xe0\x9f\xbf", 3, false, "overlong U+07FF" },
	{ "\xf0\x80\x80\xaf", 4, false, "overlong 4-byte '/'" },
	{ "\xf0\x8f\xbf\xbf", 4, false, "overlong U+FFFF" },
	{ "\xed\xa0\x80", 3, false, "surrogate U+D800" },
	{ "\xed\xbf\xbf", 3, false, "surrogate U+DFFF" },
	{ "\xed\xa0\xbd\xed\xb2\xa9", 6, false, "CESU-8 surrogate pair" },
	{ "\xf4\x90\x80\x80", 4, false, "U+110000" },
	{ "\xf5\x80\x80\x80", 4, false, "lead F5" },
	{ "\xf8\x88\x80\x80\x80", 5, false, "5-byte form" },
	{ "\xfe", 1, false, "FE" },
	{ "\xff", 1, false, "FF" },
	{ "\xc3", 1, false, "truncated 2-byte" },
	{ "\xe2\x82", 2, false, "truncated 3-byte" },
	{ "\xf0\x9d\x84", 3, false, "truncated 4-byte" },
	{ "\xc3\x28", 2, false, "bad continuation" },
	{ "\xe2\x28\xa1", 3, false, "bad second byte" },
	{ "\xe2\x82\x28", 3, false, "bad third byte" },
	{ "\xf0\x9d\x84\x28", 4, false, "bad fourth byte" },
	{ "ok\xc3\xa9then\xff", 9, false, "bad byte after good text" },
};

static void test_utf8_table(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++)
		if (twl_utf8_valid(utf8_cases[i].s, utf8_cases[i].len) !=
		    utf8_cases[i].ok)
			fail_msg("utf8 case '%s': expected %s",
				 utf8_cases[i].what,
				 utf8_cases[i].ok ? "valid" : "invalid");
	/* the length is respected: a NUL past len is not looked at */
	assert_true(twl_utf8_valid("ab\0", 2));
	assert_false(twl_utf8_valid("\xc3\xa9", 1));
}

static void test_sha256_hex(void **state)
{
	char out[65];

	twl_sha256_hex("", 0, out);
	assert_string_equal(
		out,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	twl_sha256_hex("abc", 3, out);
	assert_string_equal(
		out,
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	twl_sha256_hex(
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		out);
	assert_string_equal(
		out,
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_hex_random(void **state)
{
	char a[65], b[65], hex[9];
	size_t i;

	twl_hex_encode("\x00\x9f\xa0\xff", 4, hex);
	assert_string_equal(hex, "009fa0ff");
	assert_int_equal(twl_random_hex(a, 32), 0);
	assert_int_equal(twl_random_hex(b, 32), 0);
	assert_int_equal(strlen(a), 64);
	for (i = 0; i < 64; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	/* 256 random bits: equal only if the generator is broken */
	assert_string_not_equal(a, b);
	assert_int_equal(twl_random_hex(a, 0), -EINVAL);
	assert_int_equal(twl_random_hex(a, 257), -EINVAL);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/twl-util-test.XXXXXX", path[128], *out = NULL;
	struct stat st;
	struct dirent *de;
	size_t len = 99;
	DIR *d;
	int n;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.json", dir);

	assert_int_equal(twl_write_file_atomic(path, "hello", 5, 0600), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(twl_read_file(path, 5, &out, &len), 0);
	assert_int_equal(len, 5);
	assert_string_equal(out, "hello");
	free(out);

	/* replace with other content and mode */
	assert_int_equal(twl_write_file_atomic(path, "bye", 3, 0644), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(twl_read_file(path, 100, &out, NULL), 0);
	assert_string_equal(out, "bye");
	free(out);

	/* over the cap: -EFBIG and no buffer */
	assert_int_equal(twl_read_file(path, 2, &out, &len), -EFBIG);
	assert_null(out);

	/* no temporary file left behind */
	d = opendir(dir);
	assert_non_null(d);
	n = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	assert_int_equal(n, 1);

	/* an empty file reads as "" */
	assert_int_equal(twl_write_file_atomic(path, "", 0, 0600), 0);
	assert_int_equal(twl_read_file(path, 10, &out, &len), 0);
	assert_non_null(out);
	assert_int_equal(len, 0);
	assert_string_equal(out, "");
	free(out);

	/* errors are negative errno */
	snprintf(path, sizeof(path), "%s/missing/x", dir);
	assert_int_equal(twl_write_file_atomic(path, "x", 1, 0600), -ENOENT);
	assert_int_equal(twl_read_file(path, 10, &out, NULL), -ENOENT);
	assert_null(out);

	snprintf(path, sizeof(path), "%s/state.json", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

/* mkdir -p: nested, idempotent, mode, and a file in the way. */
static void test_mkdir_p(void **state)
{
	char dir[] = "/tmp/twl-util-mkdir.XXXXXX", path[160], cmd[200];
	struct stat st;
	mode_t old = umask(022);
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b//c/", dir);
	assert_int_equal(twl_mkdir_p(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	/* again: everything exists, nothing to do */
	assert_int_equal(twl_mkdir_p(path, 0700), 0);

	/* a file where a directory should be, last or in the middle */
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(twl_mkdir_p(path, 0700), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/file/sub", dir);
	assert_int_equal(twl_mkdir_p(path, 0700), -ENOTDIR);

	assert_int_equal(twl_mkdir_p("", 0700), -EINVAL);
	assert_int_equal(twl_mkdir_p(NULL, 0700), -EINVAL);
	umask(old);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Printable copies: every other byte becomes '?', the cap holds. */
static void test_printable_copy(void **state)
{
	char out[8];

	assert_int_equal(twl_printable_copy("a\x01"
					    "b\x7f\xc3\xa9~",
					    7, out, sizeof(out)),
			 7);
	assert_string_equal(out, "a?b???~");
	/* a NUL inside the input is a byte like any other */
	assert_int_equal(twl_printable_copy("x\0y", 3, out, sizeof(out)), 3);
	assert_string_equal(out, "x?y");
	/* cut at cap - 1 bytes */
	assert_int_equal(twl_printable_copy("0123456789", 10, out, sizeof(out)),
			 7);
	assert_string_equal(out, "0123456");
	assert_int_equal(twl_printable_copy("abc", 3, out, 1), 0);
	assert_string_equal(out, "");
	/* no room at all: nothing written */
	out[0] = 'z';
	assert_int_equal(twl_printable_copy("abc", 3, out, 0), 0);
	assert_int_equal(out[0], 'z');
}

/* The clocks: monotonic never goes back, and boot + monotonic is now. */
static void test_clocks(void **state)
{
	uint64_t ms = twl_mono_ms(), ns = twl_mono_ns();
	struct timespec rt;
	int64_t boot = twl_boot_time_ns(), now_ns;

	assert_true(twl_mono_ms() >= ms);
	assert_true(ns / 1000000 >= ms);
	assert_true(twl_mono_ns() >= ns);
	clock_gettime(CLOCK_REALTIME, &rt);
	now_ns = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec;
	assert_true(boot > 0 && boot < now_ns);
	/* a kernel timestamp taken now maps to now (same second) */
	assert_true(llabs(boot + (int64_t)twl_mono_ns() - now_ns) <
		    1000000000LL);
}

static void test_log(void **state)
{
	char tmpl[] = "/tmp/twl-log-test.XXXXXX", *text = NULL;
	int fd = mkstemp(tmpl), saved;

	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);

	twl_log_init("twl-test", LOG_INFO);
	twl_log(LOG_WARNING, "spool %s is full (%d files)\n", "/var/spool/x",
		3);
	twl_log(LOG_DEBUG, "not shown");
	twl_log(LOG_ERR, "second");
	twl_log_init("twl-test", LOG_DEBUG);
	twl_log(LOG_DEBUG, "now shown");
	fflush(stderr);

	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(fd);
	assert_int_equal(twl_read_file(tmpl, 4096, &text, NULL), 0);
	assert_string_equal(
		text,
		"twl-test: warning: spool /var/spool/x is full (3 files)\n"
		"twl-test: error: second\n"
		"twl-test: debug: now shown\n");
	free(text);
	unlink(tmpl);
}

/* Numeric HOST:PORT, the server's --listen and the load generator's URL. */
static void test_parse_addr_port(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	const char *bad[] = { "127.0.0.1",	 "127.0.0.1:",	 "127.0.0.1:x",
			      "127.0.0.1:65536", "localhost:80", "[::1:80",
			      "[::1]80",	 ":80",		 "" };
	socklen_t len = 0;

	assert_int_equal(twl_parse_addr_port("127.0.0.1:8443", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(*v4));
	assert_int_equal(ntohs(v4->sin_port), 8443);
	assert_int_equal(ntohl(v4->sin_addr.s_addr), 0x7f000001);
	assert_int_equal(twl_parse_addr_port("[::1]:0", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(*v6));
	assert_int_equal(ntohs(v6->sin6_port), 0);
	assert_true(IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr));
	/* unbracketed IPv6: the last colon starts the port */
	assert_int_equal(twl_parse_addr_port("::1:65535", &ss, NULL), 0);
	assert_int_equal(ntohs(v6->sin6_port), 65535);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(twl_parse_addr_port(bad[i], &ss, &len),
				 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_caps),
		cmocka_unit_test(test_buf_reserve),
		cmocka_unit_test(test_utf8_table),
		cmocka_unit_test(test_sha256_hex),
		cmocka_unit_test(test_hex_random),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_mkdir_p),
		cmocka_unit_test(test_printable_copy),
		cmocka_unit_test(test_clocks),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_parse_addr_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
