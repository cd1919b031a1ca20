/*
 * svg.c - pictures of lattice levels and evaluations.
 *
 * Both pictures have the same two panels, so one renderer draws a `picture`
 * that the two readers fill in from their documents:
 *  - left, a fold of the chain: for a level the three-star fold
 *    (solution.band_folds.three; the best fold when the level has no bands)
 *    or the fold of the star asked for (lat_level_svg_star),
 *    for an evaluation the first fold reaching the best score. H residues
 *    are orange discs, P residues blue ones, numbered from 1; bonds are
 *    thick dark lines and HH contacts dotted red ones. A square fold lies on
 *    its grid. A cubic fold is drawn in an oblique projection (x right, y up,
 *    z up and to the right at 0.55 of a unit, 36 degrees): those constants
 *    keep every two lattice points of a small fold at least 0.336 of a unit
 *    apart on the page (the best of a brute-force search over lengths and
 *    angles, for offsets up to 8 in x and y and 6 in z), so the discs, 0.17
 *    of a unit in radius, at most touch; the drawing goes back to front
 *    (painter's order on z), farther residues paler, inside the fold's
 *    bounding box as a dashed wire frame, with an axis key.
 *  - right, the score histogram like the paper's Figure 4: one bar per
 *    score, heights on a log scale (count + 1, so a single conformation
 *    still shows), the three star bands shaded in deepening gold behind the
 *    bars with one, two and three stars above them, the drawn fold's score
 *    marked under its bar.
 *
 * Everything comes from the document alone: the fold is walked here from
 * its letters (R L U D F B), its contacts counted here, and every field is
 * checked before anything is drawn, so a bad document is SF_EINVAL with the
 * field's name, never a crash.
 */
#include "svg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../svg.h"
#include "lattice.h"

#define PIC_W 840
#define PIC_H 480

/* The oblique projection of z (see the design note). */
#define Z_DX 0.44496
#define Z_DY 0.32328

typedef struct chain {
	int n;
	int cubic;
	char seq[LAT_MAX_LEN + 1];
	int at[LAT_MAX_LEN][3];
} chain;

typedef struct picture {
	char title[96];
	char subtitle[160];
	char caption[96]; /* above the fold */
	chain fold;
	double hist[LAT_MAX_SCORE + 1]; /* conformations per score; estimates are not integers */
	int nhist;
	int bands; /* 1 when t[] holds the three thresholds */
	int t[3];
} picture;

static const unsigned char H_RGB[3] = { 0xf4, 0x8c, 0x2a };
static const unsigned char P_RGB[3] = { 0x3a, 0x7b, 0xd5 };

/* ---- reading ---- */

static int read_lattice(const json_t *obj, const char *where, chain *c, sf_err *err)
{
	const json_t *v = svg_get(obj, "lattice", JSON_STRING, where, err);
	if (!v)
		return SF_EINVAL;
	const char *name = json_string_value(v);
	if (strcmp(name, "square") && strcmp(name, "cubic"))
		return sf_err_set(err, SF_EINVAL, "%s.lattice: '%.32s' is not square or cubic",
				  where, name);
	c->cubic = !strcmp(name, "cubic");
	return 0;
}

static int read_sequence(const json_t *obj, const char *where, chain *c, sf_err *err)
{
	const json_t *v = svg_get(obj, "sequence", JSON_STRING, where, err);
	if (!v)
		return SF_EINVAL;
	const char *s = json_string_value(v);
	size_t n = strlen(s);
	if (n < 1 || n > LAT_MAX_LEN)
		return sf_err_set(err, SF_EINVAL, "%s.sequence: %zu residues (allowed: 1..%d)",
				  where, n, LAT_MAX_LEN);
	for (size_t i = 0; i < n; i++)
		if (s[i] != 'H' && s[i] != 'P')
			return sf_err_set(err, SF_EINVAL, "%s.sequence: residue %zu is not H or P",
					  where, i + 1);
	memcpy(c->seq, s, n + 1);
	c->n = (int)n;
	return 0;
}

