# Starforge image: `starforge serve` on Debian 12 slim, as an unprivileged
# user, its SQLite database on the /data volume. Operations (configuration,
# volume, health check, stopping, logs): docs/operations.md.
#
#   docker build -t starforge .
#   docker run -d --name starforge -p 127.0.0.1:8080:8080 -v starforge-data:/data starforge
#   docker compose -f docker/compose.yaml up -d
#
# Two stages on the same base. The build stage has the compiler and the -dev
# packages and runs `make`; the runtime stage has only the shared libraries the
# binary links against, the binary and the health check script.
# tests/integration/docker.test.mjs checks this file without a container
# engine: it builds the binary from exactly what the COPY lines below bring
# in, and compares the runtime packages with what `ldd` says it links against.
#
# The base is pinned by tag (Debian 12, bookworm; the tag follows its point
# releases and security updates). For byte-for-byte reproducible images pin
# the digest as well, on both FROM lines, e.g.
#   FROM debian:12-slim@sha256:<digest>   # docker buildx imagetools inspect debian:12-slim

# ---- build -----------------------------------------------------------------
FROM debian:12-slim AS build
ENV DEBIAN_FRONTEND=noninteractive
# The packages scripts/deps.sh installs for `make` (so that the `deps` step
# of `make` finds them all and does nothing), plus libc6-dev, which gcc only
# recommends and --no-install-recommends would leave out.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
	gcc libc6-dev make pkg-config \
	libmicrohttpd-dev libjansson-dev libuv1-dev libsqlite3-dev libcmocka-dev zlib1g-dev libyaml-dev \
	libpq-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what `make` reads to build build/starforge: the Makefile and the
# scripts and tools it runs (tools/openapi_bundle.c bundles openapi.yaml
# and schema/ into the served document), the C sources, and the files
# compiled into the binary
# (the Makefile's MIGRATIONS and ASSETS: migrations/, openapi.yaml, schema/
# and the dashboard in web/; see server/base/embedded.h). The Makefile globs
# those, so a folder missing here would build a binary without it: the test
# compares what the image embeds with what a local build does.
COPY Makefile openapi.yaml ./
COPY scripts/ scripts/
COPY tools/ tools/
COPY core/ core/
COPY server/ server/
COPY migrations/ migrations/
COPY schema/ schema/
COPY web/ web/
RUN make -j"$(nproc)"

# ---- runtime ---------------------------------------------------------------
FROM debian:12-slim
# The libraries build/starforge needs (ldd): jansson, SQLite, libuv,
# libmicrohttpd and libpq (the PostgreSQL back end of the store) by name; libc and libm (libc6), zlib (zlib1g, required in
# Debian), and GnuTLS and its own libraries (which libmicrohttpd12 depends
# on) are in the slim base already.
#
# The health check needs no package: it is a bash script (bash is Essential
# in Debian, so the slim base has it) that speaks HTTP over bash's /dev/tcp.
# curl would add libcurl and a dozen libraries to the image only for that,
# and a `starforge healthcheck` subcommand would be C code to maintain.
#
# The user has a fixed uid and gid (10001), so that a bind-mounted /data can
# be chowned to it on the host and so that USER is numeric (Kubernetes'
# runAsNonRoot can only verify a numeric user). /data belongs to it: a new
# named volume copies that ownership from the image.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	libjansson4 libsqlite3-0 libuv1 libmicrohttpd12 libpq5 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 starforge \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
	--shell /usr/sbin/nologin starforge \
 && mkdir -p /data \
 && chown 10001:10001 /data
COPY --from=build /src/build/starforge /usr/local/bin/starforge
COPY docker/healthcheck.sh /usr/local/bin/starforge-healthcheck
# Listen on every interface of the container (publish the port to choose who
# can reach it); the database on the volume. Every other setting keeps its
# default; set STARFORGE_WORKERS to the container's CPU limit, since the
# default (online CPUs) sees the host's CPUs. See docker/starforge.env.
ENV STARFORGE_DB=/data/starforge.db \
    STARFORGE_LISTEN=0.0.0.0:8080
VOLUME /data
EXPOSE 8080
# GET /healthz (liveness: 200 while the server answers); the script reads the
# port from STARFORGE_LISTEN. /readyz is not used here: it says 503 while the
# queue is full, which is load, not a reason to restart.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
	CMD ["/bin/bash", "/usr/local/bin/starforge-healthcheck"]
USER 10001:10001
WORKDIR /data
# Exec form, no shell and no init: starforge is PID 1 and receives `docker
# stop`'s SIGTERM itself. It installs handlers for SIGTERM and SIGINT (the
# kernel drops signals a PID 1 has no handler for), stops accepting, requeues
# running jobs at their next generation, waits for running evaluations and
# exits 0. It starts no child processes, so there are no zombies to reap.
# Arguments after the image name are options of `serve` (--workers 4, ...).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/starforge", "serve"]
