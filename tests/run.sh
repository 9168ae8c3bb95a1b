#!/bin/bash
# The test suite behind "make test": runs each test of tests/suite.sh in order, keeps its
# output in results/test/<name>.log, prints one KTAP line per test and, last, the line
# "N passed, N failed[, N skipped]". A test passes on exit 0, is skipped on exit 4
# (kselftest's convention) and fails on anything else. Exit 1 if any test failed.
#   tests/run.sh [NAME-PATTERN]   (a grep -E pattern to run a slice)
# Each test runs in its own bash process with errexit and pipefail on, so every command of
# a test counts: a test called on the left of "||" in this shell would run with errexit
# ignored, down to the functions it calls (bash's rule), and only its last command would
# decide it. TEST_SUITE names another suite file (the runner's own self-test uses one).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=${TEST_RESULTS:-$ROOT/results/test}
SUITE=${TEST_SUITE:-$ROOT/tests/suite.sh}
filter=${1:-.}
mkdir -p "$OUTDIR"
# shellcheck source=tests/suite.sh
. "$SUITE"

mapfile -t all < <(declare -F | awk '{print $3}' | grep '^t_' | sed 's/^t_//')
# Keep the order of definition in suite.sh, not declare's alphabetical order.
mapfile -t order < <(grep -oE '^t_[a-z0-9_]+\(\)' "$SUITE" | sed 's/^t_//; s/()$//')
selected=()
for t in "${order[@]}"; do
	case " ${all[*]} " in *" $t "*) ;; *) continue ;; esac
	echo "$t" | grep -qE -- "$filter" && selected+=("$t")
done
[ ${#selected[@]} -gt 0 ] || { echo "run.sh: error: no test matches '$filter'" >&2; exit 2; }

# Work the suite declares can run beside the tests (background, BACKGROUND_FOR in
# suite.sh): started niced when a selected test needs it, so it fills the cores the kernel
# builds leave idle; the tests that need its result wait for it (they take its lock).
bg=""
if declare -F background >/dev/null && printf '%s\n' "${selected[@]}" | grep -qE -- "$BACKGROUND_FOR"; then
	( renice -n 10 -p "$BASHPID" >/dev/null; set -euo pipefail; background ) >"$OUTDIR/background.log" 2>&1 </dev/null &
	bg=$!
	echo "# started in the background: $BACKGROUND_WHAT (log: ${OUTDIR#"$ROOT"/}/background.log)" >&2
fi

pass=0 fail=0 skip=0 n=0
junit_cases=""
echo "KTAP version 1"
echo "1..${#selected[@]}"
for t in "${selected[@]}"; do
	n=$((n + 1))
	log=$OUTDIR/$t.log
	start=$SECONDS
	echo "# [$n/${#selected[@]}] $t ..." >&2
	rc=0
	ROOT=$ROOT bash -euo pipefail -c '. "$1"; "t_$2"' run-test "$SUITE" "$t" >"$log" 2>&1 </dev/null || rc=$?
	took=$((SECONDS - start))
	case $rc in
	0) pass=$((pass + 1)); echo "ok $n $t # ${took}s"; status="" ;;
	4) skip=$((skip + 1)); echo "ok $n $t # SKIP $(tail -1 "$log")"; status="<skipped/>" ;;
	*)
		fail=$((fail + 1))
		echo "not ok $n $t # exit $rc after ${took}s, log: ${log#"$ROOT"/}"
		{ grep -E '^not ok|error' "$log" || true; } | head -8 | sed 's/^/#   /'
		status="<failure message=\"exit $rc\"/>"
		;;
	esac
	junit_cases="$junit_cases<testcase classname=\"make-test\" name=\"$t\" time=\"$took\">$status</testcase>"
done
# What the background started and no test waited for is not left running.
[ -z "$bg" ] || wait "$bg" || echo "# background work failed; see ${OUTDIR#"$ROOT"/}/background.log" >&2
printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="make-test" tests="%d" failures="%d" skipped="%d">%s</testsuite>\n' \
	"$n" "$fail" "$skip" "$junit_cases" >"$OUTDIR/junit.xml"
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
