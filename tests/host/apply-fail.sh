#!/bin/bash
# Negative control for scripts/apply-series.sh: on a tree where one hunk's context was
# changed, it must stop with exit 1 and a single error line naming the patch, the file and
# the hunk; and on the pristine files it must apply. Uses a copy of the few files touched.
#   apply-fail.sh TREE
set -euo pipefail
tree=${1:?usage: apply-fail.sh TREE}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -t files < <(sed -n 's|^--- a/||p; s|^rename from ||p' "$root"/patches/6.1/0*.patch | sort -u)
mkdir "$work/good" "$work/bad"
# A file missing from TREE must not stop the script: check 1 below reports it.
{ (cd "$tree" && tar -cf - "${files[@]}") || true; } | tar -xf - -C "$work/good"
cp -a "$work/good/." "$work/bad/"
# Break the context of the one hunk of 0009, the only patch touching SafeSetID.
sed -i 's/LSM_HOOK_INIT(task_fix_setuid, safesetid_task_fix_setuid),/LSM_HOOK_INIT(task_fix_setuid, changed),/' \
	"$work/bad/security/safesetid/lsm.c"
bad=0
check() { # check N DESCRIPTION CONDITION...
	local n=$1 what=$2
	shift 2
	if "$@"; then echo "ok $n $what"; else echo "not ok $n $what"; bad=$((bad + 1)); fi
}
echo "KTAP version 1"
echo "1..3"
check 1 "series applies to the pristine files" \
	"$root/scripts/apply-series.sh" "$root/patches/6.1" "$work/good" 2>/dev/null
rc=0
"$root/scripts/apply-series.sh" "$root/patches/6.1" "$work/bad" >/dev/null 2>"$work/err" || rc=$?
err=$(grep error "$work/err" || true)
echo "# $err"
names_hunk() {
	[ "$(echo "$err" | wc -l)" -eq 1 ] &&
		grep -q "0009-LSM-SafeSetID.*security/safesetid/lsm.c: Hunk #1 FAILED" <<<"$err"
}
check 2 "one error line names 0009, safesetid/lsm.c and the hunk" names_hunk
check 3 "exit status non-zero on failure" [ "$rc" -ne 0 ]
[ "$bad" -eq 0 ]
