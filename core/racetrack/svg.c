/*
 * svg.c - the picture of a racetrack level.
 *
 * Three panels, read from the level document alone:
 *  - left, the track from above on grass, fitted to its bounding box (the
 *    level's y growing down the page, as a game draws it): a white
 *    kerb and grey asphalt under the whole lap (one path each), and down the
 *    middle a ribbon per segment in the colour of its simulated PX on the
 *    shared blue-yellow-red scale (svg_ramp), grey where the player never
 *    finished the segment; a chequered start line with an arrow for the
 *    direction of travel, and numbered checkpoints. The legend under the
 *    map explains the colour scale, grey and the checkpoints' discs.
 *  - top right, PX over the lap: a column per segment tinted by its
 *    simulated PX, the simulated PX as a step line, the designer's target
 *    curve (params.target, interpolated linearly over the lap as the fitness
 *    does) dashed, checkpoints as numbered grid lines.
 *  - bottom right, the elevation profile: z of every spline sample over the
 *    lap, filled, with the same checkpoint lines.
 * Distances along the lap are sample index over sample count, so the three
 * panels agree whatever ds says. Every field is checked before drawing:
 * a bad document is SF_EINVAL naming the field, never a crash.
 */
#include "svg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../svg.h"

#define PIC_W 900
#define PIC_H 520
#define MAX_SAMPLES 20000
#define MAX_SEGMENTS 64
#define MAX_TARGET 64
#define COORD_MAX 1e6

typedef struct track {
	int n; /* spline samples */
	double (*pt)[3];
	int nseg;
	int seg_start[MAX_SEGMENTS];
	double sim[MAX_SEGMENTS]; /* -1: never completed */
	int ntarget;
	double target[MAX_TARGET];
	double cp[MAX_SEGMENTS][3];
	double width, length;
	double start[3], dir[2];
	int stars;
	double t[3];
	char unit[16];
	int has_lap;
	double lap_time;
	char id[80];
} track;

/* ---- reading ---- */

static int read_point(const json_t *v, int dims, const char *where, double *out, sf_err *err)
{
	if (!json_is_array(v) || (int)json_array_size(v) != dims)
		return sf_err_set(err, SF_EINVAL, "%s: missing or not an array of %d numbers",
				  where, dims);
	for (int d = 0; d < dims; d++)
		if (svg_number(json_array_get(v, (size_t)d), -COORD_MAX, COORD_MAX, where, &out[d],
			       err))
			return SF_EINVAL;
	return 0;
}

static int read_spline(const json_t *puzzle, track *t, sf_err *err)
{
	const json_t *s = svg_get(puzzle, "spline", JSON_ARRAY, "puzzle", err);
	if (!s)
		return SF_EINVAL;
	size_t n = json_array_size(s);
	if (n < 3 || n > MAX_SAMPLES)
		return sf_err_set(err, SF_EINVAL, "puzzle.spline: %zu points (allowed: 3..%d)", n,
				  MAX_SAMPLES);
	if (!(t->pt = malloc(n * sizeof *t->pt)))
		return sf_err_set(err, SF_ENOMEM, "out of memory drawing the picture");
	t->n = (int)n;
	for (size_t i = 0; i < n; i++) {
		char at[48];
		snprintf(at, sizeof at, "puzzle.spline[%zu]", i);
		if (read_point(json_array_get(s, i), 3, at, t->pt[i], err))
			return SF_EINVAL;
	}
	return 0;
}

