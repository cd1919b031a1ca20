/*
 * store_sqlite_open.c - opening, migrating and closing an SQLite store
 * (store_open(), store_open_with(), store_close() of store.h, through
 * store_sqlite_ops; the helpers are in store_sqlite.c).
 *
 * Opening reads the schema version before it changes anything, so a
 * database written by a newer binary, or (READONLY) one of another version,
 * is refused untouched. Migrations: each entry of the table is run with
 * sqlite3_exec inside its own BEGIN IMMEDIATE transaction, which re-reads
 * user_version first (a second process may have migrated meanwhile) and
 * sets it last, so a step is applied whole, version included, or not at
 * all.
 */
#include "store_sqlite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/embedded.h"

/* Reads PRAGMA user_version into *version. */
static int read_version(sq_store *s, int *version, sf_err *err, const char *what)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_VERSION, &st, err);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*version = sqlite3_column_int(st, 0);
		rc = 0;
	} else {
		rc = store__db_err(s, rc, err, "%s: reading the schema version", what);
	}
	store__done(st);
	return rc;
}

/*
 * Creates the folders above the file `path` that do not exist: mkdir -p of
 * its directory part, mode 0777 less the umask.
 */
static int make_parent_dirs(const char *path, sf_err *err)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return 0; /* the working directory or / */
	size_t len = (size_t)(slash - path);
	char *dir = malloc(len + 1);
	if (!dir)
		return sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
	memcpy(dir, path, len);
	dir[len] = '\0';
	int rc = 0;
	for (size_t i = 1; i <= len && !rc; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		char c = dir[i];
		dir[i] = '\0';
		if (mkdir(dir, 0777) != 0 && errno != EEXIST)
			rc = sf_err_set(err, SF_ESYS, "store_open: creating the folder %s: %s", dir,
					strerror(errno));
		dir[i] = c;
	}
	struct stat sb;
	if (!rc && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
		rc = sf_err_set(err, SF_ESYS, "store_open: %s is not a folder", dir);
	free(dir);
	return rc;
}

/* Runs a fixed PRAGMA and, when `want` is not NULL, checks its one text result. */
static int pragma(sq_store *s, const char *sql, const char *want, const char *path, sf_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	/*
	 * Switching a new database to WAL needs an exclusive lock, and SQLite
	 * answers SQLITE_BUSY at once, without the busy handler, while another
	 * process is creating it: retry for as long as busy_timeout would wait.
	 */
	for (int waited = 0; rc == SQLITE_OK;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
			rc = SQLITE_OK;
			break;
		}
		if ((rc & 0xff) != SQLITE_BUSY || waited >= STORE__BUSY_TIMEOUT_MS)
			break;
		sqlite3_reset(st);
		sqlite3_sleep(10);
		waited += 10;
		rc = SQLITE_OK;
	}
	int ret = rc == SQLITE_OK ? 0 : store__db_err(s, rc, err, "store_open: %s: %s", path, sql);
	if (!ret && want) {
		const char *got = (const char *)sqlite3_column_text(st, 0);
		if (!got || strcmp(got, want) != 0)
			ret = sf_err_set(err, SF_ESYS, "store_open: %s: %s gave %s, expected %s",
					 path, sql, got ? got : "nothing", want);
	}
	sqlite3_finalize(st);
	return ret;
}

/*
 * Fails, naming migration `name`, when the open transaction has left a
 * foreign key dangling: migrations run with enforcement off (see below).
 */
