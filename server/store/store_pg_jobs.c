/*
 * store_pg_jobs.c - jobs, their events, levels, the evaluation cache and
 * uploaded resources in the PostgreSQL store (store.h; the connection, calls,
 * batches and migrations are in store_pg.c, whose opening comment gives
 * the design).
 *
 * A job transition is one UPDATE whose WHERE admits only the states the
 * move starts from, so that of two nodes racing on a job (a cancel and a
 * finishing worker) exactly one wins; only when it matched nothing does a
 * second statement read the state, to say why. A fenced outcome adds the
 * fence to that WHERE (FENCE()): a node whose lease was lost matches
 * nothing and gets STORE_LOST. Claims and rescues lock their rows with FOR
 * UPDATE SKIP LOCKED, so nodes never take the same job twice nor wait on
 * one another. A success and its levels are one transaction. Batches of
 * rows (a level's tags, a search's evaluations, a job's events) travel as
 * one array parameter each; an append of events holds the job's row FOR
 * SHARE, so a claim or a rescue of the job cannot slip between its fence
 * check and its insert.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_pg_int.h"

/* The columns job_from_row() reads, in its order. */
#define JOB_COLS                                                                                \
	"id, seq, kind, params, seed, state, created_ms, started_ms, finished_ms, generation, " \
	"generations, best, error, level_ids, attempt, lost, lease_owner, lease_until, "       \
	"cancel_requested::int"

/* Sets a job back to queued without a trace of its run. */
#define REQUEUE_SET                                                                           \
	"state = 'queued', started_ms = NULL, generation = 0, generations = 0, best = NULL, " \
	"lease_owner = NULL, lease_until = NULL"

/*
 * store_job_requeue(): REQUEUE_SET, but a job whose cancel was requested
 * becomes cancelled (store.h): queued, nobody would claim it.
 */
#define REQUEUE_OR_CANCEL_SET                                                                  \
	"state = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'queued' END, "              \
	"finished_ms = CASE WHEN cancel_requested THEN " NOW_MS " END, started_ms = NULL, "    \
	"generation = 0, generations = 0, best = NULL, lease_owner = NULL, lease_until = NULL"

/*
 * The fence of an outcome (store.h): parameters $o (the owner, NULL for an
 * unfenced call) and $a (the attempt) admit only the job running under
 * them.
 */
#define FENCE(o, a)                                                                  \
	" AND ($" o "::text IS NULL OR (state = 'running' AND lease_owner = $" o \
	" AND attempt = $" a "::int))"

static const char *const state_names[JOB_CANCELLED + 1] = { "queued", "running", "succeeded",
							    "failed", "cancelled" };

/* ---- jobs ---- */

/* Fills `job` from row `row` of JOB_COLS; on failure `job` owns nothing. */
static int job_from_row(const PGresult *res, int row, store_job *job, sf_err *err)
{
	int oom = 0;
	memset(job, 0, sizeof *job);
	snprintf(job->id, sizeof job->id, "%s", PQgetvalue(res, row, 0));
	job->seq = store_pg__col_i64(res, row, 1);
	job->kind = store_pg__col_dup(res, row, 2, &oom);
	job->params = store_pg__col_dup(res, row, 3, &oom);
	int64_t seed = store_pg__col_i64(res, row, 4);
	memcpy(&job->seed, &seed, sizeof job->seed); /* stored bit for bit */
	int state = job_state_parse(PQgetvalue(res, row, 5));
	job->created_ms = store_pg__col_i64(res, row, 6);
	job->started_ms = store_pg__col_i64(res, row, 7); /* NULL reads as 0 */
	job->finished_ms = store_pg__col_i64(res, row, 8);
	job->generation = (int)store_pg__col_i64(res, row, 9);
	job->generations = (int)store_pg__col_i64(res, row, 10);
	job->best = store_pg__col_f64(res, row, 11);
	job->error = store_pg__col_dup(res, row, 12, &oom);
	job->level_ids = store_pg__col_dup(res, row, 13, &oom);
	job->attempt = (int)store_pg__col_i64(res, row, 14);
	job->lost = (int)store_pg__col_i64(res, row, 15);
	snprintf(job->lease_owner, sizeof job->lease_owner, "%s", PQgetvalue(res, row, 16));
	job->lease_until_ms = store_pg__col_i64(res, row, 17);
	job->cancel_requested = store_pg__col_i64(res, row, 18) != 0;
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

/*
 * Whether `s` is valid UTF-8 as PostgreSQL checks it (store__utf8_valid(),
 * in store.c). Every text the database holds is; a key that is not (a path
 * segment such as %FF, which SQLite simply does not find) is refused by the
 * server with SQLSTATE 22021 before the query runs, so lookups check first
 * and answer "none" themselves.
 */
static int utf8_valid(const char *s)
{
	return store__utf8_valid(s);
}

/* Reads job `id`: 1 and *job filled, 0 when there is none (job untouched), or a negative code. */
static int job_get(store_pg *p, const char *id, store_job *job, sf_err *err)
{
	if (!utf8_valid(id))
		return 0; /* no job has such an id */
	const char *params[] = { id };
	PGresult *res;
	int rc = store_pg__run(p, &res, NULL, err, "reading a job",
			       "SELECT " JOB_COLS " FROM jobs WHERE id = $1", 1, params);
	if (rc)
		return rc;
	if (PQntuples(res) > 0) {
		store_job found;
		rc = job_from_row(res, 0, &found, err);
		if (rc == 0) {
			*job = found;
			rc = 1;
		}
	}
	PQclear(res);
	return rc;
}

/*
 * One try of store_insert_job() with a key, inside the call's transaction:
 * 0 inserted (job->seq and created_ms set), 1 the earlier job (in
 * *earlier), or a negative code. *race is set when another connection
 * recorded the same key meanwhile: a retry then finds it.
 */
static int insert_keyed(store_pg *p, store_job *job, const char *key, const char *hash,
			const char *seed, store_job *earlier, int *race, sf_err *err)
{
	const char *kp[] = { key };
	PGresult *res;
	int rc = store_pg__run(p, &res, NULL, err, "store_insert_job: reading the Idempotency-Key",
			       "SELECT request_hash, job_id FROM idempotency_keys WHERE key = $1",
			       1, kp);
	if (rc)
		return rc;
	if (PQntuples(res) > 0) {
		int same = !strcmp(PQgetvalue(res, 0, 0), hash);
		char job_id[sizeof job->id];
		snprintf(job_id, sizeof job_id, "%s", PQgetvalue(res, 0, 1));
		PQclear(res);
		if (!same)
			return sf_err_set(err, SF_EINVAL,
					  "Idempotency-Key reused with a different body");
		rc = job_get(p, job_id, earlier, err);
		if (rc == 0) /* the foreign key makes this impossible short of corruption */
			rc = sf_err_set(err, SF_ESYS,
					"Idempotency-Key names job %s, which is missing", job_id);
		return rc;
	}
	PQclear(res);
	const char *jp[] = { job->id, job->kind, job->params, seed };
	if ((rc = store_pg__run(p, &res, NULL, err, "store_insert_job: inserting the job",
				"INSERT INTO jobs (id, kind, params, seed, state) "
				"VALUES ($1, $2, $3, $4, 'queued') RETURNING seq, created_ms",
				4, jp)))
		return rc;
	job->seq = store_pg__col_i64(res, 0, 0);
	job->created_ms = store_pg__col_i64(res, 0, 1);
	PQclear(res);
	const char *ip[] = { key, hash, job->id };
	PGresult *failed = NULL;
	rc = store_pg__run(
		p, &res, &failed, err, "store_insert_job: recording the Idempotency-Key",
		"INSERT INTO idempotency_keys (key, request_hash, job_id) VALUES ($1, $2, $3)", 3,
		ip);
	PQclear(res);
	*race = rc && store_pg__is_state(failed, "23505");
	PQclear(failed);
	return rc;
}

/*
 * Inserts job `job` as queued (see store.h): without a key one INSERT, with
 * one a transaction (insert_keyed()), tried again once when another node
 * recorded the same key in between. On failure nothing is written and
 * `job` is as it was.
 */
int store_pg__insert_job(store *s, store_job *job, const char *idem_key, const char *request_hash,
			 int *existing, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc;
	int64_t seed;
	memcpy(&seed, &job->seed, sizeof seed);
	char seed_text[24];
	snprintf(seed_text, sizeof seed_text, "%lld", (long long)seed);
	int64_t seq = job->seq, created = job->created_ms;
	if (idem_key) {
		for (int attempt = 0;; attempt++) {
			store_job earlier;
			int race = 0;
			rc = store_pg__call_begin(p, CALL_WRITE_TX, err, "store_insert_job");
			if (rc)
				return rc;
			int got = insert_keyed(p, job, idem_key, request_hash, seed_text, &earlier,
					       &race, err);
			rc = store_pg__call_end(p, CALL_WRITE_TX, got, err, "store_insert_job");
			if (got == 1 && rc != 1)
				store_job_clear(&earlier); /* the (empty) commit failed */
			if (rc == 1) {
				store_job_clear(job);
				*job = earlier;
				if (existing)
					*existing = 1;
				return 0;
			}
			if (!rc || !race || attempt == 1)
				break;
		}
		if (rc) {
			job->seq = seq;
			job->created_ms = created;
			return rc;
		}
	} else {
		const char *jp[] = { job->id, job->kind, job->params, seed_text };
		PGresult *res = NULL;
		if ((rc = store_pg__call_begin(p, CALL_WRITE, err, "store_insert_job")) != 0)
			return rc;
		rc = store_pg__run(p, &res, NULL, err, "store_insert_job: inserting the job",
				   "INSERT INTO jobs (id, kind, params, seed, state) "
				   "VALUES ($1, $2, $3, $4, 'queued') RETURNING seq, created_ms",
				   4, jp);
		if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_insert_job")) != 0) {
			PQclear(res);
			return rc;
		}
		job->seq = store_pg__col_i64(res, 0, 0);
		job->created_ms = store_pg__col_i64(res, 0, 1);
		PQclear(res);
	}
	return 0; /* store.c sets the rest of a new queued row */
}

