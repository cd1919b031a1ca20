/*
 * test_racetrack_geom.c - the racetrack geometry (core/racetrack/geom.h,
 * loop.h): seeded points, the Delaunay triangulation, its clipped Voronoi
 * dual and the circuit walked on it.
 *
 * Every property is checked with code of the test's own (a monotone-chain
 * convex hull, a plain double in-circle determinant, a segment intersection
 * test), never with the module's predicates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "racetrack/geom.h"
#include "racetrack/loop.h"

/* ---- independent geometry ---- */

static double cross(trk_vec2 o, trk_vec2 a, trk_vec2 b)
{
	return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

static double dist(trk_vec2 a, trk_vec2 b)
{
	return hypot(a.x - b.x, a.y - b.y);
}

static int cmp_xy(const void *x, const void *y)
{
	const trk_vec2 *a = x, *b = y;
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	return (a->y > b->y) - (a->y < b->y);
}

/*
 * Andrew's monotone chain, keeping collinear boundary points (a pop only on
 * a strict right turn), since every point on the hull's boundary counts in
 * 2n - 2 - h. Returns h and the hull's area. Exact for the inputs used here
 * (random doubles, whose collinear triples have probability zero, and small
 * integer grids).
 */
static size_t hull(const trk_vec2 *pts, size_t n, double *area)
{
	trk_vec2 *s = malloc(n * sizeof *s), *h = malloc(2 * n * sizeof *h);
	assert_non_null(s);
	assert_non_null(h);
	memcpy(s, pts, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_xy);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		while (k >= 2 && cross(h[k - 2], h[k - 1], s[i]) < 0)
			k--;
		h[k++] = s[i];
	}
	for (size_t i = n - 1, lo = k + 1; i-- > 0;) {
		while (k >= lo && cross(h[k - 2], h[k - 1], s[i]) < 0)
			k--;
		h[k++] = s[i];
	}
	k--; /* the first point closes the chain */
	double a = 0;
	for (size_t i = 0; i < k; i++)
		a += h[i].x * h[(i + 1) % k].y - h[(i + 1) % k].x * h[i].y;
	*area = 0.5 * a;
	free(s);
	free(h);
	return k;
}

/* Whether closed segments pq and rs share a point (collinear overlap included). */
static int on_segment(trk_vec2 p, trk_vec2 q, trk_vec2 r)
{
	return fmin(p.x, q.x) <= r.x && r.x <= fmax(p.x, q.x) && fmin(p.y, q.y) <= r.y &&
	       r.y <= fmax(p.y, q.y);
}

static int segments_meet(trk_vec2 p, trk_vec2 q, trk_vec2 r, trk_vec2 s)
{
	double d1 = cross(r, s, p), d2 = cross(r, s, q), d3 = cross(p, q, r), d4 = cross(p, q, s);
	if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) &&
	    ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
		return 1;
	return (d1 == 0 && on_segment(r, s, p)) || (d2 == 0 && on_segment(r, s, q)) ||
	       (d3 == 0 && on_segment(p, q, r)) || (d4 == 0 && on_segment(p, q, s));
}

/* ---- fixtures ---- */

typedef struct scene {
	size_t n;
	double w, h;
	trk_vec2 *pts;
	trk_delaunay *dt;
	trk_voronoi *vd;
} scene;

static void scene_make(scene *sc, uint64_t seed, size_t n, double w, double h, double mind)
{
	sf_err err = { 0 };
	rng r;
	rng_seed(&r, seed);
	sc->n = n;
	sc->w = w;
	sc->h = h;
	sc->pts = malloc(n * sizeof *sc->pts);
	assert_non_null(sc->pts);
	if (trk_points_random(&r, n, w, h, mind, sc->pts, &err))
		fail_msg("points (seed %llu, n %zu): %s", (unsigned long long)seed, n, err.msg);
	sc->dt = trk_delaunay_new(sc->pts, n, &err);
	if (!sc->dt)
		fail_msg("delaunay (seed %llu, n %zu): %s", (unsigned long long)seed, n, err.msg);
	sc->vd = trk_voronoi_new(sc->dt, w, h, &err);
	if (!sc->vd)
		fail_msg("voronoi (seed %llu, n %zu): %s", (unsigned long long)seed, n, err.msg);
}

