/*
 * corners.c - see corners.h.
 *
 * Sampling follows spline.c: every piece (straight or corner curve) is cut
 * into fine steps of equal parameter, their chord lengths accumulated; a
 * sample's arc length k * ds is located in that table by one forward walk
 * and the piece evaluated again at the interpolated parameter, so every
 * sample lies on the curve itself.
 */
#include "corners.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A quadratic Bezier piece p0 -> p2 with control p1 (a straight has p1 at its middle). */
typedef struct piece {
	trk_vec2 p0, p1, p2;
	size_t steps; /* fine steps */
} piece;

typedef struct fine {
	size_t piece;
	double t0, t1; /* the step's parameter range on its piece */
	double s;      /* arc length at t0 */
} fine;

static trk_vec2 bezier(const piece *pc, double t)
{
	double a = (1 - t) * (1 - t), b = 2 * t * (1 - t), c = t * t;
	return (trk_vec2){ a * pc->p0.x + b * pc->p1.x + c * pc->p2.x,
			   a * pc->p0.y + b * pc->p1.y + c * pc->p2.y };
}

static double dist(trk_vec2 a, trk_vec2 b)
{
	double dx = b.x - a.x, dy = b.y - a.y;
	return sqrt(dx * dx + dy * dy);
}

static piece straight(trk_vec2 a, trk_vec2 b)
{
	return (piece){ a, { (a.x + b.x) / 2, (a.y + b.y) / 2 }, b, 1 };
}

/* The tangent length of corner k (see corners.h). */
static double tangent_length(double h_prev, double h_next, double cos_a, double tightness,
			     double max_curvature)
{
	double hi = h_prev < h_next ? h_prev : h_next;
	double c2 = (1 + cos_a) / 2; /* cos^2(a/2) */
	double s = sqrt((1 - cos_a) / 2 > 0 ? (1 - cos_a) / 2 : 0);
	double lo = s / (TRK_CORNER_MARGIN * max_curvature * c2);
	if (lo < 0.05 * hi)
		lo = 0.05 * hi;
	if (!(lo < hi))
		return hi;
	return hi - tightness * (hi - lo);
}

int trk_corners_sample(const trk_vec2 *v, size_t m, const double *tightness, double max_curvature,
		       double spacing, trk_path *out, sf_err *err)
{
	memset(out, 0, sizeof *out);
	if (!v || !tightness || m < 3)
		return sf_err_set(err, SF_EINVAL, "corners: need at least 3 vertices");
	if (!(spacing > 0) || !isfinite(spacing) || !(max_curvature > 0))
		return sf_err_set(err, SF_EINVAL, "corners: spacing and max_curvature must be > 0");
	piece *pcs = malloc(3 * m * sizeof *pcs);
	size_t *first = malloc(m * sizeof *first); /* segment k's first piece */
	fine *tab = NULL;
	size_t np = 0;
	int rc = SF_OK;
	if (!pcs || !first) {
		rc = sf_err_set(err, SF_ENOMEM, "corners: out of memory");
		goto done;
	}
	for (size_t k = 0; k < m; k++) {
		trk_vec2 a = v[(k + m - 1) % m], b = v[k], c = v[(k + 1) % m];
		double l1 = dist(a, b), l2 = dist(b, c);
		if (!(l1 > 0) || !(l2 > 0) || !isfinite(l1 + l2)) {
			rc = sf_err_set(err, SF_EINVAL, "corners: vertex %zu repeats a neighbour",
					k);
			goto done;
		}
		double t = tightness[k];
		if (!(t >= 0 && t <= 1)) {
			rc = sf_err_set(err, SF_EINVAL, "corners: tightness[%zu] %g outside 0..1",
					k, t);
			goto done;
		}
		trk_vec2 u1 = { (b.x - a.x) / l1, (b.y - a.y) / l1 };
		trk_vec2 u2 = { (c.x - b.x) / l2, (c.y - b.y) / l2 };
		double cos_a = u1.x * u2.x + u1.y * u2.y;
		if (cos_a < -1 + 1e-9) {
			rc = sf_err_set(err, SF_EINVAL, "corners: vertex %zu reverses the road", k);
			goto done;
		}
		double tl = tangent_length(l1 / 2, l2 / 2, cos_a, t, max_curvature);
		trk_vec2 mp = { (a.x + b.x) / 2, (a.y + b.y) / 2 };
		trk_vec2 mn = { (b.x + c.x) / 2, (b.y + c.y) / 2 };
		trk_vec2 pa = { b.x - tl * u1.x, b.y - tl * u1.y };
		trk_vec2 pb = { b.x + tl * u2.x, b.y + tl * u2.y };
		first[k] = np;
		if (dist(mp, pa) > 1e-9)
			pcs[np++] = straight(mp, pa);
		pcs[np++] = (piece){ pa, b, pb, TRK_CORNER_SUBSTEPS };
		if (dist(pb, mn) > 1e-9)
			pcs[np++] = straight(pb, mn);
	}
	size_t nf = 0;
	for (size_t i = 0; i < np; i++)
		nf += pcs[i].steps;
	if (!(tab = malloc((nf + 1) * sizeof *tab))) {
		rc = sf_err_set(err, SF_ENOMEM, "corners: out of memory");
		goto done;
	}
	double s = 0;
	size_t f = 0;
	for (size_t i = 0; i < np; i++) {
		trk_vec2 prev = pcs[i].p0;
		for (size_t j = 0; j < pcs[i].steps; j++) {
			double t0 = (double)j / (double)pcs[i].steps;
			double t1 = (double)(j + 1) / (double)pcs[i].steps;
			trk_vec2 q = bezier(&pcs[i], t1);
			tab[f++] = (fine){ i, t0, t1, s };
			s += dist(prev, q);
			prev = q;
		}
	}
	tab[f] = (fine){ np, 0, 0, s }; /* the end of the loop */
	double length = s;
	double nd = floor(length / spacing + 0.5);
	if (nd > (double)TRK_SPLINE_MAX_SAMPLES) {
		rc = sf_err_set(err, SF_EBUDGET, "corners: %.0f samples exceed the budget", nd);
		goto done;
	}
	size_t n = nd < 4 ? 4 : (size_t)nd;
	double ds = length / (double)n;
	out->pts = malloc(n * sizeof *out->pts);
	out->curvature = malloc(n * sizeof *out->curvature);
	out->seg_start = malloc(m * sizeof *out->seg_start);
	if (!out->pts || !out->curvature || !out->seg_start) {
		rc = sf_err_set(err, SF_ENOMEM, "corners: out of memory for %zu samples", n);
		goto done;
	}
	f = 0;
	for (size_t k = 0; k < n; k++) {
		double at = (double)k * ds;
		while (f + 1 < nf && tab[f + 1].s <= at)
			f++;
		double span = tab[f + 1].s - tab[f].s;
		double u = span > 0 ? (at - tab[f].s) / span : 0;
		if (u > 1)
			u = 1;
		const fine *e = &tab[f];
		out->pts[k] = bezier(&pcs[e->piece], e->t0 + u * (e->t1 - e->t0));
	}
	/* Segment k starts where its first piece does: tab holds each piece's
	 * first step at the running count of steps before it. */
	size_t step = 0, p = 0;
	for (size_t k = 0; k < m; k++) {
		while (p < first[k])
			step += pcs[p++].steps;
		double start = tab[step].s;
		size_t j = k == 0 ? 0 : (size_t)ceil(start / ds);
		out->seg_start[k] = j > n ? n : j;
	}
	trk_polyline_curvature(out->pts, n, out->curvature);
	out->n = n;
	out->ds = ds;
	out->length = (double)n * ds;
	out->nsegments = m;
done:
	if (rc)
		trk_path_release(out);
	free(tab);
	free(first);
	free(pcs);
	return rc;
}

