#!/bin/bash
# shellcheck disable=SC2054,SC2153 # qemu options contain commas; QEMU* come from configs/arch
# Boot one kernel on the guest image under systemd and run one payload in it.
#   qemu-run.sh --arch A --kernel IMAGE --rootfs IMG [--append "..."]
#               [--selinux-mode disabled|permissive|enforcing] [--exec CMD | --script FILE]
#               [--files DIR] [--timeout S] [--log FILE] [--out FILE] [--accel tcg|kvm]
# With --exec or --script: prints the payload's output and exits with its status. Without:
# an interactive console (log in as root, no password).
# The payload travels on a second, read-only disk and its output and status come back on
# a virtio-serial port: nothing printed on the console can forge a result.
# The image is never written (the root disk is a snapshot).
# Exit status: the payload's, or
#   123  systemd froze the boot ("Freezing execution", then silence; killed)
#   124  the guest did not finish within --timeout (killed; last console lines printed)
#   125  bad arguments or qemu could not start
#   126  the kernel panicked or printed an Oops, BUG or WARNING (lines printed)
#   127  the guest stopped without reporting a result
set -eu
ROOT=$(cd "$(dirname "$0")" && pwd)
. "$ROOT/scripts/lib.sh"
die() { echo "qemu-run.sh: error: $*" >&2; exit 125; }

arch="" kernel="" rootfs="" append="" mode="" exec_cmd="" script="" files="" timeout=300
log="" out="" accel=tcg
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "option $1 needs a value"
	case "$1" in
	--arch) arch=$2 ;;
	--kernel) kernel=$2 ;;
	--rootfs) rootfs=$2 ;;
	--append) append=$2 ;;
	--selinux-mode) mode=$2 ;;
	--exec) exec_cmd=$2 ;;
	--script) script=$2 ;;
	--files) files=$2 ;;
	--timeout) timeout=$2 ;;
	--log) log=$2 ;;
	--out) out=$2 ;;
	--accel) accel=$2 ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
[ -n "$arch" ] || die "--arch is required (one of: $(names_in "$ROOT/configs/arch" .conf))"
[ -f "$ROOT/configs/arch/$arch.conf" ] ||
	die "unknown arch '$arch' (one of: $(names_in "$ROOT/configs/arch" .conf))"
# shellcheck source=/dev/null
. "$ROOT/configs/arch/$arch.conf"
[ -f "$kernel" ] || die "no kernel image: '$kernel' (--kernel)"
[ -f "$rootfs" ] || die "no rootfs image: '$rootfs' (--rootfs)"
case "$mode" in "" | disabled | permissive | enforcing) ;; *) die "bad --selinux-mode '$mode'" ;; esac
case "$timeout" in '' | *[!0-9]*) die "bad --timeout '$timeout'" ;; esac
[ -z "$exec_cmd" ] || [ -z "$script" ] || die "--exec and --script exclude each other"
[ -z "$script" ] || [ -f "$script" ] || die "no such script: $script"
[ -z "$files" ] || [ -d "$files" ] || die "no such folder: $files"
case "$accel" in
tcg) accel_args=(-accel tcg,thread=multi) ;;
kvm)
	[ -w /dev/kvm ] || die "--accel kvm: /dev/kvm is not usable"
	accel_args=(-accel kvm)
	;;
*) die "bad --accel '$accel' (tcg or kvm)" ;;
esac
command -v "$QEMU" >/dev/null || need_pkgs "$QEMU_PKG"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=${log:-$work/console.log}
: >"$log"

cmdline="console=$CONSOLE root=/dev/vda rw panic=-1 init=/usr/local/sbin/harness-init $append"
qemu=("$QEMU" -M "$QEMU_MACHINE" -cpu "$QEMU_CPU" "${accel_args[@]}" -smp 2 -m 1024
	-kernel "$kernel" -append "$cmdline" -no-reboot -display none -nodefaults
	-drive "file=$rootfs,if=none,id=root,format=raw,snapshot=on"
	-device virtio-blk-pci,drive=root)
# shellcheck disable=SC2206 # QEMU_EXTRA is a list of words from the arch data file
qemu+=($QEMU_EXTRA)

