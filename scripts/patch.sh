#!/bin/bash
# Make the patched 6.1 tree: build/src/linux-6.1-patched = linux-6.1 + patches/6.1/series
# (scripts/apply-series.sh). Idempotent: redone only when the source or a patch changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$ROOT/scripts/source.sh" 6.1
need_pkgs patch
# One patcher at a time (make test's background jobs, two make invocations).
lock "$BUILD/src/.lock-patch"
SRC=$BUILD/src/linux-6.1
DST=$BUILD/src/linux-6.1-patched
DIR=$ROOT/patches/6.1

# shellcheck disable=SC2046 # patch file names never hold spaces
# A file that is not there is left out of the sum (cat's status must not count):
# apply-series.sh then names the missing patch.
sum=$(cd "$DIR" && { cat "$SRC/.unpacked-from" series $(grep -v '^#' series) 2>/dev/null || true; } |
	sha256sum | cut -c1-16)
if [ -f "$DST/.patched-with" ] && [ "$(cat "$DST/.patched-with")" = "$sum" ]; then
	info "linux-6.1-patched: up to date"
	exit 0
fi

info "linux-6.1-patched: copying linux-6.1"
rm -rf "$DST.tmp"
mkdir "$DST.tmp"
# The pristine tree without its own build folders.
# A kernel build in the same tree (make test builds in the background) adds a build-*
# folder while tar reads ".": tar says "file changed as we read it" and exits 1, about a
# folder it leaves out anyway. Any other failure still stops the script.
{ (cd "$SRC" && tar --exclude='./build-*' --warning=no-file-changed -cf - .) || [ $? -eq 1 ]; } |
	tar -xpf - -C "$DST.tmp"
"$ROOT/scripts/apply-series.sh" "$DIR" "$DST.tmp"
echo "$sum" >"$DST.tmp/.patched-with"
# Keep the kernel build folders (build-<arch>-<config>) of the old tree when it was
# patched on the same sources: only what the series change reaches is rebuilt. make
# goes by times, so the files the old or the new series changed (newer than the
# unpacking in either tree) get them right: one the new series leaves as the old one
# did keeps its old time; any other gets the current time, even one back at its archive
# time, which is older than the objects built from the old series' content. (Built on
# other sources, a new package version's, they go with the old tree.)
if [ -d "$DST" ] && cmp -s "$DST/.unpacked-from" "$DST.tmp/.unpacked-from"; then
	{
		(cd "$DST" && find . -path './build-*' -prune -o -type f -newer .unpacked-from -print)
		(cd "$DST.tmp" && find . -type f -newer .unpacked-from -print)
	} | sort -u | while IFS= read -r f; do
		if [ "$f" = ./.patched-with ] || [ ! -f "$DST.tmp/$f" ]; then
			continue
		fi
		if [ -f "$DST/$f" ] && cmp -s "$DST/$f" "$DST.tmp/$f"; then
			touch -r "$DST/$f" "$DST.tmp/$f"
		else
			touch "$DST.tmp/$f"
		fi
	done
	for b in "$DST"/build-*; do
		[ -d "$b" ] && mv "$b" "$DST.tmp/"
	done
fi
rm -rf "$DST"
mv "$DST.tmp" "$DST"
info "linux-6.1-patched: series applied"
