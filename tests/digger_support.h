/*
 * digger_support.h - helpers shared by the digger test suites: level
 * literals written as small pictures, slot names, and random levels.
 *
 * Also two fixtures: a hand-made level with every parameterised terrain,
 * and a set of generated puzzles of every difficulty.
 *
 * A level picture lists rows top to bottom, separated by '/', each row a
 * space-separated list of cells. A cell is
 *
 *     [terrain][param][:mask][$[order]][@machine]
 *
 * terrain: '.' mud (also the default), '#' stone, 'w' web, 't' treasure,
 * 'i' ice, 'l' lava, 'e' energy; param and mask are decimal tparam and
 * tmask; '$' puts gold there (order 1 unless given); '@m' starts machine m
 * there. "@0" is machine 0 on mud, "w2:1$" a web worn by two visits of
 * machine 0 over gold, "#:2" stone that only machine 1 may cross.
 *
 * A slot is named by side and index: L<y> (left of row y), R<y> (right of
 * row y), T<x> (top of column x), B<x> (bottom of column x). An arrow spec
 * is a space-separated list of "<slot>=<uses>[dir]", dir one of ^ > v <.
 */
#ifndef SF_TEST_DIGGER_SUPPORT_H
#define SF_TEST_DIGGER_SUPPORT_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digger/digger.h"
#include "digger/terrain.h"
#include "rng.h"

/* Parses a level picture into lv: every arrow into the grid with `uses`
 * uses, `turns` turns, plain rules. Returns 0, or -1 on a malformed picture. */
static inline int dig_picture(const char *pic, int uses, int turns, dig_level *lv)
{
	memset(lv, 0, sizeof *lv);
	int x = 0, y = 0, w = -1;
	const char *p = pic;
	while (*p) {
		while (*p == ' ')
			p++;
		if (*p == '/' || *p == '\0') {
			if (w < 0)
				w = x;
			else if (x != w)
				return -1;
			y++;
			x = 0;
			if (*p == '/')
				p++;
			continue;
		}
		if (y * (w < 0 ? DIG_MAX_W : w) + x >= DIG_MAX_CELLS)
			return -1;
		/* The cell index needs w, unknown on row 0 until its end: row 0
		 * cells use index x, which is right for any w. */
		int c = y * (w < 0 ? 0 : w) + x;
		const char *t = strchr(".#wtile", *p);
		if (t && *p) {
			static const uint8_t TYPE[] = { DIG_T_MUD,      DIG_T_STONE, DIG_T_WEB,
							DIG_T_TREASURE, DIG_T_ICE,   DIG_T_LAVA,
							DIG_T_ENERGY };
			lv->terrain[c] = TYPE[t - ".#wtile"];
			p++;
		}
		if (*p >= '0' && *p <= '9')
			lv->tparam[c] = (uint8_t)strtol(p, (char **)&p, 10);
		if (*p == ':') {
			p++;
			lv->tmask[c] = (uint8_t)strtol(p, (char **)&p, 10);
		}
		if (*p == '$') {
			p++;
			lv->gold[c] = 1;
			if (*p >= '0' && *p <= '9')
				lv->gold[c] = (uint8_t)strtol(p, (char **)&p, 10);
		}
		if (*p == '@') {
			p++;
			int m = (int)strtol(p, (char **)&p, 10);
			if (m < 0 || m >= DIG_MAX_MACHINES)
				return -1;
			lv->start[m] = (uint8_t)c;
			if (m + 1 > lv->machines)
				lv->machines = m + 1;
		}
		if (*p != ' ' && *p != '/' && *p != '\0')
			return -1;
		x++;
	}
	if (w < 0)
		w = x;
	else if (x != 0 && x != w)
		return -1;
	if (x != 0)
		y++;
	lv->w = w;
	lv->h = y;
	lv->turns = turns;
	for (int i = 0; i < dig_slots(lv); i++) {
		lv->arrow[i].dir = (uint8_t)dig_slot_default_dir(lv, i);
		lv->arrow[i].uses = (uint8_t)uses;
	}
	return 0;
}

/* The slot named at *p ("L0", "T2", ...), advancing *p; -1 when malformed. */
static inline int dig_slot_named(const dig_level *lv, const char **p)
{
	while (**p == ' ')
		(*p)++;
	char side = **p;
	if (!side)
		return -1;
	(*p)++;
	int i = (int)strtol(*p, (char **)p, 10);
	switch (side) {
	case 'L':
		return i < lv->h ? dig_slot_row_left(lv, i) : -1;
	case 'R':
		return i < lv->h ? dig_slot_row_right(lv, i) : -1;
	case 'T':
		return i < lv->w ? dig_slot_col_top(lv, i) : -1;
	case 'B':
		return i < lv->w ? dig_slot_col_bottom(lv, i) : -1;
	default:
		return -1;
	}
}

