/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the wire tests of tests/unit/common (include after cmocka.h
 * and twilight/wire.h): the fast path's flattened usage[] entries against
 * twl_wire_from_doc()'s.
 */
#ifndef TWL_TEST_WIRE_TEST_H
#define TWL_TEST_WIRE_TEST_H

/* Every field of two flattened entries is the same. */
static inline void same_usage(const struct twl_wire_usage *a,
			      const struct twl_wire_usage *b)
{
	const char *sa[] = { a->boot_id,     a->feature,       a->file,
			     a->op,	     a->cgroup,	       a->comm,
			     a->use,	     a->writer_cgroup, a->container,
			     a->target_kind, a->image,	       a->value.unit,
			     a->value.source };
	const char *sb[] = { b->boot_id,     b->feature,       b->file,
			     b->op,	     b->cgroup,	       b->comm,
			     b->use,	     b->writer_cgroup, b->container,
			     b->target_kind, b->image,	       b->value.unit,
			     b->value.source };

	for (size_t i = 0; i < sizeof(sa) / sizeof(sa[0]); i++)
		assert_string_equal(sa[i], sb[i]);
	assert_true(a->uid == b->uid && a->last_pid == b->last_pid &&
		    a->count == b->count && a->failed == b->failed &&
		    a->condition_met == b->condition_met &&
		    a->first_seen == b->first_seen &&
		    a->last_seen == b->last_seen);
	assert_true(a->value.present == b->value.present &&
		    a->value.has_min == b->value.has_min &&
		    a->value.has_max == b->value.has_max &&
		    a->value.unlimited == b->value.unlimited &&
		    a->value.last == b->value.last &&
		    a->value.min == b->value.min &&
		    a->value.max == b->value.max);
}

#endif /* TWL_TEST_WIRE_TEST_H */
