# The first write over a preallocated file (fallocate, then write() or a
# store through a shared mapping: what fio and libpmem pools do), with
# data=atomic or data=inplace, changes only page table entries: it runs
# in shared handles, beside other writers, without the transaction mutex.
# Each page written stops being reported unwritten; the data and the
# flags survive a remount, and fsck accepts the result. Pages not written
# stay unwritten. Appends into pages kept past the end (a log
# preallocated with FALLOC_FL_KEEP_SIZE) swap fresh pages in and grow the
# size in the same shared handle.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer inside a counted change.
mount_vsmfs -o commit=300
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import mmap
import os
import subprocess
import sys
from vsmfs_test import check, Counters, P, VSP, run_parallel, unwritten_pages
dev, mnt = sys.argv[1:3]
c = Counters(dev)
def prealloc(name, pages):
    p = os.path.join(mnt, name)
    fd = os.open(p, os.O_CREAT | os.O_RDWR, 0o644)
    os.posix_fallocate(fd, 0, pages * P)
    os.close(fd)
    got = unwritten_pages(p)
    check(got == set(range(pages)),
          "%s: of %d fallocated pages, %d reported unwritten" % (name, pages, len(got)))
    return p


# The pool this CPU takes pages from, refilled before the counted writes.
with open(os.path.join(mnt, "warm"), "wb") as f:
    f.write(b"w" * P)

# write(): every other page of 64, whole pages and parts of pages.
w = prealloc("w", 64)
fd = os.open(w, os.O_RDWR)
c.reset()
for i in range(0, 64, 2):
    data = bytes([i]) * (P if i % 4 == 0 else 100)
    os.pwrite(fd, data, i * P + (0 if i % 4 == 0 else 1000))
s = c.read()
os.close(fd)
check(s["journal_lock_takes"] == 0,
      "32 writes over fallocated pages took the transaction mutex %d times" %
      s["journal_lock_takes"])
check(s["trans_shared_handles"] >= 32,
      "32 writes over fallocated pages: %d shared handles" % s["trans_shared_handles"])
check(unwritten_pages(w) == set(range(1, 64, 2)),
      "after writes to even pages, unwritten: %s" % sorted(unwritten_pages(w)))
print("write(): 32 fallocated pages written, mutex taken 0 times, %d shared handles" %
      s["trans_shared_handles"])

