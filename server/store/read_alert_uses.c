// SPDX-License-Identifier: GPL-2.0
/*
 * The alert detector's page of hosts and their uses (twl_read_alert_uses(),
 * store_alerts.h), composed once for both backends
 * (twl_answer_alert_uses(), read_answers.h): its three lists, each a
 * backend's query of the same page of hosts, every list in an order both
 * backends give alike.
 */
#include <errno.h>

#include "store/read_answers.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

static const struct twl_col page_cols[] = {
	{ "host_id", 0, TWL_COL_TEXT },
	{ "last_seen", 1, TWL_COL_INT },
};
static const struct twl_col use_host_cols[] = {
	{ "feature", 0, TWL_COL_TEXT },
	{ "host_id", 1, TWL_COL_TEXT },
	{ "last", 2, TWL_COL_INT },
};
static const struct twl_col use_comm_cols[] = {
	{ "feature", 0, TWL_COL_TEXT },
	{ "comm", 1, TWL_COL_TEXT },
	{ "last", 2, TWL_COL_INT },
};
static const struct {
	const char *key;
	enum twl_rq_id q;
	struct twl_row row;
} lists[] = {
	{ "page", TWL_RQ_ALERT_PAGE, TWL_ROW(page_cols) },
	{ "hosts", TWL_RQ_ALERT_HOSTS, TWL_ROW(use_host_cols) },
	{ "comms", TWL_RQ_ALERT_COMMS, TWL_ROW(use_comm_cols) },
};

static int build_alert_uses(const struct twl_rq_on *on, const void *arg,
			    json_t *doc)
{
	const struct twl_alert_page *p = arg;
	struct twl_rq_args a = { 0 };
	json_t *arr;
	int rc = 0;

	twl_rq_i64(&a, p->since);
	twl_rq_i64(&a, p->after_seen);
	twl_rq_text(&a, p->after_host ? p->after_host : "");
	twl_rq_i64(&a, p->max);
	for (size_t i = 0; !rc && i < sizeof(lists) / sizeof(lists[0]); i++) {
		rc = twl_jset(doc, lists[i].key, arr = json_array());
		if (!rc)
			rc = twl_rq_rows(on, lists[i].q, &a, &lists[i].row, arr,
					 SIZE_MAX, NULL);
	}
	return rc;
}

/* Contract: see read_answers.h. */
int twl_answer_alert_uses(const struct twl_rq_io *io, struct twl_store *s,
			  const struct twl_alert_page *p, json_t **out)
{
	*out = NULL;
	if (!p->max || p->max > TWL_READ_LIMIT_MAX)
		return -EINVAL;
	return twl_answer_in(io, s, true, NULL, build_alert_uses, p,
			     json_object(), out);
}
