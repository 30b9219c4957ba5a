# SPDX-License-Identifier: GPL-2.0
"""Guest side of the ordering group: single-operation and concurrent
workloads checked at the crash points of their persistence-ordering log.

  ordering.py short|long [--seed S] [--workloads single|concurrent|all]
              [--only NAME,...] [--list] [--keep] [-v]

The instrumented module (build/pmlog/vsmfs.ko) must be loaded. It logs
every store to PM, cached or not, with the CPU and task that made it, so
the crash images include lines written back early by the cache, and a
flush is durable only after a fence on its CPU or by its task (see
tools/vsmfs-pmreplay).

Single operations (WORKLOADS). For each, on a fresh file system on
$VSMFS_PMEM0: mount, set up, take the digest of the tree ("pre"), copy the
device ("base"), turn the log on, run the one operation, turn the log off,
take the digest again ("post") and unmount (in the long run the unmount is
logged too). Then tools/vsmfs-pmreplay builds the crash images of the log,
and each one is written onto the device, mounted (recovery), digested,
unmounted and checked with fsck.vsmfs -n. The workloads mount with
commit=sync, where every operation commits before it returns, so each
image must mount, pass fsck and hold the pre or the post tree; an image of
a crash after the operation returned must hold the post tree. With the
option set "group" (commit=300) the operation joins the running
transaction and a sync(2) after it commits it: the same holds, with the
end of the sync as the return.

A digest is, for every name under the mount point: type, permissions,
link count, owner, size, modification and change times, contents (hash),
symlink target, attribute flags (lsattr) and extended attributes; and the
free inode count of
statfs. Not the free block count: a write that starts a large run reserves
the rest of its superpage and gives back what it did not use in a
transaction of its own, so a crash in between holds the post tree with
the reservation still made (kept on PM, given back later).

Concurrent workloads (CONCURRENT). Two tasks (processes), each pinned to a
CPU of its own, run their operations at the same time, each started
together: in directories of their own, in one directory, on one file.
In conc-attrs@group (commit=300) each links, renames, truncates and
changes the attributes of its files (mode, owners, times, extended
attributes, flags) and unlinks one with data, in shared handles, each operation made durable by an fsync; in conc-appends@group
each appends pages to its files (a large file's reserved tail, given back
at its close, and a small file's run grown), each append fsync'd; in conc-grow@group each creates files in a directory
whose block is full (the first create takes a new block), each fsync'd; in conc-unwritten@group each writes over pages
of its files fallocate left unwritten, each write fsync'd; in conc-falloc@group
each preallocates pages of its files (after a small file's run, past its end,
a large file's superpage), each fallocate fsync'd; in conc-overwrite@group each
overwrites pages of its file again and again, each write fsync'd, into the old
frames the commits gave back to its CPU's page pool; in conc-recycle@group each
deletes and truncates files and writes new ones, each operation fsync'd,
into the pages the commits freed and gave back to the page pools. In conc-migrate four tasks write large files and the parent moves them
between the CPUs every millisecond; the summary line counts the lines
that only the rule "a fence by the same task" made durable (a task that
moved between its flush and its fence). A move inside a commit needs the
task to have been switched out in its transaction (vsmfs_vsp_exit()
moves it then), which the scheduler decides: the count may be 0. After each operation a task takes its view (the
names and data it alone changes, with times) and writes a mark into the
log (debugfs pmlog_mark: task << 32 | operations returned). At a crash
point where the marks say task t had returned from d of its operations,
an image must mount, pass fsck, leave the names no task owns as they were,
and hold for each task its view after d operations, or after d + 1 (the
next one may have committed before its mark). The journal counters show
commits in flight together; the run fails if none was pipelined (placed
while the next transaction changed DRAM) or waited for its turn.

The short run takes the single operations but SHORT_SKIP and KNOWN, a few
again with checkpoint_threshold=1 (journal GC and checkpoint at every
commit), and every concurrent workload; per crash point the images of
vsmfs-pmreplay within SHORT_IMAGES (single lines of each kind, random
images of each kind, values between per line, and a cap on the images per
point, kept by a seeded sample), at every crash point of a single
operation and at CONC_SHORT_POINTS of a concurrent one (one at random in
each equal stretch of the log, and the end). The long run takes every
workload with every set of OPTION_SETS (CONC_OPTION_SETS for the
concurrent ones), adds the unmount to the log, and checks every crash
point within LONG_IMAGES (CONC_LONG_IMAGES; both cap the images per point
by a seeded sample), or LONG_POINTS of them with fewer images each in a
workload of more points. A failure names the
workload, the crash image (POINT:SPEC, as vsmfs-pmreplay takes it) and
the lines lost or left at a value between; the base and log of a failing
workload are kept in build/ordering/ to reproduce it.

Negative controls (EXPECT_FAIL): workloads run with a test aid of the
instrumented module that makes a store deliberately misordered
(pmlog_misorder_sb: a torn superblock update; pmlog_remote_fence: the
fence before each commit record made on another CPU than the one that
flushed the journal writes it orders). Each must have a crash image the
check rejects with the failure it names (the short run stops at the
first); it is reported as a failure if none is found, so a checker that
went blind is seen. Failures that match an entry of KNOWN_ISSUES are
reported as known and not counted. Of the expected and known failures of
a workload the first is shown, the others counted on its summary line.
"""

import argparse
import ctypes
import errno
import fcntl
import hashlib
import importlib.machinery
import json
import mmap
import multiprocessing
import os
import random
import re
import shutil
import stat
import struct
import subprocess
import sys
import time

TOP = os.environ.get("VSMFS_TOP", os.getcwd())
DEV = os.environ.get("VSMFS_PMEM0", "/dev/pmem0")
MNT = "/mnt/vsmfs"
MKFS = os.path.join(TOP, "tools", "mkfs.vsmfs")
FSCK = os.path.join(TOP, "tools", "fsck.vsmfs")
KEEP = os.path.join(TOP, "build", "ordering")
CTL = "/sys/kernel/debug/vsmfs/pmlog"
DATA = "/sys/kernel/debug/vsmfs/pmlog_data"
MARKFILE = "/sys/kernel/debug/vsmfs/pmlog_mark"
LOGFILE = "/tmp/ordering.pmlog"
TASKFILE = "/tmp/ordering.task"
# commit=sync: each operation is committed before it returns, which the
# checks of an image after the operation rely on; the option set "group"
# checks group commit.
WORK_OPTS = "aggregate=off,checkpoint=0,commit=sync"
MS_RDONLY, MS_REMOUNT, MS_NOATIME = 0x1, 0x20, 0x400
PARAMS = "/sys/module/vsmfs/parameters"
KIB, MIB = 1 << 10, 1 << 20
BLKFLSBUF = 0x1261

pmreplay = importlib.machinery.SourceFileLoader(
    "pmreplay", os.path.join(TOP, "tools", "vsmfs-pmreplay")).load_module()
libc = ctypes.CDLL(None, use_errno=True)


def mount(opts=None):
    """mount(2) with noatime: None, or the errno name."""
    if libc.mount(DEV.encode(), MNT.encode(), b"vsmfs", MS_NOATIME,
                  opts.encode() if opts else None) != 0:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    return None


def remount(ro):
    """Remount read-only or read-write."""
    flags = MS_REMOUNT | MS_NOATIME | (MS_RDONLY if ro else 0)
    if libc.mount(DEV.encode(), MNT.encode(), b"vsmfs", flags, None) != 0:
        raise OSError(ctypes.get_errno(), f"remount {MNT} {'ro' if ro else 'rw'}")


def set_param(name, value):
    with open(os.path.join(PARAMS, name), "w") as f:
        f.write(str(value))


def umount():
    if libc.umount2(MNT.encode(), 0) != 0:
        raise OSError(ctypes.get_errno(), f"umount {MNT}")


def pmlog(cmd):
    with open(CTL, "w") as f:
        f.write(cmd)


def pmlog_state():
    with open(CTL) as f:
        return dict(line.split(" ", 1) for line in f.read().splitlines())


FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_NODUMP_FL = 0x40


def attr_flags(path):
    """The attribute flags (lsattr) of a regular file or directory @path,
    as a part of its digest line; nothing for other types."""
    if os.path.islink(path) or not (os.path.isfile(path) or os.path.isdir(path)):
        return ""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        buf = fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 8)
    finally:
        os.close(fd)
    return f" flags {struct.unpack('=l', buf[:4])[0]:x}"


