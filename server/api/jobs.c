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
#define _DEFAULT_SOURCE /* syscall(), for the worker thread's id */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
	int recording;       /* returned; the store thread is recording its outcome */
	int starting;        /* the store thread is recording its start */
	int cancelling;      /* queued; the store thread is recording its cancel */
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

/*
 * Generators run at a lower CPU priority (nice +10) than the loop and the
 * store thread: a job's seconds of computing must not delay the loop's
 * answers by whole scheduler time slices when the cores are busy. Linux
 * keeps a nice value per thread, and threads a generator starts inherit it.
 * Once per worker thread; a refusal changes nothing but the latency.
 */
#define WORKER_NICE 10

static void worker_lower_priority(void)
{
	static _Thread_local int done;
	if (done)
		return;
	done = 1;
	id_t tid = (id_t)syscall(SYS_gettid);
	(void)setpriority(PRIO_PROCESS, tid, WORKER_NICE);
}

static void job_work(uv_work_t *w)
{
	job_rt *j = w->data;
	worker_lower_priority();
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

static int store_levels(store *s, job_rt *j, sf_err *err)
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
	rc = store_job_succeeded(s, j->id, sl, (int)n, err);
done:
	for (size_t i = 0; docs && i < n; i++)
		free(docs[i]);
	free(docs);
	free(sl);
	free(text);
	return rc;
}

/* ---- the store thread's part: operations (storeq.h) ---- */

/*
 * Every write goes to the store thread as an operation, answered on the
 * loop thread once it is durable: a submission (its 202 waits for the
 * commit), a start, an outcome, a cancel, a failure, a probe. The store
 * thread commits whatever waits together (group commit), so a burst of
 * submissions costs a few fsyncs, not one each.
 */

/* A job whose outcome is recorded: the outcome decided on the store thread. */
typedef struct record_op {
	storeq_op op;
	job_rt *j;
	int ended;              /* the job is final in the store */
	const char *transition; /* for the log line */
	char detail[320];
	char refused[300];    /* a write the store refused for good, for the log */
	char cache_error[300]; /* the evaluation cache's flush, for the log */
} record_op;

typedef struct start_op {
	storeq_op op;
	job_rt *j;
} start_op;

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
} submit_op;

typedef struct cancel_op {
	storeq_op op;
	job_rt *j;
	http_req *r;
} cancel_op;

/* A job failed by the scheduler itself (it could not run it at all). */
typedef struct fail_op {
	storeq_op op;
	service *svc;
	char id[40];
	char why[200];
} fail_op;

static void fail_run(store *s, storeq_op *op)
{
	fail_op *f = (fail_op *)op;
	op->rc = store_job_failed(s, f->id, f->why, &op->err);
}

static void fail_done(storeq_op *op)
{
	fail_op *f = (fail_op *)op;
	if (op->rc)
		log_error("job %s: store: %s", f->id, op->err.msg);
	events_job_ended(f->svc, f->id);
	free(f);
}

/* Fails job `id` with `why` in the store, then tells its watchers. */
static void job_fail_async(service *svc, const char *id, const char *why)
{
	fail_op *f = calloc(1, sizeof *f);
	if (!f) {
		log_error("job %s: out of memory failing it (%s)", id, why);
		return; /* still queued or running in the store: the next start retries */
	}
	f->svc = svc;
	snprintf(f->id, sizeof f->id, "%s", id);
	snprintf(f->why, sizeof f->why, "%s", why);
	f->op.run = fail_run;
	f->op.done = fail_done;
	f->op.writes = STOREQ_WRITE;
	storeq_submit(svc->writer, &f->op);
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
	if (!svc->writer)
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
	if (svc->writer && storeq_fault(svc->writer, NULL) != STORE_OK)
		store_retry_arm(svc);
}

/*
 * Store thread: writes what a job whose generator has returned came to:
 * its last progress, then its outcome. Returns 0 once that is done, or
 * refused for good (ro->refused says why: the job failed, or was final
 * already); SF_ESYS, with `err` set, when the storage did not take a
 * write, which may then be retried whole (each write is its own
 * transaction or savepoint, and the progress repeats harmlessly). Sets
 * ro->ended when the job is final in the store, so that its watchers may
 * be told. Reads only what the loop no longer changes: the job has
 * returned and j->recording keeps cancels away.
 */