static int read_segments(const json_t *puzzle, track *t, sf_err *err)
{
	const json_t *segs = svg_get(puzzle, "segments", JSON_ARRAY, "puzzle", err);
	const json_t *cps = svg_get(puzzle, "checkpoints", JSON_ARRAY, "puzzle", err);
	if (!segs || !cps)
		return SF_EINVAL;
	size_t n = json_array_size(segs);
	if (n < 1 || n > MAX_SEGMENTS)
		return sf_err_set(err, SF_EINVAL, "puzzle.segments: %zu segments (allowed: 1..%d)",
				  n, MAX_SEGMENTS);
	if (json_array_size(cps) != n)
		return sf_err_set(err, SF_EINVAL,
				  "puzzle.checkpoints: %zu checkpoints for %zu segments",
				  json_array_size(cps), n);
	t->nseg = (int)n;
	for (size_t i = 0; i < n; i++) {
		char at[64];
		snprintf(at, sizeof at, "puzzle.segments[%zu]", i);
		const json_t *seg = json_array_get(segs, i), *v;
		long long first;
		if (!(v = svg_get(seg, "start_sample", JSON_INTEGER, at, err)))
			return SF_EINVAL;
		snprintf(at, sizeof at, "puzzle.segments[%zu].start_sample", i);
		if (svg_integer(v, i ? t->seg_start[i - 1] + 1 : 0, i ? t->n - 1 : 0, at, &first,
				err))
			return SF_EINVAL;
		t->seg_start[i] = (int)first;
		snprintf(at, sizeof at, "puzzle.segments[%zu]", i);
		if (!(v = svg_get(seg, "simulated_px", JSON_REAL, at, err)))
			return SF_EINVAL;
		snprintf(at, sizeof at, "puzzle.segments[%zu].simulated_px", i);
		if (svg_number(v, -1, 1, at, &t->sim[i], err))
			return SF_EINVAL;
		snprintf(at, sizeof at, "puzzle.checkpoints[%zu]", i);
		if (read_point(json_array_get(cps, i), 3, at, t->cp[i], err))
			return SF_EINVAL;
	}
	return 0;
}

static int read_level(const json_t *level, track *t, sf_err *err)
{
	const json_t *params, *puzzle, *target, *line, *v;
	if (svg_check_kind(level, "racetrack", err) ||
	    !(params = svg_get(level, "params", JSON_OBJECT, "", err)) ||
	    !(puzzle = svg_get(level, "puzzle", JSON_OBJECT, "", err)) ||
	    !(target = svg_get(params, "target", JSON_ARRAY, "params", err)))
		return SF_EINVAL;
	size_t nt = json_array_size(target);
	if (nt < 2 || nt > MAX_TARGET)
		return sf_err_set(err, SF_EINVAL, "params.target: %zu points (allowed: 2..%d)", nt,
				  MAX_TARGET);
	t->ntarget = (int)nt;
	for (size_t i = 0; i < nt; i++) {
		char at[32];
		snprintf(at, sizeof at, "params.target[%zu]", i);
		if (svg_number(json_array_get(target, i), 0, 1, at, &t->target[i], err))
			return SF_EINVAL;
	}
	if (read_spline(puzzle, t, err) || read_segments(puzzle, t, err) ||
	    !(v = svg_get(puzzle, "width", JSON_REAL, "puzzle", err)) ||
	    svg_number(v, 0.01, COORD_MAX, "puzzle.width", &t->width, err) ||
	    !(v = svg_get(puzzle, "length", JSON_REAL, "puzzle", err)) ||
	    svg_number(v, 0.01, 1e9, "puzzle.length", &t->length, err) ||
	    !(line = svg_get(puzzle, "start_line", JSON_OBJECT, "puzzle", err)) ||
	    read_point(json_object_get(line, "position"), 3, "puzzle.start_line.position", t->start,
		       err) ||
	    read_point(json_object_get(line, "direction"), 2, "puzzle.start_line.direction", t->dir,
		       err))
		return SF_EINVAL;
	const char *id = json_string_value(json_object_get(level, "id"));
	snprintf(t->id, sizeof t->id, "%s", id ? id : "");
	/* Stars and the player's lap are words in the subtitle: optional. */
	const json_t *stars = json_object_get(level, "stars");
	const json_t *th = json_object_get(stars, "thresholds");
	t->stars = json_is_array(th) && json_array_size(th) == 3;
	for (int i = 0; t->stars && i < 3; i++) {
		const json_t *x = json_array_get(th, (size_t)i);
		t->stars = json_is_number(x);
		t->t[i] = json_number_value(x);
	}
	const char *unit = json_string_value(json_object_get(stars, "unit"));
	snprintf(t->unit, sizeof t->unit, "%s", unit ? unit : "");
	const json_t *lap = json_object_get(json_object_get(level, "solution"), "player_lap");
	const json_t *time = json_object_get(lap, "time");
	t->has_lap = json_is_number(time) && json_is_true(json_object_get(lap, "finished"));
	t->lap_time = json_number_value(time);
	return 0;
}

