/*
 * test_ga.c - the generic evolutionary search (core/search/ga.h): the
 * paper's genetic algorithm (population 30, 50 generations, parents drawn
 * with probability proportional to fitness, single-point crossover,
 * pointwise mutation at 0.1 per element, 1 elite) and MAP-Elites.
 *
 * Every expectation comes from toy problems defined here, whose statistics
 * are known in closed form (OneMax over bits, symbol counts over an
 * alphabet of 4, a hash of the genome that looks like noise), or from
 * invariants checked against a record of every genome the evaluator was
 * handed; none is a copy of this project's own output. Statistical checks
 * use fixed seeds and 5-sigma binomial tolerances, so they cannot flake.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "rng.h"
#include "search/ga.h"
#include "support.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define MAX_LEN 64
#define MAX_GENS 64
#define MAX_THREADS 4

/* ---- toy problems ---- */

typedef enum toy_kind {
	TOY_ONEMAX, /* fitness: elements equal to 1 (OneMax over alphabet 2) */
	TOY_NOISE,  /* fitness: a hash of the genome, 0.0..99.9, noise-like */
	TOY_THREES, /* fitness: elements equal to 3 (alphabet 4); many ties */
} toy_kind;

/*
 * Every kind describes a genome by the fractions of its elements equal to 1
 * and to 2, so the MAP-Elites cell of any genome can be worked out here.
 */
typedef struct toy {
	toy_kind kind;
	size_t length;
	int threads;    /* evaluate() spreads a batch over this many threads */
	int fail_batch; /* 1-based batch at which evaluate() fails; 0: never */
	int fail_code;
	/* Every genome handed to evaluate(), in order, and what it returned. */
	uint8_t *seen;
	ga_eval *seen_eval;
	size_t nseen, cap;
	size_t batches;
	int oom;
	/* Calls of the custom operators (test_custom_operators). */
	long randoms, mutates, crossovers;
	double last_rate;
} toy;

static uint64_t toy_hash(const uint8_t *g, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then a splitmix finaliser */
	for (size_t i = 0; i < len; i++)
		h = (h ^ g[i]) * 0x100000001b3ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static ga_eval toy_eval_one(toy_kind kind, const uint8_t *g, size_t len)
{
	size_t count[256] = { 0 };
	for (size_t i = 0; i < len; i++)
		count[g[i]]++;
	ga_eval e;
	e.desc[0] = (double)count[1] / (double)len;
	e.desc[1] = (double)count[2] / (double)len;
	switch (kind) {
	case TOY_ONEMAX:
		e.fitness = (double)count[1];
		break;
	case TOY_NOISE:
		e.fitness = (double)(toy_hash(g, len) % 1000) / 10.0;
		break;
	case TOY_THREES:
	default:
		e.fitness = (double)count[3];
		break;
	}
	return e;
}

typedef struct slice {
	const toy *t;
	const uint8_t *genomes;
	size_t from, to;
	ga_eval *out;
} slice;

static void *slice_main(void *arg)
{
	slice *s = arg;
	for (size_t i = s->from; i < s->to; i++)
		s->out[i] = toy_eval_one(s->t->kind, s->genomes + i * s->t->length, s->t->length);
	return NULL;
}

static void toy_record(toy *t, const uint8_t *genomes, size_t n, const ga_eval *out)
{
	if (t->nseen + n > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->nseen + n)
			cap *= 2;
		uint8_t *seen = realloc(t->seen, cap * t->length);
		if (seen)
			t->seen = seen;
		ga_eval *ev = realloc(t->seen_eval, cap * sizeof *ev);
		if (ev)
			t->seen_eval = ev;
		if (!seen || !ev) {
			t->oom = 1;
			return;
		}
		t->cap = cap;
	}
	memcpy(t->seen + t->nseen * t->length, genomes, n * t->length);
	memcpy(t->seen_eval + t->nseen, out, n * sizeof *out);
	t->nseen += n;
}

static int toy_evaluate(void *ctx, const uint8_t *genomes, size_t n, ga_eval *out, sf_err *err)
{
	toy *t = ctx;
	t->batches++;
	if (t->fail_batch && t->batches == (size_t)t->fail_batch)
		return sf_err_set(err, t->fail_code, "toy evaluator failed at batch %zu",
				  t->batches);
	size_t k = t->threads > 1 ? (size_t)t->threads : 1;
	if (k > n)
		k = n;
	if (k <= 1) {
		slice s = { .t = t, .genomes = genomes, .from = 0, .to = n, .out = out };
		slice_main(&s);
	} else {
		pthread_t tid[MAX_THREADS];
		slice s[MAX_THREADS];
		size_t started = 0;
		for (size_t w = 0; w < k; w++) {
			s[w] = (slice){ .t = t,
					.genomes = genomes,
					.from = n * w / k,
					.to = n * (w + 1) / k,
					.out = out };
			if (pthread_create(&tid[w], NULL, slice_main, &s[w]))
				break;
			started++;
		}
		for (size_t w = 0; w < started; w++)
			pthread_join(tid[w], NULL);
		if (started < k)
			return sf_err_set(err, SF_ESYS, "toy evaluator could not start a thread");
	}
	toy_record(t, genomes, n, out);
	return 0;
}

static void toy_init(toy *t, toy_kind kind, size_t length)
{
	memset(t, 0, sizeof *t);
	t->kind = kind;
	t->length = length;
}

static void toy_free(toy *t)
{
	free(t->seen);
	free(t->seen_eval);
	memset(t, 0, sizeof *t);
}

static ga_problem toy_problem(toy *t, int alphabet)
{
	return (ga_problem){
		.length = t->length, .alphabet = alphabet, .ctx = t, .evaluate = toy_evaluate
	};
}

static const uint8_t *seen_genome(const toy *t, size_t i)
{
	return t->seen + i * t->length;
}

static double best_seen(const toy *t)
{
	double best = -1;
	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen_eval[i].fitness > best)
			best = t->seen_eval[i].fitness;
	return best;
}

/* qsort has no context argument; the tests run one at a time. */
static size_t sort_len;

static int cmp_genome(const void *x, const void *y)
{
	return memcmp(x, y, sort_len);
}

/* A sorted copy of every genome the toy received. */
static uint8_t *sorted_seen(const toy *t)
{
	uint8_t *s = malloc(t->nseen * t->length + 1);
	assert_non_null(s);
	memcpy(s, t->seen, t->nseen * t->length);
	sort_len = t->length;
	qsort(s, t->nseen, t->length, cmp_genome);
	return s;
}

static void assert_no_duplicates(const toy *t)
{
	assert_false(t->oom);
	uint8_t *s = sorted_seen(t);
	for (size_t i = 1; i < t->nseen; i++)
		if (!memcmp(s + (i - 1) * t->length, s + i * t->length, t->length))
			fail_msg("a genome was evaluated twice (%zu genomes received)", t->nseen);
	free(s);
}

