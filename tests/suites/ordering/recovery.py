# SPDX-License-Identifier: GPL-2.0
"""Guest side of ordering/005-recovery-crash: crashes during recovery.

  recovery.py short|long [--seed S] [--only NAME,...] [--list] [--keep] [-v]

The instrumented module (build/pmlog/vsmfs.ko) must be loaded. Each
workload of RECOVERY runs on a fresh file system on $VSMFS_PMEM0 as in
ordering.py: set up, sync(2) (the journal empty), copy the device
("base"), turn the log on, run its steps, turn the log off. The steps
leave work for a mount after a crash: committed transactions in the
journal (checkpoint=0, group commit with several fsyncs), garbage
collection and checkpoints of the journal cut short
(checkpoint_threshold=1, a journal of 64 KiB), fast-commit records (an
fsync after overwrites, appends within a page, creates), orphans (files
unlinked while open, a file whose freeing takes several transactions),
and a hot-inode migration. After each step
the tree is digested (ordering.digest()) and a mark written into the log;
a crash image where the marks say d steps had returned must hold the tree
after step d or d + 1 (the next may have committed before its mark). An
open file unlinked is an orphan: the tree expected after a crash is the
one with its inode freed (the free inode count of statfs one higher for
each), which a mount's orphan cleanup must give.

Crash images (first level). The images of a sample of the log's crash
points (FIRST, spread over the log) are written onto the device in turn
and mounted with the log on: the log then holds every store the mount
makes (the log attaches to the device when fill_super has mapped it,
before the superblock, journal recovery and orphan cleanup read or write
anything). The mount must succeed, the tree hold the state the marks
allow, and fsck.vsmfs -n pass after the unmount. What recovery did is read
from the kernel log (blocks replayed, header copies restored, journal
blocks remapped, versions re-flagged, fast-commit records replayed,
orphans freed, truncations finished); an image where it did any of that is "worked".

Crashes during recovery (second level). Up to PER_POINT worked images of
each point taken are cut again: vsmfs-pmreplay replays the log of their
mount over the image itself as base, and at every crash point of
recovery (each fence of the mount, and its end) the images within
SECOND_IMAGES are written onto the device, mounted, digested, unmounted
and checked with fsck.vsmfs -n. Each must mount, pass fsck and hold the
same tree (digest) as the uninterrupted recovery of the same crash image.

The short run (make test) takes two points of each workload (one at
random and the end), the "all" and "none" images of each, and cuts one
worked image per workload; the long run (make crash-recovery) takes every
point, more images of each (single lines, random, values between), and
cuts up to two worked images per point. Each cut takes the "all" and
"none" images of every recovery crash point (identical images once).
A failure names the
workload, the crash image (POINT:SPEC of the workload's log), the
recovery crash image (POINT:SPEC of the mount's log) and what differed;
the workload's base and log, and the crash image and its mount's log,
are kept in build/ordering/ to reproduce it with vsmfs-pmreplay.
"""

import argparse
import importlib.machinery
import os
import random
import re
import shutil
import subprocess
import sys
import time

TOP = os.environ.get("VSMFS_TOP", os.getcwd())
ordering = importlib.machinery.SourceFileLoader(
    "ordering", os.path.join(TOP, "tests", "suites", "ordering", "ordering.py")).load_module()
pmreplay = ordering.pmreplay
MNT, DEV, KIB, MIB = ordering.MNT, ordering.DEV, ordering.KIB, ordering.MIB
KEEP = ordering.KEEP
LOG2 = "/tmp/recovery.pmlog"
SYSFS = f"/sys/fs/vsmfs/{os.path.basename(DEV)}"

# Crash points of the workload's log taken (spread over it, 0: all);
# worked images cut at every crash point of their recovery, per point and
# per workload (0: no limit).
FIRST = {"short": 2, "long": 0}
PER_POINT = {"short": 1, "long": 2}
CUTS = {"short": 1, "long": 0}
# Images of each first-level point (vsmfs-pmreplay bounds and a cap, as
# ordering.py's), and of each recovery crash point.
FIRST_IMAGES = {"short": (0, 0, 0, 2), "long": (2, 1, 1, 4)}
SECOND_IMAGES = {"short": (0, 0, 0, 2), "long": (0, 0, 0, 2)}

