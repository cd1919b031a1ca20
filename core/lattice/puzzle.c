/*
 * puzzle.c - the lattice puzzle search; see puzzle.h for the fitnesses.
 *
 * Who runs where: lat_search_run() runs on the caller's thread and drives
 * core/search/ga.c (or the exhaustive loop below). Each batch of sequences
 * to evaluate is spread over `threads` workers that pull indices from an
 * atomic counter and write only their own output slots; the database they
 * read is immutable. Nothing else is shared, so the thread count never
 * shows in the result.
 */
#include "puzzle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dmath.h"
#include "../par.h"
#include "puzzle_long.h"

/* The shortest chain with three reachable scores above 0 on both lattices
 * (square all-H length 8: scores 0..3), so that a puzzle can carry stars. */
#define LAT_MIN_LEN 8
#define LAT_EXHAUSTIVE_MAX_LEN 18 /* 2^18 sequences: ~20 s at length 18 on one core */

static const char *const fitness_names[] = {
	[LAT_FIT_DISTINCT] = "distinct_scores",
	[LAT_FIT_RARE_OPTIMUM] = "rare_optimum",
	[LAT_FIT_STAR_LADDER] = "star_ladder",
	[LAT_FIT_SOLVER_LADDER] = "solver_ladder",
};
#define NFITNESS ((int)(sizeof fitness_names / sizeof fitness_names[0]))

static const char *const algorithm_names[] = {
	[LAT_ALG_GA] = "ga",
	[LAT_ALG_MAP_ELITES] = "map_elites",
	[LAT_ALG_EXHAUSTIVE] = "exhaustive",
};

const char *lat_fitness_name(lat_fitness f)
{
	return (unsigned)f < NFITNESS ? fitness_names[f] : "unknown";
}

const char *lat_algorithm_name(lat_algorithm a)
{
	return (unsigned)a < 3 ? algorithm_names[a] : "unknown";
}

int lat_parse_fitness(const char *name, lat_fitness *out, sf_err *err)
{
	for (int i = 0; i < NFITNESS; i++) {
		if (name && !strcmp(name, fitness_names[i])) {
			*out = (lat_fitness)i;
			return 0;
		}
	}
	return sf_err_set(err, SF_EINVAL,
			  "fitness '%s' is unknown (allowed: distinct_scores, rare_optimum, "
			  "star_ladder, solver_ladder)",
			  name ? name : "");
}

int lat_parse_algorithm(const char *name, lat_algorithm *out, sf_err *err)
{
	for (int i = 0; i < 3; i++) {
		if (name && !strcmp(name, algorithm_names[i])) {
			*out = (lat_algorithm)i;
			return 0;
		}
	}
	return sf_err_set(err, SF_EINVAL,
			  "algorithm '%s' is unknown (allowed: ga, map_elites, exhaustive)",
			  name ? name : "");
}

void lat_search_params_default(lat_search_params *p)
{
	memset(p, 0, sizeof *p);
	p->length = 16;
	p->lattice = LAT_SQUARE;
	p->algorithm = LAT_ALG_GA;
	p->fitness = LAT_FIT_DISTINCT;
	p->population = 30;
	p->generations = 50;
	p->mutation_rate = 0.1;
	p->elites = 1;
	p->bins = 10;
	p->count = 1;
	stars_config_default(&p->stars, STARS_PAPER);
	p->h_min = 0.25;
	p->h_max = 0.75;
	p->start_share = 0.05;
	p->method = LAT_METHOD_AUTO;
	p->steps = LAT_LONG_STEPS;
	p->moves = LAT_LONG_MOVES;
	p->nodes = LAT_LONG_NODES;
}

/* The longest chain whose contact-map database the default budget allows. */
static int max_length(lat_kind kind)
{
	int len = LAT_MIN_LEN;
	while (len < LAT_DB_MAX_LEN && lat_estimate(kind, len + 1) <= LAT_DEFAULT_DB_BUDGET)
		len++;
	return len;
}

