# Sparse files at page granularity (mkfs default: feature sparse): punched
# pages give their frames back, writes past a gap allocate only what they
# write, holes fill on write (copy-on-write, in place, mmap, fallocate), and
# st_blocks, statfs, SEEK_HOLE and FIEMAP report frames; across a remount,
# with fsck clean. Then the same image format without the feature (-O
# ^sparse) still works as before.
. tests/lib/common.sh

K=4096
VSP=$((2 << 20))
blocks() { stat -c %b "$1"; }
free_blocks() { sync; stat -f -c %f "$MNT"; }

mkfs_vsmfs -f "$DEV"
"$VSMFS_TOP/tools/vsmfs-inspect" "$DEV" | grep -i "sparse\|logical" || die "inspect shows no logical pages"
mount_vsmfs
# The first file takes what every later one finds ready (as 008).
touch "$MNT/first" && rm "$MNT/first"
free0=$(free_blocks)

# A 2 MiB file of data; punch 100 whole pages from 400 KiB, and a range
# with ragged edges (zeroed there, freed inside).
F=$MNT/f
head -c $VSP /dev/urandom > /tmp/sp-model
cp /tmp/sp-model "$F"
sync
b0=$(blocks "$F")
assert_eq "$b0" $((VSP / 512)) "blocks of a full 2 MiB file"
p0=$(counter holes_punched)
fallocate -p -o $((100 * K)) -l $((100 * K)) "$F"
fallocate -p -o $((300 * K + 100)) -l $((10 * K)) "$F"
python3 - /tmp/sp-model <<'PY'
import sys
K = 4096
m = bytearray(open(sys.argv[1], "rb").read())
m[100 * K:200 * K] = bytes(100 * K)
m[300 * K + 100:310 * K + 100] = bytes(10 * K)
open(sys.argv[1], "wb").write(m)
PY
cmp "$F" /tmp/sp-model || die "punched file differs from the model"
# 100 pages, and the 9 whole pages inside the ragged range.
assert_eq "$(blocks "$F")" $((b0 - 109 * 8)) "blocks after punching 109 whole pages"
assert_eq "$(($(counter holes_punched) - p0))" 109 "holes_punched"
assert_eq "$(free_blocks)" $((free0 - 512 + 109)) "free blocks after the punch"

# SEEK_HOLE / SEEK_DATA and FIEMAP see the holes inside the run.
python3 - "$F" <<'PY'
import fcntl, os, struct, sys
K = 4096
fd = os.open(sys.argv[1], os.O_RDONLY)
got = [os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 100 * K, os.SEEK_DATA),
       os.lseek(fd, 250 * K, os.SEEK_HOLE), os.lseek(fd, 301 * K, os.SEEK_DATA)]
want = [100 * K, 200 * K, 301 * K, 310 * K]
if got != want:
    sys.exit("seek: got %s, want %s" % (got, want))
# FS_IOC_FIEMAP: extents must not cover the holes.
FIEMAP = 0xC020660B
hdr = struct.pack("=QQLLLL", 0, 2 << 20, 0, 0, 64, 0)
buf = bytearray(hdr + bytes(56 * 64))
fcntl.ioctl(fd, FIEMAP, buf)
n = struct.unpack_from("=L", buf, 20)[0]
ext = [struct.unpack_from("=QQQ", buf, 32 + 56 * i) for i in range(n)]
mapped = sum(e[2] for e in ext)
if mapped != (512 - 109) * K:
    sys.exit("fiemap maps %d bytes in %d extents, want %d" % (mapped, n, (512 - 109) * K))
for lo, _, ln in ext:
    if lo < 200 * K and lo + ln > 100 * K:
        sys.exit("fiemap extent %d+%d covers the hole" % (lo, ln))
PY

# Writes into holes: a copy-on-write (data=atomic), then in place
# (data=inplace), then through a shared mapping, then fallocate.
python3 - "$F" /tmp/sp-model <<'PY'
import os, sys
K = 4096
f, model = sys.argv[1], sys.argv[2]
m = bytearray(open(model, "rb").read())
fd = os.open(f, os.O_RDWR)
d = os.urandom(K + 10)
os.pwrite(fd, d, 120 * K + 5)
m[120 * K + 5:121 * K + 15] = d
open(model, "wb").write(m)
PY
cmp "$F" /tmp/sp-model || die "atomic write into a hole differs from the model"
assert_eq "$(blocks "$F")" $((b0 - 107 * 8)) "blocks after an atomic write into two holes"
mount -o remount,data=inplace "$MNT"
f0=$(counter holes_filled)
python3 - "$F" /tmp/sp-model <<'PY'
import mmap, os, sys
K = 4096
f, model = sys.argv[1], sys.argv[2]
m = bytearray(open(model, "rb").read())
fd = os.open(f, os.O_RDWR)
d = os.urandom(100)
mm = mmap.mmap(fd, 2 << 20)
if mm[150 * K + 7] != 0:
    sys.exit("a hole read through a mapping is not zero")
