#!/bin/sh
# Installs the Debian packages Starforge builds and tests against, if any is
# missing. Idempotent and quiet when everything is present, so the Makefile can
# run it before every build. Needs root (or sudo) only when something is missing.
set -eu

PACKAGES="gcc make pkg-config libmicrohttpd-dev libjansson-dev libuv1-dev libsqlite3-dev libcmocka-dev"

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
