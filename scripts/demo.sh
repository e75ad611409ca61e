#!/usr/bin/env bash
# The main job on a built-in example: build mpi-deadlock and a deadlocking
# sample (a ring of blocking receives), start it under mpirun, attach,
# print the report, then end the job.  Installs what is missing first.
#
#   scripts/demo.sh [RANKS]     (default 4)
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-4}

MD_SKIP_OMPI_G=1 scripts/setup.sh
make -s -j"$(nproc)" build/mpi-deadlock
mkdir -p build/demo
mpicc -g -O0 -o build/demo/ring samples/ring.c

out=$(mktemp)
mpirun_pid=
cleanup() {
	[ -n "$mpirun_pid" ] || return 0
	ranks_left=$(pgrep -P "$mpirun_pid" || true)
	kill -TERM "$mpirun_pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$mpirun_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$mpirun_pid" $ranks_left 2>/dev/null || true
	wait "$mpirun_pid" 2>/dev/null || true
	rm -f "$out"
}
trap cleanup EXIT

echo "demo: starting a ring of $ranks ranks that deadlocks (samples/ring.c)" >&2
mpirun --allow-run-as-root --oversubscribe --mca pml ob1 -np "$ranks" \
	build/demo/ring </dev/null >"$out" 2>&1 &
mpirun_pid=$!
for _ in $(seq 300); do
	[ "$(grep -c '^MD-READY' "$out" || true)" -ge "$ranks" ] && break
	kill -0 "$mpirun_pid" 2>/dev/null || { cat "$out" >&2; exit 3; }
	sleep 0.1
done
sleep 0.5
echo "demo: mpi-deadlock --attach $mpirun_pid" >&2
rc=0
build/mpi-deadlock --attach "$mpirun_pid" || rc=$?
echo "demo: mpi-deadlock exited with $rc (1 = deadlock found); ending the job" >&2
exit 0
