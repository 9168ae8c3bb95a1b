#!/bin/bash
# Apply a patch series in order to a tree, in place: apply-series.sh SERIES_DIR TREE
# SERIES_DIR holds a "series" file naming the patches. Uses patch -p1 --fuzz=0, so a patch
# that would only apply with fuzz fails. On failure: one line naming the patch, the file
# and the hunk, and exit 1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -eq 2 ] || die "usage: apply-series.sh SERIES_DIR TREE"
dir=$1 tree=$2
[ -f "$dir/series" ] || die "no series file in $dir"
patches=$(grep -v '^#' "$dir/series" | grep -v '^[[:space:]]*$' || true)
[ -n "$patches" ] || die "$dir/series lists no patch"
for p in $patches; do
	[ -f "$dir/$p" ] || die "$dir/series names $p, which does not exist"
done
n=0
for p in $patches; do
	n=$((n + 1))
	if ! out=$(cd "$tree" && patch -p1 --fuzz=0 -N --no-backup-if-mismatch -r - <"$dir/$p" 2>&1); then
		# patch says "patching file X" then "Hunk #N FAILED at L." -> one line naming both.
		# awk stops at the first failure: fed by a here-string, not a pipe a writer could die on.
		where=$(awk '/^patching file/ {f = $3}
			/FAILED|malformed|Reversed|can.t find file|Only garbage/ {print f ": " $0; exit}' <<<"$out")
		die "${dir#"$ROOT"/}/$p does not apply: ${where:-$(echo "$out" | tail -1)}"
	fi
	info "applied $n: $p"
done
