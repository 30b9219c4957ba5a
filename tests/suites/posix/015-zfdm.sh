# Zero-copy tail migration (ZFDM): a large file being appended owns the rest
# of its last superpage (st_blocks shows it); the last close gives it back;
# an append after reopening moves the last run into a fresh superpage by
# swapping page table entries: the data keeps its physical pages (FIEMAP)
# and nothing is copied. Huge mappings: a superpage whose frames are
# contiguous and aligned is mapped by one PMD fault; after a fine-grained
# overwrite scatters its frames, faults fall back to 4 KiB pages.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import mmap, os, sys
from vsmfs_test import P, VSP, check, Counters, phys
dev, mnt = sys.argv[1:3]
c = Counters(dev)
path = os.path.join(mnt, "log")
data = bytes(range(256)) * (300 * 1024 // 256)
c.reset()
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(0, len(data), 10 * 1024):
    os.write(fd, data[i:i + 10 * 1024])
st = os.fstat(fd)
check(st.st_blocks == VSP // 512,
      "open appender owns its superpage: st_blocks %d" % st.st_blocks)
os.close(fd)
st = os.stat(path)
check(st.st_blocks == 75 * P // 512, "after close: st_blocks %d" % st.st_blocks)
s = c.read()
check(s["zfdm_reclaims"] == 1 and s["zfdm_reclaimed_pages"] == 512 - 75,
      "reclaim counters %r" % s)

# Small files take the pages after the released tail.
fd = os.open(path, os.O_RDONLY)
first = phys(fd, 0)
last = phys(fd, 74 * P)
os.close(fd)
for i in range(600):
    with open(os.path.join(mnt, "small%d" % i), "wb") as f:
        f.write(b"s" * 6000)

c.reset()
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
os.write(fd, b"more" * 1024)
check(phys(fd, 0) == first and phys(fd, 74 * P) == last,
      "migrated data changed its physical pages")
s = c.read()
check(s["zfdm_migrations"] == 1 and s["zfdm_migrated_pages"] == 75,
      "migration counters %r" % s)
check(s["data_merge_bytes"] == 0 and s["data_cow_copy_bytes"] == 0, "data copied: %r" % s)
check(os.fstat(fd).st_blocks == VSP // 512, "owns a superpage again")
os.close(fd)
with open(path, "rb") as f:
    check(f.read() == data + b"more" * 1024, "content after migration")
for i in range(600):
    with open(os.path.join(mnt, "small%d" % i), "rb") as f:
        check(f.read() == b"s" * 6000, "small file %d" % i)

# Huge mapping of a fresh, contiguous superpage.
big = os.path.join(mnt, "big")
fd = os.open(big, os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"h" * (2 * VSP), 0)
c.reset()
m = mmap.mmap(fd, 2 * VSP, mmap.MAP_SHARED, mmap.PROT_READ)
check(m[0] == ord("h") and m[VSP + 7] == ord("h"), "huge mapping reads")
m.close()
s = c.read()
huge = s["fault_pmd"]
print("PMD faults %d, PTE faults %d, fallbacks %d" % (huge, s["fault_pte"], s["fault_pmd_fallback"]))
# A fine-grained overwrite scatters the first superpage's frames.
os.pwrite(fd, b"x" * 10, 100 * P)
c.reset()
m = mmap.mmap(fd, 2 * VSP, mmap.MAP_SHARED, mmap.PROT_READ)
check(m[100 * P:100 * P + 10] == b"x" * 10, "mapping after overwrite")
check(m[0] == ord("h"), "mapping after overwrite, page 0")
m.close()
s = c.read()
check(huge >= 1, "a contiguous superpage was not mapped by a PMD fault: %r" % s)
check(s["fault_pte"] >= 2, "4 KiB faults after the frames were scattered: %r" % s)
check(s["fault_pmd_fallback"] >= 1, "PMD fault on scattered frames did not fall back: %r" % s)
os.close(fd)

# Space: files of 2 MiB + 4 KiB, each written and closed, take what 4 KiB
# pages would (within 1%): the tail superpage of each is given back.
def used():
    st = os.statvfs(mnt)
    return st.f_blocks - st.f_bfree
d = os.path.join(mnt, "space")
os.mkdir(d)
before = used()
N = 150
c.reset()
for i in range(N):
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(bytes([i % 251]) * (VSP + P))
grown = used() - before
want = N * (VSP + P) // P
print("%d files of 2 MiB + 4 KiB: %d pages used, %d of data" % (N, grown, want))
check(grown <= want * 1.01, "space used %d pages, data %d pages" % (grown, want))
s = c.read()
check(s["zfdm_reclaims"] == N, "reclaims %d" % s["zfdm_reclaims"])
# Appends after reopening move the tails without copying.
c.reset()
for i in range(N):
    with open(os.path.join(d, "f%d" % i), "ab") as f:
        f.write(b"+" * 100)
s = c.read()
check(s["data_merge_bytes"] == 0 and s["data_cow_copy_bytes"] == 0,
      "appends after reopen copied data: %r" % s)
check(s["data_user_bytes"] == N * 100, "user bytes %d" % s["data_user_bytes"])
for i in range(N):
    with open(os.path.join(d, "f%d" % i), "rb") as f:
        check(f.read() == bytes([i % 251]) * (VSP + P) + b"+" * 100, "file %d" % i)
print("zfdm checks passed")
PY
umount "$MNT"
