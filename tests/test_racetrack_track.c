/*
 * test_racetrack_track.c - the racetrack's spline, noise and sampled track
 * (core/racetrack/spline.h, noise.h, track.h).
 *
 * Geometry is checked against shapes with known answers: control points on
 * a circle give a spline close to that circle (radius 1/curvature, length
 * 2 pi R), and each validity predicate is made to fail by a shape built to
 * break exactly that rule. sin and cos from libm only place control points
 * here; nothing below compares their last bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "racetrack/noise.h"
#include "racetrack/spline.h"
#include "racetrack/track.h"

#define TWO_PI 6.283185307179586

/* m control points on a circle of radius r about (cx, cy), anticlockwise. */
static void circle(trk_vec2 *pts, size_t m, double r, double cx, double cy)
{
	for (size_t i = 0; i < m; i++) {
		double a = TWO_PI * (double)i / (double)m;
		pts[i].x = cx + r * cos(a);
		pts[i].y = cy + r * sin(a);
	}
}

/* m control points on an ellipse with semi-axes a, b, anticlockwise. */
static void ellipse(trk_vec2 *pts, size_t m, double a, double b)
{
	for (size_t i = 0; i < m; i++) {
		double t = TWO_PI * (double)i / (double)m;
		pts[i].x = a * cos(t);
		pts[i].y = b * sin(t);
	}
}

static double dist2d(trk_vec2 a, trk_vec2 b)
{
	return sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y));
}

static trk_track_params default_params(void)
{
	trk_track_params p = {
		.spacing = 1.0,
		.width = 10.0,
		.amplitude = 8.0,
		.period = 8,
		.octaves = 3,
		.max_slope = 0.08,
		.seed = 42,
	};
	return p;
}

/*
 * Control points on a circle: curvature is 1/R everywhere, for several R.
 *
 * Tolerance: the samples lie on the spline, and Menger curvature of three
 * points on any circle is exactly that circle's, so the error is the
 * spline's own departure from the circle. Catmull-Rom reproduces quadratics,
 * so its curvature is off by O(h^2) for a span subtending h = 2 pi / m
 * radians; measured, the constant is about 0.55 (0.9 % at m = 48, 4.4 % at
 * m = 24). We allow 2 % at m = 48 and require the error to shrink by at
 * least 3x when m doubles (an O(h) method would only halve it). The error is
 * scale-free, so it is the same for every R.
 */
static void test_circle_curvature(void **state)
{
	(void)state;
	static const double radii[] = { 15.0, 40.0, 250.0, 3000.0 };
	trk_vec2 ctrl[96];
	for (size_t r = 0; r < sizeof radii / sizeof radii[0]; r++) {
		double R = radii[r], worst[2] = { 0.0, 0.0 };
		for (int pass = 0; pass < 2; pass++) {
			size_t m = pass ? 96 : 48;
			circle(ctrl, m, R, 7.0, -3.0);
			trk_path path;
			sf_err err;
			assert_int_equal(trk_spline_sample(ctrl, m, R / 40.0, &path, &err), 0);
			for (size_t k = 0; k < path.n; k++) {
				double rel = fabs(path.curvature[k] * R - 1.0);
				if (rel > worst[pass])
					worst[pass] = rel;
			}
			trk_path_release(&path);
		}
		if (worst[0] > 0.02 || worst[1] > worst[0] / 3.0)
			fail_msg("R = %g: curvature off by %.4f (m = 48), %.4f (m = 96)", R,
				 worst[0], worst[1]);
	}
	/* Clockwise control points turn right: negative curvature. */
	circle(ctrl, 48, 50.0, 0.0, 0.0);
	for (size_t i = 0; i < 24; i++) {
		trk_vec2 t = ctrl[i];
		ctrl[i] = ctrl[47 - i];
		ctrl[47 - i] = t;
	}
	trk_path path;
	assert_int_equal(trk_spline_sample(ctrl, 48, 1.0, &path, NULL), 0);
	for (size_t k = 0; k < path.n; k++)
		assert_true(path.curvature[k] < -0.98 / 50.0 && path.curvature[k] > -1.02 / 50.0);
	trk_path_release(&path);
}

