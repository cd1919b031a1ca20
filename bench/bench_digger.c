/*
 * bench_digger.c - `make bench`, part four: the digger generator.
 *
 * For every difficulty preset, dig_generate() on consecutive seeds (200 for
 * the three easier presets, 100 for hard and hardest, 30 for expert), one
 * thread, timed whole: the walk, terrain in hindsight, the quality checks
 * and the solver's proof of every candidate that reaches it. Each preset
 * runs three times, side by side: with the solver's default bound
 * (DIG_BOUND_USES: the uses bound on top of the assignment bound), with
 * the assignment bound alone (the default before 2026-12-04) and with the
 * nearest-machine bound of the first solver (the baseline).
 * Prints the median and 99th percentile time per puzzle, the candidates
 * tried per puzzle, the share of the candidates reaching the solver that
 * it rejected for its state budget, and the mean states the solver
 * expanded for the accepted puzzle. Any generation failure ends the
 * benchmark with an error, and so does a candidate the solver called
 * unsolvable or longer than its recorded solution (the solver and the
 * engine would disagree).
 *
 * Then the difficulty table of docs/digger.md: 30 seeds per preset, each
 * level measured as a player faces it (dig_measure_level with the defaults
 * the service uses, seeded by the level's seed): medians of the optimum,
 * the optimal plays, the branching along the optimal play (all valid taps,
 * and those that keep an optimal finish), the mean dead-end share (from
 * hardest on the median is 1), the mean random-play win rate, how many
 * levels were measured exactly, and the median and largest time a
 * measurement took.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digger/digger.h"
#include "digger/measure.h"
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

/* One preset with one bound over `seeds` seeds: one line of the table. */
static void run(dig_difficulty d, dig_bound bound, int seeds)
{
	enum { MAX_SEEDS = 200 };
	static double ms[MAX_SEEDS];
	dig_gen_params p;
	dig_gen_params_default(&p, d);
	p.solver_bound = bound;
	long attempts = 0, runs = 0, budget = 0;
	double states = 0;
	for (int i = 0; i < seeds && i < MAX_SEEDS; i++) {
		static dig_puzzle pz;
		sf_err err = { 0 };
		double t = ga_clock_now();
		if (dig_generate(&p, (uint64_t)i + 1, &pz, &err) != 0)
			die(dig_difficulty_name(d), &err);
		ms[i] = (ga_clock_now() - t) * 1e3;
		for (int k = 0; k < pz.nrejected; k++)
			if (!strcmp(pz.rejected[k], "solver unsolvable") ||
			    !strcmp(pz.rejected[k], "solver longer")) {
				sf_err bad = { .code = SF_ERANGE };
				snprintf(bad.msg, sizeof bad.msg,
					 "seed %d: a candidate was rejected as \"%s\"", i + 1,
					 pz.rejected[k]);
				die(dig_difficulty_name(d), &bad);
			}
		attempts += pz.attempts;
		runs += pz.solver_runs;
		budget += pz.solver_budget;
		states += (double)pz.optimal.states;
	}
	double p99 = percentile(ms, seeds, 99);
	printf("%-10s %-8s %6d %11.2f %11.2f %13.2f %13.1f %%%13.0f\n", dig_difficulty_name(d),
	       bound == DIG_BOUND_ASSIGN ? "assign"
	       : bound == DIG_BOUND_USES ? "uses"
					 : "nearest",
	       seeds, median(ms, seeds), p99, (double)attempts / seeds,
	       runs ? 100.0 * (double)budget / (double)runs : 0.0, states / seeds);
}

/* The difficulty table's line for preset d over `seeds` seeds. */
static void measure_preset(dig_difficulty d, int seeds)
{
	enum { MAX = 64 };
	double opt[MAX], plays[MAX], br[MAX], obr[MAX], ms[MAX], dead = 0, win = 0, slowest = 0;
	int exact = 0;
	dig_gen_params p;
	dig_gen_params_default(&p, d);
	for (int i = 0; i < seeds && i < MAX; i++) {
		static dig_puzzle pz;
		sf_err err = { 0 };
		if (dig_generate(&p, (uint64_t)i + 1, &pz, &err) != 0)
			die(dig_difficulty_name(d), &err);
		dig_measure_opts o;
		dig_measure_opts_default(&o);
		o.seed = (uint64_t)i + 1;
		dig_measure m;
		double t = ga_clock_now();
		if (dig_measure_level(&pz.level, &pz.optimal, &o, &m, &err) != 0)
			die(dig_difficulty_name(d), &err);
		ms[i] = (ga_clock_now() - t) * 1e3;
		slowest = ms[i] > slowest ? ms[i] : slowest;
		opt[i] = pz.optimal.turns;
		plays[i] = m.optimal_plays;
		br[i] = m.branching;
		obr[i] = m.optimal_branching;
		dead += m.dead_end_share;
		win += m.random_win_rate;
		exact += m.exact;
	}
	printf("%-10s %5d %7.1f %9.0f %6.2f %6.2f %9.4f %6.3f %5d/%-3d %8.1f %8.1f\n",
	       dig_difficulty_name(d), seeds, median(opt, seeds), median(plays, seeds),
	       median(br, seeds), median(obr, seeds), win / seeds, dead / seeds, exact, seeds,
	       median(ms, seeds), slowest);
}

int main(void)
{
	printf("\nStarforge digger benchmark (dig_generate, one thread, solver proof "
	       "included)\n\n");
	printf("%-10s %-8s %6s %11s %11s %13s %15s %13s\n", "preset", "bound", "seeds", "median ms",
	       "p99 ms", "attempts/puz", "budget-cut", "solver states");
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++) {
		int seeds = d == DIG_EXPERT ? 30 : d >= DIG_HARD ? 100 : 200;
		run((dig_difficulty)d, DIG_BOUND_NEAREST, seeds);
		run((dig_difficulty)d, DIG_BOUND_ASSIGN, seeds);
		run((dig_difficulty)d, DIG_BOUND_USES, seeds);
	}
	printf("\nDifficulty as a player faces it (30 seeds per preset; medians, win rate and "
	       "dead-end share the means)\n\n");
	printf("%-10s %5s %7s %9s %6s %6s %9s %6s %9s %8s %8s\n", "preset", "seeds", "optimum",
	       "opt.plays", "branch", "keep", "rnd.win", "dead", "exact", "ms", "max ms");
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++)
		measure_preset((dig_difficulty)d, 30);
	return 0;
}
