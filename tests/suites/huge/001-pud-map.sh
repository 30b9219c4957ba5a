# 1 GiB mappings (huge=1g): a fallocated GiB of a file gets frames that
# start 1 GiB aligned and run on contiguously, and a process that maps it
# and touches every 4 KiB page takes one fault (the core code asks for a
# PUD, vsmfs maps the GiB with one); huge=2m maps it with 512 PMDs. Stores
# through the PUD are durable after msync (the GiB written back), a write()
# into the mapped GiB is seen through the mapping, a truncation unmaps it
# (SIGBUS past the end, the rest intact), a private mapping copies on
# write without changing the file, a MAP_SYNC write fault commits the
# inode's changes and maps the GiB; a memory failure of a page of a GiB
# mapped whole removes the PUD, and the page alone faults with SIGBUS.
. tests/lib/common.sh

S=/sys/fs/vsmfs/$(basename "$DEV")
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o huge=1g
grep -q " $MNT vsmfs .*huge=1g" /proc/mounts || die "huge=1g not in /proc/mounts"
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import mmap
import os
import resource
import signal
import subprocess
import sys
from vsmfs_test import check, Counters, P, phys
dev, mnt = sys.argv[1:3]
c = Counters(dev)
G = 1 << 30
f = os.path.join(mnt, "big")
fd = os.open(f, os.O_RDWR | os.O_CREAT)
os.posix_fallocate(fd, 0, G)
first = phys(fd, 0)
check(phys(fd, G - P) == first + G - P, "the GiB's frames are one run")
print("the fallocated GiB starts at physical offset %#x of the device" % first)


def minflt():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def touch(m, write, val=0):
    if write:
        for i in range(0, G, P):
            m[i] = val
    else:
        s = 0
        for i in range(0, G, P):
            s += m[i]
        return s


m = mmap.mmap(fd, G)
c.reset()
f0 = minflt()
touch(m, True, 0x5a)
faults = minflt() - f0
s = c.read()
print("huge=1g: %d faults to write every page of 1 GiB; fault_pud %d (fallbacks %d), "
      "fault_pmd %d, fault_pte %d" % (faults, s["fault_pud"], s["fault_pud_fallback"],
                                      s["fault_pmd"], s["fault_pte"]))
check(s["fault_pud"] >= 1, "no 1 GiB fault")
check(faults <= 4, "%d faults for a GiB mapped whole" % faults)
check(s["fault_pmd"] == 0 and s["fault_pte"] == 0, "smaller faults beside the PUD")

# msync writes the GiB back; the next store faults once and maps it again.
m.flush()
check(c.read()["pud_writebacks"] >= 1, "msync wrote no GiB back")
check(os.pread(fd, P, 777 * P) == b"\x5a" + b"\0" * (P - 1), "a page read back after msync")
f0 = minflt()
m[5 * P] = 0x33
check(minflt() - f0 <= 2, "a store after msync")
# MAP_SYNC: a write fault maps the GiB once the inode's changes are durable.
c.reset()
sm = mmap.mmap(fd, G, flags=0x03 | 0x80000)   # MAP_SHARED_VALIDATE | MAP_SYNC
sm[7 * P] = 0x44
s = c.read()
check(s["fault_pud"] == 1 and s["fault_pmd"] == 0 and s["fault_pte"] == 0,
      "MAP_SYNC: fault_pud %d, fault_pmd %d, fault_pte %d" %
      (s["fault_pud"], s["fault_pmd"], s["fault_pte"]))
check(s["trans_commits"] >= 1, "MAP_SYNC: nothing committed before the mapping")
sm[7 * P + 1] = 0x45
sm.flush()
sm.close()
check(os.pread(fd, 2, 7 * P) == b"\x44\x45", "MAP_SYNC stores read back")

# A private mapping: read through a PUD, a store copies its page only.
pm = mmap.mmap(fd, G, flags=mmap.MAP_PRIVATE)
c.reset()
check(pm[100 * P] == 0x5a, "a private mapping reads the file")
check(c.read()["fault_pud"] == 1, "the private mapping is read through a PUD")
pm[100 * P] = 0x11
check(pm[100 * P] == 0x11, "a private store")
pm.close()
check(os.pread(fd, 1, 100 * P) == b"\x5a", "the private store left the file alone")

