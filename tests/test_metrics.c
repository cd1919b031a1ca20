/*
 * test_metrics.c - the service's metrics (server/base/metrics.h) and their
 * Prometheus text rendering.
 *
 * Every check reads the rendered text back through the small, strict parser
 * below, written from the text exposition format 0.0.4 and not from
 * metrics.c: a line is either "# HELP name text", "# TYPE name type" or
 * "name{label="value",...} value"; label values unescape \\, \" and \n and
 * nothing else; every line ends with '\n'. On top of the format the parser
 * checks what Prometheus requires of a family: one HELP and one TYPE, TYPE
 * before the family's first sample, all of a family's lines together.
 * Expected values are computed independently from what each test recorded;
 * observed durations are exact binary fractions, so sums compare exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../server/base/metrics.h"
#include "../server/base/version.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- a strict parser of the text format ---- */

/*
 * When set (in a forked child, see test_parser_rejects), a parse failure
 * exits the process with status 3 instead of failing the current test.
 */
static bool reject_by_exit;

__attribute__((format(printf, 1, 2))) _Noreturn static void parse_fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (reject_by_exit)
		_exit(3);
	fail_msg("%s", msg);
	abort(); /* not reached: fail_msg leaves the test */
}

#define MAX_LABELS 4

typedef struct label {
	char *name;
	char *value; /* unescaped */
} label;

typedef struct sample {
	char *name;
	char *family; /* the family it belongs to */
	int nlabels;
	label labels[MAX_LABELS];
	char *raw_value;
	double value;
	int line;
} sample;

typedef struct family {
	char *name;
	char *help; /* unescaped; NULL until seen */
	char *type; /* NULL until seen */
	int nsamples;
} family;

typedef struct exposition {
	sample *samples;
	int nsamples;
	family *families;
	int nfamilies;
} exposition;

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	assert_non_null(d);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* A metric name at *p (advanced past it); fails the test on a bad one. */
static char *parse_name(const char **p, int line)
{
	const char *s = *p;
	if (!is_name_start(*s))
		parse_fail("line %d: bad metric or label name at \"%s\"", line, s);
	while (is_name_char(*s))
		s++;
	char *name = dup_range(*p, (size_t)(s - *p));
	*p = s;
	return name;
}

static family *family_find(exposition *e, const char *name)
{
	for (int i = 0; i < e->nfamilies; i++)
		if (strcmp(e->families[i].name, name) == 0)
			return &e->families[i];
	return NULL;
}

static family *family_get(exposition *e, const char *name)
{
	family *f = family_find(e, name);
	if (f)
		return f;
	e->families = realloc(e->families, (size_t)(e->nfamilies + 1) * sizeof *e->families);
	assert_non_null(e->families);
	f = &e->families[e->nfamilies++];
	*f = (family){ .name = strdup(name) };
	assert_non_null(f->name);
	return f;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The family of sample `name`: itself, or a histogram's _bucket/_sum/_count. */
static family *family_of_sample(exposition *e, const char *name, int line)
{
	family *f = family_find(e, name);
	if (f && f->type)
		return f;
	static const char *const suffixes[] = { "_bucket", "_sum", "_count" };
	for (int i = 0; i < ARRAY_LEN(suffixes); i++) {
		if (!ends_with(name, suffixes[i]))
			continue;
		char *base = dup_range(name, strlen(name) - strlen(suffixes[i]));
		f = family_find(e, base);
		free(base);
		if (f && f->type && strcmp(f->type, "histogram") == 0)
			return f;
	}
	parse_fail("line %d: sample %s has no # TYPE before it", line, name);
	return NULL;
}

/* Unescapes a HELP text (\\ and \n). */
static char *unescape_help(const char *s, size_t n, int line)
{
	char *out = malloc(n + 1), *o = out;
	assert_non_null(out);
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		if (++i == n)
			parse_fail("line %d: HELP ends in a lone backslash", line);
		if (s[i] == '\\')
			*o++ = '\\';
		else if (s[i] == 'n')
			*o++ = '\n';
		else
			parse_fail("line %d: bad escape \\%c in HELP", line, s[i]);
	}
	*o = '\0';
	return out;
}

/* A double-quoted label value at *p, unescaped; *p is left past the closing quote. */
static char *parse_label_value(const char **p, int line)
{
	const char *s = *p;
	if (*s++ != '"')
		parse_fail("line %d: label value must start with '\"'", line);
	char *out = malloc(strlen(s) + 1), *o = out;
	assert_non_null(out);
	for (;; s++) {
		if (*s == '\0')
			parse_fail("line %d: unterminated label value", line);
		if (*s == '"')
			break;
		if (*s != '\\') {
			*o++ = *s;
			continue;
		}
		s++;
		if (*s == '\\')
			*o++ = '\\';
		else if (*s == '"')
			*o++ = '"';
		else if (*s == 'n')
			*o++ = '\n';
		else
			parse_fail("line %d: bad escape in label value", line);
	}
	*o = '\0';
	*p = s + 1;
	return out;
}

