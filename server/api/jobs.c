/*
 * jobs.c - the job scheduler and the /v1/jobs handlers.
 *
 * Who runs where. Everything here runs on the loop thread except job_work(),
 * which runs a kind's generator on libuv's thread pool. A job is durable
 * (a row in the store) before its 202 is sent; in memory it is a job_rt on
 * the FIFO queue, then on the running list. At most cfg.workers jobs run at
 * once: jobs_pump() starts queued ones as slots free up.
 *
 * How results come back. The generator reports progress from its worker
 * through job_progress(): it stores the latest generation, and queues every
 * generation, under the job's mutex and wakes the loop with uv_async_send
 * (coalesced by libuv); the loop copies the latest into the job, where
 * GET /v1/jobs/{id} reads it, and hands the queued ones in order to the
 * job's event feed (events.c). When the generator returns, job_after()
 * (loop thread) stores the levels and the outcome in one transaction, and
 * then tells the feed the job has ended.
 *
 * Stopping. DELETE raises the job's atomic cancel flag (a queued job is
 * cancelled at once); the generator stops at its next generation. At
 * shutdown the same flag is raised with reason "shutdown", and a job that
 * stops for that reason goes back to queued in the store, to run again after
 * a restart with the same seed and so the same result.
 *
 * When the store cannot write (a full disk, a read-only file: store.h),
 * nothing is dropped and nothing is written half. A submit or a cancel it
 * cannot record is refused (507 or 503) and changes nothing. A job whose
 * start it cannot record stays first in the queue; a job whose outcome it
 * cannot record keeps its result and its worker slot (job_settle()). A
 * timer (store_retry_tick(), every second) probes the store and, once it
 * takes writes, records the waiting outcomes and starts the queue again; a
 * stop lets the waiting jobs go unrecorded, still running in the store,
 * which requeues them at the next start.
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

enum { CANCEL_NONE, CANCEL_USER, CANCEL_SHUTDOWN };

struct job_rt {
	service *svc;
	char id[40];
	const sf_kind *kind;
	void *params;
	uint64_t seed;
	double queued_at, started_at;
	atomic_int cancel;
	int cancel_reason;
	uv_work_t work;
	json_t *result;
	sf_err err;
	uv_mutex_t mu; /* guards latest, dirty and pending, written by the worker */
	ga_generation latest;
	int dirty;
	ga_generation *pending; /* every generation not yet handed to events.c */
	size_t npending, pending_cap;
	ga_generation shown; /* loop thread's copy */
	int awaiting;        /* returned; its outcome waits for the store (job_settle) */
	int start_waits;     /* queued; its start waits for the store (logged once) */
	job_rt *next, *prev;
};

static double mono_s(void)
{
	return (double)uv_hrtime() * 1e-9;
}

static void log_job(const job_rt *j, const char *transition, const char *detail)
{
	log_job_event(j->id, transition, j->kind->name, (unsigned long long)j->seed, detail);
}

/* ---- the runtime list and queue ---- */

static job_rt *job_rt_new(service *svc, const char *id, const sf_kind *kind, void *params,
			  uint64_t seed)
{
	job_rt *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	if (uv_mutex_init(&j->mu)) {
		free(j);
		return NULL;
	}
	j->svc = svc;
	snprintf(j->id, sizeof j->id, "%s", id);
	j->kind = kind;
	j->params = params;
	j->seed = seed;
	j->queued_at = mono_s();
	atomic_init(&j->cancel, 0);
	return j;
}

static void job_rt_free(job_rt *j)
{
	if (!j)
		return;
	if (j->params)
		j->kind->params_free(j->params);
	json_decref(j->result);
	free(j->pending);
	uv_mutex_destroy(&j->mu);
	free(j);
}

static void queue_push(service *svc, job_rt *j)
{
	j->next = NULL;
	j->prev = svc->queue_tail;
	if (svc->queue_tail)
		svc->queue_tail->next = j;
	else
		svc->queue_head = j;
	svc->queue_tail = j;
	svc->queued++;
}

/* Puts `j` back at the head of the queue: its start could not be recorded. */
static void queue_push_front(service *svc, job_rt *j)
{
	j->prev = NULL;
	j->next = svc->queue_head;
	if (svc->queue_head)
		svc->queue_head->prev = j;
	else
		svc->queue_tail = j;
	svc->queue_head = j;
	svc->queued++;
}

