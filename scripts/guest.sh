#!/bin/bash
# Build the in-guest probe (tests/guest/probe.c) statically for one arch:
#   guest.sh ARCH   -> prints the folder that holds selinux-probe (for qemu-run.sh --files)
set -eu
. "$(dirname "$0")/lib.sh"
[ $# -eq 1 ] || die "usage: guest.sh ARCH"
load_arch "$1"
need_pkgs gcc libc6-dev "$CROSS_PKG" ${CROSS_COMPILE:+libc6-dev-$DEB_ARCH-cross}
out=$BUILD/guest/$1
mkdir -p "$out"
src=$ROOT/tests/guest/probe.c
if [ ! -x "$out/selinux-probe" ] || [ "$src" -nt "$out/selinux-probe" ]; then
	"${CROSS_COMPILE}gcc" -static -O2 -Wall -Wextra -Werror -o "$out/selinux-probe.tmp" "$src" ||
		die "building the probe for $1 failed"
	mv "$out/selinux-probe.tmp" "$out/selinux-probe"
fi
echo "$out"
