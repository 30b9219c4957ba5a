# The source buffer of a data=atomic write cannot cut it in two. A write is
# first copied straight from the user's buffer; a copy that stops at a
# fault leaves nothing done and the write is made again from a source that
# cannot fault. A write from a shared mapping of the range it overwrites
# (whose mapping the write removes, so that the first copy stops) is
# copied to DRAM (write_bounces) and is one copy-on-write write, with the
# content a copy through a DRAM buffer would give; so is one from another
# part of the same file or from another vsmfs file, copied straight where
# its pages are mapped, else through DRAM; a write from ordinary memory, in
# one piece or many, is never copied to DRAM and is one write too; a buffer
# that stops being readable part way gives a short write of its readable
# part; and when the DRAM copy cannot be allocated the write fails with
# ENOMEM and changes nothing. A write that never finished would hit the
# timeout below.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
mkfs_vsmfs -f "$DEV"
mount_vsmfs
PYTHONPATH=tests/lib timeout 300 python3 -u - "$DEV" "$MNT" "$K" <<'PY'
import ctypes, errno, mmap, os, random, sys
from vsmfs_test import P, VSP, check, Counters
dev, mnt, k = sys.argv[1:4]
c = Counters(dev)
rnd = random.Random(19)
size = 8 << 20
fd = os.open(os.path.join(mnt, "f"), os.O_RDWR | os.O_CREAT, 0o644)
model = bytearray(rnd.randbytes(size))
check(os.pwrite(fd, model, 0) == size, "initial write")


def one_write(what, buf, off, bounced):
    """pwrite @buf at @off: whole, in one copy-on-write write, through DRAM
    if @bounced (either way if None)."""
    want = bytes(buf)
    c.reset()
    n = os.pwrite(fd, buf, off)
    s = c.read()
    check(n == len(want), "%s: wrote %d of %d bytes" % (what, n, len(want)))
    model[off:off + n] = want
    check(os.pread(fd, size, 0) == model, what + ": content differs")
    check(s["mcow_writes"] == 1, "%s: %d copy-on-write writes: %r" % (what, s["mcow_writes"], {k: v for k, v in s.items() if v}))
    check(bounced is None or s["write_bounces"] == (1 if bounced else 0),
          "%s: %d bounces" % (what, s["write_bounces"]))
    print("%s: one write of %d bytes" % (what, n))


