/*
 * cmap.c - the contact-map database: every conformation of a chain length,
 * reduced to its distinct contact maps, so that scoring a sequence costs one
 * pass of popcounts instead of an enumeration.
 *
 * A contact map is the set of residue pairs (i, j) that touch. The square
 * and the simple cubic lattice are bipartite, so only pairs an odd number
 * >= 3 apart can touch: 49 pairs at length 16, 64 at 18, 100 at 22, which
 * fit one or two 64-bit words. The score of a sequence in a conformation is
 * popcount(map & hh), where hh has the bits of pairs whose residues are both
 * H; the histogram is that, weighted by each map's multiplicity.
 *
 * Building: the same prefix tasks as the direct enumerator (walk.h). Each
 * worker keeps an open-addressing hash table of the maps it meets, with
 * their counts and the first conformation reaching each (depth-first key =
 * task index and leaf number within the task). The tables are merged keeping
 * the smallest key and the maps ordered by it: by their first appearance in
 * depth-first order. That order is the same for every thread count, so the
 * built database is too, and the first map of a score in the arrays holds
 * the example lat_enumerate() reports for it.
 *
 * Layout: structure of arrays (maps, multiplicities, folds), so the
 * histogram pass streams through just the maps and multiplicities.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../par.h"
#include "lattice.h"
#include "walk.h"

typedef struct cmap {
	uint64_t w[2];
} cmap;

typedef struct db_entry {
	cmap map;
	uint64_t key;   /* depth-first position of the first conformation */
	uint64_t moves; /* that conformation, 3 bits per bond */
	uint32_t count; /* conformations with this map; 0 marks an empty slot */
} db_entry;

typedef struct db_table {
	db_entry *slot;
	size_t cap, used;
	int failed;
} db_table;

struct lat_db {
	lat_kind kind;
	int len, words;
	size_t n;
	uint64_t total;
	uint64_t *map[2]; /* map[1] only when words == 2 */
	uint32_t *mult;
	uint64_t *moves; /* that conformation, 3 bits per bond */
	cmap pairbit[LAT_DB_MAX_LEN][LAT_DB_MAX_LEN];
	size_t bytes;
};

typedef struct db_worker {
	uint8_t *grid;
	int off[6];
	int last;
	const cmap (*pairbit)[LAT_DB_MAX_LEN];
	uint64_t task_key; /* task index << 40 */
	uint64_t leaf;     /* leaves seen in this task */
	uint8_t moves[LAT_MAX_LEN];
	db_table local;    /* this task's maps; small enough to stay in cache */
	uint32_t *touched; /* slots of `local` in use, to flush without a scan */
	db_table table;    /* every map this worker has met */
} db_worker;

typedef struct db_shared {
	const lat_geom *geom;
	const lat_db *db;
	const lat_task *tasks;
	size_t ntasks;
	atomic_size_t next;
	db_worker *workers;
} db_shared;

/* ---- the hash table ---- */

static uint64_t cmap_hash(cmap m)
{
	uint64_t x = m.w[0] * 0x9e3779b97f4a7c15ULL ^
		     (m.w[1] + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

static int table_init(db_table *t, size_t cap)
{
	t->slot = calloc(cap, sizeof *t->slot);
	t->cap = cap;
	t->used = 0;
	t->failed = !t->slot;
	return t->failed ? -1 : 0;
}

static db_entry *table_find(db_table *t, cmap m)
{
	size_t mask = t->cap - 1, i = cmap_hash(m) & mask;
	for (;; i = (i + 1) & mask) {
		db_entry *e = &t->slot[i];
		if (!e->count || (e->map.w[0] == m.w[0] && e->map.w[1] == m.w[1]))
			return e;
	}
}

static int table_grow(db_table *t)
{
	db_table bigger;
	if (table_init(&bigger, t->cap * 2))
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].count)
			*table_find(&bigger, t->slot[i].map) = t->slot[i];
	bigger.used = t->used;
	free(t->slot);
	*t = bigger;
	return 0;
}

