/*
 * cmd_race.c - `starforge race`: races a racetrack level again and prints
 * each segment's PX over those races against the level's target, the
 * held-out check of docs/racetrack.md.
 *
 * The track is rebuilt from the level's puzzle (core/racetrack/level_parse.h,
 * bit for bit the searched one), the race params from the level's params
 * (player_skill) and the PX model is the built-in synthetic one, or the
 * trace set given with --px-model. Without --race-seed the races are the
 * level's own (stats.race_seeds), so the output reproduces each segment's
 * simulated_px and simulated_px_sd exactly; with --race-seed S they are
 * trk_heldout_seeds(S, N), races the search never saw, and "ratio" says
 * how much worse the level fits on them than on its own.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_out.h"
#include "../../core/racetrack/fitness.h"
#include "../../core/racetrack/level_parse.h"
#include "../../core/racetrack/search.h"
#include "cli.h"

/* Seeds must survive JSON clients that hold numbers as doubles. */
#define DEFAULT_RACES 30
/* The largest trace set --px-model reads: the service's upload limit is far below. */
#define PX_FILE_MAX (64u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: starforge race [--races N] [--race-seed S] [--level K] [--px-model FILE]\n"
		"                      [FILE]\n"
		"\n"
		"Races a racetrack level again and prints one JSON object: the races run,\n"
		"their seeds, each segment's target and mean PX over the races with its\n"
		"standard deviation, the mean absolute error against the target, the\n"
		"level's own error (-stats.fitness.value) and their ratio. FILE (or stdin)\n"
		"holds a level, or the output of 'starforge generate racetrack' (level K of\n"
		"it, default 0). The track is the level's puzzle, the player's skill its\n"
		"params.player_skill.\n"
		"\n"
		"options:\n"
		"  --race-seed S    race on %d held-out seeds drawn from S, 0..%llu,\n"
		"                   races the search never saw (default: the level's own\n"
		"                   stats.race_seeds, which reproduce its simulated PX)\n"
		"  --races N        how many held-out races, 1..%d (with --race-seed)\n"
		"  --level K        which level of a generate result, 0..100000\n"
		"  --px-model FILE  the experience model's play traces (CSV or JSON, as\n"
		"                   POST /v1/px-models takes them); needed for a level whose\n"
		"                   params.px_model names an uploaded model (default:\n"
		"                   the built-in synthetic model)\n"
		"\n"
		"Bad input prints one line to stderr and exits with status 2.\n",
		DEFAULT_RACES, (unsigned long long)CLI_SEED_MAX, TRK_MAX_RACES);
}

/* The whole of `path`, malloc'ed and NUL-terminated, or NULL (message printed). */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		cli_usage_error("race", "--px-model '%s': cannot open it: %s", path,
				strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *text = NULL;
	int over = 0;
	for (;;) {
		char *more = realloc(text, cap);
		if (!more) {
			free(text);
			fclose(f);
			fprintf(stderr, "starforge race: out of memory reading '%s'\n", path);
			return NULL;
		}
		text = more;
		n += fread(text + n, 1, cap - 1 - n, f);
		if (n < cap - 1)
			break;
		if (cap >= PX_FILE_MAX) {
			over = 1;
			break;
		}
		cap *= 2;
	}
	int bad = ferror(f) || over;
	fclose(f);
	if (bad) {
		free(text);
		cli_usage_error("race", "--px-model '%s': cannot read it, or it is over %u MiB",
				path, PX_FILE_MAX >> 20);
		return NULL;
	}
	text[n] = '\0';
	*len = n;
	return text;
}

/* The experience model: --px-model's traces, or the level's built-in one. */
static trk_px_model *race_model(const trk_search_params *p, const char *px_file, int *status)
{
	sf_err err = { 0 };
	*status = CLI_USAGE;
	if (!px_file && strcmp(p->px_model, TRK_PX_SYNTHETIC)) {
		cli_usage_error(
			"race",
			"the level's params.px_model '%s' is an uploaded model; the command "
			"line knows only 'synthetic' (give the model's traces with --px-model "
			"FILE)",
			p->px_model);
		return NULL;
	}
	trk_px_model *model = NULL;
	if (px_file) {
		size_t len = 0;
		char *text = read_file(px_file, &len);
		if (!text)
			return NULL;
		model = trk_px_parse_any(text, len, &err);
		free(text);
		if (!model)
			cli_usage_error("race", "--px-model '%s': %s", px_file, err.msg);
	} else if (!(model = trk_search_model(p, &err))) {
		fprintf(stderr, "starforge race: %s\n", err.msg);
	}
	if (!model && err.code != SF_EINVAL)
		*status = CLI_FAIL;
	return model;
}