static int job_record(store *s, record_op *ro, sf_err *err)
{
	job_rt *j = ro->j;
	int rc;
	const char *outcome =
		j->result ? json_string_value(json_object_get(j->result, "status")) : NULL;
	char *detail = ro->detail;
	size_t dsize = sizeof ro->detail;
	ro->ended = 1;
	ro->refused[0] = '\0';
	/* The last progress the generator reported becomes the job's record. */
	if (j->shown.generations &&
	    (rc = store_job_progress(s, j->id, j->shown.generation, j->shown.generations,
				     j->shown.best, err)) != 0) {
		if (rc == SF_ESYS)
			return rc;
		snprintf(ro->refused, sizeof ro->refused, "%s", err->msg);
	}
	if (!j->result) {
		rc = store_job_failed(s, j->id, j->err.msg, err);
		ro->transition = "failed";
		snprintf(detail, dsize, "error=\"%s\"", j->err.msg);
	} else if (outcome && !strcmp(outcome, "completed")) {
		rc = store_levels(s, j, err);
		ro->transition = "succeeded";
		snprintf(detail, dsize, "levels=%zu",
			 json_array_size(json_object_get(j->result, "levels")));
		if (rc && rc != SF_ESYS) {
			/* Levels the store refuses for good: the job fails, saying why. */
			ro->transition = "failed";
			snprintf(detail, dsize, "%s", err->msg);
			sf_err e2 = { 0 };
			int rc2 = store_job_failed(s, j->id, err->msg, &e2);
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
			 j->svc->cfg.job_timeout_s, j->shown.generation, j->shown.generations);
		rc = store_job_failed(s, j->id, why, err);
		ro->transition = "failed";
		snprintf(detail, dsize, "reason=timed_out budget=%ds", j->svc->cfg.job_timeout_s);
	} else if (j->cancel_reason == CANCEL_SHUTDOWN) {
		rc = store_job_requeue(s, j->id, err);
		ro->transition = "requeued";
		snprintf(detail, dsize, "reason=shutdown");
		ro->ended = 0;
	} else if (j->cancel_reason == CANCEL_USER) {
		rc = store_job_cancelled(s, j->id, err);
		ro->transition = "cancelled";
		detail[0] = '\0';
	} else {
		rc = store_job_failed(s, j->id, "the job stopped before completing", err);
		ro->transition = "failed";
		snprintf(detail, dsize, "%s", outcome ? outcome : "");
	}
	if (rc == SF_ESYS)
		return rc;
	if (rc)
		snprintf(ro->refused, sizeof ro->refused, "%s", err->msg);
	return 0;
}

static void record_run(store *s, storeq_op *op)
{
	record_op *ro = (record_op *)op;
	sf_err err = { 0 };
	/* Evaluations the job computed, for later jobs and requests. */
	ro->cache_error[0] = '\0';
	if (evalcache_flush(ro->j->svc->evals, s, &err))
		snprintf(ro->cache_error, sizeof ro->cache_error, "%s", err.msg);
	op->rc = job_record(s, ro, &op->err);
}

static void jobs_pump(service *svc);

/*
 * Loop thread, once the outcome is durable (or known not to be): lets the
 * job go: off the running list, its watchers told, its memory freed. When
 * the storage did not take the write, the job keeps its worker slot and
 * its result, and waits: store_retry_tick() records it again once the
 * store can write. Keeping the slot is deliberate: the next job could not
 * record its own result either. When the service is stopping the job is
 * let go unrecorded instead; the store still has it running, so the next
 * start requeues it, and its seed gives the same levels again.
 */
