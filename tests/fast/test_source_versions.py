"""scripts/source.sh: which trees it is asked for. dpkg-query is a stand-in on PATH, so
nothing is installed or unpacked: the trees' stamps say they are up to date."""
import os
import subprocess

import pytest

from fakeqemu import ROOT

# The stand-in knows linux-source-6.12 and xz-utils only, as on a machine where 6.1's
# source package was never installed.
FAKE_DPKG_QUERY = r'''#!/bin/bash
fmt=${2#-f=}
shift 2
rc=0
for p in "$@"; do
	case "$p" in
	linux-source-6.12) v=6.12.99-1 ;;
	xz-utils) v=5.4.1-1 ;;
	*) echo "dpkg-query: no packages found matching $p" >&2; rc=1; continue ;;
	esac
	if [ "$fmt" = '${Version}' ]; then printf '%s' "$v"; else echo "$p all install ok installed"; fi
done
exit "$rc"
'''


def source_sh(tmp_path, *versions):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "dpkg-query"
    fake.write_text(FAKE_DPKG_QUERY)
    fake.chmod(0o755)
    # Not root: a package the stand-in lacks stops need_pkgs with its apt-get line, and
    # nothing is installed.
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "id").chmod(0o755)
    tree = tmp_path / "build" / "src" / "linux-6.12"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / ".unpacked-from").write_text("linux-source-6.12 6.12.99-1\n")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", BUILD=str(tmp_path / "build"))
    return subprocess.run([f"{ROOT}/scripts/source.sh", *versions], capture_output=True, text=True,
                          env=env, timeout=30)


@pytest.mark.parametrize("bad", ["6.2", "", "6.1;id", "../6.1", "6.1\n6.12", "6.1 \x1b[2J"])
def test_an_unknown_version_is_one_line_and_nothing_made(tmp_path, bad):
    r = source_sh(tmp_path, "6.12", bad)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "unknown source version" in r.stderr, r.stderr
    assert not (tmp_path / "build" / "src" / ".lock-source").exists()


def test_asked_for_6_12_only_it_needs_no_6_1_package(tmp_path):
    r = source_sh(tmp_path, "6.12")
    assert r.returncode == 0, r.stderr
    assert "linux-6.12: up to date (linux-source-6.12 6.12.99-1)" in r.stderr
    assert "series last tested on" not in r.stderr


def test_asked_for_6_1_its_absence_is_not_passed_over(tmp_path):
    # The control: the same stand-in stops a call that does need 6.1.
    r = source_sh(tmp_path, "6.1", "6.12")
    assert r.returncode == 1
    assert "missing packages: linux-source-6.1 " in r.stderr, r.stderr
