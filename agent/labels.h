/* SPDX-License-Identifier: GPL-2.0 */
/*
 * labels: the operator's labels of a host (the labels option), checked
 * against the wire's rules for host.labels and turned into that object.
 */
#ifndef TWL_AGENT_LABELS_H
#define TWL_AGENT_LABELS_H

#include <stddef.h>

#include <jansson.h>
#include <twilight/wire.h>

/* "name=value" with the wire's longest name and value, and the NUL. */
#define TWL_LABEL_ITEM (TWL_WIRE_MAX_LABEL_KEY + TWL_WIRE_MAX_LABEL_VALUE + 2)

/*
 * The operator's labels for host.labels, as the config's labels option
 * holds them: n "name=value" items, each checked against the wire's rules
 * by twl_config_validate() (twl_labels_check()).
 */
struct twl_labels {
	char item[TWL_WIRE_MAX_LABELS][TWL_LABEL_ITEM];
	size_t n;
};

/*
 * twl_labels_check - the item of @l that breaks the wire's rules for
 * host.labels (a name=value item whose name or value is not one, or a
 * name given twice): its index, with a sentence for the operator in @why
 * (@cap bytes); or -1 when every item is valid.
 */
int twl_labels_check(const struct twl_labels *l, char *why, size_t cap);

/*
 * twl_labels_to_json - @l as the host.labels object, the valid items only
 * (twl_labels_check() keeps invalid ones out of a running config). A new
 * reference, or NULL on ENOMEM.
 */
json_t *twl_labels_to_json(const struct twl_labels *l);

#endif /* TWL_AGENT_LABELS_H */