static void record_done(storeq_op *op)
{
	record_op *ro = (record_op *)op;
	job_rt *j = ro->j;
	service *svc = j->svc;
	int ended = ro->ended;
	j->recording = 0;
	if (ro->cache_error[0])
		log_error("job %s: evaluation cache: %s", j->id, ro->cache_error);
	if (op->rc == SF_ESYS && !svc->stopping) {
		if (!j->awaiting) {
			j->awaiting = 1;
			svc->awaiting_store++;
			char detail[300];
			snprintf(detail, sizeof detail, "store=\"%s\"", op->err.msg);
			log_job(j, "waiting", detail);
		}
		store_retry_arm(svc);
		free(ro);
		return;
	}
	if (op->rc == SF_ESYS) {
		char detail[300];
		snprintf(detail, sizeof detail, "reason=shutdown store=\"%s\"", op->err.msg);
		log_job(j, "unrecorded", detail); /* the next start runs it again */
		ended = 0;
	} else {
		log_job(j, ro->transition, ro->detail[0] ? ro->detail : NULL);
		if (ro->refused[0])
			log_error("job %s: store: %s", j->id, ro->refused);
	}
	if (j->awaiting)
		svc->awaiting_store--;
	running_remove(svc, j);
	if (ended)
		events_job_ended(svc, j->id); /* its watchers' streams end (events.c) */
	job_rt_free(j);
	free(ro);
	jobs_pump(svc);
}

/* Hands a job whose generator has returned to the store thread. */
static void job_settle(service *svc, job_rt *j)
{
	record_op *ro = calloc(1, sizeof *ro);
	if (!ro) { /* wait, as for a store that cannot write, and retry */
		if (!j->awaiting) {
			j->awaiting = 1;
			svc->awaiting_store++;
			log_job(j, "waiting", "store=\"out of memory\"");
		}
		store_retry_arm(svc);
		return;
	}
	j->recording = 1;
	ro->j = j;
	ro->op.run = record_run;
	ro->op.done = record_done;
	ro->op.writes = STOREQ_WRITE;
	storeq_submit(svc->writer, &ro->op);
}

static void job_after(uv_work_t *w, int status)
{
	(void)status;
	job_rt *j = w->data;
	service *svc = j->svc;
	metrics_job_run(svc->metrics, mono_s() - j->started_at);
	job_take_progress(j);
	job_settle(svc, j);
}

/* Records again the outcomes that wait for the store, and starts queued jobs. */
static void retry_waiting(service *svc)
{
	for (job_rt *j = svc->running; j; j = j->next)
		if (j->awaiting && !j->recording)
			job_settle(svc, j);
	jobs_pump(svc);
}

typedef struct probe_op {
	storeq_op op;
	service *svc;
} probe_op;

static void probe_run(store *s, storeq_op *op)
{
	op->rc = store_probe_write(s, &op->err);
}

static void probe_done(storeq_op *op)
{
	service *svc = ((probe_op *)op)->svc;
	svc->store_probing = 0;
	if (!op->rc && svc->writer)
		retry_waiting(svc);
	free(op);
}

/*
 * Every second while something waits for the store: probes it (on the
 * store thread) when it has reported a fault, and once it can write (or
 * the service is stopping) records the outcomes that wait and starts
 * queued jobs again. Stops itself once nothing waits.
 */
static void store_retry_tick(uv_timer_t *t)
{
	service *svc = t->data;
	if (!svc->writer)
		return; /* the stop has finished: jobs_free_queue() closed this timer */
	int fault = storeq_fault(svc->writer, NULL);
	if (fault == STORE_OK || svc->stopping) {
		retry_waiting(svc);
	} else if (!svc->store_probing) {
		probe_op *p = calloc(1, sizeof *p);
		if (p) {
			p->svc = svc;
			p->op.run = probe_run;
			p->op.done = probe_done;
			p->op.writes = STOREQ_ALONE; /* its own transaction */
			svc->store_probing = 1;
			storeq_submit(svc->writer, &p->op);
		}
	}
	int blocked = svc->queue_head && svc->nrunning < svc->cfg.workers && !svc->stopping;
	if (!svc->awaiting_store && !blocked && !svc->store_probing &&
	    storeq_fault(svc->writer, NULL) == STORE_OK)
		uv_timer_stop(t);
}

static void start_run(store *s, storeq_op *op)
{
	op->rc = store_job_started(s, ((start_op *)op)->j->id, &op->err);
}

