/*
 * svg.c - the picture of a digger level, for players as much as designers.
 *
 * Drawn in a picture-book style: a cream page, the grid on a brown earth
 * frame, every cell a rounded tile with a simple icon for its terrain
 * (sandy mud with specks, grey cobbles for stone, a spider web with its
 * visit count in a purple badge, a treasure chest with little yellow
 * triangles towards the arrows it refills, an ice tile with a snowflake,
 * bubbling lava, an energy bolt with its "+n" turns), gold coins (numbered
 * when the level has gold_in_order), and each machine as a small cartoon
 * digger in its own bright colour with its number on the side. Around the
 * grid every arrow slot has a round button: an arrow pointing where it sends
 * the machines with a blue badge for its uses, or, for a hidden arrow (no
 * use until a treasure gives one), a faint grey ghost of it. A legend under
 * the grid explains every symbol the picture draws (see draw_legend); it
 * wraps to more rows, and the page grows, rather than pass the page's edge.
 *
 * Every icon is drawn once in a 100 x 100 cell space and placed with a
 * translate/scale transform, so cell size changes nothing in the icons'
 * code; everything is inline shapes (no fonts beyond the generic
 * sans-serif, no images). The document alone is read, never the rules
 * engine (the other files of core/digger), and every field is checked first: a bad
 * document is SF_EINVAL naming the field, never a crash.
 */
#include "svg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../svg.h"

#define MAX_W 10
#define MAX_H 6
#define MAX_MACHINES 6
#define CELL 64 /* px per cell */
#define RIM 50  /* px around the grid for the arrows */

enum { MUD, STONE, WEB, TREASURE, ICE, LAVA, ENERGY, NTERRAIN };
static const char *const terrain_names[NTERRAIN] = { "mud", "stone", "web",   "treasure",
						     "ice", "lava",  "energy" };
static const char *const machine_colours[MAX_MACHINES] = { "#ff5d73", "#3a86ff", "#2ec4b6",
							   "#9b5de5", "#ff9f1c", "#8ac926" };
enum { LEFT, RIGHT, TOP, BOTTOM };
static const char *const side_names[4] = { "left", "right", "top", "bottom" };
enum { UP, RIGHTWARD, DOWN, LEFTWARD };
static const char *const dir_names[4] = { "up", "right", "down", "left" };

typedef struct cell {
	int terrain, param;
	int machines; /* bit m: machine m is named */
	int gold;     /* 0: none, else the order (1 when unordered) */
} cell;

typedef struct arrow {
	int dir, uses;
} arrow;

typedef struct board {
	int w, h, turns;
	int rules[5]; /* no_shuffle, no_backtrack, gold_in_order, any_direction, single_use */
	int nm;
	int mx[MAX_MACHINES], my[MAX_MACHINES];
	cell c[MAX_H][MAX_W];
	arrow a[4][MAX_W]; /* [side][row or column] */
	int ngold;
	int stars;
	long long t[3];
	char id[80];
} board;

static const char *const rule_keys[5] = { "no_shuffle", "no_backtrack", "gold_in_order",
					  "any_direction", "single_use" };

/* ---- reading ---- */

static int name_index(const char *s, const char *const *names, int n)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int read_int(const json_t *obj, const char *key, int dflt, long long lo, long long hi,
		    const char *where, int *out, sf_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (!v && dflt >= 0) {
		*out = dflt;
		return 0;
	}
	char at[96];
	snprintf(at, sizeof at, "%s.%s", where, key);
	long long x;
	if (svg_integer(v, lo, hi, at, &x, err))
		return SF_EINVAL;
	*out = (int)x;
	return 0;
}

static int read_xy(const json_t *obj, const board *b, const char *where, int *x, int *y,
		   sf_err *err)
{
	if (!json_is_object(obj))
		return sf_err_set(err, SF_EINVAL, "%s: missing or not an object", where);
	return read_int(obj, "x", -1, 0, b->w - 1, where, x, err) ||
			       read_int(obj, "y", -1, 0, b->h - 1, where, y, err)
		       ? SF_EINVAL
		       : 0;
}