/* ---- drawing ---- */

typedef struct box {
	double x, y, w, h;
} box;

/* The map's transform: page = o + s * level. */
typedef struct map {
	double s, ox, oy;
} map;

static double mx(const map *m, double x)
{
	return m->ox + m->s * x;
}

static double my(const map *m, double y)
{
	return m->oy + m->s * y;
}

static map fit_map(const track *t, box b)
{
	double lo[2] = { t->pt[0][0], t->pt[0][1] }, hi[2] = { lo[0], lo[1] };
	for (int i = 0; i < t->n; i++)
		for (int a = 0; a < 2; a++) {
			lo[a] = t->pt[i][a] < lo[a] ? t->pt[i][a] : lo[a];
			hi[a] = t->pt[i][a] > hi[a] ? t->pt[i][a] : hi[a];
		}
	double pad = 28, span_x = hi[0] - lo[0] + t->width, span_y = hi[1] - lo[1] + t->width;
	map m;
	m.s = (b.w - 2 * pad) / (span_x > 1e-9 ? span_x : 1);
	double sy = (b.h - 2 * pad) / (span_y > 1e-9 ? span_y : 1);
	m.s = sy < m.s ? sy : m.s;
	m.ox = b.x + b.w / 2 - m.s * (lo[0] + hi[0]) / 2;
	m.oy = b.y + b.h / 2 - m.s * (lo[1] + hi[1]) / 2;
	return m;
}

static void colour_of(double px, char out[8])
{
	if (px < 0)
		memcpy(out, "#b8bcc6", 8);
	else
		svg_ramp(px, out);
}

/* The samples of segment k: from its start to the next one's, wrapping. */
static int seg_end(const track *t, int k)
{
	return k + 1 < t->nseg ? t->seg_start[k + 1] : t->n;
}

static void draw_lap_path(svg_buf *b, const track *t, const map *m)
{
	for (int i = 0; i < t->n; i++)
		svg_put(b, "%s%f %f", i ? " L" : "M", mx(m, t->pt[i][0]), my(m, t->pt[i][1]));
	svg_put(b, " Z");
}

static void draw_map(svg_buf *b, const track *t, box bx)
{
	map m = fit_map(t, bx);
	double w = t->width * m.s;
	svg_put(b,
		"<rect x=\"%f\" y=\"%f\" width=\"%f\" height=\"%f\" rx=\"10\" fill=\"#e4f1dc\" "
		"stroke=\"#cfe3c3\"/>\n<g class=\"track\" fill=\"none\" "
		"stroke-linejoin=\"round\">\n"
		"<path class=\"road\" stroke=\"#ffffff\" stroke-width=\"%f\" d=\"",
		bx.x, bx.y, bx.w, bx.h, w + 4);
	draw_lap_path(b, t, &m);
	svg_put(b, "\"/>\n<path class=\"asphalt\" stroke=\"#5a5f6b\" stroke-width=\"%f\" d=\"", w);
	draw_lap_path(b, t, &m);
	svg_put(b, "\"/>\n");
	for (int k = 0; k < t->nseg; k++) {
		char colour[8];
		colour_of(t->sim[k], colour);
		svg_put(b, "<polyline class=\"seg\" stroke=\"%s\" stroke-width=\"%f\" points=\"",
			colour, w * 0.62);
		for (int i = t->seg_start[k]; i <= seg_end(t, k); i++) {
			const double *p = t->pt[i % t->n];
			svg_put(b, "%s%f,%f", i > t->seg_start[k] ? " " : "", mx(&m, p[0]),
				my(&m, p[1]));
		}
		svg_put(b, "\"/>\n");
	}
	/* The start line across the road, chequered, and the way to drive. */
	double nx = -t->dir[1], ny = t->dir[0];
	double sx = mx(&m, t->start[0]), sy = my(&m, t->start[1]), half = w / 2 + 2;
	double ax = sx + t->dir[0] * (w + 8), ay = sy + t->dir[1] * (w + 8);
	svg_put(b,
		"<g class=\"start\"><line x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" "
		"stroke=\"#ffffff\" stroke-width=\"6\"/>"
		"<line x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" stroke=\"#111111\" "
		"stroke-width=\"6\" stroke-dasharray=\"%f\"/>"
		"<path d=\"M%f %fL%f %fL%f %fZ\" fill=\"#111111\" stroke=\"#ffffff\" "
		"stroke-width=\"1.5\"/>"
		"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" font-weight=\"bold\" "
		"fill=\"#111111\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">"
		"START</text></g>\n",
		sx + nx * half, sy + ny * half, sx - nx * half, sy - ny * half, sx + nx * half,
		sy + ny * half, sx - nx * half, sy - ny * half, half / 3, ax + t->dir[0] * 9,
		ay + t->dir[1] * 9, ax + nx * 6, ay + ny * 6, ax - nx * 6, ay - ny * 6,
		sx + nx * (half + 18), sy + ny * (half + 18) + 4);
	for (int k = 1; k < t->nseg; k++)
		svg_put(b,
			"<g class=\"checkpoint\"><circle cx=\"%f\" cy=\"%f\" r=\"8\" "
			"fill=\"#ffffff\" stroke=\"#1d2433\" stroke-width=\"1.5\"/>"
			"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" font-size=\"10\" "
			"font-weight=\"bold\" fill=\"#1d2433\">%d</text></g>\n",
			mx(&m, t->cp[k][0]), my(&m, t->cp[k][1]), mx(&m, t->cp[k][0]),
			my(&m, t->cp[k][1]) + 3.5, k);
	svg_put(b, "</g>\n");
}

