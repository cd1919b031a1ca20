/*
 * jobs.c - the /v1/jobs handlers: submit, get, list, cancel.
 *
 * The scheduler (server/jobs/sched.c) runs the jobs; these handlers talk to
 * the store through the store thread (storeq.h) and to the scheduler
 * through sched.h. A job is durable (a queued row in the store) before its
 * 202 is sent; then the scheduler of some node claims it (this one is told
 * at once: sched_kick).
 *
 * A cancel of a job running on this node raises its flag: it stops at its
 * next generation and records the cancel as its outcome. Any other cancel
 * is recorded in the store (store_request_cancel): a queued job is
 * cancelled there and then; a job running on another node is marked, and
 * that node stops it after its next heartbeat (at most a second).
 *
 * When the store cannot write (a full disk, a read-only file: store.h), a
 * submit or a cancel it cannot record is refused (507 or 503) and changes
 * nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/json_out.h"
#include "../../core/kinds.h"
#include "../../core/sha256.h"
#include "../jobs/job_request.h"
#include "service.h"

#define SEED_MAX JOB_SEED_MAX /* 2^53 - 1: exact in every JSON client */

static void log_submitted(const char *id, const char *kind, uint64_t seed)
{
	log_job_event(id, "queued", kind, (unsigned long long)seed, NULL);
}

/* ---- JSON ---- */

static json_t *job_json(service *svc, const store_job *job)
{
	char created[32], started[32], finished[32];
	service_format_time(job->created_ms, created);
	service_format_time(job->started_ms, started);
	service_format_time(job->finished_ms, finished);
	ga_generation g = { .generation = job->generation,
			    .generations = job->generations,
			    .best = job->best };
	if (job->state == JOB_RUNNING)
		sched_live(svc->jobs, job->id, &g); /* running here: its latest generation */
	json_t *params = json_loads(job->params ? job->params : "{}", 0, NULL);
	json_t *levels = job->level_ids ? json_loads(job->level_ids, 0, NULL) : NULL;
	json_t *doc = json_pack(
		"{s:s, s:s, s:I, s:o, s:s, s:{s:i, s:i, s:f}, s:s, s:o, s:o, s:o, s:o}", "id",
		job->id, "kind", job->kind, "seed", (json_int_t)job->seed, "params",
		params ? params : json_object(), "state", job_state_name(job->state), "progress",
		"generation", g.generation, "of", g.generations, "best", g.best, "created_at",
		created, "started_at", job->started_ms ? json_string(started) : json_null(),
		"finished_at", job->finished_ms ? json_string(finished) : json_null(), "error",
		job->error ? json_string(job->error) : json_null(), "level_ids",
		levels ? levels : json_array());
	return doc;
}

/* A job read for a handler (jobs_read). */
typedef struct job_read {
	service_read rd;
	char id[ROUTE_MAX_VALUE + 1];
	store_job job;
	int found;
	void (*found_fn)(service *svc, http_req *r, const store_job *job, int arg);
	int arg;
} job_read;

static void job_fetch(store *s, storeq_op *op)
{
	job_read *jr = (job_read *)op;
	jr->found = store_get_job(s, jr->id, &jr->job, &op->err);
	op->rc = jr->found < 0 ? jr->found : 0;
}

static void job_answer(service_read *rd)
{
	job_read *jr = (job_read *)rd;
	if (rd->op.rc)
		respond_read_error(rd->r, &rd->op);
	else if (!jr->found)
		respond_problem(rd->r, 404, "not-found", "No such job", NULL,
				"no job with id '%s'", jr->id);
	else
		jr->found_fn(rd->svc, rd->r, &jr->job, jr->arg);
	store_job_clear(&jr->job);
}

void jobs_read(service *svc, http_req *r, const char *id,
	       void (*found)(service *svc, http_req *r, const store_job *job, int arg), int arg)
{
	job_read *jr = calloc(1, sizeof *jr);
	if (!jr) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	snprintf(jr->id, sizeof jr->id, "%s", id);
	jr->found_fn = found;
	jr->arg = arg;
	service_read_submit(svc, r, &jr->rd, job_fetch, job_answer);
}

/* Answers with `job` and `status`, its Location and no caching. */
static void answer_job(service *svc, http_req *r, const store_job *job, int status)
{
	char location[64];
	snprintf(location, sizeof location, "/v1/jobs/%s", job->id);
	const char *headers[] = { "Cache-Control", "no-store", "Location", location, NULL };
	respond_json(r, status, job_json(svc, job), headers);
}