/*
 * Menger curvature alone: points exactly on a circle give 1/R to rounding,
 * even when unevenly spaced; a straight line gives 0.
 */
static void test_polyline_curvature_exact(void **state)
{
	(void)state;
	trk_vec2 pts[5];
	double angles[5] = { 0.0, 0.3, 1.1, 2.9, 4.4 };
	for (size_t i = 0; i < 5; i++) {
		pts[i].x = 12.5 * cos(angles[i]);
		pts[i].y = 12.5 * sin(angles[i]);
	}
	double kappa[5];
	trk_polyline_curvature(pts, 5, kappa);
	for (size_t i = 0; i < 5; i++)
		assert_true(fabs(kappa[i] * 12.5 - 1.0) < 1e-12);
	trk_vec2 line[4] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 1, 1 } };
	trk_polyline_curvature(line, 4, kappa);
	assert_true(kappa[1] == 0.0);
	assert_true(kappa[2] == HUGE_VAL); /* it turns back on itself */
}

/*
 * Samples are evenly spaced and the length is right.
 *
 * Consecutive samples are ds apart along the spline, so their chord is
 * ds (1 - (kappa ds)^2 / 24) to leading order; the test removes that known
 * shortfall (kappa averaged over the two samples) and bounds what remains:
 * the parameter interpolated linearly inside a fine piece, and ds taken from
 * the fine chord table, a little short of the true length, both of either
 * sign. Measured, the remainder is 5e-6 on a circle (ds = R / 50) and
 * 2.3e-4 on a 120 x 45 ellipse through 20 points, where curvature jumps at
 * the control points (the spline is only C1) and the averaged kappa is
 * cruder; we allow 2e-5 and 5e-4. A sampler that ignored arc length (equal
 * parameter steps) misses by several percent on the ellipse. The circle's
 * spline departs from the circle by O(h^4) in radius (7e-6 at m = 48,
 * measured), so its length is within 1e-4 of 2 pi R.
 */
static void test_arc_length_spacing(void **state)
{
	(void)state;
	trk_vec2 ctrl[48];
	for (int shape = 0; shape < 2; shape++) {
		double tol = shape ? 5e-4 : 2e-5;
		if (shape)
			ellipse(ctrl, 20, 120.0, 45.0);
		else
			circle(ctrl, 48, 100.0, 0.0, 0.0);
		size_t m = shape ? 20 : 48;
		trk_path path;
		assert_int_equal(trk_spline_sample(ctrl, m, 2.0, &path, NULL), 0);
		assert_true(fabs(path.ds - 2.0) < 2.0 / (double)path.n);
		assert_true(path.length == (double)path.n * path.ds);
		for (size_t k = 0; k < path.n; k++) {
			double d = dist2d(path.pts[k], path.pts[(k + 1) % path.n]);
			double kappa = 0.5 * (path.curvature[k] + path.curvature[(k + 1) % path.n]);
			double chord = 1.0 - kappa * kappa * path.ds * path.ds / 24.0;
			if (fabs(d / path.ds - chord) > tol)
				fail_msg("shape %d: samples %zu, %zu are %.9g apart, ds %.9g",
					 shape, k, (k + 1) % path.n, d, path.ds);
		}
		if (!shape)
			assert_true(fabs(path.length / (TWO_PI * 100.0) - 1.0) < 1e-4);
		trk_path_release(&path);
	}
}

/* seg_start starts at 0, increases, and each start sits at its control point. */
static void test_seg_start(void **state)
{
	(void)state;
	trk_vec2 ctrl[20];
	ellipse(ctrl, 20, 120.0, 45.0);
	trk_path path;
	assert_int_equal(trk_spline_sample(ctrl, 20, 1.5, &path, NULL), 0);
	assert_int_equal(path.nsegments, 20);
	assert_int_equal(path.seg_start[0], 0);
	for (size_t i = 0; i < 20; i++) {
		size_t k = path.seg_start[i];
		assert_true(k < path.n);
		if (i > 0)
			assert_true(k > path.seg_start[i - 1]);
		/* The first sample at or past control point i is within ds of it. */
		assert_true(dist2d(path.pts[k], ctrl[i]) <= path.ds * (1.0 + 1e-6));
		/* ... and the sample before it is not past it (wrapping for i = 0). */
		size_t before = (k + path.n - 1) % path.n;
		assert_true(dist2d(path.pts[before], ctrl[i]) > 0.0);
	}
	/* The segments cover the loop: their sample counts add up to n. */
	size_t total = 0;
	for (size_t i = 0; i < 20; i++) {
		size_t end = i + 1 < 20 ? path.seg_start[i + 1] : path.n;
		total += end - path.seg_start[i];
	}
	assert_int_equal(total, path.n);
	trk_path_release(&path);
}

