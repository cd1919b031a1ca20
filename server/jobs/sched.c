/*
 * sched.c - the job scheduler (sched.h).
 *
 * Who runs where. Everything here runs on the loop thread except
 * job_work(), which runs a kind's generator on libuv's thread pool, and the
 * `run` halves of the store operations, which run on the store thread
 * (storeq.h) and touch nothing of the loop's but what the loop no longer
 * changes. A running job is a job_rt on the running list; the queue is the
 * store's.
 *
 * How results come back. The generator reports progress from its worker
 * through job_progress(): it stores the latest generation, and queues every
 * generation, under the job's mutex and wakes the loop with uv_async_send
 * (coalesced by libuv); the loop copies the latest into the job, where
 * sched_live() reads it, and hands the queued ones in order to
 * hooks.progress. When the generator returns, the store thread records its
 * last progress, its levels and its outcome, fenced by the job's lease.
 *
 * Stopping a job. A cancel raises the job's atomic cancel flag; the
 * generator stops at its next generation. At shutdown the same flag is
 * raised with reason "shutdown", and the job goes back to queued (fenced),
 * for any node to run again with the same seed and so the same result. A
 * job whose lease this node lost stops for reason "lost" and records
 * nothing: another node has it.
 *
 * When the store cannot write (a full disk, a read-only file: store.h),
 * nothing is dropped and nothing is written half. A claim it cannot record
 * claims nothing; a job whose outcome it cannot record keeps its result and
 * its worker slot (it "waits"). The one-second tick probes the store and,
 * once it takes writes, records the waiting outcomes and claims again; a
 * stop lets the waiting jobs go unrecorded, still running in the store,
 * where a restart (SQLite) or a rescue (PostgreSQL) finds them.
 */
#include "sched.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_out.h"
#include "../../core/kinds.h"
#include "../base/log.h"

enum { CANCEL_NONE, CANCEL_USER, CANCEL_SHUTDOWN, CANCEL_LOST };

/* How often the scheduler rescues expired leases, polls for jobs queued
 * elsewhere, recounts the queue and probes a faulty store. */
#define TICK_MS 1000

/* Rescued jobs one sweep handles at most (the rest wait a tick). */
#define RESCUE_BATCH 64

/* Job events (shared mode) are kept this long after their job finished,
 * for watchers on other nodes still catching up (events.c polls every
 * 250 ms); every node prunes them once per PRUNE_TICKS ticks. */
#define EVENTS_KEEP_MS 60000
#define PRUNE_TICKS 30

typedef struct job_rt job_rt;

struct job_rt {
	sched *s;
	char id[40];
	const sf_kind *kind;
	void *params;
	uint64_t seed;
	store_fence fence; /* this node's claim: (owner, attempt) */
	double started_at;
	double renewed_at; /* the last heartbeat the store took */
	atomic_int cancel;
	int cancel_reason;
	uv_work_t work;
	json_t *result;
	sf_err err;
	uv_mutex_t mu; /* guards latest, dirty and pending, written by the worker */
	ga_generation latest;
	int dirty;
	ga_generation *pending; /* every generation not yet handed to hooks.progress */
	size_t npending, pending_cap;
	ga_generation shown; /* loop thread's copy */
	/* sched_shared: progress events not yet handed to the store thread */
	store_event *outbox;
	int noutbox, outbox_cap;
	int returned;        /* the generator has returned */
	int recording;       /* its outcome is with the store thread */
	int awaiting;        /* its outcome waits for the store to take writes */
	int heartbeating;    /* a heartbeat is with the store thread */
	job_rt *next, *prev;
};

struct sched {
	uv_loop_t *loop;
	storeq *writer;
	sched_config cfg;
	sched_hooks hooks;
	metrics *metrics;
	evalcache *evals;
	res_pool *resources;
	int rescue;       /* sweep expired leases (several nodes may share the store) */
	uv_async_t progress_async; /* workers: "some job has progress" */
	uv_timer_t tick;           /* TICK_MS */
	uv_timer_t heartbeat;      /* lease / 3 */
	int handles;               /* handles not closed yet */
	job_rt *running;
	int nrunning;  /* on the running list: computing, or recording their outcome */
	int computing; /* of those, whose generator has not returned: the busy workers */
	int queued; /* estimate: sched_queued */
	int claiming, rescuing, counting, probing, pruning;
	unsigned ticks;
	int awaiting_store;
	int started, stopping, closing;
};

static double mono_s(void)
{
	return (double)uv_hrtime() * 1e-9;
}

