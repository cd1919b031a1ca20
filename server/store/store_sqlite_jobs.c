/*
 * store_sqlite_jobs.c - jobs, their events and levels in the SQLite store (store.h; the
 * connection and the helpers are in store_sqlite.c).
 *
 * The job life cycle is enforced here, not only in the scheduler: every
 * transition reads the job's state inside its own BEGIN IMMEDIATE
 * transaction and refuses a move the life cycle does not have, so a final
 * state (succeeded, failed, cancelled) is final even when a cancel and a
 * finishing worker race, or a second process shares the database.
 *
 * Leases (store.h, store_claim_job()): a claim, a heartbeat, a rescue and
 * a cancel request are each one UPDATE ... RETURNING inside a BEGIN
 * IMMEDIATE transaction, so two processes on one file (or two handles)
 * never take the same job. A fenced outcome reads the job's state, owner
 * and attempt in the transaction that writes it (transition_begin()), and
 * writes nothing when they are not the fence's (STORE_LOST). Times are
 * this process's clock: one node per SQLite file.
 *
 * A job's levels arrive with its success: the levels, their tags and the
 * job's new state are one transaction, so a level is never stored without
 * the job that found it, nor a job succeeded without its levels. Levels
 * are immutable and keyed by a content hash: the first document stored
 * under an id, and its tags, are kept; later copies are skipped.
 */
#include "store_sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(state) (1u << (state))

/* ---- jobs ---- */

/* Fills `job` from a row of STORE__JOB_COLS; on failure `job` owns nothing. */
static int job_from_row(sqlite3_stmt *st, store_job *job, sf_err *err)
{
	int oom = 0;
	memset(job, 0, sizeof *job);
	const char *id = (const char *)sqlite3_column_text(st, 0);
	snprintf(job->id, sizeof job->id, "%s", id ? id : "");
	job->seq = sqlite3_column_int64(st, 1);
	job->kind = store__col_dup(st, 2, &oom);
	job->params = store__col_dup(st, 3, &oom);
	int64_t seed = sqlite3_column_int64(st, 4);
	memcpy(&job->seed, &seed, sizeof job->seed); /* stored bit for bit */
	int state = job_state_parse((const char *)sqlite3_column_text(st, 5));
	job->created_ms = sqlite3_column_int64(st, 6);
	job->started_ms = sqlite3_column_int64(st, 7); /* NULL reads as 0 */
	job->finished_ms = sqlite3_column_int64(st, 8);
	job->generation = sqlite3_column_int(st, 9);
	job->generations = sqlite3_column_int(st, 10);
	job->best = sqlite3_column_double(st, 11);
	job->error = store__col_dup(st, 12, &oom);
	job->level_ids = store__col_dup(st, 13, &oom);
	job->attempt = sqlite3_column_int(st, 14);
	job->lost = sqlite3_column_int(st, 15);
	const char *owner = (const char *)sqlite3_column_text(st, 16);
	snprintf(job->lease_owner, sizeof job->lease_owner, "%s", owner ? owner : "");
	job->lease_until_ms = sqlite3_column_int64(st, 17);
	job->cancel_requested = sqlite3_column_int(st, 18) != 0;
	if (oom || !job->kind || !job->params) {
		store_job_clear(job);
		return sf_err_set(err, SF_ENOMEM, "reading a job: out of memory");
	}
	if (state < 0) {
		int rc = sf_err_set(err, SF_ERANGE, "job %s has an unknown state", job->id);
		store_job_clear(job);
		return rc;
	}
	job->state = (job_state)state;
	return 0;
}

/* Reads job `id` into *job: 1 found, 0 not (job untouched), or a negative code. */
static int job_get(sq_store *s, const char *id, store_job *job, sf_err *err)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_JOB_GET, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, id) != SQLITE_OK) {
		rc = store__bind_err(s, err, "reading a job");
		store__done(st);
		return rc;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		store_job found;
		rc = job_from_row(st, &found, err);
		if (rc == 0) {
			*job = found;
			rc = 1;
		}
	} else {
		rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "reading job %s", id);
	}
	store__done(st);
	return rc;
}

/*
 * Checks an Idempotency-Key inside the open transaction: 0 when it is new,
 * 1 when it came with the same hash (the earlier job is in *earlier, which
 * then owns strings), SF_EINVAL when it came with another.
 */
