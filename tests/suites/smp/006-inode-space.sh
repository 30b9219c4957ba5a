# Eight processes, one on each vCPU, create empty files in directories of
# their own until the file system has no i-number left, on file systems
# of 4,096 and of 3,000 inodes. Each CPU takes i-numbers from a region of
# its own with no lock (alloc.c); one whose region is full goes on into
# the others', where the last i-numbers are raced for. Every i-number is
# handed out once: as many files as statfs counted free inodes, with
# distinct i-numbers, and none left; across a remount the same; fsck finds
# nothing; and once everything is deleted every inode is free again.
. tests/lib/common.sh

[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
cat > /tmp/fill.py <<'PY'
import errno, os, sys
from multiprocessing import Process

mnt, out = sys.argv[1], sys.argv[2]


def worker(cpu):
    os.sched_setaffinity(0, {cpu})
    own = os.path.join(mnt, f"p{cpu}")
    made, n = [], 0
    while True:
        name = os.path.join(own, f"f{n}")
        try:
            fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            break
        made.append(os.fstat(fd).st_ino)
        os.close(fd)
        n += 1
    with open(f"{out}.{cpu}", "w") as f:
        f.write(" ".join(map(str, made)))


for cpu in range(8):
    os.mkdir(os.path.join(mnt, f"p{cpu}"))
procs = [Process(target=worker, args=(cpu,)) for cpu in range(8)]
for p in procs:
    p.start()
for p in procs:
    p.join()
if any(p.exitcode for p in procs):
    sys.exit("a process failed with an error other than ENOSPC")
inos = [int(x) for cpu in range(8) for x in open(f"{out}.{cpu}").read().split()]
if len(inos) != len(set(inos)):
    sys.exit(f"{len(inos) - len(set(inos))} i-numbers handed out twice")
print(len(inos))
PY

for n in 4096 3000; do
	mkfs_vsmfs -f -N "$n" "$DEV"
	mount_vsmfs
	# The eight directories take eight i-numbers before the processes start.
	ifree0=$(( $(stat -f -c %d "$MNT") - 8 ))
	made=$(python3 /tmp/fill.py "$MNT" /tmp/fill.out) || die "$n inodes: $made"
	echo "$n inodes: $made files created by 8 CPUs until ENOSPC"
	assert_eq "$made" "$ifree0" "$n inodes: files created until ENOSPC"
	assert_eq "$(stat -f -c %d "$MNT")" 0 "$n inodes: free inodes when full"
	umount "$MNT"
	"$FSCK" -n "$DEV" || die "$n inodes: fsck when full"
	mount_vsmfs
	assert_eq "$(stat -f -c %d "$MNT")" 0 "$n inodes: free inodes after a remount"
	assert_eq "$(find "$MNT" -type f | wc -l)" "$made" "$n inodes: files after a remount"
	rm -rf "$MNT"/p*
	assert_eq "$(stat -f -c %d "$MNT")" "$((ifree0 + 8))" "$n inodes: free inodes after deleting"
	umount "$MNT"
	"$FSCK" -n "$DEV" || die "$n inodes: fsck after deleting"
done
