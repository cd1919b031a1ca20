#!/bin/sh
# The entry point of the local postgres:15 stand-in (postgres.Dockerfile):
# the part of the official image's docker-entrypoint.sh that
# docker/compose.scale.yaml relies on. As root it makes PGDATA the postgres
# user's and runs itself again as that user; as postgres it initialises an
# empty PGDATA (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB) and execs
# the server, which stays PID 1.
set -eu

# `docker run IMAGE -c x=y` and `command: ["postgres", ...]` both mean the
# server; anything else (bash, psql, pg_dump ...) is run as given.
case "${1:-postgres}" in
-*) set -- postgres "$@" ;;
esac
[ $# -gt 0 ] || set -- postgres
if [ "$1" != postgres ]; then
	exec "$@"
fi
# `postgres --version` and the like only print something: run as given.
for a in "$@"; do
	case $a in
	-'?' | --help | --describe-config | -V | --version) exec "$@" ;;
	esac
done

: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	chmod 700 "$PGDATA"
	# A bind mount or a volume made by another image may belong to someone
	# else; only the top is changed when it is already the postgres user's.
	if [ "$(stat -c %U "$PGDATA")" != postgres ]; then
		chown -R postgres:postgres "$PGDATA"
	fi
	chown postgres:postgres /var/run/postgresql
	exec setpriv --reuid=postgres --regid=postgres --init-groups /bin/sh "$0" "$@"
fi

say() { echo "postgres-entrypoint: $*" >&2; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	user=${POSTGRES_USER:-postgres}
	db=${POSTGRES_DB:-$user}
	auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
	case $auth in
	scram-sha-256 | md5 | trust) ;;
	*)
		say "POSTGRES_HOST_AUTH_METHOD=$auth: only scram-sha-256, md5 or trust here"
		exit 1
		;;
	esac
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
		say "the database is uninitialised and POSTGRES_PASSWORD is empty: set it" \
			"(or POSTGRES_HOST_AUTH_METHOD=trust, which lets anyone on the network in)"
		exit 1
	fi
	say "initialising $PGDATA: superuser $user, database $db, host connections $auth"
	pwfile=$(mktemp)
	printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
	# The password is stored as a SCRAM-SHA-256 verifier (15's default),
	# which md5 authentication accepts too.
	initdb --username="$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
		--auth-local=trust --auth-host="$auth" >/dev/null
	rm -f "$pwfile"
	printf '\n# docker/local/postgres-entrypoint.sh: TCP connections from anywhere\nhost all all all %s\n' \
		"$auth" >>"$PGDATA/pg_hba.conf"
	# A temporary server on the Unix socket only, as the official image
	# runs one: a health check over TCP does not take it for the real one.
	pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" \
		-w -s start
	if [ "$db" != postgres ]; then
		echo "CREATE DATABASE \"$db\";" |
			psql -v ON_ERROR_STOP=1 -q -X -h /var/run/postgresql -U "$user" -d postgres >/dev/null
	fi
	pg_ctl -D "$PGDATA" -m fast -w -s stop
	echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
	say "initialised; starting the server"
fi

exec "$@"
