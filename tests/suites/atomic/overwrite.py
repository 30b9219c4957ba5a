# SPDX-License-Identifier: GPL-2.0
"""Overwrite workload and stamp reader of atomic/host-run.

  overwrite.py init FILE SIZE                      generation 0 everywhere
  overwrite.py run FILE SIZE SEED ORACLE STOPFILE  overwrite until STOPFILE
  overwrite.py stamps FILE SIZE OUT                generation of every sector

Every 512-byte sector written by generation g holds 32 copies of the pair
(g, sector index) as little-endian 64-bit numbers. "stamps" writes one
64-bit generation per sector, -1 for a sector that is torn or holds a
stamp of another sector.
"""

import array
import os
import random
import struct
import sys

SECTOR = 512


def stamp(gen, off, n):
    first = off // SECTOR
    return b"".join(struct.pack("<qq", gen, first + i) * 32 for i in range(n // SECTOR))


def main():
    cmd, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if cmd == "init":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for off in range(0, size, 1 << 20):
            os.pwrite(fd, stamp(0, off, 1 << 20), off)
        os.fsync(fd)
        os.close(fd)
    elif cmd == "run":
        rnd = random.Random(int(sys.argv[4]))
        oracle = os.open(sys.argv[5], os.O_WRONLY | os.O_APPEND)
        stop = sys.argv[6]
        fd = os.open(path, os.O_WRONLY)
        gen = 0
        while not os.path.exists(stop):
            gen += 1
            # 1 KiB to 8 MiB, log-uniform, in whole sectors; offsets at
            # sector, page or superpage alignment.
            n = int(2 ** rnd.uniform(10, 23)) // SECTOR * SECTOR
            align = rnd.choice([SECTOR, SECTOR, 4096, 2 << 20])
            off = rnd.randrange(0, (size - n) // align + 1) * align
            os.write(oracle, b"S %d %d %d\n" % (gen, off, n))
            if os.pwrite(fd, stamp(gen, off, n), off) != n:
                sys.exit("short write")
            os.write(oracle, b"D %d\n" % gen)
            # Every 8th write is made durable: it and all before it.
            if gen % 8 == 0:
                os.fsync(fd)
                os.write(oracle, b"F %d\n" % gen)
        os.close(fd)
        os.close(oracle)
        print("overwrite workload: %d writes" % gen)
    elif cmd == "stamps":
        gens = array.array("q")
        with open(path, "rb") as f:
            data = f.read()
        if len(data) != size:
            sys.exit("size %d, expected %d" % (len(data), size))
        for s in range(size // SECTOR):
            sec = data[s * SECTOR:(s + 1) * SECTOR]
            g, idx = struct.unpack_from("<qq", sec)
            gens.append(g if idx == s and sec == sec[:16] * 32 else -1)
        with open(sys.argv[4], "wb") as f:
            gens.tofile(f)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
