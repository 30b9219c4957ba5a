# Handles of both kinds side by side: on eight vCPUs, four processes
# overwrite their own files at random 4 KiB offsets (shared handles, their
# room taken from their CPU's share of the running transaction) while four
# create, append to, fsync, rename and unlink small files (shared metadata
# handles, handles under the transaction mutex, commits), so that the
# shares are folded into the running transaction by every handle of the
# other kind and every commit. Every process makes progress (no kind of
# handle keeps the other out); every file holds what was written last, and
# every fsync'd record, across a remount; after a second run on the
# mounted file system, the free space once the small files are gone and a
# sync is what it was before it (no page a share held lost or freed
# twice); fsck finds nothing. The shares keep their room across handles
# of the other kind and commits: a third run, on a 2 MiB journal whose
# room the shares could hold most of, truncates and rewrites a 6 MiB file
# beside them (handles that take that room back); every file holds what
# was written last, and fsck finds nothing.
. tests/lib/common.sh

[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
cat > /tmp/mix.py <<'PY'
import hashlib, json, os, random, sys, time
from multiprocessing import Process

mnt, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]


def overwriter(i):
    rnd = random.Random(i)
    model = bytearray(open(f"{mnt}/o{i}", "rb").read())
    fd = os.open(f"{mnt}/o{i}", os.O_WRONLY)
    ops, end = 0, time.monotonic() + secs
    while time.monotonic() < end:
        off = rnd.randrange(0, len(model) // 4096) * 4096
        data = rnd.randbytes(4096)
        assert os.pwrite(fd, data, off) == 4096
        model[off:off + 4096] = data
        ops += 1
    os.close(fd)
    return {"ops": ops, "sha": hashlib.sha256(model).hexdigest()}


def meta(i):
    rnd = random.Random(100 + i)
    own = os.path.join(mnt, f"m{i}")
    os.mkdir(own)
    files, ops, end = {}, 0, time.monotonic() + secs
    while time.monotonic() < end:
        name = os.path.join(own, f"f{rnd.randrange(30)}")
        if name in files and rnd.random() < 0.2:
            os.unlink(name)
            del files[name]
        else:
            rec = f"{i} {ops} {rnd.random()}\n".encode() * rnd.choice((1, 40))
            fd = os.open(name, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
            os.write(fd, rec)
            os.fsync(fd)
            os.close(fd)
            files[name] = files.get(name, b"") + rec
            if ops % 10 == 0:
                os.rename(name, name + ".r")
                os.rename(name + ".r", name)
        ops += 1
    return {"ops": ops, "files": {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}}


def run(kind, i):
    res = overwriter(i) if kind == "o" else meta(i)
    with open(f"{out}.{kind}{i}", "w") as f:
        json.dump(res, f)


procs = [Process(target=run, args=(k, i)) for i in range(4) for k in "om"]
for p in procs:
    p.start()
for p in procs:
    p.join()
if any(p.exitcode for p in procs):
    sys.exit("a process failed")
for k in "om":
    ops = [json.load(open(f"{out}.{k}{i}"))["ops"] for i in range(4)]
    print(("overwrites" if k == "o" else "metadata operations") + " per process:",
          " ".join(map(str, ops)))
    if min(ops) == 0:
        sys.exit("a process made no progress")
PY
cat > /tmp/mix-check.py <<'PY'
import hashlib, json, sys

mnt, out = sys.argv[1], sys.argv[2]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
n = 0
for i in range(4):
    if sha(f"{mnt}/o{i}") != json.load(open(f"{out}.o{i}"))["sha"]:
        sys.exit(f"o{i}: content differs from what was written last")
    for k, want in json.load(open(f"{out}.m{i}"))["files"].items():
        if sha(k) != want:
            sys.exit(f"{k}: content differs from what was appended")
        n += 1
print(f"4 overwritten files and {n} small files hold what was written")
PY

mkfs_vsmfs -f "$DEV"
mount_vsmfs -o data=atomic
for i in 0 1 2 3; do
	head -c 8M /dev/urandom > "$MNT/o$i"
done
sync
shared0=$(counter trans_shared_handles)
meta0=$(counter trans_shared_meta)
python3 /tmp/mix.py "$MNT" 12 /tmp/mix.out
echo "$(($(counter trans_shared_handles) - shared0)) shared handles," \
	"$(($(counter trans_shared_meta) - meta0)) shared metadata handles," \
	"$(counter trans_commits) commits, $(counter journal_lock_waits) lock waits"
[ "$(counter trans_shared_handles)" -gt "$shared0" ] || die "no overwrite ran in a shared handle"
[ "$(counter trans_shared_meta)" -gt "$meta0" ] || die "no create or unlink ran in a shared handle"
python3 /tmp/mix-check.py "$MNT" /tmp/mix.out
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the run"
mount_vsmfs -o data=atomic
python3 /tmp/mix-check.py "$MNT" /tmp/mix.out
# Again on the mounted file system: the pages a share held are freed
# once, in DRAM, before a remount would rebuild the free space from PM.
rm -r "$MNT"/m0 "$MNT"/m1 "$MNT"/m2 "$MNT"/m3
sync
before=$(free_blocks)
python3 /tmp/mix.py "$MNT" 8 /tmp/mix.out
python3 /tmp/mix-check.py "$MNT" /tmp/mix.out
rm -r "$MNT"/m0 "$MNT"/m1 "$MNT"/m2 "$MNT"/m3
sync
assert_eq "$(free_blocks)" "$before" "free blocks once the small files are gone"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck at the end"

mkfs_vsmfs -f -J 2M "$DEV"
mount_vsmfs -o data=atomic
for i in 0 1 2 3; do
	head -c 8M /dev/urandom > "$MNT/o$i"
done
sync
rm -f /tmp/mix.stop
(
	n=0
	while [ ! -e /tmp/mix.stop ]; do
		head -c 6M /dev/urandom > /tmp/big.data
		truncate -s 0 "$MNT/big" || exit 1
		dd if=/tmp/big.data of="$MNT/big" bs=6M status=none || exit 1
		n=$((n + 1))
	done
	echo "$n truncates and 6 MiB rewrites beside them"
) &
big=$!
status=0
python3 /tmp/mix.py "$MNT" 8 /tmp/mix.out || status=$?
touch /tmp/mix.stop
[ "$status" = 0 ] || { wait $big; die "the mixed run on a small journal failed"; }
wait $big || die "a truncate or a rewrite failed"
echo "$(counter trans_share_reclaims) times the shares' room was taken back," \
	"$(counter trans_commits) commits"
[ "$(counter trans_share_reclaims)" -gt 0 ] || die "no handle took the shares' room back"
python3 /tmp/mix-check.py "$MNT" /tmp/mix.out
cmp /tmp/big.data "$MNT/big" || die "big: content differs from the last rewrite"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the run on a small journal"
mount_vsmfs
python3 /tmp/mix-check.py "$MNT" /tmp/mix.out
cmp /tmp/big.data "$MNT/big" || die "big: content differs after a remount"
umount "$MNT"
