/*
 * solve.c - the exhaustive solver: a best-first search over taps from the
 * start (or from any play state the engine reached, dig_solve_from, for
 * hints) that returns the fewest taps collecting all the gold.
 *
 * The solver knows no rules. Every transition is dig_arrow_do() on a state
 * the solver rebuilt, followed by dig_arrow_undo(); it is therefore an
 * independent oracle for the generator (which records its own solution) and
 * agrees with the engine by construction. (It skips, without asking the
 * engine, only slots with no uses or whose line holds no unfrozen machine
 * that could step off it onto the grid: taps the engine always refuses.)
 *
 * Search order. Plain breadth-first search visits every state closer than
 * the optimum: millions on a 9x5 grid with six machines. So states are
 * expanded in order of f = taps so far (g) + a lower bound on the taps
 * still needed (A*, which is breadth-first search layered by f instead of
 * g). The bound: a machine moves at most one cell per tap, and only along
 * arrows that still have uses (or that unspent treasure may give back), so
 * the gold whose nearest machine is farthest away, counted in such steps
 * (one breadth-first search over 64-bit cell sets from all machines at
 * once), needs at least that many taps. It drops by at most one per tap, so the
 * first time a state is expanded it was reached in the fewest taps, and the
 * first winning state expanded is an optimum. That is DIG_BOUND_NEAREST, the
 * first solver's bound. DIG_BOUND_ASSIGN adds the assignment
 * bound (bound_assign below): the gold shared among the machines so that
 * each reaches its gold, and each pair of its gold, within k moves, and the
 * taps of each direction cover the most steps that way any machine needs
 * (a tap moves everybody it moves the same way), k as small as possible; a
 * web needing v more visits costs the loops back into it, and under
 * no_shuffle the distances never reverse. It is at least the nearest bound
 * and consistent too. States are queued with the nearest bound (or their
 * parent's bound less one, when that is more: consistency makes it a
 * bound) and get the assignment bound when they come up for expansion
 * (REFINED), back in the queue when it raises f: most stored states are
 * never expanded and never pay for it. Its distances are cached per set of
 * usable moves. DIG_BOUND_USES, the default (since 2026-12-04), adds the
 * uses bound (bound_uses), which counts taps per arrow: the least total of
 * taps per arrow that gives every gold a walk of some machine that may
 * collect it, no arrow spent more often than it is tapped, and a web that
 * needs v more visits at least v taps of the arrows that step into it (a
 * tap moves one machine into a cell at most); two machines
 * that need different arrows are charged both, which the busiest machine's
 * k cannot see (hardest levels have few uses to spare). It is the dearest,
 * so it comes last: only a state that the other bounds leave at the f
 * being expanded pays for it (USES_KNOWN), and each machine's walks are
 * listed once per search per cell and way in (walk_list_of) and filtered
 * for each state. Until the search has expanded JOINT_AFTER states,
 * DIG_BOUND_USES asks the nearest bound and the uses bound only, not the
 * assignment bound (assign_on): on the 863 hardest candidates of seeds 1
 * to 300 the assignment bound cost more time than the states it saved
 * (6 % more states without it, 18 % less time, the same optima), but on
 * levels with uses to spare, where the uses bound is weak, a long search
 * needs it (test_pair_tables_mid_search: not decided within 3 000 000
 * states without it). DIG_BOUND_ROUTES (not the default) asks those states
 * for the route bound too (bound_route): one route per machine through
 * all its gold, webs' visits counted; far stronger, far dearer so far.
 * A search that has
 * expanded JOINT_AFTER states builds the pair tables (joint_build: for two
 * machines, the taps to reach two gold when a tap moves only the machines
 * on its line) and from then on the assignment must fit them too; the open
 * states are refined again, so the order stays that of a consistent bound.
 * The default does both only while its uses bound does not pay (uses_paid:
 * it moved under JOINT_PAID % of the states it was asked), looked at after
 * every JOINT_AFTER states expanded.
 * Among states of equal f the deepest come first (deepest_first), so that
 * the last layer, the one holding an optimum, is walked straight to it. A
 * state about to be expanded first passes the lone-machine test (lone_dead;
 * not with DIG_BOUND_NEAREST; where the uses bound has found every gold a
 * walk, LIVE, only its webs: its walks are the lone test's): when some gold
 * is out of reach of every machine walking on its own, each arrow's uses
 * counted along its walk, or a web's gold needs more counted visits than
 * those machines can make between them, the state is dead and dropped with
 * everything it leads to. The relaxed
 * distances count an arrow with one use left as usable for ever; in a long
 * hardest search most expanded states were dead for that reason. It is
 * joined by the web supply test (webs_short): a web that needs more visits
 * than the machines can be brought to its doorstep for, the uses of the
 * slots along the way counted (most states expanded in the slowest hardest
 * proofs cannot win; on some levels a web is why); and by the sole
 * collector's walk (sole_dead): the gold only one machine can collect
 * must all lie on one walk of that machine's, uses counted. The default
 * asks those two only in long searches, while they pay (asked_on).
 * docs/digger.md has what each part bought on hardest levels and why the
 * bounds stay below the optimum.
 *
 * Pruning, every rule of it safe: a state is never stored when it cannot
 * win (no turns left; the bound exceeds the turns or the arrow uses that
 * remain, counting what unspent cells can still give; some gold has no
 * machine that can still reach it), or when it is dominated: another
 * stored state has the same positions, gold, terrain state and path
 * history, was reached in no more taps, and has at least as many turns
 * left and at least as many uses on every arrow, so it can do everything
 * this one can, sooner. DIG_UNSOLVABLE therefore means the whole reachable
 * space was exhausted. One more rule drops moves, not states: expanding
 * a state its parent reached by tap a, a tap b < a that commutes with a
 * there (b then a from the parent reaches the same state) is skipped,
 * since the parent's b child reaches that state too (commutes()). And
 * every bound but the nearest one searches the level with its twin arrows
 * merged (two arrows of one line pointing the same way make one move: the
 * second's uses go to the first, so states no longer differ only in how
 * that move's taps were split between them; twins_merged()), and turns
 * the optimal play found back into one of the level's (twins_unmerged()).
 *
 * What terrain cells can give is learnt by probing, not by testing types:
 * dig_terrain_gift (terrain.c) runs each cell's on_enter hook once on a
 * copy of the start state and reports the arrow uses and turns it added
 * and whether it set the cell's spent bit (then the gift is one-shot). This
 * relies on what every module does, and tests/test_digger_terrain.c checks
 * for each: a gift is one-shot, and a hook changes only its own cell's
 * spent bit and web_left, arrow uses, frozen and turns_left.
 *
 * States are stored as compact canonical keys, not as dig_state (about 190
 * bytes). A key is a "rest" part, then the uses of the live slots (usable
 * at the start or given by some cell), each part padded to whole 64-bit
 * words. The rest holds only what can affect the future: positions; prev[]
 * only under no_shuffle; visited[] (as bits of the grid) only under
 * no_backtrack; the gold still there (bits over the initial gold cells);
 * the spent bits of one-shot cells; web_left of cells that start non-zero;
 * frozen. Two fields stay out of the key on purpose: turns_used is the
 * node's g, and turns_left is a function of g and the key (the budget,
 * minus g, plus what spent cells gave), so the same key reached in more
 * taps is dominated. Both are stored per node so that the state is rebuilt
 * exactly. Searching from a later play state changes none of this: the
 * layout (gold cells, one-shot cells, webs, live slots) is worked out from
 * the level and covers every reachable state, g counts taps from that
 * state, fields left out of the key are copied from it, and the bound and
 * the dominance test read turns_left and uses from each state, never from
 * the level.
 *
 * Nodes live in arrays (key bytes, parent, tap, g, turns_left, and a link
 * to the previous node with the same rest). Open nodes wait in one LIFO
 * bucket per f value (LIFO favours deep nodes among equals, which reach a
 * win sooner). Two open-addressing tables of 64-bit entries (32 bits of
 * hash, 32 bits of node index, linear probing, grown at half load) find a
 * key's node and a rest's newest node. The search stops with DIG_UNKNOWN
 * when one more distinct state would pass max_states.
 */
#include "digger.h"

#include <stdlib.h>
#include <string.h>

#include "terrain.h"

#define KEY_MAX 192 /* bytes; the largest key (6 machines, every rule, 64 cells) is 176 */
#define F_MAX (DIG_MAX_TURNS + DIG_MAX_CELLS + 1) /* f = g + bound, bound <= cells */
#define EXPANDED 1u                               /* node flag: expanded (closed) */
#define REFINED 2u /* node flag: its f holds the assignment bound, not only the nearest */
#define USES_KNOWN 4u /* node flag: its f holds the uses bound too */
#define LIVE 8u       /* node flag: the uses bound found every gold a walk (not lone_dead) */
#define NO_NODE UINT32_MAX
#define CHAIN_MAX 64  /* stored states compared per new state for dominance */
#define PAIR_CACHE 1024   /* distance sets kept, direct-mapped by moves */
#define JOINT_AFTER 16384 /* states expanded before the pair tables are built */
#define JOINT_PAID 10     /* % of the states asked that the uses bound moves where it pays */
#define JOINT_GOLD 18     /* more gold than this (expert places 18 at most): no pair tables */

/* A growable stack of node indices: one bucket of open nodes. */
typedef struct bucket {
	uint32_t *node;
	uint32_t len, cap;
} bucket;

/* An open-addressing table: 0 empty, else (hash >> 32) << 32 | (node + 1). */
typedef struct table {
	uint64_t *slot;
	uint64_t mask;
	uint32_t used;
	int len; /* key bytes compared: the whole key or the rest */
} table;

/* What the bound shares: usable steps per direction, and the budget. */
typedef struct relax {
	uint64_t can[4]; /* cells a machine can leave in direction d */
	int limit;       /* taps available at most: turns (with gifts) and uses */
	int way[4];      /* taps available each way at most: uses (with gifts) */
	uint64_t gifts;  /* the gift cells counted: unspent, and within reach */
} relax;

/* The level's key layout and what its terrain can give, then the search. */
typedef struct solver {
	const dig_level *lv;
	int machines;
	int cells;
	int cell_bytes; /* bytes of one packed visited set */
	int rest_len;   /* bytes of the rest part, a multiple of 8 */
	int key_len;    /* rest_len + the uses part, a multiple of 8 */
	int ngold;
	uint8_t gold_cell[DIG_MAX_CELLS];
	uint8_t gold_index[DIG_MAX_CELLS]; /* cell -> i, for gold cells */
	int nspent;                        /* one-shot cells: their spent bits are in the key */
	uint8_t spent_cell[DIG_MAX_CELLS];
	uint8_t spent_index[DIG_MAX_CELLS]; /* cell -> i, for one-shot cells */
	uint64_t spent_all;                 /* the one-shot cells */
	int nlive;
	uint8_t live_slot[DIG_MAX_ARROWS];
	uint8_t live_of[DIG_MAX_ARROWS]; /* slot -> its index in live_slot, for live slots */
	int nweb;
	uint8_t web_cell[DIG_MAX_CELLS];
	int ngift; /* cells whose first visit gives uses or turns */
	uint8_t gift_cell[DIG_MAX_CELLS];
	uint32_t gives[DIG_MAX_CELLS]; /* slots given one more use */
	int gain[DIG_MAX_CELLS];       /* turns given */
	bool one_shot[DIG_MAX_CELLS];  /* the gift ends once the cell is spent */
	uint64_t line[DIG_MAX_ARROWS]; /* cells slot i acts on that can step its way */
	uint8_t dir_of[DIG_MAX_ARROWS]; /* slot i's direction (lv->arrow[i].dir) */
	int8_t off[4][DIG_MAX_CELLS];  /* cell c's coordinate along direction d */
	uint64_t grid;                 /* every cell */
	uint64_t gold_all;             /* the level's gold cells */
	dig_state start;               /* the level's initial state: what cells give */
	dig_state from;                /* where the search starts: decode's base */

	/* nodes */
	uint8_t *keys;
	uint32_t *parent;
	uint32_t *same_rest; /* the previous node with the same rest, or NO_NODE */
	uint8_t *tap;
	uint8_t *g;     /* taps from the start */
	uint8_t *flags; /* EXPANDED, REFINED */
	uint8_t *least; /* a lower bound on the taps to win: the parent's bound - 1 */
	int16_t *turns_left;
	uint32_t count, cap;
	bucket open[F_MAX];
	uint32_t *scratch; /* deepest_first's, scratch_cap nodes */
	uint32_t scratch_cap;
	table by_key, by_rest;

	/* the bound */
	dig_bound which;
	uint8_t counters[DIG_MAX_CELLS]; /* per gold: machines whose visit wears its web */
	/* relaxed distances, PAIR_CACHE sets of them, direct-mapped by the
	 * moves they were worked out under (moves_of): each set is the
	 * ngold x ngold gold-to-gold matrix, then one row of ngold distances
	 * per (cell, direction arrived in + 1), worked out when first asked */
	uint8_t *dist;
	size_t dist_size; /* bytes of one set */
	struct dist_set {
		uint64_t can[4]; /* the moves it was worked out under */
		bool used;
		bool pairs_done; /* its gold-to-gold matrix (pairs_of) */
		uint64_t row_done[(DIG_MAX_CELLS * 5 + 63) / 64];
	} * dist_set; /* PAIR_CACHE of them, beside dist */
	/* joint[(a * ngold + b) * cells * cells + p * cells + q]: the fewest
	 * taps after which a machine from p has entered gold a and another
	 * from q gold b (joint_build); NULL until built */
	uint8_t *joint;

	bool assign_on; /* DIG_BOUND_USES: the assignment bound asked too (a long search) */
	/* the states the search asked the uses bound of, and those it moved
	 * (raised their f, or found dead): whether it pays (uses_paid) */
	uint32_t uses_asked, uses_moved;
	bool uses_live; /* bound_uses' last answer found every gold a walk */
	int no_walk;    /* the gold index bound_uses last found no walk for */
	/* the lone-machine test (lone_dead) */
	uint64_t enter[DIG_MAX_MACHINES]; /* cells machine m may step into (can_enter) */
	/* per machine, the first machine with the same cells to step into:
	 * their walks from a cell are the same, and so their listings */
	uint8_t lister[DIG_MAX_MACHINES];
	uint8_t nexit[DIG_MAX_CELLS];     /* live slots that move a machine off cell c */
	/* per cell, 0xFF at the byte of each live slot that moves a machine
	 * into it (as a walk's uses are laid out: web_deficit) */
	uint64_t entries[DIG_MAX_CELLS][DIG_MAX_ARROWS / 8];
	struct exit {
		uint8_t live; /* index into live_slot */
		uint8_t to;   /* the cell it steps into */
		uint8_t dir;
	} exit[DIG_MAX_CELLS][4];
	struct lone *lone; /* the test's nodes, allocated on first use */
	/* the web supply test (webs_short): per web cell, its cone (built on
	 * first use); whether the search asks it only when it pays */
	struct cone *cone[DIG_MAX_CELLS];
	/* whether the search asks webs_short and sole_dead only when they pay
	 * (the default search; asked_on), and how each is doing */
	bool gated;
	struct gate {
		int asked, dead; /* in the current window */
		bool off;        /* the test stopped paying in this search */
	} webs_gate, sole_gate;
	struct walks *walks; /* the uses bound's, allocated on first use */
	struct routes *routes;   /* the route bound's, allocated on first use */
	struct walks *walks0;    /* walk_list_of's: the walks from the search's first state */
	struct walk_list *wlist; /* per (machine, cell, way in + 1): walk_list_of's listings */
	relax rx0;               /* the relaxed moves of the search's first state */
	bool no_lists;           /* no listings: a gift is not one-shot, or no turns at first */
	size_t list_walks;       /* walks kept in all the listings, at most LIST_TOTAL */
} solver;

/* ---- keys ---- */

static void set_bit(uint8_t *key, int bit)
{
	key[bit >> 3] |= (uint8_t)(1u << (bit & 7));
}

/* Packs the parts of `s` that matter into key[0, key_len). */
static void encode(const solver *sv, const dig_state *s, uint8_t *key)
{
	const dig_rules *r = &sv->lv->rules;
	memset(key, 0, (size_t)sv->key_len);
	uint8_t *p = key;
	memcpy(p, s->pos, (size_t)sv->machines);
	p += sv->machines;
	if (r->no_shuffle) {
		memcpy(p, s->prev, (size_t)sv->machines);
		p += sv->machines;
	}
	if (r->no_backtrack) {
		for (int m = 0; m < sv->machines; m++)
			for (int b = 0; b < sv->cell_bytes; b++)
				*p++ = (uint8_t)(s->visited[m] >> (8 * b));
	}
	for (uint64_t g = s->gold & sv->gold_all; g; g &= g - 1)
		set_bit(p, sv->gold_index[__builtin_ctzll(g)]);
	for (uint64_t x = s->spent & sv->spent_all; x; x &= x - 1)
		set_bit(p, sv->ngold + sv->spent_index[__builtin_ctzll(x)]);
	p += (sv->ngold + sv->nspent + 7) / 8;
	for (int i = 0; i < sv->nweb; i++)
		*p++ = s->web_left[sv->web_cell[i]];
	*p = s->frozen;
	p = key + sv->rest_len;
	for (int i = 0; i < sv->nlive; i++)
		p[i] = s->uses[sv->live_slot[i]];
}

/* Rebuilds the state of `key` reached in g taps with `turns_left` left. */
static void decode(const solver *sv, const uint8_t *key, int g, int turns_left, dig_state *s)
{
	const dig_rules *r = &sv->lv->rules;
	*s = sv->from;
	const uint8_t *p = key;
	memcpy(s->pos, p, (size_t)sv->machines);
	p += sv->machines;
	if (r->no_shuffle) {
		memcpy(s->prev, p, (size_t)sv->machines);
		p += sv->machines;
	}
	if (r->no_backtrack) {
		for (int m = 0; m < sv->machines; m++) {
			uint64_t v = 0;
			for (int b = 0; b < sv->cell_bytes; b++)
				v |= (uint64_t)*p++ << (8 * b);
			s->visited[m] = v;
		}
	}
	int bytes = (sv->ngold + sv->nspent + 7) / 8, collected = sv->ngold;
	s->gold = 0;
	s->spent = 0;
	for (int b = 0; b < bytes; b++)
		for (unsigned v = p[b]; v; v &= v - 1) {
			int bit = 8 * b + __builtin_ctz(v);
			if (bit < sv->ngold) {
				s->gold |= UINT64_C(1) << sv->gold_cell[bit];
				collected--;
			} else {
				s->spent |= UINT64_C(1) << sv->spent_cell[bit - sv->ngold];
			}
		}
	p += bytes;
	for (int i = 0; i < sv->nweb; i++)
		s->web_left[sv->web_cell[i]] = *p++;
	s->frozen = *p;
	p = key + sv->rest_len;
	for (int i = 0; i < sv->nlive; i++)
		s->uses[sv->live_slot[i]] = p[i];
	s->next_gold = (uint8_t)(1 + collected);
	s->turns_used = (int16_t)(sv->from.turns_used + g);
	s->turns_left = (int16_t)turns_left;
}

/* Mixes whole 64-bit words of key[0, len) into h (len a multiple of 8). */
static uint64_t hash_run(uint64_t h, const uint8_t *key, int len)
{
	for (int i = 0; i < len; i += 8) {
		uint64_t w;
		memcpy(&w, key + i, 8);
		h ^= w * 0xbf58476d1ce4e5b9ULL;
		h = (h << 27 | h >> 37) * 0x94d049bb133111ebULL;
	}
	return h;
}

static uint64_t hash_end(uint64_t h)
{
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ULL;
	h ^= h >> 32;
	return h;
}

#define HASH_SEED 0x9e3779b97f4a7c15ULL

/* ---- node storage ---- */

static const uint8_t *key_of(const solver *sv, uint32_t n)
{
	return sv->keys + (size_t)n * (size_t)sv->key_len;
}

/* Reallocates array sv->field to n items, or returns SF_ENOMEM (the old one kept). */
#define RESIZE(sv, field, n)                                                           \
	do {                                                                           \
		void *grown = realloc((sv)->field, (size_t)(n) * sizeof *(sv)->field); \
		if (!grown)                                                            \
			return SF_ENOMEM;                                              \
		(sv)->field = grown;                                                   \
	} while (0)

/* Doubles the node arrays (or makes them); SF_ENOMEM leaves them usable. */
static int grow_nodes(solver *sv)
{
	uint32_t cap = sv->cap ? sv->cap * 2 : 4096;
	RESIZE(sv, keys, (size_t)cap * (size_t)sv->key_len);
	RESIZE(sv, parent, cap);
	RESIZE(sv, same_rest, cap);
	RESIZE(sv, tap, cap);
	RESIZE(sv, g, cap);
	RESIZE(sv, flags, cap);
	RESIZE(sv, least, cap);
	RESIZE(sv, turns_left, cap);
	sv->cap = cap;
	return 0;
}

/*
 * The slot of `t` holding the node whose first t->len key bytes equal
 * key's (hash h), or the empty slot where it would go. The high 32 bits of
 * the hash both place an entry and are kept in it, so the table can grow
 * without touching the keys.
 */
static uint64_t *table_slot(const solver *sv, const table *t, const uint8_t *key, uint64_t h)
{
	for (uint64_t i = (h >> 32) & t->mask;; i = (i + 1) & t->mask) {
		uint64_t e = t->slot[i];
		if (!e)
			return &t->slot[i];
		if (e >> 32 == h >> 32 &&
		    memcmp(key_of(sv, (uint32_t)e - 1), key, (size_t)t->len) == 0)
			return &t->slot[i];
	}
}

