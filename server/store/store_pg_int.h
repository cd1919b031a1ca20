/*
 * store_pg_int.h - internals shared by the two halves of the PostgreSQL
 * store: store_pg.c (the connection, calls and batches, opening and
 * migrating, storage faults, the table of functions) and store_pg_jobs.c
 * (jobs, levels, the evaluation cache, uploaded resources). Not an
 * interface: everything else goes through store.h.
 *
 * The pattern every public call follows: store_pg__call_begin() (which
 * reconnects a lost connection, and inside a batch opens a savepoint),
 * statements through store_pg__run() / store_pg__run0(), then
 * store_pg__call_end() with the outcome, which commits, releases or rolls
 * back as the call's kind and the batch require.
 */
#ifndef SF_STORE_PG_INT_H
#define SF_STORE_PG_INT_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "store_impl.h"
#include "store_pg.h"

/* The database's clock, Unix milliseconds. */
#define NOW_MS "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

/* One PostgreSQL store: one libpq connection, used by one thread at a time. */
typedef struct store_pg {
	struct store base; /* first: the ops table (store_impl.h) */
	PGconn *conn;
	int readonly;
	int version; /* schema_migrations' max once opened and migrated */
	int latest;  /* the last version of the step table it was opened with */
	/* Storage faults (store.h): the state and the server's message for it. */
	int fault;
	char fault_msg[256];
	/* The test seam: the fault simulated now, the file that sets it (malloc'ed, or NULL). */
	int simulated;
	char *fault_file;
	/* Set by the notice receiver when a migration step ran a BEGIN of its own. */
	int nested_begin;
	/* Set by the notice receiver when the server ended the idle session (FATAL). */
	int session_ended;
	/* Set by db_err() when a failure was the storage's or the connection's. */
	int hard;
	/* The batch (store_batch_begin()): none, open, or rolled back after batch_msg. */
	int batch;
	char batch_msg[256];
	int savepoint; /* a call's savepoint is open in the batch */
} store_pg;

enum { BATCH_NONE, BATCH_OPEN, BATCH_DEAD };

/* What a public call does: reads, writes with one statement, writes with several. */
enum { CALL_READ, CALL_WRITE, CALL_WRITE_TX };

/*
 * Runs `sql` with the text parameters params[0..n-1] (NULL entries are SQL
 * NULL). Returns 0 with *out set to the result (the caller PQclear()s it),
 * or the reported SF_E* code with *out NULL. `failed`, when not NULL,
 * receives the failed result instead of it being cleared (the caller
 * clears it).
 */
int store_pg__run(store_pg *p, PGresult **out, PGresult **failed, sf_err *err, const char *what,
		  const char *sql, int n, const char *const *params);

/* store_pg__run() of a statement whose result is not needed. */
int store_pg__run0(store_pg *p, sf_err *err, const char *what, const char *sql, int n,
		   const char *const *params);

/* True when the failed result `res` is SQLSTATE `state`. */
int store_pg__is_state(const PGresult *res, const char *state);

/*
 * Starts a public call of `kind` (CALL_*): reconnects a lost connection;
 * inside a batch opens a savepoint (a batch rolled back refuses writes);
 * outside one, BEGIN for CALL_WRITE_TX. Returns 0 or the reported code,
 * with nothing left open.
 */
int store_pg__call_begin(store_pg *p, int kind, sf_err *err, const char *what);

/*
 * Ends a call begun with store_pg__call_begin() whose outcome is `rc` (0 or
 * positive: done; negative: failed and reported): commits or releases, or
 * rolls back (the whole batch when the storage or the connection failed).
 * Returns `rc`, or the code of a commit that failed.
 */
int store_pg__call_end(store_pg *p, int kind, int rc, sf_err *err, const char *what);

/* The value at (row, col): a malloc'ed copy (NULL for SQL NULL; *oom set when out of memory). */
char *store_pg__col_dup(const PGresult *res, int row, int col, int *oom);
/* The number at (row, col); 0 for SQL NULL. */
int64_t store_pg__col_i64(const PGresult *res, int row, int col);
double store_pg__col_f64(const PGresult *res, int row, int col);

