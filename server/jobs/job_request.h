/*
 * job_request.h - reading the body of POST /v1/jobs into a kind and its
 * params, with the problem to answer when the body is not a job request.
 *
 * A pure function of the body (no service, no store, no I/O), so that the
 * handler (jobs.c) and the fuzz target (tests/fuzz/fuzz_job_request.c) call
 * the same code. What needs the service (the named resource exists, the
 * queue has room, the Idempotency-Key) is checked by the handler after it.
 */
#ifndef SF_JOB_REQUEST_H
#define SF_JOB_REQUEST_H

#include <jansson.h>
#include <stddef.h>

#include "../../core/kinds.h"

/* The largest seed: 2^53 - 1, exact in every JSON client. */
#define JOB_SEED_MAX 9007199254740991ULL

/* A job request that reads. */
typedef struct job_request {
	json_t *doc;             /* the whole body (owned: the idempotency hash is of it) */
	const sf_kind *kind;     /* the registered kind it names */
	const json_t *params_js; /* doc's "params" (borrowed from doc), or NULL when absent */
	const json_t *seed_js;   /* doc's "seed" (borrowed), an integer 0..JOB_SEED_MAX, or NULL */
	void *params;            /* kind->params_parse()'s value (owned: kind->params_free) */
} job_request;

/* Why a body is not a job request: what the handler answers. */
typedef struct job_request_problem {
	int status;        /* 400 (not a job request) or 422 (unknown kind, bad params) */
	const char *slug;  /* problem type: invalid-json, invalid-request, unknown-kind, ... */
	const char *title; /* the problem's title */
	char detail[512];  /* names the field and what is allowed; respond_problem's size */
} job_request_problem;

/*
 * Reads body[0..len-1] (any bytes; need not be NUL-terminated) as a job
 * request {"kind": name, "params": object, "seed": integer}, params and seed
 * optional, no other field, and the params through the kind's params_parse.
 * Returns 0 with *out filled (release it with job_request_clear), or -1
 * with *out zeroed and *problem saying what to answer.
 */
int jobs_parse_request(const char *body, size_t len, job_request *out,
		       job_request_problem *problem);

/* Frees what jobs_parse_request() put in `jr` (params and doc) and zeroes it. */
void job_request_clear(job_request *jr);

#endif
