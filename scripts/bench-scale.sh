#!/bin/sh
# bench-scale.sh - what the analyzer costs at scale, in one process per
# snapshot: read a synthetic snapshot file (snap_read) and analyse it
# (anl_analyze).  One "name: value unit" line per figure:
#   scale_N_KIND_read, _analyse, _total      wall seconds
#   scale_N_KIND_read_cpu, _analyse_cpu      CPU seconds, all threads (the
#                                            machine may be shared: the
#                                            work, whatever the load)
#   scale_N_KIND_read_peak_rss, _peak_rss   MiB, the process after the
#                                            read and at the end
#   scale_N_KIND_file                        MiB of snapshot
# Ranks are lean (call, site, members, ops: what the analyzer uses, ~270
# bytes a rank); the scale_N_KIND_stacks_* lines are the same snapshot
# with the collector's 2-frame stack per rank (~530 bytes a rank).
#
#   scripts/bench-scale.sh [BUILD] [SIZES] [KINDS] [STACK_KINDS]
#   default: build "1024 65536 1048576" "ring wildcard collective
#   bystanders" "ring"
# Snapshots are cached in $BENCH_DIR (default /tmp/mpi-deadlock-bench);
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SIZES=${2:-1024 65536 1048576}
KINDS=${3:-ring wildcard collective bystanders}
STACK_KINDS=${4:-ring}
DIR=${BENCH_DIR:-/tmp/mpi-deadlock-bench}
make -s BUILD="$BUILD" "$BUILD/gensnap" >&2
mkdir -p "$DIR"

# measure NAME FILE GENSNAP_ARGS...
measure() {
	name=$1 f=$2
	shift 2
	[ -s "$f" ] || "$BUILD/gensnap" "$@" "$f"
	echo "${name}_file: $(( $(stat -c %s "$f") / 1048576 )) MiB"
	"$BUILD/gensnap" --read "$f" "$name"
}

for n in $SIZES; do
	for kind in $KINDS; do
		measure "scale_${n}_${kind}" "$DIR/$kind-$n.jsonl" "$kind" "$n"
	done
	for kind in $STACK_KINDS; do
		measure "scale_${n}_${kind}_stacks" "$DIR/$kind-$n-stacks.jsonl" \
			--stacks "$kind" "$n"
	done
done