static uint64_t entry(uint64_t h, uint32_t node)
{
	return (h >> 32) << 32 | (uint64_t)(node + 1);
}

/* Doubles `t` (or makes it) and re-inserts its entries. */
static int grow_table(table *t)
{
	uint64_t size = t->slot ? (t->mask + 1) * 2 : 8192;
	uint64_t *slot = calloc(size, sizeof *slot);
	if (!slot)
		return SF_ENOMEM;
	for (uint64_t i = 0; t->slot && i <= t->mask; i++) {
		uint64_t e = t->slot[i];
		if (!e)
			continue;
		uint64_t j = (e >> 32) & (size - 1);
		while (slot[j])
			j = (j + 1) & (size - 1);
		slot[j] = e;
	}
	free(t->slot);
	t->slot = slot;
	t->mask = size - 1;
	return 0;
}

static int push(bucket *b, uint32_t node)
{
	if (b->len == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 256;
		uint32_t *p = realloc(b->node, (size_t)cap * sizeof *p);
		if (!p)
			return SF_ENOMEM;
		b->node = p;
		b->cap = cap;
	}
	b->node[b->len++] = node;
	return 0;
}

/* Queues node n (again) at f = nf, the last bucket holding every larger f. */
static int queue_at(solver *sv, uint32_t n, int nf)
{
	return push(&sv->open[nf < F_MAX ? nf : F_MAX - 1], n);
}

static void walks_free(struct walks *w); /* the uses bound's */
static void routes_free(struct routes *r); /* the route bound's */
static void walk_lists_free(solver *sv);

static void solver_free(solver *sv)
{
	for (int c = 0; c < DIG_MAX_CELLS; c++)
		free(sv->cone[c]);
	free(sv->keys);
	free(sv->parent);
	free(sv->same_rest);
	free(sv->tap);
	free(sv->g);
	free(sv->flags);
	free(sv->least);
	free(sv->turns_left);
	free(sv->by_key.slot);
	free(sv->by_rest.slot);
	free(sv->dist);
	free(sv->dist_set);
	free(sv->joint);
	free(sv->lone);
	walks_free(sv->walks);
	routes_free(sv->routes);
	walks_free(sv->walks0);
	walk_lists_free(sv);
	free(sv->scratch);
	for (int f = 0; f < F_MAX; f++)
		free(sv->open[f].node);
}

/* ---- the level ---- */

/* Records what a first visit to cell c gives (see the design note above). */
static void probe(solver *sv, int c)
{
	dig_gift gift;
	dig_terrain_gift(sv->lv, &sv->start, c, &gift);
	sv->gives[c] = gift.slots;
	sv->gain[c] = gift.turns;
	sv->one_shot[c] = gift.one_shot;
	if (sv->gives[c] || sv->gain[c])
		sv->gift_cell[sv->ngift++] = (uint8_t)c;
	if (sv->one_shot[c]) {
		sv->spent_index[c] = (uint8_t)sv->nspent;
		sv->spent_all |= UINT64_C(1) << c;
		sv->spent_cell[sv->nspent++] = (uint8_t)c;
	}
}

/* Works out the key layout of sv->lv, what its cells give and its moves. */
static void layout(solver *sv)
{
	const dig_level *lv = sv->lv;
	int slots = dig_slots(lv);
	sv->machines = lv->machines;
	sv->cells = lv->w * lv->h;
	sv->cell_bytes = (sv->cells + 7) / 8;
	dig_state_init(lv, &sv->start);
	uint32_t live = 0;
	for (int i = 0; i < slots; i++)
		if (lv->arrow[i].uses > 0)
			live |= UINT32_C(1) << i;
	for (int c = 0; c < sv->cells; c++) {
		if (lv->gold[c]) {
			sv->counters[sv->ngold] = dig_terrain_counters(lv, &sv->start, c);
			sv->gold_index[c] = (uint8_t)sv->ngold;
			sv->gold_cell[sv->ngold++] = (uint8_t)c;
			sv->gold_all |= UINT64_C(1) << c;
		}
		probe(sv, c);
		live |= sv->gives[c];
		if (sv->start.web_left[c])
			sv->web_cell[sv->nweb++] = (uint8_t)c;
	}
	for (int c = 0; c < sv->cells; c++) {
		int x = c % lv->w, y = c / lv->w;
		sv->off[DIG_UP][c] = (int8_t)-y;
		sv->off[DIG_RIGHT][c] = (int8_t)x;
		sv->off[DIG_DOWN][c] = (int8_t)y;
		sv->off[DIG_LEFT][c] = (int8_t)-x;
	}
	sv->grid = sv->cells == 64 ? UINT64_MAX : (UINT64_C(1) << sv->cells) - 1;
	for (int i = 0; i < slots; i++) {
		sv->dir_of[i] = (uint8_t)lv->arrow[i].dir;
		if ((live >> i) & 1u) {
			sv->live_of[i] = (uint8_t)sv->nlive;
			sv->live_slot[sv->nlive++] = (uint8_t)i;
		}
		for (uint64_t l = dig_slot_line(lv, i); l; l &= l - 1) {
			int c = __builtin_ctzll(l);
			if (dig_step(lv, c, lv->arrow[i].dir) >= 0)
				sv->line[i] |= UINT64_C(1) << c;
		}
	}
	for (int m = 0; m < sv->machines; m++)
		for (int c = 0; c < sv->cells; c++) {
			const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[c]);
			if (!ops || !ops->can_enter || ops->can_enter(lv, &sv->start, c, m))
				sv->enter[m] |= UINT64_C(1) << c;
		}
	for (int m = 0; m < sv->machines; m++)
		for (int k = 0; k <= m; k++)
			if (sv->enter[k] == sv->enter[m]) {
				sv->lister[m] = (uint8_t)k;
				break;
			}
	for (int i = 0; i < sv->nlive; i++) {
		int slot = sv->live_slot[i], dir = lv->arrow[slot].dir;
		for (uint64_t l = sv->line[slot]; l; l &= l - 1) {
			int c = __builtin_ctzll(l);
			struct exit *e = &sv->exit[c][sv->nexit[c]++];
			e->live = (uint8_t)i;
			e->to = (uint8_t)dig_step(lv, c, dir);
			e->dir = (uint8_t)dir;
			((uint8_t *)sv->entries[e->to])[i] = 0xFF;
		}
	}
	int rest = sv->machines * (1 + lv->rules.no_shuffle) +
		   (lv->rules.no_backtrack ? sv->machines * sv->cell_bytes : 0) +
		   (sv->ngold + sv->nspent + 7) / 8 + sv->nweb + 1;
	sv->rest_len = (rest + 7) & ~7;
	sv->key_len = sv->rest_len + ((sv->nlive + 7) & ~7);
}

/* ---- the bound ---- */

/* The cells one step from `from` in direction dir (from must only hold
 * cells whose step stays on the grid). */
static uint64_t shift(const solver *sv, uint64_t from, int dir)
{
	switch (dir) {
	case DIG_UP:
		return from >> sv->lv->w;
	case DIG_RIGHT:
		return from << 1;
	case DIG_DOWN:
		return from << sv->lv->w;
	default:
		return from >> 1;
	}
}

/* The cells reachable from `from` in one more relaxed step, and from. */
static uint64_t step_all(const solver *sv, const relax *rx, uint64_t from)
{
	uint64_t next = from;
	for (int d = 0; d < 4; d++)
		next |= shift(sv, from & rx->can[d], d);
	return next;
}

/* The gift cells of `s` not spent yet (all of them, reachable or not). */
static uint64_t gifts_unspent(const solver *sv, const dig_state *s)
{
	uint64_t g = 0;
	for (int i = 0; i < sv->ngift; i++) {
		int c = sv->gift_cell[i];
		if (!(sv->one_shot[c] && ((s->spent >> c) & 1u)))
			g |= UINT64_C(1) << c;
	}
	return g;
}

/*
 * The relaxed moves of `s`: a machine may step in direction d from the
 * cells some usable arrow pointing d acts on, counting arrows that unspent
 * cells can still give; limit is the fewer of the turns and the arrow uses
 * left, gifts included. false when no tap is possible (no turns).
 *
 * A cell gives only to a machine that steps into it, so its gift counts
 * only when some machine can reach it by relaxed moves (the machines'
 * cells count as reached), the moves widened by each gift counted so far,
 * from none (rx->gifts; a least fixpoint, so every cell a play can step
 * into is counted: by induction over the play's taps, each is made with
 * uses left or given by cells entered before). Issue 16: on the slowest
 * hardest proofs most dead states lack a gold or a web's visit that only
 * a gift out of every machine's reach could make; counted as given, the
 * bounds saw it within reach (docs/digger.md, "A slot's own feed, and
 * gifts within reach").
 * Without `reach` (the nearest bound a state is offered with, most of
 * which are never expanded) and with the nearest bound, kept as the first
 * solver's, every gift counts.
 */
static bool relax_of(const solver *sv, const dig_state *s, bool reach, relax *rx)
{
	if (s->turns_left <= 0)
		return false; /* no tap is valid, so nothing more can be given either */
	int turns = s->turns_left, uses = 0;
	memset(rx->way, 0, sizeof rx->way);
	memset(rx->can, 0, sizeof rx->can);
	for (int i = 0; i < sv->nlive; i++) {
		int slot = sv->live_slot[i], u = s->uses[slot], d = sv->dir_of[slot];
		uses += u;
		rx->way[d] += u;
		if (u)
			rx->can[d] |= sv->line[slot];
	}
	uint64_t left = gifts_unspent(sv, s), reached = 0;
	for (int m = 0; m < sv->machines; m++)
		reached |= UINT64_C(1) << s->pos[m];
	if (!reach || sv->which == DIG_BOUND_NEAREST)
		reached = sv->grid; /* every gift counted */
	rx->gifts = 0;
	while (left) { /* (a breadth-first search that stops once every gift is in) */
		uint64_t got = left & reached;
		if (!got) {
			uint64_t next = step_all(sv, rx, reached);
			if (next == reached)
				break;
			reached = next;
			continue;
		}
		left &= ~got;
		rx->gifts |= got;
		for (; got; got &= got - 1) {
			int c = __builtin_ctzll(got);
			turns += sv->gain[c];
			for (uint32_t b = sv->gives[c]; b; b &= b - 1) {
				int slot = __builtin_ctz(b), d = sv->dir_of[slot];
				uses++;
				rx->way[d]++;
				rx->can[d] |= sv->line[slot];
			}
		}
	}
	rx->limit = turns < uses ? turns : uses;
	return true;
}

/*
 * The nearest-machine bound (the solver's first): the gold whose nearest
 * machine is farthest away, in relaxed steps, found by one breadth-first
 * search over cell sets from every machine at once. -1: some gold cannot
 * be reached at all, or not within the taps and uses left.
 */
static int bound_nearest(const solver *sv, const dig_state *s, const relax *rx)
{
	uint64_t reached = 0;
	for (int m = 0; m < sv->machines; m++)
		reached |= UINT64_C(1) << s->pos[m];
	/* Layer k of the search holds the cells some machine can stand on
	 * after k taps; a gold is done once its layer is found (gold under a
	 * machine counts from layer 1: it needs a step back in). */
	uint64_t left = s->gold;
	int far = 0;
	while (left) {
		uint64_t next = step_all(sv, rx, reached);
		if (next == reached)
			return -1;
		far++;
		left &= ~next;
		reached = next;
	}
	return far > rx->limit ? -1 : far;
}

#define FAR 255         /* a distance: not reachable */
#define ASSIGN_GOLD 24  /* more gold left than this: the nearest bound only */
#define ASSIGN_STEPS 32 /* backtracking steps per bound, at most */

/* Records layer k for the gold of `want` inside `reached`; the gold still
 * wanted. */
static uint64_t found_at(const solver *sv, uint64_t reached, uint64_t want, int k, uint8_t *dist)
{
	for (uint64_t found = reached & want; found; found &= found - 1)
		dist[sv->gold_index[__builtin_ctzll(found)]] = (uint8_t)k;
	return want & ~reached;
}

/*
 * Relaxed distances from `cell` to every gold of the level: dist[i] for
 * gold i (sv->gold_cell[i]) in layers 1.. (the gold under `cell` counts
 * from layer 1: it needs a step out and back in), FAR when never.
 *
 * Under no_shuffle a machine never steps straight back, so the walks
 * counted never reverse either: the search runs over (cell, direction
 * arrived in) as four cell sets, and `came` is the direction the machine
 * arrived in (-1: any first step). It is still a relaxation (other
 * machines, terrain and uses ignored) and exact for it, so it drops by at
 * most one per tap: a real move is one step of the relaxed graph, and the
 * graph only loses steps as arrows run out. Without no_shuffle `came` is
 * ignored and every step may reverse.
 */
static void distances(const solver *sv, const relax *rx, int cell, int came, uint8_t *dist)
{
	memset(dist, FAR, (size_t)sv->ngold);
	uint64_t want = sv->gold_all;
	if (!sv->lv->rules.no_shuffle) {
		uint64_t reached = UINT64_C(1) << cell;
		for (int k = 1; want; k++) {
			uint64_t next = step_all(sv, rx, reached);
			want = found_at(sv, next, want, k, dist);
			if (next == reached)
				break;
			reached = next;
		}
		return;
	}
	uint64_t at[4] = { 0 }, seen[4] = { 0 };
	for (int k = 1; want; k++) {
		uint64_t next[4], any = 0;
		for (int e = 0; e < 4; e++) {
			int back = (e + 2) & 3; /* arriving that way, e steps straight back */
			uint64_t src;
			if (k == 1)
				src = came == back ? 0 : UINT64_C(1) << cell;
			else
				src = at[(back + 1) & 3] | at[e] | at[(back + 3) & 3];
			next[e] = shift(sv, src & rx->can[e], e) & ~seen[e];
			any |= next[e];
		}
		if (!any)
			break;
		want = found_at(sv, any, want, k, dist);
		for (int e = 0; e < 4; e++) {
			seen[e] |= next[e];
			at[e] = next[e];
		}
	}
}

/* The direction a machine that left `from` moved in to reach `to`; -1
 * when it has not moved (from is DIG_NONE). */
static int came_in(const dig_level *lv, int from, int to)
{
	if (from == DIG_NONE)
		return -1;
	if (to == from - lv->w)
		return DIG_UP;
	if (to == from + 1)
		return DIG_RIGHT;
	if (to == from + lv->w)
		return DIG_DOWN;
	return DIG_LEFT;
}

/* The way machine m of s came in as the walks see it: came_in under
 * no_shuffle (no step straight back), else -1 (any step). */
static int way_in(const solver *sv, const dig_state *s, int m)
{
	return sv->lv->rules.no_shuffle ? came_in(sv->lv, s->prev[m], s->pos[m]) : -1;
}

/*
 * The relaxed distances under the moves rx, cached per set of usable
 * directions (it changes only when an arrow runs out or a gift is spent):
 * the set's index into sv->dist, its rows (row_of) and gold-to-gold matrix
 * (pairs_of) worked out as they are asked for. -1 when there is no memory.
 */
static int moves_of(solver *sv, const relax *rx)
{
	if (!sv->dist) {
		sv->dist_size = (size_t)sv->ngold * (size_t)(sv->ngold + sv->cells * 5);
		sv->dist = malloc((size_t)PAIR_CACHE * sv->dist_size);
		sv->dist_set = calloc(PAIR_CACHE, sizeof *sv->dist_set);
		if (!sv->dist || !sv->dist_set) {
			free(sv->dist);
			free(sv->dist_set);
			sv->dist = NULL;
			sv->dist_set = NULL;
			return -1;
		}
	}
	uint64_t h = HASH_SEED;
	for (int d = 0; d < 4; d++)
		h = (h ^ rx->can[d]) * 0x94d049bb133111ebULL;
	int i = (int)(hash_end(h) % PAIR_CACHE);
	struct dist_set *ds = &sv->dist_set[i];
	if (ds->used && !memcmp(ds->can, rx->can, sizeof rx->can))
		return i;
	memcpy(ds->can, rx->can, sizeof rx->can);
	ds->used = true;
	ds->pairs_done = false;
	memset(ds->row_done, 0, sizeof ds->row_done);
	return i;
}

/* Set i's gold-to-gold matrix (row a = distances from gold a, any first
 * step; rx the set's moves), worked out on first use: only the assignment
 * bound and sole_dead read it, and the default search asks them only in
 * long searches (on the 20 slowest hardest proofs the matrices had taken
 * 3 % of the instructions). */
static const uint8_t *pairs_of(solver *sv, const relax *rx, int i)
{
	uint8_t *m = sv->dist + (size_t)i * sv->dist_size;
	if (!sv->dist_set[i].pairs_done) {
		for (int a = 0; a < sv->ngold; a++)
			distances(sv, rx, sv->gold_cell[a], -1, m + a * sv->ngold);
		sv->dist_set[i].pairs_done = true;
	}
	return m;
}

/* The distances of set i from `cell` for a machine that arrived moving
 * `came` (-1: has not moved), worked out on first use. */
static const uint8_t *row_of(solver *sv, const relax *rx, int i, int cell, int came)
{
	int r = cell * 5 + came + 1;
	uint8_t *row =
		sv->dist + (size_t)i * sv->dist_size + (size_t)sv->ngold * (size_t)(sv->ngold + r);
	uint64_t *done = sv->dist_set[i].row_done;
	if (!((done[r >> 6] >> (r & 63)) & 1u)) {
		distances(sv, rx, cell, came, row);
		done[r >> 6] |= UINT64_C(1) << (r & 63);
	}
	return row;
}

/*
 * The pair tables (issue 16). A tap moves only the machines on one line,
 * so two machines on different lines cannot both step at once: relaxed
 * distances let every machine move at every tap, which is why the bounds
 * sit far below the optimum. For every two gold a != b, the table holds,
 * for every two cells p and q, the fewest taps after which a machine that
 * starts at p has entered a and one that starts at q has entered b, when a
 * tap may move either or both of them only if it stands on the tapped
 * slot's line (one step the slot's way; either may stay, as one blocked
 * does), over the slots live anywhere in the level, everything else
 * ignored. Any two machines of a real play follow such a walk, so it is a
 * lower bound; a real tap is one step of it, so it drops by at most one per
 * tap. One breadth-first search backwards per gold pair, over (p, q, which
 * of the two are entered), from every state with both entered. Returns
 * false when there is no memory (the bound then goes without).
 */
static bool joint_build(solver *sv)
{
	int C = sv->cells, G = sv->ngold;
	size_t plane = (size_t)C * (size_t)C;
	sv->joint = malloc((size_t)G * (size_t)G * plane);
	uint8_t *dist = malloc(plane * 4);
	uint16_t *queue = malloc(plane * 4 * sizeof *queue);
	if (!sv->joint || !dist || !queue) {
		free(sv->joint);
		sv->joint = NULL;
		free(dist);
		free(queue);
		return false;
	}
	memset(sv->joint, FAR, (size_t)G * (size_t)G * plane);
	/* before[i * C + c]: the cell live slot i moves onto c, or -1; into[c]:
	 * the live slots that move some cell onto c (a few per cell) */
	int before[DIG_MAX_ARROWS * DIG_MAX_CELLS];
	uint8_t into[DIG_MAX_CELLS][DIG_MAX_ARROWS], ninto[DIG_MAX_CELLS] = { 0 };
	for (int i = 0; i < sv->nlive; i++) {
		int slot = sv->live_slot[i];
		for (int c = 0; c < C; c++) {
			int b = dig_step(sv->lv, c, (sv->lv->arrow[slot].dir + 2) & 3);
			before[i * C + c] = b >= 0 && ((sv->line[slot] >> b) & 1u) ? b : -1;
			if (before[i * C + c] >= 0)
				into[c][ninto[c]++] = (uint8_t)i;
		}
	}
	for (int a = 0; a < G; a++)
		for (int b = a + 1; b < G; b++) {
			int ga = sv->gold_cell[a], gb = sv->gold_cell[b];
			memset(dist, FAR, plane * 4);
			size_t head = 0, tail = 0;
			for (size_t pq = 0; pq < plane; pq++) {
				dist[pq * 4 + 3] = 0;
				queue[tail++] = (uint16_t)(pq * 4 + 3);
			}
			while (head < tail) {
				int e = queue[head++], f2 = e & 3, p2 = (e >> 2) / C,
				    q2 = (e >> 2) % C;
				int d = dist[e] + 1;
				if (d >= FAR)
					continue;
				/* the slots that moved p2's machine in, then those that
				 * moved only q2's */
				for (int k = 0; k < ninto[p2] + ninto[q2]; k++) {
					int i = k < ninto[p2] ? into[p2][k]
							      : into[q2][k - ninto[p2]];
					int pb = before[i * C + p2], qb = before[i * C + q2];
					if (k >= ninto[p2] && pb >= 0)
						continue; /* done with p2's */
					for (int moved = 1; moved < 4; moved++) {
						int p = moved & 1 ? pb : p2,
						    q = moved & 2 ? qb : q2;
						if (p < 0 || q < 0)
							continue;
						int nf = ((moved & 1) && p2 == ga) |
							 (((moved & 2) && q2 == gb) << 1);
						for (int f = 0; f < 4; f++) {
							int e0 = (p * C + q) * 4 + f;
							if ((f | nf) != f2 || dist[e0] != FAR)
								continue;
							dist[e0] = (uint8_t)d;
							queue[tail++] = (uint16_t)e0;
						}
					}
				}
			}
			uint8_t *ab = sv->joint + ((size_t)a * G + b) * plane;
			uint8_t *ba = sv->joint + ((size_t)b * G + a) * plane;
			for (int p = 0; p < C; p++)
				for (int q = 0; q < C; q++) {
					ab[p * C + q] = dist[(p * C + q) * 4];
					ba[q * C + p] = dist[(p * C + q) * 4];
				}
		}
	free(dist);
	free(queue);
	return true;
}

