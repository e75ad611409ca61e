#!/usr/bin/env bash
# What libmdtrack.so costs in the job: track/benchtrack.c on 2 ranks with
# the library preloaded times the same loops through MPI_* (wrapped) and
# PMPI_* (not wrapped), alternating in one run.  Prints "name: value
# unit" lines; the target is an overhead under 2% on both loops.
#
#   scripts/bench-track.sh BUILD_DIR [ROUNDS MSG_ITERS ALLREDUCE_ITERS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
lib=$build/lib/mpi-deadlock/libmdtrack.so
if ! command -v mpicc >/dev/null 2>&1 || [ ! -r "$lib" ]; then
	echo "bench-track: skipped: needs mpicc and $lib (make)" >&2
	exit 0
fi
mkdir -p "$build/bench"
mpicc -O2 -o "$build/bench/benchtrack" track/benchtrack.c -ldl
# The bench's own mpirun, as a child of this script: ended with it.
exec mpirun --allow-run-as-root --mca pml ob1 -np 2 \
	-x LD_PRELOAD="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")" \
	"$build/bench/benchtrack" "$@"
