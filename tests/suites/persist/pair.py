#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fsyncs of two CPUs across a power cut (persist/015-fsync-pair,
persist/016-fc-pair, persist/017-fc-create).

  pair.py cut MNT MANIFEST    two processes, one per CPU, each overwrite a
                              page of a file of their own and fsync it, in
                              a loop, until the power is cut
  pair.py fc-cut MNT MANIFEST the same, with fast commits: the cut is asked
                              for once both have made fast records
  pair.py check MNT MANIFEST  every overwrite whose fsync returned is there,
                              each page whole
  pair.py create-cut MNT MANIFEST  two processes, one per CPU, create files
                              (every other one written) in one directory,
                              each fsync'd, then some chmod'ed or renamed in
                              it and fsync'd again, until fast records
                              carried creates of both; the power is cut
                              while they go on
  pair.py create-check MNT MANIFEST  every file whose fsync returned is
                              there with its contents, name and mode, and
                              every file there is one they made

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
CREATES = 400
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


def acked(manifest):
    """The last operation of each process whose fsync returned, as noted."""
    done = []
    for p in (0, 1):
        with open("%s.%d" % (manifest, p)) as m:
            done.append(int(m.read()))
    return done


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
        done = acked(manifest)
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


def content(p, k):
    """What process @p writes into its odd @k-th new file."""
    return (b"%d:%d;" % (p, k)) * 12


def final(p, k):
    """The name and mode process @p leaves its @k-th file with."""
    return "p%d-%d%s" % (p, k, ".r" if k % 4 == 3 else ""), 0o640 if k % 4 == 1 else 0o600


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def creator(p, mnt, manifest):
    """Create file c/p<p>-<k>, empty or (odd k) with content(), and fsync
    it, k = 0, 1, ...; then chmod it to 0640 (k % 4 == 1) or rename it to
    c/p<p>-<k>.r (k % 4 == 3), and fsync it again."""
    os.sched_setaffinity(0, {p % os.cpu_count()})
    k = 0
    while True:
        path = os.path.join(mnt, "c", "p%d-%d" % (p, k))
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        if k % 2:
            os.write(fd, content(p, k))
        os.fsync(fd)
        os.close(fd)
        if k % 4 == 1:
            os.chmod(path, 0o640)
            fsync_path(path)
        elif k % 4 == 3:
            os.rename(path, path + ".r")
            fsync_path(path + ".r")
        if k % STEP == 0:
            note(manifest, p, k)
        k += 1


def create_cut(mnt, manifest):
    os.mkdir(os.path.join(mnt, "c"))
    for p in (0, 1):
        note(manifest, p, -1)
    os.sync()
    counters = Counters(os.environ.get("DEV", "/dev/pmem0"))
    c = counters.read()
    recs0, fall0, commits0 = c["fc_records"], c["fc_fallbacks"], c["trans_commits"]
    procs = [Process(target=creator, args=(p, mnt, manifest)) for p in (0, 1)]
    for pr in procs:
        pr.start()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        time.sleep(0.2)
        done = acked(manifest)
        c = counters.read()
        recs = c["fc_records"] - recs0
        if min(done) >= CREATES and recs >= CREATES:
            print("creates done %d, %d; fast records: %d, fallbacks %d, commits %d; "
                  "PERSIST-CUT-NOW" % (done[0], done[1], recs, c["fc_fallbacks"] - fall0,
                                       c["trans_commits"] - commits0), flush=True)
            time.sleep(600)
            break
        if any(not pr.is_alive() for pr in procs):
            raise SystemExit("a creator died")
    raise SystemExit("no %d fast records in %d creates each" % (CREATES, CREATES))


def create_check(mnt, manifest):
    names = set(os.listdir(os.path.join(mnt, "c")))
    for p in (0, 1):
        with open("%s.%d" % (manifest, p)) as m:
            acked = int(m.read())
        for k in range(acked + 1):
            name, mode = final(p, k)
            path = os.path.join(mnt, "c", name)
            if name not in names:
                raise SystemExit(f"{path}: its fsync had returned, but it is gone")
            with open(path, "rb") as f:
                if f.read() != (content(p, k) if k % 2 else b""):
                    raise SystemExit(f"{path}: its fsync had returned, but not its content")
            if os.stat(path).st_mode & 0o7777 != mode:
                raise SystemExit(f"{path}: its fsync had returned, but not its mode {mode:o}")
        print(f"process {p}: creates fsync'd through {acked}, all there", flush=True)
    for name in names:
        path = os.path.join(mnt, "c", name)
        st = os.stat(path)
        p, _, k = name[1:].removesuffix(".r").partition("-")
        with open(path, "rb") as f:
            data = f.read()
        # Made but not synced: the write, the chmod, the rename may not
        # have made it; a file has one name.
        if (not name.startswith(("p0-", "p1-")) or st.st_nlink != 1 or
                (name.endswith(".r") and int(k) % 4 != 3) or
                (name.endswith(".r") and name[:-2] in names) or
                st.st_mode & 0o7777 not in ((0o600, 0o640) if int(k) % 4 == 1 else (0o600,)) or
                data not in (b"", content(int(p), int(k)) if int(k) % 2 else b"")):
            raise SystemExit(f"c/{name}: not a file the creators made (size {st.st_size}, "
                             f"links {st.st_nlink}, mode {st.st_mode:o})")
    print(f"{len(names)} files, each as created", flush=True)


if __name__ == "__main__":
    {"cut": cut, "check": check,
     "fc-cut": lambda m, f: cut(m, f, fast=True),
     "create-cut": create_cut, "create-check": create_check}[sys.argv[1]](sys.argv[2],
                                                                        sys.argv[3])