/* A growing text: the array literals of batches. `oom` is set once memory runs out. */
typedef struct pg_text {
	char *s;
	size_t len, cap;
	int oom;
} pg_text;

/* Appends n bytes of s to t (sets t->oom instead when memory runs out). */
void store_pg__text_add(pg_text *t, const char *s, size_t n);
/*
 * Appends one element of an array literal ("{a,b}"): `value` in double
 * quotes with `"` and `\` escaped, or NULL (unquoted) for a NULL value.
 */
void store_pg__text_elem(pg_text *t, const char *value);
/* A double as the server reads it back exactly ("%.17g"). */
void store_pg__fmt_double(char *buf, size_t size, double v);

/* The calls of store_pg_jobs.c, one per member of struct store_ops (store_impl.h). */
int store_pg__insert_job(store *s, store_job *job, const char *idem_key, const char *request_hash,
			 int *existing, sf_err *err);
int store_pg__get_job(store *s, const char *id, store_job *job, sf_err *err);
int store_pg__list_jobs(store *s, int state, const char *kind, int64_t before, int limit,
			store_job *jobs, int *n, sf_err *err);
int store_pg__job_started(store *s, const char *id, sf_err *err);
int store_pg__job_progress(store *s, const char *id, int generation, int generations, double best,
			   sf_err *err);
int store_pg__job_succeeded(store *s, const char *id, const store_fence *f,
			    const store_level *levels, int nlevels, sf_err *err);
int store_pg__job_failed(store *s, const char *id, const store_fence *f, const char *error,
			 sf_err *err);
int store_pg__job_cancelled(store *s, const char *id, const store_fence *f, sf_err *err);
int store_pg__job_requeue(store *s, const char *id, const store_fence *f, sf_err *err);
int store_pg__claim_job(store *s, const char *owner, int lease_ms, store_job *job, sf_err *err);
int store_pg__job_heartbeat(store *s, const char *id, const store_fence *f, int lease_ms,
			    int generation, int generations, double best, int *cancel, sf_err *err);
int store_pg__prune_job_events(store *s, int64_t age_ms, int64_t *deleted, sf_err *err);
int store_pg__rescue_expired(store *s, int max_lost, store_rescued *out, int cap, int *n,
			     sf_err *err);
int store_pg__request_cancel(store *s, const char *id, job_state *state, sf_err *err);
int store_pg__append_job_events(store *s, const char *id, const store_fence *f,
				const store_event *events, int n, sf_err *err);
int store_pg__job_events(store *s, const char *id, int64_t after, int cap, store_event *out, int *n,
			 sf_err *err);
int store_pg__pending_jobs(store *s, char (**ids)[40], size_t *n, sf_err *err);
int store_pg__count_jobs(store *s, int64_t counts[5], sf_err *err);
int store_pg__get_level(store *s, const char *id, char **doc, sf_err *err);
int store_pg__list_levels(store *s, const char *kind, const store_filter *filters, int nfilters,
			  int64_t before, int limit, char **docs, int64_t *seqs, int *n,
			  sf_err *err);
int store_pg__get_evaluation(store *s, const char *lattice, const char *sequence, char **doc,
			     sf_err *err);
int store_pg__put_evaluations(store *s, const store_evaluation *evals, size_t n, sf_err *err);
int store_pg__touch_evaluations(store *s, const store_evaluation *keys, size_t n, sf_err *err);
int store_pg__trim_evaluations(store *s, int64_t *evicted, sf_err *err);
int store_pg__evaluation_stats(store *s, int64_t *entries, int64_t *evictions, sf_err *err);
int store_pg__put_resource(store *s, const char *type, const char *name, const char *format,
			   const char *body, const char *summary, sf_err *err);
int store_pg__get_resource(store *s, const char *type, const char *name, char **format, char **body,
			   sf_err *err);
int store_pg__list_resources(store *s, const char *type, int64_t before, int limit,
			     store_resource *out, int *n, sf_err *err);

#endif
