#!/usr/bin/env bash
# Collector benchmark: attach -> snapshot on real mpirun jobs (a ring of
# blocking receives) of 2, 8, 16, 32 and 64 ranks, one look, split into
# the collector's phases.  Prints "name: value unit" lines.
#
#   scripts/bench-collect.sh BUILD_DIR [RANKS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 8 16 32 64)
bin=$build/mpi-deadlock
mkdir -p "$build/bench"
mpicc -g -O0 -o "$build/bench/ring" samples/ring.c

out=$(mktemp)
err=$(mktemp)
mpirun_pid=
end_job() {
	[ -n "$mpirun_pid" ] || return 0
	local left
	left=$(pgrep -P "$mpirun_pid" || true)
	kill -TERM "$mpirun_pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$mpirun_pid" $left 2>/dev/null || true
	wait "$mpirun_pid" 2>/dev/null || true
	mpirun_pid=
}
trap 'end_job; rm -f "$out" "$err"' EXIT

for n in "${sizes[@]}"; do
	: >"$out"
	mpirun --allow-run-as-root --oversubscribe --mca pml ob1 \
		--mca mpi_yield_when_idle 1 -np "$n" "$build/bench/ring" \
		</dev/null >"$out" 2>&1 &
	mpirun_pid=$!
	for _ in $(seq 1200); do
		[ "$(grep -c '^MD-READY' "$out" || true)" -ge "$n" ] && break
		sleep 0.1
	done
	sleep 0.5
	t0=$(date +%s.%N)
	"$bin" --attach "$mpirun_pid" --looks 1 -v --format json >/dev/null 2>"$err" || true
	t1=$(date +%s.%N)
	end_job
	awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "collect_%d_ranks_total: %.3f s\n", n, b - a }'
	line=$(grep 'timing:' "$err" || true)
	if [ -z "$line" ]; then
		echo "collect_${n}_ranks: no timing line; stderr was:" >&2
		cat "$err" >&2
		continue
	fi
	for phase in find attach setup queues stacks detach; do
		v=$(sed -n "s/.*[ :]$phase \([0-9.]*\) s.*/\1/p" <<<"$line")
		echo "collect_${n}_ranks_$phase: $v s"
	done
done
