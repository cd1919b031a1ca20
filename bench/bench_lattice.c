/*
 * bench_lattice.c - `make bench`: the speed of the exact HP lattice engine.
 *
 * For each length it measures, as medians over repeated runs:
 *  - the direct enumerator (lat_enumerate) on 1 and 2 threads, in
 *    conformations per second and seconds per sequence;
 *  - the contact-map database: build time (1 and 2 threads), maps, memory;
 *  - one full histogram through the database, in microseconds, and its
 *    speed-up over the direct path on the same sequence;
 *  - a baseline run side by side: a plain exhaustive enumerator as a first
 *    implementation would write it (every walk, no symmetry reduction, the
 *    score recounted at each leaf), for the short lengths it can afford.
 * This is a benchmark, not a test: it asserts nothing about time, but it
 * does check that every path agrees, so a fast wrong answer cannot pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "lattice/lattice.h"
#include "rng.h"

#define BENCH_NAME "bench"
#include "bench_util.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The benchmark 20-mer cut to `len` residues (padded from a fixed seed past 20). */
static lat_seq bench_seq(int len)
{
	static const char twenty[] = "HPHPPHHPHPPHPHHPPHPH";
	lat_seq s = { .len = len };
	rng r;
	rng_seed(&r, 2026);
	for (int i = 0; i < len; i++)
		s.h[i] = i < 20 ? twenty[i] == 'H' : (uint8_t)rng_below(&r, 2);
	return s;
}

/* ---- the baseline: every walk, score recounted at the leaves ---- */

typedef struct naive {
	int len, dim;
	const uint8_t *h;
	int pos[LAT_MAX_LEN][3];
	uint64_t hist[LAT_MAX_SCORE + 1];
} naive;

static void naive_walk(naive *nv, int k)
{
	static const int step[6][3] = { { 1, 0, 0 },  { -1, 0, 0 }, { 0, 1, 0 },
					{ 0, -1, 0 }, { 0, 0, 1 },  { 0, 0, -1 } };
	if (k == nv->len) {
		int score = 0;
		for (int i = 0; i < nv->len; i++)
			for (int j = i + 2; j < nv->len; j++)
				if (nv->h[i] && nv->h[j] &&
				    abs(nv->pos[i][0] - nv->pos[j][0]) +
						    abs(nv->pos[i][1] - nv->pos[j][1]) +
						    abs(nv->pos[i][2] - nv->pos[j][2]) ==
					    1)
					score++;
		nv->hist[score]++;
		return;
	}
	for (int d = 0; d < 2 * nv->dim; d++) {
		int p[3];
		for (int a = 0; a < 3; a++)
			p[a] = nv->pos[k - 1][a] + step[d][a];
		int clash = 0;
		for (int j = 0; j < k && !clash; j++)
			clash = !memcmp(nv->pos[j], p, sizeof p);
		if (clash)
			continue;
		memcpy(nv->pos[k], p, sizeof p);
		naive_walk(nv, k + 1);
	}
}

/* Seconds for the baseline to score `seq` (all walks), or 0 when skipped. */
static double baseline_seconds(lat_kind kind, const lat_seq *seq, uint64_t *walks)
{
	naive nv = { .len = seq->len, .dim = kind, .h = seq->h };
	double t = now();
	naive_walk(&nv, 1);
	t = now() - t;
	*walks = 0;
	for (int s = 0; s <= LAT_MAX_SCORE; s++)
		*walks += nv.hist[s];
	return t;
}

/* ---- the measurements ---- */

static double time_direct(lat_kind kind, const lat_seq *seq, int threads, int reps, lat_result *res)
{
	double t[16];
	lat_opts opts = { .threads = threads, .budget = 0 };
	sf_err err;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		if (lat_enumerate(kind, seq, &opts, res, &err))
			die("enumerate", &err);
		t[r] = now() - t0;
	}
	return median(t, reps);
}

static double time_build(lat_kind kind, int len, int threads, int reps, lat_db **keep)
{
	double t[16];
	lat_opts opts = { .threads = threads, .budget = 1e9 };
	sf_err err;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		lat_db *db = lat_db_build(kind, len, &opts, &err);
		t[r] = now() - t0;
		if (!db)
			die("database", &err);
		if (keep && !*keep)
			*keep = db;
		else
			lat_db_free(db);
	}
	return median(t, reps);
}

