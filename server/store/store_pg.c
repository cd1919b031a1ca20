/*
 * store_pg.c - the PostgreSQL back end of store.h, on libpq: the whole
 * store contract with the semantics of the SQLite back end
 * (store_sqlite*.c), so that the layers above cannot tell them apart.
 * This file holds the connection, calls and batches, opening and
 * migrating, storage faults and the table of functions; jobs, levels,
 * the evaluation cache and resources are in store_pg_jobs.c; what the two
 * share, in store_pg_int.h.
 *
 * One store is one libpq connection, used by one thread, as with SQLite.
 * Every call is a round trip or a few on that connection; nothing is left
 * open between calls (no transaction, no cursor). A connection that was
 * lost (the server restarted, a network cut) is reset once at the start of
 * the next call and its session settings applied again; a server that
 * ended the session while it was idle (a restart) has said so on the
 * socket, which each call reads first, so a restart between calls costs
 * no failed call. A call that loses its connection mid-flight fails with
 * SF_ESYS (whether a write in flight was committed cannot be known).
 *
 * SQL text is fixed: values only ever reach the server as parameters of
 * PQexecParams (the unnamed statement, so each is planned with the values
 * known). Level listings differ in shape (a kind or not, which filters);
 * their text is assembled from fixed fragments and parameter numbers only.
 * Batches (a level's tags, a search's evaluations) travel as one array
 * parameter each and are unnested by the server: one round trip, not one
 * per row. The only SQL not fixed is the migration steps' text, which is
 * compiled into the binary, and the CREATE SCHEMA of store_pg_open(), whose
 * name is quoted with PQescapeIdentifier.
 *
 * Atomicity: a call that changes one row is one statement (autocommit); a
 * job transition is a single UPDATE ... WHERE state IN (the allowed
 * states), which is atomic under concurrency: of a cancel and a finishing
 * worker racing on two nodes, exactly one wins and the other gets
 * SF_ERANGE. Only when the UPDATE matched nothing does a second statement
 * read the state, to say why. Calls that write several rows (a job with
 * its Idempotency-Key, a success with its levels) are one transaction,
 * rolled back whole on any failure: a failed call has changed nothing.
 *
 * Batches (store.h, store_batch_begin()): one transaction, and inside it
 * every call is a savepoint (SAVEPOINT, then RELEASE, or ROLLBACK TO when
 * the call fails), since a failed statement aborts a PostgreSQL
 * transaction whole. A failure of the storage or of the connection rolls
 * the whole batch back at once, and its later writes are refused.
 *
 * Time: every *_ms column is stamped by the DATABASE's clock
 * (clock_timestamp(), Unix ms), never a node's, so nodes whose clocks
 * disagree still agree on the order of events and on leases.
 *
 * Storage faults (store.h): SQLSTATE 53100 (disk_full) puts a READWRITE
 * store in STORE_FULL, 25006 (read_only_sql_transaction: a standby after a
 * failover, default_transaction_read_only) in STORE_UNWRITABLE; the state
 * is sticky until store_probe_write() commits a real write. A connection
 * lost and not made again (the server down or restarting: no result, or
 * SQLSTATE classes 08 and 57P) puts any handle in STORE_UNAVAILABLE until
 * a call reconnects.
 *
 * Migrations (migrations/postgres/README.md): schema_migrations holds one
 * row per applied step (PostgreSQL's counterpart of PRAGMA user_version);
 * the store creates it, and the schema itself when missing, before the
 * first step. Each step runs in its own transaction that first takes a
 * transaction-level advisory lock keyed by the schema's name and re-reads
 * the version, so nodes starting together wait for one another and each
 * step is applied once. DDL is transactional in PostgreSQL, so a failing
 * step rolls back whole, version included.
 */
#include "store_pg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_pg_int.h"

/* The advisory lock's first key ("SFor"); the second is hashtext(schema). */
#define MIGRATION_LOCK "1397124978"

/* How long a statement waits for a row or table lock before SF_ESYS, as SQLite's busy_timeout. */
#define LOCK_TIMEOUT "5s"

/* ---- errors and faults ---- */

static void set_fault(store_pg *p, int fault, const char *msg)
{
	p->fault = fault;
	snprintf(p->fault_msg, sizeof p->fault_msg, "%s", msg);
}