static void queue_remove(service *svc, job_rt *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		svc->queue_head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		svc->queue_tail = j->prev;
	j->next = j->prev = NULL;
	svc->queued--;
}

static void running_add(service *svc, job_rt *j)
{
	j->prev = NULL;
	j->next = svc->running;
	if (svc->running)
		svc->running->prev = j;
	svc->running = j;
	svc->nrunning++;
}

static void running_remove(service *svc, job_rt *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		svc->running = j->next;
	if (j->next)
		j->next->prev = j->prev;
	j->next = j->prev = NULL;
	svc->nrunning--;
}

static job_rt *find_in(job_rt *list, const char *id)
{
	for (; list; list = list->next)
		if (!strcmp(list->id, id))
			return list;
	return NULL;
}

/* ---- running a job ---- */

/* Generations queued for the loop at most: far more than it ever lags. */
#define PENDING_MAX 65536

static void job_progress(void *arg, const ga_generation *gen)
{
	job_rt *j = arg;
	uv_mutex_lock(&j->mu);
	j->latest = *gen;
	j->dirty = 1;
	if (j->npending == j->pending_cap && j->pending_cap < PENDING_MAX) {
		size_t cap = j->pending_cap ? 2 * j->pending_cap : 16;
		ga_generation *p = realloc(j->pending, cap * sizeof *p);
		if (p) {
			j->pending = p;
			j->pending_cap = cap;
		}
	}
	if (j->npending < j->pending_cap) /* else the event is lost, not the progress */
		j->pending[j->npending++] = *gen;
	uv_mutex_unlock(&j->mu);
	uv_async_send(&j->svc->progress_async);
}

/*
 * Takes what the worker reported since the last call (loop thread): the
 * latest generation for GET /v1/jobs/{id}, and every generation, in order,
 * for the job's event feed.
 */
static void job_take_progress(job_rt *j)
{
	uv_mutex_lock(&j->mu);
	if (j->dirty) {
		j->shown = j->latest;
		j->dirty = 0;
	}
	ga_generation *gens = j->pending;
	size_t n = j->npending;
	j->pending = NULL;
	j->npending = j->pending_cap = 0;
	uv_mutex_unlock(&j->mu);
	for (size_t i = 0; i < n; i++)
		events_progress(j->svc, j->id, &gens[i]);
	free(gens);
}

void jobs_on_progress(uv_async_t *a)
{
	service *svc = a->data;
	for (job_rt *j = svc->running; j; j = j->next)
		job_take_progress(j);
}

static void job_work(uv_work_t *w)
{
	job_rt *j = w->data;
	sf_gen_opts opts = { .seed = j->seed,
			     .threads = j->svc->cfg.job_threads,
			     .progress = job_progress,
			     .progress_arg = j,
			     .cancel = &j->cancel,
			     /* the wall-clock budget: the generator stops at its next
			      * generation past it, with status timed_out */
			     .deadline = ga_clock_now() + j->svc->cfg.job_timeout_s,
			     .eval_cache = evalcache_iface(j->svc->evals),
			     .resource = res_fetch,
			     .resource_ctx = j->svc->resources };
	j->result = j->kind->generate(j->params, &opts, &j->err);
}

/*
 * The values clients filter levels on (GET /v1/levels): the filters the
 * kind declares (core/kinds.h, sf_level_filter), each read from the level
 * document's section. Numbers also get their text form, so that
 * `?length=16` matches by text and `?min_length=16` by number; a value
 * that is absent or of another type gives no tag (the filter never matches
 * the level).
 */
_Static_assert(SF_KIND_MAX_FILTERS <= STORE_MAX_TAGS, "a tag for every filter a kind declares");