int store_pg__get_job(store *s, const char *id, store_job *job, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!p || !id || !job)
		return sf_err_set(err, SF_EINVAL, "store_get_job: no store, id or job");
	int rc = store_pg__call_begin(p, CALL_READ, err, "store_get_job");
	return rc ? rc
		  : store_pg__call_end(p, CALL_READ, job_get(p, id, job, err), err,
				       "store_get_job");
}

/*
 * Lists jobs newest first: one statement whose state and kind conditions
 * fall away when their parameter is NULL (the unnamed statement is planned
 * with the values, so each shape walks its index). On failure *n is 0.
 */
int store_pg__list_jobs(store *s, int state, const char *kind, int64_t before, int limit,
			store_job *jobs, int *n, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc = store_pg__call_begin(p, CALL_READ, err, "store_list_jobs");
	if (rc)
		return rc;
	char b[24], l[16];
	snprintf(b, sizeof b, "%lld", (long long)(before ? before : INT64_MAX));
	snprintf(l, sizeof l, "%d", limit);
	const char *params[] = { b, l, state >= 0 ? state_names[state] : NULL, kind };
	PGresult *res;
	rc = store_pg__run(
		p, &res, NULL, err, "store_list_jobs",
		"SELECT " JOB_COLS " FROM jobs WHERE seq < $1 "
		"AND ($3::text IS NULL OR state = $3) AND ($4::text IS NULL OR kind = $4) "
		"ORDER BY seq DESC LIMIT $2",
		4, params);
	if ((rc = store_pg__call_end(p, CALL_READ, rc, err, "store_list_jobs")) != 0)
		return rc;
	int count = 0, rows = PQntuples(res);
	for (; count < rows && count < limit; count++)
		if ((rc = job_from_row(res, count, &jobs[count], err)) != 0)
			break;
	PQclear(res);
	if (rc) {
		while (count > 0)
			store_job_clear(&jobs[--count]);
	}
	*n = count;
	return rc;
}

/*
 * A job transition: `sql` is one UPDATE of job $1 (then `extra` parameters
 * $2...) whose WHERE admits only the states the move starts from, with
 * RETURNING; on a row it is done. A statement that can be fenced
 * (`fenceable`: its WHERE has FENCE() of the two parameters after the
 * extra ones) gets the fence `f` there (NULL: both NULL, unfenced).
 * Matching nothing, the job says why: SF_EINVAL for a missing job;
 * STORE_LOST (err untouched) when fenced; SF_ERANGE for one in another
 * state. Runs inside the caller's transaction when there is one. At most 8
 * `extra` parameters.
 */
static int transition(store_pg *p, const char *id, const char *to, const char *sql, int extra,
		      const char *const *params, int fenceable, const store_fence *f,
		      sf_err *err)
{
	if (!p || !id)
		return sf_err_set(err, SF_EINVAL, "job transition: no store or id");
	char what[80];
	snprintf(what, sizeof what, "job %.40s -> %s", id, to);
	enum { MAX_EXTRA = 8 }; /* SUCCEED_SQL's */
	const char *all[1 + MAX_EXTRA + 2] = { id };
	if (extra > MAX_EXTRA)
		return sf_err_set(err, SF_EINVAL, "%s: %d parameters, at most %d", what, extra,
				  MAX_EXTRA);
	for (int i = 0; i < extra; i++)
		all[1 + i] = params[i];
	char attempt[16];
	int n = 1 + extra;
	if (fenceable) {
		snprintf(attempt, sizeof attempt, "%d", f ? f->attempt : 0);
		all[n++] = f ? f->owner : NULL;
		all[n++] = f ? attempt : NULL;
	}
	PGresult *res;
	int rc = store_pg__run(p, &res, NULL, err, what, sql, n, all);
	if (rc)
		return rc;
	int done = PQntuples(res) > 0;
	PQclear(res);
	if (done)
		return 0;
	rc = store_pg__run(p, &res, NULL, err, what, "SELECT state FROM jobs WHERE id = $1", 1,
			   all);
	if (rc)
		return rc;
	if (PQntuples(res) == 0)
		rc = sf_err_set(err, SF_EINVAL, "job %s not found", id);
	else if (f)
		rc = STORE_LOST;
	else
		rc = sf_err_set(err, SF_ERANGE, "job %s is %s, cannot become %s", id,
				PQgetvalue(res, 0, 0), to);
	PQclear(res);
	return rc;
}

