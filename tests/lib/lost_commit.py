# SPDX-License-Identifier: GPL-2.0
"""Changes lost when the file system stopped writing are reported.

  lost_commit.py MNT wait|nowait

MNT is a vsmfs mounted with errors=remount-ro and group commit, whose
directory MNT/d has a corrupt entry on PM. A new file gets 8 KiB without
fsync, through a descriptor opened for writing; a second descriptor is
opened read-only on it and a third on the mount point. Listing MNT/d finds
the corruption (EUCLEAN) and makes the file system read-only, which drops
the running transaction. With "wait" the fsync comes after the commit
timer (commit=5) would have committed it; with "nowait" right after the
error, while the drop may still be under way.

Then, as ext4 and errseq_t give it: the first fsync of each descriptor
fails (EIO or EROFS), every later one fails too (the data is not on PM: a
success would be a lie), so do fdatasync and an fsync through a descriptor
opened after the error, and syncfs through the third descriptor reports
the loss once. Prints one line per call; exits 1 on the first call that
returned success.
"""

import ctypes
import errno
import os
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)


def call(what, fn, fd):
    try:
        if fn == "syncfs":
            if libc.syncfs(fd) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        else:
            getattr(os, fn)(fd)
    except OSError as e:
        print(f"{what}: {errno.errorcode.get(e.errno, e.errno)}")
        return e.errno
    print(f"{what}: 0")
    return 0


def must_fail(what, fn, fd, allowed=(errno.EIO, errno.EROFS)):
    err = call(what, fn, fd)
    if err not in allowed:
        print(f"FAIL: {what} returned {errno.errorcode.get(err, err) if err else 0}, "
              f"expected one of {[errno.errorcode[a] for a in allowed]}")
        sys.exit(1)
    return err


def main():
    mnt, mode = sys.argv[1], sys.argv[2]
    path = os.path.join(mnt, "lost")
    wfd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(wfd, b"x" * 8192)
    rfd = os.open(path, os.O_RDONLY)
    sfd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.listdir(os.path.join(mnt, "d"))
        print("FAIL: listing the corrupt directory succeeded")
        sys.exit(1)
    except OSError as e:
        if e.errno != errno.EUCLEAN:
            print(f"FAIL: listing the corrupt directory: {e}, expected EUCLEAN")
            sys.exit(1)
    if mode == "wait":
        time.sleep(8)
    must_fail("fsync (writer)", "fsync", wfd)
    must_fail("fsync again (writer)", "fsync", wfd)
    must_fail("fdatasync (writer)", "fdatasync", wfd)
    # The reader had not seen the loss: it is reported to it as well.
    must_fail("fsync (reader)", "fsync", rfd)
    late = os.open(path, os.O_RDONLY)
    must_fail("fsync (opened after the error)", "fsync", late)
    must_fail("syncfs", "syncfs", sfd, (errno.EIO,))
    for fd in (wfd, rfd, sfd, late):
        os.close(fd)


if __name__ == "__main__":
    main()
