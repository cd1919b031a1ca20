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
# local build/ out of the context.
COPY Makefile ./
COPY scripts/ scripts/
COPY core/ core/
COPY server/ server/
RUN make -j"$(nproc)"

FROM debian:12-slim
ENV DEBIAN_FRONTEND=noninteractive
# The runtime libraries of what the binary links today (ldd build/starforge:
# libjansson, plus libc and libm from the base image). The service issue adds
# libmicrohttpd12, libuv1 and libsqlite3-0 here when the binary starts linking
# them, together with EXPOSE and the database volume.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjansson4 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --user-group --no-create-home --home-dir /nonexistent \
	--shell /usr/sbin/nologin starforge
COPY --from=build /src/build/starforge /usr/local/bin/starforge
USER starforge
ENTRYPOINT ["starforge"]
CMD ["--help"]