static int read_cells(const json_t *puzzle, board *b, sf_err *err)
{
	const json_t *cells = json_object_get(puzzle, "cells");
	if (!cells)
		return 0;
	if (!json_is_array(cells) || json_array_size(cells) > 64)
		return sf_err_set(err, SF_EINVAL, "puzzle.cells: not an array of at most 64");
	for (size_t i = 0; i < json_array_size(cells); i++) {
		const json_t *o = json_array_get(cells, i);
		char at[48];
		snprintf(at, sizeof at, "puzzle.cells[%zu]", i);
		int x, y, param;
		if (read_xy(o, b, at, &x, &y, err) ||
		    read_int(o, "param", 0, 0, 255, at, &param, err))
			return SF_EINVAL;
		int t = name_index(json_string_value(json_object_get(o, "terrain")), terrain_names,
				   NTERRAIN);
		if (t < 0)
			return sf_err_set(err, SF_EINVAL,
					  "%s.terrain: missing or not one of mud, stone, web, "
					  "treasure, ice, lava, energy",
					  at);
		const json_t *ms = json_object_get(o, "machines");
		int mask = 0;
		if (ms && (!json_is_array(ms) || json_array_size(ms) > MAX_MACHINES))
			return sf_err_set(err, SF_EINVAL, "%s.machines: not an array of at most 6",
					  at);
		for (size_t k = 0; k < json_array_size(ms); k++) {
			char mat[96];
			long long m;
			snprintf(mat, sizeof mat, "%s.machines[%zu]", at, k);
			if (svg_integer(json_array_get(ms, k), 0, b->nm - 1, mat, &m, err))
				return SF_EINVAL;
			mask |= 1 << m;
		}
		b->c[y][x].terrain = t;
		b->c[y][x].param = param;
		b->c[y][x].machines = mask;
	}
	return 0;
}

static int read_arrows(const json_t *puzzle, board *b, sf_err *err)
{
	/* A slot left out is hidden and points into the grid (the reader's rule). */
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < MAX_W; i++)
			b->a[s][i] = (arrow){ s == LEFT    ? RIGHTWARD
					      : s == RIGHT ? LEFTWARD
					      : s == TOP   ? DOWN
							   : UP,
					      0 };
	const json_t *arrows = json_object_get(puzzle, "arrows");
	if (!arrows)
		return 0;
	if (!json_is_array(arrows) || json_array_size(arrows) > 2 * (MAX_W + MAX_H))
		return sf_err_set(err, SF_EINVAL, "puzzle.arrows: not an array of at most 32");
	for (size_t i = 0; i < json_array_size(arrows); i++) {
		const json_t *o = json_array_get(arrows, i);
		char at[48];
		snprintf(at, sizeof at, "puzzle.arrows[%zu]", i);
		int side = name_index(json_string_value(json_object_get(o, "side")), side_names, 4);
		if (side < 0)
			return sf_err_set(err, SF_EINVAL,
					  "%s.side: missing or not left, right, top or bottom", at);
		int index, uses;
		if (read_int(o, "index", -1, 0, (side < TOP ? b->h : b->w) - 1, at, &index, err) ||
		    read_int(o, "uses", -1, 0, 255, at, &uses, err))
			return SF_EINVAL;
		const json_t *d = json_object_get(o, "dir");
		if (d) {
			int dir = name_index(json_string_value(d), dir_names, 4);
			if (dir < 0)
				return sf_err_set(err, SF_EINVAL,
						  "%s.dir: not up, right, down or left", at);
			b->a[side][index].dir = dir;
		}
		b->a[side][index].uses = uses;
	}
	return 0;
}

