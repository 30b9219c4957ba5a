# Extended attributes: user., trusted. and security. on every inode type;
# create and replace semantics and their errors; the size limit of the
# xattr block (an attribute alone: name without prefix plus value up to
# 4060 bytes, E2BIG past it; ENOSPC when the others leave too little
# room); many attributes; persistence; the block given back when the last
# attribute goes and when the inode is deleted; EROFS; trusted. for
# unprivileged users.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
F=$MNT/f
touch "$F"
mkdir "$MNT/d"
ln -s f "$MNT/l"
mkfifo "$MNT/p"
mknod "$MNT/c" c 1 3
free0=$(stat -f -c %f "$MNT")

# Set, get, list, remove in each namespace.
setfattr -n user.color -v blue "$F"
setfattr -n trusted.level -v 3 "$F"
setfattr -n security.label -v secret "$F"
assert_eq "$(getfattr --absolute-names --only-values -n user.color "$F")" blue "user.color"
assert_eq "$(getfattr --absolute-names --only-values -n trusted.level "$F")" 3 "trusted.level"
assert_eq "$(getfattr --absolute-names --only-values -n security.label "$F")" secret "security.label"
names=$(getfattr --absolute-names -d -m - "$F" | grep '=' | cut -d= -f1 | sort | tr '\n' ' ')
assert_eq "$names" "security.label trusted.level user.color " "listed names"
assert_eq "$(stat -c %b "$F")" 8 "st_blocks of an empty file with attributes"
assert_eq "$(stat -f -c %f "$MNT")" $((free0 - 1)) "free pages with one xattr block"
setfattr -x trusted.level "$F"
out=$(getfattr --absolute-names -n trusted.level "$F" 2>&1) && die "removed attribute still there"
echo "$out" | grep -q "No such attribute" || die "expected ENODATA, got: $out"

# Empty values, binary values, replace.
assert_eq "$(xattr_errno set "$F" user.empty 0)" OK "set an empty value"
assert_eq "$(xattr_errno get "$F" user.empty)" 0 "size of an empty value"
setfattr -n user.bin -v 0x00ff00ff "$F"
assert_eq "$(getfattr --absolute-names -e hex -n user.bin "$F" | grep '^user')" user.bin=0x00ff00ff \
	"binary value"
setfattr -n user.color -v green "$F"
assert_eq "$(getfattr --absolute-names --only-values -n user.color "$F")" green "replaced value"

# Errors: missing attribute, flags, buffer too small, bad names.
assert_eq "$(xattr_errno get "$F" user.nope)" ENODATA "get missing"
assert_eq "$(xattr_errno remove "$F" user.nope)" ENODATA "remove missing"
assert_eq "$(xattr_errno set "$F" user.color 3 create)" EEXIST "XATTR_CREATE on existing"
assert_eq "$(xattr_errno set "$F" user.nope 3 replace)" ENODATA "XATTR_REPLACE on missing"
assert_eq "$(xattr_errno set "$F" user.new 3 create)" OK "XATTR_CREATE on missing"
assert_eq "$(xattr_errno set "$F" user.new 5 replace)" OK "XATTR_REPLACE on existing"
assert_eq "$(xattr_errno get "$F" user.new)" 5 "size after replace"
assert_eq "$(xattr_errno get "$F" user.new 4)" ERANGE "get into a small buffer"
assert_eq "$(xattr_errno get "$F" user.new 0)" 5 "size query"
len=$(xattr_errno list "$F" 0)
assert_eq "$(xattr_errno list "$F" $((len - 1)))" ERANGE "list into a small buffer"
assert_eq "$(xattr_errno list "$F" "$len")" "$len" "list into an exact buffer"
assert_eq "$(xattr_errno set "$F" user. 1)" EINVAL "empty name"
assert_eq "$(xattr_errno set "$F" other.x 1)" ENOTSUP "unknown namespace"
for a in color empty bin new; do setfattr -x user.$a "$F"; done
setfattr -x security.label "$F"
assert_eq "$(getfattr --absolute-names -d -m - "$F" 2>&1)" "" "attributes left"
assert_eq "$(stat -c %b "$F")" 0 "st_blocks after the last attribute went"
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free pages after the last attribute went"

# Size limit: 4064 bytes for all entries, 4 bytes of header and padding
# to 4 bytes each. "big" + 4057 bytes is exactly the limit.
assert_eq "$(xattr_errno set "$F" user.big 4057)" OK "largest value"
assert_eq "$(xattr_errno get "$F" user.big)" 4057 "largest value read back"
assert_eq "$(getfattr --absolute-names --only-values -n user.big "$F" | tr -d x | wc -c)" 0 "largest value content"
assert_eq "$(xattr_errno set "$F" user.big 4058)" E2BIG "one byte past the limit"
out=$(setfattr -n user.big -v "$(head -c 4058 /dev/zero | tr '\0' y)" "$F" 2>&1) &&
	die "oversized value accepted"
