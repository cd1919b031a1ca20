/*
 * measure.c - a level's difficulty as a player faces it (issue 16).
 *
 * The numbers (dig_measure in measure.h):
 *
 * - A state is a dig_state reached from the start by valid taps. Two
 *   states are the same when every byte but turns_used is equal (the
 *   oracle's choice in tests/digger_support.h): turns_used is the number of
 *   taps made, which the rest determines (the budget minus turns_left plus
 *   what spent energy gave), so leaving it out merges nothing. Every tap
 *   adds one to turns_used, so the state graph is layered by taps made: it
 *   has no cycles, every state has one depth, and the turn budget makes it
 *   finite. A won state ends the game: no tap is taken from it.
 * - optimum: the fewest taps that win from the start (-1: no win, or not
 *   known within the budgets).
 * - dead_end_share: the share of states from which no win is reachable
 *   (won states count as winnable).
 * - optimal_plays: the number of distinct tap sequences of exactly the
 *   optimum's length that win (1 for a level won at the start, 0 for one
 *   that cannot be won). A double: it grows like a factorial.
 * - branching: along one optimal play (the one given, or the first in slot
 *   order), the mean number of valid taps before each of its taps;
 *   optimal_branching: the mean number of those taps after which a win in
 *   the optimum's remaining taps minus one is still possible (at least 1:
 *   the play's own tap). Both 0 when the optimum is 0 or there is none.
 * - random_win_rate: random_wins / random_plays, where a random play taps
 *   uniformly among the valid taps until it wins or no tap is valid. The
 *   default is 4 000 plays (1 000 until 2026-12-05): at hardest and expert
 *   random plays almost never win (hardest seeds 1-480: a mean of 0.03 %,
 *   expert's 0.001 %), and with 1 000 plays 86 % of hardest levels read 0,
 *   so 1.5 % of samples of 30 hardest levels read no better than 30 expert
 *   levels (5 000 draws each); with 4 000 plays 72 % read 0 and 0.025 % of
 *   the samples tie or invert (10 000 plays: 61 %, 0.015 %), for about
 *   11 ms more per hardest level (median 75 -> 86 ms, make bench).
 *
 * Exact mode, when the reachable graph has at most graph_states states:
 * breadth-first search over the states with a hash set of compact keys (the
 * bytes of dig_state that can differ from the start: visited[] and pos,
 * prev of the level's machines, gold, spent, uses of its slots, web_left of
 * cells that start non-zero, frozen, next_gold, turns_left). Every tap's
 * undo log is checked to write only those bytes (or turns_used), and a
 * level where one does not is enumerated again on whole states. Taps are
 * tried only on slots with a use left whose line holds a machine (the
 * engine refuses the others). Successors are kept as edge lists, one edge
 * per valid tap; since every edge goes one layer deeper, one pass in
 * reverse discovery order gives each state's distance to a win and its
 * number of shortest winning sequences. Memory: about 40 + key bytes
 * (16..100) per state plus 4 per edge, under 10 MB at the default limit.
 *
 * Sampled mode, when the graph is larger (exact false; states counts the
 * samples, decided those the solver settled). dead_end_share estimates
 * exact mode's share from samples, each solved (MEASURE_BOUND) within
 * solver_states: the share proved dead among the decided. The exact share
 * is made of the deep layers, where states multiply and nearly all are
 * dead, so a sample first draws a depth d in proportion to the tap
 * sequences of d taps (Knuth's estimate, from the random plays: each adds,
 * at every depth it reaches, the product of the numbers of valid taps
 * before it), then takes the state at depth d of a random play that gets
 * there (up to DEPTH_TRIES plays, else the sample stays undecided).
 * Layers are weighed by tap sequences rather than distinct states, and
 * within a layer states come as often as random play meets them, so this
 * is still another average than exact mode's (the test works out its
 * expectation exactly on small levels); against exact mode on the same
 * levels, sampling forced, 50 samples: 30 hard levels, error 0.065 RMS
 * (+0.016 mean); 22 hardest levels whose graphs exact mode enumerates
 * within 3 million states (exact 0.973 to 1.000), 0.007 RMS (+0.001).
 * Before 2026-12-04 a sample was a state drawn uniformly along a random
 * play, which weighs the shallow layers as much as the deep ones: 0.144
 * (-0.121) and 0.108 (-0.074), and the more samples a stronger solver
 * settled, the lower it read. With random_plays 0 that is still the way:
 * there is nothing to weigh the depths by.
 *
 * optimal_plays (sampled mode): a depth-first search from the start that
 * counts tap sequences winning in exactly the optimum's taps, memoised on
 * the state, skipping a tap only when a solve from the state after it
 * proves that no win in the taps left exists (solved with turns_left
 * capped at the taps left: a win within k taps needs no more than k turns,
 * and a cap never allows what the budget forbids, so the capped solve
 * answers exactly that question and prunes everything longer), first
 * screened by a bound (the gold farthest from its nearest machine, in grid
 * steps). A solve that finds a win in exactly the taps left also settles
 * every state along the win it found (each wins in exactly the taps that
 * win has left), so those are not solved again. A tap the solver cannot
 * settle in budget is followed, so the count stays exact; only when
 * count_work is spent are taps skipped
 * unasked, then optimal_plays is a lower bound and optimal_plays_exact
 * false. Branching reads the same memo (the count passes through every
 * state of the play) and is a lower bound in the same case. On 30 hardest
 * levels whose graphs exact mode could still enumerate (up to 3 million
 * states), every count sampled mode called exact equalled exact mode's,
 * branching included, and every other count was lower.
 *
 * The random plays and the samples draw from two streams split from
 * rng_seed(seed), so the same level, play and options give the same
 * numbers; nothing depends on time or threads.
 *
 * Cost, one core, the defaults (graph_states 30 000, 4 000 random plays,
 * 50 samples, solver_states 2 000, count_work 50 000). Exact mode costs
 * about 1 to 2 us per state, so at most about 0.05 s, and a graph found
 * too large costs that much before sampling starts; sampled mode is the
 * solver (about 1 to 2 us per expanded state): the samples' solves (at
 * most solver_states each) and the counting (at most about count_work).
 * Median / max per level over seeds 1..30 of each preset (make bench,
 * 2026-12-05): easiest 1.1 / 1.3 ms, easy 1.6 / 2.7 ms, medium 4.1 / 7.5
 * ms, hard 7.9 / 33 ms (29 of 30 exact), hardest 86 / 332 ms (4 exact),
 * expert (10 x 6, 6 machines) 163 / 800 ms (none exact). Graphs of hardest
 * levels hold 10 thousand to 10 million states (median 0.4 million). The
 * count is the part that grows with its budget: at count_work 50 000 it is
 * a lower bound on most sampled hardest levels (median 8.5 optimal plays,
 * exact on 10 of 30); with solver_states 5 000, count_work 300 000 gives a
 * median of about 100 for 0.25 s a level, and 1 000 000 makes the count
 * exact on 29 of 30 hardest levels for a median of 0.45 s and a maximum of
 * 4.3 s.
 */
