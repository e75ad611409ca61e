#!/bin/sh
# bench-snap.sh - snapshot read benchmark: one "name: value unit" line per
# figure.  Writes synthetic snapshots with build/gensnap (kinds ring,
# wildcard, ...) and reads each back with snap_read in a fresh process,
# then analyses it: the times (wall and CPU), that process's peak RSS
# (getrusage) and the load average after it.
#
#   scripts/bench-snap.sh [BUILD] [SIZES] [KINDS]
#   default: build "1024 65536 1048576" "ring"
# Snapshots are cached in $BENCH_DIR (default /tmp/mpi-deadlock-bench),
# about 530 bytes per rank (gensnap --stacks: 2-frame stacks, the
# "-stacks" files that bench-scale.sh shares).
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SIZES=${2:-1024 65536 1048576}
KINDS=${3:-ring}
DIR=${BENCH_DIR:-/tmp/mpi-deadlock-bench}
THREADS=$(nproc)
make -s BUILD="$BUILD" "$BUILD/gensnap" >&2
mkdir -p "$DIR"
for kind in $KINDS; do
	for n in $SIZES; do
		f="$DIR/$kind-$n-stacks.jsonl"
		[ -s "$f" ] || "$BUILD/gensnap" --stacks "$kind" "$n" "$f"
		size=$(( $(stat -c %s "$f") / 1048576 ))
		echo "snapshot_${n}_${kind}_file: $size MiB"
		# The read, the analysis after it (wall and CPU), their sum,
		# the peak RSS: the issue's target is read + analysis of
		# 1,048,576 ranks under 2 s and 1 GiB.  CPU time says what the
		# wall time means on a shared machine; the load is printed.
		# One thread, then (names ending _tN) the parallel reader with
		# a thread per processor: it is kept while it pays.
		for t in 1 $THREADS; do
			[ "$t" = 1 ] && sfx= || sfx=_t$t
			[ "$t" = 1 ] || [ "$THREADS" -gt 1 ] || continue
			"$BUILD/gensnap" --threads "$t" --read "$f" \
				"snapshot_${n}_${kind}$sfx" | grep -v '_verdict: '
			echo "snapshot_${n}_${kind}${sfx}_load: $(cut -d' ' -f1 /proc/loadavg)"
		done
	done
done
