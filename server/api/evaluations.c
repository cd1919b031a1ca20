/*
 * evaluations.c - GET /v1/evaluations/{lattice}/{sequence}: the evaluation
 * of one sequence for a designer checking a puzzle by hand: exact, or for
 * a chain past the exact budget an estimate with the best fold found
 * (core/lattice/evaluate.h; ?method=exact|estimate|auto, ?seed=N).
 *
 * An exact evaluation is answered from the store's cache keyed by
 * (lattice, sequence) when the sequence was evaluated before (a search
 * fills the same cache); otherwise the request is suspended, the work runs
 * on the worker pool (never on the loop thread), and the after-work
 * callback stores an exact evaluation and answers. Estimates depend on the
 * seed and are kept only in the response cache. The cached document has no
 * stars; the requested star rule is applied per response. The store's cache
 * is bounded (--eval-cache-max, least recently used out): a hit read from
 * the store touches its entry; one served from the response cache in
 * memory does not (no write per hot request), so an entry in heavy use
 * there may leave the store and be computed again once the response cache
 * drops it too.
 * GET .../{sequence}.svg takes the same path and answers the evaluation's
 * picture (lat_evaluation_svg: the histogram with the star bands), cached
 * as a response of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_out.h"
#include "../../core/lattice/evaluate.h"
#include "../../core/lattice/lattice.h"
#include "../../core/lattice/lattice_json.h"
#include "../../core/lattice/svg.h"
#include "../../core/stars.h"
#include "../../core/stars_json.h"
#include "service.h"

typedef struct eval_job {
	uv_work_t work;
	service *svc;
	http_req *req;
	lat_kind kind;
	lat_seq seq;
	stars_config stars;
	lat_eval_config cfg;
	int svg; /* answer the picture, not the JSON */
	lat_method method; /* the one used, from the worker */
	int rc;
	sf_err err;
	char *doc; /* the evaluation as JSON text, from the worker */
} eval_job;

#define EVAL_MAX_AGE "public, max-age=86400"
#define SVG_TYPE "image/svg+xml"

/*
 * An exact evaluation cached by a search or an earlier version has no
 * "method" and "optimum": its best score is its histogram's last, proven
 * by the enumeration. Adds them; 0, or -1 when the document is damaged.
 */
static int exact_keys(json_t *ev, int max_score)
{
	if (json_object_get(ev, "method"))
		return 0;
	char key[16];
	snprintf(key, sizeof key, "%d", max_score);
	const char *fold = json_string_value(json_object_get(json_object_get(ev, "examples"), key));
	if (!fold)
		return -1;
	json_t *opt = json_pack("{s:i, s:b, s:s}", "score", max_score, "proven", 1, "fold", fold);
	if (json_object_set_new(ev, "optimum", opt) ||
	    json_object_set_new(ev, "method", json_string("exact")))
		return -1;
	return 0;
}

/*
 * Answers with the cached evaluation text plus the stars object for `cfg`
 * (or, when `svg`, with that document's picture), through the response
 * cache under `key`.
 */
static void answer(service *svc, http_req *r, const char *key, const char *doc,
		   const stars_config *cfg, int svg)
{
	json_t *ev = json_loads(doc, 0, NULL);
	uint64_t counts[LAT_MAX_SCORE + 1];
	int n = ev ? lat_evaluation_star_counts(ev, counts) : -1;
	if (n < 1 || exact_keys(ev, n - 1)) {
		json_decref(ev);
		respond_problem(r, 500, "internal", "Internal error", NULL,
				"a cached evaluation is damaged");
		return;
	}
	int t[3];
	sf_err serr = { 0 };
	int ok = stars_thresholds(counts, n, cfg, t, &serr) == 0;
	json_object_set_new(ev, "stars", stars_json(cfg, "contacts", ok ? t : NULL, serr.msg));
	sf_err perr = { 0 };
	char *text = svg ? lat_evaluation_svg(ev, &perr) : sf_json_dumps(ev, JSON_COMPACT);
	json_decref(ev);
	if (!text && perr.code == SF_EINVAL) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "picture: %s",
				perr.msg);
		return;
	}
	rcache_hit hit;
	if (!text || rcache_put(svc->responses, key, text, strlen(text), &hit)) {
		free(text);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	free(text);
	respond_cached(r, &hit, svg ? SVG_TYPE : "application/json", EVAL_MAX_AGE);
}

#define EVAL_KEY_SIZE 160

/*
 * The response cache key of an evaluation (or its picture) under a star
 * rule: by the method it resolved to, and for an estimate by its seed.
 */
static void eval_key(lat_kind kind, const lat_seq *seq, stars_strategy strat, int svg,
		     const lat_eval_config *cfg, lat_method resolved, char out[EVAL_KEY_SIZE])
{
	char text[LAT_MAX_LEN + 1];
	lat_seq_format(seq, text);
	if (resolved == LAT_METHOD_EXACT)
		snprintf(out, EVAL_KEY_SIZE, "%s:%s:%s:%s", svg ? "ES" : "E", lat_kind_name(kind),
			 text, stars_strategy_name(strat));
	else
		snprintf(out, EVAL_KEY_SIZE, "%s:%s:%s:%s:estimate:%llu", svg ? "ES" : "E",
			 lat_kind_name(kind), text, stars_strategy_name(strat),
			 (unsigned long long)cfg->seed);
}

