#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make demo's report: the vRSS off/on table and the chart.

  report.py DIR

Reads DIR/off-R.json and DIR/on-R.json (vrss-ttcp --json, round R) and
the width changes traced during each run (DIR/{off,on}-R-widths.txt),
prints a side by side table of the medians over the rounds (min-max beside
the throughput) and draws DIR/demo.png with gnuplot from the median run of
each: the busy percentage of each vCPU over time, vRSS off above, on
below, the moments the width changed marked.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys


def widths(path, start):
    """[(seconds since the measurement started, old, new)] from the trace."""
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        m = re.search(r"\s(\d+\.\d+): vrss_width_change: .*width=(\d+)->(\d+)", line)
        if m:
            out.append((float(m.group(1)) - start, int(m.group(2)), int(m.group(3))))
    return out


def med(runs, f):
    return statistics.median(f(r) for r in runs)


def busy_line(runs, cpu):
    return (f"{med(runs, lambda r: r['cpus'][cpu]['busy']):5.1f} "
            f"({med(runs, lambda r: r['cpus'][cpu]['softirq']):4.1f} si)")


def median_run(runs):
    """The run whose throughput is the median (the lower middle one of an
    even number)."""
    by = sorted(runs, key=lambda r: r["throughput_mbps"])
    return by[(len(by) - 1) // 2]


def main():
    d = sys.argv[1]
    runs, changes = {}, {}
    for name in ("off", "on"):
        paths = sorted(glob.glob(os.path.join(d, f"{name}-[0-9]*.json")),
                       key=lambda p: int(re.search(r"-(\d+)\.json$", p).group(1)))
        runs[name] = [json.load(open(p)) for p in paths]
        for p, r in zip(paths, runs[name]):
            r["widths"] = widths(p[:-len(".json")] + "-widths.txt", r["start_monotonic"])
    if not runs["off"] or not runs["on"]:
        sys.exit(f"demo: no runs in {d}")
    off, on = median_run(runs["off"]), median_run(runs["on"])
    changes = {"off": off["widths"], "on": on["widths"]}
    ncpu = len(off["cpus"])
    rules = open(os.path.join(d, "rules.txt")).read().strip() if os.path.exists(os.path.join(d, "rules.txt")) else "0"

    def window(r):
        """The width the measured window started at, and the changes in it
        (the trace runs from before the receiver starts to after it ends)."""
        w0, inside = 1, []
        for t, old, new in r["widths"]:
            if t < 0:
                w0 = new
            elif t <= r["seconds"]:
                inside.append((t, old, new))
        return w0, inside

    def maxwidth(r):
        w0, inside = window(r)
        return max([w0] + [new for _, _, new in inside])

    def tput(rs):
        m = med(rs, lambda r: r["throughput_mbps"])
        return (f"{m:.0f} ({min(r['throughput_mbps'] for r in rs):.0f}-"
                f"{max(r['throughput_mbps'] for r in rs):.0f})")

    ratio = med(runs["on"], lambda r: r["throughput_mbps"]) / max(med(runs["off"], lambda r: r["throughput_mbps"]), 1e-9)
    rows = [("throughput (Mbit/s)", tput(runs["off"]), tput(runs["on"]), f"x {ratio:.2f}")]
    for c in range(ncpu):
        rows.append((f"vCPU {c} busy % (softirq)", busy_line(runs["off"], c), busy_line(runs["on"], c), ""))
    rows += [
        ("queues in use (max width)", "1", f"{med(runs['on'], maxwidth):.0f}", ""),
        ("width changes", f"{med(runs['off'], lambda r: len(window(r)[1])):.0f}",
         f"{med(runs['on'], lambda r: len(window(r)[1])):.0f}", ""),
        ("IPIs per frame", f"{med(runs['off'], lambda r: r['ipis_per_packet']):.3f}",
         f"{med(runs['on'], lambda r: r['ipis_per_packet']):.3f}", ""),
        ("TCP retransmits", f"{med(runs['off'], lambda r: r['tcp_retransmits']):.0f}",
         f"{med(runs['on'], lambda r: r['tcp_retransmits']):.0f}", ""),
        ("cycles/byte (CPU time x MHz)", f"{med(runs['off'], lambda r: r['cycles_per_byte']):.1f}",
         f"{med(runs['on'], lambda r: r['cycles_per_byte']):.1f}", ""),
    ]
    print()
    what = f"{rules} firewall rules on input (receive-bound)" if rules != "0" else "no firewall rules"
    print(f"{off['streams']} {off['mode'].upper()} streams, {off['seconds']:.0f} s each, {ncpu} vCPUs, {what}; "
          f"medians of {len(runs['off'])} alternated rounds")
    print(f"{'':28} {'vRSS off':>16} {'vRSS on':>16}")
    for name, a, b, note in rows:
        print(f"{name:28} {a:>16} {b:>16}  {note}")
    print("  rounds (Mbit/s): off " + " ".join(f"{r['throughput_mbps']:.0f}" for r in runs["off"]) +
          ", on " + " ".join(f"{r['throughput_mbps']:.0f}" for r in runs["on"]))
    for t, old, new in window(on)[1]:
        print(f"  vRSS on (the median run): width {old} -> {new} at {t:.1f} s")

    # The chart: per-vCPU receive work (softirq %) and busy % per second,
    # off on top, on below.
    data = os.path.join(d, "demo.dat")
    with open(data, "w") as f:
        for run in (off, on):
            for s in run["samples"]:
                f.write(f"{s['t']:.1f} " + " ".join(f"{b:.1f}" for b in s["softirq"]) +
                        " " + " ".join(f"{b:.1f}" for b in s["busy"]) + "\n")
            f.write("\n\n")
    png = os.path.join(d, "demo.png")
    spread = [t for t, old, new in changes["on"] if new > old and t >= 0]
    plot = lambda idx: ", ".join(
        f"'{data}' index {idx} using 1:{c + 2} with linespoints lw 3 lc {c + 1} "
        f"title 'vCPU {c} receive (softirq)', "
        f"'{data}' index {idx} using 1:{ncpu + c + 2} with lines dt 3 lw 1 lc {c + 1} "
        f"title 'vCPU {c} busy'"
        for c in range(ncpu))
    marks = "".join(
        f"set arrow from {t:.2f}, graph 0 to {t:.2f}, graph 1 nohead dt 2 lw 2 lc rgb 'red'\n"
        f"set label 'spread' at {t:.2f}, graph 0.95 left offset 0.5,0 tc rgb 'red'\n"
        for t in spread[:1])
    script = f"""set terminal pngcairo size 1000,700 font ',10'
set output '{png}'
set multiplot layout 2,1
set xlabel 'seconds'
set ylabel '% of the vCPU'
set yrange [0:105]
set xrange [0:*]
set grid
set key outside right
set title 'vRSS off (rxhash off): {off['throughput_mbps']:.0f} Mbit/s, {off['streams']} {off['mode'].upper()} streams, {what}'
plot {plot(0)}
set title 'vRSS on (rxhash on, threshold 80 %): {on['throughput_mbps']:.0f} Mbit/s (median runs)'
{marks}plot {plot(1)}
unset multiplot
"""
    with open(os.path.join(d, "demo.gp"), "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", os.path.join(d, "demo.gp")], check=True)
    print(f"\nchart: {os.path.abspath(png)}")


if __name__ == "__main__":
    main()
