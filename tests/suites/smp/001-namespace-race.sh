# Eight vCPUs, sixteen processes for a bounded time: creating, appending,
# renaming, linking and unlinking files and making and removing
# directories, in private directories and in three shared ones, while the
# files each process keeps open are written often enough for hot-inode
# aggregation to move them (small window, low threshold, so the window
# grows and migrations race with everything). Only the errors a race can
# explain are accepted. Afterwards every private file has the content its
# process wrote, across a remount; fsck finds nothing; and once everything
# is deleted every inode and page is free again.
. tests/lib/common.sh

S=/sys/fs/vsmfs/$(basename "$DEV")
[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o aggregate_threshold=4,aggregate_window=16
touch "$MNT/first" && rm "$MNT/first"
free0=$(stat -f -c %f "$MNT")
ifree0=$(stat -f -c %d "$MNT")
cat > /tmp/race.py <<'PY'
import errno, hashlib, json, os, random, sys, time
from multiprocessing import Process

mnt, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
OK = {errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY}
SHARED = [os.path.join(mnt, f"s{j}") for j in range(3)]


def worker(i):
    rnd = random.Random(i)
    own = os.path.join(mnt, f"p{i}")
    os.mkdir(own)
    files = {}		# private name -> content
    hot = []
    for k in range(2):
        name = os.path.join(own, f"hot{k}")
        fd = os.open(name, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
        hot.append((name, fd))
        files[name] = b""
    end = time.monotonic() + secs
    n = 0
    while time.monotonic() < end:
        n += 1
        op = rnd.randrange(9)
        try:
            if op <= 1:
                name, fd = hot[rnd.randrange(2)]
                rec = b"%d:%d;" % (i, n)
                os.write(fd, rec)
                if rnd.randrange(4) == 0:
                    os.fsync(fd)
                files[name] += rec
            elif op == 2:
                name = os.path.join(own, f"f{n}")
                buf = os.urandom(rnd.randrange(0, 3000))
                with open(name, "wb") as f:
                    f.write(buf)
                files[name] = buf
            elif op == 3 and len(files) > 4:
                name = rnd.choice([x for x in files if "hot" not in x])
                new = os.path.join(own, f"r{n}")
                os.rename(name, new)
                files[new] = files.pop(name)
            elif op == 4 and len(files) > 4:
                name = rnd.choice([x for x in files if "hot" not in x])
                os.unlink(name)
                del files[name]
            elif op == 5:
                d = rnd.choice(SHARED)
                with open(os.path.join(d, f"c{rnd.randrange(40)}"), "wb") as f:
                    f.write(os.urandom(rnd.randrange(0, 500)))
            elif op == 6:
                a, b = rnd.choice(SHARED), rnd.choice(SHARED)
                os.rename(os.path.join(a, f"c{rnd.randrange(40)}"),
                          os.path.join(b, f"c{rnd.randrange(40)}"))
            elif op == 7:
                d = rnd.choice(SHARED)
                if rnd.randrange(2):
                    os.link(os.path.join(d, f"c{rnd.randrange(40)}"),
                            os.path.join(d, f"l{rnd.randrange(40)}"))
                else:
                    os.unlink(os.path.join(d, rnd.choice("cl") + f"{rnd.randrange(40)}"))
            else:
                d = os.path.join(rnd.choice(SHARED), f"d{rnd.randrange(8)}")
                if rnd.randrange(2):
                    os.mkdir(d)
                else:
                    os.rmdir(d)
        except OSError as e:
            if e.errno not in OK:
                raise
    for _, fd in hot:
        os.fsync(fd)
        os.close(fd)
    with open(f"{out}.{i}", "w") as f:
        json.dump({"ops": n, "files": {k: hashlib.sha256(v).hexdigest()
                                       for k, v in files.items()}}, f)


for d in SHARED:
    os.mkdir(d)
procs = [Process(target=worker, args=(i,)) for i in range(16)]
for p in procs:
    p.start()
for p in procs:
    p.join()
bad = [p.exitcode for p in procs if p.exitcode]
if bad:
    sys.exit(f"{len(bad)} processes failed")
ops = sum(json.load(open(f"{out}.{i}"))["ops"] for i in range(16))
print(f"16 processes, {ops} operations in {secs:.0f} s")
PY
cat > /tmp/race-check.py <<'PY'
import hashlib, json, os, sys

mnt, out = sys.argv[1], sys.argv[2]
n = 0
for i in range(16):
    files = json.load(open(f"{out}.{i}"))["files"]
    names = set(os.listdir(os.path.join(mnt, f"p{i}")))
    want = {os.path.basename(k) for k in files}
    if names != want:
        sys.exit(f"p{i}: names {sorted(names ^ want)[:5]} differ")
    for k, sha in files.items():
        with open(k, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != sha:
                sys.exit(f"{k}: content differs")
        n += 1
print(f"{n} private files as their processes left them")
PY
python3 /tmp/race.py "$MNT" 40 /tmp/race.out
echo "$(cat "$S/aggregate_migrations") migrations, window $(cat "$S/aggregate_window") slots," \
	"$(cat "$S/aggregate_window_growths") growths"
[ "$(cat "$S/aggregate_migrations")" -gt 0 ] || die "no inode migrated"
# Creates in directories with room, unlinks and rmdirs run beside each
# other, without the transaction mutex; the rest (a new directory block)
# take it.
echo "$(cat "$S/trans_shared_meta") creates, unlinks and rmdirs beside others" \
	"($(cat "$S/inodes_created") inodes created), $(cat "$S/trans_aborts") aborts"
[ "$(cat "$S/trans_shared_meta")" -gt "$(cat "$S/inodes_created")" ] ||
	die "too few creates and unlinks ran in shared handles"
python3 /tmp/race-check.py "$MNT" /tmp/race.out
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the race"
mount_vsmfs
python3 /tmp/race-check.py "$MNT" /tmp/race.out
rm -rf "$MNT"/*
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after deleting everything"
assert_eq "$(stat -f -c %d "$MNT")" "$ifree0" "free inodes after deleting everything"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck at the end"
