/*
 * store_impl.h - what a back end of store.h implements: one table of
 * functions (struct store_ops) and the handle header every back end's
 * handle starts with (struct store). Not an interface for the rest of the
 * server: everything outside server/store/ goes through store.h.
 *
 * How a call reaches a back end: store.c holds the public store_*
 * functions. store_open()/store_open_with() pick the back end from the
 * string they are given (a `postgresql://` or `postgres://` URI opens
 * PostgreSQL through store_pg_open(), anything else is an SQLite path) and
 * call its open function, which returns its own handle with `ops` set.
 * Every other public function checks for a NULL store (answering as
 * store.h says: SF_EINVAL with the function's message, -1 from
 * store_version(), STORE_OK from store_write_fault()), checks the
 * arguments that do not depend on a back end (listed below, before the
 * helpers), and then calls the matching member of s->ops with the same
 * arguments. So a back end never sees a NULL `s`; it checks every other
 * argument itself, as store.h describes.
 *
 * Writing a back end:
 *
 *   struct pg_store {
 *           struct store base;    // FIRST member, so (store *)p == &p->base
 *           PGconn *conn;
 *           ...
 *   };
 *   static int pg_get_job(store *s, const char *id, store_job *job, sf_err *err)
 *   {
 *           struct pg_store *p = (struct pg_store *)s;
 *           ...
 *   }
 *   const struct store_ops store_pg_ops = { .name = "postgresql", .get_job = pg_get_job, ... };
 *
 * and its open function sets p->base.ops = &store_pg_ops. Every member
 * must be set (store.c calls them without checking for NULL).
 *
 * What each member must guarantee is what store.h says of the public
 * function of the same name, word for word: the codes (SF_EINVAL for a bad
 * argument or a missing job, SF_ERANGE for a move the job's state does not
 * allow, SF_ESYS for the storage and the connection), the messages where
 * store.h quotes them (callers and tests match "cannot become", the
 * Idempotency-Key text), what output arguments hold on failure, that a
 * failed call has changed nothing, that a call that writes is durable when
 * it returns 0 outside a batch, and the batch rules (store_batch_begin()).
 * tests/test_store.c holds every back end to that contract.
 *
 * Threads: a handle belongs to one thread at a time (store.h); the table
 * itself is constant and shared.
 */
#ifndef SF_STORE_IMPL_H
#define SF_STORE_IMPL_H

#include "store.h"

struct store_ops {
	/* The back end's name, as store_backend() returns it: "sqlite", "postgresql". */
	const char *name;

	/* store_close(): frees the handle and everything it holds (s is not NULL). */
	void (*close)(store *s);

	/* store_version(): the database's schema version as of the end of open. */
	int (*version)(store *s);
	/*
	 * store_backend_latest_version(): the version this handle counts as the
	 * binary's (its last migration: the embedded table, or the table it was
	 * opened with).
	 */
	int (*latest_version)(store *s);

	/* Jobs (store.h). */
	int (*insert_job)(store *s, store_job *job, const char *idem_key, const char *request_hash,
			  int *existing, sf_err *err);
	int (*get_job)(store *s, const char *id, store_job *job, sf_err *err);
	int (*list_jobs)(store *s, int state, const char *kind, int64_t before, int limit,
			 store_job *jobs, int *n, sf_err *err);
	int (*job_started)(store *s, const char *id, sf_err *err);
	int (*job_progress)(store *s, const char *id, int generation, int generations, double best,
			    sf_err *err);
	int (*job_succeeded)(store *s, const char *id, const store_fence *f,
			     const store_level *levels, int nlevels, sf_err *err);
	int (*job_failed)(store *s, const char *id, const store_fence *f, const char *error,
			  sf_err *err);
	int (*job_cancelled)(store *s, const char *id, const store_fence *f, sf_err *err);
	int (*job_requeue)(store *s, const char *id, const store_fence *f, sf_err *err);
	/* Leases (store.h); store.c has checked owner, lease_ms, the fence, max_lost, cap. */
	int (*claim_job)(store *s, const char *owner, int lease_ms, store_job *job, sf_err *err);
	int (*job_heartbeat)(store *s, const char *id, const store_fence *f, int lease_ms,
			     int generation, int generations, double best, int *cancel,
			     sf_err *err);
	int (*rescue_expired)(store *s, int max_lost, store_rescued *out, int cap, int *n,
			      sf_err *err);
	int (*request_cancel)(store *s, const char *id, job_state *state, sf_err *err);
	/* store_prune_job_events(); store.c has checked the age and zeroed *deleted. */
	int (*prune_job_events)(store *s, int64_t age_ms, int64_t *deleted, sf_err *err);
	/*
	 * Job events (store.h); store.c has checked id, the fence, n, every
	 * event's id and data (UTF-8), and for the read out, n and cap (1..1000;
	 * *n is 0 when the back end is called).
	 */
	int (*append_job_events)(store *s, const char *id, const store_fence *f,
				 const store_event *events, int n, sf_err *err);
	int (*job_events)(store *s, const char *id, int64_t after, int cap, store_event *out,
			  int *n, sf_err *err);
	int (*pending_jobs)(store *s, char (**ids)[40], size_t *n, sf_err *err);
	int (*count_jobs)(store *s, int64_t counts[5], sf_err *err);

