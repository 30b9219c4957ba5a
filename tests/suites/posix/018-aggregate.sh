# Hot-inode aggregation: files kept open and written often move into the
# window of slots at the start of the inode table. Across the migrations,
# a remount and fsck, every file keeps its i-number, attributes and data;
# the moved inodes map into the window on PM; and the inode-table blocks a
# checkpoint writes home hold a smaller share of clean inodes than with
# aggregate=off on the same workload.
. tests/lib/common.sh

S=/sys/fs/vsmfs/$(basename "$DEV")
POKE=$HELPERS/fspoke
st() { cat "$S/$1"; }

work() {	# mount options; prints "migrations dirty clean"
	mkfs_vsmfs -f "$DEV"
	mount_vsmfs -o "$1"
	PYTHONPATH=tests/lib python3 - "$MNT" "$S" /tmp/agg.json <<'PY'
import hashlib, json, os, sys, time

mnt, sysfs, out = sys.argv[1:4]


def stat_of(path):
    s = os.stat(path)
    return [s.st_ino, s.st_mode, s.st_nlink, s.st_uid, s.st_size, s.st_mtime_ns,
            s.st_ctime_ns]


def counter(name):
    with open(os.path.join(sysfs, name)) as f:
        return int(f.read())


# 400 files in 4 directories (25 inode-table blocks), one in 8 hot.
names = [f"d{i % 4}/f{i}" for i in range(400)]
for d in range(4):
    os.mkdir(os.path.join(mnt, f"d{d}"))
data = {}
for i, n in enumerate(names):
    data[n] = hashlib.sha256(n.encode()).digest() * (1 + i % 7)
    with open(os.path.join(mnt, n), "wb") as f:
        f.write(data[n])
os.sync()
hot = names[3::8]
before = {n: stat_of(os.path.join(mnt, n)) for n in names}
fds = {n: os.open(os.path.join(mnt, n), os.O_WRONLY | os.O_APPEND) for n in hot}


def round_(k):
    for n in hot:
        rec = b"%-29d\n" % k
        os.write(fds[n], rec)
        os.fsync(fds[n])
        data[n] += rec


# Warm up: enough writes to make every open file hot, and time to move.
for k in range(24):
    round_(k)
time.sleep(2)
migrations = counter("aggregate_migrations")
# Measure: more writes, then a checkpoint (sync writes every block home).
os.sync()
with open(os.path.join(sysfs, "reset"), "w") as f:
    f.write("1")
for k in range(24, 40):
    round_(k)
os.sync()
dirty, clean = counter("itable_home_dirty"), counter("itable_home_clean")
for fd in fds.values():
    os.close(fd)
for n in names:
    with open(os.path.join(mnt, n), "rb") as f:
        assert f.read() == data[n], f"{n}: data differs"
    now = stat_of(os.path.join(mnt, n))
    if n not in hot:
        assert now == before[n], f"{n}: stat {before[n]} -> {now}"
    else:
        assert now[:4] == before[n][:4], f"{n}: i-number, mode, links or owner changed"
        assert now[4] == len(data[n]), f"{n}: size {now[4]}"
json.dump({"hot": [before[n][0] for n in hot],
           "files": {n: [hashlib.sha256(data[n]).hexdigest()] + stat_of(os.path.join(mnt, n))
                     for n in names}}, open(out, "w"))
print(migrations, dirty, clean)
PY
}

set -- $(work aggregate_threshold=8)
m_on=$1 dirty_on=$2 clean_on=$3
echo "aggregate=on: $m_on migrations; blocks written home held $dirty_on dirty and" \
	"$clean_on clean inodes; window $(st aggregate_window) slots"
[ "$m_on" -ge 40 ] || die "only $m_on of the 50 hot inodes moved"
grep -q "aggregate_threshold=8" /proc/mounts || die "aggregate_threshold not in /proc/mounts"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the migrations"

# On PM the hot inodes now map into the window.
inside=0
for ino in $(python3 -c 'import json; print(" ".join(map(str, json.load(open("/tmp/agg.json"))["hot"])))'); do
	slot=$("$POKE" "$DEV" imap "$ino")
	[ "$slot" -lt 128 ] && inside=$((inside + 1))
done
echo "$inside of 50 hot inodes map into the first 128 slots"
[ "$inside" -ge 40 ] || die "the hot inodes did not move into the window"

# A remount sees the same files, attributes and data.
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$MNT" /tmp/agg.json <<'PY'
import hashlib, json, os, sys

mnt, path = sys.argv[1:3]
want = json.load(open(path))["files"]
for n, (sha, *st) in want.items():
    p = os.path.join(mnt, n)
    with open(p, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == sha, f"{n}: data differs after remount"
    s = os.stat(p)
    now = [s.st_ino, s.st_mode, s.st_nlink, s.st_uid, s.st_size, s.st_mtime_ns, s.st_ctime_ns]
    assert now == st, f"{n}: stat {st} -> {now} after remount"
print(f"{len(want)} files identical after the remount")
PY
umount "$MNT"

set -- $(work aggregate=off)
m_off=$1 dirty_off=$2 clean_off=$3
echo "aggregate=off: $m_off migrations; blocks written home held $dirty_off dirty and" \
	"$clean_off clean inodes"
assert_eq "$m_off" 0 "migrations with aggregate=off"
grep -q "aggregate=off" /proc/mounts || die "aggregate=off not in /proc/mounts"
umount "$MNT"
share() { echo $(( $2 * 100 / ($1 + $2) )); }
echo "clean share of written-back inode-table blocks: $(share "$dirty_on" "$clean_on")% with" \
	"aggregation, $(share "$dirty_off" "$clean_off")% without"
[ "$(share "$dirty_on" "$clean_on")" -lt "$(share "$dirty_off" "$clean_off")" ] ||
	die "aggregation did not lower the clean share"

# Bad values are refused.
assert_eq "$(mount_errno "$DEV" "$MNT" aggregate_window=10)" EINVAL "aggregate_window=10"
assert_eq "$(mount_errno "$DEV" "$MNT" aggregate_threshold=0)" EINVAL "aggregate_threshold=0"
assert_eq "$(mount_errno "$DEV" "$MNT" aggregate=maybe)" EINVAL "aggregate=maybe"
