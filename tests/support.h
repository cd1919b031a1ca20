/* support.h - helpers shared by every test suite. */
#ifndef SF_TEST_SUPPORT_H
#define SF_TEST_SUPPORT_H

#include <stdio.h>
#include <string.h>

/* True when `msg` contains the decimal number `n` not adjacent to other digits. */
static inline int has_number(const char *msg, long n)
{
	char num[24];
	snprintf(num, sizeof num, "%ld", n);
	size_t len = strlen(num);
	for (const char *p = strstr(msg, num); p; p = strstr(p + 1, num)) {
		int before = p > msg && p[-1] >= '0' && p[-1] <= '9';
		int after = p[len] >= '0' && p[len] <= '9';
		if (!before && !after)
			return 1;
	}
	return 0;
}

#endif
