/*
 * check.c - rating a play of a Direction Digger level: the star rule and
 * the check operation behind POST /v1/digger/check (codec.h).
 *
 * Stars (docs/digger.md, "## Solver and stars"). The score is the number of
 * taps, lower being better. Three stars at the solver's optimum; one star
 * up to the most taps any play can make, the turn budget plus every turn
 * the level can give back (so every legal solution, the generator's own
 * included, earns at least one); two halfway between. Both bounds come
 * from the level alone, so a level's published thresholds and the ones a
 * check recomputes with the solver are the same numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "../params.h"
#include "../stars.h"
#include "codec.h"
#include "terrain.h"

/*
 * The most taps any play of `lv` can make: lv->turns plus, for every cell,
 * the turns a first visit to it gives back from the start state
 * (dig_terrain_gift, so energy counts without being named here). Exact
 * because every gift of turns is one-shot (terrain.h).
 */
int dig_max_taps(const dig_level *lv)
{
	dig_state start;
	dig_state_init(lv, &start);
	int taps = lv->turns;
	for (int c = 0; c < lv->w * lv->h; c++) {
		dig_gift gift;
		dig_terrain_gift(lv, &start, c, &gift);
		taps += gift.turns;
	}
	return taps;
}

/*
 * The thresholds [one, two, three] of `lv` for a proven optimum of
 * `optimum` taps (stars_lower_bounds(optimum, dig_max_taps(lv))). 0, or
 * SF_EINVAL when optimum is outside 0..DIG_MAX_MOVES.
 */
int dig_thresholds(const dig_level *lv, int optimum, int thresholds[3], sf_err *err)
{
	if (optimum < 0 || optimum > DIG_MAX_MOVES)
		return sf_err_set(err, SF_EINVAL, "optimum %d taps is outside 0..%d", optimum,
				  DIG_MAX_MOVES);
	return stars_lower_bounds(optimum, dig_max_taps(lv), thresholds, err);
}

/* ---- the check operation ---- */

typedef struct play {
	dig_level lv;
	uint8_t taps[DIG_MAX_MOVES];
	int ntaps;
	dig_state s;
	dig_solve_result opt;
} play;

/*
 * Reads a body {"level", "moves"} (the check's and the hint's) into `lv`
 * and taps[0..*ntaps-1] (room for DIG_MAX_MOVES). 0, or SF_EINVAL naming
 * the JSON path of the first problem. See codec.h.
 */
int dig_play_read(const json_t *body, dig_level *lv, uint8_t *taps, int *ntaps, sf_err *err)
{
	if (!json_is_object(body))
		return sf_err_set(err, SF_EINVAL,
				  "body: must be an object with level and moves, not %s",
				  json_is_array(body) ? "an array" : "another JSON value");
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)body, key, v)
	{
		if (strcmp(key, "level") && strcmp(key, "moves")) {
			char q[SF_QUOTED_KEY];
			sf_quote_key(key, q);
			return sf_err_set(err, SF_EINVAL,
					  "body: unknown key \"%s\" (allowed: level, moves); the "
					  "level's description goes under level",
					  q);
		}
	}
	int rc = dig_level_from_json(json_object_get(body, "level"), "level", lv, err);
	if (rc)
		return rc;
	return dig_taps_from_json(json_object_get(body, "moves"), "moves", lv, taps, DIG_MAX_MOVES,
				  ntaps, err);
}

/*
 * Plays taps[0..ntaps-1] from the start of `lv`. With `keep`, states[i]
 * becomes the state after the first i taps (ntaps + 1 entries); without
 * it, states[0] is the only state, played in place. 0, or SF_EINVAL naming
 * the first move that cannot be played ("moves[3]: this tap is not
 * allowed: ...", or a move after the level was already solved); the last
 * state written is then the state before that move.
 */
