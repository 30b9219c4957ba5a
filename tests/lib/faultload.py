# SPDX-License-Identifier: GPL-2.0
"""Workload for the fault injection tests (tests/suites/fault), in the VM.

  faultload.py prepare MNT       files whose contents must survive everything
  faultload.py stress MNT ERRNO...   creates, writes, appends, truncates,
                                 renames, links, unlinks, mkdir, rmdir, xattrs
                                 and reads; a call may fail only with one of
                                 the ERRNO names given
  faultload.py verify MNT        the prepared files are intact
  faultload.py readall MNT ERRNO...  read every prepared file; a read may fail
                                 only with one of the ERRNO names given
  faultload.py cowfail MNT KNOB  with the PM-read point KNOB failing every
                                 read, copy-on-writes that must keep old
                                 bytes fail with EIO and change nothing;
                                 appends (which read no old data) succeed
Prints how many calls succeeded and failed, by errno.
"""

import ctypes
import errno
import hashlib
import json
import os
import random
import sys

KEEP = "keep"
MANIFEST = "/tmp/faultload.manifest"


def prepare(mnt):
    rnd = random.Random(5)
    os.makedirs(os.path.join(mnt, KEEP), exist_ok=True)
    man = {}
    for i, n in enumerate([1, 4096, 5000, 300 << 10, (2 << 20) + 77]):
        p = os.path.join(KEEP, f"k{i}")
        data = rnd.randbytes(n)
        with open(os.path.join(mnt, p), "wb") as f:
            f.write(data)
        man[p] = hashlib.sha256(data).hexdigest()
    with open(MANIFEST, "w") as f:
        json.dump(man, f)


