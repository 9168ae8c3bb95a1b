"""selinux-migrate-check on fixture trees (tests/host/migrate-check.sh, a verdict per state
an admin can be in, hostile trees among them), and its parsers under AddressSanitizer and
UndefinedBehaviorSanitizer for a bounded time (tests/host/fuzz-migrate-check.sh): a few
seconds here, a minute in the slow tier (t_migrate_check_fuzz). The tool is built here the
way scripts/guest.sh builds it for the guest."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = os.path.join(ROOT, "tests", "host")


def build(tmp_path):
    binary = str(tmp_path / "selinux-migrate-check")
    subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-format-truncation",
                    "-o", binary, os.path.join(ROOT, "tools", "selinux-migrate-check.c")], check=True)
    return binary


def test_fixtures(tmp_path):
    p = subprocess.run([os.path.join(HOST, "migrate-check.sh"), build(tmp_path)],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]


def test_parsers_under_sanitizers():
    p = subprocess.run([os.path.join(HOST, "fuzz-migrate-check.sh"), "2"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "")
