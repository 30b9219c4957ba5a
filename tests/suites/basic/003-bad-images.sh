# Unformatted, foreign and damaged devices refuse to mount with EINVAL and a
# one-line reason in dmesg; a torn primary superblock falls back to the
# backup and is repaired.
. tests/lib/common.sh

SB=$HELPERS/sbedit

try() {	# expected-errno dmesg-pattern [mount options]
	dmesg -C
	got=$(mount_errno "$DEV" "$MNT" ${3:-})
	assert_eq "$got" "$1" "mount result"
	[ -z "$2" ] || dmesg_has "$2"
	dmesg | grep vsmfs | sed 's/^/  dmesg: /'
}

# Zeroed device.
dd if=/dev/zero of="$DEV" bs=1M count=4 2>/dev/null
try EINVAL "vsmfs \(pmem0\): .*no vsmfs file system found: bad magic"

# Foreign file system (ext4).
mkfs.ext4 -q -F "$DEV" >/dev/null
try EINVAL "no vsmfs file system found"

# Bad magic in a vsmfs image.
mkfs_vsmfs -f "$DEV"
$SB "$DEV" set magic=0x12345678
try EINVAL "bad magic"

# Bad checksum in both copies.
mkfs_vsmfs -f "$DEV"
$SB -k "$DEV" set mount_count=99
$SB -b -k "$DEV" set mount_count=99
try EINVAL "checksum mismatch"

# Absurd sizes, with valid checksums.
for f in blocks=0 blocks=0x7fffffffffffffff blocks=1000 inodes=3 inodes=0xffffffffffff \
	 journal_blocks=0 journal_blocks=999999999 data_start=7 itable_start=0 \
	 block_size=65536 inode_size=128 vsp_pages=1 version=9 feature_incompat=0x80000000 \
	 root_ino=0; do
	mkfs_vsmfs -f "$DEV"
	$SB "$DEV" set "$f"
	$SB -b "$DEV" set "$f"
	echo "field $f:"
	try EINVAL "vsmfs \(pmem0\): "
done

# Unknown read-only compatible features: read-only mounts only, and no
# remount read-write.
mkfs_vsmfs -f "$DEV"
$SB "$DEV" set feature_ro_compat=0x80000000
try EINVAL "unknown read-only compatible features: mount read-only"
mount_vsmfs -o ro
dmesg -C
if mount -o remount,rw "$MNT" 2>/dev/null; then
	die "remounted read-write with unknown read-only compatible features"
fi
dmesg_has "unknown read-only compatible features: stays read-only"
grep -q " $MNT vsmfs ro," /proc/mounts || die "not read-only after the refused remount"
umount "$MNT"

# Logical page 0 or inode 0 free in the bitmaps: the allocators would
# hand out what names nothing.
for b in lbit ibit; do
	mkfs_vsmfs -f "$DEV"
	$HELPERS/fspoke "$DEV" $b 0 0
	echo "$b 0 clear:"
	try EINVAL "corrupt bitmaps: logical page 0 or inode 0 marked free"
done

# Link counts too low on PM: a file with two names but one link, a
# directory with two subdirectories but the count of none. Removing the
# names reports the damage; nothing wraps around or frees a linked inode.
# errors=continue: every removal goes on after the first error.
mkfs_vsmfs -f "$DEV"
mount_vsmfs
echo data > "$MNT/a"
ln "$MNT/a" "$MNT/b"
mkdir -p "$MNT/d/s1" "$MNT/d/s2"
fino=$(stat -c %i "$MNT/a")
dino=$(stat -c %i "$MNT/d")
umount "$MNT"
$HELPERS/fspoke "$DEV" inode "$fino" set nlink=1
$HELPERS/fspoke "$DEV" inode "$dino" set nlink=2
dmesg -C
mount_vsmfs -o errors=continue
ls -l "$MNT/a" "$MNT/b" > /dev/null
rm "$MNT/a" "$MNT/b"
rmdir "$MNT/d/s1" "$MNT/d/s2"
dmesg_has "inode $fino: link count 0 too low to drop"
dmesg_has "inode $dino: link count 2 too low to drop"
[ -d "$MNT/d" ] || die "directory lost after its link count ran low"
umount "$MNT"
mount_vsmfs
[ -d "$MNT/d" ] || die "directory lost at the remount"
[ -e "$MNT/a" ] && die "a still there"
umount "$MNT"
# The errors are recorded; nothing else is left wrong, so preen clears them.
st=0
"$FSCK" -p "$DEV" || st=$?
assert_eq "$st" 1 "fsck -p clearing the recorded errors"
"$FSCK" -n "$DEV" || die "fsck after removing names with low link counts"

# A torn primary (checksum mismatch) with a good backup: mounts from the
# backup, warns, and repairs the primary.
mkfs_vsmfs -f "$DEV"
$SB -k "$DEV" set mount_count=5
try OK "primary superblock damaged .*using the backup"
mount_vsmfs
umount "$MNT"
dmesg -C
mount_vsmfs
dmesg | grep -q "using the backup" && die "primary not repaired"
umount "$MNT"

# A DAX partition smaller than any vsmfs, holding the first block of one.
mkfs_vsmfs -f "$DEV"
dd if="$DEV" of=/tmp/sb.blk bs=4k count=1 2>/dev/null
python3 - "$DEV" <<'PY'
import struct, sys
# MBR: partition 1 at sector 2048, 8 sectors (4 KiB).
mbr = bytearray(512)
mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 8)
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f:
    f.write(mbr)
PY
blockdev --rereadpt "$DEV"
udevadm settle 2>/dev/null || true
[ -b "${DEV}p1" ] || die "no partition ${DEV}p1"
dd if=/tmp/sb.blk of="${DEV}p1" bs=4k count=1 2>/dev/null
dmesg -C
got=$(python3 tests/lib/mount_errno.py "${DEV}p1" "$MNT")
assert_eq "$got" EINVAL "mount of a 4 KiB partition"
dmesg_has "device too small: 4 KiB"
dd if=/dev/zero of="$DEV" bs=4k count=1 2>/dev/null
blockdev --rereadpt "$DEV"

# A device without DAX: a loop device.
modprobe loop
truncate -s 64M /tmp/nodax.img
"$MKFS" -q /tmp/nodax.img
loop=$(losetup -f --show /tmp/nodax.img)
dmesg -C
got=$(python3 tests/lib/mount_errno.py "$loop" "$MNT")
losetup -d "$loop"
assert_eq "$got" EINVAL "mount of a non-DAX device"
dmesg_has "does not support DAX"
