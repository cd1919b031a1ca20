/*
 * store_sqlite_resources.c - uploaded resources in the SQLite store
 * (store.h; the connection and the helpers are in store_sqlite.c).
 *
 * One table holds every type (migrations 0003, 0004), keyed by (type,
 * name): a name is taken for good within its type, the body is kept byte
 * for byte, and `seq` orders the uploads for listing, newest first, with
 * the same `seq < before` cursor as jobs and levels.
 */
#include "store_sqlite.h"

#include <stdlib.h>
#include <string.h>

/*
 * Stores the resource (`type`, `name`) in one BEGIN IMMEDIATE transaction.
 * Returns 0, STORE_EXISTS when the name is taken within its type (nothing
 * written, err untouched), or a negative code. The body is stored byte for
 * byte up to its NUL; `summary` (may be NULL) beside it.
 */
int store_sqlite_put_resource(store *base, const char *type, const char *name, const char *format,
			      const char *body, const char *summary, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (!s || !type || !name || !format || !body)
		return sf_err_set(err, SF_EINVAL,
				  "store_put_resource: no store, type, name, format or body");
	int rc = store__begin(s, err, "store_put_resource");
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = store__prep(s, ST_RES_PUT, &st, err)) != 0)
		return store__fail(s, rc);
	if (store__bind_text(st, 1, type) || store__bind_text(st, 2, name) ||
	    store__bind_text(st, 3, format) || store__bind_text(st, 4, body) ||
	    store__bind_text(st, 5, summary) || sqlite3_bind_int64(st, 6, store__now_ms())) {
		rc = store__bind_err(s, err, "store_put_resource");
		store__done(st);
		return store__fail(s, rc);
	}
	if ((rc = store__step_write(s, st, err, "store_put_resource")) != 0)
		return store__fail(s, rc);
	int inserted = sqlite3_changes(s->db) == 1;
	if ((rc = store__commit(s, err, "store_put_resource")) != 0)
		return rc;
	return inserted ? 0 : STORE_EXISTS;
}

/*
 * Sets *format and *body to malloc'ed copies of the resource's format and
 * body (the caller frees both), or both to NULL when there is none; returns
 * 0 either way, or a negative code (both NULL). Reads only.
 */
int store_sqlite_get_resource(store *base, const char *type, const char *name, char **format,
			      char **body, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (format)
		*format = NULL;
	if (body)
		*body = NULL;
	if (!s || !type || !name || !format || !body)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_resource: no store, type, name, format or body");
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_RES_GET, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, type) || store__bind_text(st, 2, name)) {
		rc = store__bind_err(s, err, "store_get_resource");
		store__done(st);
		return rc;
	}
	int oom = 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*format = store__col_dup(st, 0, &oom);
		*body = oom ? NULL : store__col_dup(st, 1, &oom);
		rc = 0;
		if (oom || !*format || !*body) {
			free(*format);
			free(*body);
			*format = *body = NULL;
			rc = sf_err_set(err, oom ? SF_ENOMEM : SF_ESYS, "store_get_resource: %s",
					oom ? "out of memory" : "NULL column");
		}
	} else {
		rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "store_get_resource");
	}
	store__done(st);
	return rc;
}

/*
 * Lists the resources of `type` newest first (see store.h): one statement,
 * `seq < before` over the (type, seq) index. On failure every entry filled
 * so far is cleared and *n is 0.
 */
int store_sqlite_list_resources(store *base, const char *type, int64_t before, int limit,
				store_resource *out, int *n, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (n)
		*n = 0;
	if (!s || !type || !n || (limit > 0 && !out))
		return sf_err_set(err, SF_EINVAL, "store_list_resources: no store, type, out or n");
	if (limit < 0 || before < 0)
		return sf_err_set(err, SF_EINVAL,
				  "store_list_resources: limit %d and before %lld must be >= 0",
				  limit, (long long)before);
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_RES_LIST, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, type) ||
	    sqlite3_bind_int64(st, 2, before ? before : INT64_MAX) ||
	    sqlite3_bind_int(st, 3, limit)) {
		rc = store__bind_err(s, err, "store_list_resources");
		store__done(st);
		return rc;
	}
	int step = SQLITE_DONE, oom = 0;
	while (*n < limit && (step = sqlite3_step(st)) == SQLITE_ROW) {
		store_resource *res = &out[*n];
		memset(res, 0, sizeof *res);
		res->seq = sqlite3_column_int64(st, 0);
		res->name = store__col_dup(st, 1, &oom);
		res->format = store__col_dup(st, 2, &oom);
		res->summary = store__col_dup(st, 3, &oom);
		res->body = store__col_dup(st, 4, &oom);
		res->created_ms = sqlite3_column_int64(st, 5);
		(*n)++;
		if (oom || !res->name || !res->format || (!res->summary && !res->body)) {
			rc = sf_err_set(err, oom ? SF_ENOMEM : SF_ESYS, "store_list_resources: %s",
					oom ? "out of memory" : "NULL column");
			break;
		}
	}
	if (!rc && *n < limit && step != SQLITE_DONE)
		rc = store__db_err(s, step, err, "store_list_resources");
	store__done(st);
	if (rc) {
		for (int i = 0; i < *n; i++)
			store_resource_clear(&out[i]);
		*n = 0;
	}
	return rc;
}