/*
 * Records what was being done (printf-style) and the server's message for
 * the failed result `res` (NULL: the connection's message), and returns
 * the SF_E* code: SF_EINVAL for a constraint or a value the server refused
 * (classes 23 and 22), SF_ESYS for everything else. On a READWRITE handle
 * SQLSTATE 53100 and 25006 also set the fault state.
 */
static int db_err(store_pg *p, const PGresult *res, sf_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int db_err(store_pg *p, const PGresult *res, sf_err *err, const char *fmt, ...)
{
	char what[200], msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	/* A constraint's detail names the row ("Key (level_id, name)=(L7, length) ..."). */
	const char *detail = state && !strncmp(state, "23", 2)
				     ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL)
				     : NULL;
	snprintf(msg, sizeof msg, "%s%s%s",
		 primary   ? primary
		 : p->conn ? PQerrorMessage(p->conn)
			   : "",
		 detail ? ": " : "", detail ? detail : "");
	msg[strcspn(msg, "\n")] = '\0'; /* libpq's connection messages run on for lines */
	if (!*msg)
		snprintf(msg, sizeof msg, "the connection to PostgreSQL failed");
	int code = state && (!strncmp(state, "23", 2) || !strncmp(state, "22", 2)) ? SF_EINVAL
										   : SF_ESYS;
	int fault = !state                    ? STORE_OK
		    : !strcmp(state, "53100") ? STORE_FULL
		    : !strcmp(state, "25006") ? STORE_UNWRITABLE
					      : STORE_OK;
	int lost = (state && !strncmp(state, "08", 2)) || (state && !strncmp(state, "57P", 3)) ||
		   !p->conn || PQstatus(p->conn) != CONNECTION_OK;
	if (!p->readonly && fault != STORE_OK)
		set_fault(p, fault, msg);
	else if (lost && p->fault == STORE_OK)
		set_fault(p, STORE_UNAVAILABLE, msg);
	if (fault != STORE_OK || lost)
		p->hard = 1;
	return sf_err_set(err, code, "%s: %s", what, msg);
}

/* True when the failed result `res` is SQLSTATE `state`. */
int store_pg__is_state(const PGresult *res, const char *state)
{
	const char *got = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	return got && !strcmp(got, state);
}

/*
 * Runs `sql` with the text parameters params[0..n-1] (NULL entries are SQL
 * NULL). Returns 0 with *out set to the result (the caller PQclear()s it),
 * or the reported code with *out NULL. `failed`, when not NULL, receives
 * the failed result instead of it being cleared (the caller clears it).
 */
int store_pg__run(store_pg *p, PGresult **out, PGresult **failed, sf_err *err, const char *what,
		  const char *sql, int n, const char *const *params)
{
	*out = NULL;
	PGresult *res = PQexecParams(p->conn, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (p->fault == STORE_UNAVAILABLE) /* reached again */
			set_fault(p, STORE_OK, "");
		*out = res;
		return 0;
	}
	int rc = db_err(p, res, err, "%s", what);
	if (failed)
		*failed = res;
	else
		PQclear(res);
	return rc;
}

/* store_pg__run() of a statement whose result is not needed. */
int store_pg__run0(store_pg *p, sf_err *err, const char *what, const char *sql, int n,
		   const char *const *params)
{
	PGresult *res;
	int rc = store_pg__run(p, &res, NULL, err, what, sql, n, params);
	PQclear(res);
	return rc;
}

/* Rolls back the open transaction, if any (a failing ROLLBACK has nothing to add); returns rc. */
static int fail(store_pg *p, int rc)
{
	PGTransactionStatusType t = PQtransactionStatus(p->conn);
	if (t == PQTRANS_INTRANS || t == PQTRANS_INERROR)
		PQclear(PQexec(p->conn, "ROLLBACK"));
	return rc;
}

static int begin(store_pg *p, sf_err *err, const char *what)
{
	return store_pg__run0(p, err, what, "BEGIN", 0, NULL);
}

/* COMMIT; on failure rolls back and returns the reported code. */
static int commit(store_pg *p, sf_err *err, const char *what)
{
	PGresult *res;
	int rc = store_pg__run(p, &res, NULL, err, what, "COMMIT", 0, NULL);
	if (!rc && strcmp(PQcmdStatus(res), "COMMIT") != 0)
		rc = sf_err_set(err, SF_ESYS, "%s: the transaction was rolled back", what);
	PQclear(res);
	return rc ? fail(p, rc) : 0;
}

