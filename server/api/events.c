/*
 * events.c - GET /v1/jobs/{id}/events: a job's progress as Server-Sent
 * Events, and the per-job event log behind it (events.h).
 *
 * Who runs where. Everything in this file runs on the loop thread. A
 * generator reports each generation on its worker to jobs.c's
 * job_progress(), which queues it under the job's mutex and wakes the loop
 * (progress_async); on the loop, jobs.c hands every queued generation, in
 * order, to events_progress(). When a job leaves the scheduler (it ended,
 * or could not start), jobs.c calls events_job_ended() after the store has
 * recorded its state.
 *
 * Who owns what. The hub (svc->events, made on first use) owns one feed per
 * job that has reported progress or has watchers: the job's id, an ev_log
 * holding its events as text, and its list of watchers. An event is
 * formatted once, appended to the feed's log, and every watcher is woken.
 * A watcher owns only its read offset into the log, the Last-Event-ID it
 * came with and a ping flag. A watcher belongs to its HTTP request: the
 * handler makes it and the stream's closed callback (from MHD's completion
 * callback in http.c) frees it, and frees an ended feed left without
 * watchers. Feeds of jobs still running when the service stops are freed
 * with the hub (events_free).
 *
 * Suspension. A watcher's answer is MHD's response-from-callback
 * (http_respond_stream). Whenever MHD can send, watcher_read() copies from
 * the log at the watcher's offset; once the watcher has caught up it
 * returns 0 and http.c suspends the connection from inside that callback.
 * Appending an event calls http_stream_wake() on each watcher of the feed,
 * which resumes it. A waiting watcher therefore costs a suspended connection
 * and a small struct: no thread, no polling, no copy of the events. A 15 s
 * timer sets every watcher's ping flag and wakes it, and a watcher with
 * nothing else to send writes a ": ping" comment: it keeps proxies from
 * closing a quiet stream and lets MHD notice a client that went away
 * (a suspended connection is not watched for that).
 *
 * Ending. A stream ends (the chunked body is terminated) after its watcher
 * has read the feed's final event; at once when the job was already in a
 * final state (the final event is then the whole answer); when a slow
 * watcher falls behind the log's limit (it may reconnect with
 * Last-Event-ID); and at shutdown: events_stop() ends every stream before
 * the HTTP server closes, so SIGTERM never waits on a watcher.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_out.h"
#include "events.h"
#include "service.h"

/* Bytes of events kept per job: about 6000 generations. */
#define EV_LOG_LIMIT (1u << 20)
/* Between keep-alive comments on a quiet stream (a build may set it, to test). */
#ifndef EV_PING_MS
#define EV_PING_MS 15000
#endif

/* How often the events of jobs running on other nodes are read from the
 * store, and how many at most per read (see "jobs running on other nodes"). */
#define EV_POLL_MS 250
#define EV_POLL_BATCH 256

/* The first bytes of every stream: how long an EventSource waits before reconnecting. */
static const char preamble[] = "retry: 3000\n\n";
static const char ping_comment[] = ": ping\n\n";

/* ---- the log ---- */

typedef struct ev_mark {
	int64_t id;
	uint64_t at; /* absolute offset of the event's first byte */
} ev_mark;

struct ev_log {
	size_t limit;
	char *text; /* the events kept, back to back */
	size_t len, cap;
	uint64_t base;  /* absolute offset of text[0], always an event's start */
	ev_mark *marks; /* one per event kept, oldest first */
	size_t nmarks, marks_cap;
};

ev_log *ev_log_new(size_t limit)
{
	ev_log *log = calloc(1, sizeof *log);
	if (log)
		log->limit = limit ? limit : 1;
	return log;
}

void ev_log_free(ev_log *log)
{
	if (!log)
		return;
	free(log->text);
	free(log->marks);
	free(log);
}

/*
 * Drops the oldest events so that `need` more bytes fit under the limit,
 * leaving a quarter of the room to spare so that dropping stays rare.
 */
