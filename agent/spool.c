// SPDX-License-Identifier: GPL-2.0
/* Crash-safe on-disk queue of report batches (see spool.h for the layout). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <twilight/util.h>

#include "spool.h"

struct spool_ent {
	uint64_t id;
	uint64_t bytes; /* file size, header included */
	int64_t created;
};

struct twl_spool {
	char *dir;
	char *qdir;
	int dirfd;
	int lockfd;
	uint64_t max_bytes;
	unsigned max_age_s;
	unsigned quarantine_max;
	int64_t (*wall_s)(void *ctx);
	void *ctx;
	struct spool_ent *ents; /* sorted by id, oldest first */
	size_t n, cap;
	uint64_t total;
	uint64_t next_id;
	uint64_t dropped, quarantined;
};

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void twl_spool_hdr_encode(uint8_t out[TWL_SPOOL_HDR_LEN], uint32_t len,
			  uint32_t crc, int64_t created)
{
	memset(out, 0, TWL_SPOOL_HDR_LEN);
	memcpy(out, TWL_SPOOL_MAGIC, 4);
	put_le16(out + 4, TWL_SPOOL_VERSION);
	put_le16(out + 6, TWL_SPOOL_HDR_LEN);
	put_le32(out + 8, len);
	put_le32(out + 12, crc);
	put_le64(out + 16, (uint64_t)created);
	put_le32(out + 24, (uint32_t)crc32(0L, out, 24));
}

int twl_spool_hdr_decode(const uint8_t *buf, size_t n, struct twl_spool_hdr *h,
			 const char **why)
{
	const char *w = NULL;

	if (n < TWL_SPOOL_HDR_LEN)
		w = "truncated header";
	else if (memcmp(buf, TWL_SPOOL_MAGIC, 4))
		w = "bad magic";
	else if (get_le32(buf + 24) != (uint32_t)crc32(0L, buf, 24))
		w = "header CRC mismatch";
	else if (get_le16(buf + 4) != TWL_SPOOL_VERSION)
		w = "unsupported spool version";
	else if (get_le16(buf + 6) != TWL_SPOOL_HDR_LEN)
		w = "bad header length";
	else if (get_le32(buf + 8) > TWL_SPOOL_MAX_BATCH)
		w = "payload length over limit";
	if (w) {
		if (why)
			*why = w;
		return -EBADMSG;
	}
	h->version = get_le16(buf + 4);
	h->length = get_le32(buf + 8);
	h->crc = get_le32(buf + 12);
	h->created = (int64_t)get_le64(buf + 16);
	return 0;
}

/*
 * The flock() on .lock keeps other processes out. Within this process the
 * same spool may be open twice for a moment (a SIGHUP reload builds the new
 * sender before freeing the old one), so lock holders are shared by
 * directory identity and reference-counted. Not thread-safe, like the rest.
 */
struct spool_lock {
	pid_t pid; /* a forked child does not inherit the holding */
	dev_t dev;
	ino_t ino;
	int fd;
	unsigned refs;
};

static struct spool_lock locks[8];

static int lock_take(int dirfd)
{
	struct spool_lock *free_slot = NULL;
	struct stat st;
	int fd;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(locks) / sizeof(locks[0]); i++) {
		if (locks[i].refs && locks[i].pid != getpid())
			locks[i].refs = 0; /* inherited over fork: not ours */
		if (locks[i].refs && locks[i].dev == st.st_dev &&
		    locks[i].ino == st.st_ino) {
			locks[i].refs++;
			return locks[i].fd;
		}
		if (!locks[i].refs && !free_slot)
			free_slot = &locks[i];
	}
	if (!free_slot)
		return -EMFILE;
	fd = openat(dirfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int ret = errno == EWOULDBLOCK ? -EBUSY : -errno;

		close(fd);
		return ret;
	}
	*free_slot = (struct spool_lock){ .pid = getpid(),
					  .dev = st.st_dev,
					  .ino = st.st_ino,
					  .fd = fd,
					  .refs = 1 };
	return fd;
}

static void lock_drop(int fd)
{
	for (size_t i = 0; i < sizeof(locks) / sizeof(locks[0]); i++) {
		if (locks[i].refs && locks[i].fd == fd &&
		    locks[i].pid == getpid()) {
			if (--locks[i].refs == 0)
				close(fd);
			return;
		}
	}
}

static int64_t spool_now(const struct twl_spool *sp)
{
	return sp->wall_s ? sp->wall_s(sp->ctx) : (int64_t)time(NULL);
}

static void batch_name(char out[40], uint64_t id)
{
	snprintf(out, 40, "%020" PRIu64 ".batch", id);
}

