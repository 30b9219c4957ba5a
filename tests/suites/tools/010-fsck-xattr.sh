# The contents of xattr blocks: what follows from sound entries (the entry
# count, the owner, reserved bytes and bytes past the used size, all zero)
# is reported by "-n" and repaired by "-y", after which the attributes
# read back as they were; damaged entries (one crossing the used size, an
# unknown namespace, a name on an ACL, one attribute twice, a bad magic)
# are reported and left, and the module refuses the block too.
. tests/lib/common.sh
. tests/lib/fsck.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
touch "$MNT/f" "$MNT/g"
setfattr -n user.color -v blue "$MNT/f"
setfattr -n user.shade -v 12345 "$MNT/f"
setfattr -n trusted.level -v 3 "$MNT/f"
F=$(stat -c %i "$MNT/f")
G=$(stat -c %i "$MNT/g")
umount "$MNT"
save_image
# The positions only: j_checkpoint also carries the commit number (fast_commit).
assert_eq "$(( $("$POKE" "$DEV" jsb get checkpoint) & 0x01ffffff01ffffff ))" 0 \
	"journal empty after the unmount"
fsck_expect 0 -n "$DEV"
XLPN=$("$POKE" "$DEV" inode "$F" get xattr)
XBLK=$("$POKE" "$DEV" lpnblock "$XLPN")
[ "$XLPN" != 0 ] && [ "$XBLK" != 0 ] || die "no xattr block on inode $F"
WHERE="inode $F (regular file): xattr block at logical page $XLPN:"

# Run a Python statement over the xattr block, as the bytearray b.
xpatch() {	# statement
	dd if="$DEV" of=/tmp/xattr.blk bs=4096 skip="$XBLK" count=1 iflag=direct 2>/dev/null
	python3 -c 'import struct, sys
b = bytearray(open("/tmp/xattr.blk", "rb").read())
exec(sys.argv[1])
open("/tmp/xattr.blk", "wb").write(b)' "$1"
	dd if=/tmp/xattr.blk of="$DEV" bs=4096 seek="$XBLK" count=1 oflag=direct \
		conv=notrunc,fsync 2>/dev/null
}

# The entries as setfattr left them: user.color at 32, user.shade at 48.
xpatch 'assert b[32:36] == bytes([1, 5, 4, 0]) and b[36:41] == b"color", b[32:48]
assert b[48:52] == bytes([1, 5, 5, 0]) and b[52:57] == b"shade", b[48:64]'

# The values, each followed by a space (--only-values prints no newline).
values() {
	for n in user.color user.shade trusted.level; do
		printf '%s ' "$(getfattr --absolute-names --only-values -n "$n" "$MNT/f")"
	done
}

# The base image with one change to the xattr block, which "-n" reports.
damage() {	# kind statement
	echo "--- $1"
	restore_image
	xpatch "$2"
	fsck_expect 4 -n "$DEV"
}

repair_case() {	# kind statement message...
	kind=$1
	damage "$1" "$2"
	shift 2
	fsck_says "$WHERE" "$@"
	fsck_expect 4 -p "$DEV"
	fsck_says "$WHERE" "$@" "run fsck.vsmfs -y"
	fsck_expect 1 -y "$DEV"
	fsck_says "$WHERE" "$@" "repaired"
	fsck_expect 0 -n "$DEV"
	mount_vsmfs
	assert_eq "$(values)" "blue 12345 3 " "attributes after the repair of $kind"
	umount "$MNT"
}

repair_case count 'struct.pack_into("<H", b, 4, 9)' "entry count mismatch" \
	"(3 entries, 9 counted, owner $F)"
repair_case owner "struct.pack_into('<Q', b, 8, $G)" "owned by another inode" "owner $G)"
repair_case reserved 'b[20] = 1' "reserved bytes are not zero"
repair_case tail 'b[4095] = 0x5a' "bytes past the used size are not zero"

damage_case() {	# kind statement message...
	kind=$1
	damage "$1" "$2"
	shift 2
	fsck_says "$WHERE" "$@"
	fsck_expect_left -y "$DEV"
	fsck_says "$WHERE" "$@"
	fsck_says "0 errors repaired"
	dmesg -C
	mount_vsmfs -o errors=continue
	getfattr --absolute-names -n user.color "$MNT/f" >/dev/null 2>&1 &&
		die "$kind: the module read a damaged xattr block"
	dmesg_has "corrupt xattr block"
	umount "$MNT"
}

damage_case crosses 'struct.pack_into("<H", b, 34, 4000)' "entry crosses the used size" \
	"(entry at 32)"
damage_case index 'b[48] = 9' "unknown name index (entry at 48)"
damage_case acl_name 'b[32] = 4' "name on an ACL (entry at 32)"
damage_case twice 'b[52:57] = b"color"' "two entries of one attribute (entry at 48)"
damage_case magic 'b[0] = 0' "bad magic"
# Two inodes naming one block: the owner is not known, nothing is repaired.
echo "--- shared"
restore_image
"$POKE" "$DEV" inode "$G" set xattr="$XLPN"
fsck_expect_left -y "$DEV"
fsck_says "inode $G (regular file): xattr block at logical page $XLPN" "already owned"
fsck_says "owned by another inode" "inode $G (regular file): xattr block at logical page $XLPN:"

restore_image
fsck_expect 0 -n "$DEV"
