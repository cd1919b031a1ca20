/*
 * stars.c - star threshold strategies; see stars.h for what each means.
 *
 * All strategies work on the same view of the distribution: the reachable
 * scores above the lowest one, in increasing order, with the share of all
 * solutions that score at least as much (the tail share). Each strategy picks
 * a candidate for each star and a final pass keeps one star off the first
 * step above the lowest and makes them strictly increasing (see the end of
 * stars_thresholds()).
 */
#include "stars.h"

#include <string.h>

#include "dmath.h"

typedef struct stars_view {
	int n;              /* reachable scores above the lowest */
	const int *s;       /* those scores, increasing */
	const double *tail; /* tail[i]: share of solutions scoring >= s[i] */
} stars_view;

static const char *const strategy_names[] = {
	[STARS_PAPER] = "paper",
	[STARS_PERCENTILE] = "percentile",
	[STARS_GEOMETRIC] = "geometric",
	[STARS_SOLVER] = "solver",
};

void stars_config_default(stars_config *cfg, stars_strategy strategy)
{
	cfg->strategy = strategy;
	cfg->one_fraction = 0.5;
	cfg->two_fraction = 0.1;
}

int stars_parse_strategy(const char *name, stars_strategy *out, sf_err *err)
{
	/* Histogram strategies only: STARS_SOLVER needs a kind's solver (stars.h). */
	for (size_t i = 0; i < STARS_SOLVER; i++) {
		if (name && strcmp(name, strategy_names[i]) == 0) {
			*out = (stars_strategy)i;
			return 0;
		}
	}
	return sf_err_set(err, SF_EINVAL,
			  "unknown star strategy '%s' (allowed: paper, percentile, geometric)",
			  name ? name : "");
}

int stars_config_check(const stars_config *cfg, sf_err *err)
{
	if (!(cfg->one_fraction > 0 && cfg->one_fraction < 1))
		return sf_err_set(err, SF_EINVAL,
				  "star_one_fraction %g is out of range (allowed: 0 < "
				  "star_two_fraction < star_one_fraction < 1)",
				  cfg->one_fraction);
	if (!(cfg->two_fraction > 0 && cfg->two_fraction < cfg->one_fraction))
		return sf_err_set(err, SF_EINVAL,
				  "star_two_fraction %g is out of range (allowed: 0 < "
				  "star_two_fraction < star_one_fraction (%g))",
				  cfg->two_fraction, cfg->one_fraction);
	return 0;
}

const char *stars_strategy_name(stars_strategy strategy)
{
	if ((unsigned)strategy < sizeof strategy_names / sizeof strategy_names[0])
		return strategy_names[strategy];
	return "unknown";
}

/* Index of the first candidate whose tail share is at most `share`. */
static int first_at_most(const stars_view *v, double share)
{
	for (int i = 0; i < v->n; i++)
		if (v->tail[i] <= share)
			return i;
	return v->n - 1;
}

/* Index of the first candidate whose tail share, cubed, is at most `bound`. */
static int first_cubed_at_most(const stars_view *v, double bound)
{
	for (int i = 0; i < v->n; i++)
		if (v->tail[i] * v->tail[i] * v->tail[i] <= bound)
			return i;
	return v->n - 1;
}

/* Index of the first candidate scoring at least `score`. */
static int first_scoring(const stars_view *v, int score)
{
	for (int i = 0; i < v->n; i++)
		if (v->s[i] >= score)
			return i;
	return v->n - 1;
}

