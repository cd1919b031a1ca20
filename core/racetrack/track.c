/*
 * track.c - see track.h.
 *
 * The two spatial predicates share one structure: a uniform grid over a
 * set of points (samples, or the midpoints of the sampled segments) with
 * cells at least as wide as the distance that matters, so every pair
 * closer than that lies in the same or a neighbouring cell. Points are
 * bucketed with a counting sort (stable, so candidates come in index order
 * and the first violation reported is the same on every run). When the
 * track's bounding box would need many more cells than points, cells are
 * widened, which only adds candidates, never loses one.
 */
#include "track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noise.h"
#include "spline.h"

static int check_params(const trk_track_params *p, sf_err *err)
{
	if (!p)
		return sf_err_set(err, SF_EINVAL, "params: missing");
	if (!(p->width > 0.0) || !isfinite(p->width))
		return sf_err_set(err, SF_EINVAL, "width: must be finite and > 0, got %g",
				  p->width);
	if (!(p->amplitude >= 0.0) || !isfinite(p->amplitude))
		return sf_err_set(err, SF_EINVAL, "amplitude: must be finite and >= 0, got %g",
				  p->amplitude);
	if (!(p->max_slope >= 0.0) || !isfinite(p->max_slope))
		return sf_err_set(err, SF_EINVAL, "max_slope: must be finite and >= 0, got %g",
				  p->max_slope);
	return SF_OK;
}

void trk_track_free(trk_track *track)
{
	if (!track)
		return;
	free(track->samples);
	free(track->curvature);
	free(track->slope);
	free(track->seg_start);
	free(track);
}

trk_track *trk_track_from_path(trk_path *path, const double *z, double width, sf_err *err)
{
	trk_track *track = NULL;
	if (!(width > 0.0) || !isfinite(width)) {
		sf_err_set(err, SF_EINVAL, "width: must be finite and > 0, got %g", width);
		goto fail;
	}
	size_t n = path->n;
	if (!(track = calloc(1, sizeof *track)))
		goto nomem;
	track->samples = malloc(n * sizeof *track->samples);
	track->slope = malloc(n * sizeof *track->slope);
	if (!track->samples || !track->slope)
		goto nomem;
	for (size_t k = 0; k < n; k++) {
		track->samples[k].x = path->pts[k].x;
		track->samples[k].y = path->pts[k].y;
		track->samples[k].z = z ? z[k] : 0.0;
	}
	for (size_t k = 0; k < n; k++)
		track->slope[k] = z ? (z[(k + 1) % n] - z[k]) / path->ds : 0.0;
	track->n = n;
	track->ds = path->ds;
	track->length = path->length;
	track->width = width;
	track->nsegments = path->nsegments;
	track->curvature = path->curvature; /* ownership moves to the track */
	track->seg_start = path->seg_start;
	path->curvature = NULL;
	path->seg_start = NULL;
	trk_path_release(path);
	return track;
nomem:
	sf_err_set(err, SF_ENOMEM, "track: out of memory for %zu samples", path->n);
fail:
	trk_path_release(path);
	trk_track_free(track);
	return NULL;
}

trk_track *trk_track_build(const trk_vec2 *ctrl, size_t m, const trk_track_params *params,
			   sf_err *err)
{
	trk_path path = { 0 };
	trk_noise *noise = NULL;
	double *z = NULL;
	trk_track *track = NULL;
	if (check_params(params, err))
		return NULL;
	if (trk_spline_sample(ctrl, m, params->spacing, &path, err))
		return NULL;
	noise = trk_noise_new(params->period, params->octaves, params->seed, err);
	if (!noise) {
		trk_path_release(&path);
		return NULL;
	}
	if (!(z = malloc(path.n * sizeof *z))) {
		sf_err_set(err, SF_ENOMEM, "track: out of memory for %zu samples", path.n);
		trk_path_release(&path);
	} else {
		trk_elevation(noise, path.n, path.ds, params->amplitude, params->max_slope, z);
		track = trk_track_from_path(&path, z, params->width, err);
	}
	trk_noise_free(noise);
	free(z);
	return track;
}

