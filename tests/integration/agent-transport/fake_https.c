// SPDX-License-Identifier: GPL-2.0
/*
 * fake_https: a scripted HTTPS server for the agent transport tests.
 *
 * Listens on 127.0.0.1 only (port chosen by the kernel, written to
 * --port-file), serves one connection at a time, and answers the n-th
 * request with the n-th line of --script:
 *
 *   CODE|Header: v;Header: v|BODY   answer CODE with those headers and BODY
 *   stall                           read the request, never answer (until
 *                                   the client gives up and closes)
 *   close-mid-body                  start a 200 answer announcing 100 body
 *                                   bytes, send 10, close the connection
 *   close                           read the request, close without a word
 *
 * Past the end of the script it answers 500 {"error":"script exhausted"}.
 * Each request is logged in --log-dir as NNN.req (request line, headers,
 * TLS version, client certificate subject, the action taken) and NNN.body
 * (the body, gunzipped if Content-Encoding: gzip). --client-ca makes a client
 * certificate mandatory. --proxy makes it also play an HTTP proxy: each
 * connection must start with "CONNECT host:port", which is answered 200, and
 * the TLS session that follows is served as above (whatever host was asked
 * for); the CONNECT line is logged as X-Fake-Proxy-Connect. Exits on SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <zlib.h>

#define MAX_HEAD (64 * 1024)
#define MAX_BODY (32 * 1024 * 1024)
#define MAX_LINES 256

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "fake_https: %s: %s\n", what, strerror(errno));
	ERR_print_errors_fp(stderr);
	exit(2);
}

static char *lines[MAX_LINES];
static int n_lines;

static void load_script(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[16384];

	if (!f)
		die(path);
	while (n_lines < MAX_LINES && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		if (!buf[0] || buf[0] == '#')
			continue;
		lines[n_lines] = strdup(buf);
		if (!lines[n_lines])
			die("strdup");
		n_lines++;
	}
	fclose(f);
}

static void write_file(const char *dir, int n, const char *ext, const void *p,
		       size_t len)
{
	char tmp[4096], path[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%03d.%s.tmp", dir, n, ext);
	snprintf(path, sizeof(path), "%s/%03d.%s", dir, n, ext);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	if (len && fwrite(p, 1, len, f) != len)
		die(tmp);
	if (fclose(f))
		die(tmp);
	if (rename(tmp, path))
		die(path);
}

static int ssl_read_some(SSL *ssl, char *buf, size_t cap)
{
	int r = SSL_read(ssl, buf, (int)cap);

	return r > 0 ? r : -1;
}

static int ssl_write_all(SSL *ssl, const char *p, size_t n)
{
	while (n) {
		int w = SSL_write(ssl, p, (int)n);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static const char *find_header(const char *head, const char *name, char *out,
			       size_t cap)
{
	size_t nl = strlen(name);
	const char *p = strstr(head, "\r\n");

	out[0] = 0;
	while (p && p[2]) {
		p += 2;
		if (!strncasecmp(p, name, nl) && p[nl] == ':') {
			const char *v = p + nl + 1, *e = strstr(v, "\r\n");

			while (*v == ' ')
				v++;
			if (!e)
				e = v + strlen(v);
			snprintf(out, cap, "%.*s", (int)(e - v), v);
			return out;
		}
		p = strstr(p, "\r\n");
	}
	return NULL;
}

static int gunzip(const char *in, size_t n, char **out, size_t *outlen)
{
	z_stream zs = { 0 };
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int zr;

	if (!buf || inflateInit2(&zs, 15 + 16) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)n;
	do {
		if (cap - len < 4096) {
			if (cap >= MAX_BODY * 4u)
				break;
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				return -1;
		}
		zs.next_out = (Bytef *)buf + len;
		zs.avail_out = (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
	} while (zr == Z_OK);
	inflateEnd(&zs);
	if (zr != Z_STREAM_END) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

static char proxy_line[512]; /* CONNECT line of the current connection */

