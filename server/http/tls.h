/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Zero-configuration TLS material (OpenSSL): a CA and a server certificate
 * it signs, with names localhost, 127.0.0.1, ::1 and any extra SANs; and
 * when a certificate expires.
 */
#ifndef TWL_SERVER_TLS_H
#define TWL_SERVER_TLS_H

#include <stddef.h>
#include <stdint.h>

/* Days before its expiry that the server certificate is warned about. */
#define TWL_CERT_WARN_DAYS 30

/*
 * Make sure ca_file (+ its key ca_file with ".key" for ".pem"), cert_file
 * and key_file exist: missing ones are generated (EC P-256, keys 0600),
 * existing ones are kept. Returns 0, 1 when something was generated, or a
 * negative errno with a message in err.
 */
int twl_tls_ensure(const char *ca_file, const char *cert_file,
		   const char *key_file, const char (*sans)[128], size_t n_sans,
		   char *err, size_t err_cap);

/*
 * twl_tls_not_after - *@t = when the first certificate in the PEM text
 * @pem expires, in Unix seconds. 0 or -EINVAL.
 */
int twl_tls_not_after(const char *pem, int64_t *t);

#endif /* TWL_SERVER_TLS_H */