static void level_tags(const sf_kind *kind, const json_t *level, store_level *out,
		       char text[STORE_MAX_TAGS][32])
{
	for (const sf_level_filter *f = kind->filters; f && f->name; f++) {
		if (out->ntags == STORE_MAX_TAGS)
			return;
		json_t *v = json_object_get(json_object_get(level, f->section), f->name);
		int i = out->ntags;
		if (f->type == SF_FILTER_NUMBER && json_is_number(v)) {
			out->tag_num[i] = json_number_value(v);
			out->tag_has_num[i] = 1; /* a number and its text (store.h) */
			snprintf(text[i], 32, "%.17g", out->tag_num[i]);
			out->tag_text[i] = text[i];
		} else if (f->type == SF_FILTER_TEXT && json_is_string(v)) {
			out->tag_text[i] = json_string_value(v);
			out->tag_num[i] = 0;
		} else {
			continue;
		}
		out->tag_name[i] = f->name;
		out->ntags++;
	}
}

static int store_levels(service *svc, job_rt *j, sf_err *err)
{
	json_t *levels = json_object_get(j->result, "levels");
	size_t n = json_array_size(levels);
	store_level *sl = calloc(n + 1, sizeof *sl);
	char **docs = calloc(n + 1, sizeof *docs);
	char(*text)[STORE_MAX_TAGS][32] = calloc(n + 1, sizeof *text);
	int rc = 0;
	if (!sl || !docs || !text) {
		rc = sf_err_set(err, SF_ENOMEM, "out of memory storing levels");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *lv = json_array_get(levels, i);
		docs[i] = sf_json_dumps(lv, JSON_COMPACT);
		if (!docs[i]) {
			rc = sf_err_set(err, SF_ENOMEM, "out of memory storing levels");
			goto done;
		}
		sl[i].id = json_string_value(json_object_get(lv, "id"));
		sl[i].kind = j->kind->name;
		sl[i].doc = docs[i];
		level_tags(j->kind, lv, &sl[i], text[i]);
	}
	rc = store_job_succeeded(svc->db, j->id, sl, (int)n, err);
done:
	for (size_t i = 0; docs && i < n; i++)
		free(docs[i]);
	free(docs);
	free(sl);
	free(text);
	return rc;
}

/* ---- recording outcomes, and waiting for the store ---- */

/*
 * How often, while the store cannot write (a full disk, a read-only file;
 * store.h), the scheduler probes it and retries what waits for it: the
 * outcomes of jobs that have finished, and the start of the next queued
 * job. A second is short next to a job and long next to a probe.
 */
#define STORE_RETRY_MS 1000

static void store_retry_tick(uv_timer_t *t);

/* Arms the retry timer unless it runs already. */
static void store_retry_arm(service *svc)
{
	if (!svc->db)
		return; /* closed: nothing left to retry */
	if (!svc->store_retry_ready) {
		uv_timer_init(svc->loop, &svc->store_retry);
		svc->store_retry.data = svc;
		svc->store_retry_ready = 1;
	}
	if (!uv_is_active((uv_handle_t *)&svc->store_retry))
		uv_timer_start(&svc->store_retry, store_retry_tick, STORE_RETRY_MS, STORE_RETRY_MS);
}

/* Probes the store again every second while it reports a fault (service.h). */
void jobs_storage_watch(service *svc)
{
	if (svc->db && store_write_fault(svc->db, NULL) != STORE_OK)
		store_retry_arm(svc);
}

/*
 * Answers a request whose write the store did not take (rc, err): 507
 * when the storage is full, 503 when it cannot be written for another
 * reason (read-only, failing, locked), both with Retry-After and a detail
 * saying that nothing was recorded; 500 for anything else.
 */
static void respond_store_error(service *svc, http_req *r, int rc, const sf_err *err,
				const char *what)
{
	const char *h[] = { "Retry-After", "5", NULL };
	if (rc != SF_ESYS) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err->msg);
		return;
	}
	if (store_write_fault(svc->db, NULL) == STORE_FULL)
		respond_problem(r, 507, "insufficient-storage", "Insufficient storage", h,
				"%s: the database or its disk is full, so nothing was recorded; "
				"retry when space returns (%s)",
				what, err->msg);
	else
		respond_problem(r, 503, "storage-unavailable", "Storage unavailable", h,
				"%s: the database cannot be written now, so nothing was recorded; "
				"retry later (%s)",
				what, err->msg);
	jobs_storage_watch(svc);
}

/*
 * Writes what a job whose generator has returned came to: its last
 * progress, then its outcome. Returns 0 once that is done, or refused for
 * good (logged: the job failed, or was final already); SF_ESYS, with
 * `err` set and nothing logged, when the storage did not take a write,
 * which may then be retried whole (each write is its own transaction, and
 * the progress repeats harmlessly). Sets *ended when the job is final in
 * the store, so that its watchers may be told.
 */