static int was_seen(const uint8_t *sorted, size_t n, size_t len, const uint8_t *g)
{
	sort_len = len;
	return bsearch(g, sorted, n, len, cmp_genome) != NULL;
}

/* ---- running ---- */

static void run_ok(const ga_problem *p, const ga_config *cfg, size_t count, ga_result *res)
{
	sf_err err = { 0 };
	int rc = ga_run(p, cfg, count, res, &err);
	if (rc)
		fail_msg("ga_run failed (%d): %s", rc, err.msg);
}

static ga_config paper_config(ga_algorithm algorithm, uint64_t seed)
{
	ga_config cfg;
	ga_config_default(&cfg);
	cfg.algorithm = algorithm;
	cfg.seed = seed;
	return cfg;
}

/* The first field in which two results differ, or NULL when byte-identical. */
static const char *result_diff(const ga_result *a, const ga_result *b)
{
	if (a->status != b->status)
		return "status";
	if (a->length != b->length)
		return "length";
	if (a->count != b->count)
		return "count";
	if (a->generations_run != b->generations_run)
		return "generations_run";
	if (a->evaluations != b->evaluations)
		return "evaluations";
	if (a->count && memcmp(a->genomes, b->genomes, a->count * a->length))
		return "genomes";
	if (a->count && memcmp(a->evals, b->evals, a->count * sizeof *a->evals))
		return "evals";
	if (!a->cells != !b->cells)
		return "cells";
	if (a->cells && a->count && memcmp(a->cells, b->cells, a->count * sizeof *a->cells))
		return "cells";
	if (a->generations_run &&
	    memcmp(a->series, b->series, (size_t)a->generations_run * sizeof *a->series))
		return "series";
	return NULL;
}

static void assert_result_empty(const ga_result *r)
{
	assert_int_equal(r->count, 0);
	assert_int_equal(r->length, 0);
	assert_null(r->genomes);
	assert_null(r->evals);
	assert_null(r->cells);
	assert_null(r->series);
	assert_int_equal(r->generations_run, 0);
	assert_int_equal(r->evaluations, 0);
}

/* What the progress callback saw; optionally raises a cancel flag. */
typedef struct watch {
	ga_generation gens[MAX_GENS];
	int calls;
	int cancel_at;
	atomic_int *flag;
} watch;

static void watch_progress(void *arg, const ga_generation *gen)
{
	watch *w = arg;
	if (w->calls < MAX_GENS)
		w->gens[w->calls] = *gen;
	w->calls++;
	if (w->flag && gen->generation == w->cancel_at)
		atomic_store(w->flag, 1);
}

/* The MAP-Elites cell of an evaluation: row-major floor(desc * bins), clamped. */
static int cell_ref(const ga_eval *e, int bins)
{
	int c[GA_DESCRIPTORS];
	for (int d = 0; d < GA_DESCRIPTORS; d++) {
		double x = floor(e->desc[d] * bins);
		c[d] = x < 0 ? 0 : x > bins - 1 ? bins - 1 : (int)x;
	}
	return c[0] * bins + c[1];
}

/* ---- configuration ---- */

static void test_config_default(void **state)
{
	(void)state;
	ga_config cfg;
	memset(&cfg, 0x5a, sizeof cfg);
	ga_config_default(&cfg);
	/* Paper: "population size of 30, 50 generations, ... a pointwise mutation
	 * at a rate of 0.1 per element, and 1 elite". */
	assert_int_equal(cfg.algorithm, GA_GENETIC);
	assert_int_equal(cfg.population, 30);
	assert_int_equal(cfg.generations, 50);
	assert_true(cfg.mutation_rate == 0.1);
	assert_int_equal(cfg.elites, 1);
	assert_int_equal(cfg.bins, 10);
	assert_null(cfg.progress);
	assert_null(cfg.progress_arg);
	assert_null(cfg.cancel);
	assert_true(cfg.deadline == 0);
	sf_err err = { 0 };
	assert_int_equal(ga_config_check(&cfg, &err), 0);
}

enum field { F_ALGORITHM, F_POPULATION, F_GENERATIONS, F_RATE, F_ELITES, F_BINS, F_TOURNAMENT };

static void set_field(ga_config *cfg, enum field f, double v)
{
	switch (f) {
	case F_ALGORITHM:
		cfg->algorithm = (ga_algorithm)(int)v;
		break;
	case F_POPULATION:
		cfg->population = (int)v;
		break;
	case F_GENERATIONS:
		cfg->generations = (int)v;
		break;
	case F_RATE:
		cfg->mutation_rate = v;
		break;
	case F_ELITES:
		cfg->elites = (int)v;
		break;
	case F_BINS:
		cfg->bins = (int)v;
		break;
	case F_TOURNAMENT:
		cfg->tournament = (int)v;
		break;
	}
}

static void test_config_check_rejects(void **state)
{
	(void)state;
	/* The ranges of ga.h: population 2..10000, generations 1..100000,
	 * mutation_rate 0..1, elites 0..population-1, bins 1..256. */
	static const struct {
		enum field f;
		double value;
		int population; /* 0: the default */
		const char *name, *range;
	} bad[] = {
		{ F_POPULATION, 1, 0, "population", "2..10000" },
		{ F_POPULATION, 0, 0, "population", "2..10000" },
		{ F_POPULATION, -7, 0, "population", "2..10000" },
		{ F_POPULATION, 10001, 0, "population", "2..10000" },
		{ F_GENERATIONS, 0, 0, "generations", "1..100000" },
		{ F_GENERATIONS, -1, 0, "generations", "1..100000" },
		{ F_GENERATIONS, 100001, 0, "generations", "1..100000" },
		{ F_RATE, -0.01, 0, "mutation_rate", "0..1" },
		{ F_RATE, 1.01, 0, "mutation_rate", "0..1" },
		{ F_RATE, NAN, 0, "mutation_rate", "0..1" },
		{ F_RATE, INFINITY, 0, "mutation_rate", "0..1" },
		{ F_RATE, -INFINITY, 0, "mutation_rate", "0..1" },
		{ F_ELITES, -1, 0, "elites", "0..29" },
		{ F_ELITES, 30, 0, "elites", "0..29" },
		{ F_ELITES, 31, 0, "elites", "0..29" },
		{ F_ELITES, 5, 5, "elites", "0..4" },
		{ F_ELITES, 2, 2, "elites", "0..1" },
		{ F_BINS, 0, 0, "bins", "1..256" },
		{ F_BINS, -3, 0, "bins", "1..256" },
		{ F_BINS, 257, 0, "bins", "1..256" },
		{ F_TOURNAMENT, 1, 0, "tournament", "2..64" },
		{ F_TOURNAMENT, -2, 0, "tournament", "2..64" },
		{ F_TOURNAMENT, 65, 0, "tournament", "2..64" },
		{ F_ALGORITHM, 3, 0, "algorithm", NULL },
		{ F_ALGORITHM, -1, 0, "algorithm", NULL },
	};
	for (int i = 0; i < ARRAY_LEN(bad); i++) {
		ga_config cfg;
		ga_config_default(&cfg);
		if (bad[i].population)
			cfg.population = bad[i].population;
		set_field(&cfg, bad[i].f, bad[i].value);
		sf_err err = { 0 };
		int rc = ga_config_check(&cfg, &err);
		if (rc != SF_EINVAL)
			fail_msg("case %d (%s = %g): rc %d, expected SF_EINVAL", i, bad[i].name,
				 bad[i].value, rc);
		assert_int_equal(err.code, SF_EINVAL);
		if (!strstr(err.msg, bad[i].name))
			fail_msg("case %d: message '%s' does not name %s", i, err.msg, bad[i].name);
		if (bad[i].range && !strstr(err.msg, bad[i].range))
			fail_msg("case %d: message '%s' lacks the range %s", i, err.msg,
				 bad[i].range);
		if (!bad[i].range && (!strstr(err.msg, ga_algorithm_name(GA_GENETIC)) ||
				      !strstr(err.msg, ga_algorithm_name(GA_MAP_ELITES)) ||
				      !strstr(err.msg, ga_algorithm_name(GA_RANDOM))))
			fail_msg("case %d: message '%s' lacks the allowed algorithms", i, err.msg);
		assert_null(strchr(err.msg, '\n'));
	}
}

