# Memory failure of PM, as the platform reports it (madvise MADV_HWPOISON
# on a mapped page goes the way of a machine check: memory_failure(), the
# pmem driver, the file system's notify_failure), and as the device lists
# it at mount (its badblocks). A poisoned page of a file: the process that
# maps it gets SIGBUS, read() of it EIO and the other pages read back
# intact, a write that keeps part of it EIO, a whole-page overwrite repairs
# it; the frame never comes back from the allocator (the device written
# full does not reach it), before and after a remount, and the file system
# says which frames are bad (sysfs bad_frames); fsck.vsmfs -n reports a
# file that still holds one.
. tests/lib/common.sh

S=/sys/fs/vsmfs/$(basename "$DEV")
# A data area of about 500 MiB: the device is written full twice.
mkfs_vsmfs -f -J 480M "$DEV"
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import errno
import os
import signal
import subprocess
import sys
from vsmfs_test import check, Counters, P, phys
dev, mnt = sys.argv[1:3]
c = Counters(dev)
S = "/sys/fs/vsmfs/" + os.path.basename(dev)

POISON = r'''
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, os.fstat(fd).st_size)
pg = int(sys.argv[2]) * 4096
touch = m[pg]
if sys.argv[3] == "poison":
    m.madvise(mmap.MADV_HWPOISON, pg, 4096)
print("survived")
'''


