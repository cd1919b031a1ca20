/*
 * lattice.h - the HP lattice protein model: sequences, folds and the exact
 * enumeration of every conformation of a chain.
 *
 * A puzzle is a sequence of H (hydrophobic) and P (polar) residues. A
 * solution is a self-avoiding walk of the chain on the square or the simple
 * cubic lattice; its score is the number of HH contacts: pairs of H residues
 * on neighbouring sites that are not consecutive in the chain.
 *
 * Conformations are counted once up to the lattice's rotations and
 * reflections, as the paper does: the first bond points +x (R), the first
 * bond that turns points +y (U), and on the cubic lattice the first bond that
 * leaves the xy plane points +z (F). A fold is written one letter per bond in
 * absolute directions: R L U D (+x -x +y -y) and F B (+z -z).
 *
 * Two exact evaluation paths give identical results, examples included:
 *  - lat_enumerate(): depth-first enumeration with an occupancy grid and an
 *    incrementally kept contact count, split over threads by prefix
 *    (enumerate.c);
 *  - lat_db_*(): a per-length database of the distinct contact maps with
 *    their multiplicities, built once; a histogram is then one pass of
 *    popcounts over it (cmap.c). This is the path a search takes.
 * Both report, for every reachable score, the first conformation reaching it
 * in depth-first order (bond directions tried in the order R L U D F B), so
 * the examples are the same whatever the path and the thread count.
 *
 * Work budget: exact enumeration grows as ~2.64^n (square) and ~4.68^n
 * (cubic) in the number of bonds n. Every entry point first estimates the
 * number of conformations it would visit (lat_estimate(), from the published
 * walk counts) and refuses with SF_EBUDGET, naming estimate and limit, when
 * it exceeds the caller's budget. The defaults allow length 24 on the square
 * lattice (2.2e9 conformations) and 17 on the cubic lattice (2.1e9).
 */
#ifndef SF_LATTICE_H
#define SF_LATTICE_H

#include <stddef.h>
#include <stdint.h>

#include "../err.h"

/*
 * Longest chain any entry point accepts: the long-chain methods (estimate.h,
 * optimum.h) reach square 64; exact enumeration's budget refuses far sooner.
 */
#define LAT_MAX_LEN 64
/*
 * Bound on the score of any chain of LAT_MAX_LEN residues on either lattice:
 * on the cubic lattice an inner residue has at most 4 free neighbours and an
 * end 5, so at most (4 (L - 2) + 10) / 2 = 2 L + 1 contacts.
 */
#define LAT_MAX_SCORE (2 * LAT_MAX_LEN + 1)
/* Longest chain a contact-map database can hold (maps fit 128 bits). */
#define LAT_DB_MAX_LEN 22

/* Default work budget, in conformations, for one exact enumeration. */
#define LAT_DEFAULT_BUDGET 2.5e9
/* Default budget for building a contact-map database (square <= 20, cubic <= 14). */
#define LAT_DEFAULT_DB_BUDGET 5e7

typedef enum lat_kind {
	LAT_SQUARE = 2, /* the value is the dimension */
	LAT_CUBIC = 3,
} lat_kind;

typedef struct lat_seq {
	int len;                /* residues, 1..LAT_MAX_LEN */
	uint8_t h[LAT_MAX_LEN]; /* 1 for H, 0 for P */
} lat_seq;

/* The exact evaluation of one sequence. */
typedef struct lat_result {
	lat_kind lattice;
	int len;
	uint64_t conformations;           /* sum of hist[] */
	uint64_t hist[LAT_MAX_SCORE + 1]; /* conformations per score */
	int max_score;
	int distinct_scores; /* scores with hist[s] > 0 */
	/* For each reachable score, the first fold reaching it ("" otherwise). */
	char examples[LAT_MAX_SCORE + 1][LAT_MAX_LEN];
} lat_result;

typedef struct lat_opts {
	int threads;   /* worker threads, >= 1 */
	double budget; /* refuse when lat_estimate() exceeds this; <= 0: default */
} lat_opts;

/*
 * Parses a lattice name ("square" or "cubic"). Returns 0, or SF_EINVAL with
 * a message naming the allowed values.
 */
int lat_parse_kind(const char *name, lat_kind *out, sf_err *err);

