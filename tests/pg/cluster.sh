#!/bin/sh
# Runs a command under one throwaway PostgreSQL cluster, started for it and
# removed afterwards:
#
#   sh tests/pg/cluster.sh CMD [ARG...]
#
# initdb into a fresh temporary folder, start the server on a Unix socket
# in that folder only (no TCP), export STARFORGE_TEST_PG, a libpq URI of the
# `postgres` database as the `postgres` superuser over that socket, and
# PGHOST/PGPORT/PGUSER/PGDATABASE (so psql needs no arguments), run CMD,
# then stop the server (-m immediate: nothing in it is worth a checkpoint)
# and remove the folder whatever happened, and exit with CMD's status.
# `make test` runs the whole suite under one invocation: one cluster per
# run, and each test file makes its own schema in it (tests/test_store.c).
#
# By hand: `sh tests/pg/cluster.sh sh` is a shell with a cluster (psql
# works as is); the cluster goes when the shell exits. When
# STARFORGE_TEST_PG is set already (such a shell, or CI pointing at a
# server of its own), CMD runs against that database and nothing starts.
#
# The server is tuned for tests, not for keeping data: fsync,
# synchronous_commit and full_page_writes are off. The port only names the
# socket file (.s.PGSQL.PORT) inside the private folder, so a fixed number
# cannot clash with another cluster. initdb refuses to run as root: as root
# the folder belongs to the `postgres` user (Debian's postgresql package
# creates it) and initdb and pg_ctl run as that user through runuser.
# Start to stop takes 1.6-2.4 s on a busy 2-core machine: initdb 1.1-1.7 s
# (most of it), start 0.4 s, stop 0.15 s; once per `make test`.
set -eu

if [ $# -lt 1 ]; then
	echo "usage: cluster.sh CMD [ARG...]" >&2
	exit 2
fi
if [ -n "${STARFORGE_TEST_PG:-}" ]; then
	exec "$@"
fi

# Debian keeps initdb and pg_ctl off PATH, in the versioned server folder
# that pg_config (libpq-dev) names; failing that, the newest installed one.
bindir=""
if command -v pg_config >/dev/null 2>&1; then
	bindir=$(pg_config --bindir 2>/dev/null || true)
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
	bindir=""
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && bindir=$d
	done
fi
if [ -z "$bindir" ] && command -v initdb >/dev/null 2>&1; then
	bindir=$(dirname "$(command -v initdb)")
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/pg_ctl" ]; then
	echo "cluster.sh: no PostgreSQL server found (initdb, pg_ctl); install Debian's" \
		"postgresql package (sh scripts/deps.sh test)" >&2
	exit 2
fi

port=5432
dir=$(mktemp -d "${TMPDIR:-/tmp}/sf_pg.XXXXXX")
as_owner=""
if [ "$(id -u)" -eq 0 ]; then
	if ! id postgres >/dev/null 2>&1; then
		echo "cluster.sh: running as root needs the 'postgres' user (Debian's postgresql" \
			"package creates it)" >&2
		rm -rf "$dir"
		exit 2
	fi
	chown postgres: "$dir"
	as_owner="runuser -u postgres --"
fi

started=0
cleanup() {
	status=$?
	trap - EXIT INT TERM HUP
	if [ "$started" -eq 1 ]; then
		# shellcheck disable=SC2086
		(cd "$dir" && $as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop) \
			>/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Run from the folder: the postgres user may not be allowed into the caller's.
# shellcheck disable=SC2086
if ! (cd "$dir" && $as_owner "$bindir/initdb" -N -A trust -E UTF8 --locale=C.UTF-8 \
	-U postgres -D "$dir/data") >"$dir/initdb.log" 2>&1; then
	echo "cluster.sh: initdb failed:" >&2
	cat "$dir/initdb.log" >&2
	exit 2
fi
started=1
# $dir/ctl.sh start|stop: the server started with the settings
# above, or stopped the way PostgreSQL stops on a normal shutdown (fast:
# sessions ended with FATAL 57P01, a checkpoint, nothing committed lost).
# Exported as STARFORGE_TEST_PG_CTL for the test that restarts the
# database under load (cluster.test.mjs); absent when STARFORGE_TEST_PG
# names a server of the caller's.
cat >"$dir/ctl.sh" <<CTL
#!/bin/sh
set -eu
cd "$dir"
case "\$1" in
start) exec $as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s \\
	-o "-p $port -k $dir -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \\
	start ;;
stop) exec $as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -s stop ;;
*) echo "ctl.sh: start or stop" >&2; exit 2 ;;
esac
CTL
chmod 755 "$dir/ctl.sh"
if ! sh "$dir/ctl.sh" start >/dev/null 2>&1; then
	echo "cluster.sh: the server did not start:" >&2
	cat "$dir/server.log" >&2
	exit 2
fi

export STARFORGE_TEST_PG="postgresql://postgres@/postgres?host=$dir&port=$port"
export PGHOST="$dir" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
export STARFORGE_TEST_PG_CTL="$dir/ctl.sh"
echo "cluster.sh: PostgreSQL $("$bindir/pg_ctl" --version | sed 's/^[^0-9]*\([0-9.]*\).*/\1/') at $STARFORGE_TEST_PG" >&2
set +e
"$@"