/* What the gold taken so far asks of the directions (bound_assign's note,
 * "Directions"): per way (DIG_UP .. DIG_LEFT) the most steps one machine
 * needs; per axis (0 up and down, 1 right and left) the most one machine
 * needs along it. */
typedef struct dir_need {
	int most[4];
	int axis[2];
} dir_need;

/* The backtracking search of bound_assign: can gold list[j..n) each go to
 * a machine within k moves, given what the machines already took? */
typedef struct assign {
	int n, k, machines, steps;
	int ngold; /* the pair matrix's row length */
	const uint8_t *pair;
	uint8_t list[ASSIGN_GOLD];                     /* gold indices, hardest first */
	uint8_t dist[DIG_MAX_MACHINES][DIG_MAX_CELLS]; /* machine -> gold */
	uint8_t took[DIG_MAX_MACHINES][ASSIGN_GOLD];   /* gold indices per machine */
	int ntook[DIG_MAX_MACHINES];
	uint8_t allow[DIG_MAX_CELLS]; /* per gold: the machines that can collect it */
	int need[DIG_MAX_CELLS];      /* per gold: entries it still needs (a web's visits) */
	int extra[DIG_MAX_CELLS];     /* per gold: moves its one counter spends re-entering */
	const uint8_t *joint;         /* sv->joint, or NULL */
	int cells;
	uint8_t pos[DIG_MAX_MACHINES];
	dir_need dirs;                      /* what the gold taken so far asks of the directions */
	int reach[DIG_MAX_MACHINES][4];     /* per machine: the most steps each way to its gold */
	const int *way;                     /* rx->way */
	const int8_t (*off)[DIG_MAX_CELLS]; /* sv->off */
	const uint8_t *gold_cell;           /* sv->gold_cell */
} assign;

/* The shortest relaxed walk out of gold a and back in. */
static int loop_of(const assign *as, int a)
{
	return as->pair[a * as->ngold + a];
}

/*
 * Moves machine m needs at least to collect gold a and b, in either order.
 * When a is a web only m wears (extra: its need - 1 loops back into a), b
 * is collected before a's first entry, after its last, or on one of the
 * loops (that loop then goes from a to b and back); two such webs: the
 * larger of the two alone.
 */
static int pair_cost(const assign *as, int m, int a, int b)
{
	int ea = as->extra[a], eb = as->extra[b];
	if (ea && eb) {
		int sa = as->dist[m][a] + ea, sb = as->dist[m][b] + eb;
		return sa > sb ? sa : sb;
	}
	if (eb) {
		int t = a;
		a = b;
		b = t;
		ea = eb;
	}
	int pab = as->pair[a * as->ngold + b], pba = as->pair[b * as->ngold + a];
	int before = as->dist[m][b] + pba + ea;
	int after = as->dist[m][a] + ea + pab;
	if (before < after)
		after = before;
	if (ea && loop_of(as, a) < FAR) {
		int inside = as->dist[m][a] + ea - loop_of(as, a) + pab + pba;
		if (inside < after)
			after = inside;
	}
	return after;
}

/*
 * Can web gold a get the entries it needs within k taps? One machine
 * enters a cell per tap, so the last entry comes at least need - 1 taps
 * after the first; and a machine that counts enters first after its
 * distance, then at most once per loop back.
 */
static bool entries_fit(const assign *as, int a)
{
	int entries = 0, first = FAR, loop = loop_of(as, a);
	for (int m = 0; m < as->machines; m++) {
		int d = as->dist[m][a];
		if (!((as->allow[a] >> m) & 1u) || d > as->k)
			continue;
		if (d < first)
			first = d;
		entries += loop >= FAR ? 1 : (as->k - d) / loop + 1;
	}
	return entries >= as->need[a] && as->k - first + 1 >= as->need[a];
}

/*
 * Machine m taking gold cell ga as well: reach[] becomes m's steps each
 * way, *next what all the gold then asks of the directions; false when a
 * way would need more taps than its arrows have uses, or the two axes
 * together more than k.
 */
static bool dirs_fit(const assign *as, int m, int ga, int reach[4], dir_need *next)
{
	*next = as->dirs;
	memcpy(reach, as->reach[m], sizeof as->reach[m]);
	int pm = as->pos[m], sum = 0;
	for (int d = 0; d < 4; d++) {
		int need = as->off[d][ga] - as->off[d][pm];
		if (need > reach[d])
			reach[d] = need;
		if (need > next->most[d])
			next->most[d] = need;
		if (next->most[d] > as->way[d])
			return false;
	}
	for (int x = 0; x < 2; x++) {
		int r = reach[x], l = reach[x + 2];
		int one = r + l + (r < l ? r : l);
		if (one > next->axis[x])
			next->axis[x] = one;
		int both = next->most[x] + next->most[x + 2];
		sum += both > next->axis[x] ? both : next->axis[x];
	}
	return sum <= as->k;
}

/* 1: an assignment exists; 0: none; -1: out of steps (undecided). */
static int assign_from(assign *as, int j)
{
	if (j == as->n)
		return 1;
	if (++as->steps > ASSIGN_STEPS)
		return -1;
	int a = as->list[j], ga = as->gold_cell[a];
	for (int m = 0; m < as->machines; m++) {
		if (!((as->allow[a] >> m) & 1u) || as->dist[m][a] + as->extra[a] > as->k)
			continue;
		dir_need next;
		int reach[4];
		if (!dirs_fit(as, m, ga, reach, &next))
			continue;
		bool fits = true;
		for (int t = 0; fits && t < as->ntook[m]; t++)
			fits = pair_cost(as, m, a, as->took[m][t]) <= as->k;
		/* with the pair tables: a and each gold another machine took */
		const uint8_t *row =
			as->joint ? as->joint + (size_t)a * as->ngold * as->cells * as->cells +
					    (size_t)as->pos[m] * as->cells
				  : NULL;
		for (int m2 = 0; row && fits && m2 < as->machines; m2++)
			for (int t = 0; m2 != m && fits && t < as->ntook[m2]; t++)
				fits = row[(size_t)as->took[m2][t] * as->cells * as->cells +
					   as->pos[m2]] <= as->k;
		if (!fits)
			continue;
		dir_need was = as->dirs;
		int was_reach[4];
		memcpy(was_reach, as->reach[m], sizeof reach);
		as->dirs = next;
		memcpy(as->reach[m], reach, sizeof reach);
		as->took[m][as->ntook[m]++] = (uint8_t)a;
		int r = assign_from(as, j + 1);
		as->ntook[m]--;
		as->dirs = was;
		memcpy(as->reach[m], was_reach, sizeof reach);
		if (r != 0)
			return r;
	}
	return 0;
}

/*
 * The assignment bound, at least the nearest bound. Every gold is
 * collected by some machine, each tap moves a machine at most one relaxed
 * step, so the taps are at least the moves of the busiest machine. A
 * machine collecting gold a and b moves at least its distance to one of
 * them plus the distance from that one to the other. The bound is the
 * least k for which every remaining gold can go to a machine so that each
 * machine reaches each of its gold, and each pair of them, within k: tried
 * k = the nearest bound (or `least`, a bound already known for the state,
 * when that is more), then upwards. Every k below the answer was refuted
 * or lies below `least`, so the answer never overestimates, also when the
 * search gives up (ASSIGN_STEPS) and returns the k it reached.
 *
 * Directions (issue 16): a tap moves every machine it moves the same way,
 * so the taps that move anybody up are at least the most up-steps one
 * machine needs, and likewise for the other three ways; the four add up.
 * A machine that collects gold a needs at least as many steps up as a lies
 * rows above it (and so on), so with the assignment the taps are at least
 * the sum over the four ways of the most any machine needs for its gold
 * (as->most), and no way's most may pass the uses left on the arrows
 * pointing that way (rx->way, gifts counted). Along one axis a machine
 * whose gold lies on both sides of it goes to one side and back past its
 * start to the other (r + l + min(r, l) steps for r right and l left), so
 * each axis costs at least the larger of that for one machine
 * (as->axis) and the two ways' most added; the two axes add up. A tap in
 * one way lowers that way's terms by at most one and can only raise the
 * opposite way's, and spends one use of that way, so these terms are
 * consistent too.
 *
 * Webs (issue 16): gold whose web_left is v > 0 needs v more counted
 * entries, and the one that wears it through collects it, so only the
 * machines whose visit counts (sv->counters, probed through the terrain
 * hook) may take it. A web one machine alone wears costs that machine
 * v - 1 loops out of the cell and back; a web several machines wear needs
 * its v entries within k (entries_fit). Distances never reverse under
 * no_shuffle (distances()).
 *
 * Consistent: one tap moves each machine one step along the relaxed moves
 * of the state before, later states only lose moves, and a machine that
 * enters a web lowers its need by one while its distance to it becomes at
 * least one loop; so every cost term drops by at most one per tap, and an
 * assignment within k after the tap is one within k + 1 before it.
 */
static int bound_assign(solver *sv, const dig_state *s, const relax *rx, int far, int least)
{
	assign as;
	as.n = 0;
	bool webs = false;
	for (int i = 0; i < sv->ngold; i++)
		if ((s->gold >> sv->gold_cell[i]) & 1u) {
			if (as.n == ASSIGN_GOLD)
				return far;
			as.list[as.n++] = (uint8_t)i;
			webs |= s->web_left[sv->gold_cell[i]] > 1;
		}
	if (as.n < 2 && !webs)
		return far;
	int set = moves_of(sv, rx);
	if (set < 0)
		return far; /* no memory for the distances: the nearest bound */
	as.machines = sv->machines;
	as.ngold = sv->ngold;
	as.joint = sv->joint;
	as.cells = sv->cells;
	memcpy(as.pos, s->pos, sizeof as.pos);
	memset(&as.dirs, 0, sizeof as.dirs);
	memset(as.reach, 0, sizeof as.reach);
	as.way = rx->way;
	as.off = sv->off;
	as.gold_cell = sv->gold_cell;
	as.pair = pairs_of(sv, rx, set);
	for (int m = 0; m < sv->machines; m++) {
		const uint8_t *row =
			row_of(sv, rx, set, s->pos[m], came_in(sv->lv, s->prev[m], s->pos[m]));
		for (int j = 0; j < as.n; j++) {
			int a = as.list[j];
			as.dist[m][a] = row[a] > rx->limit ? FAR : row[a];
		}
		as.ntook[m] = 0;
	}
	uint8_t all = (uint8_t)((1u << sv->machines) - 1u);
	int nshared = 0;
	uint8_t shared[ASSIGN_GOLD]; /* webs several machines wear */
	for (int j = 0; j < as.n; j++) {
		int a = as.list[j], v = s->web_left[sv->gold_cell[a]];
		as.allow[a] = v > 0 ? sv->counters[a] : all;
		as.need[a] = v > 1 ? v : 1;
		as.extra[a] = 0;
		if (v < 2)
			continue;
		if (!(as.allow[a] & (as.allow[a] - 1)))
			as.extra[a] = loop_of(&as, a) >= FAR ? FAR : (v - 1) * loop_of(&as, a);
		else
			shared[nshared++] = (uint8_t)a;
	}
	/* Gold with the fewest machines near it first (insertion sort on the
	 * nearest distance, farthest first: those constrain the most). */
	int near[DIG_MAX_CELLS];
	for (int j = 0; j < as.n; j++) {
		int a = as.list[j], best = FAR;
		for (int m = 0; m < as.machines; m++)
			if (as.dist[m][a] < best)
				best = as.dist[m][a];
		near[a] = best;
	}
	for (int j = 1; j < as.n; j++)
		for (int t = j; t > 0 && near[as.list[t]] > near[as.list[t - 1]]; t--) {
			uint8_t x = as.list[t];
			as.list[t] = as.list[t - 1];
			as.list[t - 1] = x;
		}
	as.steps = 0;
	for (as.k = far > least ? far : least; as.k <= rx->limit; as.k++) {
		bool fit = true;
		for (int i = 0; fit && i < nshared; i++)
			fit = entries_fit(&as, shared[i]);
		if (!fit)
			continue;
		int r = assign_from(&as, 0);
		if (r != 0)
			return as.k; /* 1: the least k; -1: every smaller k refuted */
	}
	return -1;
}

/* ---- the lone-machine test ---- */

#define LONE_NODES 512 /* search nodes per gold, at most (then: not dead) */

/* Sixteen bytes as one vector (GCC's vector extension: SSE2 on x86-64,
 * plain code elsewhere), for the byte arrays of uses compared whole. */
typedef uint8_t bytes16 __attribute__((vector_size(16)));

/* A node of lone_find's search: a machine's cell, the way it came in (-1:
 * has not moved, or no no_shuffle), its steps so far, its steps into the
 * goal so far, the uses left on every live slot (0 past them: lone_from
 * zeroes the root's, and nodes copy them whole), and the next node kept at
 * the same cell and way. */
typedef struct lone_node {
	uint8_t cell, depth;
	int8_t came;
	uint8_t visits;
	uint16_t next;
	uint8_t uses[DIG_MAX_ARROWS];
} lone_node;

/* A walk of machine m's that lone_find found into gold gi: where it
 * started (cell, way in), its steps (0: none found yet) and the uses it
 * spent on every live slot. A later state with m at that cell and way in,
 * those steps within its limit and those uses left has the same walk
 * (lone_walked). */
typedef struct lone_walk {
	uint8_t cell, steps;
	int8_t came;
	uint8_t spent[DIG_MAX_ARROWS];
} lone_walk;

/* What a whole lone_find search of machine m from (cell, came) towards
 * gold gi found: the most steps into the gold's cell any walk of at most
 * `limit` steps within `uses` made (0: it never got there). Fewer uses
 * and fewer steps allow only fewer walks, so `most` bounds the answer of
 * every search from there with no more of either (lone_memo_most). */
typedef struct lone_memo {
	uint8_t m, gi, cell, came, limit, most;
	bool set;
	uint8_t uses[DIG_MAX_ARROWS];
} lone_memo;

#define LONE_MEMO 1024 /* lone_memo entries, in sets of LONE_WAYS by machine, gold, cell, way */
#define LONE_WAYS 4

struct lone {
	lone_node node[LONE_NODES];
	lone_memo memo[LONE_MEMO];
	int memo_next; /* the way lone_memo_put replaces next */
	lone_walk walk[DIG_MAX_MACHINES][DIG_MAX_CELLS]; /* by machine, gold index */
	lone_walk last; /* what the last search to reach its one gold walked */
	/* (cell, came + 1) -> stamp << 16 | (node + 1): entries of an older
	 * search (another stamp) count as empty */
	uint32_t head[DIG_MAX_CELLS * 5];
	uint32_t stamp;
	int len;
};

/* Starts a new search over a (cell, came + 1) head table whose entries
 * are stamp << 16 | (node + 1): entries of older stamps count as empty,
 * and when the stamp wraps every entry is forgotten. */
static void next_stamp(uint32_t *stamp, uint32_t *head, size_t size)
{
	if (++*stamp > 0xFFFFu) {
		memset(head, 0, size);
		*stamp = 1;
	}
}

#define SOLE_GOLD 8 /* gold one walk of sole_dead's must enter, at most */

/* One search of lone_find: machine m towards gold gi (cell goal), under
 * the relaxed distances of set `set`, for `need` steps into its cell (a
 * web's gold counts on a later visit); `most`: the most steps in that any
 * walk made. With k >= 2 gold (sole_dead), into each of the cells
 * goal[0..k) once instead, nodes' visits a bit per gold entered; `apart`:
 * the fewest relaxed steps from one of them to another. */
typedef struct lone_goal {
	int m, set, limit, need, most, k, apart;
	int gi[SOLE_GOLD], goal[SOLE_GOLD];
	const relax *rx;
} lone_goal;

/* Does a leave at least b's uses on every live slot (n of them)? */
static bool covers(const uint8_t *a, const uint8_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] < b[i])
			return false;
	return true;
}

/* covers() of two whole DIG_MAX_ARROWS-byte uses arrays (0 past the live
 * slots), read as two vectors: lone_find compares each new node with every
 * one kept at its cell and way (up to 16 times a node on the slowest
 * hardest proofs), and the walks' spends_more is this test too. */
static inline bool covers_all(const uint8_t *a, const uint8_t *b)
{
	bytes16 a0, a1, b0, b1;
	memcpy(&a0, a, sizeof a0);
	memcpy(&a1, a + sizeof a0, sizeof a1);
	memcpy(&b0, b, sizeof b0);
	memcpy(&b1, b + sizeof b0, sizeof b1);
	bytes16 below = (bytes16)(a0 < b0) | (bytes16)(a1 < b1);
	uint64_t w[2];
	memcpy(w, &below, sizeof w);
	return (w[0] | w[1]) == 0;
}

/* The visits of a lone_find node that steps from node p into `cell`: one
 * more if it is the goal, or (k >= 2) the bit of the gold there. */
static int visits_after(const lone_goal *lg, const lone_node *p, int cell)
{
	if (lg->k < 2)
		return p->visits + (cell == lg->goal[0]);
	int v = p->visits;
	for (int i = 0; i < lg->k; i++)
		v |= (cell == lg->goal[i]) << i;
	return v;
}

/* Does a lone_find node with visits a count at least as far as one with
 * visits b? */
static bool visits_cover(const lone_goal *lg, int a, int b)
{
	return lg->k < 2 ? a >= b : (a & b) == b;
}

/* The fewest relaxed steps left, from a node at a cell whose distances
 * are `row` with visits v, before lg's k >= 2 gold are all entered: to
 * the nearest not entered yet, then `apart` on to each other one. */
static int steps_to_all(const lone_goal *lg, const uint8_t *row, int v)
{
	int near = FAR, left = 0;
	for (int i = 0; i < lg->k; i++)
		if (!((v >> i) & 1)) {
			left++;
			near = row[lg->gi[i]] < near ? row[lg->gi[i]] : near;
		}
	return near + (left - 1) * lg->apart;
}

/* Depth-first from node `at`: 1 when the machine can step into the goal
 * lg->need times (k >= 2: into each of its gold), 0 when not (lg->most:
 * the most it can), -1 when the search outgrew LONE_NODES. */
static int lone_find(solver *sv, lone_goal *lg, int at)
{
	struct lone *ln = sv->lone;
	const lone_node *p = &ln->node[at];
	if (p->depth >= lg->limit)
		return 0;
	bool no_shuffle = sv->lv->rules.no_shuffle;
	int order[4], dist[4], nc = 0;
	for (int e = 0; e < sv->nexit[p->cell]; e++) {
		const struct exit *x = &sv->exit[p->cell][e];
		if (!p->uses[x->live] || !((sv->enter[lg->m] >> x->to) & 1u) ||
		    (p->came >= 0 && x->dir == ((p->came + 2) & 3)))
			continue;
		int d = 0;
		if (lg->k >= 2) {
			int v = visits_after(lg, p, x->to);
			if (v == (1 << lg->k) - 1)
				return 1;
			d = steps_to_all(lg, row_of(sv, lg->rx, lg->set, x->to,
						    no_shuffle ? x->dir : -1),
					 v);
			if (p->depth + 1 + d > lg->limit)
				continue;
		} else if (x->to == lg->goal[0]) {
			if (p->visits + 1 >= lg->need) {
				lone_walk *w = &ln->last;
				w->steps = (uint8_t)(p->depth + 1);
				for (int i = 0; i < sv->nlive; i++)
					w->spent[i] = (uint8_t)(ln->node[0].uses[i] - p->uses[i]);
				w->spent[x->live]++;
				return 1;
			}
			if (p->visits + 1 > lg->most)
				lg->most = p->visits + 1;
			if (p->depth + 3 > lg->limit)
				continue; /* in again: a step out and one back at least */
		} else {
			d = row_of(sv, lg->rx, lg->set, x->to, no_shuffle ? x->dir : -1)[lg->gi[0]];
			if (p->depth + 1 + d > lg->limit)
				continue; /* relaxed distances never exceed the lone walk's */
		}
		int t = nc++;
		for (; t > 0 && dist[t - 1] > d; t--) {
			order[t] = order[t - 1];
			dist[t] = dist[t - 1];
		}
		order[t] = e;
		dist[t] = d;
	}
	for (int i = 0; i < nc; i++) {
		const struct exit *x = &sv->exit[p->cell][order[i]];
		if (ln->len == LONE_NODES)
			return -1;
		lone_node *q = &ln->node[ln->len];
		memcpy(q->uses, p->uses, sizeof q->uses);
		q->uses[x->live]--;
		q->depth = (uint8_t)(p->depth + 1);
		q->came = (int8_t)(no_shuffle ? x->dir : -1);
		q->visits = (uint8_t)visits_after(lg, p, x->to);
		uint32_t *h = &ln->head[x->to * 5 + q->came + 1];
		uint32_t first = (*h >> 16) == ln->stamp ? *h & 0xFFFFu : 0;
		bool dominated = false;
		for (uint32_t k = first; k && !dominated; k = ln->node[k - 1].next)
			dominated = ln->node[k - 1].depth <= q->depth &&
				    visits_cover(lg, ln->node[k - 1].visits, q->visits) &&
				    covers_all(ln->node[k - 1].uses, q->uses);
		if (dominated)
			continue;
		q->cell = x->to;
		q->next = (uint16_t)first;
		*h = ln->stamp << 16 | (uint32_t)(ln->len + 1);
		int r = lone_find(sv, lg, ln->len++);
		if (r != 0)
			return r;
	}
	return 0;
}

