/*
 * service.h - the state of `starforge serve`, owned by the loop thread.
 *
 * One libuv loop thread owns HTTP (http.c) and the job scheduler (jobs.c);
 * the store thread (storeq.h) owns the database writer; workers on libuv's
 * thread pool only compute.
 * Handlers (jobs.c, levels.c, evaluations.c, service.c) run on the loop
 * thread and answer through the helpers in this header.
 */
#ifndef SF_SERVICE_H
#define SF_SERVICE_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "../../core/search/ga.h"
#include "../http/auth.h"
#include "../http/cors.h"
#include "../jobs/evalcache.h"
#include "../http/http.h"
#include "../base/log.h"
#include "../base/metrics.h"
#include "../http/rcache.h"
#include "../jobs/res_pool.h"
#include "../jobs/sched.h"
#include "../http/routes.h"
#include "../store/store.h"
#include "../store/storeq.h"

typedef struct service_config {
	/*
	 * Where to listen: sockets the command bound (listen.h) before
	 * anything else started, and their URLs for the "listening" log line.
	 * Once service_start has started the HTTP server (svc->http is set)
	 * it owns them; until then they are the caller's to close.
	 */
	const int *listen_fds;
	int nlisten;
	const char *listen_urls;
	char db_path[1024];
	int workers;        /* jobs running at once */
	int max_queue;      /* jobs waiting at most */
	int job_threads;    /* evaluation threads per job */
	int read_threads;   /* the read pool's, 0..STOREQ_READERS_MAX (0: reads on the loop) */
	double eval_budget; /* conformations an evaluation request may cost */
	int64_t eval_cache_max; /* the store's evaluation cache's bound (0: none) */
	double estimate_steps; /* flatPERM steps of an estimated one (moves N/5, nodes N/2) */
	size_t max_body;
	/* Limits (docs/RELIABILITY.md): a job's wall-clock budget once running,
	 * connections open at once (in all, per client address; 0: no per-address
	 * limit), and how long a connection may take to deliver a request. */
	int job_timeout_s;
	/* The lease a node holds a running job under (sched.h), in ms, and
	 * this node's name, the owner of its leases. */
	int lease_ms;
	char node[64];
	unsigned max_connections, max_connections_per_ip, connection_timeout_s;
	/* access.c; both owned by the caller of service_start, and outliving the service */
	const auth_tokens *tokens; /* NULL: no route needs a token */
	int auth_reads;            /* with tokens: the reading routes need one too */
	const cors_policy *cors;   /* NULL: no CORS headers, and OPTIONS is a 405 */
} service_config;

typedef struct ev_hub ev_hub;

/* A job that lost its node this many times fails (sched.h, store_rescue_expired). */
#define SERVICE_MAX_LOST 3

typedef struct service {
	uv_loop_t *loop;
	service_config cfg;
	/*
	 * The database: the writer belongs to the store thread (storeq.h),
	 * which runs every write and commits them in groups; handlers read
	 * through the read pool `reads` (service_read), threads with a READONLY
	 * handle each, so the loop thread never waits on the database (a read
	 * never waits for a commit either: SQLite's WAL, PostgreSQL's MVCC).
	 */
	storeq *writer;
	storeq *reads;
	/* The schema version found at start, the binary's, and the back end's name. */
	int schema_version, schema_latest;
	const char *backend;
	metrics *metrics;
	http_server *http;
	uv_signal_t sigterm, sigint;
	uv_timer_t log_flush;      /* stderr is block-buffered; flushed on this tick */
	rcache *responses;         /* bodies of immutable answers (levels, evaluations) */
	evalcache *evals;          /* the lattice search's side of the evaluation cache */
	res_pool *resources;       /* uploaded resources, as jobs' generators read them */
	route *routes;             /* the route table (service.c builds it at start) */
	size_t nroutes;
	char (*route_text)[6][96]; /* patterns and names of the resource routes */
	/* access.c: each route's ACCESS_* class, parallel to routes */
	unsigned char *route_access;
	int stopping;
	sched *jobs;    /* the scheduler: claims, runs and records jobs */
	int submitting; /* jobs.c: accepted requests whose insert is with the store thread */
	/* evaluations.c */
	int evaluations_running;
	/* checks.c */
	int checks_running;
	/* events.c: live progress feeds and their watchers; NULL until first used */
	ev_hub *events;
} service;

/* Starts the service on `loop` (store, migrations, requeue, HTTP). Returns 0 or a code with err
 * set. */
int service_start(service *svc, uv_loop_t *loop, const service_config *cfg, sf_err *err);

/* Begins a graceful stop: no new connections, running jobs requeued at their next generation. */
void service_stop(service *svc);

