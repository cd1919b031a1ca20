/*
 * store.h - the service's persistent state behind a narrow interface with
 * two back ends: SQLite (store_sqlite*.c), the embedded default, and
 * PostgreSQL (store_pg.c), for several nodes on one database. store.c
 * picks the back end at open and passes every call on to it through a
 * table of functions (store_impl.h, which says how to write a back end).
 *
 * Threads: a store handle belongs to one thread. The service's loop thread
 * owns the writer handle; a worker that needs to read (the evaluation cache)
 * opens its own handle with store_open(..., STORE_READONLY).
 *
 * Durability: every function that writes commits before it returns (SQLite
 * in WAL mode, synchronous=NORMAL is not enough for "durable once 202 is
 * sent", so the store uses synchronous=FULL), unless it runs inside a batch
 * (store_batch_begin(): group commit), which commits at its end.
 *
 * Errors: functions return 0 or a negative SF_E* code and fill `err`
 * (which may be NULL) with SQLite's message and what was being done; a
 * failed call has changed nothing in the database. Codes: SF_EINVAL for a
 * bad argument or a missing job, SF_ERANGE for a request the data cannot
 * satisfy (a job in the wrong state, a database of another schema
 * version), SF_ENOMEM, and SF_ESYS for I/O, locking (busy for more than
 * 5 s) and every other SQLite failure.
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
	/*
	 * Leases (store_claim_job()): `attempt` counts the job's claims (the
	 * fencing token), `lost` how often a lease of it expired
	 * (store_rescue_expired()); lease_owner and lease_until_ms (Unix ms)
	 * name the node running it and until when, "" and 0 when no lease is
	 * held (not running, or started with store_job_started());
	 * cancel_requested is set by store_request_cancel() on a running job.
	 * store_insert_job() sets all of them to 0 / "".
	 */
	int attempt;
	int lost;
	char lease_owner[64];
	int64_t lease_until_ms;
	int cancel_requested;
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
 * Opens a store. A `path` that starts with "postgresql://" or "postgres://"
 * is a libpq connection URI and opens the PostgreSQL back end
 * (store_pg.h, store_pg_open(): the same contract, its own migrations);
 * anything else is an SQLite database file, as follows.
 *
 * SQLite: opens (creating the file and its folder when missing, mode
 * READWRITE) the database at `path`, sets WAL, busy_timeout 5 s and
 * foreign keys, and applies the embedded migrations newer than the database's user_version,
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
 * of the embedded one (sf_migrations for SQLite, sf_pg_migrations for a
 * PostgreSQL URI), which then also sets the version the store counts as
 * the binary's. For tests: an older schema, a failing
 * step. Names must read "NNNN_name.sql" (after any folder), numbered 0001
 * upwards without gaps, in order; otherwise SF_EINVAL.
 */
struct sf_embedded;
store *store_open_with(const char *path, int mode, const struct sf_embedded *migrations,
		       size_t count, sf_err *err);

/* Closes `s`; NULL is a no-op. */
void store_close(store *s);

/*
 * The schema version of the open database (SQLite: PRAGMA user_version;
 * PostgreSQL: its schema_migrations table), as of the end of store_open;
 * -1 for NULL. store_latest_version() is the binary's SQLite schema
 * version (its last embedded SQLite migration);
 * store_backend_latest_version() is the version `s`'s back end counts as
 * the binary's (the last migration of the table it was opened with; -1
 * for NULL), which is what store_version(s) equals once `s` is fully
 * migrated, whatever its back end.
 */
int store_version(store *s);
int store_latest_version(void);
int store_backend_latest_version(store *s);

