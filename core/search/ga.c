/*
 * ga.c - the genetic algorithm and MAP-Elites of ga.h.
 *
 * Who runs where: everything here runs on the caller's thread. The only
 * concurrency is inside the problem's evaluate(), which receives one batch
 * per generation and may spread it over threads; since the batch, its order
 * and every random draw are fixed by the seed, threads change nothing in the
 * result.
 *
 * The memo owns every genome the run has evaluated: an arena of genomes in
 * first-seen order, their evaluations, and an open-addressing index over
 * them. Populations and the archive refer to genomes by memo index, so a
 * generation's new genomes are always the arena's tail: the batch handed to
 * the evaluator is a slice of it, evaluated in place.
 */
#include "ga.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct memo {
	size_t length;  /* bytes per genome */
	size_t n, cap;  /* genomes held, arena capacity in genomes */
	uint8_t *arena; /* n * length bytes */
	ga_eval *evals;
	uint32_t *slot; /* index + 1; 0 is empty */
	size_t slots;   /* power of two, > 2 n */
} memo;

/* ---- the memo ---- */

static uint64_t genome_hash(const uint8_t *g, size_t len)
{
	uint64_t h = 0x6a09e667f3bcc909ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= g[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static int memo_init(memo *m, size_t length)
{
	memset(m, 0, sizeof *m);
	m->length = length;
	m->cap = 64;
	m->slots = 256;
	m->arena = malloc(m->cap * length);
	m->evals = malloc(m->cap * sizeof *m->evals);
	m->slot = calloc(m->slots, sizeof *m->slot);
	return m->arena && m->evals && m->slot ? 0 : -1;
}

static void memo_free(memo *m)
{
	free(m->arena);
	free(m->evals);
	free(m->slot);
	memset(m, 0, sizeof *m);
}

static const uint8_t *memo_genome(const memo *m, size_t i)
{
	return m->arena + i * m->length;
}

/* The slot where `g` is or would go. */
static uint32_t *memo_slot(const memo *m, const uint8_t *g)
{
	size_t mask = m->slots - 1, i = genome_hash(g, m->length) & mask;
	for (;; i = (i + 1) & mask) {
		uint32_t s = m->slot[i];
		if (!s || !memcmp(memo_genome(m, s - 1), g, m->length))
			return &m->slot[i];
	}
}

static int memo_grow(memo *m)
{
	if (m->n == m->cap) {
		size_t cap = m->cap * 2;
		uint8_t *arena = realloc(m->arena, cap * m->length);
		if (!arena)
			return -1;
		m->arena = arena;
		ga_eval *evals = realloc(m->evals, cap * sizeof *evals);
		if (!evals)
			return -1;
		m->evals = evals;
		m->cap = cap;
	}
	if (2 * (m->n + 1) > m->slots) {
		uint32_t *old = m->slot;
		size_t oldn = m->slots;
		m->slots *= 2;
		m->slot = calloc(m->slots, sizeof *m->slot);
		if (!m->slot) {
			m->slot = old;
			m->slots = oldn;
			return -1;
		}
		for (size_t i = 0; i < oldn; i++)
			if (old[i])
				*memo_slot(m, memo_genome(m, old[i] - 1)) = old[i];
		free(old);
	}
	return 0;
}

/*
 * The memo index of `g`, adding it (unevaluated) when new. Returns -1 when
 * out of memory. `g` must not point into the arena.
 */
static long memo_intern(memo *m, const uint8_t *g)
{
	uint32_t *s = memo_slot(m, g);
	if (*s)
		return (long)*s - 1;
	if (m->n >= UINT32_MAX - 1 || memo_grow(m))
		return -1;
	s = memo_slot(m, g);
	memcpy(m->arena + m->n * m->length, g, m->length);
	*s = (uint32_t)++m->n;
	return (long)m->n - 1;
}

/* ---- defaults ---- */

void ga_default_random(const ga_problem *p, rng *r, uint8_t *genome)
{
	for (size_t i = 0; i < p->length; i++)
		genome[i] = (uint8_t)rng_below(r, (uint64_t)p->alphabet);
}

void ga_default_mutate(const ga_problem *p, rng *r, double rate, uint8_t *genome)
{
	for (size_t i = 0; i < p->length; i++) {
		if (rng_unit(r) >= rate)
			continue;
		/* A different symbol, uniformly among the other alphabet - 1. */
		uint8_t v = (uint8_t)rng_below(r, (uint64_t)p->alphabet - 1);
		genome[i] = v >= genome[i] ? (uint8_t)(v + 1) : v;
	}
}

void ga_default_crossover(const ga_problem *p, rng *r, const uint8_t *a, const uint8_t *b,
			  uint8_t *child)
{
	size_t cut = p->length < 2 ? p->length : 1 + (size_t)rng_below(r, p->length - 1);
	memcpy(child, a, cut);
	memcpy(child + cut, b + cut, p->length - cut);
}

static void default_describe(const ga_problem *p, const uint8_t *genome, char *buf, size_t size)
{
	size_t i = 0;
	for (; i < p->length && i + 1 < size; i++)
		buf[i] = (char)('0' + genome[i] % 10);
	if (size)
		buf[i] = '\0';
}

static void op_random(const ga_problem *p, rng *r, uint8_t *g)
{
	if (p->random)
		p->random(p->ctx, r, g);
	else
		ga_default_random(p, r, g);
}

static void op_mutate(const ga_problem *p, rng *r, double rate, uint8_t *g)
{
	if (p->mutate)
		p->mutate(p->ctx, r, rate, g);
	else
		ga_default_mutate(p, r, rate, g);
}

static void op_crossover(const ga_problem *p, rng *r, const uint8_t *a, const uint8_t *b,
			 uint8_t *child)
{
	if (p->crossover)
		p->crossover(p->ctx, r, a, b, child);
	else
		ga_default_crossover(p, r, a, b, child);
}

/* ---- configuration ---- */

void ga_config_default(ga_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->algorithm = GA_GENETIC;
	cfg->population = 30;
	cfg->generations = 50;
	cfg->mutation_rate = 0.1;
	cfg->elites = 1;
	cfg->bins = 10;
}

int ga_config_check(const ga_config *cfg, sf_err *err)
{
	if (cfg->algorithm != GA_GENETIC && cfg->algorithm != GA_MAP_ELITES &&
	    cfg->algorithm != GA_RANDOM)
		return sf_err_set(err, SF_EINVAL,
				  "algorithm %d is unknown (allowed: ga, map_elites, random)",
				  (int)cfg->algorithm);
	if (cfg->population < 2 || cfg->population > 10000)
		return sf_err_set(err, SF_EINVAL,
				  "population %d is out of range (allowed: 2..10000)",
				  cfg->population);
	if (cfg->generations < 1 || cfg->generations > 100000)
		return sf_err_set(err, SF_EINVAL,
				  "generations %d is out of range (allowed: 1..100000)",
				  cfg->generations);
	if (!(cfg->mutation_rate >= 0 && cfg->mutation_rate <= 1))
		return sf_err_set(err, SF_EINVAL,
				  "mutation_rate %g is out of range (allowed: 0..1)",
				  cfg->mutation_rate);
	if (cfg->elites < 0 || cfg->elites >= cfg->population)
		return sf_err_set(
			err, SF_EINVAL,
			"elites %d is out of range (allowed: 0..%d, below the population)",
			cfg->elites, cfg->population - 1);
	if (cfg->tournament != 0 && (cfg->tournament < 2 || cfg->tournament > 64))
		return sf_err_set(
			err, SF_EINVAL,
			"tournament %d is out of range (allowed: 0 for roulette, or 2..64)",
			cfg->tournament);
	if (cfg->bins < 1 || cfg->bins > 256)
		return sf_err_set(err, SF_EINVAL, "bins %d is out of range (allowed: 1..256)",
				  cfg->bins);
	return 0;
}

int ga_params_check(int population, int generations, double mutation_rate, int elites, sf_err *err)
{
	if (population < 2 || population > 1000)
		return sf_err_set(err, SF_EINVAL,
				  "population %d is out of range (allowed: 2..1000)", population);
	if (generations < 1 || generations > 1000)
		return sf_err_set(err, SF_EINVAL,
				  "generations %d is out of range (allowed: 1..1000)", generations);
	if (!(mutation_rate >= 0 && mutation_rate <= 1))
		return sf_err_set(err, SF_EINVAL,
				  "mutation_rate %g is out of range (allowed: 0..1)",
				  mutation_rate);
	if (elites < 0 || elites >= population)
		return sf_err_set(
			err, SF_EINVAL,
			"elites %d is out of range (allowed: 0..%d, below the population)", elites,
			population - 1);
	return 0;
}

const char *ga_status_name(ga_status status)
{
	switch (status) {
	case GA_COMPLETED:
		return "completed";
	case GA_CANCELLED:
		return "cancelled";
	case GA_TIMED_OUT:
		return "timed_out";
	}
	return "unknown";
}

const char *ga_algorithm_name(ga_algorithm algorithm)
{
	return algorithm == GA_MAP_ELITES ? "map_elites" : algorithm == GA_RANDOM ? "random" : "ga";
}

/* ---- the run ---- */

typedef struct run {
	const ga_problem *p;
	const ga_config *cfg;
	rng r;
	memo m;
	ga_result *out;
	sf_err *err;
} run;

double ga_clock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Interns `n` genomes (back to back in `genomes`) and evaluates the ones the
 * memo has not seen, as one batch; writes their memo indices to `idx`.
 */
static int evaluate_batch(run *ru, const uint8_t *genomes, size_t n, long *idx)
{
	size_t first = ru->m.n;
	for (size_t i = 0; i < n; i++) {
		idx[i] = memo_intern(&ru->m, genomes + i * ru->m.length);
		if (idx[i] < 0)
			return sf_err_set(ru->err, SF_ENOMEM, "out of memory in the search memo");
	}
	size_t fresh = ru->m.n - first;
	if (!fresh)
		return 0;
	int rc = ru->p->evaluate(ru->p->ctx, memo_genome(&ru->m, first), fresh, ru->m.evals + first,
				 ru->err);
	if (rc)
		return rc;
	for (size_t i = first; i < ru->m.n; i++) {
		ga_eval *e = &ru->m.evals[i];
		/* Roulette selection needs a finite total: NaN, infinities and
		 * negatives count as 0. */
		if (!(e->fitness >= 0 && e->fitness <= DBL_MAX))
			e->fitness = 0;
		for (int d = 0; d < GA_DESCRIPTORS; d++)
			e->desc[d] = e->desc[d] > 0 ? (e->desc[d] < 1 ? e->desc[d] : 1) : 0;
	}
	return 0;
}

/* Appends the statistics of the individuals `idx[0..n-1]` and reports them. */
static void record_generation(run *ru, int g, const long *idx, size_t n, int filled)
{
	ga_generation gen = { .generation = g,
			      .generations = ru->cfg->generations,
			      .filled = filled,
			      .evaluations = ru->m.n };
	double sum = 0;
	gen.best = -1;
	for (size_t i = 0; i < n; i++) {
		double f = ru->m.evals[idx[i]].fitness;
		sum += f;
		if (f > gen.best) {
			gen.best = f;
			gen.at_best = 0;
		}
		gen.at_best += f == gen.best;
	}
	gen.mean = n ? sum / (double)n : 0;
	if (!n)
		gen.best = 0;
	ru->out->series[ru->out->generations_run++] = gen;
	if (ru->cfg->progress)
		ru->cfg->progress(ru->cfg->progress_arg, &gen);
}

/* After a generation: 1 when the run must stop, with the status set. */
static int should_stop(run *ru)
{
	if (ru->cfg->cancel && atomic_load(ru->cfg->cancel)) {
		ru->out->status = GA_CANCELLED;
		return 1;
	}
	if (ru->cfg->deadline > 0 && ga_clock_now() >= ru->cfg->deadline) {
		ru->out->status = GA_TIMED_OUT;
		return 1;
	}
	return 0;
}

/* True when memo entry x ranks before y: higher fitness, then smaller genome bytes. */
static int ranks_before(const memo *m, long x, long y)
{
	double fx = m->evals[x].fitness, fy = m->evals[y].fitness;
	if (fx != fy)
		return fx > fy;
	return memcmp(memo_genome(m, (size_t)x), memo_genome(m, (size_t)y), m->length) < 0;
}

/*
 * Sorts memo indices best first (a merge sort: qsort has no context
 * argument, and the order must not depend on the C library's algorithm).
 * Returns -1 when out of memory.
 */
static int sort_by_rank(const memo *m, long *idx, size_t n)
{
	long *tmp = malloc(n * sizeof *tmp + 1);
	if (!tmp)
		return -1;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = ranks_before(m, idx[j], idx[i]) ? idx[j++] : idx[i++];
			while (i < mid)
				tmp[k++] = idx[i++];
			while (j < hi)
				tmp[k++] = idx[j++];
		}
		memcpy(idx, tmp, n * sizeof *idx);
	}
	free(tmp);
	return 0;
}

