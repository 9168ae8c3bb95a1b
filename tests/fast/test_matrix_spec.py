"""matrix.yaml's reader (harness/matrixspec.py, schema harness/schema/matrix.schema.json) and the
runner's arguments (harness/matrix.py) against careless or hostile input: every error is
one line naming the file, the line and the key, exit 2, never a traceback; nothing is
accepted that crashes later or means something else than what was written."""
import os
import re
import subprocess
import sys

import pytest
import yaml

from fakeqemu import ROOT

PY = "/usr/bin/python3"

sys.path.insert(0, ROOT)
from harness import matrixspec  # noqa: E402

MATRIX = [PY, "-m", "harness.matrix"]  # run from any folder: PYTHONPATH names the package
MATRIX_ENV = dict(os.environ, PYTHONPATH=ROOT)

# A small valid matrix; the cases below change one thing in it.
BASE = """\
kernels:
  k1: {tree: "6.1", config: selinux, arches: [x86_64]}
  k2:
    tree: "6.12"
    config: selinux
scenarios:
  s:
    mode: permissive
    append: quiet
    steps: [state:boot, "write:one:1", klog:x:some text, cmd:c:/bin/true -v]
    expect:
      boot.lsm: capability
      write.one: {default: count, k1: EINVAL}
      klog.x: 0
agree:
  - kernels: [k1, k2]
    except: {klog.x: a reason, write.one: k1 answers otherwise}
sets:
  default: [{}]
  test: [{kernel: k1}]
"""


