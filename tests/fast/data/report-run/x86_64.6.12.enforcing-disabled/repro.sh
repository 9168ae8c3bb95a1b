#!/bin/sh
# Re-run this cell alone:
#   make matrix ONLY=kernel=6.12,arch=x86_64,scenario=enforcing-disabled
# or boot it by hand (after make kernel/rootfs):
/work/main/qemu-run.sh --arch x86_64 --kernel /work/main/build/kernel/6.12-x86_64-selinux/arch/x86/boot/bzImage --rootfs /root/.cache/selinux-backport/rootfs/bookworm-x86_64-61f39b12c8bc888b-tools-1b13c18183fa.ext4 --script /work/main/results/verify1/x86_64.6.12.enforcing-disabled/payload.sh --files /work/main/build/guest/x86_64 --timeout 300 --log /work/main/results/verify1/x86_64.6.12.enforcing-disabled/console.log --out /work/main/results/verify1/x86_64.6.12.enforcing-disabled/probe.ktap --append enforcing=1 --selinux-mode disabled