/* ready() and transition() for the moves that are one statement. */
static int move(store *s, const char *id, const char *to, const char *sql, int extra,
		const char *const *params, int fenceable, const store_fence *f, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!p || !id)
		return sf_err_set(err, SF_EINVAL, "job transition: no store or id");
	int rc = store_pg__call_begin(p, CALL_WRITE, err, "job transition");
	if (rc)
		return rc;
	rc = transition(p, id, to, sql, extra, params, fenceable, f, err);
	return store_pg__call_end(p, CALL_WRITE, rc, err, "job transition");
}

int store_pg__job_started(store *s, const char *id, sf_err *err)
{
	return move(s, id, "running",
		    "UPDATE jobs SET state = 'running', started_ms = " NOW_MS
		    " WHERE id = $1 AND state = 'queued' RETURNING 1",
		    0, NULL, 0, NULL, err);
}

int store_pg__job_progress(store *s, const char *id, int generation, int generations, double best,
			   sf_err *err)
{
	char g[16], of[16], b[32];
	snprintf(g, sizeof g, "%d", generation);
	snprintf(of, sizeof of, "%d", generations);
	store_pg__fmt_double(b, sizeof b, best);
	const char *params[] = { g, of, b };
	return move(s, id, "running (progress)",
		    "UPDATE jobs SET generation = $2, generations = $3, best = $4 "
		    "WHERE id = $1 AND state = 'running' RETURNING 1",
		    3, params, 0, NULL, err);
}

int store_pg__job_failed(store *s, const char *id, const store_fence *f, const char *error,
			 sf_err *err)
{
	if (!error)
		return sf_err_set(err, SF_EINVAL, "store_job_failed: no error message");
	const char *params[] = { error };
	return move(s, id, "failed",
		    "UPDATE jobs SET state = 'failed', finished_ms = " NOW_MS ", error = $2, "
		    "lease_owner = NULL, lease_until = NULL "
		    "WHERE id = $1 AND state IN ('queued', 'running')" FENCE("3", "4") " RETURNING 1",
		    1, params, 1, f, err);
}

int store_pg__job_cancelled(store *s, const char *id, const store_fence *f, sf_err *err)
{
	return move(s, id, "cancelled",
		    "UPDATE jobs SET state = 'cancelled', finished_ms = " NOW_MS ", "
		    "lease_owner = NULL, lease_until = NULL "
		    "WHERE id = $1 AND state IN ('queued', 'running')" FENCE("2", "3") " RETURNING 1",
		    0, NULL, 1, f, err);
}

int store_pg__job_requeue(store *s, const char *id, const store_fence *f, sf_err *err)
{
	return move(s, id, "queued",
		    "UPDATE jobs SET " REQUEUE_OR_CANCEL_SET
		    " WHERE id = $1 AND state IN ('queued', 'running')" FENCE("2", "3") " RETURNING 1",
		    0, NULL, 1, f, err);
}

/* ---- leases (store.h; store.c checked the arguments) ---- */

/*
 * The claim, one statement: the subquery locks the oldest queued job no
 * other transaction holds (SKIP LOCKED; a row another node claimed
 * meanwhile no longer matches on the recheck and is passed over), and the
 * UPDATE takes it, with one reading of the clock for started_ms and
 * lease_until.
 */
int store_pg__claim_job(store *s, const char *owner, int lease_ms, store_job *job, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc = store_pg__call_begin(p, CALL_WRITE, err, "store_claim_job");
	if (rc)
		return rc;
	char lease[16];
	snprintf(lease, sizeof lease, "%d", lease_ms);
	const char *params[] = { owner, lease };
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_claim_job",
			   "UPDATE jobs SET state = 'running', attempt = attempt + 1, "
			   "lease_owner = $1, lease_until = t.now + $2::bigint, started_ms = t.now, "
			   "generation = 0, generations = 0, best = NULL "
			   "FROM (SELECT " NOW_MS " AS now) t "
			   "WHERE seq = (SELECT seq FROM jobs WHERE state = 'queued' "
			   "AND NOT cancel_requested ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED) "
			   "RETURNING " JOB_COLS,
			   2, params);
	if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_claim_job")) != 0) {
		PQclear(res);
		return rc;
	}
	if (PQntuples(res) > 0) {
		store_job claimed;
		rc = job_from_row(res, 0, &claimed, err);
		if (rc == 0) {
			*job = claimed;
			rc = 1;
		}
	}
	PQclear(res);
	return rc;
}

/*
 * The fenced renewal, one statement: the UPDATE, and whether the job exists
 * at all (to tell STORE_LOST from an unknown id).
 */
int store_pg__job_heartbeat(store *s, const char *id, const store_fence *f, int lease_ms,
			    int generation, int generations, double best, int *cancel, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc = store_pg__call_begin(p, CALL_WRITE, err, "store_job_heartbeat");
	if (rc)
		return rc;
	char attempt[16], lease[16], g[16], of[16], b[32];
	snprintf(attempt, sizeof attempt, "%d", f->attempt);
	snprintf(lease, sizeof lease, "%d", lease_ms);
	snprintf(g, sizeof g, "%d", generation);
	snprintf(of, sizeof of, "%d", generations);
	store_pg__fmt_double(b, sizeof b, best);
	const char *params[] = { id, f->owner, attempt, lease, g, of, b };
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_job_heartbeat",
			   "WITH hb AS (UPDATE jobs SET lease_until = " NOW_MS " + $4::bigint, "
			   "generation = $5, generations = $6, best = $7 WHERE id = $1 "
			   "AND state = 'running' AND lease_owner = $2 AND attempt = $3::int "
			   "RETURNING cancel_requested::int AS c) "
			   "SELECT (SELECT c FROM hb), EXISTS (SELECT 1 FROM jobs WHERE id = $1)::int",
			   7, params);
	if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_job_heartbeat")) != 0) {
		PQclear(res);
		return rc;
	}
	int renewed = !PQgetisnull(res, 0, 0), requested = (int)store_pg__col_i64(res, 0, 0),
	    exists = (int)store_pg__col_i64(res, 0, 1);
	PQclear(res);
	if (!exists)
		return sf_err_set(err, SF_EINVAL, "job %s not found", id);
	if (!renewed)
		return STORE_LOST;
	if (cancel)
		*cancel = requested != 0;
	return 0;
}

/* What store_rescue_expired() makes of an expired job: t.now, $1 = max_lost (store.h). */
#define RESCUE_FINAL "(cancel_requested OR lost + 1 >= $1::int)"
#define RESCUE_SET                                                                             \
	"lost = lost + 1, state = CASE WHEN cancel_requested THEN 'cancelled' "                \
	"WHEN lost + 1 >= $1::int THEN 'failed' ELSE 'queued' END, "                           \
	"finished_ms = CASE WHEN " RESCUE_FINAL " THEN t.now END, "                            \
	"error = CASE WHEN NOT cancel_requested AND lost + 1 >= $1::int THEN "                 \
	"'the job lost its node ' || CAST(lost + 1 AS text) || "                               \
	"' times (its lease expired each time); it is not retried' END, "                      \
	"started_ms = CASE WHEN " RESCUE_FINAL " THEN started_ms END, "                        \
	"generation = CASE WHEN " RESCUE_FINAL " THEN generation ELSE 0 END, "                 \
	"generations = CASE WHEN " RESCUE_FINAL " THEN generations ELSE 0 END, "               \
	"best = CASE WHEN " RESCUE_FINAL " THEN best END, lease_owner = NULL, lease_until = NULL"