/* The steepest closed step of z, max |z[(k+1) % n] - z[k]| / ds. */
static double steepest(const double *z, size_t n, double ds)
{
	double worst = 0;
	for (size_t k = 0; k < n; k++) {
		double d = fabs(z[(k + 1) % n] - z[k]) / ds;
		if (d > worst)
			worst = d;
	}
	return worst;
}

int trk_hills(const trk_path *path, const double *climb, double max_slope, double *z, sf_err *err)
{
	size_t n = path->n, m = path->nsegments;
	if (!climb || n < 2 || m < 1 || !(max_slope >= 0))
		return sf_err_set(err, SF_EINVAL, "hills: bad path or climbs");
	double total = 0, rise[64];
	if (m > sizeof rise / sizeof rise[0])
		return sf_err_set(err, SF_EINVAL, "hills: %zu segments (at most 64)", m);
	for (size_t k = 0; k < m; k++) {
		double c = climb[k] < -1 ? -1 : climb[k] > 1 ? 1 : climb[k];
		size_t a = path->seg_start[k], b = k + 1 < m ? path->seg_start[k + 1] : n;
		double len = (double)(b > a ? b - a : 0) * path->ds;
		rise[k] = c * max_slope * len / 1.5;
		total += rise[k];
	}
	/* Even out: segment k gives back its share, by length, of the total. */
	for (size_t k = 0; k < m; k++) {
		size_t a = path->seg_start[k], b = k + 1 < m ? path->seg_start[k + 1] : n;
		rise[k] -= total * (double)(b > a ? b - a : 0) / (double)n;
	}
	double base = 0;
	for (size_t k = 0; k < m; k++) {
		size_t a = path->seg_start[k], b = k + 1 < m ? path->seg_start[k + 1] : n;
		for (size_t j = a; j < b && j < n; j++) {
			double u = (double)(j - a) / (double)(b - a);
			z[j] = base + rise[k] * u * u * (3 - 2 * u);
		}
		base += rise[k];
	}
	/* Scale down as a whole if a step passes the cap (the evening out can
	 * steepen a climb a little); lowered by 2^-40 more per round for the
	 * rounding of the product, as trk_elevation does. */
	double worst = steepest(z, n, path->ds);
	if (worst > max_slope) {
		double f = max_slope / worst;
		for (int round = 0; round < 64; round++) {
			double *w = z;
			for (size_t j = 0; j < n; j++)
				w[j] *= f;
			if (steepest(z, n, path->ds) <= max_slope)
				return 0;
			f = 1.0 - 0x1p-40;
		}
		for (size_t j = 0; j < n; j++)
			z[j] = 0;
	}
	return 0;
}
