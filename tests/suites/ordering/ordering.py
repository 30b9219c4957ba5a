# SPDX-License-Identifier: GPL-2.0
"""Guest side of the ordering group: single-operation workloads checked at
every crash point of their persistence-ordering log.

  ordering.py short|long [--seed S] [--only NAME,...] [--list]

The instrumented module (build/pmlog/vsmfs.ko) must be loaded. It logs
every store to PM, cached or not, so the crash images include lines written
back early by the cache (see tools/vsmfs-pmreplay). For each workload, on a fresh file system on $VSMFS_PMEM0: mount, set up, take the
digest of the tree ("pre"), copy the device ("base"), turn the log on, run
the one operation, turn the log off, take the digest again ("post") and
unmount (in the long run the unmount is logged too). Then
tools/vsmfs-pmreplay builds the crash images of the log, and each one is
written onto the device, mounted (recovery), digested, unmounted and
checked with fsck.vsmfs -n. vsmfs commits synchronously, so each image
must mount, pass fsck and hold the pre or the post tree; an image of a
crash after the operation returned must hold the post tree.

A digest is, for every name under the mount point: type, permissions,
link count, owner, size, modification and change times, contents (hash),
symlink target and extended attributes; and the free inode count of
statfs. Not the free block count: a write that starts a large run reserves
the rest of its superpage and gives back what it did not use in a
transaction of its own, so a crash in between holds the post tree with
the reservation still made (kept on PM, given back later).

The short run takes every workload but the KNOWN ones, a few again with
checkpoint_threshold=1 (journal GC and checkpoint at every commit), and at
every crash point the images of vsmfs-pmreplay with up to 16 single lines
of each kind (4 in the flush images crossed with eviction), one value
between per line and two random images of each kind. The long run takes every workload with every set of OPTION_SETS,
adds the unmount to the log, and tries up to 64 single lines (16 crossed
with eviction), eight values between and eight random images. A failure names the workload, the crash
image (POINT:SPEC, as vsmfs-pmreplay takes it) and the lines lost or left
at a value between; the base and log of a failing workload are kept in
build/ordering/ to reproduce it.

Negative controls (EXPECT_FAIL): workloads run with a test aid of the
instrumented module that makes a store deliberately misordered. Each must
have a crash image the check rejects with the failure it names; it is
reported as a failure if none is found, so a checker that went blind is
seen. Failures that match an entry of KNOWN_ISSUES are reported as known
and not counted. Of the expected and known failures of a workload the
first is shown, the others counted on its summary line.
"""

import argparse
import ctypes
import errno
import fcntl
import hashlib
import importlib.machinery
import mmap
import os
import re
import shutil
import stat
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
LOGFILE = "/tmp/ordering.pmlog"
WORK_OPTS = "aggregate=off,checkpoint=0"
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
    "nodelta": "journal_delta=off,journal_wear=off",
    "cow-page": "cow=page",
    "cow-sp": "cow=superpage",
}
# The workloads of the short run that also run with checkpoint_threshold=1.
SHORT_CKPT = ["creat", "rename-replace", "overwrite-4k", "setxattr", "truncate-shrink"]

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
}

# Operations that change nothing a digest sees: every crash image must hold
# the one tree.
UNSEEN = {"fsync", "syncfs", "remount-ro", "remount-rw"}


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


