/*
 * cli.h - the starforge command line: one binary, one function per
 * subcommand. Every subcommand returns the process exit status: 0 on
 * success, 2 for bad input (after one line on stderr naming what was wrong),
 * 1 for a failure of the machine (out of memory, threads).
 */
#ifndef SF_CLI_H
#define SF_CLI_H

#include <stdint.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* `starforge evaluate ...`: exact evaluation of one HP sequence. */
int cli_evaluate(int argc, char **argv);

/* `starforge generate KIND ...`: one generation job, its result as JSON. */
int cli_generate(int argc, char **argv);

/* `starforge picture [FILE]`: the SVG picture of a level or an evaluation. */
int cli_picture(int argc, char **argv);

/* `starforge race [FILE]`: a racetrack level raced again, its PX per segment. */
int cli_race(int argc, char **argv);

/* `starforge serve ...`: the HTTP service, until SIGTERM or SIGINT. */
int cli_serve(int argc, char **argv);

/*
 * Option parsing shared by the subcommands. cli_option() matches argv[*i]
 * against "--name value" and "--name=value"; on a match it stores the value,
 * advances *i past what it consumed and returns 1; it returns 0 when argv[*i]
 * is another option and -1 (after printing the reason, naming `cmd`) when
 * the value is missing.
 */
int cli_option(const char *cmd, int argc, char **argv, int *i, const char *name,
	       const char **value);

/* The largest seed: 2^53 - 1, exact in every JSON reader. */
#define CLI_SEED_MAX 9007199254740991ULL

/* Parses a whole decimal seed in 0..CLI_SEED_MAX into *out; -1 (nothing printed) otherwise. */
int cli_seed(const char *text, uint64_t *out);

/* Parses a whole decimal integer in [lo, hi]; prints the reason and returns -1 otherwise. */
int cli_int(const char *cmd, const char *name, const char *text, long lo, long hi, long *out);

/* Prints "starforge CMD: MESSAGE" and a newline to stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
