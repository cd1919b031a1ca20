/*
 * pxmodels.c - POST /v1/px-models and GET /v1/px-models/{name}: designers'
 * own play traces for the racetrack kind's experience model (issue 5), and
 * the resource callback through which a job's generator reads them.
 *
 * An upload is validated whole by the same parsers a job uses
 * (trk_px_parse_csv, trk_px_parse_json), so a stored model always parses;
 * the parser's message (line and column, or JSON path, and what was wrong)
 * becomes the 422's detail. The body is stored as sent and served back byte
 * for byte with a strong ETag: a name is taken for good (a second upload is
 * 409), so the answer never changes and may be cached for a year. Every
 * handler runs on the loop thread with the writer handle; pxres_fetch()
 * runs on workers (see pxmodels.h).
 */
#include "pxmodels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/racetrack/px.h"
#include "service.h"

#define PX_MAX_AGE "public, max-age=31536000, immutable"

/* ---- the resource callback ---- */

struct pxres {
	char db_path[1024];
	pthread_key_t reader; /* each worker thread's read-only store */
};

static void close_reader(void *s)
{
	store_close(s);
}

pxres *pxres_new(const char *db_path)
{
	pxres *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	if (pthread_key_create(&p->reader, close_reader)) {
		free(p);
		return NULL;
	}
	snprintf(p->db_path, sizeof p->db_path, "%s", db_path);
	return p;
}

void pxres_free(pxres *p)
{
	if (!p)
		return;
	store_close(pthread_getspecific(p->reader));
	pthread_setspecific(p->reader, NULL);
	pthread_key_delete(p->reader);
	free(p);
}

/* The calling thread's read-only handle, opened on first use; NULL on failure (logged). */
static store *reader_of(pxres *p)
{
	store *s = pthread_getspecific(p->reader);
	if (!s) {
		sf_err err = { 0 };
		s = store_open(p->db_path, STORE_READONLY, &err);
		if (!s)
			fprintf(stderr, "px-models: opening a reader: %s\n", err.msg);
		if (!s || pthread_setspecific(p->reader, s)) {
			store_close(s);
			return NULL;
		}
	}
	return s;
}

char *pxres_fetch(void *ctx, const char *type, const char *name, size_t *len)
{
	if (!ctx || !type || !name || strcmp(type, "px_model"))
		return NULL;
	store *s = reader_of(ctx);
	char *format = NULL, *body = NULL;
	sf_err err = { 0 };
	if (!s || store_get_px_model(s, name, &format, &body, &err)) {
		if (s)
			fprintf(stderr, "px-models: reading '%s': %s\n", name, err.msg);
		return NULL;
	}
	free(format);
	if (body && len)
		*len = strlen(body);
	return body;
}

int pxres_exists(store *db, const char *type, const char *name, sf_err *err)
{
	if (!type || !name || strcmp(type, "px_model"))
		return 0;
	char *format = NULL, *body = NULL;
	int rc = store_get_px_model(db, name, &format, &body, err);
	int found = body != NULL;
	free(format);
	free(body);
	return rc ? rc : found;
}

/* ---- handlers ---- */

/*
 * The upload's format from its Content-Type (media type only, parameters
 * such as charset ignored, case-insensitive): "csv", "json", or NULL.
 */
static const char *format_of(const char *content_type)
{
	if (!content_type)
		return NULL;
	size_t n = strcspn(content_type, ";");
	while (n && (content_type[n - 1] == ' ' || content_type[n - 1] == '\t'))
		n--;
	if (n == 8 && !strncasecmp(content_type, "text/csv", n))
		return "csv";
	if (n == 16 && !strncasecmp(content_type, "application/json", n))
		return "json";
	return NULL;
}

static const char *content_type_of(const char *format)
{
	return !strcmp(format, "json") ? "application/json" : "text/csv; charset=utf-8";
}

/*
 * POST /v1/px-models?name=NAME. Checks in this order, answering the first
 * failure: the name (400 invalid-query; "synthetic" is 409, the name of the
 * built-in set), the Content-Type (415), the body (422 invalid-px-model,
 * the parser's message as detail), then stores it (409 when the name is
 * taken). 201 with Location and {name, format, traces, features}.
 */
