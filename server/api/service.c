/*
 * service.c - `starforge serve`: start-up, the route table, the small
 * handlers (health, readiness, metrics, the OpenAPI document), response
 * helpers and a graceful stop.
 *
 * Who runs where: see service.h. Stopping: SIGTERM or SIGINT stop new
 * connections and new jobs, and ask running jobs to stop at their next
 * generation; when the last one is back in the queue (jobs.c calls
 * service_stop() again) the HTTP server and the loop's handles close, the
 * loop runs dry and serve returns 0.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../../core/json_depth.h"
#include "../../core/json_out.h"
#include "../../core/kinds.h"
#include "../base/embedded.h"
#include "../http/encoding.h"
#include "../base/log.h"
#include "service.h"
#include "web.h"

/* ---- responses ---- */

void respond_json(http_req *r, int status, json_t *doc, const char *const *headers)
{
	char *text = doc ? sf_json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text) {
		static const char oom[] = "{\"type\":\"https://starforge.dev/problems/internal\","
					  "\"title\":\"Internal error\",\"status\":500,"
					  "\"detail\":\"out of memory writing the response\"}";
		http_respond(r, 500, "application/problem+json", oom, sizeof oom - 1, NULL);
		return;
	}
	http_respond(r, status, "application/json", text, strlen(text), headers);
	free(text);
}

/* True when an If-None-Match value lists `etag` (weak or strong) or is "*". */
static int etag_matches(const char *inm, const char *etag)
{
	if (!inm)
		return 0;
	if (!strcmp(inm, "*"))
		return 1;
	size_t n = strlen(etag);
	for (const char *p = strstr(inm, etag); p; p = strstr(p + 1, etag)) {
		int starts = p == inm || p[-1] == ' ' || p[-1] == ',' || p[-1] == '/';
		int ends = p[n] == '\0' || p[n] == ',' || p[n] == ' ';
		if (starts && ends)
			return 1;
	}
	return 0;
}

void respond_cached(http_req *r, const rcache_hit *hit, const char *content_type,
		    const char *cache_control)
{
	respond_cached_vary(r, hit, content_type, cache_control, NULL);
}

void respond_cached_vary(http_req *r, const rcache_hit *hit, const char *content_type,
			 const char *cache_control, const char *vary)
{
	/* A body that may go compressed has two representations, each with
	 * its own ETag (encoding.h), and its Vary names Accept-Encoding. */
	int encodable = hit->len >= ENC_MIN_BYTES && enc_compressible(content_type);
	int gzip = encodable && http_req_accepts_gzip(r);
	char vary_text[128], gz_etag[ENC_ETAG_MAX];
	if (encodable) {
		snprintf(vary_text, sizeof vary_text, "%s%sAccept-Encoding", vary ? vary : "",
			 vary ? ", " : "");
		vary = vary_text;
	}
	const char *etag = hit->etag;
	if (gzip) {
		enc_etag_gz(hit->etag, gz_etag);
		etag = gz_etag;
	}
	const char *vary_name = vary ? "Vary" : NULL; /* the list ends at NULL */
	const char *h[] = { "ETag", etag, "Cache-Control", cache_control, vary_name, vary, NULL };
	if (etag_matches(http_req_header(r, "If-None-Match"), etag)) {
		http_respond_encoded(r, 304, NULL, "", 0, NULL, h);
		return;
	}
	if (gzip) {
		const char *gz;
		size_t gzlen;
		char *own = NULL; /* a body not in the cache is compressed for this answer only */
		if (rcache_gzip(hit, &gz, &gzlen) == 0 ||
		    enc_gzip(hit->body, hit->len, &own, &gzlen) == 0) {
			http_respond_encoded(r, 200, content_type, own ? own : gz, gzlen, "gzip",
					     h);
			free(own);
			return;
		}
		h[1] = hit->etag; /* out of memory: the plain body, under its own ETag */
	}
	http_respond_encoded(r, 200, content_type, hit->body, hit->len, NULL, h);
}

