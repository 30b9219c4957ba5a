#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""persist/020-fc-home, inside the VM: a commit that wrote inode-table
blocks home in place, cut before its commit point.

  home.py cut MNT KNOB     a directory and a first file, synced (which
                           empties the journal); NFILES empty files
                           created in it, each fsync'd (fast records carry
                           the creates), the first then chmod'ed to 0600
                           and a last one created, neither fsync'd; then,
                           with KNOB (journal_commit_stop) armed, a sync
                           whose commit stops before its commit store;
                           prints how many blocks the commit wrote home in
                           place, and PERSIST-CUT-NOW for the power cut
  home.py check MNT        every fsync'd file there with mode 0644 (the
                           chmod never committed), the unsynced file not,
                           nothing else

The fsync'd creates leave their inode-table blocks changed only in words
that fast records carry, and the journal holds no version of them: the
commit writes them home in place (journal_home_blocks). Cut before its
commit point, recovery finds the last commit (the first sync) and the
records, which it stores over what the commit wrote home: the chmod that
the commit wrote home is undone by the create's record. The block of the
last file holds a change no record carries: it must go to the journal, as
a home write would leave an inode no bitmap or directory names (fsck).
"""

import os
import stat
import sys
import time

from vsmfs_test import Counters

NFILES = 24
D = "d"


def name(i):
    return os.path.join(D, "f%03d" % i)


def cut(mnt, knob):
    counters = Counters(os.environ.get("DEV", "/dev/pmem0"))
    # One CPU: i-numbers from one region, so the files share blocks.
    os.sched_setaffinity(0, {0})
    os.umask(0o022)
    os.mkdir(os.path.join(mnt, D))
    with open(os.path.join(mnt, D, "first"), "w"):
        pass
    os.sync()
    c0 = counters.read()
    for i in range(NFILES):
        fd = os.open(os.path.join(mnt, name(i)), os.O_CREAT | os.O_WRONLY, 0o644)
        os.fsync(fd)
        os.close(fd)
    os.chmod(os.path.join(mnt, name(0)), 0o600)
    with open(os.path.join(mnt, D, "last"), "w"):
        pass
    c1 = counters.read()
    records = c1["fc_records"] - c0["fc_records"]
    commits = c1["trans_commits"] - c0["trans_commits"]
    print(f"guest: {NFILES} creates fsync'd: {records} fast records, {commits} commits",
          flush=True)
    if records < NFILES or commits:
        sys.exit("guest: the creates did not all go to fast records")
    with open(knob, "w") as f:
        f.write("1")
    if os.fork() == 0:
        os.sync()	# stops before its commit store
        os._exit(0)
    time.sleep(3)
    c2 = counters.read()
    home = c2["journal_home_blocks"] - c1["journal_home_blocks"]
    print(f"guest: the stopped commit wrote {home} blocks home in place", flush=True)
    if home < 1:
        sys.exit("guest: no block written home in place: nothing tested")
    print("PERSIST-CUT-NOW", flush=True)
    time.sleep(600)


def check(mnt):
    want = {"first"} | {os.path.basename(name(i)) for i in range(NFILES)}
    have = set(os.listdir(os.path.join(mnt, D)))
    if have != want:
        sys.exit(f"guest: files missing {sorted(want - have)}, extra {sorted(have - want)}")
    for i in range(NFILES):
        st = os.stat(os.path.join(mnt, name(i)))
        if stat.S_IMODE(st.st_mode) != 0o644 or st.st_size:
            sys.exit(f"guest: {name(i)}: mode 0{stat.S_IMODE(st.st_mode):o}, size "
                     f"{st.st_size}; expected 0644 and 0 (the chmod never committed)")
    print(f"guest: the {NFILES} fsync'd files there, mode 0644; the unsynced one not")


if __name__ == "__main__":
    if sys.argv[1] == "cut":
        cut(sys.argv[2], sys.argv[3])
    else:
        check(sys.argv[2])
