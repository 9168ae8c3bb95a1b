"""The probe's read-only check of the LSM hook tables (tests/guest/probe.c, step hooks:PTDUMP)
against each booted arch's page-table dump format, on the host: a captured-style dump and
kallsyms list, the probe built for the host. Each format has its control: the same table on
a writable page must come out RW."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# One line per arch in its kernel's own format (arch/*/mm/*dump*.c): the table's page, then
# the writable page next to it. {ro} and {rw} are the words that arch prints.
FORMATS = {
    "x86": ("ffffffff82100000", "ffffffff82300000",
            "0xffffffff82000000-0xffffffff82200000           2M     {ro}         PSE     GLB NX pmd\n"
            "0xffffffff82200000-0xffffffff82400000           2M     {rw}         PSE     GLB NX pmd\n",
            "ro", "RW"),
    "arm64": ("ffff800009010000", "ffff800009210000",
              "0xffff800009000000-0xffff800009200000           2M PMD       {ro} NX SHD AF        BLK UXN    MEM/NORMAL\n"
              "0xffff800009200000-0xffff800009400000           2M PMD       {rw} NX SHD AF        BLK UXN    MEM/NORMAL\n",
              "ro", "RW"),
    "arm": ("c0b10000", "c0c10000",
            "0xc0b00000-0xc0c00000           1M     {ro} NX SHD\n"
            "0xc0c00000-0xc0d00000           1M     {rw} NX SHD\n",
            "ro", "RW"),
    "s390": ("0000000001080000", "0000000001180000",
             "0x0000000001000000-0x0000000001100000      1024K PTE {ro} NX\n"
             "0x0000000001100000-0x0000000001200000      1024K PTE {rw} NX\n",
             "RO", "RW"),
    # powerpc's columns: privilege, r, w, X, ...; a blank column is spaces, the end inclusive
    "ppc64": ("c000000002010000", "c000000002210000",
              "0xc000000002000000-0xc0000000021fffff  0x0000000002000000         2M         {ro}       pte  valid             dirty  accessed\n"
              "0xc000000002200000-0xc0000000023fffff  0x0000000002200000         2M         {rw}       pte  valid             dirty  accessed\n",
              "r   ", "r  w"),
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("probe") / "selinux-probe")
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-format-truncation", "-o", out,
                    os.path.join(ROOT, "tests", "guest", "probe.c")], check=True)
    return out


def run_hooks(probe, tmp_path, dump, kallsyms):
    (tmp_path / "dump").write_text(dump)
    (tmp_path / "kallsyms").write_text(kallsyms)
    p = subprocess.run([probe, f"hooks:{tmp_path / 'dump'}"], capture_output=True, text=True,
                       env=dict(os.environ, PROBE_KALLSYMS=str(tmp_path / "kallsyms")), timeout=30)
    obs = dict(line[len("# obs: "):].split("=", 1) for line in p.stdout.splitlines()
               if line.startswith("# obs: "))
    return p.stdout, obs


@pytest.mark.parametrize("arch", sorted(FORMATS))
def test_table_on_a_read_only_page_is_ro(probe, tmp_path, arch):
    ro_addr, _, dump, ro, rw = FORMATS[arch]
    out, obs = run_hooks(probe, tmp_path, dump.format(ro=ro, rw=rw),
                         f"{ro_addr} D security_hook_heads\n{ro_addr} d selinux_hooks\n")
    assert obs["hooks.security_hook_heads"] == "ro", out
    assert obs["hooks.selinux_hooks"] == "ro", out
    assert obs["hooks.writable"] == "none", out
    assert obs["hooks.summary"] == "2 ro, 0 RW, 0 unknown", out
    assert "ok 1 hooks" in out.splitlines()


@pytest.mark.parametrize("arch", sorted(FORMATS))
def test_control_table_on_a_writable_page_is_RW(probe, tmp_path, arch):
    ro_addr, rw_addr, dump, ro, rw = FORMATS[arch]
    out, obs = run_hooks(probe, tmp_path, dump.format(ro=ro, rw=rw),
                         f"{rw_addr} D security_hook_heads\n{ro_addr} d selinux_hooks\n")
    assert obs["hooks.security_hook_heads"] == "RW", out
    assert obs["hooks.writable"] == "security_hook_heads", out
    assert obs["hooks.summary"] == "1 ro, 1 RW, 0 unknown", out


def test_a_dump_without_protection_words_is_unobservable(probe, tmp_path):
    # An arch whose dump the probe does not understand must not pass as "none writable".
    out, obs = run_hooks(probe, tmp_path, "0xc0b00000-0xc0c00000           1M     rX NX\n",
                         "c0b10000 D security_hook_heads\n")
    assert obs["hooks"] == "unobservable", out
    assert "not ok 1 hooks" in out.splitlines()


def test_hidden_addresses_are_not_a_result(probe, tmp_path):
    # kptr_restrict shows zeros: nothing was observed, the step fails.
    out, obs = run_hooks(probe, tmp_path, FORMATS["x86"][2].format(ro="ro", rw="RW"),
                         "0000000000000000 D security_hook_heads\n")
    assert obs["hooks.summary"] == "0 ro, 0 RW, 1 unknown", out
    assert "not ok 1 hooks" in out.splitlines()


def test_an_arch_without_a_dump_says_so(probe, tmp_path):
    # hooks: with no path is an arch data file with no ptdump (mips64el): a value of its own,
    # which no expectation of an arch with a dump ("none" or a list of tables) accepts.
    (tmp_path / "kallsyms").write_text("ffffffff80b10000 D security_hook_heads\n")
    p = subprocess.run([probe, "hooks:"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PROBE_KALLSYMS=str(tmp_path / "kallsyms")))
    obs = dict(line[len("# obs: "):].split("=", 1) for line in p.stdout.splitlines()
               if line.startswith("# obs: "))
    assert obs["hooks.writable"] == "no-dump", p.stdout
    assert "ok 1 hooks" in p.stdout.splitlines()


def test_a_bare_hooks_step_is_unobservable(probe, tmp_path):
    # "hooks" with no colon names nothing, not even an empty dump: a scenario's mistake
    (tmp_path / "kallsyms").write_text("ffffffff80b10000 D security_hook_heads\n")
    p = subprocess.run([probe, "hooks"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PROBE_KALLSYMS=str(tmp_path / "kallsyms")))
    assert "# obs: hooks=unobservable" in p.stdout.splitlines(), p.stdout
    assert "not ok 1 hooks" in p.stdout.splitlines()


def test_a_named_dump_that_cannot_be_read_is_unobservable(probe, tmp_path):
    # The control of the test above: an arch that names a dump the kernel lacks fails.
    (tmp_path / "kallsyms").write_text("ffffffff80b10000 D security_hook_heads\n")
    p = subprocess.run([probe, f"hooks:{tmp_path / 'no-such-dump'}"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PROBE_KALLSYMS=str(tmp_path / "kallsyms")))
    assert "# obs: hooks=unobservable" in p.stdout.splitlines(), p.stdout
    assert "not ok 1 hooks" in p.stdout.splitlines()