/* ---- the session ---- */

/*
 * Applies the session settings: the lock timeout, and read-only for a
 * READONLY handle and while STORE_UNWRITABLE is simulated; otherwise the
 * database's and the role's own default_transaction_read_only, so that a
 * database made read-only (ALTER DATABASE ... SET) is seen as such.
 */
static int session_setup(store_pg *p, sf_err *err)
{
	int ro = p->readonly || p->simulated == STORE_UNWRITABLE;
	PGresult *res = PQexec(p->conn, ro ? "SET lock_timeout = '" LOCK_TIMEOUT "'; "
					     "SET default_transaction_read_only = on"
					   : "SET lock_timeout = '" LOCK_TIMEOUT "'; "
					     "RESET default_transaction_read_only");
	int rc = PQresultStatus(res) == PGRES_COMMAND_OK
			 ? 0
			 : db_err(p, res, err, "setting up the session");
	PQclear(res);
	return rc;
}

static int pg_simulate_fault(store *s, int fault, sf_err *err);

/*
 * At the start of every call: resets a lost connection (once) and applies
 * the session settings again; before a write (`writes`) also reads the
 * test seam's file. Returns 0 or SF_ESYS.
 */
static int ready(store_pg *p, int writes, sf_err *err, const char *what)
{
	/*
	 * A server that restarted or ended the session has said so on the
	 * socket (FATAL 57P01, then EOF) while the connection was idle: read
	 * that now, without blocking, so that the call reconnects first
	 * instead of failing on a connection that is already gone. libpq
	 * notices the EOF only on a read after the message, hence two reads
	 * (on a live connection each is one recv() that finds nothing), and
	 * hands an idle connection's FATAL to on_notice() when PQisBusy()
	 * parses it, for when the EOF has not arrived yet.
	 */
	if (PQstatus(p->conn) == CONNECTION_OK && PQtransactionStatus(p->conn) == PQTRANS_IDLE) {
		if (PQconsumeInput(p->conn))
			PQconsumeInput(p->conn);
		PQisBusy(p->conn);
	}
	if (PQstatus(p->conn) != CONNECTION_OK || p->session_ended) {
		p->session_ended = 0;
		/* A batch's transaction went with its connection. */
		if (p->batch == BATCH_OPEN) {
			p->batch = BATCH_DEAD;
			p->savepoint = 0;
			snprintf(p->batch_msg, sizeof p->batch_msg,
				 "the connection to PostgreSQL was lost");
		}
		PQreset(p->conn);
		if (PQstatus(p->conn) != CONNECTION_OK)
			return db_err(p, NULL, err, "%s: reconnecting to PostgreSQL", what);
		int rc = session_setup(p, err);
		if (rc)
			return rc;
		if (p->fault == STORE_UNAVAILABLE)
			set_fault(p, STORE_OK, "");
	}
	if (writes && p->fault_file && p->batch == BATCH_NONE) {
		int want = store__fault_file_read(p->fault_file);
		if (want == STORE_FULL) /* not simulated here (pg_simulate_fault()) */
			want = STORE_OK;
		if (want != p->simulated)
			pg_simulate_fault(&p->base, want, NULL);
	}
	return 0;
}

/*
 * Notices: a migration step's own BEGIN (25001) and the server's FATAL on
 * an idle connection (it ended the session: a restart, an administrator)
 * are remembered; the rest are dropped.
 */
static void on_notice(void *arg, const PGresult *res)
{
	store_pg *p = arg;
	const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	if (store_pg__is_state(res, "25001"))
		p->nested_begin = 1;
	if (severity && (!strcmp(severity, "FATAL") || !strcmp(severity, "PANIC")))
		p->session_ended = 1;
}

/* ---- calls and batches ---- */

/*
 * Ends the batch's useful life (store.h): rolls the whole transaction back
 * and remembers why, so that later writes of the batch are refused.
 */
static void batch_kill(store_pg *p, const sf_err *err)
{
	if (PQtransactionStatus(p->conn) != PQTRANS_IDLE)
		PQclear(PQexec(p->conn, "ROLLBACK"));
	p->batch = BATCH_DEAD;
	p->savepoint = 0;
	snprintf(p->batch_msg, sizeof p->batch_msg, "%s",
		 err && *err->msg ? err->msg : "a write failed");
}

