/*
 * rng.h - the seeded, portable pseudo-random generator behind every generator.
 *
 * xoshiro256** (Blackman and Vigna), seeded through splitmix64. Only integer
 * arithmetic on fixed-width types, so a seed gives the same stream on every
 * machine, compiler and thread count. The state is a plain value: a worker
 * that needs its own stream gets one from rng_split(), never a shared pointer.
 */
#ifndef SF_RNG_H
#define SF_RNG_H

#include <stdint.h>

typedef struct rng {
	uint64_t s[4];
} rng;

/* Seeds `r` from a 64-bit seed; every seed, including 0, gives a valid state. */
void rng_seed(rng *r, uint64_t seed);

/* The next 64 random bits. */
uint64_t rng_next(rng *r);

/* A uniform integer in [0, bound) without modulo bias; bound must be > 0. */
uint64_t rng_below(rng *r, uint64_t bound);

/* A uniform double in [0, 1) with 53 random bits. */
double rng_unit(rng *r);

/*
 * Derives an independent generator for sub-task `index` from the current
 * state of `r` without advancing it, so that the streams handed to workers
 * depend only on the seed and the task index, not on scheduling.
 */
rng rng_split(const rng *r, uint64_t index);

#endif