static int idem_check(sq_store *s, const char *key, const char *hash, store_job *earlier,
		      sf_err *err)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_IDEM_GET, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, key) != SQLITE_OK) {
		rc = store__bind_err(s, err, "store_insert_job");
		store__done(st);
		return rc;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		rc = rc == SQLITE_DONE
			     ? 0
			     : store__db_err(s, rc, err,
					     "store_insert_job: reading the Idempotency-Key");
		store__done(st);
		return rc;
	}
	const char *stored = (const char *)sqlite3_column_text(st, 0);
	int same = stored && strcmp(stored, hash) == 0;
	char job_id[sizeof earlier->id];
	const char *text = (const char *)sqlite3_column_text(st, 1);
	snprintf(job_id, sizeof job_id, "%s", text ? text : "");
	store__done(st);
	if (!same)
		return sf_err_set(err, SF_EINVAL, "Idempotency-Key reused with a different body");
	rc = job_get(s, job_id, earlier, err);
	if (rc == 0) /* the foreign key makes this impossible short of corruption */
		rc = sf_err_set(err, SF_ESYS, "Idempotency-Key names job %s, which is missing",
				job_id);
	return rc;
}

/*
 * Inserts job `job` as queued, and its Idempotency-Key, in one committed
 * transaction (see store.h for the key's rules). On success sets job->seq
 * (the row's AUTOINCREMENT rowid), created_ms, state and zeroed times and
 * progress; on failure nothing is written and `job` is as it was.
 */
int store_sqlite_insert_job(store *base, store_job *job, const char *idem_key,
			    const char *request_hash, int *existing, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = store__begin(s, err, "store_insert_job");
	if (rc)
		return rc;
	if (idem_key) {
		store_job earlier;
		rc = idem_check(s, idem_key, request_hash, &earlier, err);
		if (rc < 0)
			return store__fail(s, rc);
		if (rc == 1) {
			store__fail(s, 0); /* nothing was written */
			store_job_clear(job);
			*job = earlier;
			if (existing)
				*existing = 1;
			return 0;
		}
	}
	int64_t now = store__now_ms(), seed;
	memcpy(&seed, &job->seed, sizeof seed);
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_JOB_INSERT, &st, err)) != 0)
		return store__fail(s, rc);
	if (store__bind_text(st, 1, job->id) || store__bind_text(st, 2, job->kind) ||
	    store__bind_text(st, 3, job->params) || sqlite3_bind_int64(st, 4, seed) ||
	    sqlite3_bind_int64(st, 5, now)) {
		rc = store__bind_err(s, err, "store_insert_job");
		store__done(st);
		return store__fail(s, rc);
	}
	if ((rc = store__step_write(s, st, err, "store_insert_job: inserting the job")) != 0)
		return store__fail(s, rc);
	int64_t seq = sqlite3_last_insert_rowid(s->db);
	if (idem_key) {
		if ((rc = store__prep(s, ST_IDEM_INSERT, &st, err)) != 0)
			return store__fail(s, rc);
		if (store__bind_text(st, 1, idem_key) || store__bind_text(st, 2, request_hash) ||
		    store__bind_text(st, 3, job->id) || sqlite3_bind_int64(st, 4, now)) {
			rc = store__bind_err(s, err, "store_insert_job");
			store__done(st);
			return store__fail(s, rc);
		}
		rc = store__step_write(s, st, err,
				       "store_insert_job: recording the Idempotency-Key");
		if (rc)
			return store__fail(s, rc);
	}
	if ((rc = store__commit(s, err, "store_insert_job")) != 0)
		return rc;
	job->seq = seq;
	job->created_ms = now;
	return 0; /* store.c sets the rest of a new queued row */
}

/* Reads job `id`: 1 and *job filled, 0 when there is none, or a negative code. */
int store_sqlite_get_job(store *base, const char *id, store_job *job, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (!s || !id || !job)
		return sf_err_set(err, SF_EINVAL, "store_get_job: no store, id or job");
	return job_get(s, id, job, err);
}

/*
 * Lists jobs newest first with one of four fixed statements (filters by
 * state, kind, both or neither), each walking an index in seq order. On
 * failure *n is 0 and jobs[] owns nothing.
 */
int store_sqlite_list_jobs(store *base, int state, const char *kind, int64_t before, int limit,
			   store_job *jobs, int *n, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	enum store__stmt id = state < 0 ? (kind ? ST_JOBS_KIND : ST_JOBS_ANY)
					: (kind ? ST_JOBS_STATE_KIND : ST_JOBS_STATE);
	sqlite3_stmt *st;
	int rc = store__prep(s, id, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, before ? before : INT64_MAX) ||
	    sqlite3_bind_int(st, 2, limit) ||
	    (state >= 0 && store__bind_text(st, 3, job_state_name((job_state)state))) ||
	    (kind && store__bind_text(st, 4, kind))) {
		rc = store__bind_err(s, err, "store_list_jobs");
		store__done(st);
		return rc;
	}
	int count = 0, step = SQLITE_DONE;
	rc = 0;
	while (count < limit && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = job_from_row(st, &jobs[count], err)) != 0)
			break;
		count++;
	}
	if (!rc && count < limit && step != SQLITE_DONE)
		rc = store__db_err(s, step, err, "store_list_jobs");
	store__done(st);
	if (rc) {
		while (count > 0)
			store_job_clear(&jobs[--count]);
	}
	*n = count;
	return rc;
}

