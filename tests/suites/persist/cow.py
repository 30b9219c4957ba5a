# SPDX-License-Identifier: GPL-2.0
"""File of persist/004-cow-cut: cow.py write|overwrite|check-old|check-new FILE.

The overwrite covers the second half of superpage 0, all of superpage 1 and
the first part of superpage 2, starting and ending inside pages: fine-grained
swaps, a coarse index switch and merged partial pages in one write.
"""

import os
import sys

SIZE = 6 << 20
OFF, LEN = (1 << 20) + 100, (4 << 20) + 200


def old():
    return bytes((i * 7 + 1) % 251 for i in range(4096)) * (SIZE // 4096)


def new():
    return bytes((i * 13 + 5) % 241 for i in range(LEN))


def main():
    cmd, path = sys.argv[1:3]
    if cmd == "write":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.pwrite(fd, old(), 0)
        os.fsync(fd)
        os.close(fd)
    elif cmd == "overwrite":
        fd = os.open(path, os.O_WRONLY)
        os.pwrite(fd, new(), OFF)
        os.close(fd)
    else:
        with open(path, "rb") as f:
            data = f.read()
        want = old()
        if cmd == "check-new":
            want = want[:OFF] + new() + want[OFF + LEN:]
        if data != want:
            bad = next(i for i in range(len(want)) if i >= len(data) or data[i] != want[i])
            sys.exit(f"FAIL: {cmd}: {path} differs from byte {bad} (size {len(data)})")
        print(f"{cmd}: {len(data)} bytes as expected")


if __name__ == "__main__":
    main()
