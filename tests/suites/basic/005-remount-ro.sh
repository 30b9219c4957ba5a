# Read-only mounts and remounts: /proc/mounts, EROFS, and the clean flag in
# the superblock (set while not mounted read-write).
. tests/lib/common.sh

SB=$HELPERS/sbedit
state() { "$SB" "$DEV" get state; }

mkfs_vsmfs -f "$DEV"
assert_eq "$(state)" 1 "state after mkfs"
mount_vsmfs
assert_eq "$(state)" 0 "state while mounted rw"
mount -o remount,ro "$MNT"
grep -q "^$DEV $MNT vsmfs ro," /proc/mounts || die "not ro in /proc/mounts"
assert_eq "$(state)" 1 "state after remount ro"
out=$(mkdir "$MNT/x" 2>&1) && die "mkdir on a read-only mount succeeded"
echo "$out" | grep -q "Read-only file system" || die "expected EROFS, got: $out"
mount -o remount,rw "$MNT"
grep -q "^$DEV $MNT vsmfs rw," /proc/mounts || die "not rw in /proc/mounts"
assert_eq "$(state)" 0 "state after remount rw"
umount "$MNT"
assert_eq "$(state)" 1 "state after umount"

count=$("$SB" "$DEV" get mount_count)
mount_vsmfs -o ro
assert_eq "$("$SB" "$DEV" get mount_count)" "$count" "mount count after a ro mount"
assert_eq "$(state)" 1 "state while mounted ro"
umount "$MNT"
mount_vsmfs
assert_eq "$("$SB" "$DEV" get mount_count)" "$((count + 1))" "mount count after a rw mount"
umount "$MNT"