/* The back end of `s`: "sqlite" or "postgresql"; "none" for NULL. Never NULL. */
const char *store_backend(const store *s);

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
 * Leases and fencing: several nodes on one database (PostgreSQL) run the
 * queued jobs. A node takes a job with store_claim_job(), which hands it a
 * lease (lease_owner = the node, lease_until = now + lease_ms) and a new
 * attempt number; while it runs the job it renews the lease with
 * store_job_heartbeat() (every third of the lease, say), and it records
 * the outcome with one of the four outcome functions below, fenced: given
 * the store_fence of its claim, a write applies only while the job is
 * still running under that owner and attempt. A node whose lease expired
 * (it stalled, lost its network, died) and whose job another node rescued
 * (store_rescue_expired()) and claimed again thus records nothing: its
 * calls return STORE_LOST, a positive value with `err` untouched, and it
 * must drop the job and its result. "now" is the DATABASE's clock
 * (PostgreSQL: clock_timestamp() in Unix ms; SQLite, one node: this
 * process's CLOCK_REALTIME, as every other time of the store), never a
 * node's, so nodes whose clocks disagree agree on leases.
 */
typedef struct store_fence {
	char owner[64]; /* the node's name, 1..63 chars */
	int attempt;    /* the job's attempt counter as the claim set it */
} store_fence;

/*
 * Claims the oldest queued job (lowest seq) whose cancel was not requested:
 * it becomes running with attempt + 1, lease_owner = `owner` (1..63
 * chars), lease_until = now + lease_ms (1..86400000), started_ms = now,
 * and its progress (generation, generations, best) reset to 0, in one
 * statement (PostgreSQL: FOR UPDATE SKIP LOCKED), so that two nodes never
 * claim the same job. Returns 1 with *job filled as store_get_job() does
 * (attempt, lease_owner and lease_until_ms included; the strings *job held
 * before are not freed), 0 when nothing is claimable now (job untouched;
 * on PostgreSQL also when every queued job is locked by another node's
 * claim for the moment: try again later), or a negative code (SF_EINVAL
 * for a bad owner or lease_ms; *job untouched). Inside a batch it is a
 * savepoint like any write. The claim's fence is { job->lease_owner,
 * job->attempt }.
 */
int store_claim_job(store *s, const char *owner, int lease_ms, store_job *job, sf_err *err);

/*
 * Renews the lease of job `id` and records its progress, fenced by `f`
 * (required): when the job is running with lease_owner == f->owner and
 * attempt == f->attempt, sets lease_until = now + lease_ms (1..86400000)
 * and generation, generations and best, sets *cancel (when not NULL) to
 * whether a cancel was requested (store_request_cancel(): the node stops
 * the job and records it cancelled), and returns 0. Otherwise (another
 * owner or attempt, not running, final) changes nothing and returns
 * STORE_LOST (err untouched; *cancel 0). An unknown id is SF_EINVAL.
 */
int store_job_heartbeat(store *s, const char *id, const store_fence *f, int lease_ms,
			int generation, int generations, double best, int *cancel, sf_err *err);

/*
 * Job transitions; each stamps the matching time with the current clock
 * (started_ms, or finished_ms for the final states). Allowed moves:
 * started queued -> running; progress only while running; succeeded from
 * running; failed, cancelled and requeue from queued or running. A final
 * state never changes again: any other move is SF_ERANGE ("job ... is
 * cancelled, cannot become succeeded"), which the scheduler meets when a
 * cancel won the race against a finishing worker. An unknown id is
 * SF_EINVAL. store_job_started() sets no lease and no attempt (the
 * single-node start; store_claim_job() is the leased one).
 */
int store_job_started(store *s, const char *id, sf_err *err);
int store_job_progress(store *s, const char *id, int generation, int generations, double best,
		       sf_err *err);
/*
 * The four outcomes. Each takes a fence `f`:
 * - f == NULL: unfenced, the moves above (SF_ERANGE from a state the move
 *   does not start from).
 * - f != NULL: applies only when the job is running with lease_owner ==
 *   f->owner and attempt == f->attempt; otherwise (another owner or
 *   attempt, not running, final) nothing is written (no level either) and
 *   the return is STORE_LOST (err untouched). An unknown id is SF_EINVAL,
 *   an f->owner that is not 1..63 chars too.
 * Every outcome clears lease_owner and lease_until; attempt and lost stay
 * (attempt counts claims).
 *
 * Succeeded with its levels: inserts the levels not stored yet (with their
 * tags; a level id already stored keeps its first document and tags) and
 * sets the job's level_ids to the JSON array of levels[].id in order, in
 * one transaction.
 */
int store_job_succeeded(store *s, const char *id, const store_fence *f, const store_level *levels,
			int nlevels, sf_err *err);
int store_job_failed(store *s, const char *id, const store_fence *f, const char *error,
		     sf_err *err);
int store_job_cancelled(store *s, const char *id, const store_fence *f, sf_err *err);
/*
 * Back to queued (shutdown, restart): clears started_ms, the progress and
 * the lease. A job whose cancel was requested (store_request_cancel())
 * becomes cancelled instead (final, finished_ms now; the return is still
 * 0), since a queued job with a cancel pending is never claimed again.
 */
int store_job_requeue(store *s, const char *id, const store_fence *f, sf_err *err);

/* One job store_rescue_expired() moved: its id, new state, attempt and lost counter. */
typedef struct store_rescued {
	char id[40];
	job_state state;
	int attempt;
	int lost;
	char kind[32]; /* the job's kind and seed, for the log line */
	uint64_t seed;
} store_rescued;

/*
 * Rescues the jobs whose node is gone: every running job with lease_until
 * < now (never one without a lease, as store_job_started() leaves it) gets
 * lost + 1 and then becomes, with its lease cleared: cancelled (final,
 * finished_ms now) when its cancel was requested; else failed (final,
 * finished_ms now, error "the job lost its node N times (its lease
 * expired each time); it is not retried", N = lost) when lost >= max_lost
 * (1..100); else queued again (started_ms and progress cleared, attempt
 * kept). At most `cap` (>= 0) jobs per call, oldest lease first, in one
 * statement (PostgreSQL: FOR UPDATE SKIP LOCKED), so that two nodes
 * rescuing at once rescue each job once; the rest wait for the next call.
 * Fills out[0..*n-1] (caller-provided, `cap` entries; may be NULL when cap
 * is 0), in no particular order, and returns 0; or a negative code, *n 0
 * and nothing changed.
 */
int store_rescue_expired(store *s, int max_lost, store_rescued *out, int cap, int *n,
			 sf_err *err);

/*
 * A cancel from any node (DELETE /v1/jobs/{id}), in one statement: a
 * queued job becomes cancelled (final, finished_ms now): returns 1 with
 * *state = JOB_CANCELLED; a running job gets cancel_requested (its owner
 * sees it at its next heartbeat, or a notification, and records the
 * cancel; store_rescue_expired() cancels it if the owner died): returns 1
 * with *state = JOB_RUNNING; a final job is left as it is: returns 0 with
 * *state = its state. An unknown id is SF_EINVAL. `state` may be NULL.
 */
int store_request_cancel(store *s, const char *id, job_state *state, sf_err *err);

/*
 * One progress event of a job (GET /v1/jobs/{id}/events) as the nodes share
 * it: its id (the generation number, >= 0) and its data (a JSON object as
 * compact text, kept byte for byte). The node running a job appends them;
 * a node whose client watches a job running elsewhere reads them.
 */
typedef struct store_event {
	int64_t id;
	char *data; /* malloc'ed in what store_job_events() returns; the caller's in append */
} store_event;

/*
 * Appends events[0..n-1] of job `id` (0 <= n <= 1000; ids need not be
 * contiguous), fenced like store_job_heartbeat(): only while the job is
 * running under `f` (else STORE_LOST, nothing written); f == NULL: unfenced
 * (tests). An event whose id the job has already stored keeps its first
 * data, so a rerun after a rescue, which reports the same generations, adds
 * nothing twice. Returns 0, STORE_LOST, SF_EINVAL (unknown job, bad
 * arguments: a NULL data, a negative id, n out of range), SF_ESYS. One
 * transaction (a savepoint inside a batch).
 *
 * Also: the first of two events with one id in the same call is the one
 * kept; a data that is not UTF-8 is a bad argument (SF_EINVAL, on both back
 * ends); n == 0 writes nothing but still answers for the job and the fence
 * (0, STORE_LOST or SF_EINVAL), so it checks a lease without renewing it.
 */
int store_append_job_events(store *s, const char *id, const store_fence *f,
			    const store_event *events, int n, sf_err *err);

/*
 * Reads the events of job `id` with id > `after`, oldest first, at most `cap`
 * (1..1000), into out[0..*n-1] (each data malloc'ed: free with
 * store_event_clear). An unknown job has none (0, *n = 0). Reads only: fine
 * on a READONLY handle.
 *
 * Also: `after` may be any value (-1: from the first event); on failure *n
 * is 0 and out[] owns nothing. A NULL id, out or n, or a cap out of range,
 * is SF_EINVAL.
 */
int store_job_events(store *s, const char *id, int64_t after, int cap, store_event *out, int *n,
		     sf_err *err);

/* Frees e->data and zeroes e; NULL is a no-op. */
void store_event_clear(store_event *e);

/*
 * Retention of job events: deletes the events of every job that finished
 * (succeeded, failed or cancelled) more than `age_ms` ms ago by the
 * database's clock (0..one year). A finished job's stream is its final
 * event alone (events.c), so its progress events serve only watchers still
 * catching up when it ended; the nodes call this now and then (sched.c).
 * Sets *deleted (may be NULL) to the events deleted. Returns 0, SF_EINVAL
 * (age out of range), SF_ESYS. One transaction (a savepoint in a batch).
 */
int store_prune_job_events(store *s, int64_t age_ms, int64_t *deleted, sf_err *err);

/*
 * At start: every job left queued or running (a previous process died or
 * stopped), oldest first, all set back to queued (as store_job_requeue()
 * does: leases cleared, and a job whose cancel was requested becomes
 * cancelled instead, and is not listed) in one transaction. Fills ids
 * (malloc'ed array of 40-byte ids the caller frees; NULL when *n is 0) and
 * *n. For SQLite's single-node start: on a database several nodes share
 * it would requeue the jobs the other nodes run (store_rescue_expired() is
 * the multi-node way).
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
 * put stores or replaces the entry, which becomes the most recently used.
 *
 * The cache is bounded (store_limit_evaluations()): it is least recently
 * used first that goes. "Used" is a logical clock kept in the database (the
 * table evaluation_cache), not a node's time: each entry put or touched
 * takes the clock's next tick, in the order given, so the order is the
 * same on every node and every machine. A get is a read and changes
 * nothing; the caller says which entries it used with
 * store_touch_evaluations(), in batches if it likes (the service touches
 * what its hits read, the searches at the end of a job).
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
 * Marks the entries keys[0..n-1] (their lattice and sequence; doc is not
 * read) used now, in that order, in one transaction; a key not in the
 * cache is passed over. All or nothing.
 */
int store_touch_evaluations(store *s, const store_evaluation *keys, size_t n, sf_err *err);

/*
 * Bounds the cache at `max` entries (>= 1; 0 removes the bound, the
 * default of a new handle) for every later put through this handle, and
 * evicts the least recently used entries above it now, in one transaction;
 * *evicted (may be NULL) receives how many. A put that takes the cache past
 * the bound evicts as many in its own transaction, its own new entries
 * last. On PostgreSQL the bound is the whole database's: every node should
 * be given the same one. SF_EINVAL for a negative max.
 */
int store_limit_evaluations(store *s, int64_t max, int64_t *evicted, sf_err *err);

/*
 * The cache's size now and the entries evicted so far, over the database's
 * life (every node's, on PostgreSQL). A read: fine on a READONLY handle.
 */
int store_evaluation_stats(store *s, int64_t *entries, int64_t *evictions, sf_err *err);

/*
 * Uploaded resources (core/kinds.h, sf_resource_kind: racetrack's
 * experience models are type "px_model"), keyed by (type, name).
 * store_put_resource() stores `body` (UTF-8 text without NUL, kept byte for
 * byte; a body that is not UTF-8 is SF_EINVAL on both back ends),
 * its `format` and `summary` (the kind's JSON summary of it as text, or
 * NULL) in one BEGIN IMMEDIATE transaction. Returns 0 when
 * stored; STORE_EXISTS (a positive value, err untouched) when that type
 * holds that name already, which is left as it was (resources are
 * immutable); or a negative code.
 */
enum { STORE_EXISTS = 1, STORE_LOST = 2 }; /* STORE_LOST: leases, above */
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
 * STORE_UNAVAILABLE (PostgreSQL only): the database cannot be reached: the
 * connection was lost and could not be made again, or the server said it
 * is shutting down or starting (SQLSTATE classes 08 and 57P). Unlike the
 * other two it is set on READONLY handles too, and reads fail meanwhile.
 * The next call that reconnects clears it (each call tries once).
 *
 * STORE_FULL and STORE_UNWRITABLE are sticky: only store_probe_write()
 * clears them, since a write that happens to fit (an update in place on a
 * full disk) says nothing of the next one. store_write_fault() returns it, and sets *msg (when not
 * NULL) to SQLite's message for it, owned by the store and valid until the
 * next call on `s`; "" when there is no fault.
 */
enum { STORE_OK = 0, STORE_FULL = 1, STORE_UNWRITABLE = 2, STORE_UNAVAILABLE = 3 };
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

/*
 * Batches: group commit. Outside a batch every function that writes is its
 * own transaction and durable (committed, fsync'ed) when it returns 0, so
 * each costs one commit. A thread that owns the writer handle (the store
 * thread) can instead run many writes, of any callers, as one transaction
 * and pay one commit for all of them:
 *
 *	store_batch_begin(s, &err);
 *	store_insert_job(s, ...);       each call keeps its own contract
 *	store_job_started(s, ...);
 *	store_batch_end(s, 1, &err);    one COMMIT: everything durable now
 *
 * store_batch_begin() opens the batch's transaction (SQLite: BEGIN
 * IMMEDIATE, so the write lock is taken here, waiting up to the busy
 * timeout; SF_ESYS when it cannot). Refused with SF_EINVAL, changing
 * nothing, on a READONLY handle or when a batch is already open (batches
 * do not nest).
 *
 * Inside a batch:
 * - Every function that writes keeps its all-or-nothing contract by
 *   running as a savepoint of the batch instead of a transaction of its
 *   own: released when the call succeeds, rolled back to when it fails. A
 *   call refused for its arguments or the data (SF_EINVAL: a duplicate job
 *   id, a reused Idempotency-Key; SF_ERANGE: a move the job's state does
 *   not allow; STORE_EXISTS; STORE_LOST) has changed nothing, and the batch goes on
 *   with the other calls' writes intact.
 * - Every read (store_get_job(), store_list_jobs(), ...) sees the batch's
 *   writes so far; other handles (READONLY readers, other processes or
 *   nodes) see none of them until the batch commits.
 * - A return of 0 means the write is part of the batch, not that it is
 *   durable: nothing in a batch is durable, nor visible elsewhere, until
 *   store_batch_end() commits it. Acknowledge a request only after that.
 * - A call that fails because the storage or the connection failed (a
 *   storage fault, store_write_fault() set: STORE_FULL, STORE_UNWRITABLE;
 *   or the transaction lost, as SQLite may do on SQLITE_FULL, IOERR or
 *   NOMEM, and PostgreSQL on a broken connection) ends the batch's useful
 *   life: the whole transaction is rolled back at once, every later call
 *   in the batch that writes fails with SF_ESYS and touches nothing ("the
 *   batch was rolled back after ..."; reads go on and see the database as
 *   it was before the batch), and store_batch_end() then returns SF_ESYS
 *   for commit != 0.
 *   A disk that fills half way through a batch thus loses the whole batch,
 *   never a part of it.
 * - store_probe_write() and store_simulate_fault() are refused with
 *   SF_EINVAL (they commit and change connection settings of their own);
 *   store_lock_exclusive() works (it touches no transaction).
 *
 * store_batch_end(s, commit, err) always ends the batch (SF_EINVAL, nothing
 * done, when none is open). commit != 0: COMMIT, after which every write
 * of the batch is durable, returning 0; when the COMMIT fails (the disk is
 * full, an I/O error) or the batch had been rolled back as above, nothing
 * of the batch was recorded (SQLite rolls the transaction back), the fault
 * state is set as for any failed write when the storage refused, and the
 * return is SF_ESYS with `err` saying why. commit == 0: ROLLBACK, nothing
 * of the batch recorded, returns 0.
 *
 * store_close() of a handle with an open batch rolls the batch back.
 * SQLite keeps synchronous=FULL: one fsync of the WAL per batch.
 */
int store_batch_begin(store *s, sf_err *err);
int store_batch_end(store *s, int commit, sf_err *err);

/*
 * One process per SQLite database: takes an exclusive, non-blocking lock
 * (flock(2) on a descriptor of its own, independent of SQLite's locks) on
 * the database file of the READWRITE handle `s`, held until store_close().
 * The service calls it right after opening its writer, so that a second
 * `starforge serve` on the same file stops at start instead of requeueing
 * and running again the jobs the first one runs. Returns 0 when held (a
 * second call on the same handle is a no-op), SF_ERANGE when another
 * process (or another handle) holds it, with a message that names the
 * file and says what to do ("database PATH is in use by another starforge
 * process; ..."), SF_EINVAL for a READONLY handle, SF_ESYS when the file
 * cannot be opened or locked. ":memory:" needs no lock (0). READONLY
 * handles of the same or other processes are not affected by the lock.
 *
 * PostgreSQL serves many nodes: its implementation returns 0 and does
 * nothing.
 */
int store_lock_exclusive(store *s, sf_err *err);

/*
 * Moves the WAL checkpoints of the READWRITE handle `s` off the thread
 * that writes. SQLite otherwise checkpoints inside the commit that takes
 * the WAL past 1 000 pages: that commit copies the WAL into the database
 * file and fsyncs it, milliseconds that the thread owning the writer (the
 * store thread, and every submission waiting on its batch) spends waiting.
 * After this call the handle never checkpoints itself: a commit that
 * leaves the WAL at STORE_CHECKPOINT_PAGES pages or more wakes a thread of
 * the store's own, with a connection of its own, which runs a PASSIVE
 * checkpoint (it never blocks a writer or a reader; commits go on while it
 * copies). store_close() stops the thread first (its last checkpoint
 * done), then closes the handle as before. Returns 0 (also when already
 * on, for ":memory:", and on PostgreSQL, whose server checkpoints by
 * itself), SF_EINVAL for a READONLY handle, SF_ESYS when the connection
 * or the thread cannot be had (the handle then checkpoints as before).
 */
#define STORE_CHECKPOINT_PAGES 1000
int store_checkpoint_in_background(store *s, sf_err *err);

/*
 * Checkpoints that store_checkpoint_in_background()'s thread has run on
 * `s` so far and that copied pages (for tests); 0 without one.
 */
unsigned long store_background_checkpoints(store *s);

#endif
