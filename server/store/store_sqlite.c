/*
 * store_sqlite.c - the SQLite back end of store.h: the connection, its
 * statements, opening and migrating, the evaluation cache. Jobs and levels
 * are in store_sqlite_jobs.c; the internals both share, in store_sqlite.h.
 *
 * One store is one SQLite connection, used by one thread: the loop thread
 * owns the read-write handle; a worker that reads the evaluation cache opens
 * its own READONLY handle. WAL lets those readers run while the writer
 * commits, and every statement is reset as soon as its rows are read, so no
 * handle keeps a read snapshot open between calls: a READONLY handle sees
 * each write as soon as it is committed, and checkpoints are never held
 * back. Across processes, busy_timeout (5 s) turns lock contention into a
 * wait; BEGIN IMMEDIATE takes the write lock at the start of every writing
 * transaction, so a transaction never fails half way on a lock it could not
 * upgrade.
 *
 * Durability: synchronous=FULL syncs the WAL at every commit, so a job the
 * HTTP layer has acknowledged survives a power cut. Each public function
 * that writes is one transaction and commits before it returns, or rolls
 * back and reports; nothing is left open between calls.
 *
 * SQL text is fixed: values only ever reach SQLite as bound parameters.
 * Statements are prepared on first use and kept in the store (stmt[]), so a
 * READONLY handle never prepares the writers' statements. Level listings
 * differ in shape (a kind or not, which filters), so store_sqlite_jobs.c
 * assembles their text from fixed fragments and keeps the few shapes in use
 * prepared (lists[]). The only SQL built from numbers are PRAGMAs (which
 * take no parameters) whose numbers are the store's own: "PRAGMA
 * user_version = N" with a migration's version from the table compiled
 * into the binary (or, in store_probe_write(), the version it already
 * has), and "PRAGMA max_page_count = N" with the limit read at open.
 *
 * Storage faults: store__db_err() sees every failure, so it is where a
 * READWRITE handle notes that the storage refused to write (store.h);
 * store_probe_write() is the one way back. The test seam that simulates a
 * fault (store_simulate_fault()) sits in store__begin(), before every
 * writing transaction.
 *
 * Migrations: each entry of the table is run with sqlite3_exec inside its
 * own BEGIN IMMEDIATE transaction, which re-reads user_version first (a
 * second process may have migrated meanwhile) and sets it last, so a step
 * is applied whole, version included, or not at all.
 */
#include "store_sqlite.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "../base/embedded.h"

/* How long a statement waits for another connection's lock before SF_ESYS. */
#define BUSY_TIMEOUT_MS 5000

/* Sets a job back to queued without a trace of its run. */
#define REQUEUE_SET \
	"state = 'queued', started_ms = NULL, generation = 0, generations = 0, best = NULL"

/*
 * Every fixed statement. Job listings bind ?1 = before, ?2 = limit,
 * ?3 = state, ?4 = kind; transitions bind ?1 = id, ?2 = now and ?3 = the
 * text they record, as far as they have them.
 */
