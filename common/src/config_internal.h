/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the configuration engine's files share (config_*.c): storing a
 * value into a field, and writing a stored value or a bound as text.
 */
#ifndef TWL_CONFIG_INTERNAL_H
#define TWL_CONFIG_INTERNAL_H

#include <twilight/config.h>

/* Where a value came from; a LIST's items are replaced by a new source. */
enum cfg_src { CFG_SRC_DEFAULT, CFG_SRC_FILE, CFG_SRC_FLAG, CFG_SRC_PROGRAM };

/*
 * cfg_store - parse @v for option @o and store it into @obj. A LIST gains
 * the comma-separated items of @v (an empty @v empties it). An argv field
 * keeps the pointer @v. On -EINVAL/-ERANGE *@why says what was expected.
 * 0, -EINVAL, -ERANGE, -ENOMEM.
 */
int cfg_store(const struct twl_cfg_opt *o, void *obj, const char *v, char *why,
	      size_t cap);

/* cfg_list_clear - remove a LIST's items. */
void cfg_list_clear(const struct twl_cfg_opt *o, void *obj);

/* cfg_is_text - options stored as a string (BUF, HEAP or ARGV). */
bool cfg_is_text(const struct twl_cfg_opt *o);

/* cfg_type_name - "path", "duration", ... for help and messages. */
const char *cfg_type_name(const struct twl_cfg_opt *o);

/* cfg_format_num - @n in @o's stored units as written in a file ("64M"). */
void cfg_format_num(const struct twl_cfg_opt *o, uint64_t n, char *buf,
		    size_t cap);

/* cfg_format - the value of @o in @obj as written in a file; "" if unset. */
void cfg_format(const struct twl_cfg_opt *o, const void *obj, char *buf,
		size_t cap);

/*
 * cfg_check_stored - is the stored value of @o within its bounds? 0, or
 * -ERANGE with *@why.
 */
int cfg_check_stored(const struct twl_cfg_opt *o, const void *obj, char *why,
		     size_t cap);

/* An option found in a session: its row, struct and index in st[]. */
struct cfg_found {
	const struct twl_cfg_opt *o;
	void *obj;
	size_t idx;
	bool alias; /* found by its former spelling */
};

/* cfg_find - option @key (@len bytes; name or alias) in @p. */
bool cfg_find(struct twl_cfg *p, const char *key, size_t len,
	      struct cfg_found *f);

/* cfg_find_short - option -@c in @p. */
bool cfg_find_short(struct twl_cfg *p, char c, struct cfg_found *f);

/* cfg_msg - add a message (see struct twl_cfg_msg). */
void cfg_msg(struct twl_cfg *p, unsigned line, bool flag, bool note,
	     const char *key, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/*
 * cfg_apply - store @value into option @f from source @src (file @line,
 * or a flag written @key), with the deprecation note and the messages.
 * 0, -EINVAL (message added), -ENOMEM.
 */
int cfg_apply(struct twl_cfg *p, const struct cfg_found *f, const char *value,
	      enum cfg_src src, unsigned line, const char *key);

/* cfg_field - the address of @o's field in @obj. */
static inline void *cfg_field(const struct twl_cfg_opt *o, const void *obj)
{
	return (char *)obj + o->off;
}

#endif /* TWL_CONFIG_INTERNAL_H */