static void eval_work(uv_work_t *w)
{
	eval_job *e = w->data;
	lat_evaluation *ev = malloc(sizeof *ev);
	if (!ev) {
		e->rc = sf_err_set(&e->err, SF_ENOMEM, "out of memory for the evaluation");
		return;
	}
	e->rc = lat_evaluate(e->kind, &e->seq, &e->cfg, ev, &e->err);
	if (e->rc) {
		free(ev);
		return;
	}
	e->method = ev->method;
	if (ev->method == LAT_METHOD_EXACT)
		atomic_fetch_add(&metrics_shared_of(e->svc->metrics)->enumerations, 1);
	json_t *doc = lat_evaluation_json(ev, &e->seq, &e->cfg);
	free(ev);
	e->doc = doc ? sf_json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!e->doc)
		e->rc = sf_err_set(&e->err, SF_ENOMEM, "out of memory writing the evaluation");
}

/* The store thread's write of a new evaluation into the cache, or (doc NULL) a touch. */
typedef struct eval_put {
	storeq_op op;
	char lattice[16];
	char seq[LAT_MAX_LEN + 1];
	char *doc;
} eval_put;

static void eval_put_run(store *s, storeq_op *op)
{
	eval_put *p = (eval_put *)op;
	store_evaluation e = { p->lattice, p->seq, p->doc };
	op->rc = p->doc ? store_put_evaluations(s, &e, 1, &op->err)
			: store_touch_evaluations(s, &e, 1, &op->err);
}

static void eval_put_done(storeq_op *op)
{
	eval_put *p = (eval_put *)op;
	if (op->rc)
		log_error("evaluation cache: %s", op->err.msg);
	free(p->doc);
	free(p);
}

/*
 * Hands the evaluation `doc` (NULL: the cached one was used, which keeps
 * it in the bounded cache longer) to the store thread for the cache; the
 * answer does not wait for it (a cache entry lost to a full disk is
 * computed again).
 */
static void eval_store(service *svc, lat_kind kind, const lat_seq *seq, const char *doc)
{
	eval_put *p = calloc(1, sizeof *p);
	if (!p || (doc && !(p->doc = strdup(doc)))) {
		free(p);
		log_error("evaluation cache: out of memory");
		return;
	}
	snprintf(p->lattice, sizeof p->lattice, "%s", lat_kind_name(kind));
	lat_seq_format(seq, p->seq);
	p->op.run = eval_put_run;
	p->op.done = eval_put_done;
	p->op.writes = STOREQ_WRITE;
	storeq_submit(svc->writer, &p->op);
}

static void eval_after(uv_work_t *w, int status)
{
	(void)status;
	eval_job *e = w->data;
	service *svc = e->svc;
	svc->evaluations_running--;
	if (e->rc) {
		respond_problem(e->req, 500, "internal", "Internal error", NULL, "%s", e->err.msg);
	} else {
		if (e->method == LAT_METHOD_EXACT) /* estimates depend on their seed */
			eval_store(svc, e->kind, &e->seq, e->doc);
		char key[EVAL_KEY_SIZE];
		eval_key(e->kind, &e->seq, e->stars.strategy, e->svg, &e->cfg, e->method, key);
		answer(svc, e->req, key, e->doc, &e->stars, e->svg);
	}
	free(e->doc);
	free(e);
	if (svc->stopping)
		service_stop(svc); /* it waits for evaluations in flight */
}

/* An evaluation looked up in the store's cache, off the loop (evaluate). */
typedef struct eval_read {
	service_read rd;
	lat_kind kind;
	lat_seq seq;
	stars_config stars;
	lat_eval_config cfg;
	lat_method resolved;
	int svg;
	char key[EVAL_KEY_SIZE];
	char text[LAT_MAX_LEN + 1];
	char *doc;
} eval_read;

static void eval_fetch(store *s, storeq_op *op)
{
	eval_read *er = (eval_read *)op;
	if (er->resolved != LAT_METHOD_EXACT)
		return; /* never stored: computed every time the response cache misses */
	op->rc = store_get_evaluation(s, lat_kind_name(er->kind), er->text, &er->doc, &op->err);
}