static int job_record(service *svc, job_rt *j, int *ended, sf_err *err)
{
	int rc;
	const char *outcome =
		j->result ? json_string_value(json_object_get(j->result, "status")) : NULL;
	const char *transition;
	char detail[320];
	*ended = 1;
	/* The last progress the generator reported becomes the job's record. */
	if (j->shown.generations &&
	    (rc = store_job_progress(svc->db, j->id, j->shown.generation, j->shown.generations,
				     j->shown.best, err)) != 0) {
		if (rc == SF_ESYS)
			return rc;
		log_error("job %s: store: %s", j->id, err->msg);
	}
	if (!j->result) {
		rc = store_job_failed(svc->db, j->id, j->err.msg, err);
		transition = "failed";
		snprintf(detail, sizeof detail, "error=\"%s\"", j->err.msg);
	} else if (outcome && !strcmp(outcome, "completed")) {
		rc = store_levels(svc, j, err);
		transition = "succeeded";
		snprintf(detail, sizeof detail, "levels=%zu",
			 json_array_size(json_object_get(j->result, "levels")));
		if (rc && rc != SF_ESYS) {
			/* Levels the store refuses for good: the job fails, saying why. */
			transition = "failed";
			snprintf(detail, sizeof detail, "%s", err->msg);
			sf_err e2 = { 0 };
			int rc2 = store_job_failed(svc->db, j->id, err->msg, &e2);
			if (rc2 == SF_ESYS) {
				*err = e2;
				rc = rc2;
			}
		}
	} else if (outcome && !strcmp(outcome, "timed_out")) {
		/* Final even when a cancel or a shutdown came after: run again it
		 * would time out again. Like a cancelled job it keeps no levels:
		 * a failed job has none (schema/job.schema.json). */
		char why[200];
		snprintf(why, sizeof why,
			 "timed_out: the job ran longer than its budget of %d s (--job-timeout) "
			 "and stopped after generation %d of %d",
			 svc->cfg.job_timeout_s, j->shown.generation, j->shown.generations);
		rc = store_job_failed(svc->db, j->id, why, err);
		transition = "failed";
		snprintf(detail, sizeof detail, "reason=timed_out budget=%ds",
			 svc->cfg.job_timeout_s);
	} else if (j->cancel_reason == CANCEL_SHUTDOWN) {
		rc = store_job_requeue(svc->db, j->id, err);
		transition = "requeued";
		snprintf(detail, sizeof detail, "reason=shutdown");
		*ended = 0;
	} else if (j->cancel_reason == CANCEL_USER) {
		rc = store_job_cancelled(svc->db, j->id, err);
		transition = "cancelled";
		detail[0] = '\0';
	} else {
		rc = store_job_failed(svc->db, j->id, "the job stopped before completing", err);
		transition = "failed";
		snprintf(detail, sizeof detail, "%s", outcome ? outcome : "");
	}
	if (rc == SF_ESYS)
		return rc;
	log_job(j, transition, detail[0] ? detail : NULL);
	if (rc)
		log_error("job %s: store: %s", j->id, err->msg);
	return 0;
}

/*
 * Records a job whose generator has returned and lets it go: off the
 * running list, its watchers told, its memory freed. When the storage does
 * not take the write, the job keeps its worker slot and its result, and
 * waits: store_retry_tick() calls again once the store can write. Keeping
 * the slot is deliberate: the next job could not record its own result
 * either. When the service is stopping the job is let go unrecorded
 * instead; the store still has it running, so the next start requeues it,
 * and its seed gives the same levels again.
 */
static void job_settle(service *svc, job_rt *j)
{
	sf_err err = { 0 };
	int ended = 0;
	int rc = job_record(svc, j, &ended, &err);
	if (rc == SF_ESYS && !svc->stopping) {
		if (!j->awaiting) {
			j->awaiting = 1;
			svc->awaiting_store++;
			char detail[300];
			snprintf(detail, sizeof detail, "store=\"%s\"", err.msg);
			log_job(j, "waiting", detail);
		}
		store_retry_arm(svc);
		return;
	}
	if (rc == SF_ESYS) {
		char detail[300];
		snprintf(detail, sizeof detail, "reason=shutdown store=\"%s\"", err.msg);
		log_job(j, "unrecorded", detail); /* the next start runs it again */
		ended = 0;
	}
	if (j->awaiting)
		svc->awaiting_store--;
	running_remove(svc, j);
	if (ended)
		events_job_ended(svc, j->id); /* its watchers' streams end (events.c) */
	job_rt_free(j);
}