/*
 * Fills svc->routes[0..svc->nroutes-1] (and svc->route_text, which they
 * point into) with the service's route table: the fixed routes and those of
 * every registered kind's resource type. Needs nothing else of `svc`, so a
 * test or fuzz target may call it on a zeroed service; the caller frees
 * svc->routes and svc->route_text. Returns 0, or SF_ENOMEM with err set.
 */
int service_routes_build(service *svc, sf_err *err);

/* ---- responses (service.c) ---- */

/*
 * Answers an immutable body from the response cache: 304 when the request's
 * If-None-Match lists its ETag, else 200 with `content_type`; both with the
 * ETag and `cache_control`. A body that may go compressed (encoding.h: a
 * compressible type, ENC_MIN_BYTES or more) says Vary: Accept-Encoding, and
 * when the request prefers gzip is answered gzip-compressed (from the
 * cache's slot when `hit` is cached, compressed once) under its own ETag,
 * the plain one with "-gz" inside the quotes; the 304 compares the ETag of
 * the coding it would answer with.
 */
void respond_cached(http_req *r, const rcache_hit *hit, const char *content_type,
		    const char *cache_control);

/*
 * The same, and when `vary` is not NULL a Vary header with it on both the
 * 200 and the 304 (a representation chosen by content negotiation: "Accept").
 */
void respond_cached_vary(http_req *r, const rcache_hit *hit, const char *content_type,
			 const char *cache_control, const char *vary);

/* Answers with `doc` as JSON (consumes the reference) and extra headers (name, value, ..., NULL).
 */
void respond_json(http_req *r, int status, json_t *doc, const char *const *headers);

/*
 * Answers with an RFC 9457 problem document: type https://starforge.dev/problems/<slug>,
 * `title`, `status` and a printf-style detail naming what was wrong.
 */