/*
 * The spline is the centripetal one: an independent formulation, the cubic
 * Hermite form of non-uniform Catmull-Rom with tangents
 * m1 = (t2 - t1) ((P1 - P0) / (t1 - t0) - (P2 - P0) / (t2 - t0) + (P2 - P1) / (t2 - t1))
 * (and m2 likewise) over knots spaced |chord|^0.5, agrees with
 * trk_spline_eval on unevenly spaced points, where uniform or chordal
 * knots would give other curves.
 */
static trk_vec2 hermite_ref(const trk_vec2 *c, size_t m, size_t i, double u)
{
	trk_vec2 p0 = c[(i + m - 1) % m], p1 = c[i], p2 = c[(i + 1) % m], p3 = c[(i + 2) % m];
	double t0 = 0.0, t1 = t0 + pow(dist2d(p0, p1), 0.5);
	double t2 = t1 + pow(dist2d(p1, p2), 0.5), t3 = t2 + pow(dist2d(p2, p3), 0.5);
	double h00 = 2 * u * u * u - 3 * u * u + 1, h10 = u * u * u - 2 * u * u + u;
	double h01 = -2 * u * u * u + 3 * u * u, h11 = u * u * u - u * u;
	double s = t2 - t1;
	trk_vec2 r;
	double m1x = s * ((p1.x - p0.x) / (t1 - t0) - (p2.x - p0.x) / (t2 - t0) +
			  (p2.x - p1.x) / (t2 - t1));
	double m1y = s * ((p1.y - p0.y) / (t1 - t0) - (p2.y - p0.y) / (t2 - t0) +
			  (p2.y - p1.y) / (t2 - t1));
	double m2x = s * ((p2.x - p1.x) / (t2 - t1) - (p3.x - p1.x) / (t3 - t1) +
			  (p3.x - p2.x) / (t3 - t2));
	double m2y = s * ((p2.y - p1.y) / (t2 - t1) - (p3.y - p1.y) / (t3 - t1) +
			  (p3.y - p2.y) / (t3 - t2));
	r.x = h00 * p1.x + h10 * m1x + h01 * p2.x + h11 * m2x;
	r.y = h00 * p1.y + h10 * m1y + h01 * p2.y + h11 * m2y;
	return r;
}

static void test_spline_is_centripetal(void **state)
{
	(void)state;
	const trk_vec2 ctrl[6] = { { 0, 0 },   { 100, 5 }, { 104, 40 },
				   { 60, 90 }, { 10, 70 }, { -3, 30 } };
	for (size_t i = 0; i < 6; i++) {
		trk_vec2 at0 = trk_spline_eval(ctrl, 6, i, 0.0);
		assert_true(dist2d(at0, ctrl[i]) < 1e-12);
		for (int q = 1; q < 8; q++) {
			double u = q / 8.0;
			trk_vec2 got = trk_spline_eval(ctrl, 6, i, u),
				 want = hermite_ref(ctrl, 6, i, u);
			if (dist2d(got, want) > 1e-9)
				fail_msg("span %zu, u %g: (%g, %g), want (%g, %g)", i, u, got.x,
					 got.y, want.x, want.y);
		}
	}
}

