#!/bin/sh
# bench-merge.sh - the front end at scale (issue 10): 1,024 partial
# snapshots of 1,024 ranks each (1,048,576 ranks) arrive at once on
# pipes, are read in parallel, merged and analysed (tools/benchmerge.c).
# Target: under 3 s and under 1.5 GiB.  One "name: value unit" line per
# figure, and the load average the figures were taken at (the machine is
# shared: the _cpu lines are the work whatever the load).
#
#   scripts/bench-merge.sh [BUILD] [PARTS] [RANKS]
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PARTS=${2:-1024}
RANKS=${3:-1024}
make -s BUILD="$BUILD" "$BUILD/benchmerge" >&2
echo "merge_${PARTS}x${RANKS}_load: $(cut -d' ' -f1 /proc/loadavg)"
"$BUILD/benchmerge" --parts "$PARTS" --ranks "$RANKS"