def write(tmp_path, text, name="m.yaml"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


def load(tmp_path, text, name="m.yaml"):
    return matrixspec.load(write(tmp_path, text, name), ROOT)


def refused(tmp_path, text, key, line=None, name="m.yaml"):
    """The file is refused with one line 'NAME:LINE: KEY: ...'; returns the line."""
    with pytest.raises(matrixspec.MatrixError) as e:
        load(tmp_path, text, name)
    msg = str(e.value)
    assert "\n" not in msg, msg
    want = rf"^{re.escape(name)}:{line if line else '[0-9]+'}: {re.escape(key)}: "
    assert re.match(want, msg), f"{msg!r} does not match {want!r}"
    return msg


def test_base_is_valid(tmp_path):
    spec = load(tmp_path, BASE)
    # k2 names no arches: it runs on every arch whose data file has boot facts.
    booted = matrixspec.harness_arch.names(boot=True)
    assert len(booted) >= 2
    assert spec.cells("default", "") == [("k1", "x86_64", "s")] + [("k2", a, "s") for a in booted]
    assert spec.scenarios["s"]["expect"]["klog.x"] == "0"


# --- the real matrix ---------------------------------------------------------------------
def test_real_matrix_loads_and_lists():
    spec = matrixspec.load(os.path.join(ROOT, "matrix.yaml"), ROOT)
    for s in spec.sets:
        cells = spec.cells(s, "")
        assert cells and len(cells) == len(set(cells)), s
    r = subprocess.run(MATRIX + ["--list", "--set", "test"], capture_output=True, text=True, timeout=30,
                       env=MATRIX_ENV)
    assert r.returncode == 0, r.stderr
    assert [tuple(x.split()) for x in r.stdout.splitlines()] == spec.cells("test", "")


# --- tracebacks before -------------------------------------------------------------------
@pytest.mark.parametrize("old,new,key,line", [
    ("arches: [x86_64]", "arches: 5", "arches", 2),
    ("sets:\n  default: [{}]\n  test: [{kernel: k1}]\n", "sets: [a]\n", "sets", 18),
    ("    config: selinux\nscenarios", "    config: selinux\n    scenarios: [{a: 1}]\nscenarios", "scenarios[1]", 6),
    ("    mode: permissive\n", "    mode: permissive\n    kernels: [k1, [k2]]\n", "kernels[2]", 9),
    ("  s:\n    mode", "  s: 5\n  t:\n    mode", "s", 7),
    ("kernels:\n  k1:", "kernels:\n  [k0]: {}\n  k1:", "?", 2),
])
def test_wrong_types_refused_with_one_line(tmp_path, old, new, key, line):
    assert old in BASE
    refused(tmp_path, BASE.replace(old, new), key, line)


def test_agree_not_a_list(tmp_path):
    text = BASE[:BASE.index("agree:")] + "agree: 3\n" + BASE[BASE.index("sets:"):]
    refused(tmp_path, text, "agree", 15)


def test_not_utf8(tmp_path):
    with pytest.raises(matrixspec.MatrixError) as e:
        load(tmp_path, BASE.encode().replace(b"a reason", b"a r\xe9ason"))
    assert str(e.value) == "m.yaml:17: not valid UTF-8 (byte 0xe9)"


@pytest.mark.parametrize("text,line", [
    ("kernels: {a: \x07}\n", 1),
    ("kernels:\n  a: [" + "[" * 3000 + "\n", None),
    ("- a\n- b\n", None),
    ("", None),
    ("kernels: {}\nscenarios: {}\n\tsets: x\n", None),
])
def test_malformed_files_one_line(tmp_path, text, line):
    with pytest.raises(matrixspec.MatrixError) as e:
        load(tmp_path, text)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("m.yaml")
    if line:
        assert msg.startswith(f"m.yaml:{line}: ")


@pytest.mark.parametrize("new", ["klog.x: 0\t", "klog.x:\t0"])
def test_a_tab_as_spacing_is_refused(tmp_path, new):
    # libyaml would take these tabs as spacing; the pure-Python reader refuses them, and a
    # text with a tab is left to it
    with pytest.raises(matrixspec.MatrixError, match=r"^m\.yaml:14: not valid YAML"):
        load(tmp_path, BASE.replace("klog.x: 0", new))


# --- accepted, then crashing after the boots ----------------------------------------------
def test_except_not_a_mapping(tmp_path):
    refused(tmp_path, BASE.replace("except: {klog.x: a reason, write.one: k1 answers otherwise}", "except: 5"), "except", 17)


def test_append_not_a_string(tmp_path):
    refused(tmp_path, BASE.replace("append: quiet", "append: 5"), "append", 9)


@pytest.mark.parametrize("old,new,key", [
    ("klog.x: 0", "klog.x: [0]", "klog.x"),
    ("klog.x: 0", "klog.x: true", "klog.x"),
    ("klog.x: 0", "klog.x:", "klog.x"),
    ("k1: EINVAL", "k1: [EINVAL]", "write.one"),
    ("mode: permissive", "mode: off", "mode"),
    ("mode: permissive", "mode: yes", "mode"),
    ("    mode: permissive\n", "    mode: permissive\n    outcome: {k1: crash}\n", "outcome"),
    ("    mode: permissive\n", "    mode: permissive\n    outcome: {k9: ok}\n", "k9"),
    ("test: [{kernel: k1}]", "test: [{kernel: k1, colour: red}]", "colour"),
    ("test: [{kernel: k1}]", "test: [{kernel: 5}]", "kernel"),
    ("test: [{kernel: k1}]", "test: [{kernel: k9}]", "kernel"),
    ("test: [{kernel: k1}]", "test: [{arch: sparc}]", "arch"),
    ("kernels: [k1, k2]", "kernels: [k1, k9]", "agree"),
    ("kernels: [k1, k2]", "kernels: [k1, k1]", "agree"),
    ("kernels: [k1, k2]", "kernels: [k1, k2, k2]", "kernels"),
    ("except: {klog.x: a reason, write.one: k1 answers otherwise}", "except: {nosuch/klog.x: a reason}",
     "nosuch/klog.x"),
    ("  k1: {tree", "  ../k1: {tree", "../k1"),
    ("config: selinux, arches", "config: ../../etc/x, arches", "config"),
    ("config: selinux, arches", "config: nosuch, arches", "config"),
])
def test_bad_values_refused(tmp_path, old, new, key):
    assert old in BASE
    refused(tmp_path, BASE.replace(old, new), key)


# --- read as written: YAML 1.2 scalars, string keys, no duplicates ------------------------
def test_no_is_the_word_no(tmp_path):
    spec = load(tmp_path, BASE.replace("{default: count, k1: EINVAL}", "{default: no, k1: off}"))
    assert spec.scenarios["s"]["expect"]["write.one"] == {"default": "no", "k1": "off"}


def test_kernel_named_6_10_stays_6_10(tmp_path):
    text = BASE.replace("  k2:\n", "  6.10:\n").replace("[k1, k2]", "[k1, 6.10]")
    spec = load(tmp_path, text)
    assert "6.10" in spec.kernels and "6.1" not in spec.kernels
    assert spec.agree[0]["kernels"] == ["k1", "6.10"]


def test_tree_6_10_is_not_6_1(tmp_path):
    refused(tmp_path, BASE.replace('tree: "6.1"', "tree: 6.10"), "tree", 2)


def test_unquoted_versions_are_strings(tmp_path):
    spec = load(tmp_path, BASE.replace('tree: "6.1"', "tree: 6.1").replace('tree: "6.12"', "tree: 6.12"))
    assert spec.kernels["k1"]["tree"] == "6.1" and spec.kernels["k2"]["tree"] == "6.12"


@pytest.mark.parametrize("old,new,key,line", [
    ("      klog.x: 0\n", "      klog.x: 0\n      boot.lsm: other\n", "boot.lsm", 15),
    ("  k2:\n", "  k1:\n", "k1", 3),
    ("    append: quiet\n", "    append: quiet\n    append: splash\n", "append", 10),
])
def test_duplicate_keys_refused(tmp_path, old, new, key, line):
    msg = refused(tmp_path, BASE.replace(old, new), key, line)
    assert "duplicate" in msg


def test_aliases_refused(tmp_path):
    text = BASE.replace("boot.lsm: capability", "boot.lsm: &v capability").replace("klog.x: 0", "klog.x: *v")
    refused(tmp_path, text, "*v", 14)


def with_lines(x):
    """X with the line of every mapping, key, list and item beside its value."""
    if isinstance(x, dict):
        return ("map", x.line, dict(x.key_lines), {k: with_lines(v) for k, v in x.items()})
    if isinstance(x, list):
        return ("seq", x.line, list(x.item_lines), [with_lines(v) for v in x])
    return (type(x).__name__, x)


def test_libyaml_reads_what_the_python_reader_reads():
    # matrixspec reads with libyaml (python3-yaml's C parser) when it can, for speed; the
    # pure-Python Loader is the reference: the same values and types, every line the same
    assert matrixspec.FastLoader is not None, "python3-yaml without libyaml: the fast reader is not used"
    text = open(os.path.join(ROOT, "matrix.yaml"), encoding="utf-8").read()
    fast = with_lines(matrixspec._read_yaml(text))
    assert fast == with_lines(yaml.load(text, Loader=matrixspec.Loader))
    # the control: a line moved is seen
    assert fast != with_lines(matrixspec._read_yaml("\n" + text))


# --- every expected observation is reported by some step -----------------------------------
@pytest.mark.parametrize("key", ["klog.y", "write.two", "after.lsm", "mount", "cmd.x", "hook.writable"])
def test_expect_key_no_step_reports(tmp_path, key):
    msg = refused(tmp_path, BASE.replace("      klog.x: 0\n", f"      klog.x: 0\n      {key}: '1'\n"), key, 15)
    assert "no step" in msg


# k2 freezes in scenario s and says it expects nothing of its probe (which never runs)
K2_FREEZES = (BASE.replace("    append: quiet\n", "    append: quiet\n    outcome: {default: ok, k2: freeze}\n")
              .replace("boot.lsm: capability", "boot.lsm: {default: capability, k2: null}")
              .replace("write.one: {default: count, k1: EINVAL}", "write.one: {k1: EINVAL}")
              .replace("klog.x: 0", "klog.x: {default: 0, k2: null}"))
OUTCOME_EXCEPTED = ("except: {klog.x:", "except: {outcome: k2 freezes, klog.x:")


# --- an agree pair agrees in the file too (make test may boot only one of the two) -------------
def test_agree_pair_with_different_expectations_refused(tmp_path):
    msg = refused(tmp_path, BASE.replace(", write.one: k1 answers otherwise}", "}"), "agree")
    assert "k1 and k2 must agree, but s/write.one expects 'EINVAL' and 'count'" in msg


def test_agree_pair_outcomes_compared_too(tmp_path):
    msg = refused(tmp_path, K2_FREEZES, "agree")
    assert "s/outcome expects 'ok' and 'freeze'" in msg
    load(tmp_path, K2_FREEZES.replace(*OUTCOME_EXCEPTED))


def test_real_matrix_pairs_agree_in_the_file():
    # the real file: its agree pairs hold on the expected values (load refuses otherwise)
    spec = matrixspec.load(os.path.join(ROOT, "matrix.yaml"), ROOT)
    assert [p["kernels"] for p in spec.agree] == [["6.1-patched-accept", "6.12"], ["6.1-patched", "6.1-stock"],
                                                  ["6.1-patched-debian", "6.1-debian"]]


# --- a kernel that freezes runs no probe: its expectations are refused, not skipped ----------
def test_expectation_on_a_freezing_kernel_refused(tmp_path):
    text = BASE.replace("    append: quiet\n", "    append: quiet\n    outcome: {default: ok, k2: freeze}\n")
    msg = refused(tmp_path, text, "boot.lsm", 13)
    assert "k2, whose outcome is freeze" in msg


def test_null_says_no_expectation(tmp_path):
    spec = load(tmp_path, K2_FREEZES.replace(*OUTCOME_EXCEPTED))
    exp = spec.scenarios["s"]["expect"]
    assert matrixspec.expected(exp["boot.lsm"], "k2") is None
    assert matrixspec.expected(exp["boot.lsm"], "k1") == "capability"


# --- an arch key: what the arch makes every kernel show, before the kernel's value ---------
def test_arch_key_comes_before_the_kernel_key(tmp_path):
    spec = load(tmp_path, BASE.replace("{default: count, k1: EINVAL}", "{default: count, k1: EINVAL, arm64: ENOMEM}"))
    v = spec.scenarios["s"]["expect"]["write.one"]
    assert matrixspec.expected(v, "k1", "arm64") == "ENOMEM"
    assert matrixspec.expected(v, "k2", "arm64") == "ENOMEM"
    # the control: on another arch the kernel's value and the default stand
    assert matrixspec.expected(v, "k1", "x86_64") == "EINVAL"
    assert matrixspec.expected(v, "k2", "x86_64") == "count"


def test_key_neither_kernel_nor_arch_refused(tmp_path):
    msg = refused(tmp_path, BASE.replace("{default: count, k1: EINVAL}", "{default: count, k1: EINVAL, vax: x}"), "vax")
    assert "not a kernel or arch of this matrix" in msg


def test_kernel_null_holds_beside_an_arch_key(tmp_path):
    # k2 freezes everywhere: its null wins over the arch's value, and the file loads
    spec = load(tmp_path, K2_FREEZES.replace(*OUTCOME_EXCEPTED).replace(
        "{default: capability, k2: null}", "{default: capability, k2: null, arm64: x}"))
    v = spec.scenarios["s"]["expect"]["boot.lsm"]
    assert matrixspec.expected(v, "k2", "arm64") is None
    assert matrixspec.expected(v, "k1", "arm64") == "x"


def test_arch_keyed_outcome_refuses_a_plain_expectation(tmp_path):
    # the boot freezes on arm64 only: an expectation that applies there is refused too
    text = BASE.replace("    append: quiet\n", "    append: quiet\n    outcome: {default: ok, arm64: freeze}\n")
    msg = refused(tmp_path, text, "boot.lsm")
    assert "applies to k2 on arm64, whose outcome is freeze" in msg
    # the control: null for arm64 says so, and the file loads (k1 runs on x86_64 only)
    load(tmp_path, text.replace("boot.lsm: capability", "boot.lsm: {default: capability, arm64: null}")
         .replace("write.one: {default: count, k1: EINVAL}", "write.one: {default: count, k1: EINVAL, arm64: null}")
         .replace("klog.x: 0", "klog.x: {default: 0, arm64: null}"))


def test_arch_key_on_a_freezing_kernel_refused(tmp_path):
    # an arch key applies to every kernel there, a freezing one too: refused like a kernel key
    # (no default: on x86_64 nothing applies to k2; the arch key does on arm64)
    text = K2_FREEZES.replace(*OUTCOME_EXCEPTED).replace("klog.x: {default: 0, k2: null}",
                                                         "klog.x: {k1: 0, arm64: '1'}")
    assert text != K2_FREEZES.replace(*OUTCOME_EXCEPTED)
    msg = refused(tmp_path, text, "klog.x")
    assert "k2 on arm64, whose outcome is freeze" in msg


@pytest.mark.parametrize("step,key", [
    ("state", "state.enforce"), ("mount", "mount"), ("concurrent", "concurrent.c.load"),
    ("concurrent:r", "concurrent.r.writes"), ("hooks:@PTDUMP@", "hooks.selinux_hooks"),
    ("hooks", "hooks.writable"), ("load:l:-i", "load.l"), ("config:permissive", "config"),
    ("write:w:@4096:1:65534", "write.w"),
])
def test_expect_key_some_step_reports(tmp_path, step, key):
    text = BASE.replace("cmd:c:/bin/true -v]", f"cmd:c:/bin/true -v, '{step}']").replace(
        "      klog.x: 0\n", f"      klog.x: 0\n      {key}: '1'\n")
    load(tmp_path, text)


@pytest.mark.parametrize("step", ["frobnicate", "write:one", "write::1", "klog:x", "cmd:c", "mount:x",
                                  "state:", "config:off", "write:w:1:x", "load", "write:one:2"])
def test_bad_steps_refused(tmp_path, step):
    refused(tmp_path, BASE.replace("cmd:c:/bin/true -v]", f"cmd:c:/bin/true -v, '{step}']"), "steps", 10)


# --- the bash suite's messages (tests/suite.sh t_matrix_bad_input) still hold -------------
@pytest.mark.parametrize("name,text,want", [
    ("badtree", 'kernels:\n  a: {tree: "5.4", config: selinux}\nscenarios:\n  s: {steps: [state]}\nsets: {default: [{}]}\n',
     "badtree.yaml:2: tree"),
    ("badstep", 'kernels:\n  a: {tree: "6.1", config: selinux}\nscenarios:\n  s:\n    steps: [state, frobnicate]\nsets: {default: [{}]}\n',
     "badstep.yaml:5: steps"),
    ("notyaml", "kernels: [\n", "notyaml.yaml:2: not valid YAML"),
    ("badexpect", 'kernels:\n  a: {tree: "6.1", config: selinux}\nscenarios:\n  s:\n    steps: [state]\n    expect:\n'
     '      x: {nokernel: "1"}\nsets: {default: [{}]}\n', "badexpect.yaml:7: nokernel"),
])
def test_suite_messages(tmp_path, name, text, want):
    r = cli(["--matrix", write(tmp_path, text, f"{name}.yaml"), "--list"])
    assert r.returncode == 2 and want in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


# --- the runner's arguments ----------------------------------------------------------------
def cli(args, env=None, **kw):
    return subprocess.run(MATRIX + args, capture_output=True, text=True, timeout=30,
                          env=dict(MATRIX_ENV, **(env or {})), **kw)


@pytest.mark.parametrize("args,env,want", [
    (["--timeout", "-5"], None, "--timeout"),
    (["--timeout", "0"], None, "--timeout"),
    (["--timeout", "99999999999999999999"], None, "--timeout"),
    (["--jobs", "0"], None, "--jobs"),
    (["--jobs", "many"], None, "--jobs"),
    ([], {"JOBS": "abc"}, "JOBS"),
    (["--run", "../../etc"], None, "--run"),
    (["--only", "arch=sparc"], None, "unknown arch 'sparc'"),
    (["--set", "nosuch"], None, "unknown set"),
    (["--frobnicate"], None, "unrecognized"),
    (["--shard", "3/2"], None, "--shard"),
    (["--shard", "0/2"], None, "--shard"),
    (["--shard", "1"], None, "--shard"),
    (["--retries", "9"], None, "--retries"),
    (["--accel", "hvf"], None, "--accel"),
])
def test_bad_arguments_one_line(args, env, want):
    r = cli(args + ["--list"], env)
    assert r.returncode == 2, r
    assert len(r.stderr.splitlines()) == 1 and want in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""


def test_bad_file_through_the_cli(tmp_path):
    r = cli(["--matrix", write(tmp_path, BASE.replace("arches: [x86_64]", "arches: 5")), "--list"])
    assert r.returncode == 2 and r.stderr.startswith("matrix: error: m.yaml:2: arches: ")
    assert len(r.stderr.splitlines()) == 1


def test_list_into_a_closed_pipe():
    # --list | head -1: the reader is gone before the list is written.
    rfd, wfd = os.pipe()
    os.close(rfd)
    try:
        r = subprocess.run(MATRIX + ["--list"], stdout=wfd, stderr=subprocess.PIPE, text=True, timeout=30,
                           env=MATRIX_ENV)
    finally:
        os.close(wfd)
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
