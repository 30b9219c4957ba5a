# Appends with data=atomic are staged: their data is copied past the end of
# the file and into reserved pages before one short handle grows the file
# (write_staged_appends), and an append that stays in the last page takes
# a shared handle. Each way the new pages are found (a small file's first
# run, pages right after its run, a fresh run the old one moves into, a
# large file's first run at a free superpage, a large file's reserved tail)
# gives the right content and size, before and after a remount; pages of
# the tail, pages reserved right after the run, a small file's fresh run
# its old one moves into, and a large file's first run in a piece, with
# its superpage's tail, join the file in a shared handle
# (write_shared_appends), the tail's without the transaction mutex; a gap in
# the last page reads as zeros; appends that skip whole pages or span two
# pieces are made in one handle instead, with the same result. Two small
# files growing in turn on one CPU reserve their pages from its pool, not
# under the transaction mutex. data=inplace stages its appends too.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer inside a counted write.
mount_vsmfs -o commit=300
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import hashlib, json, os, random, sys
from vsmfs_test import P, VSP, check, Counters
dev, mnt = sys.argv[1:3]
c = Counters(dev)
rnd = random.Random(24)
# One CPU's page pool for every reservation.
os.sched_setaffinity(0, [0])
models = {}

def append(fd, name, n, gap=0, staged=True):
    m = models.setdefault(name, bytearray())
    data = rnd.randbytes(n)
    what = "%s: %d bytes at end + %d" % (name, n, gap)
    os.fsync(fd)
    c.reset()
    check(os.pwrite(fd, data, len(m) + gap) == n, what + ": short write")
    s = c.read()
    m += bytes(gap) + data
    check(os.fstat(fd).st_size == len(m), what + ": size %d, not %d" % (os.fstat(fd).st_size, len(m)))
    check(os.pread(fd, len(m) + P, 0) == m, what + ": content differs")
    check(s["write_staged_appends"] == int(staged),
          what + ": %d staged appends, not %d" % (s["write_staged_appends"], int(staged)))
    return s

def open_(name):
    return os.open(os.path.join(mnt, name), os.O_RDWR | os.O_CREAT, 0o644)

# A small file's first run, then appends inside its last page: the size
# and the times alone, in a shared handle, a gap zeroed.
fa = open_("a")
s = append(fa, "a", 100)
check(s["pte_swaps"] == 0, "a: first run: %d PTE swaps" % s["pte_swaps"])
s = append(fa, "a", 200)
check(s["trans_shared_handles"] == 1 and s["journal_lock_hold_ns"] == 0,
      "a: in the last page: %d shared handles, transaction mutex held %d ns" %
      (s["trans_shared_handles"], s["journal_lock_hold_ns"]))
s = append(fa, "a", 50, gap=30)
check(s["trans_shared_handles"] == 1, "a: gap in the last page: not in a shared handle")
# New pages for a small file: grown in place, or a fresh run the old
# one moves into; the new data is never swapped in, only old pages moved,
# and either way in a shared handle.
fb = open_("b")
pool_runs = locks = moves = 0
for i in range(12):
    have = (len(models["a"]) + P - 1) // P
    s = append(fa, "a", rnd.randrange(1, 4 * P))
    check(s["pte_swaps"] == (have if s["zfdm_migrations"] else 0),
          "a: growth %d: %d swaps, %d moves, %d pages before" %
          (i, s["pte_swaps"], s["zfdm_migrations"], have))
    grew = (len(models["a"]) + P - 1) // P > have
    check(s["write_shared_appends"] == int(grew),
          "a: growth %d: %d shared appends, not %d (%d moves)" %
          (i, s["write_shared_appends"], int(grew), s["zfdm_migrations"]))
    moves += s["zfdm_migrations"]
    pool_runs += s["alloc_pool_runs"]
    locks += s["journal_lock_takes"]
    s = append(fb, "b", rnd.randrange(1, 2 * P))
    pool_runs += s["alloc_pool_runs"]
    locks += s["journal_lock_takes"]
print("small files' growth: %d runs from the CPU's pool, %d takes of the mutex, %d moves" %
      (pool_runs, locks, moves))
