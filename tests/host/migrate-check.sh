#!/bin/bash
# selinux-migrate-check on fixture trees, one per state an admin can be in. Each fixture
# is a fake root (proc/, sys/, etc/, boot/) built here; the expected verdict, exit status
# and advice come from the same reasoning the matrix proves on real boots.
#   migrate-check.sh BINARY
set -eu
bin=${1:?usage: migrate-check.sh BINARY}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

DEBIAN_CFG='# Linux/x86 6.1.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
# CONFIG_SECURITY_SELINUX_BOOTPARAM is not set
# CONFIG_SECURITY_SELINUX_DISABLE is not set
CONFIG_LSM="landlock,lockdown,yama,loadpin,safesetid,integrity,apparmor,selinux,smack,tomoyo,bpf"'
LEGACY_CFG='# Linux/x86 6.1.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
CONFIG_SECURITY_SELINUX_BOOTPARAM=y
CONFIG_SECURITY_SELINUX_DISABLE=y
CONFIG_LSM="selinux"'
PATCHED_CFG='# Linux/x86 6.1.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
CONFIG_SECURITY_SELINUX_BOOTPARAM=y
CONFIG_SECURITY_SELINUXFS_DISABLE_ACCEPT=y
CONFIG_LSM="selinux"'
REJECT_CFG=${PATCHED_CFG/ACCEPT=y/REJECT=y}

# tree NAME CMDLINE LSM SELINUXFS(reg|unreg) MOUNTED(y|n) ATTR ENFORCE SELINUX= CONFIG
tree() {
	local d=$work/$1
	mkdir -p "$d/proc/self/attr" "$d/proc/sys/kernel" "$d/sys/kernel/security" "$d/sys/fs/selinux" \
		"$d/etc/selinux" "$d/boot"
	echo "$2" >"$d/proc/cmdline"
	echo "$3" >"$d/sys/kernel/security/lsm"
	{ echo "nodev	sysfs"; [ "$4" = reg ] && echo "nodev	selinuxfs"; echo "	ext4"; } >"$d/proc/filesystems"
	{ echo "/dev/vda / ext4 rw 0 0"; [ "$5" = y ] && echo "selinuxfs /sys/fs/selinux selinuxfs rw 0 0"; } >"$d/proc/mounts"
	printf '%s' "$6" >"$d/proc/self/attr/current"
	echo "$7" >"$d/sys/fs/selinux/enforce"
	[ "$8" = none ] || printf '# comment\nSELINUX=%s\nSELINUXTYPE=default\n' "$8" >"$d/etc/selinux/config"
	echo "6.1.0-test" >"$d/proc/sys/kernel/osrelease"
	echo "$9" >"$d/boot/config-6.1.0-test"
}

n=0 bad=0
# expect NAME EXIT TODAY TARGET ACTION-PATTERN [ARGS...]
expect() {
	local name=$1 want_rc=$2 today=$3 target=$4 action=$5 rc=0 out
	shift 5
	n=$((n + 1))
	out=$("$bin" --root "$work/$name" "$@" 2>&1) || rc=$?
	if [ "$rc" = "$want_rc" ] && echo "$out" | grep -q "^SELinux today: *$today" &&
		echo "$out" | grep -q "^On the new kernel: *$target" && echo "$out" | grep -qE -- "$action"; then
		echo "ok $n $name"
	else
		bad=$((bad + 1))
		echo "not ok $n $name (exit $rc, want $want_rc)"
		printf '%s\n' "$out" | while IFS= read -r l; do echo "# $l"; done
	fi
}

echo "KTAP version 1"
# Debian's kernel with security=selinux and SELINUX=disabled: SELinux runs uninitialised;
# selinux=0 would be ignored there (no BOOTPARAM): the advice is about security=.
tree debian-disabled "root=/dev/vda security=selinux" "lockdown,capability,yama,selinux" reg n kernel 0 disabled "$DEBIAN_CFG"
expect debian-disabled 1 "enabled, no policy" "enabled, no policy" "remove security=selinux"
# Debian's kernel without a switch: AppArmor wins, SELinux never starts. Nothing to do.
tree debian-apparmor "root=/dev/vda" "lockdown,capability,yama,apparmor" unreg n "unconfined" 0 disabled "$DEBIAN_CFG"
expect debian-apparmor 0 "disabled at boot" "disabled at boot" "To do: *nothing"
# TOMOYO is not exclusive: lsm=tomoyo,selinux starts SELinux too, and with the config
# disabled it runs with no policy; the advice drops selinux from that list.
tree tomoyo-first "root=/dev/vda lsm=tomoyo,selinux" "capability,tomoyo,selinux" reg n kernel 0 disabled "$DEBIAN_CFG"
expect tomoyo-first 1 "enabled, no policy" "enabled, no policy" "change lsm=tomoyo,selinux to lsm=tomoyo "
# Legacy kernel that really disabled SELinux at run time: the new kernel will not.
tree legacy-runtime "root=/dev/vda" "capability,selinux" unreg n "" 0 disabled "$LEGACY_CFG"
expect legacy-runtime 1 "disabled at run time" "enabled, no policy" "add selinux=0"
# The same machine after the admin switched the config to permissive (the matrix's
# load-policy cell): still disabled until the next boot, and the reason must not claim that
# SELINUX=permissive made libselinux write the node.
tree legacy-now-permissive "root=/dev/vda" "capability,selinux" unreg n "" 0 permissive "$LEGACY_CFG"
expect legacy-now-permissive 0 "disabled at run time" "permissive" "."
n=$((n + 1))
why=$("$bin" --root "$work/legacy-now-permissive" | sed -n 's/^  why: //p' | head -1)
if echo "$why" | grep -q "SELINUX=permissive, from the next boot" && ! echo "$why" | grep -q "SELINUX=permissive made"; then
	echo "ok $n legacy-now-permissive-reason"
