#!/bin/bash
# The series must apply with git am as well as with patch -p1 (scripts/patch.sh does that
# one). git am needs a repository: build a throwaway one holding just the files the series
# touches, taken from the pristine tree, and apply every mail in order.
#   series-git-am.sh TREE
set -eu
tree=${1:?usage: series-git-am.sh TREE}
dir=$(cd "$(dirname "$0")/../../patches/6.1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
patches=$(grep -v '^#' "$dir/series" | grep -v '^[[:space:]]*$')
# Every pre-image path named in the mails ("--- a/path" and "rename from path").
mapfile -t files < <(cd "$dir" && echo "$patches" | xargs cat |
	sed -n 's|^--- a/||p; s|^rename from ||p' | sort -u)
(cd "$tree" && tar -cf - "${files[@]}") | tar -xf - -C "$work"
git -C "$work" init -q
git -C "$work" add -A
git -C "$work" -c user.name=t -c user.email=t@t commit -qm base
echo "KTAP version 1"
echo "1..$(echo "$patches" | wc -l)"
n=0 bad=0
for p in $patches; do
	n=$((n + 1))
	if out=$(git -C "$work" -c user.name=t -c user.email=t@t am -q "$dir/$p" 2>&1); then
		echo "ok $n git am $p"
	else
		bad=$((bad + 1))
		echo "not ok $n git am $p"
		echo "$out" | head -5 | sed 's/^/# /'
		git -C "$work" am --abort >/dev/null 2>&1 || true
		break
	fi
done
[ "$bad" -eq 0 ] && [ "$n" -eq "$(echo "$patches" | wc -l)" ]