/* Applies an arrow spec ("L0=2 T1=0 L1=1^"); -1 when malformed. */
static inline int dig_arrows(dig_level *lv, const char *spec)
{
	const char *p = spec;
	while (p && *p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		int slot = dig_slot_named(lv, &p);
		if (slot < 0 || *p != '=')
			return -1;
		p++;
		lv->arrow[slot].uses = (uint8_t)strtol(p, (char **)&p, 10);
		const char *d = *p ? strchr("^>v<", *p) : NULL;
		if (d) {
			lv->arrow[slot].dir = (uint8_t)(d - "^>v<");
			p++;
		}
	}
	return 0;
}

/* The cell (x, y) of lv. */
static inline int dig_cell(const dig_level *lv, int x, int y)
{
	return y * lv->w + x;
}

/*
 * A random level that passes dig_level_check: a w x h grid, `machines`
 * machines, every terrain with random valid parameters, gold on 1..4 cells,
 * arrows with 0..2 uses (random directions under any_direction), `turns`
 * turns, random rules when `random_rules`.
 */
static inline void dig_random_level(rng *r, int w, int h, int machines, int turns,
				    bool random_rules, dig_level *lv)
{
	memset(lv, 0, sizeof *lv);
	lv->w = w;
	lv->h = h;
	lv->machines = machines;
	lv->turns = turns;
	if (random_rules) {
		lv->rules.no_shuffle = rng_below(r, 3) == 0;
		lv->rules.no_backtrack = rng_below(r, 4) == 0;
		lv->rules.gold_in_order = rng_below(r, 4) == 0;
		lv->rules.any_direction = rng_below(r, 3) == 0;
	}
	int cells = w * h;
	uint64_t taken = 0;
	for (int m = 0; m < machines; m++) {
		int c;
		do
			c = (int)rng_below(r, (uint64_t)cells);
		while ((taken >> c) & 1u);
		taken |= UINT64_C(1) << c;
		lv->start[m] = (uint8_t)c;
	}
	unsigned all = (1u << machines) - 1u;
	for (int c = 0; c < cells; c++) {
		int t = (int)rng_below(r, 14);
		t = t >= DIG_T_COUNT ? DIG_T_MUD : t;
		if (t == DIG_T_STONE && ((taken >> c) & 1u))
			t = DIG_T_MUD; /* a start cell must be enterable by its machine */
		lv->terrain[c] = (uint8_t)t;
		switch (t) {
		case DIG_T_STONE:
			lv->tmask[c] = (uint8_t)(rng_below(r, 2) ? 0 : rng_below(r, all + 1u));
			break;
		case DIG_T_WEB:
			lv->tparam[c] = (uint8_t)(1 + rng_below(r, 3));
			lv->tmask[c] = (uint8_t)(rng_below(r, 2) ? 0 : rng_below(r, all + 1u));
			break;
		case DIG_T_TREASURE:
			lv->tparam[c] = (uint8_t)(1 + rng_below(r, 15));
			break;
		case DIG_T_ENERGY:
			lv->tparam[c] = (uint8_t)(1 + rng_below(r, 3));
			break;
		default:
			break;
		}
	}
	int ngold = 1 + (int)rng_below(r, 4);
	if (ngold > cells - machines)
		ngold = cells - machines;
	for (int k = 1; k <= ngold; k++) {
		int c;
		do
			c = (int)rng_below(r, (uint64_t)cells);
		while (((taken >> c) & 1u) || lv->gold[c]);
		lv->gold[c] = (uint8_t)k;
	}
	for (int i = 0; i < dig_slots(lv); i++) {
		lv->arrow[i].dir = lv->rules.any_direction ? (uint8_t)rng_below(r, 4)
							   : (uint8_t)dig_slot_default_dir(lv, i);
		int u = (int)rng_below(r, 5);
		lv->arrow[i].uses = (uint8_t)(u >= 3 ? 1 : u);
	}
}

/*
 * A hand-made 4x3 level with every parameterised terrain:
 *
 *   y0:  M0  .   W*  E        M0 machine 0, W* web (1 visit) over gold 1,
 *   y1:  .   S0  .   .        E energy (+2), S0 stone machine 0 may pass,
 *   y2:  T   g   .   M1       T treasure (left-of-row arrow), g gold 2
 *
 * Solution: left of row 0 twice (machine 0 through (1,0) onto the web),
 * right of row 2 twice (machine 1 onto the gold): 4 taps.
 */
