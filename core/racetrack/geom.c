/* geom.c - see geom.h. */
#include "geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- exact predicates (Shewchuk 1997, "Adaptive precision floating-point
 * arithmetic and fast robust geometric predicates"; public domain) ----
 *
 * Only the first (static-filter) stage and the exact fallback are kept: the
 * filter answers nearly always, and the fallback's cost (a few hundred
 * two-sums) does not matter at the sizes we triangulate. Expansions are
 * nonoverlapping and sorted by increasing magnitude, so the sign of a sum is
 * the sign of its last nonzero component. Correctness needs IEEE doubles with
 * round-to-nearest and no contraction into FMA (ISO C mode keeps GCC at
 * -ffp-contract=off), and no overflow: coordinates far below 1e75.
 */

#define EPS 0x1p-53          /* half an ulp of 1.0 */
#define SPLITTER 134217729.0 /* 2^27 + 1 */
#define CCW_BOUND ((3.0 + 16.0 * EPS) * EPS)
#define ICC_BOUND ((10.0 + 96.0 * EPS) * EPS)
/* The longest expansion an exact in-circle builds: 48 monomials of 8 terms. */
#define EXP_MAX 400

static void two_sum(double a, double b, double *x, double *y)
{
	double s = a + b, bv = s - a, av = s - bv;
	*x = s;
	*y = (a - av) + (b - bv);
}

static void split(double a, double *hi, double *lo)
{
	double c = SPLITTER * a, abig = c - a;
	*hi = c - abig;
	*lo = a - *hi;
}

static void two_product(double a, double b, double *x, double *y)
{
	double p = a * b, ahi, alo, bhi, blo;
	split(a, &ahi, &alo);
	split(b, &bhi, &blo);
	double e1 = p - ahi * bhi, e2 = e1 - alo * bhi, e3 = e2 - ahi * blo;
	*x = p;
	*y = alo * blo - e3;
}

/* h = e + b (h may alias e; capacity elen + 1). Returns h's length. */
static size_t grow_expansion(size_t elen, const double *e, double b, double *h)
{
	double q = b, hh;
	size_t n = 0;
	for (size_t i = 0; i < elen; i++) {
		two_sum(q, e[i], &q, &hh);
		if (hh != 0.0)
			h[n++] = hh;
	}
	if (q != 0.0 || n == 0)
		h[n++] = q;
	return n;
}

/* h = e * b (capacity 2 elen). Returns h's length. */
static size_t scale_expansion(size_t elen, const double *e, double b, double *h)
{
	double q, hh, p1, p0, sum;
	size_t n = 0;
	two_product(e[0], b, &q, &hh);
	if (hh != 0.0)
		h[n++] = hh;
	for (size_t i = 1; i < elen; i++) {
		two_product(e[i], b, &p1, &p0);
		two_sum(q, p0, &sum, &hh);
		if (hh != 0.0)
			h[n++] = hh;
		two_sum(p1, sum, &q, &hh); /* |p1| >= |sum|: a two-sum is exact anyway */
		if (hh != 0.0)
			h[n++] = hh;
	}
	if (q != 0.0 || n == 0)
		h[n++] = q;
	return n;
}

/* acc += the exact product of f[0..nf-1] (nf <= 4). */
static void add_product(double *acc, size_t *acclen, const double *f, int nf)
{
	double a[8], b[8];
	size_t n = 1;
	a[0] = f[0];
	for (int k = 1; k < nf; k++) {
		n = scale_expansion(n, a, f[k], b);
		memcpy(a, b, n * sizeof a[0]);
	}
	for (size_t i = 0; i < n; i++)
		*acclen = grow_expansion(*acclen, acc, a[i], acc);
}

static int expansion_sign(const double *e, size_t n)
{
	double top = e[n - 1];
	return (top > 0) - (top < 0);
}