/*
 * The rescue, one statement: the expired leases, oldest first, at most $2,
 * locked with SKIP LOCKED (a node rescuing at the same time takes the
 * others, and a row renewed meanwhile fails the recheck), then moved.
 */
int store_pg__rescue_expired(store *s, int max_lost, store_rescued *out, int cap, int *n,
			     sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc = store_pg__call_begin(p, CALL_WRITE, err, "store_rescue_expired");
	if (rc)
		return rc;
	char max[16], limit[16];
	snprintf(max, sizeof max, "%d", max_lost);
	snprintf(limit, sizeof limit, "%d", cap);
	const char *params[] = { max, limit };
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_rescue_expired",
			   "WITH t AS (SELECT " NOW_MS " AS now), "
			   "picked AS (SELECT seq FROM jobs, t WHERE state = 'running' "
			   "AND lease_until < t.now ORDER BY lease_until LIMIT $2::int "
			   "FOR UPDATE OF jobs SKIP LOCKED) "
			   "UPDATE jobs SET " RESCUE_SET " FROM picked, t WHERE jobs.seq = picked.seq "
			   "RETURNING jobs.id, jobs.state, jobs.attempt, jobs.lost, jobs.kind, jobs.seed",
			   2, params);
	if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_rescue_expired")) != 0) {
		PQclear(res);
		return rc;
	}
	int rows = PQntuples(res), count = 0;
	for (; count < rows && count < cap; count++) {
		store_rescued *r = &out[count];
		snprintf(r->id, sizeof r->id, "%s", PQgetvalue(res, count, 0));
		int state = job_state_parse(PQgetvalue(res, count, 1));
		r->state = state < 0 ? JOB_QUEUED : (job_state)state;
		r->attempt = (int)store_pg__col_i64(res, count, 2);
		r->lost = (int)store_pg__col_i64(res, count, 3);
		snprintf(r->kind, sizeof r->kind, "%s", PQgetvalue(res, count, 4));
		int64_t seed = store_pg__col_i64(res, count, 5);
		memcpy(&r->seed, &seed, sizeof r->seed); /* stored bit for bit */
	}
	PQclear(res);
	*n = count;
	return 0;
}

/*
 * The cancel request, one statement: the UPDATE of a queued or running job,
 * and the job's state as this statement's snapshot saw it. When the UPDATE
 * matched nothing but that state is queued or running, the job moved
 * between the two (it finished meanwhile): asked again, the next statement
 * sees where it went.
 */
int store_pg__request_cancel(store *s, const char *id, job_state *state, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	const char *params[] = { id };
	if (id && !utf8_valid(id)) /* no job has such an id (see utf8_valid) */
		return sf_err_set(err, SF_EINVAL, "job %s not found", id);
	for (int attempt = 0;; attempt++) {
		int rc = store_pg__call_begin(p, CALL_WRITE, err, "store_request_cancel");
		if (rc)
			return rc;
		PGresult *res = NULL;
		rc = store_pg__run(
			p, &res, NULL, err, "store_request_cancel",
			"WITH c AS (UPDATE jobs SET "
			"state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END, "
			"finished_ms = CASE WHEN state = 'queued' THEN " NOW_MS " ELSE finished_ms END, "
			"cancel_requested = cancel_requested OR state = 'running' "
			"WHERE id = $1 AND state IN ('queued', 'running') RETURNING state) "
			"SELECT (SELECT state FROM c), (SELECT state FROM jobs WHERE id = $1)",
			1, params);
		if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_request_cancel")) != 0) {
			PQclear(res);
			return rc;
		}
		int moved = !PQgetisnull(res, 0, 0);
		int now = job_state_parse(PQgetvalue(res, 0, moved ? 0 : 1));
		int found = moved || !PQgetisnull(res, 0, 1);
		PQclear(res);
		if (!found)
			return sf_err_set(err, SF_EINVAL, "job %s not found", id);
		if (now < 0)
			return sf_err_set(err, SF_ERANGE, "job %s has an unknown state", id);
		if (!moved && (now == JOB_QUEUED || now == JOB_RUNNING) && attempt < 3)
			continue;
		*state = (job_state)now;
		return moved;
	}
}

/* ---- job events (store.h; store.c checked the arguments) ---- */

/*
 * The append, one statement: the job's row, fenced (FENCE()) and locked FOR
 * SHARE, so that a claim, a rescue or an outcome of the job waits for this
 * append to commit, and this one, waiting for theirs, checks the fence
 * against what they wrote; then the events, the first of two with one id
 * in the call, not stored yet (ON CONFLICT DO NOTHING keeps the first data
 * of an id), inserted only when the fence held. $1 the job, $2 the ids and
 * $3 the data as arrays, the fence $4 owner and $5 attempt (both NULL when
 * unfenced). One row: whether the fence held, whether the job exists.
 */
static const char APPEND_EVENTS_SQL[] =
	"WITH job AS (SELECT 1 FROM jobs WHERE id = $1" FENCE("4", "5") " FOR SHARE), "
	"given AS (SELECT DISTINCT ON (id) id, data FROM unnest($2::bigint[], $3::text[]) "
	"WITH ORDINALITY AS e (id, data, ord) ORDER BY id, ord), "
	"ins AS (INSERT INTO job_events (job_id, id, data) SELECT $1, id, data FROM given "
	"WHERE EXISTS (SELECT 1 FROM job) ON CONFLICT (job_id, id) DO NOTHING RETURNING 1) "
	"SELECT EXISTS (SELECT 1 FROM job)::int, EXISTS (SELECT 1 FROM jobs WHERE id = $1)::int";

/* APPEND_EVENTS_SQL, one round trip: 0, STORE_LOST (err untouched), or a code. */
int store_pg__append_job_events(store *s, const char *id, const store_fence *f,
				const store_event *events, int n, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!utf8_valid(id)) /* no job has such an id (see utf8_valid) */
		return sf_err_set(err, SF_EINVAL, "job %s not found", id);
	pg_text ids = { 0 }, data = { 0 };
	store_pg__text_add(&ids, "{", 1);
	store_pg__text_add(&data, "{", 1);
	for (int i = 0; i < n; i++) {
		char num[24];
		snprintf(num, sizeof num, "%lld", (long long)events[i].id);
		store_pg__text_elem(&ids, num);
		store_pg__text_elem(&data, events[i].data);
	}
	store_pg__text_add(&ids, "}", 1);
	store_pg__text_add(&data, "}", 1);
	int rc = ids.oom || data.oom
			 ? sf_err_set(err, SF_ENOMEM, "store_append_job_events: out of memory")
			 : store_pg__call_begin(p, CALL_WRITE, err, "store_append_job_events");
	if (rc) {
		free(ids.s);
		free(data.s);
		return rc;
	}
	char attempt[16];
	snprintf(attempt, sizeof attempt, "%d", f ? f->attempt : 0);
	const char *params[] = { id, ids.s, data.s, f ? f->owner : NULL, f ? attempt : NULL };
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_append_job_events", APPEND_EVENTS_SQL, 5,
			   params);
	free(ids.s);
	free(data.s);
	if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_append_job_events")) != 0) {
		PQclear(res);
		return rc;
	}
	int held = (int)store_pg__col_i64(res, 0, 0), exists = (int)store_pg__col_i64(res, 0, 1);
	PQclear(res);
	if (!exists)
		return sf_err_set(err, SF_EINVAL, "job %s not found", id);
	return held ? 0 : STORE_LOST;
}

