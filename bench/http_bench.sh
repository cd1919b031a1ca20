#!/bin/sh
# The HTTP benchmark of `make bench`: wrk against `starforge serve` on
# loopback, side by side with bench/bare_mhd (the smallest libmicrohttpd
# server, same single thread, a fixed body of the same size), both run here
# in the same benchmark. Four Starforge cases: a cached GET /v1/levels/{id}
# and a cached evaluation, each plain and with Accept-Encoding: gzip (the
# compressed body comes from the response cache, compressed once); each
# against a bare server sending a fixed body of the same size (for gzip, of
# the compressed size, announced as Content-Encoding: gzip). The cases take
# turns, REPS rounds of SECONDS each, so that the machine's noise falls on
# all of them alike; printed are the median requests per second and p99
# latency of each case and Starforge's throughput as a share of its bare
# baseline's.
#
# usage: http_bench.sh STARFORGE_BIN BARE_MHD_BIN [SECONDS] [REPS]
set -eu
BIN=$1
BARE=$2
SECS=${3:-5}
REPS=${4:-3}
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
		echo $((20000 + $$ % 20000 + ${1:-0}))
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

GZ='Accept-Encoding: gzip'
level_bytes=$(curl -fs "$base/v1/levels/$level" | wc -c)
eval_bytes=$(curl -fs "$base$eval_path" | wc -c)
level_gz=$(curl -fs -H "$GZ" "$base/v1/levels/$level" | wc -c)
eval_gz=$(curl -fs -H "$GZ" "$base$eval_path" | wc -c)
curl -fsI -H "$GZ" "$base/v1/levels/$level" | grep -qi '^content-encoding: gzip' ||
	{ echo "http_bench: the level did not come gzip-compressed" >&2; exit 1; }

# The bare servers, one per body: idle while the others are measured.
bare() { # name bytes [gzip]
	bp=$(free_port "$2")
	"$BARE" "$bp" "$2" ${3:-} 2>/dev/null &
	pids="$pids $!"
	wait_http "http://127.0.0.1:$bp/"
	eval "bare_$1=http://127.0.0.1:$bp/"
}
bare level "$level_bytes"
bare eval "$eval_bytes"
bare level_gz "$level_gz" gzip
bare eval_gz "$eval_gz" gzip

# case name, header ("" for none), url
CASES="level||$base/v1/levels/$level
bare_level||$bare_level
eval||$base$eval_path
bare_eval||$bare_eval
level_gz|$GZ|$base/v1/levels/$level
bare_level_gz|$GZ|$bare_level_gz
eval_gz|$GZ|$base$eval_path
bare_eval_gz|$GZ|$bare_eval_gz"

to_ms() { # wrk's "6.40ms", "812.00us", "1.02s" -> milliseconds
	awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.2f", n }'
}

for rep in $(seq 1 "$REPS"); do
	printf '%s\n' "$CASES" | while IFS='|' read -r name header url; do
		if [ -n "$header" ]; then
			out=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency -H "$header" "$url")
		else
			out=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency "$url")
		fi
		rps=$(printf '%s\n' "$out" | awk '/^Requests\/sec:/ {print $2}')
		p99=$(to_ms "$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')")
		errs=$(printf '%s\n' "$out" | awk '/Non-2xx|Socket errors/ {print}' | tr '\n' ' ')
		[ -z "$errs" ] || echo "http_bench: $name round $rep: $errs" >&2
		printf '%s %s\n' "$rps" "$p99" >>"$tmp/$name"
	done
done

median() { # column file
	sort -n -k"$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "HTTP benchmark: wrk, $CONNS connections, $THREADS wrk threads, ${SECS}s per round, medians of $REPS rounds, loopback"
printf '%-68s %12s %10s %8s\n' "case" "requests/s" "p99 ms" "of bare"
row() { # name label
	rps=$(median 1 "$tmp/$1")
	p99=$(median 2 "$tmp/$1")
	case $1 in
	bare_*) share="" ;;
	*) share=$(awk -v a="$rps" -v b="$(median 1 "$tmp/bare_$1")" 'BEGIN { printf "%.0f %%", 100 * a / b }') ;;
	esac
	printf '%-68s %12.0f %10s %8s\n' "$2" "$rps" "$p99" "$share"
}
row level "starforge GET /v1/levels/{id} ($level_bytes B)"
row level_gz "starforge GET /v1/levels/{id}, gzip ($level_gz B)"
row eval "starforge GET $eval_path ($eval_bytes B)"
row eval_gz "starforge GET $eval_path, gzip ($eval_gz B)"
row bare_level "bare libmicrohttpd, $level_bytes B body"
row bare_level_gz "bare libmicrohttpd, $level_gz B body, Content-Encoding: gzip"
row bare_eval "bare libmicrohttpd, $eval_bytes B body"
row bare_eval_gz "bare libmicrohttpd, $eval_gz B body, Content-Encoding: gzip"

