#!/bin/sh
# tests/image/run.sh - the container image, built and run for real (issue
# 19). .ci/run runs it after `make test`; it needs root and a few minutes.
#
#   sh tests/image/run.sh
#
# Builds the image with `make image` (podman; a local debootstrap base where
# no registry answers, scripts/image.sh), then checks, each a failure when
# it does not hold:
#   - the runtime stage holds no compiler (gcc, cc, make) and what the image
#     adds to its base is at most 40 MB;
#   - the container starts as the non-root user 10001 and answers /healthz
#     and /readyz over its published port (127.0.0.1, a free port);
#   - its HEALTHCHECK passes, and fails while the server does not answer
#     (the process stopped with SIGSTOP from the host);
#   - a job submitted to the container succeeds;
#   - after `podman kill -s KILL` and a restart on the same volume, every
#     accepted job finishes and the levels are still there;
#   - `podman stop` (SIGTERM) ends it with exit status 0 within 10 s;
#   - docker/compose.yaml under podman-compose: the single-node service
#     healthy on 127.0.0.1:8080 (so that port must be free), read-only root,
#     no capabilities, a job succeeds, and it stops with exit status 0;
#   - then docker/compose.scale.yaml under podman-compose (postgres:15 and
#     nginx:1.22 from `make image-services`: made locally from Debian's
#     packages where no registry answers, docker/local/): postgres and the
#     three nodes healthy, /readyz 200 through nginx on 127.0.0.1:8080,
#     nginx reaching all three nodes by name, the nodes on PostgreSQL; nine
#     jobs submitted through nginx, the node holding the most running ones
#     (lease_owner in the database) killed with `podman kill -s KILL`, and
#     every job still succeeding (its jobs run again elsewhere after the
#     30 s lease), their levels 200 through nginx, a level asked for twice
#     a cache HIT; `podman-compose stop` ends postgres, the other nodes and
#     nginx with exit status 0, and `down -v` removes the database volume.
# The figures (build time, image and base sizes, start-to-healthy time, stop
# time, the scale-out's times to healthy and from the kill to every job
# finished) go to stdout and build/image/figures.txt.
set -eu
cd "$(dirname "$0")/../.."
export CONTAINERS_STORAGE_CONF="${CONTAINERS_STORAGE_CONF:-$PWD/docker/podman/storage.conf}"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/docker/podman/containers.conf}"
OUT=build/image/figures.txt
NAME=starforge-image-test-$$
VOLUME=starforge-image-test-$$
fail=0

say() { echo "image test: $*"; }
bad() {
	echo "image test: FAIL: $*"
	fail=1
}
now_ms() { date +%s%3N; }

if [ "$(id -u)" -ne 0 ]; then
	say "SKIPPED: needs root (podman's storage, port publishing); run it as root"
	exit 0
fi
sh scripts/deps.sh image
sh scripts/deps.sh test >/dev/null # curl, jq

mkdir -p build/image
cleanup() {
	podman rm -f -v -t 0 "$NAME" >/dev/null 2>&1 || true
	podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

# ---- build ----
t0=$(date +%s)
make --no-print-directory image
build_s=$(($(date +%s) - t0))
version=$(sed -n 's/^VERSION := //p' Makefile)
image=starforge:$version
# Sizes are read off the file systems (the bytes of every file, du
# --apparent-size), both images mounted: with the vfs driver podman's own
# figure counts a layer's unchanged files too (each vfs layer is a full
# copy) and says the apt-get layer alone is 95 MB. The image removes
# nothing of its base, so the difference is what it adds.
tree_bytes() {
	dir=$(podman image mount "$1")
	du -sb --apparent-size "$dir" | cut -f1
	podman image unmount "$1" >/dev/null
}
size=$(tree_bytes "$image")
base=$(tree_bytes docker.io/library/debian:12-slim)
added=$((size - base))
podman_size=$(podman image inspect -f '{{.Size}}' "$image")
[ "$added" -le $((40 * 1000 * 1000)) ] || bad "the image adds $added bytes to its base, more than 40 MB"
compilers=$(podman run --rm --entrypoint /bin/sh "$image" -c \
	'for c in gcc cc c99 make ld as; do command -v "$c"; done; ls /usr/lib/gcc 2>/dev/null; true')
[ -z "$compilers" ] || bad "the runtime stage holds build tools: $compilers"

# ---- run ----
podman volume create "$VOLUME" >/dev/null
healthy_after() { # the time (Unix ms) /healthz first answers 200, or fails after 30 s
	start=$1
	while :; do
		if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base_url/healthz")" = 200 ]; then
			now_ms
			return 0
		fi
		[ $(($(now_ms) - start)) -lt 30000 ] || return 1
		sleep 0.02
	done
}
# Published on a free port of the host's loopback, which podman picks.
t=$(now_ms)
podman run -d --name "$NAME" -p 127.0.0.1::8080 -v "$VOLUME:/data" \
	-e STARFORGE_WORKERS=2 "$image" >/dev/null
