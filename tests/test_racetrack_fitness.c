/*
 * test_racetrack_fitness.c - issue 13's fair evaluation of the racetrack
 * search: common random numbers (every genome raced on the job's same
 * seeds; the same genome, the same PX), the per-segment fitness (a perfect
 * match scores 0 whatever the segment count, a known error its value), and
 * the random-search baseline (accepted, the GA's budget, deterministic).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "racetrack/corners.h"
#include "racetrack/fitness.h"
#include "racetrack/search.h"
#include "racetrack_support.h"

/* A small, fast search: levels with their genomes and tracks. */
static void small_search(trk_search_params *p, uint64_t seed, int threads, trk_search_result *res)
{
	trk_search_opts opts = { .seed = seed, .threads = threads };
	sf_err err = { 0 };
	if (trk_search_run(p, &opts, res, &err))
		fail_msg("search failed: %s", err.msg);
	assert_true(res->count >= 1);
}

static void small_params(trk_search_params *p)
{
	trk_search_params_default(p);
	p->population = 10;
	p->generations = 4;
	p->races_per_genome = 4;
	p->level_races = 4; /* the level shows the fitness races themselves */
}

static void test_seeds(void **state)
{
	(void)state;
	uint64_t a[TRK_MAX_RACES], b[8], c[8], h[TRK_MAX_RACES];
	trk_race_seeds(42, TRK_MAX_RACES, a);
	trk_race_seeds(42, 8, b);
	trk_race_seeds(43, 8, c);
	trk_heldout_seeds(42, TRK_MAX_RACES, h);
	/* A job's first k seeds do not depend on how many it asks for. */
	assert_memory_equal(a, b, sizeof b);
	for (size_t i = 0; i < TRK_MAX_RACES; i++) {
		assert_true(a[i] < UINT64_C(1) << 53);
		for (size_t j = 0; j < TRK_MAX_RACES; j++) {
			if (i != j)
				assert_true(a[i] != a[j]);
			assert_true(a[i] != h[j]); /* held-out races are new races */
		}
	}
	for (size_t i = 0; i < 8; i++)
		assert_true(b[i] != c[i]);
}

/*
 * Common random numbers: the search races every genome on the job's seeds,
 * trk_race_seeds(); re-racing a level's genome on them gives exactly the
 * fitness the GA saw, and the same genome gives the same PX twice. Two
 * different levels of one job name the same report seeds,
 * trk_report_seeds() of the job (another stream), and re-racing on those
 * gives exactly the level's PX.
 */
