/*
 * lattice_support.h - helpers shared by the lattice test suites: building
 * sequences and the symmetry-reduced conformation counts derived from the
 * published walk counts in fixtures/lattice_oracles.h.
 */
#ifndef SF_TEST_LATTICE_SUPPORT_H
#define SF_TEST_LATTICE_SUPPORT_H

#include <stdint.h>
#include <stdlib.h>
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

/*
 * An independent walker: replays `fold` (one letter per bond, R L U D F B)
 * of the chain h[0..len) with coordinates and counts its HH contacts pair
 * by pair. Returns them, or -1 when the fold is not a conformation (wrong
 * length, a letter not on the lattice, a site visited twice).
 */
static inline int replay_fold(lat_kind kind, const uint8_t *h, int len, const char *fold)
{
	static const char letters[] = "RLUDFB";
	int p[LAT_MAX_LEN][3];
	memset(p, 0, sizeof p);
	if (len < 1 || len > LAT_MAX_LEN || (int)strlen(fold) != len - 1)
		return -1;
	for (int k = 1; k < len; k++) {
		const char *at = strchr(letters, fold[k - 1]);
		if (!at || (kind == LAT_SQUARE && at - letters >= 4))
			return -1;
		int d = (int)(at - letters);
		memcpy(p[k], p[k - 1], sizeof p[k]);
		p[k][d / 2] += d % 2 ? -1 : 1;
		for (int j = 0; j < k; j++)
			if (!memcmp(p[j], p[k], sizeof p[k]))
				return -1;
	}
	int score = 0;
	for (int i = 0; i < len; i++)
		for (int j = i + 2; j < len; j++)
			score += h[i] && h[j] &&
				 abs(p[i][0] - p[j][0]) + abs(p[i][1] - p[j][1]) +
						 abs(p[i][2] - p[j][2]) ==
					 1;
	return score;
}

#endif