/* Parse "<20 digits>.batch"; returns 0 and the id, or -EINVAL. */
static int parse_batch_name(const char *name, uint64_t *id)
{
	uint64_t v = 0;

	if (strlen(name) != 26 || strcmp(name + 20, ".batch"))
		return -EINVAL;
	for (int i = 0; i < 20; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	*id = v;
	return 0;
}

static int read_full(int fd, void *p, size_t n, size_t *got)
{
	char *c = p;
	size_t done = 0;

	while (done < n) {
		ssize_t r = read(fd, c + done, n - done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

static ssize_t ent_index(const struct twl_spool *sp, uint64_t id)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->ents[mid].id == id)
			return (ssize_t)mid;
		if (sp->ents[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void ent_forget(struct twl_spool *sp, size_t i)
{
	sp->total -= sp->ents[i].bytes;
	memmove(&sp->ents[i], &sp->ents[i + 1],
		(sp->n - i - 1) * sizeof(sp->ents[0]));
	sp->n--;
}

/*
 * Append an entry. Batches written by this process always have the largest
 * id; entries found at open come in directory order and are sorted once by
 * sort_ents() afterwards. Memory is bounded by the files on disk, which
 * put keeps within TWL_SPOOL_MAX_FILES.
 */
static int ent_add(struct twl_spool *sp, uint64_t id, uint64_t bytes,
		   int64_t created)
{
	if (sp->n == sp->cap) {
		size_t ncap = sp->cap ? sp->cap * 2 : 64;
		struct spool_ent *e = realloc(sp->ents, ncap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		sp->ents = e;
		sp->cap = ncap;
	}
	sp->ents[sp->n++] = (struct spool_ent){ .id = id,
						.bytes = bytes,
						.created = created };
	sp->total += bytes;
	if (id >= sp->next_id)
		sp->next_id = id + 1;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct spool_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void sort_ents(struct twl_spool *sp)
{
	if (sp->n > 1)
		qsort(sp->ents, sp->n, sizeof(sp->ents[0]), ent_cmp);
}

static int fsync_fd_dir(int dirfd)
{
	return fsync(dirfd) < 0 ? -errno : 0;
}

/* Delete the oldest quarantined batches beyond the cap (by name order). */
static void quarantine_trim(struct twl_spool *sp)
{
	struct dirent **list = NULL;
	int n, batches = 0;

	n = scandir(sp->qdir, &list, NULL, alphasort);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++)
		if (strstr(list[i]->d_name, ".batch") &&
		    !strstr(list[i]->d_name, ".why"))
			batches++;
	for (int i = 0; i < n && batches > (int)sp->quarantine_max; i++) {
		const char *nm = list[i]->d_name;
		char path[4096];

		if (!strstr(nm, ".batch") || strstr(nm, ".why"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", sp->qdir, nm);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s.why", sp->qdir, nm);
		unlink(path);
		batches--;
	}
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* Move the file @name (in the spool dir) to quarantine with a reason. */
static int quarantine_file(struct twl_spool *sp, const char *name,
			   const char *why)
{
	char dst[4096], wpath[4200];
	int ret = 0;

	snprintf(dst, sizeof(dst), "%s/%020" PRId64 "-%s", sp->qdir,
		 spool_now(sp), name);
	if (renameat(sp->dirfd, name, AT_FDCWD, dst) < 0)
		return -errno;
	snprintf(wpath, sizeof(wpath), "%s.why", dst);
	if (why) {
		/* The reason is advisory: a failure to write it keeps the move. */
		size_t wl = strnlen(why, 4096);
		char *txt = malloc(wl + 2);

		if (txt) {
			memcpy(txt, why, wl);
			txt[wl] = '\n';
			twl_write_file_atomic(wpath, txt, wl + 1, 0600);
			free(txt);
		}
	}
	fsync_fd_dir(sp->dirfd);
	sp->quarantined++;
	twl_log(LOG_WARNING,
		"spool: moved %s/%s to %s: %s; inspect it, then delete it",
		sp->dir, name, dst, why ? why : "rejected");
	quarantine_trim(sp);
	return ret;
}

int twl_spool_quarantine(struct twl_spool *sp, uint64_t id, const char *why)
{
	char name[40];
	ssize_t i = ent_index(sp, id);
	int ret;

	if (i < 0)
		return -ENOENT;
	batch_name(name, id);
	ret = quarantine_file(sp, name, why);
	if (ret == 0 || ret == -ENOENT)
		ent_forget(sp, (size_t)i);
	return ret;
}

static int drop_index(struct twl_spool *sp, size_t i, const char *why)
{
	char name[40];

	batch_name(name, sp->ents[i].id);
	if (unlinkat(sp->dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	twl_log(LOG_WARNING, "spool: dropped batch %s/%s (%s)", sp->dir, name,
		why);
	ent_forget(sp, i);
	sp->dropped++;
	return 0;
}

/* Drop oldest batches while over a cap; @keep is never dropped. */
static int enforce_caps(struct twl_spool *sp, uint64_t keep)
{
	while (sp->n &&
	       (sp->total > sp->max_bytes || sp->n > TWL_SPOOL_MAX_FILES)) {
		size_t i = 0;
		int ret;

		if (sp->ents[0].id == keep) {
			if (sp->n == 1)
				break;
			i = 1;
		}
		ret = drop_index(sp, i, "spool size cap reached");
		if (ret)
			return ret;
	}
	return 0;
}

unsigned twl_spool_expire(struct twl_spool *sp)
{
	unsigned dropped = 0;
	int64_t now, limit;

	if (!sp->max_age_s)
		return 0;
	now = spool_now(sp);
	limit = now - (int64_t)sp->max_age_s;
	for (size_t i = 0; i < sp->n;) {
		/* Also drops batches dated far in the future (clock jumps). */
		if (sp->ents[i].created < limit ||
		    sp->ents[i].created > now + (int64_t)sp->max_age_s) {
			if (drop_index(sp, i,
				       "older than the spool age limit") == 0) {
				dropped++;
				continue;
			}
		}
		i++;
	}
	return dropped;
}

/* Index one directory entry at open time. */
static int scan_one(struct twl_spool *sp, const char *name)
{
	uint8_t hb[TWL_SPOOL_HDR_LEN];
	struct twl_spool_hdr h;
	const char *why = NULL;
	struct stat st;
	size_t got = 0;
	uint64_t id;
	int fd, ret;

	if (!strncmp(name, ".tmp-", 5)) {
		/* An interrupted write: submit never returned for it. */
		unlinkat(sp->dirfd, name, 0);
		return 0;
	}
	if (parse_batch_name(name, &id))
		return 0; /* not ours (.lock, quarantine/, editor files) */
	fd = openat(sp->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = fstat(fd, &st) < 0 ? -errno : 0;
	if (!ret)
		ret = read_full(fd, hb, sizeof(hb), &got);
	close(fd);
	if (ret)
		return ret;
	if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (twl_spool_hdr_decode(hb, got, &h, &why) == 0 &&
		 (uint64_t)st.st_size != TWL_SPOOL_HDR_LEN + (uint64_t)h.length)
		why = "file size does not match header length";
	if (why) {
		quarantine_file(sp, name, why);
		if (id >= sp->next_id)
			sp->next_id = id + 1;
		return 0;
	}
	return ent_add(sp, id, (uint64_t)st.st_size, h.created);
}

struct twl_spool *twl_spool_open(const struct twl_spool_opts *o)
{
	struct twl_spool *sp = NULL;
	DIR *d = NULL;
	struct dirent *de;
	int ret;

	if (!o || !o->dir || !o->dir[0] || !o->max_bytes) {
		errno = EINVAL;
		return NULL;
	}
	sp = calloc(1, sizeof(*sp));
	if (!sp) {
		errno = ENOMEM;
		return NULL;
	}
	sp->dirfd = sp->lockfd = -1;
	sp->max_bytes = o->max_bytes;
	sp->max_age_s = o->max_age_s;
	sp->quarantine_max = o->quarantine_max ? o->quarantine_max :
						 TWL_SPOOL_DEF_QUARANTINE_MAX;
	sp->wall_s = o->wall_s;
	sp->ctx = o->ctx;
	sp->next_id = 1;
	sp->dir = strdup(o->dir);
	if (!sp->dir || asprintf(&sp->qdir, "%s/quarantine", o->dir) < 0) {
		sp->qdir = NULL;
		ret = -ENOMEM;
		goto fail;
	}
	ret = twl_mkdir_p(sp->qdir, 0700);
	if (ret)
		goto fail;
	sp->dirfd = open(sp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sp->dirfd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = lock_take(sp->dirfd);
	if (ret < 0)
		goto fail;
	sp->lockfd = ret;
	d = fdopendir(dup(sp->dirfd));
	if (!d) {
		ret = -errno;
		goto fail;
	}
	while ((de = readdir(d))) {
		ret = scan_one(sp, de->d_name);
		if (ret)
			goto fail;
	}
	closedir(d);
	d = NULL;
	sort_ents(sp);
	fsync_fd_dir(sp->dirfd);
	twl_spool_expire(sp);
	ret = enforce_caps(sp, 0);
	if (ret)
		goto fail;
	return sp;
fail:
	if (d)
		closedir(d);
	twl_spool_close(sp);
	errno = -ret;
	return NULL;
}

void twl_spool_close(struct twl_spool *sp)
{
	if (!sp)
		return;
	if (sp->lockfd >= 0)
		lock_drop(sp->lockfd);
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	free(sp->ents);
	free(sp->dir);
	free(sp->qdir);
	free(sp);
}

int twl_spool_put(struct twl_spool *sp, const void *p, size_t n, uint64_t *idp)
{
	uint8_t hdr[TWL_SPOOL_HDR_LEN];
	char tmp[64], name[40];
	uint64_t id = sp->next_id;
	int64_t now = spool_now(sp);
	int fd = -1, ret;

	if (n > TWL_SPOOL_MAX_BATCH || n + TWL_SPOOL_HDR_LEN > sp->max_bytes)
		return -E2BIG;
	twl_spool_hdr_encode(hdr, (uint32_t)n, (uint32_t)crc32(0L, p, (uInt)n),
			     now);
	batch_name(name, id);
	for (int attempt = 0; fd < 0; attempt++) {
		char rnd[13];

		ret = twl_random_hex(rnd, 6);
		if (ret)
			return ret;
		snprintf(tmp, sizeof(tmp), ".tmp-%" PRIu64 "-%s", id, rnd);
		fd = openat(sp->dirfd, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && (errno != EEXIST || attempt > 8))
			return -errno;
	}
	ret = twl_write_all(fd, hdr, sizeof(hdr));
	if (!ret)
		ret = twl_write_all(fd, p, n);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(sp->dirfd, tmp, sp->dirfd, name) < 0)
		ret = -errno;
	if (ret) {
		unlinkat(sp->dirfd, tmp, 0);
		return ret;
	}
	sp->next_id = id + 1; /* never reuse a name, even if the rest fails */
	ret = fsync_fd_dir(sp->dirfd);
	if (ret)
		return ret; /* file may survive a crash; it is complete either way */
	ret = ent_add(sp, id, n + TWL_SPOOL_HDR_LEN, now);
	if (ret)
		return ret;
	if (idp)
		*idp = id;
	return enforce_caps(sp, id);
}

int twl_spool_oldest(const struct twl_spool *sp, uint64_t *id)
{
	if (!sp->n)
		return -ENOENT;
	*id = sp->ents[0].id;
	return 0;
}

int twl_spool_load(struct twl_spool *sp, uint64_t id, char **out, size_t *lenp)
{
	uint8_t hb[TWL_SPOOL_HDR_LEN];
	struct twl_spool_hdr h;
	const char *why = NULL;
	char name[40], *buf = NULL;
	ssize_t i = ent_index(sp, id);
	size_t got = 0;
	char extra;
	int fd, ret;

	*out = NULL;
	if (i < 0)
		return -ENOENT;
	batch_name(name, id);
	fd = openat(sp->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			ent_forget(sp, (size_t)i);
		return ret;
	}
	ret = read_full(fd, hb, sizeof(hb), &got);
	if (ret)
		goto out;
	if (twl_spool_hdr_decode(hb, got, &h, &why))
		goto bad;
	buf = malloc((size_t)h.length + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_full(fd, buf, h.length, &got);
	if (ret)
		goto out;
	if (got != h.length) {
		why = "payload truncated";
		goto bad;
	}
	ret = read_full(fd, &extra, 1, &got);
	if (ret)
		goto out;
	if (got) {
		why = "trailing bytes after payload";
		goto bad;
	}
	if ((uint32_t)crc32(0L, (const Bytef *)buf, h.length) != h.crc) {
		why = "payload CRC mismatch";
		goto bad;
	}
	buf[h.length] = 0;
	*out = buf;
	if (lenp)
		*lenp = h.length;
	buf = NULL;
	goto out;
bad:
	close(fd);
	fd = -1;
	twl_spool_quarantine(sp, id, why);
	ret = -EBADMSG;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

int twl_spool_remove(struct twl_spool *sp, uint64_t id)
{
	char name[40];
	ssize_t i = ent_index(sp, id);

	if (i < 0)
		return -ENOENT;
	batch_name(name, id);
	if (unlinkat(sp->dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	ent_forget(sp, (size_t)i);
	/* Not fsync'd: a resurrected batch is resent, and batch ids dedup it. */
	return 0;
}

void twl_spool_counts(const struct twl_spool *sp, struct twl_spool_counts *c)
{
	c->bytes = sp->total;
	c->files = sp->n;
	c->dropped = sp->dropped;
	c->quarantined = sp->quarantined;
}

const char *twl_spool_dir(const struct twl_spool *sp)
{
	return sp->dir;
}
