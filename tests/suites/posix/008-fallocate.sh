# fallocate (allocate, KEEP_SIZE, PUNCH_HOLE, ZERO_RANGE), SEEK_DATA and
# SEEK_HOLE, FIEMAP, and exact space accounting for each, truncations of
# files with pages reserved past their end included.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
touch "$MNT/first" && rm "$MNT/first"
free0=$(stat -f -c %f "$MNT")
F=$MNT/fa
K=4096
VSP=$((2 * 1024 * 1024))

# The logical page ranges FIEMAP reports for file $1 ("filefrag -v"),
# adjacent extents merged: "FIRST-LAST ...". With $2 = unwritten, only the
# extents flagged unwritten.
fiemap_ranges() {
	filefrag -v "$1" | awk -F'[:. ]+' -v only="${2:-}" '/^ *[0-9]+:/ {
		if (only != "" && $0 !~ only) next
		lo = $3; hi = $4
		if (n && lo == last + 1) { last = hi; next }
		if (n) printf "%d-%d ", first, last
		first = lo; last = hi; n++
	} END { if (n) printf "%d-%d", first, last }'
}

# Plain allocation extends the size and allocates zeroed pages.
fallocate -l $((VSP + 5 * K)) "$F"
assert_eq "$(stat -c %s "$F")" $((VSP + 5 * K)) "size after fallocate"
assert_eq "$(stat -c %b "$F")" $(((VSP + 5 * K) / 512)) "blocks after fallocate"
assert_eq "$(cmp -n $((VSP + 5 * K)) "$F" /dev/zero 2>&1 || true)" "" "fallocated reads zero"

# KEEP_SIZE past the end: blocks grow, size does not.
fallocate -n -o $((VSP + 5 * K)) -l $((3 * K)) "$F"
assert_eq "$(stat -c %s "$F")" $((VSP + 5 * K)) "size with KEEP_SIZE"
assert_eq "$(stat -c %b "$F")" $(((VSP + 8 * K) / 512)) "blocks with KEEP_SIZE"
# Pages past the end are part of a consistent file system.
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after KEEP_SIZE"; }
mount_vsmfs
assert_eq "$(stat -c %b "$F")" $(((VSP + 8 * K) / 512)) "blocks with KEEP_SIZE after remount"

