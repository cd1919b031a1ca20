/*
 * store_pg.h - the PostgreSQL back end of store.h (store_pg.c), on libpq.
 * store_open() in store.c calls store_pg_open() for a `postgresql://` or
 * `postgres://` URI; everything else reaches the back end through store.h.
 * The schema's steps are the files of migrations/postgres/, embedded as
 * sf_pg_migrations.
 */
#ifndef SF_STORE_PG_H
#define SF_STORE_PG_H

#include <stddef.h>

#include "../base/embedded.h"
#include "store.h"

/*
 * Opens a store on the PostgreSQL database named by the libpq connection
 * string `uri` (postgresql://USER@HOST:PORT/DB?..., or key=value pairs),
 * with the semantics of store_open() (store.h): READWRITE creates the
 * schema the connection's search_path names first when it does not exist,
 * then applies the embedded steps newer than the database's version (the
 * largest version in schema_migrations, 0 without that table), each in its
 * own transaction under an advisory lock, so that nodes starting together
 * migrate once; a database newer than the binary is refused (SF_ERANGE)
 * before anything changes. READONLY migrates nothing, refuses (SF_ERANGE)
 * any version but the binary's, and makes the session read-only.
 * Tables are unqualified, so a store lives in the connection's current
 * schema: `?options=-csearch_path%3Dname` keeps several stores in one
 * database. A connection that fails is SF_ESYS, naming the database and
 * host but never the password. Returns NULL and sets `err` on failure.
 */
store *store_pg_open(const char *uri, int mode, sf_err *err);

/*
 * store_pg_open() with the step table `migrations[0..count-1]` in place of
 * sf_pg_migrations, which then also sets the version the store counts as
 * the binary's (as store_open_with() does for SQLite). Names must read
 * "NNNN_name.sql", numbered 0001 upwards without gaps; otherwise
 * SF_EINVAL.
 */
store *store_pg_open_with(const char *uri, int mode, const sf_embedded *migrations, size_t count,
			  sf_err *err);

/* The binary's PostgreSQL schema version: the number of embedded steps. */
int store_pg_latest_version(void);

#endif
