# fallocate() that adds pages to a file runs beside other handles: its
# pages are reserved and zeroed holding only the inode's locks, and one
# shared handle makes them the file's, unwritten, with the size. A large
# file's superpages, a small file's pages after its run or in a fresh
# run, pages kept past the end (FALLOC_FL_KEEP_SIZE), two processes each
# preallocating its files: no handle stops the others (trans_excl), and
# the transaction mutex is taken only to reserve a whole free superpage
# or refill a CPU's pool, briefly. Sizes, the zeros past an old end,
# unwritten extents and data survive a remount, and fsck accepts the
# result. The truncation and the freeing of a preallocated file clear the
# marks of the pages they free in shared handles too.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer inside a counted change.
mount_vsmfs -o commit=300
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import ctypes
import os
import sys
from vsmfs_test import check, Counters, P, VSP, run_parallel, unwritten_pages
dev, mnt = sys.argv[1:3]
c = Counters(dev)
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]


def falloc(name, off, length, keep=False):
    fd = os.open(os.path.join(mnt, name), os.O_CREAT | os.O_RDWR, 0o644)
    c.reset()
    if keep:
        if libc.fallocate(fd, 1, off, length):
            raise OSError(ctypes.get_errno(), "fallocate KEEP_SIZE")
    else:
        os.posix_fallocate(fd, off, length)
    s = c.read()
    os.close(fd)
    print("%s: fallocate(%d, %d%s): %d stops, mutex %d, shared metadata handles %d" %
          (name, off, length, ", KEEP_SIZE" if keep else "", s["trans_excl"],
           s["journal_lock_takes"], s["trans_shared_meta"]))
    return s


# The pool this CPU takes pages from, refilled before the counted calls.
with open(os.path.join(mnt, "warm"), "wb") as f:
    f.write(b"w" * P)

# A large file: 6 superpages, each one shared handle (the index entries of
# 8 fit in its inode; a ninth needs an index block, allocated in a handle
# of the other kind).
s = falloc("big", 0, 6 * VSP)
check(s["trans_excl"] == 0,
      "fallocate of 6 superpages stopped the others %d times" % s["trans_excl"])
# One more for the times, if the clock ticked since the create.
check(6 <= s["trans_shared_meta"] <= 7,
      "6 superpages in %d shared handles" % s["trans_shared_meta"])
# The mutex: a free superpage reserved for each, in a short hold.
check(s["journal_lock_takes"] <= 6,
      "fallocate of 6 superpages took the transaction mutex %d times" % s["journal_lock_takes"])
big = os.path.join(mnt, "big")
check(os.stat(big).st_size == 6 * VSP, "big: size %d" % os.stat(big).st_size)
check(unwritten_pages(big) == set(range(6 * 512)),
      "big: %d of 3072 pages unwritten" % len(unwritten_pages(big)))
# Grown again past its end, into a seventh superpage and part of an eighth.
s = falloc("big", 6 * VSP, VSP + 40 * P)
check(s["trans_excl"] == 0 and 2 <= s["trans_shared_meta"] <= 3,
      "growing big by 1.1 superpages: %d stops, %d shared handles" %
      (s["trans_excl"], s["trans_shared_meta"]))
check(os.stat(big).st_size == 7 * VSP + 40 * P, "big: size %d" % os.stat(big).st_size)

# A small file with data: pages after its run, a size not on a page
# boundary, and bytes past it that a shrinking truncate left on PM.
sm = os.path.join(mnt, "small")
with open(sm, "wb") as f:
    f.write(b"s" * 9000)
os.truncate(sm, 6000)
s = falloc("small", 6000, 30 * P)
check(s["trans_excl"] == 0 and s["journal_lock_takes"] <= 1,
      "fallocate after a small file's run: %d stops, mutex taken %d times" %
      (s["trans_excl"], s["journal_lock_takes"]))
check(os.stat(sm).st_size == 6000 + 30 * P, "small: size %d" % os.stat(sm).st_size)
with open(sm, "rb") as f:
    d = f.read()
check(d == b"s" * 6000 + bytes(30 * P), "small: not its 6000 bytes, then zeros")
check(unwritten_pages(sm) == set(range(2, 32)),
      "small: unwritten %s, not pages 2-31" % sorted(unwritten_pages(sm)))

# Pages kept past the end (a log preallocated by its writer; a file that
# stays small, below 256 KiB: one that becomes large moves its run into a
# superpage of its own, in a handle of the other kind).
lg = os.path.join(mnt, "log")
with open(lg, "wb") as f:
    f.write(b"l" * 5000)
s = falloc("log", 0, 60 * P, keep=True)
check(s["trans_excl"] == 0 and s["journal_lock_takes"] <= 1,
      "fallocate KEEP_SIZE: %d stops, mutex taken %d times" %
      (s["trans_excl"], s["journal_lock_takes"]))
check(os.stat(lg).st_size == 5000, "log: KEEP_SIZE changed the size to %d" % os.stat(lg).st_size)
check(unwritten_pages(lg) == set(range(2, 60)),
      "log: unwritten %s, not pages 2-59" % sorted(unwritten_pages(lg)))
