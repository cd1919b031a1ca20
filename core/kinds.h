/*
 * kinds.h - the registry of level kinds: name -> how to read its params,
 * generate levels and write them as JSON.
 *
 * Nothing outside a kind's folder switches on its name: the command line
 * (and, later, the service) finds a kind here and calls through this table.
 * Adding a kind means adding its folder and one line in kinds.c.
 */
#ifndef SF_KINDS_H
#define SF_KINDS_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "err.h"
#include "search/ga.h"

/* How a generation job runs: none of these change the levels but `seed`. */
typedef struct sf_gen_opts {
	uint64_t seed;
	int threads; /* >= 1 */
	/* After every generation (or step) of the search; may be NULL. */
	void (*progress)(void *arg, const ga_generation *gen);
	void *progress_arg;
	const atomic_int *cancel; /* stop when non-zero; may be NULL */
	double deadline;          /* CLOCK_MONOTONIC seconds (ga_clock_now()); 0: none */
	/* The kind's evaluation cache, or NULL: its type is the kind's own
	 * (lattice: lat_eval_cache). Never changes the levels. */
	const void *eval_cache;
	/*
	 * Named resources the params may refer to (racetrack: type "px_model",
	 * an uploaded experience model), or NULL where there are none (the
	 * command line). Returns the resource's text, malloc'ed (the caller
	 * frees it; *len is its length), or NULL when there is no such
	 * resource. Called from the generator's thread, so it must be safe to
	 * call from any thread; resource_ctx is passed back unchanged.
	 */
	char *(*resource)(void *ctx, const char *type, const char *name, size_t *len);
	void *resource_ctx;
} sf_gen_opts;

typedef struct sf_kind {
	const char *name;
	const char *summary; /* one line for --help */
	/*
	 * Reads and validates params (a JSON object, or NULL for all defaults).
	 * Returns a new opaque value for params_free(), or NULL with `err` set
	 * (SF_EINVAL naming the field and its allowed range).
	 */
	void *(*params_parse)(const json_t *params, sf_err *err);
	void (*params_free)(void *params);
	/*
	 * Runs a generation job and returns its result document: kind, seed,
	 * params (every key spelled out), status, levels and the per-generation
	 * series; a new reference. NULL with `err` set on failure.
	 */
	json_t *(*generate)(const void *params, const sf_gen_opts *opts, sf_err *err);
	/*
	 * Optional (NULL: the params never name a resource). The name of the
	 * resource `params` (from params_parse) need, with its type in *type
	 * (both borrowed from params or static), or NULL when they need none;
	 * lets a service refuse a job that names a missing resource before it
	 * is queued. The kind's generate() fetches it through opts->resource.
	 */
	const char *(*params_resource)(const void *params, const char **type);
} sf_kind;

/* The kind called `name`, or NULL. */
const sf_kind *sf_kind_find(const char *name);

/*
 * Writes the names of every kind, comma-separated ("lattice, racetrack"),
 * to buf (len bytes, NUL-terminated, truncated to fit) and returns buf, for
 * messages that list what is allowed.
 */
char *sf_kind_names(char *buf, size_t len);

/* The registered kinds, for listing: index 0..sf_kind_count()-1. */
size_t sf_kind_count(void);
const sf_kind *sf_kind_at(size_t i);

#endif