/* Adds `n` conformations of map `m` whose first one is (key, moves). */
static void table_add(db_table *t, cmap m, uint32_t n, uint64_t key, uint64_t moves)
{
	if (t->failed)
		return; /* a table that could not grow may be nearly full */
	db_entry *e = table_find(t, m);
	if (e->count) {
		e->count += n;
		if (key < e->key) {
			e->key = key;
			e->moves = moves;
		}
		return;
	}
	*e = (db_entry){ .map = m, .key = key, .moves = moves, .count = n };
	if (++t->used * 2 > t->cap && table_grow(t))
		t->failed = 1;
}

/* ---- the walk ---- */

#define DB_LOCAL_CAP 4096 /* 160 KiB of entries: fits L2 */

/* Moves the task-local counts into the worker's table and empties `local`. */
static void db_flush(db_worker *w)
{
	for (size_t i = 0; i < w->local.used; i++) {
		db_entry *e = &w->local.slot[w->touched[i]];
		table_add(&w->table, e->map, e->count, e->key, e->moves);
		e->count = 0;
	}
	w->local.used = 0;
}

static uint64_t pack_moves(const uint8_t *moves, int bonds)
{
	uint64_t packed = 0;
	for (int b = 0; b < bonds; b++)
		packed |= (uint64_t)moves[b] << (3 * b);
	return packed;
}

/*
 * Counts one conformation with map `m`. Leaves of one task share most of
 * their maps, so they are counted in a small task-local table first and
 * flushed into the worker's big table when the task ends: the big table,
 * which holds nearly every map of the length, is touched once per distinct
 * map of a task instead of once per conformation.
 */
static void db_tally(db_worker *w, cmap m)
{
	uint64_t leaf = w->leaf++;
	db_entry *e = table_find(&w->local, m);
	if (e->count) {
		e->count++;
		return;
	}
	if (w->local.used * 2 + 2 > w->local.cap) {
		db_flush(w);
		e = table_find(&w->local, m);
	}
	*e = (db_entry){ .map = m,
			 .key = w->task_key | leaf,
			 .moves = pack_moves(w->moves, w->last),
			 .count = 1 };
	w->touched[w->local.used++] = (uint32_t)(e - w->local.slot);
}

#define NDIR 4
#define WORDS 1
#define KFN(name) name##_square1
#include "cmap_kernel.inc"
#undef WORDS
#undef KFN
#define WORDS 2
#define KFN(name) name##_square2
#include "cmap_kernel.inc"
#undef NDIR
#undef WORDS
#undef KFN
#define NDIR 6
#define WORDS 1
#define KFN(name) name##_cubic1
#include "cmap_kernel.inc"
#undef WORDS
#undef KFN
#define WORDS 2
#define KFN(name) name##_cubic2
#include "cmap_kernel.inc"
#undef NDIR
#undef WORDS
#undef KFN

static void db_run_task(db_worker *w, const lat_geom *g, const lat_db *db, const lat_task *t)
{
	int site = g->center;
	int sites[LAT_MAX_LEN];
	cmap m = { { 0, 0 } };
	for (int b = 0; b < t->bonds; b++) {
		int k = b + 1, q = site + g->off[t->dirs[b]];
		for (int e = 0; e < g->ndir; e++) {
			int c = w->grid[q + g->off[e]];
			if (c && c != k) {
				m.w[0] |= db->pairbit[c - 1][k].w[0];
				m.w[1] |= db->pairbit[c - 1][k].w[1];
			}
		}
		w->grid[q] = (uint8_t)(k + 1);
		w->moves[b] = t->dirs[b];
		sites[b] = site = q;
	}
	int k = t->bonds + 1;
	if (g->kind == LAT_CUBIC && db->words == 1)
		dfs_cubic1(w, k, site, m, t->phase);
	else if (g->kind == LAT_CUBIC)
		dfs_cubic2(w, k, site, m, t->phase);
	else if (db->words == 1)
		dfs_square1(w, k, site, m, t->phase);
	else
		dfs_square2(w, k, site, m, t->phase);
	for (int b = 0; b < t->bonds; b++)
		w->grid[sites[b]] = 0;
}

/* Frees a worker's walk state; its big table outlives it until the merge. */
static void db_worker_release(db_worker *w)
{
	free(w->grid);
	free(w->touched);
	free(w->local.slot);
	w->grid = NULL;
	w->touched = NULL;
	w->local.slot = NULL;
}

