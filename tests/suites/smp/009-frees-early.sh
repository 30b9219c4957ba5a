# A commit frees the pages of the running transaction before it keeps the
# handles out: on eight vCPUs, eight processes each grow a file of their
# own by a few pages, fsync it, shrink it by a few (freeing pages the next
# commit gives back), now and then unlink it and start again, while each
# fsync commits what the others freed. The commits free most runs beside
# the handles (trans_frees_early), and nothing is lost or taken twice:
# every file holds what its process wrote, before and after a remount;
# fsck finds nothing; once every file is gone, free space is what it was
# before the run.
. tests/lib/common.sh

[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
cat > /tmp/fe.py <<'PY'
import json, os, random, sys, time
from multiprocessing import Process

mnt, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]


def worker(i):
    rnd = random.Random(i)
    path = f"{mnt}/f{i}"
    pages, ops = [], {"grow": 0, "shrink": 0, "unlink": 0}
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        r = rnd.random()
        if r < 0.05:
            os.close(fd)
            os.unlink(path)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            pages = []
            ops["unlink"] += 1
        elif r < 0.55 or not pages:
            add = [rnd.randrange(1, 256) for _ in range(rnd.randrange(1, 9))]
            os.pwrite(fd, b"".join(bytes([v]) * 4096 for v in add), len(pages) * 4096)
            pages += add
            ops["grow"] += 1
        else:
            del pages[len(pages) - rnd.randrange(1, len(pages) + 1):]
            os.ftruncate(fd, len(pages) * 4096)
            ops["shrink"] += 1
        if rnd.random() < 0.5:
            os.fsync(fd)
    os.close(fd)
    return {"ops": ops, "pages": pages}


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
for i in range(8):
    ops = json.load(open(f"{out}.{i}"))["ops"]
    print(f"process {i}:", " ".join(f"{k} {v}" for k, v in ops.items()))
    if not ops["grow"] or not ops["shrink"]:
        sys.exit(f"process {i} made no progress")
PY
cat > /tmp/fe-check.py <<'PY'
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
for i in 0 1 2 3 4 5 6 7; do
	head -c 8192 /dev/zero > "$MNT/f$i" &
done
wait
rm -f "$MNT"/f*
sync
sync
free0=$(stat -f -c %f "$MNT")
early0=$(counter trans_frees_early)
python3 /tmp/fe.py "$MNT" 12 /tmp/fe.out
early=$(($(counter trans_frees_early) - early0))
echo "$(counter trans_commits) commits; $early runs freed before a commit kept the handles out"
[ "$early" -gt 0 ] || die "no run freed before a commit kept the handles out"
python3 /tmp/fe-check.py "$MNT" /tmp/fe.out
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the run"
mount_vsmfs
python3 /tmp/fe-check.py "$MNT" /tmp/fe.out
rm -f "$MNT"/f*
sync
# Pages freed by the last commit go back once it is durable: one more.
sync
free1=$(stat -f -c %f "$MNT")
echo "free blocks before the run $free0, after every file is gone $free1"
assert_eq "$free1" "$free0" "free blocks once every file is gone"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck at the end"
