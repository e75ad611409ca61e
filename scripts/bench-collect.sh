#!/usr/bin/env bash
# Collector benchmark: attach -> snapshot on real mpirun jobs (a ring of
# blocking receives) of 2, 8, 16, 32, 64, 128 and 256 ranks, one look,
# split into the collector's phases.  Prints "name: value unit" lines.
# collect_N_ranks_cpu is the collector's CPU time (user + system: the
# machine is shared and N ranks spin on it), and collect_per_rank_A_B
# (and _cpu) the cost of each rank added from A to B ranks (issue 10:
# target 256 ranks under 0.35 s, under 1 ms per added rank).  The
# largest job is also measured without the memo of source lines
# (collect_N_ranks_no_line_memo_*: a machine's first collection).
#
#   scripts/bench-collect.sh BUILD_DIR [RANKS...]
#
# REPEAT=n (default 5) attaches n times to each job (64/N times as often
# to a job of N < 64 ranks, whose collection takes a few hundredths of a
# second) and keeps the fastest run (the machine is shared: the minimum
# is the least disturbed).  A
# collection of a few ranks takes 0.05-0.1 s, and one run's noise (a few
# ms) divided by the few ranks added between two small sizes would swamp
# the cost per rank; collect_per_rank_fit (and _cpu) is the slope of a
# least-squares line through every size's figure, the cost per rank that
# no single pair of sizes decides.
#
# On the largest job, attach -> snapshot also runs alternately with
# ob1's queue walk on and off (MD_NO_OB1=1), at least 5 times each; the
# ratio of the fastest runs is snapshot_N_ranks_ob1_ratio (target < 1.2).  BASE=DIR also
# measures DIR/mpi-deadlock on the same jobs, as base_collect_* lines
# (before/after comparisons).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 8 16 32 64 128 256)
ob1_size=${OB1_SIZE:-64}
bin=$build/mpi-deadlock
mkdir -p "$build/bench"
mpicc -g -O0 -o "$build/bench/ring" samples/ring.c

repeat=${REPEAT:-5}
base=${BASE:-}
out=$(mktemp)
err=$(mktemp)
best=$(mktemp)
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
trap 'end_job; rm -f "$out" "$err" "$best"' EXIT

# measure NAME BIN: attach REPEAT times, print the fastest run's figures.
measure() {
	local name=$1 exe=$2 dt cpu mincpu= min= line phase v
	local TIMEFORMAT='%R %U %S'
	# A small job's collection is short, and the difference between two
	# small sizes is a few ranks' worth: more runs there (64/n times
	# REPEAT), for a fastest run that is not one lucky or unlucky run.
	local reps=$(( (repeat * 64 + n - 1) / n ))
	[ "$reps" -ge "$repeat" ] || reps=$repeat
	for _ in $(seq "$reps"); do
		read -r dt cpu < <({ time "$exe" --attach "$mpirun_pid" --looks 1 -v \
			--format json >/dev/null 2>"$err" || true; } 2>&1 |
			awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }')
		if [ -z "$min" ] || awk -v a="$dt" -v b="$min" 'BEGIN { exit !(a < b) }'; then
			min=$dt
			mincpu=$cpu
			cp "$err" "$best"
		fi
	done
	echo "${name}_total: $min s"
	echo "${name}_cpu: $mincpu s"
	last_total=$min
	last_cpu=$mincpu
	line=$(grep 'timing:' "$best" || true)
	if [ -z "$line" ]; then
		echo "${name}: no timing line; stderr was:" >&2
		cat "$best" >&2
		return 0
	fi
	for phase in find attach setup queues stacks detach; do
		v=$(sed -n "s/.*[ :]$phase \([0-9.]*\) s.*/\1/p" <<<"$line")
		echo "${name}_$phase: $v s"
	done
	v=$(sed -n "s/.*(ob1 \([0-9.]*\) s).*/\1/p" <<<"$line")
	[ -z "$v" ] || echo "${name}_ob1: $v s"
	last_queues=$(sed -n "s/.*[ :]queues \([0-9.]*\) s.*/\1/p" <<<"$line")
}