# The write fills the hole the mapping showed as the zero page.
os.pwrite(fd, d, 150 * K + 7)
m[150 * K + 7:150 * K + 107] = d
if mm[150 * K + 7:150 * K + 107] != d:
    sys.exit("a mapping of a hole does not see the write that filled it")
mm[160 * K:160 * K + 3] = b"abc"
m[160 * K:160 * K + 3] = b"abc"
x = mm[170 * K]
mm.close()
if x != 0:
    sys.exit("a hole read through a mapping is not zero")
open(model, "wb").write(m)
PY
cmp "$F" /tmp/sp-model || die "in-place and mmap writes into holes differ from the model"
assert_eq "$(($(counter holes_filled) - f0))" 2 "holes_filled by an in-place write and a fault"
assert_eq "$(blocks "$F")" $((b0 - 105 * 8)) "blocks after writes into two more holes"
mount -o remount,data=atomic "$MNT"
fallocate -o $((100 * K)) -l $((100 * K)) "$F"
assert_eq "$(blocks "$F")" $((b0 - 9 * 8)) "blocks after fallocate over the holes"
cmp "$F" /tmp/sp-model || die "fallocate over holes changed data"

# Preallocation: pages fallocate gave and nothing wrote since are
# unwritten extents in FIEMAP (10 MiB kept-size, 5 MiB written, truncated
# up to 7 MiB: 10 MiB stay allocated, the last 5 MiB unwritten).
U=$MNT/u
touch "$U"
fallocate -n -l 10M "$U"
dd if=/dev/urandom of="$U" bs=1M count=5 conv=notrunc status=none
truncate -s 7M "$U"
assert_eq "$(blocks "$U")" $((10 << 11)) "blocks of 10 MiB preallocated, 5 MiB written"
fiemap() {
	python3 - "$1" <<'PY'
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
buf = bytearray(struct.pack("=QQLLLL", 0, 1 << 40, 1, 0, 256, 0) + bytes(56 * 256))
fcntl.ioctl(fd, 0xC020660B, buf)
n = struct.unpack_from("=L", buf, 20)[0]
w = u = 0
for i in range(n):
    lo, _, ln, _, _, fl, _ = struct.unpack_from("=QQQQQLL", buf, 32 + 56 * i)
    if fl & 0x800:
        u += ln
    else:
        w += ln
print(w >> 10, u >> 10)
PY
}
assert_eq "$(fiemap "$U")" "5120 5120" "FIEMAP KiB written and unwritten"
# A write into unwritten pages makes them written; the rest stay.
dd if=/dev/urandom of="$U" bs=1M count=1 seek=6 conv=notrunc status=none
assert_eq "$(fiemap "$U")" "6144 4096" "FIEMAP KiB after writing 1 MiB more"
rm "$U"

# A write far into a new piece allocates the pages it writes only; so do
# scattered writes into a large file (du of 1 GiB with 100 4 KiB writes).
G=$MNT/g
python3 - "$G" <<'PY'
import os, random, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"z" * 50 * 1024, 1600 * 1024)
os.close(fd)
PY
assert_eq "$(blocks "$G")" $((13 * 8)) "blocks of 50 KiB written at 1.6 MiB"
H=$MNT/h
truncate -s 1G "$H"
python3 - "$H" /tmp/sp-h <<'PY'
import os, random, sys
random.seed(7)
fd = os.open(sys.argv[1], os.O_RDWR)
model = {}
for i in range(100):
    off = random.randrange(0, (1 << 30) // 4096) * 4096
    d = os.urandom(4096)
    os.pwrite(fd, d, off)
    model[off] = d
with open(sys.argv[2], "w") as out:
    for off in sorted(model):
        out.write("%d %s\n" % (off, model[off].hex()))
PY
du_h=$(du -k "$H" | cut -f1)
echo "du of a 1 GiB file with 100 scattered 4 KiB writes: ${du_h} KiB"
[ "$du_h" -le $((400 + 16)) ] || die "du ${du_h} KiB, more than 400 KiB of data and 16 KiB of index"

# Collapse and insert range at page granularity, against a model: a 5 MiB
# file with holes, collapsed inside a piece and across pieces, then opened
# up by inserts; blocks follow the frames moved, and bad arguments fail.
C=$MNT/c
head -c $((5 << 20)) /dev/urandom > /tmp/sp-c
cp /tmp/sp-c "$C"
fallocate -p -o $((700 * K)) -l $((30 * K)) "$C"
python3 - "$C" /tmp/sp-c <<'PY'
import ctypes, os, sys
K = 4096
COLLAPSE, INSERT = 0x08, 0x20
libc = ctypes.CDLL(None, use_errno=True)
f, model = sys.argv[1], sys.argv[2]
m = bytearray(open(model, "rb").read())
m[700 * K:730 * K] = bytes(30 * K)
fd = os.open(f, os.O_RDWR)
def fa(mode, off, ln):
    if libc.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(ln)):
        return ctypes.get_errno()
    return 0