/* The uses of every live slot in `s`, what the cells `gifts` (unspent:
 * relax_of's rx->gifts, those within reach) can still give counted as
 * given. */
static void uses_given(const solver *sv, const dig_state *s, uint64_t gifts, uint8_t *uses)
{
	for (int i = 0; i < sv->nlive; i++)
		uses[i] = s->uses[sv->live_slot[i]];
	for (; gifts; gifts &= gifts - 1)
		for (uint32_t b = sv->gives[__builtin_ctzll(gifts)]; b; b &= b - 1)
			uses[sv->live_of[__builtin_ctz(b)]]++; /* (every slot given is live) */
}

/* What lone_dead and sole_dead start from: each machine's way in and its
 * relaxed distances under rx (came[], row[]); the distances' set, or -1
 * when a search cannot run (limit past a byte, no memory). */
static int lone_rows(solver *sv, const dig_state *s, const relax *rx, int *came,
		     const uint8_t **row)
{
	if (rx->limit >= UINT8_MAX)
		return -1; /* node depths are bytes */
	int set = moves_of(sv, rx);
	if (set < 0 || (!sv->lone && !(sv->lone = calloc(1, sizeof *sv->lone))))
		return -1;
	for (int m = 0; m < sv->machines; m++) {
		came[m] = way_in(sv, s, m);
		row[m] = row_of(sv, rx, set, s->pos[m], came[m]);
	}
	return set;
}

/* lone_find from machine m's cell and way in (came), with `uses` left. */
static int lone_from(solver *sv, lone_goal *lg, int cell, int came, const uint8_t *uses)
{
	struct lone *ln = sv->lone;
	next_stamp(&ln->stamp, ln->head, sizeof ln->head);
	lone_node *root = &ln->node[0];
	root->cell = (uint8_t)cell;
	root->came = (int8_t)came;
	root->depth = 0;
	root->visits = 0;
	root->next = 0;
	memcpy(root->uses, uses, (size_t)sv->nlive);
	memset(root->uses + sv->nlive, 0, sizeof root->uses - (size_t)sv->nlive);
	ln->len = 1;
	return lone_find(sv, lg, 0);
}

/* The set of LONE_WAYS entries where machine m's searches from (cell,
 * came) towards gold gi are remembered. */
static lone_memo *lone_memo_set(const solver *sv, int m, int gi, int cell, int came)
{
	unsigned k = (unsigned)(((m * sv->ngold + gi) * sv->cells + cell) * 5 + came + 1);
	return &sv->lone->memo[(k * 2654435761u >> 12) % (LONE_MEMO / LONE_WAYS) * LONE_WAYS];
}

static bool lone_memo_is(const lone_memo *e, int m, int gi, int cell, int came)
{
	return e->set && e->m == m && e->gi == gi && e->cell == cell && e->came == (uint8_t)came;
}

/* The most steps into gold gi a whole search of machine m from (cell,
 * came), within `limit` steps and `uses` (0 past the live slots), could
 * make, from a search remembered with no fewer of either (the least such
 * most): -1 when none is; *same when that search had the same limit and
 * uses (the answer itself, not a bound). */
static int lone_memo_most(const solver *sv, int m, int gi, int cell, int came, int limit,
			  const uint8_t *uses, bool *same)
{
	const lone_memo *set = lone_memo_set(sv, m, gi, cell, came);
	int most = -1;
	for (int i = 0; i < LONE_WAYS; i++) {
		const lone_memo *e = &set[i];
		if (!lone_memo_is(e, m, gi, cell, came) || e->limit < limit ||
		    !covers_all(e->uses, uses) || (most >= 0 && e->most >= most))
			continue;
		most = e->most;
		*same = e->limit == limit && !memcmp(e->uses, uses, sizeof e->uses);
	}
	return most;
}

/* Remembers a whole search's answer (lone_memo_most), in place of one it
 * bounds no worse from a search with no more uses or steps, else of the
 * set's oldest. */
static void lone_memo_put(solver *sv, int m, int gi, int cell, int came, int limit,
			  const uint8_t *uses, int most)
{
	lone_memo *set = lone_memo_set(sv, m, gi, cell, came), *e = NULL;
	for (int i = 0; i < LONE_WAYS && !e; i++)
		if (!set[i].set ||
		    (lone_memo_is(&set[i], m, gi, cell, came) && set[i].limit <= limit &&
		     set[i].most >= most && covers_all(uses, set[i].uses)))
			e = &set[i];
	if (!e) {
		e = &set[sv->lone->memo_next];
		sv->lone->memo_next = (sv->lone->memo_next + 1) % LONE_WAYS;
	}
	*e = (lone_memo){ .m = (uint8_t)m, .gi = (uint8_t)gi, .cell = (uint8_t)cell,
			  .came = (uint8_t)came, .limit = (uint8_t)limit, .most = (uint8_t)most,
			  .set = true };
	memcpy(e->uses, uses, sizeof e->uses);
}

/* Whether machine m has a walk into gold gi kept from an earlier state
 * that `s` allows too: m at the walk's cell and way in (came), the walk
 * within `limit` steps and every use it spent left in `uses`. */
static bool lone_walked(const solver *sv, const dig_state *s, int m, int came, int gi, int limit,
			const uint8_t *uses)
{
	const lone_walk *w = &sv->lone->walk[m][gi];
	if (!w->steps || w->cell != s->pos[m] || w->came != came || w->steps > limit)
		return false;
	for (int i = 0; i < sv->nlive; i++)
		if (w->spent[i] > uses[i])
			return false;
	return true;
}

/*
 * Whether `s` cannot win because some gold is out of reach of every
 * machine that may collect it, each machine moving on its own: one step
 * per tap of a live slot with a use left that acts on its cell, using no
 * slot more often than it has uses left (the uses that unspent cells can
 * still give counted as given), into cells it may enter, never straight
 * back under no_shuffle, at most rx->limit steps; or because a web's gold
 * needs more counted visits (web_left) than those machines can make
 * between them, each walking so on its own. Other machines, freezing and
 * what visits give besides uses are left out, so this only adds moves: in
 * a winning play the machine that collects a gold steps into it along such
 * a walk of its own moves, each one tap spending a use of a slot that acts
 * on its cell, and each counted visit to a web is a step into it along
 * the walk of the machine making it (visits by several machines add up;
 * the uses they share are counted whole for each, which only adds). So a
 * state called dead is dead, and pruning it changes no optimum (nothing it
 * leads to can win either). It sees what the relaxed distances cannot:
 * that a slot's few uses run out along the walk (issue 16: most of the
 * states a long hardest search expands are dead, most of them for that
 * reason), and that stepping into a web again takes a way out and back.
 *
 * Per gold, per machine that may collect it (nearest first), a depth-first
 * search over (cell, way in, uses left), steps towards the gold first,
 * cut where the relaxed distance left (row_of) cannot fit in the limit; a
 * node that leaves no more uses anywhere than one kept at the same cell
 * and way, no deeper, with no fewer visits, is dropped. A web first asks
 * each machine for one visit, as any gold does; only when fewer machines
 * than visits needed can step in at all, those machines are asked for the
 * most visits each can make alone (a search that stops once the visits
 * still needed are found). A gold whose search outgrows LONE_NODES counts
 * as reachable. A machine that an earlier state's search found a walk for
 * into that gold, and that still has it (lone_walked), is not searched
 * again: half of the searches on hardest seeds 1 to 100, none of them
 * ever an outgrown one. webs_only: only the webs that need two visits or
 * more.
 */
static bool lone_dead(solver *sv, const dig_state *s, const relax *rx, bool webs_only)
{
	uint64_t ask = s->gold; /* the gold to ask about */
	if (webs_only)
		for (uint64_t g = s->gold; g; g &= g - 1)
			if (s->web_left[__builtin_ctzll(g)] <= 1)
				ask &= ~(g & -g);
	int came[DIG_MAX_MACHINES];
	const uint8_t *row[DIG_MAX_MACHINES];
	int set;
	if (!ask || (set = lone_rows(sv, s, rx, came, row)) < 0)
		return false;
	uint8_t uses[DIG_MAX_ARROWS] = { 0 }; /* (0 past the live slots: lone_memo_most) */
	uses_given(sv, s, rx->gifts, uses);
	for (uint64_t g = ask; g; g &= g - 1) {
		int c = __builtin_ctzll(g), gi = sv->gold_index[c];
		lone_goal lg = { .set = set, .limit = rx->limit, .need = 1, .k = 1, .rx = rx };
		bool same;
		lg.goal[0] = c;
		lg.gi[0] = gi;
		int need = s->web_left[c] > 1 ? s->web_left[c] : 1;
		uint8_t allow = s->web_left[c] ? sv->counters[gi] : 0xFF;
		uint8_t tried = 0, once = 0;
		int r = 0, found = 0;
		for (;;) { /* the machines that may collect it, nearest first */
			lg.m = -1;
			for (int m = 0; m < sv->machines; m++)
				if (((allow & ~tried) >> m) & 1u && row[m][gi] <= lg.limit &&
				    (lg.m < 0 || row[m][gi] < row[lg.m][gi]))
					lg.m = m;
			if (lg.m < 0)
				break;
			tried |= (uint8_t)(1u << lg.m);
			int at = s->pos[lg.m], way = came[lg.m];
			if (lone_walked(sv, s, lg.m, way, gi, lg.limit, uses)) {
				r = 1;
			} else if (lone_memo_most(sv, lg.m, gi, at, way, lg.limit, uses, &same) == 0) {
				r = 0; /* out of its reach with as many uses and steps already */
			} else if ((r = lone_from(sv, &lg, at, way, uses)) > 0) {
				lone_walk *w = &sv->lone->walk[lg.m][gi];
				*w = sv->lone->last;
				w->cell = (uint8_t)at;
				w->came = (int8_t)way;
			} else if (r < 0) {
				break;
			} else {
				lone_memo_put(sv, lg.m, gi, at, way, lg.limit, uses, 0);
			}
			if (r > 0) {
				once |= (uint8_t)(1u << lg.m);
				if (++found == need)
					break;
			}
		}
		if (r < 0 || found == need)
			continue; /* reachable, or the search outgrew LONE_NODES */
		/* A web needing more visits than machines can step in once:
		 * visits by different machines add up, so it is out of reach
		 * when their most visits, each walking alone, fall short. A
		 * machine's most from a search remembered with more uses or
		 * steps bounds its own: where those bounds already fall short
		 * the web is out of reach; where they do not and one was not
		 * the answer itself, the machines are searched again: the
		 * verdict is the searches' own, or a dead end that a search
		 * outgrowing LONE_NODES would have missed (on hardest seed
		 * 562's accepted proof 35 % of these searches repeated one
		 * exactly; none of 2 232 hardest and expert candidates
		 * expands other states for it). */
		int total = 0;
		bool bounded = false;
		for (int pass = 0; pass < 2 && (pass == 0 || bounded); pass++) {
			total = 0;
			bounded = false;
			for (int m = 0; m < sv->machines && total < need; m++) {
				if (!((once >> m) & 1u))
					continue;
				int most = pass ? -1
						: lone_memo_most(sv, m, gi, s->pos[m], came[m],
								 lg.limit, uses, &same);
				if (most >= 0 && most < need - total) {
					total += most;
					bounded |= !same;
					continue;
				}
				lg.m = m;
				lg.need = need - total;
				lg.most = 0;
				int r2 = lone_from(sv, &lg, s->pos[m], came[m], uses);
				if (r2 != 0) {
					total = need; /* enough, or the search outgrew LONE_NODES */
				} else {
					total += lg.most;
					lone_memo_put(sv, m, gi, s->pos[m], came[m], lg.limit, uses,
						      lg.most);
				}
			}
			if (total < need)
				return true;
		}
	}
	return false;
}

/* ---- the web supply test ---- */

#define CONE_PASSES 64 /* passes over a web's cone, at most (then: not short) */
#define CONE_DEPTH 4   /* steps back from a web its cone follows (past them: any supply) */
#define WEBS_AFTER 1024 /* states a search expands before it asks webs_short */
#define SOLE_AFTER 1024 /* states a search expands before it asks sole_dead */
#define GATE_WINDOW 256 /* asks per window; fewer than 1 in GATE_RATE dead: never again */
#define GATE_RATE 25

/* A step of a web's cone: a machine on `pre` steps into `cell` moving
 * `way`, by a tap of one of the live slots `live`. */
typedef struct cone_step {
	uint8_t cell, way, pre, edge; /* edge: pre lies past the cone's depth */
	uint32_t live;
	uint32_t feed; /* the live slots of the step into pre moving `way` (0: none) */
} cone_step;

struct cone {
	int n;
	cone_step step[DIG_MAX_CELLS * 4];
};

/* The steps into web cell w and, backwards, into every cell a machine
 * walking to w may step from, up to CONE_DEPTH steps back (a step from
 * farther marked `edge`), nearest to w first: w's own steps come first,
 * so a state whose neighbours can feed w stops after a few. Built once
 * per search; NULL when there is no memory. */
static const struct cone *cone_of(solver *sv, int w)
{
	if (sv->cone[w])
		return sv->cone[w];
	struct cone *k = malloc(sizeof *k);
	if (!k)
		return NULL;
	uint8_t queue[DIG_MAX_CELLS], depth[DIG_MAX_CELLS];
	int head = 0, tail = 0;
	uint64_t seen = UINT64_C(1) << w;
	depth[w] = 0;
	queue[tail++] = (uint8_t)w;
	k->n = 0;
	while (head < tail) {
		int c = queue[head++];
		int pre[4] = { -1, -1, -1, -1 }; /* per way in: the cell stepped from */
		uint32_t live[4] = { 0 };         /* and the live slots making the step */
		for (int q = 0; q < sv->cells; q++)
			for (int e = 0; e < sv->nexit[q]; e++)
				if (sv->exit[q][e].to == c) {
					pre[sv->exit[q][e].dir] = q;
					live[sv->exit[q][e].dir] |= UINT32_C(1) << sv->exit[q][e].live;
				}
		for (int d = 0; d < 4; d++) {
			int p = pre[d];
			if (p < 0)
				continue;
			bool edge = depth[c] + 1 >= CONE_DEPTH;
			k->step[k->n++] = (cone_step){ (uint8_t)c, (uint8_t)d, (uint8_t)p, (uint8_t)edge,
						      live[d], 0 };
			if (!edge && !((seen >> p) & 1u)) {
				seen |= UINT64_C(1) << p;
				depth[p] = (uint8_t)(depth[c] + 1);
				queue[tail++] = (uint8_t)p;
			}
		}
	}
	for (int i = 0; i < k->n; i++) /* (the cone holds at most one step per cell and way) */
		for (int j = 0; j < k->n; j++)
			if (k->step[j].cell == k->step[i].pre && k->step[j].way == k->step[i].way)
				k->step[i].feed = k->step[j].live;
	sv->cone[w] = k;
	return k;
}

/*
 * Whether some web left in `s` can get fewer counted visits than it needs
 * (web_left >= 2), however the rest of the play goes: then the state is
 * dead. Issue 16: most states a long hardest search expands cannot win at
 * all (docs/digger.md, "A web's doorstep, counted"), and where a web is
 * the reason, each machine walking alone (lone_dead, the uses bound) can
 * step into it and their visits add up, but the machines cannot all get
 * to its doorstep.
 *
 * A visit is a step into the web w, made by a tap of a slot that acts on
 * the cell the machine comes from (the pre cell) while a machine that
 * counts stands there. So the steps into a cell c moving d, over the rest
 * of the play, are at most the sum over the slots making that step of the
 * lesser of their uses left (the gifts within reach, rx, counted as given)
 * and the times a machine stands on the pre cell p: the one there now, plus
 * each machine that steps into p later, once per entry; under no_shuffle a
 * machine that came into p from c (or stands on p having left c) cannot
 * step straight back into c. The entries into p are bounded the same way,
 * and so on back, CONE_DEPTH steps (past them any supply): N[c][d] <= sum
 * over slots of min(uses, [p held] + sum over d' of N[p][d']). One slot's
 * uses count one less where that slot alone brings machines onto p (its
 * line runs on into p the same way, no other slot makes that step) and
 * nothing else can (no machine there, no entry the other ways): the machine
 * its first step into c takes was brought onto p by an earlier tap of the
 * same slot, which stepped nobody into c (on seed 51's third hardest
 * candidate, a web's only second way in is down a column from a cell only
 * that column's one use feeds: 6 928 -> 2 189 states). Its least solution,
 * worked out upwards from 0, is at least the true count (by induction over
 * the taps: the entries made up to tap t are within the t-th iterate; the
 * use less is taken only where the iterate, which bounds the entries made
 * up to tap t - 1 from above, has no machine on p but by that slot). Only
 * machines that count for w (sv->counters) are seeded, and only cells one
 * of them may enter can be entered; other machines, blocking, freezing and
 * the order of taps are left out, so it only overcounts and a web it calls
 * short is short. It stops as soon as w's count reaches its need (most
 * states), and after CONE_PASSES passes without settling (uses in the
 * hundreds) says "not short".
 */
static bool webs_short(solver *sv, const dig_state *s, const relax *rx)
{
	uint8_t cap[DIG_MAX_ARROWS];
	bool capped = false;
	bool ns = sv->lv->rules.no_shuffle;
	for (uint64_t g = s->gold; g; g &= g - 1) {
		int w = __builtin_ctzll(g), need = s->web_left[w];
		if (need < 2)
			continue;
		const struct cone *k = cone_of(sv, w);
		if (!k)
			return false;
		if (!capped) {
			uses_given(sv, s, rx->gifts, cap);
			capped = true;
		}
		uint8_t who = sv->counters[sv->gold_index[w]];
		uint64_t held = 0, may = 0;
		int left[DIG_MAX_CELLS]; /* the cell its machine last left, -1 none */
		for (int m = 0; m < sv->machines; m++)
			if ((who >> m) & 1u) {
				held |= UINT64_C(1) << s->pos[m];
				left[s->pos[m]] = s->prev[m] == DIG_NONE ? -1 : s->prev[m];
				may |= sv->enter[m];
			}
		int N[DIG_MAX_CELLS][4], T[DIG_MAX_CELLS]; /* T: N's sum over ways */
		for (int i = 0; i < k->n; i++) { /* (only the cone's cells are read) */
			const cone_step *st = &k->step[i];
			N[st->cell][st->way] = 0;
			N[st->pre][(st->way + 2) & 3] = 0;
			T[st->cell] = T[st->pre] = 0;
		}
		bool enough = false;
		for (int pass = 0; pass < CONE_PASSES && !enough; pass++) {
			bool changed = false;
			for (int i = 0; i < k->n && !enough; i++) {
				const cone_step *st = &k->step[i];
				int c = st->cell, d = st->way, p = st->pre;
				if (!((may >> c) & 1u))
					continue;
				int sup = st->edge ? 255 : T[p] - (ns ? N[p][(d + 2) & 3] : 0);
				if (((held >> p) & 1u) && !(ns && left[p] == c))
					sup++;
				/* Nothing but the step's own way onto p (no machine
				 * there, no other way in): see above. */
				bool fed_only = !st->edge && sup <= N[p][d];
				int v = 0;
				for (uint32_t b = st->live; b; b &= b - 1) {
					int u = cap[__builtin_ctz(b)];
					if (fed_only && st->feed == (b & -b) && u > 0)
						u--;
					v += u < sup ? u : sup;
				}
				if (v > N[c][d]) {
					T[c] += v - N[c][d];
					N[c][d] = v;
					changed = true;
					enough = T[w] >= need;
				}
			}
			if (!changed)
				return true; /* the least solution: w gets fewer than need */
		}
	}
	return false;
}

/*
 * A test of the states about to be expanded (webs_short, sole_dead) as the
 * search asks it: every bound but the default asks it of every state (so
 * the oracle tests hold it to brute force on small levels); the default
 * (DIG_BOUND_USES, sv->gated) asks it only in a long search (`after`
 * states expanded; short ones gain nothing from it) and only while it
 * pays, at least one state in GATE_RATE called dead over each window of
 * GATE_WINDOW asks; after a window below that, never again in this search
 * (*gt keeps the count). webs_short costs about a microsecond a state
 * where a web needs two visits or more, and on most levels another reason
 * kills the dead states (docs/digger.md, "A web's doorstep, counted").
 * `expanded`: the states the search has expanded so far.
 */
static bool asked_on(solver *sv, struct gate *gt, uint64_t after,
		     bool (*test)(solver *, const dig_state *, const relax *), const dig_state *s,
		     const relax *rx, uint64_t expanded)
{
	if (!sv->gated)
		return test(sv, s, rx);
	if (gt->off || expanded < after)
		return false;
	bool dead = test(sv, s, rx);
	gt->dead += dead;
	if (++gt->asked == GATE_WINDOW) {
		gt->off = gt->dead * GATE_RATE < GATE_WINDOW;
		gt->asked = gt->dead = 0;
	}
	return dead;
}

/* ---- the uses bound ---- */

#define WALK_NODES 4096 /* walk-search nodes per state, at most (then: no bound) */
#define WALK_FIRST 256  /* nodes allocated at first (doubled as needed) */
#define LIST_NODES 32768 /* walk-search nodes per listing (walk_list_of), at most */
#define LIST_VECS 2048   /* walks kept per gold by a listing, at most (512 left hardest
			  * seed 562's states searching their own walks: 2x slower) */
