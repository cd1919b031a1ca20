/*
 * test_racetrack_corners.c - a circuit's centre line with a tightness per
 * corner, and its hills (core/racetrack/corners.h, issue 13).
 *
 * Every expected value is computed here, independently of corners.c: the
 * tangent length of each corner from its turn angle (atan2, libm's sin and
 * cos), the analytic apex curvature sin(a/2) / (T cos^2(a/2)) of the
 * symmetric quadratic Bezier corner, the path's arc length by summing
 * straights exactly and each corner curve over 20000 fine chords, and the
 * rise of each segment's hill from its sample count. libm here only builds
 * the expectations; nothing compares its last bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "racetrack/corners.h"
#include "racetrack/spline.h"
#include "rng.h"

#define TWO_PI 6.283185307179586
#define KMAX (1.0 / 6)   /* the search's limit for its 12 m road */
#define FINE_STEPS 20000 /* chords per corner curve in the reference arc length */
#define MAX_M 16

static trk_vec2 sub(trk_vec2 a, trk_vec2 b)
{
	return (trk_vec2){ a.x - b.x, a.y - b.y };
}

static double norm(trk_vec2 a)
{
	return sqrt(a.x * a.x + a.y * a.y);
}

static double dist(trk_vec2 a, trk_vec2 b)
{
	return norm(sub(a, b));
}

static trk_vec2 mid(trk_vec2 a, trk_vec2 b)
{
	return (trk_vec2){ (a.x + b.x) / 2, (a.y + b.y) / 2 };
}

/* Corner k of a polygon as corners.h defines it, computed here. */
typedef struct corner_ref {
	double t_hi, t_lo, tl; /* tangent lengths: widest, tightest, the one used */
	double half;           /* a / 2, the half turn angle */
	double apex;           /* sin(a/2) / (tl cos^2(a/2)), the analytic apex curvature */
	int lo_floor;          /* T_lo was raised to 0.05 T_hi */
	int too_sharp;         /* even T_hi passes the margin: tl = T_hi whatever the tightness */
	trk_vec2 a, b, v;      /* the curve's ends and its control point, the vertex */
} corner_ref;

static corner_ref corner_of(const trk_vec2 *v, size_t m, size_t k, double tightness, double kmax)
{
	corner_ref c = { 0 };
	trk_vec2 p = v[(k + m - 1) % m], q = v[(k + 1) % m];
	c.v = v[k];
	trk_vec2 d1 = sub(c.v, p), d2 = sub(q, c.v);
	double l1 = norm(d1), l2 = norm(d2);
	trk_vec2 u1 = { d1.x / l1, d1.y / l1 }, u2 = { d2.x / l2, d2.y / l2 };
	double turn = atan2(u1.x * u2.y - u1.y * u2.x, u1.x * u2.x + u1.y * u2.y);
	c.half = fabs(turn) / 2;
	double s = sin(c.half), co = cos(c.half);
	c.t_hi = fmin(l1, l2) / 2;
	c.t_lo = s / (TRK_CORNER_MARGIN * kmax * co * co);
	if (c.t_lo < 0.05 * c.t_hi) {
		c.t_lo = 0.05 * c.t_hi;
		c.lo_floor = 1;
	}
	c.too_sharp = !(c.t_lo < c.t_hi);
	c.tl = c.too_sharp ? c.t_hi : c.t_hi - tightness * (c.t_hi - c.t_lo);
	c.apex = s / (c.tl * co * co);
	c.a = (trk_vec2){ c.v.x - c.tl * u1.x, c.v.y - c.tl * u1.y };
	c.b = (trk_vec2){ c.v.x + c.tl * u2.x, c.v.y + c.tl * u2.y };
	return c;
}

/* The arc length of the quadratic Bezier a -> b with control v, over FINE_STEPS chords. */
static double bezier_length(trk_vec2 a, trk_vec2 v, trk_vec2 b)
{
	double len = 0;
	trk_vec2 prev = a;
	for (int i = 1; i <= FINE_STEPS; i++) {
		double t = (double)i / FINE_STEPS, w0 = (1 - t) * (1 - t), w1 = 2 * t * (1 - t),
		       w2 = t * t;
		trk_vec2 pt = { w0 * a.x + w1 * v.x + w2 * b.x, w0 * a.y + w1 * v.y + w2 * b.y };
		len += dist(prev, pt);
		prev = pt;
	}
	return len;
}

