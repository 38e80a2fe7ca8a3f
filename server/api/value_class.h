/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Value classes: the values written to a feature's control files, in the
 * words a kernel maintainer reads ("soft_limit_in_bytes set on 230
 * cgroups on 12 hosts: 256 MiB-8 GiB; reset to unlimited by 3
 * processes"), made from the store's summary of them (the "values"
 * member, store/sqlite/store_sqlite_values.c) and the catalog's
 * value_kind. Pure: no I/O, no store; the read API and the export call it.
 */
#ifndef TWL_SERVER_VALUE_CLASS_H
#define TWL_SERVER_VALUE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Longest class line (a value list of 16 and three process names fit). */
#define TWL_VALUE_CLASS_MAX 1024

/*
 * twl_value_bytes - @v bytes in IEC units into @out (@cap bytes, at least
 * 16): "0 B", "4 KiB", "256 MiB" when a whole number of the largest unit
 * not above @v, else one decimal ("117.7 MiB"; a value that rounds to
 * 1024.0 of a unit is shown in the next, "1.0 MiB"); negative: "unlimited".
 * Returns @out.
 */
char *twl_value_bytes(int64_t v, char *out, size_t cap);

/*
 * twl_value_classes - the class lines of @values, a feature's "values"
 * document ({"kind", "name", "written", "configured", "listeners"}; any
 * part may be absent): a new array of strings, empty when nothing was
 * written, configured or listened to. "bytes": the range set and the
 * resets to unlimited, "boolean": each value with its writers, "integer"
 * and "bitmask" (hex, with its bits): the values and their cgroups; the
 * census's configured values likewise; listeners as processes. NULL with
 * errno EINVAL when @values is not an object with a known "kind", ENOMEM.
 */
json_t *twl_value_classes(const json_t *values);

/*
 * twl_value_classes_into - set @values' member "classes" to
 * twl_value_classes(@values). 0, -EINVAL or -ENOMEM.
 */
int twl_value_classes_into(json_t *values);

#endif /* TWL_SERVER_VALUE_CLASS_H */