/* Walks `fold` (the chain's bonds) into c->at, checking it. */
static int read_fold(const json_t *v, const char *where, chain *c, sf_err *err)
{
	const char *f = json_string_value(v);
	if (!f)
		return sf_err_set(err, SF_EINVAL, "%s: missing or not a string", where);
	if ((int)strlen(f) != c->n - 1)
		return sf_err_set(err, SF_EINVAL, "%s: %zu bonds for %d residues (allowed: %d)",
				  where, strlen(f), c->n, c->n - 1);
	memset(c->at, 0, sizeof c->at);
	for (int i = 1; i < c->n; i++) {
		static const char letters[] = "RLUDFB";
		const char *l = strchr(letters, f[i - 1]);
		if (!l || !f[i - 1] || (l - letters >= 4 && !c->cubic))
			return sf_err_set(err, SF_EINVAL, "%s: bond %d is '%c' (allowed: %s)",
					  where, i, f[i - 1], c->cubic ? "R L U D F B" : "R L U D");
		int axis = (int)(l - letters) / 2, sign = (l - letters) % 2 ? -1 : 1;
		memcpy(c->at[i], c->at[i - 1], sizeof c->at[i]);
		c->at[i][axis] += sign;
		for (int j = 0; j < i; j++)
			if (!memcmp(c->at[i], c->at[j], sizeof c->at[i]))
				return sf_err_set(err, SF_EINVAL,
						  "%s: residue %d lands on residue %d", where,
						  i + 1, j + 1);
	}
	return 0;
}

static int read_histogram(const json_t *obj, const char *where, picture *p, sf_err *err)
{
	const json_t *h = svg_get(obj, "histogram", JSON_ARRAY, where, err);
	if (!h)
		return SF_EINVAL;
	size_t n = json_array_size(h);
	if (n < 1 || n > LAT_MAX_SCORE + 1)
		return sf_err_set(err, SF_EINVAL, "%s.histogram: %zu entries (allowed: 1..%d)",
				  where, n, LAT_MAX_SCORE + 1);
	for (size_t i = 0; i < n; i++) {
		char at[64];
		snprintf(at, sizeof at, "%s.histogram[%zu]", where, i);
		if (svg_number(json_array_get(h, i), 0, 1e40, at, &p->hist[i], err))
			return SF_EINVAL;
	}
	p->nhist = (int)n;
	return 0;
}

static int read_thresholds(const json_t *obj, picture *p, sf_err *err)
{
	const json_t *stars = svg_get(obj, "stars", JSON_OBJECT, "", err);
	if (!stars)
		return SF_EINVAL;
	const json_t *t = json_object_get(stars, "thresholds");
	if (json_is_null(t)) {
		p->bands = 0;
		return 0;
	}
	if (!json_is_array(t) || json_array_size(t) != 3)
		return sf_err_set(err, SF_EINVAL,
				  "stars.thresholds: missing or not null or an array of 3");
	for (int i = 0; i < 3; i++) {
		char at[32];
		long long v;
		snprintf(at, sizeof at, "stars.thresholds[%d]", i);
		if (svg_integer(json_array_get(t, (size_t)i), i ? p->t[i - 1] + 1 : 1, p->nhist - 1,
				at, &v, err))
			return SF_EINVAL;
		p->t[i] = (int)v;
	}
	p->bands = 1;
	return 0;
}

static int contacts(const chain *c)
{
	int k = 0;
	for (int i = 0; i < c->n; i++)
		for (int j = i + 2; j < c->n; j++) {
			int d = abs(c->at[i][0] - c->at[j][0]) + abs(c->at[i][1] - c->at[j][1]) +
				abs(c->at[i][2] - c->at[j][2]);
			k += d == 1 && c->seq[i] == 'H' && c->seq[j] == 'H';
		}
	return k;
}

/* ---- drawing ---- */

/* `rgb` blended with white by f (0: the colour, 1: white), as "#rrggbb". */
static void pale(const unsigned char rgb[3], double f, char out[8])
{
	static const char hex[] = "0123456789abcdef";
	out[0] = '#';
	for (int i = 0; i < 3; i++) {
		int v = (int)(rgb[i] + (255 - rgb[i]) * f + 0.5);
		out[1 + 2 * i] = hex[v >> 4];
		out[2 + 2 * i] = hex[v & 15];
	}
	out[7] = '\0';
}

/* Where the fold's residues land on the page: scale and offset. */
typedef struct frame {
	double s, ox, oy;
} frame;