/* Exact sign of orient2d: the six monomials of (a-c) x (b-c). */
static int orient_exact(trk_vec2 a, trk_vec2 b, trk_vec2 c)
{
	double acc[EXP_MAX];
	size_t n = 1;
	acc[0] = 0.0;
	const double terms[6][2] = {
		{ a.x, b.y },  { -a.x, c.y }, { -c.x, b.y },
		{ -a.y, b.x }, { a.y, c.x },  { c.y, b.x },
	};
	for (int i = 0; i < 6; i++)
		add_product(acc, &n, terms[i], 2);
	return expansion_sign(acc, n);
}

/* +1 when a, b, c turn counter-clockwise, -1 clockwise, 0 collinear (exact). */
static int orient(trk_vec2 a, trk_vec2 b, trk_vec2 c)
{
	double l = (a.x - c.x) * (b.y - c.y), r = (a.y - c.y) * (b.x - c.x);
	double det = l - r, bound = CCW_BOUND * (fabs(l) + fabs(r));
	if (det > bound || -det > bound)
		return det > 0 ? 1 : -1;
	return orient_exact(a, b, c);
}

/*
 * Exact sign of the lifted determinant |x y x^2+y^2 1| over rows a, b, c, d,
 * expanded along the column of ones into four 3x3 minors, each a sum of six
 * products x_p y_q w_r with w = x^2 + y^2 split into two monomials.
 */
static int incircle_exact(trk_vec2 a, trk_vec2 b, trk_vec2 c, trk_vec2 d)
{
	const trk_vec2 rows[4] = { a, b, c, d };
	/* det3(p,q,r) = sum over permutations (i,j,k) of sign * x_i y_j w_k. */
	static const int perm[6][4] = {
		{ 0, 1, 2, 1 }, { 0, 2, 1, -1 }, { 1, 0, 2, -1 },
		{ 1, 2, 0, 1 }, { 2, 0, 1, 1 },  { 2, 1, 0, -1 },
	};
	double acc[EXP_MAX];
	size_t n = 1;
	acc[0] = 0.0;
	for (int skip = 0; skip < 4; skip++) {
		trk_vec2 m[3];
		for (int i = 0, k = 0; i < 4; i++)
			if (i != skip)
				m[k++] = rows[i];
		/* Cofactor sign of row `skip`, column 4: (-1)^(skip + 3). */
		double sign = (skip % 2 == 0) ? -1.0 : 1.0;
		for (int p = 0; p < 6; p++) {
			double s = sign * perm[p][3];
			trk_vec2 pi = m[perm[p][0]], pj = m[perm[p][1]], pk = m[perm[p][2]];
			double fx[4] = { s * pi.x, pj.y, pk.x, pk.x };
			double fy[4] = { s * pi.x, pj.y, pk.y, pk.y };
			add_product(acc, &n, fx, 4);
			add_product(acc, &n, fy, 4);
		}
	}
	return expansion_sign(acc, n);
}

/* +1 when d is strictly inside the circle through counter-clockwise a, b, c;
 * 0 on it; -1 outside (exact). */
static int incircle(trk_vec2 a, trk_vec2 b, trk_vec2 c, trk_vec2 d)
{
	double adx = a.x - d.x, ady = a.y - d.y, bdx = b.x - d.x, bdy = b.y - d.y;
	double cdx = c.x - d.x, cdy = c.y - d.y;
	double bc = bdx * cdy, cb = cdx * bdy, ca = cdx * ady, ac = adx * cdy;
	double ab = adx * bdy, ba = bdx * ady;
	double al = adx * adx + ady * ady, bl = bdx * bdx + bdy * bdy, cl = cdx * cdx + cdy * cdy;
	double det = al * (bc - cb) + bl * (ca - ac) + cl * (ab - ba);
	double perm = (fabs(bc) + fabs(cb)) * al + (fabs(ca) + fabs(ac)) * bl +
		      (fabs(ab) + fabs(ba)) * cl;
	double bound = ICC_BOUND * perm;
	if (det > bound || -det > bound)
		return det > 0 ? 1 : -1;
	return incircle_exact(a, b, c, d);
}

/* ---- random points ---- */

