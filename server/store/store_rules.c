// SPDX-License-Identifier: GPL-2.0
/*
 * The rules of annotations, migration statuses and kept answers
 * (store_rules.h), one copy for every backend: the CHECKs of their tables
 * say the same, so a value these let through is never refused by the
 * database.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "store/store.h"
#include "store/store_rules.h"

/* Whether @v is NULL or one of the NULL-terminated @allowed. */
static bool null_or_one_of(const char *v, const char *const *allowed)
{
	if (!v)
		return true;
	for (; *allowed; allowed++)
		if (!strcmp(v, *allowed))
			return true;
	return false;
}

/* Contract: see store_rules.h. */
bool twl_annotation_valid(const struct twl_annotation *a)
{
	static const char *const fits[] = { "yes", "no", "partial", NULL },
				 *const intent[] = { "intentional",
						     "accidental", NULL },
				 *const tried[] = { "no", "works",
						    "falls_short", NULL };

	if (!a->feature || !a->text || !a->author)
		return false;
	if (!null_or_one_of(a->fits, fits) ||
	    !null_or_one_of(a->intent, intent) ||
	    !null_or_one_of(a->v2_tried, tried))
		return false;
	if (a->shortfall &&
	    (!a->v2_tried || strcmp(a->v2_tried, "falls_short") ||
	     !*a->shortfall || strlen(a->shortfall) > 1000))
		return false;
	if (a->set_by && (!*a->set_by || strlen(a->set_by) > 128))
		return false;
	return !a->team || (*a->team && strlen(a->team) <= 64);
}

/* Contract: see store_rules.h. */
bool twl_migration_status_valid(const struct twl_migration_status *m)
{
	static const char *const names[] = { "migrating", "migrated",
					     "accepted_risk", "blocked" };
	bool blocked, known = false;
	size_t i;

	if (!m->feature || !m->status || !m->owner || !m->author)
		return false;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		known = known || !strcmp(m->status, names[i]);
	blocked = !strcmp(m->status, "blocked");
	if (!known || blocked != (m->reason != NULL))
		return false;
	if (m->reason && (!*m->reason || strlen(m->reason) > 1000))
		return false;
	if (m->workload && strlen(m->workload) > 128)
		return false;
	return *m->owner && strlen(m->owner) <= 64;
}

/* Contract: see store_rules.h. */
bool twl_kept_key_valid(const char *key)
{
	return strlen(key) == 64 && strspn(key, "0123456789abcdef") == 64;
}

/* Contract: see store_rules.h. */
int twl_kept_check(const struct twl_kept *k)
{
	if (!twl_kept_key_valid(k->key) || k->computed <= 0 || !k->body ||
	    strnlen(k->body, k->len + 1) != k->len)
		return -EINVAL;
	return k->len > TWL_STORE_KEPT_BODY_MAX ? -EFBIG : 0;
}
