/*
 * noise.c - see noise.h.
 *
 * One octave over c cells: x = u * c with u = t - floor(t) in [0, 1), cell
 * i = floor(x), f = x - i; the value is the fade-weighted blend of the two
 * corner ramps g[i] * f and g[(i + 1) % c] * (f - 1). Reducing t to u
 * before scaling is what makes noise(t) and noise(t + 1) identical bits:
 * u is exact (x - floor(x) loses nothing for a double), while (t + 1) * c
 * and t * c + c can round differently.
 */
#include "noise.h"

#include <math.h>
#include <stdlib.h>

#include "../rng.h"

trk_noise *trk_noise_new(unsigned period, unsigned octaves, uint64_t seed, sf_err *err)
{
	if (period < 1 || period > TRK_NOISE_MAX_PERIOD) {
		sf_err_set(err, SF_EINVAL, "noise period: must be in [1, %d], got %u",
			   TRK_NOISE_MAX_PERIOD, period);
		return NULL;
	}
	if (octaves < 1 || octaves > TRK_NOISE_MAX_OCTAVES ||
	    ((size_t)period << (octaves - 1)) > TRK_NOISE_MAX_PERIOD) {
		sf_err_set(err, SF_EINVAL,
			   "noise octaves: must be in [1, %d] with period << (octaves - 1) "
			   "at most %d, got %u octaves over period %u",
			   TRK_NOISE_MAX_OCTAVES, TRK_NOISE_MAX_PERIOD, octaves, period);
		return NULL;
	}
	size_t total = 0;
	for (unsigned o = 0; o < octaves; o++)
		total += (size_t)period << o;
	trk_noise *noise = malloc(sizeof *noise);
	double *g = malloc(total * sizeof *g);
	if (!noise || !g) {
		free(noise);
		free(g);
		sf_err_set(err, SF_ENOMEM, "noise: out of memory for %zu gradients", total);
		return NULL;
	}
	rng r;
	rng_seed(&r, seed);
	for (size_t k = 0; k < total; k++)
		g[k] = 2.0 * rng_unit(&r) - 1.0;
	noise->period = period;
	noise->octaves = octaves;
	noise->gradients = g;
	return noise;
}

void trk_noise_free(trk_noise *noise)
{
	if (!noise)
		return;
	free(noise->gradients);
	free(noise);
}

/* t reduced to [0, 1); t - floor(t) can round up to 1 for tiny negative t. */
static double wrap_unit(double t)
{
	double u = t - floor(t);
	return u >= 1.0 ? 0.0 : u;
}

/* One octave of c cells with gradients g at u in [0, 1): value or d/du. */
static double octave(const double *g, size_t c, double u, int deriv)
{
	double x = u * (double)c;
	double fl = floor(x);
	size_t i = (size_t)fl;
	if (i >= c) /* u * c rounded up to c */
		i = c - 1;
	double f = x - (double)i;
	double g0 = g[i], g1 = g[(i + 1) % c];
	double a = g0 * f, b = g1 * (f - 1.0);
	double fade = f * f * f * (f * (f * 6.0 - 15.0) + 10.0);
	if (!deriv)
		return a + fade * (b - a);
	/* d/df of a + fade (b - a), then d f / du = c. */
	double dfade = 30.0 * f * f * (f * (f - 2.0) + 1.0);
	double df = g0 + dfade * (b - a) + fade * (g1 - g0);
	return df * (double)c;
}

static double sum_octaves(const trk_noise *noise, double t, int deriv)
{
	double u = wrap_unit(t);
	double sum = 0.0, weight = 1.0;
	const double *g = noise->gradients;
	for (unsigned o = 0; o < noise->octaves; o++) {
		size_t c = (size_t)noise->period << o;
		sum += weight * octave(g, c, u, deriv);
		g += c;
		weight *= 0.5;
	}
	return sum;
}

double trk_noise_at(const trk_noise *noise, double t)
{
	return sum_octaves(noise, t, 0);
}

double trk_noise_deriv(const trk_noise *noise, double t)
{
	return sum_octaves(noise, t, 1);
}

/* The steepest step of the closed profile, max |z[(k+1) % n] - z[k]| / ds. */
static double steepest(const double *z, size_t n, double ds)
{
	double worst = 0.0;
	for (size_t k = 0; k < n; k++) {
		double slope = fabs((z[(k + 1) % n] - z[k]) / ds);
		if (slope > worst)
			worst = slope;
	}
	return worst;
}

double trk_elevation(const trk_noise *noise, size_t n, double ds, double amplitude,
		     double max_slope, double *z)
{
	for (size_t k = 0; k < n; k++)
		z[k] = trk_noise_at(noise, (double)k / (double)n);
	double unit = steepest(z, n, ds);
	double a = amplitude;
	if (a * unit > max_slope)
		a = max_slope / unit;
	/*
	 * (a z[k+1] - a z[k]) / ds may round past a (z[k+1] - z[k]) / ds, so
	 * the rounded profile itself is checked, with the very expression
	 * trk_track stores as its slope, and a lowered by 2^-40 relatively
	 * until it passes: far more than the few ulps of rounding involved, so
	 * a second round is rare and the bound only guards the loop.
	 */
	for (int round = 0; round < 64; round++) {
		for (size_t k = 0; k < n; k++)
			z[k] = a * trk_noise_at(noise, (double)k / (double)n);
		if (steepest(z, n, ds) <= max_slope)
			return a;
		a *= 1.0 - 0x1p-40;
	}
	for (size_t k = 0; k < n; k++)
		z[k] = 0.0;
	return 0.0;
}
