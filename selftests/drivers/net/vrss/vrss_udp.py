#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UDP flows for the vrss selftests, and where RSS must put them.

  vrss_udp.py send DST FLOWS PER_FLOW
      PER_FLOW datagrams on each of FLOWS flows: source port 20000+f,
      destination port 7000+f, unconnected sockets (port-unreachable
      replies do not stop the sender).
  vrss_udp.py send DST FLOWS PER_FLOW SIZE [SPORT]
      The same with SIZE-byte payloads (over the MTU: IP fragments), and
      source ports from SPORT on (several senders at once).
  vrss_udp.py flood DST FLOWS SIZE SPORT STOPFILE
      Sends round robin over FLOWS flows until the file STOPFILE exists,
      skipping sends that fail (the stress test takes links down).
  vrss_udp.py pace DST FLOWS PER_FLOW GAP [SPORT]
      Light traffic: the same flows, one datagram per flow every GAP
      seconds.
  vrss_udp.py seqsend DST FLOWS COUNT [BURST [GAP]]
      COUNT datagrams round robin over FLOWS flows (source port 20000+f,
      all to port 7000), each carrying its flow and its sequence number
      in that flow.  With BURST, BURST datagrams of a flow per system call
      (UDP GSO, segmented before the wire when the device has GSO off): a
      burst reaches the receive side back to back.  With GAP, a pause of
      GAP seconds after each round over the flows (a sender outside a
      TCG guest is otherwise far faster than the guest).
  vrss_udp.py seqrecv ADDR FLOWS COUNT
      Receives what seqsend sends on ADDR port 7000 until COUNT arrived or
      the senders are quiet for 2 s; prints "received R reordered O" with
      O the datagrams that came after a later one of their flow.
  vrss_udp.py mrecv GROUP IFADDR COUNT
      Joins the IPv4 multicast GROUP on the interface of address IFADDR
      and counts what arrives on port 7000 until COUNT arrived or nothing
      came for 2 s (10 s before the first); prints "received R".
  vrss_udp.py flip DEV QUEUES STOPFILE
      Until STOPFILE exists: DEV's threshold alternately 0 and 100 every
      millisecond, and every 50 flips `ethtool -L DEV rx QUEUES - 1` for 6
      flips and rxhash off for 6 flips; then threshold 80, QUEUES queues
      and rxhash on again.  Prints the number of flips, of queue count
      changes and of rxhash switches.
  vrss_udp.py malformed IFACE DSTMAC CASE COUNT | malformed list
      Sends COUNT copies of a named malformed frame (runts, bad IPv4
      header lengths, truncated IPv6 extension headers, fragments, VLAN
      and QinQ tags, non-IP, jumbo) from IFACE to DSTMAC.
  vrss_udp.py raw IFACE DSTMAC ETHERTYPE LEN COUNT
      COUNT Ethernet frames of type ETHERTYPE (hex) with LEN zero bytes
      of payload, through a packet socket on IFACE.
  vrss_udp.py hashcheck SRC DST FLOWS PER_FLOW DEV PEER_NETNS
      Sends those flows from PEER_NETNS and checks, with one packet socket
      per flow on DEV whose classic BPF filter accepts only frames whose
      skb hash (SKF_AD_RXHASH) is the Toeplitz hash expected for that flow,
      that every packet arrived with exactly that hash.
  vrss_udp.py cpucheck SRC DST FLOWS PER_FLOW DEV PEER_NETNS
      Binds one UDP socket per flow on DST, sends the flows from
      PEER_NETNS, and checks that each socket received all its datagrams
      and that SO_INCOMING_CPU (where the stack processed them) is the CPU
      of the queue table[hash % 128] names (queue i on CPU i % online CPUs:
      run it on CPU 0, where veth then delivers and the primary, queue 0,
      hands frames up inline, the spread queues on CPUs 1, 2, ...).
  vrss_udp.py predict SRC DST FLOWS PER_FLOW DEV [--no-ports] [--effective]
      The per-queue packet counts those flows must give on DEV, from the
      key and table `ethtool -x DEV` shows: an independent Toeplitz
      implementation (bit by bit, as Microsoft's verification text defines
      it), not the module's.  --effective takes the table in effect at the
      load policy's width (sysfs vrss/effective_indir) instead.
