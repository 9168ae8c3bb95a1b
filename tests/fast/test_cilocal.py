"""make ci-local's runner (harness/cilocal.py) on a toy pipeline of the generated one's shape
(two kernel jobs, a boot job needing each, a merge; the merge needs the good chain only: a
job whose needed job never ran is not run by gitlab-ci-local, when: always or not), run by
the real gitlab-ci-local (shell executor, isolated job folders) in a few seconds:
a kernel job's artifact reaches the boot job that needs it, the merge job's folder is copied
back, every job's verdict is read from gitlab-ci-local's table, a failed job and the jobs
it kept from running are named in one line, and the tree a passed job unpacked is removed
while a failed job's stays. Skipped, saying why, where gitlab-ci-local cannot be had."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import cilocal  # noqa: E402
from harness import npmtools  # noqa: E402

GOOD, BAD = "kernel:x86_64:6.1:legacy", "kernel:x86_64:6.1-patched:selinux"
TOY = f"""
stages: [build, boot, merge]
default: {{image: "debian:bookworm"}}
"{GOOD}":
  stage: build
  needs: []
  script: [mkdir -p build/src/linux-6.1 build/kernel/k, echo image > build/kernel/k/bzImage, 'echo "seed from: $KERNEL_SEED_FROM"']
  artifacts: {{paths: [build/kernel/k/]}}
"{BAD}":
  stage: build
  needs: []
  script: [mkdir -p build/src/linux-6.1-patched, "false"]
"boot:shard-1":
  stage: boot
  needs: [{{job: "{GOOD}", artifacts: true}}]
  script: [mkdir -p results/shard-1, cp build/kernel/k/bzImage results/shard-1/booted]
  artifacts: {{when: always, paths: [results/shard-1/]}}
"boot:shard-2":
  stage: boot
  needs: [{{job: "{BAD}", artifacts: true}}]
  script: [mkdir -p results/shard-2]
  artifacts: {{when: always, paths: [results/shard-2/]}}
merge:
  stage: merge
  needs: [{{job: "boot:shard-1", artifacts: true}}]
  when: always
  script: [mkdir -p results/merged, "cp results/shard-*/* results/merged/"]
  artifacts: {{when: always, paths: [results/merged/]}}
"""


@pytest.fixture(scope="module")
def tool():
    try:
        return npmtools.ensure()["gitlab-ci-local"]
    except npmtools.Unavailable as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def toy(tool, tmp_path_factory):
    """The toy pipeline run once: (repo, jobs, (exit status, verdicts, last line), log)."""
    repo = tmp_path_factory.mktemp("ci") / "repo"
    repo.mkdir()
    (repo / ".gitignore").write_text("/build/\n/results/\n")
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True, capture_output=True)
    (repo / "build" / "ci").mkdir(parents=True)
    (repo / "build" / "ci" / "p.yml").write_text(TOY)
    logfile = repo.parent / "gitlab-ci-local.log"
    ran = cilocal.run_pipeline(tool, str(repo), "build/ci/p.yml", 1, str(logfile), {"KERNEL_SEED_FROM": "/seed/build"})
    return repo, cilocal.job_names(repo / "build" / "ci" / "p.yml"), ran, logfile.read_text()


def test_artifacts_pass_between_jobs(toy):
    repo, _, _, _ = toy
    assert (repo / "results" / "merged" / "booted").read_text() == "image\n"


def test_every_job_has_its_verdict(toy):
    _, jobs, (rc, verdicts, _), _ = toy
    assert rc == 1
    assert verdicts == {GOOD: "PASS", BAD: "FAIL", "boot:shard-1": "PASS", "merge": "PASS"}
    assert jobs == [GOOD, BAD, "boot:shard-1", "boot:shard-2", "merge"]


def test_the_failure_is_one_line_naming_the_jobs(toy):
    _, jobs, (rc, verdicts, last), _ = toy
    assert cilocal.failure(jobs, verdicts, rc, last) == f"failed: {BAD}; never run: boot:shard-2"
    # Controls: every job passed, no failure; gitlab-ci-local failing by itself, its last line.
    assert cilocal.failure(jobs, dict.fromkeys(jobs, "PASS"), 0, "pipeline finished") is None
    assert cilocal.failure(jobs, dict.fromkeys(jobs, "PASS"), 1, "boom") == "gitlab-ci-local exited 1: boom"


def test_a_passed_jobs_tree_is_removed_a_failed_jobs_kept(toy):
    repo, _, _, _ = toy
    good, bad = cilocal.job_folder(str(repo), GOOD), cilocal.job_folder(str(repo), BAD)
    # The folders are the ones gitlab-ci-local ran the jobs in (the name's encoding is right).
    assert os.path.isdir(good) and os.path.isdir(bad)
    assert not os.path.exists(os.path.join(good, "build", "src"))
    assert os.path.isdir(os.path.join(bad, "build", "src", "linux-6.1-patched"))


def test_the_log_holds_the_command_and_the_jobs_output(toy):
    _, _, _, log = toy
    assert log.startswith("# cd ") and "--force-shell-executor --shell-isolation" in log
    assert f" FAIL  {BAD}" in log


def test_the_variables_reach_the_jobs(toy):
    _, _, _, log = toy
    assert "--variable KERNEL_SEED_FROM=/seed/build" in log.splitlines()[0]
    assert "seed from: /seed/build" in log


def makefile_packages(target_line):
    """The packages a Makefile line hands scripts/need.sh, $(TEST_PKGS) expanded."""
    text = open(os.path.join(ROOT, "Makefile")).read()
    test_pkgs = text.split("\nTEST_PKGS = ", 1)[1].split("\n", 1)[0].split()
    line = text.split(f"\n{target_line}", 1)[1].split("\n", 2)[1]
    assert "scripts/need.sh" in line, line
    words = line.split("scripts/need.sh", 1)[1].split()
    return set(test_pkgs if "$(TEST_PKGS)" in words else []) | {w for w in words if not w.startswith("$(")}


def test_make_test_and_make_check_install_what_gitlab_ci_local_runs():
    # A brand-new machine has no rsync: make test's packages must bring it, as make ci-local's do.
    for target in ("test:", "check:", "ci-local:"):
        assert set(cilocal.TOOLS) <= makefile_packages(target), target
    # Control: a package list without rsync is seen (the reader finds the real lines).
    assert "rsync" in makefile_packages("ci-local:") and "chromium" in makefile_packages("test:")
    assert "chromium" not in makefile_packages("ci-local:")


def test_a_missing_tool_is_one_line_before_anything_runs(tmp_path, monkeypatch, capsys):
    # PATH with git only: make ci-local stops with one line naming rsync, before npm or a clone.
    (tmp_path / "git").symlink_to("/usr/bin/git")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cilocal.main(["--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs rsync, not installed" in err and "git" not in err.split("needs")[1], err
    assert not (tmp_path / "out").exists()
    # Control: with the machine's PATH the same check passes.
    monkeypatch.undo()
    cilocal.check_tools()
