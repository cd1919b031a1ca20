/*
 * fuzz_px_model.c - the experience-model upload parsers (core/racetrack/
 * px.h) behind POST /v1/px-models: CSV, JSON, and the sniffing parse_any
 * that a job uses on a stored upload.
 *
 * The input is the upload body, handed over without a terminating NUL (the
 * parsers promise never to read outside text[0..len-1]). Each parser runs
 * on it, and the kind's validate hook for both formats when the body holds
 * no NUL (the service refuses those before validating). Checked promises:
 * parse_any gives what the parser of the sniffed format gives; a model
 * written as JSON reads back exactly; written as CSV (six decimals) it
 * reads back within rounding; every value lies in 0..1.
 */
#include <math.h>

#include <jansson.h>

#include "../../core/kinds.h"
#include "../../core/racetrack/px.h"
#include "fuzz.h"

static int same_model(const trk_px_model *a, const trk_px_model *b, double tolerance)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		if (fabs(a->traces[i].intensity - b->traces[i].intensity) > tolerance)
			return 0;
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			if (fabs(a->traces[i].window[f] - b->traces[i].window[f]) > tolerance)
				return 0;
	}
	return 1;
}

/* The promises of one model that parsed. */
static void check_model(const trk_px_model *m)
{
	FUZZ_CHECK(m->n >= 1 && m->n <= TRK_PX_MAX_TRACES);
	for (size_t i = 0; i < m->n; i++) {
		FUZZ_CHECK(m->traces[i].intensity >= 0 && m->traces[i].intensity <= 1);
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			FUZZ_CHECK(m->traces[i].window[f] >= 0 && m->traces[i].window[f] <= 1);
	}
	double p = trk_px_predict(m, m->traces[0].window);
	FUZZ_CHECK(p >= 0 && p <= 1);

	sf_err err = { 0 };
	json_t *doc = trk_px_model_json(m);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (text) {
		trk_px_model *back = trk_px_parse_json(text, strlen(text), &err);
		if (!back)
			fprintf(stderr, "written JSON does not read: %s\n", err.msg);
		FUZZ_CHECK(back && same_model(m, back, 0));
		trk_px_model_free(back);
		free(text);
	}
	size_t len = 0;
	char *csv = trk_px_model_csv(m, "fuzz\nround trip", &len);
	if (csv) {
		trk_px_model *back = trk_px_parse_csv(csv, len, &err);
		if (!back)
			fprintf(stderr, "written CSV does not read: %s\n", err.msg);
		FUZZ_CHECK(back && same_model(m, back, 5.000001e-7));
		trk_px_model_free(back);
		free(csv);
	}
}

/* The kind's validate hook, as resources_upload() calls it. */
static void validate(const char *body, size_t len, const char *format, const trk_px_model *m)
{
	const sf_kind *kind = sf_kind_find("racetrack");
	FUZZ_CHECK(kind && kind->resource && kind->resource->validate);
	json_t *summary = NULL;
	sf_err err = { 0 };
	int rc = kind->resource->validate(body, len, format, &summary, &err);
	FUZZ_CHECK((rc == 0) == (m != NULL));
	if (rc == 0)
		FUZZ_CHECK(json_integer_value(json_object_get(summary, "traces")) ==
			   (json_int_t)m->n);
	else
		FUZZ_CHECK(err.msg[0]);
	json_decref(summary);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	/* A copy of exactly `size` bytes, so ASan sees any read past the end. */
	char *body = malloc(size ? size : 1);
	if (!body)
		return 0;
	memcpy(body, data, size);
	sf_err err = { 0 };
	trk_px_model *csv = trk_px_parse_csv(body, size, &err);
	FUZZ_CHECK(csv || err.msg[0]);
	trk_px_model *js = trk_px_parse_json(body, size, &err);
	FUZZ_CHECK(js || err.msg[0]);
	trk_px_model *any = trk_px_parse_any(body, size, &err);
	size_t i = 0;
	while (i < size &&
	       (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
		i++;
	const trk_px_model *sniffed = i < size && body[i] == '{' ? js : csv;
	FUZZ_CHECK(!any == !sniffed);
	if (any)
		FUZZ_CHECK(same_model(any, sniffed, 0));
	if (csv)
		check_model(csv);
	if (js)
		check_model(js);
	if (!memchr(body, '\0', size)) {
		validate(body, size, "csv", csv);
		validate(body, size, "json", js);
	}
	trk_px_model_free(csv);
	trk_px_model_free(js);
	trk_px_model_free(any);
	free(body);
	return 0;
}