static int read_level(const json_t *level, board *b, sf_err *err)
{
	const json_t *pz, *ms, *gold;
	if (svg_check_kind(level, "digger", err) ||
	    !(pz = svg_get(level, "puzzle", JSON_OBJECT, "", err)) ||
	    read_int(pz, "width", -1, 1, MAX_W, "puzzle", &b->w, err) ||
	    read_int(pz, "height", -1, 1, MAX_H, "puzzle", &b->h, err) ||
	    read_int(pz, "turns", -1, 1, 9999, "puzzle", &b->turns, err) ||
	    !(ms = svg_get(pz, "machines", JSON_ARRAY, "puzzle", err)) ||
	    !(gold = svg_get(pz, "gold", JSON_ARRAY, "puzzle", err)))
		return SF_EINVAL;
	const json_t *rules = json_object_get(pz, "rules");
	if (rules && !json_is_object(rules))
		return sf_err_set(err, SF_EINVAL, "puzzle.rules: not an object");
	for (int r = 0; r < 5; r++)
		b->rules[r] = json_is_true(json_object_get(rules, rule_keys[r]));
	size_t nm = json_array_size(ms);
	if (nm < 1 || nm > MAX_MACHINES)
		return sf_err_set(err, SF_EINVAL, "puzzle.machines: %zu machines (allowed: 1..%d)",
				  nm, MAX_MACHINES);
	b->nm = (int)nm;
	for (int m = 0; m < b->nm; m++) {
		char at[40];
		snprintf(at, sizeof at, "puzzle.machines[%d]", m);
		if (read_xy(json_array_get(ms, (size_t)m), b, at, &b->mx[m], &b->my[m], err))
			return SF_EINVAL;
	}
	size_t ng = json_array_size(gold);
	if (ng < 1 || ng > MAX_W * MAX_H)
		return sf_err_set(err, SF_EINVAL, "puzzle.gold: %zu gold (allowed: 1..%d)", ng,
				  MAX_W * MAX_H);
	if (read_cells(pz, b, err) || read_arrows(pz, b, err))
		return SF_EINVAL;
	for (size_t i = 0; i < ng; i++) {
		const json_t *o = json_array_get(gold, i);
		char at[40];
		int x, y, order;
		snprintf(at, sizeof at, "puzzle.gold[%zu]", i);
		if (read_xy(o, b, at, &x, &y, err) ||
		    read_int(o, "order", 1, 1, MAX_W * MAX_H, at, &order, err))
			return SF_EINVAL;
		b->ngold += !b->c[y][x].gold;
		b->c[y][x].gold = order;
	}
	const char *id = json_string_value(json_object_get(level, "id"));
	snprintf(b->id, sizeof b->id, "%s", id ? id : "");
	const json_t *th = json_object_get(json_object_get(level, "stars"), "thresholds");
	b->stars = json_is_array(th) && json_array_size(th) == 3;
	for (int i = 0; b->stars && i < 3; i++) {
		const json_t *v = json_array_get(th, (size_t)i);
		b->stars = json_is_integer(v);
		b->t[i] = json_integer_value(v);
	}
	return 0;
}

/* ---- icons, each in a 100 x 100 cell ---- */

static void tile(svg_buf *o, const char *fill, const char *stroke)
{
	svg_put(o,
		"<rect x=\"4\" y=\"4\" width=\"92\" height=\"92\" rx=\"18\" fill=\"%s\" "
		"stroke=\"%s\" stroke-width=\"3\"/>",
		fill, stroke);
}

/* Small dots in the colours of the machines a stone or web singles out. */
static void machine_dots(svg_buf *o, int mask)
{
	int k = 0;
	for (int m = 0; m < MAX_MACHINES; m++)
		if (mask >> m & 1)
			svg_put(o,
				"<circle cx=\"%d\" cy=\"16\" r=\"7\" fill=\"%s\" "
				"stroke=\"#ffffff\" "
				"stroke-width=\"2.5\"/>",
				16 + 14 * k++, machine_colours[m]);
}

static void octagon(svg_buf *o, double r)
{
	static const double unit[8][2] = { { 0, -1 }, { 0.7071, -0.7071 },
					   { 1, 0 },  { 0.7071, 0.7071 },
					   { 0, 1 },  { -0.7071, 0.7071 },
					   { -1, 0 }, { -0.7071, -0.7071 } };
	svg_put(o, "<polygon fill=\"none\" stroke=\"#a39fc0\" stroke-width=\"2.5\" points=\"");
	for (int i = 0; i < 8; i++)
		svg_put(o, "%s%f,%f", i ? " " : "", 50 + unit[i][0] * r, 50 + unit[i][1] * r);
	svg_put(o, "\"/>");
}

