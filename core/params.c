/* params.c - see params.h. */
#include "params.h"

#include <stdio.h>
#include <string.h>

#include "stars.h"

static const sf_param *find(const sf_param *keys, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* "params.NAME: " in front of a parser's message that does not name its key yet. */
static int named(const sf_param *k, int rc, sf_err *err)
{
	if (err && strncmp(err->msg, "params.", 7)) {
		char prefix[80];
		snprintf(prefix, sizeof prefix, "params.%s: ", k->name);
		sf_err_prefix(err, prefix);
	}
	return rc;
}

static int read_one(const sf_param *k, const json_t *v, void *params, sf_err *err)
{
	void *field = (char *)params + k->offset;
	switch (k->type) {
	case SF_PARAM_INT: {
		json_int_t i = json_integer_value(v);
		if (!json_is_integer(v) || i < -1000000000 || i > 1000000000)
			return sf_err_set(err, SF_EINVAL, "params.%s must be an integer", k->name);
		*(int *)field = (int)i;
		return 0;
	}
	case SF_PARAM_REAL:
		if (!json_is_number(v))
			return sf_err_set(err, SF_EINVAL, "params.%s must be a number", k->name);
		*(double *)field = json_number_value(v);
		return 0;
	case SF_PARAM_NAME: {
		if (!json_is_string(v))
			return sf_err_set(err, SF_EINVAL, "params.%s must be a string", k->name);
		int rc = k->parse(json_string_value(v), field, err);
		return rc ? named(k, SF_EINVAL, err) : 0;
	}
	case SF_PARAM_CUSTOM: {
		int rc = k->read(v, params, err);
		return rc ? named(k, rc, err) : 0;
	}
	}
	return sf_err_set(err, SF_EINVAL, "params.%s has no reader", k->name);
}

int sf_params_read(const sf_param *keys, size_t n, const char *kind, const json_t *obj,
		   void *params, sf_err *err)
{
	if (!json_is_object(obj))
		return sf_err_set(err, SF_EINVAL, "params must be a JSON object");
	const char *name;
	json_t *v;
	json_object_foreach((json_t *)obj, name, v)
	{
		const sf_param *k = find(keys, n, name);
		if (!k) {
			char allowed[512];
			size_t at = 0;
			for (size_t i = 0; i < n && at < sizeof allowed; i++) {
				int w = snprintf(allowed + at, sizeof allowed - at, "%s%s",
						 i ? ", " : "", keys[i].name);
				at += w > 0 ? (size_t)w : 0;
			}
			return sf_err_set(err, SF_EINVAL,
					  "params.%s is not a %s parameter (allowed: %s)", name,
					  kind, allowed);
		}
		int rc = read_one(k, v, params, err);
		if (rc)
			return rc;
	}
	return 0;
}

json_t *sf_params_write(const sf_param *keys, size_t n, const void *params)
{
	json_t *obj = json_object();
	for (size_t i = 0; obj && i < n; i++) {
		const sf_param *k = &keys[i];
		const void *field = (const char *)params + k->offset;
		json_t *v = NULL;
		switch (k->type) {
		case SF_PARAM_INT:
			v = json_integer(*(const int *)field);
			break;
		case SF_PARAM_REAL:
			v = json_real(*(const double *)field);
			break;
		case SF_PARAM_NAME:
			v = json_string(k->name_of(field));
			break;
		case SF_PARAM_CUSTOM:
			v = k->write(params);
			break;
		}
		if (json_object_set_new(obj, k->name, v)) {
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
}

int sf_param_parse_stars(const char *text, void *field, sf_err *err)
{
	return stars_parse_strategy(text, field, err);
}

const char *sf_param_stars_name(const void *field)
{
	return stars_strategy_name(*(const stars_strategy *)field);
}

void sf_quote_key(const char *key, char out[SF_QUOTED_KEY])
{
	size_t n = 0;
	for (; key[n] && n < SF_QUOTED_KEY - 1; n++)
		out[n] = key[n] >= 0x20 && key[n] < 0x7f && key[n] != '"' ? key[n] : '?';
	out[n] = '\0';
}

const char *sf_json_type_name(json_type type)
{
	switch (type) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}
