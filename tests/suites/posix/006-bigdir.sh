# A directory of 50,000 entries: every name is found (a random sample and
# names with equal hashes), readdir returns each entry exactly once, also
# while entries are deleted and added under it, space of deleted entries is
# reused, lookups work after a remount, rmdir sees a non-empty directory,
# and removing everything gives back every block and inode.
. tests/lib/common.sh

N=${VSMFS_BIGDIR_ENTRIES:-50000}
big="python3 $VSMFS_TOP/tests/helpers/bigdir.py"
D="$MNT/big"

mkfs_vsmfs -f -N $((N * 3 / 2 + 4096)) "$DEV"
mount_vsmfs
mkdir "$MNT/other"
free0=$(stat -f -c '%f %d' "$MNT")
mkdir "$D"

$big create "$D" "$N"
assert_eq "$(ls -f "$D" | wc -l)" $((N + 400 + 2)) "ls count"
# Forget cached dentries so that the lookups below reach the file system.
sync
echo 2 > /proc/sys/vm/drop_caches
$big lookup "$D" "$N" 4000
$big readdir "$D" "$N"

size=$(stat -c %s "$D")
$big readdir-delete "$D" "$N"
$big refill "$D" "$N"
assert_eq "$(stat -c %s "$D")" "$size" "directory size after deleting and refilling"

umount "$MNT"
mount_vsmfs
expect_fail rmdir "$D"
grep -q "not empty" /tmp/expect_fail.out || die "rmdir of a full directory"
# Parallel first lookups after the remount.
$big lookup "$D" "$N" 300 & p1=$!
$big lookup "$D" "$N" 300 & p2=$!
$big lookup "$D" "$N" 300 & p3=$!
wait $p1 && wait $p2 && wait $p3 || die "parallel lookups"
$big lookup "$D" "$N" 4000
assert_eq "$(ls -f "$D" | wc -l)" $((N + 400 + 2)) "ls count after remount"

$big unlink-all "$D" 1
expect_fail rmdir "$D"
grep -q "not empty" /tmp/expect_fail.out || die "rmdir with one entry left"
rm "$D"/*
rmdir "$D"
umount "$MNT"
mount_vsmfs
assert_eq "$(stat -f -c '%f %d' "$MNT")" "$free0" "free blocks and inodes after removing all"
umount "$MNT"
