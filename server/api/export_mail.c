// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export as mail: one RFC 5322 message per mailing list, the
 * list, Cc and thread taken from the catalog's routes and Message-IDs
 * (schema/catalog.json), never from this file. Pure: no I/O.
 *
 * Every header value is made of catalog text and stored text passed
 * through twl_escape_unit() first, so a CR or LF in any of them is the
 * four characters "\x0d" by the time it reaches a header: nothing stored
 * can add, cut or end a header. Values that are not ASCII after that are
 * RFC 2047 encoded words; long values are folded at 78 columns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "api/escape.h"
#include "api/export_json.h"
#include "api/export.h"

/* Columns a header line is folded at (RFC 5322's recommended limit). */
#define LINE_COLS 78
/* Longest encoded word (RFC 2047). */
#define WORD_MAX 75
/* Most bytes of one escaped header value. */
#define VALUE_MAX 1024
/* Most bytes of one mailbox, which is never folded inside (RFC 5322 lines
 * end before 998 bytes). */
#define MAILBOX_MAX 512

const char *twl_export_list_of(const char *id)
{
	const struct twl_feature *f = twl_catalog_find(id);

	if (!f || !f->route || !f->route->to || !f->route->to[0])
		return NULL;
	return f->route->to[0];
}

/* ---- header values --------------------------------------------------- */

/* @s with every unit through twl_escape_unit() into @out (capped). */
static void escape_value(const char *s, char *out, size_t cap)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), in, bl, len = 0;
	char tmp[TWL_ESCAPE_UNIT_MAX];

	for (; n; u += in, n -= in) {
		twl_escape_unit(u, n, &in, tmp, &bl);
		if (len + bl >= cap)
			break;
		memcpy(out + len, tmp, bl);
		len += bl;
	}
	out[len] = '\0';
}

static bool is_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

/* A header being written: its buffer and the column of its last line. */
struct hdr {
	struct twl_buf *b;
	size_t col;
	bool any; /* a word written after the name */
};

static int hdr_start(struct hdr *h, const char *name)
{
	h->col = strlen(name) + 1;
	h->any = false;
	return twl_buf_printf(h->b, "%s:", name);
}

/* " word", on a folded line of its own when it would pass LINE_COLS. */
static int hdr_word(struct hdr *h, const char *w, size_t n)
{
	int rc;

	if (h->col + 1 + n > LINE_COLS && h->any) {
		rc = twl_buf_append(h->b, "\r\n", 2);
		h->col = 0;
	} else {
		rc = 0;
	}
	if (!rc)
		rc = twl_buf_append(h->b, " ", 1);
	if (!rc)
		rc = twl_buf_append(h->b, w, n);
	h->col += 1 + n;
	h->any = true;
	return rc;
}

static int hdr_end(struct hdr *h)
{
	return twl_buf_append(h->b, "\r\n", 2);
}

/* Bytes of the UTF-8 sequence @s starts (escaped text: always valid). */
static size_t utf8_len(unsigned char c)
{
	return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
}

/*
 * @s (escaped, not ASCII) as RFC 2047 "Q" encoded words, never splitting
 * a character; whitespace between encoded words is not part of the text,
 * so a space is "_" inside a word.
 */
static int hdr_encoded(struct hdr *h, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char w[WORD_MAX + 1];
	size_t wl = 0, k, n;
	int rc = 0;

	while (*s) {
		char unit[16];
		size_t ul = 0;

		n = utf8_len((unsigned char)*s);
		for (k = 0; k < n && s[k]; k++) {
			unsigned char c = (unsigned char)s[k];

			if (c == ' ')
				unit[ul++] = '_';
			else if ((c >= 'a' && c <= 'z') ||
				 (c >= 'A' && c <= 'Z') ||
				 (c >= '0' && c <= '9') || strchr("!*+-/", c))
				unit[ul++] = (char)c;
			else {
				unit[ul++] = '=';
				unit[ul++] = hex[c >> 4];
				unit[ul++] = hex[c & 15];
			}
		}
		s += k;
		if (wl && wl + ul + 2 > WORD_MAX) {
			memcpy(w + wl, "?=", 2);
			TRY(hdr_word(h, w, wl + 2));
			wl = 0;
		}
		if (!wl) {
			memcpy(w, "=?utf-8?q?", 10);
			wl = 10;
		}
		memcpy(w + wl, unit, ul);
		wl += ul;
	}
	if (wl) {
		memcpy(w + wl, "?=", 2);
		TRY(hdr_word(h, w, wl + 2));
	}
out:
	return rc;
}

