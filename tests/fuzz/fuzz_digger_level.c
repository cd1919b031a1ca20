/*
 * fuzz_digger_level.c - the Direction Digger level description validator
 * and the check operation (core/digger/codec.h), as POST /v1/digger/check
 * reaches them.
 *
 * The input is a JSON text. An object with a "level" member is a check
 * body: its level goes through dig_level_from_json() and the whole body
 * through the kind's check operation (moves replayed, the solver run);
 * anything else is read as a bare level description. Checked promises:
 * a description that reads writes back to itself (dig_level_to_json, then
 * dig_level_from_json, gives the same bytes); a play that collects all the
 * gold earns at least one star, and the solver never calls a level a play
 * has just solved unsolvable nor finds an optimum longer than that play.
 */
#include <jansson.h>

#include "../../core/digger/codec.h"
#include "../../core/kinds.h"
#include "fuzz.h"

/* The round trip of a description that read into `lv`. */
static void round_trip(const dig_level *lv)
{
	json_t *back = dig_level_to_json(lv);
	if (!back)
		return;
	static dig_level again;
	sf_err err = { 0 };
	int rc = dig_level_from_json(back, "level", &again, &err);
	if (rc)
		fprintf(stderr, "written description does not read: %s\n", err.msg);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(!memcmp(lv, &again, sizeof *lv));
	json_decref(back);
}

/* The check operation on `body`, and what its answer promises. */
static void check(const json_t *body)
{
	const sf_kind *kind = sf_kind_find("digger");
	FUZZ_CHECK(kind && kind->check);
	sf_err err = { 0 };
	json_t *res = kind->check(body, &err);
	if (!res) {
		FUZZ_CHECK(err.code == SF_EINVAL && err.msg[0]);
		return;
	}
	int solved = json_is_true(json_object_get(res, "solved"));
	json_int_t turns = json_integer_value(json_object_get(res, "turns"));
	const char *status =
		json_string_value(json_object_get(json_object_get(res, "solver"), "status"));
	FUZZ_CHECK(status);
	if (solved) {
		FUZZ_CHECK(strcmp(status, "unsolvable"));
		if (!strcmp(status, "solved")) {
			FUZZ_CHECK(json_integer_value(json_object_get(res, "optimum")) <= turns);
			FUZZ_CHECK(json_integer_value(json_object_get(res, "stars")) >= 1);
		}
	}
	json_decref(res);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
				 NULL);
	if (!doc)
		return 0;
	const json_t *level = json_is_object(doc) ? json_object_get(doc, "level") : NULL;
	static dig_level lv;
	sf_err err = { 0 };
	if (dig_level_from_json(level ? level : doc, "level", &lv, &err) == 0)
		round_trip(&lv);
	else
		FUZZ_CHECK(err.code == SF_EINVAL && !strncmp(err.msg, "level", 5));
	if (level)
		check(doc);
	json_decref(doc);
	return 0;
}
