#!/usr/bin/python3
"""Run the migration-path matrix described by matrix.yaml.

Every cell (kernel x arch x scenario) is one fresh boot through qemu-run.sh with the
in-guest probe; its observations are compared with matrix.yaml's expectations, pairs of
kernels listed under "agree" are compared with each other, and the run is written to
results/<run>/: per cell console.log, probe.ktap, result.json and repro.sh, and for the
run summary.txt, results.ktap, junit.xml and run.json (builds, jobs, agree checks). Exit 1
on any unexpected result, 2 on bad input (one line naming the problem).
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
import xml.etree.ElementTree as ET

from harness import LAB_OUTCOMES, ROOT, atomic
from harness.cli import ArgParser
from harness import matrixspec  # the matrix.yaml reader and validator
from harness import arch as harness_arch  # the arch model
from harness import kcidb  # the series' patchset hash, as KCIDB defines it
from harness import repro  # the stand-alone reproducer of a failing cell


_print_lock = threading.Lock()


def log(msg):
    with _print_lock:
        if Progress.shown:
            sys.stderr.write("\r\033[K")
            Progress.shown = False
        print(msg, file=sys.stderr, flush=True)


class Progress:
    """The run's state on one line that updates in place, on a terminal; elsewhere (CI, a
    log file) each update is a plain line of its own."""
    shown = False

    @staticmethod
    def update(msg):
        if not sys.stderr.isatty():
            log(msg)
            return
        with _print_lock:
            sys.stderr.write("\r\033[K" + msg[:max(20, shutil.get_terminal_size().columns - 1)])
            sys.stderr.flush()
            Progress.shown = True


def fmt_time(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"


def estimate(boots, left, jobs, builds):
    """What is left of a run, for its progress lines: the LEFT boots at the pace of the
    BOOTS done (seconds each, the guests running JOBS at a time), and the kernel BUILDS the
    cells left still wait for, which no boot's pace tells (a cold one takes minutes)."""
    boots = [b for b in boots if b is not None]
    if not boots:
        return "estimate after the first cell"
    text = f"about {fmt_time(sum(boots) / len(boots) * left / jobs)} of boots left"
    if builds:
        text += f", and {builds} kernel build{'s' if builds > 1 else ''}"
    return text


def arch_facts(arch):
    """An arch's facts under the names the shell scripts use (KIMAGE, PTDUMP, ...), from
    harness/arch.py, the one reader of configs/arch/<arch>.yaml."""
    facts = {}
    # KEY='value' words, as a shell reads them (a value may hold a newline).
    for word in shlex.split(harness_arch.load(arch).shell()):
        k, _, v = word.partition("=")
        facts[k] = v
    return facts


def last_line(cmd, logfile, progress=None):
    """Run a build step, its output to logfile; return its last stdout line or raise. The
    step's own lines of progress ("[kernel.sh] arm 6.1 selinux: 60s, CC ..."; a kernel
    build says where it is each minute) also go to progress, so that a cold build of many
    minutes is not a silent console."""
    with open(logfile, "a") as lf, tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True)
        for line in p.stderr:
            lf.write(line)
            lf.flush()
            if progress and line.startswith("["):
                progress(line.rstrip("\n"))
        p.wait()
        out.seek(0)
        stdout = out.read()
    if p.returncode != 0:
        with open(logfile) as lf:
            errs = [l.strip() for l in lf if "error" in l.lower()]
        raise RuntimeError(errs[-1] if errs else f"{' '.join(cmd)} failed (exit {p.returncode})")
    if not stdout.strip():
        raise RuntimeError(f"{' '.join(cmd)} printed no path")
    return stdout.strip().splitlines()[-1]