static void test_common_random_numbers(void **state)
{
	(void)state;
	trk_search_params p;
	small_params(&p);
	p.count = 2;
	trk_search_result res;
	small_search(&p, 5, 2, &res);
	assert_int_equal(res.count, 2);
	const trk_level *l0 = &res.levels[0], *l1 = &res.levels[1];
	size_t len = trk_genome_length(&p), R = (size_t)p.races_per_genome;
	assert_true(memcmp(l0->genome, l1->genome, len) != 0);
	/* The fitness races are the job's stream; a level reports on the
	 * job's report races, which no choice was made on. */
	uint64_t want[TRK_MAX_RACES], rep[TRK_MAX_RACES];
	trk_race_seeds(5, R, want);
	trk_report_seeds(5, R, rep);
	assert_true(memcmp(want, rep, R * sizeof *want) != 0);
	assert_int_equal(l0->fit.nraces, R);
	assert_int_equal(l1->fit.nraces, R);
	assert_memory_equal(l0->race_seeds, rep, R * sizeof *rep);
	assert_memory_equal(l1->race_seeds, rep, R * sizeof *rep);
	assert_true(l0->race_seed == rep[0] && l1->race_seed == rep[0]);

	sf_err err = { 0 };
	trk_px_model *model = trk_search_model(&p, &err);
	assert_non_null(model);
	double skills[TRK_MAX_RACES][TRK_CARS];
	for (int k = 0; k < 2; k++) {
		const trk_level *lv = &res.levels[k];
		/* The same genome on the same races: the same PX, bit for bit. */
		trk_px_fit f1, f2, fr;
		assert_int_equal(trk_genome_px(&p, model, lv->genome, want, R, &f1, &err), 1);
		assert_int_equal(trk_genome_px(&p, model, lv->genome, want, R, &f2, &err), 1);
		assert_memory_equal(&f1, &f2, sizeof f1);
		/* What the GA saw: its fitness races. */
		assert_true(lv->eval.fitness == TRK_FITNESS_SHIFT - f1.error);
		/* What the level shows: its report races. */
		assert_int_equal(trk_genome_px(&p, model, lv->genome, rep, R, &fr, &err), 1);
		assert_int_equal(fr.nsegments, lv->track->nsegments);
		for (size_t i = 0; i < fr.nsegments; i++) {
			assert_true(fr.mean[i] == lv->fit.mean[i]);
			assert_true(fr.sd[i] == lv->fit.sd[i]);
			assert_true(fr.sd[i] >= 0);
		}
		assert_true(fr.error == lv->fit.error);
		assert_true(lv->fitness == -fr.error);
		/* The player's lap is the first of the report races. */
		double sum = 0;
		for (size_t i = 0; i < R; i++) {
			trk_race_params rp;
			trk_race_params_default(&rp);
			rp.player_skill = p.player_skill;
			trk_race_result r = { 0 };
			assert_int_equal(trk_race_run(lv->track, &rp, model, rep[i], &r, &err), 0);
			if (i == 0)
				assert_true(r.finished == lv->race.finished &&
					    (!r.finished || r.lap_time == lv->race.lap_time));
			sum += r.segment_px[0];
			trk_race_result_free(&r);
			/* The same seed, the same opponents on either track: the
			 * two genomes meet the same cars in the fitness races. */
			assert_int_equal(trk_race_run(lv->track, &rp, model, want[i], &r, &err), 0);
			if (k == 0)
				memcpy(skills[i], r.skill, sizeof skills[i]);
			else
				assert_memory_equal(skills[i], r.skill, sizeof skills[i]);
			trk_race_result_free(&r);
		}
		/* Segment 0's PX is the mean over the races. */
		assert_true(fabs(sum / (double)R - lv->fit.mean[0]) < 1e-12);
	}
	/* Other races give another PX: the seeds matter, and they are the job's. */
	uint64_t other[TRK_MAX_RACES];
	trk_race_seeds(6, R, other);
	trk_px_fit f3;
	assert_int_equal(trk_genome_px(&p, model, l0->genome, other, R, &f3, &err), 1);
	assert_true(memcmp(f3.mean, l0->fit.mean, sizeof f3.mean) != 0);
	trk_px_model_free(model);
	trk_search_result_free(&res);
}

/* A track of `nseg` equal segments over 240 samples; only what the fitness reads. */
typedef struct fake_track {
	trk_track t;
	size_t starts[TRK_FIT_MAX_SEGMENTS];
} fake_track;

static void fake(fake_track *f, size_t nseg)
{
	memset(f, 0, sizeof *f);
	f->t.n = 240;
	f->t.ds = 2;
	f->t.length = 480;
	f->t.nsegments = nseg;
	for (size_t i = 0; i < nseg; i++)
		f->starts[i] = i * 240 / nseg;
	f->t.seg_start = f->starts;
}

static void test_segment_error(void **state)
{
	(void)state;
	static const double flat[] = { 0.4, 0.4 };
	static const double peaked[] = { 0.2, 0.5, 0.8, 0.5, 0.2 };
	static const size_t counts[] = { 8, 12, 24 };
	for (size_t c = 0; c < 3; c++) {
		fake_track f;
		fake(&f, counts[c]);
		size_t n = counts[c];
		double px[TRK_FIT_MAX_SEGMENTS];
		/* A perfect match is 0 whatever the number of segments... */
		for (size_t i = 0; i < n; i++)
			px[i] = 0.4;
		assert_true(trk_segment_error(&f.t, px, flat, 2) == 0);
		for (size_t i = 0; i < n; i++)
			px[i] = trk_segment_target(&f.t, i, peaked, 5);
		assert_true(trk_segment_error(&f.t, px, peaked, 5) == 0);
		/* ...and a uniform miss of 0.1 costs 0.1, not 0.1 x segments. */
		for (size_t i = 0; i < n; i++)
			px[i] = 0.5;
		assert_true(fabs(trk_segment_error(&f.t, px, flat, 2) - 0.1) < 1e-15);
		for (size_t i = 0; i < n; i++)
			px[i] = 0.3;
		assert_true(fabs(trk_segment_error(&f.t, px, flat, 2) - 0.1) < 1e-15);
		/* One segment never completed (-1 against 0.4): 1.4 / segments. */
		for (size_t i = 0; i < n; i++)
			px[i] = 0.4;
		px[n / 2] = -1;
		assert_true(fabs(trk_segment_error(&f.t, px, flat, 2) - 1.4 / (double)n) < 1e-15);
	}
	/* The segment's target is read at its midpoint's lap fraction: the
	 * middle of the first of 8 segments of a rising target lies at 1/16. */
	fake_track f;
	fake(&f, 8);
	static const double rising[] = { 0, 1 };
	assert_true(fabs(trk_segment_target(&f.t, 0, rising, 2) - 1.0 / 16) < 1e-15);
	assert_true(fabs(trk_segment_target(&f.t, 7, rising, 2) - 15.0 / 16) < 1e-15);
	assert_true(trk_segment_error(NULL, NULL, flat, 2) == -1);

	/* trk_track_px refuses a race count out of range. */
	trk_px_fit fit;
	sf_err err = { 0 };
	uint64_t seed = 1;
	assert_int_equal(trk_track_px(&f.t, NULL, NULL, &seed, 0, flat, 2, &fit, NULL, &err),
			 SF_EINVAL);
	assert_int_equal(
		trk_track_px(&f.t, NULL, NULL, &seed, TRK_MAX_RACES + 1, flat, 2, &fit, NULL, &err),
		SF_EINVAL);
}

