/*
 * store_sqlite.h - internals shared by the files of the SQLite store:
 * store_sqlite.c (statements, helpers, transactions and batches, faults,
 * the evaluation cache, the table of functions), store_sqlite_open.c
 * (opening, migrating, closing), store_sqlite_jobs.c (jobs and levels),
 * store_sqlite_resources.c (uploaded resources) and store_sqlite_lock.c
 * (the one-process lock). Not an interface: everything else goes through
 * store.h, which reaches this back end through store_sqlite_ops
 * (store_impl.h).
 *
 * The helpers follow one pattern: a statement comes from store__prep(),
 * is bound with store__bind_text() and the sqlite3_bind_* functions, is
 * stepped, and is always released with store__done(). Errors are recorded
 * with store__db_err() before any rollback (which would replace SQLite's
 * message), and a transaction that fails is ended with store__fail().
 */
#ifndef SF_STORE_SQLITE_H
#define SF_STORE_SQLITE_H

#include <sqlite3.h>
#include <stdint.h>

#include "store.h"
#include "store_impl.h"

/* The fixed statements; their text is in store_sqlite.c (STORE__SQL). */
enum store__stmt {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SAVEPOINT, /* a call inside a batch: its savepoint, released or rolled back to */
	ST_RELEASE,
	ST_ROLLBACK_TO,
	ST_VERSION,
	ST_JOB_INSERT,
	ST_JOB_GET,
	ST_JOBS_ANY, /* the four job listings: any, by state, by kind, by both */
	ST_JOBS_STATE,
	ST_JOBS_KIND,
	ST_JOBS_STATE_KIND,
	ST_JOB_STATE,
	ST_JOB_START,
	ST_JOB_PROGRESS,
	ST_JOB_SUCCEED,
	ST_JOB_FAIL,
	ST_JOB_CANCEL,
	ST_JOB_REQUEUE,
	ST_JOB_EXISTS,
	ST_JOB_CLAIM, /* leases (store.h, store_claim_job()) */
	ST_JOB_HEARTBEAT,
	ST_JOB_RESCUE,
	ST_JOB_REQUEST_CANCEL,
	ST_PENDING_CANCEL,
	ST_IDEM_GET,
	ST_IDEM_INSERT,
	ST_PENDING,
	ST_PENDING_REQUEUE,
	ST_COUNT_JOBS,
	ST_LEVEL_INSERT,
	ST_TAG_INSERT,
	ST_LEVEL_GET,
	ST_EVAL_GET,
	ST_EVAL_PUT,
	ST_EVAL_REPLACE,
	ST_EVAL_TOUCH,
	ST_EVAL_STATS,
	ST_EVAL_COUNT,
	ST_EVAL_EVICT,
	ST_RES_PUT,
	ST_RES_GET,
	ST_RES_LIST,
	ST_EVENT_INSERT, /* job events (store.h, store_append_job_events()) */
	ST_EVENTS_GET,
	ST_EVENTS_PRUNE,
	ST__COUNT
};

/* The columns store__job_from_row() reads, in its order. */
#define STORE__JOB_COLS                                                                         \
	"id, seq, kind, params, seed, state, created_ms, started_ms, finished_ms, generation, " \
	"generations, best, error, level_ids, attempt, lost, lease_owner, lease_until, "       \
	"cancel_requested"

/* Level-listing shapes kept prepared; the HTTP API uses a handful. */
#define STORE__LIST_CACHE 8

/* One prepared level listing: `shape` names it (see list_prep()), `used` is an LRU stamp. */
typedef struct store__list {
	char shape[STORE_MAX_FILTERS + 2];
	sqlite3_stmt *stmt;
	unsigned long used;
} store__list;

/* The SQLite handle: store_impl.h's header first, then the connection. */
typedef struct sq_store {
	struct store base;
	sqlite3 *db;
	int readonly;
	int version; /* user_version once opened and migrated */
	int latest;  /* the last version of the migration table it was opened with */
	sqlite3_stmt *stmt[ST__COUNT];
	store__list lists[STORE__LIST_CACHE];
	unsigned long tick;
	/* Storage faults (store.h): the state, SQLite's message for it. */
	int fault;
	char fault_msg[256];
	/* The test seam: the fault simulated now, the file that sets it
	 * (malloc'ed; NULL when the seam is off), the page limit to restore. */
	int simulated;
	char *fault_file;
	long long max_pages;
	/*
	 * Batches (store.h): `batch` while one is open; `call` while a call's
	 * savepoint inside it is open; `doomed` once the storage refused a
	 * write of the batch (store__db_err()); `lost` once the batch's
	 * transaction is rolled back for that, or SQLite ended it; lost_msg
	 * says why.
	 */
	int batch, call, doomed, lost;
	char lost_msg[256];
	/*
	 * The one-process lock (store_sqlite_lock.c): the path as given at open
	 * (malloc'ed), the descriptor the flock is taken on (-1: none yet; kept
	 * open until store_close() even when refused, see there), and whether
	 * the lock is held.
	 */
	char *path;
	int lock_fd, locked;
	/* store_sqlite_ckpt.c: the checkpoint thread, NULL until started. */
	struct sq_ckpt *ckpt;
} sq_store;

/* The table store.c calls through (store_impl.h). */
extern const struct store_ops store_sqlite_ops;

/*
 * Opens the SQLite database `path` with the migration table
 * migrations[0..count-1]: store_open_with() of store.h for a path that is
 * not a PostgreSQL URI, with the same contract.
 */
store *store_sqlite_open(const char *path, int mode, const struct sf_embedded *migrations,
			 size_t count, sf_err *err);

