// SPDX-License-Identifier: GPL-2.0
/* Generates the CA and server certificate with OpenSSL. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <twilight/util.h>

#include "http/tls.h"

static EVP_PKEY *gen_key(void)
{
	return EVP_EC_gen("P-256");
}

static int write_pem(const char *path, EVP_PKEY *key, X509 *cert, mode_t mode)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data;
	long n;
	int ret = -ENOMEM;

	if (!b)
		return -ENOMEM;
	if (key && !PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL))
		goto out;
	if (cert && !PEM_write_bio_X509(b, cert))
		goto out;
	n = BIO_get_mem_data(b, &data);
	ret = twl_write_file_atomic(path, data, (size_t)n, mode);
out:
	BIO_free(b);
	return ret;
}

static EVP_PKEY *read_key(const char *path)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *k;

	if (!f)
		return NULL;
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return k;
}

static X509 *read_cert(const char *path)
{
	FILE *f = fopen(path, "r");
	X509 *c;

	if (!f)
		return NULL;
	c = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	return c;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -EINVAL;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -ENOMEM;
}

static X509 *new_cert(EVP_PKEY *key, const char *cn, long days)
{
	X509 *c = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	X509_NAME *name;

	if (!c)
		return NULL;
	if (RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] &= 0x7f;
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c)))
		goto fail;
	BN_free(bn);
	bn = NULL;
	X509_set_version(c, 2);
	X509_gmtime_adj(X509_getm_notBefore(c), -3600);
	X509_gmtime_adj(X509_getm_notAfter(c), days * 86400);
	X509_set_pubkey(c, key);
	name = X509_get_subject_name(c);
	X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
				   (const unsigned char *)"twilight", -1, -1,
				   0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	return c;
fail:
	BN_free(bn);
	X509_free(c);
	return NULL;
}

static void key_path_of(const char *ca_file, char *out, size_t cap)
{
	size_t n = strlen(ca_file);

	if (n > 4 && !strcmp(ca_file + n - 4, ".pem"))
		snprintf(out, cap, "%.*s.key", (int)(n - 4), ca_file);
	else
		snprintf(out, cap, "%s.key", ca_file);
}

static bool is_ip(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 ||
	       inet_pton(AF_INET6, s, buf) == 1;
}

/* Contract: see tls.h. */
int twl_tls_ensure(const char *ca_file, const char *cert_file,
		   const char *key_file, const char (*sans)[128], size_t n_sans,
		   char *err, size_t err_cap)
{
	EVP_PKEY *ca_key = NULL, *key = NULL;
	X509 *ca = NULL, *cert = NULL;
	char ca_key_file[600], san[4096];
	size_t off;
	int ret = 0, made = 0;

	if (!access(cert_file, R_OK) && !access(key_file, R_OK))
		return 0; /* operator-provided or generated earlier */
	key_path_of(ca_file, ca_key_file, sizeof(ca_key_file));
	if (!access(ca_file, R_OK)) {
		ca = read_cert(ca_file);
		ca_key = read_key(ca_key_file);
		if (!ca || !ca_key) {
			snprintf(
				err, err_cap,
				"%s exists but it or its key %s cannot be read; provide --cert and --key, or remove %s to generate a new CA",
				ca_file, ca_key_file, ca_file);
			ret = -EINVAL;
			goto out;
		}
	} else {
		ca_key = gen_key();
		ca = ca_key ? new_cert(ca_key, "twilight CA", 3650) : NULL;
		if (!ca) {
			ret = -ENOMEM;
			goto crypto_fail;
		}
		X509_set_issuer_name(ca, X509_get_subject_name(ca));
		if (add_ext(ca, ca, NID_basic_constraints,
			    "critical,CA:TRUE,pathlen:0") ||
		    add_ext(ca, ca, NID_key_usage,
			    "critical,keyCertSign,cRLSign") ||
		    add_ext(ca, ca, NID_subject_key_identifier, "hash") ||
		    !X509_sign(ca, ca_key, EVP_sha256())) {
			ret = -EINVAL;
			goto crypto_fail;
		}
		ret = write_pem(ca_key_file, ca_key, NULL, 0600);
		if (!ret)
			ret = write_pem(ca_file, NULL, ca, 0644);
		if (ret) {
			snprintf(err, err_cap, "cannot write %s: %s", ca_file,
				 strerror(-ret));
			goto out;
		}
		made = 1;
	}
	key = gen_key();
	cert = key ? new_cert(key, "twilight-server", 825) : NULL;
	if (!cert) {
		ret = -ENOMEM;
		goto crypto_fail;
	}
	off = (size_t)snprintf(san, sizeof(san),
			       "DNS:localhost,IP:127.0.0.1,IP:::1");
	for (size_t i = 0; i < n_sans && off < sizeof(san); i++)
		off += (size_t)snprintf(san + off, sizeof(san) - off, ",%s:%s",
					is_ip(sans[i]) ? "IP" : "DNS", sans[i]);
	X509_set_issuer_name(cert, X509_get_subject_name(ca));
	if (add_ext(cert, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    add_ext(cert, ca, NID_key_usage, "critical,digitalSignature") ||
	    add_ext(cert, ca, NID_ext_key_usage, "serverAuth") ||
	    add_ext(cert, ca, NID_authority_key_identifier, "keyid") ||
	    add_ext(cert, ca, NID_subject_alt_name, san) ||
	    !X509_sign(cert, ca_key, EVP_sha256())) {
		ret = -EINVAL;
		goto crypto_fail;
	}
	ret = write_pem(key_file, key, NULL, 0600);
	if (!ret)
		ret = write_pem(cert_file, NULL, cert, 0644);
	if (ret) {
		snprintf(err, err_cap, "cannot write %s: %s", cert_file,
			 strerror(-ret));
		goto out;
	}
	ret = 1;
	goto out;
crypto_fail:
	snprintf(err, err_cap,
		 "OpenSSL failed generating TLS material (SANs: %s)",
		 n_sans ? "as given with --san" : "default");
out:
	(void)made;
	X509_free(cert);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(ca_key);
	return ret;
}

/* Contract: see tls.h. */
int twl_tls_not_after(const char *pem, int64_t *t)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *c = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	struct tm tm;
	int ret = -EINVAL;

	if (c && ASN1_TIME_to_tm(X509_get0_notAfter(c), &tm) == 1) {
		*t = (int64_t)timegm(&tm);
		ret = 0;
	}
	X509_free(c);
	BIO_free(b);
	return ret;
}