static void test_config_check_accepts_bounds(void **state)
{
	(void)state;
	static const struct {
		enum field f;
		double value;
	} good[] = {
		{ F_POPULATION, 2 },
		{ F_POPULATION, 10000 },
		{ F_GENERATIONS, 1 },
		{ F_GENERATIONS, 100000 },
		{ F_RATE, 0 },
		{ F_RATE, 1 },
		{ F_ELITES, 0 },
		{ F_ELITES, 29 },
		{ F_BINS, 1 },
		{ F_BINS, 256 },
		{ F_ALGORITHM, GA_MAP_ELITES },
		{ F_ALGORITHM, GA_RANDOM },
		{ F_TOURNAMENT, 0 },
		{ F_TOURNAMENT, 2 },
		{ F_TOURNAMENT, 64 },
	};
	for (int i = 0; i < ARRAY_LEN(good); i++) {
		ga_config cfg;
		ga_config_default(&cfg);
		set_field(&cfg, good[i].f, good[i].value);
		sf_err err = { 0 };
		int rc = ga_config_check(&cfg, &err);
		if (rc)
			fail_msg("case %d refused (%d): %s", i, rc, err.msg);
	}
}

static void test_run_rejects_bad_input(void **state)
{
	(void)state;
	toy t;
	toy_init(&t, TOY_ONEMAX, 8);
	/* A bad configuration. */
	ga_config cfg = paper_config(GA_GENETIC, 1);
	cfg.population = 1;
	ga_result res = { .count = 7, .generations_run = 3, .evaluations = 9 };
	sf_err err = { 0 };
	ga_problem p = toy_problem(&t, 2);
	assert_int_equal(ga_run(&p, &cfg, 10, &res, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "population"));
	assert_result_empty(&res);
	/* Bad problems under a good configuration. */
	cfg = paper_config(GA_GENETIC, 1);
	static const struct {
		size_t length;
		int alphabet;
		int no_evaluate;
	} bad[] = {
		{ 0, 2, 0 }, { 8, 1, 0 }, { 8, 0, 0 }, { 8, 257, 0 }, { 8, -2, 0 }, { 8, 2, 1 },
	};
	for (int i = 0; i < ARRAY_LEN(bad); i++) {
		for (int a = 0; a < 2; a++) {
			p = toy_problem(&t, bad[i].alphabet);
			p.length = bad[i].length;
			if (bad[i].no_evaluate)
				p.evaluate = NULL;
			cfg.algorithm = a ? GA_MAP_ELITES : GA_GENETIC;
			res = (ga_result){ .count = 7, .generations_run = 3, .evaluations = 9 };
			err = (sf_err){ 0 };
			int rc = ga_run(&p, &cfg, 10, &res, &err);
			if (rc != SF_EINVAL)
				fail_msg("case %d: rc %d, expected SF_EINVAL", i, rc);
			assert_int_equal(err.code, SF_EINVAL);
			assert_true(err.msg[0] != '\0');
			assert_result_empty(&res);
			ga_result_free(&res);
		}
	}
	assert_int_equal(t.batches, 0);
	toy_free(&t);
}

/* ---- names and printing ---- */

static void custom_describe(void *ctx, const uint8_t *genome, char *buf, size_t size)
{
	snprintf(buf, size, "%s:%d", (const char *)ctx, genome[0]);
}

static void test_names_and_describe(void **state)
{
	(void)state;
	assert_string_equal(ga_status_name(GA_COMPLETED), "completed");
	assert_string_equal(ga_status_name(GA_CANCELLED), "cancelled");
	assert_string_equal(ga_status_name(GA_TIMED_OUT), "timed_out");
	assert_string_equal(ga_algorithm_name(GA_GENETIC), "ga");
	assert_string_equal(ga_algorithm_name(GA_MAP_ELITES), "map_elites");

	/* The default form: one digit per element, truncated to fit. */
	static const uint8_t g[5] = { 0, 1, 2, 3, 1 };
	ga_problem p = { .length = 5, .alphabet = 4 };
	char buf[16];
	ga_describe(&p, g, buf, sizeof buf);
	assert_string_equal(buf, "01231");
	ga_describe(&p, g, buf, 3);
	assert_string_equal(buf, "01");
	ga_describe(&p, g, buf, 1);
	assert_string_equal(buf, "");
	/* A problem's own form. */
	p.ctx = "toy";
	p.describe = custom_describe;
	ga_describe(&p, g + 2, buf, sizeof buf);
	assert_string_equal(buf, "toy:2");
}

/* ---- the default operators ---- */

/* 5 binomial standard deviations around n * p. */
static void assert_binomial(double observed, double n, double prob, const char *what)
{
	double sigma = sqrt(n * prob * (1 - prob));
	if (fabs(observed - n * prob) > 5 * sigma)
		fail_msg("%s: observed %.0f, expected %.1f +- %.1f (5 sigma)", what, observed,
			 n * prob, 5 * sigma);
}

