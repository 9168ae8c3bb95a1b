#!/bin/bash
# Run the 6.1 tree's scripts/checkpatch.pl on every patch of the series. Findings listed
# in patches/6.1/checkpatch-accepted (with the reason there) are reported but pass; any
# other finding fails. Prints KTAP, one test per patch.
#   checkpatch.sh TREE [PATCH-DIR]   (default: patches/6.1; another dir for the negative control)
set -euo pipefail
tree=${1:?usage: checkpatch.sh TREE}
dir=$(cd "${2:-$(dirname "$0")/../../patches/6.1}" && pwd)
[ -x "$tree/scripts/checkpatch.pl" ] || { echo "checkpatch.sh: no scripts/checkpatch.pl in $tree" >&2; exit 2; }
accepted=$(grep -v '^#' "$dir/checkpatch-accepted" | grep -v '^[[:space:]]*$' || true)
patches=$(grep -v '^#' "$dir/series" | grep -v '^[[:space:]]*$')
echo "KTAP version 1"
echo "1..$(echo "$patches" | wc -l)"
n=0 bad=0
for p in $patches; do
	n=$((n + 1))
	num=${p%%-*}
	# Run from inside the tree: checkpatch asks git about commit ids in the current folder.
	types=$(
		cd "$tree"
		./scripts/checkpatch.pl --no-tree --show-types --terse "$dir/$p" 2>&1 |
			sed -n 's/^[^:]*:[0-9]*: \(ERROR\|WARNING\|CHECK\):\([A-Z_]*\):.*/\2/p' | sort -u
		true
	)
	new=""
	for t in $types; do
		grep -qx "$num $t" <<<"$accepted" || new="$new $t"
	done
	if [ -z "$new" ]; then
		echo "ok $n $p${types:+ # accepted: $(echo "$types" | tr '\n' ' ')}"
	else
		bad=$((bad + 1))
		echo "not ok $n $p: new checkpatch findings:$new"
	fi
done
[ "$bad" -eq 0 ]
