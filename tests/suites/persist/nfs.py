#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Operations acknowledged by a sync NFS export, across a power cut
(persist/013-nfs-cut).

  nfs.py work NFSDIR MANIFEST   through an NFS mount of a sync export of a
                                vsmfs mounted with commit=300: files
                                written (the client's COMMIT at close makes
                                nfsd fsync them), then operations that
                                change only metadata; records what the
                                client sees in the manifest, then asks for
                                the power cut
  nfs.py check DIR MANIFEST     after the cut, the exported directory on the
                                vsmfs mounted again holds exactly what the
                                client saw

Every operation of the second part returns to the client only once nfsd
has asked vsmfs to commit it (export_operations.commit_metadata, on a sync
export), and nothing else commits it before the cut: the commit timer is 300
s away, no file is written or fsync'd after them, and the journal is far
from full. The work step checks the commit counters for that, so that a
loss can only come from an acknowledgment that was not durable.
"""

import hashlib
import os
import stat
import sys

DATA_FILES = 20
# A time set through SETATTR (utimes).
STAMP_NS = 1_234_567_890_123_456_789


def data(i):
    return (b"file %02d\n" % i) * (1 + i * 37)


def counters(dev):
    base = f"/sys/fs/vsmfs/{os.path.basename(dev)}"
    out = {}
    for name in ("commits_timer", "commits_full", "commits_syncfs", "commits_sync"):
        with open(os.path.join(base, name)) as f:
            out[name] = int(f.read())
    return out


def listing(top):
    """What a user sees under @top: one line per entry, sorted by path."""
    lines = []
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for name in [None] + sorted(dirs + files):
            path = root if name is None else os.path.join(root, name)
            if name is None and root != top:
                continue	# listed by its parent
            st = os.lstat(path)
            rel = os.path.relpath(path, top)
            what = ""
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    what = hashlib.sha256(f.read()).hexdigest()[:16]
            elif stat.S_ISLNK(st.st_mode):
                what = "-> " + os.readlink(path)
            lines.append(f"{rel} {stat.filemode(st.st_mode)} links={st.st_nlink} "
                         f"size={st.st_size} uid={st.st_uid} gid={st.st_gid} "
                         f"mtime={st.st_mtime_ns} {what}".rstrip())
    return lines


def write_file(path, body):
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        os.write(fd, body)
    finally:
        os.close(fd)


def work(top, manifest):
    dev = os.environ.get("DEV", "/dev/pmem0")
    # Made before the data files, so committed by their fsync.
    os.mkdir(os.path.join(top, "gone"))
    os.mkdir(os.path.join(top, "dir2"))
    for i in range(DATA_FILES):
        write_file(os.path.join(top, "f%02d" % i), data(i))
    before = counters(dev)

    # Metadata only: each made durable by nothing but nfsd's commit.
    p = lambda *n: os.path.join(top, *n)	# noqa: E731
    for i in range(5):
        os.close(os.open(p("e%d" % i), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    os.mkdir(p("d1"))
    os.mkdir(p("d1", "sub"))
    os.rename(p("f03"), p("r03"))
    os.rename(p("f04"), p("dir2", "m04"))
    os.rename(p("f05"), p("f06"))
    os.unlink(p("f07"))
    os.rmdir(p("gone"))
    os.chmod(p("f08"), 0o640)
    os.utime(p("f09"), ns=(STAMP_NS, STAMP_NS))
    os.symlink("f10", p("s10"))
    os.link(p("f11"), p("h11"))
    os.truncate(p("f12"), 10000)

    seen = listing(top)
    after = counters(dev)
    if after != before:
        raise SystemExit(f"FAIL: the file system committed on its own during the test "
                         f"({before} -> {after}): it cannot tell whether NFS's commits work")
    with open(manifest, "w") as f:
        f.write("\n".join(seen) + "\n")
    print(f"the client saw {len(seen)} entries; PERSIST-CUT-NOW", flush=True)


def check(top, manifest):
    with open(manifest) as f:
        want = f.read().splitlines()
    got = listing(top)
    if got == want:
        print(f"all {len(want)} entries the client saw are there")
        return
    wmap = {line.split(" ", 1)[0]: line for line in want}
    gmap = {line.split(" ", 1)[0]: line for line in got}
    for path in sorted(set(wmap) | set(gmap)):
        if path not in gmap:
            print(f"  lost: {wmap[path]}")
        elif path not in wmap:
            print(f"  back: {gmap[path]}")
        elif wmap[path] != gmap[path]:
            print(f"  was:  {wmap[path]}\n  now:  {gmap[path]}")
    raise SystemExit("FAIL: operations the NFS client saw complete are not on PM after "
                     "the power cut")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("work", "check"):
        raise SystemExit(__doc__)
    {"work": work, "check": check}[sys.argv[1]](sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
