"""The report page (harness/report.py): one grid cell per result, everything from the run
escaped, bad input refused whole, the fallbacks without run.json, and the page as a
person sees it: Debian's chromium renders it and the screenshot's grid cells are counted
by their colours."""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "fast", "data", "report-run")
sys.path.insert(0, ROOT)
from harness import report  # noqa: E402

HOSTILE = "<script>alert(1)</script>"
# The data run: three cells as expected, one with an unexpected value, one timeout.
VERDICTS = {"expected": 3, "unexpected": 1, "lab": 1}


class Page(html.parser.HTMLParser):
    """What a test looks at: the grid cells (verdict, label), the not-run places, the
    timeline's bars, every script element."""

    def __init__(self, text):
        super().__init__()
        self.cells, self.notrun, self.bars, self.scripts, self._cell = [], 0, 0, 0, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "td" and "cell" in classes:
            self._cell = {"name": a["data-cell"], "verdict": a["data-verdict"], "label": ""}
            self.cells.append(self._cell)
        elif tag == "td" and "notrun" in classes:
            self.notrun += 1
        elif tag == "rect" and "job" in classes:
            self.bars += 1
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["label"] += data


@pytest.fixture
def run(tmp_path):
    d = tmp_path / "run"
    shutil.copytree(DATA, d)
    return d