#include "measure.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define STATE_BYTES offsetof(dig_state, turns_used) /* the bytes that name a state */
#define KEY_MAX ((sizeof(dig_state) + 7) / 8 * 8)
#define RANGES_MAX 96
#define NO_WIN 0xFFu /* distance of a state that cannot win (> DIG_MAX_TURNS) */
#define TOO_BIG 2    /* exact mode: more than graph_states states */
#define NOT_FIT 3    /* exact mode: a state left the compact layout */
#define NOT_ASKED 2  /* sampled mode: a question count_work left unasked */
#define DEPTH_TRIES 1024 /* sampled mode: random plays tried to reach a sample's depth */
/* Sampled mode's solves: the assignment bound, not the solver's default
 * (which adds the uses bound): the work budgets count states, and the
 * uses bound's states cost about four times as much. With it the same
 * budgets took twice as long (30 hardest levels 3.5 to 6.6 s, the slowest
 * 0.39 to 1.4 s) for the same dead-end shares and counts that got further. */
#define MEASURE_BOUND DIG_BOUND_ASSIGN

_Static_assert(DIG_MAX_TURNS < NO_WIN, "a distance fits a byte");

void dig_measure_opts_default(dig_measure_opts *o)
{
	memset(o, 0, sizeof *o);
	o->graph_states = 30000;
	o->random_plays = 4000; /* see the design note: why not 1 000 */
	o->samples = 50;
	o->solver_states = 2000;
	o->count_work = 50000;
	o->seed = 1;
}

/* ---- compact keys ---- */

/* Which bytes of a dig_state a key holds; the rest is copied from tmpl. */
typedef struct layout {
	int nranges;
	uint16_t off[RANGES_MAX], len[RANGES_MAX];
	size_t nbytes;                     /* bytes kept */
	uint8_t at[KEY_MAX];               /* key byte k is state byte at[k] */
	bool may_write[sizeof(dig_state)]; /* kept bytes and turns_used */
	size_t bytes;                      /* key length, a multiple of 8 (zero padded) */
	dig_state tmpl;
} layout;

_Static_assert(sizeof(dig_state) <= 256, "a state byte's offset fits a uint8_t");

static void layout_init(layout *L, const dig_level *lv, const dig_state *start, bool whole)
{
	uint8_t keep[sizeof(dig_state)] = { 0 };
	if (whole) {
		memset(keep, 1, STATE_BYTES);
	} else {
		int m = lv->machines, cells = lv->w * lv->h;
		memset(keep + offsetof(dig_state, visited), 1, 8 * (size_t)m);
		memset(keep + offsetof(dig_state, gold), 1, 8);
		memset(keep + offsetof(dig_state, spent), 1, 8);
		memset(keep + offsetof(dig_state, pos), 1, (size_t)m);
		memset(keep + offsetof(dig_state, prev), 1, (size_t)m);
		memset(keep + offsetof(dig_state, uses), 1, (size_t)dig_slots(lv));
		for (int c = 0; c < cells; c++)
			if (start->web_left[c])
				keep[offsetof(dig_state, web_left) + (size_t)c] = 1;
		keep[offsetof(dig_state, frozen)] = 1;
		keep[offsetof(dig_state, next_gold)] = 1;
		memset(keep + offsetof(dig_state, turns_left), 1, sizeof start->turns_left);
	}
	L->nranges = 0;
	L->bytes = 0;
	for (size_t i = 0; i < STATE_BYTES;) {
		if (!keep[i]) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < STATE_BYTES && keep[j])
			j++;
		/* At most RANGES_MAX runs: 64 web cells and a few fields. */
		L->off[L->nranges] = (uint16_t)i;
		L->len[L->nranges] = (uint16_t)(j - i);
		L->nranges++;
		L->bytes += j - i;
		i = j;
	}
	L->nbytes = 0;
	memset(L->may_write, 0, sizeof L->may_write);
	for (size_t i = 0; i < STATE_BYTES; i++)
		if (keep[i]) {
			L->at[L->nbytes++] = (uint8_t)i;
			L->may_write[i] = true;
		}
	for (size_t i = 0; i < sizeof start->turns_used; i++)
		L->may_write[offsetof(dig_state, turns_used) + i] = true;
	L->bytes = (L->bytes + 7) / 8 * 8;
	L->tmpl = *start;
}

