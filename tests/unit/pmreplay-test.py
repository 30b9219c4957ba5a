#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit test of tools/vsmfs-pmreplay on small hand-made logs: the values a
line may hold at a crash, with flushes, non-temporal stores, fences per CPU
and task, and early eviction of dirty lines."""

import importlib.machinery
import os
import struct
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pr = importlib.machinery.SourceFileLoader(
    "pmreplay", os.path.join(TOP, "tools", "vsmfs-pmreplay")).load_module()

DEV = 4096
failures = 0


def rec(rtype, off=0, data=b"", cpu=0, pid=1):
    pad = b"\0" * (-len(data) % 8)
    return pr.REC.pack(rtype, cpu, pid, off, len(data), 0) + data + pad


def log_file(records):
    body = b"".join(records)
    hdr = pr.HDR.pack(pr.MAGIC, pr.VERSION, 0, len(body), len(records), 0, DEV)
    f = tempfile.NamedTemporaryFile(delete=False)
    f.write(hdr + body)
    f.close()
    return f.name


def images(records, singles=8, nrandom=0, mid=4):
    """{point: {spec: {line: first byte}}} of every image of the log."""
    path = log_file(records)
    try:
        log = pr.Log(path)
    finally:
        os.unlink(path)
    base = bytes(DEV)
    out = {}
    for ident, kind, p, choice, h, diff in pr.images(base, log, singles, nrandom, 1, mid):
        point, _, spec = ident.partition(":")
        out.setdefault(point, {})[spec] = ({line: c[0] for line, c in diff.items()}, kind)
        # The same image again from its name, as write/apply find it.
        _, _, again = pr.find(base, log, ident, 1)
        check(again == diff, f"{ident}: found again as another image")
    return out


def states(imgs, point, line):
    """The set of first bytes @line takes over the images of @point."""
    return {d.get(line, 0) for d, _ in imgs[point].values()}


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}")


def b(v):
    return bytes([v]) * 8


# A store flushed and fenced: before the fence the line is old or new,
# after it new only.
imgs = images([rec(pr.STORE, 0, b(1)), rec(pr.FLUSH, 0, b(1) + bytes(56)), rec(pr.FENCE)])
check(states(imgs, "0", 0) == {0, 1}, "flushed store: old or new before the fence")
check(states(imgs, "end", 0) == {1}, "flushed store: durable after the fence")

# A store never flushed: the flush model never shows it, early eviction does,
# at every crash point after it.
imgs = images([rec(pr.STORE, 64, b(7)), rec(pr.FENCE), rec(pr.FENCE)])
check(all(d.get(64, 0) == 0 for d, k in imgs["0"].values() if k == "flush"),
      "unflushed store in a flush-model image")
check(states(imgs, "0", 64) == {0, 7} and states(imgs, "end", 64) == {0, 7},
      "unflushed store: evicted or not at every point")

# Two stores to one line then its flush: the value between is possible too
# (an eviction between them); after the fence only the last.
imgs = images([rec(pr.STORE, 0, b(1)), rec(pr.STORE, 8, b(2)),
               rec(pr.FLUSH, 0, b(1) + b(2) + bytes(48)), rec(pr.FENCE)])
mids = [d for d, k in imgs["0"].values() if k == "mid"]
check(any(d.get(0) == 1 for d in mids), "no image with the first store alone")

# A fence orders only the CPU's or task's own flushes.
imgs = images([rec(pr.STORE, 0, b(3), cpu=1, pid=2), rec(pr.FLUSH, 0, b(3) + bytes(56), cpu=1,
                                                            pid=2),
               rec(pr.FENCE, cpu=0, pid=1), rec(pr.FENCE, cpu=1, pid=2)])
check(states(imgs, "1", 0) == {0, 3}, "another CPU's fence made a line durable")
check(states(imgs, "end", 0) == {3}, "own fence did not make the line durable")

# A task that moved to another CPU between its flush and its fence: its
# fence there makes the line durable (the move passed through a locked
# instruction on the CPU it left), and the replay counts the move.
path = log_file([rec(pr.STORE, 0, b(4), cpu=0, pid=7), rec(pr.FLUSH, 0, b(4) + bytes(56), cpu=0,
                                                           pid=7),
                 rec(pr.FENCE, cpu=1, pid=7), rec(pr.FENCE, cpu=1, pid=8)])
try:
    log = pr.Log(path)
finally:
    os.unlink(path)
rp = pr.Replay(bytes(DEV), log)
pts = {p.name: {len(u[1]) for u in p.units} for p in rp.points()}
check(pts == {"0": {2}, "1": set(), "end": set()}, f"moved task's fence: units {pts}")
check(rp.moved == 1, f"moved task's fence counted {rp.moved} times, not once")

# A task that moved and found nothing to fence where it runs now (SETTLE):
# what it flushed on the CPU it left is durable, what another task flushed
# there is not, and no crash point is made.
path = log_file([rec(pr.STORE, 0, b(4), cpu=0, pid=7), rec(pr.FLUSH, 0, b(4) + bytes(56), cpu=0,
                                                           pid=7),
                 rec(pr.STORE, 64, b(5), cpu=0, pid=8), rec(pr.FLUSH, 64, b(5) + bytes(56), cpu=0,
                                                            pid=8),
                 rec(pr.SETTLE, cpu=1, pid=7), rec(pr.SETTLE, cpu=0, pid=8),
                 rec(pr.FENCE, cpu=1, pid=9)])
try:
    log = pr.Log(path)
finally:
    os.unlink(path)
rp = pr.Replay(bytes(DEV), log)
pts = {p.name: {u[0]: len(u[1]) for u in p.units} for p in rp.points()}
check(pts == {"0": {64: 2}, "end": {64: 2}}, f"settled task: units {pts}")
check(rp.moved == 1, f"settled task counted {rp.moved} times, not once")

# Pid 0 is no task (an interrupt, the idle task of each CPU): its fence on
# another CPU orders nothing of a pid 0 mark elsewhere.
imgs = images([rec(pr.STORE, 0, b(5), cpu=0, pid=0), rec(pr.FLUSH, 0, b(5) + bytes(56), cpu=0,
                                                           pid=0),
               rec(pr.FENCE, cpu=1, pid=0)])
check(states(imgs, "end", 0) == {0, 5}, "a pid 0 fence on another CPU made a line durable")

# The fence of a commit made on another CPU (the pmlog_remote_fence control):
# the journal block flushed here is not durable, the commit record written
# after that fence can be, so some image holds the commit without the block.
imgs = images([rec(pr.NT, 128, b(6), cpu=0, pid=3), rec(pr.FENCE, cpu=1, pid=0),
               rec(pr.STORE, 0, b(9), cpu=0, pid=3), rec(pr.FLUSH, 0, b(9) + bytes(56), cpu=0,
                                                         pid=3),
               rec(pr.FENCE, cpu=0, pid=3)])
check(any(d.get(0) == 9 and d.get(128, 0) == 0 for d, _ in imgs["1"].values()),
      "no image with the commit record and not the block fenced elsewhere")
check(states(imgs, "end", 128) == {6}, "own fence did not make the block durable")

# Marks change no line and are kept with their place in the log; crash
# points know theirs.
path = log_file([rec(pr.MARK, 1 << 32 | 1, cpu=0, pid=5), rec(pr.STORE, 0, b(2)),
                 rec(pr.FLUSH, 0, b(2) + bytes(56)), rec(pr.MARK, 2, cpu=1, pid=6),
                 rec(pr.FENCE)])
try:
    log = pr.Log(path)
finally:
    os.unlink(path)
check(log.marks == [(0, 0, 5, 1 << 32 | 1), (3, 1, 6, 2)], f"marks read as {log.marks}")
pts = [(p.name, p.pos, len(p.units)) for p in pr.Replay(bytes(DEV), log).points()]
check(pts == [("0", 4, 1), ("end", 5, 0)], f"crash points with marks: {pts}")

# The torn superblock pattern: a primary changed in place (two lines,
# cached), a backup written non-temporally, one fence. Some image must
# leave both torn: primary line 0 new with line 1 old, backup likewise.
imgs = images([rec(pr.STORE, 0, b(1)), rec(pr.STORE, 64, b(1)),
               rec(pr.NT, 1024, b(1) + bytes(56) + b(1)), rec(pr.FENCE),
               rec(pr.FLUSH, 0, b(1) + bytes(56) + b(1)), rec(pr.FENCE)])
torn = [s for s, (d, _) in imgs["0"].items()
        if d.get(0, 0) != d.get(64, 0) and d.get(1024, 0) != d.get(1088, 0)]
check(torn, "no image tears both copies")
check(all(imgs["0"][s][1] == "evict" for s in torn), "a flush-model image tears the primary")

print(f"pmreplay-test: {'FAIL' if failures else 'ok'}")
sys.exit(1 if failures else 0)
