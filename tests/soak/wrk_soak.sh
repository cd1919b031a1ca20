#!/bin/bash
# wrk_soak.sh - the load soak of docs/RELIABILITY.md ("Load"): the real
# `starforge serve` on a loopback port with a temporary database, driven by
# wrk with a mix of level reads, job submissions and status polls
# (tests/soak/wrk_mix.lua) at 64, 128 and 256 connections, after a warm-up
# at 256. It records per phase the requests, latency (p50, p99, max) and
# every status; samples the server's memory (VmRSS, VmHWM from
# /proc/PID/status) and its queue (GET /metrics) every two seconds; and
# passes only when
#
#   - no request failed but the deliberate 429s of a full queue or of too
#     many evaluations at once (every other status, and every socket error
#     or timeout, counts as an error);
#   - memory stayed flat: the peak RSS (VmHWM) at the end is within 10 % of
#     the peak right after the warm-up;
#   - the queue stayed bounded: no sample saw more than --max-queue jobs
#     queued;
#   - the evaluation cache stayed bounded: at the end it holds at most
#     --eval-cache-max entries and has evicted some (the mix asks for more
#     distinct sequences than it keeps);
#   - the server still answers /healthz and stops with exit status 0.
#
#   SOAK_SECONDS=300    load in all, split evenly over the three phases
#                       (shorten for a dry run: SOAK_SECONDS=15 SOAK_WARMUP=5)
#   SOAK_WARMUP=30      seconds of warm-up load at 256 connections, not counted
#   SOAK_MAX_QUEUE=64   the server's --max-queue
#   SOAK_EVAL_CACHE_MAX=1000  the server's --eval-cache-max
#   SOAK_WRK_THREADS=2  wrk's threads
#   STARFORGE_BIN       the binary (default build/starforge)
#
# Needs wrk and curl (scripts/deps.sh bench). The figures go to stdout and
# to build/soak/wrk_soak.txt (the samples to build/soak/wrk_soak_samples.txt);
# the exit status is 0 only when every check passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${STARFORGE_BIN:-build/starforge}
SECS=${SOAK_SECONDS:-300}
WARMUP=${SOAK_WARMUP:-30}
MAX_QUEUE=${SOAK_MAX_QUEUE:-64}
EVAL_CACHE_MAX=${SOAK_EVAL_CACHE_MAX:-1000}
WRK_THREADS=${SOAK_WRK_THREADS:-2}
PHASES="64 128 256"
OUT_DIR=build/soak
OUT=$OUT_DIR/wrk_soak.txt
SAMPLES=$OUT_DIR/wrk_soak_samples.txt

for tool in wrk curl; do
	command -v "$tool" >/dev/null || { echo "wrk_soak: $tool is missing (sh scripts/deps.sh bench)" >&2; exit 1; }
done
[ -x "$BIN" ] || { echo "wrk_soak: no binary at $BIN (make)" >&2; exit 1; }
mkdir -p "$OUT_DIR"
tmp=$(mktemp -d)
pid=""
sampler=""
cleanup() {
	[ -n "$sampler" ] && kill "$sampler" 2>/dev/null || true
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# ---- the server ----

"$BIN" serve --listen 127.0.0.1:0 --db "$tmp/soak.db" --max-queue "$MAX_QUEUE" \
	--eval-cache-max "$EVAL_CACHE_MAX" 2>"$tmp/serve.log" &
pid=$!
port=""
for _ in $(seq 1 100); do
	port=$(sed -n 's|^[^ ]* serve: listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$tmp/serve.log")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "wrk_soak: the server did not start:" >&2; cat "$tmp/serve.log" >&2; exit 1; }
base="http://127.0.0.1:$port"
workers=$(sed -n 's|.*(workers \([0-9]*\),.*|\1|p' "$tmp/serve.log")

# ---- what to read: a few jobs of each kind, run to the end ----

ids=""
jobs=""
for seed in 1 2 3 4 5 6 7 8; do
	for body in "{\"kind\":\"digger\",\"seed\":$seed,\"params\":{\"difficulty\":\"easy\",\"count\":3}}" \
		"{\"kind\":\"lattice\",\"seed\":$seed,\"params\":{\"length\":12,\"generations\":10,\"count\":3}}"; do
		job=$(curl -fsS -X POST "$base/v1/jobs" -H 'Content-Type: application/json' -d "$body")
		jobs="$jobs $(printf '%s' "$job" | sed -n 's/.*"id":"\(job_[0-9a-f]*\)".*/\1/p')"
	done
done
for id in $jobs; do
	state=""
	for _ in $(seq 1 600); do
		doc=$(curl -fsS "$base/v1/jobs/$id")
		state=$(printf '%s' "$doc" | sed -n 's/.*"state":"\([a-z]*\)".*/\1/p')
		case $state in succeeded | failed | cancelled) break ;; esac
		sleep 0.1
	done
	[ "$state" = succeeded ] || { echo "wrk_soak: seed job $id is $state: $doc" >&2; exit 1; }
	for lv in $(printf '%s' "$doc" | sed -n 's/.*"level_ids":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' ' '); do
		ids="$ids L:$lv"
	done
	ids="$ids J:$id"
done
nlevels=$(printf '%s\n' $ids | grep -c '^L:')

# ---- sampling memory and the queue ----

status_kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }
metric() { printf '%s\n' "$2" | awk -v k="$1" '$1 == k {print $2}'; }
echo warmup >"$tmp/phase"
(
	while kill -0 "$pid" 2>/dev/null; do
		m=$(curl -fsS --max-time 10 "$base/metrics" 2>/dev/null || echo failed)
		printf '%s %s %s %s %s %s\n' "$(date +%s)" "$(cat "$tmp/phase")" "$(status_kb VmRSS)" \
			"$(status_kb VmHWM)" "$(metric 'starforge_jobs{state="queued"}' "$m")" \
			"$(metric 'starforge_jobs{state="running"}' "$m")"
		sleep 2
	done
) >"$tmp/samples" &
sampler=$!