static void pack(const layout *L, const dig_state *s, uint8_t *key)
{
	const uint8_t *b = (const uint8_t *)s;
	size_t k = 0;
	for (; k < L->nbytes; k++)
		key[k] = b[L->at[k]];
	for (; k < L->bytes; k++)
		key[k] = 0;
}

/* The state of `key`, `depth` taps from the start. */
static void unpack(const layout *L, const uint8_t *key, int depth, dig_state *s)
{
	*s = L->tmpl;
	uint8_t *b = (uint8_t *)s;
	for (size_t k = 0; k < L->nbytes; k++)
		b[L->at[k]] = key[k];
	s->turns_used = (int16_t)(L->tmpl.turns_used + depth);
}

/* Whether `s` keeps every byte outside the key as the start had it. */
static bool fits(const layout *L, const dig_state *s)
{
	dig_state t = L->tmpl;
	const uint8_t *from = (const uint8_t *)s;
	uint8_t *to = (uint8_t *)&t;
	for (int r = 0; r < L->nranges; r++)
		memcpy(to + L->off[r], from + L->off[r], L->len[r]);
	return memcmp(&t, s, STATE_BYTES) == 0;
}

/* Whether the tap logged in `cmd` wrote only bytes the key holds. */
static bool fits_tap(const layout *L, const dig_cmd *cmd)
{
	for (int i = 0; i < cmd->nlog; i++)
		for (int k = 0; k < cmd->log[i].size; k++)
			if (!L->may_write[cmd->log[i].off + k])
				return false;
	return true;
}

static uint64_t key_hash(const uint8_t *key, size_t bytes)
{
	uint64_t h = 0x9E3779B97F4A7C15u;
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t w;
		memcpy(&w, key + i, 8);
		h = (h ^ w) * 0xFF51AFD7ED558CCDu;
		h ^= h >> 32;
	}
	h ^= h >> 29;
	h *= 0xC4CEB9FE1A85EC53u;
	h ^= h >> 32;
	return h;
}

/* ---- a set of keys, each with an index in insertion order ---- */

typedef struct keyset {
	size_t bytes;
	uint8_t *keys;  /* [cap * bytes] */
	uint64_t *slot; /* 0 empty, else hash's high 32 bits << 32 | index + 1 */
	uint64_t mask;
	uint32_t n, cap, limit;
} keyset;

static void keyset_free(keyset *ks)
{
	free(ks->keys);
	free(ks->slot);
	memset(ks, 0, sizeof *ks);
}

static int keyset_init(keyset *ks, size_t bytes, uint32_t limit)
{
	memset(ks, 0, sizeof *ks);
	ks->bytes = bytes;
	ks->limit = limit;
	ks->cap = 1024;
	ks->mask = 4095;
	ks->keys = malloc(ks->cap * bytes);
	ks->slot = calloc(ks->mask + 1, sizeof *ks->slot);
	if (!ks->keys || !ks->slot) {
		keyset_free(ks);
		return SF_ENOMEM;
	}
	return 0;
}

static int keyset_grow_table(keyset *ks)
{
	uint64_t mask = ks->mask * 2 + 1;
	uint64_t *slot = calloc(mask + 1, sizeof *slot);
	if (!slot)
		return SF_ENOMEM;
	for (uint32_t i = 0; i < ks->n; i++) {
		uint64_t h = key_hash(ks->keys + (size_t)i * ks->bytes, ks->bytes);
		uint64_t p = h & mask;
		while (slot[p])
			p = (p + 1) & mask;
		slot[p] = (h >> 32 << 32) | (uint64_t)(i + 1);
	}
	free(ks->slot);
	ks->slot = slot;
	ks->mask = mask;
	return 0;
}

/*
 * Finds `key` (*index) or, when `add`, adds it: 1 added, 0 found, TOO_BIG
 * when it is absent and not added (not `add`, or the limit is reached),
 * SF_ENOMEM.
 */
static int keyset_put(keyset *ks, const uint8_t *key, bool add, uint32_t *index)
{
	uint64_t h = key_hash(key, ks->bytes);
	uint64_t p = h & ks->mask;
	for (; ks->slot[p]; p = (p + 1) & ks->mask) {
		uint64_t e = ks->slot[p];
		uint32_t i = (uint32_t)(e & 0xFFFFFFFFu) - 1;
		if (e >> 32 == h >> 32 &&
		    memcmp(ks->keys + (size_t)i * ks->bytes, key, ks->bytes) == 0) {
			*index = i;
			return 0;
		}
	}
	if (!add)
		return TOO_BIG;
	if (ks->n >= ks->limit)
		return TOO_BIG;
	if (ks->n == ks->cap) {
		uint32_t cap = ks->cap > ks->limit / 2 ? ks->limit : ks->cap * 2;
		uint8_t *keys = realloc(ks->keys, (size_t)cap * ks->bytes);
		if (!keys)
			return SF_ENOMEM;
		ks->keys = keys;
		ks->cap = cap;
	}
	memcpy(ks->keys + (size_t)ks->n * ks->bytes, key, ks->bytes);
	*index = ks->n++;
	if ((uint64_t)ks->n * 2 > ks->mask) {
		int rc = keyset_grow_table(ks);
		if (rc)
			return rc;
		return 1;
	}
	ks->slot[p] = (h >> 32 << 32) | (uint64_t)ks->n;
	return 1;
}