static int check_foreign_keys(sq_store *s, const char *name, sf_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *table = (const char *)sqlite3_column_text(st, 0);
		const char *parent = (const char *)sqlite3_column_text(st, 2);
		rc = sf_err_set(err, SF_EINVAL,
				"store_open: migration %s leaves a row of table %s whose foreign "
				"key names a missing row of %s",
				name, table ? table : "?", parent ? parent : "?");
	} else {
		rc = rc == SQLITE_DONE
			     ? 0
			     : store__db_err(s, rc, err,
					     "store_open: migration %s: checking foreign keys",
					     name);
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * Applies migrations m[s->version..count-1], each in its own transaction.
 * Foreign keys are not enforced yet (store_open_with() turns them on
 * afterwards, and the pragma cannot change inside a transaction), so a step
 * may rebuild a table that others refer to, as SQLite's documented ALTER
 * TABLE procedure does; PRAGMA foreign_key_check then refuses a step that
 * leaves a reference dangling.
 */
static int migrate(sq_store *s, const sf_embedded *m, size_t count, const char *path, sf_err *err)
{
	for (size_t i = (size_t)s->version; i < count; i++) {
		int version = (int)i + 1, current = 0, rc;
		if ((rc = store__begin(s, err, "store_open: migrating")) != 0)
			return rc;
		/* Another process may have migrated since we looked. */
		if ((rc = read_version(s, &current, err, "store_open")) != 0)
			return store__fail(s, rc);
		if (current > (int)count)
			return store__fail(s,
					   sf_err_set(err, SF_ERANGE,
						      "store_open: database %s has schema version "
						      "%d, newer than this binary's %zu",
						      path, current, count));
		if (current >= version) {
			store__fail(s, 0);
			s->version = current;
			continue;
		}
		char *msg = NULL;
		rc = sqlite3_exec(s->db, (const char *)m[i].data, NULL, NULL, &msg);
		if (rc != SQLITE_OK) {
			rc = sf_err_set(err, store__code_of(rc),
					"store_open: migration %s failed: %s", m[i].name,
					msg ? msg : sqlite3_errstr(rc));
			sqlite3_free(msg);
			return store__fail(s, rc);
		}
		if (sqlite3_get_autocommit(s->db))
			return sf_err_set(
				err, SF_ESYS,
				"store_open: migration %s ended the transaction itself "
				"(migration files must not hold BEGIN, COMMIT or ROLLBACK); "
				"the database may be half migrated",
				m[i].name);
		if ((rc = check_foreign_keys(s, m[i].name, err)) != 0)
			return store__fail(s, rc);
		/* The one SQL text built from a number: a version from our own table. */
		char sql[40];
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", version);
		rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			return store__fail(s, store__db_err(s, rc, err,
							    "store_open: migration %s: setting "
							    "the version",
							    m[i].name));
		if ((rc = store__commit(s, err, "store_open: committing a migration")) != 0)
			return rc;
		s->version = version;
	}
	return 0;
}

/*
 * Opens `path` (see store.h) with the migration table m[0..count-1]: makes
 * the folders (READWRITE), opens, reads user_version and refuses a newer
 * database (or, READONLY, any other version) before it changes anything,
 * sets WAL (READWRITE) and synchronous=FULL, migrates (READWRITE), and
 * only then turns foreign keys on. Returns NULL and sets `err` on failure,
 * having closed the connection; a migration that failed has been rolled
 * back.
 */
store *store_sqlite_open(const char *path, int mode, const sf_embedded *migrations, size_t count,
			 sf_err *err)
{
	if (store__check_open(path, "path", mode, migrations, count, err) != 0)
		return NULL;
	int memory = strcmp(path, ":memory:") == 0;
	if (mode == STORE_READWRITE && !memory && make_parent_dirs(path, err) != 0)
		return NULL;
	sq_store *s = calloc(1, sizeof *s);
	if (!s) {
		sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
		return NULL;
	}
	s->base.ops = &store_sqlite_ops;
	s->lock_fd = -1;
	s->readonly = mode == STORE_READONLY;
	s->latest = (int)count;
	if (!(s->path = strdup(path))) {
		sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
		goto fail;
	}
	int flags =
		SQLITE_OPEN_NOMUTEX |
		(s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	int rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		store__db_err(s, rc, err, "store_open: opening %s", path);
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, STORE__BUSY_TIMEOUT_MS);
	/* The version first: a newer database is refused before anything is changed. */
	if (read_version(s, &s->version, err, path) != 0) {
		sf_err_prefix(err, "store_open: ");
		goto fail;
	}
	if (s->version > s->latest || s->version < 0) {
		sf_err_set(err, SF_ERANGE,
			   "store_open: database %s has schema version %d, newer than this "
			   "binary's %d: it was written by a newer starforge",
			   path, s->version, s->latest);
		goto fail;
	}
	if (s->readonly && s->version != s->latest) {
		sf_err_set(err, SF_ERANGE,
			   "store_open: database %s has schema version %d, this binary's is %d; "
			   "a read-only handle does not migrate",
			   path, s->version, s->latest);
		goto fail;
	}
	if (!s->readonly &&
	    pragma(s, "PRAGMA journal_mode = WAL", memory ? "memory" : "wal", path, err) != 0)
		goto fail;
	if (pragma(s, "PRAGMA synchronous = FULL", NULL, path, err) != 0)
		goto fail;
	if (!s->readonly) {
		/* The page limit the fault seam restores, and the seam's file. */
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(s->db, "PRAGMA max_page_count", -1, &st, NULL) ==
			    SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			s->max_pages = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		const char *seam = getenv("STARFORGE_TEST_STORAGE_FAULT");
		if (seam && *seam && !(s->fault_file = strdup(seam))) {
			sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
			goto fail;
		}
	}
	if (!s->readonly && migrate(s, migrations, count, path, err) != 0)
		goto fail;
	if (pragma(s, "PRAGMA foreign_keys = ON", NULL, path, err) != 0)
		goto fail;
	return &s->base;
fail:
	store_sqlite_close(&s->base);
	return NULL;
}

/*
 * Finalizes every cached statement and closes the connection (the last
 * connection to close checkpoints the WAL into the database file), rolling
 * back a batch left open; then drops the one-process lock. The lock's
 * descriptor is closed after the connection: closing any descriptor of the
 * file drops the process's POSIX locks on it, SQLite's included, so it
 * must not happen while this connection holds any.
 */
void store_sqlite_close(store *base)
{
	sq_store *s = (sq_store *)base;
	store_sqlite_ckpt_stop(s); /* its last checkpoint first */
	if (s->batch && s->db && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	for (int i = 0; i < STORE__LIST_CACHE; i++)
		sqlite3_finalize(s->lists[i].stmt);
	/* Every statement is finalized, so the close cannot be refused. */
	sqlite3_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->fault_file);
	free(s->path);
	free(s);
}

/* The database's user_version as of the end of store_open. */
int store_sqlite_version(store *base)
{
	return ((sq_store *)base)->version;
}

/* The last version of the migration table the store was opened with. */
int store_sqlite_latest_version(store *base)
{
	return ((sq_store *)base)->latest;
}