	/* Levels (store.h). */
	int (*get_level)(store *s, const char *id, char **doc, sf_err *err);
	int (*list_levels)(store *s, const char *kind, const store_filter *filters, int nfilters,
			   int64_t before, int limit, char **docs, int64_t *seqs, int *n,
			   sf_err *err);

	/*
	 * The evaluation cache (store.h). store_put_evaluation() has no member:
	 * store.c calls put_evaluations with one entry.
	 */
	int (*get_evaluation)(store *s, const char *lattice, const char *sequence, char **doc,
			      sf_err *err);
	int (*put_evaluations)(store *s, const store_evaluation *evals, size_t n, sf_err *err);
	int (*touch_evaluations)(store *s, const store_evaluation *keys, size_t n, sf_err *err);
	/* store_limit_evaluations() after store.c set s->eval_max: the eviction now. */
	int (*trim_evaluations)(store *s, int64_t *evicted, sf_err *err);
	int (*evaluation_stats)(store *s, int64_t *entries, int64_t *evictions, sf_err *err);

	/* Uploaded resources (store.h). */
	int (*put_resource)(store *s, const char *type, const char *name, const char *format,
			    const char *body, const char *summary, sf_err *err);
	int (*get_resource)(store *s, const char *type, const char *name, char **format,
			    char **body, sf_err *err);
	int (*list_resources)(store *s, const char *type, int64_t before, int limit,
			      store_resource *out, int *n, sf_err *err);

	/* Storage faults (store.h). */
	int (*write_fault)(const store *s, const char **msg);
	int (*probe_write)(store *s, sf_err *err);
	int (*simulate_fault)(store *s, int fault, sf_err *err);

	/* Batches: group commit (store.h, store_batch_begin()). */
	int (*batch_begin)(store *s, sf_err *err);
	int (*batch_end)(store *s, int commit, sf_err *err);

	/*
	 * store_lock_exclusive(): for SQLite, the one-process lock on the
	 * database file; a back end made for many nodes returns 0 and does
	 * nothing.
	 */
	int (*lock_exclusive)(store *s, sf_err *err);

	/*
	 * store_checkpoint_in_background() and the count of its checkpoints;
	 * NULL for a back end whose server checkpoints by itself (0 and
	 * nothing done).
	 */
	int (*checkpoint_in_background)(store *s, sf_err *err);
	unsigned long (*background_checkpoints)(store *s);
};

/*
 * What store.c checks once, before it calls a back end (so a back end
 * never sees it wrong): the job, its id, kind and params and the
 * Idempotency-Key's hash of store_insert_job() (*existing is 0 when the
 * back end is called), the fence's owner and the lease arguments
 * (store_claim_job(), store_job_heartbeat(), store_rescue_expired()), the
 * levels of store_job_succeeded(), the arguments of store_list_jobs() and
 * store_list_levels() (a back end is called with a limit >= 1 only),
 * `state` of store_request_cancel() (never NULL for a back end), and the
 * arguments of store_append_job_events() and store_job_events() (the job
 * id not NULL, n and cap in range, each event's id >= 0 and data UTF-8),
 * and the evaluation cache's (a back end's put and touch get n >= 1 entries,
 * each with its key, and a put each with its doc; trim runs with a bound
 * >= 1 in s->eval_max; stats gets both outputs).
 *
 * Helpers store.c gives the back ends, for what does not depend on one:
 */

/*
 * Checks what store_open_with() is given, as both back ends' open
 * functions must: `path` (named `what` in the message: "path", "URI") not
 * empty, `mode`, and the migration table (names "[folder/]NNNN_name.sql"
 * numbered 1..count in order, text without a NUL). Returns 0 or SF_EINVAL.
 */
struct sf_embedded;
int store__check_open(const char *path, const char *what, int mode,
		      const struct sf_embedded *migrations, size_t count, sf_err *err);

/*
 * The JSON array text of levels[].id (malloc'ed), the job's level_ids of
 * store_job_succeeded(); NULL when out of memory or an id is not UTF-8.
 */
char *store__level_ids_json(const store_level *levels, int nlevels);

/*
 * Whether `s` is valid UTF-8 as PostgreSQL checks it (no overlong forms, no
 * surrogates, nothing past U+10FFFF); a NUL ends it.
 */
int store__utf8_valid(const char *s);

/*
 * The test seam's file (store.h, STARFORGE_TEST_STORAGE_FAULT), read now:
 * "full" asks for STORE_FULL, "readonly" for STORE_UNWRITABLE (a trailing
 * newline allowed), anything else or no file for STORE_OK.
 */
int store__fault_file_read(const char *path);

/* The header of every back end's handle: its first member. */
struct store {
	const struct store_ops *ops;
	/* The evaluation cache's bound (store_limit_evaluations()); 0: none. */
	int64_t eval_max;
};

#endif