/* Answers with job `id` as it is in the store now (read off the loop). */
static void respond_job(service *svc, http_req *r, int status, const char *id)
{
	jobs_read(svc, r, id, answer_job, status);
}

/* ---- handlers ---- */

/* Only bytes 0x20..0x7e: a key is the same bytes in every database. */
static int printable_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

static int random_bytes(uint8_t *buf, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, buf + got, n - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	return got == n ? 0 : -1;
}

/* A submission on its way to the store thread; answered once durable. */
typedef struct submit_op {
	storeq_op op;
	service *svc;
	http_req *r;
	store_job job;
	char *idem; /* NULL: no Idempotency-Key */
	char hash[65];
	int existing;
	const sf_kind *kind;
	void *params;
	/* The uploaded resource the params name (pointing into params), or NULL. */
	const char *rtype, *rname;
	int missing; /* the resource is not there: nothing inserted */
} submit_op;

static void submit_run(store *s, storeq_op *op)
{
	submit_op *so = (submit_op *)op;
	/* A job naming a resource that is not there could only fail: refuse it. */
	if (so->rname) {
		int have = res_exists(s, so->rtype, so->rname, &op->err);
		if (have <= 0) {
			so->missing = !have;
			op->rc = have;
			return;
		}
	}
	op->rc = store_insert_job(s, &so->job, so->idem, so->idem ? so->hash : NULL, &so->existing,
				  &op->err);
}

/* 422: the params name an uploaded resource that is not there. */
static void respond_missing(http_req *r, const sf_kind *kind, const char *rtype, const char *rname)
{
	respond_problem(r, 422, "invalid-params", "Invalid parameters", NULL,
			"params.%s '%s' is not an uploaded %s (upload it with "
			"POST /v1/%s%s%s%s)",
			rtype, rname, kind->resource->what, kind->resource->collection,
			kind->resource->builtin ? ", or use '" : "",
			kind->resource->builtin ? kind->resource->builtin : "",
			kind->resource->builtin ? "'" : "");
}

/* Loop thread: the job is durable (or refused): 202, or why not. */
static void submit_done(storeq_op *op)
{
	submit_op *so = (submit_op *)op;
	service *svc = so->svc;
	http_req *r = so->r;
	const sf_kind *kind = so->kind;
	int rc = op->rc;
	svc->submitting--;
	if (so->missing) {
		respond_missing(r, kind, so->rtype, so->rname); /* before params are freed */
	} else if (rc == SF_EINVAL) {
		respond_problem(r, 422, "idempotency-key-reused", "Idempotency-Key reused", NULL,
				"%s", op->err.msg);
	} else if (rc) {
		respond_store_error(svc, r, rc, &op->err, "the job could not be recorded");
	} else {
		if (!so->existing) {
			sched_queued_add(svc->jobs, 1);
			log_submitted(so->job.id, kind->name, so->job.seed);
		}
		/* The row as recorded (a new one, or the earlier job of the same
		 * Idempotency-Key): no read needed. */
		answer_job(svc, r, &so->job, 202);
		if (!so->existing)
			sched_kick(svc->jobs);
	}
	/* The scheduler parses the params again when it claims the job. */
	kind->params_free(so->params);
	store_job_clear(&so->job);
	free(so->idem);
	free(so);
}

