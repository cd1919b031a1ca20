/*
 * evaluate.c - the method choice of one evaluation; see evaluate.h.
 */
#include "evaluate.h"

#include <string.h>

static const char *const method_names[] = {
	[LAT_METHOD_AUTO] = "auto",
	[LAT_METHOD_EXACT] = "exact",
	[LAT_METHOD_ESTIMATE] = "estimate",
};

void lat_eval_config_default(lat_eval_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->method = LAT_METHOD_AUTO;
	cfg->seed = 1;
	cfg->threads = 1;
}

const char *lat_method_name(lat_method m)
{
	return (unsigned)m < 3 ? method_names[m] : "unknown";
}

int lat_parse_method(const char *name, lat_method *out, sf_err *err)
{
	for (int i = 0; i < 3; i++) {
		if (name && !strcmp(name, method_names[i])) {
			*out = (lat_method)i;
			return 0;
		}
	}
	return sf_err_set(err, SF_EINVAL, "method '%s' is unknown (allowed: exact, estimate, auto)",
			  name ? name : "");
}

int lat_eval_check_length(lat_kind kind, int len, sf_err *err)
{
	int hi = kind == LAT_CUBIC ? LAT_EVAL_MAX_CUBIC : LAT_EVAL_MAX_SQUARE;
	if (len < 1 || len > hi)
		return sf_err_set(err, SF_EINVAL,
				  "sequence: %d residues is out of range (allowed: 1..%d on the %s "
				  "lattice)",
				  len, hi, lat_kind_name(kind));
	return 0;
}

lat_method lat_eval_resolve(lat_method m, lat_kind kind, int len, double exact_budget)
{
	if (m != LAT_METHOD_AUTO)
		return m;
	double budget = exact_budget > 0 ? exact_budget : LAT_DEFAULT_BUDGET;
	return lat_estimate(kind, len) <= budget ? LAT_METHOD_EXACT : LAT_METHOD_ESTIMATE;
}

void lat_star_counts_estimate(const double *hist, int nscores, double total, int max_score,
			      uint64_t counts[LAT_MAX_SCORE + 1])
{
	double top = 0x1p60, scale = total > top ? top / total : 1;
	memset(counts, 0, sizeof(uint64_t) * (LAT_MAX_SCORE + 1));
	for (int s = 0; s < nscores && s <= LAT_MAX_SCORE; s++) {
		double x = hist[s] * scale + 0.5;
		counts[s] = hist[s] > 0 ? (x < 1 ? 1 : (uint64_t)x) : 0;
	}
	if (max_score >= 0 && max_score <= LAT_MAX_SCORE && !counts[max_score])
		counts[max_score] = 1; /* found, too rare to sample */
}

static int run_estimate(lat_kind kind, const lat_seq *seq, const lat_eval_config *cfg,
			lat_evaluation *out, sf_err *err)
{
	lat_est_opts eo = { .seed = cfg->seed,
			    .runs = cfg->est_runs,
			    .budget = cfg->est_steps,
			    .threads = cfg->threads };
	int rc = lat_estimate_histogram(kind, seq->h, seq->len, &eo, &out->est, err);
	if (rc)
		return rc;

	lat_opt_chain chain;
	lat_opt_chain_from_seq(seq, &chain);
	lat_optimum_config oc;
	lat_optimum_defaults(&oc);
	oc.seed = cfg->seed;
	oc.moves = cfg->opt_moves ? cfg->opt_moves : LAT_OPT_DEFAULT_MOVES;
	oc.nodes = cfg->opt_nodes ? cfg->opt_nodes : LAT_EVAL_DEFAULT_NODES;
	lat_optimum_result opt;
	if (seq->len >= 2) {
		if ((rc = lat_optimum(kind, &chain, &oc, &opt, err)))
			return rc;
	} else {
		memset(&opt, 0, sizeof opt);
		opt.proven = 1; /* one residue: one conformation, no contact */
	}
	out->opt_score = opt.score;
	out->opt_proven = opt.proven;
	out->opt_moves = opt.moves;
	out->opt_nodes = opt.nodes;
	memcpy(out->opt_fold, opt.fold, sizeof out->opt_fold);
	/* An unproven search can fall short of a fold the estimate sampled. */
	if (!opt.proven && out->est.max_score > opt.score) {
		out->opt_score = out->est.max_score;
		memcpy(out->opt_fold, out->est.examples[out->est.max_score], sizeof out->opt_fold);
	}
	out->max_score = out->opt_score;
	lat_star_counts_estimate(out->est.hist, LAT_EST_MAX_SCORE + 1, out->est.total,
				 out->max_score, out->star_counts);
	return 0;
}

int lat_evaluate(lat_kind kind, const lat_seq *seq, const lat_eval_config *cfg, lat_evaluation *out,
		 sf_err *err)
{
	memset(out, 0, sizeof *out);
	int rc = lat_eval_check_length(kind, seq->len, err);
	if (rc)
		return rc;
	if (cfg->threads < 1 || cfg->threads > 1024)
		return sf_err_set(err, SF_EINVAL, "threads %d is out of range (allowed: 1..1024)",
				  cfg->threads);
	if ((unsigned)cfg->method > LAT_METHOD_ESTIMATE)
		return sf_err_set(err, SF_EINVAL, "method %d is unknown", (int)cfg->method);
	out->lattice = kind;
	out->len = seq->len;
	out->method = lat_eval_resolve(cfg->method, kind, seq->len, cfg->exact_budget);
	if (out->method == LAT_METHOD_ESTIMATE)
		return run_estimate(kind, seq, cfg, out, err);

	lat_opts eo = { .threads = cfg->threads, .budget = cfg->exact_budget };
	if ((rc = lat_enumerate(kind, seq, &eo, &out->exact, err)))
		return rc;
	out->max_score = out->opt_score = out->exact.max_score;
	out->opt_proven = 1;
	memcpy(out->opt_fold, out->exact.examples[out->exact.max_score], sizeof out->opt_fold);
	memcpy(out->star_counts, out->exact.hist, sizeof out->star_counts);
	return 0;
}
