/*
 * evaluations.c - GET /v1/evaluations/{lattice}/{sequence}: the exact
 * evaluation of one sequence for a designer checking a puzzle by hand.
 *
 * Answered from the store's cache keyed by (lattice, sequence) when the
 * sequence was evaluated before; otherwise the request is suspended, the
 * enumeration runs on the worker pool (never on the loop thread), and the
 * after-work callback stores the evaluation and answers. The cached
 * document has no stars; the requested star rule is applied per response.
 * GET .../{sequence}.svg takes the same path and answers the evaluation's
 * picture (lat_evaluation_svg: the histogram with the star bands), cached
 * as a response of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_out.h"
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
	int threads;
	int svg; /* answer the picture, not the JSON */
	int rc;
	sf_err err;
	char *doc; /* the evaluation as JSON text, from the worker */
} eval_job;

#define EVAL_MAX_AGE "public, max-age=86400"
#define SVG_TYPE "image/svg+xml"

/*
 * Answers with the cached evaluation text plus the stars object for `cfg`
 * (or, when `svg`, with that document's picture), through the response
 * cache under `key`.
 */
static void answer(service *svc, http_req *r, const char *key, const char *doc,
		   const stars_config *cfg, int svg)
{
	json_t *ev = json_loads(doc, 0, NULL);
	json_t *hist = json_object_get(ev, "histogram");
	size_t n = json_array_size(hist);
	if (!ev || !n || n > LAT_MAX_SCORE + 1) {
		json_decref(ev);
		respond_problem(r, 500, "internal", "Internal error", NULL,
				"a cached evaluation is damaged");
		return;
	}
	uint64_t counts[LAT_MAX_SCORE + 1];
	for (size_t i = 0; i < n; i++)
		counts[i] = (uint64_t)json_integer_value(json_array_get(hist, i));
	int t[3];
	sf_err serr = { 0 };
	int ok = stars_thresholds(counts, (int)n, cfg, t, &serr) == 0;
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

/* The response cache key of an evaluation (or its picture) under a star rule. */
static void eval_key(lat_kind kind, const lat_seq *seq, stars_strategy strat, int svg, char out[96])
{
	char text[LAT_MAX_LEN + 1];
	lat_seq_format(seq, text);
	snprintf(out, 96, "%s:%s:%s:%s", svg ? "ES" : "E", lat_kind_name(kind), text,
		 stars_strategy_name(strat));
}

static void eval_work(uv_work_t *w)
{
	eval_job *e = w->data;
	static _Thread_local lat_result res;
	lat_opts opts = { .threads = e->threads, .budget = e->svc->cfg.eval_budget };
	e->rc = lat_enumerate(e->kind, &e->seq, &opts, &res, &e->err);
	if (e->rc)
		return;
	atomic_fetch_add(&metrics_shared_of(e->svc->metrics)->enumerations, 1);
	json_t *doc = lat_result_json(&res, &e->seq);
	e->doc = doc ? sf_json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!e->doc)
		e->rc = sf_err_set(&e->err, SF_ENOMEM, "out of memory writing the evaluation");
}

/* The store thread's write of a new evaluation into the cache. */
typedef struct eval_put {
	storeq_op op;
	char lattice[16];
	char seq[LAT_MAX_LEN + 1];
	char *doc;
} eval_put;

static void eval_put_run(store *s, storeq_op *op)
{
	eval_put *p = (eval_put *)op;
	op->rc = store_put_evaluation(s, p->lattice, p->seq, p->doc, &op->err);
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
 * Hands the evaluation to the store thread for the cache; the answer does
 * not wait for it (a cache entry lost to a full disk is computed again).
 */
static void eval_store(service *svc, const eval_job *e)
{
	eval_put *p = calloc(1, sizeof *p);
	if (!p || !(p->doc = strdup(e->doc))) {
		free(p);
		log_error("evaluation cache: out of memory");
		return;
	}
	snprintf(p->lattice, sizeof p->lattice, "%s", lat_kind_name(e->kind));
	lat_seq_format(&e->seq, p->seq);
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
		eval_store(svc, e);
		char key[96];
		eval_key(e->kind, &e->seq, e->stars.strategy, e->svg, key);
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
	int svg;
	char key[96];
	char text[LAT_MAX_LEN + 1];
	char *doc;
} eval_read;

static void eval_fetch(store *s, storeq_op *op)
{
	eval_read *er = (eval_read *)op;
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
			 .threads = svc->cfg.job_threads,
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

static void evaluate(service *svc, http_req *r, const route_match *m, int svg)
{
	sf_err err = { 0 };
	lat_kind kind;
	lat_seq seq;
	stars_strategy strat = STARS_PAPER;
	static const char *const allowed[] = { "stars", NULL };
	if (service_query_check(r, allowed, NULL, NULL, NULL))
		return;
	const char *sq = http_req_query(r, "stars");
	if (lat_parse_kind(route_param(m, "lattice"), &kind, &err) ||
	    lat_seq_parse(route_param(m, "sequence"), &seq, &err) ||
	    (sq && stars_parse_strategy(sq, &strat, &err))) {
		respond_problem(r, 400, "invalid-request", "Invalid evaluation request", NULL, "%s",
				err.msg);
		return;
	}
	if (lat_check_budget(kind, seq.len, svc->cfg.eval_budget, &err)) {
		respond_problem(r, 422, "over-budget", "Over the work budget", NULL, "%s", err.msg);
		return;
	}
	stars_config stars;
	stars_config_default(&stars, strat);
	metrics_shared *ms = metrics_shared_of(svc->metrics);
	char key[96];
	eval_key(kind, &seq, strat, svg, key);
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
