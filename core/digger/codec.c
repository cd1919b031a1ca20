/*
 * codec.c - the JSON codec of Direction Digger levels and tap lists; see
 * codec.h for the format and docs/digger.md ("## Level format").
 *
 * Design. A reader walks the JSON once, in a fixed order (grid, turns,
 * rules, machines, cells, gold, arrows), so that every later part can be
 * checked against the earlier ones (a cell's machine list against the
 * number of machines, an arrow's index against the grid) and every message
 * can name the JSON element it is about. The checks that belong to the
 * rules themselves are not repeated here: each listed cell goes through its
 * terrain module's own check hook (named by JSON index), and the finished
 * level through dig_level_check(), whose messages name fields the way the
 * description does ("machines[1]: ...") and so only need the path in front.
 * Only JSON types are tested with jansson's predicates; numbers are compared
 * as json_int_t before any narrowing, so no value can wrap into range.
 */
#include "codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../params.h"
#include "terrain.h"

#define PATH_MAX_LEN 96

static const char *const SIDE_NAME[4] = { "left", "right", "top", "bottom" };
static const char *const DIR_NAME[4] = { "up", "right", "down", "left" }; /* dig_dir order */

/* ---- messages ---- */

/* "PATH: message" into err; returns SF_EINVAL. */
__attribute__((format(printf, 3, 4))) static int fail(sf_err *err, const char *path,
						      const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return sf_err_set(err, SF_EINVAL, "%s: %s", path, msg);
}

/* Writes a JSON path (PATH_MAX_LEN bytes, truncated to fit) to out and returns it. */
__attribute__((format(printf, 2, 3))) static const char *pathf(char *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, PATH_MAX_LEN, fmt, ap);
	va_end(ap);
	return out;
}

/*
 * A client's text made safe to quote: printable ASCII kept, anything else
 * '?', at most 24 characters and "..." after a cut.
 */
static const char *quote(const char *s, size_t len, char out[32])
{
	size_t n = 0;
	for (; n < len && n < 24; n++) {
		unsigned char c = (unsigned char)s[n];
		out[n] = c >= 0x20 && c < 0x7f && c != '"' ? (char)c : '?';
	}
	if (n < len) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

/* The JSON type of v, for "must be X, not Y" messages. */
static const char *type_name(const json_t *v)
{
	return sf_json_type_name(json_typeof(v));
}

/* ---- typed readers ---- */

/* Refuses any key of `obj` not in allowed[0..n-1], naming it and the allowed ones. */
static int only_keys(const json_t *obj, const char *path, const char *const *allowed, size_t n,
		     sf_err *err)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
		size_t i = 0;
		while (i < n && strcmp(key, allowed[i]))
			i++;
		if (i < n)
			continue;
		char list[160], q[32];
		size_t at = 0;
		for (i = 0; i < n && at < sizeof list; i++) {
			int w = snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "",
					 allowed[i]);
			at += w > 0 ? (size_t)w : 0;
		}
		return fail(err, path, "unknown key \"%s\" (allowed: %s)",
			    quote(key, strlen(key), q), list);
	}
	return 0;
}

/* obj[key] as an object; required or not (then *out is NULL when absent). */
static int get_object(const json_t *obj, const char *key, const char *path, bool required,
		      const json_t **out, sf_err *err)
{
	const json_t *v = json_object_get(obj, key);
	*out = v;
	if (!v && !required)
		return 0;
	if (!v)
		return fail(err, path, "is required (an object)");
	if (!json_is_object(v))
		return fail(err, path, "must be an object, not %s", type_name(v));
	return 0;
}

/* obj[key] as an array of at most `max` items; required or not (NULL when absent). */
static int get_array(const json_t *obj, const char *key, const char *path, bool required,
		     size_t min, size_t max, const json_t **out, sf_err *err)
{
	const json_t *v = json_object_get(obj, key);
	*out = v;
	if (!v && !required)
		return 0;
	if (!v)
		return fail(err, path, "is required (an array of %zu..%zu items)", min, max);
	if (!json_is_array(v))
		return fail(err, path, "must be an array of %zu..%zu items, not %s", min, max,
			    type_name(v));
	size_t n = json_array_size(v);
	if (n < min || n > max)
		return fail(err, path, "has %zu items; it must have %zu..%zu", n, min, max);
	return 0;
}

