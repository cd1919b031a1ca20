/*
 * store.h - the service's persistent state behind a narrow interface, so a
 * second back end (PostgreSQL) can come later. store_sqlite.c is the
 * embedded default.
 *
 * Threads: a store handle belongs to one thread. The service's loop thread
 * owns the writer handle; a worker that needs to read (the evaluation cache)
 * opens its own handle with store_open(..., STORE_READONLY).
 *
 * Durability: every function that writes commits before it returns (SQLite
 * in WAL mode, synchronous=NORMAL is not enough for "durable once 202 is
 * sent", so the store uses synchronous=FULL). Errors: functions return 0 or
 * a negative SF_E* code and fill `err` (which may be NULL) with SQLite's
 * message and what was being done; a failed call has changed nothing in
 * the database. Codes: SF_EINVAL for a bad argument or a missing job,
 * SF_ERANGE for a request the data cannot satisfy (a job in the wrong
 * state, a database of another schema version), SF_ENOMEM, and SF_ESYS for
 * I/O, locking (busy for more than 5 s) and every other SQLite failure.
 *
 * Output structs and arrays (store_job, docs[]) are overwritten without
 * freeing what they held before; the caller owns what they receive.
 */
#ifndef SF_STORE_H
#define SF_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/err.h"

typedef struct store store;

enum { STORE_READWRITE = 0, STORE_READONLY = 1 };

/* The most tags one level carries and the most filters one listing takes. */
enum { STORE_MAX_TAGS = 16, STORE_MAX_FILTERS = 8 };

typedef enum job_state {
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_SUCCEEDED,
	JOB_FAILED,
	JOB_CANCELLED,
} job_state;

/* "queued", "running", ...; job_state_parse returns -1 for an unknown name. */
const char *job_state_name(job_state s);
int job_state_parse(const char *name);

/*
 * A job row. Strings are owned by the row (malloc'ed); free with
 * store_job_clear().
 */
typedef struct store_job {
	char id[40]; /* "job_" + 32 hex */
	int64_t seq; /* insertion order, for paging (newest first) */
	char *kind;
	char *params; /* the request's params, JSON text (normalised by the kind) */
	uint64_t seed;
	job_state state;
	int64_t created_ms, started_ms, finished_ms; /* Unix ms; 0 when not yet */
	int generation, generations;                 /* last progress reported */
	double best;                                 /* best fitness so far */
	char *error;                                 /* when failed, else NULL */
	char *level_ids; /* when succeeded: JSON array text, else NULL */
} store_job;

/* A level row: the document and the values clients filter on. */
typedef struct store_level {
	const char *id;
	const char *kind;
	const char *doc; /* the level document, JSON text */
	/*
	 * Filter tags, kind-specific (lattice: "lattice", "length",
	 * "distinct_scores"); ntags in 0..STORE_MAX_TAGS, names distinct within
	 * a level. A tag has a text, a number, or both: a text tag has
	 * tag_text; a numeric tag has tag_text NULL and tag_num; a tag with
	 * tag_text and tag_has_num set has both (a number written as text, so
	 * that a text filter and a min filter each find it).
	 */
	int ntags;
	const char *tag_name[STORE_MAX_TAGS];
	const char *tag_text[STORE_MAX_TAGS]; /* NULL for a numeric tag */
	double tag_num[STORE_MAX_TAGS];
	unsigned char tag_has_num[STORE_MAX_TAGS]; /* tag_num counts despite tag_text */
} store_level;

/*
 * One filter of store_list_levels(): the level has a tag `name` whose text
 * equals `text`, or (has_min) whose number is >= `min`. Exactly one of the
 * two must be given; a text filter never matches a tag without a text and
 * a min filter never matches a tag without a number.
 */
typedef struct store_filter {
	const char *name;
	const char *text; /* equality on the text value, or NULL */
	int has_min;
	double min; /* numeric value >= min */
} store_filter;

/*
 * Opens (creating the file and its folder when missing, mode READWRITE) the
 * database at `path`, sets WAL, busy_timeout 5 s and foreign keys, and
 * applies the embedded migrations newer than the database's user_version,
 * each in its own BEGIN IMMEDIATE transaction. Refuses (SF_ERANGE) a
 * database newer than the binary's last migration. READONLY opens an
 * existing, migrated database for reading only, and refuses (SF_ERANGE)
 * one whose version is not the binary's. A failing migration is rolled
 * back whole and named in the message. Returns NULL and sets `err` on
 * failure. ":memory:" opens a private in-memory database (no WAL).
 */
store *store_open(const char *path, int mode, sf_err *err);

/*
 * store_open() with the migration table `migrations[0..count-1]` in place
 * of the embedded one (sf_migrations), which then also sets the version
 * the store counts as the binary's. For tests: an older schema, a failing
 * step. Names must read "NNNN_name.sql" (after any folder), numbered 0001
 * upwards without gaps, in order; otherwise SF_EINVAL.
 */
struct sf_embedded;
store *store_open_with(const char *path, int mode, const struct sf_embedded *migrations,
		       size_t count, sf_err *err);