/*
 * The reference path: seg_arc[k] the arc length from the start (the midpoint
 * of side (v[m-1], v[0])) to the start of segment k (the midpoint of side
 * (v[k-1], v[k])); returns the whole length.
 */
static double reference_arcs(const trk_vec2 *v, size_t m, const double *tight, double kmax,
			     double *seg_arc)
{
	double s = 0;
	for (size_t k = 0; k < m; k++) {
		corner_ref c = corner_of(v, m, k, tight[k], kmax);
		trk_vec2 in = mid(v[(k + m - 1) % m], v[k]), out = mid(v[k], v[(k + 1) % m]);
		seg_arc[k] = s;
		s += dist(in, c.a) + bezier_length(c.a, c.v, c.b) + dist(c.b, out);
	}
	return s;
}

static void sample(const trk_vec2 *v, size_t m, const double *tight, double kmax, double spacing,
		   trk_path *path)
{
	sf_err err = { 0 };
	if (trk_corners_sample(v, m, tight, kmax, spacing, path, &err))
		fail_msg("trk_corners_sample refused: %s", err.msg);
	assert_int_equal(path->nsegments, m);
	assert_true(path->n >= 4);
}

/* The largest |curvature| of the samples within `radius` of point c. */
static double max_curvature_near(const trk_path *path, trk_vec2 c, double radius)
{
	double worst = 0;
	size_t seen = 0;
	for (size_t i = 0; i < path->n; i++)
		if (dist(path->pts[i], c) <= radius) {
			worst = fmax(worst, fabs(path->curvature[i]));
			seen++;
		}
	assert_true(seen >= 3);
	return worst;
}

static const trk_vec2 square[] = { { 0, 0 }, { 100, 0 }, { 100, 100 }, { 0, 100 } };
/* Anticlockwise, with turns of 25 to 99 degrees, one reflex vertex (a
 * right turn: negative curvature) and one gentle corner whose T_lo is the
 * 0.05 T_hi floor. */
static const trk_vec2 irregular[] = { { 0, 0 },     { 140, 0 },  { 225, 40 }, { 190, 150 },
				      { 110, 110 }, { 40, 160 }, { -30, 80 } };

/*
 * (a) Near each corner the sampled max |curvature| is the analytic apex
 * curvature within 2 % (samples 0.5 m apart), for tightness 0, 0.25, ...,
 * 1, and rises strictly with the tightness. Corner k gets tightness[k]: the
 * values rotate over the corners, so each corner sees every value in a
 * different run.
 */
static void check_apex(const trk_vec2 *v, size_t m, const char *name, int *floors, int *reflex)
{
	static const double levels[] = { 0, 0.25, 0.5, 0.75, 1 };
	enum { NL = sizeof levels / sizeof levels[0] };
	double seen[MAX_M][NL];
	double worst_err = 0;
	for (size_t j = 0; j < NL; j++) {
		double tight[MAX_M];
		for (size_t k = 0; k < m; k++)
			tight[k] = levels[(j + k) % NL];
		trk_path path;
		sample(v, m, tight, KMAX, 0.5, &path);
		for (size_t k = 0; k < m; k++) {
			corner_ref c = corner_of(v, m, k, tight[k], KMAX);
			assert_false(c.too_sharp);
			*floors += c.lo_floor && j == 0;
			double got = max_curvature_near(&path, c.v, 0.6 * c.tl);
			double rel = got / c.apex - 1;
			worst_err = fmax(worst_err, fabs(rel));
			if (fabs(rel) > 0.02)
				fail_msg("%s corner %zu tightness %g: sampled %.6f, apex %.6f",
					 name, k, tight[k], got, c.apex);
			seen[k][(j + k) % NL] = got;
		}
		/* A left turn curves positively, a right turn negatively. */
		for (size_t k = 0; k < m; k++) {
			trk_vec2 d1 = sub(v[k], v[(k + m - 1) % m]), d2 = sub(v[(k + 1) % m], v[k]);
			double cross = d1.x * d2.y - d1.y * d2.x;
			corner_ref c = corner_of(v, m, k, tight[k], KMAX);
			size_t nearest = 0;
			for (size_t i = 1; i < path.n; i++)
				if (dist(path.pts[i], c.v) < dist(path.pts[nearest], c.v))
					nearest = i;
			assert_true(cross * path.curvature[nearest] > 0);
			*reflex += cross < 0 && j == 0;
		}
		trk_path_release(&path);
	}
	for (size_t k = 0; k < m; k++)
		for (size_t l = 1; l < NL; l++)
			if (!(seen[k][l] > seen[k][l - 1]))
				fail_msg(
					"%s corner %zu: curvature %.6f at tightness %g, %.6f at %g",
					name, k, seen[k][l], levels[l], seen[k][l - 1],
					levels[l - 1]);
	print_message("%s: sampled apex curvature within %.3f %% of the formula\n", name,
		      100 * worst_err);
}

