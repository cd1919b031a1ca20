/*
 * store_sqlite.c - the SQLite back end of store.h: the connection's
 * statements and helpers, transactions and batches, storage faults, the
 * evaluation cache, and the table of functions store.c calls
 * (store_sqlite_ops). Opening, migrating and closing are in
 * store_sqlite_open.c, jobs and levels in store_sqlite_jobs.c, uploaded
 * resources in store_sqlite_resources.c, the one-process lock in
 * store_sqlite_lock.c; the internals they share, in store_sqlite.h.
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
 * HTTP layer has acknowledged survives a power cut. Outside a batch, each
 * public function that writes is one transaction and commits before it returns, or rolls
 * back and reports; nothing is left open between calls.
 *
 * Batches (store.h, store_batch_begin()): one BEGIN IMMEDIATE ... COMMIT
 * around many calls, for one fsync. store__begin(), store__commit() and
 * store__fail() are where every writing call opens, ends and abandons its
 * transaction, so they alone know about batches: inside one they open,
 * release and roll back to a savepoint ("sf_call") instead, and the calls
 * themselves are unchanged. A storage fault inside a batch (store__db_err()
 * marks it) or a transaction SQLite rolled back on its own loses the whole
 * batch at once (batch_check_lost()), never a part of it.
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
 * fault (store_simulate_fault()) sits in store__begin() and
 * sq_batch_begin(), before every writing transaction (a batch is one).
 */
#include "store_sqlite.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

/* Sets a job back to queued without a trace of its run, its lease included. */
#define REQUEUE_SET                                                                           \
	"state = 'queued', started_ms = NULL, generation = 0, generations = 0, best = NULL, " \
	"lease_owner = NULL, lease_until = NULL"

/*
 * store_job_requeue(): REQUEUE_SET, but a job whose cancel was requested
 * becomes cancelled at ?2 (store.h): queued, nobody would claim it.
 */
#define REQUEUE_OR_CANCEL_SET                                                                  \
	"state = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'queued' END, "              \
	"finished_ms = CASE WHEN cancel_requested THEN ?2 END, started_ms = NULL, "            \
	"generation = 0, generations = 0, best = NULL, lease_owner = NULL, lease_until = NULL"

/* What store_rescue_expired() makes of an expired job ?1 = now, ?2 = max_lost (store.h). */
#define RESCUE_FINAL "(cancel_requested OR lost + 1 >= ?2)"
#define RESCUE_SET                                                                             \
	"lost = lost + 1, state = CASE WHEN cancel_requested THEN 'cancelled' "                \
	"WHEN lost + 1 >= ?2 THEN 'failed' ELSE 'queued' END, "                                \
	"finished_ms = CASE WHEN " RESCUE_FINAL " THEN ?1 END, "                               \
	"error = CASE WHEN NOT cancel_requested AND lost + 1 >= ?2 THEN "                      \
	"'the job lost its node ' || CAST(lost + 1 AS TEXT) || "                               \
	"' times (its lease expired each time); it is not retried' END, "                      \
	"started_ms = CASE WHEN " RESCUE_FINAL " THEN started_ms END, "                        \
	"generation = CASE WHEN " RESCUE_FINAL " THEN generation ELSE 0 END, "                 \
	"generations = CASE WHEN " RESCUE_FINAL " THEN generations ELSE 0 END, "               \
	"best = CASE WHEN " RESCUE_FINAL " THEN best END, lease_owner = NULL, lease_until = NULL"

/*
 * Every fixed statement. Job listings bind ?1 = before, ?2 = limit,
 * ?3 = state, ?4 = kind; transitions bind ?1 = id, ?2 = now and ?3 = the
 * text they record, as far as they have them.
 */
