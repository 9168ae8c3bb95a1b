"""A reproducer of one matrix cell that stands alone: one script that boots the cell again
with nothing but the kernel image, the guest image and itself.

    python3 -m harness.repro CELLDIR --kernel IMAGE --rootfs IMG --files DIR --argv ARGV.json
                             --config DOTCONFIG [--payload FILE] [--selinux-mode MODE]
                             [--timeout S]

writes CELLDIR/repro-standalone.sh and prints its path. ARGV.json is what qemu-run.sh's
--argv-out wrote for the cell's boot; the other inputs are those that boot was given (the
payload defaults to CELLDIR/payload.sh; --selinux-mode and --timeout are qemu-run.sh's, none
and 300 by default). The matrix runner calls write_standalone() with the same inputs.

The script embeds the sha256 of the kernel image, the guest image, the .config and every
payload file; the qemu version (`--version`'s first line) and the exact argv, the run's
temporary paths (overlay, payload disk, results file) and its kernel and console log
replaced by the script's own; the payload folder (tar, gzip, base64) and the .config (gzip,
base64). It refuses to boot when an input drifted and names it; it then builds the overlay
and the payload disk as qemu-run.sh does and runs that argv under a timeout.

Bad input is one line on stderr and exit 2, and the script is only ever replaced whole (a
temp file in CELLDIR, then a rename).
"""
import base64
import datetime
import errno
import gzip
import hashlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import tarfile

from harness import ROOT, atomic
from harness.cli import ArgParser, made

SCRIPT = "repro-standalone.sh"
MODES = ("disabled", "permissive", "enforcing")
MAX_TIMEOUT = 86400  # qemu-run.sh's bound


class ReproError(Exception):
    """Bad input: the message is the one line the user sees."""


class Shell:
    """A piece of a qemu argument that the script fills in (a shell expression, quoted)."""

    def __init__(self, expr):
        self.expr = expr


# What stands, in the script, for each path of the run that is not the script's to keep.
KERNEL = Shell('"$kernel"')
CMDLINE = Shell('"$CMDLINE"')
LOG = Shell('"$log"')
WORK_FILES = {"root": Shell('"$(qesc "$work/root.qcow2")"'),
              "payload": Shell('"$(qesc "$work/payload.img")"'),
              "results": Shell('"$(qesc "$work/results")"')}
# What the argv of a payload boot holds once each, as its options are written.
ARGV_PATHS = {"kernel": "-kernel", "cmdline": "-append", "log": "-serial file:...",
              "root": "-drive id=root", "payload": "-drive id=payload", "results": "-chardev id=results"}


# --- the argv ----------------------------------------------------------------------------