/* Read a plain-text CONNECT request and accept it. 0 or -1. */
static int proxy_connect(int fd)
{
	char buf[4096];
	size_t n = 0;

	proxy_line[0] = 0;
	while (n < sizeof(buf) - 1) {
		ssize_t r =
			recv(fd, buf + n, 1, 0); /* byte by byte: TLS follows */

		if (r <= 0)
			return -1;
		n++;
		buf[n] = 0;
		if (n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
			break;
	}
	if (strncmp(buf, "CONNECT ", 8))
		return -1;
	snprintf(proxy_line, sizeof(proxy_line), "%.*s",
		 (int)strcspn(buf, "\r\n"), buf);
	{
		const char *ok = "HTTP/1.1 200 Connection established\r\n\r\n";

		if (send(fd, ok, strlen(ok), 0) != (ssize_t)strlen(ok))
			return -1;
	}
	return 0;
}

/* One request as read off the connection. */
struct request {
	char *head; /* request line and headers, NUL-terminated */
	char *body; /* cl + 1 bytes, of which bl have been read */
	size_t bl;
	size_t cl; /* Content-Length */
	int n; /* 1-based request number over the server's life */
	const char *line; /* the script line that answers it */
};

/*
 * Read up to the end of the head into rq->head (MAX_HEAD + 1 bytes), then
 * allocate rq->body for Content-Length and keep what came with the head.
 * 0, or -1 on a broken connection, an endless head or an oversized body.
 */
static int read_head(SSL *ssl, struct request *rq)
{
	char val[256], *end = NULL;
	size_t hl = 0;

	while (!end && hl < MAX_HEAD) {
		int r = ssl_read_some(ssl, rq->head + hl, MAX_HEAD - hl);

		if (r < 0)
			return -1;
		hl += (size_t)r;
		rq->head[hl] = 0;
		end = strstr(rq->head, "\r\n\r\n");
	}
	if (!end)
		return -1;
	*end = 0;
	if (find_header(rq->head, "Content-Length", val, sizeof(val)))
		rq->cl = strtoul(val, NULL, 10);
	if (rq->cl > MAX_BODY)
		return -1;
	rq->body = malloc(rq->cl + 1);
	if (!rq->body)
		return -1;
	rq->bl = hl - (size_t)(end + 4 - rq->head);
	if (rq->bl > rq->cl)
		rq->bl = rq->cl;
	memcpy(rq->body, end + 4, rq->bl);
	return 0;
}

/* Read the rest of the body, as far as the client sends it. */
static void read_body(SSL *ssl, struct request *rq)
{
	while (rq->bl < rq->cl) {
		int r = ssl_read_some(ssl, rq->body + rq->bl, rq->cl - rq->bl);

		if (r < 0)
			break;
		rq->bl += (size_t)r;
	}
}

/*
 * The X-Fake-* lines logged after the head, for the tests to check: TLS
 * version, client certificate and its subject, the script action, whether
 * the body came whole, and the proxy's CONNECT line.
 */
static void fake_info(SSL *ssl, const struct request *rq, char *info,
		      size_t cap)
{
	X509 *peer = SSL_get_peer_certificate(ssl);

	snprintf(
		info, cap,
		"\r\nX-Fake-TLS: %s\r\nX-Fake-Client: %s\r\nX-Fake-Action: %s\r\nX-Fake-Body-Complete: %s\r\n",
		SSL_get_version(ssl), peer ? "cert" : "none", rq->line,
		rq->bl == rq->cl ? "yes" : "no");
	if (peer) {
		char subj[256];

		X509_NAME_oneline(X509_get_subject_name(peer), subj,
				  sizeof(subj));
		snprintf(info + strlen(info), cap - strlen(info),
			 "X-Fake-Client-Subject: %s\r\n", subj);
		X509_free(peer);
	}
	if (proxy_line[0])
		snprintf(info + strlen(info), cap - strlen(info),
			 "X-Fake-Proxy-Connect: %s\r\n", proxy_line);
}

/* Log the request as NNN.req (head + fake_info) and NNN.body (gunzipped). */
static void log_request(SSL *ssl, const char *logdir, const struct request *rq)
{
	char info[1024], val[256], *unz = NULL, *rec;
	size_t a, b, unzl = 0;

	fake_info(ssl, rq, info, sizeof(info));
	a = strlen(rq->head);
	b = strlen(info);
	rec = malloc(a + b + 1);
	if (rec) {
		memcpy(rec, rq->head, a);
		memcpy(rec + a, info, b + 1);
		write_file(logdir, rq->n, "req", rec, a + b);
		free(rec);
	}
	if (find_header(rq->head, "Content-Encoding", val, sizeof(val)) &&
	    !strcasecmp(val, "gzip") &&
	    gunzip(rq->body, rq->bl, &unz, &unzl) == 0)
		write_file(logdir, rq->n, "body", unz, unzl);
	else
		write_file(logdir, rq->n, "body", rq->body, rq->bl);
	free(unz);
}

/* "stall": wait until the client gives up (EOF) or 60 s pass. */
static void stall(SSL *ssl, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char junk[256];

	for (int i = 0; i < 600 && !stop; i++) {
		if (poll(&p, 1, 100) > 0 &&
		    recv(fd, junk, sizeof(junk), MSG_PEEK) <= 0)
			break;
		if (p.revents & (POLLHUP | POLLERR))
			break;
		if (p.revents & POLLIN &&
		    ssl_read_some(ssl, junk, sizeof(junk)) < 0)
			break;
	}
}

/* "CODE|Header: v;Header: v|BODY" (cut up in place): answer it, then close. */
static void answer_scripted(SSL *ssl, char *action)
{
	char *hdrs = strchr(action, '|'), *rbody = NULL, resp[20000];
	long code = strtol(action, NULL, 10);
	size_t off;

	if (hdrs) {
		*hdrs++ = 0;
		rbody = strchr(hdrs, '|');
		if (rbody)
			*rbody++ = 0;
	}
	if (!rbody)
		rbody = "";
	off = (size_t)snprintf(resp, sizeof(resp),
			       "HTTP/1.1 %ld Scripted\r\nConnection: close\r\n",
			       code);
	for (char *h = hdrs ? strtok(hdrs, ";") : NULL; h;
	     h = strtok(NULL, ";"))
		off += (size_t)snprintf(resp + off, sizeof(resp) - off,
					"%s\r\n", h);
	off += (size_t)snprintf(
		resp + off, sizeof(resp) - off,
		"Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		strlen(rbody), rbody);
	if (off < sizeof(resp))
		ssl_write_all(ssl, resp, off);
	SSL_shutdown(ssl);
}

/* Act out one script line (a copy, cut up in place) on the connection. */
static void answer(SSL *ssl, int fd, char *action)
{
	if (!strcmp(action, "stall")) {
		stall(ssl, fd);
	} else if (!strcmp(action, "close-mid-body")) {
		const char *r =
			"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			"Content-Length: 100\r\nConnection: close\r\n\r\n{\"ok\":tru";

		ssl_write_all(ssl, r, strlen(r));
	} else if (strcmp(action, "close") != 0) {
		answer_scripted(ssl, action);
	}
}

/* Serve one connection. Returns after it is closed. */
static void serve(SSL *ssl, int fd, const char *logdir, int *reqno)
{
	struct request rq = { .head = malloc(MAX_HEAD + 1) };
	char *action;

	if (!rq.head)
		return;
	if (read_head(ssl, &rq))
		goto out;
	rq.n = ++*reqno;
	rq.line = rq.n <= n_lines ? lines[rq.n - 1] :
				    "500||{\"error\":\"script exhausted\"}";
	action = strdup(rq.line);
	if (!action)
		goto out;
	if (strcmp(action, "close") != 0)
		read_body(ssl, &rq);
	rq.body[rq.bl] = 0;
	log_request(ssl, logdir, &rq);
	answer(ssl, fd, action);
	free(action);
out:
	free(rq.head);
	free(rq.body);
}

/* The command line. */
struct server_opts {
	const char *cert, *key, *portfile, *script, *logdir, *client_ca;
	bool proxy;
};

/* Fill @o from the command line; 0, or 2 after saying what was wrong. */
static int parse_args(int argc, char **argv, struct server_opts *o)
{
	for (int i = 1; i < argc; i += 2) {
		if (!strcmp(argv[i], "--proxy")) {
			o->proxy = true;
			i--; /* a flag without value */
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "fake_https: %s needs a value\n",
				argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--cert"))
			o->cert = argv[i + 1];
		else if (!strcmp(argv[i], "--key"))
			o->key = argv[i + 1];
		else if (!strcmp(argv[i], "--port-file"))
			o->portfile = argv[i + 1];
		else if (!strcmp(argv[i], "--script"))
			o->script = argv[i + 1];
		else if (!strcmp(argv[i], "--log-dir"))
			o->logdir = argv[i + 1];
		else if (!strcmp(argv[i], "--client-ca"))
			o->client_ca = argv[i + 1];
		else {
			fprintf(stderr, "fake_https: unknown option %s\n",
				argv[i]);
			return 2;
		}
	}
	if (!o->cert || !o->key || !o->portfile || !o->script || !o->logdir) {
		fprintf(stderr,
			"usage: fake_https --cert PEM --key PEM --port-file F --script F --log-dir D [--client-ca PEM] [--proxy]\n");
		return 2;
	}
	return 0;
}

/* The server's TLS context: TLS 1.2+, and client certificates if asked. */
static SSL_CTX *tls_context(const struct server_opts *o)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1)
		die("TLS setup");
	if (o->client_ca) {
		if (SSL_CTX_load_verify_locations(ctx, o->client_ca, NULL) != 1)
			die(o->client_ca);
		SSL_CTX_set_verify(
			ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
			NULL);
		/* Needed to resume sessions when client certificates are verified. */
		SSL_CTX_set_session_id_context(ctx,
					       (const unsigned char *)"twl", 3);
	}
	return ctx;
}

/*
 * Listen on 127.0.0.1 at a port the kernel picks, and publish the port in
 * @portfile (written whole, then renamed, so a reader never sees half).
 */
static int listen_loopback(const char *portfile)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char pbuf[32], tmp[4096];
	int lfd, one = 1;
	FILE *pf;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 16) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl))
		die("bind 127.0.0.1");
	snprintf(pbuf, sizeof(pbuf), "%u\n", ntohs(sa.sin_port));
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	pf = fopen(tmp, "w");
	if (!pf || fputs(pbuf, pf) < 0 || fclose(pf) || rename(tmp, portfile))
		die(portfile);
	return lfd;
}