/*
 * obj[key] as an integer in lo..hi into *out; when absent, *out = def if
 * !required. `what` (may be NULL) explains the range in the message.
 */
static int get_int(const json_t *obj, const char *key, const char *path, bool required, long lo,
		   long hi, long def, const char *what, int *out, sf_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (!v && !required) {
		*out = (int)def;
		return 0;
	}
	json_int_t i = json_is_integer(v) ? json_integer_value(v) : 0;
	if (!v || !json_is_integer(v) || i < lo || i > hi)
		return fail(err, path, "%s an integer %ld..%ld%s%s%s",
			    v ? "must be" : "is required:", lo, hi, what ? " (" : "",
			    what ? what : "", what ? ")" : "");
	*out = (int)i;
	return 0;
}

/* obj[key] as a boolean, false when absent. */
static int get_bool(const json_t *obj, const char *key, const char *path, bool *out, sf_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (v && !json_is_boolean(v))
		return fail(err, path, "must be true or false, not %s", type_name(v));
	*out = v && json_is_true(v);
	return 0;
}

/*
 * obj[key] as one of names[0..n-1] (a string without NUL bytes) into *out;
 * required or not (then *out = def when absent).
 */
static int get_enum(const json_t *obj, const char *key, const char *path, bool required,
		    const char *const *names, int n, int def, int *out, sf_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (!v && !required) {
		*out = def;
		return 0;
	}
	char list[96];
	size_t at = 0;
	for (int i = 0; i < n && at < sizeof list; i++) {
		int w = snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", names[i]);
		at += w > 0 ? (size_t)w : 0;
	}
	if (!v)
		return fail(err, path, "is required (one of %s)", list);
	if (!json_is_string(v))
		return fail(err, path, "must be one of %s, not %s", list, type_name(v));
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) == len && !memcmp(s, names[i], len)) {
			*out = i;
			return 0;
		}
	char q[32];
	return fail(err, path, "\"%s\" is not one of %s", quote(s, len, q), list);
}

/* ---- geometry of the description ---- */

/* The slot of arrow (side, index), index already in range. */
static int slot_of(const dig_level *lv, int side, int index)
{
	switch (side) {
	case 0:
		return dig_slot_row_left(lv, index);
	case 1:
		return dig_slot_row_right(lv, index);
	case 2:
		return dig_slot_col_top(lv, index);
	default:
		return dig_slot_col_bottom(lv, index);
	}
}

/* The side and index of `slot`, found through the geometry functions. */
static void side_of(const dig_level *lv, int slot, int *side, int *index)
{
	for (int s = 0; s < 4; s++) {
		int n = s < 2 ? lv->h : lv->w;
		for (int i = 0; i < n; i++)
			if (slot_of(lv, s, i) == slot) {
				*side = s;
				*index = i;
				return;
			}
	}
	*side = 0;
	*index = 0;
}

/* Reads {"side", "index"} (plus `extra` keys allowed) at obj into *slot. */
static int read_arrow_ref(const json_t *obj, const char *path, const dig_level *lv,
			  const char *const *keys, size_t nkeys, int *slot, sf_err *err)
{
	char p[PATH_MAX_LEN];
	if (!json_is_object(obj))
		return fail(err, path, "must be an object with side and index, not %s",
			    type_name(obj));
	int rc = only_keys(obj, path, keys, nkeys, err);
	int side, index;
	pathf(p, "%s.side", path);
	if (rc || (rc = get_enum(obj, "side", p, true, SIDE_NAME, 4, 0, &side, err)))
		return rc;
	int n = side < 2 ? lv->h : lv->w;
	char what[48];
	snprintf(what, sizeof what,
		 side < 2 ? "a row of the %d-row grid"
			  : "a column of the "
			    "%d-column grid",
		 n);
	pathf(p, "%s.index", path);
	if ((rc = get_int(obj, "index", p, true, 0, n - 1, 0, what, &index, err)))
		return rc;
	*slot = slot_of(lv, side, index);
	return 0;
}

