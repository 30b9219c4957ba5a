# SPDX-License-Identifier: GPL-2.0
"""persist/010-truncate-cut, inside the VM: files whose freeing needs
several transactions on a small journal.

  trunc.py sparse FILE   a 100 GiB sparse file: one page at every GiB, so
                         each of its 100 pieces has an index block of its own
  trunc.py check FILE [SIZE]  FILE has the size of the sparse file (or SIZE,
                         the size a truncation gave it) and every page below
                         it holds what sparse wrote
"""

import os
import sys

PIECES = 100
SIZE = (PIECES << 30) + 4096


def page(k):
    return b"%4095d\n" % k


def sparse(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    for k in range(1, PIECES + 1):
        os.pwrite(fd, page(k), k << 30)
    os.fsync(fd)
    os.close(fd)


def check(path, want=SIZE):
    size = os.stat(path).st_size
    if size != want:
        sys.exit(f"{path}: size {size}, not {want}")
    fd = os.open(path, os.O_RDONLY)
    kept = 0
    for k in range(1, PIECES + 1):
        if k << 30 >= size:
            break
        got = os.pread(fd, 4096, k << 30)
        if got != page(k):
            sys.exit(f"{path}: the page at {k} GiB reads {got[:16]!r}...")
        kept += 1
    os.close(fd)
    print(f"guest: {path}: size {size}, {kept} pages of {PIECES} kept and whole")


if __name__ == "__main__":
    if sys.argv[1] == "sparse":
        sparse(sys.argv[2])
    else:
        check(sys.argv[2], *[int(a) for a in sys.argv[3:]])
