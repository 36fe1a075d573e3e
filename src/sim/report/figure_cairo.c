/*
 * The figure's outputs (include/rubick/figure.h): cairo's SVG and PDF
 * surfaces drawn into memory, then written out or handed over.
 *
 * Same bytes for the same figure: the layout depends only on the data;
 * cairo 1.16 numbers glyphs and clips per document, and the one id it takes
 * from a process-wide counter (the surface's) is renumbered. The ids are then
 * prefixed with a hash of the SVG itself, so two different
 * figures inlined in one HTML page never share an id (cairo names the glyphs
 * of every document glyph0-1, glyph0-2, ...: shared, one figure's text would
 * be drawn with the other's glyphs), and identical figures stay identical.
 * cairo 1.16's PDF carries a creation date: the current time, or
 * SOURCE_DATE_EPOCH (reproducible builds' convention) when that is set - then
 * the PDF's bytes are identical too. (cairo 1.16 writes a date set this way
 * without the "D:" prefix; pdfinfo and poppler read it all the same.)
 */
#include "sim/report/figure_draw.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct membuf {
	char *p;
	size_t len, cap;
	int oom;
};

static cairo_status_t mem_write(void *closure, const unsigned char *data, unsigned int length)
{
	struct membuf *b = closure;
	if (b->len + length + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		while (cap < b->len + length + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return CAIRO_STATUS_WRITE_ERROR;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, length);
	b->len += length;
	b->p[b->len] = '\0';
	return CAIRO_STATUS_SUCCESS;
}

/* SOURCE_DATE_EPOCH as cairo's ISO-8601 date into buf; 0 when unset or malformed. */
static int source_date(char *buf, size_t size)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	if (!e || !*e)
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(e, &end, 10);
	if (errno || *end || v < 0)
		return 0;
	time_t t = (time_t)v;
	struct tm tm;
	if (!gmtime_r(&t, &tm))
		return 0;
	return strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
}

enum kind { KIND_SVG, KIND_PDF };

/* Draw fig onto a fresh surface of `kind` writing into *out. */
static int render(const struct rk_figure *fig, enum kind kind, struct membuf *out,
                  struct rk_error *err)
{
	if (!fig)
		return rk_error_set(err, RK_EINVAL, "figure: no figure");
	/* Measure on a recording surface: the same unhinted metrics as the vector surfaces. */
	cairo_surface_t *ms = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
	cairo_t *mcr = cairo_create(ms);
	struct fig_layout L;
	fig_layout_compute(fig, mcr, &L);
	cairo_status_t st = cairo_status(mcr);
	cairo_destroy(mcr);
	cairo_surface_destroy(ms);
	if (st != CAIRO_STATUS_SUCCESS)
		return rk_error_set(err, st == CAIRO_STATUS_NO_MEMORY ? RK_ENOMEM : RK_EINTERNAL,
		                    "figure: cairo: %s", cairo_status_to_string(st));
	cairo_surface_t *s;
	if (kind == KIND_SVG) {
		s = cairo_svg_surface_create_for_stream(mem_write, out, L.w, L.h);
		cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
	} else {
		s = cairo_pdf_surface_create_for_stream(mem_write, out, L.w, L.h);
		char date[32];
		if (source_date(date, sizeof(date))) {
			cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATE_DATE, date);
			cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_MOD_DATE, date);
		}
		if (fig->title)
			cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, fig->title);
		cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "rubick");
	}
	cairo_t *cr = cairo_create(s);
	fig_draw(fig, cr, &L);
	st = cairo_status(cr);
	cairo_destroy(cr);
	cairo_surface_finish(s);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(s);
	cairo_surface_destroy(s);
	if (out->oom)
		return rk_error_set(err, RK_ENOMEM, "figure: out of memory");
	if (st != CAIRO_STATUS_SUCCESS)
		return rk_error_set(err, st == CAIRO_STATUS_NO_MEMORY ? RK_ENOMEM : RK_EINTERNAL,
		                    "figure: cairo: %s", cairo_status_to_string(st));
	return 0;
}

/* FNV-1a: the id prefix of an SVG, from its own bytes. */
static uint32_t fnv1a(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 16777619u;
	}
	return h;
}

/*
 * cairo 1.16 names a surface's group after the surface's process-wide serial
 * number (id="surface8" on the third figure a process draws): renumber such
 * names - "surface", "image" and "source" followed by digits, after a quote
 * or a '#' - in order of first appearance (the k-th distinct one becomes k),
 * so the text depends on the drawing alone. b is replaced; RK_ENOMEM.
 */
