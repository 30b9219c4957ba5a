# POSIX ACLs: enforcement for an unprivileged user, the mask and chmod,
# default ACL inheritance on create and mkdir (and the umask without
# one), persistence, the acl/noacl/user_xattr mount options, EROFS.
. tests/lib/common.sh

acl() { getfacl -cp "$1" | grep -v '^$' | tr '\t' ' ' | tr '\n' ' '; }

mkfs_vsmfs -f "$DEV"
mount_vsmfs
grep -q "^$DEV $MNT vsmfs rw," /proc/mounts || die "not mounted"
grep "^$DEV $MNT " /proc/mounts | grep -q acl && die "acl shown although default"
umask 022

# Without a default ACL the umask applies; an ACL the mode bits express
# is not stored.
touch "$MNT/plain"
mkdir "$MNT/pdir"
assert_eq "$(stat -c %a "$MNT/plain")" 644 "mode of a new file"
assert_eq "$(stat -c %a "$MNT/pdir")" 755 "mode of a new directory"
assert_eq "$(acl "$MNT/plain")" "user::rw- group::r-- other::r-- " "ACL of a new file"
setfacl -m u::rwx "$MNT/plain"
assert_eq "$(stat -c %a "$MNT/plain")" 744 "mode after a minimal ACL"
assert_eq "$(getfattr --absolute-names -d -m - "$MNT/plain")" "" "minimal ACL stored"

# Access ACL: named user, mask, enforcement.
F=$MNT/secret
echo data >"$F"
chmod 600 "$F"
expect_fail as_nobody cat "$F"
setfacl -m u:nobody:r "$F"
assert_eq "$(acl "$F")" "user::rw- user:nobody:r-- group::--- mask::r-- other::--- " "ACL"
assert_eq "$(stat -c %a "$F")" 640 "group bits show the mask"
assert_eq "$(ls -l "$F" | cut -c11)" "+" "ls marks the ACL"
assert_eq "$(as_nobody cat "$F")" data "read through the ACL"
expect_fail as_nobody sh -c "echo x >>'$F'"
setfacl -m u:nobody:rw "$F"
as_nobody sh -c "echo more >>'$F'"
assert_eq "$(tail -n 1 "$F")" more "written through the ACL"

# chmod sets the mask: the named user's permissions are cut by it.
chmod 600 "$F"
assert_eq "$(acl "$F")" \
	"user::rw- user:nobody:rw- #effective:--- group::--- mask::--- other::--- " "ACL after chmod 600"
expect_fail as_nobody cat "$F"
# The mode and the ACL change in one handle, which never spans two
# transactions: a crash leaves both old or both new.
S=/sys/fs/vsmfs/$(basename "$DEV")
sync
echo 1 > "$S/reset"
chmod 640 "$F"
sync
assert_eq "$(cat "$S/trans_handles")" 1 "handles of a chmod with an ACL"
assert_eq "$(acl "$F")" \
	"user::rw- user:nobody:rw- #effective:r-- group::--- mask::r-- other::--- " "ACL after chmod 640"
assert_eq "$(as_nobody cat "$F" | head -n 1)" data "read after chmod 640"
expect_fail as_nobody sh -c "echo x >>'$F'"

# Named group; directory search permission.
setfacl -x u:nobody "$F"
expect_fail as_nobody cat "$F"
setfacl -m g:nogroup:r "$F"
assert_eq "$(as_nobody cat "$F" | head -n 1)" data "read through a group entry"
mkdir -m 700 "$MNT/private"
echo hi >"$MNT/private/x"
expect_fail as_nobody cat "$MNT/private/x"
setfacl -m u:nobody:x "$MNT/private"
assert_eq "$(as_nobody cat "$MNT/private/x")" hi "search through a directory ACL"
expect_fail as_nobody ls "$MNT/private"