/* Bad control points and spacings are refused with a message naming them. */
static void test_spline_rejects(void **state)
{
	(void)state;
	trk_vec2 ctrl[6];
	circle(ctrl, 6, 50.0, 0.0, 0.0);
	trk_path path;
	sf_err err;
	assert_int_equal(trk_spline_sample(ctrl, 3, 1.0, &path, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "at least 4"));
	assert_int_equal(trk_spline_sample(ctrl, 6, 0.0, &path, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "spacing"));
	ctrl[3] = ctrl[2];
	assert_int_equal(trk_spline_sample(ctrl, 6, 1.0, &path, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "control point 2"));
	circle(ctrl, 6, 50.0, 0.0, 0.0);
	assert_int_equal(trk_spline_sample(ctrl, 6, 1e-6, &path, &err), SF_EBUDGET);
	trk_path_release(&path); /* left empty on failure; releasing is harmless */
}

/*
 * The noise wraps: noise(t) == noise(t + 1) bit for bit, values meet across
 * the seam, and so does the derivative.
 *
 * Bounds: an octave of c cells has |d/dt| <= c (|g0| + 1.875 |b - a| +
 * |g1 - g0|) <= 5c with gradients in [-1, 1], and octave o has c = P 2^o at
 * weight 2^-o, so the whole noise is Lipschitz with L <= 5 P octaves; that
 * bounds |noise(1 - e) - noise(e')| <= L (e + e'). For the derivative, the
 * one-sided difference quotients at the seam differ from the derivative by
 * at most h/2 times the second derivative (below about 60 c^2 per octave),
 * so with h = 1e-7 they agree to 1e-3 here.
 */
static void test_noise_seamless(void **state)
{
	(void)state;
	trk_noise *noise = trk_noise_new(8, 3, 7, NULL);
	assert_non_null(noise);
	for (int k = -2048; k <= 2048; k++) {
		double t = (double)k / 1024.0 + 0.1;
		if ((t + 1.0) - 1.0 != t || (t + 3.0) - 3.0 != t)
			continue; /* t + 1 rounded: a different argument */
		assert_true(trk_noise_at(noise, t) == trk_noise_at(noise, t + 1.0));
		assert_true(trk_noise_at(noise, t) == trk_noise_at(noise, t + 3.0));
		assert_true(trk_noise_deriv(noise, t) == trk_noise_deriv(noise, t + 1.0));
	}
	double lip = 5.0 * 8.0 * 3.0;
	for (double e = 1e-3; e > 1e-15; e /= 10.0) {
		double left = trk_noise_at(noise, 1.0 - e), right = trk_noise_at(noise, e / 3.0);
		assert_true(fabs(left - right) <= lip * (e + e / 3.0));
	}
	double h = 1e-7;
	double z0 = trk_noise_at(noise, 0.0);
	double from_left = (z0 - trk_noise_at(noise, 1.0 - h)) / h;
	double from_right = (trk_noise_at(noise, h) - z0) / h;
	double d0 = trk_noise_deriv(noise, 0.0);
	assert_true(fabs(from_left - from_right) < 1e-3 * (1.0 + fabs(d0)));
	assert_true(fabs(from_right - d0) < 1e-3 * (1.0 + fabs(d0)));
	/* The analytic derivative matches finite differences everywhere. */
	double biggest = 0.0;
	for (int k = 0; k < 1000; k++) {
		double t = (k + 0.37) / 1000.0;
		double fd = (trk_noise_at(noise, t + h) - trk_noise_at(noise, t - h)) / (2 * h);
		assert_true(fabs(fd - trk_noise_deriv(noise, t)) < 1e-4 * (1.0 + fabs(fd)));
		biggest = fmax(biggest, fabs(trk_noise_at(noise, t)));
	}
	/* It is not trivially flat, and within its bound. */
	assert_true(biggest > 0.05 && biggest < 1.0);
	trk_noise_free(noise);

	sf_err err;
	assert_null(trk_noise_new(0, 1, 1, &err));
	assert_non_null(strstr(err.msg, "period"));
	assert_null(trk_noise_new(1024, 4, 1, &err));
	assert_non_null(strstr(err.msg, "octaves"));
	trk_noise_free(NULL);
}

