#!/usr/bin/env bash
# Accuracy benchmark: every sample of samples/manifest, N times on each
# Open MPI setup (Debian's, and the -g build once it is there), attached
# the way a user would (mpi-deadlock --attach MPIRUN_PID).  Prints, per
# setup, "name: value unit" lines:
#   accuracy_<setup>_precision  runs called deadlock that are deadlocks
#   accuracy_<setup>_recall     deadlock runs called deadlock
#   accuracy_<setup>_lines      stuck ranks whose reported call and
#                               file:line are the manifest's
#   accuracy_<setup>_verdicts   runs whose verdict is the manifest's
# and one line per run that was wrong (on stderr).
#
#   scripts/bench-accuracy.sh BUILD_DIR      N=3 runs per sample and setup
#   SAMPLES="ring_4 rootmismatch" ...            only these manifest entries
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${N:-3}
bin=$build/mpi-deadlock
ompig=${MD_OMPI_G:-/var/cache/mpi-deadlock/openmpi-4.1.4-g}
command -v jq >/dev/null || { echo "bench-accuracy: jq missing (apt-get install jq)" >&2; exit 3; }
[ -x "$bin" ] || { echo "bench-accuracy: $bin missing (make)" >&2; exit 3; }
scripts/build-samples.sh "$build" >/dev/null

tmp=$(mktemp -d)
job=
end_job() {
	[ -n "$job" ] || return 0
	kill -TERM -- "-$job" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
	kill -KILL -- "-$job" 2>/dev/null || true
	wait "$job" 2>/dev/null || true
	job=
}
trap 'end_job; rm -rf "$tmp"' EXIT

# The manifest as one line per sample: name np verdict markers, and one
# line per stuck rank: "stuck name rank call file line".
awk '
function ranks(spec, out,   n, parts, i, a, b, r, k) {
	n = split(spec, parts, ","); k = 0
	for (i = 1; i <= n; i++) {
		if (split(parts[i], ab, "-") == 2) { a = ab[1]; b = ab[2] }
		else { a = parts[i]; b = parts[i] }
		for (r = a; r <= b; r++) out[++k] = r
	}
	return k
}
/^sample / { name = $2; bin[name] = substr($3, 1, length($3) - 2)
	     printf "sample %s %s %s %s\n", name, bin[name], $4, $5 }
/^markers / { printf "markers %s %s\n", name, $2 }
/^stuck / { n = ranks($2, rs); split($4, fl, ":")
	    for (i = 1; i <= n; i++) printf "stuck %s %d %s %s %s\n", name, rs[i], $3, fl[1], fl[2] }
' samples/manifest > "$tmp/manifest"

wanted() {
	[ -z "${SAMPLES:-}" ] && return 0
	case " $SAMPLES " in *" $1 "*) return 0 ;; esac
	return 1
}

# run_one SETUP MPIRUN NAME BIN NP VERDICT MARKERS: prints "tp|fp|fn|tn
# lines_ok lines_all".
run_one() {
	local setup=$1 mpirun=$2 name=$3 binname=$4 np=$5 verdict=$6 markers=$7
	local out=$tmp/out err=$tmp/err rep=$tmp/rep got ok all
	setsid "$mpirun" --allow-run-as-root --oversubscribe --mca pml ob1 \
		-np "$np" "$build/samples/$setup/$binname" >"$out" 2>"$err" </dev/null &
	job=$!
	for _ in $(seq 600); do
		[ "$(grep -c '^MD-' "$out" || true)" -ge "$markers" ] && break
		kill -0 "$job" 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.3
	"$bin" --attach "$job" --format json >"$rep" 2>"$tmp/tool.err" || true
	got=$(jq -r '.verdict // "error"' "$rep" 2>/dev/null || echo error)
	if [ "$verdict" = no-deadlock ]; then
		for _ in $(seq 1200); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
	fi
	end_job
	if [ "$verdict" = deadlock ] && [ "$got" = deadlock ]; then
		# several stuck lines for one rank are alternatives (one per
		# thread): a rank counts once, right if one matches
		ok=$(recount "$name" "$rep")
		all=$(grep "^stuck $name " "$tmp/manifest" | awk '{ print $3 }' | sort -u | wc -l)
		echo "tp $ok $all"
	elif [ "$verdict" = deadlock ]; then
		echo "fn 0 0"
		echo "$setup $name: verdict $got, want deadlock" >&2
	elif [ "$got" = deadlock ]; then
		echo "fp 0 0"
		echo "$setup $name: verdict deadlock, want no deadlock" >&2
	else
		[ "$got" = "no deadlock" ] || echo "$setup $name: verdict $got, want no deadlock" >&2
		echo "tn 0 0 $got"
	fi
}