/*
 * A real track of m corners on a circle of radius 150 m, the corners'
 * angles and radii jittered by `jitter` (0: a regular polygon), built as the
 * search builds one: trk_corners_sample, then trk_track_from_path.
 */
static trk_track *polygon_track(size_t m, double jitter)
{
	trk_vec2 v[TRK_FIT_MAX_SEGMENTS];
	double tight[TRK_FIT_MAX_SEGMENTS];
	for (size_t k = 0; k < m; k++) {
		double wobble = jitter * (double)((k * 7) % 5) / 4; /* 0..jitter */
		double a = 6.283185307179586 * ((double)k + 0.5 * wobble) / (double)m;
		double rad = 150 * (1 - 0.3 * wobble);
		v[k] = (trk_vec2){ rad * cos(a), rad * sin(a) };
		tight[k] = (double)(k % 3) / 2;
	}
	trk_path path;
	sf_err err = { 0 };
	if (trk_corners_sample(v, m, tight, 1.0 / 6, 2.0, &path, &err))
		fail_msg("%s", err.msg);
	trk_track *t = trk_track_from_path(&path, NULL, 12, &err);
	if (!t)
		fail_msg("%s", err.msg);
	assert_int_equal(t->nsegments, m);
	return t;
}

/*
 * The fitness is independent of the segment count (issue 13), on real
 * tracks of 8 and 20 segments of unequal lengths: simulated PX equal to
 * each segment's target is an error of exactly 0, and a miss of 0.1 on
 * every segment (above, below, or alternating) an error of 0.1, where the
 * paper's sum (trk_race_fitness) charges 0.1 per segment.
 */
static void test_error_independent_of_segments(void **state)
{
	(void)state;
	static const double peaked[] = { 0.2, 0.5, 0.8, 0.5, 0.2 };
	static const size_t counts[] = { 8, 20 };
	for (size_t c = 0; c < 2; c++)
		for (int irregular = 0; irregular < 2; irregular++) {
			size_t m = counts[c];
			trk_track *t = polygon_track(m, irregular ? 1 : 0);
			size_t shortest = t->n, longest = 0;
			for (size_t i = 0; i < m; i++) {
				size_t b = i + 1 < m ? t->seg_start[i + 1] : t->n;
				size_t len = b - t->seg_start[i];
				shortest = len < shortest ? len : shortest;
				longest = len > longest ? len : longest;
			}
			if (irregular)
				assert_true(longest > shortest + shortest / 4);
			double px[TRK_FIT_MAX_SEGMENTS], target[TRK_FIT_MAX_SEGMENTS];
			for (size_t i = 0; i < m; i++) {
				target[i] = trk_segment_target(t, i, peaked, 5);
				assert_true(target[i] >= 0.2 && target[i] <= 0.8);
				px[i] = target[i];
			}
			assert_true(trk_segment_error(t, px, peaked, 5) == 0);
			for (int way = 0; way < 3; way++) {
				for (size_t i = 0; i < m; i++) {
					double d = way == 0   ? 0.1
						   : way == 1 ? -0.1
						   : i % 2    ? 0.1
							      : -0.1;
					px[i] = target[i] + d;
				}
				double e = trk_segment_error(t, px, peaked, 5);
				if (!(fabs(e - 0.1) <= 1e-12))
					fail_msg("%zu segments: error %.17g, not 0.1", m, e);
			}
			trk_race_result r = { .nsegments = m, .segment_px = px };
			double paper = trk_race_fitness(t, &r, peaked, 5);
			assert_true(fabs(paper + 0.1 * (double)m) <= 1e-12);
			trk_track_free(t);
		}
}