static void scene_free(scene *sc)
{
	trk_voronoi_free(sc->vd);
	trk_delaunay_free(sc->dt);
	free(sc->pts);
}

/* The seeds and sizes every property runs over. */
static const size_t SIZES[] = { 3, 4, 5, 10, 30, 100, 300 };
#define NSEEDS 12

/* ---- Delaunay ---- */

/*
 * Every triangle is counter-clockwise, its neighbours are symmetric, no point
 * lies inside its circumcircle, there are 2n - 2 - h of them and they tile
 * the hull. The in-circle determinant is evaluated plainly in double
 * relative to the tested point; its rounding error is below ~1e-15 times the
 * permanent (the sum of the absolute values of its terms; Shewchuk's bound
 * is 1.1e-15), so a value above 1e-12 times the permanent is a real
 * violation, not rounding, while an exactly cocircular point (a grid) gives
 * a value within the tolerance.
 */
static void check_delaunay(const trk_delaunay *dt, const trk_vec2 *pts, size_t n)
{
	assert_int_equal(dt->npoints, n);
	assert_memory_equal(dt->points, pts, n * sizeof *pts);
	double harea, tarea = 0;
	size_t h = hull(pts, n, &harea);
	if (dt->ntris != 2 * n - 2 - h)
		fail_msg("%zu points, %zu on the hull: %zu triangles, expected %zu", n, h,
			 dt->ntris, 2 * n - 2 - h);
	for (size_t t = 0; t < dt->ntris; t++) {
		const trk_tri *tr = &dt->tris[t];
		trk_vec2 a = pts[tr->v[0]], b = pts[tr->v[1]], c = pts[tr->v[2]];
		double area2 = cross(a, b, c);
		assert_true(area2 > 0);
		tarea += 0.5 * area2;
		for (int j = 0; j < 3; j++) {
			size_t u = tr->nb[j];
			if (u == TRK_NONE)
				continue;
			assert_true(u < dt->ntris);
			int back = 0;
			for (int k = 0; k < 3; k++)
				back += dt->tris[u].nb[k] == t;
			assert_int_equal(back, 1);
		}
		for (size_t q = 0; q < n; q++) {
			if (q == tr->v[0] || q == tr->v[1] || q == tr->v[2])
				continue;
			trk_vec2 d = pts[q];
			double adx = a.x - d.x, ady = a.y - d.y, bdx = b.x - d.x, bdy = b.y - d.y;
			double cdx = c.x - d.x, cdy = c.y - d.y;
			double al = adx * adx + ady * ady, bl = bdx * bdx + bdy * bdy;
			double cl = cdx * cdx + cdy * cdy;
			double t1 = al * (bdx * cdy - cdx * bdy), t2 = bl * (cdx * ady - adx * cdy);
			double t3 = cl * (adx * bdy - bdx * ady);
			double perm = al * (fabs(bdx * cdy) + fabs(cdx * bdy)) +
				      bl * (fabs(cdx * ady) + fabs(adx * cdy)) +
				      cl * (fabs(adx * bdy) + fabs(bdx * ady));
			if (t1 + t2 + t3 > 1e-12 * perm)
				fail_msg("point %zu inside the circumcircle of triangle %zu", q, t);
		}
	}
	if (fabs(tarea - harea) > 1e-9 * harea)
		fail_msg("triangles cover %.17g, the hull %.17g", tarea, harea);
}

static void test_delaunay_random(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++)
		for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
			scene sc;
			scene_make(&sc, seed * 7919 + SIZES[s], SIZES[s], 300, 200, 0);
			check_delaunay(sc.dt, sc.pts, sc.n);
			scene_free(&sc);
		}
}