check(os.stat(lg).st_blocks == 60 * P // 512, "log: %d blocks" % os.stat(lg).st_blocks)

# Nothing to add: no handle but the times' (if the clock ticked since).
s = falloc("log", 0, 10 * P, keep=True)
check(s["journal_lock_takes"] == 0 and s["trans_shared_meta"] <= 1,
      "fallocate over allocated pages: %d mutex takes, %d shared handles" %
      (s["journal_lock_takes"], s["trans_shared_meta"]))

# A preallocated file partly written: its truncation and its freeing
# clear the marks of the pages they free beside other handles too.
pr = os.path.join(mnt, "pre")
fd = os.open(pr, os.O_CREAT | os.O_RDWR, 0o644)
os.posix_fallocate(fd, 0, 48 * P)
os.pwrite(fd, b"p" * P, 0)
os.close(fd)
c.reset()
os.truncate(pr, 16 * P)
s = c.read()
check(s["trans_excl"] == 0 and s["trans_shared_meta"] >= 1,
      "truncating a preallocated file: %d stops, %d shared handles" %
      (s["trans_excl"], s["trans_shared_meta"]))
check(unwritten_pages(pr) == set(range(1, 16)) and os.stat(pr).st_blocks == 16 * P // 512,
      "pre: unwritten %s, %d blocks after the truncation" %
      (sorted(unwritten_pages(pr)), os.stat(pr).st_blocks))
c.reset()
os.unlink(pr)
s = c.read()
check(s["trans_excl"] == 0 and s["trans_shared_meta"] >= 1,
      "freeing a preallocated file: %d stops, %d shared handles" %
      (s["trans_excl"], s["trans_shared_meta"]))
print("truncation and freeing of a preallocated file: no stop")


# Two processes, each preallocating files of its own, 16 MiB at a time,
# and writing a page into each step.
def prealloc(k):
    fd = os.open(os.path.join(mnt, "p%d" % k), os.O_CREAT | os.O_RDWR, 0o644)
    for i in range(6):
        os.posix_fallocate(fd, i * 4 * VSP, 4 * VSP)
        os.pwrite(fd, bytes([k + 1]) * P, i * 4 * VSP)
    os.close(fd)


c.reset()
run_parallel(prealloc, [(k,) for k in range(2)], "fallocate side by side")
s = c.read()
# Index blocks of the files' ninth and later superpages (2 each), and a
# commit when a CPU's share of the journal runs out.
check(s["trans_excl"] <= 6,
      "2 x 6 fallocates of 8 MiB stopped the others %d times" % s["trans_excl"])
check(s["trans_shared_meta"] >= 48,
      "2 x 6 fallocates of 8 MiB: %d shared handles" % s["trans_shared_meta"])
print("2 x 6 fallocates of 8 MiB side by side: %d stops, mutex taken %d times" %
      (s["trans_excl"], s["journal_lock_takes"]))
PY
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after shared fallocates"; }
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os
import sys
from vsmfs_test import check, P, VSP, unwritten_pages
mnt = sys.argv[1]
big = os.path.join(mnt, "big")
check(os.stat(big).st_size == 7 * VSP + 40 * P, "big: size %d after a remount" %
      os.stat(big).st_size)
check(unwritten_pages(big) == set(range(7 * 512 + 40)),
      "big: %d pages unwritten after a remount" % len(unwritten_pages(big)))
with open(big, "rb") as f:
    check(f.read() == bytes(7 * VSP + 40 * P), "big: not zeros after a remount")
with open(os.path.join(mnt, "small"), "rb") as f:
    check(f.read() == b"s" * 6000 + bytes(30 * P), "small: bytes after a remount")
lg = os.path.join(mnt, "log")
check(os.stat(lg).st_size == 5000 and os.stat(lg).st_blocks == 60 * P // 512,
      "log: size %d, blocks %d after a remount" % (os.stat(lg).st_size, os.stat(lg).st_blocks))
check(unwritten_pages(lg) == set(range(2, 60)), "log: unwritten after a remount")
for k in range(2):
    p = os.path.join(mnt, "p%d" % k)
    check(os.stat(p).st_size == 24 * VSP, "p%d: size %d" % (k, os.stat(p).st_size))
    with open(p, "rb") as f:
        for i in range(6):
            f.seek(i * 4 * VSP)
            check(f.read(P) == bytes([k + 1]) * P, "p%d: page at %d MiB" % (k, i * 8))
    want = set(range(24 * 512)) - {i * 4 * 512 for i in range(6)}
    check(unwritten_pages(p) == want, "p%d: %d pages unwritten, not %d" %
          (k, len(unwritten_pages(p)), len(want)))
print("sizes, zeros, unwritten extents and data after a remount")
PY
for f in big small log p0 p1; do rm "$MNT/$f"; done
umount "$MNT"
echo "fallocate beside other handles: no handle stopped the others; files kept over a remount"
