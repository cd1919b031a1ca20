/*
 * lattice_support.h - helpers shared by the lattice test suites: building
 * sequences and the symmetry-reduced conformation counts derived from the
 * published walk counts in fixtures/lattice_oracles.h.
 */
#ifndef SF_TEST_LATTICE_SUPPORT_H
#define SF_TEST_LATTICE_SUPPORT_H

#include <stdint.h>
#include <string.h>

#include "fixtures/lattice_oracles.h"
#include "lattice/lattice.h"
#include "rng.h"

/* A chain of `len` residues, all H (h = 1) or all P (h = 0). */
static inline lat_seq seq_uniform(int len, int h)
{
	lat_seq seq;
	memset(&seq, 0, sizeof seq);
	seq.len = len;
	for (int i = 0; i < len; i++)
		seq.h[i] = (uint8_t)h;
	return seq;
}

/* A chain of `len` residues, each H or P with equal chance. */
static inline lat_seq seq_random(rng *r, int len)
{
	lat_seq seq;
	memset(&seq, 0, sizeof seq);
	seq.len = len;
	for (int i = 0; i < len; i++)
		seq.h[i] = (uint8_t)rng_below(r, 2);
	return seq;
}

/* Sequence number `bits` of length `len`: residue i is H when bit i is set. */
static inline lat_seq seq_bits(int len, unsigned bits)
{
	lat_seq seq;
	memset(&seq, 0, sizeof seq);
	seq.len = len;
	for (int i = 0; i < len; i++)
		seq.h[i] = (uint8_t)(bits >> i & 1);
	return seq;
}

/* Square conformations up to symmetry, OEIS A046171 = (c_n - 4)/8 + 1. */
static inline uint64_t square_reduced(int len)
{
	if (len <= 2)
		return 1;
	return (oracle_square_walks[len - 1] - 4) / 8 + 1;
}

/*
 * Cubic conformations up to the 48 symmetries: the non-planar walks
 * c3 - 3 (c2 - 4) - 6 in classes of 48, plus the square classes (the planar
 * walks: 24 images each in space, the rod 6).
 */
static inline uint64_t cubic_reduced(int len)
{
	int n = len - 1;
	if (n <= 0)
		return 1;
	uint64_t c3 = oracle_cubic_walks[n], c2 = oracle_square_walks[n];
	return (c3 - 3 * (c2 - 4) - 6) / 48 + (c2 - 4) / 8 + 1;
}

#endif