def check(what):
    got = os.pread(fd, len(m) + 4096, 0)
    if got != bytes(m) or os.fstat(fd).st_size != len(m):
        bad = next((i for i in range(min(len(got), len(m))) if got[i] != m[i]), None)
        sys.exit("%s: size %d want %d, first bad byte %s" % (what, len(got), len(m), bad))
for off, ln in [(10 * K, 3 * K), (600 * K, 200 * K), (1 << 20, 2 << 20), (5 * K, K)]:
    assert fa(COLLAPSE, off, ln) == 0, (off, ln)
    del m[off:off + ln]
    check("collapse %d+%d" % (off, ln))
for off, ln in [(K, K), (300 * K, 600 * K), (len(m) - K, 2 << 20), (7 * K, 5 * K)]:
    assert fa(INSERT, off, ln) == 0, (off, ln)
    m[off:off] = bytes(ln)
    check("insert %d+%d" % (off, ln))
import errno
want = [(fa(COLLAPSE, 100, K), errno.EINVAL), (fa(COLLAPSE, 0, len(m)), errno.EINVAL),
        (fa(INSERT, len(m) + K, K), errno.EINVAL), (fa(INSERT | 1, K, K), errno.EINVAL)]
for got, w in want:
    if got != w:
        sys.exit("fallocate errors: got %s" % [g for g, _ in want])
open(model, "wb").write(m)
PY
cmp "$C" /tmp/sp-c || die "collapsed and inserted file differs from the model"
# Frames: data pages of the model that are not all zero, at least.
python3 - "$C" "$(blocks "$C")" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
nz = sum(1 for i in range(0, len(d), 4096) if any(d[i:i + 4096]))
b = int(sys.argv[2]) // 8
print("shifted file: %d pages with data, %d pages allocated" % (nz, b))
if b < nz or b > len(d) // 4096 + 8:
    sys.exit("blocks %d pages out of range [%d, %d]" % (b, nz, len(d) // 4096 + 8))
PY

# Everything survives a remount, and fsck finds the image clean.
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after sparse writes"; }
mount_vsmfs
cmp "$F" /tmp/sp-model || die "punched and filled file differs after remount"
cmp "$C" /tmp/sp-c || die "collapsed and inserted file differs after remount"
assert_eq "$(blocks "$F")" $((b0 - 9 * 8)) "blocks after remount"
python3 - "$H" /tmp/sp-h <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for line in open(sys.argv[2]):
    off, h = line.split()
    if os.pread(fd, 4096, int(off)) != bytes.fromhex(h):
        sys.exit("scattered write at %s lost" % off)
if os.pread(fd, 4096, 12345 * 4096) != bytes(4096) and "%d" % (12345 * 4096) not in open(sys.argv[2]).read():
    sys.exit("a hole reads non-zero")
PY
rm -f "$F" "$G" "$H" "$C"
assert_eq "$(free_blocks)" "$free0" "free blocks after deleting the sparse files"

# Punched frames are free space: a full file system takes more data after
# a punch.
dd if=/dev/zero of="$MNT/fill" bs=1M status=none 2>/dev/null || true
# Pages a failed write reserved are free again once its transaction
# commits: fill again after each sync.
for i in 2 3 4; do
	sync
	dd if=/dev/zero of="$MNT/fill$i" bs=4K status=none 2>/dev/null || true
done
sync
echo "full: $(free_blocks) blocks free"
expect_fail dd if=/dev/zero of="$MNT/more" bs=64K count=1 status=none
fallocate -p -o $((1 << 20)) -l $((1 << 20)) "$MNT/fill"
sync
dd if=/dev/zero of="$MNT/more" bs=64K count=4 status=none || die "no room after punching 1 MiB of a full file system"
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after filling and punching"; }

# The format without the feature: punching inside a run zeroes, and the
# file keeps its blocks, as file systems made before it behave.
mkfs_vsmfs -f -O ^sparse "$DEV"
mount_vsmfs
head -c $VSP /dev/urandom > "$F"
sync
fallocate -p -o $((100 * K)) -l $((100 * K)) "$F"
assert_eq "$(blocks "$F")" $((VSP / 512)) "blocks after a punch without the sparse feature"
expect_fail fallocate -c -o $((4 * K)) -l $((4 * K)) "$F"
cmp -n $((100 * K)) -i $((100 * K)) "$F" /dev/zero || die "punched range not zero without the sparse feature"
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck of a file system without the sparse feature"; }
