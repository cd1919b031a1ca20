/*
 * spawn.h - running the real starforge binary as a child process, shared by
 * the test suites that drive it from the command line (test_cli.c,
 * test_generate.c, test_racetrack_race_cmd.c).
 *
 * The binary's absolute path comes from STARFORGE_BIN (make test sets it).
 * Each run gets stdin from /dev/null and its stdout and stderr captured
 * through pipes, and is killed (failing the test) past RUN_TIMEOUT_S. Also
 * here: the checks both suites make of a run (one JSON object line; a usage
 * error) and an independent HP scorer for the folds the binary prints.
 *
 * Every function is static inline, so a suite that leaves one unused gets no
 * warning. Include it as "spawn.h" (the suite's own folder is searched first);
 * tests/ must not go on the -I path, where it would hide the system <spawn.h>
 * it includes.
 */
#ifndef SF_TEST_SPAWN_H
#define SF_TEST_SPAWN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* No single run may take longer than this (sanitizer builds included). */
#define RUN_TIMEOUT_S 300

/* ---- running the binary ---- */

typedef struct run_result {
	int status; /* exit status */
	char *out;  /* stdout, NUL-terminated */
	size_t out_len;
	char *err; /* stderr, NUL-terminated */
	size_t err_len;
} run_result;

typedef struct buf {
	char *data;
	size_t len, cap;
} buf;

static inline void buf_append(buf *b, const char *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *p = realloc(b->data, cap);
		if (!p)
			fail_msg("out of memory capturing output");
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline const char *starforge_bin(void)
{
	const char *bin = getenv("STARFORGE_BIN");
	if (!bin || !*bin)
		fail_msg("STARFORGE_BIN is not set: run the CLI tests through 'make test', or "
			 "set it to the absolute path of the starforge binary");
	if (bin[0] != '/')
		fail_msg("STARFORGE_BIN must be an absolute path, got '%s'", bin);
	if (access(bin, X_OK) != 0)
		fail_msg("STARFORGE_BIN '%s' is not an executable file: %s", bin, strerror(errno));
	return bin;
}

/*
 * Runs the binary with `args` (NULL-terminated, not counting argv[0]), stdin
 * from the file `in` (NULL: /dev/null), stdout and stderr captured through
 * pipes.
 */
static inline void run_args_in(run_result *res, const char *const *args, const char *in)
{
	const char *bin = starforge_bin();
	char *argv[32];
	int argc = 0;
	argv[argc++] = (char *)bin;
	for (int i = 0; args[i]; i++) {
		if (argc >= (int)(sizeof argv / sizeof argv[0]) - 1)
			fail_msg("too many arguments");
		argv[argc++] = (char *)args[i];
	}
	argv[argc] = NULL;

	int out[2], err[2];
	if (pipe(out) || pipe(err))
		fail_msg("pipe: %s", strerror(errno));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	posix_spawn_file_actions_addclose(&fa, out[1]);
	posix_spawn_file_actions_addclose(&fa, err[0]);
	posix_spawn_file_actions_addclose(&fa, err[1]);
	pid_t pid;
	int rc = posix_spawn(&pid, bin, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);
	if (rc != 0) {
		close(out[0]);
		close(err[0]);
		fail_msg("posix_spawn %s: %s", bin, strerror(rc));
	}

	buf bo = { 0 }, be = { 0 };
	buf_append(&bo, "", 0);
	buf_append(&be, "", 0);
	struct pollfd fds[2] = { { .fd = out[0], .events = POLLIN },
				 { .fd = err[0], .events = POLLIN } };
	int open_fds = 2;
	double deadline = now_s() + RUN_TIMEOUT_S;
	while (open_fds > 0) {
		int left_ms = (int)((deadline - now_s()) * 1000);
		if (left_ms <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("starforge %s ... ran longer than %d s", args[0] ? args[0] : "",
				 RUN_TIMEOUT_S);
		}
		int n = poll(fds, 2, left_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail_msg("poll: %s", strerror(errno));
		}
		for (int k = 0; k < 2; k++) {
			if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[65536];
			ssize_t got = read(fds[k].fd, chunk, sizeof chunk);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(fds[k].fd);
				fds[k].fd = -1;
				open_fds--;
			} else {
				buf_append(k == 0 ? &bo : &be, chunk, (size_t)got);
			}
		}
	}
	int wstatus;
	while (waitpid(pid, &wstatus, 0) < 0)
		if (errno != EINTR)
			fail_msg("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(wstatus))
		fail_msg("starforge killed by signal %d; stderr:\n%s", WTERMSIG(wstatus), be.data);
	res->status = WEXITSTATUS(wstatus);
	res->out = bo.data;
	res->out_len = bo.len;
	res->err = be.data;
	res->err_len = be.len;
}

/* run_args_in() with stdin from /dev/null. */
static inline void run_args(run_result *res, const char *const *args)
{
	run_args_in(res, args, NULL);
}

#define RUN(res, ...)                                                  \
	do {                                                           \
		const char *const run_args_[] = { __VA_ARGS__, NULL }; \
		run_args((res), run_args_);                            \
	} while (0)

static inline void run_free(run_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}

static inline int count_char(const char *s, char c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

/* A successful run: exit 0, nothing on stderr, exactly one JSON object line on stdout. */
static inline json_t *expect_json(run_result *res)
{
	if (res->status != 0)
		fail_msg("exit status %d, expected 0; stderr: %s", res->status, res->err);
	if (res->err_len != 0)
		fail_msg("unexpected stderr: %s", res->err);
	if (res->out_len == 0 || res->out[res->out_len - 1] != '\n' ||
	    count_char(res->out, '\n') != 1)
		fail_msg("stdout is not exactly one line: '%s'", res->out);
	json_error_t jerr;
	json_t *doc = json_loads(res->out, 0, &jerr);
	if (!doc)
		fail_msg("stdout is not JSON (%s): %s", jerr.text, res->out);
	if (!json_is_object(doc))
		fail_msg("stdout is not a JSON object: %s", res->out);
	return doc;
}

static inline json_int_t get_int(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v))
		fail_msg("\"%s\" is missing or not an integer", key);
	return json_integer_value(v);
}