static double parse_value(const char *s, int line)
{
	if (strcmp(s, "+Inf") == 0)
		return INFINITY;
	if (strcmp(s, "-Inf") == 0)
		return -INFINITY;
	if (strcmp(s, "NaN") == 0)
		return NAN;
	char *end;
	double v = strtod(s, &end);
	/* strtod also reads "inf", "nan" and hex floats, which the format does not have. */
	if (end == s || *end || strpbrk(s, "xXiInN"))
		parse_fail("line %d: bad sample value \"%s\"", line, s);
	return v;
}

static void parse_comment(exposition *e, const char *text, int line, family **current)
{
	bool help = strncmp(text, "# HELP ", 7) == 0;
	bool type = strncmp(text, "# TYPE ", 7) == 0;
	if (!help && !type)
		parse_fail("line %d: a comment that is neither HELP nor TYPE: \"%s\"", line, text);
	const char *p = text + 7;
	char *name = parse_name(&p, line);
	if (*p != ' ')
		parse_fail("line %d: no space after the name in \"%s\"", line, text);
	p++;
	family *f = family_get(e, name);
	free(name);
	if (f != *current && (f->help || f->type || f->nsamples))
		parse_fail("line %d: family %s split by another family", line, f->name);
	if (f->nsamples)
		parse_fail("line %d: %s comes after samples of %s", line, help ? "HELP" : "TYPE",
			   f->name);
	*current = f;
	if (help) {
		if (f->help)
			parse_fail("line %d: second HELP for %s", line, f->name);
		f->help = unescape_help(p, strlen(p), line);
	} else {
		if (f->type)
			parse_fail("line %d: second TYPE for %s", line, f->name);
		static const char *const types[] = { "counter", "gauge", "histogram", "summary",
						     "untyped" };
		bool known = false;
		for (int i = 0; i < ARRAY_LEN(types); i++)
			known |= strcmp(p, types[i]) == 0;
		if (!known)
			parse_fail("line %d: unknown type \"%s\"", line, p);
		f->type = strdup(p);
	}
}

static void parse_sample(exposition *e, const char *text, int line, family **current)
{
	sample s = { .line = line };
	const char *p = text;
	s.name = parse_name(&p, line);
	if (*p == '{') {
		p++;
		while (*p != '}') {
			if (s.nlabels == MAX_LABELS)
				parse_fail("line %d: too many labels", line);
			label *l = &s.labels[s.nlabels++];
			l->name = parse_name(&p, line);
			if (*p++ != '=')
				parse_fail("line %d: label %s without '='", line, l->name);
			l->value = parse_label_value(&p, line);
			for (int i = 0; i < s.nlabels - 1; i++)
				if (strcmp(s.labels[i].name, l->name) == 0)
					parse_fail("line %d: label %s twice", line, l->name);
			if (*p == ',')
				p++;
			else if (*p != '}')
				parse_fail("line %d: expected ',' or '}' after a label", line);
		}
		p++;
	}
	if (*p++ != ' ')
		parse_fail("line %d: expected one space before the value", line);
	if (strchr(p, ' '))
		parse_fail("line %d: unexpected timestamp or trailing text", line);
	s.raw_value = strdup(p);
	s.value = parse_value(p, line);

	family *f = family_of_sample(e, s.name, line);
	if (f != *current)
		parse_fail("line %d: sample %s separated from its family's HELP and TYPE", line,
			   s.name);
	if (!f->help)
		parse_fail("line %d: family %s has no HELP", line, f->name);
	f->nsamples++;
	s.family = f->name;
	e->samples = realloc(e->samples, (size_t)(e->nsamples + 1) * sizeof *e->samples);
	assert_non_null(e->samples);
	e->samples[e->nsamples++] = s;
}

/* Parses the whole text; any deviation from the format fails the test. */
static exposition parse(const char *text, size_t len)
{
	exposition e = { 0 };
	if (strlen(text) != len)
		parse_fail("the length is %zu, the text %zu bytes", len, strlen(text));
	if (len == 0 || text[len - 1] != '\n')
		parse_fail("the text does not end with a newline");
	family *current = NULL;
	int line = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		char *one = dup_range(p, (size_t)(nl - p));
		line++;
		if (one[0] == '\0')
			parse_fail("line %d: empty line", line);
		if (one[0] == '#')
			parse_comment(&e, one, line, &current);
		else
			parse_sample(&e, one, line, &current);
		free(one);
		p = nl + 1;
	}
	for (int i = 0; i < e.nfamilies; i++) {
		if (!e.families[i].help || !e.families[i].type)
			parse_fail("family %s lacks HELP or TYPE", e.families[i].name);
	}
	return e;
}