/* The slope cap holds everywhere, the closing step included, and binds. */
static void test_slope_cap(void **state)
{
	(void)state;
	trk_vec2 ctrl[24];
	ellipse(ctrl, 24, 200.0, 120.0);
	trk_track_params p = default_params();
	for (int binds = 0; binds < 2; binds++) {
		p.amplitude = binds ? 60.0 : 0.5;
		trk_track *t = trk_track_build(ctrl, 24, &p, NULL);
		assert_non_null(t);
		double steepest = 0.0;
		for (size_t k = 0; k < t->n; k++) {
			double dz = t->samples[(k + 1) % t->n].z - t->samples[k].z;
			assert_true(t->slope[k] == dz / t->ds);
			steepest = fmax(steepest, fabs(t->slope[k]));
		}
		assert_true(steepest <= p.max_slope);
		assert_true(fabs(t->samples[0].z - t->samples[t->n - 1].z) / t->ds <= p.max_slope);
		if (binds) {
			/* Scaled down to the cap, not further. */
			assert_true(steepest > 0.999 * p.max_slope);
		} else {
			/* Untouched: z is amplitude * noise exactly. */
			trk_noise *noise = trk_noise_new(p.period, p.octaves, p.seed, NULL);
			for (size_t k = 0; k < t->n; k += 37)
				assert_true(t->samples[k].z ==
					    0.5 * trk_noise_at(noise, (double)k / (double)t->n));
			trk_noise_free(noise);
			assert_true(steepest < p.max_slope);
		}
		trk_track_free(t);
	}
}

/* Builds the track through ctrl and checks it with all predicates. */
static int check_shape(const trk_vec2 *ctrl, size_t m, trk_report *report)
{
	trk_track_params p = default_params();
	sf_err err;
	trk_track *t = trk_track_build(ctrl, m, &p, &err);
	if (!t)
		fail_msg("build: %s", err.msg);
	trk_limits lim = trk_limits_default(p.width);
	int rc = trk_track_check(t, &lim, 1, report, &err);
	trk_track_free(t);
	return rc;
}

/* Whether the report holds predicate `name`, with a non-empty reason. */
static int has_failure(const trk_report *report, const char *name)
{
	for (size_t i = 0; i < report->nfailed; i++)
		if (strcmp(report->failed[i].name, name) == 0)
			return report->failed[i].reason[0] != '\0';
	return 0;
}

static void test_predicates(void **state)
{
	(void)state;
	trk_report report;
	trk_vec2 ctrl[64];

	/* A good oval passes every predicate. */
	ellipse(ctrl, 24, 150.0, 90.0);
	assert_int_equal(check_shape(ctrl, 24, &report), 0);

	/* A figure eight (Gerono's lemniscate) crosses itself at the origin. */
	for (size_t i = 0; i < 16; i++) {
		double t = TWO_PI * ((double)i + 0.5) / 16.0;
		ctrl[i].x = 150.0 * sin(t);
		ctrl[i].y = 90.0 * sin(t) * cos(t);
	}
	assert_true(check_shape(ctrl, 16, &report) > 0);
	assert_true(has_failure(&report, "self_intersection"));

	/* A hairpin: two 200 m straights 6 m apart on a 10 m wide road. */
	size_t m = 0;
	for (int x = 0; x <= 200; x += 40)
		ctrl[m++] = (trk_vec2){ (double)x, -3.0 };
	ctrl[m++] = (trk_vec2){ 203.0, 0.0 };
	for (int x = 200; x >= 0; x -= 40)
		ctrl[m++] = (trk_vec2){ (double)x, 3.0 };
	ctrl[m++] = (trk_vec2){ -3.0, 0.0 };
	assert_true(check_shape(ctrl, m, &report) > 0);
	assert_true(has_failure(&report, "clearance"));
	assert_false(has_failure(&report, "self_intersection"));

	/* A circle of radius 8 m is tighter than a 10 m road allows. */
	circle(ctrl, 12, 8.0, 0.0, 0.0);
	assert_true(check_shape(ctrl, 12, &report) > 0);
	assert_true(has_failure(&report, "curvature"));
	assert_false(has_failure(&report, "self_intersection"));

	/* Circles too long (19 km) and too short (190 m) fail only length. */
	circle(ctrl, 48, 3000.0, 0.0, 0.0);
	assert_int_equal(check_shape(ctrl, 48, &report), 1);
	assert_string_equal(report.failed[0].name, "length");
	circle(ctrl, 48, 30.0, 0.0, 0.0);
	assert_int_equal(check_shape(ctrl, 48, &report), 1);
	assert_string_equal(report.failed[0].name, "length");
	assert_non_null(strstr(report.failed[0].reason, "250"));
}