/*
 * Makes `s` valid UTF-8 in place: every byte that does not start a
 * well-formed sequence (a stray continuation byte, a truncated sequence, an
 * overlong form, a surrogate, a code point above U+10FFFF) becomes '?'.
 * JSON strings must be UTF-8 (jansson refuses anything else), and a problem
 * detail quotes what the client sent: a path segment such as %FF, a query
 * value, a kind name cut short by the detail's size.
 */
static void utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		int n = -1; /* continuation bytes after the lead byte */
		if (c < 0x80)
			n = 0;
		else if (c >= 0xC2 && c <= 0xDF)
			n = 1;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 2;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 3;
		int ok = n >= 0;
		for (int i = 1; ok && i <= n; i++)
			ok = (p[i] & 0xC0) == 0x80;
		if (ok && n >= 2) {
			unsigned c1 = p[1];
			ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0) &&
			     !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
		}
		if (!ok) {
			*p++ = '?';
			continue;
		}
		p += n + 1;
	}
}

void respond_problem(http_req *r, int status, const char *slug, const char *title,
		     const char *const *headers, const char *fmt, ...)
{
	char detail[512], type[128], instance[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	snprintf(type, sizeof type, "https://starforge.dev/problems/%s", slug);
	snprintf(instance, sizeof instance, "%s", http_req_path(r));
	utf8_scrub(detail);
	utf8_scrub(instance);
	json_t *doc = json_pack("{s:s, s:s, s:i, s:s, s:s}", "type", type, "title", title, "status",
				status, "detail", detail, "instance", instance);
	char *text = doc ? sf_json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (text)
		http_respond(r, status, "application/problem+json", text, strlen(text), headers);
	else
		http_respond(r, status, "application/problem+json", "{}", 2, headers);
	free(text);
}

int64_t service_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void service_format_time(int64_t ms, char out[32])
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(ms % 1000));
}

/* Page tokens: "p" and the seq in hex, opaque to clients. */
void service_page_token(int64_t seq, char out[32])
{
	snprintf(out, 32, "p%" PRIx64, (uint64_t)seq);
}

int service_list_args(http_req *r, int *page_size, int64_t *before, const char **kind)
{
	const char *ps = http_req_query(r, "page_size"), *pt = http_req_query(r, "page_token");
	*page_size = 20;
	*before = 0;
	if (ps) {
		char *end;
		long v = strtol(ps, &end, 10);
		if (!*ps || *end || ps[0] == '+' || ps[0] == ' ' || v < 1 || v > 100) {
			respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
					"page_size '%s' is out of range (allowed: 1..100)", ps);
			return -1;
		}
		*page_size = (int)v;
	}
	if (pt) {
		char *end;
		unsigned long long v = pt[0] == 'p' && pt[1] ? strtoull(pt + 1, &end, 16) : 0;
		if (pt[0] != 'p' || !pt[1] || *end || !v || v > INT64_MAX) {
			respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
					"page_token '%s' is not a token this service issued", pt);
			return -1;
		}
		*before = (int64_t)v;
	}
	*kind = http_req_query(r, "kind");
	if (*kind && !sf_kind_find(*kind)) {
		char kinds[128];
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"kind '%s' is unknown (allowed: %s)", *kind,
				sf_kind_names(kinds, sizeof kinds));
		return -1;
	}
	return 0;
}

/* ---- small handlers ---- */

/*
 * Answers a request whose write the store did not take (rc, err): 507
 * when the storage is full, 503 when it cannot be written for another
 * reason (read-only, failing, locked), both with Retry-After and a detail
 * saying that nothing was recorded; 500 for anything else.
 */
void respond_store_error(service *svc, http_req *r, int rc, const sf_err *err,
				const char *what)
{
	const char *h[] = { "Retry-After", "5", NULL };
	if (rc != SF_ESYS) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err->msg);
		return;
	}
	int fault = storeq_fault(svc->writer, NULL);
	if (fault == STORE_FULL)
		respond_problem(r, 507, "insufficient-storage", "Insufficient storage", h,
				"%s: the database or its disk is full, so nothing was recorded; "
				"retry when space returns (%s)",
				what, err->msg);
	else if (fault == STORE_UNAVAILABLE)
		respond_problem(r, 503, "storage-unavailable", "Storage unavailable", h,
				"%s: the database cannot be reached now, so nothing was recorded; "
				"retry later (%s)",
				what, err->msg);
	else
		respond_problem(r, 503, "storage-unavailable", "Storage unavailable", h,
				"%s: the database cannot be written now, so nothing was recorded; "
				"retry later (%s)",
				what, err->msg);
}

