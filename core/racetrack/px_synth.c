/*
 * px_synth.c - the SYNTHETIC trace set (px.h's trk_px_synth), drawn from
 * the race's own feature distribution (issue 13; docs/px-model.md states
 * the model and argues for it).
 *
 * Why from the race. The first synthetic set drew its situations from
 * assumed ranges (speed ratio 0.35..1, gaps, overtakes at set rates), and
 * the race visits another part of the feature space altogether: its speed
 * ratio never passes 0.67, so 10 traces answered 92.5 % of the race's
 * windows and the prediction followed proximity, not what the track does.
 * Now every trace is a window the race itself produced: random genomes of
 * the search's default params (the tracks a search starts from), each
 * raced once with a player of random skill in 0.2..0.8 and its windows
 * caught by trk_race_params.on_window; TRK_SYNTH_PER_RACE windows are kept
 * from each race, drawn at random, until `count` are in.
 *
 * The label. A raw tension score (synth_tension, the stated model, plus
 * +-TRK_SYNTH_NOISE) is stretched linearly so that its TRK_SYNTH_CLIP
 * quantile is 0 and its 1 - TRK_SYNTH_CLIP quantile is 1, clamped: labels
 * span 0..1, both ends reached by a share of the traces, whatever the scale
 * of the raw score, and the order the stated model gives is kept. (A pure
 * rank, tried first, spreads the crowded middle and squeezes the ends, so
 * a segment's mean over its windows could hardly reach 0.2 or 0.8.)
 *
 * Deterministic: one core/rng stream from `seed` draws the genomes, the
 * race seeds, the skills, the kept windows and the label noise, and the
 * races run one after the other; the same seed gives the same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rng.h"
#include "px.h"
#include "race.h"
#include "search.h"

#define TRK_SYNTH_PER_RACE 8      /* windows kept from one race */
#define TRK_SYNTH_NOISE 0.02      /* +- uniform noise on the raw score */
#define TRK_SYNTH_CLIP 0.05       /* this share of the windows labelled 0, as many 1 */
#define TRK_SYNTH_MAX_ATTEMPTS 64 /* genomes drawn per trace before giving up */

typedef struct window_buf {
	double (*w)[TRK_PX_NFEAT];
	size_t n, cap;
	int nomem;
} window_buf;

static void catch_window(void *arg, const double window[TRK_PX_NFEAT])
{
	window_buf *b = arg;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		void *w = realloc(b->w, cap * sizeof *b->w);
		if (!w) {
			b->nomem = 1;
			return;
		}
		b->w = w;
		b->cap = cap;
	}
	memcpy(b->w[b->n++], window, sizeof *b->w);
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of feature f over the traces (nearest rank). */
static double quantile(const trk_px_trace *t, size_t n, int f, double q, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = t[i].window[f];
	qsort(scratch, n, sizeof *scratch, cmp_double);
	return scratch[(size_t)floor(q * (double)(n - 1) + 0.5)];
}

/*
 * The stated tension model (docs/px-model.md): speed near the limit counts
 * most, then close racing, swings of speed (climbs, drops, braking and
 * acceleration), braking, and positions gained or lost. Speed and its
 * swing are measured against what the race reaches (speed's 10th..90th
 * percentile over the drawn windows, the swing's 98th), so the range the
 * race really covers maps onto the whole scale. Speed weighs 0.8: it is what
 * the track's shape sets; the rest depends on each race's opponents as
 * much as on the track, so a heavier share would make a segment's PX vary
 * from race to race (measured: the GA's held-out error rose from 0.044 to
 * 0.051 with speed at 0.65).
 */
static double synth_tension(const double f[TRK_PX_NFEAT], double s_lo, double s_hi, double d_hi)
{
	double speed = clamp01((f[TRK_PX_SPEED] - s_lo) / (s_hi - s_lo));
	double swing = clamp01(f[TRK_PX_SPEED_SD] / d_hi);
	return 0.80 * speed + 0.06 * f[TRK_PX_PROXIMITY] + 0.03 * swing + 0.03 * f[TRK_PX_BRAKING] +
	       0.04 * clamp01(3 * f[TRK_PX_GAINED]) + 0.04 * clamp01(3 * f[TRK_PX_LOST]);
}