/*
 * Opens the write transaction of a move of job `id` to `to`, after checking
 * that the job is in one of the states of the mask `from`, or with a fence
 * `f` (not NULL), that it is running under f's owner and attempt
 * (otherwise STORE_LOST, err untouched). On failure (or STORE_LOST) no
 * transaction stays open.
 */
static int transition_begin(sq_store *s, const char *id, unsigned from, const char *to,
			    const store_fence *f, sf_err *err)
{
	if (!s || !id)
		return sf_err_set(err, SF_EINVAL, "job transition: no store or id");
	char what[80];
	snprintf(what, sizeof what, "job %.40s -> %s", id, to);
	int rc = store__begin(s, err, what);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_JOB_STATE, &st, err)) != 0)
		return store__fail(s, rc);
	if (store__bind_text(st, 1, id)) {
		rc = store__bind_err(s, err, what);
		store__done(st);
		return store__fail(s, rc);
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		rc = sf_err_set(err, SF_EINVAL, "job %s not found", id);
	} else if (rc != SQLITE_ROW) {
		rc = store__db_err(s, rc, err, "%s: reading the state", what);
	} else {
		int state = job_state_parse((const char *)sqlite3_column_text(st, 0));
		const char *owner = (const char *)sqlite3_column_text(st, 1);
		rc = 0;
		if (f) {
			if (state != JOB_RUNNING || !owner || strcmp(owner, f->owner) != 0 ||
			    sqlite3_column_int(st, 2) != f->attempt)
				rc = STORE_LOST;
		} else if (state < 0 || !(from & BIT(state)))
			rc = sf_err_set(err, SF_ERANGE, "job %s is %s, cannot become %s", id,
					job_state_name((job_state)state), to);
	}
	store__done(st);
	return rc ? store__fail(s, rc) : 0;
}

/*
 * Runs the UPDATE `which` of a transition (?1 id, then ?2 now and ?3 `text`
 * as far as it has them) and commits; on failure rolls back.
 */
static int transition_end(sq_store *s, enum store__stmt which, const char *id, const char *text,
			  sf_err *err)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, which, &st, err);
	if (rc)
		return store__fail(s, rc);
	int params = sqlite3_bind_parameter_count(st);
	if (store__bind_text(st, 1, id) ||
	    (params >= 2 && sqlite3_bind_int64(st, 2, store__now_ms())) ||
	    (params >= 3 && store__bind_text(st, 3, text))) {
		rc = store__bind_err(s, err, "job transition");
		store__done(st);
		return store__fail(s, rc);
	}
	if ((rc = store__step_write(s, st, err, "job transition: updating the job")) != 0)
		return store__fail(s, rc);
	return store__commit(s, err, "job transition");
}

/* queued -> running, stamping started_ms; see store.h for the errors. */
int store_sqlite_job_started(store *base, const char *id, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = transition_begin(s, id, BIT(JOB_QUEUED), "running", NULL, err);
	return rc ? rc : transition_end(s, ST_JOB_START, id, NULL, err);
}

/* Records the progress of a running job (SF_ERANGE in any other state). */
int store_sqlite_job_progress(store *base, const char *id, int generation, int generations,
			      double best, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = transition_begin(s, id, BIT(JOB_RUNNING), "running (progress)", NULL, err);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_JOB_PROGRESS, &st, err)) != 0)
		return store__fail(s, rc);
	if (store__bind_text(st, 1, id) || sqlite3_bind_int(st, 2, generation) ||
	    sqlite3_bind_int(st, 3, generations) || sqlite3_bind_double(st, 4, best)) {
		rc = store__bind_err(s, err, "store_job_progress");
		store__done(st);
		return store__fail(s, rc);
	}
	if ((rc = store__step_write(s, st, err, "store_job_progress")) != 0)
		return store__fail(s, rc);
	return store__commit(s, err, "store_job_progress");
}