/*
 * Starts a public call of `kind`: ready(); inside a batch, a savepoint (so
 * that a failing call undoes only itself; a batch rolled back refuses
 * writes); outside one, BEGIN for a call of several writing statements.
 * Returns 0 or the reported code; on failure nothing is open.
 */
int store_pg__call_begin(store_pg *p, int kind, sf_err *err, const char *what)
{
	int rc = ready(p, kind != CALL_READ, err, what);
	if (rc)
		return rc;
	p->hard = 0;
	if (p->batch == BATCH_DEAD)
		return kind == CALL_READ
			       ? 0
			       : sf_err_set(err, SF_ESYS, "%s: the batch was rolled back after: %s",
					    what, p->batch_msg);
	if (p->batch == BATCH_OPEN) {
		/* The previous call's savepoint is released here, in the same round trip. */
		PGresult *res = PQexec(p->conn, p->savepoint ? "RELEASE SAVEPOINT sf_call; "
							       "SAVEPOINT sf_call"
							     : "SAVEPOINT sf_call");
		if (PQresultStatus(res) == PGRES_COMMAND_OK) {
			p->savepoint = 1;
		} else {
			rc = db_err(p, res, err, "%s: opening a savepoint", what);
			batch_kill(p, err);
		}
		PQclear(res);
		return rc;
	}
	return kind == CALL_WRITE_TX ? begin(p, err, what) : 0;
}

/*
 * Ends a call begun with store_pg__call_begin() whose outcome is `rc` (0 or
 * positive: done; negative: failed, reported). Done: the transaction
 * committed, or in a batch the savepoint kept (the next call or the
 * batch's COMMIT releases it: one round trip less per call). Failed:
 * rolled back to the savepoint, or the whole batch when the storage or the
 * connection failed, or the transaction. Returns `rc`, or the code of a
 * commit that failed.
 */
int store_pg__call_end(store_pg *p, int kind, int rc, sf_err *err, const char *what)
{
	if (p->batch == BATCH_OPEN) {
		if (rc >= 0)
			return rc;
		if (p->hard || PQstatus(p->conn) != CONNECTION_OK) {
			batch_kill(p, err);
			return rc;
		}
		PGresult *res = PQexec(p->conn, "ROLLBACK TO SAVEPOINT sf_call");
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			batch_kill(p, err);
		PQclear(res);
		return rc;
	}
	if (p->batch == BATCH_DEAD || kind != CALL_WRITE_TX)
		return rc;
	if (rc < 0)
		return fail(p, rc);
	int c = commit(p, err, what);
	return c ? c : rc;
}

/* ---- values ---- */

/* A malloc'ed copy of the value at (row, col), or NULL for SQL NULL; *oom set when out of memory.
 */
char *store_pg__col_dup(const PGresult *res, int row, int col, int *oom)
{
	if (PQgetisnull(res, row, col))
		return NULL;
	char *copy = strdup(PQgetvalue(res, row, col));
	if (!copy)
		*oom = 1;
	return copy;
}

