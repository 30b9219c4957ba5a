#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""hot30: a few hot files among many cold ones, as hot-inode aggregation
sees them: FILES files in 4 directories, every (FILES / HOT)-th kept open
and appended to, 30 bytes at a time, each append fsync'd.

  hot30 DIR FILES HOT ROUNDS

Warm-up: 32 appends to each hot file (twice vsmfs's default
aggregate_threshold), a pause for the migrations, then sync (a checkpoint
on vsmfs). If HOT30_RESET names a file, 1 is written to it then (the
vsmfs counters' reset). Measured: ROUNDS appends to each hot file, then
sync, so that every inode-table block they dirtied is written home.
Prints "ops N secs S" for the measured part.
"""
import os
import sys
import time


def main():
    top, files, hot, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for d in range(4):
        os.makedirs(os.path.join(top, f"d{d}"), exist_ok=True)
    names = [os.path.join(top, f"d{i % 4}", f"f{i}") for i in range(files)]
    for n in names:
        with open(n, "wb") as f:
            f.write(b"x" * 100)
    step = max(1, files // hot)
    fds = [os.open(n, os.O_WRONLY | os.O_APPEND) for n in names[step - 1::step][:hot]]
    rec = b"%029d\n" % 0

    def appends(k):
        for _ in range(k):
            for fd in fds:
                os.write(fd, rec)
                os.fsync(fd)

    appends(32)
    time.sleep(1)
    os.sync()
    reset = os.environ.get("HOT30_RESET")
    if reset:
        with open(reset, "w") as f:
            f.write("1")
    t0 = time.monotonic()
    appends(rounds)
    os.sync()
    secs = time.monotonic() - t0
    for fd in fds:
        os.close(fd)
    print(f"ops {rounds * len(fds)} secs {secs:.6f}")


if __name__ == "__main__":
    main()