echo "$out" | grep -q "Argument list too long" || die "expected E2BIG, got: $out"
assert_eq "$(xattr_errno get "$F" user.big)" 4057 "value kept after a failed set"
assert_eq "$(xattr_errno set "$F" user.a 0)" ENOSPC "second attribute in a full block"
setfattr -x user.big "$F"
# Two entries that fill the block exactly: 2008 + 2056 bytes.
assert_eq "$(xattr_errno set "$F" user.a 2000)" OK "first half"
assert_eq "$(xattr_errno set "$F" user.b 2052)" ENOSPC "second half, one byte too many"
assert_eq "$(xattr_errno set "$F" user.b 2051)" OK "second half"
assert_eq "$(xattr_errno set "$F" user.c 0)" ENOSPC "third attribute in a full block"
assert_eq "$(xattr_errno set "$F" user.a 2003 replace)" OK "replace in a full block"
assert_eq "$(xattr_errno set "$F" user.a 2004 replace)" ENOSPC "grow in a full block"
assert_eq "$(xattr_errno get "$F" user.a)" 2003 "value kept after a failed replace"
setfattr -x user.a "$F"
setfattr -x user.b "$F"

# Many attributes, kept across a remount.
out=$(python3 -c '
import errno, os, sys
for i in range(200):
    os.setxattr(sys.argv[1], "user.k%d" % i, b"value%d" % i)
n = 0
try:
    while True:
        os.setxattr(sys.argv[1], "user.fill%d" % n, b"f" * 16)
        n += 1
except OSError as e:
    print(n, errno.errorcode[e.errno])
' "$F")
echo "200 attributes and ${out% *} more of 16 bytes fit"
assert_eq "${out#* }" ENOSPC "error when the block is full"
umount "$MNT"
mount_vsmfs
assert_eq "$(getfattr --absolute-names -d -m '^user\.k' "$F" | grep -c '^user\.k')" 200 "attributes after remount"
for i in 0 7 99 150 199; do
	assert_eq "$(getfattr --absolute-names --only-values -n user.k$i "$F")" "value$i" "user.k$i after remount"
done
setfattr -x user.fill0 "$F"
setfattr -x user.fill1 "$F"

# Every inode type lists its attributes; user. only on files and
# directories (the VFS refuses it elsewhere).
setfattr -n user.d -v 1 "$MNT/d"
for o in d l p c; do
	setfattr -h -n trusted.t -v "$o" "$MNT/$o"
	setfattr -h -n security.s -v "$o" "$MNT/$o"
	assert_eq "$(getfattr --absolute-names -h --only-values -n trusted.t "$MNT/$o")" "$o" "trusted. on $o"
	assert_eq "$(getfattr --absolute-names -h -d -m - "$MNT/$o" | grep -c '=')" \
		"$([ $o = d ] && echo 3 || echo 2)" "attributes listed on $o"
done
assert_eq "$(xattr_errno set "$MNT/l" user.x 1)" EPERM "user. on a symlink"
assert_eq "$(xattr_errno set "$MNT/p" user.x 1)" EPERM "user. on a fifo"
umount "$MNT"
mount_vsmfs
for o in d l p c; do
	assert_eq "$(getfattr --absolute-names -h --only-values -n security.s "$MNT/$o")" "$o" \
		"security. on $o after remount"
done

# trusted. needs CAP_SYS_ADMIN: EPERM to set, hidden from list and get.
chmod 666 "$F"
out=$(as_nobody setfattr -n trusted.x -v 1 "$F" 2>&1) && die "trusted. set without privilege"
echo "$out" | grep -q "Operation not permitted" || die "expected EPERM, got: $out"
setfattr -n trusted.hidden -v 1 "$F"
as_nobody getfattr --absolute-names -d -m - "$F" | grep -q trusted && die "trusted. listed without privilege"
assert_eq "$(as_nobody python3 "$VSMFS_TOP/tests/lib/xattr_errno.py" get "$F" trusted.hidden)" \
	ENODATA "trusted. read without privilege"
as_nobody setfattr -n user.mine -v 1 "$F"
assert_eq "$(as_nobody getfattr --absolute-names --only-values -n user.mine "$F")" 1 "user. for a writer"
chmod 644 "$F"
out=$(as_nobody setfattr -n user.mine -v 2 "$F" 2>&1) && die "user. set without write permission"
echo "$out" | grep -q "Permission denied" || die "expected EACCES, got: $out"

# Read-only: reads work, changes fail with EROFS.
mount -o remount,ro "$MNT"
assert_eq "$(getfattr --absolute-names --only-values -n user.k7 "$F")" value7 "read on a read-only mount"
out=$(setfattr -n user.ro -v 1 "$F" 2>&1) && die "set on a read-only mount"
echo "$out" | grep -q "Read-only file system" || die "expected EROFS, got: $out"
assert_eq "$(xattr_errno remove "$F" user.k7)" EROFS "remove on a read-only mount"
mount -o remount,rw "$MNT"

# Deleting inodes gives their xattr blocks back.
rm -rf "$MNT"/*
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free pages after delete"
touch "$MNT/g"
setfattr -n user.x -v 1 "$MNT/g"
exec 3<"$MNT/g"
rm "$MNT/g"
assert_eq "$(stat -f -c %f "$MNT")" $((free0 - 1)) "xattr block of an open unlinked file"
exec 3<&-
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free pages after the last close"
umount "$MNT"