lat_method lat_search_method(const lat_search_params *p)
{
	if (p->method != LAT_METHOD_AUTO || p->algorithm == LAT_ALG_EXHAUSTIVE)
		return p->method == LAT_METHOD_ESTIMATE ? LAT_METHOD_ESTIMATE : LAT_METHOD_EXACT;
	return p->length <= max_length(p->lattice) ? LAT_METHOD_EXACT : LAT_METHOD_ESTIMATE;
}

/* The length and method checks of lat_search_params_check() (docs/lattice-search.md). */
static int check_length(const lat_search_params *p, sf_err *err)
{
	int hi = max_length(p->lattice), long_hi = lat_long_max_length(p->lattice);
	const char *lattice = lat_kind_name(p->lattice);
	if ((unsigned)p->method > LAT_METHOD_ESTIMATE)
		return sf_err_set(err, SF_EINVAL,
				  "method %d is unknown (allowed: exact, estimate, auto)",
				  (int)p->method);
	/* The budgets are checked whatever the method, so that echoed params are valid. */
	if (p->steps < 10000 || p->steps > 1000000000)
		return sf_err_set(err, SF_EINVAL,
				  "steps %d is out of range (allowed: 10000..1000000000)",
				  p->steps);
	if (p->moves < 1 || p->moves > 1000000000)
		return sf_err_set(err, SF_EINVAL,
				  "moves %d is out of range (allowed: 1..1000000000)", p->moves);
	if (p->nodes < 1 || p->nodes > 1000000000)
		return sf_err_set(err, SF_EINVAL,
				  "nodes %d is out of range (allowed: 1..1000000000)", p->nodes);
	if (p->algorithm == LAT_ALG_EXHAUSTIVE) {
		if (p->method == LAT_METHOD_ESTIMATE)
			return sf_err_set(
				err, SF_EINVAL,
				"method estimate is not allowed with algorithm exhaustive "
				"(allowed: exact or auto; it evaluates all 2^length "
				"sequences)");
		if (hi > LAT_EXHAUSTIVE_MAX_LEN)
			hi = LAT_EXHAUSTIVE_MAX_LEN;
		if (p->length < LAT_MIN_LEN || p->length > hi)
			return sf_err_set(
				err, SF_EINVAL,
				"length %d is out of range (allowed: %d..%d for exhaustive "
				"on the %s lattice)",
				p->length, LAT_MIN_LEN, hi, lattice);
		return 0;
	}
	if (p->method == LAT_METHOD_EXACT && (p->length < LAT_MIN_LEN || p->length > hi))
		return sf_err_set(err, SF_EINVAL,
				  "length %d is out of range for method exact (allowed: %d..%d on "
				  "the %s lattice, where the contact-map database fits its budget; "
				  "method estimate or auto allow %d..%d)",
				  p->length, LAT_MIN_LEN, hi, lattice, LAT_MIN_LEN, long_hi);
	if (p->length < LAT_MIN_LEN || p->length > long_hi)
		return sf_err_set(err, SF_EINVAL,
				  "length %d is out of range (allowed on the %s lattice: %d..%d "
				  "with method estimate or auto, %d..%d with method exact)",
				  p->length, lattice, LAT_MIN_LEN, long_hi, LAT_MIN_LEN, hi);
	return 0;
}

int lat_search_params_check(const lat_search_params *p, sf_err *err)
{
	int rc = check_length(p, err);
	if (rc)
		return rc;
	rc = ga_params_check(p->population, p->generations, p->mutation_rate, p->elites, err);
	if (rc)
		return rc;
	if (p->bins < 2 || p->bins > 64)
		return sf_err_set(err, SF_EINVAL, "bins %d is out of range (allowed: 2..64)",
				  p->bins);
	if (p->count < 0 || p->count > 1000 ||
	    (p->count == 0 && p->algorithm != LAT_ALG_MAP_ELITES))
		return sf_err_set(
			err, SF_EINVAL,
			"count %d is out of range (allowed: 1..1000; 0 = the whole archive, "
			"map_elites only)",
			p->count);
	if (!(p->h_min >= 0 && p->h_min <= 1))
		return sf_err_set(err, SF_EINVAL, "h_min %g is out of range (allowed: 0..1)",
				  p->h_min);
	if (!(p->h_max >= p->h_min && p->h_max <= 1))
		return sf_err_set(err, SF_EINVAL,
				  "h_max %g is out of range (allowed: h_min (%g)..1)", p->h_max,
				  p->h_min);
	if (!(p->start_share > 0 && p->start_share <= 1))
		return sf_err_set(err, SF_EINVAL,
				  "start_share %g is out of range (allowed: (0, 1])",
				  p->start_share);
	return stars_config_check(&p->stars, err);
}