/* ---- reading a level ---- */

typedef struct reader {
	const char *path;
	dig_level *lv;
	sf_err *err;
} reader;

/* x and y of obj (at path) as a cell of the grid. */
static int read_cell(const reader *r, const json_t *obj, const char *path, int *cell)
{
	char p[PATH_MAX_LEN], what[40];
	int x, y, rc;
	pathf(p, "%s.x", path);
	snprintf(what, sizeof what, "a column of the width-%d grid", r->lv->w);
	if ((rc = get_int(obj, "x", p, true, 0, r->lv->w - 1, 0, what, &x, r->err)))
		return rc;
	pathf(p, "%s.y", path);
	snprintf(what, sizeof what, "a row of the height-%d grid", r->lv->h);
	if ((rc = get_int(obj, "y", p, true, 0, r->lv->h - 1, 0, what, &y, r->err)))
		return rc;
	*cell = y * r->lv->w + x;
	return 0;
}

static int read_grid(const reader *r, const json_t *v)
{
	char p[PATH_MAX_LEN];
	int rc;
	pathf(p, "%s.width", r->path);
	if ((rc = get_int(v, "width", p, true, 1, DIG_MAX_W, 0, "columns", &r->lv->w, r->err)))
		return rc;
	pathf(p, "%s.height", r->path);
	if ((rc = get_int(v, "height", p, true, 1, DIG_MAX_H, 0, "rows", &r->lv->h, r->err)))
		return rc;
	pathf(p, "%s.turns", r->path);
	return get_int(v, "turns", p, true, 1, DIG_MAX_TURNS, 0, "the turn budget", &r->lv->turns,
		       r->err);
}

static int read_rules(const reader *r, const json_t *v)
{
	static const char *const keys[] = { "no_shuffle", "no_backtrack", "gold_in_order",
					    "any_direction", "single_use" };
	char p[PATH_MAX_LEN];
	const json_t *rules;
	pathf(p, "%s.rules", r->path);
	int rc = get_object(v, "rules", p, false, &rules, r->err);
	if (rc || !rules)
		return rc;
	if ((rc = only_keys(rules, p, keys, 5, r->err)))
		return rc;
	bool *field[5] = { &r->lv->rules.no_shuffle, &r->lv->rules.no_backtrack,
			   &r->lv->rules.gold_in_order, &r->lv->rules.any_direction,
			   &r->lv->rules.single_use };
	for (int i = 0; i < 5; i++) {
		pathf(p, "%s.rules.%s", r->path, keys[i]);
		if ((rc = get_bool(rules, keys[i], p, field[i], r->err)))
			return rc;
	}
	return 0;
}

static int read_machines(const reader *r, const json_t *v)
{
	static const char *const keys[] = { "x", "y" };
	char p[PATH_MAX_LEN];
	const json_t *arr;
	pathf(p, "%s.machines", r->path);
	int rc = get_array(v, "machines", p, true, 1, DIG_MAX_MACHINES, &arr, r->err);
	if (rc)
		return rc;
	r->lv->machines = (int)json_array_size(arr);
	for (int m = 0; m < r->lv->machines; m++) {
		const json_t *e = json_array_get(arr, (size_t)m);
		pathf(p, "%s.machines[%d]", r->path, m);
		if (!json_is_object(e))
			return fail(r->err, p, "must be an object with x and y, not %s",
				    type_name(e));
		int cell;
		if ((rc = only_keys(e, p, keys, 2, r->err)) || (rc = read_cell(r, e, p, &cell)))
			return rc;
		for (int k = 0; k < m; k++)
			if (r->lv->start[k] == cell)
				return fail(r->err, p, "cell (%d,%d) already holds machine %d",
					    cell % r->lv->w, cell / r->lv->w, k);
		r->lv->start[m] = (uint8_t)cell;
	}
	return 0;
}