static const char *const SQL[ST__COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SAVEPOINT] = "SAVEPOINT sf_call",
	[ST_RELEASE] = "RELEASE sf_call",
	[ST_ROLLBACK_TO] = "ROLLBACK TO sf_call",
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
	[ST_JOB_STATE] = "SELECT state, lease_owner, attempt FROM jobs WHERE id = ?1",
	[ST_JOB_START] = "UPDATE jobs SET state = 'running', started_ms = ?2 WHERE id = ?1",
	[ST_JOB_PROGRESS] = "UPDATE jobs SET generation = ?2, generations = ?3, best = ?4 "
			    "WHERE id = ?1",
	[ST_JOB_SUCCEED] = "UPDATE jobs SET state = 'succeeded', finished_ms = ?2, level_ids = ?3, "
			   "lease_owner = NULL, lease_until = NULL WHERE id = ?1",
	[ST_JOB_FAIL] = "UPDATE jobs SET state = 'failed', finished_ms = ?2, error = ?3, "
			"lease_owner = NULL, lease_until = NULL WHERE id = ?1",
	[ST_JOB_CANCEL] = "UPDATE jobs SET state = 'cancelled', finished_ms = ?2, "
			  "lease_owner = NULL, lease_until = NULL WHERE id = ?1",
	[ST_JOB_REQUEUE] = "UPDATE jobs SET " REQUEUE_OR_CANCEL_SET " WHERE id = ?1",
	[ST_JOB_EXISTS] = "SELECT 1 FROM jobs WHERE id = ?1",
	/* ?1 owner, ?2 now, ?3 lease_ms; the partial index jobs_queued gives the oldest. */
	[ST_JOB_CLAIM] = "UPDATE jobs SET state = 'running', attempt = attempt + 1, "
			 "lease_owner = ?1, lease_until = ?2 + ?3, started_ms = ?2, generation = 0, "
			 "generations = 0, best = NULL WHERE seq = (SELECT seq FROM jobs "
			 "WHERE state = 'queued' AND NOT cancel_requested ORDER BY seq LIMIT 1) "
			 "RETURNING " STORE__JOB_COLS,
	/* ?1 id, ?2 owner, ?3 attempt (the fence), ?4 now, ?5 lease_ms, then the progress. */
	[ST_JOB_HEARTBEAT] = "UPDATE jobs SET lease_until = ?4 + ?5, generation = ?6, "
			     "generations = ?7, best = ?8 WHERE id = ?1 AND state = 'running' "
			     "AND lease_owner = ?2 AND attempt = ?3 RETURNING cancel_requested",
	/* ?1 now, ?2 max_lost, ?3 cap; the partial index jobs_lease gives the oldest lease. */
	[ST_JOB_RESCUE] = "UPDATE jobs SET " RESCUE_SET " WHERE seq IN (SELECT seq FROM jobs "
			  "WHERE state = 'running' AND lease_until < ?1 ORDER BY lease_until "
			  "LIMIT ?3) RETURNING id, state, attempt, lost, kind, seed",
	/* ?1 id, ?2 now: queued -> cancelled, running -> cancel_requested. */
	[ST_JOB_REQUEST_CANCEL] =
		"UPDATE jobs SET state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END, "
		"finished_ms = CASE WHEN state = 'queued' THEN ?2 ELSE finished_ms END, "
		"cancel_requested = CASE WHEN state = 'running' THEN 1 ELSE cancel_requested END "
		"WHERE id = ?1 AND state IN ('queued', 'running') RETURNING state",
	[ST_PENDING_CANCEL] = "UPDATE jobs SET state = 'cancelled', finished_ms = ?1, "
			      "lease_owner = NULL, lease_until = NULL "
			      "WHERE state IN ('queued', 'running') AND cancel_requested",
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
	/* A put is ST_EVAL_REPLACE, then ST_EVAL_PUT when it changed no row
	 * (so the store counts its new entries); ?5 is the entry's tick. */
	[ST_EVAL_PUT] = "INSERT INTO evaluations (lattice, sequence, doc, created_ms, used) "
			"VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_EVAL_REPLACE] = "UPDATE evaluations SET doc = ?3, created_ms = ?4, used = ?5 "
			    "WHERE lattice = ?1 AND sequence = ?2",
	[ST_EVAL_TOUCH] = "UPDATE evaluations SET used = ?3 WHERE lattice = ?1 AND sequence = ?2",
	[ST_EVAL_STATS] = "SELECT entries, evictions, clock FROM evaluation_cache WHERE one = 1",
	[ST_EVAL_COUNT] = "UPDATE evaluation_cache SET entries = entries + ?1, "
			  "evictions = evictions + ?2, clock = clock + ?3 WHERE one = 1",
	/* ?1 how many; the index evaluations_used gives the least recently used. */
	[ST_EVAL_EVICT] = "DELETE FROM evaluations WHERE rowid IN "
			  "(SELECT rowid FROM evaluations ORDER BY used LIMIT ?1)",
	/* A name is taken for good: the first upload wins, a second changes nothing. */
	[ST_RES_PUT] = "INSERT INTO resources (type, name, format, body, summary, created) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (type, name) DO NOTHING",
	[ST_RES_GET] = "SELECT format, body FROM resources WHERE type = ?1 AND name = ?2",
	/* The body only where there is no summary (a row from before 0004). */
	[ST_RES_LIST] = "SELECT seq, name, format, summary, "
			"CASE WHEN summary IS NULL THEN body END, created FROM resources "
			"WHERE type = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3",
	/* An event id stored before keeps its first data (a rerun reports it again). */
	[ST_EVENT_INSERT] = "INSERT INTO job_events (job_id, id, data) VALUES (?1, ?2, ?3) "
			    "ON CONFLICT (job_id, id) DO NOTHING",
	/* ?1 job, ?2 after, ?3 cap: the primary key (job_id, id) gives them in order. */
	[ST_EVENTS_GET] = "SELECT id, data FROM job_events WHERE job_id = ?1 AND id > ?2 "
			  "ORDER BY id LIMIT ?3",
	/* ?1 the cutoff (Unix ms): from the events' side, so the cost follows the
	 * events kept (few: this keeps them so), not the jobs ever run. */
	[ST_EVENTS_PRUNE] = "DELETE FROM job_events WHERE job_id IN (SELECT DISTINCT e.job_id "
			    "FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.state IN "
			    "('succeeded', 'failed', 'cancelled') AND j.finished_ms < ?1)",
};

