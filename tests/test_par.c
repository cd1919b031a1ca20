/*
 * test_par.c - core/par: par_for() calls its function once for every index,
 * on any thread count, and a worker stops pulling when told to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "par.h"

typedef struct counts {
	atomic_int *calls; /* per index */
	size_t stop_at;    /* fn returns 1 from this index on (SIZE_MAX: never) */
	atomic_int total;
} counts;

static int count_item(void *arg, size_t i)
{
	counts *c = arg;
	atomic_fetch_add(&c->calls[i], 1);
	atomic_fetch_add(&c->total, 1);
	return i >= c->stop_at;
}

static void test_every_index_once(void **state)
{
	(void)state;
	const size_t sizes[] = { 0, 1, 5, 1000 };
	const int threads[] = { 0, 1, 2, 7 };
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
			size_t n = sizes[s];
			counts c = { .calls = calloc(n + 1, sizeof(atomic_int)),
				     .stop_at = SIZE_MAX };
			assert_non_null(c.calls);
			assert_int_equal(par_for(threads[t], n, count_item, &c, NULL), 0);
			for (size_t i = 0; i < n; i++)
				assert_int_equal(atomic_load(&c.calls[i]), 1);
			assert_int_equal(atomic_load(&c.total), (int)n);
			free(c.calls);
		}
}

/* One worker: a non-zero answer ends the loop right there. */
static void test_stop(void **state)
{
	(void)state;
	counts c = { .calls = calloc(100, sizeof(atomic_int)), .stop_at = 9 };
	assert_non_null(c.calls);
	assert_int_equal(par_for(1, 100, count_item, &c, NULL), 0);
	assert_int_equal(atomic_load(&c.total), 10); /* 0..9, then stopped */
	/* Several workers: each stops at its first index >= 9, so at most one
	 * index past 9 per worker is taken. */
	counts d = { .calls = calloc(100, sizeof(atomic_int)), .stop_at = 9 };
	assert_non_null(d.calls);
	assert_int_equal(par_for(4, 100, count_item, &d, NULL), 0);
	assert_true(atomic_load(&d.total) >= 10 && atomic_load(&d.total) <= 13);
	free(c.calls);
	free(d.calls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_index_once),
		cmocka_unit_test(test_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