/* A cell's "machines": distinct machine indices, as a bit mask. */
static int read_mask(const reader *r, const json_t *e, const char *path, uint8_t *mask)
{
	char p[PATH_MAX_LEN];
	const json_t *arr;
	pathf(p, "%s.machines", path);
	int rc = get_array(e, "machines", p, false, 0, (size_t)r->lv->machines, &arr, r->err);
	*mask = 0;
	for (size_t i = 0; !rc && arr && i < json_array_size(arr); i++) {
		const json_t *m = json_array_get(arr, i);
		json_int_t k = json_is_integer(m) ? json_integer_value(m) : -1;
		pathf(p, "%s.machines[%zu]", path, i);
		if (k < 0 || k >= r->lv->machines)
			return fail(r->err, p, "must be a machine index 0..%d",
				    r->lv->machines - 1);
		if ((*mask >> k) & 1u)
			return fail(r->err, p, "machine %d is listed twice", (int)k);
		*mask |= (uint8_t)(1u << k);
	}
	return rc;
}

static int read_cells(const reader *r, const json_t *v)
{
	static const char *const keys[] = { "x", "y", "terrain", "param", "machines" };
	const char *names[DIG_T_COUNT];
	for (int t = 0; t < DIG_T_COUNT; t++)
		names[t] = dig_terrain_of(t)->name;
	char p[PATH_MAX_LEN];
	const json_t *arr;
	int cells = r->lv->w * r->lv->h;
	pathf(p, "%s.cells", r->path);
	int rc = get_array(v, "cells", p, false, 0, (size_t)cells, &arr, r->err);
	uint64_t seen = 0;
	for (size_t i = 0; !rc && arr && i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		pathf(p, "%s.cells[%zu]", r->path, i);
		if (!json_is_object(e))
			return fail(r->err, p, "must be an object with x, y and terrain, not %s",
				    type_name(e));
		int cell, terrain, param;
		char q[PATH_MAX_LEN];
		if ((rc = only_keys(e, p, keys, 5, r->err)) || (rc = read_cell(r, e, p, &cell)))
			return rc;
		if ((seen >> cell) & 1u)
			return fail(r->err, p, "cell (%d,%d) is listed twice", cell % r->lv->w,
				    cell / r->lv->w);
		seen |= UINT64_C(1) << cell;
		pathf(q, "%s.terrain", p);
		if ((rc = get_enum(e, "terrain", q, true, names, DIG_T_COUNT, 0, &terrain, r->err)))
			return rc;
		pathf(q, "%s.param", p);
		if ((rc = get_int(e, "param", q, false, 0, 255, 0, NULL, &param, r->err)) ||
		    (rc = read_mask(r, e, p, &r->lv->tmask[cell])))
			return rc;
		r->lv->terrain[cell] = (uint8_t)terrain;
		r->lv->tparam[cell] = (uint8_t)param;
		/* The terrain's own rule for its param and machines. */
		const dig_terrain_ops *ops = dig_terrain_of(terrain);
		if (ops->check && (rc = ops->check(r->lv, cell, r->err))) {
			pathf(q, "%s: ", p);
			sf_err_prefix(r->err, q);
			return rc;
		}
	}
	return rc;
}

