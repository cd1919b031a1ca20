/*
 * web.c - see web.h.
 *
 * The dashboard is plain files (web/index.html, app.js, style.css, play.js,
 * play.css) that the Makefile embeds with the other assets, so a lone
 * binary serves them and they can never disagree with the API it speaks. Nothing here is built at
 * start: the files are served from the embedded table, and kinds.json is
 * assembled from the registry, which is static, on first request; both go
 * through the service's response cache (rcache.h), which keeps their ETags
 * and gzip forms. So the module keeps no state and needs no cleanup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_out.h"
#include "../../core/kinds.h"
#include "../base/embedded.h"
#include "web.h"

/* Browsers revalidate every time (cheap with the ETag): no stale dashboard after an upgrade. */
#define WEB_CACHE_CONTROL "no-cache"

static const sf_embedded *asset_find(const char *name)
{
	for (size_t i = 0; i < sf_assets_count; i++)
		if (sf_assets[i].name && !strcmp(sf_assets[i].name, name))
			return &sf_assets[i];
	return NULL;
}

static const char *content_type_of(const char *name)
{
	static const char *const types[][2] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".json", "application/json" },
		{ ".svg", "image/svg+xml" },
	};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		size_t e = strlen(types[i][0]);
		if (n > e && !strcmp(name + n - e, types[i][0]))
			return types[i][1];
	}
	return "application/octet-stream";
}

/*
 * Answers a dashboard file through the response cache under "W:" + name, so
 * that its ETag is hashed and its gzip form compressed once, not per request
 * (the files never change while the binary runs).
 */
static void respond_body(service *svc, http_req *r, const char *name, const char *body, size_t len,
			 const char *content_type)
{
	char key[ROUTE_MAX_VALUE + 16];
	snprintf(key, sizeof key, "W:%s", name);
	rcache_hit hit;
	if (rcache_get(svc->responses, key, &hit) ||
	    !rcache_put(svc->responses, key, body, len, &hit)) {
		respond_cached(r, &hit, content_type, WEB_CACHE_CONTROL);
		return;
	}
	char etag[40]; /* out of memory for the cache: answer without it */
	rcache_etag(body, len, etag);
	hit = (rcache_hit){ .body = body, .len = len, .etag = etag };
	respond_cached(r, &hit, content_type, WEB_CACHE_CONTROL);
}

/*
 * The level filters kind `k` declares (core/kinds.h), as the dashboard's
 * level browser offers them: [{"name", "section", "type": "text"|"number",
 * "values": [...] or null}]. NULL when out of memory.
 */
static json_t *filters_json(const sf_kind *k)
{
	json_t *list = json_array();
	for (const sf_level_filter *f = k->filters; list && f && f->name; f++) {
		json_t *values = json_null();
		if (f->values) {
			values = json_array();
			for (const char *const *v = f->values; values && *v; v++)
				if (json_array_append_new(values, json_string(*v))) {
					json_decref(values);
					values = NULL;
				}
		}
		json_t *entry = values ? json_pack("{s:s, s:s, s:s, s:o}", "name", f->name,
						   "section", f->section, "type",
						   f->type == SF_FILTER_TEXT ? "text" : "number",
						   "values", values)
				       : NULL;
		if (!entry || json_array_append_new(list, entry)) {
			json_decref(list);
			list = NULL;
		}
	}
	return list;
}

/* {"kinds": [...]} for the submit form and the level browser; NULL when
 * out of memory. */
static char *kinds_json(void)
{
	json_t *kinds = json_array();
	json_t *doc = json_pack("{s:o}", "kinds", kinds);
	if (!doc)
		return NULL;
	for (size_t i = 0; i < sf_kind_count(); i++) {
		const sf_kind *k = sf_kind_at(i);
		char path[128];
		snprintf(path, sizeof path, "schema/%s/params.schema.json", k->name);
		const sf_embedded *schema = asset_find(path);
		json_t *params =
			schema ? json_loadb((const char *)schema->data, schema->len, 0, NULL)
			       : NULL;
		json_t *filters = filters_json(k);
		json_t *entry =
			filters ? json_pack("{s:s, s:s, s:o, s:o}", "name", k->name, "summary",
					    k->summary ? k->summary : "", "params_schema",
					    params ? params : json_null(), "filters", filters)
				: NULL;
		if (!filters)
			json_decref(params);
		if (!entry || json_array_append_new(kinds, entry)) {
			json_decref(doc);
			return NULL;
		}
	}
	char *text = sf_json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return text;
}

static void serve_asset(service *svc, http_req *r, const char *file)
{
	char name[ROUTE_MAX_VALUE + 8];
	snprintf(name, sizeof name, "web/%s", file);
	const sf_embedded *a = asset_find(name);
	if (!a) {
		respond_problem(r, 404, "not-found", "Not found", NULL,
				"no dashboard file '%s' (the dashboard is index.html, app.js, "
				"style.css, play.js, play.css and kinds.json)",
				file);
		return;
	}
	respond_body(svc, r, name, (const char *)a->data, a->len, content_type_of(name));
}

void web_index(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	serve_asset(svc, r, "index.html");
}

void web_file(service *svc, http_req *r, const route_match *m)
{
	const char *file = route_param(m, "file");
	if (strcmp(file, "kinds.json") != 0) {
		serve_asset(svc, r, file);
		return;
	}
	rcache_hit hit;
	if (rcache_get(svc->responses, "W:kinds.json", &hit)) { /* the registry is static */
		respond_cached(r, &hit, "application/json", WEB_CACHE_CONTROL);
		return;
	}
	char *text = kinds_json();
	if (!text) {
		respond_problem(r, 500, "internal", "Internal error", NULL,
				"out of memory writing kinds.json");
		return;
	}
	respond_body(svc, r, "kinds.json", text, strlen(text), "application/json");
	free(text);
}
