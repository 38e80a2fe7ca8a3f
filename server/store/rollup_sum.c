// SPDX-License-Identifier: GPL-2.0
/* A batch's evidence summed per feature (rollup_sum.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store/rollup_sum.h"

/* Contract: see rollup_sum.h. */
int twl_kind_of_op(const char *op)
{
	/* usage[].use as the wire format derives it from op */
	if (!strcmp(op, "write"))
		return TWL_KIND_CONFIGURES;
	if (!strcmp(op, "register_event"))
		return TWL_KIND_LISTENS;
	return TWL_KIND_READS;
}

/* Contract: see rollup_sum.h. */
int twl_rollup_add(struct twl_rollup *r, const char *feature, int64_t first,
		   int64_t last, int kind, int64_t n)
{
	struct twl_rollup_entry *e;
	size_t i;

	if (!feature[0])
		return 0;
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->e[i].feature, feature))
			break;
	if (i == r->n) {
		if (r->n == TWL_ROLLUP_MAX)
			return -ENOSPC;
		e = &r->e[r->n++];
		memset(e, 0, sizeof(*e));
		snprintf(e->feature, sizeof(e->feature), "%s", feature);
		e->first = first;
		e->last = last;
	}
	e = &r->e[i];
	if (first < e->first)
		e->first = first;
	if (last > e->last)
		e->last = last;
	e->kinds |= kind;
	if (kind & (TWL_KIND_CONFIGURES | TWL_KIND_LISTENS))
		e->uses += n;
	else if (kind & TWL_KIND_READS)
		e->reads += n;
	else if (kind & TWL_KIND_WARNING)
		e->warnings += n;
	return 0;
}
