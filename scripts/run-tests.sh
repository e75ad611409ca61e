#!/usr/bin/env bash
# run-tests.sh BUILD [CRITERION-ARGS...] - one Criterion run of
# BUILD/md-tests (BUILD absolute) (make test, unit, e2e), one test at a time (end-to-end
# jobs busy-poll on the cores), then scripts/check-skips.sh: the skips,
# each with its reason, and as the closing line Criterion's own
# "Synthesis" counts with the skips added.  Exits non-zero if a test
# failed or (CI=true) a skip was not expected here.
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1
shift
MD_BIN=$build/mpi-deadlock MD_BUILD=$build \
	"$build/md-tests" --jobs 1 --tap="$build/tests.tap" "$@" 2>&1 |
	tee "$build/tests.log"
status=${PIPESTATUS[0]}
scripts/check-skips.sh "$build/tests.tap" "$build/tests.log" || status=1
exit "$status"