static void test_apex_curvature(void **state)
{
	(void)state;
	int floors = 0, reflex = 0;
	check_apex(square, 4, "square", &floors, &reflex);
	assert_int_equal(floors, 0);
	check_apex(irregular, sizeof irregular / sizeof irregular[0], "irregular", &floors,
		   &reflex);
	/* The irregular polygon exercises both special cases it was built for. */
	assert_int_equal(floors, 1);
	assert_int_equal(reflex, 1);

	/* A corner sharper than the limit allows even at T_hi is rounded at
	 * T_hi whatever its tightness: the same samples at 0 and 1. */
	static const trk_vec2 spike[] = { { 0, 0 }, { 100, 0 }, { 100, 8 }, { 0, 8 } };
	corner_ref c = corner_of(spike, 4, 1, 1, KMAX);
	assert_true(c.too_sharp);
	double t0[4] = { 0, 0, 0, 0 }, t1[4] = { 0, 1, 0, 0 };
	trk_path a, b;
	sample(spike, 4, t0, KMAX, 0.5, &a);
	sample(spike, 4, t1, KMAX, 0.5, &b);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.pts, b.pts, a.n * sizeof *a.pts);
	trk_path_release(&a);
	trk_path_release(&b);
}

/* A convex-ish random polygon: m vertices at jittered angles and radii,
 * the outer radius rmin..250 m. */
static void random_polygon(rng *r, size_t m, trk_vec2 *v, double rmin)
{
	double radius = rmin + (250 - rmin) * rng_unit(r);
	for (size_t i = 0; i < m; i++) {
		double ang = TWO_PI * ((double)i + 0.6 * (rng_unit(r) - 0.5)) / (double)m;
		double rad = radius * (0.7 + 0.3 * rng_unit(r));
		v[i] = (trk_vec2){ rad * cos(ang), rad * sin(ang) };
	}
}

/*
 * (b) With every corner at tightness 1 and every corner feasible (T_lo <
 * T_hi), the sampled curvature never passes max_curvature at the search's
 * own spacing of 2 m, and where some corner's T_lo comes from the limit
 * (not the 0.05 T_hi floor) the tightest corner really gets near it.
 */
static void test_tightest_within_limit(void **state)
{
	(void)state;
	static const double limits[] = { 1.0 / 4, 1.0 / 6, 1.0 / 10 };
	rng r;
	rng_seed(&r, 2024);
	size_t feasible = 0, tried = 0, near_limit = 0;
	double closest = 0, lowest_near = HUGE_VAL;
	for (size_t l = 0; l < 3; l++) {
		double kmax = limits[l];
		for (int i = 0; i < 80; i++) {
			size_t m = 5 + (size_t)rng_below(&r, 8);
			trk_vec2 v[MAX_M];
			double tight[MAX_M];
			random_polygon(&r, m, v, 15);
			tried++;
			int ok = 1, from_limit = 0;
			for (size_t k = 0; k < m; k++) {
				tight[k] = 1;
				corner_ref c = corner_of(v, m, k, 1, kmax);
				ok &= !c.too_sharp;
				from_limit |= !c.lo_floor;
			}
			if (!ok)
				continue;
			feasible++;
			trk_path path;
			sample(v, m, tight, kmax, 2.0, &path);
			double worst = 0;
			for (size_t k = 0; k < path.n; k++)
				worst = fmax(worst, fabs(path.curvature[k]));
			if (worst > kmax)
				fail_msg("polygon %d (m %zu): |curvature| %.6f > limit %.6f", i, m,
					 worst, kmax);
			closest = fmax(closest, worst / kmax);
			if (from_limit) {
				near_limit++;
				lowest_near = fmin(lowest_near, worst / kmax);
				assert_true(worst >= 0.8 * kmax);
			}
			trk_path_release(&path);
		}
	}
	print_message("%zu of %zu random polygons feasible, %zu with a corner at the limit; "
		      "max |curvature| / limit %.4f..%.4f\n",
		      feasible, tried, near_limit, lowest_near, closest);
	assert_true(feasible >= tried / 2 && feasible < tried);
	assert_true(near_limit >= feasible / 2);
}