/* The level's own race seeds, stats.race_seeds, into seeds[]; their count or -1. */
static int level_seeds(const json_t *level, uint64_t *seeds)
{
	const json_t *arr = json_object_get(json_object_get(level, "stats"), "race_seeds");
	if (!arr) {
		cli_usage_error(
			"race",
			"the level has no stats.race_seeds; give --race-seed S to race it on "
			"held-out seeds");
		return -1;
	}
	size_t n = json_array_size(arr);
	if (!json_is_array(arr) || n < 1 || n > TRK_MAX_RACES) {
		cli_usage_error("race", "stats.race_seeds: must be an array of 1..%d seeds",
				TRK_MAX_RACES);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		const json_t *v = json_array_get(arr, k);
		json_int_t s = json_integer_value(v);
		if (!json_is_integer(v) || s < 0 || (unsigned long long)s > CLI_SEED_MAX) {
			cli_usage_error("race",
					"stats.race_seeds[%zu]: must be an integer in 0..%llu", k,
					(unsigned long long)CLI_SEED_MAX);
			return -1;
		}
		seeds[k] = (uint64_t)s;
	}
	return (int)n;
}

/* The result object (see the top of this file); NULL when out of memory. */
static json_t *result_json(const json_t *level, const trk_px_fit *fit, const uint64_t *seeds)
{
	json_t *seeds_json = json_array(), *segments = json_array();
	int bad = !seeds_json || !segments;
	for (size_t k = 0; !bad && k < fit->nraces; k++)
		bad = json_array_append_new(seeds_json, json_integer((json_int_t)seeds[k]));
	for (size_t i = 0; !bad && i < fit->nsegments; i++)
		bad = json_array_append_new(
			segments, json_pack("{s:I, s:f, s:f, s:f}", "index", (json_int_t)i,
					    "target", fit->target[i], "simulated_px", fit->mean[i],
					    "simulated_px_sd", fit->sd[i]));
	const json_t *value = json_object_get(
		json_object_get(json_object_get(level, "stats"), "fitness"), "value");
	json_t *level_error = json_null(), *ratio = json_null();
	if (json_is_number(value)) {
		double e = -json_number_value(value);
		level_error = json_real(e);
		if (e > 0)
			ratio = json_real(fit->error / e);
	}
	const char *id = json_string_value(json_object_get(level, "id"));
	if (bad) {
		json_decref(seeds_json);
		json_decref(segments);
		json_decref(level_error);
		json_decref(ratio);
		return NULL;
	}
	return json_pack("{s:o, s:I, s:o, s:o, s:f, s:o, s:o}", "level_id",
			 id ? json_string(id) : json_null(), "races", (json_int_t)fit->nraces,
			 "race_seeds", seeds_json, "segments", segments, "error", fit->error,
			 "level_error", level_error, "ratio", ratio);
}

