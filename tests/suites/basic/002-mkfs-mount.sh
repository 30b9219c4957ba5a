# mkfs, mount, an empty root directory, statfs, umount, and mkfs's
# refusal to overwrite an existing file system without -f.
. tests/lib/common.sh

"$MKFS" -f -L testvol "$DEV" | tee /tmp/mkfs.out
grep -q "inode table" /tmp/mkfs.out || die "mkfs did not print the layout"
mount_vsmfs
assert_eq "$(ls -A "$MNT" | wc -l)" 0 "entries in a new root"
assert_eq "$(stat -c %F:%a "$MNT")" "directory:755" "root type and mode"
assert_eq "$(stat -c %h "$MNT")" 2 "root link count"
# statfs: 1 GiB device minus metadata, all free, block size 4096.
set -- $(stat -f -c '%S %b %f %c %d' "$MNT")
assert_eq "$1" 4096 "statfs block size"
[ "$2" -gt 200000 ] && [ "$2" -lt 262144 ] || die "statfs blocks $2 implausible"
assert_eq "$3" "$2" "free blocks on an empty file system"
[ "$4" -gt 1000 ] || die "statfs inodes $4 implausible"
assert_eq "$5" "$(($4 - 1))" "free inodes (root in use)"
df -h "$MNT"
grep "^$DEV $MNT vsmfs rw,.*dax=always" /proc/mounts || die "options not in /proc/mounts"
umount "$MNT"

# Mounted twice in a row: still clean and empty.
mount_vsmfs
assert_eq "$(ls -A "$MNT" | wc -l)" 0 "entries after remount"
umount "$MNT"

# An existing file system is not overwritten without -f...
expect_fail "$MKFS" -q "$DEV"
grep -q "use -f" /tmp/expect_fail.out || die "refusal does not mention -f"
# ...a dry run writes nothing...
uuid=$(dd if="$DEV" bs=4096 count=1 iflag=direct 2>/dev/null | od -An -tx1 -j 200 -N 16)
"$MKFS" -n -J 8M -N 4096 "$DEV" | grep -q "journal .* 2048" || die "dry run layout"
assert_eq "$(dd if="$DEV" bs=4096 count=1 iflag=direct 2>/dev/null | od -An -tx1 -j 200 -N 16)" "$uuid" "UUID after -n"
# ...and -f does overwrite, with the requested sizes.
"$MKFS" -q -f -J 8M -N 4096 "$DEV"
[ "$(dd if="$DEV" bs=4096 count=1 iflag=direct 2>/dev/null | od -An -tx1 -j 200 -N 16)" != "$uuid" ] || die "UUID unchanged after -f"
assert_eq "$("$HELPERS/sbedit" "$DEV" get journal_blocks)" 2048 "journal blocks"
mount_vsmfs
# 4096 inodes asked for, plus the reserved i-number 0, rounded up to a
# whole inode-table block (16 slots): 4112 slots, 4111 usable.
assert_eq "$(stat -f -c %c "$MNT")" 4111 "inodes with -N 4096"
umount "$MNT"