/* Inserts level `lv` unless its id is stored already, and then its tags. */
static int level_insert(sq_store *s, const store_level *lv, int64_t now, sf_err *err)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_LEVEL_INSERT, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, lv->id) || store__bind_text(st, 2, lv->kind) ||
	    store__bind_text(st, 3, lv->doc) || sqlite3_bind_int64(st, 4, now)) {
		rc = store__bind_err(s, err, "store_job_succeeded");
		store__done(st);
		return rc;
	}
	rc = store__step_write(s, st, err, "store_job_succeeded: inserting a level");
	if (rc || sqlite3_changes(s->db) == 0)
		return rc; /* stored before: its first document and tags stay */
	for (int t = 0; t < lv->ntags; t++) {
		if ((rc = store__prep(s, ST_TAG_INSERT, &st, err)) != 0)
			return rc;
		if (store__bind_text(st, 1, lv->id) || store__bind_text(st, 2, lv->tag_name[t]) ||
		    store__bind_text(st, 3, lv->tag_text[t]) ||
		    (lv->tag_text[t] && !lv->tag_has_num[t]
			     ? sqlite3_bind_null(st, 4)
			     : sqlite3_bind_double(st, 4, lv->tag_num[t]))) {
			rc = store__bind_err(s, err, "store_job_succeeded");
			store__done(st);
			return rc;
		}
		if ((rc = store__step_write(s, st, err, "store_job_succeeded: inserting a tag"))) {
			char where[120];
			snprintf(where, sizeof where, "level %.40s, tag %.40s: ", lv->id,
				 lv->tag_name[t]);
			sf_err_prefix(err, where);
			return rc;
		}
	}
	return 0;
}

/*
 * running -> succeeded with its levels, all in one transaction: each level
 * not stored yet with its tags (ON CONFLICT (id) DO NOTHING keeps the first
 * document of an id), level_ids as the JSON array of levels[].id in order,
 * finished_ms. On failure nothing is written.
 */
int store_sqlite_job_succeeded(store *base, const char *id, const store_fence *f,
			       const store_level *levels, int nlevels, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc;
	char *ids = store__level_ids_json(levels, nlevels);
	if (!ids)
		return sf_err_set(
			err, SF_EINVAL,
			"store_job_succeeded: level ids are not UTF-8 (or out of memory)");
	if ((rc = transition_begin(s, id, BIT(JOB_RUNNING), "succeeded", f, err)) != 0)
		goto out;
	int64_t now = store__now_ms();
	for (int i = 0; i < nlevels && !rc; i++)
		rc = level_insert(s, &levels[i], now, err);
	rc = rc ? store__fail(s, rc) : transition_end(s, ST_JOB_SUCCEED, id, ids, err);
out:
	free(ids);
	return rc;
}

/* queued or running -> failed, recording `error` (not NULL) and finished_ms. */
int store_sqlite_job_failed(store *base, const char *id, const store_fence *f, const char *error,
			    sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (!error)
		return sf_err_set(err, SF_EINVAL, "store_job_failed: no error message");
	int rc = transition_begin(s, id, BIT(JOB_QUEUED) | BIT(JOB_RUNNING), "failed", f, err);
	return rc ? rc : transition_end(s, ST_JOB_FAIL, id, error, err);
}

/* queued or running -> cancelled, stamping finished_ms. */
int store_sqlite_job_cancelled(store *base, const char *id, const store_fence *f, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = transition_begin(s, id, BIT(JOB_QUEUED) | BIT(JOB_RUNNING), "cancelled", f, err);
	return rc ? rc : transition_end(s, ST_JOB_CANCEL, id, NULL, err);
}

/*
 * queued or running -> queued, clearing started_ms, the progress and the
 * lease; cancelled instead when a cancel was requested (store.h).
 */
int store_sqlite_job_requeue(store *base, const char *id, const store_fence *f, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = transition_begin(s, id, BIT(JOB_QUEUED) | BIT(JOB_RUNNING), "queued", f, err);
	return rc ? rc : transition_end(s, ST_JOB_REQUEUE, id, NULL, err);
}

/* ---- leases (store.h; store.c checked the arguments) ---- */

/*
 * Steps `st`, a statement with RETURNING, to its end: 1 when it returned a
 * row (read by `row`, when not NULL, before the next step), 0 when none,
 * or the reported code. Leaves `st` for the caller's store__done().
 */
static int step_returning(sq_store *s, sqlite3_stmt *st,
			  int (*row)(sqlite3_stmt *st, void *arg, sf_err *err), void *arg,
			  sf_err *err, const char *what)
{
	int found = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (row) {
			int r = row(st, arg, err);
			if (r)
				return r;
		}
		found = 1;
	}
	return rc == SQLITE_DONE ? found : store__db_err(s, rc, err, "%s", what);
}

/* step_returning()'s reader for the claim: the job, once. */
static int claim_row(sqlite3_stmt *st, void *arg, sf_err *err)
{
	return job_from_row(st, arg, err);
}

/*
 * The oldest claimable job -> running under `owner`'s lease, with one
 * UPDATE ... RETURNING in its own transaction (BEGIN IMMEDIATE: another
 * process claims after it, and finds the next job).
 */
