/*
 * lattice.c - sequences, names, the work budget and fold scoring; the parts
 * of the HP model that both evaluation paths share.
 */
#include "lattice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Self-avoiding walks with n bonds, square lattice, OEIS A001411, n = 0..30. */
/* clang-format off */
static const double square_walks[] = {
	1, 4, 12, 36, 100, 284, 780, 2172, 5916, 16268, 44100, 120292, 324932, 881500, 2374444,
	6416596, 17245332, 46466676, 124658732, 335116620, 897697164, 2408806028.0, 6444560484.0,
	17266613812.0, 46146397316.0, 123481354908.0, 329712786220.0, 881317491628.0,
	2351378582244.0, 6279396229332.0, 16741957935348.0,
};
/* clang-format on */

/* Self-avoiding walks with n bonds, simple cubic lattice, OEIS A001412, n = 0..20. */
/* clang-format off */
static const double cubic_walks[] = {
	1, 6, 30, 150, 726, 3534, 16926, 81390, 387966, 1853886, 8809878, 41934150, 198842742,
	943974510, 4468911678.0, 21175146054.0, 100121875974.0, 473730252102.0, 2237723684094.0,
	10576033219614.0, 49917327838734.0,
};
/* clang-format on */

/* Connective constants, for extrapolating past the tables. */
#define SQUARE_MU 2.63816
#define CUBIC_MU 4.68404

int lat_parse_kind(const char *name, lat_kind *out, sf_err *err)
{
	if (name && strcmp(name, "square") == 0) {
		*out = LAT_SQUARE;
		return 0;
	}
	if (name && strcmp(name, "cubic") == 0) {
		*out = LAT_CUBIC;
		return 0;
	}
	return sf_err_set(err, SF_EINVAL, "unknown lattice '%s' (allowed: square, cubic)",
			  name ? name : "");
}

const char *lat_kind_name(lat_kind kind)
{
	return kind == LAT_CUBIC ? "cubic" : "square";
}

int lat_seq_parse(const char *text, lat_seq *out, sf_err *err)
{
	if (!text || !*text)
		return sf_err_set(err, SF_EINVAL,
				  "sequence is empty (expected 1..%d letters H or P)", LAT_MAX_LEN);
	size_t n = strlen(text);
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		if (c != 'H' && c != 'P') {
			unsigned char u = (unsigned char)c;
			if (u >= 0x20 && u < 0x7f)
				return sf_err_set(
					err, SF_EINVAL,
					"sequence has '%c' at position %zu (allowed: H, P)", c,
					i + 1);
			return sf_err_set(
				err, SF_EINVAL,
				"sequence has byte 0x%02x at position %zu (allowed: H, P)", u,
				i + 1);
		}
	}
	if (n > LAT_MAX_LEN)
		return sf_err_set(err, SF_EINVAL,
				  "sequence length %zu is out of range (allowed: 1..%d)", n,
				  LAT_MAX_LEN);
	out->len = (int)n;
	memset(out->h, 0, sizeof out->h);
	for (size_t i = 0; i < n; i++)
		out->h[i] = text[i] == 'H';
	return 0;
}

void lat_seq_format(const lat_seq *seq, char *buf)
{
	for (int i = 0; i < seq->len; i++)
		buf[i] = seq->h[i] ? 'H' : 'P';
	buf[seq->len] = '\0';
}

static double walks(const double *table, int entries, double mu, int n)
{
	if (n < entries)
		return table[n];
	return table[entries - 1] * pow(mu, n - (entries - 1));
}