/* Closes `s`; NULL is a no-op. */
void store_close(store *s);

/*
 * The schema version of the open database (PRAGMA user_version, as of the
 * end of store_open) and of the binary (its last embedded migration).
 */
int store_version(store *s);
int store_latest_version(void);

/*
 * Inserts a new queued job from job->id (1..39 chars), kind, params and
 * seed; sets job->seq, created_ms (now), state (queued) and zeroes the
 * other times and progress (error and level_ids are ignored). When
 * `idem_key` is not NULL, the key is recorded with `request_hash` (hex
 * SHA-256 of the request) in the same transaction; if the key already
 * exists: with the same hash, `*existing` is set to 1 and `job` is filled
 * with the earlier job (nothing inserted; the strings `job` held are freed
 * first, as store_job_clear() would); with another hash, returns SF_EINVAL
 * ("Idempotency-Key reused with a different body"). `existing` may be NULL;
 * otherwise it is 0 unless an earlier job was returned. A job id already
 * in use is SF_EINVAL.
 */
int store_insert_job(store *s, store_job *job, const char *idem_key, const char *request_hash,
		     int *existing, sf_err *err);

/*
 * Fills `job` with the job `id`; returns 1 when found, 0 when not (job
 * untouched), or a negative code.
 */
int store_get_job(store *s, const char *id, store_job *job, sf_err *err);

/*
 * Lists jobs newest first: those with seq < `before` (0: from the newest),
 * optionally only `state` (-1: any) and `kind` (NULL: any), at most `limit`
 * (>= 0). Fills jobs[0..*n-1] (caller-provided, `limit` entries; clear each
 * with store_job_clear()). The next page is `before` = jobs[*n-1].seq.
 */
int store_list_jobs(store *s, int state, const char *kind, int64_t before, int limit,
		    store_job *jobs, int *n, sf_err *err);

/*
 * Job transitions; each stamps the matching time with the current clock
 * (started_ms, or finished_ms for the final states). Allowed moves:
 * started queued -> running; progress only while running; succeeded from
 * running; failed, cancelled and requeue from queued or running. A final
 * state never changes again: any other move is SF_ERANGE ("job ... is
 * cancelled, cannot become succeeded"), which the scheduler meets when a
 * cancel won the race against a finishing worker. An unknown id is
 * SF_EINVAL.
 */
int store_job_started(store *s, const char *id, sf_err *err);
int store_job_progress(store *s, const char *id, int generation, int generations, double best,
		       sf_err *err);
/*
 * Succeeded with its levels: inserts the levels not stored yet (with their
 * tags; a level id already stored keeps its first document and tags) and
 * sets the job's level_ids to the JSON array of levels[].id in order, in
 * one transaction.
 */
int store_job_succeeded(store *s, const char *id, const store_level *levels, int nlevels,
			sf_err *err);
int store_job_failed(store *s, const char *id, const char *error, sf_err *err);
int store_job_cancelled(store *s, const char *id, sf_err *err);
/* Back to queued (shutdown, restart): clears started_ms and progress. */
int store_job_requeue(store *s, const char *id, sf_err *err);

/*
 * At start: every job left queued or running (a previous process died or
 * stopped), oldest first, all set back to queued (as store_job_requeue()
 * does) in one transaction. Fills ids (malloc'ed array of 40-byte ids the
 * caller frees; NULL when *n is 0) and *n.
 */
int store_pending_jobs(store *s, char (**ids)[40], size_t *n, sf_err *err);

/* Counts jobs per state: counts[JOB_QUEUED..JOB_CANCELLED]. */
int store_count_jobs(store *s, int64_t counts[5], sf_err *err);

/*
 * Sets *doc to the level document `id` (malloc'ed text the caller frees),
 * or to NULL when there is none; returns 0 in both cases, or a negative
 * code (then *doc is NULL).
 */
int store_get_level(store *s, const char *id, char **doc, sf_err *err);

/*
 * Lists level documents newest first with seq < `before` (0: from the
 * newest), of `kind` (NULL: any), matching every filter (AND; nfilters in
 * 0..STORE_MAX_FILTERS). Fills docs[] with malloc'ed texts (caller frees)
 * and seqs[] (may be NULL) with their seq; *n <= limit.
 */
int store_list_levels(store *s, const char *kind, const store_filter *filters, int nfilters,
		      int64_t before, int limit, char **docs, int64_t *seqs, int *n, sf_err *err);

/*
 * The evaluation cache, keyed by (lattice, sequence): the evaluation's JSON
 * text. get sets *doc as store_get_level() does (NULL on a miss, return 0);
 * put stores or replaces the entry.
 */
int store_get_evaluation(store *s, const char *lattice, const char *sequence, char **doc,
			 sf_err *err);
int store_put_evaluation(store *s, const char *lattice, const char *sequence, const char *doc,
			 sf_err *err);

/* One entry of store_put_evaluations(). */
typedef struct store_evaluation {
	const char *lattice, *sequence, *doc;
} store_evaluation;

/*
 * Stores (or replaces) evals[0..n-1] in one transaction: a search's new
 * evaluations cost one commit, not one each. All or nothing.
 */
