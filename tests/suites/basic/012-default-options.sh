# Default mount options stored by vsmfs-admin -o: applied by a plain mount
# and shown in /proc/mounts, overridden by the options given to mount,
# refused with a message when the module cannot parse them; vsmfs-admin
# refuses to change a mounted device.
. tests/lib/common.sh

ADMIN="$VSMFS_TOP/tools/vsmfs-admin"

mkfs_vsmfs -f "$DEV"
"$ADMIN" -o errors=continue,data=inplace "$DEV"
mount_vsmfs
grep -q "^$DEV $MNT vsmfs rw,.*errors=continue,data=inplace" /proc/mounts ||
	{ grep vsmfs /proc/mounts; die "stored options not applied"; }
expect_fail "$ADMIN" -L busy "$DEV"
grep -q "is mounted" /tmp/expect_fail.out || die "vsmfs-admin on a mounted device: no reason given"
umount "$MNT"

mount_vsmfs -o errors=remount-ro
grep -q "^$DEV $MNT vsmfs rw,.*errors=remount-ro,data=inplace" /proc/mounts ||
	{ grep vsmfs /proc/mounts; die "the user's option does not override the stored one"; }
umount "$MNT"

"$ADMIN" -f -o errors=sometimes "$DEV"
dmesg -C
assert_eq "$(mount_errno "$DEV" "$MNT")" EINVAL "mount with invalid stored options"
dmesg_has "invalid default mount option 'errors=sometimes' in the superblock"

"$ADMIN" -o "" "$DEV"
mount_vsmfs
grep -q "^$DEV $MNT vsmfs rw,.*errors=remount-ro,data=atomic" /proc/mounts ||
	{ grep vsmfs /proc/mounts; die "cleared options still applied"; }
umount "$MNT"
