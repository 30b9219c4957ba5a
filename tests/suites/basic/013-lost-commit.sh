# fsync and syncfs tell the truth when the file system stopped writing:
# with errors=remount-ro and group commit, a write not yet committed when
# an error made the file system read-only is lost, and every fsync of the
# file (and syncfs, once per open file) fails, whether the commit timer
# dropped the transaction first or the fsync found it still running
# (tests/lib/lost_commit.py). After a remount the write is absent, the
# rest of the tree is as committed, and fsck is clean once the corrupt
# entry is put back and the recorded error cleared.
. tests/lib/common.sh

POKE=$HELPERS/fspoke

for mode in wait nowait; do
	echo "--- $mode"
	mkfs_vsmfs -f "$DEV"
	mount_vsmfs -o commit=5,errors=remount-ro
	mkdir "$MNT/d"
	touch "$MNT/d/f1" "$MNT/d/f2"
	echo kept > "$MNT/kept"
	dino=$(stat -c %i "$MNT/d")
	umount "$MNT"
	good=$("$POKE" "$DEV" dirent "$dino" f2 get rec_len)
	"$POKE" "$DEV" dirent "$dino" f2 set rec_len=13

	dmesg -C
	mount_vsmfs -o commit=5,errors=remount-ro
	python3 "$VSMFS_TOP/tests/lib/lost_commit.py" "$MNT" "$mode" ||
		die "a lost change was reported durable ($mode)"
	dmesg_has "file system made read-only after an error"
	dmesg_has "dropped unwritten: its changes are lost"
	umount "$MNT"

	"$POKE" "$DEV" dirent "$dino" f2 set rec_len="$good"
	st=0
	"$FSCK" -y "$DEV" > /tmp/fsck.out 2>&1 || st=$?
	[ "$st" -le 1 ] || { cat /tmp/fsck.out; die "fsck -y found more than the error state"; }
	"$FSCK" -n "$DEV" || die "fsck -n after clearing the error state"
	mount_vsmfs
	[ -e "$MNT/lost" ] && die "the lost write is there after a remount"
	assert_eq "$(cat "$MNT/kept")" kept "committed file"
	ls "$MNT/d" > /dev/null
	umount "$MNT"
done
