#!/usr/bin/env bash
# make bench: every benchmark, one "name: value unit" line per figure.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
for b in scripts/bench-collect.sh scripts/bench-mpich.sh scripts/bench-snap.sh scripts/bench-analyze.sh scripts/bench-scale.sh scripts/bench-track.sh scripts/bench-merge.sh scripts/bench-agents.sh; do
	[ -x "$b" ] && "$b" "$build"
done
