// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven tests of agent/bpf/usage_conv.c and twl_bpf_parse.h: cgroup
 * paths captured leaf first, container identity, privacy, comm
 * sanitizing, key -> wire usage entry (checked with the wire validator),
 * and the value parsers the BPF program runs (use_hierarchy's condition,
 * the memory controller's page_counter_memparse).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/types.h>

#include <twilight/catalog.h>
#include <twilight/wire.h>

#include "twl_bpf.h"
#include "twl_bpf_parse.h"
#include "twl_bpf_types.h"
#include "usage_conv.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_path_from_raw(void **state)
{
	static const struct {
		const char *raw;
		size_t len;
		bool truncated;
		const char *want;
	} cases[] = {
		{ "", 0, false, "/" },
		{ "leaf/", 5, false, "/leaf" },
		{ "c/b/a/", 6, false, "/a/b/c" },
		{ "c\0b\0a\0", 6, false, "/a/b/c" }, /* NUL-terminated names */
		{ "job-1/system.slice/", 19, false, "/system.slice/job-1" },
		{ "x/y/", 4, true, "/.../y/x" },
		{ "a\x01"
		  "b/",
		  4, false, "/a?b" },
		{ "\xff\xfe/", 3, false, "/??" },
		{ "caf\xc3\xa9/", 6, false,
		  "/caf\xc3\xa9" }, /* valid UTF-8 kept */
		{ "c/b/a/garbage", 6, false,
		  "/a/b/c" }, /* len bounds the read */
	};
	char out[600];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(twl_cgroup_path_from_raw(
					 cases[i].raw, cases[i].len,
					 cases[i].truncated, out, sizeof(out)),
				 0);
		assert_string_equal(out, cases[i].want);
	}
	assert_int_equal(twl_cgroup_path_from_raw("abc/", 4, false, out, 4),
			 -ENOSPC);
	assert_int_equal(twl_cgroup_path_from_raw("abc/", 4, false, out, 5), 0);
	assert_int_equal(twl_cgroup_path_from_raw("a/", TWL_BPF_PATH_LEN + 1,
						  false, out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(twl_cgroup_path_from_raw(NULL, 0, false, out,
						  sizeof(out)),
			 -EINVAL);
}

static void test_path_too_deep(void **state)
{
	char raw[TWL_BPF_PATH_LEN], out[1100];
	size_t i, o = 0;

	(void)state;
	/* More names than the BPF side ever writes: malformed, not truncated silently. */
	for (i = 0; i < TWL_BPF_PATH_DEPTH + 2; i++) {
		raw[o++] = 'a';
		raw[o++] = '/';
	}
	assert_int_equal(twl_cgroup_path_from_raw(raw, o, false, out,
						  sizeof(out)),
			 -EINVAL);
}

static void test_container(void **state)
{
	static const struct {
		const char *path, *want;
	} cases[] = {
		{ "/", "" },
		{ "", "" },
		{ "/docker/" HEX64, "docker:" HEX64 },
		{ "/system.slice/docker-" HEX64 ".scope", "docker:" HEX64 },
		{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234_5678.slice/cri-containerd-" HEX64
		  ".scope",
		  "cri-containerd:" HEX64 },
		{ "/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb-cccc-1234567890ab/" HEX64,
		  "cri-containerd:" HEX64 },
		{ "/kubepods/pod0f1e2d3c/" HEX64, "cri-containerd:" HEX64 },
		{ "/kubepods.slice/kubepods-pod1.slice/crio-" HEX64 ".scope",
		  "crio:" HEX64 },
		{ "/machine.slice/libpod-" HEX64 ".scope", "podman:" HEX64 },
		{ "/lxc/web1", "lxc:web1" },
		{ "/lxc.payload.web2/init.scope", "lxc:web2" },
		{ "/system.slice/nginx.service", "systemd:nginx.service" },
		{ "/user.slice/user-1000.slice/session-3.scope",
		  "systemd:session-3.scope" },
		{ "/user.slice/user-1000.slice", "systemd:user-1000.slice" },
		{ "/-.slice", "" },
		/* Not a container id: 63 hex digits, or not hex. */
		{ "/docker/"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
		  "" },
		{ "/system.slice/docker-xyz.scope",
		  "systemd:docker-xyz.scope" },
		{ "/plain/group", "" },
		{ "//docker//" HEX64 "/", "docker:" HEX64 },
	};
	char out[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(twl_container_from_cgroup(cases[i].path, out,
							   sizeof(out)),
				 0);
		assert_string_equal(out, cases[i].want);
	}
	assert_int_equal(twl_container_from_cgroup("/docker/" HEX64, out, 20),
			 -ENOSPC);
	assert_int_equal(twl_container_from_cgroup(NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

static void test_privacy(void **state)
{
	char a[80], b[80], c[80];
	enum twl_privacy_mode m;

	(void)state;
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_KEEP, "k", "/a/b", 32, a,
					   sizeof(a)),
			 0);
	assert_string_equal(a, "/a/b");
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_DROP, "k", "/a/b", 32, a,
					   sizeof(a)),
			 0);
	assert_string_equal(a, "");
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "k", "/a/b", 32, a,
					   sizeof(a)),
			 0);
	assert_int_equal(strlen(a), 34);
	assert_memory_equal(a, "h:", 2);
	assert_null(strstr(a, "/a/b"));
	/* Deterministic per key, different across keys and inputs. */
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "k", "/a/b", 32, b,
					   sizeof(b)),
			 0);
	assert_string_equal(a, b);
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "other", "/a/b",
					   32, c, sizeof(c)),
			 0);
	assert_string_not_equal(a, c);
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "k", "/a/c", 32, c,
					   sizeof(c)),
			 0);
	assert_string_not_equal(a, c);
	/* Key and value are separated: ("ab","c") and ("a","bc") differ. */
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "ab", "c", 32, b,
					   sizeof(b)),
			 0);
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "a", "bc", 32, c,
					   sizeof(c)),
			 0);
	assert_string_not_equal(b, c);
	/* A hashed comm fits the wire's 16 bytes. */
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, NULL, "containerd",
					   14, a, 17),
			 0);
	assert_int_equal(strlen(a), 16);
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "k", "", 32, a,
					   sizeof(a)),
			 0);
	assert_string_equal(a, "");
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "k", "x", 32, a,
					   20),
			 -ENOSPC);
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_KEEP, "k", "abcdef", 32,
					   a, 4),
			 -ENOSPC);
	assert_int_equal(twl_privacy_apply(TWL_PRIVACY_HASH, "k", "x", 65, a,
					   sizeof(a)),
			 -EINVAL);
	assert_int_equal(twl_privacy_apply((enum twl_privacy_mode)7, "k", "x",
					   32, a, sizeof(a)),
			 -EINVAL);

	assert_int_equal(twl_privacy_parse("keep", &m), 0);
	assert_int_equal(m, TWL_PRIVACY_KEEP);
	assert_int_equal(twl_privacy_parse("hash", &m), 0);
	assert_int_equal(m, TWL_PRIVACY_HASH);
	assert_int_equal(twl_privacy_parse("drop", &m), 0);
	assert_int_equal(m, TWL_PRIVACY_DROP);
	assert_int_equal(twl_privacy_parse("Hash", &m), -EINVAL);
	assert_int_equal(twl_privacy_parse("", &m), -EINVAL);
}

