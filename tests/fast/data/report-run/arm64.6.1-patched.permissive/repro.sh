#!/bin/sh
# Re-run this cell alone:
#   make matrix ONLY=kernel=6.1-patched,arch=arm64,scenario=permissive
# or boot it by hand (after make kernel/rootfs):
/work/main/qemu-run.sh --arch arm64 --kernel /work/main/build/kernel/6.1-patched-arm64-selinux/arch/arm64/boot/Image --rootfs /root/.cache/selinux-backport/rootfs/bookworm-arm64-18fcb0a6360a9457-tools-985f300d1ef9.ext4 --script /work/main/results/verify1/arm64.6.1-patched.permissive/payload.sh --files /work/main/build/guest/arm64 --timeout 300 --log /work/main/results/verify1/arm64.6.1-patched.permissive/console.log --out /work/main/results/verify1/arm64.6.1-patched.permissive/probe.ktap --selinux-mode permissive
