#!/bin/sh
# Runs every cmocka test binary given as an argument, all of them even when
# one fails, and exits non-zero if any failed. Each binary prints cmocka's own
# summary lines, so the output ends with the last binary's summary.
failed=""
for t in "$@"; do
	echo "== $(basename "$t")"
	"$t" || failed="$failed $(basename "$t")"
done
if [ -n "$failed" ]; then
	echo "FAILED:$failed" >&2
	exit 1
fi