void respond_problem(http_req *r, int status, const char *slug, const char *title,
		     const char *const *headers, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/*
 * Answers a request whose write the store did not take (rc, err): 507
 * when the storage is full, 503 when it cannot be written for another
 * reason, both with Retry-After and a detail that starts with `what` and
 * says nothing was recorded; 500 for anything else.
 */
void respond_store_error(service *svc, http_req *r, int rc, const sf_err *err, const char *what);

/*
 * A handler's read, off the loop thread. The caller allocates (calloc) a
 * struct whose first member is a service_read, with its inputs and room
 * for the answer, and calls service_read_submit(): fetch runs on a thread of the
 * read pool with that thread's handle (it sets op->rc and op->err, as a
 * storeq op's run), then answer runs on the loop thread and answers
 * rd->r; service_read frees the struct after answer. The request stays
 * suspended meanwhile; a stop waits for every read.
 */
typedef struct service_read service_read;
struct service_read {
	storeq_op op; /* rc, err and the handle's fault after fetch */
	service *svc;
	http_req *r;
	void (*answer)(service_read *rd);
};
void service_read_submit(service *svc, http_req *r, service_read *rd,
			 void (*fetch)(store *s, storeq_op *op),
			 void (*answer)(service_read *rd));

/*
 * Answers a read that failed (op->rc < 0): 503 storage-unavailable with
 * Retry-After when the database could not be reached (op->fault
 * STORE_UNAVAILABLE: PostgreSQL down or restarting), else 500.
 */
void respond_read_error(http_req *r, const storeq_op *op);

/* Unix time in milliseconds, and its RFC 3339 form (UTC, millisecond precision). */
int64_t service_now_ms(void);
void service_format_time(int64_t ms, char out[32]);

/*
 * Reads the arguments every listing takes: page_size (1..100, default 20),
 * page_token (opaque cursor) and kind (a registered kind, or NULL when
 * absent). Returns 0, or answers 400 naming the bad argument and returns -1.
 */
int service_list_args(http_req *r, int *page_size, int64_t *before, const char **kind);

/* The opaque token for a page that continues before `seq`. */
void service_page_token(int64_t seq, char out[32]);

/*
 * query.c: checks the names of `r`'s query arguments before a handler
 * reads any. Every name must be in `allowed` (NULL-terminated; NULL: none)
 * or, when `accept` is not NULL, make accept(arg, name) return non-zero;
 * no name may be empty or given twice. Returns 0; otherwise answers 400
 * invalid-query naming the first bad argument and listing `allowed_text`
 * as what is allowed (NULL: the names of `allowed`), and returns -1.
 */
int service_query_check(http_req *r, const char *const *allowed,
			int (*accept)(void *arg, const char *name), void *arg,
			const char *allowed_text);

/* The parameters every listing takes (service_list_args), for the start of
 * an allowed list: { SERVICE_LIST_PARAMS, "state", NULL }. */
#define SERVICE_LIST_PARAMS "page_size", "page_token", "kind"

/* ---- handlers ---- */

void jobs_submit(service *svc, http_req *r, const route_match *m);
void jobs_get(service *svc, http_req *r, const route_match *m);
void jobs_list(service *svc, http_req *r, const route_match *m);
void jobs_cancel(service *svc, http_req *r, const route_match *m);
/*
 * jobs.c: reads job `id` off the loop thread (service_read), then answers
 * 404 (no such job), 503 or 500 (the store failed) itself, or calls
 * found(svc, r, &job, arg) on the loop thread to answer with the job.
 */
void jobs_read(service *svc, http_req *r, const char *id,
	       void (*found)(service *svc, http_req *r, const store_job *job, int arg), int arg);
void levels_get(service *svc, http_req *r, const route_match *m);
/* levels.c: GET /v1/levels/{id}.svg[?star=1|2|3], the level's picture (the kind's level_svg or
 * level_svg_star). */
void levels_svg(service *svc, http_req *r, const route_match *m);
void levels_list(service *svc, http_req *r, const route_match *m);
void evaluations_get(service *svc, http_req *r, const route_match *m);
/* evaluations.c: GET /v1/evaluations/{lattice}/{sequence}.svg, its picture. */
void evaluations_svg(service *svc, http_req *r, const route_match *m);
/* checks.c: POST /v1/{kind}/check and /v1/{kind}/hint, through the kind's
 * check and hint operations. */
void kinds_check(service *svc, http_req *r, const route_match *m);
void kinds_hint(service *svc, http_req *r, const route_match *m);
/* resources.c: route_match.arg is the route's sf_resource_kind. */
void resources_upload(service *svc, http_req *r, const route_match *m);
void resources_get(service *svc, http_req *r, const route_match *m);
void resources_list(service *svc, http_req *r, const route_match *m);
struct sf_resource_kind; /* core/kinds.h */
/* Whether an upload of resource kind `rk` with this Content-Type (NULL:
 * none) will be read as something other than JSON (a px model's CSV): the
 * only bodies the JSON depth check leaves alone. */
int resources_body_not_json(const struct sf_resource_kind *rk, const char *content_type);

/*
 * events.c: GET /v1/jobs/{id}/events, the job's progress as Server-Sent
 * Events (an event per generation, then a final one); see events.c.
 */
void events_stream(service *svc, http_req *r, const route_match *m);
/* events.c, from the scheduler on the loop thread: a generation of a job
 * running here, in the order the generator reported them. */
void events_progress(service *svc, const char *job_id, const ga_generation *gen);
/* events.c, from the scheduler and jobs.c: the job is final in the store
 * (or could not start); appends the final event when that
 * state is final and ends the job's streams once they have read it. */
void events_job_ended(service *svc, const char *job_id);
/* events.c: at the start of a stop: ends every stream (no new ones start). */
void events_stop(service *svc);
/* events.c: once the HTTP server is closed: frees the feeds and the hub. */
void events_free(service *svc);

/* ---- access: bearer tokens and CORS (access.c) ---- */

/* A route's access class. */
enum {
	ACCESS_READ = 0,   /* open, unless --auth-reads */
	ACCESS_WRITE = 1,  /* needs a token whenever there is a token file */
	ACCESS_PUBLIC = 2, /* always open: probes, the API document, the dashboard's files */
};

/*
 * service.c, beside the route table: the names of the routes that change
 * state (every resource upload route is one too, whatever its name), of
 * the routes that are not GET but change nothing, and of the routes that
 * stay open even with --auth-reads. Each list ends with NULL.
 */
extern const char *const service_writing_routes[];
extern const char *const service_computing_routes[];
extern const char *const service_public_routes[];

/*
 * Classifies every route of svc->routes into svc->route_access (freed with
 * the route table). Returns 0; SF_ENOMEM; or SF_EINVAL with err naming a
 * route that is not GET and is in neither service_writing_routes nor
 * service_computing_routes, so that a new writing route cannot be left
 * open by omission.
 */
int access_build(service *svc, sf_err *err);

/* Logs one line on how access is configured (tokens, CORS origins); never a token. */
void access_log(const service *svc);

/*
 * Called first for every request. With CORS configured, attaches the CORS
 * headers its answer will carry (Vary: Origin, and for an allowed Origin
 * Access-Control-Allow-Origin and -Expose-Headers) and answers a preflight
 * (OPTIONS to a path the route table knows: 204 with Allow and, for an
 * allowed Origin, Access-Control-Allow-Methods, -Allow-Headers, -Max-Age).
 * Returns 1 when it answered `r`, else 0. Without CORS it does nothing.
 */
int access_begin(service *svc, http_req *r);

/*
 * Called with the route `rt` found for `r`: returns 1 when the request may
 * go on; otherwise answers 401 (problem type unauthorized, with
 * WWW-Authenticate: Bearer realm="starforge") and returns 0.
 */
int access_allowed(service *svc, http_req *r, const route *rt);

#endif