static void exposition_free(exposition *e)
{
	for (int i = 0; i < e->nsamples; i++) {
		sample *s = &e->samples[i];
		free(s->name);
		free(s->raw_value);
		for (int k = 0; k < s->nlabels; k++) {
			free(s->labels[k].name);
			free(s->labels[k].value);
		}
	}
	for (int i = 0; i < e->nfamilies; i++) {
		free(e->families[i].name);
		free(e->families[i].help);
		free(e->families[i].type);
	}
	free(e->samples);
	free(e->families);
}

static const char *label_of(const sample *s, const char *name)
{
	for (int i = 0; i < s->nlabels; i++)
		if (strcmp(s->labels[i].name, name) == 0)
			return s->labels[i].value;
	return NULL;
}

/* The one sample named `name` with no labels; fails unless there is exactly one. */
static const sample *single(const exposition *e, const char *name)
{
	const sample *found = NULL;
	for (int i = 0; i < e->nsamples; i++) {
		if (strcmp(e->samples[i].name, name) != 0)
			continue;
		if (found)
			parse_fail("%s appears twice", name);
		found = &e->samples[i];
	}
	if (!found)
		parse_fail("%s is missing", name);
	if (found->nlabels != 0)
		parse_fail("%s has labels", name);
	return found;
}

/* True when `raw` is a plain unsigned decimal integer, as counts must be. */
static bool is_integer(const char *raw)
{
	if (!*raw)
		return false;
	for (; *raw; raw++)
		if (*raw < '0' || *raw > '9')
			return false;
	return true;
}

static exposition render_parse(metrics *m, const int64_t jobs[5])
{
	size_t len = 0;
	char *text = metrics_render(m, jobs, &len);
	assert_non_null(text);
	exposition e = parse(text, len);
	free(text);
	return e;
}

/* ---- histogram checks against what the test observed ---- */

/*
 * Checks histogram `name` in `e` against the observations obs[0..n-1] (NaN
 * and infinities dropped, negatives counted as 0): every bucket holds the
 * number of observations <= its bound, bounds ascend and end in +Inf, the
 * +Inf bucket equals _count, _sum is the exact sum. Returns the number of
 * finite bounds.
 */
static int check_histogram(const exposition *e, const char *name, const double *obs, int n)
{
	const family *f = NULL;
	for (int i = 0; i < e->nfamilies; i++)
		if (strcmp(e->families[i].name, name) == 0)
			f = &e->families[i];
	if (!f)
		parse_fail("histogram %s is missing", name);
	if (strcmp(f->type, "histogram") != 0)
		parse_fail("%s is a %s", name, f->type);

	uint64_t want_count = 0;
	double want_sum = 0;
	for (int i = 0; i < n; i++) {
		if (!isfinite(obs[i]))
			continue;
		want_count++;
		want_sum += obs[i] < 0 ? 0 : obs[i];
	}

	char bucket[128], sum[128], count[128];
	snprintf(bucket, sizeof bucket, "%s_bucket", name);
	snprintf(sum, sizeof sum, "%s_sum", name);
	snprintf(count, sizeof count, "%s_count", name);

	double prev_le = -INFINITY, prev_count = -1;
	int nbuckets = 0;
	bool saw_inf = false;
	for (int i = 0; i < e->nsamples; i++) {
		const sample *s = &e->samples[i];
		if (strcmp(s->name, bucket) != 0)
			continue;
		if (saw_inf)
			parse_fail("%s: a bucket after le=\"+Inf\"", name);
		const char *le_text = label_of(s, "le");
		if (s->nlabels != 1 || !le_text)
			parse_fail("%s: a bucket needs exactly the label le", name);
		double le = parse_value(le_text, s->line);
		if (!(le > prev_le))
			parse_fail("%s: le=\"%s\" does not ascend", name, le_text);
		if (!is_integer(s->raw_value))
			parse_fail("%s: bucket count \"%s\" is not an integer", name, s->raw_value);
		if (s->value < prev_count)
			parse_fail("%s: bucket le=\"%s\" decreases", name, le_text);
		uint64_t want = 0;
		for (int k = 0; k < n; k++)
			if (isfinite(obs[k]) && (obs[k] < 0 ? 0 : obs[k]) <= le)
				want++;
		if (s->value != (double)want)
			parse_fail("%s: bucket le=\"%s\" holds %s, want %" PRIu64, name, le_text,
				   s->raw_value, want);
		prev_le = le;
		prev_count = s->value;
		if (isinf(le))
			saw_inf = true;
		else
			nbuckets++;
	}
	if (!saw_inf)
		parse_fail("%s: no le=\"+Inf\" bucket", name);
	const sample *c = single(e, count);
	if (!is_integer(c->raw_value) || c->value != prev_count)
		parse_fail("%s: _count %s differs from the +Inf bucket", name, c->raw_value);
	if (c->value != (double)want_count)
		parse_fail("%s: _count %s, want %" PRIu64, name, c->raw_value, want_count);
	const sample *s = single(e, sum);
	if (s->value != want_sum)
		parse_fail("%s: _sum %s, want %.17g", name, s->raw_value, want_sum);
	return nbuckets;
}

