#!/bin/bash
# selinux-migrate-check on fixture trees, one per state an admin can be in and one per rule of
# the parsers it models (libselinux's /etc/selinux/config and enforcing=, the kernel's command
# line and LSM order) and per hostile input. Each fixture is a fake root (proc/, sys/, etc/,
# boot/) built here; the expected verdict, exit status and advice come from the same
# reasoning the matrix proves on real boots. Every fixture is counted; any failure fails.
#   migrate-check.sh BINARY
set -euo pipefail
bin=${1:?usage: migrate-check.sh BINARY}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/cwd"
cd "$work/cwd"

DEBIAN_LSMS='CONFIG_SECURITY_SMACK=y
CONFIG_SECURITY_TOMOYO=y
CONFIG_SECURITY_APPARMOR=y
CONFIG_SECURITY_YAMA=y
CONFIG_SECURITY_LANDLOCK=y
CONFIG_SECURITY_LOCKDOWN_LSM=y
CONFIG_INTEGRITY=y
CONFIG_BPF_LSM=y'
DEBIAN_LIST='CONFIG_LSM="landlock,lockdown,yama,loadpin,safesetid,integrity,apparmor,selinux,smack,tomoyo,bpf"'
DEBIAN_CFG="# Linux/x86 6.1.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
$DEBIAN_LSMS
# CONFIG_SECURITY_SELINUX_BOOTPARAM is not set
# CONFIG_SECURITY_SELINUX_DISABLE is not set
$DEBIAN_LIST"
LEGACY_CFG='# Linux/x86 6.1.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
CONFIG_SECURITY_SELINUX_BOOTPARAM=y
CONFIG_SECURITY_SELINUX_DISABLE=y
CONFIG_LSM="selinux"'
PATCHED_CFG='# Linux/x86 6.1.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
CONFIG_SECURITY_SELINUX_BOOTPARAM=y
CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_ACCEPT=y
CONFIG_LSM="selinux"'
REJECT_CFG=${PATCHED_CFG/ACCEPT=y/REJECT=y}
UPSTREAM_CFG='# Linux/x86 6.12.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
CONFIG_SECURITY_SELINUX_BOOTPARAM=y
CONFIG_LSM="selinux"'
# Debian trixie-like 6.12: every LSM of the default list built, no BOOTPARAM.
TRIXIE_CFG="# Linux/x86 6.12.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
$DEBIAN_LSMS
$DEBIAN_LIST"
# Debian's list, but AppArmor, Smack and TOMOYO not built (issue 17).
NOAA_CFG="# Linux/x86 6.12.0 Kernel Configuration
CONFIG_SECURITY_SELINUX=y
CONFIG_SECURITY_YAMA=y
# CONFIG_SECURITY_APPARMOR is not set
$DEBIAN_LIST"
printf '%s\n' "$PATCHED_CFG" >"$work/patched.config"
printf '%s\n' "$REJECT_CFG" >"$work/reject.config"
printf '%s\n' "$UPSTREAM_CFG" >"$work/upstream.config"
printf '%s\n' "$TRIXIE_CFG" >"$work/trixie.config"
printf '%s\n' "$NOAA_CFG" >"$work/noaa.config"

# tree NAME CMDLINE LSM SELINUXFS(reg|unreg) MOUNTED(y|n) ATTR ENFORCE SELINUX= CONFIG
tree() {
	local d=$work/$1
	mkdir -p "$d/proc/self/attr" "$d/proc/sys/kernel" "$d/sys/kernel/security" "$d/sys/fs/selinux" \
		"$d/etc/selinux" "$d/boot"
	printf '%s\n' "$2" >"$d/proc/cmdline"
	printf '%s\n' "$3" >"$d/sys/kernel/security/lsm"
	{
		echo "nodev	sysfs"
		if [ "$4" = reg ]; then echo "nodev	selinuxfs"; fi
		echo "	ext4"
	} >"$d/proc/filesystems"
	{
		echo "/dev/vda / ext4 rw 0 0"
		if [ "$5" = y ]; then echo "selinuxfs /sys/fs/selinux selinuxfs rw 0 0"; fi
	} >"$d/proc/mounts"
	printf '%s' "$6" >"$d/proc/self/attr/current"
	printf '%s\n' "$7" >"$d/sys/fs/selinux/enforce"
	if [ "$8" != none ]; then
		printf '# comment\nSELINUX=%s\nSELINUXTYPE=default\n' "$8" >"$d/etc/selinux/config"
	fi
	echo "6.1.0-test" >"$d/proc/sys/kernel/osrelease"
	printf '%s\n' "$9" >"$d/boot/config-6.1.0-test"
}