/*
 * (c) Where the samples lie: the first at the midpoint of side (v[m-1],
 * v[0]); sample seg_start[k] within ds of the midpoint of side (v[k-1],
 * v[k]) and the first at or past it in arc length; consecutive samples a
 * chord of about ds apart (the closing pair too); the length the
 * reference arc length within 0.1 %; the curvature the polyline's.
 */
static void check_layout(const trk_vec2 *v, size_t m, const double *tight, double spacing,
			 double *worst_len, double *worst_chord)
{
	trk_path path;
	sample(v, m, tight, KMAX, spacing, &path);
	double arc[MAX_M];
	double ref = reference_arcs(v, m, tight, KMAX, arc);
	double ds = path.ds;
	size_t n = path.n;
	double rel = fabs(path.length - ref) / ref;
	*worst_len = fmax(*worst_len, rel);
	assert_true(rel < 1e-3);
	assert_true(path.length == (double)n * ds);
	assert_true(fabs(ds - spacing) <= 0.5 * spacing / (double)n + 1e-12);
	assert_true(dist(path.pts[0], mid(v[m - 1], v[0])) < 1e-9);
	assert_int_equal(path.seg_start[0], 0);
	/* corners.c measures arc length over 64 chords per corner, short of the
	 * true length by (kappa h)^2 / 24 of it: centimetres over a lap. */
	double tol = 1e-4 * ref;
	for (size_t k = 0; k < m; k++) {
		size_t j = path.seg_start[k];
		assert_true(j < n);
		if (k)
			assert_true(j > path.seg_start[k - 1]);
		trk_vec2 want = mid(v[(k + m - 1) % m], v[k]);
		if (!(dist(path.pts[j], want) <= ds + tol))
			fail_msg("segment %zu starts %.4f m from its side's midpoint (ds %.4f)", k,
				 dist(path.pts[j], want), ds);
		/* The first sample at or past the segment's start. */
		assert_true((double)j * ds >= arc[k] - tol);
		assert_true((double)j * ds < arc[k] + ds + tol);
	}
	/* A chord is ds less its sagitta shortfall, at most (kappa ds)^2 / 24 of
	 * it for curvature up to kappa, give or take 1 cm: corners.c places a
	 * sample by interpolating the curve's parameter linearly inside a fine
	 * step (1/64 of a corner curve, up to 3.6 m long here), over which the
	 * curve's speed changes by about 1 %, so a sample may sit a few
	 * millimetres off its arc length. */
	double shortfall = KMAX * KMAX * ds * ds / 24;
	for (size_t i = 0; i < n; i++) {
		double chord = dist(path.pts[i], path.pts[(i + 1) % n]);
		*worst_chord = fmax(*worst_chord, fabs(chord - ds));
		if (!(chord <= ds + 0.01 && chord >= ds * (1 - shortfall) - 0.01))
			fail_msg("chord %zu..%zu is %.6f m, ds %.6f", i, (i + 1) % n, chord, ds);
	}
	double *curv = malloc(n * sizeof *curv);
	assert_non_null(curv);
	trk_polyline_curvature(path.pts, n, curv);
	assert_memory_equal(curv, path.curvature, n * sizeof *curv);
	free(curv);
	trk_path_release(&path);
}