# A truncation while the GiB is mapped: the mapping past the end is gone.
CHILD = r'''
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 1 << 30)
m[0] = 1
sys.stdout.write("mapped\n"); sys.stdout.flush()
sys.stdin.readline()
v = m[(1 << 29) - 4096]
sys.stdout.write("below %d\n" % v); sys.stdout.flush()
m[(1 << 29) + 4096]
print("past the end read")
'''
c.reset()
p = subprocess.Popen([sys.executable, "-c", CHILD, f], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
check(p.stdout.readline() == "mapped\n", "the child mapped the file")
check(c.read()["fault_pud"] == 1, "the child mapped the GiB with a PUD")
os.ftruncate(fd, G // 2)
p.stdin.write("go\n")
p.stdin.flush()
out = p.stdout.read()
rc = p.wait()
check(out == "below 90\n" and rc == -signal.SIGBUS,
      "after the truncation: %r, exit %d" % (out, rc))

# A write() into the mapped GiB (copy-on-write: its GiB is mapped with
# 2 MiB pages from then on): copy-on-write unmaps the GiB first.
os.pwrite(fd, b"W" * P, 12345 * P)
check(m[12345 * P] == ord("W"), "the mapping sees the write()")
check(m[12346 * P] == 0x5a, "the rest of the GiB through the mapping")
m.flush()
m.close()
os.close(fd)
PY
umount "$MNT"

# A memory failure in a GiB mapped with one PUD: the PUD goes, a touch of
# the page faults with SIGBUS, the other pages map again.
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o huge=1g
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import os
import signal
import subprocess
import sys
from vsmfs_test import check, Counters, P
dev, mnt = sys.argv[1:3]
c = Counters(dev)
G = 1 << 30
f = os.path.join(mnt, "big")
fd = os.open(f, os.O_RDWR | os.O_CREAT)
os.posix_fallocate(fd, 0, G)
os.close(fd)
CHILD = r'''
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 1 << 30)
for i in range(0, 1 << 30, 1 << 21):
    m[i] = 7
sys.stdout.write("mapped\n"); sys.stdout.flush()
m.madvise(mmap.MADV_HWPOISON, 4096 * 1000, 4096)
sys.stdout.write("poisoned %d\n" % m[4096 * 999]); sys.stdout.flush()
m[4096 * 1000]
print("read the poisoned page")
'''
c.reset()
p = subprocess.Popen([sys.executable, "-c", CHILD, f], stdout=subprocess.PIPE, text=True)
out = p.stdout.read()
rc = p.wait()
s = c.read()
print("poison in a PUD-mapped GiB: %r, exit %d, fault_pud %d, fault_pmd %d, fault_pte %d" %
      (out, rc, s["fault_pud"], s["fault_pmd"], s["fault_pte"]))
check(out.startswith("mapped\npoisoned 0\n") and rc == -signal.SIGBUS,
      "the touch of the poisoned page: %r, exit %d" % (out, rc))
check(s["fault_pud"] == 1, "the GiB was mapped with a PUD first")
check(s["fault_pte"] >= 1, "the page next to the poisoned one mapped again by itself")
PY
umount "$MNT"

# huge=2m: the same GiB by 2 MiB faults.
mkfs_vsmfs -f "$DEV"
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$DEV" "$MNT" <<'PY'
import mmap
import os
import resource
import sys
from vsmfs_test import check, Counters, P
dev, mnt = sys.argv[1:3]
c = Counters(dev)
G = 1 << 30
fd = os.open(os.path.join(mnt, "big2"), os.O_RDWR | os.O_CREAT)
os.posix_fallocate(fd, 0, G)
m = mmap.mmap(fd, G)
c.reset()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(0, G, P):
    m[i] = 1
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
s = c.read()
print("huge=2m: %d faults; fault_pud %d, fault_pmd %d" % (faults, s["fault_pud"], s["fault_pmd"]))
check(s["fault_pud"] == 0, "a 1 GiB fault with huge=2m")
check(faults >= 512, "%d faults for 512 superpages" % faults)
m.close()
os.close(fd)
PY
umount "$MNT"