#define LIST_WALKS 4096  /* walks in a listing, at most (else each state searches) */
#define LIST_TOTAL (1 << 19) /* walks kept in all of a search's listings (about 17 MB) */
#define WALK_VECS 48    /* walks kept per gold, at most (then: that gold left out) */
#define WALK_STEPS 4096 /* branch-and-bound steps per state (then: not refuted) */
#define WALK_SLACK 16   /* steps a walk may take past the total tried (see bound_uses) */
#define WALK_WORDS (DIG_MAX_ARROWS / 8)
#define WALK_CHAIN 8      /* nodes a new one is compared with for dominance */
#define WALK_LONGEST 120  /* steps a walk may take, at most (else no bound) */
#define NEAR_UNKNOWN 0xFE /* walks.near not worked out yet (FAR is 255) */
#define USES_SPARE 64     /* uses beyond the taps possible that skip the bound */

/*
 * A walk's uses: a byte per live slot, in WALK_WORDS words. Every such
 * array the helpers below read holds 0 past the live slots (walks start
 * from zeroed nodes, caps and web entries live in zeroed structs, and
 * walks, listed ones included, are copied whole), so they read the whole
 * array as two 16-byte vectors (GCC's vector extension: SSE2 on x86-64,
 * plain code elsewhere) and answer as if they had read the live bytes
 * alone.
 */
_Static_assert(WALK_WORDS * 8 == 2 * sizeof(bytes16), "a walk's uses are two vectors");

/* Half h (0 or 1) of the uses v. */
static inline bytes16 half(const uint64_t *v, int h)
{
	bytes16 x;
	memcpy(&x, v + 2 * h, sizeof x);
	return x;
}

static inline void half_put(uint64_t *v, int h, bytes16 x)
{
	memcpy(v + 2 * h, &x, sizeof x);
}

/* The sum of v's bytes where mask's are 0xFF, added in 16-bit lanes so
 * that it never wraps (a wrapped sum would overstate a web's shortfall). */
static inline int bytes_in(const uint64_t *v, const uint64_t *mask)
{
	const uint64_t even = 0x00FF00FF00FF00FFULL;
	int sum = 0;
	for (int i = 0; i < WALK_WORDS; i++) {
		uint64_t x = v[i] & mask[i];
		x = (x & even) + ((x >> 8) & even);
		sum += (int)((x * 0x0001000100010001ULL) >> 48);
	}
	return sum;
}

/* Does a spend at least b's uses on every live slot? (covers_all on the
 * words' bytes: the same two-vector test.) */
static inline bool spends_more(const uint64_t *a, const uint64_t *b)
{
	return covers_all((const uint8_t *)a, (const uint8_t *)b);
}

/* The slots a walk's uses tap at least `times` times: bit i for byte i.
 * With times 1, its support: a walk spends at least another's uses
 * everywhere only if its support holds the other's, so the support rules
 * out most pairs in one test before spends_more reads the words. */
static inline uint32_t tapped(const uint64_t *v, int times)
{
	bytes16 least = (bytes16){ 0 } + (uint8_t)times;
	uint64_t at[WALK_WORDS]; /* 0xFF where v's byte is at least `times` */
	for (int h = 0; h < 2; h++)
		half_put(at, h, (bytes16)(half(v, h) >= least));
	uint32_t m = 0;
	for (int k = 0; k < WALK_WORDS; k++) {
		uint64_t ones = (at[k] >> 7) & 0x0101010101010101ULL;
		/* byte j's 1 lands on bit j of the product's top byte */
		m |= (uint32_t)((ones * 0x0102040810204080ULL) >> 56) << (8 * k);
	}
	return m;
}

/* The bytewise max of v and n into up (which may be n), and the sum of its
 * bytes. The sum is below 256: v and n are uses of at most WALK_LONGEST
 * taps in all (walks_fit passes on only totals within t), so the max's sum
 * is at most twice that, the words add bytewise without a carry and one
 * multiply sums the bytes. (forced_uses' running max, and the route
 * bound's totals, which WALK_LONGEST does not cap, could pass 255 in
 * principle: a wrapped sum is smaller, so a bound would only weaken.) */
static inline int max_into(const uint64_t *v, const uint64_t *n, uint64_t *up)
{
	for (int h = 0; h < 2; h++) {
		bytes16 a = half(v, h), b = half(n, h), more = (bytes16)(a > b);
		half_put(up, h, (a & more) | (b & ~more));
	}
	uint64_t all = up[0] + up[1] + up[2] + up[3];
	return (int)((all * 0x0101010101010101ULL) >> 56);
}
_Static_assert(2 * WALK_LONGEST < 256 && WALK_WORDS == 4, "max_into's sum fits a byte");

/* The bytewise min of v and least into least. */
static inline void min_into(const uint64_t *v, uint64_t *least)
{
	for (int h = 0; h < 2; h++) {
		bytes16 a = half(v, h), b = half(least, h), fewer = (bytes16)(a < b);
		half_put(least, h, (a & fewer) | (b & ~fewer));
	}
}

/* A node of walk_all's search: as lone_node, with the uses spent so far. */
typedef struct walk_node {
	uint64_t used[WALK_WORDS]; /* a byte per live slot, the rest 0 */
	uint8_t cell, depth;
	int8_t came;
	uint16_t next;
} walk_node;

struct walks {
	walk_node *node; /* node_cap of them, grown up to node_max */
	int node_cap, node_max;
	uint32_t head[DIG_MAX_CELLS * 5];
	uint32_t stamp;
	int len;
	bool full;                    /* a limit was hit: no bound */
	bool drop_over; /* a gold with more than vec_max walks leaves the bound (else: full) */
	bool over[DIG_MAX_CELLS]; /* per gold index: left out (drop_over) */
	union {                       /* uses left per live slot, gifts counted */
		uint8_t cap[DIG_MAX_ARROWS];
		uint64_t cap_words[WALK_WORDS]; /* (the same, as spends_more reads it) */
	};
	uint32_t cap0, cap1; /* the live slots with no use left, with at most one */
	uint8_t allow[DIG_MAX_CELLS]; /* per gold index: machines that may collect it */
	int nvec[DIG_MAX_CELLS];      /* per gold index */
	uint64_t *vec; /* per gold index (ngold of them), vec_max walks of WALK_WORDS */
	uint32_t *sup; /* beside vec: each walk's support (SUP) */
	int vec_max;
	int order[DIG_MAX_CELLS], n;     /* the gold left, fewest walks first */
	uint8_t near[DIG_MAX_CELLS * 5]; /* this machine's nearest gold from (cell, came + 1) */
	int steps;
	uint64_t gold; /* the gold left */
	int limit;     /* steps per walk, at most */
	int nweb;      /* webs left needing 2+ counted visits (web_deficit) */
	uint8_t web_need[DIG_MAX_CELLS];
	const uint64_t *web_in[DIG_MAX_CELLS]; /* its solver.entries */
	const relax *rx;
	int set; /* the relaxed distances' set (moves_of) */
};

/* Walk i kept for gold gi. */
#define VEC(w, gi, i) ((w)->vec + ((size_t)(gi) * (size_t)(w)->vec_max + (size_t)(i)) * WALK_WORDS)
#define SUP(w, gi, i) ((w)->sup[(size_t)(gi) * (size_t)(w)->vec_max + (size_t)(i)])

static void walks_free(struct walks *w)
{
	if (w) {
		free(w->node);
		free(w->vec);
		free(w->sup);
		free(w);
	}
}

/*
 * Keeps `used` (its support su: tapped(used, 1)) among gold gi's walks
 * unless one of the first `cmp` kept spends no more anywhere; drops those
 * of the first `cmp` it spends no more than, and returns how many it
 * dropped. (The walks after the first cmp are its own machine's from one
 * listing, none spending at least another: see walk_list_keep.) One pass:
 * the kept walks never spend at least one another, so a walk that spends
 * at least `used` comes before none that `used` would drop (that one would
 * spend at least the first). A gold that would keep more than vec_max
 * walks is marked over (w->drop_over: a state's walks; bound_uses leaves
 * it out) or fills w (a listing's).
 */
static int walk_keep(struct walks *w, int gi, const uint64_t *used, uint32_t su, int cmp)
{
	if (w->over[gi])
		return 0;
	int n = w->nvec[gi], k = 0;
	uint32_t *sup = &SUP(w, gi, 0);
	uint64_t *vec = VEC(w, gi, 0);
	for (int i = 0; i < cmp; i++) {
		uint32_t si = sup[i];
		const uint64_t *v = vec + (size_t)i * WALK_WORDS;
		if (!(si & ~su) && spends_more(used, v))
			return 0; /* (nothing dropped before it: k == i) */
		if (!(su & ~si) && spends_more(v, used))
			continue; /* dropped */
		if (k != i) {
			memcpy(vec + (size_t)k * WALK_WORDS, v, WALK_WORDS * sizeof *vec);
			sup[k] = si;
		}
		k++;
	}
	if (k < cmp && n > cmp) { /* the walks after the first cmp close up */
		memmove(vec + (size_t)k * WALK_WORDS, vec + (size_t)cmp * WALK_WORDS,
			(size_t)(n - cmp) * WALK_WORDS * sizeof *vec);
		memmove(sup + k, sup + cmp, (size_t)(n - cmp) * sizeof *sup);
	}
	k += n - cmp;
	int dropped = n - k;
	if (k == w->vec_max) {
		w->nvec[gi] = k;
		w->over[gi] = w->drop_over;
		w->full = !w->drop_over;
		return dropped;
	}
	memcpy(vec + (size_t)k * WALK_WORDS, used, WALK_WORDS * sizeof *vec);
	sup[k] = su;
	w->nvec[gi] = k + 1;
	return dropped;
}

/* Depth-first from node `at` of machine m's walks, at most w->limit
 * steps: records at every gold left that m may collect the uses the walk
 * spent to step into it. */
static void walk_all(solver *sv, struct walks *w, int m, int at)
{
	const walk_node *p = &w->node[at];
	if (p->depth > 0 && ((w->gold >> p->cell) & 1u)) {
		int gi = sv->gold_index[p->cell];
		if ((w->allow[gi] >> m) & 1u)
			walk_keep(w, gi, p->used, tapped(p->used, 1), w->nvec[gi]);
	}
	if (p->depth >= w->limit || w->full)
		return;
	bool no_shuffle = sv->lv->rules.no_shuffle;
	int cell = p->cell;
	for (int e = 0; e < sv->nexit[cell]; e++) {
		const struct exit *x = &sv->exit[cell][e];
		p = &w->node[at]; /* (the deeper calls may have moved the nodes) */
		if (((const uint8_t *)p->used)[x->live] >= w->cap[x->live] ||
		    !((sv->enter[m] >> x->to) & 1u) ||
		    (p->came >= 0 && x->dir == ((p->came + 2) & 3)))
			continue;
		int came = no_shuffle ? x->dir : -1;
		int r = x->to * 5 + came + 1;
		if (w->near[r] == NEAR_UNKNOWN) {
			const uint8_t *row = row_of(sv, w->rx, w->set, x->to, came);
			int near = FAR;
			for (int j = 0; j < w->n; j++)
				if (((w->allow[w->order[j]] >> m) & 1u) && row[w->order[j]] < near)
					near = row[w->order[j]];
			w->near[r] = (uint8_t)near;
		}
		int near =
			((w->gold >> x->to) & 1u) && ((w->allow[sv->gold_index[x->to]] >> m) & 1u)
				? 0
				: w->near[r];
		if (p->depth + 1 + near > w->limit)
			continue; /* no gold left within reach of the walk */
		if (w->len == w->node_cap) {
			walk_node *more =
				w->node_cap < w->node_max
					? realloc(w->node, 2 * (size_t)w->node_cap * sizeof *more)
					: NULL;
			if (!more) {
				w->full = true;
				return;
			}
			w->node = more;
			w->node_cap *= 2;
			p = &w->node[at];
		}
		walk_node *q = &w->node[w->len];
		memcpy(q->used, p->used, sizeof q->used);
		((uint8_t *)q->used)[x->live]++;
		q->depth = (uint8_t)(p->depth + 1);
		q->came = (int8_t)came;
		uint32_t *h = &w->head[x->to * 5 + q->came + 1];
		uint32_t first = (*h >> 16) == w->stamp ? *h & 0xFFFFu : 0;
		bool dominated = false;
		int seen = 0;
		for (uint32_t k = first; k && !dominated && seen < WALK_CHAIN;
		     k = w->node[k - 1].next, seen++)
			dominated = spends_more(q->used, w->node[k - 1].used);
		if (dominated)
			continue;
		q->cell = x->to;
		q->next = (uint16_t)first;
		*h = w->stamp << 16 | (uint32_t)(w->len + 1);
		walk_all(sv, w, m, w->len++);
	}
}

/*
 * The taps that taps n (a byte per live slot) leave the webs short of: per
 * web left that needs v >= 2 more counted visits, v less the taps n gives
 * the slots that step into it, the most of these (0 when none is short).
 * A tap moves at most one machine into a given cell (its line's machines
 * all step the same way), so a web needing v visits needs v taps of those
 * slots, whoever walks there: a fit n needs at least this many taps more.
 * Raising n by one tap lowers it by at most one, so total + deficit only
 * grows as walks_fit raises n, and cuts its branches as total alone does.
 */
static inline int web_deficit(const struct walks *w, const uint64_t *n)
{
	int most = 0;
	for (int k = 0; k < w->nweb; k++) {
		int short_by = w->web_need[k] - bytes_in(n, w->web_in[k]);
		if (short_by > most)
			most = short_by;
	}
	return most;
}

/* Can each gold from order[j] on get a walk within `n` (support sn,
 * total the sum of its bytes) raised by at most t - total uses in all,
 * the webs' visits counted (web_deficit)? Running out of steps answers
 * yes. */
static bool walks_fit(struct walks *w, int j, uint64_t *n, uint32_t sn, int total, int t)
{
	if (j == w->n)
		return total + web_deficit(w, n) <= t;
	if (++w->steps > WALK_STEPS)
		return true;
	int gi = w->order[j];
	for (int i = 0; i < w->nvec[gi]; i++)
		if (!(SUP(w, gi, i) & ~sn) && spends_more(n, VEC(w, gi, i)))
			return walks_fit(w, j + 1, n, sn, total, t);
	for (int i = 0; i < w->nvec[gi]; i++) {
		uint64_t up[WALK_WORDS]; /* n raised to walk i (total: the sum of n's bytes) */
		int tot = max_into(VEC(w, gi, i), n, up);
		if (tot <= t && tot + web_deficit(w, up) <= t &&
		    walks_fit(w, j + 1, up, sn | SUP(w, gi, i), tot, t))
			return true;
	}
	return false;
}

/*
 * What every fit must spend, into n0 (its sum returned): per slot, the
 * most over the gold left of the least any of the gold's walks taps it.
 * The taps n of any fit hold one walk of each gold, so n is at least each
 * gold's least and at least n0; walks_fit starts from n0 instead of
 * nothing, and no total below its sum can fit.
 */
static int forced_uses(const struct walks *w, uint64_t *n0)
{
	int sum = 0;
	memset(n0, 0, WALK_WORDS * sizeof *n0);
	for (int j = 0; j < w->n; j++) {
		int gi = w->order[j];
		uint64_t least[WALK_WORDS];
		memcpy(least, VEC(w, gi, 0), sizeof least);
		for (int i = 1; i < w->nvec[gi]; i++)
			min_into(VEC(w, gi, i), least);
		sum = max_into(least, n0, n0);
	}
	return sum;
}

/*
 * Machine m's walks from (cell, way in), listed once per search: the walks
 * walk_all finds from the search's first state (its uses left, gifts
 * counted, its gold, any machine allowed, its relaxed moves to cut the
 * hopeless branches), at most `limit` steps, kept per gold when no other
 * kept one spends no more anywhere. A later state's listing is this one
 * filtered (walks_merge): a state has no more uses on any slot than the
 * first state (spent uses never come back; gifts were counted as given),
 * no gold the first state lacks, moves that are a subset and a smaller
 * limit; a walk dropped here spends at least as much as a kept one
 * everywhere, so it is within the state's uses only when the kept one is;
 * so the filtered listing keeps every walk the state's own search would
 * keep and the bound comes out the same (where no limit cuts either
 * short: the listing's are larger, LIST_*), for the price of one search
 * per machine, cell and way in instead of one per state and machine
 * (hardest: 1.7 times less solver time in all). A level whose gift is
 * not one-shot (none so far: test_digger_terrain) would break the first
 * premise; its states search their own walks (no_lists).
 */
struct walk_list {
	uint8_t limit;   /* steps it was listed for (0: not listed yet) */
	bool full;       /* a limit was hit: each state searches its own */
	int n;           /* walks kept */
	uint16_t *first; /* per gold index: its first walk; [ngold]: n */
	uint8_t *depth;  /* per walk: its length (ascending within a gold's run) */
	uint64_t *used;  /* per walk: WALK_WORDS words of uses spent */
	uint64_t *tap;   /* per walk: the slots it taps (support), twice or more << 32 */
};

static void walk_lists_free(solver *sv)
{
	if (!sv->wlist)
		return;
	for (int i = 0; i < sv->machines * sv->cells * 5; i++) {
		free(sv->wlist[i].first);
		free(sv->wlist[i].depth);
		free(sv->wlist[i].used);
		free(sv->wlist[i].tap);
	}
	free(sv->wlist);
}

static struct walks *walks_new(const solver *sv, int vec_max)
{
	struct walks *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->vec_max = vec_max;
	w->vec = malloc((size_t)sv->ngold * (size_t)vec_max * WALK_WORDS * sizeof *w->vec);
	w->sup = malloc((size_t)sv->ngold * (size_t)vec_max * sizeof *w->sup);
	w->node = malloc(WALK_FIRST * sizeof *w->node);
	w->node_cap = WALK_FIRST;
	w->node_max = WALK_NODES;
	if (!w->vec || !w->sup || !w->node) {
		walks_free(w);
		return NULL;
	}
	return w;
}

/* Starts machine m's walk search in w from (cell, came). */
static void walk_root(struct walks *w, int cell, int came)
{
	next_stamp(&w->stamp, w->head, sizeof w->head);
	memset(w->near, NEAR_UNKNOWN, sizeof w->near);
	walk_node *root = &w->node[0];
	root->cell = (uint8_t)cell;
	root->came = (int8_t)came;
	root->depth = 0;
	root->next = 0;
	memset(root->used, 0, sizeof root->used);
	w->len = 1;
}

/* The listing of machine m's walks from (cell, came) of at most `limit`
 * steps or more (see above; a state filters by length), or NULL when
 * there is no memory for it. Machines that may step into the same cells
 * share their listings (sv->lister). */
static const struct walk_list *walk_list_of(solver *sv, int m, int cell, int came, int limit)
{
	if (!sv->wlist &&
	    !(sv->wlist = calloc((size_t)(sv->machines * sv->cells * 5), sizeof *sv->wlist)))
		return NULL;
	m = sv->lister[m];
	struct walk_list *e = &sv->wlist[(m * sv->cells + cell) * 5 + came + 1];
	if (sv->no_lists)
		return NULL;
	if (e->limit >= limit)
		return e;
	if (sv->list_walks >= LIST_TOTAL)
		return NULL; /* the listings' memory is spent: each state searches */
	struct walks *w = sv->walks0;
	if (!w) {
		for (int i = 0; i < sv->ngift; i++)
			sv->no_lists |= !sv->one_shot[sv->gift_cell[i]];
		/* (A first state with no turns bounds nothing: no tap is valid.) */
		sv->no_lists |= !relax_of(sv, &sv->from, true, &sv->rx0);
		if (sv->no_lists || !(w = sv->walks0 = walks_new(sv, LIST_VECS)))
			return NULL;
		w->node_max = LIST_NODES;
		uses_given(sv, &sv->from, sv->rx0.gifts, w->cap);
		w->n = 0;
		for (uint64_t g = sv->from.gold; g; g &= g - 1) {
			int gi = sv->gold_index[__builtin_ctzll(g)];
			w->allow[gi] = 0xFF;
			w->order[w->n++] = gi;
		}
		w->gold = sv->from.gold;
		w->rx = &sv->rx0;
	}
	if ((w->set = moves_of(sv, &sv->rx0)) < 0)
		return NULL;
	/* Listed first as far as any state of the search can walk (the first
	 * state's limit), so that no later state asks it again for a longer
	 * limit (before, 25 522 of the 61 686 listings made for the 645
	 * hardest candidates of seeds 1 to 300 were regrown); where that is
	 * full, and when regrown, to the limit asked. */
	int most = sv->rx0.limit < WALK_LONGEST ? sv->rx0.limit : WALK_LONGEST, n;
	for (int to = e->limit == 0 && most > limit ? most : limit;; to = limit) {
		w->limit = to;
		w->full = false;
		for (int j = 0; j < w->n; j++)
			w->nvec[w->order[j]] = 0;
		walk_root(w, cell, came);
		walk_all(sv, w, m, 0);
		n = 0;
		for (int j = 0; j < w->n; j++)
			n += w->nvec[w->order[j]];
		if ((!w->full && n <= LIST_WALKS) || to == limit)
			break;
	}
	sv->list_walks -= (size_t)e->n;
	e->n = 0;
	e->limit = (uint8_t)w->limit;
	e->full = w->full || n > LIST_WALKS;
	if (e->full)
		return e; /* its walks are not kept: each state searches its own */
	uint16_t *first = e->first ? e->first : malloc((size_t)(sv->ngold + 1) * sizeof *first);
	if (first)
		e->first = first;
	uint8_t *depth = realloc(e->depth, (size_t)n + 1);
	if (depth)
		e->depth = depth;
	uint64_t *used = realloc(e->used, ((size_t)n + 1) * WALK_WORDS * sizeof *used);
	if (used)
		e->used = used;
	uint64_t *tap = realloc(e->tap, ((size_t)n + 1) * sizeof *tap);
	if (tap)
		e->tap = tap;
	if (!first || !depth || !used || !tap) {
		e->limit = 0;
		return NULL;
	}
	sv->list_walks += (size_t)n;
	/* By gold index, then by length (a state's limit cuts each run). */
	for (int g = 0; g < sv->ngold; g++) {
		e->first[g] = (uint16_t)e->n;
		if (!((w->gold >> sv->gold_cell[g]) & 1u))
			continue;
		for (int i = 0; i < w->nvec[g]; i++) {
			const uint8_t *b = (const uint8_t *)VEC(w, g, i);
			int d = 0, at = e->n++;
			for (int k = 0; k < sv->nlive; k++)
				d += b[k];
			for (; at > e->first[g] && e->depth[at - 1] > d; at--) {
				e->depth[at] = e->depth[at - 1];
				memcpy(e->used + (size_t)at * WALK_WORDS,
				       e->used + (size_t)(at - 1) * WALK_WORDS, WALK_WORDS * sizeof *used);
			}
			e->depth[at] = (uint8_t)d;
			memcpy(e->used + (size_t)at * WALK_WORDS, b, WALK_WORDS * sizeof *used);
		}
	}
	e->first[sv->ngold] = (uint16_t)e->n;
	for (int i = 0; i < e->n; i++) {
		const uint64_t *u = e->used + (size_t)i * WALK_WORDS;
		e->tap[i] = tapped(u, 1) | (uint64_t)tapped(u, 2) << 32;
	}
	return e;
}

