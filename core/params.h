/*
 * params.h - the table-driven JSON codec of a level kind's params.
 *
 * Each kind describes its params struct once, as a table of keys (name,
 * type, offset); the same table reads a request's JSON object (unknown
 * keys and wrong types refused with messages naming the key) and writes
 * the normalised params back with every key spelled out, so the parser,
 * the defaults and the output cannot disagree about which keys exist.
 */
#ifndef SF_PARAMS_H
#define SF_PARAMS_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

typedef enum sf_param_type {
	SF_PARAM_INT,    /* an int field, from a JSON integer */
	SF_PARAM_REAL,   /* a double field, from a JSON number */
	SF_PARAM_NAME,   /* a field parsed from a JSON string by `parse`, written by `name_of` */
	SF_PARAM_CUSTOM, /* read and written by `read` and `write` */
} sf_param_type;

typedef struct sf_param {
	const char *name;
	sf_param_type type;
	size_t offset; /* of the field in the params struct */
	/* SF_PARAM_NAME: text -> field, 0 or SF_EINVAL; field -> its name. */
	int (*parse)(const char *text, void *field, sf_err *err);
	const char *(*name_of)(const void *field);
	/* SF_PARAM_CUSTOM: JSON -> params struct, 0 or SF_EINVAL; params -> new JSON. */
	int (*read)(const json_t *v, void *params, sf_err *err);
	json_t *(*write)(const void *params);
} sf_param;

/*
 * Reads every member of the JSON object `obj` into `params` through
 * keys[0..n-1]. Returns 0, or SF_EINVAL when obj is not an object, a key is
 * not in the table ("params.K is not a KIND parameter (allowed: ...)"), or a
 * value has the wrong type or is refused by its parser; messages start with
 * "params.KEY". Keys absent from obj are left as they are (the defaults).
 */
int sf_params_read(const sf_param *keys, size_t n, const char *kind, const json_t *obj,
		   void *params, sf_err *err);

/* Every key of the table with its value in `params`, as a new JSON object, or NULL when out of
 * memory. */
json_t *sf_params_write(const sf_param *keys, size_t n, const void *params);

/* Ready-made SF_PARAM_NAME functions for a stars_strategy field. */
int sf_param_parse_stars(const char *text, void *field, sf_err *err);
const char *sf_param_stars_name(const void *field);

/*
 * The JSON type `type` as messages name it ("an object", "a real number",
 * "a boolean", ...), for "must be X, not Y" errors of every JSON reader.
 */
const char *sf_json_type_name(json_type type);

/* Room for a key quoted by sf_quote_key(), its NUL included. */
#define SF_QUOTED_KEY 28

/* A user's object key made safe to quote in a message: at most
 * SF_QUOTED_KEY - 1 characters, anything but printable ASCII and '"' as '?'. */
void sf_quote_key(const char *key, char out[SF_QUOTED_KEY]);

#endif
