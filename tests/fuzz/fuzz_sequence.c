/*
 * fuzz_sequence.c - the lattice sequence parser and what GET
 * /v1/evaluations/{lattice}/{sequence}?stars= feeds it (core/lattice/).
 *
 * The input is up to four lines: the sequence, then optionally the lattice
 * name, the star strategy and a fold (one direction letter per bond). Each
 * goes through the parser the service uses on its path segment or query
 * value (lat_seq_parse, lat_parse_kind, stars_parse_strategy) and the
 * budget check; a fold through lat_fold_score. A short sequence that reads
 * is also enumerated exactly, which makes the enumerator an oracle for the
 * fold scorer: a valid fold's score is a reachable one, and every example
 * fold the enumerator reports scores what it says.
 */
#include <jansson.h>

#include "../../core/lattice/lattice.h"
#include "../../core/lattice/lattice_json.h"
#include "../../core/stars.h"
#include "fuzz.h"

/* Enumerated exactly only up to this length: microseconds on either lattice. */
#define ENUMERATE_MAX 9

/* Splits text at its newlines into at most n fields; returns how many. */
static int split_lines(char *text, char **fields, int n)
{
	int k = 0;
	fields[k++] = text;
	for (char *p = text; *p && k < n; p++) {
		if (*p == '\n') {
			*p = '\0';
			fields[k++] = p + 1;
		}
	}
	return k;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	if (!text)
		return 0;
	char *field[4] = { 0 };
	int nfields = split_lines(text, field, 4);
	sf_err err = { 0 };
	lat_seq seq;
	lat_kind kind = LAT_SQUARE;
	stars_strategy strat = STARS_PAPER;
	int seq_ok = lat_seq_parse(field[0], &seq, &err) == 0;
	if (seq_ok) {
		char back[LAT_MAX_LEN + 1];
		lat_seq_format(&seq, back);
		FUZZ_CHECK(!strcmp(back, field[0]));
	} else {
		FUZZ_CHECK(err.code == SF_EINVAL && err.msg[0]);
	}
	if (nfields > 1 && lat_parse_kind(field[1], &kind, &err))
		goto out;
	if (nfields > 2 && stars_parse_strategy(field[2], &strat, &err))
		goto out;
	if (!seq_ok || lat_check_budget(kind, seq.len, 0, &err))
		goto out;

	int fold_score = -1;
	if (nfields > 3) {
		fold_score = lat_fold_score(kind, &seq, field[3], &err);
		FUZZ_CHECK(fold_score >= 0 || err.code == SF_EINVAL);
		FUZZ_CHECK(fold_score <= LAT_MAX_SCORE);
	}
	if (seq.len > ENUMERATE_MAX)
		goto out;
	static lat_result res;
	lat_opts opts = { .threads = 1, .budget = 0 };
	FUZZ_CHECK(lat_enumerate(kind, &seq, &opts, &res, &err) == 0);
	FUZZ_CHECK(res.max_score >= 0 && res.max_score <= LAT_MAX_SCORE);
	if (fold_score >= 0)
		FUZZ_CHECK(fold_score <= res.max_score && res.hist[fold_score] > 0);
	for (int s = 0; s <= res.max_score; s++) {
		if (res.hist[s])
			FUZZ_CHECK(lat_fold_score(kind, &seq, res.examples[s], &err) == s);
	}
	json_t *doc = lat_result_json(&res, &seq);
	stars_config cfg;
	stars_config_default(&cfg, strat);
	int thresholds[3];
	if (stars_thresholds(res.hist, res.max_score + 1, &cfg, thresholds, &err) == 0)
		FUZZ_CHECK(thresholds[0] < thresholds[1] && thresholds[1] < thresholds[2] &&
			   thresholds[2] <= res.max_score);
	json_decref(doc);
out:
	free(text);
	return 0;
}