static const char *const SQL[ST__COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_VERSION] = "PRAGMA user_version",
	[ST_JOB_INSERT] = "INSERT INTO jobs (id, kind, params, seed, state, created_ms) "
			  "VALUES (?1, ?2, ?3, ?4, 'queued', ?5)",
	[ST_JOB_GET] = "SELECT " STORE__JOB_COLS " FROM jobs WHERE id = ?1",
	[ST_JOBS_ANY] = "SELECT " STORE__JOB_COLS " FROM jobs WHERE seq < ?1 "
			"ORDER BY seq DESC LIMIT ?2",
	[ST_JOBS_STATE] = "SELECT " STORE__JOB_COLS " FROM jobs WHERE state = ?3 AND seq < ?1 "
			  "ORDER BY seq DESC LIMIT ?2",
	[ST_JOBS_KIND] = "SELECT " STORE__JOB_COLS " FROM jobs WHERE kind = ?4 AND seq < ?1 "
			 "ORDER BY seq DESC LIMIT ?2",
	[ST_JOBS_STATE_KIND] = "SELECT " STORE__JOB_COLS " FROM jobs WHERE state = ?3 "
			       "AND kind = ?4 AND seq < ?1 ORDER BY seq DESC LIMIT ?2",
	[ST_JOB_STATE] = "SELECT state FROM jobs WHERE id = ?1",
	[ST_JOB_START] = "UPDATE jobs SET state = 'running', started_ms = ?2 WHERE id = ?1",
	[ST_JOB_PROGRESS] = "UPDATE jobs SET generation = ?2, generations = ?3, best = ?4 "
			    "WHERE id = ?1",
	[ST_JOB_SUCCEED] = "UPDATE jobs SET state = 'succeeded', finished_ms = ?2, level_ids = ?3 "
			   "WHERE id = ?1",
	[ST_JOB_FAIL] = "UPDATE jobs SET state = 'failed', finished_ms = ?2, error = ?3 "
			"WHERE id = ?1",
	[ST_JOB_CANCEL] = "UPDATE jobs SET state = 'cancelled', finished_ms = ?2 WHERE id = ?1",
	[ST_JOB_REQUEUE] = "UPDATE jobs SET " REQUEUE_SET " WHERE id = ?1",
	[ST_IDEM_GET] = "SELECT request_hash, job_id FROM idempotency_keys WHERE key = ?1",
	[ST_IDEM_INSERT] = "INSERT INTO idempotency_keys (key, request_hash, job_id, created_ms) "
			   "VALUES (?1, ?2, ?3, ?4)",
	[ST_PENDING] = "SELECT id FROM jobs WHERE state IN ('queued', 'running') ORDER BY seq",
	[ST_PENDING_REQUEUE] = "UPDATE jobs SET " REQUEUE_SET " WHERE state = 'running'",
	[ST_COUNT_JOBS] = "SELECT state, count(*) FROM jobs GROUP BY state",
	/* INSERT OR IGNORE, narrowed to the one conflict meant: a level id
	 * stored before keeps its first document. Any other constraint (a
	 * NULL, say) still fails, where OR IGNORE would drop the row. */
	[ST_LEVEL_INSERT] = "INSERT INTO levels (id, kind, doc, created_ms) "
			    "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (id) DO NOTHING",
	[ST_TAG_INSERT] = "INSERT INTO level_tags (level_id, name, text, num) "
			  "VALUES (?1, ?2, ?3, ?4)",
	[ST_LEVEL_GET] = "SELECT doc FROM levels WHERE id = ?1",
	[ST_EVAL_GET] = "SELECT doc FROM evaluations WHERE lattice = ?1 AND sequence = ?2",
	[ST_EVAL_PUT] = "INSERT INTO evaluations (lattice, sequence, doc, created_ms) "
			"VALUES (?1, ?2, ?3, ?4) ON CONFLICT (lattice, sequence) "
			"DO UPDATE SET doc = excluded.doc, created_ms = excluded.created_ms",
	/* A name is taken for good: the first upload wins, a second changes nothing. */
	[ST_RES_PUT] = "INSERT INTO resources (type, name, format, body, summary, created) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (type, name) DO NOTHING",
	[ST_RES_GET] = "SELECT format, body FROM resources WHERE type = ?1 AND name = ?2",
	/* The body only where there is no summary (a row from before 0004). */
	[ST_RES_LIST] = "SELECT seq, name, format, summary, "
			"CASE WHEN summary IS NULL THEN body END, created FROM resources "
			"WHERE type = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3",
};

const char *const store__state_names[JOB_CANCELLED + 1] = { "queued", "running", "succeeded",
							    "failed", "cancelled" };

/* ---- job state names ---- */