static int read_gold(const reader *r, const json_t *v)
{
	static const char *const keys[] = { "x", "y", "order" };
	char p[PATH_MAX_LEN], q[PATH_MAX_LEN];
	const json_t *arr;
	int cells = r->lv->w * r->lv->h;
	pathf(p, "%s.gold", r->path);
	int rc = get_array(v, "gold", p, true, 1, (size_t)cells, &arr, r->err);
	if (rc)
		return rc;
	int n = (int)json_array_size(arr);
	uint64_t orders = 0; /* bit k-1: order k (gold_in_order) */
	for (int i = 0; i < n; i++) {
		const json_t *e = json_array_get(arr, (size_t)i);
		pathf(p, "%s.gold[%d]", r->path, i);
		if (!json_is_object(e))
			return fail(r->err, p, "must be an object with x, y and order, not %s",
				    type_name(e));
		int cell, order;
		if ((rc = only_keys(e, p, keys, 3, r->err)) || (rc = read_cell(r, e, p, &cell)))
			return rc;
		if (r->lv->gold[cell])
			return fail(r->err, p, "cell (%d,%d) is listed twice", cell % r->lv->w,
				    cell / r->lv->w);
		pathf(q, "%s.order", p);
		const char *what = r->lv->rules.gold_in_order
					   ? "gold_in_order: orders 1..n, each once"
					   : "the collection order, used with gold_in_order";
		if ((rc = get_int(e, "order", q, false, 1, r->lv->rules.gold_in_order ? n : cells,
				  1, what, &order, r->err)))
			return rc;
		if (r->lv->rules.gold_in_order && ((orders >> (order - 1)) & 1u))
			return fail(r->err, q, "order %d is used twice (%s)", order, what);
		orders |= UINT64_C(1) << (order - 1);
		for (int m = 0; m < r->lv->machines; m++)
			if (r->lv->start[m] == cell)
				return fail(r->err, p,
					    "cell (%d,%d) is machine %d's start; gold never lies "
					    "under a start cell",
					    cell % r->lv->w, cell / r->lv->w, m);
		r->lv->gold[cell] = (uint8_t)order;
	}
	return 0;
}

static int read_arrows(const reader *r, const json_t *v)
{
	static const char *const keys[] = { "side", "index", "dir", "uses" };
	char p[PATH_MAX_LEN], q[PATH_MAX_LEN];
	const json_t *arr;
	int slots = dig_slots(r->lv);
	for (int s = 0; s < slots; s++)
		r->lv->arrow[s].dir = (uint8_t)dig_slot_default_dir(r->lv, s);
	pathf(p, "%s.arrows", r->path);
	int rc = get_array(v, "arrows", p, false, 0, (size_t)slots, &arr, r->err);
	uint64_t seen = 0;
	for (size_t i = 0; !rc && arr && i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		pathf(p, "%s.arrows[%zu]", r->path, i);
		int slot, dir, uses;
		if ((rc = read_arrow_ref(e, p, r->lv, keys, 4, &slot, r->err)))
			return rc;
		if ((seen >> slot) & 1u)
			return fail(r->err, p, "the %s arrow of %s %d is listed twice",
				    json_string_value(json_object_get(e, "side")),
				    slot < 2 * r->lv->h ? "row" : "column",
				    (int)json_integer_value(json_object_get(e, "index")));
		seen |= UINT64_C(1) << slot;
		int def = dig_slot_default_dir(r->lv, slot);
		pathf(q, "%s.dir", p);
		if ((rc = get_enum(e, "dir", q, false, DIR_NAME, 4, def, &dir, r->err)))
			return rc;
		if (dir != def && !r->lv->rules.any_direction)
			return fail(r->err, q,
				    "must be \"%s\" (into the grid) unless rules.any_direction is "
				    "set",
				    DIR_NAME[def]);
		pathf(q, "%s.uses", p);
		if ((rc = get_int(e, "uses", q, true, 0, 255, 0, "taps allowed; 0: hidden", &uses,
				  r->err)))
			return rc;
		r->lv->arrow[slot].dir = (uint8_t)dir;
		r->lv->arrow[slot].uses = (uint8_t)uses;
	}
	return rc;
}

/*
 * Reads description `v` into `out` (zeroed first, so unused bytes are zero);
 * 0, or SF_EINVAL with the JSON path of the first problem in front of the
 * message. A level that reads passes dig_level_check(). See codec.h.
 */