double lat_estimate(lat_kind kind, int len)
{
	int n = len - 1;
	if (n <= 1)
		return 1;
	const int nsq = (int)(sizeof square_walks / sizeof square_walks[0]);
	const int ncu = (int)(sizeof cubic_walks / sizeof cubic_walks[0]);
	/* Square: every class but the rod has 8 images, the rod 4. */
	double sq = walks(square_walks, nsq, SQUARE_MU, n);
	double planar_classes = (sq - 4) / 8 + 1;
	if (kind == LAT_SQUARE)
		return planar_classes;
	/*
	 * Cubic: a walk that leaves every plane has 48 images; the planar ones
	 * are 3 (c2 - 4) + 6 walks falling into the square classes above.
	 */
	double cu = walks(cubic_walks, ncu, CUBIC_MU, n);
	return (cu - 3 * (sq - 4) - 6) / 48 + planar_classes;
}

int lat_check_budget(lat_kind kind, int len, double budget, sf_err *err)
{
	if (len < 1 || len > LAT_MAX_LEN)
		return sf_err_set(err, SF_EINVAL,
				  "sequence length %d is out of range (allowed: 1..%d)", len,
				  LAT_MAX_LEN);
	if (budget <= 0)
		budget = LAT_DEFAULT_BUDGET;
	double need = lat_estimate(kind, len);
	if (need > budget)
		return sf_err_set(
			err, SF_EBUDGET,
			"length %d on the %s lattice needs about %.3g conformations, over the "
			"work budget of %.3g",
			len, lat_kind_name(kind), need, budget);
	return 0;
}

int lat_fold_score(lat_kind kind, const lat_seq *seq, const char *fold, sf_err *err)
{
	static const char letters[] = "RLUDFB";
	static const int step[6][3] = {
		{ 1, 0, 0 }, { -1, 0, 0 }, { 0, 1, 0 }, { 0, -1, 0 }, { 0, 0, 1 }, { 0, 0, -1 },
	};
	int ndir = kind == LAT_CUBIC ? 6 : 4;
	size_t bonds = strlen(fold);
	if ((int)bonds != seq->len - 1)
		return sf_err_set(err, SF_EINVAL, "fold has %zu moves, the chain needs %d", bonds,
				  seq->len - 1);
	int pos[LAT_MAX_LEN][3] = { { 0, 0, 0 } };
	for (size_t b = 0; b < bonds; b++) {
		const char *at = memchr(letters, fold[b], (size_t)ndir);
		if (!at) {
			unsigned char u = (unsigned char)fold[b];
			if (u >= 0x20 && u < 0x7f)
				return sf_err_set(
					err, SF_EINVAL,
					"fold move %zu is '%c' (allowed on the %s lattice: %.*s)",
					b + 1, fold[b], lat_kind_name(kind), ndir, letters);
			return sf_err_set(
				err, SF_EINVAL,
				"fold move %zu is byte 0x%02x (allowed on the %s lattice: %.*s)",
				b + 1, u, lat_kind_name(kind), ndir, letters);
		}
		int d = (int)(at - letters);
		for (int a = 0; a < 3; a++)
			pos[b + 1][a] = pos[b][a] + step[d][a];
		for (size_t j = 0; j <= b; j++)
			if (!memcmp(pos[j], pos[b + 1], sizeof pos[j]))
				return sf_err_set(
					err, SF_EINVAL,
					"fold move %zu puts residue %zu on residue %zu's site",
					b + 1, b + 2, j + 1);
	}
	int score = 0;
	for (int i = 0; i < seq->len; i++) {
		for (int j = i + 2; j < seq->len; j++) {
			if (!seq->h[i] || !seq->h[j])
				continue;
			int dist = abs(pos[i][0] - pos[j][0]) + abs(pos[i][1] - pos[j][1]) +
				   abs(pos[i][2] - pos[j][2]);
			score += dist == 1;
		}
	}
	return score;
}

void lat_result_summarise(lat_result *res)
{
	res->conformations = 0;
	res->max_score = 0;
	res->distinct_scores = 0;
	for (int s = 0; s <= LAT_MAX_SCORE; s++) {
		if (!res->hist[s])
			continue;
		res->conformations += res->hist[s];
		res->max_score = s;
		res->distinct_scores++;
	}
}
