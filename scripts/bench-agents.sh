#!/usr/bin/env bash
# Many-host benchmark (issue 10): attach -> report on ring jobs spread over
# the hosts of a test cluster (scripts/cluster.sh, instance mdbench), 3
# hosts x 16 ranks and 4 hosts x 32 ranks, with each launcher, --looks 1,
# split into the front end's phases: agent start (launch until every agent
# is ready), collection (the look on every host), transfer (until every
# snapshot is in), merge.  Prints "name: value unit" lines; target: 4 x 32
# in under 1.0 s.
#
#   scripts/bench-agents.sh BUILD_DIR
#
# Needs root (namespaces); without it, or without sshd, says why and exits 0.
# REPEAT=n attaches n times per job and launcher and keeps the fastest.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$(readlink -f "$build/mpi-deadlock")
if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ]; then
	echo "bench-agents: skipped: needs root and openssh-server (scripts/cluster.sh)"
	exit 0
fi
repeat=${REPEAT:-1}
export MD_CLUSTER=${MD_BENCH_CLUSTER:-mdbench}
mkdir -p "$build/bench"
mpicc -g -O0 -o "$build/bench/ring" samples/ring.c
out=$(mktemp)
err=$(mktemp)
hf=$(mktemp)
mpirun_pid=
end_job() {
	[ -n "$mpirun_pid" ] || return 0
	kill -TERM "$mpirun_pid" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL -- "-$mpirun_pid" 2>/dev/null || true
	wait "$mpirun_pid" 2>/dev/null || true
	mpirun_pid=
}
cleanup() {
	end_job
	scripts/cluster.sh down >/dev/null 2>&1 || true
	rm -f "$out" "$err" "$hf"
}
trap cleanup EXIT
hostfile=$(scripts/cluster.sh up 4 | tail -n 1)
eval "$(scripts/cluster.sh env)"

for cfg in "3 16" "4 32"; do
	set -- $cfg
	hosts=$1 n=$(( $1 * $2 )) name=agents_$1x$2
	head -n "$hosts" "$hostfile" > "$hf"
	# mpirun sometimes fails to start its daemons on the hosts ("ORTE was
	# unable to reliably start one or more daemons": the 4 x 32 job, in 1
	# of 3 bench runs on 2026-11-25 and twice the session before; none of
	# 6 started by hand; not understood): a second try before giving up.
	for try in 1 2; do
		setsid mpirun --allow-run-as-root --oversubscribe --hostfile "$hf" \
			--map-by node --mca pml ob1 -np "$n" "$build/bench/ring" \
			>"$out" 2>&1 </dev/null &
		mpirun_pid=$!
		for _ in $(seq 600); do
			[ "$(grep -c '^MD-READY' "$out" || true)" -ge "$n" ] && break
			kill -0 "$mpirun_pid" 2>/dev/null || break
			sleep 0.1
		done
		ready=$(grep -c '^MD-READY' "$out" || true)
		[ "$ready" -lt "$n" ] && [ "$try" = 1 ] || break
		echo "${name}: the job did not start ($ready of $n ranks ready), trying again: $(grep -m1 -v '^MD-READY\|^ *-*$' "$out" || true)" >&2
		end_job
	done
	if [ "$ready" -lt "$n" ]; then
		# No figure from a job that did not start: say why instead.
		echo "${name}: skipped: the job did not start ($ready of $n ranks ready); mpirun said:"
		grep -v '^MD-READY' "$out" | head -n 5 | sed 's/^/  /'
		end_job
		continue
	fi
	sleep 0.5
	for launcher in ssh mpirun; do
		best= line= failed=0
		for _ in $(seq "$repeat"); do
			t0=$(date +%s.%N)
			rc=0
			"$bin" --attach "$mpirun_pid" --looks 1 --launcher "$launcher" \
				-v --format json >/dev/null 2>"$err" || rc=$?
			t1=$(date +%s.%N)
			# Exit 1 is the deadlock found (the ring); anything else is a
			# failed collection, never a figure.
			if [ "$rc" -ne 1 ] || ! grep -q 'agents on' "$err"; then
				failed=$((failed + 1))
				echo "${name}_${launcher}: a run failed (exit $rc): $(grep -m1 -i 'error\|not collected' "$err" || tail -n 1 "$err")" >&2
				continue
			fi
			dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
			if [ -z "$best" ] || awk -v a="$dt" -v b="$best" 'BEGIN { exit !(a < b) }'; then
				best=$dt
				line=$(grep 'agents on' "$err" || true)
			fi
		done
		[ "$failed" -eq 0 ] || echo "${name}_${launcher}_failed_runs: $failed of $repeat"
		[ -n "$best" ] || continue
		echo "${name}_${launcher}_total: $best s"
		echo "${name}_${launcher}_load: $(cut -d' ' -f1 /proc/loadavg)"
		# "agents on 3 hosts: start 0.4 s, collection 0.2 s, transfer ..."
		for phase in start collection transfer merge; do
			v=$(sed -n "s/.* $phase \([0-9.]*\) s.*/\1/p" <<<"$line")
			echo "${name}_${launcher}_${phase}: ${v:-?} s"
		done
	done
	end_job
done