static void test_comm(void **state)
{
	char out[17];

	(void)state;
	twl_comm_sanitize("bash", 16, out);
	assert_string_equal(out, "bash");
	twl_comm_sanitize("0123456789abcdefXYZ", 16,
			  out); /* not NUL-terminated */
	assert_string_equal(out, "0123456789abcdef");
	twl_comm_sanitize("a\tb\xc3\xa9", 16, out);
	assert_string_equal(out, "a?b??");
}

static void test_value_not_1(void **state)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
		{ "1", 0 },
		{ "1\n", 0 },
		{ "+1", 0 },
		{ "01", 0 },
		{ "0x1", 0 },
		{ "0X01\n", 0 },
		{ "0001", 0 },
		{ "0", 1 },
		{ "0\n", 1 },
		{ "2", 1 },
		{ "10", 1 },
		{ "11", 1 },
		{ "0x10", 1 },
		{ "010", 1 },
		{ "100\n", 1 },
		/* rejected by kstrtoull: no warning, so no condition */
		{ "", 0 },
		{ "\n", 0 },
		{ " 0", 0 },
		{ "0 ", 0 },
		{ "-1", 0 },
		{ "abc", 0 },
		{ "0\n\n", 0 },
		{ "08", 0 },
		{ "1x", 0 },
		{ "+", 0 },
		{ "0x",
		  0 }, /* "0x" with no hex digit: octal 0 then 'x' -> rejected */
	};
	char buf[TWL_BPF_VALUE_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 0, sizeof(buf));
		strncpy(buf, cases[i].s, sizeof(buf) - 1);
		if (twl_value_not_1(buf) != cases[i].want)
			fail_msg("twl_value_not_1(\"%s\") = %d, want %d",
				 cases[i].s, !cases[i].want, cases[i].want);
	}
}

