/*
 * metrics.c - see metrics.h.
 *
 * Design. Everything but metrics_shared belongs to the loop thread, so there
 * are no locks: the loop records requests and job timings and renders
 * /metrics; workers touch only the three atomics, with relaxed ordering (they
 * are independent tallies; nothing is published through them).
 *
 * Request counters are keyed by (route, status). The set of pairs is open
 * (a route name is whatever the caller passes), so it lives in a growable
 * array kept sorted by (route bytes, status): a lookup is a binary search, a
 * new pair one insertion, and rendering walks the array in order, which
 * makes the output deterministic whatever order requests arrived in.
 *
 * A histogram stores a count per bucket (not cumulative) plus _sum and
 * _count; rendering accumulates. A bucket's bound is inclusive (Prometheus's
 * `le`). Non-finite observations are dropped (one NaN or Inf would poison
 * _sum for the life of the process), and negative ones count as 0 (a
 * duration cannot be negative; a clock step can make it look so).
 *
 * Rendering follows the text exposition format 0.0.4: per family one
 * "# HELP" and one "# TYPE" line, then its samples, families in a fixed
 * order; label values escape '\\', '"' and newline; floats are written in
 * the shortest form that reads back as the same double ("0.0005", "2.5",
 * "10", "+Inf"), counts as integers; every line ends with '\n'.
 */
#include "metrics.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "version.h"

/* ---- histograms ---- */

/* Request latency: 0.5 ms (a cached level) .. 10 s (a slow evaluation). */
static const double REQUEST_BOUNDS[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
					 0.1,    0.25,  0.5,    1,     2.5,  5,     10 };
/* Job wait and run: 1 ms (an idle queue, a tiny job) .. 1 h (a long search). */
static const double JOB_BOUNDS[] = { 0.001, 0.01, 0.1, 0.5, 1,   2.5,  5,   10,
				     30,    60,   120, 300, 600, 1800, 3600 };

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_BUCKETS 16 /* the longest bounds array above */

typedef struct histogram {
	const double *bounds; /* ascending; +Inf is implied after the last */
	size_t nbounds;
	uint64_t counts[MAX_BUCKETS + 1]; /* per bucket; [nbounds] is (last, +Inf) */
	uint64_t count;
	double sum;
} histogram;

static void histogram_init(histogram *h, const double *bounds, size_t nbounds)
{
	memset(h, 0, sizeof *h);
	h->bounds = bounds;
	h->nbounds = nbounds;
}

static void histogram_observe(histogram *h, double v)
{
	if (!isfinite(v))
		return;
	if (v < 0)
		v = 0;
	size_t i = 0;
	while (i < h->nbounds && v > h->bounds[i])
		i++;
	h->counts[i]++;
	h->count++;
	h->sum += v;
}

/* ---- the metrics ---- */

typedef struct request_count {
	char *route; /* owned */
	int status;
	uint64_t count;
} request_count;

struct metrics {
	metrics_shared shared;
	request_count *requests; /* sorted by (route, status) */
	size_t nrequests, cap;
	histogram request_seconds, job_wait, job_run;
	int (*read_process)(metrics_process *out);
};

/*
 * A new, empty set of metrics, or NULL when out of memory. Free it with
 * metrics_free.
 */
metrics *metrics_new(void)
{
	metrics *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	atomic_init(&m->shared.cache_hits, 0);
	atomic_init(&m->shared.cache_misses, 0);
	atomic_init(&m->shared.enumerations, 0);
	histogram_init(&m->request_seconds, REQUEST_BOUNDS, ARRAY_LEN(REQUEST_BOUNDS));
	histogram_init(&m->job_wait, JOB_BOUNDS, ARRAY_LEN(JOB_BOUNDS));
	histogram_init(&m->job_run, JOB_BOUNDS, ARRAY_LEN(JOB_BOUNDS));
	m->read_process = metrics_read_process;
	return m;
}

