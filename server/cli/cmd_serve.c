/*
 * cmd_serve.c - `starforge serve`: options and environment, then the loop.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "../http/listen.h"
#include "../base/log.h"
#include "../api/service.h"
#include "../base/version.h"

static const char usage[] =
	"usage: starforge serve [--listen HOST:PORT] [--db PATH] [--workers N] [--max-queue N]\n"
	"                       [--job-threads N] [--eval-budget N] [--estimate-steps N]\n"
	"                       [--job-timeout S]\n"
	"                       [--max-connections N] [--max-connections-per-ip N]\n"
	"                       [--connection-timeout S] [--lease-seconds S] [--node NAME]\n"
	"                       [--read-threads N] [--eval-cache-max N]\n"
	"                       [--token-file PATH [--auth-reads]] [--cors-origin ORIGIN]...\n"
	"                       [--log-format text|json]\n"
	"\n"
	"Runs the Starforge HTTP service: generation jobs over REST (POST /v1/jobs),\n"
	"levels (GET /v1/levels), exact evaluations (GET /v1/evaluations/...), health,\n"
	"readiness and Prometheus metrics; the API is in openapi.yaml (GET /openapi.yaml,\n"
	"and as JSON GET /openapi.json).\n"
	"The database file and its folder are created on first start.\n"
	"\n"
	"options (each also read from the environment variable in brackets, the\n"
	"command line winning; an error names the one that was used):\n"
	"  --listen HOST:PORT  where to listen (STARFORGE_LISTEN; default 127.0.0.1:8080):\n"
	"                      an IPv4 address, a host name (every address it has;\n"
	"                      localhost: 127.0.0.1 and ::1) or an IPv6 address in\n"
	"                      brackets ([::1]:8080; [::]: every interface, IPv4 too);\n"
	"                      port 0 picks a free one. Bound before the database is\n"
	"                      opened; a value that cannot be bound exits 2 (1 when\n"
	"                      the port is in use or needs privileges)\n"
	"  --db PATH|URI       the database (STARFORGE_DB; default ./data/starforge.db):\n"
	"                      a SQLite file, for one process, or a PostgreSQL\n"
	"                      connection URI (postgresql://USER@HOST:PORT/DB?...),\n"
	"                      which any number of nodes may share\n"
	"  --workers N         jobs running at once, 1..256 (STARFORGE_WORKERS; default:\n"
	"                      online CPUs)\n"
	"  --max-queue N       jobs waiting at most, 1..100000 (STARFORGE_MAX_QUEUE;\n"
	"                      default 256); beyond it POST /v1/jobs answers 429\n"
	"  --job-threads N     evaluation threads per job, 1..64 (STARFORGE_JOB_THREADS;\n"
	"                      default 1)\n"
	"  --eval-budget N     conformations one evaluation request may enumerate\n"
	"                      (STARFORGE_EVAL_BUDGET; default 5e8: square length 22,\n"
	"                      cubic 16); above it the request gets 422 with\n"
	"                      method=exact, an estimate with auto (the default)\n"
	"  --estimate-steps N  work of one estimated evaluation request, 1e4..1e10\n"
	"                      (STARFORGE_ESTIMATE_STEPS; default 1e8): flatPERM\n"
	"                      growth steps; the optimum search gets N/5 moves and\n"
	"                      N/2 branch-and-bound nodes (about 5 s at square\n"
	"                      length 30 on two threads)\n"
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
	"  --lease-seconds S   how long a node holds a running job without renewing its\n"
	"                      lease, 1..3600 (STARFORGE_LEASE_SECONDS; default 30):\n"
	"                      on PostgreSQL, a job whose node died runs again\n"
	"                      elsewhere about this long after (docs/operations.md)\n"
	"  --node NAME         this node's name in leases and logs, 1..40 of A-Z a-z\n"
	"                      0-9 . _ : - (STARFORGE_NODE; default HOSTNAME-PID)\n"
	"  --read-threads N    threads of the read pool, which runs the handlers'\n"
	"                      database reads off the event loop, 0..64\n"
	"                      (STARFORGE_READ_THREADS; default 4); 0 reads on the\n"
	"                      loop itself (a benchmark's baseline)\n"
	"  --eval-cache-max N  evaluations the store's cache keeps at most, 0..1e9, 0\n"
	"                      for no bound (STARFORGE_EVAL_CACHE_MAX; default 100000:\n"
	"                      about 55 MB at length 16); past it the least recently\n"
	"                      used go, also at start when the cache is over it\n"
	"  --token-file PATH   bearer tokens, one per line, 16..256 printable ASCII\n"
	"                      characters without spaces; blank lines and # comments\n"
	"                      are ignored (STARFORGE_TOKEN_FILE; default: none). With\n"
	"                      it, POST /v1/jobs, DELETE /v1/jobs/{id} and uploads need\n"
	"                      'Authorization: Bearer TOKEN' (else 401)\n"
	"  --auth-reads        with --token-file: reads need a token too, all but\n"
	"                      /healthz, /readyz, /openapi.yaml, /openapi.json and\n"
	"                      the dashboard's files (STARFORGE_AUTH_READS=1; default 0)\n"
	"  --cors-origin ORIGIN  browser origins that may call the API, e.g.\n"
	"                      https://play.example; repeatable or comma-separated, *\n"
	"                      for any (STARFORGE_CORS_ORIGIN; default: none, no CORS)\n"
	"  --log-format F      text (a UTC timestamp, then the line) or json (one object\n"
	"                      per line: ts, level, msg and the request's or job's\n"
	"                      fields) (STARFORGE_LOG_FORMAT; default text)\n"
	"\n"
	"Logs go to stderr, one line per request (with its X-Request-Id) and per job\n"
	"transition. SIGTERM and SIGINT stop accepting, requeue running jobs at their\n"
	"next generation, and exit 0.\n";

/* Every option of serve: its flag and its environment variable. */
enum {
	OPT_LISTEN,
	OPT_DB,
	OPT_WORKERS,
	OPT_MAX_QUEUE,
	OPT_JOB_THREADS,
	OPT_EVAL_BUDGET,
	OPT_ESTIMATE_STEPS,
	OPT_JOB_TIMEOUT,
	OPT_MAX_CONNECTIONS,
	OPT_MAX_CONNECTIONS_PER_IP,
	OPT_CONNECTION_TIMEOUT,
	OPT_LEASE_SECONDS,
	OPT_NODE,
	OPT_READ_THREADS,
	OPT_EVAL_CACHE_MAX,
	OPT_TOKEN_FILE,
	OPT_AUTH_READS,
	OPT_CORS_ORIGIN,
	OPT_LOG_FORMAT,
	NOPTS
};