static double fx(const frame *f, const int *p, int cubic)
{
	return f->ox + f->s * (p[0] + (cubic ? Z_DX * p[2] : 0));
}

static double fy(const frame *f, const int *p, int cubic)
{
	return f->oy - f->s * (p[1] + (cubic ? Z_DY * p[2] : 0));
}

/* Fits the (projected) fold into the box x, y, w, h with a unit of margin. */
static frame fit(const chain *c, double x, double y, double w, double h)
{
	double lo[2] = { 1e9, 1e9 }, hi[2] = { -1e9, -1e9 };
	for (int i = 0; i < c->n; i++) {
		double u = c->at[i][0] + (c->cubic ? Z_DX * c->at[i][2] : 0);
		double v = c->at[i][1] + (c->cubic ? Z_DY * c->at[i][2] : 0);
		lo[0] = u < lo[0] ? u : lo[0];
		hi[0] = u > hi[0] ? u : hi[0];
		lo[1] = v < lo[1] ? v : lo[1];
		hi[1] = v > hi[1] ? v : hi[1];
	}
	frame f;
	f.s = w / (hi[0] - lo[0] + 2);
	if (h / (hi[1] - lo[1] + 2) < f.s)
		f.s = h / (hi[1] - lo[1] + 2);
	double most = c->cubic ? 100 : 60; /* a short chain need not fill the panel */
	if (f.s > most)
		f.s = most;
	f.ox = x + w / 2 - f.s * (lo[0] + hi[0]) / 2;
	f.oy = y + h / 2 + f.s * (lo[1] + hi[1]) / 2;
	return f;
}

static void draw_residue(svg_buf *b, const chain *c, const frame *f, int i, double r, double fog)
{
	int h = c->seq[i] == 'H';
	char fill[8], stroke[8];
	pale(h ? H_RGB : P_RGB, fog, fill);
	pale(h ? H_RGB : P_RGB, fog * 0.5, stroke);
	double x = fx(f, c->at[i], c->cubic), y = fy(f, c->at[i], c->cubic);
	svg_put(b,
		"<circle class=\"res %s\" cx=\"%f\" cy=\"%f\" r=\"%f\" fill=\"%s\" "
		"stroke=\"%s\" stroke-width=\"%f\"/>\n",
		h ? "H" : "P", x, y, r, fill, stroke, r * 0.12 + 0.5);
	if (r >= 8)
		svg_put(b,
			"<text x=\"%f\" y=\"%f\" font-size=\"%f\" text-anchor=\"middle\" "
			"font-weight=\"bold\" fill=\"%s\">%d</text>\n",
			x, y + r * 0.36, r * (i >= 9 ? 0.9 : 1.05), h ? "#3b1f00" : "#ffffff",
			i + 1);
}

static void draw_link(svg_buf *b, const chain *c, const frame *f, int i, int j, int contact,
		      double fog)
{
	char colour[8];
	static const unsigned char bond[3] = { 0x44, 0x48, 0x5e }, hh[3] = { 0xe0, 0x3a, 0x3e };
	pale(contact ? hh : bond, fog, colour);
	svg_put(b, "<line class=\"%s\" x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" stroke=\"%s\" ",
		contact ? "contact" : "bond", fx(f, c->at[i], c->cubic), fy(f, c->at[i], c->cubic),
		fx(f, c->at[j], c->cubic), fy(f, c->at[j], c->cubic), colour);
	if (contact)
		svg_put(b, "stroke-width=\"%f\" stroke-dasharray=\"0.1 %f\"/>\n", f->s * 0.09,
			f->s * 0.16);
	else
		svg_put(b, "stroke-width=\"%f\"/>\n", f->s * (c->cubic ? 0.1 : 0.14));
}

static int touching(const chain *c, int i, int j)
{
	int d = abs(c->at[i][0] - c->at[j][0]) + abs(c->at[i][1] - c->at[j][1]) +
		abs(c->at[i][2] - c->at[j][2]);
	return d == 1 && j > i + 1 && c->seq[i] == 'H' && c->seq[j] == 'H';
}

