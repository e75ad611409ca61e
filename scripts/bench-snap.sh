#!/bin/sh
# bench-snap.sh - snapshot read benchmark: one "name: value unit" line per
# figure.  Writes synthetic snapshots with build/gensnap (kinds ring,
# wildcard, ...) and reads each back with snap_read in a fresh process:
# the read time and that process's peak RSS (getrusage).
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
make -s BUILD="$BUILD" "$BUILD/gensnap" >&2
mkdir -p "$DIR"
for kind in $KINDS; do
	for n in $SIZES; do
		f="$DIR/$kind-$n-stacks.jsonl"
		[ -s "$f" ] || "$BUILD/gensnap" --stacks "$kind" "$n" "$f"
		out=$("$BUILD/gensnap" --read "$f")
		t=$(echo "$out" | sed -n "s/^snapshot_read: //p")
		rss=$(echo "$out" | sed -n "s/^snapshot_peak_rss: //p")
		size=$(( $(stat -c %s "$f") / 1048576 ))
		echo "snapshot_file_${n}_${kind}: $size MiB"
		echo "snapshot_read_${n}_${kind}: $t"
		echo "snapshot_read_${n}_${kind}_peak_rss: $rss"
	done
done
