/*
 * enumerate.c - the direct exact enumerator: every conformation of one
 * sequence, depth first, with the contact count kept incrementally.
 *
 * Threads: the walk is split into prefix tasks (walk.h) that workers pull
 * from an atomic counter. Each worker owns its grid, histogram and examples;
 * since a worker takes tasks in increasing order, its first example for a
 * score comes from its lowest task, and the merge keeps, per score, the
 * example of the lowest task overall: the first conformation in depth-first
 * order, as a single thread would find it.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../par.h"
#include "lattice.h"
#include "walk.h"

#define CNT_NO_TASK UINT32_MAX

typedef struct cnt_shared {
	const lat_geom *geom;
	const lat_seq *seq;
	const lat_task *tasks;
	size_t ntasks;
	atomic_size_t next;
	struct cnt_worker *workers;
} cnt_shared;

typedef struct cnt_worker {
	uint8_t *grid;
	int off[6];
	const uint8_t *h;
	int last; /* index of the last residue */
	int h_last, h_before_last;
	uint32_t task; /* the task being walked */
	uint8_t moves[LAT_MAX_LEN];
	uint64_t hist[LAT_MAX_SCORE + 1];
	uint32_t example_task[LAT_MAX_SCORE + 1];
	uint8_t example[LAT_MAX_SCORE + 1][LAT_MAX_LEN];
	int failed;
} cnt_worker;

static void cnt_keep_example(cnt_worker *w, int score)
{
	w->example_task[score] = w->task;
	memcpy(w->example[score], w->moves, (size_t)w->last);
}

#define NDIR 4
#define KFN(name) name##_square
#include "enum_kernel.inc"
#undef NDIR
#undef KFN
#define NDIR 6
#define KFN(name) name##_cubic
#include "enum_kernel.inc"
#undef NDIR
#undef KFN

static void cnt_run_task(cnt_worker *w, const lat_geom *g, const lat_task *t)
{
	/* Replay the prefix, scoring as the kernel would. */
	int site = g->center, score = 0;
	int sites[LAT_MAX_LEN];
	for (int b = 0; b < t->bonds; b++) {
		int k = b + 1, q = site + g->off[t->dirs[b]];
		if (w->h[k]) {
			for (int e = 0; e < g->ndir; e++)
				score += w->grid[q + g->off[e]] >> 1;
			score -= w->h[k - 1];
		}
		w->grid[q] = (uint8_t)(1 + w->h[k]);
		w->moves[b] = t->dirs[b];
		sites[b] = site = q;
	}
	if (g->kind == LAT_CUBIC)
		dfs_cubic(w, t->bonds + 1, site, score, t->phase);
	else
		dfs_square(w, t->bonds + 1, site, score, t->phase);
	for (int b = 0; b < t->bonds; b++)
		w->grid[sites[b]] = 0;
}

static void cnt_worker_main(void *arg, int index)
{
	cnt_shared *sh = arg;
	cnt_worker *w = &sh->workers[index];
	const lat_geom *g = sh->geom;
	w->grid = calloc((size_t)g->cells, 1);
	if (!w->grid) {
		w->failed = 1;
		return;
	}
	memcpy(w->off, g->off, sizeof w->off);
	w->h = sh->seq->h;
	w->last = sh->seq->len - 1;
	w->h_last = w->h[w->last];
	w->h_before_last = w->h[w->last - 1];
	for (int s = 0; s <= LAT_MAX_SCORE; s++)
		w->example_task[s] = CNT_NO_TASK;
	w->grid[g->center] = (uint8_t)(1 + w->h[0]);
	for (;;) {
		size_t t = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
		if (t >= sh->ntasks)
			break;
		w->task = (uint32_t)t;
		cnt_run_task(w, g, &sh->tasks[t]);
	}
	free(w->grid);
	w->grid = NULL;
}

/* Chains of one or two residues have a single conformation and no contact. */
static void enumerate_trivial(const lat_seq *seq, lat_result *out)
{
	out->hist[0] = 1;
	if (seq->len == 2)
		out->examples[0][0] = lat_dir_letter(LAT_R);
}

int lat_enumerate(lat_kind kind, const lat_seq *seq, const lat_opts *opts, lat_result *out,
		  sf_err *err)
{
	if (opts->threads < 1 || opts->threads > 1024)
		return sf_err_set(err, SF_EINVAL, "threads %d is out of range (allowed: 1..1024)",
				  opts->threads);
	int rc = lat_check_budget(kind, seq->len, opts->budget, err);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	out->lattice = kind;
	out->len = seq->len;
	if (seq->len <= 2) {
		enumerate_trivial(seq, out);
		lat_result_summarise(out);
		return 0;
	}

	lat_geom g;
	lat_geom_init(&g, kind, seq->len);
	lat_task *tasks;
	size_t ntasks = lat_tasks_make(&g, seq->len, &tasks);
	cnt_worker *workers = calloc((size_t)opts->threads, sizeof *workers);
	if (!ntasks || !workers) {
		free(tasks);
		free(workers);
		return sf_err_set(err, SF_ENOMEM, "out of memory preparing the enumeration");
	}
	int nthreads = (size_t)opts->threads < ntasks ? opts->threads : (int)ntasks;
	cnt_shared sh = {
		.geom = &g, .seq = seq, .tasks = tasks, .ntasks = ntasks, .workers = workers
	};
	atomic_init(&sh.next, 0);
	rc = par_run(nthreads, cnt_worker_main, &sh, err);
	for (int i = 0; !rc && i < nthreads; i++)
		if (workers[i].failed)
			rc = sf_err_set(err, SF_ENOMEM, "out of memory for the enumeration grid");
	if (!rc) {
		for (int s = 0; s <= LAT_MAX_SCORE; s++) {
			int best = -1;
			for (int i = 0; i < nthreads; i++) {
				out->hist[s] += workers[i].hist[s];
				if (workers[i].example_task[s] != CNT_NO_TASK &&
				    (best < 0 ||
				     workers[i].example_task[s] < workers[best].example_task[s]))
					best = i;
			}
			for (int b = 0; best >= 0 && b < seq->len - 1; b++)
				out->examples[s][b] = lat_dir_letter(workers[best].example[s][b]);
		}
		lat_result_summarise(out);
	}
	free(tasks);
	free(workers);
	return rc;
}
