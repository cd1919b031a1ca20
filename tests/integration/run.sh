#!/bin/sh
# The integration tests, as `make test` runs them before the cmocka suite:
#
#   1. the pinned npm tools (package.json, package-lock.json): `npm ci` when
#      node_modules is missing or older than package-lock.json;
#   2. `redocly lint openapi.yaml` (recommended rules, see redocly.yaml),
#      then the same on the bundled document the binary serves;
#   3. every tests/integration/*.test.mjs with node's test runner, one file
#      at a time (each starts its own server, and the long jobs of one would
#      slow the others' timings on two cores).
#
# STARFORGE_BIN names the binary under test (the Makefile passes the one it
# built, the sanitizer build under SANITIZE); default build/starforge.
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

echo "== integration tests ($STARFORGE_BIN)"
exec node --test --test-concurrency=1 --test-reporter=spec "$@" tests/integration/*.test.mjs