static void test_samples_and_segments(void **state)
{
	(void)state;
	double worst = 0, chord = 0;
	double sq[4] = { 0, 0.3, 0.6, 1 };
	check_layout(square, 4, sq, 2.0, &worst, &chord);
	double irr[7] = { 1, 0.1, 0.5, 0, 0.9, 0.3, 0.7 };
	check_layout(irregular, 7, irr, 2.0, &worst, &chord);
	check_layout(irregular, 7, irr, 0.7, &worst, &chord);
	rng r;
	rng_seed(&r, 77);
	for (int i = 0; i < 20; i++) {
		size_t m = 5 + (size_t)rng_below(&r, 10);
		trk_vec2 v[MAX_M];
		double tight[MAX_M];
		random_polygon(&r, m, v, 60);
		int ok = 1;
		for (size_t k = 0; k < m; k++) {
			tight[k] = rng_unit(&r);
			ok &= !corner_of(v, m, k, 1, KMAX).too_sharp;
		}
		if (ok)
			check_layout(v, m, tight, 2.0, &worst, &chord);
	}
	print_message("length against the reference arc length: at most %.2e relative; "
		      "|chord - ds| at most %.2f mm\n",
		      worst, 1000 * chord);
}

/* The largest closed step |z[(k+1) % n] - z[k]| / ds. */
static double steepest(const double *z, size_t n, double ds)
{
	double worst = 0;
	for (size_t k = 0; k < n; k++)
		worst = fmax(worst, fabs(z[(k + 1) % n] - z[k]) / ds);
	return worst;
}

/* Samples of segment k (its end seg_start[k + 1], or n for the last). */
static size_t seg_end(const trk_path *p, size_t k)
{
	return k + 1 < p->nsegments ? p->seg_start[k + 1] : p->n;
}

/*
 * The evened-out rise of every segment, from the definition in corners.h:
 * climb x max_slope x L_k / 1.5 with L_k the segment's samples x ds, less
 * the segment's share, by length, of the loop's total.
 */
static void expected_rises(const trk_path *p, const double *climb, double max_slope, double *rise)
{
	double total = 0;
	for (size_t k = 0; k < p->nsegments; k++) {
		double len = (double)(seg_end(p, k) - p->seg_start[k]) * p->ds;
		rise[k] = climb[k] * max_slope * len / 1.5;
		total += rise[k];
	}
	for (size_t k = 0; k < p->nsegments; k++)
		rise[k] -= total * (double)(seg_end(p, k) - p->seg_start[k]) / (double)p->n;
}

#define SLOPE 0.08

/* The unscaled profile of corners.h: segment k climbs rise[k] along
 * 3u^2 - 2u^3, u = (s - seg_start[k]) / its samples, from where the
 * previous segments left it. */
static void reference_profile(const trk_path *p, const double *climb, double *raw)
{
	double rise[64], base = 0;
	expected_rises(p, climb, SLOPE, rise);
	for (size_t k = 0; k < p->nsegments; k++) {
		size_t a = p->seg_start[k], b = seg_end(p, k);
		for (size_t s = a; s < b; s++) {
			double u = (double)(s - a) / (double)(b - a);
			raw[s] = base + rise[k] * (3 * u * u - 2 * u * u * u);
		}
		base += rise[k];
	}
}

/*
 * trk_hills(climb) against the reference: the unscaled profile itself when
 * its steepest closed step is within the cap; else that profile times one
 * factor below 1 that brings the steepest step to the cap. Every closed step
 * is within the cap either way. Returns 1 when the profile was scaled.
 */
