/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules of what people write into the store (store.h's struct
 * twl_annotation and struct twl_migration_status) and of the kept
 * answers (struct twl_kept), checked by every
 * backend before it writes (store_rules.c), so that a bad value is
 * -EINVAL on each of them alike.
 */
#ifndef TWL_SERVER_STORE_RULES_H
#define TWL_SERVER_STORE_RULES_H

#include <stdbool.h>

struct twl_annotation;
struct twl_migration_status;
struct twl_kept;

/* Whether @a keeps the rules of struct twl_annotation (store.h). */
bool twl_annotation_valid(const struct twl_annotation *a);

/* Whether @m keeps the rules of struct twl_migration_status (store.h). */
bool twl_migration_status_valid(const struct twl_migration_status *m);

/* Whether @key names a kept answer: 64 lowercase hex digits. */
bool twl_kept_key_valid(const char *key);

/*
 * twl_kept_check - whether @k may be stored (twl_store_kept_put()): 0,
 * -EINVAL (a bad key, no time, a body that is not @len bytes of text)
 * or -EFBIG (past TWL_STORE_KEPT_BODY_MAX).
 */
int twl_kept_check(const struct twl_kept *k);

#endif /* TWL_SERVER_STORE_RULES_H */
