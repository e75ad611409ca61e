#!/bin/sh
# bench-analyze.sh [BUILD] - time the analyzer on synthetic snapshots of
# 1,024, 65,536 and 1,048,576 ranks: one "name: value unit" line each.
# The peak RSS includes building the snapshot in memory.
set -e
BUILD=${1:-build}
make -s BUILD="$BUILD" "$BUILD/benchanalyze"
for n in 1024 65536 1048576; do
	for kind in ring wildcard collective bystanders; do
		"$BUILD/benchanalyze" "$kind" "$n"
	done
done
