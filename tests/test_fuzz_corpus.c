/*
 * test_fuzz_corpus.c - replays every committed fuzz input through its
 * target: every file of tests/fuzz/corpus/<target>/ (the seeds) and of
 * tests/fuzz/crashes/<target>/ (every input that once crashed a target or
 * broke one of its checks, kept after the fix). So a crash that `make fuzz`
 * found stays a regression test in `make test`, with gcc and, under
 * SANITIZE=address,undefined, with the sanitizers, but without libFuzzer.
 *
 * The targets are the very files libFuzzer links (tests/fuzz/fuzz_*.c),
 * compiled here with their entry point renamed (-DFUZZ_ENTRY=fuzz_<t>_one).
 * A target aborts when one of its checks fails; the SIGABRT handler names
 * the input first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FUZZ_DIR
#define FUZZ_DIR "tests/fuzz"
#endif

int fuzz_job_request_one(const uint8_t *data, size_t size);
int fuzz_sequence_one(const uint8_t *data, size_t size);
int fuzz_digger_level_one(const uint8_t *data, size_t size);
int fuzz_px_model_one(const uint8_t *data, size_t size);
int fuzz_routes_one(const uint8_t *data, size_t size);

typedef struct target {
	const char *name;
	int (*one)(const uint8_t *data, size_t size);
} target;

/* The input being replayed, for the SIGABRT handler. */
static char current[1024];

static void on_abort(int sig)
{
	static const char what[] = "test_fuzz_corpus: this input failed: ";
	ssize_t ignored = write(2, what, sizeof what - 1);
	ignored = write(2, current, strlen(current));
	ignored = write(2, "\n", 1);
	(void)ignored;
	signal(sig, SIG_DFL);
	raise(sig);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Runs every regular file of FUZZ_DIR/<set>/<target> through the target, in
 * name order; returns how many (0 when the folder is missing).
 */
static int replay(const target *t, const char *set)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/%s/%s", FUZZ_DIR, set, t->name);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			names = realloc(names, cap * sizeof *names);
			assert_non_null(names);
		}
		names[n] = strdup(e->d_name);
		assert_non_null(names[n++]);
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		snprintf(current, sizeof current, "%s/%s", dir, names[i]);
		FILE *f = fopen(current, "rb");
		assert_non_null(f);
		uint8_t *buf = NULL;
		size_t len = 0, bufcap = 0, got;
		do {
			if (len == bufcap) {
				bufcap = bufcap ? 2 * bufcap : 4096;
				buf = realloc(buf, bufcap);
				assert_non_null(buf);
			}
			got = fread(buf + len, 1, bufcap - len, f);
			len += got;
		} while (got);
		fclose(f);
		/* Exactly len bytes, as libFuzzer hands them over. */
		uint8_t *exact = malloc(len ? len : 1);
		assert_non_null(exact);
		memcpy(exact, buf, len);
		free(buf);
		assert_int_equal(t->one(exact, len), 0);
		free(exact);
		free(names[i]);
	}
	free(names);
	current[0] = '\0';
	return (int)n;
}

/* Every seed and crash input of target `t`; the seeds must be there. */
static void run_target(const target *t)
{
	int seeds = replay(t, "corpus");
	replay(t, "crashes");
	/* An empty or missing seed folder would make this test pass vacuously. */
	assert_true(seeds >= 3);
}

#define TARGET_TEST(name)                                          \
	static void test_##name(void **state)                      \
	{                                                          \
		(void)state;                                       \
		run_target(&(target){ #name, fuzz_##name##_one }); \
	}

TARGET_TEST(job_request)
TARGET_TEST(sequence)
TARGET_TEST(digger_level)
TARGET_TEST(px_model)
TARGET_TEST(routes)

int main(void)
{
	signal(SIGABRT, on_abort);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_request),  cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_digger_level), cmocka_unit_test(test_px_model),
		cmocka_unit_test(test_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
