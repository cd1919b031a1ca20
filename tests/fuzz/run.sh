#!/bin/sh
# Runs libFuzzer targets for a bounded time each: make fuzz calls
#   tests/fuzz/run.sh OUT SECONDS TARGET...
# with OUT the build folder holding OUT/fuzz_<target>. Each target fuzzes
# OUT/corpus/<target> (the committed seeds of tests/fuzz/corpus/<target>
# copied in, plus whatever earlier runs found: the committed seeds stay
# small) and first replays tests/fuzz/crashes/<target>. A crash lands in
# OUT/crashes/<target>/; keep it in tests/fuzz/crashes/<target>/ once fixed.
# tests/fuzz/<target>.dict is the target's dictionary, tests/fuzz/<target>.flags
# (one line) any extra libFuzzer flags it needs.
# Prints libFuzzer's closing lines per target (executions, exec/s, cov, ft,
# corpus) and exits non-zero when any target crashed; every target runs.
set -u
out=$1
seconds=$2
shift 2
here=$(dirname "$0")
failed=""
for t in "$@"; do
	mkdir -p "$out/corpus/$t" "$out/crashes/$t"
	cp "$here/corpus/$t/"* "$out/corpus/$t/" 2>/dev/null
	replay=""
	[ -d "$here/crashes/$t" ] && replay="$here/crashes/$t"
	dict=""
	[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
	flags=""
	[ -f "$here/$t.flags" ] && flags=$(cat "$here/$t.flags")
	echo "== fuzz_$t: ${seconds}s (log: $out/$t.log)"
	# shellcheck disable=SC2086
	"$out/fuzz_$t" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$t/" $dict $flags "$out/corpus/$t" $replay >"$out/$t.log" 2>&1
	rc=$?
	grep -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
		"$out/$t.log"
	echo "corpus: $(find "$out/corpus/$t" -type f | wc -l) inputs"
	if [ "$rc" -ne 0 ]; then
		echo "fuzz_$t FAILED (exit $rc):" >&2
		grep -E -A30 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|fuzz invariant failed' \
			"$out/$t.log" | head -60 >&2
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: crashes in:$failed (inputs under $out/crashes/)" >&2
	exit 1
fi
