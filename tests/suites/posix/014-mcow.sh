# Multi-grained copy-on-write (data=atomic, the default): overwrites land in
# fresh pages: whole superpages by switching the index (coarse), parts by
# swapping page table entries (fine), partial pages merged; the counters
# say which, the content is right, the physical pages of overwritten data
# change and the others do not; cow=page, cow=superpage and data=inplace
# behave as documented; options are checked; an overwrite that cannot get
# space fails with ENOSPC and leaves the old content.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer inside a counted write: a commit shoots down the
# scratch pages of the writes it frees, which the counts below leave out.
mount_vsmfs -o commit=300
grep -q "^$DEV $MNT vsmfs rw,.*data=atomic,cow=multi" /proc/mounts ||
	die "default data=atomic,cow=multi not shown: $(grep " $MNT " /proc/mounts)"
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import mmap, os, random, sys
from vsmfs_test import P, VSP, check, Counters, phys
dev, mnt = sys.argv[1:3]
c = Counters(dev)
rnd = random.Random(14)
path = os.path.join(mnt, "f")
model = bytearray(rnd.randbytes(8 << 20))
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, model, 0)

def overwrite(off, n, what):
    data = rnd.randbytes(n)
    before = {o: phys(fd, o) for o in range(0, 8 << 20, P)}
    # The earlier writes committed first: a commit shoots down the
    # scratch pages of the writes it frees, which is not this write's.
    os.fsync(fd)
    c.reset()
    check(os.pwrite(fd, data, off) == n, what + ": short write")
    model[off:off + n] = data
    got = os.pread(fd, len(model), 0)
    check(got == model, what + ": content differs")
    after = {o: phys(fd, o) for o in range(0, 8 << 20, P)}
    for o in before:
        touched = o + P > off and o < off + n
        check((after[o] != before[o]) == touched,
              "%s: page at %d %s its frame" % (what, o, "kept" if touched else "changed"))
    s = c.read()
    # One write, whatever happens to the source buffer meanwhile.
    check(s["mcow_writes"] == 1 and s["write_bounces"] == 0,
          "%s: %d writes, %d bounces" % (what, s["mcow_writes"], s["write_bounces"]))
    return s

# 4 KiB at an unaligned offset: two pages copied on write, 4 KiB merged.
s = overwrite(3 * 1024 * 1024 + 100, P, "unaligned 4 KiB")
check(s["mcow_fine"] == 1 and s["mcow_coarse"] == 0, "unaligned 4 KiB: grains %r" % s)
check(s["pte_swaps"] == 2, "unaligned 4 KiB: %d PTE swaps" % s["pte_swaps"])
check(s["tlb_shootdowns"] == 1, "unaligned 4 KiB: %d shootdowns" % s["tlb_shootdowns"])
check(s["data_user_bytes"] == P and s["data_merge_bytes"] == P,
      "unaligned 4 KiB: user %d merged %d bytes" % (s["data_user_bytes"], s["data_merge_bytes"]))
check(s["mcow_writes"] == 1, "unaligned 4 KiB: mcow_writes %d" % s["mcow_writes"])
# An overwrite inside the file: its data copied before its handle began.
check(s["write_staged"] == 1, "unaligned 4 KiB: write_staged %d" % s["write_staged"])

# 1 KiB inside a page: at most one page of old data copied.
s = overwrite(5 * P + 1000, 1024, "1 KiB")
check(s["data_merge_bytes"] == P - 1024 and s["pte_swaps"] == 1,
      "1 KiB: merged %d bytes, %d swaps" % (s["data_merge_bytes"], s["pte_swaps"]))

# The paper's example: [3 MiB, 7 MiB) of an 8 MiB file: the middle
# superpage is replaced whole, half of each neighbour by PTE swaps.
s = overwrite(3 << 20, 4 << 20, "3-7 MiB")
check(s["mcow_coarse"] == 1 and s["mcow_fine"] == 2, "3-7 MiB: grains %r" % s)
check(s["pte_swaps"] == 512, "3-7 MiB: %d PTE swaps" % s["pte_swaps"])
check(s["tlb_shootdowns"] == 1, "3-7 MiB: %d shootdowns" % s["tlb_shootdowns"])
check(s["data_merge_bytes"] == 0, "3-7 MiB: merged %d" % s["data_merge_bytes"])

# Two whole superpages: index switches only.
s = overwrite(2 << 20, 4 << 20, "2-6 MiB")
check(s["mcow_coarse"] == 2 and s["mcow_fine"] == 0 and s["pte_swaps"] == 0,
      "2-6 MiB: %r" % s)

# An overwrite that also appends: atomic as a whole, the rest is new.
s = overwrite((8 << 20) - 2 * P, 2 * P, "tail pages")
data = rnd.randbytes(3 * P)
c.reset()
check(os.pwrite(fd, data, (8 << 20) - P) == 3 * P, "overwrite + append")
# It grows the file: copied under the transaction, not staged.
check(c.read()["write_staged"] == 0, "overwrite + append: staged")
model[(8 << 20) - P:] = data
check(os.pread(fd, len(model), 0) == model, "overwrite + append: content")