int stars_thresholds(const uint64_t *counts, int nscores, const stars_config *cfg,
		     int thresholds[3], sf_err *err)
{
	if (!counts || nscores <= 0)
		return sf_err_set(err, SF_EINVAL, "empty score distribution");
	if (nscores > STARS_MAX_SCORES)
		return sf_err_set(err, SF_EINVAL,
				  "score distribution has %d scores (allowed: 1..%d)", nscores,
				  STARS_MAX_SCORES);

	int lowest = -1;
	double total = 0;
	for (int s = 0; s < nscores; s++) {
		if (counts[s] && lowest < 0)
			lowest = s;
		total += (double)counts[s];
	}
	if (lowest < 0)
		return sf_err_set(err, SF_EINVAL, "score distribution has no solutions");

	/* The view: candidates above the lowest score, with their tail shares. */
	int n = 0;
	int scores[nscores];
	double tail[nscores];
	double above = 0;
	for (int s = nscores - 1; s > lowest; s--) {
		above += (double)counts[s];
		if (counts[s])
			n++;
	}
	if (n < 3)
		return sf_err_set(err, SF_ERANGE,
				  "only %d reachable score%s above the lowest (%d); three star "
				  "thresholds need at least 3",
				  n, n == 1 ? "" : "s", lowest);
	int i = 0;
	for (int s = lowest + 1; s < nscores; s++) {
		if (!counts[s])
			continue;
		scores[i] = s;
		tail[i] = above / total;
		above -= (double)counts[s];
		i++;
	}
	stars_view v = { .n = n, .s = scores, .tail = tail };

	int pick[3];
	pick[2] = n - 1;
	switch (cfg->strategy) {
	case STARS_PAPER:
		pick[1] = n - 2;
		pick[0] = first_scoring(&v, lowest + (scores[n - 1] - lowest) / 2);
		break;
	case STARS_PERCENTILE:
		if (!(cfg->one_fraction > 0 && cfg->one_fraction < 1 && cfg->two_fraction > 0 &&
		      cfg->two_fraction < cfg->one_fraction))
			return sf_err_set(
				err, SF_EINVAL,
				"percentile fractions must satisfy 0 < two (%g) < one (%g) < 1",
				cfg->two_fraction, cfg->one_fraction);
		pick[0] = first_at_most(&v, cfg->one_fraction);
		pick[1] = first_at_most(&v, cfg->two_fraction);
		break;
	case STARS_GEOMETRIC:
		/* tail <= p^(k/3) as tail^3 <= p^k: no pow(), whose last bit may
		 * differ between libm builds, so thresholds match on every machine. */
		pick[0] = first_cubed_at_most(&v, tail[n - 1]);
		pick[1] = first_cubed_at_most(&v, tail[n - 1] * tail[n - 1]);
		break;
	case STARS_SOLVER:
		return sf_err_set(err, SF_EINVAL,
				  "star strategy solver places thresholds from solver success "
				  "(stars_thresholds_success()), not from a histogram alone");
	default:
		return sf_err_set(err, SF_EINVAL, "unknown star strategy %d", (int)cfg->strategy);
	}

	/*
	 * One star never takes candidate 0, one step above the lowest (on the
	 * HP lattice a single contact: one bend of the straight chain), when
	 * there are four or more candidates: a star for the first step up is
	 * no achievement, and the percentile rule gave it whenever at least
	 * half of all solutions score the lowest (docs/stars.md has the
	 * numbers). With exactly three candidates every one is needed.
	 *
	 * Then strictly increasing: two stars below three, and above one
	 * star's lowest candidate (when nearly every solution scores the
	 * lowest, both lower strategies land there and two stars must move
	 * up); one star below two. With n >= 3 candidates the picks end in
	 * first <= one < two < three.
	 */
	int first = n >= 4 ? 1 : 0; /* the lowest candidate one star may take */
	if (pick[0] < first)
		pick[0] = first;
	if (pick[1] >= pick[2])
		pick[1] = pick[2] - 1;
	if (pick[1] < first + 1)
		pick[1] = first + 1;
	if (pick[0] >= pick[1])
		pick[0] = pick[1] - 1;
	for (int k = 0; k < 3; k++)
		thresholds[k] = scores[pick[k]];
	return 0;
}

/* ln(p / (1 - p)) for p in (0, 1). */
static double log_odds(double p)
{
	return dm_log(p / (1 - p));
}

double stars_success_distance(int hits, int runs, double target)
{
	double p = ((double)hits + 0.5) / ((double)runs + 1);
	double d = log_odds(p) - log_odds(target);
	return d < 0 ? -d : d;
}

/*
 * The solver rule: every pair (one, two) of candidates strictly between
 * `first` and the best is tried, the nearest to the targets kept. Score
 * ranges are short (a few dozen scores), so the quadratic scan is cheap.
 */
