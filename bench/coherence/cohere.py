# SPDX-License-Identifier: GPL-2.0
"""Reading what the coherence model (cohere.c) wrote: its windows, and the
guest functions of the instructions that moved lines.

Used by bench/coherence-fxmark and bench/coherence/selftest; see
bench/coherence/README.md.
"""

import bisect
import json


def windows(path):
    """The windows of a cohere out= file, by the tag of the marker that
    closed each: {tag: record}. A record holds load_moves, store_moves,
    kernel_load_moves, kernel_store_moves, accesses, unmodelled and sites
    ([pc, load moves, store moves] of each instruction that moved a line)."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rec = json.loads(line)
                out[rec["tag"]] = rec
    return out


def moves(rec, kernel_only=False):
    """Lines moved in a window (by kernel instructions only, if asked)."""
    if kernel_only:
        return rec["kernel_load_moves"] + rec["kernel_store_moves"]
    return rec["load_moves"] + rec["store_moves"]


class Symbols:
    """The guest's /proc/kallsyms (a path, or a list of paths of parts of
    it: the kernel's lines and its modules' of the moment) and /proc/modules
    (if given, for the ranges of the modules): the function and module of
    an address."""

    def __init__(self, path, modules=None):
        self.ranges = []
        if modules:
            with open(modules) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 6 and parts[5].startswith("0x"):
                        base = int(parts[5], 16)
                        if base:
                            self.ranges.append((base, base + int(parts[1]), parts[0]))
        syms = []
        for part in [path] if isinstance(path, str) else path:
            with open(part) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) < 3 or parts[1] not in "tTwW":
                        continue
                    addr = int(parts[0], 16)
                    if not addr:
                        continue
                    mod = parts[3].strip("[]") if len(parts) > 3 else ""
                    syms.append((addr, parts[2], mod))
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def lookup(self, pc):
        """(function, module) of kernel address pc; module "" for the
        kernel itself; ("user", "user") below the kernel's half."""
        if pc < 1 << 63:
            return "user", "user"
        i = bisect.bisect_right(self.addrs, pc) - 1
        if i < 0:
            return "?", ""
        # A module's address names only its own symbols.
        mod = next((m for lo, hi, m in self.ranges if lo <= pc < hi), None)
        if mod is not None and self.syms[i][2] != mod:
            return "?", mod
        return self.syms[i][1], self.syms[i][2]


def by_function(rec, syms):
    """{(function, module): lines moved} of a window."""
    out = {}
    for pc, load, store in rec["sites"]:
        key = syms.lookup(int(pc, 16))
        out[key] = out.get(key, 0) + load + store
    return out


def module_moves(rec, syms, module):
    """Lines moved by the functions of a module in a window."""
    return sum(n for (fn, mod), n in by_function(rec, syms).items() if mod == module)


def by_origin(rec, syms, module):
    """{(function, from function): lines moved} of a window, for the
    functions of a module that moved lines, each with the function whose
    access last put the line where it was taken from (cohere.c, from=on;
    "-" for a line no instruction touched since the plugin started,
    "module:function" for a function of another module, "user" for user
    space). Empty for a trace made without from=on."""
    out = {}
    for pc, src, n in rec.get("from", []):
        fn, mod = syms.lookup(int(pc, 16))
        if mod != module:
            continue
        src = int(src, 16)
        if not src:
            name = "-"
        else:
            sfn, smod = syms.lookup(src)
            name = sfn if smod in (module, "user") else f"{smod or 'kernel'}:{sfn}"
        out[(fn, name)] = out.get((fn, name), 0) + n
    return out
