/*
 * cmd_evaluate.c - `starforge evaluate`: the exact evaluation of one
 * sequence as one JSON object on stdout.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/lattice/lattice.h"
#include "../../core/lattice/lattice_json.h"
#include "../../core/stars.h"
#include "../../core/stars_json.h"
#include "cli.h"

static const char usage[] =
	"usage: starforge evaluate [OPTIONS] SEQUENCE\n"
	"\n"
	"Enumerates every conformation of an HP SEQUENCE (letters H and P) exactly,\n"
	"each counted once up to the lattice's rotations and reflections, and prints\n"
	"one JSON object: the score histogram (HH contacts), the maximum and the\n"
	"number of distinct scores, the first fold reaching each score (one letter per\n"
	"bond: R L U D = +x -x +y -y, F B = +z -z) and three star thresholds.\n"
	"\n"
	"options:\n"
	"  --lattice square|cubic   the lattice (default square)\n"
	"  --stars STRATEGY         paper, percentile or geometric (default paper)\n"
	"  --threads N              worker threads, 1..256 (default: online CPUs)\n"
	"  --budget N               refuse work estimated above N conformations\n"
	"                           (default 2.5e9: length 24 square, 17 cubic)\n"
	"  --engine direct|cmap     direct enumeration (default), or through the\n"
	"                           contact-map database of the sequence's length\n"
	"                           (built first; its budget defaults to 5e7)\n"
	"\n"
	"Bad input prints one line to stderr and exits with status 2.\n";

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

static int exit_for(int code)
{
	return code == SF_EINVAL || code == SF_EBUDGET ? CLI_USAGE : CLI_FAIL;
}

int cli_evaluate(int argc, char **argv)
{
	const char *lattice = "square", *strategy = "paper", *engine = "direct";
	const char *seqtext = NULL, *value;
	lat_opts opts = { .threads = online_cpus(), .budget = 0 };
	int have_budget = 0;

	for (int i = 1; i < argc; i++) {
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return CLI_OK;
		}
		if ((m = cli_option("evaluate", argc, argv, &i, "--lattice", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			lattice = value;
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--stars", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			strategy = value;
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--engine", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			engine = value;
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--threads", &value)) != 0) {
			long n;
			if (m < 0 || cli_int("evaluate", "--threads", value, 1, 256, &n))
				return CLI_USAGE;
			opts.threads = (int)n;
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--budget", &value)) != 0) {
			char *end;
			if (m < 0)
				return CLI_USAGE;
			opts.budget = strtod(value, &end);
			if (!*value || *end || !(opts.budget >= 1 && opts.budget <= 1e15))
				return cli_usage_error("evaluate",
						       "--budget '%s' is not a number in 1..1e15",
						       value);
			have_budget = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return cli_usage_error("evaluate", "unknown option '%s' (see --help)",
					       argv[i]);
		} else if (seqtext) {
			return cli_usage_error("evaluate",
					       "more than one sequence given ('%s', '%s')", seqtext,
					       argv[i]);
		} else {
			seqtext = argv[i];
		}
	}
	if (!seqtext)
		return cli_usage_error("evaluate", "no sequence given (see --help)");

	sf_err err = { 0 };
	lat_kind kind;
	lat_seq seq;
	stars_config stars;
	stars_strategy strat;
	int rc;
	if ((rc = lat_parse_kind(lattice, &kind, &err)) ||
	    (rc = stars_parse_strategy(strategy, &strat, &err)) ||
	    (rc = lat_seq_parse(seqtext, &seq, &err)))
		return cli_usage_error("evaluate", "%s", err.msg);
	stars_config_default(&stars, strat);

	static lat_result res;
	if (!strcmp(engine, "direct")) {
		rc = lat_enumerate(kind, &seq, &opts, &res, &err);
	} else if (!strcmp(engine, "cmap")) {
		lat_opts dbopts = opts;
		dbopts.budget = have_budget ? opts.budget : 0;
		lat_db *db = lat_db_build(kind, seq.len, &dbopts, &err);
		rc = db ? lat_db_evaluate(db, &seq, &res, &err) : err.code;
		lat_db_free(db);
	} else {
		return cli_usage_error("evaluate", "unknown engine '%s' (allowed: direct, cmap)",
				       engine);
	}
	if (rc) {
		fprintf(stderr, "starforge evaluate: %s\n", err.msg);
		return exit_for(rc);
	}

	int thresholds[3];
	sf_err serr = { 0 };
	int have = stars_thresholds(res.hist, res.max_score + 1, &stars, thresholds, &serr) == 0;
	json_t *doc = lat_result_json(&res, &seq);
	json_t *sj = stars_json(&stars, "contacts", have ? thresholds : NULL, serr.msg);
	if (!doc || !sj || json_object_set_new(doc, "stars", sj)) {
		if (!doc)
			json_decref(sj);
		json_decref(doc);
		fprintf(stderr, "starforge evaluate: out of memory writing the result\n");
		return CLI_FAIL;
	}
	char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(doc);
	if (!text) {
		fprintf(stderr, "starforge evaluate: out of memory writing the result\n");
		return CLI_FAIL;
	}
	puts(text);
	free(text);
	return CLI_OK;
}
