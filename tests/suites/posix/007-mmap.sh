# mmap through DAX faults: coherency with read/write in both directions,
# MAP_PRIVATE copy-on-write, writes through a mapping into holes and past
# the old end after truncate up, MAP_SYNC accepted (MAP_SHARED_VALIDATE),
# the times a write fault sets (in a shared handle; durable),
# msync/fsync, truncate under a mapping (SIGBUS past the end), and the
# data surviving umount/mount. Also O_DIRECT opens (DAX: the same path).
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
python3 - "$MNT" <<'PY'
import ctypes, mmap, os, signal, sys
mnt = sys.argv[1]
P = 4096
VSP = 2 << 20

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

# Shared mapping of a file with data, a hole and a tail: read, then write.
f = os.path.join(mnt, "m1")
fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"A" * (3 * P), 0)
os.truncate(f, 3 * VSP)             # second and third superpage: holes
m = mmap.mmap(fd, 3 * VSP, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
check(m[:3 * P] == b"A" * (3 * P), "mapped read of written data")
check(m[VSP:VSP + P] == b"\0" * P, "mapped read of a hole")
m[VSP + 10:VSP + 20] = b"0123456789"          # write fault into a hole
m[2 * VSP - 5:2 * VSP + 5] = b"XXXXXYYYYY"    # across a superpage boundary
m[5:8] = b"bcd"                              # into existing data
check(os.pread(fd, 10, VSP + 10) == b"0123456789", "read() sees mapped write")
check(os.pread(fd, 10, 2 * VSP - 5) == b"XXXXXYYYYY", "read() across boundary")
check(os.pread(fd, 4, 4) == b"Abcd", "read() sees overwrite")
os.pwrite(fd, b"written", VSP + 100)
check(m[VSP + 100:VSP + 107] == b"written", "mapping sees write()")
m.flush()
os.fsync(fd)

# MAP_PRIVATE: writes stay private.
p = mmap.mmap(fd, 2 * P, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE)
p[0:4] = b"priv"
check(p[0:4] == b"priv", "private write visible in the private mapping")
check(os.pread(fd, 4, 0) == b"AAAA", "private write leaked into the file")
p.close()

# Truncate down under the mapping: access past the end raises SIGBUS.
m.close()
m = mmap.mmap(fd, 3 * VSP, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.truncate(f, VSP + P + 100)
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGBUS, signal.SIG_DFL)
    _ = m[2 * VSP]
    os._exit(0)
_, st = os.waitpid(pid, 0)
check(os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGBUS, "SIGBUS past end")
check(m[VSP + 10:VSP + 20] == b"0123456789", "data before new end kept")
# Bytes stored through the map past the end, in the last page, are not
# file data: growing the file again reads zeros there.
m[VSP + P + 100:VSP + P + 110] = b"zzzzzzzzzz"
os.truncate(f, 2 * VSP)
check(m[VSP + P + 100:VSP + 2 * P] == b"\0" * (P - 100), "zeros after truncate up (map)")
check(os.pread(fd, P - 100, VSP + P + 100) == b"\0" * (P - 100), "zeros after truncate up (read)")
m.close()
os.close(fd)

# MAP_SYNC needs MAP_SHARED_VALIDATE; it must be accepted.
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
MAP_SHARED_VALIDATE, MAP_SYNC = 0x03, 0x80000
fd = os.open(os.path.join(mnt, "sync"), os.O_RDWR | os.O_CREAT, 0o644)
os.truncate(fd, 4 * P)
addr = libc.mmap(None, 4 * P, mmap.PROT_READ | mmap.PROT_WRITE,
                 MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0)
check(addr not in (None, ctypes.c_void_p(-1).value),
      "MAP_SYNC mmap failed: errno %d" % ctypes.get_errno())
ctypes.memmove(addr + P, b"synced!", 7)
libc.munmap(ctypes.c_void_p(addr), ctypes.c_size_t(4 * P))
check(os.pread(fd, 7, P) == b"synced!", "MAP_SYNC write visible")
os.close(fd)

# O_DIRECT opens and does I/O (DAX: same path as buffered).
fd = os.open(os.path.join(mnt, "direct"), os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
buf = mmap.mmap(-1, P)
buf.write(b"D" * P)
check(os.pwrite(fd, buf, 0) == P, "O_DIRECT write")
check(os.pread(fd, P, 0) == b"D" * P, "O_DIRECT read")
os.close(fd)

# Two files growing in turns: a run that cannot grow in place moves to new
# logical pages by swapping frames, so the data keeps its physical pages
# (FIEMAP) and a mapping made before the move stays coherent.
import fcntl, struct
def phys0(fd):
    # FS_IOC_FIEMAP for the first extent: fe_physical of extent 0.
    hdr = struct.pack("=QQIIII", 0, 1 << 62, 0, 0, 1, 0)
    buf = bytearray(hdr + b"\0" * 56)
    fcntl.ioctl(fd, 0xC020660B, buf)
    mapped = struct.unpack_from("=I", buf, 20)[0]
    check(mapped >= 1, "fiemap found no extent")
    return struct.unpack_from("=Q", buf, 32 + 8)[0]
fa = os.open(os.path.join(mnt, "grow-a"), os.O_RDWR | os.O_CREAT, 0o644)
fb = os.open(os.path.join(mnt, "grow-b"), os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fa, b"a" * P, 0)
before = phys0(fa)
ma = None
for i in range(1, 48):
    os.pwrite(fb, bytes([i]) * P, (i - 1) * P)
    os.pwrite(fa, bytes([i]) * P, i * P)
    if i == 1:
        ma = mmap.mmap(fa, 2 * P, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        ma[0:3] = b"map"
check(phys0(fa) == before, "first page changed its physical page while growing")
check(os.pread(fa, 3, 0) == b"map", "write through a mapping made before a move")
ma[3:6] = b"ped"
check(os.pread(fa, 6, 0) == b"mapped", "mapping still coherent after the moves")
for i in range(1, 48):
    check(os.pread(fa, P, i * P) == bytes([i]) * P, "grow-a page %d" % i)
    check(os.pread(fb, P, (i - 1) * P) == bytes([i]) * P, "grow-b page %d" % i)
ma.close()
os.close(fa)
os.close(fb)
print("mmap checks passed")
PY
umount "$MNT"
mount_vsmfs
python3 - "$MNT" <<'PY'
import os, sys
mnt = sys.argv[1]
VSP = 2 << 20
with open(os.path.join(mnt, "m1"), "rb") as f:
    d = f.read()
assert len(d) == 2 * VSP, len(d)
assert d[VSP + 10:VSP + 20] == b"0123456789"
assert d[VSP + 100:VSP + 107] == b"written"
assert d[VSP + 4096 + 100:] == b"\0" * (VSP - 4096 - 100)
with open(os.path.join(mnt, "sync"), "rb") as f:
    assert f.read()[4096:4103] == b"synced!"
print("mapped data persisted")
PY

# A write fault on a shared mapping sets the file's modification and
# change times in a shared handle (under the inode's lock taken shared),
# not by writeback under the transaction mutex; they survive a remount.
# noatime: the access time mmap sets is stored in a shared handle too.
umount "$MNT"
mount_vsmfs -o noatime
printf 'x%.0s' $(seq 8192) > "$MNT/times"
sync
touch -d '2001-01-01 00:00:00' "$MNT/times"
old=$(stat -c %Y "$MNT/times")
shared0=$(counter trans_shared_handles)
python3 - "$MNT/times" <<'PY'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
with mmap.mmap(fd, 8192) as mm:
    mm[4096] = ord("y")
os.close(fd)
PY
new=$(stat -c '%Y %Z' "$MNT/times")
[ "${new%% *}" -gt "$old" ] || die "the write fault left the modification time at $new"
[ "${new%% *}" = "${new##* }" ] || die "modification and change times differ: $new"
[ "$(counter trans_shared_handles)" -gt "$shared0" ] ||
	die "the write fault set the times in no shared handle"
umount "$MNT"
mount_vsmfs
assert_eq "$(stat -c '%Y %Z' "$MNT/times")" "$new" "times of the mapped write after a remount"
assert_eq "$(head -c 4097 "$MNT/times" | tail -c 1)" "y" "the byte written through the mapping"
