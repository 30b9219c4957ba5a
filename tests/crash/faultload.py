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
Prints how many calls succeeded and failed, by errno.
"""

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


def main():
    cmd, mnt = sys.argv[1], sys.argv[2]
    if cmd == "prepare":
        prepare(mnt)
        return 0
    if cmd == "verify":
        return verify(mnt)
    if cmd == "stress":
        return stress(mnt, sys.argv[3:])
    if cmd == "readall":
        return readall(mnt, sys.argv[3:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