/* ---- helpers (contracts in store_sqlite.h) ---- */

/* Unix milliseconds from CLOCK_REALTIME: what the jobs' *_ms columns hold. */
int64_t store__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The SF_E* code for an SQLite result code. */
int store__code_of(int rc)
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
static void set_fault(sq_store *s, int fault, const char *msg)
{
	s->fault = fault;
	snprintf(s->fault_msg, sizeof s->fault_msg, "%s", msg);
}

/*
 * Records what was being done and SQLite's message; returns the SF_E* code.
 * On a READWRITE handle a code that means the storage refused also sets
 * the fault state.
 */
int store__db_err(sq_store *s, int rc, sf_err *err, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	const char *msg = s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
	if (s && !s->readonly && fault_of(rc) != STORE_OK) {
		set_fault(s, fault_of(rc), msg);
		/* Inside a batch the storage's refusal loses the batch (store.h). */
		if (s->batch && !s->doomed) {
			s->doomed = 1;
			snprintf(s->lost_msg, sizeof s->lost_msg, "%.120s: %.120s", what, msg);
		}
	}
	return sf_err_set(err, store__code_of(rc), "%s: %s", what, msg);
}

/* The cached statement `id`, prepared (persistent) on first use. */
int store__prep(sq_store *s, enum store__stmt id, sqlite3_stmt **st, sf_err *err)
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
int store__bind_err(sq_store *s, sf_err *err, const char *what)
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
static int run_fixed(sq_store *s, enum store__stmt id, sf_err *err, const char *what)
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

static int simulate_fault(sq_store *s, int fault, sf_err *err);

