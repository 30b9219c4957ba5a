# SPDX-License-Identifier: GPL-2.0
"""Guest side of the generated crash workloads of the ordering group:
sequences of operations made by a generator in the style of ACE (the
workload generator of CrashMonkey), each checked at every crash point of
its persistence-ordering log with the machinery of ordering.py.

  gen.py short|long|control [--seed S] [--count N] [--len2 N] [--len3 N]
         [--shard I/N] [--only NAME,...] [--list] [--keep] [-v]

The instrumented module (build/pmlog/vsmfs.ko) must be loaded.

The generator. Every workload starts from the same base tree (base_tree()):
directories A, B and the empty C; files A/foo (8 KiB), A/bar (3000 bytes,
an xattr), B/baz (64 KiB), A/empty, big (2 MiB + 64 KiB: its data spans
the 2 MiB superpage boundary) and sparse (4 KiB, a 1 MiB hole, 4 KiB); a
hard link B/hl of A/foo and a symbolic link sl to A/foo. OPS are the
operations with their argument classes, each on every object of the base
tree where it makes sense: creat, mkdir, link, unlink, rmdir, rename (in a
directory, across directories, over a file, over a link of a linked
file, exchange, noreplace, of directories), symlink (inline and in a
block), write (append, overwrite, into a hole, past the end leaving a
gap, of 1 byte, 4 KiB and unaligned, across a superpage boundary),
truncate (grow, shrink, to 0), fallocate (each mode: default, keep size,
punch hole, zero range, collapse range, insert range), setxattr and
removexattr, chmod and utimes, an O_TMPFILE file (closed, or linked in
with linkat), and the syncs: fsync and fdatasync of files and
directories, sync and syncfs. Each has a name without '/', and a model
of the names it needs and makes, so that a sequence is made only of
operations that apply where it stands. The model is coarse (a sequence
may move a directory away from under a name): an operation may fail,
changing nothing, but only with an error such a mismatch explains
(MODEL_ERRORS); any other error fails the run.

Workloads, each named by its operations and its mount mode
("OP+OP+OP@MODE"), so that --only NAME runs one alone with no seed:
  length 1  every operation alone, under commit=sync ("@sync"); under
            group commit (commit=300, "@group") every operation that
            changes something followed by an fsync of what it changed,
            and every sync alone
  length 2  a seeded sample of pairs, with and without a sync (of one of
            the kinds above, drawn) between them, under either mode
  length 3  the same with three operations
  chipmunk  one workload per class of bug Chipmunk (EuroSys'23) found in
            PM file systems that applies to vsmfs (CHIPMUNK)

The oracle. The test takes the digest of the tree (ordering.digest())
before the first operation and after each (the states S0..Sn), and the
state of every inode by number, and marks the log as each operation
returns. At a crash point where r operations had returned, an image must
mount, pass fsck.vsmfs -n, and hold Sk for some k with lo <= k <= r + 1:
every operation all or nothing, and the survivors a prefix of the
operations, in order (vsmfs commits whole transactions in order: nothing
is there whose result depends on an operation that is not). With
commit=sync, lo = r: each operation is durable when it returns. With group
commit, lo is the promise of the syncs returned: sync and syncfs promise
every operation before them; fsync of a file or directory promises that
inode as it is (data, size, times, xattrs, entries), so, the survivors
being a prefix, every operation up to the last before it that changed the
inode; fdatasync of a file the same for the operations that changed its
data or size. No more: an fsync of an inode no operation changed promises
nothing, though vsmfs may have committed more. A recovered image of a
sample (every USE_EVERY-th checked image of a workload, the image of its
end with every flush made, and every other image of
chipmunk-recovery-dram) is also used: a file created in each directory, written, read back, then
every file deleted and every directory removed, and fsck run again.

Runs: short (make test) takes the chipmunk workloads and a seeded slice of
SHORT_COUNT workloads of the length-1 set and the length-2 sample, with
SHORT_IMAGES crash images per point, at SHORT_POINTS crash points of a
workload of more (one at random in each equal stretch of its log, and the
end); long (make crash-long) the chipmunk workloads, the whole
length-1 set, the length-2 sample (--len2, LONG_LEN2 by default) and the
length-3 sample (--len3), at every crash point, with GEN_IMAGES per point,
split into shards with --shard I/N (workload i in shard i % N + 1). The
bounds are vsmfs-pmreplay's (see ordering.py).

The negative control (control): the fault point fsync_nocommit of the
test module makes fsync return 0 without committing. CONTROL workloads
(an operation and an fsync of what it changed, under group commit) run
unarmed, where each must pass, and armed, where each must have an image
the oracle rejects for a promise not kept; the run fails otherwise. So
must CONTROL_FC, an overwrite whose fsync writes a fast-commit record,
with the fault point fc_nofence (the record stored without its fence).
"""