/* ---- fitness ---- */

int lat_trivial(const uint64_t hist[LAT_MAX_SCORE + 1], int max_score)
{
	return max_score >= 0 && max_score <= LAT_MAX_SCORE && stars_forced(hist, max_score + 1);
}

/*
 * 1 when the fitness of `p` needs the reference solver's runs: solver_ladder,
 * and star_ladder under solver stars (its one-star threshold). Levels need
 * them whatever the fitness (make_level()).
 */
static int needs_solver(const lat_search_params *p)
{
	return p->fitness == LAT_FIT_SOLVER_LADDER ||
	       (p->fitness == LAT_FIT_STAR_LADDER && p->stars.strategy == STARS_SOLVER);
}

static void canonical(const uint8_t *g, size_t len, uint8_t *out);

/*
 * The reference solver on `seq` (solver.h's budget and seed, one thread),
 * read in its canonical orientation (canonical() below): a chain and its
 * reverse are one puzzle, so they get the same runs.
 */
static int solve(const lat_search_params *p, const lat_seq *seq, lat_solver_result *sr, sf_err *err)
{
	lat_seq c = *seq;
	canonical(seq->h, (size_t)seq->len, c.h);
	lat_solver_config cfg;
	lat_solver_defaults(&cfg, p->lattice, &c);
	return lat_solver_run(p->lattice, &c, &cfg, sr, err);
}

/*
 * The domain test of lat_in_domain() with the H fraction already counted;
 * writes the thresholds to `t` when the puzzle has three bands. Under the
 * solver strategy the thresholds need the solver's runs `sr`; with `sr`
 * NULL only the test is made (three bands exist or not whatever the
 * strategy, so the paper rule answers it) and `t` is not meaningful.
 */
static int in_domain(const lat_search_params *p, double hfrac,
		     const uint64_t hist[LAT_MAX_SCORE + 1], int max_score,
		     const lat_solver_result *sr, int t[3])
{
	stars_config paper;
	stars_config_default(&paper, STARS_PAPER);
	int bands;
	if (p->stars.strategy != STARS_SOLVER)
		bands = stars_thresholds(hist, max_score + 1, &p->stars, t, NULL);
	else if (sr)
		bands = stars_thresholds_success(hist, max_score + 1, sr->hits, sr->runs, t, NULL);
	else
		bands = stars_thresholds(hist, max_score + 1, &paper, t, NULL);
	if (bands)
		return 0; /* not every band reachable: no level at all */
	if (p->fitness == LAT_FIT_DISTINCT)
		return 1; /* the paper's: every puzzle with bands, trivial ones too */
	return hfrac >= p->h_min && hfrac <= p->h_max && !lat_trivial(hist, max_score);
}

static double h_fraction(const lat_seq *seq)
{
	int h = 0;
	for (int i = 0; i < seq->len; i++)
		h += seq->h[i];
	return (double)h / seq->len;
}

int lat_in_domain(const lat_search_params *p, const lat_seq *seq,
		  const uint64_t hist[LAT_MAX_SCORE + 1], int max_score)
{
	int t[3];
	return in_domain(p, h_fraction(seq), hist, max_score, NULL, t);
}

/*
 * solver_ladder's value for a puzzle with thresholds `t` on which the
 * solver made the runs `sr` (puzzle.h): in (0, 1], 1 for success exactly
 * at the three targets. The distance to each target counts once, and
 * three times more where the success leaves its band: a puzzle with one
 * star out of its band ranks below any with all three in (at equal
 * distances), which keeps a search's 20 best inside the goal when a
 * default-budget GA meets only a few hundred puzzles.
 */
