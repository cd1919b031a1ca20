/*
 * bench_util.h - helpers shared by the benchmarks (bench_lattice.c,
 * bench_search.c): the median of a set of timings and a fatal-error exit.
 *
 * Define BENCH_NAME (the program's name, a string literal) before including
 * it: die() prefixes its message with it. Every function is static inline, so
 * a benchmark that leaves one unused gets no warning.
 */
#ifndef SF_BENCH_UTIL_H
#define SF_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "err.h"

#ifndef BENCH_NAME
#error "define BENCH_NAME before including bench_util.h"
#endif

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of `v[0..n)`, which it sorts in place. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Reports `what` failed with `err` on stderr and exits 1. */
static inline void die(const char *what, const sf_err *err)
{
	fprintf(stderr, BENCH_NAME ": %s: %s\n", what, err->msg);
	exit(1);
}

#endif