static void terrain_icon(svg_buf *o, int terrain, int param, int mask)
{
	switch (terrain) {
	case STONE:
		tile(o, "#c3c8d2", "#9aa1b0");
		svg_put(o, "<g fill=\"#9aa1b0\" stroke=\"#7d8494\" stroke-width=\"3\">"
			   "<ellipse cx=\"36\" cy=\"42\" rx=\"20\" ry=\"15\"/>"
			   "<ellipse cx=\"68\" cy=\"62\" rx=\"20\" ry=\"15\"/>"
			   "<ellipse cx=\"34\" cy=\"76\" rx=\"13\" ry=\"9\"/></g>"
			   "<path d=\"M26 36 Q34 30 44 34 M60 56 Q68 50 77 54\" fill=\"none\" "
			   "stroke=\"#e6e9ef\" stroke-width=\"3\" stroke-linecap=\"round\"/>");
		machine_dots(o, mask);
		break;
	case WEB:
		tile(o, "#f3effa", "#d9d2ec");
		svg_put(o, "<path d=\"M50 10V90M10 50H90M22 22L78 78M78 22L22 78\" "
			   "stroke=\"#a39fc0\" stroke-width=\"2.5\"/>");
		octagon(o, 16);
		octagon(o, 32);
		if (param >= 0)
			svg_put(o,
				"<circle cx=\"78\" cy=\"78\" r=\"14\" fill=\"#6c63ff\" "
				"stroke=\"#ffffff\" stroke-width=\"3\"/><text x=\"78\" y=\"85\" "
				"text-anchor=\"middle\" font-size=\"19\" font-weight=\"bold\" "
				"fill=\"#ffffff\">%d</text>",
				param);
		machine_dots(o, mask);
		break;
	case TREASURE:
		tile(o, "#e8b57e", "#c98a4b");
		svg_put(o, "<g stroke=\"#6b3410\" stroke-width=\"3\" stroke-linejoin=\"round\">"
			   "<rect x=\"24\" y=\"44\" width=\"52\" height=\"34\" rx=\"5\" "
			   "fill=\"#a0522d\"/><path d=\"M24 46Q24 26 50 26Q76 26 76 46Z\" "
			   "fill=\"#c8743f\"/><rect x=\"24\" y=\"42\" width=\"52\" height=\"7\" "
			   "fill=\"#ffd23f\"/><rect x=\"45\" y=\"46\" width=\"10\" height=\"13\" "
			   "rx=\"2\" fill=\"#ffd23f\"/></g>");
		/* Which arrows it refills: bits 1 left, 2 right, 4 top, 8 bottom. */
		static const char *const gifts[4] = { "M6 50L16 42V58Z", "M94 50L84 42V58Z",
						      "M50 6L42 16H58Z", "M50 94L42 84H58Z" };
		for (int k = 0; k < 4 && param > 0; k++)
			if (param >> k & 1)
				svg_put(o,
					"<path class=\"gift\" d=\"%s\" fill=\"#ffd23f\" "
					"stroke=\"#b8860b\" stroke-width=\"2\" "
					"stroke-linejoin=\"round\"/>",
					gifts[k]);
		break;
	case ICE:
		tile(o, "#c6ecff", "#8fd3f4");
		svg_put(o, "<path d=\"M50 20V80M24 35L76 65M24 65L76 35M44 24L50 30L56 24M44 "
			   "76L50 70L56 76\" fill=\"none\" stroke=\"#ffffff\" stroke-width=\"6\" "
			   "stroke-linecap=\"round\" stroke-linejoin=\"round\"/>"
			   "<path d=\"M16 28Q20 16 32 14\" fill=\"none\" stroke=\"#ffffff\" "
			   "stroke-width=\"4\" stroke-linecap=\"round\" opacity=\"0.8\"/>");
		break;
	case LAVA:
		tile(o, "#ff7033", "#e4572e");
		svg_put(o, "<path d=\"M4 40Q20 28 36 40T68 40T96 40\" fill=\"none\" "
			   "stroke=\"#ffb347\" stroke-width=\"5\" stroke-linecap=\"round\"/>"
			   "<g fill=\"#ffd166\"><circle cx=\"30\" cy=\"64\" r=\"10\"/>"
			   "<circle cx=\"66\" cy=\"70\" r=\"13\"/><circle cx=\"58\" cy=\"22\" "
			   "r=\"6\"/></g><circle cx=\"70\" cy=\"66\" r=\"4\" fill=\"#ffffff\" "
			   "opacity=\"0.7\"/>");
		break;
	case ENERGY:
		tile(o, "#fff1a8", "#ffd23f");
		svg_put(o, "<path d=\"M56 10L26 56H47L40 90L74 40H53Z\" fill=\"#ffb703\" "
			   "stroke=\"#e85d04\" stroke-width=\"3\" stroke-linejoin=\"round\"/>");
		if (param >= 0)
			svg_put(o,
				"<text x=\"80\" y=\"88\" text-anchor=\"middle\" font-size=\"20\" "
				"font-weight=\"bold\" fill=\"#e85d04\">+%d</text>",
				param);
		break;
	default: /* mud */
		tile(o, "#e8b57e", "#d39a5c");
		svg_put(o, "<g fill=\"#c98a4b\"><circle cx=\"26\" cy=\"28\" r=\"4\"/>"
			   "<circle cx=\"72\" cy=\"64\" r=\"5\"/><circle cx=\"38\" cy=\"78\" "
			   "r=\"3\"/><circle cx=\"76\" cy=\"24\" r=\"3\"/></g>");
		break;
	}
}

