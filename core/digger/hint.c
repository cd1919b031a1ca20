/*
 * hint.c - hints for players: the hint operation behind POST
 * /v1/digger/hint (docs/digger.md, "## Hints").
 *
 * A hint replays the player's moves (with the check's parser and replay,
 * so both operations refuse a bad move with the same message), then asks
 * the solver from that position (dig_solve_from). Winnable: the first tap
 * of the optimal play the solver returns, and how many taps that play
 * needs; following hints one tap at a time therefore wins in exactly that
 * many taps, because after an optimal play's first tap the rest of it is
 * optimal from there (the optimum drops by exactly one), whichever optimal
 * play the next solve returns. Dead (the solver proved no win is left):
 * the positions after shorter prefixes of the play are solved in turn,
 * one tap undone at a time, so the first winnable one found is the fewest
 * taps to undo; its optimal play comes with it. The states after every
 * prefix are kept, so undoing costs no replays.
 *
 * The budget. Each solve may store at most dig_hint_solver_states()
 * states, the check's budget (500 000, the largest any generator preset
 * uses, hardest's and expert's): every level the generator emits was proved within it from the
 * start, and positions further on are smaller problems as a rule (fewer
 * turns, uses and gold). The undo search, one solve per prefix, stops
 * once the solves together expanded DIG_HINT_UNDO_WORK times that, so a
 * hint costs at most about six solves' work (a single 500 000-state solve
 * of an expert level takes about 1 s on one core) however
 * long the play. When a bound is hit the answer says so rather than
 * guess: the status is DIG_UNKNOWN (or undo_status, for the undo). That is
 * a property of the level and the position, which a retry would not
 * change, so the service answers 200 with winnable (or undo) null and a
 * reason, as the check does for an unproved optimum, not 503.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* The hint's solver budget per solve: the check's (dig_check_solver_states). */
static uint64_t dig_hint_solver_states(void)
{
	return dig_check_solver_states();
}

static void hint_init(dig_hint *out)
{
	memset(out, 0, sizeof *out);
	out->status = DIG_UNKNOWN;
	out->undo_status = DIG_UNKNOWN;
	out->plan.status = DIG_UNKNOWN;
}

/*
 * The hint for the position after[ntaps], where after[i] is the state
 * after the play's first i taps (both entry points replay once, each with
 * its own messages, and hand the prefixes here): solves from the position,
 * and when it is dead from the shorter prefixes, as dig_hint_find says.
 * *out as hint_init left it. 0, or the solver's error.
 */
static int hint_from(const dig_level *lv, const dig_state *after, int ntaps, uint64_t max_states,
		     dig_hint *out, sf_err *err)
{
	int rc = dig_solve_from(lv, &after[ntaps], max_states, &out->plan, err);
	if (rc)
		return rc;
	out->states = out->plan.states;
	out->status = out->plan.status;
	out->won = out->plan.status == DIG_SOLVED && out->plan.turns == 0;
	out->undo = out->status == DIG_SOLVED ? 0 : -1;
	if (out->status != DIG_UNSOLVABLE)
		return 0;
	/* Dead: undo one tap at a time; the first winnable prefix is the nearest. */
	out->undo_status = DIG_UNSOLVABLE;
	uint64_t work = max_states > UINT64_MAX / DIG_HINT_UNDO_WORK
				? UINT64_MAX
				: DIG_HINT_UNDO_WORK * max_states;
	for (int k = 1; k <= ntaps; k++) {
		if (out->states >= work) {
			out->undo_status = DIG_UNKNOWN; /* the whole hint's work bound */
			break;
		}
		rc = dig_solve_from(lv, &after[ntaps - k], max_states, &out->plan, err);
		if (rc)
			return rc;
		out->states += out->plan.states;
		if (out->plan.status == DIG_UNSOLVABLE)
			continue;
		out->undo_status = out->plan.status;
		if (out->plan.status == DIG_SOLVED)
			out->undo = k;
		break;
	}
	return 0;
}

/*
 * See digger.h. The states after each prefix live in one allocation of
 * ntaps + 1 states (about 200 bytes each).
 */