int trk_points_random(rng *r, size_t n, double width, double height, double min_distance,
		      trk_vec2 *out, sf_err *err)
{
	if (n < 1 || n > TRK_MAX_POINTS)
		return sf_err_set(err, SF_EINVAL, "point count must be in 1..%d (got %zu)",
				  TRK_MAX_POINTS, n);
	if (!(isfinite(width) && width > 0) || !(isfinite(height) && height > 0))
		return sf_err_set(err, SF_EINVAL,
				  "width and height must be finite and > 0 (got %g x %g)", width,
				  height);
	if (!(isfinite(min_distance) && min_distance >= 0))
		return sf_err_set(err, SF_EINVAL, "min_distance must be finite and >= 0 (got %g)",
				  min_distance);
	double d2 = min_distance * min_distance;
	size_t placed = 0, budget = 1000 + 100 * n;
	for (size_t draw = 0; draw < budget && placed < n; draw++) {
		trk_vec2 p = { rng_unit(r) * width, rng_unit(r) * height };
		size_t i = 0;
		for (; i < placed; i++) {
			double dx = out[i].x - p.x, dy = out[i].y - p.y;
			if (dx * dx + dy * dy < d2)
				break;
		}
		if (i == placed)
			out[placed++] = p;
	}
	if (placed < n)
		return sf_err_set(err, SF_ERANGE,
				  "only %zu of %zu points fit %g apart in %g x %g after %zu draws",
				  placed, n, min_distance, width, height, budget);
	return 0;
}

/* ---- Bowyer-Watson ---- */

typedef struct tri3 {
	size_t v[3];
} tri3;

typedef struct hedge { /* a directed edge a -> b of triangle t, opposite its corner j */
	size_t a, b, t;
	int j;
} hedge;

typedef struct builder {
	const trk_vec2 *pts; /* n points, then the 3 super-triangle corners */
	size_t n;
	tri3 *tris;
	size_t ntris, cap;
	hedge *edges; /* scratch: the cavity's edges */
	size_t *bad;  /* scratch: the cavity's triangles */
} builder;

static int push_tri(builder *b, size_t v0, size_t v1, size_t v2)
{
	if (b->ntris == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		tri3 *t = realloc(b->tris, cap * sizeof *t);
		if (!t)
			return SF_ENOMEM;
		b->tris = t;
		b->cap = cap;
	}
	b->tris[b->ntris++] = (tri3){ { v0, v1, v2 } };
	return 0;
}

static int tri_conflicts(const builder *b, const tri3 *t, trk_vec2 p)
{
	return incircle(b->pts[t->v[0]], b->pts[t->v[1]], b->pts[t->v[2]], p) > 0;
}

/*
 * Inserts point p: the cavity is every triangle whose open circumdisc holds
 * p (with exact predicates it is star-shaped around p and contains the
 * triangle p lies in); its boundary edges, those not shared by two cavity
 * triangles, are joined to p. Scratch arrays hold at most every triangle.
 */
static int bw_insert(builder *b, size_t p)
{
	size_t nbad = 0;
	for (size_t t = 0; t < b->ntris; t++)
		if (tri_conflicts(b, &b->tris[t], b->pts[p]))
			b->bad[nbad++] = t;
	size_t nedges = 0;
	for (size_t i = 0; i < nbad; i++) {
		const tri3 *t = &b->tris[b->bad[i]];
		for (int j = 0; j < 3; j++)
			b->edges[nedges++] = (hedge){ t->v[j], t->v[(j + 1) % 3], 0, 0 };
	}
	/* Remove the cavity, highest index first so swaps never move a bad one. */
	for (size_t i = nbad; i-- > 0;)
		b->tris[b->bad[i]] = b->tris[--b->ntris];
	for (size_t i = 0; i < nedges; i++) {
		size_t k = 0;
		for (; k < nedges; k++)
			if (b->edges[k].a == b->edges[i].b && b->edges[k].b == b->edges[i].a)
				break;
		if (k == nedges && push_tri(b, b->edges[i].a, b->edges[i].b, p))
			return SF_ENOMEM;
	}
	return 0;
}

