# A committed transaction not yet written home (a crash between commit and
# checkpoint, built here by writing the transaction with fspoke -j): "-n"
# reports it and checks the file system as the replay will leave it; "-y"
# and "-p" replay it exactly as mount does (the metadata after an fsck
# replay and after a mount replay are byte for byte the same).
. tests/lib/common.sh
. tests/lib/fsck.sh

make_base
eval "$("$POKE" "$DEV" layout)"

# Home: a wrong link count. Journal: the right one, the inode bitmap block
# and a new mode for the root directory. Only the replay makes it sound.
stage() {
	restore_image
	"$POKE" "$DEV" inode "$F1" set nlink=9
	"$POKE" -j "$DEV" inode "$F1" set nlink=2
	"$POKE" -j "$DEV" ibit "$MID" 1
	"$POKE" -j "$DEV" inode "$ROOT" set mode=040700
	assert_eq "$("$POKE" "$DEV" inode "$F1" get nlink)" 9 "home link count before replay"
	commit=$("$POKE" "$DEV" jsb get commit)
	nlogged=$((commit & 0xffffffff))
	[ "$nlogged" -ge 2 ] || die "staged transaction has $nlogged blocks"
}

stage
fsck_expect 4 -n "$DEV"
fsck_says "journal: committed transaction" "not yet written home (replay needed)"
fsck_silent "link count"
assert_eq "$("$POKE" "$DEV" jsb get commit)" "$commit" "commit record after fsck -n"
fsck_expect 1 -y "$DEV"
fsck_says "replay needed" "repaired"
assert_eq "$("$POKE" "$DEV" jsb get commit)" 0 "commit record after fsck -y"
fsck_expect 0 -n "$DEV"
mount_vsmfs
assert_eq "$(stat -c %a "$MNT")" 700 "root mode after the replay"
assert_eq "$(stat -c %h "$MNT/f1")" 2 "link count after the replay"
umount "$MNT"

# Preen replays too.
stage
fsck_expect 1 -p "$DEV"
fsck_expect 0 -n "$DEV"

# The same transaction replayed by fsck and by mount: identical metadata
# (journal superblock through the last bitmap, and the superblock's
# region table).
meta() {
	dd if="$DEV" bs=4096 skip="$journal_start" count=$((data_start - journal_start)) \
		iflag=direct 2>/dev/null | sha256sum
}
stage
fsck_expect 1 -y "$DEV"
by_fsck=$(meta)
stage
dmesg -C
mount_vsmfs -o ro
dmesg_has "journal: replayed $nlogged blocks"
umount "$MNT"
by_mount=$(meta)
assert_eq "$by_mount" "$by_fsck" "metadata after mount replay vs fsck replay"
fsck_expect 0 -n "$DEV"

# A transaction whose replay would leave damage: reported after replay.
restore_image
"$POKE" -j "$DEV" inode "$F1" set nlink=5
fsck_expect 4 -n "$DEV"
fsck_says "replay needed"
fsck_says "inode $F1 (regular file): link count 5, should be 2"
fsck_expect 1 -y "$DEV"
fsck_expect 0 -n "$DEV"