static void draw_square(svg_buf *b, const chain *c, double x, double y, double w, double h)
{
	frame f = fit(c, x, y, w, h);
	int lo[2] = { 99, 99 }, hi[2] = { -99, -99 };
	for (int i = 0; i < c->n; i++)
		for (int a = 0; a < 2; a++) {
			lo[a] = c->at[i][a] < lo[a] ? c->at[i][a] : lo[a];
			hi[a] = c->at[i][a] > hi[a] ? c->at[i][a] : hi[a];
		}
	svg_put(b, "<path class=\"grid\" fill=\"none\" stroke=\"#d9e0ec\" stroke-width=\"1\" d=\"");
	for (int gx = lo[0] - 1; gx <= hi[0] + 1; gx++)
		svg_put(b, "M%f %fV%f", f.ox + f.s * gx, f.oy - f.s * (lo[1] - 1),
			f.oy - f.s * (hi[1] + 1));
	for (int gy = lo[1] - 1; gy <= hi[1] + 1; gy++)
		svg_put(b, "M%f %fH%f", f.ox + f.s * (lo[0] - 1), f.oy - f.s * gy,
			f.ox + f.s * (hi[0] + 1));
	svg_put(b, "\"/>\n");
	for (int i = 0; i + 1 < c->n; i++)
		draw_link(b, c, &f, i, i + 1, 0, 0);
	for (int i = 0; i < c->n; i++)
		for (int j = i + 2; j < c->n; j++)
			if (touching(c, i, j))
				draw_link(b, c, &f, i, j, 1, 0);
	for (int i = 0; i < c->n; i++)
		draw_residue(b, c, &f, i, f.s * 0.3, 0);
}

/* One thing to draw in the cubic view, in painter's order. */
typedef struct item {
	int depth; /* twice the farthest z: larger is farther, drawn first */
	int disc;  /* 0 a line (drawn before the discs at its depth), 1 a residue */
	int i, j;
} item;