static void jobs_pump(service *svc);

static void job_after(uv_work_t *w, int status)
{
	(void)status;
	job_rt *j = w->data;
	service *svc = j->svc;
	metrics_job_run(svc->metrics, mono_s() - j->started_at);
	sf_err err = { 0 };
	/* Evaluations the job computed, for later jobs and requests. */
	if (evalcache_flush(svc->evals, svc->db, &err))
		log_error("job %s: evaluation cache: %s", j->id, err.msg);
	job_take_progress(j);
	job_settle(svc, j);
	jobs_pump(svc);
}

/*
 * Every second while something waits for the store: probes it when it has
 * reported a fault, and once it can write (or the service is stopping)
 * records the outcomes that wait and starts queued jobs again. Stops
 * itself once nothing waits.
 */
static void store_retry_tick(uv_timer_t *t)
{
	service *svc = t->data;
	sf_err err = { 0 };
	int writable = store_write_fault(svc->db, NULL) == STORE_OK ||
		       store_probe_write(svc->db, &err) == 0;
	if (writable || svc->stopping) {
		for (job_rt *j = svc->running, *next; j; j = next) {
			next = j->next;
			if (j->awaiting)
				job_settle(svc, j);
		}
		jobs_pump(svc);
	}
	if (!svc->db)
		return; /* the stop has finished: jobs_free_queue() closed this timer */
	int blocked = svc->queue_head && svc->nrunning < svc->cfg.workers && !svc->stopping;
	if (!svc->awaiting_store && !blocked && store_write_fault(svc->db, NULL) == STORE_OK)
		uv_timer_stop(t);
}

/* Starts queued jobs while there are free workers. */
static void jobs_pump(service *svc)
{
	while (!svc->stopping && svc->nrunning < svc->cfg.workers && svc->queue_head) {
		job_rt *j = svc->queue_head;
		queue_remove(svc, j);
		sf_err err;
		int rc = store_job_started(svc->db, j->id, &err);
		if (rc == SF_ESYS) {
			/* The storage cannot take the start: the job stays first in
			 * the queue, and the retry timer starts it when it can. */
			if (!j->start_waits++)
				log_error("job %s: store: %s (stays queued)", j->id, err.msg);
			queue_push_front(svc, j);
			store_retry_arm(svc);
			break;
		}
		if (rc) {
			log_error("job %s: store: %s", j->id, err.msg);
			events_job_ended(svc, j->id);
			job_rt_free(j);
			continue;
		}
		j->started_at = mono_s();
		metrics_job_wait(svc->metrics, j->started_at - j->queued_at);
		running_add(svc, j);
		j->work.data = j;
		log_job(j, "running", NULL);
		if (uv_queue_work(svc->loop, &j->work, job_work, job_after)) {
			running_remove(svc, j);
			store_job_failed(svc->db, j->id, "the worker pool refused the job", &err);
			events_job_ended(svc, j->id);
			job_rt_free(j);
		}
	}
	if (svc->stopping && !svc->nrunning)
		service_stop(svc); /* finishes the stop once the last job is back */
}

void jobs_free_queue(service *svc)
{
	while (svc->queue_head) {
		job_rt *j = svc->queue_head;
		queue_remove(svc, j);
		job_rt_free(j); /* still queued in the store: a restart runs it */
	}
	if (svc->store_retry_ready && !uv_is_closing((uv_handle_t *)&svc->store_retry))
		uv_close((uv_handle_t *)&svc->store_retry, NULL);
}

void jobs_stop_all(service *svc)
{
	int awaiting = 0;
	for (job_rt *j = svc->running; j; j = j->next) {
		if (j->awaiting) {
			awaiting = 1; /* returned already: its outcome stands */
			continue;
		}
		j->cancel_reason = CANCEL_SHUTDOWN;
		atomic_store(&j->cancel, 1);
	}
	/* Outcomes waiting for the store get one last try now, not in a second. */
	if (awaiting && svc->store_retry_ready)
		uv_timer_start(&svc->store_retry, store_retry_tick, 0, STORE_RETRY_MS);
}