/* "queued", "running", ...; "unknown" for a value outside job_state. Never NULL. */
const char *job_state_name(job_state s)
{
	return (int)s >= 0 && s <= JOB_CANCELLED ? store__state_names[s] : "unknown";
}

/* The job_state named `name` (exact, lower case), or -1 for NULL or any other text. */
int job_state_parse(const char *name)
{
	for (int i = 0; name && i <= JOB_CANCELLED; i++)
		if (strcmp(name, store__state_names[i]) == 0)
			return i;
	return -1;
}

/* ---- helpers (contracts in store_sqlite.h) ---- */

/* Unix milliseconds from CLOCK_REALTIME: what the jobs' *_ms columns hold. */
int64_t store__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The SF_E* code for an SQLite result code. */
static int code_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return SF_ENOMEM;
	case SQLITE_CONSTRAINT:
	case SQLITE_TOOBIG:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return SF_EINVAL;
	default:
		return SF_ESYS;
	}
}

/* The storage fault (store.h) an SQLite result code means, or STORE_OK. */
static int fault_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return STORE_FULL;
	case SQLITE_READONLY:
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return STORE_UNWRITABLE;
	default:
		return STORE_OK;
	}
}

/* Enters the fault state `fault` with the message `msg`. */
static void set_fault(store *s, int fault, const char *msg)
{
	s->fault = fault;
	snprintf(s->fault_msg, sizeof s->fault_msg, "%s", msg);
}

/*
 * Records what was being done and SQLite's message; returns the SF_E* code.
 * On a READWRITE handle a code that means the storage refused also sets
 * the fault state.
 */
int store__db_err(store *s, int rc, sf_err *err, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	const char *msg = s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
	if (s && !s->readonly && fault_of(rc) != STORE_OK)
		set_fault(s, fault_of(rc), msg);
	return sf_err_set(err, code_of(rc), "%s: %s", what, msg);
}

/* The cached statement `id`, prepared (persistent) on first use. */
int store__prep(store *s, enum store__stmt id, sqlite3_stmt **st, sf_err *err)
{
	if (!s->stmt[id]) {
		int rc = sqlite3_prepare_v3(s->db, SQL[id], -1, SQLITE_PREPARE_PERSISTENT,
					    &s->stmt[id], NULL);
		if (rc != SQLITE_OK) {
			*st = NULL;
			int code = store__db_err(s, rc, err, "preparing \"%.60s\"", SQL[id]);
			sqlite3_finalize(s->stmt[id]);
			s->stmt[id] = NULL;
			return code;
		}
	}
	*st = s->stmt[id];
	return 0;
}

/* Resets `st` and clears its bindings. */
void store__done(sqlite3_stmt *st)
{
	if (st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
}

/* Binds `text` (NULL: SQL NULL) as SQLITE_STATIC; see store__done(). */
int store__bind_text(sqlite3_stmt *st, int i, const char *text)
{
	return text ? sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

/* A failed sqlite3_bind_* leaves its code as the connection's error. */
int store__bind_err(store *s, sf_err *err, const char *what)
{
	return store__db_err(s, sqlite3_errcode(s->db), err, "%s: binding a value", what);
}

/* A malloc'ed copy of text column `i`; NULL for SQL NULL or (with *oom set) no memory. */
char *store__col_dup(sqlite3_stmt *st, int i, int *oom)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	const unsigned char *text = sqlite3_column_text(st, i);
	size_t len = (size_t)sqlite3_column_bytes(st, i);
	char *copy = text ? malloc(len + 1) : NULL;
	if (!copy) {
		*oom = 1;
		return NULL;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	return copy;
}

/* Runs the fixed statement `id` (BEGIN, COMMIT, ROLLBACK) to completion. */
static int run_fixed(store *s, enum store__stmt id, sf_err *err, const char *what)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, id, &st, err);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "%s: %s", what, SQL[id]);
	store__done(st);
	return rc;
}

