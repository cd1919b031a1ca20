/*
 * json_depth.h - how deeply a JSON text nests, found without parsing it.
 *
 * jansson parses arrays and objects by recursion, one C stack frame per
 * level (up to its own limit of 2048), and every later walk of the value
 * (dumping, freeing, a kind's params reader) recurses as deep. A request
 * body is bounded in size, not in shape: 64 KiB of '[' is 65536 levels. So
 * the service scans each body's brackets first and refuses one nested
 * deeper than SF_JSON_MAX_DEPTH before jansson sees it.
 */
#ifndef SF_JSON_DEPTH_H
#define SF_JSON_DEPTH_H

#include <stddef.h>

/*
 * The deepest request body the service parses. The deepest document the
 * API defines nests 4 levels (a PX trace set: object, traces array, trace
 * object, window array); 32 leaves room for any client's own wrapping and
 * keeps every recursion over a parsed body shallow.
 */
#define SF_JSON_MAX_DEPTH 32

/*
 * The nesting depth of arrays and objects in text[0..len-1]: 0 for a
 * scalar, 1 for "[]" or "{}", 2 for "[[1]]" and so on. Brackets inside
 * strings do not count (a backslash escapes the next character there).
 * Stops at the first level past `limit` and returns limit + 1, so a long
 * text costs at most one pass and usually much less. The text need not be
 * valid JSON: a closer without an opener is ignored, NUL bytes are
 * ordinary characters, and an unterminated string ends the scan. Never
 * fails; `text` may be NULL when len is 0.
 */
int sf_json_depth(const char *text, size_t len, int limit);

#endif
