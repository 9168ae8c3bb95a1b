"""The report page of a matrix run: one static HTML file a person opens from disk.

    python3 -m harness.report RUNDIR    writes RUNDIR/index.html, prints its path last

Per arch a grid (rows: kernels, columns: scenarios) with each cell's verdict in text and
in a solid colour of its own, each cell a link to its section: every observation
(expected, got, pass) and relative links to its console.log, probe.ktap and repro.sh.
Then the agree checks with their differences, then a timeline of the build and boot jobs
(inline SVG, one bar per job). No JavaScript and no external URL: the page works from a
copied results folder, offline.

It reads results/<run>/run.json when the run wrote one (the agree checks and the jobs);
without it, the agree checks come from results.ktap (and their differences from
summary.txt) and the timeline from the cells' own times. A cell folder without
result.json (matrix.py writes none when a cell's kernel, image or probe does not build)
still gets its grid cell, from results.ktap when it names it.

Everything read from the run is escaped: an observation is data, never markup. Bad
input (no such folder, no result.json, malformed JSON) is one line on stderr and exit 2,
and index.html is only ever replaced whole (a temp file, then a rename).
"""
import ast
import datetime
import html
import json
import os
import re
import sys
import urllib.parse

from harness import LAB_OUTCOMES, atomic
from harness.cli import made


# Verdict -> (background, text colour). Each background is a solid colour used nowhere
# else on the page, so a screenshot's grid cells can be counted by colour.
VERDICT_COLOURS = {
    "expected": ("#a5d6a7", "#000000"),
    "unexpected": ("#c62828", "#ffffff"),
    "lab": ("#ffb300", "#000000"),
    "not-run": ("#d0d0d0", "#333333"),
}
JOB_COLOURS = {"build": "#5c6bc0", "boot": "#26a69a"}

# A cell folder is <arch>.<kernel>.<scenario>: arches and scenarios have no dot, kernels
# may ("6.1-patched"). Anything else in the run folder is not a cell.
CELL_DIR = re.compile(r"^([a-z0-9_]+)\.([A-Za-z0-9_.+-]+)\.([A-Za-z0-9_+-]+)$")
KTAP_CELL = re.compile(r"^(ok|not ok) \d+ (\S+)$")
KTAP_CHECK = re.compile(r"^    (ok|not ok) \d+ (\S+)(?: # expected (.*), got (.*))?$")
KTAP_AGREE = re.compile(r"^(ok|not ok) \d+ agree: (.+)$")
CELL_FILES = ("console.log", "probe.ktap", "repro.sh", "payload.sh", "result.json")
RUN_FILES = ("summary.txt", "results.ktap", "junit.xml", "build.log", "run.json")
CONSOLE_TAIL_LINES = 30


class ReportError(Exception):
    """Bad input: the message is the one line the user sees."""


# --- reading the run -------------------------------------------------------------------

def read_text(path, limit=None):
    """A text file of the run, or None when absent. limit: only its last bytes (consoles
    can be megabytes and the page shows their tail)."""
    try:
        with open(path, "rb") as f:
            if limit is not None:
                f.seek(max(0, os.fstat(f.fileno()).st_size - limit))
            return f.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


