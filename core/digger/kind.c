/*
 * kind.c - the digger kind's entry in the registry (core/kinds.h): its
 * params (through core/params), the generation job and its result
 * document, and the check and hint operations (check.c, hint.c).
 *
 * Who runs where. A job makes params.count puzzles, each from its own seed
 * (rng_split of the job's seed by the puzzle's index), so a puzzle depends
 * only on the seed, the params and its index. Workers (core/par.h) pull
 * indices from an atomic counter and write puzzle i into slot i; the
 * document is assembled in index order afterwards, so it never depends on
 * the thread count. Cancellation, the deadline and another puzzle's
 * failure are noticed between candidates, inside a dig_generate() call too
 * (its stop callback; the atomics are the only state workers share
 * besides their own slots); a stopped puzzle is left out, not failed.
 * Progress is reported once per finished puzzle, under a mutex, from the
 * worker that finished it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinds.h"
#include "../par.h"
#include "../params.h"
#include "../sha256.h"
#include "../stars.h"
#include "codec.h"
#include "measure.h"
#include "svg.h"

#define DIG_MAX_COUNT 20
#define DIG_MAX_ATTEMPTS 100000

/* The request's params; overrides at their "none" value defer to the difficulty. */
typedef struct dig_job_params {
	dig_difficulty difficulty;
	int count;
	int width, height, machines;                                /* 0: none (null) */
	int red_herrings, gold_in_order, any_direction, single_use; /* -1: none (null) */
	int max_attempts;                                           /* 0: none (null) */
} dig_job_params;

/* ---- params ---- */

static int parse_difficulty(const char *text, void *field, sf_err *err)
{
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++)
		if (!strcmp(text, dig_difficulty_name((dig_difficulty)d))) {
			*(dig_difficulty *)field = (dig_difficulty)d;
			return 0;
		}
	char list[96] = "";
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", d ? ", " : "",
			 dig_difficulty_name((dig_difficulty)d));
	return sf_err_set(err, SF_EINVAL, "params.difficulty must be one of %s", list);
}

static const char *difficulty_name(const void *field)
{
	const char *name = dig_difficulty_name(*(const dig_difficulty *)field);
	return name ? name : dig_difficulty_name(DIG_MEDIUM);
}

/* An integer lo..hi or null (stored as `none`). */
static int read_nullable(const json_t *v, const char *key, int lo, int hi, int none, int *field,
			 sf_err *err)
{
	if (json_is_null(v)) {
		*field = none;
		return 0;
	}
	json_int_t i = json_is_integer(v) ? json_integer_value(v) : (json_int_t)lo - 1;
	if (i < lo || i > hi)
		return sf_err_set(err, SF_EINVAL,
				  "params.%s must be an integer %d..%d, or null for the "
				  "difficulty's value",
				  key, lo, hi);
	*field = (int)i;
	return 0;
}

/* A boolean or null (stored as -1). */
static int read_flag(const json_t *v, const char *key, int *field, sf_err *err)
{
	if (json_is_null(v) || json_is_boolean(v)) {
		*field = json_is_null(v) ? -1 : json_is_true(v);
		return 0;
	}
	return sf_err_set(err, SF_EINVAL,
			  "params.%s must be true, false, or null for the difficulty's value", key);
}

#define NULLABLE_INT(key, lo, hi, none)                                                       \
	static int read_##key(const json_t *v, void *params, sf_err *err)                     \
	{                                                                                     \
		return read_nullable(v, #key, lo, hi, none, &((dig_job_params *)params)->key, \
				     err);                                                    \
	}                                                                                     \
	static json_t *write_##key(const void *params)                                        \
	{                                                                                     \
		int x = ((const dig_job_params *)params)->key;                                \
		return x == none ? json_null() : json_integer(x);                             \
	}
