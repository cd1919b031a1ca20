/*
 * test_generate.c - `starforge generate`, the real binary run as a child
 * process (its absolute path comes from STARFORGE_BIN; make test sets it).
 *
 * Expected numbers are published ones (walk counts, the paper's maximum of
 * 10 distinct scores at length 16), worked out by hand in the comments, or
 * recomputed here by brute force through the direct enumerator of libcore;
 * folds the binary prints are re-scored by an independent walker. Nothing is
 * compared with the binary's own earlier output except to show that two runs
 * agree.
 */
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

#include "lattice/lattice.h"
#include "support.h"

extern char **environ;

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

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

static void buf_append(buf *b, const char *data, size_t n)
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

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *starforge_bin(void)
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
 * from /dev/null, stdout and stderr captured through pipes.
 */
static void run_args(run_result *res, const char *const *args)
{
	const char *bin = starforge_bin();
	char *argv[32];
	int argc = 0;
	argv[argc++] = (char *)bin;
	for (int i = 0; args[i]; i++) {
		if (argc >= ARRAY_LEN(argv) - 1)
			fail_msg("too many arguments");
		argv[argc++] = (char *)args[i];
	}
	argv[argc] = NULL;

	int out[2], err[2];
	if (pipe(out) || pipe(err))
		fail_msg("pipe: %s", strerror(errno));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
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

#define RUN(res, ...)                                                  \
	do {                                                           \
		const char *const run_args_[] = { __VA_ARGS__, NULL }; \
		run_args((res), run_args_);                            \
	} while (0)

static void run_free(run_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}

static int count_char(const char *s, char c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

static json_int_t get_int(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v))
		fail_msg("\"%s\" is missing or not an integer", key);
	return json_integer_value(v);
}

static const char *get_str(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_string(v))
		fail_msg("\"%s\" is missing or not a string", key);
	return json_string_value(v);
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
static int score_fold(const char *seq, const char *fold, int cubic)
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

/* ---- reading the result ---- */

/* A successful run: exit 0, nothing on stderr, exactly one JSON object line on stdout. */
static json_t *expect_json(run_result *res)
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

static json_t *get_obj(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_object(v))
		fail_msg("\"%s\" is missing or not an object", key);
	return v;
}

static json_t *get_arr(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_array(v))
		fail_msg("\"%s\" is missing or not an array", key);
	return v;
}

static double get_num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_number(v))
		fail_msg("\"%s\" is missing or not a number", key);
	return json_number_value(v);
}

/* `obj` has exactly the keys `keys` (NULL-terminated), no more, no fewer. */
static void expect_keys(json_t *obj, const char *const *keys, const char *what)
{
	size_t n = 0;
	for (; keys[n]; n++)
		if (!json_object_get(obj, keys[n]))
			fail_msg("%s has no key \"%s\"", what, keys[n]);
	if (json_object_size(obj) != n) {
		const char *k;
		json_t *v;
		json_object_foreach(obj, k, v)
		{
			int known = 0;
			for (size_t i = 0; i < n; i++)
				known |= !strcmp(k, keys[i]);
			if (!known)
				fail_msg("%s has an unexpected key \"%s\"", what, k);
		}
	}
}

static const char *const result_keys[] = { "kind",   "seed",        "params",
					   "status", "evaluations", "generations_run",
					   "levels", "series",      NULL };
static const char *const level_keys[] = { "id",       "kind",  "seed",  "params", "puzzle",
					  "solution", "stars", "stats", NULL };

/*
 * One level of the result, checked on its own terms: the envelope keys; the
 * sequence (canonical: its H = 1, P = 0 bytes no larger than its reverse's);
 * the histogram summing to the published symmetry-reduced count; the best
 * fold and the band folds re-scored independently; thresholds strictly
 * increasing, reachable, the three-star one at the best score; the fitness
 * (distinct_scores) equal to the number of reachable scores.
 */