"""
import ctypes
import errno
import ipaddress
import os
import re
import socket
import struct
import subprocess
import sys
import time

SPORT, DPORT = 20000, 7000


def flow_sockets(dst, flows, sport):
    """One UDP socket per flow, bound to source ports from @sport on."""
    family = socket.AF_INET6 if ":" in dst else socket.AF_INET
    socks = []
    for f in range(flows):
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", sport + f))
        socks.append(s)
    return socks


def send(dst, flows, per_flow, size=4, sport=SPORT):
    payload = b"v" * size
    socks = flow_sockets(dst, flows, sport)
    for _ in range(per_flow):
        for f, s in enumerate(socks):
            s.sendto(payload, (dst, DPORT + f))


def flood(dst, flows, size, sport, stopfile):
    """Send round robin over @flows until @stopfile exists; a send that
    fails (the link under it going down and up) is skipped."""
    payload = b"v" * size
    socks = flow_sockets(dst, flows, sport)
    while not os.path.exists(stopfile):
        for _ in range(64):
            for f, s in enumerate(socks):
                try:
                    s.sendto(payload, (dst, DPORT + f))
                except OSError:
                    pass


def pace(dst, flows, per_flow, gap, sport=SPORT):
    socks = []
    for f in range(flows):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", sport + f))
        socks.append(s)
    for _ in range(per_flow):
        for f, s in enumerate(socks):
            s.sendto(b"v" * 4, (dst, DPORT + f))
            time.sleep(gap)


SEQ = struct.Struct("!II")


SOL_UDP, UDP_SEGMENT = 17, 103


def seqsend(dst, flows, count, burst=1, gap=0.0):
    socks = []
    for f in range(flows):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", SPORT + f))
        s.connect((dst, DPORT))
        if burst > 1:
            s.setsockopt(SOL_UDP, UDP_SEGMENT, SEQ.size)
        socks.append(s)
    seq = [0] * flows
    sent = 0
    while sent < count:
        f = (sent // burst) % flows
        n = min(burst, count - sent)
        socks[f].send(b"".join(SEQ.pack(f, seq[f] + k) for k in range(n)))
        seq[f] += n
        sent += n
        if gap and f == flows - 1:
            time.sleep(gap)


def seqrecv(addr, flows, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.bind((addr, DPORT))
    s.settimeout(60)
    print("ready", flush=True)
    last = [-1] * flows
    received = reordered = foreign = 0
    while received < count:
        try:
            data = s.recv(64)
        except socket.timeout:
            break
        if len(data) < SEQ.size:
            # Not ours (another sender to DPORT): the caller sees it.
            foreign += 1
            continue
        f, seq = SEQ.unpack(data[:SEQ.size])
        s.settimeout(2)
        received += 1
        if seq < last[f]:
            reordered += 1
        else:
            last[f] = seq
    print(f"received {received} reordered {reordered} foreign {foreign}")


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


def flip(dev, queues, stopfile):
    path = f"/sys/class/net/{dev}/vrss/threshold"
    flips = changes = toggles = 0

    def channels(n):
        nonlocal changes
        subprocess.run(["ethtool", "-L", dev, "rx", str(n)], check=True)
        changes += 1

    def rxhash(state):
        nonlocal toggles
        subprocess.run(["ethtool", "-K", dev, "rxhash", state], check=True)
        toggles += 1

    with open(path, "w") as f:
        while not os.path.exists(stopfile):
            f.write("0\n" if flips % 2 == 0 else "100\n")
            f.flush()
            flips += 1
            time.sleep(0.001)
            if flips % 50 == 0:
                channels(queues - 1)
            elif flips % 50 == 6:
                channels(queues)
            elif flips % 50 == 25:
                rxhash("off")
            elif flips % 50 == 31:
                rxhash("on")
        f.write("80\n")
    subprocess.run(["ethtool", "-L", dev, "rx", str(queues)], check=True)
    subprocess.run(["ethtool", "-K", dev, "rxhash", "on"], check=True)
    print(f"flips {flips} channels {changes} rxhash {toggles}")


def raw(iface, dstmac, ethertype, length, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    src = s.getsockname()[4]
    frame = (bytes.fromhex(dstmac.replace(":", "")) + src +
             int(ethertype, 16).to_bytes(2, "big") + bytes(length))
    for _ in range(count):
        s.send(frame)


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


def malformed(iface, dstmac, name, count):
    ethertype, body = MALFORMED[name]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    frame = (bytes.fromhex(dstmac.replace(":", "")) + s.getsockname()[4] +
             ethertype.to_bytes(2, "big") + body)
    for _ in range(count):
        try:
            s.send(frame)
        except OSError as e:
            # ENOBUFS: the device dropped it (over its peer's MTU); the
            # caller counts those drops.
            if e.errno != errno.ENOBUFS:
                raise


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


def flow_input(src, dst, f, ports=True):
    data = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    if ports:
        data += (SPORT + f).to_bytes(2, "big") + (DPORT + f).to_bytes(2, "big")
    return data


def predict(src, dst, flows, per_flow, dev, ports, effective=False):
    key, table = rxfh(dev)
    if effective:
        with open(f"/sys/class/net/{dev}/vrss/effective_indir") as f:
            table = [int(x) for x in f.read().split()]
    counts = [0] * (max(table) + 1)
    for f in range(flows):
        counts[table[toeplitz(key, flow_input(src, dst, f, ports)) & 127]] += per_flow
    print(" ".join(str(c) for c in counts))


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


def hash_socket(dev, want):
    """A packet socket on dev that sees only received frames with skb->hash == want."""
    insns = [
        (0x20, 0, 0, SKF_AD_OFF + SKF_AD_PKTTYPE),   # ld pkttype
        (0x15, 3, 0, PACKET_OUTGOING),               # jeq outgoing -> drop
        (0x20, 0, 0, SKF_AD_OFF + SKF_AD_RXHASH),    # ld rxhash
        (0x15, 0, 1, want),                          # jne want -> drop
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


def hashcheck(src, dst, flows, per_flow, dev, netns):
    key, _ = rxfh(dev)
    socks = []
    for f in range(flows):
        socks.append(hash_socket(dev, toeplitz(key, flow_input(src, dst, f))))
    subprocess.run(["ip", "netns", "exec", netns, sys.argv[0], "send", dst,
                    str(flows), str(per_flow)], check=True)
    time.sleep(0.5)
    bad = 0
    for f, (s, _) in enumerate(socks):
        n = drain(s)
        if n != per_flow:
            print(f"flow {f}: {n} of {per_flow} packets carried the expected hash")
            bad += 1
    print(f"{flows - bad} of {flows} flows: every packet's skb hash = Toeplitz")
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
    subprocess.run(["ip", "netns", "exec", netns, sys.argv[0], "send", dst,
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
    if cmd == "send":
        send(args[0], int(args[1]), int(args[2]), *[int(a) for a in args[3:5]])
    elif cmd == "flood":
        flood(args[0], int(args[1]), int(args[2]), int(args[3]), args[4])
    elif cmd == "pace":
        pace(args[0], int(args[1]), int(args[2]), float(args[3]),
             *[int(a) for a in args[4:5]])
    elif cmd == "seqsend":
        seqsend(args[0], int(args[1]), int(args[2]), *[int(a) for a in args[3:4]],
                *[float(a) for a in args[4:5]])
    elif cmd == "seqrecv":
        seqrecv(args[0], int(args[1]), int(args[2]))
    elif cmd == "mrecv":
        mrecv(args[0], args[1], int(args[2]))
    elif cmd == "flip":
        flip(args[0], int(args[1]), args[2])
    elif cmd == "malformed":
        if args[0] == "list":
            print(" ".join(MALFORMED))
        else:
            malformed(args[0], args[1], args[2], int(args[3]))
    elif cmd == "raw":
        raw(args[0], args[1], args[2], int(args[3]), int(args[4]))
    elif cmd == "hashcheck":
        hashcheck(args[0], args[1], int(args[2]), int(args[3]), args[4], args[5])
    elif cmd == "cpucheck":
        cpucheck(args[0], args[1], int(args[2]), int(args[3]), args[4], args[5])
    elif cmd == "predict":
        predict(args[0], args[1], int(args[2]), int(args[3]), args[4],
                "--no-ports" not in args, "--effective" in args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