/* A gold coin centred at (cx, cy) of radius r; `order` > 0 is written on it. */
static void coin(svg_buf *o, const char *cls, double cx, double cy, double r, int order)
{
	svg_put(o,
		"<g class=\"%s\"><circle cx=\"%f\" cy=\"%f\" r=\"%f\" fill=\"#ffd23f\" "
		"stroke=\"#d99a00\" stroke-width=\"4\"/><circle cx=\"%f\" cy=\"%f\" r=\"%f\" "
		"fill=\"none\" stroke=\"#f0b400\" stroke-width=\"2\"/>",
		cls, cx, cy, r, cx, cy, r * 0.65);
	if (order > 0)
		svg_put(o,
			"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" font-size=\"%f\" "
			"font-weight=\"bold\" fill=\"#7a4b00\">%d</text>",
			cx, cy + r * 0.4, r * (order > 9 ? 0.95 : 1.15), order);
	else
		svg_put(o,
			"<path d=\"M%f %fQ%f %f %f %f\" fill=\"none\" stroke=\"#ffffff\" "
			"stroke-width=\"3\" stroke-linecap=\"round\"/>",
			cx - r * 0.45, cy - r * 0.05, cx - r * 0.4, cy - r * 0.45, cx - r * 0.05,
			cy - r * 0.48);
	svg_put(o, "</g>");
}

/* Machine m as a cartoon digger; `cls` is its group's class. */
static void machine_icon(svg_buf *o, int m, const char *cls)
{
	svg_put(o,
		"<g class=\"%s\" stroke=\"#1d2433\" stroke-width=\"3\" "
		"stroke-linejoin=\"round\">"
		"<path d=\"M72 38L94 51L72 64Z\" fill=\"#c0c6d0\"/>"
		"<path d=\"M80 43L80 59M87 47L87 55\" stroke-width=\"2\"/>"
		"<rect x=\"26\" y=\"16\" width=\"30\" height=\"24\" rx=\"8\" fill=\"%s\"/>"
		"<rect x=\"32\" y=\"21\" width=\"18\" height=\"12\" rx=\"4\" fill=\"#e8f6ff\"/>"
		"<rect x=\"14\" y=\"36\" width=\"62\" height=\"32\" rx=\"12\" fill=\"%s\"/>"
		"<circle cx=\"28\" cy=\"72\" r=\"10\" fill=\"#1d2433\"/>"
		"<circle cx=\"62\" cy=\"72\" r=\"10\" fill=\"#1d2433\"/>"
		"<circle cx=\"28\" cy=\"72\" r=\"3\" fill=\"#ffffff\" stroke=\"none\"/>"
		"<circle cx=\"62\" cy=\"72\" r=\"3\" fill=\"#ffffff\" stroke=\"none\"/>"
		"<circle cx=\"45\" cy=\"52\" r=\"11\" fill=\"#ffffff\" stroke-width=\"2\"/>"
		"<text x=\"45\" y=\"58\" text-anchor=\"middle\" font-size=\"16\" "
		"font-weight=\"bold\" fill=\"#1d2433\" stroke=\"none\">%d</text></g>",
		cls, machine_colours[m], machine_colours[m], m + 1);
}

/* ---- the page ---- */

static void place(svg_buf *o, double x, double y, double size)
{
	svg_put(o, "<g transform=\"translate(%f %f) scale(%f)\">", x, y, size / 100);
}

/* A round badge of radius r at (cx, cy) with `text` in white. */
static void badge(svg_buf *o, double cx, double cy, double r, const char *fill, const char *text)
{
	svg_put(o,
		"<circle cx=\"%f\" cy=\"%f\" r=\"%f\" fill=\"%s\" stroke=\"#ffffff\" "
		"stroke-width=\"2\"/><text x=\"%f\" y=\"%f\" text-anchor=\"middle\" "
		"font-size=\"%f\" font-weight=\"bold\" fill=\"#ffffff\">%t</text>",
		cx, cy, r, fill, cx, cy + r * 0.45, r * 1.22, text);
}

