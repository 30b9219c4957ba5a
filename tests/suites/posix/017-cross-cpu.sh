# A copy-on-write overwrite on one CPU is seen by a read on another CPU
# that starts after the write returned, even when that CPU read the same
# pages just before: no stale translation of the mapping layer survives an
# overwrite. Two processes pinned to different CPUs take turns: the reader
# reads a page, the writer overwrites it (4 KiB and 1 KiB writes, so page
# table entries are swapped), the reader reads it again and must find the
# new content. Some writes span two pages (two swaps in one batch, which
# tlb=lazy logs page by page), some 64 KiB (too large to log: the reader
# flushes its TLB), and some follow a burst of 70 writes elsewhere (more
# batches than are logged). The writer reads each write back through the
# range on its own CPU, and the reader reads single pages too (through the
# device mapping, not the range). Both shootdown modes: tlb=lazy (the default)
# and tlb=eager.
. tests/lib/common.sh

[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
for tlb in lazy eager; do
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o tlb=$tlb
if [ $tlb = eager ]; then
	grep -q "^$DEV $MNT vsmfs .*,tlb=eager" /proc/mounts || die "tlb=eager not in /proc/mounts"
else
	! grep -q "^$DEV $MNT vsmfs .*tlb=" /proc/mounts || die "default tlb= shown in /proc/mounts"
fi
echo "tlb=$tlb:"
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os, random, struct, sys
from vsmfs_test import P, check

mnt = sys.argv[1]
path = os.path.join(mnt, "shared")
PAGES = 1024
ROUNDS = 3000

with open(path, "wb") as f:
    for pg in range(PAGES):
        f.write(struct.pack("<QQ", pg, 0) * (P // 16))

w2r_r, w2r_w = os.pipe()
r2w_r, r2w_w = os.pipe()
pid = os.fork()
if pid == 0:
    # Writer, on CPU 1.
    os.sched_setaffinity(0, {1})
    fd = os.open(path, os.O_WRONLY)
    fd2 = os.open(path, os.O_RDONLY)
    own_bad = 0
    rnd = random.Random(7)
    for gen in range(1, ROUNDS + 1):
        pg = struct.unpack("<I", os.read(r2w_r, 4))[0]
        x = rnd.random()
        if x < 0.02:
            for _ in range(70):
                o = rnd.randrange(PAGES)
                if o not in (pg, pg + 1):
                    os.pwrite(fd, struct.pack("<QQ", o, 0) * (P // 16), o * P)
        off = 0
        if x < 0.4:
            os.pwrite(fd, struct.pack("<QQ", pg, gen) * (P // 16), pg * P)
        elif x < 0.7:
            off = rnd.randrange(4) * 1024
            os.pwrite(fd, struct.pack("<QQ", pg, gen) * (1024 // 16), pg * P + off)
        elif x < 0.9:
            os.pwrite(fd, struct.pack("<QQ", pg, gen) * (2 * P // 16), pg * P)
        else:
            # The aligned 64 KiB holding the page and the next one.
            first = pg - pg % 16
            os.pwrite(fd, struct.pack("<QQ", pg, gen) * (32 * P // 16), first * P)
        # Read back on the writer's own CPU, through the range (two
        # pages): a CPU that swapped outside a use of the range drops
        # its own stale entries only when it next uses the range.
        back = os.pread(fd2, 2 * P, pg * P)
        if struct.unpack_from("<QQ", back, off)[1] != gen:
            own_bad += 1
        os.write(w2r_w, b"2" if x >= 0.7 else b"k")
    os._exit(1 if own_bad else 0)

# Reader, on CPU 0.
os.sched_setaffinity(0, {0})
fd = os.open(path, os.O_RDONLY)
rnd = random.Random(11)
last = {}
bad = 0
for gen in range(1, ROUNDS + 1):
    # Every write reaches pg; the reader has both pg and pg + 1 mapped.
    pg = rnd.randrange(PAGES - 32)
    # Pages read through the range and, one by one, through the device.
    before = os.pread(fd, 2 * P, pg * P)
    os.pread(fd, P, (pg + 1) * P)
    os.write(r2w_w, struct.pack("<I", pg))
    npg = 2 if os.read(w2r_r, 1) == b"2" else 1
    after = os.pread(fd, npg * P, pg * P)
    gens = {struct.unpack_from("<QQ", after, i)[1] for i in range(0, npg * P, 16)}
    if npg == 2:
        # Both pages hold only this write's generation.
        gens = {gen} if gens == {gen} else gens - {gen}
    if gen not in gens:
        bad += 1
        if bad <= 5:
            print("round %d page %d: read generations %s after the write" %
                  (gen, pg, sorted(gens)))
_, status = os.waitpid(pid, 0)
check(status == 0, "writer exited with %d (1: its own read-back missed its write)" % status)
check(bad == 0, "%d of %d reads after an overwrite missed it" % (bad, ROUNDS))
print("%d overwrites on CPU 1 seen by the next read on CPU 0" % ROUNDS)
PY
umount "$MNT"
done
