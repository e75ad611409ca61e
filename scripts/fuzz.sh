#!/bin/sh
# fuzz.sh - fuzz the snapshot reader (make fuzz).
#
# Builds tests/fuzz/snapread_fuzz.c with the reader under ASan + UBSan and
# runs it for FUZZ_SECONDS (default 60) seconds, one process, from the
# seed corpus tests/fuzz/corpus/.  New inputs collect in build-fuzz/corpus
# (kept between runs); crashes land in build-fuzz/crashes/ - add each to
# tests/snapio_test.c as a regression test and to tests/fuzz/corpus/.
#
#   FUZZER=libfuzzer (default, clang -fsanitize=fuzzer) or FUZZER=afl
#   (afl-clang-fast + afl-fuzz).
set -eu
cd "$(dirname "$0")/.."
SECONDS_=${FUZZ_SECONDS:-60}
FUZZER=${FUZZER:-libfuzzer}
OUT=build-fuzz
SRC="tests/fuzz/snapread_fuzz.c snapshot/*.c common/*.c"
LIBS="$(pkg-config --libs yajl)"
FLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
mkdir -p $OUT/corpus $OUT/crashes

if [ "$FUZZER" = afl ]; then
	command -v afl-clang-fast >/dev/null || { echo "fuzz.sh: afl-clang-fast not found" >&2; exit 1; }
	# shellcheck disable=SC2086
	afl-clang-fast $FLAGS -o $OUT/snapread_afl $SRC $LIBS
	AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
	AFL_NO_UI=1 afl-fuzz -i tests/fuzz/corpus -o $OUT/afl -V "$SECONDS_" \
		-- $OUT/snapread_afl </dev/null >$OUT/fuzz.log 2>&1 || true
	tail -n 5 $OUT/fuzz.log
	n=$(find $OUT/afl -path '*crashes/id*' 2>/dev/null | wc -l)
else
	command -v clang >/dev/null || { echo "fuzz.sh: clang not found" >&2; exit 1; }
	# shellcheck disable=SC2086
	clang $FLAGS -o $OUT/snapread_fuzz $SRC $LIBS
	# The reader's one error line per input goes to the log, not the terminal.
	$OUT/snapread_fuzz -max_total_time="$SECONDS_" -rss_limit_mb=2048 \
		-max_len=65536 -timeout=10 -artifact_prefix=$OUT/crashes/ \
		$OUT/corpus tests/fuzz/corpus </dev/null >$OUT/fuzz.log 2>&1 || true
	grep -E '^#[0-9]+ *DONE|^Done|ERROR|SUMMARY' $OUT/fuzz.log | tail -n 5
	n=$(find $OUT/crashes -type f | wc -l)
fi
echo "fuzz: $n crash(es) in $OUT"
[ "$n" -eq 0 ]
