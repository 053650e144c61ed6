#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The mutants of tools/mutants/mutants.txt (its top describes the format),
for run.sh.

  mutants.py ids [ID...]       the ids, in the file's order (all, or those named)
  mutants.py list [ID...]      a table: id, where it runs, its tests, its promise
  mutants.py fields ID         its fields as shell assignments (m_kernel=...), for eval
  mutants.py apply ID DIR      apply it to the copy of the tree at DIR; prints the diff
  mutants.py check [-q] [ID...]  apply each, in memory, to this tree; prints the diffs

--db FILE reads another file.  Exits 1, saying why, on a malformed file or
a snippet that is not found exactly once (a mutant never rots silently),
2 on an unknown id or a bad command line.
"""

import difflib
import os
import re
import shlex
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TESTS = os.path.join(REPO, "selftests", "drivers", "net", "vrss")
KEYS = ("spec", "kernel", "cpus", "nic", "rig", "env", "tests", "timeout", "accepted")
DEFAULT_TIMEOUT = "900"


class Bad(Exception):
    pass


def parse(path):
    """The mutants of @path, in order: dicts of KEYS, id, line, hunks."""
    mutants, seen = [], set()
    cur = hunk = fname = None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        where = f"{path}:{n}"
        if cur is None:
            if not line.strip() or line.startswith("#"):
                continue
            kw, _, val = line.partition(" ")
            val = val.strip()
            if kw != "mutant" or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", val):
                raise Bad(f"{where}: expected 'mutant ID' (ID of a-z, 0-9, -), not: {line}")
            if val in seen:
                raise Bad(f"{where}: a second mutant {val}")
            seen.add(val)
            cur = {"id": val, "line": n, "hunks": []}
            hunk = fname = None
            continue
        # A code line: "< " or "> " and the line as it is.
        if line[:1] in ("<", ">") and (len(line) == 1 or line[1] == " "):
            code = line[2:]
            if line[0] == "<":
                if hunk is None or hunk["repl"]:
                    if fname is None:
                        raise Bad(f"{where}: a '<' line before any 'file' line")
                    hunk = {"file": fname, "orig": [], "repl": [], "line": n}
                    cur["hunks"].append(hunk)
                hunk["orig"].append(code)
            else:
                if hunk is None:
                    raise Bad(f"{where}: a '>' line without '<' lines before it")
                hunk["repl"].append(code)
            continue
        # Anything else ends the hunk at hand.
        hunk = None
        if not line.strip() or line.startswith("#"):
            continue
        if line == "end":
            check_fields(cur, path)
            mutants.append(cur)
            cur = None
            continue
        kw, _, val = line.partition(" ")
        val = val.strip()
        if kw == "file":
            fname = val
        elif kw in KEYS:
            if kw in cur:
                raise Bad(f"{where}: a second '{kw}' for mutant {cur['id']}")
            cur[kw] = val
        else:
            raise Bad(f"{where}: unknown keyword '{kw}' (mutant {cur['id']})")
    if cur is not None:
        raise Bad(f"{path}:{cur['line']}: mutant {cur['id']} has no 'end'")
    return mutants


def check_fields(m, path):
    where = f"{path}:{m['line']}: mutant {m['id']}"
    for k in ("spec", "kernel", "cpus", "tests"):
        if not m.get(k):
            raise Bad(f"{where}: no '{k}'")
    if m["kernel"] not in ("6.1", "6.12"):
        raise Bad(f"{where}: kernel must be 6.1 or 6.12, not {m['kernel']}")
    for k in ("cpus", "nic", "timeout"):
        if k in m and not re.fullmatch(r"[1-9][0-9]*", m[k]):
            raise Bad(f"{where}: {k} must be a positive number, not {m[k]}")
    m.setdefault("timeout", DEFAULT_TIMEOUT)
    for t in m["tests"].split():
        # "unit": the host unit tests, alone (tools/mutants/run.sh).
        if t == "unit" and m["tests"] == "unit":
            continue
        if not os.path.isfile(os.path.join(TESTS, t)):
            raise Bad(f"{where}: no selftest {t} in {os.path.relpath(TESTS, REPO)}")
    if not m["hunks"]:
        raise Bad(f"{where}: nothing to change (no '<' lines)")
    for h in m["hunks"]:
        if h["orig"] == h["repl"]:
            raise Bad(f"{path}:{h['line']}: mutant {m['id']}: the replacement is the original")


def find_lines(text, lines):
    """Where @lines occur in @text as whole consecutive lines (offsets)."""
    needle = "\n".join(lines) + "\n"
    hay = "\n" + text
    found, start = [], 0
    while True:
        i = hay.find("\n" + needle, start)
        if i < 0:
            return found, needle
        found.append(i)  # hay[i] is the newline before: text[i] starts it
        start = i + 1


def mutate(m, read):
    """{path: (old, new)} of mutant @m, the files read with @read(path)."""
    files = {}
    for h in m["hunks"]:
        path = h["file"]
        if path not in files:
            try:
                text = read(path)
            except OSError as e:
                raise Bad(f"mutant {m['id']}: cannot read {path}: {e.strerror}")
            files[path] = [text, text]
        text = files[path][1]
        found, needle = find_lines(text, h["orig"])
        if len(found) != 1:
            snippet = "".join("\t| " + l + "\n" for l in h["orig"])
            raise Bad(f"mutant {m['id']} (mutants.txt line {h['line']}): its snippet is in "
                      f"{path} {len(found)} times, not once:\n{snippet.rstrip()}")
        i = found[0]
        repl = "".join(l + "\n" for l in h["repl"])
        files[path][1] = text[:i] + repl + text[i + len(needle):]
    return {p: tuple(t) for p, t in files.items()}


def diff(files):
    out = []
    for path, (old, new) in files.items():
        out += difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                    "a/" + path, "b/" + path, n=2)
    return "".join(out)


def select(mutants, ids):
    by_id = {m["id"]: m for m in mutants}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        print(f"mutants: no such mutant: {' '.join(unknown)} (tools/mutants/run.sh --list)",
              file=sys.stderr)
        sys.exit(2)
    return [by_id[i] for i in ids] if ids else mutants


def place(m):
    w = f"{m['kernel']}/{m['cpus']}cpu"
    if m.get("nic"):
        w += f"/nic{m['nic']}"
    if "--count-insns" in m.get("rig", ""):
        w += "/insns"
    return w


def read_repo(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def main(argv):
    db = os.path.join(REPO, "tools", "mutants", "mutants.txt")
    if argv[:1] == ["--db"] and len(argv) >= 2:
        db, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[0], argv[1:]
    try:
        mutants = parse(db)
        if cmd == "ids":
            print("\n".join(m["id"] for m in select(mutants, args)))
        elif cmd == "list":
            for m in select(mutants, args):
                acc = "  [accepted: " + m["accepted"] + "]" if m.get("accepted") else ""
                print(f"{m['id']:<30} {place(m):<17} {m['tests']:<14} {m['spec']}{acc}")
        elif cmd == "fields" and len(args) == 1:
            m = select(mutants, args)[0]
            for k in KEYS:
                print(f"m_{k}={shlex.quote(m.get(k, ''))}")
            print(f"m_where={shlex.quote(place(m))}")
        elif cmd == "apply" and len(args) == 2:
            m = select(mutants, args[:1])[0]
            top = args[1]

            def read(path):
                with open(os.path.join(top, path), encoding="utf-8") as f:
                    return f.read()
            files = mutate(m, read)
            for path, (_, new) in files.items():
                with open(os.path.join(top, path), "w", encoding="utf-8") as f:
                    f.write(new)
            sys.stdout.write(diff(files))
        elif cmd == "check":
            quiet = args[:1] == ["-q"]
            bad = 0
            for m in select(mutants, args[1:] if quiet else args):
                try:
                    d = diff(mutate(m, read_repo))
                except Bad as e:
                    print(f"NOT-APPLIED {e}")
                    bad += 1
                    continue
                if not quiet:
                    print(f"# {m['id']}: {m['spec']}\n{d}")
            if bad:
                print(f"mutants: {bad} mutant(s) no longer apply to this tree: update "
                      f"{os.path.relpath(db, REPO)}", file=sys.stderr)
                return 1
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except Bad as e:
        print(f"mutants: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
