/*
 * test_lattice_check.c - the lattice kind's check operation
 * (core/lattice/check.c, behind POST /v1/lattice/check): is a fold a
 * conformation of the chain, its HH contacts, its stars.
 *
 * Oracles:
 *  - the exact enumerator, through the functions GET /v1/evaluations uses
 *    (lat_enumerate, lat_result_json, stars_thresholds): every example fold
 *    of an evaluation, square lengths 8..14 and cubic 8..10, must be valid
 *    and score exactly the score it is the example of, under each of the
 *    lattice's 8 or 48 rotations and reflections too;
 *  - a second walker written here (an occupancy grid and neighbour lookups
 *    instead of the check's coordinate lists and pairwise distances): random
 *    strings over the move letters, bad letters and wrong lengths included,
 *    must get the same verdict, step, collided residue and score from both;
 *  - corruptions of the example folds whose first bad move is known by
 *    construction (a move back onto the residue before, a truncation, an
 *    extra move, a bad letter, F or B on the square lattice);
 *  - stars counted by brute force against the thresholds the evaluation's
 *    star rule places, and a generated level's own band folds, which must
 *    earn one, two and three stars;
 *  - hand-made cases worked out on paper, and a table of bad bodies, each
 *    refused with SF_EINVAL and a message starting with the JSON path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "lattice/check.h"
#include "lattice/lattice.h"
#include "lattice/lattice_json.h"
#include "lattice_support.h"
#include "rng.h"
#include "stars.h"

/* ---- helpers ---- */

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!v)
		fail_msg("test JSON does not parse (%s): %s", jerr.text, text);
	return v;
}

/* Runs the check through the registry, as the service does; consumes body. */
static json_t *run_check(json_t *body, sf_err *err)
{
	const sf_kind *kind = sf_kind_find("lattice");
	assert_non_null(kind);
	assert_non_null(kind->check);
	json_t *res = kind->check(body, err);
	json_decref(body);
	return res;
}

/* The check of `fold` (`len` bytes) on `seq` / `lattice`; must be answered. */
static json_t *check_fold(const char *seq, const char *lattice, const char *fold, size_t len,
			  const int *thresholds)
{
	json_t *body = json_pack("{s:s, s:s, s:s%}", "sequence", seq, "lattice", lattice, "fold",
				 fold, len);
	assert_non_null(body);
	if (thresholds)
		json_object_set_new(
			body, "thresholds",
			json_pack("[iii]", thresholds[0], thresholds[1], thresholds[2]));
	sf_err err = { 0 };
	json_t *res = run_check(body, &err);
	if (!res)
		fail_msg("fold \"%.*s\" of %s (%s) refused: %s", (int)len, fold, seq, lattice,
			 err.msg);
	return res;
}

/* The check of a body given as JSON text; must be answered. */
static json_t *check_text(const char *text)
{
	sf_err err = { 0 };
	json_t *res = run_check(parse(text), &err);
	if (!res)
		fail_msg("body refused: %s: %s", err.msg, text);
	return res;
}

static int is_valid(const json_t *res)
{
	const json_t *v = json_object_get(res, "valid");
	if (!json_is_boolean(v))
		fail_msg("valid is not a boolean");
	return json_is_true(v);
}

/* An integer member, or -1 when it is null; fails when it is anything else. */
static long long int_or_null(const json_t *res, const char *key)
{
	const json_t *v = json_object_get(res, key);
	if (json_is_null(v))
		return -1;
	if (!json_is_integer(v))
		fail_msg("%s is neither an integer nor null", key);
	return (long long)json_integer_value(v);
}

static const char *text_of(const json_t *res, const char *key)
{
	return json_string_value(json_object_get(res, key));
}

/* Asserts a valid answer scoring `score`. */
static void expect_valid(const json_t *res, int score, const char *what)
{
	if (!is_valid(res))
		fail_msg("%s: not valid: %s", what, text_of(res, "reason"));
	if (int_or_null(res, "score") != score)
		fail_msg("%s: score %lld, expected %d", what, int_or_null(res, "score"), score);
	assert_null(json_object_get(res, "reason"));
	assert_null(json_object_get(res, "step"));
	assert_null(json_object_get(res, "fault"));
	assert_null(json_object_get(res, "collides_with"));
	assert_string_equal(text_of(res, "kind"), "lattice");
}

/* Asserts an invalid answer: its fault, step, collided residue (-1: none) and reason. */
static void expect_invalid(const json_t *res, const char *fault, long long step,
			   long long collides_with, const char *what)
{
	if (is_valid(res))
		fail_msg("%s: valid (score %lld), expected %s at fold[%lld]", what,
			 int_or_null(res, "score"), fault, step);
	const char *reason = text_of(res, "reason");
	assert_non_null(reason);
	char at[32];
	snprintf(at, sizeof at, "fold[%lld]: ", step);
	if (strncmp(reason, at, strlen(at)))
		fail_msg("%s: reason '%s' does not start with '%s'", what, reason, at);
	if (strcmp(text_of(res, "fault"), fault))
		fail_msg("%s: fault %s, expected %s (%s)", what, text_of(res, "fault"), fault,
			 reason);
	if (int_or_null(res, "step") != step)
		fail_msg("%s: step %lld, expected %lld (%s)", what, int_or_null(res, "step"), step,
			 reason);
	const json_t *cw = json_object_get(res, "collides_with");
	if (collides_with < 0) {
		assert_null(cw);
	} else {
		if (!json_is_integer(cw) || json_integer_value(cw) != collides_with)
			fail_msg("%s: collides_with %lld, expected %lld (%s)", what,
				 cw ? (long long)json_integer_value(cw) : -1, collides_with,
				 reason);
		char residue[40];
		snprintf(residue, sizeof residue, "residue %lld", collides_with);
		if (!strstr(reason, residue))
			fail_msg("%s: reason '%s' does not name %s", what, reason, residue);
	}
	assert_true(json_is_null(json_object_get(res, "score")));
	assert_true(json_is_null(json_object_get(res, "stars")));
	assert_true(json_is_null(json_object_get(res, "next_star_at")));
}