static int svg_canonical(struct membuf *b)
{
	static const char *const names[3] = {"surface", "image", "source"};
	long seen[3][64];
	int n_seen[3] = {0};
	struct membuf o = {0};
	for (size_t i = 0; i < b->len;) {
		int hit = -1;
		if (i > 0 && (b->p[i - 1] == '"' || b->p[i - 1] == '#'))
			for (int k = 0; k < 3 && hit < 0; k++)
				if (!strncmp(b->p + i, names[k], strlen(names[k])) &&
				    b->p[i + strlen(names[k])] >= '0' &&
				    b->p[i + strlen(names[k])] <= '9')
					hit = k;
		if (hit < 0) {
			if (mem_write(&o, (const unsigned char *)b->p + i, 1))
				break;
			i++;
			continue;
		}
		size_t nl = strlen(names[hit]);
		char *end;
		long v = strtol(b->p + i + nl, &end, 10);
		int k = 0;
		while (k < n_seen[hit] && seen[hit][k] != v)
			k++;
		if (k == n_seen[hit] && k < 64)
			seen[hit][n_seen[hit]++] = v;
		char tok[48];
		int tl = snprintf(tok, sizeof(tok), "%s%d", names[hit], k < 64 ? k + 1 : 0);
		if (k == 64) /* more than 64 distinct: keep cairo's own numbers */
			tl = snprintf(tok, sizeof(tok), "%s%ld", names[hit], v);
		if (mem_write(&o, (const unsigned char *)tok, (unsigned)tl))
			break;
		i = (size_t)(end - b->p);
	}
	if (o.oom || !o.p) {
		free(o.p);
		return RK_ENOMEM;
	}
	free(b->p);
	*b = o;
	return 0;
}

/*
 * cairo's SVG with every id and reference to one (id="X", href="#X",
 * url(#X)) prefixed "fHASH-", and the <?xml?> line dropped when `bare`
 * (inline in HTML). OUT: *svg (malloc'd), *len.
 */
static int svg_prefixed(const struct membuf *in, int bare, char **svg, size_t *len)
{
	static const char *const pats[3] = {"id=\"", "href=\"#", "url(#"};
	char prefix[16];
	snprintf(prefix, sizeof(prefix), "f%08x-", (unsigned)fnv1a(in->p, in->len));
	size_t pl = strlen(prefix), n = 0;
	const char *src = in->p;
	if (bare && !strncmp(src, "<?xml", 5)) {
		const char *nl = strchr(src, '\n');
		src = nl ? nl + 1 : src;
	}
	for (const char *p = src; *p; p++)
		for (int k = 0; k < 3; k++)
			if (!strncmp(p, pats[k], strlen(pats[k])))
				n++;
	size_t srclen = in->len - (size_t)(src - in->p);
	char *o = malloc(srclen + n * pl + 1);
	if (!o)
		return RK_ENOMEM;
	size_t w = 0;
	for (const char *p = src; *p;) {
		int hit = -1;
		for (int k = 0; k < 3 && hit < 0; k++)
			if (!strncmp(p, pats[k], strlen(pats[k])))
				hit = k;
		if (hit < 0) {
			o[w++] = *p++;
			continue;
		}
		size_t m = strlen(pats[hit]);
		memcpy(o + w, p, m);
		memcpy(o + w + m, prefix, pl);
		w += m + pl;
		p += m;
	}
	o[w] = '\0';
	*svg = o;
	*len = w;
	return 0;
}

static int svg_text(const struct rk_figure *fig, int bare, char **svg, size_t *len,
                    struct rk_error *err)
{
	struct membuf b = {0};
	int rc = render(fig, KIND_SVG, &b, err);
	if (!rc && (svg_canonical(&b) || svg_prefixed(&b, bare, svg, len)))
		rc = rk_error_set(err, RK_ENOMEM, "figure: out of memory");
	free(b.p);
	return rc;
}

int rk_figure_svg_text(const struct rk_figure *fig, char **svg, size_t *len, struct rk_error *err)
{
	if (!svg || !len)
		return rk_error_set(err, RK_EINVAL, "figure: no place for the SVG text");
	return svg_text(fig, 1, svg, len, err);
}

/* Write p[0..n) to path; on failure remove what was written and name path and reason. */
static int write_bytes(const char *path, const char *p, size_t n, struct rk_error *err)
{
	if (!path || !*path)
		return rk_error_set(err, RK_EINVAL, "figure: no output path");
	FILE *f = fopen(path, "wb");
	if (!f)
		return rk_error_set(err, RK_EIO, "%s: cannot create: %s", path, strerror(errno));
	int bad = fwrite(p, 1, n, f) != n || fflush(f) != 0;
	int e = errno;
	if (fclose(f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		remove(path);
		return rk_error_set(err, RK_EIO, "%s: write failed: %s", path, strerror(e));
	}
	return 0;
}

int rk_figure_write_svg(const struct rk_figure *fig, const char *path, struct rk_error *err)
{
	char *svg = NULL;
	size_t len = 0;
	int rc = svg_text(fig, 0, &svg, &len, err);
	if (!rc)
		rc = write_bytes(path, svg, len, err);
	free(svg);
	return rc;
}

int rk_figure_write_pdf(const struct rk_figure *fig, const char *path, struct rk_error *err)
{
	struct membuf b = {0};
	int rc = render(fig, KIND_PDF, &b, err);
	if (!rc)
		rc = write_bytes(path, b.p, b.len, err);
	free(b.p);
	return rc;
}