/* Exactly cocircular (every grid square) and collinear hull points. */
static void test_delaunay_grid(void **state)
{
	(void)state;
	static const double scales[] = { 1.0, 0.1, 3.7 };
	for (size_t k = 0; k < 3; k++)
		for (size_t side = 2; side <= 9; side++) {
			size_t n = side * side;
			trk_vec2 *pts = malloc(n * sizeof *pts);
			assert_non_null(pts);
			/* A shuffled order, so insertion is not row by row. */
			for (size_t i = 0; i < n; i++) {
				size_t j = (i * 7 + 3) % n; /* 7 is prime to every n here but 49 */
				if (side == 7)
					j = (i * 5 + 3) % n;
				pts[i] = (trk_vec2){ (double)(j % side) * scales[k],
						     (double)(j / side) * scales[k] };
			}
			sf_err err = { 0 };
			trk_delaunay *dt = trk_delaunay_new(pts, n, &err);
			if (!dt)
				fail_msg("grid %zu: %s", side, err.msg);
			/* A grid's hull holds 4 (side - 1) points. */
			assert_int_equal(dt->ntris, 2 * n - 2 - 4 * (side - 1));
			check_delaunay(dt, pts, n);
			trk_delaunay_free(dt);
			free(pts);
		}
}

/*
 * Points on a nearly flat convex arc, all on the hull: every Delaunay
 * triangle's circumcircle (radius up to ~5e5) is far larger than the
 * super-triangle, so each is lost by Bowyer-Watson and restored by the
 * gift-wrapping repair. With an apex above the arc the fan triangles are
 * small and nothing is lost; both must give 2n - 2 - h triangles.
 */
static void test_delaunay_flat_hull(void **state)
{
	(void)state;
	for (int apex = 0; apex <= 1; apex++)
		for (int span = 4; span <= 40; span += 6) {
			trk_vec2 pts[42];
			size_t n = 0;
			for (int i = 0; i <= span; i++)
				pts[n++] =
					(trk_vec2){ i, 1e-6 * (i - span / 2.0) * (i - span / 2.0) };
			if (apex)
				pts[n++] = (trk_vec2){ span / 2.0, 10 };
			sf_err err = { 0 };
			trk_delaunay *dt = trk_delaunay_new(pts, n, &err);
			if (!dt)
				fail_msg("span %d apex %d: %s", span, apex, err.msg);
			assert_int_equal(dt->ntris, n - 2); /* every point on the hull */
			check_delaunay(dt, pts, n);
			trk_delaunay_free(dt);
		}
}

/* ---- Voronoi ---- */

static void check_voronoi(const scene *sc)
{
	const trk_voronoi *vd = sc->vd;
	const trk_delaunay *dt = sc->dt;
	double scale = sc->w + sc->h;
	for (size_t v = 0; v < vd->nvertices; v++) {
		const trk_vvertex *vx = &vd->vertices[v];
		assert_true(vx->pos.x >= 0 && vx->pos.x <= sc->w);
		assert_true(vx->pos.y >= 0 && vx->pos.y <= sc->h);
		if (vx->border) {
			assert_true(vx->tri == TRK_NONE);
			double edge = fmin(fmin(vx->pos.x, sc->w - vx->pos.x),
					   fmin(vx->pos.y, sc->h - vx->pos.y));
			assert_true(edge <= 1e-9 * scale);
			continue;
		}
		assert_true(vx->tri < dt->ntris);
		const trk_tri *tr = &dt->tris[vx->tri];
		assert_memory_equal(&vx->pos, &tr->centre, sizeof vx->pos);
		double d0 = dist(vx->pos, sc->pts[tr->v[0]]);
		double d1 = dist(vx->pos, sc->pts[tr->v[1]]);
		double d2 = dist(vx->pos, sc->pts[tr->v[2]]);
		if (fabs(d0 - d1) > 1e-9 * (d0 + scale) || fabs(d0 - d2) > 1e-9 * (d0 + scale))
			fail_msg("vertex %zu: distances %.17g %.17g %.17g", v, d0, d1, d2);
		/* No site is nearer than the three (the empty circle, seen from Voronoi). */
		for (size_t q = 0; q < sc->n; q++)
			assert_true(dist(vx->pos, sc->pts[q]) >= d0 * (1 - 1e-9) - 1e-9 * scale);
	}
	for (size_t e = 0; e < vd->nedges; e++) {
		const trk_vedge *ed = &vd->edges[e];
		assert_true(ed->a < vd->nvertices && ed->b < vd->nvertices && ed->a != ed->b);
		assert_int_equal(ed->clipped,
				 vd->vertices[ed->a].border || vd->vertices[ed->b].border);
		trk_vec2 a = vd->vertices[ed->a].pos, b = vd->vertices[ed->b].pos;
		trk_vec2 s0 = sc->pts[ed->site[0]], s1 = sc->pts[ed->site[1]];
		/* Perpendicular to the dual Delaunay edge. */
		double dot = (b.x - a.x) * (s1.x - s0.x) + (b.y - a.y) * (s1.y - s0.y);
		assert_true(fabs(dot) <= 1e-8 * dist(a, b) * dist(s0, s1) + 1e-12 * scale * scale);
		/* On its bisector: both ends equidistant from the two sites. */
		if (!ed->clipped) {
			const trk_vec2 ends[2] = { a, b };
			for (int k = 0; k < 2; k++) {
				double r0 = dist(ends[k], s0), r1 = dist(ends[k], s1);
				if (fabs(r0 - r1) > 1e-9 * (r0 + scale))
					fail_msg("edge %zu end %d: %.17g vs %.17g", e, k, r0, r1);
			}
		}
		/* Listed in both ends' adjacency. */
		const size_t ends[2] = { ed->a, ed->b };
		for (int k = 0; k < 2; k++) {
			int found = 0;
			for (size_t i = vd->adj_start[ends[k]]; i < vd->adj_start[ends[k] + 1]; i++)
				found += vd->adj[i] == e;
			assert_int_equal(found, 1);
		}
	}
	assert_int_equal(vd->adj_start[vd->nvertices], 2 * vd->nedges);
	/* Every interior Delaunay edge with both circumcentres inside is an edge. */
	size_t inside = 0;
	for (size_t t = 0; t < dt->ntris; t++)
		for (int j = 0; j < 3; j++) {
			size_t u = dt->tris[t].nb[j];
			if (u == TRK_NONE || u < t)
				continue;
			trk_vec2 p = dt->tris[t].centre, q = dt->tris[u].centre;
			inside += p.x >= 0 && p.x <= sc->w && p.y >= 0 && p.y <= sc->h &&
				  q.x >= 0 && q.x <= sc->w && q.y >= 0 && q.y <= sc->h;
		}
	size_t unclipped = 0;
	for (size_t e = 0; e < vd->nedges; e++)
		unclipped += !vd->edges[e].clipped;
	assert_int_equal(unclipped, inside);
}