def chattr(path, add):
    """Add the attribute flags @add to @path (chattr +), one ioctl."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        buf = fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 8)
        flags = struct.unpack("=l", buf[:4])[0] | add
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("=l", flags) + b"\0" * 4)
    finally:
        os.close(fd)


def digest(root):
    """The tree under @root as a list of lines (see the top of the file)."""
    out = []
    seen = set()
    todo = [root]
    while todo:
        dirpath = todo.pop(0)
        st = os.lstat(dirpath)
        if st.st_ino in seen:
            raise OSError(f"directory {dirpath} met twice: the tree has a cycle")
        seen.add(st.st_ino)
        names = sorted(os.listdir(dirpath))
        todo += [os.path.join(dirpath, n) for n in names
                 if stat.S_ISDIR(os.lstat(os.path.join(dirpath, n)).st_mode)]
        for name in ([""] if dirpath == root else []) + names:
            path = os.path.join(dirpath, name) if name else dirpath
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            what = f"{rel} mode {st.st_mode:o} nlink {st.st_nlink} uid {st.st_uid} " \
                   f"gid {st.st_gid} size {st.st_size} mtime {st.st_mtime_ns} " \
                   f"ctime {st.st_ctime_ns}"
            if os.path.islink(path):
                what += f" -> {os.readlink(path)}"
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    what += f" data {hashlib.sha256(f.read()).hexdigest()[:16]}"
            what += attr_flags(path)
            for x in sorted(os.listxattr(path, follow_symlinks=False)):
                v = os.getxattr(path, x, follow_symlinks=False)
                what += f" xattr {x}={hashlib.sha256(v).hexdigest()[:12]}"
            out.append(what)
    sv = os.statvfs(root)
    out.append(f"statfs ffree {sv.f_ffree}")
    return out


def data(n, seed):
    return (hashlib.sha256(str(seed).encode()).digest() * (n // 32 + 1))[:n]


def put(path, n, seed=1):
    with open(path, "wb") as f:
        f.write(data(n, seed))


def pwrite(path, off, n, seed=2):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data(n, seed), off)
    finally:
        os.close(fd)


def append(path, n):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data(n, 3))
    finally:
        os.close(fd)


def creat(path):
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def fsync(path):
    fd = os.open(path, os.O_RDWR)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fallocate(path, off, n):
    fd = os.open(path, os.O_RDWR)
    try:
        os.posix_fallocate(fd, off, n)
    finally:
        os.close(fd)


FALLOC_PUNCH = 0x01 | 0x02	# FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
FALLOC_ZERO = 0x10		# FALLOC_FL_ZERO_RANGE


def fallocate_mode(path, mode, off, n):
    fd = os.open(path, os.O_RDWR)
    try:
        if libc.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(n)) != 0:
            raise OSError(ctypes.get_errno(), f"fallocate {path}")
    finally:
        os.close(fd)


def base_tree(m):
    """A few files and directories every workload starts from."""
    os.mkdir(f"{m}/d")
    os.mkdir(f"{m}/d/e")
    put(f"{m}/f", 64 * KIB)
    put(f"{m}/small", 3000)
    put(f"{m}/d/g", 5000)
    creat(f"{m}/empty")
    os.symlink("f", f"{m}/ln")
    os.setxattr(f"{m}/small", "user.x", b"x" * 40)


# name: (setup, operation)
WORKLOADS = {
    "creat": (None, lambda m: creat(f"{m}/d/new")),
    "mkdir": (None, lambda m: os.mkdir(f"{m}/d/sub")),
    "symlink-inline": (None, lambda m: os.symlink("d/g", f"{m}/d/sl")),
    "symlink-block": (None, lambda m: os.symlink("t" * 300, f"{m}/sl")),
    "link": (None, lambda m: os.link(f"{m}/f", f"{m}/d/f2")),
    "unlink": (None, lambda m: os.unlink(f"{m}/f")),
    # Inodes that hold nothing are freed beside other handles (iops.c).
    "unlink-empty": (None, lambda m: os.unlink(f"{m}/empty")),
    "unlink-symlink": (None, lambda m: os.unlink(f"{m}/ln")),
    "unlink-linked": (lambda m: os.link(f"{m}/f", f"{m}/d/f2"),
                      lambda m: os.unlink(f"{m}/f")),
    "rename": (None, lambda m: os.rename(f"{m}/small", f"{m}/d/e/moved")),
    "rename-replace": (None, lambda m: os.rename(f"{m}/small", f"{m}/f")),
    "rename-dir": (None, lambda m: os.rename(f"{m}/d/e", f"{m}/e2")),
    "rmdir": (None, lambda m: os.rmdir(f"{m}/d/e")),
    "append-1k": (None, lambda m: append(f"{m}/small", KIB)),
    "write-new-8k": (None, lambda m: pwrite(f"{m}/empty", 0, 8 * KIB)),
    "overwrite-1k": (None, lambda m: pwrite(f"{m}/f", 5000, KIB)),
    "overwrite-4k": (None, lambda m: pwrite(f"{m}/f", 8 * KIB, 4 * KIB)),
    "overwrite-2m": (lambda m: put(f"{m}/big", 4 * MIB),
                     lambda m: pwrite(f"{m}/big", 2 * MIB, 2 * MIB)),
    "overwrite-span": (lambda m: put(f"{m}/big", 4 * MIB),
                       lambda m: pwrite(f"{m}/big", 2 * MIB - 3000, 10000)),
    "write-extend-vsp": (None, lambda m: pwrite(f"{m}/f", 2 * MIB + 100, 5000)),
    "truncate-shrink": (None, lambda m: os.truncate(f"{m}/f", 1000)),
    "truncate-grow": (None, lambda m: os.truncate(f"{m}/small", 100000)),
    "setxattr": (None, lambda m: os.setxattr(f"{m}/f", "user.new", b"v" * 100)),
    "replacexattr": (None, lambda m: os.setxattr(f"{m}/small", "user.x", b"y" * 200)),
    "removexattr": (None, lambda m: os.removexattr(f"{m}/small", "user.x")),
    "chmod": (None, lambda m: os.chmod(f"{m}/f", 0o600)),
    "fallocate": (None, lambda m: fallocate(f"{m}/small", 0, MIB)),
    # Pages added beside other handles, zeroed before the handle (write.c,
    # vsmfs_falloc_pages()): after a small file's run, with the size and
    # the zeros past the old end; kept past the end; a large file's first
    # superpage.
    "fallocate-small": (None, lambda m: fallocate(f"{m}/small", 0, 64 * KIB)),
    "fallocate-keep": (None, lambda m: fallocate_mode(f"{m}/small", 0x01, 0, 32 * KIB)),
    "fallocate-large": (None, lambda m: fallocate(f"{m}/empty", 0, 300 * KIB)),
    # Pages still unwritten freed beside other handles, their marks cleared.
    "truncate-unwritten": (lambda m: fallocate(f"{m}/d/g", 0, 64 * KIB),
                           lambda m: os.truncate(f"{m}/d/g", 8 * KIB)),
    "unlink-unwritten": (lambda m: fallocate(f"{m}/d/g", 0, 64 * KIB),
                         lambda m: os.unlink(f"{m}/d/g")),
    "punch-hole": (None, lambda m: fallocate_mode(f"{m}/f", FALLOC_PUNCH, 6000, 20000)),
    "zero-range": (None, lambda m: fallocate_mode(f"{m}/f", FALLOC_ZERO, 6000, 20000)),
    "fsync": (lambda m: pwrite(f"{m}/f", 100, 100), lambda m: fsync(f"{m}/f")),
    "syncfs": (lambda m: [put(f"{m}/d/s{i}", 3000 * i, i) for i in range(1, 6)],
               lambda m: os.sync()),
    "remount-ro": (None, lambda m: remount(True)),
    "remount-rw": (lambda m: remount(True), lambda m: remount(False)),
}

# Mount options the workloads run with besides the defaults: ckpt checks
# garbage collection and checkpoint of the journal, run at every commit.
OPTION_SETS = {
    "": "",
    "ckpt": "checkpoint_threshold=1",
    # Group commit: the operation joins the running transaction, and
    # sync(2) right after it commits it (within the log); an fsync commits
    # it too (no fast-commit record instead).
    "group": "commit=300,fast_commit=off",
    # Fast commits: an fsync after an overwrite or an append of the kinds a
    # record describes appends one (concurrent workloads only).
    "fc": "commit=300",
    "nodelta": "journal_delta=off,journal_wear=off",
    "cow-page": "cow=page",
    "cow-sp": "cow=superpage",
}
# The workloads of the short run that also run with checkpoint_threshold=1.
SHORT_CKPT = ["rename-replace", "overwrite-4k"]
SHORT_GROUP = ["creat", "rename-replace", "overwrite-4k", "truncate-shrink"]
# Workloads the short run leaves to the long one, each for one that stays
# and takes the same paths of the module: unlink for unlink-linked
# (link count), punch-hole for zero-range (extents freed), setxattr and
# removexattr for replacexattr, remount-rw for remount-ro (superblock
# update), chmod for truncate-grow (inode only), fallocate-small for
# fallocate-keep (pages after a run, in a shared handle).
SHORT_SKIP = {"unlink-linked", "zero-range", "replacexattr", "remount-ro", "truncate-grow",
              "fallocate-keep"}
# Option sets of the concurrent workloads in the long run.
CONC_OPTION_SETS = {"": "", "ckpt": "checkpoint_threshold=1",
                    "group": "commit=300,fast_commit=off", "fc": "commit=300"}
# The concurrent workloads that make each operation durable themselves
# (fsync), and so also run with group commit ("group"), in both runs.
CONC_GROUP = ["conc-attrs", "conc-appends", "conc-grow", "conc-unwritten", "conc-falloc",
              "conc-overwrite", "conc-recycle"]
# The counters of the shared handles a workload's operations run in, if not
# trans_shared_meta: overwrites run in shared write handles, and so do
# appends that only grow a run whose entry is in the inode (the others,
# moves of a run, in shared metadata handles).
SHARED_COUNTER = {"conc-unwritten": ("trans_shared_handles",),
                  "conc-overwrite": ("trans_shared_handles",),
                  "conc-appends": ("trans_shared_handles", "trans_shared_meta")}
# Counters a workload must move with group commit, beside its shared
# handles: in conc-overwrite the commits give the overwrites' old frames
# back to the CPUs' page pools, which hand them out again.
GROUP_COUNTERS = {"conc-overwrite": "alloc_pool_recycled", "conc-recycle": "alloc_pool_recycled"}
# The concurrent workloads run with fast commits too ("fc"), in both runs:
# each task's fsyncs append records, from two CPUs, which a crash image
# must replay; the counter the records move.
CONC_FC = ["conc-overwrite", "conc-appends", "conc-create-rename", "conc-attrs"]
FC_COUNTER = "fc_records"

# Crash images per point (vsmfs-pmreplay: single lines of each kind,
# random images of each kind, values between per line; then at most so
# many of them, 0: all), and crash points per workload (0: every one), by
# run and kind of workload.
SHORT_IMAGES, SHORT_POINTS = (6, 1, 1, 10), 0
# The long run's cap: a point of a large write with cached stores (2 MiB
# with cow=page) has thousands of early-eviction images (each evicted set
# with each flush subset); a seeded sample of them keeps a shard in tens of
# minutes, and other seeds take other samples.
LONG_IMAGES = (64, 8, 8, 256)
# A workload with more crash points than LONG_POINTS (a 2 MiB write with
# cow=page fences after each of its 512 page copies: each point is one
# more page copied, with about 140 images) has that many points taken,
# spread over it, each with at most LONG_MANY_CAP images; other seeds take
# other points.
LONG_POINTS, LONG_MANY_CAP = 64, 64
CONC_SHORT_IMAGES, CONC_SHORT_POINTS = (4, 1, 1, 10), 6
CONC_LONG_IMAGES = (16, 2, 2, 16)

# Known not to hold the pre or the post tree at every crash point: run in
# the long run only, where they fail, until fixed.
KNOWN = set()

# Known ordering bugs of the module: name -> (what, a pattern every failure
# it causes shows). A failure that shows it is reported as known, not
# counted. Remove an entry once its bug is fixed.
KNOWN_ISSUES = {
    # name: (what it is, the pattern its failure shows); none known today.
}

# Negative controls: workload -> (module parameter set to 1 around the
# operation, the pattern a failure it must cause shows).
EXPECT_FAIL = {
    "remount-rw@misorder-sb": ("pmlog_misorder_sb", "invalid superblock: .*; backup: "),
    # The fence before each commit record made on the other CPU: a commit
    # recorded with journal blocks not yet durable. conc-dirs itself passes,
    # so any image it fails is the control's doing.
    "conc-dirs@remote-fence": ("pmlog_remote_fence",
                               "^(mount failed|fsck|reading the tree|task |names )"),
}

# Operations that change nothing a digest sees: every crash image must hold
# the one tree.
UNSEEN = {"fsync", "syncfs", "remount-ro", "remount-rw"}


# Concurrent workloads: tasks doing operations at the same time, each
# pinned to a CPU (task t on CPU t modulo the CPUs), so that commits are in
# flight together and their flushes and fences are made on several CPUs.
# name -> (setup, [the operations of each task], view, owns, pin):
#   setup(m)       made before the log is turned on
#   operations     [(what, fn(m))]: one system call each, so that each is
#                  one transaction
#   view(m, t)     what task t alone changes, as a list of lines: taken by
#                  the task after each of its operations, and from every
#                  crash image
#   owns(t, rel)   whether the name @rel (relative to the mount point)
#                  belongs to task t; any other name must be as before
#   pin            whether each task stays on its CPU; if not, the tasks
#                  are moved between CPUs all along (pinned anew every
#                  millisecond), so that a commit may be split by a move
def subtree(root):
    """The digest of the tree under @root (no statfs), or ["absent"]."""
    if not os.path.lexists(root):
        return ["absent"]
    if not os.path.isdir(root) or os.path.islink(root):
        return [entry(root, os.path.basename(root))]
    return [line for line in digest(root) if not line.startswith("statfs ")]


def entry(path, rel):
    """One line of the digest: the name @path as digest() shows it."""
    st = os.lstat(path)
    what = f"{rel} mode {st.st_mode:o} nlink {st.st_nlink} uid {st.st_uid} " \
           f"gid {st.st_gid} size {st.st_size} mtime {st.st_mtime_ns} ctime {st.st_ctime_ns}"
    if os.path.islink(path):
        what += f" -> {os.readlink(path)}"
    elif os.path.isfile(path):
        with open(path, "rb") as f:
            what += f" data {hashlib.sha256(f.read()).hexdigest()[:16]}"
    what += attr_flags(path)
    for x in sorted(os.listxattr(path, follow_symlinks=False)):
        v = os.getxattr(path, x, follow_symlinks=False)
        what += f" xattr {x}={hashlib.sha256(v).hexdigest()[:12]}"
    return what


def names_view(d, prefix):
    """The names in directory @d starting with @prefix, each with what
    is under it."""
    out = []
    for name in sorted(n for n in os.listdir(d) if n.startswith(prefix)):
        out += [f"{name}: {line}" for line in subtree(os.path.join(d, name))]
    return out


def region_view(path, t, size, xattr):
    """Bytes [t*size, (t+1)*size) of @path and its xattr @xattr."""
    with open(path, "rb") as f:
        f.seek(t * size)
        got = f.read(size)
    try:
        x = hashlib.sha256(os.getxattr(path, xattr)).hexdigest()[:12]
    except OSError as e:
        if e.errno != errno.ENODATA:
            raise
        x = "absent"
    return [f"region {t} {len(got)} bytes {hashlib.sha256(got).hexdigest()[:16]}",
            f"{xattr} {x}"]


def dir_ops(d):
    """The operations of a task in directory @d (its own, or shared with
    its name prefix in @d): names made, written, renamed, linked, removed."""
    return [
        ("creat", lambda m: creat(f"{m}/{d}a")),
        ("write 5000", lambda m: pwrite(f"{m}/{d}a", 0, 5000, d)),
        ("mkdir", lambda m: os.mkdir(f"{m}/{d}dir")),
        ("rename into dir", lambda m: os.rename(f"{m}/{d}a", f"{m}/{d}dir/a")),
        ("creat", lambda m: creat(f"{m}/{d}b")),
        ("append 1000", lambda m: append(f"{m}/{d}b", 1000)),
        ("link", lambda m: os.link(f"{m}/{d}b", f"{m}/{d}dir/b2")),
        ("symlink", lambda m: os.symlink("dir/a", f"{m}/{d}sl")),
        ("setxattr", lambda m: os.setxattr(f"{m}/{d}b", "user.t", d.encode() * 20)),
        ("unlink", lambda m: os.unlink(f"{m}/{d}b")),
        ("rename over", lambda m: os.rename(f"{m}/{d}dir/b2", f"{m}/{d}dir/a")),
        ("truncate", lambda m: os.truncate(f"{m}/{d}dir/a", 100)),
    ]


def file_ops(t):
    """Writes of task @t into its half of the shared file, and its xattr."""
    base = t * 32 * KIB
    return [
        ("pwrite 4k", lambda m: pwrite(f"{m}/shared", base, 4 * KIB, 10 + t)),
        ("pwrite 1k", lambda m: pwrite(f"{m}/shared", base + 9000, KIB, 20 + t)),
        ("setxattr", lambda m: os.setxattr(f"{m}/shared", f"user.t{t}", b"a" * 50)),
        ("pwrite 8k", lambda m: pwrite(f"{m}/shared", base + 12 * KIB, 8 * KIB, 30 + t)),
        ("pwrite 100", lambda m: pwrite(f"{m}/shared", base + 100, 100, 40 + t)),
        ("replacexattr", lambda m: os.setxattr(f"{m}/shared", f"user.t{t}", b"b" * 300)),
        ("pwrite 4k again", lambda m: pwrite(f"{m}/shared", base, 4 * KIB, 50 + t)),
        ("pwrite span", lambda m: pwrite(f"{m}/shared", base + 3 * KIB, 6 * KIB, 60 + t)),
    ]


def big_ops(d):
    """Operations of a task in directory @d that spend long in a
    transaction (writes of 64 to 192 KiB), where a move to another CPU
    waits for the commit to begin (vsmfs_trans_commit())."""
    return [
        ("creat", lambda m: creat(f"{m}/{d}a")),
        ("write 128k", lambda m: pwrite(f"{m}/{d}a", 0, 128 * KIB, d)),
        ("overwrite 64k", lambda m: pwrite(f"{m}/{d}a", 32 * KIB, 64 * KIB, d + "2")),
        ("mkdir", lambda m: os.mkdir(f"{m}/{d}dir")),
        ("rename into dir", lambda m: os.rename(f"{m}/{d}a", f"{m}/{d}dir/a")),
        ("append 192k", lambda m: append(f"{m}/{d}dir/a", 192 * KIB)),
        ("truncate", lambda m: os.truncate(f"{m}/{d}dir/a", 5000)),
        ("unlink", lambda m: os.unlink(f"{m}/{d}dir/a")),
    ]


def synced(fn, what):
    """@fn, then an fsync of @what (a path relative to the mount point,
    opened read-only), so that with group commit the operation is durable
    when it returns."""
    def run(m):
        fn(m)
        fd = os.open(f"{m}/{what}", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return run


def attr_ops(d):
    """Links, renames of files, attribute changes (mode, owners, times,
    extended attributes added to a file that has some, replaced and
    removed, flags), a truncation that grows a file and one that shrinks
    it, and the unlink of a file with data of a
    task in directory @d, each made durable by an fsync: with group commit,
    each in a shared handle beside the other task's (but the first
    extended attribute, which allocates its block). (Not a write through a mapping: the
    log holds the module's stores to PM, not the task's.)"""
    return [
        ("creat", synced(lambda m: creat(f"{m}/{d}a"), f"{d}a")),
        ("write 5000", synced(lambda m: pwrite(f"{m}/{d}a", 0, 5000, d), f"{d}a")),
        ("chmod", synced(lambda m: os.chmod(f"{m}/{d}a", 0o600), f"{d}a")),
        ("chown", synced(lambda m: os.chown(f"{m}/{d}a", 1000, 1001), f"{d}a")),
        ("utimes", synced(lambda m: os.utime(f"{m}/{d}a", ns=(10**18, 2 * 10**18)), f"{d}a")),
        ("setxattr", synced(lambda m: os.setxattr(f"{m}/{d}a", "user.a", b"1" * 40), f"{d}a")),
        ("setxattr 2", synced(lambda m: os.setxattr(f"{m}/{d}a", "user.b", b"2" * 100),
                              f"{d}a")),
        ("replacexattr", synced(lambda m: os.setxattr(f"{m}/{d}a", "user.a", b"3" * 300),
                                f"{d}a")),
        ("removexattr", synced(lambda m: os.removexattr(f"{m}/{d}a", "user.b"), f"{d}a")),
        ("chattr +d", synced(lambda m: chattr(f"{m}/{d}a", FS_NODUMP_FL), f"{d}a")),
        ("link", synced(lambda m: os.link(f"{m}/{d}a", f"{m}/{d}b"), f"{d}b")),
        ("rename", synced(lambda m: os.rename(f"{m}/{d}b", f"{m}/{d}c"), f"{d}c")),
        ("creat", synced(lambda m: creat(f"{m}/{d}e"), f"{d}e")),
        ("rename over", synced(lambda m: os.rename(f"{m}/{d}c", f"{m}/{d}e"), f"{d}e")),
        ("truncate grow", synced(lambda m: os.truncate(f"{m}/{d}a", 9000), f"{d}a")),
        ("truncate", synced(lambda m: os.truncate(f"{m}/{d}a", 4096), f"{d}a")),
        ("creat", synced(lambda m: creat(f"{m}/{d}f"), f"{d}f")),
        ("write 9000", synced(lambda m: pwrite(f"{m}/{d}f", 0, 9000, 5), f"{d}f")),
        ("unlink last", synced(lambda m: os.unlink(f"{m}/{d}f"), d or ".")),
    ]


# Files a task of a concurrent workload keeps open across its operations.
HELD = {}


def held_open(path):
    HELD[path] = os.open(path, os.O_RDWR)


def held_append(path, n, seed):
    """Append @n bytes to @path through the descriptor held open, and fsync."""
    fd = HELD[path]
    os.pwrite(fd, data(n, seed), os.fstat(fd).st_size)
    os.fsync(fd)


def held_close(path):
    os.close(HELD.pop(path))


def append_ops(d):
    """Appends that add pages, each made durable by an fsync: into the
    reserved tail of a large file's superpage (held open, so that the tail
    stays), the tail given back at its last close, and two small files
    grown in turn, page by page, each into pages after its run or, where
    the other took them, into a fresh run its old one moves into; with
    group commit, in shared handles beside the other task's."""
    big, small, other = f"{d}big", f"{d}small", f"{d}other"
    return [
        ("creat", synced(lambda m: creat(f"{m}/{big}"), big)),
        ("write 300k", synced(lambda m: pwrite(f"{m}/{big}", 0, 300 * KIB, d + "b"), big)),
        ("open", lambda m: held_open(f"{m}/{big}")),
        ("append 5000", lambda m: held_append(f"{m}/{big}", 5000, d + "1")),
        ("append 4k", lambda m: held_append(f"{m}/{big}", 4 * KIB, d + "2")),
        ("append 10k", lambda m: held_append(f"{m}/{big}", 10 * KIB, d + "3")),
        ("append 8k", lambda m: held_append(f"{m}/{big}", 8 * KIB, d + "7")),
        ("append 3000", lambda m: held_append(f"{m}/{big}", 3000, d + "8")),
        ("close", synced(lambda m: held_close(f"{m}/{big}"), big)),
        ("creat small", synced(lambda m: creat(f"{m}/{small}"), small)),
        ("write 100", synced(lambda m: pwrite(f"{m}/{small}", 0, 100, d + "s"), small)),
        ("open small", lambda m: held_open(f"{m}/{small}")),
        ("creat other", synced(lambda m: creat(f"{m}/{other}"), other)),
        ("open other", lambda m: held_open(f"{m}/{other}")),
        ("append 6000", lambda m: held_append(f"{m}/{small}", 6000, d + "4")),
        ("other 5000", lambda m: held_append(f"{m}/{other}", 5000, d + "9")),
        ("append 4k", lambda m: held_append(f"{m}/{small}", 4 * KIB, d + "5")),
        ("other 9000", lambda m: held_append(f"{m}/{other}", 9000, d + "a")),
        ("append 1", lambda m: held_append(f"{m}/{small}", 1, d + "6")),
        ("append 12k", lambda m: held_append(f"{m}/{small}", 12 * KIB, d + "c")),
        ("close other", lambda m: held_close(f"{m}/{other}")),
        ("close small", lambda m: held_close(f"{m}/{small}")),
    ]


