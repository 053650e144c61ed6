#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: medians, spreads and derived figures.

  report.py RUNS OUT

RUNS/<cpus>/<proto>-<config>-<round>.json and light-<config>-<round>.json
(vrss-ttcp --json; veth, sender in the guest; proto udp, tcp or fw, the
receive-bound guest), RUNS/nic<Q>/ the same on a virtio-net NIC of Q queue
pairs with the sender on the host, RUNS/<cpus>/balance.txt,
RUNS/toeplitz.json, RUNS/cost.txt (cost.sh's KTAP).  Beside a run through vrss0, <name>-vrss.txt (what
vrss did) and <name>-flows.txt (the table in effect and the streams
half-way through; the key in rxfh.txt).  Writes OUT/results.json,
OUT/results.md and OUT/results.tsv (the chart's data) and prints the
markdown.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../selftests/drivers/net/vrss"))
import vrss_udp  # noqa: E402  (the Toeplitz hash and ethtool -x's parser)

CONFIGS = ["plain", "rps", "off", "single", "spread", "gated"]


def load(path):
    with open(path) as f:
        return json.load(f)


def cpu_seconds(r):
    return sum(c["busy"] for c in r["cpus"]) / 100 * r["seconds"]


def cell(v, fmt="{:.0f}"):
    """A summary() as 'median (min-max)'."""
    return f"{fmt.format(v['median'])} ({fmt.format(v['min'])}-{fmt.format(v['max'])})"


def summary(values):
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values), "n": len(values)}


def woken(r):
    """vCPUs that did receive work: 5 % or more of the NET_RX softirqs."""
    total = sum(c["net_rx"] for c in r["cpus"]) or 1
    return sum(1 for c in r["cpus"] if c["net_rx"] * 20 >= total)


def vrss_run(path):
    """What vrss did in the run of vrss-ttcp JSON PATH (its -vrss.txt
    beside it: ipis, packets, rebalances, width, queue_packets), or None
    without vrss0."""
    try:
        with open(path[:-len(".json")] + "-vrss.txt") as f:
            w = f.read().split()
    except FileNotFoundError:
        return None
    return dict(zip(w[::2], w[1::2]))


def vrss_ipis(path):
    """IPIs vrss sent per packet it received in the run of PATH; None
    without vrss0."""
    v = vrss_run(path)
    return None if v is None else int(v["ipis"]) / max(int(v["packets"]), 1)


def proc_addr(field):
    """Address and port of a /proc/net/tcp{,6} field (v4, or v4-mapped
    v6: the last 32-bit word, in host order)."""
    addr, port = field.split(":")
    return bytes.fromhex(addr[-8:])[::-1], int(port, 16)


def run_flows(path, key):
    """Half-way through the TCP run PATH through vrss0 (its -flows.txt):
    the width, and the queue each stream was on, by Toeplitz with KEY, in
    the streams' port order; None without one."""
    try:
        with open(path[:-len(".json")] + "-flows.txt") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    width = int(lines[0].split()[1])
    indir = [int(x) for x in lines[1].split()[1:]]
    flows = []
    if key is None:
        return width, []
    for line in lines[2:]:
        w = line.split()
        if len(w) < 4 or w[3] != "01" or ":" not in w[1]:
            continue    # a header, or not established
        (laddr, lport), (paddr, pport) = proc_addr(w[1]), proc_addr(w[2])
        if not 5001 <= lport <= 5064:
            continue
        data = paddr + laddr + pport.to_bytes(2, "big") + lport.to_bytes(2, "big")
        flows.append((lport, indir[vrss_udp.toeplitz(key, data) % len(indir)]))
    return width, [q for _, q in sorted(flows)]


def latency_run(path):
    """sockperf's round trips of one latency-<config>-<round>.txt: the
    median and 99th percentile (usec), the round trips, and the IPIs."""
    v = {}
    with open(path) as f:
        for line in f:
            m = re.search(r"percentile (\d+\.\d+) =\s*([\d.]+)", line)
            if m:
                v[f"p{float(m.group(1)):g}"] = float(m.group(2))
            m = re.search(r"Total (\d+) observations", line)
            if m:
                v["round_trips"] = int(m.group(1))
            m = re.search(r"# dropped messages = (\d+)", line)
            if m:
                v["dropped"] = int(m.group(1))
            m = re.match(r"(cal_ipis|vrss_ipis) (\d+)", line)
            if m:
                v[m.group(1)] = int(m.group(2))
    return v


