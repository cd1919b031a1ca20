/*
 * store_support.h - the fixture the store's test files share
 * (test_store.c, test_store_batch.c, test_store_faults.c,
 * test_store_lease.c): every test gets a fresh temporary folder (mkdtemp
 * under /tmp, removed afterwards) and a database of its own in one of the
 * two back ends. SQLite: a file in that folder. PostgreSQL: a schema of
 * its own, sf_<tag>_<pid>_<n>, in the database STARFORGE_TEST_PG names
 * (tests/pg/cluster.sh sets it; `make test` runs every test binary under
 * it); store_open() creates the schema and the teardown drops it. Without
 * STARFORGE_TEST_PG a PostgreSQL fixture has an empty path, and
 * fixture_pg_or_skip() skips its test.
 *
 * Include after <cmocka.h>. Everything here is static inline, so a file
 * that uses part of it compiles without warnings.
 */
#ifndef SF_TEST_STORE_SUPPORT_H
#define SF_TEST_STORE_SUPPORT_H

#include <dirent.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../server/store/store.h"

typedef struct fixture {
	char dir[64];    /* the mkdtemp folder */
	char path[512];  /* SQLite: a file in dir (its folders may not exist yet);
			  * PostgreSQL: the URI of the test's own schema, or "" without
			  * STARFORGE_TEST_PG */
	int pg;          /* 1: the PostgreSQL back end */
	char schema[48]; /* PostgreSQL: the schema, sf_<tag>_<pid>_<n> */
	char seam[128];  /* dir/fault: a file for STARFORGE_TEST_STORAGE_FAULT */
} fixture;

/* Removes `path`, a folder with everything in it or a file; a missing one is no error. */
static inline void rm_rf(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb) != 0)
		return;
	if (S_ISDIR(sb.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char child[512];
			int len = snprintf(child, sizeof child, "%s/%s", path, e->d_name);
			if (len > 0 && (size_t)len < sizeof child)
				rm_rf(child);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* The URI of `base` with the option that makes `schema` the search_path. */
static inline void pg_uri(char *out, size_t size, const char *base, const char *schema)
{
	snprintf(out, size, "%s%soptions=-csearch_path%%3D%s", base, strchr(base, '?') ? "&" : "?",
		 schema);
}

/*
 * A new fixture in *state: the folder /tmp/sf_<tag>_XXXXXX and, for SQLite,
 * path = folder/`file`; for PostgreSQL (pg), path = the URI of schema
 * sf_<tag>_<pid>_<n>. Returns 0, or -1 (cmocka then fails the test).
 */
static inline int fixture_setup(void **state, const char *tag, const char *file, int pg)
{
	static int counter;
	fixture *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	snprintf(f->dir, sizeof f->dir, "/tmp/sf_%s_XXXXXX", tag);
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->seam, sizeof f->seam, "%s/fault", f->dir);
	f->pg = pg;
	const char *base = getenv("STARFORGE_TEST_PG");
	if (!pg) {
		snprintf(f->path, sizeof f->path, "%s/%s", f->dir, file);
	} else if (base && *base) {
		snprintf(f->schema, sizeof f->schema, "sf_%s_%d_%d", tag, (int)getpid(), ++counter);
		pg_uri(f->path, sizeof f->path, base, f->schema);
	}
	*state = f;
	return 0;
}

/* Drops the fixture's schema (on the base URI: it may be gone or never made) and folder. */
static inline int fixture_teardown(void **state)
{
	fixture *f = *state;
	if (f->pg && f->schema[0]) {
		PGconn *c = PQconnectdb(getenv("STARFORGE_TEST_PG"));
		char sql[96];
		snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", f->schema);
		PQclear(PQexec(c, "SET client_min_messages = warning"));
		PQclear(PQexec(c, sql));
		PQfinish(c);
	}
	rm_rf(f->dir);
	free(f);
	return 0;
}

/* The fixture, skipping a PostgreSQL test when there is no database to run it on. */
static inline fixture *fixture_pg_or_skip(void **state)
{
	fixture *f = *state;
	if (f->pg && !f->path[0])
		skip();
	return f;
}

/* Fails the test unless rc is 0, with the store's message. */
static inline void ok(int rc, const sf_err *err)
{
	if (rc != 0)
		fail_msg("%d: %s", rc, err->msg);
}

/* Job `id`, which must exist (the caller clears it). */
static inline store_job get(store *s, const char *id)
{
	sf_err err = { 0 };
	store_job job;
	int rc = store_get_job(s, id, &job, &err);
	if (rc != 1)
		fail_msg("get %s: %d %s", id, rc, err.msg);
	return job;
}

#endif
