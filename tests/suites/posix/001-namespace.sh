# Namespace operations and their errors: create, mkdir, link counts,
# symlinks (fast and long), device nodes, rename variants, unlink, rmdir.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
cd "$MNT"

echo data > f
assert_eq "$(stat -c %h f)" 1 "links of a new file"
ln f g
assert_eq "$(stat -c %h f)" 2 "links after link"
mkdir d
assert_eq "$(stat -c %h .)" 3 "root links after mkdir"
assert_eq "$(stat -c %h d)" 2 "links of a new directory"
mkdir d/e
assert_eq "$(stat -c %h d)" 3 "links after a subdirectory"
expect_fail mkdir d
expect_fail rmdir d
out=$(rmdir d 2>&1 || true)
echo "$out" | grep -q "not empty" || die "rmdir of a non-empty dir: $out"
rmdir d/e
assert_eq "$(stat -c %h d)" 2 "links after rmdir"

ln -s f short
long=$(printf 'x%.0s' $(seq 1 300))
ln -s "$long" long
assert_eq "$(readlink short)" f "fast symlink"
assert_eq "$(readlink long)" "$long" "long symlink"
mkfifo fifo
mknod cdev c 1 7
assert_eq "$(stat -c %F fifo)" "fifo" "fifo type"
assert_eq "$(stat -c %t:%T cdev)" "1:7" "device numbers"
python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("sock")'
assert_eq "$(stat -c %F sock)" "socket" "socket type"

name=$(printf 'n%.0s' $(seq 1 255))
touch "$name"
expect_fail touch "${name}x"
grep -q "File name too long" /tmp/expect_fail.out || die "ENAMETOOLONG"

# rename: plain, over a file, across directories, NOREPLACE, EXCHANGE.
echo one > a
echo two > b
mv a c
[ ! -e a ] && [ "$(cat c)" = one ] || die "rename"
mv c b
assert_eq "$(cat b)" one "rename over an existing file"
mv b d/b
assert_eq "$(cat d/b)" one "rename across directories"
echo three > x
expect_fail python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, b"x", -100, b"d/b", 1) != 0:
    raise OSError(ctypes.get_errno(), "renameat2")'
grep -q "File exists\|17" /tmp/expect_fail.out || die "RENAME_NOREPLACE"
python3 -c 'import ctypes
libc = ctypes.CDLL(None, use_errno=True)
assert libc.renameat2(-100, b"x", -100, b"d/b", 2) == 0'
assert_eq "$(cat x)" one "exchange, first"
assert_eq "$(cat d/b)" three "exchange, second"
mkdir m
mv m d/
assert_eq "$(stat -c %h d)" 3 "links after moving a directory in"

# The longest target kept in the inode (80 bytes, which share the in-core
# inode's bytes with its index) and one byte more, read from PM again.
t80=$(printf 'Y%.0s' $(seq 1 80))
ln -s "$t80" s80
ln -s "${t80}z" s81
cd /
umount "$MNT"
mount_vsmfs
cd "$MNT"
assert_eq "$(readlink s80)" "$t80" "fast symlink of 80 bytes after a remount"
assert_eq "$(readlink s81)" "${t80}z" "symlink of 81 bytes after a remount"
assert_eq "$(readlink short)" f "fast symlink after a remount"
assert_eq "$(readlink long)" "$long" "long symlink after a remount"
rm f g short long s80 s81 fifo cdev sock "$name" x d/b
rmdir d/m d
assert_eq "$(ls -A | wc -l)" 0 "empty after removing everything"
cd /
umount "$MNT"
# The slots of the removed fast symlinks keep nothing of their targets.
itable=$("$VSMFS_TOP/tools/vsmfs-inspect" "$DEV" |
	awk '$1 == "inode" && $2 == "table" { print $3, $4 }')
start=${itable% *}
count=${itable#* }
[ -n "$itable" ] || die "no inode table in the layout vsmfs-inspect shows"
left=$(dd if="$DEV" bs=4096 skip="$start" count="$count" 2>/dev/null | grep -a -c "$t80" || true)
assert_eq "$left" 0 "inode table lines holding a removed fast symlink's target"