/* Median microseconds per histogram over batches of random sequences. */
static double time_histogram(const lat_db *db, int len)
{
	enum { BATCHES = 15, SEQS = 64 };
	static lat_seq seqs[SEQS];
	rng r;
	rng_seed(&r, 7);
	for (int i = 0; i < SEQS; i++) {
		seqs[i].len = len;
		for (int k = 0; k < len; k++)
			seqs[i].h[k] = (uint8_t)rng_below(&r, 2);
	}
	uint64_t hist[LAT_MAX_SCORE + 1];
	int calls = (int)(2e7 / (double)lat_db_maps(db)) + 1; /* ~20M maps a batch */
	double t[BATCHES];
	volatile uint64_t sink = 0;
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now();
		for (int c = 0; c < calls; c++) {
			lat_db_histogram(db, &seqs[c % SEQS], hist);
			sink += hist[0];
		}
		t[b] = (now() - t0) / calls * 1e6;
	}
	return median(t, BATCHES);
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void bench_length(lat_kind kind, int len, int baseline)
{
	static lat_result r1, r2, rdb;
	lat_seq seq = bench_seq(len);
	int reps = lat_estimate(kind, len) > 3e7 ? 3 : 7;
	double t1 = time_direct(kind, &seq, 1, reps, &r1);
	double t2 = time_direct(kind, &seq, 2, reps, &r2);
	lat_db *db = NULL;
	double b1 = time_build(kind, len, 1, reps, &db);
	double b2 = time_build(kind, len, 2, reps, NULL);
	double hist_us = time_histogram(db, len);
	sf_err err;
	if (lat_db_evaluate(db, &seq, &rdb, &err))
		die("evaluate", &err);
	if (memcmp(&r1, &r2, sizeof r1) || memcmp(&r1, &rdb, sizeof r1)) {
		fprintf(stderr, "bench: the evaluation paths disagree at %s %d\n",
			lat_kind_name(kind), len);
		exit(1);
	}
	double confs = (double)r1.conformations;
	printf("%-6s %3d %12.0f %9.1f %9.1f %5.2fx %10.4f %9.4f %9.4f %9zu %9.2f %10.2f %10.0fx",
	       lat_kind_name(kind), len, confs, confs / t1 / 1e6, confs / t2 / 1e6, t1 / t2, t2, b1,
	       b2, lat_db_maps(db), (double)lat_db_bytes(db) / (1 << 20), hist_us,
	       t2 / (hist_us * 1e-6));
	if (baseline) {
		uint64_t walks;
		double tb = baseline_seconds(kind, &seq, &walks);
		printf(" %10.4f %8.0fx", tb, tb / t1);
	}
	putchar('\n');
	fflush(stdout);
	lat_db_free(db);
}

/*
 * Thread scaling of the direct path and the database build on lengths large
 * enough to keep many cores busy, for threads = 1, 2, 4, ... up to `max`.
 */
static void bench_scaling(int max)
{
	static lat_result base, res;
	printf("\nthread scaling (median of 3; speed-up against 1 thread)\n");
	printf("%-6s %3s %7s %10s %9s %8s %10s %8s\n", "lattice", "len", "threads", "direct s",
	       "Mconf/s", "speedup", "build s", "speedup");
	const struct {
		lat_kind kind;
		int len, db_len;
	} cases[] = {
		{ LAT_SQUARE, 22, 18 },
		{ LAT_CUBIC, 16, 13 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		lat_seq seq = bench_seq(cases[c].len);
		double t1 = 0, b1 = 0;
		for (int t = 1; t <= max; t *= 2) {
			double td = time_direct(cases[c].kind, &seq, t, 3, t == 1 ? &base : &res);
			double tb = time_build(cases[c].kind, cases[c].db_len, t, 3, NULL);
			if (t == 1) {
				t1 = td;
				b1 = tb;
			} else if (memcmp(&base, &res, sizeof base)) {
				fprintf(stderr, "bench: %d threads disagree with 1\n", t);
				exit(1);
			}
			printf("%-6s %3d %7d %10.3f %9.1f %7.2fx %10.3f %7.2fx (db len %d)\n",
			       lat_kind_name(cases[c].kind), cases[c].len, t, td,
			       (double)base.conformations / td / 1e6, t1 / td, tb, b1 / tb,
			       cases[c].db_len);
			fflush(stdout);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--scaling")) {
		bench_scaling(atoi(argv[2]));
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: bench_lattice [--scaling MAX_THREADS]\n");
		return 2;
	}
	printf("Starforge lattice engine benchmark (medians; 'direct' = lat_enumerate,\n"
	       "'db' = contact-map database; baseline = every walk, score recounted per leaf,\n"
	       "1 thread, run once; x-ratios: baseline / direct 1 thread, direct 2 threads /\n"
	       "one database histogram)\n\n");
	printf("%-6s %3s %12s %9s %9s %6s %10s %9s %9s %9s %9s %10s %11s %10s %9s\n", "lattice",
	       "len", "confs", "Mconf/s1", "Mconf/s2", "scale", "direct2 s", "build1 s", "build2 s",
	       "maps", "db MiB", "hist us", "hist gain", "baseline s", "vs base");
	static const int square[] = { 12, 14, 16, 18, 20 };
	static const int cubic[] = { 10, 12, 14 };
	for (size_t i = 0; i < sizeof square / sizeof *square; i++)
		bench_length(LAT_SQUARE, square[i], square[i] <= 14);
	for (size_t i = 0; i < sizeof cubic / sizeof *cubic; i++)
		bench_length(LAT_CUBIC, cubic[i], cubic[i] <= 10);
	printf("\npeak RSS %.1f MiB\n", (double)peak_rss_kib() / 1024);
	return 0;
}
