/*
 * cmd_generate.c - `starforge generate KIND`: runs one generation job and
 * prints its result document (the one the service stores) on stdout.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/json_out.h"
#include "../../core/kinds.h"
#include "cli.h"

/* Seeds must survive JSON clients that hold numbers as doubles. */

static void usage(FILE *f)
{
	fputs("usage: starforge generate KIND --seed N [--params JSON] [--threads N] [--progress]\n"
	      "\n"
	      "Runs a level generator and prints one JSON document: the kind, seed and\n"
	      "params (every key spelled out, defaults included), the run's status, the\n"
	      "levels found (each with its three star thresholds) and the per-generation\n"
	      "series. The same KIND, seed and params give byte-identical output on any\n"
	      "machine and with any thread count.\n"
	      "\n"
	      "kinds:\n",
	      f);
	for (size_t i = 0; i < sf_kind_count(); i++)
		fprintf(f, "  %-10s %s\n", sf_kind_at(i)->name, sf_kind_at(i)->summary);
	fputs("\n"
	      "options:\n"
	      "  --seed N        the seed, 0..9007199254740991 (required)\n"
	      "  --params JSON   a JSON object of the kind's parameters, every key\n"
	      "                  optional (lattice: docs/lattice-search.md; racetrack:\n"
	      "                  docs/racetrack.md; digger: docs/digger.md)\n"
	      "  --threads N     evaluation threads, 1..256 (default: online CPUs)\n"
	      "  --progress      one line per generation on stderr\n"
	      "\n"
	      "Bad input prints one line to stderr and exits with status 2.\n",
	      f);
}

static void print_progress(void *arg, const ga_generation *g)
{
	(void)arg;
	fprintf(stderr, "generation %d/%d best %.6g mean %.6g at_best %d evaluations %llu",
		g->generation, g->generations, g->best, g->mean, g->at_best,
		(unsigned long long)g->evaluations);
	if (g->filled)
		fprintf(stderr, " cells %d", g->filled);
	fputc('\n', stderr);
}

int cli_generate(int argc, char **argv)
{
	const char *kindname = NULL, *params_text = NULL, *seed_text = NULL, *value;
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	int progress = 0;
	if (threads < 1)
		threads = 1;
	if (threads > 256)
		threads = 256;

	for (int i = 1; i < argc; i++) {
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return CLI_OK;
		}
		if (!strcmp(argv[i], "--progress")) {
			progress = 1;
		} else if ((m = cli_option("generate", argc, argv, &i, "--seed", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			seed_text = value;
		} else if ((m = cli_option("generate", argc, argv, &i, "--params", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			params_text = value;
		} else if ((m = cli_option("generate", argc, argv, &i, "--threads", &value)) != 0) {
			if (m < 0 || cli_int("generate", "--threads", value, 1, 256, &threads))
				return CLI_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return cli_usage_error("generate", "unknown option '%s' (see --help)",
					       argv[i]);
		} else if (kindname) {
			return cli_usage_error("generate", "more than one kind given ('%s', '%s')",
					       kindname, argv[i]);
		} else {
			kindname = argv[i];
		}
	}
	if (!kindname)
		return cli_usage_error("generate", "no kind given (see --help)");
	const sf_kind *kind = sf_kind_find(kindname);
	if (!kind)
		return cli_usage_error("generate", "unknown kind '%s' (see --help for the kinds)",
				       kindname);
	uint64_t seed;
	if (!seed_text)
		return cli_usage_error("generate", "--seed is required");
	if (cli_seed(seed_text, &seed))
		return cli_usage_error("generate", "--seed '%s' is not an integer in 0..%llu",
				       seed_text, (unsigned long long)CLI_SEED_MAX);

	json_t *pj = NULL;
	if (params_text) {
		json_error_t jerr;
		pj = json_loads(params_text, JSON_REJECT_DUPLICATES, &jerr);
		if (!pj)
			return cli_usage_error("generate",
					       "--params is not valid JSON: %s (column %d)",
					       jerr.text, jerr.column);
	}
	sf_err err = { 0 };
	void *params = kind->params_parse(pj, &err);
	json_decref(pj);
	if (!params)
		return cli_usage_error("generate", "%s", err.msg);

	sf_gen_opts opts = { .seed = seed,
			     .threads = (int)threads,
			     .progress = progress ? print_progress : NULL };
	json_t *doc = kind->generate(params, &opts, &err);
	kind->params_free(params);
	if (!doc) {
		fprintf(stderr, "starforge generate: %s\n", err.msg);
		/* Bad params, and params no puzzle can satisfy, are the caller's to fix. */
		return err.code == SF_EINVAL || err.code == SF_EBUDGET || err.code == SF_ERANGE
			       ? CLI_USAGE
			       : CLI_FAIL;
	}
	/* Full precision: echoed params must reproduce the run and its level ids. */
	char *text = sf_json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text) {
		fprintf(stderr, "starforge generate: out of memory writing the result\n");
		return CLI_FAIL;
	}
	puts(text);
	free(text);
	return CLI_OK;
}