/* Accept and serve connections one at a time until SIGTERM. */
static void serve_all(int lfd, SSL_CTX *ctx, const struct server_opts *o)
{
	int reqno = 0;

	while (!stop) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		int cfd;
		SSL *ssl;

		if (poll(&p, 1, 200) <= 0)
			continue;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		if (o->proxy && proxy_connect(cfd)) {
			close(cfd);
			continue;
		}
		ssl = SSL_new(ctx);
		if (ssl && SSL_set_fd(ssl, cfd) == 1 && SSL_accept(ssl) == 1)
			serve(ssl, cfd, o->logdir, &reqno);
		else
			ERR_clear_error(); /* e.g. the client refused our certificate */
		SSL_free(ssl);
		close(cfd);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sig = { .sa_handler = on_term };
	struct server_opts o = { 0 };
	SSL_CTX *ctx;
	int lfd;

	if (parse_args(argc, argv, &o))
		return 2;
	sigaction(SIGTERM, &sig, NULL);
	signal(SIGPIPE, SIG_IGN);
	load_script(o.script);
	ctx = tls_context(&o);
	lfd = listen_loopback(o.portfile);
	serve_all(lfd, ctx, &o);
	close(lfd);
	SSL_CTX_free(ctx);
	for (int i = 0; i < n_lines; i++)
		free(lines[i]);
	return 0;
}