# One attach to snapshot with --looks 1; prints its wall time, then the
# collector's setup, queues (DLL and ob1) and ob1 phases (0 when off).
attach_once() {
	local t0 t1 snap=$build/bench/ob1cmp.jsonl line
	t0=$(date +%s.%N)
	"$bin" --attach "$mpirun_pid" --looks 1 -v --snapshot "$snap" \
		>/dev/null 2>"$err" || true
	t1=$(date +%s.%N)
	line=$(grep 'timing:' "$err" || true)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f ", b - a }'
	for phase in setup queues; do
		printf "%s " "$(sed -n "s/.*[ :]$phase \([0-9.]*\) s.*/\1/p" <<<"$line")"
	done
	v=$(sed -n "s/.*(ob1 \([0-9.]*\) s).*/\1/p" <<<"$line")
	echo "${v:-0}"
	rm -f "$snap"
}

# ob1's walk on against off on the same job, attaches alternating (the
# machine is shared: the fastest of each is the least disturbed).  Each
# side reports its fastest run with that run's phases.
compare_ob1() {
	local n=$1 k side t st q o
	local -A best
	k=$((repeat > 5 ? repeat : 5))
	for _ in $(seq "$k"); do
		for side in on off; do
			if [ "$side" = on ]; then
				read -r t st q o <<<"$(attach_once)"
			else
				read -r t st q o <<<"$(MD_NO_OB1=1 attach_once)"
			fi
			if [ -z "${best[$side]:-}" ] ||
			   awk -v a="$t" -v b="${best[$side]%% *}" 'BEGIN { exit !(a < b) }'; then
				best[$side]="$t $st $q $o"
			fi
		done
	done
	for side in on off; do
		read -r t st q o <<<"${best[$side]}"
		echo "snapshot_${n}_ranks_ob1_${side}: $t s"
		echo "snapshot_${n}_ranks_ob1_${side}_setup: $st s"
		echo "snapshot_${n}_ranks_ob1_${side}_queues: $q s"
		echo "snapshot_${n}_ranks_ob1_${side}_walk: $o s"
	done
	awk -v a="${best[on]%% *}" -v b="${best[off]%% *}" -v n="$n" 'BEGIN {
		printf "snapshot_%s_ranks_ob1_ratio: %.3f x (attach to snapshot, ob1 walk on/off, fastest of each; target < 1.2)\n", n, (b > 0 ? a / b : 0) }'
}

prev_n= prev_total= prev_cpu= fit=
for n in "${sizes[@]}"; do
	: >"$out"
	mpirun --allow-run-as-root --oversubscribe --mca pml ob1 \
		--mca mpi_yield_when_idle 1 -np "$n" "$build/bench/ring" \
		</dev/null >"$out" 2>&1 &
	mpirun_pid=$!
	for _ in $(seq 3000); do
		[ "$(grep -c '^MD-READY' "$out" || true)" -ge "$n" ] && break
		sleep 0.1
	done
	sleep 0.5
	measure "collect_${n}_ranks" "$bin"
	if [ -n "$prev_n" ]; then
		awk -v a="$prev_n" -v b="$n" -v ta="$prev_total" -v tb="$last_total" \
		    -v ca="$prev_cpu" -v cb="$last_cpu" 'BEGIN {
			printf "collect_per_rank_%d_%d: %.2f ms\n", a, b, 1000 * (tb - ta) / (b - a)
			printf "collect_per_rank_%d_%d_cpu: %.2f ms\n", a, b, 1000 * (cb - ca) / (b - a) }'
	fi
	prev_n=$n prev_total=$last_total prev_cpu=$last_cpu
	fit="$fit$n $last_total $last_cpu
"
	echo "collect_${n}_ranks_load: $(cut -d' ' -f1 /proc/loadavg)"
	[ "$n" != "$ob1_size" ] || compare_ob1 "$n"
	# The first collection on a machine (or after a new libc or MPI)
	# has no memo of source lines yet (~/.cache/mpi-deadlock/lines):
	# it reads the big debug files (libc6-dbg) itself.
	[ "$n" != "${sizes[-1]}" ] ||
		MD_NO_LINE_MEMO=1 measure "collect_${n}_ranks_no_line_memo" "$bin"
	[ -z "$base" ] || measure "base_collect_${n}_ranks" "$base/mpi-deadlock"
	end_job
done

# The least-squares slope of seconds against ranks over every size.
[ ${#sizes[@]} -lt 3 ] || awk '
	NF == 3 { k++; x += $1; y += $2; c += $3; xx += $1 * $1
		  xy += $1 * $2; xc += $1 * $3 }
	END {
		d = k * xx - x * x
		printf "collect_per_rank_fit: %.2f ms (least squares over %d sizes)\n", 1000 * (k * xy - x * y) / d, k
		printf "collect_per_rank_fit_cpu: %.2f ms\n", 1000 * (k * xc - x * c) / d
	}' <<<"$fit"