# Two small files growing in turn take the pages after each other's run.
check(moves > 0, "small files: no run moved")
# On one CPU the pages after a small run, and a fresh run, come from that
# CPU's pool; pages after a run that are in use are seen so without the
# mutex. One refill of the pool at most.
check(pool_runs > 0, "small files: no run taken from the CPU's pool")
check(locks <= 1, "small files' growth took the transaction mutex %d times" % locks)
# A page skipped: made in one handle, the page between reads as zeros.
append(fb, "b", 100, gap=2 * P, staged=False)

# A large file: its first run reserves the rest of its superpage with it
# (a whole free one), joined to the file in a shared handle, and the next
# append writes into that tail, no page swapped.
fc = open_("c")
s = append(fc, "c", 300 * 1024)
check(s["write_shared_appends"] == 1 and s["pte_swaps"] == 0,
      "c: first run: %d shared appends, %d PTE swaps" %
      (s["write_shared_appends"], s["pte_swaps"]))
s = append(fc, "c", 5000)
check(s["pte_swaps"] == 0, "c: tail: %d PTE swaps" % s["pte_swaps"])
check(s["write_shared_appends"] == 1 and s["journal_lock_takes"] == 0,
      "c: tail: %d shared appends, transaction mutex taken %d times" %
      (s["write_shared_appends"], s["journal_lock_takes"]))
# Closed, its tail goes back (beside other handles, without the mutex):
# the next append grows the run in its handle and reserves a tail again,
# which the one after writes into.
c.reset()
os.close(fc)
s = c.read()
check(s["zfdm_reclaims"] == 1 and s["journal_lock_takes"] == 0,
      "c: close: %d tails given back, transaction mutex taken %d times" %
      (s["zfdm_reclaims"], s["journal_lock_takes"]))
fc = open_("c")
append(fc, "c", 6000, staged=False)
append(fc, "c", VSP - len(models["c"]) - 100)
# Across a piece boundary: one handle; then on in the next piece, whose
# first run takes a whole superpage and gives back the tail of the one
# before, in a shared handle.
append(fc, "c", 300, staged=False)
s = append(fc, "c", P + 1)
check(s["write_shared_appends"] == 1,
      "c: next piece's first run: %d shared appends" % s["write_shared_appends"])
# A large file's first run that fills its superpage, in a shared handle.
fd_d = open_("d")
s = append(fd_d, "d", VSP)
check(s["write_shared_appends"] == 1,
      "d: a whole superpage: %d shared appends" % s["write_shared_appends"])

sums = {}
for name, fd in (("a", fa), ("b", fb), ("c", fc), ("d", fd_d)):
    os.fsync(fd)
    os.close(fd)
    sums[name] = hashlib.sha256(models[name]).hexdigest()
with open("/tmp/append-sums.json", "w") as f:
    json.dump(sums, f)
PY
umount "$MNT"
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import hashlib, json, os, sys
from vsmfs_test import check
mnt = sys.argv[1]
with open("/tmp/append-sums.json") as f:
    sums = json.load(f)
for name, want in sums.items():
    with open(os.path.join(mnt, name), "rb") as f:
        check(hashlib.sha256(f.read()).hexdigest() == want, name + ": content differs after remount")
print("staged appends: content and size right, before and after a remount")
PY
umount "$MNT"
# data=inplace makes its appends the same way.
mount_vsmfs -o data=inplace,commit=300
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os, random, sys
from vsmfs_test import P, check, Counters
dev, mnt = sys.argv[1:3]
c = Counters(dev)
rnd = random.Random(124)
path = os.path.join(mnt, "a")
with open(path, "rb") as f:
    model = bytearray(f.read())
fd = os.open(path, os.O_RDWR)
for n in (10, 3 * P, 1, 2 * P + 5, 100):
    data = rnd.randbytes(n)
    c.reset()
    check(os.pwrite(fd, data, len(model)) == n, "inplace: short append")
    model += data
    check(c.read()["write_staged_appends"] == 1, "inplace: append of %d not staged" % n)
    check(os.pread(fd, len(model) + P, 0) == model, "inplace: content after append of %d" % n)
os.close(fd)
print("data=inplace: appends staged, content right")
PY
umount "$MNT"