/* ---- random plays ---- */

/*
 * The slots the engine might let `s` tap into slots[], their number: those
 * with a use left whose line holds a machine (the engine refuses the others
 * outright; it is asked about the rest).
 */
static int candidate_slots(const dig_level *lv, const uint64_t *line, const dig_state *s,
			   uint8_t *slots)
{
	uint64_t at = 0;
	for (int m = 0; m < lv->machines; m++)
		at |= UINT64_C(1) << s->pos[m];
	int n = 0;
	for (int slot = 0; slot < dig_slots(lv); slot++)
		if (s->uses[slot] && (line[slot] & at))
			slots[n++] = (uint8_t)slot;
	return n;
}

/* The valid slots of `s` into slots[], their number. */
static int valid_slots(const dig_level *lv, const uint64_t *line, const dig_state *s,
		       uint8_t *slots)
{
	uint8_t cand[DIG_MAX_ARROWS];
	int n = 0, k = candidate_slots(lv, line, s, cand);
	for (int i = 0; i < k; i++)
		if (dig_arrow_valid(lv, s, cand[i]))
			slots[n++] = cand[i];
	return n;
}

/*
 * One random play from the start: uniformly random valid taps until a win
 * or no valid tap. The states met (start included) go to path[] when it is
 * not NULL; when taps is not NULL, taps[d] gains the product of the numbers
 * of valid taps before depth d, for every depth d the play reaches (its
 * mean over plays estimates the tap sequences of d taps, unbiased: Knuth's
 * estimator of a tree's size). Returns the states' number, negated when
 * the play did not win.
 */
static int random_play(const dig_level *lv, const uint64_t *line, rng *r, dig_state *path,
		       double *taps)
{
	dig_state s;
	dig_cmd cmd;
	uint8_t slots[DIG_MAX_ARROWS];
	dig_state_init(lv, &s);
	double ways = 1; /* the product of the valid taps' numbers so far */
	int n = 0;
	for (;;) {
		if (path)
			path[n] = s;
		if (taps)
			taps[n] += ways;
		n++;
		if (dig_won(&s))
			return n;
		int k = valid_slots(lv, line, &s, slots);
		if (k == 0 || n > DIG_MAX_TURNS)
			return -n;
		ways *= k;
		dig_arrow_do(lv, &s, slots[rng_below(r, (uint64_t)k)], &cmd);
	}
}

/*
 * One random play from the start as random_play plays it (uniformly random
 * valid taps until a win or none is valid): true when it wins. It draws
 * the candidate slots in random order and keeps the first the engine
 * accepts (the first valid slot of a uniformly random order is uniform
 * among the valid ones), so it asks the engine about fewer slots than
 * every candidate (1.6 times faster on hardest levels: 2.8 against 4.5 ms
 * per 1 000 plays). The same law as random_play's, not the same plays:
 * measure's rates keep random_play, which also needs the valid taps'
 * number.
 */
static bool random_win(const dig_level *lv, const uint64_t *line, rng *r)
{
	dig_state s;
	dig_cmd cmd;
	uint8_t cand[DIG_MAX_ARROWS];
	dig_state_init(lv, &s);
	for (int n = 1;; n++) {
		if (dig_won(&s))
			return true;
		if (n > DIG_MAX_TURNS)
			return false;
		int k = candidate_slots(lv, line, &s, cand);
		for (;;) {
			if (k == 0)
				return false;
			int i = (int)rng_below(r, (uint64_t)k);
			if (dig_arrow_do(lv, &s, cand[i], &cmd) == 0)
				break;
			cand[i] = cand[--k];
		}
	}
}

/* Every slot's line into line[] (dig_slot_line() loops over a column: worked
 * out once per level, not per tap). */
static void slot_lines(const dig_level *lv, uint64_t *line)
{
	for (int slot = 0; slot < dig_slots(lv); slot++)
		line[slot] = dig_slot_line(lv, slot);
}

/* See measure.h. */
int dig_random_wins(const dig_level *lv, int plays, uint64_t seed, int enough)
{
	uint64_t line[DIG_MAX_ARROWS] = { 0 };
	slot_lines(lv, line);
	rng r;
	rng_seed(&r, seed);
	int wins = 0;
	for (int k = 0; k < plays && (enough <= 0 || wins < enough); k++)
		wins += random_win(lv, line, &r);
	return wins;
}

/* ---- exact mode ---- */

typedef struct graph {
	keyset ks;
	uint8_t *depth, *dist;
	uint32_t *estart; /* edges of state i: edge[estart[i] .. estart[i + 1]) */
	uint32_t *edge;
	uint64_t nedges, edge_cap;
	double *ways;
} graph;

static void graph_free(graph *g)
{
	keyset_free(&g->ks);
	free(g->depth);
	free(g->dist);
	free(g->estart);
	free(g->edge);
	free(g->ways);
	memset(g, 0, sizeof *g);
}

