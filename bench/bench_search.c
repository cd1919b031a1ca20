/*
 * bench_search.c - `make bench`, part two: the lattice puzzle search.
 *
 *  - One GA trial with the paper's settings at length 16 (population 30, 50
 *    generations), cold (contact-map database built inside the trial) and
 *    warm (database handed in), medians over trials with different seeds.
 *  - Side by side, the same GA evaluating each sequence by direct
 *    enumeration (lat_enumerate on all threads), as the paper did.
 *  - Success rates over 25 trials: how often the GA's best puzzle reaches
 *    the true optimum of its fitness, which the exhaustive search finds.
 * Asserts nothing about time; it does check that cold and warm runs agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lattice/puzzle.h"
#include "search/ga.h"

#define BENCH_NAME "bench_search"
#include "bench_util.h"

#define TRIALS 25

static double run_trial(const lat_search_params *p, uint64_t seed, const lat_db *db, int threads,
			double *best)
{
	lat_search_opts o = { .seed = seed, .threads = threads, .db = db };
	lat_search_result r;
	sf_err err;
	double t = ga_clock_now();
	if (lat_search_run(p, &o, &r, &err))
		die("search", &err);
	t = ga_clock_now() - t;
	*best = r.levels[0].fitness.fitness;
	lat_search_result_free(&r);
	return t;
}

/* ---- the baseline: the same GA, each sequence enumerated directly ---- */

typedef struct direct_ctx {
	const lat_search_params *p;
	int threads;
} direct_ctx;

static int direct_eval(void *ctx, const uint8_t *genomes, size_t n, ga_eval *out, sf_err *err)
{
	direct_ctx *d = ctx;
	lat_opts o = { .threads = d->threads };
	static lat_result res;
	for (size_t i = 0; i < n; i++) {
		lat_seq s = { .len = d->p->length };
		memcpy(s.h, genomes + i * (size_t)s.len, (size_t)s.len);
		int rc = lat_enumerate(d->p->lattice, &s, &o, &res, err);
		if (rc)
			return rc;
		out[i] = lat_fitness_of(d->p, &s, res.hist, res.max_score);
	}
	return 0;
}

static double run_direct_trial(const lat_search_params *p, uint64_t seed, int threads, double *best)
{
	direct_ctx d = { p, threads };
	ga_problem prob = {
		.length = (size_t)p->length, .alphabet = 2, .ctx = &d, .evaluate = direct_eval
	};
	ga_config cfg;
	ga_config_default(&cfg);
	cfg.seed = seed;
	ga_result r;
	sf_err err;
	double t = ga_clock_now();
	if (ga_run(&prob, &cfg, 1, &r, &err))
		die("direct GA", &err);
	t = ga_clock_now() - t;
	*best = r.evals[0].fitness;
	ga_result_free(&r);
	return t;
}

static double exhaustive_best(lat_search_params p, const lat_db *db, int threads)
{
	p.algorithm = LAT_ALG_EXHAUSTIVE;
	p.count = 1;
	double best;
	run_trial(&p, 1, db, threads, &best);
	return best;
}

/*
 * Thread scaling of the evaluation workers: the exhaustive search at length
 * 18 (131 328 sequences up to reversal through a 170 670-map database) for
 * threads = 1, 2, 4, ... up to `max`.
 */