/* ---- the tests ---- */

/* A fresh set renders every family, with the right types, all zero. */
static void test_empty(void **state)
{
	(void)state;
	metrics *m = metrics_new();
	assert_non_null(m);
	exposition e = render_parse(m, NULL);

	static const char *const families[][2] = {
		{ "starforge_http_requests_total", "counter" },
		{ "starforge_http_request_duration_seconds", "histogram" },
		{ "starforge_jobs", "gauge" },
		{ "starforge_job_queue_wait_seconds", "histogram" },
		{ "starforge_job_run_seconds", "histogram" },
		{ "starforge_evaluation_cache_hits_total", "counter" },
		{ "starforge_evaluation_cache_misses_total", "counter" },
		{ "starforge_enumerations_total", "counter" },
		{ "starforge_build_info", "gauge" },
		{ "process_cpu_seconds_total", "counter" },
		{ "process_open_fds", "gauge" },
		{ "process_max_fds", "gauge" },
		{ "process_virtual_memory_bytes", "gauge" },
		{ "process_resident_memory_bytes", "gauge" },
		{ "process_start_time_seconds", "gauge" },
	};
	assert_int_equal(e.nfamilies, ARRAY_LEN(families));
	for (int i = 0; i < ARRAY_LEN(families); i++) {
		const family *f = &e.families[i];
		assert_string_equal(f->name, families[i][0]);
		assert_string_equal(f->type, families[i][1]);
		assert_true(strlen(f->help) > 0);
	}
	assert_int_equal(e.families[0].nsamples, 0); /* no request yet */

	check_histogram(&e, "starforge_http_request_duration_seconds", NULL, 0);
	/* Buckets 0.5 ms .. 10 s, as metrics.h promises, bounds written plainly. */
	static const char *const bounds[] = { "0.0005", "0.001", "0.0025", "0.005", "0.01",
					      "0.025",  "0.05",  "0.1",    "0.25",  "0.5",
					      "1",      "2.5",   "5",      "10",    "+Inf" };
	int k = 0;
	for (int i = 0; i < e.nsamples; i++) {
		const sample *s = &e.samples[i];
		if (strcmp(s->name, "starforge_http_request_duration_seconds_bucket") != 0)
			continue;
		assert_true(k < ARRAY_LEN(bounds));
		assert_string_equal(label_of(s, "le"), bounds[k]);
		k++;
	}
	assert_int_equal(k, ARRAY_LEN(bounds));
	check_histogram(&e, "starforge_job_queue_wait_seconds", NULL, 0);
	check_histogram(&e, "starforge_job_run_seconds", NULL, 0);
	assert_true(single(&e, "starforge_evaluation_cache_hits_total")->value == 0);
	assert_true(single(&e, "starforge_evaluation_cache_misses_total")->value == 0);
	assert_true(single(&e, "starforge_enumerations_total")->value == 0);
	exposition_free(&e);
	metrics_free(m);
	metrics_free(NULL);
}

/* The five job states, in order, with the caller's numbers. */
static void test_jobs_gauge(void **state)
{
	(void)state;
	static const char *const states[5] = { "queued", "running", "succeeded", "failed",
					       "cancelled" };
	const int64_t jobs[5] = { 7, 2, 40123, 1, INT64_MAX };
	metrics *m = metrics_new();
	assert_non_null(m);
	exposition e = render_parse(m, jobs);
	int seen = 0;
	for (int i = 0; i < e.nsamples; i++) {
		const sample *s = &e.samples[i];
		if (strcmp(s->name, "starforge_jobs") != 0)
			continue;
		assert_true(seen < 5);
		assert_int_equal(s->nlabels, 1);
		assert_string_equal(label_of(s, "state"), states[seen]);
		char want[32];
		snprintf(want, sizeof want, "%" PRId64, jobs[seen]);
		assert_string_equal(s->raw_value, want);
		seen++;
	}
	assert_int_equal(seen, 5);
	exposition_free(&e);

	/* NULL counts: every state is still there, at 0. */
	e = render_parse(m, NULL);
	seen = 0;
	for (int i = 0; i < e.nsamples; i++) {
		if (strcmp(e.samples[i].name, "starforge_jobs") == 0) {
			assert_string_equal(label_of(&e.samples[i], "state"), states[seen]);
			assert_string_equal(e.samples[i].raw_value, "0");
			seen++;
		}
	}
	assert_int_equal(seen, 5);
	exposition_free(&e);
	metrics_free(m);
}

#define NROUTES 60
#define NSTATUSES 20

static int pair_count(int r, int s)
{
	return (r * 7 + s * 3) % 5 + 1;
}