/* Deletes the events of jobs finished more than age_ms ago (store.h); see store_sqlite.c's SQL. */
int store_pg__prune_job_events(store *s, int64_t age_ms, int64_t *deleted, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc = store_pg__call_begin(p, CALL_WRITE, err, "store_prune_job_events");
	if (rc)
		return rc;
	char age[24];
	snprintf(age, sizeof age, "%lld", (long long)age_ms);
	const char *params[] = { age };
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_prune_job_events",
			   "DELETE FROM job_events WHERE job_id IN (SELECT DISTINCT e.job_id "
			   "FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.state IN "
			   "('succeeded', 'failed', 'cancelled') AND j.finished_ms < " NOW_MS
			   " - $1::bigint)",
			   1, params);
	if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_prune_job_events")) != 0) {
		PQclear(res);
		return rc;
	}
	*deleted = strtoll(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return 0;
}

/* The events of job `id` after `after`, oldest first, at most `cap`; on failure none. */
int store_pg__job_events(store *s, const char *id, int64_t after, int cap, store_event *out, int *n,
			 sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!utf8_valid(id))
		return 0; /* no job has such an id (see utf8_valid) */
	int rc = store_pg__call_begin(p, CALL_READ, err, "store_job_events");
	if (rc)
		return rc;
	char from[24], limit[16];
	snprintf(from, sizeof from, "%lld", (long long)after);
	snprintf(limit, sizeof limit, "%d", cap);
	const char *params[] = { id, from, limit };
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_job_events",
			   "SELECT id, data FROM job_events WHERE job_id = $1 AND id > $2::bigint "
			   "ORDER BY id LIMIT $3::int",
			   3, params);
	if ((rc = store_pg__call_end(p, CALL_READ, rc, err, "store_job_events")) != 0) {
		PQclear(res);
		return rc;
	}
	int count = 0, oom = 0, rows = PQntuples(res);
	for (; count < rows && count < cap; count++) {
		out[count].id = store_pg__col_i64(res, count, 0);
		out[count].data = store_pg__col_dup(res, count, 1, &oom);
		if (!out[count].data) {
			rc = sf_err_set(err, SF_ENOMEM, "store_job_events: out of memory");
			break;
		}
	}
	PQclear(res);
	if (rc) {
		while (count > 0)
			store_event_clear(&out[--count]);
	}
	*n = count;
	return rc;
}

/*
 * running -> succeeded with the levels, as one statement (one round trip,
 * atomic): the job's UPDATE, and only when it matched, each level whose id
 * is not stored yet, in the order given (the first of two entries with one
 * id wins, as do the documents stored before), and the tags of the levels
 * inserted. $1 the job, $2 level_ids; the levels as arrays $3 id, $4 kind,
 * $5 doc; their tags as arrays $6 the level's position (1-based), $7 name,
 * $8 text, $9 num; the fence $10 owner and $11 attempt (both NULL when
 * unfenced). Returns a row only when the job moved.
 */
static const char SUCCEED_SQL[] =
	"WITH job AS (UPDATE jobs SET state = 'succeeded', finished_ms = " NOW_MS ", "
	"level_ids = $2, lease_owner = NULL, lease_until = NULL "
	"WHERE id = $1 AND state = 'running'" FENCE("10", "11") " RETURNING 1), "
	"given AS (SELECT * FROM unnest($3::text[], $4::text[], $5::text[]) "
	"WITH ORDINALITY AS l (id, kind, doc, ord)), "
	"firsts AS (SELECT DISTINCT ON (id) id, kind, doc, ord FROM given ORDER BY id, ord), "
	"ins AS (INSERT INTO levels (id, kind, doc) SELECT id, kind, doc FROM firsts "
	"WHERE EXISTS (SELECT 1 FROM job) ORDER BY ord "
	"ON CONFLICT (id) DO NOTHING RETURNING id), "
	"tags AS (INSERT INTO level_tags (level_id, name, text, num) "
	"SELECT f.id, t.name, t.text, t.num FROM unnest($6::bigint[], $7::text[], $8::text[], "
	"$9::float8[]) AS t (ord, name, text, num) "
	"JOIN firsts f ON f.ord = t.ord JOIN ins ON ins.id = f.id) "
	"SELECT 1 FROM job";

/* The array literals of SUCCEED_SQL's $3..$9, in arrays[0..6]; 0 or SF_ENOMEM (all freed). */
static int succeed_arrays(const store_level *levels, int nlevels, pg_text arrays[7], sf_err *err)
{
	for (int a = 0; a < 7; a++) {
		arrays[a] = (pg_text){ 0 };
		store_pg__text_add(&arrays[a], "{", 1);
	}
	for (int i = 0; i < nlevels; i++) {
		const store_level *lv = &levels[i];
		store_pg__text_elem(&arrays[0], lv->id);
		store_pg__text_elem(&arrays[1], lv->kind);
		store_pg__text_elem(&arrays[2], lv->doc);
		for (int t = 0; t < lv->ntags; t++) {
			char ord[16], num[32];
			snprintf(ord, sizeof ord, "%d", i + 1);
			store_pg__fmt_double(num, sizeof num, lv->tag_num[t]);
			store_pg__text_elem(&arrays[3], ord);
			store_pg__text_elem(&arrays[4], lv->tag_name[t]);
			store_pg__text_elem(&arrays[5], lv->tag_text[t]);
			store_pg__text_elem(&arrays[6],
					    lv->tag_text[t] && !lv->tag_has_num[t] ? NULL : num);
		}
	}
	int oom = 0;
	for (int a = 0; a < 7; a++) {
		store_pg__text_add(&arrays[a], "}", 1);
		oom |= arrays[a].oom;
	}
	if (!oom)
		return 0;
	for (int a = 0; a < 7; a++)
		free(arrays[a].s);
	return sf_err_set(err, SF_ENOMEM, "store_job_succeeded: out of memory");
}

/*
 * running -> succeeded with its levels (store.h): SUCCEED_SQL, one
 * statement, so a racing cancel either waits for it and then finds the
 * job succeeded, or wins and leaves nothing of it. On failure nothing is
 * written; a tag named twice in one level fails the whole statement, and
 * the message names the level (the server's detail).
 */