/* Loop thread: the start is recorded (or not): the job runs, or waits. */
static void start_done(storeq_op *op)
{
	job_rt *j = ((start_op *)op)->j;
	service *svc = j->svc;
	int rc = op->rc;
	sf_err err = op->err;
	free(op);
	j->starting = 0;
	if (rc == SF_ESYS) {
		/* The storage cannot take the start: the job goes back first in
		 * the queue, and the retry timer starts it when it can. */
		running_remove(svc, j);
		if (!j->start_waits++)
			log_error("job %s: store: %s (stays queued)", j->id, err.msg);
		queue_push_front(svc, j);
		store_retry_arm(svc);
		return;
	}
	if (rc) {
		log_error("job %s: store: %s", j->id, err.msg);
		running_remove(svc, j);
		events_job_ended(svc, j->id);
		job_rt_free(j);
		jobs_pump(svc);
		return;
	}
	/* A stop that came meanwhile has raised the job's cancel flag: the
	 * generator returns at once and the job is requeued. */
	j->started_at = mono_s();
	metrics_job_wait(svc->metrics, j->started_at - j->queued_at);
	j->work.data = j;
	log_job(j, "running", NULL);
	if (uv_queue_work(svc->loop, &j->work, job_work, job_after)) {
		running_remove(svc, j);
		job_fail_async(svc, j->id, "the worker pool refused the job");
		job_rt_free(j);
		jobs_pump(svc);
	}
}

/* The oldest queued job that is not being cancelled, or NULL. */
static job_rt *next_startable(service *svc)
{
	for (job_rt *j = svc->queue_head; j; j = j->next)
		if (!j->cancelling)
			return j;
	return NULL;
}

/*
 * Starts queued jobs while there are free workers: each takes its slot at
 * once and runs once the store thread has recorded its start.
 */
static void jobs_pump(service *svc)
{
	while (!svc->stopping && svc->writer && svc->nrunning < svc->cfg.workers) {
		job_rt *j = next_startable(svc);
		if (!j)
			break;
		if (storeq_fault(svc->writer, NULL) != STORE_OK) {
			store_retry_arm(svc); /* it starts them once a probe succeeds */
			break;
		}
		start_op *so = calloc(1, sizeof *so);
		if (!so)
			break;
		queue_remove(svc, j);
		running_add(svc, j);
		j->starting = 1;
		so->j = j;
		so->op.run = start_run;
		so->op.done = start_done;
		so->op.writes = STOREQ_WRITE;
		storeq_submit(svc->writer, &so->op);
	}
	if (svc->stopping && !svc->nrunning)
		service_stop(svc); /* finishes the stop once the last job is back */
}

void jobs_start(service *svc)
{
	jobs_pump(svc);
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
		if (j->recording)
			continue; /* returned already: its outcome is being recorded */
		j->cancel_reason = CANCEL_SHUTDOWN;
		atomic_store(&j->cancel, 1);
	}
	/* Outcomes waiting for the store get one last try now, not in a second. */
	if (awaiting && svc->store_retry_ready)
		uv_timer_start(&svc->store_retry, store_retry_tick, 0, STORE_RETRY_MS);
}

int jobs_resume_pending(service *svc, store *writer, sf_err *err)
{
	char(*ids)[40] = NULL;
	size_t n = 0;
	int rc = store_pending_jobs(writer, &ids, &n, err);
	for (size_t i = 0; !rc && i < n; i++) {
		store_job job = { 0 };
		if (store_get_job(writer, ids[i], &job, err) != 1)
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
			store_job_failed(writer, job.id,
					 kind ? perr.msg : "unknown kind after an upgrade", err);
		} else {
			queue_push(svc, j);
			log_job(j, "queued", "reason=restart");
		}
		store_job_clear(&job);
	}
	free(ids);
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
	int found = store_get_job(svc->reader, id, job, &err);
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

static void submit_run(store *s, storeq_op *op)
{
	submit_op *so = (submit_op *)op;
	op->rc = store_insert_job(s, &so->job, so->idem, so->idem ? so->hash : NULL, &so->existing,
				  &op->err);
}