def load_argv(path):
    try:
        with open(path, encoding="utf-8") as f:
            argv = json.load(f)
    except OSError as e:
        raise ReproError(f"{path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ReproError(f"{path}: not JSON ({e})") from None
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ReproError(f"{path}: not a JSON array of strings (qemu-run.sh --argv-out writes one)")
    return argv


def split_opts(arg):
    """qemu's key=value,... split at its commas, each piece as written (",," stays)."""
    pieces, cur, i = [], "", 0
    while i < len(arg):
        if arg[i:i + 2] == ",,":
            cur, i = cur + ",,", i + 2
        elif arg[i] == ",":
            pieces.append(cur)
            cur, i = "", i + 1
        else:
            cur, i = cur + arg[i], i + 1
    return pieces + [cur]


def swap_opt(arg, key, shell):
    """ARG with KEY's value replaced by SHELL: (the parts, the value it had), or None."""
    pieces = split_opts(arg)
    for n, p in enumerate(pieces):
        if p.startswith(key + "="):
            head = ",".join(pieces[:n] + [key + "="])
            tail = "".join("," + t for t in pieces[n + 1:])
            return [head, shell, tail], p[len(key) + 1:].replace(",,", ",")
    return None


def template_one(prev, arg, found):
    """The parts of ARG (after option PREV); what it replaced goes to FOUND."""
    if prev == "-kernel":
        found.setdefault("kernel", []).append(arg)
        return [KERNEL]
    if prev == "-append":
        found.setdefault("cmdline", []).append(arg)
        return [CMDLINE]
    if prev == "-serial" and arg.startswith("file:"):
        found.setdefault("log", []).append(arg[5:])
        return ["file:", LOG]
    key = {"-drive": "file", "-chardev": "path"}.get(prev)
    ids = [p[3:] for p in split_opts(arg) if p.startswith("id=")] if key else []
    if ids and ids[0] in WORK_FILES:
        swapped = swap_opt(arg, key, WORK_FILES[ids[0]])
        if swapped:
            found.setdefault(ids[0], []).append(swapped[1])
            return swapped[0]
    return [arg]


def template_argv(argv):
    """qemu-run.sh's argv, each argument as its parts, the run's own paths (and the kernel
    command line) as Shell parts; and what each stood for ({ARGV_PATHS key: [value]}).
    Refused unless each is there once, the temporary files in one folder, and that folder
    named nowhere else (a path this does not know would point into nothing)."""
    found, out = {}, []
    for i, arg in enumerate(argv):
        out.append(template_one(argv[i - 1] if i else None, arg, found))
    for what, opt in ARGV_PATHS.items():
        if len(found.get(what, [])) != 1:
            raise ReproError(f"the argv has {len(found.get(what, []))} {opt}, not one: not a payload boot "
                             "of qemu-run.sh")
    work = {os.path.dirname(found[w][0]) for w in WORK_FILES}
    if len(work) != 1:
        raise ReproError(f"the argv's temporary files are in {len(work)} folders, not one")
    work = work.pop()
    for parts in out:
        for p in parts:
            if isinstance(p, str) and work in p:
                raise ReproError(f"the argv names the run's temporary folder in {p!r}, "
                                 "which this does not replace")
    return out, found


def sq(text):
    """TEXT single-quoted for the shell, always: a bare word such as a-b,c=d reads to
    shellcheck as arithmetic or a comma-separated array."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def shell_word(parts):
    """An argument's parts as one shell word."""
    return "".join(p.expr if isinstance(p, Shell) else sq(p) for p in parts if p != "") or "''"


# --- the inputs --------------------------------------------------------------------------

_image_sums = {}


def sha256_file(path):
    """sha256sum's answer, without reading the holes of a sparse file (a guest image is
    2 GiB, mostly holes): they are hashed as the zeros they read as. Remembered per file
    version, as the failing cells of a run share one guest image."""
    st = os.stat(path)
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _image_sums:
        _image_sums[key] = _sparse_sha256(path)
    return _image_sums[key]


def _sparse_sha256(path):
    h, zero = hashlib.sha256(), bytes(1 << 20)
    with open(path, "rb") as f:
        fd, pos = f.fileno(), 0
        size = os.fstat(fd).st_size
        while pos < size:
            data = _seek(fd, pos, os.SEEK_DATA, size, pos)
            while pos < data:
                n = min(len(zero), data - pos)
                h.update(zero[:n])
                pos += n
            hole = _seek(fd, pos, os.SEEK_HOLE, size, size) if pos < size else size
            os.lseek(fd, pos, os.SEEK_SET)
            while pos < hole:
                b = os.read(fd, min(1 << 20, hole - pos))
                if not b:
                    raise ReproError(f"{path}: short read")
                h.update(b)
                pos += len(b)
    return h.hexdigest()


def _seek(fd, pos, whence, size, fallback):
    """lseek for data or hole; ENXIO: holes to the end; no SEEK_DATA support: FALLBACK."""
    try:
        return os.lseek(fd, pos, whence)
    except OSError as e:
        return size if e.errno == errno.ENXIO else fallback


def readable_file(path, what):
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise ReproError(f"{what}: cannot read '{path}'")


def payload_files(files, run, mode):
    """{name: bytes} of every regular file of the payload folder as qemu-run.sh fills it
    ('./'-relative, as find prints them), and the entries find counts in --files."""
    if not os.path.isdir(files):
        raise ReproError(f"--files: no such folder: '{files}'")
    for own in ("run", "selinux-mode"):
        if os.path.lexists(os.path.join(files, own)):
            raise ReproError(f"--files: '{files}' holds '{own}', which the payload's own would replace")
    out, count = {}, 1

    def fail(e):
        raise ReproError(f"--files: cannot read '{e.filename}': {e.strerror}")
    for dirpath, dirnames, filenames in os.walk(files, onerror=fail):
        count += len(dirnames) + len(filenames)
        for n in filenames:
            p = os.path.join(dirpath, n)
            if stat.S_ISREG(os.lstat(p).st_mode):
                with open(p, "rb") as f:
                    out["./" + os.path.relpath(p, files)] = f.read()
    out["./run"] = run
    if mode:
        out["./selinux-mode"] = (mode + "\n").encode()
    for name in out:
        # sha256sum escapes these in its output: the script's check would not match
        if "\n" in name or "\\" in name:
            raise ReproError(f"--files: a file name holds a newline or a backslash: {name!r}")
    return out, count


def payload_tgz(files, run_path, run, mode):
    """The payload folder as one gzipped tar: --files as it is (modes, times, links), the
    payload as run (0755) and the mode file, all owned by root."""
    def root(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        tar.add(files, arcname=".", filter=root)
        mtime = os.stat(run_path).st_mtime
        own = [("./run", run, 0o755)] + ([("./selinux-mode", (mode + "\n").encode(), 0o644)] if mode else [])
        for name, data, perm in own:
            ti = root(tarfile.TarInfo(name))
            ti.size, ti.mode, ti.mtime = len(data), perm, mtime
            tar.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def du_kib(path):
    """qemu-run.sh's measure: du's apparent size in KiB."""
    p = subprocess.run(["du", "-s", "--apparent-size", "--block-size=1K", "--", path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise ReproError(f"du {path}: {p.stderr.strip()}")
    return int(p.stdout.split()[0])


def payload_disk(files, run_path, count):
    """qemu-run.sh's payload disk geometry: (KiB, inodes)."""
    kib = (du_kib(files) + du_kib(run_path)) * 5 // 4 + count * 8 + 16384
    return max(kib, 65536), count + 4096


def qemu_version(qemu):
    try:
        p = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ReproError(f"cannot run '{qemu} --version': {e}") from None
    if p.returncode != 0 or not p.stdout.strip():
        raise ReproError(f"'{qemu} --version' failed (exit {p.returncode})")
    return p.stdout.splitlines()[0]


# --- the script --------------------------------------------------------------------------

def b64_lines(data):
    return base64.encodebytes(data).decode("ascii")


def comment(text):
    """TEXT as it can stand in a comment line."""
    return re.sub(r"[^\x20-\x7e]", "?", text)


def kernel_problem_pattern():
    """qemu-run.sh's pattern of a kernel problem on the console, taken from qemu-run.sh
    itself, so the reproducer judges a console as the run did."""
    with open(os.path.join(ROOT, "qemu-run.sh")) as f:
        m = re.search(r"^bad=\$\(grep -nE '([^']+)'", f.read(), re.M)
    if not m:
        raise ReproError("qemu-run.sh: no kernel-problem pattern (a line starting \"bad=$(grep -nE '\")")
    return m.group(1)


def render(v):
    """The script: TEMPLATE with each @KEY@ filled in from V (and qemu-run.sh's pattern)."""
    v = dict(v, KERNEL_PROBLEM=kernel_problem_pattern())

    def fill(m):
        return v[m.group(1)]
    return re.sub(r"@([A-Z0-9_]+)@", fill, TEMPLATE)


def check_inputs(celldir, kernel, rootfs, config, payload, selinux_mode, timeout):
    """Refuse what qemu-run.sh would have refused, and what is not there to read."""
    if not os.path.isdir(celldir):
        raise ReproError(f"no such folder: '{celldir}'")
    for path, what in ((kernel, "--kernel"), (rootfs, "--rootfs"), (config, "--config"),
                       (payload, "--payload")):
        readable_file(path, what)
    if selinux_mode not in (None, "", *MODES):
        raise ReproError(f"bad --selinux-mode '{selinux_mode}' (one of: {', '.join(MODES)})")
    if not isinstance(timeout, int) or not 1 <= timeout <= MAX_TIMEOUT:
        raise ReproError(f"bad --timeout '{timeout}' (whole seconds, 1 to {MAX_TIMEOUT})")


def payload_fields(files, payload, mode):
    """The script's payload: the folder's sums, its disk's geometry and the tarball."""
    with open(payload, "rb") as f:
        run = f.read()
    pfiles, count = payload_files(files, run, mode)
    kib, inodes = payload_disk(files, payload, count)
    sums = "\n".join(f"{hashlib.sha256(data).hexdigest()}  {name}"
                     for name, data in sorted(pfiles.items(), key=lambda kv: os.fsencode(kv[0])))
    return {"PAYLOAD_SUMS": sq(sums), "PAYLOAD_KIB": str(kib), "PAYLOAD_INODES": str(inodes),
            "PAYLOAD_B64": b64_lines(payload_tgz(files, payload, run, mode))}


def write_standalone(celldir, kernel, rootfs, files, argv, config, payload=None, selinux_mode=None,
                     timeout=300):
    """CELLDIR/repro-standalone.sh for the boot that qemu-run.sh ran with these inputs
    (ARGV: its --argv-out file); returns the script's path. Raises ReproError, leaving no
    script, on bad input."""
    payload = payload or os.path.join(celldir, "payload.sh")
    check_inputs(celldir, kernel, rootfs, config, payload, selinux_mode, timeout)
    args = load_argv(argv)
    parts, found = template_argv(args)
    run_kernel = found["kernel"][0]
    if os.path.exists(run_kernel) and not os.path.samefile(run_kernel, kernel):
        raise ReproError(f"the argv boots '{run_kernel}', not --kernel '{kernel}'")
    with open(config, "rb") as f:
        dotconfig = f.read()
    cell = os.path.basename(os.path.abspath(celldir))
    version = qemu_version(args[0])
    text = render({
        "CELL_COMMENT": comment(cell),
        "CELL": sq(cell),
        "DATE": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "KERNEL_PATH": comment(os.path.abspath(kernel)),
        "ROOTFS_PATH": comment(os.path.abspath(rootfs)),
        "QEMU_COMMENT": comment(args[0]),
        "VERSION_COMMENT": comment(version),
        "QEMU": sq(args[0]),
        "QEMU_VERSION": sq(version),
        "CMDLINE": sq(found["cmdline"][0]),
        "TIMEOUT": str(timeout),
        "SHA_KERNEL": sha256_file(kernel),
        "SHA_GUEST": sha256_file(rootfs),
        "SHA_CONFIG": hashlib.sha256(dotconfig).hexdigest(),
        "ARGV": "\n".join("\t\t" + shell_word(p) for p in parts),
        "CONFIG_B64": b64_lines(gzip.compress(dotconfig, mtime=0)),
        **payload_fields(files, payload, selinux_mode),
    })
    return write_atomic(os.path.join(celldir, SCRIPT), text)


def write_atomic(path, text):
    try:
        return atomic.write_text(path, text, mode=0o755, errors="surrogateescape")
    except OSError as e:
        raise ReproError(f"{path}: {e.strerror}") from None


# The script. @KEY@ are filled in by render(); everything else is bash as it runs.
TEMPLATE = r'''#!/bin/bash
# A stand-alone reproducer of the matrix cell @CELL_COMMENT@
# of selinux-ro-hooks, written by harness/repro.py on @DATE@.
# It boots a kernel image on a guest image with the run's qemu command, kernel command line
# and payload, and prints what the payload printed.
#
#   repro-standalone.sh [--ignore-drift] [--log FILE] KERNEL_IMAGE GUEST_IMAGE
#   repro-standalone.sh --config     print the kernel's .config (embedded)
#   repro-standalone.sh --cmdline    print the kernel command line
#   repro-standalone.sh --show       print the qemu command (WORK: its temp folder)
#
# The run used:
#   kernel image  @KERNEL_PATH@
#   guest image   @ROOTFS_PATH@
#   qemu          @VERSION_COMMENT@
# Before booting it checks the sha256 of each input against the run's (the two images, and
# the .config and payload files embedded below), names each one that drifted and exits 1
# (--ignore-drift boots anyway). Another qemu version is only a warning. The guest image is
# only read: the root disk is a qcow2 overlay on it in a temp folder, which goes on exit or
# signal with everything else the script makes (--log FILE keeps the console log).
# Needs only: bash, coreutils (sha256sum, base64, timeout), gzip, tar, qemu-img
# (qemu-utils), mkfs.ext4 (e2fsprogs) and @QEMU_COMMENT@.
# Exit status: the payload's, or
#   1    an input drifted          2    bad usage
#   123  systemd froze the boot ("Freezing execution" on the console at the timeout)
#   124  the guest still ran after @TIMEOUT@ s (killed)
#   125  qemu or a tool failed
#   126  the kernel panicked or printed an Oops, BUG or WARNING
#   127  the guest stopped without a result
set -euo pipefail
# mkfs.ext4 lives in sbin, which a user's PATH may lack
PATH=$PATH:/usr/sbin:/sbin

CELL=@CELL@
QEMU=@QEMU@
QEMU_VERSION=@QEMU_VERSION@
CMDLINE=@CMDLINE@
TIMEOUT=@TIMEOUT@
# qemu-run.sh's payload disk for this payload: size in KiB, inodes
PAYLOAD_KIB=@PAYLOAD_KIB@
PAYLOAD_INODES=@PAYLOAD_INODES@
SHA_KERNEL=@SHA_KERNEL@
SHA_GUEST=@SHA_GUEST@
SHA_CONFIG=@SHA_CONFIG@
# sha256sum of every file of the payload folder, as `find . -type f | LC_ALL=C sort` lists them
PAYLOAD_SUMS=@PAYLOAD_SUMS@

fail() {
	local status=$1
	shift
	echo "repro: $*" >&2
	exit "$status"
}
usage() {
	sed -n 's/^#   \(repro-standalone.sh .*\)/usage: \1/p' "$0" >&2
	exit 2
}
# A path inside a qemu option value (",," is qemu's escape for a comma).
qesc() { printf '%s' "${1//,/,,}"; }

# The run's qemu argv, its kernel, temp files and console log now the script's.
qemu_argv() {
	qemu=(
@ARGV@
	)
}

config_gz() {
	base64 -d <<'END_OF_CONFIG'
@CONFIG_B64@END_OF_CONFIG
}

payload_tgz() {
	base64 -d <<'END_OF_PAYLOAD'
@PAYLOAD_B64@END_OF_PAYLOAD
}

drift=0
# drifted WHAT GOT WANT: say so when an input is not the run's.
drifted() {
	[ "$2" != "$3" ] || return 0
	echo "repro: the $1 drifted: sha256 $2, the run used $3" >&2
	drift=1
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }

# Every payload file against its sum, and no file the run did not have.
check_payload() {
	local line name
	local -A have=()
	while IFS= read -r line; do
		have[${line#*  }]=${line%%  *}
	done < <(cd "$work/payload" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
	while IFS= read -r line; do
		name=${line#*  }
		drifted "payload file ${name#./}" "${have[$name]:-(missing)}" "${line%%  *}"
		unset 'have[$name]'
	done <<<"$PAYLOAD_SUMS"
	for name in "${!have[@]}"; do
		echo "repro: the payload holds ${name#./}, which the run's did not" >&2
		drift=1
	done
}

check_inputs() {
	echo "repro: checking the inputs' sha256" >&2
	drifted "kernel image" "$(sha "$kernel")" "$SHA_KERNEL"
	drifted "guest image" "$(sha "$guest")" "$SHA_GUEST"
	{ config_gz | gzip -dc; } >"$work/config" 2>/dev/null || true
	drifted ".config (embedded)" "$(sha "$work/config")" "$SHA_CONFIG"
	if { payload_tgz | tar -xzf - -C "$work/payload"; } 2>/dev/null; then
		check_payload
	else
		echo "repro: the embedded payload is damaged (tar cannot unpack it)" >&2
		drift=1
	fi
	[ "$drift" = 1 ] || return 0
	[ "$ignore_drift" = 1 ] ||
		fail 1 "not booting: an input is not what the run used (--ignore-drift boots anyway)"
	echo "repro: warning: booting anyway (--ignore-drift)" >&2
}

check_qemu_version() {
	local have
	have=$("$QEMU" --version 2>/dev/null) || true
	have=${have%%$'\n'*}
	[ "$have" = "$QEMU_VERSION" ] ||
		echo "repro: warning: $QEMU here is '$have', the run used '$QEMU_VERSION'" >&2
}

# The disks as qemu-run.sh makes them: a qcow2 overlay on the image (raw, never probed,
# opened read-only as the backing file), the payload folder as a read-only ext4 disk.
make_disks() {
	qemu-img create -q -f qcow2 -F raw -b "$(realpath -e -- "$guest")" "$work/root.qcow2" \
		>"$work/qemu-img.log" 2>&1 || fail 125 "cannot make an overlay on '$guest': $(tail -1 "$work/qemu-img.log")"
	truncate -s "${PAYLOAD_KIB}K" "$work/payload.img"
	mkfs.ext4 -q -O ^has_journal -N "$PAYLOAD_INODES" -d "$work/payload" "$work/payload.img" \
		>"$work/mkfs.log" 2>&1 || fail 125 "cannot make the payload disk: $(tail -1 "$work/mkfs.log")"
}

tpid=""
# shellcheck disable=SC2317 # stop_qemu, cleanup and on_signal are called from traps
stop_qemu() {
	[ -n "$tpid" ] || return 0
	# timeout passes TERM on to qemu, and KILLs it 5 s later
	kill -TERM "$tpid" 2>/dev/null || true
	wait "$tpid" 2>/dev/null || true
	tpid=""
}
# shellcheck disable=SC2317
cleanup() {
	stop_qemu
	[ -z "${work:-}" ] || rm -rf "$work"
}
# shellcheck disable=SC2317
on_signal() {
	trap - EXIT "$1"
	cleanup
	kill -s "$1" "$$"
}

# The result as qemu-run.sh judges it: a kernel problem first, then a freeze, the timeout,
# qemu's own failure, no result; else the payload's status.
verdict() {
	local rc=$1 bad result=""
	echo "repro: console, last 20 lines (${log_kept:---log FILE keeps the whole log}):" >&2
	tail -n 20 "$log" | sed 's/^/  /' >&2
	if [ -f "$work/results" ]; then
		cat "$work/results"
		result=$(tail -1 "$work/results" | sed -n 's/^HARNESS-EXIT \([0-9]*\)$/\1/p')
	fi
	bad=$(grep -nE '@KERNEL_PROBLEM@' \
		"$log" | head -5 || true)
	if [ -n "$bad" ]; then
		echo "repro: kernel problem on the console:" >&2
		printf '  %s\n' "$bad" >&2
		exit 126
	fi
	if [ "$rc" = 124 ]; then
		if grep -q "Freezing execution" "$log"; then
			fail 123 "systemd froze the boot (\"Freezing execution\"), killed at the timeout (${TIMEOUT}s)"
		fi
		fail 124 "timeout: the guest still ran after ${TIMEOUT}s, killed"
	fi
	[ "$rc" = 0 ] || fail 125 "qemu failed (exit $rc): $(tail -1 "$work/qemu.out")"
	[ -n "$result" ] || fail 127 "the guest stopped without a result"
	exit "$result"
}

# An argument as a shell reads it back: bare when that is safe, else single-quoted (%q
# when it holds what a terminal would not show).
shq() {
	if [[ $1 =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then
		printf '%s' "$1"
	elif [[ $1 =~ ^[[:print:]]*$ ]]; then
		printf "'%s'" "${1//\'/\'\\\'\'}"
	else
		printf '%q' "$1"
	fi
}

show() {
	local a line=""
	kernel=KERNEL_IMAGE work=WORK log=${log:-WORK/console.log}
	qemu_argv
	for a in "${qemu[@]}"; do
		line+="$(shq "$a") "
	done
	echo "${line% }"
}

ignore_drift=0 log="" log_kept=""
while [ $# -gt 0 ]; do
	case $1 in
	--config) config_gz | gzip -dc; exit 0 ;;
	--cmdline) printf '%s\n' "$CMDLINE"; exit 0 ;;
	--show) show; exit 0 ;;
	--ignore-drift) ignore_drift=1 ;;
	--log)
		[ $# -ge 2 ] || usage
		log=$2 log_kept="full log: $2"
		shift
		;;
	-*) usage ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 2 ] || usage
kernel=$1 guest=$2
for f in "$kernel" "$guest"; do
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then fail 2 "cannot read '$f'"; fi
done
missing=""
for t in sha256sum base64 gzip tar timeout qemu-img mkfs.ext4 "$QEMU"; do
	command -v "$t" >/dev/null || missing+=" $t"
done
[ -z "$missing" ] || fail 125 "missing:$missing"
if [ -n "$log" ]; then
	if [ "$log" -ef "$kernel" ] || [ "$log" -ef "$guest" ]; then fail 2 "--log: '$log' is an input"; fi
	{ : >"$log"; } 2>/dev/null || fail 2 "--log: cannot write '$log'"
fi

work=""
trap cleanup EXIT
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP
work=$(mktemp -d "${TMPDIR:-/tmp}/repro.XXXXXX")
mkdir "$work/payload"
log=${log:-$work/console.log}
: >"$log"

check_inputs
check_qemu_version
make_disks
qemu_argv
echo "repro: booting $CELL ($QEMU, timeout ${TIMEOUT}s)" >&2
timeout -k 5 "$TIMEOUT" "${qemu[@]}" </dev/null >"$work/qemu.out" 2>&1 &
tpid=$!
rc=0
wait "$tpid" || rc=$?
tpid=""
verdict "$rc"
'''


def main(argv=None):
    ap = ArgParser("repro", prog="python3 -m harness.repro", description=__doc__.splitlines()[0])
    ap.add_argument("celldir", metavar="CELLDIR", help="the cell's results folder")
    ap.add_argument("--kernel", required=True, metavar="IMAGE", help="the kernel image the boot used")
    ap.add_argument("--rootfs", required=True, metavar="IMG", help="the guest image the boot used")
    ap.add_argument("--files", required=True, metavar="DIR", help="qemu-run.sh's --files folder")
    ap.add_argument("--argv", required=True, metavar="ARGV.json", help="qemu-run.sh's --argv-out file")
    ap.add_argument("--config", required=True, metavar="DOTCONFIG", help="the kernel's .config")
    ap.add_argument("--payload", metavar="FILE", help="the payload script (default CELLDIR/payload.sh)")
    ap.add_argument("--selinux-mode", default="", metavar="MODE", help="qemu-run.sh's --selinux-mode")
    ap.add_argument("--timeout", default="300", metavar="S", help="qemu-run.sh's --timeout (default 300)")
    args = ap.parse_args(argv)
    timeout = int(args.timeout) if re.fullmatch(r"[0-9]{1,6}", args.timeout) else args.timeout
    return made("repro", lambda: write_standalone(args.celldir, args.kernel, args.rootfs, args.files, args.argv,
                                                   args.config, args.payload, args.selinux_mode, timeout),
                ReproError)


if __name__ == "__main__":
    sys.exit(main())
