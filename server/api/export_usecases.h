/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The use cases of one feature in the text export, grouped by their
 * structured fields (export_usecases.c). Pure, no I/O.
 */
#ifndef TWL_SERVER_API_EXPORT_USECASES_H
#define TWL_SERVER_API_EXPORT_USECASES_H

#include <jansson.h>

struct twl_buf;

/*
 * twl_export_use_cases - append feature @f's "annotations" (export.h) to
 * @b. A feature in use ("hosts_using" > 0) with none says so in one line;
 * an unused one without any adds nothing. Annotations are grouped by
 * intent, then by the component that sets the knob (intentional first,
 * then accidental, then not said), each group under a heading, each use
 * case with its workload, author, day, whether the replacement fits,
 * team, and whether v2 was tried and what fell short; when none has an
 * intent or setter, one plain "Use cases:" list. A line counts the v2
 * attempts when any use case records one. Returns 0 or a negative errno
 * from twl_buf (-E2BIG past its cap), -ENOMEM.
 */
int twl_export_use_cases(struct twl_buf *b, const json_t *f);

#endif /* TWL_SERVER_API_EXPORT_USECASES_H */
