/*
 * check.c - checking a player's fold of a lattice puzzle: the check
 * operation behind POST /v1/lattice/check (check.h).
 *
 * The walk is its own code, not the enumerator's: it places residue k + 1
 * one site away from residue k on plain integer coordinates and looks for
 * an earlier residue on that site, then counts HH contacts over every pair.
 * Quadratic in the length, which is at most LAT_MAX_LEN, so a check costs
 * microseconds and needs no budget; and because it shares nothing with
 * enumerate.c or cmap.c, the tests can hold each against the other.
 */
#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../params.h"

static const char move_letters[] = "RLUDFB";
static const int move_step[6][3] = {
	{ 1, 0, 0 }, { -1, 0, 0 }, { 0, 1, 0 }, { 0, -1, 0 }, { 0, 0, 1 }, { 0, 0, -1 },
};

const char *lat_fold_fault_name(lat_fold_fault fault)
{
	switch (fault) {
	case LAT_FOLD_OK:
		return "";
	case LAT_FOLD_BAD_MOVE:
		return "bad_move";
	case LAT_FOLD_COLLISION:
		return "collision";
	case LAT_FOLD_MISSING:
		return "missing_move";
	case LAT_FOLD_EXTRA:
		return "extra_move";
	}
	return "";
}

/* The moves of `kind` as a message lists them: "R, L, U, D". */
static const char *allowed_moves(lat_kind kind)
{
	return kind == LAT_CUBIC ? "R, L, U, D, F, B" : "R, L, U, D";
}

/* Fills `out` for a bad move at `step`; the reason is printf-formatted. */
static void refuse(lat_fold_verdict *out, lat_fold_fault fault, size_t step, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void refuse(lat_fold_verdict *out, lat_fold_fault fault, size_t step, const char *fmt, ...)
{
	out->fault = fault;
	out->step = step;
	out->score = -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof out->reason, fmt, ap);
	va_end(ap);
}

void lat_fold_check(lat_kind kind, const lat_seq *seq, const char *fold, size_t len,
		    lat_fold_verdict *out)
{
	memset(out, 0, sizeof *out);
	out->score = -1;
	out->collides_with = -1;
	const int ndir = kind == LAT_CUBIC ? 6 : 4;
	const size_t bonds = seq->len > 0 ? (size_t)seq->len - 1 : 0;
	int pos[LAT_MAX_LEN][3];
	memset(pos[0], 0, sizeof pos[0]);
	for (size_t k = 0; k < len; k++) {
		if (k >= bonds) {
			refuse(out, LAT_FOLD_EXTRA, k,
			       "fold[%zu]: one move too many: a chain of %d residues has %zu "
			       "bonds, one move each, and the fold has %zu moves",
			       k, seq->len, bonds, len);
			return;
		}
		const char *at = memchr(move_letters, fold[k], (size_t)ndir);
		if (!at || fold[k] == '\0') {
			unsigned char u = (unsigned char)fold[k];
			if (u > 0x20 && u < 0x7f && u != '\'')
				refuse(out, LAT_FOLD_BAD_MOVE, k,
				       "fold[%zu]: '%c' is not a move on the %s lattice (allowed: "
				       "%s)",
				       k, fold[k], lat_kind_name(kind), allowed_moves(kind));
			else
				refuse(out, LAT_FOLD_BAD_MOVE, k,
				       "fold[%zu]: byte 0x%02x is not a move on the %s lattice "
				       "(allowed: %s)",
				       k, u, lat_kind_name(kind), allowed_moves(kind));
			return;
		}
		int d = (int)(at - move_letters);
		for (int a = 0; a < 3; a++)
			pos[k + 1][a] = pos[k][a] + move_step[d][a];
		for (size_t j = 0; j <= k; j++) {
			if (memcmp(pos[j], pos[k + 1], sizeof pos[j]))
				continue;
			out->collides_with = (int)j;
			refuse(out, LAT_FOLD_COLLISION, k,
			       "fold[%zu]: '%c' puts residue %zu on the site of residue %zu (a "
			       "fold visits every site at most once)",
			       k, fold[k], k + 1, j);
			return;
		}
	}
	if (len < bonds) {
		refuse(out, LAT_FOLD_MISSING, len,
		       "fold[%zu]: missing: a chain of %d residues has %zu bonds, one move "
		       "each, and the fold has %zu moves",
		       len, seq->len, bonds, len);
		return;
	}
	int score = 0;
	for (int i = 0; i < seq->len; i++) {
		for (int j = i + 2; seq->h[i] && j < seq->len; j++) {
			if (!seq->h[j])
				continue;
			int dist = abs(pos[i][0] - pos[j][0]) + abs(pos[i][1] - pos[j][1]) +
				   abs(pos[i][2] - pos[j][2]);
			score += dist == 1;
		}
	}
	out->fault = LAT_FOLD_OK;
	out->score = score;
}