/*
 * The members of store_sqlite_ops defined outside store_sqlite.c; each is
 * the store.h function of the same name less "sqlite_", for a non-NULL `s`
 * that is an sq_store. In store_sqlite_open.c: */
void store_sqlite_close(store *s);
int store_sqlite_version(store *s);
int store_sqlite_latest_version(store *s);
/* In store_sqlite_jobs.c and store_sqlite_resources.c: */
int store_sqlite_insert_job(store *s, store_job *job, const char *idem_key,
			    const char *request_hash, int *existing, sf_err *err);
int store_sqlite_get_job(store *s, const char *id, store_job *job, sf_err *err);
int store_sqlite_list_jobs(store *s, int state, const char *kind, int64_t before, int limit,
			   store_job *jobs, int *n, sf_err *err);
int store_sqlite_job_started(store *s, const char *id, sf_err *err);
int store_sqlite_job_progress(store *s, const char *id, int generation, int generations,
			      double best, sf_err *err);
int store_sqlite_job_succeeded(store *s, const char *id, const store_fence *f,
			       const store_level *levels, int nlevels, sf_err *err);
int store_sqlite_job_failed(store *s, const char *id, const store_fence *f, const char *error,
			    sf_err *err);
int store_sqlite_job_cancelled(store *s, const char *id, const store_fence *f, sf_err *err);
int store_sqlite_job_requeue(store *s, const char *id, const store_fence *f, sf_err *err);
int store_sqlite_claim_job(store *s, const char *owner, int lease_ms, store_job *job, sf_err *err);
int store_sqlite_job_heartbeat(store *s, const char *id, const store_fence *f, int lease_ms,
			       int generation, int generations, double best, int *cancel,
			       sf_err *err);
int store_sqlite_prune_job_events(store *s, int64_t age_ms, int64_t *deleted, sf_err *err);
int store_sqlite_rescue_expired(store *s, int max_lost, store_rescued *out, int cap, int *n,
				sf_err *err);
int store_sqlite_request_cancel(store *s, const char *id, job_state *state, sf_err *err);
int store_sqlite_append_job_events(store *s, const char *id, const store_fence *f,
				   const store_event *events, int n, sf_err *err);
int store_sqlite_job_events(store *s, const char *id, int64_t after, int cap, store_event *out,
			    int *n, sf_err *err);
int store_sqlite_pending_jobs(store *s, char (**ids)[40], size_t *n, sf_err *err);
int store_sqlite_count_jobs(store *s, int64_t counts[5], sf_err *err);
int store_sqlite_get_level(store *s, const char *id, char **doc, sf_err *err);
int store_sqlite_list_levels(store *s, const char *kind, const store_filter *filters, int nfilters,
			     int64_t before, int limit, char **docs, int64_t *seqs, int *n,
			     sf_err *err);
int store_sqlite_put_resource(store *s, const char *type, const char *name, const char *format,
			      const char *body, const char *summary, sf_err *err);
int store_sqlite_get_resource(store *s, const char *type, const char *name, char **format,
			      char **body, sf_err *err);
int store_sqlite_list_resources(store *s, const char *type, int64_t before, int limit,
				store_resource *out, int *n, sf_err *err);
/* In store_sqlite_lock.c. */
int store_sqlite_lock_exclusive(store *s, sf_err *err);
/* store_sqlite_ckpt.c: WAL checkpoints on a thread of their own; stopped by close. */
int store_sqlite_checkpoint_in_background(store *s, sf_err *err);
unsigned long store_sqlite_background_checkpoints(store *s);
void store_sqlite_ckpt_stop(sq_store *s);

/* How long a statement waits for another connection's lock before SF_ESYS. */
#define STORE__BUSY_TIMEOUT_MS 5000

/* The SF_E* code for an SQLite result code. */
int store__code_of(int rc);

/* The current time, Unix milliseconds (CLOCK_REALTIME). */
int64_t store__now_ms(void);

/*
 * Records in `err` what was being done (printf-style) and SQLite's message
 * for `rc`, and returns the SF_E* code for `rc`. Call it before a rollback.
 */
int store__db_err(sq_store *s, int rc, sf_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Sets *st to the cached statement `id`, preparing it on first use.
 * Returns 0, or an SF_E* code after recording the failure in `err`.
 */
int store__prep(sq_store *s, enum store__stmt id, sqlite3_stmt **st, sf_err *err);

/*
 * Ends a use of `st` (NULL is a no-op): resets it, which ends its read of
 * the database, and clears the bindings, which point at callers' strings.
 */
void store__done(sqlite3_stmt *st);

/*
 * Binds `text` to parameter `i` without copying it (NULL binds SQL NULL);
 * store__done() drops the pointer. Returns an SQLite code.
 */
int store__bind_text(sqlite3_stmt *st, int i, const char *text);

/* After a failed bind: records the connection's error as store__db_err() does. */
int store__bind_err(sq_store *s, sf_err *err, const char *what);

/*
 * A malloc'ed copy of text column `i` of the current row, or NULL for SQL
 * NULL; sets *oom (and returns NULL) when memory runs out.
 */
char *store__col_dup(sqlite3_stmt *st, int i, int *oom);

/* BEGIN IMMEDIATE; returns 0 or the reported SF_E* code. */
int store__begin(sq_store *s, sf_err *err, const char *what);

/* COMMIT; on failure rolls back, reports and returns the code. */
int store__commit(sq_store *s, sf_err *err, const char *what);

/* Rolls back the open transaction, if any, and returns `rc` (reported already). */
int store__fail(sq_store *s, int rc);

/* Steps `st`, a statement that writes, to its end and releases it; 0 or the reported code. */
int store__step_write(sq_store *s, sqlite3_stmt *st, sf_err *err, const char *what);

#endif
