# Atomic overwrites side by side: eight processes on eight vCPUs overwrite
# their own files, and one region each of a shared file, at random offsets
# (4 KiB pages mostly, and writes of 1 KiB and 12 KiB that merge old bytes
# and span pages), with data=atomic. Most run in shared handles, whose
# scratch pages come from the CPUs' pools and go back as runs, and which
# set the files' times when the clock ticked. Every file holds what was
# written last, and its times, across a remount; the free space after a
# sync is what it was before (no scratch page kept, none given back twice);
# fsck finds nothing. On a device mostly free, each CPU's pool refills from
# a VSP of its own, none from another pool's.
. tests/lib/common.sh

[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
cat > /tmp/ow.py <<'PY'
import hashlib, json, os, random, sys, time
from multiprocessing import Process

mnt, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
SIZE, SHARED = 4 << 20, 1 << 20


def worker(i):
    rnd = random.Random(i)
    own = bytearray(open(f"{mnt}/f{i}", "rb").read())
    with open(f"{mnt}/shared", "rb") as f:
        f.seek(i * SHARED)
        part = bytearray(f.read(SHARED))
    fo = os.open(f"{mnt}/f{i}", os.O_WRONLY)
    fs = os.open(f"{mnt}/shared", os.O_WRONLY)
    ops, end = 0, time.monotonic() + secs
    while time.monotonic() < end:
        shared = rnd.random() < 0.25
        model, fd, base = (part, fs, i * SHARED) if shared else (own, fo, 0)
        kind = rnd.random()
        n = 4096 if kind < 0.8 else (1024 if kind < 0.9 else 12288)
        off = rnd.randrange(0, len(model) - n)
        if n == 4096:
            off &= ~4095
        data = rnd.randbytes(n)
        assert os.pwrite(fd, data, base + off) == n
        model[off:off + n] = data
        ops += 1
    os.close(fo)
    os.close(fs)
    with open(f"{out}.{i}", "w") as f:
        json.dump({"ops": ops, "own": hashlib.sha256(own).hexdigest(),
                   "part": hashlib.sha256(part).hexdigest()}, f)


procs = [Process(target=worker, args=(i,)) for i in range(8)]
for p in procs:
    p.start()
for p in procs:
    p.join()
if any(p.exitcode for p in procs):
    sys.exit("a process failed")
ops = sum(json.load(open(f"{out}.{i}"))["ops"] for i in range(8))
print(f"{ops} overwrites by 8 processes in {secs:.0f} s")
PY
cat > /tmp/ow-check.py <<'PY'
import hashlib, json, sys

mnt, out = sys.argv[1], sys.argv[2]
SHARED = 1 << 20
shared = open(f"{mnt}/shared", "rb").read()
for i in range(8):
    want = json.load(open(f"{out}.{i}"))
    if hashlib.sha256(open(f"{mnt}/f{i}", "rb").read()).hexdigest() != want["own"]:
        sys.exit(f"f{i}: content differs from what was written last")
    if hashlib.sha256(shared[i * SHARED:(i + 1) * SHARED]).hexdigest() != want["part"]:
        sys.exit(f"shared, region {i}: content differs from what was written last")
print("every file and region holds what was written last")
PY

mkfs_vsmfs -f "$DEV"
mount_vsmfs -o data=atomic
for i in 0 1 2 3 4 5 6 7; do
	head -c 4M /dev/urandom > "$MNT/f$i"
done
head -c 8M /dev/urandom > "$MNT/shared"
sync
before=$(free_blocks)
shared0=$(counter trans_shared_handles)
sleep 1
t0=$(date +%s)
python3 /tmp/ow.py "$MNT" 15 /tmp/ow.out
sync
after=$(free_blocks)
echo "free blocks $before before, $after after;" \
	"$(($(counter trans_shared_handles) - shared0)) shared handles," \
	"$(counter alloc_pool_pages) pool pages, $(counter alloc_pool_refills) refills" \
	"($(counter alloc_pool_shared_vsp) from another pool's VSP), $(counter trans_commits) commits"
assert_eq "$after" "$before" "free blocks after the overwrites and a sync"
[ "$(counter alloc_pool_refills)" -gt 8 ] || die "the pools were not refilled again"
assert_eq "$(counter alloc_pool_shared_vsp)" 0 "refills from another pool's VSP"
[ "$(counter trans_shared_handles)" -gt "$shared0" ] || die "no overwrite ran in a shared handle"
python3 /tmp/ow-check.py "$MNT" /tmp/ow.out
# The writes' times, set in shared handles at the clock's ticks, are the
# files' times after the remount, and newer than the files' creation.
file_times() { (cd "$MNT" && stat -c '%n %Y.%y %Z.%z' f0 f1 f2 f3 f4 f5 f6 f7 shared); }
file_times > /tmp/ow.times
for f in f0 f1 f2 f3 f4 f5 f6 f7 shared; do
	[ "$(stat -c %Y "$MNT/$f")" -ge "$t0" ] || die "$f: mtime older than the overwrites"
done
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the overwrites"
mount_vsmfs
python3 /tmp/ow-check.py "$MNT" /tmp/ow.out
file_times | diff /tmp/ow.times - || die "times differ after the remount"
assert_eq "$(free_blocks)" "$before" "free blocks after a remount"
umount "$MNT"
