/*
 * store.c - the public functions of store.h: picks the back end at open and
 * passes every other call on to it through its table of functions
 * (store_impl.h). What does not depend on a back end lives here too: the
 * job state names and the functions that free rows.
 *
 * A NULL store is answered here, with the message each back end would give
 * for it, so that back ends never see one. Everything else (argument
 * checks, the output arguments' values on failure) is the back end's, as
 * store.h describes.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../base/embedded.h"
#include "store_impl.h"
#include "store_pg.h"
#include "store_sqlite.h"

/* ---- job state names and rows ---- */

static const char *const state_names[JOB_CANCELLED + 1] = { "queued", "running", "succeeded",
							    "failed", "cancelled" };

/* "queued", "running", ...; "unknown" for a value outside job_state. Never NULL. */
const char *job_state_name(job_state s)
{
	return (int)s >= 0 && s <= JOB_CANCELLED ? state_names[s] : "unknown";
}

/* The job_state named `name` (exact, lower case), or -1 for NULL or any other text. */
int job_state_parse(const char *name)
{
	for (int i = 0; name && i <= JOB_CANCELLED; i++)
		if (strcmp(name, state_names[i]) == 0)
			return i;
	return -1;
}

/* Frees the strings of `job` and zeroes it; NULL is a no-op. */
void store_job_clear(store_job *job)
{
	if (!job)
		return;
	free(job->kind);
	free(job->params);
	free(job->error);
	free(job->level_ids);
	memset(job, 0, sizeof *job);
}

/* Frees the strings of `res` and zeroes it; NULL is a no-op. */
void store_resource_clear(store_resource *res)
{
	if (!res)
		return;
	free(res->name);
	free(res->format);
	free(res->summary);
	free(res->body);
	memset(res, 0, sizeof *res);
}

/* ---- opening: the back end ---- */