m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
mv = memoryview(m)
# The very range written, as a page, unaligned, and across superpages.
one_write("same range, one page", mv[3 * P:4 * P], 3 * P, True)
one_write("same range, unaligned", mv[5000:5000 + 3 * P], 5000, True)
one_write("same range, 3 superpages", mv[100:100 + 3 * VSP], 100, True)
# Overlapping ranges, forward and backward, as memmove would copy.
one_write("overlap forward", mv[VSP:VSP + VSP + P], VSP + 2 * P + 7, True)
one_write("overlap backward", mv[VSP + 3 * P:2 * VSP], VSP, True)
# Another part of the same file and another vsmfs file.
one_write("other range", mv[3 * VSP:4 * VSP], 0, None)
g = os.open(os.path.join(mnt, "g"), os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(g, rnd.randbytes(VSP), 0)
gm = mmap.mmap(g, VSP, mmap.MAP_SHARED, mmap.PROT_READ)
one_write("other file", memoryview(gm)[P:VSP], 2 * P, None)

# Ordinary memory: held, not copied, in one piece or in many.
one_write("anonymous memory", bytearray(rnd.randbytes(VSP + 300)), 2 * VSP + 11, False)
parts = [rnd.randbytes(rnd.randrange(1, 3 * P)) for i in range(40)]
c.reset()
n = os.pwritev(fd, parts, 4 * P + 9)
s = c.read()
data = b"".join(parts)
check(n == len(data), "40 pieces: wrote %d of %d" % (n, len(data)))
model[4 * P + 9:4 * P + 9 + n] = data
check(os.pread(fd, size, 0) == model, "40 pieces: content differs")
check(s["mcow_writes"] == 1 and s["write_bounces"] == 0, "40 pieces: %r" % s)
print("40 pieces: one write of %d bytes" % n)

# A buffer whose last page cannot be read: a short write of the rest.
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
a = mmap.mmap(-1, 3 * P)
a[:] = rnd.randbytes(3 * P)
addr = ctypes.addressof(ctypes.c_char.from_buffer(a))
check(libc.mprotect(addr + 2 * P, P, 0) == 0, "mprotect: %d" % ctypes.get_errno())
c.reset()
n = os.pwrite(fd, memoryview(a)[:3 * P], 2 * VSP + 5)
s = c.read()
check(n == 2 * P, "unreadable last page: wrote %d bytes, not %d" % (n, 2 * P))
check(s["mcow_writes"] == 1, "unreadable last page: %d writes" % s["mcow_writes"])
check(libc.mprotect(addr + 2 * P, P, mmap.PROT_READ | mmap.PROT_WRITE) == 0, "mprotect back")
model[2 * VSP + 5:2 * VSP + 5 + n] = a[:n]
check(os.pread(fd, size, 0) == model, "unreadable last page: content differs")
print("unreadable last page: short write of %d bytes" % n)
libc.mprotect(addr, 3 * P, 0)
try:
    os.pwrite(fd, memoryview(a)[:P], 0)
    check(False, "write from an unreadable buffer succeeded")
except OSError as e:
    check(e.errno == errno.EFAULT, "unreadable buffer: %s" % e)
libc.mprotect(addr, 3 * P, mmap.PROT_READ | mmap.PROT_WRITE)
check(os.pread(fd, size, 0) == model, "unreadable buffer: content changed")

# No memory for the DRAM copy (of the range written, which the first copy
# cannot read): ENOMEM, nothing changed.
if os.path.isdir(k):
    with open(k + "/write_source_alloc/interval", "w") as f:
        f.write("1")
    c.reset()
    try:
        os.pwrite(fd, mv[VSP:2 * VSP], VSP)
        check(False, "write with the DRAM copy failing succeeded")
    except OSError as e:
        check(e.errno == errno.ENOMEM, "DRAM copy failing: %s" % e)
    finally:
        with open(k + "/write_source_alloc/interval", "w") as f:
            f.write("0")
    check(c.read()["mcow_writes"] == 0, "DRAM copy failing: a write was made")
    check(os.pread(fd, size, 0) == model, "DRAM copy failing: content changed")
    print("DRAM copy failing: ENOMEM, content unchanged")

# Past the end (a write in one handle, undone whole when its first copy
# stops at the unreadable page, then made again): a short append too.
check(libc.mprotect(addr + 2 * P, P, 0) == 0, "mprotect: %d" % ctypes.get_errno())
c.reset()
n = os.pwrite(fd, memoryview(a)[:3 * P], size + 3)
s = c.read()
check(libc.mprotect(addr + 2 * P, P, mmap.PROT_READ | mmap.PROT_WRITE) == 0, "mprotect back")
check(n == 2 * P, "append, unreadable last page: wrote %d bytes, not %d" % (n, 2 * P))
check(os.fstat(fd).st_size == size + 3 + n, "append: size %d" % os.fstat(fd).st_size)
model += bytes(3) + a[:n]
check(os.pread(fd, len(model), 0) == model, "append, unreadable last page: content differs")
print("append, unreadable last page: short write of %d bytes" % n)
mv.release()
m.close()
gm.close()
os.close(g)
os.close(fd)
PY
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck"; }
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os, sys
from vsmfs_test import check
check(os.stat(os.path.join(sys.argv[1], "f")).st_size == (8 << 20) + 3 + 2 * 4096,
      "size after remount")
PY
umount "$MNT"
