/*
 * store_sqlite_lock.c - one process per SQLite database
 * (store_lock_exclusive(), store.h).
 *
 * The scheduler assumes that it is the only runner of the jobs in its
 * database: at start it requeues every job left running, since the process
 * that ran them must have died. A second `starforge serve` on the same
 * file would requeue and run again the jobs the first one is running, so
 * the service takes this lock before it looks at any job, and a second
 * process stops at start with a message that says what to do.
 *
 * The lock is flock(2), exclusive and non-blocking, on a descriptor of our
 * own for the database file. On Linux flock locks are independent of the
 * POSIX (fcntl) locks SQLite takes on the same file, so the two never
 * interfere: readers and writers of other processes (the CLI, sqlite3, a
 * backup) are not stopped by it, only a second holder of this lock. The
 * kernel drops it when the process dies, however it dies, so a crash never
 * leaves a stale lock behind, as a lock file with a PID would.
 *
 * One trap: closing any descriptor of a file drops every POSIX lock the
 * process holds on that file, SQLite's included. So the descriptor stays
 * open until store_close(), which closes it after the connection, even
 * when the lock was refused. (On NFS, Linux emulates flock with POSIX
 * locks; SQLite on NFS is unsafe anyway.)
 */
#define _DEFAULT_SOURCE /* flock() */
#include "store_sqlite.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/*
 * Takes the lock (store.h): 0 when held (now or already), SF_ERANGE when
 * another open file description holds it, SF_EINVAL for a READONLY
 * handle, SF_ESYS when the file cannot be opened or flock fails otherwise.
 * An in-memory database has no file and needs no lock.
 */
int store_sqlite_lock_exclusive(store *base, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (s->readonly)
		return sf_err_set(err, SF_EINVAL,
				  "store_lock_exclusive: a READONLY handle takes no lock");
	if (s->locked)
		return 0;
	/* The file SQLite opened, absolute: "" for ":memory:" and temporary databases. */
	const char *file = sqlite3_db_filename(s->db, "main");
	if (!file || !*file)
		return 0;
	if (s->lock_fd < 0 && (s->lock_fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return sf_err_set(err, SF_ESYS, "store_lock_exclusive: opening %s: %s", s->path,
				  strerror(errno));
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			return sf_err_set(err, SF_ERANGE,
					  "database %s is in use by another starforge process; "
					  "SQLite serves one process at a time: stop the other "
					  "one, or run several nodes on PostgreSQL (--db "
					  "postgresql://...)",
					  s->path);
		return sf_err_set(err, SF_ESYS, "store_lock_exclusive: locking %s: %s", s->path,
				  strerror(errno));
	}
	s->locked = 1;
	return 0;
}