/* First-only mode stops at the first failure in table order. */
static void test_check_first_only(void **state)
{
	(void)state;
	trk_vec2 ctrl[12];
	circle(ctrl, 12, 8.0, 0.0, 0.0); /* fails curvature and length */
	trk_track_params p = default_params();
	trk_track *t = trk_track_build(ctrl, 12, &p, NULL);
	assert_non_null(t);
	trk_limits lim = trk_limits_default(p.width);
	trk_report report;
	assert_int_equal(trk_track_check(t, &lim, 1, &report, NULL), 2);
	assert_int_equal(trk_track_check(t, &lim, 0, &report, NULL), 1);
	assert_int_equal(report.failed[0].predicate, TRK_PRED_CURVATURE);
	assert_string_equal(report.failed[0].name, trk_predicate_name(TRK_PRED_CURVATURE));
	sf_err err;
	lim.min_length = 2e4;
	assert_int_equal(trk_track_check(t, &lim, 1, &report, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "min_length"));
	assert_null(trk_predicate_name(TRK_NPREDICATES));
	trk_track_free(t);
}

/* The same inputs give the same bytes; another seed changes only z. */
static void test_determinism(void **state)
{
	(void)state;
	trk_vec2 ctrl[24];
	ellipse(ctrl, 24, 150.0, 90.0);
	trk_track_params p = default_params();
	trk_track *a = trk_track_build(ctrl, 24, &p, NULL);
	trk_track *b = trk_track_build(ctrl, 24, &p, NULL);
	p.seed++;
	trk_track *c = trk_track_build(ctrl, 24, &p, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(a->n, b->n);
	assert_memory_equal(a->samples, b->samples, a->n * sizeof *a->samples);
	assert_memory_equal(a->curvature, b->curvature, a->n * sizeof *a->curvature);
	assert_memory_equal(a->slope, b->slope, a->n * sizeof *a->slope);
	assert_memory_equal(a->seg_start, b->seg_start, a->nsegments * sizeof *a->seg_start);
	int z_differs = 0;
	for (size_t k = 0; k < a->n; k++) {
		assert_true(a->samples[k].x == c->samples[k].x);
		assert_true(a->samples[k].y == c->samples[k].y);
		z_differs |= a->samples[k].z != c->samples[k].z;
	}
	assert_true(z_differs);
	trk_track_free(a);
	trk_track_free(b);
	trk_track_free(c);
	trk_track_free(NULL);
}

/* Bad parameters are refused with the field's name. */
static void test_build_rejects(void **state)
{
	(void)state;
	trk_vec2 ctrl[8];
	circle(ctrl, 8, 100.0, 0.0, 0.0);
	trk_track_params p = default_params();
	sf_err err;
	p.width = 0.0;
	assert_null(trk_track_build(ctrl, 8, &p, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "width"));
	p = default_params();
	p.max_slope = -1.0;
	assert_null(trk_track_build(ctrl, 8, &p, &err));
	assert_non_null(strstr(err.msg, "max_slope"));
	p = default_params();
	p.period = 0;
	assert_null(trk_track_build(ctrl, 8, &p, &err));
	assert_non_null(strstr(err.msg, "period"));
	p = default_params();
	assert_null(trk_track_build(ctrl, 2, &p, &err));
	assert_non_null(strstr(err.msg, "at least 4"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_circle_curvature),
		cmocka_unit_test(test_polyline_curvature_exact),
		cmocka_unit_test(test_arc_length_spacing),
		cmocka_unit_test(test_seg_start),
		cmocka_unit_test(test_spline_is_centripetal),
		cmocka_unit_test(test_spline_rejects),
		cmocka_unit_test(test_noise_seamless),
		cmocka_unit_test(test_slope_cap),
		cmocka_unit_test(test_predicates),
		cmocka_unit_test(test_check_first_only),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_build_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