static double solver_ladder(const lat_solver_result *sr, const int t[3])
{
	static const double target[3] = { STARS_SOLVER_ONE, STARS_SOLVER_TWO, STARS_SOLVER_THREE };
	static const double lo[3] = { STARS_SOLVER_ONE_MIN, STARS_SOLVER_TWO_MIN, 0 },
			    hi[3] = { 1, STARS_SOLVER_TWO_MAX, STARS_SOLVER_THREE_MAX };
	double miss = 0;
	for (int k = 0; k < 3; k++) {
		int hits = t[k] <= sr->best ? sr->hits[t[k]] : 0;
		miss += stars_success_distance(hits, sr->runs, target[k]);
		double p = (hits + 0.5) / (sr->runs + 1);
		if (p < lo[k])
			miss += 3 * stars_success_distance(hits, sr->runs, lo[k]);
		else if (p > hi[k])
			miss += 3 * stars_success_distance(hits, sr->runs, hi[k]);
	}
	return 1 / (1 + miss);
}

/*
 * lat_fitness_of() with the solver's runs `sr` on the sequence already
 * made, or NULL when the search does not need them (needs_solver()) or the
 * sequence is outside the domain.
 */
static ga_eval fitness_with(const lat_search_params *p, const lat_seq *seq,
			    const uint64_t hist[LAT_MAX_SCORE + 1], int max_score,
			    const lat_solver_result *sr)
{
	ga_eval e = { 0 };
	int distinct = 0;
	uint64_t total = 0;
	for (int s = 0; s <= max_score; s++) {
		total += hist[s];
		distinct += hist[s] != 0;
	}
	double hfrac = h_fraction(seq);
	/* Orders of magnitude between all folds and the optimal ones. */
	double rarity = dm_log10((double)total / (double)hist[max_score]);
	e.desc[0] = hfrac;
	e.desc[1] = total > 1 ? rarity / dm_log10((double)total) : 0;

	if (p->fitness == LAT_FIT_DISTINCT) {
		e.fitness = distinct;
		return e;
	}
	int t[3];
	if (!in_domain(p, hfrac, hist, max_score, sr, t) || (needs_solver(p) && !sr))
		return e; /* outside the window, no three bands, or trivial: 0 */
	if (p->fitness == LAT_FIT_SOLVER_LADDER) {
		e.fitness = solver_ladder(sr, t);
		return e;
	}
	if (p->fitness == LAT_FIT_RARE_OPTIMUM) {
		/* Ties among unique optima are common: the rarity of the runner-up
		 * folds (scoring at least the second-best reachable score), scaled
		 * into [0, 0.1], ranks those with fewer near misses first. */
		uint64_t near = hist[max_score];
		for (int s = max_score - 1; s >= 0; s--) {
			near += hist[s];
			if (hist[s])
				break;
		}
		e.fitness = rarity +
			    dm_log10((double)total / (double)near) / (10 * dm_log10((double)total));
		return e;
	}
	/* star_ladder: three stars this many orders rarer than one star... */
	uint64_t one = 0;
	for (int s = t[0]; s <= max_score; s++)
		one += hist[s];
	double ladder = dm_log10((double)one / (double)hist[max_score]);
	/* ...provided one star stays within reach of a beginner. */
	double start = (double)one / (double)total;
	e.fitness = start >= p->start_share ? ladder : ladder * start / p->start_share;
	return e;
}

ga_eval lat_fitness_of(const lat_search_params *p, const lat_seq *seq,
		       const uint64_t hist[LAT_MAX_SCORE + 1], int max_score)
{
	lat_solver_result sr;
	if (needs_solver(p) && lat_in_domain(p, seq, hist, max_score) && !solve(p, seq, &sr, NULL))
		return fitness_with(p, seq, hist, max_score, &sr);
	return fitness_with(p, seq, hist, max_score, NULL);
}

/* ---- evaluation ---- */

typedef struct lat_evaluator {
	const lat_search_params *p;
	const lat_db *db;
	int threads;
	/* the batch being evaluated */
	const uint8_t *genomes;
	size_t n;
	ga_eval *out;
	uint8_t *in_domain;          /* when set: 1 where the puzzle can be a level */
	const lat_eval_cache *cache; /* when set: consulted first, fed full evaluations */
	int estimate;                /* method estimate: puzzle_long.c evaluates, no db */
	atomic_int failed;           /* the first error code of an estimate, 0: none */
} lat_evaluator;

