/*
 * log.h - the service's log: one line per event on stderr, each stamped
 * with the UTC time (RFC 3339, milliseconds), as text for people or as one
 * JSON object per line for log shippers (`serve --log-format json`).
 *
 * Every line of `starforge serve` goes through here: the request log line,
 * job transitions, start-up and shutdown, store and cache failures. A line
 * is built whole in a buffer and written with one call, so lines from the
 * loop thread and from workers never interleave. Anything that came from
 * a client (method, path, request id) is escaped: a control byte written
 * raw could move a terminal's cursor or forge a line of its own.
 *
 * Text: "2026-12-01T15:04:05.123Z MESSAGE", every byte below 0x20, 0x7f,
 * the backslash and any byte that is not well-formed UTF-8 (and the C1
 * controls U+0080..U+009F) written as \xNN.
 * JSON: {"ts":"...","level":"info","msg":"MESSAGE", ...fields}; strings
 * escaped as JSON requires (\n, \u001b, ...), a byte that is not UTF-8 as
 * the text "\xNN". The request and job lines add their fields (method,
 * path, status, ms, route, request_id; job, event, kind, seed, detail).
 */
#ifndef SF_LOG_H
#define SF_LOG_H

#include <stddef.h>

typedef enum { LOG_TEXT = 0, LOG_JSON = 1 } log_format;

/* "text" or "json" into *out: returns 0, or -1 for anything else. */
int log_format_parse(const char *text, log_format *out);

/* Chooses the format of every later line (default LOG_TEXT); call before threads start. */
void log_set_format(log_format f);

/* A line at level "info" (or "error"): the printf-formatted message, escaped. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The request line: "http METHOD PATH STATUS MSms route=ROUTE
 * request_id=ID" (level "error" for a status of 500 or more). Every
 * string may be anything a client sent; NULL is written as "-".
 */
void log_http(const char *method, const char *path, int status, double ms, const char *route,
	      const char *request_id);

/*
 * A job transition: "job ID TRANSITION kind=KIND seed=SEED[ DETAIL]",
 * `detail` being NULL or "key=value ..." text.
 */
void log_job_event(const char *id, const char *transition, const char *kind,
		   unsigned long long seed, const char *detail);

/*
 * The escapes, pure, for tests: write in[0..len-1] escaped into out (cap
 * bytes, always NUL-terminated when cap > 0), as the text format does
 * (log_escape_text) or as the inside of a JSON string (log_escape_json).
 * Return the length of the whole escaped text, which is more than cap - 1
 * when it was cut (never inside an escape).
 */
size_t log_escape_text(const char *in, size_t len, char *out, size_t cap);
size_t log_escape_json(const char *in, size_t len, char *out, size_t cap);

/* The current UTC time as RFC 3339 with milliseconds: "2026-12-01T15:04:05.123Z". */
void log_timestamp(char out[32]);

#endif
