/*
 * terrain.h - one module per terrain (terrain_<name>.c), each a table of
 * hooks. The engine, the generator and the codec call these; no other file
 * tests a terrain's type. Every hook may be NULL (the default noted).
 */
#ifndef SF_DIGGER_TERRAIN_H
#define SF_DIGGER_TERRAIN_H

#include <stddef.h>

#include "digger.h"

typedef struct dig_terrain_ops {
	const char *name; /* JSON spelling: "mud", "stone", "web", "treasure", "ice", "lava",
			     "energy" */

	/* ---- rules ---- */
	/* May machine m enter `cell`? NULL: yes. The answer must not depend
	 * on `s` (the solver asks once per level, with the initial state;
	 * tests/test_digger_terrain.c checks it). */
	bool (*can_enter)(const dig_level *lv, const dig_state *s, int cell, int m);
	/*
	 * Machine m has just entered `cell` this turn (all moves of the turn
	 * are already made). Returns whether the gold on the cell (if any) may
	 * be collected by this visit. NULL: true.
	 */
	bool (*on_enter)(const dig_level *lv, dig_state *s, dig_cmd *cmd, int cell, int m);
	/* Once per turn, after every machine moved and every on_enter ran
	 * (cmd->entered, cmd->moved tell what happened). NULL: nothing. */
	void (*after_turn)(const dig_level *lv, dig_state *s, dig_cmd *cmd);
	/* Initial per-cell state (e.g. web_left). NULL: nothing. */
	void (*init_cell)(const dig_level *lv, dig_state *s, int cell);

	/* ---- level description ---- */
	/* Are tparam/tmask sensible for this cell? 0 or SF_EINVAL with a message. */
	int (*check)(const dig_level *lv, int cell, sf_err *err);

	/* ---- generation ---- */
	/*
	 * Place this terrain "in hindsight" on cells of the recorded solution so
	 * that it still works (may also change gold, arrow uses and the turn
	 * budget). Returns how many cells it placed. The generator replays the
	 * solution afterwards and undoes the whole placement if it fails.
	 */
	int (*place)(dig_gen *g);
	/* Red herrings: place this terrain on cells nobody visits. */
	int (*decoy)(dig_gen *g);
} dig_terrain_ops;

/* The module of terrain type t (DIG_T_MUD .. DIG_T_COUNT-1). */
const dig_terrain_ops *dig_terrain_of(int t);
/* By JSON name, or NULL. */
int dig_terrain_by_name(const char *name);

/* The order the generator places terrains in (ice and lava first, energy last). */
extern const int dig_place_order[DIG_T_COUNT];

/* What one visit to a cell gives, as its on_enter hook reports it. */
typedef struct dig_gift {
	uint32_t slots; /* bit i: arrow slot i gets more uses */
	int turns;      /* turns given back */
	bool one_shot;  /* the hook marked the cell spent: it gives this once */
} dig_gift;

/*
 * What machine 0 entering `cell` in state `s` would be given, learnt by
 * running the cell's on_enter hook on a copy of `s` (so without testing the
 * terrain's type); `s` is not changed. The solver and the star rule rely on
 * every module's gift being what a first visit from the start gives and on
 * a gift-giving hook marking its cell spent (tests/test_digger_terrain.c
 * checks both for every module).
 */
void dig_terrain_gift(const dig_level *lv, const dig_state *s, int cell, dig_gift *out);

/*
 * The machines whose visit to `cell` wears its web in `s` (lowers
 * web_left), learnt by one on_enter call per machine on a copy of `s`; 0
 * when web_left is 0. The solver's bound relies on what every module does
 * with web_left, and tests/test_digger_terrain.c checks it for each: a
 * visit lowers it by at most one, and the cell's gold is collected only by
 * the visit that brings it to 0 or a later one.
 */
uint8_t dig_terrain_counters(const dig_level *lv, const dig_state *s, int cell);

/* ---- helpers for the place and decoy hooks (gen_hooks.c) ---- */
/* The taps (0-based, oldest first) at which some machine enters `cell` in
 * g->sol and who entered (`who` may be NULL); writes at most `max`, returns
 * the full count. A start is not an entry. */
int dig_gen_entries(const dig_gen *g, int cell, uint8_t *tap, uint8_t *who, int max);
/* The machines (bit m) that ever stand on `cell` in g->sol, starts included. */
uint8_t dig_gen_visitors(const dig_gen *g, int cell);
/* Cells a hook may still use: on the grid, not in g->taken, no machine's start. */
uint64_t dig_gen_free(const dig_gen *g);
/* A uniformly random cell of `cells` (one draw from g->rng), or -1 when empty. */
int dig_gen_pick(dig_gen *g, uint64_t cells);
/* A red herring's cell: with probability p a random free cell nobody
 * stands on in g->sol, else (or when none is left) -1. */
int dig_gen_decoy_cell(dig_gen *g, double p);
/* True with probability p (one draw from g->rng). */
bool dig_gen_chance(dig_gen *g, double p);
/* Sets `cell` to terrain t with tparam and tmask and adds it to g->taken. */
void dig_gen_put(dig_gen *g, int cell, int t, int tparam, int tmask);

#endif
