#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Group commit across a power cut (persist/012-group-commit).

  group.py cut MNT MANIFEST    operations, few of them fsync'd, then some
                               committed by the timer only, until the power
                               is cut
  group.py check MNT MANIFEST  what survived is a prefix of the operations,
                               each whole, and holds every fsync'd one

The operations, in order: op i writes file o<i> with one write() (atomic
with data=atomic) of a length and content derived from i, then appends
record i to the file "log" with one write(); every 97th op first
overwrites the first half of o<i - 1> with one write(), and every 40th op
ends with an fsync of o<i> (made durable with every operation before it:
one running transaction holds them all), up to op 300. Then no op is
fsync'd, and the power is cut once the commit timer (commit=2) has
committed some of them. The manifest names the last op whose fsync
returned; it lies on the host, so it survives the cut.
"""

import os
import sys

OPS_BEFORE_CUT = 300


def content(i, over=False):
    n = 1 + (i * 7919) % 20000
    seed = (i * 31 + (17 if over else 0)) & 0xff
    return bytes((seed + k) & 0xff for k in range(n))


def record(i):
    return b"%08d\n" % i


def overwritten(i):
    """Whether o<i> was overwritten by op i + 1 (before any later op)."""
    return (i + 1) % 97 == 0


def expected(i, last):
    """Content of o<i> when ops up to @last survived."""
    base = content(i)
    if overwritten(i) and last >= i + 1:
        over = content(i, True)[:len(base) // 2]
        return over + base[len(over):]
    return base


def commits_timer():
    dev = os.path.basename(os.environ.get("DEV", "/dev/pmem0"))
    with open(f"/sys/fs/vsmfs/{dev}/commits_timer") as f:
        return int(f.read())


def cut(mnt, manifest):
    log = os.open(os.path.join(mnt, "log"), os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
    i = synced = timer0 = 0
    cut_asked = False
    while True:
        if overwritten(i - 1) and i >= 1:
            prev = os.path.join(mnt, "o%d" % (i - 1))
            fd = os.open(prev, os.O_WRONLY)
            os.pwrite(fd, content(i - 1, True)[:len(content(i - 1)) // 2], 0)
            os.close(fd)
        fd = os.open(os.path.join(mnt, "o%d" % i), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        buf = content(i)
        if os.write(fd, buf) != len(buf):
            raise SystemExit(f"short write of o{i}")
        if os.write(log, record(i)) != len(record(i)):
            raise SystemExit("short append to log")
        if i % 40 == 39 and i < OPS_BEFORE_CUT:
            synced = i
            os.fsync(fd)
            with open(manifest, "w") as m:
                m.write("%d\n" % i)
                m.flush()
                os.fsync(m.fileno())
        os.close(fd)
        i += 1
        if i == OPS_BEFORE_CUT:
            timer0 = commits_timer()
        # Unsynced ops from here; the cut once the timer committed some.
        if i > OPS_BEFORE_CUT and i % 10 == 0 and commits_timer() > timer0 and not cut_asked:
            print(f"{i} ops done, the last fsync'd {synced}; PERSIST-CUT-NOW", flush=True)
            cut_asked = True


def check(mnt, manifest):
    with open(manifest) as m:
        synced = int(m.read())
    names = set(os.listdir(mnt)) - {"log", "lost+found"}
    got = sorted(int(n[1:]) for n in names if n.startswith("o") and n[1:].isdigit())
    if len(got) != len(names):
        raise SystemExit(f"unexpected names: {sorted(names - {'o%d' % i for i in got})}")
    last = got[-1] if got else -1
    if got != list(range(last + 1)):
        missing = sorted(set(range(last + 1)) - set(got))[:5]
        raise SystemExit(f"not a prefix: o0..o{last} present but for {missing}")
    if last < synced:
        raise SystemExit(f"fsync'd op {synced} lost: only o0..o{last} survived")
    # The cut came after a commit by the timer of ops never fsync'd.
    if last <= synced:
        raise SystemExit(f"no op after the last fsync'd one ({synced}) survived "
                         "although the timer committed some before the cut")
    with open(os.path.join(mnt, "log"), "rb") as f:
        log = f.read()
    if len(log) % 9:
        raise SystemExit(f"log torn: {len(log)} bytes, not whole records")
    recs = [int(log[k:k + 8]) for k in range(0, len(log), 9)]
    if recs != list(range(len(recs))):
        raise SystemExit("log records out of order or missing")
    # Handles in order: write of o<i>, then its record; the overwrite of
    # o<i - 1> comes before o<i>.
    if len(recs) not in (last, last + 1):
        raise SystemExit(f"log holds {len(recs)} records, o0..o{last} survived")
    for i in got:
        with open(os.path.join(mnt, "o%d" % i), "rb") as f:
            data = f.read()
        allowed = [expected(i, last)]
        if i == last:
            # Its create may have survived without its write, and its
            # overwrite by the next op without that op's create.
            allowed.append(b"")
            if overwritten(i):
                allowed.append(expected(i, last + 1))
        if data not in allowed:
            raise SystemExit(f"o{i}: {len(data)} bytes, not what op {i} wrote whole")
    print(f"ops o0..o{last} survived with {len(recs)} log records; "
          f"last fsync'd op {synced}; {last - synced} unsynced ops survived", flush=True)


if __name__ == "__main__":
    {"cut": cut, "check": check}[sys.argv[1]](sys.argv[2], sys.argv[3])