# What a mount's recovery says it did (recovery.c, iops.c).
WORK = {
    "replay": re.compile(r"journal: replayed (\d+) blocks"),
    "discard": re.compile(r"journal: discarded (\d+) uncommitted"),
    "hcopy": re.compile(r"journal: restored (\d+) header copies"),
    "remap": re.compile(r"journal: remapped (\d+) journal blocks"),
    "reflag": re.compile(r"journal: re-flagged (\d+) versions"),
    "orphan": re.compile(r"freed (\d+) orphan inode"),
    "trunc": re.compile(r"finished (\d+) interrupted truncation"),
    "fcreplay": re.compile(r"journal: replayed (\d+) fast-commit records"),
}


class Held:
    """Files a workload keeps open across its steps."""
    fds = {}


def hold(path):
    Held.fds[path] = os.open(path, os.O_RDWR)


def release():
    for fd in Held.fds.values():
        os.close(fd)
    Held.fds = {}


def fsync(path):
    ordering.fsync(path)


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sparse(path, pieces):
    """A sparse file of @pieces pages, one in every superpage (2 MiB), so
    that freeing them takes several transactions on a small journal."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for k in range(pieces):
            os.pwrite(fd, b"%4095d\n" % k, k * 2 * MIB)
    finally:
        os.close(fd)


def group_step(*calls):
    """A step of a group commit workload: its calls, one transaction."""
    return lambda m: [c(m) for c in calls]


def hot_write(i, k):
    """Write @k of held file h@i: one transaction."""
    return lambda m: os.pwrite(Held.fds[f"{m}/h{i}"], b"%-63d\n" % k, 64 * k)


def wait_migration(m):
    """Until the aggregation worker has moved an inode (the workload fails
    if it never does)."""
    for _ in range(2400):
        if int(open(f"{SYSFS}/aggregate_migrations").read()):
            return
        time.sleep(0.05)
    raise OSError("no inode migrated into the aggregation window")


def hot_setup(m):
    """Files past the window of 16 slots (the base tree and 20 more before
    them), kept open for writing."""
    for i in range(20):
        ordering.creat(f"{m}/d/e/c{i}")
    for i in range(4):
        ordering.put(f"{m}/h{i}", 4 * KIB, i)
    os.sync()
    for i in range(4):
        hold(f"{m}/h{i}")


def orphan_setup(m):
    ordering.put(f"{m}/d/o1", 64 * KIB, 5)
    ordering.put(f"{m}/d/o2", 5000, 6)
    hold(f"{m}/d/o1")
    hold(f"{m}/d/o2")


# name -> (mkfs journal size, mount options, setup, [(step, orphans it
# makes)]): each step one system call (commit=sync) or a group of calls
# ending in an fsync that commits them in one transaction (commit=300).
RECOVERY = {
    # Committed transactions left in the journal (no checkpoint): replay.
    "journal-sync": ("4M", "commit=sync", None, [
        (lambda m: ordering.creat(f"{m}/d/new"), 0),
        (lambda m: ordering.pwrite(f"{m}/d/new", 0, 8 * KIB), 0),
        (lambda m: os.rename(f"{m}/small", f"{m}/d/e/moved"), 0),
        (lambda m: os.setxattr(f"{m}/f", "user.new", b"v" * 100), 0),
        (lambda m: os.mkdir(f"{m}/d/sub"), 0),
        (lambda m: os.truncate(f"{m}/f", 1000), 0),
        (lambda m: os.unlink(f"{m}/d/g"), 0),
    ]),
    # Group commit: several transactions, each committed by an fsync.
    "journal-group": ("4M", "commit=300,fast_commit=off", None, [
        (group_step(lambda m: ordering.put(f"{m}/d/a", 5000, 7),
                    lambda m: fsync(f"{m}/d/a")), 0),
        (group_step(lambda m: os.rename(f"{m}/small", f"{m}/d/e/moved"),
                    lambda m: os.setxattr(f"{m}/f", "user.g", b"g" * 60),
                    lambda m: fsync(f"{m}/f")), 0),
        (group_step(lambda m: os.mkdir(f"{m}/d/sub"),
                    lambda m: os.symlink("a", f"{m}/d/sl"),
                    lambda m: ordering.append(f"{m}/d/a", 3000),
                    lambda m: fsync(f"{m}/d/a")), 0),
        (group_step(lambda m: os.unlink(f"{m}/empty"),
                    lambda m: ordering.pwrite(f"{m}/f", 4096, 8192, 8),
                    lambda m: fsync(f"{m}/f")), 0),
    ]),
    # Fast commits: overwrites, appends within the last page and changes
    # of attributes, each fsync'd, leave records of the transaction after the last commit,
    # which the mount replays (and commits).
    "fast-commit": ("4M", "commit=300", None, [
        (group_step(lambda m: ordering.pwrite(f"{m}/f", 0, 4 * KIB, 3),
                    lambda m: fsync(f"{m}/f")), 0),
        (group_step(lambda m: ordering.append(f"{m}/d/g", 1000),
                    lambda m: fsync(f"{m}/d/g")), 0),
        # Two records, two steps: the first is durable without the second.
        (group_step(lambda m: ordering.pwrite(f"{m}/f", 8 * KIB, 4 * KIB, 4),
                    lambda m: fsync(f"{m}/f")), 0),
        (group_step(lambda m: ordering.pwrite(f"{m}/small", 100, 200, 5),
                    lambda m: fsync(f"{m}/small")), 0),
        # An append past the pages after small's run (d/g's): the run
        # moves to the pages it takes; the record clears the old run's bits.
        (group_step(lambda m: ordering.append(f"{m}/small", 20 * KIB),
                    lambda m: fsync(f"{m}/small")), 0),
        # Changes of attributes: a record each (the slot's words).
        (group_step(lambda m: os.chmod(f"{m}/small", 0o604), lambda m: fsync(f"{m}/small")), 0),
        (group_step(lambda m: os.chown(f"{m}/small", 12, 34), lambda m: fsync(f"{m}/small")), 0),
        (group_step(lambda m: os.truncate(f"{m}/small", 40 * KIB + 3),
                    lambda m: fsync(f"{m}/small")), 0),
        (group_step(lambda m: os.utime(f"{m}/f", ns=(10**18, 10**18 + 7)),
                    lambda m: fsync(f"{m}/f")), 0),
    ]),
    # Fast commits of creates (and of a rename, a link): empty files made and
    # fsync'd one after the other in two directories, each a record
    # carrying the new inode, its i-number's bit, its entry and the
    # directory's words (a step each: a
    # record is durable on its own), beside a record of an overwrite; the
    # directory's fsync commits nothing; a create in a directory not yet
    # durable commits, the next in it is a record again.
    "fast-create": ("4M", "commit=300", None, [
        (group_step(lambda m: ordering.creat(f"{m}/d/c1"),
                    lambda m: fsync(f"{m}/d/c1")), 0),
        (group_step(lambda m: ordering.creat(f"{m}/c2"), lambda m: fsync(f"{m}/c2")), 0),
        (group_step(lambda m: ordering.pwrite(f"{m}/f", 0, 4 * KIB, 6),
                    lambda m: fsync(f"{m}/f")), 0),
        (group_step(lambda m: ordering.creat(f"{m}/d/c3"), lambda m: fsync(f"{m}/d/c3")), 0),
        (group_step(lambda m: ordering.creat(f"{m}/d/c4"), lambda m: fsync(f"{m}/d/c4"),
                    lambda m: fsync_dir(f"{m}/d")), 0),
        # A rename in the directory to a name not in use: a record.
        (group_step(lambda m: os.rename(f"{m}/d/c1", f"{m}/d/r1"), lambda m: fsync(f"{m}/d/r1")),
         0),
        # A link in another directory: a record.
        (group_step(lambda m: os.link(f"{m}/d/r1", f"{m}/l1"), lambda m: fsync(f"{m}/l1")), 0),
        # A create and a first write into a page of the CPU's pool: a record.
        (group_step(lambda m: ordering.creat(f"{m}/d/c5"),
                    lambda m: ordering.append(f"{m}/d/c5", 300), lambda m: fsync(f"{m}/d/c5")), 0),
        # A new directory, fsync'd: a record; a create in it commits (a
        # new block).
        (group_step(lambda m: os.mkdir(f"{m}/d/m"), lambda m: fsync_dir(f"{m}/d/m")), 0),
        (group_step(lambda m: ordering.creat(f"{m}/d/m/z"), lambda m: fsync(f"{m}/d/m/z")), 0),
        # A directory new in the transaction: the create's fsync commits.
        (group_step(lambda m: os.mkdir(f"{m}/d/n"), lambda m: ordering.creat(f"{m}/d/n/x"),
                    lambda m: fsync(f"{m}/d/n/x")), 0),
        (group_step(lambda m: ordering.creat(f"{m}/d/n/y"), lambda m: fsync(f"{m}/d/n/y")), 0),
    ]),
    # Garbage collection and checkpoint at every commit, in a journal of
    # 64 KiB: header batches, swaps and checkpoints cut short.
    "journal-ckpt": ("64K", "commit=sync,checkpoint_threshold=1", None, [
        (lambda m: ordering.creat(f"{m}/d/new"), 0),
        (lambda m: ordering.pwrite(f"{m}/d/new", 0, 4 * KIB), 0),
        (lambda m: os.rename(f"{m}/small", f"{m}/d/e/moved"), 0),
        (lambda m: os.setxattr(f"{m}/f", "user.new", b"v" * 100), 0),
        (lambda m: os.mkdir(f"{m}/d/sub"), 0),
        (lambda m: ordering.pwrite(f"{m}/f", 8 * KIB, 4 * KIB), 0),
        (lambda m: os.unlink(f"{m}/d/g"), 0),
    ]),
    # Files unlinked while open: orphans at the crash, freed by the mount.
    "orphan-open": ("4M", "commit=sync", orphan_setup, [
        (lambda m: os.unlink(f"{m}/d/o1"), 1),
        (lambda m: os.pwrite(Held.fds[f"{m}/d/o2"], b"w" * 3000, 4000), 0),
        (lambda m: os.unlink(f"{m}/d/o2"), 1),
        (lambda m: os.truncate(f"{m}/f", 5000), 0),
    ]),
    # An unlink whose freeing of a sparse file takes several transactions
    # on this journal: a crash between them leaves an orphan for the mount
    # to free. The truncate to 0 of the other fits in one transaction here
    # (the mount finishes no truncation in these images).
    "truncate-parts": ("64K", "commit=sync", lambda m: (sparse(f"{m}/sp1", 12),
                                                       sparse(f"{m}/sp2", 12)), [
        (lambda m: os.unlink(f"{m}/sp2"), 0),
        (lambda m: os.truncate(f"{m}/sp1", 0), 0),
    ]),
    # Hot-inode aggregation: files kept open and written move into the
    # window (its first 16 slots), two slots and their mapping entries exchanged in one
    # transaction.
    "aggregate": ("4M", "commit=sync,aggregate=on,aggregate_threshold=2,aggregate_window=16", hot_setup,
                  [(hot_write(i, k), 0) for k in range(1, 4) for i in range(4)] +
                  [(wait_migration, 0)] + [(hot_write(i, 4), 0) for i in range(4)]),
}


def kmsg_open():
    """/dev/kmsg, at its end."""
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    os.lseek(fd, 0, os.SEEK_END)
    return fd


def kmsg_read(fd):
    """The kernel's messages since the last call, as text lines."""
    out = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            return out
        except BrokenPipeError:	# overwritten: the next read goes on
            continue
        out.append(rec.decode(errors="replace").partition(";")[2].split("\n")[0])