n=0 bad=0
# result NAME STATUS(0 = pass) [DETAIL]
result() {
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $n $1"
	else
		bad=$((bad + 1))
		echo "not ok $n $1"
		if [ -n "${3-}" ]; then
			printf '%s\n' "$3" | sed 's/^/# /'
		fi
	fi
}

# run TREE ARGS... -> $out (stdout), $err (stderr), $rc; never hangs, never stops the script
run() {
	local t=$1
	shift
	rc=0
	out=$(timeout 20 "$bin" --root "$work/$t" "$@" 2>"$work/stderr") || rc=$?
	err=$(<"$work/stderr")
}

# has ERE: a line of $out matches (grep -E's rule, in bash: a fork fewer per check)
has() {
	local line
	while IFS= read -r line; do
		[[ $line =~ $1 ]] && return 0
	done <<<"$out"
	return 1
}

# expect TREE EXIT TODAY TARGET ACTION-PATTERN [ARGS...]
expect() {
	local name=$1 want_rc=$2 today=$3 target=$4 action=$5 st=0
	shift 5
	run "$name" "$@"
	[ "$rc" = "$want_rc" ] || st=1
	has "^SELinux today: *$today" || st=1
	has "^On the new kernel: *$target" || st=1
	has "$action" || st=1
	result "$name${label:+ $label}" "$st" "exit $rc, want $want_rc
$out
$err"
}

# expect_out LABEL TREE PATTERN NOT-PATTERN(or -) [ARGS...]: exit 0 or 1, output has/lacks
expect_out() {
	local label=$1 t=$2 pat=$3 notpat=$4 st=0
	shift 4
	run "$t" "$@"
	case $rc in 0 | 1) ;; *) st=1 ;; esac
	has "$pat" || st=1
	if [ "$notpat" != - ] && has "$notpat"; then st=1; fi
	result "$label" "$st" "exit $rc
$out
$err"
}