int dig_level_from_json(const json_t *v, const char *path, dig_level *out, sf_err *err)
{
	static const char *const keys[] = { "width",    "height", "turns", "rules",
					    "machines", "cells",  "gold",  "arrows" };
	memset(out, 0, sizeof *out);
	if (!path)
		path = "level";
	if (!json_is_object(v))
		return fail(err, path,
			    "must be an object with width, height, turns, machines, gold and "
			    "arrows, not %s",
			    v ? type_name(v) : "nothing");
	reader r = { .path = path, .lv = out, .err = err };
	int rc = only_keys(v, path, keys, sizeof keys / sizeof keys[0], err);
	if (rc || (rc = read_grid(&r, v)) || (rc = read_rules(&r, v)) ||
	    (rc = read_machines(&r, v)) || (rc = read_cells(&r, v)) || (rc = read_gold(&r, v)) ||
	    (rc = read_arrows(&r, v)))
		return rc;
	/* The whole level, by the rules engine; its messages name the fields. */
	if ((rc = dig_level_check(out, err))) {
		char prefix[PATH_MAX_LEN];
		snprintf(prefix, sizeof prefix, "%s.", path);
		sf_err_prefix(err, prefix);
	}
	return rc;
}

/* ---- writing a level ---- */

static json_t *xy(const dig_level *lv, int cell)
{
	return json_pack("{s:i, s:i}", "x", cell % lv->w, "y", cell / lv->w);
}

/* Appends `item` (stolen) to `arr`; false when either is NULL or out of memory. */
static bool append(json_t *arr, json_t *item)
{
	return item && !json_array_append_new(arr, item);
}

static json_t *cell_json(const dig_level *lv, int c)
{
	json_t *mask = json_array();
	for (int m = 0; mask && m < lv->machines; m++)
		if (((lv->tmask[c] >> m) & 1u) && !append(mask, json_integer(m))) {
			json_decref(mask);
			return NULL;
		}
	const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[c]);
	if (!mask || !ops) {
		json_decref(mask);
		return NULL;
	}
	return json_pack("{s:i, s:i, s:s, s:i, s:o}", "x", c % lv->w, "y", c / lv->w, "terrain",
			 ops->name, "param", lv->tparam[c], "machines", mask);
}

/*
 * The description of `lv` (a level that passes dig_level_check) as a new
 * object: every non-mud cell, every gold, every arrow slot in slot order.
 * NULL when out of memory. See codec.h.
 */
json_t *dig_level_to_json(const dig_level *lv)
{
	int cells = lv->w * lv->h;
	json_t *machines = json_array(), *list = json_array(), *gold = json_array(),
	       *arrows = json_array();
	bool ok = machines && list && gold && arrows;
	for (int m = 0; ok && m < lv->machines; m++)
		ok = append(machines, xy(lv, lv->start[m]));
	/* Every cell but the all-zero default (plain mud without params). */
	for (int c = 0; ok && c < cells; c++)
		if (lv->terrain[c] || lv->tparam[c] || lv->tmask[c])
			ok = append(list, cell_json(lv, c));
	for (int c = 0; ok && c < cells; c++)
		if (lv->gold[c])
			ok = append(gold, json_pack("{s:i, s:i, s:i}", "x", c % lv->w, "y",
						    c / lv->w, "order", lv->gold[c]));
	for (int s = 0; ok && s < dig_slots(lv); s++) {
		int side, index, dir = lv->arrow[s].dir;
		side_of(lv, s, &side, &index);
		ok = dir < 4 && append(arrows, json_pack("{s:s, s:i, s:s, s:i}", "side",
							 SIDE_NAME[side], "index", index, "dir",
							 DIR_NAME[dir], "uses", lv->arrow[s].uses));
	}
	if (!ok) {
		json_decref(machines);
		json_decref(list);
		json_decref(gold);
		json_decref(arrows);
		return NULL;
	}
	const dig_rules *ru = &lv->rules;
	return json_pack("{s:i, s:i, s:i, s:{s:b, s:b, s:b, s:b, s:b}, s:o, s:o, s:o, s:o}",
			 "width", lv->w, "height", lv->h, "turns", lv->turns, "rules", "no_shuffle",
			 ru->no_shuffle, "no_backtrack", ru->no_backtrack, "gold_in_order",
			 ru->gold_in_order, "any_direction", ru->any_direction, "single_use",
			 ru->single_use, "machines", machines, "cells", list, "gold", gold,
			 "arrows", arrows);
}