int store_pg__job_succeeded(store *s, const char *id, const store_fence *f,
			    const store_level *levels, int nlevels, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc;
	if (!id)
		return sf_err_set(err, SF_EINVAL, "job transition: no store or id");
	char *ids = store__level_ids_json(levels, nlevels);
	if (!ids)
		return sf_err_set(
			err, SF_EINVAL,
			"store_job_succeeded: level ids are not UTF-8 (or out of memory)");
	pg_text arrays[7];
	if ((rc = succeed_arrays(levels, nlevels, arrays, err)) != 0) {
		free(ids);
		return rc;
	}
	if ((rc = store_pg__call_begin(p, CALL_WRITE, err, "store_job_succeeded")) == 0) {
		const char *params[] = { ids,         arrays[0].s, arrays[1].s, arrays[2].s,
					 arrays[3].s, arrays[4].s, arrays[5].s, arrays[6].s };
		rc = transition(p, id, "succeeded", SUCCEED_SQL, 8, params, 1, f, err);
		rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_job_succeeded");
	}
	for (int a = 0; a < 7; a++)
		free(arrays[a].s);
	free(ids);
	return rc;
}

/*
 * One statement: cancels the jobs whose cancel was requested, requeues the
 * other running jobs (a data-modifying WITH runs to completion) and lists
 * the other queued and running ones as they were before it, oldest first.
 * *ids is NULL when *n is 0; on failure nothing is changed.
 */
int store_pg__pending_jobs(store *s, char (**ids)[40], size_t *n, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (ids)
		*ids = NULL;
	if (n)
		*n = 0;
	if (!p || !ids || !n)
		return sf_err_set(err, SF_EINVAL, "store_pending_jobs: no store, ids or n");
	int rc = store_pg__call_begin(p, CALL_WRITE, err, "store_pending_jobs");
	if (rc)
		return rc;
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_pending_jobs",
			   "WITH cancelled AS (UPDATE jobs SET state = 'cancelled', finished_ms = " NOW_MS
			   ", lease_owner = NULL, lease_until = NULL WHERE state IN ('queued', "
			   "'running') AND cancel_requested RETURNING 1), "
			   "requeued AS (UPDATE jobs SET " REQUEUE_SET
			   " WHERE state = 'running' AND NOT cancel_requested RETURNING 1) "
			   "SELECT id FROM jobs WHERE state IN ('queued', 'running') "
			   "AND NOT cancel_requested ORDER BY seq",
			   0, NULL);
	if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_pending_jobs")) != 0) {
		PQclear(res);
		return rc;
	}
	size_t count = (size_t)PQntuples(res);
	char(*list)[40] = count ? calloc(count, sizeof *list) : NULL;
	if (count && !list) {
		PQclear(res);
		/* The requeue is committed: it is what a retry would do anyway. */
		return sf_err_set(err, SF_ENOMEM, "store_pending_jobs: out of memory");
	}
	for (size_t i = 0; i < count; i++)
		snprintf(list[i], sizeof *list, "%s", PQgetvalue(res, (int)i, 0));
	PQclear(res);
	*ids = list;
	*n = count;
	return 0;
}

int store_pg__count_jobs(store *s, int64_t counts[5], sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!p || !counts)
		return sf_err_set(err, SF_EINVAL, "store_count_jobs: no store or counts");
	for (int i = JOB_QUEUED; i <= JOB_CANCELLED; i++)
		counts[i] = 0;
	int rc = store_pg__call_begin(p, CALL_READ, err, "store_count_jobs");
	if (rc)
		return rc;
	PGresult *res;
	rc = store_pg__run(p, &res, NULL, err, "store_count_jobs",
			   "SELECT state, count(*) FROM jobs GROUP BY state", 0, NULL);
	if ((rc = store_pg__call_end(p, CALL_READ, rc, err, "store_count_jobs")) != 0)
		return rc;
	for (int i = 0; i < PQntuples(res); i++) {
		int state = job_state_parse(PQgetvalue(res, i, 0));
		if (state >= 0)
			counts[state] = store_pg__col_i64(res, i, 1);
	}
	PQclear(res);
	return 0;
}

/* ---- levels ---- */

/* Runs a one-row, one-column read; *doc is a copy of the value or NULL without a row. */
static int read_doc(store_pg *p, const char *what, const char *sql, int n,
		    const char *const *params, char **doc, sf_err *err)
{
	int rc = store_pg__call_begin(p, CALL_READ, err, what);
	if (rc)
		return rc;
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, what, sql, n, params);
	if ((rc = store_pg__call_end(p, CALL_READ, rc, err, what)) != 0) {
		PQclear(res);
		return rc;
	}
	int oom = 0;
	if (PQntuples(res) > 0)
		*doc = store_pg__col_dup(res, 0, 0, &oom);
	PQclear(res);
	return oom ? sf_err_set(err, SF_ENOMEM, "%s: out of memory", what) : 0;
}

int store_pg__get_level(store *s, const char *id, char **doc, sf_err *err)
{
	if (doc)
		*doc = NULL;
	if (!s || !id || !doc)
		return sf_err_set(err, SF_EINVAL, "store_get_level: no store, id or doc");
	if (!utf8_valid(id))
		return 0; /* no level has such an id (see utf8_valid) */
	const char *params[] = { id };
	return read_doc((store_pg *)s, "store_get_level", "SELECT doc FROM levels WHERE id = $1", 1,
			params, doc, err);
}

/*
 * Lists level documents newest first (see store.h). The statement's text
 * is assembled from fixed fragments and parameter numbers: $1 before,
 * [kind], per filter its name and its text or min, then the limit; each
 * filter an IN (subquery) over a (name, value, level_id) index. On failure
 * *n is 0 and docs[] owns nothing.
 */
int store_pg__list_levels(store *s, const char *kind, const store_filter *filters, int nfilters,
			  int64_t before, int limit, char **docs, int64_t *seqs, int *n,
			  sf_err *err)
{
	store_pg *p = (store_pg *)s;
	int rc;
	/* A text that is not UTF-8 matches nothing stored (see utf8_valid). */
	for (int i = 0; i < nfilters; i++) {
		if (filters[i].text && !utf8_valid(filters[i].text)) {
			*n = 0;
			return 0;
		}
	}
	if ((rc = store_pg__call_begin(p, CALL_READ, err, "store_list_levels")) != 0)
		return rc;
	enum { MAXP = 3 + 2 * STORE_MAX_FILTERS };
	const char *params[MAXP];
	char values[MAXP][32];
	char sql[160 + STORE_MAX_FILTERS * 96];
	int np = 0;
	snprintf(values[np], sizeof values[np], "%lld", (long long)(before ? before : INT64_MAX));
	params[np] = values[np];
	np++;
	size_t len =
		(size_t)snprintf(sql, sizeof sql, "SELECT doc, seq FROM levels WHERE seq < $1");
	if (kind) {
		params[np++] = kind;
		len += (size_t)snprintf(sql + len, sizeof sql - len, " AND kind = $%d", np);
	}
	for (int i = 0; i < nfilters; i++) {
		const store_filter *f = &filters[i];
		params[np++] = f->name;
		if (f->text) {
			params[np++] = f->text;
		} else {
			store_pg__fmt_double(values[np], sizeof values[np], f->min);
			params[np] = values[np];
			np++;
		}
		len += (size_t)snprintf(sql + len, sizeof sql - len,
					" AND id IN (SELECT level_id FROM level_tags WHERE "
					"name = $%d AND %s $%d)",
					np - 1, f->text ? "text =" : "num >=", np);
	}
	snprintf(values[np], sizeof values[np], "%d", limit);
	params[np] = values[np];
	np++;
	snprintf(sql + len, sizeof sql - len, " ORDER BY seq DESC LIMIT $%d", np);
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_list_levels", sql, np, params);
	if ((rc = store_pg__call_end(p, CALL_READ, rc, err, "store_list_levels")) != 0) {
		PQclear(res);
		return rc;
	}
	int count = 0, oom = 0, rows = PQntuples(res);
	for (; count < rows && count < limit; count++) {
		docs[count] = store_pg__col_dup(res, count, 0, &oom);
		if (oom || !docs[count]) {
			rc = sf_err_set(err, SF_ENOMEM, "store_list_levels: out of memory");
			break;
		}
		if (seqs)
			seqs[count] = store_pg__col_i64(res, count, 1);
	}
	PQclear(res);
	if (rc) {
		while (count > 0) {
			free(docs[--count]);
			docs[count] = NULL;
		}
	}
	*n = count;
	return rc;
}