static inline void dig_handmade(dig_level *lv)
{
	memset(lv, 0, sizeof *lv);
	lv->w = 4;
	lv->h = 3;
	lv->turns = 6;
	lv->machines = 2;
	lv->start[0] = 0;
	lv->start[1] = 11;
	lv->terrain[2] = (uint8_t)dig_terrain_by_name("web");
	lv->tparam[2] = 1;
	lv->terrain[3] = (uint8_t)dig_terrain_by_name("energy");
	lv->tparam[3] = 2;
	lv->terrain[5] = (uint8_t)dig_terrain_by_name("stone");
	lv->tmask[5] = 1;
	lv->terrain[8] = (uint8_t)dig_terrain_by_name("treasure");
	lv->tparam[8] = 1;
	lv->gold[2] = 1;
	lv->gold[9] = 2;
	for (int s = 0; s < dig_slots(lv); s++)
		lv->arrow[s].dir = (uint8_t)dig_slot_default_dir(lv, s);
	lv->arrow[dig_slot_row_left(lv, 0)].uses = 2;
	lv->arrow[dig_slot_row_right(lv, 2)].uses = 2;
	lv->arrow[dig_slot_col_top(lv, 1)].uses = 1;
	lv->arrow[dig_slot_col_bottom(lv, 0)].uses = 1;
}

/*
 * `per` generated puzzles of every difficulty (seeds 1000 d + k), in
 * difficulty order, as a new array (free() it) of *n items; NULL, with the
 * failure on stderr, when one cannot be generated or memory runs out.
 */
static inline dig_puzzle *dig_sample_puzzles(int per, int *n)
{
	dig_puzzle *out = calloc((size_t)(DIG_DIFFICULTY_COUNT * per), sizeof *out);
	*n = 0;
	for (int d = 0; out && d < DIG_DIFFICULTY_COUNT; d++)
		for (int k = 0; k < per; k++) {
			dig_gen_params p;
			dig_gen_params_default(&p, (dig_difficulty)d);
			sf_err err = { 0 };
			if (dig_generate(&p, 1000u * (uint64_t)d + (uint64_t)k, &out[*n], &err)) {
				fprintf(stderr, "dig_generate difficulty %d seed %d: %s\n", d, k,
					err.msg);
				free(out);
				return NULL;
			}
			(*n)++;
		}
	return out;
}

/* ---- a breadth-first oracle over whole states ---- */

/* What the oracles answer when no play wins. */
#define NO_WIN 1000
/* The bytes of a state that matter: all but turns_used (and the padding after it). */
#define STATE_BYTES offsetof(dig_state, turns_used)

typedef struct bfs_set {
	dig_state *state; /* [cap] */
	uint32_t *slot;   /* open addressing: 0 empty, else index + 1 */
	uint64_t mask;
	uint32_t n, cap;
} bfs_set;

static inline uint64_t state_hash(const dig_state *s)
{
	const uint8_t *p = (const uint8_t *)s;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < STATE_BYTES; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* Adds s unless present: 1 added, 0 present, -1 full. */
static inline int bfs_add(bfs_set *set, const dig_state *s)
{
	uint64_t i = state_hash(s) & set->mask;
	for (; set->slot[i]; i = (i + 1) & set->mask)
		if (memcmp(&set->state[set->slot[i] - 1], s, STATE_BYTES) == 0)
			return 0;
	if (set->n == set->cap)
		return -1;
	set->state[set->n] = *s;
	set->slot[i] = ++set->n;
	return 1;
}

/*
 * The fewest taps that win lv from the play state `from`, by breadth-first
 * search over distinct whole states with nothing but the rules engine:
 * NO_WIN when the reachable states hold no win, -1 when more than
 * max_states are reachable before the answer is known.
 */
static inline int bfs_from(const dig_level *lv, const dig_state *from, uint32_t max_states)
{
	bfs_set set = { .cap = max_states, .mask = 1 };
	while (set.mask + 1 < 2 * (uint64_t)max_states)
		set.mask = set.mask * 2 + 1;
	/* calloc, not malloc: gcc cannot see that bfs_add() fills before it reads */
	set.state = calloc(max_states, sizeof *set.state);
	set.slot = calloc(set.mask + 1, sizeof *set.slot);
	if (!set.state || !set.slot) {
		fprintf(stderr, "bfs_from: out of memory for %u states\n", max_states);
		abort();
	}
	dig_state s = *from;
	dig_cmd cmd;
	int answer = dig_won(&s) ? 0 : NO_WIN;
	bfs_add(&set, &s);
	for (uint32_t lo = 0, depth = 1; answer == NO_WIN && lo < set.n; depth++) {
		uint32_t hi = set.n;
		for (uint32_t i = lo; i < hi && answer == NO_WIN; i++) {
			s = set.state[i];
			for (int slot = 0; slot < dig_slots(lv) && answer == NO_WIN; slot++) {
				if (dig_arrow_do(lv, &s, slot, &cmd) != 0)
					continue;
				if (dig_won(&s))
					answer = (int)depth;
				else if (bfs_add(&set, &s) < 0)
					answer = -1;
				dig_arrow_undo(&s, &cmd);
			}
		}
		lo = hi;
	}
	free(set.state);
	free(set.slot);
	return answer;
}

#endif