/* Loop thread: the job is durable (or refused): 202, or why not. */
static void submit_done(storeq_op *op)
{
	submit_op *so = (submit_op *)op;
	service *svc = so->svc;
	http_req *r = so->r;
	const sf_kind *kind = so->kind;
	void *params = so->params;
	char id[40];
	snprintf(id, sizeof id, "%s", so->job.id);
	uint64_t seed = so->job.seed;
	int rc = op->rc, existing = so->existing;
	svc->submitting--;
	store_job_clear(&so->job);
	free(so->idem);
	if (rc == SF_EINVAL) {
		kind->params_free(params);
		respond_problem(r, 422, "idempotency-key-reused", "Idempotency-Key reused", NULL,
				"%s", op->err.msg);
	} else if (rc) {
		kind->params_free(params);
		respond_store_error(svc, r, rc, &op->err, "the job could not be recorded");
	} else if (existing) {
		kind->params_free(params);
		respond_job(svc, r, 202, id);
	} else {
		job_rt *j = job_rt_new(svc, id, kind, params, seed);
		if (!j) {
			kind->params_free(params);
			job_fail_async(svc, id, "out of memory");
			respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		} else {
			queue_push(svc, j);
			log_job(j, "queued", NULL);
			respond_job(svc, r, 202, j->id);
			jobs_pump(svc);
		}
	}
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
	sf_err err = { 0 };
	/* A job naming a resource that is not there could only fail: refuse it now. */
	const char *rtype = NULL;
	const char *rname = kind->params_resource ? kind->params_resource(params, &rtype) : NULL;
	int have = rname && kind->resource ? res_exists(svc->reader, rtype, rname, &err) : 1;
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
	if (svc->queued + svc->submitting >= svc->cfg.max_queue) {
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

static void cancel_run(store *s, storeq_op *op)
{
	op->rc = store_job_cancelled(s, ((cancel_op *)op)->j->id, &op->err);
}

/* Loop thread: the cancel of a queued job is recorded (or not). */
static void cancel_done(storeq_op *op)
{
	cancel_op *co = (cancel_op *)op;
	job_rt *q = co->j;
	service *svc = q->svc;
	http_req *r = co->r;
	char id[40];
	snprintf(id, sizeof id, "%s", q->id);
	q->cancelling = 0;
	if (op->rc == SF_ESYS) { /* still queued, in the store as here */
		respond_store_error(svc, r, op->rc, &op->err, "the cancel could not be recorded");
		free(co);
		jobs_pump(svc);
		return;
	}
	queue_remove(svc, q);
	if (op->rc)
		log_error("job %s: store: %s", id, op->err.msg);
	log_job(q, "cancelled", "while queued");
	events_job_ended(svc, id);
	job_rt_free(q);
	respond_job(svc, r, 200, id);
	free(co);
}

void jobs_cancel(service *svc, http_req *r, const route_match *m)
{
	const char *id = route_param(m, "id");
	job_rt *q = find_in(svc->queue_head, id);
	sf_err err = { 0 };
	if (q && q->cancelling) { /* a cancel is on its way already */
		respond_job(svc, r, 202, id);
		return;
	}
	if (q) {
		cancel_op *co = calloc(1, sizeof *co);
		if (!co) {
			respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
			return;
		}
		q->cancelling = 1; /* the scheduler does not start it meanwhile */
		co->j = q;
		co->r = r;
		co->op.run = cancel_run;
		co->op.done = cancel_done;
		co->op.writes = STOREQ_WRITE;
		storeq_submit(svc->writer, &co->op); /* answered in cancel_done */
		return;
	}
	job_rt *run = find_in(svc->running, id);
	if (run && run->recording) {
		respond_problem(r, 409, "job-finished", "Job already finished", NULL,
				"job '%s' has finished running and can no longer be cancelled; its "
				"outcome is being recorded",
				id);
		return;
	}
	if (run && run->awaiting) {
		const char *why;
		storeq_fault(svc->writer, &why);
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
	int found = store_get_job(svc->reader, id, &job, &err);
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
	if (!jobs || store_list_jobs(svc->reader, st, kind, before, page_size + 1, jobs, &n, &err)) {
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