# refused LABEL TREE PATTERN [ARGS...]: exit 2, one line on stderr matching, nothing on stdout
refused() {
	local label=$1 t=$2 pat=$3 st=0
	shift 3
	run "$t" "$@"
	[ "$rc" = 2 ] || st=1
	[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || st=1
	grep -qE -- "$pat" <<<"$err" || st=1
	[ -z "$out" ] || st=1
	result "$label" "$st" "exit $rc
$out
$err"
}

echo "KTAP version 1"
# --- states ---------------------------------------------------------------------------
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
why=$(sed -n 's/^  why: //p' <<<"$out" | head -n 1)
st=0
grep -q "SELINUX=permissive, from the next boot" <<<"$why" || st=1
if grep -q "SELINUX=permissive made" <<<"$why"; then st=1; fi
result legacy-now-permissive-reason "$st" "$why"
# The freeze trap: enforcing=1 with SELINUX=disabled, judged against an accepting kernel
# (the backport built with CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_ACCEPT).
tree freeze "root=/dev/vda enforcing=1" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
label=accept expect freeze 1 "enabled, no policy" "enabled, no policy" "remove enforcing=1" --target-config "$work/patched.config"
expect_out freeze-warning freeze "^WARNING: enforcing=1" - --target-config "$work/patched.config"
# The same machine judged against the reject build (the series' default): no freeze, but
# still uninitialised, and a note that a kernel which accepts the write stops this boot.
label=reject expect freeze 1 "enabled, no policy" "enabled, no policy" "add selinux=0" --target-config "$work/reject.config"
expect_out freeze-reject-latent freeze "^Note: no freeze here only because the disable node rejects" "^WARNING" \
	--target-config "$work/reject.config"
# The backport's boot switch: selinux_retired_disable=reject on the command line keeps a
# kernel with the shim from accepting the write, so no freeze; a kernel without the shim
# (6.12) does not know the word, still freezes, and the tool says so.
tree freeze-param "root=/dev/vda enforcing=1 selinux_retired_disable=reject" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
label=patched expect freeze-param 1 "enabled, no policy" "enabled, no policy" "add selinux=0" --target-config "$work/patched.config"
label=upstream expect freeze-param 1 "enabled, no policy" "enabled, no policy" "remove enforcing=1" --target-config "$work/upstream.config"
expect_out freeze-param-unknown-word freeze-param \
	"^Note: the target kernel .*does not know selinux_retired_disable=reject: it logs \"Unknown kernel command line parameters\"" \
	- --target-config "$work/upstream.config"
# The freeze advice names the switch only where the target kernel has it, and after the
# durable fixes.
run freeze --target-config "$work/patched.config"
st=0
act=$(grep "^To do:" <<<"$out" || true)
grep -q "remove enforcing=1.*selinux_retired_disable=reject" <<<"$act" || st=1
run freeze --target-config "$work/upstream.config"
if grep -q "selinux_retired_disable" <<<"$out"; then st=1; fi
result freeze-advice-switch "$st" "$act"
# The old names never shipped: selinuxfs_disable= is a word no kernel knows.
tree freeze-oldword "root=/dev/vda enforcing=1 selinuxfs_disable=reject" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
label=oldword expect freeze-oldword 1 "enabled, no policy" "enabled, no policy" "remove enforcing=1" --target-config "$work/patched.config"
# The switch's name takes '-' for '_', as every kernel parameter does.
tree freeze-dashword "root=/dev/vda enforcing=1 selinux-retired-disable=reject" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
expect_out freeze-dashword freeze-dashword "^To do: *add selinux=0" "^WARNING" --target-config "$work/patched.config"
# A bad value: the kernel keeps its built-in answer (accept here) and the tool says why.
tree freeze-badword "root=/dev/vda enforcing=1 selinux_retired_disable=bogus" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
expect_out freeze-badword freeze-badword "^Note: selinux_retired_disable=bogus is neither reject nor accept" - \
	--target-config "$work/patched.config"
# --target-kernel: this config built as another kernel.
label=6.12 expect freeze 1 "enabled, no policy" "enabled, no policy" "remove enforcing=1" --target-kernel 6.12
expect_out target-kernel-6.12 freeze "^WARNING: enforcing=1" - --target-kernel 6.12
expect_out target-kernel-patched freeze "^Note: no freeze here only because" "^WARNING" --target-kernel 6.1-patched
expect_out target-kernel-patched-accept freeze "^WARNING: enforcing=1" - --target-kernel 6.1-patched-accept
refused target-kernel-bad freeze "--target-kernel banana" --target-kernel banana
# No /etc/selinux/config at all with enforcing=1: libselinux loads nothing, systemd freezes.
tree freeze-noconfig "root=/dev/vda enforcing=1" "capability,selinux" reg n kernel 1 none "$LEGACY_CFG"
expect_out freeze-noconfig freeze-noconfig "^WARNING: enforcing=1 with no /etc/selinux/config" - \
	--target-config "$work/upstream.config"
# Permissive with a policy loaded: nothing changes.
tree permissive "root=/dev/vda" "capability,selinux" reg y "system_u:system_r:kernel_t:s0" 0 permissive "$PATCHED_CFG"
expect permissive 0 "permissive" "permissive" "To do: *nothing"
# selinux=0 honoured (BOOTPARAM): disabled at boot, stays so.
tree selinux0 "root=/dev/vda selinux=0" "capability" unreg n "" 0 disabled "$LEGACY_CFG"
expect selinux0 0 "disabled at boot" "disabled at boot" "To do: *nothing"
# JSON for fleet tools.
run legacy-runtime --json
st=0
/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["today"]=="disabled at run time" and d["target"]=="enabled, no policy" and "selinux=0" in d["action"]' "$out" 2>/dev/null || st=1
result json "$st" "$out"

# --- /etc/selinux/config as libselinux 3.4 reads it ------------------------------------
# cfgcase NAME TARGET-STATE CONTENT: a tree whose config file holds CONTENT (printf %b)
cfgcase() {
	local name=cfg-$1 want=$2
	if [ "$want" = "enabled, no policy" ]; then
		tree "$name" "root=/dev/vda" "capability,selinux" reg n kernel 0 none "$LEGACY_CFG"
	else
		tree "$name" "root=/dev/vda" "capability,selinux" reg y "system_u:system_r:kernel_t:s0" 0 none "$LEGACY_CFG"
	fi
	printf '%b' "$3" >"$work/$name/etc/selinux/config"
	st=0
	run "$name"
	case $rc in 0 | 1) ;; *) st=1 ;; esac
	has "^On the new kernel: *$want" || st=1
	result "$name" "$st" "exit $rc
