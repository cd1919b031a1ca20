/*
 * svg.h - a tiny deterministic SVG writer shared by the level kinds' pictures
 * (core/<kind>/svg.c), and the few checked readers they use on a level
 * document.
 *
 * Determinism: the same document must give the same bytes on every machine,
 * so nothing here goes through printf's %f/%g (whose decimal point follows
 * the C locale and whose rounding of ties is the C library's). Numbers are
 * rounded once, with llround() on the value times 100 (IEEE arithmetic, the
 * same everywhere), and written as at most two decimals with trailing zeros
 * dropped: 12, 12.5, -0.25, never "-0". Text goes out XML-escaped.
 *
 * Errors: a write that cannot grow the buffer (or names a conversion the
 * writer does not have) marks it failed and every later write is dropped;
 * svg_end() reports the failure once. So the drawing code never checks an
 * individual write.
 */
#ifndef SF_SVG_H
#define SF_SVG_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

typedef struct svg_buf {
	char *text; /* NUL-terminated while not failed */
	size_t len, cap;
	int failed; /* 0, or SF_ENOMEM / SF_ERANGE (a bad conversion): writes are dropped */
} svg_buf;

/* Starts an empty buffer (no allocation yet). */
void svg_init(svg_buf *b);

/*
 * Appends `fmt` with its arguments. Conversions (no flags, widths or
 * precisions): %d an int, %f a double (two decimals at most, see above; NaN
 * and infinities are written as 0), %s a string copied as is (markup the
 * caller wrote), %t a string XML-escaped (& < > " ' become entities, so it is
 * safe in text and in a quoted attribute), %% a percent sign. Any other
 * conversion is a programming error: it marks the buffer failed with SF_ERANGE.
 */
void svg_put(svg_buf *b, const char *fmt, ...);

/*
 * Writes the XML declaration, the root <svg> element of `width` x `height`
 * user units (width, height and a viewBox from 0 0), a <title> with `title`
 * (escaped) and a white background, with the font and shape defaults the
 * pictures share (font-family sans-serif; no external fonts or images).
 */
void svg_begin(svg_buf *b, double width, double height, const char *title);

/*
 * Closes the root element and hands the text over: returns it (malloc'ed,
 * NUL-terminated, the caller frees it), or NULL with `err` set when any
 * write failed: SF_ENOMEM, or SF_ERANGE for a conversion svg_put() does not
 * have. The buffer is empty again afterwards.
 */
char *svg_end(svg_buf *b, sf_err *err);

/* Frees whatever the buffer holds (for error paths); the buffer is empty again. */
void svg_discard(svg_buf *b);

/*
 * The colour of `t` in 0..1 on the pictures' diverging scale (blue 0, pale
 * yellow 0.5, red 1; ColorBrewer RdYlBu), written as "#rrggbb" into out.
 * t outside 0..1 is clamped.
 */
void svg_ramp(double t, char out[8]);

/* A five-pointed star of outer radius r centred on (cx, cy), as a <path>. */
void svg_star(svg_buf *b, double cx, double cy, double r, const char *fill, const char *stroke);

/* ---- checked readers of a level document ---- */

/*
 * Checks that `level` is a JSON object whose "kind" is `kind` and returns 0,
 * or SF_EINVAL with a message saying what is wrong.
 */
int svg_check_kind(const json_t *level, const char *kind, sf_err *err);

/*
 * Member `key` of `obj` (NULL when obj is not an object) when it has JSON
 * type `type`; otherwise NULL with SF_EINVAL in err naming `where`.`key`.
 */
const json_t *svg_get(const json_t *obj, const char *key, json_type type, const char *where,
		      sf_err *err);

/*
 * Reads a finite number (integer or real) from `value` into *out and returns
 * 0, or SF_EINVAL naming `where` when it is not one or lies outside min..max.
 */
int svg_number(const json_t *value, double min, double max, const char *where, double *out,
	       sf_err *err);

/* The same for an integer in min..max. */
int svg_integer(const json_t *value, long long min, long long max, const char *where,
		long long *out, sf_err *err);

#endif