def verify(mnt):
    with open(MANIFEST) as f:
        man = json.load(f)
    for p, h in man.items():
        with open(os.path.join(mnt, p), "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != h:
                print(f"FAIL: {p} changed")
                return 1
    print(f"{len(man)} prepared files intact")
    return 0


class Calls:
    def __init__(self, allowed):
        self.allowed = {getattr(errno, e) for e in allowed}
        self.ok = 0
        self.errs = {}
        self.bad = []

    def __call__(self, fn, *args):
        try:
            r = fn(*args)
            self.ok += 1
            return r
        except OSError as e:
            name = errno.errorcode.get(e.errno, str(e.errno))
            self.errs[name] = self.errs.get(name, 0) + 1
            if e.errno not in self.allowed and e.errno not in (errno.ENOENT, errno.EEXIST,
                                                               errno.ENOTEMPTY):
                self.bad.append(f"{fn.__name__}{args[:1]}: {e}")
            return None

    def report(self):
        print(f"{self.ok} calls succeeded; failed: "
              + (", ".join(f"{n} {k}" for k, n in sorted(self.errs.items())) or "none"))
        for b in self.bad[:10]:
            print(f"FAIL: unexpected error: {b}")
        return 1 if self.bad else 0


def stress(mnt, allowed):
    rnd = random.Random(6)
    c = Calls(allowed)
    base = os.path.join(mnt, "work")
    c(os.makedirs, base, 0o755, True)
    for i in range(400):
        d = os.path.join(base, f"d{rnd.randrange(5)}")
        p = os.path.join(d, f"f{rnd.randrange(30)}")
        op = rnd.randrange(10)
        if op == 0:
            c(os.mkdir, d)
        elif op <= 3:
            fd = c(os.open, p, os.O_RDWR | os.O_CREAT, 0o644)
            if fd is not None:
                off = rnd.choice([0, 4095, 70000, (2 << 20) - 5, 5 << 20])
                c(os.pwrite, fd, rnd.randbytes(rnd.choice([1, 4096, 9000, 300 << 10])), off)
                c(os.write, fd, b"tail")
                c(os.read, fd, 8192)
                c(os.fsync, fd)
                c(os.close, fd)
        elif op == 4:
            c(os.truncate, p, rnd.choice([0, 100, 3 << 20]))
        elif op == 5:
            c(os.rename, p, os.path.join(base, f"d{rnd.randrange(5)}", f"f{rnd.randrange(30)}"))
        elif op == 6:
            c(os.link, p, p + f".l{rnd.randrange(3)}")
        elif op == 7:
            c(os.unlink, p)
        elif op == 8:
            c(os.setxattr, p, f"user.a{rnd.randrange(4)}", rnd.randbytes(rnd.randrange(300)))
        else:
            c(os.listdir, d)
            c(os.rmdir, d)
    return c.report()


def readall(mnt, allowed):
    c = Calls(allowed)
    with open(MANIFEST) as f:
        man = json.load(f)
    for p in man:
        fd = c(os.open, os.path.join(mnt, p), os.O_RDONLY)
        if fd is not None:
            c(os.read, fd, 4 << 20)
            c(os.pread, fd, 100, 4000)
            c(os.close, fd)
    return c.report()


def cowfail(mnt, knob):
    """Copy-on-writes whose old bytes cannot be read fail whole, with EIO."""
    rnd = random.Random(7)
    path = os.path.join(mnt, "cowfail")
    link = os.path.join(mnt, "cowfail.link")
    # Three pieces, the last one partly used: whole and partial pages,
    # whole and partial superpages, a last page partly written.
    old = rnd.randbytes((4 << 20) + 5000)
    with open(path, "wb") as f:
        f.write(old)
    target = "t" * 300   # too long for the inode: kept in a data page
    os.symlink(target, link)
    os.sync()

    def point(on):
        with open(knob, "w") as f:
            f.write("1" if on else "0")

    bad = []
    cases = [
        ("write part of a page", lambda fd: os.pwrite(fd, b"x" * 100, 5000)),
        ("write across pages", lambda fd: os.pwrite(fd, b"x" * 8192, 4000)),
        ("write in the second piece", lambda fd: os.pwrite(fd, b"x" * 10, (2 << 20) + 3)),
        ("write across pieces", lambda fd: os.pwrite(fd, b"x" * 9000, (2 << 20) - 4000)),
        ("punch part of a page",
         lambda fd: fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 6000, 100)),
        ("zero part of a page", lambda fd: fallocate(fd, FALLOC_FL_ZERO_RANGE, 12000, 3000)),
    ]
    fd = os.open(path, os.O_RDWR)
    for what, call in cases:
        point(True)
        try:
            call(fd)
            bad.append(f"{what}: succeeded")
        except OSError as e:
            if e.errno != errno.EIO:
                bad.append(f"{what}: {e}")
        finally:
            point(False)
        if os.pread(fd, len(old) + 1, 0) != old:
            bad.append(f"{what}: the file changed")
            break
    # Growing a run moves frames by swapping page table entries and reads
    # no old data: appends go on with every PM read failing.
    tail = rnd.randbytes((3 << 20) + 123)
    point(True)
    try:
        n = os.pwrite(fd, tail, len(old))
        if n != len(tail):
            bad.append(f"append: {n} of {len(tail)} bytes written")
    except OSError as e:
        bad.append(f"append: {e}")
    try:
        os.readlink(link)
        bad.append("readlink of a poisoned target succeeded")
    except OSError as e:
        if e.errno != errno.EIO:
            bad.append(f"readlink: {e}")
    point(False)
    if os.pread(fd, len(old) + len(tail) + 1, 0) != old + tail:
        bad.append("append: wrong content")
    if os.readlink(link) != target:
        bad.append("readlink: wrong target")
    os.close(fd)
    os.unlink(path)
    os.unlink(link)
    for b in bad:
        print(f"FAIL: {b}")
    if not bad:
        print(f"{len(cases)} copy-on-writes failed with EIO, file unchanged; append and "
              "readlink as expected")
    return 1 if bad else 0


FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10


def fallocate(fd, mode, off, length):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    if libc.fallocate(fd, mode, off, length):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def main():
    cmd, mnt = sys.argv[1], sys.argv[2]
    if cmd == "prepare":
        prepare(mnt)
        return 0
    if cmd == "verify":
        return verify(mnt)
    if cmd == "stress":
        return stress(mnt, sys.argv[3:])
    if cmd == "cowfail":
        return cowfail(mnt, sys.argv[3])
    if cmd == "readall":
        return readall(mnt, sys.argv[3:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