#define NULLABLE_FLAG(key)                                                        \
	static int read_##key(const json_t *v, void *params, sf_err *err)         \
	{                                                                         \
		return read_flag(v, #key, &((dig_job_params *)params)->key, err); \
	}                                                                         \
	static json_t *write_##key(const void *params)                            \
	{                                                                         \
		int x = ((const dig_job_params *)params)->key;                    \
		return x < 0 ? json_null() : json_boolean(x);                     \
	}

NULLABLE_INT(width, 2, DIG_MAX_W, 0)
NULLABLE_INT(height, 2, DIG_MAX_H, 0)
NULLABLE_INT(machines, 1, DIG_MAX_MACHINES, 0)
NULLABLE_INT(max_attempts, 1, DIG_MAX_ATTEMPTS, 0)
NULLABLE_FLAG(red_herrings)
NULLABLE_FLAG(gold_in_order)
NULLABLE_FLAG(any_direction)
NULLABLE_FLAG(single_use)

#define FIELD(name) offsetof(dig_job_params, name)
#define CUSTOM(key)                                                                    \
	{                                                                              \
#key, SF_PARAM_CUSTOM, FIELD(key), NULL, NULL, read_##key, write_##key \
	}
static const sf_param keys[] = {
	{ "difficulty", SF_PARAM_NAME, FIELD(difficulty), parse_difficulty, difficulty_name, NULL,
	  NULL },
	{ "count", SF_PARAM_INT, FIELD(count), NULL, NULL, NULL, NULL },
	CUSTOM(width),
	CUSTOM(height),
	CUSTOM(machines),
	CUSTOM(red_herrings),
	CUSTOM(gold_in_order),
	CUSTOM(any_direction),
	CUSTOM(single_use),
	CUSTOM(max_attempts),
};
#define NKEYS (sizeof keys / sizeof keys[0])

static void *digger_params_parse(const json_t *params, sf_err *err)
{
	dig_job_params *p = malloc(sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory reading params");
		return NULL;
	}
	*p = (dig_job_params){ .difficulty = DIG_MEDIUM,
			       .count = 1,
			       .red_herrings = -1,
			       .gold_in_order = -1,
			       .any_direction = -1,
			       .single_use = -1 };
	if (params && sf_params_read(keys, NKEYS, "digger", params, p, err)) {
		free(p);
		return NULL;
	}
	if (p->count < 1 || p->count > DIG_MAX_COUNT) {
		sf_err_set(err, SF_EINVAL, "params.count %d is out of range (allowed: 1..%d)",
			   p->count, DIG_MAX_COUNT);
		free(p);
		return NULL;
	}
	return p;
}

static void digger_params_free(void *params)
{
	free(params);
}

/* The generator's params: the difficulty's defaults, then the overrides. */
static void gen_params_of(const dig_job_params *p, dig_gen_params *g)
{
	dig_gen_params_default(g, p->difficulty);
	if (p->width)
		g->w = p->width;
	if (p->height)
		g->h = p->height;
	if (p->machines)
		g->machines = p->machines;
	if (p->red_herrings >= 0)
		g->red_herrings = p->red_herrings;
	if (p->gold_in_order >= 0)
		g->rules.gold_in_order = p->gold_in_order;
	if (p->any_direction >= 0)
		g->rules.any_direction = p->any_direction;
	if (p->single_use >= 0)
		g->rules.single_use = p->single_use;
	if (p->max_attempts)
		g->max_attempts = p->max_attempts;
}

/* ---- a level document ---- */

/* "dig_" and 32 hex digits: SHA-256 of the kind, the puzzle and the star rule. */
static int level_id(const json_t *puzzle, char id[40])
{
	char *text = json_dumps(puzzle, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		return -1;
	sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, "digger\n", 7);
	sha256_update(&c, text, strlen(text));
	sha256_update(&c, "\nbounds", 7);
	uint8_t digest[SHA256_DIGEST_LEN];
	sha256_final(&c, digest);
	free(text);
	memcpy(id, "dig_", 4);
	sha256_hex(digest, 16, id + 4);
	return 0;
}

static json_t *solution_json(const dig_level *lv, const uint8_t *taps, int n)
{
	return json_pack("{s:i, s:o}", "turns", n, "taps", dig_taps_to_json(lv, taps, n));
}

/* A puzzle's measured difficulty (measure.h), as stats.difficulty. */
static json_t *difficulty_json(const dig_measure *m)
{
	return json_pack("{s:s, s:I, s:I, s:f, s:f, s:b, s:f, s:f, s:i, s:i, s:f}", "method",
			 m->exact ? "exact" : "sampled", "states", (json_int_t)m->states, "decided",
			 (json_int_t)m->decided, "dead_end_share", m->dead_end_share,
			 "optimal_plays", m->optimal_plays, "optimal_plays_exact",
			 m->optimal_plays_exact, "branching", m->branching, "optimal_branching",
			 m->optimal_branching, "random_plays", m->random_plays, "random_wins",
			 m->random_wins, "random_win_rate", m->random_win_rate);
}

static json_t *stats_json(const dig_puzzle *pz, const dig_measure *m, int index, int max_taps,
			  int recorded_stars)
{
	const dig_level *lv = &pz->level;
	json_t *rejected = json_array();
	for (int i = 0; rejected && i < pz->nrejected && i < DIG_REJECT_NAMES; i++) {
		char name[sizeof pz->rejected[i] + 1];
		memcpy(name, pz->rejected[i], sizeof pz->rejected[i]);
		name[sizeof pz->rejected[i]] = '\0';
		if (json_array_append_new(rejected, json_string(name))) {
			json_decref(rejected);
			return NULL;
		}
	}
	return json_pack("{s:i, s:i, s:I, s:i, s:i, s:i, s:i, s:o, s:o}", "index", index,
			 "attempts", pz->attempts, "solver_states", (json_int_t)pz->optimal.states,
			 "gold", dig_gold_count(lv), "machines", lv->machines, "max_taps", max_taps,
			 "recorded_stars", recorded_stars, "rejected", rejected, "difficulty",
			 difficulty_json(m));
}

/* The level document of puzzle `pz`, the index-th of a job; NULL when out of memory. */
static json_t *level_json(const dig_puzzle *pz, const dig_measure *m, int index,
			  const dig_job_params *p, uint64_t seed, sf_err *err)
{
	const dig_level *lv = &pz->level;
	int t[3];
	if (dig_thresholds(lv, pz->optimal.turns, t, err))
		return NULL;
	int max_taps = dig_max_taps(lv);
	json_t *puzzle = dig_level_to_json(lv);
	char id[40];
	if (!puzzle || level_id(puzzle, id)) {
		json_decref(puzzle);
		sf_err_set(err, SF_ENOMEM, "out of memory writing a level");
		return NULL;
	}
	json_t *doc = json_pack(
		"{s:s, s:s, s:I, s:o, s:o, s:{s:o, s:o}, s:{s:s, s:s, s:s, s:[iii]}, s:o}", "id",
		id, "kind", "digger", "seed", (json_int_t)seed, "params",
		sf_params_write(keys, NKEYS, p), "puzzle", puzzle, "solution", "recorded",
		solution_json(lv, pz->recorded.tap, pz->recorded.turns), "optimal",
		solution_json(lv, pz->optimal.taps, pz->optimal.turns), "stars", "strategy",
		"bounds", "metric", "taps", "better", "lower", "thresholds", t[0], t[1], t[2],
		"stats",
		stats_json(pz, m, index, max_taps, stars_earned_lower(pz->recorded.turns, t)));
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing a level");
	return doc;
}

/* ---- the job ---- */

typedef struct run {
	const dig_job_params *p;
	dig_gen_params gen;
	const sf_gen_opts *opts;
	uint64_t seed[DIG_MAX_COUNT];
	dig_puzzle *puzzle; /* [count] */
	int rc[DIG_MAX_COUNT];
	bool done[DIG_MAX_COUNT];
	dig_measure measure[DIG_MAX_COUNT]; /* each puzzle's difficulty (measure.h) */
	sf_err err[DIG_MAX_COUNT];
	atomic_int stop;    /* 0, or the ga_status that stopped the run */
	pthread_mutex_t mu; /* guards the progress fields below */
	int finished;
	uint64_t attempts;
	int best, at_best;
	double sum;
} run;

/* The series entry after `k` puzzles with these optima (in the order given). */
static void tally(ga_generation *g, int k, int optimum, uint64_t attempts, int count)
{
	if (optimum > g->best || k == 1) {
		g->best = optimum;
		g->at_best = 1;
	} else if (optimum == (int)g->best) {
		g->at_best++;
	}
	g->mean = (g->mean * (k - 1) + optimum) / k;
	g->generation = k;
	g->generations = count;
	g->evaluations += attempts;
}

/*
 * dig_gen_params.stop for the job's puzzles (any worker, between
 * candidates): records and reports a cancel, a passed deadline or another
 * puzzle's failure, so that one long dig_generate() call stops too.
 */
static bool should_stop(void *arg)
{
	run *r = arg;
	const sf_gen_opts *o = r->opts;
	if (o->cancel && atomic_load(o->cancel))
		atomic_store(&r->stop, GA_CANCELLED);
	else if (o->deadline > 0 && ga_clock_now() > o->deadline)
		atomic_store(&r->stop, GA_TIMED_OUT);
	return atomic_load(&r->stop) != 0;
}

/* par_for's task i: puzzle i. Non-zero (stop pulling) once the job stops. */
static int work(void *arg, size_t i)
{
	run *r = arg;
	const sf_gen_opts *o = r->opts;
	if (should_stop(r))
		return 1;
	r->rc[i] = dig_generate(&r->gen, r->seed[i], &r->puzzle[i], &r->err[i]);
	if (r->rc[i] == SF_EBUDGET && atomic_load(&r->stop)) {
		r->rc[i] = 0; /* stopped, not failed: the puzzle is just not done */
		return 1;
	}
	if (r->rc[i] == 0) {
		/* The player's view of the puzzle; its random plays and samples
		 * are seeded by the puzzle's own seed. */
		dig_measure_opts mo;
		dig_measure_opts_default(&mo);
		mo.seed = r->seed[i];
		r->rc[i] = dig_measure_level(&r->puzzle[i].level, &r->puzzle[i].optimal, &mo,
					     &r->measure[i], &r->err[i]);
	}
	if (r->rc[i]) {
		atomic_store(&r->stop, -1); /* a failed puzzle fails the job */
		return 1;
	}
	r->done[i] = true;
	pthread_mutex_lock(&r->mu);
	ga_generation g = { .best = r->best, .at_best = r->at_best, .evaluations = r->attempts };
	g.mean = r->finished ? r->sum / r->finished : 0;
	tally(&g, ++r->finished, r->puzzle[i].optimal.turns, (uint64_t)r->puzzle[i].attempts,
	      r->p->count);
	r->best = (int)g.best;
	r->at_best = g.at_best;
	r->attempts = g.evaluations;
	r->sum += r->puzzle[i].optimal.turns;
	if (o->progress)
		o->progress(o->progress_arg, &g);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* The result document from the finished puzzles, in index order. */
static json_t *result_json(run *r, sf_err *err)
{
	const dig_job_params *p = r->p;
	json_t *levels = json_array(), *series = json_array();
	int status = atomic_load(&r->stop);
	ga_generation g = { 0 };
	int k = 0;
	bool bad = !levels || !series;
	for (int i = 0; !bad && i < p->count; i++) {
		if (!r->done[i])
			continue;
		json_t *lv = level_json(&r->puzzle[i], &r->measure[i], i, p, r->opts->seed, err);
		tally(&g, ++k, r->puzzle[i].optimal.turns, (uint64_t)r->puzzle[i].attempts,
		      p->count);
		bad = !lv || json_array_append_new(levels, lv) ||
		      json_array_append_new(series,
					    json_pack("{s:i, s:f, s:f, s:i, s:I}", "generation",
						      g.generation, "best", g.best, "mean", g.mean,
						      "at_best", g.at_best, "evaluations",
						      (json_int_t)g.evaluations));
	}
	json_t *doc =
		bad ? NULL
		    : json_pack("{s:s, s:I, s:o, s:s, s:I, s:i, s:O, s:O}", "kind", "digger",
				"seed", (json_int_t)r->opts->seed, "params",
				sf_params_write(keys, NKEYS, p), "status",
				ga_status_name(k == p->count ? GA_COMPLETED : (ga_status)status),
				"evaluations", (json_int_t)g.evaluations, "generations_run", k,
				"levels", levels, "series", series);
	json_decref(levels);
	json_decref(series);
	if (!doc && !err->msg[0])
		sf_err_set(err, SF_ENOMEM, "out of memory writing the result");
	return doc;
}

static json_t *digger_generate(const void *params, const sf_gen_opts *opts, sf_err *err)
{
	const dig_job_params *p = params;
	run *r = calloc(1, sizeof *r);
	dig_puzzle *puzzles = calloc((size_t)p->count, sizeof *puzzles);
	if (!r || !puzzles) {
		free(r);
		free(puzzles);
		sf_err_set(err, SF_ENOMEM, "out of memory for %d puzzles", p->count);
		return NULL;
	}
	r->p = p;
	r->opts = opts;
	r->puzzle = puzzles;
	gen_params_of(p, &r->gen);
	r->gen.stop = should_stop;
	r->gen.stop_arg = r;
	rng root;
	rng_seed(&root, opts->seed);
	for (int i = 0; i < p->count; i++) {
		rng sub = rng_split(&root, (uint64_t)i);
		r->seed[i] = rng_next(&sub);
	}
	atomic_init(&r->stop, 0);
	pthread_mutex_init(&r->mu, NULL);
	err->msg[0] = '\0';
	json_t *doc = NULL;
	if (par_for(opts->threads, (size_t)p->count, work, r, err))
		goto done;
	for (int i = 0; i < p->count; i++)
		if (r->rc[i]) {
			*err = r->err[i];
			char prefix[64];
			snprintf(prefix, sizeof prefix, "level %d of %d: ", i + 1, p->count);
			sf_err_prefix(err, prefix);
			goto done;
		}
	doc = result_json(r, err);
done:
	pthread_mutex_destroy(&r->mu);
	free(puzzles);
	free(r);
	return doc;
}

/*
 * GET /v1/levels?kind=digger filters (core/kinds.h, sf_level_filter): the
 * difficulty the job asked for (params.difficulty, the preset's name), the
 * grid and the counts of its stats.
 */
static const char *const difficulty_names[] = { "easiest", "easy",   "medium", "hard",
						"hardest", "expert", NULL };
_Static_assert(sizeof difficulty_names / sizeof difficulty_names[0] == DIG_DIFFICULTY_COUNT + 1,
	       "one filter value per difficulty preset");
static const sf_level_filter digger_filters[] = {
	{ "difficulty", "params", SF_FILTER_TEXT, difficulty_names },
	{ "width", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "height", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "turns", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "gold", "stats", SF_FILTER_NUMBER, NULL },
	{ "machines", "stats", SF_FILTER_NUMBER, NULL },
	{ "max_taps", "stats", SF_FILTER_NUMBER, NULL },
	{ "recorded_stars", "stats", SF_FILTER_NUMBER, NULL },
	{ "solver_states", "stats", SF_FILTER_NUMBER, NULL },
	{ "attempts", "stats", SF_FILTER_NUMBER, NULL },
	{ "index", "stats", SF_FILTER_NUMBER, NULL },
	{ NULL, NULL, SF_FILTER_TEXT, NULL },
};

/* The digger kind, registered in core/kinds.c. */
const sf_kind dig_kind_def = {
	.name = "digger",
	.summary = "Direction Digger: tap arrows to steer digging machines to every gold",
	.params_parse = digger_params_parse,
	.params_free = digger_params_free,
	.generate = digger_generate,
	.check = dig_check_json,
	.hint = dig_hint_json,
	.level_svg = dig_level_svg,
	.filters = digger_filters,
};