typedef struct ranked {
	double score;
	size_t index;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Draws `count` windows from races on random tracks into traces[].window. */
static int draw_windows(rng *r, size_t count, trk_px_trace *traces, sf_err *err)
{
	trk_search_params sp;
	trk_search_params_default(&sp);
	trk_limits lim = trk_search_limits(&sp);
	trk_px_trace flat = { .intensity = 0.5 };
	trk_px_model *placeholder = trk_px_model_new(&flat, 1, err);
	uint8_t *g = malloc(trk_genome_length(&sp));
	window_buf buf = { 0 };
	int rc = SF_OK;
	if (!placeholder || !g) {
		rc = sf_err_set(err, SF_ENOMEM, "out of memory for the synthetic races");
		goto done;
	}
	size_t got = 0, attempts = 0;
	while (got < count) {
		if (++attempts > TRK_SYNTH_MAX_ATTEMPTS * count) {
			rc = sf_err_set(err, SF_ERANGE, "no raceable random track in %zu genomes",
					attempts - 1);
			goto done;
		}
		trk_genome_random(&sp, r, g);
		uint64_t race_seed = rng_next(r);
		double skill = 0.2 + 0.6 * rng_unit(r);
		sf_err e = { 0 };
		trk_track *track = trk_genome_track(&sp, g, &e);
		trk_report rep;
		if (!track || trk_track_check(track, &lim, 0, &rep, &e)) {
			trk_track_free(track);
			if (e.code == SF_ENOMEM) {
				rc = sf_err_set(err, SF_ENOMEM, "%s", e.msg);
				goto done;
			}
			continue;
		}
		trk_race_params rp;
		trk_race_params_default(&rp);
		rp.player_skill = skill;
		rp.on_window = catch_window;
		rp.on_window_arg = &buf;
		buf.n = 0;
		trk_race_result res = { 0 };
		rc = trk_race_run(track, &rp, placeholder, race_seed, &res, err);
		trk_race_result_free(&res);
		trk_track_free(track);
		if (!rc && buf.nomem)
			rc = sf_err_set(err, SF_ENOMEM, "out of memory for the windows");
		if (rc)
			goto done;
		/* Keep up to TRK_SYNTH_PER_RACE of them, a partial Fisher-Yates draw. */
		for (size_t k = 0; k < TRK_SYNTH_PER_RACE && k < buf.n && got < count; k++) {
			size_t j = k + (size_t)rng_below(r, buf.n - k);
			double tmp[TRK_PX_NFEAT];
			memcpy(tmp, buf.w[k], sizeof tmp);
			memcpy(buf.w[k], buf.w[j], sizeof tmp);
			memcpy(buf.w[j], tmp, sizeof tmp);
			memcpy(traces[got++].window, buf.w[k], sizeof tmp);
		}
	}
done:
	free(buf.w);
	free(g);
	trk_px_model_free(placeholder);
	return rc;
}

trk_px_model *trk_px_synth(uint64_t seed, size_t count, sf_err *err)
{
	if (count < 2 || count > TRK_PX_MAX_TRACES) {
		sf_err_set(err, SF_EINVAL, "count %zu outside 2..%d", count, TRK_PX_MAX_TRACES);
		return NULL;
	}
	trk_px_trace *traces = calloc(count, sizeof *traces);
	ranked *rank = malloc(count * sizeof *rank);
	double *scratch = malloc(count * sizeof *scratch);
	trk_px_model *model = NULL;
	if (!traces || !rank || !scratch) {
		sf_err_set(err, SF_ENOMEM, "out of memory for %zu traces", count);
		goto done;
	}
	rng r;
	rng_seed(&r, seed);
	if (draw_windows(&r, count, traces, err))
		goto done;
	double s_lo = quantile(traces, count, TRK_PX_SPEED, 0.10, scratch);
	double s_hi = quantile(traces, count, TRK_PX_SPEED, 0.90, scratch);
	double d_hi = quantile(traces, count, TRK_PX_SPEED_SD, 0.98, scratch);
	if (!(s_hi > s_lo))
		s_hi = s_lo + 1;
	if (!(d_hi > 0))
		d_hi = 1;
	for (size_t i = 0; i < count; i++) {
		double noise = (2 * rng_unit(&r) - 1) * TRK_SYNTH_NOISE;
		rank[i] = (ranked){ synth_tension(traces[i].window, s_lo, s_hi, d_hi) + noise, i };
	}
	qsort(rank, count, sizeof *rank, cmp_ranked);
	double r_lo = rank[(size_t)floor(TRK_SYNTH_CLIP * (double)(count - 1) + 0.5)].score;
	double r_hi = rank[(size_t)floor((1 - TRK_SYNTH_CLIP) * (double)(count - 1) + 0.5)].score;
	for (size_t k = 0; k < count; k++)
		traces[rank[k].index].intensity = clamp01((rank[k].score - r_lo) / (r_hi - r_lo));
	model = trk_px_model_new(traces, count, err);
done:
	free(scratch);
	free(rank);
	free(traces);
	return model;
}

char *trk_px_synth_csv(uint64_t seed, size_t count, size_t *len, sf_err *err)
{
	char comment[320];
	snprintf(comment, sizeof comment,
		 "SYNTHETIC play traces, not human data: generated by tools/px_synth (seed "
		 "0x%llx, %zu traces)\nfrom windows of simulated races, labelled by the tension "
		 "model stated in docs/px-model.md.\nRegenerate: build/tools/px_synth > "
		 "data/px/synthetic.csv",
		 (unsigned long long)seed, count);
	trk_px_model *model = trk_px_synth(seed, count, err);
	if (!model)
		return NULL;
	char *csv = trk_px_model_csv_digits(model, comment, TRK_PX_SYNTH_DIGITS, len);
	trk_px_model_free(model);
	if (!csv)
		sf_err_set(err, SF_ENOMEM, "out of memory formatting %zu traces", count);
	return csv;
}