def compiler_of(outdir):
    """The compiler a kernel was built with, as its .config records it (None if unknown)."""
    try:
        with open(os.path.join(outdir, ".config")) as f:
            for line in f:
                if line.startswith("CONFIG_CC_VERSION_TEXT="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


class Prep:
    """Builds what cells need, once per run: kernels, guest images, probes.

    One build at a time (a kernel build already uses every core), but a worker whose
    input is ready never waits behind another's build: each input has its own lock, and
    only running a build step takes the build lock. Every step is recorded (jobs) for
    the run's timeline and the kernel builds (builds) for the results' consumers.
    """

    def __init__(self, logfile, prebuilt=False, progress=None):
        self.logfile = logfile
        # called with each progress line of a build step (last_line)
        self.progress = progress
        # prebuilt: the kernels are already in build/kernel/ (a CI job received them from
        # the build job); use them as they are, build none.
        self.prebuilt = prebuilt
        self.done = {}
        self.lock = threading.Lock()
        self.build_lock = threading.Lock()
        self.key_locks = {}
        self.jobs = []
        self.builds = []

    def get(self, key, cmd):
        with self.lock:
            key_lock = self.key_locks.setdefault(key, threading.Lock())
        with key_lock:
            if key not in self.done:
                with self.build_lock:
                    start = time.time()
                    try:
                        self.done[key] = ("ok", last_line(cmd, self.logfile, self.progress))
                    except RuntimeError as e:
                        self.done[key] = ("error", str(e))
                    self.jobs.append({"name": " ".join(key), "kind": key[0], "start": round(start, 3),
                                      "seconds": round(time.time() - start, 1),
                                      "status": self.done[key][0]})
        status, value = self.done[key]
        if status != "ok":
            raise RuntimeError(value)
        return value

    def kernel(self, arch, tree, config):
        key = ("kernel", arch, tree, config)
        if self.prebuilt:
            out = os.path.join(ROOT, "build", "kernel", f"{tree}-{arch}-{config}")
            image = os.path.join(out, arch_facts(arch)["KIMAGE"])
            if not os.path.isfile(image):
                raise RuntimeError(f"--prebuilt: no kernel image {os.path.relpath(image, ROOT)}")
            with self.lock:
                if not any(b["key"] == key for b in self.builds):
                    # built by another job: what it made, not when or how long
                    self.builds.append({"key": key, "arch": arch, "tree": tree, "config": config,
                                        "status": "ok", "start": None, "seconds": None, "image": image,
                                        "config_file": os.path.join(out, ".config"),
                                        "compiler": compiler_of(out), "prebuilt": True})
            return image
        try:
            out = self.get(key, [os.path.join(ROOT, "scripts", "kernel.sh"), arch, tree, config])
        except RuntimeError:
            self.record_build(key, None)
            raise
        self.record_build(key, out)
        return os.path.join(out, arch_facts(arch)["KIMAGE"])

    def record_build(self, key, out):
        with self.lock:
            if any(b["key"] == key for b in self.builds):
                return
            job = next(j for j in self.jobs if j["name"] == " ".join(key))
            _, arch, tree, config = key
            self.builds.append({
                "key": key, "arch": arch, "tree": tree, "config": config,
                "status": "ok" if out else "fail", "start": job["start"], "seconds": job["seconds"],
                "image": os.path.join(out, arch_facts(arch)["KIMAGE"]) if out else None,
                "config_file": os.path.join(out, ".config") if out else None,
                "compiler": compiler_of(out) if out else None})

    def accel(self, arch, image, rootfs, accel="auto"):
        """tcg or kvm for this arch's boots. auto: KVM where the device is usable, the arch
        is the host's, and a 10-second boot with it ends (KVM guests hang on some hosts);
        else TCG. Decided once per arch and said once."""
        if accel != "auto":
            return accel
        with self.lock:
            if ("accel", arch) in self.done:
                return self.done[("accel", arch)]
            dev = os.environ.get("HARNESS_KVM_DEVICE", "/dev/kvm")
            host = {"x86_64": "x86_64", "aarch64": "arm64"}.get(os.uname().machine)
            if not os.path.exists(dev):
                choice, why = "tcg", f"{dev} absent"
            elif not os.access(dev, os.R_OK | os.W_OK):
                choice, why = "tcg", f"{dev} not usable"
            elif arch != host:
                choice, why = "tcg", f"{arch} is not this machine's arch"
            else:
                p = subprocess.run([os.path.join(ROOT, "qemu-run.sh"), "--arch", arch, "--kernel", image,
                                    "--rootfs", rootfs, "--accel", "kvm", "--exec", "true", "--timeout", "10"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                choice, why = ("kvm", "a 10-second boot with KVM ended") if p.returncode == 0 else \
                    ("tcg", f"a 10-second boot with KVM did not end well ({outcome_of(p.returncode)})")
            self.done[("accel", arch)] = choice
        log(f"matrix: {arch}: {choice.upper()} ({why})")
        return choice

    def rootfs(self, arch):
        return self.get(("rootfs", arch), [os.path.join(ROOT, "rootfs", "build.sh"), arch])

    def probe(self, arch):
        return self.get(("probe", arch), [os.path.join(ROOT, "scripts", "guest.sh"), arch])


def parse_probe(text):
    """Observations ("# obs: name=value") and probe failures ("not ok") from the KTAP."""
    obs, broken = {}, []
    for line in text.splitlines():
        m = re.match(r"# obs: ([^=]+)=(.*)$", line)
        if m:
            obs[m.group(1)] = m.group(2)
        elif line.startswith("not ok"):
            broken.append(line)
    return obs, broken


def compare(scen, kname, arch, obs, broken):
    """One check per expected observation of the scenario, plus one per probe failure."""
    checks = [{"name": "probe", "expected": "ok", "got": b, "pass": False} for b in broken]
    for key, want in scen.get("expect", {}).items():
        want = matrixspec.expected(want, kname, arch)
        if want is None:
            continue
        got = obs.get(key, "missing")
        checks.append({"name": key, "expected": want, "got": got, "pass": got == want})
    return checks


def judge(scen, kname, arch, outcome, obs, broken):
    """A cell's checks: the outcome kernel kname must reach on arch and, when the payload
    ran, every value it must show (harness/hold.py judges recorded cells with it too)."""
    want = matrixspec.expected(scen.get("outcome", "ok"), kname, arch)
    checks = [{"name": "outcome", "expected": want, "got": outcome, "pass": outcome == want}]
    if outcome == "ok":
        checks += compare(scen, kname, arch, obs, broken)
    return checks


def outcome_of(rc):
    if rc == 0:
        return "ok"
    if rc == 123:
        # qemu-run.sh saw systemd's "Freezing execution." and then silence.
        return "freeze"
    return {124: "timeout", 126: "kernel-problem", 127: "no-result", 125: "harness-error"}.get(rc, f"exit-{rc}")


# A boot that met lab trouble (harness.LAB_OUTCOMES) is retried once; if it persists it is
# reported as lab trouble (ERROR), apart from the kernel's verdicts (FAIL).


def write_result(cdir, res):
    atomic.write_json(os.path.join(cdir, "result.json"), res)


def console_tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def boot(cmd):
    """One boot through qemu-run.sh: (outcome, qemu-run.sh's stderr, start, seconds)."""
    start = time.time()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return outcome_of(p.returncode), p.stderr.strip(), start, time.time() - start


def cell_timeouts(facts, args):
    """(boot stage, whole boot) in seconds: the arch's, or --timeout for the whole."""
    boot_s = int(facts.get("BOOT_TIMEOUT") or 150)
    total = args.timeout or boot_s + int(facts.get("PAYLOAD_TIMEOUT") or 240)
    return min(boot_s, total), total


def run_cell(cell, spec, prep, rundir, args):
    kname, arch, sname = cell
    kernel = spec.kernels[kname]
    scen = spec.scenarios[sname]
    cdir = os.path.join(rundir, f"{arch}.{kname}.{sname}")
    os.makedirs(cdir, exist_ok=True)
    res = {"kernel": kname, "arch": arch, "scenario": sname, "checks": [], "outcome": None}
    start = time.time()
    res["start"] = round(start, 3)
    expected_outcome = matrixspec.expected(scen.get("outcome", "ok"), kname, arch)
    try:
        image = prep.kernel(arch, kernel["tree"], kernel["config"])
        rootfs = prep.rootfs(arch)
        probe = prep.probe(arch)
    except RuntimeError as e:
        # Nothing booted: a build step failed. Lab trouble of its own kind (MISS), with
        # a result.json like every other cell's.
        res.update(outcome="build-error", error=str(e), lab=True, seconds=round(time.time() - start, 1))
        res["checks"].append({"name": "outcome", "expected": expected_outcome, "got": "build-error",
                              "pass": False, "lab": True})
        write_result(cdir, res)
        return res
    script = os.path.join(cdir, "payload.sh")
    facts = arch_facts(arch)
    # @KEY@ in a step is the arch data file's KEY (e.g. where the page tables are dumped).
    steps = [re.sub(r"@([A-Z_]+)@", lambda m: facts.get(m.group(1), m.group(0)), s)
             for s in scen["steps"]]
    with open(script, "w") as f:
        f.write("#!/bin/sh\n# probe steps of scenario %s\nexec /harness/selinux-probe %s\n"
                % (sname, " ".join(shlex.quote(s) for s in steps)))
    boot_timeout, timeout = cell_timeouts(facts, args)
    console = os.path.join(cdir, "console.log")
    cmd = [os.path.join(ROOT, "qemu-run.sh"), "--arch", arch, "--kernel", image,
           "--rootfs", rootfs, "--script", script, "--files", probe,
           "--timeout", str(timeout), "--boot-timeout", str(boot_timeout), "--log", console,
           "--out", os.path.join(cdir, "probe.ktap"), "--argv-out", os.path.join(cdir, "qemu-argv.json")]
    if scen.get("append"):
        cmd += ["--append", scen["append"]]
    if scen.get("mode"):
        cmd += ["--selinux-mode", scen["mode"]]
    cmd += ["--accel", prep.accel(arch, image, rootfs, getattr(args, "accel", "auto"))]
    with open(os.path.join(cdir, "repro.sh"), "w") as f:
        f.write("#!/bin/sh\n# Re-run this cell alone:\n#   make matrix ONLY=kernel=%s,arch=%s,scenario=%s\n"
                "# or boot it by hand (after make kernel/rootfs):\n%s\n"
                % (kname, arch, sname, " ".join(shlex.quote(c) for c in cmd)))
    outcome, harness, boot_start, boot_s = boot(cmd)
    if outcome in LAB_OUTCOMES and outcome != expected_outcome and args.retries:
        # Once more before anyone reads it as the kernel's doing; the first try is kept.
        log(f"{arch} {kname} {sname}: lab trouble ({outcome}), booting it once more")
        res["first_try"] = {"outcome": outcome, "harness": harness, "seconds": round(boot_s, 1)}
        if os.path.exists(console):
            os.replace(console, os.path.join(cdir, "console.first-try.log"))
        outcome, harness, boot_start, boot_s = boot(cmd)
    res["outcome"] = outcome
    res["harness"] = harness
    res["boot_start"] = round(boot_start, 3)
    res["boot_seconds"] = round(boot_s, 1)
    res["timeouts"] = {"boot": boot_timeout, "total": timeout}
    res["seconds"] = round(time.time() - start, 1)
    ktap = ""
    if os.path.exists(os.path.join(cdir, "probe.ktap")):
        ktap = open(os.path.join(cdir, "probe.ktap"), errors="replace").read()
    obs, broken = parse_probe(ktap)
    res["observed"] = obs
    res["checks"] += judge(scen, kname, arch, outcome, obs, broken)
    if outcome in LAB_OUTCOMES and outcome != expected_outcome:
        res["lab"] = res["checks"][0]["lab"] = True
        res["console_tail"] = console_tail(console)
    if not all(c["pass"] for c in res["checks"]):
        # Now, while the inputs are the ones this boot used: the script records their hashes.
        try:
            res["repro"] = os.path.basename(repro.write_standalone(
                cdir, kernel=image, rootfs=rootfs, files=probe, argv=os.path.join(cdir, "qemu-argv.json"),
                config=os.path.join(image[:-len(facts["KIMAGE"])], ".config"), payload=script,
                selinux_mode=scen.get("mode"), timeout=timeout))
        except repro.ReproError as e:
            log(f"{arch} {kname} {sname}: no stand-alone reproducer: {e}")
    write_result(cdir, res)
    return res


def differential(results, spec):
    """Kernels that must agree: same arch, same scenario, every observation equal."""
    checks = []
    by = {(r["kernel"], r["arch"], r["scenario"]): r for r in results}
    for pair in spec.agree:
        a, b = pair["kernels"]
        for (k, arch, sname), ra in sorted(by.items()):
            if k != a or (b, arch, sname) not in by:
                continue
            rb = by[(b, arch, sname)]
            # A cell that did not reach ok ran no probe: only the outcomes compare.
            both_ran = ra["outcome"] == rb["outcome"] == "ok"
            keys = sorted(set(ra.get("observed", {})) | set(rb.get("observed", {}))) if both_ran else []
            diff = []
            exc = pair.get("except", {})
            if ra["outcome"] != rb["outcome"] and "outcome" not in exc and f"{sname}/outcome" not in exc:
                diff.append(f"outcome {ra['outcome']} != {rb['outcome']}")
            for key in keys:
                if key in exc or f"{sname}/{key}" in exc:
                    continue
                va = ra.get("observed", {}).get(key, "missing")
                vb = rb.get("observed", {}).get(key, "missing")
                if va != vb:
                    diff.append(f"{key}: {va!r} != {vb!r}")
            checks.append({"name": f"{a} == {b} on {arch} {sname}", "pass": not diff,
                           "diff": diff, "compared": len(keys) + 1})
    return checks


def write_reports(rundir, results, diffs, changes=None):
    lines = []
    scenarios = []
    for r in results:
        if r["scenario"] not in scenarios:
            scenarios.append(r["scenario"])
    for sname in scenarios:
        rows = [r for r in results if r["scenario"] == sname]
        keys = []
        for r in rows:
            for c in r["checks"]:
                if c["name"] not in keys:
                    keys.append(c["name"])
        lines.append(f"== scenario {sname}")
        head = ["cell"] + keys
        table = [head]
        for r in rows:
            cells = {c["name"]: ("ok" if c["pass"] else ("LAB:" if c.get("lab") else "UNEXPECTED:") + c["got"])
                     for c in r["checks"]}
            table.append([f"{r['arch']} {r['kernel']}"] + [cells.get(k, "-") for k in keys])
        # Transposed: observations as rows read better than 30 columns.
        width = max(len(k) for k in head)
        for i, k in enumerate(head):
            cellvals = [table[j][i] for j in range(1, len(table))]
            if i == 0:
                lines.append(k.ljust(width) + "  " + "  ".join(v.ljust(22) for v in cellvals))
            else:
                lines.append(k.ljust(width) + "  " + "  ".join(v[:40].ljust(22) for v in cellvals))
        lines.append("")
    if diffs:
        lines.append("== differential")
        for d in diffs:
            lines.append(("ok    " if d["pass"] else "FAIL  ") + d["name"]
                         + ("" if d["pass"] else ": " + "; ".join(d["diff"][:5])))
        lines.append("")
    lab = [r for r in results if r.get("lab")]
    if lab:
        lines.append("== lab trouble (ERROR: the boot did not give the kernel a chance; not a kernel verdict)")
        for r in lab:
            first = r.get("first_try", {}).get("outcome")
            lines.append(f"{r['arch']} {r['kernel']} {r['scenario']}: {r['outcome']}"
                         + (f" (first try: {first}, then again)" if first else "")
                         + (f": {r['error']}" if r.get("error") else ""))
            lines += ["    " + l for l in r.get("console_tail", "").splitlines()[-5:]]
        lines.append("")
    if changes is not None:
        lines.append("== compared with the baseline run")
        for kind, cells in changes.items():
            lines.append(f"{kind}: {len(cells)}" + (": " + ", ".join(cells) if cells and kind != "not in the baseline" else ""))
        lines.append("")
    failing = [r for r in results if not all(c["pass"] for c in r["checks"])]
    if failing:
        lines.append("== to reproduce a failing cell")
        for r in failing:
            lines.append(f"make matrix ONLY=kernel={r['kernel']},arch={r['arch']},scenario={r['scenario']}")
    open(os.path.join(rundir, "summary.txt"), "w").write("\n".join(lines) + "\n")

    # KTAP: a test per cell with its checks as subtests, then the differential tests.
    k = ["KTAP version 1", f"1..{len(results) + len(diffs)}"]
    for i, r in enumerate(results, 1):
        k.append("    KTAP version 1")
        k.append(f"    1..{len(r['checks'])}")
        for j, c in enumerate(r["checks"], 1):
            k.append(f"    {'ok' if c['pass'] else 'not ok'} {j} {c['name']}"
                     + ("" if c["pass"] else f" # expected {c['expected']!r}, got {c['got']!r}"))
        ok = all(c["pass"] for c in r["checks"])
        k.append(f"{'ok' if ok else 'not ok'} {i} {r['arch']}.{r['kernel']}.{r['scenario']}"
                 + (f" # lab trouble: {r['outcome']}" if r.get("lab") else ""))
    for i, d in enumerate(diffs, len(results) + 1):
        k.append(f"{'ok' if d['pass'] else 'not ok'} {i} agree: {d['name']}")
    open(os.path.join(rundir, "results.ktap"), "w").write("\n".join(k) + "\n")

    suite = ET.Element("testsuites")
    for r in results:
        ts = ET.SubElement(suite, "testsuite", name=f"{r['arch']}.{r['kernel']}.{r['scenario']}",
                           tests=str(len(r["checks"])),
                           failures=str(sum(not c["pass"] and not c.get("lab") for c in r["checks"])),
                           errors=str(sum(not c["pass"] and bool(c.get("lab")) for c in r["checks"])))
        for c in r["checks"]:
            tc = ET.SubElement(ts, "testcase", classname=ts.get("name"), name=c["name"])
            if not c["pass"]:
                # Lab trouble is a JUnit error (the test could not run), a kernel's verdict a failure.
                el = ET.SubElement(tc, "error" if c.get("lab") else "failure",
                                   message=f"expected {c['expected']!r}, got {c['got']!r}")
                if c.get("lab"):
                    el.text = r.get("console_tail", "")
    ts = ET.SubElement(suite, "testsuite", name="differential", tests=str(len(diffs)),
                       failures=str(sum(not d["pass"] for d in diffs)))
    for d in diffs:
        tc = ET.SubElement(ts, "testcase", classname="differential", name=d["name"])
        if not d["pass"]:
            ET.SubElement(tc, "failure", message="; ".join(d["diff"]))
    ET.ElementTree(suite).write(os.path.join(rundir, "junit.xml"), encoding="unicode",
                                xml_declaration=True)


def write_run_json(rundir, set_name, start, results, diffs, prep, baseline, only="", shard=None):
    """run.json: what the run was (set, time, builds, the agree checks) and a job per build
    step and per boot, for the report page, KCIDB and the timeline. Written last, atomically."""
    jobs = list(prep.jobs)
    for r in results:
        if "boot_start" in r:
            jobs.append({"name": f"{r['arch']} {r['kernel']} {r['scenario']}", "kind": "boot",
                         "start": r["boot_start"], "seconds": r["boot_seconds"],
                         "status": "ok" if all(c["pass"] for c in r["checks"]) else "unexpected"})
    jobs.sort(key=lambda j: j["start"])
    doc = {"set": set_name, "only": only, "shard": shard,
           "started": round(start, 3), "seconds": round(time.time() - start, 1),
           "patchset_hash": kcidb.patchset_hash(kcidb.series_files()),
           "baseline": os.path.relpath(baseline, rundir) if baseline else None,
           "agree": diffs, "builds": [{k: v for k, v in b.items() if k != "key"} for b in prep.builds],
           "jobs": jobs}
    atomic.write_json(os.path.join(rundir, "run.json"), doc)


def verdicts(results):
    """{cell name: ok | unexpected | lab} of a run's results."""
    out = {}
    for r in results:
        name = f"{r['arch']} {r['kernel']} {r['scenario']}"
        out[name] = "lab" if r.get("lab") else "ok" if all(c["pass"] for c in r["checks"]) else "unexpected"
    return out


def read_results(rundir):
    """The result.json files of a results folder (unreadable ones are left out)."""
    out = []
    for name in sorted(os.listdir(rundir)):
        try:
            with open(os.path.join(rundir, name, "result.json")) as f:
                out.append(json.load(f))
        except (OSError, ValueError):
            continue
    return out


def find_baseline(args, rundir):
    """--baseline DIR, or the newest other run of the same set (by its run.json), or None."""
    if args.baseline == "none":
        return None
    if args.baseline:
        return args.baseline
    best = None
    for name in os.listdir(args.results):
        d = os.path.join(args.results, name)
        if os.path.abspath(d) == os.path.abspath(rundir):
            continue
        try:
            with open(os.path.join(d, "run.json")) as f:
                run = json.load(f)
        except (OSError, ValueError):
            continue
        if run.get("set") == args.set and (best is None or run.get("started", 0) > best[0]):
            best = (run.get("started", 0), d)
    return best[1] if best else None


def compare_with(base, results):
    """New failures, fixed cells and cells still failing, against a previous run's cells
    (only the cells both runs have). Lab trouble is its own kind: neither fixed nor new."""
    before, now = verdicts(read_results(base)), verdicts(results)
    both = [c for c in now if c in before]
    return {
        "new failures": [c for c in both if before[c] == "ok" and now[c] == "unexpected"],
        "fixed": [c for c in both if before[c] != "ok" and now[c] == "ok"],
        "still failing": [c for c in both if before[c] == "unexpected" and now[c] == "unexpected"],
        "lab trouble now": [c for c in both if now[c] == "lab"],
        "not in the baseline": [c for c in now if c not in before],
    }


def export_results(rundir, matrix_path):
    """KCIDB JSON and the report page of the run (harness.kcidb, harness.report); False if
    either could not be written (its one-line error is logged)."""
    ok = True
    env = dict(os.environ, PYTHONPATH=ROOT)
    for mod, extra in (("harness.kcidb", ["--matrix", matrix_path]), ("harness.report", [])):
        p = subprocess.run([sys.executable, "-m", mod, rundir] + extra, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            ok = False
            log(f"matrix: {mod} failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
    return ok


def bounded_int(lo, hi):
    def parse(text):
        if not re.fullmatch(r"[0-9]{1,7}", text.strip()) or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {lo} to {hi}")
        return int(text)
    return parse


def plain_name(text):
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a plain name (letters, digits, '.', '_', '-')")
    return text


def shard_spec(text):
    m = re.fullmatch(r"([0-9]{1,4})/([0-9]{1,4})", text.strip())
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise argparse.ArgumentTypeError(f"{text!r} is not I/N with 1 <= I <= N")
    return int(m.group(1)), int(m.group(2))


MAX_TIMEOUT = 86400  # qemu-run.sh's bound
MAX_JOBS = 64


def main():
    ap = ArgParser("matrix", description=__doc__.splitlines()[0])
    ap.add_argument("--matrix", default=os.path.join(ROOT, "matrix.yaml"))
    ap.add_argument("--set", default="default", help="a set from matrix.yaml (default, test)")
    ap.add_argument("--only", default="", help="filters: key=value[,key=value...]")
    ap.add_argument("--results", default=os.path.join(ROOT, "results"))
    ap.add_argument("--run", default=None, type=plain_name, help="name of the results folder")
    ap.add_argument("--timeout", type=bounded_int(1, MAX_TIMEOUT), default=None,
                    help=f"seconds per boot in all (1 to {MAX_TIMEOUT}; default: the arch's boot and payload timeouts)")
    ap.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto",
                    help="auto (default): KVM where it works (a 10-second boot proves it), else TCG")
    ap.add_argument("--retries", type=bounded_int(0, 3), default=1,
                    help="boots again a cell that met lab trouble (timeout, no result), this many times (default 1)")
    ap.add_argument("--baseline", default=None,
                    help="a previous results folder to compare with (default: the last run of the same set; 'none': no comparison)")
    ap.add_argument("--jobs", type=bounded_int(1, MAX_JOBS), default=None,
                    help="guests booted at once (default: JOBS, else the number of cores)")
    ap.add_argument("--shard", type=shard_spec, default=None,
                    help="I/N: only the I-th of N shards of the selected cells (harness/pipeline.py's split)")
    ap.add_argument("--prebuilt", action="store_true",
                    help="boot the kernels already in build/kernel/ (built by another job); build none")
    ap.add_argument("--list", action="store_true", help="list the selected cells and stop")
    ap.add_argument("--list-builds", action="store_true",
                    help="list the kernels the selected cells boot (ARCH TREE CONFIG), once each, and stop")
    args = ap.parse_args()
    if args.jobs is None:
        env = os.environ.get("JOBS") or ""
        if env:
            try:
                args.jobs = bounded_int(1, MAX_JOBS)(env)
            except argparse.ArgumentTypeError as e:
                ap.error(f"JOBS: {e}")
        else:
            args.jobs = min(os.cpu_count() or 1, MAX_JOBS)

    try:
        spec = matrixspec.load(args.matrix, ROOT)
        cells = spec.cells(args.set, args.only)
    except matrixspec.MatrixError as e:
        print(f"matrix: error: {e}", file=sys.stderr)
        return 2
    if args.shard:
        from harness.pipeline import shard
        cells = shard(cells, *args.shard)
    if not cells:
        print(f"matrix: error: no cell matches set '{args.set}' and ONLY='{args.only}'"
              + (f" in shard {args.shard[0]}/{args.shard[1]}" if args.shard else ""), file=sys.stderr)
        return 2
    if args.list or args.list_builds:
        lines = [" ".join(c) for c in cells]
        if args.list_builds:
            kernels = [(a, spec.kernels[k]["tree"], spec.kernels[k]["config"]) for k, a, _ in cells]
            lines = [" ".join(b) for b in dict.fromkeys(kernels)]
        try:
            for line in lines:
                print(line)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader had enough (--list | head -1): not an error. Python would complain
            # again flushing stdout at exit, so stdout goes to /dev/null first.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0

    run = args.run or datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rundir = os.path.join(args.results, run)
    os.makedirs(rundir, exist_ok=True)
    start = time.time()
    # A build step's progress, between the cells' lines: "[12m03s] [kernel.sh] arm 6.1 ..."
    prep = Prep(os.path.join(rundir, "build.log"), prebuilt=args.prebuilt,
                progress=lambda line: Progress.update(f"[{fmt_time(time.time() - start)}] {line}"))
    log(f"matrix: {len(cells)} cells, results in {os.path.relpath(rundir, ROOT)}")
    log(f"matrix: {args.jobs} guest(s) at a time")

    finished = []

    def eta():
        done = {(r["kernel"], r["arch"], r["scenario"]) for r in finished}
        builds = {("kernel", a, spec.kernels[k]["tree"], spec.kernels[k]["config"])
                  for k, a, s in cells if (k, a, s) not in done}
        return estimate([r.get("boot_seconds") for r in finished], len(cells) - len(finished),
                        args.jobs, 0 if args.prebuilt else len(builds - set(prep.done)))

    def head(i):
        failing = sum(not all(c["pass"] for c in r["checks"]) for r in finished)
        return (f"[{i}/{len(cells)} {fmt_time(time.time() - start)}, {len(finished)} done"
                f"{f', {failing} not as expected' if failing else ''}]")

    def one(numbered):
        i, cell = numbered
        kname, arch, sname = cell
        Progress.update(f"{head(i)} {arch} {kname} {sname}: building and booting ({eta()})")
        r = run_cell(cell, spec, prep, rundir, args)
        finished.append(r)
        bad = [c for c in r["checks"] if not c["pass"]]
        verdict = "as expected" if not bad else ("LAB TROUBLE: " if r.get("lab") else "UNEXPECTED: ") + ", ".join(
            f"{c['name']}={c['got']!r} (want {c['expected']!r})" for c in bad[:4])
        line = (f"{head(i)} {arch} {kname} {sname}: "
                f"{r['outcome']}, {len(r['checks']) - len(bad)}/{len(r['checks'])} {verdict}"
                + (f" ({r.get('error')})" if r.get("error") else "") + f"; {eta()}")
        # On a terminal only what needs reading stays on the screen.
        (log if bad else Progress.update)(line)
        return r

    # Results come back in cell order whatever order the guests finish in.
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, enumerate(cells, 1)))
    diffs = differential(results, spec)
    for d in diffs:
        log(f"agree {d['name']}: " + ("same" if d["pass"] else "DIFFERENT: " + "; ".join(d["diff"][:4])))
    base = find_baseline(args, rundir)
    changes = compare_with(base, results) if base else None
    write_reports(rundir, results, diffs, changes)
    write_run_json(rundir, args.set, start, results, diffs, prep, base,
                   only=args.only, shard=f"{args.shard[0]}/{args.shard[1]}" if args.shard else None)
    exported = export_results(rundir, args.matrix)
    if changes:
        log(f"matrix: against {os.path.relpath(base, ROOT)}: " + "; ".join(
            f"{len(v)} {k}" for k, v in changes.items()) + " (summary.txt lists them)")
    nchecks = sum(len(r["checks"]) for r in results) + len(diffs)
    nbad = sum(not c["pass"] for r in results for c in r["checks"]) + sum(not d["pass"] for d in diffs)
    badcells = sum(not all(c["pass"] for c in r["checks"]) and not r.get("lab") for r in results)
    labcells = sum(bool(r.get("lab")) for r in results)
    log(f"matrix: {len(cells)} cells in {fmt_time(time.time() - start)}; "
        f"{nchecks - nbad} checks as expected, {nbad} unexpected in {badcells} cells"
        f"{f', lab trouble (ERROR, not a kernel verdict) in {labcells} cells' if labcells else ''}; "
        f"summary: {os.path.relpath(os.path.join(rundir, 'summary.txt'), ROOT)}, "
        f"report: {os.path.relpath(os.path.join(rundir, 'index.html'), ROOT)}")
    print(os.path.relpath(rundir, ROOT))
    return 1 if nbad or not exported else 0


if __name__ == "__main__":
    sys.exit(main())