/* An arrow's round button centred on the origin, pointing `dir`, no badge. */
static void arrow_button(svg_buf *o, int dir, int hidden)
{
	static const int degrees[4] = { 270, 0, 90, 180 };
	svg_put(o,
		"<circle r=\"18\" fill=\"%s\" stroke=\"%s\" stroke-width=\"3\"%s/>"
		"<path d=\"M-10 -4H1V-11L12 0L1 11V4H-10Z\" transform=\"rotate(%d)\" fill=\"%s\" "
		"stroke=\"%s\" stroke-width=\"1.5\" stroke-linejoin=\"round\"/>",
		hidden ? "#f4f5f8" : "#ffffff", hidden ? "#c9ced8" : "#ff9f1c",
		hidden ? " stroke-dasharray=\"4 3\"" : "", degrees[dir],
		hidden ? "#d9dde5" : "#ff595e", hidden ? "#c9ced8" : "#c9184a");
}

static void draw_arrow(svg_buf *o, double cx, double cy, const arrow *a)
{
	int hidden = a->uses == 0;
	svg_put(o, "<g class=\"arrow%s\" transform=\"translate(%f %f)\">", hidden ? " hidden" : "",
		cx, cy);
	arrow_button(o, a->dir, hidden);
	if (!hidden) {
		char uses[8];
		snprintf(uses, sizeof uses, "%d", a->uses);
		badge(o, 14, -14, 9, "#3a86ff", uses);
	}
	svg_put(o, "</g>\n");
}

/*
 * The legend explains every symbol the picture draws, and only those: the
 * machines, the arrows with their uses badge, hidden arrows, gold (numbered
 * under gold_in_order), each terrain used with what it does, and the marks
 * on cells: a web's visit badge and an energy cell's "+n" (in their own
 * entries' icons), a treasure's triangles and a stone's or web's machine
 * dot. Entries flow left to right and wrap to a new row before they would
 * pass the right margin; text widths are estimated at 7 px a character for
 * the 12 px sans-serif (wider than DejaVu Sans's and Liberation Sans's
 * average), so a row never reaches the edge of the page whichever font the
 * viewer has.
 */
enum {
	L_MACHINE,
	L_ARROW,
	L_HIDDEN,
	L_GOLD,
	L_TERRAIN, /* + terrain */
	L_GIFT = L_TERRAIN + NTERRAIN,
	L_DOT,
	L_COUNT
};

#define LEGEND_ROW 26   /* px between legend rows */
#define LEGEND_ICON 24  /* px of an entry's icon */
#define LEGEND_CHAR 7.0 /* estimated px per character of a label */
#define LEGEND_GAP 18   /* px between entries */

/* Which legend entries the board needs (want[L_*]) and their labels. */
static void legend_entries(const board *b, int want[L_COUNT], const char *label[L_COUNT])
{
	static const char *const terrain_words[NTERRAIN] = {
		"mud",
		"stone: blocks",
		"web: gold counts from visit n",
		"treasure: gives arrows a use",
		"ice: freezes",
		"lava: thaws the frozen",
		"energy: n turns back",
	};
	memset(want, 0, L_COUNT * sizeof *want);
	want[L_MACHINE] = want[L_GOLD] = 1;
	for (int r = 0; r < b->h; r++)
		for (int q = 0; q < b->w; q++) {
			const cell *c = &b->c[r][q];
			want[L_TERRAIN + c->terrain] = 1;
			want[L_GIFT] |= c->terrain == TREASURE && c->param > 0;
			want[L_DOT] |= (c->terrain == STONE || c->terrain == WEB) && c->machines;
		}
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < (s < TOP ? b->h : b->w); i++) {
			want[L_HIDDEN] |= b->a[s][i].uses == 0;
			want[L_ARROW] |= b->a[s][i].uses > 0;
		}
	label[L_MACHINE] = b->nm > 1 ? "machines" : "machine";
	label[L_ARROW] = "arrow: n uses left";
	label[L_HIDDEN] = "hidden arrow: no use yet";
	label[L_GOLD] = b->rules[2] ? "gold, in this order" : "gold";
	for (int t = 0; t < NTERRAIN; t++)
		label[L_TERRAIN + t] = terrain_words[t];
	label[L_GIFT] = "the arrow a treasure refills";
	label[L_DOT] = "only the machine of that colour";
}

