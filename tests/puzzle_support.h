/*
 * puzzle_support.h - the square length-16 lattice database the puzzle tests
 * share (test_puzzle.c, test_lattice_fixes.c): built on first use by db16(),
 * freed by the group teardown, and the search options they pass. Include
 * once per test binary.
 */
#ifndef SF_TEST_PUZZLE_SUPPORT_H
#define SF_TEST_PUZZLE_SUPPORT_H

#include <string.h>

#include "lattice/lattice.h"
#include "lattice/puzzle.h"
#include "support.h"

#define TEST_THREADS 2

static lat_db *warm16;

static const lat_db *db16(void)
{
	if (!warm16) {
		lat_opts o = { .threads = TEST_THREADS, .budget = 0 };
		sf_err err = { 0 };
		warm16 = lat_db_build(LAT_SQUARE, 16, &o, &err);
		if (!warm16)
			fail_msg("lat_db_build(square, 16): %s", err.msg);
	}
	return warm16;
}

/* Search options: `seed`, `threads` and the database (NULL: none). */
static lat_search_opts opts_of(uint64_t seed, int threads, const lat_db *db)
{
	lat_search_opts o;
	memset(&o, 0, sizeof o);
	o.seed = seed;
	o.threads = threads;
	o.db = db;
	return o;
}

static int group_teardown(void **state)
{
	(void)state;
	lat_db_free(warm16);
	warm16 = NULL;
	return 0;
}

#endif
