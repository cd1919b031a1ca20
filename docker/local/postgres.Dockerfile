# A stand-in for the registry's postgres:15, made from Debian 12's
# postgresql-15 where no registry answers (scripts/image.sh --services;
# docs/operations.md, "With podman, and where no registry answers"). Tagged
# docker.io/library/postgres:15, it does what docker/compose.scale.yaml asks
# of the official image, and no more:
#   - an empty /var/lib/postgresql/data (PGDATA, a volume) is initialised on
#     the first start as the postgres user: the superuser POSTGRES_USER with
#     the password POSTGRES_PASSWORD, the database POSTGRES_DB (default: the
#     user's name), UTF-8 (C.UTF-8), trust on the Unix socket inside the
#     container, scram-sha-256 for TCP connections from anywhere,
#     listen_addresses='*';
#   - then `postgres ARGS` as the postgres user, as PID 1 (a first argument
#     "postgres" or one starting with "-" is taken as the official entry
#     point takes it: command: ["postgres", "-c", "max_connections=200"]);
#   - pg_isready, psql, pg_dump and pg_restore on PATH; SIGINT (a fast
#     shutdown) stops it, as in the official image.
# Not supported: /docker-entrypoint-initdb.d, POSTGRES_INITDB_ARGS,
# POSTGRES_HOST_AUTH_METHOD other than scram-sha-256, md5 or trust, *_FILE
# variables, other locales than C.UTF-8 (the base has no locales).
FROM debian:12-slim
# Debian's postgresql-common makes a cluster "main" in /var/lib/postgresql/15
# when the server is installed; the image keeps its data in PGDATA instead
# (as the official image does: create_main_cluster = false). policy-rc.d
# keeps the packages' scripts from starting services during the build.
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d \
 && chmod 755 /usr/sbin/policy-rc.d \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-common \
 && sed -ri 's/^#?\s*create_main_cluster\s*=.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql \
 && chmod 700 /var/lib/postgresql/data \
 && chmod 3777 /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data \
    LANG=C.UTF-8
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/bin/sh", "/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