static int replay(const dig_level *lv, const uint8_t *taps, int ntaps, dig_state *states, bool keep,
		  sf_err *err)
{
	uint32_t tapped = 0; /* bit i: slot i tapped before */
	dig_cmd cmd;
	dig_state *s = states;
	dig_state_init(lv, s);
	for (int i = 0; i < ntaps; i++) {
		if (keep) {
			s[1] = s[0];
			s++;
		}
		if (dig_won(s))
			return sf_err_set(err, SF_EINVAL,
					  "moves[%d]: the level is already solved after moves[%d]",
					  i, i - 1);
		int slot = taps[i];
		if (dig_arrow_do(lv, s, slot, &cmd) != 0)
			return sf_err_set(err, SF_EINVAL, "moves[%d]: this tap is not allowed: %s",
					  i, dig_arrow_refusal(lv, s, slot, (tapped >> slot) & 1u));
		tapped |= UINT32_C(1) << slot;
	}
	return 0;
}

/* Plays the taps into *s (replay in place); *s is the state before a
 * refused move. See codec.h. */
int dig_play_replay(const dig_level *lv, const uint8_t *taps, int ntaps, dig_state *s, sf_err *err)
{
	return replay(lv, taps, ntaps, s, false, err);
}

/* Plays the taps keeping every prefix's state in after[]. See codec.h. */
int dig_play_replay_prefixes(const dig_level *lv, const uint8_t *taps, int ntaps, dig_state *after,
			     sf_err *err)
{
	return replay(lv, taps, ntaps, after, true, err);
}

/* The check's solver budget: the largest solver_states of any difficulty's defaults. */
uint64_t dig_check_solver_states(void)
{
	uint64_t most = 0;
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		if (p.solver_states > most)
			most = p.solver_states;
	}
	return most;
}

/* See codec.h. */
const char *dig_solve_status_name(int status)
{
	return status == DIG_SOLVED       ? "solved"
	       : status == DIG_UNSOLVABLE ? "unsolvable"
					  : "unknown";
}

/*
 * The check operation: reads {"level", "moves"}, replays the moves, solves
 * the level within dig_check_solver_states() and rates the play. A new
 * object, or NULL with SF_EINVAL naming the JSON path of the first problem
 * (body, level or move), or SF_ENOMEM. Thread-safe; allocates its own
 * state. See codec.h for the answer's keys.
 */
json_t *dig_check_json(const json_t *body, sf_err *err)
{
	play *p = calloc(1, sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory checking a play");
		return NULL;
	}
	json_t *doc = NULL;
	if (dig_play_read(body, &p->lv, p->taps, &p->ntaps, err) ||
	    dig_play_replay(&p->lv, p->taps, p->ntaps, &p->s, err) ||
	    dig_solve(&p->lv, dig_check_solver_states(), &p->opt, err))
		goto done;
	int gold_total = dig_gold_count(&p->lv);
	int left = __builtin_popcountll(p->s.gold);
	bool solved = dig_won(&p->s);
	int t[3];
	json_t *thresholds = json_null(), *stars = json_null(), *optimum = json_null();
	const char *reason = NULL;
	if (p->opt.status == DIG_SOLVED && !dig_thresholds(&p->lv, p->opt.turns, t, err)) {
		thresholds = json_pack("[iii]", t[0], t[1], t[2]);
		stars = json_integer(solved ? stars_earned_lower(p->ntaps, t) : 0);
		optimum = json_integer(p->opt.turns);
	} else if (p->opt.status == DIG_UNSOLVABLE) {
		reason = "the solver proved that the level cannot be solved";
	} else {
		reason = "the solver could not prove the optimum within its work bound (the "
			 "largest the generator uses) and the longest play it searches";
	}
	doc = json_pack("{s:b, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:{s:s, s:I}}", "solved", solved,
			"gold", gold_total - left, "gold_total", gold_total, "turns", p->ntaps,
			"turns_left", p->s.turns_left, "stars", stars, "thresholds", thresholds,
			"optimum", optimum, "solver", "status",
			dig_solve_status_name(p->opt.status), "states", (json_int_t)p->opt.states);
	if (doc && json_object_set_new(doc, "state", dig_state_to_json(&p->lv, &p->s))) {
		json_decref(doc);
		doc = NULL;
	}
	if (doc && reason && json_object_set_new(doc, "reason", json_string(reason))) {
		json_decref(doc);
		doc = NULL;
	}
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing the check");
done:
	free(p);
	return doc;
}