base_url=http://$(podman port "$NAME" 8080/tcp)
healthy_at=$(healthy_after "$t") || {
	podman logs "$NAME" | tail -20
	bad "not healthy within 30 s"
	exit 1
}
# From `podman run` (which first copies the image: vfs), and from the
# moment the container's process started.
healthy_ms=$((healthy_at - t))
started=$(podman inspect -f '{{.State.StartedAt.UnixMilli}}' "$NAME")
serve_ms=$((healthy_at - started))
uid=$(podman exec "$NAME" sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' /proc/1/status)
[ "$uid" = 10001 ] || bad "the server runs as uid '$uid', not 10001"
ready=$(curl -s -o /dev/null -w '%{http_code}' "$base_url/readyz")
[ "$ready" = 200 ] || bad "/readyz answered $ready"

# The HEALTHCHECK: passes now, fails while the server is stopped.
podman healthcheck run "$NAME" >/dev/null 2>&1 || bad "the HEALTHCHECK failed on a healthy server"
pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
kill -STOP "$pid"
if podman healthcheck run "$NAME" >/dev/null 2>&1; then bad "the HEALTHCHECK passed while the server was stopped"; fi
kill -CONT "$pid"
podman healthcheck run "$NAME" >/dev/null 2>&1 || bad "the HEALTHCHECK failed after the server went on"

# ---- jobs ----
submit() { # a job's id, from its 202
	curl -sf -X POST -H 'Content-Type: application/json' -d "$1" "$base_url/v1/jobs" | jq -r .id
}
state() { curl -sf "$base_url/v1/jobs/$1" | jq -r .state; }
wait_final() { # the job's final state, within 120 s
	i=0
	while [ $i -lt 1200 ]; do
		s=$(state "$1" || echo unreachable)
		case $s in succeeded | failed | cancelled) echo "$s" && return 0 ;; esac
		i=$((i + 1))
		sleep 0.1
	done
	echo "$s"
}
first=$(submit '{"kind":"digger","seed":7,"params":{"difficulty":"easy","count":2}}')
[ "$(wait_final "$first")" = succeeded ] || bad "job $first did not succeed"
levels=$(curl -sf "$base_url/v1/jobs/$first" | jq -r '.level_ids[]')
[ -n "$levels" ] || bad "job $first has no levels"

# Jobs running and queued when the container is killed.
ids=""
for seed in 1 2 3 4 5 6; do
	ids="$ids $(submit "{\"kind\":\"lattice\",\"seed\":$seed,\"params\":{\"length\":16,\"generations\":40}}")"
done
sleep 1
podman kill -s KILL "$NAME" >/dev/null
podman wait "$NAME" >/dev/null 2>&1 || true
t=$(now_ms)
podman start "$NAME" >/dev/null
restart_at=$(healthy_after "$t") || bad "not healthy within 30 s of the restart"
restart_ms=$((${restart_at:-$t} - t))
for id in $ids; do
	s=$(wait_final "$id")
	[ "$s" = succeeded ] || bad "job $id accepted before the kill ended '$s'"
done
for level in $levels; do
	code=$(curl -s -o /dev/null -w '%{http_code}' "$base_url/v1/levels/$level")
	[ "$code" = 200 ] || bad "level $level answered $code after the restart"
done

# ---- stop ----
t=$(now_ms)
podman stop -t 30 "$NAME" >/dev/null
stop_ms=$(($(now_ms) - t))
code=$(podman inspect -f '{{.State.ExitCode}}' "$NAME")
[ "$code" = 0 ] || bad "podman stop: exit status $code"
[ "$stop_ms" -le 10000 ] || bad "podman stop took $stop_ms ms"

