/*
 * digger.h - Direction Digger puzzles (shared/seeds/003, the devlog): the
 * level, the play state, the rules engine, the solver and the generator.
 *
 * The game: machines stand on a w x h grid. Outside the grid there is one
 * arrow per row side and column side; tapping an arrow moves every machine
 * in that row (or column) one step in the arrow's direction. Collect all
 * the gold within the turn budget.
 *
 * Everything here works on plain C structs with fixed bounds (no
 * allocation in the engine); JSON lives in codec.c. Terrain behaviour lives
 * only in the terrain modules (terrain.h, one file each): the engine and
 * the generator call their hooks and never test a terrain's type.
 *
 * Coordinates: cell = y * w + x, x in [0, w) left to right, y in [0, h) top
 * to bottom. A cell set is a uint64_t bit set (bit `cell`).
 */
#ifndef SF_DIGGER_H
#define SF_DIGGER_H

#include <stdbool.h>
#include <stdint.h>

#include "../err.h"
#include "../rng.h"

#define DIG_MAX_W 10
#define DIG_MAX_H 6
#define DIG_MAX_CELLS 64 /* w * h <= 64, so a cell set is one word */
#define DIG_MAX_MACHINES 6
#define DIG_MAX_ARROWS (2 * (DIG_MAX_W + DIG_MAX_H)) /* 32 arrow slots */
#define DIG_MAX_TURNS 96                             /* taps in any solution */
#define DIG_NONE 0xFF                                /* no cell / no machine */
_Static_assert((DIG_MAX_W * DIG_MAX_H) <= DIG_MAX_CELLS, "every grid's cells fit a 64-bit set");

/* Directions a machine moves in; dx/dy below. */
typedef enum dig_dir { DIG_UP = 0, DIG_RIGHT = 1, DIG_DOWN = 2, DIG_LEFT = 3 } dig_dir;

/*
 * Arrow slots, for a w x h grid (dig_slot_* compute them):
 *   [0, h)             left side of row y      (points RIGHT unless any_direction)
 *   [h, 2h)            right side of row y     (points LEFT)
 *   [2h, 2h + w)       top of column x         (points DOWN)
 *   [2h + w, 2h + 2w)  bottom of column x      (points UP)
 * A row slot acts on every machine in its row, a column slot on every
 * machine in its column, whatever direction the arrow points.
 */
typedef struct dig_arrow {
	uint8_t dir;  /* dig_dir */
	uint8_t uses; /* taps allowed; 0: hidden (never usable unless a treasure gives uses) */
} dig_arrow;

/* Terrain types; behaviour in the matching terrain module. */
typedef enum dig_terrain {
	DIG_T_MUD = 0,  /* plain cell: nothing special */
	DIG_T_STONE,    /* blocks; tmask = machines allowed through (0: nobody) */
	DIG_T_WEB,      /* gold under it counts only on the tparam-th counted visit;
			 * tmask = machines whose visits count (0: anyone) */
	DIG_T_TREASURE, /* arrow treasure: first visit gives +1 use to each arrow in
			 * tparam (bit 0 left-of-row, 1 right-of-row, 2 top-of-column,
			 * 3 bottom-of-column, of the arrows acting on this cell) */
	DIG_T_ICE,      /* a machine that enters it is frozen (never moves) */
	DIG_T_LAVA,     /* any machine entering it unfreezes every machine, resolved
			 * after all machines moved that turn */
	DIG_T_ENERGY,   /* first visit gives tparam turns back */
	DIG_T_COUNT
} dig_terrain;

/* Rules in force (devlog "options"); all false: the plain game. */
typedef struct dig_rules {
	bool no_shuffle;    /* a machine never steps straight back to the cell it just left */
	bool no_backtrack;  /* a machine never enters a cell it has stood on (start included) */
	bool gold_in_order; /* gold is collected only in its order 1, 2, ...; entering
			     * a later one leaves it there */
	bool any_direction; /* arrows may point any way, not only into the grid */
	bool single_use;    /* generation: every arrow is used at most once (uses <= 1) */
} dig_rules;