static inline const char *get_str(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_string(v))
		fail_msg("\"%s\" is missing or not a string", key);
	return json_string_value(v);
}

static inline void expect_same_stdout(const char *const *a, const char *const *b)
{
	run_result ra, rb;
	run_args(&ra, a);
	run_args(&rb, b);
	json_decref(expect_json(&ra));
	json_decref(expect_json(&rb));
	if (strcmp(ra.out, rb.out) != 0)
		fail_msg("stdout differs:\n%s%s", ra.out, rb.out);
	run_free(&ra);
	run_free(&rb);
}

/* ---- an independent HP scorer ---- */

/*
 * Walks `fold` (one letter per bond: R L U D = +-x, +-y; F B = +-z, cubic
 * only) from the origin and returns the number of HH contacts: pairs of H
 * residues on neighbouring sites, not consecutive in the chain. Fails the test
 * if the fold is not a self-avoiding walk of the right length, or is not in
 * the symmetry-reduced form (first bond R, first turn U, first step out of
 * the xy plane F).
 */
static inline int score_fold(const char *seq, const char *fold, int cubic)
{
	int len = (int)strlen(seq);
	int pos[40][3] = { { 0 } };
	if ((int)strlen(fold) != len - 1)
		fail_msg("fold '%s' has %d bonds, sequence %s needs %d", fold, (int)strlen(fold),
			 seq, len - 1);
	int turned = 0, left_plane = 0;
	for (int i = 1; i < len; i++) {
		char c = fold[i - 1];
		int dx = 0, dy = 0, dz = 0;
		switch (c) {
		case 'R':
			dx = 1;
			break;
		case 'L':
			dx = -1;
			break;
		case 'U':
			dy = 1;
			break;
		case 'D':
			dy = -1;
			break;
		case 'F':
			dz = 1;
			break;
		case 'B':
			dz = -1;
			break;
		default:
			fail_msg("fold '%s': bad letter '%c'", fold, c);
		}
		if (!cubic && dz)
			fail_msg("fold '%s': '%c' on the square lattice", fold, c);
		if (i == 1 && c != 'R')
			fail_msg("fold '%s' does not start with R", fold);
		if (c != 'R' && !turned) {
			turned = 1;
			if (c != 'U')
				fail_msg("fold '%s': first turn is '%c', not U", fold, c);
		}
		if (dz && !left_plane) {
			left_plane = 1;
			if (c != 'F')
				fail_msg("fold '%s': first step out of the plane is B", fold);
		}
		pos[i][0] = pos[i - 1][0] + dx;
		pos[i][1] = pos[i - 1][1] + dy;
		pos[i][2] = pos[i - 1][2] + dz;
		for (int j = 0; j < i; j++)
			if (!memcmp(pos[i], pos[j], sizeof pos[i]))
				fail_msg("fold '%s' visits a site twice (residues %d and %d)", fold,
					 j + 1, i + 1);
	}
	int contacts = 0;
	for (int i = 0; i < len; i++)
		for (int j = i + 2; j < len; j++) {
			if (seq[i] != 'H' || seq[j] != 'H')
				continue;
			int d = abs(pos[i][0] - pos[j][0]) + abs(pos[i][1] - pos[j][1]) +
				abs(pos[i][2] - pos[j][2]);
			contacts += d == 1;
		}
	return contacts;
}

