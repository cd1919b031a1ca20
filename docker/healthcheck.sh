#!/bin/bash
# The container's health check (Dockerfile HEALTHCHECK, docker/compose.yaml):
# GET /healthz over bash's /dev/tcp, so that the image needs no curl. Exit 0
# when the server answers 200, 1 otherwise (refused, no answer within 4 s,
# another status), with the reason on stderr, which `docker inspect` shows
# in .State.Health.Log.
#
# The address is STARFORGE_LISTEN's (HOST:PORT or [IPV6]:PORT, as
# `starforge serve` reads it), 0.0.0.0 and [::] meaning this container's
# loopback. Set the listen address through the environment, not --listen,
# for the check to follow it.
#
# Tested against a live server by tests/integration/docker.test.mjs.
set -u
listen=${STARFORGE_LISTEN:-127.0.0.1:8080}
host=${listen%:*}
port=${listen##*:}
host=${host#[}
host=${host%]}
case $host in
0.0.0.0) host=127.0.0.1 ;;
::) host=::1 ;;
esac

if ! exec 3<>"/dev/tcp/$host/$port"; then
	echo "healthcheck: cannot connect to $host:$port" >&2
	exit 1
fi
printf 'GET /healthz HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n' "$host" "$port" >&3
if ! IFS= read -r -t 4 status <&3; then
	echo "healthcheck: no answer from $host:$port within 4 s" >&2
	exit 1
fi
status=${status%$'\r'}
case $status in
"HTTP/1."[01]" 200 "*) exit 0 ;;
esac
echo "healthcheck: GET /healthz on $host:$port: $status" >&2
exit 1