/* Stars by brute force: the highest band whose threshold the score reaches. */
static int brute_stars(int score, const int t[3])
{
	for (int i = 2; i >= 0; i--)
		if (score >= t[i])
			return i + 1;
	return 0;
}

/* ---- the lattice's symmetries, on fold letters ---- */

static const char LETTERS[] = "RLUDFB";
static const int DIR[6][3] = { { 1, 0, 0 },  { -1, 0, 0 }, { 0, 1, 0 },
			       { 0, -1, 0 }, { 0, 0, 1 },  { 0, 0, -1 } };

/* Symmetry `s` (0..dim! * 2^dim - 1: an axis permutation and signs) applied to a fold. */
static void transform(const char *fold, int dim, int s, char *out)
{
	static const int perms3[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					  { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	static const int perms2[2][3] = { { 0, 1, 2 }, { 1, 0, 2 } };
	int signs = s % (1 << dim), p = s >> dim;
	const int *perm = dim == 3 ? perms3[p] : perms2[p];
	size_t n = strlen(fold);
	for (size_t k = 0; k < n; k++) {
		const char *at = strchr(LETTERS, fold[k]);
		assert_non_null(at);
		const int *v = DIR[at - LETTERS];
		int w[3];
		for (int a = 0; a < 3; a++)
			w[perm[a]] = v[a] * (a < dim && (signs >> a & 1) ? -1 : 1);
		int d = 0;
		while (memcmp(DIR[d], w, sizeof w))
			d++;
		out[k] = LETTERS[d];
	}
	out[n] = '\0';
}

/* ---- a second walker: the test's own oracle ---- */

typedef struct walk_oracle {
	const char *fault; /* "" when valid */
	long long step, collides_with;
	int score;
} walk_oracle;

/* Walks `fold` on an occupancy grid and scores it by neighbour lookups. */
static walk_oracle oracle_walk(const lat_seq *seq, int dim, const char *fold, size_t len)
{
	enum { SIDE = 2 * LAT_MAX_LEN + 3 };
	static int grid[SIDE * SIDE * SIDE]; /* residue + 1 on each site, 0 free; 0 between calls */
	const int stride[3] = { 1, SIDE, SIDE * SIDE };
	int site[LAT_MAX_LEN];
	int center = (SIDE / 2) * (1 + SIDE + (dim == 3 ? SIDE * SIDE : 0));
	walk_oracle o = { "", -1, -1, 0 };
	long long bonds = seq->len - 1, k = 0;
	site[0] = center;
	grid[center] = 1;
	for (; k < (long long)len; k++) {
		if (k >= bonds) {
			o = (walk_oracle){ "extra_move", k, -1, 0 };
			break;
		}
		const char *at = fold[k] ? strchr(LETTERS, fold[k]) : NULL;
		if (!at || (dim == 2 && at - LETTERS >= 4)) {
			o = (walk_oracle){ "bad_move", k, -1, 0 };
			break;
		}
		const int *v = DIR[at - LETTERS];
		int next = site[k] + v[0] * stride[0] + v[1] * stride[1] + v[2] * stride[2];
		if (grid[next]) {
			o = (walk_oracle){ "collision", k, grid[next] - 1, 0 };
			break;
		}
		site[k + 1] = next;
		grid[next] = (int)k + 2;
	}
	if (!o.fault[0] && k < bonds)
		o = (walk_oracle){ "missing_move", k, -1, 0 };
	for (int i = 0; !o.fault[0] && i < seq->len; i++) {
		if (!seq->h[i])
			continue;
		for (int d = 0; d < 2 * dim; d++) {
			const int *v = DIR[d];
			int j = grid[site[i] + v[0] * stride[0] + v[1] * stride[1] +
				     v[2] * stride[2]] -
				1;
			o.score += j > i + 1 && seq->h[j];
		}
	}
	/* Residues 0..k are on the grid: take them off for the next call. */
	for (long long i = 0; i <= k && i <= bonds; i++)
		grid[site[i]] = 0;
	return o;
}

/* ---- the exact engine's examples ---- */

typedef struct sample {
	const char *lattice;
	const char *seq;
} sample;

/* Square lengths 8..14 and cubic 8..10; random ones are added in the test. */
static const sample SAMPLES[] = {
	{ "square", "HHHHHHHH" },       { "square", "HPHPPHHPH" },    { "square", "HPHPPHHPHH" },
	{ "square", "HHPPHPHPHHH" },    { "square", "HPPHPHHPPHPH" }, { "square", "HPHHPPHHPHPHH" },
	{ "square", "HPHPPHHPHPPHPH" }, { "square", "PPPPPPPPPPPP" }, { "cubic", "HHHHHHHH" },
	{ "cubic", "HPHHPPHHH" },       { "cubic", "HPHPPHHPHH" },    { "cubic", "PHHPHPHHPP" },
};

/* The evaluation of `text` on `lattice` as GET /v1/evaluations answers it (no stars). */
static json_t *evaluate(const char *lattice, const char *text, lat_result *res)
{
	lat_kind kind;
	lat_seq seq;
	sf_err err = { 0 };
	assert_int_equal(lat_parse_kind(lattice, &kind, &err), 0);
	assert_int_equal(lat_seq_parse(text, &seq, &err), 0);
	lat_opts opts = { .threads = 2, .budget = 0 };
	if (lat_enumerate(kind, &seq, &opts, res, &err))
		fail_msg("enumerating %s: %s", text, err.msg);
	json_t *doc = lat_result_json(res, &seq);
	assert_non_null(doc);
	return doc;
}

/* Every example of one evaluation: valid, its own score, every orientation, its stars. */
static int check_examples(const char *lattice, const char *text)
{
	static lat_result res;
	json_t *ev = evaluate(lattice, text, &res);
	int dim = strcmp(lattice, "cubic") ? 2 : 3;
	int nsym = dim == 3 ? 48 : 8;
	int t[3], has_t = 0;
	stars_config cfg;
	stars_config_default(&cfg, STARS_PAPER);
	sf_err err = { 0 };
	has_t = stars_thresholds(res.hist, res.max_score + 1, &cfg, t, &err) == 0;
	const char *key;
	json_t *fold;
	int seen = 0;
	json_object_foreach(json_object_get(ev, "examples"), key, fold)
	{
		int score = atoi(key);
		const char *f = json_string_value(fold);
		char what[128];
		snprintf(what, sizeof what, "%s %s example %s \"%s\"", lattice, text, key, f);
		json_t *r = check_fold(text, lattice, f, strlen(f), has_t ? t : NULL);
		expect_valid(r, score, what);
		assert_string_equal(text_of(r, "sequence"), text);
		assert_string_equal(text_of(r, "lattice"), lattice);
		assert_int_equal(int_or_null(r, "length"), (long long)strlen(text));
		if (has_t) {
			int stars = brute_stars(score, t);
			if (int_or_null(r, "stars") != stars)
				fail_msg("%s: %lld stars, brute force says %d", what,
					 int_or_null(r, "stars"), stars);
			assert_int_equal(int_or_null(r, "next_star_at"), stars < 3 ? t[stars] : -1);
			for (int i = 0; i < 3; i++)
				if (score == t[i])
					assert_int_equal(stars, i + 1);
		} else {
			assert_true(json_is_null(json_object_get(r, "stars")));
			assert_true(json_is_null(json_object_get(r, "thresholds")));
		}
		json_decref(r);
		/* The same fold turned or mirrored is the same conformation. */
		for (int s = 0; s < nsym; s++) {
			char g[LAT_MAX_LEN + 1];
			transform(f, dim, s, g);
			lat_fold_verdict v;
			lat_seq seq;
			assert_int_equal(lat_seq_parse(text, &seq, &err), 0);
			lat_fold_check(dim == 3 ? LAT_CUBIC : LAT_SQUARE, &seq, g, strlen(g), &v);
			if (v.fault != LAT_FOLD_OK || v.score != score)
				fail_msg("%s as \"%s\" (symmetry %d): %s, score %d", what, g, s,
					 v.reason, v.score);
		}
		seen++;
	}
	assert_int_equal(seen, res.distinct_scores);
	json_decref(ev);
	return seen;
}

static void test_examples(void **state)
{
	(void)state;
	int total = 0;
	for (size_t i = 0; i < sizeof SAMPLES / sizeof SAMPLES[0]; i++)
		total += check_examples(SAMPLES[i].lattice, SAMPLES[i].seq);
	/* Random sequences: three per square length 8..14, three per cubic 8..10. */
	rng r;
	rng_seed(&r, 15);
	for (int len = 8; len <= 14; len++) {
		for (int i = 0; i < 3; i++) {
			lat_seq seq = seq_random(&r, len);
			char text[LAT_MAX_LEN + 1];
			lat_seq_format(&seq, text);
			total += check_examples("square", text);
			if (len <= 10)
				total += check_examples("cubic", text);
		}
	}
	/* Enough examples (each in 8 or 48 orientations) that a check answering
	 * "valid, score 0" or any fixed score cannot pass. */
	assert_true(total > 150);
}

/* ---- corruptions ---- */

/* The corruptions of one example fold, each with its first bad move known. */
static void corrupt(const char *lattice, const char *text, const char *f)
{
	size_t n = strlen(f);
	char g[LAT_MAX_LEN + 8];
	char what[160];
	json_t *r;
	for (size_t k = 1; k < n; k++) {
		/* Back onto residue k - 1. */
		memcpy(g, f, n + 1);
		const char *at = strchr(LETTERS, f[k - 1]);
		g[k] = LETTERS[(at - LETTERS) ^ 1];
		snprintf(what, sizeof what, "%s %s: \"%s\" reversed at %zu", lattice, text, g, k);
		r = check_fold(text, lattice, g, n, NULL);
		expect_invalid(r, "collision", (long long)k, (long long)k - 1, what);
		json_decref(r);
	}
	/* Truncated: the move after the last one sent is missing. */
	for (size_t keep = 0; keep < n; keep += 3) {
		snprintf(what, sizeof what, "%s %s: \"%.*s\" truncated", lattice, text, (int)keep,
			 f);
		r = check_fold(text, lattice, f, keep, NULL);
		expect_invalid(r, "missing_move", (long long)keep, -1, what);
		json_decref(r);
	}
	/* One move too many, whatever it is. */
	for (const char *m = LETTERS; *m; m++) {
		snprintf(g, sizeof g, "%s%c", f, *m);
		snprintf(what, sizeof what, "%s %s: \"%s\" extended", lattice, text, g);
		r = check_fold(text, lattice, g, n + 1, NULL);
		expect_invalid(r, "extra_move", (long long)n, -1, what);
		json_decref(r);
	}
	/* A bad letter (lower case, a digit, a NUL, a 3-D move on the square lattice) wins
	 * over the moves missing after it. */
	const char bad[] = { 'r', 'X', '3', '\0', ' ', 'F', 'B' };
	for (size_t b = 0; b < sizeof bad; b++) {
		int cubic = !strcmp(lattice, "cubic");
		if (cubic && (bad[b] == 'F' || bad[b] == 'B'))
			continue;
		size_t k = (b * 5) % n;
		memcpy(g, f, n + 1);
		g[k] = bad[b];
		snprintf(what, sizeof what, "%s %s: byte 0x%02x at %zu", lattice, text,
			 (unsigned char)bad[b], k);
		r = check_fold(text, lattice, g, k + 1 < n ? n - 1 : n, NULL);
		expect_invalid(r, "bad_move", (long long)k, -1, what);
		assert_non_null(strstr(text_of(r, "reason"),
				       cubic ? "on the cubic lattice (allowed: R, L, U, D, F, B)"
					     : "on the square lattice (allowed: R, L, U, D)"));
		json_decref(r);
	}
}

static void test_corrupted(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof SAMPLES / sizeof SAMPLES[0]; i++) {
		static lat_result res;
		json_t *ev = evaluate(SAMPLES[i].lattice, SAMPLES[i].seq, &res);
		const char *key;
		json_t *fold;
		json_object_foreach(json_object_get(ev, "examples"), key, fold)
			corrupt(SAMPLES[i].lattice, SAMPLES[i].seq, json_string_value(fold));
		json_decref(ev);
	}
}

/* Hand-made folds, worked out on paper. */
static void test_hand_made(void **state)
{
	(void)state;
	const struct {
		const char *lattice, *seq, *fold;
		int score;             /* -1: invalid */
		const char *fault;     /* when invalid */
		long long step, other; /* when invalid */
	} cases[] = {
		/* (0,0) (1,0) (1,1) (0,1): residues 0 and 3 touch. */
		{ "square", "HPPH", "RUL", 1, NULL, 0, 0 },
		{ "square", "HPPH", "LDR", 1, NULL, 0, 0 },
		{ "square", "HPPH", "RRR", 0, NULL, 0, 0 },
		/* Consecutive residues never count: HH..H in a line. */
		{ "square", "HH", "U", 0, NULL, 0, 0 },
		{ "square", "H", "", 0, NULL, 0, 0 },
		/* A square of four H: only 0-3 is a contact (0-1, 1-2, 2-3 are bonds). */
		{ "square", "HHHH", "RUL", 1, NULL, 0, 0 },
		/* (0,0) (1,0) (1,1) (0,1) (0,2) (1,2): contacts 0-3 and 2-5. */
		{ "square", "HHHHHH", "RULUR", 2, NULL, 0, 0 },
		/* The cube's corner: (0,0,0)(1,0,0)(1,1,0)(0,1,0)(0,1,1)(0,0,1)(1,0,1)(1,1,1):
		 * contacts 0-3, 0-5, 1-6, 2-7, 4-7. */
		{ "cubic", "HHHHHHHH", "RULFDRU", 5, NULL, 0, 0 },
		{ "cubic", "HPPH", "RFR", 0, NULL, 0, 0 },
		{ "cubic", "HPPH", "FRB", 1, NULL, 0, 0 },
		/* Around a unit square and back to the start. */
		{ "square", "HPPHP", "RULD", -1, "collision", 3, 0 },
		{ "cubic", "HPPHP", "RFLB", -1, "collision", 3, 0 },
		{ "square", "HPPHP", "RULDD", -1, "collision", 3, 0 },
		{ "square", "HPPHP", "RL", -1, "collision", 1, 0 },
		{ "square", "HPPHP", "RUF", -1, "bad_move", 2, -1 },
		{ "square", "HPPHP", "RU", -1, "missing_move", 2, -1 },
		{ "square", "HPPHP", "", -1, "missing_move", 0, -1 },
		{ "square", "H", "R", -1, "extra_move", 0, -1 },
		{ "square", "HPPHP", "RUUUU", -1, "extra_move", 4, -1 },
		/* The first bad move wins: the collision before the extra move. */
		{ "square", "HPPHP", "RULDRR", -1, "collision", 3, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char what[96];
		snprintf(what, sizeof what, "case %zu: %s \"%s\"", i, cases[i].seq, cases[i].fold);
		json_t *r = check_fold(cases[i].seq, cases[i].lattice, cases[i].fold,
				       strlen(cases[i].fold), NULL);
		if (cases[i].score >= 0)
			expect_valid(r, cases[i].score, what);
		else
			expect_invalid(r, cases[i].fault, cases[i].step, cases[i].other, what);
		json_decref(r);
	}
	/* The reason of a collision says which residue lands where. */
	json_t *r = check_fold("HPPHP", "square", "RULD", 4, NULL);
	assert_string_equal(text_of(r, "reason"),
			    "fold[3]: 'D' puts residue 4 on the site of residue 0 (a fold visits "
			    "every site at most once)");
	json_decref(r);
	r = check_fold("HPPHP", "square", "RU", 2, NULL);
	assert_string_equal(text_of(r, "reason"),
			    "fold[2]: missing: a chain of 5 residues has 4 bonds, one move each, "
			    "and the fold has 2 moves");
	json_decref(r);
}

/* Random strings over the letters: the check and the test's own walker agree. */
static void test_random_against_oracle(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 2024);
	int valid = 0, faults = 0;
	for (int trial = 0; trial < 20000; trial++) {
		int dim = trial % 3 == 0 ? 3 : 2;
		int len = 1 + (int)rng_below(&r, LAT_MAX_LEN);
		lat_seq seq = seq_random(&r, len);
		/* Mostly the right length, sometimes one off or far off. */
		long long n = len - 1;
		uint64_t pick = rng_below(&r, 10);
		if (pick == 0)
			n = (long long)rng_below(&r, LAT_MAX_LEN + 4);
		else if (pick == 1)
			n = n + 1;
		else if (pick == 2 && n > 0)
			n = n - 1;
		char fold[LAT_MAX_LEN + 8];
		/* Now and then a bad letter; rarely straight back onto the residue before, so
		 * that long folds are self-avoiding often enough. */
		int prev = -1;
		for (long long k = 0; k < n; k++) {
			uint64_t u = rng_below(&r, 100);
			if (u == 0) {
				fold[k] = 'x';
				prev = -1;
				continue;
			}
			if (u == 1) {
				fold[k] = 'F';
				prev = 4;
				continue;
			}
			int d;
			do
				d = (int)rng_below(&r, (uint64_t)(2 * dim));
			while (prev >= 0 && d == (prev ^ 1) && rng_below(&r, 10));
			fold[k] = LETTERS[d];
			prev = d;
		}
		fold[n] = '\0';
		walk_oracle o = oracle_walk(&seq, dim, fold, (size_t)n);
		lat_fold_verdict v;
		lat_fold_check(dim == 3 ? LAT_CUBIC : LAT_SQUARE, &seq, fold, (size_t)n, &v);
		char text[LAT_MAX_LEN + 1];
		lat_seq_format(&seq, text);
		if (strcmp(lat_fold_fault_name(v.fault), o.fault) ||
		    (o.fault[0] &&
		     ((long long)v.step != o.step || v.collides_with != o.collides_with)) ||
		    (!o.fault[0] && v.score != o.score))
			fail_msg("%dD %s \"%s\": check says %s at %zu (residue %d, score %d: %s), "
				 "the "
				 "oracle %s at %lld (residue %lld, score %d)",
				 dim, text, fold, lat_fold_fault_name(v.fault), v.step,
				 v.collides_with, v.score, v.reason, o.fault, o.step,
				 o.collides_with, o.score);
		if (o.fault[0])
			faults++;
		else
			valid++;
	}
	/* Both sides of the verdict are exercised. */
	assert_true(valid > 2000);
	assert_true(faults > 2000);
}

/* An all-P chain scores 0 on any valid fold, also the all-H chain's best. */
static void test_all_p(void **state)
{
	(void)state;
	for (int cubic = 0; cubic <= 1; cubic++) {
		const char *lattice = cubic ? "cubic" : "square";
		const char *h = cubic ? "HHHHHHHHHH" : "HHHHHHHHHHHHHH";
		const char *p = cubic ? "PPPPPPPPPP" : "PPPPPPPPPPPPPP";
		static lat_result res;
		json_t *ev = evaluate(lattice, h, &res);
		assert_true(res.max_score >= 4);
		const char *key;
		json_t *fold;
		json_object_foreach(json_object_get(ev, "examples"), key, fold)
		{
			const char *f = json_string_value(fold);
			json_t *r = check_fold(p, lattice, f, strlen(f), NULL);
			expect_valid(r, 0, f);
			json_decref(r);
			r = check_fold(h, lattice, f, strlen(f), NULL);
			expect_valid(r, atoi(key), f);
			json_decref(r);
		}
		json_decref(ev);
	}
}

/* ---- stars ---- */

static void test_stars(void **state)
{
	(void)state;
	const int tables[][3] = {
		{ 1, 2, 3 }, { 4, 8, 9 }, { 3, 5, 6 }, { 1, 3, 6 }, { 2, 7, 72 }
	};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		for (int s = 0; s <= LAT_MAX_SCORE; s++)
			assert_int_equal(lat_check_stars(s, tables[i]), brute_stars(s, tables[i]));
	/* The paper's worked example: best 9 gives 0-3 no star, 4-7 one, 8 two, 9 three. */
	const int paper[3] = { 4, 8, 9 };
	const int want[10] = { 0, 0, 0, 0, 1, 1, 1, 1, 2, 3 };
	for (int s = 0; s <= 9; s++)
		assert_int_equal(lat_check_stars(s, paper), want[s]);
	/* Over HTTP's body: HPPH's fold RUL scores 1, one star under [1, 2, 3]. */
	json_t *r = check_text("{\"sequence\": \"HPPH\", \"lattice\": \"square\", \"fold\": "
			       "\"RUL\", \"thresholds\": [1, 2, 3]}");
	expect_valid(r, 1, "HPPH RUL");
	assert_int_equal(int_or_null(r, "stars"), 1);
	assert_int_equal(int_or_null(r, "next_star_at"), 2);
	json_decref(r);
	r = check_text("{\"sequence\": \"HPPH\", \"lattice\": \"square\", \"fold\": "
		       "\"RRR\", \"thresholds\": [1, 2, 3]}");
	assert_int_equal(int_or_null(r, "stars"), 0);
	assert_int_equal(int_or_null(r, "next_star_at"), 1);
	json_decref(r);
	/* Null thresholds: none. */
	r = check_text("{\"sequence\": \"HPPH\", \"lattice\": \"square\", \"fold\": "
		       "\"RUL\", \"thresholds\": null}");
	assert_true(json_is_null(json_object_get(r, "stars")));
	assert_true(json_is_null(json_object_get(r, "thresholds")));
	assert_true(json_is_null(json_object_get(r, "next_star_at")));
	json_decref(r);
	/* A bad fold earns nothing, but the thresholds are echoed. */
	r = check_text("{\"sequence\": \"HPPHP\", \"lattice\": \"square\", \"fold\": "
		       "\"RULD\", \"thresholds\": [1, 2, 3]}");
	expect_invalid(r, "collision", 3, 0, "RULD with thresholds");
	assert_int_equal(json_array_size(json_object_get(r, "thresholds")), 3);
	json_decref(r);
}

/* ---- a generated level ---- */

static json_t *generated; /* a lattice generate result */

static int make_levels(void **state)
{
	(void)state;
	const sf_kind *kind = sf_kind_find("lattice");
	json_t *params = parse("{\"length\": 12, \"population\": 8, \"generations\": 3, "
			       "\"count\": 3}");
	sf_err err = { 0 };
	void *p = kind->params_parse(params, &err);
	json_decref(params);
	if (!p)
		return -1;
	sf_gen_opts opts = { .seed = 7, .threads = 1 };
	generated = kind->generate(p, &opts, &err);
	kind->params_free(p);
	return generated ? 0 : -1;
}

static int free_levels(void **state)
{
	(void)state;
	json_decref(generated);
	return 0;
}

/* {"level": lv, "fold": f} plus `extra` members (may be NULL). */
static json_t *check_level(const json_t *lv, const char *fold, const char *extra)
{
	json_t *body = json_pack("{s:O, s:s}", "level", lv, "fold", fold);
	if (extra) {
		json_t *more = parse(extra);
		json_object_update(body, more);
		json_decref(more);
	}
	sf_err err = { 0 };
	json_t *r = run_check(body, &err);
	if (!r)
		fail_msg("level check of \"%s\" refused: %s", fold, err.msg);
	return r;
}

static void test_level(void **state)
{
	(void)state;
	const json_t *levels = json_object_get(generated, "levels");
	assert_true(json_array_size(levels) >= 1);
	for (size_t l = 0; l < json_array_size(levels); l++) {
		const json_t *lv = json_array_get(levels, l);
		const json_t *th = json_object_get(json_object_get(lv, "stars"), "thresholds");
		int t[3];
		for (int i = 0; i < 3; i++)
			t[i] = (int)json_integer_value(json_array_get(th, (size_t)i));
		const json_t *sol = json_object_get(lv, "solution");
		const json_t *bands = json_object_get(sol, "band_folds");
		const char *names[3] = { "one", "two", "three" };
		for (int i = 0; i < 3; i++) {
			const char *f = json_string_value(json_object_get(bands, names[i]));
			json_t *r = check_level(lv, f, NULL);
			expect_valid(r, t[i], names[i]);
			assert_int_equal(int_or_null(r, "stars"), i + 1);
			assert_int_equal(int_or_null(r, "next_star_at"), i < 2 ? t[i + 1] : -1);
			assert_true(json_equal(json_object_get(r, "thresholds"), th));
			json_decref(r);
		}
		const char *best = json_string_value(json_object_get(sol, "best_fold"));
		json_t *r = check_level(lv, best, NULL);
		expect_valid(r, (int)json_integer_value(json_object_get(sol, "best_score")), best);
		assert_int_equal(int_or_null(r, "stars"), 3);
		/* Sending the level's own sequence and lattice too changes nothing. */
		const json_t *puzzle = json_object_get(lv, "puzzle");
		char extra[160];
		snprintf(extra, sizeof extra, "{\"sequence\": \"%s\", \"lattice\": \"%s\"}",
			 text_of(puzzle, "sequence"), text_of(puzzle, "lattice"));
		json_t *same = check_level(lv, best, extra);
		assert_true(json_equal(r, same));
		json_decref(same);
		json_decref(r);
		/* A fold one contact short of one star earns none (the straight chain, 0
		 * contacts, when the one-star threshold is 1). */
		static lat_result res;
		json_t *ev =
			evaluate(text_of(puzzle, "lattice"), text_of(puzzle, "sequence"), &res);
		char key[16];
		snprintf(key, sizeof key, "%d", t[0] - 1);
		const char *below =
			json_string_value(json_object_get(json_object_get(ev, "examples"), key));
		assert_non_null(below);
		r = check_level(lv, below, NULL);
		expect_valid(r, t[0] - 1, below);
		assert_int_equal(int_or_null(r, "stars"), 0);
		assert_int_equal(int_or_null(r, "next_star_at"), t[0]);
		json_decref(r);
		json_decref(ev);
		/* A level without thresholds: no stars, the fold still checked. */
		json_t *bare = json_deep_copy(lv);
		json_object_set_new(json_object_get(bare, "stars"), "thresholds", json_null());
		r = check_level(bare, best, NULL);
		assert_true(is_valid(r));
		assert_true(json_is_null(json_object_get(r, "stars")));
		assert_true(json_is_null(json_object_get(r, "thresholds")));
		json_decref(r);
		json_decref(bare);
	}
}

/* ---- refusals ---- */

typedef struct bad_body {
	const char *body;  /* JSON text */
	const char *error; /* the message's start */
} bad_body;

/* The limits as text, for messages that name them. */
#define STR_(x) #x
#define STR(x) STR_(x)
/* LAT_MAX_SCORE is an expression (2 L + 1); its value spelled out. */
#define MAX_SCORE_TEXT "129"
_Static_assert(LAT_MAX_SCORE == 129, "MAX_SCORE_TEXT spells LAT_MAX_SCORE");

#define LEVEL(puzzle, stars) "{\"kind\": \"lattice\", \"puzzle\": " puzzle ", \"stars\": " stars "}"
#define PUZZLE "{\"lattice\": \"square\", \"length\": 4, \"sequence\": \"HPPH\"}"
#define STARS "{\"metric\": \"contacts\", \"better\": \"higher\", \"thresholds\": [1, 2, 3]}"
#define WITH(fields) "{\"fold\": \"RUL\", " fields "}"

static void test_bad_bodies(void **state)
{
	(void)state;
	const bad_body cases[] = {
		{ "[]", "body: must be an object with fold, sequence and lattice (or fold and "
			"level), not an array" },
		{ "\"RUL\"", "body: must be an object" },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": \"square\", \"score\": 1"),
		  "body: unknown key \"score\" (allowed: fold, sequence, lattice, thresholds, "
		  "level)" },
		{ WITH("\"lattice\": \"square\""),
		  "sequence: must be a string of 1.." STR(
			  LAT_MAX_LEN) " letters H or P, not missing" },
		{ WITH("\"sequence\": 7, \"lattice\": \"square\""),
		  "sequence: must be a string of 1.." STR(
			  LAT_MAX_LEN) " letters H or P, not an integer" },
		{ WITH("\"sequence\": \"\", \"lattice\": \"square\""),
		  "sequence: 0 residues is out of range (allowed: 1.." STR(LAT_MAX_LEN) ")" },
		{ WITH("\"sequence\": \"HPPHX\", \"lattice\": \"square\""),
		  "sequence[4]: 'X' is not a residue (allowed: H, P)" },
		{ WITH("\"sequence\": \"hpph\", \"lattice\": \"square\""),
		  "sequence[0]: 'h' is not a residue" },
		{ WITH("\"sequence\": \"HP\\u0000H\", \"lattice\": \"square\""),
		  "sequence[2]: byte 0x00 is not a residue" },
		{ WITH("\"sequence\": \"HPPH\""),
		  "lattice: must be \"square\" or \"cubic\", not missing" },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": \"hexagonal\""),
		  "lattice: unknown lattice \"hexagonal\" (allowed: square, cubic)" },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": 2"),
		  "lattice: must be \"square\" or \"cubic\", not an integer" },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": \"square\", \"thresholds\": 3"),
		  "thresholds: must be [one, two, three], three HH-contact counts, or null, not "
		  "an integer" },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": \"square\", \"thresholds\": [1, 2]"),
		  "thresholds: must be [one, two, three], three HH-contact counts, or null, not "
		  "an array of another length" },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": \"square\", \"thresholds\": [0, 2, "
		       "3]"),
		  "thresholds[0]: must be an integer 1.." MAX_SCORE_TEXT " (HH contacts)" },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": \"square\", \"thresholds\": [1, 2.0, "
		       "3]"),
		  "thresholds[1]: must be an integer 1.." MAX_SCORE_TEXT },
		{ WITH("\"sequence\": \"HPPH\", \"lattice\": \"square\", \"thresholds\": [1, 3, "
		       "3]"),
		  "thresholds[2]: 3 must be above thresholds[1] (3): more stars need more "
		  "contacts" },
		{ "{\"sequence\": \"HPPH\", \"lattice\": \"square\"}",
		  "fold: must be a string of moves, one letter per bond (R L U D, and F B on the "
		  "cubic lattice), not missing" },
		{ "{\"sequence\": \"HPPH\", \"lattice\": \"square\", \"fold\": [\"R\"]}",
		  "fold: must be a string of moves, one letter per bond (R L U D, and F B on the "
		  "cubic lattice), not an array" },
		{ "{\"sequence\": \"HPPH\", \"lattice\": \"square\", \"fold\": null}",
		  "fold: must be a string of moves" },
		/* With a level. */
		{ WITH("\"level\": []"),
		  "level: must be an object, a lattice level as GET /v1/levels/{id} answers it, "
		  "not an array" },
		{ WITH("\"level\": {\"kind\": \"digger\"}"),
		  "level.kind: must be \"lattice\", not \"digger\"" },
		{ WITH("\"level\": {\"kind\": 1}"),
		  "level.kind: must be \"lattice\", not an integer" },
		{ WITH("\"level\": {\"stars\": " STARS "}"),
		  "level.puzzle: must be the level's puzzle object, not missing" },
		{ WITH("\"level\": " LEVEL("{\"sequence\": \"HPPH\"}", STARS)),
		  "level.puzzle.lattice: must be \"square\" or \"cubic\", not missing" },
		{ WITH("\"level\": " LEVEL("{\"lattice\": \"square\", \"sequence\": \"HPXH\"}",
					   STARS)),
		  "level.puzzle.sequence[2]: 'X' is not a residue" },
		{ WITH("\"level\": " PUZZLE), "level.puzzle: must be the level's puzzle object" },
		{ WITH("\"level\": {\"puzzle\": " PUZZLE "}"),
		  "level.stars: missing; send the whole "
		  "level" },
		{ WITH("\"level\": " LEVEL(PUZZLE, "[1, 2, 3]")),
		  "level.stars: must be an object, not an array" },
		{ WITH("\"level\": " LEVEL(PUZZLE, "{\"better\": \"lower\", \"thresholds\": [1, 2, "
						   "3]}")),
		  "level.stars.better: must be \"higher\"" },
		{ WITH("\"level\": " LEVEL(PUZZLE, "{\"metric\": \"lap_time\", \"thresholds\": [1, "
						   "2, 3]}")),
		  "level.stars.metric: must be \"contacts\"" },
		{ WITH("\"level\": " LEVEL(PUZZLE, "{\"metric\": \"contacts\"}")),
		  "level.stars.thresholds: must be [one, two, three], three HH-contact counts, "
		  "or null, not missing" },
		{ WITH("\"level\": " LEVEL(PUZZLE, "{\"thresholds\": [3, 2, 1]}")),
		  "level.stars.thresholds[1]: 2 must be above level.stars.thresholds[0] (3)" },
		{ WITH("\"level\": " LEVEL(PUZZLE, STARS) ", \"sequence\": \"HPPP\""),
		  "sequence: HPPP is not the level's puzzle.sequence HPPH" },
		{ WITH("\"level\": " LEVEL(PUZZLE, STARS) ", \"sequence\": \"HPZP\""),
		  "sequence[2]: 'Z' is not a residue" },
		{ WITH("\"level\": " LEVEL(PUZZLE, STARS) ", \"lattice\": \"cubic\""),
		  "lattice: cubic is not the level's puzzle.lattice square" },
		{ WITH("\"level\": " LEVEL(PUZZLE, STARS) ", \"thresholds\": [1, 2, 3]"),
		  "thresholds: send thresholds or level, not both" },
		{ "{\"level\": " LEVEL(PUZZLE, STARS) "}", "fold: must be a string of moves" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sf_err err = { 0 };
		json_t *res = run_check(parse(cases[i].body), &err);
		if (res)
			fail_msg("case %zu accepted: %s", i, cases[i].body);
		assert_int_equal(err.code, SF_EINVAL);
		if (strncmp(err.msg, cases[i].error, strlen(cases[i].error)))
			fail_msg("case %zu: message '%s' does not start with '%s'", i, err.msg,
				 cases[i].error);
	}
	/* One residue and one contact past the limits. */
	char seq[LAT_MAX_LEN + 2], body[160], want[96];
	memset(seq, 'H', LAT_MAX_LEN + 1);
	seq[LAT_MAX_LEN + 1] = '\0';
	snprintf(body, sizeof body,
		 "{\"sequence\": \"%s\", \"lattice\": \"square\", \"fold\": \"\"}", seq);
	snprintf(want, sizeof want, "sequence: %d residues is out of range (allowed: 1..%d)",
		 LAT_MAX_LEN + 1, LAT_MAX_LEN);
	sf_err err = { 0 };
	assert_null(run_check(parse(body), &err));
	assert_string_equal(err.msg, want);
	snprintf(body, sizeof body,
		 "{\"sequence\": \"HPPH\", \"lattice\": \"square\", \"fold\": \"RUL\", "
		 "\"thresholds\": [1, 2, %d]}",
		 LAT_MAX_SCORE + 1);
	snprintf(want, sizeof want, "thresholds[2]: must be an integer 1..%d (HH contacts)",
		 LAT_MAX_SCORE);
	assert_null(run_check(parse(body), &err));
	assert_string_equal(err.msg, want);
	/* At the limits: answered. */
	seq[LAT_MAX_LEN] = '\0';
	snprintf(body, sizeof body,
		 "{\"sequence\": \"%s\", \"lattice\": \"square\", \"fold\": \"R\", "
		 "\"thresholds\": [1, 2, %d]}",
		 seq, LAT_MAX_SCORE);
	json_t *at = check_text(body);
	expect_invalid(at, "missing_move", 1, -1, "a chain of LAT_MAX_LEN");
	json_decref(at);
	/* The same level, well formed, is answered. */
	json_t *r = check_text(WITH("\"level\": " LEVEL(PUZZLE, STARS)));
	expect_valid(r, 1, "the hand-made level");
	assert_int_equal(int_or_null(r, "stars"), 1);
	json_decref(r);
}