def latency_section(d, md):
    """Round trips at a light rate, per config: medians over the rounds of
    each run's median and 99th percentile."""
    res = {}
    for c in CONFIGS:
        runs = [latency_run(p) for p in sorted(glob.glob(os.path.join(d, f"latency-{c}-*.txt")))]
        runs = [r for r in runs if "p50" in r and "p99" in r]
        if not runs:
            continue
        res[c] = {
            "median_usec": summary([r["p50"] for r in runs]),
            "p99_usec": summary([r["p99"] for r in runs]),
            "ipis_per_round_trip": summary([r.get("cal_ipis", 0) / max(r.get("round_trips", 1), 1) for r in runs]),
            "vrss_ipis": summary([r["vrss_ipis"] for r in runs]) if all("vrss_ipis" in r for r in runs) else None,
            "dropped": sum(r.get("dropped", 0) for r in runs),
        }
    if not res:
        return res
    md += ["Latency at a light rate (sockperf ping-pong from the host, UDP, 200 round trips a second, "
           "64 bytes; full round trips in usec, median and min-max over the rounds):", "",
           "| config | median | x plain | 99th percentile | x plain | IPIs per round trip | by vrss | dropped |",
           "|---|---|---|---|---|---|---|---|"]
    for c, v in res.items():
        base = res.get("plain")
        xm = v["median_usec"]["median"] / base["median_usec"]["median"] if base else float("nan")
        x99 = v["p99_usec"]["median"] / base["p99_usec"]["median"] if base else float("nan")
        own = "-" if v["vrss_ipis"] is None else f"{v['vrss_ipis']['max']:.0f}"
        md.append(f"| {c} | {cell(v['median_usec'])} "
                  f"| {xm:.2f} | {cell(v['p99_usec'])} "
                  f"| {x99:.2f} | {v['ipis_per_round_trip']['median']:.2f} | {own} | {v['dropped']} |")
    md.append("")
    return res