/* Copies the memo entries idx[0..n-1] into the result, in that order. */
static int fill_result(run *ru, const long *idx, size_t n, const int *cells)
{
	ga_result *out = ru->out;
	size_t len = ru->m.length;
	out->count = n;
	out->genomes = malloc(n * len + 1);
	out->evals = malloc(n * sizeof *out->evals + 1);
	out->cells = cells ? malloc(n * sizeof *out->cells + 1) : NULL;
	if (!out->genomes || !out->evals || (cells && !out->cells))
		return sf_err_set(ru->err, SF_ENOMEM, "out of memory for the search result");
	for (size_t i = 0; i < n; i++) {
		memcpy(out->genomes + i * len, memo_genome(&ru->m, (size_t)idx[i]), len);
		out->evals[i] = ru->m.evals[idx[i]];
		if (cells)
			out->cells[i] = cells[i];
	}
	out->evaluations = ru->m.n;
	return 0;
}

/* Roulette-wheel selection: an individual with probability proportional to fitness. */
static size_t select_parent(run *ru, const double *cumulative, size_t n)
{
	double total = cumulative[n - 1];
	if (!(total > 0))
		return (size_t)rng_below(&ru->r, n);
	double x = rng_unit(&ru->r) * total;
	size_t lo = 0, hi = n - 1;
	while (lo < hi) { /* the first with cumulative > x */
		size_t mid = (lo + hi) / 2;
		if (cumulative[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Tournament selection: the fittest of k individuals drawn uniformly with
 * replacement (ties: the first drawn). It depends on the ranking only, so a
 * fitness shifted by a constant (as kinds do to keep it >= 0) selects the
 * same way, where roulette would flatten the odds.
 */
static size_t select_tournament(run *ru, const long *idx, size_t n, int k)
{
	size_t best = (size_t)rng_below(&ru->r, n);
	for (int j = 1; j < k; j++) {
		size_t c = (size_t)rng_below(&ru->r, n);
		if (ru->m.evals[idx[c]].fitness > ru->m.evals[idx[best]].fitness)
			best = c;
	}
	return best;
}

/*
 * The paper's generational GA; with GA_RANDOM the same loop, every
 * offspring a random genome instead of a bred one (the baseline).
 */
static int run_genetic(run *ru, size_t count)
{
	const ga_config *cfg = ru->cfg;
	size_t P = (size_t)cfg->population, len = ru->m.length;
	uint8_t *pop = malloc(P * len), *next = malloc(P * len);
	long *idx = malloc(P * sizeof *idx), *order = malloc(P * sizeof *order);
	double *cumulative = malloc(P * sizeof *cumulative);
	int rc = 0;
	if (!pop || !next || !idx || !order || !cumulative) {
		rc = sf_err_set(ru->err, SF_ENOMEM, "out of memory for the population");
		goto done;
	}
	for (size_t i = 0; i < P; i++)
		op_random(ru->p, &ru->r, pop + i * len);

	for (int g = 1; g <= cfg->generations; g++) {
		if ((rc = evaluate_batch(ru, pop, P, idx)))
			goto done;
		record_generation(ru, g, idx, P, 0);
		if (g == cfg->generations || should_stop(ru))
			break;

		/* Elites: the best of this population, ties by position. */
		for (size_t i = 0; i < P; i++)
			order[i] = (long)i;
		for (size_t i = 1; i < P; i++) { /* stable insertion sort, P is small */
			long v = order[i];
			size_t j = i;
			while (j > 0 && ru->m.evals[idx[v]].fitness >
						ru->m.evals[idx[order[j - 1]]].fitness) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
		}
		size_t E = (size_t)cfg->elites;
		for (size_t i = 0; i < E; i++)
			memcpy(next + i * len, pop + (size_t)order[i] * len, len);

		double sum = 0;
		for (size_t i = 0; i < P; i++) {
			sum += ru->m.evals[idx[i]].fitness;
			cumulative[i] = sum;
		}
		for (size_t i = E; i < P; i++) {
			uint8_t *child = next + i * len;
			if (cfg->algorithm == GA_RANDOM) {
				op_random(ru->p, &ru->r, child);
				continue;
			}
			size_t a, b;
			if (cfg->tournament) {
				a = select_tournament(ru, idx, P, cfg->tournament);
				b = select_tournament(ru, idx, P, cfg->tournament);
			} else {
				a = select_parent(ru, cumulative, P);
				b = select_parent(ru, cumulative, P);
			}
			op_crossover(ru->p, &ru->r, pop + a * len, pop + b * len, child);
			op_mutate(ru->p, &ru->r, cfg->mutation_rate, child);
		}
		uint8_t *t = pop;
		pop = next;
		next = t;
	}

	/* The best `count` distinct genomes of the whole run. */
	long *all = malloc(ru->m.n * sizeof *all + 1);
	if (!all) {
		rc = sf_err_set(ru->err, SF_ENOMEM, "out of memory ranking the result");
		goto done;
	}
	for (size_t i = 0; i < ru->m.n; i++)
		all[i] = (long)i;
	if (sort_by_rank(&ru->m, all, ru->m.n))
		rc = sf_err_set(ru->err, SF_ENOMEM, "out of memory ranking the result");
	else
		rc = fill_result(ru, all, count < ru->m.n ? count : ru->m.n, NULL);
	free(all);
done:
	free(pop);
	free(next);
	free(idx);
	free(order);
	free(cumulative);
	return rc;
}

/* The archive cell of an evaluation: row-major over the two descriptors. */
static int cell_of(const ga_eval *e, int bins)
{
	int c[GA_DESCRIPTORS];
	for (int d = 0; d < GA_DESCRIPTORS; d++) {
		c[d] = (int)(e->desc[d] * bins);
		if (c[d] >= bins)
			c[d] = bins - 1;
	}
	return c[0] * bins + c[1];
}

/*
 * MAP-Elites: an archive holding, per cell of the descriptor grid, the best
 * genome seen for it. Generation 1 evaluates `population` random genomes;
 * each later one breeds `population` offspring from parents drawn uniformly
 * among the occupied cells (single-point crossover of two, then mutation).
 */
static int run_map_elites(run *ru, size_t count)
{
	const ga_config *cfg = ru->cfg;
	size_t P = (size_t)cfg->population, len = ru->m.length;
	size_t ncells = (size_t)cfg->bins * (size_t)cfg->bins;
	long *archive = malloc(ncells * sizeof *archive);
	long *occupied = malloc(ncells * sizeof *occupied); /* cells, in order filled */
	uint8_t *batch = malloc(P * len);
	long *idx = malloc(P * sizeof *idx);
	long *members = malloc(ncells * sizeof *members);
	size_t filled = 0;
	int rc = 0;
	if (!archive || !occupied || !batch || !idx || !members) {
		rc = sf_err_set(ru->err, SF_ENOMEM, "out of memory for the archive");
		goto done;
	}
	for (size_t c = 0; c < ncells; c++)
		archive[c] = -1;

	for (int g = 1; g <= cfg->generations; g++) {
		for (size_t i = 0; i < P; i++) {
			uint8_t *child = batch + i * len;
			if (g == 1 || !filled) {
				op_random(ru->p, &ru->r, child);
				continue;
			}
			long a = archive[occupied[rng_below(&ru->r, filled)]];
			long b = archive[occupied[rng_below(&ru->r, filled)]];
			op_crossover(ru->p, &ru->r, memo_genome(&ru->m, (size_t)a),
				     memo_genome(&ru->m, (size_t)b), child);
			op_mutate(ru->p, &ru->r, cfg->mutation_rate, child);
		}
		if ((rc = evaluate_batch(ru, batch, P, idx)))
			goto done;
		for (size_t i = 0; i < P; i++) {
			int c = cell_of(&ru->m.evals[idx[i]], cfg->bins);
			long cur = archive[c];
			if (cur < 0)
				occupied[filled++] = c;
			if (cur < 0 || ru->m.evals[idx[i]].fitness > ru->m.evals[cur].fitness)
				archive[c] = idx[i];
		}
		for (size_t i = 0; i < filled; i++)
			members[i] = archive[occupied[i]];
		record_generation(ru, g, members, filled, (int)filled);
		if (g == cfg->generations || should_stop(ru))
			break;
	}

	/* The archive, best first; cells follow their genomes. */
	for (size_t i = 0; i < filled; i++)
		members[i] = archive[occupied[i]];
	if (sort_by_rank(&ru->m, members, filled)) {
		rc = sf_err_set(ru->err, SF_ENOMEM, "out of memory ranking the archive");
		goto done;
	}
	size_t n = count && count < filled ? count : filled;
	int *cells = malloc(n * sizeof *cells + 1);
	if (!cells) {
		rc = sf_err_set(ru->err, SF_ENOMEM, "out of memory for the archive");
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		cells[i] = cell_of(&ru->m.evals[members[i]], cfg->bins);
	rc = fill_result(ru, members, n, cells);
	free(cells);
done:
	free(archive);
	free(occupied);
	free(batch);
	free(idx);
	free(members);
	return rc;
}

int ga_run(const ga_problem *problem, const ga_config *cfg, size_t count, ga_result *out,
	   sf_err *err)
{
	memset(out, 0, sizeof *out);
	int rc = ga_config_check(cfg, err);
	if (rc)
		return rc;
	if (!problem->evaluate || problem->length < 1 ||
	    (!(problem->random && problem->mutate) &&
	     (problem->alphabet < 2 || problem->alphabet > 256)))
		return sf_err_set(err, SF_EINVAL,
				  "search problem needs evaluate(), a length >= 1 and an alphabet "
				  "of 2..256 symbols for the default operators");
	run ru = { .p = problem, .cfg = cfg, .out = out, .err = err };
	rng_seed(&ru.r, cfg->seed);
	out->length = problem->length;
	out->status = GA_COMPLETED;
	out->series = calloc((size_t)cfg->generations, sizeof *out->series);
	if (!out->series || memo_init(&ru.m, problem->length)) {
		memo_free(&ru.m);
		ga_result_free(out);
		return sf_err_set(err, SF_ENOMEM, "out of memory starting the search");
	}
	rc = cfg->algorithm == GA_MAP_ELITES ? run_map_elites(&ru, count) : run_genetic(&ru, count);
	memo_free(&ru.m);
	if (rc)
		ga_result_free(out);
	return rc;
}

void ga_result_free(ga_result *res)
{
	free(res->genomes);
	free(res->evals);
	free(res->cells);
	free(res->series);
	memset(res, 0, sizeof *res);
}

/* Writes the problem's printable form of `genome` (see ga_problem.describe). */
void ga_describe(const ga_problem *p, const uint8_t *genome, char *buf, size_t size)
{
	if (p->describe)
		p->describe(p->ctx, genome, buf, size);
	else
		default_describe(p, genome, buf, size);
}