static void check_level(json_t *lv, long long seed, int len, long long conformations)
{
	expect_keys(lv, level_keys, "level");
	assert_string_equal(get_str(lv, "kind"), "lattice");
	assert_int_equal(get_int(lv, "seed"), seed);
	const char *id = get_str(lv, "id");
	assert_int_equal(strlen(id), 36);
	assert_memory_equal(id, "lat_", 4);

	json_t *puzzle = get_obj(lv, "puzzle");
	assert_string_equal(get_str(puzzle, "lattice"), "square");
	assert_int_equal(get_int(puzzle, "length"), len);
	const char *seq = get_str(puzzle, "sequence");
	assert_int_equal(strlen(seq), len);
	for (int i = 0; i < len; i++) {
		assert_true(seq[i] == 'H' || seq[i] == 'P');
		int a = seq[i] == 'H', b = seq[len - 1 - i] == 'H';
		if (a != b) {
			assert_true(a < b); /* canonical orientation */
			break;
		}
	}

	json_t *stats = get_obj(lv, "stats");
	json_t *hist = get_arr(stats, "histogram");
	long long sum = 0;
	int distinct = 0, n = (int)json_array_size(hist);
	for (int s = 0; s < n; s++) {
		json_int_t c = json_integer_value(json_array_get(hist, (size_t)s));
		assert_true(c >= 0);
		sum += c;
		distinct += c > 0;
	}
	assert_int_equal(sum, conformations);
	assert_int_equal(get_int(stats, "conformations"), conformations);
	assert_int_equal(get_int(stats, "max_score"), n - 1);
	json_t *fit = get_obj(stats, "fitness");
	assert_string_equal(get_str(fit, "name"), "distinct_scores");
	assert_true(get_num(fit, "value") == distinct);

	json_t *sol = get_obj(lv, "solution");
	assert_int_equal(get_int(sol, "best_score"), n - 1);
	assert_int_equal(score_fold(seq, get_str(sol, "best_fold"), 0), n - 1);
	json_t *stars = get_obj(lv, "stars");
	json_t *t = get_arr(stars, "thresholds");
	assert_int_equal(json_array_size(t), 3);
	static const char *const bands[] = { "one", "two", "three" };
	json_t *folds = get_obj(sol, "band_folds");
	int prev = -1;
	for (int k = 0; k < 3; k++) {
		int th = (int)json_integer_value(json_array_get(t, (size_t)k));
		assert_true(th > prev);
		assert_true(th < n && json_integer_value(json_array_get(hist, (size_t)th)) > 0);
		assert_int_equal(score_fold(seq, get_str(folds, bands[k]), 0), th);
		prev = th;
	}
	assert_int_equal(prev, n - 1);
}

/* ---- generate: results ---- */

/*
 * The paper's defaults: length 16, square, GA, population 30, 50
 * generations. 802075 conformations (OEIS A046171, n = 15); at most 10
 * distinct scores at length 16 (published); the series has 50 generations,
 * its best never falls (one elite) and ends at the level's fitness.
 */
static void test_generate_default(void **state)
{
	(void)state;
	run_result res;
	RUN(&res, "generate", "lattice", "--seed", "42");
	json_t *doc = expect_json(&res);
	expect_keys(doc, result_keys, "result");
	assert_string_equal(get_str(doc, "kind"), "lattice");
	assert_int_equal(get_int(doc, "seed"), 42);
	assert_string_equal(get_str(doc, "status"), "completed");
	assert_int_equal(get_int(doc, "generations_run"), 50);
	json_int_t evals = get_int(doc, "evaluations");
	assert_true(evals >= 30 && evals <= 30 * 50);

	json_t *params = get_obj(doc, "params");
	assert_int_equal(get_int(params, "length"), 16);
	assert_string_equal(get_str(params, "lattice"), "square");
	assert_string_equal(get_str(params, "algorithm"), "ga");
	assert_string_equal(get_str(params, "fitness"), "distinct_scores");
	assert_int_equal(get_int(params, "population"), 30);
	assert_int_equal(get_int(params, "generations"), 50);
	assert_true(get_num(params, "mutation_rate") == 0.1);
	assert_int_equal(get_int(params, "elites"), 1);
	assert_int_equal(get_int(params, "count"), 1);
	assert_string_equal(get_str(params, "stars"), "paper");

	json_t *levels = get_arr(doc, "levels");
	assert_int_equal(json_array_size(levels), 1);
	json_t *lv = json_array_get(levels, 0);
	check_level(lv, 42, 16, 802075);
	assert_true(json_equal(get_obj(lv, "params"), params));
	double fitness = get_num(get_obj(get_obj(lv, "stats"), "fitness"), "value");
	assert_true(fitness <= 10);

	json_t *series = get_arr(doc, "series");
	assert_int_equal(json_array_size(series), 50);
	double best = -1;
	for (int g = 0; g < 50; g++) {
		json_t *gen = json_array_get(series, (size_t)g);
		assert_int_equal(get_int(gen, "generation"), g + 1);
		double b = get_num(gen, "best");
		assert_true(b >= best);
		assert_true(get_num(gen, "mean") <= b);
		best = b;
	}
	assert_true(best == fitness);
	assert_int_equal(get_int(json_array_get(series, 49), "evaluations"), evals);
	json_decref(doc);
	run_free(&res);
}