/*
 * The baseline: "algorithm": "random" is accepted and echoed, draws the
 * GA's budget exactly (population + (generations - 1) x (population -
 * elites) genomes, every one new), and is deterministic whatever the
 * thread count; the GA never evaluates more.
 */
static void test_random_algorithm(void **state)
{
	(void)state;
	trk_search_params p;
	small_params(&p);
	p.algorithm = TRK_ALG_RANDOM;
	trk_search_result r1, r2, g;
	small_search(&p, 9, 1, &r1);
	small_search(&p, 9, 2, &r2);
	uint64_t budget = (uint64_t)p.population +
			  (uint64_t)(p.generations - 1) * (uint64_t)(p.population - p.elites);
	assert_int_equal(r1.evaluations, budget);
	assert_int_equal(r1.evaluations, r2.evaluations);
	assert_memory_equal(r1.levels[0].genome, r2.levels[0].genome, trk_genome_length(&p));
	p.algorithm = TRK_ALG_GA;
	small_search(&p, 9, 1, &g);
	assert_true(g.evaluations <= budget);
	assert_true(g.evaluations > (uint64_t)p.population);
	trk_search_result_free(&r1);
	trk_search_result_free(&r2);
	trk_search_result_free(&g);

	/* Through the JSON codec: echoed, byte-identical on 1 and 2 threads. */
	const char *text = "{\"algorithm\": \"random\", \"population\": 8, \"generations\": 3, "
			   "\"races_per_genome\": 3}";
	json_t *a = racetrack_generate(text, 4, 1), *b = racetrack_generate(text, 4, 2);
	char *sa = json_dumps(a, JSON_COMPACT), *sb = json_dumps(b, JSON_COMPACT);
	assert_string_equal(sa, sb);
	json_t *params = json_object_get(a, "params");
	assert_string_equal(json_string_value(json_object_get(params, "algorithm")), "random");
	assert_int_equal(json_integer_value(json_object_get(params, "races_per_genome")), 3);
	assert_int_equal(json_integer_value(json_object_get(a, "evaluations")), 8 + 2 * 7);
	free(sa);
	free(sb);
	json_decref(a);
	json_decref(b);

	/* Refused: another name, a race count out of range. */
	static const char *bad[] = { "{\"algorithm\": \"annealing\"}", "{\"algorithm\": 1}",
				     "{\"races_per_genome\": 0}", "{\"races_per_genome\": 65}" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_error_t jerr;
		json_t *j = json_loads(bad[i], 0, &jerr);
		trk_search_params q;
		sf_err err = { 0 };
		assert_int_equal(trk_search_params_from_json(j, &q, &err), SF_EINVAL);
		assert_non_null(
			strstr(err.msg, i < 2 ? "params.algorithm" : "params.races_per_genome"));
		json_decref(j);
	}
}

/* The default races and the GA's selection, through the GA's output. */
static void test_ga_thread_independence(void **state)
{
	(void)state;
	const char *text = "{\"population\": 10, \"generations\": 4, \"count\": 2}";
	json_t *a = racetrack_generate(text, 12, 1), *b = racetrack_generate(text, 12, 2);
	char *sa = json_dumps(a, JSON_COMPACT), *sb = json_dumps(b, JSON_COMPACT);
	assert_string_equal(sa, sb);
	json_t *lv = json_array_get(json_object_get(a, "levels"), 0);
	json_t *seeds = json_object_get(json_object_get(lv, "stats"), "race_seeds");
	assert_int_equal(json_array_size(seeds), 32); /* the default level_races */
	uint64_t want[32];
	trk_report_seeds(12, 32, want);
	for (size_t i = 0; i < 32; i++)
		assert_true((uint64_t)json_integer_value(json_array_get(seeds, i)) == want[i]);
	free(sa);
	free(sb);
	json_decref(a);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seeds),
		cmocka_unit_test(test_common_random_numbers),
		cmocka_unit_test(test_segment_error),
		cmocka_unit_test(test_error_independent_of_segments),
		cmocka_unit_test(test_random_algorithm),
		cmocka_unit_test(test_ga_thread_independence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
