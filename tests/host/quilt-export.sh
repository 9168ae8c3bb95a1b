#!/bin/bash
# The Debian form of the series (scripts/debian-patches.sh) must apply with Debian's quilt
# to the files of a fresh apt tree with no fuzz and no offset, and give byte for byte the
# tree that git am makes from the mails.
#   quilt-export.sh TREE
set -euo pipefail
tree=${1:?usage: quilt-export.sh TREE}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "KTAP version 1"
echo "1..3"
"$here/series-git-am.sh" "$tree" "$work/git" >"$work/am.log" || { echo "not ok 1 git am"; exit 1; }
slice=$("$here/../../scripts/debian-patches.sh" "$work/slice" 2>/dev/null | tail -1)
# The same files as the git am repository holds, from the pristine tree, as a package's
# unpacked source would have them; debian/patches as the slice lays it out.
mkdir "$work/quilt"
(cd "$work/git" && git ls-tree -r --name-only "$(git rev-list --max-parents=0 HEAD)") >"$work/files"
(cd "$tree" && tar -cf - -T "$work/files") | tar -xf - -C "$work/quilt"
cp -r "$slice/debian" "$work/quilt/"
cp "$slice/series" "$work/quilt/debian/patches/series"
rc=0
out=$(cd "$work/quilt" && QUILT_PATCHES=debian/patches QUILTRC=/dev/null quilt push -a 2>&1) || rc=$?
if [ "$rc" -eq 0 ]; then
	echo "ok 1 quilt push -a applies every patch ($(grep -c '^Applying patch' <<<"$out") patches)"
else
	echo "not ok 1 quilt push -a failed (exit $rc)"
	tail -8 <<<"$out" | sed 's/^/# /'
	exit 1
fi
if grep -qiE 'fuzz|offset' <<<"$out"; then
	echo "not ok 2 quilt applied with fuzz or offset"
	grep -iE 'fuzz|offset' <<<"$out" | sed 's/^/# /'
	bad=1
else
	echo "ok 2 no fuzz, no offset"
	bad=0
fi
if d=$(diff -r -x .git -x .pc -x debian "$work/git" "$work/quilt"); then
	echo "ok 3 the quilt tree equals the git am tree byte for byte"
else
	echo "not ok 3 the quilt tree differs from the git am tree"
	head -20 <<<"$d" | sed 's/^/# /'
	bad=1
fi
[ "$bad" -eq 0 ]