static void test_default_random(void **state)
{
	(void)state;
	static const int alphabets[] = { 2, 3, 4, 5, 7, 10, 255, 256 };
	enum { LEN = 1000, DRAWS = 100 };
	for (int i = 0; i < ARRAY_LEN(alphabets); i++) {
		int A = alphabets[i];
		ga_problem p = { .length = LEN, .alphabet = A };
		rng r;
		rng_seed(&r, 1000 + (uint64_t)A);
		static uint8_t g[LEN + 1];
		long count[256] = { 0 };
		for (int d = 0; d < DRAWS; d++) {
			g[LEN] = 0xEE;
			ga_default_random(&p, &r, g);
			assert_int_equal(g[LEN], 0xEE); /* nothing written past the genome */
			for (int k = 0; k < LEN; k++) {
				if (g[k] >= A)
					fail_msg("alphabet %d: symbol %d", A, g[k]);
				count[g[k]]++;
			}
		}
		/* Uniform: each symbol within 5 sigma of n / A. */
		for (int s = 0; s < A; s++) {
			char what[64];
			snprintf(what, sizeof what, "alphabet %d, symbol %d", A, s);
			assert_binomial((double)count[s], LEN * DRAWS, 1.0 / A, what);
		}
	}
}

/* The cut k in 1..len-1 with child == a[0..k) b[k..len), or 0 when none. */
static size_t cut_of(const uint8_t *child, const uint8_t *a, const uint8_t *b, size_t len)
{
	for (size_t k = 1; k < len; k++)
		if (!memcmp(child, a, k) && !memcmp(child + k, b + k, len - k))
			return k;
	return 0;
}

static void test_default_crossover(void **state)
{
	(void)state;
	/* Parents that differ at every element, so the cut is unambiguous. */
	static const struct {
		size_t len;
		int alphabet;
		uint8_t a, b;
	} cases[] = {
		{ 16, 2, 0, 1 }, { 16, 2, 1, 0 }, { 5, 4, 2, 3 }, { 2, 2, 0, 1 }, { 64, 4, 3, 0 },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		size_t L = cases[i].len;
		ga_problem p = { .length = L, .alphabet = cases[i].alphabet };
		uint8_t a[MAX_LEN], b[MAX_LEN], child[MAX_LEN + 1];
		memset(a, cases[i].a, L);
		memset(b, cases[i].b, L);
		rng r;
		rng_seed(&r, 77 + (uint64_t)i);
		long hits[MAX_LEN] = { 0 };
		int draws = 100 * (int)(L - 1);
		for (int d = 0; d < draws; d++) {
			child[L] = 0xEE;
			ga_default_crossover(&p, &r, a, b, child);
			assert_int_equal(child[L], 0xEE);
			size_t k = cut_of(child, a, b, L);
			if (!k)
				fail_msg("case %d: child is no prefix of a followed by b's suffix",
					 i);
			hits[k]++;
		}
		for (size_t k = 1; k < L; k++) {
			if (!hits[k])
				fail_msg("case %d: cut %zu never drawn", i, k);
			char what[64];
			snprintf(what, sizeof what, "case %d, cut %zu", i, k);
			assert_binomial((double)hits[k], draws, 1.0 / (double)(L - 1), what);
		}
		/* The parents are only read. */
		for (size_t k = 0; k < L; k++)
			assert_true(a[k] == cases[i].a && b[k] == cases[i].b);
	}
}

static void test_default_mutate(void **state)
{
	(void)state;
	enum { LEN = 1000, DRAWS = 200 };
	static const int alphabets[] = { 2, 4, 5 };
	static const double rates[] = { 0.1, 0.3 };
	static uint8_t orig[LEN], g[LEN + 1];
	for (int ai = 0; ai < ARRAY_LEN(alphabets); ai++) {
		int A = alphabets[ai];
		ga_problem p = { .length = LEN, .alphabet = A };
		for (int k = 0; k < LEN; k++)
			orig[k] = (uint8_t)(k % A);
		for (int ri = 0; ri < ARRAY_LEN(rates); ri++) {
			double rate = rates[ri];
			rng r;
			rng_seed(&r, 4242 + (uint64_t)(10 * ai + ri));
			long changed = 0, from[8] = { 0 }, trans[8][8] = { { 0 } };
			for (int d = 0; d < DRAWS; d++) {
				memcpy(g, orig, LEN);
				g[LEN] = 0xEE;
				ga_default_mutate(&p, &r, rate, g);
				assert_int_equal(g[LEN], 0xEE);
				for (int k = 0; k < LEN; k++) {
					if (g[k] >= A)
						fail_msg("alphabet %d: symbol %d", A, g[k]);
					if (g[k] == orig[k])
						continue;
					changed++;
					from[orig[k]]++;
					trans[orig[k]][g[k]]++;
				}
			}
			/* Changed elements occur at the configured rate: a mutation
			 * that could keep the symbol would show a rate of only
			 * rate * (A - 1) / A. */
			char what[80];
			snprintf(what, sizeof what, "alphabet %d, rate %g: changed", A, rate);
			assert_binomial((double)changed, (double)LEN * DRAWS, rate, what);
			/* A changed element takes each other symbol equally often. */
			for (int s = 0; s < A; s++) {
				assert_int_equal(trans[s][s], 0);
				for (int u = 0; u < A; u++) {
					if (u == s)
						continue;
					snprintf(what, sizeof what,
						 "alphabet %d, rate %g: %d -> %d", A, rate, s, u);
					assert_binomial((double)trans[s][u], (double)from[s],
							1.0 / (A - 1), what);
				}
			}
		}
	}
	/* Rate 0 changes nothing; rate 1 changes every element. */
	static const int all[] = { 2, 3, 4, 256 };
	for (int ai = 0; ai < ARRAY_LEN(all); ai++) {
		int A = all[ai];
		ga_problem p = { .length = LEN, .alphabet = A };
		rng r;
		rng_seed(&r, 99 + (uint64_t)A);
		for (int d = 0; d < 20; d++) {
			ga_default_random(&p, &r, orig);
			memcpy(g, orig, LEN);
			ga_default_mutate(&p, &r, 0.0, g);
			assert_memory_equal(g, orig, LEN);
			ga_default_mutate(&p, &r, 1.0, g);
			for (int k = 0; k < LEN; k++)
				if (g[k] == orig[k] || g[k] >= A)
					fail_msg("alphabet %d, rate 1: element %d is %d (was %d)",
						 A, k, g[k], orig[k]);
		}
	}
}

/* ---- custom operators ---- */

static void custom_random(void *ctx, rng *r, uint8_t *genome)
{
	toy *t = ctx;
	t->randoms++;
	for (size_t i = 0; i < t->length; i++)
		genome[i] = (uint8_t)(200 + rng_below(r, 56));
}

static void custom_mutate(void *ctx, rng *r, double rate, uint8_t *genome)
{
	toy *t = ctx;
	t->mutates++;
	t->last_rate = rate;
	for (size_t i = 0; i < t->length; i++)
		if (rng_unit(r) < rate)
			genome[i] = (uint8_t)(200 + rng_below(r, 56));
}

static void custom_crossover(void *ctx, rng *r, const uint8_t *a, const uint8_t *b, uint8_t *child)
{
	toy *t = ctx;
	(void)r;
	t->crossovers++;
	for (size_t i = 0; i < t->length; i++)
		child[i] = i % 2 ? b[i] : a[i];
}

