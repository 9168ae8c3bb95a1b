#!/bin/bash
# shellcheck disable=SC2054,SC2153 # qemu options contain commas; QEMU*, VIRTIO come from configs/arch
# Boot one kernel on the guest image under systemd and run one payload in it.
#   qemu-run.sh --arch A --kernel IMAGE --rootfs IMG [--append "..."]
#               [--selinux-mode disabled|permissive|enforcing] [--exec CMD | --script FILE]
#               [--files DIR] [--timeout S] [--boot-timeout S] [--log FILE] [--out FILE]
#               [--accel tcg|kvm] [--argv-out FILE]
# With --exec or --script: prints the payload's output and exits with its status. Without:
# an interactive console (log in as root, no password). --argv-out FILE: the argv qemu is
# started with, one JSON array (harness/repro.py makes a stand-alone reproducer of it).
# --boot-timeout S: the boot alone (until systemd starts the payload's service) may take
# S seconds; --timeout bounds the whole run. --accel kvm needs /dev/kvm writable
# (HARNESS_KVM_DEVICE names another device file, for the tests).
# The payload travels on a second, read-only disk (vdb, or sda on virtio-scsi where the
# arch data says so) and its output and status come back on a virtio-serial port:
# nothing printed on the console can forge a result. Once the status line is in and the port
# has been quiet for a second, the guest is stopped: its shutdown is not waited for (a kernel
# problem printed during it is not seen; one printed while the payload runs is).
# The image is never written: the guest's root disk is a throwaway qcow2 overlay in a work
# folder, the image only its read-only backing, and no qemu monitor is reachable (an
# interactive console is plain stdio, no Ctrl-A escapes: leave it with reboot or poweroff).
# Bad input is refused with one line before anything boots; killing qemu-run.sh (TERM,
# INT, HUP) ends the guest and removes the work folder.
# Exit status: the payload's, or
#   123  systemd froze the boot ("Freezing execution", then silence; killed)
#   124  the guest did not finish within --timeout, or did not reach the payload within
#        --boot-timeout (killed; last console lines printed)
#   125  bad arguments or qemu could not start
#   126  the kernel panicked or printed an Oops, BUG or WARNING (lines printed)
#   127  the guest stopped without reporting a result
# -h, --help: this text.
set -euo pipefail
here=${BASH_SOURCE[0]}
[[ $here == */* ]] || here=./$here
. "${here%/*}/scripts/lib.sh"
# lib.sh's check_arch/load_arch call this die too: every refusal is one line, exit 125.
die() { echo "qemu-run.sh: error: $*" >&2; exit 125; }
# A value as it can be shown on one line.
q() {
	if [[ $1 =~ ^[[:print:]]*$ ]]; then printf '%s' "$1"; else printf '%q' "$1"; fi
}
# A path inside a qemu option value (",," is qemu's escape for a comma).
qesc() { printf '%s' "${1//,/,,}"; }
# write_argv FILE ARG...: the args as one JSON array (python3's json keeps any byte, as a
# surrogate escape).
write_argv() {
	local file=$1
	shift
	/usr/bin/python3 -c 'import json, sys; json.dump(sys.argv[1:], sys.stdout); print()' "$@" >"$file" ||
		die "--argv-out: cannot write '$(q "$file")'"
}
# Whole seconds from 1 to MAX: posint VALUE MAX (leading zeros allowed, never octal).
posint() {
	[[ $1 =~ ^0*[1-9][0-9]{0,5}$ ]] && [ $((10#$1)) -le "$2" ]
}

arch="" kernel="" rootfs="" append="" mode="" exec_cmd="" script="" files="" timeout=300
log="" out="" accel=tcg argv_out="" boot_timeout=""
while [ $# -gt 0 ]; do
	if [ "$1" = -h ] || [ "$1" = --help ]; then
		sed -n '3,/^set -euo pipefail$/{/^#/s/^# \{0,1\}//p}' "$here"
		exit 0
	fi
	[ $# -ge 2 ] || die "option $(q "$1") needs a value"
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
	--boot-timeout) boot_timeout=$2 ;;
	--log) log=$2 ;;
	--out) out=$2 ;;
	--accel) accel=$2 ;;
	--argv-out) argv_out=$2 ;;
	*) die "unknown option $(q "$1")" ;;
	esac
	shift 2
done
[ -n "$arch" ] || die "--arch is required (one of: $(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.arch names --boot))"
# A plain name of configs/arch, or one line and exit 125 (never a path).
load_arch "$arch"
[ "$BOOTS" = yes ] || die "arch '$arch' has no boot facts in configs/arch/$arch.yaml (it is built by make arch-check only)"
[ -f "$kernel" ] || die "no kernel image: '$(q "$kernel")' (--kernel)"
[ -f "$rootfs" ] || die "no rootfs image: '$(q "$rootfs")' (--rootfs)"
case "$mode" in "" | disabled | permissive | enforcing) ;; *) die "bad --selinux-mode '$(q "$mode")'" ;; esac
posint "$timeout" 86400 || die "bad --timeout '$(q "$timeout")' (whole seconds, 1 to 86400)"
timeout=$((10#$timeout))
if [ -n "$boot_timeout" ]; then
	posint "$boot_timeout" 86400 || die "bad --boot-timeout '$(q "$boot_timeout")' (whole seconds, 1 to 86400)"
	boot_timeout=$((10#$boot_timeout))
fi
freeze_quiet=${FREEZE_QUIET:-10}
posint "$freeze_quiet" 3600 || die "bad FREEZE_QUIET '$(q "$freeze_quiet")' (whole seconds, 1 to 3600)"
freeze_quiet=$((10#$freeze_quiet))
[ -z "$exec_cmd" ] || [ -z "$script" ] || die "--exec and --script exclude each other"
[ -z "$script" ] || [ -f "$script" ] || die "no such script: $(q "$script")"
# The payload disk holds what --files gives, sized to fit it (at least 64 MiB, at most
# 1 GiB of files); run and selinux-mode are the payload's own and cannot come from there.
files_kib=0 files_count=0
if [ -n "$files" ]; then
	[ -d "$files" ] || die "no such folder: $(q "$files")"
	for f in run selinux-mode; do
		if [ -e "$files/$f" ] || [ -L "$files/$f" ]; then
			die "--files: '$(q "$files")' holds '$f', which would replace the payload's own (--exec/--script, --selinux-mode)"
		fi
	done
	files_kib=$(du -s --apparent-size --block-size=1K -- "$files" 2>/dev/null | cut -f1) ||
		die "--files: cannot read '$(q "$files")'"
	files_count=$(find "$files" 2>/dev/null | wc -l) || die "--files: cannot read '$(q "$files")'"
	[ "$files_kib" -le $((1024 * 1024)) ] ||
		die "--files: '$(q "$files")' holds $((files_kib / 1024)) MiB, more than the payload disk's 1024 MiB"
fi
# Output files: writable, in an existing folder, and none of the inputs.
check_output() {
	local opt=$1 p=$2 d other
	[ -n "$p" ] || return 0
	d=$(dirname -- "$p")
	[ -d "$d" ] || die "$opt: no such folder: '$(q "$d")'"
	[ ! -d "$p" ] || die "$opt: '$(q "$p")' is a folder"
	for other in "$kernel" "$rootfs" "$script"; do
		if [ -n "$other" ] && [ "$p" -ef "$other" ]; then
			die "$opt: '$(q "$p")' is an input of this run (--kernel, --rootfs or --script)"
		fi
	done
	{ : >>"$p"; } 2>/dev/null || die "$opt: cannot write '$(q "$p")'"
}
check_output --log "$log"
check_output --out "$out"
if [ -n "$log" ] && [ -n "$out" ] && [ "$log" -ef "$out" ]; then
	die "--log and --out name the same file"
fi
check_output --argv-out "$argv_out"
for other in "$log" "$out"; do
	if [ -n "$argv_out" ] && [ -n "$other" ] && [ "$argv_out" -ef "$other" ]; then
		die "--argv-out names the same file as --log or --out"
	fi
done
case "$accel" in
tcg) accel_args=(-accel tcg,thread=multi) ;;
kvm)
	kvm_dev=${HARNESS_KVM_DEVICE:-/dev/kvm}
	[ -w "$kvm_dev" ] || die "--accel kvm: $(q "$kvm_dev") is not usable"
	accel_args=(-accel kvm)
	;;
*) die "bad --accel '$(q "$accel")' (tcg or kvm)" ;;
esac
interactive=1
if [ -n "$exec_cmd" ] || [ -n "$script" ] || [ -n "$mode" ] || [ -n "$files" ]; then
	interactive=0
fi
[ "$interactive" = 0 ] || [ -t 0 ] || die "no payload and no terminal: nothing to do (use --exec or --script)"
command -v "$QEMU" >/dev/null || need_pkgs "$QEMU_PKG"
command -v qemu-img >/dev/null || need_pkgs qemu-utils

# From here on a guest may run: whatever ends this script ends it too and removes the
# work folder (TERM, INT and HUP are passed on after the cleanup).
work="" qpid=""
# shellcheck disable=SC2317 # stop_qemu, cleanup and on_signal are called from traps
stop_qemu() {
	[ -n "$qpid" ] || return 0
	# TERM first (qemu then restores the terminal), KILL after 2 s.
	kill -TERM "$qpid" 2>/dev/null || true
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -KILL "$qpid" 2>/dev/null && [ "$interactive" = 1 ] && [ -t 0 ]; then
		stty sane 2>/dev/null || true
	fi
	wait "$qpid" 2>/dev/null || true
	qpid=""
}
# shellcheck disable=SC2317
cleanup() {
	stop_qemu
	[ -z "$work" ] || rm -rf "$work"
}
# shellcheck disable=SC2317
on_signal() {
	trap - EXIT "$1"
	cleanup
	kill -s "$1" "$$"
}
trap cleanup EXIT
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP
work=$(mktemp -d)
log=${log:-$work/console.log}
: >"$log"

# The root disk: a qcow2 overlay on the image (absolute path, raw, never probed), so the
# image itself is only ever opened read-only, as the overlay's backing file.
base=$(realpath -e -- "$rootfs")
qemu-img create -q -f qcow2 -F raw -b "$base" "$work/root.qcow2" >"$work/qemu-img.log" 2>&1 ||
	die "cannot make an overlay on '$(q "$rootfs")': $(tail -1 "$work/qemu-img.log")"

cmdline="console=$CONSOLE root=/dev/vda rw panic=-1 init=/usr/local/sbin/harness-init $append"
qemu=("$QEMU" -M "$QEMU_MACHINE" -cpu "$QEMU_CPU" "${accel_args[@]}" -smp "$QEMU_SMP" -m 1024
	-kernel "$kernel" -append "$cmdline" -no-reboot -display none -nodefaults -monitor none
	-drive "file=$(qesc "$work/root.qcow2"),if=none,id=root,format=qcow2"
	-device "virtio-blk-$VIRTIO,drive=root")
# shellcheck disable=SC2206 # QEMU_EXTRA is a list of words from the arch data file
qemu+=($QEMU_EXTRA)

if [ "$interactive" = 0 ]; then
	mkdir "$work/payload"
	if [ -n "$files" ]; then
		cp -a "$files/." "$work/payload/" 2>"$work/cp.log" ||
			die "--files: cannot copy '$(q "$files")': $(head -1 "$work/cp.log")"
	fi
	if [ -n "$script" ]; then
		cp "$script" "$work/payload/run"
	else
		printf '#!/bin/sh\n%s\n' "${exec_cmd:-true}" >"$work/payload/run"
	fi
	chmod 755 "$work/payload/run"
	[ -z "$mode" ] || echo "$mode" >"$work/payload/selinux-mode"
	# Room for the files as copied (a quarter more, 8 KiB an inode) and 16 MiB spare. The
	# file is sized first and mkfs.ext4 fills it, as harness/repro.py's script does: given
	# the size itself, mkfs.ext4 makes another filesystem of a size not a multiple of 4 KiB.
	read -r run_kib _ < <(du -s --apparent-size --block-size=1K -- "$work/payload/run")
	size_kib=$(((files_kib + run_kib) * 5 / 4 + files_count * 8 + 16384))
	[ "$size_kib" -ge 65536 ] || size_kib=65536
	truncate -s "${size_kib}K" "$work/payload.img"
	mkfs.ext4 -q -O ^has_journal -N $((files_count + 4096)) -d "$work/payload" "$work/payload.img" \
		>"$work/mkfs.log" 2>&1 || die "--files: cannot make the payload disk: $(tail -1 "$work/mkfs.log")"
	qemu+=(-drive "file=$(qesc "$work/payload.img"),if=none,id=payload,format=raw,readonly=on")
	if [ "$PAYLOAD_DISK" = scsi ]; then
		# The root disk stays the only virtio-blk disk, so it is vda whatever the order
		# the disks come up in (boot.payload_disk in the arch data).
		qemu+=(-device "virtio-scsi-$VIRTIO,id=payload-scsi" -device scsi-hd,drive=payload,bus=payload-scsi.0)
	else
		qemu+=(-device "virtio-blk-$VIRTIO,drive=payload")
	fi
	: >"$work/results"
	qemu+=(-device "virtio-serial-$VIRTIO"
		-chardev "file,id=results,path=$(qesc "$work/results")"
		-device virtserialport,chardev=results,name=results)
fi

# --argv-out: the argv as qemu gets it below, the console's options included (they differ
# by mode; tests/fast/test_repro.py holds this file to what a stand-in qemu got, in both).
if [ -n "$argv_out" ]; then
	if [ "$interactive" = 1 ]; then
		write_argv "$argv_out" "${qemu[@]}" -chardev stdio,id=console,mux=off,signal=off -serial chardev:console
	else
		write_argv "$argv_out" "${qemu[@]}" -serial "file:$log"
	fi
fi

if [ "$interactive" = 1 ]; then
	# Plain stdio, not muxed: no Ctrl-A escapes (Ctrl-A s would commit the session into
	# the disk's backing file, Ctrl-A c open the monitor); Ctrl-C goes to the guest.
	"${qemu[@]}" -chardev stdio,id=console,mux=off,signal=off -serial chardev:console <&0 &
	qpid=$!
	rc=0
	wait "$qpid" || rc=$?
	qpid=""
	exit "$rc"
fi

# Run qemu in the background and watch the console: the timeout, and systemd freezing the
# boot ("Freezing execution." then FREEZE_QUIET seconds of silence).
"${qemu[@]}" -serial "file:$log" </dev/null >"$work/qemu.out" 2>&1 &
qpid=$!
# The watch starts no process (processes started several times a second would take the
# cores a guest under TCG runs on): the console is read as it grows from a descriptor kept
# open on the log, and the pause between looks is read -t on a pipe nobody writes. A look
# costs so little that it comes every 50 ms: a guest that ended is seen at once.
exec {console_fd}<"$log" {results_fd}<"$work/results" {tick_fd}<> <(:)
partial="" results_partial="" results_last="" results_quiet=0
# console_news: read what the console got since the last look; 0 if it grew. The boot
# stage ends when systemd starts the payload's service (harness.service); freezing is set
# once systemd said it freezes the boot. A line not ended yet is kept for the next look.
# At most 2000 lines a look: a guest that floods its console must not keep the watch from
# its timeouts (the rest is read at the next look).
console_news() {
	local line grew=1 n=0
	while [ "$n" -lt 2000 ]; do
		n=$((n + 1))
		line=""
		if IFS= read -r -u "$console_fd" line; then
			line=$partial$line partial=""
		elif [ -n "$line" ]; then
			partial+=$line grew=0
			break
		else
			break
		fi
		grew=0
		[[ $line =~ Starting\ .*harness\.service ]] && booted=1
		[[ $line == *"Freezing execution"* ]] && freezing=1
	done
	[[ $partial =~ Starting\ .*harness\.service ]] && booted=1
	[[ $partial == *"Freezing execution"* ]] && freezing=1
	# A line that never ends (a guest writing without newlines) is kept to its last 4 KiB,
	# so that a look costs the same however long it grows: the markers are short, and this
	# look matched them on the whole of it.
	[ "${#partial}" -le 4096 ] || partial=${partial: -4096}
	return "$grew"
}
# results_news: read what the results port got since the last look; 0 once the payload's
# status line is its last line and nothing more came for 20 looks (about a second:
# harness-run writes the output and the status in one go, so a status-like line inside the
# output is followed at once by the rest).
results_news() {
	local line n=0
	while [ "$n" -lt 2000 ]; do
		n=$((n + 1))
		line=""
		if IFS= read -r -u "$results_fd" line; then
			results_last=$results_partial$line results_partial="" results_quiet=0
		elif [ -n "$line" ]; then
			# Capped as the console's is: a status line is short, so a longer one is none.
			results_partial+=$line results_quiet=0
			[ "${#results_partial}" -le 4096 ] || results_partial=${results_partial: -4096}
			return 1
		else
			break
		fi
	done
	[ -z "$results_partial" ] && [[ $results_last =~ ^HARNESS-EXIT\ [0-9]+$ ]] || return 1
	results_quiet=$((results_quiet + 1))
	[ "$results_quiet" -gt 20 ]
}
rc="" start=$SECONDS quiet_since=$SECONDS booted=0 freezing=0
while kill -0 "$qpid" 2>/dev/null; do
	read -r -t 0.05 -u "$tick_fd" _ || true
	# A guest that ended in the meantime ended within the timeout.
	kill -0 "$qpid" 2>/dev/null || break
	if console_news; then quiet_since=$SECONDS; fi
	if results_news; then
		rc=reported
	elif [ "$freezing" = 1 ] && [ $((SECONDS - quiet_since)) -ge "$freeze_quiet" ]; then
		rc=frozen
	elif [ $((SECONDS - start)) -ge "$timeout" ]; then
		rc=timeout
	elif [ -n "$boot_timeout" ] && [ "$booted" = 0 ] && [ $((SECONDS - start)) -ge "$boot_timeout" ]; then
		rc=boot-timeout
	fi
	if [ -n "$rc" ]; then
		stop_qemu
		break
	fi
done
if [ -z "$rc" ]; then
	rc=0
	wait "$qpid" || rc=$?
	qpid=""
fi
# The payload reported, and the guest was stopped on its way down.
[ "$rc" != reported ] || rc=0

# A kernel problem overrides any result: the console shows panics, Oopses, BUGs, WARNINGs.
# The kernel's own formats only: userspace output on the console must not match.
bad=$(grep -nE 'Kernel panic - not syncing|Oops: |Internal error: Oops|kernel BUG at|BUG: (kernel|unable|scheduling|sleeping|KASAN|soft lockup|Bad page|workqueue|spinlock|using)|WARNING: CPU: [0-9]+ PID: [0-9]+|general protection fault|Unable to handle kernel' \
	"$log" | head -5 || true)
result=""
if [ -f "$work/results" ]; then
	result=$(sed -n '$s/^HARNESS-EXIT \([0-9]*\)$/\1/p' "$work/results")
fi
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
	echo "qemu-run.sh: systemd froze the boot (\"Freezing execution\", then ${freeze_quiet}s of silence); killed (log: $log)" >&2
	{ grep -E "Failed to load SELinux policy|Freezing execution" "$log" || true; } | sed 's/^/  /' >&2
	exit 123
fi
if [ "$rc" = boot-timeout ]; then
	echo "qemu-run.sh: timeout: the boot did not reach the payload within ${boot_timeout}s, killed (log: $log); last lines:" >&2
	tail -5 "$log" | sed 's/^/  /' >&2
	exit 124
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
