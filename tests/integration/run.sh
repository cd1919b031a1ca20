#!/bin/sh
# The integration tests, as `make test` runs them before the cmocka suite:
#
#   1. the pinned npm tools (package.json, package-lock.json): `npm ci` when
#      node_modules is missing or older than package-lock.json;
#   2. `redocly lint openapi.yaml` (recommended rules, see redocly.yaml),
#      then the same on the bundled document the binary serves;
#   3. every tests/integration/*.test.mjs with node's test runner, one file
#      at a time (each starts its own server, and the long jobs of one would
#      slow the others' timings on two cores), in two passes: first on
#      SQLite (a database file per server), then on PostgreSQL
#      (STARFORGE_TEST_DB=postgres: a schema per server in the database
#      STARFORGE_TEST_PG names, which tests/pg/cluster.sh sets; without it
#      the PostgreSQL pass is skipped, and says so). Tests that belong to one
#      pass (SQLite's file, lock and full-disk seam; the Dockerfile, the
#      browser and the README run once) are skipped in the other with their
#      reason. The exit status is non-zero when either pass fails.
#
# STARFORGE_BIN names the binary under test (the Makefile passes the one it
# built, the sanitizer build under SANITIZE); default build/starforge.
# STARFORGE_TEST_DB=sqlite or =postgres runs that pass only.
# Extra arguments go to `node --test` (e.g. --test-name-pattern=cancel).
set -eu
cd "$(dirname "$0")/../.."
STARFORGE_BIN=${STARFORGE_BIN:-build/starforge}
export STARFORGE_BIN

node -e '
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 18 || (major === 18 && minor < 19) || (major === 20 && minor < 10)) {
  console.error(`integration tests: Node.js ${process.versions.node} is too old (need 20.10, or 18.19 or later)`);
  process.exit(1);
}'

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
	echo "== npm ci"
	npm ci --no-audit --no-fund
	touch node_modules
fi

echo "== redocly lint openapi.yaml"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --no -- redocly lint openapi.yaml

# The document the binary serves: openapi.yaml with the schemas inlined
# (tools/openapi_bundle.c), built beside the binary. JobEvent is referenced
# only from an extension (x-event-data), which Redocly does not count as a
# use once the schema is inline.
BUNDLE=$(dirname "$STARFORGE_BIN")/gen/openapi.json
echo "== redocly lint $BUNDLE"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --no -- redocly lint "$BUNDLE" \
	--skip-rule no-unused-components

case "${STARFORGE_TEST_DB:-}" in
'') passes="sqlite postgres" ;;
sqlite | postgres) passes=$STARFORGE_TEST_DB ;;
*)
	echo "run.sh: STARFORGE_TEST_DB='$STARFORGE_TEST_DB' is not sqlite or postgres" >&2
	exit 2
	;;
esac

# One pass: run_pass NAME BACKEND [NODE-ARG...], the whole suite with
# STARFORGE_TEST_DB=BACKEND; adds "== NAME: passed|FAILED in N s" to $summary.
summary=""
failed=0
run_pass() {
	name=$1 backend=$2
	shift 2
	started=$(date +%s)
	echo
	echo "== integration tests on $name ($STARFORGE_BIN)"
	if STARFORGE_TEST_DB=$backend node --test --test-concurrency=1 --test-reporter=spec "$@" \
		tests/integration/*.test.mjs; then
		result=passed
	else
		result=FAILED
		failed=1
	fi
	summary="$summary== $name: $result in $(($(date +%s) - started)) s
"
}

for pass in $passes; do
	if [ "$pass" = sqlite ]; then
		run_pass SQLite sqlite "$@"
	elif [ -n "${STARFORGE_TEST_PG:-}" ]; then
		run_pass PostgreSQL postgres "$@"
	elif [ "${STARFORGE_TEST_DB:-}" = postgres ]; then
		echo "run.sh: STARFORGE_TEST_DB=postgres needs STARFORGE_TEST_PG (run under" \
			"sh tests/pg/cluster.sh, which starts a throwaway cluster and sets it)" >&2
		exit 2
	else
		echo
		echo "== integration tests on PostgreSQL: SKIPPED, STARFORGE_TEST_PG is not set" \
			"(make test sets it; by hand: sh tests/pg/cluster.sh sh tests/integration/run.sh)"
		summary="$summary== PostgreSQL: skipped (no STARFORGE_TEST_PG)
"
	fi
done
echo
printf '%s' "$summary"
exit "$failed"