int jobs_resume_pending(service *svc, sf_err *err)
{
	char(*ids)[40] = NULL;
	size_t n = 0;
	int rc = store_pending_jobs(svc->db, &ids, &n, err);
	for (size_t i = 0; !rc && i < n; i++) {
		store_job job = { 0 };
		if (store_get_job(svc->db, ids[i], &job, err) != 1)
			continue;
		const sf_kind *kind = sf_kind_find(job.kind);
		json_t *pj = json_loads(job.params ? job.params : "{}", 0, NULL);
		sf_err perr = { 0 };
		void *params = kind ? kind->params_parse(pj, &perr) : NULL;
		json_decref(pj);
		job_rt *j = params ? job_rt_new(svc, job.id, kind, params, job.seed) : NULL;
		if (!j) {
			/* A job this binary cannot run any more fails visibly. */
			if (params)
				kind->params_free(params);
			store_job_failed(svc->db, job.id,
					 kind ? perr.msg : "unknown kind after an upgrade", err);
		} else {
			queue_push(svc, j);
			log_job(j, "queued", "reason=restart");
		}
		store_job_clear(&job);
	}
	free(ids);
	if (!rc)
		jobs_pump(svc);
	return rc;
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
	job_rt *live = job->state == JOB_RUNNING ? find_in(svc->running, job->id) : NULL;
	if (live)
		g = live->shown;
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

int jobs_lookup(service *svc, http_req *r, const char *id, store_job *job)
{
	sf_err err = { 0 };
	int found = store_get_job(svc->db, id, job, &err);
	if (found < 0)
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err.msg);
	else if (!found)
		respond_problem(r, 404, "not-found", "No such job", NULL, "no job with id '%s'",
				id);
	if (found != 1)
		store_job_clear(job);
	return found == 1;
}

static void respond_job(service *svc, http_req *r, int status, const char *id)
{
	store_job job = { 0 };
	if (!jobs_lookup(svc, r, id, &job))
		return;
	char location[64];
	snprintf(location, sizeof location, "/v1/jobs/%s", job.id);
	const char *headers[] = { "Cache-Control", "no-store", "Location", location, NULL };
	respond_json(r, status, job_json(svc, &job), headers);
	store_job_clear(&job);
}

