#!/bin/sh
# kill_loop.sh - the crash soak of docs/RELIABILITY.md ("Faults"): starts the
# real `starforge serve` on a loopback port with a temporary database, drives
# a mix of jobs at it, kills it with SIGKILL at a seeded random moment,
# restarts it on the same database, and repeats; then lets it finish and
# checks that every accepted job finished exactly once, that no level was
# lost or duplicated and that SQLite's integrity check passes. The work is
# in kill_loop.mjs (Node.js, no packages); this wrapper is what `make soak`
# runs (every tests/soak/*.sh).
#
#   KILLS=30          how many kills (the issue asks for at least 20)
#   KILL_SEED=N       the seed of every random choice (printed; default: the clock)
#   STARFORGE_BIN     the binary (default build/starforge)
#   KILL_KEEP=1       keep the logs and the database (always kept on an anomaly)
#
# Figures go to stdout and to build/soak/kill_loop.txt; the exit status is 0
# only when no anomaly was found.
set -eu
cd "$(dirname "$0")/../.."
exec node tests/soak/kill_loop.mjs "$@"
