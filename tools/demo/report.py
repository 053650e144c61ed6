#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make demo's report: the vRSS off/on table and the chart.

  report.py DIR

Reads DIR/off.json and DIR/on.json (vrss-ttcp --json) and the width
changes traced during each run (DIR/{off,on}-widths.txt), prints a side by
side table and draws DIR/demo.png with gnuplot: the busy percentage of each
vCPU over time, vRSS off above, on below, the moments the width changed
marked.
"""
import json
import os
import re
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


def busy_line(run, cpu):
    c = run["cpus"][cpu]
    return f"{c['busy']:5.1f} ({c['softirq']:4.1f} si)"


def main():
    d = sys.argv[1]
    runs = {name: json.load(open(os.path.join(d, name + ".json"))) for name in ("off", "on")}
    changes = {name: widths(os.path.join(d, name + "-widths.txt"),
                            runs[name]["start_monotonic"]) for name in runs}
    off, on = runs["off"], runs["on"]
    ncpu = len(off["cpus"])

    def maxwidth(name):
        w = [new for _, _, new in changes[name] if _ >= 0] + [1]
        return max(w)

    rows = [
        ("throughput (Mbit/s)", f"{off['throughput_mbps']:.0f}", f"{on['throughput_mbps']:.0f}",
         f"x {on['throughput_mbps'] / max(off['throughput_mbps'], 1e-9):.2f}"),
    ]
    for c in range(ncpu):
        rows.append((f"vCPU {c} busy % (softirq)", busy_line(off, c), busy_line(on, c), ""))
    rows += [
        ("queues in use (max width)", "1", str(maxwidth("on")), ""),
        ("width changes", str(len(changes["off"])), str(len(changes["on"])), ""),
        ("IPIs per packet", f"{off['ipis_per_packet']:.3f}", f"{on['ipis_per_packet']:.3f}", ""),
        ("TCP retransmits", str(off["tcp_retransmits"]), str(on["tcp_retransmits"]), ""),
        ("CPU cycles per byte", f"{off['cycles_per_byte']:.1f}", f"{on['cycles_per_byte']:.1f}", ""),
    ]
    print()
    print(f"{off['streams']} {off['mode'].upper()} streams, {off['seconds']:.0f} s each, {ncpu} vCPUs")
    print(f"{'':28} {'vRSS off':>16} {'vRSS on':>16}")
    for name, a, b, note in rows:
        print(f"{name:28} {a:>16} {b:>16}  {note}")
    for t, old, new in changes["on"]:
        if t >= 0:
            print(f"  vRSS on: width {old} -> {new} at {t:.1f} s")

    # The chart: per-vCPU receive work (softirq %) and busy % per second,
    # off on top, on below.
    data = os.path.join(d, "demo.dat")
    with open(data, "w") as f:
        for name in ("off", "on"):
            for s in runs[name]["samples"]:
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
set title 'vRSS off (rxhash off): {off['throughput_mbps']:.0f} Mbit/s, {off['streams']} {off['mode'].upper()} streams'
plot {plot(0)}
set title 'vRSS on (rxhash on, threshold 80 %): {on['throughput_mbps']:.0f} Mbit/s'
{marks}plot {plot(1)}
unset multiplot
"""
    with open(os.path.join(d, "demo.gp"), "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", os.path.join(d, "demo.gp")], check=True)
    print(f"\nchart: {os.path.abspath(png)}")


if __name__ == "__main__":
    main()