static void db_worker_main(void *arg, int index)
{
	db_shared *sh = arg;
	db_worker *w = &sh->workers[index];
	const lat_geom *g = sh->geom;
	w->grid = calloc((size_t)g->cells, 1);
	w->touched = malloc(DB_LOCAL_CAP / 2 * sizeof *w->touched);
	if (!w->grid || !w->touched || table_init(&w->local, DB_LOCAL_CAP) ||
	    table_init(&w->table, 1024)) {
		db_worker_release(w);
		w->table.failed = 1;
		return;
	}
	memcpy(w->off, g->off, sizeof w->off);
	w->last = sh->db->len - 1;
	w->pairbit = sh->db->pairbit;
	w->grid[g->center] = 1;
	for (;;) {
		size_t t = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
		if (t >= sh->ntasks || w->table.failed)
			break;
		w->task_key = (uint64_t)t << 40;
		w->leaf = 0;
		db_run_task(w, g, sh->db, &sh->tasks[t]);
		db_flush(w);
	}
	db_worker_release(w);
}

/* ---- assembling the database ---- */

/*
 * Sorts n (key, slot) pairs by key, least significant byte first, skipping
 * the bytes in which all keys agree (most of them: keys are task << 40 |
 * leaf). Radix rather than qsort: this sort is the serial tail of a build.
 */
static int sort_by_key(uint64_t (*pairs)[2], size_t n)
{
	uint64_t(*tmp)[2] = malloc(n * sizeof *tmp);
	if (!tmp)
		return -1;
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[pairs[i][0] >> shift & 0xff]++;
		if (count[pairs[0][0] >> shift & 0xff] == n)
			continue;
		size_t at = 0;
		for (int b = 0; b < 256; b++) {
			size_t c = count[b];
			count[b] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++) {
			size_t b = pairs[i][0] >> shift & 0xff;
			tmp[count[b]][0] = pairs[i][0];
			tmp[count[b]++][1] = pairs[i][1];
		}
		memcpy(pairs, tmp, n * sizeof *tmp);
	}
	free(tmp);
	return 0;
}

/* Moves the merged table into the database's arrays in first-appearance order. */
static int db_fill(lat_db *db, const db_table *merged)
{
	uint64_t(*order)[2] = malloc(merged->used * sizeof *order);
	if (!order)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < merged->cap; i++) {
		if (merged->slot[i].count) {
			order[n][0] = merged->slot[i].key;
			order[n++][1] = i;
		}
	}
	db->n = n;
	db->map[0] = malloc(n * sizeof(uint64_t));
	db->map[1] = db->words == 2 ? malloc(n * sizeof(uint64_t)) : NULL;
	db->mult = malloc(n * sizeof(uint32_t));
	db->moves = malloc(n * sizeof(uint64_t));
	if (!db->map[0] || (db->words == 2 && !db->map[1]) || !db->mult || !db->moves ||
	    sort_by_key(order, n)) {
		free(order);
		return -1;
	}
	db->total = 0;
	for (size_t i = 0; i < n; i++) {
		const db_entry *e = &merged->slot[order[i][1]];
		db->map[0][i] = e->map.w[0];
		if (db->map[1])
			db->map[1][i] = e->map.w[1];
		db->mult[i] = e->count;
		db->moves[i] = e->moves;
		db->total += e->count;
	}
	free(order);
	db->bytes =
		n * (sizeof(uint64_t) * (size_t)db->words + sizeof(uint32_t) + sizeof(uint64_t)) +
		sizeof *db;
	return 0;
}

/* Numbers the pairs that can touch: (i, j), j - i odd and >= 3. */
static void db_number_pairs(lat_db *db)
{
	int bit = 0;
	memset(db->pairbit, 0, sizeof db->pairbit);
	for (int i = 0; i < db->len; i++) {
		for (int j = i + 3; j < db->len; j += 2, bit++) {
			db->pairbit[i][j].w[bit >> 6] = 1ULL << (bit & 63);
			db->pairbit[j][i] = db->pairbit[i][j];
		}
	}
	db->words = bit > 64 ? 2 : 1;
}

/* Chains of one or two residues: one conformation, no pair can touch. */
static int db_fill_trivial(lat_db *db)
{
	db_table t;
	if (table_init(&t, 2))
		return -1;
	table_add(&t, (cmap){ { 0, 0 } }, 1, 0, 0);
	int rc = db_fill(db, &t);
	free(t.slot);
	return rc;
}

