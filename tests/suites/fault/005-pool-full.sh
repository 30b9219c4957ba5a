# Old frames of overwrites that no page pool takes back (fault point
# pool_full: vsmfs_pool_put() refuses) go to the bitmap once the commit
# that frees them is durable, by the task that committed, which takes the
# transaction mutex again for it: two processes overwrite and fsync side
# by side, nothing goes back to a pool, and contents, free blocks and
# fsck are as without the fault; with the fault off, the pools take the
# old frames back again. Each fsync commits (fast_commit=off: a fast
# record would make the overwrite durable without a commit).
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -w $K/pool_full/interval ] || die "fault point pool_full missing"
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o commit=300,fast_commit=off
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os
import sys
from vsmfs_test import check, Counters, P, overwrite_expect, overwrite_loop, run_parallel
dev, mnt = sys.argv[1:3]
c = Counters(dev)
K = "/sys/kernel/debug/vsmfs/pool_full/"
N = 300


def loop(name, n, seed):
    overwrite_loop(os.path.join(mnt, name), n, seed)


def expect(name, n, seed):
    overwrite_expect(os.path.join(mnt, name), n, seed, bytes(16 * P))


def knob(name, value=None):
    if value is None:
        with open(K + name) as f:
            return int(f.read())
    with open(K + name, "w") as f:
        f.write("%d\n" % value)


for name in ("a", "b"):
    with open(os.path.join(mnt, name), "wb") as f:
        f.write(b"\0" * (16 * P))
os.sync()
before = os.statvfs(mnt).f_bfree
injected = knob("injected")
c.reset()
knob("interval", 1)
try:
    run_parallel(loop, [("a", N, 0), ("b", N, 1000)], "overwrites, no pool takes back")
finally:
    knob("interval", 0)
s = c.read()
print("pool_full: %d overwrites + fsync by two processes: commits %d, mutex %d, "
      "pages recycled %d, faults %d" % (2 * N, s["trans_commits"], s["journal_lock_takes"],
                                        s["alloc_pool_recycled"], knob("injected") - injected))
check(knob("injected") - injected >= N, "the pools refused %d times"
      % (knob("injected") - injected))
check(s["alloc_pool_recycled"] == 0, "%d pages went back to a pool that refused them"
      % s["alloc_pool_recycled"])
# Each old frame goes to the bitmap under the mutex, after its commit.
check(s["journal_lock_takes"] >= s["trans_commits"] + N,
      "the mutex taken %d times for %d commits" % (s["journal_lock_takes"], s["trans_commits"]))
expect("a", N, 0)
expect("b", N, 1000)
os.sync()
after = os.statvfs(mnt).f_bfree
check(after == before, "free blocks %d after the overwrites, %d before" % (after, before))

c.reset()
loop("a", N, 2000)
s = c.read()
print("no fault: %d overwrites + fsync: pages recycled %d" % (N, s["alloc_pool_recycled"]))
check(s["alloc_pool_recycled"] >= N - 1, "%d of %d old frames went back to the pool"
      % (s["alloc_pool_recycled"], N))
expect("a", N, 2000)
os.sync()
after = os.statvfs(mnt).f_bfree
check(after == before, "free blocks %d after the overwrites, %d before" % (after, before))
with open("/tmp/poolfull.free", "w") as f:
    f.write("%d\n" % before)
PY
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the overwrites"
mount_vsmfs
assert_eq "$(free_blocks)" "$(cat /tmp/poolfull.free)" "free blocks after a remount"
umount "$MNT"
rm -f /tmp/poolfull.free