# Default ACLs are inherited; the umask does not apply then.
D=$MNT/inh
mkdir "$D"
setfacl -d -m u::rwx,g::rwx,o::rwx,u:nobody:rwx "$D"
umask 077
touch "$D/f"
mkdir "$D/sub"
mkfifo "$D/fifo"
touch "$MNT/masked"
umask 022
assert_eq "$(stat -c %a "$MNT/masked")" 600 "umask without a default ACL"
assert_eq "$(stat -c %a "$D/f")" 666 "file mode from the default ACL"
assert_eq "$(stat -c %a "$D/sub")" 777 "directory mode from the default ACL"
assert_eq "$(acl "$D/f")" \
	"user::rw- user:nobody:rwx #effective:rw- group::rwx #effective:rw- mask::rw- other::rw- " "inherited file ACL"
getfacl -cp "$D/sub" | grep -q "^default:user:nobody:rwx" || die "default ACL not inherited by mkdir"
getfacl -cp "$D/sub" | grep -q "^user:nobody:rwx" || die "access ACL not inherited by mkdir"
getfacl -cp "$D/fifo" | grep -q "^user:nobody:rwx" || die "fifo did not inherit"
setfacl -m o::--- "$D/sub"
as_nobody touch "$D/sub/by-nobody"
getfacl -cp "$D/sub/by-nobody" | grep -q "^user:nobody:rwx" || die "grandchild did not inherit"
setfacl -k "$D/sub"
getfacl -cp "$D/sub" | grep -q "^default:" && die "default ACL not removed"
touch "$D/sub/after-k"
assert_eq "$(stat -c %a "$D/sub/after-k")" 644 "mode after the default ACL went"

# Persistence.
getfacl -Rp "$MNT" >/tmp/acl.before
umount "$MNT"
mount_vsmfs
getfacl -Rp "$MNT" >/tmp/acl.after
cmp /tmp/acl.before /tmp/acl.after || { diff /tmp/acl.before /tmp/acl.after; die "ACLs changed across a remount"; }

# Removing all ACL entries gives the xattr block back.
free=$(stat -f -c %f "$MNT")
setfacl -b "$D/f"
assert_eq "$(getfattr --absolute-names -d -m - "$D/f")" "" "attributes after setfacl -b"
assert_eq "$(stat -c %b "$D/f")" 0 "st_blocks after setfacl -b"
assert_eq "$(stat -f -c %f "$MNT")" $((free + 1)) "free pages after setfacl -b"

# noacl: ACLs neither enforced, nor readable, nor settable; the umask applies.
umount "$MNT"
mount_vsmfs -o noacl
grep -q "^$DEV $MNT vsmfs rw,.*noacl" /proc/mounts || die "noacl not shown"
expect_fail as_nobody cat "$F"
out=$(setfacl -m u:nobody:r "$F" 2>&1) && die "setfacl on a noacl mount"
echo "$out" | grep -q "Operation not supported" || die "expected EOPNOTSUPP, got: $out"
getfattr --absolute-names -d -m - "$F" | grep -q posix_acl && die "ACL listed on a noacl mount"
umask 077
touch "$D/noacl"
umask 022
assert_eq "$(stat -c %a "$D/noacl")" 600 "umask on a noacl mount"
mount -o remount,acl "$MNT"
grep "^$DEV $MNT " /proc/mounts | grep -q acl && die "acl shown after remount,acl"
assert_eq "$(as_nobody cat "$F" | head -n 1)" data "ACL enforced after remount,acl"
mount -o remount,noacl "$MNT"
grep -q "^$DEV $MNT vsmfs rw,.*noacl" /proc/mounts || die "noacl not shown after remount"
umount "$MNT"
mount_vsmfs -o acl,user_xattr
grep "^$DEV $MNT " /proc/mounts | grep -Eq "acl|user_xattr" && die "default options shown"

# Read-only.
mount -o remount,ro "$MNT"
assert_eq "$(as_nobody cat "$F" | head -n 1)" data "ACL enforced on a read-only mount"
out=$(setfacl -m u:nobody:rw "$F" 2>&1) && die "setfacl on a read-only mount"
echo "$out" | grep -q "Read-only file system" || die "expected EROFS, got: $out"
umount "$MNT"
