#!/bin/bash
# Install linux-source-<version> if missing and unpack its tarball into
# build/src/linux-<version>: source.sh [VERSION...], both 6.1 and 6.12 when none is named
# (make source). A build names only the tree it needs: 6.12's package and tarball are as
# big as 6.1's, and make test builds no 6.12 kernel. Idempotent: a tree is unpacked again
# only when the installed package version differs from the one it was unpacked from.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || set -- 6.1 6.12
for v in "$@"; do
	case "$v" in
	6.1 | 6.12) ;;
	*)
		# %q: a name with a newline or an escape still makes one line.
		[[ $v =~ ^[[:graph:]]+$ ]] || printf -v v '%q' "$v"
		die "unknown source version '$v' (one of: 6.1 6.12)"
		;;
	esac
done
mkdir -p "$BUILD/src"
# One unpacker at a time: make test builds kernels in the background too.
lock "$BUILD/src/.lock-source"
need_pkgs "${@/#/linux-source-}" xz-utils

for v in "$@"; do
	pkg=linux-source-$v
	ver=$(dpkg-query -W -f='${Version}' "$pkg")
	tree=$BUILD/src/linux-$v
	stamp=$tree/.unpacked-from
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkg $ver" ]; then
		info "linux-$v: up to date ($pkg $ver)"
		continue
	fi
	info "linux-$v: unpacking $pkg $ver"
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xaf "/usr/src/$pkg.tar.xz" -C "$tree.tmp" --strip-components=1
	# The kernel build folders inside the old tree (see kernel.sh) go with it: make goes by
	# times, and the new version's files keep their archive times, which may be older than
	# objects built from the old sources. (ccache still has every file both versions share.)
	echo "$pkg $ver" >"$tree.tmp/.unpacked-from"
	rm -rf "$tree"
	mv "$tree.tmp" "$tree"
done

# The series applies to 6.1 only; a 6.12-only call may run where 6.1 was never installed.
[[ " $* " == *" 6.1 "* ]] || exit 0
tested=$(cat "$ROOT/patches/6.1/TESTED-ON")
installed="linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1)"
info "series last tested on: $tested; installed: $installed"
[ "$tested" = "$installed" ] ||
	info "NOTE: the installed linux-source-6.1 differs from the one the series was tested on"