/* The integer at (row, col); 0 for SQL NULL. */
int64_t store_pg__col_i64(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

double store_pg__col_f64(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtod(PQgetvalue(res, row, col), NULL);
}

void store_pg__text_add(pg_text *t, const char *s, size_t n)
{
	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *grown = realloc(t->s, cap);
		if (!grown) {
			t->oom = 1;
			return;
		}
		t->s = grown;
		t->cap = cap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
}

/*
 * Appends one element of an array literal ("{a,b}"): `value` in double
 * quotes with `"` and `\` escaped, or NULL (unquoted) for a NULL value. A
 * separating comma comes first unless the literal is still "{".
 */
void store_pg__text_elem(pg_text *t, const char *value)
{
	if (t->len > 1)
		store_pg__text_add(t, ",", 1);
	if (!value) {
		store_pg__text_add(t, "NULL", 4);
		return;
	}
	store_pg__text_add(t, "\"", 1);
	for (const char *c = value; *c;) {
		size_t plain = strcspn(c, "\"\\");
		store_pg__text_add(t, c, plain);
		c += plain;
		if (*c) {
			char esc[2] = { '\\', *c++ };
			store_pg__text_add(t, esc, 2);
		}
	}
	store_pg__text_add(t, "\"", 1);
}

/* A double as the server reads it back exactly ("%.17g"; inf and nan are float8 words too). */
void store_pg__fmt_double(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.17g", v);
}

/* ---- opening and migrating ---- */

/*
 * The schema the store lives in: current_schema() (the first schema of
 * search_path that exists), or when none exists, the first one search_path
 * names ("$user" read as the user), which READWRITE then creates; *missing
 * says which. Returns 0 or the reported code.
 */
static int target_schema(store_pg *p, char *name, size_t size, int *missing, sf_err *err)
{
	PGresult *res;
	int rc = store_pg__run(
		p, &res, NULL, err, "store_open: reading the schema",
		"SELECT current_schema(), current_setting('search_path'), current_user", 0, NULL);
	if (rc)
		return rc;
	*missing = PQgetisnull(res, 0, 0);
	if (!*missing) {
		snprintf(name, size, "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		return 0;
	}
	/* search_path's first element: "quoted" ("" for a quote) or bare (folded to lower case). */
	const char *c = PQgetvalue(res, 0, 1);
	size_t n = 0;
	while (*c == ' ')
		c++;
	if (*c == '"') {
		for (c++; *c && n + 1 < size; c++) {
			if (*c == '"' && *++c != '"')
				break;
			name[n++] = *c;
		}
	} else {
		for (; *c && *c != ',' && *c != ' ' && n + 1 < size; c++)
			name[n++] = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
	}
	name[n] = '\0';
	if (!strcmp(name, "$user"))
		snprintf(name, size, "%s", PQgetvalue(res, 0, 2));
	PQclear(res);
	if (!*name)
		return sf_err_set(err, SF_EINVAL, "store_open: the search_path names no schema");
	return 0;
}

/*
 * Reads the schema version: the largest version in schema_migrations of
 * the current schema, -1 when that table does not exist.
 */
static int read_version(store_pg *p, int *version, sf_err *err)
{
	PGresult *res;
	int rc = store_pg__run(p, &res, NULL, err, "store_open: reading the schema version",
			       "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() "
			       "AND tablename = 'schema_migrations'",
			       0, NULL);
	if (rc)
		return rc;
	int exists = PQntuples(res) > 0;
	PQclear(res);
	*version = -1;
	if (!exists)
		return 0;
	rc = store_pg__run(p, &res, NULL, err, "store_open: reading the schema version",
			   "SELECT coalesce(max(version), 0) FROM schema_migrations", 0, NULL);
	if (rc)
		return rc;
	*version = (int)store_pg__col_i64(res, 0, 0);
	PQclear(res);
	return 0;
}

/* BEGIN and the migration lock of `schema`; on failure nothing stays open. */
static int migration_begin(store_pg *p, const char *schema, sf_err *err)
{
	const char *key[] = { schema };
	int rc = begin(p, err, "store_open: migrating");
	if (!rc)
		rc = store_pg__run0(
			p, err, "store_open: taking the migration lock",
			"SELECT pg_advisory_xact_lock(" MIGRATION_LOCK ", hashtext($1))", 1, key);
	return rc ? fail(p, rc) : 0;
}

/*
 * The first transaction of a READWRITE open: under the lock, creates the
 * schema when `missing` and schema_migrations when absent, and reads the
 * version into p->version. A database newer than the binary is refused
 * before anything is created.
 */
static int prepare_schema(store_pg *p, const char *schema, int missing, const char *where,
			  sf_err *err)
{
	int rc = migration_begin(p, schema, err);
	if (rc)
		return rc;
	if (missing) {
		char *quoted = PQescapeIdentifier(p->conn, schema, strlen(schema));
		char sql[200];
		if (!quoted || strlen(quoted) > 150) {
			PQfreemem(quoted);
			return fail(p, sf_err_set(err, SF_EINVAL,
						  "store_open: schema name %.60s is not usable",
						  schema));
		}
		snprintf(sql, sizeof sql, "CREATE SCHEMA IF NOT EXISTS %s", quoted);
		PQfreemem(quoted);
		if ((rc = store_pg__run0(p, err, "store_open: creating the schema", sql, 0,
					 NULL)) != 0)
			return fail(p, rc);
	}
	if ((rc = read_version(p, &p->version, err)) != 0)
		return fail(p, rc);
	if (p->version > p->latest) {
		return fail(p, sf_err_set(err, SF_ERANGE,
					  "store_open: %s has schema version %d, newer than this "
					  "binary's %d: it was written by a newer starforge",
					  where, p->version, p->latest));
	}
	if (p->version < 0) {
		rc = store_pg__run0(p, err, "store_open: creating schema_migrations",
				    "CREATE TABLE schema_migrations (version integer PRIMARY KEY, "
				    "applied_at bigint NOT NULL DEFAULT " NOW_MS ")",
				    0, NULL);
		if (rc)
			return fail(p, rc);
		p->version = 0;
	}
	return commit(p, err, "store_open: preparing the schema");
}

/*
 * Applies steps m[p->version..count-1], each in its own transaction under
 * the migration lock, re-reading the version first (another node may have
 * migrated meanwhile).
 */
static int migrate(store_pg *p, const sf_embedded *m, size_t count, const char *schema,
		   const char *where, sf_err *err)
{
	for (size_t i = (size_t)p->version; i < count; i++) {
		int version = (int)i + 1, current = 0, rc;
		if ((rc = migration_begin(p, schema, err)) != 0)
			return rc;
		if ((rc = read_version(p, &current, err)) != 0)
			return fail(p, rc);
		if (current > (int)count)
			return fail(p, sf_err_set(err, SF_ERANGE,
						  "store_open: %s has schema version %d, newer "
						  "than this binary's %zu",
						  where, current, count));
		if (current >= version) {
			fail(p, 0);
			p->version = current;
			i = (size_t)current - 1;
			continue;
		}
		p->nested_begin = 0;
		PGresult *res = PQexec(p->conn, (const char *)m[i].data);
		ExecStatusType st = PQresultStatus(res);
		if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
			rc = db_err(p, res, err, "store_open: migration %s failed", m[i].name);
			PQclear(res);
			return fail(p, rc);
		}
		PQclear(res);
		if (PQtransactionStatus(p->conn) != PQTRANS_INTRANS)
			return fail(p, sf_err_set(err, SF_ESYS,
						  "store_open: migration %s ended the transaction "
						  "itself (steps must not hold BEGIN, COMMIT or "
						  "ROLLBACK); the database may be half migrated",
						  m[i].name));
		if (p->nested_begin)
			return fail(p, sf_err_set(err, SF_EINVAL,
						  "store_open: migration %s holds a BEGIN of its "
						  "own (steps must not); rolled back",
						  m[i].name));
		char v[16];
		snprintf(v, sizeof v, "%d", version);
		const char *params[] = { v };
		rc = store_pg__run0(p, err, "store_open: recording the version",
				    "INSERT INTO schema_migrations (version) VALUES ($1)", 1,
				    params);
		if (rc)
			return fail(p, rc);
		if ((rc = commit(p, err, "store_open: committing a migration")) != 0)
			return rc;
		p->version = version;
	}
	return 0;
}

int store_pg_latest_version(void)
{
	return (int)sf_pg_migrations_count;
}

static void pg_close(store *s);
static const struct store_ops pg_ops;

/*
 * Connects (see store_pg.h), sets the session up, finds or creates the
 * schema, reads the version and refuses a newer database (or, READONLY, any
 * other version) before it changes anything, and migrates (READWRITE).
 * Returns NULL and sets `err` on failure, having closed the connection.
 */
store *store_pg_open_with(const char *uri, int mode, const sf_embedded *migrations, size_t count,
			  sf_err *err)
{
	if (store__check_open(uri, "URI", mode, migrations, count, err) != 0)
		return NULL;
	store_pg *p = calloc(1, sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
		return NULL;
	}
	p->base.ops = &pg_ops;
	p->readonly = mode == STORE_READONLY;
	p->latest = (int)count;
	/* The URI's settings, then ours: UTF-8 on the wire, so text comes back byte for byte. */
	const char *keys[] = { "dbname", "client_encoding", "fallback_application_name", NULL };
	const char *values[] = { uri, "UTF8", "starforge", NULL };
	p->conn = PQconnectdbParams(keys, values, 1);
	if (!p->conn) {
		sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
		goto fail;
	}
	if (PQstatus(p->conn) != CONNECTION_OK) {
		/* libpq's message names the host or socket, never the password. */
		db_err(p, NULL, err, "store_open: connecting to PostgreSQL");
		goto fail;
	}
	PQsetNoticeReceiver(p->conn, on_notice, p);
	if (session_setup(p, err) != 0)
		goto fail;
	const char *seam = getenv("STARFORGE_TEST_STORAGE_FAULT");
	if (!p->readonly && seam && *seam && !(p->fault_file = strdup(seam))) {
		sf_err_set(err, SF_ENOMEM, "store_open: out of memory");
		goto fail;
	}
	char schema[128], where[200];
	int missing = 0;
	if (target_schema(p, schema, sizeof schema, &missing, err) != 0)
		goto fail;
	snprintf(where, sizeof where, "database %s, schema %s", PQdb(p->conn), schema);
	if (p->readonly) {
		if (missing)
			p->version = 0;
		else if (read_version(p, &p->version, err) != 0)
			goto fail;
		if (p->version < 0)
			p->version = 0;
		if (p->version != p->latest) {
			sf_err_set(err, SF_ERANGE,
				   "store_open: %s has schema version %d, this binary's is %d; a "
				   "read-only handle does not migrate",
				   where, p->version, p->latest);
			goto fail;
		}
		return &p->base;
	}
	if (prepare_schema(p, schema, missing, where, err) != 0 ||
	    migrate(p, migrations, count, schema, where, err) != 0)
		goto fail;
	return &p->base;
fail:
	pg_close(&p->base);
	return NULL;
}

/* store_pg_open_with() the embedded steps (sf_pg_migrations). */
store *store_pg_open(const char *uri, int mode, sf_err *err)
{
	return store_pg_open_with(uri, mode, sf_pg_migrations, sf_pg_migrations_count, err);
}

/* Closes the connection and frees the store; NULL is a no-op. */
static void pg_close(store *s)
{
	store_pg *p = (store_pg *)s;
	if (!p)
		return;
	PQfinish(p->conn);
	free(p->fault_file);
	free(p);
}

static int pg_version(store *s)
{
	return s ? ((store_pg *)s)->version : -1;
}

/* ---- storage faults ---- */

static int pg_write_fault(const store *s, const char **msg)
{
	const store_pg *p = (const store_pg *)s;
	if (msg)
		*msg = p && p->fault ? p->fault_msg : "";
	return p ? p->fault : STORE_OK;
}

/*
 * A real write transaction that changes nothing a reader sees: the newest
 * schema_migrations row rewritten with its own values (a new row version,
 * WAL, a commit). It fails on a read-only session or standby (25006) and
 * on a full disk (53100). The server's free space is not visible from
 * here, so unlike SQLite's probe there is no check for room beyond it.
 */
static int pg_probe_write(store *s, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!p || p->readonly)
		return sf_err_set(err, SF_EINVAL, "store_probe_write: no store, or a READONLY one");
	if (p->batch != BATCH_NONE)
		return sf_err_set(err, SF_EINVAL, "store_probe_write: not inside a batch");
	/*
	 * A read-only session that was not simulated may be a connection to
	 * a standby, or a session begun while the database was read-only: a
	 * new connection finds the primary (target_session_attrs=read-write
	 * in a multi-host URI) and the database's settings as they are now.
	 */
	if (p->fault == STORE_UNWRITABLE && p->simulated != STORE_UNWRITABLE) {
		PQreset(p->conn);
		if (PQstatus(p->conn) == CONNECTION_OK)
			session_setup(p, NULL);
	}
	int rc = ready(p, 1, err, "store_probe_write");
	if (!rc)
		rc = begin(p, err, "store_probe_write");
	if (!rc)
		rc = store_pg__run0(p, err, "store_probe_write",
				    "UPDATE schema_migrations SET applied_at = applied_at "
				    "WHERE version = (SELECT max(version) FROM schema_migrations)",
				    0, NULL);
	rc = rc ? fail(p, rc) : commit(p, err, "store_probe_write");
	if (rc)
		return rc;
	p->fault = STORE_OK;
	p->fault_msg[0] = '\0';
	return 0;
}

