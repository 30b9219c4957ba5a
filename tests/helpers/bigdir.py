#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Large-directory checks for tests/suites/posix/006-bigdir.sh.

Every entry is a symlink whose target is its own name, so reading the link
proves that a lookup found the right entry. Names are "f%07d" for the bulk,
plus pairs of names whose vsmfs name hashes (FNV-1a, 32 bit) are equal.

  bigdir.py create DIR N          create the bulk and the colliding pairs
  bigdir.py lookup DIR N SAMPLE   look up SAMPLE present and absent names
  bigdir.py readdir DIR N         readdir returns each entry exactly once
  bigdir.py readdir-delete DIR N  delete and add entries during a readdir
  bigdir.py refill DIR N          add as many names as readdir-delete removed
  bigdir.py unlink-all DIR KEEP   unlink all entries but KEEP of them

Names removed by readdir-delete are every third bulk name; it adds ADDED
names "g%07d" while reading, refill adds the rest as "h%07d". Exit status 1
with a message on the first mismatch.
"""

import errno
import os
import random
import sys
import time

ADDED = 1000
PAIRS = 200
# Two 8-byte names with equal FNV-1a hashes. Appending the same suffix to
# both keeps the hashes equal: the hash state after a name is the hash.
COLLIDE = ("c001113d", "c00bd088")


def fnv1a(name):
    h = 2166136261
    for b in name.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def bulk(n):
    return [f"f{i:07d}" for i in range(n)]


def colliding():
    names = []
    for i in range(PAIRS):
        a, b = (c + f"-{i}" for c in COLLIDE)
        if fnv1a(a) != fnv1a(b):
            fail(f"{a} and {b} do not collide")
        names += [a, b]
    return names


def deleted(n):
    return set(f"f{i:07d}" for i in range(0, n, 3))


def expected(n):
    return set(bulk(n)) | set(colliding())


def check_link(d, name):
    try:
        target = os.readlink(os.path.join(d, name))
    except OSError as e:
        fail(f"lookup of {name}: {e}")
    if target != name:
        fail(f"lookup of {name} found the entry of {target}")


def check_absent(d, name):
    try:
        os.lstat(os.path.join(d, name))
    except FileNotFoundError:
        return
    fail(f"{name} exists but must not")


def timed(what, start):
    print(f"{what}: {time.monotonic() - start:.1f}s")


def create(d, n):
    start = time.monotonic()
    for name in bulk(n) + colliding():
        os.symlink(name, os.path.join(d, name))
    timed(f"created {n + 2 * PAIRS} entries", start)


def lookup(d, n, sample):
    rng = random.Random(n)
    present = sorted(os.listdir(d))
    start = time.monotonic()
    for name in rng.sample(present, min(sample, len(present))):
        check_link(d, name)
    for name in colliding():
        if name in present:
            check_link(d, name)
    for i in range(sample // 4):
        check_absent(d, f"x{rng.randrange(1 << 30):09d}")
        check_absent(d, COLLIDE[0] + f"-{PAIRS + i}")
    timed(f"looked up {sample} present, {sample // 2} absent names", start)


def readdir_once(d, want):
    seen = os.listdir(d)
    if len(seen) != len(set(seen)):
        dup = sorted(x for x in set(seen) if seen.count(x) > 1)[:5]
        fail(f"readdir returned names twice, e.g. {dup}")
    if set(seen) != want:
        fail(f"readdir: {len(want - set(seen))} names missing, "
             f"{len(set(seen) - want)} unexpected")
    print(f"readdir: {len(seen)} entries, each once")


def readdir(d, n):
    readdir_once(d, expected(n))


def readdir_delete(d, n):
    gone = deleted(n)
    todo = sorted(gone)
    random.Random(n).shuffle(todo)
    added = [f"g{i:07d}" for i in range(ADDED)]
    per_entry = max(1, len(todo) * 2 // n + 1)
    seen = []
    nadded = 0
    with os.scandir(d) as it:
        for i, ent in enumerate(it):
            seen.append(ent.name)
            for _ in range(per_entry):
                if todo:
                    os.unlink(os.path.join(d, todo.pop()))
            if i % 37 == 0 and nadded < ADDED:
                os.symlink(added[nadded], os.path.join(d, added[nadded]))
                nadded += 1
    for name in todo:
        os.unlink(os.path.join(d, name))
    for name in added[nadded:]:
        os.symlink(name, os.path.join(d, name))
    if len(seen) != len(set(seen)):
        fail("readdir during deletes returned a name twice")
    stay = expected(n) - gone
    missing = stay - set(seen)
    if missing:
        fail(f"readdir during deletes lost {len(missing)} untouched entries, "
             f"e.g. {sorted(missing)[:5]}")
    stray = set(seen) - expected(n) - set(added)
    if stray:
        fail(f"readdir during deletes returned unknown names {sorted(stray)[:5]}")
    print(f"readdir during {len(gone)} deletes and {ADDED} adds: "
          f"{len(stay)} untouched entries each once")
    readdir_once(d, stay | set(added))


def refill(d, n):
    gone = deleted(n)
    for i in range(len(gone) - ADDED):
        name = f"h{i:07d}"
        os.symlink(name, os.path.join(d, name))
    want = expected(n) - gone | set(f"g{i:07d}" for i in range(ADDED)) | \
        set(f"h{i:07d}" for i in range(len(gone) - ADDED))
    readdir_once(d, want)


def unlink_all(d, keep):
    names = os.listdir(d)
    for name in names[keep:]:
        os.unlink(os.path.join(d, name))
    left = os.listdir(d)
    if sorted(left) != sorted(names[:keep]):
        fail(f"{len(left)} entries left, expected {keep}")
    for name in left:
        check_link(d, name)


def main():
    cmd, d = sys.argv[1], sys.argv[2]
    args = [int(a) for a in sys.argv[3:]]
    {"create": create, "lookup": lookup, "readdir": readdir,
     "readdir-delete": readdir_delete, "refill": refill,
     "unlink-all": unlink_all}[cmd](d, *args)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:
        if e.errno == errno.ENOSPC:
            fail(f"out of space: {e}")
        raise
