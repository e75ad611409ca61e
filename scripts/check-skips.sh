#!/bin/sh
# check-skips.sh TAP [LOG] - after a Criterion run with --tap=TAP (make
# test, unit, e2e; scripts/run-tests.sh): list every test that skipped,
# with its reason, and end with one line that counts them.  Criterion
# counts a skipped test as passing, so without this a test that cannot
# run would hide.  With LOG (the run's output) the closing line is
# Criterion's own "Synthesis" line from LOG with the skips added, so the
# last line of a run shows its real counts; just before it, every failed
# test with its first messages (a CI page may keep only the end).  With
# MD_RERUN_NOTE set (run-tests.sh) the line ends with it.
#
# A skip is expected on this machine if its suite::test matches a shell
# pattern in $MD_EXPECTED_SKIPS (default tests/expected-skips: one
# pattern per line, then why; # comments).  With CI=true an unexpected
# skip fails (exit 1).  Tests left out by --filter are not skips.
set -eu
tap=$1
log=${2:-}
list=${MD_EXPECTED_SKIPS:-tests/expected-skips}
[ -r "$tap" ] || { echo "check-skips: $tap not found" >&2; exit 1; }
n=0 expected=0 unexpected=0
tab=$(printf '\t')
skips=$(sed -n 's/^ok - \([^ ]*\) *# SKIP \(.*\)$/\1\t\2/p' "$tap" |
	grep -v "${tab}test was skipped\$" || true)
while IFS="$tab" read -r name why; do
	[ -n "$name" ] || continue
	n=$((n + 1))
	ok=no
	if [ -r "$list" ]; then
		while read -r pat _; do
			case $pat in '' | '#'*) continue ;; esac
			# shellcheck disable=SC2254
			case $name in $pat) ok=yes ;; esac
		done <"$list"
	fi
	if [ $ok = yes ]; then
		expected=$((expected + 1))
		echo "[SKIP] $name: $why (expected here: $list)"
	else
		unexpected=$((unexpected + 1))
		echo "[SKIP] $name: $why (NOT expected here: fix the cause, or list it in $list)"
	fi
done <<EOT
$skips
EOT
# The failures again, each with its first messages, so that the end of
# a long run (all a CI page may keep) names what failed.
failed=$(awk '/^not ok /{ sub(/^not ok - /, ""); print "[FAIL] " $0; n = 5; next }
	n > 0 && /^[ \t#]/ { print "       " $0; n--; next } { n = 0 }' "$tap")
[ -z "$failed" ] || printf '%s\n' "$failed"
fail=no
if [ "$unexpected" -gt 0 ] && [ "${CI:-}" = true ]; then
	echo "check-skips: $unexpected unexpected skip(s) fail CI"
	fail=yes
fi
skipped="Skipped: $n (counted as passing) | expected here: $expected | unexpected: $unexpected"
# scripts/run-tests.sh: the failed end-to-end tests run a second time.
[ -z "${MD_RERUN_NOTE:-}" ] || skipped="$skipped | $MD_RERUN_NOTE"
# Criterion's line, without its colours; none if the run crashed.
synth=
[ -z "$log" ] || synth=$(sed 's/\x1b\[[0-9;]*m//g; s/[[:space:]]*$//' "$log" |
	grep -a '^\[====\] Synthesis: ' | tail -n 1 || true)
if [ -n "$synth" ]; then
	echo "$synth | $skipped"
else
	echo "[====] $skipped${log:+ (no Synthesis line in $log)}"
fi
[ $fail = no ]