int lat_check_stars(int score, const int thresholds[3])
{
	int stars = 0;
	for (int i = 0; i < 3; i++)
		stars += score >= thresholds[i];
	return stars;
}

/* ---- reading the body ---- */

typedef struct fold_check {
	lat_kind kind;
	lat_seq seq;
	int has_thresholds;
	int thresholds[3];
	const char *fold;
	size_t fold_len;
} fold_check;

/* A JSON value's type for messages, "missing" for NULL. */
static const char *type_of(const json_t *v)
{
	return v ? sf_json_type_name(json_typeof(v)) : "missing";
}

static int read_keys(const json_t *body, sf_err *err)
{
	if (!json_is_object(body))
		return sf_err_set(err, SF_EINVAL,
				  "body: must be an object with fold, sequence and lattice (or "
				  "fold and level), not %s",
				  type_of(body));
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)body, key, v)
	{
		if (strcmp(key, "fold") && strcmp(key, "sequence") && strcmp(key, "lattice") &&
		    strcmp(key, "thresholds") && strcmp(key, "level")) {
			char q[SF_QUOTED_KEY];
			sf_quote_key(key, q);
			return sf_err_set(err, SF_EINVAL,
					  "body: unknown key \"%s\" (allowed: fold, sequence, "
					  "lattice, thresholds, level)",
					  q);
		}
	}
	return 0;
}

/* `path`: a string of 1..LAT_MAX_LEN letters H or P, into *out. */
static int read_sequence(const json_t *v, const char *path, lat_seq *out, sf_err *err)
{
	if (!json_is_string(v))
		return sf_err_set(err, SF_EINVAL,
				  "%s: must be a string of 1..%d letters H or P, not %s", path,
				  LAT_MAX_LEN, type_of(v));
	const char *text = json_string_value(v);
	size_t n = json_string_length(v);
	for (size_t i = 0; i < n; i++) {
		unsigned char u = (unsigned char)text[i];
		if (u == 'H' || u == 'P')
			continue;
		if (u > 0x20 && u < 0x7f && u != '\'')
			return sf_err_set(err, SF_EINVAL,
					  "%s[%zu]: '%c' is not a residue (allowed: H, P)", path, i,
					  text[i]);
		return sf_err_set(err, SF_EINVAL,
				  "%s[%zu]: byte 0x%02x is not a residue (allowed: H, P)", path, i,
				  u);
	}
	if (n < 1 || n > LAT_MAX_LEN)
		return sf_err_set(err, SF_EINVAL,
				  "%s: %zu residues is out of range (allowed: 1..%d)", path, n,
				  LAT_MAX_LEN);
	memset(out, 0, sizeof *out);
	out->len = (int)n;
	for (size_t i = 0; i < n; i++)
		out->h[i] = text[i] == 'H';
	return 0;
}

/* `path`: "square" or "cubic", into *out. */
static int read_lattice(const json_t *v, const char *path, lat_kind *out, sf_err *err)
{
	const char *name = json_string_value(v);
	if (name && strlen(name) == json_string_length(v)) {
		if (!strcmp(name, "square")) {
			*out = LAT_SQUARE;
			return 0;
		}
		if (!strcmp(name, "cubic")) {
			*out = LAT_CUBIC;
			return 0;
		}
	}
	if (name)
		return sf_err_set(err, SF_EINVAL,
				  "%s: unknown lattice \"%.40s\" (allowed: square, cubic)", path,
				  name);
	return sf_err_set(err, SF_EINVAL, "%s: must be \"square\" or \"cubic\", not %s", path,
			  type_of(v));
}

