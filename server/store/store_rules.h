/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules of what people write into the store (store.h's struct
 * twl_annotation and struct twl_migration_status), checked by every
 * backend before it writes (store_rules.c), so that a bad value is
 * -EINVAL on each of them alike.
 */
#ifndef TWL_SERVER_STORE_RULES_H
#define TWL_SERVER_STORE_RULES_H

#include <stdbool.h>

struct twl_annotation;
struct twl_migration_status;

/* Whether @a keeps the rules of struct twl_annotation (store.h). */
bool twl_annotation_valid(const struct twl_annotation *a);

/* Whether @m keeps the rules of struct twl_migration_status (store.h). */
bool twl_migration_status_valid(const struct twl_migration_status *m);

#endif /* TWL_SERVER_STORE_RULES_H */
