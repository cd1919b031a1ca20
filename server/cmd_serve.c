/*
 * cmd_serve.c - `starforge serve`: options and environment, then the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "service.h"

static const char usage[] =
	"usage: starforge serve [--listen HOST:PORT] [--db PATH] [--workers N] [--max-queue N]\n"
	"                       [--job-threads N] [--eval-budget N] [--job-timeout S]\n"
	"                       [--max-connections N] [--max-connections-per-ip N]\n"
	"                       [--connection-timeout S]\n"
	"                       [--token-file PATH [--auth-reads]] [--cors-origin ORIGIN]...\n"
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
	"  --job-timeout S     seconds a job may run, 1..604800 (STARFORGE_JOB_TIMEOUT;\n"
	"                      default 600); past it the job stops at its next\n"
	"                      generation and fails with error 'timed_out: ...'\n"
	"  --max-connections N  connections open at once, 1..100000\n"
	"                      (STARFORGE_MAX_CONNECTIONS; default 1024); beyond it new\n"
	"                      connections wait, unanswered, until one closes\n"
	"  --max-connections-per-ip N  the same per client address, 0..100000, 0 for\n"
	"                      none (STARFORGE_MAX_CONNECTIONS_PER_IP; default 0);\n"
	"                      beyond it a new connection is closed at once\n"
	"  --connection-timeout S  seconds a connection may stay silent, or take to\n"
	"                      send a whole request, 1..3600\n"
	"                      (STARFORGE_CONNECTION_TIMEOUT; default 30)\n"
	"  --token-file PATH   bearer tokens, one per line, 16..256 printable ASCII\n"
	"                      characters without spaces; blank lines and # comments\n"
	"                      are ignored (STARFORGE_TOKEN_FILE; default: none). With\n"
	"                      it, POST /v1/jobs, DELETE /v1/jobs/{id} and uploads need\n"
	"                      'Authorization: Bearer TOKEN' (else 401)\n"
	"  --auth-reads        with --token-file: reads need a token too, all but\n"
	"                      /healthz, /readyz, /openapi.yaml and the dashboard's\n"
	"                      files (STARFORGE_AUTH_READS=1; default 0)\n"
	"  --cors-origin ORIGIN  browser origins that may call the API, e.g.\n"
	"                      https://play.example; repeatable or comma-separated, *\n"
	"                      for any (STARFORGE_CORS_ORIGIN; default: none, no CORS)\n"
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

/*
 * The access options (server/access.c): loads the token file and parses
 * the CORS origins (ncors given on the command line, else the
 * environment's) into *tokens and *cors, which the caller frees with
 * auth_free and cors_free, also after a failure. Returns 0, or CLI_USAGE
 * after one line naming what is wrong.
 */
static int access_options(const char *token_file, const char *auth_reads, const char **cors_args,
			  int ncors, service_config *cfg, auth_tokens **tokens, cors_policy **cors)
{
	sf_err err = { 0 };
	const char *value;
	if ((value = pick(token_file, "STARFORGE_TOKEN_FILE"))) {
		if (!*value)
			return cli_usage_error("serve", "--token-file is empty");
		if (!(*tokens = auth_load(value, &err)))
			return cli_usage_error("serve", "--token-file %s", err.msg);
		cfg->tokens = *tokens;
	}
	if ((value = pick(auth_reads, "STARFORGE_AUTH_READS"))) {
		if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
			return cli_usage_error("serve", "STARFORGE_AUTH_READS '%s' is not 0 or 1",
					       value);
		cfg->auth_reads = value[0] == '1';
		if (cfg->auth_reads && !cfg->tokens)
			return cli_usage_error("serve", "--auth-reads needs --token-file");
	}
	const char *env_cors = ncors ? NULL : getenv("STARFORGE_CORS_ORIGIN");
	if (env_cors)
		cors_args[ncors++] = env_cors;
	for (int i = 0; i < ncors; i++) {
		int bad = i ? cors_add(*cors, cors_args[i], &err) != 0
			    : (*cors = cors_parse(cors_args[i], &err)) == NULL;
		if (bad)
			return cli_usage_error("serve", "--cors-origin: %s", err.msg);
	}
	cfg->cors = *cors;
	return 0;
}