static void log_job(const job_rt *j, const char *transition, const char *detail)
{
	log_job_event(j->id, transition, j->kind->name, (unsigned long long)j->seed, detail);
}

/* ---- the running list ---- */

static job_rt *job_rt_new(sched *s, const store_job *row, const sf_kind *kind, void *params)
{
	job_rt *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	if (uv_mutex_init(&j->mu)) {
		free(j);
		return NULL;
	}
	j->s = s;
	snprintf(j->id, sizeof j->id, "%s", row->id);
	j->kind = kind;
	j->params = params;
	j->seed = row->seed;
	snprintf(j->fence.owner, sizeof j->fence.owner, "%s", s->cfg.node);
	j->fence.attempt = row->attempt;
	j->started_at = j->renewed_at = mono_s();
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
	for (int i = 0; i < j->noutbox; i++)
		store_event_clear(&j->outbox[i]);
	free(j->outbox);
	uv_mutex_destroy(&j->mu);
	free(j);
}

static void running_add(sched *s, job_rt *j)
{
	j->prev = NULL;
	j->next = s->running;
	if (s->running)
		s->running->prev = j;
	s->running = j;
	s->nrunning++;
}

static void running_remove(sched *s, job_rt *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		s->running = j->next;
	if (j->next)
		j->next->prev = j->prev;
	j->next = j->prev = NULL;
	s->nrunning--;
}

static job_rt *find_running(const sched *s, const char *id)
{
	for (job_rt *j = s->running; j; j = j->next)
		if (!strcmp(j->id, id))
			return j;
	return NULL;
}

static void stop_job(job_rt *j, int reason)
{
	if (j->returned || atomic_load(&j->cancel))
		return;
	j->cancel_reason = reason;
	atomic_store(&j->cancel, 1);
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
	uv_async_send(&j->s->progress_async);
}

/* Events kept for the store at most per job between two renewals. */
#define OUTBOX_MAX 4096

char *sched_progress_json(const char *job_id, const ga_generation *gen)
{
	json_t *data = json_pack("{s:s, s:i, s:i, s:f, s:f, s:i, s:I}", "job_id", job_id,
				 "generation", gen->generation, "of", gen->generations, "best",
				 isfinite(gen->best) ? gen->best : 0, "mean",
				 isfinite(gen->mean) ? gen->mean : 0, "at_best", gen->at_best,
				 "evaluations", (json_int_t)gen->evaluations);
	char *text = data ? sf_json_dumps(data, JSON_COMPACT) : NULL;
	json_decref(data);
	return text;
}

/* Keeps a progress event for the store (sched_shared); dropped when out of room. */
static void outbox_add(job_rt *j, const ga_generation *gen)
{
	if (j->noutbox == j->outbox_cap) {
		if (j->outbox_cap >= OUTBOX_MAX)
			return;
		int cap = j->outbox_cap ? 2 * j->outbox_cap : 16;
		store_event *o = realloc(j->outbox, (size_t)cap * sizeof *o);
		if (!o)
			return;
		j->outbox = o;
		j->outbox_cap = cap;
	}
	char *data = sched_progress_json(j->id, gen);
	if (!data)
		return;
	j->outbox[j->noutbox++] = (store_event){ .id = gen->generation, .data = data };
}

