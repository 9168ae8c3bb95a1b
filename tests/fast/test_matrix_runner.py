"""Self-tests of the matrix runner on captured real probe output (tests/host/fixtures),
including the ugly cases: output cut off mid-way, wrong expectations, kernels that
disagree. Fast: no kernel, no boot."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
from harness import matrix  # noqa: E402
from harness import matrixspec  # noqa: E402


def fixture(name):
    with open(os.path.join(ROOT, "tests", "host", "fixtures", name)) as f:
        return f.read()


class Probe(unittest.TestCase):
    def setUp(self):
        self.spec = matrixspec.load(os.path.join(ROOT, "matrix.yaml"), ROOT)
        self.scen = self.spec.scenarios["permissive"]

    def test_real_output_matches_stock(self):
        obs, broken = matrix.parse_probe(fixture("stock-x86_64-permissive.ktap"))
        self.assertEqual(broken, [])
        checks = matrix.compare(self.scen, "6.1-stock", "x86_64", obs, broken)
        self.assertTrue(checks)
        self.assertEqual([c for c in checks if not c["pass"]], [])

    def test_same_output_fails_for_patched(self):
        # Stock answers EINVAL where the accept build must answer count: must not pass.
        obs, broken = matrix.parse_probe(fixture("stock-x86_64-permissive.ktap"))
        bad = [c["name"] for c in matrix.compare(self.scen, "6.1-patched-accept", "x86_64", obs, broken) if not c["pass"]]
        self.assertIn("write.one", bad)
        self.assertIn("klog.pruned", bad)

    def test_arch_without_a_dump_is_held_to_its_own_value(self):
        # mips64el expects no-dump: x86_64's real "none" is not accepted there, and a
        # probe that said no-dump on x86_64 would not pass either.
        obs, broken = matrix.parse_probe(fixture("stock-x86_64-permissive.ktap"))
        bad = [c["name"] for c in matrix.compare(self.scen, "6.1-stock", "mips64el", obs, broken) if not c["pass"]]
        self.assertEqual(bad, ["hooks.writable"])
        obs["hooks.writable"] = "no-dump"
        bad = [c["name"] for c in matrix.compare(self.scen, "6.1-stock", "x86_64", obs, broken) if not c["pass"]]
        self.assertEqual(bad, ["hooks.writable"])

    def test_cut_off_output_is_missing_not_passed(self):
        obs, broken = matrix.parse_probe(fixture("cut-off.ktap"))
        checks = matrix.compare(self.scen, "6.1-stock", "x86_64", obs, broken)
        missing = [c for c in checks if c["got"] == "missing"]
        self.assertTrue(missing)
        self.assertTrue(all(not c["pass"] for c in missing))

    def test_probe_failure_is_a_failure(self):
        obs, broken = matrix.parse_probe("# obs: hooks=unobservable\nnot ok 13 hooks\n")
        checks = matrix.compare(self.scen, "6.1-stock", "x86_64", obs, broken)
        self.assertFalse(checks[0]["pass"])
        self.assertEqual(checks[0]["name"], "probe")

    def test_outcomes(self):
        self.assertEqual(matrix.outcome_of(0), "ok")
        self.assertEqual(matrix.outcome_of(123), "freeze")
        self.assertEqual(matrix.outcome_of(124), "timeout")
        self.assertEqual(matrix.outcome_of(126), "kernel-problem")
        self.assertEqual(matrix.outcome_of(127), "no-result")


class Differential(unittest.TestCase):
    def setUp(self):
        self.spec = matrixspec.load(os.path.join(ROOT, "matrix.yaml"), ROOT)

    def cell(self, kernel, obs, outcome="ok"):
        return {"kernel": kernel, "arch": "x86_64", "scenario": "permissive",
                "outcome": outcome, "observed": obs, "checks": []}

    def test_agreeing_kernels_pass(self):
        r = [self.cell("6.1-patched-accept", {"write.one": "count"}), self.cell("6.12", {"write.one": "count"})]
        d = [x for x in matrix.differential(r, self.spec) if "6.12" in x["name"]]
        self.assertEqual(len(d), 1)
        self.assertTrue(d[0]["pass"])

    def test_disagreeing_kernels_fail(self):
        r = [self.cell("6.1-patched-accept", {"write.one": "count"}), self.cell("6.12", {"write.one": "EINVAL"})]
        d = [x for x in matrix.differential(r, self.spec) if "6.12" in x["name"]]
        self.assertFalse(d[0]["pass"])
        self.assertIn("write.one", d[0]["diff"][0])

    def test_listed_exception_is_allowed(self):
        r = [self.cell("6.1-patched", {"write.one": "EINVAL", "klog.pruned": "1"}),
             self.cell("6.1-stock", {"write.one": "EINVAL", "klog.pruned": "0"})]
        d = [x for x in matrix.differential(r, self.spec) if "stock" in x["name"]]
        self.assertTrue(d[0]["pass"])

    def test_outcome_differs(self):
        r = [self.cell("6.1-patched-accept", {}), self.cell("6.12", {}, outcome="freeze")]
        d = [x for x in matrix.differential(r, self.spec) if "6.12" in x["name"]]
        self.assertFalse(d[0]["pass"])
        self.assertIn("outcome", d[0]["diff"][0])

    def test_outcome_exception_is_scenario_bound(self):
        # enforcing-disabled-switch lists its outcome for accept == 6.12: there it may differ,
        # in any other scenario it may not.
        for sname, passes in (("enforcing-disabled-switch", True), ("enforcing-disabled", False)):
            r = [dict(self.cell("6.1-patched-accept", {"boot.lsm": "capability,selinux"}), scenario=sname),
                 dict(self.cell("6.12", {}, outcome="freeze"), scenario=sname)]
            d = [x for x in matrix.differential(r, self.spec) if "6.12" in x["name"]]
            self.assertEqual(d[0]["pass"], passes, sname)

    def test_missing_observation_disagrees(self):
        r = [self.cell("6.1-patched-accept", {"write.one": "count", "hooks.writable": "none"}),
             self.cell("6.12", {"write.one": "count"})]
        d = [x for x in matrix.differential(r, self.spec) if "6.12" in x["name"]]
        self.assertFalse(d[0]["pass"])


class ListBuilds(unittest.TestCase):
    """--list-builds names each kernel the set boots once (the slow tier's background
    builds read it), and nothing the set does not boot."""

    def test_each_kernel_of_the_set_once(self):
        import subprocess
        run = lambda *a: subprocess.run(["/usr/bin/python3", "-m", "harness.matrix", *a], cwd=ROOT,
                                        capture_output=True, text=True, check=True).stdout.split("\n")
        cells = [c.split() for c in run("--set", "test", "--list") if c]
        builds = [b for b in run("--set", "test", "--list-builds") if b]
        self.assertEqual(len(builds), len(set(builds)))
        spec = matrixspec.load(os.path.join(ROOT, "matrix.yaml"), ROOT)
        want = {f"{a} {spec.kernels[k]['tree']} {spec.kernels[k]['config']}" for k, a, _ in cells}
        self.assertEqual(set(builds), want)
        # a slice boots fewer kernels: the list follows the selection
        one = [b for b in run("--set", "test", "--only", "kernel=6.1-legacy", "--list-builds") if b]
        self.assertEqual(one, ["x86_64 6.1 legacy"])


class TestEstimate(unittest.TestCase):
    """The progress lines' estimate: the boots left at the boots' own pace, the builds apart
    (at the pace of whole cells, the first cells' wait for a cold kernel would make two
    minutes of boots look like an hour)."""

    def test_boots_left_at_the_pace_of_the_boots_shared_by_the_guests(self):
        self.assertEqual(matrix.estimate([10.0, 20.0, None], 8, 2, 0), "about 1m00s of boots left")

    def test_builds_still_to_come_are_named_not_guessed(self):
        self.assertEqual(matrix.estimate([30.0], 4, 2, 1), "about 1m00s of boots left, and 1 kernel build")
        self.assertEqual(matrix.estimate([30.0], 4, 2, 3), "about 1m00s of boots left, and 3 kernel builds")

    def test_nothing_booted_yet(self):
        self.assertEqual(matrix.estimate([None], 4, 2, 1), "estimate after the first cell")


if __name__ == "__main__":
    unittest.main()
