// SPDX-License-Identifier: GPL-2.0
/*
 * The bytes of a text log: a plain file, or gzip (rotated logs) inflated
 * with zlib. zlib's gz* API is not used: gzread() returns nothing from a
 * call that ends in a data error, so up to a buffer of good text before a
 * corrupt spot (or before a wrong CRC at the very end) would be lost.
 * inflate() hands out every byte it decoded before the error.
 */
#include "textlog_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define IN_BUF (64 * 1024)

struct tl_input {
	int fd;
	bool gzip, zinit, in_eof, in_member;
	unsigned long members; /* gzip members read to their end */
	int err; /* latched: returned once the bytes before it are out */
	const char *msg;
	z_stream zs;
	size_t in_len; /* plain: bytes read ahead for the magic check */
	unsigned char in[IN_BUF];
};

static ssize_t read_fd(int fd, void *buf, size_t cap)
{
	ssize_t n;

	do {
		n = read(fd, buf, cap);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

struct tl_input *tl_input_open(int fd)
{
	struct tl_input *in = calloc(1, sizeof(*in));
	ssize_t n;

	if (!in)
		return NULL;
	in->fd = fd;
	/* Enough of the start to see gzip's magic (1f 8b). */
	while (in->in_len < 2) {
		n = read_fd(fd, in->in + in->in_len, IN_BUF - in->in_len);
		if (n < 0) {
			free(in);
			errno = (int)-n;
			return NULL;
		}
		if (n == 0)
			break;
		in->in_len += (size_t)n;
	}
	in->gzip = in->in_len >= 2 && in->in[0] == 0x1f && in->in[1] == 0x8b;
	if (in->gzip) {
		if (inflateInit2(&in->zs, 16 + MAX_WBITS) != Z_OK) {
			free(in);
			errno = ENOMEM;
			return NULL;
		}
		in->zinit = true;
		in->zs.next_in = in->in;
		in->zs.avail_in = (uInt)in->in_len;
	}
	return in;
}

void tl_input_close(struct tl_input *in)
{
	if (!in)
		return;
	if (in->zinit)
		inflateEnd(&in->zs);
	close(in->fd);
	free(in);
}

static int latch(struct tl_input *in, int err, const char *msg)
{
	in->err = err;
	in->msg = msg;
	return err;
}

static int plain_read(struct tl_input *in, char *out, size_t cap, size_t *got)
{
	ssize_t n;

	if (in->in_len) {
		n = (ssize_t)(in->in_len < cap ? in->in_len : cap);
		memcpy(out, in->in, (size_t)n);
		memmove(in->in, in->in + n, in->in_len - (size_t)n);
		in->in_len -= (size_t)n;
	} else {
		n = read_fd(in->fd, out, cap);
		if (n < 0)
			return latch(in, (int)n, strerror((int)-n));
	}
	*got = (size_t)n;
	return 0;
}

/* More compressed input; 0, or 1 at the end of the file. */
static int more_input(struct tl_input *in)
{
	ssize_t n;

	if (in->zs.avail_in)
		return 0;
	if (in->in_eof)
		return 1;
	n = read_fd(in->fd, in->in, IN_BUF);
	if (n < 0)
		return latch(in, (int)n, strerror((int)-n));
	if (n == 0) {
		in->in_eof = true;
		return 1;
	}
	in->zs.next_in = in->in;
	in->zs.avail_in = (uInt)n;
	return 0;
}

/* Inflate until some output, the end, or an error (latched). */
static void inflate_some(struct tl_input *in)
{
	uInt start = in->zs.avail_out;

	while (in->zs.avail_out == start && !in->err) {
		int ret = more_input(in);

		if (ret < 0)
			return;
		if (ret > 0) {
			if (in->in_member)
				latch(in, -EIO,
				      "compressed data cut short "
				      "(truncated gzip file)");
			return;
		}
		/* Another member (concatenated gzip) or junk after the last. */
		if (!in->in_member && in->members &&
		    (in->zs.next_in[0] != 0x1f ||
		     (in->zs.avail_in > 1 && in->zs.next_in[1] != 0x8b))) {
			latch(in, -EIO,
			      "data after the end of the gzip stream");
			return;
		}
		in->in_member = true;
		ret = inflate(&in->zs, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			in->in_member = false;
			in->members++;
			inflateReset(&in->zs);
		} else if (ret != Z_OK && ret != Z_BUF_ERROR) {
			latch(in, -EIO,
			      in->zs.msg ? in->zs.msg : "corrupt gzip data");
		}
	}
}

int tl_input_read(struct tl_input *in, char *out, size_t cap, size_t *got,
		  const char **msg)
{
	*got = 0;
	if (!in->err && !in->gzip) {
		plain_read(in, out, cap, got);
	} else if (!in->err) {
		in->zs.next_out = (Bytef *)out;
		in->zs.avail_out = (uInt)cap;
		inflate_some(in);
		*got = cap - in->zs.avail_out;
	}
	/* Bytes decoded before an error go out first; the error next time. */
	if (*got || !in->err)
		return 0;
	*msg = in->msg;
	return in->err;
}
