# errors=: a directory entry corrupted on PM while unmounted (mount does
# not read directory blocks) is found when the directory is first read.
# continue: operations go on and the error is counted; remount-ro (the
# default): the file system becomes read-only and writes fail with EROFS.
# The error state survives unmount, mount warns about it, fsck.vsmfs
# reports it and clears it once nothing else is wrong, and the next mount
# is silent. panic is tried in persist/011-errors-panic.
. tests/lib/common.sh

POKE=$HELPERS/fspoke
S=/sys/fs/vsmfs/$(basename "$DEV")
errfield() { awk -v k="$1" '$1 == k { print $2 }' "$S/errors"; }

mkfs_vsmfs -f "$DEV"
mount_vsmfs
grep -q "^$DEV $MNT vsmfs rw,.*errors=remount-ro" /proc/mounts || die "errors= not shown"
assert_eq "$(errfield count)" 0 "errors before any"
mkdir "$MNT/d"
touch "$MNT/d/f1" "$MNT/d/f2"
dino=$(stat -c %i "$MNT/d")
umount "$MNT"
good=$("$POKE" "$DEV" dirent "$dino" f2 get rec_len)
"$POKE" "$DEV" dirent "$dino" f2 set rec_len=13

echo "--- errors=continue"
dmesg -C
mount_vsmfs -o errors=continue
grep -q "^$DEV $MNT vsmfs rw,.*errors=continue" /proc/mounts || die "errors=continue not shown"
out=$(ls "$MNT/d" 2>&1) && die "reading the corrupt directory succeeded"
echo "$out" | grep -q "Structure needs cleaning" || die "expected EUCLEAN, got: $out"
dmesg_has "vsmfs \($(basename "$DEV")\): error: .*inode $dino: directory: corrupt entry"
assert_eq "$(errfield state)" 1 "error state in sysfs"
[ "$(errfield count)" -ge 1 ] || die "error not counted"
assert_eq "$(errfield first_inode)" "$dino" "inode of the first error"
echo ok > "$MNT/after" || die "write after an error with errors=continue"
grep -q "^$DEV $MNT vsmfs rw," /proc/mounts || die "not rw with errors=continue"
umount "$MNT"
assert_eq "$(( $("$HELPERS/sbedit" "$DEV" get state) & 2 ))" 2 "error state on PM"

echo "--- errors=remount-ro"
dmesg -C
mount_vsmfs
dmesg_has "file system has errors: [0-9]+ found since the last check"
out=$(ls "$MNT/d" 2>&1) && die "reading the corrupt directory succeeded"
grep -q "^$DEV $MNT vsmfs ro,.*errors=remount-ro" /proc/mounts || die "not ro after the error"
dmesg_has "file system made read-only after an error"
out=$(touch "$MNT/x" 2>&1) && die "create after remount-ro succeeded"
echo "$out" | grep -q "Read-only file system" || die "expected EROFS, got: $out"
out=$(mount -o remount,rw "$MNT" 2>&1) && die "remount rw after the error succeeded"
cat "$MNT/after" > /dev/null
umount "$MNT"

echo "--- fsck"
"$POKE" "$DEV" dirent "$dino" f2 set rec_len="$good"
st=0
"$FSCK" -n "$DEV" > /tmp/fsck.out 2>&1 || st=$?
cat /tmp/fsck.out
assert_eq "$st" 4 "fsck -n with the error state"
grep -q "error state recorded while mounted" /tmp/fsck.out || die "fsck does not report the error state"
st=0
"$FSCK" -y "$DEV" || st=$?
assert_eq "$st" 1 "fsck -y clearing the error state"
"$FSCK" -n "$DEV" || die "fsck -n after the repair"
dmesg -C
mount_vsmfs
dmesg | grep -q "file system has errors" && die "mount warns after fsck"
assert_eq "$(errfield state)" 0 "error state after fsck"
assert_eq "$(errfield count)" 0 "error count after fsck"
ls "$MNT/d" > /dev/null
umount "$MNT"
