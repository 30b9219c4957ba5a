# SPDX-License-Identifier: GPL-2.0
"""An overwrite on one CPU is seen by a read on another CPU that starts
after the write returned, even when that CPU read the same pages just
before: no stale translation of the mapping layer survives an overwrite.

  crosscpu.py FILE READER_CPU WRITER_CPU ROUNDS SEED

Two processes pinned to the two CPUs take turns on FILE (created, 4 MiB):
the reader reads a page, the writer overwrites it (4 KiB and 1 KiB
writes, so page table entries are swapped), the reader reads it again and
must find the new content. Some writes span two pages (two swaps in one
batch, which tlb=lazy logs page by page), some 128 KiB (32 pages, the
largest batch logged), some 256 KiB (too large to log: the reader flushes
its TLB), and some follow a burst of 70 writes
elsewhere (more batches than are logged). The writer reads each write
back through the range on its own CPU, and the reader reads single pages
too (through the device mapping, not the range). Exits non-zero if a
read missed a write.
"""

import mmap
import os
import random
import struct
import sys

from vsmfs_test import P, check

PAGES = 1024


def run(path, rcpu, wcpu, rounds, seed):
    """Overwrites on CPU wcpu, each seen by the next read on CPU rcpu."""

    with open(path, "wb") as f:
        for pg in range(PAGES):
            f.write(struct.pack("<QQ", pg, 0) * (P // 16))

    # The writer tells the reader of each write in shared memory, which the
    # reader polls: it reads right after the write, without sleeping in
    # between.
    w2r = mmap.mmap(-1, P)
    r2w_r, r2w_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        # Writer, on CPU wcpu.
        os.sched_setaffinity(0, {wcpu})
        fd = os.open(path, os.O_WRONLY)
        fd2 = os.open(path, os.O_RDONLY)
        own_bad = 0
        rnd = random.Random(seed)
        for gen in range(1, rounds + 1):
            pg = struct.unpack("<I", os.read(r2w_r, 4))[0]
            x = rnd.random()
            if x < 0.02:
                for _ in range(70):
                    o = rnd.randrange(PAGES)
                    if o not in (pg, pg + 1):
                        os.pwrite(fd, struct.pack("<QQ", o, 0) * (P // 16), o * P)
            off = 0
            if x < 0.4:
                os.pwrite(fd, struct.pack("<QQ", pg, gen) * (P // 16), pg * P)
            elif x < 0.7:
                off = rnd.randrange(4) * 1024
                os.pwrite(fd, struct.pack("<QQ", pg, gen) * (1024 // 16), pg * P + off)
            elif x < 0.9:
                os.pwrite(fd, struct.pack("<QQ", pg, gen) * (2 * P // 16), pg * P)
            elif x < 0.95:
                # The aligned 128 KiB holding the page and the next one.
                first = pg - pg % 16
                os.pwrite(fd, struct.pack("<QQ", pg, gen) * (32 * P // 16), first * P)
            else:
                # The aligned 256 KiB holding them.
                first = pg - pg % 32
                os.pwrite(fd, struct.pack("<QQ", pg, gen) * (64 * P // 16), first * P)
            # Read back on the writer's own CPU, through the range (two
            # pages): a CPU that swapped outside a use of the range drops
            # its own stale entries only when it next uses the range.
            back = os.pread(fd2, 2 * P, pg * P)
            if struct.unpack_from("<QQ", back, off)[1] != gen:
                own_bad += 1
            # The page count before the round: the reader polls the round.
            struct.pack_into("<Q", w2r, 8, 2 if x >= 0.7 else 1)
            struct.pack_into("<Q", w2r, 0, gen)
        os._exit(1 if own_bad else 0)

    # Reader, on CPU rcpu.
    os.sched_setaffinity(0, {rcpu})
    fd = os.open(path, os.O_RDONLY)
    rnd = random.Random(seed + 1)
    bad = 0
    for gen in range(1, rounds + 1):
        # Every write reaches pg; the reader has both pg and pg + 1 mapped.
        pg = rnd.randrange(PAGES - 32)
        # Pages read through the range and, one by one, through the device.
        os.pread(fd, 2 * P, pg * P)
        os.pread(fd, P, (pg + 1) * P)
        os.write(r2w_w, struct.pack("<I", pg))
        while struct.unpack_from("<Q", w2r, 0)[0] != gen:
            pass
        npg = struct.unpack_from("<Q", w2r, 8)[0]
        after = os.pread(fd, npg * P, pg * P)
        gens = {struct.unpack_from("<QQ", after, i)[1] for i in range(0, npg * P, 16)}
        if npg == 2:
            # Both pages hold only this write's generation.
            gens = {gen} if gens == {gen} else gens - {gen}
        if gen not in gens:
            bad += 1
            if bad <= 5:
                print("round %d page %d (%d pages written): read generations %s after "
                      "the write" % (gen, pg, npg, sorted(gens)))
    _, status = os.waitpid(pid, 0)
    check(status == 0, "writer exited with %d (1: its own read-back missed its write)" % status)
    check(bad == 0, "%d of %d reads after an overwrite missed it" % (bad, rounds))
    print("%s: %d overwrites on CPU %d seen by the next read on CPU %d" %
          (os.path.basename(path), rounds, wcpu, rcpu))


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