/* Keeps in w machine m's walks in listing e into gold gi that the state of
 * w allows: within w->limit steps and w->cap. The listing's walks into one
 * gold never spend at least one another (walk_list_of keeps them so, and
 * filtering keeps a subset), so each is compared only with the walks other
 * machines brought, and none of those it drops could have ruled out a later
 * one of m's (that one would spend at least the dropper). */
static inline void walk_list_keep(struct walks *w, const struct walk_list *e, int gi)
{
	if (w->full || w->over[gi])
		return;
	int others = w->nvec[gi], end = e->first[gi + 1], limit = w->limit;
	uint64_t short_of = w->cap0 | (uint64_t)w->cap1 << 32; /* as e->tap is laid out */
	for (int i = e->first[gi]; i < end && e->depth[i] <= limit; i++) {
		/* Within the uses left: no slot tapped that has none, none
		 * tapped twice that has one; past that, spends_more decides
		 * only for a walk that taps some slot twice. */
		if (e->tap[i] & short_of)
			continue;
		const uint64_t *used = e->used + (size_t)i * WALK_WORDS;
		if ((e->tap[i] >> 32) && !spends_more(w->cap_words, used))
			continue;
		others -= walk_keep(w, gi, used, (uint32_t)e->tap[i], others);
		if (w->full || w->over[gi])
			return;
	}
}

/*
 * Keeps in w, per gold left, the walks of every machine from the cell and
 * way in of state s that the state of w allows: within w->limit steps and
 * w->cap, into gold w->gold holds, of machines that may collect it. From
 * each machine's listing when every machine has one, gold by gold: false,
 * the rest left unmerged, as soon as a gold has no walk (the gold that had
 * none last time is tried first: a dead state mostly costs one gold's
 * walks). Otherwise machine by machine, the unlisted ones searched.
 */
static bool walks_merge(solver *sv, struct walks *w, const dig_state *s)
{
	const struct walk_list *list[DIG_MAX_MACHINES];
	bool listed = true;
	for (int m = 0; m < sv->machines; m++) {
		list[m] = walk_list_of(sv, m, s->pos[m], way_in(sv, s, m), w->limit);
		listed &= list[m] && !list[m]->full;
	}
	for (int j = 0; j < w->n; j++) {
		w->nvec[w->order[j]] = 0;
		w->over[w->order[j]] = false;
	}
	if (listed) {
		int first = (w->gold >> sv->gold_cell[sv->no_walk]) & 1u ? sv->no_walk : -1;
		for (int j = -1; j < w->n && !w->full; j++) {
			int gi = j < 0 ? first : w->order[j];
			if (gi < 0 || (j >= 0 && gi == first))
				continue;
			for (int m = 0; m < sv->machines && !w->full; m++)
				if ((w->allow[gi] >> m) & 1u)
					walk_list_keep(w, list[m], gi);
			if (w->nvec[gi] == 0 && !w->full) {
				sv->no_walk = gi;
				return false;
			}
		}
		return true;
	}
	for (int m = 0; m < sv->machines && !w->full; m++) {
		const struct walk_list *e = list[m];
		if (e && !e->full) {
			for (int j = 0; j < w->n && !w->full; j++)
				if ((w->allow[w->order[j]] >> m) & 1u)
					walk_list_keep(w, e, w->order[j]);
			continue;
		}
		/* The listings may have taken the state's distances' place
		 * (moves_of is direct-mapped): look them up again. */
		if ((w->set = moves_of(sv, w->rx)) < 0) {
			w->full = true; /* no memory: no bound */
			break;
		}
		walk_root(w, s->pos[m], way_in(sv, s, m));
		walk_all(sv, w, m, 0);
	}
	for (int j = 0; j < w->n; j++)
		if (w->nvec[w->order[j]] == 0)
			return false;
	return true;
}

/*
 * The uses bound: the fewest taps n_s of each live slot s, in all, such
 * that every gold left has a walk into it, of a machine that may collect
 * it, spending no slot more often than n_s (walks as in lone_dead: one
 * step per tap of a slot acting on the machine's cell, uses and gifts
 * counted, can_enter, no_shuffle, at most rx->limit steps), and giving
 * each web left that needs v >= 2 visits v taps of the slots that step
 * into it (web_deficit; -1 at once when their uses cannot). In a winning
 * play, n_s = the taps of s do it: the collector of each gold walks there
 * on its own moves, each a tap of a slot, and each visit that wears a web
 * is a tap of its own. So it is a lower bound; taps
 * one machine needs that another cannot share are counted apart, which the
 * bounds above (the busiest machine's k) cannot. At least `lo`; -1 when
 * no n fits within the limit (dead). Per gold, the Pareto-least uses of
 * the walks into it (walks_merge: each machine's listing, filtered),
 * then a depth-first search for n (walks_fit) for each total from lo up,
 * starting from what every fit must spend (forced_uses).
 * Where a limit cuts the walk listing short, the total tried so far is
 * returned; where it cuts the search for n, the total tried counts as
 * fitting: both stay bounds. A gold with more than WALK_VECS walks kept
 * is left out (walk_keep's over): the same bound over fewer gold is still
 * a bound, and such a gold is seldom the one that binds (on the hardest
 * proofs whose states cost most, giving up the whole bound there had
 * taken 20 to 40 % of the calls). The search asks with lo = f - g for a state
 * it is about to expand at f: every play through such a state is at
 * least f taps long (A* has found none shorter), so a bound of f - g
 * there only says "expand now", and a larger one is a true bound.
 */
static int bound_uses(solver *sv, const dig_state *s, const relax *rx, int lo)
{
	/* Sized to the level and grown as needed: zeroing the most any level
	 * could need (a quarter megabyte) cost more than a whole easiest
	 * search. */
	if (!sv->walks) {
		if (!(sv->walks = walks_new(sv, WALK_VECS)))
			return lo; /* out of memory: no bound beyond lo */
		sv->walks->drop_over = true; /* (a listing's walks0 keeps it false) */
	}
	if (rx->limit > WALK_LONGEST)
		return lo; /* walk depths and uses spent are bytes below 128 */
	struct walks *w = sv->walks;
	sv->uses_live = false;
	uses_given(sv, s, rx->gifts, w->cap);
	w->cap0 = w->cap1 = 0;
	for (int i = 0; i < sv->nlive; i++) {
		if (w->cap[i] > WALK_LONGEST)     /* no walk is longer; spends_more */
			w->cap[i] = WALK_LONGEST; /* reads bytes below 128 */
		w->cap0 |= (uint32_t)(w->cap[i] == 0) << i;
		w->cap1 |= (uint32_t)(w->cap[i] <= 1) << i;
	}
	w->n = 0;
	w->nweb = 0;
	for (uint64_t g = s->gold; g; g &= g - 1) {
		int c = __builtin_ctzll(g), gi = sv->gold_index[c];
		w->allow[gi] = s->web_left[c] ? sv->counters[gi] : 0xFF;
		w->nvec[gi] = 0;
		w->order[w->n++] = gi;
		if (s->web_left[c] >= 2) {
			if (bytes_in(w->cap_words, sv->entries[c]) < s->web_left[c])
				return -1; /* too few uses left to step into it often enough */
			w->web_need[w->nweb] = s->web_left[c];
			w->web_in[w->nweb++] = sv->entries[c];
		}
	}
	w->gold = s->gold;
	w->rx = rx;
	if ((w->set = moves_of(sv, rx)) < 0)
		return lo;
	w->steps = 0;
	/* A walk longer than t cannot take part in a total of t: the walks are
	 * searched WALK_SLACK steps past the total tried, then further. (With 3
	 * steps, a state the bound raised far merged its listings again for
	 * each larger total; with 16 it mostly merges once: 11 % less time on
	 * hardest seeds 1-100, 12 % on expert 1-30, the same levels.) */
	for (int t = lo;;) {
		w->limit = t + WALK_SLACK < rx->limit ? t + WALK_SLACK : rx->limit;
		w->full = false;
		bool each = walks_merge(sv, w, s);
		if (w->full)
			return t;
		int kept = 0; /* the gold with too many walks leave the bound */
		for (int j = 0; each && j < w->n; j++)
			if (!w->over[w->order[j]])
				w->order[kept++] = w->order[j];
		if (each)
			w->n = kept;
		for (int j = 1; each && j < w->n; j++)
			for (int i = j; i > 0 && w->nvec[w->order[i]] < w->nvec[w->order[i - 1]];
			     i--) {
				int x = w->order[i];
				w->order[i] = w->order[i - 1];
				w->order[i - 1] = x;
			}
		if (each) {
			uint64_t n0[WALK_WORDS];
			int tot0 = forced_uses(w, n0), least = tot0 + web_deficit(w, n0);
			uint32_t s0 = tapped(n0, 1);
			if (t < least)
				t = least;
			sv->uses_live = true;
			for (; t <= w->limit; t++)
				if (walks_fit(w, 0, n0, s0, tot0, t))
					return t;
			sv->uses_live = false;
		}
		if (w->limit == rx->limit)
			return -1;
		t = w->limit + 1;
	}
}

/* ---- the sole collector's walk ---- */

/* The machines of `who` that have a walk into gold gi from their cell
 * and way in (s, came), within rx->limit steps and `uses` (the uses left,
 * gifts within reach counted): those whose walk listing (walk_list_of)
 * holds one; a machine with no listing is kept. */
static uint8_t walked_into(solver *sv, const dig_state *s, const relax *rx, const int *came,
			   const uint8_t *uses, int gi, uint8_t who)
{
	if (rx->limit > WALK_LONGEST)
		return who; /* (walk lengths are bytes below 128) */
	uint8_t keep = 0;
	for (int m = 0; m < sv->machines; m++) {
		if (!((who >> m) & 1u))
			continue;
		const struct walk_list *e = walk_list_of(sv, m, s->pos[m], came[m], rx->limit);
		if (!e || e->full) {
			keep |= (uint8_t)(1u << m);
			continue;
		}
		for (int i = e->first[gi]; i < e->first[gi + 1] && e->depth[i] <= rx->limit; i++)
			if (covers(uses, (const uint8_t *)(e->used + (size_t)i * WALK_WORDS),
				   sv->nlive)) {
				keep |= (uint8_t)(1u << m);
				break;
			}
	}
	return keep;
}

/*
 * Whether `s` cannot win because gold that only one machine can collect
 * lies on no one walk of that machine's own (the lone test's walks: one
 * step per tap of a live slot with a use left, the uses that unspent cells
 * within reach can still give counted as given, into cells it may enter,
 * never straight back under no_shuffle, at most rx->limit steps). A gold
 * only machine m can collect is one that no other machine that may count
 * for it reaches: within rx->limit relaxed steps, and, where two or more
 * do, by such a walk (their walk listings, the uses bound's); in a
 * winning play m enters every such gold, all on the one walk its own
 * moves make, so if no walk enters them all the state is dead. lone_dead
 * asks for a walk to each gold alone and the uses bound lets each gold
 * take its own walk: neither sees that going left to one gold and right
 * to another spends the row's uses twice (issue 16: on the slowest
 * hardest proof found, a rejected one of 71 171 states, 925 of 1 042 dead
 * states sampled and solved exactly were dead for a pair of gold; with
 * this test it takes 13 342 states). Webs that need two visits or more
 * are left to lone_dead; at most SOLE_GOLD gold per machine are asked
 * for.
 */
static bool sole_dead(solver *sv, const dig_state *s, const relax *rx)
{
	int came[DIG_MAX_MACHINES];
	const uint8_t *row[DIG_MAX_MACHINES];
	int set;
	if (__builtin_popcountll(s->gold) < 2 || (set = lone_rows(sv, s, rx, came, row)) < 0)
		return false;
	uint8_t who[DIG_MAX_CELLS]; /* per gold index: who may collect it */
	uint64_t ask = 0;           /* the gold asked about */
	for (uint64_t g = s->gold; g; g &= g - 1) {
		int c = __builtin_ctzll(g), gi = sv->gold_index[c];
		if (s->web_left[c] > 1)
			continue;
		uint8_t allow = s->web_left[c] ? sv->counters[gi] : 0xFF;
		who[gi] = 0;
		for (int m = 0; m < sv->machines; m++)
			if (((allow >> m) & 1u) && row[m][gi] <= rx->limit)
				who[gi] |= (uint8_t)(1u << m);
		ask |= g & -g;
	}
	/* Where two or more reach a gold, their walks decide; the listings
	 * may take the state's distances' place (moves_of is direct-mapped),
	 * so the set is looked up again after them. */
	uint8_t uses[DIG_MAX_ARROWS];
	uses_given(sv, s, rx->gifts, uses);
	bool listed = false;
	for (uint64_t g = ask; g; g &= g - 1) {
		int gi = sv->gold_index[__builtin_ctzll(g)];
		if (who[gi] & (who[gi] - 1)) {
			who[gi] = walked_into(sv, s, rx, came, uses, gi, who[gi]);
			listed = true;
		}
	}
	if (listed && (set = moves_of(sv, rx)) < 0)
		return false;
	lone_goal lg[DIG_MAX_MACHINES];
	for (int m = 0; m < sv->machines; m++)
		lg[m] = (lone_goal){
			.m = m, .set = set, .limit = rx->limit, .need = 1, .apart = FAR, .rx = rx
		};
	for (uint64_t g = ask; g; g &= g - 1) {
		int c = __builtin_ctzll(g), gi = sv->gold_index[c];
		if (!who[gi] || (who[gi] & (who[gi] - 1)))
			continue; /* (nobody: the bounds' business) */
		lone_goal *o = &lg[__builtin_ctz(who[gi])];
		if (o->k < SOLE_GOLD) {
			o->goal[o->k] = c;
			o->gi[o->k++] = gi;
		}
	}
	const uint8_t *pairs = NULL;
	for (int m = 0; m < sv->machines; m++) {
		lone_goal *o = &lg[m];
		if (o->k < 2)
			continue;
		if (!pairs)
			pairs = pairs_of(sv, rx, set);
		for (int a = 0; a < o->k; a++)
			for (int b = 0; b < o->k; b++)
				if (a != b && pairs[o->gi[a] * sv->ngold + o->gi[b]] < o->apart)
					o->apart = pairs[o->gi[a] * sv->ngold + o->gi[b]];
		if (lone_from(sv, o, s->pos[m], came[m], uses) == 0)
			return true;
	}
	return false;
}

/* ---- the route bound ---- */

#define ROUTE_NODES 65535 /* route-search nodes per machine (indices + 1 fit 16 bits) */
#define ROUTE_HASH 4096   /* (cell, way, gold, webs) heads of the node chains */
#define ROUTE_ENTS 4096   /* routes kept per machine, at most (then: no bound) */
#define ROUTE_STEPS 20000 /* choosing steps per total tried (then: it fits) */
#define ROUTE_CHAIN 16    /* nodes a new one is compared with for dominance */
#define ROUTE_SLACK 6     /* steps listed past the total asked for first */
#define ROUTE_EHASH 1024  /* (gold, web entries) heads of the kept routes' chains */
#define ROUTE_WEBS 8      /* webs still needing 2+ visits counted, at most (the rest: 1) */
#define ROUTE_ITEMS (64 + ROUTE_WEBS)
#define ROUTE_FAIL_HASH 1024 /* route_fit's failures: heads of their chains */
#define ROUTE_FAILS 16384    /* failures kept per total tried, at most */

/* A node of route_all's search: the uses spent, the gold entered (a bit
 * per gold index that counts), entries into each web that needs counting
 * (wc), cell, length and way in. */
typedef struct route_node {
	union {
		uint8_t used[DIG_MAX_ARROWS];
		uint64_t words[WALK_WORDS];
	};
	uint64_t mask;
	uint32_t next;
	uint8_t cell, depth;
	int8_t came;
	uint8_t wc[ROUTE_WEBS];
} route_node;

/* A route kept: its uses spent, length (sum), gold entered and web entries. */
typedef struct route_ent {
	union {
		uint8_t used[DIG_MAX_ARROWS];
		uint64_t words[WALK_WORDS];
	};
	uint64_t mask;
	int sum;
	uint8_t wc[ROUTE_WEBS];
} route_ent;

/* A route as an option for an item: which machine's. */
typedef struct route_opt {
	const route_ent *e;
	int m;
} route_opt;

/* The route bound's working memory (bound_route), kept over a search. */
struct routes {
	route_node *node; /* ROUTE_NODES, one machine's search at a time */
	int len;
	uint32_t head[ROUTE_HASH]; /* stamp << 16 | (node + 1), as struct walks' */
	uint32_t stamp;
	route_ent *ent[DIG_MAX_MACHINES]; /* ROUTE_ENTS routes kept per machine */
	int nent[DIG_MAX_MACHINES];
	uint8_t cap[DIG_MAX_ARROWS];      /* uses left per live slot, gifts counted */
	uint64_t allow[DIG_MAX_MACHINES]; /* gold indices m may collect (a bit each) */
	uint64_t all;                     /* gold indices counted by a bit */
	int nlive;                        /* the solver's, set at allocation */
	int machines;
	uint8_t taken; /* route_fit: machines with a route chosen, a bit each */
	long steps;                   /* route_fit's, for the total being tried */
	/* route_fit's failures for the total being tried: (machines taken,
	 * items covered, n), chained per (taken, cover, web entries) */
	struct fit_fail {
		uint64_t n[WALK_WORDS], cover;
		uint8_t taken, have[ROUTE_WEBS];
		uint32_t next;
	} * fail;
	int nfail;
	uint32_t fail_head[ROUTE_FAIL_HASH]; /* fail_stamp << 16 | (failure + 1) */
	uint32_t fail_stamp;
	bool over;                    /* a limit stopped the listing: no bound */
	int32_t *opt; /* per item, its routes (merged's) by length: [first[i], first[i + 1]) */
	int opt_cap;
	int nmerged;
	/* route_fit's routes open at each depth (machines taken): their list and a
	 * byte per route */
	int32_t *open;
	uint8_t *is_open;
	int nopen[DIG_MAX_MACHINES + 1];
	/* route_fit's domains: per depth (machines taken) a row of opt_cap
	 * indices into opt, and per item its run in the row */
	int32_t *dom;
	int dom_at[DIG_MAX_MACHINES + 1][ROUTE_ITEMS], dom_n[DIG_MAX_MACHINES + 1][ROUTE_ITEMS];
	int first[ROUTE_ITEMS + 1];                      /* items: gold index i, then 64 + web w */
	route_opt merged[DIG_MAX_MACHINES * ROUTE_ENTS]; /* every route, by length */
	int nweb, web_gi[ROUTE_WEBS], web_need[ROUTE_WEBS]; /* webs counted: gold, visits */
	bool web_shared[ROUTE_WEBS];         /* worn by several machines: entries add up */
	int8_t web_idx[DIG_MAX_CELLS];       /* cell -> web counted, or -1 */
	uint8_t my_shared[DIG_MAX_MACHINES]; /* per machine: the shared webs it wears */
	int have[ROUTE_WEBS];                /* entries the routes chosen so far make */
	/* route_keep's (gold, web entries) -> routes kept, per machine */
	uint32_t ehead[DIG_MAX_MACHINES][ROUTE_EHASH]; /* estamp << 16 | (route + 1) */
	uint16_t enext[DIG_MAX_MACHINES][ROUTE_ENTS];
	uint32_t estamp;
};

static void routes_free(struct routes *r)
{
	if (!r)
		return;
	free(r->node);
	free(r->opt);
	free(r->dom);
	free(r->open);
	free(r->is_open);
	free(r->fail);
	for (int m = 0; m < DIG_MAX_MACHINES; m++)
		free(r->ent[m]);
	free(r);
}

/* Keeps q as one of machine m's routes, entering the gold of `mask`, unless
 * one kept with the same gold and web entries spends no more anywhere (the
 * routes come by length, so none kept spends more than q). */