static const struct {
	const char *flag, *env;
} options[NOPTS] = {
	[OPT_LISTEN] = { "--listen", "STARFORGE_LISTEN" },
	[OPT_DB] = { "--db", "STARFORGE_DB" },
	[OPT_WORKERS] = { "--workers", "STARFORGE_WORKERS" },
	[OPT_MAX_QUEUE] = { "--max-queue", "STARFORGE_MAX_QUEUE" },
	[OPT_JOB_THREADS] = { "--job-threads", "STARFORGE_JOB_THREADS" },
	[OPT_EVAL_BUDGET] = { "--eval-budget", "STARFORGE_EVAL_BUDGET" },
	[OPT_ESTIMATE_STEPS] = { "--estimate-steps", "STARFORGE_ESTIMATE_STEPS" },
	[OPT_JOB_TIMEOUT] = { "--job-timeout", "STARFORGE_JOB_TIMEOUT" },
	[OPT_MAX_CONNECTIONS] = { "--max-connections", "STARFORGE_MAX_CONNECTIONS" },
	[OPT_MAX_CONNECTIONS_PER_IP] = { "--max-connections-per-ip",
					 "STARFORGE_MAX_CONNECTIONS_PER_IP" },
	[OPT_CONNECTION_TIMEOUT] = { "--connection-timeout", "STARFORGE_CONNECTION_TIMEOUT" },
	[OPT_LEASE_SECONDS] = { "--lease-seconds", "STARFORGE_LEASE_SECONDS" },
	[OPT_NODE] = { "--node", "STARFORGE_NODE" },
	[OPT_READ_THREADS] = { "--read-threads", "STARFORGE_READ_THREADS" },
	[OPT_EVAL_CACHE_MAX] = { "--eval-cache-max", "STARFORGE_EVAL_CACHE_MAX" },
	[OPT_TOKEN_FILE] = { "--token-file", "STARFORGE_TOKEN_FILE" },
	[OPT_AUTH_READS] = { "--auth-reads", "STARFORGE_AUTH_READS" },
	[OPT_CORS_ORIGIN] = { "--cors-origin", "STARFORGE_CORS_ORIGIN" },
	[OPT_LOG_FORMAT] = { "--log-format", "STARFORGE_LOG_FORMAT" },
};