static void test_custom_operators(void **state)
{
	(void)state;
	for (int alg = 0; alg < 2; alg++) {
		toy t;
		toy_init(&t, TOY_NOISE, 12);
		ga_problem p = toy_problem(&t, 0); /* no alphabet: every operator is custom */
		p.random = custom_random;
		p.mutate = custom_mutate;
		p.crossover = custom_crossover;
		ga_config cfg = paper_config(alg ? GA_MAP_ELITES : GA_GENETIC, 5);
		cfg.population = 10;
		cfg.generations = 5;
		cfg.elites = 2;
		cfg.mutation_rate = 0.25;
		ga_result res;
		run_ok(&p, &cfg, 3, &res);
		/* GA: P random genomes, then P - elites children per later generation;
		 * MAP-Elites: P random, then P offspring per later generation. */
		long children = alg ? 10 * 4 : (10 - 2) * 4;
		assert_int_equal(t.randoms, 10);
		assert_int_equal(t.crossovers, children);
		assert_int_equal(t.mutates, children);
		assert_true(t.last_rate == 0.25);
		for (size_t i = 0; i < t.nseen * t.length; i++)
			assert_true(t.seen[i] >= 200);
		ga_result_free(&res);
		toy_free(&t);

		/* A custom random() alone still needs the alphabet for mutation. */
		toy_init(&t, TOY_NOISE, 12);
		p = toy_problem(&t, 0);
		p.random = custom_random;
		sf_err err = { 0 };
		assert_int_equal(ga_run(&p, &cfg, 3, &res, &err), SF_EINVAL);
		assert_result_empty(&res);
		toy_free(&t);
	}
}

/* ---- determinism ---- */

typedef struct run_case {
	ga_algorithm algorithm;
	toy_kind kind;
	size_t length;
	int alphabet;
} run_case;

static const run_case RUN_CASES[] = {
	{ GA_GENETIC, TOY_ONEMAX, 32, 2 },    { GA_GENETIC, TOY_NOISE, 20, 4 },
	{ GA_GENETIC, TOY_THREES, 12, 4 },    { GA_MAP_ELITES, TOY_NOISE, 20, 4 },
	{ GA_MAP_ELITES, TOY_THREES, 12, 4 }, { GA_MAP_ELITES, TOY_ONEMAX, 32, 2 },
};

/* Runs a case with the paper's settings; the toy keeps its record. */
static void run_case_once(const run_case *c, uint64_t seed, int threads, toy *t, ga_result *res)
{
	toy_init(t, c->kind, c->length);
	t->threads = threads;
	ga_problem p = toy_problem(t, c->alphabet);
	ga_config cfg = paper_config(c->algorithm, seed);
	run_ok(&p, &cfg, c->algorithm == GA_GENETIC ? 10 : 0, res);
	assert_false(t->oom);
}

static int same_record(const toy *a, const toy *b)
{
	return a->nseen == b->nseen && a->batches == b->batches &&
	       !memcmp(a->seen, b->seen, a->nseen * a->length) &&
	       !memcmp(a->seen_eval, b->seen_eval, a->nseen * sizeof *a->seen_eval);
}

static void test_determinism_seed(void **state)
{
	(void)state;
	static const uint64_t seeds[] = { 0, 1, 0x5eedULL, UINT64_MAX };
	for (int i = 0; i < ARRAY_LEN(RUN_CASES); i++) {
		for (int s = 0; s < ARRAY_LEN(seeds); s++) {
			toy t1, t2, t3;
			ga_result r1, r2, r3;
			run_case_once(&RUN_CASES[i], seeds[s], 1, &t1, &r1);
			run_case_once(&RUN_CASES[i], seeds[s], 1, &t2, &r2);
			const char *diff = result_diff(&r1, &r2);
			if (diff)
				fail_msg("case %d, seed %d: same seed, different %s", i, s, diff);
			assert_true(same_record(&t1, &t2));
			/* Another seed: another run, from its first random batch on. */
			run_case_once(&RUN_CASES[i], seeds[s] ^ 0x9e3779b97f4a7c15ULL, 1, &t3, &r3);
			if (!result_diff(&r1, &r3))
				fail_msg("case %d, seed %d: another seed gave the same result", i,
					 s);
			assert_false(same_record(&t1, &t3));
			assert_true(memcmp(t1.seen, t3.seen, t1.length) != 0);
			ga_result_free(&r1);
			ga_result_free(&r2);
			ga_result_free(&r3);
			toy_free(&t1);
			toy_free(&t2);
			toy_free(&t3);
		}
	}
}

static void test_determinism_threads(void **state)
{
	(void)state;
	static const int threads[] = { 2, 4 };
	for (int i = 0; i < ARRAY_LEN(RUN_CASES); i++) {
		toy t1;
		ga_result r1;
		run_case_once(&RUN_CASES[i], 31337, 1, &t1, &r1);
		for (int k = 0; k < ARRAY_LEN(threads); k++) {
			toy tk;
			ga_result rk;
			run_case_once(&RUN_CASES[i], 31337, threads[k], &tk, &rk);
			const char *diff = result_diff(&r1, &rk);
			if (diff)
				fail_msg("case %d: 1 vs %d threads differ in %s", i, threads[k],
					 diff);
			assert_true(same_record(&t1, &tk));
			ga_result_free(&rk);
			toy_free(&tk);
		}
		ga_result_free(&r1);
		toy_free(&t1);
	}
}

/* ---- elitism ---- */

static void test_elitism(void **state)
{
	(void)state;
	static const run_case cases[] = {
		{ GA_GENETIC, TOY_NOISE, 16, 4 },
		{ GA_GENETIC, TOY_ONEMAX, 32, 2 },
	};
	static const int elites[] = { 1, 3, 0 };
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		for (int e = 0; e < ARRAY_LEN(elites); e++) {
			for (uint64_t seed = 1; seed <= 40; seed++) {
				toy t;
				toy_init(&t, cases[i].kind, cases[i].length);
				ga_problem p = toy_problem(&t, cases[i].alphabet);
				ga_config cfg = paper_config(GA_GENETIC, seed);
				cfg.elites = elites[e];
				ga_result res;
				run_ok(&p, &cfg, 1, &res);
				assert_int_equal(res.generations_run, cfg.generations);
				/* The result ranks everything evaluated, elites or not. */
				assert_true(res.evals[0].fitness == best_seen(&t));
				if (elites[e] >= 1) {
					for (int g = 1; g < res.generations_run; g++)
						if (res.series[g].best < res.series[g - 1].best)
							fail_msg(
								"case %d, elites %d, seed %d: best "
								"fell from %g to %g at generation "
								"%d",
								i, elites[e], (int)seed,
								res.series[g - 1].best,
								res.series[g].best, g + 1);
					/* Every evaluated genome was in some population, so
					 * the last population holds the best of the run. */
					assert_true(res.series[res.generations_run - 1].best ==
						    best_seen(&t));
				}
				ga_result_free(&res);
				toy_free(&t);
			}
		}
	}
}

