/*
 * noise.h - 1D Perlin gradient noise that wraps seamlessly around a closed
 * loop, and the elevation profile built from it.
 *
 * The loop parameter t in [0, 1) covers `period` lattice cells; the gradient
 * at lattice point `period` is the one at 0, so noise(t) and noise(t + 1)
 * are the same function and its value and derivative are continuous across
 * the seam. Each octave doubles the number of cells and halves the
 * amplitude, with its own gradients. Gradients are uniform in [-1, 1) from
 * core/rng and the interpolation is Perlin's quintic fade (C2), so the
 * noise is a polynomial in t on each cell: only + - * / and floor, the same
 * bits on every machine.
 */
#ifndef SF_TRK_NOISE_H
#define SF_TRK_NOISE_H

#include <stddef.h>
#include <stdint.h>

#include "../err.h"

#define TRK_NOISE_MAX_PERIOD 4096
#define TRK_NOISE_MAX_OCTAVES 8

/* A seeded periodic noise; gradients are malloc'ed and owned by it. */
typedef struct trk_noise {
	unsigned period;   /* lattice cells of the first octave over t in [0, 1) */
	unsigned octaves;  /* octave o has period << o cells and weight 2^-o */
	double *gradients; /* octave o's period << o gradients, octave after octave */
} trk_noise;

/*
 * Builds the noise of `octaves` octaves over `period` cells from `seed`.
 * Requires 1 <= period <= TRK_NOISE_MAX_PERIOD, 1 <= octaves <=
 * TRK_NOISE_MAX_OCTAVES and period << (octaves - 1) within the same bound.
 * Returns NULL with SF_EINVAL or SF_ENOMEM and a message in err on failure;
 * the caller owns the result and frees it with trk_noise_free.
 */
trk_noise *trk_noise_new(unsigned period, unsigned octaves, uint64_t seed, sf_err *err);

/* Frees a noise; NULL is a no-op. */
void trk_noise_free(trk_noise *noise);

/*
 * The noise at loop parameter t (any finite t; only t - floor(t) matters, so
 * noise(t) == noise(t + 1) bit for bit whenever (t + 1) - 1 == t in
 * floating point). Zero at every lattice point of the first octave;
 * |value| < 1, since octave o is at most 0.5 * 2^-o in magnitude.
 */
double trk_noise_at(const trk_noise *noise, double t);

/* The analytic derivative d noise / dt at t, continuous in t. */
double trk_noise_deriv(const trk_noise *noise, double t);

/*
 * Fills z[0..n-1] with the elevation of n samples spaced ds around a loop
 * (n >= 2, ds > 0): z[k] = a * noise(k / n), where a is `amplitude`
 * (>= 0) lowered, if needed, until every step of the closed profile,
 * |z[(k + 1) % n] - z[k]| / ds, the step from z[n-1] back to z[0] included,
 * is at most max_slope (>= 0). Scaling keeps the profile's shape and keeps
 * it closed. Returns the amplitude used. The slope is capped between
 * samples, which is the track the race sees; the continuous noise between
 * two samples may be steeper by O(ds) relatively.
 */
double trk_elevation(const trk_noise *noise, size_t n, double ds, double amplitude,
		     double max_slope, double *z);

#endif