static void log_trim(ev_log *log, size_t need)
{
	if (log->len + need <= log->limit)
		return;
	size_t room = need < log->limit ? log->limit - need : 0;
	size_t target = room - room / 4;
	uint64_t end = log->base + log->len;
	size_t k = 0;
	while (k < log->nmarks && end - log->marks[k].at > target)
		k++;
	uint64_t cut = k < log->nmarks ? log->marks[k].at : end;
	size_t drop = (size_t)(cut - log->base);
	memmove(log->text, log->text + drop, log->len - drop);
	log->len -= drop;
	log->base = cut;
	memmove(log->marks, log->marks + k, (log->nmarks - k) * sizeof *log->marks);
	log->nmarks -= k;
}

int ev_log_append(ev_log *log, int64_t id, const char *text, size_t len)
{
	log_trim(log, len);
	if (log->len + len > log->cap) {
		size_t cap = log->cap ? log->cap : 1024;
		while (cap < log->len + len)
			cap *= 2;
		char *t = realloc(log->text, cap);
		if (!t)
			return SF_ENOMEM;
		log->text = t;
		log->cap = cap;
	}
	if (log->nmarks == log->marks_cap) {
		size_t cap = log->marks_cap ? 2 * log->marks_cap : 64;
		ev_mark *m = realloc(log->marks, cap * sizeof *m);
		if (!m)
			return SF_ENOMEM;
		log->marks = m;
		log->marks_cap = cap;
	}
	log->marks[log->nmarks++] = (ev_mark){ .id = id, .at = log->base + log->len };
	memcpy(log->text + log->len, text, len);
	log->len += len;
	return 0;
}

uint64_t ev_log_begin(const ev_log *log)
{
	return log->base;
}

uint64_t ev_log_end(const ev_log *log)
{
	return log->base + log->len;
}

size_t ev_log_count(const ev_log *log)
{
	return log->nmarks;
}

int64_t ev_log_last_id(const ev_log *log)
{
	return log->nmarks ? log->marks[log->nmarks - 1].id : -1;
}

