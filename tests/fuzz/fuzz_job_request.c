/*
 * fuzz_job_request.c - the body of POST /v1/jobs (server/jobs/job_request.h),
 * with every kind's params through its params_parse.
 *
 * The input is the request body as sent. Besides "no crash, no leak", two
 * promises are checked: a refused body gets a 400 or 422 with a detail,
 * and an accepted one stores params that a restarted service reads back
 * (jobs.c keeps json_dumps(params) and, after a restart, parses that text
 * again with the kind's params_parse; a job that read once must read
 * again, or it would fail after the restart).
 */
#include <jansson.h>

#include "../../core/kinds.h"
#include "../../server/jobs/job_request.h"
#include "fuzz.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	job_request jr;
	job_request_problem bad;
	if (jobs_parse_request((const char *)data, size, &jr, &bad)) {
		FUZZ_CHECK(bad.status == 400 || bad.status == 422);
		FUZZ_CHECK(bad.slug && bad.title && bad.detail[0]);
		FUZZ_CHECK(memchr(bad.detail, '\0', sizeof bad.detail));
		return 0;
	}
	FUZZ_CHECK(jr.doc && jr.kind && jr.params);

	/* The handler's next steps: the named resource, the idempotency hash. */
	if (jr.kind->params_resource) {
		const char *type = NULL;
		const char *name = jr.kind->params_resource(jr.params, &type);
		FUZZ_CHECK(!name || (type && sf_resource_name_valid(name)));
	}
	char *canon = json_dumps(jr.doc, JSON_COMPACT | JSON_SORT_KEYS);
	free(canon);

	/* What the store keeps, read back as the scheduler does when it claims the job. */
	char *stored = jr.params_js ? json_dumps(jr.params_js, JSON_COMPACT) : strdup("{}");
	if (stored) {
		json_t *again = json_loads(stored, 0, NULL);
		FUZZ_CHECK(again);
		sf_err err = { 0 };
		void *params = jr.kind->params_parse(again, &err);
		if (!params)
			fprintf(stderr, "stored params %s no longer read: %s\n", stored, err.msg);
		FUZZ_CHECK(params);
		jr.kind->params_free(params);
		json_decref(again);
		free(stored);
	}
	job_request_clear(&jr);
	return 0;
}