/* The limit options: name, variable, range, default (docs/RELIABILITY.md). */
static const struct {
	const char *option, *env;
	long lo, hi, dflt;
} limits[] = {
	{ "--job-timeout", "STARFORGE_JOB_TIMEOUT", 1, 604800, 600 },
	{ "--max-connections", "STARFORGE_MAX_CONNECTIONS", 1, 100000, 1024 },
	{ "--max-connections-per-ip", "STARFORGE_MAX_CONNECTIONS_PER_IP", 0, 100000, 0 },
	{ "--connection-timeout", "STARFORGE_CONNECTION_TIMEOUT", 1, 3600, 30 },
};
#define NLIMITS (sizeof limits / sizeof limits[0])

/* Like cli_option, for any of the limit options: its value goes to args[k]. */
static int limit_option(int argc, char **argv, int *i, const char *args[NLIMITS])
{
	for (size_t k = 0; k < NLIMITS; k++) {
		const char *value;
		int m = cli_option("serve", argc, argv, i, limits[k].option, &value);
		if (m > 0)
			args[k] = value;
		if (m)
			return m;
	}
	return 0;
}

/* Each limit from its option, else its variable, else its default; 0 or CLI_USAGE. */
static int limit_values(const char *args[NLIMITS], service_config *cfg)
{
	long v[NLIMITS];
	for (size_t k = 0; k < NLIMITS; k++) {
		const char *text = pick(args[k], limits[k].env);
		v[k] = limits[k].dflt;
		if (text &&
		    cli_int("serve", limits[k].option, text, limits[k].lo, limits[k].hi, &v[k]))
			return CLI_USAGE;
	}
	cfg->job_timeout_s = (int)v[0];
	cfg->max_connections = (unsigned)v[1];
	cfg->max_connections_per_ip = (unsigned)v[2];
	cfg->connection_timeout_s = (unsigned)v[3];
	return 0;
}

/*
 * Every connection is a file descriptor: raises the soft RLIMIT_NOFILE
 * towards `connections` plus what the service itself keeps open (the
 * database and its journal, the loop, the listening socket), as far as
 * the hard limit allows, and says so when that is not far enough.
 */
static void raise_fd_limit(unsigned connections)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)connections + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ? rl.rlim_max : need;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < need)
		fprintf(stderr,
			"serve: only %llu file descriptors (the hard RLIMIT_NOFILE): fewer than "
			"--max-connections %u connections will fit\n",
			(unsigned long long)rl.rlim_cur, connections);
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
	const char *limit_args[NLIMITS] = { NULL };
	const char *token_file = NULL, *auth_reads = NULL, *cors_args[CORS_ORIGINS_MAX + 1];
	int ncors = 0;
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
		else if ((m = limit_option(argc, argv, &i, limit_args)) != 0) {
			/* the value is in limit_args */
		} else if ((m = cli_option("serve", argc, argv, &i, "--token-file", &value)) != 0)
			token_file = value;
		else if (!strcmp(argv[i], "--auth-reads"))
			auth_reads = "1";
		else if ((m = cli_option("serve", argc, argv, &i, "--cors-origin", &value)) != 0) {
			if (ncors == CORS_ORIGINS_MAX)
				return cli_usage_error("serve",
						       "more than %d --cors-origin options",
						       CORS_ORIGINS_MAX);
			cors_args[ncors++] = value;
		} else
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

	if (limit_values(limit_args, &cfg))
		return CLI_USAGE;

	auth_tokens *tokens = NULL;
	cors_policy *cors = NULL;
	if (access_options(token_file, auth_reads, cors_args, ncors, &cfg, &tokens, &cors)) {
		auth_free(tokens);
		cors_free(cors);
		return CLI_USAGE;
	}

	raise_fd_limit(cfg.max_connections);
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
		auth_free(tokens);
		cors_free(cors);
		return err.code == SF_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	uv_run(loop, UV_RUN_DEFAULT);
	metrics_free(svc.metrics);
	auth_free(tokens);
	cors_free(cors);
	uv_loop_close(loop);
	return CLI_OK;
}