# ---- the load ----

# run_wrk LABEL CONNECTIONS SECONDS: the SOAK line of wrk_mix.lua into $tmp/LABEL.
run_wrk() {
	echo "$1" >"$tmp/phase"
	wrk -t"$WRK_THREADS" -c"$2" -d"$3s" --timeout 10s -s tests/soak/wrk_mix.lua "$base" -- $ids \
		>"$tmp/wrk_$1.txt" 2>&1 || { cat "$tmp/wrk_$1.txt" >&2; exit 1; }
	grep '^SOAK ' "$tmp/wrk_$1.txt" | sed 's/^SOAK //' >"$tmp/$1"
	[ -s "$tmp/$1" ] || { echo "wrk_soak: no figures from wrk:" >&2; cat "$tmp/wrk_$1.txt" >&2; exit 1; }
}
# field LABEL KEY: one value of a phase's figures (0 when absent).
field() { tr ' ' '\n' <"$tmp/$1" | awk -F= -v k="$2" '$1 == k {v = $2} END {print v + 0}'; }

started=$(date +%s)
run_wrk warmup 256 "$WARMUP"
warm_hwm=$(status_kb VmHWM)
warm_rss=$(status_kb VmRSS)
per=$((SECS / 3))
for c in $PHASES; do run_wrk "c$c" "$c" "$per"; done
end_hwm=$(status_kb VmHWM)
end_rss=$(status_kb VmRSS)
echo done >"$tmp/phase"
sleep 2.5 # one more sample, after the load
healthz=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$base/healthz" || echo 000)
final_metrics=$(curl -fsS --max-time 10 "$base/metrics" || true)
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
sampler=""
kill -TERM "$pid"
stop_status=0
wait "$pid" || stop_status=$?
pid=""

# ---- the report ----

