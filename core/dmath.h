/*
 * dmath.h - the few transcendental functions that feed generated levels,
 * computed with IEEE basic arithmetic only.
 *
 * A level must be byte-identical on every machine. libm's log() may differ in
 * its last bit between builds and CPUs (glibc picks FMA variants at run
 * time), and a fitness that differs in its last bit can reorder a ranking.
 * These functions use only frexp/ldexp (exact) and + - * / (correctly
 * rounded, and not contracted into FMA: the build is ISO C, where GCC keeps
 * -ffp-contract=off), so they give the same bits everywhere. Accuracy is a
 * few units in the last place, ample for fitness and descriptors.
 */
#ifndef SF_DMATH_H
#define SF_DMATH_H

/* The natural logarithm of x > 0; -HUGE_VAL for 0, NaN for negative or NaN input. */
double dm_log(double x);

/* The base-10 logarithm of x, as dm_log(x) / ln 10. */
double dm_log10(double x);

#endif
