#!/bin/sh
# Installs the Debian packages Starforge needs, if any is missing. Idempotent
# and quiet when everything is present, so the Makefile runs it before every
# build. Needs root (or sudo) only when something is missing.
#
#   deps.sh          what `make` and `make run` need (libpq-dev: the binary
#                    links libpq, the PostgreSQL back end of the store;
#                    libyaml-dev only for tools/openapi_bundle.c, which
#                    reads openapi.yaml at build time; the binary does not
#                    link it)
#   deps.sh test     also what `make test` needs (Node.js and npm for the
#                    integration tests' pinned packages, curl and jq (the
#                    README's examples run as a test), the sqlite3
#                    shell the integration tests read a stopped server's
#                    database with, chromium, the browser the dashboard
#                    test drives through playwright-core, postgresql,
#                    Debian's server 15 and its client, for the throwaway
#                    cluster tests/pg/cluster.sh starts for the whole run,
#                    and nginx (1.22; bookworm's nginx-light is only a
#                    package that pulls it in, with an echo module), which
#                    tests/integration/scaleout.test.mjs runs with the
#                    shipped docker/nginx.conf in front of three nodes. The
#                    test starts its own nginx on a free loopback port; the
#                    package's own service, where apt starts it, is not used)
#   deps.sh bench    also what `make bench` needs (wrk, curl)
#   deps.sh fuzz     also what `make fuzz` needs (clang with libFuzzer and
#                    its sanitizers; llvm for llvm-profdata and llvm-cov)
#   deps.sh image    what `make image` and tests/image/run.sh need: podman
#                    (Debian's, with conmon and the CNI plugins its port
#                    publishing uses), runc (docker/podman/containers.conf
#                    picks it), buildah, debootstrap for a local base
#                    where no registry answers (scripts/image.sh),
#                    podman-compose, which the image test runs
#                    docker/compose.yaml and docker/compose.scale.yaml
#                    with, and the CNI dnsname plugin (with dnsmasq-base):
#                    podman 4.3 on Debian networks containers with CNI,
#                    where a compose project's containers find each other
#                    by name (the nodes `postgres`, nginx `starforge-1`..3)
#                    only through that plugin
set -eu

PACKAGES="gcc make pkg-config libmicrohttpd-dev libjansson-dev libuv1-dev libsqlite3-dev libcmocka-dev zlib1g-dev libyaml-dev libpq-dev"
case "${1:-}" in
test)
	PACKAGES="$PACKAGES curl jq sqlite3 chromium postgresql nginx"
	# Node.js may come from elsewhere (nodesource); only install Debian's
	# when there is none at all.
	command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs"
	command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"
	;;
bench) PACKAGES="$PACKAGES wrk curl" ;;
fuzz) PACKAGES="$PACKAGES clang llvm" ;;
image) PACKAGES="podman runc buildah debootstrap podman-compose golang-github-containernetworking-plugin-dnsname" ;;
"") ;;
*)
	echo "deps: unknown group '$1' (allowed: test, bench, fuzz, image)" >&2
	exit 2
	;;
esac

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "deps: missing packages:$missing (run this script as root)" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh image has empty package lists; a stale list fails the install, so
# refresh the lists and try once more before giving up.
# shellcheck disable=SC2086
if ! $SUDO apt-get install -y --no-install-recommends $missing >/dev/null 2>&1; then
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends $missing
fi
