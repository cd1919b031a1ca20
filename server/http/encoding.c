/* encoding.c - see encoding.h. */
#include "encoding.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/*
 * Reads a q-value at v ("1", "0.5", "0.125"; at most three decimals) into
 * thousandths; -1 when malformed or above 1. Not strtod: its decimal
 * point follows the locale.
 */
static int read_q(const char *v, size_t n)
{
	if (!n || (v[0] != '0' && v[0] != '1'))
		return -1;
	int q = (v[0] - '0') * 1000;
	size_t i = 1;
	if (i < n && v[i] == '.') {
		int scale = 100;
		for (i = 2; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
			if (!scale)
				return -1;
			q += (v[i] - '0') * scale;
			scale /= 10;
		}
	}
	return i == n && q <= 1000 ? q : -1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

int enc_accepts_gzip(const char *header)
{
	if (!header)
		return 0;
	int gzip_q = -1, star_q = -1, identity_q = -1;
	for (const char *p = header; *p;) {
		while (is_space(*p) || *p == ',')
			p++;
		const char *name = p;
		while (*p && *p != ',' && *p != ';' && !is_space(*p))
			p++;
		size_t len = (size_t)(p - name);
		int q = 1000;
		while (*p && *p != ',') { /* parameters: only q counts */
			while (is_space(*p) || *p == ';')
				p++;
			const char *param = p;
			while (*p && *p != ',' && *p != ';')
				p++;
			const char *end = p;
			while (end > param && is_space(end[-1]))
				end--;
			if ((param[0] == 'q' || param[0] == 'Q') && param + 1 < end &&
			    param[1] == '=')
				q = read_q(param + 2, (size_t)(end - param - 2));
		}
		if (q < 0)
			q = 0;
		if (!len)
			continue;
		if ((len == 4 && !strncasecmp(name, "gzip", 4)) ||
		    (len == 6 && !strncasecmp(name, "x-gzip", 6)))
			gzip_q = q > gzip_q ? q : gzip_q;
		else if (len == 1 && name[0] == '*')
			star_q = q;
		else if (len == 8 && !strncasecmp(name, "identity", 8))
			identity_q = q;
	}
	if (gzip_q < 0)
		gzip_q = star_q < 0 ? 0 : star_q;
	/* Identity unnamed is acceptable, but preferred to nothing listed. */
	if (identity_q < 0)
		identity_q = star_q < 0 ? 0 : star_q;
	return gzip_q > 0 && gzip_q >= identity_q;
}

int enc_compressible(const char *type)
{
	if (!type)
		return 0;
	size_t n = strcspn(type, ";");
	while (n && is_space(type[n - 1]))
		n--;
	static const char *const exact[] = { "application/json", "application/problem+json",
					     "application/yaml", "image/svg+xml" };
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (n == strlen(exact[i]) && !strncasecmp(type, exact[i], n))
			return 1;
	if (n > 5 && !strncasecmp(type + n - 5, "+json", 5) &&
	    !strncasecmp(type, "application/", 12))
		return 1;
	/* Text, but not a stream of events: those are never compressed. */
	return n > 5 && !strncasecmp(type, "text/", 5) &&
	       !(n == 17 && !strncasecmp(type, "text/event-stream", 17));
}

int enc_gzip(const char *in, size_t len, char **out, size_t *out_len)
{
	*out = NULL;
	if (len > UINT32_MAX)
		return -1; /* zlib counts a single input in 32 bits */
	z_stream z;
	memset(&z, 0, sizeof z);
	/* windowBits 15 + 16: a gzip wrapper; memLevel 8, zlib's default. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	gz_header head;
	memset(&head, 0, sizeof head);
	head.time = 0; /* no modification time: the same bytes on every call */
	head.os = 3;   /* fixed, whatever the build machine */
	uLong cap = deflateBound(&z, (uLong)len);
	char *buf = malloc(cap ? cap : 1);
	if (!buf || deflateSetHeader(&z, &head) != Z_OK) {
		free(buf);
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	size_t n = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) { /* cannot happen within deflateBound, but be sure */
		free(buf);
		return -1;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

void enc_etag_gz(const char *etag, char out[ENC_ETAG_MAX])
{
	size_t n = strlen(etag);
	if (n >= 2 && etag[n - 1] == '"' && n + 3 < ENC_ETAG_MAX) {
		memcpy(out, etag, n - 1);
		memcpy(out + n - 1, "-gz\"", 5);
		return;
	}
	snprintf(out, ENC_ETAG_MAX, "%.*s-gz", ENC_ETAG_MAX - 4, etag);
}
