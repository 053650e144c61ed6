#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where RSS must put the vrss selftests' UDP flows, and frames of every
shape.  The traffic itself comes from vrss_traffic (C: it starts in
milliseconds in a TCG guest, Python in seconds); its ports are SPORT+f to
DPORT+f.

  vrss_udp.py mrecv GROUP IFADDR COUNT
      Joins the IPv4 multicast GROUP on the interface of address IFADDR
      and counts what arrives on port 7000 until COUNT arrived or nothing
      came for 2 s (10 s before the first); prints "received R".
  vrss_udp.py mcloop GROUP DEV COUNT
      Joins GROUP on DEV and sends COUNT datagrams to it out of DEV with
      IP_MULTICAST_LOOP, so that the stack loops a copy of each back on DEV
      (PACKET_LOOPBACK); prints "looped L of COUNT on DEV" for the copies
      the member socket got with DEV as their incoming interface.
  vrss_udp.py pick SRC DST DEV QUEUE N
      Source ports (20000-21023, to port 7000) of N flows from SRC to DST
      whose buckets (all different) DEV's table (ethtool -x) puts on QUEUE,
      and of one flow on each other queue the table names; prints the two
      lists, comma separated, and each flow's port, bucket and queue as
      comments.
  vrss_udp.py pickbase SRC DST DEV QUEUE N DPORT
      Ports B (from 20000), a step S and D (from DPORT) such that the N
      flows from SRC port B+i*S to DST port D+i all land, by DEV's key and
      table (ethtool -x), on QUEUE, in N different buckets (vrss-ttcp
      -P B,S -p D -m N); prints B, S, D and the N buckets.  (Toeplitz is
      linear: with Microsoft's key the low bit of the hash is the source
      port's, so consecutive ports never share a queue of two.)
  vrss_udp.py malformed IFACE DSTMAC DIR | malformed list
      Writes each named malformed frame (runts, bad IPv4 header lengths,
      truncated IPv6 extension headers, fragments, VLAN and QinQ tags,
      non-IP, jumbo) from IFACE's address to DSTMAC into DIR/<name>, for
      `vrss_traffic frame IFACE DIR/<name> COUNT`; and a well-formed UDP
      datagram to DSTMAC (ipv4-udp) and to another host's MAC address
      (ipv4-udp-otherhost).
  vrss_udp.py hashcheck SRC DST FLOWS PER_FLOW DEV PEER_NETNS [OPTION...]
      Sends those flows from PEER_NETNS and checks, with one packet socket
      per flow on DEV whose classic BPF filter accepts only frames whose
      skb hash (SKF_AD_RXHASH) is the Toeplitz hash expected for that flow,
      that every packet arrived with exactly that hash.  --tcp: the flows
      are TCP connection attempts (vrss_traffic syn), not datagrams;
      --no-ports: the hash expected is that of the addresses alone (flows
      sharing it share a socket); --none: no packet may carry a hash (as
      with receive hashing off), and all must arrive.
  vrss_udp.py cpucheck SRC DST FLOWS PER_FLOW DEV PEER_NETNS
      Binds one UDP socket per flow on DST, sends the flows from
      PEER_NETNS, and checks that each socket received all its datagrams
      and that SO_INCOMING_CPU (where the stack processed them) is the CPU
      of the queue table[hash % 128] names (queue i on CPU i % online CPUs:
      run it on CPU 0, where veth then delivers and the primary, queue 0,
      hands frames up inline, the spread queues on CPUs 1, 2, ...).
"""
import ctypes
import ipaddress
import os
import re
import socket
import struct
import subprocess
import sys
import time

SPORT, DPORT = 20000, 7000
IP_PKTINFO = 8  # <linux/in.h>; Python's socket module lacks it
TRAFFIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vrss_traffic")


def mrecv(group, ifaddr, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((group, DPORT))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 socket.inet_aton(group) + socket.inet_aton(ifaddr))
    s.settimeout(10)
    print("ready", flush=True)
    received = 0
    while received < count:
        try:
            s.recv(64)
        except socket.timeout:
            break
        received += 1
        s.settimeout(2)
    print(f"received {received}")


def mcloop(group, dev, count):
    idx = socket.if_nametoindex(dev)
    mreqn = socket.inet_aton(group) + socket.inet_aton("0.0.0.0") + struct.pack("@i", idx)
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    r.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    r.bind((group, DPORT))
    r.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreqn)
    r.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, mreqn)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    for _ in range(count):
        s.sendto(b"loop", (group, DPORT))
    r.settimeout(2)
    looped = 0
    while True:
        try:
            _, anc, _, _ = r.recvmsg(64, socket.CMSG_SPACE(12))
        except socket.timeout:
            break
        for level, kind, data in anc:
            if level == socket.IPPROTO_IP and kind == IP_PKTINFO:
                looped += struct.unpack("@i", data[:4])[0] == idx
        r.settimeout(0.5)
    print(f"looped {looped} of {count} on {dev}")


def pick(src, dst, dev, queue, n):
    key, table = rxfh(dev)
    base = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    chosen, others = [], {}
    for port in range(SPORT, SPORT + 1024):
        data = base + port.to_bytes(2, "big") + DPORT.to_bytes(2, "big")
        b = toeplitz(key, data) % 128
        q = table[b]
        if q == queue and len(chosen) < n and b not in [c[1] for c in chosen]:
            chosen.append((port, b))
        elif q != queue and q not in others:
            others[q] = (port, b)
    if len(chosen) < n:
        sys.exit(f"only {len(chosen)} flows on queue {queue}")
    for port, b in chosen:
        print(f"# heavy: port {port} bucket {b} queue {queue}")
    for q, (port, b) in sorted(others.items()):
        print(f"# light: port {port} bucket {b} queue {q}")
    print(",".join(str(p) for p, _ in chosen),
          ",".join(str(p) for p, _ in sorted(others.values())))


def pickbase(src, dst, dev, queue, n, dport):
    key, table = rxfh(dev)
    addrs = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    for step in (1, 2, 3, 4, 8, 16):
        for d in range(dport, dport + 16):
            for base in range(SPORT, SPORT + 256):
                buckets = [toeplitz(key, addrs + (base + i * step).to_bytes(2, "big") +
                                    (d + i).to_bytes(2, "big")) % 128 for i in range(n)]
                if all(table[b] == queue for b in buckets) and len(set(buckets)) == n:
                    print(base, step, d, " ".join(map(str, buckets)))
                    return
    sys.exit(f"no {n} flows on queue {queue}")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(payload, proto=17, ihl=5, tot_len=None, frag=0, good_csum=True):
    """An IPv4 header from the peer to vrss0 (192.0.2.1 > 192.0.2.2)."""
    opts = bytes(max(ihl, 5) * 4 - 20)
    if tot_len is None:
        tot_len = 20 + len(opts) + len(payload)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot_len, 1, frag, 64,
                    proto, 0, socket.inet_aton("192.0.2.1"),
                    socket.inet_aton("192.0.2.2")) + opts
    c = csum(h) if good_csum else (csum(h) ^ 0x5555)
    return h[:10] + struct.pack("!H", c) + h[12:] + payload


def ipv6(payload, nexthdr=17, plen=None):
    """An IPv6 header from the peer to vrss0 (2001:db8::1 > 2001:db8::2)."""
    if plen is None:
        plen = len(payload)
    return (struct.pack("!IHBB", 0x60000000, plen, nexthdr, 64) +
            socket.inet_pton(socket.AF_INET6, "2001:db8::1") +
            socket.inet_pton(socket.AF_INET6, "2001:db8::2") + payload)


UDP = struct.pack("!HHHH", 40000, 9, 12, 0) + b"vrss"
ETH_IP, ETH_IP6, ETH_VLAN, ETH_QINQ = 0x0800, 0x86DD, 0x8100, 0x88A8


def vlan(vid, inner):
    return struct.pack("!HH", vid, inner)


# name: (ethertype, frame after the Ethernet header)
MALFORMED = {
    "eth-only": (ETH_IP, b""),
    "ipv4-runt": (ETH_IP, ipv4(UDP)[:10]),
    "ipv4-bad-ihl": (ETH_IP, ipv4(UDP, ihl=3)),
    "ipv4-ihl-past-end": (ETH_IP, b"\x4f" + ipv4(UDP)[1:28]),
    "ipv4-tot-len-long": (ETH_IP, ipv4(UDP, tot_len=1000)),
    "ipv4-tot-len-short": (ETH_IP, ipv4(UDP, tot_len=12)),
    "ipv4-bad-csum": (ETH_IP, ipv4(UDP, good_csum=False)),
    "ipv4-fragment": (ETH_IP, ipv4(UDP + bytes(20), frag=0x2000)),
    "ipv6-runt": (ETH_IP6, ipv6(UDP)[:20]),
    "ipv6-plen-long": (ETH_IP6, ipv6(UDP, plen=1000)),
    "ipv6-ext-cut": (ETH_IP6, ipv6(b"\x11\x20" + bytes(6), nexthdr=0)),
    "ipv6-ext-chain": (ETH_IP6, ipv6(b"\x3c\x00" + bytes(6) + b"\x2b\x00" +
                                     bytes(6) + b"\x11\x00" + bytes(6) + UDP,
                                     nexthdr=0)),
    "ipv6-fragment": (ETH_IP6, ipv6(b"\x11\x00\x00\x01" + b"\0\0\0\x2a" +
                                    UDP + bytes(16), nexthdr=44)),
    "vlan-ipv4": (ETH_VLAN, vlan(10, ETH_IP) + ipv4(UDP)),
    "qinq-ipv4": (ETH_QINQ, vlan(10, ETH_VLAN) + vlan(20, ETH_IP) + ipv4(UDP)),
    "non-ip": (0x88B5, bytes(46)),
    "jumbo": (ETH_IP, ipv4(UDP + bytes(3960))),
}


OTHERHOST = "02:00:00:00:00:99"


def malformed(iface, dstmac, outdir):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    src = s.getsockname()[4]
    for name, (ethertype, body) in MALFORMED.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(bytes.fromhex(dstmac.replace(":", "")) + src +
                    ethertype.to_bytes(2, "big") + body)
    # A well-formed UDP datagram, to DSTMAC and to another host's MAC.
    for name, dst in (("ipv4-udp", dstmac), ("ipv4-udp-otherhost", OTHERHOST)):
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(bytes.fromhex(dst.replace(":", "")) + src +
                    ETH_IP.to_bytes(2, "big") + ipv4(UDP))


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
    return parse_rxfh(out, dev)


def parse_rxfh(out, dev):
    """The key and table of `ethtool -x DEV`'s output OUT."""
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


def flow_input(src, dst, f, ports=True):
    data = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    if ports:
        data += (SPORT + f).to_bytes(2, "big") + (DPORT + f).to_bytes(2, "big")
    return data


SO_ATTACH_FILTER = 26
SKF_AD_OFF = 0xFFFFF000
SKF_AD_PKTTYPE = 4
SKF_AD_RXHASH = 32
PACKET_OUTGOING = 4
ETH_P_ALL = 3


def drain(s):
    """How many datagrams a non-blocking socket holds (and drop them)."""
    n = 0
    try:
        while True:
            s.recv(65536)
            n += 1
    except BlockingIOError:
        return n


def hash_socket(dev, want, other=False):
    """A packet socket on dev that sees only received frames with skb->hash
    == want (other: != want)."""
    # jeq want -> drop (other), else jne want -> drop
    test = (0x15, 1, 0, want) if other else (0x15, 0, 1, want)
    insns = [
        (0x20, 0, 0, SKF_AD_OFF + SKF_AD_PKTTYPE),   # ld pkttype
        (0x15, 3, 0, PACKET_OUTGOING),               # jeq outgoing -> drop
        (0x20, 0, 0, SKF_AD_OFF + SKF_AD_RXHASH),    # ld rxhash
        test,
        (0x06, 0, 0, 0xFFFF),                        # ret accept
        (0x06, 0, 0, 0),                             # ret drop
    ]
    prog = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in insns))
    fprog = struct.pack("HxxxxxxQ", len(insns), ctypes.addressof(prog))
    # Protocol 0 receives nothing until bound: no frame slips in unfiltered.
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    s.bind((dev, ETH_P_ALL))
    s.setblocking(False)
    return s, prog