static lat_seq seq_of(const uint8_t *genome, int len)
{
	lat_seq s = { .len = len };
	memcpy(s.h, genome, (size_t)len);
	return s;
}

/* par_for's task i: sequence i of the batch. */
static int eval_item(void *arg, size_t i)
{
	lat_evaluator *ev = arg;
	int len = ev->p->length;
	uint64_t hist[LAT_MAX_SCORE + 1];
	lat_seq seq = seq_of(ev->genomes + i * (size_t)len, len);
	if (ev->estimate) {
		int rc = lat_long_fitness(ev->p, &seq, &ev->out[i],
					  ev->in_domain ? &ev->in_domain[i] : NULL, NULL);
		if (rc) {
			int none = 0;
			atomic_compare_exchange_strong(&ev->failed, &none, rc);
		}
		return rc;
	}
	int max = ev->cache ? ev->cache->get(ev->cache->ctx, ev->p->lattice, &seq, hist) : -1;
	if (max < 0 && ev->cache) {
		/* A miss: evaluate in full, examples included, so that the cache
		 * entry can answer an evaluation request as well. */
		static _Thread_local lat_result res;
		if (lat_db_evaluate(ev->db, &seq, &res, NULL) == 0) {
			ev->cache->put(ev->cache->ctx, &res, &seq);
			memcpy(hist, res.hist, sizeof res.hist);
			max = res.max_score;
		}
	}
	if (max < 0)
		max = lat_db_histogram(ev->db, &seq, hist);
	/* The solver only where its answer counts: a fitness that needs it and
	 * a sequence inside the domain. Its seed is the sequence's own, so the
	 * cache need not hold it. */
	lat_solver_result sr;
	int dom = lat_in_domain(ev->p, &seq, hist, max), solved = 0;
	if (dom && needs_solver(ev->p)) {
		int rc = solve(ev->p, &seq, &sr, NULL);
		if (rc) {
			int none = 0;
			atomic_compare_exchange_strong(&ev->failed, &none, rc);
			return rc;
		}
		solved = 1;
	}
	ev->out[i] = fitness_with(ev->p, &seq, hist, max, solved ? &sr : NULL);
	if (ev->in_domain)
		ev->in_domain[i] = (uint8_t)dom;
	return 0;
}

static int eval_batch(void *ctx, const uint8_t *genomes, size_t n, ga_eval *out, sf_err *err)
{
	lat_evaluator *ev = ctx;
	ev->genomes = genomes;
	ev->n = n;
	ev->out = out;
	/* A thread costs about as much as a few histograms: small batches stay
	 * inline. An estimate costs far more than a thread. */
	int rc = par_for(n >= 16 || ev->estimate ? ev->threads : 1, n, eval_item, ev, err);
	if (!rc && atomic_load(&ev->failed))
		rc = sf_err_set(err, atomic_load(&ev->failed), "a sequence's estimate failed (%s)",
				sf_err_name(atomic_load(&ev->failed)));
	return rc;
}

static void describe_seq(void *ctx, const uint8_t *genome, char *buf, size_t size)
{
	const lat_evaluator *ev = ctx;
	size_t i = 0;
	for (; i < (size_t)ev->p->length && i + 1 < size; i++)
		buf[i] = genome[i] ? 'H' : 'P';
	if (size)
		buf[i] = '\0';
}

/*
 * A chain read from either end is the same puzzle (a fold of one is a fold
 * of the other with the same contacts), so results hold each puzzle once, in
 * its canonical orientation: the smaller of the genome and its reverse.
 */
static void canonical(const uint8_t *g, size_t len, uint8_t *out)
{
	uint8_t rev[LAT_MAX_LEN];
	for (size_t i = 0; i < len; i++)
		rev[i] = g[len - 1 - i];
	memcpy(out, memcmp(rev, g, len) < 0 ? rev : g, len);
}

static int is_canonical(const uint8_t *g, size_t len)
{
	uint8_t c[LAT_MAX_LEN];
	canonical(g, len, c);
	return !memcmp(c, g, len);
}

