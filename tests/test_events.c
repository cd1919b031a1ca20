/*
 * test_events.c - the per-job event log (server/api/events.h): appending,
 * reading at a reader's own offset in pieces of any size, skipping by
 * Last-Event-ID, and dropping the oldest events whole at the limit.
 *
 * Events here are SSE text as the service writes them ("id: N\n...\n\n"),
 * so that a read that cut one in two, or a drop that left a partial event
 * at the front, shows up as text that does not start with "id: ".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/api/events.h"

/* Event `id` as the service formats it, padded with data to `size` bytes (>= 32). */
static size_t event_text(char *buf, int64_t id, size_t size)
{
	int n = snprintf(buf, size, "id: %lld\nevent: progress\ndata: ", (long long)id);
	size_t len = (size_t)n;
	while (len < size - 2)
		buf[len++] = 'x';
	buf[len++] = '\n';
	buf[len++] = '\n';
	return len;
}

static void append(ev_log *log, int64_t id, size_t size)
{
	char buf[512];
	size_t len = event_text(buf, id, size);
	assert_int_equal(ev_log_append(log, id, buf, len), 0);
}

/* Everything a reader at `pos` with `after` gets, `piece` bytes per read. */
static size_t read_all(const ev_log *log, uint64_t *pos, int64_t after, size_t piece, char *out,
		       size_t cap)
{
	size_t n = 0, k;
	while ((k = ev_log_read(log, pos, after, out + n, piece < cap - n ? piece : cap - n)) > 0)
		n += k;
	out[n] = '\0';
	return n;
}

/* The ids of the events in `text`, in order; returns how many. */
static int ids_of(const char *text, int64_t *ids, int max)
{
	int n = 0;
	for (const char *p = text; *p && n < max;) {
		assert_memory_equal(p, "id: ", 4);
		ids[n++] = strtoll(p + 4, NULL, 10);
		const char *end = strstr(p, "\n\n");
		assert_non_null(end);
		p = end + 2;
	}
	return n;
}

static void test_empty(void **state)
{
	(void)state;
	ev_log_free(NULL);
	ev_log *log = ev_log_new(1024);
	assert_non_null(log);
	assert_int_equal(ev_log_begin(log), 0);
	assert_int_equal(ev_log_end(log), 0);
	assert_int_equal(ev_log_count(log), 0);
	assert_int_equal(ev_log_last_id(log), -1);
	char buf[8];
	uint64_t pos = 0;
	assert_int_equal(ev_log_read(log, &pos, -1, buf, sizeof buf), 0);
	assert_int_equal(pos, 0);
	ev_log_free(log);
}

/* Any piece size gives the same text: the events back to back, whole. */
static void test_read_in_pieces(void **state)
{
	(void)state;
	ev_log *log = ev_log_new(1 << 16);
	char expected[4096] = "", one[512];
	size_t total = 0;
	for (int64_t id = 1; id <= 7; id++) {
		size_t len = event_text(one, id, 40 + (size_t)id * 13);
		memcpy(expected + total, one, len);
		total += len;
		assert_int_equal(ev_log_append(log, id, one, len), 0);
	}
	expected[total] = '\0';
	assert_int_equal(ev_log_end(log), total);
	assert_int_equal(ev_log_count(log), 7);
	assert_int_equal(ev_log_last_id(log), 7);
	static const size_t pieces[] = { 1, 2, 3, 7, 40, 53, 4096 };
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
		char got[4096];
		uint64_t pos = ev_log_begin(log);
		size_t n = read_all(log, &pos, -1, pieces[i], got, sizeof got);
		assert_int_equal(n, total);
		assert_string_equal(got, expected);
		assert_int_equal(pos, ev_log_end(log));
	}
	/* Two readers at their own offsets do not disturb each other. */
	uint64_t a = 0, b = 0;
	char ba[64], bb[64];
	assert_int_equal(ev_log_read(log, &a, -1, ba, 10), 10);
	assert_int_equal(ev_log_read(log, &b, -1, bb, 20), 20);
	assert_int_equal(ev_log_read(log, &a, -1, ba + 10, 10), 10);
	assert_memory_equal(ba, bb, 20);
	ev_log_free(log);
}

