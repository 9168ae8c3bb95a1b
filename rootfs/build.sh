#!/bin/bash
# Build the Debian bookworm guest image for one arch: build.sh ARCH
# debootstrap (minbase + rootfs/packages) -> rootfs/overlay copied in -> rootfs/customize.sh
# (units masked and enabled, root without password) -> ext4 image made with mkfs.ext4 -d
# (no loop device, no mount). debootstrap's second stage runs the arch's programs: on the
# host itself, under qemu-user (binfmt_misc), or, for an arch the host can run neither
# way (i386 on an amd64 host without IA32 emulation), inside one boot of the stock 6.1
# kernel under QEMU (rootfs/stage2-init). Cached under $XDG_CACHE_HOME keyed by a hash of this recipe, written
# atomically. Then our admin tool, selinux-migrate-check, is installed into a copy of it
# as /usr/local/sbin/selinux-migrate-check with debugfs (again no mount): a second layer
# keyed by the binary, so a change to the tool does not redo the debootstrap.
# Each image's sha256 is recorded beside it (IMAGE.sha256, sha256sum format) when it is
# made, and checked before a cached image is trusted: a cached image that changed since
# (a qemu commit, a stray write) is refused with one line naming it, never booted.
# The last line printed is the image's path.
# Mirror: $MIRROR if set, else the host's own apt source for Debian, else debootstrap's
# default.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
[ $# -eq 1 ] || die "usage: rootfs/build.sh ARCH"
load_arch "$1"
A=$1
# STAGE2=guest: debootstrap's second stage in a guest (below), for an arch without qemu-user.
case "${STAGE2:-}" in
"") ;;
guest) [ -z "$QEMU_USER" ] || die "STAGE2=guest: $A's second stage runs under qemu-user, not in a guest" ;;
*) die "STAGE2 is $(printf '%q' "$STAGE2"): the only value it takes is guest" ;;
esac
SUITE=bookworm
# The image's size (sparse: about 700 MB of it is used)
SIZE=2G
HERE=$ROOT/rootfs

need_pkgs debootstrap e2fsprogs python3
if [ -n "$QEMU_USER" ]; then
	need_pkgs qemu-user-static binfmt-support
fi

# Host's Debian mirror from its apt sources (deb822 or one-line form), never a fixed host.
host_mirror() {
	{
		sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null
		sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*main.*/\2/p' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
	} | grep -E '/debian/?$' | head -1
}
mirror=${MIRROR:-$(host_mirror || true)}

