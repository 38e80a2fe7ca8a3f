// SPDX-License-Identifier: GPL-2.0
/* Random identifiers from the kernel's CSPRNG, and hex encoding. */
#include <errno.h>
#include <sys/random.h>

#include <twilight/util.h>

void twl_hex_encode(const void *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int twl_random_hex(char *out, size_t nbytes)
{
	unsigned char raw[256];
	size_t got = 0;

	if (nbytes == 0 || nbytes > sizeof(raw))
		return -EINVAL;
	while (got < nbytes) {
		ssize_t r = getrandom(raw + got, nbytes - got, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	twl_hex_encode(raw, nbytes, out);
	return 0;
}