/*
 * An option's value and where it came from: an error names what the user
 * wrote, the flag ("--workers 'abc'") or the variable
 * ("STARFORGE_WORKERS='abc'"), never the other.
 */
typedef struct setting {
	int opt;
	const char *value; /* NULL: neither given */
	int from_env;
} setting;

/* The option's value: the command line first, then the environment. */
static setting pick(const char *const args[NOPTS], int opt)
{
	setting s = { opt, args[opt], 0 };
	if (!s.value && (s.value = getenv(options[opt].env)) != NULL)
		s.from_env = 1;
	return s;
}

/* The flag or the variable the setting came from. */
static const char *setting_name(const setting *s)
{
	return s->from_env ? options[s->opt].env : options[s->opt].flag;
}

/*
 * Prints "starforge serve: --flag 'VALUE' ..." or "starforge serve:
 * VARIABLE='VALUE' ..." followed by the message; returns CLI_USAGE.
 */
__attribute__((format(printf, 2, 3))) static int bad_setting(const setting *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, s->from_env ? "starforge serve: %s='%s' " : "starforge serve: %s '%s' ",
		setting_name(s), s->value);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return CLI_USAGE;
}

/* The integer options: range and default (docs/RELIABILITY.md for the limits). */
static const struct {
	int opt;
	long lo, hi;
} int_options[] = {
	{ OPT_WORKERS, 1, 256 },
	{ OPT_MAX_QUEUE, 1, 100000 },
	{ OPT_JOB_THREADS, 1, 64 },
	{ OPT_JOB_TIMEOUT, 1, 604800 },
	{ OPT_MAX_CONNECTIONS, 1, 100000 },
	{ OPT_MAX_CONNECTIONS_PER_IP, 0, 100000 },
	{ OPT_CONNECTION_TIMEOUT, 1, 3600 },
	{ OPT_LEASE_SECONDS, 1, 3600 },
	{ OPT_READ_THREADS, 0, 64 },
	{ OPT_EVAL_CACHE_MAX, 0, 1000000000 },
};
#define NINT (sizeof int_options / sizeof int_options[0])

/*
 * Each integer option into v[opt] (left as the caller's default when not
 * given): whole decimal digits within its range. Returns 0 or CLI_USAGE.
 */
static int int_values(const char *const args[NOPTS], long v[NOPTS])
{
	for (size_t k = 0; k < NINT; k++) {
		setting s = pick(args, int_options[k].opt);
		if (!s.value)
			continue;
		char *end;
		errno = 0;
		long n = strtol(s.value, &end, 10);
		/* strtol also takes leading blanks and '+': a value is digits only. */
		int plain = (s.value[0] >= '0' && s.value[0] <= '9') ||
			    (s.value[0] == '-' && s.value[1] >= '0' && s.value[1] <= '9');
		if (!plain || *end || errno || n < int_options[k].lo || n > int_options[k].hi)
			return bad_setting(&s, "is not an integer in %ld..%ld", int_options[k].lo,
					   int_options[k].hi);
		v[s.opt] = n;
	}
	return 0;
}

/*
 * The access options (server/api/access.c): loads the token file and parses
 * the CORS origins (ncors given on the command line, else the
 * environment's) into *tokens and *cors, which the caller frees with
 * auth_free and cors_free, also after a failure. Returns 0, or CLI_USAGE
 * after one line naming what is wrong.
 */
static int access_options(const char *const args[NOPTS], const char **cors_args, int ncors,
			  service_config *cfg, auth_tokens **tokens, cors_policy **cors)
{
	sf_err err = { 0 };
	setting s = pick(args, OPT_TOKEN_FILE);
	if (s.value) {
		if (!*s.value)
			return cli_usage_error("serve", "%s%s is empty", setting_name(&s),
					       s.from_env ? "=''" : "");
		if (!(*tokens = auth_load(s.value, &err)))
			return cli_usage_error("serve", "%s %s", setting_name(&s), err.msg);
		cfg->tokens = *tokens;
	}
	if ((s = pick(args, OPT_AUTH_READS)).value) {
		if (strcmp(s.value, "0") != 0 && strcmp(s.value, "1") != 0)
			return bad_setting(&s, "is not 0 or 1");
		cfg->auth_reads = s.value[0] == '1';
		if (cfg->auth_reads && !cfg->tokens)
			return cli_usage_error(
				"serve", "%s needs --token-file (or STARFORGE_TOKEN_FILE)",
				s.from_env ? "STARFORGE_AUTH_READS=1" : "--auth-reads");
	}
	s = (setting){ OPT_CORS_ORIGIN, NULL, 0 };
	if (!ncors && (s.value = getenv(options[OPT_CORS_ORIGIN].env)) != NULL) {
		s.from_env = 1;
		cors_args[ncors++] = s.value;
	}
	for (int i = 0; i < ncors; i++) {
		int bad = i ? cors_add(*cors, cors_args[i], &err) != 0
			    : (*cors = cors_parse(cors_args[i], &err)) == NULL;
		if (bad)
			return cli_usage_error("serve", "%s: %s", setting_name(&s), err.msg);
	}
	cfg->cors = *cors;
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
		log_info("serve: only %llu file descriptors (the hard RLIMIT_NOFILE): fewer than "
			 "--max-connections %u connections will fit",
			 (unsigned long long)rl.rlim_cur, connections);
}