/*
 * Frees `m` and every route name it copied; NULL is a no-op. No worker may
 * still hold metrics_shared_of(m).
 */
void metrics_free(metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nrequests; i++)
		free(m->requests[i].route);
	free(m->requests);
	free(m);
}

/* The counters workers may bump (atomically); valid as long as `m`. */
metrics_shared *metrics_shared_of(metrics *m)
{
	return m ? &m->shared : NULL;
}

static int request_cmp(const char *route, int status, const request_count *rc)
{
	int c = strcmp(route, rc->route);
	if (c)
		return c;
	return (status > rc->status) - (status < rc->status);
}

/*
 * The counter for (route, status), created at 0 when new; NULL when out of
 * memory.
 */
static request_count *request_slot(metrics *m, const char *route, int status)
{
	size_t lo = 0, hi = m->nrequests;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = request_cmp(route, status, &m->requests[mid]);
		if (c == 0)
			return &m->requests[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (m->nrequests == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		request_count *grown = realloc(m->requests, cap * sizeof *grown);
		if (!grown)
			return NULL;
		m->requests = grown;
		m->cap = cap;
	}
	char *copy = strdup(route);
	if (!copy)
		return NULL;
	memmove(&m->requests[lo + 1], &m->requests[lo],
		(m->nrequests - lo) * sizeof m->requests[0]);
	m->requests[lo] = (request_count){ .route = copy, .status = status, .count = 0 };
	m->nrequests++;
	return &m->requests[lo];
}

/*
 * See metrics.h. `route` is copied (NULL counts as "unmatched"); any bytes
 * are allowed, rendering escapes them. When memory runs out for a new
 * (route, status) pair, that request is left out of the counter but still
 * observed by the duration histogram. Loop thread only.
 */
void metrics_request(metrics *m, const char *route, int status, double seconds)
{
	if (!m)
		return;
	request_count *rc = request_slot(m, route ? route : "unmatched", status);
	if (rc)
		rc->count++;
	histogram_observe(&m->request_seconds, seconds);
}

/*
 * A job's time in the queue, into starforge_job_queue_wait_seconds. Loop
 * thread only.
 */
void metrics_job_wait(metrics *m, double seconds)
{
	if (m)
		histogram_observe(&m->job_wait, seconds);
}

/* A job's run time, into starforge_job_run_seconds. Loop thread only. */
void metrics_job_run(metrics *m, double seconds)
{
	if (m)
		histogram_observe(&m->job_run, seconds);
}

/* ---- the process ---- */

/* The system's boot time ("btime" of /proc/stat), seconds since the epoch; -1 if unknown. */
static double boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	char line[256];
	double btime = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long long v;
		if (sscanf(line, "btime %llu", &v) == 1) {
			btime = (double)v;
			break;
		}
	}
	fclose(f);
	return btime;
}

/*
 * See metrics.h. /proc/self/stat's second field, the command name in
 * parentheses, may itself hold spaces and ')', so the fields are counted
 * from the last ')': then state is field 3, utime and stime (clock ticks)
 * 14 and 15, starttime (ticks after boot) 22, vsize (bytes) 23 and rss
 * (pages) 24, as proc(5) numbers them.
 */
int metrics_read_process(metrics_process *out)
{
	char stat[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	if (!f)
		return -1;
	size_t n = fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n] = '\0';
	const char *p = strrchr(stat, ')');
	unsigned long long utime, stime, start, vsize;
	long long rss;
	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
			 "%*d %*d %llu %llu %lld",
			 &utime, &stime, &start, &vsize, &rss) != 5)
		return -1;
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	double btime = boot_time();
	if (ticks <= 0 || page <= 0 || btime < 0)
		return -1;

	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	double fds = 0;
	/* The descriptor opendir holds is counted, as the client libraries count it. */
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		fds += e->d_name[0] != '.';
	closedir(d);

	struct rlimit rl;
	out->max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
			       ? (double)rl.rlim_cur
			       : INFINITY;
	out->cpu_seconds = (double)(utime + stime) / (double)ticks;
	out->resident_bytes = (double)rss * (double)page;
	out->virtual_bytes = (double)vsize;
	out->start_time_s = btime + (double)start / (double)ticks;
	out->open_fds = fds;
	return 0;
}

