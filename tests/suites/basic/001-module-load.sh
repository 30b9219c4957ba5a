# Module load and unload: the file system type appears and disappears, and
# unloading after a mount leaves no slab cache or file system type behind.
. tests/lib/common.sh

grep -qw vsmfs /proc/filesystems || die "vsmfs not registered after insmod"
rmmod vsmfs
grep -qw vsmfs /proc/filesystems && die "vsmfs still registered after rmmod"
grep -q '^vsmfs_inode_cache ' /proc/slabinfo && die "inode cache left after rmmod"

insmod "$MODULE"
mkfs_vsmfs "$DEV"
mount_vsmfs
grep -q "^$DEV $MNT vsmfs " /proc/mounts || die "not in /proc/mounts"
expect_fail rmmod vsmfs				# busy while mounted
umount "$MNT"
rmmod vsmfs
grep -q '^vsmfs ' /proc/modules && die "module still loaded"
grep -q '^vsmfs_inode_cache ' /proc/slabinfo && die "inode cache left after rmmod"
insmod "$MODULE"
# Load/unload cycles.
for i in 1 2 3; do
	rmmod vsmfs
	insmod "$MODULE"
done
mount_vsmfs
umount "$MNT"
