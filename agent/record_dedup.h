/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record_dedup: the same kernel record seen twice (on /dev/kmsg and in the
 * journal, or in two saved logs, or again after a restart) is sent once,
 * while a record the kernel printed twice is sent twice. A record's
 * identity is its boot id, the kernel's stamp in microseconds (the
 * /dev/kmsg record's timestamp = the journal's _SOURCE_MONOTONIC_TIMESTAMP),
 * its text without trailing white space (the catalog ignores it, and forms
 * differ in it), and its ordinal: the how-manieth record with that boot,
 * stamp and text it is in its source (struct twl_dedup_run). On a coarse
 * printk clock (jiffies) one warning printed twice in a tick has the same
 * stamp and text twice; every source lists both in the kernel's order, so
 * they are ordinals 0 and 1 wherever they are read. A source tells a
 * record handed in again from the next one by its place: the kmsg
 * sequence number, the journal cursor, the line of a saved log.
 * A bounded set: once full, the oldest identity is forgotten first.
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
 * twl_dedup_seen - true when (@boot_id, @mono_us, @ord, @text[0..@len)) is
 * in the set already; otherwise adds it (forgetting the oldest when full)
 * and returns false. @boot_id is 32 hex digits, dashes and case ignored;
 * "" is a boot of its own (records whose boot is not known). @ord: from
 * twl_dedup_ordinal().
 */
bool twl_dedup_seen(struct twl_dedup *d, const char *boot_id, uint64_t mono_us,
		    uint32_t ord, const char *text, size_t len);

/* twl_dedup_has - whether that identity is in the set; adds nothing. */
bool twl_dedup_has(const struct twl_dedup *d, const char *boot_id,
		   uint64_t mono_us, uint32_t ord, const char *text,
		   size_t len);

/* Distinct (text, place) pairs remembered at one stamp of a source. */
#define TWL_DEDUP_RUN_MAX 32

/*
 * The records of one source at its latest stamp, in the order read, to
 * number repeats (twl_dedup_ordinal()). Zeroed = empty; one per source
 * (records from another source are numbered by that source's run).
 */
struct twl_dedup_run {
	uint64_t boot_hash, mono;
	unsigned n;
	struct {
		uint64_t text_hash, pos;
	} at[TWL_DEDUP_RUN_MAX];
};

/*
 * twl_dedup_ordinal - the ordinal of the record (@boot_id, @mono_us,
 * @text[0..@len)) read from the source of @run at place @pos (nonzero:
 * kmsg sequence number + 1, twl_dedup_place() of a journal cursor, a saved
 * log's line; 0 = not known): how many records with that boot, stamp and
 * text the source had before it. The same place again gets the same
 * ordinal (a record handed in twice); without a place, or past
 * TWL_DEDUP_RUN_MAX records at one stamp, it is 0, so repeats are taken
 * for one record as before.
 */
uint32_t twl_dedup_ordinal(struct twl_dedup_run *run, const char *boot_id,
			   uint64_t mono_us, const char *text, size_t len,
			   uint64_t pos);

/* twl_dedup_place - a nonzero place for a journal cursor (its hash). */
uint64_t twl_dedup_place(const char *cursor);

/*
 * twl_boot_id_same - @a and @b name the same boot: equal but for dashes
 * and the case of hex digits ("" only equals "").
 */
bool twl_boot_id_same(const char *a, const char *b);

/* twl_dedup_count - identities held now. */
size_t twl_dedup_count(const struct twl_dedup *d);

#endif /* TWL_AGENT_RECORD_DEDUP_H */