/*
 * The test seam (store.h): STORE_UNWRITABLE makes the session read-only
 * (default_transaction_read_only, as on a standby), so every write fails
 * with SQLSTATE 25006; STORE_OK lifts it. A full disk cannot be simulated
 * honestly from a client session: STORE_FULL is SF_EINVAL.
 */
static int pg_simulate_fault(store *s, int fault, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (!p || p->readonly)
		return sf_err_set(err, SF_EINVAL,
				  "store_simulate_fault: no store, or a READONLY one");
	if (fault == STORE_FULL)
		return sf_err_set(
			err, SF_EINVAL,
			"store_simulate_fault: STORE_FULL is not supported on PostgreSQL");
	if (fault != STORE_OK && fault != STORE_UNWRITABLE)
		return sf_err_set(err, SF_EINVAL, "store_simulate_fault: fault %d, allowed %d..%d",
				  fault, STORE_OK, STORE_UNWRITABLE);
	if (p->batch != BATCH_NONE)
		return sf_err_set(err, SF_EINVAL, "store_simulate_fault: not inside a batch");
	int was = p->simulated;
	p->simulated = fault;
	int rc = session_setup(p, err);
	if (rc)
		p->simulated = was;
	return rc;
}

/* ---- batches ---- */

/* BEGIN of a batch (store.h): SF_EINVAL on a READONLY handle or inside a batch. */
static int pg_batch_begin(store *s, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (p->readonly)
		return sf_err_set(err, SF_EINVAL, "store_batch_begin: a READONLY store");
	if (p->batch != BATCH_NONE)
		return sf_err_set(err, SF_EINVAL, "store_batch_begin: a batch is open already");
	int rc = ready(p, 1, err, "store_batch_begin");
	if (!rc)
		rc = begin(p, err, "store_batch_begin");
	if (rc)
		return fail(p, rc);
	p->batch = BATCH_OPEN;
	p->savepoint = 0;
	return 0;
}