def nohashcheck(dev, send, sent):
    """SEND (a command) sends SENT frames to DEV: all must arrive, none with
    a hash.  Any frame with a hash is one too many; a stray frame of the
    link's own, with none, cannot make that pass or fail."""
    nonzero, _prog = hash_socket(dev, 0, other=True)
    rx = f"/sys/class/net/{dev}/statistics/rx_packets"
    before = int(open(rx).read())
    subprocess.run(send, check=True)
    time.sleep(0.5)
    n = drain(nonzero)
    got = int(open(rx).read()) - before
    print(f"{got} frames received ({sent} sent), {n} of them with a hash")
    sys.exit(1 if n or got < sent else 0)


def hashcheck(src, dst, flows, per_flow, dev, netns, opts):
    mode = "syn" if "--tcp" in opts else "send"
    send = ["ip", "netns", "exec", netns, TRAFFIC, mode, dst, str(flows), str(per_flow)]
    if "--none" in opts:
        nohashcheck(dev, send, flows * per_flow)
    key, _ = rxfh(dev)
    ports = "--no-ports" not in opts
    want = [toeplitz(key, flow_input(src, dst, f, ports)) for f in range(flows)]
    # Flows sharing a hash (addresses only) share one socket.
    socks = {h: hash_socket(dev, h) for h in want}
    subprocess.run(send, check=True)
    time.sleep(0.5)
    bad = 0
    for h, (s, _) in socks.items():
        n = drain(s)
        expect = per_flow * sum(w == h for w in want)
        if n != expect:
            print(f"hash {h:#010x}: {n} of {expect} packets carried it")
            bad += 1
    print(f"{len(socks) - bad} of {len(socks)} hashes: every packet's skb hash = Toeplitz")
    sys.exit(1 if bad else 0)