/* ---- determinism ---- */

typedef struct det_arg {
	const char *body;
	char *first; /* the answer's bytes, from the main thread */
	int mismatches;
} det_arg;

static void *det_thread(void *p)
{
	det_arg *a = p;
	for (int i = 0; i < 200; i++) {
		sf_err err = { 0 };
		json_t *body = json_loads(a->body, 0, NULL);
		json_t *res = sf_kind_find("lattice")->check(body, &err);
		json_decref(body);
		char *text = res ? json_dumps(res, JSON_COMPACT) : NULL;
		if (!text || strcmp(text, a->first))
			a->mismatches++;
		free(text);
		json_decref(res);
	}
	return NULL;
}

/* A pure function: the same body gives the same bytes, on any thread, at once. */
static void test_deterministic(void **state)
{
	(void)state;
	const char *bodies[] = {
		"{\"sequence\": \"HPHPPHHPHPPHPH\", \"lattice\": \"square\", \"fold\": "
		"\"RUULDLULLDRDLD\"}",
		"{\"sequence\": \"HPHPPHHPHPPHPH\", \"lattice\": \"square\", \"fold\": "
		"\"RRUULLDDRRRUUU\", \"thresholds\": [1, 2, 3]}",
		"{\"sequence\": \"HHHHHHHH\", \"lattice\": \"cubic\", \"fold\": \"RULFDRU\", "
		"\"thresholds\": [2, 4, 5]}",
	};
	for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++) {
		json_t *res = check_text(bodies[b]);
		char *first = json_dumps(res, JSON_COMPACT);
		json_decref(res);
		det_arg args[4];
		pthread_t th[4];
		for (int i = 0; i < 4; i++) {
			args[i] = (det_arg){ bodies[b], first, 0 };
			assert_int_equal(pthread_create(&th[i], NULL, det_thread, &args[i]), 0);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			assert_int_equal(args[i].mismatches, 0);
		}
		free(first);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_made),     cmocka_unit_test(test_examples),
		cmocka_unit_test(test_corrupted),     cmocka_unit_test(test_random_against_oracle),
		cmocka_unit_test(test_all_p),         cmocka_unit_test(test_stars),
		cmocka_unit_test(test_level),         cmocka_unit_test(test_bad_bodies),
		cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, make_levels, free_levels);
}
