/*
 * bench_digger.c - `make bench`, part four: the digger generator.
 *
 * For every difficulty preset, dig_generate() on consecutive seeds (200 for
 * the three easier presets, 100 for hard and hardest), one thread, timed
 * whole: the walk, terrain in hindsight, the quality checks and the
 * solver's proof of every candidate that reaches it. Prints the median and
 * 99th percentile time per puzzle, the candidates tried per puzzle and the
 * mean states the solver stored for the accepted puzzle.
 * Target: the hardest preset at most 200 ms median on a 2-core machine.
 * Any generation failure ends the benchmark with an error, and so does a
 * candidate the solver called unsolvable or longer than its recorded
 * solution (the solver and the engine would disagree).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digger/digger.h"
#include "search/ga.h"

#define BENCH_NAME "bench_digger"
#include "bench_util.h"

/* The p-th percentile (0..100) of v[0..n), nearest rank; v is sorted in place. */
static double percentile(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	int rank = (int)(p / 100.0 * n + 0.999999);
	if (rank < 1)
		rank = 1;
	return v[rank > n ? n - 1 : rank - 1];
}

int main(void)
{
	enum { MAX_SEEDS = 200 };
	static double ms[MAX_SEEDS];
	printf("\nStarforge digger benchmark (dig_generate, one thread, solver proof "
	       "included)\n\n");
	printf("%-10s %6s %12s %12s %14s %14s\n", "preset", "seeds", "median ms", "p99 ms",
	       "attempts/puz", "solver states");
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++) {
		int seeds = d >= DIG_HARD ? 100 : MAX_SEEDS;
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		long attempts = 0;
		double states = 0;
		for (int i = 0; i < seeds; i++) {
			static dig_puzzle pz;
			sf_err err = { 0 };
			double t = ga_clock_now();
			if (dig_generate(&p, (uint64_t)i + 1, &pz, &err) != 0)
				die(dig_difficulty_name((dig_difficulty)d), &err);
			ms[i] = (ga_clock_now() - t) * 1e3;
			for (int k = 0; k < pz.nrejected; k++)
				if (!strcmp(pz.rejected[k], "solver unsolvable") ||
				    !strcmp(pz.rejected[k], "solver longer")) {
					sf_err bad = { .code = SF_ERANGE };
					snprintf(bad.msg, sizeof bad.msg,
						 "seed %d: a candidate was rejected as \"%s\"",
						 i + 1, pz.rejected[k]);
					die(dig_difficulty_name((dig_difficulty)d), &bad);
				}
			attempts += pz.attempts;
			states += (double)pz.optimal.states;
		}
		double p99 = percentile(ms, seeds, 99);
		printf("%-10s %6d %12.2f %12.2f %14.2f %14.0f\n",
		       dig_difficulty_name((dig_difficulty)d), seeds, median(ms, seeds), p99,
		       (double)attempts / seeds, states / seeds);
	}
	return 0;
}