static void test_voronoi_random(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++)
		for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
			scene sc;
			scene_make(&sc, seed * 104729 + SIZES[s], SIZES[s], 250, 400, 1.0);
			check_voronoi(&sc);
			scene_free(&sc);
		}
}

/* ---- the circuit ---- */

static int has_edge(const trk_voronoi *vd, size_t a, size_t b)
{
	for (size_t i = vd->adj_start[a]; i < vd->adj_start[a + 1]; i++) {
		const trk_vedge *e = &vd->edges[vd->adj[i]];
		if (trk_vedge_other(e, a) == b && !e->clipped)
			return 1;
	}
	return 0;
}

static void check_loop(const trk_voronoi *vd, const trk_loop *lp, const trk_loop_params *p)
{
	size_t n = lp->n;
	assert_true(n >= p->min_vertices && n <= p->max_vertices && n >= 3);
	double area = 0;
	for (size_t i = 0; i < n; i++) {
		size_t v = lp->vertex[i], nx = lp->vertex[(i + 1) % n];
		assert_true(v < vd->nvertices);
		assert_false(vd->vertices[v].border);
		assert_memory_equal(&lp->points[i], &vd->vertices[v].pos, sizeof(trk_vec2));
		trk_vec2 q = lp->points[i];
		assert_true(q.x >= p->margin && q.x <= vd->width - p->margin);
		assert_true(q.y >= p->margin && q.y <= vd->height - p->margin);
		for (size_t j = i + 1; j < n; j++)
			if (lp->vertex[j] == v)
				fail_msg("vertex %zu used twice (positions %zu and %zu)", v, i, j);
		if (!has_edge(vd, v, nx))
			fail_msg("side %zu: %zu -> %zu is not an unclipped Voronoi edge", i, v, nx);
		area += lp->points[i].x * lp->points[(i + 1) % n].y -
			lp->points[(i + 1) % n].x * lp->points[i].y;
	}
	assert_true(area > 0); /* counter-clockwise */
	/* Simple: non-adjacent sides never meet. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 2; j < n; j++) {
			if (i == 0 && j == n - 1)
				continue; /* adjacent through the closing side */
			if (segments_meet(lp->points[i], lp->points[i + 1], lp->points[j],
					  lp->points[(j + 1) % n]))
				fail_msg("sides %zu and %zu of %zu cross", i, j, n);
		}
}

