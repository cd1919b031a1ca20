/*
 * json_out.h - JSON text with every real number in its shortest form.
 *
 * jansson writes a real with 17 significant digits, enough to read back the
 * same double but not what the user wrote: a mutation_rate of 0.2 echoes as
 * 0.20000000000000001. Clients compare what they sent with what they get
 * back, and people read levels, so every document the service and the CLI
 * write goes through sf_json_dumps: the same text, with each real replaced
 * by the fewest significant digits (1..17) that still read back, through
 * strtod, as exactly the same double. Reading the echo back therefore gives
 * the same params, and the same level ids, as the original.
 *
 * Level ids and Idempotency-Key hashes are computed from their own
 * canonical texts (17 digits), not from this output, so shortening never
 * changes an id.
 */
#ifndef SF_JSON_OUT_H
#define SF_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>

/*
 * json_dumps(doc, flags) with every real rewritten in its shortest
 * round-trip form (a real keeps a '.' or an exponent, so it stays a real:
 * 2.0, not 2). Returns malloc'ed text (free() it), or NULL when doc is NULL,
 * out of memory, or jansson refuses the value (as json_dumps does).
 * Deterministic: the digits depend only on the double, not on the machine.
 */
char *sf_json_dumps(const json_t *doc, size_t flags);

/*
 * Writes into buf (size >= 32) the shortest text of the finite double v
 * that strtod reads back as v, with ".0" appended when it would otherwise
 * look like an integer. Returns its length.
 */
int sf_json_real_text(double v, char *buf, size_t size);

#endif
