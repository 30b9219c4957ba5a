# Limits and their errors: EFBIG at the largest file offset, ENAMETOOLONG,
# EMLINK for hard links and subdirectories, ENOTEMPTY, EROFS for every
# modifying call on a read-only remount, ENOSPC for inodes and for data,
# with the space and inodes reusable after deletion. A limit the module
# does not enforce is a gap: every other check still runs, and the test
# then fails with the list of gaps.
. tests/lib/common.sh

export PYTHONPATH="$VSMFS_TOP/tests/lib"
export VSMFS_GAPS=/tmp/limits-gaps
rm -f "$VSMFS_GAPS"
free_counts() { stat -f -c '%f %d' "$MNT"; }

mkfs_vsmfs -f -N 70000 "$DEV"
mount_vsmfs
touch "$MNT/first" && rm "$MNT/first"	# the root's first block stays
free0=$(free_counts)

echo "== EFBIG"
# The file index holds 8 + 512 + 512 * 512 pieces of 2 MiB: the documented
# largest file size. Writes and truncates past it fail with EFBIG and
# allocate nothing. A module whose s_maxbytes is larger than that limit
# (super.c) is listed as a gap: its truncate accepts any size, and a write
# past the limit is refused only by the index.
python3 - "$MNT" <<'PY'
import os, sys
from errno_check import expect, ok, fail, gap
mnt = sys.argv[1]
llong_max = (1 << 63) - 1
limit = (8 + 512 + 512 * 512) << 21
def counts():
    sv = os.statvfs(mnt)
    return sv.f_bfree, sv.f_ffree
fd = os.open(f"{mnt}/big", os.O_RDWR | os.O_CREAT, 0o644)
expect("EINVAL", os.ftruncate, fd, -1)
expect("EINVAL", os.pwrite, fd, b"x", llong_max)	# offset + length overflows
ok(os.pwrite, fd, b"last", limit - 4)
assert os.fstat(fd).st_size == limit, "size after a write ending at the largest size"
assert os.pread(fd, 8, limit - 8) == b"\0\0\0\0last", "data at the end of the largest file"
before = counts()
n = ok(os.pwrite, fd, b"ab", limit - 1)
if n != 1:
    fail(f"a write across the largest size wrote {n} bytes, expected 1")
expect("EFBIG", os.pwrite, fd, b"x", limit)
expect("EFBIG", os.pwrite, fd, b"x" * 5000, limit + (5 << 30))
expect("EFBIG", os.pwrite, fd, b"x", llong_max - 1)
assert os.fstat(fd).st_size == limit, "size after writes past the largest size"
after = counts()
try:
    os.ftruncate(fd, limit + 1)
    past = True
except OSError as e:
    if e.errno != 27:
        raise
    past = False
    print("  (expected) ftruncate past the largest size: EFBIG")
if past:
    gap(f"s_maxbytes is larger than the documented largest file size {limit}: "
        f"ftruncate to {limit + 1} succeeds (size {os.fstat(fd).st_size})")
    if after != before:
        gap(f"writes past the largest size, refused by the file index only, "
            f"leave {before[0] - after[0]} blocks allocated")
    os.ftruncate(fd, limit)
elif after != before:
    fail(f"free blocks/inodes {after} after writes past the largest size, {before} before")
os.close(fd)
os.unlink(f"{mnt}/big")
PY
if [ -s "$VSMFS_GAPS" ]; then
	free0=$(free_counts)	# what the gap left allocated stays so
else
	assert_eq "$(free_counts)" "$free0" "free blocks and inodes after EFBIG"
fi

echo "== ENAMETOOLONG"
python3 - "$MNT" <<'PY'
import os, sys
from errno_check import expect, ok
mnt = sys.argv[1]
os.chdir(mnt)
n255, n256 = "a" * 255, "b" * 256
ok(os.close, os.open(n255, os.O_CREAT | os.O_WRONLY, 0o644))
ok(os.stat, n255)
expect("ENAMETOOLONG", os.open, n256, os.O_CREAT | os.O_WRONLY, 0o644)
expect("ENAMETOOLONG", os.stat, n256)
expect("ENAMETOOLONG", os.mkdir, n256)
expect("ENAMETOOLONG", os.mkfifo, n256)
expect("ENAMETOOLONG", os.symlink, "target", n256)
expect("ENAMETOOLONG", os.link, n255, n256)
expect("ENAMETOOLONG", os.rename, n255, n256)
ok(os.mkdir, "d")
expect("ENAMETOOLONG", os.open, f"d/{n256}/x", os.O_CREAT | os.O_WRONLY, 0o644)
expect("ENAMETOOLONG", os.mkdir, f"d/{n256}")
expect("ENAMETOOLONG", os.stat, f"d/{n256}/x")
# A path longer than PATH_MAX, and symlink targets around the block size.
expect("ENAMETOOLONG", os.stat, "d/" + "../d/" * 900)
ok(os.symlink, "t" * 4095, "long")
assert os.readlink("long") == "t" * 4095, "4095-byte symlink target"
expect("ENAMETOOLONG", os.symlink, "t" * 4096, "longer")
for p in (n255, "long"):
    os.unlink(p)