/* `path`: [one, two, three] (integers 1..LAT_MAX_SCORE, increasing) or null. */
static int read_thresholds(const json_t *v, const char *path, fold_check *c, sf_err *err)
{
	if (json_is_null(v)) {
		c->has_thresholds = 0;
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) != 3)
		return sf_err_set(err, SF_EINVAL,
				  "%s: must be [one, two, three], three HH-contact counts, or "
				  "null, not %s",
				  path,
				  json_is_array(v) ? "an array of another length" : type_of(v));
	for (size_t i = 0; i < 3; i++) {
		const json_t *t = json_array_get(v, i);
		json_int_t x = json_integer_value(t);
		if (!json_is_integer(t) || x < 1 || x > LAT_MAX_SCORE)
			return sf_err_set(err, SF_EINVAL,
					  "%s[%zu]: must be an integer 1..%d (HH contacts)", path,
					  i, LAT_MAX_SCORE);
		if (i > 0 && x <= c->thresholds[i - 1])
			return sf_err_set(err, SF_EINVAL,
					  "%s[%zu]: %lld must be above %s[%zu] (%d): more stars "
					  "need more contacts",
					  path, i, (long long)x, path, i - 1, c->thresholds[i - 1]);
		c->thresholds[i] = (int)x;
	}
	c->has_thresholds = 1;
	return 0;
}

/* `level`: a lattice level document; its puzzle and its stars. */
static int read_level(const json_t *level, fold_check *c, sf_err *err)
{
	if (!json_is_object(level))
		return sf_err_set(err, SF_EINVAL,
				  "level: must be an object, a lattice level as GET "
				  "/v1/levels/{id} answers it, not %s",
				  type_of(level));
	const json_t *kind = json_object_get(level, "kind");
	if (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "lattice"))) {
		const char *name = json_string_value(kind);
		return sf_err_set(err, SF_EINVAL, "level.kind: must be \"lattice\", not %s%.40s%s",
				  name ? "\"" : "", name ? name : type_of(kind), name ? "\"" : "");
	}
	const json_t *puzzle = json_object_get(level, "puzzle");
	if (!json_is_object(puzzle))
		return sf_err_set(err, SF_EINVAL,
				  "level.puzzle: must be the level's puzzle object, not %s",
				  type_of(puzzle));
	int rc = read_lattice(json_object_get(puzzle, "lattice"), "level.puzzle.lattice", &c->kind,
			      err);
	if (!rc)
		rc = read_sequence(json_object_get(puzzle, "sequence"), "level.puzzle.sequence",
				   &c->seq, err);
	if (rc)
		return rc;
	const json_t *stars = json_object_get(level, "stars");
	if (!stars)
		return sf_err_set(err, SF_EINVAL,
				  "level.stars: missing; send the whole level (as GET "
				  "/v1/levels/{id} answers it), or sequence, lattice and "
				  "thresholds instead of a level");
	if (!json_is_object(stars))
		return sf_err_set(err, SF_EINVAL, "level.stars: must be an object, not %s",
				  type_of(stars));
	const json_t *better = json_object_get(stars, "better");
	if (better && (!json_is_string(better) || strcmp(json_string_value(better), "higher")))
		return sf_err_set(err, SF_EINVAL,
				  "level.stars.better: must be \"higher\" (a lattice level's "
				  "stars are on HH contacts)");
	const json_t *metric = json_object_get(stars, "metric");
	if (metric && (!json_is_string(metric) || strcmp(json_string_value(metric), "contacts")))
		return sf_err_set(err, SF_EINVAL,
				  "level.stars.metric: must be \"contacts\" (a lattice level's "
				  "stars are on HH contacts)");
	const json_t *t = json_object_get(stars, "thresholds");
	if (!t)
		return sf_err_set(err, SF_EINVAL,
				  "level.stars.thresholds: must be [one, two, three], three "
				  "HH-contact counts, or null, not missing");
	return read_thresholds(t, "level.stars.thresholds", c, err);
}