def work_done(lines):
    """{kind: count} of what recovery said it did."""
    out = {}
    for line in lines:
        for kind, pat in WORK.items():
            m = pat.search(line)
            if m and int(m.group(1)):
                out[kind] = out.get(kind, 0) + int(m.group(1))
    return out


def orphans_freed(tree, orphans):
    """@tree with @orphans more free inodes, as orphan cleanup leaves it."""
    last = tree[-1].split()
    if last[:2] != ["statfs", "ffree"]:
        raise ValueError("a digest ends with the free inode count")
    return tree[:-1] + [f"statfs ffree {int(last[2]) + orphans}"]


def mount_checked(kmsg, log):
    """Mount the image on the device (with the log on if @log), digest,
    unmount, fsck.vsmfs -n. Returns (why or None, tree, recovery work)."""
    kmsg_read(kmsg)
    if log:
        ordering.pmlog("on")
    try:
        err = ordering.mount()
    finally:
        if log:
            ordering.pmlog("off")
    said = kmsg_read(kmsg)
    if err:
        tail = [line for line in said if "vsmfs" in line][-3:]
        return f"mount failed: {err}; " + " | ".join(tail), None, {}
    work = work_done(said)
    try:
        tree = ordering.digest(MNT)
        why = None
    except Exception as e:	# a damaged tree may fail in any way
        tree = None
        why = f"reading the tree failed: {e!r}"
    ordering.umount()
    res = subprocess.run([ordering.FSCK, "-n", DEV], capture_output=True, text=True)
    if res.returncode:
        return "fsck.vsmfs -n: " + " | ".join((res.stdout + res.stderr).splitlines()[:8]), \
            tree, work
    return why, tree, work


