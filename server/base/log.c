/*
 * log.c - see log.h.
 *
 * A line is assembled in a buffer on the caller's stack (loop thread or
 * worker) and written with one fwrite: stdio locks the stream per call, so
 * concurrent lines stay whole. stderr is block-buffered by cmd_serve.c and
 * flushed by the service four times a second. A line that would not fit
 * the buffer loses the end of its longest parts (a path, a message), never
 * its closing: a JSON line always parses.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static log_format current = LOG_TEXT;

int log_format_parse(const char *text, log_format *out)
{
	if (text && !strcmp(text, "text"))
		*out = LOG_TEXT;
	else if (text && !strcmp(text, "json"))
		*out = LOG_JSON;
	else
		return -1;
	return 0;
}

void log_set_format(log_format f)
{
	current = f;
}

void log_timestamp(char out[32])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(ts.tv_nsec / 1000000));
}

/* ---- escaping ---- */

/*
 * The length of the well-formed UTF-8 sequence at p (n bytes left), 1 to
 * 4; 0 when p does not start one (a stray continuation byte, a truncated
 * or overlong sequence, a surrogate, above U+10FFFF). ASCII is 1.
 */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t k;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		k = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		k = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		k = 4;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	unsigned c1 = p[1];
	if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) ||
	    (c == 0xF4 && c1 >= 0x90))
		return 0;
	return k;
}

/* Appends s[0..k-1] at out+*n when it fits in cap - 1; the total grows either way. */
static void put(char *out, size_t cap, size_t *n, size_t *total, int *cut, const char *s, size_t k)
{
	if (!*cut && *n + k < cap) {
		memcpy(out + *n, s, k);
		*n += k;
	} else {
		*cut = 1; /* nothing after a piece that did not fit: no half escapes */
	}
	*total += k;
}

static size_t escape(const char *in, size_t len, char *out, size_t cap, int json)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t n = 0, total = 0;
	int cut = 0;
	for (size_t i = 0; i < len;) {
		unsigned c = p[i];
		size_t k = utf8_seq(p + i, len - i);
		int c1 = k == 2 && c == 0xC2 && p[i + 1] < 0xA0; /* U+0080..U+009F */
		char e[8];
		if (json && c < 0x80 && (c < 0x20 || c == 0x7f || c == '"' || c == '\\')) {
			const char *s = c == '"'    ? "\\\""
					: c == '\\' ? "\\\\"
					: c == '\n' ? "\\n"
					: c == '\r' ? "\\r"
					: c == '\t' ? "\\t"
						    : NULL;
			if (s) {
				put(out, cap, &n, &total, &cut, s, 2);
			} else {
				memcpy(e, "\\u00", 4);
				e[4] = hex[c >> 4];
				e[5] = hex[c & 15];
				put(out, cap, &n, &total, &cut, e, 6);
			}
			i++;
		} else if (json && c1) {
			memcpy(e, "\\u00", 4);
			e[4] = hex[p[i + 1] >> 4];
			e[5] = hex[p[i + 1] & 15];
			put(out, cap, &n, &total, &cut, e, 6);
			i += 2;
		} else if (k == 0 || c1 || (!json && (c < 0x20 || c == 0x7f || c == '\\'))) {
			/* Text: \xNN. JSON: a byte that is not UTF-8 cannot be in a
			 * JSON string; it is written as the text \xNN (backslash escaped). */
			size_t m = c1 ? 2 : 1;
			for (size_t j = 0; j < m; j++) {
				size_t o = 0;
				e[o++] = '\\';
				if (json)
					e[o++] = '\\';
				e[o++] = 'x';
				e[o++] = hex[p[i + j] >> 4];
				e[o++] = hex[p[i + j] & 15];
				put(out, cap, &n, &total, &cut, e, o);
			}
			i += m;
		} else {
			put(out, cap, &n, &total, &cut, in + i, k);
			i += k;
		}
	}
	if (cap)
		out[n] = '\0';
	return total;
}

size_t log_escape_text(const char *in, size_t len, char *out, size_t cap)
{
	return escape(in, len, out, cap, 0);
}

size_t log_escape_json(const char *in, size_t len, char *out, size_t cap)
{
	return escape(in, len, out, cap, 1);
}

/* ---- lines ---- */

/*
 * A line's buffer, and the most each escaped part may take: the parts of
 * the longest line (the request line, whose message repeats its fields)
 * fit with room to spare, so a line is never cut anywhere but inside a
 * part, which then ends with "...".
 */
#define LINE_MAX 8192
#define PART_MSG 2048  /* a whole message */
#define PART_PATH 1024 /* a path, a job's detail */
#define PART_WORD 256  /* a method, a route, a request id, a job id, a kind */

typedef struct line {
	char text[LINE_MAX];
	size_t n;
} line;