static void expect_same_stdout(const char *const *a, const char *const *b)
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

static void test_generate_repeatable(void **state)
{
	(void)state;
	static const char *const plain[] = { "generate", "lattice", "--seed", "42", NULL };
	expect_same_stdout(plain, plain);
	static const char *const t1[] = { "generate",  "lattice", "--seed", "42",
					  "--threads", "1",       NULL };
	static const char *const t2[] = { "generate", "lattice", "--seed=42", "--threads=2", NULL };
	expect_same_stdout(t1, t2);
	expect_same_stdout(plain, t1);
	static const char *const m1[] = {
		"generate",
		"lattice",
		"--threads",
		"1",
		"--seed",
		"7",
		"--params",
		"{\"algorithm\":\"map_elites\",\"fitness\":\"rare_optimum\",\"length\":12}",
		NULL
	};
	static const char *const m2[] = {
		"generate",
		"--params",
		"{\"length\":12,\"fitness\":\"rare_optimum\",\"algorithm\":\"map_elites\"}",
		"--threads",
		"2",
		"lattice",
		"--seed",
		"7",
		NULL
	};
	expect_same_stdout(m1, m2);

	/* Another seed: another run. */
	run_result a, b;
	RUN(&a, "generate", "lattice", "--seed", "1");
	RUN(&b, "generate", "lattice", "--seed", "2");
	json_t *da = expect_json(&a), *db = expect_json(&b);
	assert_int_equal(get_int(da, "seed"), 1);
	assert_int_equal(get_int(db, "seed"), 2);
	assert_false(json_equal(json_object_get(da, "series"), json_object_get(db, "series")));
	json_decref(da);
	json_decref(db);
	run_free(&a);
	run_free(&b);
}

/* --progress: one stderr line per generation (50 by default), stdout unchanged. */
static void test_generate_progress(void **state)
{
	(void)state;
	run_result plain, prog;
	RUN(&plain, "generate", "lattice", "--seed", "3");
	RUN(&prog, "generate", "lattice", "--seed", "3", "--progress");
	assert_int_equal(prog.status, 0);
	assert_string_equal(prog.out, plain.out);
	assert_int_equal(count_char(prog.out, '\n'), 1);
	assert_int_equal(count_char(prog.err, '\n'), 50);
	assert_true(prog.err_len > 0 && prog.err[prog.err_len - 1] == '\n');
	const char *line = prog.err;
	for (int g = 1; g <= 50; g++) {
		char want[32];
		snprintf(want, sizeof want, "generation %d/50", g);
		if (strncmp(line, want, strlen(want)) != 0)
			fail_msg("progress line %d does not start with '%s': %.60s", g, want, line);
		line = strchr(line, '\n') + 1;
	}
	run_free(&plain);
	run_free(&prog);
}

/*
 * Exhaustive at length 10: every canonical sequence, 2^9 + 2^4 = 528 (a
 * sequence and its reverse are one puzzle; 32 palindromes count once), in
 * 64 chunks. The level is the brute-force best: the most distinct scores
 * (counted here with the direct enumerator over all 1024 sequences), ties
 * to the smallest H = 1, P = 0 byte string among canonical sequences. Each
 * has 2034 conformations (OEIS A046171, n = 9).
 */