def read_json(path):
    text = read_text(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: malformed JSON: {e.msg} at line {e.lineno}") from None


def need(doc, key, kind, path, optional=False):
    """doc[key] checked against kind; the error names the file and the key."""
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: not a JSON object")
    if key not in doc and optional:
        return None
    value = doc.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ReportError(f"{path}: {key}: must be a {names}")
    return value


def load_result(path):
    """A cell's result.json, its shape checked: the fields the page shows."""
    doc = read_json(path)
    for key in ("kernel", "arch", "scenario"):
        need(doc, key, str, path)
    for i, check in enumerate(need(doc, "checks", list, path)):
        need(check, "name", str, f"{path}: checks[{i}]")
        need(check, "pass", bool, f"{path}: checks[{i}]")
    need(doc, "observed", dict, path, optional=True)
    for key in ("start", "seconds", "boot_start", "boot_seconds"):
        need(doc, key, (int, float), path, optional=True)
    return doc


def load_run_json(path):
    """run.json (optional): the agree checks and the jobs, their shape checked."""
    doc = read_json(path)
    if doc is None:
        return None
    for i, a in enumerate(need(doc, "agree", list, path)):
        need(a, "name", str, f"{path}: agree[{i}]")
        need(a, "pass", bool, f"{path}: agree[{i}]")
        need(a, "diff", list, f"{path}: agree[{i}]")
    for i, j in enumerate(need(doc, "jobs", list, path)):
        where = f"{path}: jobs[{i}]"
        need(j, "name", str, where)
        need(j, "kind", str, where)
        need(j, "start", (int, float), where)
        need(j, "seconds", (int, float), where)
    need(doc, "started", (int, float), path, optional=True)
    return doc


def parse_ktap(text):
    """results.ktap: the cells in run order with their check lines, and the agree checks.

    A failing check line carries "# expected X, got Y" (Python reprs); a passing one only
    its name, so for a cell known from here alone the passing values are unknown."""
    cells, agree, pending = {}, [], []
    for line in (text or "").splitlines():
        m = KTAP_CHECK.match(line)
        if m:
            ok, name, want, got = m.groups()
            pending.append({"name": name, "pass": ok == "ok",
                            "expected": literal(want), "got": literal(got)})
            continue
        m = KTAP_AGREE.match(line)
        if m:
            agree.append({"name": m.group(2), "pass": m.group(1) == "ok", "diff": []})
            continue
        m = KTAP_CELL.match(line)
        if m:
            cells[m.group(2)] = pending
        if not line.startswith("    "):
            pending = []
    return cells, agree


def literal(text):
    if text is None:
        return "(not recorded)"
    try:
        return str(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return text


def summary_diffs(text):
    """summary.txt's differential lines: 'FAIL  <name>: <diff; diff>' -> name: text."""
    out = {}
    for line in (text or "").splitlines():
        if line.startswith("FAIL  ") and ": " in line:
            name, diff = line[6:].split(": ", 1)
            out[name] = diff
    return out


def cell_from_dir(rundir, name, ktap_cells):
    """One grid cell: its result.json, or what results.ktap says when there is none."""
    cdir = os.path.join(rundir, name)
    m = CELL_DIR.match(name)
    arch, kernel, scenario = m.groups()
    cell = {"dir": name, "arch": arch, "kernel": kernel, "scenario": scenario,
            "files": [f for f in CELL_FILES if os.path.isfile(os.path.join(cdir, f))]}
    result = load_result(os.path.join(cdir, "result.json")) if "result.json" in cell["files"] else None
    if result is not None:
        cell.update(arch=result["arch"], kernel=result["kernel"], scenario=result["scenario"])
        cell["result"] = result
        cell["checks"] = result["checks"]
    else:
        cell["result"] = None
        cell["checks"] = ktap_cells.get(name, [])
    cell["verdict"], cell["label"] = verdict(cell)
    return cell


def load_run(rundir):
    """Everything the page shows, read and checked before a byte is written."""
    if not os.path.isdir(rundir):
        raise ReportError(f"{rundir}: no such folder")
    ktap_cells, ktap_agree = parse_ktap(read_text(os.path.join(rundir, "results.ktap")))
    names = {n for n in os.listdir(rundir)
             if CELL_DIR.match(n) and os.path.isdir(os.path.join(rundir, n))}
    if not any(os.path.isfile(os.path.join(rundir, n, "result.json")) for n in names):
        raise ReportError(f"{rundir}: no <arch>.<kernel>.<scenario>/result.json in it: not a matrix run")
    # A cell results.ktap names but whose folder is gone is still a cell of the run.
    names |= {n for n in ktap_cells if CELL_DIR.match(n)}
    order = {n: i for i, n in enumerate(ktap_cells)}
    cells = [cell_from_dir(rundir, n, ktap_cells)
             for n in sorted(names, key=lambda n: (order.get(n, len(order)), n))]
    run = load_run_json(os.path.join(rundir, "run.json"))
    if run is not None:
        agree, agree_from = run["agree"], "run.json"
    else:
        diffs = summary_diffs(read_text(os.path.join(rundir, "summary.txt")))
        agree = [dict(a, diff=[diffs[a["name"]]] if a["name"] in diffs else []) for a in ktap_agree]
        agree_from = "results.ktap and summary.txt (no run.json)"
    return {"dir": rundir, "name": os.path.basename(os.path.abspath(rundir)), "cells": cells,
            "agree": agree, "agree_from": agree_from, "run": run,
            "files": [f for f in RUN_FILES if os.path.isfile(os.path.join(rundir, f))]}


def verdict(cell):
    """(key, text) of a cell: as expected, UNEXPECTED n, lab trouble (outcome), no result."""
    checks = cell["checks"]
    if not checks:
        return "lab", "lab trouble: no result"
    failing = [c for c in checks if not c["pass"]]
    if not failing:
        return "expected", "as expected"
    outcome = next((c for c in failing if c["name"] == "outcome"), None)
    if outcome is not None and outcome.get("got") in LAB_OUTCOMES:
        return "lab", f"lab trouble: {outcome['got']}"
    return "unexpected", f"UNEXPECTED {len(failing)}"


# --- rendering -------------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def esc(value):
    """Text from the run as HTML text or attribute value: escaped, terminal colour codes
    and carriage returns dropped, other control characters shown as U+FFFD."""
    text = ANSI.sub("", str(value)).replace("\r", "")
    return html.escape(CONTROL.sub("\ufffd", text), quote=True)


def href(*parts):
    return esc("/".join(urllib.parse.quote(p) for p in parts))


def anchor(cell):
    return "cell-" + urllib.parse.quote(cell["dir"])


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def ordered(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def render_grid(arch, cells):
    """One arch's table: a row per kernel, a column per scenario, in run order."""
    mine = [c for c in cells if c["arch"] == arch]
    kernels = ordered(c["kernel"] for c in mine)
    scenarios = ordered(c["scenario"] for c in mine)
    at = {(c["kernel"], c["scenario"]): c for c in mine}
    rows = ["<tr><th></th>" + "".join(f'<th scope="col">{esc(s)}</th>' for s in scenarios) + "</tr>"]
    for k in kernels:
        tds = []
        for s in scenarios:
            c = at.get((k, s))
            if c is None:
                tds.append('<td class="notrun v-not-run" data-verdict="not-run">not run</td>')
            else:
                tds.append(f'<td class="cell v-{c["verdict"]}" data-cell="{esc(c["dir"])}" '
                           f'data-verdict="{c["verdict"]}"><a href="#{esc(anchor(c))}">'
                           f'{esc(c["label"])}</a></td>')
        rows.append(f'<tr><th scope="row">{esc(k)}</th>' + "".join(tds) + "</tr>")
    return (f'<section id="grid-{esc(arch)}"><h2>{esc(arch)}: {plural(len(mine), "cell")}</h2>\n'
            f'<table class="grid">\n' + "\n".join(rows) + "\n</table></section>")


def render_checks(cell):
    """Every check (expected, got, pass), then the observations no check looked at."""
    rows = []
    for c in cell["checks"]:
        cls = "" if c["pass"] else ' class="bad"'
        rows.append(f'<tr{cls}><td>{esc(c["name"])}</td><td>{esc(c.get("expected", ""))}</td>'
                    f'<td>{esc(c.get("got", ""))}</td>'
                    f'<td>{"as expected" if c["pass"] else "UNEXPECTED"}</td></tr>')
    checked = {c["name"] for c in cell["checks"]}
    observed = (cell["result"] or {}).get("observed") or {}
    for key, value in observed.items():
        if key not in checked:
            rows.append(f'<tr><td>{esc(key)}</td><td>(not checked)</td><td>{esc(value)}</td>'
                        f'<td>not checked</td></tr>')
    if not rows:
        return "<p>No check recorded.</p>"
    return ('<table class="checks"><tr><th>observation</th><th>expected</th><th>got</th>'
            "<th>pass</th></tr>\n" + "\n".join(rows) + "</table>")


def render_cell(rundir, cell):
    result = cell["result"] or {}
    links = " · ".join(f'<a href="{href(cell["dir"], f)}">{f}</a>' if f in cell["files"]
                       else f"{f} (missing)" for f in CELL_FILES)
    outcome = next((c.get("got") for c in cell["checks"] if c["name"] == "outcome"), None)
    facts = [f"outcome: {esc(result.get('outcome') or outcome or 'unknown')}"]
    if "seconds" in result:
        facts.append(f"{result['seconds']:.1f} s")
    parts = [f'<section class="detail" id="{esc(anchor(cell))}">',
             f'<h3>{esc(cell["arch"])} {esc(cell["kernel"])} {esc(cell["scenario"])}: '
             f'{esc(cell["label"])}</h3>',
             f"<p>{'; '.join(facts)}. {links}. "
             f'<a href="#grid-{esc(cell["arch"])}">back to the grid</a></p>']
    if cell["result"] is None:
        parts.append("<p>No result.json: the cell's kernel, guest image or probe did not build "
                     "(see build.log), or the run stopped before the cell ended. The checks "
                     "below are results.ktap's, if it names the cell.</p>")
    for key, title in (("error", "build error"), ("harness", "qemu-run.sh said")):
        if result.get(key):
            parts.append(f"<p>{title}:</p><pre>{esc(result[key])}</pre>")
    if cell["verdict"] != "expected":
        parts.append("<p>Rerun it alone: <code>make matrix ONLY=kernel="
                     f"{esc(cell['kernel'])},arch={esc(cell['arch'])},"
                     f"scenario={esc(cell['scenario'])}</code></p>")
    parts.append(render_checks(cell))
    if cell["verdict"] != "expected":
        parts.append(render_console_tail(rundir, cell))
    parts.append("</section>")
    return "\n".join(parts)


def render_console_tail(rundir, cell):
    text = read_text(os.path.join(rundir, cell["dir"], "console.log"), limit=64 * 1024)
    if not text:
        return ""
    tail = "\n".join(text.splitlines()[-CONSOLE_TAIL_LINES:])
    return f"<p>The console's last lines:</p><pre>{esc(tail)}</pre>"


def render_agree(run):
    agree = run["agree"]
    if not agree:
        return "<h2>Agree checks</h2><p>None in this run.</p>"
    rows = []
    for a in agree:
        diff = "".join(f"<li>{esc(d)}</li>" for d in a["diff"])
        cls = "" if a["pass"] else ' class="bad"'
        rows.append(f'<tr{cls}><td>{"same" if a["pass"] else "DIFFERENT"}</td>'
                    f'<td>{esc(a["name"])}</td><td><ul>{diff}</ul></td></tr>')
    bad = sum(not a["pass"] for a in agree)
    return (f"<h2>Agree checks: {len(agree) - bad} same, {bad} different</h2>"
            f"<p>Pairs of kernels that must show the same observations (matrix.yaml's agree). "
            f"From {esc(run['agree_from'])}.</p>"
            '<table class="checks"><tr><th>verdict</th><th>pair, arch, scenario</th>'
            "<th>differences</th></tr>\n" + "\n".join(rows) + "</table>")


def timeline_jobs(run):
    """The timeline's bars and a note on where they come from.

    run.json's jobs are exact. Without it, a cell's boot times (or its start and length,
    which include waiting for its kernel) place its bar; cells with no time at all are laid
    end to end, which hides any overlap."""
    if run["run"] is not None:
        jobs = [dict(j, kind="boot" if j["kind"] == "boot" else "build") for j in run["run"]["jobs"]]
        return jobs, "From run.json: every build step and every boot."
    timed = [c for c in run["cells"] if c["result"] and "seconds" in c["result"]]
    if not timed:
        return [], "No times recorded."
    if all("boot_start" in c["result"] and "boot_seconds" in c["result"] for c in timed):
        return ([cell_bar(c, c["result"]["boot_start"], c["result"]["boot_seconds"]) for c in timed],
                "No run.json: boots from the cells' own times; builds are not shown.")
    if all("start" in c["result"] for c in timed):
        return ([cell_bar(c, c["result"]["start"], c["result"]["seconds"]) for c in timed],
                "No run.json: bars from the cells' start times, so a bar includes waiting "
                "for the cell's kernel build; builds are not shown.")
    jobs, t = [], 0.0
    for c in timed:
        jobs.append(cell_bar(c, t, c["result"]["seconds"]))
        t += c["result"]["seconds"]
    return jobs, ("No start times recorded (a run from before run.json): the boots are laid "
                  "end to end, in results.ktap's order or else by name, so guests that booted "
                  "at once do not overlap here and the span is the sum of the cells' times, not "
                  "the wall clock. A cell's time counts from its start, so it includes waiting "
                  "for its kernel, image and probe builds, which have no bars of their own.")


def cell_bar(cell, start, seconds):
    return {"name": f"{cell['arch']} {cell['kernel']} {cell['scenario']}", "kind": "boot",
            "start": start, "seconds": seconds, "status": cell["verdict"]}


def nice_step(span):
    """An axis tick step giving at most about ten ticks."""
    for step in (1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200):
        if span / step <= 10:
            return step
    return 14400


def fmt_tick(t):
    """An axis label: exact, so ticks 30 s apart never read the same."""
    if t >= 3600:
        return f"{t // 3600}:{t // 60 % 60:02d} h"
    if t and t % 60 == 0:
        return f"{t // 60} min"
    if t < 120:
        return f"{t} s"
    return f"{t // 60}:{t % 60:02d} min"


def fmt_seconds(s):
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


def render_timeline(run):
    jobs, note = timeline_jobs(run)
    head = "<h2>Timeline</h2>"
    if not jobs:
        return head + f"<p>{esc(note)}</p>"
    jobs = sorted(jobs, key=lambda j: j["start"])
    t0 = min(j["start"] for j in jobs)
    span = max(max(j["start"] + j["seconds"] for j in jobs) - t0, 1.0)
    # Labels at about 6 px a character (10 px sans-serif); the whole fits in 960 px.
    label_w = min(12 + 6 * max(len(j["name"]) for j in jobs), 360)
    chart_w, row_h, top = 960 - label_w - 30, 14, 24
    scale = chart_w / span
    out = [f'<svg width="960" '
           f'height="{top + row_h * len(jobs) + 4}" font-family="sans-serif" font-size="10">']
    step = nice_step(span)
    for t in range(0, int(span) + 1, step):
        x = label_w + t * scale
        out.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{top + row_h * len(jobs)}" '
                   'stroke="#e6e6e6"/>')
        out.append(f'<text x="{x:.1f}" y="{top - 9}" text-anchor="middle">{fmt_tick(t)}</text>')
    for i, j in enumerate(jobs):
        y = top + i * row_h
        x = label_w + (j["start"] - t0) * scale
        w = max(j["seconds"] * scale, 1.0)
        status = str(j.get("status", ""))
        stroke = "" if status in ("ok", "expected", "") else ' stroke="#000000" stroke-width="1.5"'
        out.append(f'<text x="{label_w - 6}" y="{y + 10}" text-anchor="end">{esc(j["name"])}</text>')
        out.append(f'<rect class="job {j["kind"]}" x="{x:.1f}" y="{y + 2}" width="{w:.1f}" '
                   f'height="{row_h - 4}" fill="{JOB_COLOURS[j["kind"]]}"{stroke}>'
                   f'<title>{esc(j["name"])}: {j["seconds"]:.1f} s, {esc(status or "?")}</title></rect>')
    out.append("</svg>")
    totals = "; ".join(
        f"{kind}: {plural(sum(1 for j in jobs if j['kind'] == kind), 'job')}, "
        f"{fmt_seconds(sum(j['seconds'] for j in jobs if j['kind'] == kind))}"
        for kind in JOB_COLOURS if any(j["kind"] == kind for j in jobs))
    return (head + f"<p>{esc(note)} {totals}; from first start to last end {fmt_seconds(span)}. "
            "Bars: builds in blue, boots in teal; a black outline marks a job that failed "
            "or a boot that was not as expected.</p>\n" + "\n".join(out))


def style():
    verdicts = "\n".join(f".v-{k} {{ background: {bg}; color: {fg}; }}"
                         for k, (bg, fg) in VERDICT_COLOURS.items())
    return f"""body {{ font-family: sans-serif; margin: 16px; color: #111; background: #fff; }}
table.grid {{ border-collapse: separate; border-spacing: 4px; }}
table.grid th {{ font-size: 12px; font-weight: normal; text-align: left; max-width: 7em; }}
table.grid td {{ min-width: 7em; padding: 0; text-align: center; font-size: 12px; white-space: nowrap; }}
table.grid td a {{ display: block; padding: 10px 4px; color: inherit; text-decoration: none; }}
td.v-unexpected {{ font-weight: bold; }}
{verdicts}
table.checks {{ border-collapse: collapse; font-size: 12px; }}
table.checks td, table.checks th {{ border: 1px solid #bbb; padding: 2px 6px; text-align: left;
  vertical-align: top; }}
tr.bad td {{ background: #fbe3e3; }}
pre {{ background: #f4f4f4; padding: 6px; font-size: 11px; overflow-x: auto; }}
section.detail {{ border-top: 1px solid #ccc; margin-top: 12px; }}
section.detail:target {{ outline: 3px solid #1565c0; }}
ul {{ margin: 0; padding-left: 1.2em; }}"""


def render_header(run):
    """The run's name, set, time and totals, and links to its run-wide files."""
    cells = run["cells"]
    counts = {k: sum(c["verdict"] == k for c in cells) for k in ("expected", "unexpected", "lab")}
    facts = []
    r = run["run"] or {}
    if isinstance(r.get("set"), str):
        facts.append(f"set {esc(r['set'])}")
    if isinstance(r.get("started"), (int, float)):
        when = datetime.datetime.fromtimestamp(r["started"], datetime.timezone.utc)
        facts.append(f"started {when:%Y-%m-%d %H:%M:%S} UTC")
    if isinstance(r.get("seconds"), (int, float)):
        facts.append(f"took {fmt_seconds(r['seconds'])}")
    facts.append(f"{plural(len(cells), 'cell')}: {counts['expected']} as expected, "
                 f"{counts['unexpected']} UNEXPECTED, {counts['lab']} lab trouble")
    files = " · ".join(f'<a href="{href(f)}">{f}</a>' for f in run["files"])
    return f"<h1>Matrix run {esc(run['name'])}</h1>\n<p>{'; '.join(facts)}. {files}</p>"


def render_page(run):
    cells = run["cells"]
    grids = "\n".join(render_grid(a, cells) for a in ordered(c["arch"] for c in cells))
    details = "\n".join(render_cell(run["dir"], c) for c in cells)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>matrix run {esc(run['name'])}</title>
<style>
{style()}
</style></head><body>
{render_header(run)}
<p>A cell is <b>as expected</b> when every observation matches matrix.yaml;
<b>UNEXPECTED n</b> when n checks do not; <b>lab trouble</b> when the boot ended in a timeout,
no result, a harness error or a build error it did not expect (rerun it before reading
anything into it); <b>not run</b> when the run has no such cell. Click a cell for its
observations, console and reproducer.</p>
{grids}
{render_agree(run)}
{render_timeline(run)}
<h2>Cells</h2>
{details}
</body></html>
"""


def write_atomic(path, text):
    try:
        atomic.write_text(path, text)
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from None


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python3 -m harness.report RUNDIR", file=sys.stderr)
        return 2
    def make():
        out = os.path.join(argv[0], "index.html")
        write_atomic(out, render_page(load_run(argv[0])))
        return out
    return made("report", make, ReportError)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
