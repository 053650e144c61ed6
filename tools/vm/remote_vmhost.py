# SPDX-License-Identifier: GPL-2.0
"""REMOTE_TYPE=vmhost for the kernel's drivers/net selftests
(tools/testing/selftests/drivers/net/lib/py/remote.py loads remote_<type>):
the remote end is the host of a guest booted with tools/vm/run --nic, in
the network namespace behind the guest's NIC, reached through tools/vm/host.
make ksft links this file into that directory.  REMOTE_ARGS: unused."""

import os
import subprocess

HOST = os.path.join(os.path.dirname(os.path.realpath(__file__)), "host")


class Remote:
    def __init__(self, name, dir_path):
        self.name = name
        self.dir_path = dir_path

    def cmd(self, comm):
        # tools/vm/host runs it in the host's directory of the same path.
        return subprocess.Popen([HOST, "run", "bash", "-c", comm],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def deploy(self, what):
        # The repository, and so the tests, are at the same path there.
        if os.path.isabs(what):
            return what
        return os.path.abspath(self.dir_path + "/" + what)
