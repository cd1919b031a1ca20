/*
 * encoding.h - gzip content coding for answers (RFC 9110 section 8.4):
 * whether a client accepts it, which media types are worth it, the
 * compression itself and the ETag of a compressed representation.
 *
 * The output is deterministic: zlib level 6, a gzip header with no name,
 * no modification time (0) and a fixed OS byte (3, Unix), so one body
 * always compresses to the same bytes with a given zlib, and the gzip
 * representation's strong ETag can be derived from the plain one (the
 * same hash with "-gz" inside the quotes) without compressing anything:
 * a 304 costs no compression.
 */
#ifndef SF_ENCODING_H
#define SF_ENCODING_H

#include <stddef.h>

/* Bodies shorter than this are sent as they are: gzip's framing would eat the gain. */
#define ENC_MIN_BYTES 256

/* The longest ETag enc_etag_gz writes, NUL included. */
#define ENC_ETAG_MAX 96

/*
 * True when an Accept-Encoding header value makes gzip the coding to
 * send: its q-value (from "gzip" or "x-gzip", else from "*", else 0) is
 * above 0 and at least identity's (from "identity", else "*", else 0:
 * acceptable, but not preferred to any coding the client lists).
 * NULL (no header) is false. q-values are read to three decimals; a
 * malformed one counts as 0. Pure.
 */
int enc_accepts_gzip(const char *accept_encoding);

/*
 * True for the media types sent compressed: JSON (application/json,
 * application/problem+json, any +json), SVG, YAML, and text/ (HTML, CSS,
 * JavaScript, plain). Parameters (charset) are ignored. NULL is false.
 */
int enc_compressible(const char *content_type);

/*
 * Compresses in[0..len-1] as one gzip member (deterministic, see above)
 * into a new buffer *out (caller frees) of *out_len bytes. Returns 0, or
 * -1 when out of memory (*out NULL).
 */
int enc_gzip(const char *in, size_t len, char **out, size_t *out_len);

/*
 * The ETag of the gzip representation of a body whose ETag is `etag`:
 * "\"HASH\"" becomes "\"HASH-gz\"" (a weak W/ prefix is kept). Writes at
 * most ENC_ETAG_MAX bytes; an etag too long or not quoted gets "-gz"
 * appended as is.
 */
void enc_etag_gz(const char *etag, char out[ENC_ETAG_MAX]);

#endif