/* The test seam's file, read before every write transaction (store.h). */
static void fault_file_apply(sq_store *s)
{
	if (s->fault_file) {
		int want = store__fault_file_read(s->fault_file);
		if (want != s->simulated)
			simulate_fault(s, want, NULL);
	}
}

/*
 * Inside a batch whose transaction a failure of the storage has ended: the
 * batch is lost (store.h), so rolls back what SQLite left open and notes
 * it, once. Returns whether the batch is lost.
 */
static int batch_check_lost(sq_store *s, const char *why)
{
	if (!s->batch || s->lost)
		return s->lost;
	if (!sqlite3_get_autocommit(s->db) && !s->doomed)
		return 0;
	s->lost = 1;
	s->call = 0;
	if (!s->doomed)
		snprintf(s->lost_msg, sizeof s->lost_msg, "%s", why);
	if (!sqlite3_get_autocommit(s->db))
		run_fixed(s, ST_ROLLBACK, NULL, "rolling back the batch");
	return 1;
}

/*
 * BEGIN IMMEDIATE: the write lock now, or SF_ESYS after busy_timeout.
 * Inside a batch, the call's savepoint instead (the batch holds the lock),
 * or SF_ESYS when the batch is lost.
 */
int store__begin(sq_store *s, sf_err *err, const char *what)
{
	if (!s->batch) {
		fault_file_apply(s);
		return run_fixed(s, ST_BEGIN, err, what);
	}
	if (batch_check_lost(s, "SQLite ended the transaction"))
		return sf_err_set(err, SF_ESYS, "%s: the batch was rolled back after: %s", what,
				  s->lost_msg);
	int rc = run_fixed(s, ST_SAVEPOINT, err, what);
	if (rc) {
		batch_check_lost(s, err ? err->msg : "a savepoint failed");
		return rc;
	}
	s->call = 1;
	return 0;
}

/*
 * COMMIT, or ROLLBACK and the reported code. Inside a batch, releases the
 * call's savepoint: its writes join the batch, durable only when the batch
 * commits.
 */
int store__commit(sq_store *s, sf_err *err, const char *what)
{
	int rc = run_fixed(s, s->batch ? ST_RELEASE : ST_COMMIT, err, what);
	if (!rc)
		s->call = 0;
	return rc ? store__fail(s, rc) : 0;
}

/*
 * Rolls back what is open (a failing ROLLBACK has nothing to add) and
 * returns `rc`. Inside a batch: rolls back to the call's savepoint, so the
 * call changed nothing and the batch goes on; unless the storage failed,
 * which loses the whole batch (batch_check_lost()).
 */
int store__fail(sq_store *s, int rc)
{
	if (!s->batch) {
		if (!sqlite3_get_autocommit(s->db))
			run_fixed(s, ST_ROLLBACK, NULL, "rolling back");
		return rc;
	}
	if (batch_check_lost(s, sqlite3_errmsg(s->db)) || !s->call)
		return rc;
	if (run_fixed(s, ST_ROLLBACK_TO, NULL, "rolling back a call") == 0 &&
	    run_fixed(s, ST_RELEASE, NULL, "rolling back a call") == 0)
		s->call = 0;
	else
		batch_check_lost(s, sqlite3_errmsg(s->db));
	return rc;
}

/* Steps a writing statement to SQLITE_DONE and releases it. */
int store__step_write(sq_store *s, sqlite3_stmt *st, sf_err *err, const char *what)
{
	int rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : store__db_err(s, rc, err, "%s", what);
	store__done(st);
	return rc;
}

/* ---- storage faults ---- */

/* The fault state and its message (store.h); STORE_OK and "" for none. */
static int sq_write_fault(const store *base, const char **msg)
{
	const sq_store *s = (const sq_store *)base;
	if (msg)
		*msg = s->fault ? s->fault_msg : "";
	return s->fault;
}