# recount NAME REPORT: stuck ranks with one matching alternative.
recount() {
	local name=$1 rep=$2 n=0 rank
	for rank in $(grep "^stuck $name " "$tmp/manifest" | awk '{ print $3 }' | sort -un); do
		if grep "^stuck $name $rank " "$tmp/manifest" |
		   while read -r _ _ _ call file line; do
			jq -e --argjson r "$rank" --arg c "$call" --arg f "$file" \
				--argjson l "$line" '.ranks[] | select(.rank == $r) |
				select(.call == $c and .line == $l and
				       ((.file // "") | (endswith("/" + $f) or . == $f)))' \
				"$rep" >/dev/null 2>&1 && { echo yes; break; }
		   done | grep -q yes; then
			n=$((n + 1))
		else
			echo "  rank $rank of $name: report says $(jq -c --argjson r "$rank" '.ranks[] | select(.rank == $r) | [.call, .file, .line]' "$rep")" >&2
		fi
	done
	echo "$n"
}

bench_setup() {
	local setup=$1 mpirun=$2 tp=0 fp=0 fn=0 tn=0 lok=0 lall=0 right=0 total=0
	local kind a b
	while read -r _ name binname np verdict; do
		wanted "$name" || continue
		markers=$(awk -v n="$name" '$1 == "markers" && $2 == n { print $3 }' "$tmp/manifest")
		for _ in $(seq "$runs"); do
			read -r kind a b _ < <(run_one "$setup" "$mpirun" "$name" "$binname" "$np" "$verdict" "$markers")
			total=$((total + 1))
			case $kind in
			tp) tp=$((tp + 1)); right=$((right + 1)); lok=$((lok + a)); lall=$((lall + b)) ;;
			fp) fp=$((fp + 1)) ;;
			fn) fn=$((fn + 1)) ;;
			tn) tn=$((tn + 1)); right=$((right + 1)) ;;
			esac
		done
	done < <(grep '^sample ' "$tmp/manifest")
	awk -v s="$setup" -v tp=$tp -v fp=$fp -v fn=$fn -v lok=$lok -v lall=$lall \
	    -v right=$right -v total=$total 'BEGIN {
		printf "accuracy_%s_precision: %.3f (%d of %d deadlock verdicts)\n", s, tp + fp ? tp / (tp + fp) : 1, tp, tp + fp
		printf "accuracy_%s_recall: %.3f (%d of %d deadlock runs)\n", s, tp + fn ? tp / (tp + fn) : 1, tp, tp + fn
		printf "accuracy_%s_lines: %.3f (%d of %d stuck ranks)\n", s, lall ? lok / lall : 1, lok, lall
		printf "accuracy_%s_verdicts: %.3f (%d of %d runs)\n", s, total ? right / total : 1, right, total
	}'
}

bench_setup debian "$(command -v mpirun)"
if [ -e "$ompig/.mpi-deadlock-built" ]; then
	bench_setup ompi-g "$ompig/bin/mpirun"
else
	echo "bench-accuracy: $ompig not built (scripts/build-openmpi.sh): ompi-g skipped" >&2
fi