static int push_edge(graph *g, uint32_t to)
{
	if (g->nedges == UINT32_MAX)
		return TOO_BIG; /* edge indices are 32-bit */
	if (g->nedges == g->edge_cap) {
		uint64_t cap = g->edge_cap ? g->edge_cap * 2 : 4096;
		uint32_t *e = realloc(g->edge, cap * sizeof *e);
		if (!e)
			return SF_ENOMEM;
		g->edge = e;
		g->edge_cap = cap;
	}
	g->edge[g->nedges++] = to;
	return 0;
}

/* Grows the per-state arrays to the key set's capacity. */
static int graph_fit(graph *g, uint32_t *have)
{
	if (*have >= g->ks.cap)
		return 0;
	uint32_t cap = g->ks.cap;
	uint8_t *d = realloc(g->depth, cap);
	if (!d)
		return SF_ENOMEM;
	g->depth = d;
	uint32_t *e = realloc(g->estart, ((size_t)cap + 1) * sizeof *e);
	if (!e)
		return SF_ENOMEM;
	g->estart = e;
	*have = cap;
	return 0;
}

/* Breadth-first search of every state: 0, TOO_BIG, NOT_FIT or SF_ENOMEM. */
static int graph_build(graph *g, const dig_level *lv, const uint64_t *line, const layout *L,
		       uint64_t limit)
{
	int rc = keyset_init(&g->ks, L->bytes,
			     limit > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)limit);
	if (rc)
		return rc;
	uint32_t have = 0;
	uint8_t key[KEY_MAX];
	uint32_t idx;
	dig_state s;
	dig_cmd cmd;
	pack(L, &L->tmpl, key);
	if ((rc = keyset_put(&g->ks, key, true, &idx)) < 0 || rc == TOO_BIG ||
	    (rc = graph_fit(g, &have)) != 0)
		return rc;
	g->depth[0] = 0;
	for (uint32_t i = 0; i < g->ks.n; i++) {
		g->estart[i] = (uint32_t)g->nedges;
		unpack(L, g->ks.keys + (size_t)i * L->bytes, g->depth[i], &s);
		if (dig_won(&s))
			continue; /* the game is over */
		uint8_t cand[DIG_MAX_ARROWS];
		int ncand = candidate_slots(lv, line, &s, cand);
		for (int c = 0; c < ncand; c++) {
			if (dig_arrow_do(lv, &s, cand[c], &cmd) != 0)
				continue;
			if (!fits_tap(L, &cmd))
				return NOT_FIT;
			pack(L, &s, key);
			dig_arrow_undo(&s, &cmd);
			rc = keyset_put(&g->ks, key, true, &idx);
			if (rc < 0 || rc == TOO_BIG)
				return rc;
			if (rc == 1) {
				if ((rc = graph_fit(g, &have)) != 0)
					return rc;
				g->depth[idx] = (uint8_t)(g->depth[i] + 1);
			}
			if ((rc = push_edge(g, idx)) != 0)
				return rc;
		}
	}
	g->estart[g->ks.n] = (uint32_t)g->nedges;
	return 0;
}

/* Distances to a win and shortest winning sequences, in reverse order. */
static int graph_solve(graph *g, const layout *L)
{
	uint32_t n = g->ks.n;
	g->dist = malloc(n);
	g->ways = malloc((size_t)n * sizeof *g->ways);
	if (!g->dist || !g->ways)
		return SF_ENOMEM;
	for (uint32_t i = n; i-- > 0;) {
		dig_state s;
		unpack(L, g->ks.keys + (size_t)i * L->bytes, g->depth[i], &s);
		if (dig_won(&s)) {
			g->dist[i] = 0;
			g->ways[i] = 1;
			continue;
		}
		unsigned best = NO_WIN;
		for (uint32_t e = g->estart[i]; e < g->estart[i + 1]; e++)
			if (g->dist[g->edge[e]] != NO_WIN && g->dist[g->edge[e]] + 1u < best)
				best = g->dist[g->edge[e]] + 1u;
		double ways = 0;
		if (best != NO_WIN)
			for (uint32_t e = g->estart[i]; e < g->estart[i + 1]; e++)
				if (g->dist[g->edge[e]] + 1u == best)
					ways += g->ways[g->edge[e]];
		g->dist[i] = (uint8_t)best;
		g->ways[i] = ways;
	}
	return 0;
}

/* The state of `s` in the graph, or -1. */
static int64_t graph_find(graph *g, const layout *L, const dig_state *s)
{
	uint8_t key[KEY_MAX];
	uint32_t idx;
	if (!fits(L, s))
		return -1;
	pack(L, s, key);
	return keyset_put(&g->ks, key, false, &idx) == 0 ? (int64_t)idx : -1;
}

/*
 * Exact mode on `g` (built and solved): the optimum, plays, dead ends and
 * branching along `play` (NULL: the first optimal tap in slot order each
 * time). SF_EINVAL when the play is not an optimal one.
 */
