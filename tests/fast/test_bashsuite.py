"""The slow tier's driver (harness/bashsuite.py) counts every command of a check: a
failure in the middle, or on the left of a pipe, fails the check though its last command
succeeds. Control: the form the driver must not use, a subshell on the left of ||, lets
the same fixture check pass, so the fixture can tell the two apart."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import bashsuite  # noqa: E402

FIXTURE = os.path.join(ROOT, "tests", "host", "fixtures", "runner-suite.sh")


def test_names_in_definition_order():
    assert bashsuite.names(FIXTURE) == ["middle_command_fails", "passes", "pipe_left_fails", "computes", "waits"]


def test_middle_command_fails_the_check(tmp_path):
    r = bashsuite.run(FIXTURE, "middle_command_fails", str(tmp_path / "m.log"), ROOT)
    assert r.status == "fail"
    assert "after the failed command" not in r.tail()


def test_pipe_left_fails_the_check(tmp_path):
    assert bashsuite.run(FIXTURE, "pipe_left_fails", str(tmp_path / "p.log"), ROOT).status == "fail"


def test_passing_check_passes(tmp_path):
    assert bashsuite.run(FIXTURE, "passes", str(tmp_path / "ok.log"), ROOT).status == "pass"


def test_control_subshell_on_the_left_of_or_would_pass():
    rc = subprocess.run(["bash", "-c", '. "$1"; rc=0; ( set -e; t_middle_command_fails ) >/dev/null || rc=$?; exit $rc',
                         "control", FIXTURE]).returncode
    assert rc == 0


def test_times_record_wall_and_cpu_of_each_check(tmp_path):
    # A check that computes uses about as much CPU as wall time; one that sleeps uses next
    # to none (the control: CPU is not the wall time written twice).
    times = tmp_path / "times.tsv"
    busy = bashsuite.run(FIXTURE, "computes", str(tmp_path / "c.log"), ROOT, times=str(times))
    idle = bashsuite.run(FIXTURE, "waits", str(tmp_path / "w.log"), ROOT, times=str(times))
    rows = [line.split("\t") for line in times.read_text().splitlines()]
    assert [r[0] for r in rows] == ["computes", "waits"]
    assert [float(r[1]) for r in rows] == [round(busy.seconds, 1), round(idle.seconds, 1)]
    # (the busy check's share of a core may be a third on a loaded machine)
    assert busy.seconds >= 0.7 and busy.cpu > 0.2
    assert idle.seconds >= 0.7 and idle.cpu < 0.15