/* Races `level` and prints the result; the exit status. */
static int race_level(const json_t *level, const uint64_t *seeds, int nseeds, const char *px_file)
{
	sf_err err = { 0 };
	trk_search_params p;
	if (trk_search_params_from_json(json_object_get(level, "params"), &p, &err))
		return cli_usage_error("race", "the level's %s", err.msg);
	trk_track *track = trk_puzzle_track(json_object_get(level, "puzzle"), "puzzle", &err);
	if (!track) {
		fprintf(stderr, "starforge race: %s\n", err.msg);
		return err.code == SF_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	int status;
	trk_px_model *model = race_model(&p, px_file, &status);
	if (!model) {
		trk_track_free(track);
		return status;
	}
	trk_race_params rp;
	trk_race_params_default(&rp);
	rp.player_skill = p.player_skill;
	trk_px_fit fit;
	int rc = trk_track_px(track, &rp, model, seeds, (size_t)nseeds, p.target, p.ntarget, &fit,
			      NULL, &err);
	trk_px_model_free(model);
	trk_track_free(track);
	if (rc) {
		fprintf(stderr, "starforge race: %s\n", err.msg);
		return rc == SF_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	json_t *doc = result_json(level, &fit, seeds);
	char *text = doc ? sf_json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text) {
		fprintf(stderr, "starforge race: out of memory writing the result\n");
		return CLI_FAIL;
	}
	int ok = puts(text) >= 0 && fflush(stdout) == 0;
	free(text);
	if (!ok) {
		fprintf(stderr, "starforge race: cannot write stdout\n");
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* The level the document holds: itself, or levels[index] of a generate result. */
static const json_t *pick_level(const json_t *doc, long index, int index_given)
{
	const json_t *levels = json_object_get(doc, "levels");
	if (!json_is_object(doc)) {
		cli_usage_error("race", "the input is not a racetrack level or a generate result "
					"(a JSON object)");
		return NULL;
	}
	if (json_is_array(levels)) {
		if ((size_t)index >= json_array_size(levels)) {
			cli_usage_error("race", "--level %ld: the document has %zu levels", index,
					json_array_size(levels));
			return NULL;
		}
		doc = json_array_get(levels, (size_t)index);
	} else if (index_given && index > 0) {
		cli_usage_error("race",
				"--level %ld: the document is a single level, not a generate "
				"result",
				index);
		return NULL;
	}
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	if (!json_is_object(doc) || !kind) {
		cli_usage_error("race", "the input is not a racetrack level (no kind)");
		return NULL;
	}
	if (strcmp(kind, "racetrack")) {
		cli_usage_error("race", "the level's kind is '%.64s', not racetrack", kind);
		return NULL;
	}
	if (!json_object_get(doc, "puzzle")) {
		cli_usage_error("race", "the level has no puzzle (the track to race)");
		return NULL;
	}
	return doc;
}

int cli_race(int argc, char **argv)
{
	const char *path = NULL, *px_file = NULL, *seed_text = NULL, *value;
	long races = -1, index = 0;
	int index_given = 0;
	for (int i = 1; i < argc; i++) {
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return CLI_OK;
		}
		if ((m = cli_option("race", argc, argv, &i, "--races", &value)) != 0) {
			if (m < 0 || cli_int("race", "--races", value, 1, TRK_MAX_RACES, &races))
				return CLI_USAGE;
		} else if ((m = cli_option("race", argc, argv, &i, "--race-seed", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			seed_text = value;
		} else if ((m = cli_option("race", argc, argv, &i, "--level", &value)) != 0) {
			if (m < 0 || cli_int("race", "--level", value, 0, 100000, &index))
				return CLI_USAGE;
			index_given = 1;
		} else if ((m = cli_option("race", argc, argv, &i, "--px-model", &value)) != 0) {
			if (m < 0)
				return CLI_USAGE;
			px_file = value;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage_error("race", "unknown option '%s' (see --help)", argv[i]);
		} else if (path) {
			return cli_usage_error("race", "one FILE at most ('%s' is a second)",
					       argv[i]);
		} else {
			path = argv[i];
		}
	}
	uint64_t seeds[TRK_MAX_RACES];
	int nseeds = 0;
	if (seed_text) {
		uint64_t seed;
		if (cli_seed(seed_text, &seed))
			return cli_usage_error("race",
					       "--race-seed '%s' is not an integer in 0..%llu",
					       seed_text, (unsigned long long)CLI_SEED_MAX);
		nseeds = races > 0 ? (int)races : DEFAULT_RACES;
		trk_heldout_seeds(seed, (size_t)nseeds, seeds);
	} else if (races > 0) {
		return cli_usage_error("race",
				       "--races needs --race-seed (without it the level's own "
				       "stats.race_seeds are raced, as many as it has)");
	}

	json_error_t jerr;
	const char *name = path && strcmp(path, "-") ? path : "stdin";
	json_t *doc = path && strcmp(path, "-")
			      ? json_load_file(path, JSON_REJECT_DUPLICATES, &jerr)
			      : json_loadf(stdin, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return cli_usage_error("race", "%s is not JSON: line %d: %s", name, jerr.line,
				       jerr.text);
	int status = CLI_USAGE;
	const json_t *level = pick_level(doc, index, index_given);
	if (level && !seed_text)
		nseeds = level_seeds(level, seeds);
	if (level && nseeds > 0)
		status = race_level(level, seeds, nseeds, px_file);
	json_decref(doc);
	return status;
}
