# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the benchmark guest scripts (bench/lib/*-guest), after
# tests/lib/common.sh and with S set to the device's sysfs directory:
# mount_fs FS formats $DEV and mounts it on $MNT as one of the file systems
# the benchmarks compare, unmount_fs FS unmounts it; counter NAME prints a
# vsmfs counter (nothing on other file systems, or for a counter the
# module does not have); now prints the time in seconds. vsmfs-base is
# vsmfs with the module and mkfs.vsmfs of the built tree $VSMFS_BASE,
# loaded in place of this tree's module until unmount_fs. nova is NOVA
# with its module $VSMFS_NOVA (built outside the tree), loaded until
# unmount_fs, formatted by its mount option init and mounted with
# data_cow (copy-on-write data). MKFS_EXT4_EXTRA, when
# set, is added to mkfs.ext4's options (for example "-E
# lazy_itable_init=0,lazy_journal_init=0", so that no inode table is zeroed
# in the background while the first workload runs).

mount_fs() {
	case $1 in
	vsmfs)		"$MKFS" -q -f "$DEV"; mount -t vsmfs "$DEV" "$MNT" ;;
	vsmfs-nosparse)	"$MKFS" -q -f -O ^sparse "$DEV"; mount -t vsmfs "$DEV" "$MNT" ;;
	vsmfs-nodelta)	"$MKFS" -q -f "$DEV"; mount -t vsmfs -o journal_delta=off "$DEV" "$MNT" ;;
	vsmfs-nowear)	"$MKFS" -q -f "$DEV"; mount -t vsmfs -o journal_wear=off "$DEV" "$MNT" ;;
	vsmfs-nogc)	"$MKFS" -q -f "$DEV"; mount -t vsmfs -o journal_gc=off "$DEV" "$MNT" ;;
	vsmfs-noagg)	"$MKFS" -q -f "$DEV"; mount -t vsmfs -o aggregate=off "$DEV" "$MNT" ;;
	vsmfs-serial)	"$MKFS" -q -f "$DEV"; mount -t vsmfs -o journal_commit=serial "$DEV" "$MNT" ;;
	vsmfs-commitsync) "$MKFS" -q -f "$DEV"; mount -t vsmfs -o commit=sync "$DEV" "$MNT" ;;
	vsmfs-1g)	"$MKFS" -q -f "$DEV"; mount -t vsmfs -o huge=1g "$DEV" "$MNT" ;;
	vsmfs-base)	rmmod vsmfs
		insmod "$VSMFS_BASE/fs/vsmfs/vsmfs.ko"
		"$VSMFS_BASE/tools/mkfs.vsmfs" -q -f "$DEV"
		mount -t vsmfs "$DEV" "$MNT" ;;
	nova)		modprobe libcrc32c
		insmod "$VSMFS_NOVA"
		mount -t NOVA -o init,data_cow "$DEV" "$MNT" ;;
	ext4-dax)	# shellcheck disable=SC2086
		mkfs.ext4 -q -F -b 4096 ${MKFS_EXT4_EXTRA:-} "$DEV"
		mount -t ext4 -o dax "$DEV" "$MNT" ;;
	xfs-dax)	mkfs.xfs -q -f -m reflink=0 "$DEV"; mount -t xfs -o dax=always "$DEV" "$MNT" ;;
	esac
}

unmount_fs() {
	umount "$MNT"
	if [ "$1" = vsmfs-base ]; then
		rmmod vsmfs
		insmod "$MODULE"
	elif [ "$1" = nova ]; then
		rmmod nova
	fi
}

counter() {
	if [ -r "$S/$1" ]; then cat "$S/$1"; fi
}

now() {
	date +%s.%N
}