static int hedge_cmp(const void *x, const void *y)
{
	const hedge *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return 0;
}

/* The directed edges of all triangles, sorted by (a, b). */
static hedge *half_edges(const tri3 *tris, size_t ntris)
{
	hedge *h = malloc((3 * ntris + 1) * sizeof *h);
	if (!h)
		return NULL;
	for (size_t t = 0; t < ntris; t++)
		for (int j = 0; j < 3; j++)
			h[3 * t + j] =
				(hedge){ tris[t].v[(j + 1) % 3], tris[t].v[(j + 2) % 3], t, j };
	qsort(h, 3 * ntris, sizeof *h, hedge_cmp);
	return h;
}

static const hedge *find_hedge(const hedge *h, size_t n, size_t a, size_t b)
{
	hedge key = { a, b, 0, 0 };
	return bsearch(&key, h, n, sizeof *h, hedge_cmp);
}

/*
 * Adds one missing hull triangle, if any: a boundary edge a -> b with a point
 * strictly to its right is not on the hull, so the Delaunay triangle beyond
 * it is missing; gift-wrapping finds its apex c (the point right of a -> b
 * whose circle through b, a, c holds no other such point; circles through a
 * and b are nested on that side, so one scan suffices; ties keep the lowest
 * index). Sets *added to 1 when it added a triangle.
 */
static int repair_once(builder *b, int *added)
{
	*added = 0;
	hedge *h = half_edges(b->tris, b->ntris);
	if (!h)
		return SF_ENOMEM;
	size_t nh = 3 * b->ntris;
	for (size_t i = 0; i < nh && !*added; i++) {
		size_t a = h[i].a, e = h[i].b;
		if (find_hedge(h, nh, e, a))
			continue;
		size_t c = TRK_NONE;
		for (size_t q = 0; q < b->n; q++) {
			if (orient(b->pts[a], b->pts[e], b->pts[q]) >= 0)
				continue;
			if (c == TRK_NONE ||
			    incircle(b->pts[e], b->pts[a], b->pts[c], b->pts[q]) > 0)
				c = q;
		}
		if (c != TRK_NONE) {
			if (push_tri(b, e, a, c)) {
				free(h);
				return SF_ENOMEM;
			}
			*added = 1;
		}
	}
	free(h);
	return 0;
}

/*
 * When every triangle was lost (all points in nearly flat convex position),
 * starts the repair from one Delaunay triangle: the hull edge a -> b from the
 * lexicographically lowest point a (Jarvis: every other point left of it, or
 * on it beyond b), and the apex c left of it whose circle through a, b holds
 * no other point. Returns SF_ERANGE when no point is left of a -> b: the
 * points are all collinear.
 */
static int seed_triangle(builder *b)
{
	const trk_vec2 *P = b->pts;
	size_t a = 0, e = TRK_NONE, c = TRK_NONE;
	for (size_t q = 1; q < b->n; q++)
		if (P[q].x < P[a].x || (P[q].x == P[a].x && P[q].y < P[a].y))
			a = q;
	for (size_t q = 0; q < b->n; q++) {
		if (q == a)
			continue;
		int o = e == TRK_NONE ? -1 : orient(P[a], P[e], P[q]);
		/* Collinear points lie on one side of a: the nearer has the smaller coordinates. */
		if (o < 0 || (o == 0 && (P[q].x < P[e].x || (P[q].x == P[e].x && P[q].y < P[e].y))))
			e = q;
	}
	for (size_t q = 0; q < b->n; q++)
		if (orient(P[a], P[e], P[q]) > 0 &&
		    (c == TRK_NONE || incircle(P[a], P[e], P[c], P[q]) > 0))
			c = q;
	if (c == TRK_NONE)
		return SF_ERANGE;
	return push_tri(b, a, e, c) ? SF_ENOMEM : 0;
}

static int point_cmp(const void *x, const void *y)
{
	const trk_vec2 *a = x, *b = y;
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	if (a->y != b->y)
		return a->y < b->y ? -1 : 1;
	return 0;
}

