/*
 * svg.c - see svg.h.
 *
 * The writer is a growable string with one formatter of its own; it knows
 * nothing about what is drawn. Growth doubles the capacity, so a picture of
 * n bytes costs O(n) copying; pictures are tens of kilobytes.
 */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

void svg_init(svg_buf *b)
{
	memset(b, 0, sizeof *b);
}

/* Makes room for `n` more bytes and the NUL; returns 0 or -1 (buffer failed). */
static int reserve(svg_buf *b, size_t n)
{
	if (b->failed)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n + 1)
		cap *= 2;
	char *t = realloc(b->text, cap);
	if (!t) {
		b->failed = SF_ENOMEM;
		return -1;
	}
	b->text = t;
	b->cap = cap;
	return 0;
}

static void put_bytes(svg_buf *b, const char *s, size_t n)
{
	if (reserve(b, n))
		return;
	memcpy(b->text + b->len, s, n);
	b->len += n;
	b->text[b->len] = '\0';
}

static void put_escaped(svg_buf *b, const char *s)
{
	for (const char *p = s; *p; p++) {
		const char *ent = NULL;
		switch (*p) {
		case '&':
			ent = "&amp;";
			break;
		case '<':
			ent = "&lt;";
			break;
		case '>':
			ent = "&gt;";
			break;
		case '"':
			ent = "&quot;";
			break;
		case '\'':
			ent = "&apos;";
			break;
		default:
			break;
		}
		if (ent) {
			put_bytes(b, ent, strlen(ent));
		} else if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n') {
			put_bytes(b, "?", 1); /* control characters are not XML */
		} else {
			put_bytes(b, p, 1);
		}
	}
}

/* Writes v >= 0 in decimal. */
static void put_uint(svg_buf *b, unsigned long long v)
{
	char digits[24];
	int n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char out[24];
	for (int i = 0; i < n; i++)
		out[i] = digits[n - 1 - i];
	put_bytes(b, out, (size_t)n);
}

static void put_number(svg_buf *b, double x)
{
	if (!isfinite(x))
		x = 0;
	if (x > 1e12)
		x = 1e12;
	if (x < -1e12)
		x = -1e12;
	long long hundredths = llround(x * 100.0);
	if (hundredths < 0)
		put_bytes(b, "-", 1);
	unsigned long long u =
		hundredths < 0 ? (unsigned long long)-hundredths : (unsigned long long)hundredths;
	put_uint(b, u / 100);
	unsigned frac = (unsigned)(u % 100);
	if (frac) {
		char d[3] = { '.', (char)('0' + frac / 10), (char)('0' + frac % 10) };
		put_bytes(b, d, frac % 10 ? 3 : 2);
	}
}

void svg_put(svg_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *run = fmt;
	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		put_bytes(b, run, (size_t)(p - run));
		p++;
		switch (*p) {
		case 'd': {
			int v = va_arg(ap, int);
			if (v < 0)
				put_bytes(b, "-", 1);
			put_uint(b,
				 v < 0 ? (unsigned long long)-(long long)v : (unsigned long long)v);
			break;
		}
		case 'f':
			put_number(b, va_arg(ap, double));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			put_bytes(b, s, strlen(s));
			break;
		}
		case 't':
			put_escaped(b, va_arg(ap, const char *));
			break;
		case '%':
			put_bytes(b, "%", 1);
			break;
		default:
			if (!b->failed)
				b->failed = SF_ERANGE; /* a conversion this writer does not have */
			va_end(ap);
			return;
		}
		run = p + 1;
	}
	put_bytes(b, run, strlen(run));
	va_end(ap);
}

void svg_begin(svg_buf *b, double width, double height, const char *title)
{
	svg_put(b,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%f\" height=\"%f\" "
		"viewBox=\"0 0 %f %f\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<title>%t</title>\n"
		"<rect width=\"%f\" height=\"%f\" fill=\"#ffffff\"/>\n",
		width, height, width, height, title, width, height);
}

char *svg_end(svg_buf *b, sf_err *err)
{
	svg_put(b, "</svg>\n");
	if (b->failed == SF_ERANGE) {
		svg_discard(b);
		sf_err_set(err, SF_ERANGE, "the picture writer met a conversion it does not have");
		return NULL;
	}
	if (b->failed || !b->text) {
		svg_discard(b);
		sf_err_set(err, SF_ENOMEM, "out of memory drawing the picture");
		return NULL;
	}
	char *text = b->text;
	svg_init(b);
	return text;
}