/* ---- the memo ---- */

static void test_no_genome_evaluated_twice(void **state)
{
	(void)state;
	static const struct {
		ga_algorithm algorithm;
		toy_kind kind;
		size_t length;
		int alphabet, population, generations;
		double rate;
	} cases[] = {
		/* 2^6 = 64 genomes exist: most draws are repeats. */
		{ GA_GENETIC, TOY_ONEMAX, 6, 2, 30, 50, 0.1 },
		/* No mutation: the population converges onto repeats. */
		{ GA_GENETIC, TOY_THREES, 12, 4, 30, 50, 0.0 },
		/* Thousands of genomes: the memo grows many times. */
		{ GA_GENETIC, TOY_NOISE, 64, 4, 200, 40, 0.1 },
		{ GA_MAP_ELITES, TOY_NOISE, 8, 4, 30, 50, 0.1 },
		{ GA_MAP_ELITES, TOY_ONEMAX, 6, 2, 30, 50, 0.1 },
		{ GA_MAP_ELITES, TOY_NOISE, 40, 4, 100, 40, 0.3 },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		toy t;
		toy_init(&t, cases[i].kind, cases[i].length);
		ga_problem p = toy_problem(&t, cases[i].alphabet);
		ga_config cfg = paper_config(cases[i].algorithm, 2024 + (uint64_t)i);
		cfg.population = cases[i].population;
		cfg.generations = cases[i].generations;
		cfg.mutation_rate = cases[i].rate;
		ga_result res;
		run_ok(&p, &cfg, 5, &res);
		assert_no_duplicates(&t);
		if (res.evaluations != t.nseen)
			fail_msg("case %d: result says %llu evaluations, the evaluator got %zu", i,
				 (unsigned long long)res.evaluations, t.nseen);
		assert_int_equal(res.series[res.generations_run - 1].evaluations, t.nseen);
		/* At most one batch per generation. */
		assert_true(t.batches >= 1 && t.batches <= (size_t)res.generations_run);
		ga_result_free(&res);
		toy_free(&t);
	}
}

/* ---- selection pressure ---- */

static void test_onemax_selection_pressure(void **state)
{
	(void)state;
	/*
	 * OneMax, length 32: a random genome's fitness is Binomial(32, 1/2), mean
	 * 16 and variance 8, so the first generation's mean over 30 individuals
	 * is 16 with standard deviation sqrt(8 / 30) = 0.52. Mutation at 0.1 pulls
	 * a genome back toward 16 (E[f'] = 0.8 f + 3.2), so selection can only
	 * hold the population a few ones above that; 8 seeds must still raise
	 * the average last-generation mean by 2, over 10 standard deviations of
	 * the average first-generation mean (sqrt(8 / 240) = 0.18).
	 */
	enum { SEEDS = 8, LEN = 32 };
	double sum_first = 0, sum_last = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		toy t;
		toy_init(&t, TOY_ONEMAX, LEN);
		ga_problem p = toy_problem(&t, 2);
		ga_config cfg = paper_config(GA_GENETIC, seed);
		ga_result res;
		run_ok(&p, &cfg, 1, &res);
		assert_int_equal(res.generations_run, 50);
		const ga_generation *first = &res.series[0], *last = &res.series[49];
		double sigma1 = sqrt(LEN * 0.25 / cfg.population);
		if (fabs(first->mean - LEN / 2.0) > 5 * sigma1)
			fail_msg("seed %d: first mean %g, expected 16 +- %g", (int)seed,
				 first->mean, 5 * sigma1);
		if (!(last->mean > first->mean))
			fail_msg("seed %d: mean went from %g to %g", (int)seed, first->mean,
				 last->mean);
		assert_true(last->best >= first->best);
		sum_first += first->mean;
		sum_last += last->mean;
		ga_result_free(&res);
		toy_free(&t);
	}
	double first = sum_first / SEEDS, last = sum_last / SEEDS;
	if (!(last >= first + 2.0))
		fail_msg("average mean over %d seeds: first %g, last %g", SEEDS, first, last);
}

/* ---- progress ---- */

static void test_progress_callback(void **state)
{
	(void)state;
	for (int alg = 0; alg < 2; alg++) {
		toy t;
		toy_init(&t, TOY_NOISE, 16);
		ga_problem p = toy_problem(&t, 4);
		ga_config cfg = paper_config(alg ? GA_MAP_ELITES : GA_GENETIC, 3);
		cfg.bins = 5;
		watch w = { .calls = 0 };
		cfg.progress = watch_progress;
		cfg.progress_arg = &w;
		ga_result res;
		run_ok(&p, &cfg, 0, &res);
		int G = cfg.generations;
		assert_int_equal(res.status, GA_COMPLETED);
		assert_int_equal(w.calls, G);
		assert_int_equal(res.generations_run, G);
		for (int g = 0; g < G; g++) {
			const ga_generation *s = &w.gens[g];
			assert_int_equal(s->generation, g + 1);
			assert_int_equal(s->generations, G);
			assert_true(s->best >= s->mean);
			assert_true(s->at_best >= 1);
			assert_true(s->evaluations >= 1);
			assert_true(s->evaluations <= (uint64_t)(g + 1) * (uint64_t)cfg.population);
			if (g)
				assert_true(s->evaluations >= w.gens[g - 1].evaluations);
			if (alg) {
				assert_true(s->filled >= 1 && s->filled <= cfg.bins * cfg.bins);
				assert_true(s->at_best <= s->filled);
				if (g)
					assert_true(s->filled >= w.gens[g - 1].filled);
			} else {
				assert_int_equal(s->filled, 0);
				assert_true(s->at_best <= cfg.population);
			}
		}
		assert_int_equal(w.gens[G - 1].evaluations, res.evaluations);
		/* Generation 1 is one batch of P random genomes (all distinct here),
		 * so its statistics can be recomputed from the evaluator's record:
		 * the whole population (GA) or the best per cell (MAP-Elites). */
		size_t P = (size_t)cfg.population;
		assert_int_equal(w.gens[0].evaluations, P);
		int ncells = cfg.bins * cfg.bins;
		double cell_best[64];
		assert_true(P <= 64 && ncells <= 64);
		for (int c = 0; c < 64; c++)
			cell_best[c] = -1;
		for (size_t k = 0; k < P; k++) {
			int c = alg ? cell_ref(&t.seen_eval[k], cfg.bins) : (int)k;
			if (t.seen_eval[k].fitness > cell_best[c])
				cell_best[c] = t.seen_eval[k].fitness;
		}
		double best = -1, sum = 0;
		int members = 0, at_best = 0;
		for (int c = 0; c < (alg ? ncells : (int)P); c++) {
			double f = cell_best[c];
			if (f < 0)
				continue;
			members++;
			sum += f;
			if (f > best) {
				best = f;
				at_best = 0;
			}
			at_best += f == best;
		}
		assert_true(w.gens[0].best == best);
		assert_true(fabs(w.gens[0].mean - sum / members) <= 1e-9 * (1 + sum));
		assert_int_equal(w.gens[0].at_best, at_best);
		assert_int_equal(w.gens[0].filled, alg ? members : 0);
		if (alg)
			assert_int_equal(w.gens[G - 1].filled, res.count);
		assert_memory_equal(w.gens, res.series, (size_t)G * sizeof *res.series);
		ga_result_free(&res);
		toy_free(&t);
	}
}