static void route_keep(struct routes *r, int m, uint64_t mask, const route_node *q)
{
	uint64_t wk;
	memcpy(&wk, q->wc, sizeof wk);
	uint32_t h =
		(uint32_t)(((mask ^ (wk * 0xC2B2AE3D27D4EB4FULL)) * 0x9E3779B97F4A7C15ULL) >> 52) &
		(ROUTE_EHASH - 1);
	uint32_t first = (r->ehead[m][h] >> 16) == r->estamp ? r->ehead[m][h] & 0xFFFFu : 0;
	for (uint32_t k = first; k; k = r->enext[m][k - 1]) {
		const route_ent *o = &r->ent[m][k - 1];
		if (o->mask == mask && !memcmp(o->wc, q->wc, sizeof o->wc) &&
		    spends_more(q->words, o->words))
			return;
	}
	int n = r->nent[m];
	if (n == ROUTE_ENTS) {
		r->over = true;
		return;
	}
	route_ent *e = &r->ent[m][n];
	memcpy(e->words, q->words, sizeof e->words);
	memcpy(e->wc, q->wc, sizeof e->wc);
	e->mask = mask;
	e->sum = q->depth;
	r->enext[m][n] = (uint16_t)first;
	r->ehead[m][h] = r->estamp << 16 | (uint32_t)(n + 1);
	r->nent[m] = n + 1;
}

/* Whether machine m's route ending in p wants nothing more: every gold m
 * may collect entered, every web it shares entered as often as it needs. */
static bool route_done(const struct routes *r, int m, const route_node *p)
{
	if ((p->mask & r->allow[m]) != r->allow[m])
		return false;
	for (int w = 0; w < r->nweb; w++)
		if (((r->my_shared[m] >> w) & 1u) && p->wc[w] < r->web_need[w])
			return false;
	return true;
}

/* Machine m's routes from (cell, came), at most L steps: breadth-first by
 * length (as walk_all's moves: a live slot with uses left that acts on the
 * cell, can_enter, never straight back under no_shuffle), a node dropped
 * when one at the same cell, way in, gold and web entries spends no more
 * anywhere, a branch cut when no gold or web it still wants lies within
 * the relaxed distance left. Each step that makes the route count for a
 * gold (the first entry; a web m alone wears: its v-th) or enter a web
 * it shares once more records a route (route_keep). */
static void route_all(solver *sv, struct routes *r, const dig_state *s, const relax *rx, int set,
		      int m, int cell, int came, int L)
{
	next_stamp(&r->stamp, r->head, sizeof r->head);
	next_stamp(&r->estamp, &r->ehead[0][0], sizeof r->ehead);
	r->nent[m] = 0;
	route_node *root = &r->node[0];
	memset(root, 0, sizeof *root);
	root->cell = (uint8_t)cell;
	root->came = (int8_t)came;
	r->len = 1;
	bool no_shuffle = sv->lv->rules.no_shuffle;
	uint64_t want = r->allow[m];
	int lo = 0;
	for (int d = 0; d < L && !r->over; d++) {
		int hi = r->len;
		for (int a = lo; a < hi && !r->over; a++) {
			const route_node *p = &r->node[a];
			if (route_done(r, m, p))
				continue;
			for (int e = 0; e < sv->nexit[p->cell]; e++) {
				const struct exit *x = &sv->exit[p->cell][e];
				if (p->used[x->live] >= r->cap[x->live] ||
				    !((sv->enter[m] >> x->to) & 1u) ||
				    (p->came >= 0 && x->dir == ((p->came + 2) & 3)))
					continue;
				route_node q = *p;
				q.used[x->live]++;
				q.depth = (uint8_t)(d + 1);
				q.cell = x->to;
				q.came = (int8_t)(no_shuffle ? x->dir : -1);
				if ((s->gold >> x->to) & 1u) {
					int gi = sv->gold_index[x->to];
					int wi = r->web_idx[x->to];
					bool done = true;
					if (wi >= 0 && r->web_shared[wi]) {
						if (((r->my_shared[m] >> wi) & 1u) &&
						    q.wc[wi] < r->web_need[wi]) {
							q.wc[wi]++;
							route_keep(r, m, q.mask, &q);
						}
						done = false;
					} else if (wi >= 0 && ((want >> gi) & 1u)) {
						if (q.wc[wi] < r->web_need[wi])
							q.wc[wi]++;
						done = q.wc[wi] >= r->web_need[wi];
					}
					if (done && ((want >> gi) & 1u) && !((q.mask >> gi) & 1u)) {
						q.mask |= UINT64_C(1) << gi;
						route_keep(r, m, q.mask, &q);
					}
				}
				if (route_done(r, m, &q))
					continue;
				const uint8_t *row = row_of(sv, rx, set, q.cell, q.came);
				int near = FAR;
				for (uint64_t g = want & ~q.mask; g; g &= g - 1) {
					int gi = __builtin_ctzll(g);
					int dd = row[gi];
					if (dd == 0 && r->web_idx[sv->gold_cell[gi]] >= 0)
						dd = 1;
					if (dd < near)
						near = dd;
				}
				for (int w = 0; w < r->nweb; w++)
					if (((r->my_shared[m] >> w) & 1u) &&
					    q.wc[w] < r->web_need[w]) {
						int dd = row[r->web_gi[w]] ? row[r->web_gi[w]] : 1;
						if (dd < near)
							near = dd;
					}
				if (q.depth + near > L)
					continue;
				uint64_t wk;
				memcpy(&wk, q.wc, sizeof wk);
				uint32_t h = (uint32_t)((q.cell * 5 + q.came + 1) * 0x9E3779B1u ^
							(uint32_t)(q.mask * 0x85EBCA77u) ^
							(uint32_t)(q.mask >> 32) ^
							(uint32_t)(wk * 0x27D4EB2Fu)) &
					     (ROUTE_HASH - 1);
				uint32_t first =
					(r->head[h] >> 16) == r->stamp ? r->head[h] & 0xFFFFu : 0;
				bool dom = false;
				int seen = 0;
				for (uint32_t k = first; k && !dom && seen < ROUTE_CHAIN;
				     k = r->node[k - 1].next, seen++) {
					const route_node *o = &r->node[k - 1];
					dom = o->cell == q.cell && o->came == q.came &&
					      o->mask == q.mask &&
					      !memcmp(o->wc, q.wc, sizeof o->wc) &&
					      spends_more(q.words, o->words);
				}
				if (dom)
					continue;
				if (r->len == ROUTE_NODES) {
					r->over = true;
					break;
				}
				q.next = first;
				r->node[r->len] = q;
				r->head[h] = r->stamp << 16 | (uint32_t)(r->len + 1);
				r->len++;
				p = &r->node[a];
			}
		}
		lo = hi;
	}
}

/*
 * Can the machines not yet taken each take one route or none so that the
 * gold left (r->all minus `cover`) is entered and the shared webs get their
 * entries, with the sum over slots of the most any route spends (n so far)
 * at most t? Branches on the item with the fewest routes left (the first
 * such), and gives up when some item has none left within t. Running out
 * of steps answers yes.
 *
 * What makes it affordable (2026-12-07, the fourth session that day: on
 * the slowest hardest proofs, looking every item's whole list over at
 * every step had been 76 to 88 % of this bound's time): a route open here
 * (its machine free, n raised by it within t) was open to the caller, n
 * only growing and machines only being taken, and the items left are the
 * caller's less those covered; so a call decides each of its caller's
 * open routes once (route_fit_at: r->open, r->is_open) and filters its
 * caller's item domains (r->dom) with that, the same choices in the same
 * order as before. And a call that fails is remembered for the total
 * being tried (r->fail): a later one with the same machines taken, the
 * same items covered and web entries made, and at least as much spent on
 * every slot fails too (whatever completes it would complete the first).
 */
static bool route_fit_at(struct routes *r, const uint64_t *n, uint64_t cover, int t);

static bool route_fit(struct routes *r, const uint64_t *n, uint64_t cover, int t)
{
	if (++r->steps > ROUTE_STEPS)
		return true;
	/* The same machines taken, items covered and web entries made as a
	 * call that failed with no more spent anywhere: this one fails too
	 * (what completes it would complete that one). */
	uint8_t have[ROUTE_WEBS] = { 0 };
	for (int w = 0; w < r->nweb; w++)
		have[w] = (uint8_t)(r->have[w] < 255 ? r->have[w] : 255);
	uint64_t hk;
	memcpy(&hk, have, sizeof hk);
	uint32_t h = (uint32_t)(((cover ^ hk * 0xC2B2AE3D27D4EB4FULL ^ r->taken) *
				 0x9E3779B97F4A7C15ULL) >>
				54) &
		     (ROUTE_FAIL_HASH - 1);
	uint32_t head = (r->fail_head[h] >> 16) == r->fail_stamp ? r->fail_head[h] & 0xFFFFu : 0;
	for (uint32_t k = head; k; k = r->fail[k - 1].next) {
		const struct fit_fail *o = &r->fail[k - 1];
		if (o->cover == cover && o->taken == r->taken &&
		    !memcmp(o->have, have, sizeof have) && spends_more(n, o->n))
			return false;
	}
	bool ok = route_fit_at(r, n, cover, t);
	if (!ok && r->nfail < ROUTE_FAILS) {
		struct fit_fail *o = &r->fail[r->nfail++];
		memcpy(o->n, n, sizeof o->n);
		o->cover = cover;
		o->taken = r->taken;
		memcpy(o->have, have, sizeof have);
		o->next = head;
		r->fail_head[h] = r->fail_stamp << 16 | (uint32_t)r->nfail;
	}
	return ok;
}

static bool route_fit_at(struct routes *r, const uint64_t *n, uint64_t cover, int t)
{
	int depth = __builtin_popcount(r->taken); /* the row of r->open and r->dom it writes */
	int items[ROUTE_ITEMS], ni = 0;
	for (uint64_t g = r->all & ~cover; g; g &= g - 1)
		items[ni++] = __builtin_ctzll(g);
	for (int w = 0; w < r->nweb; w++)
		if (r->web_shared[w] && r->have[w] < r->web_need[w])
			items[ni++] = 64 + w;
	if (!ni)
		return true;
	/* Each route open to the caller once (a route serves several items):
	 * open here when its machine is free and it keeps n within t. */
	const size_t row = DIG_MAX_MACHINES * ROUTE_ENTS;
	int32_t *open = r->open + (size_t)depth * row;
	uint8_t *is_open = r->is_open + (size_t)depth * row;
	int nopen = 0;
	uint64_t up[WALK_WORDS];
	if (depth == 0) {
		for (int i = 0; i < r->nmerged && r->merged[i].e->sum <= t; i++) {
			const route_opt *o = &r->merged[i];
			is_open[i] = max_into(o->e->words, n, up) <= t; /* (none taken yet) */
			if (is_open[i])
				open[nopen++] = i;
		}
	} else {
		const int32_t *was = r->open + (size_t)(depth - 1) * row;
		for (int k = 0, kn = r->nopen[depth - 1]; k < kn; k++) {
			const route_opt *o = &r->merged[was[k]];
			is_open[was[k]] =
				!((r->taken >> o->m) & 1u) && max_into(o->e->words, n, up) <= t;
			if (is_open[was[k]])
				open[nopen++] = was[k];
		}
	}
	r->nopen[depth] = nopen;
	/* Then each item's domain: its caller's, less the routes closed here
	 * (at the first call, its routes within t). */
	int32_t *dom = r->dom + (size_t)depth * (size_t)r->opt_cap;
	const int32_t *up_dom = depth ? r->dom + (size_t)(depth - 1) * (size_t)r->opt_cap : NULL;
	int best = -1, fewest = INT32_MAX, at = 0;
	for (int ii = 0; ii < ni; ii++) {
		int it = items[ii], from = at;
		if (!up_dom) {
			for (int i = r->first[it];
			     i < r->first[it + 1] && r->merged[r->opt[i]].e->sum <= t; i++)
				if (is_open[r->opt[i]])
					dom[at++] = r->opt[i];
		} else {
			const int32_t *d = up_dom + r->dom_at[depth - 1][it];
			for (int k = 0, kn = r->dom_n[depth - 1][it]; k < kn; k++)
				if (is_open[d[k]])
					dom[at++] = d[k];
		}
		int cnt = at - from;
		if (cnt == 0)
			return false; /* (every route of it is taken or passes t) */
		r->dom_at[depth][it] = from;
		r->dom_n[depth][it] = cnt;
		if (cnt < fewest) {
			fewest = cnt;
			best = it;
		}
	}
	for (int k = 0; k < fewest; k++) {
		const route_opt *o = &r->merged[dom[r->dom_at[depth][best] + k]];
		max_into(o->e->words, n, up);
		r->taken |= (uint8_t)(1u << o->m);
		for (int w = 0; w < r->nweb; w++)
			r->have[w] += o->e->wc[w];
		bool ok = route_fit(r, up, cover | o->e->mask, t);
		for (int w = 0; w < r->nweb; w++)
			r->have[w] -= o->e->wc[w];
		r->taken &= (uint8_t)~(1u << o->m);
		if (ok)
			return true;
	}
	return false;
}

/*
 * The route bound (DIG_BOUND_ROUTES; not the default, see docs/digger.md,
 * "One route per machine": 3.4 times fewer states, but dearer). The uses
 * bound lets each gold take its own walk, so one machine may walk left to
 * one gold and right to another on the same uses. Here each machine takes
 * one route (or none): the least sum over live slots of the most any
 * chosen route taps it, such that the routes enter every gold left (each
 * by a machine that may collect it) and give every web its visits: a web
 * that one machine alone wears counts for that machine's route only after
 * its v-th entry; a web several machines wear needs the chosen routes'
 * entries to add up to v. In a winning play each machine's own moves are
 * such a route (a tap of slot s moves it one step along s), the taps of s
 * are at least the most any machine steps along s, and the collector of
 * each gold enters it, a web's wearers as often as it needs: so it is a
 * lower bound, never below the uses bound (that is this with one route
 * per gold), and one tap lowers it by at most one (each machine's route
 * from before the tap is its route after it with one more step, all along
 * the tapped slot). Routes are listed per state up to ROUTE_SLACK steps
 * past lo (a route longer than the total tried cannot be part of it); when
 * no choice fits within those, that length + 1 is still a bound. Where a
 * limit stops the listing, lo is returned; where it stops the choice, the
 * total tried counts as fitting: both stay bounds. -1: dead.
 */
static int bound_route(solver *sv, const dig_state *s, const relax *rx, int lo)
{
	if (rx->limit > WALK_LONGEST)
		return lo; /* route lengths and uses spent are bytes below 128 */
	if (!sv->routes) {
		struct routes *r = sv->routes = calloc(1, sizeof *sv->routes);
		bool ok = r && (r->node = malloc(ROUTE_NODES * sizeof *r->node));
		for (int m = 0; ok && m < sv->machines; m++)
			ok = (r->ent[m] = malloc(ROUTE_ENTS * sizeof *r->ent[m])) != NULL;
		ok = ok && (r->fail = malloc(ROUTE_FAILS * sizeof *r->fail)) != NULL;
		size_t cells = (DIG_MAX_MACHINES + 1) * (size_t)(DIG_MAX_MACHINES * ROUTE_ENTS);
		ok = ok && (r->open = malloc(cells * sizeof *r->open)) != NULL;
		ok = ok && (r->is_open = malloc(cells)) != NULL;
		if (!ok) {
			routes_free(r);
			sv->routes = NULL;
			return lo; /* no memory: no bound beyond lo */
		}
		r->nlive = sv->nlive;
		r->machines = sv->machines;
	}
	struct routes *r = sv->routes;
	uses_given(sv, s, rx->gifts, r->cap);
	r->all = 0;
	r->nweb = 0;
	memset(r->web_idx, -1, sizeof r->web_idx);
	memset(r->my_shared, 0, sizeof r->my_shared);
	memset(r->have, 0, sizeof r->have);
	memset(r->allow, 0, sizeof r->allow);
	for (uint64_t g = s->gold; g; g &= g - 1) {
		int c = __builtin_ctzll(g), gi = sv->gold_index[c], v = s->web_left[c];
		uint8_t allow = v ? sv->counters[gi] : 0xFF;
		if (v >= 2 && r->nweb < ROUTE_WEBS) {
			int w = r->nweb++;
			r->web_idx[c] = (int8_t)w;
			r->web_gi[w] = gi;
			r->web_need[w] = v;
			r->web_shared[w] = (allow & (allow - 1)) != 0;
			if (r->web_shared[w]) { /* counted by the entries, not by a bit */
				for (int m = 0; m < sv->machines; m++)
					if ((allow >> m) & 1u)
						r->my_shared[m] |= (uint8_t)(1u << w);
				continue;
			}
		}
		r->all |= UINT64_C(1) << gi;
		for (int m = 0; m < sv->machines; m++)
			if ((allow >> m) & 1u)
				r->allow[m] |= UINT64_C(1) << gi;
	}
	int set = moves_of(sv, rx);
	if (set < 0)
		return lo;
	int L = lo + ROUTE_SLACK < rx->limit ? lo + ROUTE_SLACK : rx->limit;
	r->over = false;
	for (int m = 0; m < sv->machines && !r->over; m++)
		route_all(sv, r, s, rx, set, m, s->pos[m], way_in(sv, s, m), L);
	if (r->over)
		return lo;
	/* Every machine's routes come by length: merged by length, then dealt
	 * out to the items they serve. */
	int nall = 0, pos[DIG_MAX_MACHINES] = { 0 };
	size_t need = 0;
	for (;;) {
		int bm = -1;
		for (int m = 0; m < sv->machines; m++)
			if (pos[m] < r->nent[m] &&
			    (bm < 0 || r->ent[m][pos[m]].sum < r->ent[bm][pos[bm]].sum))
				bm = m;
		if (bm < 0)
			break;
		const route_ent *e = &r->ent[bm][pos[bm]++];
		r->merged[nall].e = e;
		r->merged[nall++].m = bm;
		need += (size_t)__builtin_popcountll(e->mask) + (size_t)r->nweb;
	}
	if (need == 0)
		need = 1; /* (route_fit reads its first row of domains) */
	if (need > (size_t)r->opt_cap) {
		int32_t *more = realloc(r->opt, need * sizeof *more);
		if (!more)
			return lo;
		r->opt = more;
		int32_t *dom = realloc(r->dom, (DIG_MAX_MACHINES + 1) * need * sizeof *dom);
		if (!dom)
			return lo; /* (opt_cap stays: dom still fits it) */
		r->dom = dom;
		r->opt_cap = (int)need;
	}
	int at = 0;
	for (int it = 0; it < ROUTE_ITEMS; it++) {
		r->first[it] = at;
		int w = it - 64;
		if (it < 64 ? !((r->all >> it) & 1u) : w >= r->nweb || !r->web_shared[w])
			continue;
		for (int i = 0; i < nall; i++)
			if (it < 64 ? (r->merged[i].e->mask >> it) & 1u : r->merged[i].e->wc[w] > 0)
				r->opt[at++] = i;
	}
	r->first[ROUTE_ITEMS] = at;
	r->nmerged = nall;
	for (int t = lo; t <= L; t++) {
		uint64_t n[WALK_WORDS] = { 0 };
		r->steps = 0;
		r->nfail = 0;
		next_stamp(&r->fail_stamp, r->fail_head, sizeof r->fail_head);
		if (route_fit(r, n, 0, t))
			return t;
	}
	return L == rx->limit ? -1 : L + 1;
}

/*
 * Whether the search's first state has more than USES_SPARE arrow uses
 * (gifts counted) beyond the taps it can make at most (turns or uses). The
 * uses bound pays where uses are short: generated hardest and expert
 * candidates have 0 to 8 to spare (median 1). With plenty, the caps prune
 * no walk and its listing grows with every arrow the walks may combine (a
 * 10 x 6 client level with 255 uses on each of 32 arrows and 96 turns: the
 * check's and the hint's 500 000-state searches took 9.9 and 11.8 s, 1.8
 * and 1.9 s without it), while the count it makes, taps per arrow, can
 * hardly exceed the other bounds when no arrow runs short. Such searches
 * skip it.
 */
static bool uses_to_spare(const solver *sv)
{
	relax rx;
	if (!relax_of(sv, &sv->from, true, &rx))
		return false;
	uint8_t cap[DIG_MAX_ARROWS];
	uses_given(sv, &sv->from, rx.gifts, cap);
	int total = 0;
	for (int i = 0; i < sv->nlive; i++)
		total += cap[i];
	return total > rx.limit + USES_SPARE;
}

/*
 * A lower bound on the taps `s` still needs to win (0 when won), or -1 when
 * it cannot win at all (see the design note): the nearest bound, with
 * `full` and any other sv->which the assignment bound on top of it (the
 * search adds the uses bound itself, bound_uses).
 * Other machines, terrain and path rules are ignored, so it never
 * overestimates; a gold not reached at all is unreachable for good.
 */
/* Does the search ask the assignment bound (REFINED)? Every bound but the
 * nearest, the default only once a search is long (assign_on). */
static bool assign_asked(const solver *sv)
{
	return sv->which != DIG_BOUND_NEAREST && (sv->which != DIG_BOUND_USES || sv->assign_on);
}

static int bound(solver *sv, const dig_state *s, bool full, int least)
{
	if (s->gold == 0)
		return 0;
	relax rx;
	if (!relax_of(sv, s, full, &rx))
		return -1;
	int far = bound_nearest(sv, s, &rx);
	if (far < 0 || !full || !assign_asked(sv))
		return far;
	return bound_assign(sv, s, &rx, far, least);
}

/* ---- search ---- */

/*
 * Whether the default's uses bound pays in this search: it moved (raised
 * the f of, or found dead) at least JOINT_PAID % of the states it was
 * asked so far. Such a search is long because its level is, not because
 * the bound is blind, and goes on without the assignment bound and the
 * pair tables (their build alone takes about G * G * C * C steps, G gold,
 * C cells: 270 M instructions on hardest seed 138's accepted proof, which
 * after them took 2 % fewer states; docs/digger.md, "The pair tables
 * where the uses bound pays"). Where it moves next to none (levels with
 * uses to spare: test_pair_tables_mid_search's, none of 16 384 states), a
 * long search needs them. Only with sv->which DIG_BOUND_USES.
 */