#define PCMAX TWL_BPF_PAGE_COUNTER_MAX
#define SP10 "          "
#define SP40 SP10 SP10 SP10 SP10
#define EINV TWL_BPF_MEMPARSE_EINVAL

/*
 * What mem_cgroup_write() makes of a buffer (strstrip, then
 * page_counter_memparse(buf, "-1")), traced through lib/cmdline.c memparse,
 * lib/vsprintf.c simple_strtoull and lib/kstrtox.c of 6.1 by hand.
 */
static void test_memparse(void **state)
{
	static const struct {
		const char *s;
		int ret;
		unsigned long long pages;
	} cases[] = {
		/* the five inputs the value summary is specified with */
		{ "  256M\n", 0, 65536 },
		{ "0x10000000", 0, 65536 },
		{ "1000", 0, 0 }, /* 1000 bytes: rounded down to 0 pages */
		{ "max", EINV,
		  0 }, /* v2 spelling: 'm' is a suffix, "ax" junk */
		{ "-1", 0, PCMAX },
		/* strstrip: the kernel's isspace, both ends */
		{ "-1\n", 0, PCMAX },
		{ "\t -1 \r\n", 0, PCMAX },
		{ "\xa0"
		  "4096",
		  0, 1 },
		{ "4096 \v\f", 0, 1 },
		{ "", 0, 0 }, /* simple_strtoull("") is 0, end at the NUL */
		{ " \n", 0, 0 },
		/* "-1" exactly; no other sign */
		{ "-2", EINV, 0 },
		{ "-12", EINV, 0 },
		{ "- 1", EINV, 0 },
		{ "-", EINV, 0 },
		{ "+4096", EINV, 0 },
		{ "-1k", EINV, 0 },
		/* bases */
		{ "010000", 0, 1 }, /* octal 4096 */
		{ "08", EINV, 0 },
		{ "0", 0, 0 },
		{ "0X2000", 0, 2 },
		{ "0x", EINV, 0 }, /* no hex digit: octal 0, then 'x' */
		{ "0xg", EINV, 0 },
		{ "0x10E", 0, 0 }, /* 'E' is a hex digit here, not exa */
		{ "0x1000k", 0, 1024 },
		/* suffixes, either case, at most one, nothing after */
		{ "4k", 0, 1 },
		{ "1G", 0, 262144 },
		{ "1t", 0, 268435456ULL },
		{ "1P", 0, 274877906944ULL },
		{ "1e", 0, 1ULL << 48 },
		{ "8E", 0, PCMAX }, /* 2^63 bytes: capped at PAGE_COUNTER_MAX */
		{ "16E", 0, 0 }, /* shifts wrap in u64 as in memparse */
		{ "M", 0, 0 }, /* no digits, a suffix: 0 */
		{ "1MB", EINV, 0 },
		{ "1kk", EINV, 0 },
		{ "1 k", EINV, 0 },
		{ "1 2", EINV, 0 },
		{ "abc", EINV, 0 },
		/* no overflow check, as simple_strtoull */
		{ "18446744073709551615", 0, PCMAX },
		{ "18446744073709551616", 0, 0 },
		{ "9223372036854767616", 0, PCMAX - 1 },
		/* the window: 46 bytes are judged, 47 are not */
		{ SP40 "  4096", 0, 1 },
		{ SP40 "   4096", TWL_BPF_MEMPARSE_E2BIG, 0 },
		{ "0009", EINV, 0 }, /* leading zeros make it octal */
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	char buf[TWL_BPF_MEMPARSE_LEN];
	unsigned long long pages;
	size_t i;
	int ret;

	(void)state;
	assert_int_equal(strlen(cases[n - 3].s), TWL_BPF_MEMPARSE_LEN - 2);
	for (i = 0; i < n; i++) {
		/* as BPF reads it: the string, NUL, then whatever followed */
		memset(buf, 'x', sizeof(buf));
		memcpy(buf, cases[i].s,
		       strlen(cases[i].s) < sizeof(buf) ?
			       strlen(cases[i].s) + 1 :
			       sizeof(buf));
		buf[sizeof(buf) - 1] = '\0';
		pages = 12345;
		ret = twl_memparse_pages(buf, &pages);
		if (ret != cases[i].ret || (!ret && pages != cases[i].pages))
			fail_msg(
				"memparse(\"%s\") = %d, %llu pages; want %d, %llu",
				cases[i].s, ret, pages, cases[i].ret,
				cases[i].pages);
	}
}

static void test_file_cond(void **state)
{
	(void)state;
	assert_int_equal(twl_file_cond("memory.use_hierarchy", true),
			 TWL_BPF_COND_VALUE_NOT_1);
	assert_int_equal(twl_file_cond("memory.swappiness", true),
			 TWL_BPF_COND_NON_ROOT);
	assert_int_equal(twl_file_cond("memory.kmem.limit_in_bytes", true),
			 TWL_BPF_COND_NON_ROOT);
	assert_int_equal(twl_file_cond("memory.kmem.tcp.limit_in_bytes", true),
			 TWL_BPF_COND_NON_ROOT);
	assert_int_equal(twl_file_cond("memory.soft_limit_in_bytes", true),
			 TWL_BPF_COND_ALWAYS);
	assert_int_equal(twl_file_cond("memory.memsw.limit_in_bytes", false),
			 TWL_BPF_COND_NEVER);
	assert_string_equal(twl_bpf_op_name(TWL_BPF_OP_READ), "read");
	assert_string_equal(twl_bpf_op_name(TWL_BPF_OP_WRITE), "write");
	assert_string_equal(twl_bpf_op_name(TWL_BPF_OP_REGISTER),
			    "register_event");
	assert_null(twl_bpf_op_name(3));
}

/* Wrap @usage in a minimal valid report and run the one wire validator. */
static int validate_usage(json_t *usage, struct twl_verr *err)
{
	json_t *doc = json_pack(
		"{s:i, s:s, s:i, s:i, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i}, s:{}, s:[o]}",
		"v", TWL_WIRE_VERSION, "batch_id",
		"5f0c0a6e1d6b4c8e9a7b3c2d1e0f9a8b", "seq", 1, "sent_time",
		1764732000, "host", "host_id", HEX64, "hostname", "g",
		"boot_id", "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f", "kernel",
		"6.1.0", "cgroup_mode", "v1", "agent_version", "0.1.0",
		"catalog_version", (int)twl_catalog_version(), "health",
		"usage", json_incref(usage));
	int ret;

	assert_non_null(doc);
	ret = twl_report_validate(doc, err);
	json_decref(doc);
	return ret;
}

/* @o passes the wire's usage validator; then freed. */
static void assert_valid_free(json_t *o)
{
	struct twl_verr err;

	if (validate_usage(o, &err))
		fail_msg("invalid usage entry: %s at %s: %s", err.code,
			 err.field, err.reason);
	json_decref(o);
}

/* @e with privacy settings: paths hashed, comm dropped, kinds kept. */
static void entry_privacy(struct twl_usage_entry *e)
{
	struct twl_bpf_privacy hash = { .cgroup = TWL_PRIVACY_HASH,
					.comm = TWL_PRIVACY_DROP,
					.key = "s" };
	json_t *o;

	/* Privacy: paths and container id hashed, comm dropped, kinds kept
	 * (the target's classified before its path is hashed). */
	e->cgroup = "/kubepods/burstable/pod0f1e2d3c/" HEX64;
	o = twl_usage_entry_to_json(e, 1764700000LL * 1000000000LL, &hash);
	assert_non_null(o);
	assert_string_equal(
		json_string_value(json_object_get(o, "target_kind")),
		"kubernetes");
	assert_memory_equal(json_string_value(json_object_get(o, "cgroup")),
			    "h:", 2);
	assert_memory_equal(
		json_string_value(json_object_get(o, "writer_cgroup")),
		"h:", 2);
	assert_memory_equal(json_string_value(json_object_get(o, "container")),
			    "docker:h:", 9);
	assert_null(strstr(json_string_value(json_object_get(o, "container")),
			   HEX64));
	assert_string_equal(json_string_value(json_object_get(o, "comm")), "");
	assert_valid_free(o);
}

/* @e as a read, then as a registration. */
static void entry_read_register(struct twl_usage_entry *e)
{
	json_t *o;

	/* Reads carry no target; counts read mid-update are capped at count. */
	e->op = TWL_BPF_OP_READ;
	e->failed = 9;
	e->condition_met = 8;
	e->last_ns = 0;
	o = twl_usage_entry_to_json(e, 1764700000LL * 1000000000LL, NULL);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "cgroup")),
			    "");
	assert_string_equal(json_string_value(json_object_get(o, "use")),
			    "reads");
	assert_string_equal(
		json_string_value(json_object_get(o, "target_kind")), "root");
	assert_int_equal(json_integer_value(json_object_get(o, "failed")), 7);
	assert_int_equal(
		json_integer_value(json_object_get(o, "condition_met")), 7);
	assert_int_equal(json_integer_value(json_object_get(o, "last_seen")),
			 1764700005);
	assert_valid_free(o);

	e->op = TWL_BPF_OP_REGISTER;
	e->cgroup = "/system.slice/docker-" HEX64 ".scope";
	o = twl_usage_entry_to_json(e, 1764700000LL * 1000000000LL, NULL);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "use")),
			    "listens");
	assert_string_equal(
		json_string_value(json_object_get(o, "target_kind")), "docker");
	assert_valid_free(o);
}

