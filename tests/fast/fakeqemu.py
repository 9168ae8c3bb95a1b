"""The fast tier's stand-in for qemu (the qemu_run fixture, registered by conftest.py), so
that qemu-run.sh can be driven end to end without a kernel or a boot.

The fake is put first on PATH under the name configs/arch/x86_64.yaml gives ($QEMU). It
records its argv (one JSON line per start) and, with FAKE_QEMU_INSPECT=1, for every qcow2
drive it is given what qemu-img says the backing file is and what the payload disk holds
(two processes more per start, so only for the tests that read them); then it behaves as
FAKE_QEMU_MODE says:
  result       write "HARNESS-EXIT $FAKE_QEMU_EXIT" (and a line of output) to the results
               chardev file named in its args, then exit 0 (a guest that ran its payload)
  result-sleep the same, then run until killed (a guest on its way down after reporting);
               $FAKE_QEMU_RESULTS, if set, is what it writes instead, and
               $FAKE_QEMU_RESULTS_LATER is written half a second after it
  exit         exit at once with status 0 (an interactive session that ended)
  sleep        run until killed (a guest that never ends)
  booted-sleep the same, after systemd's "Starting harness.service" line on the console
$FAKE_QEMU_CONSOLE, if set, is written to the console (-serial file:) first, in any mode,
and $FAKE_QEMU_CONSOLE_LATER half a second after it (a line the console gets in two parts).
  ignore-term  the same, ignoring TERM (only KILL ends it)
  flood        write short lines to the console, faster than a shell reads them, until killed
Its pid goes to $FAKE_QEMU_PIDFILE. `--version` alone prints $FAKE_QEMU_VERSION (or a fake
version) and exits, recording nothing.
"""
import json
import os
import signal
import subprocess
import time

import pytest

from qemuopts import qemu_opts  # noqa: F401  (the tests read the recorded argv with it)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QEMU_RUN = os.path.join(ROOT, "qemu-run.sh")

FAKE_QEMU = r'''#!/usr/bin/python3
import json, os, signal, subprocess, sys, time
if os.environ.get("FAKE_QEMU_MODE") == "ignore-term":
    # first of all: a TERM that came before would end a guest meant to ignore it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


sys.path.insert(0, @HERE@)
from qemuopts import qemu_opts as opts  # noqa: E402


args = sys.argv[1:]
if args == ["--version"]:
    # what harness/repro.py records as the run's qemu, and a reproducer compares
    print(os.environ.get("FAKE_QEMU_VERSION", "QEMU emulator version 0.0.0 (fake)"))
    print("Copyright (c) nobody")
    sys.exit(0)
rec = {"argv": sys.argv, "backing": {}, "payload_ls": None}
inspect = os.environ.get("FAKE_QEMU_INSPECT") == "1"
for i, a in enumerate(args[:-1] if inspect else []):
    if a in ("-drive", "-blockdev"):
        o = opts(args[i + 1])
        f = o.get("file") or o.get("filename")
        if f and os.path.exists(f) and o.get("format") == "qcow2":
            info = subprocess.run(["qemu-img", "info", "--output=json", f],
                                  capture_output=True, text=True)
            rec["backing"][f] = json.loads(info.stdout).get("backing-filename") if info.returncode == 0 else None
        if o.get("id") == "payload" and f and os.path.exists(f):
            ls = subprocess.run(["debugfs", "-R", "ls -p /", f], capture_output=True, text=True)
            rec["payload_ls"] = ls.stdout
            rec["payload_size"] = os.path.getsize(f)
with open(os.environ["FAKE_QEMU_LOG"], "a") as f:
    f.write(json.dumps(rec) + "\n")
if os.environ.get("FAKE_QEMU_PIDFILE"):
    with open(os.environ["FAKE_QEMU_PIDFILE"] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.environ["FAKE_QEMU_PIDFILE"] + ".tmp", os.environ["FAKE_QEMU_PIDFILE"])
mode = os.environ.get("FAKE_QEMU_MODE", "result")
console = os.environ.get("FAKE_QEMU_CONSOLE", "")
if mode == "booted-sleep":
    # systemd's line as it starts the payload's service, on the console, then nothing more
    console += "         Starting \x1b[0;1;39mharness.service\x1b[0m - qemu-run.sh test payload...\n"
for i, a in enumerate(args[:-1]):
    if console and a == "-serial" and args[i + 1].startswith("file:"):
        with open(args[i + 1][5:], "a") as f:
            f.write(console)
        if os.environ.get("FAKE_QEMU_CONSOLE_LATER"):
            time.sleep(0.5)
            with open(args[i + 1][5:], "a") as f:
                f.write(os.environ["FAKE_QEMU_CONSOLE_LATER"])
if mode in ("result", "result-sleep"):
    results = [opts(args[i + 1])["path"] for i, a in enumerate(args[:-1])
               if a == "-chardev" and opts(args[i + 1]).get("id") == "results"]
    with open(results[0], "a") as f:
        f.write(os.environ.get("FAKE_QEMU_RESULTS",
                               "payload output\nHARNESS-EXIT %s\n" % os.environ.get("FAKE_QEMU_EXIT", "0")))
    if os.environ.get("FAKE_QEMU_RESULTS_LATER"):
        time.sleep(0.5)
        with open(results[0], "a") as f:
            f.write(os.environ["FAKE_QEMU_RESULTS_LATER"])
if mode in ("sleep", "ignore-term", "booted-sleep", "result-sleep"):
    while True:
        time.sleep(0.05)
if mode == "flood":
    # short lines far faster than a shell reads them (about 3 MB/s), until killed
    serial = [args[i + 1][5:] for i, a in enumerate(args[:-1]) if a == "-serial" and args[i + 1].startswith("file:")]
    with open(serial[0], "a") as f:
        while True:
            f.write("x\n" * 32768)
            f.flush()
            time.sleep(0.02)
sys.exit(0)
'''.replace("@HERE@", repr(HERE))


