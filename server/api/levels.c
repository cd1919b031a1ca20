/*
 * levels.c - GET /v1/levels/{id}, GET /v1/levels/{id}.svg and GET
 * /v1/levels: stored levels and their pictures.
 *
 * Levels are immutable (the first document stored for an id wins), so a
 * level's strong ETag is a hash of its bytes and clients and caches may keep
 * it for a year. The picture is a pure function of the document (the kind's
 * level_svg hook, the same bytes on every machine), so it is just as
 * immutable: drawn on the loop thread on the first request (well under a
 * millisecond) and then answered from the response cache with its own ETag.
 * GET /v1/levels/{id} answers the picture too when the Accept header prefers
 * image/svg+xml to application/json (JSON on a tie or without Accept), and
 * says Vary: Accept on both representations so that shared caches keep them
 * apart; the .svg path always answers the picture.
 *
 * The .svg path takes one query parameter, star (1, 2 or 3): the picture
 * of a play earning that many stars, for a kind whose picture has that
 * choice (the kind's level_svg_star: a lattice level's fold for each star).
 * Like every query of the service it is closed (query.c): another name, a
 * repeat, or a star that is not 1, 2 or 3 is a 400 invalid-query before the
 * level is read; a star for a level whose picture has no such choice (a
 * digger or racetrack level, a lattice level without star bands) is a 400
 * naming star too, rather than the one picture it has, which would look
 * like an answer. Each star's picture is cached under its own key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../core/kinds.h"
#include "service.h"

#define LEVEL_MAX_AGE "public, max-age=31536000, immutable"
#define SVG_TYPE "image/svg+xml"

/*
 * What to answer once level `id`'s document text is at hand (`hit`, valid
 * until the next rcache_put): the JSON or the picture, with a Vary header
 * when `vary` is not NULL.
 */
typedef void (*level_then)(service *svc, http_req *r, const char *id, rcache_hit *hit,
			   const char *vary, int star);

/* A level read from the store, off the loop (level_text). */
typedef struct level_read {
	service_read rd;
	char id[ROUTE_MAX_VALUE + 1];
	char *doc;
	level_then then;
	const char *vary;
	int star; /* the picture's ?star=, 0 when not given */
} level_read;

static void level_fetch(store *s, storeq_op *op)
{
	level_read *lr = (level_read *)op;
	op->rc = store_get_level(s, lr->id, &lr->doc, &op->err);
}

static void level_fetched(service_read *rd)
{
	level_read *lr = (level_read *)rd;
	http_req *r = rd->r;
	rcache_hit hit;
	char key[ROUTE_MAX_VALUE + 4];
	snprintf(key, sizeof key, "L:%s", lr->id);
	if (rd->op.rc)
		respond_read_error(r, &rd->op);
	else if (!lr->doc)
		respond_problem(r, 404, "not-found", "No such level", NULL,
				"no level with id '%s'", lr->id);
	else if (rcache_put(rd->svc->responses, key, lr->doc, strlen(lr->doc), &hit))
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
	else
		lr->then(rd->svc, r, lr->id, &hit, lr->vary, lr->star);
	free(lr->doc);
}

/*
 * Finds level `id`'s document text in the response cache, or else reads it
 * from the store off the loop and caches it, and then calls then(...); or
 * answers the request with a problem (404 when there is no such level).
 * `star` is passed on to then().
 */
static void level_text(service *svc, http_req *r, const char *id, level_then then, const char *vary,
		       int star)
{
	char key[ROUTE_MAX_VALUE + 4];
	snprintf(key, sizeof key, "L:%s", id);
	rcache_hit hit;
	if (rcache_get(svc->responses, key, &hit)) {
		then(svc, r, id, &hit, vary, star);
		return;
	}
	level_read *lr = calloc(1, sizeof *lr);
	if (!lr) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	snprintf(lr->id, sizeof lr->id, "%s", id);
	lr->then = then;
	lr->vary = vary;
	lr->star = star;
	service_read_submit(svc, r, &lr->rd, level_fetch, level_fetched);
}

/* The response cache's key of level `id`'s picture for `star` (0: default). */
static void svg_key(const char *id, int star, char key[ROUTE_MAX_VALUE + 8])
{
	if (star)
		snprintf(key, ROUTE_MAX_VALUE + 8, "S%d:%s", star, id);
	else
		snprintf(key, ROUTE_MAX_VALUE + 8, "S:%s", id);
}

