#!/bin/sh
# fuzz.sh - fuzz the snapshot reader and, on every input that reads, the
# analyzer and the report writers (make fuzz).
#
# Builds tests/fuzz/snapread_fuzz.c with the snapshot, analyzer and graph
# code under ASan + UBSan and runs FUZZ_RUNS inputs (default 10,000,000)
# from the seed corpus tests/fuzz/corpus/, split over FUZZ_JOBS fuzzer
# processes (default: one a processor) that share one corpus directory;
# FUZZ_SECONDS, if set, stops each earlier.  Each input is read as a
# snapshot, serially and in parallel, and drives a snapshot generator
# whose output is read, analysed and given to every report writer (one
# that does not read is made again with every value in range, which must
# read: so every input reaches the writers).  New inputs collect in
# build-fuzz/corpus (kept between runs); crashes land in
# build-fuzz/crashes/ (a run first moves earlier ones to
# build-fuzz/crashes.old/) - add each to tests/snapio_test.c as a
# regression test and to tests/fuzz/corpus/.
# Prints the executions, the reads, the generated snapshots, the report
# runs, the time and the crashes; exits 1 if there was a crash, or
# (without FUZZ_SECONDS) fewer executions or report runs than asked.
#
#   FUZZER=libfuzzer (default, clang -fsanitize=fuzzer) or FUZZER=afl
#   (afl-clang-fast + afl-fuzz).
set -eu
cd "$(dirname "$0")/.."
RUNS=${FUZZ_RUNS:-10000000}
JOBS=${FUZZ_JOBS:-$(nproc)}
SECONDS_=${FUZZ_SECONDS:-0}
# A unit that runs longer is a hang (wall time: raise it on a loaded
# machine, where a nice'd run waits for the processor).
TIMEOUT=${FUZZ_TIMEOUT:-60}
FUZZER=${FUZZER:-libfuzzer}
OUT=build-fuzz
SRC="tests/fuzz/snapread_fuzz.c snapshot/*.c common/*.c analyzer/*.c graph/*.c"
PKGS="yajl"
# shellcheck disable=SC2046
FLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       $(pkg-config --cflags $PKGS)"
LIBS="$(pkg-config --libs $PKGS) -lm"
mkdir -p $OUT/corpus $OUT/crashes $OUT/crashes.old
# A crash of an earlier run is fixed or still there to be found: it
# does not count against this one.
find $OUT/crashes -type f -exec mv -f {} $OUT/crashes.old/ \;
# A small quarantine reuses memory (fresh pages cost more than the parse)
# and short allocation stacks cost less to record; use-after-free is
# still caught.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=16:max_malloc_fill_size=0:malloc_context_size=4}"
rm -f $OUT/counts.* $OUT/fuzz.*.log

if [ "$FUZZER" = afl ]; then
	command -v afl-clang-fast >/dev/null || { echo "fuzz.sh: afl-clang-fast not found" >&2; exit 1; }
	export MD_FUZZ_COUNTS=$OUT/counts.afl
	# shellcheck disable=SC2086
	afl-clang-fast $FLAGS -o $OUT/snapread_afl $SRC $LIBS
	[ "$SECONDS_" -gt 0 ] || SECONDS_=3600
	AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
	AFL_NO_UI=1 afl-fuzz -i tests/fuzz/corpus -o $OUT/afl -V "$SECONDS_" \
		-- $OUT/snapread_afl </dev/null >$OUT/fuzz.log 2>&1 || true
	tail -n 5 $OUT/fuzz.log
	n=$(find $OUT/afl -path '*crashes/id*' 2>/dev/null | wc -l)
else
	command -v clang >/dev/null || { echo "fuzz.sh: clang not found (apt-get install clang)" >&2; exit 1; }
	# shellcheck disable=SC2086
	clang $FLAGS -o $OUT/snapread_fuzz $SRC $LIBS
	# The reader's one error line per input would flood the log:
	# -close_fd_mask=2 closes the target's stderr (libFuzzer and the
	# sanitizers keep their own copy of it).  -reload (the default)
	# makes each process take up the others' new inputs.
	per=$(( (RUNS + JOBS - 1) / JOBS ))
	pids=
	j=0
	while [ $j -lt "$JOBS" ]; do
		MD_FUZZ_COUNTS=$OUT/counts.$j $OUT/snapread_fuzz -runs="$per" \
			-max_total_time="$SECONDS_" -seed=$((j + $(date +%s))) \
			-rss_limit_mb=2048 -max_len=8192 -timeout="$TIMEOUT" \
			-close_fd_mask=2 -print_final_stats=1 \
			-artifact_prefix=$OUT/crashes/ \
			$OUT/corpus tests/fuzz/corpus </dev/null >$OUT/fuzz.$j.log 2>&1 &
		pids="$pids $!"
		j=$((j + 1))
	done
	# Each process is waited for by its pid; an interrupted script ends
	# them the same way.
	trap 'kill $pids 2>/dev/null' INT TERM
	for p in $pids; do wait "$p" || true; done
	trap - INT TERM
	cat $OUT/fuzz.*.log >$OUT/fuzz.log
	grep -hE '^Done|ERROR|SUMMARY|stat::number_of_executed_units|stat::peak_rss' $OUT/fuzz.*.log | tail -n 12
	# The sum of a count over the processes' files (empty if none has
	# it): total KEY FILE...
	total() {
		key=$1
		shift
		sed -n "s/^$key *//p" "$@" 2>/dev/null |
			awk 'NF { n += $1; seen = 1 } END { if (seen) print n }'
	}
	runs=$(total stat::number_of_executed_units: $OUT/fuzz.*.log)
	count() { total "$1" $OUT/counts.*; }
	reports=$(count reports)
	echo "fuzz: executions ${runs:-?} in $JOBS process(es);" \
		"snapshot reads of the inputs $(count reads)" \
		"(each as a stream and by the parallel reader);" \
		"generated snapshots $(count generated); report runs ${reports:-?}"
	# A fuzzer that did not start, or stopped early without a crash,
	# ran less than was asked: that is no pass.
	if [ -z "$runs" ] || { [ "$SECONDS_" -eq 0 ] && [ "$runs" -lt "$RUNS" ]; }; then
		echo "fuzz: ran ${runs:-no} executions of the $RUNS asked (see $OUT/fuzz.log)"
		short=1
	fi
	if [ -z "$reports" ] || { [ "$SECONDS_" -eq 0 ] && [ "$reports" -lt "$RUNS" ]; }; then
		echo "fuzz: ran ${reports:-no} report runs of the $RUNS asked (see $OUT/fuzz.log)"
		short=1
	fi
	# libFuzzer also keeps an input that took over 10 s there
	# (slow-unit-*): on a loaded machine that is the load, not a bug.
	slow=$(find $OUT/crashes -type f -name 'slow-unit-*' | wc -l)
	[ "$slow" -eq 0 ] || echo "fuzz: $slow input(s) slower than 10 s (slow-unit-*: not crashes)"
	n=$(find $OUT/crashes -type f ! -name 'slow-unit-*' | wc -l)
fi
echo "fuzz: $n crash(es) in $OUT"
[ "$n" -eq 0 ] && [ -z "${short:-}" ]