static void test_loop_random(void **state)
{
	(void)state;
	static const struct {
		size_t npoints, minv, maxv;
		double margin;
	} cases[] = {
		{ 30, 3, 10, 0 },   { 60, 8, 20, 10 },   { 100, 10, 40, 20 },
		{ 200, 20, 60, 0 }, { 300, 30, 90, 30 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
			scene sc;
			scene_make(&sc, seed * 31 + c, cases[c].npoints, 500, 400, 5.0);
			check_voronoi(&sc);
			trk_loop_params p;
			trk_loop_params_default(&p);
			p.min_vertices = cases[c].minv;
			p.max_vertices = cases[c].maxv;
			p.margin = cases[c].margin;
			rng r;
			rng_seed(&r, seed);
			sf_err err = { 0 };
			trk_loop *lp = trk_loop_new(sc.vd, &p, &r, &err);
			if (!lp)
				fail_msg("case %zu seed %llu: %s", c, (unsigned long long)seed,
					 err.msg);
			check_loop(sc.vd, lp, &p);
			trk_loop_free(lp);
			scene_free(&sc);
		}
}

/* ---- determinism ---- */

static trk_loop *make_all(uint64_t seed, scene *sc)
{
	scene_make(sc, seed, 120, 400, 300, 8.0);
	trk_loop_params p;
	trk_loop_params_default(&p);
	rng r;
	rng_seed(&r, seed ^ 0x5eed);
	sf_err err = { 0 };
	trk_loop *lp = trk_loop_new(sc->vd, &p, &r, &err);
	if (!lp)
		fail_msg("seed %llu: %s", (unsigned long long)seed, err.msg);
	return lp;
}

static void test_determinism(void **state)
{
	(void)state;
	scene a, b, c;
	trk_loop *la = make_all(42, &a), *lb = make_all(42, &b), *lc = make_all(43, &c);
	assert_memory_equal(a.pts, b.pts, a.n * sizeof *a.pts);
	assert_int_equal(a.dt->ntris, b.dt->ntris);
	assert_memory_equal(a.dt->tris, b.dt->tris, a.dt->ntris * sizeof *a.dt->tris);
	assert_int_equal(a.vd->nvertices, b.vd->nvertices);
	assert_int_equal(a.vd->nedges, b.vd->nedges);
	/* Field by field: struct padding carries no meaning. */
	for (size_t v = 0; v < a.vd->nvertices; v++) {
		const trk_vvertex *x = &a.vd->vertices[v], *y = &b.vd->vertices[v];
		assert_memory_equal(&x->pos, &y->pos, sizeof x->pos);
		assert_int_equal(x->tri, y->tri);
		assert_int_equal(x->border, y->border);
	}
	for (size_t e = 0; e < a.vd->nedges; e++) {
		const trk_vedge *x = &a.vd->edges[e], *y = &b.vd->edges[e];
		assert_true(x->a == y->a && x->b == y->b && x->clipped == y->clipped);
		assert_true(x->site[0] == y->site[0] && x->site[1] == y->site[1]);
	}
	assert_int_equal(la->n, lb->n);
	assert_memory_equal(la->points, lb->points, la->n * sizeof *la->points);
	assert_memory_equal(la->vertex, lb->vertex, la->n * sizeof *la->vertex);
	assert_memory_not_equal(a.pts, c.pts, a.n * sizeof *a.pts);
	assert_true(la->n != lc->n ||
		    memcmp(la->points, lc->points, la->n * sizeof *la->points) != 0);
	trk_loop_free(la);
	trk_loop_free(lb);
	trk_loop_free(lc);
	scene_free(&a);
	scene_free(&b);
	scene_free(&c);
}

/* Points keep their minimum distance, stay in the rectangle, and differ by seed. */
static void test_points(void **state)
{
	(void)state;
	trk_vec2 pts[200];
	rng r;
	rng_seed(&r, 9);
	sf_err err = { 0 };
	assert_int_equal(trk_points_random(&r, 200, 100, 50, 3.0, pts, &err), 0);
	for (size_t i = 0; i < 200; i++) {
		assert_true(pts[i].x >= 0 && pts[i].x < 100 && pts[i].y >= 0 && pts[i].y < 50);
		for (size_t j = 0; j < i; j++)
			assert_true(dist(pts[i], pts[j]) >= 3.0);
	}
}

/* ---- errors ---- */

static void expect_err(const sf_err *err, int code, const char *needle)
{
	assert_int_equal(err->code, code);
	if (!strstr(err->msg, needle))
		fail_msg("message \"%s\" lacks \"%s\"", err->msg, needle);
}

static void test_errors(void **state)
{
	(void)state;
	sf_err err = { 0 };
	trk_vec2 pts[400];
	rng r;
	rng_seed(&r, 1);
	assert_int_equal(trk_points_random(&r, 0, 10, 10, 0, pts, &err), SF_EINVAL);
	expect_err(&err, SF_EINVAL, "point count must be in 1..");
	assert_int_equal(trk_points_random(&r, 10, -1, 10, 0, pts, &err), SF_EINVAL);
	expect_err(&err, SF_EINVAL, "width and height");
	assert_int_equal(trk_points_random(&r, 10, 10, 10, NAN, pts, &err), SF_EINVAL);
	expect_err(&err, SF_EINVAL, "min_distance");
	assert_int_equal(trk_points_random(&r, 400, 10, 10, 5, pts, &err), SF_ERANGE);
	expect_err(&err, SF_ERANGE, "of 400 points fit 5 apart");

	trk_vec2 two[2] = { { 0, 0 }, { 1, 1 } };
	assert_null(trk_delaunay_new(two, 2, &err));
	expect_err(&err, SF_EINVAL, "point count must be in 3..");
	trk_vec2 dup[4] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 0 } };
	assert_null(trk_delaunay_new(dup, 4, &err));
	expect_err(&err, SF_EINVAL, "points 1 and 3 coincide");
	trk_vec2 line[5] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 3 }, { 4, 4 } };
	assert_null(trk_delaunay_new(line, 5, &err));
	expect_err(&err, SF_ERANGE, "collinear");
	trk_vec2 inf[3] = { { 0, 0 }, { 1, INFINITY }, { 0, 1 } };
	assert_null(trk_delaunay_new(inf, 3, &err));
	expect_err(&err, SF_EINVAL, "point 1 must have finite");

	scene sc;
	scene_make(&sc, 5, 80, 300, 300, 5.0);
	assert_null(trk_voronoi_new(sc.dt, 0, 10, &err));
	expect_err(&err, SF_EINVAL, "width and height");
	trk_loop_params p;
	trk_loop_params_default(&p);
	p.min_vertices = 2;
	assert_null(trk_loop_new(sc.vd, &p, &r, &err));
	expect_err(&err, SF_EINVAL, "min_vertices must be >= 3 (got 2)");
	trk_loop_params_default(&p);
	p.max_vertices = 5;
	assert_null(trk_loop_new(sc.vd, &p, &r, &err));
	expect_err(&err, SF_EINVAL, "max_vertices must be >= min_vertices (got 5 < 8)");
	trk_loop_params_default(&p);
	p.min_vertices = p.max_vertices = 1000; /* more vertices than the diagram has */
	p.max_attempts = 4;
	assert_null(trk_loop_new(sc.vd, &p, &r, &err));
	expect_err(&err, SF_ERANGE, "no closed circuit of 1000..1000 vertices found in 4 attempts");
	trk_loop_params_default(&p);
	p.margin = 200;
	assert_null(trk_loop_new(sc.vd, &p, &r, &err));
	expect_err(&err, SF_ERANGE, "no usable Voronoi edge");
	scene_free(&sc);

	trk_delaunay_free(NULL);
	trk_voronoi_free(NULL);
	trk_loop_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_points),         cmocka_unit_test(test_delaunay_random),
		cmocka_unit_test(test_delaunay_grid),  cmocka_unit_test(test_delaunay_flat_hull),
		cmocka_unit_test(test_voronoi_random), cmocka_unit_test(test_loop_random),
		cmocka_unit_test(test_determinism),    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