static void test_entry_to_json(void **state)
{
	struct twl_usage_entry e = {
		.boot_id = "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
		.feature = "memcg_v1.soft_limit",
		.file = "memory.soft_limit_in_bytes",
		.op = TWL_BPF_OP_WRITE,
		.cgroup = "/jobs/a",
		.comm = "writer",
		.uid = 1000,
		.writer_cgroup = "/system.slice/docker-" HEX64 ".scope",
		.last_pid = 4242,
		.count = 7,
		.failed = 2,
		.condition_met = 7,
		.first_ns = 5000000000ull,
		.last_ns = 9500000000ull,
	};
	json_t *o;

	(void)state;
	assert_non_null(twl_catalog_find(e.feature));
	o = twl_usage_entry_to_json(&e, 1764700000LL * 1000000000LL, NULL);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "op")),
			    "write");
	assert_string_equal(json_string_value(json_object_get(o, "use")),
			    "configures");
	assert_string_equal(json_string_value(json_object_get(o, "cgroup")),
			    "/jobs/a");
	assert_string_equal(
		json_string_value(json_object_get(o, "target_kind")), "other");
	assert_string_equal(json_string_value(json_object_get(o, "container")),
			    "docker:" HEX64);
	assert_string_equal(json_string_value(json_object_get(o, "comm")),
			    "writer");
	assert_int_equal(json_integer_value(json_object_get(o, "count")), 7);
	assert_int_equal(json_integer_value(json_object_get(o, "failed")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "uid")), 1000);
	assert_int_equal(json_integer_value(json_object_get(o, "last_pid")),
			 4242);
	assert_int_equal(json_integer_value(json_object_get(o, "first_seen")),
			 1764700005);
	assert_int_equal(json_integer_value(json_object_get(o, "last_seen")),
			 1764700009);
	/* no image unless one was found (the operator opted in) */
	assert_null(json_object_get(o, "image"));
	assert_valid_free(o);
	e.image = "";
	o = twl_usage_entry_to_json(&e, 0, NULL);
	assert_null(json_object_get(o, "image"));
	assert_valid_free(o);
	e.image = "registry.example.com/payments/ledger:2.4.1";
	o = twl_usage_entry_to_json(&e, 0, NULL);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "image")),
			    "registry.example.com/payments/ledger:2.4.1");
	assert_valid_free(o);
	e.image = NULL;

	entry_privacy(&e);
	entry_read_register(&e);
	e.op = 9;
	errno = 0;
	assert_null(twl_usage_entry_to_json(&e, 0, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(twl_usage_entry_to_json(NULL, 0, NULL));
}

/* Check @o's "value" against @want (a JSON text, NULL: absent), validate. */
static void check_value(json_t *o, const char *want)
{
	json_t *w = want ? json_loads(want, 0, NULL) : NULL;
	json_t *got = json_object_get(o, "value");
	struct twl_verr err;
	char *text;

	assert_non_null(o);
	if (want)
		assert_non_null(w);
	if (want ? !json_equal(got, w) : got != NULL) {
		text = got ? json_dumps(got, JSON_SORT_KEYS) : NULL;
		fail_msg("value %s, want %s", text ? text : "(absent)",
			 want ? want : "(absent)");
	}
	json_decref(w);
	if (validate_usage(o, &err))
		fail_msg("invalid usage entry: %s at %s: %s", err.code,
			 err.field, err.reason);
}

/* The value summary of a write, as the map holds it, on the wire. */
static void test_entry_value(void **state)
{
	struct twl_usage_entry e = {
		.boot_id = "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
		.feature = "memcg_v1.soft_limit",
		.file = "memory.soft_limit_in_bytes",
		.op = TWL_BPF_OP_WRITE,
		.cgroup = "/jobs/a",
		.comm = "writer",
		.writer_cgroup = "/",
		.count = 2,
		.first_ns = 5000000000ull,
		.last_ns = 9500000000ull,
		/* "  256M\n", then "-1": stored by the kernel */
		.val_flags = TWL_BPF_VAL_SEEN | TWL_BPF_VAL_FINITE |
			     TWL_BPF_VAL_UNLIMITED | TWL_BPF_VAL_STORED,
		.val_last = TWL_BPF_VAL_INF,
		.val_min = 268435456,
		.val_max = 268435456,
	};
	json_t *o;

	(void)state;
	o = twl_usage_entry_to_json(&e, 0, NULL);
	assert_non_null(o);
	check_value(o, "{\"last\": -1, \"min\": 268435456, \"max\": 268435456,"
		       " \"unlimited\": true, \"unit\": \"bytes\","
		       " \"source\": \"stored\"}");
	json_decref(o);

	/* only unlimited: no min/max; one parsed value makes it "parsed" */
	e.val_flags = TWL_BPF_VAL_SEEN | TWL_BPF_VAL_UNLIMITED |
		      TWL_BPF_VAL_STORED | TWL_BPF_VAL_PARSED;
	o = twl_usage_entry_to_json(&e, 0, NULL);
	check_value(o, "{\"last\": -1, \"unlimited\": true,"
		       " \"unit\": \"bytes\", \"source\": \"parsed\"}");
	json_decref(o);

	/* read mid-update: last outside min..max is widened into range;
	 * a byte value past 2^53 - 1 is capped at its page multiple */
	e.val_flags = TWL_BPF_VAL_SEEN | TWL_BPF_VAL_FINITE |
		      TWL_BPF_VAL_STORED;
	e.val_last = 4096;
	e.val_min = 8192;
	e.val_max = 1ULL << 62;
	o = twl_usage_entry_to_json(&e, 0, NULL);
	check_value(o, "{\"last\": 4096, \"min\": 4096,"
		       " \"max\": 9007199254736896, \"unlimited\": false,"
		       " \"unit\": \"bytes\", \"source\": \"stored\"}");
	json_decref(o);

	/* a finite last before min/max are in: no value rather than a wrong one */
	e.val_flags = TWL_BPF_VAL_SEEN | TWL_BPF_VAL_STORED;
	o = twl_usage_entry_to_json(&e, 0, NULL);
	check_value(o, NULL);
	json_decref(o);

	/* numbers and bitmasks: the write_u64 argument */
	e.feature = "memcg_v1.move_charge";
	e.file = "memory.move_charge_at_immigrate";
	e.val_flags = TWL_BPF_VAL_SEEN | TWL_BPF_VAL_FINITE |
		      TWL_BPF_VAL_PARSED;
	e.val_last = 3;
	e.val_min = 0;
	e.val_max = 3;
	assert_non_null(twl_catalog_find(e.feature));
	o = twl_usage_entry_to_json(&e, 0, NULL);
	check_value(o, "{\"last\": 3, \"min\": 0, \"max\": 3,"
		       " \"unlimited\": false, \"unit\": \"bitmask\","
		       " \"source\": \"parsed\"}");
	json_decref(o);

	/* never on reads or registrations, nor with no value seen */
	e.op = TWL_BPF_OP_READ;
	o = twl_usage_entry_to_json(&e, 0, NULL);
	check_value(o, NULL);
	json_decref(o);
	e.op = TWL_BPF_OP_WRITE;
	e.val_flags = 0;
	o = twl_usage_entry_to_json(&e, 0, NULL);
	check_value(o, NULL);
	json_decref(o);
}

static void test_file_value(void **state)
{
	(void)state;
	assert_int_equal(twl_file_value_flags("memory.soft_limit_in_bytes"),
			 TWL_BPF_FILE_PAGES | TWL_BPF_FILE_SOFT);
	assert_int_equal(twl_file_value_flags("memory.kmem.limit_in_bytes"),
			 TWL_BPF_FILE_PAGES);
	assert_int_equal(twl_file_value_flags("memory.kmem.tcp.limit_in_bytes"),
			 TWL_BPF_FILE_PAGES | TWL_BPF_FILE_TCP);
	assert_int_equal(twl_file_value_flags("memory.swappiness"),
			 TWL_BPF_FILE_U64);
	assert_int_equal(twl_file_value_flags("memory.force_empty"), 0);
	assert_int_equal(twl_file_value_flags(NULL), 0);
	assert_string_equal(twl_file_value_unit("memory.use_hierarchy"),
			    "number");
	assert_string_equal(twl_file_value_unit("memory.oom_control"),
			    "number");
	assert_null(twl_file_value_unit("memory.max_usage_in_bytes"));
}

/*
 * A loader that is not enabled touches nothing (no BPF, no bpffs: safe on a
 * development machine) and still answers, reporting every probe unavailable.
 */
static void test_loader_disabled(void **state)
{
	struct twl_bpf_cfg cfg = { .enable = false,
				   .pin_dir = "/nonexistent/never-created" };
	json_t *health = json_object(), *usage = json_array(), *p;
	struct twl_bpf *b;
	size_t i;

	(void)state;
	b = twl_bpf_open(&cfg);
	assert_non_null(b);
	assert_false(twl_bpf_active(b));
	assert_int_equal(twl_bpf_health(b, health), 0);
	/* seven write handlers, cgroup_file_open, four registrations */
	assert_int_equal(json_array_size(json_object_get(health, "probes")),
			 12);
	json_array_foreach(json_object_get(health, "probes"), i, p)
	{
		assert_string_equal(
			json_string_value(json_object_get(p, "state")),
			"unavailable");
		assert_string_equal(
			json_string_value(json_object_get(p, "reason")),
			"disabled by configuration");
	}
	assert_int_equal(
		json_integer_value(json_object_get(health, "map_overflows")),
		0);
	assert_int_equal(twl_bpf_collect(b, usage, "x", 0), -ENODEV);
	assert_int_equal(json_array_size(usage), 0);
	assert_false(twl_bpf_counted(b, "memcg_v1.soft_limit"));
	assert_false(twl_bpf_covers(b, "memcg_v1.soft_limit"));
	assert_false(twl_bpf_probe_missing(b, "memcg_v1.soft_limit", 1));
	twl_bpf_free(b);
	b = twl_bpf_open(NULL);
	assert_non_null(b);
	assert_false(twl_bpf_active(b));
	twl_bpf_free(b);
	twl_bpf_free(NULL);
	json_decref(health);
	json_decref(usage);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_from_raw),
		cmocka_unit_test(test_path_too_deep),
		cmocka_unit_test(test_container),
		cmocka_unit_test(test_privacy),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_value_not_1),
		cmocka_unit_test(test_memparse),
		cmocka_unit_test(test_file_cond),
		cmocka_unit_test(test_entry_to_json),
		cmocka_unit_test(test_entry_value),
		cmocka_unit_test(test_file_value),
		cmocka_unit_test(test_loader_disabled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