/* Last-Event-ID: whole events with id <= after are skipped, wherever they are. */
static void test_skip_by_id(void **state)
{
	(void)state;
	static const struct {
		int64_t ids[6];
		int nids;
		int64_t after;
		int64_t want[6];
		int nwant;
	} cases[] = {
		{ { 1, 2, 3, 4, 5 }, 5, -1, { 1, 2, 3, 4, 5 }, 5 },
		{ { 1, 2, 3, 4, 5 }, 5, 0, { 1, 2, 3, 4, 5 }, 5 },
		{ { 1, 2, 3, 4, 5 }, 5, 3, { 4, 5 }, 2 },
		{ { 1, 2, 3, 4, 5 }, 5, 5, { 0 }, 0 },
		{ { 1, 2, 3, 4, 5 }, 5, 99, { 0 }, 0 },
		/* A job run again after a restart numbers its generations from 1. */
		{ { 5, 1, 2, 6, 3, 7 }, 6, 2, { 5, 6, 3, 7 }, 4 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		ev_log *log = ev_log_new(1 << 16);
		for (int i = 0; i < cases[c].nids; i++)
			append(log, cases[c].ids[i], 48);
		for (size_t piece = 1; piece <= 4096; piece *= 8) {
			char got[4096];
			int64_t ids[8];
			uint64_t pos = 0;
			read_all(log, &pos, cases[c].after, piece, got, sizeof got);
			assert_int_equal(pos, ev_log_end(log));
			int n = ids_of(got, ids, 8);
			assert_int_equal(n, cases[c].nwant);
			for (int i = 0; i < n; i++)
				assert_int_equal(ids[i], cases[c].want[i]);
		}
		ev_log_free(log);
	}
}

/* A reader in the middle of an event finishes it, whatever its id. */
static void test_skip_never_cuts_an_event(void **state)
{
	(void)state;
	ev_log *log = ev_log_new(1 << 16);
	append(log, 1, 48);
	append(log, 2, 48);
	uint64_t pos = 0;
	char got[256];
	assert_int_equal(ev_log_read(log, &pos, -1, got, 10), 10);
	size_t n = read_all(log, &pos, 5, 7, got + 10, sizeof got - 10);
	assert_int_equal(n, 38); /* the rest of event 1; event 2 is skipped */
	got[48] = '\0';
	int64_t ids[4];
	assert_int_equal(ids_of(got, ids, 4), 1);
	assert_int_equal(ids[0], 1);
	ev_log_free(log);
}

/*
 * At the limit the oldest events go, whole: what is kept starts on an event,
 * fits the limit, ends with the newest event, and is numbered without gaps.
 */
static void test_limit_drops_oldest_whole(void **state)
{
	(void)state;
	static const struct {
		size_t limit, size;
		int events;
	} cases[] = {
		{ 100, 32, 10 },   { 100, 50, 3 },  { 1000, 37, 500 },
		{ 4096, 200, 64 }, { 640, 64, 10 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		ev_log *log = ev_log_new(cases[c].limit);
		uint64_t stale = 0; /* a reader that never reads */
		for (int64_t id = 1; id <= cases[c].events; id++) {
			append(log, id, cases[c].size);
			uint64_t kept = ev_log_end(log) - ev_log_begin(log);
			assert_true(kept <= cases[c].limit);
			assert_int_equal(kept, ev_log_count(log) * cases[c].size);
			assert_int_equal(ev_log_last_id(log), id);
			assert_int_equal(ev_log_end(log), (uint64_t)id * cases[c].size);
		}
		char got[8192];
		uint64_t pos = ev_log_begin(log);
		size_t n = read_all(log, &pos, -1, 5, got, sizeof got);
		int64_t ids[512];
		int k = ids_of(got, ids, 512);
		assert_int_equal((size_t)k, ev_log_count(log));
		assert_int_equal(n, (size_t)k * cases[c].size);
		for (int i = 0; i < k; i++)
			assert_int_equal(ids[i], cases[c].events - k + 1 + i);
		/* A reader left behind the oldest event kept gets nothing. */
		if (ev_log_begin(log) > stale)
			assert_int_equal(ev_log_read(log, &stale, -1, got, sizeof got), 0);
		ev_log_free(log);
	}
}

/* An event bigger than the limit is kept, alone. */
static void test_oversized_event(void **state)
{
	(void)state;
	ev_log *log = ev_log_new(40);
	append(log, 1, 32);
	append(log, 2, 100);
	assert_int_equal(ev_log_count(log), 1);
	assert_int_equal(ev_log_begin(log), 32);
	assert_int_equal(ev_log_end(log), 132);
	append(log, 3, 32);
	assert_int_equal(ev_log_count(log), 1);
	assert_int_equal(ev_log_last_id(log), 3);
	assert_int_equal(ev_log_begin(log), 132);
	ev_log_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_read_in_pieces),
		cmocka_unit_test(test_skip_by_id),
		cmocka_unit_test(test_skip_never_cuts_an_event),
		cmocka_unit_test(test_limit_drops_oldest_whole),
		cmocka_unit_test(test_oversized_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
