/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record_dedup: the same kernel record seen twice (on /dev/kmsg and in the
 * journal, or in two saved logs) is sent once. A record's identity is its
 * boot id, the kernel's stamp in microseconds (the /dev/kmsg record's
 * timestamp = the journal's _SOURCE_MONOTONIC_TIMESTAMP) and its text
 * without trailing white space (the catalog ignores it, and forms differ in
 * it). A bounded set: once full, the oldest identity is forgotten first.
 * The boot id and the text are kept as 64-bit hashes: two different
 * records with the same microsecond and both hashes equal would be taken
 * for one (odds ~2^-64 per pair).
 */
#ifndef TWL_AGENT_RECORD_DEDUP_H
#define TWL_AGENT_RECORD_DEDUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct twl_dedup;

/* twl_dedup_new - a set of at most @cap identities (1..1048576). NULL + errno. */
struct twl_dedup *twl_dedup_new(size_t cap);

/* twl_dedup_free - NULL-safe. */
void twl_dedup_free(struct twl_dedup *d);

/*
 * twl_dedup_seen - true when (@boot_id, @mono_us, @text[0..@len)) is in
 * the set already; otherwise adds it (forgetting the oldest when full) and
 * returns false. @boot_id is 32 hex digits, dashes and case ignored; ""
 * is a boot of its own (records whose boot is not known).
 */
bool twl_dedup_seen(struct twl_dedup *d, const char *boot_id, uint64_t mono_us,
		    const char *text, size_t len);

/* twl_dedup_has - whether (@boot_id, @mono_us, @text) is in the set; adds nothing. */
bool twl_dedup_has(const struct twl_dedup *d, const char *boot_id,
		   uint64_t mono_us, const char *text, size_t len);

/*
 * twl_boot_id_same - @a and @b name the same boot: equal but for dashes
 * and the case of hex digits ("" only equals "").
 */
bool twl_boot_id_same(const char *a, const char *b);

/* twl_dedup_count - identities held now. */
size_t twl_dedup_count(const struct twl_dedup *d);

#endif /* TWL_AGENT_RECORD_DEDUP_H */