def child(path, pg, what):
    """A process that maps @path and touches page @pg (and poisons it)."""
    r = subprocess.run([sys.executable, "-c", POISON, path, str(pg), what],
                       capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def bad_frames():
    with open(S + "/bad_frames") as f:
        return [int(x) for x in f.read().split()]


def eio(fn, what):
    try:
        fn()
    except OSError as e:
        check(e.errno == errno.EIO, "%s: %s, not EIO" % (what, e))
        return
    check(False, "%s succeeded" % what)


def extents_hit(blk):
    """Files of the mount that have a page on device block @blk."""
    hit = []
    for name in os.listdir(mnt):
        p = os.path.join(mnt, name)
        if not os.path.isfile(p):
            continue
        fd = os.open(p, os.O_RDONLY)
        for off in range(0, os.fstat(fd).st_size, P):
            if phys(fd, off) == blk * P:
                hit.append((name, off))
        os.close(fd)
    return hit


def fill():
    """Write the device full, then free it again."""
    fd = os.open(os.path.join(mnt, "fill"), os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\x5a" * (1 << 20))
    except OSError as e:
        check(e.errno == errno.ENOSPC, "filling the device: %s" % e)
    try:
        while True:
            os.write(fd, b"\x5a" * P)
    except OSError as e:
        check(e.errno == errno.ENOSPC, "filling the device: %s" % e)
    os.fsync(fd)
    os.close(fd)


pages = [bytes([0x40 + i]) * P for i in range(4)]
f = os.path.join(mnt, "f")
with open(f, "wb") as fh:
    fh.write(b"".join(pages))
os.sync()
fd = os.open(f, os.O_RDWR)
bad = phys(fd, P) // P
ino = os.fstat(fd).st_ino
c.reset()

rc, out = child(f, 1, "poison")
print("the process that poisoned page 1 of f (block %d): exit %d %s" % (bad, rc, out))
check(rc == -signal.SIGBUS, "the mapping process got SIGBUS (exit %d, %s)" % (rc, out))
s = c.read()
check(s["mf_events"] == 1, "mf_events %d after one failure" % s["mf_events"])
check(bad_frames() == [bad], "bad_frames lists %s, not [%d]" % (bad_frames(), bad))
with open("/dev/kmsg", "w") as k:
    k.write("vsmfs-test: inode %d block %d\n" % (ino, bad))

eio(lambda: os.pread(fd, P, P), "read() of the poisoned page")
eio(lambda: os.pread(fd, 10, P + 100), "read() inside the poisoned page")
for i in (0, 2, 3):
    check(os.pread(fd, P, i * P) == pages[i], "page %d reads back intact" % i)
got = os.pread(fd, 4 * P, 0)
check(got == pages[0], "a read across the poisoned page stops before it (%d bytes)" % len(got))
rc, out = child(f, 1, "touch")
check(rc == -signal.SIGBUS, "a new mapping of the page faults with SIGBUS (exit %d)" % rc)
rc, out = child(f, 2, "touch")
check(rc == 0, "another page of the file maps (exit %d, %s)" % (rc, out))
eio(lambda: os.pwrite(fd, b"x" * 100, P + 100), "a write into part of the poisoned page")
eio(lambda: os.pwrite(fd, b"x" * P, P + 100), "a write over part of the page and the next")

# A whole-page overwrite: a fresh frame, the bad one retired when freed.
new = bytes([0x77]) * P
check(os.pwrite(fd, new, P) == P, "the whole-page overwrite")
check(os.pread(fd, P, P) == new, "the overwritten page reads back")
os.fsync(fd)
os.sync()
check(phys(fd, P) // P != bad, "the page has a new frame")
check(c.read()["mf_retired"] >= 1, "the old frame was retired")
os.close(fd)

# A second file keeps its poisoned page, for fsck.
g = os.path.join(mnt, "g")
with open(g, "wb") as fh:
    fh.write(bytes([0x21]) * 2 * P)
os.sync()
gfd = os.open(g, os.O_RDONLY)
gbad = phys(gfd, 0) // P
gino = os.fstat(gfd).st_ino
os.close(gfd)
rc, out = child(g, 0, "poison")
check(rc == -signal.SIGBUS, "g: the mapping process got SIGBUS (exit %d)" % rc)
check(sorted(bad_frames()) == sorted([bad, gbad]), "bad_frames %s" % bad_frames())

fill()
hit = extents_hit(bad)
check(not hit, "the retired frame was handed out again: %s" % hit)
os.unlink(os.path.join(mnt, "fill"))
os.sync()
with open("/tmp/mf.state", "w") as fh:
    fh.write("%d %d %d %d\n" % (bad, ino, gbad, gino))
print("frames %d (f, repaired) and %d (g) bad; the device written full without them" %
      (bad, gbad))
PY
read -r bad ino gbad gino < /tmp/mf.state
dmesg_has "memory failure in inode $ino at offset 4096"
umount "$MNT"

# fsck reports the file that still holds a bad frame.
if "$FSCK" -n "$DEV" > /tmp/mf.fsck 2>&1; then
	cat /tmp/mf.fsck
	die "fsck -n found nothing with a file on a bad frame"
fi
cat /tmp/mf.fsck
grep -qw "inode $gino" /tmp/mf.fsck || die "fsck -n does not name inode $gino"

# The list survives the remount: both frames bad, the free one kept from use.
mount_vsmfs
dmesg_has "2 data frames are bad"
assert_eq "$(sort -n "$S/bad_frames" | tr '\n' ' ')" \
	"$(printf '%s\n' "$bad" "$gbad" | sort -n | tr '\n' ' ')" "bad_frames after a remount"
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" "$bad" <<'PY'
import errno
import os
import sys
from vsmfs_test import check, P, phys
dev, mnt, bad = sys.argv[1], sys.argv[2], int(sys.argv[3])
g = os.path.join(mnt, "g")
fd = os.open(g, os.O_RDWR)
try:
    os.pread(fd, P, 0)
    check(False, "g's poisoned page reads after a remount")
except OSError as e:
    check(e.errno == errno.EIO, "g's poisoned page: %s" % e)
check(os.pread(fd, P, P) == bytes([0x21]) * P, "g's other page reads back")
# The repair of g, and the device written full again.
os.pwrite(fd, bytes([0x22]) * P, 0)
os.fsync(fd)
os.close(fd)
fd = os.open(os.path.join(mnt, "fill"), os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"\x5a" * (1 << 20))
except OSError as e:
    check(e.errno == errno.ENOSPC, "filling the device: %s" % e)
os.fsync(fd)
sz = os.fstat(fd).st_size
hits = [off for off in range(0, sz, P) if phys(fd, off) == bad * P]
check(not hits, "the bad frame was handed out after a remount")
os.close(fd)
os.unlink(os.path.join(mnt, "fill"))
with open(g, "rb") as fh:
    check(fh.read() == bytes([0x22]) * P + bytes([0x21]) * P, "g repaired")
PY
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck -n after the repairs"

# A bad block the device lists at mount: a file's page on it reads EIO.
mount_vsmfs
python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\x33" * 8192)' "$MNT/h"
sync
hblk=$(PYTHONPATH=tests/lib python3 -c 'import os, sys
from vsmfs_test import phys
fd = os.open(sys.argv[1], os.O_RDONLY)
print(phys(fd, 4096) // 4096)' "$MNT/h")
umount "$MNT"
echo "$((hblk * 8)) 8" > "/sys/block/$(basename "$DEV")/badblocks"
mount_vsmfs
dmesg_has "the device lists sectors $((hblk * 8))-$((hblk * 8 + 7)) as bad"
grep -qx "$hblk" "$S/bad_frames" || die "bad_frames lacks block $hblk the device listed"
python3 - "$MNT/h" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
if os.pread(fd, 4096, 0) != b"\x33" * 4096:
    sys.exit("FAIL: h's first page does not read back")
try:
    os.pread(fd, 4096, 4096)
    sys.exit("FAIL: h's page on the listed bad block reads")
except OSError as e:
    if e.errno != errno.EIO:
        sys.exit("FAIL: h's page on the listed bad block: %s" % e)
PY
umount "$MNT"
# The emulated NVDIMM cannot clear poison (a write to the sectors fails),
# so they stay bad until the VM ends: this test is the last of its group.

# A directory block: a file system error; the directory reads from its
# copy in DRAM until unmount, then EIO; the rest of the tree reads.
mount_vsmfs
mkdir "$MNT/d" "$MNT/e"
for i in 1 2 3; do echo "d$i" > "$MNT/d/f$i"; echo "e$i" > "$MNT/e/f$i"; done
dino=$(stat -c %i "$MNT/d")
umount "$MNT"
dblk=$("$VSMFS_TOP/tools/vsmfs-inspect" --map "$dino" --json "$DEV" | python3 -c '
import json, sys
def rows(o):
    if isinstance(o, dict):
        if o.get("kind") == "directory":
            yield o
        for v in o.values():
            yield from rows(v)
    elif isinstance(o, list):
        for v in o:
            yield from rows(v)
print(next(rows(json.load(sys.stdin)))["block"])')
mount_vsmfs
ls "$MNT/d" > /dev/null
modprobe hwpoison_inject
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
# The pfn of the directory block, from that of a mapped page of f.
pfn=$(PYTHONPATH=tests/lib python3 - "$MNT/f" "$dblk" <<'PY'
import ctypes, mmap, os, struct, sys
from vsmfs_test import P, phys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, P)
m[0]
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open("/proc/self/pagemap", "rb") as pm:
    pm.seek(addr // P * 8)
    ent = struct.unpack("Q", pm.read(8))[0]
if not ent >> 63:
    sys.exit("FAIL: f's page not present in the page map")
print((ent & ((1 << 55) - 1)) + int(sys.argv[2]) - phys(fd, 0) // P)
PY
)
echo "$pfn" > /sys/kernel/debug/hwpoison/corrupt-pfn
dmesg_has "memory failure in metadata block $dblk"
grep -qx "$dblk" "$S/bad_frames" || die "bad_frames lacks directory block $dblk"
assert_eq "$(cat "$MNT/e/f2")" "e2" "a file of another directory"
assert_eq "$(ls "$MNT/d" | tr '\n' ' ')" "f1 f2 f3 " "the directory from its copy in DRAM"
umount "$MNT"
mount_vsmfs
expect_fail ls "$MNT/d"
dmesg_has "metadata block $dblk is on a bad frame"
assert_eq "$(cat "$MNT/e/f3")" "e3" "a file of another directory after a remount"
assert_eq "$(cat "$MNT/f" | wc -c)" 16384 "f after a remount"
umount "$MNT"
if "$FSCK" -n "$DEV" > /tmp/mf.fsck 2>&1; then
	cat /tmp/mf.fsck
	die "fsck -n found nothing with a directory on a bad frame"
fi
cat /tmp/mf.fsck
grep -qw "inode $dino" /tmp/mf.fsck || die "fsck -n does not name directory inode $dino"
skip_final_fsck "a directory block is on a bad frame"
