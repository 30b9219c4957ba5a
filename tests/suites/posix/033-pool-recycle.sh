# The old frames of copy-on-write overwrites go back to the page pool of
# the CPU that wrote them when the commit that frees them is durable, and
# the next overwrites copy into them without the transaction mutex: a loop
# of 4 KiB overwrites each followed by fsync never refills its pool (by
# one process, each commit is the only take of the mutex), by one process
# and by two side by side. The contents, the free space statfs reports and an fsck are as
# they would be without the pools, before and after a remount. With free
# space short, the pools are emptied and the old frames go back to the
# bitmap: the overwrites go on, and no page is lost.
. tests/lib/common.sh

# After part $1: unmount, fsck, mount again; free blocks as after the
# first part (/tmp/recycle.free).
fsck_remount() {
	umount "$MNT"
	"$FSCK" -n "$DEV" || die "fsck after $1"
	mount_vsmfs -o commit=300,fast_commit=off
	assert_eq "$(free_blocks)" "$(cat /tmp/recycle.free)" "free blocks after a remount"
}

mkfs_vsmfs -f "$DEV"
# Commits by fsync alone, not by the timer, nor fast records instead.
mount_vsmfs -o commit=300,fast_commit=off
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os
import sys
from vsmfs_test import (check, Counters, P, overwrite_expect, overwrite_loop, pattern,
                        run_parallel)
dev, mnt = sys.argv[1:3]
c = Counters(dev)
N = 600


def loop(name, n, seed):
    overwrite_loop(os.path.join(mnt, name), n, seed)


def expect(name, n, seed):
    overwrite_expect(os.path.join(mnt, name), n, seed, pattern(0, 16 * P))


def free():
    st = os.statvfs(mnt)
    return st.f_bfree


for name in ("a", "b", "c"):
    with open(os.path.join(mnt, name), "wb") as f:
        f.write(pattern(0, 16 * P))
os.sync()
# The pools of both CPUs filled before the counted loops.
run_parallel(loop, [("b", 8, 0), ("c", 8, 0)], "warm-up")
os.sync()
before = free()

c.reset()
loop("a", N, 1000)
s = c.read()
print("one process, %d overwrites + fsync: %d commits, mutex %d, refills %d, "
      "pages recycled %d, pool pages %d, inode migrations %d" %
      (N, s["trans_commits"], s["journal_lock_takes"], s["alloc_pool_refills"],
       s["alloc_pool_recycled"], s["alloc_pool_pages"], s["aggregate_migrations"]))
check(s["alloc_pool_recycled"] >= N - 1,
      "%d of %d old frames went back to the pool" % (s["alloc_pool_recycled"], N))
check(s["alloc_pool_refills"] <= 1, "the pool was refilled %d times" % s["alloc_pool_refills"])
# Beside the commits: a hot-inode migration of the file (its exchange is
# one transaction of its own), when the worker runs during the loop.
check(s["journal_lock_takes"] <= s["trans_commits"] + 1 + s["aggregate_migrations"],
      "the mutex taken %d times for %d commits and %d inode migrations" %
      (s["journal_lock_takes"], s["trans_commits"], s["aggregate_migrations"]))
expect("a", N, 1000)

c.reset()
run_parallel(loop, [("b", N, 2000), ("c", N, 3000)], "two processes")
s = c.read()
print("two processes, %d overwrites + fsync each: %d commits, mutex %d, refills %d, "
      "pages recycled %d" % (N, s["trans_commits"], s["journal_lock_takes"],
                             s["alloc_pool_refills"], s["alloc_pool_recycled"]))
check(s["alloc_pool_recycled"] >= 2 * N - 2,
      "%d of %d old frames went back to the pools" % (s["alloc_pool_recycled"], 2 * N))