int cli_serve(int argc, char **argv)
{
	/* One write(2) per log line would cost as much as serving the request:
	 * block-buffer stderr (before any output, as setvbuf requires); the
	 * service flushes it four times a second and at exit. */
	static char logbuf[1 << 16];
	setvbuf(stderr, logbuf, _IOFBF, sizeof logbuf);
	const char *args[NOPTS] = { NULL }, *value;
	const char *cors_args[CORS_ORIGINS_MAX + 1];
	int ncors = 0;
	for (int i = 1; i < argc; i++) {
		int m = 0;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return CLI_OK;
		}
		if (!strcmp(argv[i], "--auth-reads")) {
			args[OPT_AUTH_READS] = "1";
			continue;
		}
		int k;
		for (k = 0; k < NOPTS && !m; k++)
			if (k != OPT_AUTH_READS &&
			    (m = cli_option("serve", argc, argv, &i, options[k].flag, &value)) != 0)
				break;
		if (m < 0)
			return CLI_USAGE;
		if (!m)
			return cli_usage_error("serve", "unknown argument '%s' (see --help)",
					       argv[i]);
		if (k != OPT_CORS_ORIGIN)
			args[k] = value;
		else if (ncors == CORS_ORIGINS_MAX)
			return cli_usage_error("serve", "more than %d --cors-origin options",
					       CORS_ORIGINS_MAX);
		else
			cors_args[ncors++] = value;
	}

	/* First, so that every line from here on has the chosen format. */
	setting lf = pick(args, OPT_LOG_FORMAT);
	log_format format = LOG_TEXT;
	if (lf.value && log_format_parse(lf.value, &format))
		return bad_setting(&lf, "is not text or json");
	log_set_format(format);

	service_config cfg;
	memset(&cfg, 0, sizeof cfg);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), v[NOPTS] = { 0 };
	v[OPT_WORKERS] = cpus < 1 ? 1 : cpus > 256 ? 256 : cpus;
	v[OPT_MAX_QUEUE] = 256;
	v[OPT_JOB_THREADS] = 1;
	v[OPT_JOB_TIMEOUT] = 600;
	v[OPT_MAX_CONNECTIONS] = 1024;
	v[OPT_MAX_CONNECTIONS_PER_IP] = 0;
	v[OPT_CONNECTION_TIMEOUT] = 30;
	v[OPT_LEASE_SECONDS] = 30;
	v[OPT_READ_THREADS] = 4;
	v[OPT_EVAL_CACHE_MAX] = 100000;
	if (int_values(args, v))
		return CLI_USAGE;
	cfg.workers = (int)v[OPT_WORKERS];
	cfg.max_queue = (int)v[OPT_MAX_QUEUE];
	cfg.job_threads = (int)v[OPT_JOB_THREADS];
	cfg.job_timeout_s = (int)v[OPT_JOB_TIMEOUT];
	cfg.max_connections = (unsigned)v[OPT_MAX_CONNECTIONS];
	cfg.max_connections_per_ip = (unsigned)v[OPT_MAX_CONNECTIONS_PER_IP];
	cfg.connection_timeout_s = (unsigned)v[OPT_CONNECTION_TIMEOUT];
	cfg.lease_ms = (int)v[OPT_LEASE_SECONDS] * 1000;
	cfg.read_threads = (int)v[OPT_READ_THREADS];
	cfg.eval_cache_max = v[OPT_EVAL_CACHE_MAX];
	cfg.eval_budget = 5e8;
	cfg.estimate_steps = 1e8;
	cfg.max_body = 64 * 1024;
	snprintf(cfg.db_path, sizeof cfg.db_path, "./data/starforge.db");

	setting s = pick(args, OPT_DB);
	if (s.value) {
		if (!*s.value || strlen(s.value) >= sizeof cfg.db_path)
			return bad_setting(&s, "is empty or longer than %zu bytes",
					   sizeof cfg.db_path - 1);
		snprintf(cfg.db_path, sizeof cfg.db_path, "%s", s.value);
	}
	if ((s = pick(args, OPT_NODE)).value) {
		size_t n = strspn(s.value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					   "0123456789._:-");
		if (!*s.value || s.value[n] || n > 40)
			return bad_setting(&s, "is not 1..40 of A-Z a-z 0-9 . _ : -");
		snprintf(cfg.node, sizeof cfg.node, "%s", s.value);
	} else {
		char host[64] = "";
		if (gethostname(host, sizeof host - 1) || !*host)
			snprintf(host, sizeof host, "node");
		host[20] = '\0'; /* room for the pid */
		for (char *c = host; *c; c++)
			if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-", *c))
				*c = '_';
		snprintf(cfg.node, sizeof cfg.node, "%s-%ld", host, (long)getpid());
	}
	if ((s = pick(args, OPT_EVAL_BUDGET)).value) {
		char *end;
		cfg.eval_budget = strtod(s.value, &end);
		if (!*s.value || *end || !(cfg.eval_budget >= 1 && cfg.eval_budget <= 1e12))
			return bad_setting(&s, "is not a number in 1..1e12");
	}
	if ((s = pick(args, OPT_ESTIMATE_STEPS)).value) {
		char *end;
		cfg.estimate_steps = strtod(s.value, &end);
		if (!*s.value || *end || !(cfg.estimate_steps >= 1e4 && cfg.estimate_steps <= 1e10))
			return bad_setting(&s, "is not a number in 1e4..1e10");
	}
	/* The listen value is checked before anything else happens; binding it
	 * comes last of the checks, so that no other bad option holds a port. */
	s = pick(args, OPT_LISTEN);
	if (!s.value)
		s.value = "127.0.0.1:8080";
	static listen_set listening;
	sf_err err = { 0 };
	{
		char host[256];
		int port, bracketed;
		if (listen_split(s.value, host, sizeof host, &port, &bracketed, &err)) {
			fprintf(stderr,
				s.from_env ? "starforge serve: %s='%s': %s\n"
					   : "starforge serve: %s '%s': %s\n",
				setting_name(&s), s.value, err.msg);
			return CLI_USAGE;
		}
	}

	auth_tokens *tokens = NULL;
	cors_policy *cors = NULL;
	if (access_options(args, cors_args, ncors, &cfg, &tokens, &cors)) {
		auth_free(tokens);
		cors_free(cors);
		return CLI_USAGE;
	}

	/* Bound before the database is opened: a --listen that cannot work
	 * is refused without creating the database or its folder. */
	int rc = listen_open(s.value, &listening, &err);
	if (rc) {
		fprintf(stderr,
			s.from_env ? "starforge serve: %s='%s': %s\n"
				   : "starforge serve: %s '%s': %s\n",
			setting_name(&s), s.value, err.msg);
		auth_free(tokens);
		cors_free(cors);
		return rc == SF_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	cfg.listen_fds = listening.fds;
	cfg.nlisten = listening.nfds;
	cfg.listen_urls = listening.urls;

	raise_fd_limit(cfg.max_connections);
	/* libuv sizes its pool on first use: jobs plus the evaluation slots. */
	char pool[16];
	snprintf(pool, sizeof pool, "%d", cfg.workers * 5 > 1024 ? 1024 : cfg.workers * 5);
	setenv("UV_THREADPOOL_SIZE", pool, 1);
	json_object_seed(0); /* before any thread exists */

	log_info("serve: starforge %s (commit %s)", sf_version, sf_commit);
	uv_loop_t *loop = uv_default_loop();
	static service svc;
	if (service_start(&svc, loop, &cfg, &err)) {
		fprintf(stderr, "starforge serve: %s\n", err.msg);
		fflush(stderr);
		if (!svc.http)
			listen_close(&listening);
		storeq_stop(svc.reads); /* the readers first (service.c, on_http_closed) */
		storeq_stop(svc.writer); /* closes the writer */
		sched_free(svc.jobs);
		uv_run(loop, UV_RUN_NOWAIT); /* the handles those closed */
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
