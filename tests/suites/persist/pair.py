#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fsyncs of two CPUs across a power cut (persist/015-fsync-pair,
persist/016-fc-pair, persist/017-fc-create, persist/018-fc-append,
persist/019-fc-migrate, persist/021-fc-unlink).

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
                              carried creates of both and fsyncs waited
                              for commits in flight before theirs; the
                              power is cut while they go on
  pair.py create-check MNT MANIFEST  every file whose fsync returned is
                              there with its contents, name and mode, and
                              every file there is one they made
  pair.py append-cut MNT MANIFEST  two processes, one per CPU, append to
                              three streams of files of their own in turn
                              (small files, a new one every GEN appends,
                              and a large one), an fsync after each append,
                              until fast records carried appends of both;
                              the power is cut while they go on
  pair.py append-check MNT MANIFEST  each file is its first bytes and then
                              whole appends in order, every one whose fsync
                              returned among them, and no other file
  pair.py migrate-cut MNT MANIFEST  one process creates MFILES files, syncs,
                              then appends MCHUNK bytes to each in rounds,
                              each append fsync'd, until hot-inode
                              aggregation moved a file to another slot, and
                              MROUNDS more rounds; the power is cut
                              meanwhile
  pair.py migrate-check MNT MANIFEST  each file whole appends in order,
                              those of every round whose fsyncs returned
  pair.py unlink-cut MNT MANIFEST  two processes, one per CPU, each in a
                              directory of its own, unlink the file they
                              created KEEP operations before (some held
                              open), then create a file with data and
                              fsync it, until fast records carried such
                              creates of both; the power is cut while they
                              go on
  pair.py unlink-check MNT MANIFEST  each directory holds what a prefix of
                              its process's operations left, through the
                              last create whose fsync returned

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


def fc_cut(target, mnt, manifest, what, need, extra, fc_bytes=0, waits=0):
    """Run @target (p, mnt, manifest) for p = 0, 1 until both noted
    @need operations and fast records are at least @need (and, @fc_bytes,
    their bytes at least that, with no fsync committing for want of room
    in the areas meanwhile; @waits: fsyncs that waited for a commit in
    flight before their record, fc_waits, at least that), then ask for the
    power cut, printing the
    counters @extra names (their moves since the start) beside the count
    of operations called @what; the workers go on until the cut."""
    counters = Counters(os.environ.get("DEV", "/dev/pmem0"))
    keys = ["fc_records", "fc_fallbacks", "journal_fc_bytes"] + extra
    c0 = counters.read()
    procs = [Process(target=target, args=(p, mnt, manifest)) for p in (0, 1)]
    for pr in procs:
        pr.start()
    deadline = time.monotonic() + 600
    why = "no %d fast records in %d %s each" % (need, need, what)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        done = acked(manifest)
        c = counters.read()
        moved = {k: c[k] - c0[k] for k in keys}
        if fc_bytes and c["fc_fallback_full"] > c0["fc_fallback_full"]:
            why = "an fsync committed for want of room, after %d bytes of records" % \
                moved["journal_fc_bytes"]
            break
        if min(done) >= need and moved["fc_records"] >= need and \
                moved["journal_fc_bytes"] >= fc_bytes and \
                (not waits or moved["fc_waits"] >= waits):
            print("%s done %d, %d; %s; PERSIST-CUT-NOW" %
                  (what, done[0], done[1], ", ".join("%s %d" % kv for kv in moved.items())),
                  flush=True)
            time.sleep(600)
            break
        if any(not pr.is_alive() for pr in procs):
            why = "a worker died"
            break
    # The workers would keep this process from exiting.
    for pr in procs:
        pr.kill()
    raise SystemExit(why)


def create_cut(mnt, manifest):
    os.mkdir(os.path.join(mnt, "c"))
    for p in (0, 1):
        note(manifest, p, -1)
    os.sync()
    # The commits of creates whose directory changed otherwise find the
    # other process's fsyncs waiting for them, then writing their records.
    fc_cut(creator, mnt, manifest, "creates", CREATES, ["trans_commits", "fc_waits"],
           waits=20)


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


