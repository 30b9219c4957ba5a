#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fsyncs of two CPUs across a power cut (persist/015-fsync-pair,
persist/016-fc-pair).

  pair.py cut MNT MANIFEST    two processes, one per CPU, each overwrite a
                              page of a file of their own and fsync it, in
                              a loop, until the power is cut
  pair.py fc-cut MNT MANIFEST the same, with fast commits: the cut is asked
                              for once both have made fast records
  pair.py check MNT MANIFEST  every overwrite whose fsync returned is there,
                              each page whole

Process p overwrites page k % PAGES of file f<p> with page(p, k) at its
k-th operation, then fsyncs the file. Side by side, the fsync of one often
finds its change in a transaction the other process is committing, and
waits for that commit: such fsyncs must return only once it is durable.
Every STEP operations a process records on the host (MANIFEST.<p>, which
survives the cut) the last k whose fsync returned. The cut is asked for
once both have done ROUNDS operations and the counters show fsyncs that
waited for another's commit (trans_commit_joined), or with fc-cut fast
records of both (fc_records, at least ROUNDS); they go on meanwhile.
"""

import os
import struct
import sys
import time
from multiprocessing import Process

from vsmfs_test import Counters

PAGE = 4096
PAGES = 64
STEP = 25
ROUNDS = 1500
HDR = struct.Struct("<4sIq")


def page(p, k):
    """The page process @p writes at its @k-th operation, self-describing."""
    head = HDR.pack(b"PAIR", p, k)
    fill = bytes(((k * 131 + p * 17 + i) & 0xff) for i in range(256))
    return (head + fill * (PAGE // 256))[:PAGE]


def note(manifest, p, k):
    """Record on the host that the fsync of operation @k of @p returned."""
    tmp = "%s.%d" % (manifest, p + 2)
    with open(tmp, "w") as m:
        m.write("%d\n" % k)
    os.rename(tmp, "%s.%d" % (manifest, p))


def worker(p, mnt, manifest):
    os.sched_setaffinity(0, {p % os.cpu_count()})
    fd = os.open(os.path.join(mnt, "f%d" % p), os.O_WRONLY)
    k = 0
    while True:
        os.pwrite(fd, page(p, k), (k % PAGES) * PAGE)
        os.fsync(fd)
        if k % STEP == 0:
            note(manifest, p, k)
        k += 1


def cut(mnt, manifest, fast=False):
    for p in (0, 1):
        with open(os.path.join(mnt, "f%d" % p), "wb") as f:
            for k in range(PAGES):
                f.write(page(p, k - PAGES))
        note(manifest, p, -1)
    os.sync()
    counters = Counters(os.environ.get("DEV", "/dev/pmem0"))
    key = "fc_records" if fast else "trans_commit_joined"
    joined0 = counters.read()[key]
    procs = [Process(target=worker, args=(p, mnt, manifest)) for p in (0, 1)]
    for pr in procs:
        pr.start()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        time.sleep(0.2)
        done = []
        for p in (0, 1):
            with open("%s.%d" % (manifest, p)) as m:
                done.append(int(m.read()))
        joined = counters.read()[key] - joined0
        if min(done) >= ROUNDS and joined >= (ROUNDS if fast else 1):
            what = "fast records" if fast else "fsyncs that waited for the other's commit"
            print("operations done %d, %d; %s: %d; "
                  "PERSIST-CUT-NOW" % (done[0], done[1], what, joined), flush=True)
            # Both go on until the power is cut.
            time.sleep(600)
            break
        if any(not pr.is_alive() for pr in procs):
            raise SystemExit("a writer died")
    raise SystemExit("no %s in %d operations each" %
                     ("fast records" if fast else "fsync waited for another's commit", ROUNDS))


def check(mnt, manifest):
    for p in (0, 1):
        with open("%s.%d" % (manifest, p)) as m:
            acked = int(m.read())
        with open(os.path.join(mnt, "f%d" % p), "rb") as f:
            data = f.read()
        if len(data) != PAGES * PAGE:
            raise SystemExit(f"f{p}: {len(data)} bytes, not {PAGES * PAGE}")
        newest = -PAGES
        for s in range(PAGES):
            magic, q, k = HDR.unpack_from(data, s * PAGE)
            if magic != b"PAIR" or q != p:
                raise SystemExit(f"f{p} page {s}: not a page of process {p}")
            got = data[s * PAGE:(s + 1) * PAGE]
            if got != page(p, k) or k % PAGES != s:
                raise SystemExit(f"f{p} page {s}: torn (header says operation {k})")
            # The last operation on this page whose fsync returned.
            want = acked - ((acked - s) % PAGES)
            if k < want:
                raise SystemExit(f"f{p} page {s}: operation {k}, but the fsync of "
                                 f"operation {want} had returned")
            newest = max(newest, k)
        print(f"f{p}: every page whole; fsync'd through operation {acked}, "
              f"newest surviving {newest}", flush=True)


if __name__ == "__main__":
    {"cut": cut, "check": check,
     "fc-cut": lambda m, f: cut(m, f, fast=True)}[sys.argv[1]](sys.argv[2], sys.argv[3])
