/*
 * check.h - the lattice kind's check operation (sf_kind.check, behind
 * POST /v1/lattice/check): is a player's fold a conformation of the chain,
 * how many HH contacts it makes, and how many stars they earn.
 *
 * A fold is written as the service writes every fold (an evaluation's
 * examples, a level's best_fold and band_folds): one letter per bond in
 * absolute directions, R L U D (+x -x +y -y) and, on the cubic lattice
 * only, F B (+z -z); a chain of n residues has n - 1 bonds. Any
 * orientation is accepted: the score does not change under the lattice's
 * rotations and reflections, so a player need not start with R as the
 * enumerator's symmetry-reduced examples do.
 *
 * Score: the number of HH contacts, pairs of H residues on neighbouring
 * sites that are not consecutive in the chain; the number the enumerator
 * counts, the index of an evaluation's histogram and the unit of a level's
 * thresholds. It is >= 0 and higher is better (the HP model's energy is its
 * negative). Stars: one per threshold [one, two, three] the score is at or
 * above.
 *
 * Body: {"fold", "sequence", "lattice", "thresholds"} or {"fold", "level"}
 * (the level document as GET /v1/levels/{id} answers it: the chain comes
 * from its puzzle, the thresholds from its stars; sequence and lattice may
 * be sent too and must then be the level's). thresholds are optional
 * ([one, two, three] or null; without them stars is null).
 *
 * Refusals. A body the check cannot read as a question about a fold (not
 * an object, an unknown key, a missing or mistyped field, a sequence or
 * lattice or threshold or level it cannot use) is SF_EINVAL, whose
 * message starts with the JSON path (422 invalid-check). Any string in
 * "fold" gets an answer: a string that is not a conformation of the chain
 * (a letter that is no move on the lattice, a move onto a site already
 * taken, too few or too many moves) is a player's bad attempt, answered
 * with "valid": false and the first bad move (docs/lattice-search.md,
 * "Checking a fold", argues the split).
 *
 * Answer: kind, valid, sequence, lattice, length, score (null when not
 * valid), stars (null when not valid or without thresholds), thresholds,
 * next_star_at; when not valid also reason, step (the index in fold of the
 * first bad move, or the fold's length when moves are missing), fault
 * ("bad_move", "collision", "missing_move", "extra_move") and, for a
 * collision, collides_with (the residue already on the site). Residues and
 * moves are numbered from 0: fold[k] places residue k + 1.
 * See schema/lattice/check-result.schema.json.
 */
#ifndef SF_LAT_CHECK_H
#define SF_LAT_CHECK_H

#include <jansson.h>
#include <stddef.h>

#include "../err.h"
#include "lattice.h"

typedef enum lat_fold_fault {
	LAT_FOLD_OK,
	LAT_FOLD_BAD_MOVE,  /* a letter that is no move on this lattice */
	LAT_FOLD_COLLISION, /* a move onto a site an earlier residue holds */
	LAT_FOLD_MISSING,   /* fewer moves than bonds */
	LAT_FOLD_EXTRA,     /* more moves than bonds */
} lat_fold_fault;

typedef struct lat_fold_verdict {
	lat_fold_fault fault;
	int score;         /* HH contacts; -1 unless fault is LAT_FOLD_OK */
	size_t step;       /* the first bad move's index in the fold (MISSING: the fold's length) */
	int collides_with; /* COLLISION: the residue on the site; -1 otherwise */
	char reason[200];  /* "" when fault is LAT_FOLD_OK, else names step and fault */
} lat_fold_verdict;

/*
 * Walks `fold` (`len` bytes, any bytes, NUL included) for the chain `seq`
 * on `kind`, move by move, and stops at the first bad one: a byte that is
 * not a move letter of the lattice, a move onto an occupied site, a move
 * past the last bond; a fold that ends early is missing its next move.
 * Fills *out; out->fault is LAT_FOLD_OK exactly when the fold is a
 * self-avoiding walk of seq->len - 1 moves, and out->score is then its HH
 * contacts. Pure; reads at most seq->len bytes of fold.
 */
void lat_fold_check(lat_kind kind, const lat_seq *seq, const char *fold, size_t len,
		    lat_fold_verdict *out);

/* The name of a fault as the answer writes it ("collision"); "" for LAT_FOLD_OK. */
const char *lat_fold_fault_name(lat_fold_fault fault);

/*
 * The stars `score` HH contacts earn under thresholds [one, two, three]
 * (higher is better): how many thresholds it is at or above, 0..3.
 */
int lat_check_stars(int score, const int thresholds[3]);

/*
 * The check operation: reads the body above, checks the fold and rates
 * it. A new object, or NULL with SF_EINVAL and a message starting with the
 * JSON path of the first problem ("sequence: ...", "level.stars.thresholds[1]:
 * ..."), or SF_ENOMEM. Pure; thread-safe.
 */
json_t *lat_check_json(const json_t *body, sf_err *err);

#endif