/* A puzzle, as generated and as sent back by clients. */
typedef struct dig_level {
	int w, h;
	dig_rules rules;
	uint8_t terrain[DIG_MAX_CELLS]; /* dig_terrain */
	uint8_t tparam[DIG_MAX_CELLS];  /* see dig_terrain */
	uint8_t tmask[DIG_MAX_CELLS];   /* see dig_terrain; bit m = machine m */
	uint8_t gold[DIG_MAX_CELLS]; /* 0: none; k >= 1: gold, order k (used with gold_in_order) */
	int machines;                /* 1..DIG_MAX_MACHINES */
	uint8_t start[DIG_MAX_MACHINES];
	dig_arrow arrow[DIG_MAX_ARROWS]; /* 2 * (w + h) slots used */
	int turns;                       /* turn budget shown to the player */
} dig_level;

/* The play state: everything a tap can change. Plain bytes, so it can be
 * hashed and compared with memcmp (unused entries are kept zero). */
typedef struct dig_state {
	uint64_t visited[DIG_MAX_MACHINES]; /* cells machine m has stood on */
	uint64_t gold;                      /* cells whose gold is still there */
	uint64_t spent;                     /* one-shot terrains already used up */
	uint8_t pos[DIG_MAX_MACHINES];
	uint8_t prev[DIG_MAX_MACHINES]; /* cell left by the last move, DIG_NONE before */
	uint8_t uses[DIG_MAX_ARROWS];
	uint8_t web_left[DIG_MAX_CELLS]; /* counted visits still needed (web cells) */
	uint8_t frozen;                  /* bit m: machine m is frozen */
	uint8_t next_gold;               /* gold_in_order: order of the next gold */
	int16_t turns_left;
	int16_t turns_used;
} dig_state;

/*
 * An arrow command after dig_arrow_do(): what it did, as an undo log of the
 * state fields it changed (oldest first). Terrain hooks change the state
 * only through dig_set(), so undo restores every byte.
 */
#define DIG_LOG_MAX 160
typedef struct dig_cmd {
	uint8_t arrow;
	uint8_t moved;    /* bit m: machine m moved */
	uint64_t entered; /* cells entered this turn */
	int nlog;
	struct {
		uint16_t off; /* byte offset in dig_state */
		uint8_t size; /* 1, 2 or 8 */
		uint64_t old;
	} log[DIG_LOG_MAX];
} dig_cmd;

/* The per-machine moves an arrow would make (is_valid with the detail). */
typedef struct dig_plan {
	uint8_t selected; /* bit m: machine m is in the arrow's row/column (and not frozen) */
	uint8_t moves;    /* bit m: machine m's move is valid */
	uint8_t to[DIG_MAX_MACHINES];
} dig_plan;

/* ---- geometry ---- */
int dig_slots(const dig_level *lv); /* 2 * (w + h) */
int dig_slot_row_left(const dig_level *lv, int y);
int dig_slot_row_right(const dig_level *lv, int y);
int dig_slot_col_top(const dig_level *lv, int x);
int dig_slot_col_bottom(const dig_level *lv, int x);
/* The four slots acting on `cell`, in treasure-bit order. */
void dig_slots_of_cell(const dig_level *lv, int cell, int out[4]);
/* The cell one step from `cell` in `dir`, or -1 off the grid. */
int dig_step(const dig_level *lv, int cell, int dir);
/* The direction `slot` points in when arrows point into the grid. */
dig_dir dig_slot_default_dir(const dig_level *lv, int slot);
/* Whether `slot` (in range) stands beside a row rather than a column. */
bool dig_slot_is_row(const dig_level *lv, int slot);
/* The cells of the row or column `slot` (in range) acts on. */
uint64_t dig_slot_line(const dig_level *lv, int slot);

/* ---- rules engine (engine.c) ---- */
void dig_state_init(const dig_level *lv, dig_state *s);
/* is_valid: uses left, turns left, at least one machine moves. */
bool dig_arrow_plan(const dig_level *lv, const dig_state *s, int slot, dig_plan *plan);
bool dig_arrow_valid(const dig_level *lv, const dig_state *s, int slot);
/* do: SF_EINVAL (state untouched) when not valid. */
int dig_arrow_do(const dig_level *lv, dig_state *s, int slot, dig_cmd *cmd);
/* undo: restores the state dig_arrow_do() found. */
void dig_arrow_undo(dig_state *s, const dig_cmd *cmd);
/* Records the old value in cmd's log, then writes `value` (size 1, 2 or 8). */
void dig_set(dig_state *s, dig_cmd *cmd, void *field, int size, uint64_t value);
bool dig_won(const dig_state *s); /* all gold collected */
/* The number of gold cells of `lv`. */
int dig_gold_count(const dig_level *lv);
/*
 * Why tapping `slot` in `s` is refused ("the arrow has no uses left", "no
 * turns are left", ...), or NULL when the tap is valid. `tapped`: whether
 * the play tapped the slot before (then a spent arrow hidden at the start
 * reads "no uses left", not "hidden"). A static string.
 */
