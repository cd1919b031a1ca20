/*
 * puzzle_long.c - the lattice search's estimate path; see puzzle_long.h.
 *
 * Who runs where: lat_long_fitness() runs on the search's evaluation
 * workers (par_for in puzzle.c), one sequence per call, each with its own
 * heap evaluation and one thread inside lat_evaluate(); nothing is shared.
 * lat_long_level() runs on the search's thread when the levels are made.
 */
#include "puzzle_long.h"

#include <stdlib.h>
#include <string.h>

int lat_long_max_length(lat_kind kind)
{
	return kind == LAT_CUBIC ? LAT_EVAL_MAX_CUBIC : LAT_EVAL_MAX_SQUARE;
}

uint64_t lat_long_seed(lat_kind kind, const lat_seq *seq)
{
	/* FNV-1a over the lattice, the length and the residues, then the
	 * splitmix64 finaliser so that neighbouring sequences get unrelated seeds. */
	uint64_t h = 0xcbf29ce484222325ull;
	uint8_t head[2] = { (uint8_t)kind, (uint8_t)seq->len };
	for (int i = 0; i < 2; i++)
		h = (h ^ head[i]) * 0x100000001b3ull;
	for (int i = 0; i < seq->len; i++)
		h = (h ^ seq->h[i]) * 0x100000001b3ull;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h >> 11; /* 53 bits: exact in every JSON reader, JavaScript's included */
}

void lat_long_config(const lat_search_params *p, const lat_seq *canon, lat_eval_config *cfg)
{
	lat_eval_config_default(cfg);
	cfg->method = LAT_METHOD_ESTIMATE;
	cfg->seed = lat_long_seed(p->lattice, canon);
	cfg->threads = 1; /* the search spreads sequences over its workers instead */
	cfg->est_steps = p->steps;
	cfg->opt_moves = (uint64_t)p->moves;
	cfg->opt_nodes = (uint64_t)p->nodes;
}

/* The smaller of `seq` and its reverse (P < H), as puzzle.c orders puzzles. */
static lat_seq canonical_seq(const lat_seq *seq)
{
	lat_seq rev = { .len = seq->len };
	for (int i = 0; i < seq->len; i++)
		rev.h[i] = seq->h[seq->len - 1 - i];
	return memcmp(rev.h, seq->h, (size_t)seq->len) < 0 ? rev : *seq;
}

/*
 * Evaluates the canonical chain `canon` into a new evaluation *out. Returns
 * 0, or a negative code with `err` set and *out NULL.
 */
static int evaluate(const lat_search_params *p, const lat_seq *canon, lat_evaluation **out,
		    sf_err *err)
{
	lat_evaluation *ev = *out = malloc(sizeof *ev);
	if (!ev)
		return sf_err_set(err, SF_ENOMEM, "out of memory evaluating a sequence");
	lat_eval_config cfg;
	lat_long_config(p, canon, &cfg);
	int rc = lat_evaluate(p->lattice, canon, &cfg, ev, err);
	if (rc) {
		free(ev);
		*out = NULL;
	}
	return rc;
}

int lat_long_fitness(const lat_search_params *p, const lat_seq *seq, ga_eval *fit,
		     uint8_t *in_domain, sf_err *err)
{
	lat_seq canon = canonical_seq(seq);
	lat_evaluation *ev;
	int rc = evaluate(p, &canon, &ev, err);
	if (rc)
		return rc;
	/* The canonical chain throughout, so that both orientations score the same. */
	*fit = lat_fitness_of(p, &canon, ev->star_counts, ev->max_score);
	if (in_domain)
		*in_domain = (uint8_t)lat_in_domain(p, &canon, ev->star_counts, ev->max_score);
	free(ev);
	return 0;
}

int lat_long_level(const lat_search_params *p, lat_level *lv, sf_err *err)
{
	free(lv->estimate);
	int rc = evaluate(p, &lv->seq, &lv->estimate, err);
	if (rc)
		return rc;
	const lat_evaluation *ev = lv->estimate;
	lat_result *res = &lv->eval;
	memset(res, 0, sizeof *res);
	res->lattice = p->lattice;
	res->len = lv->seq.len;
	memcpy(res->hist, ev->star_counts, sizeof res->hist);
	for (int s = 0; s <= ev->max_score; s++) {
		if (!ev->star_counts[s])
			continue;
		const char *fold = s == ev->max_score ? ev->opt_fold : ev->est.examples[s];
		memcpy(res->examples[s], fold, sizeof res->examples[s]);
	}
	lat_result_summarise(res);
	return 0;
}
