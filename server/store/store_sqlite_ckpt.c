/*
 * store_sqlite_ckpt.c - WAL checkpoints on a thread of their own
 * (store_checkpoint_in_background(), store.h).
 *
 * By default SQLite checkpoints inside the commit that takes the WAL past
 * 1 000 pages (wal_autocheckpoint): that commit copies the WAL's pages into
 * the database file and fsyncs it, and the thread that committed waits. On
 * the store thread that wait lands on every submission of the next batch:
 * it was the tail of the submit latency (p99 about twice the median).
 *
 * Here the writer's connection gets a WAL hook instead (sqlite3_wal_hook
 * replaces the automatic checkpoint): after each commit it only compares
 * the WAL's size with STORE_CHECKPOINT_PAGES and, when it is over, wakes
 * the checkpoint thread. That thread has its own connection to the file
 * and runs a PASSIVE checkpoint, which takes no lock a writer or a reader
 * waits for: commits go on appending to the WAL while it copies, and the
 * writer starts the WAL over from its beginning once a checkpoint has
 * copied all of it and no reader still uses it. Under a steady stream of
 * commits the thread may never catch up whole: past three times the limit
 * the writer checkpoints itself (on_commit), which bounds the WAL. So the
 * fsync of the database file happens off the writer's thread, except
 * under a write load the thread cannot follow.
 *
 * The thread and its connection belong to the writer's store handle:
 * store_close() stops the thread (after a last checkpoint) before it
 * closes the writer.
 */
#include "store_sqlite.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct sq_ckpt {
	sqlite3 *db; /* the thread's connection */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	int want, stop;            /* under mu */
	unsigned long done;        /* under mu: checkpoints that copied pages */
	unsigned long inline_runs; /* under mu: the writer's own, past the hard limit */
} sq_ckpt;

/*
 * The writer's commit hook (on the writer's thread): wakes the thread past
 * the limit. The writer starts the WAL over only when a write begins with
 * the WAL copied whole, which a thread that copies while commits go on may
 * never see under a steady stream of them: past STORE_CHECKPOINT_HARD
 * pages the writer copies the rest itself (as SQLite's own automatic
 * checkpoint would have done long before), so the WAL stays bounded.
 */
#define STORE_CHECKPOINT_HARD (3 * STORE_CHECKPOINT_PAGES)
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
	sq_ckpt *c = arg;
	if (pages >= STORE_CHECKPOINT_HARD) {
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		pthread_mutex_lock(&c->mu);
		c->inline_runs++;
		pthread_mutex_unlock(&c->mu);
	} else if (pages >= STORE_CHECKPOINT_PAGES) {
		pthread_mutex_lock(&c->mu);
		c->want = 1;
		pthread_cond_signal(&c->wake);
		pthread_mutex_unlock(&c->mu);
	}
	return SQLITE_OK;
}

static void *ckpt_main(void *arg)
{
	sq_ckpt *c = arg;
	for (;;) {
		pthread_mutex_lock(&c->mu);
		while (!c->want && !c->stop)
			pthread_cond_wait(&c->wake, &c->mu);
		int stop = c->stop;
		c->want = 0;
		pthread_mutex_unlock(&c->mu);
		/* PASSIVE: as much as can be copied without waiting for anyone.
		 * A failure (a disk error) is the next commit's to report; only
		 * a checkpoint that copied counts. */
		int log = -1, copied = -1;
		int rc = sqlite3_wal_checkpoint_v2(c->db, "main", SQLITE_CHECKPOINT_PASSIVE, &log,
						   &copied);
		pthread_mutex_lock(&c->mu);
		c->done += rc == SQLITE_OK && copied > 0;
		pthread_mutex_unlock(&c->mu);
		if (stop)
			return NULL;
	}
}

int store_sqlite_checkpoint_in_background(store *base, sf_err *err)
{
	sq_store *s = (sq_store *)base;
	if (s->readonly)
		return sf_err_set(
			err, SF_EINVAL,
			"store_checkpoint_in_background: a READONLY handle writes nothing");
	const char *file = sqlite3_db_filename(s->db, "main");
	if (s->ckpt || !file || !*file) /* on already, or no file: nothing to copy */
		return 0;
	sq_ckpt *c = calloc(1, sizeof *c);
	if (!c)
		return sf_err_set(err, SF_ENOMEM, "store_checkpoint_in_background: out of memory");
	int rc = sqlite3_open_v2(file, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	/* A connection finds the WAL on its first read: until then its
	 * checkpoints see no WAL and copy nothing. */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(c->db, "PRAGMA schema_version", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		sf_err_set(err, SF_ESYS, "store_checkpoint_in_background: opening %s: %s", s->path,
			   c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
		sqlite3_close(c->db);
		free(c);
		return SF_ESYS;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->wake, NULL);
	if (pthread_create(&c->thread, NULL, ckpt_main, c)) {
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->mu);
		sqlite3_close(c->db);
		free(c);
		return sf_err_set(err, SF_ESYS, "store_checkpoint_in_background: no thread");
	}
	s->ckpt = c;
	sqlite3_wal_hook(s->db, on_commit, c); /* and no automatic checkpoint any more */
	return 0;
}

unsigned long store_sqlite_background_checkpoints(store *base)
{
	sq_ckpt *c = ((sq_store *)base)->ckpt;
	if (!c)
		return 0;
	pthread_mutex_lock(&c->mu);
	unsigned long n = c->done;
	pthread_mutex_unlock(&c->mu);
	return n;
}

void store_sqlite_ckpt_stop(sq_store *s)
{
	sq_ckpt *c = s->ckpt;
	if (!c)
		return;
	sqlite3_wal_hook(s->db, NULL, NULL);
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	sqlite3_close(c->db);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->mu);
	free(c);
	s->ckpt = NULL;
}