/* ---- stopping ---- */

static void test_cancel(void **state)
{
	(void)state;
	static const int at[] = { 1, 7, 49 };
	for (int alg = 0; alg < 2; alg++) {
		for (int i = 0; i < ARRAY_LEN(at); i++) {
			toy t;
			toy_init(&t, TOY_NOISE, 16);
			ga_problem p = toy_problem(&t, 4);
			ga_config cfg = paper_config(alg ? GA_MAP_ELITES : GA_GENETIC, 11);
			atomic_int flag = 0;
			watch w = { .cancel_at = at[i], .flag = &flag };
			cfg.progress = watch_progress;
			cfg.progress_arg = &w;
			cfg.cancel = &flag;
			ga_result res;
			run_ok(&p, &cfg, 5, &res);
			assert_int_equal(res.status, GA_CANCELLED);
			assert_string_equal(ga_status_name(res.status), "cancelled");
			assert_int_equal(res.generations_run, at[i]);
			assert_int_equal(w.calls, at[i]);
			assert_true(res.count >= 1);
			assert_true(res.evals[0].fitness == best_seen(&t));
			assert_int_equal(res.evaluations, t.nseen);
			assert_int_equal(res.series[at[i] - 1].evaluations, t.nseen);
			ga_result_free(&res);
			toy_free(&t);
		}
		/* Raised before the run: it stops after generation 1. */
		toy t;
		toy_init(&t, TOY_NOISE, 16);
		ga_problem p = toy_problem(&t, 4);
		ga_config cfg = paper_config(alg ? GA_MAP_ELITES : GA_GENETIC, 11);
		atomic_int flag = 1;
		cfg.cancel = &flag;
		ga_result res;
		run_ok(&p, &cfg, 5, &res);
		assert_int_equal(res.status, GA_CANCELLED);
		assert_int_equal(res.generations_run, 1);
		assert_true(res.evals[0].fitness == best_seen(&t));
		ga_result_free(&res);
		toy_free(&t);
	}
}