static int check_hills(const trk_path *p, const double *climb)
{
	size_t n = p->n;
	double *z = malloc(n * sizeof *z), *raw = malloc(n * sizeof *raw);
	assert_non_null(z);
	assert_non_null(raw);
	sf_err err = { 0 };
	assert_int_equal(trk_hills(p, climb, SLOPE, z, &err), 0);
	reference_profile(p, climb, raw);
	assert_true(steepest(z, n, p->ds) <= SLOPE);
	size_t top = 0;
	for (size_t s = 0; s < n; s++)
		if (fabs(raw[s]) > fabs(raw[top]))
			top = s;
	double f = raw[top] != 0 ? z[top] / raw[top] : 1;
	for (size_t s = 0; s < n; s++)
		if (!(fabs(z[s] - f * raw[s]) < 1e-9))
			fail_msg("z[%zu] = %.12f, expected %.12f x %.12f", s, z[s], f, raw[s]);
	double steep = steepest(raw, n, p->ds);
	int scaled = 0;
	if (steep <= SLOPE * (1 - 1e-9)) {
		assert_true(fabs(f - 1) < 1e-12);
	} else if (steep > SLOPE * (1 + 1e-9)) {
		scaled = 1;
		assert_true(f < 1);
		assert_true(steepest(z, n, p->ds) > SLOPE * (1 - 1e-9));
	}
	free(raw);
	free(z);
	return scaled;
}

static void random_path(rng *r, size_t m, trk_vec2 *v, double *tight, trk_path *path)
{
	random_polygon(r, m, v, 60);
	for (size_t k = 0; k < m; k++)
		tight[k] = rng_unit(r);
	sample(v, m, tight, KMAX, 2.0, path);
}

/* (d) Hills: the cap holds on every closed step, flat climbs are flat, and a
 * lone climb rises by its formula less its evened-out share. */
static void test_hills(void **state)
{
	(void)state;
	sf_err err = { 0 };
	rng r;
	rng_seed(&r, 99);
	size_t scaled = 0, paths = 0;
	for (int i = 0; i < 40; i++) {
		size_t m = 5 + (size_t)rng_below(&r, 10);
		trk_vec2 v[MAX_M];
		double tight[MAX_M], climb[MAX_M];
		trk_path path;
		random_path(&r, m, v, tight, &path);
		paths++;
		double *z = malloc(path.n * sizeof *z);
		assert_non_null(z);
		/* Random climbs: every closed step within the cap, the seam included. */
		for (size_t k = 0; k < m; k++)
			climb[k] = 2 * rng_unit(&r) - 1;
		scaled += (size_t)check_hills(&path, climb);

		/* No climbs: flat. */
		for (size_t k = 0; k < m; k++)
			climb[k] = 0;
		assert_int_equal(trk_hills(&path, climb, SLOPE, z, &err), 0);
		for (size_t k = 0; k < path.n; k++)
			assert_true(z[k] == 0);

		/* One climb c over segment j, the rest 0: j rises by c x slope x
		 * L_j / 1.5 less its share of that total, every other segment
		 * drops by its share, and the loop closes. */
		size_t j = (size_t)rng_below(&r, m);
		double c = i % 2 ? 1 : -0.6;
		climb[j] = c;
		assert_int_equal(check_hills(&path, climb), 0);
		assert_int_equal(trk_hills(&path, climb, SLOPE, z, &err), 0);
		size_t nj = seg_end(&path, j) - path.seg_start[j];
		double total = c * SLOPE * (double)nj * path.ds / 1.5;
		for (size_t k = 0; k < m; k++) {
			size_t a = path.seg_start[k], b = seg_end(&path, k);
			double share = total * (double)(b - a) / (double)path.n;
			double expect = (k == j ? total : 0) - share;
			double rose = z[b % path.n] - z[a];
			if (fabs(rose - expect) > 1e-9)
				fail_msg("segment %zu rises %.12f, expected %.12f", k, rose,
					 expect);
			/* Monotone within the segment: a smoothstep. */
			for (size_t s = a; s + 1 < b; s++)
				assert_true((z[s + 1] - z[s]) * expect >= 0);
		}
		assert_true(z[0] == 0);
		/* Against the segment's true length (midpoint to midpoint, by the
		 * reference arc length): the same within a sample's worth of climb. */
		double arc[MAX_M];
		double len = reference_arcs(v, m, tight, KMAX, arc);
		double lj = (j + 1 < m ? arc[j + 1] : len) - arc[j];
		double ref = c * SLOPE * lj / 1.5 * (1 - lj / len);
		double rose_j = z[seg_end(&path, j) % path.n] - z[path.seg_start[j]];
		assert_true(fabs(rose_j - ref) <= 2 * SLOPE * path.ds);
		assert_true(fabs(rose_j) > 1); /* a hill, metres high */
		free(z);
		trk_path_release(&path);
	}
	print_message("random climbs: %zu of %zu profiles scaled down to the cap\n", scaled, paths);
	assert_true(scaled > 0 && scaled < paths);

	/* Every climb +1 but one -1: the evened-out drop is steeper than the
	 * cap, so the whole profile is scaled. */
	trk_vec2 v[MAX_M];
	double tight[MAX_M], climb[MAX_M];
	trk_path path;
	random_path(&r, 9, v, tight, &path);
	for (size_t k = 0; k < 9; k++)
		climb[k] = k == 4 ? -1 : 1;
	assert_int_equal(check_hills(&path, climb), 1);
	trk_path_release(&path);
}