def run_workload(label, dev, args, totals):
    name, _, optset = label.partition("@")
    setup, op = WORKLOADS[name]
    param, expect = EXPECT_FAIL.get(label, (None, None))
    start = time.monotonic()
    # A 4 MiB journal: the atomic write limit (vsmfs(5)) of the default
    # journal of a 32 MiB device is below the 2 MiB of overwrite-2m, which
    # would then go in two parts, each atomic but not the whole.
    subprocess.run([MKFS, "-q", "-f", "-J", "4M", DEV], check=True)
    err = mount(",".join(filter(None, [WORK_OPTS, OPTION_SETS.get(optset, "")])))
    if err:
        raise OSError(f"mount of the fresh file system: {err}")
    base_tree(MNT)
    if setup:
        setup(MNT)
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
    singles, nrandom, nmid = (64, 8, 8) if args.mode == "long" else (16, 2, 1)
    n = failed = known = caught = 0
    kinds = dict.fromkeys(pmreplay.KINDS, 0)
    fence_at = [i for i, r in enumerate(log.records) if r[0] == pmreplay.FENCE]
    # Identical images are checked once, or twice if a crash after the
    # operation returned (which must hold the post tree) leaves one.
    seen = {}
    for ident, kind, p, choice, h, diff in pmreplay.images(dev.base, log, singles, nrandom,
                                                           args.seed, nmid):
        after_op = p.name == "end" or fence_at[int(p.name)] >= op_end
        if h in seen and (seen[h] or not after_op):
            continue
        seen[h] = after_op
        dev.write_image(diff)
        why = check_image(pre, post, after_op)
        n += 1
        kinds[kind] += 1
        if args.verbose:
            print(f"  {ident} {kind} units {len(p.units)} after-op {int(after_op)}: "
                  f"{why or 'ok'}", flush=True)
        if not why:
            continue
        what = f"{label}: crash image {ident} ({kind}, units {len(p.units)}, " \
               f"{p.describe(choice)}): {why}"
        if expect:
            if re.search(expect, why):
                caught += 1
                if caught == 1:
                    print(f"expected: {what}", flush=True)
                continue
        elif known_issue(why):
            known += 1
            if known == 1:
                print(f"KNOWN ({known_issue(why)}): {what}", flush=True)
            continue
        failed += 1
        print(f"FAIL: {what}", flush=True)
    if expect and not caught:
        failed += 1
        print(f"FAIL: {label}: negative control not caught: no crash image shows "
              f"'{expect}' ({param}=1)", flush=True)
    if failed or args.keep:
        os.makedirs(KEEP, exist_ok=True)
        with open(os.path.join(KEEP, f"{label}.base"), "wb") as f:
            f.write(dev.base)
        shutil.copyfile(LOGFILE, os.path.join(KEEP, f"{label}.pmlog"))
    totals["workloads"] += 1
    totals["fences"] += log.fences
    totals["images"] += n
    totals["failed"] += failed
    totals["known"] += known
    totals["caught"] += caught
    for k in kinds:
        totals[k] += kinds[k]
    stores = sum(1 for r in log.records if r[0] == pmreplay.STORE)
    print(f"{label:22s} {len(log.records):6d} records {stores:5d} stores {log.fences:4d} fences "
          f"{n:5d} images ({' '.join(f'{k} {v}' for k, v in kinds.items())}) "
          f"{failed:3d} failed" + (f" {known} known" if known else "") +
          (f" {caught} expected" if expect else "") +
          f"  foreign {state['foreign']}  {time.monotonic() - start:.0f}s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["short", "long"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep every base and log in build/ordering")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per crash image")
    args = ap.parse_args()
    if args.mode == "long":
        names = [f"{n}@{o}" if o else n for o in OPTION_SETS for n in WORKLOADS]
    else:
        names = [n for n in WORKLOADS if n not in KNOWN] + [f"{n}@ckpt" for n in SHORT_CKPT]
    names += list(EXPECT_FAIL)
    if args.only:
        names = args.only.split(",")
    if args.list:
        print("\n".join(names))
        return 0
    dev = Device(DEV)
    totals = dict.fromkeys(("workloads", "fences", "images", "failed", "known", "caught")
                           + pmreplay.KINDS, 0)
    start = time.monotonic()
    for name in names:
        run_workload(name, dev, args, totals)
    print(f"{args.mode} run, seed {args.seed}: {totals['workloads']} workloads, "
          f"{totals['fences']} crash points (fences), {totals['images']} crash images "
          f"({', '.join(f'{k} {totals[k]}' for k in pmreplay.KINDS)}), "
          f"{totals['failed']} failed, {totals['known']} known, "
          f"{totals['caught']} expected (negative controls), "
          f"{time.monotonic() - start:.0f}s", flush=True)
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