# Beside the commits, the mutex is taken by an overwrite's handle that
# meets one commit and then another (it queues behind the second): not
# by the pools.
check(s["alloc_pool_refills"] <= 2, "the pools were refilled %d times" % s["alloc_pool_refills"])
expect("b", N, 2000)
expect("c", N, 3000)
os.sync()
check(free() == before, "free blocks %d after the overwrites, %d before" % (free(), before))
with open("/tmp/recycle.free", "w") as f:
    f.write("%d\n" % before)
PY
fsck_remount "the overwrites"

# Pages freed outright go back to the pools as well: files written,
# fsync'd and deleted (a mail spool's cycle), and a file appended to and
# truncated in turn, take their pages again from the pages earlier deletes
# and truncations freed, once those commits are durable, rather than
# refilling their pools under the mutex. Contents, free space and fsck
# as without the pools.
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os
import sys
from vsmfs_test import check, Counters, P, pattern as data
dev, mnt = sys.argv[1:3]
c = Counters(dev)
N = 300
os.sync()
before = os.statvfs(mnt).f_bfree
d = os.path.join(mnt, "spool")
os.mkdir(d)
os.sync()


c.reset()
for i in range(N):
    n = (1 + i % 8) * P
    fd = os.open(os.path.join(d, "m%d" % i), os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, data(i, n))
    os.fsync(fd)
    os.close(fd)
    if i >= 4:
        os.unlink(os.path.join(d, "m%d" % (i - 4)))
s = c.read()
print("%d small files written, fsync'd, deleted: refills %d, pages recycled %d, commits %d" %
      (N, s["alloc_pool_refills"], s["alloc_pool_recycled"], s["trans_commits"]))
check(s["alloc_pool_recycled"] >= 4 * N, "%d freed pages went back to the pool"
      % s["alloc_pool_recycled"])
check(s["alloc_pool_refills"] <= 8, "the pool was refilled %d times" % s["alloc_pool_refills"])
for i in range(N - 4, N):
    with open(os.path.join(d, "m%d" % i), "rb") as f:
        check(f.read() == data(i, (1 + i % 8) * P), "m%d holds what was written" % i)

c.reset()
path = os.path.join(mnt, "log")
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
want = b""
for i in range(N):
    os.write(fd, data(i, 3 * P))
    os.fsync(fd)
    want += data(i, 3 * P)
    if i % 4 == 2:
        os.ftruncate(fd, P)
        os.fsync(fd)
        want = want[:P]
os.close(fd)
s = c.read()
print("%d appends of 3 pages, truncated every 4th: refills %d, pages recycled %d" %
      (N, s["alloc_pool_refills"], s["alloc_pool_recycled"]))
check(s["alloc_pool_recycled"] >= 2 * N, "%d freed pages went back to the pool"
      % s["alloc_pool_recycled"])
check(s["alloc_pool_refills"] <= 8, "the pool was refilled %d times" % s["alloc_pool_refills"])
with open(path, "rb") as f:
    check(f.read() == want, "log holds its last appends")
for name in os.listdir(d):
    os.unlink(os.path.join(d, name))
os.rmdir(d)
os.unlink(path)
os.sync()
after = os.statvfs(mnt).f_bfree
check(after == before, "free blocks %d after the deletes, %d before" % (after, before))
PY
fsck_remount "the deletes and truncations"