# ---- submissions: POST /v1/jobs, each durable before its 202 ----
# A server of its own (a fresh database, --max-queue 100000 so that no
# submission meets a full queue) per setting: the default; the default but
# with SQLite's WAL checkpoints inside the commits, on the store thread
# (STARFORGE_CHECKPOINT_INLINE=1, as before store_checkpoint_in_background);
# and STARFORGE_STORE_BATCH_MAX=1, where the store thread commits every
# write on its own (the baseline of group commit). Two loads, wrk with bench/submit.lua, 64
# connections: as fast as answered (accepted jobs per second), and each
# connection waiting 64 ms after an answer (about 1 000 jobs/s offered: the
# p99 there is the latency figure). Small digger jobs; the workers run them
# meanwhile, as they would.
submit_server() { # name batch_max checkpoint_inline
	sp=$(free_port 7)
	mkdir -p "$tmp/$1"
	STARFORGE_STORE_BATCH_MAX=$2 STARFORGE_CHECKPOINT_INLINE=$3 "$BIN" serve --listen 127.0.0.1:"$sp" --db "$tmp/$1/submit.db" \
		--max-queue 100000 2>"$tmp/$1/serve.log" &
	spid=$!
	wait_http "http://127.0.0.1:$sp/healthz"
}
SCRIPT=$(dirname "$0")/submit.lua
for rep in $(seq 1 "$REPS"); do
	for setting in group:512:0 inline:512:1 single:1:0; do
		name=${setting%%:*}
		rest=${setting#*:}
		for load in max paced; do
			submit_server "$name" "${rest%%:*}" "${rest#*:}"
			if [ "$load" = paced ]; then
				out=$(SUBMIT_INTERVAL_MS=64 wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency -s "$SCRIPT" "http://127.0.0.1:$sp/v1/jobs")
			else
				out=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency -s "$SCRIPT" "http://127.0.0.1:$sp/v1/jobs")
			fi
			kill "$spid" 2>/dev/null || true
			wait "$spid" 2>/dev/null || true
			rm -rf "${tmp:?}/$name"
			acc=$(printf '%s\n' "$out" | sed -n 's/^SUBMIT accepted=\([0-9]*\) other=\([0-9]*\)$/\1 \2/p')
			set -- $acc
			[ "${2:-1}" -eq 0 ] || echo "http_bench: submissions $name $load round $rep: ${2:-?} answers were not 202" >&2
			p99=$(to_ms "$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')")
			printf '%s %s\n' "$(awk -v a="${1:-0}" -v s="$SECS" 'BEGIN { printf "%.0f", a / s }')" "$p99" >>"$tmp/submit_${name}_$load"
		done
	done
done
echo
echo "Submissions: POST /v1/jobs (small digger jobs), $CONNS connections, ${SECS}s per round, medians of $REPS rounds"
printf '%-68s %12s %10s\n' "case" "accepted/s" "p99 ms"
srow() { # file label
	printf '%-68s %12s %10s\n' "$2" "$(median 1 "$tmp/$1")" "$(median 2 "$tmp/$1")"
}
srow submit_group_max "group commit (default), as fast as answered"
srow submit_single_max "one commit per write (STARFORGE_STORE_BATCH_MAX=1), as fast as answered"
srow submit_inline_max "group commit, checkpoints in the commits (STARFORGE_CHECKPOINT_INLINE=1)"
srow submit_group_paced "group commit, each connection every 64 ms (~1 000/s offered)"
srow submit_inline_paced "group commit, checkpoints in the commits, every 64 ms"
srow submit_single_paced "one commit per write, each connection every 64 ms"

# ---- reads: GET /v1/jobs/{id}, a store read each (never cached) ----
# A server of its own per setting: the read pool (default, 4 threads with a
# READONLY handle each) and STARFORGE_READ_THREADS=0, every read on the
# loop thread (the baseline). On SQLite a read takes microseconds, so this
# shows what the hand-over costs; on PostgreSQL, where a read is a round
# trip, bench/cluster_bench.mjs measures what it saves.
read_server() { # name threads
	rp=$(free_port 9)
	mkdir -p "$tmp/$1"
	STARFORGE_READ_THREADS=$2 "$BIN" serve --listen 127.0.0.1:"$rp" --db "$tmp/$1/read.db" \
		2>"$tmp/$1/serve.log" &
	rpid=$!
	wait_http "http://127.0.0.1:$rp/healthz"
	rjob=$(curl -fs -X POST "http://127.0.0.1:$rp/v1/jobs" -H 'Content-Type: application/json' \
		-d '{"kind":"digger","seed":3,"params":{"difficulty":"easiest","count":1}}')
	rid=$(printf '%s' "$rjob" | sed -n 's/.*"id":"\(job_[0-9a-f]*\)".*/\1/p')
}
for rep in $(seq 1 "$REPS"); do
	for setting in pool:4 loop:0; do
		name=${setting%%:*}
		read_server "srv_read_$name" "${setting#*:}"
		out=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency "http://127.0.0.1:$rp/v1/jobs/$rid")
		kill "$rpid" 2>/dev/null || true
		wait "$rpid" 2>/dev/null || true
		rm -rf "${tmp:?}/srv_read_$name"
		rps=$(printf '%s\n' "$out" | awk '/^Requests\/sec/ {printf "%.0f", $2}')
		p99=$(to_ms "$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')")
		printf '%s %s\n' "$rps" "$p99" >>"$tmp/read_$name"
	done
done
echo
echo "Reads: GET /v1/jobs/{id} (a store read each), $CONNS connections, ${SECS}s per round, medians of $REPS rounds"
printf '%-68s %12s %10s\n' "case" "requests/s" "p99 ms"
srow read_pool "read pool, 4 threads (default)"
srow read_loop "reads on the loop thread (STARFORGE_READ_THREADS=0)"
