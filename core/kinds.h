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

/*
 * A type of named resource that designers upload and a kind's params name
 * (racetrack: experience models, "px_model"). The service serves each type
 * at POST /v1/<collection>?name=NAME and GET /v1/<collection>/<name>, has
 * the kind validate an upload whole before anything is stored, keeps the
 * body byte for byte (a name is taken for good), and hands it back to
 * generate() through sf_gen_opts.resource. The server knows no type by
 * name: everything it says about one comes from this table.
 */
#define SF_RESOURCE_NAME_MAX 64

typedef struct sf_resource_kind {
	const char *type;       /* "px_model": what params_resource() reports */
	const char *collection; /* "px-models": the URL segment under /v1/ */
	const char *slug;       /* "px-model": problem types invalid-<slug>, <slug>-exists */
	const char *what;       /* "model": for messages ("no uploaded model named ...") */
	const char *title;      /* "Invalid trace set": the 422 problem's title */
	const char *builtin;    /* a name reserved for a built-in resource, or NULL */
	/* Accepted formats as pairs {format, media type}, NULL-terminated:
	 * {"csv", "text/csv", "json", "application/json", NULL}. The first
	 * media type of a format is the one GET answers with. */
	const char *const *formats;
	/*
	 * Checks an upload (`len` bytes, no NUL inside) in `format` whole.
	 * Returns 0 and sets *summary to a new JSON object describing it (the
	 * 201 answer adds name and format), SF_EINVAL with a message naming
	 * the place and the problem, or SF_ENOMEM. Called on the loop thread.
	 */
	int (*validate)(const char *body, size_t len, const char *format, json_t **summary,
			sf_err *err);
} sf_resource_kind;

/*
 * A value GET /v1/levels filters a kind's levels on: the query parameter
 * NAME=value, and for a number also min_NAME=number (at least that). When
 * a level is stored, the service reads level[section][name] from its
 * document and keeps it as a tag (server/jobs/sched.c, store.h), so this table
 * is the one place that says what a kind's levels can be filtered on: the
 * listing accepts exactly these names, the store keeps exactly these tags,
 * and the documentation lists them (openapi.yaml, README.md). A level
 * whose document lacks the value, or holds another type, has no tag for it
 * and so never matches that filter. The same name means the same type in
 * every kind (a listing without kind takes any kind's filter).
 */
typedef enum sf_filter_type {
	SF_FILTER_TEXT,   /* a string: NAME=text matches it exactly */
	SF_FILTER_NUMBER, /* a number: NAME=number equal, min_NAME=number at least */
} sf_filter_type;

typedef struct sf_level_filter {
	const char *name;    /* "length": the query parameter and the tag's name */
	const char *section; /* "puzzle", "stats" or "params": the level document's member */
	sf_filter_type type;
	/* A text filter's values, NULL-terminated; NULL when any text goes. */
	const char *const *values;
} sf_level_filter;

/* Whether `name` may name an uploaded resource: 1..SF_RESOURCE_NAME_MAX of a-z 0-9 _ -. */
int sf_resource_name_valid(const char *name);

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
	/* The type of resource params_resource() names, or NULL for none. */
	const sf_resource_kind *resource;
	/*
	 * Optional (NULL: the kind has no check operation; the service answers
	 * 404). Checks a player's attempt at a level: `body` is the request
	 * body (kind-specific; digger: {"level": description, "moves": [...]})
	 * and the result a new reference saying what the attempt achieved
	 * (solved, stars, thresholds). NULL with `err` set: SF_EINVAL when the
	 * body, the level or a move is invalid (the message names the JSON path,
	 * "moves[3]: ..."), another code when the check itself failed. A pure
	 * function of the body that may take a while (a solver runs), so callers
	 * run it off any event loop; safe to call from several threads at once.
	 */
	json_t *(*check)(const json_t *body, sf_err *err);
	/*
	 * Optional (NULL: the kind has no hint operation; the service answers
	 * 404). Advises a player on a position: `body` as check's (digger:
	 * {"level", "moves"}), the result a new reference saying the next tap
	 * of an optimal play or how far to go back. Errors, purity and threads
	 * as for check.
	 */
	json_t *(*hint)(const json_t *body, sf_err *err);
	/*
	 * Optional (NULL: the service answers 404 for the picture). Draws a
	 * level of this kind, the document generate() put in "levels" (as the
	 * service stores and serves it), as a standalone SVG image: malloc'ed,
	 * NUL-terminated UTF-8 text the caller frees, the same bytes for the same
	 * document on every machine. NULL with err set: SF_EINVAL when the
	 * document is not a level of this kind, SF_ENOMEM.
	 */
	char *(*level_svg)(const json_t *level, sf_err *err);
	/*
	 * Optional (NULL: the kind's picture has no choice of star, and the
	 * service refuses ?star= with 400). The picture level_svg draws, showing
	 * a play that earns `star` stars (1..3; lattice: that star's fold).
	 * NULL with err set: SF_EINVAL as level_svg's (or a star outside 1..3),
	 * SF_ERANGE when this level has nothing to show for each star (a
	 * lattice level without star bands), SF_ENOMEM.
	 */
	char *(*level_svg_star)(const json_t *level, int star, sf_err *err);
	/*
	 * What the kind's levels can be filtered on (see sf_level_filter),
	 * ended by an entry whose name is NULL; at most SF_KIND_MAX_FILTERS.
	 * NULL: nothing.
	 */
	const sf_level_filter *filters;
} sf_kind;

/* The most filters one kind declares (the store keeps one tag for each). */
#define SF_KIND_MAX_FILTERS 16

/*
 * The filter called `name` of `kind`, or, when kind is NULL, of the first
 * registered kind that has one by that name; NULL when there is none.
 */
const sf_level_filter *sf_kind_filter(const sf_kind *kind, const char *name);

/*
 * Writes the filter names of `kind`, comma-separated ("lattice, length"),
 * to buf (len bytes, NUL-terminated, truncated to fit) and returns buf;
 * "(none)" when the kind has none.
 */
char *sf_kind_filter_names(const sf_kind *kind, char *buf, size_t len);

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