int store_sqlite_claim_job(store *base, const char *owner, int lease_ms, store_job *job, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = store__begin(s, err, "store_claim_job");
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_JOB_CLAIM, &st, err)) != 0)
		return store__fail(s, rc);
	store_job claimed;
	memset(&claimed, 0, sizeof claimed);
	if (store__bind_text(st, 1, owner) || sqlite3_bind_int64(st, 2, store__now_ms()) ||
	    sqlite3_bind_int(st, 3, lease_ms)) {
		rc = store__bind_err(s, err, "store_claim_job");
		store__done(st);
		return store__fail(s, rc);
	}
	int found = step_returning(s, st, claim_row, &claimed, err, "store_claim_job");
	store__done(st);
	if (found < 0) {
		store_job_clear(&claimed);
		return store__fail(s, found);
	}
	if ((rc = store__commit(s, err, "store_claim_job")) != 0) {
		store_job_clear(&claimed);
		return rc;
	}
	if (found)
		*job = claimed;
	return found;
}

/* Checks that job `id` exists, inside the open transaction: 0, SF_EINVAL, or a code. */
static int job_exists(sq_store *s, const char *id, sf_err *err)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_JOB_EXISTS, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, id)) {
		rc = store__bind_err(s, err, "reading a job");
		store__done(st);
		return rc;
	}
	rc = step_returning(s, st, NULL, NULL, err, "reading a job");
	store__done(st);
	if (rc == 0)
		return sf_err_set(err, SF_EINVAL, "job %s not found", id);
	return rc < 0 ? rc : 0;
}

/* step_returning()'s reader for the heartbeat: cancel_requested. */
static int cancel_row(sqlite3_stmt *st, void *arg, sf_err *err)
{
	(void)err;
	*(int *)arg = sqlite3_column_int(st, 0) != 0;
	return 0;
}

/* The fenced UPDATE of the lease and progress; STORE_LOST when the fence fails. */
int store_sqlite_job_heartbeat(store *base, const char *id, const store_fence *f, int lease_ms,
			       int generation, int generations, double best, int *cancel,
			       sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = store__begin(s, err, "store_job_heartbeat");
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_JOB_HEARTBEAT, &st, err)) != 0)
		return store__fail(s, rc);
	if (store__bind_text(st, 1, id) || store__bind_text(st, 2, f->owner) ||
	    sqlite3_bind_int(st, 3, f->attempt) || sqlite3_bind_int64(st, 4, store__now_ms()) ||
	    sqlite3_bind_int(st, 5, lease_ms) || sqlite3_bind_int(st, 6, generation) ||
	    sqlite3_bind_int(st, 7, generations) || sqlite3_bind_double(st, 8, best)) {
		rc = store__bind_err(s, err, "store_job_heartbeat");
		store__done(st);
		return store__fail(s, rc);
	}
	int requested = 0;
	int found = step_returning(s, st, cancel_row, &requested, err, "store_job_heartbeat");
	store__done(st);
	if (found < 0)
		return store__fail(s, found);
	if (found == 0) /* nothing was written: the lease is lost, or there is no such job */
		return store__fail(s, (rc = job_exists(s, id, err)) != 0 ? rc : STORE_LOST);
	if ((rc = store__commit(s, err, "store_job_heartbeat")) != 0)
		return rc;
	if (cancel)
		*cancel = requested;
	return 0;
}

/* step_returning()'s reader for the rescue: one store_rescued per row, up to the cap. */
typedef struct rescue_out {
	store_rescued *out;
	int cap, n;
} rescue_out;

static int rescue_row(sqlite3_stmt *st, void *arg, sf_err *err)
{
	rescue_out *r = arg;
	if (r->n >= r->cap)
		return sf_err_set(err, SF_ESYS, "store_rescue_expired: more rows than the cap");
	store_rescued *one = &r->out[r->n++];
	const char *id = (const char *)sqlite3_column_text(st, 0);
	snprintf(one->id, sizeof one->id, "%s", id ? id : "");
	int state = job_state_parse((const char *)sqlite3_column_text(st, 1));
	one->state = state < 0 ? JOB_QUEUED : (job_state)state;
	one->attempt = sqlite3_column_int(st, 2);
	one->lost = sqlite3_column_int(st, 3);
	const char *kind = (const char *)sqlite3_column_text(st, 4);
	snprintf(one->kind, sizeof one->kind, "%s", kind ? kind : "");
	int64_t seed = sqlite3_column_int64(st, 5);
	memcpy(&one->seed, &seed, sizeof one->seed); /* stored bit for bit */
	return 0;
}

/* One UPDATE ... RETURNING of the expired leases (at most `cap`), in its own transaction. */
int store_sqlite_rescue_expired(store *base, int max_lost, store_rescued *out, int cap, int *n,
				sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = store__begin(s, err, "store_rescue_expired");
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_JOB_RESCUE, &st, err)) != 0)
		return store__fail(s, rc);
	if (sqlite3_bind_int64(st, 1, store__now_ms()) || sqlite3_bind_int(st, 2, max_lost) ||
	    sqlite3_bind_int(st, 3, cap)) {
		rc = store__bind_err(s, err, "store_rescue_expired");
		store__done(st);
		return store__fail(s, rc);
	}
	rescue_out r = { out, cap, 0 };
	rc = step_returning(s, st, rescue_row, &r, err, "store_rescue_expired");
	store__done(st);
	if (rc < 0)
		return store__fail(s, rc);
	if ((rc = store__commit(s, err, "store_rescue_expired")) != 0)
		return rc;
	*n = r.n;
	return 0;
}