const char *dig_arrow_refusal(const dig_level *lv, const dig_state *s, int slot, bool tapped);

/*
 * Structural validation of a level (bounds, terrain params, machines on
 * distinct enterable cells, gold counts/orders, arrow directions allowed by
 * the rules): 0, or SF_EINVAL with a message naming the field.
 */
int dig_level_check(const dig_level *lv, sf_err *err);

/*
 * Replays `taps` from the start: 0 with *gold (collected) and *turns (taps
 * made) set, or SF_EINVAL naming the first invalid tap ("move 3: arrow 5 is
 * not valid: ...").
 */
int dig_replay(const dig_level *lv, const uint8_t *taps, int ntaps, int *gold, int *turns,
	       sf_err *err);

/* ---- solver (solve.c) ---- */
typedef struct dig_solve_result {
	int status; /* DIG_SOLVED, DIG_UNSOLVABLE (proved), DIG_UNKNOWN (budget) */
	int turns;  /* minimum taps, when solved */
	uint8_t taps[DIG_MAX_TURNS];
	uint64_t states; /* states expanded */
} dig_solve_result;
enum { DIG_SOLVED = 1, DIG_UNSOLVABLE = 0, DIG_UNKNOWN = -1 };
/* Exhaustive search for the fewest taps that collect all the gold, at
 * most `max_states` distinct states. SF_ENOMEM on allocation failure. */
int dig_solve(const dig_level *lv, uint64_t max_states, dig_solve_result *out, sf_err *err);
/*
 * dig_solve() from the play state `from` (reached by the engine from the
 * start of `lv`) instead of the start: out->turns and out->taps are the
 * taps still needed from `from` (0 when it is already won). dig_solve(lv)
 * is dig_solve_from() of the initial state, result for result.
 */
int dig_solve_from(const dig_level *lv, const dig_state *from, uint64_t max_states,
		   dig_solve_result *out, sf_err *err);
/*
 * The solver's lower bounds on the taps still needed (solve.c's design
 * note): DIG_BOUND_USES, the default: the nearest bound (below) with
 * the uses bound on top, the least total of taps per arrow that gives
 * every gold a walk of some machine that may collect it within the arrow
 * uses left (2 to 5 times fewer states than the assignment bound alone on
 * long hardest searches), and the assignment bound too once a search has
 * expanded 16384 states; DIG_BOUND_ASSIGN, the default before
 * 2026-12-04: the least k for which the gold can be shared among the
 * machines so that each reaches its gold, and each pair of its gold,
 * within k moves (a web's visits counted, walks that never reverse under
 * no_shuffle), the taps of each direction at least the most steps that
 * way any machine needs for its gold, and, once a search has expanded
 * 16384 states, each two gold of two machines within k taps that move
 * only the machines on the tapped line (the pair tables);
 * DIG_BOUND_NEAREST, the first solver's, the farthest gold's distance to
 * its nearest machine (kept as the baseline of bench_digger and the
 * tests); DIG_BOUND_PAIRS, the assignment bound with the pair tables from
 * the first state on (for the tests); DIG_BOUND_ROUTES, the uses bound
 * with the route bound on top (each machine one route through its gold,
 * webs' visits counted: 3.4 times fewer states than DIG_BOUND_USES on the
 * slowest hardest proofs, but dearer per state, so not the default; for
 * the tests). Every bound but DIG_BOUND_NEAREST
 * also drops the states the lone-machine test proves dead (some gold out
 * of reach of each machine walking alone with the arrow uses left).
 */
typedef enum dig_bound {
	DIG_BOUND_ASSIGN = 0,
	DIG_BOUND_NEAREST,
	DIG_BOUND_PAIRS,
	DIG_BOUND_USES,
	DIG_BOUND_ROUTES
} dig_bound;
/* dig_solve_from (from NULL: the start) with the bound `which`. */
int dig_solve_with(const dig_level *lv, const dig_state *from, uint64_t max_states, dig_bound which,
		   dig_solve_result *out, sf_err *err);

/* ---- hints (hint.c) ---- */