trk_limits trk_limits_default(double width)
{
	trk_limits lim = {
		.min_length = 250.0,
		.max_length = 10000.0,
		.max_curvature = 1.0 / width,
		.clearance_arc = 3.0 * width,
	};
	return lim;
}

/* ---- the uniform grid ---- */

typedef struct grid {
	double x0, y0, cell;
	size_t gx, gy;
	size_t *start; /* gx * gy + 1 offsets into items */
	size_t *items; /* point indices bucketed by cell, ascending in each */
	size_t *cell_of;
} grid;

static void grid_free(grid *g)
{
	free(g->start);
	free(g->items);
	free(g->cell_of);
}

static size_t grid_axis(double v, double v0, double cell, size_t cells)
{
	double c = (v - v0) / cell;
	size_t i = c > 0.0 ? (size_t)c : 0;
	return i < cells ? i : cells - 1;
}

/* Buckets pts[0..n-1] (n >= 1) in cells at least `cell` wide (> 0). */
static int grid_build(grid *g, const trk_vec2 *pts, size_t n, double cell)
{
	memset(g, 0, sizeof *g);
	double x0 = pts[0].x, x1 = x0, y0 = pts[0].y, y1 = y0;
	for (size_t k = 1; k < n; k++) {
		x0 = fmin(x0, pts[k].x);
		x1 = fmax(x1, pts[k].x);
		y0 = fmin(y0, pts[k].y);
		y1 = fmax(y1, pts[k].y);
	}
	/* At most about 4n cells: widen them if the box would need more. */
	double budget = 4.0 * (double)n + 16.0;
	while (((x1 - x0) / cell + 1.0) * ((y1 - y0) / cell + 1.0) > budget)
		cell *= 2.0;
	g->x0 = x0;
	g->y0 = y0;
	g->cell = cell;
	g->gx = (size_t)((x1 - x0) / cell) + 1;
	g->gy = (size_t)((y1 - y0) / cell) + 1;
	size_t ncells = g->gx * g->gy;
	g->start = calloc(ncells + 1, sizeof *g->start);
	g->items = malloc(n * sizeof *g->items);
	g->cell_of = malloc(n * sizeof *g->cell_of);
	if (!g->start || !g->items || !g->cell_of) {
		grid_free(g);
		return SF_ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		size_t cx = grid_axis(pts[k].x, x0, cell, g->gx);
		size_t cy = grid_axis(pts[k].y, y0, cell, g->gy);
		g->cell_of[k] = cy * g->gx + cx;
		g->start[g->cell_of[k] + 1]++;
	}
	for (size_t c = 0; c < ncells; c++)
		g->start[c + 1] += g->start[c];
	/* Fill each cell in index order, using cell_of's slot as a cursor. */
	size_t *fill = calloc(ncells, sizeof *fill);
	if (!fill) {
		grid_free(g);
		return SF_ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		size_t c = g->cell_of[k];
		g->items[g->start[c] + fill[c]++] = k;
	}
	free(fill);
	return SF_OK;
}

/*
 * Calls visit(ctx, i, j) for every pair i < j of points in the same or
 * neighbouring cells, i ascending; stops and returns 1 when visit does.
 */
static int grid_pairs(const grid *g, size_t n, int (*visit)(void *, size_t, size_t), void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		size_t cx = g->cell_of[i] % g->gx, cy = g->cell_of[i] / g->gx;
		for (size_t y = cy > 0 ? cy - 1 : 0; y <= cy + 1 && y < g->gy; y++) {
			for (size_t x = cx > 0 ? cx - 1 : 0; x <= cx + 1 && x < g->gx; x++) {
				size_t c = y * g->gx + x;
				for (size_t q = g->start[c]; q < g->start[c + 1]; q++)
					if (g->items[q] > i && visit(ctx, i, g->items[q]))
						return 1;
			}
		}
	}
	return 0;
}

/* ---- the predicates ---- */

typedef struct pred_ctx {
	const trk_track *track;
	const trk_limits *limits;
	trk_vec2 *pts; /* scratch: samples or segment midpoints in the plane */
	char *reason;
	size_t cap;
} pred_ctx;

