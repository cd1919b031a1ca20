/*
 * resources.c - uploaded resources of every type a registered kind declares
 * (core/kinds.h, sf_resource_kind; racetrack's experience models at
 * /v1/px-models).
 *
 * An upload is validated whole by its kind (sf_resource_kind.validate, for
 * experience models the same parsers a job uses), so a stored resource
 * always parses; the kind's message (line and column, or JSON path, and
 * what was wrong) becomes the 422's detail. The body is stored as sent and
 * served back byte for byte with a strong ETag: a name is taken for good (a
 * second upload is 409), so the answer never changes and may be cached for
 * a year. Nothing here knows a type by name: the routes carry their
 * sf_resource_kind (route.arg, set up in service.c). Every handler runs on
 * the loop thread; an upload is written by the store thread (storeq.h).
 * Generators read resources through server/jobs/res_pool.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../core/json_out.h"
#include "../../core/kinds.h"
#include "service.h"

#define RES_MAX_AGE "public, max-age=31536000, immutable"

/* ---- handlers ---- */

/*
 * The upload's format from its Content-Type (media type only, parameters
 * such as charset ignored, case-insensitive), looked up in the type's
 * {format, media type} pairs: the format, or NULL.
 */
static const char *format_of(const sf_resource_kind *rk, const char *content_type)
{
	if (!content_type)
		return NULL;
	size_t n = strcspn(content_type, ";");
	while (n && (content_type[n - 1] == ' ' || content_type[n - 1] == '\t'))
		n--;
	for (const char *const *f = rk->formats; f[0] && f[1]; f += 2)
		if (strlen(f[1]) == n && !strncasecmp(content_type, f[1], n))
			return f[0];
	return NULL;
}

/* See service.h: a format the type's pairs name, other than json. */
int resources_body_not_json(const sf_resource_kind *rk, const char *content_type)
{
	const char *format = format_of(rk, content_type);
	return format && strcmp(format, "json") != 0;
}

/* The media type GET answers with for `format` (its first in the list). */
static const char *media_type_of(const sf_resource_kind *rk, const char *format)
{
	for (const char *const *f = rk->formats; f[0] && f[1]; f += 2)
		if (!strcmp(f[0], format))
			return f[1];
	return "application/octet-stream";
}

