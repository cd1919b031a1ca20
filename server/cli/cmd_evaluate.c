/*
 * cmd_evaluate.c - `starforge evaluate`: the evaluation of one sequence
 * (exact, or estimated for long chains: core/lattice/evaluate.h) as one
 * JSON object on stdout.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/lattice/evaluate.h"
#include "../../core/lattice/lattice.h"
#include "../../core/lattice/lattice_json.h"
#include "../../core/stars.h"
#include "../../core/stars_json.h"
#include "cli.h"

static const char usage[] =
	"usage: starforge evaluate [OPTIONS] SEQUENCE\n"
	"\n"
	"Evaluates an HP SEQUENCE (letters H and P; 1..64 residues square, 1..48\n"
	"cubic) and prints one JSON object: the score histogram (HH contacts, each\n"
	"conformation counted once up to the lattice's rotations and reflections),\n"
	"the maximum and the number of distinct scores, a fold reaching each score\n"
	"(one letter per bond: R L U D = +x -x +y -y, F B = +z -z), the best fold\n"
	"(\"optimum\": score, proven) and three star thresholds.\n"
	"\n"
	"options:\n"
	"  --method exact|estimate|auto\n"
	"                           exact: enumerate every conformation (refused\n"
	"                           past --budget); estimate: the histogram by\n"
	"                           flatPERM with a relative error per score, the\n"
	"                           optimum by pull-move replica exchange, then\n"
	"                           branch and bound (proven when it completes);\n"
	"                           auto (default): exact within --budget, else\n"
	"                           estimate\n"
	"  --seed N                 the estimate's random seed (default 1)\n"
	"  --steps N                estimate: flatPERM growth steps (default 1e8)\n"
	"  --moves N                estimate: optimum heuristic moves (default 2e7)\n"
	"  --nodes N                estimate: branch-and-bound nodes (default 5e7)\n"
	"  --lattice square|cubic   the lattice (default square)\n"
	"  --stars STRATEGY         paper, percentile or geometric (default paper)\n"
	"  --threads N              worker threads, 1..256 (default: online CPUs)\n"
	"  --budget N               refuse work estimated above N conformations\n"
	"                           (default 2.5e9: length 24 square, 17 cubic)\n"
	"  --engine direct|cmap     exact: direct enumeration (default), or through the\n"
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

/* A count option in 1..1e13 (steps, moves, nodes): 0, or the usage error's status. */
static int count_option(const char *name, const char *value, double *out)
{
	char *end;
	*out = strtod(value, &end);
	if (!*value || *end || !(*out >= 1 && *out <= 1e13))
		return cli_usage_error("evaluate", "%s '%s' is not a number in 1..1e13", name,
				       value);
	return 0;
}

int cli_evaluate(int argc, char **argv)
{
	const char *lattice = "square", *strategy = "paper", *engine = "direct";
	const char *seqtext = NULL, *method = "auto", *value;
	lat_opts opts = { .threads = online_cpus(), .budget = 0 };
	int have_budget = 0;
	lat_eval_config ecfg;
	lat_eval_config_default(&ecfg);

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
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--method", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			method = value;
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--seed", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			if (cli_seed(value, &ecfg.seed))
				return cli_usage_error("evaluate",
						       "--seed '%s' is not an integer in 0..%llu",
						       value, (unsigned long long)CLI_SEED_MAX);
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--steps", &value)) != 0) {
			if (m < 0 || count_option("--steps", value, &ecfg.est_steps))
				return CLI_USAGE;
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--moves", &value)) != 0) {
			double x;
			if (m < 0 || count_option("--moves", value, &x))
				return CLI_USAGE;
			ecfg.opt_moves = (uint64_t)x;
		} else if ((m = cli_option("evaluate", argc, argv, &i, "--nodes", &value)) != 0) {
			double x;
			if (m < 0 || count_option("--nodes", value, &x))
				return CLI_USAGE;
			ecfg.opt_nodes = (uint64_t)x;
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
	    (rc = lat_parse_method(method, &ecfg.method, &err)) ||
	    (rc = lat_seq_parse(seqtext, &seq, &err)) ||
	    (rc = lat_eval_check_length(kind, seq.len, &err)))
		return cli_usage_error("evaluate", "%s", err.msg);
	if (strcmp(engine, "direct") && strcmp(engine, "cmap"))
		return cli_usage_error("evaluate", "unknown engine '%s' (allowed: direct, cmap)",
				       engine);
	stars_config_default(&stars, strat);
	ecfg.threads = opts.threads;
	ecfg.exact_budget = opts.budget;

	static lat_evaluation ev;
	lat_method resolved = lat_eval_resolve(ecfg.method, kind, seq.len, ecfg.exact_budget);
	if (resolved == LAT_METHOD_EXACT && !strcmp(engine, "cmap")) {
		lat_opts dbopts = opts;
		dbopts.budget = have_budget ? opts.budget : 0;
		lat_db *db = lat_db_build(kind, seq.len, &dbopts, &err);
		rc = db ? lat_db_evaluate(db, &seq, &ev.exact, &err) : err.code;
		lat_db_free(db);
		if (!rc) {
			ev.lattice = kind;
			ev.len = seq.len;
			ev.method = LAT_METHOD_EXACT;
			ev.max_score = ev.opt_score = ev.exact.max_score;
			ev.opt_proven = 1;
			memcpy(ev.opt_fold, ev.exact.examples[ev.max_score], sizeof ev.opt_fold);
			memcpy(ev.star_counts, ev.exact.hist, sizeof ev.star_counts);
		}
	} else {
		rc = lat_evaluate(kind, &seq, &ecfg, &ev, &err);
	}
	if (rc) {
		fprintf(stderr, "starforge evaluate: %s\n", err.msg);
		return exit_for(rc);
	}

	int thresholds[3];
	sf_err serr = { 0 };
	int have =
		stars_thresholds(ev.star_counts, ev.max_score + 1, &stars, thresholds, &serr) == 0;
	json_t *doc = lat_evaluation_json(&ev, &seq, &ecfg);
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
