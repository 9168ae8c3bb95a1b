#!/bin/sh
# The guest image's own settings, applied to a debootstrapped tree at ROOT: by
# rootfs/build.sh on the host, or by rootfs/stage2-init inside the guest for an arch whose
# second stage runs there. One list for both. POSIX sh: the guest has only what minbase has.
#   customize.sh ROOT
set -eu
root=${1:?usage: customize.sh ROOT}
sys=$root/etc/systemd/system
mkdir -p "$root/harness"
# Never relabel: the mark unit would touch /.autorelabel on every boot without SELinux.
ln -sf /dev/null "$sys/selinux-autorelabel-mark.service"
ln -sf /dev/null "$sys/selinux-autorelabel.service"
# root logs in on the console without a password.
sed -i 's/^root:[^:]*:/root::/' "$root/etc/shadow"
echo "/dev/vda / ext4 rw 0 1" >"$root/etc/fstab"
rm -f "$root/etc/machine-id"
: >"$root/etc/machine-id"
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