static trk_vec2 plane(const trk_vec3 *s)
{
	trk_vec2 p = { s->x, s->y };
	return p;
}

static double orient(trk_vec2 a, trk_vec2 b, trk_vec2 c)
{
	return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

/* Whether p, collinear with a and b, lies within their bounding box. */
static int within(trk_vec2 a, trk_vec2 b, trk_vec2 p)
{
	return fmin(a.x, b.x) <= p.x && p.x <= fmax(a.x, b.x) && fmin(a.y, b.y) <= p.y &&
	       p.y <= fmax(a.y, b.y);
}

/* Whether segments ab and cd cross or touch. */
static int segments_meet(trk_vec2 a, trk_vec2 b, trk_vec2 c, trk_vec2 d)
{
	double d1 = orient(c, d, a), d2 = orient(c, d, b);
	double d3 = orient(a, b, c), d4 = orient(a, b, d);
	if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) &&
	    ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
		return 1;
	return (d1 == 0 && within(c, d, a)) || (d2 == 0 && within(c, d, b)) ||
	       (d3 == 0 && within(a, b, c)) || (d4 == 0 && within(a, b, d));
}

static int visit_crossing(void *arg, size_t i, size_t j)
{
	pred_ctx *ctx = arg;
	const trk_track *t = ctx->track;
	size_t n = t->n;
	if (j == i + 1 || (i == 0 && j == n - 1))
		return 0; /* adjacent segments share a sample */
	if (!segments_meet(plane(&t->samples[i]), plane(&t->samples[(i + 1) % n]),
			   plane(&t->samples[j]), plane(&t->samples[(j + 1) % n])))
		return 0;
	snprintf(ctx->reason, ctx->cap,
		 "the segment from sample %zu crosses the one from sample %zu (%.1f m and "
		 "%.1f m along the track)",
		 i, j, (double)i * t->ds, (double)j * t->ds);
	return 1;
}

static int pred_self_intersection(pred_ctx *ctx)
{
	const trk_track *t = ctx->track;
	size_t n = t->n;
	double longest = 0.0;
	for (size_t k = 0; k < n; k++) {
		trk_vec2 a = plane(&t->samples[k]), b = plane(&t->samples[(k + 1) % n]);
		ctx->pts[k].x = 0.5 * (a.x + b.x);
		ctx->pts[k].y = 0.5 * (a.y + b.y);
		double dx = b.x - a.x, dy = b.y - a.y;
		longest = fmax(longest, sqrt(dx * dx + dy * dy));
	}
	/* Crossing segments have midpoints at most `longest` apart. */
	grid g;
	if (grid_build(&g, ctx->pts, n, longest > 0.0 ? longest : 1.0))
		return SF_ENOMEM;
	int failed = grid_pairs(&g, n, visit_crossing, ctx);
	grid_free(&g);
	return failed;
}

static int visit_clearance(void *arg, size_t i, size_t j)
{
	pred_ctx *ctx = arg;
	const trk_track *t = ctx->track;
	size_t gap = j - i < t->n - (j - i) ? j - i : t->n - (j - i);
	double arc = (double)gap * t->ds;
	if (arc <= ctx->limits->clearance_arc)
		return 0;
	double dx = ctx->pts[j].x - ctx->pts[i].x, dy = ctx->pts[j].y - ctx->pts[i].y;
	double d = sqrt(dx * dx + dy * dy);
	if (d >= t->width)
		return 0;
	snprintf(ctx->reason, ctx->cap,
		 "samples %zu and %zu are %.2f m apart in the plane but %.1f m apart along "
		 "the track; the road needs %g m (its width) beyond %g m of arc",
		 i, j, d, arc, t->width, ctx->limits->clearance_arc);
	return 1;
}

static int pred_clearance(pred_ctx *ctx)
{
	const trk_track *t = ctx->track;
	for (size_t k = 0; k < t->n; k++)
		ctx->pts[k] = plane(&t->samples[k]);
	grid g;
	if (grid_build(&g, ctx->pts, t->n, t->width))
		return SF_ENOMEM;
	int failed = grid_pairs(&g, t->n, visit_clearance, ctx);
	grid_free(&g);
	return failed;
}