/* The index of the event holding absolute offset `pos` (begin <= pos < end). */
static size_t mark_at(const ev_log *log, uint64_t pos)
{
	size_t lo = 0, hi = log->nmarks - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		if (log->marks[mid].at <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

size_t ev_log_read(const ev_log *log, uint64_t *pos, int64_t after, char *buf, size_t max)
{
	uint64_t end = ev_log_end(log);
	size_t n = 0;
	if (*pos < log->base || *pos > end)
		return 0;
	while (n < max && *pos < end) {
		size_t k = mark_at(log, *pos);
		uint64_t stop = k + 1 < log->nmarks ? log->marks[k + 1].at : end;
		if (*pos == log->marks[k].at && log->marks[k].id <= after) {
			*pos = stop; /* seen before the reconnect */
			continue;
		}
		size_t take = (size_t)(stop - *pos);
		if (take > max - n)
			take = max - n;
		memcpy(buf + n, log->text + (*pos - log->base), take);
		n += take;
		*pos += take;
	}
	return n;
}

/* ---- feeds and watchers ---- */

typedef struct ev_feed ev_feed;
typedef struct ev_watcher ev_watcher;

struct ev_feed {
	char job_id[40];
	ev_log *log;
	int ended; /* the job left the scheduler; its final event, if any, is logged */
	int polling; /* a read of its events is with the read pool */
	ev_watcher *watchers;
	ev_feed *prev, *next;
};

struct ev_watcher {
	ev_hub *hub;
	ev_feed *feed;
	http_req *req;
	uint64_t pos;         /* next byte of the log to send */
	int64_t after;        /* Last-Event-ID: events up to it are skipped; -1: none */
	size_t preamble_sent; /* bytes of `preamble` sent so far */
	int ping;             /* a keep-alive comment is due */
	ev_watcher *prev, *next;
};

struct ev_hub {
	service *svc;
	ev_feed *feeds;
	int stopping;
	uv_timer_t ping;
	uv_timer_t poll; /* sched_shared: reads the events of jobs running elsewhere */
	int open_handles; /* ping and poll, until closed */
};

static void on_ping(uv_timer_t *t)
{
	ev_hub *h = t->data;
	for (ev_feed *f = h->feeds; f; f = f->next) {
		for (ev_watcher *w = f->watchers; w; w = w->next) {
			w->ping = 1;
			http_stream_wake(w->req);
		}
	}
}

static void on_poll(uv_timer_t *t);

/* The service's hub; made on first use when `create`. NULL when out of memory. */
static ev_hub *hub_of(service *svc, int create)
{
	if (svc->events || !create)
		return svc->events;
	ev_hub *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->svc = svc;
	if (uv_timer_init(svc->loop, &h->ping)) {
		free(h);
		return NULL;
	}
	h->ping.data = h;
	uv_timer_start(&h->ping, on_ping, EV_PING_MS, EV_PING_MS);
	uv_unref((uv_handle_t *)&h->ping); /* never what keeps the loop alive */
	uv_timer_init(svc->loop, &h->poll);
	h->poll.data = h;
	if (svc->jobs && sched_shared(svc->jobs)) {
		uv_timer_start(&h->poll, on_poll, EV_POLL_MS, EV_POLL_MS);
		uv_unref((uv_handle_t *)&h->poll);
	}
	svc->events = h;
	return h;
}

static ev_feed *feed_find(ev_hub *h, const char *job_id)
{
	for (ev_feed *f = h->feeds; f; f = f->next)
		if (!strcmp(f->job_id, job_id))
			return f;
	return NULL;
}

static ev_feed *feed_new(ev_hub *h, const char *job_id)
{
	ev_feed *f = calloc(1, sizeof *f);
	if (!f || !(f->log = ev_log_new(EV_LOG_LIMIT))) {
		free(f);
		return NULL;
	}
	snprintf(f->job_id, sizeof f->job_id, "%s", job_id);
	f->next = h->feeds;
	if (h->feeds)
		h->feeds->prev = f;
	h->feeds = f;
	return f;
}

static void feed_free(ev_hub *h, ev_feed *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else
		h->feeds = f->next;
	if (f->next)
		f->next->prev = f->prev;
	ev_log_free(f->log);
	free(f);
}

static void wake_all(ev_feed *f)
{
	for (ev_watcher *w = f->watchers; w; w = w->next)
		http_stream_wake(w->req);
}

static double finite_or_zero(double x)
{
	return isfinite(x) ? x : 0;
}

/*
 * One event as SSE text ("id: ...", "event: ...", "data: <JSON>", blank
 * line), malloc'ed with its length in *len: from compact JSON text (which
 * never holds a newline), or from `data`, which format_event consumes.
 * NULL when out of memory.
 */
static char *format_event_text(int64_t id, const char *name, const char *json, size_t *len)
{
	size_t cap = strlen(json) + strlen(name) + 64;
	char *text = malloc(cap);
	if (text) {
		int n = snprintf(text, cap, "id: %lld\nevent: %s\ndata: %s\n\n", (long long)id,
				 name, json);
		*len = (size_t)n;
	}
	return text;
}

static char *format_event(int64_t id, const char *name, json_t *data, size_t *len)
{
	char *json = data ? sf_json_dumps(data, JSON_COMPACT) : NULL;
	json_decref(data);
	if (!json)
		return NULL;
	char *text = format_event_text(id, name, json, len);
	free(json);
	return text;
}

static int is_final(job_state s)
{
	return s == JOB_SUCCEEDED || s == JOB_FAILED || s == JOB_CANCELLED;
}

/*
 * The final event of a job in a final state, from its stored record, so
 * that a live watcher and one that comes later get the same bytes. Its id
 * follows the last generation's.
 */
static char *final_event(const store_job *job, size_t *len, int64_t *id)
{
	json_t *levels = job->level_ids ? json_loads(job->level_ids, 0, NULL) : NULL;
	json_t *data = json_pack(
		"{s:s, s:s, s:o, s:o, s:{s:i, s:i, s:f}}", "job_id", job->id, "state",
		job_state_name(job->state), "level_ids", levels ? levels : json_array(), "error",
		job->error ? json_string(job->error) : json_null(), "progress", "generation",
		job->generation, "of", job->generations, "best", finite_or_zero(job->best));
	*id = (int64_t)job->generation + 1;
	return format_event(*id, "end", data, len);
}

/* Appends one formatted event to `f` and wakes its watchers. */
static void feed_append(ev_feed *f, int64_t id, char *text, size_t len)
{
	if (!text)
		return;
	if (ev_log_append(f->log, id, text, len))
		log_error("job %s: events: out of memory, event %lld dropped", f->job_id,
			  (long long)id);
	free(text);
	wake_all(f);
}

/* ---- one watcher's stream ---- */

static long watcher_read(void *arg, char *buf, size_t max)
{
	ev_watcher *w = arg;
	ev_feed *f = w->feed;
	size_t n = 0;
	if (w->hub->stopping)
		return HTTP_STREAM_END;
	while (w->preamble_sent < sizeof preamble - 1 && n < max)
		buf[n++] = preamble[w->preamble_sent++];
	if (w->pos < ev_log_begin(f->log))
		return n ? (long)n : HTTP_STREAM_END; /* fell behind the log: reconnect */
	n += ev_log_read(f->log, &w->pos, w->after, buf + n, max - n);
	if (n) {
		w->ping = 0; /* the data keeps the stream alive */
		return (long)n;
	}
	if (f->ended)
		return HTTP_STREAM_END;
	if (w->ping && max >= sizeof ping_comment - 1) {
		w->ping = 0;
		memcpy(buf, ping_comment, sizeof ping_comment - 1);
		return (long)(sizeof ping_comment - 1);
	}
	return 0; /* http.c suspends the connection until a wake */
}

static void watcher_closed(void *arg)
{
	ev_watcher *w = arg;
	ev_feed *f = w->feed;
	if (w->prev)
		w->prev->next = w->next;
	else
		f->watchers = w->next;
	if (w->next)
		w->next->prev = w->prev;
	if (f->ended && !f->watchers)
		feed_free(w->hub, f);
	free(w);
}

/* The Last-Event-ID header as a number, or -1 when absent or not one. */
static int64_t last_event_id(const http_req *r)
{
	const char *v = http_req_header(r, "Last-Event-ID");
	if (!v || *v < '0' || *v > '9')
		return -1;
	char *end;
	long long id = strtoll(v, &end, 10);
	return *end || id < 0 ? -1 : (int64_t)id;
}

/* ---- the service's side ---- */

/* The job's row is read (events_stream): its final event, or a stream. */
static void stream_job(service *svc, http_req *r, const store_job *job, int arg)
{
	(void)arg;
	const char *id = job->id;
	const char *headers[] = { "Cache-Control", "no-store", "X-Accel-Buffering", "no", NULL };
	int64_t after = last_event_id(r);
	if (is_final(job->state)) {
		/* The whole story is the final event; a client that has it is told to stop. */
		size_t len = 0;
		int64_t final_id;
		char *text = final_event(job, &len, &final_id);
		if (after >= final_id)
			http_respond(r, 204, NULL, "", 0, headers);
		else if (text)
			http_respond(r, 200, "text/event-stream", text, len, headers);
		else
			respond_problem(r, 500, "internal", "Internal error", NULL,
					"out of memory");
		free(text);
		return;
	}
	if (svc->stopping) {
		respond_problem(r, 503, "stopping", "Service stopping", NULL,
				"the service is shutting down; retry against its successor");
		return;
	}
	ev_hub *h = hub_of(svc, 1);
	ev_feed *f = h ? feed_find(h, id) : NULL;
	if (h && !f)
		f = feed_new(h, id);
	ev_watcher *w = f ? calloc(1, sizeof *w) : NULL;
	if (!w) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	w->hub = h;
	w->feed = f;
	w->req = r;
	w->pos = ev_log_begin(f->log); /* late watchers get every event kept */
	w->after = after;
	http_stream st = { .read = watcher_read, .closed = watcher_closed, .arg = w };
	if (http_respond_stream(r, 200, "text/event-stream", headers, &st)) {
		free(w);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	w->next = f->watchers;
	if (f->watchers)
		f->watchers->prev = w;
	f->watchers = w;
}

void events_stream(service *svc, http_req *r, const route_match *m)
{
	jobs_read(svc, r, route_param(m, "id"), stream_job, 0);
}

void events_progress(service *svc, const char *job_id, const ga_generation *gen)
{
	ev_hub *h = hub_of(svc, 1);
	ev_feed *f = h ? feed_find(h, job_id) : NULL;
	if (h && !f)
		f = feed_new(h, job_id);
	/* A job rescued from another node reports again what its watchers here
	 * may have read from the store already: its generations are the same. */
	if (!f || f->ended || gen->generation <= ev_log_last_id(f->log))
		return;
	char *data = sched_progress_json(job_id, gen);
	size_t len = 0;
	char *text = data ? format_event_text(gen->generation, "progress", data, &len) : NULL;
	free(data);
	feed_append(f, gen->generation, text, len);
}

/*
 * Ends feed `f`: appends the final event when `job` (the job's row, or
 * NULL) is in a final state, then lets each stream end once it has read the
 * rest (at once when there is none).
 */
static void feed_end(ev_hub *h, ev_feed *f, const store_job *job)
{
	if (job && is_final(job->state)) {
		size_t len = 0;
		int64_t id;
		char *text = final_event(job, &len, &id);
		feed_append(f, id, text, len);
	}
	f->ended = 1;
	if (f->watchers)
		wake_all(f); /* each stream ends once it has read the rest */
	else
		feed_free(h, f);
}

/* A job's final row, read off the loop for its feed (events_job_ended). */
typedef struct ended_op {
	storeq_op op;
	service *svc;
	char job_id[40];
	store_job job;
	int found;
} ended_op;

static void ended_run(store *st, storeq_op *op)
{
	ended_op *e = (ended_op *)op;
	e->found = store_get_job(st, e->job_id, &e->job, &op->err);
	op->rc = e->found < 0 ? e->found : 0;
}

static void ended_done(storeq_op *op)
{
	ended_op *e = (ended_op *)op;
	ev_hub *h = e->svc->events;
	ev_feed *f = h && !h->stopping ? feed_find(h, e->job_id) : NULL;
	if (op->rc)
		log_error("job %s: events: store: %s", e->job_id, op->err.msg);
	if (f && !f->ended)
		feed_end(h, f, e->found == 1 ? &e->job : NULL);
	store_job_clear(&e->job);
	free(e);
}

void events_job_ended(service *svc, const char *job_id)
{
	ev_hub *h = hub_of(svc, 0);
	ev_feed *f = h ? feed_find(h, job_id) : NULL;
	if (!f)
		return; /* nobody watched and no progress was reported */
	ended_op *e = calloc(1, sizeof *e);
	if (!e || strlen(job_id) >= sizeof e->job_id) {
		free(e);
		feed_end(h, f, NULL);
		return;
	}
	e->svc = svc;
	snprintf(e->job_id, sizeof e->job_id, "%s", job_id);
	e->op.run = ended_run;
	e->op.done = ended_done;
	e->op.writes = STOREQ_READ;
	storeq_submit(svc->reads, &e->op); /* the row is committed: any handle sees it */
}

/* ---- jobs running on other nodes (sched_shared) ---- */

/*
 * A job watched here but running on another node (or queued, not yet
 * claimed) gets its events from the store, where its node appends them with
 * each renewal of its lease (every second): every EV_POLL_MS the hub reads,
 * on a thread of the read pool, the job's row and then its events after the last one
 * logged here, appends them to the feed and, once the row is final and
 * every event has been read, the final event. A job that starts running
 * here feeds itself (events_progress) and is not read any more.
 */
typedef struct poll_op {
	storeq_op op;
	service *svc;
	char job_id[40];
	int64_t after;
	store_job job;
	int found;
	store_event events[EV_POLL_BATCH];
	int n;
} poll_op;

static void poll_run(store *st, storeq_op *op)
{
	poll_op *p = (poll_op *)op;
	/* The row first: when it is final, every event was written before it. */
	p->found = store_get_job(st, p->job_id, &p->job, &op->err);
	op->rc = p->found < 0 ? p->found
			      : store_job_events(st, p->job_id, p->after, EV_POLL_BATCH, p->events,
						 &p->n, &op->err);
}

static void poll_done(storeq_op *op)
{
	poll_op *p = (poll_op *)op;
	ev_hub *h = p->svc->events;
	ev_feed *f = h && !h->stopping ? feed_find(h, p->job_id) : NULL;
	if (f)
		f->polling = 0;
	if (op->rc < 0 && f)
		log_error("job %s: events: store: %s", p->job_id, op->err.msg);
	if (f && !op->rc && !f->ended) {
		for (int i = 0; i < p->n; i++) {
			if (p->events[i].id <= ev_log_last_id(f->log))
				continue;
			size_t len = 0;
			char *text = format_event_text(p->events[i].id, "progress",
						       p->events[i].data, &len);
			feed_append(f, p->events[i].id, text, len);
		}
		if (p->found == 1 && is_final(p->job.state) && p->n < EV_POLL_BATCH)
			feed_end(h, f, &p->job);
	}
	for (int i = 0; i < p->n; i++)
		store_event_clear(&p->events[i]);
	store_job_clear(&p->job);
	free(p);
}

static void on_poll(uv_timer_t *t)
{
	ev_hub *h = t->data;
	service *svc = h->svc;
	if (h->stopping || !svc->reads || !svc->jobs)
		return;
	/* `next` first: a read pool of 0 threads answers inside storeq_submit,
	 * which may end and free f. */
	for (ev_feed *f = h->feeds, *next; f; f = next) {
		next = f->next;
		if (!f->watchers || f->ended || f->polling ||
		    sched_local(svc->jobs, f->job_id) != SCHED_NOT_HERE)
			continue;
		poll_op *p = calloc(1, sizeof *p);
		if (!p)
			return;
		p->svc = svc;
		snprintf(p->job_id, sizeof p->job_id, "%s", f->job_id);
		p->after = ev_log_last_id(f->log);
		p->op.run = poll_run;
		p->op.done = poll_done;
		p->op.writes = STOREQ_READ;
		f->polling = 1;
		storeq_submit(svc->reads, &p->op);
	}
}

void events_stop(service *svc)
{
	ev_hub *h = svc->events;
	if (!h)
		return;
	h->stopping = 1;
	uv_timer_stop(&h->ping);
	uv_timer_stop(&h->poll);
	for (ev_feed *f = h->feeds; f; f = f->next)
		wake_all(f);
}

static void hub_closed(uv_handle_t *handle)
{
	ev_hub *h = handle->data;
	if (--h->open_handles == 0)
		free(h);
}

void events_free(service *svc)
{
	ev_hub *h = svc->events;
	if (!h)
		return;
	svc->events = NULL;
	while (h->feeds) {
		ev_feed *f = h->feeds;
		/* The HTTP server is closed, so every stream's closed callback has run. */
		while (f->watchers) {
			ev_watcher *w = f->watchers;
			f->watchers = w->next;
			free(w);
		}
		feed_free(h, f);
	}
	h->open_handles = 2;
	uv_close((uv_handle_t *)&h->poll, hub_closed);
	uv_close((uv_handle_t *)&h->ping, hub_closed);
}