os.rmdir("d")
assert os.listdir(".") == [], os.listdir(".")
PY
assert_eq "$(free_counts)" "$free0" "free blocks and inodes after ENAMETOOLONG"

echo "== EMLINK"
# The link limit is VSMFS_LINK_MAX in the on-media format header, for
# link(), mkdir() and rename() of a directory into a new parent.
start=$(date +%s)
python3 - "$MNT" <<'PY'
import os, sys
from errno_check import expect, ok, fail, gap
mnt = sys.argv[1]
os.chdir(mnt)
import re
with open(os.path.join(os.environ["VSMFS_TOP"], "fs/vsmfs/vsmfs_format.h")) as h:
    LINK_MAX = int(re.search(r"#define VSMFS_LINK_MAX\s+(\d+)", h.read()).group(1))
ok(os.close, os.open("t", os.O_CREAT | os.O_WRONLY, 0o644))
for d in range(128):
    os.mkdir(f"l{d}")
for i in range(LINK_MAX - 1):
    os.link("t", f"l{i % 128}/{i}")
if os.stat("t").st_nlink != LINK_MAX:
    fail(f"st_nlink {os.stat('t').st_nlink}, expected {LINK_MAX}")
expect("EMLINK", os.link, "t", "one-more")
os.unlink("l0/0")
ok(os.link, "t", "one-more")
expect("EMLINK", os.link, "t", "l0/0")
os.mkdir("sub")
for i in range(LINK_MAX - 2):
    os.mkdir(f"sub/{i}")
if os.stat("sub").st_nlink != LINK_MAX:
    fail(f"st_nlink of the parent {os.stat('sub').st_nlink}, expected {LINK_MAX}")
expect("EMLINK", os.mkdir, "sub/one-more")
try:
    os.rename("l0", "sub/l0")
    gap(f"rename of a directory into a parent with {LINK_MAX} links succeeds "
        f"(st_nlink {os.stat('sub').st_nlink}): no s_max_links and no check in rename")
    os.rename("sub/l0", "l0")
    assert os.stat("sub").st_nlink == LINK_MAX
except OSError as e:
    if e.errno != 31:
        raise
    print("  (expected) rename of a directory into a full parent: EMLINK")
os.rmdir("sub/0")
ok(os.mkdir, "sub/one-more")
PY
echo "EMLINK part took $(( $(date +%s) - start ))s"
umount "$MNT"
mkfs_vsmfs -f "$DEV"
mount_vsmfs

echo "== ENOTEMPTY"
python3 - "$MNT" <<'PY'
import os, sys
from errno_check import expect, ok
mnt = sys.argv[1]
os.chdir(mnt)
os.makedirs("a/b")
os.mkdir("c")
os.mkdir("e")
open("e/f", "w").close()
expect("ENOTEMPTY", os.rmdir, "a")
expect("ENOTEMPTY", os.rename, "c", "a")
expect("ENOTEMPTY", os.rename, "c", "e")
os.unlink("e/f")
ok(os.rename, "c", "e")
os.rmdir("a/b")
ok(os.rmdir, "a")
os.rmdir("e")
PY

echo "== EROFS"
mkdir "$MNT/dir" "$MNT/empty"
echo content > "$MNT/file"
ln -s file "$MNT/sym"
exec 3>>"$MNT/file"
expect_fail mount -o remount,ro "$MNT"
grep -qi "busy" /tmp/expect_fail.out || die "remount ro with a file open for writing"
exec 3>&-
mount -o remount,ro "$MNT"
python3 - "$MNT" <<'PY'
import os, sys
from errno_check import expect, ok
mnt = sys.argv[1]
os.chdir(mnt)
expect("EROFS", os.open, "new", os.O_CREAT | os.O_WRONLY, 0o644)
expect("EROFS", os.open, "file", os.O_WRONLY)
expect("EROFS", os.open, "file", os.O_RDWR)
expect("EROFS", os.open, "file", os.O_RDONLY | os.O_TRUNC)
expect("EROFS", os.truncate, "file", 0)
expect("EROFS", os.mkdir, "newdir")
expect("EROFS", os.mkfifo, "fifo")
expect("EROFS", os.mknod, "dev", 0o20644, os.makedev(1, 3))
expect("EROFS", os.symlink, "file", "newsym")
expect("EROFS", os.link, "file", "newlink")
expect("EROFS", os.unlink, "file")
expect("EROFS", os.unlink, "sym")
expect("EROFS", os.rmdir, "empty")
expect("EROFS", os.rename, "file", "renamed")
expect("EROFS", os.rename, "dir", "empty")
expect("EROFS", os.chmod, "file", 0o600)
expect("EROFS", os.chown, "file", 1, 1)
expect("EROFS", os.utime, "file", (1, 1))
expect("EROFS", os.setxattr, "file", "user.x", b"1")
fd = ok(os.open, "file", os.O_RDONLY)
assert os.read(fd, 100) == b"content\n", "content on the read-only mount"
expect("EBADF", os.write, fd, b"x")
os.close(fd)
PY
mount -o remount,rw "$MNT"
touch "$MNT/new"
assert_eq "$(cat "$MNT/file")" content "file after remount rw"
umount "$MNT"