/* ---- exhaustive ---- */

typedef struct top_list {
	size_t cap, n;
	uint8_t *genomes; /* cap * len */
	ga_eval *evals;
	size_t len;
} top_list;

/* True when (fa, a) ranks before (fb, b): higher fitness, then smaller bytes. */
static int ranks_before(double fa, const uint8_t *a, double fb, const uint8_t *b, size_t len)
{
	if (fa != fb)
		return fa > fb;
	return memcmp(a, b, len) < 0;
}

/* Keeps the best `cap` genomes seen, best first. */
static void top_offer(top_list *t, const uint8_t *g, const ga_eval *e)
{
	size_t pos = t->n;
	while (pos > 0 && ranks_before(e->fitness, g, t->evals[pos - 1].fitness,
				       t->genomes + (pos - 1) * t->len, t->len))
		pos--;
	if (pos >= t->cap)
		return;
	size_t last = t->n < t->cap ? t->n : t->cap - 1;
	memmove(t->genomes + (pos + 1) * t->len, t->genomes + pos * t->len, (last - pos) * t->len);
	memmove(t->evals + pos + 1, t->evals + pos, (last - pos) * sizeof *t->evals);
	memcpy(t->genomes + pos * t->len, g, t->len);
	t->evals[pos] = *e;
	if (t->n < t->cap)
		t->n++;
}

/*
 * Every sequence of the length in canonical orientation, in 64 chunks (each
 * reported as a "generation" so that progress, cancellation and deadlines
 * work as for the other algorithms). Sequence number k has residue i = H
 * when bit i is set.
 */
static int run_exhaustive(lat_evaluator *ev, const lat_search_opts *opts, size_t count,
			  ga_result *out, sf_err *err)
{
	size_t len = (size_t)ev->p->length;
	uint64_t total = 1ULL << len;
	int chunks = total >= 64 ? 64 : (int)total;
	uint64_t per = total / (uint64_t)chunks;
	top_list top = { .cap = count, .len = len };
	uint8_t *batch = malloc(per * len);
	ga_eval *evals = malloc(per * sizeof *evals);
	uint8_t *in_dom = malloc(per);
	ev->in_domain = in_dom;
	top.genomes = malloc(count * len);
	top.evals = malloc(count * sizeof *top.evals);
	out->series = calloc((size_t)chunks, sizeof *out->series);
	int rc = 0;
	if (!batch || !evals || !in_dom || !top.genomes || !top.evals || !out->series) {
		rc = sf_err_set(err, SF_ENOMEM, "out of memory for the exhaustive search");
		goto done;
	}
	out->status = GA_COMPLETED;
	out->length = len;
	double sum = 0;
	for (int c = 0; c < chunks; c++) {
		uint64_t first = (uint64_t)c * per, n = 0;
		for (uint64_t k = 0; k < per; k++) {
			uint8_t *g = batch + n * len;
			for (size_t i = 0; i < len; i++)
				g[i] = (uint8_t)((first + k) >> i & 1);
			n += is_canonical(g, len); /* its reverse is the same puzzle */
		}
		if ((rc = eval_batch(ev, batch, n, evals, err)))
			goto done;
		for (uint64_t k = 0; k < n; k++) {
			sum += evals[k].fitness;
			if (in_dom[k]) /* only puzzles inside the domain are levels */
				top_offer(&top, batch + k * len, &evals[k]);
		}
		out->evaluations += n;
		ga_generation gen = { .generation = c + 1,
				      .generations = chunks,
				      .best = top.n ? top.evals[0].fitness : 0,
				      .mean = sum / (double)out->evaluations,
				      .evaluations = out->evaluations };
		for (size_t i = 0; i < top.n; i++)
			gen.at_best += top.evals[i].fitness == gen.best;
		out->series[out->generations_run++] = gen;
		if (opts->progress)
			opts->progress(opts->progress_arg, &gen);
		if (c + 1 < chunks && opts->cancel && atomic_load(opts->cancel)) {
			out->status = GA_CANCELLED;
			break;
		}
		if (c + 1 < chunks && opts->deadline > 0 && ga_clock_now() >= opts->deadline) {
			out->status = GA_TIMED_OUT;
			break;
		}
	}
	out->count = top.n;
	out->genomes = top.genomes;
	out->evals = top.evals;
	top.genomes = NULL;
	top.evals = NULL;
done:
	ev->in_domain = NULL;
	free(batch);
	free(evals);
	free(in_dom);
	free(top.genomes);
	free(top.evals);
	return rc;
}

