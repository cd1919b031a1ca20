/*
 * cmd_picture.c - `starforge picture`: the SVG picture of a level or an
 * evaluation, the same bytes the service answers at GET /v1/levels/{id}.svg
 * and GET /v1/evaluations/{lattice}/{sequence}.svg.
 *
 * It reads one JSON document (a file or stdin): a level (it has "kind"), the
 * result of `starforge generate` (it has "levels"; --index picks one), or a
 * lattice evaluation from `starforge evaluate` (it has "histogram"). So
 *
 *   starforge generate digger --seed 1 | starforge picture > digger.svg
 *
 * is all a designer needs, and docs/img/ is made this way (docs/img/README.md).
 * --star N draws a lattice level with the fold of N stars, as
 * GET /v1/levels/{id}.svg?star=N does.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/kinds.h"
#include "../../core/lattice/svg.h"
#include "cli.h"

static void usage(FILE *f)
{
	fputs("usage: starforge picture [--index N] [--star S] [FILE]\n"
	      "\n"
	      "Prints the SVG picture of a level: FILE (or stdin) holds a level document,\n"
	      "the output of 'starforge generate' (level N of it, default 0) or a lattice\n"
	      "evaluation from 'starforge evaluate'. The same document always gives the\n"
	      "same bytes, those the service answers at GET /v1/levels/{id}.svg.\n"
	      "\n"
	      "options:\n"
	      "  --index N   which level of a generate result, 0..100000 (default 0)\n"
	      "  --star S    1, 2 or 3: a lattice level with the fold of S stars (default:\n"
	      "              the three-star fold), as GET /v1/levels/{id}.svg?star=S;\n"
	      "              refused for other kinds, evaluations and levels without\n"
	      "              star bands\n"
	      "\n"
	      "Bad input prints one line to stderr and exits with status 2.\n",
	      f);
}

int cli_picture(int argc, char **argv)
{
	const char *path = NULL, *value;
	long index = 0, star = 0;
	for (int i = 1; i < argc; i++) {
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return CLI_OK;
		}
		if ((m = cli_option("picture", argc, argv, &i, "--index", &value)) != 0) {
			if (m < 0 || cli_int("picture", "--index", value, 0, 100000, &index))
				return CLI_USAGE;
		} else if ((m = cli_option("picture", argc, argv, &i, "--star", &value)) != 0) {
			if (m < 0 || cli_int("picture", "--star", value, 1, 3, &star))
				return CLI_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage_error("picture", "unknown option '%s'", argv[i]);
		} else if (path) {
			return cli_usage_error("picture", "one FILE at most ('%s' is a second)",
					       argv[i]);
		} else {
			path = argv[i];
		}
	}
	json_error_t jerr;
	json_t *doc = path && strcmp(path, "-") ? json_load_file(path, 0, &jerr)
						: json_loadf(stdin, 0, &jerr);
	if (!doc)
		return cli_usage_error("picture", "%s: line %d: %s", path ? path : "stdin",
				       jerr.line, jerr.text);
	const json_t *level = doc;
	const json_t *levels = json_object_get(doc, "levels");
	if (json_is_array(levels)) {
		if ((size_t)index >= json_array_size(levels)) {
			json_decref(doc);
			return cli_usage_error("picture",
					       "--index %ld: the document has %zu levels", index,
					       json_array_size(levels));
		}
		level = json_array_get(levels, (size_t)index);
	}
	sf_err err = { 0 };
	char *svg = NULL;
	const char *kind = json_string_value(json_object_get(level, "kind"));
	if (kind) {
		const sf_kind *k = sf_kind_find(kind);
		if (!k || !k->level_svg)
			sf_err_set(&err, SF_EINVAL, "kind '%.64s' has no picture", kind);
		else if (star && !k->level_svg_star)
			sf_err_set(&err, SF_EINVAL,
				   "--star: the picture of a %s level has no choice of star (it "
				   "chooses the fold of a lattice level)",
				   k->name);
		else if (star)
			svg = k->level_svg_star(level, (int)star, &err);
		else
			svg = k->level_svg(level, &err);
	} else if (star) {
		sf_err_set(&err, SF_EINVAL,
			   "--star: only a level has a fold for each star (not an evaluation)");
	} else if (json_object_get(level, "histogram")) {
		svg = lat_evaluation_svg(level, &err);
	} else {
		sf_err_set(&err, SF_EINVAL,
			   "not a level, a generate result or an evaluation (no kind, levels "
			   "or histogram)");
	}
	json_decref(doc);
	if (!svg) {
		fprintf(stderr, "starforge picture: %s\n", err.msg);
		return err.code == SF_EINVAL || err.code == SF_ERANGE ? CLI_USAGE : CLI_FAIL;
	}
	int ok = fputs(svg, stdout) >= 0 && fflush(stdout) == 0;
	free(svg);
	if (!ok) {
		fprintf(stderr, "starforge picture: cannot write stdout\n");
		return CLI_FAIL;
	}
	return CLI_OK;
}