int store_put_evaluations(store *s, const store_evaluation *evals, size_t n, sf_err *err);

/*
 * Uploaded resources (core/kinds.h, sf_resource_kind: racetrack's
 * experience models are type "px_model"), keyed by (type, name).
 * store_put_resource() stores `body` (text without NUL, kept byte for byte),
 * its `format` and `summary` (the kind's JSON summary of it as text, or
 * NULL) in one BEGIN IMMEDIATE transaction. Returns 0 when
 * stored; STORE_EXISTS (a positive value, err untouched) when that type
 * holds that name already, which is left as it was (resources are
 * immutable); or a negative code.
 */
enum { STORE_EXISTS = 1 };
int store_put_resource(store *s, const char *type, const char *name, const char *format,
		       const char *body, const char *summary, sf_err *err);

/*
 * Sets *format and *body to malloc'ed copies (the caller frees both) of the
 * resource (`type`, `name`), or both to NULL when there is none; returns 0
 * in both cases, or a negative code (both NULL then). Reads only: fine on a
 * READONLY handle.
 */
int store_get_resource(store *s, const char *type, const char *name, char **format, char **body,
		       sf_err *err);

/*
 * One row of store_list_resources(). Strings are owned by the row
 * (malloc'ed); free with store_resource_clear().
 */
typedef struct store_resource {
	int64_t seq; /* upload order, for paging (newest first) */
	char *name;
	char *format;
	char *summary;      /* as stored with it, or NULL for a resource stored without one */
	char *body;         /* only when summary is NULL (to compute it), else NULL */
	int64_t created_ms; /* Unix ms */
} store_resource;

/*
 * Lists the resources of `type` newest first: those with seq < `before`
 * (0: from the newest), at most `limit` (>= 0). Fills out[0..*n-1]
 * (caller-provided, `limit` entries; clear each with
 * store_resource_clear()). The next page is `before` = out[*n-1].seq.
 * Reads only. On failure *n is 0 and nothing needs clearing.
 */
int store_list_resources(store *s, const char *type, int64_t before, int limit, store_resource *out,
			 int *n, sf_err *err);

/* Frees the strings of `res` and zeroes it; NULL is a no-op. */
void store_resource_clear(store_resource *res);

/* Frees the strings of `job` and zeroes it. */
void store_job_clear(store_job *job);

/*
 * Storage faults (docs/RELIABILITY.md, "Faults"). A call on a READWRITE
 * handle that fails because the storage refuses to write returns SF_ESYS
 * like any other I/O failure, and also puts the store in a fault state:
 * STORE_FULL when the disk or the database's page limit is full
 * (SQLITE_FULL), STORE_UNWRITABLE when the file or its file system is
 * read-only or failing (SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN,
 * SQLITE_CORRUPT, SQLITE_NOTADB). A lock held too long (SQLITE_BUSY) is not
 * a fault. Reads keep working in either state.
 *
 * The state is sticky: only store_probe_write() clears it, since a write
 * that happens to fit (an update in place on a full disk) says nothing of
 * the next one. store_write_fault() returns it, and sets *msg (when not
 * NULL) to SQLite's message for it, owned by the store and valid until the
 * next call on `s`; "" when there is no fault.
 */
enum { STORE_OK = 0, STORE_FULL = 1, STORE_UNWRITABLE = 2 };
int store_write_fault(const store *s, const char **msg);

/*
 * Checks that the store can take writes again: commits a change that
 * changes nothing (the schema version rewritten with its own value, which
 * still goes through the journal and fsync), then checks for room: the
 * database below its page limit (PRAGMA max_page_count) and at least
 * STORE_MIN_FREE_BYTES free on its file system. Returns 0 and clears the
 * fault state, or SF_ESYS with the fault state set (STORE_FULL when there
 * is no room) and `err` saying why.
 */
#define STORE_MIN_FREE_BYTES (1024 * 1024)
int store_probe_write(store *s, sf_err *err);

/*
 * Test seam: simulates a storage fault on a READWRITE handle, with SQLite's
 * own limits, so that every layer above sees the codes and messages a real
 * fault gives. STORE_FULL caps the database at its current size (PRAGMA
 * max_page_count, which SQLite clamps to the page count): a write that
 * needs a new page fails with SQLITE_FULL, "database or disk is full".
 * STORE_UNWRITABLE makes the connection refuse every write (PRAGMA
 * query_only): SQLITE_READONLY, "attempt to write a readonly database".
 * STORE_OK lifts both. Returns 0 or SF_EINVAL (a READONLY handle, an
 * unknown fault).
 *
 * A READWRITE store opened while the environment variable
 * STARFORGE_TEST_STORAGE_FAULT names a file reads that file before every
 * write transaction: "full" or "readonly" (a trailing newline allowed)
 * simulates that fault, anything else (or no file) lifts it. That is how
 * the integration tests fill the disk of a running server and free it
 * again; it is a test knob, not an operations feature.
 */
int store_simulate_fault(store *s, int fault, sf_err *err);

#endif