/* Unstructured text (Subject): escaped, words folded, encoded if needed. */
static int hdr_text(struct hdr *h, const char *s)
{
	char v[VALUE_MAX];
	const char *p, *e;
	int rc = 0;

	escape_value(s, v, sizeof(v));
	if (!is_ascii(v))
		return hdr_encoded(h, v);
	for (p = v; *p; p = e) {
		while (*p == ' ')
			p++;
		e = p + strcspn(p, " ");
		if (e > p)
			TRY(hdr_word(h, p, (size_t)(e - p)));
	}
out:
	return rc;
}

/* An addr-spec: printable ASCII, no space, no angle brackets, one '@'. */
static bool addr_spec_ok(const char *a, size_t n)
{
	const char *at = memchr(a, '@', n);
	size_t i;

	if (!n || !at || at == a || at == a + n - 1 ||
	    memchr(at + 1, '@', n - (size_t)(at + 1 - a)))
		return false;
	for (i = 0; i < n; i++)
		if (a[i] <= ' ' || a[i] > '~' || strchr("<>()[],;:\\\"", a[i]))
			return false;
	return true;
}

/*
 * "\"@name\" <@addr>," (quotes and backslashes in @name escaped; no
 * name part when @name is empty; no comma when @last) into @mb: one unit
 * the folding keeps on one line. -EINVAL when it would not fit.
 */
static int mailbox_word(char *mb, size_t cap, const char *name,
			const char *addr, size_t addr_len, bool last)
{
	size_t i, len = 0;

	if (name[0]) {
		mb[len++] = '"';
		for (i = 0; name[i] && len + 2 < cap; i++) {
			if (name[i] == '"' || name[i] == '\\')
				mb[len++] = '\\';
			mb[len++] = name[i];
		}
		if (name[i] || len + 2 >= cap)
			return -EINVAL;
		mb[len++] = '"';
		mb[len++] = ' ';
	}
	if ((size_t)snprintf(mb + len, cap - len, "<%.*s>%s", (int)addr_len,
			     addr, last ? "" : ",") >= cap - len)
		return -EINVAL;
	return 0;
}

/*
 * One address, "Name <a@b>", "\"Name\" <a@b>" or "a@b", as a mailbox:
 * a name that is not ASCII encoded, one with specials quoted. -EINVAL
 * when the address part is not a plain addr-spec.
 */
static int hdr_mailbox(struct hdr *h, const char *addr, bool last)
{
	char v[VALUE_MAX], name[VALUE_MAX], mb[MAILBOX_MAX];
	char *lt, *gt, *nm = name;
	size_t nl;
	int rc = 0;

	escape_value(addr, v, sizeof(v));
	lt = strrchr(v, '<');
	gt = lt ? strchr(lt, '>') : NULL;
	if (!lt) {
		nl = strlen(v);
		if (!addr_spec_ok(v, nl) || nl + 2 > sizeof(mb))
			return -EINVAL;
		memcpy(mb, v, nl);
		if (!last)
			mb[nl++] = ',';
		return hdr_word(h, mb, nl);
	}
	if (!gt || gt[1] || !addr_spec_ok(lt + 1, (size_t)(gt - lt - 1)))
		return -EINVAL;
	*lt = '\0';
	snprintf(name, sizeof(name), "%s", v);
	nl = strlen(name);
	while (nl && name[nl - 1] == ' ')
		name[--nl] = '\0';
	while (*nm == ' ')
		nm++, nl--;
	if (nl >= 2 && nm[0] == '"' && nm[nl - 1] == '"') {
		nm[nl - 1] = '\0';
		nm++;
	}
	if (*nm && !is_ascii(nm)) {
		TRY(hdr_encoded(h, nm));
		nm[0] = '\0';
	}
	TRY(mailbox_word(mb, sizeof(mb), nm, lt + 1, (size_t)(gt - lt - 1),
			 last));
	TRY(hdr_word(h, mb, strlen(mb)));
out:
	return rc;
}