/*
 * Ends the batch: COMMIT (commit != 0) or ROLLBACK. A batch rolled back
 * already (store_pg__call_end()) is SF_ESYS for a commit, saying after what.
 */
static int pg_batch_end(store *s, int commit_it, sf_err *err)
{
	store_pg *p = (store_pg *)s;
	if (p->batch == BATCH_NONE)
		return sf_err_set(err, SF_EINVAL, "store_batch_end: no batch is open");
	int was = p->batch;
	p->batch = BATCH_NONE;
	p->savepoint = 0;
	if (was == BATCH_DEAD)
		return commit_it
			       ? sf_err_set(err, SF_ESYS,
					    "store_batch_end: the batch was rolled back after: %s",
					    p->batch_msg)
			       : 0;
	if (!commit_it)
		return fail(p, 0);
	p->hard = 0;
	return commit(p, err, "store_batch_end");
}

/* Many nodes share a PostgreSQL database: there is nothing to lock. */
static int pg_lock_exclusive(store *s, sf_err *err)
{
	(void)s;
	(void)err;
	return 0;
}

static int pg_latest_version(store *s)
{
	return ((store_pg *)s)->latest;
}

static const struct store_ops pg_ops = {
	.name = "postgresql",
	.close = pg_close,
	.version = pg_version,
	.latest_version = pg_latest_version,
	.insert_job = store_pg__insert_job,
	.get_job = store_pg__get_job,
	.list_jobs = store_pg__list_jobs,
	.job_started = store_pg__job_started,
	.job_progress = store_pg__job_progress,
	.job_succeeded = store_pg__job_succeeded,
	.job_failed = store_pg__job_failed,
	.job_cancelled = store_pg__job_cancelled,
	.job_requeue = store_pg__job_requeue,
	.claim_job = store_pg__claim_job,
	.job_heartbeat = store_pg__job_heartbeat,
	.rescue_expired = store_pg__rescue_expired,
	.prune_job_events = store_pg__prune_job_events,
	.request_cancel = store_pg__request_cancel,
	.append_job_events = store_pg__append_job_events,
	.job_events = store_pg__job_events,
	.pending_jobs = store_pg__pending_jobs,
	.count_jobs = store_pg__count_jobs,
	.get_level = store_pg__get_level,
	.list_levels = store_pg__list_levels,
	.get_evaluation = store_pg__get_evaluation,
	.put_evaluations = store_pg__put_evaluations,
	.touch_evaluations = store_pg__touch_evaluations,
	.trim_evaluations = store_pg__trim_evaluations,
	.evaluation_stats = store_pg__evaluation_stats,
	.put_resource = store_pg__put_resource,
	.get_resource = store_pg__get_resource,
	.list_resources = store_pg__list_resources,
	.write_fault = pg_write_fault,
	.probe_write = pg_probe_write,
	.simulate_fault = pg_simulate_fault,
	.batch_begin = pg_batch_begin,
	.batch_end = pg_batch_end,
	.lock_exclusive = pg_lock_exclusive,
};
