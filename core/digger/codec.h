/*
 * codec.h - the JSON codec of Direction Digger: a level's description, tap
 * lists, the kind's star rule and the check operation (docs/digger.md,
 * "## Level format").
 *
 * A level description is the JSON object a level document carries as its
 * `puzzle` and a client sends back to POST /v1/digger/check:
 *
 *   {"width": 5, "height": 4, "turns": 9,
 *    "rules": {"no_shuffle": false, "no_backtrack": false,
 *              "gold_in_order": false, "any_direction": false,
 *              "single_use": true},
 *    "machines": [{"x": 0, "y": 1}, ...],            machine m at index m
 *    "cells": [{"x": 2, "y": 1, "terrain": "web", "param": 2,
 *               "machines": [0]}, ...],             every cell that is not
 *                                                   plain mud
 *    "gold": [{"x": 3, "y": 0, "order": 1}, ...],
 *    "arrows": [{"side": "left", "index": 0, "dir": "right", "uses": 1},
 *               ...]}                               every slot, slot order
 *
 * Terrains are named by their modules (terrain.h); this codec never tests a
 * terrain's type. A tap (a move) is {"side": "left", "index": 1}: the arrow
 * left of row 1. Every reader validates completely (JSON types, ranges,
 * unknown keys, duplicates, then dig_level_check) and names the JSON path
 * of the first problem in its message ("level.arrows[3].uses: must be an
 * integer 0..255"); no input makes it crash.
 */
#ifndef SF_DIGGER_CODEC_H
#define SF_DIGGER_CODEC_H

#include <jansson.h>

#include "digger.h"

/* The most moves a tap list may hold: more than any legal play can make. */
#define DIG_MAX_MOVES 1024

/*
 * The description of `lv` (which passes dig_level_check) as a new JSON
 * object, or NULL when out of memory. dig_level_from_json() of the result
 * gives back `lv` byte for byte, provided `lv` keeps its unused bytes zero.
 */
json_t *dig_level_to_json(const dig_level *lv);

/*
 * Reads the description `v` into `out` (every byte written; unused ones
 * zero). `path` names `v` in messages ("level", "puzzle"). Returns 0, or
 * SF_EINVAL with a message starting with the JSON path of the first problem
 * ("level.cells[2].terrain: ..."); `out` is then unspecified. A level that
 * reads passes dig_level_check().
 */
int dig_level_from_json(const json_t *v, const char *path, dig_level *out, sf_err *err);

/*
 * The play state `s` of `lv` as a new object {"machines": [{x, y, frozen}],
 * "gold": [{x, y, order}] (still on the grid), "arrows": [{side, index,
 * uses, tappable}] (every slot, in slot order), "cells": [{x, y, spent,
 * visits_left}] (every non-mud cell)}, or NULL when out of memory: what a
 * client needs to draw a position (the check's "state").
 */
json_t *dig_state_to_json(const dig_level *lv, const dig_state *s);

/* The tap list taps[0..n-1] (slots of lv) as a new JSON array of
 * {"side", "index"} objects, or NULL when out of memory. */
json_t *dig_taps_to_json(const dig_level *lv, const uint8_t *taps, int n);

/*
 * Reads a tap list `v` (an array of at most `max` {"side", "index"}
 * objects) for level `lv` into taps[0..*n-1] as slots. Returns 0, or
 * SF_EINVAL naming the path ("moves[4].index: ..."). Only the shape is
 * checked here, not whether the taps can be played.
 */
int dig_taps_from_json(const json_t *v, const char *path, const dig_level *lv, uint8_t *taps,
		       int max, int *n, sf_err *err);

/*
 * The most taps any play of `lv` can make: the turn budget plus every turn
 * a first visit to a cell gives back (measured through the terrain hooks,
 * so energy counts without being named here).
 */
int dig_max_taps(const dig_level *lv);

/*
 * The star thresholds of a level whose solver optimum is `optimum` taps:
 * [one, two, three], lower is better (docs/digger.md, "## Solver and
 * stars"): three at the optimum, one at dig_max_taps() (at least optimum +
 * 2), two halfway between, rounded towards three. 0, or SF_EINVAL when
 * optimum is out of range.
 */
int dig_thresholds(const dig_level *lv, int optimum, int thresholds[3], sf_err *err);

/*
 * The check operation (sf_kind.check): body {"level": description,
 * "moves": tap list}. Replays the moves and rates them: a new object
 * {"solved", "gold", "gold_total", "turns", "turns_left", "stars",
 * "thresholds", "optimum", "solver"} (docs/digger.md). The solver's work is
 * bounded by the largest budget the generator proves its levels within
 * (dig_check_solver_states()), so every generated level gets its
 * thresholds; past it "thresholds" is null with a "reason". NULL with SF_EINVAL
 * naming the JSON path of a bad body, level or move ("moves[3]: ..."), or
 * SF_ENOMEM.
 */
json_t *dig_check_json(const json_t *body, sf_err *err);

/*
 * The body of a check or a hint, {"level": description, "moves": [...]}:
 * the level into `lv`, the moves as slots into taps[0..*ntaps-1] (room for
 * DIG_MAX_MOVES). 0, or SF_EINVAL naming the JSON path of the first
 * problem ("body: ...", "level.turns: ...", "moves[2].side: ...").
 */
int dig_play_read(const json_t *body, dig_level *lv, uint8_t *taps, int *ntaps, sf_err *err);

/*
 * Replays taps[0..ntaps-1] from the start of `lv` into *s: 0, or SF_EINVAL
 * naming the first move that cannot be played ("moves[3]: this tap is not
 * allowed: the arrow has no uses left"), also a move made after the level
 * was already solved.
 */
/* A solver status as the check and the hint write it: "solved",
 * "unsolvable" or "unknown". */
const char *dig_solve_status_name(int status);

int dig_play_replay(const dig_level *lv, const uint8_t *taps, int ntaps, dig_state *s, sf_err *err);

/*
 * As dig_play_replay, with the same messages, but keeps the state after
 * every prefix: after[i] is the state after taps[0..i-1], so `after` needs
 * ntaps + 1 entries. On SF_EINVAL for moves[i], after[0..i] are filled and
 * after[i] is the state before the refused move; the rest are unspecified.
 * (The hint's undo search solves from these prefixes.)
 */
int dig_play_replay_prefixes(const dig_level *lv, const uint8_t *taps, int ntaps, dig_state *after,
			     sf_err *err);

/*
 * The hint operation behind POST /v1/digger/hint (hint.c): body as the
 * check's. The answer says whether the position after the moves can still
 * win and the next tap of an optimal play, or how many taps to undo to get
 * back to a winnable position (docs/digger.md, "## Hints"). A new object,
 * or NULL with SF_EINVAL naming the JSON path of the first problem, or
 * SF_ENOMEM. Thread-safe; a pure function of the body.
 */
json_t *dig_hint_json(const json_t *body, sf_err *err);

/* The solver budget of dig_check_json(): the largest of the difficulties'
 * solver_states (dig_gen_params_default). */
uint64_t dig_check_solver_states(void);

#endif
