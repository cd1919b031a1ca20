/*
 * metrics.h - the service's counters and histograms, rendered in the
 * Prometheus text exposition format (version 0.0.4) for GET /metrics.
 *
 * Threads: everything is updated on the loop thread, except the counters
 * marked atomic, which worker threads bump directly.
 */
#ifndef SF_METRICS_H
#define SF_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct metrics metrics;

/* Counters that worker threads update. */
typedef struct metrics_shared {
	atomic_uint_fast64_t cache_hits;   /* evaluations answered from the cache */
	atomic_uint_fast64_t cache_misses; /* evaluations that had to be computed */
	atomic_uint_fast64_t enumerations; /* exact evaluations actually computed */
} metrics_shared;

/* A new, empty set of metrics, or NULL when out of memory. */
metrics *metrics_new(void);

/* Frees `m`; NULL is a no-op. */
void metrics_free(metrics *m);

/* The counters workers may bump; valid as long as `m`. */
metrics_shared *metrics_shared_of(metrics *m);

/*
 * Counts one finished request: by route name ("jobs.get", or "unmatched")
 * and status code, and its duration into the request duration histogram
 * (buckets 0.5 ms .. 10 s).
 */
void metrics_request(metrics *m, const char *route, int status, double seconds);

/* A job's time in the queue and its run time, into their histograms. */
void metrics_job_wait(metrics *m, double seconds);
void metrics_job_run(metrics *m, double seconds);

/*
 * Renders every metric as Prometheus text: starforge_http_requests_total
 * {route,status}, starforge_http_request_duration_seconds (histogram),
 * starforge_jobs {state} (gauge, from jobs_by_state[0..4] in the order
 * queued, running, succeeded, failed, cancelled), starforge_job_queue_wait_seconds
 * and starforge_job_run_seconds (histograms), starforge_evaluation_cache_hits_total,
 * starforge_evaluation_cache_misses_total, starforge_enumerations_total, each with
 * # HELP and # TYPE lines. Returns a malloc'ed NUL-terminated text (caller
 * frees) and its length in *len, or NULL when out of memory.
 */
char *metrics_render(metrics *m, const int64_t jobs_by_state[5], size_t *len);

#endif
