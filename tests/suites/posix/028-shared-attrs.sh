# Attribute changes that touch only an inode's slot and its xattr block
# run in shared metadata handles, beside other operations, without the
# transaction mutex: the first extended attribute (its block's page
# reserved from the CPU's pool first), a second one, a replaced or removed
# one (not the last), an ACL set with setfacl, a chmod of a file with an
# ACL (the ACL follows the mode), and chattr. The removal of the last
# attribute (which frees the block) and a change too large for a shared
# handle's undo log take the mutex. Each gives what getfattr, getfacl and
# lsattr show, before and after a remount, and fsck accepts the result.
# A truncation that grows a file runs in one too.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer inside a counted change.
mount_vsmfs -o acl,commit=300
touch "$MNT/f"
# The pool of this CPU, refilled before the counted changes.
echo w > "$MNT/warm"
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os, subprocess, sys
from vsmfs_test import check, Counters
dev, mnt = sys.argv[1:3]
c = Counters(dev)
f = os.path.join(mnt, "f")


def counted(what, fn, shared):
    """Run @fn; it ran in a shared metadata handle without the mutex if
    @shared, else under the mutex."""
    c.reset()
    fn()
    s = c.read()
    if shared:
        check(s["trans_shared_meta"] == 1 and s["journal_lock_takes"] == 0,
              "%s: %d shared metadata handles, transaction mutex taken %d times" %
              (what, s["trans_shared_meta"], s["journal_lock_takes"]))
    else:
        check(s["journal_lock_takes"] >= 1,
              "%s: made without the transaction mutex, but it %s" %
              (what, "allocates or frees a block or fills the undo log"))
    print("%-32s %s" % (what, "shared handle" if shared else "under the mutex"))


def run(*cmd):
    subprocess.run(cmd, check=True)


counted("first attribute", lambda: os.setxattr(f, "user.a", b"1" * 40), True)
counted("second attribute", lambda: os.setxattr(f, "user.b", b"2" * 100), True)
counted("replaced attribute", lambda: os.setxattr(f, "user.a", b"3" * 300), True)
counted("removed, not the last", lambda: os.removexattr(f, "user.a"), True)
counted("removed, the last", lambda: os.removexattr(f, "user.b"), False)
check(os.listxattr(f) == [], "attributes left: %s" % os.listxattr(f))
counted("first attribute again", lambda: os.setxattr(f, "user.s", b"s"), True)
# 3,000 bytes to save: more than a shared handle's undo log holds.
counted("a 3000-byte attribute", lambda: os.setxattr(f, "user.big", b"B" * 3000), False)
check(os.getxattr(f, "user.big") == b"B" * 3000, "user.big: value differs")
counted("setfacl", lambda: run("setfacl", "-m", "u:nobody:rw", f), True)
counted("chmod with an ACL", lambda: os.chmod(f, 0o640), True)
counted("chattr +d", lambda: run("chattr", "+d", f), True)
counted("chattr -d +A", lambda: run("chattr", "-d", "+A", f), True)
# A truncation that grows a file changes only its size: shared too.
g = os.path.join(mnt, "g")
with open(g, "wb") as fh:
    fh.write(b"g" * 5000)
counted("truncate that grows", lambda: os.truncate(g, 3 * 4096 + 10), True)
with open(g, "rb") as fh:
    check(fh.read() == b"g" * 5000 + bytes(3 * 4096 + 10 - 5000),
          "grown file: its bytes differ")
PY

show() {
	getfattr --absolute-names -d -m 'user\.' "$MNT/f" | md5sum | cut -c1-12
	getfacl -cp "$MNT/f" | tr '\t\n' '  '
	echo
	lsattr -d "$MNT/f" | cut -d' ' -f1
	stat -c %a "$MNT/f"
}
before=$(show)
echo "$before"
echo "$before" | grep -q 'user:nobody:rw- .*mask::r--' || die "ACL after chmod 640: $before"
assert_eq "$(echo "$before" | tail -2 | head -1 | tr -d -)" Ax "lsattr after chattr"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the shared attribute changes"
mount_vsmfs -o acl
assert_eq "$(show)" "$before" "attributes, ACL, flags and mode after a remount"
assert_eq "$(stat -c %s "$MNT/g")" 12298 "size of the grown file after a remount"
assert_eq "$(head -c 5000 "$MNT/g" | tr -d g | wc -c)" 0 "bytes of the grown file before the old end"
assert_eq "$(tail -c +5001 "$MNT/g" | tr -d '\000' | wc -c)" 0 "bytes of the grown file past the old end"
umount "$MNT"
echo "attribute changes: shared where the xattr block stays, as shown, after a remount"