/* Draws the picture of the level document `hit`, caches and answers it. */
static void draw_svg(service *svc, http_req *r, const char *id, rcache_hit *hit, const char *vary,
		     int star)
{
	char key[ROUTE_MAX_VALUE + 8];
	svg_key(id, star, key);
	json_t *level = json_loadb(hit->body, hit->len, 0, NULL);
	const sf_kind *kind = sf_kind_find(json_string_value(json_object_get(level, "kind")));
	if (!kind || !kind->level_svg) {
		respond_problem(r, 404, "not-found", "No picture", NULL,
				"levels of kind '%s' have no picture",
				kind ? kind->name : "(unknown)");
		json_decref(level);
		return;
	}
	if (star && !kind->level_svg_star) {
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"star '%d': the picture of a %s level has no choice of star (star "
				"chooses the fold of a lattice level)",
				star, kind->name);
		json_decref(level);
		return;
	}
	sf_err err = { 0 };
	char *svg = star ? kind->level_svg_star(level, star, &err) : kind->level_svg(level, &err);
	json_decref(level);
	if (!svg && err.code == SF_ERANGE) {
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL, "%s", err.msg);
		return;
	}
	if (!svg) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "picture: %s", err.msg);
		return;
	}
	rcache_hit shit;
	int rc = rcache_put(svc->responses, key, svg, strlen(svg), &shit);
	free(svg);
	if (rc) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	respond_cached_vary(r, &shit, SVG_TYPE, LEVEL_MAX_AGE, vary);
}

/*
 * Answers level `id`'s picture for `star` (0: the default one), with a
 * Vary header when `vary` is not NULL.
 */
static void answer_svg(service *svc, http_req *r, const char *id, const char *vary, int star)
{
	char key[ROUTE_MAX_VALUE + 8];
	svg_key(id, star, key);
	rcache_hit hit;
	if (rcache_get(svc->responses, key, &hit)) {
		respond_cached_vary(r, &hit, SVG_TYPE, LEVEL_MAX_AGE, vary);
		return;
	}
	level_text(svc, r, id, draw_svg, vary, star);
}

/* Answers the level document `hit` as JSON. */
static void answer_json(service *svc, http_req *r, const char *id, rcache_hit *hit,
			const char *vary, int star)
{
	(void)svc;
	(void)id;
	(void)star;
	respond_cached_vary(r, hit, "application/json", LEVEL_MAX_AGE, vary);
}

/*
 * The quality an Accept header gives `type` ("image/svg+xml"): the q of its
 * most specific matching range (type/subtype over type/ over the
 * wildcard), 0 when none matches; 1 for every type when there is no header.
 * q is read by hand (at most three decimals), not with strtod, whose
 * decimal point follows the locale. A malformed q makes its range count 0.
 */
static int accept_q(const char *accept, const char *type)
{
	if (!accept)
		return 1000;
	const char *slash = strchr(type, '/');
	size_t major = (size_t)(slash - type);
	int best_spec = 0, best_q = 0;
	for (const char *p = accept; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *range = p;
		while (*p && *p != ',' && *p != ';' && *p != ' ' && *p != '\t')
			p++;
		size_t len = (size_t)(p - range);
		int q = 1000;
		while (*p && *p != ',') { /* parameters: only q matters */
			while (*p == ' ' || *p == '\t' || *p == ';')
				p++;
			if ((p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
				const char *v = p + 2;
				q = -1;
				if (v[0] == '0' || v[0] == '1') {
					q = (v[0] - '0') * 1000;
					int scale = 100, i = 1;
					if (v[1] == '.')
						for (i = 2; v[i] >= '0' && v[i] <= '9' && scale;
						     i++) {
							q += (v[i] - '0') * scale;
							scale /= 10;
						}
					if (q > 1000 || (v[i] && v[i] != ',' && v[i] != ';' &&
							 v[i] != ' ' && v[i] != '\t'))
						q = -1;
				}
			}
			while (*p && *p != ',' && *p != ';')
				p++;
		}
		int spec = 0;
		if (len == 3 && !strncmp(range, "*/*", 3))
			spec = 1;
		else if (len == major + 2 && !strncasecmp(range, type, major + 1) &&
			 range[major + 1] == '*')
			spec = 2;
		else if (len == strlen(type) && !strncasecmp(range, type, len))
			spec = 3;
		if (spec > best_spec) {
			best_spec = spec;
			best_q = q < 0 ? 0 : q;
		}
	}
	return best_q;
}

void levels_get(service *svc, http_req *r, const route_match *m)
{
	const char *id = route_param(m, "id");
	const char *accept = http_req_header(r, "Accept");
	if (accept && accept_q(accept, SVG_TYPE) > accept_q(accept, "application/json")) {
		answer_svg(svc, r, id, "Accept", 0);
		return;
	}
	level_text(svc, r, id, answer_json, "Accept", 0);
}

void levels_svg(service *svc, http_req *r, const route_match *m)
{
	static const char *const allowed[] = { "star", NULL };
	if (service_query_check(r, allowed, NULL, NULL, NULL))
		return;
	const char *sq = http_req_query(r, "star");
	int star = 0;
	if (sq) {
		if ((sq[0] < '1' || sq[0] > '3') || sq[1]) {
			respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
					"star '%.64s' is out of range (allowed: 1, 2, 3)", sq);
			return;
		}
		star = sq[0] - '0';
	}
	answer_svg(svc, r, route_param(m, "id"), NULL, star);
}

