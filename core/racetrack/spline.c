/*
 * spline.c - see spline.h.
 *
 * Resampling works in two passes over a fine table: the spline is evaluated
 * at TRK_SPLINE_SUBSTEPS equal parameter steps per span and the cumulative
 * chord lengths recorded; then each sample's arc length k * ds is located in
 * the table (a single forward walk, since both increase) and the spline is
 * evaluated again at the interpolated parameter, so every sample lies on the
 * spline itself rather than on the chords. Arc length is not linear in the
 * parameter inside a fine piece, but a piece is 1/64 of a span, so the
 * spacing error this leaves is second order in the piece length and well
 * below the chord-versus-arc difference between neighbouring samples.
 */
#include "spline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double dist(trk_vec2 a, trk_vec2 b)
{
	double dx = b.x - a.x, dy = b.y - a.y;
	return sqrt(dx * dx + dy * dy);
}

/* A point dividing a..b with weights wa, wb (wa + wb == 1 up to rounding). */
static trk_vec2 mix(double wa, trk_vec2 a, double wb, trk_vec2 b)
{
	trk_vec2 r = { wa * a.x + wb * b.x, wa * a.y + wb * b.y };
	return r;
}

trk_vec2 trk_spline_eval(const trk_vec2 *ctrl, size_t m, size_t i, double u)
{
	trk_vec2 p0 = ctrl[(i + m - 1) % m], p1 = ctrl[i % m];
	trk_vec2 p2 = ctrl[(i + 1) % m], p3 = ctrl[(i + 2) % m];
	/* Centripetal knots: each interval is |chord|^0.5 = sqrt(sqrt(d^2)). */
	double t0 = 0.0;
	double t1 = t0 + sqrt(dist(p0, p1));
	double t2 = t1 + sqrt(dist(p1, p2));
	double t3 = t2 + sqrt(dist(p2, p3));
	double t = t1 + u * (t2 - t1);
	/* Barry and Goldman's pyramid of linear interpolations. */
	trk_vec2 a1 = mix((t1 - t) / (t1 - t0), p0, (t - t0) / (t1 - t0), p1);
	trk_vec2 a2 = mix((t2 - t) / (t2 - t1), p1, (t - t1) / (t2 - t1), p2);
	trk_vec2 a3 = mix((t3 - t) / (t3 - t2), p2, (t - t2) / (t3 - t2), p3);
	trk_vec2 b1 = mix((t2 - t) / (t2 - t0), a1, (t - t0) / (t2 - t0), a2);
	trk_vec2 b2 = mix((t3 - t) / (t3 - t1), a2, (t - t1) / (t3 - t1), a3);
	return mix((t2 - t) / (t2 - t1), b1, (t - t1) / (t2 - t1), b2);
}

void trk_polyline_curvature(const trk_vec2 *pts, size_t n, double *curvature)
{
	for (size_t k = 0; k < n; k++) {
		trk_vec2 a = pts[(k + n - 1) % n], b = pts[k], c = pts[(k + 1) % n];
		double ab = dist(a, b), bc = dist(b, c), ac = dist(a, c);
		double cross = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x);
		if (ab == 0.0 || bc == 0.0)
			curvature[k] = 0.0;
		else if (ac == 0.0)
			curvature[k] = HUGE_VAL;
		else
			curvature[k] = 2.0 * cross / (ab * bc * ac);
	}
}

void trk_path_release(trk_path *path)
{
	if (!path)
		return;
	free(path->pts);
	free(path->curvature);
	free(path->seg_start);
	memset(path, 0, sizeof *path);
}

static int check_ctrl(const trk_vec2 *ctrl, size_t m, double spacing, sf_err *err)
{
	if (!ctrl || m < 4)
		return sf_err_set(err, SF_EINVAL, "control points: need at least 4, got %zu", m);
	if (!(spacing > 0.0) || !isfinite(spacing))
		return sf_err_set(err, SF_EINVAL, "spacing: must be finite and > 0, got %g",
				  spacing);
	for (size_t i = 0; i < m; i++) {
		if (!isfinite(ctrl[i].x) || !isfinite(ctrl[i].y))
			return sf_err_set(err, SF_EINVAL,
					  "control point %zu: coordinates must be finite", i);
		if (dist(ctrl[i], ctrl[(i + 1) % m]) == 0.0)
			return sf_err_set(err, SF_EINVAL,
					  "control point %zu: equals the next one (%zu); "
					  "consecutive points must differ",
					  i, (i + 1) % m);
	}
	return SF_OK;
}

int trk_spline_sample(const trk_vec2 *ctrl, size_t m, double spacing, trk_path *out, sf_err *err)
{
	enum { K = TRK_SPLINE_SUBSTEPS };
	double *cum = NULL;
	memset(out, 0, sizeof *out);
	int rc = check_ctrl(ctrl, m, spacing, err);
	if (rc)
		return rc;

	/* cum[i * K + j]: chord length from ctrl[0] to span i, sub-step j. */
	size_t nfine = m * K;
	cum = malloc((nfine + 1) * sizeof *cum);
	if (!cum)
		goto nomem;
	cum[0] = 0.0;
	trk_vec2 prev = trk_spline_eval(ctrl, m, 0, 0.0);
	for (size_t f = 1; f <= nfine; f++) {
		size_t i = (f - 1) / K, j = (f - 1) % K + 1;
		trk_vec2 p = trk_spline_eval(ctrl, m, i, (double)j / K);
		cum[f] = cum[f - 1] + dist(prev, p);
		prev = p;
	}
	double total = cum[nfine];
	if (!isfinite(total) || total / spacing > (double)TRK_SPLINE_MAX_SAMPLES) {
		free(cum);
		return sf_err_set(err, SF_EBUDGET,
				  "spacing: %g m gives more than %zu samples over %g m of track",
				  spacing, TRK_SPLINE_MAX_SAMPLES, total);
	}
	size_t n = (size_t)(total / spacing + 0.5);
	if (n < 4)
		n = 4;

	out->pts = malloc(n * sizeof *out->pts);
	out->curvature = malloc(n * sizeof *out->curvature);
	out->seg_start = malloc(m * sizeof *out->seg_start);
	if (!out->pts || !out->curvature || !out->seg_start)
		goto nomem;
	out->n = n;
	out->ds = total / (double)n;
	out->length = (double)n * out->ds;
	out->nsegments = m;

	size_t f = 0;   /* the fine piece cum[f]..cum[f + 1] holding s */
	size_t seg = 0; /* the next control point whose span start is unset */
	for (size_t k = 0; k < n; k++) {
		double s = (double)k * out->ds;
		while (f + 1 < nfine && cum[f + 1] <= s)
			f++;
		while (seg < m && cum[seg * K] <= s)
			out->seg_start[seg++] = k;
		double piece = cum[f + 1] - cum[f];
		double frac = piece > 0.0 ? (s - cum[f]) / piece : 0.0;
		if (frac > 1.0)
			frac = 1.0;
		size_t i = f / K;
		out->pts[k] = trk_spline_eval(ctrl, m, i, ((double)(f % K) + frac) / K);
	}
	/* Spans too short to reach a sample past the last one start at n. */
	while (seg < m)
		out->seg_start[seg++] = n;
	trk_polyline_curvature(out->pts, n, out->curvature);
	free(cum);
	return SF_OK;
nomem:
	free(cum);
	trk_path_release(out);
	return sf_err_set(err, SF_ENOMEM, "spline: out of memory for %zu control points", m);
}
