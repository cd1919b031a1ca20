#!/bin/bash
# Thread and worker scaling past the 2 cores of a development machine: run on
# a many-core box (the figures in README came from a 16-core one). Needs the
# binaries `make bench` builds; bash only (HTTP through /dev/tcp, so no curl).
#
#   bash bench/scaling.sh [MAX_THREADS] [BUILD] [PARTS]   (PARTS: "lattice jobs pool")
#
#  1. the lattice enumerator and database build (bench_lattice --scaling)
#     and the exhaustive search's evaluation workers (bench_search --scaling);
#  2. one generation job per kind through `starforge generate --threads N`:
#     a default racetrack job and 20 hardest digger puzzles, median of 3 seeds;
#  3. the service's worker pool: `starforge serve --workers W --job-threads 1`
#     on loopback, 32 default racetrack jobs submitted at once, the wall time
#     until every one has succeeded.
set -eu
MAX=${1:-16}
BUILD=${2:-build}
PARTS=${3:-lattice jobs pool}
BIN=$BUILD/starforge
counts() { n=1; while [ "$n" -le "$MAX" ]; do echo "$n"; n=$((n * 2)); done; }
now() { date +%s.%N; }
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

if part lattice; then
echo "== lattice"
"$BUILD/bench/bench_lattice" --scaling "$MAX"
"$BUILD/bench/bench_search" --scaling "$MAX"
fi

if part jobs; then
echo
echo "== one job per kind, starforge generate --threads N (median of 3 seeds, s)"
printf '%-8s %12s %14s\n' threads racetrack digger-x20
for t in $(counts); do
	r=() d=()
	for seed in 1 2 3; do
		a=$(now)
		"$BIN" generate racetrack --seed "$seed" --threads "$t" >/dev/null
		b=$(now)
		"$BIN" generate digger --seed "$seed" --threads "$t" \
			--params '{"difficulty":"hardest","count":20}' >/dev/null
		c=$(now)
		r+=("$(awk "BEGIN{print $b - $a}")") d+=("$(awk "BEGIN{print $c - $b}")")
	done
	printf '%-8s %12.3f %14.3f\n' "$t" "$(median3 "${r[@]}")" "$(median3 "${d[@]}")"
done
fi

# One HTTP/1.0 request to 127.0.0.1:$PORT; prints the body.
http() {
	exec 3<>"/dev/tcp/127.0.0.1/$PORT"
	printf '%s %s HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
		"$1" "$2" "${#3}" "$3" >&3
	sed '1,/^\r$/d' <&3
	exec 3<&-
}

part pool || exit 0
echo
echo "== worker pool: 32 default racetrack jobs, --job-threads 1 (wall s)"
dir=$(mktemp -d)
for w in $(counts); do
	"$BIN" serve --listen 127.0.0.1:0 --db "$dir/w$w.db" --workers "$w" --job-threads 1 \
		2>"$dir/log$w" &
	pid=$!
	PORT=""
	for _ in $(seq 100); do
		PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$dir/log$w")
		[ -n "$PORT" ] && break
		sleep 0.1
	done
	a=$(now)
	for i in $(seq 32); do
		http POST /v1/jobs "{\"kind\":\"racetrack\",\"seed\":$i}" >/dev/null
	done
	while :; do
		done_=$(http GET '/v1/jobs?state=succeeded&page_size=100' "" | grep -o '"state": *"succeeded"' | wc -l)
		[ "$done_" -ge 32 ] && break
		sleep 0.05
	done
	b=$(now)
	kill "$pid"
	wait "$pid" || true
	printf 'workers %-4s %8.3f s\n' "$w" "$(awk "BEGIN{print $b - $a}")"
done
rm -rf "$dir"