void jobs_submit(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	size_t len;
	const char *body = http_req_body(r, &len);
	job_request jr;
	job_request_problem bad;
	if (jobs_parse_request(body, len, &jr, &bad)) {
		respond_problem(r, bad.status, bad.slug, bad.title, NULL, "%s", bad.detail);
		return;
	}
	json_t *req = jr.doc;
	const json_t *pj = jr.params_js, *sj = jr.seed_js;
	const sf_kind *kind = jr.kind;
	void *params = jr.params;
	/* A job naming an uploaded resource: the store thread checks that it is there. */
	const char *rtype = NULL;
	const char *rname = kind->params_resource ? kind->params_resource(params, &rtype) : NULL;
	if (!kind->resource)
		rname = NULL;
	if (svc->stopping) {
		kind->params_free(params);
		respond_problem(r, 503, "stopping", "Service stopping", NULL,
				"the service is shutting down; retry against its successor");
		goto out;
	}

	/* Idempotency: the same key and body return the same job. */
	const char *idem = http_req_header(r, "Idempotency-Key");
	if (idem && (!*idem || strlen(idem) > 200 || !printable_ascii(idem))) {
		kind->params_free(params);
		respond_problem(r, 400, "invalid-request", "Invalid job request", NULL,
				"Idempotency-Key must be 1..200 printable ASCII characters");
		goto out;
	}
	char hash[65] = "";
	if (idem) {
		char *canon = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
		uint8_t d[SHA256_DIGEST_LEN];
		sha256(canon ? canon : "", canon ? strlen(canon) : 0, d);
		sha256_hex(d, SHA256_DIGEST_LEN, hash);
		free(canon);
	}
	int queued = sched_queued(svc->jobs);
	if (queued + svc->submitting >= svc->cfg.max_queue) {
		kind->params_free(params);
		const char *h[] = { "Retry-After", "5", NULL };
		respond_problem(r, 429, "queue-full", "Queue full", h,
				"%d jobs are waiting, the limit; retry later", queued);
		goto out;
	}

	uint8_t rnd[SHA256_DIGEST_LEN];
	if (random_bytes(rnd, sizeof rnd)) {
		kind->params_free(params);
		respond_problem(r, 500, "internal", "Internal error", NULL,
				"no randomness for a job id");
		goto out;
	}
	store_job job = { 0 };
	memcpy(job.id, "job_", 4);
	sha256_hex(rnd, 16, job.id + 4);
	uint64_t seed = 0;
	for (int i = 16; i < 24; i++)
		seed = seed << 8 | rnd[i];
	job.seed = sj ? (uint64_t)json_integer_value(sj) : seed & SEED_MAX;
	job.kind = strdup(kind->name); /* malloc'ed: the store may free and refill them */
	job.params = pj ? sf_json_dumps(pj, JSON_COMPACT) : strdup("{}");
	job.state = JOB_QUEUED;
	submit_op *so = calloc(1, sizeof *so);
	if (!so || !job.params || !job.kind || (idem && !(so->idem = strdup(idem)))) {
		if (so)
			free(so->idem);
		free(so);
		store_job_clear(&job);
		kind->params_free(params);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		goto out;
	}
	so->svc = svc;
	so->r = r;
	so->job = job; /* the op owns the strings now */
	memcpy(so->hash, hash, sizeof hash);
	so->kind = kind;
	so->params = params;
	so->rtype = rtype;
	so->rname = rname;
	so->op.run = submit_run;
	so->op.done = submit_done;
	so->op.writes = STOREQ_WRITE;
	svc->submitting++;
	storeq_submit(svc->writer, &so->op); /* answered in submit_done, once durable */
out:
	json_decref(req);
}

void jobs_get(service *svc, http_req *r, const route_match *m)
{
	respond_job(svc, r, 200, route_param(m, "id"));
}

/* A cancel on its way to the store thread; answered once recorded. */
typedef struct cancel_op {
	storeq_op op;
	service *svc;
	http_req *r;
	char id[40];
	job_state state;
} cancel_op;

static void cancel_run(store *s, storeq_op *op)
{
	cancel_op *co = (cancel_op *)op;
	op->rc = store_request_cancel(s, co->id, &co->state, &op->err);
}

/* Loop thread: the cancel is recorded (or not). */
static void cancel_done(storeq_op *op)
{
	cancel_op *co = (cancel_op *)op;
	service *svc = co->svc;
	http_req *r = co->r;
	const char *id = co->id;
	if (op->rc == SF_EINVAL) {
		respond_problem(r, 404, "not-found", "No such job", NULL, "no job with id '%s'",
				id);
	} else if (op->rc < 0) {
		respond_store_error(svc, r, op->rc, &op->err, "the cancel could not be recorded");
	} else if (op->rc == 0) {
		respond_problem(r, 409, "job-finished", "Job already finished", NULL,
				"job '%s' is %s and can no longer be cancelled", id,
				job_state_name(co->state));
	} else if (co->state == JOB_CANCELLED) { /* it was queued */
		sched_queued_add(svc->jobs, -1);
		log_job_event(id, "cancelled", "-", 0, "while queued");
		events_job_ended(svc, id);
		respond_job(svc, r, 200, id);
	} else { /* running: here it stops now, elsewhere at its node's next heartbeat */
		sched_cancel_local(svc->jobs, id);
		respond_job(svc, r, 202, id);
	}
	free(co);
}

