/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spool: report batches on disk until the server has acknowledged them.
 *
 * Layout of spool_dir:
 *   00000000000000000042.batch   one batch; the name is a zero-padded
 *                                sequence number, so name order is age order
 *   .tmp-<seq>-XXXXXX            a batch being written; removed at open
 *   .lock                        flock()ed while a spool is open
 *   quarantine/                  corrupt or rejected batches, capped in
 *                                number, each with a ".why" text beside it
 *
 * A batch file is a 32-byte header followed by the payload:
 *   0  magic "TWSP"       4  u16 version (1)   6  u16 header length (32)
 *   8  u32 payload length 12 u32 CRC32 of payload (zlib)
 *   16 u64 created (Unix seconds)              24 u32 CRC32 of bytes 0..23
 *   28 u32 reserved (0)
 * (all little-endian). Files are written to a temp name, fsync'd, renamed
 * and the directory fsync'd, so after a crash a batch is either complete or
 * absent. Nothing is deleted except by twl_spool_remove() (after a 2xx),
 * the size cap (oldest first), the age limit, or quarantine; every drop is
 * counted.
 */
#ifndef TWL_AGENT_SPOOL_H
#define TWL_AGENT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TWL_SPOOL_MAGIC "TWSP"
#define TWL_SPOOL_VERSION 1
#define TWL_SPOOL_HDR_LEN 32
/* Largest payload accepted (also bounded by max_bytes). */
#define TWL_SPOOL_MAX_BATCH (16U << 20)
/* Hard bound on the number of batch files, whatever max_bytes says. */
#define TWL_SPOOL_MAX_FILES 100000
#define TWL_SPOOL_DEF_QUARANTINE_MAX 64

struct twl_spool_hdr {
	uint16_t version;
	uint32_t length;
	uint32_t crc;
	int64_t created;
};

struct twl_spool_opts {
	const char *dir; /* created (0700) if missing */
	uint64_t max_bytes; /* total of batch files, headers included */
	unsigned max_age_s; /* 0 = no age limit */
	unsigned quarantine_max; /* 0 = TWL_SPOOL_DEF_QUARANTINE_MAX */
	int64_t (*wall_s)(void *ctx); /* NULL = time(NULL) */
	void *ctx;
};

struct twl_spool;

/*
 * twl_spool_hdr_encode() - write the 32-byte header for a payload of @len
 * bytes with CRC @crc created at @created into @out.
 */
void twl_spool_hdr_encode(uint8_t out[TWL_SPOOL_HDR_LEN], uint32_t len,
			  uint32_t crc, int64_t created);

/*
 * twl_spool_hdr_decode() - parse and check a header (magic, version, header
 * length, header CRC, payload length <= TWL_SPOOL_MAX_BATCH). Returns 0, or
 * -EBADMSG with a short reason in *@why (static string).
 */
int twl_spool_hdr_decode(const uint8_t *buf, size_t n, struct twl_spool_hdr *h,
			 const char **why);

/*
 * twl_spool_open() - open (creating if needed) the spool in @o->dir: take
 * the lock, remove temp files left by a crash, index the batches and
 * quarantine those whose header is corrupt, then apply the age limit and
 * size cap. Returns NULL and sets errno (EBUSY if another process holds the
 * spool).
 The same process may open a spool twice
 * (reload: new sender before the old one is freed); use only the newer
 * one meanwhile.
 */
struct twl_spool *twl_spool_open(const struct twl_spool_opts *o);

/* twl_spool_close() - release the lock and memory; NULL-safe. */
void twl_spool_close(struct twl_spool *sp);

/*
 * twl_spool_put() - durably store @n bytes as the newest batch; its id goes
 * to *@id (may be NULL). Returns 0 after the file and directory are fsync'd,
 * -E2BIG if the batch alone exceeds the cap, or another negative errno.
 * Afterwards, the oldest batches are dropped while the spool is over its
 * size or file-count cap.
 */
int twl_spool_put(struct twl_spool *sp, const void *p, size_t n, uint64_t *id);

/* twl_spool_oldest() - id of the oldest batch in *@id; 0 or -ENOENT. */
int twl_spool_oldest(const struct twl_spool *sp, uint64_t *id);

/*
 * twl_spool_load() - read batch @id, checking header, length and CRC, into
 * a new buffer (*@out, NUL-terminated, free() it). A corrupt or truncated
 * batch is moved to quarantine and -EBADMSG returned; a batch that has
 * vanished gives -ENOENT (and is forgotten).
 */
int twl_spool_load(struct twl_spool *sp, uint64_t id, char **out, size_t *len);

/* twl_spool_remove() - delete batch @id (after delivery). 0 or -errno. */
int twl_spool_remove(struct twl_spool *sp, uint64_t id);

/*
 * twl_spool_quarantine() - move batch @id to quarantine/ with @why written
 * beside it; the oldest quarantined batches are deleted beyond the cap.
 */
int twl_spool_quarantine(struct twl_spool *sp, uint64_t id, const char *why);

/*
 * twl_spool_expire() - drop batches older than max_age_s. Returns how many
 * were dropped (also added to the dropped counter).
 */
unsigned twl_spool_expire(struct twl_spool *sp);

struct twl_spool_counts {
	uint64_t bytes, files, dropped, quarantined;
};

/* twl_spool_counts() - current size and the drop counters since open. */
void twl_spool_counts(const struct twl_spool *sp, struct twl_spool_counts *c);

/* twl_spool_dir() - the spool's directory (for messages). */
const char *twl_spool_dir(const struct twl_spool *sp);

#endif /* TWL_AGENT_SPOOL_H */
