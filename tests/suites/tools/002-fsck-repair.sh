# Repairable damage, one kind at a time on the reference image: "-n"
# reports it and exits 4, the repair (-y or -p) says "repaired" and exits
# 1, a second check finds nothing, and the file system mounts and reads.
. tests/lib/common.sh
. tests/lib/fsck.sh

make_base
SB=$HELPERS/sbedit
sb_backup=$("$POKE" "$DEV" layout | sed -n 's/^sb_backup=//p')
last=$(( $(blockdev --getsize64 "$DEV") / 4096 - 1 ))
assert_eq "$sb_backup" "$last" "backup superblock in the last block"

# The corruption is made by a function named c_<kind>; the message fsck
# must print about it follows.
repair_case() {	# kind repair-option message...
	kind=$1
	opt=$2
	shift 2
	echo "--- $kind"
	restore_image
	"c_$kind"
	fsck_expect 4 -n "$DEV"
	fsck_says "$@"
	fsck_expect 1 "$opt" "$DEV"
	fsck_says "$@" "repaired"
	fsck_expect 0 -n "$DEV"
	mount_vsmfs
	ls -lR "$MNT" >/dev/null
	find "$MNT" -type f -exec cat {} + >/dev/null
	umount "$MNT"
	fsck_expect 0 -n "$DEV"
}

c_primary_sb_torn() { "$SB" -k "$DEV" set mount_count=77; }
repair_case primary_sb_torn -p "primary superblock: superblock checksum mismatch"

c_backup_sb_stale() { "$SB" -b "$DEV" set mount_count=77; }
repair_case backup_sb_stale -p "backup superblock (block $sb_backup) differs from the primary"

c_primary_sb_wrong() { "$SB" "$DEV" set journal_blocks=999; }
# Intact but wrong: not a torn write, so preen leaves it to a person.
restore_image
c_primary_sb_wrong
fsck_expect 4 -p "$DEV"
fsck_says "primary superblock: region table inconsistent" "not repaired in preen mode"
repair_case primary_sb_wrong -y "primary superblock:" "the backup (block $sb_backup) is valid"

# The start of the device wiped (primary superblock and block 1): mount
# finds no vsmfs, fsck -y restores the primary from the backup in the last
# block, and the file system mounts and reads.
c_start_wiped() { dd if=/dev/zero of="$DEV" bs=4096 count=2 oflag=direct conv=fsync 2>/dev/null; }
restore_image
c_start_wiped
mount_vsmfs 2>/dev/null && die "mounted with the start of the device wiped"
fsck_expect 4 -p "$DEV"
fsck_says "primary superblock: bad magic" "the backup (block $sb_backup) is valid" "run fsck.vsmfs -y"
repair_case start_wiped -y "primary superblock: bad magic" "the backup (block $sb_backup) is valid"

c_ibitmap_free() { "$POKE" "$DEV" ibit "$MID" 0; }
repair_case ibitmap_free -p "inode bitmap: inode $MID in use but marked free"

inodes=$("$POKE" "$DEV" layout | sed -n 's/^inodes=//p')
c_ibitmap_leak() { "$POKE" "$DEV" ibit $((inodes - 3)) 1; }
repair_case ibitmap_leak -y "inode bitmap: inode $((inodes - 3)) marked in use but not used"

c_lbitmap_free() {
	"$POKE" "$DEV" lbit "$(lpn_of "$("$POKE" "$DEV" inode "$BIG" get direct1)")" 0
}
repair_case lbitmap_free -y "logical page bitmap: logical page" "in use but marked free"

data_pages=$("$POKE" "$DEV" layout | sed -n 's/^data_pages=//p')
LEAK=$((data_pages - 3))
c_lbitmap_leak() { "$POKE" "$DEV" lbit "$LEAK" 1; }
repair_case lbitmap_leak -y "logical page bitmap: logical page $LEAK marked in use but not used"

c_nlink_high() { "$POKE" "$DEV" inode "$F1" set nlink=5; }
repair_case nlink_high -y "inode $F1 (regular file): link count 5, should be 2"

c_nlink_low() { "$POKE" "$DEV" inode "$F1" set nlink=1; }
repair_case nlink_low -p "inode $F1 (regular file): link count 1, should be 2"

c_dir_nlink() { "$POKE" "$DEV" inode "$D1" set nlink=7; }
repair_case dir_nlink -y "inode $D1 (directory): link count 7, should be 3"

# The parent a directory records for file handles: 0 is "not known", any
# other value must be the directory holding its entry.
c_dir_parent() { "$POKE" "$DEV" inode "$D2" set parent="$D3"; }
repair_case dir_parent -p "directory $D2: parent $D3, should be $D1"
restore_image
"$POKE" "$DEV" inode "$D2" set parent=0
fsck_expect 0 -n "$DEV"

c_ipages() { "$POKE" "$DEV" inode "$BIG" set pages=3; }
repair_case ipages -y "inode $BIG (regular file): i_pages 3, should be 1280"

# An orphan: in use, no links, no entry (as an unlinked file still open at
# a crash). Freed by -y with its pages.
c_orphan() {
	"$POKE" "$DEV" dirent "$ROOT" big set ino=0
	"$POKE" "$DEV" inode "$BIG" set nlink=0
}
repair_case orphan -y "inode $BIG (regular file, 1280 pages): orphan"
mount_vsmfs
assert_eq "$(stat -f -c %f "$MNT")" $((FREE + 1280)) "free pages after freeing the orphan"
[ ! -e "$MNT/big" ] || die "big still there"
umount "$MNT"

c_orphan_symlink() {
	"$POKE" "$DEV" dirent "$ROOT" longsl set ino=0
	"$POKE" "$DEV" inode "$LONGSL" set nlink=0
}
repair_case orphan_symlink -p "inode $LONGSL (symlink, 1 pages): orphan"

# The orphan after a crash (not cleanly unmounted), as a file unlinked
# while open or by a fast-commit record leaves it: the next mount's to
# free, counted by a check, not an error; a repair frees it.
echo "--- orphan, not cleanly unmounted"
restore_image
c_orphan
"$SB" "$DEV" set state=0
"$SB" -b "$DEV" set state=0
fsck_expect 0 -n "$DEV"
fsck_says "1 orphan inodes (unlinked while open, or by fast-commit records), which the next"
fsck_says "no errors found"
fsck_expect 1 -p "$DEV"
fsck_says "inode $BIG (regular file, 1280 pages): orphan" "repaired"
fsck_expect 0 -n "$DEV"

# Not cleanly unmounted: reported; a repairing run marks it clean.
restore_image
"$SB" "$DEV" set state=0
"$SB" -b "$DEV" set state=0
fsck_expect 0 -n "$DEV"
fsck_says "was not cleanly unmounted"
fsck_expect 0 -p "$DEV"
fsck_says "marked clean"
assert_eq "$("$SB" "$DEV" get state)" 1 "state after fsck -p"
assert_eq "$("$SB" -b "$DEV" get state)" 1 "backup state after fsck -p"
fsck_expect 0 -n "$DEV"
fsck_silent "cleanly"

# Several kinds at once.
restore_image
c_nlink_high
c_ibitmap_leak
c_lbitmap_leak
c_backup_sb_stale
fsck_expect 4 -n "$DEV"
fsck_expect 1 -y "$DEV"
fsck_expect 0 -n "$DEV"