/* "text/csv, application/json": the accepted media types, for messages. */
static void media_types(const sf_resource_kind *rk, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (const char *const *f = rk->formats; f[0] && f[1] && at < len; f += 2) {
		int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", f[1]);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

/* An upload on its way to the store thread; answered once it is durable. */
typedef struct upload_op {
	storeq_op op;
	service *svc;
	http_req *r;
	const sf_resource_kind *rk;
	char name[SF_RESOURCE_NAME_MAX + 1];
	const char *format; /* one of rk->formats */
	char *text, *summary_text;
	size_t len;
	json_t *summary;
} upload_op;

static void upload_run(store *s, storeq_op *op)
{
	upload_op *u = (upload_op *)op;
	op->rc = store_put_resource(s, u->rk->type, u->name, u->format, u->text, u->summary_text,
				    &op->err);
}

static void upload_done(storeq_op *op)
{
	upload_op *u = (upload_op *)op;
	const sf_resource_kind *rk = u->rk;
	http_req *r = u->r;
	char type[64];
	free(u->text);
	free(u->summary_text);
	if (op->rc == STORE_EXISTS) {
		snprintf(type, sizeof type, "%s-exists", rk->slug);
		respond_problem(r, 409, type, "Name taken", NULL,
				"a %s named '%s' exists already (uploads are immutable: "
				"upload under another name)",
				rk->what, u->name);
		json_decref(u->summary);
	} else if (op->rc == SF_EINVAL) {
		snprintf(type, sizeof type, "invalid-%s", rk->slug);
		respond_problem(r, 422, type, rk->title, NULL, "the body is not UTF-8 text");
		json_decref(u->summary);
	} else if (op->rc) {
		respond_store_error(u->svc, r, op->rc, &op->err, "the upload could not be stored");
		json_decref(u->summary);
	} else {
		char location[SF_RESOURCE_NAME_MAX + 80];
		snprintf(location, sizeof location, "/v1/%s/%s", rk->collection, u->name);
		log_info("resource %s %s stored format=%s bytes=%zu", rk->type, u->name, u->format,
			 u->len);
		const char *h[] = { "Location", location, "Cache-Control", "no-store", NULL };
		json_object_set_new(u->summary, "name", json_string(u->name));
		json_object_set_new(u->summary, "format", json_string(u->format));
		respond_json(r, 201, u->summary, h);
	}
	free(u);
}

/*
 * POST /v1/<collection>?name=NAME. Checks in this order, answering the
 * first failure: the name (400 invalid-query; the built-in name is 409),
 * the Content-Type (415), the body (422 invalid-<slug>, the kind's message
 * as detail), then stores it (409 <slug>-exists when the name is taken).
 * 201 with Location and the kind's summary plus name and format.
 */
void resources_upload(service *svc, http_req *r, const route_match *m)
{
	const sf_resource_kind *rk = m->arg;
	char type[64];
	static const char *const params[] = { "name", NULL };
	if (service_query_check(r, params, NULL, NULL, NULL))
		return;
	const char *name = http_req_query(r, "name");
	if (!sf_resource_name_valid(name)) {
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"name '%s' is not a %s name (allowed: 1..%d of a-z 0-9 _ -)",
				name ? name : "", rk->what, SF_RESOURCE_NAME_MAX);
		return;
	}
	snprintf(type, sizeof type, "%s-exists", rk->slug);
	if (rk->builtin && !strcmp(name, rk->builtin)) {
		respond_problem(r, 409, type, "Name taken", NULL,
				"name '%s' is the built-in %s's and cannot be uploaded", name,
				rk->what);
		return;
	}
	const char *ct = http_req_header(r, "Content-Type");
	const char *format = format_of(rk, ct);
	if (!format) {
		char allowed[128];
		media_types(rk, allowed, sizeof allowed);
		respond_problem(r, 415, "unsupported-media-type", "Unsupported media type", NULL,
				"Content-Type '%s' is not a format of /v1/%s (allowed: %s)",
				ct ? ct : "", rk->collection, allowed);
		return;
	}
	size_t len = 0;
	const char *body = http_req_body(r, &len);
	if (!body)
		body = "";
	sf_err err = { 0 };
	json_t *summary = NULL;
	int rc;
	snprintf(type, sizeof type, "invalid-%s", rk->slug);
	if (memchr(body, '\0', len)) {
		respond_problem(r, 422, type, rk->title, NULL,
				"the body holds a NUL byte at offset %zu",
				(size_t)((const char *)memchr(body, '\0', len) - body));
		return;
	}
	if ((rc = rk->validate(body, len, format, &summary, &err)) != 0) {
		if (rc == SF_EINVAL)
			respond_problem(r, 422, type, rk->title, NULL, "%s", err.msg);
		else
			respond_problem(r, 500, "internal", "Internal error", NULL, "%s", err.msg);
		return;
	}
	upload_op *u = calloc(1, sizeof *u);
	char *text = malloc(len + 1);
	char *summary_text = sf_json_dumps(summary, JSON_COMPACT);
	if (!u || !text || !summary_text) {
		free(u);
		free(text);
		free(summary_text);
		json_decref(summary);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	memcpy(text, body, len);
	text[len] = '\0';
	u->svc = svc;
	u->r = r;
	u->rk = rk;
	snprintf(u->name, sizeof u->name, "%s", name);
	u->format = format;
	u->text = text;
	u->len = len;
	u->summary_text = summary_text;
	u->summary = summary;
	u->op.run = upload_run;
	u->op.done = upload_done;
	u->op.writes = STOREQ_WRITE;
	storeq_submit(svc->writer, &u->op); /* answered in upload_done */
}

/* GET /v1/<collection>/{name}, read off the loop. */
typedef struct res_read {
	service_read rd;
	const sf_resource_kind *rk;
	char name[ROUTE_MAX_VALUE + 1];
	char *format, *body;
} res_read;

static void res_get_fetch(store *s, storeq_op *op)
{
	res_read *rr = (res_read *)op;
	op->rc = store_get_resource(s, rr->rk->type, rr->name, &rr->format, &rr->body, &op->err);
}

static void res_get_answer(service_read *rd)
{
	res_read *rr = (res_read *)rd;
	if (rd->op.rc) {
		respond_read_error(rd->r, &rd->op);
	} else if (!rr->body) {
		respond_problem(rd->r, 404, "not-found", "Not found", NULL,
				"no uploaded %s named '%s'", rr->rk->what, rr->name);
	} else {
		char etag[40];
		size_t len = strlen(rr->body);
		rcache_etag(rr->body, len, etag);
		rcache_hit hit = { .body = rr->body, .len = len, .etag = etag };
		respond_cached(rd->r, &hit, media_type_of(rr->rk, rr->format), RES_MAX_AGE);
	}
	free(rr->format);
	free(rr->body);
}

/* GET /v1/<collection>/{name}: the body as uploaded, its media type, a strong ETag. */
void resources_get(service *svc, http_req *r, const route_match *m)
{
	const sf_resource_kind *rk = m->arg;
	const char *name = route_param(m, "name");
	if (!sf_resource_name_valid(name)) {
		respond_problem(r, 404, "not-found", "Not found", NULL, "no uploaded %s named '%s'",
				rk->what, name);
		return;
	}
	res_read *rr = calloc(1, sizeof *rr);
	if (!rr) {
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	rr->rk = rk;
	snprintf(rr->name, sizeof rr->name, "%s", name);
	service_read_submit(svc, r, &rr->rd, res_get_fetch, res_get_answer);
}

/*
 * One listed resource: its summary (as stored at upload, or computed from
 * the body for a resource stored before summaries were kept) with name and
 * format, as the upload's 201 answered; NULL when the summary cannot be had
 * (logged).
 */
static json_t *listed(const sf_resource_kind *rk, const store_resource *res)
{
	json_t *doc = NULL;
	if (res->summary) {
		doc = json_loads(res->summary, 0, NULL);
	} else {
		sf_err err = { 0 };
		if (rk->validate(res->body, strlen(res->body), res->format, &doc, &err))
			log_error("resources: %s '%s' no longer validates: %s", rk->type, res->name,
				  err.msg);
	}
	if (!json_is_object(doc)) {
		json_decref(doc);
		return NULL;
	}
	json_object_set_new(doc, "name", json_string(res->name));
	json_object_set_new(doc, "format", json_string(res->format));
	return doc;
}

/* A page of GET /v1/<collection>, read off the loop. */
typedef struct res_page {
	service_read rd;
	const sf_resource_kind *rk;
	int64_t before;
	int page_size, n;
	store_resource *rows; /* page_size + 1: one more says there is a next page */
} res_page;

static void res_page_fetch(store *s, storeq_op *op)
{
	res_page *rp = (res_page *)op;
	op->rc = store_list_resources(s, rp->rk->type, rp->before, rp->page_size + 1, rp->rows,
				      &rp->n, &op->err);
}

static void res_page_answer(service_read *rd)
{
	res_page *rp = (res_page *)rd;
	const sf_resource_kind *rk = rp->rk;
	if (rd->op.rc) {
		respond_read_error(rd->r, &rd->op);
	} else {
		json_t *arr = json_array();
		for (int i = 0; i < rp->n && i < rp->page_size; i++) {
			json_t *doc = listed(rk, &rp->rows[i]);
			if (doc)
				json_array_append_new(arr, doc);
		}
		json_t *next = json_null();
		if (rp->n > rp->page_size) {
			char token[32];
			service_page_token(rp->rows[rp->page_size - 1].seq, token);
			next = json_string(token);
		}
		char key[96];
		snprintf(key, sizeof key, "%s", rk->collection);
		for (char *c = key; *c; c++)
			if (*c == '-')
				*c = '_';
		const char *h[] = { "Cache-Control", "no-store", NULL };
		respond_json(rd->r, 200,
			     json_pack("{s:o, s:o}", key, arr, "next_page_token", next), h);
	}
	for (int i = 0; i < rp->n; i++)
		store_resource_clear(&rp->rows[i]);
	free(rp->rows);
}

/*
 * GET /v1/<collection>: the uploaded resources of the route's type, newest
 * first, page_size and page_token as every listing takes them; the array is
 * named after the collection ("px-models": "px_models"). The built-in
 * resource is not an upload and is not listed.
 */
void resources_list(service *svc, http_req *r, const route_match *m)
{
	const sf_resource_kind *rk = m->arg;
	static const char *const params[] = { "page_size", "page_token", NULL };
	int page_size;
	int64_t before;
	const char *kind;
	if (service_query_check(r, params, NULL, NULL, NULL) ||
	    service_list_args(r, &page_size, &before, &kind))
		return;
	res_page *rp = calloc(1, sizeof *rp);
	if (!rp || !(rp->rows = calloc((size_t)page_size + 1, sizeof *rp->rows))) {
		free(rp);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	rp->rk = rk;
	rp->before = before;
	rp->page_size = page_size;
	service_read_submit(svc, r, &rp->rd, res_page_fetch, res_page_answer);
}