/* Appends our own bytes (no escaping needed). */
static void add_raw(line *l, const char *s)
{
	size_t k = strlen(s);
	if (l->n + k >= LINE_MAX)
		k = LINE_MAX - 1 - l->n; /* cannot happen with the part limits above */
	memcpy(l->text + l->n, s, k);
	l->n += k;
}

/* Appends s escaped for the current format, at most `max` bytes of it and "..." if cut. */
static void add_escaped(line *l, const char *s, size_t max)
{
	if (!s)
		s = "-";
	if (l->n + max + 4 >= LINE_MAX)
		return;
	size_t total = escape(s, strlen(s), l->text + l->n, max + 1, current == LOG_JSON);
	l->n += strlen(l->text + l->n);
	if (total > max)
		add_raw(l, "...");
}

static void begin(line *l, const char *level)
{
	char ts[32];
	log_timestamp(ts);
	l->n = 0;
	if (current == LOG_JSON) {
		add_raw(l, "{\"ts\":\"");
		add_raw(l, ts);
		add_raw(l, "\",\"level\":\"");
		add_raw(l, level);
		add_raw(l, "\",\"msg\":\"");
	} else {
		add_raw(l, ts);
		add_raw(l, " ");
	}
}

/* In JSON, ends the msg string: fields follow. */
static void end_msg(line *l)
{
	if (current == LOG_JSON)
		add_raw(l, "\"");
}

/* A JSON string field (escaped); nothing in text. */
static void field_str(line *l, const char *name, const char *value, size_t max)
{
	if (current != LOG_JSON)
		return;
	add_raw(l, ",\"");
	add_raw(l, name);
	add_raw(l, "\":\"");
	add_escaped(l, value, max);
	add_raw(l, "\"");
}

/* A JSON field whose value is already JSON (a number); nothing in text. */
static void field_raw(line *l, const char *name, const char *value)
{
	if (current != LOG_JSON)
		return;
	add_raw(l, ",\"");
	add_raw(l, name);
	add_raw(l, "\":");
	add_raw(l, value);
}

static void finish(line *l)
{
	if (current == LOG_JSON)
		add_raw(l, "}");
	add_raw(l, "\n");
	fwrite(l->text, 1, l->n, stderr);
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof msg, fmt, ap);
	line l;
	begin(&l, level);
	add_escaped(&l, msg, PART_MSG);
	end_msg(&l);
	finish(&l);
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("info", fmt, ap);
	va_end(ap);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
}

void log_http(const char *method, const char *path, int status, double ms, const char *route,
	      const char *request_id)
{
	char num[64];
	line l;
	begin(&l, status >= 500 ? "error" : "info");
	add_raw(&l, "http ");
	add_escaped(&l, method, PART_WORD);
	add_raw(&l, " ");
	add_escaped(&l, path, PART_PATH);
	snprintf(num, sizeof num, " %d %.3fms route=", status, ms);
	add_raw(&l, num);
	add_escaped(&l, route, PART_WORD);
	add_raw(&l, " request_id=");
	add_escaped(&l, request_id, PART_WORD);
	end_msg(&l);
	field_str(&l, "event", "http", PART_WORD);
	field_str(&l, "method", method, PART_WORD);
	field_str(&l, "path", path, PART_PATH);
	snprintf(num, sizeof num, "%d", status);
	field_raw(&l, "status", num);
	snprintf(num, sizeof num, "%.3f", ms);
	field_raw(&l, "ms", num);
	field_str(&l, "route", route, PART_WORD);
	field_str(&l, "request_id", request_id, PART_WORD);
	finish(&l);
}

void log_job_event(const char *id, const char *transition, const char *kind,
		   unsigned long long seed, const char *detail)
{
	char num[32];
	line l;
	begin(&l, "info");
	add_raw(&l, "job ");
	add_escaped(&l, id, PART_WORD);
	add_raw(&l, " ");
	add_escaped(&l, transition, PART_WORD);
	add_raw(&l, " kind=");
	add_escaped(&l, kind, PART_WORD);
	snprintf(num, sizeof num, "%llu", seed);
	add_raw(&l, " seed=");
	add_raw(&l, num);
	if (detail) {
		add_raw(&l, " ");
		add_escaped(&l, detail, PART_PATH);
	}
	end_msg(&l);
	field_str(&l, "event", "job", PART_WORD);
	field_str(&l, "job", id, PART_WORD);
	field_str(&l, "transition", transition, PART_WORD);
	field_str(&l, "kind", kind, PART_WORD);
	/* A string: a 64-bit seed would lose digits as a JSON number in many parsers. */
	field_str(&l, "seed", num, PART_WORD);
	if (detail)
		field_str(&l, "detail", detail, PART_PATH);
	finish(&l);
}
