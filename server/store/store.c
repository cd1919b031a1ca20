/*
 * store.c - the public functions of store.h: picks the back end at open and
 * passes every other call on to it through its table of functions
 * (store_impl.h). What does not depend on a back end lives here too: the
 * job state names and the functions that free rows.
 *
 * A NULL store is answered here, with the message each back end would give
 * for it, so that back ends never see one; so are the argument checks that
 * do not depend on a back end (store_impl.h lists them), once, before the
 * call reaches one, and the helpers both back ends use. Everything else
 * (the rest of the argument checks, the output arguments' values on
 * failure) is the back end's, as store.h describes.
 */
#include "store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/embedded.h"
#include "store_impl.h"
#include "store_pg.h"
#include "store_sqlite.h"

/* ---- job state names and rows ---- */

static const char *const state_names[JOB_CANCELLED + 1] = { "queued", "running", "succeeded",
							    "failed", "cancelled" };

/* "queued", "running", ...; "unknown" for a value outside job_state. Never NULL. */
const char *job_state_name(job_state s)
{
	return (int)s >= 0 && s <= JOB_CANCELLED ? state_names[s] : "unknown";
}

/* The job_state named `name` (exact, lower case), or -1 for NULL or any other text. */
int job_state_parse(const char *name)
{
	for (int i = 0; name && i <= JOB_CANCELLED; i++)
		if (strcmp(name, state_names[i]) == 0)
			return i;
	return -1;
}

/* Frees the strings of `job` and zeroes it; NULL is a no-op. */
void store_job_clear(store_job *job)
{
	if (!job)
		return;
	free(job->kind);
	free(job->params);
	free(job->error);
	free(job->level_ids);
	memset(job, 0, sizeof *job);
}

/* Frees e->data and zeroes e; NULL is a no-op. */
void store_event_clear(store_event *e)
{
	if (!e)
		return;
	free(e->data);
	memset(e, 0, sizeof *e);
}

/* Frees the strings of `res` and zeroes it; NULL is a no-op. */
void store_resource_clear(store_resource *res)
{
	if (!res)
		return;
	free(res->name);
	free(res->format);
	free(res->summary);
	free(res->body);
	memset(res, 0, sizeof *res);
}

/* ---- what the back ends share (store_impl.h) ---- */

/* Checks the migration table of an open: see store__check_open(). */
static int check_migrations(const sf_embedded *m, size_t count, sf_err *err)
{
	if (count > 9999 || (count && !m))
		return sf_err_set(err, SF_EINVAL, "migration table: %zu entries, allowed 0..9999",
				  count);
	for (size_t i = 0; i < count; i++) {
		const char *name = m[i].name ? m[i].name : "(unnamed)";
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		size_t len = strlen(base);
		int version = 0, ok = len > 9 && base[4] == '_' && !strcmp(base + len - 4, ".sql");
		for (int d = 0; ok && d < 4; d++) {
			ok = base[d] >= '0' && base[d] <= '9';
			version = version * 10 + (base[d] - '0');
		}
		if (!ok)
			return sf_err_set(err, SF_EINVAL,
					  "migration %s: the name must read NNNN_name.sql", name);
		if (version != (int)i + 1)
			return sf_err_set(err, SF_EINVAL,
					  "migration %s: version %d where %zu was expected "
					  "(numbered from 0001 without gaps, in order)",
					  name, version, i + 1);
		if (!m[i].data || strlen((const char *)m[i].data) != m[i].len)
			return sf_err_set(err, SF_EINVAL,
					  "migration %s: the text is missing or holds a NUL byte",
					  name);
	}
	return 0;
}

/* The path (`what`: "path", "URI"), the mode and the migration table of an open. */
int store__check_open(const char *path, const char *what, int mode,
		      const sf_embedded *migrations, size_t count, sf_err *err)
{
	if (!path || !*path)
		return sf_err_set(err, SF_EINVAL, "store_open: the database %s is empty", what);
	if (mode != STORE_READWRITE && mode != STORE_READONLY)
		return sf_err_set(err, SF_EINVAL,
				  "store_open: mode %d, allowed %d (read-write) or %d (read-only)",
				  mode, STORE_READWRITE, STORE_READONLY);
	return check_migrations(migrations, count, err);
}