key=$( {
	echo "$SUITE $DEB_ARCH ${mirror:-default}"
	cat "$HERE/build.sh" "$HERE/packages" "$HERE/customize.sh" "$HERE/stage2-init"
	(cd "$HERE/overlay" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
} | sha256sum | cut -c1-16)
img=$CACHE/rootfs/$SUITE-$A-$key.ext4
# One build per arch at a time: make test starts the images in the background, and a test
# that needs one waits here for it, then finds it cached.
mkdir -p "$CACHE/rootfs"
lock "$CACHE/rootfs/.lock-$A"

# The sha256 of an image (2 GiB, mostly holes): holes are hashed as the zeros they read as,
# without reading them, so the sum is sha256sum's in a fraction of its time.
image_sha256() {
	/usr/bin/python3 - "$1" <<-'EOF'
		import errno, hashlib, os, sys
		h, zero = hashlib.sha256(), bytes(1 << 20)
		with open(sys.argv[1], "rb") as f:
		    fd, pos = f.fileno(), 0
		    size = os.fstat(fd).st_size
		    while pos < size:
		        try:
		            data = os.lseek(fd, pos, os.SEEK_DATA)
		        except OSError as e:  # ENXIO: holes to the end; else no SEEK_DATA: read all
		            data = size if e.errno == errno.ENXIO else pos
		        while pos < data:
		            n = min(len(zero), data - pos)
		            h.update(zero if n == len(zero) else zero[:n])
		            pos += n
		        try:
		            hole = os.lseek(fd, pos, os.SEEK_HOLE) if pos < size else size
		        except OSError:
		            hole = size
		        os.lseek(fd, pos, os.SEEK_SET)
		        while pos < hole:
		            b = os.read(fd, min(1 << 20, hole - pos))
		            if not b:
		                sys.exit("short read")
		            h.update(b)
		            pos += len(b)
		print(h.hexdigest())
	EOF
}

# record_sha256 FILE DEST: write DEST.sha256 for FILE (before FILE becomes DEST).
record_sha256() {
	local sum
	sum=$(image_sha256 "$1") || die "cannot hash $1"
	echo "$sum  ${2##*/}" >"$2.sha256.tmp"
	mv "$2.sha256.tmp" "$2.sha256"
}

# check_sha256 IMAGE: a cached image is used only if it still has the sum recorded when it
# was made. Refused otherwise: whatever changed it may have changed more.
check_sha256() {
	local want="" got
	[ ! -f "$1.sha256" ] || want=$(cut -d' ' -f1 "$1.sha256")
	[ -n "$want" ] || die "cached image $1 has no recorded sha256 ($1.sha256 missing): remove the image to rebuild it"
	got=$(image_sha256 "$1") || die "cannot hash $1"
	[ "$got" = "$want" ] ||
		die "cached image $1 changed since it was built (sha256 $got, recorded $want): remove it to rebuild it"
}

# install_tools: the final image, the base image plus the admin tool.
install_tools() {
	local gdir bin tkey out
	gdir=$("$ROOT/scripts/guest.sh" "$A" | tail -1) || die "building the guest programs for $A failed"
	bin=$gdir/selinux-migrate-check
	tkey=$(sha256sum "$bin" | cut -c1-12)
	out=$CACHE/rootfs/$SUITE-$A-$key-tools-$tkey.ext4
	if [ -f "$out" ] && [ ! -f "$out.sha256" ]; then
		# made before sums were recorded: not trusted, made again (cheap: a copy)
		info "$A: the cached tool layer has no recorded sha256; making it again"
		rm -f "$out"
	fi
	if [ -f "$out" ]; then
		check_sha256 "$out"
	else
		[ "$fresh" = 1 ] || check_sha256 "$img"
		cp --sparse=always "$img" "$out.tmp"
		debugfs -w -f - "$out.tmp" >"$out.log" 2>&1 <<-EOF || die "debugfs could not install the tool into $out.tmp (see $out.log)"
			cd /usr/local/sbin
			write $bin selinux-migrate-check
			sif selinux-migrate-check mode 0100755
			sif selinux-migrate-check uid 0
			sif selinux-migrate-check gid 0
		EOF
		# debugfs reports a failed command on its output, not in its exit status.
		if grep -qiE 'error|not found|could not|failed' "$out.log"; then
			die "debugfs could not install the tool into $out.tmp (see $out.log)"
		fi
		record_sha256 "$out.tmp" "$out"
		mv "$out.tmp" "$out"
		rm -f "$out.log"
		# Older tool layers of this base are stale.
		find "$CACHE/rootfs" -maxdepth 1 \( -name "$SUITE-$A-$key-tools-*.ext4" -o -name "$SUITE-$A-$key-tools-*.ext4.sha256" \) \
			! -name "${out##*/}" ! -name "${out##*/}.sha256" -delete
		info "$A: selinux-migrate-check installed in /usr/local/sbin"
	fi
	echo "$out"
}

fresh=0
if [ -f "$img" ] && [ ! -f "$img.sha256" ]; then
	# Made before sums were recorded: nothing says it is what was built, so it is not
	# trusted; it is built again (a mismatch, below, is refused instead).
	info "$A: the cached base image has no recorded sha256; building it again"
	rm -f "$img"
fi
if [ -f "$img" ]; then
	info "$A: base image cached"
	install_tools
	exit 0
fi

# Where debootstrap's second stage runs. An arch without a qemu-user binary has it run
# by the host, which must then run that arch's programs: amd64 runs i386 ones only while
# the kernel's IA32 emulation is on (Debian's qemu-user-static registers no i386 handler
# on amd64). Asked with one of our own static programs; if the host cannot, the second
# stage runs in the guest. STAGE2=guest asks for the guest on a host that could run them
# (to build the image as such a host would; an arch with qemu-user has no guest stage).
stage2=host
if [ -n "$QEMU_USER" ]; then
	stage2=qemu-user
elif [ "${STAGE2:-}" = guest ]; then
	stage2=guest
elif [ "$DEB_ARCH" != "$(dpkg --print-architecture)" ]; then
	gdir=$("$ROOT/scripts/guest.sh" "$A" | tail -1) || die "building the guest programs for $A failed"
	if ! "$gdir/selinux-probe" >/dev/null 2>"$CACHE/rootfs/.exec-$A.log"; then
		info "$A: this host cannot run $DEB_ARCH programs ($(grep -o '[^:]*$' "$CACHE/rootfs/.exec-$A.log" | head -1 | sed 's/^ *//')): debootstrap's second stage runs in the guest"
		stage2=guest
	fi
	rm -f "$CACHE/rootfs/.exec-$A.log"
fi

# binfmt_misc for foreign arches: debootstrap's second stage runs arm64 binaries.
if [ -n "$QEMU_USER" ]; then
	if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null ||
			die "binfmt_misc is not available (cannot mount /proc/sys/fs/binfmt_misc): cannot run $A binaries"
	fi
	update-binfmts --enable >/dev/null 2>&1 || true
	[ -e "/proc/sys/fs/binfmt_misc/${QEMU_USER%-static}" ] ||
		die "binfmt_misc has no ${QEMU_USER%-static} handler (is qemu-user-static installed and registered?)"
fi

mkdir -p "$CACHE/rootfs"
# A 32-bit arch's programs under qemu-user get EOVERFLOW from ext4's 64-bit directory
# offsets (armhf's semodule: "Value too large for defined data type", and the policy
# package fails to configure), so its tree is made in tmpfs, whose offsets fit.
workbase=$CACHE/rootfs
if [ -n "$QEMU_USER" ]; then
	need_pkgs dpkg-dev
	if [ "$(dpkg-architecture -a "$DEB_ARCH" -qDEB_HOST_ARCH_BITS 2>/dev/null)" = 32 ]; then
		workbase=/dev/shm
		free_kib=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
		[ "${free_kib:-0}" -ge 2097152 ] ||
			die "$A is 32-bit: its tree is built in /dev/shm (tmpfs), which needs 2 GiB free (has ${free_kib:-no} KiB)"
	fi
fi
work=$(mktemp -d "$workbase/.work-$A-XXXXXX")
# A debootstrap killed mid-way leaves the tree's /proc (and whatever else it mounted)
# mounted: those are let go first, and rm never crosses into another file system, so
# the host's own /proc, /sys or /dev are never what it deletes.
# shellcheck disable=SC2317 # called from the trap
remove_work() {
	local m
	awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r |
		while IFS= read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf --one-file-system "$work"
}
trap remove_work EXIT
dir=$work/root
pkgs=$(grep -v '^#' "$HERE/packages" | grep -v '^[[:space:]]*$' | paste -sd,)
start=$SECONDS
info "$A: debootstrap $SUITE (${mirror:-debootstrap default mirror}), log: $work/debootstrap.log"
foreign=()
[ "$stage2" != guest ] || foreign=(--foreign)
# shellcheck disable=SC2086
debootstrap "${foreign[@]}" --variant=minbase --arch="$DEB_ARCH" --include="$pkgs" \
	"$SUITE" "$dir" $mirror >"$work/debootstrap.log" 2>&1 &
if ! wait_showing $! "$A: debootstrap" "$work/debootstrap.log" '^I: '; then
	tail -5 "$work/debootstrap.log" >&2
	cp "$work/debootstrap.log" "$CACHE/rootfs/debootstrap-$A-failed.log"
	die "debootstrap failed for $A, see $CACHE/rootfs/debootstrap-$A-failed.log"
fi
info "$A: debootstrap done in $((SECONDS - start))s"

cp -a "$HERE/overlay/." "$dir/"
if [ "$stage2" != guest ]; then
	sh "$HERE/customize.sh" "$dir"
	mkfs.ext4 -q -F -L rootfs -d "$dir" "$work/img" "$SIZE"
else
	# The image boots once with stage2-init as PID 1 (second stage, then customize.sh),
	# under the stock lean kernel (selinux=0: nothing is labelled yet).
	cp "$HERE/customize.sh" "$dir/customize.sh"
	install -m 755 "$HERE/stage2-init" "$dir/stage2-init"
	mkfs.ext4 -q -F -L rootfs -d "$dir" "$work/img" "$SIZE"
	rm -rf "$dir"
	kdir=$("$ROOT/scripts/kernel.sh" "$A" 6.1 selinux | tail -1) || die "building the kernel for $A's second stage failed"
	command -v "$QEMU" >/dev/null || need_pkgs "$QEMU_PKG"
	info "$A: second stage in the guest, log: $work/stage2.log"
	# shellcheck disable=SC2086 # QEMU_EXTRA is a list of words from the arch data file
	timeout "${STAGE2_TIMEOUT:-5400}" "$QEMU" -M "$QEMU_MACHINE" -cpu "$QEMU_CPU" -smp "$QEMU_SMP" -m 1024 \
		-kernel "$kdir/$KIMAGE" -no-reboot -display none -nodefaults -monitor none \
		-append "console=$CONSOLE root=/dev/vda rw panic=-1 selinux=0 init=/stage2-init" \
		-drive "file=$work/img,if=none,id=root,format=raw" -device "virtio-blk-$VIRTIO,drive=root" \
		-serial "file:$work/stage2.log" $QEMU_EXTRA </dev/null >"$work/qemu.out" 2>&1 &
	# its verdict is the console's "stage2: exit N", not QEMU's status
	wait_showing $! "$A: second stage" "$work/stage2.log" '^I: ' || true
	if ! grep -q "stage2: exit 0" "$work/stage2.log"; then
		cp "$work/stage2.log" "$CACHE/rootfs/stage2-$A-failed.log"
		die "the second stage in the guest failed for $A ($(grep -a -o 'stage2: exit [0-9]*' "$work/stage2.log" || echo "no verdict: $(tail -c 300 "$work/qemu.out" | tr '\n' ' ')")), see $CACHE/rootfs/stage2-$A-failed.log"
	fi
	# The guest synced but never unmounted /: e2fsck replays the journal and clears what
	# was left open (exit 1: corrected; 2 and up: not a usable image), then must find the
	# file system clean.
	fsck_rc=0
	e2fsck -fy "$work/img" >"$work/e2fsck.log" 2>&1 || fsck_rc=$?
	if [ "$fsck_rc" -gt 1 ] || ! e2fsck -fn "$work/img" >>"$work/e2fsck.log" 2>&1; then
		cp "$work/e2fsck.log" "$CACHE/rootfs/e2fsck-$A-failed.log"
		die "$A's image is not clean after the second stage (e2fsck exit $fsck_rc), see $CACHE/rootfs/e2fsck-$A-failed.log"
	fi
	# debugfs reports a failed command on its output, not in its exit status.
	if ! debugfs -w -R "rm /stage2-init" "$work/img" >"$work/debugfs.log" 2>&1 ||
		grep -qiE 'error|not found|could not|failed' "$work/debugfs.log"; then
		die "debugfs could not remove /stage2-init from $A's image: $(tail -1 "$work/debugfs.log")"
	fi
fi
mv "$work/img" "$img.tmp"
record_sha256 "$img.tmp" "$img"
mv "$img.tmp" "$img"
info "$A: base image built in $((SECONDS - start))s"
fresh=1
install_tools
