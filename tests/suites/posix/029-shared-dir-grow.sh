# A create (or mkdir, link, rename) that needs a new directory block runs
# in a shared metadata handle too, beside other operations, without the
# transaction mutex: the block's page is reserved first from the CPU's
# page pool, and the handle claims it. The directory grows by one block, every name is
# there after a remount, and fsck accepts the result. Two processes
# filling directories of their own take the mutex only to refill their
# pools, far less often than their directories grow.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer inside a counted change.
mount_vsmfs -o commit=300
# Everything under one directory, so that the root's block is counted below.
mkdir "$MNT/top"
used0=$(df -k "$MNT" | tail -1 | awk '{print $3}')
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT/top" <<'PY'
import os, sys
from vsmfs_test import check, Counters, run_parallel
dev, mnt = sys.argv[1:3]
c = Counters(dev)
# Entries of 256 bytes (a 16-byte header and 238 bytes of name, 8-byte
# aligned): sixteen fill a block.
name = lambda d, i: os.path.join(mnt, d, "f" * 236 + "%02d" % i)


def touch(p):
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))


os.mkdir(os.path.join(mnt, "d"))
for i in range(16):
    touch(name("d", i))
st = os.stat(os.path.join(mnt, "d"))
check(st.st_size == 4096, "16 entries of 256 bytes: directory of %d bytes" % st.st_size)
# The pool this CPU takes pages from, refilled before the counted creates.
with open(os.path.join(mnt, "warm"), "wb") as f:
    f.write(b"w" * 4096)


def counted(what, fn, size):
    c.reset()
    fn()
    s = c.read()
    st = os.stat(os.path.join(mnt, "d"))
    check(st.st_size == size, "%s: directory of %d bytes, not %d" % (what, st.st_size, size))
    check(s["trans_shared_meta"] == 1 and s["journal_lock_takes"] == 0,
          "%s: %d shared metadata handles, transaction mutex taken %d times" %
          (what, s["trans_shared_meta"], s["journal_lock_takes"]))
    print("%-36s shared handle, directory of %d bytes" % (what, size))


counted("create into a full block", lambda: touch(name("d", 16)), 8192)
for i in range(17, 32):
    touch(name("d", i))
counted("mkdir into a full block", lambda: os.mkdir(name("d", 32)), 12288)
check(os.path.isdir(name("d", 32)), "the new directory is missing")
for i in range(33, 48):
    touch(name("d", i))
counted("link into a full block", lambda: os.link(os.path.join(mnt, "warm"), name("d", 48)),
        16384)
for i in range(49, 64):
    touch(name("d", i))
touch(os.path.join(mnt, "moved"))
counted("rename into a full block", lambda: os.rename(os.path.join(mnt, "moved"), name("d", 64)),
        20480)
check(os.stat(name("d", 48)).st_ino == os.stat(os.path.join(mnt, "warm")).st_ino,
      "the link names another inode")


def fill(d, n):
    os.mkdir(os.path.join(mnt, d))
    for i in range(n):
        touch(os.path.join(mnt, d, "entry-%06d" % i))


c.reset()
run_parallel(fill, [("p%d" % k, 3000) for k in range(2)], "filling directories")
s = c.read()
grown = sum(os.stat(os.path.join(mnt, "p%d" % k)).st_size // 4096 for k in range(2))
check(s["journal_lock_takes"] * 4 < grown,
      "2 x 3000 creates grew %d directory blocks and took the transaction mutex %d times" %
      (grown, s["journal_lock_takes"]))
print("2 x 3000 creates: %d directory blocks, mutex taken %d times, %d shared handles" %
      (grown, s["journal_lock_takes"], s["trans_shared_meta"]))
PY
df_before=$(df -k "$MNT" | tail -1 | awk '{print $3}')
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after directories grew in shared handles"
mount_vsmfs
[ "$(ls "$MNT/top/d" | wc -l)" = 65 ] || die "directory d: $(ls "$MNT/top/d" | wc -l) entries, not 65"
for k in 0 1; do
	[ "$(ls "$MNT/top/p$k" | wc -l)" = 3000 ] || die "p$k: $(ls "$MNT/top/p$k" | wc -l) entries"
	[ -e "$MNT/top/p$k/entry-002999" ] || die "p$k: its last entry is missing"
done
[ "$(df -k "$MNT" | tail -1 | awk '{print $3}')" = "$df_before" ] || die "used space changed over a remount"
rm -rf "$MNT/top"
assert_eq "$(df -k "$MNT" | tail -1 | awk '{print $3}')" "$used0" "KiB used once every file is gone"
umount "$MNT"
echo "creates that grow a directory: shared handles, every name kept over a remount"