$out
$err"
}
cfgcase value-case "enabled, no policy" 'SELINUX=Disabled\n'
cfgcase space-after-eq "enabled, no policy" 'SELINUX= \tdisabled\n'
cfgcase tab-comment "enabled, no policy" 'SELINUX=disabled\t# keep it off\n'
cfgcase crlf "enabled, no policy" '# c\r\nSELINUX=disabled\r\nSELINUXTYPE=default\r\n'
cfgcase bogus-first permissive 'SELINUX=bogus\nSELINUX=permissive\n'
cfgcase first-wins permissive 'SELINUX=permissive\nSELINUX=disabled\n'
cfgcase value-prefix permissive 'SELINUX=permissiveish\n'
# The tag must start the line, in capitals: these lines are not read.
cfgcase leading-space "enabled, no policy" '  SELINUX=permissive\nSELINUX=disabled\n'
cfgcase lowercase-tag permissive 'selinux=disabled\nSELINUX=permissive\n'
# fgets() reads a page at a time: past 4095 bytes, the rest of a line is a line of its own.
if [ "$(getconf PAGESIZE)" = 4096 ]; then
	cfgcase long-line permissive "#$(printf '%4094s' '' | tr ' ' x)SELINUX=permissive\nSELINUX=disabled\n"
else
	result "cfg-long-line # SKIP page size is not 4096" 0
fi
# "SELINUX = disabled" is not a line libselinux reads; nothing else is there: refused.
tree cfg-space-before-eq "root=/dev/vda" "capability,selinux" reg n kernel 0 none "$LEGACY_CFG"
printf 'SELINUX = disabled\n' >"$work/cfg-space-before-eq/etc/selinux/config"
refused cfg-space-before-eq cfg-space-before-eq 'etc/selinux/config has no line libselinux reads.*must start with "SELINUX="'

# --- the command line: what the kernel and libselinux each read ---------------------------
# clcase NAME FREEZE(y|n) CMDLINE TARGET-CONFIG [NOTE-PATTERN]
clcase() {
	local name=cl-$1 st=0
	tree "$name" "$3" "capability,selinux" reg n kernel 1 disabled "$LEGACY_CFG"
	run "$name" --target-config "$work/$4.config"
	[ "$rc" = 1 ] || st=1
	if [ "$2" = y ]; then has "^WARNING: enforcing=1" || st=1; elif has "^WARNING"; then st=1; fi
	if [ -n "${5-}" ]; then has "$5" || st=1; fi
	result "$name" "$st" "exit $rc
$out
$err"
}
# libselinux takes the first enforcing=, the kernel the last: libselinux's decides the freeze.
clcase first-not-last y "root=/dev/vda enforcing=1 enforcing=0" upstream "^Note: the kernel reads enforcing=0 .* libselinux reads enforcing=1"
clcase octal y "root=/dev/vda enforcing=01" upstream
clcase hex n "root=/dev/vda enforcing=0x1" upstream "^Note: the kernel reads enforcing=1 .* libselinux reads enforcing=0"
clcase tab y "root=/dev/vda	enforcing=1" upstream
clcase at-start y "enforcing=1 root=/dev/vda" upstream
# libselinux stops at the first "enforcing=" even when it is not a word of its own.
clcase dotted-first n "root=/dev/vda foo.enforcing=0 enforcing=1" upstream "^Note: the kernel reads enforcing=1 but libselinux does not"
# The kernel strips quotes; libselinux never looks at lsm=.
clcase quoted-lsm y 'root=/dev/vda enforcing=1 lsm="selinux,apparmor"' trixie
# Inside quotes, the kernel sees one word; libselinux still finds " enforcing=".
clcase quoted-word y 'root=/dev/vda foo="a enforcing=1"' upstream "^Note: libselinux reads enforcing=1 but the kernel does not"
# atoi skips spaces, kstrtoul does not.
clcase space-value y "root=/dev/vda enforcing= 1" upstream
# After a bare "--" the words are init's: selinux=0 there does not stop SELinux.
clcase dashes y "root=/dev/vda enforcing=1 -- selinux=0" upstream '^Note: after "--" .*selinux=0'

