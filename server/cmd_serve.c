/*
 * cmd_serve.c - `starforge serve`: options and environment, then the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "service.h"

static const char usage[] =
	"usage: starforge serve [--listen HOST:PORT] [--db PATH] [--workers N] [--max-queue N]\n"
	"                       [--job-threads N] [--eval-budget N]\n"
	"\n"
	"Runs the Starforge HTTP service: generation jobs over REST (POST /v1/jobs),\n"
	"levels (GET /v1/levels), exact evaluations (GET /v1/evaluations/...), health,\n"
	"readiness and Prometheus metrics; the API is in openapi.yaml (GET /openapi.yaml).\n"
	"The database file and its folder are created on first start.\n"
	"\n"
	"options (each also read from the environment variable in brackets):\n"
	"  --listen HOST:PORT  IPv4 address and port (STARFORGE_LISTEN; default\n"
	"                      127.0.0.1:8080; port 0 picks a free one)\n"
	"  --db PATH           SQLite database (STARFORGE_DB; default ./data/starforge.db)\n"
	"  --workers N         jobs running at once, 1..256 (STARFORGE_WORKERS; default:\n"
	"                      online CPUs)\n"
	"  --max-queue N       jobs waiting at most, 1..100000 (STARFORGE_MAX_QUEUE;\n"
	"                      default 256); beyond it POST /v1/jobs answers 429\n"
	"  --job-threads N     evaluation threads per job, 1..64 (STARFORGE_JOB_THREADS;\n"
	"                      default 1)\n"
	"  --eval-budget N     conformations one evaluation request may enumerate\n"
	"                      (STARFORGE_EVAL_BUDGET; default 5e8: square length 22,\n"
	"                      cubic 16); above it the request gets 422\n"
	"\n"
	"Logs go to stderr, one line per request and per job transition. SIGTERM and\n"
	"SIGINT stop accepting, requeue running jobs at their next generation, and exit 0.\n";

static int parse_listen(const char *text, service_config *cfg)
{
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text || (size_t)(colon - text) >= sizeof cfg->host)
		return cli_usage_error("serve", "--listen '%s' is not HOST:PORT", text);
	long port;
	if (cli_int("serve", "--listen port", colon + 1, 0, 65535, &port))
		return CLI_USAGE;
	memcpy(cfg->host, text, (size_t)(colon - text));
	cfg->host[colon - text] = '\0';
	cfg->port = (int)port;
	return 0;
}

/* The option's value: the command line first, then the environment. */
static const char *pick(const char *arg, const char *env)
{
	return arg ? arg : getenv(env);
}

int cli_serve(int argc, char **argv)
{
	/* One write(2) per log line would cost as much as serving the request:
	 * block-buffer stderr (before any output, as setvbuf requires); the
	 * service flushes it four times a second and at exit. */
	static char logbuf[1 << 16];
	setvbuf(stderr, logbuf, _IOFBF, sizeof logbuf);
	const char *listen = NULL, *db = NULL, *workers = NULL, *max_queue = NULL,
		   *job_threads = NULL, *eval_budget = NULL, *value;
	for (int i = 1; i < argc; i++) {
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return CLI_OK;
		}
		if ((m = cli_option("serve", argc, argv, &i, "--listen", &value)) != 0)
			listen = value;
		else if ((m = cli_option("serve", argc, argv, &i, "--db", &value)) != 0)
			db = value;
		else if ((m = cli_option("serve", argc, argv, &i, "--workers", &value)) != 0)
			workers = value;
		else if ((m = cli_option("serve", argc, argv, &i, "--max-queue", &value)) != 0)
			max_queue = value;
		else if ((m = cli_option("serve", argc, argv, &i, "--job-threads", &value)) != 0)
			job_threads = value;
		else if ((m = cli_option("serve", argc, argv, &i, "--eval-budget", &value)) != 0)
			eval_budget = value;
		else
			return cli_usage_error("serve", "unknown argument '%s' (see --help)",
					       argv[i]);
		if (m < 0)
			return CLI_USAGE;
	}

	service_config cfg;
	memset(&cfg, 0, sizeof cfg);
	long n, cpus = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(cfg.host, sizeof cfg.host, "127.0.0.1");
	cfg.port = 8080;
	cfg.workers = cpus < 1 ? 1 : cpus > 256 ? 256 : (int)cpus;
	cfg.max_queue = 256;
	cfg.job_threads = 1;
	cfg.eval_budget = 5e8;
	cfg.max_body = 64 * 1024;
	snprintf(cfg.db_path, sizeof cfg.db_path, "./data/starforge.db");
	if ((value = pick(listen, "STARFORGE_LISTEN")) && parse_listen(value, &cfg))
		return CLI_USAGE;
	if ((value = pick(db, "STARFORGE_DB"))) {
		if (!*value || strlen(value) >= sizeof cfg.db_path)
			return cli_usage_error("serve", "--db '%s' is empty or too long", value);
		snprintf(cfg.db_path, sizeof cfg.db_path, "%s", value);
	}
	if ((value = pick(workers, "STARFORGE_WORKERS"))) {
		if (cli_int("serve", "--workers", value, 1, 256, &n))
			return CLI_USAGE;
		cfg.workers = (int)n;
	}
	if ((value = pick(max_queue, "STARFORGE_MAX_QUEUE"))) {
		if (cli_int("serve", "--max-queue", value, 1, 100000, &n))
			return CLI_USAGE;
		cfg.max_queue = (int)n;
	}
	if ((value = pick(job_threads, "STARFORGE_JOB_THREADS"))) {
		if (cli_int("serve", "--job-threads", value, 1, 64, &n))
			return CLI_USAGE;
		cfg.job_threads = (int)n;
	}
	if ((value = pick(eval_budget, "STARFORGE_EVAL_BUDGET"))) {
		char *end;
		cfg.eval_budget = strtod(value, &end);
		if (!*value || *end || !(cfg.eval_budget >= 1 && cfg.eval_budget <= 1e12))
			return cli_usage_error(
				"serve", "--eval-budget '%s' is not a number in 1..1e12", value);
	}

	/* libuv sizes its pool on first use: jobs plus the evaluation slots. */
	char pool[16];
	snprintf(pool, sizeof pool, "%d", cfg.workers * 5 > 1024 ? 1024 : cfg.workers * 5);
	setenv("UV_THREADPOOL_SIZE", pool, 1);
	json_object_seed(0); /* before any thread exists */

	uv_loop_t *loop = uv_default_loop();
	static service svc;
	sf_err err = { 0 };
	if (service_start(&svc, loop, &cfg, &err)) {
		fprintf(stderr, "starforge serve: %s\n", err.msg);
		fflush(stderr);
		store_close(svc.db);
		metrics_free(svc.metrics);
		return err.code == SF_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	uv_run(loop, UV_RUN_DEFAULT);
	metrics_free(svc.metrics);
	uv_loop_close(loop);
	return CLI_OK;
}
