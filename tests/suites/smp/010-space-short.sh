# Commits for short free space run beside the overwrites: the file system
# is filled but for 40 MiB past the sixteenth of its pages that free space
# keeps (below which pages waiting in the running transaction make it
# short), and eight processes each overwrite 4 KiB pages of a 1 MiB file
# of their own at random, without fsync. Every overwrite takes a fresh
# page and leaves the old one to the next commit, so free space runs
# short again and again: a handle that finds it short commits
# (commits_full) as an fsync would, freeing the old pages beside the other
# handles (trans_frees_early: no run here but those old pages). Nothing is
# lost or taken twice: every file holds what its process wrote last, before
# and after a remount; fsck finds nothing; once the files are gone, free
# space is what it was before them.
. tests/lib/common.sh

[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
cat > /tmp/ss.py <<'PY'
import json, os, random, sys, time
from multiprocessing import Process

mnt, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
PAGES = 256


def worker(i):
    rnd = random.Random(100 + i)
    want = [0] * PAGES
    fd = os.open(f"{mnt}/f{i}", os.O_RDWR)
    n, end = 0, time.monotonic() + secs
    while time.monotonic() < end:
        pg, val = rnd.randrange(PAGES), rnd.randrange(1, 256)
        os.pwrite(fd, bytes([val]) * 4096, pg * 4096)
        want[pg] = val
        n += 1
    os.close(fd)
    return {"ops": n, "pages": want}


def run(i):
    with open(f"{out}.{i}", "w") as f:
        json.dump(worker(i), f)


procs = [Process(target=run, args=(i,)) for i in range(8)]
for p in procs:
    p.start()
for p in procs:
    p.join()
if any(p.exitcode for p in procs):
    sys.exit("a process failed")
print("overwrites:", " ".join(str(json.load(open(f"{out}.{i}"))["ops"]) for i in range(8)))
PY
cat > /tmp/ss-check.py <<'PY'
import json, sys

mnt, out = sys.argv[1], sys.argv[2]
for i in range(8):
    want = json.load(open(f"{out}.{i}"))["pages"]
    with open(f"{mnt}/f{i}", "rb") as f:
        data = f.read()
    if len(data) != len(want) * 4096:
        sys.exit(f"f{i}: {len(data)} bytes, expected {len(want) * 4096}")
    for pg, val in enumerate(want):
        if data[pg * 4096:(pg + 1) * 4096] != bytes([val]) * 4096:
            sys.exit(f"f{i}: page {pg} does not hold {val} throughout")
print("8 files as their processes wrote them")
PY

mkfs_vsmfs -f "$DEV"
mount_vsmfs
# The root's entries and the files' inode table blocks, made once first.
touch "$MNT/fill" "$MNT"/f0 "$MNT"/f1 "$MNT"/f2 "$MNT"/f3 "$MNT"/f4 "$MNT"/f5 "$MNT"/f6 \
	"$MNT"/f7
rm -f "$MNT"/f* "$MNT/fill"
sync
sync
free0=$(stat -f -c %f "$MNT")
bs=$(stat -f -c %S "$MNT")
for i in 0 1 2 3 4 5 6 7; do
	head -c 1M /dev/zero > "$MNT/f$i"
done
# All but 40 MiB past the sixteenth of the file system's pages taken by one file.
left=$(($(stat -f -c %b "$MNT") * bs / 16 / 1048576 + 40))
fill=$(($(stat -f -c %a "$MNT") * bs / 1048576 - left))
fallocate -l "${fill}M" "$MNT/fill"
sync
sync
full0=$(counter commits_full)
early0=$(counter trans_frees_early)
python3 /tmp/ss.py "$MNT" 12 /tmp/ss.out
full=$(($(counter commits_full) - full0))
early=$(($(counter trans_frees_early) - early0))
echo "$full commits for short free space; $early runs of old pages freed beside the handles"
[ "$full" -gt 0 ] || die "free space never ran short: the test did not test"
[ "$early" -gt 0 ] || die "no old page freed before a commit kept the handles out"
python3 /tmp/ss-check.py "$MNT" /tmp/ss.out
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the run"
mount_vsmfs
python3 /tmp/ss-check.py "$MNT" /tmp/ss.out
rm -f "$MNT"/f* "$MNT/fill"
sync
# Pages freed by the last commit go back once it is durable: one more.
sync
free1=$(stat -f -c %f "$MNT")
echo "free blocks before the files $free0, once they are gone $free1"
assert_eq "$free1" "$free0" "free blocks once every file is gone"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck at the end"