/*
 * The test seam's file (store.h): the fault it asks for, read now. A file
 * that is missing or says anything else asks for none.
 */
static int fault_file_read(const char *path)
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

/* BEGIN IMMEDIATE: the write lock now, or SF_ESYS after busy_timeout. */
int store__begin(store *s, sf_err *err, const char *what)
{
	if (s->fault_file) {
		int want = fault_file_read(s->fault_file);
		if (want != s->simulated)
			store_simulate_fault(s, want, NULL);
	}
	return run_fixed(s, ST_BEGIN, err, what);
}

/* COMMIT, or ROLLBACK and the reported code. */
int store__commit(store *s, sf_err *err, const char *what)
{
	int rc = run_fixed(s, ST_COMMIT, err, what);
	return rc ? store__fail(s, rc) : 0;
}

/* Rolls back what is open (a failing ROLLBACK has nothing to add) and returns `rc`. */
int store__fail(store *s, int rc)
{
	if (!sqlite3_get_autocommit(s->db))
		run_fixed(s, ST_ROLLBACK, NULL, "rolling back");
	return rc;
}

/* Steps a writing statement to SQLITE_DONE and releases it. */
int store__step_write(store *s, sqlite3_stmt *st, sf_err *err, const char *what)
{
	int rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "%s", what);
	store__done(st);
	return rc;
}

/* Reads PRAGMA user_version into *version. */
static int read_version(store *s, int *version, sf_err *err, const char *what)
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

/* ---- opening and migrating ---- */

