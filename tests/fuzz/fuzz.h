/*
 * fuzz.h - what every fuzz target in tests/fuzz/ shares.
 *
 * Each target is one .c file defining FUZZ_ENTRY, the libFuzzer entry
 * point LLVMFuzzerTestOneInput unless the build renames it: `make fuzz`
 * links each one alone with libFuzzer (clang), and tests/test_fuzz_corpus.c
 * links all five with gcc under their own names (-DFUZZ_ENTRY=...) to
 * replay every committed seed and crash input in `make test`.
 *
 * A target calls the same function the service calls on the same bytes,
 * frees everything it got, and checks what the function promises (a
 * round trip, a bound) with FUZZ_CHECK, which aborts: to libFuzzer an abort
 * is a crash like any sanitizer report.
 */
#ifndef SF_FUZZ_H
#define SF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

/* Runs one input; always returns 0 (libFuzzer reserves other values). */
int FUZZ_ENTRY(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                          \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                           \
			abort();                                                                  \
		}                                                                                 \
	} while (0)

/*
 * A malloc'ed, NUL-terminated copy of data[0..size-1] cut at its first NUL
 * (what a C string made of these bytes would hold), or NULL when out of
 * memory. The caller frees it.
 */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t n = nul ? (size_t)(nul - data) : size;
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, data, n);
		s[n] = '\0';
	}
	return s;
}

#endif