/* True when `path` is a PostgreSQL connection URI (store.h, store_open()). */
static int is_pg_uri(const char *path)
{
	return path &&
	       (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

/* Opens the back end `path` names with the embedded migrations (store.h). */
store *store_open(const char *path, int mode, sf_err *err)
{
	if (is_pg_uri(path))
		return store_pg_open(path, mode, err);
	return store_sqlite_open(path, mode, sf_migrations, sf_migrations_count, err);
}

/* Opens the back end `path` names with the migration table given (store.h). */
store *store_open_with(const char *path, int mode, const sf_embedded *migrations, size_t count,
		       sf_err *err)
{
	if (is_pg_uri(path))
		return store_pg_open_with(path, mode, migrations, count, err);
	return store_sqlite_open(path, mode, migrations, count, err);
}

/* Closes `s` through its back end; NULL is a no-op. */
void store_close(store *s)
{
	if (s)
		s->ops->close(s);
}

/* The binary's SQLite schema version: its number of embedded SQLite migrations. */
int store_latest_version(void)
{
	return (int)sf_migrations_count;
}

/* The database's schema version as of open; -1 for NULL. */
int store_version(store *s)
{
	return s ? s->ops->version(s) : -1;
}

/* The version `s`'s back end counts as the binary's; -1 for NULL. */
int store_backend_latest_version(store *s)
{
	return s ? s->ops->latest_version(s) : -1;
}

/* "sqlite", "postgresql", or "none" for NULL. */
const char *store_backend(const store *s)
{
	return s ? s->ops->name : "none";
}

/* ---- jobs ---- */

int store_insert_job(store *s, store_job *job, const char *idem_key, const char *request_hash,
		     int *existing, sf_err *err)
{
	if (existing)
		*existing = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_insert_job: no store or job");
	return s->ops->insert_job(s, job, idem_key, request_hash, existing, err);
}

int store_get_job(store *s, const char *id, store_job *job, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_get_job: no store, id or job");
	return s->ops->get_job(s, id, job, err);
}

int store_list_jobs(store *s, int state, const char *kind, int64_t before, int limit,
		    store_job *jobs, int *n, sf_err *err)
{
	if (n)
		*n = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_list_jobs: no store, jobs or n");
	return s->ops->list_jobs(s, state, kind, before, limit, jobs, n, err);
}

/* What every transition answers for a NULL store. */
static int no_store_transition(sf_err *err)
{
	return sf_err_set(err, SF_EINVAL, "job transition: no store or id");
}

int store_job_started(store *s, const char *id, sf_err *err)
{
	return s ? s->ops->job_started(s, id, err) : no_store_transition(err);
}

int store_job_progress(store *s, const char *id, int generation, int generations, double best,
		       sf_err *err)
{
	return s ? s->ops->job_progress(s, id, generation, generations, best, err)
		 : no_store_transition(err);
}

int store_job_succeeded(store *s, const char *id, const store_level *levels, int nlevels,
			sf_err *err)
{
	return s ? s->ops->job_succeeded(s, id, levels, nlevels, err) : no_store_transition(err);
}

int store_job_failed(store *s, const char *id, const char *error, sf_err *err)
{
	if (!error)
		return sf_err_set(err, SF_EINVAL, "store_job_failed: no error message");
	return s ? s->ops->job_failed(s, id, error, err) : no_store_transition(err);
}

int store_job_cancelled(store *s, const char *id, sf_err *err)
{
	return s ? s->ops->job_cancelled(s, id, err) : no_store_transition(err);
}

int store_job_requeue(store *s, const char *id, sf_err *err)
{
	return s ? s->ops->job_requeue(s, id, err) : no_store_transition(err);
}

int store_pending_jobs(store *s, char (**ids)[40], size_t *n, sf_err *err)
{
	if (ids)
		*ids = NULL;
	if (n)
		*n = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_pending_jobs: no store, ids or n");
	return s->ops->pending_jobs(s, ids, n, err);
}

int store_count_jobs(store *s, int64_t counts[5], sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_count_jobs: no store or counts");
	return s->ops->count_jobs(s, counts, err);
}

/* ---- levels ---- */

int store_get_level(store *s, const char *id, char **doc, sf_err *err)
{
	if (doc)
		*doc = NULL;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_get_level: no store, id or doc");
	return s->ops->get_level(s, id, doc, err);
}

int store_list_levels(store *s, const char *kind, const store_filter *filters, int nfilters,
		      int64_t before, int limit, char **docs, int64_t *seqs, int *n, sf_err *err)
{
	if (n)
		*n = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_list_levels: no store, docs or n");
	return s->ops->list_levels(s, kind, filters, nfilters, before, limit, docs, seqs, n, err);
}

/* ---- the evaluation cache ---- */

int store_get_evaluation(store *s, const char *lattice, const char *sequence, char **doc,
			 sf_err *err)
{
	if (doc)
		*doc = NULL;
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_evaluation: no store, lattice, sequence or doc");
	return s->ops->get_evaluation(s, lattice, sequence, doc, err);
}

int store_put_evaluations(store *s, const store_evaluation *evals, size_t n, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_put_evaluations: no store or evaluations");
	return s->ops->put_evaluations(s, evals, n, err);
}

/* One entry: store_put_evaluations() with n = 1. */
int store_put_evaluation(store *s, const char *lattice, const char *sequence, const char *doc,
			 sf_err *err)
{
	if (!s || !lattice || !sequence || !doc)
		return sf_err_set(err, SF_EINVAL,
				  "store_put_evaluation: no store, lattice, sequence or doc");
	store_evaluation e = { lattice, sequence, doc };
	return s->ops->put_evaluations(s, &e, 1, err);
}

/* ---- uploaded resources ---- */

int store_put_resource(store *s, const char *type, const char *name, const char *format,
		       const char *body, const char *summary, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_put_resource: no store, type, name, format or body");
	return s->ops->put_resource(s, type, name, format, body, summary, err);
}

int store_get_resource(store *s, const char *type, const char *name, char **format, char **body,
		       sf_err *err)
{
	if (format)
		*format = NULL;
	if (body)
		*body = NULL;
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_resource: no store, type, name, format or body");
	return s->ops->get_resource(s, type, name, format, body, err);
}

int store_list_resources(store *s, const char *type, int64_t before, int limit, store_resource *out,
			 int *n, sf_err *err)
{
	if (n)
		*n = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_list_resources: no store, type, out or n");
	return s->ops->list_resources(s, type, before, limit, out, n, err);
}

/* ---- storage faults ---- */

int store_write_fault(const store *s, const char **msg)
{
	if (!s) {
		if (msg)
			*msg = "";
		return STORE_OK;
	}
	return s->ops->write_fault(s, msg);
}

int store_probe_write(store *s, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_probe_write: no store, or a READONLY one");
	return s->ops->probe_write(s, err);
}

int store_simulate_fault(store *s, int fault, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_simulate_fault: no store, or a READONLY one");
	return s->ops->simulate_fault(s, fault, err);
}

/* ---- batches and the lock ---- */

int store_batch_begin(store *s, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_batch_begin: no store");
	return s->ops->batch_begin(s, err);
}

int store_batch_end(store *s, int commit, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_batch_end: no store");
	return s->ops->batch_end(s, commit, err);
}

int store_lock_exclusive(store *s, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_lock_exclusive: no store");
	return s->ops->lock_exclusive(s, err);
}