/*
 * Checks a migration table: names "[folder/]NNNN_name.sql" numbered
 * 1..count in order, text without a NUL inside. Returns 0 or SF_EINVAL.
 */
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
			return sf_err_set(
				err, SF_EINVAL,
				"migration %s: version %d where %zu was expected (numbered "
				"from 0001 without gaps, in order)",
				name, version, i + 1);
		if (!m[i].data || strlen((const char *)m[i].data) != m[i].len)
			return sf_err_set(err, SF_EINVAL,
					  "migration %s: the text is missing or holds a NUL byte",
					  name);
	}
	return 0;
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
static int pragma(store *s, const char *sql, const char *want, const char *path, sf_err *err)
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
		if ((rc & 0xff) != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS)
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
static int check_foreign_keys(store *s, const char *name, sf_err *err)
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
static int migrate(store *s, const sf_embedded *m, size_t count, const char *path, sf_err *err)
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
			rc = sf_err_set(err, code_of(rc), "store_open: migration %s failed: %s",
					m[i].name, msg ? msg : sqlite3_errstr(rc));
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
store *store_open_with(const char *path, int mode, const sf_embedded *migrations, size_t count,
		       sf_err *err)
{
	if (!path || !*path) {
		sf_err_set(err, SF_EINVAL, "store_open: the database path is empty");
		return NULL;
	}
	if (mode != STORE_READWRITE && mode != STORE_READONLY) {
		sf_err_set(err, SF_EINVAL,
			   "store_open: mode %d, allowed %d (read-write) or %d (read-only)", mode,
			   STORE_READWRITE, STORE_READONLY);
		return NULL;
	}
	if (check_migrations(migrations, count, err) != 0)
		return NULL;
	int memory = strcmp(path, ":memory:") == 0;
	if (mode == STORE_READWRITE && !memory && make_parent_dirs(path, err) != 0)
		return NULL;
	store *s = calloc(1, sizeof *s);
	if (!s) {
		sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
		return NULL;
	}
	s->readonly = mode == STORE_READONLY;
	s->latest = (int)count;
	int flags =
		SQLITE_OPEN_NOMUTEX |
		(s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	int rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		store__db_err(s, rc, err, "store_open: opening %s", path);
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
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
	return s;
fail:
	store_close(s);
	return NULL;
}

/* store_open_with() the migrations embedded in the binary (sf_migrations). */
store *store_open(const char *path, int mode, sf_err *err)
{
	return store_open_with(path, mode, sf_migrations, sf_migrations_count, err);
}

/*
 * Finalizes every cached statement and closes the connection (the last
 * connection to close checkpoints the WAL into the database file). NULL is
 * a no-op.
 */
void store_close(store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	for (int i = 0; i < STORE__LIST_CACHE; i++)
		sqlite3_finalize(s->lists[i].stmt);
	/* Every statement is finalized, so the close cannot be refused. */
	sqlite3_close(s->db);
	free(s->fault_file);
	free(s);
}

/* The database's user_version as of the end of store_open; -1 for NULL. */
int store_version(store *s)
{
	return s ? s->version : -1;
}

/* The number of embedded migrations, which are numbered 1..n without gaps. */
int store_latest_version(void)
{
	return (int)sf_migrations_count;
}

/* ---- storage faults ---- */

/* The fault state and its message (store.h); STORE_OK and "" for none or NULL. */
int store_write_fault(const store *s, const char **msg)
{
	if (msg)
		*msg = s && s->fault ? s->fault_msg : "";
	return s ? s->fault : STORE_OK;
}

/* Reads a PRAGMA's one integer into *value. */
static int pragma_int(store *s, const char *sql, long long *value, sf_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*value = sqlite3_column_int64(st, 0);
		rc = 0;
	} else {
		rc = store__db_err(s, rc, err, "store_probe_write: %s", sql);
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * A committed no-op write, then room (store.h). The no-op is the schema
 * version written over itself: it needs the write lock, a journal frame
 * and an fsync, as any write does, and changes nothing a reader sees.
 */
int store_probe_write(store *s, sf_err *err)
{
	if (!s || s->readonly)
		return sf_err_set(err, SF_EINVAL, "store_probe_write: no store, or a READONLY one");
	int rc = store__begin(s, err, "store_probe_write");
	if (rc)
		return rc;
	char sql[40];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", s->version);
	rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return store__fail(s, store__db_err(s, rc, err, "store_probe_write"));
	if ((rc = store__commit(s, err, "store_probe_write")) != 0)
		return rc;
	long long pages = 0, max_pages = 0;
	if ((rc = pragma_int(s, "PRAGMA page_count", &pages, err)) != 0 ||
	    (rc = pragma_int(s, "PRAGMA max_page_count", &max_pages, err)) != 0)
		return rc;
	if (pages >= max_pages) {
		rc = sf_err_set(err, SF_ESYS,
				"store_probe_write: database or disk is full: the database is at "
				"its page limit (%lld pages)",
				max_pages);
		set_fault(s, STORE_FULL, err ? err->msg : "database or disk is full");
		return rc;
	}
	const char *path = sqlite3_db_filename(s->db, "main");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s", path && *path ? path : ".");
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else
		slash[slash == dir] = '\0'; /* "/db" keeps its "/" */
	struct statvfs vfs;
	if (path && *path && statvfs(dir, &vfs) == 0 &&
	    (unsigned long long)vfs.f_bavail * vfs.f_frsize < STORE_MIN_FREE_BYTES) {
		rc = sf_err_set(err, SF_ESYS,
				"store_probe_write: database or disk is full: %llu bytes free "
				"on the file system of %s, fewer than %d",
				(unsigned long long)vfs.f_bavail * vfs.f_frsize, dir,
				STORE_MIN_FREE_BYTES);
		set_fault(s, STORE_FULL, err ? err->msg : "database or disk is full");
		return rc;
	}
	s->fault = STORE_OK;
	s->fault_msg[0] = '\0';
	return 0;
}

/* Simulates `fault` with SQLite's page limit and query_only (store.h). */
int store_simulate_fault(store *s, int fault, sf_err *err)
{
	if (!s || s->readonly)
		return sf_err_set(err, SF_EINVAL,
				  "store_simulate_fault: no store, or a READONLY one");
	if (fault != STORE_OK && fault != STORE_FULL && fault != STORE_UNWRITABLE)
		return sf_err_set(err, SF_EINVAL, "store_simulate_fault: fault %d, allowed %d..%d",
				  fault, STORE_OK, STORE_UNWRITABLE);
	/* 1 is below any database's size, so SQLite sets the limit to the size. */
	char sql[80];
	snprintf(sql, sizeof sql, "PRAGMA query_only = %d; PRAGMA max_page_count = %lld",
		 fault == STORE_UNWRITABLE, fault == STORE_FULL ? 1LL : s->max_pages);
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return store__db_err(s, rc, err, "store_simulate_fault");
	s->simulated = fault;
	return 0;
}

/* ---- the evaluation cache ---- */

/*
 * Sets *doc to a malloc'ed copy of the cached evaluation of (lattice,
 * sequence), or NULL on a miss; returns 0 either way, or an SF_E* code
 * (then *doc is NULL). Reads only: fine on a READONLY handle.
 */
int store_get_evaluation(store *s, const char *lattice, const char *sequence, char **doc,
			 sf_err *err)
{
	if (doc)
		*doc = NULL;
	if (!s || !lattice || !sequence || !doc)
		return sf_err_set(err, SF_EINVAL,
				  "store_get_evaluation: no store, lattice, sequence or doc");
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_EVAL_GET, &st, err);
	if (rc)
		return rc;
	if (store__bind_text(st, 1, lattice) || store__bind_text(st, 2, sequence)) {
		rc = store__bind_err(s, err, "store_get_evaluation");
		store__done(st);
		return rc;
	}
	int oom = 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*doc = store__col_dup(st, 0, &oom);
		rc = oom ? sf_err_set(err, SF_ENOMEM, "store_get_evaluation: out of memory") : 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "store_get_evaluation");
	}
	store__done(st);
	return rc;
}

