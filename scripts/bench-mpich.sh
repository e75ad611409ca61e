#!/usr/bin/env bash
# MPICH collector benchmark: attach -> snapshot on real Hydra mpiexec jobs
# of the -g MPICH (scripts/build-mpich.sh), a ring of blocking receives of
# 16 and 64 ranks, one look: the figures beside bench-collect.sh's Open
# MPI ones.  Prints "name: value unit" lines.
#
#   scripts/bench-mpich.sh BUILD_DIR [RANKS...]
#
# REPEAT=n attaches n times to each job and keeps the fastest run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 64)
mpich=${MD_MPICH_G:-/var/cache/mpi-deadlock/mpich-4.0.2-g}
if [ ! -e "$mpich/.mpi-deadlock-built" ]; then
	for n in "${sizes[@]}"; do
		echo "mpich_collect_${n}_ranks_total: skipped (no MPICH in $mpich: scripts/build-mpich.sh)"
	done
	exit 0
fi
bin=$build/mpi-deadlock
mkdir -p "$build/bench"
"$mpich/bin/mpicc" -g -O0 -o "$build/bench/ring-mpich" samples/ring.c

repeat=${REPEAT:-1}
out=$(mktemp)
err=$(mktemp)
best=$(mktemp)
job=
# Hydra: mpiexec -> hydra_pmi_proxy -> ranks.  End mpiexec (it ends its
# proxies and ranks), then kill by pid whatever of them is left.
end_job() {
	[ -n "$job" ] || return 0
	local left proxies
	proxies=$(pgrep -P "$job" || true)
	left=$proxies
	for p in $proxies; do left="$left $(pgrep -P "$p" || true)"; done
	kill -TERM "$job" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
	# shellcheck disable=SC2086
	kill -KILL "$job" $left 2>/dev/null || true
	wait "$job" 2>/dev/null || true
	job=
}
trap 'end_job; rm -f "$out" "$err" "$best"' EXIT

for n in "${sizes[@]}"; do
	: >"$out"
	"$mpich/bin/mpiexec" -np "$n" "$build/bench/ring-mpich" </dev/null >"$out" 2>&1 &
	job=$!
	for _ in $(seq 1200); do
		[ "$(grep -c '^MD-READY' "$out" || true)" -ge "$n" ] && break
		sleep 0.1
	done
	sleep 0.5
	min=
	for _ in $(seq "$repeat"); do
		t0=$(date +%s.%N)
		"$bin" --attach "$job" --looks 1 -v --format json >/dev/null 2>"$err" || true
		t1=$(date +%s.%N)
		dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$min" ] || awk -v a="$dt" -v b="$min" 'BEGIN { exit !(a < b) }'; then
			min=$dt
			cp "$err" "$best"
		fi
	done
	echo "mpich_collect_${n}_ranks_total: $min s"
	line=$(grep 'timing:' "$best" || true)
	if [ -z "$line" ]; then
		echo "mpich_collect_${n}_ranks: no timing line; stderr was:" >&2
		cat "$best" >&2
	else
		for phase in find attach setup queues stacks detach; do
			v=$(sed -n "s/.*[ :]$phase \([0-9.]*\) s.*/\1/p" <<<"$line")
			echo "mpich_collect_${n}_ranks_$phase: $v s"
		done
	fi
	end_job
done
