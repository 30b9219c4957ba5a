# Hot-inode aggregation picks a slot of its window with no lock held, then
# reads the inode there. An inode unlinked and freed meanwhile, or one
# unlinked while open, is not damage: the migration has nothing to do. A
# user unlinking files beside the worker must never see the file system
# report an error or turn read-only.
#
# First, deterministically: the aggr_wait fault point holds the worker
# between its pick of a slot whose inode is not in memory and the read of
# that inode, while every inode of the window is unlinked and freed. Then,
# as users would: hot files migrate while other tasks create, open, unlink
# and close files as fast as they can, unlinked-but-open ones too. Each
# time the file system stays writable, records no error, logs none, and
# fsck finds nothing.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -d $K/aggr_wait ] || skip "module built without CONFIG_VSMFS_FAULT_INJECTION"

check() {	# what a user sees after $1
	touch "$MNT/still-writable" || die "read-only after $1"
	rm "$MNT/still-writable"
	assert_eq "$(counter errors | awk '$1 == "count" { print $2 }')" 0 \
		"errors recorded after $1"
	umount "$MNT"
	if dmesg | grep -q "vsmfs ($(basename "$DEV")): error:"; then
		dmesg | grep "vsmfs" | tail -n 5
		die "an error was reported after $1"
	fi
	"$FSCK" -n "$DEV" >/tmp/gone-fsck 2>&1 || { cat /tmp/gone-fsck; die "fsck after $1"; }
}

# 1. The inode picked is freed before the worker reads it. A window of 16
# slots, i-numbers 1 to 15 (CPU 0 takes i-numbers from the start): the
# 40 files made first fill it, the hot file made next lies past it.
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o aggregate_threshold=2,aggregate_window=16
dmesg -C
taskset -c 0 python3 - "$MNT" <<'PY'
import os, sys
mnt = sys.argv[1]
for i in range(40):
    open(os.path.join(mnt, f"fill{i}"), "w").close()
open(os.path.join(mnt, "hot"), "w").close()
PY
sync
# Out of memory: the window's inodes are read from their slots when picked.
echo 2 > /proc/sys/vm/drop_caches
echo 1 > $K/aggr_wait/interval
waits0=$(cat $K/aggr_wait/injected)
PYTHONPATH=tests/lib python3 - "$MNT" "$K/aggr_wait" "$waits0" <<'PY'
import os, sys, time
mnt, knob, waits0 = sys.argv[1], sys.argv[2], int(sys.argv[3])


def waits():
    with open(os.path.join(knob, "injected")) as f:
        return int(f.read())


fd = os.open(os.path.join(mnt, "hot"), os.O_WRONLY)
for k in range(4):
    os.pwrite(fd, b"h" * 100, 0)
    os.fsync(fd)
# The worker, started by the writes, stops between its pick and the read.
for _ in range(600):
    if waits() > waits0:
        break
    time.sleep(0.1)
else:
    sys.exit("FAIL: the worker never picked a slot whose inode is not in memory")
# Every inode of the window goes: looked up, unlinked, evicted and freed.
for i in range(40):
    os.unlink(os.path.join(mnt, f"fill{i}"))
with open(os.path.join(knob, "interval"), "w") as f:
    f.write("0\n")
os.close(fd)
print("the worker's pick was freed before it read the inode")
PY
echo 0 > $K/aggr_wait/interval
# The unmount waits for the worker.
check "an inode freed under the worker"

# 2. Hot files migrate while other tasks churn the window as fast as they can.
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o aggregate_threshold=1,aggregate_window=16
dmesg -C
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os, sys
from multiprocessing import Process

mnt = sys.argv[1]
ROUNDS = 30


def churn(cpu, tag):
    """Create, open, unlink and close, some files unlinked while open."""
    os.sched_setaffinity(0, {cpu})
    for r in range(ROUNDS):
        held = []
        for i in range(24):
            p = os.path.join(mnt, f"c{tag}-{r}-{i}")
            fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
            if i % 3 == 0:
                os.unlink(p)		# an orphan, open a while
                os.write(fd, b"o" * 64)
                held.append(fd)
            else:
                os.close(fd)
        for i in range(24):
            if i % 3:
                os.unlink(os.path.join(mnt, f"c{tag}-{r}-{i}"))
        for fd in held:
            os.close(fd)
        if r % 5 == 4:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("2\n")


def hot(tag):
    """Files written often enough to migrate, then closed and unlinked."""
    for r in range(ROUNDS):
        fds = []
        for i in range(4):
            p = os.path.join(mnt, f"h{tag}-{r}-{i}")
            fds.append((p, os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)))
        for k in range(3):
            for p, fd in fds:
                os.pwrite(fd, b"h" * 64, 0)
                os.fsync(fd)
        for p, fd in fds:
            os.close(fd)
            if r % 2:
                os.unlink(p)


procs = [Process(target=churn, args=(0, "a")), Process(target=churn, args=(0, "b")),
         Process(target=hot, args=("x",)), Process(target=hot, args=("y",))]
for p in procs:
    p.start()
for p in procs:
    p.join()
bad = [p.exitcode for p in procs if p.exitcode]
if bad:
    sys.exit(f"FAIL: a task failed: exit codes {bad}")
print("churn done")
PY
m=$(counter aggregate_migrations)
echo "$m migrations during the churn"
[ "$m" -gt 0 ] || die "no inode migrated during the churn"
check "migrations beside creates and unlinks"