import argparse
import ctypes
import errno
import os
import random
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ordering as o  # noqa: E402

pmreplay = o.pmreplay
KIB, MIB = o.KIB, o.MIB
MODES = {"sync": "aggregate=off,checkpoint=0,commit=sync",
         # Group commit with a commit interval no workload reaches: only
         # the syncs of the workload commit within its log.
         "group": "aggregate=off,checkpoint=0,commit=300"}
GEN_IMAGES = (4, 1, 1, 8)
SHORT_IMAGES, SHORT_POINTS = (2, 1, 1, 4), 24
USE_EVERY = 8
SHORT_COUNT = 1
LONG_LEN2, LONG_LEN3 = 2000, 200
FAULT = "/sys/kernel/debug/vsmfs/fsync_nocommit/interval"
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
FALLOC_KEEP, FALLOC_PUNCH, FALLOC_COLLAPSE, FALLOC_ZERO, FALLOC_INSERT = 0x1, 0x2, 0x8, 0x10, 0x20
AT_FDCWD = -100
libc = o.libc


def base_tree(m):
    for d in ("A", "B", "C"):
        os.mkdir(f"{m}/{d}")
    o.put(f"{m}/A/foo", 8 * KIB, 11)
    o.put(f"{m}/A/bar", 3000, 12)
    os.setxattr(f"{m}/A/bar", "user.x", b"x" * 40)
    o.put(f"{m}/B/baz", 64 * KIB, 13)
    o.creat(f"{m}/A/empty")
    o.put(f"{m}/big", 2 * MIB + 64 * KIB, 14)
    o.put(f"{m}/sparse", 4 * KIB, 15)
    o.pwrite(f"{m}/sparse", MIB + 4 * KIB, 4 * KIB, 16)
    os.link(f"{m}/A/foo", f"{m}/B/hl")
    os.symlink("A/foo", f"{m}/sl")


BASE_NAMES = {"A": "d", "B": "d", "C": "d", "A/foo": "f", "A/bar": "f", "B/baz": "f",
              "A/empty": "f", "big": "f", "sparse": "f", "B/hl": "f", "sl": "l"}
# Short names of the objects, for the names of the operations.
SHORT = {"A/foo": "foo", "A/bar": "bar", "B/baz": "baz", "A/empty": "empty", "big": "big",
         "sparse": "sparse", "B/hl": "hl", "sl": "sl", "A": "A", "B": "B", "C": "C", ".": "root"}


def rename2(src, dst, flags):
    if libc.renameat2(AT_FDCWD, src.encode(), AT_FDCWD, dst.encode(), flags) != 0:
        raise OSError(ctypes.get_errno(), f"renameat2 {src} {dst}")


def write_at(path, off, n, seed, flags=0):
    fd = os.open(path, os.O_WRONLY | flags)
    try:
        if flags & os.O_APPEND:
            os.write(fd, o.data(n, seed))
        else:
            os.pwrite(fd, o.data(n, seed), off)
    finally:
        os.close(fd)


def syncfd(path, datasync):
    fd = os.open(path, os.O_RDONLY)
    try:
        (os.fdatasync if datasync else os.fsync)(fd)
    finally:
        os.close(fd)


def syncfs(m):
    fd = os.open(m, os.O_RDONLY)
    try:
        if libc.syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), "syncfs")
    finally:
        os.close(fd)


AT_SYMLINK_FOLLOW = 0x400


def tmpfile(m, d, link):
    fd = os.open(f"{m}/{d}", os.O_TMPFILE | os.O_RDWR, 0o600)
    try:
        os.write(fd, o.data(5000, 21))
        # linkat(2) through /proc, following the link to the open file
        # (os.link() without a directory descriptor calls link(2), which
        # would link the /proc entry itself: EXDEV).
        if link and libc.linkat(AT_FDCWD, f"/proc/self/fd/{fd}".encode(), AT_FDCWD,
                                f"{m}/{link}".encode(), AT_SYMLINK_FOLLOW) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e), f"{m}/{link}")
    finally:
        os.close(fd)