/* SF_EINVAL naming the first pair of equal points, or 0. */
static int check_distinct(const trk_vec2 *points, size_t n, sf_err *err)
{
	trk_vec2 *s = malloc(n * sizeof *s);
	if (!s)
		return sf_err_set(err, SF_ENOMEM, "out of memory sorting %zu points", n);
	memcpy(s, points, n * sizeof *s);
	qsort(s, n, sizeof *s, point_cmp);
	int rc = 0;
	for (size_t i = 1; i < n && !rc; i++)
		if (s[i].x == s[i - 1].x && s[i].y == s[i - 1].y) {
			size_t first = TRK_NONE, second = TRK_NONE;
			for (size_t k = 0; k < n; k++)
				if (points[k].x == s[i].x && points[k].y == s[i].y) {
					if (first == TRK_NONE)
						first = k;
					else if (second == TRK_NONE)
						second = k;
				}
			rc = sf_err_set(err, SF_EINVAL, "points %zu and %zu coincide at (%g, %g)",
					first, second, s[i].x, s[i].y);
		}
	free(s);
	return rc;
}

/* The circumcentre of a, b, c, computed relative to a for accuracy. */
static trk_vec2 circumcentre(trk_vec2 a, trk_vec2 b, trk_vec2 c)
{
	double bx = b.x - a.x, by = b.y - a.y, cx = c.x - a.x, cy = c.y - a.y;
	double bl = bx * bx + by * by, cl = cx * cx + cy * cy, d = 2.0 * (bx * cy - by * cx);
	return (trk_vec2){ a.x + (cy * bl - by * cl) / d, a.y + (bx * cl - cx * bl) / d };
}

trk_delaunay *trk_delaunay_new(const trk_vec2 *points, size_t n, sf_err *err)
{
	if (n < 3 || n > TRK_MAX_POINTS) {
		sf_err_set(err, SF_EINVAL, "point count must be in 3..%d (got %zu)", TRK_MAX_POINTS,
			   n);
		return NULL;
	}
	double minx = points[0].x, maxx = minx, miny = points[0].y, maxy = miny;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(points[i].x) || !isfinite(points[i].y) || fabs(points[i].x) > 1e30 ||
		    fabs(points[i].y) > 1e30) {
			sf_err_set(err, SF_EINVAL,
				   "point %zu must have finite coordinates below 1e30", i);
			return NULL;
		}
		minx = fmin(minx, points[i].x);
		maxx = fmax(maxx, points[i].x);
		miny = fmin(miny, points[i].y);
		maxy = fmax(maxy, points[i].y);
	}
	if (check_distinct(points, n, err))
		return NULL;

	trk_delaunay *dt = calloc(1, sizeof *dt);
	trk_vec2 *pts = malloc((n + 3) * sizeof *pts);
	builder b = { .pts = pts, .n = n };
	hedge *h = NULL;
	size_t maxtris = 2 * (n + 3);
	b.edges = malloc(3 * maxtris * sizeof *b.edges);
	b.bad = malloc(maxtris * sizeof *b.bad);
	if (!dt || !pts || !b.edges || !b.bad)
		goto nomem;
	memcpy(pts, points, n * sizeof *pts);
	/*
	 * The super-triangle contains the square of side 2m around the centre
	 * with a wide margin: its sides are ~40 m from every point. Hull
	 * triangles with circumradius beyond that may be lost; repair_once()
	 * restores them.
	 */
	double cx = 0.5 * (minx + maxx), cy = 0.5 * (miny + maxy);
	double m = 64.0 * (fmax(maxx - minx, maxy - miny) + 1.0);
	pts[n] = (trk_vec2){ cx - 100.0 * m, cy - 50.0 * m };
	pts[n + 1] = (trk_vec2){ cx + 100.0 * m, cy - 50.0 * m };
	pts[n + 2] = (trk_vec2){ cx, cy + 100.0 * m };
	if (push_tri(&b, n, n + 1, n + 2))
		goto nomem;
	for (size_t p = 0; p < n; p++)
		if (bw_insert(&b, p))
			goto nomem;
	size_t kept = 0;
	for (size_t t = 0; t < b.ntris; t++)
		if (b.tris[t].v[0] < n && b.tris[t].v[1] < n && b.tris[t].v[2] < n)
			b.tris[kept++] = b.tris[t];
	b.ntris = kept;
	if (kept == 0) {
		int rc = seed_triangle(&b);
		if (rc == SF_ENOMEM)
			goto nomem;
		if (rc) {
			sf_err_set(err, SF_ERANGE, "all %zu points are collinear: no triangle", n);
			goto fail;
		}
	}
	for (int added = 1; added;) {
		if (repair_once(&b, &added))
			goto nomem;
		if (b.ntris > 2 * n) {
			sf_err_set(err, SF_ERANGE, "triangulation of %zu points did not close", n);
			goto fail;
		}
	}

	dt->npoints = n;
	dt->points = pts;
	pts = NULL;
	dt->ntris = b.ntris;
	dt->tris = malloc(b.ntris * sizeof *dt->tris);
	h = half_edges(b.tris, b.ntris);
	if (!dt->tris || !h)
		goto nomem;
	for (size_t t = 0; t < b.ntris; t++) {
		trk_tri *o = &dt->tris[t];
		memcpy(o->v, b.tris[t].v, sizeof o->v);
		for (int j = 0; j < 3; j++) {
			const hedge *r =
				find_hedge(h, 3 * b.ntris, o->v[(j + 2) % 3], o->v[(j + 1) % 3]);
			o->nb[j] = r ? r->t : TRK_NONE;
		}
		o->centre =
			circumcentre(dt->points[o->v[0]], dt->points[o->v[1]], dt->points[o->v[2]]);
	}
	free(h);
	free(b.tris);
	free(b.edges);
	free(b.bad);
	return dt;