static int graph_measure(graph *g, const layout *L, const dig_level *lv,
			 const dig_solve_result *play, dig_measure *out, sf_err *err)
{
	uint64_t dead = 0;
	for (uint32_t i = 0; i < g->ks.n; i++)
		dead += g->dist[i] == NO_WIN;
	out->exact = true;
	out->states = g->ks.n;
	out->decided = g->ks.n;
	out->dead_end_share = (double)dead / (double)g->ks.n;
	out->optimal_plays_exact = true;
	out->optimal_plays = g->ways[0];
	out->optimum = g->dist[0] == NO_WIN ? -1 : g->dist[0];
	if (out->optimum <= 0)
		return 0;
	if (play && play->turns != out->optimum)
		return sf_err_set(err, SF_EINVAL,
				  "optimal: the play given has %d taps, the optimum is %d",
				  play->turns, out->optimum);
	dig_state s;
	dig_cmd cmd;
	int64_t i = 0;
	uint64_t taps = 0, keep = 0;
	unpack(L, g->ks.keys, 0, &s);
	for (int k = 0; k < out->optimum; k++) {
		taps += g->estart[i + 1] - g->estart[i];
		for (uint32_t e = g->estart[i]; e < g->estart[i + 1]; e++)
			keep += g->dist[g->edge[e]] + 1u == g->dist[i];
		int slot = -1;
		if (play) {
			slot = play->taps[k];
			if (dig_arrow_do(lv, &s, slot, &cmd) != 0)
				return sf_err_set(err, SF_EINVAL,
						  "optimal: tap %d (arrow %d) is not valid", k + 1,
						  slot);
		} else {
			for (slot = 0; slot < dig_slots(lv); slot++) {
				if (dig_arrow_do(lv, &s, slot, &cmd) != 0)
					continue;
				int64_t j = graph_find(g, L, &s);
				if (j >= 0 && g->dist[j] + 1u == g->dist[i])
					break;
				dig_arrow_undo(&s, &cmd);
			}
		}
		int64_t j = graph_find(g, L, &s);
		if (j < 0 || g->dist[j] + 1u != g->dist[i])
			return sf_err_set(
				err, SF_EINVAL,
				"optimal: tap %d (arrow %d) does not keep an optimal finish", k + 1,
				slot);
		i = j;
	}
	out->branching = (double)taps / out->optimum;
	out->optimal_branching = (double)keep / out->optimum;
	return 0;
}

/* ---- sampled mode ---- */

typedef struct sampler {
	const dig_level *lv;
	const dig_measure_opts *o;
	const uint64_t *line;
	layout L; /* whole states */
	keyset memo;
	int8_t *verdict; /* per memo entry: can_win_in's answer, -2 not asked yet */
	double *ways;    /* per memo entry: count_plays's, < 0 not counted yet */
	uint32_t have;
	uint64_t count_work; /* states the counting solves expanded */
	bool inexact;        /* a verdict is unknown: counts are lower bounds */
	/* per depth: the random plays' Knuth estimates of its tap sequences,
	 * summed (sampled mode draws its samples' depths by them) */
	double layer[DIG_MAX_TURNS + 2];
	uint64_t work;
	sf_err *err;
} sampler;

static void sampler_free(sampler *sp)
{
	keyset_free(&sp->memo);
	free(sp->verdict);
	free(sp->ways);
}

/*
 * A lower bound on the taps that win from `s`: a tap moves a machine one
 * cell at most, so the gold farthest from its nearest machine (in grid
 * steps) needs at least that many taps, whatever the terrain and rules.
 */
