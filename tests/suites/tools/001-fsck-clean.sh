# fsck.vsmfs on sound file systems: a fresh one and one after a workload
# (every file type, links, renames, unlinks) find no errors in every mode;
# bad usage, a missing or mounted device and a foreign device are refused
# with the fsck(8) exit statuses.
. tests/lib/common.sh
. tests/lib/fsck.sh

mkfs_vsmfs -f "$DEV"
fsck_expect 0 -n "$DEV"
fsck_says "no errors found"
fsck_expect 0 "$DEV"
fsck_expect 0 -p "$DEV"
fsck_expect 0 -y -f -v "$DEV"
fsck_says "superblock:" "inodes"

# The reference workload, then more changes on top of it.
make_base
fsck_expect 0 -n "$DEV"
fsck_says "no errors found"
mount_vsmfs
(
	cd "$MNT"
	mv d1/d2 d3/
	mv big big2
	ln big2 d3/bighard
	rm -f d3/file1 d3/file2 d3/file3
	rmdir empty
	echo more >> f1
	truncate -s 3M big2
	mkdir -p deep/a/b/c
	ln -s "$(printf 'z%.0s' $(seq 1 3000))" deep/a/longer
	python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("sock")'
)
umount "$MNT"
fsck_expect 0 -n "$DEV"
fsck_says "no errors found"
fsck_expect 0 -y "$DEV"
fsck_expect 0 -p "$DEV"

# Usage errors: 16.
fsck_expect 16 -n -y "$DEV"
fsck_expect 16 -Q "$DEV"
fsck_expect 16
fsck_expect 16 "$DEV" "$DEV"
fsck_expect 0 -V

# Operational errors: 8.
fsck_expect 8 -n /dev/does-not-exist
fsck_says "No such file or directory"
fsck_expect 8 -n /dev/null
mount_vsmfs
fsck_expect 8 -n "$DEV"
fsck_says "in use (mounted?)"
fsck_expect 8 -y "$DEV"
umount "$MNT"
truncate -s 64M /tmp/ext4.img
mkfs.ext4 -q -F /tmp/ext4.img
fsck_expect 8 -n /tmp/ext4.img
fsck_says "no vsmfs file system found"

# An image file is checked like a device.
truncate -s 32M /tmp/small.img
"$MKFS" -q /tmp/small.img
fsck_expect 0 -n /tmp/small.img
rm -f /tmp/small.img /tmp/ext4.img