/* ---- levels ---- */

/*
 * Evaluates the puzzle with canonical genome `genome` in full into `lv`.
 * Returns 1 when it is inside the fitness's domain (three star bands, and
 * for the better fitnesses the H window and no trivial stars), 0 when it is
 * not (no level), or a negative code.
 */
static int make_level(const lat_search_params *p, const lat_db *db, const uint8_t *genome,
		      const ga_eval *fit, int cell, lat_level *lv, sf_err *err)
{
	free(lv->estimate); /* a slot reused after a puzzle outside the domain */
	memset(lv, 0, sizeof *lv);
	lv->seq = seq_of(genome, p->length);
	lv->fitness = *fit;
	lv->cell = cell;
	/* No database: method estimate (puzzle_long.h), the search's very evaluation. */
	int rc = db ? lat_db_evaluate(db, &lv->seq, &lv->eval, err) : lat_long_level(p, lv, err);
	if (rc)
		return rc;
	/* Every level carries the solver's success at its stars (puzzle.h). */
	if ((rc = solve(p, &lv->seq, &lv->solver, err)))
		return rc;
	return in_domain(p, h_fraction(&lv->seq), lv->eval.hist, lv->eval.max_score, &lv->solver,
			 lv->thresholds);
}

/* True when `out` already holds the puzzle with canonical genome `c`. */
static int has_level(const lat_search_result *out, const uint8_t *c, size_t len)
{
	for (size_t i = 0; i < out->count; i++)
		if (!memcmp(out->levels[i].seq.h, c, len))
			return 1;
	return 0;
}