static void draw_legend(svg_buf *b, const track *t, double x, double y)
{
	svg_put(b, "<defs><linearGradient id=\"trk-px-scale\">");
	for (int i = 0; i <= 4; i++) {
		char c[8];
		svg_ramp(i / 4.0, c);
		svg_put(b, "<stop offset=\"%d%%\" stop-color=\"%s\"/>", i * 25, c);
	}
	svg_put(b,
		"</linearGradient></defs>\n<g class=\"legend\" font-size=\"11\" fill=\"#33415c\">"
		"<text x=\"%f\" y=\"%f\">simulated PX</text>"
		"<rect x=\"%f\" y=\"%f\" width=\"160\" height=\"12\" rx=\"3\" "
		"fill=\"url(#trk-px-scale)\"/>"
		"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\">0 calm</text>"
		"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\">0.5</text>"
		"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\">1 thrilling</text>",
		x, y + 10, x + 86, y, x + 86, y + 25, x + 166, y + 25, x + 246, y + 25);
	int unfinished = 0;
	for (int k = 0; k < t->nseg; k++)
		unfinished |= t->sim[k] < 0;
	if (unfinished)
		svg_put(b,
			"<rect x=\"%f\" y=\"%f\" width=\"14\" height=\"12\" rx=\"3\" "
			"fill=\"#b8bcc6\"/><text x=\"%f\" y=\"%f\">not reached</text>",
			x + 290, y, x + 308, y + 10);
	/* The numbered discs on the map, under "not reached" (the colour
	 * scale's labels take the rest of that row). */
	if (t->nseg > 1)
		svg_put(b,
			"<circle cx=\"%f\" cy=\"%f\" r=\"7\" fill=\"#ffffff\" stroke=\"#1d2433\" "
			"stroke-width=\"1.5\"/><text x=\"%f\" y=\"%f\" text-anchor=\"middle\" "
			"font-size=\"9\" font-weight=\"bold\" fill=\"#1d2433\">1</text>"
			"<text x=\"%f\" y=\"%f\">checkpoint</text>",
			x + 297, y + 21, x + 297, y + 24, x + 308, y + 25);
	svg_put(b, "</g>\n");
}

/* A round step for an axis of `span` units with at most about `ticks` ticks. */
static double nice_step(double span, int ticks)
{
	static const double steps[] = { 0.1,   0.2,   0.5, 1,   2,    5,    10,   20,
					50,    100,   200, 500, 1000, 2000, 5000, 10000,
					20000, 50000, 1e5, 2e5, 5e5,  1e6 };
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (span / steps[i] <= ticks)
			return steps[i];
	return 1e7;
}