static int item_cmp(const void *pa, const void *pb)
{
	const item *a = pa, *b = pb;
	if (a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	if (a->disc != b->disc)
		return a->disc - b->disc;
	if (a->i != b->i)
		return a->i - b->i;
	return a->j - b->j;
}

static void draw_cubic(svg_buf *b, const chain *c, double x, double y, double w, double h)
{
	frame f = fit(c, x, y + 10, w, h - 20);
	int lo[3] = { 99, 99, 99 }, hi[3] = { -99, -99, -99 };
	for (int i = 0; i < c->n; i++)
		for (int a = 0; a < 3; a++) {
			lo[a] = c->at[i][a] < lo[a] ? c->at[i][a] : lo[a];
			hi[a] = c->at[i][a] > hi[a] ? c->at[i][a] : hi[a];
		}
	/* The bounding box's twelve edges: between corners differing in one axis. */
	svg_put(b, "<path class=\"box\" fill=\"none\" stroke=\"#c3cad8\" stroke-width=\"1\" "
		   "stroke-dasharray=\"4 3\" d=\"");
	for (int k = 0; k < 8; k++)
		for (int a = 0; a < 3; a++) {
			if (k >> a & 1)
				continue;
			int p[3], q[3];
			for (int d = 0; d < 3; d++) {
				p[d] = k >> d & 1 ? hi[d] : lo[d];
				q[d] = (k | 1 << a) >> d & 1 ? hi[d] : lo[d];
			}
			svg_put(b, "M%f %fL%f %f", fx(&f, p, 1), fy(&f, p, 1), fx(&f, q, 1),
				fy(&f, q, 1));
		}
	svg_put(b, "\"/>\n");
	item items[LAT_MAX_LEN * LAT_MAX_LEN];
	int n = 0;
	for (int i = 0; i < c->n; i++) {
		items[n++] = (item){ 2 * c->at[i][2], 1, i, i };
		for (int j = i + 1; j < c->n; j++)
			if (j == i + 1 || touching(c, i, j)) {
				int z = c->at[i][2] > c->at[j][2] ? c->at[i][2] : c->at[j][2];
				items[n++] = (item){ 2 * z, 0, i, j };
			}
	}
	qsort(items, (size_t)n, sizeof *items, item_cmp);
	double span = hi[2] > lo[2] ? hi[2] - lo[2] : 1;
	for (int k = 0; k < n; k++) {
		double fog = 0.55 * (items[k].depth / 2.0 - lo[2]) / span;
		if (items[k].disc)
			draw_residue(b, c, &f, items[k].i, f.s * 0.17, fog);
		else
			draw_link(b, c, &f, items[k].i, items[k].j, items[k].j != items[k].i + 1,
				  fog);
	}
	/* The axis key, bottom left of the panel. */
	double ax = x + 14, ay = y + h - 12;
	svg_put(b,
		"<g class=\"axes\" stroke=\"#6b7385\" stroke-width=\"1.5\" fill=\"#6b7385\" "
		"font-size=\"11\">"
		"<path d=\"M%f %fH%fM%f %fV%fM%f %fL%f %f\" fill=\"none\"/>"
		"<text x=\"%f\" y=\"%f\" stroke=\"none\">x</text>"
		"<text x=\"%f\" y=\"%f\" stroke=\"none\">y</text>"
		"<text x=\"%f\" y=\"%f\" stroke=\"none\">z</text></g>\n",
		ax, ay, ax + 26, ax, ay, ay - 26, ax, ay, ax + 26 * Z_DX / 0.55,
		ay - 26 * Z_DY / 0.55, ax + 29, ay + 4, ax - 3, ay - 29, ax + 26 * Z_DX / 0.55 + 3,
		ay - 26 * Z_DY / 0.55 - 2);
}

/* A count in at most four characters and a suffix: 7, 486, 2.6k, 214k, 1.2M. */
static void compact_int(long long v, char out[32])
{
	static const char suffix[] = " kMGTP";
	int k = 0;
	long long scale = 1;
	while (v / scale >= 1000 && k < 5) {
		scale *= 1000;
		k++;
	}
	if (!k)
		snprintf(out, 32, "%lld", v);
	else if (v / scale < 10 && (v * 10 + scale / 2) / scale < 100 &&
		 (v * 10 + scale / 2) / scale % 10)
		snprintf(out, 32, "%lld.%lld%c", (v * 10 + scale / 2) / scale / 10,
			 (v * 10 + scale / 2) / scale % 10, suffix[k]);
	else
		snprintf(out, 32, "%lld%c", (v + scale / 2) / scale, suffix[k]);
}

/* Counts up to 1e15 as compact_int() writes them; past that (estimates) as 1.2e25. */
static void compact(double v, char out[32])
{
	if (v < 1e15)
		compact_int((long long)(v + 0.5), out);
	else
		snprintf(out, 32, "%.1e", v);
}

/*
 * log10(v + 1) to about six digits, from IEEE multiplications and divisions
 * only (each correctly rounded, so the same bits everywhere), where libm's
 * log10 may differ in the last bit between C libraries and, on a value that
 * rounds to a hundredth on the page, change a byte of the picture. The
 * integer part counts decades; each squaring of the mantissa in [1, 10)
 * yields one more binary digit of the fraction.
 */
static double log_height(double v)
{
	double x = (double)v + 1;
	int d = 0;
	while (x >= 10) {
		x /= 10;
		d++;
	}
	/* log10 on [1, 10) by a few rounds of squaring: bits of the mantissa. */
	double frac = 0, bit = 0.5;
	for (int i = 0; i < 20; i++) {
		x *= x;
		if (x >= 10) {
			x /= 10;
			frac += bit;
		}
		bit /= 2;
	}
	return d + frac;
}

static void draw_histogram(svg_buf *b, const picture *p, int mark, double x, double y, double w,
			   double h)
{
	double most = 1;
	for (int s = 0; s < p->nhist; s++)
		most = p->hist[s] > most ? p->hist[s] : most;
	/* Past 1e15 the decade labels read 1.0e+24, wider than 214k: more room
	 * left of the axis, so that they clear the rotated axis title. */
	double left = x + (most >= 1e15 ? 62 : 52), right = x + w - 6, top = y + 34,
	       bottom = y + h - 40;
	int decades = (int)log_height(most) + 1;
	double bw = (right - left) / p->nhist, ph = bottom - top;
	/* The star bands behind the bars. */
	static const char *band_fill[3] = { "#fff1c1", "#ffe08a", "#ffc94a" };
	for (int k = 0; p->bands && k < 3; k++) {
		int from = p->t[k], to = k < 2 ? p->t[k + 1] : p->nhist;
		double bx = left + from * bw, bwid = (to - from) * bw;
		svg_put(b,
			"<rect class=\"band\" x=\"%f\" y=\"%f\" width=\"%f\" height=\"%f\" "
			"fill=\"%s\"/>\n",
			bx, top - 26, bwid, bottom - top + 26, band_fill[k]);
		double r = 6;
		int stack = (k + 1) * 2.3 * r > bwid;
		if (stack && bwid < 2.2 * r)
			r = bwid / 2.2;
		for (int i = 0; i <= k; i++) {
			double cx = stack ? bx + bwid / 2 : bx + bwid / 2 + (i - k / 2.0) * 2.3 * r;
			double cy = stack ? top - 18 + i * 2.2 * r : top - 14;
			svg_star(b, cx, cy, r, "#f5b301", "#a56a00");
		}
		svg_put(b, "\n");
	}
	/* Axes and decade grid lines; past 12 decades (estimates of long
	 * chains reach 1e26) a label every third line, so they stay apart. */
	int label_every = decades > 12 ? 3 : 1;
	double v = 1; /* 10^d: a double, since long chains pass 2^63 */
	for (int d = 0; d <= decades; d++, v *= 10) {
		double gy = bottom - ph * log_height(d ? v : 0) / decades;
		svg_put(b,
			"<line x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" "
			"stroke=\"#e3e7ef\"/>",
			left, gy, right, gy);
		char label[32];
		if (d % label_every == 0) {
			compact(d ? v : 0, label);
			svg_put(b,
				"<text x=\"%f\" y=\"%f\" text-anchor=\"end\" fill=\"#5c6577\" "
				"font-size=\"10\">%t</text>",
				left - 5, gy + 3.5, label);
		}
		svg_put(b, "\n");
	}
	int every = p->nhist > 40 ? 10 : p->nhist > 20 ? 5 : 1;
	for (int s = 0; s < p->nhist; s++) {
		double bh = ph * log_height(p->hist[s]) / decades, bx = left + s * bw;
		int star = 0;
		for (int k = 0; p->bands && k < 3; k++)
			star += s >= p->t[k];
		static const char *bar_fill[4] = { "#7d8aa3", "#3d5a80", "#2f4a6d", "#1d3557" };
		svg_put(b,
			"<rect class=\"bar\" x=\"%f\" y=\"%f\" width=\"%f\" height=\"%f\" "
			"rx=\"1.5\" fill=\"%s\"/>",
			bx + bw * 0.12, bottom - bh, bw * 0.76, bh, bar_fill[star]);
		if (p->nhist <= 24 && p->hist[s]) {
			char label[32];
			compact(p->hist[s], label);
			svg_put(b,
				"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" font-size=\"9\" "
				"fill=\"#33415c\">%t</text>",
				bx + bw / 2, bottom - bh - 3, label);
		}
		if (s % every == 0 || s == p->nhist - 1)
			svg_put(b,
				"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" font-size=\"10\" "
				"fill=\"#5c6577\">%d</text>",
				bx + bw / 2, bottom + 13, s);
		svg_put(b, "\n");
	}
	if (mark >= 0 && mark < p->nhist) {
		/* "fold" beside the mark, on the side towards the middle, so that it
		 * clears the score labels above and the axis title below. */
		double mx = left + (mark + 0.5) * bw;
		int rightward = mx < (left + right) / 2;
		svg_put(b,
			"<path class=\"mark\" d=\"M%f %fl5 8h-10Z\" fill=\"#e03a3e\"/>"
			"<text x=\"%f\" y=\"%f\" text-anchor=\"%s\" font-size=\"9\" "
			"fill=\"#e03a3e\">fold</text>\n",
			mx, bottom + 16, rightward ? mx + 7 : mx - 7, bottom + 24,
			rightward ? "start" : "end");
	}
	svg_put(b,
		"<path d=\"M%f %fV%fH%f\" fill=\"none\" stroke=\"#5c6577\" stroke-width=\"1\"/>\n"
		"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" fill=\"#33415c\">score (HH "
		"contacts)</text>\n"
		"<text transform=\"rotate(-90 %f %f)\" x=\"%f\" y=\"%f\" text-anchor=\"middle\" "
		"fill=\"#33415c\">conformations (log scale)</text>\n",
		left, top - 26, bottom, right, (left + right) / 2, y + h - 4, x + 12,
		(top + bottom) / 2, x + 12, (top + bottom) / 2);
	if (!p->bands)
		svg_put(b,
			"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" fill=\"#8a4b00\">"
			"no star bands: fewer than three scores above 0</text>\n",
			(left + right) / 2, top - 12);
}

static void draw_legend(svg_buf *b, double x, double y)
{
	char h[8], p[8];
	pale(H_RGB, 0, h);
	pale(P_RGB, 0, p);
	svg_put(b,
		"<g class=\"legend\" font-size=\"11\" fill=\"#33415c\">"
		"<circle cx=\"%f\" cy=\"%f\" r=\"6\" fill=\"%s\"/>"
		"<text x=\"%f\" y=\"%f\">H (hydrophobic)</text>"
		"<circle cx=\"%f\" cy=\"%f\" r=\"6\" fill=\"%s\"/>"
		"<text x=\"%f\" y=\"%f\">P (polar)</text>"
		"<line x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" stroke=\"#44485e\" "
		"stroke-width=\"4\"/><text x=\"%f\" y=\"%f\">bond</text>"
		"<line x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" stroke=\"#e03a3e\" "
		"stroke-width=\"3\" stroke-linecap=\"round\" stroke-dasharray=\"0.1 5\"/>"
		"<text x=\"%f\" y=\"%f\">HH contact</text></g>\n",
		x + 6, y - 4, h, x + 16, y, x + 120, y - 4, p, x + 130, y, x + 200, y - 4, x + 224,
		y - 4, x + 230, y, x + 276, y - 4, x + 300, y - 4, x + 306, y);
}

static char *render(const picture *p, sf_err *err)
{
	svg_buf b;
	svg_init(&b);
	svg_begin(&b, PIC_W, PIC_H, p->title);
	/* A long chain's title (64 residues make 87 characters) is set smaller
	 * so that it fits: bold sans-serif H and P run to 0.75 em each. */
	double title_size = (PIC_W - 40) / (0.75 * (double)strlen(p->title));
	if (title_size > 18)
		title_size = 18;
	svg_put(&b,
		"<text x=\"20\" y=\"30\" font-size=\"%f\" font-weight=\"bold\" "
		"fill=\"#1d2433\">%t</text>\n"
		"<text x=\"20\" y=\"50\" fill=\"#5c6577\">%t</text>\n"
		"<rect x=\"20\" y=\"64\" width=\"390\" height=\"370\" rx=\"10\" fill=\"#f6f8fb\" "
		"stroke=\"#e3e7ef\"/>\n"
		"<text x=\"32\" y=\"84\" font-weight=\"bold\" fill=\"#33415c\">%t</text>\n"
		"<rect x=\"430\" y=\"64\" width=\"390\" height=\"370\" rx=\"10\" fill=\"#ffffff\" "
		"stroke=\"#e3e7ef\"/>\n",
		title_size, p->title, p->subtitle, p->caption);
	svg_put(&b, "<g class=\"fold\" stroke-linecap=\"round\">\n");
	if (p->fold.cubic)
		draw_cubic(&b, &p->fold, 30, 92, 370, 334);
	else
		draw_square(&b, &p->fold, 30, 92, 370, 334);
	svg_put(&b, "</g>\n<g class=\"histogram\">\n");
	draw_histogram(&b, p, contacts(&p->fold), 440, 70, 370, 360);
	svg_put(&b, "</g>\n");
	draw_legend(&b, 28, 458);
	return svg_end(&b, err);
}

static void describe(picture *p, double total)
{
	char conformations[32];
	if (total < 1e15)
		snprintf(conformations, sizeof conformations, "%lld", (long long)(total + 0.5));
	else
		snprintf(conformations, sizeof conformations, "%.2e", total);
	if (p->bands)
		snprintf(p->subtitle, sizeof p->subtitle,
			 "%d residues, %s conformations, stars at %d, %d and %d HH contacts",
			 p->fold.n, conformations, p->t[0], p->t[1], p->t[2]);
	else
		snprintf(p->subtitle, sizeof p->subtitle,
			 "%d residues, %s conformations, no star bands", p->fold.n,
			 conformations);
}

/* lat_level_svg() and lat_level_svg_star(): star 0 is the default fold. */
static char *level_svg(const json_t *level, int star, sf_err *err)
{
	static const char *const keys[4] = { "three", "one", "two", "three" };
	static const char *const words[4] = { "Three", "One", "Two", "Three" };
	if (star < 0 || star > 3) {
		sf_err_set(err, SF_EINVAL, "star %d is out of range (allowed: 1, 2, 3)", star);
		return NULL;
	}
	picture *p = calloc(1, sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory drawing the picture");
		return NULL;
	}
	char *text = NULL;
	const json_t *puzzle, *solution, *stats, *bands, *fold;
	if (svg_check_kind(level, "lattice", err) ||
	    !(puzzle = svg_get(level, "puzzle", JSON_OBJECT, "", err)) ||
	    read_lattice(puzzle, "puzzle", &p->fold, err) ||
	    read_sequence(puzzle, "puzzle", &p->fold, err) ||
	    !(solution = svg_get(level, "solution", JSON_OBJECT, "", err)) ||
	    !(stats = svg_get(level, "stats", JSON_OBJECT, "", err)) ||
	    read_histogram(stats, "stats", p, err) || read_thresholds(level, p, err))
		goto done;
	bands = json_object_get(solution, "band_folds");
	if (p->bands && json_is_object(bands)) {
		char where[40];
		snprintf(where, sizeof where, "solution.band_folds.%s", keys[star]);
		fold = json_object_get(bands, keys[star]);
		if (read_fold(fold, where, &p->fold, err))
			goto done;
		snprintf(p->caption, sizeof p->caption, "%s-star fold: %d HH contacts", words[star],
			 contacts(&p->fold));
	} else if (star) {
		sf_err_set(err, SF_ERANGE,
			   "star %d: the level has no star bands (stars.thresholds is null), so no "
			   "fold for each star; without star the picture shows its best fold",
			   star);
		goto done;
	} else {
		fold = json_object_get(solution, "best_fold");
		if (read_fold(fold, "solution.best_fold", &p->fold, err))
			goto done;
		snprintf(p->caption, sizeof p->caption, "Best fold: %d HH contacts",
			 contacts(&p->fold));
	}
	double total = 0;
	for (int s = 0; s < p->nhist; s++)
		total += p->hist[s];
	snprintf(p->title, sizeof p->title, "Lattice level %s (%s)", p->fold.seq,
		 p->fold.cubic ? "cubic" : "square");
	describe(p, total);
	text = render(p, err);
done:
	free(p);
	return text;
}

char *lat_level_svg(const json_t *level, sf_err *err)
{
	return level_svg(level, 0, err);
}

char *lat_level_svg_star(const json_t *level, int star, sf_err *err)
{
	if (star < 1 || star > 3) {
		sf_err_set(err, SF_EINVAL, "star %d is out of range (allowed: 1, 2, 3)", star);
		return NULL;
	}
	return level_svg(level, star, err);
}

char *lat_evaluation_svg(const json_t *evaluation, sf_err *err)
{
	picture *p = calloc(1, sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory drawing the picture");
		return NULL;
	}
	char *text = NULL;
	const json_t *examples;
	if (!json_is_object(evaluation)) {
		sf_err_set(err, SF_EINVAL, "the evaluation is not a JSON object");
		goto done;
	}
	if (read_lattice(evaluation, "evaluation", &p->fold, err) ||
	    read_sequence(evaluation, "evaluation", &p->fold, err) ||
	    read_histogram(evaluation, "evaluation", p, err) ||
	    read_thresholds(evaluation, p, err) ||
	    !(examples = svg_get(evaluation, "examples", JSON_OBJECT, "evaluation", err)))
		goto done;
	char key[16], where[48];
	snprintf(key, sizeof key, "%d", p->nhist - 1);
	snprintf(where, sizeof where, "evaluation.examples.%s", key);
	if (read_fold(json_object_get(examples, key), where, &p->fold, err))
		goto done;
	double total = 0;
	for (int s = 0; s < p->nhist; s++)
		total += p->hist[s];
	snprintf(p->title, sizeof p->title, "Evaluation of %s (%s)", p->fold.seq,
		 p->fold.cubic ? "cubic" : "square");
	snprintf(p->caption, sizeof p->caption, "First best fold: %d HH contacts",
		 contacts(&p->fold));
	describe(p, total);
	text = render(p, err);
done:
	free(p);
	return text;
}
