/*
 * gen_internal.h - what the generator's files share: generate.c (the
 * presets and the pipeline), gen_walk.c (step 1, the walk), gen_quality.c
 * (playing a solution on a level, the trace and the quality checks) and
 * gen_hooks.c (the terrain hooks' helpers, terrain.h). Internal to
 * core/digger: no other module includes it.
 */
#ifndef SF_DIGGER_GEN_INTERNAL_H
#define SF_DIGGER_GEN_INTERNAL_H

#include "digger.h"

/*
 * A difficulty: the defaults dig_gen_params_default hands out and the
 * thresholds the quality checks apply. Ratios are percentages so that the
 * arithmetic stays in integers.
 */
typedef struct dig_preset {
	const char *name;
	int w, h;
	int machines_min, machines_max; /* per candidate, when params.machines is 0 */
	dig_rules rules;
	uint32_t terrains;
	bool red_herrings;
	int taps_pct;                /* target taps: this percentage of the cells */
	int min_taps_pct;            /* a walk shorter than this percentage of the target is dull */
	int gold_min_pct;            /* gold cells / cells, lower bound ... */
	int gold_max_pct;            /* ... and upper bound */
	int min_moves;               /* every machine moves at least this often */
	int max_dry;                 /* moves a machine makes without collecting gold, at most */
	int max_spare;      /* taps the recorded walk may take past the optimum (-1: any) */
	int min_choice_x10; /* valid taps per tap along the optimal play, at least (x10) */
	/* A candidate that this many of GEN_RANDOM_PLAYS uniformly random plays
	 * win is rejected (0: never; generate.c, step 6). */
	int random_limit;
	double place_p[DIG_T_COUNT]; /* place hook probability per terrain */
	double decoy_p;              /* decoy hook probability (lava's hook takes a third) */
	int max_attempts;
	uint64_t solver_states;
} dig_preset;

/* The presets, indexed by dig_difficulty (generate.c). */
extern const dig_preset dig_presets[DIG_DIFFICULTY_COUNT];

static inline int dig_popcount(uint64_t v)
{
	return __builtin_popcountll(v);
}

static inline int dig_cells_of(const dig_level *lv)
{
	return lv->w * lv->h;
}

/* A uniformly random cell of the set `cells` (one draw), or -1 when empty. */
static inline int dig_pick_cell(rng *r, uint64_t cells)
{
	int n = dig_popcount(cells);
	if (n == 0)
		return -1;
	for (int k = (int)rng_below(r, (uint64_t)n); k > 0; k--)
		cells &= cells - 1;
	return __builtin_ctzll(cells);
}

/* The machines' start cells as a set. */
static inline uint64_t dig_starts_of(const dig_level *lv)
{
	uint64_t s = 0;
	for (int m = 0; m < lv->machines; m++)
		s |= UINT64_C(1) << lv->start[m];
	return s;
}

/* The target number of taps for a grid of `cells` under preset ps. */
static inline int dig_target_taps(const dig_preset *ps, int cells)
{
	int t = (ps->taps_pct * cells + 50) / 100;
	if (t < 3)
		t = 3;
	return t > DIG_MAX_TURNS ? DIG_MAX_TURNS : t;
}

/* ---- gen_quality.c ---- */

/* The quality checks, in table order (bit i of dig_quality_fails). */
enum {
	DIG_Q_LENGTH,
	DIG_Q_MOVES,
	DIG_Q_START_END,
	DIG_Q_ENDS_OFF_STARTS,
	DIG_Q_REPLAYS,
	DIG_Q_RATIO,
	DIG_Q_LAST_TAP,
	DIG_Q_EVERY_MACHINE,
	DIG_Q_DRY,
	DIG_Q_SINGLE_USE,
	DIG_Q_COUNT
};

/* What a tap list does on a level: which gold each tap collects and who. */
typedef struct dig_run {
	bool valid; /* every tap was valid */
	int ntaps;  /* taps played (all of them when valid) */
	int gold_total;
	int gold_got;
	uint64_t got[DIG_MAX_TURNS];       /* gold cells collected by tap t */
	uint8_t got_by[DIG_MAX_CELLS];     /* machine that collected each, DIG_NONE */
	uint8_t got_at[DIG_MAX_CELLS];     /* tap that collected each, DIG_NONE */
	int moves[DIG_MAX_MACHINES];       /* moves of each machine */
	int collects[DIG_MAX_MACHINES];    /* gold each machine collected */
	int longest_dry[DIG_MAX_MACHINES]; /* most moves without collecting */
	uint8_t final[DIG_MAX_MACHINES];
} dig_run;

void dig_run_play(const dig_level *lv, const uint8_t *taps, int n, dig_run *r);
void dig_number_gold(dig_level *lv, const uint8_t *taps, int n);
bool dig_replays(const dig_level *lv, const uint8_t *taps, int n);
int dig_shortcut(const dig_level *lv, const uint8_t *taps, int n, uint8_t *out);
uint32_t dig_quality_run(const dig_level *lv, const dig_preset *ps, const uint8_t *taps, int n,
			 bool walk_only);

/* ---- gen_walk.c ---- */

/* Step 1 in progress: the working level and the taps so far. */
typedef struct dig_walk {
	dig_level lv; /* the working level */
	int n;        /* taps so far */
	uint8_t tap[DIG_MAX_TURNS];
	uint8_t pos[DIG_MAX_TURNS + 1][DIG_MAX_MACHINES];
	int moves[DIG_MAX_MACHINES];
	dig_state s; /* the state after the taps so far */
} dig_walk;

bool dig_walk_play(dig_walk *w, const dig_preset *ps, int gw, int gh, const dig_rules *rules,
		   int machines, int target, rng *r);
uint32_t dig_walk_trim(dig_walk *w, const dig_preset *ps, int target);

#endif