void respond_read_error(http_req *r, const storeq_op *op)
{
	const char *h[] = { "Retry-After", "5", NULL };
	if (op->rc == SF_ESYS && op->fault == STORE_UNAVAILABLE)
		respond_problem(r, 503, "storage-unavailable", "Storage unavailable", h,
				"the database cannot be reached now; retry later (%s)", op->err.msg);
	else if (op->rc == SF_ENOMEM)
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
	else
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s",
				op->err.msg);
}

static void read_done(storeq_op *op)
{
	service_read *rd = (service_read *)op;
	rd->answer(rd);
	free(rd);
}

void service_read_submit(service *svc, http_req *r, service_read *rd,
		  void (*fetch)(store *s, storeq_op *op), void (*answer)(service_read *rd))
{
	rd->svc = svc;
	rd->r = r;
	rd->answer = answer;
	rd->op.run = fetch;
	rd->op.done = read_done;
	rd->op.writes = STOREQ_READ;
	storeq_submit(svc->reads, &rd->op);
}

static void healthz(service *svc, http_req *r, const route_match *m)
{
	(void)svc;
	(void)m;
	const char *h[] = { "Cache-Control", "no-store", NULL };
	respond_json(r, 200, json_pack("{s:s}", "status", "ok"), h);
}

static void readyz(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	int version = svc->schema_version;
	int migrated = version == svc->schema_latest;
	int queued = sched_queued(svc->jobs);
	int room = queued < svc->cfg.max_queue;
	/* A store that cannot write (store.h) is probed every second (sched.c). */
	const char *fault_msg;
	int fault = storeq_fault(svc->writer, &fault_msg);
	int ready = migrated && room && !svc->stopping && fault == STORE_OK;
	const char *h[] = { "Cache-Control", "no-store", NULL };
	respond_json(r, ready ? 200 : 503,
		     json_pack("{s:s, s:{s:b, s:i, s:b, s:i, s:i, s:b, s:s, s:o, s:s, s:s}}", "status",
			       ready ? "ready" : "not ready", "checks", "database", version > 0,
			       "schema_version", version, "migrations_applied", migrated, "queued",
			       queued, "max_queue", svc->cfg.max_queue, "stopping",
			       svc->stopping, "storage",
			       fault == STORE_FULL          ? "full"
			       : fault == STORE_UNWRITABLE  ? "unwritable"
			       : fault == STORE_UNAVAILABLE ? "unavailable"
							    : "ok",
			       "storage_error", fault ? json_string(fault_msg) : json_null(),
			       "backend", svc->backend, "node", svc->cfg.node),
		     h);
}

/* GET /metrics: the job counts and the evaluation cache's read off the loop, then the text. */
typedef struct metrics_read {
	service_read rd;
	int64_t counts[5];
	int64_t eval_entries, eval_evictions;
} metrics_read;

/*
 * `text` (metrics_render's, `*len` bytes) and after it the store's
 * families: commits of the store thread (a batch counts once), operations
 * run and waiting per pool (the writer, the read pool), the fault state as
 * a 0/1 gauge per state, and the evaluation cache's size, bound and
 * evictions (the database's: every node's on PostgreSQL). A malloc'ed
 * text and its length, or NULL.
 */