/* Reads a PRAGMA's one integer into *value. */
static int pragma_int(sq_store *s, const char *sql, long long *value, sf_err *err)
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
static int store_sqlite_probe_write(store *base, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (!s || s->readonly)
		return sf_err_set(err, SF_EINVAL, "store_probe_write: no store, or a READONLY one");
	if (s->batch)
		return sf_err_set(err, SF_EINVAL,
				  "store_probe_write: not inside a batch (store_batch_begin())");
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
static int store_sqlite_simulate_fault(store *base, int fault, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (s && s->batch)
		return sf_err_set(err, SF_EINVAL,
				  "store_simulate_fault: not inside a batch (store_batch_begin())");
	return simulate_fault(s, fault, err);
}

/* store_sqlite_simulate_fault() less the batch check: also the seam's file's way in. */
static int simulate_fault(sq_store *s, int fault, sf_err *err)
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
static int store_sqlite_get_evaluation(store *base, const char *lattice, const char *sequence,
				       char **doc, sf_err *err)
{
	sq_store *s = (sq_store *)base;
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

/* Reads the cache's counters (evaluation_cache's one row). */
static int eval_stats(sq_store *s, int64_t *entries, int64_t *evictions, int64_t *clock,
		      sf_err *err, const char *what)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_EVAL_STATS, &st, err);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*entries = sqlite3_column_int64(st, 0);
		*evictions = sqlite3_column_int64(st, 1);
		*clock = sqlite3_column_int64(st, 2);
		rc = 0;
	} else {
		rc = store__db_err(s, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, err,
				   "%s: the evaluation cache's counters", what);
	}
	store__done(st);
	return rc;
}

/* Adds to the counters: entries (may be negative), evictions, ticks of the clock. */
static int eval_count(sq_store *s, int64_t entries, int64_t evictions, int64_t ticks, sf_err *err,
		      const char *what)
{
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_EVAL_COUNT, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, entries) || sqlite3_bind_int64(st, 2, evictions) ||
	    sqlite3_bind_int64(st, 3, ticks)) {
		rc = store__bind_err(s, err, what);
		store__done(st);
		return rc;
	}
	return store__step_write(s, st, err, what);
}

/*
 * Inside a write transaction: evicts the least recently used entries above
 * s->base.eval_max, given `entries` now, and counts them. *evicted (may be
 * NULL) receives how many.
 */
static int eval_evict(sq_store *s, int64_t entries, int64_t *evicted, sf_err *err, const char *what)
{
	int64_t max = s->base.eval_max, n = max && entries > max ? entries - max : 0;
	if (evicted)
		*evicted = 0;
	if (!n)
		return 0;
	sqlite3_stmt *st;
	int rc = store__prep(s, ST_EVAL_EVICT, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, n)) {
		rc = store__bind_err(s, err, what);
		store__done(st);
		return rc;
	}
	if ((rc = store__step_write(s, st, err, what)) != 0)
		return rc;
	n = sqlite3_changes64(s->db);
	if (evicted)
		*evicted = n;
	return eval_count(s, -n, n, 0, err, what);
}

/*
 * Writes entry `e` as used at `tick`: the existing row replaced, or a new
 * one inserted (*added set). `touch`: only the tick, and no insert.
 */