SO_INCOMING_CPU = 49


def cpucheck(src, dst, flows, per_flow, dev, netns):
    key, table = rxfh(dev)
    ncpu = os.cpu_count()
    family = socket.AF_INET6 if ":" in dst else socket.AF_INET
    socks = []
    for f in range(flows):
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.bind((dst, DPORT + f))
        # UDP records the incoming CPU on connected sockets only.
        s.connect((src, SPORT + f))
        s.setblocking(False)
        socks.append(s)
    subprocess.run(["ip", "netns", "exec", netns, TRAFFIC, "send", dst,
                    str(flows), str(per_flow)], check=True)
    time.sleep(0.5)
    bad = 0
    for f, s in enumerate(socks):
        n = drain(s)
        queue = table[toeplitz(key, flow_input(src, dst, f)) & 127]
        cpu = s.getsockopt(socket.SOL_SOCKET, SO_INCOMING_CPU)
        if n != per_flow or cpu != queue % ncpu:
            print(f"flow {f}: {n}/{per_flow} datagrams, processed on CPU {cpu}, "
                  f"table says queue {queue} (CPU {queue % ncpu})")
            bad += 1
    print(f"{flows - bad} of {flows} flows received in full on their queue's CPU")
    sys.exit(1 if bad else 0)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "mrecv":
        mrecv(args[0], args[1], int(args[2]))
    elif cmd == "pick":
        pick(args[0], args[1], args[2], int(args[3]), int(args[4]))
    elif cmd == "pickbase":
        pickbase(args[0], args[1], args[2], int(args[3]), int(args[4]), int(args[5]))
    elif cmd == "mcloop":
        mcloop(args[0], args[1], int(args[2]))
    elif cmd == "malformed":
        if args[0] == "list":
            print(" ".join(MALFORMED))
        else:
            malformed(args[0], args[1], args[2])
    elif cmd == "hashcheck":
        hashcheck(args[0], args[1], int(args[2]), int(args[3]), args[4], args[5], args[6:])
    elif cmd == "cpucheck":
        cpucheck(args[0], args[1], int(args[2]), int(args[3]), args[4], args[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