static void test_generate_exhaustive(void **state)
{
	(void)state;
	int best = -1;
	uint8_t best_g[10] = { 0 };
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	for (unsigned k = 0; k < 1024; k++) {
		lat_seq s;
		memset(&s, 0, sizeof s);
		s.len = 10;
		for (int i = 0; i < 10; i++)
			s.h[i] = (uint8_t)(k >> i & 1);
		uint8_t rev[10];
		for (int i = 0; i < 10; i++)
			rev[i] = s.h[9 - i];
		if (memcmp(s.h, rev, 10) > 0)
			continue;
		lat_opts o = { .threads = 1, .budget = 0 };
		sf_err err = { 0 };
		if (lat_enumerate(LAT_SQUARE, &s, &o, r, &err))
			fail_msg("lat_enumerate: %s", err.msg);
		if (r->distinct_scores > best ||
		    (r->distinct_scores == best && memcmp(s.h, best_g, 10) < 0)) {
			best = r->distinct_scores;
			memcpy(best_g, s.h, 10);
		}
	}
	free(r);
	char want[11];
	for (int i = 0; i < 10; i++)
		want[i] = best_g[i] ? 'H' : 'P';
	want[10] = '\0';

	run_result res;
	RUN(&res, "generate", "lattice", "--seed", "0", "--params",
	    "{\"algorithm\": \"exhaustive\", \"length\": 10}");
	json_t *doc = expect_json(&res);
	expect_keys(doc, result_keys, "result");
	assert_int_equal(get_int(doc, "seed"), 0);
	assert_string_equal(get_str(doc, "status"), "completed");
	assert_int_equal(get_int(doc, "evaluations"), 528);
	assert_int_equal(get_int(doc, "generations_run"), 64);
	assert_int_equal(json_array_size(get_arr(doc, "series")), 64);
	json_t *params = get_obj(doc, "params");
	assert_string_equal(get_str(params, "algorithm"), "exhaustive");
	assert_int_equal(get_int(params, "length"), 10);
	json_t *levels = get_arr(doc, "levels");
	assert_int_equal(json_array_size(levels), 1);
	json_t *lv = json_array_get(levels, 0);
	check_level(lv, 0, 10, 2034);
	assert_string_equal(get_str(get_obj(lv, "puzzle"), "sequence"), want);
	assert_true(get_num(get_obj(get_obj(lv, "stats"), "fitness"), "value") == best);
	json_decref(doc);
	run_free(&res);
}

/* The largest seed that survives a double, 2^53 - 1, is accepted and echoed. */
static void test_generate_seed_range(void **state)
{
	(void)state;
	static const char *const seeds[] = { "0", "9007199254740991" };
	static const long long values[] = { 0, 9007199254740991LL };
	for (int i = 0; i < 2; i++) {
		run_result res;
		RUN(&res, "generate", "lattice", "--seed", seeds[i], "--params",
		    "{\"length\": 12, \"generations\": 2, \"population\": 10}");
		json_t *doc = expect_json(&res);
		assert_int_equal(get_int(doc, "seed"), values[i]);
		json_t *lv = json_array_get(get_arr(doc, "levels"), 0);
		assert_int_equal(get_int(lv, "seed"), values[i]);
		assert_int_equal(get_int(doc, "generations_run"), 2);
		json_decref(doc);
		run_free(&res);
	}
}

/* ---- generate: bad input ---- */

typedef struct bad_case {
	const char *args[10];
	const char *all_of[3]; /* the stderr line contains every one of these */
} bad_case;

static void expect_usage_error(const bad_case *c)
{
	run_result res;
	run_args(&res, c->args);
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
	for (int i = 0; i < 3 && c->all_of[i]; i++)
		if (!strstr(res.err, c->all_of[i]))
			fail_msg("starforge%s: stderr does not name '%s': %s", cmd, c->all_of[i],
				 res.err);
	run_free(&res);
}

