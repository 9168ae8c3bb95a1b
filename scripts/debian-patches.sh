#!/bin/bash
# Write the series as a slice of a Debian kernel package's debian/patches: one quilt patch
# per mail, each with DEP-3 headers, under bugfix/all/selinux-ro-hooks/, and the lines to
# append to debian/patches/series. The headers come from the mails and patches/6.1/commits.tsv;
# the diffs are the ones git am makes from the mails, with renames written out in full
# (a quilt series should not rely on git's rename format).
#   debian-patches.sh [OUT]   (default build/debian-patches; the last line printed is OUT)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
out=${1:-$BUILD/debian-patches}
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$(dirname "$out")" || die "cannot create the parent folder of $out"

"$ROOT/scripts/source.sh" 6.1
need_pkgs git
DIR=$ROOT/patches/6.1
sub=bugfix/all/selinux-ro-hooks

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ROOT/tests/host/series-git-am.sh" "$BUILD/src/linux-6.1" "$work/git" >"$work/am.log" ||
	die "the series does not apply with git am: $(grep -m1 '^not ok' "$work/am.log")"

mkdir -p "$work/out/debian/patches/$sub"
mapfile -t patches < <(grep -v '^#' "$DIR/series" | grep -v '^[[:space:]]*$')
mapfile -t commits < <(git -C "$work/git" rev-list --reverse HEAD~${#patches[@]}..HEAD)
{
	echo "# SELinux: remove runtime disable, hook tables read-only (selinux-ro-hooks)"
} >"$work/out/series"
i=0
for p in "${patches[@]}"; do
	c=${commits[$i]}
	i=$((i + 1))
	IFS=$'\t' read -r _ author date _ upstream origin < <(awk -F'\t' -v p="$p" '$1 == p' "$DIR/commits.tsv")
	name=${p#[0-9][0-9][0-9][0-9]-}
	f=$work/out/debian/patches/$sub/$name
	{
		echo "Description: $(git -C "$work/git" log -1 --format=%s "$c")"
		# The message, as DEP-3 continuation lines (" ." for an empty line).
		git -C "$work/git" log -1 --format=%b "$c" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' |
			sed 's/^$/./; s/^/ /'
		echo "Author: $author"
		if [ "$upstream" = - ]; then
			echo "Origin: vendor"
			echo "Forwarded: not-needed"
		else
			echo "Origin: $origin, https://git.kernel.org/linus/$upstream"
			echo "Applied-Upstream: commit:$upstream"
		fi
		echo "Last-Update: $(date -u -d "$date" +%Y-%m-%d)"
		echo "---"
		git -C "$work/git" show --no-renames --format= --stat=72 "$c"
		echo
		git -C "$work/git" show --no-renames --format= "$c"
	} >"$f"
	echo "$sub/$name" >>"$work/out/series"
done
rm -rf "$out"
mv "$work/out" "$out"
info "append $out/series to debian/patches/series and copy $out/debian/patches into the package"
echo "$out"
