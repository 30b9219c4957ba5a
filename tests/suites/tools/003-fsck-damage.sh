# Damage fsck.vsmfs must find but not repair (only derived data is
# repaired): each kind is reported with a message naming the inode, block
# or entry, "-n" exits 4, and "-y" still leaves errors (exit 4, or 5 when
# it could repair a consequence). Every case starts from the reference
# image, and the test ends by restoring it.
. tests/lib/common.sh
. tests/lib/fsck.sh

make_base
SB=$HELPERS/sbedit
eval "$("$POKE" "$DEV" layout)"

damage_case() {	# kind message...
	kind=$1
	shift
	echo "--- $kind"
	restore_image
	"c_$kind"
	fsck_expect 4 -n "$DEV"
	fsck_says "$@"
	fsck_expect_left -y "$DEV"
	fsck_says "$@"
}

c_sb_both() { "$SB" "$DEV" set inodes=4001; "$SB" -b "$DEV" set inodes=4001; }
damage_case sb_both "superblock: inode count out of range" "backup superblock:"

c_jsb_magic() { "$POKE" "$DEV" jsb set magic=0x1234; }
damage_case jsb_magic "journal superblock (block $journal_start): bad magic" "(magic 0x00001234,"

c_jhome_bad() { "$POKE" -j "$DEV" inode "$F1" set nlink=2; "$POKE" "$DEV" jhdr 0 set home=1; }
damage_case jhome_bad "journal: header 0: bad home block" "home block 1)"

c_jblock_dup() {
	"$POKE" -j "$DEV" inode "$F1" set nlink=2
	"$POKE" -j "$DEV" ibit "$MID" 1
	"$POKE" "$DEV" jhdr 1 set jblock="$("$POKE" "$DEV" jhdr 0 get jblock)"
}
damage_case jblock_dup "journal: header 1 maps journal block" "already mapped by header 0"

c_jnumber() { "$POKE" "$DEV" jhdr 7 set number=9; }
damage_case jnumber "journal: header 7: wrong header number" "(number 9,"

c_jflags() { "$POKE" -j "$DEV" inode "$F1" set nlink=2; "$POKE" "$DEV" jhdr 0 set flags=0x10; }
damage_case jflags "journal: header 0: bad flags in the checkpoint area" "flags 0x10,"

c_jpointer() { "$POKE" "$DEV" jsb set checkpoint=$(( (5 << 32) | 3 )); }
damage_case jpointer "journal superblock (block $journal_start): checkpoint pointer past" \
	"checkpoint 3, last transaction at 5,"

c_jlatest2() {
	"$POKE" -j "$DEV" inode "$F1" set nlink=2
	"$POKE" "$DEV" jsb set checkpoint=2
	"$POKE" "$DEV" jhdr 1 set flags=7 home="$("$POKE" "$DEV" jhdr 0 get home)"
}
damage_case jlatest2 "latest versions the last transaction does not order"

c_imap_dup() { "$POKE" "$DEV" imap "$MID" "$("$POKE" "$DEV" imap "$F1")"; }
damage_case imap_dup "inode mapping table: inode" "already used by inode"

c_imap_range() { "$POKE" "$DEV" imap "$MID" 99999999; }
damage_case imap_range "inode mapping table: inode $MID maps invalid slot 99999999"

c_ptable_dup() { "$POKE" "$DEV" ptable 5 "$("$POKE" "$DEV" ptable 6)"; }
damage_case ptable_dup "page table: logical page 6 maps frame" "already mapped by logical page 5"

c_ptable_range() { "$POKE" "$DEV" ptable 9 $((data_pages + 5)); }
damage_case ptable_range "page table: logical page 9 maps frame $((data_pages + 5)), past the last frame"

c_bad_mode() { "$POKE" "$DEV" inode "$MID" set mode=0170644; }
damage_case bad_mode "inode $MID (invalid type): invalid mode 0170644"

c_bad_flags() { "$POKE" "$DEV" inode "$MID" set flags=0x80; }
damage_case bad_flags "inode $MID (regular file): unknown flags (flags 0x80,"

c_file_parent() { "$POKE" "$DEV" inode "$MID" set parent="$D1"; }
damage_case file_parent "inode $MID (regular file): parent set on an inode that is not a directory" \
	"parent $D1,"

c_reserved() { "$POKE" "$DEV" inode "$MID" set reserved2=1; }
damage_case reserved "inode $MID (regular file): reserved fields are not zero"

c_run_count() {
	e=$("$POKE" "$DEV" inode "$BIG" get direct0)
	"$POKE" "$DEV" inode "$BIG" set direct0=$(( $(lpn_of "$e") | (513 << 48) ))
}
damage_case run_count "inode $BIG (regular file): index entry 0: run of 513 pages (must be 1..512)"

c_run_vsp() {
	e=$("$POKE" "$DEV" inode "$BIG" get direct0)
	"$POKE" "$DEV" inode "$BIG" set direct0=$(( ($(lpn_of "$e") + 1) | (512 << 48) ))
}
damage_case run_vsp "inode $BIG (regular file): index entry 0: run" "crosses a virtual superpage"

c_run_range() { "$POKE" "$DEV" inode "$MID" set direct0=$(( (lpages + 1) | (1 << 48) )); }
damage_case run_range "inode $MID (regular file): index entry 0: logical pages $((lpages + 1))+1 out of range"