static int eval_write(sq_store *s, const store_evaluation *e, int touch, int64_t now, int64_t tick,
		      int *added, sf_err *err, const char *what)
{
	*added = 0;
	sqlite3_stmt *st;
	int rc = store__prep(s, touch ? ST_EVAL_TOUCH : ST_EVAL_REPLACE, &st, err);
	if (rc)
		return rc;
	int bad = store__bind_text(st, 1, e->lattice) || store__bind_text(st, 2, e->sequence);
	if (touch)
		bad = bad || sqlite3_bind_int64(st, 3, tick);
	else
		bad = bad || store__bind_text(st, 3, e->doc) || sqlite3_bind_int64(st, 4, now) ||
		      sqlite3_bind_int64(st, 5, tick);
	if (bad) {
		rc = store__bind_err(s, err, what);
		store__done(st);
		return rc;
	}
	if ((rc = store__step_write(s, st, err, what)) != 0 || touch ||
	    sqlite3_changes64(s->db) > 0)
		return rc;
	if ((rc = store__prep(s, ST_EVAL_PUT, &st, err)) != 0)
		return rc;
	if (store__bind_text(st, 1, e->lattice) || store__bind_text(st, 2, e->sequence) ||
	    store__bind_text(st, 3, e->doc) || sqlite3_bind_int64(st, 4, now) ||
	    sqlite3_bind_int64(st, 5, tick)) {
		rc = store__bind_err(s, err, what);
		store__done(st);
		return rc;
	}
	if ((rc = store__step_write(s, st, err, what)) == 0)
		*added = 1;
	return rc;
}

/*
 * Puts (or, `touch`, marks used) evals[0..n-1] in one transaction: each
 * takes the clock's next tick; then the entries above the bound go.
 * Fails (nothing written) on a READONLY handle.
 */
static int eval_write_all(sq_store *s, const store_evaluation *evals, size_t n, int touch,
			  const char *what, sf_err *err)
{
	int rc = store__begin(s, err, what);
	if (rc)
		return rc;
	int64_t entries, evictions, clock, now = store__now_ms(), added = 0;
	if ((rc = eval_stats(s, &entries, &evictions, &clock, err, what)) != 0)
		return store__fail(s, rc);
	for (size_t i = 0; i < n; i++) {
		int one;
		if ((rc = eval_write(s, &evals[i], touch, now, clock + 1 + (int64_t)i, &one, err,
				     what)))
			return store__fail(s, rc);
		added += one;
	}
	if ((rc = eval_count(s, added, 0, (int64_t)n, err, what)) != 0 ||
	    (rc = eval_evict(s, entries + added, NULL, err, what)) != 0)
		return store__fail(s, rc);
	return store__commit(s, err, what);
}

/*
 * Stores `doc` as the evaluation of (lattice, sequence), replacing an
 * earlier entry, in one committed transaction (store.h).
 */
static int store_sqlite_put_evaluations(store *base, const store_evaluation *evals, size_t n,
					sf_err *err)
{
	return eval_write_all((sq_store *)base, evals, n, 0, "store_put_evaluations", err);
}

static int store_sqlite_touch_evaluations(store *base, const store_evaluation *keys, size_t n,
					  sf_err *err)
{
	return eval_write_all((sq_store *)base, keys, n, 1, "store_touch_evaluations", err);
}

static int store_sqlite_trim_evaluations(store *base, int64_t *evicted, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	const char *what = "store_limit_evaluations";
	int rc = store__begin(s, err, what);
	if (rc)
		return rc;
	int64_t entries, evictions, clock;
	if ((rc = eval_stats(s, &entries, &evictions, &clock, err, what)) != 0 ||
	    (rc = eval_evict(s, entries, evicted, err, what)) != 0)
		return store__fail(s, rc);
	return store__commit(s, err, what);
}

static int store_sqlite_evaluation_stats(store *base, int64_t *entries, int64_t *evictions,
					 sf_err *err)
{
	int64_t clock;
	return eval_stats((sq_store *)base, entries, evictions, &clock, err,
			  "store_evaluation_stats");
}

/* ---- batches (store.h, store_batch_begin()) ---- */

/*
 * Opens the batch's transaction with BEGIN IMMEDIATE (the write lock for
 * the whole batch); the calls inside it run as savepoints (store__begin()).
 * The fault seam's file is read here, once per batch, as it is before any
 * other write transaction.
 */
