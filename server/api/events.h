/*
 * events.h - the per-job event log behind GET /v1/jobs/{id}/events.
 *
 * An ev_log holds a job's Server-Sent Events as one byte string, each event
 * formatted once and appended whole, with an index of where each event
 * starts and its id. Readers keep their own absolute byte offset (starting
 * at ev_log_begin()) and copy from it at their own pace, so any number of
 * them cost one copy of the text. The log keeps at most `limit` bytes:
 * appending past it drops the oldest events whole, so ev_log_begin() always
 * sits on an event boundary and moves forward; a reader whose offset falls
 * behind it has missed events.
 *
 * Pure data: no I/O, no locking (the service uses it on the loop thread
 * only). The service side (watchers, feeds, the HTTP handler) is declared
 * in service.h.
 */
#ifndef SF_EVENTS_H
#define SF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ev_log ev_log;

/* A new, empty log keeping at most `limit` bytes (>= 1); NULL when out of memory. */
ev_log *ev_log_new(size_t limit);

/* Frees `log`; ev_log_free(NULL) is a no-op. */
void ev_log_free(ev_log *log);

/*
 * Appends one complete event: `len` bytes of text ending with a blank line,
 * with event id `id` (any value; readers skip by id, see ev_log_read).
 * Drops the oldest events when the log would pass its limit; an event
 * larger than the limit is kept alone. Returns 0, or SF_ENOMEM with the
 * log unchanged.
 */
int ev_log_append(ev_log *log, int64_t id, const char *text, size_t len);

/* The absolute offsets of the oldest byte kept and of the end of the text. */
uint64_t ev_log_begin(const ev_log *log);
uint64_t ev_log_end(const ev_log *log);

/* Events kept, and the id of the newest (-1 when empty). */
size_t ev_log_count(const ev_log *log);
int64_t ev_log_last_id(const ev_log *log);

/*
 * Copies up to `max` bytes from absolute offset *pos into buf, advances *pos
 * past them and returns how many were copied. Whole events whose id is <=
 * `after` are skipped when *pos is at their start (pass -1 to skip none),
 * so a reader that resumes with Last-Event-ID never sees an event twice.
 * Requires ev_log_begin() <= *pos <= ev_log_end(); otherwise copies nothing.
 */
size_t ev_log_read(const ev_log *log, uint64_t *pos, int64_t after, char *buf, size_t max);

#endif
