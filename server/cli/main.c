/*
 * main.c - the starforge binary: dispatches to a subcommand.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../base/version.h"

static const char usage[] =
	"usage: starforge COMMAND [OPTIONS]\n"
	"\n"
	"Starforge generates game levels with three-star thresholds.\n"
	"\n"
	"commands:\n"
	"  evaluate   exactly evaluate one HP sequence on the square or cubic lattice:\n"
	"             every conformation, the score histogram, star thresholds\n"
	"  generate   run a level generator (a search) and print the levels it found\n"
	"  picture    draw a level (or an evaluation) as an SVG picture\n"
	"  race       race a racetrack level again, on its own or held-out seeds,\n"
	"             and compare its PX per segment with the target\n"
	"  serve      run the HTTP service: jobs, levels, evaluations, metrics\n"
	"\n"
	"  version    print the version and the git commit it was built from\n"
	"             (also starforge --version)\n"
	"\n"
	"Run 'starforge COMMAND --help' for a command's options.\n";

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "starforge %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return CLI_USAGE;
}

int cli_option(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);
	if (strncmp(arg, name, n) != 0)
		return 0;
	if (arg[n] == '=') {
		*value = arg + n + 1;
		return 1;
	}
	if (arg[n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "starforge %s: option %s needs a value\n", cmd, name);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

int cli_seed(const char *text, uint64_t *out)
{
	char *end;
	if (text[0] < '0' || text[0] > '9')
		return -1;
	unsigned long long v = strtoull(text, &end, 10);
	if (*end || v > CLI_SEED_MAX)
		return -1;
	*out = v;
	return 0;
}

int cli_int(const char *cmd, const char *name, const char *text, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(text, &end, 10);
	/* strtol also takes leading blanks and '+': an option value is digits only. */
	int plain = (text[0] >= '0' && text[0] <= '9') ||
		    (text[0] == '-' && text[1] >= '0' && text[1] <= '9');
	if (!plain || *end || v < lo || v > hi) {
		cli_usage_error(cmd, "%s '%s' is not an integer in %ld..%ld", name, text, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return CLI_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return CLI_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("starforge %s (commit %s)\n", sf_version, sf_commit);
		return CLI_OK;
	}
	if (!strcmp(cmd, "evaluate"))
		return cli_evaluate(argc - 1, argv + 1);
	if (!strcmp(cmd, "generate"))
		return cli_generate(argc - 1, argv + 1);
	if (!strcmp(cmd, "serve"))
		return cli_serve(argc - 1, argv + 1);
	if (!strcmp(cmd, "picture"))
		return cli_picture(argc - 1, argv + 1);
	if (!strcmp(cmd, "race"))
		return cli_race(argc - 1, argv + 1);
	fprintf(stderr,
		"starforge: unknown command '%s' (allowed: evaluate, generate, picture, race, "
		"serve, version; see starforge --help)\n",
		cmd);
	return CLI_USAGE;
}
