/*
 * store_sqlite.h - internals shared by the two halves of the SQLite store:
 * store_sqlite.c (the connection, its statements, opening and migrating,
 * the evaluation cache), store_sqlite_jobs.c (jobs and levels) and
 * store_sqlite_resources.c (uploaded resources). Not an
 * interface: everything else goes through store.h.
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

/* The fixed statements; their text is in store_sqlite.c (STORE__SQL). */
enum store__stmt {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
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
	ST_RES_PUT,
	ST_RES_GET,
	ST_RES_LIST,
	ST__COUNT
};

/* The columns store__job_from_row() reads, in its order. */
#define STORE__JOB_COLS                                                                         \
	"id, seq, kind, params, seed, state, created_ms, started_ms, finished_ms, generation, " \
	"generations, best, error, level_ids"

/* Level-listing shapes kept prepared; the HTTP API uses a handful. */
#define STORE__LIST_CACHE 8

/* One prepared level listing: `shape` names it (see list_prep()), `used` is an LRU stamp. */
typedef struct store__list {
	char shape[STORE_MAX_FILTERS + 2];
	sqlite3_stmt *stmt;
	unsigned long used;
} store__list;

struct store {
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
};

/* The job_state names, in enum order, as stored in jobs.state. */
extern const char *const store__state_names[JOB_CANCELLED + 1];

/* The current time, Unix milliseconds (CLOCK_REALTIME). */
int64_t store__now_ms(void);

/*
 * Records in `err` what was being done (printf-style) and SQLite's message
 * for `rc`, and returns the SF_E* code for `rc`. Call it before a rollback.
 */
int store__db_err(store *s, int rc, sf_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Sets *st to the cached statement `id`, preparing it on first use.
 * Returns 0, or an SF_E* code after recording the failure in `err`.
 */
int store__prep(store *s, enum store__stmt id, sqlite3_stmt **st, sf_err *err);

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
int store__bind_err(store *s, sf_err *err, const char *what);

/*
 * A malloc'ed copy of text column `i` of the current row, or NULL for SQL
 * NULL; sets *oom (and returns NULL) when memory runs out.
 */
char *store__col_dup(sqlite3_stmt *st, int i, int *oom);

/* BEGIN IMMEDIATE; returns 0 or the reported SF_E* code. */
int store__begin(store *s, sf_err *err, const char *what);

/* COMMIT; on failure rolls back, reports and returns the code. */
int store__commit(store *s, sf_err *err, const char *what);

/* Rolls back the open transaction, if any, and returns `rc` (reported already). */
int store__fail(store *s, int rc);

/* Steps `st`, a statement that writes, to its end and releases it; 0 or the reported code. */
int store__step_write(store *s, sqlite3_stmt *st, sf_err *err, const char *what);

#endif
