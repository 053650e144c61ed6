#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""netdev netlink for the vrss selftests, through the kernel's YNL library
(build/ynl/, see tools/scripts/ynl.sh).  Prints plain lines for shell tests.

  vrss_ynl.py qstats DEV            rx-packets rx-bytes tx-packets tx-bytes
                                    of the device (queues plus base)
  vrss_ynl.py qstats-queues DEV     one line per rx queue in use:
                                    queue-id rx-packets rx-bytes
  vrss_ynl.py queues DEV            one line per rx queue in use:
                                    queue-id napi-id (or - without one)
"""
import os
import runpy
import socket
import sys

# realpath: in a kselftest tree (make ksft) this file is a link.
REPO = os.path.join(os.path.dirname(os.path.realpath(__file__)), "../../../..")
YNL = os.path.join(REPO, "build/ynl")
sys.path.insert(0, YNL)
from lib import YnlFamily  # noqa: E402

# YNL reads its spec with yaml.safe_load, seconds under TCG: libyaml's
# loader instead, as the kernel's drivers/net tests get it (ksft-drv.sh).
runpy.run_path(os.path.join(REPO, "tools/scripts/pyfast/sitecustomize.py"))


def main():
    cmd, dev = sys.argv[1], sys.argv[2]
    ifindex = socket.if_nametoindex(dev)
    ynl = YnlFamily(os.path.join(YNL, "netdev.yaml"), "")
    if cmd == "qstats":
        (s,) = ynl.dump("qstats-get", {"ifindex": ifindex})
        print(s.get("rx-packets", "-"), s.get("rx-bytes", "-"),
              s.get("tx-packets", "-"), s.get("tx-bytes", "-"))
    elif cmd == "qstats-queues":
        for s in sorted(ynl.dump("qstats-get", {"ifindex": ifindex, "scope": "queue"}),
                        key=lambda s: s["queue-id"]):
            if s["queue-type"] == "rx":
                print(s["queue-id"], s.get("rx-packets", "-"), s.get("rx-bytes", "-"))
    elif cmd == "queues":
        for q in sorted(ynl.dump("queue-get", {"ifindex": ifindex}),
                        key=lambda q: q["id"]):
            if q["type"] == "rx":
                print(q["id"], q.get("napi-id", "-"))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