/* The undo search of a dead position stops (undo_status DIG_UNKNOWN) once
 * its solves together expanded this many times max_states states. */
#define DIG_HINT_UNDO_WORK 4

/* What a hint found for the position after a play's taps. */
typedef struct dig_hint {
	int status; /* the position: DIG_SOLVED winnable (or won), DIG_UNSOLVABLE
		     * dead (proved), DIG_UNKNOWN (budget) */
	bool won;   /* the position is already won (status DIG_SOLVED, plan of 0 taps) */
	/* Dead positions: the fewest taps to undo to reach a winnable one
	 * (the prefix of ntaps - undo taps), or -1 when none was found (the
	 * level cannot be won at all: undo_status DIG_UNSOLVABLE; or a solve
	 * or the undo search ran out of budget first: DIG_UNKNOWN). 0 for a
	 * winnable position, -1 when the position's own solve ran out of
	 * budget. */
	int undo;
	int undo_status;
	/* An optimal play from the position (winnable) or from the position
	 * after the undo (dead, undo >= 0): status DIG_SOLVED, turns and taps.
	 * Otherwise status is not DIG_SOLVED. */
	dig_solve_result plan;
	uint64_t states; /* states expanded by every solve together */
} dig_hint;

/*
 * The hint for the position after taps[0..ntaps-1] (played from the start
 * of `lv`): solves from it within `max_states`; when it is dead, solves
 * from the shorter prefixes (each within `max_states`), one tap undone at
 * a time, until one is winnable or DIG_HINT_UNDO_WORK * max_states states
 * were expanded in all. Deterministic. 0 with *out filled; SF_EINVAL when `lv` fails
 * dig_level_check, a tap cannot be played or a tap follows a win (no
 * messages naming JSON paths: dig_hint_json replays once with the check's and
 * shares this search);
 * SF_ENOMEM from the solver.
 */
int dig_hint_find(const dig_level *lv, const uint8_t *taps, int ntaps, uint64_t max_states,
		  dig_hint *out, sf_err *err);

/* ---- generator (generate.c) ---- */

/* A recorded solution as the generator made it. */
typedef struct dig_trace {
	int turns; /* taps */
	uint8_t tap[DIG_MAX_TURNS];
	uint8_t pos[DIG_MAX_TURNS + 1][DIG_MAX_MACHINES]; /* after tap t-1 (row 0: start) */
	uint8_t moved[DIG_MAX_TURNS];                     /* bit m: machine m moved at tap t */
} dig_trace;

/* What a terrain module's generation hooks work on. */
typedef struct dig_gen {
	dig_level *lv; /* being built: hooks set terrain/tparam/tmask, gold, arrow uses, turns */
	const dig_trace *sol; /* the recorded solution */
	uint64_t
		taken; /* cells that already have a terrain: never change them (hooks add theirs) */
	uint64_t visited; /* cells any machine stands on in the solution */
	rng *rng;
	double p;          /* placement probability for this terrain, from the difficulty */
	uint32_t terrains; /* bit t: terrain t allowed (ice's hook places lava only if allowed) */
} dig_gen;

typedef enum dig_difficulty {
	DIG_EASIEST = 0,
	DIG_EASY,
	DIG_MEDIUM,
	DIG_HARD,
	DIG_HARDEST,
	DIG_EXPERT,
	DIG_DIFFICULTY_COUNT
} dig_difficulty;

/* What dig_generate() tells its on_solve hook about one solver run. */
typedef struct dig_solve_event {
	int attempt;                    /* the candidate's number, from 1 */
	bool done;                      /* false: about to solve; true: solved and judged */
	const dig_level *level;         /* the candidate */
	const dig_solve_result *result; /* when done: the solver's answer */
	const char *why;                /* when done: "" when accepted, else the rejection's name */
} dig_solve_event;

