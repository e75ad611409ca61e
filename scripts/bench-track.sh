#!/usr/bin/env bash
# What libmdtrack.so costs in the job: track/benchtrack.c on 2 ranks with
# the library preloaded times the same loops through MPI_* (wrapped) and
# PMPI_* (not wrapped), interleaved round by round (the order alternates),
# in RUNS separate jobs.  Each job gives the median of its rounds' paired
# ratios (wall time and CPU time); this prints the median over the jobs,
# each job's figure, and the load average before and after (the machine
# may be shared: a figure taken at a load of 2 or more on 2 cores says
# little).  track/benchpost.c then times one wrapped call against a
# trivial PMPI_Isend in one process (CPU time, least of many rounds: it
# holds under load), and the message-rate overhead that cost alone gives
# at the measured plain rate (each rank makes one wrapped call per message
# counted).  "name: value unit" lines; the target is an overhead under 2%
# on both loops.
#
#   scripts/bench-track.sh BUILD_DIR [RUNS [ROUNDS MSG_ITERS ALLREDUCE_ITERS]]
#   (RUNS: 7 by default; single jobs spread about a point)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-7}
shift 2 || shift $# || true
lib=$build/lib/mpi-deadlock/libmdtrack.so
if ! command -v mpicc >/dev/null 2>&1 || [ ! -r "$lib" ]; then
	echo "bench-track: skipped: needs mpicc and $lib (make)" >&2
	exit 0
fi
case $runs in
'' | *[!0-9]* | 0)
	echo "bench-track: RUNS must be a number >= 1: $runs" >&2
	exit 64
	;;
esac
mkdir -p "$build/bench"
mpicc -O2 -o "$build/bench/benchtrack" track/benchtrack.c -ldl
abs=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
# Not linked with libmpi: its PMPI_Isend is that of a library of its own
# (libbenchmpi.so), reached through the PLT as libmpi's would be.
# shellcheck disable=SC2046
cc -O2 $(mpicc --showme:compile) -DBENCHPOST_MPI -fPIC -shared \
	-o "$build/bench/libbenchmpi.so" track/benchpost.c
# shellcheck disable=SC2046
cc -O2 $(mpicc --showme:compile) -o "$build/bench/benchpost" \
	track/benchpost.c -L"$(dirname "$abs")" -L"$build/bench" \
	-Wl,-rpath,"$(dirname "$abs")" -Wl,-rpath,"$(cd "$build/bench" && pwd)" \
	-Wl,--no-as-needed -lmdtrack -lbenchmpi
out=$(mktemp)
trap 'rm -f "$out"' EXIT

load() { cut -d' ' -f1 /proc/loadavg; }

echo "track_load_before: $(load) (1-min load average, $(nproc) cores)"
for i in $(seq "$runs"); do
	# The bench's own mpirun, a child of this script; it ends by itself.
	mpirun --allow-run-as-root --mca pml ob1 -np 2 \
		-x LD_PRELOAD="$abs" "$build/bench/benchtrack" "$@" |
		sed "s/^/run$i /" >>"$out"
done
echo "track_load_after: $(load) (1-min load average)"

# The median over the runs of one figure, and the runs' own values.
summary() {
	local name=$1 unit=$2
	awk -v n="$name" -v u="$unit" '
		$2 == n ":" { v[++k] = $3; all = all (all ? " " : "") $3 }
		END {
			if (!k) exit 1
			for (i = 1; i <= k; i++)
				for (j = i + 1; j <= k; j++)
					if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			m = k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
			printf "%s: " (u == "msgs/s" ? "%.0f" : u == "us" ? "%.3f" : "%.2f") " %s (median of %d runs: %s)\n", n, m, u, k, all
		}' "$out"
}
for f in msgrate_plain:msgs/s msgrate_tracked:msgs/s \
	msgrate_overhead:% msgrate_overhead_cpu:% msgrate_overhead_fastest:% \
	allreduce_plain:us allreduce_tracked:us allreduce_overhead:% \
	allreduce_overhead_cpu:% allreduce_overhead_fastest:%; do
	summary "track_${f%%:*}" "${f#*:}"
done

post=$("$build/bench/benchpost")
echo "$post"
# The message-rate loop posts with the same arguments every round.
added=$(echo "$post" | awk '$1 == "track_post_loop_added:" { print $2 }')
rate=$(awk '$2 == "track_msgrate_plain:" { print $3 }' "$out" | sort -n |
	awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
awk -v a="$added" -v r="$rate" 'BEGIN {
	printf "track_msgrate_overhead_from_post: %.2f %% (%s ns a call at %.0f msgs/s)\n", a * r / 1e7, a, r }'