int stars_thresholds_success(const uint64_t *counts, int nscores, const int *hits, int runs,
			     int thresholds[3], sf_err *err)
{
	if (!counts || !hits || nscores <= 0)
		return sf_err_set(err, SF_EINVAL, "empty score distribution");
	if (nscores > STARS_MAX_SCORES)
		return sf_err_set(err, SF_EINVAL,
				  "score distribution has %d scores (allowed: 1..%d)", nscores,
				  STARS_MAX_SCORES);
	if (runs < 1)
		return sf_err_set(err, SF_EINVAL, "solver runs %d is out of range (allowed: 1..)",
				  runs);
	int lowest = -1, n = 0;
	for (int s = 0; s < nscores; s++) {
		if (hits[s] < 0 || hits[s] > runs || (s && hits[s] > hits[s - 1]))
			return sf_err_set(err, SF_EINVAL,
					  "solver hits at score %d: %d (allowed: 0..%d runs, "
					  "non-increasing in the score)",
					  s, hits[s], runs);
		if (counts[s] && lowest < 0)
			lowest = s;
		else if (counts[s])
			n++;
	}
	if (lowest < 0)
		return sf_err_set(err, SF_EINVAL, "score distribution has no solutions");
	if (n < 3)
		return sf_err_set(err, SF_ERANGE,
				  "only %d reachable score%s above the lowest (%d); three star "
				  "thresholds need at least 3",
				  n, n == 1 ? "" : "s", lowest);
	int scores[nscores], i = 0;
	for (int s = lowest + 1; s < nscores; s++)
		if (counts[s])
			scores[i++] = s;
	int first = n >= 4 ? 1 : 0, one = first, two = first + 1;
	double best = -1;
	for (int a = first; a + 2 < n; a++) {
		double da = stars_success_distance(hits[scores[a]], runs, STARS_SOLVER_ONE);
		for (int b = a + 1; b + 1 < n; b++) {
			double d = da +
				   stars_success_distance(hits[scores[b]], runs, STARS_SOLVER_TWO);
			if (best < 0 || d <= best) {
				best = d;
				one = a;
				two = b;
			}
		}
	}
	thresholds[0] = scores[one];
	thresholds[1] = scores[two];
	thresholds[2] = scores[n - 1];
	return 0;
}

/* Forced thresholds: 3 or 4 reachable scores above the lowest. See stars.h. */
int stars_forced(const uint64_t *counts, int nscores)
{
	if (!counts || nscores <= 0 || nscores > STARS_MAX_SCORES)
		return 0;
	int reachable = 0;
	for (int s = 0; s < nscores; s++)
		reachable += counts[s] != 0;
	int above = reachable - 1; /* the lowest is no candidate */
	return above >= 3 && above < STARS_FREE_SCORES;
}

/*
 * Lower-is-better thresholds from bounds: [max(worst, best + 2), best +
 * (one - best) / 2, best]; SF_EINVAL (thresholds untouched) for best
 * outside 0..STARS_MAX_SCORES or worst < best. See stars.h.
 */
int stars_lower_bounds(int best, int worst, int thresholds[3], sf_err *err)
{
	if (best < 0 || best > STARS_MAX_SCORES)
		return sf_err_set(err, SF_EINVAL, "best score %d is out of range (allowed: 0..%d)",
				  best, STARS_MAX_SCORES);
	if (worst < best)
		return sf_err_set(err, SF_EINVAL,
				  "worst score %d is better than the best score %d (lower is "
				  "better: worst >= best)",
				  worst, best);
	int one = worst > best + 2 ? worst : best + 2;
	thresholds[0] = one;
	thresholds[1] = best + (one - best) / 2;
	thresholds[2] = best;
	return 0;
}

/* Stars `score` earns under lower-is-better thresholds: 3, 2, 1 or 0. */
int stars_earned_lower(int score, const int thresholds[3])
{
	int stars = 0;
	for (int k = 0; k < 3; k++)
		if (score <= thresholds[k])
			stars = k + 1;
	return stars;
}