# A shared mapping made before an overwrite sees the new data after it.
m = mmap.mmap(fd, 4 << 20, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
check(m[P:2 * P] == model[P:2 * P], "mapping before overwrite")
s = overwrite(P + 10, 100, "under a mapping")
check(m[P:2 * P] == model[P:2 * P], "mapping after overwrite shows the new data")
m[P + 5:P + 8] = b"xyz"
model[P + 5:P + 8] = b"xyz"
check(os.pread(fd, 3, P + 5) == b"xyz", "store through the mapping after overwrite")
m.close()
os.close(fd)
print("data=atomic,cow=multi checks passed")
PY
umount "$MNT"
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os, sys
from vsmfs_test import check
fd = os.open(os.path.join(sys.argv[2], "f"), os.O_RDONLY)
check(os.fstat(fd).st_size == (8 << 20) + 2 * 4096, "size after remount")
os.close(fd)
PY

# cow=page: every page on its own, no index switch even for a superpage.
mount -o remount,cow=page "$MNT"
grep -q " $MNT vsmfs rw,.*data=atomic,cow=page" /proc/mounts || die "cow=page not shown"
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os, sys
from vsmfs_test import P, VSP, check, Counters
c = Counters(sys.argv[1])
fd = os.open(os.path.join(sys.argv[2], "f"), os.O_RDWR)
c.reset()
os.pwrite(fd, b"p" * VSP, VSP)
s = c.read()
check(s["mcow_coarse"] == 0 and s["pte_swaps"] == 512, "cow=page: %r" % s)
check(os.pread(fd, VSP, VSP) == b"p" * VSP, "cow=page: content")
os.close(fd)
PY

# cow=superpage: a 4 KiB overwrite copies the rest of its superpage.
mount -o remount,cow=superpage "$MNT"
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import ctypes, mmap, os, sys
from vsmfs_test import P, VSP, check, Counters
libc = ctypes.CDLL(None, use_errno=True)


def fallocate(fd, mode, off, n):
    if libc.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(n)):
        raise OSError(ctypes.get_errno(), "fallocate")
c = Counters(sys.argv[1])
fd = os.open(os.path.join(sys.argv[2], "f"), os.O_RDWR)
old = os.pread(fd, VSP, 0)
c.reset()
os.pwrite(fd, b"s" * 1024, 5 * P)
s = c.read()
check(s["data_cow_copy_bytes"] == VSP - 1024,
      "cow=superpage, 1 KiB: copied %d" % s["data_cow_copy_bytes"])
old = old[:5 * P] + b"s" * 1024 + old[5 * P + 1024:]
c.reset()
os.pwrite(fd, b"s" * P, 5 * P)
s = c.read()
check(s["data_cow_copy_bytes"] == VSP - P, "cow=superpage: copied %d" % s["data_cow_copy_bytes"])
check(s["pte_swaps"] == 0, "cow=superpage: %d swaps" % s["pte_swaps"])
want = old[:5 * P] + b"s" * P + old[6 * P:]
check(os.pread(fd, VSP, 0) == want, "cow=superpage: content")
# A shared mapping of pages the write does not touch follows the copy of
# their superpage: its stores reach the file, and it sees what read() does
# (and whole-piece punches and zeroing the same).
# Part of the superpage, so that it is mapped page by page (a mapping of a
# whole superpage may be one huge page, unmapped as a whole by any write).
m = mmap.mmap(fd, 16 * P, mmap.MAP_SHARED, offset=8 * P)
m9 = P	# file page 9
check(m[m9:m9 + 4] == want[9 * P:9 * P + 4], "cow=superpage: mapping before")
for what, change in (("write", lambda: os.pwrite(fd, b"t", 0)),
                     ("punch", lambda: fallocate(fd, 0x3, 2 * P, P)),
                     ("zero", lambda: fallocate(fd, 0x10, 3 * P, 10))):
    m[m9:m9 + 4] = b"mmap"
    change()
    check(m[m9:m9 + 4] == b"mmap", f"cow=superpage {what}: mapping lost its store")
    m[m9 + 4:m9 + 8] = b"MMAP"
    check(os.pread(fd, 8, 9 * P) == b"mmapMMAP",
          f"cow=superpage {what}: store through the mapping not in the file "
          f"({os.pread(fd, 8, 9 * P)!r})")
    m[m9:m9 + 8] = want[9 * P:9 * P + 8]
m.close()
os.close(fd)
PY

