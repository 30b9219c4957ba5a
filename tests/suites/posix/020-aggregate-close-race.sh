# Hot-inode aggregation keeps the hot inodes of files open for writing on a
# list. The last writer to close takes its inode off, but the count of
# writers drops only after ->release: a file closed while truncate(2)
# holds write access on it, or by two writers at once, sees another writer
# and stays listed. Such an inode must still leave the list before it is
# freed: here files are closed during truncate(2) and by two threads at
# once, unlinked and evicted, new inodes take their memory, and files
# open and close for writing next to where they were listed (the kernel
# checks every list link it touches), while hot files make the worker walk
# the list. The kernel log must stay clean, and fsck finds no error.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs -o aggregate_threshold=4
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os, sys, threading

mnt = sys.argv[1]
stop = threading.Event()


def truncater(path, go):
    go.set()
    while not stop.is_set():
        try:
            os.truncate(path, 4096)
        except FileNotFoundError:
            pass


# Neighbours on the list, open for writing throughout.
keep = [os.open(os.path.join(mnt, f"keep{i}"), os.O_WRONLY | os.O_CREAT, 0o644)
        for i in range(4)]
for rnd in range(6):
    for i in range(60):
        path = os.path.join(mnt, f"r{rnd}-{i}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"x" * 100)
        if i % 2:
            # Closed while truncate(2) holds write access.
            go = threading.Event()
            stop.clear()
            t = threading.Thread(target=truncater, args=(path, go))
            t.start()
            go.wait()
            os.close(fd)
            stop.set()
            t.join()
        else:
            # Two writers closing at once.
            fd2 = os.open(path, os.O_WRONLY)
            t = threading.Thread(target=os.close, args=(fd2,))
            t.start()
            os.close(fd)
            t.join()
        os.unlink(path)
    # Evict what is unused: the unlinked inodes are freed.
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")
    # New inodes take the freed memory; listing and unlisting them touches
    # the links of whatever the list still holds.
    for i in range(200):
        path = os.path.join(mnt, f"n{rnd}-{i}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        for _ in range(5 if i % 10 == 0 else 1):
            os.pwrite(fd, b"y" * 30, 0)
            os.fsync(fd)
        os.close(fd)
    for fd in keep:
        os.pwrite(fd, b"k" * 30, 0)
        os.fsync(fd)
for fd in keep:
    os.close(fd)
print("close races done")
PY
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the close races"
mount_vsmfs
[ "$(find "$MNT" -name 'n*' | wc -l)" = 1200 ] || die "files missing after remount"
umount "$MNT"