/* step_returning()'s reader of a state column. */
static int state_row(sqlite3_stmt *st, void *arg, sf_err *err)
{
	int state = job_state_parse((const char *)sqlite3_column_text(st, 0));
	if (state < 0)
		return sf_err_set(err, SF_ERANGE, "a job has an unknown state");
	*(job_state *)arg = (job_state)state;
	return 0;
}

/* queued -> cancelled or running -> cancel_requested, one UPDATE; else the state as it is. */
int store_sqlite_request_cancel(store *base, const char *id, job_state *state, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = store__begin(s, err, "store_request_cancel");
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_JOB_REQUEST_CANCEL, &st, err)) != 0)
		return store__fail(s, rc);
	if (store__bind_text(st, 1, id) || sqlite3_bind_int64(st, 2, store__now_ms())) {
		rc = store__bind_err(s, err, "store_request_cancel");
		store__done(st);
		return store__fail(s, rc);
	}
	job_state now = JOB_QUEUED;
	int moved = step_returning(s, st, state_row, &now, err, "store_request_cancel");
	store__done(st);
	if (moved == 0) {
		if ((rc = store__prep(s, ST_JOB_STATE, &st, err)) != 0)
			return store__fail(s, rc);
		if (store__bind_text(st, 1, id)) {
			rc = store__bind_err(s, err, "store_request_cancel");
			store__done(st);
			return store__fail(s, rc);
		}
		rc = step_returning(s, st, state_row, &now, err, "store_request_cancel");
		store__done(st);
		if (rc == 0)
			rc = sf_err_set(err, SF_EINVAL, "job %s not found", id);
		if (rc < 0)
			return store__fail(s, rc);
		store__fail(s, 0); /* nothing was written */
		*state = now;
		return 0;
	}
	if (moved < 0)
		return store__fail(s, moved);
	if ((rc = store__commit(s, err, "store_request_cancel")) != 0)
		return rc;
	*state = now;
	return 1;
}

/* ---- job events (store.h; store.c checked the arguments) ---- */

/* Every state: an unfenced append takes a job in any state. */
#define ANY_STATE                                                                    \
	(BIT(JOB_QUEUED) | BIT(JOB_RUNNING) | BIT(JOB_SUCCEEDED) | BIT(JOB_FAILED) | \
	 BIT(JOB_CANCELLED))

/*
 * In one transaction: the job and the fence checked as a fenced outcome
 * checks them (transition_begin(): SF_EINVAL for an unknown job, STORE_LOST
 * when the fence fails), then one INSERT ... ON CONFLICT DO NOTHING per
 * event, in order, so the first data of an id stays.
 */
int store_sqlite_append_job_events(store *base, const char *id, const store_fence *f,
				   const store_event *events, int n, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = transition_begin(s, id, ANY_STATE, "events", f, err);
	if (rc)
		return rc;
	for (int i = 0; i < n && !rc; i++) {
		sqlite3_stmt *st;
		if ((rc = store__prep(s, ST_EVENT_INSERT, &st, err)) != 0)
			break;
		if (store__bind_text(st, 1, id) || sqlite3_bind_int64(st, 2, events[i].id) ||
		    store__bind_text(st, 3, events[i].data)) {
			rc = store__bind_err(s, err, "store_append_job_events");
			store__done(st);
			break;
		}
		rc = store__step_write(s, st, err, "store_append_job_events");
	}
	return rc ? store__fail(s, rc) : store__commit(s, err, "store_append_job_events");
}

int store_sqlite_prune_job_events(store *base, int64_t age_ms, int64_t *deleted, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc = store__begin(s, err, "store_prune_job_events");
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_EVENTS_PRUNE, &st, err)) != 0)
		return store__fail(s, rc);
	if (sqlite3_bind_int64(st, 1, store__now_ms() - age_ms)) {
		rc = store__bind_err(s, err, "store_prune_job_events");
		store__done(st);
		return store__fail(s, rc);
	}
	if ((rc = store__step_write(s, st, err, "store_prune_job_events")) != 0)
		return store__fail(s, rc);
	*deleted = sqlite3_changes(s->db);
	return store__commit(s, err, "store_prune_job_events");
}

/* step_returning()'s reader for the events: one store_event per row, up to the cap. */
typedef struct events_out {
	store_event *out;
	int cap, n;
} events_out;