/* Loop thread: the stored evaluation, or else one computed on the worker pool. */
static void eval_fetched(service_read *rd)
{
	eval_read *er = (eval_read *)rd;
	service *svc = rd->svc;
	http_req *r = rd->r;
	metrics_shared *ms = metrics_shared_of(svc->metrics);
	if (rd->op.rc) {
		respond_read_error(r, &rd->op);
		return;
	}
	if (er->doc) {
		atomic_fetch_add(&ms->cache_hits, 1);
		eval_store(svc, er->kind, &er->seq, NULL);
		answer(svc, r, er->key, er->doc, &er->stars, er->svg);
		free(er->doc);
		return;
	}
	if (svc->evaluations_running >= 4 * svc->cfg.workers) {
		const char *h[] = { "Retry-After", "2", NULL };
		respond_problem(r, 429, "busy", "Too many evaluations", h,
				"%d evaluations are running, the limit; retry later",
				svc->evaluations_running);
		return;
	}
	atomic_fetch_add(&ms->cache_misses, 1);
	eval_job *e = calloc(1, sizeof *e);
	if (!e) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	*e = (eval_job){ .svc = svc,
			 .req = r,
			 .kind = er->kind,
			 .seq = er->seq,
			 .stars = er->stars,
			 .cfg = er->cfg,
			 .svg = er->svg };
	e->work.data = e;
	if (uv_queue_work(svc->loop, &e->work, eval_work, eval_after)) {
		free(e);
		respond_problem(r, 500, "internal", "Internal error", NULL,
				"the worker pool refused");
		return;
	}
	svc->evaluations_running++;
	/* Not answered yet: http.c suspends the request until eval_after answers. */
}

/* `seed`: a whole decimal number in 0..2^53 - 1, as jobs take it. */
static int parse_seed(const char *text, uint64_t *out, sf_err *err)
{
	uint64_t v = 0;
	int n = 0;
	for (; text[n] >= '0' && text[n] <= '9' && n < 17; n++)
		v = v * 10 + (uint64_t)(text[n] - '0');
	if (!n || text[n] || v > 9007199254740991ULL)
		return sf_err_set(err, SF_EINVAL,
				  "seed '%.40s' is not an integer in 0..9007199254740991", text);
	*out = v;
	return 0;
}

static void evaluate(service *svc, http_req *r, const route_match *m, int svg)
{
	sf_err err = { 0 };
	lat_kind kind;
	lat_seq seq;
	stars_strategy strat = STARS_PAPER;
	static const char *const allowed[] = { "stars", "method", "seed", NULL };
	if (service_query_check(r, allowed, NULL, NULL, NULL))
		return;
	lat_eval_config cfg;
	lat_eval_config_default(&cfg);
	cfg.threads = svc->cfg.job_threads;
	cfg.exact_budget = svc->cfg.eval_budget;
	cfg.est_steps = svc->cfg.estimate_steps;
	cfg.opt_moves = (uint64_t)(svc->cfg.estimate_steps / 5);
	cfg.opt_nodes = (uint64_t)(svc->cfg.estimate_steps / 2);
	const char *sq = http_req_query(r, "stars");
	const char *mq = http_req_query(r, "method");
	const char *seedq = http_req_query(r, "seed");
	if (lat_parse_kind(route_param(m, "lattice"), &kind, &err) ||
	    lat_seq_parse(route_param(m, "sequence"), &seq, &err) ||
	    lat_eval_check_length(kind, seq.len, &err) ||
	    (sq && stars_parse_strategy(sq, &strat, &err)) ||
	    (mq && lat_parse_method(mq, &cfg.method, &err)) ||
	    (seedq && parse_seed(seedq, &cfg.seed, &err))) {
		respond_problem(r, 400, "invalid-request", "Invalid evaluation request", NULL, "%s",
				err.msg);
		return;
	}
	lat_method resolved = lat_eval_resolve(cfg.method, kind, seq.len, cfg.exact_budget);
	if (resolved == LAT_METHOD_EXACT &&
	    lat_check_budget(kind, seq.len, svc->cfg.eval_budget, &err)) {
		respond_problem(r, 422, "over-budget", "Over the work budget", NULL,
				"%s; ?method=estimate (or auto) estimates it instead", err.msg);
		return;
	}
	stars_config stars;
	stars_config_default(&stars, strat);
	metrics_shared *ms = metrics_shared_of(svc->metrics);
	char key[EVAL_KEY_SIZE];
	eval_key(kind, &seq, strat, svg, &cfg, resolved, key);
	rcache_hit hit;
	if (rcache_get(svc->responses, key, &hit)) {
		atomic_fetch_add(&ms->cache_hits, 1);
		respond_cached(r, &hit, svg ? SVG_TYPE : "application/json", EVAL_MAX_AGE);
		return;
	}
	eval_read *er = calloc(1, sizeof *er);
	if (!er) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	er->kind = kind;
	er->seq = seq;
	er->stars = stars;
	er->cfg = cfg;
	er->resolved = resolved;
	er->svg = svg;
	snprintf(er->key, sizeof er->key, "%s", key);
	lat_seq_format(&seq, er->text);
	service_read_submit(svc, r, &er->rd, eval_fetch, eval_fetched);
}

void evaluations_get(service *svc, http_req *r, const route_match *m)
{
	evaluate(svc, r, m, 0);
}

void evaluations_svg(service *svc, http_req *r, const route_match *m)
{
	evaluate(svc, r, m, 1);
}