# --- data that is missing: refused, never guessed ---------------------------------------
grep -v '^CONFIG_LSM=' "$work/upstream.config" >"$work/nolsm.config"
grep -v '^# Linux/' "$work/upstream.config" >"$work/nohdr.config"
gzip -c "$work/trixie.config" >"$work/trixie.config.gz"
head -c 40 "$work/trixie.config.gz" >"$work/trunc.config.gz"
refused target-no-lsm freeze 'nolsm.config has no CONFIG_LSM line' --target-config "$work/nolsm.config"
refused target-no-header freeze 'nohdr.config has no .*Kernel Configuration" header' --target-config "$work/nohdr.config"
refused target-truncated-gz freeze 'trunc.config.gz: gzip -dc failed' --target-config "$work/trunc.config.gz"
# A gzip'd target config is read through gzip -dc (trixie's: AppArmor starts first).
expect_out target-gz freeze "^On the new kernel: *disabled at boot" - --target-config "$work/trixie.config.gz"
tree running-no-lsm "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$(grep -v '^CONFIG_LSM=' <<<"$LEGACY_CFG")"
refused running-no-lsm running-no-lsm "boot/config-6.1.0-test has no CONFIG_LSM line"
# Malformed and missing inputs: exit 2, one line naming the file.
tree broken "root=/dev/vda" "capability,selinux" reg n kernel 0 bogus "$PATCHED_CFG"
refused broken broken "etc/selinux/config: SELINUX=bogus"
tree nolsm "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$PATCHED_CFG"
rm "$work/nolsm/sys/kernel/security/lsm"
refused nolsm nolsm "sys/kernel/security/lsm"
# --json: exit 2 still prints one JSON object, with the error.
run broken --json
st=0
[ "$rc" = 2 ] || st=1
/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert "SELINUX=bogus" in d["error"]' "$out" 2>/dev/null || st=1
result json-error "$st" "exit $rc
$out"