static int gold_bound(const dig_level *lv, const dig_state *s)
{
	int bound = 0;
	for (int c = 0; c < lv->w * lv->h; c++) {
		if (!((s->gold >> c) & 1u))
			continue;
		int nearest = DIG_MAX_W + DIG_MAX_H;
		for (int m = 0; m < lv->machines; m++) {
			int dx = c % lv->w - s->pos[m] % lv->w, dy = c / lv->w - s->pos[m] / lv->w;
			int d = (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
			nearest = d < nearest ? d : nearest;
		}
		bound = nearest > bound ? nearest : bound;
	}
	return bound;
}

/* The memo entry of `s` (added when new): its index, or SF_ENOMEM. */
static int64_t memo_entry(sampler *sp, const dig_state *s)
{
	uint8_t key[KEY_MAX];
	uint32_t idx;
	pack(&sp->L, s, key);
	int rc = keyset_put(&sp->memo, key, true, &idx);
	if (rc < 0 || rc == TOO_BIG)
		return SF_ENOMEM; /* the limit is UINT32_MAX - 1: memory runs out first */
	if (sp->have < sp->memo.cap) {
		uint32_t cap = sp->memo.cap;
		int8_t *v = realloc(sp->verdict, cap);
		if (!v)
			return SF_ENOMEM;
		sp->verdict = v;
		double *w = realloc(sp->ways, (size_t)cap * sizeof *w);
		if (!w)
			return SF_ENOMEM;
		sp->ways = w;
		sp->have = cap;
	}
	if (rc == 1) {
		sp->verdict[idx] = -2;
		sp->ways[idx] = -1;
	}
	return idx;
}

/*
 * A solve found that `s` wins in exactly res->turns taps: every state along
 * that play wins in exactly the taps the play has left, so their memo
 * entries get a yes without a solve of their own. The play is replayed
 * on s itself (it was found with turns_left capped, which only forbids);
 * marking stops at a tap that does not replay, or at a failed allocation
 * (a missing mark costs only a solve later).
 */
static void mark_winning(sampler *sp, const dig_state *s, const dig_solve_result *res)
{
	dig_state t = *s;
	dig_cmd cmd;
	for (int k = 0; k + 1 < res->turns; k++) {
		if (dig_arrow_do(sp->lv, &t, res->taps[k], &cmd) != 0 || dig_won(&t))
			return;
		int64_t e = memo_entry(sp, &t);
		if (e < 0)
			return;
		if (sp->verdict[e] == -2)
			sp->verdict[e] = 1;
	}
}

/*
 * Whether `s` can win in exactly `rem` taps (it cannot in fewer: it lies
 * on a play that started optimal): 1 yes, 0 no, -1 unknown (the solve ran
 * out of budget), NOT_ASKED (count_work spent), or SF_ENOMEM. *entry: its
 * memo entry.
 */
static int can_win_in(sampler *sp, const dig_state *s, int rem, int64_t *entry)
{
	int64_t e = memo_entry(sp, s);
	if (e < 0)
		return (int)e;
	*entry = e;
	if (sp->verdict[e] != -2)
		return sp->verdict[e];
	int v;
	if (dig_won(s) || rem == 0) {
		v = dig_won(s) && rem == 0;
	} else if (gold_bound(sp->lv, s) > rem) {
		v = 0;
	} else if (sp->count_work >= sp->o->count_work) {
		return NOT_ASKED; /* not stored: still unknown */
	} else {
		dig_state capped = *s;
		if (capped.turns_left > rem)
			capped.turns_left = (int16_t)rem;
		dig_solve_result res;
		int rc = dig_solve_with(sp->lv, &capped, sp->o->solver_states, MEASURE_BOUND, &res,
					sp->err);
		if (rc)
			return rc;
		sp->count_work += res.states;
		sp->work += res.states;
		v = res.status == DIG_SOLVED ? res.turns == rem
					     : (res.status == DIG_UNSOLVABLE ? 0 : -1);
		if (v == 1)
			mark_winning(sp, s, &res);
	}
	sp->verdict[e] = (int8_t)v;
	return v;
}

/*
 * The number of winning tap sequences of exactly `rem` taps from `s`
 * (memo entry e), by depth-first search: a sequence counts when it ends in
 * a win after exactly rem taps, so skipping only taps after which
 * can_win_in says no keeps the count exact, and a tap it could not decide
 * within the solver's budget is followed too. Taps it was not asked about
 * (count_work spent) are skipped and set sp->inexact: the count is then a
 * lower bound. 0 or an SF_E* code.
 */
static int count_plays(sampler *sp, dig_state *s, int64_t e, int rem, double *out)
{
	if (sp->ways[e] >= 0) {
		*out = sp->ways[e];
		return 0;
	}
	double total = 0;
	if (rem == 0) {
		total = dig_won(s);
	} else {
		uint8_t cand[DIG_MAX_ARROWS];
		int ncand = candidate_slots(sp->lv, sp->line, s, cand);
		for (int c = 0; c < ncand; c++) {
			dig_cmd cmd;
			if (dig_arrow_do(sp->lv, s, cand[c], &cmd) != 0)
				continue;
			int64_t next = -1;
			int v = can_win_in(sp, s, rem - 1, &next);
			int rc = v < -1 ? v : 0;
			double sub = 0;
			if (v == 1 || v == -1)
				rc = count_plays(sp, s, next, rem - 1, &sub);
			else if (v == NOT_ASKED)
				sp->inexact = true;
			dig_arrow_undo(s, &cmd);
			if (rc)
				return rc;
			total += sub;
		}
	}
	sp->ways[e] = total;
	*out = total;
	return 0;
}

/* A depth d drawn with probability layer[d] / total. */
static int depth_drawn(const double *layer, double total, rng *r)
{
	double u = rng_unit(r) * total;
	int d = 0;
	for (int i = 0; i <= DIG_MAX_TURNS; i++)
		if (layer[i] > 0) {
			d = i; /* (the deepest, should rounding leave u >= 0) */
			if (u < layer[i])
				break;
			u -= layer[i];
		}
	return d;
}

static int sampled_measure(sampler *sp, const dig_solve_result *play, rng *r, dig_measure *out)
{
	const dig_level *lv = sp->lv;
	const dig_measure_opts *o = sp->o;
	out->exact = false;
	/* Dead ends among sampled states. */
	dig_state *path = malloc((DIG_MAX_TURNS + 2) * sizeof *path);
	if (!path)
		return sf_err_set(sp->err, SF_ENOMEM, "out of memory");
	uint64_t dead = 0;
	double total = 0;
	for (int d = 0; d <= DIG_MAX_TURNS; d++)
		total += sp->layer[d];
	for (int k = 0; k < o->samples; k++) {
		out->states++;
		int n = abs(random_play(lv, sp->line, r, path, NULL)), at;
		if (total > 0) {
			int d = depth_drawn(sp->layer, total, r);
			for (int t = 1; t < DEPTH_TRIES && n <= d; t++)
				n = abs(random_play(lv, sp->line, r, path, NULL));
			if (n <= d)
				continue; /* no play got there: undecided */
			at = d;
		} else {
			at = (int)rng_below(r, (uint64_t)n);
		}
		dig_solve_result res;
		int rc = dig_solve_with(lv, &path[at], o->solver_states, MEASURE_BOUND, &res,
					sp->err);
		if (rc) {
			free(path);
			return rc;
		}
		sp->work += res.states;
		if (res.status != DIG_UNKNOWN)
			out->decided++;
		dead += res.status == DIG_UNSOLVABLE;
	}
	free(path);
	out->dead_end_share = out->decided ? (double)dead / (double)out->decided : 0;

	/* The optimum. */
	dig_solve_result own;
	if (!play || play->status != DIG_SOLVED) {
		int rc = dig_solve_with(lv, NULL, o->solver_states, MEASURE_BOUND, &own, sp->err);
		if (rc)
			return rc;
		sp->work += own.states;
		play = &own;
	}
	if (play->status != DIG_SOLVED) {
		out->optimum = -1;
		out->optimal_plays_exact = play->status == DIG_UNSOLVABLE;
		return 0;
	}
	out->optimum = play->turns;

	/*
	 * Optimal plays, then branching along the play: the count asked about
	 * (or counted plays after) every tap of every state it reached, which
	 * includes the play's states, so branching reads the memo.
	 */
	dig_state s;
	dig_cmd cmd;
	dig_state_init(lv, &s);
	int64_t e = memo_entry(sp, &s);
	int rc = e < 0 ? (int)e : count_plays(sp, &s, e, play->turns, &out->optimal_plays);
	if (rc)
		return rc == SF_ENOMEM ? sf_err_set(sp->err, rc, "out of memory") : rc;
	uint64_t taps = 0, keep = 0;
	for (int k = 0; k < play->turns; k++) {
		uint8_t cand[DIG_MAX_ARROWS];
		int ncand = candidate_slots(lv, sp->line, &s, cand);
		for (int c = 0; c < ncand; c++) {
			if (dig_arrow_do(lv, &s, cand[c], &cmd) != 0)
				continue;
			taps++;
			int v = 1; /* the play's own tap keeps an optimal finish */
			if (cand[c] != play->taps[k]) {
				v = can_win_in(sp, &s, play->turns - k - 1, &e);
				if (v == -1 || v == NOT_ASKED)
					v = e >= 0 && sp->ways[e] >= 0 ? sp->ways[e] > 0
								       : NOT_ASKED;
				if (v == NOT_ASKED)
					sp->inexact = true; /* left uncounted: a lower bound */
			}
			dig_arrow_undo(&s, &cmd);
			if (v < -1)
				return sf_err_set(sp->err, v, "out of memory");
			keep += v == 1;
		}
		if (dig_arrow_do(lv, &s, play->taps[k], &cmd) != 0)
			return sf_err_set(sp->err, SF_EINVAL,
					  "optimal: tap %d (arrow %d) is not valid", k + 1,
					  play->taps[k]);
	}
	if (play->turns > 0) {
		out->branching = (double)taps / play->turns;
		out->optimal_branching = (double)keep / play->turns;
	}
	out->optimal_plays_exact = !sp->inexact;
	/* The play itself is an optimal play, however little the count got
	 * through before its work budget ran out. */
	if (out->optimal_plays < 1)
		out->optimal_plays = 1;
	return 0;
}

/* ---- the entry point ---- */

int dig_measure_level(const dig_level *lv, const dig_solve_result *optimal,
		      const dig_measure_opts *o, dig_measure *out, sf_err *err)
{
	memset(out, 0, sizeof *out);
	int rc = dig_level_check(lv, err);
	if (rc)
		return rc;
	if (o->random_plays < 0 || o->samples < 0 || o->solver_states == 0)
		return sf_err_set(err, SF_EINVAL,
				  "measure options: random_plays and samples must be "
				  ">= 0, solver_states >= 1");
	if (optimal && optimal->status != DIG_SOLVED)
		optimal = NULL;
	rng base, r;
	rng_seed(&base, o->seed);
	uint64_t line[DIG_MAX_ARROWS] = { 0 };
	slot_lines(lv, line);

	/* Random plays (stream 0). */
	r = rng_split(&base, 0);
	out->random_plays = o->random_plays;
	double layer[DIG_MAX_TURNS + 2] = { 0 };
	for (int k = 0; k < o->random_plays; k++)
		out->random_wins += random_play(lv, line, &r, NULL, layer) > 0;
	out->random_win_rate =
		o->random_plays ? (double)out->random_wins / (double)o->random_plays : 0;

	dig_state start;
	dig_state_init(lv, &start);
	layout *L = malloc(sizeof *L);
	if (!L)
		return sf_err_set(err, SF_ENOMEM, "out of memory");
	for (int whole = 0; whole < 2; whole++) {
		graph g = { 0 };
		layout_init(L, lv, &start, whole);
		rc = graph_build(&g, lv, line, L, o->graph_states);
		if (rc == 0) {
			rc = graph_solve(&g, L);
			if (rc == 0)
				rc = graph_measure(&g, L, lv, optimal, out, err);
			else
				sf_err_set(err, rc, "out of memory");
			graph_free(&g);
			free(L);
			return rc;
		}
		graph_free(&g);
		if (rc < 0) {
			free(L);
			return sf_err_set(err, rc, "out of memory");
		}
		if (rc == TOO_BIG)
			break;
	}
	free(L);

	/* Sampled mode (stream 1). */
	r = rng_split(&base, 1);
	sampler *sp = calloc(1, sizeof *sp);
	if (!sp)
		return sf_err_set(err, SF_ENOMEM, "out of memory");
	sp->lv = lv;
	sp->o = o;
	sp->line = line;
	sp->err = err;
	memcpy(sp->layer, layer, sizeof sp->layer);
	layout_init(&sp->L, lv, &start, true);
	rc = keyset_init(&sp->memo, sp->L.bytes, UINT32_MAX - 1);
	if (rc == 0)
		rc = sampled_measure(sp, optimal, &r, out);
	else
		sf_err_set(err, rc, "out of memory");
	out->solver_work = sp->work;
	sampler_free(sp);
	free(sp);
	return rc;
}
