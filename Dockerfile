# Starforge image: a build stage with the compiler and the -dev packages, and a
# slim runtime stage that holds only the binary and the shared libraries it links.
#
#   docker build -t starforge .
#   docker run --rm starforge evaluate HPHPPHHPHPPHPHHP
#
# See docker/README.md.

FROM debian:12-slim AS build
ENV DEBIAN_FRONTEND=noninteractive
# The package list mirrors scripts/deps.sh, so the `deps` step of `make` finds
# everything installed and does nothing. libc6-dev is named explicitly because
# --no-install-recommends keeps gcc from pulling it in on its own.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
	gcc libc6-dev make pkg-config \
	libmicrohttpd-dev libjansson-dev libuv1-dev libsqlite3-dev libcmocka-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what `make` needs to build build/starforge; .dockerignore keeps any
# local build/ out of the context. migrations/, openapi.yaml and schema/ are
# compiled into the binary (server/embedded.h).
COPY Makefile openapi.yaml ./
COPY scripts/ scripts/
COPY core/ core/
COPY server/ server/
COPY migrations/ migrations/
COPY schema/ schema/
RUN make -j"$(nproc)"

FROM debian:12-slim
ENV DEBIAN_FRONTEND=noninteractive
# The runtime libraries the binary links (ldd build/starforge): jansson,
# SQLite, libuv and libmicrohttpd; libc and libm come with the base image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjansson4 libsqlite3-0 libuv1 libmicrohttpd12 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --user-group --no-create-home --home-dir /nonexistent \
	--shell /usr/sbin/nologin starforge \
 && mkdir -p /data && chown starforge:starforge /data
COPY --from=build /src/build/starforge /usr/local/bin/starforge
USER starforge
VOLUME /data
EXPOSE 8080
ENV STARFORGE_LISTEN=0.0.0.0:8080 STARFORGE_DB=/data/starforge.db
ENTRYPOINT ["starforge"]
CMD ["serve"]