static void test_generate_bad_input(void **state)
{
	(void)state;
	static const bad_case cases[] = {
		{ { "generate", "lattice", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", "-1", NULL }, { "--seed", "-1", NULL } },
		{ { "generate", "lattice", "--seed=-1", NULL }, { "--seed", "-1", NULL } },
		{ { "generate", "lattice", "--seed", "abc", NULL }, { "--seed", "abc", NULL } },
		{ { "generate", "lattice", "--seed", "", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", "4.5", NULL }, { "4.5", NULL } },
		{ { "generate", "lattice", "--seed", "+5", NULL }, { "+5", NULL } },
		{ { "generate", "lattice", "--seed", " 5", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", "42x", NULL }, { "42x", NULL } },
		{ { "generate", "lattice", "--seed", "9007199254740992", NULL },
		  { "9007199254740992", NULL } },
		{ { "generate", "lattice", "--seed", "18446744073709551616", NULL },
		  { "18446744073709551616", NULL } },
		{ { "generate", "tetris", "--seed", "1", NULL }, { "tetris", NULL } },
		{ { "generate", "--seed", "1", NULL }, { "kind", NULL } },
		{ { "generate", NULL }, { "kind", NULL } },
		{ { "generate", "lattice", "lattice", "--seed", "1", NULL }, { "lattice", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{length: 16", NULL },
		  { "--params", "JSON", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "", NULL },
		  { "--params", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "[]", NULL },
		  { "params", "object", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "16", NULL },
		  { "params", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"frobnicate\": 1}", NULL },
		  { "params.", "frobnicate", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"length\": 21}", NULL },
		  { "params.", "length", "21" } },
		{ { "generate", "lattice", "--seed", "1", "--params",
		    "{\"lattice\": \"cubic\", \"length\": 15}", NULL },
		  { "params.", "length", "15" } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"length\": \"16\"}",
		    NULL },
		  { "params.", "length", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"population\": 1}", NULL },
		  { "params.", "population", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"generations\": 0}",
		    NULL },
		  { "params.", "generations", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"mutation_rate\": 1.5}",
		    NULL },
		  { "params.", "mutation_rate", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"count\": 0}", NULL },
		  { "params.", "count", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"fitness\": \"fun\"}",
		    NULL },
		  { "params.", "fitness", "fun" } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"algorithm\": \"sa\"}",
		    NULL },
		  { "params.", "algorithm", "sa" } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"lattice\": 2}", NULL },
		  { "params.", "lattice", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params",
		    "{\"algorithm\": \"exhaustive\", \"length\": 19}", NULL },
		  { "params.", "length", "19" } },
		{ { "generate", "lattice", "--seed", "1", "--frobnicate", NULL },
		  { "--frobnicate", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--threads", "0", NULL },
		  { "--threads", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--threads", "257", NULL },
		  { "--threads", "257", NULL } },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++)
		expect_usage_error(&cases[i]);
}

/* ---- help ---- */

static void test_generate_help(void **state)
{
	(void)state;
	static const char *const forms[][5] = {
		{ "generate", "--help", NULL },
		{ "generate", "-h", NULL },
		{ "generate", "lattice", "--seed", "1", "--help" },
	};
	for (int i = 0; i < ARRAY_LEN(forms); i++) {
		const char *args[6] = { 0 };
		for (int k = 0; k < 5 && forms[i][k]; k++)
			args[k] = forms[i][k];
		run_result res;
		run_args(&res, args);
		if (res.status != 0)
			fail_msg("generate --help: exit %d; stderr: %s", res.status, res.err);
		assert_int_equal(res.err_len, 0);
		assert_non_null(strstr(res.out, "usage"));
		assert_non_null(strstr(res.out, "generate"));
		assert_non_null(strstr(res.out, "--seed"));
		assert_non_null(strstr(res.out, "--params"));
		/* The kinds are listed: 'lattice' on a line of its own. */
		assert_non_null(strstr(res.out, "\n  lattice "));
		run_free(&res);
	}
	/* And the top-level help names the command. */
	run_result res;
	RUN(&res, "--help");
	assert_int_equal(res.status, 0);
	assert_non_null(strstr(res.out, "generate"));
	run_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_default),
		cmocka_unit_test(test_generate_repeatable),
		cmocka_unit_test(test_generate_progress),
		cmocka_unit_test(test_generate_exhaustive),
		cmocka_unit_test(test_generate_seed_range),
		cmocka_unit_test(test_generate_bad_input),
		cmocka_unit_test(test_generate_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
