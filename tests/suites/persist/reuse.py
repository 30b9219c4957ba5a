# SPDX-License-Identifier: GPL-2.0
"""persist/008-free-reuse and 009-cow-reuse, inside the VM.

  reuse.py cut DIR KNOB    file a (128 KiB, fsync'd) and an empty file b;
                           then, with KNOB (journal_commit_stop) armed, a
                           truncate of a to 0 that stops before its commit
                           while another process writes 128 KiB into b, for
                           which pages freed by the truncate are the first
                           free; prints PERSIST-CUT-NOW for the power cut
  reuse.py cow DIR KNOB    the same, but the stopped commit is a copy-on-write
                           overwrite of one page of a: its new content went
                           to a fresh page whose mapping was swapped with the
                           old page's, so the fresh logical page, free again
                           in memory, reaches the old content of a
  reuse.py check DIR       a holds its 128 KiB whole: the truncate or the
                           overwrite never committed, so no page holding the
                           old content of a was reused
"""

import os
import random
import sys
import time

SIZE = 128 << 10


def content(seed):
    return random.Random(seed).randbytes(SIZE)


def cut(d, knob, cow=False):
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    with open(a, "wb") as f:
        f.write(content(1))
        os.fsync(f.fileno())
    fd = os.open(b, os.O_CREAT | os.O_WRONLY, 0o644)
    os.fsync(fd)
    dfd = os.open(d, os.O_RDONLY)
    os.fsync(dfd)
    os.close(dfd)
    with open(knob, "w") as f:
        f.write("1")
    if os.fork() == 0:
        if cow:
            # One whole page in the middle of a piece: a page swap.
            wfd = os.open(a, os.O_WRONLY)
            os.pwrite(wfd, b"n" * 4096, 8192)	# stops before its commit
        else:
            os.truncate(a, 0)	# stops before its commit
        os._exit(0)
    # The truncate's commit is stopped; the next commits must not stop.
    time.sleep(3)
    with open(knob, "w") as f:
        f.write("0")
    if os.fork() == 0:
        os.write(fd, content(2))
        os._exit(0)
    time.sleep(3)
    print(f"guest: writer started after the {'overwrite' if cow else 'truncate'} stopped",
          flush=True)
    print("PERSIST-CUT-NOW", flush=True)
    time.sleep(600)


def check(d):
    with open(os.path.join(d, "a"), "rb") as f:
        got = f.read()
    if len(got) != SIZE:
        sys.exit(f"a: {len(got)} bytes after the cut, expected {SIZE}")
    if got != content(1):
        bad = sum(1 for i in range(0, SIZE, 4096) if got[i:i + 4096] != content(1)[i:i + 4096])
        sys.exit(f"a: {bad} of {SIZE // 4096} pages changed: written after a free "
                 "or a copy-on-write that never committed")
    print(f"guest: a holds its {SIZE} bytes whole")


if __name__ == "__main__":
    if sys.argv[1] in ("cut", "cow"):
        cut(sys.argv[2], sys.argv[3], sys.argv[1] == "cow")
    else:
        check(sys.argv[2])
