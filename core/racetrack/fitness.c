/*
 * fitness.c - common random numbers and the per-segment fitness; see
 * fitness.h.
 */
#include "fitness.h"

#include <math.h>
#include <string.h>

/* splitmix64's finaliser, as search.c uses it. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Seed k of the stream keyed `key`: two rounds of mixing, 53 bits. */
static void seed_stream(uint64_t key, size_t n, uint64_t *out)
{
	uint64_t base = mix64(key);
	for (size_t k = 0; k < n; k++)
		out[k] = mix64(base + UINT64_C(0x9e3779b97f4a7c15) * (k + 1)) >> 11;
}

void trk_race_seeds(uint64_t job_seed, size_t n, uint64_t *out)
{
	seed_stream(job_seed ^ UINT64_C(0x7ace5eed00c0ffee), n, out);
}

void trk_report_seeds(uint64_t job_seed, size_t n, uint64_t *out)
{
	seed_stream(job_seed ^ UINT64_C(0x4e9047ed5eed5000), n, out);
}

void trk_heldout_seeds(uint64_t seed, size_t n, uint64_t *out)
{
	seed_stream(mix64(seed ^ UINT64_C(0x4e1d0e7)) ^ UINT64_C(0xa5a5a5a5a5a5a5a5), n, out);
}

double trk_segment_target(const trk_track *track, size_t i, const double *target, size_t ntarget)
{
	size_t a = track->seg_start[i];
	size_t b = i + 1 < track->nsegments ? track->seg_start[i + 1] : track->n;
	/* x = (a + b) / (2 n) * (ntarget - 1), the product first so that a
	 * midpoint on a grid point lands on it exactly (as trk_race_fitness). */
	double x = ((double)(a + b) * (double)(ntarget - 1)) / (double)(2 * track->n);
	return trk_target_at(target, ntarget, x);
}

double trk_segment_error(const trk_track *track, const double *px, const double *target,
			 size_t ntarget)
{
	if (!track || !px || !target || !ntarget || !track->n || !track->nsegments)
		return -1;
	double sum = 0;
	for (size_t i = 0; i < track->nsegments; i++)
		sum += fabs(trk_segment_target(track, i, target, ntarget) - px[i]);
	return sum / (double)track->nsegments;
}

int trk_track_px(const trk_track *track, const trk_race_params *params, const trk_px_model *model,
		 const uint64_t *seeds, size_t nseeds, const double *target, size_t ntarget,
		 trk_px_fit *out, trk_race_result *first, sf_err *err)
{
	memset(out, 0, sizeof *out);
	if (first)
		memset(first, 0, sizeof *first);
	if (nseeds < 1 || nseeds > TRK_MAX_RACES || ntarget < 1)
		return sf_err_set(err, SF_EINVAL, "races %zu is out of range (allowed: 1..%d)",
				  nseeds, TRK_MAX_RACES);
	size_t ns = track->nsegments;
	if (ns < 1 || ns > TRK_FIT_MAX_SEGMENTS)
		return sf_err_set(err, SF_EINVAL, "track has %zu segments (allowed: 1..%d)", ns,
				  TRK_FIT_MAX_SEGMENTS);
	out->nsegments = ns;
	out->nraces = nseeds;
	double sum[TRK_FIT_MAX_SEGMENTS] = { 0 }, sq[TRK_FIT_MAX_SEGMENTS] = { 0 };
	size_t done = 0;
	for (size_t k = 0; k < nseeds; k++) {
		trk_race_result race = { 0 };
		int rc = trk_race_run(track, params, model, seeds[k], &race, err);
		if (rc)
			return rc;
		for (size_t i = 0; i < ns; i++) {
			double v = i < race.nsegments ? race.segment_px[i] : -1;
			sum[i] += v;
			sq[i] += v * v;
			done += v >= 0;
		}
		if (k == 0 && first)
			*first = race;
		else
			trk_race_result_free(&race);
	}
	double n = (double)nseeds, err_sum = 0;
	for (size_t i = 0; i < ns; i++) {
		out->target[i] = trk_segment_target(track, i, target, ntarget);
		out->mean[i] = sum[i] / n;
		double var = sq[i] / n - out->mean[i] * out->mean[i];
		out->sd[i] = var > 0 ? sqrt(var) : 0;
		err_sum += fabs(out->target[i] - out->mean[i]);
	}
	out->error = err_sum / (double)ns;
	out->completed = (double)done / (n * (double)ns);
	return 0;
}
