/* json_out.c - see json_out.h. */
#include "json_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "%.*g" of v at p significant digits reads back as v. */
static int round_trips(double v, int p, char *buf, size_t size)
{
	snprintf(buf, size, "%.*g", p, v);
	return strtod(buf, NULL) == v;
}

int sf_json_real_text(double v, char *buf, size_t size)
{
	/*
	 * If p digits read back as v, so do p + 1 (the longer text is at least
	 * as close to v), so the shortest p is found by bisection over 1..17;
	 * 17 digits always read back for a finite double.
	 */
	int lo = 1, hi = 17;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (round_trips(v, mid, buf, size))
			hi = mid;
		else
			lo = mid + 1;
	}
	/*
	 * %g writes 100 at one digit as 1e+02; where jansson's 17 digits would
	 * have been fixed notation (exponent below 17), stay fixed, padding the
	 * shortest digits with zeros as JavaScript does: 100.0, 36603058655753710.0.
	 */
	char sci[40];
	snprintf(sci, sizeof sci, "%.*e", lo - 1, v);
	const char *e = strchr(sci, 'e');
	int exponent = e ? atoi(e + 1) : 0;
	int n;
	if (e && exponent >= lo && exponent < 17 && size >= 24) {
		n = 0;
		for (const char *c = sci; c < e; c++)
			if (*c != '.')
				buf[n++] = *c;
		for (int z = exponent + 1 - lo; z > 0; z--)
			buf[n++] = '0';
		buf[n] = '\0';
	} else {
		n = snprintf(buf, size, "%.*g", lo, v);
	}
	if (n > 0 && (size_t)n + 2 < size && !strpbrk(buf, ".eEn")) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	return n;
}

/* A number token at text[i..]: its length (digits, sign, '.', exponent). */
static size_t number_length(const char *text, size_t i, int *is_real)
{
	size_t j = i;
	*is_real = 0;
	while (text[j] && strchr("0123456789+-.eE", text[j])) {
		if (strchr(".eE", text[j]))
			*is_real = 1;
		j++;
	}
	return j - i;
}

char *sf_json_dumps(const json_t *doc, size_t flags)
{
	char *text = doc ? json_dumps(doc, flags) : NULL;
	if (!text)
		return NULL;
	size_t len = strlen(text);
	/* A real is only ever replaced by a text no longer than jansson's. */
	char *out = malloc(len + 1);
	if (!out) {
		free(text);
		return NULL;
	}
	size_t o = 0;
	int in_string = 0;
	for (size_t i = 0; i < len;) {
		char c = text[i];
		if (in_string) {
			out[o++] = c;
			if (c == '\\' && i + 1 < len)
				out[o++] = text[++i];
			else if (c == '"')
				in_string = 0;
			i++;
			continue;
		}
		if (c == '"') {
			in_string = 1;
			out[o++] = text[i++];
			continue;
		}
		if (c == '-' || (c >= '0' && c <= '9')) {
			int is_real;
			size_t n = number_length(text, i, &is_real);
			double v;
			char buf[40];
			if (is_real && n < sizeof buf && isfinite(v = strtod(text + i, NULL))) {
				int m = sf_json_real_text(v, buf, sizeof buf);
				if (m > 0 && (size_t)m <= n) {
					memcpy(out + o, buf, (size_t)m);
					o += (size_t)m;
					i += n;
					continue;
				}
			}
			memcpy(out + o, text + i, n);
			o += n;
			i += n;
			continue;
		}
		out[o++] = text[i++];
	}
	out[o] = '\0';
	free(text);
	return out;
}
