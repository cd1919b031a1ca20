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

/*
 * The process itself, as the Prometheus client libraries (Go, Python) name
 * and read it on Linux: process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_start_time_seconds, process_open_fds
 * and process_max_fds.
 */
typedef struct metrics_process {
	double cpu_seconds;    /* user plus system CPU time */
	double resident_bytes; /* resident set size */
	double virtual_bytes;  /* virtual memory size */
	double start_time_s;   /* when the process started, seconds since the Unix epoch */
	double open_fds;       /* file descriptors open now */
	double max_fds;        /* the soft RLIMIT_NOFILE */
} metrics_process;

/*
 * Fills *out from /proc/self/stat, /proc/stat (the boot time),
 * /proc/self/fd and getrlimit(RLIMIT_NOFILE), as the client libraries do.
 * Returns 0, or -1 when /proc cannot be read (not Linux, no /proc mounted).
 */
int metrics_read_process(metrics_process *out);

/* A new, empty set of metrics, or NULL when out of memory. */
metrics *metrics_new(void);

/* Frees `m`; NULL is a no-op. */
void metrics_free(metrics *m);

/* The counters workers may bump; valid as long as `m`. */
metrics_shared *metrics_shared_of(metrics *m);

/*
 * Test seam: the function metrics_render() reads the process facts with
 * (metrics_read_process unless replaced; NULL restores it). A reader that
 * returns non-zero leaves the process_* families out of the text.
 */
void metrics_set_process_reader(metrics *m, int (*read)(metrics_process *out));

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
 * starforge_evaluation_cache_misses_total, starforge_enumerations_total,
 * starforge_build_info {version,commit} (always 1; server/base/version.h), then the
 * process_* families of metrics_process (left out when the process facts
 * cannot be read), each with # HELP and # TYPE lines. Returns a malloc'ed NUL-terminated text
 * (caller frees) and its length in *len, or NULL when out of memory.
 */
char *metrics_render(metrics *m, const int64_t jobs_by_state[5], size_t *len);

#endif
