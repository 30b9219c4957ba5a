# Committed journal versions not yet written home (a crash before a
# checkpoint, built here with fspoke -j): "-n" reports them and checks the
# file system as the replay will leave it; "-y" and "-p" replay them as
# mount does (the metadata after an fsck replay and after a mount replay
# are byte for byte the same) and empty the journal. Header copies of an
# interrupted header update are restored first, and the uncommitted area
# is discarded.
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
	ckpt=$("$POKE" "$DEV" jsb get checkpoint)
	nlogged=$((ckpt & 0x1ffffff))	# the checkpoint pointer, without the commit number
	[ "$nlogged" -ge 2 ] || die "staged transaction has $nlogged blocks"
}

stage
fsck_expect 4 -n "$DEV"
fsck_says "committed blocks not yet written home (replay needed)"
fsck_silent "link count"
assert_eq "$("$POKE" "$DEV" jsb get checkpoint)" "$ckpt" "checkpoint pointer after fsck -n"
fsck_expect 1 -y "$DEV"
fsck_says "replay needed" "repaired"
assert_eq "$(( $("$POKE" "$DEV" jsb get checkpoint) & 0x01ffffff01ffffff ))" 0 "checkpoint pointer after fsck -y"
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
# (inode table through the last bitmap; mount keeps the journal's
# versions as delta bases, fsck empties it).
meta() {
	dd if="$DEV" bs=4096 skip="$itable_start" count=$((data_start - itable_start)) \
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

# An interrupted header update: the copy region holds the new value of a
# header (here: header 0 made the latest version of the root inode block
# over a torn in-place value) and j_hcopy says so. Recovery (fsck and
# mount) restores it before reading the headers.
restore_image
"$POKE" -j "$DEV" inode "$ROOT" set mode=040711
good=$("$POKE" "$DEV" jhdr 0 get home)
jb0=$("$POKE" "$DEV" jhdr 0 get jblock)
dd if="$DEV" bs=4096 skip=$((journal_start + 1)) count=1 iflag=direct 2>/dev/null |
	head -c 16 > /tmp/hdr0
hdr_blocks=$("$POKE" "$DEV" jsb get hdr_blocks)
dd if=/tmp/hdr0 of="$DEV" bs=16 seek=$(( (journal_start + 1 + hdr_blocks) * 256 )) \
	conv=notrunc,fsync 2>/dev/null
"$POKE" "$DEV" jhdr 0 set home=0 jblock="$("$POKE" "$DEV" jhdr 1 get jblock)"
"$POKE" "$DEV" jsb set hcopy=1
cp_img() { dd if="$DEV" of=/tmp/hcopy.img bs=1M iflag=direct 2>/dev/null; }
cp_img
fsck_expect 4 -n "$DEV"
fsck_says "replay needed" "1 header copies"
fsck_expect 1 -y "$DEV"
fsck_expect 0 -n "$DEV"
assert_eq "$("$POKE" "$DEV" jhdr 0 get jblock)" "$jb0" "header 0 after the copy was restored"
dd if=/tmp/hcopy.img of="$DEV" bs=1M oflag=direct conv=fsync 2>/dev/null
dmesg -C
mount_vsmfs
dmesg_has "journal: restored 1 header copies"
assert_eq "$(stat -c %a "$MNT")" 711 "root mode after mount recovery"
umount "$MNT"
fsck_expect 0 -n "$DEV"
assert_eq "$("$POKE" "$DEV" jhdr 0 get home)" "$good" "header 0 home after mount"

# A swap cut short (a commit moves journal blocks between headers one
# header at a time): a free header names the journal block of a committed
# version, and another block is named by none. Recovery (fsck and mount)
# gives the free header the block left over; the version keeps its own.
restore_image
"$POKE" -j "$DEV" inode "$F1" set nlink=2
"$POKE" "$DEV" inode "$F1" set nlink=6
jb0=$("$POKE" "$DEV" jhdr 0 get jblock)
"$POKE" "$DEV" jhdr 5 set jblock="$jb0"
cp_img
fsck_expect 4 -n "$DEV"
fsck_says "replay needed" "1 journal blocks named twice"
fsck_expect 1 -y "$DEV"
fsck_expect 0 -n "$DEV"
[ "$("$POKE" "$DEV" jhdr 5 get jblock)" != "$jb0" ] || die "fsck left header 5 on journal block $jb0"
dd if=/tmp/hcopy.img of="$DEV" bs=1M oflag=direct conv=fsync 2>/dev/null
dmesg -C
mount_vsmfs
dmesg_has "journal: remapped 1 journal blocks"
assert_eq "$(stat -c %h "$MNT/f1")" 2 "link count after a remap"
umount "$MNT"
fsck_expect 0 -n "$DEV"
[ "$("$POKE" "$DEV" jhdr 5 get jblock)" != "$jb0" ] || die "mount left header 5 on journal block $jb0"

# An uncommitted area (a crash inside a commit) is discarded.
restore_image
"$POKE" -j "$DEV" inode "$F1" set nlink=7
"$POKE" "$DEV" jsb set checkpoint=0 commit=1
fsck_expect 4 -n "$DEV"
fsck_says "0 committed blocks" "1 uncommitted blocks"
dmesg -C
mount_vsmfs
dmesg_has "journal: discarded 1 uncommitted blocks"
assert_eq "$(stat -c %h "$MNT/f1")" 2 "link count: the discarded version is not applied"
umount "$MNT"
fsck_expect 0 -n "$DEV"
rm -f /tmp/hcopy.img /tmp/hdr0