def own_dirs(m):
    for t in range(4):
        os.mkdir(f"{m}/c{t}")


# Names of 238 bytes: directory entries of 256, sixteen to a block.
GROW_NAME = "g" * 235


def full_dirs(m):
    """Directories of their own, each with one block full of entries."""
    own_dirs(m)
    for t in range(2):
        for i in range(16):
            creat(f"{m}/c{t}/{GROW_NAME}{i:03d}")


def grow_ops(d):
    """Creates of a task in its directory @d, whose block is full: the
    first takes a new directory block, each made durable by an fsync; with
    group commit, in shared handles beside the other task's."""
    return [
        ("creat grow", synced(lambda m: creat(f"{m}/{d}{GROW_NAME}100"), f"{d}{GROW_NAME}100")),
        ("write 5000", synced(lambda m: pwrite(f"{m}/{d}{GROW_NAME}100", 0, 5000, d),
                              f"{d}{GROW_NAME}100")),
        ("mkdir", synced(lambda m: os.mkdir(f"{m}/{d}{GROW_NAME}101"), d)),
        ("unlink", synced(lambda m: os.unlink(f"{m}/{d}{GROW_NAME}000"), d)),
        ("creat", synced(lambda m: creat(f"{m}/{d}{GROW_NAME}102"), f"{d}{GROW_NAME}102")),
    ]