else
	bad=$((bad + 1)); echo "not ok $n legacy-now-permissive-reason # $why"
fi
# The freeze trap: enforcing=1 with SELINUX=disabled, judged against an accepting kernel.
tree freeze "root=/dev/vda enforcing=1" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
printf '%s\n' "$PATCHED_CFG" >"$work/patched.config"
printf '%s\n' "$REJECT_CFG" >"$work/reject.config"
expect freeze 1 "enabled, no policy" "enabled, no policy" "remove enforcing=1" --target-config "$work/patched.config"
n=$((n + 1))
if "$bin" --root "$work/freeze" --target-config "$work/patched.config" | grep -q "WARNING: enforcing=1"; then
	echo "ok $n freeze-warning"
else
	bad=$((bad + 1)); echo "not ok $n freeze-warning"
fi
# The same machine judged against the reject build: no freeze, but still uninitialised.
expect freeze 1 "enabled, no policy" "enabled, no policy" "add selinux=0" --target-config "$work/reject.config"
# The backport's boot switch: selinuxfs_disable=reject on the command line keeps a kernel
# with the shim from accepting the write, so no freeze; a kernel without the shim (6.12's
# config has no such choice) ignores the word and still freezes.
tree freeze-param "root=/dev/vda enforcing=1 selinuxfs_disable=reject" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
printf '%s\n' "# Linux/x86 6.12.0 Kernel Configuration" "CONFIG_SECURITY_SELINUX=y" \
	"CONFIG_SECURITY_SELINUX_BOOTPARAM=y" 'CONFIG_LSM="selinux"' >"$work/upstream.config"
expect freeze-param 1 "enabled, no policy" "enabled, no policy" "add selinux=0" --target-config "$work/patched.config"
expect freeze-param 1 "enabled, no policy" "enabled, no policy" "remove enforcing=1" --target-config "$work/upstream.config"
# The freeze advice names the switch only where the target kernel has it.
n=$((n + 1))
if "$bin" --root "$work/freeze" --target-config "$work/patched.config" | grep -q "selinuxfs_disable=reject" &&
	! "$bin" --root "$work/freeze" --target-config "$work/upstream.config" | grep -q "selinuxfs_disable"; then
	echo "ok $n freeze-advice-switch"
else
	bad=$((bad + 1)); echo "not ok $n freeze-advice-switch"
fi
# Permissive with a policy loaded: nothing changes.
tree permissive "root=/dev/vda" "capability,selinux" reg y "system_u:system_r:kernel_t:s0" 0 permissive "$PATCHED_CFG"
expect permissive 0 "permissive" "permissive" "To do: *nothing"
# selinux=0 honoured (BOOTPARAM): disabled at boot, stays so.
tree selinux0 "root=/dev/vda selinux=0" "capability" unreg n "" 0 disabled "$LEGACY_CFG"
expect selinux0 0 "disabled at boot" "disabled at boot" "To do: *nothing"
# JSON for fleet tools.
n=$((n + 1))
if "$bin" --root "$work/legacy-runtime" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["today"]=="disabled at run time" and d["target"]=="enabled, no policy" and "selinux=0" in d["action"]'; then
	echo "ok $n json"
else
	bad=$((bad + 1)); echo "not ok $n json"
fi
# Malformed and missing inputs: exit 2, one line naming the file.
tree broken "root=/dev/vda" "capability,selinux" reg n kernel 0 bogus "$PATCHED_CFG"
tree nolsm "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$PATCHED_CFG"
rm "$work/nolsm/sys/kernel/security/lsm"
for c in "broken|etc/selinux/config: SELINUX=bogus" "nolsm|sys/kernel/security/lsm"; do
	name=${c%%|*} pat=${c#*|} rc=0
	n=$((n + 1))
	err=$("$bin" --root "$work/$name" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "$pat"; then
		echo "ok $n $name refused"
	else
		bad=$((bad + 1)); echo "not ok $n $name refused (exit $rc: $err)"
	fi
done
echo "1..$n"
[ "$bad" -eq 0 ]
