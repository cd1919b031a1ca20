/* walk.c - geometry, symmetry phases and prefix tasks; see walk.h. */
#include "walk.h"

#include <stdlib.h>
#include <string.h>

const uint8_t lat_phase_allowed[2][3] = {
	/* square: straight: R U; (no phase 1); free: RLUD */
	{ 1u << LAT_R | 1u << LAT_U, 0, 0x0f },
	/* cubic: straight: R U; in plane: RLUD F; free: all six */
	{ 1u << LAT_R | 1u << LAT_U, 0x1f, 0x3f },
};

const uint8_t lat_phase_next[2][3][6] = {
	{ { 0, 0, 2, 0, 0, 0 }, { 0 }, { 2, 2, 2, 2, 2, 2 } },
	{ { 0, 0, 1, 0, 0, 0 }, { 1, 1, 1, 1, 2, 2 }, { 2, 2, 2, 2, 2, 2 } },
};

void lat_geom_init(lat_geom *g, lat_kind kind, int len)
{
	int side = 2 * len + 1;
	g->kind = kind;
	g->ndir = kind == LAT_CUBIC ? 6 : 4;
	g->side = side;
	g->cells = kind == LAT_CUBIC ? side * side * side : side * side;
	g->center = kind == LAT_CUBIC ? len * (1 + side + side * side) : len * (1 + side);
	g->off[LAT_R] = 1;
	g->off[LAT_L] = -1;
	g->off[LAT_U] = side;
	g->off[LAT_D] = -side;
	g->off[LAT_F] = side * side;
	g->off[LAT_B] = -side * side;
}

/*
 * Prefix depth: deep enough for a few hundred to a few thousand tasks on long
 * chains, shallow on short ones where replaying a prefix would cost more
 * than the walk below it.
 */
static int split_bonds(lat_kind kind, int len)
{
	int cap = kind == LAT_CUBIC ? 7 : 10;
	int bonds = len - 6;
	if (bonds > cap)
		bonds = cap;
	if (bonds < 1)
		bonds = 1;
	return bonds;
}

typedef struct task_list {
	lat_task *v;
	size_t n, cap;
	int failed;
} task_list;

static void collect(const lat_geom *g, uint8_t *seen, int site, int phase, lat_task *cur, int want,
		    task_list *list)
{
	if (cur->bonds == want) {
		if (list->n == list->cap) {
			size_t cap = list->cap ? 2 * list->cap : 256;
			lat_task *v = realloc(list->v, cap * sizeof *v);
			if (!v) {
				list->failed = 1;
				return;
			}
			list->v = v;
			list->cap = cap;
		}
		cur->phase = (uint8_t)phase;
		list->v[list->n++] = *cur;
		return;
	}
	int cubic = g->kind == LAT_CUBIC;
	for (int d = 0; d < g->ndir; d++) {
		if (!(lat_phase_allowed[cubic][phase] >> d & 1))
			continue;
		int q = site + g->off[d];
		if (seen[q])
			continue;
		seen[q] = 1;
		cur->dirs[cur->bonds++] = (uint8_t)d;
		collect(g, seen, q, lat_phase_next[cubic][phase][d], cur, want, list);
		cur->bonds--;
		seen[q] = 0;
	}
}

size_t lat_tasks_make(const lat_geom *g, int len, lat_task **out)
{
	task_list list = { 0 };
	uint8_t *seen = calloc((size_t)g->cells, 1);
	*out = NULL;
	if (!seen)
		return 0;
	/* Bond 1 is always R: start from residue 1 placed, in phase 0. */
	lat_task cur = { .bonds = 1, .dirs = { LAT_R } };
	seen[g->center] = 1;
	seen[g->center + g->off[LAT_R]] = 1;
	collect(g, seen, g->center + g->off[LAT_R], 0, &cur, split_bonds(g->kind, len), &list);
	free(seen);
	if (list.failed) {
		free(list.v);
		return 0;
	}
	*out = list.v;
	return list.n;
}
