#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: medians, spreads and derived figures.

  report.py RUNS OUT

RUNS/<cpus>/<proto>-<config>-<round>.json and light-<config>-<round>.json
(vrss-ttcp --json; veth, sender in the guest), RUNS/nic<Q>/ the same on a
virtio-net NIC of Q queue pairs with the sender on the host,
RUNS/<cpus>/balance.txt, RUNS/toeplitz.json.  Writes OUT/results.json,
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

CONFIGS = ["plain", "rps", "off", "single", "spread", "gated"]


def load(path):
    with open(path) as f:
        return json.load(f)


def cpu_seconds(r):
    return sum(c["busy"] for c in r["cpus"]) / 100 * r["seconds"]


def summary(values):
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values), "n": len(values)}


def woken(r):
    """vCPUs that did receive work: 5 % or more of the NET_RX softirqs."""
    total = sum(c["net_rx"] for c in r["cpus"]) or 1
    return sum(1 for c in r["cpus"] if c["net_rx"] * 20 >= total)


def vrss_ipis(path):
    """IPIs vrss sent per packet it received in the run of vrss-ttcp
    JSON PATH (its -vrss.txt beside it); None without vrss0."""
    try:
        with open(path[:-len(".json")] + "-vrss.txt") as f:
            w = f.read().split()
    except FileNotFoundError:
        return None
    v = dict(zip(w[::2], map(int, w[1::2])))
    return v["ipis"] / max(v["packets"], 1)


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
    res = {"tcp": {}, "light": {}}
    for kind, key in (("tcp", "tcp"), ("light", "light")):
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
    for c in tcp:
        for base in ("plain", "rps"):
            if base in tcp and c != base:
                derived[f"tcp_{c}_over_{base}"] = tcp[c]["mbps"]["median"] / tcp[base]["mbps"]["median"]
                derived[f"cycles_per_byte_{c}_over_{base}"] = \
                    tcp[c]["cycles_per_byte"]["median"] / tcp[base]["cycles_per_byte"]["median"]
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

    def cell(v, fmt="{:.0f}"):
        return f"{fmt.format(v['median'])} ({fmt.format(v['min'])}-{fmt.format(v['max'])})"

    def own(v):
        o = v.get("vrss_ipis_per_packet")
        return "-" if o is None else f"{o['median']:.4f}"

    def cpus(v, k):
        return " / ".join(f"{x['median']:.0f}" for x in v[k])

    md += [f"## virtio-net, {q} queue pair{'s' if q > 1 else ''}, 2 vCPUs, sender on the host", "",
           "TCP, 8 streams host -> guest (median, min-max of the rounds):", "",
           "| config | Mbit/s | x plain | x RPS | cycles/byte | x plain | IPIs/packet | by vrss | busy % per vCPU | softirq % per vCPU |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for c in CONFIGS:
        if c not in tcp:
            continue
        v = tcp[c]
        xp = derived.get(f"tcp_{c}_over_plain", 1.0 if c == "plain" else float("nan"))
        xr = derived.get(f"tcp_{c}_over_rps", 1.0 if c == "rps" else float("nan"))
        cp = derived.get(f"cycles_per_byte_{c}_over_plain", 1.0 if c == "plain" else float("nan"))
        md.append(f"| {c} | {cell(v['mbps'])} | {xp:.2f} | {xr:.2f} | {cell(v['cycles_per_byte'], '{:.1f}')} "
                  f"| {cp:.2f} | {v['ipis_per_packet']['median']:.4f} | {own(v)} | {cpus(v, 'busy')} | {cpus(v, 'softirq')} |")
        tsv.append(f"nic{q}-{c}\t{v['mbps']['median']:.1f}\t{v['mbps']['min']:.1f}\t{v['mbps']['max']:.1f}"
                   f"\t{v['cycles_per_byte']['median']:.2f}")
    md.append("")
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
    collide_section(res, md)


def collide_section(res, md):
    """The colliding heavy flows of a 1-queue virtio-net guest."""
    collide = res.get("collide")
    if not collide:
        return
    d = res["derived"]

    def cell(v, fmt="{:.0f}"):
        return f"{fmt.format(v['median'])} ({fmt.format(v['min'])}-{fmt.format(v['max'])})"

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
    for d in sorted(glob.glob(os.path.join(runs, "nic[0-9]*"))):
        nic_section(d, int(os.path.basename(d)[3:]), results, md, tsv)
    for d in sorted(glob.glob(os.path.join(runs, "[0-9]*")), key=lambda p: int(os.path.basename(p))):
        ncpu = int(os.path.basename(d))
        res = {}
        for proto in ("udp", "tcp"):
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
        for proto in ("udp", "tcp"):
            p = res[proto]
            med = lambda c, k="mbps": p[c][k]["median"] if c in p else float("nan")
            derived[f"{proto}_spread_over_single"] = med("spread") / med("single")
            derived[f"{proto}_spread_over_rps"] = med("spread") / med("rps")
            derived[f"{proto}_gated_over_rps"] = med("gated") / med("rps")
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
               "| config | UDP Mbit/s (median, min-max) | TCP Mbit/s | UDP IPIs/packet | UDP CPU-s/Gbit |",
               "|---|---|---|---|---|"]
        for c in CONFIGS:
            u, t = res["udp"].get(c), res["tcp"].get(c)
            if not u or not t:
                continue
            md.append(f"| {c} | {u['mbps']['median']:.0f} ({u['mbps']['min']:.0f}-{u['mbps']['max']:.0f}) "
                      f"| {t['mbps']['median']:.0f} ({t['mbps']['min']:.0f}-{t['mbps']['max']:.0f}) "
                      f"| {u['ipis_per_packet']['median']:.3f} | {u['cpu_s_per_gbit']['median']:.1f} |")
        md.append("")
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
        for k, name in (("table4", "table, IPv4"), ("table6", "table, IPv6"),
                        ("bit4", "bitwise, IPv4"), ("bit6", "bitwise, IPv6")):
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