# Fill with data, punch a hole at the end of the second piece and in the
# middle of the first: reads zeros there, data elsewhere intact.
python3 - "$F" <<'PY'
import os, sys
f = sys.argv[1]
fd = os.open(f, os.O_RDWR)
os.pwrite(fd, bytes(range(256)) * (os.fstat(fd).st_size // 256 + 1), 0)
os.close(fd)
PY
size=$(stat -c %s "$F")
cp "$F" /tmp/model
fallocate -p -o $((VSP + 2 * K)) -l $((10 * K)) "$F"
fallocate -p -o 100 -l $((3 * K)) "$F"
python3 - /tmp/model "$size" <<'PY'
import sys
m = bytearray(open(sys.argv[1], "rb").read())
VSP, K = 2 << 20, 4096
m[VSP + 2 * K:VSP + 12 * K] = b"\0" * (10 * K)
m[100:100 + 3 * K] = b"\0" * (3 * K)
m = m[:int(sys.argv[2])]
open(sys.argv[1], "wb").write(m)
PY
cmp "$F" /tmp/model || die "punched file differs from the model"
assert_eq "$(stat -c %s "$F")" "$size" "size unchanged by punch"
# Tail pages of the second piece were freed (2 pages stay: 8 KiB), and
# the two whole pages inside the middle punch (the sparse feature).
assert_eq "$(stat -c %b "$F")" $((VSP / 512)) "blocks after punch"

# SEEK_DATA / SEEK_HOLE on a sparse file: data at 0..8K and at 3 MiB.
S=$MNT/sparse
python3 - "$S" <<'PY'
import os, sys
VSP = 2 << 20
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"x" * 8192, 0)
os.pwrite(fd, b"y" * 4096, 3 * VSP)
os.ftruncate(fd, 5 * VSP)
def sd(off):
    try:
        return os.lseek(fd, off, os.SEEK_DATA)
    except OSError as e:
        return -e.errno
def sh(off):
    return os.lseek(fd, off, os.SEEK_HOLE)
checks = [
    (sd(0), 0), (sh(0), 8192), (sd(8192), 3 * VSP), (sd(VSP), 3 * VSP),
    (sh(3 * VSP), 3 * VSP + 4096), (sd(3 * VSP + 4096), -6), (sh(4 * VSP), 4 * VSP),
    (sd(5 * VSP), -6),
]
for i, (got, want) in enumerate(checks):
    if got != want:
        print("seek check", i, "got", got, "want", want)
        sys.exit(1)
os.close(fd)
PY
# FIEMAP: the extents (physically contiguous runs; swaps may have split a
# run of frames) cover exactly pages 0-1 and page 1536, the last flagged.
filefrag -v "$S" > /tmp/fiemap.txt
cat /tmp/fiemap.txt
assert_eq "$(fiemap_ranges "$S")" "0-1 1536-1536" "fiemap logical ranges"
grep -q 'last' /tmp/fiemap.txt || die "last extent not flagged"

# ZERO_RANGE: zeros inside data, blocks kept, size grows without -k.
Z=$MNT/zr
head -c $((3 * K)) /dev/urandom > "$Z"
fallocate -z -o 10 -l 20 "$Z"
assert_eq "$(od -An -tx1 -j10 -N20 "$Z" | tr -d ' \n')" "$(printf '%040d' 0)" "zero range"
fallocate -z -o $((3 * K)) -l $((5 * K)) "$Z"
assert_eq "$(stat -c %s "$Z")" $((8 * K)) "zero range extends size"
assert_eq "$(stat -c %b "$Z")" $((8 * K / 512)) "zero range allocates"

# Space reserved past the end stays reserved when a truncation grows the
# file over part of it, and reads as zeros: 10 MiB with KEEP_SIZE, 5 MiB
# written, grown to 7 MiB keeps 10 MiB, across a remount; shrinking below
# it gives the pages past the new end back.
R=$MNT/resv
: > "$R"
fallocate -n -o 0 -l $((10 << 20)) "$R"
dd if=/dev/urandom of="$R" bs=1M count=5 conv=notrunc status=none
truncate -s $((7 << 20)) "$R"
assert_eq "$(stat -c %s "$R")" $((7 << 20)) "size after growing over the reservation"
assert_eq "$(stat -c %b "$R")" $((10 << 20 >> 9)) "blocks after growing over the reservation"
assert_eq "$(od -An -v -tx1 -j $((5 << 20)) -N $((2 << 20)) "$R" | tr -d ' \n0' | wc -c)" 0 \
	"grown part of the reservation reads zeros"
umount "$MNT"
mount_vsmfs
assert_eq "$(stat -c %b "$R")" $((10 << 20 >> 9)) "reservation kept across a remount"
truncate -s $((3 << 20)) "$R"
assert_eq "$(stat -c %b "$R")" $((3 << 20 >> 9)) "blocks after shrinking"
rm -f "$R"

# A truncation to the size the file has gives back the pages reserved past
# its end, as ext4 and XFS do (xfstests generic/092): 10 MiB reserved with
# KEEP_SIZE, 5 MiB written, truncated to 5 MiB leaves 5 MiB of data, no
# extent past it, and the rest free. Reserved again past the end and grown
# to 7 MiB, the file keeps the reservation (unwritten past 5 MiB); shrunk
# to 6 MiB, inside the reservation, it keeps nothing past 6 MiB.
PG=$(stat -f -c %S "$MNT")
R=$MNT/resv2
: > "$R"
fallocate -n -o 0 -l $((10 << 20)) "$R"
dd if=/dev/urandom of="$R" bs=1M count=5 conv=notrunc status=none
sync
assert_eq "$(stat -c %b "$R")" $((10 << 20 >> 9)) "blocks of 10 MiB reserved, 5 MiB written"
assert_eq "$(fiemap_ranges "$R" unwritten)" "1280-2559" "unwritten extents of the reservation"
cp "$R" /tmp/resv2.model
free_a=$(free_blocks)
truncate -s $((5 << 20)) "$R"
sync
assert_eq "$(stat -c %s "$R")" $((5 << 20)) "size after a truncation to the size"
assert_eq "$(stat -c %b "$R")" $((5 << 20 >> 9)) "blocks after a truncation to the size"
assert_eq "$(du -k "$R" | cut -f1)" 5120 "du after a truncation to the size"
assert_eq "$(fiemap_ranges "$R")" "0-1279" "extents after a truncation to the size"
assert_eq "$(free_blocks)" $((free_a + (5 << 20) / PG)) "free blocks after a truncation to the size"
cmp "$R" /tmp/resv2.model || die "data changed by a truncation to the size"
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after a truncation to the size"; }
mount_vsmfs
assert_eq "$(stat -c %b "$R")" $((5 << 20 >> 9)) "blocks after a truncation to the size, remounted"
assert_eq "$(fiemap_ranges "$R")" "0-1279" "extents after a truncation to the size, remounted"
# A truncation to the size with nothing past the end changes nothing.
free_a=$(free_blocks)
truncate -s $((5 << 20)) "$R"
sync
assert_eq "$(stat -c %b "$R")" $((5 << 20 >> 9)) "blocks after a second truncation to the size"
assert_eq "$(free_blocks)" "$free_a" "free blocks after a second truncation to the size"
fallocate -n -o $((5 << 20)) -l $((5 << 20)) "$R"
truncate -s $((7 << 20)) "$R"
umount "$MNT"
mount_vsmfs
assert_eq "$(stat -c %b "$R")" $((10 << 20 >> 9)) "blocks after growing over a new reservation"
assert_eq "$(fiemap_ranges "$R")" "0-2559" "extents after growing over a new reservation"
assert_eq "$(fiemap_ranges "$R" unwritten)" "1280-2559" "unwritten extents after growing"
free_a=$(free_blocks)
truncate -s $((6 << 20)) "$R"
sync
assert_eq "$(stat -c %b "$R")" $((6 << 20 >> 9)) "blocks after shrinking inside the reservation"
assert_eq "$(fiemap_ranges "$R")" "0-1535" "extents after shrinking inside the reservation"
assert_eq "$(free_blocks)" $((free_a + (4 << 20) / PG)) \
	"free blocks after shrinking inside the reservation"
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after shrinking inside the reservation"; }
mount_vsmfs
cmp -n $((5 << 20)) "$R" /tmp/resv2.model || die "data changed by the truncations"
rm -f "$R"

# Collapse and insert ranges out of place are refused clearly: a collapse
# reaching the end, an insert at the end, an unaligned one (023 tests them).
expect_fail fallocate -c -o 0 -l $((8 * K)) "$Z"
expect_fail fallocate -i -o $((8 * K)) -l $K "$Z"
expect_fail fallocate -c -o 100 -l $K "$Z"

# Everything is given back.
rm -f "$F" "$S" "$Z"
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after delete"
umount "$MNT"
mount_vsmfs
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after remount"