static int status_code(int s)
{
	static const int codes[NSTATUSES] = { 200, 201, 202, 204, 301, 304, 400, 401, 403, 404,
					      405, 406, 409, 413, 415, 422, 429, 500, 503, 99 };
	return codes[s];
}

/* Feeds every (route, status) pair its count, visiting pairs in an order set by `stride`. */
static void feed_requests(metrics *m, int stride)
{
	const int total = NROUTES * NSTATUSES;
	for (int round = 0; round < 5; round++) {
		for (int k = 0; k < total; k++) {
			int idx = (int)(((long)k * stride) % total);
			int r = idx / NSTATUSES, s = idx % NSTATUSES;
			if (round >= pair_count(r, s))
				continue;
			char route[32];
			snprintf(route, sizeof route, "route.%02d", r);
			metrics_request(m, route, status_code(s), 0.25);
		}
	}
}

/* 1200 distinct pairs, each counted exactly, sorted, rendered the same whatever the order. */
/* Process facts that do not move, for renders compared byte for byte. */
static int fixed_process(metrics_process *out)
{
	*out = (metrics_process){ .cpu_seconds = 12.5,
				  .resident_bytes = 7340032,
				  .virtual_bytes = 123456789012.0,
				  .start_time_s = 1700000000.25,
				  .open_fds = 9,
				  .max_fds = 1048576 };
	return 0;
}

static int no_process(metrics_process *out)
{
	(void)out;
	return -1;
}

static void test_request_counters(void **state)
{
	(void)state;
	metrics *a = metrics_new(), *b = metrics_new();
	assert_non_null(a);
	assert_non_null(b);
	/* The process facts change between two renders: fixed ones here. */
	metrics_set_process_reader(a, fixed_process);
	metrics_set_process_reader(b, fixed_process);
	feed_requests(a, 1);
	feed_requests(b, 7); /* 7 is prime to 1200: a permutation */

	exposition e = render_parse(a, NULL);
	static int seen[NROUTES][NSTATUSES];
	memset(seen, 0, sizeof seen);
	int n = 0, total = 0;
	const sample *prev = NULL;
	for (int i = 0; i < e.nsamples; i++) {
		const sample *s = &e.samples[i];
		if (strcmp(s->name, "starforge_http_requests_total") != 0)
			continue;
		assert_int_equal(s->nlabels, 2);
		const char *route = label_of(s, "route"), *status = label_of(s, "status");
		assert_non_null(route);
		assert_non_null(status);
		int r = -1, code = -1, si = -1;
		assert_int_equal(sscanf(route, "route.%d", &r), 1);
		assert_int_equal(sscanf(status, "%d", &code), 1);
		for (int k = 0; k < NSTATUSES; k++)
			if (status_code(k) == code)
				si = k;
		assert_true(r >= 0 && r < NROUTES && si >= 0);
		if (seen[r][si]++)
			fail_msg("route %s status %s rendered twice", route, status);
		assert_true(is_integer(s->raw_value));
		if (s->value != pair_count(r, si))
			fail_msg("route %s status %s: %s, want %d", route, status, s->raw_value,
				 pair_count(r, si));
		/* Sorted by route, then by status as a number. */
		if (prev) {
			int c = strcmp(label_of(prev, "route"), route);
			int prev_code = atoi(label_of(prev, "status"));
			assert_true(c < 0 || (c == 0 && prev_code < code));
		}
		prev = s;
		n++;
		total += (int)s->value;
	}
	assert_int_equal(n, NROUTES * NSTATUSES);
	/* Every request also went into the duration histogram, at 0.25 s. */
	const sample *count = single(&e, "starforge_http_request_duration_seconds_count");
	assert_true(count->value == total);
	assert_true(single(&e, "starforge_http_request_duration_seconds_sum")->value ==
		    total * 0.25);
	exposition_free(&e);

	size_t len_a = 0, len_b = 0;
	char *text_a = metrics_render(a, NULL, &len_a), *text_b = metrics_render(b, NULL, &len_b);
	assert_non_null(text_a);
	assert_non_null(text_b);
	assert_int_equal(len_a, len_b);
	assert_string_equal(text_a, text_b);
	free(text_a);
	free(text_b);
	metrics_free(a);
	metrics_free(b);
}

/* A NULL route name counts as "unmatched"; the same route under two statuses is two samples. */
static void test_unmatched(void **state)
{
	(void)state;
	metrics *m = metrics_new();
	assert_non_null(m);
	metrics_request(m, NULL, 404, 0.001);
	metrics_request(m, "unmatched", 404, 0.001);
	metrics_request(m, "unmatched", 405, 0.001);
	exposition e = render_parse(m, NULL);
	int n = 0;
	for (int i = 0; i < e.nsamples; i++) {
		const sample *s = &e.samples[i];
		if (strcmp(s->name, "starforge_http_requests_total") != 0)
			continue;
		assert_string_equal(label_of(s, "route"), "unmatched");
		const char *status = label_of(s, "status");
		assert_string_equal(s->raw_value, strcmp(status, "404") == 0 ? "2" : "1");
		n++;
	}
	assert_int_equal(n, 2);
	exposition_free(&e);
	metrics_free(m);
}