static int pred_curvature(pred_ctx *ctx)
{
	const trk_track *t = ctx->track;
	size_t worst = 0;
	for (size_t k = 1; k < t->n; k++)
		if (fabs(t->curvature[k]) > fabs(t->curvature[worst]))
			worst = k;
	double kappa = fabs(t->curvature[worst]);
	if (kappa <= ctx->limits->max_curvature)
		return 0;
	snprintf(ctx->reason, ctx->cap,
		 "curvature %.4g 1/m (radius %.3g m) at sample %zu exceeds %.4g 1/m (radius "
		 "%.3g m)",
		 kappa, 1.0 / kappa, worst, ctx->limits->max_curvature,
		 1.0 / ctx->limits->max_curvature);
	return 1;
}

static int pred_length(pred_ctx *ctx)
{
	double len = ctx->track->length;
	const trk_limits *lim = ctx->limits;
	if (len >= lim->min_length && len <= lim->max_length)
		return 0;
	snprintf(ctx->reason, ctx->cap, "length %.1f m is outside [%g, %g] m", len, lim->min_length,
		 lim->max_length);
	return 1;
}

static const struct {
	const char *name;
	int (*check)(pred_ctx *ctx); /* 1 failed, 0 passed, < 0 error */
} PREDICATES[TRK_NPREDICATES] = {
	[TRK_PRED_SELF_INTERSECTION] = { "self_intersection", pred_self_intersection },
	[TRK_PRED_CLEARANCE] = { "clearance", pred_clearance },
	[TRK_PRED_CURVATURE] = { "curvature", pred_curvature },
	[TRK_PRED_LENGTH] = { "length", pred_length },
};

const char *trk_predicate_name(size_t index)
{
	return index < TRK_NPREDICATES ? PREDICATES[index].name : NULL;
}

static int check_limits(const trk_limits *lim, sf_err *err)
{
	if (!lim)
		return sf_err_set(err, SF_EINVAL, "limits: missing");
	const double v[] = { lim->min_length, lim->max_length, lim->max_curvature,
			     lim->clearance_arc };
	const char *names[] = { "min_length", "max_length", "max_curvature", "clearance_arc" };
	for (size_t i = 0; i < 4; i++)
		if (!(v[i] >= 0.0) || !isfinite(v[i]))
			return sf_err_set(err, SF_EINVAL,
					  "limits.%s: must be finite and >= 0, got %g", names[i],
					  v[i]);
	if (lim->min_length > lim->max_length)
		return sf_err_set(err, SF_EINVAL,
				  "limits.min_length: %g exceeds limits.max_length %g",
				  lim->min_length, lim->max_length);
	return SF_OK;
}

int trk_track_check(const trk_track *track, const trk_limits *limits, int all, trk_report *report,
		    sf_err *err)
{
	int rc = check_limits(limits, err);
	if (rc)
		return rc;
	if (!track || track->n < 4)
		return sf_err_set(err, SF_EINVAL, "track: need at least 4 samples");
	memset(report, 0, sizeof *report);
	pred_ctx ctx = { .track = track, .limits = limits };
	ctx.pts = malloc(track->n * sizeof *ctx.pts);
	if (!ctx.pts)
		return sf_err_set(err, SF_ENOMEM, "track check: out of memory");
	for (size_t p = 0; p < TRK_NPREDICATES; p++) {
		trk_violation *v = &report->failed[report->nfailed];
		ctx.reason = v->reason;
		ctx.cap = sizeof v->reason;
		rc = PREDICATES[p].check(&ctx);
		if (rc < 0) {
			free(ctx.pts);
			return sf_err_set(err, rc, "track check %s: out of memory",
					  PREDICATES[p].name);
		}
		if (rc == 0)
			continue;
		v->predicate = p;
		v->name = PREDICATES[p].name;
		report->nfailed++;
		if (!all)
			break;
	}
	free(ctx.pts);
	return (int)report->nfailed;
}