def differ(got, want):
    return " | ".join([f"+ {x}" for x in got if x not in want][:4] +
                      [f"- {x}" for x in want if x not in got][:4])


class Totals:
    def __init__(self):
        self.workloads = self.points = self.images = self.worked = 0
        self.cut = self.rpoints = self.rimages = self.failed = 0
        self.work = {}


def keep(name, files):
    os.makedirs(KEEP, exist_ok=True)
    for suffix, what in files.items():
        path = os.path.join(KEEP, f"recovery-{name}.{suffix}")
        if isinstance(what, str):
            shutil.copyfile(what, path)
        else:
            with open(path, "wb") as f:
                f.write(what)


def cut_recovery(name, ident, dev, image, ref, args, tot, kmsg):
    """Every crash point of the recovery of @image (its mount's log in
    LOG2), the images of each mounted in turn: each must recover to @ref.
    Returns the number of failures."""
    log = pmreplay.Log(LOG2)
    singles, nrandom, nmid, cap = SECOND_IMAGES[args.mode]
    orig_base = dev.base
    dev.base = image
    dev.buf[:] = image
    failed = n = points = 0
    seen = set()
    try:
        for p in pmreplay.Replay(image, log).points():
            points += 1
            todo = list(p.images(singles, nrandom, nmid, args.seed, lazy=True))
            if cap and len(todo) > cap:
                rnd = random.Random(f"{args.seed}:{name}:{ident}:{p.name}")
                todo = todo[:2] + sorted(rnd.sample(todo[2:], cap - 2), key=todo.index)
            for spec, kind, make in todo:
                choice = make()
                h, diff = p.image(choice)
                if h in seen:
                    continue
                seen.add(h)
                dev.write_image(diff)
                why, tree, _ = mount_checked(kmsg, False)
                n += 1
                if not why and tree != ref:
                    why = "not the tree of the uninterrupted recovery: " + differ(tree, ref)
                if args.verbose:
                    print(f"    recovery {p.name}:{spec} {kind} units {len(p.units)}: "
                          f"{why or 'ok'}", flush=True)
                if why:
                    failed += 1
                    print(f"FAIL: {name}: crash image {ident}, recovery crash image "
                          f"{p.name}:{spec} ({kind}, units {len(p.units)}, "
                          f"{p.describe(choice)}): {why}", flush=True)
                    if failed == 1:
                        tag = f"{name}.{ident.replace(':', '_')}"
                        keep(tag, {"image": image, "mount.pmlog": LOG2})
    finally:
        dev.base = orig_base
        dev.buf[:] = orig_base
    tot.cut += 1
    tot.rpoints += points
    tot.rimages += n
    return failed, points, n