/* See metrics.h: the reader metrics_render() calls, NULL for the default. */
void metrics_set_process_reader(metrics *m, int (*read)(metrics_process *out))
{
	m->read_process = read ? read : metrics_read_process;
}

/* ---- rendering ---- */

typedef struct text {
	char *buf;
	size_t len, cap;
	bool oom;
} text;

static void text_reserve(text *t, size_t more)
{
	if (t->oom || t->len + more + 1 <= t->cap)
		return;
	size_t cap = t->cap ? t->cap : 4096;
	while (t->len + more + 1 > cap)
		cap *= 2;
	char *grown = realloc(t->buf, cap);
	if (!grown) {
		t->oom = true;
		return;
	}
	t->buf = grown;
	t->cap = cap;
}

static void text_put(text *t, const char *s, size_t n)
{
	text_reserve(t, n);
	if (t->oom)
		return;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static void text_puts(text *t, const char *s)
{
	text_put(t, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void text_printf(text *t, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->oom = true;
		return;
	}
	if ((size_t)n < sizeof small) {
		text_put(t, small, (size_t)n);
		return;
	}
	text_reserve(t, (size_t)n);
	if (t->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* A label value between double quotes, with '\\', '"' and newline escaped. */
static void text_label_value(text *t, const char *s)
{
	text_put(t, "\"", 1);
	for (; *s; s++) {
		if (*s == '\\')
			text_put(t, "\\\\", 2);
		else if (*s == '"')
			text_put(t, "\\\"", 2);
		else if (*s == '\n')
			text_put(t, "\\n", 2);
		else
			text_put(t, s, 1);
	}
	text_put(t, "\"", 1);
}

/*
 * A float in the fewest significant digits that strtod reads back as `v`
 * ("0.0005", "2.5", "1e-05"), whole numbers below 1e15 in full ("10",
 * "3600", where %g alone would write "1e+01"), infinities as "+Inf" and
 * "-Inf", NaN as "NaN". Bucket bounds thus read as people write them.
 */
static void text_double(text *t, double v)
{
	if (isnan(v)) {
		text_puts(t, "NaN");
		return;
	}
	if (isinf(v)) {
		text_puts(t, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	char num[32];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(num, sizeof num, "%.*g", prec, v);
		if (strtod(num, NULL) == v)
			break;
	}
	/*
	 * %g switches to an exponent once the exponent reaches the precision,
	 * which for a shortest form means a whole number ("3.6e+03"). Below
	 * 1e15 such a number is exact, so %.0f writes the same value in full.
	 */
	if (strstr(num, "e+") && fabs(v) < 1e15)
		snprintf(num, sizeof num, "%.0f", v);
	text_puts(t, num);
}

/* The "# HELP" and "# TYPE" lines of a family (help texts hold no '\\' or newline). */
static void text_family(text *t, const char *name, const char *type, const char *help)
{
	text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void text_histogram(text *t, const char *name, const char *help, const histogram *h)
{
	text_family(t, name, "histogram", help);
	uint64_t cumulative = 0;
	for (size_t i = 0; i < h->nbounds; i++) {
		cumulative += h->counts[i];
		text_printf(t, "%s_bucket{le=\"", name);
		text_double(t, h->bounds[i]);
		text_printf(t, "\"} %" PRIu64 "\n", cumulative);
	}
	text_printf(t, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, h->count);
	text_printf(t, "%s_sum ", name);
	text_double(t, h->sum);
	text_printf(t, "\n%s_count %" PRIu64 "\n", name, h->count);
}

static void text_counter(text *t, const char *name, const char *help,
			 const atomic_uint_fast64_t *value)
{
	text_family(t, name, "counter", help);
	uint64_t v = atomic_load_explicit(value, memory_order_relaxed);
	text_printf(t, "%s %" PRIu64 "\n", name, v);
}

/*
 * See metrics.h. `jobs_by_state` may be NULL, which renders every state as
 * 0. Families come in the order metrics.h lists them, request counters
 * sorted by route (byte order) then status. Loop thread only (the atomics
 * are read as they stand; workers may bump them meanwhile).
 */
char *metrics_render(metrics *m, const int64_t jobs_by_state[5], size_t *len)
{
	static const char *const STATES[5] = { "queued", "running", "succeeded", "failed",
					       "cancelled" };
	text t = { 0 };
	if (!m)
		return NULL;

	const char *name = "starforge_http_requests_total";
	text_family(&t, name, "counter", "HTTP requests answered, by route name and status code.");
	for (size_t i = 0; i < m->nrequests; i++) {
		const request_count *rc = &m->requests[i];
		text_printf(&t, "%s{route=", name);
		text_label_value(&t, rc->route);
		text_printf(&t, ",status=\"%d\"} %" PRIu64 "\n", rc->status, rc->count);
	}

	text_histogram(&t, "starforge_http_request_duration_seconds",
		       "Time from a request's arrival to its response, in seconds.",
		       &m->request_seconds);

	name = "starforge_jobs";
	text_family(&t, name, "gauge", "Jobs in the store, by state.");
	for (int i = 0; i < 5; i++)
		text_printf(&t, "%s{state=\"%s\"} %" PRId64 "\n", name, STATES[i],
			    jobs_by_state ? jobs_by_state[i] : 0);

	text_histogram(&t, "starforge_job_queue_wait_seconds",
		       "Time a job spent queued before it started, in seconds.", &m->job_wait);
	text_histogram(&t, "starforge_job_run_seconds", "Time a job spent running, in seconds.",
		       &m->job_run);

	text_counter(&t, "starforge_evaluation_cache_hits_total",
		     "Lattice evaluations answered from the cache.", &m->shared.cache_hits);
	text_counter(&t, "starforge_evaluation_cache_misses_total",
		     "Lattice evaluations not found in the cache.", &m->shared.cache_misses);
	text_counter(&t, "starforge_enumerations_total",
		     "Exact lattice enumerations actually computed.", &m->shared.enumerations);

	name = "starforge_build_info";
	text_family(&t, name, "gauge",
		    "Always 1; its labels are the version and the git commit of the binary.");
	text_printf(&t, "%s{version=", name);
	text_label_value(&t, sf_version);
	text_puts(&t, ",commit=");
	text_label_value(&t, sf_commit);
	text_puts(&t, "} 1\n");

	/* The names, types and help texts of the Go and Python client libraries. */
	metrics_process proc;
	if (m->read_process(&proc) == 0) {
		const struct {
			const char *name, *type, *help;
			double value;
		} facts[] = {
			{ "process_cpu_seconds_total", "counter",
			  "Total user and system CPU time spent in seconds.", proc.cpu_seconds },
			{ "process_open_fds", "gauge", "Number of open file descriptors.",
			  proc.open_fds },
			{ "process_max_fds", "gauge", "Maximum number of open file descriptors.",
			  proc.max_fds },
			{ "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
			  proc.virtual_bytes },
			{ "process_resident_memory_bytes", "gauge",
			  "Resident memory size in bytes.", proc.resident_bytes },
			{ "process_start_time_seconds", "gauge",
			  "Start time of the process since unix epoch in seconds.",
			  proc.start_time_s },
		};
		for (size_t i = 0; i < ARRAY_LEN(facts); i++) {
			text_family(&t, facts[i].name, facts[i].type, facts[i].help);
			text_printf(&t, "%s ", facts[i].name);
			text_double(&t, facts[i].value);
			text_puts(&t, "\n");
		}
	}

	if (t.oom) {
		free(t.buf);
		return NULL;
	}
	if (len)
		*len = t.len;
	return t.buf;
}