# ---- compose ----
# docker/compose.yaml under podman-compose (Debian's): the single-node
# service from the image just built (--no-build: podman-compose's own build
# would use the OCI format, which drops the HEALTHCHECK), healthy on the
# host's loopback port 8080 as the file publishes it, with the file's
# read-only root and no capabilities; `down` stops it with exit status 0.
compose() { podman-compose -p "$PROJECT" -f docker/compose.yaml "$@"; }
PROJECT=starforge-image-test-$$
# project_down PROJECT FILE LOG: `down -v`, then the project's network,
# which podman-compose 1.0.3's down leaves; the status is down's.
project_down() {
	rc=0
	podman-compose -p "$1" -f "$2" down -v >>"$3" 2>&1 || rc=$?
	podman network rm -f "${1}_default" >/dev/null 2>&1 || true
	return "$rc"
}
compose_down() { project_down "$PROJECT" docker/compose.yaml build/image/compose.log; }
# Both compose files publish the host's 127.0.0.1:8080.
port_8080_taken() { curl -s -o /dev/null --max-time 1 http://127.0.0.1:8080/; }
compose_ms="?"
if port_8080_taken; then
	bad "port 8080 of this machine is taken: docker/compose.yaml publishes the service there"
else
	trap 'cleanup; compose_down || true' EXIT INT TERM
	t=$(now_ms)
	if ! compose up -d --no-build >build/image/compose.log 2>&1; then
		tail -20 build/image/compose.log
		bad "podman-compose up failed"
	fi
	base_url=http://127.0.0.1:8080
	if at=$(healthy_after "$t"); then
		compose_ms=$((at - t))
	else
		bad "the compose service was not healthy within 30 s"
	fi
	cname=$(podman ps -a --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}')
	podman healthcheck run "$cname" >/dev/null 2>&1 || bad "the compose service's health check failed"
	[ "$(podman inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$cname")" = true ] ||
		bad "the compose service's root file system is writable"
	[ "$(podman inspect -f '{{.EffectiveCaps}}' "$cname")" = "[]" ] ||
		bad "the compose service has capabilities: $(podman inspect -f '{{.EffectiveCaps}}' "$cname")"
	id=$(submit '{"kind":"digger","seed":3,"params":{"difficulty":"easiest","count":1}}')
	[ "$(wait_final "$id")" = succeeded ] || bad "a job in the compose service did not succeed"
	compose stop >>build/image/compose.log 2>&1 || bad "podman-compose stop failed"
	code=$(podman inspect -f '{{.State.ExitCode}}' "$cname")
	[ "$code" = 0 ] || bad "the compose service exited with status $code"
	compose_down || bad "podman-compose down failed"
fi

# ---- the scale-out set-up ----
# docker/compose.scale.yaml under podman-compose, after the single-node
# project is down (both publish 127.0.0.1:8080): PostgreSQL, three nodes of
# the image just built and nginx in front. postgres:15 and nginx:1.22 come
# from `make image-services`: podman's storage, the registry, or where no
# registry answers made here from Debian's packages (docker/local/). The
# containers find each other by name through the CNI dnsname plugin
# (scripts/deps.sh image). Every request below goes through nginx.
scale() { podman-compose -p "$SPROJECT" -f docker/compose.scale.yaml "$@"; }
SPROJECT=starforge-image-scale-$$
scname() { echo "${SPROJECT}_$1_1"; }
scale_down() { project_down "$SPROJECT" docker/compose.scale.yaml build/image/scale.log; }
scale_logs() { # the last lines of every container's log, on a failure
	for s in postgres starforge-1 starforge-2 starforge-3 nginx; do
		podman logs --tail 8 "$(scname "$s")" 2>&1 | sed "s/^/  $s: /" || true
	done
}
all_healthy_after() { # START LIMIT_MS CONTAINER...: when `podman healthcheck run` first passes for all
	start=$1 limit=$2
	shift 2
	while :; do
		ok=1
		for c in "$@"; do
			podman healthcheck run "$c" >/dev/null 2>&1 || {
				ok=0
				break
			}
		done
		[ "$ok" -eq 0 ] || {
			now_ms
			return 0
		}
		[ $(($(now_ms) - start)) -lt "$limit" ] || return 1
		sleep 0.2
	done
}
psql_scale() { podman exec "$(scname postgres)" psql -U starforge -d starforge -Atc "$1" 2>/dev/null || true; }
scale_test() {
	t=$(date +%s)
	make --no-print-directory image-services || {
		bad "make image-services (postgres:15 and nginx:1.22) failed"
		return 1
	}
	services_s=$(($(date +%s) - t))
	if port_8080_taken; then
		bad "port 8080 of this machine is taken after the single-node project went down: compose.scale.yaml's nginx publishes there"
		return 1
	fi
	trap 'cleanup; compose_down || true; scale_down || true' EXIT INT TERM
	t=$(now_ms)
	if ! scale up -d --no-build >build/image/scale.log 2>&1; then
		tail -20 build/image/scale.log
		bad "podman-compose up (compose.scale.yaml) failed"
		return 1
	fi
	up_ms=$(($(now_ms) - t))
	base_url=http://127.0.0.1:8080
	pg=$(scname postgres)
	nodes="$(scname starforge-1) $(scname starforge-2) $(scname starforge-3)"
	at=$(all_healthy_after "$t" 120000 "$pg") || {
		scale_logs
		bad "postgres (the local stand-in or the registry's) not healthy within 120 s of up"
		return 1
	}
	pg_ms=$((at - t))
	# shellcheck disable=SC2086
	at=$(all_healthy_after "$t" 120000 $nodes) || {
		scale_logs
		bad "the three starforge nodes not all healthy within 120 s of up"
		return 1
	}
	nodes_ms=$((at - t))
	while [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base_url/readyz")" != 200 ]; do
		[ $(($(now_ms) - t)) -lt 120000 ] || {
			scale_logs
			bad "GET /readyz through nginx did not answer 200 within 120 s of up"
			return 1
		}
		sleep 0.2
	done
	ready_ms=$(($(now_ms) - t))
	# nginx reaches every node by name: least_conn takes idle nodes in turn.
	seen=$(for i in 1 2 3 4 5 6 7 8 9; do curl -sf "$base_url/readyz" | jq -r .checks.node; done | sort -u | tr '\n' ' ')
	[ "$seen" = "starforge-1 starforge-2 starforge-3 " ] || bad "nginx reached the nodes '$seen', not starforge-1..3"
	backend=$(curl -sf "$base_url/readyz" | jq -r .checks.backend)
	[ "$backend" = postgresql ] || bad "the nodes' store is '$backend', not postgresql"

	# Jobs of a few seconds each (two workers a node); once some run, the
	# node that holds the most running jobs (their lease_owner in the
	# database) is killed. Its jobs run again on the others once their
	# lease (STARFORGE_LEASE_SECONDS, 30 s) has expired.
	# (length 20, 100 generations: about 3 s on two cores each, 6 s of CPU.)
	sids=""
	for seed in 11 12 13 14 15 16 17 18 19; do
		id=$(submit "{\"kind\":\"lattice\",\"seed\":$seed,\"params\":{\"length\":20,\"generations\":100}}" || true)
		case $id in
		job_*) sids="$sids $id" ;;
		*)
			scale_logs
			bad "POST /v1/jobs through nginx did not answer 202 with a job id (got '$id')"
			return 1
			;;
		esac
	done
	# Until every worker (3 nodes of 2) runs one, or 5 s.
	i=0
	while [ "$(psql_scale "SELECT count(*) FROM jobs WHERE state = 'running'")" != 6 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	victim=$(psql_scale "SELECT lease_owner FROM jobs WHERE state = 'running' AND lease_owner IS NOT NULL
		GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
	case $victim in
	starforge-[123]) ;;
	*)
		say "no running job seen in the database (owner '$victim'); killing starforge-2"
		victim=starforge-2
		;;
	esac
	victim_jobs=$(psql_scale "SELECT count(*) FROM jobs WHERE state = 'running' AND lease_owner = '$victim'")
	kill_at=$(now_ms)
	podman kill -s KILL "$(scname "$victim")" >/dev/null
	for id in $sids; do
		s=$(wait_final "$id")
		[ "$s" = succeeded ] || bad "job $id (scale-out, submitted before $victim was killed) ended '$s'"
	done
	after_kill_ms=$(($(now_ms) - kill_at))
	rescued=$(psql_scale "SELECT count(*) FROM jobs WHERE lost > 0")
	if [ "${victim_jobs:-0}" -lt 1 ] 2>/dev/null || [ -z "${victim_jobs:-}" ]; then
		bad "$victim held no running job when it was killed: the failover was not exercised"
	elif [ "${rescued:-0}" -lt "$victim_jobs" ]; then
		bad "$victim held $victim_jobs running jobs, but only $rescued were run again elsewhere"
	fi
	victim_state=$(podman inspect -f '{{.State.Status}}, exit status {{.State.ExitCode}}, restarts {{.RestartCount}}' "$(scname "$victim")")
	nlevels=0 slevel=""
	for id in $sids; do
		for slevel in $(curl -sf "$base_url/v1/jobs/$id" | jq -r '.level_ids[]'); do
			c=$(curl -s -o /dev/null -w '%{http_code}' "$base_url/v1/levels/$slevel")
			[ "$c" = 200 ] || bad "level $slevel (job $id) answered $c through nginx"
			nlevels=$((nlevels + 1))
		done
	done
	[ "$nlevels" -gt 0 ] || bad "the scale-out jobs have no levels"
	# The second request for a level is nginx's cache's (the nodes mark levels immutable).
	if [ -n "$slevel" ]; then
		hit=$(curl -s -D - -o /dev/null "$base_url/v1/levels/$slevel" | tr -d '\r' | sed -n 's/^[Xx]-[Cc]ache-[Ss]tatus: //p')
		[ "$hit" = HIT ] || bad "a level asked for twice through nginx: X-Cache-Status '$hit', not HIT"
	fi

	# Stop: PostgreSQL on SIGINT, the nodes on SIGTERM, nginx on SIGQUIT,
	# each with exit status 0 (the killed node stays down: 137).
	t=$(now_ms)
	scale stop >>build/image/scale.log 2>&1 || bad "podman-compose stop (compose.scale.yaml) failed"
	scale_stop_ms=$(($(now_ms) - t))
	for s in postgres starforge-1 starforge-2 starforge-3 nginx; do
		[ "$s" != "$victim" ] || continue
		c=$(podman inspect -f '{{.State.ExitCode}}' "$(scname "$s")")
		[ "$c" = 0 ] || bad "$s (scale-out) exited with status $c on podman-compose stop"
	done
	scale_down || bad "podman-compose down -v (compose.scale.yaml) failed"
	if podman volume exists "${SPROJECT}_starforge-pg"; then bad "the database volume outlived down -v"; fi
}
services_s="?" up_ms="?" pg_ms="?" nodes_ms="?" ready_ms="?" after_kill_ms="?" victim="?"
victim_jobs="?" rescued="?" victim_state="?" nlevels="?" scale_stop_ms="?"
scale_test || true

