#!/bin/sh
# The HTTP benchmark of `make bench`: wrk against `starforge serve` on
# loopback, side by side with bench/bare_mhd (the smallest libmicrohttpd
# server, same single thread, a fixed body of the same size), both run here
# in the same benchmark. Prints requests per second and p99 latency at 64
# connections for a cached GET /v1/levels/{id}, a cached evaluation, and the
# bare server with each body size; and Starforge's throughput as a share of
# the bare server's.
#
# usage: http_bench.sh STARFORGE_BIN BARE_MHD_BIN [SECONDS]
set -eu
BIN=$1
BARE=$2
SECS=${3:-10}
CONNS=64
THREADS=2
tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

free_port() {
	# Ask the kernel for a free loopback port by binding port 0.
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + $$ % 20000))
}

wait_http() {
	for _ in $(seq 1 100); do
		curl -fs "$1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "http_bench: $1 did not come up" >&2
	exit 1
}

port=$(free_port)
"$BIN" serve --listen 127.0.0.1:"$port" --db "$tmp/bench.db" 2>"$tmp/serve.log" &
pids="$pids $!"
base="http://127.0.0.1:$port"
wait_http "$base/healthz"

# One level to read: submit a job and wait for it.
job=$(curl -fs -X POST "$base/v1/jobs" -H 'Content-Type: application/json' \
	-d '{"kind":"lattice","seed":42,"params":{}}')
id=$(printf '%s' "$job" | sed -n 's/.*"id":"\(job_[0-9a-f]*\)".*/\1/p')
level=""
for _ in $(seq 1 200); do
	st=$(curl -fs "$base/v1/jobs/$id")
	level=$(printf '%s' "$st" | sed -n 's/.*"level_ids":\["\(lat_[0-9a-f]*\)".*/\1/p')
	[ -n "$level" ] && break
	sleep 0.05
done
[ -n "$level" ] || { echo "http_bench: the job did not finish: $st" >&2; exit 1; }
eval_path=/v1/evaluations/square/HPHPPHHPHPPHPHHP
curl -fs "$base$eval_path" >/dev/null # computed once; cached from here on

run_wrk() { # name url -> "name rps p99"
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency "$2")
	rps=$(printf '%s\n' "$out" | awk '/^Requests\/sec:/ {print $2}')
	p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
	errs=$(printf '%s\n' "$out" | awk '/Non-2xx|Socket errors/ {print}' | tr '\n' ' ')
	printf '%-44s %12s %10s %s\n' "$1" "$rps" "$p99" "$errs"
	printf '%s\n' "$rps" >"$tmp/$3"
}

level_bytes=$(curl -fs "$base/v1/levels/$level" | wc -c)
eval_bytes=$(curl -fs "$base$eval_path" | wc -c)

echo
echo "HTTP benchmark: wrk, $CONNS connections, $THREADS wrk threads, ${SECS}s each, loopback"
printf '%-44s %12s %10s\n' "endpoint" "requests/s" "p99"
run_wrk "starforge GET /v1/levels/{id} ($level_bytes B)" "$base/v1/levels/$level" level
run_wrk "starforge GET $eval_path ($eval_bytes B, cached)" "$base$eval_path" eval

bport=$(free_port)
"$BARE" "$bport" "$level_bytes" 2>/dev/null &
bpid=$!
pids="$pids $bpid"
wait_http "http://127.0.0.1:$bport/"
run_wrk "bare libmicrohttpd, $level_bytes B body" "http://127.0.0.1:$bport/" bare_level
kill "$bpid"
bport=$(free_port)
"$BARE" "$bport" "$eval_bytes" 2>/dev/null &
pids="$pids $!"
wait_http "http://127.0.0.1:$bport/"
run_wrk "bare libmicrohttpd, $eval_bytes B body" "http://127.0.0.1:$bport/" bare_eval

awk -v a="$(cat "$tmp/level")" -v b="$(cat "$tmp/bare_level")" -v c="$(cat "$tmp/eval")" \
	-v d="$(cat "$tmp/bare_eval")" 'BEGIN {
	printf "starforge / bare: levels %.0f %%, evaluations %.0f %%\n", 100 * a / b, 100 * c / d }'
