/*
 * levels.c - GET /v1/levels/{id} and GET /v1/levels: stored levels.
 *
 * Levels are immutable (the first document stored for an id wins), so a
 * level's strong ETag is a hash of its bytes and clients and caches may keep
 * it for a year.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/kinds.h"
#include "service.h"

#define LEVEL_MAX_AGE "public, max-age=31536000, immutable"

void levels_get(service *svc, http_req *r, const route_match *m)
{
	const char *id = route_param(m, "id");
	char key[ROUTE_MAX_VALUE + 4];
	snprintf(key, sizeof key, "L:%s", id);
	rcache_hit hit;
	if (!rcache_get(svc->responses, key, &hit)) {
		char *doc = NULL;
		sf_err err = { 0 };
		if (store_get_level(svc->db, id, &doc, &err)) {
			respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s",
					err.msg);
			return;
		}
		if (!doc) {
			respond_problem(r, 404, "not-found", "No such level", NULL,
					"no level with id '%s'", id);
			return;
		}
		int rc = rcache_put(svc->responses, key, doc, strlen(doc), &hit);
		if (rc) {
			free(doc);
			respond_problem(r, 500, "internal", "Internal error", NULL,
					"out of memory");
			return;
		}
		free(doc);
	}
	respond_cached(r, &hit, "application/json", LEVEL_MAX_AGE);
}

typedef struct filter_ctx {
	store_filter f[8];
	int n;
	const char *bad; /* the first argument we cannot take */
} filter_ctx;

/* Every query argument other than paging and kind is a filter on a level tag. */
static void add_filter(void *arg, const char *key, const char *value)
{
	filter_ctx *c = arg;
	if (!strcmp(key, "kind") || !strcmp(key, "page_size") || !strcmp(key, "page_token"))
		return;
	if (c->bad)
		return;
	if (c->n == 8) {
		c->bad = key;
		return;
	}
	store_filter *f = &c->f[c->n];
	memset(f, 0, sizeof *f);
	if (!strncmp(key, "min_", 4) && key[4]) {
		char *end;
		f->min = strtod(value, &end);
		if (!*value || *end) {
			c->bad = key;
			return;
		}
		f->name = key + 4;
		f->has_min = 1;
	} else {
		f->name = key;
		f->text = value;
	}
	c->n++;
}

void levels_list(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	int page_size;
	int64_t before;
	const char *kind;
	if (service_list_args(r, &page_size, &before, &kind))
		return;
	filter_ctx fc = { .n = 0 };
	http_req_each_query(r, add_filter, &fc);
	if (fc.bad) {
		respond_problem(
			r, 400, "invalid-query", "Invalid query", NULL,
			"filter '%s' is not usable (at most 8 filters; min_NAME takes a number)",
			fc.bad);
		return;
	}
	char **docs = calloc((size_t)page_size + 1, sizeof *docs);
	int64_t *seqs = calloc((size_t)page_size + 1, sizeof *seqs);
	int n = 0;
	sf_err err = { 0 };
	if (!docs || !seqs ||
	    store_list_levels(svc->db, kind, fc.f, fc.n, before, page_size + 1, docs, seqs, &n,
			      &err)) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err.msg);
		free(docs);
		free(seqs);
		return;
	}
	json_t *arr = json_array();
	for (int i = 0; i < n && i < page_size; i++) {
		json_t *lv = json_loads(docs[i], 0, NULL);
		if (lv)
			json_array_append_new(arr, lv);
	}
	json_t *next = json_null();
	if (n > page_size) {
		char token[32];
		service_page_token(seqs[page_size - 1], token);
		next = json_string(token);
	}
	for (int i = 0; i < n; i++)
		free(docs[i]);
	free(docs);
	free(seqs);
	respond_json(r, 200, json_pack("{s:o, s:o}", "levels", arr, "next_page_token", next), NULL);
}