/*
 * Stores `doc` as the evaluation of (lattice, sequence), replacing an
 * earlier entry, in one committed transaction. Fails (nothing written) on
 * a READONLY handle.
 */
int store_put_evaluations(store *s, const store_evaluation *evals, size_t n, sf_err *err)
{
	if (!s || (n && !evals))
		return sf_err_set(err, SF_EINVAL, "store_put_evaluations: no store or evaluations");
	if (!n)
		return 0;
	int rc = store__begin(s, err, "store_put_evaluations");
	if (rc)
		return rc;
	int64_t now = store__now_ms();
	for (size_t i = 0; i < n; i++) {
		const store_evaluation *e = &evals[i];
		if (!e->lattice || !e->sequence || !e->doc) {
			sf_err_set(err, SF_EINVAL,
				   "store_put_evaluations: entry %zu lacks lattice, "
				   "sequence or doc",
				   i);
			return store__fail(s, SF_EINVAL);
		}
		sqlite3_stmt *st;
		if ((rc = store__prep(s, ST_EVAL_PUT, &st, err)) != 0)
			return store__fail(s, rc);
		if (store__bind_text(st, 1, e->lattice) || store__bind_text(st, 2, e->sequence) ||
		    store__bind_text(st, 3, e->doc) || sqlite3_bind_int64(st, 4, now)) {
			rc = store__bind_err(s, err, "store_put_evaluations");
			store__done(st);
			return store__fail(s, rc);
		}
		if ((rc = store__step_write(s, st, err, "store_put_evaluations")) != 0)
			return store__fail(s, rc);
	}
	return store__commit(s, err, "store_put_evaluations");
}

int store_put_evaluation(store *s, const char *lattice, const char *sequence, const char *doc,
			 sf_err *err)
{
	if (!s || !lattice || !sequence || !doc)
		return sf_err_set(err, SF_EINVAL,
				  "store_put_evaluation: no store, lattice, sequence or doc");
	store_evaluation e = { lattice, sequence, doc };
	return store_put_evaluations(s, &e, 1, err);
}
