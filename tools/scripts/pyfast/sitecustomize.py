# SPDX-License-Identifier: GPL-2.0
"""Imported at start-up by the Python programs ksft-drv.sh runs (it puts
this directory on PYTHONPATH), and run by the selftests' vrss_ynl.py: the
kernel's YNL library reads its specs with yaml.safe_load, pure Python,
which takes seconds per spec in a TCG guest.  libyaml's safe loader
(python3-yaml has it) reads the same YAML into the same objects in a
tenth of the time."""
import functools

try:
    import yaml
except ImportError:
    pass
else:
    if hasattr(yaml, "CSafeLoader"):
        yaml.safe_load = functools.partial(yaml.load, Loader=yaml.CSafeLoader)