def prealloc_dirs(m):
    """Directories of their own, each with a file of 64 pages fallocated
    (unwritten) and one with 4 pages past its end (FALLOC_FL_KEEP_SIZE)."""
    own_dirs(m)
    for t in range(2):
        creat(f"{m}/c{t}/pre")
        fallocate(f"{m}/c{t}/pre", 0, 64 * KIB * 4)
        put(f"{m}/c{t}/keep", 5000, 4)
        fallocate_mode(f"{m}/c{t}/keep", 0x01, 8 * KIB, 16 * KIB)


def unwritten_ops(d):
    """Writes of a task over pages of its files fallocate left unwritten,
    each made durable by an fsync: whole pages, a part of one, and two
    pages at once; with group commit, in shared handles beside the other
    task's, each clearing the flag the replaced pages hand to their
    scratch pages; and appends into pages a file keeps past its end
    (FALLOC_FL_KEEP_SIZE), the size grown in the same shared handle, then
    a write past the end after a gap, in a handle of the other kind."""
    pre = f"{d}pre"
    return [
        ("write page 0", synced(lambda m: pwrite(f"{m}/{pre}", 0, 4 * KIB, d + "0"), pre)),
        ("write 100 in page 3", synced(lambda m: pwrite(f"{m}/{pre}", 3 * 4 * KIB + 1000, 100,
                                                        d + "1"), pre)),
        ("write pages 5-6", synced(lambda m: pwrite(f"{m}/{pre}", 5 * 4 * KIB, 8 * KIB, d + "2"),
                                   pre)),
        ("write page 0 again", synced(lambda m: pwrite(f"{m}/{pre}", 0, 4 * KIB, d + "3"), pre)),
        ("write page 63", synced(lambda m: pwrite(f"{m}/{pre}", 63 * 4 * KIB, 4 * KIB, d + "4"),
                                 pre)),
        ("append into kept pages", synced(lambda m: append(f"{m}/{d}keep", 6000), f"{d}keep")),
        ("append 100", synced(lambda m: append(f"{m}/{d}keep", 100), f"{d}keep")),
        ("write past the end", synced(lambda m: pwrite(f"{m}/{d}keep", 16 * KIB, 4 * KIB,
                                                       d + "5"), f"{d}keep")),
    ]