interactive=1
if [ -n "$exec_cmd" ] || [ -n "$script" ] || [ -n "$mode" ] || [ -n "$files" ]; then
	interactive=0
	mkdir "$work/payload"
	if [ -n "$script" ]; then
		cp "$script" "$work/payload/run"
	else
		printf '#!/bin/sh\n%s\n' "${exec_cmd:-true}" >"$work/payload/run"
	fi
	chmod 755 "$work/payload/run"
	[ -z "$mode" ] || echo "$mode" >"$work/payload/selinux-mode"
	[ -z "$files" ] || cp -a "$files/." "$work/payload/"
	truncate -s 64M "$work/payload.img"
	mkfs.ext4 -q -O ^has_journal -d "$work/payload" "$work/payload.img"
	qemu+=(-drive "file=$work/payload.img,if=none,id=payload,format=raw,readonly=on"
		-device virtio-blk-pci,drive=payload
		-device virtio-serial-pci
		-chardev "file,id=results,path=$work/results"
		-device virtserialport,chardev=results,name=results)
fi

if [ "$interactive" = 1 ]; then
	[ -t 0 ] || die "no payload and no terminal: nothing to do (use --exec or --script)"
	exec "${qemu[@]}" -serial mon:stdio
fi

# Run qemu in the background and watch the console once a second: the timeout, and
# systemd freezing the boot ("Freezing execution." then FREEZE_QUIET seconds of silence).
"${qemu[@]}" -serial "file:$log" </dev/null >"$work/qemu.out" 2>&1 &
qpid=$!
rc="" start=$SECONDS last_size=-1 quiet_since=$SECONDS
while kill -0 "$qpid" 2>/dev/null; do
	sleep 1
	size=$(stat -c %s "$log")
	[ "$size" = "$last_size" ] || quiet_since=$SECONDS
	last_size=$size
	if grep -q "Freezing execution" "$log" && [ $((SECONDS - quiet_since)) -ge "${FREEZE_QUIET:-10}" ]; then
		rc=frozen
	elif [ $((SECONDS - start)) -ge "$timeout" ]; then
		rc=timeout
	fi
	if [ -n "$rc" ]; then
		kill "$qpid" 2>/dev/null || true
		sleep 1
		kill -9 "$qpid" 2>/dev/null || true
		break
	fi
done
if [ -z "$rc" ]; then
	rc=0
	wait "$qpid" || rc=$?
fi

# A kernel problem overrides any result: the console shows panics, Oopses, BUGs, WARNINGs.
# The kernel's own formats only: userspace output on the console must not match.
bad=$(grep -nE 'Kernel panic - not syncing|Oops: |Internal error: Oops|kernel BUG at|BUG: (kernel|unable|scheduling|sleeping|KASAN|soft lockup|Bad page|workqueue|spinlock|using)|WARNING: CPU: [0-9]+ PID: [0-9]+|general protection fault|Unable to handle kernel' \
	"$log" | head -5 || true)
result=""
[ -f "$work/results" ] && result=$(tail -1 "$work/results" | sed -n 's/^HARNESS-EXIT \([0-9]*\)$/\1/p')
if [ -n "$out" ]; then
	: >"$out"
	[ ! -f "$work/results" ] || sed '$d' "$work/results" >"$out"
fi
if [ -n "$bad" ]; then
	echo "qemu-run.sh: kernel problem on the console (log: $log):" >&2
	printf '  %s\n' "$bad" >&2
	exit 126
fi
if [ "$rc" = frozen ]; then
	echo "qemu-run.sh: systemd froze the boot (\"Freezing execution\", then ${FREEZE_QUIET:-10}s of silence); killed (log: $log)" >&2
	grep -E "Failed to load SELinux policy|Freezing execution" "$log" | sed 's/^/  /' >&2
	exit 123
fi
if [ "$rc" = timeout ]; then
	echo "qemu-run.sh: timeout: guest still running after ${timeout}s, killed (log: $log); last lines:" >&2
	tail -5 "$log" | sed 's/^/  /' >&2
	exit 124
fi
if [ "$rc" != 0 ]; then
	echo "qemu-run.sh: qemu failed (exit $rc): $(tail -1 "$work/qemu.out")" >&2
	exit 125
fi
if [ -z "$result" ]; then
	echo "qemu-run.sh: the guest stopped without a result (log: $log); last lines:" >&2
	tail -5 "$log" | sed 's/^/  /' >&2
	exit 127
fi
sed '$d' "$work/results"
exit "$result"