/* Cumulative buckets, inclusive bounds, +Inf == _count, exact _sum; odd inputs. */
static void test_histograms(void **state)
{
	(void)state;
	metrics *m = metrics_new();
	assert_non_null(m);
	/* Exact binary fractions; several sit exactly on a bound (0.5, 1, 2.5, 5, 10). */
	const double req[] = { 0.25, 0.5,  0.5,       1,        2.5,      5,     10,
			       16,   4096, 0.0078125, 0.75,     3.5,      0.125, 1e-9,
			       0,    -0.5, NAN,       INFINITY, -INFINITY };
	const double wait[] = { 0.5, 1, 30, 60, 90, 3600, 7200, 0.001953125 };
	const double run[] = { 1800, 0.25, 0.25, 0.25 };
	for (int i = 0; i < ARRAY_LEN(req); i++)
		metrics_request(m, "levels.get", 200, req[i]);
	for (int i = 0; i < ARRAY_LEN(wait); i++)
		metrics_job_wait(m, wait[i]);
	for (int i = 0; i < ARRAY_LEN(run); i++)
		metrics_job_run(m, run[i]);

	exposition e = render_parse(m, NULL);
	check_histogram(&e, "starforge_http_request_duration_seconds", req, ARRAY_LEN(req));
	check_histogram(&e, "starforge_job_queue_wait_seconds", wait, ARRAY_LEN(wait));
	check_histogram(&e, "starforge_job_run_seconds", run, ARRAY_LEN(run));
	/* The request counter counts every request, dropped durations included. */
	for (int i = 0; i < e.nsamples; i++)
		if (strcmp(e.samples[i].name, "starforge_http_requests_total") == 0)
			assert_true(e.samples[i].value == ARRAY_LEN(req));
	exposition_free(&e);
	metrics_free(m);
}

typedef struct bumper {
	metrics_shared *shared;
	int rounds;
} bumper;

static void *bump(void *arg)
{
	const bumper *b = arg;
	for (int i = 0; i < b->rounds; i++) {
		atomic_fetch_add_explicit(&b->shared->cache_hits, 1, memory_order_relaxed);
		if (i % 3 == 0)
			atomic_fetch_add_explicit(&b->shared->cache_misses, 1,
						  memory_order_relaxed);
		if (i % 5 == 0)
			atomic_fetch_add_explicit(&b->shared->enumerations, 2,
						  memory_order_relaxed);
	}
	return NULL;
}

/* Counters bumped from worker threads appear in the text. */
static void test_shared_atomics(void **state)
{
	(void)state;
	enum { THREADS = 4, ROUNDS = 30000 };
	metrics *m = metrics_new();
	assert_non_null(m);
	metrics_shared *shared = metrics_shared_of(m);
	assert_non_null(shared);
	assert_ptr_equal(shared, metrics_shared_of(m));
	pthread_t threads[THREADS];
	bumper b = { shared, ROUNDS };
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, bump, &b), 0);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);

	exposition e = render_parse(m, NULL);
	char want[32];
	snprintf(want, sizeof want, "%d", THREADS * ROUNDS);
	assert_string_equal(single(&e, "starforge_evaluation_cache_hits_total")->raw_value, want);
	snprintf(want, sizeof want, "%d", THREADS * (ROUNDS / 3));
	assert_string_equal(single(&e, "starforge_evaluation_cache_misses_total")->raw_value, want);
	snprintf(want, sizeof want, "%d", THREADS * (ROUNDS / 5) * 2);
	assert_string_equal(single(&e, "starforge_enumerations_total")->raw_value, want);
	exposition_free(&e);
	metrics_free(m);
}