def overwrite_dirs(m):
    """Directories of their own, each with a file of 64 KiB."""
    own_dirs(m)
    for t in range(2):
        put(f"{m}/c{t}/f", 64 * KIB, 7 + t)


def overwrite_ops(d):
    """Overwrites of a task in a file of its own, each made durable by an
    fsync: with group commit, in shared handles beside the other task's;
    each commit gives the old frames back to the page pool of the task's
    CPU, and the next overwrites copy into them once it is durable (the
    same page again and again, a part of one, two at once)."""
    f = f"{d}f"
    return [
        ("overwrite page 0", synced(lambda m: pwrite(f"{m}/{f}", 0, 4 * KIB, d + "0"), f)),
        ("page 0 again", synced(lambda m: pwrite(f"{m}/{f}", 0, 4 * KIB, d + "1"), f)),
        ("page 0 a third time", synced(lambda m: pwrite(f"{m}/{f}", 0, 4 * KIB, d + "2"), f)),
        ("1k in page 0", synced(lambda m: pwrite(f"{m}/{f}", 1000, KIB, d + "3"), f)),
        ("pages 2-3", synced(lambda m: pwrite(f"{m}/{f}", 8 * KIB, 8 * KIB, d + "4"), f)),
        ("page 0 and 1", synced(lambda m: pwrite(f"{m}/{f}", 0, 8 * KIB, d + "5"), f)),
    ]


def recycle_dirs(m):
    """Directories of their own, each with three small files."""
    own_dirs(m)
    for t in range(2):
        put(f"{m}/c{t}/a", 16 * KIB, 11 + t)
        put(f"{m}/c{t}/b", 32 * KIB, 13 + t)
        put(f"{m}/c{t}/log", 12 * KIB, 15 + t)


def recycle_ops(d):
    """Files deleted and truncated, and new files written, each operation
    made durable by an fsync (of the file, or of the directory after a
    delete): with group commit, each commit gives the pages it frees to
    the page pool of their VSP, and the writes after it take them once it
    is durable."""
    # One system call each: the other task's fsync may commit between two.
    return [
        ("unlink a", synced(lambda m: os.unlink(f"{m}/{d}a"), d)),
        ("creat x", synced(lambda m: creat(f"{m}/{d}x"), f"{d}x")),
        ("write x 16k", synced(lambda m: pwrite(f"{m}/{d}x", 0, 16 * KIB, d + "x"), f"{d}x")),
        ("truncate b to 4k", synced(lambda m: os.truncate(f"{m}/{d}b", 4 * KIB), f"{d}b")),
        ("creat y", synced(lambda m: creat(f"{m}/{d}y"), f"{d}y")),
        ("write y 24k", synced(lambda m: pwrite(f"{m}/{d}y", 0, 24 * KIB, d + "y"), f"{d}y")),
        ("append 8k to log", synced(lambda m: append(f"{m}/{d}log", 8 * KIB), f"{d}log")),
        ("unlink x", synced(lambda m: os.unlink(f"{m}/{d}x"), d)),
        ("creat z", synced(lambda m: creat(f"{m}/{d}z"), f"{d}z")),
        ("write z 20k", synced(lambda m: pwrite(f"{m}/{d}z", 0, 20 * KIB, d + "z"), f"{d}z")),
    ]


def falloc_dirs(m):
    """Directories of their own, each with a small file and an empty one."""
    own_dirs(m)
    for t in range(2):
        put(f"{m}/c{t}/f", 5000, 6)
        creat(f"{m}/c{t}/big")


def falloc_ops(d):
    """fallocate() of a task on files of its own, each made durable by an
    fsync: pages after a small file's run with its size, a write into
    them, pages kept past the end, a large file's first superpage, a
    truncation that frees pages still unwritten; with
    group commit, in shared handles beside the other task's, the pages
    zeroed before them."""
    f = f"{d}f"
    return [
        ("fallocate 64k", synced(lambda m: fallocate(f"{m}/{f}", 0, 64 * KIB), f)),
        ("write into it", synced(lambda m: pwrite(f"{m}/{f}", 20000, 4 * KIB, d + "0"), f)),
        ("fallocate keep", synced(lambda m: fallocate_mode(f"{m}/{f}", 0x01, 64 * KIB,
                                                           64 * KIB), f)),
        ("fallocate large", synced(lambda m: fallocate(f"{m}/{d}big", 0, 300 * KIB),
                                   f"{d}big")),
        ("truncate", synced(lambda m: os.truncate(f"{m}/{f}", 8 * KIB), f)),
    ]


def create_ops(d, renames):
    """Creates of empty files in @d (a name prefix in a shared directory),
    each fsync'd: with fast commits, records that carry the directory's
    words; eight, or with @renames four, each renamed within the directory
    after it, fsync'd (with fast commits, a record too when every earlier
    change of the directory is carried, else a commit)."""
    ops = []
    for i in range(4 if renames else 8):
        ops.append(("creat", synced(lambda m, i=i: creat(f"{m}/{d}{i}"), f"{d}{i}")))
        if renames:
            ops.append(("rename", synced(lambda m, i=i: os.rename(f"{m}/{d}{i}", f"{m}/{d}r{i}"),
                                         f"{d}r{i}")))
    return ops