/* ---- the evaluation cache ---- */

int store_pg__get_evaluation(store *s, const char *lattice, const char *sequence, char **doc,
			     sf_err *err)
{
	if (doc)
		*doc = NULL;
	if (!s || !lattice || !sequence || !doc)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_evaluation: no store, lattice, sequence or doc");
	const char *params[] = { lattice, sequence };
	return read_doc((store_pg *)s, "store_get_evaluation",
			"SELECT doc FROM evaluations WHERE lattice = $1 AND sequence = $2", 2,
			params, doc, err);
}

/* The keys (and, with `docs`, the documents) of evals[0..n-1] as array literals. */
static int eval_arrays(const store_evaluation *evals, size_t n, int docs, pg_text *lat,
		       pg_text *seq, pg_text *doc)
{
	store_pg__text_add(lat, "{", 1);
	store_pg__text_add(seq, "{", 1);
	store_pg__text_add(doc, "{", 1);
	for (size_t i = 0; i < n; i++) {
		store_pg__text_elem(lat, evals[i].lattice);
		store_pg__text_elem(seq, evals[i].sequence);
		if (docs)
			store_pg__text_elem(doc, evals[i].doc);
	}
	store_pg__text_add(lat, "}", 1);
	store_pg__text_add(seq, "}", 1);
	store_pg__text_add(doc, "}", 1);
	return lat->oom || seq->oom || doc->oom;
}

/* Runs `sql` and reads the one number it returns into *value. */
static int run_i64(store_pg *p, sf_err *err, const char *what, const char *sql, int n,
		   const char *const *params, int64_t *value)
{
	PGresult *res;
	int rc = store_pg__run(p, &res, NULL, err, what, sql, n, params);
	if (rc)
		return rc;
	if (PQntuples(res) != 1)
		rc = sf_err_set(err, SF_ESYS, "%s: the evaluation cache's counters are missing",
				what);
	else
		*value = store_pg__col_i64(res, 0, 0);
	PQclear(res);
	return rc;
}

/*
 * Inside a write call: evicts the least recently used entries above
 * eval_max, given `entries` now, and counts them; *evicted (may be NULL)
 * receives how many.
 */
static int eval_evict(store_pg *p, int64_t entries, int64_t *evicted, sf_err *err, const char *what)
{
	int64_t max = p->base.eval_max, n = max && entries > max ? entries - max : 0, done = 0;
	char limit[24];
	snprintf(limit, sizeof limit, "%lld", (long long)n);
	const char *params[] = { limit };
	int rc = n ? run_i64(p, err, what,
			     "WITH d AS (DELETE FROM evaluations WHERE (lattice, sequence) IN "
			     "(SELECT lattice, sequence FROM evaluations ORDER BY used LIMIT $1) "
			     "RETURNING 1), c AS (SELECT count(*) AS n FROM d) "
			     "UPDATE evaluation_cache SET entries = entries - c.n, "
			     "evictions = evictions + c.n FROM c WHERE one = 1 RETURNING c.n",
			     1, params, &done)
		   : 0;
	if (evicted)
		*evicted = rc ? 0 : done;
	return rc;
}

/*
 * Puts (or, `touch`, marks used) evals[0..n-1] in one transaction. The
 * clock's row is updated first, which makes every writer of the cache wait
 * for the one before (migrations/postgres/0004_evaluation_lru.sql): the
 * count of new entries read next is then exact. Entry i takes tick
 * start + i (WITH ORDINALITY counts from 1); of a key that comes twice the
 * last wins (ON CONFLICT DO UPDATE may not touch a row twice, and an
 * UPDATE ... FROM would pick any of the two), as on SQLite.
 */
static int eval_write_all(store_pg *p, const store_evaluation *evals, size_t n, int touch,
			  const char *what, sf_err *err)
{
	int rc = store_pg__call_begin(p, CALL_WRITE_TX, err, what);
	if (rc)
		return rc;
	pg_text lat = { 0 }, seq = { 0 }, doc = { 0 };
	char count[24], start[24];
	int64_t clock = 0, entries = 0;
	snprintf(count, sizeof count, "%zu", n);
	const char *tick[] = { count };
	if (eval_arrays(evals, n, !touch, &lat, &seq, &doc))
		rc = sf_err_set(err, SF_ENOMEM, "%s: out of memory", what);
	else
		rc = run_i64(p, err, what,
			     "UPDATE evaluation_cache SET clock = clock + $1 WHERE one = 1 "
			     "RETURNING clock",
			     1, tick, &clock);
	snprintf(start, sizeof start, "%lld", (long long)(clock - (int64_t)n));
	const char *keys[] = { lat.s, seq.s, start }, *put[] = { lat.s, seq.s, doc.s, start };
	if (!rc && touch)
		rc = store_pg__run0(p, err, what,
				    "UPDATE evaluations AS v SET used = $3::bigint + k.i "
				    "FROM (SELECT l, s, max(i) AS i FROM unnest($1::text[], "
				    "$2::text[]) WITH ORDINALITY AS u (l, s, i) GROUP BY l, s) "
				    "AS k WHERE v.lattice = k.l AND v.sequence = k.s",
				    3, keys);
	if (!rc && !touch)
		rc = run_i64(p, err, what,
			     "UPDATE evaluation_cache SET entries = entries + (SELECT count(*) "
			     "FROM (SELECT DISTINCT l, s FROM unnest($1::text[], $2::text[]) AS "
			     "k (l, s)) AS k WHERE NOT EXISTS (SELECT 1 FROM evaluations AS v "
			     "WHERE v.lattice = k.l AND v.sequence = k.s)) WHERE one = 1 "
			     "RETURNING entries",
			     2, keys, &entries);
	if (!rc && !touch)
		rc = store_pg__run0(
			p, err, what,
			"INSERT INTO evaluations (lattice, sequence, doc, used) "
			"SELECT DISTINCT ON (l, s) l, s, d, $4::bigint + i FROM unnest($1::text[], "
			"$2::text[], $3::text[]) WITH ORDINALITY AS e (l, s, d, i) "
			"ORDER BY l, s, i DESC ON CONFLICT (lattice, sequence) DO UPDATE SET "
			"doc = excluded.doc, created_ms = excluded.created_ms, used = "
			"excluded.used",
			4, put);
	if (!rc && !touch)
		rc = eval_evict(p, entries, NULL, err, what);
	free(lat.s);
	free(seq.s);
	free(doc.s);
	return store_pg__call_end(p, CALL_WRITE_TX, rc, err, what);
}

