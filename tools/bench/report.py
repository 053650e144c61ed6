#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: medians, spreads and derived figures.

  report.py RUNS OUT

RUNS/<cpus>/<proto>-<config>-<round>.json and light-<config>-<round>.json
(vrss-ttcp --json), RUNS/<cpus>/balance.txt, RUNS/toeplitz.json.  Writes
OUT/results.json and OUT/results.md and prints the markdown.
"""
import glob
import json
import os
import re
import statistics
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


def main():
    runs, out = sys.argv[1], sys.argv[2]
    results = {"cpus": {}}
    md = ["# vrss benchmark", ""]
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

        md += [f"## {ncpu} vCPUs", "",
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
            md += ["Light load (8 x 2 Mbit/s UDP, below the threshold):", "",
                   "| config | CPU-s per Gbit | IPIs/packet |", "|---|---|---|"]
            for c, v in light.items():
                md.append(f"| {c} | {v['cpu_s_per_gbit']['median']:.1f} | {v['ipis_per_packet']['median']:.3f} |")
            md.append("")
        md.append("Derived: " + ", ".join(
            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in derived.items()))
        md.append("")
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
    print("\n".join(md))


if __name__ == "__main__":
    main()