typedef struct dig_gen_params {
	dig_difficulty difficulty;
	int w, h;          /* 0: from the difficulty */
	int machines;      /* 0: from the difficulty */
	dig_rules rules;   /* defaults from the difficulty */
	uint32_t terrains; /* bit t: terrain t allowed (defaults from the difficulty) */
	bool red_herrings;
	int max_attempts;       /* retries before SF_ERANGE */
	uint64_t solver_states; /* solver budget per candidate */
	dig_bound solver_bound; /* the solver's bound (DIG_BOUND_USES by default) */
	/*
	 * Optional (NULL: never): asked before every candidate, from the
	 * calling thread; true ends dig_generate() with SF_EBUDGET (a cancelled
	 * job, a deadline). Lets a caller stop one long call, not only between
	 * calls.
	 */
	bool (*stop)(void *arg);
	void *stop_arg;
	/*
	 * Optional (NULL: never): told, from the calling thread, just before
	 * each candidate's proof and just after its verdict (the proof, step
	 * 5's checks on the optimal play and step 6's random player), so that
	 * a benchmark can time every proof and see what became of it
	 * (bench_digger's tail table). It changes nothing generated.
	 */
	void (*on_solve)(void *arg, const dig_solve_event *ev);
	void *on_solve_arg;
} dig_gen_params;

/* Fills `p` with difficulty d's preset (see generate.c). */
void dig_gen_params_default(dig_gen_params *p, dig_difficulty d);
/* The preset's name ("easiest" .. "hardest"), or NULL outside the enum. */
const char *dig_difficulty_name(dig_difficulty d);

/* Room for the name of every rejection reason (quality checks and solver
 * verdicts), so that dig_puzzle.rejected never drops one. */
#define DIG_REJECT_NAMES 48

/* A generated puzzle with its proofs. */
typedef struct dig_puzzle {
	dig_level level;
	dig_trace recorded;       /* the generator's solution: its walk's shortcut,
				   * which the level is dressed for */
	dig_solve_result optimal; /* the solver's, status DIG_SOLVED */
	int attempts;             /* candidates tried */
	int solver_runs;          /* candidates that reached the solver */
	int solver_budget;        /* of those, rejected because the budget ran out */
	/* The distinct reasons that rejected candidates, in order of first
	 * rejection: quality check names, "machines placed", "solver budget";
	 * "solver unsolvable" or "solver longer" would mean that the solver and
	 * the engine disagree (a bug: the recorded solution replays). */
	char rejected[DIG_REJECT_NAMES][48];
	int nrejected;
} dig_puzzle;

/* Same seed and params: the same puzzle, byte for byte. SF_ERANGE when no
 * candidate passed in max_attempts. */
int dig_generate(const dig_gen_params *p, uint64_t seed, dig_puzzle *out, sf_err *err);

/*
 * Step 5's verdict on a candidate (generate.c, judge_optimal; step 6, the
 * random player, is not part of it) with
 * difficulty d's thresholds: `optimal` is the solver's answer on `lv`,
 * `plain` the level before its red herrings (lv itself when it has none).
 * 0 when the candidate is accepted; 1 when rejected, with the reason's
 * name in `why` ("solver budget", "red herring needed", "optimal play:
 * solution length", ...).
 */
int dig_judge_optimal(const dig_level *lv, const dig_level *plain, dig_difficulty d,
		      const dig_trace *recorded, const dig_solve_result *optimal, char *why,
		      size_t size);

/*
 * Step 5's first verdict, before the proof (generate.c, judge_shortcut):
 * the recorded solution with every tap dropped that can go (one at a time,
 * the earliest first, while the rest still collects all the gold within
 * the budget; then two at a time where no one can go, and one at a time
 * again) is a play a player can find, so it must pass every quality
 * check under difficulty d's thresholds and leave no more spare taps than
 * d allows. Its trace goes to `shortcut` when not NULL (the recorded one
 * when no tap can go). 0 when it passes; 1 when rejected, with the
 * reason's name in `why` ("shortcut: machines move", "spare taps", ...).
 */
int dig_judge_shortcut(const dig_level *lv, dig_difficulty d, const dig_trace *recorded,
		       dig_trace *shortcut, char *why, size_t size);

/*
 * Plays `taps` on `lv` (gold not needed) and records the trace: taps, each
 * machine's cell after every tap, who moved. 0, or SF_EINVAL naming the
 * first tap that is not valid (*out zeroed).
 */
int dig_trace_build(const dig_level *lv, const uint8_t *taps, int ntaps, dig_trace *out,
		    sf_err *err);

/*
 * The generator's quality checks (named predicates, difficulty d's
 * thresholds) on `lv` solved by sol's taps: bit i set when check i fails, 0
 * when all pass. dig_quality_name(i) names check i, for i in
 * [0, dig_quality_count()); NULL outside.
 */
uint32_t dig_quality_fails(const dig_level *lv, const dig_trace *sol, dig_difficulty d);
int dig_quality_count(void);
const char *dig_quality_name(int i);

#endif