/* A number for an axis label (two decimals at most, as the writer does). */
static void put_label(svg_buf *b, double x, double y, const char *anchor, double v,
		      const char *unit)
{
	svg_put(b,
		"<text x=\"%f\" y=\"%f\" text-anchor=\"%s\" font-size=\"10\" "
		"fill=\"#5c6577\">%f%t</text>",
		x, y, anchor, v, unit);
}

/* The frame of a chart: its distance axis in metres and checkpoint lines. */
static void draw_chart_frame(svg_buf *b, const track *t, box c, const char *title)
{
	svg_put(b,
		"<text x=\"%f\" y=\"%f\" font-weight=\"bold\" fill=\"#33415c\">%t</text>\n"
		"<path d=\"M%f %fV%fH%f\" fill=\"none\" stroke=\"#5c6577\"/>\n",
		c.x - 40, c.y - 12, title, c.x, c.y, c.y + c.h, c.x + c.w);
	double step = nice_step(t->length, 6);
	for (double d = 0; d <= t->length + 1e-9; d += step) {
		double x = c.x + c.w * d / t->length;
		svg_put(b, "<line x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" stroke=\"#5c6577\"/>", x,
			c.y + c.h, x, c.y + c.h + 4);
		put_label(b, x, c.y + c.h + 15, "middle", d, d + step > t->length ? " m" : "");
	}
	svg_put(b, "\n");
	for (int k = 1; k < t->nseg; k++) {
		double x = c.x + c.w * t->seg_start[k] / t->n;
		svg_put(b,
			"<line class=\"cp-line\" x1=\"%f\" y1=\"%f\" x2=\"%f\" y2=\"%f\" "
			"stroke=\"#c3cad8\" stroke-dasharray=\"3 3\"/>"
			"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" font-size=\"9\" "
			"fill=\"#8a93a6\">%d</text>",
			x, c.y, x, c.y + c.h, x, c.y - 2, k);
	}
	svg_put(b, "\n");
}

static void draw_px_chart(svg_buf *b, const track *t, box c)
{
	draw_chart_frame(b, t, c, "PX: target vs simulated");
	for (int k = 0; k < t->nseg; k++) {
		char colour[8];
		colour_of(t->sim[k], colour);
		double x0 = c.x + c.w * t->seg_start[k] / t->n;
		double x1 = c.x + c.w * seg_end(t, k) / t->n;
		svg_put(b,
			"<rect class=\"px-col\" x=\"%f\" y=\"%f\" width=\"%f\" height=\"%f\" "
			"fill=\"%s\" fill-opacity=\"0.45\"/>",
			x0, c.y, x1 - x0, c.h, colour);
	}
	for (int v = 0; v <= 2; v++) {
		double y = c.y + c.h - c.h * v / 2;
		put_label(b, c.x - 5, y + 3.5, "end", v / 2.0, "");
	}
	svg_put(b,
		"\n<path class=\"simulated\" fill=\"none\" stroke=\"#1d3557\" stroke-width=\"2.5\" "
		"d=\"");
	int pen = 0;
	for (int k = 0; k < t->nseg; k++) {
		if (t->sim[k] < 0) {
			pen = 0;
			continue;
		}
		double y = c.y + c.h * (1 - t->sim[k]), x1 = c.x + c.w * seg_end(t, k) / t->n;
		if (pen)
			svg_put(b, "V%fH%f", y, x1);
		else
			svg_put(b, "M%f %fH%f", c.x + c.w * t->seg_start[k] / t->n, y, x1);
		pen = 1;
	}
	svg_put(b, "\"/>\n<polyline class=\"target\" fill=\"none\" stroke=\"#e03a3e\" "
		   "stroke-width=\"2\" stroke-dasharray=\"6 4\" points=\"");
	for (int i = 0; i < t->ntarget; i++)
		svg_put(b, "%s%f,%f", i ? " " : "", c.x + c.w * i / (t->ntarget - 1),
			c.y + c.h * (1 - t->target[i]));
	svg_put(b,
		"\"/>\n<g font-size=\"10\" fill=\"#33415c\"><line x1=\"%f\" y1=\"%f\" x2=\"%f\" "
		"y2=\"%f\" stroke=\"#e03a3e\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>"
		"<text x=\"%f\" y=\"%f\">target</text><line x1=\"%f\" y1=\"%f\" x2=\"%f\" "
		"y2=\"%f\" stroke=\"#1d3557\" stroke-width=\"2.5\"/>"
		"<text x=\"%f\" y=\"%f\">simulated</text></g>\n",
		c.x + c.w - 150, c.y - 14, c.x + c.w - 126, c.y - 14, c.x + c.w - 120, c.y - 10.5,
		c.x + c.w - 76, c.y - 14, c.x + c.w - 52, c.y - 14, c.x + c.w - 46, c.y - 10.5);
}