/*
 * Level filters (core/kinds.h, sf_level_filter). With ?kind=K a listing
 * takes K's filters; without kind it takes any kind's filter (the union),
 * which matches only levels of the kinds that have it, since only they
 * carry its tag. A number filter NAME takes min_NAME as well. Every other
 * name is a 400 that lists what the kind (or each kind) allows.
 */
static const char *const list_params[] = { SERVICE_LIST_PARAMS, NULL };

/* The filter a query name asks for (NAME, or min_NAME of a number), or NULL. */
static const sf_level_filter *filter_of(const sf_kind *kind, const char *key, int *is_min)
{
	*is_min = 0;
	const sf_level_filter *f = sf_kind_filter(kind, key);
	if (f)
		return f;
	if (strncmp(key, "min_", 4) || !(f = sf_kind_filter(kind, key + 4)) ||
	    f->type != SF_FILTER_NUMBER)
		return NULL;
	*is_min = 1;
	return f;
}

static int filter_known(void *arg, const char *key)
{
	int is_min;
	return filter_of(arg, key, &is_min) != NULL;
}

/* "page_size, page_token, kind and lattice's filters: lattice, length, ..." */
static void filters_allowed(const sf_kind *kind, char *buf, size_t len)
{
	char names[256];
	size_t at = (size_t)snprintf(buf, len, "page_size, page_token, kind and ");
	if (kind) {
		at += (size_t)snprintf(buf + at, len - at, "%s's filters: %s", kind->name,
				       sf_kind_filter_names(kind, names, sizeof names));
	} else {
		at += (size_t)snprintf(buf + at, len - at, "any kind's filter (");
		for (size_t i = 0; i < sf_kind_count() && at < len; i++)
			at += (size_t)snprintf(
				buf + at, len - at, "%s%s: %s", i ? "; " : "", sf_kind_at(i)->name,
				sf_kind_filter_names(sf_kind_at(i), names, sizeof names));
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, ")");
	}
	if (at < len)
		snprintf(buf + at, len - at, "; a number filter NAME also takes min_NAME");
}

typedef struct filter_ctx {
	const sf_kind *kind;
	store_filter f[STORE_MAX_FILTERS];
	char num_text[STORE_MAX_FILTERS][32]; /* a number's value as tags hold it */
	int n;
	const char *bad, *bad_value; /* the first argument we cannot take */
	const char *why;
} filter_ctx;

/* Reads a whole decimal number (no leading blank, finite); 0 or -1. */
static int parse_number(const char *text, double *out)
{
	char *end;
	if (!*text || *text == ' ' || *text == '\t' || *text == '\n')
		return -1;
	*out = strtod(text, &end);
	return *end || *out != *out || *out > 1.7976931348623157e308 ||
			       *out < -1.7976931348623157e308
		       ? -1
		       : 0;
}

/* One query argument; the names were checked (service_query_check) already. */
static void add_filter(void *arg, const char *key, const char *value)
{
	filter_ctx *c = arg;
	int is_min;
	const sf_level_filter *lf = filter_of(c->kind, key, &is_min);
	if (!lf || c->bad)
		return;
	if (c->n == STORE_MAX_FILTERS) {
		c->bad = key; /* no why: one too many */
		return;
	}
	store_filter *f = &c->f[c->n];
	memset(f, 0, sizeof *f);
	f->name = lf->name;
	double num;
	if (lf->type == SF_FILTER_NUMBER) {
		if (parse_number(value, &num)) {
			c->bad = key;
			c->bad_value = value;
			c->why = "is not a number";
			return;
		}
		if (is_min) {
			f->has_min = 1;
			f->min = num;
		} else { /* the text a numeric tag holds: ?length=16.0 finds 16 */
			snprintf(c->num_text[c->n], sizeof c->num_text[c->n], "%.17g", num);
			f->text = c->num_text[c->n];
		}
	} else {
		int ok = *value != '\0';
		if (ok && lf->values) {
			ok = 0;
			for (const char *const *v = lf->values; *v; v++)
				ok |= !strcmp(*v, value);
		}
		if (!ok) {
			c->bad = key;
			c->bad_value = value;
			c->why = lf->values ? "is not one of the allowed values" : "is empty";
			return;
		}
		f->text = value;
	}
	c->n++;
}

