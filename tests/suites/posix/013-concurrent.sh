# Several processes race on two shared files with write(), read(), shared
# mappings, truncate (never below the mapped part), hole punching,
# fallocate and fsync. The kernel must
# stay quiet (the harness checks the console), every process must finish,
# and after the files are deleted every page and inode is free again.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
touch "$MNT/first" && rm "$MNT/first"
free0=$(stat -f -c %f "$MNT")
ifree0=$(stat -f -c %d "$MNT")
python3 - "$MNT" <<'PY'
import ctypes, mmap, os, random, sys, time
mnt = sys.argv[1]
MAXSZ = 6 << 20
MINSZ = 1 << 20
files = [os.path.join(mnt, "shared%d" % i) for i in range(2)]
for f in files:
    with open(f, "wb") as fh:
        fh.truncate(MINSZ)
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2
libc = ctypes.CDLL(None, use_errno=True)

def worker(seed):
    rnd = random.Random(seed)
    end = time.time() + 40
    ops = 0
    while time.time() < end:
        fd = os.open(rnd.choice(files), os.O_RDWR)
        op = rnd.randrange(8)
        off = rnd.randrange(MAXSZ)
        n = rnd.choice([1, 100, 4096, 5000, 65536, 1 << 20])
        try:
            if op == 0:
                os.pwrite(fd, bytes([seed]) * n, off)
            elif op == 1:
                os.pread(fd, n, off)
            elif op == 2:
                # Never below MINSZ: mappings stay within the file.
                os.ftruncate(fd, rnd.randrange(MINSZ, MAXSZ))
            elif op == 3:
                os.posix_fallocate(fd, off, min(n, MAXSZ - off))
            elif op == 4:
                libc.fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE,
                               ctypes.c_long(off), ctypes.c_long(n))
            elif op == 5:
                os.fsync(fd)
            else:
                m = mmap.mmap(fd, MINSZ)
                for _ in range(8):
                    p = rnd.randrange(MINSZ)
                    if op == 6:
                        m[p] = seed
                    else:
                        _ = m[p]
                m.close()
        except OSError as e:
            if e.errno not in (28,):    # ENOSPC is possible, nothing else
                print("worker", seed, "op", op, "failed:", e, flush=True)
                os._exit(1)
        os.close(fd)
        ops += 1
    print("worker", seed, "did", ops, "operations", flush=True)
    os._exit(0)

pids = []
for s in range(1, 5):
    pid = os.fork()
    if pid == 0:
        worker(s)
    pids.append(pid)
bad = 0
for pid in pids:
    _, st = os.waitpid(pid, 0)
    if not os.WIFEXITED(st) or os.WEXITSTATUS(st):
        bad += 1
sys.exit(1 if bad else 0)
PY
umount "$MNT"
mount_vsmfs
for f in "$MNT"/shared*; do
	cat "$f" > /dev/null
done
rm -f "$MNT"/shared*
# The counts of a settled file system: the deletes committed.
sync
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after delete"
assert_eq "$(stat -f -c %d "$MNT")" "$ifree0" "free inodes after delete"