def insns_run(path):
    """A window of the meter (guest.sh's meter(): <name>-insns.txt): its
    microseconds, frames and bytes, and each vCPU's kernel and user
    instructions, or None."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    w = lines[0].split()
    v = {k: int(x) for k, x in zip(w[::2], w[1::2])}
    a = [int(x) for x in lines[1].split()[1:]]
    b = [int(x) for x in lines[2].split()[1:]]
    n = (len(b) - 2) // 2
    v["k"] = [b[2 + 2 * i] - a[2 + 2 * i] for i in range(n)]
    v["u"] = [b[3 + 2 * i] - a[3 + 2 * i] for i in range(n)]
    return v


# cost.sh's reports (KTAP info lines, "# # " in the runner's output).
COST_PATH = re.compile(r"^# # (\w+): more than plain on the frame's path: off (\d+|\?), "
                       r"single (\d+|\?), gated (\d+|\?) \(1 % of plain's whole path: (\d+)\)")
COST_SPREAD = re.compile(r"^# # (\w+): to vCPU 1, both vCPUs' kernel instructions per frame: "
                         r"rps (-?\d+), spread (-?\d+) \(vrss's own (\d+)\); on the frame's path "
                         r"spread (\d+|\?) against rps (\d+|\?): (-?\d+|\?) more; IPIs per frame: "
                         r"vrss's ([\d.]+), function-call interrupts spread ([\d.]+), rps ([\d.]+)")
COST_LOWERS = {"veth": "veth, 2 vCPUs", "nic": "virtio-net, 2 queue pairs",
               "nic1": "virtio-net, 1 queue pair"}


def cost_section(path, md):
    """What a frame pays more through vrss than through the lower alone,
    on its path (cost.sh, the selftest make check runs; the meter's
    profile call by call), per lower: {lower: {config: instructions,
    "plain": plain's whole path, "ok": every check passed}}."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    res = {}
    for line in lines:
        m = COST_PATH.match(line)
        if m:
            res[m.group(1)] = {c: None if x == "?" else int(x)
                               for c, x in zip(("off", "single", "gated"), m.group(2, 3, 4))}
            res[m.group(1)]["plain"] = int(m.group(5)) * 100
    spread = {}
    for line in lines:
        m = COST_SPREAD.match(line)
        if m:
            g = m.groups()
            spread[g[0]] = {"rps": int(g[1]), "spread": int(g[2]), "own": int(g[3]),
                            "path_spread": None if g[4] == "?" else int(g[4]),
                            "path_rps": None if g[5] == "?" else int(g[5]),
                            "more": None if g[6] == "?" else int(g[6]),
                            "ipis": float(g[7]), "cal_spread": float(g[8]),
                            "cal_rps": float(g[9])}
    failed = [line[2:] for line in lines if line.startswith("# not ok ")]
    if not res:
        return {}
    md += ["## What a frame pays more through vrss, on its path", "",
           "cost.sh (make check's selftest, here with the bench's kernel): one UDP flow, a frame "
           "every 2 ms, a pinned receiver; each function a frame calls, costed call by call from "
           "the meter's profile, against the lower alone (budget: off within 1 %, SINGLE and "
           "gated within 3 %). Instructions a frame, in brackets the share of plain's whole path:", "",
           "| lower | off | SINGLE | gated | plain's whole path |", "|---|---|---|---|---|"]
    for lower, v in res.items():
        cells = ["?" if v[c] is None else f"{v[c]} ({100 * v[c] / v['plain']:.2f} %)"
                 for c in ("off", "single", "gated")]
        md.append(f"| {COST_LOWERS.get(lower, lower)} | " + " | ".join(cells) + f" | {v['plain']} |")
    md += ["", "Every check of cost.sh passed." if not failed else
           "cost.sh FAILED: " + "; ".join(failed), ""]
    if spread:
        md += ["### A frame's receive path on another vCPU: vrss's spread queue against RPS", "",
               "The same flow, its receive path handed from the vCPU the lower delivers on to "
               "vCPU 1, by RPS on the lower and by vrss (threshold 0, every bucket on queue 1); "
               "both vCPUs' kernel instructions a frame, and on the frame's own path "
               "(profile.py --base rps):", "",
               "| lower | RPS | spread | vrss's own | spread's path more than RPS's | "
               "IPIs a frame (vrss's) | function-call interrupts a frame, spread / RPS |",
               "|---|---|---|---|---|---|---|"]
        for lower, v in spread.items():
            more = "?" if v["more"] is None else f"{v['more']} of {v['path_rps']}"
            md.append(f"| {COST_LOWERS.get(lower, lower)} | {v['rps']} | {v['spread']} | {v['own']} "
                      f"| {more} | {v['ipis']:.2f} | {v['cal_spread']:.2f} / {v['cal_rps']:.2f} |")
        md.append("")
    for v in res.values():
        v["ok"] = not failed
    for lower, v in spread.items():
        res.setdefault(lower, {})["to_vcpu1"] = v
    return res


def insns_section(d, md):
    """Instructions per frame (light load: each frame alone) and per byte
    (the floods), per configuration, from the meter's windows; the idle
    window of the same round, scaled to each window's length, subtracted."""
    idle = {}
    for p in glob.glob(os.path.join(d, "idle-*-insns.txt")):
        idle[int(re.search(r"idle-(\d+)-insns", p).group(1))] = insns_run(p)
    if not idle:
        return {}
    res = {}
    for kind in ("light", "tcp", "fw"):
        for c in CONFIGS:
            per = []
            for p in sorted(glob.glob(os.path.join(d, f"{kind}-{c}-*-insns.txt"))):
                r = int(re.search(rf"{kind}-{c}-(\d+)-insns", p).group(1))
                v, i = insns_run(p), idle.get(r)
                if not v or not i or not v["packets"]:
                    continue
                scale = v["us"] / i["us"]
                k = [x - y * scale for x, y in zip(v["k"], i["k"])]
                u = sum(v["u"]) - sum(i["u"]) * scale
                per.append({"k_frame": sum(k) / v["packets"],
                            "k_frame_cpu": [x / v["packets"] for x in k],
                            "u_frame": u / v["packets"],
                            "k_byte": sum(k) / v["bytes"],
                            "idle_share": sum(i["k"]) * scale / sum(v["k"])})
            if per:
                res.setdefault(kind, {})[c] = {
                    key: summary([x[key] for x in per]) for key in ("k_frame", "u_frame", "k_byte", "idle_share")}
                res[kind][c]["k_frame_cpu"] = [statistics.median(x["k_frame_cpu"][j] for x in per)
                                               for j in range(len(per[0]["k_frame_cpu"]))]
    if not res:
        return res

    rounds = len(idle)
    md += [f"Instructions (the meter, tools/vm/run --count-insns; medians and min-max of {rounds} "
           "alternated rounds; an idle window of the same length, same round, subtracted):", "",
           "| load | config | kernel insns per frame | x plain | per vCPU | user per frame | "
           "kernel insns per byte | x plain | idle's share of the window |",
           "|---|---|---|---|---|---|---|---|---|"]
    names = {"light": "light (paced UDP)", "tcp": "TCP flood", "fw": "receive-bound TCP"}
    for kind, t in res.items():
        for c, v in t.items():
            base = t.get("plain")
            xf = v["k_frame"]["median"] / base["k_frame"]["median"] if base else float("nan")
            xb = v["k_byte"]["median"] / base["k_byte"]["median"] if base else float("nan")
            cpus = " / ".join(f"{x:.0f}" for x in v["k_frame_cpu"])
            md.append(f"| {names[kind]} | {c} | {cell(v['k_frame'], '{:.0f}')} | {xf:.3f} | {cpus} "
                      f"| {v['u_frame']['median']:.0f} | {cell(v['k_byte'], '{:.2f}')} | {xb:.3f} "
                      f"| {v['idle_share']['median'] * 100:.0f} % |")
    md.append("")
    return res


def sweep_section(d, out, md):
    """The load sweep (sweep-<config>-<step>-<round>.json in D): per
    offered load and config, medians over the rounds of the delivered
    throughput, each vCPU's busy and softirq, IPIs per packet and vrss's
    width half-way; a table and OUT/sweep.png."""
    pts = {}
    for p in glob.glob(os.path.join(d, "sweep-*-*-*.json")):
        m = re.search(r"sweep-(\w+)-(\d+)-(\d+)\.json$", p)
        if not m:
            continue
        j = load(p)
        fl = run_flows(p, None) if os.path.exists(p[:-len(".json")] + "-flows.txt") else None
        v = vrss_run(p)
        pts.setdefault((m.group(1), int(m.group(2))), []).append({
            "mbps": j["throughput_mbps"],
            "busy": [c["busy"] for c in j["cpus"]],
            "softirq": [c["softirq"] for c in j["cpus"]],
            "ipis": j["ipis_per_packet"],
            "vrss_ipis": int(v["ipis"]) / max(int(v["packets"]), 1) if v else None,
            "width": fl[0] if fl else None})
    if not pts:
        return {}
    configs = [c for c in CONFIGS if any(k[0] == c for k in pts)]
    steps = sorted({k[1] for k in pts})
    ncpu = len(next(iter(pts.values()))[0]["busy"])
    res = {}
    for (c, step), rs in pts.items():
        res.setdefault(c, {})[step] = {
            "mbps": statistics.median(r["mbps"] for r in rs),
            "busy": [statistics.median(r["busy"][i] for r in rs) for i in range(ncpu)],
            "softirq": [statistics.median(r["softirq"][i] for r in rs) for i in range(ncpu)],
            "ipis_per_packet": statistics.median(r["ipis"] for r in rs),
            "width": statistics.median(r["width"] for r in rs) if all(r["width"] for r in rs) else None,
            "rounds": len(rs)}
    md += [f"Load sweep, receive-bound guest ({rules(d)} firewall rules): 8 TCP streams from the host, "
           "paced to the offered load in total; delivered Mbit/s, softirq % per vCPU, IPIs per packet "
           "(gated: and its width half-way):", "",
           "| offered | " + " | ".join(configs) + " | " +
           " | ".join(f"{c} softirq %" for c in configs) + " | " +
           " | ".join(f"{c} IPIs/packet" for c in configs) + " | gated width |",
           "|---" * (3 * len(configs) + 2) + "|"]
    with open(os.path.join(out, "sweep.tsv"), "w") as f:
        f.write("# offered " + " ".join(f"{c}_mbps {c}_si0 {c}_si1 {c}_ipis" for c in configs) + " gated_width\n")
        for step in steps:
            row = [res[c].get(step) for c in configs]
            md.append(f"| {step} | " + " | ".join(f"{r['mbps']:.0f}" if r else "-" for r in row) + " | " +
                      " | ".join(" / ".join(f"{x:.0f}" for x in r["softirq"]) if r else "-" for r in row) + " | " +
                      " | ".join(f"{r['ipis_per_packet']:.3f}" if r else "-" for r in row) + " | " +
                      (f"{res['gated'][step]['width']:.0f}" if "gated" in res and step in res["gated"]
                       and res["gated"][step]["width"] else "-") + " |")
            f.write(f"{step} " + " ".join(
                f"{r['mbps']:.1f} {r['softirq'][0]:.1f} {r['softirq'][-1]:.1f} {r['ipis_per_packet']:.4f}"
                if r else "NaN NaN NaN NaN" for r in row) + " " +
                (f"{res['gated'][step]['width'] or 'NaN'}" if "gated" in res and step in res["gated"] else "NaN") + "\n")
    md.append("")
    tsv = os.path.join(out, "sweep.tsv")
    col = {c: 2 + 4 * i for i, c in enumerate(configs)}
    colours = {"plain": "#555555", "rps": "#4a7ebb", "gated": "#c0504d"}
    lines = ", ".join(f"'{tsv}' using 1:{col[c]} with linespoints lw 2 lc rgb '{colours.get(c, 'black')}' title '{c}'"
                      for c in configs)
    soft = ", ".join(
        f"'{tsv}' using 1:{col[c] + k} with linespoints lw 2 dt {1 + k} lc rgb '{colours.get(c, 'black')}' "
        f"title '{c}, vCPU {0 if k == 1 else ncpu - 1}'"
        for c in configs for k in (1, 2))
    ipis = ", ".join(f"'{tsv}' using 1:{col[c] + 3} with linespoints lw 2 lc rgb '{colours.get(c, 'black')}' "
                     f"title '{c} IPIs/packet'" for c in configs)
    width_col = 2 + 4 * len(configs)
    gp = os.path.join(out, "sweep.gp")
    with open(gp, "w") as f:
        f.write(f"""set terminal pngcairo size 1000,1000 font ',10'
set output '{os.path.join(out, "sweep.png")}'
set multiplot layout 3,1 title 'Load sweep: receive-bound guest ({rules(d)} firewall rules), 2 vCPUs, 1-queue virtio-net, 8 TCP streams from the host'
set grid
set key outside right
set xlabel 'offered load (Mbit/s)'
set ylabel 'delivered (Mbit/s)'
set yrange [0:*]
set title 'throughput'
plot {lines}, x with lines dt 3 lc rgb 'gray' title 'offered'
set ylabel 'softirq % of the vCPU'
set yrange [0:105]
set title 'receive work per vCPU'
plot {soft}
set ylabel 'IPIs per packet'
set yrange [0:*]
set y2label 'gated width'
set y2range [0:{ncpu + 1}]
set y2tics 1
set title 'IPIs, and the width gated spreads at'
plot {ipis}, '{tsv}' using 1:{width_col} axes x1y2 with steps lw 2 lc rgb 'black' title 'gated width'
unset multiplot
""")
    subprocess.run(["gnuplot", gp], check=True)
    md += ["![load sweep](sweep.png)", ""]    # beside results.md
    return res


def run_table(d, kind, configs, md):
    """One row per run of KIND in D, in the order they ran: throughput,
    each vCPU's busy and softirq, and through vrss0 where the flows were
    (streams per queue, and each queue's share of the packets), the
    rebalances and the width at the end."""
    key = None
    if os.path.exists(os.path.join(d, "rxfh.txt")):
        with open(os.path.join(d, "rxfh.txt")) as f:
            key = vrss_udp.parse_rxfh(f.read(), "vrss0")[0]
    rows = []
    for p in glob.glob(os.path.join(d, f"{kind}-*-*.json")):
        m = re.search(rf"{kind}-(.+)-(\d+)\.json$", p)
        if not m or m.group(1) not in configs:
            continue
        rows.append((int(m.group(2)), configs.index(m.group(1)), m.group(1), p))
    if not rows:
        return
    md += ["Each run (round, config): Mbit/s; busy and softirq % per vCPU; through vrss0, "
           "streams per queue and the width half-way, each queue's share of the packets, rebalances:", "",
           "| round | config | Mbit/s | busy % | softirq % | streams per queue | packets per queue % | rebalances | width |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r, _, c, p in sorted(rows):
        j = load(p)
        v = vrss_run(p)
        fl = run_flows(p, key) if key else None
        per_q = width = "-"
        if fl is not None:
            width = fl[0]
            per_q = " / ".join(str(fl[1].count(q)) for q in range(len(j["cpus"])))
        share = reb = "-"
        if v is not None:
            qp = [int(x) for x in v.get("queue_packets", "0").split(",")]
            share = " / ".join(f"{100 * x / max(sum(qp), 1):.0f}" for x in qp)
            reb = v.get("rebalances", "-")
        busy = " / ".join(f"{x['busy']:.0f}" for x in j["cpus"])
        soft = " / ".join(f"{x['softirq']:.0f}" for x in j["cpus"])
        md.append(f"| {r} | {c} | {j['throughput_mbps']:.0f} | {busy} | {soft} "
                  f"| {per_q} | {share} | {reb} | {width} |")
    md.append("")


def collide_results(d):
    """Colliding heavy flows (collide-<config>-<round>.json in D)."""
    collide = {}
    for c in ("collide-static", "collide-rebal", "collide-rps"):
        paths = sorted(glob.glob(os.path.join(d, f"{c}-*.json")))
        rs = [load(p) for p in paths]
        if not rs:
            continue
        extra = []
        for p in paths:
            try:
                with open(p[:-len(".json")] + "-vrss.txt") as f:
                    w = f.read().split()
                extra.append(dict(zip(w[::2], w[1::2])))
            except FileNotFoundError:
                pass
        collide[c] = {
            "mbps": summary([r["throughput_mbps"] for r in rs]),
            "cycles_per_byte": summary([r["cycles_per_byte"] for r in rs]),
            "busy": [summary([r["cpus"][i]["busy"] for r in rs]) for i in range(len(rs[0]["cpus"]))],
            "rebalances": summary([int(e["rebalances"]) for e in extra]) if extra else None,
            "queues_at_end": [e["queues"] for e in extra],
        }
    return collide


def nic_section(d, q, results, md, tsv):
    """The virtio-net guest: TCP from the host, light paced UDP."""
    res = {"tcp": {}, "fw": {}, "light": {}}
    for kind, key in (("tcp", "tcp"), ("fw", "fw"), ("light", "light")):
        for c in CONFIGS:
            paths = sorted(glob.glob(os.path.join(d, f"{kind}-{c}-*.json")))
            rs = [load(p) for p in paths]
            if not rs:
                continue
            own = [x for x in map(vrss_ipis, paths) if x is not None]
            res[key][c] = {
                "vrss_ipis_per_packet": summary(own) if own else None,
                "mbps": summary([r["throughput_mbps"] for r in rs]),
                "cycles_per_byte": summary([r["cycles_per_byte"] for r in rs]),
                "ipis_per_packet": summary([r["ipis_per_packet"] for r in rs]),
                "busy": [summary([r["cpus"][i]["busy"] for r in rs]) for i in range(len(rs[0]["cpus"]))],
                "softirq": [summary([r["cpus"][i]["softirq"] for r in rs]) for i in range(len(rs[0]["cpus"]))],
                "woken_vcpus": summary([woken(r) for r in rs]),
            }
    tcp = res["tcp"]
    derived = {}
    for kind in ("tcp", "fw"):
        t = res[kind]
        pre = "" if kind == "tcp" else "fw_"
        for c in t:
            for base in ("plain", "rps"):
                if base in t and c != base:
                    derived[f"{kind}_{c}_over_{base}"] = t[c]["mbps"]["median"] / t[base]["mbps"]["median"]
                    derived[f"{pre}cycles_per_byte_{c}_over_{base}"] = \
                        t[c]["cycles_per_byte"]["median"] / t[base]["cycles_per_byte"]["median"]
    fw = res["fw"]
    if "gated" in fw and "rps" in fw:
        derived["fw_slowest_gated_over_rps_median"] = fw["gated"]["mbps"]["min"] / fw["rps"]["mbps"]["median"]
    light = res["light"]
    for c in light:
        if "plain" in light and c != "plain":
            derived[f"light_cycles_per_byte_{c}_over_plain"] = \
                light[c]["cycles_per_byte"]["median"] / light["plain"]["cycles_per_byte"]["median"]
    collide = collide_results(d)
    if collide:
        res["collide"] = collide
        for c in collide:
            for base in ("collide-static", "collide-rps"):
                if base in collide and c != base:
                    derived[f"{c}_over_{base}"] = collide[c]["mbps"]["median"] / collide[base]["mbps"]["median"]
    res["derived"] = derived
    results["virtio_net"][q] = res

    def own(v):
        o = v.get("vrss_ipis_per_packet")
        return "-" if o is None else f"{o['median']:.4f}"

    def cpus(v, k):
        return " / ".join(f"{x['median']:.0f}" for x in v[k])

    md += [f"## virtio-net, {q} queue pair{'s' if q > 1 else ''}, 2 vCPUs, sender on the host", ""]
    for kind, title in (("tcp", "TCP, 8 streams host -> guest (median, min-max of the rounds):"),
                        ("fw", f"Receive-bound guest: the same 8 TCP streams, and a firewall ruleset "
                               f"({rules(d)} rules on input) that every packet walks:")):
        t = res[kind]
        if not t:
            continue
        pre = "" if kind == "tcp" else "fw_"
        md += [title, "",
               "| config | Mbit/s | x plain | x RPS | cycles/byte | x plain | IPIs/packet | by vrss "
               "| busy % per vCPU | softirq % per vCPU |",
               "|---|---|---|---|---|---|---|---|---|---|"]
        for c in CONFIGS:
            if c not in t:
                continue
            v = t[c]
            xp = derived.get(f"{kind}_{c}_over_plain", 1.0 if c == "plain" else float("nan"))
            xr = derived.get(f"{kind}_{c}_over_rps", 1.0 if c == "rps" else float("nan"))
            cp = derived.get(f"{pre}cycles_per_byte_{c}_over_plain", 1.0 if c == "plain" else float("nan"))
            md.append(f"| {c} | {cell(v['mbps'])} | {xp:.2f} | {xr:.2f} | {cell(v['cycles_per_byte'], '{:.1f}')} "
                      f"| {cp:.2f} | {v['ipis_per_packet']['median']:.4f} | {own(v)} | {cpus(v, 'busy')} "
                      f"| {cpus(v, 'softirq')} |")
            tsv.append(f"nic{q}{'-fw' if kind == 'fw' else ''}-{c}\t{v['mbps']['median']:.1f}\t{v['mbps']['min']:.1f}"
                       f"\t{v['mbps']['max']:.1f}\t{v['cycles_per_byte']['median']:.2f}")
        md.append("")
        if kind == "fw":
            if "fw_slowest_gated_over_rps_median" in derived:
                md += [f"Slowest gated run over RPS's median: {derived['fw_slowest_gated_over_rps_median']:.2f}.", ""]
            run_table(d, "fw", CONFIGS, md)
    if light:
        md += ["Light load (8 x 0.25 Mbit/s paced UDP from the host, 1400-byte datagrams, below the threshold):", "",
               "| config | cycles/byte | x plain | vCPUs doing receive work | IPIs/packet | by vrss |", "|---|---|---|---|---|---|"]
        for c in CONFIGS:
            if c not in light:
                continue
            v = light[c]
            x = derived.get(f"light_cycles_per_byte_{c}_over_plain", 1.0 if c == "plain" else float("nan"))
            md.append(f"| {c} | {cell(v['cycles_per_byte'], '{:.1f}')} | {x:.2f} | {v['woken_vcpus']['median']:.0f} "
                      f"| {v['ipis_per_packet']['median']:.4f} | {own(v)} |")
        md.append("")
    lat = latency_section(d, md)
    if lat:
        res["latency"] = lat
        if "gated" in lat and "plain" in lat:
            for k in ("median_usec", "p99_usec"):
                derived[f"latency_{k}_gated_over_plain"] = lat["gated"][k]["median"] / lat["plain"][k]["median"]
    collide_section(res, md)


def rules(d):
    """The firewall's size in the runs of D (rules.txt), or '?'."""
    try:
        with open(os.path.join(d, "rules.txt")) as f:
            return f.read().strip()
    except FileNotFoundError:
        return "?"


def collide_section(res, md):
    """The colliding heavy flows of a 1-queue virtio-net guest."""
    collide = res.get("collide")
    if not collide:
        return
    d = res["derived"]

    md += ["Colliding heavy flows: 4 TCP streams from the host whose hashes all name queue 1 "
           "(Microsoft's key, default table), threshold 80:", "",
           "| config | Mbit/s | x static | x RPS | cycles/byte | busy % per vCPU | rebalances per run | streams' queues mid-run |",
           "|---|---|---|---|---|---|---|---|"]
    for c, v in collide.items():
        xs = d.get(f"{c}_over_collide-static", 1.0 if c == "collide-static" else float("nan"))
        xr = d.get(f"{c}_over_collide-rps", 1.0 if c == "collide-rps" else float("nan"))
        reb = "-" if v["rebalances"] is None else f"{v['rebalances']['median']:.0f}"
        busy = " / ".join(f"{x['median']:.0f}" for x in v["busy"])
        queues = " ".join(v["queues_at_end"]) or "-"
        md.append(f"| {c} | {cell(v['mbps'])} | {xs:.2f} | {xr:.2f} | {cell(v['cycles_per_byte'], '{:.1f}')} "
                  f"| {busy} | {reb} | {queues} |")
    md.append("")


def chart(out):
    """results.png: TCP throughput per configuration and NIC, bars with
    the rounds' range, and cycles per byte beside them."""
    gp = os.path.join(out, "results.gp")
    with open(gp, "w") as f:
        f.write(f"""set terminal pngcairo size 1100,520 font ',10'
set output '{os.path.join(out, "results.png")}'
set multiplot layout 1,2 title 'vrss on virtio-net, 2 vCPUs, TCP 8 streams from the host (median, bars: min-max)'
set style fill solid 0.6 border -1
set boxwidth 0.7
set xtics rotate by -35 nomirror
set grid ytics
set yrange [0:*]
set title 'throughput (Mbit/s, higher is better)'
plot '{os.path.join(out, "results.tsv")}' using 0:2:xtic(1) with boxes lc rgb '#4a7ebb' notitle, \\
     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt -1 notitle
set title 'CPU cycles per byte received (lower is better)'
plot '{os.path.join(out, "results.tsv")}' using 0:5:xtic(1) with boxes lc rgb '#c0504d' notitle
unset multiplot
""")
    subprocess.run(["gnuplot", gp], check=True)


def main():
    runs, out = sys.argv[1], sys.argv[2]
    results = {"cpus": {}, "virtio_net": {}}
    md = ["# vrss benchmark", ""]
    tsv = []
    os.makedirs(out, exist_ok=True)
    for d in sorted(glob.glob(os.path.join(runs, "nic[0-9]*"))):
        nic_section(d, int(os.path.basename(d)[3:]), results, md, tsv)
    sw = os.path.join(runs, "sweep")
    if os.path.isdir(sw):
        md += ["## The load sweep", ""]
        results["sweep"] = sweep_section(sw, out, md)
    # The meter's guests: insns-nic<Q> (virtio-net, Q queue pairs, 2
    # vCPUs, sender on the host) and insns-veth<N> (N vCPUs).
    for d in sorted(glob.glob(os.path.join(runs, "insns-*"))):
        name = os.path.basename(d)[len("insns-"):]
        m = re.match(r"(nic|veth)(\d+)$", name)
        if not m:
            continue
        n = int(m.group(2))
        title = (f"virtio-net, {n} queue pair{'s' if n > 1 else ''}, 2 vCPUs, sender on the host"
                 if m.group(1) == "nic" else f"veth, {n} vCPUs, sender in the guest")
        md += [f"## Instructions: {title}", ""]
        ins = insns_section(d, md)
        if ins:
            results.setdefault("insns", {})[name] = ins
    cost = cost_section(os.path.join(runs, "cost.txt"), md)
    if cost:
        results["cost"] = cost
    for d in sorted(glob.glob(os.path.join(runs, "[0-9]*")), key=lambda p: int(os.path.basename(p))):
        ncpu = int(os.path.basename(d))
        res = {}
        for proto in ("udp", "tcp", "fw"):
            res[proto] = {}
            for c in CONFIGS:
                rs = [load(p) for p in sorted(glob.glob(os.path.join(d, f"{proto}-{c}-*.json")))]
                if not rs:
                    continue
                res[proto][c] = {
                    "mbps": summary([r["throughput_mbps"] for r in rs]),
                    "ipis_per_packet": summary([r["ipis_per_packet"] for r in rs]),
                    "cpu_s_per_gbit": summary([cpu_seconds(r) / max(r["throughput_mbps"] * r["seconds"] / 1e3, 1e-9)
                                               for r in rs]),
                }
        light = {}
        for c in ("plain", "rps", "gated"):
            rs = [load(p) for p in sorted(glob.glob(os.path.join(d, f"light-{c}-*.json")))]
            if rs:
                light[c] = {
                    "mbps": summary([r["throughput_mbps"] for r in rs]),
                    "cpu_s_per_gbit": summary([cpu_seconds(r) / max(r["throughput_mbps"] * r["seconds"] / 1e3, 1e-9)
                                               for r in rs]),
                    "ipis_per_packet": summary([r["ipis_per_packet"] for r in rs]),
                }
        res["light"] = light
        derived = {}
        for proto in ("udp", "tcp", "fw"):
            p = res[proto]
            if not p:
                continue
            med = lambda c, k="mbps": p[c][k]["median"] if c in p else float("nan")
            derived[f"{proto}_spread_over_single"] = med("spread") / med("single")
            derived[f"{proto}_spread_over_rps"] = med("spread") / med("rps")
            derived[f"{proto}_gated_over_rps"] = med("gated") / med("rps")
            derived[f"{proto}_gated_over_plain"] = med("gated") / med("plain")
        if light:
            lm = lambda c, k: light[c][k]["median"]
            derived["light_cpu_per_gbit_gated_over_plain"] = lm("gated", "cpu_s_per_gbit") / lm("plain", "cpu_s_per_gbit")
            derived["light_cpu_per_gbit_gated_over_rps"] = lm("gated", "cpu_s_per_gbit") / lm("rps", "cpu_s_per_gbit")
            derived["light_ipis_per_packet"] = {c: lm(c, "ipis_per_packet") for c in light}
        bal = os.path.join(d, "balance.txt")
        if os.path.exists(bal):
            q = [int(x) for x in open(bal).read().split()]
            derived["balance_64_flows_max_over_mean"] = max(q) / statistics.mean(q)
            derived["balance_64_flows_per_queue"] = q
        # Reaction: when the gated UDP runs first widened, from their start.
        react = []
        for p in glob.glob(os.path.join(d, "udp-gated-*-widths.txt")):
            r = load(p.replace("-widths.txt", ".json"))
            for line in open(p):
                m = re.search(r"\s(\d+\.\d+): vrss_width_change: .*width=(\d+)->(\d+)", line)
                if m and int(m.group(3)) > int(m.group(2)):
                    react.append(round(float(m.group(1)) - (r["start_monotonic"] - 1), 3))
                    break
        if react:
            derived["gated_udp_first_spread_s_after_sender_start"] = summary(react)
        res["derived"] = derived
        results["cpus"][ncpu] = res

        md += [f"## veth, {ncpu} vCPUs, sender in the guest", "",
               "| config | UDP Mbit/s (median, min-max) | TCP Mbit/s | receive-bound TCP Mbit/s "
               "| UDP IPIs/packet | UDP CPU-s/Gbit |",
               "|---|---|---|---|---|---|"]

        def mm(v):
            return cell(v["mbps"]) if v else "-"
        for c in CONFIGS:
            u, t, f = res["udp"].get(c), res["tcp"].get(c), res["fw"].get(c)
            if not u and not f:
                continue
            md.append(f"| {c} | {mm(u)} | {mm(t)} | {mm(f)} "
                      f"| {u['ipis_per_packet']['median'] if u else float('nan'):.3f} "
                      f"| {u['cpu_s_per_gbit']['median'] if u else float('nan'):.1f} |")
        md.append("")
        if res["fw"]:
            md += [f"Receive-bound TCP: {rules(d)} firewall rules on input.", ""]
            run_table(d, "fw", CONFIGS, md)
        if light:
            md += ["Light load (8 x 0.25 Mbit/s paced UDP, 1400-byte datagrams, below the threshold):", "",
                   "| config | CPU-s per Gbit | IPIs/packet |", "|---|---|---|"]
            for c, v in light.items():
                md.append(f"| {c} | {v['cpu_s_per_gbit']['median']:.1f} | {v['ipis_per_packet']['median']:.3f} |")
            md.append("")
        md.append("Derived: " + ", ".join(
            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in derived.items()))
        md.append("")
    for d in sorted(glob.glob(os.path.join(runs, "collide[0-9]*"))):
        ncpu = int(os.path.basename(d)[7:])
        res = {"collide": collide_results(d), "derived": {}}
        for c in res["collide"]:
            for base in ("collide-static", "collide-rps"):
                if base in res["collide"] and c != base:
                    res["derived"][f"{c}_over_{base}"] = \
                        res["collide"][c]["mbps"]["median"] / res["collide"][base]["mbps"]["median"]
        results.setdefault("collide", {})[ncpu] = res
        md += [f"## virtio-net, 1 queue pair, {ncpu} vCPUs, sender on the host", ""]
        collide_section(res, md)
    tp = os.path.join(runs, "toeplitz.json")
    if os.path.exists(tp):
        results["toeplitz"] = load(tp)
        t = results["toeplitz"]
        md += ["## Toeplitz (host, gcc -O2)", "",
               "| | instructions/hash (callgrind) | ns/hash |", "|---|---|---|"]
        for k, name in (("table4", "byte table (36 KB, the module's), IPv4"),
                        ("table6", "byte table, IPv6"),
                        ("nib4", "nibble table (4.6 KB), IPv4"), ("nib6", "nibble table, IPv6"),
                        ("bit4", "bitwise, IPv4"), ("bit6", "bitwise, IPv6")):
            if k in t["instructions_per_hash"]:
                md.append(f"| {name} | {t['instructions_per_hash'][k]} | {t['ns_per_hash'][k]} |")
        md.append("")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out, "results.tsv"), "w") as f:
        f.write("# config\tmbps_median\tmbps_min\tmbps_max\tcycles_per_byte_median\n")
        f.write("\n".join(tsv) + "\n")
    if tsv:
        chart(out)
    print("\n".join(md))


if __name__ == "__main__":
    main()
