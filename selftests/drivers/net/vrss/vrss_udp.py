#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UDP flows for the vrss selftests, and where RSS must put them.

  vrss_udp.py send DST FLOWS PER_FLOW
      PER_FLOW datagrams on each of FLOWS flows: source port 20000+f,
      destination port 7000+f, unconnected sockets (port-unreachable
      replies do not stop the sender).
  vrss_udp.py predict SRC DST FLOWS PER_FLOW DEV [--no-ports]
      The per-queue packet counts those flows must give on DEV, from the
      key and table `ethtool -x DEV` shows: an independent Toeplitz
      implementation (bit by bit, as Microsoft's verification text defines
      it), not the module's.
"""
import ipaddress
import re
import socket
import subprocess
import sys

SPORT, DPORT = 20000, 7000


def send(dst, flows, per_flow):
    socks = []
    for f in range(flows):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", SPORT + f))
        socks.append(s)
    for _ in range(per_flow):
        for f, s in enumerate(socks):
            s.sendto(b"vrss", (dst, DPORT + f))


def toeplitz(key, data):
    keybits = int.from_bytes(key, "big")
    klen = len(key) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                bit = i * 8 + b
                h ^= (keybits >> (klen - 32 - bit)) & 0xFFFFFFFF
    return h


def rxfh(dev):
    out = subprocess.run(["ethtool", "-x", dev], check=True,
                         capture_output=True, text=True).stdout
    table = []
    key = None
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*(\d+):\s+([\d\s]+)$", line)
        if m:
            table += [int(x) for x in m.group(2).split()]
        if line.startswith("RSS hash key"):
            key = bytes(int(x, 16) for x in lines[i + 1].strip().split(":"))
    if len(table) != 128 or key is None or len(key) != 40:
        sys.exit(f"cannot parse ethtool -x {dev}:\n{out}")
    return key, table


def predict(src, dst, flows, per_flow, dev, ports):
    key, table = rxfh(dev)
    counts = [0] * (max(table) + 1)
    addrs = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    for f in range(flows):
        data = addrs
        if ports:
            data += (SPORT + f).to_bytes(2, "big") + (DPORT + f).to_bytes(2, "big")
        counts[table[toeplitz(key, data) & 127]] += per_flow
    print(" ".join(str(c) for c in counts))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "send":
        send(args[0], int(args[1]), int(args[2]))
    elif cmd == "predict":
        predict(args[0], args[1], int(args[2]), int(args[3]), args[4],
                "--no-ports" not in args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