int lat_search_run(const lat_search_params *p, const lat_search_opts *opts, lat_search_result *out,
		   sf_err *err)
{
	memset(out, 0, sizeof *out);
	int rc = lat_search_params_check(p, err);
	if (rc)
		return rc;
	if (opts->threads < 1 || opts->threads > 1024)
		return sf_err_set(err, SF_EINVAL, "threads %d is out of range (allowed: 1..1024)",
				  opts->threads);
	lat_db *own = NULL;
	int estimate = lat_search_method(p) == LAT_METHOD_ESTIMATE;
	const lat_db *db = estimate ? NULL : opts->db;
	if (db && (lat_db_kind(db) != p->lattice || lat_db_len(db) != p->length))
		return sf_err_set(
			err, SF_EINVAL,
			"the warm database is for length %d on the %s lattice, the search "
			"for length %d on the %s lattice",
			lat_db_len(db), lat_kind_name(lat_db_kind(db)), p->length,
			lat_kind_name(p->lattice));
	if (!db && !estimate) {
		lat_opts dbopts = { .threads = opts->threads, .budget = 0 };
		if (!(db = own = lat_db_build(p->lattice, p->length, &dbopts, err)))
			return err ? err->code : SF_ENOMEM;
	}

	lat_evaluator ev = { .p = p,
			     .db = db,
			     .threads = opts->threads,
			     .estimate = estimate,
			     /* The cache holds exact evaluations: never fed estimates. */
			     .cache = p->algorithm == LAT_ALG_EXHAUSTIVE || estimate
					      ? NULL
					      : opts->cache };
	ga_result gr = { 0 };
	size_t count = (size_t)p->count;
	if (p->algorithm == LAT_ALG_EXHAUSTIVE) {
		rc = run_exhaustive(&ev, opts, count, &gr, err);
	} else {
		ga_problem prob = { .length = (size_t)p->length,
				    .alphabet = 2,
				    .ctx = &ev,
				    .evaluate = eval_batch,
				    .describe = describe_seq };
		ga_config cfg;
		ga_config_default(&cfg);
		cfg.algorithm = p->algorithm == LAT_ALG_MAP_ELITES ? GA_MAP_ELITES : GA_GENETIC;
		cfg.seed = opts->seed;
		cfg.population = p->population;
		cfg.generations = p->generations;
		cfg.mutation_rate = p->mutation_rate;
		cfg.elites = p->elites;
		cfg.bins = p->bins;
		cfg.progress = opts->progress;
		cfg.progress_arg = opts->progress_arg;
		cfg.cancel = opts->cancel;
		cfg.deadline = opts->deadline;
		/* Everything ranked: reversed twins and puzzles without star bands
		 * are skipped below, before the cut to `count`. */
		rc = ga_run(&prob, &cfg, SIZE_MAX, &gr, err);
	}
	if (!rc) {
		out->levels = calloc(gr.count + 1, sizeof *out->levels);
		if (!out->levels)
			rc = sf_err_set(err, SF_ENOMEM, "out of memory for the levels");
	}
	size_t want = count ? count : gr.count;
	for (size_t i = 0; !rc && i < gr.count && out->count < want; i++) {
		uint8_t c[LAT_MAX_LEN];
		canonical(gr.genomes + i * gr.length, gr.length, c);
		if (has_level(out, c, gr.length))
			continue;
		/* A better fitness is 0 exactly outside its domain: no level, and
		 * no full evaluation needed to tell. MAP-Elites keeps such puzzles
		 * in cells no puzzle inside the domain reached: stepping stones of
		 * the search, never levels. */
		if (p->fitness != LAT_FIT_DISTINCT && !(gr.evals[i].fitness > 0))
			continue;
		/* Nor is any other puzzle outside the domain (docs/stars.md). */
		lat_level *lv = &out->levels[out->count];
		int kept = make_level(p, db, c, &gr.evals[i], gr.cells ? gr.cells[i] : -1, lv, err);
		if (kept < 0) {
			rc = kept;
			break;
		}
		/*
		 * distinct_scores keeps trivial puzzles (the paper's length 8 has
		 * nothing else) but only as a last resort: once a level with a
		 * real choice of stars is in, a trivial one ends the list. It
		 * cannot be followed by a better one: the ranking is by distinct
		 * scores, at most 5 for a trivial puzzle (0 and three or four
		 * above) and at least 6 for any other.
		 */
		if (kept && out->count && lat_trivial(lv->eval.hist, lv->eval.max_score) &&
		    !lat_trivial(out->levels[0].eval.hist, out->levels[0].eval.max_score))
			break;
		out->count += (size_t)kept;
	}
	if (out->levels) { /* the slot after the last level may hold a dropped estimate */
		free(out->levels[out->count].estimate);
		out->levels[out->count].estimate = NULL;
	}
	if (!rc && !out->count && gr.status == GA_COMPLETED) {
		if (p->fitness == LAT_FIT_DISTINCT)
			rc = sf_err_set(err, SF_ERANGE,
					"no puzzle found with three reachable star bands (%llu "
					"sequences evaluated); try a longer chain",
					(unsigned long long)gr.evaluations);
		else
			rc = sf_err_set(
				err, SF_ERANGE,
				"no puzzle found in the domain of %s (H fraction in [%g, %g] "
				"and at least %d reachable scores above 0, so that the stars "
				"are not trivial; %llu sequences evaluated); try a longer "
				"chain (square 11 or more, cubic 10 or more), a wider H "
				"window or distinct_scores",
				lat_fitness_name(p->fitness), p->h_min, p->h_max, STARS_FREE_SCORES,
				(unsigned long long)gr.evaluations);
	}
	if (!rc) {
		out->status = gr.status;
		out->series = gr.series;
		out->generations_run = gr.generations_run;
		out->evaluations = gr.evaluations;
		gr.series = NULL;
	}
	ga_result_free(&gr);
	lat_db_free(own);
	if (rc)
		lat_search_result_free(out);
	return rc;
}

void lat_search_result_free(lat_search_result *res)
{
	for (size_t i = 0; res->levels && i < res->count; i++)
		free(res->levels[i].estimate);
	free(res->levels);
	free(res->series);
	memset(res, 0, sizeof *res);
}