static char *store_metrics(service *svc, const metrics_read *mr, const char *text, size_t *len)
{
	unsigned long commits = 0, wops = 0, rops = 0;
	storeq_counts(svc->writer, &commits, &wops);
	storeq_counts(svc->reads, NULL, &rops);
	int fault = storeq_fault(svc->writer, NULL);
	static const char *const faults[] = { "ok", "full", "unwritable", "unavailable" };
	char tail[2048];
	int n = snprintf(
		tail, sizeof tail,
		"# HELP starforge_store_commits_total Commits of the store thread; a batch of "
		"writes (group commit) counts once.\n"
		"# TYPE starforge_store_commits_total counter\n"
		"starforge_store_commits_total %lu\n"
		"# HELP starforge_store_operations_total Store operations run, by pool: the store "
		"thread (writer) and the read pool (reads).\n"
		"# TYPE starforge_store_operations_total counter\n"
		"starforge_store_operations_total{pool=\"writer\"} %lu\n"
		"starforge_store_operations_total{pool=\"reads\"} %lu\n"
		"# HELP starforge_store_pending Store operations submitted and not yet answered, by "
		"pool.\n"
		"# TYPE starforge_store_pending gauge\n"
		"starforge_store_pending{pool=\"writer\"} %u\n"
		"starforge_store_pending{pool=\"reads\"} %u\n"
		"# HELP starforge_store_fault The store's fault state (1 for the state it is in), "
		"as /readyz says it.\n"
		"# TYPE starforge_store_fault gauge\n",
		commits, wops, rops, storeq_pending(svc->writer), storeq_pending(svc->reads));
	for (int i = 0; i < 4 && n > 0 && (size_t)n < sizeof tail; i++)
		n += snprintf(tail + n, sizeof tail - (size_t)n, "starforge_store_fault{state=\"%s\"} %d\n",
			      faults[i], fault == i);
	if (n > 0 && (size_t)n < sizeof tail)
		n += snprintf(tail + n, sizeof tail - (size_t)n,
			      "# HELP starforge_evaluation_cache_entries Lattice evaluations the "
			      "store's cache holds.\n"
			      "# TYPE starforge_evaluation_cache_entries gauge\n"
			      "starforge_evaluation_cache_entries %lld\n"
			      "# HELP starforge_evaluation_cache_max_entries The cache's bound "
			      "(--eval-cache-max; 0: none).\n"
			      "# TYPE starforge_evaluation_cache_max_entries gauge\n"
			      "starforge_evaluation_cache_max_entries %lld\n"
			      "# HELP starforge_evaluation_cache_evictions_total Entries evicted, "
			      "least recently used first, to keep the cache within its bound.\n"
			      "# TYPE starforge_evaluation_cache_evictions_total counter\n"
			      "starforge_evaluation_cache_evictions_total %lld\n",
			      (long long)mr->eval_entries, (long long)svc->cfg.eval_cache_max,
			      (long long)mr->eval_evictions);
	if (n < 0 || (size_t)n >= sizeof tail)
		return NULL;
	char *all = malloc(*len + (size_t)n + 1);
	if (!all)
		return NULL;
	memcpy(all, text, *len);
	memcpy(all + *len, tail, (size_t)n + 1);
	*len += (size_t)n;
	return all;
}

static void metrics_fetch(store *s, storeq_op *op)
{
	metrics_read *mr = (metrics_read *)op;
	op->rc = store_count_jobs(s, mr->counts, &op->err);
	if (!op->rc)
		op->rc =
			store_evaluation_stats(s, &mr->eval_entries, &mr->eval_evictions, &op->err);
}