/* The icon of legend entry `e`, LEGEND_ICON px square with its left edge at x, centred on cy. */
static void legend_icon(svg_buf *o, const board *b, int e, double x, double cy)
{
	double mid = x + LEGEND_ICON / 2.0;
	switch (e) {
	case L_MACHINE:
		place(o, x - 2, cy - 14, 28);
		machine_icon(o, 0, "legend-machine");
		svg_put(o, "</g>");
		break;
	case L_ARROW:
	case L_HIDDEN:
		svg_put(o, "<g transform=\"translate(%f %f) scale(0.55)\">", mid - 2, cy + 2);
		arrow_button(o, RIGHTWARD, e == L_HIDDEN);
		if (e == L_ARROW)
			badge(o, 14, -14, 9, "#3a86ff", "n");
		svg_put(o, "</g>");
		break;
	case L_GOLD:
		coin(o, "legend-gold", mid, cy, 10, b->rules[2] ? 1 : 0);
		break;
	case L_GIFT:
		svg_put(o,
			"<path d=\"M%f %fL%f %fV%fZ\" fill=\"#ffd23f\" stroke=\"#b8860b\" "
			"stroke-width=\"1.5\" stroke-linejoin=\"round\"/>",
			x + 4, cy, x + 16, cy - 8, cy + 8);
		break;
	case L_DOT:
		svg_put(o,
			"<circle cx=\"%f\" cy=\"%f\" r=\"6\" fill=\"%s\" stroke=\"#ffffff\" "
			"stroke-width=\"2\"/>",
			mid, cy, machine_colours[0]);
		break;
	default: { /* a terrain, with its number mark where it has one */
		int t = e - L_TERRAIN;
		place(o, x, cy - LEGEND_ICON / 2.0, LEGEND_ICON);
		terrain_icon(o, t, -1, 0);
		svg_put(o, "</g>");
		if (t == WEB)
			badge(o, x + 19, cy + 7, 6.5, "#6c63ff", "n");
		else if (t == ENERGY)
			svg_put(o,
				"<text x=\"%f\" y=\"%f\" text-anchor=\"middle\" font-size=\"9\" "
				"font-weight=\"bold\" fill=\"#e85d04\">+n</text>",
				x + 18, cy + 10);
		break;
	}
	}
}

/*
 * Lays out (and, when o is not NULL, draws) the legend from (x, y), the
 * first row's text baseline, wrapping before `right`. Returns the rows used.
 */
static int draw_legend(svg_buf *o, const board *b, double x, double y, double right)
{
	int want[L_COUNT];
	const char *label[L_COUNT];
	legend_entries(b, want, label);
	if (o)
		svg_put(o, "<g class=\"legend\" font-size=\"12\" fill=\"#5a3e2b\">");
	double at = x;
	int rows = 1;
	for (int e = 0; e < L_COUNT; e++) {
		if (!want[e])
			continue;
		double w = LEGEND_ICON + 5 + LEGEND_CHAR * (double)strlen(label[e]);
		if (at > x && at + w > right) {
			at = x;
			rows++;
		}
		double base = y + (rows - 1) * LEGEND_ROW;
		if (o) {
			svg_put(o, "<g class=\"legend-entry\">");
			legend_icon(o, b, e, at, base - 4);
			svg_put(o, "<text x=\"%f\" y=\"%f\">%t</text></g>", at + LEGEND_ICON + 5,
				base, label[e]);
		}
		at += w + LEGEND_GAP;
	}
	if (o)
		svg_put(o, "</g>\n");
	return rows;
}