static void draw_elevation(svg_buf *b, const track *t, box c)
{
	draw_chart_frame(b, t, c, "Elevation profile");
	double lo = t->pt[0][2], hi = lo;
	for (int i = 0; i < t->n; i++) {
		lo = t->pt[i][2] < lo ? t->pt[i][2] : lo;
		hi = t->pt[i][2] > hi ? t->pt[i][2] : hi;
	}
	double pad = (hi - lo) * 0.1 + 0.5;
	lo -= pad;
	hi += pad;
	put_label(b, c.x - 5, c.y + 3.5, "end", hi, " m");
	put_label(b, c.x - 5, c.y + c.h, "end", lo, " m");
	svg_put(b,
		"\n<path class=\"elevation\" fill=\"#cfe8c8\" stroke=\"#4f772d\" "
		"stroke-width=\"1.5\" stroke-linejoin=\"round\" d=\"M%f %f",
		c.x, c.y + c.h);
	for (int i = 0; i <= t->n; i++)
		svg_put(b, " L%f %f", c.x + c.w * i / t->n,
			c.y + c.h * (hi - t->pt[i % t->n][2]) / (hi - lo));
	svg_put(b, " L%f %f Z\"/>\n", c.x + c.w, c.y + c.h);
}

static char *render(const track *t, sf_err *err)
{
	svg_buf b;
	svg_init(&b);
	char title[128];
	snprintf(title, sizeof title, "Racetrack %s", t->id);
	svg_begin(&b, PIC_W, PIC_H, title);
	/* The subtitle, written first to know its length: a long lap with
	 * three-digit times runs to 140 characters, so it is set smaller when
	 * it would pass the right edge (regular sans-serif averages 0.53 em a
	 * character on these words and digits; 0.56 leaves room). */
	svg_buf sub;
	svg_init(&sub);
	svg_put(&sub, "lap %f m, %d segments", t->length, t->nseg);
	if (t->stars)
		svg_put(&sub, "; one, two and three stars at %f, %f and %f %t", t->t[0], t->t[1],
			t->t[2], t->unit);
	if (t->has_lap)
		svg_put(&sub, "; the player's lap in the first fitness race %f s", t->lap_time);
	double sub_size = (PIC_W - 40) / (0.56 * (double)(sub.len ? sub.len : 1));
	if (sub_size > 12)
		sub_size = 12;
	svg_put(&b,
		"<text x=\"20\" y=\"30\" font-size=\"18\" font-weight=\"bold\" "
		"fill=\"#1d2433\">%t</text>\n"
		"<text x=\"20\" y=\"50\" font-size=\"%f\" fill=\"#5c6577\">%s</text>\n",
		title, sub_size, sub.text ? sub.text : "");
	if (sub.failed && !b.failed)
		b.failed = sub.failed;
	svg_discard(&sub);
	draw_map(&b, t, (box){ 20, 64, 420, 400 });
	draw_legend(&b, t, 24, 478);
	svg_put(&b, "<g class=\"px-chart\">\n");
	draw_px_chart(&b, t, (box){ 510, 96, 370, 170 });
	svg_put(&b, "</g>\n<g class=\"elevation-chart\">\n");
	draw_elevation(&b, t, (box){ 510, 330, 370, 140 });
	svg_put(&b, "</g>\n");
	return svg_end(&b, err);
}

char *trk_level_svg(const json_t *level, sf_err *err)
{
	track *t = calloc(1, sizeof *t);
	if (!t) {
		sf_err_set(err, SF_ENOMEM, "out of memory drawing the picture");
		return NULL;
	}
	char *text = NULL;
	if (!read_level(level, t, err))
		text = render(t, err);
	free(t->pt);
	free(t);
	return text;
}
