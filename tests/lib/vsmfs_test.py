# SPDX-License-Identifier: GPL-2.0
"""Helpers for Python parts of vsmfs tests run in the VM."""

import fcntl
import os
import struct
import sys

P = 4096
VSP = 2 << 20


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)


class Counters:
    """The counters of /sys/fs/vsmfs/<dev>/, read as a dict of ints."""

    def __init__(self, dev):
        self.dir = "/sys/fs/vsmfs/" + os.path.basename(dev)

    def reset(self):
        with open(self.dir + "/reset", "w") as f:
            f.write("1")

    def read(self):
        out = {}
        for name in os.listdir(self.dir):
            # reset is write-only; journal_wear is a histogram; errors is
            # the error state, several lines; bad_frames a list.
            if name not in ("reset", "journal_wear", "errors", "bad_frames"):
                with open(os.path.join(self.dir, name)) as f:
                    out[name] = int(f.read())
        return out


FIEMAP_EXTENT_UNWRITTEN = 0x800


def fiemap(fd, start=0, length=1 << 62, count=512, flags=False):
    """Extents (logical, physical, length) of a file, by FS_IOC_FIEMAP;
    with @flags, (logical, physical, length, fe_flags)."""
    hdr = struct.pack("=QQIIII", start, length, 0, 0, count, 0)
    buf = bytearray(hdr + b"\0" * (56 * count))
    fcntl.ioctl(fd, 0xC020660B, buf)
    mapped = struct.unpack_from("=I", buf, 20)[0]
    out = []
    for i in range(mapped):
        lo, ph, ln = struct.unpack_from("=QQQ", buf, 32 + 56 * i)
        fl = struct.unpack_from("=I", buf, 32 + 56 * i + 40)[0]
        out.append((lo, ph, ln, fl) if flags else (lo, ph, ln))
    return out


def unwritten_pages(path):
    """The pages of a file FIEMAP reports unwritten, as a set of numbers."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return {pg for lo, _, ln, fl in fiemap(fd, flags=True)
                if fl & FIEMAP_EXTENT_UNWRITTEN for pg in range(lo // P, (lo + ln) // P)}
    finally:
        os.close(fd)


def run_parallel(fn, args, what):
    """Run @fn(*a) in a process of its own for each a of @args, all at
    once; each must exit 0."""
    from multiprocessing import Process
    ps = [Process(target=fn, args=a) for a in args]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
        check(p.exitcode == 0, "%s: a process failed" % what)


def pattern(i, n=P):
    """@n bytes of a pattern of its own for each @i."""
    import hashlib
    return (hashlib.sha256(b"%d" % i).digest() * (n // 32 + 1))[:n]


def overwrite_loop(path, n, seed):
    """@n overwrites of the first 4 pages of @path in turn, each fsync'd:
    overwrite i writes pattern(@seed + i)."""
    fd = os.open(path, os.O_WRONLY)
    for i in range(n):
        os.pwrite(fd, pattern(seed + i), (i % 4) * P)
        os.fsync(fd)
    os.close(fd)


def overwrite_expect(path, n, seed, before):
    """@path holds @before with overwrite_loop(@path, @n, @seed) applied."""
    want = bytearray(before)
    for i in range(n):
        want[(i % 4) * P:(i % 4 + 1) * P] = pattern(seed + i)
    with open(path, "rb") as f:
        check(f.read() == bytes(want), "%s holds what was written last" % path)


def phys(fd, off):
    """Physical address of the page holding byte @off of a file, or None."""
    for lo, ph, ln in fiemap(fd, off - off % P, P):
        if lo <= off < lo + ln:
            return ph + (off - off % P) - lo
    return None
