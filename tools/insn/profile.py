#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where the instruction meter's windows went (tools/insn/insn.c), against
the guest's /proc/kallsyms.

  profile.py KALLSYMS PROF [--module NAME] [--top N] [--with-waits]
  profile.py KALLSYMS PROF... --frames N [--module NAME] [--with-waits]
                              [--base PROF...]
  profile.py KALLSYMS --frames N --group NAME PROF... [--group NAME PROF...]
                      [--versus BASE NAME...] [--module NAME] [--with-waits]

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

With --base, the windows of a configuration to compare with (plain, the
NIC alone), each of N frames too; the line then ends "excess D path P
base B": what a frame costs more than in the base, counted on the frame's
own path, P and B that path's instructions per frame; then "emin EMIN
emax EMAX", D taken over each window of the configuration alone, and
"offpath O": what the kernel's functions off the path ran more, in the
configuration's median window, than in the base's largest, summed, per
frame (a report: work not paid once a frame, such as the load work's
timer, and the windows' own spread).  The path is the functions called
the same whole number of times per frame (k, 1 or more)
in every window of one of the two configurations: ip_rcv once a frame,
__netif_receive_skb_core once in the base and twice through vrss0.  Each
such function costs k times its median instructions per call in each
configuration (k its median calls per frame there, 0 where it is not
called; where that is not within 0.02 of a whole number, the function
costs all its median instructions instead); D = P - B, plus what the module NAME executed outside
the path (its load work, say), per frame.  Unlike the windows' totals, D
does not move with what comes and goes between windows (frames that
arrive together share an interrupt and a wakeup, so the functions called
per interrupt or per wakeup are not on the path), and it still has every
call a configuration adds to each frame, and each added instruction in a
function a frame calls.  Needs profiles with EXECS (tools/insn/insn.c).

With --group, several configurations in one run (kallsyms and each window
read once): a line for each group, its NAME first, and --versus BASE
NAME... compares each named group with the group BASE, as --base does.

A translation block lies in one function (it ends at the first branch),
so a block's instructions belong to the symbol at or below its start,
and a block that starts at the symbol is a call of that function.

Spinning on a lock or an owner is left out of the kernel's figures
(WAITING; --with-waits keeps it): under TCG a vCPU is a host thread, and
one that holds a lock can lose its host core while another spins for it,
so the spin's instructions measure the host's scheduling, not work, and
differ from one window of the same configuration to the next.
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
        self.read = {}

    def window(self, path, calls=None):
        """(total, {function: kernel insns}) of the window in PATH;
        functions as (name, module).  CALLS, a dict, gets each function's
        calls (None if the profile has no EXECS)."""
        total = 0
        funcs = {}
        with open(path, "rb") as f:
            for line in f:
                w = line.split()
                addr, n = int(w[0], 16), int(w[1])
                total += n
                if addr < KERNEL_BASE:
                    continue
                i = bisect.bisect_right(self.addrs, addr) - 1
                key = self.syms[i][1:] if i >= 0 else ("?", "")
                if key[0] in WAITING and not self.with_waits:
                    continue
                funcs[key] = funcs.get(key, 0) + n
                if calls is None:
                    continue
                if len(w) < 3:
                    sys.exit(f"profile.py: {path} has no EXECS column (an old meter?)")
                if i >= 0 and self.addrs[i] == addr:
                    calls[key] = calls.get(key, 0) + int(w[2])
        return total, funcs

    def own(self, funcs):
        return sum(n for (_, mod), n in funcs.items() if mod == self.module)

    def calls(self, paths):
        """[(insns, calls)] of each window in PATHS, function-keyed; each
        window read once however often it is asked for."""
        for path in paths:
            if path not in self.read:
                c = {}
                self.read[path] = (self.window(path, c)[1], c)
        return [self.read[path] for path in paths]


def per_frame(windows, frames):
    """The functions called the same k >= 1 times per frame in every one
    of WINDOWS ([(insns, calls)])."""
    first = windows[0][1]
    return {
        f for f, n in first.items()
        if n >= frames and n % frames == 0
        and all(w[1].get(f, 0) == n for w in windows[1:])
    }


# Calls per frame this close to a whole number k are k calls a frame.
WHOLE = 0.02


def path_cost(windows, frames, path):
    """Instructions per frame of PATH's functions in WINDOWS: each
    function's calls per frame times its median per call where that is a
    whole number (within WHOLE); where it is not (a path function that
    this configuration calls 1.4 times a frame), its median instructions,
    all of them."""
    cost = 0
    for f in path:
        per = statistics.median(w[1].get(f, 0) for w in windows) / frames
        k = round(per)
        if abs(per - k) > WHOLE:
            cost += statistics.median(w[0].get(f, 0) for w in windows) / frames
        elif k:
            cost += k * statistics.median(w[0][f] / w[1][f] for w in windows if w[1].get(f))
    return cost


def off_path(windows, base, frames, path, module):
    """Per frame: what kernel functions off PATH (and not MODULE's) ran
    more in WINDOWS' median than in the base's largest window, summed; a
    report of work a configuration adds that is not paid once a frame."""
    names = set().union(*(w[0] for w in windows))
    more = 0
    for f in names:
        if f in path or f[1] == module:
            continue
        m = statistics.median(w[0].get(f, 0) for w in windows)
        more += max(0, m - max(w[0].get(f, 0) for w in base))
    return more / frames


def excess(p, windows, base, frames):
    """(D, P, B, DMIN, DMAX, O) per frame: see --base; DMIN and DMAX the
    least and largest of D taken over one window at a time, O off_path()."""
    path = per_frame(windows, frames) | per_frame(base, frames)

    def own_off_path(w):
        return sum(n for f, n in w[0].items() if f[1] == p.module and f not in path)

    base_cost = path_cost(base, frames, path)
    cost = path_cost(windows, frames, path)
    d = cost - base_cost + statistics.median(own_off_path(w) for w in windows) / frames
    each = [path_cost([w], frames, path) - base_cost + own_off_path(w) / frames
            for w in windows]
    return d, cost, base_cost, min(each), max(each), off_path(windows, base, frames, path, p.module)


def typical(p, paths, frames, base):
    """The line of one configuration's windows PATHS, each of FRAMES
    frames, against the windows BASE (none: no excess)."""
    # With a base the calls too, from the same one read of each window.
    conf = p.calls(paths) if base else [(p.window(path)[1], None) for path in paths]
    windows = [w[0] for w in conf]
    names = set().union(*windows)
    med = {k: statistics.median(w.get(k, 0) for w in windows) for k in names}
    kernels = [sum(w.values()) for w in windows]
    f = frames
    line = (f"kernel {sum(med.values()) / f:.0f} module {p.own(med) / f:.0f}"
            f" min {min(kernels) / f:.0f} max {max(kernels) / f:.0f}")
    if base:
        d, cost, base_cost, lo, hi, off = excess(p, conf, p.calls(base), f)
        line += (f" excess {d:.0f} path {cost:.0f} base {base_cost:.0f}"
                 f" emin {lo:.0f} emax {hi:.0f} offpath {off:.0f}")
    return line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kallsyms")
    ap.add_argument("prof", nargs="*")
    ap.add_argument("--module", default="vrss")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--frames", type=int, default=0)
    ap.add_argument("--with-waits", action="store_true")
    ap.add_argument("--base", nargs="+", default=[])
    ap.add_argument("--group", nargs="+", action="append", default=[])
    ap.add_argument("--versus", nargs="+", default=[])
    a = ap.parse_args()
    p = Profile(a.kallsyms, a.module, a.with_waits)
    if a.group:
        groups = {g[0]: g[1:] for g in a.group}
        if a.prof or a.base or not a.frames or len(groups) != len(a.group):
            sys.exit("profile.py: --group takes --frames, distinct names and no other windows")
        if any(len(g) < 2 for g in a.group) or any(n not in groups for n in a.versus):
            sys.exit("profile.py: a group without windows, or --versus names no group")
        for name, paths in groups.items():
            versus = groups[a.versus[0]] if name in a.versus[1:] else []
            print(name, typical(p, paths, a.frames, versus))
        return
    if not a.prof:
        sys.exit("profile.py: no window")
    if not a.frames:
        if len(a.prof) != 1:
            sys.exit("profile.py: several windows need --frames")
        total, funcs = p.window(a.prof[0])
        print(f"total {total} kernel {sum(funcs.values())} module {p.own(funcs)}")
        for (name, mod), n in sorted(funcs.items(), key=lambda x: -x[1])[:a.top]:
            print(f"{n} {name}" + (f" [{mod}]" if mod else ""))
        return
    print(typical(p, a.prof, a.frames, a.base))


if __name__ == "__main__":
    main()