static int sq_batch_begin(store *base, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (s->readonly)
		return sf_err_set(err, SF_EINVAL,
				  "store_batch_begin: a READONLY handle cannot write");
	if (s->batch)
		return sf_err_set(
			err, SF_EINVAL,
			"store_batch_begin: a batch is open already (batches do not nest)");
	fault_file_apply(s);
	int rc = run_fixed(s, ST_BEGIN, err, "store_batch_begin");
	if (rc)
		return rc;
	s->batch = 1;
	s->call = s->doomed = s->lost = 0;
	s->lost_msg[0] = '\0';
	return 0;
}

/*
 * Ends the batch: COMMIT (commit != 0) or ROLLBACK. A COMMIT that fails is
 * followed by a ROLLBACK where SQLite has not rolled back already, so
 * nothing of the batch stays; store__db_err() has set the fault state
 * when the storage refused. A batch lost earlier only reports.
 */
static int sq_batch_end(store *base, int commit, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (!s->batch)
		return sf_err_set(err, SF_EINVAL, "store_batch_end: no batch is open");
	int rc = 0;
	if (batch_check_lost(s, "SQLite ended the transaction")) {
		if (commit)
			rc = sf_err_set(err, SF_ESYS,
					"store_batch_end: nothing of the batch was recorded: it "
					"was rolled back after: %s",
					s->lost_msg);
	} else if (!commit) {
		rc = run_fixed(s, ST_ROLLBACK, err, "store_batch_end");
	} else if ((rc = run_fixed(s, ST_COMMIT, err, "store_batch_end: committing the batch"))) {
		if (!sqlite3_get_autocommit(s->db))
			run_fixed(s, ST_ROLLBACK, NULL, "rolling back the batch");
		if (rc != SF_ENOMEM)
			rc = err ? (err->code = SF_ESYS) : SF_ESYS;
	}
	s->batch = s->call = s->doomed = s->lost = 0;
	s->lost_msg[0] = '\0';
	return rc;
}

/* ---- the table store.c calls through ---- */

const struct store_ops store_sqlite_ops = {
	.name = "sqlite",
	.close = store_sqlite_close,
	.version = store_sqlite_version,
	.latest_version = store_sqlite_latest_version,
	.insert_job = store_sqlite_insert_job,
	.get_job = store_sqlite_get_job,
	.list_jobs = store_sqlite_list_jobs,
	.job_started = store_sqlite_job_started,
	.job_progress = store_sqlite_job_progress,
	.job_succeeded = store_sqlite_job_succeeded,
	.job_failed = store_sqlite_job_failed,
	.job_cancelled = store_sqlite_job_cancelled,
	.job_requeue = store_sqlite_job_requeue,
	.claim_job = store_sqlite_claim_job,
	.job_heartbeat = store_sqlite_job_heartbeat,
	.rescue_expired = store_sqlite_rescue_expired,
	.prune_job_events = store_sqlite_prune_job_events,
	.request_cancel = store_sqlite_request_cancel,
	.append_job_events = store_sqlite_append_job_events,
	.job_events = store_sqlite_job_events,
	.pending_jobs = store_sqlite_pending_jobs,
	.count_jobs = store_sqlite_count_jobs,
	.get_level = store_sqlite_get_level,
	.list_levels = store_sqlite_list_levels,
	.get_evaluation = store_sqlite_get_evaluation,
	.put_evaluations = store_sqlite_put_evaluations,
	.touch_evaluations = store_sqlite_touch_evaluations,
	.trim_evaluations = store_sqlite_trim_evaluations,
	.evaluation_stats = store_sqlite_evaluation_stats,
	.put_resource = store_sqlite_put_resource,
	.get_resource = store_sqlite_get_resource,
	.list_resources = store_sqlite_list_resources,
	.write_fault = sq_write_fault,
	.probe_write = store_sqlite_probe_write,
	.simulate_fault = store_sqlite_simulate_fault,
	.batch_begin = sq_batch_begin,
	.batch_end = sq_batch_end,
	.lock_exclusive = store_sqlite_lock_exclusive,
	.checkpoint_in_background = store_sqlite_checkpoint_in_background,
	.background_checkpoints = store_sqlite_background_checkpoints,
};