fail=0
{
	echo "wrk soak of starforge serve, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "server: $BIN serve --max-queue $MAX_QUEUE --eval-cache-max $EVAL_CACHE_MAX (workers $workers, the other options their defaults)"
	echo "load: wrk $WRK_THREADS threads, keep-alive, --timeout 10s, tests/soak/wrk_mix.lua over $nlevels levels"
	echo "      (55 % level reads, 5 % evaluations of random length-12 sequences, 5 % pictures, 5 % listings,"
	echo "      20 % status polls, 10 % job submissions)"
	echo "warm-up: ${WARMUP}s at 256 connections (not counted); then ${per}s each at $PHASES connections"
	echo
	printf '%-12s %9s %9s %9s %9s %9s %9s %8s %8s %7s\n' phase requests req/s p50_ms p99_ms max_ms 2xx 429 errors ok
	total_errors=0
	total_requests=0
	for label in warmup $(for c in $PHASES; do echo "c$c"; done); do
		req=$(field "$label" requests)
		dur=$(field "$label" duration_us)
		ok2=$(($(field "$label" s200) + $(field "$label" s202)))
		s429=$(field "$label" s429)
		other=$(tr ' ' '\n' <"$tmp/$label" | awk -F= '$1 ~ /^s[0-9]+$/ && $1 != "s200" && $1 != "s202" && $1 != "s304" && $1 != "s429" {n += $2} END {print n + 0}')
		sock=$(($(field "$label" connect) + $(field "$label" read) + $(field "$label" write) + $(field "$label" timeout)))
		errors=$((other + sock))
		verdict=yes
		[ "$errors" -eq 0 ] || verdict=NO
		printf '%-12s %9d %9.0f %9.2f %9.2f %9.2f %9d %8d %8d %7s\n' "$label" "$req" \
			"$(awk -v r="$req" -v d="$dur" 'BEGIN {print d ? r / (d / 1e6) : 0}')" \
			"$(awk -v u="$(field "$label" p50_us)" 'BEGIN {print u / 1000}')" \
			"$(awk -v u="$(field "$label" p99_us)" 'BEGIN {print u / 1000}')" \
			"$(awk -v u="$(field "$label" max_us)" 'BEGIN {print u / 1000}')" \
			"$ok2" "$s429" "$errors" "$verdict"
		if [ "$label" != warmup ]; then
			total_errors=$((total_errors + errors))
			total_requests=$((total_requests + req))
		fi
		[ "$errors" -eq 0 ] || fail=1
	done
	echo "statuses: $(for label in warmup $(for c in $PHASES; do echo "c$c"; done); do printf '%s[%s] ' "$label" "$(tr ' ' '\n' <"$tmp/$label" | grep '^s[0-9]' | sort | tr '\n' ' ' | sed 's/ $//')"; done)"
	echo "counted phases: $total_requests requests, $total_errors errors other than 429, $(($(date +%s) - started))s of load with the warm-up"
	echo

	ratio=$(awk -v a="$end_hwm" -v b="$warm_hwm" 'BEGIN {printf "%.3f", a / b}')
	flat=yes
	awk -v a="$end_hwm" -v b="$warm_hwm" 'BEGIN {exit !(a <= 1.10 * b)}' || { flat=NO; fail=1; }
	echo "memory: peak RSS (VmHWM) after warm-up $((warm_hwm / 1024)) MiB (RSS $((warm_rss / 1024)) MiB);" \
		"at the end $((end_hwm / 1024)) MiB (RSS $((end_rss / 1024)) MiB); end/warm-up $ratio (at most 1.10): $flat"
	maxq=$(awk '$5 != "" && $5 + 0 > m {m = $5 + 0} END {print m + 0}' "$tmp/samples")
	nsamples=$(wc -l <"$tmp/samples")
	failed_samples=$(awk '$5 == ""' "$tmp/samples" | wc -l)
	bounded=yes
	[ "$maxq" -le "$MAX_QUEUE" ] || { bounded=NO; fail=1; }
	echo "queue: at most $maxq jobs queued in $nsamples samples of GET /metrics (bound $MAX_QUEUE): $bounded" \
		"($failed_samples samples failed)"
	[ "$failed_samples" -eq 0 ] || fail=1
	entries=$(metric starforge_evaluation_cache_entries "$final_metrics")
	evictions=$(metric starforge_evaluation_cache_evictions_total "$final_metrics")
	cached=yes
	[ -n "$entries" ] && [ "$entries" -le "$EVAL_CACHE_MAX" ] && [ "${evictions:-0}" -gt 0 ] ||
		{ cached=NO; fail=1; }
	echo "evaluation cache at the end: ${entries:-?} entries (bound $EVAL_CACHE_MAX)," \
		"${evictions:-?} evicted: $cached"
	echo "jobs at the end: $(printf '%s\n' "$final_metrics" | awk '/^starforge_jobs\{/ {sub(/starforge_jobs\{state="/, ""); sub(/"\}/, ""); printf "%s %s, ", $1, $2}' | sed 's/, $//')"
	echo "after the load: /healthz $healthz; SIGTERM: exit status $stop_status"
	[ "$healthz" = 200 ] && [ "$stop_status" -eq 0 ] || fail=1
	echo
	if [ "$fail" -eq 0 ]; then echo "wrk_soak: PASS"; else echo "wrk_soak: FAIL"; fi
} | tee "$OUT"
{
	echo "# time phase VmRSS_kB VmHWM_kB queued running"
	cat "$tmp/samples"
} >"$SAMPLES"
grep -q '^wrk_soak: PASS$' "$OUT"