/* Stores (or replaces) evals[0..n-1], all or nothing (store.h). */
int store_pg__put_evaluations(store *s, const store_evaluation *evals, size_t n, sf_err *err)
{
	return eval_write_all((store_pg *)s, evals, n, 0, "store_put_evaluations", err);
}

int store_pg__touch_evaluations(store *s, const store_evaluation *keys, size_t n, sf_err *err)
{
	return eval_write_all((store_pg *)s, keys, n, 1, "store_touch_evaluations", err);
}

int store_pg__trim_evaluations(store *s, int64_t *evicted, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	const char *what = "store_limit_evaluations";
	int rc = store_pg__call_begin(p, CALL_WRITE_TX, err, what);
	if (rc)
		return rc;
	int64_t entries = 0;
	/* The row's lock first, as every writer of the cache takes it. */
	rc = run_i64(p, err, what,
		     "UPDATE evaluation_cache SET clock = clock WHERE one = 1 RETURNING entries", 0,
		     NULL, &entries);
	if (!rc)
		rc = eval_evict(p, entries, evicted, err, what);
	return store_pg__call_end(p, CALL_WRITE_TX, rc, err, what);
}

int store_pg__evaluation_stats(store *s, int64_t *entries, int64_t *evictions, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	const char *what = "store_evaluation_stats";
	int rc = store_pg__call_begin(p, CALL_READ, err, what);
	if (rc)
		return rc;
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, what,
			   "SELECT entries, evictions FROM evaluation_cache WHERE one = 1", 0,
			   NULL);
	if (!rc && PQntuples(res) != 1)
		rc = sf_err_set(err, SF_ESYS, "%s: the evaluation cache's counters are missing",
				what);
	if (!rc) {
		*entries = store_pg__col_i64(res, 0, 0);
		*evictions = store_pg__col_i64(res, 0, 1);
	}
	PQclear(res);
	return store_pg__call_end(p, CALL_READ, rc, err, what);
}

/* ---- uploaded resources ---- */

/* One INSERT ... ON CONFLICT DO NOTHING: 0 stored, STORE_EXISTS (err untouched), or a code. */
int store_pg__put_resource(store *s, const char *type, const char *name, const char *format,
			   const char *body, const char *summary, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!p || !type || !name || !format || !body)
		return sf_err_set(err, SF_EINVAL,
				  "store_put_resource: no store, type, name, format or body");
	int rc = store_pg__call_begin(p, CALL_WRITE, err, "store_put_resource");
	if (rc)
		return rc;
	const char *params[] = { type, name, format, body, summary };
	PGresult *res = NULL;
	rc = store_pg__run(
		p, &res, NULL, err, "store_put_resource",
		"INSERT INTO resources (type, name, format, body, summary) "
		"VALUES ($1, $2, $3, $4, $5) ON CONFLICT (type, name) DO NOTHING RETURNING 1",
		5, params);
	if ((rc = store_pg__call_end(p, CALL_WRITE, rc, err, "store_put_resource")) != 0) {
		PQclear(res);
		return rc;
	}
	int inserted = PQntuples(res) > 0;
	PQclear(res);
	return inserted ? 0 : STORE_EXISTS;
}

int store_pg__get_resource(store *s, const char *type, const char *name, char **format, char **body,
			   sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (format)
		*format = NULL;
	if (body)
		*body = NULL;
	if (!p || !type || !name || !format || !body)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_resource: no store, type, name, format or body");
	if (!utf8_valid(type) || !utf8_valid(name))
		return 0; /* no resource has such a name (see utf8_valid) */
	int rc = store_pg__call_begin(p, CALL_READ, err, "store_get_resource");
	if (rc)
		return rc;
	const char *params[] = { type, name };
	PGresult *res = NULL;
	rc = store_pg__run(p, &res, NULL, err, "store_get_resource",
			   "SELECT format, body FROM resources WHERE type = $1 AND name = $2", 2,
			   params);
	if ((rc = store_pg__call_end(p, CALL_READ, rc, err, "store_get_resource")) != 0) {
		PQclear(res);
		return rc;
	}
	int oom = 0;
	if (PQntuples(res) > 0) {
		*format = store_pg__col_dup(res, 0, 0, &oom);
		*body = store_pg__col_dup(res, 0, 1, &oom);
		if (oom || !*format || !*body) {
			free(*format);
			free(*body);
			*format = *body = NULL;
			rc = sf_err_set(err, oom ? SF_ENOMEM : SF_ESYS, "store_get_resource: %s",
					oom ? "out of memory" : "NULL column");
		}
	}
	PQclear(res);
	return rc;
}

/* Lists the resources of `type` newest first (see store.h); on failure *n is 0. */
int store_pg__list_resources(store *s, const char *type, int64_t before, int limit,
			     store_resource *out, int *n, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (n)
		*n = 0;
	if (!p || !type || !n || (limit > 0 && !out))
		return sf_err_set(err, SF_EINVAL, "store_list_resources: no store, type, out or n");
	if (limit < 0 || before < 0)
		return sf_err_set(err, SF_EINVAL,
				  "store_list_resources: limit %d and before %lld must be >= 0",
				  limit, (long long)before);
	if (limit == 0)
		return 0;
	int rc = store_pg__call_begin(p, CALL_READ, err, "store_list_resources");
	if (rc)
		return rc;
	char b[24], l[16];
	snprintf(b, sizeof b, "%lld", (long long)(before ? before : INT64_MAX));
	snprintf(l, sizeof l, "%d", limit);
	const char *params[] = { type, b, l };
	PGresult *res;
	/* The body only where there is no summary. */
	rc = store_pg__run(
		p, &res, NULL, err, "store_list_resources",
		"SELECT seq, name, format, summary, CASE WHEN summary IS NULL THEN body END, "
		"created_ms FROM resources WHERE type = $1 AND seq < $2 "
		"ORDER BY seq DESC LIMIT $3",
		3, params);
	if ((rc = store_pg__call_end(p, CALL_READ, rc, err, "store_list_resources")) != 0) {
		PQclear(res);
		return rc;
	}
	int rows = PQntuples(res), oom = 0;
	for (int i = 0; i < rows && i < limit; i++) {
		store_resource *r = &out[i];
		memset(r, 0, sizeof *r);
		r->seq = store_pg__col_i64(res, i, 0);
		r->name = store_pg__col_dup(res, i, 1, &oom);
		r->format = store_pg__col_dup(res, i, 2, &oom);
		r->summary = store_pg__col_dup(res, i, 3, &oom);
		r->body = store_pg__col_dup(res, i, 4, &oom);
		r->created_ms = store_pg__col_i64(res, i, 5);
		(*n)++;
		if (oom || !r->name || !r->format || (!r->summary && !r->body)) {
			rc = sf_err_set(err, oom ? SF_ENOMEM : SF_ESYS, "store_list_resources: %s",
					oom ? "out of memory" : "NULL column");
			break;
		}
	}
	PQclear(res);
	if (rc) {
		for (int i = 0; i < *n; i++)
			store_resource_clear(&out[i]);
		*n = 0;
	}
	return rc;
}