static void test_deadline(void **state)
{
	(void)state;
	/* The deadline's clock is CLOCK_MONOTONIC in seconds. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double mono = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9, now = ga_clock_now();
	assert_true(now >= mono && now - mono < 1.0);
	for (int alg = 0; alg < 2; alg++) {
		for (int future = 0; future < 2; future++) {
			toy t;
			toy_init(&t, TOY_NOISE, 16);
			ga_problem p = toy_problem(&t, 4);
			ga_config cfg = paper_config(alg ? GA_MAP_ELITES : GA_GENETIC, 12);
			cfg.deadline = ga_clock_now() + (future ? 3600 : 0);
			ga_result res;
			run_ok(&p, &cfg, 5, &res);
			if (future) {
				assert_int_equal(res.status, GA_COMPLETED);
				assert_int_equal(res.generations_run, cfg.generations);
			} else {
				assert_int_equal(res.status, GA_TIMED_OUT);
				assert_string_equal(ga_status_name(res.status), "timed_out");
				assert_int_equal(res.generations_run, 1);
				assert_true(t.nseen >= 1 && t.nseen <= (size_t)cfg.population);
			}
			assert_true(res.count >= 1);
			assert_true(res.evals[0].fitness == best_seen(&t));
			ga_result_free(&res);
			toy_free(&t);
		}
	}
}

/* ---- the GA's result ---- */

typedef struct ranked {
	const uint8_t *g;
	double fitness;
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
	const ranked *a = x, *b = y;
	if (a->fitness != b->fitness)
		return a->fitness > b->fitness ? -1 : 1;
	return memcmp(a->g, b->g, sort_len);
}

static void test_ga_ranking(void **state)
{
	(void)state;
	static const struct {
		toy_kind kind;
		size_t length;
		int alphabet;
	} problems[] = {
		{ TOY_THREES, 12, 4 }, /* fitness 0..12: ties everywhere */
		{ TOY_ONEMAX, 10, 2 },
		{ TOY_NOISE, 20, 4 },
	};
	static const size_t counts[] = { 0, 1, 10, 100, 1000000 };
	for (int i = 0; i < ARRAY_LEN(problems); i++) {
		for (int c = 0; c < ARRAY_LEN(counts); c++) {
			toy t;
			toy_init(&t, problems[i].kind, problems[i].length);
			ga_problem p = toy_problem(&t, problems[i].alphabet);
			ga_config cfg = paper_config(GA_GENETIC, 500 + (uint64_t)i);
			ga_result res;
			run_ok(&p, &cfg, counts[c], &res);
			assert_no_duplicates(&t);
			size_t L = t.length, n = t.nseen;
			size_t want = counts[c] < n ? counts[c] : n;
			assert_int_equal(res.count, want);
			assert_int_equal(res.length, L);
			assert_null(res.cells);
			assert_int_equal(res.evaluations, n);
			/* Order and content, straight from the definition. */
			for (size_t k = 0; k < res.count; k++) {
				const uint8_t *g = res.genomes + k * L;
				ga_eval e = toy_eval_one(t.kind, g, L);
				assert_memory_equal(&e, &res.evals[k], sizeof e);
				if (k) {
					const uint8_t *prev = g - L;
					double fp = res.evals[k - 1].fitness, f = e.fitness;
					if (!(fp > f || (fp == f && memcmp(prev, g, L) < 0)))
						fail_msg("problem %d, count %zu: entries %zu and "
							 "%zu out of order",
							 i, counts[c], k - 1, k);
				}
			}
			if (res.count)
				assert_true(res.evals[0].fitness == best_seen(&t));
			/* The top `count` of everything evaluated, ranked here. */
			ranked *all = malloc(n * sizeof *all + 1);
			assert_non_null(all);
			for (size_t k = 0; k < n; k++)
				all[k] = (ranked){ seen_genome(&t, k), t.seen_eval[k].fitness };
			sort_len = L;
			qsort(all, n, sizeof *all, cmp_ranked);
			for (size_t k = 0; k < res.count; k++)
				if (memcmp(all[k].g, res.genomes + k * L, L))
					fail_msg("problem %d, count %zu: entry %zu is not the "
						 "%zu-th best genome evaluated",
						 i, counts[c], k, k + 1);
			free(all);
			ga_result_free(&res);
			toy_free(&t);
		}
	}
}

/* ---- MAP-Elites ---- */

static void test_map_elites_archive(void **state)
{
	(void)state;
	static const struct {
		toy_kind kind;
		size_t length;
		int alphabet, bins;
	} cases[] = {
		{ TOY_NOISE, 20, 4, 10 },
		{ TOY_THREES, 12, 4, 3 },
		/* Length 4: fractions 0, 1/4, ..., 1, so descriptors of exactly 1
		 * (clamped to the last bin) occur, and 7 bins do not align. */
		{ TOY_NOISE, 4, 4, 7 },
		{ TOY_THREES, 6, 4, 16 },
		{ TOY_ONEMAX, 10, 2, 1 },
		{ TOY_ONEMAX, 30, 2, 4 },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		int B = cases[i].bins, ncells = B * B;
		toy t;
		toy_init(&t, cases[i].kind, cases[i].length);
		ga_problem p = toy_problem(&t, cases[i].alphabet);
		ga_config cfg = paper_config(GA_MAP_ELITES, 900 + (uint64_t)i);
		cfg.bins = B;
		ga_result res;
		run_ok(&p, &cfg, 0, &res);
		assert_no_duplicates(&t);
		size_t L = t.length;
		assert_int_equal(res.evaluations, t.nseen);
		assert_non_null(res.cells);

		/* The best fitness per cell over everything evaluated. */
		double *best = malloc((size_t)ncells * sizeof *best);
		int *used = calloc((size_t)ncells, sizeof *used);
		assert_non_null(best);
		assert_non_null(used);
		for (int c = 0; c < ncells; c++)
			best[c] = -1;
		int distinct = 0;
		for (size_t k = 0; k < t.nseen; k++) {
			int c = cell_ref(&t.seen_eval[k], B);
			if (best[c] < 0)
				distinct++;
			if (t.seen_eval[k].fitness > best[c])
				best[c] = t.seen_eval[k].fitness;
		}
		if (res.count != (size_t)distinct)
			fail_msg("case %d: %zu cells in the result, %d among evaluated genomes", i,
				 res.count, distinct);

		uint8_t *sorted = sorted_seen(&t);
		double sum = 0;
		for (size_t k = 0; k < res.count; k++) {
			const uint8_t *g = res.genomes + k * L;
			ga_eval e = toy_eval_one(t.kind, g, L);
			int c = cell_ref(&e, B);
			assert_true(was_seen(sorted, t.nseen, L, g));
			assert_memory_equal(&e, &res.evals[k], sizeof e);
			if (res.cells[k] != c)
				fail_msg("case %d: entry %zu in cell %d, its descriptors (%g, %g) "
					 "give %d",
					 i, k, res.cells[k], e.desc[0], e.desc[1], c);
			if (used[c]++)
				fail_msg("case %d: cell %d appears twice", i, c);
			if (e.fitness != best[c])
				fail_msg("case %d: cell %d holds fitness %g, its best is %g", i, c,
					 e.fitness, best[c]);
			if (k)
				assert_true(res.evals[k - 1].fitness >= e.fitness);
			sum += e.fitness;
		}
		free(sorted);

		/* The last generation's statistics describe the same archive. */
		const ga_generation *last = &res.series[res.generations_run - 1];
		assert_int_equal(last->filled, res.count);
		assert_true(last->best == res.evals[0].fitness);
		assert_true(fabs(last->mean - sum / (double)res.count) <= 1e-9 * (1 + sum));
		assert_true(res.evals[0].fitness == best_seen(&t));

		/* count > 0: the best `count` of the same archive. */
		toy t2;
		toy_init(&t2, cases[i].kind, cases[i].length);
		p = toy_problem(&t2, cases[i].alphabet);
		ga_result top;
		run_ok(&p, &cfg, 5, &top);
		size_t want = res.count < 5 ? res.count : 5;
		assert_int_equal(top.count, want);
		assert_memory_equal(top.genomes, res.genomes, want * L);
		assert_memory_equal(top.evals, res.evals, want * sizeof *top.evals);
		assert_memory_equal(top.cells, res.cells, want * sizeof *top.cells);
		ga_result_free(&top);
		toy_free(&t2);

		free(best);
		free(used);
		ga_result_free(&res);
		toy_free(&t);
	}
}

/* ---- errors ---- */

static void test_evaluator_error(void **state)
{
	(void)state;
	static const int fail_at[] = { 1, 3 };
	static const int codes[] = { SF_ERANGE, SF_ESYS };
	for (int alg = 0; alg < 2; alg++) {
		for (int f = 0; f < ARRAY_LEN(fail_at); f++) {
			for (int c = 0; c < ARRAY_LEN(codes); c++) {
				toy t;
				toy_init(&t, TOY_NOISE, 20);
				t.fail_batch = fail_at[f];
				t.fail_code = codes[c];
				ga_problem p = toy_problem(&t, 4);
				ga_config cfg = paper_config(alg ? GA_MAP_ELITES : GA_GENETIC, 8);
				watch w = { .calls = 0 };
				cfg.progress = watch_progress;
				cfg.progress_arg = &w;
				ga_result res;
				sf_err err = { 0 };
				int rc = ga_run(&p, &cfg, 5, &res, &err);
				assert_int_equal(rc, codes[c]);
				assert_int_equal(err.code, codes[c]);
				assert_non_null(strstr(err.msg, "toy evaluator failed"));
				/* Every generation of this toy brings new genomes, so
				 * batch b belongs to generation b. */
				assert_int_equal(w.calls, fail_at[f] - 1);
				assert_result_empty(&res);
				ga_result_free(&res);
				assert_result_empty(&res);
				ga_result_free(&res);
				toy_free(&t);
			}
		}
	}
	/* Freeing a result that never held anything. */
	ga_result empty = { .status = GA_COMPLETED };
	ga_result_free(&empty);
	assert_result_empty(&empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_default),
		cmocka_unit_test(test_config_check_rejects),
		cmocka_unit_test(test_config_check_accepts_bounds),
		cmocka_unit_test(test_run_rejects_bad_input),
		cmocka_unit_test(test_names_and_describe),
		cmocka_unit_test(test_default_random),
		cmocka_unit_test(test_default_crossover),
		cmocka_unit_test(test_default_mutate),
		cmocka_unit_test(test_custom_operators),
		cmocka_unit_test(test_determinism_seed),
		cmocka_unit_test(test_determinism_threads),
		cmocka_unit_test(test_elitism),
		cmocka_unit_test(test_no_genome_evaluated_twice),
		cmocka_unit_test(test_onemax_selection_pressure),
		cmocka_unit_test(test_progress_callback),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_ga_ranking),
		cmocka_unit_test(test_map_elites_archive),
		cmocka_unit_test(test_evaluator_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