def make_report(rundir):
    return subprocess.run(["/usr/bin/python3", "-m", "harness.report", str(rundir)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def page_of(rundir):
    p = make_report(rundir)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == os.path.join(str(rundir), "index.html")
    return (rundir / "index.html").read_text()


def result_dirs(rundir):
    return sorted(d.name for d in rundir.iterdir() if (d / "result.json").is_file())


# --- (a) the page parses and has one grid cell per result ------------------------------

def test_one_grid_cell_per_result(run):
    text = page_of(run)
    page = Page(text)
    # Self-contained: nothing fetched, no script.
    assert not re.search(r"https?:|src=|<link|<script", text)
    assert sorted(c["name"] for c in page.cells) == result_dirs(run)
    assert {v: sum(c["verdict"] == v for c in page.cells) for v in VERDICTS} == VERDICTS
    labels = {c["name"]: c["label"] for c in page.cells}
    assert labels["x86_64.6.1-stock.node-param"] == "UNEXPECTED 1"
    assert labels["x86_64.6.1-legacy.permissive"] == "lab trouble: timeout"
    # x86_64: 4 kernels x 4 scenarios, 4 cells; arm64: 1 x 1.
    assert page.notrun == 12


def test_cell_links_to_its_section_and_files(run):
    text = page_of(run)
    name = "x86_64.6.1-stock.node-param"
    assert f'href="#cell-{name}"' in text and f'id="cell-{name}"' in text
    for f in ("console.log", "probe.ktap", "repro.sh"):
        assert f'href="{name}/{f}"' in text
    assert "probe.ktap (missing)" in text  # the timeout cell has none


# --- (b) everything from the run is escaped ---------------------------------------------

def test_hostile_values_are_text(run):
    p = run / "x86_64.6.1-stock.node-param" / "result.json"
    r = json.loads(p.read_text())
    r["observed"]["cmd.unchecked"] = HOSTILE  # an observation no check looks at
    r["checks"][-1]["got"] = HOSTILE
    r["harness"] = HOSTILE
    p.write_text(json.dumps(r))
    with open(p.parent / "console.log", "a") as f:
        f.write(HOSTILE + "\x1b[0;31m\n")
    text = page_of(run)
    assert Page(text).scripts == 0
    assert "<script" not in text
    assert text.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 4


# --- (c) bad input: one line, exit 2, no page --------------------------------------------

def break_result(run):
    (run / "x86_64.6.12.enforcing-disabled" / "result.json").write_text('{"kernel": "6.12", ')


def break_run_json(run):
    (run / "run.json").write_text("[1, 2")


def shape_result(run):
    (run / "arm64.6.1-patched.permissive" / "result.json").write_text('{"kernel": 6}')


def no_results(run):
    for d in run.iterdir():
        if d.is_dir():
            (d / "result.json").unlink()


@pytest.mark.parametrize("spoil, says", [
    (break_result, r"x86_64\.6\.12\.enforcing-disabled/result\.json: malformed JSON"),
    (break_run_json, r"run\.json: malformed JSON"),
    (shape_result, r"result\.json: kernel: must be a str"),
    (no_results, r"no <arch>\.<kernel>\.<scenario>/result\.json"),
])
def test_bad_input_is_one_line_and_no_page(run, spoil, says):
    spoil(run)
    p = make_report(run)
    assert (p.returncode, p.stdout) == (2, "")
    assert len(p.stderr.splitlines()) == 1 and re.search(says, p.stderr), p.stderr
    assert not [f.name for f in run.iterdir() if f.name.startswith("index.html")]


def test_missing_folder_and_usage(tmp_path):
    p = make_report(tmp_path / "nothing")
    assert p.returncode == 2 and p.stderr.splitlines() == [f"report: error: {tmp_path}/nothing: no such folder"]
    p = subprocess.run(["/usr/bin/python3", "-m", "harness.report"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1


# --- the fallbacks: run.json's jobs and agree checks, or results.ktap ------------------

def test_run_json_gives_the_timeline_and_agree_checks(run):
    jobs = [{"name": "kernel x86_64 6.1 selinux", "kind": "kernel", "start": 1000.0, "seconds": 300.0,
             "status": "ok"}]
    jobs += [{"name": d, "kind": "boot", "start": 1300.0 + 20 * i, "seconds": 40.0, "status": "ok"}
             for i, d in enumerate(result_dirs(run))]
    agree = [{"name": "6.1-patched == 6.1-stock on x86_64 node-param", "pass": False,
              "diff": ["write.one: 'EINVAL' != 'count'"], "compared": 6}]
    (run / "run.json").write_text(json.dumps({"set": "test", "started": 1000.0, "seconds": 460.0,
                                              "agree": agree, "builds": [], "jobs": jobs}))
    text = page_of(run)
    assert Page(text).bars == len(jobs)
    assert "From run.json" in text and "build: 1 job" in text and "boot: 5 jobs" in text
    assert "Agree checks: 0 same, 1 different" in text and "write.one: &#x27;EINVAL&#x27; != &#x27;count&#x27;" in text


def test_without_run_json_boots_are_end_to_end_and_ktap_fills_in(run):
    # A cell with no result.json (its kernel did not build) that results.ktap names.
    (run / "x86_64.6.12.race").mkdir()
    (run / "results.ktap").write_text(
        "KTAP version 1\n1..2\n    KTAP version 1\n    1..1\n"
        "    not ok 1 outcome # expected 'ok', got 'build-error'\nnot ok 1 x86_64.6.12.race\n"
        "not ok 2 agree: 6.1-patched == 6.1-stock on x86_64 node-param\n")
    (run / "summary.txt").write_text("FAIL  6.1-patched == 6.1-stock on x86_64 node-param: "
                                     "write.one: 'EINVAL' != 'count'\n")
    text = page_of(run)
    page = Page(text)
    assert len(page.cells) == 6 and page.bars == 5
    assert {c["name"]: c["label"] for c in page.cells}["x86_64.6.12.race"] == "lab trouble: build-error"
    assert "laid end to end" in text and "From results.ktap and summary.txt" in text


# --- (d) the page as a person sees it: chromium's screenshot, cells counted by colour -----

def chromium():
    """Debian's chromium, installed the way the Makefile installs what a target needs."""
    p = subprocess.run([os.path.join(ROOT, "scripts", "need.sh"), "chromium"], capture_output=True, text=True)
    if p.returncode != 0 or not shutil.which("chromium"):
        pytest.skip("chromium is missing and could not be installed: "
                    + (p.stderr.strip().splitlines() or ["need.sh failed"])[-1])
    return shutil.which("chromium")


def screenshot(browser, page, png, size="1000,700"):
    # A profile of its own: no shared state, and a second chromium never collides.
    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--force-color-profile=srgb", f"--user-data-dir={png.parent / 'profile'}",
                        f"--screenshot={png}", f"--window-size={size}", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and png.is_file(), p.stderr[-2000:]


def regions(png, colours, min_area=200):
    """For each colour, its connected regions big enough to be a cell (a stray
    anti-aliased pixel is not). One pass sorts the pixels of the wanted colours."""
    image = pytest.importorskip("PIL.Image", reason="python3-pil reads the screenshot (make test installs it)")
    with image.open(png) as im:
        w = im.width
        pixels = list(im.convert("RGB").getdata())
    todo = {c: set() for c in colours}
    for i, p in enumerate(pixels):
        if p in todo:
            todo[p].add(divmod(i, w))
    counts = {}
    for c, left in todo.items():
        count = 0
        while left:
            stack, area = [left.pop()], 0
            while stack:
                y, x = stack.pop()
                area += 1
                for n in ((y, x + 1), (y, x - 1), (y + 1, x), (y - 1, x)):
                    if n in left:
                        left.remove(n)
                        stack.append(n)
            count += area >= min_area
        counts[c] = count
    return counts


def rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def count_cells(png):
    colour = {v: rgb(report.VERDICT_COLOURS[v][0]) for v in (*VERDICTS, "not-run")}
    found = regions(png, set(colour.values()))
    return {v: found[c] for v, c in colour.items()}


def test_screenshot_has_one_cell_per_result(run, tmp_path):
    browser = chromium()
    page_of(run)
    t = time.monotonic()
    screenshot(browser, run / "index.html", tmp_path / "page.png")
    render = time.monotonic() - t
    counts = count_cells(tmp_path / "page.png")
    assert {v: counts[v] for v in VERDICTS} == VERDICTS
    assert sum(counts[v] for v in VERDICTS) == len(result_dirs(run))
    assert counts["not-run"] == 12
    # The negative control: the same page less one cell counts one less.
    text = (run / "index.html").read_text()
    fewer = run / "fewer.html"
    fewer.write_text(re.sub(r'<td class="cell v-expected".*?</td>', "", text, count=1))
    screenshot(browser, fewer, tmp_path / "fewer.png")
    counts = count_cells(tmp_path / "fewer.png")
    assert sum(counts[v] for v in VERDICTS) == len(result_dirs(run)) - 1
    print(f"chromium rendered the page in {render:.1f} s")