# --- hostile trees ----------------------------------------------------------------------
# The control of the "no shell" checks below: the name, handed to a shell as a careless
# popen("gzip -dc %s") would, in single quotes, in double quotes or bare, makes the pwned
# file they look for each time (the quotes end the first; $(...) runs in the others).
shell_made_file() { # NAME
	local d form st=0
	for form in "'%s'" '"%s"' '%s'; do
		d=$(mktemp -d)
		# shellcheck disable=SC2059 # the form is the format: that is the careless tool
		(cd "$d" && sh -c "gzip -dc $(printf "$form" "$1")" >/dev/null 2>&1) || true
		if [ ! -e "$d/pwned" ]; then st=1; fi
		rm -rf "$d"
	done
	return "$st"
}
# No shell: a release name, a --root or a --target-config path with quotes runs nothing.
tree inj-osrelease "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$LEGACY_CFG"
rel="x';touch pwned;'\$(touch pwned).gz"
printf '%s\n' "$rel" >"$work/inj-osrelease/proc/sys/kernel/osrelease"
printf '%s\n' "$LEGACY_CFG" >"$work/inj-osrelease/boot/config-$rel"
refused inj-osrelease-plain inj-osrelease "config-x';touch pwned;'\\\$\\(touch pwned\\)\\.gz: gzip -dc failed"
st=0
if [ -e pwned ] || [ -e /pwned ]; then st=1; fi
result inj-osrelease-no-shell "$st" "a pwned file exists"
st=0
shell_made_file "$work/inj-osrelease/boot/config-$rel" || st=1
result inj-osrelease-control "$st" "a shell given this name made no pwned file: the check above could not fail"
printf '%s\n' "$LEGACY_CFG" | gzip -c >"$work/inj-osrelease/boot/config-$rel"
expect inj-osrelease 1 "enabled, no policy" "enabled, no policy" "add selinux=0"
injroot="inj-root';touch pwned;'\$(touch pwned)"
tree "$injroot" "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$LEGACY_CFG"
printf '%s\n' "$LEGACY_CFG" | gzip -c >"$work/$injroot/proc/config.gz"
expect "$injroot" 1 "enabled, no policy" "enabled, no policy" "add selinux=0"
target="$work/t';touch pwned;'\$(touch pwned).gz"
cp "$work/trixie.config.gz" "$target"
expect_out inj-target-config freeze "^On the new kernel: *disabled at boot" - --target-config "$target"
st=0
if [ -e pwned ] || [ -e /pwned ] || [ -e "$work/pwned" ]; then st=1; fi
result inj-no-shell-at-all "$st" "a pwned file exists"
st=0
shell_made_file "$work/$injroot/proc/config.gz" || st=1
shell_made_file "$target" || st=1
result inj-no-shell-control "$st" "a shell given these names made no pwned file: the check above could not fail"
# Terminal escapes and bytes that are not UTF-8 in the tree: never printed as they are.
tree esc "root=/dev/vda" "$(printf 'capability,selinu\033]0;x\007\033[31mx\377\nTo do: evil')" unreg n "" 0 disabled "$LEGACY_CFG"
run esc
st=0
case $rc in 0 | 1) ;; *) st=1 ;; esac
# a report was printed (no output at all would pass the two checks below)
has "^SELinux today: " || st=1
if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f\xff]' <<<"$out"; then st=1; fi
if grep -q "^To do: evil" <<<"$out"; then st=1; fi
result esc-text "$st" "$(od -c <<<"$out" | head -n 20)"
run esc --json
st=0
/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.stdin.buffer.read().decode("utf-8")); assert "\x1b" in d["today_reason"] and "\ufffd" in d["today_reason"]' <<<"$out" 2>/dev/null || st=1
result esc-json "$st" "$out"
# Not regular files: a FIFO, a device, a --target-config of /dev/zero. Refused, never read.
tree fifo "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$LEGACY_CFG"
rm "$work/fifo/proc/cmdline"
mkfifo "$work/fifo/proc/cmdline"
refused fifo fifo "proc/cmdline: not a regular file"
refused target-devzero freeze "/dev/zero: not a regular file" --target-config /dev/zero
if [ "$(id -u)" = 0 ]; then
	tree chardev "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$LEGACY_CFG"
	rm "$work/chardev/boot/config-6.1.0-test"
	mknod "$work/chardev/boot/config-6.1.0-test" c 1 5
	refused chardev chardev "config-6.1.0-test: not a regular file"
else
	result "chardev # SKIP not root" 0
fi
# Symlinks resolve inside the root: an absolute one finds the tree's file, not the host's,
# and neither an absolute one nor ".." reaches a file outside the tree.
tree link-inside "root=/dev/vda" "capability,selinux" reg y "system_u:system_r:kernel_t:s0" 0 none "$LEGACY_CFG"
mkdir -p "$work/link-inside/srv/cfg"
printf 'SELINUX=permissive\n' >"$work/link-inside/srv/cfg/selinux-$$"
ln -s "/srv/cfg/selinux-$$" "$work/link-inside/etc/selinux/config"
expect link-inside 0 "permissive" "permissive" "To do: *nothing"
printf '%s\n' "$PATCHED_CFG" >"$work/hostcfg"
tree link-abs "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$LEGACY_CFG"
ln -sf "$work/hostcfg" "$work/link-abs/boot/config-6.1.0-test"
refused link-abs link-abs "config-6.1.0-test: No such file or directory"
tree link-dotdot "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$LEGACY_CFG"
ln -sf "../../../../../../../../../..$work/hostcfg" "$work/link-dotdot/boot/config-6.1.0-test"
refused link-dotdot link-dotdot "config-6.1.0-test: No such file or directory"
# /proc/mounts past 64 KiB is read whole.
tree mounts-big "root=/dev/vda" "capability,selinux" reg y "system_u:system_r:kernel_t:s0" 0 permissive "$LEGACY_CFG"
{
	for i in $(seq 1 1500); do echo "tmpfs /run/user/$i tmpfs rw,nosuid,nodev,relatime 0 0"; done
	echo "selinuxfs /sys/fs/selinux selinuxfs rw,relatime 0 0"
} >"$work/mounts-big/proc/mounts"
expect mounts-big 0 "permissive" "permissive" "To do: *nothing"
# A tmpfs on /sys/fs/selinux, or over selinuxfs there, is not selinuxfs.
tree mounts-tmpfs "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$LEGACY_CFG"
echo "selinuxfs /sys/fs/selinux tmpfs rw 0 0" >>"$work/mounts-tmpfs/proc/mounts"
expect_out mounts-tmpfs mounts-tmpfs "selinuxfs unmounted, so getenforce says Disabled" -
tree mounts-over "root=/dev/vda" "capability,selinux" reg y kernel 0 disabled "$LEGACY_CFG"
echo "tmpfs /sys/fs/selinux tmpfs rw 0 0" >>"$work/mounts-over/proc/mounts"
expect_out mounts-over mounts-over "selinuxfs unmounted, so getenforce says Disabled" -

