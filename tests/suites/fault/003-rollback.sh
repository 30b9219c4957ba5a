# Rollback: an operation that fails part way (an allocation failing at
# each of its allocations in turn, through the fault points' skip knob)
# leaves the tree exactly as it was before the call, in DRAM and on PM:
# create, mkdir, mknod, symlink, link, unlink, rmdir, every kind of rename,
# writes (copy-on-write and in place), truncate, fallocate, xattrs, ACLs,
# attribute flags. A run that cannot be freed or given back (free_run),
# and a handle whose end finds a step failed (trans_fail), fail the whole
# operation: it returns an error, no block or inode is lost, a name it
# would have made (also by O_TMPFILE and linkat) does not exist.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -d $K ] || skip "module built without CONFIG_VSMFS_FAULT_INJECTION"
[ -e $K/shadow_alloc/skip ] || die "no skip knob on the fault points"
roll="python3 tests/lib/rollback.py"

check_fsck() {
	umount "$MNT"
	"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after $1"; }
}

mkfs_vsmfs -f -J 256K "$DEV"
mount_vsmfs
aborts0=$(cat /sys/fs/vsmfs/*/trans_aborts)
rc=0
$roll "$MNT" > /tmp/roll.out || rc=$?
cat /tmp/roll.out
[ "$(cat /sys/fs/vsmfs/*/trans_aborts)" -gt "$aborts0" ] || die "no transaction aborted"
# A create, an unlink and an rmdir run in a shared metadata handle; when
# its undo log runs full (the fault point) it is undone at each of its
# steps and done again under the mutex: the call succeeds, and fsck and the
# remount below see no trace.
for op in create mkdir mknod unlink rmdir; do
	grep -q "^$op: failed calls shadow_alloc:0+[1-9][0-9]* absorbed " /tmp/roll.out ||
		die "$op: its shared handle was never undone"
done
# So is a change of the flags. A change of an xattr block that stays runs
# in a shared handle too, undone at each of its three saves (the block's
# header, its entries, the inode's slot; the last after the block
# changed) and done again under the mutex, where the block's whole copy
# fails at the same fault point: three failed calls (one under the mutex
# alone), each of which changed nothing (checked above).
grep -q "^chattr: failed calls shadow_alloc:0+[1-9][0-9]* absorbed " /tmp/roll.out ||
	die "chattr: its shared handle was never undone"
for op in setxattr-more replacexattr removexattr-more set-acl-more; do
	grep -q "^$op: failed calls shadow_alloc:3 " /tmp/roll.out ||
		die "$op: not undone at each step of its shared handle"
done
# So is a create that takes a new directory block, at each of its three
# saves (the new inode's slot, its page's bitmap block, the directory's
# slot); under the mutex the new block's whole copy fails at the same
# fault point (a create under the mutex alone fails once).
grep -q "^create-grow: failed calls shadow_alloc:3 " /tmp/roll.out ||
	die "create-grow: not undone at each step of its shared handle"
# And the first attribute or ACL of a file, whose block's page is
# reserved before its shared handle: undone at each of its two saves (the
# page's bitmap block, the inode's slot), each time failing under the
# mutex at the new block's whole copy (once under the mutex alone).
for op in setxattr set-acl; do
	grep -q "^$op: failed calls shadow_alloc:2 " /tmp/roll.out ||
		die "$op: not undone at each step of its shared handle"
done
# Without the free counts: evictions that failed left orphans, freed at
# unmount.
tree() {
	python3 -c 'import sys; sys.path.insert(0, "tests/lib"); import rollback, json; \
print(json.dumps(rollback.snapshot(sys.argv[1], False), default=repr, sort_keys=True))' "$1"
}
tree "$MNT/t" > /tmp/tree.before
check_fsck "data=atomic"
# What DRAM held is what PM holds.
mount_vsmfs
tree "$MNT/t" > /tmp/tree.after
cmp -s /tmp/tree.before /tmp/tree.after || die "the tree changed over a remount"
umount "$MNT"
[ $rc = 0 ] || die "failed calls changed the tree (data=atomic)"

# Frees and reservations given back that fail, and handle ends that do,
# in the calls that make names, write, punch and zero, and change xattrs,
# ACLs and flags: every injected failure is the call's error (--strict),
# never a success, and changes nothing (an ACL set by a handle whose end
# aborted is not what getfacl shows).
mount_vsmfs
$roll "$MNT" --strict free_run trans_fail create create-grow link-grow rename-grow mkdir mknod \
	symlink tmpfile-link \
	write-append write-over write-hole fallocate-punch fallocate-zero fallocate-small \
	fallocate-tail fallocate-superpage truncate-unwritten setxattr setxattr-more replacexattr removexattr-more set-acl set-acl-more chattr \
	> /tmp/roll-fail.out || rc=$?
cat /tmp/roll-fail.out
for want in "fallocate-punch free_run" "write-append free_run" "create trans_fail" \
	"create-grow trans_fail" "link-grow trans_fail" "rename-grow trans_fail" "setxattr trans_fail" \
	"tmpfile-link trans_fail" "write-hole trans_fail" "replacexattr trans_fail" \
	"removexattr-more trans_fail" "set-acl trans_fail" "set-acl-more trans_fail" \
	"chattr trans_fail" "fallocate-small trans_fail" \
	"fallocate-tail trans_fail" "fallocate-superpage trans_fail" \
	"truncate-unwritten trans_fail"; do
	set -- $want
	grep -q "^$1: failed calls.* $2:[1-9]" /tmp/roll-fail.out ||
		die "$1: no call failed at $2"
done
check_fsck "failed frees and handle ends"
[ $rc = 0 ] || die "failed frees or handle ends changed the tree"

mount_vsmfs -o data=inplace
$roll "$MNT" shadow_alloc page_alloc write-append write-over write-hole truncate-grow \
	fallocate || rc=$?
check_fsck "data=inplace"
[ $rc = 0 ] || die "failed calls changed the tree (data=inplace)"
