// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz twl_report_parse() and twl_wire_decode(), the decoders and
 * validator the server runs on every request body. Besides the
 * sanitizers' checks, these properties:
 * - a rejection always says what and where (code set, strings
 *   terminated, errno matches);
 * - an accepted document is what the unbounded decoder makes of the same
 *   bytes and validates with every check on, UTF-8 included (the path
 *   that skips the pre-scan accepts nothing the full path would reject;
 *   fuzz_json_decode checks its depth cap);
 * - it still validates after being encoded again (what the server stores
 *   and re-serves stays valid);
 * - twl_wire_decode(), whose fast path reads usage[] straight from the
 *   text (wire version 2's value object included), accepts exactly what
 *   twl_report_parse() accepts, rejects with the same error, and yields
 *   the same values, with use derived from op in version 1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/json_decode.h>
#include <twilight/util.h>
#include <twilight/wire.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The document without usage[]: the part both decoders keep as jansson. */
static json_t *without_usage(json_t *doc)
{
	json_t *copy = json_copy(doc);

	if (!copy)
		abort();
	json_object_del(copy, "usage");
	return copy;
}

static void same_usage(const struct twl_wire_usage *a,
		       const struct twl_wire_usage *b)
{
	const char *sa[] = { a->boot_id,     a->feature, a->file,
			     a->op,	     a->use,	 a->cgroup,
			     a->target_kind, a->comm,	 a->writer_cgroup,
			     a->container,   a->image,	 a->value.unit,
			     a->value.source };
	const char *sb[] = { b->boot_id,     b->feature, b->file,
			     b->op,	     b->use,	 b->cgroup,
			     b->target_kind, b->comm,	 b->writer_cgroup,
			     b->container,   b->image,	 b->value.unit,
			     b->value.source };

	for (size_t i = 0; i < sizeof(sa) / sizeof(sa[0]); i++)
		if (strcmp(sa[i], sb[i]))
			abort();
	if (a->uid != b->uid || a->last_pid != b->last_pid ||
	    a->count != b->count || a->failed != b->failed ||
	    a->condition_met != b->condition_met ||
	    a->first_seen != b->first_seen || a->last_seen != b->last_seen)
		abort();
	if (a->value.present != b->value.present ||
	    a->value.has_min != b->value.has_min ||
	    a->value.has_max != b->value.has_max ||
	    a->value.unlimited != b->value.unlimited ||
	    a->value.last != b->value.last || a->value.min != b->value.min ||
	    a->value.max != b->value.max)
		abort();
	/* use always agrees with op, sent or derived (version 1) */
	if (strcmp(a->use, twl_wire_use_of_op(a->op)))
		abort();
}

/* twl_wire_decode() against twl_report_parse()'s doc and err. */
static void check_wire(const uint8_t *data, size_t size, json_t *doc,
		       const struct twl_verr *err)
{
	struct twl_wire_report got, want;
	struct twl_verr werr;
	json_t *a, *b;
	int ret = twl_wire_decode((const char *)data, size, &got, &werr);

	if (!doc) {
		if (!ret || memcmp(&werr, err, sizeof(werr)) ||
		    (ret == -EPROTONOSUPPORT) !=
			    !strcmp(err->code, TWL_VERR_UNSUPPORTED_VERSION))
			abort();
		return;
	}
	if (ret || twl_wire_from_doc(doc, &want) || got.n_usage != want.n_usage)
		abort();
	for (size_t i = 0; i < got.n_usage; i++)
		same_usage(&got.usage[i], &want.usage[i]);
	a = without_usage(got.doc);
	b = without_usage(doc);
	if (!json_equal(a, b))
		abort();
	json_decref(a);
	json_decref(b);
	twl_wire_release(&got);
	twl_wire_release(&want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct twl_verr err;
	json_t *doc, *again;
	char *text;

	doc = twl_report_parse((const char *)data, size, &err);
	if (!doc) {
		if (!err.code[0] ||
		    memchr(err.code, 0, sizeof(err.code)) == NULL ||
		    memchr(err.field, 0, sizeof(err.field)) == NULL ||
		    memchr(err.reason, 0, sizeof(err.reason)) == NULL ||
		    !err.reason[0])
			abort();
		if (!twl_utf8_valid(err.field, strlen(err.field)) ||
		    !twl_utf8_valid(err.reason, strlen(err.reason)))
			abort();
		if ((errno == EPROTONOSUPPORT) !=
		    !strcmp(err.code, TWL_VERR_UNSUPPORTED_VERSION))
			abort();
		check_wire(data, size, NULL, &err);
		return 0;
	}
	check_wire(data, size, doc, &err);
	if (twl_report_validate(doc, &err))
		abort();
	again = twl_json_decode((const char *)data, size, NULL);
	if (!json_equal(doc, again))
		abort();
	json_decref(again);
	text = json_dumps(doc, JSON_COMPACT);
	if (!text)
		abort();
	again = twl_report_parse(text, strlen(text), &err);
	if (!again && strlen(text) <= TWL_WIRE_MAX_DOC_BYTES)
		abort();
	json_decref(again);
	free(text);
	json_decref(doc);
	return 0;
}
