#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Collapse and insert range beside writers that keep the journal busy.

  shiftload.py run FILE LOAD SEED ITERS BOUND MODEL [CREATEDIR]
  shiftload.py check FILE MODEL

run: fills FILE with pages that each hold a pattern of their own, starts
two fio jobs of 4 KiB random overwrites on LOAD (and, with CREATEDIR, a
fio job that creates small files there, writes them a page at a time and
removes them, in a loop), then runs fallocate -c and fallocate -i in
turn on FILE, ITERS times in all, at offsets and lengths (1 to 4 pages)
drawn from SEED. Each fallocate must complete within BOUND seconds; when
one does not, the load is stopped (so that it can end) and the run
fails. The load is stopped after the last one; FILE must then hold what
the sequence implies (collapsed pages gone, inserted pages zero), and
the model is kept in MODEL for "check", which compares FILE with it.
Prints the slowest fallocate of each kind.
"""

import os
import random
import subprocess
import sys
import time

PAGE = 4096


def page(tag):
    """The bytes of a page: zero for an inserted one."""
    if tag is None:
        return bytes(PAGE)
    return (b"%07d\n" % tag) * (PAGE // 8)


def content(model):
    return b"".join(page(t) for t in model)


def run(path, load, seed, iters, bound, mpath, cdir):
    rnd = random.Random(seed)
    model = list(range(64))
    with open(path, "wb") as f:
        f.write(content(model))
        os.fsync(f.fileno())
    cmd = ["fio", "--ioengine=psync", "--bs=4k", "--time_based", "--runtime=3600",
           "--minimal", "--name=ow", "--filename=" + load, "--rw=randwrite", "--size=16M",
           "--numjobs=2"]
    if cdir:
        # Small files created, written a page at a time and removed, in a loop.
        os.makedirs(cdir, exist_ok=True)
        cmd += ["--name=small", "--directory=" + cdir, "--nrfiles=16", "--filesize=64k",
                "--rw=write", "--unlink_each_loop=1", "--numjobs=1"]
    fio = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)

    def stop():
        fio.terminate()
        fio.wait()

    # Let the writers get going first.
    time.sleep(3)
    worst = {"-c": 0.0, "-i": 0.0}
    for i in range(iters):
        op = "-c" if i % 2 == 0 else "-i"
        n = rnd.randint(1, 4)
        # A collapse must end before the end of the file.
        off = rnd.randrange(0, len(model) - n if op == "-c" else len(model))
        cmd = ["fallocate", op, "-o", str(off * PAGE), "-l", str(n * PAGE), path]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd)
        try:
            rc = p.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            print("FAIL: %s (%d of %d) did not complete within %.0f s beside the writers"
                  % (" ".join(cmd), i + 1, iters, bound))
            stop()
            rc = p.wait()
            print("it completed %.1f s after it began, once the writers stopped (status %d)"
                  % (time.monotonic() - t0, rc))
            sys.exit(1)
        took = time.monotonic() - t0
        worst[op] = max(worst[op], took)
        if rc:
            stop()
            sys.exit("FAIL: %s failed with status %d" % (" ".join(cmd), rc))
        if op == "-c":
            del model[off:off + n]
        else:
            model[off:off] = [None] * n
    if fio.poll() is not None:
        sys.exit("FAIL: fio ended before the fallocates (status %d)" % fio.returncode)
    stop()
    print("%d fallocates beside the writers; the slowest collapse took %.2f s,"
          " the slowest insert %.2f s" % (iters, worst["-c"], worst["-i"]))
    with open(mpath, "w") as f:
        f.write(" ".join("z" if t is None else str(t) for t in model))
    check(path, mpath)


def check(path, mpath):
    with open(mpath) as f:
        model = [None if w == "z" else int(w) for w in f.read().split()]
    with open(path, "rb") as f:
        got = f.read()
    want = content(model)
    if got != want:
        if len(got) != len(want):
            sys.exit("FAIL: %s has %d bytes, the collapses and inserts imply %d"
                     % (path, len(got), len(want)))
        bad = next(i for i in range(0, len(got), PAGE) if got[i:i + PAGE] != want[i:i + PAGE])
        sys.exit("FAIL: %s: page %d differs from what the collapses and inserts imply"
                 % (path, bad // PAGE))
    print("%s holds the %d pages the collapses and inserts imply" % (path, len(model)))


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]),
            sys.argv[7], sys.argv[8] if len(sys.argv) > 8 else None)
    else:
        check(sys.argv[2], sys.argv[3])