void svg_discard(svg_buf *b)
{
	free(b->text);
	svg_init(b);
}

void svg_ramp(double t, char out[8])
{
	/* RdYlBu, 5 classes, from blue (calm) to red (intense). */
	static const unsigned char stops[5][3] = {
		{ 0x2c, 0x7b, 0xb6 }, { 0xab, 0xd9, 0xe9 }, { 0xff, 0xff, 0xbf },
		{ 0xfd, 0xae, 0x61 }, { 0xd7, 0x19, 0x1c },
	};
	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	double at = t * 4;
	int i = (int)at;
	if (i > 3)
		i = 3;
	double f = at - i;
	static const char hex[] = "0123456789abcdef";
	out[0] = '#';
	for (int c = 0; c < 3; c++) {
		long v = lround(stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f);
		out[1 + 2 * c] = hex[(v >> 4) & 15];
		out[2 + 2 * c] = hex[v & 15];
	}
	out[7] = '\0';
}

void svg_star(svg_buf *b, double cx, double cy, double r, const char *fill, const char *stroke)
{
	/* The ten corners of a star, point up, inner radius 0.45 r: precomputed
	 * unit coordinates, so no trigonometry differs between libms. */
	static const double unit[10][2] = {
		{ 0, -1 },
		{ 0.26450, -0.36406 },
		{ 0.95106, -0.30902 },
		{ 0.42798, 0.13906 },
		{ 0.58779, 0.80902 },
		{ 0, 0.45 },
		{ -0.58779, 0.80902 },
		{ -0.42798, 0.13906 },
		{ -0.95106, -0.30902 },
		{ -0.26450, -0.36406 },
	};
	svg_put(b, "<path d=\"");
	for (int i = 0; i < 10; i++)
		svg_put(b, "%s%f %f", i ? " L" : "M", cx + unit[i][0] * r, cy + unit[i][1] * r);
	svg_put(b, " Z\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1\" stroke-linejoin=\"round\"/>",
		fill, stroke);
}

/* ---- readers ---- */

int svg_check_kind(const json_t *level, const char *kind, sf_err *err)
{
	if (!json_is_object(level))
		return sf_err_set(err, SF_EINVAL, "the level is not a JSON object");
	const char *k = json_string_value(json_object_get(level, "kind"));
	if (!k)
		return sf_err_set(err, SF_EINVAL, "kind: missing or not a string");
	if (strcmp(k, kind))
		return sf_err_set(err, SF_EINVAL, "kind: '%.64s' is not '%s'", k, kind);
	return 0;
}

const json_t *svg_get(const json_t *obj, const char *key, json_type type, const char *where,
		      sf_err *err)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	int ok = v && (json_typeof(v) == type || (type == JSON_REAL && json_is_number(v)) ||
		       (type == JSON_TRUE && json_is_boolean(v)));
	if (!ok) {
		sf_err_set(err, SF_EINVAL, "%s%s%s: missing or not %s", where, *where ? "." : "",
			   key, sf_json_type_name(type));
		return NULL;
	}
	return v;
}

int svg_number(const json_t *value, double min, double max, const char *where, double *out,
	       sf_err *err)
{
	double v = json_number_value(value);
	if (!json_is_number(value) || !isfinite(v))
		return sf_err_set(err, SF_EINVAL, "%s: missing or not a number", where);
	if (v < min || v > max)
		return sf_err_set(err, SF_EINVAL, "%s: %.6g is out of range (allowed: %g..%g)",
				  where, v, min, max);
	*out = v;
	return 0;
}

int svg_integer(const json_t *value, long long min, long long max, const char *where,
		long long *out, sf_err *err)
{
	if (!json_is_integer(value))
		return sf_err_set(err, SF_EINVAL, "%s: missing or not an integer", where);
	long long v = json_integer_value(value);
	if (v < min || v > max)
		return sf_err_set(err, SF_EINVAL, "%s: %lld is out of range (allowed: %lld..%lld)",
				  where, v, min, max);
	*out = v;
	return 0;
}