static bool uses_paid(const solver *sv)
{
	return sv->which == DIG_BOUND_USES && sv->uses_asked > 0 &&
	       (uint64_t)sv->uses_moved * 100 >= (uint64_t)sv->uses_asked * JOINT_PAID;
}

/* Writes the taps leading to node n, then `last` when last >= 0, into out. */
static void write_path(const solver *sv, uint32_t n, int last, dig_solve_result *out)
{
	int depth = sv->g[n];
	out->status = DIG_SOLVED;
	out->turns = depth + (last >= 0);
	if (last >= 0)
		out->taps[depth] = (uint8_t)last;
	for (int d = depth - 1; d >= 0; d--) {
		out->taps[d] = sv->tap[n];
		n = sv->parent[n];
	}
}

/* Does node a have at least key's uses on every live slot? */
static bool uses_cover(const solver *sv, uint32_t a, const uint8_t *key)
{
	return covers(key_of(sv, a) + sv->rest_len, key + sv->rest_len, sv->nlive);
}

/*
 * Offers the state `st` (with key `key`), reached from node `from` with tap
 * `slot` in g taps: stores and queues it at f = g + its bound (never below
 * the current f) unless the same key was reached in as few taps, a stored
 * state dominates it, or it cannot win; a known key reached in fewer taps
 * is updated in place and queued again. The bound is computed only for
 * states that get that far. 0, 1 when one more state would pass
 * max_states, or SF_ENOMEM.
 */
static int offer(solver *sv, const uint8_t *key, const dig_state *st, uint32_t from, int slot,
		 int g, int least, int f, uint64_t max_states)
{
	int left = st->turns_left;
	uint64_t run = hash_run(HASH_SEED, key, sv->rest_len);
	uint64_t h_rest = hash_end(run);
	uint64_t h_key = hash_end(hash_run(run, key + sv->rest_len, sv->key_len - sv->rest_len));
	uint64_t *at_key = table_slot(sv, &sv->by_key, key, h_key);
	uint32_t n;
	int b;
	if (*at_key) {
		n = (uint32_t)*at_key - 1;
		if ((sv->flags[n] & EXPANDED) || sv->g[n] <= g || (b = bound(sv, st, false, 0)) < 0)
			return 0;
		if (sv->least[n] > least)
			least = sv->least[n];
	} else {
		uint64_t *at_rest = table_slot(sv, &sv->by_rest, key, h_rest);
		uint32_t head = *at_rest ? (uint32_t)*at_rest - 1 : NO_NODE;
		int seen = 0;
		for (uint32_t a = head; a != NO_NODE && seen < CHAIN_MAX;
		     a = sv->same_rest[a], seen++)
			if (sv->g[a] <= g && sv->turns_left[a] >= left && uses_cover(sv, a, key))
				return 0;
		if ((b = bound(sv, st, false, 0)) < 0)
			return 0;
		if (sv->count >= max_states)
			return 1;
		int rc;
		if (sv->count == sv->cap && (rc = grow_nodes(sv)) != 0)
			return rc;
		n = sv->count++;
		memcpy(sv->keys + (size_t)n * (size_t)sv->key_len, key, (size_t)sv->key_len);
		sv->same_rest[n] = head;
		sv->by_rest.used += head == NO_NODE;
		*at_rest = entry(h_rest, n);
		*at_key = entry(h_key, n);
		sv->by_key.used++;
		if ((uint64_t)sv->by_key.used * 2 > sv->by_key.mask &&
		    (rc = grow_table(&sv->by_key)) != 0)
			return rc;
		if ((uint64_t)sv->by_rest.used * 2 > sv->by_rest.mask &&
		    (rc = grow_table(&sv->by_rest)) != 0)
			return rc;
	}
	sv->parent[n] = from;
	sv->tap[n] = (uint8_t)slot;
	sv->g[n] = (uint8_t)g;
	sv->flags[n] = 0;
	sv->turns_left[n] = (int16_t)left;
	sv->least[n] = (uint8_t)least;
	if (b < least)
		b = least;
	int nf = g + b < f ? f : g + b;
	return queue_at(sv, n, nf);
}

/*
 * Commuting taps. Expanding node n (reached from its parent p by tap a),
 * the search skips a tap b < a whose state, n then b, is also p then b
 * then a: the same state in the same taps, which the search reaches by
 * tapping b at p first. Safe (no state a shorter play needs is lost):
 * take a state y = n.b skipped this way. Its other way in, p.b, has
 * g(n) taps; it is expanded in time (or a state that dominates it is:
 * the same argument one tap shorter, by induction on g), since consistent
 * bounds give p.b an f no larger than y's. There y comes from tapping a,
 * unless that node skips a too, which needs a < its own tap c, and then
 * the same step again with c: the taps skipped rise strictly (b < a < c
 * < ...), so within the 32 slots some node taps it, and what it reaches
 * is y or dominates y (dominance goes through taps). So every state
 * within the f being expanded is still reached in its fewest taps, the
 * A* argument holds, and only the stored duplicates go: on the 25
 * slowest hardest candidates 1 % fewer states expanded but 10 % less
 * time, the skipped states' bounds never asked (2026-12-05; not with
 * DIG_BOUND_NEAREST, which keeps the first solver's search). `ps` is
 * p's state, decoded on first use (turns_used -1 until then); *key is
 * n's state then b.
 */
static bool commutes(const solver *sv, uint32_t n, int b, const uint8_t *key, dig_state *ps)
{
	uint32_t p = sv->parent[n];
	int a = sv->tap[n];
	if (ps->turns_used < 0)
		decode(sv, key_of(sv, p), sv->g[p], sv->turns_left[p], ps);
	dig_cmd cb, ca;
	if (ps->uses[b] == 0 || dig_arrow_do(sv->lv, ps, b, &cb) != 0)
		return false;
	bool same = false;
	if (ps->uses[a] > 0 && dig_arrow_do(sv->lv, ps, a, &ca) == 0) {
		uint8_t k2[KEY_MAX];
		encode(sv, ps, k2);
		same = memcmp(k2, key, (size_t)sv->key_len) == 0;
		dig_arrow_undo(ps, &ca);
	}
	dig_arrow_undo(ps, &cb);
	return same;
}

/*
 * Orders bucket b, the open states of the f about to be expanded, so that
 * the deepest (most taps so far, so the least bound left) come off first
 * (a stable counting sort by g; pops take the end). Among equal f the
 * deep ones are nearer a win: in the last layer, where an optimum lies,
 * the search then walks to it instead of trying the shallow states first.
 * States offered at this f while it is expanded go on top, deeper still.
 */
static int deepest_first(solver *sv, bucket *b)
{
	if (b->len < 2)
		return 0;
	if (b->len > sv->scratch_cap) {
		uint32_t *p = realloc(sv->scratch, (size_t)b->cap * sizeof *p);
		if (!p)
			return SF_ENOMEM;
		sv->scratch = p;
		sv->scratch_cap = b->cap;
	}
	uint32_t at[DIG_MAX_TURNS + 2] = { 0 };
	for (uint32_t i = 0; i < b->len; i++)
		at[sv->g[b->node[i]] + 1]++;
	for (int g = 1; g <= DIG_MAX_TURNS + 1; g++)
		at[g] += at[g - 1];
	for (uint32_t i = 0; i < b->len; i++)
		sv->scratch[at[sv->g[b->node[i]]]++] = b->node[i];
	memcpy(b->node, sv->scratch, (size_t)b->len * sizeof *b->node);
	return 0;
}

/*
 * Searches for the fewest taps that collect all the gold of `lv`. Fills
 * `out`: status DIG_SOLVED with turns and taps (one optimal sequence,
 * replayable with dig_replay), DIG_UNSOLVABLE when every reachable state
 * was explored without a win, DIG_UNKNOWN when storing one more distinct
 * state would pass `max_states` (also when a win would need more than
 * DIG_MAX_TURNS taps); out->states counts the states expanded. Returns 0 in
 * all three cases, SF_EINVAL when `lv` fails dig_level_check, SF_ENOMEM
 * when memory runs out (err says so). Memory: about key bytes + 40 per
 * stored state (keys are mostly 16..48 bytes).
 */
int dig_solve(const dig_level *lv, uint64_t max_states, dig_solve_result *out, sf_err *err)
{
	return dig_solve_with(lv, NULL, max_states, DIG_BOUND_USES, out, err);
}

/*
 * dig_solve() from the play state `from` instead of the start: the same
 * search, with g counted from `from` (out->turns and out->taps are the taps
 * still needed). `from` must be a state the engine reached from the start
 * of `lv` (dig_state_init, then dig_arrow_do): the key layout and what
 * cells give are worked out from the level, which stays right for every
 * such state, and the bound and the dominance test read turns_left and
 * uses from each state. A won `from` gives DIG_SOLVED with 0 taps.
 */
int dig_solve_from(const dig_level *lv, const dig_state *from, uint64_t max_states,
		   dig_solve_result *out, sf_err *err)
{
	return dig_solve_with(lv, from, max_states, DIG_BOUND_USES, out, err);
}

/*
 * Twin arrows. Under any_direction both arrows of a line may point the
 * same way; tapping either then makes the same move (every machine of the
 * line one step that way) and costs one use of its own, and no rule or
 * terrain reads which arrow it was (a treasure names the arrows it gives
 * to, not the taps). So only the sum of the twins' uses matters, and
 * the search would otherwise keep a state once per way of splitting the
 * taps of that move between the two (3 and 1 uses left against 2 and 2,
 * same positions: neither dominates the other). twins_merged() gives the
 * second twin's uses to the first, in the level and in the state the
 * search starts from; the merged level has the same plays tap for tap (a
 * tap of either twin where the other one is named, the sums equal all
 * along) and so the same optimum, and twins_unmerged() turns its optimal
 * play back into one of lv's: each tap of a twin pair the arrow the
 * search named while it has uses left, else its twin. A treasure may
 * still give the second twin a use later; the search then sees both
 * twins, as before. On the 282 of 655 hardest candidates (seeds 1 to 300)
 * with twins: 477 084 -> 247 733 states, their proofs 2.3 times faster
 * (seed 252's thirteenth 71 615 -> 12 108 states), every optimum the same.
 */
static bool twins_merged(const dig_level *lv, const dig_state *from, dig_level *mlv,
			 dig_state *mfrom, uint8_t *twin)
{
	memset(twin, 0xFF, DIG_MAX_ARROWS);
	*mlv = *lv;
	if (from)
		*mfrom = *from;
	bool any = false;
	for (int line = 0; line < lv->w + lv->h; line++) {
		int a = line < lv->h ? dig_slot_row_left(lv, line) : dig_slot_col_top(lv, line - lv->h);
		int b = line < lv->h ? dig_slot_row_right(lv, line)
				     : dig_slot_col_bottom(lv, line - lv->h);
		if (lv->arrow[a].dir != lv->arrow[b].dir)
			continue;
		twin[a] = (uint8_t)b;
		twin[b] = (uint8_t)a;
		if (lv->arrow[a].uses + lv->arrow[b].uses == 0 || /* (then a might not be keyed) */
		    lv->arrow[a].uses + lv->arrow[b].uses > 255 ||
		    (from && from->uses[a] + from->uses[b] > 255))
			continue;
		mlv->arrow[a].uses = (uint8_t)(lv->arrow[a].uses + lv->arrow[b].uses);
		mlv->arrow[b].uses = 0;
		if (from) {
			mfrom->uses[a] = (uint8_t)(from->uses[a] + from->uses[b]);
			mfrom->uses[b] = 0;
		}
		any = any || lv->arrow[b].uses > 0 || (from && from->uses[b] > 0);
	}
	return any;
}

/* The merged level's optimal play `out` as one of lv's (see twins_merged):
 * replayed on lv from `from` (NULL: the start), each tap of a twin taken
 * by the arrow named while it has uses left, else by its twin. */
static void twins_unmerged(const dig_level *lv, const dig_state *from, const uint8_t *twin,
			   dig_solve_result *out)
{
	dig_state s;
	dig_cmd cmd;
	if (from)
		s = *from;
	else
		dig_state_init(lv, &s);
	for (int t = 0; t < out->turns; t++) {
		uint8_t slot = out->taps[t];
		if (s.uses[slot] == 0 && twin[slot] != 0xFF)
			slot = twin[slot];
		out->taps[t] = slot;
		if (dig_arrow_do(lv, &s, slot, &cmd) != 0)
			return; /* (not reached: the sums of the twins' uses agree) */
	}
}

static int solve_level(const dig_level *lv, const dig_state *from, uint64_t max_states,
		       dig_bound which, dig_solve_result *out, sf_err *err);

/* Both, with the bound `which`: from NULL is the level's initial state.
 * Every bound but the nearest one (the first solver's search, kept as it
 * was) searches the level with its twin arrows merged. */
int dig_solve_with(const dig_level *lv, const dig_state *from, uint64_t max_states, dig_bound which,
		   dig_solve_result *out, sf_err *err)
{
	dig_level merged;
	dig_state mfrom;
	uint8_t twin[DIG_MAX_ARROWS];
	if (which == DIG_BOUND_NEAREST || dig_level_check(lv, NULL) != 0 ||
	    !twins_merged(lv, from, &merged, &mfrom, twin))
		return solve_level(lv, from, max_states, which, out, err);
	int rc = solve_level(&merged, from ? &mfrom : NULL, max_states, which, out, err);
	if (rc == 0 && out->status == DIG_SOLVED)
		twins_unmerged(lv, from, twin, out);
	return rc;
}

static int solve_level(const dig_level *lv, const dig_state *from, uint64_t max_states,
		       dig_bound which, dig_solve_result *out, sf_err *err)
{
	uint8_t key[KEY_MAX];
	dig_state s;
	dig_cmd cmd;
	bool cut = false; /* a state was left unexpanded at DIG_MAX_TURNS taps */
	memset(out, 0, sizeof *out);
	out->status = DIG_UNKNOWN;
	int rc = dig_level_check(lv, err);
	if (rc != 0)
		return rc;
	if (max_states > UINT32_MAX - 1)
		max_states = UINT32_MAX - 1;
	solver sv = { .lv = lv, .which = which, .gated = which == DIG_BOUND_USES };
	layout(&sv);
	sv.from = from ? *from : sv.start;
	if ((which == DIG_BOUND_USES || which == DIG_BOUND_ROUTES) && uses_to_spare(&sv))
		sv.which = DIG_BOUND_ASSIGN; /* the same search without the uses bound */
	sv.by_key.len = sv.key_len;
	sv.by_rest.len = sv.rest_len;
	if (grow_nodes(&sv) != 0 || grow_table(&sv.by_key) != 0 || grow_table(&sv.by_rest) != 0)
		goto fail;
	if (bound(&sv, &sv.from, true, 0) < 0) {
		out->status = DIG_UNSOLVABLE;
		goto done;
	}
	encode(&sv, &sv.from, key);
	if ((rc = offer(&sv, key, &sv.from, 0, 0, 0, 0, 0, max_states)) != 0)
		goto stop;

	for (int f = 0; f < F_MAX; f++) {
		bucket *open = &sv.open[f];
		if (which != DIG_BOUND_NEAREST && (rc = deepest_first(&sv, open)) != 0)
			goto stop; /* (the nearest bound keeps the first solver's order) */
		while (open->len > 0) {
			uint32_t n = open->node[--open->len];
			if (sv.flags[n] & EXPANDED)
				continue;
			int g = sv.g[n];
			decode(&sv, key_of(&sv, n), g, sv.turns_left[n], &s);
			relax rx; /* the state's relaxed moves, once worked out */
			bool rx_ok = false;
			if (assign_asked(&sv) && !(sv.flags[n] & REFINED)) {
				/* Offered with the nearest bound (cheap, and most
				 * stored states are never expanded); now the full
				 * one, and back in the queue if it moves f up. */
				sv.flags[n] |= REFINED;
				int b = bound(&sv, &s, true, sv.least[n]);
				if (b < 0) {
					sv.flags[n] |= EXPANDED;
					continue;
				}
				if (b > sv.least[n])
					sv.least[n] = (uint8_t)b;
				if (g + b > f) {
					if ((rc = queue_at(&sv, n, g + b)) != 0)
						goto stop;
					continue;
				}
			}
			if ((sv.which == DIG_BOUND_USES || sv.which == DIG_BOUND_ROUTES) &&
			    !(sv.flags[n] & USES_KNOWN) && s.gold) {
				/* The uses bound last, and only for a state the
				 * others leave at this f (see bound_uses): on the
				 * slowest hardest proofs 10 to 58 % of the refined
				 * states never get this far. */
				sv.flags[n] |= USES_KNOWN;
				rx_ok = relax_of(&sv, &s, true, &rx);
				int b = rx_ok ? bound_uses(&sv, &s, &rx, f - g) : -1;
				if (b >= 0 && b <= f - g && sv.which == DIG_BOUND_ROUTES)
					b = bound_route(&sv, &s, &rx,
							f - g); /* (the stronger, dearer) */
				sv.uses_asked++;
				sv.uses_moved += b < 0 || g + b > f;
				if (b < 0) {
					sv.flags[n] |= EXPANDED;
					continue;
				}
				if (sv.uses_live)
					sv.flags[n] |= LIVE;
				if (g + b > f) {
					sv.least[n] = (uint8_t)b;
					if ((rc = queue_at(&sv, n, g + b)) != 0)
						goto stop;
					continue;
				}
			}
			sv.flags[n] |= EXPANDED;
			if (which != DIG_BOUND_NEAREST && s.gold) {
				/* About to be expanded: first the web supply test,
				 * the lone-machine test and the sole collector's
				 * walk (asked_on: the default asks the first and the
				 * last only in long searches; only states that come
				 * this far pay for them). A LIVE state passes the
				 * lone test's one-visit part: the uses bound found
				 * each gold a walk of the same kind within rx.limit
				 * (on the 25 slowest hardest proofs lone_find had
				 * taken 7 % of the time, for no state); only its
				 * webs that need more visits are asked. */
				if (!rx_ok && !(rx_ok = relax_of(&sv, &s, true, &rx)))
					continue;
				if (asked_on(&sv, &sv.webs_gate, WEBS_AFTER, webs_short, &s, &rx,
					     out->states) ||
				    lone_dead(&sv, &s, &rx, (sv.flags[n] & LIVE) != 0) ||
				    asked_on(&sv, &sv.sole_gate, SOLE_AFTER, sole_dead, &s, &rx,
					     out->states))
					continue;
			}
			out->states++;
			/* A long search: from now on the default asks the
			 * assignment bound too, and that bound counts pairs.
			 * Open states are refined again when they come up, so
			 * every state expanded from here on was ordered by the
			 * stronger bound (the nearest and assignment bounds
			 * are consistent; the uses bound is asked at f). */
			bool longer = which != DIG_BOUND_NEAREST && out->states % JOINT_AFTER == 0 &&
				      !sv.assign_on && !sv.joint && !uses_paid(&sv);
			bool stronger = longer && sv.which == DIG_BOUND_USES;
			sv.assign_on |= stronger;
			if (!sv.joint && which != DIG_BOUND_NEAREST && sv.ngold <= JOINT_GOLD &&
			    (which == DIG_BOUND_PAIRS || longer) && joint_build(&sv))
				stronger = true;
			for (uint32_t k = 0; stronger && k < sv.count; k++)
				if (!(sv.flags[k] & EXPANDED))
					sv.flags[k] &= (uint8_t)~REFINED;
			if (dig_won(&s)) {
				write_path(&sv, n, -1, out);
				goto done;
			}
			if (g >= DIG_MAX_TURNS) {
				cut = true;
				continue;
			}
			dig_state ps; /* n's parent, decoded when commutes() first asks */
			ps.turns_used = -1;
			/* A slot whose line holds no machine free to step its way
			 * cannot move anybody: skip it without asking the engine. */
			uint64_t movable = 0;
			for (int m = 0; m < lv->machines; m++)
				if (!((s.frozen >> m) & 1u))
					movable |= UINT64_C(1) << s.pos[m];
			for (int i = 0; i < sv.nlive; i++) {
				int slot = sv.live_slot[i];
				if (s.uses[slot] == 0 || !(movable & sv.line[slot]) ||
				    dig_arrow_do(lv, &s, slot, &cmd) != 0)
					continue;
				if (dig_won(&s) && g + 1 <= f) {
					/* Nothing open can win in fewer taps. */
					write_path(&sv, n, slot, out);
					goto done;
				}
				encode(&sv, &s, key);
				if (g > 0 && slot < sv.tap[n] && which != DIG_BOUND_NEAREST &&
				    commutes(&sv, n, slot, key, &ps)) {
					dig_arrow_undo(&s, &cmd);
					continue; /* reached from the parent tapping slot first */
				}
				rc = offer(&sv, key, &s, n, slot, g + 1,
					   sv.least[n] > 0 ? sv.least[n] - 1 : 0, f, max_states);
				dig_arrow_undo(&s, &cmd);
				if (rc != 0)
					goto stop;
			}
		}
	}
	out->status = cut ? DIG_UNKNOWN : DIG_UNSOLVABLE;
	goto done;
stop:
	if (rc != 1)
		goto fail;
	/* rc == 1: the state budget is spent; out->status stays DIG_UNKNOWN. */
done:
	solver_free(&sv);
	return 0;
fail:
	out->status = DIG_UNKNOWN;
	rc = sf_err_set(err, SF_ENOMEM, "solver: out of memory after %u states", sv.count);
	solver_free(&sv);
	return rc;
}