static void metrics_answer(service_read *rd)
{
	metrics_read *mr = (metrics_read *)rd;
	if (rd->op.rc) {
		respond_read_error(rd->r, &rd->op);
		return;
	}
	size_t len;
	char *text = metrics_render(rd->svc->metrics, mr->counts, &len);
	char *all = text ? store_metrics(rd->svc, mr, text, &len) : NULL;
	free(text);
	if (!all) {
		respond_problem(rd->r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	const char *h[] = { "Cache-Control", "no-store", NULL };
	http_respond(rd->r, 200, "text/plain; version=0.0.4; charset=utf-8", all, len, h);
	free(all);
}

static void metrics_get(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	metrics_read *mr = calloc(1, sizeof *mr);
	if (!mr) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	service_read_submit(svc, r, &mr->rd, metrics_fetch, metrics_answer);
}

/*
 * The bundled OpenAPI document (embedded.h: JSON text, which is YAML too),
 * as application/yaml at /openapi.yaml and application/json at /openapi.json.
 */
static void openapi_send(http_req *r, const char *content_type)
{
	if (!sf_openapi_count) {
		respond_problem(r, 404, "not-found", "Not found", NULL,
				"no OpenAPI document was built in");
		return;
	}
	const char *h[] = { "Cache-Control", "public, max-age=300", NULL };
	http_respond(r, 200, content_type, (const char *)sf_openapi[0].data, sf_openapi[0].len, h);
}

static void openapi_get(service *svc, http_req *r, const route_match *m)
{
	(void)svc;
	(void)m;
	openapi_send(r, "application/yaml");
}

static void openapi_json_get(service *svc, http_req *r, const route_match *m)
{
	(void)svc;
	(void)m;
	openapi_send(r, "application/json");
}

/* ---- routing ---- */

typedef void (*handler_fn)(service *svc, http_req *r, const route_match *m);

/* A fixed route's handler (and its arg, none). */
#define H(fn) ((void *)(fn)), NULL
static const route routes[] = {
	{ "POST", "/v1/jobs", "jobs.submit", H(jobs_submit) },
	{ "GET", "/v1/jobs", "jobs.list", H(jobs_list) },
	{ "GET", "/v1/jobs/{id}", "jobs.get", H(jobs_get) },
	{ "GET", "/v1/jobs/{id}/events", "jobs.events", H(events_stream) },
	{ "DELETE", "/v1/jobs/{id}", "jobs.cancel", H(jobs_cancel) },
	{ "GET", "/v1/levels", "levels.list", H(levels_list) },
	{ "GET", "/v1/levels/{id}.svg", "levels.svg", H(levels_svg) },
	{ "GET", "/v1/levels/{id}", "levels.get", H(levels_get) },
	{ "GET", "/v1/evaluations/{lattice}/{sequence}.svg", "evaluations.svg",
	  H(evaluations_svg) },
	{ "GET", "/v1/evaluations/{lattice}/{sequence}", "evaluations.get", H(evaluations_get) },
	{ "GET", "/healthz", "healthz", H(healthz) },
	{ "GET", "/readyz", "readyz", H(readyz) },
	{ "GET", "/metrics", "metrics", H(metrics_get) },
	{ "GET", "/openapi.yaml", "openapi", H(openapi_get) },
	{ "GET", "/openapi.json", "openapi.json", H(openapi_json_get) },
	{ "GET", "/", "web.index", H(web_index) },
	{ "GET", "/web/{file}", "web.file", H(web_file) },
	{ "POST", "/v1/{kind}/check", "kinds.check", H(kinds_check) },
	{ "POST", "/v1/{kind}/hint", "kinds.hint", H(kinds_hint) },
};

/*
 * Who may call what (access.c, service.h). With a token file, the routes
 * that change state need a bearer token; so does every resource upload
 * route that service_routes_build adds. A route that is not GET must be
 * named in one of the first two lists, or the service refuses to start.
 */
const char *const service_writing_routes[] = { "jobs.submit", "jobs.cancel", NULL };
/* Not GET, but changing nothing: a check or a hint only computes. */
const char *const service_computing_routes[] = { "kinds.check", "kinds.hint", NULL };
/* Open even with --auth-reads: probes, the API document, the dashboard's files. */
const char *const service_public_routes[] = { "healthz",   "readyz",   "openapi", "openapi.json",
					      "web.index", "web.file", NULL };

/*
 * The route table: the fixed routes above, then POST /v1/<collection>,
 * GET /v1/<collection>/{name} and GET /v1/<collection> (the listing) for
 * every resource type a registered kind
 * declares (core/kinds.h), each route carrying its sf_resource_kind as arg.
 * Built once at start; the loop thread only reads it.
 */
int service_routes_build(service *svc, sf_err *err)
{
	size_t nfixed = sizeof routes / sizeof routes[0], nres = 0;
	for (size_t i = 0; i < sf_kind_count(); i++)
		nres += sf_kind_at(i)->resource != NULL;
	svc->routes = calloc(nfixed + 3 * nres, sizeof *svc->routes);
	svc->route_text = calloc(nres ? nres : 1, sizeof *svc->route_text);
	if (!svc->routes || !svc->route_text)
		return sf_err_set(err, SF_ENOMEM, "out of memory for the route table");
	memcpy(svc->routes, routes, sizeof routes);
	size_t n = nfixed, k = 0;
	for (size_t i = 0; i < sf_kind_count(); i++) {
		const sf_resource_kind *rk = sf_kind_at(i)->resource;
		int seen = 0;
		for (size_t j = nfixed; rk && j < n; j++)
			seen |= svc->routes[j].arg == rk;
		if (!rk || seen)
			continue;
		char(*t)[96] = svc->route_text[k++];
		snprintf(t[0], sizeof t[0], "/v1/%s", rk->collection);
		snprintf(t[1], sizeof t[1], "%s.upload", rk->type);
		snprintf(t[2], sizeof t[2], "/v1/%s/{name}", rk->collection);
		snprintf(t[3], sizeof t[3], "%s.get", rk->type);
		snprintf(t[4], sizeof t[4], "%s.list", rk->type);
		svc->routes[n++] = (route){ .method = "POST",
					    .pattern = t[0],
					    .name = t[1],
					    .handler = (void *)resources_upload,
					    .arg = rk };
		svc->routes[n++] = (route){ .method = "GET",
					    .pattern = t[2],
					    .name = t[3],
					    .handler = (void *)resources_get,
					    .arg = rk };
		svc->routes[n++] = (route){ .method = "GET",
					    .pattern = t[0],
					    .name = t[4],
					    .handler = (void *)resources_list,
					    .arg = rk };
	}
	svc->nroutes = n;
	return 0;
}

/*
 * Answers 400 and returns 1 when the body nests deeper than
 * SF_JSON_MAX_DEPTH, before any handler gives it to jansson (json_depth.h).
 * Every body is scanned whatever its declared type (clients send JSON under
 * many media types, curl -d's form type among them, and a JSON route reads
 * the body as JSON whatever the type says), except an upload that the
 * route itself reads in another format (a px model's CSV).
 */
static int body_too_deep(http_req *r, const route *rt)
{
	size_t len;
	const char *body = http_req_body(r, &len);
	const char *type = http_req_header(r, "Content-Type");
	if (!len ||
	    (rt->handler == (void *)resources_upload && resources_body_not_json(rt->arg, type)))
		return 0;
	if (sf_json_depth(body, len, SF_JSON_MAX_DEPTH) <= SF_JSON_MAX_DEPTH)
		return 0;
	respond_problem(r, 400, "invalid-json", "Malformed JSON", NULL,
			"the body nests arrays and objects more than %d deep (the limit)",
			SF_JSON_MAX_DEPTH);
	return 1;
}

static void dispatch(void *app, http_req *r)
{
	service *svc = app;
	const char *method = http_req_method(r);
	if (!strcmp(method, "HEAD"))
		method = "GET"; /* MHD sends the headers only */
	if (access_begin(svc, r))
		return; /* a CORS preflight, answered before routing */
	route_match m;
	int status = 0;
	char allow[64];
	const route *rt = route_find(svc->routes, svc->nroutes, method, http_req_path(r), &m,
				     &status, allow, sizeof allow);
	http_req_set_user(r, (void *)(rt ? rt->name : "unmatched"));
	if (!rt) {
		if (status == 405) {
			const char *h[] = { "Allow", allow, NULL };
			respond_problem(r, 405, "method-not-allowed", "Method not allowed", h,
					"%s is not allowed on %s (allowed: %s)", http_req_method(r),
					http_req_path(r), allow);
		} else {
			respond_problem(r, 404, "not-found", "Not found", NULL, "no route for %s",
					http_req_path(r));
		}
		return;
	}
	if (!access_allowed(svc, r, rt))
		return; /* 401: a bearer token is needed */
	if (body_too_deep(r, rt))
		return;
	handler_fn fn;
	memcpy(&fn, &rt->handler, sizeof fn);
	fn(svc, r, &m);
}

static void request_done(void *app, http_req *r, int status, double seconds)
{
	service *svc = app;
	const char *name = http_req_user(r) ? http_req_user(r) : "unmatched";
	metrics_request(svc->metrics, name, status, seconds);
	log_http(http_req_method(r), http_req_path(r), status, seconds * 1e3, name, http_req_id(r));
}

/* ---- start and stop ---- */

static void flush_log(uv_timer_t *t)
{
	(void)t;
	fflush(stderr);
}

/* The scheduler's hooks (sched.h): progress and ends feed the event streams. */
static void on_job_progress(void *arg, const char *job_id, const ga_generation *gen)
{
	events_progress(arg, job_id, gen);
}

static void on_job_ended(void *arg, const char *job_id)
{
	events_job_ended(arg, job_id);
}

static void on_jobs_stopped(void *arg)
{
	service *svc = arg;
	if (svc->stopping)
		service_stop(svc);
}

/* The store thread has answered every operation: a stop may be waiting for that. */
static void on_store_idle(void *arg)
{
	service *svc = arg;
	if (svc->stopping)
		service_stop(svc);
}

static void on_signal(uv_signal_t *s, int signum)
{
	service *svc = s->data;
	log_info("serve: signal %d: stopping", signum);
	service_stop(svc);
}

int service_start(service *svc, uv_loop_t *loop, const service_config *cfg, sf_err *err)
{
	memset(svc, 0, sizeof *svc);
	svc->loop = loop;
	svc->cfg = *cfg;
	if (!(svc->metrics = metrics_new()) || !(svc->responses = rcache_new(4096)))
		return sf_err_set(err, SF_ENOMEM, "out of memory for metrics and caches");
	store *writer = store_open(cfg->db_path, STORE_READWRITE, err);
	if (!writer)
		return err->code;
	/* SQLite serves one process: a second `serve` on the file is refused
	 * here, before it could requeue the first one's running jobs. */
	int rc = store_lock_exclusive(writer, err);
	if (rc) {
		store_close(writer);
		return rc;
	}
	/* SQLite: the WAL's checkpoints (a copy and an fsync of the database
	 * file) off the store thread, so that no batch waits for one. A
	 * benchmark knob (bench/http_bench.sh) keeps them in the commits. */
	const char *inline_ckpt = getenv("STARFORGE_CHECKPOINT_INLINE");
	if (!(inline_ckpt && !strcmp(inline_ckpt, "1")) &&
	    store_checkpoint_in_background(writer, err))
		log_error("serve: checkpoints stay in the commits: %s", err->msg);
	/* The evaluation cache's bound, and what is above it now goes. */
	int64_t evicted = 0;
	if ((rc = store_limit_evaluations(writer, cfg->eval_cache_max, &evicted, err)) != 0) {
		store_close(writer);
		return rc;
	}
	if (evicted)
		log_info("serve: evaluation cache: %lld least recently used entries evicted to "
			 "the bound of %lld",
			 (long long)evicted, (long long)cfg->eval_cache_max);
	svc->schema_version = store_version(writer);
	svc->schema_latest = store_backend_latest_version(writer);
	svc->backend = store_backend(writer); /* a literal */
	log_info("serve: database %s at schema version %d", cfg->db_path, svc->schema_version);
	/* SQLite: this is the one process on the file, so every job it has
	 * running died with an earlier process: back to queued, before anything
	 * else may write. PostgreSQL: other nodes may be running them; expired
	 * leases are rescued instead (sched.h). */
	rc = strcmp(store_backend(writer), "sqlite") ? 0 : sched_requeue_all(writer, err);
	if (rc || !(svc->reads = storeq_start_readers(loop, cfg->db_path, cfg->read_threads, err)) ||
	    !(svc->writer = storeq_start(loop, writer, err))) {
		store_close(writer);
		return rc ? rc : err->code;
	}
	storeq_on_idle(svc->writer, on_store_idle, svc);
	storeq_on_idle(svc->reads, on_store_idle, svc);
	/* A benchmark knob (bench/http_bench.sh): 1 turns group commit off. */
	const char *group = getenv("STARFORGE_STORE_BATCH_MAX");
	if (group && *group)
		storeq_set_batch_max(svc->writer, atoi(group));
	if (!(svc->evals = evalcache_new(cfg->db_path, metrics_shared_of(svc->metrics))))
		return sf_err_set(err, SF_ENOMEM, "out of memory for the evaluation cache");
	if (!(svc->resources = res_pool_new(cfg->db_path)))
		return sf_err_set(err, SF_ENOMEM, "out of memory for the resource reader");
	rc = service_routes_build(svc, err);
	if (rc || (rc = access_build(svc, err)) != 0)
		return rc;
	/* stderr is block-buffered (cmd_serve.c): flush it four times a second. */
	uv_timer_init(loop, &svc->log_flush);
	uv_timer_start(&svc->log_flush, flush_log, 250, 250);
	sched_config sc = { .workers = cfg->workers,
			    .job_threads = cfg->job_threads,
			    .job_timeout_s = cfg->job_timeout_s,
			    .lease_ms = cfg->lease_ms,
			    .max_lost = SERVICE_MAX_LOST };
	snprintf(sc.node, sizeof sc.node, "%s", cfg->node);
	sched_hooks hooks = { .progress = on_job_progress,
			      .ended = on_job_ended,
			      .stopped = on_jobs_stopped,
			      .arg = svc };
	if (!(svc->jobs = sched_new(loop, svc->writer, svc->backend, &sc, &hooks, svc->metrics,
				    svc->evals, svc->resources)))
		return sf_err_set(err, SF_ENOMEM, "out of memory for the scheduler");
	uv_signal_init(loop, &svc->sigterm);
	uv_signal_init(loop, &svc->sigint);
	svc->sigterm.data = svc->sigint.data = svc;
	uv_signal_start(&svc->sigterm, on_signal, SIGTERM);
	uv_signal_start(&svc->sigint, on_signal, SIGINT);
	sched_start(svc->jobs);
	http_config hc = { .listen_fds = cfg->listen_fds,
			   .nlisten = cfg->nlisten,
			   .max_body = cfg->max_body,
			   .connection_limit = cfg->max_connections,
			   .per_ip_limit = cfg->max_connections_per_ip,
			   .connection_timeout_s = cfg->connection_timeout_s,
			   .dispatch = dispatch,
			   .done = request_done,
			   .app = svc };
	if (!(svc->http = http_server_new(loop, &hc, err)))
		return err->code;
	access_log(svc);
	log_info("serve: listening on %s (workers %d, max queue %d, node %s, lease %d ms)",
		 cfg->listen_urls, cfg->workers, cfg->max_queue, cfg->node, cfg->lease_ms);
	fflush(stderr);
	return 0;
}

static void close_handle(uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void on_http_closed(void *arg)
{
	service *svc = arg;
	close_handle((uv_handle_t *)&svc->log_flush);
	close_handle((uv_handle_t *)&svc->sigterm);
	close_handle((uv_handle_t *)&svc->sigint);
	/* The read handles close before the writer: closing the writer's lock
	 * descriptor (store_lock_exclusive) would drop the POSIX locks SQLite
	 * holds for handles of the same file still open. */
	storeq_stop(svc->reads); /* nothing is pending: service_stop waited */
	svc->reads = NULL;
	evalcache_free(svc->evals);
	svc->evals = NULL;
	res_pool_free(svc->resources);
	svc->resources = NULL;
	sched_free(svc->jobs); /* its timers; nothing runs: service_stop waited */
	svc->jobs = NULL;
	storeq_stop(svc->writer); /* nothing is pending: service_stop waited */
	svc->writer = NULL;
	events_free(svc);
	rcache_free(svc->responses);
	svc->responses = NULL;
	free(svc->routes);
	free(svc->route_text);
	free(svc->route_access);
	svc->routes = NULL;
	svc->route_text = NULL;
	svc->route_access = NULL;
	log_info("serve: stopped");
	fflush(stderr);
}

void service_stop(service *svc)
{
	if (!svc->stopping) {
		svc->stopping = 1;
		if (svc->http)
			http_server_quiesce(svc->http);
		events_stop(svc); /* watchers must not hold the stop up */
		if (svc->jobs)
			sched_stop(svc->jobs);
	}
	/* Finish once every running job is back and the store thread and the
	 * read pool have answered everything (jobs.c and on_store_idle call
	 * again). */
	if ((svc->jobs && sched_running(svc->jobs)) || svc->evaluations_running ||
	    svc->checks_running || !svc->http || (svc->writer && storeq_pending(svc->writer)) ||
	    (svc->reads && storeq_pending(svc->reads)))
		return;
	http_server *h = svc->http;
	svc->http = NULL;
	http_server_close(h, on_http_closed, svc);
}