c_run_eof() { "$POKE" "$DEV" inode "$MID" set size=4096; }
damage_case run_eof "inode $MID (regular file): index entry 0: page 1 of its run is past the end of the file (size 4096) and not zero"

c_double_use() { "$POKE" "$DEV" inode "$MID" set direct0="$("$POKE" "$DEV" inode "$BIG" get direct1)"; }
damage_case double_use "inode $MID (regular file): data at logical pages" "already owned" "by inode $BIG"

c_ind_ptr() { "$POKE" "$DEV" inode "$D3" set ind=$((lpages + 7)); }
damage_case ind_ptr "inode $D3 (directory): single indirect index pointer"

c_xattr_range() { "$POKE" "$DEV" inode "$F1" set xattr=$((lpages + 2)); }
damage_case xattr_range "inode $F1 (regular file): xattr block at logical page $((lpages + 2)) out of range"

c_xattr_owned() {
	"$POKE" "$DEV" inode "$MID" set xattr="$(lpn_of "$("$POKE" "$DEV" inode "$F1" get direct0)")"
}
damage_case xattr_owned "inode $MID (regular file): xattr block at logical page" "already owned" "by inode $F1"

c_dir_size() { "$POKE" "$DEV" inode "$D1" set size=5000; }
damage_case dir_size "inode $D1 (directory): directory size is not a whole number of blocks (size 5000)"

c_dir_hole() { "$POKE" "$DEV" inode "$D3" set direct3=0; }
damage_case dir_hole "inode $D3 (directory): directory block 3 is missing"

c_rec_len() { "$POKE" "$DEV" dirent "$ROOT" f1 set rec_len=13; }
damage_case rec_len "directory $ROOT, block 0, entry at" "bad record length (record length 13,"

c_name_len() { "$POKE" "$DEV" dirent "$ROOT" sl set name_len=200; }
damage_case name_len "directory $ROOT, block 0, entry at" "name length does not fit the record length" \
	"name length 200)"

c_d_type() { "$POKE" "$DEV" dirent "$ROOT" f1 set type=4; }
damage_case d_type "('f1'): type 4, but inode $F1 is of type 8 (regular file)"

c_d_hash() { "$POKE" "$DEV" dirent "$ROOT" f1 set hash=0x1234; }
damage_case d_hash "('f1'): name hash mismatch (hash 0x00001234, of the name 0x14226d78)"

c_name_slash() { "$POKE" "$DEV" dirent "$ROOT" f1 set name=a/; }
damage_case name_slash "('a/'): name contains '/' or NUL"

c_name_dot() { "$POKE" "$DEV" dirent "$ROOT" sl set name=..; }
damage_case name_dot "('..'): '.' and '..' are implicit and never stored"

c_dup_name() { "$POKE" "$DEV" dirent "$ROOT" sl set name=f1 hash=0x14226d78; }
damage_case dup_name "directory $ROOT, block 0, entry at" "duplicate name 'f1'"

c_free_target() { "$POKE" "$DEV" dirent "$ROOT" f1 set ino=$((inodes - 2)); }
damage_case free_target "('f1'): refers to free inode $((inodes - 2))"

c_past_target() { "$POKE" "$DEV" dirent "$ROOT" f1 set ino=$((inodes + 3)); }
damage_case past_target "('f1'): inode $((inodes + 3)) is past the last inode"

c_dir_hardlink() { "$POKE" "$DEV" dirent "$ROOT" sl set ino="$D2" type=4; }
damage_case dir_hardlink "second link to directory $D2 (first in directory" "directories have one link"

c_root_link() { "$POKE" "$DEV" dirent "$D1" f1hard set ino="$ROOT" type=4; }
damage_case root_link "('f1hard'): hard link to the root directory"

c_unreachable() {
	"$POKE" "$DEV" dirent "$ROOT" d1 set ino=0
	"$POKE" "$DEV" inode "$ROOT" set nlink=4
}
damage_case unreachable "directory $D2 is not reachable from the root"
fsck_says "inode $D1 (directory): link count 3 but no directory entry refers to it"

c_unattached() { "$POKE" "$DEV" dirent "$ROOT" sl set ino=0; }
damage_case unattached "inode $SL (symlink): link count 1 but no directory entry refers to it"

c_root_free() { "$POKE" "$DEV" inode "$ROOT" set mode=0; }
damage_case root_free "root inode 1 is not in use"

c_symlink_size() { "$POKE" "$DEV" inode "$SL" set size=0; }
damage_case symlink_size "inode $SL (symlink): symlink size out of range (size 0)"

c_fifo_index() { "$POKE" "$DEV" inode "$FIFO" set direct2=0x1000000000007; }
damage_case fifo_index "inode $FIFO (fifo): index entries set on a special file"

# The first MiB zeroed: the primary is restored from the backup in the
# last block, but the journal went with it, which is not repaired.
dd if=/dev/zero of="$DEV" bs=1M count=1 oflag=direct 2>/dev/null
fsck_expect 4 -n "$DEV"
fsck_says "primary superblock: bad magic" "the backup (block"
fsck_says "journal superblock (block 2): bad magic"

# A zeroed device, its last MiB too, holds no vsmfs: operational error.
mib=$(( $(blockdev --getsize64 "$DEV") >> 20 ))
dd if=/dev/zero of="$DEV" bs=1M seek=$((mib - 1)) count=1 oflag=direct 2>/dev/null
fsck_expect 8 -n "$DEV"
fsck_says "no vsmfs file system found"

restore_image
fsck_expect 0 -n "$DEV"
