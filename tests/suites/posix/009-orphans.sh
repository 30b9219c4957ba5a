# A file unlinked while open keeps its space until the last close; if the
# system goes down first, the next read-write mount frees it, or the
# remount read-write of a read-only mount; so it does an O_TMPFILE file
# never linked.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
touch "$MNT/first" && rm "$MNT/first"
free0=$(stat -f -c %f "$MNT")
ifree0=$(stat -f -c %d "$MNT")
head -c 3000000 /dev/urandom > "$MNT/open-unlinked"
exec 3<"$MNT/open-unlinked"
rm "$MNT/open-unlinked"
[ "$(stat -f -c %f "$MNT")" -lt "$free0" ] || die "space freed while still open"
# Still readable through the descriptor.
assert_eq "$(head -c 3000000 <&3 | wc -c)" 3000000 "read of the unlinked file"
exec 3<&-
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "space back after last close"

# Leave an orphan on the device: keep it open and copy the device image
# while mounted (what a power cut would leave), then restore that image.
head -c 5000000 /dev/urandom > "$MNT/orphan"
oino=$(stat -c %i "$MNT/orphan")
exec 3<"$MNT/orphan"
rm "$MNT/orphan"
sync
# An O_TMPFILE file open as well, never linked: an orphan from its creation.
python3 - "$MNT" "$DEV" <<'PY'
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_TMPFILE | os.O_RDWR, 0o600)
os.write(fd, b"x" * 3000000)
os.sync()	# home blocks current: the damage below is not replayed over
subprocess.run(["dd", f"if={sys.argv[2]}", "of=/tmp/crash.img", "bs=1M", "iflag=direct",
                "conv=sparse", "status=none"], check=True)
PY
exec 3<&-
umount "$MNT"
dd if=/tmp/crash.img of="$DEV" bs=1M oflag=direct status=none
dmesg -C
mount_vsmfs
dmesg_has "freed 2 orphan inodes" || die "orphans not reported"
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "orphan space freed at mount"
assert_eq "$(stat -f -c %d "$MNT")" "$ifree0" "orphan inode freed at mount"
umount "$MNT"

# The same image mounted read-only, then remounted read-write: the orphan
# is freed at the remount, not left for good.
dd if=/tmp/crash.img of="$DEV" bs=1M oflag=direct status=none
dmesg -C
mount_vsmfs -o ro
dmesg | grep -q "orphan inode" && die "orphan freed by a read-only mount"
mount -o remount,rw "$MNT"
dmesg_has "freed 2 orphan inodes" || die "orphans not freed at the remount read-write"
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "orphan space freed at the remount"
assert_eq "$(stat -f -c %d "$MNT")" "$ifree0" "orphan inode freed at the remount"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the remount"

# An orphan that cannot be freed (its mode damaged) does not keep the file
# system from mounting, and keeps it marked in use, unmount after unmount.
# The damage is a recorded error; errors=continue keeps the file system
# writable, so that the unmount is the one that leaves the orphan.
dd if=/tmp/crash.img of="$DEV" bs=1M oflag=direct status=none
rm -f /tmp/crash.img
$HELPERS/fspoke "$DEV" inode "$oino" set mode=0170644
dmesg -C
mount_vsmfs -o errors=continue
dmesg_has "freeing orphan inodes failed"
dmesg_has "invalid mode"
umount "$MNT"
dmesg_has "orphan inodes left for the next mount to free"
assert_eq "$(( $($HELPERS/sbedit "$DEV" get state) & 1 ))" 0 "clean flag with an orphan left"
mkfs_vsmfs -f "$DEV"
mount_vsmfs