nomem:
	sf_err_set(err, SF_ENOMEM, "out of memory triangulating %zu points", n);
fail:
	free(h);
	free(pts);
	free(b.tris);
	free(b.edges);
	free(b.bad);
	trk_delaunay_free(dt);
	return NULL;
}

void trk_delaunay_free(trk_delaunay *dt)
{
	if (!dt)
		return;
	free(dt->points);
	free(dt->tris);
	free(dt);
}

/* ---- Voronoi ---- */

/*
 * Liang-Barsky: clips the segment p + t (q - p), t in [0, 1], to [0, w] x
 * [0, h]. Returns 0 when nothing is left, else 1 with the kept range
 * [*t0, *t1].
 */
static int clip(trk_vec2 p, trk_vec2 q, double w, double h, double *t0, double *t1)
{
	double dx = q.x - p.x, dy = q.y - p.y;
	double pk[4] = { -dx, dx, -dy, dy }, qk[4] = { p.x, w - p.x, p.y, h - p.y };
	*t0 = 0.0;
	*t1 = 1.0;
	for (int k = 0; k < 4; k++) {
		if (pk[k] == 0.0) {
			if (qk[k] < 0.0)
				return 0;
			continue;
		}
		double t = qk[k] / pk[k];
		if (pk[k] < 0.0) {
			if (t > *t1)
				return 0;
			if (t > *t0)
				*t0 = t;
		} else {
			if (t < *t0)
				return 0;
			if (t < *t1)
				*t1 = t;
		}
	}
	return *t0 < *t1;
}

static trk_vec2 clamp_rect(trk_vec2 p, double w, double h)
{
	return (trk_vec2){ fmin(fmax(p.x, 0.0), w), fmin(fmax(p.y, 0.0), h) };
}

size_t trk_vedge_other(const trk_vedge *e, size_t v)
{
	return e->a == v ? e->b : e->a;
}