# --- LSMs that are not built are skipped (issue 17) -------------------------------------
# CONFIG_LSM names apparmor first but AppArmor is not built: SELinux starts.
tree lsm-unbuilt "root=/dev/vda" "capability,yama,selinux" reg n kernel 0 disabled \
	"$(sed 's/6.12.0/6.1.0/' "$work/noaa.config")"
expect lsm-unbuilt 1 "enabled, no policy" "enabled, no policy" "add lsm=landlock,lockdown,yama"
label=target expect lsm-unbuilt 1 "enabled, no policy" "enabled, no policy" "add lsm=" --target-config "$work/noaa.config"
tree lsm-smack "root=/dev/vda lsm=smack,selinux" "capability,selinux" reg n kernel 0 disabled "$DEBIAN_CFG"
label=smack expect lsm-smack 1 "enabled, no policy" "enabled, no policy" "change lsm=smack,selinux to lsm=smack" --target-config "$work/noaa.config"
# apparmor=0 leaves SELinux the first exclusive LSM.
tree lsm-apparmor0 "root=/dev/vda apparmor=0" "capability,selinux" reg n kernel 0 disabled "$DEBIAN_CFG"
label=apparmor0 expect lsm-apparmor0 1 "enabled, no policy" "enabled, no policy" "add lsm=" --target-config "$work/trixie.config"
# security=apparmor where AppArmor is not built: every other major LSM is off, SELinux too.
tree lsm-security-unbuilt "root=/dev/vda security=apparmor" "capability,yama" unreg n "" 0 disabled "$(sed 's/6.12.0/6.1.0/' "$work/noaa.config")"
expect lsm-security-unbuilt 0 "disabled at boot" "disabled at boot" "To do: *nothing" --target-config "$work/noaa.config"
# Where the tool judges the running kernel, the running list wins over its model.
tree lsm-list-wins "root=/dev/vda" "capability,selinux" reg n kernel 0 disabled "$DEBIAN_CFG"
expect lsm-list-wins 1 "enabled, no policy" "enabled, no policy" "add lsm="
expect_out lsm-list-wins-note lsm-list-wins "^Note: the config and command line predict that SELinux does not start" -

