/* loop.c - see loop.h. */
#include "loop.h"

#include <math.h>
#include <stdlib.h>

void trk_loop_params_default(trk_loop_params *p)
{
	*p = (trk_loop_params){
		.min_vertices = 8,
		.max_vertices = 40,
		.margin = 0.0,
		.min_edge_length = 0.0,
		.max_attempts = 64,
		.steps_per_attempt = 4096,
	};
}

static int check_params(const trk_loop_params *p, sf_err *err)
{
	if (p->min_vertices < 3)
		return sf_err_set(err, SF_EINVAL, "min_vertices must be >= 3 (got %zu)",
				  p->min_vertices);
	if (p->max_vertices < p->min_vertices)
		return sf_err_set(err, SF_EINVAL,
				  "max_vertices must be >= min_vertices (got %zu < %zu)",
				  p->max_vertices, p->min_vertices);
	if (!(isfinite(p->margin) && p->margin >= 0))
		return sf_err_set(err, SF_EINVAL, "margin must be finite and >= 0 (got %g)",
				  p->margin);
	if (!(isfinite(p->min_edge_length) && p->min_edge_length >= 0))
		return sf_err_set(err, SF_EINVAL,
				  "min_edge_length must be finite and >= 0 (got %g)",
				  p->min_edge_length);
	if (p->max_attempts < 1 || p->steps_per_attempt < 1)
		return sf_err_set(err, SF_EINVAL,
				  "max_attempts and steps_per_attempt must be >= 1 (got %zu, %zu)",
				  p->max_attempts, p->steps_per_attempt);
	return 0;
}

/* Whether edge e belongs to the loop graph (see loop.h). */
static int edge_usable(const trk_voronoi *vd, const trk_vedge *e, const trk_loop_params *p)
{
	if (e->clipped)
		return 0;
	const trk_vec2 a = vd->vertices[e->a].pos, b = vd->vertices[e->b].pos;
	const trk_vec2 ends[2] = { a, b };
	for (int k = 0; k < 2; k++)
		if (ends[k].x < p->margin || ends[k].x > vd->width - p->margin ||
		    ends[k].y < p->margin || ends[k].y > vd->height - p->margin)
			return 0;
	double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
	return len2 > 0 && len2 >= p->min_edge_length * p->min_edge_length;
}

/* Working state of the search; every array is sized once per call. */
typedef struct walk {
	const trk_voronoi *vd;
	const unsigned char *usable; /* per edge */
	unsigned char *visited;      /* per vertex */
	size_t *path;                /* vertices, path[0] the start */
	size_t *order_off;           /* per depth: its shuffled neighbours in pool */
	size_t *order_len;
	size_t *next; /* per depth: the next neighbour to try */
	size_t *pool; /* stack-shaped: the shuffled neighbours of every depth */
	size_t len, pool_top;
} walk;

/* Appends v to the path with its usable neighbours in a random order. */
static void push(walk *w, size_t v, rng *r)
{
	const trk_voronoi *vd = w->vd;
	size_t d = w->len++, off = w->pool_top, k = 0;
	w->path[d] = v;
	w->visited[v] = 1;
	for (size_t i = vd->adj_start[v]; i < vd->adj_start[v + 1]; i++) {
		size_t e = vd->adj[i];
		if (w->usable[e])
			w->pool[off + k++] = trk_vedge_other(&vd->edges[e], v);
	}
	for (size_t i = k; i > 1; i--) { /* Fisher-Yates */
		size_t j = (size_t)rng_below(r, i), t = w->pool[off + i - 1];
		w->pool[off + i - 1] = w->pool[off + j];
		w->pool[off + j] = t;
	}
	w->order_off[d] = off;
	w->order_len[d] = k;
	w->next[d] = 0;
	w->pool_top += k;
}

static void pop(walk *w)
{
	size_t d = --w->len;
	w->visited[w->path[d]] = 0;
	w->pool_top = w->order_off[d];
}

/*
 * One walk from edge u -> v: a depth-first search for a path back to u of
 * min..max vertices. Returns 1 with the cycle in path[0..len-1], else 0
 * (the path is then empty again).
 */