/* ---- handlers ---- */

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
	sf_err err = { 0 };
	/* A job naming a resource that is not there could only fail: refuse it now. */
	const char *rtype = NULL;
	const char *rname = kind->params_resource ? kind->params_resource(params, &rtype) : NULL;
	int have = rname && kind->resource ? res_exists(svc->db, rtype, rname, &err) : 1;
	if (have <= 0) {
		/* rname points into params: answer before freeing them. */
		if (have < 0)
			respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s",
					err.msg);
		else
			respond_problem(r, 422, "invalid-params", "Invalid parameters", NULL,
					"params.%s '%s' is not an uploaded %s (upload it with "
					"POST /v1/%s%s%s%s)",
					rtype, rname, kind->resource->what,
					kind->resource->collection,
					kind->resource->builtin ? ", or use '" : "",
					kind->resource->builtin ? kind->resource->builtin : "",
					kind->resource->builtin ? "'" : "");
		kind->params_free(params);
		goto out;
	}
	if (svc->stopping) {
		kind->params_free(params);
		respond_problem(r, 503, "stopping", "Service stopping", NULL,
				"the service is shutting down; retry against its successor");
		goto out;
	}

	/* Idempotency: the same key and body return the same job. */
	const char *idem = http_req_header(r, "Idempotency-Key");
	if (idem && (!*idem || strlen(idem) > 200)) {
		kind->params_free(params);
		respond_problem(r, 400, "invalid-request", "Invalid job request", NULL,
				"Idempotency-Key must be 1..200 characters");
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
	if (svc->queued >= svc->cfg.max_queue) {
		kind->params_free(params);
		const char *h[] = { "Retry-After", "5", NULL };
		respond_problem(r, 429, "queue-full", "Queue full", h,
				"%d jobs are waiting, the limit; retry later", svc->queued);
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
	int existing = 0;
	int rc = job.params && job.kind ? store_insert_job(svc->db, &job, idem, idem ? hash : NULL,
							   &existing, &err)
					: sf_err_set(&err, SF_ENOMEM, "out of memory");
	char id[40];
	snprintf(id, sizeof id, "%s", job.id);
	store_job_clear(&job);
	if (rc == SF_EINVAL) {
		kind->params_free(params);
		respond_problem(r, 422, "idempotency-key-reused", "Idempotency-Key reused", NULL,
				"%s", err.msg);
		goto out;
	}
	if (rc) {
		kind->params_free(params);
		respond_store_error(svc, r, rc, &err, "the job could not be recorded");
		goto out;
	}
	if (existing) {
		kind->params_free(params);
		respond_job(svc, r, 202, id);
		goto out;
	}
	job_rt *j = job_rt_new(svc, id, kind, params,
			       sj ? (uint64_t)json_integer_value(sj) : seed & SEED_MAX);
	if (!j) {
		kind->params_free(params);
		store_job_failed(svc->db, id, "out of memory", &err);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		goto out;
	}
	queue_push(svc, j);
	log_job(j, "queued", NULL);
	respond_job(svc, r, 202, j->id);
	jobs_pump(svc);
out:
	json_decref(req);
}

void jobs_get(service *svc, http_req *r, const route_match *m)
{
	respond_job(svc, r, 200, route_param(m, "id"));
}

void jobs_cancel(service *svc, http_req *r, const route_match *m)
{
	const char *id = route_param(m, "id");
	job_rt *q = find_in(svc->queue_head, id);
	sf_err err = { 0 };
	if (q) {
		int rc = store_job_cancelled(svc->db, id, &err);
		if (rc == SF_ESYS) { /* still queued, in the store as here */
			respond_store_error(svc, r, rc, &err, "the cancel could not be recorded");
			return;
		}
		queue_remove(svc, q);
		if (rc)
			log_error("job %s: store: %s", id, err.msg);
		log_job(q, "cancelled", "while queued");
		events_job_ended(svc, id);
		job_rt_free(q);
		respond_job(svc, r, 200, id);
		return;
	}
	job_rt *run = find_in(svc->running, id);
	if (run && run->awaiting) {
		const char *why;
		store_write_fault(svc->db, &why);
		respond_problem(r, 409, "job-finished", "Job already finished", NULL,
				"job '%s' has finished running and can no longer be cancelled; its "
				"outcome waits for the database to take writes again (%s)",
				id, *why ? why : "retrying");
		return;
	}
	if (run) {
		run->cancel_reason = CANCEL_USER;
		atomic_store(&run->cancel, 1);
		respond_job(svc, r, 202, id); /* stops within one generation */
		return;
	}
	store_job job = { 0 };
	int found = store_get_job(svc->db, id, &job, &err);
	if (found == 1)
		respond_problem(r, 409, "job-finished", "Job already finished", NULL,
				"job '%s' is %s and can no longer be cancelled", id,
				job_state_name(job.state));
	else if (found == 0)
		respond_problem(r, 404, "not-found", "No such job", NULL, "no job with id '%s'",
				id);
	else
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err.msg);
	store_job_clear(&job);
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
	store_job *jobs = calloc((size_t)page_size + 1, sizeof *jobs);
	int n = 0;
	sf_err err = { 0 };
	if (!jobs || store_list_jobs(svc->db, st, kind, before, page_size + 1, jobs, &n, &err)) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err.msg);
		free(jobs);
		return;
	}
	json_t *arr = json_array();
	for (int i = 0; i < n && i < page_size; i++)
		json_array_append_new(arr, job_json(svc, &jobs[i]));
	char token[32];
	json_t *next = json_null();
	if (n > page_size) {
		service_page_token(jobs[page_size - 1].seq, token);
		next = json_string(token);
	}
	for (int i = 0; i < n; i++)
		store_job_clear(&jobs[i]);
	free(jobs);
	const char *h[] = { "Cache-Control", "no-store", NULL };
	respond_json(r, 200, json_pack("{s:o, s:o}", "jobs", arr, "next_page_token", next), h);
}