/* "square" or "cubic". */
const char *lat_kind_name(lat_kind kind);

/*
 * Parses a sequence of 'H' and 'P' letters (upper case only) of length
 * 1..LAT_MAX_LEN. Returns 0, or SF_EINVAL naming the first bad character
 * and its position, or the length and the allowed range.
 */
int lat_seq_parse(const char *text, lat_seq *out, sf_err *err);

/* Writes the sequence as H/P letters to `buf` (at least len + 1 bytes). */
void lat_seq_format(const lat_seq *seq, char *buf);

/*
 * The number of symmetry-reduced conformations of a chain of `len` residues,
 * exact where the published walk counts reach (square n <= 30, cubic n <= 20
 * bonds, square reductions exact, cubic ones bounded above by c_n/24) and
 * extrapolated with the connective constant beyond. Used for budgets only.
 */
double lat_estimate(lat_kind kind, int len);

/*
 * Checks `len` against LAT_MAX_LEN and lat_estimate() against `budget`
 * (<= 0 selects LAT_DEFAULT_BUDGET). Returns 0, or SF_EBUDGET with a
 * message stating the estimate and the limit.
 */
int lat_check_budget(lat_kind kind, int len, double budget, sf_err *err);

/*
 * Enumerates every conformation of `seq` on `kind` exactly and fills `out`.
 * Runs opts->threads threads (the calling one included); the result does not
 * depend on the thread count. Returns 0, SF_EBUDGET when over budget,
 * SF_EINVAL for bad options, SF_ESYS when threads cannot be started.
 */
int lat_enumerate(lat_kind kind, const lat_seq *seq, const lat_opts *opts, lat_result *out,
		  sf_err *err);

/*
 * Scores a fold given as one direction letter per bond (len - 1 letters).
 * Returns the number of HH contacts (>= 0), or SF_EINVAL with a message
 * when the fold has the wrong length, a letter not on this lattice, or
 * visits a site twice (naming the bond).
 */
int lat_fold_score(lat_kind kind, const lat_seq *seq, const char *fold, sf_err *err);

/*
 * Fills max_score and distinct_scores of `res` from its histogram and sets
 * conformations to the histogram's sum. Shared by both evaluation paths.
 */
void lat_result_summarise(lat_result *res);

/* ---- contact-map database (cmap.c) ---- */

typedef struct lat_db lat_db;

/*
 * Builds the database of distinct contact maps of every conformation of a
 * chain of `len` residues (2..LAT_DB_MAX_LEN) on `kind`, with the number of
 * conformations per map and the first conformation (depth-first order) of
 * each. The database is canonical: the same for any thread count. opts->budget
 * <= 0 selects LAT_DEFAULT_DB_BUDGET. Returns NULL and sets `err` on failure
 * (SF_EINVAL, SF_EBUDGET, SF_ENOMEM, SF_ESYS). The caller owns the result and
 * frees it with lat_db_free(). A built database is read-only and may be used
 * by any number of threads at once.
 */
lat_db *lat_db_build(lat_kind kind, int len, const lat_opts *opts, sf_err *err);

/* Frees `db`; NULL is a no-op. */
void lat_db_free(lat_db *db);

lat_kind lat_db_kind(const lat_db *db);
int lat_db_len(const lat_db *db);
/* Distinct contact maps held. */
size_t lat_db_maps(const lat_db *db);
/* Conformations the maps stand for (the sum of multiplicities). */
uint64_t lat_db_conformations(const lat_db *db);
/* Bytes of heap memory the database holds. */
size_t lat_db_bytes(const lat_db *db);

/*
 * The score histogram of `seq` through the database: hist[0..LAT_MAX_SCORE]
 * is overwritten. `seq->len` must equal lat_db_len(). Returns the maximum
 * score (>= 0) or SF_EINVAL on a length mismatch. This is the hot path of a
 * search: one pass over the maps, no allocation.
 */
int lat_db_histogram(const lat_db *db, const lat_seq *seq, uint64_t hist[LAT_MAX_SCORE + 1]);

/*
 * The full evaluation of `seq` through the database, examples included;
 * identical to lat_enumerate() on the same sequence. Returns 0 or SF_EINVAL.
 */
int lat_db_evaluate(const lat_db *db, const lat_seq *seq, lat_result *out, sf_err *err);

#endif