lat_db *lat_db_build(lat_kind kind, int len, const lat_opts *opts, sf_err *err)
{
	if (len < 2 || len > LAT_DB_MAX_LEN) {
		sf_err_set(err, SF_EINVAL,
			   "contact-map database length %d is out of range (allowed: 2..%d)", len,
			   LAT_DB_MAX_LEN);
		return NULL;
	}
	if (opts->threads < 1 || opts->threads > 1024) {
		sf_err_set(err, SF_EINVAL, "threads %d is out of range (allowed: 1..1024)",
			   opts->threads);
		return NULL;
	}
	double budget = opts->budget > 0 ? opts->budget : LAT_DEFAULT_DB_BUDGET;
	if (lat_check_budget(kind, len, budget, err))
		return NULL;
	/* Multiplicities are 32-bit: a map (the empty one first) may stand for
	 * nearly every conformation, so the total must fit. */
	if (lat_estimate(kind, len) >= (double)UINT32_MAX) {
		sf_err_set(err, SF_EBUDGET,
			   "a contact-map database of length %d on the %s lattice would hold about "
			   "%.3g conformations; at most %.3g fit its 32-bit counts",
			   len, lat_kind_name(kind), lat_estimate(kind, len), (double)UINT32_MAX);
		return NULL;
	}
	lat_db *db = calloc(1, sizeof *db);
	if (!db) {
		sf_err_set(err, SF_ENOMEM, "out of memory for the contact-map database");
		return NULL;
	}
	db->kind = kind;
	db->len = len;
	db_number_pairs(db);
	if (len <= 2) {
		if (db_fill_trivial(db))
			goto nomem;
		return db;
	}

	lat_geom g;
	lat_geom_init(&g, kind, len);
	lat_task *tasks;
	size_t ntasks = lat_tasks_make(&g, len, &tasks);
	db_worker *workers = calloc((size_t)opts->threads, sizeof *workers);
	if (!ntasks || !workers) {
		free(tasks);
		free(workers);
		goto nomem;
	}
	int nthreads = (size_t)opts->threads < ntasks ? opts->threads : (int)ntasks;
	db_shared sh = {
		.geom = &g, .db = db, .tasks = tasks, .ntasks = ntasks, .workers = workers
	};
	atomic_init(&sh.next, 0);
	int rc = par_run(nthreads, db_worker_main, &sh, err);

	/* Merge into the largest table: fewest moves. */
	int into = 0;
	for (int i = 0; i < nthreads; i++) {
		if (workers[i].table.failed && !rc)
			rc = SF_ENOMEM;
		if (workers[i].table.used > workers[into].table.used)
			into = i;
	}
	db_table *merged = &workers[into].table;
	for (int i = 0; !rc && i < nthreads; i++) {
		const db_table *t = &workers[i].table;
		for (size_t j = 0; i != into && j < t->cap; j++)
			if (t->slot[j].count)
				table_add(merged, t->slot[j].map, t->slot[j].count, t->slot[j].key,
					  t->slot[j].moves);
		if (merged->failed)
			rc = SF_ENOMEM;
	}
	if (!rc && db_fill(db, merged))
		rc = SF_ENOMEM;
	for (int i = 0; i < nthreads; i++)
		free(workers[i].table.slot);
	free(workers);
	free(tasks);
	if (rc == SF_ENOMEM)
		goto nomem;
	if (rc) {
		lat_db_free(db);
		return NULL;
	}
	return db;
nomem:
	sf_err_set(err, SF_ENOMEM, "out of memory building the contact-map database");
	lat_db_free(db);
	return NULL;
}

void lat_db_free(lat_db *db)
{
	if (!db)
		return;
	free(db->map[0]);
	free(db->map[1]);
	free(db->mult);
	free(db->moves);
	free(db);
}

lat_kind lat_db_kind(const lat_db *db)
{
	return db->kind;
}

int lat_db_len(const lat_db *db)
{
	return db->len;
}

size_t lat_db_maps(const lat_db *db)
{
	return db->n;
}

uint64_t lat_db_conformations(const lat_db *db)
{
	return db->total;
}

size_t lat_db_bytes(const lat_db *db)
{
	return db->bytes;
}

/* ---- scoring a sequence ---- */