/* Route names with '\\', '"' and newlines survive the round trip and are escaped in the text. */
static void test_label_escaping(void **state)
{
	(void)state;
	static const struct {
		const char *route;
		const char *escaped; /* as it must appear between the quotes */
	} names[] = {
		{ "back\\slash", "back\\\\slash" },
		{ "say \"hi\"", "say \\\"hi\\\"" },
		{ "two\nlines", "two\\nlines" },
		{ "\\n", "\\\\n" }, /* a backslash and an 'n', not a newline */
		{ "end\\", "end\\\\" },
		{ "\"", "\\\"" },
		{ "\n\n", "\\n\\n" },
		{ "a,b=c}{", "a,b=c}{" },
		{ "caf\xC3\xA9", "caf\xC3\xA9" },
		{ "", "" },
	};
	metrics *m = metrics_new();
	assert_non_null(m);
	for (int i = 0; i < ARRAY_LEN(names); i++)
		for (int k = 0; k <= i; k++)
			metrics_request(m, names[i].route, 200, 0.5);

	size_t len = 0;
	char *text = metrics_render(m, NULL, &len);
	assert_non_null(text);
	for (int i = 0; i < ARRAY_LEN(names); i++) {
		char want[128];
		snprintf(want, sizeof want,
			 "starforge_http_requests_total{route=\"%s\",status=", names[i].escaped);
		if (!strstr(text, want))
			fail_msg("no line starts with %s", want);
	}
	exposition e = parse(text, len);
	free(text);
	int found = 0;
	for (int i = 0; i < e.nsamples; i++) {
		const sample *s = &e.samples[i];
		if (strcmp(s->name, "starforge_http_requests_total") != 0)
			continue;
		const char *route = label_of(s, "route");
		int which = -1;
		for (int k = 0; k < ARRAY_LEN(names); k++)
			if (strcmp(route, names[k].route) == 0)
				which = k;
		if (which < 0)
			fail_msg("unexpected route label \"%s\"", route);
		assert_true(s->value == which + 1);
		found++;
	}
	assert_int_equal(found, ARRAY_LEN(names));
	exposition_free(&e);
	metrics_free(m);
}

/* The parser reads what the format allows, escapes and all. */
static void test_parser_accepts(void **state)
{
	(void)state;
	const char *good = "# HELP a_total Things\\\\ and\\nlines.\n"
			   "# TYPE a_total counter\n"
			   "a_total{x=\"q\\\"\\\\\\n\"} 3\n"
			   "# HELP h Hist.\n"
			   "# TYPE h histogram\n"
			   "h_bucket{le=\"1\"} 1\n"
			   "h_bucket{le=\"+Inf\"} 2\n"
			   "h_sum 2.5\n"
			   "h_count 2\n";
	exposition e = parse(good, strlen(good));
	assert_int_equal(e.nfamilies, 2);
	assert_string_equal(e.families[0].help, "Things\\ and\nlines.");
	assert_string_equal(label_of(&e.samples[0], "x"), "q\"\\\n");
	const double obs[] = { 0.5, 2 };
	check_histogram(&e, "h", obs, 2);
	exposition_free(&e);
}

/*
 * Runs parse (and, with obs, check_histogram of "h") in a child; true when
 * the child rejected the text.
 */
static bool rejected(const char *text, const double *obs, int nobs)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		reject_by_exit = true;
		exposition e = parse(text, strlen(text));
		if (obs)
			check_histogram(&e, "h", obs, nobs);
		_exit(0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status) == 3;
}

/* And it rejects what the format, or a histogram's rules, forbid: the checks can fail. */
static void test_parser_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"# HELP a x\n# TYPE a counter\na 1",                     /* no final newline */
		"a 1\n",                                                 /* no TYPE */
		"# TYPE a counter\na 1\n",                               /* no HELP */
		"# HELP a x\n# HELP a y\n# TYPE a counter\na 1\n",       /* two HELPs */
		"# HELP a x\n# TYPE a counter\n# TYPE a counter\na 1\n", /* two TYPEs */
		"# HELP a x\n# TYPE a counter\na 1\n# HELP a y\n",       /* HELP after samples */
		"# HELP a x\n# TYPE a counter\n# HELP b x\n# TYPE b gauge\na 1\n", /* split */
		"# HELP a x\n# TYPE a widget\na 1\n",                   /* unknown type */
		"# HELP a x\n# TYPE a counter\n\na 1\n",                /* empty line */
		"# HELP a x\n# TYPE a counter\n# note\na 1\n",          /* other comment */
		"# HELP a x\n# TYPE a counter\na{l=\"\\t\"} 1\n",       /* bad escape */
		"# HELP a x\n# TYPE a counter\na{l=\"x} 1\n",           /* unterminated */
		"# HELP a x\n# TYPE a counter\na{l=x} 1\n",             /* unquoted */
		"# HELP a x\n# TYPE a counter\na{l=\"x\",l=\"y\"} 1\n", /* label twice */
		"# HELP a x\n# TYPE a counter\na 1 1700000000\n",       /* timestamp */
		"# HELP a x\n# TYPE a counter\na one\n",                /* bad value */
		"# HELP a x\n# TYPE a counter\na inf\n",                /* not "+Inf" */
		"# HELP a x\n# TYPE a counter\n9a 1\n",                 /* bad name */
		"# HELP a x\n# TYPE a counter\na  1\n",                 /* two spaces */
		"# HELP a x\\t\n# TYPE a counter\na 1\n",               /* bad HELP escape */
		"# HELP a x\n# TYPE a counter\na_sum 1\n",              /* not a histogram */
	};
	for (int i = 0; i < ARRAY_LEN(bad); i++)
		if (!rejected(bad[i], NULL, 0))
			fail_msg("bad text %d accepted:\n%s", i, bad[i]);

	const char *head = "# HELP h x\n# TYPE h histogram\n";
	static const char *const bad_hist[] = {
		"h_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 2.5\nh_count 1\n",
		"h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 2.5\nh_count 3\n",
		"h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 2.25\nh_count 2\n",
		"h_bucket{le=\"1\"} 1\nh_sum 2.5\nh_count 2\n",
		"h_bucket{le=\"+Inf\"} 2\nh_bucket{le=\"1\"} 1\nh_sum 2.5\nh_count 2\n",
		"h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 2\nh_sum 2.5\nh_count 2\n",
		"h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 2.5\n",
	};
	const double obs[] = { 0.5, 2 };
	char text[512];
	for (int i = 0; i < ARRAY_LEN(bad_hist); i++) {
		snprintf(text, sizeof text, "%s%s", head, bad_hist[i]);
		if (!rejected(text, obs, ARRAY_LEN(obs)))
			fail_msg("bad histogram %d accepted:\n%s", i, text);
	}
	/* The same harness accepts a good one, so the rejections above mean something. */
	snprintf(text, sizeof text, "%s%s", head,
		 "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 2.5\nh_count 2\n");
	assert_false(rejected(text, obs, ARRAY_LEN(obs)));
}