/* The addr-spec of @a ("Name <x@y>" -> x@y) into @out, for comparing. */
static void addr_of(const char *a, char *out, size_t cap)
{
	const char *lt = strrchr(a, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (lt && gt)
		snprintf(out, cap, "%.*s", (int)(gt - lt - 1), lt + 1);
	else
		snprintf(out, cap, "%s", a);
}

/* ---- one message ----------------------------------------------------- */

/* The features of @data in use that go to @list, in data order. */
struct list_feats {
	const struct twl_feature **f;
	size_t n;
};

/* Whether address @a is in @have (by addr-spec, case-insensitively). */
static bool addr_in(const char *const *have, size_t n, const char *a)
{
	char x[VALUE_MAX], y[VALUE_MAX];
	size_t i;

	addr_of(a, x, sizeof(x));
	for (i = 0; i < n; i++) {
		addr_of(have[i], y, sizeof(y));
		if (!strcasecmp(x, y))
			return true;
	}
	return false;
}

/* Cc: every address of the features' routes but the list, once each. */
static int hdr_cc(struct twl_buf *b, const char *list,
		  const struct list_feats *lf)
{
	const char **cc;
	size_t n = 0, i, cap = 1;
	const char *const *a;
	struct hdr h = { b, 0, false };
	int rc = 0;

	for (i = 0; i < lf->n; i++) {
		for (a = lf->f[i]->route->to; *a; a++)
			cap++;
		for (a = lf->f[i]->route->cc; a && *a; a++)
			cap++;
	}
	cc = calloc(cap, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	cc[n++] = list;
	for (i = 0; i < lf->n; i++) {
		for (a = lf->f[i]->route->to; *a; a++)
			if (!addr_in(cc, n, *a))
				cc[n++] = *a;
		for (a = lf->f[i]->route->cc; a && *a; a++)
			if (!addr_in(cc, n, *a))
				cc[n++] = *a;
	}
	if (n > 1) {
		TRY(hdr_start(&h, "Cc"));
		for (i = 1; i < n; i++)
			TRY(hdr_mailbox(&h, cc[i], i + 1 == n));
		TRY(hdr_end(&h));
	}
out:
	free(cc);
	return rc;
}

/* A Message-ID as the catalog keeps it (no <>): one plain token. */
static bool msgid_ok(const char *id)
{
	return id && id[0] && addr_spec_ok(id, strlen(id));
}

/* The thread most of the features belong to (first on a tie), or NULL. */
static const char *pick_thread(const struct list_feats *lf)
{
	const char *best = NULL;
	size_t i, j, votes, best_votes = 0;

	for (i = 0; i < lf->n; i++) {
		const char *t = lf->f[i]->in_reply_to;

		if (!msgid_ok(t))
			continue;
		for (votes = 0, j = 0; j < lf->n; j++)
			if (lf->f[j]->in_reply_to &&
			    !strcmp(lf->f[j]->in_reply_to, t))
				votes++;
		if (votes > best_votes) {
			best = t;
			best_votes = votes;
		}
	}
	return best;
}

/* Whether @id is among the references before feature @upto's entry @k. */
static bool ref_seen(const struct list_feats *lf, const char *root, size_t upto,
		     size_t k, const char *id)
{
	size_t i, j;

	if (!strcmp(id, root))
		return true;
	for (i = 0; i <= upto; i++)
		for (j = 0; lf->f[i]->references[j] && (i < upto || j < k); j++)
			if (!strcmp(lf->f[i]->references[j], id))
				return true;
	return false;
}

/* In-Reply-To the thread's cover letter; References it, then each
 * feature's own Message-IDs, once each. */
static int hdr_thread(struct twl_buf *b, const struct list_feats *lf)
{
	const char *root = pick_thread(lf);
	struct hdr h = { b, 0, false };
	char id[VALUE_MAX];
	size_t i, k;
	int rc = 0;

	if (!root)
		return 0;
	snprintf(id, sizeof(id), "<%s>", root);
	TRY(hdr_start(&h, "In-Reply-To"));
	TRY(hdr_word(&h, id, strlen(id)));
	TRY(hdr_end(&h));
	TRY(hdr_start(&h, "References"));
	TRY(hdr_word(&h, id, strlen(id)));
	for (i = 0; i < lf->n; i++) {
		for (k = 0; lf->f[i]->references[k]; k++) {
			const char *r = lf->f[i]->references[k];

			if (!msgid_ok(r) || ref_seen(lf, root, i, k, r))
				continue;
			snprintf(id, sizeof(id), "<%s>", r);
			TRY(hdr_word(&h, id, strlen(id)));
		}
	}
	TRY(hdr_end(&h));
out:
	return rc;
}

/* The Subject's value naming the features, cut with "and N more" to fit. */
static void subject_of(const struct list_feats *lf, char *out, size_t cap)
{
	static const char head[] = "cgroup v1 features in use on our fleet: ";
	size_t keep, i, len;

	if (cap > TWL_EXPORT_SUBJECT_MAX + 1)
		cap = TWL_EXPORT_SUBJECT_MAX + 1;
	for (keep = lf->n; keep; keep--) {
		len = (size_t)snprintf(out, cap, "%s", head);
		for (i = 0; i < keep && len < cap; i++)
			len += (size_t)snprintf(out + len, cap - len, "%s%s",
						i ? ", " : "", lf->f[i]->id);
		if (keep < lf->n && len < cap)
			len += (size_t)snprintf(out + len, cap - len,
						" and %zu more", lf->n - keep);
		if (len < cap)
			return;
	}
	snprintf(out, cap, "cgroup v1 features in use on our fleet: %zu",
		 lf->n);
}

/* RFC 5322 date-time of @t in UTC (no locale). */
static void rfc5322_date(int64_t t, char *out, size_t cap)
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed",
					    "Thu", "Fri", "Sat" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr",
					      "May", "Jun", "Jul", "Aug",
					      "Sep", "Oct", "Nov", "Dec" };
	time_t tt = (time_t)(t > 0 ? t : 0);
	struct tm tm;

	if (!gmtime_r(&tt, &tm))
		memset(&tm, 0, sizeof(tm));
	snprintf(out, cap, "%s, %02d %s %04d %02d:%02d:%02d +0000",
		 days[tm.tm_wday % 7], tm.tm_mday, months[tm.tm_mon % 12],
		 tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Every header of the message to @list, ending in the empty line. */
static int headers(struct twl_buf *b, const json_t *data, const char *from,
		   const char *list, const struct list_feats *lf,
		   const char *subject)
{
	struct hdr h = { b, 0, false };
	char date[64];
	int rc = 0;

	TRY(hdr_start(&h, "From"));
	TRY(hdr_mailbox(&h, from, true));
	TRY(hdr_end(&h));
	TRY(hdr_start(&h, "To"));
	TRY(hdr_mailbox(&h, list, true));
	TRY(hdr_end(&h));
	TRY(hdr_cc(b, list, lf));
	TRY(hdr_start(&h, "Subject"));
	TRY(hdr_text(&h, subject));
	TRY(hdr_end(&h));
	rfc5322_date(json_integer_value(json_object_get(data, "generated")),
		     date, sizeof(date));
	TRY(twl_buf_printf(b, "Date: %s\r\n", date));
	TRY(hdr_thread(b, lf));
	TRY(twl_buf_printf(b, "MIME-Version: 1.0\r\n"
			      "Content-Type: text/plain; charset=utf-8\r\n"
			      "Content-Transfer-Encoding: 8bit\r\n\r\n"));
out:
	return rc;
}

char *twl_export_file_stem(const char *list)
{
	char *s = strdup(list), *p;

	for (p = s; p && *p; p++)
		if (!strchr("@._-", *p) && !(*p >= 'a' && *p <= 'z') &&
		    !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9'))
			*p = '_';
	if (s && s[0] == '.')
		s[0] = '_';
	return s;
}

/* The message to @list about the features in @lf into @m. */
static int one_message(const json_t *data, const char *from, const char *list,
		       const struct list_feats *lf,
		       struct twl_export_message *m)
{
	struct twl_buf body, eml;
	char subject[TWL_EXPORT_SUBJECT_MAX + 1];
	size_t i;
	int rc = 0;

	twl_buf_init(&body, TWL_EXPORT_MAX_BYTES);
	twl_buf_init(&eml, TWL_EXPORT_MAX_BYTES);
	subject_of(lf, subject, sizeof(subject));
	TRY(twl_export_body(data, list, &body));
	TRY(headers(&eml, data, from, list, lf, subject));
	for (i = 0; i < body.len; i++)
		TRY(body.data[i] == '\n' ?
			    twl_buf_append(&eml, "\r\n", 2) :
			    twl_buf_append(&eml, body.data + i, 1));
	m->list = strdup(list);
	m->name = twl_export_file_stem(list);
	m->subject = strdup(subject);
	if (!m->list || !m->name || !m->subject) {
		rc = -ENOMEM;
		goto out;
	}
	m->body = body.data;
	m->body_len = body.len;
	m->eml = eml.data;
	m->eml_len = eml.len;
	return 0;
out:
	twl_buf_fini(&body);
	twl_buf_fini(&eml);
	return rc;
}

/* The catalog features of @data in use that go to @list. */
static int collect(const json_t *feats, const char *list, struct list_feats *lf)
{
	const json_t *f;
	size_t i;

	lf->n = 0;
	json_array_foreach(feats, i, f)
	{
		const char *id = json_string_value(json_object_get(f, "id"));
		const char *to = twl_export_list_of(id);

		if (!json_is_object(f))
			return -EINVAL;
		if (!to || strcmp(to, list) ||
		    (json_integer_value(json_object_get(f, "hosts_using")) <=
			     0 &&
		     json_integer_value(json_object_get(f, "uses")) <= 0))
			continue;
		if (lf->n < twl_catalog_count())
			lf->f[lf->n++] = twl_catalog_find(id);
	}
	return 0;
}

/* Whether the catalog's routes name @list before route @upto. */
static bool list_named_before(size_t upto, const char *list)
{
	size_t i;

	for (i = 0; i < upto; i++)
		if (!strcmp(twl_catalog_route_at(i)->to[0], list))
			return true;
	return false;
}

int twl_export_messages(const json_t *data, const char *from,
			struct twl_export_message **out, size_t *n)
{
	size_t nr = twl_catalog_route_count(), i;
	const json_t *feats = json_object_get(data, "features");
	struct list_feats lf = { 0 };
	struct twl_export_message *m;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!json_is_object(data) || !json_is_array(feats))
		return -EINVAL;
	m = calloc(nr ? nr : 1, sizeof(*m));
	lf.f = calloc(twl_catalog_count() + 1, sizeof(*lf.f));
	if (!m || !lf.f) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		const char *list = twl_catalog_route_at(i)->to[0];

		if (!list || list_named_before(i, list))
			continue;
		TRY(collect(feats, list, &lf));
		if (lf.n)
			TRY(one_message(
				data, from ? from : TWL_EXPORT_FROM_PLACEHOLDER,
				list, &lf, &m[(*n)++]));
	}
out:
	free(lf.f);
	if (rc) {
		twl_export_messages_free(m, *n);
		*n = 0;
		return rc;
	}
	*out = m;
	return 0;
}

void twl_export_messages_free(struct twl_export_message *m, size_t n)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < n; i++) {
		free(m[i].list);
		free(m[i].name);
		free(m[i].subject);
		free(m[i].eml);
		free(m[i].body);
	}
	free(m);
}