void jobs_cancel(service *svc, http_req *r, const route_match *m)
{
	const char *id = route_param(m, "id");
	int here = sched_local(svc->jobs, id);
	if (here == SCHED_RECORDING) {
		respond_problem(r, 409, "job-finished", "Job already finished", NULL,
				"job '%s' has finished running and can no longer be cancelled; its "
				"outcome is being recorded",
				id);
		return;
	}
	if (here == SCHED_AWAITING) {
		const char *why;
		storeq_fault(svc->writer, &why);
		respond_problem(r, 409, "job-finished", "Job already finished", NULL,
				"job '%s' has finished running and can no longer be cancelled; its "
				"outcome waits for the database to take writes again (%s)",
				id, *why ? why : "retrying");
		return;
	}
	if (here == SCHED_RUNNING) {
		/* Running here: its flag stops it at its next generation, and the
		 * outcome it then records is the cancel; no write needed now. */
		sched_cancel_local(svc->jobs, id);
		respond_job(svc, r, 202, id);
		return;
	}
	cancel_op *co = calloc(1, sizeof *co);
	if (!co || strlen(id) >= sizeof co->id) {
		free(co);
		if (co)
			respond_problem(r, 404, "not-found", "No such job", NULL,
					"no job with id '%s'", id);
		else
			respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	co->svc = svc;
	co->r = r;
	snprintf(co->id, sizeof co->id, "%s", id);
	co->op.run = cancel_run;
	co->op.done = cancel_done;
	co->op.writes = STOREQ_WRITE;
	storeq_submit(svc->writer, &co->op); /* answered in cancel_done */
}

/* A page of GET /v1/jobs, read off the loop. */
typedef struct jobs_page {
	service_read rd;
	int state;
	const char *kind;
	int64_t before;
	int page_size, n;
	store_job *jobs; /* page_size + 1: one more says there is a next page */
} jobs_page;

static void jobs_page_fetch(store *s, storeq_op *op)
{
	jobs_page *jp = (jobs_page *)op;
	op->rc = store_list_jobs(s, jp->state, jp->kind, jp->before, jp->page_size + 1, jp->jobs,
				 &jp->n, &op->err);
}

static void jobs_page_answer(service_read *rd)
{
	jobs_page *jp = (jobs_page *)rd;
	if (rd->op.rc) {
		respond_read_error(rd->r, &rd->op);
	} else {
		json_t *arr = json_array();
		for (int i = 0; i < jp->n && i < jp->page_size; i++)
			json_array_append_new(arr, job_json(rd->svc, &jp->jobs[i]));
		char token[32];
		json_t *next = json_null();
		if (jp->n > jp->page_size) {
			service_page_token(jp->jobs[jp->page_size - 1].seq, token);
			next = json_string(token);
		}
		const char *h[] = { "Cache-Control", "no-store", NULL };
		respond_json(rd->r, 200,
			     json_pack("{s:o, s:o}", "jobs", arr, "next_page_token", next), h);
	}
	for (int i = 0; i < jp->n; i++)
		store_job_clear(&jp->jobs[i]);
	free(jp->jobs);
}

void jobs_list(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	int page_size;
	int64_t before;
	const char *kind;
	static const char *const allowed[] = { SERVICE_LIST_PARAMS, "state", NULL };
	if (service_query_check(r, allowed, NULL, NULL, NULL) ||
	    service_list_args(r, &page_size, &before, &kind))
		return;
	const char *state = http_req_query(r, "state");
	int st = -1;
	if (state && (st = job_state_parse(state)) < 0) {
		respond_problem(
			r, 400, "invalid-query", "Invalid query", NULL,
			"state '%s' is unknown (allowed: queued, running, succeeded, failed, "
			"cancelled)",
			state);
		return;
	}
	jobs_page *jp = calloc(1, sizeof *jp);
	if (!jp || !(jp->jobs = calloc((size_t)page_size + 1, sizeof *jp->jobs))) {
		free(jp);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	jp->state = st;
	jp->kind = kind; /* the request's, alive until it is answered */
	jp->before = before;
	jp->page_size = page_size;
	service_read_submit(svc, r, &jp->rd, jobs_page_fetch, jobs_page_answer);
}
