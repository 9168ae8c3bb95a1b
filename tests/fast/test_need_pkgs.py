"""scripts/lib.sh's need_pkgs: what it takes as installed. Run as a user who is not root
(id is replaced), so a package it finds missing makes it stop with the apt-get line, and
nothing is installed."""
import subprocess

from fakeqemu import ROOT


def need(*pkgs):
    script = f'set -euo pipefail; . {ROOT}/scripts/lib.sh; id() {{ echo 1000; }}; need_pkgs "$@"; echo all-installed'
    return subprocess.run(["bash", "-c", script, "need", *pkgs], capture_output=True, text=True, timeout=30)


def native():
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_installed_packages_pass():
    r = need("bash", "coreutils", f"bash:{native()}")
    assert r.returncode == 0 and r.stdout == "all-installed\n", r.stderr


def test_unknown_package_is_missing():
    r = need("bash", "no-such-package-here")
    assert r.returncode != 0 and "missing packages: no-such-package-here " in r.stderr, r.stderr


def test_another_arch_of_an_installed_package_is_missing():
    # bash is installed for the native arch only: asked with another arch, dpkg-query has no
    # line for it
    other = "i386" if native() != "i386" else "amd64"
    r = need(f"bash:{other}")
    assert r.returncode != 0 and f"missing packages: bash:{other} " in r.stderr, r.stderr


def test_another_arch_asked_beside_the_native_one_is_missing():
    # one dpkg-query answers both: the native bash's line must not answer for bash:<other>
    other = "i386" if native() != "i386" else "amd64"
    r = need("bash", f"bash:{other}")
    assert r.returncode != 0 and f"missing packages: bash:{other} " in r.stderr, r.stderr