static char *render(const board *b, sf_err *err)
{
	double gw = b->w * CELL, gh = b->h * CELL;
	double width = gw + 2 * RIM + 40 < 640 ? 640 : gw + 2 * RIM + 40;
	static const char *const rule_words[5] = { "no shuffle", "no backtrack", "gold in order",
						   "any direction", "single use" };
	char rules[96] = "";
	for (int r = 0; r < 5; r++)
		if (b->rules[r])
			snprintf(rules + strlen(rules), sizeof rules - strlen(rules), "%s%s",
				 *rules ? ", " : "rules: ", rule_words[r]);
	/* The rules follow the id on its line when they fit (11 px text, about
	 * 6.5 px a character), else take a line of their own. */
	int rules_line = *rules && 6.5 * (double)(strlen(b->id) + 2 + strlen(rules)) > width - 48;
	int rows = draw_legend(NULL, b, 24, 0, width - 24);
	double gx = (width - gw) / 2, gy = 96 + RIM + (rules_line ? 14 : 0);
	double height = gy + gh + RIM + 44 + (rows - 1) * LEGEND_ROW;
	char title[128];
	snprintf(title, sizeof title, "Digger %s", b->id);
	svg_buf o;
	svg_init(&o);
	svg_begin(&o, width, height, title);
	svg_put(&o,
		"<rect x=\"6\" y=\"6\" width=\"%f\" height=\"%f\" rx=\"22\" fill=\"#fff6e0\" "
		"stroke=\"#ffd9a0\" stroke-width=\"3\"/>\n"
		"<text x=\"24\" y=\"38\" font-size=\"22\" font-weight=\"bold\" "
		"fill=\"#5a3e2b\">Dig for gold!</text>\n"
		"<text x=\"24\" y=\"60\" font-size=\"14\" fill=\"#5a3e2b\">%d x %d, %d machine%s, "
		"%d gold, %d turns</text>\n"
		"<text x=\"24\" y=\"78\" font-size=\"11\" fill=\"#8a6a52\">%t%s%t</text>\n",
		width - 12, height - 12, b->w, b->h, b->nm, b->nm > 1 ? "s" : "", b->ngold,
		b->turns, b->id, *rules && !rules_line ? "; " : "", rules_line ? "" : rules);
	if (rules_line)
		svg_put(&o, "<text x=\"24\" y=\"92\" font-size=\"11\" fill=\"#8a6a52\">%t</text>\n",
			rules);
	if (b->stars) {
		/* One, two and three stars with their taps, right-aligned. */
		double group[3], total = 0;
		for (int k = 0; k < 3; k++) {
			int digits = b->t[k] > 99 ? 3 : b->t[k] > 9 ? 2 : 1;
			group[k] = (k + 1) * 16 + 4 + digits * 9 + 16;
			total += group[k];
		}
		double sx = width - 24 - total + 16;
		for (int k = 0; k < 3; k++) {
			for (int i = 0; i <= k; i++)
				svg_star(&o, sx + 8 + 16 * i, 34, 8, "#ffc300", "#d18f00");
			svg_put(&o,
				"<text x=\"%f\" y=\"%f\" font-size=\"15\" font-weight=\"bold\" "
				"fill=\"#5a3e2b\">%d</text>",
				sx + (k + 1) * 16 + 4, 40.0, (int)b->t[k]);
			sx += group[k];
		}
		svg_put(&o,
			"<text x=\"%f\" y=\"%f\" text-anchor=\"end\" font-size=\"11\" "
			"fill=\"#8a6a52\">taps for one, two, three stars</text>\n",
			width - 24, 60.0);
	}
	svg_put(&o,
		"<rect x=\"%f\" y=\"%f\" width=\"%f\" height=\"%f\" rx=\"20\" fill=\"#8d5a3b\"/>\n"
		"<g class=\"grid\">\n",
		gx - 8, gy - 8, gw + 16, gh + 16);
	for (int r = 0; r < b->h; r++)
		for (int q = 0; q < b->w; q++) {
			const cell *c = &b->c[r][q];
			place(&o, gx + q * CELL, gy + r * CELL, CELL);
			svg_put(&o, "<g class=\"cell %s\">", terrain_names[c->terrain]);
			terrain_icon(&o, c->terrain, c->param, c->machines);
			svg_put(&o, "</g>");
			if (c->gold) {
				int plain = c->terrain == MUD;
				coin(&o, "gold", plain ? 50 : 28, plain ? 50 : 72, plain ? 19 : 16,
				     b->rules[2] ? c->gold : 0);
			}
			svg_put(&o, "</g>\n");
		}
	svg_put(&o, "</g>\n<g class=\"machines\">\n");
	for (int m = 0; m < b->nm; m++) {
		place(&o, gx + b->mx[m] * CELL, gy + b->my[m] * CELL, CELL);
		machine_icon(&o, m, "machine");
		svg_put(&o, "</g>\n");
	}
	svg_put(&o, "</g>\n<g class=\"arrows\">\n");
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < (s < TOP ? b->h : b->w); i++) {
			double cx = s == LEFT    ? gx - RIM / 2 - 4
				    : s == RIGHT ? gx + gw + RIM / 2 + 4
						 : gx + (i + 0.5) * CELL;
			double cy = s == TOP      ? gy - RIM / 2 - 4
				    : s == BOTTOM ? gy + gh + RIM / 2 + 4
						  : gy + (i + 0.5) * CELL;
			draw_arrow(&o, cx, cy, &b->a[s][i]);
		}
	svg_put(&o, "</g>\n");
	draw_legend(&o, b, 24, gy + gh + RIM + 18, width - 24);
	return svg_end(&o, err);
}

char *dig_level_svg(const json_t *level, sf_err *err)
{
	board *b = calloc(1, sizeof *b);
	if (!b) {
		sf_err_set(err, SF_ENOMEM, "out of memory drawing the picture");
		return NULL;
	}
	char *text = read_level(level, b, err) ? NULL : render(b, err);
	free(b);
	return text;
}