# --- checkreqprot (issue 19): 1 today, always 0 from 6.4 and with the backport ----------
STOCK_CFG=${LEGACY_CFG/CONFIG_SECURITY_SELINUX_DISABLE=y/# CONFIG_SECURITY_SELINUX_DISABLE is not set}
CRP_CFG="$STOCK_CFG
CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE=1"
POLICY=system_u:system_r:kernel_t:s0
# crptree NAME CMDLINE MODE(enforcing|permissive) NODE(0|1|-) CONFIG
crptree() {
	tree "$1" "$2" "capability,selinux" reg y "$POLICY" "$([ "$3" = enforcing ] && echo 1 || echo 0)" "$3" "$5"
	if [ "$4" != - ]; then printf '%s' "$4" >"$work/$1/sys/fs/selinux/checkreqprot"; fi
}
# Enforcing, checkreqprot=1 on the command line: the new kernel checks what it applies.
crptree crp-cmdline "root=/dev/vda checkreqprot=1" enforcing 1 "$STOCK_CFG"
expect crp-cmdline 1 "enforcing" "enforcing" \
	"checkreqprot is 1 today \(checkreqprot=1 on the kernel command line\).*fix the program or the policy, not the knob; then remove checkreqprot=1"
expect_out crp-cmdline-line crp-cmdline "^checkreqprot: +1 today \(checkreqprot=1 on the kernel command line\), 0 on the new kernel" -
run crp-cmdline --summary
st=0
[ "$out" = "today: enforcing; new kernel: enforcing; action: yes; checkreqprot 1 -> 0" ] || st=1
result crp-summary "$st" "$out"
run crp-cmdline --json
st=0
/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["checkreqprot_today"]==1 and d["checkreqprot_target"]==0 and "command line" in d["checkreqprot_source"]' "$out" 2>/dev/null || st=1
result crp-json "$st" "$out"
# The series' own build (the default reject) drops it too.
label=patched expect crp-cmdline 1 "enforcing" "enforcing" "checkreqprot is 1 today" --target-config "$work/reject.config"
# A 6.1 without the series keeps it: nothing changes.
label=stock expect crp-cmdline 0 "enforcing" "enforcing" "To do: *nothing" --target-kernel 6.1
expect_out crp-stock-line crp-cmdline "^checkreqprot: +1 today .*, 1 on the new kernel" - --target-kernel 6.1
# From the kernel config: nothing to edit for the knob, the program or policy is the fix.
crptree crp-config "root=/dev/vda" enforcing 1 "$CRP_CFG"
expect crp-config 1 "enforcing" "enforcing" "checkreqprot is 1 today \(CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE=1 in the running kernel's config\)"
expect_out crp-config-where crp-config "^  where: nothing for the knob itself" "remove checkreqprot=1"
# From a write to the node since boot: the config and the command line say 0.
crptree crp-node "root=/dev/vda" enforcing 1 "$STOCK_CFG"
expect crp-node 1 "enforcing" "enforcing" "checkreqprot is 1 today \(a write of 1 to /sys/fs/selinux/checkreqprot since boot"
expect_out crp-node-where crp-node "^  where: whatever writes /sys/fs/selinux/checkreqprot" -
# checkreqprot=0 on the command line beats the config; the node agrees: nothing to do.
crptree crp-zero "root=/dev/vda checkreqprot=0" enforcing 0 "$CRP_CFG"
expect crp-zero 0 "enforcing" "enforcing" "To do: *nothing"
# The command line says 1, the node 0: someone wrote 0; the next boot sets 1 again.
crptree crp-wrote-zero "root=/dev/vda checkreqprot=1" enforcing 0 "$STOCK_CFG"
expect_out crp-wrote-zero crp-wrote-zero "^Note: the boot set checkreqprot to 1 .* reads 0: a write of 0 since boot" "^checkreqprot:"
# Permissive: the denials are only logged; a note, no action.
crptree crp-permissive "root=/dev/vda checkreqprot=1" permissive 1 "$STOCK_CFG"
expect crp-permissive 0 "permissive" "permissive" "To do: *nothing"
expect_out crp-permissive-note crp-permissive "^Note: checkreqprot is 1 today .*permissive only logs those denials" -
# No policy loaded: nothing is checked, today or on the new kernel.
tree crp-nopolicy "root=/dev/vda checkreqprot=1" "capability,selinux" reg n kernel 0 disabled "$STOCK_CFG"
expect_out crp-nopolicy crp-nopolicy "^To do: *add selinux=0" "checkreqprot is 1|; checkreqprot"
# After "--" the word is init's; the kernel keeps the config's 0 (no node: the model).
crptree crp-dashes "root=/dev/vda -- checkreqprot=1" enforcing - "$STOCK_CFG"
expect crp-dashes 0 "enforcing" "enforcing" "To do: *nothing"
expect_out crp-dashes-note crp-dashes '^Note: after "--" .*checkreqprot=1' -
# A kernel that already ignores it (the backport running): the word can go.
crptree crp-running-patched "root=/dev/vda checkreqprot=1" permissive 0 "$PATCHED_CFG"
expect_out crp-running-patched crp-running-patched "^Note: checkreqprot=1 on the command line does nothing on this kernel" "^checkreqprot:"
# The node holds something that is neither 0 nor 1: refused.
crptree crp-node-bad "root=/dev/vda" enforcing 2 "$STOCK_CFG"
refused crp-node-bad crp-node-bad "sys/fs/selinux/checkreqprot: '2' is neither 0 nor 1"

echo "1..$n"
echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