/* The JSON array text of levels[].id (malloc'ed), or NULL when out of memory or not UTF-8. */
char *store__level_ids_json(const store_level *levels, int nlevels)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < nlevels; i++) {
		if (json_array_append_new(arr, json_string(levels[i].id)) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	char *text = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
	json_decref(arr);
	return text;
}

/* Valid UTF-8 as PostgreSQL checks it: no overlong forms, no surrogates, nothing past U+10FFFF. */
int store__utf8_valid(const char *s)
{
	/* The least code point of each length, by continuation bytes: no overlong forms. */
	static const unsigned int least[4] = { 0, 0x80, 0x800, 0x10000 };
	const unsigned char *c = (const unsigned char *)s;
	while (*c) {
		unsigned int cp;
		int more;
		if (*c < 0x80) {
			c++;
			continue;
		} else if (*c >= 0xc2 && *c <= 0xdf) {
			cp = *c & 0x1f, more = 1;
		} else if (*c >= 0xe0 && *c <= 0xef) {
			cp = *c & 0x0f, more = 2;
		} else if (*c >= 0xf0 && *c <= 0xf4) {
			cp = *c & 0x07, more = 3;
		} else {
			return 0;
		}
		int n = more;
		for (c++; more > 0; more--, c++) {
			if ((*c & 0xc0) != 0x80) /* a NUL ends the loop here too */
				return 0;
			cp = cp << 6 | (*c & 0x3f);
		}
		if (cp < least[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return 0;
	}
	return 1;
}

/* The test seam's file, read now: "full", "readonly" or (anything else) no fault. */
int store__fault_file_read(const char *path)
{
	char text[16] = "";
	FILE *f = fopen(path, "r");
	if (f) {
		size_t n = fread(text, 1, sizeof text - 1, f);
		text[n] = '\0';
		fclose(f);
	}
	text[strcspn(text, "\r\n")] = '\0';
	return !strcmp(text, "full")       ? STORE_FULL
	       : !strcmp(text, "readonly") ? STORE_UNWRITABLE
					   : STORE_OK;
}

/* Checks what store_job_succeeded() is given, before anything is written. */
static int check_levels(const store_level *levels, int nlevels, sf_err *err)
{
	if (nlevels < 0 || (nlevels > 0 && !levels))
		return sf_err_set(err, SF_EINVAL, "store_job_succeeded: %d levels", nlevels);
	for (int i = 0; i < nlevels; i++) {
		const store_level *lv = &levels[i];
		if (!lv->id || !*lv->id || !lv->kind || !lv->doc)
			return sf_err_set(err, SF_EINVAL,
					  "store_job_succeeded: levels[%d] lacks id, kind or doc",
					  i);
		if (lv->ntags < 0 || lv->ntags > STORE_MAX_TAGS)
			return sf_err_set(
				err, SF_EINVAL,
				"store_job_succeeded: level %s has %d tags, allowed 0..%d", lv->id,
				lv->ntags, STORE_MAX_TAGS);
		for (int t = 0; t < lv->ntags; t++)
			if (!lv->tag_name[t])
				return sf_err_set(
					err, SF_EINVAL,
					"store_job_succeeded: level %s, tag %d has no name", lv->id,
					t);
	}
	return 0;
}

/* Checks the filters of store_list_levels(). */
static int check_filters(const store_filter *filters, int nfilters, sf_err *err)
{
	if (nfilters < 0 || nfilters > STORE_MAX_FILTERS || (nfilters > 0 && !filters))
		return sf_err_set(err, SF_EINVAL, "store_list_levels: %d filters, allowed 0..%d",
				  nfilters, STORE_MAX_FILTERS);
	for (int i = 0; i < nfilters; i++) {
		const store_filter *f = &filters[i];
		if (!f->name)
			return sf_err_set(err, SF_EINVAL,
					  "store_list_levels: filter %d has no name", i);
		if (!f->text == !f->has_min)
			return sf_err_set(err, SF_EINVAL,
					  "store_list_levels: filter %s needs a text or a min, "
					  "not both and not neither",
					  f->name);
		if (f->has_min && f->min != f->min)
			return sf_err_set(err, SF_EINVAL,
					  "store_list_levels: filter %s: min is NaN", f->name);
	}
	return 0;
}

/* ---- opening: the back end ---- */

/* True when `path` is a PostgreSQL connection URI (store.h, store_open()). */
static int is_pg_uri(const char *path)
{
	return path &&
	       (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

/* Opens the back end `path` names with the embedded migrations (store.h). */
store *store_open(const char *path, int mode, sf_err *err)
{
	if (is_pg_uri(path))
		return store_pg_open(path, mode, err);
	return store_sqlite_open(path, mode, sf_migrations, sf_migrations_count, err);
}

/* Opens the back end `path` names with the migration table given (store.h). */
store *store_open_with(const char *path, int mode, const sf_embedded *migrations, size_t count,
		       sf_err *err)
{
	if (is_pg_uri(path))
		return store_pg_open_with(path, mode, migrations, count, err);
	return store_sqlite_open(path, mode, migrations, count, err);
}

/* Closes `s` through its back end; NULL is a no-op. */
void store_close(store *s)
{
	if (s)
		s->ops->close(s);
}

/* The binary's SQLite schema version: its number of embedded SQLite migrations. */
int store_latest_version(void)
{
	return (int)sf_migrations_count;
}

/* The database's schema version as of open; -1 for NULL. */
int store_version(store *s)
{
	return s ? s->ops->version(s) : -1;
}

/* The version `s`'s back end counts as the binary's; -1 for NULL. */
int store_backend_latest_version(store *s)
{
	return s ? s->ops->latest_version(s) : -1;
}

/* "sqlite", "postgresql", or "none" for NULL. */
const char *store_backend(const store *s)
{
	return s ? s->ops->name : "none";
}

/* ---- jobs ---- */

int store_insert_job(store *s, store_job *job, const char *idem_key, const char *request_hash,
		     int *existing, sf_err *err)
{
	if (existing)
		*existing = 0;
	if (!s || !job)
		return sf_err_set(err, SF_EINVAL, "store_insert_job: no store or job");
	size_t idlen = strnlen(job->id, sizeof job->id);
	if (idlen == 0 || idlen == sizeof job->id)
		return sf_err_set(err, SF_EINVAL, "store_insert_job: job id of 1..%zu characters",
				  sizeof job->id - 1);
	if (!job->kind || !job->params)
		return sf_err_set(err, SF_EINVAL, "store_insert_job: job %s lacks kind or params",
				  job->id);
	if (idem_key && !request_hash)
		return sf_err_set(err, SF_EINVAL,
				  "store_insert_job: Idempotency-Key without a request hash");
	int found = 0;
	int rc = s->ops->insert_job(s, job, idem_key, request_hash, &found, err);
	if (existing)
		*existing = found;
	if (!rc && !found) { /* a new row: queued, nothing else yet (the back end set seq, created_ms) */
		job->state = JOB_QUEUED;
		job->started_ms = job->finished_ms = 0;
		job->generation = job->generations = 0;
		job->best = 0;
		job->attempt = job->lost = job->cancel_requested = 0;
		job->lease_owner[0] = '\0';
		job->lease_until_ms = 0;
	}
	return rc;
}

int store_get_job(store *s, const char *id, store_job *job, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_get_job: no store, id or job");
	return s->ops->get_job(s, id, job, err);
}

int store_list_jobs(store *s, int state, const char *kind, int64_t before, int limit,
		    store_job *jobs, int *n, sf_err *err)
{
	if (n)
		*n = 0;
	if (!s || !n || (limit > 0 && !jobs))
		return sf_err_set(err, SF_EINVAL, "store_list_jobs: no store, jobs or n");
	if (state < -1 || state > JOB_CANCELLED)
		return sf_err_set(err, SF_EINVAL, "store_list_jobs: state %d, allowed -1..%d",
				  state, JOB_CANCELLED);
	if (limit < 0 || before < 0)
		return sf_err_set(err, SF_EINVAL,
				  "store_list_jobs: limit %d and before %lld must be >= 0", limit,
				  (long long)before);
	if (limit == 0)
		return 0;
	return s->ops->list_jobs(s, state, kind, before, limit, jobs, n, err);
}

/* What every transition answers for a NULL store. */
static int no_store_transition(sf_err *err)
{
	return sf_err_set(err, SF_EINVAL, "job transition: no store or id");
}

int store_job_started(store *s, const char *id, sf_err *err)
{
	return s ? s->ops->job_started(s, id, err) : no_store_transition(err);
}

int store_job_progress(store *s, const char *id, int generation, int generations, double best,
		       sf_err *err)
{
	return s ? s->ops->job_progress(s, id, generation, generations, best, err)
		 : no_store_transition(err);
}

/* ---- leases (store.h) ---- */

/* The longest lease: a day. */
#define LEASE_MAX_MS 86400000

/* The room of a node's name: store_fence.owner and store_job.lease_owner. */
#define OWNER_ROOM sizeof(((store_fence *)NULL)->owner)

/* Checks a node's name: 1..63 characters. */
static int check_owner(const char *owner, const char *what, sf_err *err)
{
	size_t len = owner ? strnlen(owner, OWNER_ROOM) : 0;
	if (len == 0 || len == OWNER_ROOM)
		return sf_err_set(err, SF_EINVAL, "%s: owner (the node's name) of 1..%zu characters",
				  what, OWNER_ROOM - 1);
	return 0;
}

static int check_lease(int lease_ms, const char *what, sf_err *err)
{
	if (lease_ms < 1 || lease_ms > LEASE_MAX_MS)
		return sf_err_set(err, SF_EINVAL, "%s: lease_ms %d, allowed 1..%d", what, lease_ms,
				  LEASE_MAX_MS);
	return 0;
}

/* Checks a fence, when there is one (NULL: an unfenced call). */
static int check_fence(const store_fence *f, const char *what, sf_err *err)
{
	return f ? check_owner(f->owner, what, err) : 0;
}

int store_claim_job(store *s, const char *owner, int lease_ms, store_job *job, sf_err *err)
{
	if (!s || !job)
		return sf_err_set(err, SF_EINVAL, "store_claim_job: no store or job");
	int rc = check_owner(owner, "store_claim_job", err);
	if (!rc)
		rc = check_lease(lease_ms, "store_claim_job", err);
	return rc ? rc : s->ops->claim_job(s, owner, lease_ms, job, err);
}

int store_job_heartbeat(store *s, const char *id, const store_fence *f, int lease_ms,
			int generation, int generations, double best, int *cancel, sf_err *err)
{
	if (cancel)
		*cancel = 0;
	if (!s || !id || !f)
		return sf_err_set(err, SF_EINVAL, "store_job_heartbeat: no store, id or fence");
	int rc = check_fence(f, "store_job_heartbeat", err);
	if (!rc)
		rc = check_lease(lease_ms, "store_job_heartbeat", err);
	return rc ? rc
		  : s->ops->job_heartbeat(s, id, f, lease_ms, generation, generations, best,
					  cancel, err);
}

int store_prune_job_events(store *s, int64_t age_ms, int64_t *deleted, sf_err *err)
{
	int64_t scratch;
	if (!deleted)
		deleted = &scratch;
	*deleted = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_prune_job_events: no store");
	if (age_ms < 0 || age_ms > 366LL * 24 * 3600 * 1000)
		return sf_err_set(err, SF_EINVAL,
				  "store_prune_job_events: age %lld ms, allowed 0..one year",
				  (long long)age_ms);
	return s->ops->prune_job_events(s, age_ms, deleted, err);
}

int store_rescue_expired(store *s, int max_lost, store_rescued *out, int cap, int *n,
			 sf_err *err)
{
	if (n)
		*n = 0;
	if (!s || !n || (cap > 0 && !out))
		return sf_err_set(err, SF_EINVAL, "store_rescue_expired: no store, out or n");
	if (max_lost < 1 || max_lost > 100)
		return sf_err_set(err, SF_EINVAL, "store_rescue_expired: max_lost %d, allowed 1..100",
				  max_lost);
	if (cap < 0)
		return sf_err_set(err, SF_EINVAL, "store_rescue_expired: cap %d must be >= 0", cap);
	return cap ? s->ops->rescue_expired(s, max_lost, out, cap, n, err) : 0;
}

int store_request_cancel(store *s, const char *id, job_state *state, sf_err *err)
{
	if (!s || !id)
		return sf_err_set(err, SF_EINVAL, "store_request_cancel: no store or id");
	job_state ignored;
	return s->ops->request_cancel(s, id, state ? state : &ignored, err);
}

/* ---- job events (store.h) ---- */

/* The most events one append writes and one read returns. */
#define EVENTS_MAX 1000

int store_append_job_events(store *s, const char *id, const store_fence *f,
			    const store_event *events, int n, sf_err *err)
{
	if (!s || !id)
		return sf_err_set(err, SF_EINVAL, "store_append_job_events: no store or id");
	if (n < 0 || n > EVENTS_MAX || (n > 0 && !events))
		return sf_err_set(err, SF_EINVAL,
				  "store_append_job_events: %d events, allowed 0..%d", n,
				  EVENTS_MAX);
	for (int i = 0; i < n; i++) {
		if (events[i].id < 0 || !events[i].data)
			return sf_err_set(err, SF_EINVAL,
					  "store_append_job_events: event %d: id %lld (must be "
					  ">= 0) or no data",
					  i, (long long)events[i].id);
		if (!store__utf8_valid(events[i].data))
			return sf_err_set(err, SF_EINVAL,
					  "store_append_job_events: event %lld: data is not UTF-8",
					  (long long)events[i].id);
	}
	int rc = check_fence(f, "store_append_job_events", err);
	return rc ? rc : s->ops->append_job_events(s, id, f, events, n, err);
}

int store_job_events(store *s, const char *id, int64_t after, int cap, store_event *out, int *n,
		     sf_err *err)
{
	if (n)
		*n = 0;
	if (!s || !id || !out || !n)
		return sf_err_set(err, SF_EINVAL, "store_job_events: no store, id, out or n");
	if (cap < 1 || cap > EVENTS_MAX)
		return sf_err_set(err, SF_EINVAL, "store_job_events: cap %d, allowed 1..%d", cap,
				  EVENTS_MAX);
	return s->ops->job_events(s, id, after, cap, out, n, err);
}

/* ---- the outcomes ---- */

int store_job_succeeded(store *s, const char *id, const store_fence *f, const store_level *levels,
			int nlevels, sf_err *err)
{
	int rc = check_levels(levels, nlevels, err);
	if (!rc)
		rc = check_fence(f, "store_job_succeeded", err);
	if (rc)
		return rc;
	return s ? s->ops->job_succeeded(s, id, f, levels, nlevels, err)
		 : no_store_transition(err);
}

int store_job_failed(store *s, const char *id, const store_fence *f, const char *error,
		     sf_err *err)
{
	if (!error)
		return sf_err_set(err, SF_EINVAL, "store_job_failed: no error message");
	int rc = check_fence(f, "store_job_failed", err);
	if (rc)
		return rc;
	return s ? s->ops->job_failed(s, id, f, error, err) : no_store_transition(err);
}

int store_job_cancelled(store *s, const char *id, const store_fence *f, sf_err *err)
{
	int rc = check_fence(f, "store_job_cancelled", err);
	if (rc)
		return rc;
	return s ? s->ops->job_cancelled(s, id, f, err) : no_store_transition(err);
}

int store_job_requeue(store *s, const char *id, const store_fence *f, sf_err *err)
{
	int rc = check_fence(f, "store_job_requeue", err);
	if (rc)
		return rc;
	return s ? s->ops->job_requeue(s, id, f, err) : no_store_transition(err);
}

int store_pending_jobs(store *s, char (**ids)[40], size_t *n, sf_err *err)
{
	if (ids)
		*ids = NULL;
	if (n)
		*n = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_pending_jobs: no store, ids or n");
	return s->ops->pending_jobs(s, ids, n, err);
}

int store_count_jobs(store *s, int64_t counts[5], sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_count_jobs: no store or counts");
	return s->ops->count_jobs(s, counts, err);
}

/* ---- levels ---- */

int store_get_level(store *s, const char *id, char **doc, sf_err *err)
{
	if (doc)
		*doc = NULL;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_get_level: no store, id or doc");
	return s->ops->get_level(s, id, doc, err);
}

int store_list_levels(store *s, const char *kind, const store_filter *filters, int nfilters,
		      int64_t before, int limit, char **docs, int64_t *seqs, int *n, sf_err *err)
{
	if (n)
		*n = 0;
	if (!s || !n || (limit > 0 && !docs))
		return sf_err_set(err, SF_EINVAL, "store_list_levels: no store, docs or n");
	if (limit < 0 || before < 0)
		return sf_err_set(err, SF_EINVAL,
				  "store_list_levels: limit %d and before %lld must be >= 0", limit,
				  (long long)before);
	int rc = check_filters(filters, nfilters, err);
	if (rc || limit == 0)
		return rc;
	return s->ops->list_levels(s, kind, filters, nfilters, before, limit, docs, seqs, n, err);
}

/* ---- the evaluation cache ---- */

int store_get_evaluation(store *s, const char *lattice, const char *sequence, char **doc,
			 sf_err *err)
{
	if (doc)
		*doc = NULL;
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_evaluation: no store, lattice, sequence or doc");
	return s->ops->get_evaluation(s, lattice, sequence, doc, err);
}

int store_put_evaluations(store *s, const store_evaluation *evals, size_t n, sf_err *err)
{
	if (!s || (n && !evals))
		return sf_err_set(err, SF_EINVAL, "store_put_evaluations: no store or evaluations");
	for (size_t i = 0; i < n; i++)
		if (!evals[i].lattice || !evals[i].sequence || !evals[i].doc)
			return sf_err_set(err, SF_EINVAL,
					  "store_put_evaluations: entry %zu lacks lattice, "
					  "sequence or doc",
					  i);
	return n ? s->ops->put_evaluations(s, evals, n, err) : 0;
}

int store_touch_evaluations(store *s, const store_evaluation *keys, size_t n, sf_err *err)
{
	if (!s || (n && !keys))
		return sf_err_set(err, SF_EINVAL, "store_touch_evaluations: no store or keys");
	for (size_t i = 0; i < n; i++)
		if (!keys[i].lattice || !keys[i].sequence)
			return sf_err_set(err, SF_EINVAL,
					  "store_touch_evaluations: entry %zu lacks lattice or "
					  "sequence",
					  i);
	return n ? s->ops->touch_evaluations(s, keys, n, err) : 0;
}

int store_limit_evaluations(store *s, int64_t max, int64_t *evicted, sf_err *err)
{
	if (evicted)
		*evicted = 0;
	if (!s || max < 0)
		return sf_err_set(err, SF_EINVAL,
				  "store_limit_evaluations: no store, or a negative bound");
	s->eval_max = max;
	int64_t n = 0;
	int rc = max ? s->ops->trim_evaluations(s, &n, err) : 0;
	if (evicted)
		*evicted = rc ? 0 : n;
	return rc;
}

int store_evaluation_stats(store *s, int64_t *entries, int64_t *evictions, sf_err *err)
{
	if (!s || !entries || !evictions)
		return sf_err_set(err, SF_EINVAL,
				  "store_evaluation_stats: no store, entries or evictions");
	return s->ops->evaluation_stats(s, entries, evictions, err);
}

/* One entry: store_put_evaluations() with n = 1. */
int store_put_evaluation(store *s, const char *lattice, const char *sequence, const char *doc,
			 sf_err *err)
{
	if (!s || !lattice || !sequence || !doc)
		return sf_err_set(err, SF_EINVAL,
				  "store_put_evaluation: no store, lattice, sequence or doc");
	store_evaluation e = { lattice, sequence, doc };
	return s->ops->put_evaluations(s, &e, 1, err);
}

/* ---- uploaded resources ---- */

int store_put_resource(store *s, const char *type, const char *name, const char *format,
		       const char *body, const char *summary, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_put_resource: no store, type, name, format or body");
	/* Text is kept as text on both back ends, and PostgreSQL's is UTF-8. */
	if (body && !store__utf8_valid(body))
		return sf_err_set(err, SF_EINVAL, "store_put_resource: the body is not UTF-8 text");
	return s->ops->put_resource(s, type, name, format, body, summary, err);
}

int store_get_resource(store *s, const char *type, const char *name, char **format, char **body,
		       sf_err *err)
{
	if (format)
		*format = NULL;
	if (body)
		*body = NULL;
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_resource: no store, type, name, format or body");
	return s->ops->get_resource(s, type, name, format, body, err);
}

int store_list_resources(store *s, const char *type, int64_t before, int limit, store_resource *out,
			 int *n, sf_err *err)
{
	if (n)
		*n = 0;
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_list_resources: no store, type, out or n");
	return s->ops->list_resources(s, type, before, limit, out, n, err);
}

/* ---- storage faults ---- */

int store_write_fault(const store *s, const char **msg)
{
	if (!s) {
		if (msg)
			*msg = "";
		return STORE_OK;
	}
	return s->ops->write_fault(s, msg);
}

int store_probe_write(store *s, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_probe_write: no store, or a READONLY one");
	return s->ops->probe_write(s, err);
}

int store_simulate_fault(store *s, int fault, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL,
				  "store_simulate_fault: no store, or a READONLY one");
	return s->ops->simulate_fault(s, fault, err);
}

/* ---- batches and the lock ---- */

int store_batch_begin(store *s, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_batch_begin: no store");
	return s->ops->batch_begin(s, err);
}

int store_batch_end(store *s, int commit, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_batch_end: no store");
	return s->ops->batch_end(s, commit, err);
}

int store_lock_exclusive(store *s, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_lock_exclusive: no store");
	return s->ops->lock_exclusive(s, err);
}

int store_checkpoint_in_background(store *s, sf_err *err)
{
	if (!s)
		return sf_err_set(err, SF_EINVAL, "store_checkpoint_in_background: no store");
	return s->ops->checkpoint_in_background ? s->ops->checkpoint_in_background(s, err) : 0;
}

unsigned long store_background_checkpoints(store *s)
{
	return s && s->ops->background_checkpoints ? s->ops->background_checkpoints(s) : 0;
}