# data=inplace: overwrites stay in their pages.
mount -o remount,data=inplace "$MNT"
grep -q " $MNT vsmfs rw,.*data=inplace" /proc/mounts || die "data=inplace not shown"
grep " $MNT " /proc/mounts | grep -q "cow=" && die "cow= shown with data=inplace"
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os, sys, time
from vsmfs_test import P, check, Counters, phys
c = Counters(sys.argv[1])
fd = os.open(os.path.join(sys.argv[2], "f"), os.O_RDWR)
before = phys(fd, 7 * P)
c.reset()
os.pwrite(fd, b"i" * 100, 7 * P + 50)
s = c.read()
check(phys(fd, 7 * P) == before, "data=inplace moved the page")
check(s["data_inplace_bytes"] == 100 and s["pte_swaps"] == 0, "data=inplace: %r" % s)
check(os.pread(fd, 100, 7 * P + 50) == b"i" * 100, "data=inplace: content")
# Page overwrites inside the file take no transaction but for the times.
st0 = os.fstat(fd)
time.sleep(0.05)
data = os.urandom(8 * P)
for i in range(8):
    check(os.pwrite(fd, data[i * P:(i + 1) * P], (16 + i) * P) == P, "data=inplace: short")
check(os.pread(fd, 8 * P, 16 * P) == data, "data=inplace: content of page overwrites")
st1 = os.fstat(fd)
check(st1.st_mtime_ns > st0.st_mtime_ns and st1.st_ctime_ns > st0.st_ctime_ns,
      "data=inplace: overwrites left mtime/ctime at %d/%d" % (st1.st_mtime_ns, st1.st_ctime_ns))
os.close(fd)
open("/tmp/inplace.times", "w").write("%d %d\n" % (st1.st_mtime_ns, st1.st_ctime_ns))
PY
# Those times are the file's after a remount.
umount "$MNT"
mount_vsmfs -o data=inplace
assert_eq "$(python3 -c 'import os, sys; s = os.stat(sys.argv[1]); print(s.st_mtime_ns, s.st_ctime_ns)' \
	"$MNT/f")" "$(cat /tmp/inplace.times)" "data=inplace: times after a remount"
# cow= is kept with data=inplace and applies with data=atomic again.
mount -o remount,cow=page "$MNT"
grep " $MNT " /proc/mounts | grep -q "cow=" && die "cow= shown with data=inplace"
mount -o remount,data=atomic "$MNT"
grep -q " $MNT vsmfs rw,.*data=atomic,cow=page" /proc/mounts || die "cow=page not kept"
umount "$MNT"
dmesg -C
assert_eq "$(mount_errno "$DEV" "$MNT" cow=huge)" EINVAL "cow=huge"
dmesg_has "Unknown parameter|cow"
assert_eq "$(mount_errno "$DEV" "$MNT" data=journal)" EINVAL "data=journal"

# Copy-on-write needs free space: on a full file system an overwrite fails
# with ENOSPC and the old content stays.
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import errno, os, sys
from vsmfs_test import P, VSP, check
mnt = sys.argv[2]
fd = os.open(os.path.join(mnt, "f"), os.O_RDWR)
old = os.pread(fd, VSP, VSP)
fill = os.open(os.path.join(mnt, "fill"), os.O_RDWR | os.O_CREAT, 0o644)
off, chunk = 0, b"\xee" * (1 << 20)
while True:
    try:
        off += os.pwrite(fill, chunk, off)
    except OSError as e:
        check(e.errno == errno.ENOSPC, "fill: %s" % e)
        break
# Single pages left between runs go to small files.
i = 0
while True:
    try:
        with open(os.path.join(mnt, "s%d" % i), "wb") as sf:
            sf.write(b"\xee" * P)
        i += 1
    except OSError as e:
        check(e.errno == errno.ENOSPC, "fill pages: %s" % e)
        break
st = os.statvfs(mnt)
check(st.f_bfree < 256, "%d pages still free after filling" % st.f_bfree)
try:
    os.pwrite(fd, b"n" * (1 << 20), VSP)
    check(False, "overwrite on a full file system succeeded")
except OSError as e:
    check(e.errno == errno.ENOSPC, "overwrite on a full file system: %s" % e)
check(os.pread(fd, VSP, VSP) == old, "old content after ENOSPC")
# Zeroing a range is a copy-on-write too: ENOSPC, old content. A punch
# still works (in place) and reads zeros.
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def falloc(mode, off, n):
    if libc.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(n)):
        raise OSError(ctypes.get_errno(), "fallocate")
try:
    falloc(0x10 | 0x01, VSP + 100, 1 << 20)
    check(False, "zero range on a full file system succeeded")
except OSError as e:
    check(e.errno == errno.ENOSPC, "zero range on a full file system: %s" % e)
check(os.pread(fd, VSP, VSP) == old, "old content after zero range ENOSPC")
falloc(0x02 | 0x01, VSP + 100, 1 << 20)
old = old[:100] + bytes(1 << 20) + old[100 + (1 << 20):]
check(os.pread(fd, VSP, VSP) == old, "punch on a full file system: content")
os.close(fill)
os.unlink(os.path.join(mnt, "fill"))
for j in range(i + 1):
    if os.path.exists(os.path.join(mnt, "s%d" % j)):
        os.unlink(os.path.join(mnt, "s%d" % j))
check(os.pwrite(fd, b"n" * (1 << 20), VSP) == 1 << 20, "overwrite after freeing space")
os.close(fd)
print("ENOSPC checks passed")
PY
umount "$MNT"