{
	echo "image $image, $(date -u +%Y-%m-%dT%H:%M:%SZ), podman $(podman version -f '{{.Client.Version}}'), storage $(podman info -f '{{.Store.GraphDriverName}}')"
	echo "build: ${build_s} s (make image, base present or made included)"
	echo "size: $size bytes of files; base debian:12-slim $base bytes; added $added bytes (bound 40 MB); podman's figure $podman_size bytes"
	echo "start to healthy: ${healthy_ms} ms from podman run (${serve_ms} ms from the process's start); after kill -9, podman start to healthy: ${restart_ms} ms"
	echo "podman stop (SIGTERM): ${stop_ms} ms, exit status $code"
	echo "jobs: 1 digger job succeeded, 6 lattice jobs across the kill all succeeded; runs as uid $uid"
	echo "docker/compose.yaml under podman-compose: up to healthy ${compose_ms} ms, a job succeeded, down"
	echo "docker/compose.scale.yaml under podman-compose: make image-services ${services_s} s; up -d ${up_ms} ms; from up: postgres healthy ${pg_ms} ms, the three nodes healthy ${nodes_ms} ms, /readyz 200 through nginx ${ready_ms} ms"
	echo "scale-out failover: $victim killed (-9) holding ${victim_jobs} running jobs, ${rescued} run again elsewhere; kill to all 9 jobs succeeded ${after_kill_ms} ms (lease 30 s); the killed node: ${victim_state}; ${nlevels} levels 200 through nginx; stop ${scale_stop_ms} ms"
} | tee "$OUT"
if [ "$fail" -eq 0 ]; then say PASS; else say FAIL; fi
exit "$fail"