static void bench_scaling(int max)
{
	lat_search_params p;
	lat_search_params_default(&p);
	p.length = 18;
	p.algorithm = LAT_ALG_EXHAUSTIVE;
	lat_opts dbo = { .threads = max };
	sf_err err;
	lat_db *db = lat_db_build(p.lattice, p.length, &dbo, &err);
	if (!db)
		die("database", &err);
	printf("\nexhaustive search, square length 18, warm database: thread scaling\n");
	printf("%7s %10s %8s\n", "threads", "seconds", "speedup");
	double t1 = 0, b1 = 0;
	for (int t = 1; t <= max; t *= 2) {
		double best, secs = run_trial(&p, 1, db, t, &best);
		if (t == 1) {
			t1 = secs;
			b1 = best;
		} else if (best != b1) {
			fprintf(stderr, "bench_search: %d threads disagree with 1\n", t);
			exit(1);
		}
		printf("%7d %10.3f %7.2fx\n", t, secs, t1 / secs);
		fflush(stdout);
	}
	lat_db_free(db);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--scaling")) {
		bench_scaling(atoi(argv[2]));
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: bench_search [--scaling MAX_THREADS]\n");
		return 2;
	}
	const int threads = 2;
	lat_search_params p;
	lat_search_params_default(&p);
	lat_opts dbo = { .threads = threads };
	sf_err err;
	lat_db *db = lat_db_build(p.lattice, p.length, &dbo, &err);
	if (!db)
		die("database", &err);

	printf("\nStarforge lattice search benchmark: one GA trial, the paper's settings,\n"
	       "length 16, square lattice, %d threads (medians over %d seeds)\n\n",
	       threads, TRIALS);
	double cold[TRIALS], warm[TRIALS], direct[5];
	for (int i = 0; i < TRIALS; i++) {
		double bc, bw;
		cold[i] = run_trial(&p, (uint64_t)i + 1, NULL, threads, &bc);
		warm[i] = run_trial(&p, (uint64_t)i + 1, db, threads, &bw);
		if (bc != bw) {
			fprintf(stderr, "bench_search: cold and warm runs disagree\n");
			return 1;
		}
	}
	for (int i = 0; i < 5; i++) {
		double b;
		direct[i] = run_direct_trial(&p, (uint64_t)i + 1, threads, &b);
	}
	double mc = median(cold, TRIALS), mw = median(warm, TRIALS), md = median(direct, 5);
	printf("%-52s %10.4f s\n", "GA trial, cold (database built in the trial)", mc);
	printf("%-52s %10.4f s\n", "GA trial, warm (database reused)", mw);
	printf("%-52s %10.4f s  (%.0fx the warm trial)\n",
	       "baseline: same GA, direct enumeration per sequence", md, md / mw);
	printf("%-52s %10.0f s  (%.0fx the cold trial)\n", "the paper (8-core Apple M2)", 390.0,
	       390.0 / mc);

	printf("\nsuccess over %d trials: the GA's best puzzle reaches the true optimum of its\n"
	       "fitness (found by the exhaustive search over all 65 536 sequences)\n\n",
	       TRIALS);
	printf("%-16s %-10s %14s %10s %14s %10s\n", "fitness", "algorithm", "true optimum",
	       "successes", "median best", "median s");
	for (int f = 0; f < 3; f++) {
		for (int a = 0; a < 2; a++) {
			lat_search_params q = p;
			q.fitness = (lat_fitness)f;
			q.algorithm = a ? LAT_ALG_MAP_ELITES : LAT_ALG_GA;
			q.count = 1;
			double opt = exhaustive_best(q, db, threads), t[TRIALS], best[TRIALS];
			int ok = 0;
			for (int i = 0; i < TRIALS; i++) {
				t[i] = run_trial(&q, (uint64_t)i + 1, db, threads, &best[i]);
				ok += best[i] == opt;
			}
			printf("%-16s %-10s %14.4f %7d/%d %14.4f %10.4f\n",
			       lat_fitness_name(q.fitness), lat_algorithm_name(q.algorithm), opt,
			       ok, TRIALS, median(best, TRIALS), median(t, TRIALS));
			fflush(stdout);
		}
	}
	lat_search_params q = p;
	q.algorithm = LAT_ALG_EXHAUSTIVE;
	double te[5], b;
	for (int i = 0; i < 5; i++)
		te[i] = run_trial(&q, 1, db, threads, &b);
	printf("\n%-52s %10.4f s\n", "exhaustive search, length 16 (warm, median of 5)",
	       median(te, 5));
	lat_db_free(db);
	return 0;
}
