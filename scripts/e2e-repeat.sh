#!/bin/sh
# e2e-repeat.sh N - run `make e2e` N times in a row (default 20): one line
# per run with its time and result, then "N passed, M failed".  The logs
# of failed runs are kept in ${TMPDIR:-/tmp}/e2e-repeat.RUN.log.
# Extra make arguments come from $MAKEFLAGS_E2E (e.g. "TESTFLAGS=--filter=e2e_debian/*").
set -u

n=${1:-20}
case $n in
'' | *[!0-9]*) echo "usage: $0 N" >&2; exit 64 ;;
esac
cd "$(dirname "$0")/.." || exit 3
passed=0 failed=0
log=${TMPDIR:-/tmp}/e2e-repeat.$$.log
for run in $(seq 1 "$n"); do
	start=$(date +%s)
	# shellcheck disable=SC2086
	if make e2e ${MAKEFLAGS_E2E:-} >"$log" 2>&1; then
		passed=$((passed + 1))
		result=ok
	else
		failed=$((failed + 1))
		result="FAILED (log: ${TMPDIR:-/tmp}/e2e-repeat.$run.log)"
		cp "$log" "${TMPDIR:-/tmp}/e2e-repeat.$run.log"
	fi
	synth=$(grep -a 'Synthesis' "$log" | tail -1 | sed 's/.*Synthesis: //')
	echo "run $run: $(($(date +%s) - start)) s $result $synth"
done
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
