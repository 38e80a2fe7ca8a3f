// SPDX-License-Identifier: GPL-2.0
/* SHA-256 through OpenSSL's EVP interface. */
#include <stdlib.h>

#include <openssl/evp.h>

#include <twilight/util.h>

void twl_sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	/* EVP_Digest with the built-in SHA-256 fails only on allocation. */
	if (!EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		abort();
	twl_hex_encode(md, 32, out);
}