# Appends: process p's k-th is the n-th (n = k // 3) of its stream
# j = k % 3, alen(j, n) bytes, self-describing (AHDR: p, k, length).
# Stream "s" takes appends within the last page and across it, "w" whole
# pages, one or two at a time, each into a new file every GEN appends
# ("<s|w><p>.<g>"), so that files stay small (a small file's first run,
# then pages reserved after it); stream "t" appends to one file that
# starts large (BIG bytes), in pages of the tail its superpage keeps.
FILES = "swt"
GEN = 40
BIG = (1 << 20) + 1000
AHDR = struct.Struct("<4sIqI")


def alen(j, n):
    if j == 0:
        return (100, 3000, 5000, 700, 4096)[n % 5] + n % 7
    if j == 1:
        return PAGE * (1 + n % 2)
    return (PAGE, 5000, 3 * PAGE - 24)[n % 3]


def achunk(p, k):
    n = alen(k % 3, k // 3)
    head = AHDR.pack(b"APND", p, k, n)
    fill = bytes(((k * 61 + p * 29 + i) & 0xff) for i in range(256))
    return (head + fill * (n // 256 + 1))[:n]


def abig(p):
    return bytes(((p * 7 + i) * 13) & 0xff for i in range(256)) * (BIG // 256) + b"T" * (BIG % 256)


def aname(p, j, g=0):
    return "t%d" % p if j == 2 else "%s%d.%d" % (FILES[j], p, g)


def appender(p, mnt, manifest):
    os.sched_setaffinity(0, {p % os.cpu_count()})
    fds = [None, None, os.open(os.path.join(mnt, aname(p, 2)), os.O_WRONLY | os.O_APPEND)]
    k = 0
    while True:
        j, n = k % 3, k // 3
        if j < 2 and n % GEN == 0:
            if fds[j] is not None:
                os.close(fds[j])
            fds[j] = os.open(os.path.join(mnt, aname(p, j, n // GEN)),
                             os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fds[j], achunk(p, k))
        os.fsync(fds[j])
        if k % STEP == 0:
            note(manifest, p, k)
        k += 1


def append_cut(mnt, manifest):
    for p in (0, 1):
        with open(os.path.join(mnt, aname(p, 2)), "wb") as f:
            f.write(abig(p))
        note(manifest, p, -1)
    os.sync()
    fc_cut(appender, mnt, manifest, "appends", ROUNDS // 2, ["write_shared_appends"])


def append_file(path, data, at, p, ks, acked):
    """@data from byte @at holds whole appends @ks[0], @ks[1], ... in
    order, every one through @acked among them. Return: how many."""
    m = 0
    while at < len(data):
        if m == len(ks):
            raise SystemExit(f"{path}: {len(data) - at} bytes past its last append")
        want = achunk(p, ks[m])
        if data[at:at + len(want)] != want:
            magic, q, k, n = AHDR.unpack_from(data + bytes(AHDR.size), at)
            raise SystemExit(f"{path}: at byte {at}, not the whole append {ks[m]} of "
                             f"{len(want)} bytes ({len(data) - at} bytes left, header "
                             f"{magic!r} {q} {k} {n})")
        at += len(want)
        m += 1
    if m < len(ks) and ks[m] <= acked:
        raise SystemExit(f"{path}: {m} appends, but the fsync of append {ks[m]} had returned")
    return m


def append_check(mnt, manifest):
    names = set(os.listdir(mnt)) - {"lost+found"}
    for p in (0, 1):
        with open("%s.%d" % (manifest, p)) as m:
            acked = int(m.read())
        path = os.path.join(mnt, aname(p, 2))
        with open(path, "rb") as f:
            data = f.read()
        if data[:BIG] != abig(p):
            raise SystemExit(f"{path}: its first {BIG} bytes changed")
        names.discard(aname(p, 2))
        # Enough of stream 2's appends for any that can have made it.
        ks = list(range(2, 3 * (len(data) // PAGE + 2) + acked + 3, 3))
        m = append_file(path, data, BIG, p, ks, acked)
        print(f"{path}: {len(data)} bytes, whole appends through {ks[m - 1] if m else '-'}; "
              f"fsync'd through {acked}", flush=True)
        for j in (0, 1):
            g = files = 0
            while True:
                name = aname(p, j, g)
                ks = [3 * n + j for n in range(g * GEN, (g + 1) * GEN)]
                if name not in names:
                    if ks[0] <= acked:
                        raise SystemExit(f"{mnt}/{name}: gone, but the fsync of its "
                                         f"append {ks[0]} had returned")
                    break
                names.discard(name)
                with open(os.path.join(mnt, name), "rb") as f:
                    append_file(os.path.join(mnt, name), f.read(), 0, p, ks, acked)
                files += 1
                g += 1
            print(f"{mnt}/{FILES[j]}{p}.*: {files} files, each whole appends in order, "
                  f"every fsync'd one there", flush=True)
    if names:
        raise SystemExit(f"{mnt}: files no appender made: {sorted(names)[:5]}")


MFILES = 4
MCHUNK = 30
MROUNDS = 2


def mchunk(i, r):
    """Append @r to file m<i>: bytes of its own."""
    return bytes(((r * 31 + i * 7 + b) & 0xff) for b in range(MCHUNK))


def migrate_cut(mnt, manifest):
    """Small appends, each fsync'd, until aggregation moved a file, then
    MROUNDS more rounds: their fast records must not name the slot the
    move gave it, which is not the one the last commit (the sync after the
    creates) left in the inode map. The appends stay in the files' first
    page: none of them commits."""
    # I-numbers from the second CPU's region, past the window of hot slots.
    os.sched_setaffinity(0, {1})
    counters = Counters(os.environ.get("DEV", "/dev/pmem0"))
    fds = [os.open(os.path.join(mnt, "m%d" % i), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
           for i in range(MFILES)]
    note(manifest, 0, -1)
    os.sync()
    c0 = counters.read()
    moved = None
    for r in range(PAGE // MCHUNK - 1):
        for i, fd in enumerate(fds):
            os.write(fd, mchunk(i, r))
            os.fsync(fd)
        note(manifest, 0, r)
        c = counters.read()
        if moved is None and c["aggregate_migrations"] > c0["aggregate_migrations"]:
            moved = r
        if moved is not None and r == moved + MROUNDS:
            print("a file moved by round %d; rounds fsync'd through %d; since the sync: "
                  "fc_records %d, fc_fallbacks %d, trans_commits %d, aggregate_migrations %d; "
                  "PERSIST-CUT-NOW" %
                  (moved, r, c["fc_records"] - c0["fc_records"],
                   c["fc_fallbacks"] - c0["fc_fallbacks"],
                   c["trans_commits"] - c0["trans_commits"],
                   c["aggregate_migrations"] - c0["aggregate_migrations"]), flush=True)
            time.sleep(600)
        # The worker moves a file a tenth of a second after it turned hot.
        time.sleep(0.02)
    raise SystemExit("no file moved in %d rounds" % (PAGE // MCHUNK - 1))


def migrate_check(mnt, manifest):
    with open("%s.0" % manifest) as m:
        acked = int(m.read())
    names = sorted(set(os.listdir(mnt)) - {"lost+found"})
    if names != ["m%d" % i for i in range(MFILES)]:
        raise SystemExit(f"{mnt}: {names}, not the {MFILES} files m*")
    for i in range(MFILES):
        path = os.path.join(mnt, "m%d" % i)
        with open(path, "rb") as f:
            data = f.read()
        n, rest = divmod(len(data), MCHUNK)
        if rest or data != b"".join(mchunk(i, r) for r in range(n)):
            raise SystemExit(f"{path}: {len(data)} bytes, not whole appends in order")
        if n <= acked:
            raise SystemExit(f"{path}: {n} appends, but the fsyncs of round {acked} had returned")
    print(f"{MFILES} files, whole appends in order, every round fsync'd ({acked}) there",
          flush=True)


# Unlinks: process p works in directory u<p>; its k-th operation unlinks
# f<k - KEEP> (k >= KEEP), then creates f<k> with ucontent(p, k) and
# fsyncs it. Every HOLD-th file is held open across its unlink, until the
# next such one: an orphan whenever the cut comes.
KEEP = 5
HOLD = 7
FC_AREA = 32 * PAGE     # mkfs's fast-commit area


def ucontent(p, k):
    """What process @p writes into f<k>: 60 to 4,000 bytes."""
    return ((b"%d.%d|" % (p, k)) * 500)[:60 + (k * 397) % 3940]


def unlinker(p, mnt, manifest):
    os.sched_setaffinity(0, {p % os.cpu_count()})
    d = os.path.join(mnt, "u%d" % p)
    held = None
    k = 0
    while True:
        if k >= KEEP:
            victim = os.path.join(d, "f%d" % (k - KEEP))
            if (k - KEEP) % HOLD == 0:
                if held is not None:
                    os.close(held)
                held = os.open(victim, os.O_RDONLY)
            os.unlink(victim)
        fd = os.open(os.path.join(d, "f%d" % k), os.O_CREAT | os.O_WRONLY, 0o600)
        os.write(fd, ucontent(p, k))
        os.fsync(fd)
        os.close(fd)
        if k % STEP == 0:
            note(manifest, p, k)
        k += 1


def unlink_cut(mnt, manifest):
    for p in (0, 1):
        os.mkdir(os.path.join(mnt, "u%d" % p))
        note(manifest, p, -1)
    os.sync()
    # Records of three areas' bytes or more: a CPU's area full, they go
    # on in the next ones, none falls back for want of room.
    fc_cut(unlinker, mnt, manifest, "unlinks", CREATES,
           ["trans_commits", "fc_fallback_dir", "fc_fallback_full"], fc_bytes=3 * FC_AREA)


def unlink_check(mnt, manifest):
    """What survives of a process is a prefix of its operations: the files
    of the last KEEP creates (KEEP - 1 if the cut came between an unlink
    and the create after it) or all of them, the last one with its content
    or empty (a commit between its create and its write), the others whole,
    through the last create whose fsync returned at least: the unlinks
    before that create are durable with it."""
    for p in (0, 1):
        with open("%s.%d" % (manifest, p)) as m:
            acked = int(m.read())
        d = os.path.join(mnt, "u%d" % p)
        names = os.listdir(d)
        if any(not n.startswith("f") or not n[1:].isdigit() for n in names):
            raise SystemExit(f"{d}: {sorted(names)}: not only files f<k>")
        ks = sorted(int(n[1:]) for n in names)
        if not ks:
            raise SystemExit(f"{d}: empty, but the fsync of f{acked} had returned")
        last = ks[-1]
        if last < acked:
            raise SystemExit(f"{d}: f{last} the last file, but the fsync of f{acked} had returned")
        if ks != list(range(last - len(ks) + 1, last + 1)) or \
                len(ks) not in (min(KEEP, last + 1), min(KEEP - 1, last)):
            raise SystemExit(f"{d}: files {ks}: not those of a prefix of the operations "
                             f"(the last {KEEP} creates)")
        for k in ks:
            path = os.path.join(d, "f%d" % k)
            st = os.stat(path)
            with open(path, "rb") as f:
                data = f.read()
            if st.st_nlink != 1 or (data != ucontent(p, k) and (k != last or data)):
                raise SystemExit(f"{path}: {len(data)} bytes, {st.st_nlink} links: "
                                 "not as created")
        print(f"process {p}: files f{ks[0]}..f{last}, fsync'd through f{acked}: "
              "a prefix of its operations", flush=True)


if __name__ == "__main__":
    {"cut": cut, "check": check,
     "fc-cut": lambda m, f: cut(m, f, fast=True),
     "create-cut": create_cut, "create-check": create_check,
     "append-cut": append_cut, "append-check": append_check,
     "migrate-cut": migrate_cut, "migrate-check": migrate_check,
     "unlink-cut": unlink_cut, "unlink-check": unlink_check}[sys.argv[1]](sys.argv[2],
                                                                        sys.argv[3])