/*
 * starforge_build_info carries server/base/version.h's strings; the process_*
 * families are this test process's own, read back here independently:
 * resident memory above 0, at least stdin, stdout and stderr open, a start
 * within the last minute, the soft RLIMIT_NOFILE.
 */
static void test_process_and_build_info(void **state)
{
	(void)state;
	metrics *m = metrics_new();
	assert_non_null(m);
	exposition e = render_parse(m, NULL);

	const sample *info = NULL;
	for (int i = 0; i < e.nsamples; i++)
		if (!strcmp(e.samples[i].name, "starforge_build_info"))
			info = &e.samples[i];
	assert_non_null(info);
	assert_int_equal(info->nlabels, 2);
	assert_string_equal(label_of(info, "version"), sf_version);
	assert_string_equal(label_of(info, "commit"), sf_commit);
	assert_true(info->value == 1);
	assert_true(strlen(sf_version) > 0 && strlen(sf_commit) > 0);

	double now = (double)time(NULL);
	double rss = single(&e, "process_resident_memory_bytes")->value;
	double vsz = single(&e, "process_virtual_memory_bytes")->value;
	double fds = single(&e, "process_open_fds")->value;
	double max_fds = single(&e, "process_max_fds")->value;
	double start = single(&e, "process_start_time_seconds")->value;
	double cpu = single(&e, "process_cpu_seconds_total")->value;
	assert_true(rss > 4096 && rss <= vsz);
	assert_true(fds >= 3 && fds == floor(fds));
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur != RLIM_INFINITY)
		assert_true(max_fds == (double)rl.rlim_cur);
	if (!(start > now - 60 && start <= now + 1))
		fail_msg("process_start_time_seconds %.3f, now %.0f", start, now);
	assert_true(cpu >= 0 && cpu < 3600);

	/* One more open descriptor is one more in process_open_fds. */
	int fd = dup(0);
	assert_true(fd >= 0);
	exposition again = render_parse(m, NULL);
	assert_true(single(&again, "process_open_fds")->value == fds + 1);
	close(fd);
	exposition_free(&again);
	exposition_free(&e);

	/* Values are written as they are, and no reading leaves the families out. */
	metrics_set_process_reader(m, fixed_process);
	size_t len = 0;
	char *text = metrics_render(m, NULL, &len);
	assert_non_null(text);
	static const char *const lines[] = {
		"# HELP process_cpu_seconds_total Total user and system CPU time spent in "
		"seconds.\n"
		"# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n",
		"\nprocess_resident_memory_bytes 7340032\n",
		"\nprocess_virtual_memory_bytes 123456789012\n",
		"\nprocess_start_time_seconds 1700000000.25\n",
		"\nprocess_open_fds 9\n",
		"\nprocess_max_fds 1048576\n",
	};
	for (int i = 0; i < ARRAY_LEN(lines); i++)
		if (!strstr(text, lines[i]))
			fail_msg("no '%s' in:\n%s", lines[i], text);
	free(text);
	metrics_set_process_reader(m, no_process);
	e = render_parse(m, NULL);
	for (int i = 0; i < e.nfamilies; i++)
		assert_true(strncmp(e.families[i].name, "process_", 8) != 0);
	assert_string_equal(e.families[e.nfamilies - 1].name, "starforge_build_info");
	exposition_free(&e);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_accepts),
		cmocka_unit_test(test_parser_rejects),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_jobs_gauge),
		cmocka_unit_test(test_request_counters),
		cmocka_unit_test(test_unmatched),
		cmocka_unit_test(test_histograms),
		cmocka_unit_test(test_shared_atomics),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_process_and_build_info),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
