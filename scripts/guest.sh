#!/bin/bash
# Build the in-guest programs statically for one arch: the probe (tests/guest/probe.c)
# and the admins' migration check (tools/selinux-migrate-check.c):
#   guest.sh ARCH   -> prints the folder that holds both (for qemu-run.sh --files)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -eq 1 ] || die "usage: guest.sh ARCH"
load_arch "$1"
need_pkgs gcc libc6-dev "$CROSS_PKG" ${CROSS_COMPILE:+libc6-dev-$DEB_ARCH-cross}
out=$BUILD/guest/$1
mkdir -p "$out"
for pair in selinux-probe:tests/guest/probe.c selinux-migrate-check:tools/selinux-migrate-check.c; do
	bin=${pair%%:*} src=$ROOT/${pair#*:}
	if [ ! -x "$out/$bin" ] || [ "$src" -nt "$out/$bin" ]; then
		# Display strings may be cut short on purpose (-Wno-format-truncation).
		"${CROSS_COMPILE}gcc" -static -O2 -Wall -Wextra -Werror -Wno-format-truncation \
			-o "$out/$bin.tmp.$$" "$src" || die "building $bin for $1 failed"
		mv "$out/$bin.tmp.$$" "$out/$bin"
	fi
done
echo "$out"
