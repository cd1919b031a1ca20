#!/bin/sh
# image.sh - `make image`: builds the Dockerfile with podman, tagged
# starforge:VERSION and starforge:latest (docs/operations.md, "In a
# container").
#
#   sh scripts/image.sh VERSION
#   sh scripts/image.sh --services   (`make image-services`)
#
# --services: instead of starforge, the two other images
# docker/compose.scale.yaml runs, postgres:15 and nginx:1.22. Each is taken
# from podman's storage when present, else pulled, and where no registry
# answers made here from Debian 12's packages (docker/local/postgres.Dockerfile
# and nginx.Dockerfile, FROM the same base: PostgreSQL 15 and nginx 1.22,
# the releases the official tags carry) and tagged with the official name,
# docker.io/library/postgres:15 and docker.io/library/nginx:1.22, labelled
# org.starforge.stand-in. The console says which; `podman rmi` one to have
# it pulled or made again.
#
# The Dockerfile is the one a user with Docker and a registry builds; this
# script only makes sure its base, debian:12-slim, is there. It is taken
# from podman's storage when present, else pulled from the registry, and
# where no registry can be reached (our machines) made here: debootstrap
# --variant=minbase bookworm from Debian's mirror, made slim the way the
# registry's image is (no documentation, man pages or locales, no apt
# lists or package caches: its dpkg and apt settings), imported and tagged docker.io/library/debian:12-slim. The console
# says which.
#
# Settings for a restricted machine (a container or a sandbox without
# overlay mounts, user namespaces or raised limits), used unless already set:
#   CONTAINERS_STORAGE_CONF=docker/podman/storage.conf
#                                   the vfs driver (no overlay mounts), in
#                                   a store of its own
#   CONTAINERS_CONF=docker/podman/containers.conf
#                                   runc, and no default ulimits (podman's
#                                   ask for more open files than the hard
#                                   limit here)
#   IMAGE_ISOLATION=chroot          podman build's RUN steps without a
#                                   runtime or namespaces of their own
# Needs root and the packages of `sh scripts/deps.sh image` (podman,
# buildah, runc, debootstrap).
set -eu
cd "$(dirname "$0")/.."
SERVICES=0
if [ "${1:-}" = --services ]; then
	SERVICES=1
else
	VERSION=${1:?usage: image.sh VERSION | image.sh --services}
fi
BASE=docker.io/library/debian:12-slim
export CONTAINERS_STORAGE_CONF="${CONTAINERS_STORAGE_CONF:-$PWD/docker/podman/storage.conf}"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/docker/podman/containers.conf}"
ISOLATION=${IMAGE_ISOLATION:-chroot}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

say() { echo "image: $*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "needs root (podman's storage in /var/lib/containers)"; exit 1; }

# ---- images taken, pulled or made ----
# NAME from podman's storage (saying whether this script made it), else
# pulled from the registry; false when neither, for the caller to make it.
present_or_pulled() {
	if podman image exists "$1"; then
		made=$(podman image inspect -f '{{index .Labels "org.starforge.stand-in"}}' "$1" 2>/dev/null || true)
		case $made in
		"" | "<no value>") say "$1: present" ;;
		*) say "$1: present (made locally from $made)" ;;
		esac
	elif podman pull -q "$1" >/dev/null 2>&1; then
		say "$1: pulled from the registry"
	else
		return 1
	fi
}

# The base, debian:12-slim.
ensure_base() {
	present_or_pulled "$BASE" && return 0
	say "$BASE: no registry answered; making it locally with debootstrap (bookworm, minbase, slimmed)"
	root=$(mktemp -d /var/tmp/starforge-base.XXXXXX)
	trap 'rm -rf "$root"' EXIT INT TERM
	debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$root.log" 2>&1 || {
		tail -20 "$root.log" >&2
		say "debootstrap failed (log above)"
		exit 1
	}
	rm -f "$root.log"
	# What the registry's slim image leaves out (its dpkg excludes), and the
	# apt lists and caches every Dockerfile removes after apt-get install.
	cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<-'EOF'
		path-exclude /usr/share/doc/*
		path-include /usr/share/doc/*/copyright
		path-exclude /usr/share/man/*
		path-exclude /usr/share/groff/*
		path-exclude /usr/share/info/*
		path-exclude /usr/share/locale/*
		path-exclude /usr/share/lintian/*
		path-exclude /usr/share/linda/*
	EOF
	# The registry image's apt settings (docker-debian-artifacts): no
	# package caches (80 MB of /var/cache/apt/*.bin after an apt-get
	# update), no translations, the lists kept compressed, suggestions
	# not kept by autoremove.
	cat >"$root/etc/apt/apt.conf.d/docker-clean" <<-'EOF'
		DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
		APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
		Dir::Cache::pkgcache "";
		Dir::Cache::srcpkgcache "";
	EOF
	echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
	printf 'Acquire::GzipIndexes "true";\nAcquire::CompressionTypes::Order:: "gz";\n' \
		>"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
	echo 'Apt::AutoRemove::SuggestsImportant "false";' \
		>"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
	find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
	find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
	rm -rf "$root/usr/share/man" "$root/usr/share/groff" "$root/usr/share/info" \
		"$root/usr/share/locale" "$root/usr/share/lintian" "$root/usr/share/linda" \
		"$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
		"$root"/var/log/*.log "$root/var/log/apt" "$root"/tmp/* "$root"/var/tmp/*
	# The registry's image points apt at the mirror over HTTP the same way.
	echo "deb $MIRROR bookworm main" >"$root/etc/apt/sources.list"
	echo "deb $MIRROR bookworm-updates main" >>"$root/etc/apt/sources.list"
	echo "deb http://deb.debian.org/debian-security bookworm-security main" >>"$root/etc/apt/sources.list"
	chmod 755 "$root" # mktemp's 0700 would become the image's /
	tar -C "$root" --numeric-owner -c . | podman import -q \
		--change 'CMD ["bash"]' - "$BASE" >/dev/null
	rm -rf "$root"
	trap - EXIT INT TERM
	say "$BASE: made locally, $(podman image inspect -f '{{.Size}}' "$BASE") bytes"
}

# The images compose.scale.yaml runs besides starforge (--services).
service_image() { # NAME DOCKERFILE
	present_or_pulled "$1" && return 0
	say "$1: no registry answered; making it locally from Debian's packages ($2)"
	ensure_base
	t=$(date +%s)
	podman build -q --format docker --isolation "$ISOLATION" -f "$2" \
		--label "org.starforge.stand-in=$2" -t "$1" docker/local >/dev/null
	say "$1: made locally in $(($(date +%s) - t)) s, $(podman image inspect -f '{{.Size}}' "$1") bytes"
}
if [ "$SERVICES" -eq 1 ]; then
	service_image docker.io/library/postgres:15 docker/local/postgres.Dockerfile
	service_image docker.io/library/nginx:1.22 docker/local/nginx.Dockerfile
	exit 0
fi
ensure_base

# ---- the image ----
start=$(date +%s)
# --format docker: the OCI image format has no HEALTHCHECK (podman drops it).
podman build -q --format docker --isolation "$ISOLATION" -f Dockerfile -t "starforge:$VERSION" -t starforge:latest . >/dev/null
say "starforge:$VERSION (and :latest) built in $(($(date +%s) - start)) s," \
	"$(podman image inspect -f '{{.Size}}' "starforge:$VERSION") bytes"