/* ---- a usage error ---- */

/* How expect_usage_error matches the stderr line against bad_case.names. */
typedef enum names_match {
	NAMES_ANY, /* the line contains at least one of them */
	NAMES_ALL, /* the line contains every one of them */
} names_match;

typedef struct bad_case {
	const char *args[10]; /* NULL-terminated, not counting argv[0] */
	const char *names[4]; /* NULL-terminated unless all four are used */
} bad_case;

/*
 * A refused command line, its stdin from the file `in` (NULL: /dev/null):
 * exit 2, nothing on stdout, exactly one line on stderr, which names the
 * problem as `match` says.
 */
static inline void expect_usage_error_in(const bad_case *c, names_match match, const char *in)
{
	run_result res;
	run_args_in(&res, c->args, in);
	char cmd[512] = "";
	for (int i = 0; c->args[i]; i++) {
		strncat(cmd, " '", sizeof cmd - strlen(cmd) - 1);
		strncat(cmd, c->args[i], sizeof cmd - strlen(cmd) - 1);
		strncat(cmd, "'", sizeof cmd - strlen(cmd) - 1);
	}
	if (res.status != 2)
		fail_msg("starforge%s: exit %d, expected 2; stderr: %s", cmd, res.status, res.err);
	if (res.out_len != 0)
		fail_msg("starforge%s: wrote to stdout: %s", cmd, res.out);
	if (res.err_len == 0 || res.err[res.err_len - 1] != '\n' || count_char(res.err, '\n') != 1)
		fail_msg("starforge%s: stderr is not exactly one line: '%s'", cmd, res.err);
	if (match == NAMES_ALL) {
		for (int i = 0; i < 4 && c->names[i]; i++)
			if (!strstr(res.err, c->names[i]))
				fail_msg("starforge%s: stderr does not name '%s': %s", cmd,
					 c->names[i], res.err);
	} else {
		int named = 0;
		for (int i = 0; i < 4 && c->names[i]; i++)
			named |= strstr(res.err, c->names[i]) != NULL;
		if (!named)
			fail_msg("starforge%s: stderr does not name the problem ('%s'...): %s", cmd,
				 c->names[0], res.err);
	}
	run_free(&res);
}

/* expect_usage_error_in() with stdin from /dev/null. */
static inline void expect_usage_error(const bad_case *c, names_match match)
{
	expect_usage_error_in(c, match, NULL);
}

#endif
