#!/bin/bash
# The series must apply with git am as well as with patch -p1 (scripts/patch.sh does that
# one), and git am must record what patches/6.1/commits.tsv says each mail is: author,
# author date, subject, and, as the first line of the message, "commit <sha> upstream."
# for a port or "Not in mainline" for a patch of this series; the whole message must be
# the mail's, unchanged (no line of the body taken for a header), and the packager's
# Signed-off-by that "git am --signoff" adds must land as the last line of the mail's
# trailer block, below the port note (git does not see a block as trailers when too few
# of its lines are). git am needs a repository: a throwaway one holding the files the
# series touches, from the pristine tree.
#   series-git-am.sh TREE [OUT]   (OUT: keep the repository there, for the quilt comparison)
set -euo pipefail
tree=${1:?usage: series-git-am.sh TREE [OUT]}
dir=${SERIES_DIR:-$(cd "$(dirname "$0")/../../patches/6.1" && pwd)}
if [ -n "${2:-}" ]; then
	work=$2
	rm -rf "$work"
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
mapfile -t patches < <(grep -v '^#' "$dir/series" | grep -v '^[[:space:]]*$')
# Every pre-image path named in the mails ("--- a/path" and "rename from path").
mapfile -t files < <(cd "$dir" && cat "${patches[@]}" | sed -n 's|^--- a/||p; s|^rename from ||p' | sort -u)
(cd "$tree" && tar -cf - "${files[@]}") | tar -xf - -C "$work"
git -C "$work" init -q
git -C "$work" add -A
git -C "$work" -c user.name=t -c user.email=t@t commit -qm base
echo "KTAP version 1"
echo "1..$((2 * ${#patches[@]}))"
n=0 bad=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	if out=$(git -C "$work" -c user.name=Packager -c user.email=p@p am -q --signoff "$dir/$p" 2>&1); then
		echo "ok $n git am $p"
	else
		bad=$((bad + 1))
		echo "not ok $n git am $p"
		head -5 <<<"$out" | sed 's/^/# /'
		git -C "$work" am --abort >/dev/null 2>&1 || true
		break
	fi
	n=$((n + 1))
	row=$(awk -F'\t' -v p="$p" '$1 == p' "$dir/commits.tsv")
	if [ -z "$row" ]; then
		bad=$((bad + 1))
		echo "not ok $n $p: no row in commits.tsv"
		continue
	fi
	IFS=$'\t' read -r _ author date subject upstream _ <<<"$row"
	got_author=$(git -C "$work" log -1 --format='%an <%ae>')
	got_date=$(git -C "$work" log -1 --format='%aD')
	got_subject=$(git -C "$work" log -1 --format='%s')
	if [ "$upstream" = - ]; then want_first="Not in mainline"; else want_first="commit $upstream upstream."; fi
	# The mail's message: the body between the headers and the "---" line.
	mail_body=$(awk 'h && /^---$/ {exit} h {print} /^$/ && !h {h = 1}' "$dir/$p")
	got_body=$(git -C "$work" log -1 --format='%b')
	got_first=$(head -1 <<<"$got_body")
	why=""
	# The packager's Signed-off-by: the last line; right below the trailer block if the
	# mail has one (no blank line between), else after a blank line.
	sob="Signed-off-by: Packager <p@p>"
	[ "$(printf '%s\n' "$got_body" | tail -1)" = "$sob" ] || why="$why --signoff did not add the last line;"
	before=$(printf '%s\n' "$got_body" | tail -2 | head -1)
	if grep -qE '^(Signed-off-by|Cc|Reviewed-by|Acked-by|Fixes): ' <<<"$mail_body" &&
		[ -z "$before" ]; then
		why="$why --signoff started a new paragraph: git does not see the mail's tags as a trailer block;"
	fi
	got_body=$(printf '%s\n' "$got_body" | sed '$d')
	[ "$got_author" = "$author" ] || why="$why author '$got_author' (want '$author');"
	[ "$got_date" = "$date" ] || why="$why date '$got_date' (want '$date');"
	[ "$got_subject" = "$subject" ] || why="$why subject '$got_subject' (want '$subject');"
	case $got_first in "$want_first"*) ;; *) why="$why first line '$got_first' (want '$want_first');" ;; esac
	[ "$(printf '%s' "$got_body" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')" = \
		"$(printf '%s' "$mail_body" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')" ] ||
		why="$why message differs from the mail's;"
	if [ -z "$why" ]; then
		echo "ok $n $p: author, date, subject and message as intended"
	else
		bad=$((bad + 1))
		echo "not ok $n $p:$why"
	fi
done
[ "$bad" -eq 0 ] && [ "$n" -eq "$((2 * ${#patches[@]}))" ]