trk_voronoi *trk_voronoi_new(const trk_delaunay *dt, double width, double height, sf_err *err)
{
	if (!(isfinite(width) && width > 0) || !(isfinite(height) && height > 0)) {
		sf_err_set(err, SF_EINVAL, "width and height must be finite and > 0 (got %g x %g)",
			   width, height);
		return NULL;
	}
	size_t T = dt->ntris, maxe = 3 * T / 2 + 1;
	trk_voronoi *vd = calloc(1, sizeof *vd);
	size_t *tri_vertex = malloc((T + 1) * sizeof *tri_vertex);
	if (!vd || !tri_vertex)
		goto nomem;
	vd->width = width;
	vd->height = height;
	/* At most one vertex per triangle plus two border vertices per edge. */
	vd->vertices = malloc((T + 2 * maxe) * sizeof *vd->vertices);
	vd->edges = malloc(maxe * sizeof *vd->edges);
	if (!vd->vertices || !vd->edges)
		goto nomem;
	for (size_t t = 0; t < T; t++)
		tri_vertex[t] = TRK_NONE;
	for (size_t t = 0; t < T; t++) {
		const trk_tri *tr = &dt->tris[t];
		for (int j = 0; j < 3; j++) {
			size_t u = tr->nb[j];
			if (u == TRK_NONE || u < t)
				continue; /* a hull edge, or seen from u already */
			trk_vec2 p = tr->centre, q = dt->tris[u].centre;
			double t0, t1;
			if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(q.x) || !isfinite(q.y) ||
			    !clip(p, q, width, height, &t0, &t1))
				continue;
			size_t ends[2], tris[2] = { t, u };
			double ts[2] = { t0, t1 };
			int cut = 0;
			for (int k = 0; k < 2; k++) {
				int kept = k == 0 ? t0 == 0.0 : t1 == 1.0;
				if (kept && tri_vertex[tris[k]] != TRK_NONE) {
					ends[k] = tri_vertex[tris[k]];
					continue;
				}
				trk_vvertex *v = &vd->vertices[vd->nvertices];
				if (kept) {
					*v = (trk_vvertex){ k == 0 ? p : q, tris[k], 0 };
					tri_vertex[tris[k]] = vd->nvertices;
				} else {
					trk_vec2 c = { p.x + ts[k] * (q.x - p.x),
						       p.y + ts[k] * (q.y - p.y) };
					*v = (trk_vvertex){ clamp_rect(c, width, height), TRK_NONE,
							    1 };
					cut = 1;
				}
				ends[k] = vd->nvertices++;
			}
			vd->edges[vd->nedges++] = (trk_vedge){
				ends[0], ends[1], { tr->v[(j + 1) % 3], tr->v[(j + 2) % 3] }, cut
			};
		}
	}
	vd->adj_start = calloc(vd->nvertices + 1, sizeof *vd->adj_start);
	vd->adj = malloc((2 * vd->nedges + 1) * sizeof *vd->adj);
	if (!vd->adj_start || !vd->adj)
		goto nomem;
	for (size_t e = 0; e < vd->nedges; e++) {
		vd->adj_start[vd->edges[e].a + 1]++;
		vd->adj_start[vd->edges[e].b + 1]++;
	}
	for (size_t v = 0; v < vd->nvertices; v++)
		vd->adj_start[v + 1] += vd->adj_start[v];
	/* tri_vertex is free now: reuse it as the fill cursor. */
	free(tri_vertex);
	tri_vertex = malloc((vd->nvertices + 1) * sizeof *tri_vertex);
	if (!tri_vertex)
		goto nomem;
	memcpy(tri_vertex, vd->adj_start, vd->nvertices * sizeof *tri_vertex);
	for (size_t e = 0; e < vd->nedges; e++) {
		vd->adj[tri_vertex[vd->edges[e].a]++] = e;
		vd->adj[tri_vertex[vd->edges[e].b]++] = e;
	}
	free(tri_vertex);
	return vd;
nomem:
	sf_err_set(err, SF_ENOMEM, "out of memory building the Voronoi diagram of %zu triangles",
		   dt->ntris);
	free(tri_vertex);
	trk_voronoi_free(vd);
	return NULL;
}

void trk_voronoi_free(trk_voronoi *vd)
{
	if (!vd)
		return;
	free(vd->vertices);
	free(vd->edges);
	free(vd->adj_start);
	free(vd->adj);
	free(vd);
}