# The errors of an operation the coarse model of names may let happen.
MODEL_ERRORS = {errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR,
                errno.EINVAL}


class Op:
    """One operation: @name, @fn(m), the names (path -> kind "f", "d",
    "l") it needs to exist and not to exist, its effect on the names
    (@effect(names) -> names), the object whose fsync makes it durable
    (@obj, None for none), and @sync: None, or the kind of sync it is
    ("fsync", "fdatasync", "sync")."""

    def __init__(self, name, fn, needs=(), absent=(), effect=None, obj=None, sync=None):
        self.name, self.fn, self.needs, self.absent = name, fn, needs, absent
        self.effect, self.obj, self.sync = effect, obj, sync

    def applies(self, names):
        return all(p in names for p in self.needs) and not any(p in names for p in self.absent)

    def apply(self, names):
        return self.effect(dict(names)) if self.effect else names


def parent(p):
    return os.path.dirname(p) or "."


def add(p, kind):
    def eff(n):
        n[p] = kind
        return n
    return eff


def remove(*ps):
    def eff(n):
        for p in ps:
            for q in [q for q in n if q == p or q.startswith(p + "/")]:
                del n[q]
        return n
    return eff


def move(src, dst):
    def eff(n):
        moved = {dst + q[len(src):]: k for q, k in n.items() if q == src or q.startswith(src + "/")}
        n = remove(src, dst)(n)
        n.update(moved)
        return n
    return eff


def exchange(a, b):
    def eff(n):
        x = {b + q[len(a):]: k for q, k in n.items() if q == a or q.startswith(a + "/")}
        y = {a + q[len(b):]: k for q, k in n.items() if q == b or q.startswith(b + "/")}
        n = remove(a, b)(n)
        n.update(x)
        n.update(y)
        return n
    return eff


