#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""profile.py's --base arithmetic on made-up windows (make unit)."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

# By its path: the standard library has a module named profile too.
_spec = importlib.util.spec_from_file_location(
    "vrss_profile", os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile.py"))
prof = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prof)

BASE = 0xffffffff81000000
# name: address; vrss_* in the module.
SYMS = {"ip_rcv": 0x100, "core": 0x200, "irq": 0x300, "tick": 0x400,
        "vrss_rx": 0x10000, "vrss_load": 0x10100}
FRAMES = 500


class Excess(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.ks = os.path.join(self.dir.name, "kallsyms")
        with open(self.ks, "w") as f:
            for name, off in SYMS.items():
                mod = " [vrss]" if name.startswith("vrss") else ""
                f.write(f"{BASE + off:x} t {name}{mod}\n")
        self.n = 0

    def tearDown(self):
        self.dir.cleanup()

    def window(self, calls):
        """calls: name -> (calls, insns per call); a call is a block at
        the symbol (4 instructions) and one inside it (the rest)."""
        self.n += 1
        path = os.path.join(self.dir.name, f"w{self.n}")
        with open(path, "w") as f:
            for name, (c, per) in calls.items():
                a = BASE + SYMS[name]
                f.write(f"{a:x} {4 * c} {c}\n")
                if per > 4:
                    f.write(f"{a + 8:x} {(per - 4) * c} {c}\n")
            f.write(f"{0x400000:x} 1000 10\n")  # user space: not counted
        return path

    def test_excess(self):
        p = prof.Profile(self.ks, "vrss")
        base, conf = [], []
        for r in range(5):
            # Per interrupt and per tick: come and go, not the path.
            base.append(self.window({
                "ip_rcv": (FRAMES, 100), "core": (FRAMES, 60),
                "irq": (FRAMES - 3 * r, 50 + r), "tick": (7 + r, 300)}))
            conf.append(self.window({
                "ip_rcv": (FRAMES, 100), "core": (2 * FRAMES, 60),
                "irq": (FRAMES - 5 * r, 50), "tick": (20 * r, 300),
                "vrss_rx": (FRAMES, 20), "vrss_load": (1 + r % 2, 1000)}))
        d, cost, base_cost, lo, hi, off = prof.excess(p, p.calls(conf), p.calls(base), FRAMES)
        # core's second call, vrss_rx, the load work's median 1 call.
        self.assertEqual(base_cost, 100 + 60)
        self.assertEqual(cost, 100 + 2 * 60 + 20)
        self.assertAlmostEqual(d, 60 + 20 + 1000 / FRAMES)
        # Window by window: the load work ran once or twice.
        self.assertAlmostEqual(lo, 60 + 20 + 1000 / FRAMES)
        self.assertAlmostEqual(hi, 60 + 20 + 2000 / FRAMES)
        # Off the path: tick's median 40 calls x 300 against the base's
        # largest 11 x 300; irq ran less.
        self.assertAlmostEqual(off, (40 - 11) * 300 / FRAMES)

    def test_costlier_call(self):
        """An instruction added to a function every frame calls counts."""
        p = prof.Profile(self.ks, "vrss")
        base = [self.window({"ip_rcv": (FRAMES, 100)}) for _ in range(3)]
        conf = [self.window({"ip_rcv": (FRAMES, 103)}) for _ in range(3)]
        d, _, _, _, _, _ = prof.excess(p, p.calls(conf), p.calls(base), FRAMES)
        self.assertEqual(d, 3)

    def test_not_whole(self):
        """A path function this configuration calls 1.4 times a frame
        costs all its instructions, not one call's; 0.4 times, not 0."""
        p = prof.Profile(self.ks, "vrss")
        base = [self.window({"ip_rcv": (FRAMES, 100)}) for _ in range(3)]
        for calls, want in ((FRAMES * 14 // 10, 40), (FRAMES * 4 // 10, -60)):
            conf = [self.window({"ip_rcv": (calls, 100)}) for _ in range(3)]
            d, _, _, _, _, _ = prof.excess(p, p.calls(conf), p.calls(base), FRAMES)
            self.assertAlmostEqual(d, want)

    def test_groups(self):
        """--group gives each configuration the line its own run gives."""
        base = [self.window({"ip_rcv": (FRAMES, 100)}) for _ in range(3)]
        conf = [self.window({"ip_rcv": (FRAMES, 100 + r), "vrss_rx": (FRAMES, 20)})
                for r in range(3)]
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile.py")

        def run(*args):
            return subprocess.run([sys.executable, script, self.ks, *args, "--frames",
                                   str(FRAMES)], check=True, capture_output=True,
                                  text=True).stdout.splitlines()
        alone = run(*conf, "--base", *base) + run(*base)
        both = run("--group", "on", *conf, "--group", "plain", *base, "--versus", "plain", "on")
        self.assertEqual(both, ["on " + alone[0], "plain " + alone[1]])
        self.assertIn("excess 21 ", both[0])
        with self.assertRaises(subprocess.CalledProcessError):
            run("--group", "on", *conf, "--versus", "plain", "on")

    def test_no_execs(self):
        path = os.path.join(self.dir.name, "old")
        with open(path, "w") as f:
            f.write(f"{BASE + 0x100:x} 40\n")
        p = prof.Profile(self.ks, "vrss")
        with self.assertRaises(SystemExit):
            p.calls([path])


if __name__ == "__main__":
    unittest.main()