def run(name, dev, args, tot, kmsg):
    jsize, opts, setup, steps = RECOVERY[name]
    start = time.monotonic()
    subprocess.run([ordering.MKFS, "-q", "-f", "-J", jsize, DEV], check=True)
    err = ordering.mount(f"checkpoint=0,{opts}" if "aggregate=" in opts else
                         f"aggregate=off,checkpoint=0,{opts}")
    if err:
        raise OSError(f"{name}: mount of the fresh file system: {err}")
    failed = 0
    try:
        ordering.base_tree(MNT)
        if setup:
            setup(MNT)
        # Everything so far home and the journal empty: what a mount after
        # a crash recovers is the steps' doing.
        os.sync()
        orphans = 0
        states = [ordering.digest(MNT)]
        dev.capture()
        ordering.pmlog("on")
        mark = os.open(ordering.MARKFILE, os.O_WRONLY)
        try:
            for i, (step, made) in enumerate(steps, 1):
                step(MNT)
                orphans += made
                states.append(orphans_freed(ordering.digest(MNT), orphans))
                os.write(mark, str(i).encode())
        finally:
            os.close(mark)
            ordering.pmlog("off")
        release()
        if ordering.digest(MNT) != states[-1]:
            raise OSError(f"{name}: the tree once the files are closed is not the one "
                          "expected with the orphans freed")
    finally:
        release()
        ordering.umount()
    shutil.copyfile(ordering.DATA, ordering.LOGFILE)
    log = pmreplay.Log(ordering.LOGFILE)
    marks = sorted(i for i, _, _, _ in log.marks)
    if len(marks) != len(steps):
        raise OSError(f"{name}: {len(marks)} marks in the log for {len(steps)} steps")
    select = ordering.sample(log, FIRST[args.mode], args.seed, f"recovery:{name}")
    singles, nrandom, nmid, cap = FIRST_IMAGES[args.mode]
    seen = set()
    points = images = worked = cut = rpoints = rimages = 0
    for p in pmreplay.Replay(dev.base, log).points():
        if select and not select(p):
            continue
        points += 1
        done = sum(1 for i in marks if i < p.pos)
        todo = list(p.images(singles, nrandom, nmid, args.seed, lazy=True))
        if cap and len(todo) > cap:
            rnd = random.Random(f"{args.seed}:{name}:{p.name}")
            todo = todo[:2] + sorted(rnd.sample(todo[2:], cap - 2), key=todo.index)
        taken = 0
        for spec, kind, make in todo:
            choice = make()
            h, diff = p.image(choice)
            if h in seen:
                continue
            seen.add(h)
            ident = f"{p.name}:{spec}"
            dev.write_image(diff)
            why, tree, work = mount_checked(kmsg, True)
            images += 1
            if not why and tree not in states[done:done + 2]:
                at = [i for i, s in enumerate(states) if s == tree]
                why = f"{done} of {len(steps)} steps had returned, the tree is " + \
                    (f"the one after {at[0]}" if at else
                     "none of theirs: " + differ(tree, states[min(done + 1, len(steps))]))
            if args.verbose:
                print(f"  {ident} {kind} units {len(p.units)} steps {done} work {work}: "
                      f"{why or 'ok'}", flush=True)
            if why:
                failed += 1
                print(f"FAIL: {name}: crash image {ident} ({kind}, units {len(p.units)}, "
                      f"{p.describe(choice)}): {why}", flush=True)
                continue
            if not work:
                continue
            worked += 1
            for k, v in work.items():
                tot.work[k] = tot.work.get(k, 0) + 1
            if taken >= PER_POINT[args.mode] or cut >= (CUTS[args.mode] or cut + 1):
                continue
            taken += 1
            shutil.copyfile(ordering.DATA, LOG2)
            image = bytearray(dev.base)
            for line, content in diff.items():
                image[line:line + pmreplay.LINE] = content
            f, rp, rn = cut_recovery(name, ident, dev, bytes(image), tree, args, tot, kmsg)
            failed += f
            cut += 1
            rpoints += rp
            rimages += rn
    # The device as before the log, mounted once: clean for what follows.
    dev.write_image({})
    if ordering.mount() is None:
        ordering.umount()
    if failed or args.keep:
        keep(name, {"base": dev.base, "pmlog": ordering.LOGFILE})
    tot.workloads += 1
    tot.points += points
    tot.images += images
    tot.worked += worked
    tot.failed += failed
    print(f"{name:16s} {log.fences:5d} fences {points:3d} points {images:4d} images "
          f"{worked:4d} worked; {cut:3d} cut at {rpoints:4d} recovery crash points, "
          f"{rimages:5d} recovery images; {failed} failed  {time.monotonic() - start:.0f}s",
          flush=True)
    if not cut:
        tot.failed += 1
        print(f"FAIL: {name}: no crash image taken made recovery do any work", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["short", "long"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--keep", action="store_true",
                    help="keep every base and log in build/ordering")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per crash image")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(RECOVERY)
    if args.list:
        print("\n".join(names))
        return 0
    dev = ordering.Device(DEV)
    kmsg = kmsg_open()
    tot = Totals()
    start = time.monotonic()
    for name in names:
        run(name, dev, args, tot, kmsg)
    print(f"{args.mode} run, seed {args.seed}: {tot.workloads} workloads, {tot.points} crash "
          f"points, {tot.images} crash images ({tot.worked} made recovery work: "
          f"{', '.join(f'{k} {v}' for k, v in sorted(tot.work.items()))}); "
          f"{tot.cut} cut at {tot.rpoints} recovery crash points, {tot.rimages} recovery "
          f"crash images; {tot.failed} failed; {time.monotonic() - start:.0f}s", flush=True)
    return 1 if tot.failed else 0


if __name__ == "__main__":
    sys.exit(main())