def make_ops():
    ops = []

    def op(*args, **kw):
        ops.append(Op(*args, **kw))

    for p in ("A/new", "B/new", "new"):
        op(f"creat-{p.replace('/', '-')}", lambda m, p=p: o.creat(f"{m}/{p}"),
           needs=[parent(p)] if parent(p) != "." else [], absent=[p], effect=add(p, "f"), obj=p)
    for p in ("A/sub", "sub"):
        op(f"mkdir-{p.replace('/', '-')}", lambda m, p=p: os.mkdir(f"{m}/{p}"),
           needs=[parent(p)] if parent(p) != "." else [], absent=[p], effect=add(p, "d"), obj=p)
    for src, dst in (("A/foo", "B/foo2"), ("A/bar", "A/bar2"), ("big", "A/big2")):
        op(f"link-{SHORT[src]}-{dst.replace('/', '-')}",
           lambda m, s=src, d=dst: os.link(f"{m}/{s}", f"{m}/{d}"),
           needs=[src, parent(dst)], absent=[dst], effect=add(dst, "f"), obj=src)
    for p in ("A/foo", "A/bar", "B/baz", "A/empty", "big", "sparse", "B/hl", "sl"):
        op(f"unlink-{SHORT[p]}", lambda m, p=p: os.unlink(f"{m}/{p}"), needs=[p],
           effect=remove(p), obj=parent(p))
    op("rmdir-C", lambda m: os.rmdir(f"{m}/C"), needs=["C"], absent=[], effect=remove("C"),
       obj=".")
    # rename: (name, src, dst, flags, what must not exist at dst)
    for name, src, dst, flags in (
            ("rename-foo-samedir", "A/foo", "A/foo2", 0),
            ("rename-bar-acrossdir", "A/bar", "B/bar", 0),
            ("rename-bar-replace-baz", "A/bar", "B/baz", 0),
            ("rename-bar-replace-hl", "A/bar", "B/hl", 0),
            ("rename-empty-replace-foo", "A/empty", "A/foo", 0),
            ("rename-foo-noreplace", "A/foo", "B/foo3", RENAME_NOREPLACE),
            ("rename-sl-acrossdir", "sl", "B/sl2", 0),
            ("rename-dirA-intoB", "A", "B/A2", 0),
            ("rename-dirB-replace-C", "B", "C", 0),
            ("rename-dirC-intoA", "C", "A/C2", 0)):
        needs = [src, parent(dst)] + ([dst] if "replace" in name and flags == 0 else [])
        absent = [] if "replace" in name else [dst]
        op(name, lambda m, s=src, d=dst, f=flags: rename2(f"{m}/{s}", f"{m}/{d}", f),
           needs=needs, absent=absent, effect=move(src, dst), obj=parent(dst))
    for name, a, b in (("rename-xchg-foo-baz", "A/foo", "B/baz"),
                       ("rename-xchg-bar-empty", "A/bar", "A/empty"),
                       ("rename-xchg-dirA-dirB", "A", "B")):
        op(name, lambda m, a=a, b=b: rename2(f"{m}/{a}", f"{m}/{b}", RENAME_EXCHANGE),
           needs=[a, b], effect=exchange(a, b), obj=parent(b))
    op("symlink-inline", lambda m: os.symlink("A/bar", f"{m}/B/sl3"), needs=["B"],
       absent=["B/sl3"], effect=add("B/sl3", "l"), obj="B")
    op("symlink-block", lambda m: os.symlink("t" * 300, f"{m}/A/sl4"), needs=["A"],
       absent=["A/sl4"], effect=add("A/sl4", "l"), obj="A")
    # write: (class, offset(size), length, flags); on the files of the
    # base tree, with their sizes there (the model does not track sizes:
    # in a sequence an offset may land elsewhere, still a valid write).
    sizes = {"A/foo": 8 * KIB, "B/baz": 64 * KIB, "big": 2 * MIB + 64 * KIB,
             "sparse": MIB + 8 * KIB, "A/empty": 0}
    classes = [
        ("append-1", None, 1), ("append-4k", None, 4 * KIB), ("append-unal", None, 5000),
        ("over-1", lambda s: 100, 1), ("over-4k", lambda s: 4 * KIB, 4 * KIB),
        ("over-unal", lambda s: 1000, 3000),
        ("hole", lambda s: 512 * KIB, 4 * KIB),
        ("pasteof", lambda s: s + 10000, 3000),
        ("span-sp", lambda s: 2 * MIB - 3000, 10000),
    ]
    for p, size in sizes.items():
        for cls, off, n in classes:
            if size == 0 and cls.startswith("over"):
                continue
            if cls == "hole" and p != "sparse":
                continue
            flags = os.O_APPEND if off is None else 0
            op(f"write-{SHORT[p]}-{cls}",
               lambda m, p=p, off=off, n=n, size=size, flags=flags, s=len(ops):
               write_at(f"{m}/{p}", off(size) if off else 0, n, s, flags),
               needs=[p], obj=p)
    for p, size in sizes.items():
        if not size:
            continue
        for cls, to in (("grow", size + 100000), ("shrink", size // 2 - 100), ("zero", 0)):
            op(f"truncate-{SHORT[p]}-{cls}", lambda m, p=p, to=to: os.truncate(f"{m}/{p}", to),
               needs=[p], obj=p)
    for p, size in (("B/baz", 64 * KIB), ("big", 2 * MIB + 64 * KIB), ("sparse", MIB + 8 * KIB)):
        for cls, mode, off, n in (("default", 0, size, 256 * KIB),
                                  ("keep", FALLOC_KEEP, size, 256 * KIB),
                                  ("punch", FALLOC_PUNCH | FALLOC_KEEP, 4 * KIB, 16 * KIB),
                                  ("zero", FALLOC_ZERO, 2000, 20000),
                                  ("collapse", FALLOC_COLLAPSE, 4 * KIB, 8 * KIB),
                                  ("insert", FALLOC_INSERT, 4 * KIB, 8 * KIB)):
            op(f"falloc-{SHORT[p]}-{cls}",
               lambda m, p=p, mode=mode, off=off, n=n: o.fallocate_mode(f"{m}/{p}", mode, off, n),
               needs=[p], obj=p)
    op("setxattr-foo", lambda m: os.setxattr(f"{m}/A/foo", "user.new", b"v" * 100),
       needs=["A/foo"], obj="A/foo")
    op("setxattr-dirA", lambda m: os.setxattr(f"{m}/A", "user.d", b"d" * 30), needs=["A"],
       obj="A")
    op("replacexattr-bar", lambda m: os.setxattr(f"{m}/A/bar", "user.x", b"y" * 200),
       needs=["A/bar"], obj="A/bar")
    op("removexattr-bar", lambda m: os.removexattr(f"{m}/A/bar", "user.x"), needs=["A/bar"],
       obj="A/bar")
    op("chmod-foo", lambda m: os.chmod(f"{m}/A/foo", 0o600), needs=["A/foo"], obj="A/foo")
    op("chmod-dirB", lambda m: os.chmod(f"{m}/B", 0o700), needs=["B"], obj="B")
    op("utimes-baz", lambda m: os.utime(f"{m}/B/baz", ns=(10**18, 10**18)), needs=["B/baz"],
       obj="B/baz")
    op("utimes-sl", lambda m: os.utime(f"{m}/sl", ns=(2 * 10**18, 2 * 10**18),
                                       follow_symlinks=False), needs=["sl"], obj=None)
    op("tmpfile-close", lambda m: tmpfile(m, "A", None), needs=["A"], obj=None)
    op("tmpfile-link", lambda m: tmpfile(m, "A", "A/tmp"), needs=["A"], absent=["A/tmp"],
       effect=add("A/tmp", "f"), obj="A/tmp")
    for p in ("A/foo", "B/baz", "A", "."):
        op(f"fsync-{SHORT[p]}", lambda m, p=p: syncfd(f"{m}/{p}", False), needs=[p] if p != "."
           else [], sync="fsync", obj=p)
        op(f"fdatasync-{SHORT[p]}", lambda m, p=p: syncfd(f"{m}/{p}", True),
           needs=[p] if p != "." else [], sync="fdatasync", obj=p)
    op("sync", lambda m: os.sync(), sync="sync")
    op("syncfs", syncfs, sync="sync")
    return ops


OPS = make_ops()
OPMAP = {op.name: op for op in OPS}
SYNCS = [op for op in OPS if op.sync]
# Ops whose fsync(obj) a group-mode workload of length 1 adds.
CHANGES = [op for op in OPS if not op.sync]


def fsync_op(path):
    """The fsync of @path (a path of the tree, "." the root), as an Op."""
    name = f"fsync-{path.replace('/', '-') if path != '.' else 'root'}"
    return Op(name, lambda m: syncfd(f"{m}/{path}", False), sync="fsync", obj=path)


def lookup(name):
    """The Op named @name: one of OPS, or fsync-PATH of any path."""
    if name in OPMAP:
        return OPMAP[name]
    if name.startswith("fsync-"):
        rest = name[len("fsync-"):]
        return fsync_op("." if rest == "root" else rest.replace("-", "/"))
    raise KeyError(f"no operation {name}")


# The classes of bugs Chipmunk found in NOVA, PMFS and WineFS that apply to
# vsmfs, one workload each: name -> (operations, mode).
CHIPMUNK = {
    # A rename over one link of a file with two: the source's entry, the
    # target's entry and the replaced inode's link count change together.
    "chipmunk-rename-linkcount": ("link-bar-A-bar2+rename-bar-replace-hl+fsync-B", "sync"),
    # Several transactions appended to the journal, each made durable by
    # an fsync before the next: the journal tail advances per commit, and
    # each crash point must find exactly the committed prefix.
    "chipmunk-log-tail": ("creat-A-new+fsync-A+write-foo-append-unal+fsync-foo+"
                          "rename-bar-acrossdir+fsync-B", "group"),
    # Recovery rebuilds the DRAM state (allocators, inode table, directory
    # index, orphans): an O_TMPFILE file freed, a file made and one removed,
    # and every recovered image used (create, write, delete everything).
    "chipmunk-recovery-dram": ("tmpfile-close+creat-B-new+unlink-baz", "sync"),
    # Data atomicity of the atomic data mode (data=atomic, the default):
    # an unaligned overwrite across the superpage boundary is all old or
    # all new at every crash point.
    "chipmunk-atomic-data": ("write-big-span-sp+truncate-foo-shrink", "sync"),
    # Ordering across file descriptors: data written through one
    # descriptor, fsync through another of the same file.
    "chipmunk-fd-ordering": ("fd2-write-foo+fd2-fsync-foo", "group"),
}


# Descriptors the operations of chipmunk-fd-ordering share.
FDS = {}


def fd2_write(m):
    """Open A/foo twice; write through the first (closed), keep the
    second for the next operation."""
    FDS["foo"] = os.open(f"{m}/A/foo", os.O_RDONLY)
    fd = os.open(f"{m}/A/foo", os.O_WRONLY)
    try:
        os.pwrite(fd, o.data(6000, 31), 2000)
    finally:
        os.close(fd)


def fd2_fsync(m):
    fd = FDS.pop("foo")
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


OPMAP["fd2-write-foo"] = Op("fd2-write-foo", fd2_write, needs=["A/foo"], obj="A/foo")
OPMAP["fd2-fsync-foo"] = Op("fd2-fsync-foo", fd2_fsync, sync="fsync", obj="A/foo")

# The negative control's workloads: an operation and an fsync of what it
# changed, under group commit.
CONTROL = ["creat-A-new+fsync-A-new@group", "write-baz-over-4k+fsync-B-baz@group",
           "rename-bar-acrossdir+fsync-B@group"]
# And of fast commits: an overwrite whose fsync writes a fast record,
# stored without its fence by the fault point fc_nofence.
CONTROL_FC = ["write-baz-over-4k+fsync-B-baz@group"]
FAULT_FC = "/sys/kernel/debug/vsmfs/fc_nofence/interval"


def length1():
    out = [f"{op.name}@sync" for op in OPS]
    for op in OPS:
        if op.sync:
            out.append(f"{op.name}@group")
        elif op.obj:
            out.append(f"{op.name}+{fsync_op(op.obj).name}@group")
        else:
            out.append(f"{op.name}+sync@group")
    return out


def sample(length, count, seed):
    """@count sequences of @length operations drawn with @seed, each
    applicable where it stands, with or without a sync between each two,
    under either mode; names distinct."""
    rnd = random.Random(f"gen:{seed}:{length}")
    out = []
    seen = set()
    tries = 0
    while len(out) < count and tries < count * 50:
        tries += 1
        names = dict(BASE_NAMES)
        seq = []
        for i in range(length):
            op = rnd.choice([x for x in CHANGES if x.applies(names)])
            seq.append(op.name)
            names = op.apply(names)
            if i + 1 < length and rnd.random() < 0.5:
                s = rnd.choice([x for x in SYNCS if x.applies(names)])
                seq.append(s.name)
        mode = rnd.choice(list(MODES))
        if mode == "group" and not OPMAP[seq[-1]].sync and rnd.random() < 0.7:
            # Commit the end too, most of the time, with a sync drawn.
            seq.append(rnd.choice([x for x in SYNCS if x.applies(names)]).name)
        name = "+".join(seq) + "@" + mode
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def inodes(root):
    """{inode number: its digest line without the name} of the tree."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in [""] + dirs + files if dirpath == root else dirs + files:
            p = os.path.join(dirpath, n) if n else dirpath
            out[os.lstat(p).st_ino] = o.entry(p, "")
    return out


def data_of(line):
    """The size and data of an inode line (what fdatasync promises)."""
    return re.findall(r" size \d+| data \w+", line or "")


def fresh_fs(mode):
    """mkfs, mount in @mode, the base tree, durable."""
    subprocess.run([o.MKFS, "-q", "-f", "-J", "4M", o.DEV], check=True)
    err = o.mount(MODES[mode])
    if err:
        raise OSError(f"mount of the fresh file system: {err}")
    base_tree(o.MNT)
    os.sync()


def usable():
    """Use the image on the device: mount, a file made, written and read
    back in each directory, then everything deleted; fsck. None or what
    failed."""
    err = o.mount()
    if err:
        return f"usability: mount failed: {err}"
    try:
        dirs = [o.MNT] + [os.path.join(dp, d) for dp, ds, _ in os.walk(o.MNT) for d in ds]
        for i, d in enumerate(dirs):
            p = os.path.join(d, "use.tmp")
            o.put(p, 9000, 100 + i)
            with open(p, "rb") as f:
                if f.read() != o.data(9000, 100 + i):
                    return f"usability: {p} reads back other data"
        for dp, ds, fs in os.walk(o.MNT, topdown=False):
            for f in fs:
                os.unlink(os.path.join(dp, f))
            for d in ds:
                full = os.path.join(dp, d)
                if os.path.islink(full):
                    os.unlink(full)
                else:
                    os.rmdir(full)
        left = os.listdir(o.MNT)
        if left:
            return f"usability: names left after deleting everything: {left[:4]}"
    except OSError as e:
        return f"usability: {e!r}"
    finally:
        o.umount()
    res = subprocess.run([o.FSCK, "-n", o.DEV], capture_output=True, text=True)
    if res.returncode:
        return "usability: fsck.vsmfs -n after deleting everything: " + \
            " | ".join((res.stdout + res.stderr).splitlines()[:6])
    return None


def check_state(states, lo, hi):
    """None if the image on the device mounts, passes fsck and holds
    states[k] for some lo <= k <= hi, else what is wrong."""
    err = o.mount()
    if err:
        out = subprocess.run(["dmesg", "-c"], capture_output=True, text=True).stdout
        tail = [line for line in out.splitlines() if "vsmfs" in line][-3:]
        return f"mount failed: {err}; " + " | ".join(tail)
    try:
        got = o.digest(o.MNT)
    except Exception as e:	# a damaged tree may fail in any way
        got = None
        why = f"reading the tree failed: {e!r}"
    o.umount()
    res = subprocess.run([o.FSCK, "-n", o.DEV], capture_output=True, text=True)
    if res.returncode:
        return "fsck.vsmfs -n: " + " | ".join((res.stdout + res.stderr).splitlines()[:8])
    if got is None:
        return why
    if got in states[lo:hi + 1]:
        return None
    at = [k for k, s in enumerate(states) if s == got]
    if at:
        return (f"holds the state after {at[0]} operations, outside {lo}..{hi}: "
                f"a promise of {lo} operations not kept" if at[0] < lo else
                f"holds the state after {at[0]} operations, beyond {hi}")
    near = states[hi]
    return f"holds no state after 0..{len(states) - 1} operations (allowed {lo}..{hi}): " + \
        " | ".join([f"+ {x}" for x in got if x not in near][:3] +
                   [f"- {x}" for x in near if x not in got][:3])


def run_gen(label, dev, args, totals, param=None, expect=None):
    """Run the workload @label and check its crash images."""
    seqs, _, mode = label.partition("@")
    if label in CHIPMUNK:
        seqs, mode = CHIPMUNK[label]
    ops = [lookup(n) for n in seqs.split("+")]
    start = time.monotonic()
    fresh_fs(mode)
    m = o.MNT
    states = [o.digest(m)]
    inos = [inodes(m)]
    promise = [0]	# lo after each operation returned
    errors = []
    dev.capture()
    mark = os.open(o.MARKFILE, os.O_WRONLY)
    if param:
        with open(param, "w") as f:
            f.write("1")
    o.pmlog("on")
    try:
        for i, op in enumerate(ops, 1):
            target = None
            # A name an earlier operation failed to make has no inode.
            if op.sync in ("fsync", "fdatasync") and os.path.lexists(f"{m}/{op.obj}"):
                target = os.lstat(f"{m}/{op.obj}").st_ino
            try:
                op.fn(m)
            except OSError as e:
                # The model of names is coarse (a sequence may rename a
                # directory away; a range may no longer fit a collapse):
                # a failed operation changes nothing. Any other error is
                # not the model's to allow.
                if e.errno not in MODEL_ERRORS:
                    raise OSError(e.errno, f"{op.name} of {label}: {e.strerror}") from e
                errors.append(f"{op.name}: {errno.errorcode.get(e.errno, e.errno)}")
            os.write(mark, str(i).encode())
            states.append(o.digest(m))
            inos.append(inodes(m))
            if mode == "sync" or op.sync == "sync":
                lo = i
            elif op.sync:
                key = data_of if op.sync == "fdatasync" else (lambda x: x)
                changed = [j for j in range(1, i)
                           if key(inos[j - 1].get(target)) != key(inos[j].get(target))]
                lo = max(changed, default=0)
            else:
                lo = 0
            promise.append(max(promise[-1], lo))
    finally:
        if param:
            with open(param, "w") as f:
                f.write("0")
    o.pmlog("off")
    os.close(mark)
    o.umount()
    state = o.pmlog_state()
    shutil.copyfile(o.DATA, o.LOGFILE)
    log = pmreplay.Log(o.LOGFILE)
    marks = sorted((i, v) for i, _, _, v in log.marks)
    if len(marks) != len(ops):
        raise OSError(f"{len(marks)} marks in the log for {len(ops)} operations")

    def returned(p):
        return max([v for i, v in marks if i < p.pos], default=0)

    every = 2 if label == "chipmunk-recovery-dram" else USE_EVERY
    count = {"n": 0, "used": 0}

    def check(r):
        why = check_state(states, promise[r], min(r + 1, len(ops)))
        count["n"] += 1
        if why or count["n"] % every != 1 % every:
            return why
        count["used"] += 1
        return usable()

    # The short run: SHORT_POINTS crash points of a workload of more (one
    # at random in each equal stretch of the log, and the end).
    npoints = 0 if args.mode == "long" or expect else SHORT_POINTS
    select = o.count_points(o.sample(log, npoints, args.seed, label))
    bounds = GEN_IMAGES if args.mode == "long" else SHORT_IMAGES
    result = o.check_images(label, dev, log, args, bounds[:3] + (0,) if expect else bounds,
                            expect, returned, check, None, select)
    result[0].checked = select.checked
    # The image of the end, every flush made, used.
    if not expect:
        rp = pmreplay.Replay(dev.base, log)
        last = list(rp.points())[-1]
        dev.write_image(last.image(last.flush_choice(last.marked))[1])
        why = usable()
        count["used"] += 1
        if why:
            print(f"FAIL: {label}: crash image end:all: {why}", flush=True)
            result = result[:3] + (result[3] + 1,) + result[4:]
    totals["used"] += count["used"]
    o.report(label, dev, log, args, totals, result, expect, param, state, start,
             f"  {len(ops)} ops, {count['used']} used" +
             (f", failed as the model allows: {' '.join(errors)}" if errors else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["short", "long", "control"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=SHORT_COUNT,
                    help="workloads of the short run's slice")
    ap.add_argument("--len2", type=int, default=LONG_LEN2)
    ap.add_argument("--len3", type=int, default=LONG_LEN3)
    ap.add_argument("--shard", default="1/1")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    one = length1()
    two = sample(2, args.len2, args.seed)
    three = sample(3, args.len3, args.seed)
    if args.mode == "control":
        names = CONTROL
    elif args.mode == "long":
        i, _, n = args.shard.partition("/")
        i, n = int(i), int(n)
        if not 1 <= i <= n:
            ap.error(f"bad shard {args.shard}")
        names = [w for k, w in enumerate(list(CHIPMUNK) + one + two + three)
                 if k % n == i - 1]
    else:
        rnd = random.Random(f"short:{args.seed}")
        names = list(CHIPMUNK) + rnd.sample(one + two[:200], args.count)
    if args.only:
        names = args.only.split(",")
    if args.list:
        print("\n".join(names))
        return 0
    for name in names:
        if name not in CHIPMUNK:
            seqs, _, mode = name.partition("@")
            if mode not in MODES:
                ap.error(f"{name}: no mode (@sync or @group)")
            for n in seqs.split("+"):
                lookup(n)
    print(f"generator: {len(one)} workloads of length 1, {len(two)} of length 2, "
          f"{len(three)} of length 3 (seed {args.seed}); running {len(names)}", flush=True)
    dev = o.Device(o.DEV)
    kinds = ("workloads", "fences", "points", "images") + pmreplay.KINDS
    totals = {"single": dict.fromkeys(kinds, 0), "concurrent": dict.fromkeys(kinds, 0),
              "failed": 0, "known": 0, "caught": 0, "used": 0}
    start = time.monotonic()
    args.mode_run = args.mode
    args.mode = "short" if args.mode == "control" else args.mode
    if args.mode_run == "control":
        # Unarmed, each must pass; armed, each must be caught.
        for name in names:
            run_gen(name, dev, args, totals)
        for name in names:
            run_gen(name, dev, args, totals, FAULT, "a promise of .* not kept")
        for name in CONTROL_FC:
            run_gen(name, dev, args, totals, FAULT_FC, "a promise of .* not kept")
    else:
        for name in names:
            run_gen(name, dev, args, totals)
    t = totals["single"]
    print(f"generated: {t['workloads']} workloads, {t['fences']} fences, "
          f"{t['points']} crash points checked, {t['images']} crash images "
          f"({', '.join(f'{k} {t[k]}' for k in pmreplay.KINDS)}), {totals['used']} used; "
          f"{totals['failed']} failed, {totals['known']} known, {totals['caught']} expected "
          f"(negative control); {time.monotonic() - start:.0f}s", flush=True)
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
