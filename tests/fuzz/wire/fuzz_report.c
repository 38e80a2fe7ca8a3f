// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz twl_report_parse(), the decoder and validator the server runs on
 * every request body. Besides the sanitizers' checks, three properties:
 * a rejection always says what and where (code set, strings terminated,
 * errno matches); an accepted document is what the unbounded decoder
 * makes of the same bytes and validates with every check on, UTF-8
 * included (the fast path that skips the pre-scan accepts nothing the
 * full path would reject; fuzz_json_decode checks its depth cap); and it
 * still validates
 * after being encoded again (what the server stores and re-serves stays
 * valid).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/json_decode.h>
#include <twilight/util.h>
#include <twilight/wire.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
		return 0;
	}
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