# Pages claimed and freed in one transaction: a file grows on one CPU
# by pages its pool reserved, and shrinks again on the other, before any
# commit (both in shared handles, whose runs join the commit CPU by CPU,
# so the commit can meet the free of a page before the claim that ends
# its reservation; the first handle of a transaction joins it at once,
# so one on the other CPU comes first); and a directory grows by blocks on one CPU and is
# removed on the other. Each page must end free on PM, in a pool or the
# bitmap, not both and not neither.
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os
import sys
from vsmfs_test import check, Counters, P
dev, mnt = sys.argv[1:3]
c = Counters(dev)
os.sync()
before = os.statvfs(mnt).f_bfree
cpus = sorted(os.sched_getaffinity(0))
check(len(cpus) >= 2, "two CPUs to run on (%s)" % cpus)
path = os.path.join(mnt, "claimfree")
fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
os.pwrite(fd, b"\x01" * P, 0)
os.fsync(fd)
c.reset()
for i in range(64):
    grow, shrink = (cpus[1], cpus[0]) if i % 2 == 0 else (cpus[0], cpus[1])
    # The first handle of a transaction joins it at once; the next ones
    # stay in their CPU's share until the commit.
    os.sched_setaffinity(0, {shrink})
    os.utime(fd, (i, i))
    os.sched_setaffinity(0, {grow})
    os.pwrite(fd, bytes([i + 2]) * (3 * P), P)
    os.sched_setaffinity(0, {shrink})
    os.ftruncate(fd, P)
    os.fsync(fd)
    check(os.pread(fd, 4 * P, 0) == b"\x01" * P, "claimfree holds its first page (%d)" % i)
s = c.read()
print("64 growths and shrinks on two CPUs: commits %d, shared handles %d" %
      (s["trans_commits"], s["trans_shared_meta"]))
os.close(fd)
os.unlink(path)
for i in range(16):
    grow, remove = (cpus[1], cpus[0]) if i % 2 == 0 else (cpus[0], cpus[1])
    d = os.path.join(mnt, "grow%d" % i)
    os.sched_setaffinity(0, {remove})
    os.utime(mnt)
    os.sched_setaffinity(0, {grow})
    os.mkdir(d)
    names = ["%03d" % k + "x" * 200 for k in range(48)]
    for n in names:
        os.close(os.open(os.path.join(d, n), os.O_CREAT | os.O_WRONLY, 0o600))
    check(sorted(os.listdir(d)) == names, "grow%d lists its names" % i)
    os.sched_setaffinity(0, {remove})
    for n in names:
        os.unlink(os.path.join(d, n))
    os.rmdir(d)
    fd = os.open(mnt, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
os.sched_setaffinity(0, set(cpus))
os.sync()
after = os.statvfs(mnt).f_bfree
check(after == before, "free blocks %d after claims and frees, %d before" % (after, before))
PY
fsck_remount "pages claimed and freed in one transaction"

# Free space short: fill the device to less than a sixteenth free, then
# overwrite. The pools are emptied; old frames go back to the bitmap.
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os
import sys
from vsmfs_test import check, Counters, P
dev, mnt = sys.argv[1:3]
c = Counters(dev)
st = os.statvfs(mnt)
fill = (st.f_bfree - st.f_blocks // 32) * P
with open(os.path.join(mnt, "fill"), "wb") as f:
    while fill > 0:
        n = min(fill, 1 << 20)
        f.write(b"\xa5" * n)
        fill -= n
os.sync()
before = os.statvfs(mnt).f_bfree
check(before < os.statvfs(mnt).f_blocks // 16, "free space short (%d blocks free)" % before)
c.reset()
fd = os.open(os.path.join(mnt, "a"), os.O_WRONLY)
for i in range(200):
    os.pwrite(fd, bytes([i]) * P, (i % 4) * P)
    os.fsync(fd)
os.close(fd)
s = c.read()
print("free space short, 200 overwrites + fsync: pages recycled %d, pool pages %d" %
      (s["alloc_pool_recycled"], s["alloc_pool_pages"]))
check(s["alloc_pool_recycled"] == 0,
      "%d old frames went to a pool with free space short" % s["alloc_pool_recycled"])
with open(os.path.join(mnt, "a"), "rb") as f:
    got = f.read(4 * P)
check(got == b"".join(bytes([196 + k]) * P for k in range(4)), "a holds the last overwrites")
os.sync()
after = os.statvfs(mnt).f_bfree
check(after == before, "free blocks %d after the overwrites, %d before" % (after, before))
os.unlink(os.path.join(mnt, "fill"))
PY
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the overwrites with free space short"
