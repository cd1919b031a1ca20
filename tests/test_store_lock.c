/*
 * test_store_lock.c - one process per SQLite database
 * (store_lock_exclusive(), store.h; server/store/store_sqlite_lock.c): a
 * child process that holds the lock makes the parent's attempt fail with
 * SF_ERANGE and a message naming the file; the lock is free again once the
 * child exits, cleanly or killed; the writer that holds it and READONLY
 * handles of the same process go on working together.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../server/store/store.h"

typedef struct fixture {
	char dir[64];
	char path[128];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	snprintf(f->dir, sizeof f->dir, "/tmp/sf_lock_XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof f->path, "%s/starforge.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	const char *suffixes[] = { "", "-wal", "-shm" };
	char path[160];
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s%s", f->path, suffixes[i]);
		unlink(path);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

static int insert(store *s, const char *id, sf_err *err)
{
	store_job job = { 0 };
	snprintf(job.id, sizeof job.id, "%s", id);
	job.kind = strdup("lattice");
	job.params = strdup("{}");
	int rc = store_insert_job(s, &job, NULL, NULL, NULL, err);
	store_job_clear(&job);
	return rc;
}

/* The id child_holder() gives its job. */
static const char *child_job(pid_t pid)
{
	static char id[40];
	snprintf(id, sizeof id, "job_%ld", (long)pid);
	return id;
}

static int has_job(store *s, const char *id)
{
	store_job job = { 0 };
	sf_err err = { 0 };
	int found = store_get_job(s, id, &job, &err);
	store_job_clear(&job);
	return found;
}

/*
 * A child that opens `path`, takes the lock and writes job "job_<its pid>", says so on
 * `ready` (one byte: 'y', or 'n' when something failed), then waits for a
 * byte on `go` and exits: cleanly (closing the store) when `crash` is 0,
 * with _exit() and the store left open when it is 1. Never returns.
 */
static void child_holder(const char *path, int ready, int go, int crash)
{
	sf_err err = { 0 };
	store *s = store_open(path, STORE_READWRITE, &err);
	char id[40];
	snprintf(id, sizeof id, "job_%ld", (long)getpid());
	int ok = s && store_lock_exclusive(s, &err) == 0 && insert(s, id, &err) == 0;
	char c = ok ? 'y' : 'n';
	if (write(ready, &c, 1) != 1 || !ok)
		_exit(2);
	if (read(go, &c, 1) != 1)
		_exit(3);
	if (!crash)
		store_close(s);
	_exit(0);
}

/* Forks child_holder() and waits until it holds the lock; *go_fd lets it go. */
static pid_t start_holder(const char *path, int crash, int *go_fd)
{
	int ready[2], go[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		child_holder(path, ready[1], go[0], crash);
	}
	close(ready[1]);
	close(go[0]);
	char c = 0;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	assert_int_equal(c, 'y');
	*go_fd = go[1];
	return pid;
}

/* Lets the holder go and reaps it; returns its exit status. */
static int stop_holder(pid_t pid, int go_fd)
{
	char c = 'x';
	assert_int_equal(write(go_fd, &c, 1), 1);
	close(go_fd);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Another process holds the lock: SF_ERANGE naming the file; free once it exits. */
static void test_lock_other_process(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	int go;
	pid_t pid = start_holder(f->path, 0, &go);

	store *s = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(s);
	assert_int_equal(store_lock_exclusive(s, &err), SF_ERANGE);
	assert_int_equal(err.code, SF_ERANGE);
	char want[512];
	snprintf(want, sizeof want,
		 "database %s is in use by another starforge process; SQLite serves one "
		 "process at a time: stop the other one, or run several nodes on PostgreSQL "
		 "(--db postgresql://...)",
		 f->path);
	assert_string_equal(err.msg, want);
	/* Refused again while the child lives; the refusal changed nothing. */
	assert_int_equal(store_lock_exclusive(s, &err), SF_ERANGE);
	assert_int_equal(has_job(s, child_job(pid)), 1);

	assert_int_equal(stop_holder(pid, go), 0);
	/* The same handle takes it now, and a second call is a no-op. */
	assert_int_equal(store_lock_exclusive(s, &err), 0);
	assert_int_equal(store_lock_exclusive(s, &err), 0);
	assert_int_equal(insert(s, "job_parent", &err), 0);
	store_close(s);
}

/* A holder killed without closing anything leaves no stale lock (the kernel drops it). */
static void test_lock_dies_with_process(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	int go;
	pid_t pid = start_holder(f->path, 1, &go);
	store *s = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(s);
	assert_int_equal(store_lock_exclusive(s, &err), SF_ERANGE);
	assert_int_equal(stop_holder(pid, go), 0);
	assert_int_equal(store_lock_exclusive(s, &err), 0);
	assert_int_equal(has_job(s, child_job(pid)), 1); /* committed before the crash */
	store_close(s);

	/* kill -9 too. */
	pid = start_holder(f->path, 1, &go);
	s = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(s);
	assert_int_equal(store_lock_exclusive(s, &err), SF_ERANGE);
	assert_int_equal(kill(pid, SIGKILL), 0);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(go);
	assert_int_equal(store_lock_exclusive(s, &err), 0);
	store_close(s);
}

/*
 * In one process: the writer holds the lock while two READONLY handles
 * read what it writes; a second READWRITE handle is refused the lock but
 * still opens, and closing it leaves the others working. store_close()
 * drops the lock.
 */
static void test_lock_one_process(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *w = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(w);
	assert_int_equal(store_lock_exclusive(w, &err), 0);
	store *r1 = store_open(f->path, STORE_READONLY, &err);
	store *r2 = store_open(f->path, STORE_READONLY, &err);
	assert_non_null(r1);
	assert_non_null(r2);
	assert_int_equal(store_lock_exclusive(r1, &err), SF_EINVAL); /* readers take none */
	assert_int_equal(insert(w, "job_1", &err), 0);
	assert_int_equal(has_job(r1, "job_1"), 1);
	assert_int_equal(has_job(r2, "job_1"), 1);

	store *w2 = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(w2);
	assert_int_equal(store_lock_exclusive(w2, &err), SF_ERANGE);
	store_close(w2);
	assert_int_equal(insert(w, "job_2", &err), 0);
	assert_int_equal(store_job_started(w, "job_1", &err), 0);
	assert_int_equal(has_job(r1, "job_2"), 1);
	assert_int_equal(has_job(r2, "job_2"), 1);
	store_close(r1);
	assert_int_equal(has_job(r2, "job_2"), 1);

	/* Closing the writer frees the lock for the next one. */
	store_close(w);
	w = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(w);
	assert_int_equal(store_lock_exclusive(w, &err), 0);
	assert_int_equal(insert(w, "job_3", &err), 0);
	assert_int_equal(has_job(r2, "job_3"), 1);
	store_close(r2);
	store_close(w);
}

/* ":memory:" has no file and needs no lock; NULL is SF_EINVAL. */
static void test_lock_memory(void **state)
{
	(void)state;
	sf_err err = { 0 };
	store *a = store_open(":memory:", STORE_READWRITE, &err);
	store *b = store_open(":memory:", STORE_READWRITE, &err);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(store_lock_exclusive(a, &err), 0);
	assert_int_equal(store_lock_exclusive(b, &err), 0);
	store_close(a);
	store_close(b);
	assert_int_equal(store_lock_exclusive(NULL, &err), SF_EINVAL);
	assert_string_equal(store_backend(NULL), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lock_other_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_dies_with_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_one_process, setup, teardown),
		cmocka_unit_test(test_lock_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