static int event_row(sqlite3_stmt *st, void *arg, sf_err *err)
{
	events_out *r = arg;
	int oom = 0;
	if (r->n >= r->cap)
		return sf_err_set(err, SF_ESYS, "store_job_events: more rows than the cap");
	store_event *e = &r->out[r->n];
	e->data = store__col_dup(st, 1, &oom);
	if (!e->data)
		return sf_err_set(err, SF_ENOMEM, "store_job_events: out of memory");
	e->id = sqlite3_column_int64(st, 0);
	r->n++;
	return 0;
}

/* The events of job `id` after `after`, oldest first, at most `cap`; on failure none. */
int store_sqlite_job_events(store *base, const char *id, int64_t after, int cap, store_event *out,
			    int *n, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_EVENTS_GET, &st, err);
	if (rc)
		return rc;
	events_out r = { out, cap, 0 };
	if (store__bind_text(st, 1, id) || sqlite3_bind_int64(st, 2, after) ||
	    sqlite3_bind_int(st, 3, cap))
		rc = store__bind_err(s, err, "store_job_events");
	else
		rc = step_returning(s, st, event_row, &r, err, "store_job_events");
	store__done(st);
	if (rc < 0) {
		while (r.n > 0)
			store_event_clear(&out[--r.n]);
		return rc;
	}
	*n = r.n;
	return 0;
}

/*
 * In one transaction: lists the queued and running jobs by seq and requeues
 * the running ones as store_job_requeue() does. *ids is NULL when *n is 0;
 * on failure nothing is changed, *ids is NULL and *n 0.
 */
int store_sqlite_pending_jobs(store *base, char (**ids)[40], size_t *n, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (ids)
		*ids = NULL;
	if (n)
		*n = 0;
	if (!s || !ids || !n)
		return sf_err_set(err, SF_EINVAL, "store_pending_jobs: no store, ids or n");
	int rc = store__begin(s, err, "store_pending_jobs");
	if (rc)
		return rc;
	sqlite3_stmt *st;
	/* A cancel asked for is honoured first: those jobs are final, not pending. */
	if ((rc = store__prep(s, ST_PENDING_CANCEL, &st, err)) != 0)
		return store__fail(s, rc);
	if (sqlite3_bind_int64(st, 1, store__now_ms())) {
		rc = store__bind_err(s, err, "store_pending_jobs");
		store__done(st);
		return store__fail(s, rc);
	}
	if ((rc = store__step_write(s, st, err, "store_pending_jobs: cancelling")) != 0)
		return store__fail(s, rc);
	if ((rc = store__prep(s, ST_PENDING, &st, err)) != 0)
		return store__fail(s, rc);
	char(*list)[40] = NULL;
	size_t count = 0, cap = 0;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if (count == cap) {
			cap = cap ? 2 * cap : 16;
			char(*grown)[40] = realloc(list, cap * sizeof *list);
			if (!grown) {
				rc = sf_err_set(err, SF_ENOMEM,
						"store_pending_jobs: out of memory");
				break;
			}
			list = grown;
		}
		const char *id = (const char *)sqlite3_column_text(st, 0);
		snprintf(list[count++], sizeof *list, "%s", id ? id : "");
	}
	if (!rc && step != SQLITE_DONE)
		rc = store__db_err(s, step, err, "store_pending_jobs: listing");
	store__done(st);
	if (!rc && (rc = store__prep(s, ST_PENDING_REQUEUE, &st, err)) == 0)
		rc = store__step_write(s, st, err, "store_pending_jobs: requeueing");
	rc = rc ? store__fail(s, rc) : store__commit(s, err, "store_pending_jobs");
	if (rc) {
		free(list);
		return rc;
	}
	*ids = list;
	*n = count;
	return 0;
}

/* Counts the jobs in each state into counts[JOB_QUEUED..JOB_CANCELLED]. */
int store_sqlite_count_jobs(store *base, int64_t counts[5], sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (!s || !counts)
		return sf_err_set(err, SF_EINVAL, "store_count_jobs: no store or counts");
	for (int i = JOB_QUEUED; i <= JOB_CANCELLED; i++)
		counts[i] = 0;
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_COUNT_JOBS, &st, err);
	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int state = job_state_parse((const char *)sqlite3_column_text(st, 0));
		if (state >= 0)
			counts[state] = sqlite3_column_int64(st, 1);
	}
	rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "store_count_jobs");
	store__done(st);
	return rc;
}

/* ---- levels ---- */

/*
 * Sets *doc to a malloc'ed copy of level `id`'s document, or NULL when
 * there is none; returns 0 either way, or an SF_E* code (*doc NULL).
 */