echo "== ENOSPC for inodes"
mkfs_vsmfs -f -N 64 "$DEV"
mount_vsmfs
python3 - "$MNT" <<'PY'
import os, sys
from errno_check import expect, ok, fail
mnt = sys.argv[1]
os.chdir(mnt)
os.mkdir("d")
ffree = os.statvfs(".").f_ffree
def fill(tag):
    n = 0
    while True:
        try:
            os.close(os.open(f"d/{tag}{n}", os.O_CREAT | os.O_WRONLY, 0o644))
        except OSError as e:
            if e.errno != 28:
                raise
            return n
        n += 1
n = fill("f")
print(f"  {n} files created")
if n != ffree:
    fail(f"{n} files fit, statfs said {ffree} inodes were free")
if os.statvfs(".").f_ffree != 0:
    fail(f"f_ffree {os.statvfs('.').f_ffree} when full")
expect("ENOSPC", os.mkdir, "d2")
expect("ENOSPC", os.symlink, "x" * 200, "s2")
expect("ENOSPC", os.mkfifo, "p2")
os.unlink("d/f7")
ok(os.mkdir, "d2")
expect("ENOSPC", os.open, "d/x", os.O_CREAT | os.O_WRONLY, 0o644)
os.rmdir("d2")
for i in range(n):
    if i != 7:
        os.unlink(f"d/f{i}")
if os.statvfs(".").f_ffree != ffree:
    fail(f"f_ffree {os.statvfs('.').f_ffree} after deleting, expected {ffree}")
m = fill("g")
if m != n:
    fail(f"{m} files fit after deleting, {n} before")
PY
umount "$MNT"
mount_vsmfs
assert_eq "$(stat -f -c %d "$MNT")" 0 "free inodes after remount"
rm -rf "${MNT:?}/d"
umount "$MNT"

echo "== ENOSPC for data"
mkfs_vsmfs -f "$DEV"
mount_vsmfs
touch "$MNT/first" && rm "$MNT/first"
python3 - "$MNT" <<'PY'
import os, sys
from errno_check import expect, ok, fail
mnt = sys.argv[1]
os.chdir(mnt)
chunk = os.urandom(1 << 20)
bfree0 = os.statvfs(".").f_bfree
def fill(name):
    fd = os.open(name, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
    while True:
        try:
            n = os.write(fd, chunk)
        except OSError as e:
            if e.errno != 28:
                raise
            break
        if n < len(chunk):
            # The next write reports the error.
            expect("ENOSPC", os.write, fd, chunk)
            break
    size = os.fstat(fd).st_size
    os.close(fd)
    return size
a = fill("a")
st = os.statvfs(".")
print(f"  full after {a >> 20} MiB, {st.f_bfree} of {st.f_blocks} blocks free")
if st.f_bfree * 100 >= st.f_blocks:
    fail("more than 1% free when full")
with open("a", "rb") as f:
    f.seek(a - len(chunk) // 2)
    assert f.read(1) != b"", "end of the full file"
# Space freed by truncating is reusable.
os.truncate("a", a // 2)
b = fill("b")
if abs(b - (a - a // 2)) > (4 << 20):
    fail(f"{b} bytes fit after truncating {a} to {a // 2}")
os.unlink("a")
os.unlink("b")
if os.statvfs(".").f_bfree != bfree0:
    fail(f"f_bfree {os.statvfs('.').f_bfree} after deleting, expected {bfree0}")
c = fill("c")
if c != a:
    fail(f"{c} bytes fit after deleting, {a} the first time")
os.unlink("c")
PY
umount "$MNT"
if [ -s "$VSMFS_GAPS" ]; then
	echo "limits the module does not enforce:"
	sed 's/^/  /' "$VSMFS_GAPS"
	die "$(wc -l < "$VSMFS_GAPS") limit(s) not enforced by the module"
fi