/* The allowed values of text filter `name` of kind (or any kind), for messages. */
static void filter_values(const sf_kind *kind, const char *name, char *buf, size_t len)
{
	int is_min;
	const sf_level_filter *f = filter_of(kind, name, &is_min);
	size_t at = 0;
	buf[0] = '\0';
	for (const char *const *v = f && f->values ? f->values : NULL; v && *v && at < len; v++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", *v);
	if (!at)
		snprintf(buf, len,
			 f && f->type == SF_FILTER_NUMBER ? "a number" : "a non-empty text");
}

/* A page of GET /v1/levels, read off the loop. */
typedef struct levels_page {
	service_read rd;
	filter_ctx fc;
	const char *kind;
	int64_t before;
	int page_size, n;
	char **docs; /* page_size + 1: one more says there is a next page */
	int64_t *seqs;
} levels_page;

static void levels_page_fetch(store *s, storeq_op *op)
{
	levels_page *lp = (levels_page *)op;
	op->rc = store_list_levels(s, lp->kind, lp->fc.f, lp->fc.n, lp->before, lp->page_size + 1,
				   lp->docs, lp->seqs, &lp->n, &op->err);
}

static void levels_page_answer(service_read *rd)
{
	levels_page *lp = (levels_page *)rd;
	if (rd->op.rc) {
		respond_read_error(rd->r, &rd->op);
	} else {
		json_t *arr = json_array();
		for (int i = 0; i < lp->n && i < lp->page_size; i++) {
			json_t *lv = json_loads(lp->docs[i], 0, NULL);
			if (lv)
				json_array_append_new(arr, lv);
		}
		json_t *next = json_null();
		if (lp->n > lp->page_size) {
			char token[32];
			service_page_token(lp->seqs[lp->page_size - 1], token);
			next = json_string(token);
		}
		respond_json(rd->r, 200,
			     json_pack("{s:o, s:o}", "levels", arr, "next_page_token", next), NULL);
	}
	for (int i = 0; i < lp->n; i++)
		free(lp->docs[i]);
	free(lp->docs);
	free(lp->seqs);
}

void levels_list(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	int page_size;
	int64_t before;
	const char *kind;
	/* The kind says which filters are allowed: read it first (a repeated
	 * kind is the name check's to refuse, and an unknown one list_args'). */
	const char *kind_arg = http_req_query(r, "kind");
	const sf_kind *k = sf_kind_find(kind_arg);
	char allowed[400];
	filters_allowed(k, allowed, sizeof allowed);
	if (service_query_check(r, list_params, filter_known, (void *)k, allowed) ||
	    service_list_args(r, &page_size, &before, &kind))
		return;
	levels_page *lp = calloc(1, sizeof *lp);
	if (!lp) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	/* The filters live in the op: they may point into its num_text. */
	filter_ctx *fc = &lp->fc;
	fc->kind = k;
	http_req_each_query(r, add_filter, fc);
	if (fc->bad && !fc->why) {
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"filter %.64s is one too many (at most %d filters in one listing)",
				fc->bad, STORE_MAX_FILTERS);
		free(lp);
		return;
	}
	if (fc->bad) {
		char values[128];
		filter_values(fc->kind, fc->bad, values, sizeof values);
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"filter %.64s '%.64s' %s (allowed: %s)", fc->bad, fc->bad_value,
				fc->why, values);
		free(lp);
		return;
	}
	lp->docs = calloc((size_t)page_size + 1, sizeof *lp->docs);
	lp->seqs = calloc((size_t)page_size + 1, sizeof *lp->seqs);
	if (!lp->docs || !lp->seqs) {
		free(lp->docs);
		free(lp->seqs);
		free(lp);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	lp->kind = kind; /* the request's, alive until it is answered */
	lp->before = before;
	lp->page_size = page_size;
	service_read_submit(svc, r, &lp->rd, levels_page_fetch, levels_page_answer);
}