int store_sqlite_get_level(store *base, const char *id, char **doc, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (doc)
		*doc = NULL;
	if (!s || !id || !doc)
		return sf_err_set(err, SF_EINVAL, "store_get_level: no store, id or doc");
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_LEVEL_GET, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, id)) {
		rc = store__bind_err(s, err, "store_get_level");
		store__done(st);
		return rc;
	}
	int oom = 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*doc = store__col_dup(st, 0, &oom);
		rc = oom ? sf_err_set(err, SF_ENOMEM, "store_get_level: out of memory") : 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "store_get_level");
	}
	store__done(st);
	return rc;
}

/*
 * The prepared level listing of one shape: `shape` is 'k' or '-' for a
 * kind or none, then 't' (text) or 'm' (min) per filter. From the cache, or
 * assembled from fixed fragments and prepared now, evicting the least
 * recently used. Parameters, in order: before, [kind], per filter its name
 * and its text or min, limit.
 */
static int list_prep(sq_store *s, const char *shape, sqlite3_stmt **st, sf_err *err)
{
	store__list *slot = &s->lists[0];
	for (int i = 0; i < STORE__LIST_CACHE; i++) {
		store__list *c = &s->lists[i];
		if (c->stmt && strcmp(c->shape, shape) == 0) {
			c->used = ++s->tick;
			*st = c->stmt;
			return 0;
		}
		if (!c->stmt || (slot->stmt && c->used < slot->used))
			slot = c;
	}
	static const char by_text[] =
		" AND id IN (SELECT level_id FROM level_tags WHERE name = ? AND text = ?)";
	static const char by_min[] =
		" AND id IN (SELECT level_id FROM level_tags WHERE name = ? AND num >= ?)";
	char sql[160 + STORE_MAX_FILTERS * sizeof by_text];
	size_t len =
		(size_t)snprintf(sql, sizeof sql, "SELECT doc, seq FROM levels WHERE seq < ?%s",
				 shape[0] == 'k' ? " AND kind = ?" : "");
	for (const char *c = shape + 1; *c; c++)
		len += (size_t)snprintf(sql + len, sizeof sql - len, "%s",
					*c == 't' ? by_text : by_min);
	snprintf(sql + len, sizeof sql - len, " ORDER BY seq DESC LIMIT ?");
	sqlite3_finalize(slot->stmt);
	slot->stmt = NULL;
	int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &slot->stmt, NULL);
	if (rc != SQLITE_OK) {
		rc = store__db_err(s, rc, err, "store_list_levels: preparing the listing");
		sqlite3_finalize(slot->stmt);
		slot->stmt = NULL;
		return rc;
	}
	snprintf(slot->shape, sizeof slot->shape, "%s", shape);
	slot->used = ++s->tick;
	*st = slot->stmt;
	return 0;
}

/*
 * Lists level documents newest first (see store.h): one statement per
 * shape, each filter an IN (subquery) over a (name, value, level_id) index.
 * On failure *n is 0 and docs[] owns nothing.
 */
int store_sqlite_list_levels(store *base, const char *kind, const store_filter *filters,
			     int nfilters, int64_t before, int limit, char **docs, int64_t *seqs,
			     int *n, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	int rc;
	char shape[STORE_MAX_FILTERS + 2];
	shape[0] = kind ? 'k' : '-';
	for (int i = 0; i < nfilters; i++)
		shape[1 + i] = filters[i].text ? 't' : 'm';
	shape[1 + nfilters] = '\0';
	sqlite3_stmt *st;
	if ((rc = list_prep(s, shape, &st, err)) != 0)
		return rc;
	int p = 1;
	rc = sqlite3_bind_int64(st, p++, before ? before : INT64_MAX);
	if (!rc && kind)
		rc = store__bind_text(st, p++, kind);
	for (int i = 0; !rc && i < nfilters; i++) {
		rc = store__bind_text(st, p++, filters[i].name);
		if (!rc)
			rc = filters[i].text ? store__bind_text(st, p++, filters[i].text)
					     : sqlite3_bind_double(st, p++, filters[i].min);
	}
	if (!rc)
		rc = sqlite3_bind_int(st, p, limit);
	if (rc) {
		rc = store__bind_err(s, err, "store_list_levels");
		store__done(st);
		return rc;
	}
	int count = 0, oom = 0, step = SQLITE_DONE;
	while (count < limit && (step = sqlite3_step(st)) == SQLITE_ROW) {
		docs[count] = store__col_dup(st, 0, &oom);
		if (oom || !docs[count]) {
			rc = sf_err_set(err, SF_ENOMEM, "store_list_levels: out of memory");
			break;
		}
		if (seqs)
			seqs[count] = sqlite3_column_int64(st, 1);
		count++;
	}
	if (!rc && count < limit && step != SQLITE_DONE)
		rc = store__db_err(s, step, err, "store_list_levels");
	store__done(st);
	if (rc) {
		while (count > 0) {
			free(docs[--count]);
			docs[count] = NULL;
		}
	}
	*n = count;
	return rc;
}
