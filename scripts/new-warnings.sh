#!/bin/bash
# The compiler warnings of a build log that a baseline build log has not, one a line.
#   new-warnings.sh LOG BASELINE-LOG
# Line and column numbers and the tree's own path are dropped first, so that the same
# warning in the patched and the unpatched tree compares equal even where the series moved
# the line. A missing baseline log (the baseline failed to build) counts as no warnings,
# so that every warning of LOG is new.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: new-warnings.sh LOG BASELINE-LOG" >&2; exit 2; }
[ -f "$1" ] || { echo "new-warnings.sh: no build log $1" >&2; exit 2; }
norm() {
	[ -f "$1" ] || return 0
	grep -E 'warning:' "$1" |
		sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/; s|/[^ :]*/linux-[^/ ]*/||; s|^(\.\./)+||' |
		sort -u || true
}
comm -23 <(norm "$1") <(norm "$2")