static int attempt(walk *w, size_t u, size_t v, const trk_loop_params *p, rng *r)
{
	push(w, u, r);
	push(w, v, r);
	for (size_t steps = 0; steps < p->steps_per_attempt && w->len >= 2;) {
		size_t d = w->len - 1;
		if (w->next[d] == w->order_len[d]) {
			pop(w); /* a dead end: back up */
			continue;
		}
		size_t x = w->pool[w->order_off[d] + w->next[d]++];
		steps++;
		if (x == u && w->len >= p->min_vertices)
			return 1; /* closed along the real edge path[d] -> u */
		if (!w->visited[x] && w->len < p->max_vertices)
			push(w, x, r);
	}
	while (w->len > 0)
		pop(w);
	return 0;
}

static double signed_area(const trk_vec2 *pts, size_t n)
{
	double a = 0;
	for (size_t i = 0; i < n; i++) {
		trk_vec2 s = pts[i], t = pts[(i + 1) % n];
		a += s.x * t.y - t.x * s.y;
	}
	return 0.5 * a;
}

trk_loop *trk_loop_new(const trk_voronoi *vd, const trk_loop_params *p, rng *r, sf_err *err)
{
	if (check_params(p, err))
		return NULL;
	size_t nv = vd->nvertices, ne = vd->nedges, nusable = 0;
	trk_loop *loop = NULL;
	unsigned char *usable = malloc(ne + 1);
	size_t *edges = malloc((ne + 1) * sizeof *edges);
	walk w = { .vd = vd, .usable = usable };
	w.visited = calloc(nv + 1, 1);
	w.path = malloc((nv + 1) * sizeof *w.path);
	w.order_off = malloc((nv + 1) * sizeof *w.order_off);
	w.order_len = malloc((nv + 1) * sizeof *w.order_len);
	w.next = malloc((nv + 1) * sizeof *w.next);
	w.pool = malloc((2 * ne + 1) * sizeof *w.pool);
	if (!usable || !edges || !w.visited || !w.path || !w.order_off || !w.order_len || !w.next ||
	    !w.pool)
		goto nomem;
	for (size_t e = 0; e < ne; e++) {
		usable[e] = (unsigned char)edge_usable(vd, &vd->edges[e], p);
		if (usable[e])
			edges[nusable++] = e;
	}
	if (nusable == 0) {
		sf_err_set(err, SF_ERANGE,
			   "no usable Voronoi edge: every edge is clipped, within margin %g of "
			   "the border or shorter than %g",
			   p->margin, p->min_edge_length);
		goto fail;
	}
	int found = 0;
	for (size_t a = 0; a < p->max_attempts && !found; a++) {
		const trk_vedge *e = &vd->edges[edges[rng_below(r, nusable)]];
		int flip = (int)rng_below(r, 2);
		found = attempt(&w, flip ? e->b : e->a, flip ? e->a : e->b, p, r);
	}
	if (!found) {
		sf_err_set(err, SF_ERANGE,
			   "no closed circuit of %zu..%zu vertices found in %zu attempts of %zu "
			   "steps",
			   p->min_vertices, p->max_vertices, p->max_attempts, p->steps_per_attempt);
		goto fail;
	}
	loop = calloc(1, sizeof *loop);
	if (!loop)
		goto nomem;
	loop->n = w.len;
	loop->points = malloc(w.len * sizeof *loop->points);
	loop->vertex = malloc(w.len * sizeof *loop->vertex);
	if (!loop->points || !loop->vertex)
		goto nomem;
	for (size_t i = 0; i < w.len; i++) {
		loop->vertex[i] = w.path[i];
		loop->points[i] = vd->vertices[w.path[i]].pos;
	}
	if (signed_area(loop->points, loop->n) < 0) /* make it counter-clockwise */
		for (size_t i = 1, j = loop->n - 1; i < j; i++, j--) {
			trk_vec2 tp = loop->points[i];
			size_t tv = loop->vertex[i];
			loop->points[i] = loop->points[j];
			loop->vertex[i] = loop->vertex[j];
			loop->points[j] = tp;
			loop->vertex[j] = tv;
		}
	goto done;
nomem:
	sf_err_set(err, SF_ENOMEM, "out of memory searching a circuit in %zu vertices", nv);
fail:
	trk_loop_free(loop);
	loop = NULL;
done:
	free(usable);
	free(edges);
	free(w.visited);
	free(w.path);
	free(w.order_off);
	free(w.order_len);
	free(w.next);
	free(w.pool);
	return loop;
}

void trk_loop_free(trk_loop *loop)
{
	if (!loop)
		return;
	free(loop->points);
	free(loop->vertex);
	free(loop);
}