# Stores through a shared mapping: the first write fault of each page.
m = prealloc("m", 64)
fd = os.open(m, os.O_RDWR)
mp = mmap.mmap(fd, 64 * P, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
c.reset()
for i in range(0, 64, 4):
    mp[i * P + 7] = 0x5a
s = c.read()
mp.flush()
mp.close()
os.close(fd)
check(s["journal_lock_takes"] == 0,
      "16 write faults on fallocated pages took the transaction mutex %d times" %
      s["journal_lock_takes"])
left = set(range(64)) - set(range(0, 64, 4))
check(unwritten_pages(m) == left,
      "after stores to every 4th page, unwritten: %s" % sorted(unwritten_pages(m)))
print("mmap: 16 fallocated pages written by faults, mutex taken 0 times")

# A write fault that maps a whole superpage (one PMD entry over frames that
# are one aligned run, as fallocate gives a large file) makes all its
# pages written: stores through the mapping reach any of them without
# another fault.
h = prealloc("h", 1024)
fd = os.open(h, os.O_RDWR)
mp = mmap.mmap(fd, 2 * VSP, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
c.reset()
mp[5] = 0x11
mp[VSP + 3 * P + 9] = 0x22
for v in range(2):
    mp[v * VSP + 300 * P] = 0x33
s = c.read()
mp.flush()
mp.close()
os.close(fd)
check(s["fault_pmd"] >= 1, "no write fault on the preallocated superpages mapped a PMD: %r" %
      {k: s[k] for k in ("fault_pmd", "fault_pte", "fault_pmd_fallback")})
check(s["journal_lock_takes"] == 0,
      "write faults on preallocated superpages took the transaction mutex %d times" %
      s["journal_lock_takes"])
left = unwritten_pages(h)
whole = 0
for v in range(2):
    mine = {pg for pg in left if pg // 512 == v}
    touched = {0} if v == 0 else {3}
    touched.add(300)
    if not mine:
        whole += 1
    else:
        check(mine == set(range(512)) - touched,
              "superpage %d: unwritten after stores to pages %s: %d pages" %
              (v, sorted(touched), len(mine)))
check(whole == s["fault_pmd"],
      "%d PMD write faults, %d superpages reported written whole" % (s["fault_pmd"], whole))
print("mmap: %d of 2 preallocated superpages mapped by PMD faults, written whole" % whole)

# Two processes, each over a preallocated file of its own.


def fill(name):
    fd = os.open(os.path.join(mnt, name), os.O_RDWR)
    for i in range(256):
        os.pwrite(fd, bytes([i % 251 + 1]) * P, i * P)
    os.fsync(fd)
    os.close(fd)


for k in range(2):
    prealloc("p%d" % k, 256)
c.reset()
run_parallel(fill, [("p%d" % k,) for k in range(2)], "writes over fallocated pages")
s = c.read()
# Two fsyncs commit; a pool refill per CPU at most besides.
check(s["journal_lock_takes"] <= 6,
      "2 x 256 writes over fallocated pages took the transaction mutex %d times" %
      s["journal_lock_takes"])
for k in range(2):
    check(not unwritten_pages(os.path.join(mnt, "p%d" % k)),
          "p%d: pages still unwritten after every one was written" % k)
print("2 x 256 writes over fallocated pages: mutex taken %d times" % s["journal_lock_takes"])

# Appends into pages kept past the end (FALLOC_FL_KEEP_SIZE), as a log
# preallocated by its writer: the size grows in the shared handle.
k = os.path.join(mnt, "k")
with open(k, "wb") as f:
    f.write(b"k" * 5000)
subprocess.run(["fallocate", "-n", "-l", str(64 * P), k], check=True)
fd = os.open(k, os.O_RDWR | os.O_APPEND)
check(os.fstat(fd).st_size == 5000, "KEEP_SIZE changed the size")
c.reset()
for i in range(40):
    os.write(fd, bytes([i + 1]) * 1000)
s = c.read()
check(os.fstat(fd).st_size == 45000, "after 40 appends of 1000 bytes: %d bytes" %
      os.fstat(fd).st_size)
check(s["journal_lock_takes"] == 0,
      "40 appends into kept pages took the transaction mutex %d times" % s["journal_lock_takes"])
# Those that reach the next page swap fresh pages in; the others stay in
# the last page, written in place past the end, as any append.
cross = sum((5000 + 1000 * i) // P != (5999 + 1000 * i) // P for i in range(40))
check(s["write_staged"] == cross and s["write_staged_appends"] == 40 - cross,
      "40 appends into kept pages: %d staged overwrites (not %d), %d staged appends" %
      (s["write_staged"], cross, s["write_staged_appends"]))
os.close(fd)
# Pages 0-10 hold data now; 11-63 are still kept, unwritten.
check(unwritten_pages(k) == set(range(11, 64)),
      "k: unwritten after the appends: %s" % sorted(unwritten_pages(k)))
print("40 appends into kept pages: mutex taken 0 times, size %d" % 45000)
PY
umount "$MNT"
# In place (data=inplace): the flags go in a shared handle before the copy.
mount_vsmfs -o commit=300,data=inplace
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os
import sys
from vsmfs_test import check, Counters, P
dev, mnt = sys.argv[1:3]
c = Counters(dev)
p = os.path.join(mnt, "i")
fd = os.open(p, os.O_CREAT | os.O_RDWR, 0o644)
os.posix_fallocate(fd, 0, 16 * P)
c.reset()
for i in range(0, 16, 2):
    os.pwrite(fd, bytes([i + 1]) * 512, i * P + 512)
s = c.read()
os.close(fd)
check(s["journal_lock_takes"] == 0,
      "8 in-place writes over fallocated pages took the transaction mutex %d times" %
      s["journal_lock_takes"])
print("data=inplace: 8 fallocated pages written, mutex taken 0 times")
PY
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after writes over fallocated pages"; }
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os
import sys
from vsmfs_test import check, P
mnt = sys.argv[1]
with open(os.path.join(mnt, "w"), "rb") as f:
    d = f.read()
check(len(d) == 64 * P, "w: %d bytes" % len(d))
for i in range(64):
    pg = d[i * P:(i + 1) * P]
    if i % 4 == 0:
        want = bytes([i]) * P
    elif i % 2 == 0:
        want = bytes(1000) + bytes([i]) * 100 + bytes(P - 1100)
    else:
        want = bytes(P)
    check(pg == want, "w: page %d differs after a remount" % i)
with open(os.path.join(mnt, "m"), "rb") as f:
    d = f.read()
for i in range(64):
    want = bytes(7) + b"\x5a" + bytes(P - 8) if i % 4 == 0 else bytes(P)
    check(d[i * P:(i + 1) * P] == want, "m: page %d differs after a remount" % i)
for k in range(2):
    with open(os.path.join(mnt, "p%d" % k), "rb") as f:
        d = f.read()
    for i in range(256):
        check(d[i * P:(i + 1) * P] == bytes([i % 251 + 1]) * P,
              "p%d: page %d differs after a remount" % (k, i))
with open(os.path.join(mnt, "h"), "rb") as f:
    d = bytearray(f.read())
check(len(d) == 1024 * P and d[5] == 0x11 and d[512 * P + 3 * P + 9] == 0x22 and
      d[300 * P] == 0x33 and d[812 * P] == 0x33, "h: the stores through the mapping")
d[5] = d[512 * P + 3 * P + 9] = d[300 * P] = d[812 * P] = 0
check(d == bytes(1024 * P), "h: bytes not stored to are not zero")
with open(os.path.join(mnt, "k"), "rb") as f:
    d = f.read()
want = b"k" * 5000 + b"".join(bytes([i + 1]) * 1000 for i in range(40))
check(d == want, "k: %d bytes, %s the appends" % (len(d), "not" if d != want else ""))
with open(os.path.join(mnt, "i"), "rb") as f:
    d = f.read()
for i in range(16):
    want = bytes(512) + bytes([i + 1]) * 512 + bytes(P - 1024) if i % 2 == 0 else bytes(P)
    check(d[i * P:(i + 1) * P] == want, "i: page %d differs after a remount" % i)
print("data of every file as written, after a remount")
PY
unw=$(filefrag -v "$MNT/w" | grep -c unwritten || true)
[ "$unw" -gt 0 ] || die "w: no extent reported unwritten after a remount"
filefrag -v "$MNT/p0" | grep -q unwritten && die "p0: an extent still unwritten after a remount"
# i: its even pages written in place, the odd ones still unwritten.
unw=$(filefrag -v "$MNT/i" | grep -c unwritten || true)
[ "$unw" = 8 ] || { filefrag -v "$MNT/i"; die "i: $unw extents unwritten, not the 8 odd pages"; }
umount "$MNT"
echo "writes over fallocated pages: shared handles, flags and data kept over a remount"
