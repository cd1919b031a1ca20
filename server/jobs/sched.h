/*
 * sched.h - the job scheduler: claims queued jobs from the store, runs them
 * on libuv's worker pool, keeps their leases and records their outcomes.
 *
 * The queue is the store's (store.h, "Leases"): a job is a row, queued
 * until some node claims it. Any number of nodes may share one database
 * (PostgreSQL); on SQLite there is one (store_lock_exclusive). A node
 *
 * - claims the oldest queued job whenever it has a free worker slot: after
 *   a job was submitted here (sched_kick), when a slot frees, and every
 *   second (a job submitted on another node);
 * - holds each running job under a lease of `lease_ms`, renewed by a
 *   heartbeat every lease/3 that also stores the job's progress and brings
 *   back a cancel asked for on another node;
 * - writes the outcome fenced by (node, attempt): a node whose lease was
 *   lost (frozen, cut off, too slow) can record nothing, and drops its run;
 * - rescues, every second, the jobs of every node whose lease has expired:
 *   they go back to queued, or fail once they have lost their node
 *   `max_lost` times, or end cancelled when a cancel was asked for.
 *
 * A job's levels are a pure function of its kind, params and seed, so a
 * job run again after a rescue finds the same levels (content-addressed
 * ids): a rerun costs time, never a different answer.
 *
 * Every store write goes through the store thread (storeq.h); everything
 * here runs on the loop thread except the generators.
 */
#ifndef SF_SCHED_H
#define SF_SCHED_H

#include <uv.h>

#include "../../core/search/ga.h"
#include "../base/metrics.h"
#include "../store/storeq.h"
#include "evalcache.h"
#include "res_pool.h"

typedef struct sched sched;

typedef struct sched_config {
	int workers;       /* jobs running at once on this node */
	int job_threads;   /* evaluation threads per job */
	int job_timeout_s; /* a job's wall-clock budget once running */
	int lease_ms;      /* how long a claim holds without a heartbeat */
	int max_lost;      /* a job that lost its node this often fails */
	char node[64];     /* this node's name: the owner of its leases */
} sched_config;

/* What the scheduler tells its owner (the service), on the loop thread. */
typedef struct sched_hooks {
	/* A generation of a job running here, in the order reported. */
	void (*progress)(void *arg, const char *job_id, const ga_generation *gen);
	/* A job is final in the store (or could not be started): its watchers may end. */
	void (*ended)(void *arg, const char *job_id);
	/* After sched_stop: the last running job is back. */
	void (*stopped)(void *arg);
	void *arg;
} sched_hooks;

/*
 * A scheduler on `loop` reading and writing through `writer`, on the back
 * end named `backend` (store_backend()). `metrics`, `evals` and `resources` are the service's, used by
 * the generators. Starts nothing: sched_start does. NULL when out of memory.
 */
sched *sched_new(uv_loop_t *loop, storeq *writer, const char *backend, const sched_config *cfg,
		 const sched_hooks *hooks, metrics *m, evalcache *evals, res_pool *resources);

/*
 * SQLite's start (one process per database, store_lock_exclusive held):
 * every job the store has queued or running is set back to queued, on the
 * writer before the store thread takes it. Jobs of a kind this binary no
 * longer knows fail, saying so. PostgreSQL skips this: other nodes may be
 * running those jobs; expired leases are rescued instead.
 */
int sched_requeue_all(store *writer, sf_err *err);

/* Starts the timers (heartbeats, rescue, polling) and claims the first jobs. */
void sched_start(sched *s);

/* A job was just queued on this node: claim now if a slot is free. */
void sched_kick(sched *s);

/*
 * The number of queued jobs as this node knows it: counted in the store
 * every second, plus what was queued and minus what was claimed here since.
 * sched_queued_add() counts a job queued (+1) or cancelled while queued (-1).
 */
int sched_queued(const sched *s);
void sched_queued_add(sched *s, int delta);

/* Jobs running on this node. */
int sched_running(const sched *s);

/*
 * Whether other nodes may run jobs of this store (PostgreSQL): then the
 * scheduler shares each running job's progress events through the store
 * (store_append_job_events, with its renewals), for watchers on other
 * nodes to read (store_job_events).
 */
int sched_shared(const sched *s);

/*
 * The data of the progress event of generation `gen` of job `job_id`
 * (GET /v1/jobs/{id}/events): a JSON object as compact text, malloc'ed;
 * NULL when out of memory. The same bytes on every node.
 */
char *sched_progress_json(const char *job_id, const ga_generation *gen);

/*
 * For a job running on this node: 1 and its latest progress in *gen;
 * 0 when it does not run here.
 */
int sched_live(const sched *s, const char *id, ga_generation *gen);

/* Where job `id` stands on this node (sched_local). */
enum { SCHED_NOT_HERE = 0, SCHED_RUNNING = 1, SCHED_RECORDING = 2, SCHED_AWAITING = 3 };

/*
 * Whether job `id` runs on this node: SCHED_RUNNING (its generator runs),
 * SCHED_RECORDING (it has returned; its outcome is with the store thread),
 * SCHED_AWAITING (its outcome waits for the store to take writes), or
 * SCHED_NOT_HERE.
 */
int sched_local(const sched *s, const char *id);

/*
 * A cancel asked for job `id`, already recorded in the store
 * (store_request_cancel): when it runs here, raises its cancel flag so that
 * it stops at its next generation. Returns 1 when it runs here, 0 when not,
 * -1 when it has finished here and its outcome is being recorded.
 */
int sched_cancel_local(sched *s, const char *id);

/*
 * Shutdown: claims nothing more; every running job stops at its next
 * generation and goes back to queued (fenced), for any node to run again.
 * hooks.stopped runs once the last one is back (at once when none runs).
 */
void sched_stop(sched *s);

/* Closes the timers and frees `s` once they are closed. NULL is a no-op. */
void sched_free(sched *s);

#endif
