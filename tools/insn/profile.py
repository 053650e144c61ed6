#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where the instruction meter's windows went (tools/insn/insn.c), against
the guest's /proc/kallsyms.

  profile.py KALLSYMS PROF [--module NAME] [--top N] [--with-waits]
  profile.py KALLSYMS PROF... --frames N [--module NAME] [--with-waits]

PROF is a window of the meter's profile ($VRSS_INSNS.prof.SEQ, SEQ the
profiling mark that closed it), KALLSYMS a copy of the guest's
/proc/kallsyms taken as root once the modules of interest were loaded.

One window: prints "total T kernel K module M" (T every instruction in the
window, K the kernel's but for spinning (below), M those in NAME's functions, default vrss), then
with --top the N functions that ran most: INSNS FUNCTION [MODULE].

Several windows of one configuration, each N frames: the typical window,
per frame: "kernel K module M min KMIN max KMAX".  K is the sum over the
kernel's functions of each function's median over the windows, M the
same over NAME's functions, KMIN and KMAX the smallest and largest
window's kernel instructions.  The receive path runs the same functions
the same number of times for every frame; what differs between windows of
one configuration is housekeeping that comes and goes (page allocator
drains, timer and vmstat work, lock contention), each in a few windows:
the per-function median keeps the path and drops most of that.

A translation block lies in one function (it ends at the first branch),
so a block's instructions belong to the symbol at or below its start.

Spinning on a lock or an owner is left out of the kernel's figures
(WAITING; --with-waits keeps it): under TCG a vCPU is a host thread, and
one that holds a lock can lose its host core while another spins for it,
so the spin's instructions measure the host's scheduling, not work (one
window of the same configuration spun 0.3 M instructions, the next none).
"""
import argparse
import bisect
import statistics
import sys

KERNEL_BASE = 0xffff800000000000

WAITING = {
    "native_queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "queued_read_lock_slowpath",
    "queued_write_lock_slowpath",
    "mutex_spin_on_owner",
    "rwsem_spin_on_owner",
    "osq_lock",
}


def read_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 3 or w[1] not in "tTwW":
                continue
            addr = int(w[0], 16)
            if addr == 0:
                sys.exit("profile.py: kallsyms has no addresses (not read as root?)")
            mod = w[3].strip("[]") if len(w) > 3 else ""
            syms.append((addr, w[2], mod))
    syms.sort()
    return syms


class Profile:
    def __init__(self, kallsyms, module, with_waits=False):
        self.syms = read_symbols(kallsyms)
        self.addrs = [s[0] for s in self.syms]
        self.module = module
        self.with_waits = with_waits

    def window(self, path):
        """(total, {function: kernel insns}) of the window in PATH;
        functions as (name, module)."""
        total = 0
        funcs = {}
        with open(path, "rb") as f:
            for line in f:
                a, n = line.split()
                addr, n = int(a, 16), int(n)
                total += n
                if addr < KERNEL_BASE:
                    continue
                i = bisect.bisect_right(self.addrs, addr) - 1
                key = self.syms[i][1:] if i >= 0 else ("?", "")
                if key[0] in WAITING and not self.with_waits:
                    continue
                funcs[key] = funcs.get(key, 0) + n
        return total, funcs

    def own(self, funcs):
        return sum(n for (_, mod), n in funcs.items() if mod == self.module)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kallsyms")
    ap.add_argument("prof", nargs="+")
    ap.add_argument("--module", default="vrss")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--frames", type=int, default=0)
    ap.add_argument("--with-waits", action="store_true")
    a = ap.parse_args()
    p = Profile(a.kallsyms, a.module, a.with_waits)
    if not a.frames:
        if len(a.prof) != 1:
            sys.exit("profile.py: several windows need --frames")
        total, funcs = p.window(a.prof[0])
        print(f"total {total} kernel {sum(funcs.values())} module {p.own(funcs)}")
        for (name, mod), n in sorted(funcs.items(), key=lambda x: -x[1])[:a.top]:
            print(f"{n} {name}" + (f" [{mod}]" if mod else ""))
        return
    windows = [p.window(path)[1] for path in a.prof]
    names = set().union(*windows)
    med = {k: statistics.median(w.get(k, 0) for w in windows) for k in names}
    kernels = [sum(w.values()) for w in windows]
    f = a.frames
    print(f"kernel {sum(med.values()) / f:.0f} module {p.own(med) / f:.0f}"
          f" min {min(kernels) / f:.0f} max {max(kernels) / f:.0f}")


if __name__ == "__main__":
    main()