/* The bits of the pairs whose two residues are both H. */
static cmap hh_mask(const lat_db *db, const lat_seq *seq)
{
	cmap m = { { 0, 0 } };
	for (int i = 0; i < db->len; i++) {
		for (int j = i + 3; j < db->len; j += 2) {
			if (seq->h[i] && seq->h[j]) {
				m.w[0] |= db->pairbit[i][j].w[0];
				m.w[1] |= db->pairbit[i][j].w[1];
			}
		}
	}
	return m;
}

typedef uint64_t hist4[4][LAT_MAX_SCORE + 1];

/*
 * The histogram pass: sub[u][popcount(map & hh)] += multiplicity. Four
 * interleaved sub-histograms break the store-to-load dependency between
 * consecutive maps of the same score. `two` (a constant after inlining)
 * selects the two-word maps.
 */
static inline __attribute__((always_inline)) void hist_loop(const lat_db *db, cmap hh, hist4 sub,
							    const int two)
{
	const uint64_t *m0 = db->map[0], *m1 = db->map[1];
	const uint32_t *mult = db->mult;
	const size_t n = db->n;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		for (int u = 0; u < 4; u++) {
			size_t k = i + (size_t)u;
			int s = __builtin_popcountll(m0[k] & hh.w[0]);
			if (two)
				s += __builtin_popcountll(m1[k] & hh.w[1]);
			sub[u][s] += mult[k];
		}
	}
	for (; i < n; i++) {
		int s = __builtin_popcountll(m0[i] & hh.w[0]);
		if (two)
			s += __builtin_popcountll(m1[i] & hh.w[1]);
		sub[0][s] += mult[i];
	}
}

static void hist_pass_generic(const lat_db *db, cmap hh, hist4 sub)
{
	if (db->words == 2)
		hist_loop(db, hh, sub, 1);
	else
		hist_loop(db, hh, sub, 0);
}

/*
 * The same pass compiled with the POPCNT instruction, chosen at run time:
 * Debian's x86-64 baseline lacks it, and without it a popcount is a dozen
 * instructions.
 */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt"))) static void hist_pass_popcnt(const lat_db *db, cmap hh, hist4 sub)
{
	if (db->words == 2)
		hist_loop(db, hh, sub, 1);
	else
		hist_loop(db, hh, sub, 0);
}
#endif

static void hist_pass(const lat_db *db, cmap hh, hist4 sub)
{
	memset(sub, 0, sizeof(hist4));
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("popcnt")) {
		hist_pass_popcnt(db, hh, sub);
		return;
	}
#endif
	hist_pass_generic(db, hh, sub);
}

int lat_db_histogram(const lat_db *db, const lat_seq *seq, uint64_t hist[LAT_MAX_SCORE + 1])
{
	if (seq->len != db->len)
		return SF_EINVAL;
	hist4 sub;
	hist_pass(db, hh_mask(db, seq), sub);
	int max = 0;
	for (int s = 0; s <= LAT_MAX_SCORE; s++) {
		hist[s] = sub[0][s] + sub[1][s] + sub[2][s] + sub[3][s];
		if (hist[s])
			max = s;
	}
	return max;
}

int lat_db_evaluate(const lat_db *db, const lat_seq *seq, lat_result *out, sf_err *err)
{
	if (seq->len != db->len)
		return sf_err_set(err, SF_EINVAL,
				  "sequence length %d does not match the database's length %d",
				  seq->len, db->len);
	memset(out, 0, sizeof *out);
	out->lattice = db->kind;
	out->len = db->len;
	lat_db_histogram(db, seq, out->hist);
	lat_result_summarise(out);

	/* Maps are in first-appearance order: a score's first map holds its example. */
	cmap hh = hh_mask(db, seq);
	int missing = out->distinct_scores;
	for (size_t i = 0; missing && i < db->n; i++) {
		int s = __builtin_popcountll(db->map[0][i] & hh.w[0]) +
			(db->map[1] ? __builtin_popcountll(db->map[1][i] & hh.w[1]) : 0);
		if (out->examples[s][0])
			continue;
		for (int b = 0; b < db->len - 1; b++)
			out->examples[s][b] = lat_dir_letter((int)(db->moves[i] >> (3 * b) & 7));
		missing--;
	}
	return 0;
}
