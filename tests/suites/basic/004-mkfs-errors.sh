# mkfs.vsmfs on bad targets: a clear message and a non-zero exit code.
. tests/lib/common.sh

expect_fail "$MKFS" /dev/does-not-exist
grep -q "No such file or directory" /tmp/expect_fail.out || die "missing-device message"

truncate -s 8M /tmp/small.img
expect_fail "$MKFS" /tmp/small.img
grep -q "too small" /tmp/expect_fail.out || die "small-device message"

expect_fail "$MKFS" /dev/null
grep -q "not a block device or regular file" /tmp/expect_fail.out || die "char device message"

expect_fail "$MKFS" -J 1T "$DEV"
grep -q "invalid journal size '1T': the range is 64K to 64G" /tmp/expect_fail.out \
	|| die "journal size message"
expect_fail "$MKFS" -L 0123456789012345678901234567890123456789 "$DEV"
expect_fail "$MKFS" -J abc "$DEV"
expect_fail "$MKFS"

# A mounted device is refused (opened exclusively).
mkfs_vsmfs -f "$DEV"
mount_vsmfs
expect_fail "$MKFS" -f "$DEV"
grep -q "in use" /tmp/expect_fail.out || die "busy-device message"
umount "$MNT"

# An image file works like a device.
truncate -s 64M /tmp/img
"$MKFS" -q /tmp/img
"$HELPERS/sbedit" /tmp/img get magic | grep -q . || die "image not formatted"