/* The events of `events[0..n-1]` to the store, in chunks it takes (store thread). */
static int outbox_write(store *st, const char *id, const store_fence *f, store_event *events,
			int n, sf_err *err)
{
	for (int at = 0; at < n; at += 1000) {
		int k = n - at < 1000 ? n - at : 1000;
		int rc = store_append_job_events(st, id, f, events + at, k, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Hands job j's unsent events over (to an op for the store thread); *n their count. */
static store_event *outbox_take(job_rt *j, int *n)
{
	store_event *events = j->outbox;
	*n = j->noutbox;
	j->outbox = NULL;
	j->noutbox = j->outbox_cap = 0;
	return events;
}

static void outbox_free(store_event *events, int n)
{
	for (int i = 0; i < n; i++)
		store_event_clear(&events[i]);
	free(events);
}

/*
 * Takes what the worker reported since the last call (loop thread): the
 * latest generation, and every generation, in order, for hooks.progress.
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
	sched *s = j->s;
	for (size_t i = 0; i < n && s->hooks.progress; i++)
		s->hooks.progress(s->hooks.arg, j->id, &gens[i]);
	for (size_t i = 0; i < n && s->rescue; i++)
		outbox_add(j, &gens[i]);
	free(gens);
}

static void on_progress(uv_async_t *a)
{
	sched *s = a->data;
	for (job_rt *j = s->running; j; j = j->next)
		job_take_progress(j);
}

static void job_work(uv_work_t *w)
{
	job_rt *j = w->data;
	sf_gen_opts opts = { .seed = j->seed,
			     .threads = j->s->cfg.job_threads,
			     .progress = job_progress,
			     .progress_arg = j,
			     .cancel = &j->cancel,
			     /* the wall-clock budget: the generator stops at its next
			      * generation past it, with status timed_out */
			     .deadline = ga_clock_now() + j->s->cfg.job_timeout_s,
			     .eval_cache = evalcache_iface(j->s->evals),
			     .resource = res_fetch,
			     .resource_ctx = j->s->resources };
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

static int store_levels(store *st, job_rt *j, sf_err *err)
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
	rc = store_job_succeeded(st, j->id, &j->fence, sl, (int)n, err);
done:
	for (size_t i = 0; docs && i < n; i++)
		free(docs[i]);
	free(docs);
	free(sl);
	free(text);
	return rc;
}

/* ---- store operations (storeq.h) ---- */

static void claim_kick(sched *s);

/* A job failed by the scheduler itself (it could not run it at all), fenced. */
typedef struct fail_op {
	storeq_op op;
	sched *s;
	char id[40];
	store_fence fence;
	char why[200];
} fail_op;

static void fail_run(store *st, storeq_op *op)
{
	fail_op *f = (fail_op *)op;
	op->rc = store_job_failed(st, f->id, &f->fence, f->why, &op->err);
}

static void fail_done(storeq_op *op)
{
	fail_op *f = (fail_op *)op;
	sched *s = f->s;
	if (op->rc < 0)
		log_error("job %s: store: %s", f->id, op->err.msg);
	else if (!op->rc && s->hooks.ended)
		s->hooks.ended(s->hooks.arg, f->id);
	free(f);
}

static void fail_async(sched *s, const char *id, const store_fence *fence, const char *why)
{
	fail_op *f = calloc(1, sizeof *f);
	if (!f) {
		log_error("job %s: out of memory failing it (%s)", id, why);
		return; /* its lease expires; a rescue takes it */
	}
	f->s = s;
	snprintf(f->id, sizeof f->id, "%s", id);
	f->fence = *fence;
	snprintf(f->why, sizeof f->why, "%s", why);
	f->op.run = fail_run;
	f->op.done = fail_done;
	f->op.writes = STOREQ_WRITE;
	storeq_submit(s->writer, &f->op);
}

/* ---- recording outcomes ---- */

typedef struct record_op {
	storeq_op op;
	job_rt *j;
	store_event *events; /* the job's last progress events, for the store */
	int nevents;
	int ended;              /* the job is final in the store */
	int lost;               /* the fence did not hold: nothing was recorded */
	const char *transition; /* for the log line */
	char detail[320];
	char refused[300];     /* a write the store refused for good, for the log */
	char cache_error[300]; /* the evaluation cache's flush, for the log */
} record_op;

/*
 * Store thread: writes what a job whose generator has returned came to:
 * its last progress (a fenced heartbeat), then its outcome. Returns 0 once
 * that is done, refused for good (ro->refused says why), or refused by the
 * fence (ro->lost); SF_ESYS, with `err` set, when the storage did not take
 * a write, which may then be retried whole (each write is its own
 * transaction or savepoint, and the progress repeats harmlessly). Sets
 * ro->ended when the job is final in the store. Reads only what the loop
 * no longer changes: the job has returned.
 */
static int job_record(store *st, record_op *ro, sf_err *err)
{
	job_rt *j = ro->j;
	sched *s = j->s;
	const char *outcome =
		j->result ? json_string_value(json_object_get(j->result, "status")) : NULL;
	char *detail = ro->detail;
	size_t dsize = sizeof ro->detail;
	ro->ended = 1;
	ro->lost = 0;
	ro->refused[0] = '\0';
	/* Its last events for watchers on other nodes; a failure loses only those. */
	sf_err eerr = { 0 };
	if (outbox_write(st, j->id, &j->fence, ro->events, ro->nevents, &eerr) == SF_ESYS) {
		*err = eerr;
		return SF_ESYS;
	}
	int rc = store_job_heartbeat(st, j->id, &j->fence, s->cfg.lease_ms, j->shown.generation,
				     j->shown.generations, j->shown.best, NULL, err);
	if (rc == STORE_LOST) {
		ro->lost = 1;
		return 0;
	}
	if (rc == SF_ESYS)
		return rc;
	if (rc)
		snprintf(ro->refused, sizeof ro->refused, "%s", err->msg);
	if (!j->result) {
		rc = store_job_failed(st, j->id, &j->fence, j->err.msg, err);
		ro->transition = "failed";
		snprintf(detail, dsize, "error=\"%s\"", j->err.msg);
	} else if (outcome && !strcmp(outcome, "completed")) {
		rc = store_levels(st, j, err);
		ro->transition = "succeeded";
		snprintf(detail, dsize, "levels=%zu",
			 json_array_size(json_object_get(j->result, "levels")));
		if (rc < 0 && rc != SF_ESYS) {
			/* Levels the store refuses for good: the job fails, saying why. */
			ro->transition = "failed";
			snprintf(detail, dsize, "%s", err->msg);
			sf_err e2 = { 0 };
			int rc2 = store_job_failed(st, j->id, &j->fence, err->msg, &e2);
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
			 s->cfg.job_timeout_s, j->shown.generation, j->shown.generations);
		rc = store_job_failed(st, j->id, &j->fence, why, err);
		ro->transition = "failed";
		snprintf(detail, dsize, "reason=timed_out budget=%ds", s->cfg.job_timeout_s);
	} else if (j->cancel_reason == CANCEL_SHUTDOWN) {
		rc = store_job_requeue(st, j->id, &j->fence, err);
		ro->transition = "requeued";
		snprintf(detail, dsize, "reason=shutdown");
		ro->ended = 0;
	} else if (j->cancel_reason == CANCEL_USER) {
		rc = store_job_cancelled(st, j->id, &j->fence, err);
		ro->transition = "cancelled";
		detail[0] = '\0';
	} else {
		rc = store_job_failed(st, j->id, &j->fence, "the job stopped before completing",
				      err);
		ro->transition = "failed";
		snprintf(detail, dsize, "%s", outcome ? outcome : "");
	}
	if (rc == SF_ESYS)
		return rc;
	if (rc == STORE_LOST) {
		ro->lost = 1;
		return 0;
	}
	if (rc)
		snprintf(ro->refused, sizeof ro->refused, "%s", err->msg);
	return 0;
}

static void record_run(store *st, storeq_op *op)
{
	record_op *ro = (record_op *)op;
	sf_err err = { 0 };
	/* Evaluations the job computed, for later jobs and requests. */
	ro->cache_error[0] = '\0';
	if (evalcache_flush(ro->j->s->evals, st, &err))
		snprintf(ro->cache_error, sizeof ro->cache_error, "%s", err.msg);
	op->rc = job_record(st, ro, &op->err);
}

/* Lets a job go: off the running list, its watchers told when it is final. */
static void job_release(sched *s, job_rt *j, int ended)
{
	if (j->awaiting)
		s->awaiting_store--;
	running_remove(s, j);
	if (ended && s->hooks.ended)
		s->hooks.ended(s->hooks.arg, j->id);
	job_rt_free(j);
	if (s->stopping && !s->nrunning && s->hooks.stopped)
		s->hooks.stopped(s->hooks.arg);
	else
		claim_kick(s);
}

/*
 * Loop thread, once the outcome is durable (or known not to be). When the
 * storage did not take the write, the job keeps its worker slot and its
 * result, and waits: the tick records it again once the store can write.
 * Keeping the slot is deliberate: the next job could not record its own
 * result either. When the service is stopping the job is let go unrecorded
 * instead; the store still has it running under this node's lease.
 */
static void record_done(storeq_op *op)
{
	record_op *ro = (record_op *)op;
	job_rt *j = ro->j;
	sched *s = j->s;
	int ended = ro->ended;
	j->recording = 0;
	if (op->rc == SF_ESYS && !s->stopping) { /* the events go back, for the retry */
		j->outbox = ro->events;
		j->noutbox = j->outbox_cap = ro->nevents;
		ro->events = NULL;
		ro->nevents = 0;
	}
	outbox_free(ro->events, ro->nevents);
	if (ro->cache_error[0])
		log_error("job %s: evaluation cache: %s", j->id, ro->cache_error);
	if (op->rc == SF_ESYS && !s->stopping) {
		if (!j->awaiting) {
			j->awaiting = 1;
			s->awaiting_store++;
			char detail[300];
			snprintf(detail, sizeof detail, "store=\"%s\"", op->err.msg);
			log_job(j, "waiting", detail);
		}
		free(ro);
		return;
	}
	if (op->rc == SF_ESYS) {
		char detail[300];
		snprintf(detail, sizeof detail, "reason=shutdown store=\"%s\"", op->err.msg);
		log_job(j, "unrecorded", detail);
		ended = 0;
	} else if (op->rc < 0) {
		log_error("job %s: store: %s", j->id, op->err.msg);
		ended = 0;
	} else if (ro->lost) {
		log_job(j, "dropped", "reason=lease_lost (another node runs it; nothing recorded)");
		ended = 0;
	} else {
		log_job(j, ro->transition, ro->detail[0] ? ro->detail : NULL);
		if (ro->refused[0])
			log_error("job %s: store: %s", j->id, ro->refused);
	}
	free(ro);
	job_release(s, j, ended);
}

/* Hands a job whose generator has returned to the store thread. */
static void job_settle(sched *s, job_rt *j)
{
	if (j->cancel_reason == CANCEL_LOST) {
		/* Its lease is another node's: there is nothing to record. */
		log_job(j, "dropped", "reason=lease_lost (another node runs it; nothing recorded)");
		job_release(s, j, 0);
		return;
	}
	record_op *ro = calloc(1, sizeof *ro);
	if (!ro) { /* wait, as for a store that cannot write, and retry */
		if (!j->awaiting) {
			j->awaiting = 1;
			s->awaiting_store++;
			log_job(j, "waiting", "store=\"out of memory\"");
		}
		return;
	}
	j->recording = 1;
	ro->j = j;
	ro->events = outbox_take(j, &ro->nevents);
	ro->op.run = record_run;
	ro->op.done = record_done;
	ro->op.writes = STOREQ_WRITE;
	storeq_submit(s->writer, &ro->op);
}

static void job_after(uv_work_t *w, int status)
{
	(void)status;
	job_rt *j = w->data;
	sched *s = j->s;
	metrics_job_run(s->metrics, mono_s() - j->started_at);
	j->returned = 1;
	s->computing--; /* the worker is free: the next claim need not wait for the outcome */
	job_take_progress(j);
	job_settle(s, j);
	/* Queued after the outcome, so a job claimed now starts after it ends. */
	claim_kick(s);
}

/*
 * Submits a zeroed op of `size` bytes whose struct starts with its storeq_op
 * and then its sched (claim_op, rescue_op, count_op, probe_op), setting
 * *flag (the "one of these is on its way" mark its done clears).
 */
static void submit_small(sched *s, size_t size, void (*run)(store *, storeq_op *),
			 void (*done)(storeq_op *), int writes, int *flag)
{
	storeq_op *op = calloc(1, size);
	if (!op)
		return;
	/* every small op starts with its storeq_op, then its sched */
	*(sched **)((char *)op + sizeof(storeq_op)) = s;
	op->run = run;
	op->done = done;
	op->writes = writes;
	*flag = 1;
	storeq_submit(s->writer, op);
}


/* ---- claiming ---- */

typedef struct claim_op {
	storeq_op op;
	sched *s;
	store_job job;
} claim_op;

static void claim_run(store *st, storeq_op *op)
{
	claim_op *c = (claim_op *)op;
	op->rc = store_claim_job(st, c->s->cfg.node, c->s->cfg.lease_ms, &c->job, &op->err);
}

/* Runs a job this node has just claimed; returns it, or NULL when it could not run. */
static job_rt *job_start(sched *s, const store_job *row)
{
	store_fence fence = { .attempt = row->attempt };
	snprintf(fence.owner, sizeof fence.owner, "%s", s->cfg.node);
	const sf_kind *kind = sf_kind_find(row->kind);
	json_t *pj = json_loads(row->params ? row->params : "{}", 0, NULL);
	sf_err perr = { 0 };
	void *params = kind ? kind->params_parse(pj, &perr) : NULL;
	json_decref(pj);
	job_rt *j = params ? job_rt_new(s, row, kind, params) : NULL;
	if (!j) {
		/* A job this binary cannot run (any more) fails visibly. */
		if (params)
			kind->params_free(params);
		fail_async(s, row->id, &fence,
			   !kind     ? "unknown kind after an upgrade"
			   : params ? "out of memory"
				    : perr.msg);
		return NULL;
	}
	if (row->started_ms >= row->created_ms)
		metrics_job_wait(s->metrics, (double)(row->started_ms - row->created_ms) / 1000.0);
	running_add(s, j);
	s->computing++;
	j->work.data = j;
	char detail[96];
	snprintf(detail, sizeof detail, "attempt=%d node=%s", row->attempt, s->cfg.node);
	log_job(j, "running", detail);
	if (uv_queue_work(s->loop, &j->work, job_work, job_after)) {
		running_remove(s, j);
		s->computing--;
		fail_async(s, j->id, &j->fence, "the worker pool refused the job");
		job_rt_free(j);
		return NULL;
	}
	return j;
}

static void claim_done(storeq_op *op)
{
	claim_op *c = (claim_op *)op;
	sched *s = c->s;
	s->claiming = 0;
	int claimed = op->rc == 1 && !s->closing;
	if (op->rc < 0 && op->rc != SF_ESYS)
		log_error("scheduler: claiming a job: %s", op->err.msg);
	if (claimed) {
		if (s->queued > 0)
			s->queued--;
		job_rt *j = job_start(s, &c->job);
		if (j && s->stopping) /* claimed as the stop began: back to queued */
			stop_job(j, CANCEL_SHUTDOWN);
	}
	store_job_clear(&c->job);
	free(c);
	if (claimed)
		claim_kick(s);
	else if (s->stopping && !s->nrunning && s->hooks.stopped)
		s->hooks.stopped(s->hooks.arg);
}

/* Claims a job when a worker slot is free and no claim is on its way. */
static void claim_kick(sched *s)
{
	if (!s->started || s->stopping || s->closing || s->claiming ||
	    s->computing >= s->cfg.workers || s->awaiting_store)
		return;
	if (storeq_fault(s->writer, NULL) != STORE_OK)
		return; /* the tick probes the store and claims once it recovers */
	submit_small(s, sizeof(claim_op), claim_run, claim_done, STOREQ_WRITE, &s->claiming);
}

/* ---- heartbeats ---- */

typedef struct heartbeat_op {
	storeq_op op;
	sched *s;
	char id[40];
	store_fence fence;
	ga_generation progress;
	int cancel;
	store_event *events; /* progress events since the last renewal (sched_shared) */
	int nevents;
} heartbeat_op;

static void heartbeat_run(store *st, storeq_op *op)
{
	heartbeat_op *h = (heartbeat_op *)op;
	/* The events first, so that a watcher elsewhere sees them with the
	 * progress; a failure loses only them. */
	sf_err eerr = { 0 };
	if (outbox_write(st, h->id, &h->fence, h->events, h->nevents, &eerr) == STORE_LOST) {
		op->rc = STORE_LOST;
		return;
	}
	op->rc = store_job_heartbeat(st, h->id, &h->fence, h->s->cfg.lease_ms,
				     h->progress.generation, h->progress.generations,
				     h->progress.best, &h->cancel, &op->err);
}

static void heartbeat_done(storeq_op *op)
{
	heartbeat_op *h = (heartbeat_op *)op;
	sched *s = h->s;
	job_rt *j = s->closing ? NULL : find_running(s, h->id);
	if (j && j->fence.attempt == h->fence.attempt) {
		j->heartbeating = 0;
		if (op->rc == 0) {
			j->renewed_at = mono_s();
			if (h->cancel) /* asked for on another node */
				stop_job(j, CANCEL_USER);
		} else if (op->rc == STORE_LOST) {
			log_job(j, "lost", "reason=lease (another node rescued it, or it was cancelled)");
			stop_job(j, CANCEL_LOST);
		} else if (s->rescue && mono_s() - j->renewed_at > s->cfg.lease_ms / 1000.0) {
			/* Not renewed for a whole lease: another node may rescue it
			 * any moment; stop rather than run twice. */
			char detail[320];
			snprintf(detail, sizeof detail, "reason=heartbeats_failing store=\"%s\"",
				 op->err.msg);
			log_job(j, "lost", detail);
			stop_job(j, CANCEL_LOST);
		}
	}
	outbox_free(h->events, h->nevents);
	free(h);
}

static void on_heartbeat(uv_timer_t *t)
{
	sched *s = t->data;
	for (job_rt *j = s->running; j; j = j->next) {
		if (j->returned || j->heartbeating)
			continue;
		heartbeat_op *h = calloc(1, sizeof *h);
		if (!h)
			return;
		h->s = s;
		snprintf(h->id, sizeof h->id, "%s", j->id);
		h->fence = j->fence;
		h->progress = j->shown;
		h->events = outbox_take(j, &h->nevents);
		h->op.run = heartbeat_run;
		h->op.done = heartbeat_done;
		h->op.writes = STOREQ_WRITE;
		j->heartbeating = 1;
		storeq_submit(s->writer, &h->op);
	}
}

/* ---- the tick: rescue, recount, probe ---- */

typedef struct rescue_op {
	storeq_op op;
	sched *s;
	store_rescued out[RESCUE_BATCH];
	int n;
} rescue_op;

static void rescue_run(store *st, storeq_op *op)
{
	rescue_op *r = (rescue_op *)op;
	op->rc = store_rescue_expired(st, r->s->cfg.max_lost, r->out, RESCUE_BATCH, &r->n,
				      &op->err);
}

static void rescue_done(storeq_op *op)
{
	rescue_op *r = (rescue_op *)op;
	sched *s = r->s;
	s->rescuing = 0;
	if (op->rc < 0 && op->rc != SF_ESYS)
		log_error("scheduler: rescuing expired leases: %s", op->err.msg);
	for (int i = 0; op->rc >= 0 && i < r->n; i++) {
		const store_rescued *x = &r->out[i];
		char detail[96];
		snprintf(detail, sizeof detail, "reason=lease_expired attempt=%d lost=%d",
			 x->attempt, x->lost);
		const char *what = x->state == JOB_QUEUED ? "requeued" : job_state_name(x->state);
		log_job_event(x->id, what, x->kind[0] ? x->kind : "-", (unsigned long long)x->seed,
			      detail);
		if (x->state == JOB_QUEUED)
			s->queued++;
		else if (s->hooks.ended && !s->closing)
			s->hooks.ended(s->hooks.arg, x->id);
	}
	free(r);
	claim_kick(s);
}

typedef struct count_op {
	storeq_op op;
	sched *s;
	int64_t counts[5];
} count_op;

typedef struct prune_op {
	storeq_op op;
	sched *s;
} prune_op;

static void prune_run(store *st, storeq_op *op)
{
	op->rc = store_prune_job_events(st, EVENTS_KEEP_MS, NULL, &op->err);
}

static void prune_done(storeq_op *op)
{
	sched *s = ((prune_op *)op)->s;
	s->pruning = 0;
	if (op->rc < 0 && op->rc != SF_ESYS) /* SF_ESYS: the store's fault state says it */
		log_error("scheduler: pruning job events: %s", op->err.msg);
	free(op);
}

static void count_run(store *st, storeq_op *op)
{
	count_op *c = (count_op *)op;
	op->rc = store_count_jobs(st, c->counts, &op->err);
}

static void count_done(storeq_op *op)
{
	count_op *c = (count_op *)op;
	c->s->counting = 0;
	if (!op->rc)
		c->s->queued = (int)c->counts[JOB_QUEUED];
	free(c);
}

typedef struct probe_op {
	storeq_op op;
	sched *s;
} probe_op;

static void probe_run(store *st, storeq_op *op)
{
	op->rc = store_probe_write(st, &op->err);
}

/* Records again the outcomes that wait for the store, and claims. */
static void retry_waiting(sched *s)
{
	for (job_rt *j = s->running; j; j = j->next)
		if (j->awaiting && !j->recording) {
			j->awaiting = 0;
			s->awaiting_store--;
			job_settle(s, j);
		}
	claim_kick(s);
}

static void probe_done(storeq_op *op)
{
	sched *s = ((probe_op *)op)->s;
	s->probing = 0;
	if (!op->rc && !s->closing)
		retry_waiting(s);
	free(op);
}

_Static_assert(offsetof(claim_op, s) == sizeof(storeq_op), "sched after the op");
_Static_assert(offsetof(rescue_op, s) == sizeof(storeq_op), "sched after the op");
_Static_assert(offsetof(count_op, s) == sizeof(storeq_op), "sched after the op");
_Static_assert(offsetof(probe_op, s) == sizeof(storeq_op), "sched after the op");
_Static_assert(offsetof(prune_op, s) == sizeof(storeq_op), "sched after the op");

static void on_tick(uv_timer_t *t)
{
	sched *s = t->data;
	if (s->closing)
		return;
	if (storeq_fault(s->writer, NULL) != STORE_OK) {
		if (!s->probing)
			submit_small(s, sizeof(probe_op), probe_run, probe_done, STOREQ_ALONE,
				     &s->probing);
		return;
	}
	if (s->awaiting_store) {
		retry_waiting(s);
		return;
	}
	if (s->stopping)
		return;
	if (s->rescue) {
		if (!s->rescuing)
			submit_small(s, sizeof(rescue_op), rescue_run, rescue_done, STOREQ_WRITE,
				     &s->rescuing);
		/* other nodes queue jobs too: count them */
		if (!s->counting)
			submit_small(s, sizeof(count_op), count_run, count_done, STOREQ_READ,
				     &s->counting);
		if (++s->ticks % PRUNE_TICKS == 0 && !s->pruning)
			submit_small(s, sizeof(prune_op), prune_run, prune_done, STOREQ_WRITE,
				     &s->pruning);
	}
	claim_kick(s);
}

/* ---- the interface ---- */

sched *sched_new(uv_loop_t *loop, storeq *writer, const char *backend, const sched_config *cfg,
		 const sched_hooks *hooks, metrics *m, evalcache *evals, res_pool *resources)
{
	sched *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->loop = loop;
	s->writer = writer;
	s->cfg = *cfg;
	s->hooks = *hooks;
	s->metrics = m;
	s->evals = evals;
	s->resources = resources;
	/* SQLite serves one process: its leases are this node's alone. */
	s->rescue = strcmp(backend, "sqlite") != 0;
	uv_async_init(loop, &s->progress_async, on_progress);
	s->progress_async.data = s;
	uv_timer_init(loop, &s->tick);
	s->tick.data = s;
	uv_timer_init(loop, &s->heartbeat);
	s->heartbeat.data = s;
	s->handles = 3;
	return s;
}

int sched_requeue_all(store *writer, sf_err *err)
{
	char(*ids)[40] = NULL;
	size_t n = 0;
	int rc = store_pending_jobs(writer, &ids, &n, err);
	for (size_t i = 0; !rc && i < n; i++) {
		store_job job = { 0 };
		if (store_get_job(writer, ids[i], &job, err) != 1)
			continue;
		log_job_event(job.id, "queued", job.kind, (unsigned long long)job.seed,
			      "reason=restart");
		store_job_clear(&job);
	}
	free(ids);
	return rc;
}

void sched_start(sched *s)
{
	s->started = 1;
	/* The queue's length, before any submission of this node is recorded
	 * (the store thread runs ops in order); then kept by sched_queued_add
	 * (and on PostgreSQL recounted every tick). */
	submit_small(s, sizeof(count_op), count_run, count_done, STOREQ_READ, &s->counting);
	/* A third of the lease, and at most a second: the heartbeat also brings
	 * a cancel asked for on another node, and the progress other nodes
	 * show, so it sets how fresh both are. */
	uint64_t hb = (uint64_t)(s->cfg.lease_ms / 3);
	if (hb > 1000)
		hb = 1000;
	if (hb < 50)
		hb = 50;
	uv_timer_start(&s->heartbeat, on_heartbeat, hb, hb);
	/* The first tick at once: a restarted node rescues what is overdue. */
	uv_timer_start(&s->tick, on_tick, 0, TICK_MS);
}

void sched_kick(sched *s)
{
	claim_kick(s);
}

int sched_queued(const sched *s)
{
	return s->queued;
}

void sched_queued_add(sched *s, int delta)
{
	s->queued += delta;
	if (s->queued < 0)
		s->queued = 0;
}

int sched_running(const sched *s)
{
	return s->nrunning;
}

int sched_shared(const sched *s)
{
	return s->rescue;
}

int sched_live(const sched *s, const char *id, ga_generation *gen)
{
	job_rt *j = find_running(s, id);
	if (!j)
		return 0;
	*gen = j->shown;
	return 1;
}

int sched_local(const sched *s, const char *id)
{
	job_rt *j = find_running(s, id);
	if (!j)
		return SCHED_NOT_HERE;
	if (j->awaiting)
		return SCHED_AWAITING;
	return j->returned ? SCHED_RECORDING : SCHED_RUNNING;
}

int sched_cancel_local(sched *s, const char *id)
{
	job_rt *j = find_running(s, id);
	if (!j)
		return 0;
	if (j->returned)
		return -1;
	stop_job(j, CANCEL_USER);
	return 1;
}

void sched_stop(sched *s)
{
	if (!s->stopping) {
		s->stopping = 1;
		for (job_rt *j = s->running; j; j = j->next)
			stop_job(j, CANCEL_SHUTDOWN);
		/* Outcomes waiting for the store get one last try now. */
		if (s->awaiting_store)
			retry_waiting(s);
	}
	if (!s->nrunning && !s->claiming && s->hooks.stopped)
		s->hooks.stopped(s->hooks.arg);
}

static void on_closed(uv_handle_t *h)
{
	sched *s = h->data;
	if (--s->handles == 0)
		free(s);
}

void sched_free(sched *s)
{
	if (!s)
		return;
	s->closing = 1;
	while (s->running) { /* let go unrecorded: the store still has them running */
		job_rt *j = s->running;
		running_remove(s, j);
		job_rt_free(j);
	}
	uv_close((uv_handle_t *)&s->progress_async, on_closed);
	uv_close((uv_handle_t *)&s->tick, on_closed);
	uv_close((uv_handle_t *)&s->heartbeat, on_closed);
}