/*
 * The play state `s` of `lv` as a new object, for a client drawing the
 * position (the check's "state"): where each machine stands and whether it
 * is frozen, the gold still on the grid, every arrow slot with the uses it
 * has left and whether a tap on it is allowed now (false for every arrow
 * once the level is won, as the check refuses any move after the last
 * gold), and every non-mud cell with its one-shot gift spent or not and,
 * for cells that count visits, the counted visits still needed. NULL when
 * out of memory. See codec.h.
 */
json_t *dig_state_to_json(const dig_level *lv, const dig_state *s)
{
	json_t *machines = json_array(), *gold = json_array(), *arrows = json_array(),
	       *cells = json_array();
	bool ok = machines && gold && arrows && cells;
	for (int m = 0; ok && m < lv->machines; m++)
		ok = append(machines,
			    json_pack("{s:i, s:i, s:b}", "x", s->pos[m] % lv->w, "y",
				      s->pos[m] / lv->w, "frozen", (s->frozen >> m) & 1u));
	for (int c = 0; ok && c < lv->w * lv->h; c++)
		if ((s->gold >> c) & 1u)
			ok = append(gold, json_pack("{s:i, s:i, s:i}", "x", c % lv->w, "y",
						    c / lv->w, "order", lv->gold[c]));
	bool won = dig_won(s);
	for (int slot = 0; ok && slot < dig_slots(lv); slot++) {
		int side, index;
		side_of(lv, slot, &side, &index);
		dig_state t = *s;
		dig_cmd cmd;
		bool tappable = !won && dig_arrow_do(lv, &t, slot, &cmd) == 0;
		ok = append(arrows,
			    json_pack("{s:s, s:i, s:i, s:b}", "side", SIDE_NAME[side], "index",
				      index, "uses", s->uses[slot], "tappable", tappable));
	}
	for (int c = 0; ok && c < lv->w * lv->h; c++)
		if (lv->terrain[c] || lv->tparam[c] || lv->tmask[c])
			ok = append(cells, json_pack("{s:i, s:i, s:b, s:i}", "x", c % lv->w, "y",
						     c / lv->w, "spent", (s->spent >> c) & 1u,
						     "visits_left", s->web_left[c]));
	if (!ok) {
		json_decref(machines);
		json_decref(gold);
		json_decref(arrows);
		json_decref(cells);
		return NULL;
	}
	return json_pack("{s:o, s:o, s:o, s:o}", "machines", machines, "gold", gold, "arrows",
			 arrows, "cells", cells);
}

/* ---- tap lists ---- */

/* taps[0..n-1] (slots of lv) as a new array of {"side", "index"}; NULL when out of memory. */
json_t *dig_taps_to_json(const dig_level *lv, const uint8_t *taps, int n)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < n; i++) {
		int side, index;
		side_of(lv, taps[i], &side, &index);
		if (!append(arr,
			    json_pack("{s:s, s:i}", "side", SIDE_NAME[side], "index", index))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/*
 * Reads the tap list `v` (at most `max` taps) into slots; 0, or SF_EINVAL
 * naming "PATH[i].key". Shape only: whether a tap can be played is the
 * replay's business. See codec.h.
 */
int dig_taps_from_json(const json_t *v, const char *path, const dig_level *lv, uint8_t *taps,
		       int max, int *n, sf_err *err)
{
	static const char *const keys[] = { "side", "index" };
	*n = 0;
	if (!json_is_array(v))
		return fail(err, path,
			    "must be an array of taps ({\"side\": \"left\", \"index\": 0}), not %s",
			    v ? type_name(v) : "nothing");
	size_t count = json_array_size(v);
	if (count > (size_t)max)
		return fail(err, path, "has %zu taps; at most %d are allowed", count, max);
	char p[PATH_MAX_LEN];
	for (size_t i = 0; i < count; i++) {
		int slot;
		pathf(p, "%s[%zu]", path, i);
		int rc = read_arrow_ref(json_array_get(v, i), p, lv, keys, 2, &slot, err);
		if (rc)
			return rc;
		taps[i] = (uint8_t)slot;
	}
	*n = (int)count;
	return 0;
}