int dig_hint_find(const dig_level *lv, const uint8_t *taps, int ntaps, uint64_t max_states,
		  dig_hint *out, sf_err *err)
{
	hint_init(out);
	int rc = dig_level_check(lv, err);
	if (rc)
		return rc;
	if (ntaps < 0)
		return sf_err_set(err, SF_EINVAL, "hint: %d taps", ntaps);
	dig_state *after = malloc((size_t)(ntaps + 1) * sizeof *after);
	if (!after)
		return sf_err_set(err, SF_ENOMEM, "out of memory for a hint of %d taps", ntaps);
	dig_cmd cmd;
	dig_state_init(lv, &after[0]);
	for (int i = 0; i < ntaps; i++) {
		after[i + 1] = after[i];
		if (dig_won(&after[i]) || dig_arrow_do(lv, &after[i + 1], taps[i], &cmd) != 0) {
			rc = sf_err_set(err, SF_EINVAL, "hint: tap %d (slot %d) cannot be played",
					i, taps[i]);
			goto done;
		}
	}
	rc = hint_from(lv, after, ntaps, max_states, out, err);
done:
	free(after);
	return rc;
}

/* The tap `slot` as a move object {"side", "index"}, or NULL when out of memory. */
static json_t *move_json(const dig_level *lv, int slot)
{
	uint8_t tap = (uint8_t)slot;
	json_t *one = dig_taps_to_json(lv, &tap, 1);
	json_t *move = one ? json_incref(json_array_get(one, 0)) : NULL;
	json_decref(one);
	return move;
}

/* Working memory of one hint (too large for a worker's stack). */
typedef struct hint_job {
	dig_level lv;
	uint8_t taps[DIG_MAX_MOVES];
	int ntaps;
	dig_state after[DIG_MAX_MOVES + 1]; /* after[i]: the state after i taps */
	dig_hint hint;
} hint_job;

/*
 * The hint operation (codec.h). The answer:
 *   solved       the moves already won the level (then no hint)
 *   winnable     true, false (proved dead) or null (the solver ran out of budget)
 *   turns        moves made; turns_left as the check says
 *   undo         taps to undo to reach a winnable position: 0 when winnable,
 *                k >= 1 when dead, null when unknown or none exists
 *   hint         the next tap of an optimal play from the position (after
 *                the undo when dead), or null
 *   taps_needed  taps that optimal play needs from there, or null
 *   solver       {status of the position's solve, states expanded in all}
 *   reason       when winnable or undo is null, why
 */
json_t *dig_hint_json(const json_t *body, sf_err *err)
{
	hint_job *p = calloc(1, sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory for a hint");
		return NULL;
	}
	json_t *doc = NULL;
	hint_init(&p->hint);
	/* One replay, with the check's messages; the level read passes dig_level_check. */
	if (dig_play_read(body, &p->lv, p->taps, &p->ntaps, err) ||
	    dig_play_replay_prefixes(&p->lv, p->taps, p->ntaps, p->after, err) ||
	    hint_from(&p->lv, p->after, p->ntaps, dig_hint_solver_states(), &p->hint, err))
		goto done;
	const dig_hint *h = &p->hint;
	bool planned = h->plan.status == DIG_SOLVED;
	json_t *winnable = h->status == DIG_SOLVED       ? json_true()
			   : h->status == DIG_UNSOLVABLE ? json_false()
							 : json_null();
	json_t *undo = h->undo >= 0 ? json_integer(h->undo) : json_null();
	json_t *next =
		planned && h->plan.turns > 0 ? move_json(&p->lv, h->plan.taps[0]) : json_null();
	json_t *needed = planned ? json_integer(h->plan.turns) : json_null();
	const char *reason = NULL;
	if (h->status == DIG_UNKNOWN)
		reason = "the solver could not decide within its work bound (the largest the "
			 "generator uses) whether this position can still win";
	else if (h->undo < 0 && h->undo_status == DIG_UNKNOWN)
		reason = "this position cannot win; the solver could not decide within its work "
			 "bound how many taps to undo";
	else if (h->undo < 0)
		reason = "this position cannot win, and neither can the level's start";
	doc = json_pack("{s:b, s:o, s:i, s:i, s:o, s:o, s:o, s:{s:s, s:I}}", "solved", h->won,
			"winnable", winnable, "turns", p->ntaps, "turns_left",
			p->after[p->ntaps].turns_left, "undo", undo, "hint",
			next ? next : json_null(), "taps_needed", needed, "solver", "status",
			dig_solve_status_name(h->status), "states", (json_int_t)h->states);
	if (doc && reason && json_object_set_new(doc, "reason", json_string(reason))) {
		json_decref(doc);
		doc = NULL;
	}
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing the hint");
done:
	free(p);
	return doc;
}