class QemuRun:
    """qemu-run.sh with the fake qemu first on PATH, and the inputs it needs."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.arch = "x86_64"
        for name in ("qemu-system-x86_64", "qemu-system-s390x", "qemu-system-mips64el"):
            fake = self.bin / name
            fake.write_text(FAKE_QEMU)
            fake.chmod(0o755)
        self.log = tmp / "qemu-argv.jsonl"
        self.pidfile = tmp / "qemu.pid"
        self.kernel = tmp / "bzImage"
        self.kernel.write_bytes(b"not a kernel\n")
        self.rootfs = tmp / "rootfs.ext4"
        with open(self.rootfs, "wb") as f:
            f.write(b"base image " * 100)
            f.truncate(1 << 20)
        self.env = dict(os.environ)
        self.env["PATH"] = f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        self.env["FAKE_QEMU_LOG"] = str(self.log)
        self.env["FAKE_QEMU_PIDFILE"] = str(self.pidfile)
        self.env["TMPDIR"] = str(tmp)

    def base_args(self):
        return ["--arch", self.arch, "--kernel", str(self.kernel), "--rootfs", str(self.rootfs)]

    def args(self, *extra, **kw):
        return [QEMU_RUN] + self.base_args() + list(extra)

    def run(self, *extra, mode="result", exit_status=0, timeout=20, stdin=subprocess.DEVNULL):
        env = dict(self.env, FAKE_QEMU_MODE=mode, FAKE_QEMU_EXIT=str(exit_status))
        return subprocess.run(self.args(*extra), env=env, stdin=stdin, capture_output=True,
                              text=True, timeout=timeout)

    def start(self, *extra, mode="sleep"):
        env = dict(self.env, FAKE_QEMU_MODE=mode)
        # A run started in the background of a non-interactive shell (CI's) inherits SIGINT
        # ignored, one started under nohup SIGHUP, and a shell cannot trap a signal ignored
        # at its start; a user at a terminal has both at their default, which is what these
        # tests are about.
        def defaults():
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGHUP, signal.SIG_DFL)
        return subprocess.Popen(self.args(*extra), env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=defaults)

    def starts(self):
        """One record per start of the fake qemu."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def qemu_pid(self, wait=30):
        # generous: on a machine running guests beside the suite, 10 s was once too short
        end = time.time() + wait
        while time.time() < end:
            if self.pidfile.exists():
                return int(self.pidfile.read_text())
            time.sleep(0.05)
        raise AssertionError("the fake qemu never started")


@pytest.fixture
def qemu_run(tmp_path):
    return QemuRun(tmp_path)


def alive(pid):
    """A process that exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def gone_within(pid, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def one_line_error(r, want=None, status=125):
    """The refusal qemu-run.sh promises: exit STATUS, exactly one line on stderr."""
    lines = r.stderr.strip("\n").splitlines()
    assert r.returncode == status, f"exit {r.returncode}, want {status}; stderr: {r.stderr!r}"
    assert len(lines) == 1, f"want one line on stderr, got {r.stderr!r}"
    if want:
        assert want in lines[0], f"{want!r} not in {lines[0]!r}"
    return lines[0]