/* (e) Bad input: SF_EINVAL, and the path left empty. */
static void test_bad_input(void **state)
{
	(void)state;
	static const trk_vec2 two[] = { { 0, 0 }, { 10, 0 } };
	static const trk_vec2 repeat[] = { { 0, 0 }, { 100, 0 }, { 100, 0 }, { 0, 100 } };
	static const trk_vec2 wraps[] = { { 0, 0 }, { 100, 0 }, { 0, 100 }, { 0, 0 } };
	static const trk_vec2 reverse[] = { { 0, 0 }, { 100, 0 }, { 50, 0 }, { 50, 80 } };
	double ok[4] = { 0.5, 0.5, 0.5, 0.5 };
	double below[4] = { 0.5, -0.01, 0.5, 0.5 }, above[4] = { 0.5, 0.5, 1.01, 0.5 };
	double nan_t[4] = { 0.5, 0.5, 0.5, NAN };
	const struct {
		const trk_vec2 *v;
		size_t m;
		const double *tight;
		double kmax, spacing;
		const char *what;
	} cases[] = {
		{ two, 2, ok, KMAX, 2, "2 vertices" },
		{ square, 0, ok, KMAX, 2, "no vertices" },
		{ NULL, 4, ok, KMAX, 2, "no vertices (NULL)" },
		{ square, 4, NULL, KMAX, 2, "no tightness" },
		{ repeat, 4, ok, KMAX, 2, "a repeated vertex" },
		{ wraps, 4, ok, KMAX, 2, "the last vertex repeats the first" },
		{ square, 4, below, KMAX, 2, "tightness below 0" },
		{ square, 4, above, KMAX, 2, "tightness above 1" },
		{ square, 4, nan_t, KMAX, 2, "tightness NaN" },
		{ reverse, 4, ok, KMAX, 2, "a reversal" },
		{ square, 4, ok, KMAX, 0, "spacing 0" },
		{ square, 4, ok, 0, 2, "max_curvature 0" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		trk_path path;
		memset(&path, 0xab, sizeof path);
		sf_err err = { 0 };
		int rc = trk_corners_sample(cases[i].v, cases[i].m, cases[i].tight, cases[i].kmax,
					    cases[i].spacing, &path, &err);
		if (rc != SF_EINVAL)
			fail_msg("%s: returned %d, not SF_EINVAL", cases[i].what, rc);
		assert_true(err.msg[0] != '\0');
		assert_true(path.n == 0 && !path.pts && !path.curvature && !path.seg_start);
		trk_path_release(&path);
	}
	/* The same square with good input is accepted (the cases differ in one thing). */
	trk_path path;
	sample(square, 4, ok, KMAX, 2, &path);
	double climb[4] = { 0 }, z[4];
	sf_err err = { 0 };
	trk_path tiny = { .n = 1, .nsegments = 1, .ds = 1, .seg_start = (size_t[]){ 0 } };
	assert_int_equal(trk_hills(&tiny, climb, SLOPE, z, &err), SF_EINVAL);
	assert_int_equal(trk_hills(&path, NULL, SLOPE, z, &err), SF_EINVAL);
	assert_int_equal(trk_hills(&path, climb, -0.01, z, &err), SF_EINVAL);
	trk_path_release(&path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apex_curvature),
		cmocka_unit_test(test_tightest_within_limit),
		cmocka_unit_test(test_samples_and_segments),
		cmocka_unit_test(test_hills),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