/* With a level, sequence and lattice may be sent too, and must be the level's. */
static int same_as_level(const json_t *body, const fold_check *c, sf_err *err)
{
	const json_t *v = json_object_get(body, "sequence");
	if (v) {
		lat_seq seq;
		int rc = read_sequence(v, "sequence", &seq, err);
		if (rc)
			return rc;
		if (seq.len != c->seq.len || memcmp(seq.h, c->seq.h, (size_t)seq.len)) {
			char mine[LAT_MAX_LEN + 1];
			lat_seq_format(&c->seq, mine);
			return sf_err_set(err, SF_EINVAL,
					  "sequence: %s is not the level's puzzle.sequence %s; "
					  "send the level's or leave sequence out",
					  json_string_value(v), mine);
		}
	}
	v = json_object_get(body, "lattice");
	if (v) {
		lat_kind kind;
		int rc = read_lattice(v, "lattice", &kind, err);
		if (rc)
			return rc;
		if (kind != c->kind)
			return sf_err_set(err, SF_EINVAL,
					  "lattice: %s is not the level's puzzle.lattice %s; send "
					  "the level's or leave lattice out",
					  lat_kind_name(kind), lat_kind_name(c->kind));
	}
	if (json_object_get(body, "thresholds"))
		return sf_err_set(err, SF_EINVAL,
				  "thresholds: send thresholds or level, not both (a level is "
				  "rated by its own stars.thresholds)");
	return 0;
}

static int read_body(const json_t *body, fold_check *c, sf_err *err)
{
	int rc = read_keys(body, err);
	if (rc)
		return rc;
	const json_t *level = json_object_get(body, "level");
	if (level) {
		rc = read_level(level, c, err);
		if (!rc)
			rc = same_as_level(body, c, err);
	} else {
		rc = read_sequence(json_object_get(body, "sequence"), "sequence", &c->seq, err);
		if (!rc)
			rc = read_lattice(json_object_get(body, "lattice"), "lattice", &c->kind,
					  err);
		const json_t *t = json_object_get(body, "thresholds");
		if (!rc && t)
			rc = read_thresholds(t, "thresholds", c, err);
	}
	if (rc)
		return rc;
	const json_t *fold = json_object_get(body, "fold");
	if (!json_is_string(fold))
		return sf_err_set(err, SF_EINVAL,
				  "fold: must be a string of moves, one letter per bond (R L U D, "
				  "and F B on the cubic lattice), not %s",
				  type_of(fold));
	c->fold = json_string_value(fold);
	c->fold_len = json_string_length(fold);
	return 0;
}

/* ---- the answer ---- */

static json_t *answer(const fold_check *c)
{
	lat_fold_verdict v;
	lat_fold_check(c->kind, &c->seq, c->fold, c->fold_len, &v);
	int valid = v.fault == LAT_FOLD_OK;
	char seq[LAT_MAX_LEN + 1];
	lat_seq_format(&c->seq, seq);
	int stars = valid && c->has_thresholds ? lat_check_stars(v.score, c->thresholds) : -1;
	json_t *thresholds = c->has_thresholds ? json_pack("[iii]", c->thresholds[0],
							   c->thresholds[1], c->thresholds[2])
					       : json_null();
	json_t *doc = json_pack(
		"{s:s, s:b, s:s, s:s, s:i, s:o, s:o, s:o, s:o}", "kind", "lattice", "valid", valid,
		"sequence", seq, "lattice", lat_kind_name(c->kind), "length", c->seq.len, "score",
		valid ? json_integer(v.score) : json_null(), "stars",
		stars >= 0 ? json_integer(stars) : json_null(), "thresholds", thresholds,
		"next_star_at",
		stars >= 0 && stars < 3 ? json_integer(c->thresholds[stars]) : json_null());
	if (!doc || valid)
		return doc;
	if (json_object_set_new(doc, "reason", json_string(v.reason)) ||
	    json_object_set_new(doc, "step", json_integer((json_int_t)v.step)) ||
	    json_object_set_new(doc, "fault", json_string(lat_fold_fault_name(v.fault))) ||
	    (v.fault == LAT_FOLD_COLLISION &&
	     json_object_set_new(doc, "collides_with", json_integer(v.collides_with)))) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

json_t *lat_check_json(const json_t *body, sf_err *err)
{
	fold_check c;
	memset(&c, 0, sizeof c);
	if (read_body(body, &c, err))
		return NULL;
	json_t *doc = answer(&c);
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing the check");
	return doc;
}