CONCURRENT = {
    # Each task in a directory of its own: commits of unrelated blocks.
    "conc-dirs": (own_dirs, [dir_ops("c0/"), dir_ops("c1/")],
                  lambda m, t: subtree(f"{m}/c{t}"),
                  lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # Both in one directory: its blocks are in both tasks' transactions.
    "conc-one-dir": (lambda m: os.mkdir(f"{m}/s"), [dir_ops("s/t0-"), dir_ops("s/t1-")],
                     lambda m, t: names_view(f"{m}/s", f"t{t}-"),
                     lambda t, rel: rel.startswith(f"s/t{t}-"), True),
    # Creates in one directory, each fsync'd, beside renames in it on the
    # other CPU: with the option set "fc", records of the creates and
    # renames carry words of the directory the others change too.
    "conc-create-rename": (lambda m: os.mkdir(f"{m}/s"),
                           [create_ops("s/t0-", False), create_ops("s/t1-", True)],
                           lambda m, t: names_view(f"{m}/s", f"t{t}-"),
                           lambda t, rel: rel.startswith(f"s/t{t}-"), True),
    # Both writing one file, each its half, and each its xattr of it.
    "conc-one-file": (lambda m: put(f"{m}/shared", 64 * KIB, 9), [file_ops(0), file_ops(1)],
                      lambda m, t: region_view(f"{m}/shared", t, 32 * KIB, f"user.t{t}"),
                      lambda t, rel: False, True),
    # Links, renames and attribute changes, each task in a directory of
    # its own, each operation fsync'd: with the option set "group", in
    # shared handles; with "fc", records of the renames and attribute
    # changes from both CPUs.
    "conc-attrs": (own_dirs, [attr_ops("c0/"), attr_ops("c1/")],
                   lambda m, t: subtree(f"{m}/c{t}"),
                   lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # Appends that add pages, each task to files of its own, each fsync'd:
    # with the option set "group", in shared handles.
    "conc-appends": (own_dirs, [append_ops("c0/"), append_ops("c1/")],
                     lambda m, t: subtree(f"{m}/c{t}"),
                     lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # Creates that take a new directory block, each task in a directory of
    # its own, each fsync'd: with the option set "group", in shared
    # handles, the block's page reserved before.
    "conc-grow": (full_dirs, [grow_ops("c0/"), grow_ops("c1/")],
                  lambda m, t: subtree(f"{m}/c{t}"),
                  lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # Writes over fallocated pages, each task to files of its own, each
    # fsync'd: with the option set "group", in shared handles.
    "conc-unwritten": (prealloc_dirs, [unwritten_ops("c0/"), unwritten_ops("c1/")],
                       lambda m, t: subtree(f"{m}/c{t}"),
                       lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # fallocate() of files of its own, each task, each fsync'd: with the
    # option set "group", in shared handles.
    "conc-falloc": (falloc_dirs, [falloc_ops("c0/"), falloc_ops("c1/")],
                    lambda m, t: subtree(f"{m}/c{t}"),
                    lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # Overwrites, each task of a file of its own, each fsync'd: with the
    # option set "group", in shared handles, the old frames recycled.
    "conc-overwrite": (overwrite_dirs, [overwrite_ops("c0/"), overwrite_ops("c1/")],
                       lambda m, t: subtree(f"{m}/c{t}"),
                       lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # Deletes, truncations and new files, each task in a directory of its
    # own, each fsync'd: with the option set "group", the freed pages go
    # back to the page pools and the new files' writes take them.
    "conc-recycle": (recycle_dirs, [recycle_ops("c0/"), recycle_ops("c1/")],
                     lambda m, t: subtree(f"{m}/c{t}"),
                     lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), True),
    # Large writes in directories of their own, by four tasks (two per
    # CPU, so that they wait for each other inside their transactions),
    # moved between CPUs all along.
    "conc-migrate": (own_dirs, [big_ops(f"c{t}/") for t in range(4)],
                     lambda m, t: subtree(f"{m}/c{t}"),
                     lambda t, rel: rel == f"c{t}" or rel.startswith(f"c{t}/"), False),
}


class Device:
    """The test device, written whole with O_DIRECT for every image."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_DIRECT)
        self.size = os.lseek(self.fd, 0, os.SEEK_END)
        self.buf = mmap.mmap(-1, self.size)
        self.base = None

    def capture(self):
        """Read the device as the base of the next log."""
        if os.preadv(self.fd, [self.buf], 0) != self.size:
            raise OSError("short read of the device")
        self.base = bytes(self.buf)

    def write_image(self, diff):
        for line, content in diff.items():
            self.buf[line:line + pmreplay.LINE] = content
        try:
            if os.pwritev(self.fd, [self.buf], 0) != self.size:
                raise OSError("short write of the device")
        finally:
            for line in diff:
                self.buf[line:line + pmreplay.LINE] = self.base[line:line + pmreplay.LINE]
        fcntl.ioctl(self.fd, BLKFLSBUF, 0)


def check_image(pre, post, after_op):
    """None if the image on the device is good, else what is wrong."""
    err = mount()
    if err:
        # The kernel's reasons, then an empty log for the next image.
        out = subprocess.run(["dmesg", "-c"], capture_output=True, text=True).stdout
        tail = [line for line in out.splitlines() if "vsmfs" in line][-3:]
        return f"mount failed: {err}; " + " | ".join(tail)
    try:
        got = digest(MNT)
    except Exception as e:	# a damaged tree may fail in any way
        got = None
        why = f"reading the tree failed: {e!r}"
    umount()
    res = subprocess.run([FSCK, "-n", DEV], capture_output=True, text=True)
    if res.returncode:
        return "fsck.vsmfs -n: " + " | ".join((res.stdout + res.stderr).splitlines()[:8])
    if got is None:
        return why
    if got == post or (got == pre and not after_op):
        return None
    got_only = [f"+ {x}" for x in got if x not in pre and x not in post][:4]
    post_only = [f"post {x}" for x in post if x not in got][:4]
    pre_only = [] if after_op else [f"pre {x}" for x in pre if x not in got][:4]
    return ("holds neither the pre nor the post tree" if not after_op else
            "a crash after the operation returned: not the post tree") + ": " + \
        " | ".join(got_only + pre_only + post_only)


def known_issue(why):
    """The name of the entry of KNOWN_ISSUES failure @why shows, or None."""
    for name, (_, pattern) in KNOWN_ISSUES.items():
        if re.search(pattern, why):
            return name
    return None


def sample(log, count, seed, label):
    """A function taking @count crash points of @log spread over it (one in
    each of @count - 1 equal stretches, at random, and the end), or None
    for every point."""
    if not count or log.fences < count:
        return None
    rnd = random.Random(f"{seed}:{label}")
    step = log.fences / (count - 1)
    names = {str(min(log.fences - 1, int(i * step + rnd.random() * step)))
             for i in range(count - 1)} | {"end"}
    return lambda p: p.name in names


def check_images(label, dev, log, args, bounds, expect, context, check, covered=None,
                 select=None):
    """Check crash images of @log at the points @select takes: @context(p)
    is what the check of an image of crash point p needs to know (hashable),
    @check(context) checks the image on the device. An image is checked
    once per context (or not again where @covered(contexts seen, context)
    says a check already made covers it). Returns (replay, images, kinds,
    failed, known, caught); a negative control in the short run stops at
    the first image that catches it."""
    singles, nrandom, nmid, cap = bounds
    n = failed = known = caught = 0
    kinds = dict.fromkeys(pmreplay.KINDS, 0)
    seen = {}
    rp = pmreplay.Replay(dev.base, log)
    for p in rp.points():
        if expect and caught and args.mode != "long":
            break
        if select and not select(p):
            continue
        ctx = context(p)
        todo = list(p.images(singles, nrandom, nmid, args.seed, lazy=True))
        if cap and len(todo) > cap:
            # The first two (all flushes made, none), then a random sample.
            rnd = random.Random(f"{args.seed}:{label}:{p.name}")
            todo = todo[:2] + sorted(rnd.sample(todo[2:], cap - 2), key=todo.index)
        for spec, kind, make in todo:
            choice = make()
            h, diff = p.image(choice)
            done = seen.setdefault(h, set())
            if ctx in done or (covered and covered(done, ctx)):
                continue
            done.add(ctx)
            dev.write_image(diff)
            why = check(ctx)
            n += 1
            kinds[kind] += 1
            ident = f"{p.name}:{spec}"
            if args.verbose:
                print(f"  {ident} {kind} units {len(p.units)} {ctx}: {why or 'ok'}", flush=True)
            if not why:
                continue
            what = f"{label}: crash image {ident} ({kind}, units {len(p.units)}, " \
                   f"{p.describe(choice)}): {why}"
            if expect:
                if re.search(expect, why):
                    caught += 1
                    if caught == 1:
                        print(f"expected: {what}", flush=True)
                    if args.mode != "long":
                        break
                    continue
            elif known_issue(why):
                known += 1
                if known == 1:
                    print(f"KNOWN ({known_issue(why)}): {what}", flush=True)
                continue
            failed += 1
            print(f"FAIL: {what}", flush=True)
    # The device as it was before the log, not the last image (a control's
    # may be damaged), mounted once (recovery) and unmounted: a clean file
    # system for whatever comes next.
    dev.write_image({})
    if mount() is None:
        umount()
    return rp, n, kinds, failed, known, caught


def report(label, dev, log, args, totals, result, expect, param, state, start, extra=""):
    """Count a workload's results, keep its base and log if it failed."""
    _, n, kinds, failed, known, caught = result
    if expect and not caught:
        failed += 1
        print(f"FAIL: {label}: negative control not caught: no crash image shows "
              f"'{expect}' ({param}=1)", flush=True)
    if failed or args.keep:
        os.makedirs(KEEP, exist_ok=True)
        with open(os.path.join(KEEP, f"{label}.base"), "wb") as f:
            f.write(dev.base)
        shutil.copyfile(LOGFILE, os.path.join(KEEP, f"{label}.pmlog"))
    kind = "concurrent" if label.partition("@")[0] in CONCURRENT else "single"
    totals[kind]["workloads"] += 1
    totals[kind]["fences"] += log.fences
    totals[kind]["points"] += result[0].checked
    totals[kind]["images"] += n
    for k in kinds:
        totals[kind][k] += kinds[k]
    totals["failed"] += failed
    totals["known"] += known
    totals["caught"] += caught
    stores = sum(1 for r in log.records if r[0] == pmreplay.STORE)
    print(f"{label:22s} {len(log.records):6d} records {stores:5d} stores {log.fences:4d} fences "
          f"{result[0].checked:4d} checked {n:5d} images "
          f"({' '.join(f'{k} {v}' for k, v in kinds.items())}) "
          f"{failed:3d} failed" + (f" {known} known" if known else "") +
          (f" {caught} expected" if expect else "") + extra +
          f"  foreign {state['foreign']}  {time.monotonic() - start:.0f}s", flush=True)


def count_points(select):
    """@select, counting in select.checked the points it takes."""
    def take(p):
        ok = select is None or select(p)
        take.checked += ok
        return ok
    take.checked = 0
    return take


def fresh_fs(optset):
    # A 4 MiB journal: the atomic write limit (vsmfs(5)) of the default
    # journal of a 32 MiB device is below the 2 MiB of overwrite-2m, which
    # would then go in two parts, each atomic but not the whole.
    subprocess.run([MKFS, "-q", "-f", "-J", "4M", DEV], check=True)
    err = mount(",".join(filter(None, [WORK_OPTS, OPTION_SETS.get(optset, "")])))
    if err:
        raise OSError(f"mount of the fresh file system: {err}")
    base_tree(MNT)


def run_workload(label, dev, args, totals):
    name, _, optset = label.partition("@")
    setup, op = WORKLOADS[name]
    param, expect = EXPECT_FAIL.get(label, (None, None))
    start = time.monotonic()
    fresh_fs(optset)
    if setup:
        setup(MNT)
    if optset == "group":
        # The tree before on PM, and the operation committed by a sync.
        os.sync()
        op = (lambda f: lambda m: (f(m), os.sync()))(op)
    pre = digest(MNT)
    dev.capture()
    if param:
        set_param(param, 1)
    pmlog("on")
    try:
        op(MNT)
    finally:
        if param:
            set_param(param, 0)
    op_end = int(pmlog_state()["records"])
    post = digest(MNT)
    if args.mode == "long":
        umount()
    pmlog("off")
    if args.mode != "long":
        umount()
    state = pmlog_state()
    shutil.copyfile(DATA, LOGFILE)
    log = pmreplay.Log(LOGFILE)
    if (pre == post) != (name in UNSEEN):
        raise OSError(f"the operation changed {'nothing' if pre == post else 'something'} "
                      "the digest sees")
    # Identical images are checked once, or twice if a crash after the
    # operation returned (which must hold the post tree) leaves one.
    # A negative control: every crash point, every image (it stops at the
    # first that catches it).
    npoints = 0 if expect else SHORT_POINTS if args.mode != "long" else LONG_POINTS
    select = count_points(sample(log, npoints, args.seed, label))
    bounds = LONG_IMAGES if args.mode == "long" else SHORT_IMAGES
    if args.mode == "long" and npoints and log.fences > npoints:
        bounds = bounds[:3] + (LONG_MANY_CAP,)
    result = check_images(label, dev, log, args, bounds[:3] + (0,) if expect else bounds, expect,
                          lambda p: p.pos >= op_end,
                          lambda after_op: check_image(pre, post, after_op),
                          lambda done, after_op: True in done, select)
    result[0].checked = select.checked
    report(label, dev, log, args, totals, result, expect, param, state, start)


def shape(root, owns, ntasks):
    """{name: type} of the names under @root that no task owns."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if not any(owns(t, rel) for t in range(ntasks)):
                out[rel] = stat.S_IFMT(os.lstat(os.path.join(dirpath, name)).st_mode)
    return out


def counters():
    """The journal counters of the test device that show commits in flight
    together."""
    d = f"/sys/fs/vsmfs/{os.path.basename(DEV)}"
    return {c: int(open(f"{d}/{c}").read()) for c in
            ("trans_commits", "journal_order_waits", "journal_pipelined",
             "journal_frozen_copies", "trans_shared_meta", "trans_shared_handles",
             "alloc_pool_recycled", FC_COUNTER)}


def task_main(t, ops, view, pin, go, step):
    """Task @t: its operations, its view after each and a mark; the views
    go to TASKFILE.t. The tasks start each operation together (@step), so
    that their transactions meet in the journal."""
    if pin:
        os.sched_setaffinity(0, {t % len(os.sched_getaffinity(0))})
    os.read(go, 1)
    views = []
    mark = os.open(MARKFILE, os.O_WRONLY)
    for i, (_, fn) in enumerate(ops, 1):
        step.wait(timeout=600)
        fn(MNT)
        views.append(view(MNT, t))
        os.write(mark, str(t << 32 | i).encode())
    os.close(mark)
    with open(f"{TASKFILE}.{t}", "w") as f:
        json.dump(views, f)


def run_tasks(tasks, view, pin):
    """Run the tasks at once, each in a process of its own; if not @pin,
    move them between CPUs until they end. Return their views."""
    ncpu = len(os.sched_getaffinity(0))
    go_r, go_w = os.pipe()
    # Shared by the processes forked below, which all have as many
    # operations.
    if len({len(ops) for ops in tasks}) != 1:
        raise ValueError("the tasks of a concurrent workload differ in their number of operations")
    step = multiprocessing.Barrier(len(tasks))
    pids = []
    for t, ops in enumerate(tasks):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(go_w)
                task_main(t, ops, view, pin, go_r, step)
                code = 0
            except BaseException as e:	# the parent reports the exit code
                print(f"task {t}: {e!r}", file=sys.stderr, flush=True)
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(go_r)
    os.write(go_w, b"g" * len(tasks))
    os.close(go_w)
    status = {}
    flip = 0
    while len(status) < len(pids):
        flip += 1
        for t, pid in enumerate(pids):
            if pid in status:
                continue
            done, st = os.waitpid(pid, 0 if pin else os.WNOHANG)
            if done:
                status[pid] = os.waitstatus_to_exitcode(st)
            elif not pin:
                # To the other CPU; a task in a transaction moves when it
                # leaves the mapping layer (vsmfs_vsp_exit()), just before
                # its commit makes its fence.
                try:
                    os.sched_setaffinity(pid, {(flip + t) % ncpu})
                except ProcessLookupError:
                    pass
        if not pin:
            time.sleep(0.001)
    if any(status.values()):
        raise OSError(f"a task failed: exit codes {list(status.values())}")
    views = []
    for t in range(len(tasks)):
        with open(f"{TASKFILE}.{t}") as f:
            views.append(json.load(f))
    return views


def run_concurrent(label, dev, args, totals):
    name, _, optset = label.partition("@")
    setup, tasks, view, owns, pin = CONCURRENT[name]
    param, expect = EXPECT_FAIL.get(label, (None, None))
    ntasks = len(tasks)
    if len(os.sched_getaffinity(0)) < 2:
        raise OSError(f"{label}: needs two CPUs, the VM has one")
    start = time.monotonic()
    fresh_fs(optset)
    setup(MNT)
    # Durable before the log begins, with group commit too.
    os.sync()
    static = shape(MNT, owns, ntasks)
    # views[t][i]: what task t changes, after its first i operations.
    views = [[view(MNT, t)] for t in range(ntasks)]
    before = counters()
    dev.capture()
    if param:
        set_param(param, 1)
    pmlog("on")
    try:
        got = run_tasks(tasks, view, pin)
    finally:
        if param:
            set_param(param, 0)
    after = counters()
    if args.mode == "long":
        umount()
    pmlog("off")
    if args.mode != "long":
        umount()
    state = pmlog_state()
    shutil.copyfile(DATA, LOGFILE)
    log = pmreplay.Log(LOGFILE)
    for t in range(ntasks):
        views[t] += got[t]
    # The operations each task had returned from at each point: its marks.
    marks = sorted((i, v >> 32, v & 0xFFFFFFFF) for i, _, _, v in log.marks)
    if len(marks) != sum(len(ops) for ops in tasks):
        raise OSError(f"{len(marks)} marks in the log, for "
                      f"{sum(len(ops) for ops in tasks)} operations")

    def returned(p):
        done = [0] * ntasks
        for i, t, n in marks:
            if i < p.pos:
                done[t] = max(done[t], n)
        return tuple(done)

    def check(done):
        err = mount()
        if err:
            out = subprocess.run(["dmesg", "-c"], capture_output=True, text=True).stdout
            tail = [line for line in out.splitlines() if "vsmfs" in line][-3:]
            return f"mount failed: {err}; " + " | ".join(tail)
        try:
            now = [view(MNT, t) for t in range(ntasks)]
            names = shape(MNT, owns, ntasks)
        except Exception as e:	# a damaged tree may fail in any way
            now = None
            why = f"reading the tree failed: {e!r}"
        umount()
        res = subprocess.run([FSCK, "-n", DEV], capture_output=True, text=True)
        if res.returncode:
            return "fsck.vsmfs -n: " + " | ".join((res.stdout + res.stderr).splitlines()[:8])
        if now is None:
            return why
        problems = []
        if names != static:
            changed = sorted({n for n, _ in set(names.items()) ^ set(static.items())})
            problems.append("names no task made changed: " + " ".join(changed[:4]))
        for t in range(ntasks):
            ok = views[t][done[t]:done[t] + 2]
            if now[t] in ok:
                continue
            at = [i for i, v in enumerate(views[t]) if v == now[t]]
            problems.append(
                f"task {t}: {done[t]} of its {len(tasks[t])} operations had returned, "
                f"it holds " + (f"the state after {at[0]}" if at else
                                "no state of its operations: " + " | ".join(
                                    [f"+ {x}" for x in now[t] if x not in ok[-1]][:3] +
                                    [f"- {x}" for x in ok[-1] if x not in now[t]][:3])))
        return "; ".join(problems) or None

    # A negative control: every crash point, every image (it stops at the
    # first that catches it).
    select = count_points(sample(log, CONC_SHORT_POINTS if args.mode != "long" and not expect else 0,
                                 args.seed, label))
    bounds = CONC_LONG_IMAGES if args.mode == "long" else CONC_SHORT_IMAGES
    result = check_images(label, dev, log, args, bounds[:3] + (0,) if expect else bounds,
                          expect, returned, check, None, select)
    rp = result[0]
    rp.checked = select.checked
    waits = after["journal_order_waits"] - before["journal_order_waits"]
    pipelined = after["journal_pipelined"] - before["journal_pipelined"]
    copies = after["journal_frozen_copies"] - before["journal_frozen_copies"]
    totals["order_waits"] += waits
    totals["pipelined"] += pipelined
    kinds = SHARED_COUNTER.get(name, ("trans_shared_meta",))
    shared = sum(after[c] - before[c] for c in kinds)
    # With group commit, what the workload is for: its operations beside
    # each other, in shared handles.
    if optset == "group" and shared < sum(len(ops) for ops in tasks) // 2:
        print(f"FAIL: {label}: {shared} of its operations ran in shared handles", flush=True)
        result = result[:3] + (result[3] + 1,) + result[4:]
    must = GROUP_COUNTERS.get(name) if optset == "group" else None
    if optset == "fc":
        must = FC_COUNTER
    if must and after[must] == before[must]:
        print(f"FAIL: {label}: {must} did not move", flush=True)
        result = result[:3] + (result[3] + 1,) + result[4:]
    cpus = sorted({r[1] for r in log.records if r[0] != pmreplay.MARK})
    extra = (f"  {after['trans_commits'] - before['trans_commits']} commits, {waits} waited "
             f"for their turn, {pipelined} pipelined, {copies} blocks copied for them, "
             f"{shared} shared "
             f"{' and '.join('write' if c == 'trans_shared_handles' else 'metadata' for c in kinds)}"
             f" handles; "
             f"cpus {cpus}, {rp.moved} lines made "
             f"durable after their task moved")
    report(label, dev, log, args, totals, result, expect, param, state, start, extra)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["short", "long"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--optsets", default="",
                    help="comma-separated option sets of the long run to take "
                         "(\"default\" for none), all if empty: a shard of it")
    ap.add_argument("--workloads", choices=["single", "concurrent", "all"], default="all")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep every base and log in build/ordering")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per crash image")
    args = ap.parse_args()
    if args.mode == "long":
        sets = args.optsets.split(",") if args.optsets else None
        take = [o for o in OPTION_SETS if sets is None or (o or "default") in sets]
        bad = [o for o in sets or [] if o != "default" and o not in OPTION_SETS]
        if bad:
            ap.error(f"unknown option sets: {','.join(bad)}")
        names = [f"{n}@{o}" if o else n for o in take for n in WORKLOADS]
        names += [f"{n}@{o}" if o else n for o in CONC_OPTION_SETS if o in take
                  for n in CONCURRENT
                  if (o != "group" or n in CONC_GROUP) and (o != "fc" or n in CONC_FC)]
    else:
        names = [n for n in WORKLOADS if n not in KNOWN | SHORT_SKIP] + \
            [f"{n}@ckpt" for n in SHORT_CKPT] + [f"{n}@group" for n in SHORT_GROUP] + \
            [n for n in CONCURRENT if n not in CONC_GROUP] + [f"{n}@group" for n in CONC_GROUP] + \
            [f"{n}@fc" for n in CONC_FC]
    names += list(EXPECT_FAIL)
    if args.workloads != "all":
        names = [n for n in names
                 if (n.partition("@")[0] in CONCURRENT) == (args.workloads == "concurrent")]
    if args.only:
        names = args.only.split(",")
    if args.list:
        print("\n".join(names))
        return 0
    dev = Device(DEV)
    kinds = ("workloads", "fences", "points", "images") + pmreplay.KINDS
    totals = {"single": dict.fromkeys(kinds, 0), "concurrent": dict.fromkeys(kinds, 0),
              "failed": 0, "known": 0, "caught": 0, "order_waits": 0, "pipelined": 0}
    start = time.monotonic()
    for name in names:
        if name.partition("@")[0] in CONCURRENT:
            run_concurrent(name, dev, args, totals)
        else:
            run_workload(name, dev, args, totals)
    conc = [n for n in names if n.partition("@")[0] in CONCURRENT and n not in EXPECT_FAIL]
    if conc and not totals["order_waits"] + totals["pipelined"]:
        totals["failed"] += 1
        print("FAIL: no commit of the concurrent workloads was pipelined or waited for its "
              "turn: commits in flight together were not exercised", flush=True)
    for kind in ("single", "concurrent"):
        t = totals[kind]
        print(f"{kind}: {t['workloads']} workloads, {t['fences']} fences, "
              f"{t['points']} crash points checked, {t['images']} crash images "
              f"({', '.join(f'{k} {t[k]}' for k in pmreplay.KINDS)})", flush=True)
    print(f"{args.mode} run, seed {args.seed}: "
          f"{totals['single']['workloads'] + totals['concurrent']['workloads']} workloads, "
          f"{totals['single']['images'] + totals['concurrent']['images']} crash images, "
          f"{totals['failed']} failed, {totals['known']} known, "
          f"{totals['caught']} expected (negative controls); "
          f"{totals['order_waits']} commits waited for their turn, "
          f"{totals['pipelined']} pipelined; {time.monotonic() - start:.0f}s", flush=True)
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