void pxmodels_upload(service *svc, http_req *r, const route_match *m)
{
	(void)m;
	const char *name = http_req_query(r, "name");
	if (!trk_px_name_valid(name)) {
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"name '%s' is not a model name (allowed: 1..%d of a-z 0-9 _ -)",
				name ? name : "", TRK_PX_NAME_MAX);
		return;
	}
	if (!strcmp(name, TRK_PX_SYNTHETIC)) {
		respond_problem(r, 409, "px-model-exists", "Model name taken", NULL,
				"name '%s' is the built-in model's and cannot be uploaded", name);
		return;
	}
	const char *ct = http_req_header(r, "Content-Type");
	const char *format = format_of(ct);
	if (!format) {
		respond_problem(r, 415, "unsupported-media-type", "Unsupported media type", NULL,
				"Content-Type '%s' is not a trace set format (allowed: text/csv, "
				"application/json)",
				ct ? ct : "");
		return;
	}
	size_t len = 0;
	const char *body = http_req_body(r, &len);
	if (!body)
		body = "";
	sf_err err = { 0 };
	if (memchr(body, '\0', len)) {
		respond_problem(r, 422, "invalid-px-model", "Invalid trace set", NULL,
				"the body holds a NUL byte at offset %zu",
				(size_t)((const char *)memchr(body, '\0', len) - body));
		return;
	}
	trk_px_model *model = !strcmp(format, "csv") ? trk_px_parse_csv(body, len, &err)
						     : trk_px_parse_json(body, len, &err);
	if (!model) {
		if (err.code == SF_ENOMEM)
			respond_problem(r, 500, "internal", "Internal error", NULL, "%s", err.msg);
		else
			respond_problem(r, 422, "invalid-px-model", "Invalid trace set", NULL, "%s",
					err.msg);
		return;
	}
	size_t traces = model->n;
	trk_px_model_free(model);
	char *text = malloc(len + 1);
	if (!text) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	memcpy(text, body, len);
	text[len] = '\0';
	int rc = store_put_px_model(svc->db, name, format, text, (int64_t)traces, &err);
	free(text);
	if (rc == STORE_EXISTS) {
		respond_problem(r, 409, "px-model-exists", "Model name taken", NULL,
				"a model named '%s' exists already (models are immutable: upload "
				"under another name)",
				name);
		return;
	}
	if (rc) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err.msg);
		return;
	}
	json_t *features = json_array();
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		json_array_append_new(features, json_string(trk_px_feature_name(f)));
	char location[TRK_PX_NAME_MAX + 20];
	snprintf(location, sizeof location, "/v1/px-models/%s", name);
	fprintf(stderr, "px-model %s stored format=%s traces=%zu\n", name, format, traces);
	const char *h[] = { "Location", location, "Cache-Control", "no-store", NULL };
	respond_json(r, 201,
		     json_pack("{s:s, s:s, s:I, s:o}", "name", name, "format", format, "traces",
			       (json_int_t)traces, "features", features),
		     h);
}

/* GET /v1/px-models/{name}: the body as uploaded, its content type, a strong ETag. */
void pxmodels_get(service *svc, http_req *r, const route_match *m)
{
	const char *name = route_param(m, "name");
	char *format = NULL, *body = NULL;
	sf_err err = { 0 };
	if (trk_px_name_valid(name) && store_get_px_model(svc->db, name, &format, &body, &err)) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "store: %s", err.msg);
		return;
	}
	if (!body) {
		respond_problem(r, 404, "not-found", "No such model", NULL,
				"no uploaded model named '%s'", name);
		return;
	}
	char etag[40];
	size_t len = strlen(body);
	rcache_etag(body, len, etag);
	rcache_hit hit = { .body = body, .len = len, .etag = etag };
	respond_cached(r, &hit, content_type_of(format), PX_MAX_AGE);
	free(format);
	free(body);
}
