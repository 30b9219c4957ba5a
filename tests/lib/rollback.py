#!/usr/bin/env python3
"""Failed operations change nothing.

For each operation, memory allocation fails at each of its allocations in
turn (a fault point's "skip" knob lets N pass, then "interval" 1 fails the
rest): every call that fails must leave the tree exactly as it was
(names, types, modes, link counts, sizes, contents, times but atime,
attribute flags, extended attributes and ACLs, free blocks and inodes).

A failed call that would have made a name (create, mkdir, mknod,
symlink, O_TMPFILE then linkat) must also leave that name absent, not
just unlisted.

usage: rollback.py MNT [--strict] [POINT...] [OPERATION...]
Prints one line per operation, with per point the calls that failed and
those whose failure was absorbed (the call succeeded all the same, e.g. a
create whose shared handle gave up and was done again under the mutex);
exits 1 if any failed call changed the tree. With --strict, a failure the
call absorbed is a failure of the test too: for points whose failure
every operation named must report.
"""
import ctypes
import errno
import fcntl
import hashlib
import os
import shutil
import stat
import sys

K = "/sys/kernel/debug/vsmfs"
LIBC = ctypes.CDLL(None, use_errno=True)
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE = 1, 2, 0x10
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
FS_NODUMP_FL, FS_NOATIME_FL = 0x40, 0x80
MAX_STEPS = 24


def renameat2(a, b, flags):
    if LIBC.syscall(316, AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def fallocate(path, mode, off, length):
    fd = os.open(path, os.O_RDWR)
    try:
        if LIBC.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(length)):
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    finally:
        os.close(fd)


def getflags(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return int.from_bytes(fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8))[:4], "little")
    finally:
        os.close(fd)


def setflags(path, flags):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, (getflags(path) | flags).to_bytes(8, "little"))
    finally:
        os.close(fd)


def acl_blob(uid):
    """An access ACL in the kernel's xattr form: version 2, then entries."""
    ents = [(1, 6, 0xFFFFFFFF), (2, 4, uid), (4, 4, 0xFFFFFFFF),
            (0x10, 6, 0xFFFFFFFF), (0x20, 4, 0xFFFFFFFF)]
    b = (2).to_bytes(4, "little")
    for tag, perm, ident in ents:
        b += tag.to_bytes(2, "little") + perm.to_bytes(2, "little") + \
            ident.to_bytes(4, "little")
    return b


# Names of 238 bytes: entries of 256 (a 16-byte header, 8-byte aligned).
FULL_NAME = "f" * 236


def write_file(path, data, append=False):
    """One write(2): a short count is a success, as POSIX has it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC),
                 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def fixture(base):
    """The tree every operation starts from."""
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base + "/d1/sub")
    os.makedirs(base + "/d2/empty")
    os.makedirs(base + "/d2/victim")
    write_file(base + "/d1/f", os.urandom(10000))
    write_file(base + "/d1/g", os.urandom(3000))
    write_file(base + "/d2/h", os.urandom(5000))
    # Preallocated, its first page written.
    write_file(base + "/d2/pre", os.urandom(4096))
    fallocate(base + "/d2/pre", 0, 0, 64 << 10)
    write_file(base + "/big", os.urandom(3 << 19))
    os.link(base + "/d1/g", base + "/d2/g2")
    os.setxattr(base + "/d1/f", "user.keep", b"v" * 100)
    # Two attributes: a change of either keeps the block.
    os.setxattr(base + "/big", "user.a", b"a" * 200)
    os.setxattr(base + "/big", "user.b", b"b" * 60)
    os.symlink("d1/f", base + "/short")
    # Enough entries that the directories span blocks.
    for i in range(24):
        write_file(f"{base}/d1/n{i:02d}-{'x' * 60}", b"")
    # A directory whose block is full (16 entries of 256 bytes): the next
    # entry takes a new block.
    os.makedirs(base + "/d3")
    for i in range(16):
        write_file(f"{base}/d3/{FULL_NAME}{i:02d}", b"")


def snapshot(base, free=True):
    """The tree under @base; with @free, the free blocks and inodes too."""
    tree = {}
    for root, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted(dirs + files) + ([] if root != base else ["."]):
            p = os.path.normpath(os.path.join(root, name))
            try:
                st = os.lstat(p)
            except FileNotFoundError:
                tree[os.path.relpath(p, base)] = ("listed but not found",)
                continue
            e = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_nlink,
                 st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_blocks)
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    e += (hashlib.sha1(f.read()).hexdigest(),)
            if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                e += (getflags(p),)
            elif stat.S_ISLNK(st.st_mode):
                e += (os.readlink(p),)
            if not stat.S_ISLNK(st.st_mode):
                names = sorted(os.listxattr(p))
                for x in ("system.posix_acl_access", "system.posix_acl_default"):
                    try:
                        os.getxattr(p, x)
                        names.append(x)
                    except OSError:
                        pass
                e += tuple((x, os.getxattr(p, x)) for x in sorted(set(names)))
            tree[os.path.relpath(p, base)] = e
    vfs = os.statvfs(base)
    if free:
        tree["<free>"] = (vfs.f_bfree, vfs.f_ffree)
    return tree


def tmpfile_link(b):
    """An unnamed file (O_TMPFILE), then given a name (linkat)."""
    fd = os.open(b + "/d1", os.O_TMPFILE | os.O_WRONLY, 0o644)
    try:
        if LIBC.linkat(fd, b"", AT_FDCWD, (b + "/d1/linked").encode(), AT_EMPTY_PATH):
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    finally:
        os.close(fd)


# Run only when named: a failure after the open leaves the unnamed file to
# an eviction that the fault point may make fail too (an orphan, freed at
# unmount, which the free counts would show).
NAMED_ONLY = {"tmpfile-link"}

# Names a failed call must leave absent.
MADE = {"create": "d1/new", "create-grow": f"d3/{FULL_NAME}16",
        "link-grow": f"d3/{FULL_NAME}16", "rename-grow": f"d3/{FULL_NAME}16", "mkdir": "d1/newdir",
        "mknod": "d1/fifo",
        "symlink": "d1/longlink", "tmpfile-link": "d1/linked"}


def ops(b):
    """(name, action) pairs; each action runs on a fresh fixture."""
    return [
        ("create", lambda: write_file(b + "/d1/new", b"")),
        ("create-grow", lambda: write_file(f"{b}/d3/{FULL_NAME}16", b"")),
        ("tmpfile-link", lambda: tmpfile_link(b)),
        ("mkdir", lambda: os.mkdir(b + "/d1/newdir")),
        ("mknod", lambda: os.mkfifo(b + "/d1/fifo")),
        ("symlink", lambda: os.symlink("t" * 200, b + "/d1/longlink")),
        ("link", lambda: os.link(b + "/d1/f", b + "/d2/flink")),
        ("link-grow", lambda: os.link(b + "/d1/f", f"{b}/d3/{FULL_NAME}16")),
        ("rename-grow", lambda: os.rename(b + "/d1/g", f"{b}/d3/{FULL_NAME}16")),
        ("unlink", lambda: os.unlink(b + "/d2/g2")),
        ("rmdir", lambda: os.rmdir(b + "/d2/empty")),
        ("rename", lambda: os.rename(b + "/d1/f", b + "/d2/moved")),
        ("rename-dir", lambda: os.rename(b + "/d1/sub", b + "/d2/sub")),
        ("rename-noreplace", lambda: renameat2(b + "/d1/g", b + "/d2/new", RENAME_NOREPLACE)),
        ("rename-exchange", lambda: renameat2(b + "/d1/f", b + "/d2/empty", RENAME_EXCHANGE)),
        ("rename-over-file", lambda: os.rename(b + "/d1/f", b + "/d2/h")),
        ("rename-over-dir", lambda: os.rename(b + "/d1/sub", b + "/d2/victim")),
        ("write-append", lambda: write_file(b + "/d1/f", os.urandom(9000), True)),
        ("write-over", lambda: write_overwrite(b + "/big", 4096 * 3 + 100, 70000)),
        ("write-hole", lambda: write_overwrite(b + "/d2/h", 5 << 20, 5000)),
        ("truncate-grow", lambda: os.truncate(b + "/d1/f", 3 << 20)),
        ("truncate-shrink", lambda: os.truncate(b + "/big", 5000)),
        ("truncate-unwritten", lambda: os.truncate(b + "/d2/pre", 8192)),
        ("fallocate", lambda: fallocate(b + "/d1/f", 0, 0, 1 << 20)),
        ("fallocate-keep", lambda: fallocate(b + "/d1/f", FALLOC_FL_KEEP_SIZE, 0, 1 << 20)),
        # Pages added in a shared handle (after a small file's run, in a
        # large file's tail, a whole superpage), marked unwritten as its
        # last change; one piece each (a fallocate() of several keeps the
        # pieces done before one that fails, as other file systems do).
        ("fallocate-small", lambda: fallocate(b + "/d1/f", 0, 0, 64 << 10)),
        ("fallocate-tail", lambda: fallocate(b + "/big", 0, 0, 2 << 20)),
        ("fallocate-superpage", lambda: fallocate(b + "/big", 0, 2 << 20, 2 << 20)),
        ("fallocate-punch", lambda: fallocate(b + "/big", FALLOC_FL_PUNCH_HOLE |
                                              FALLOC_FL_KEEP_SIZE, 8192, 1 << 20)),
        ("fallocate-zero", lambda: fallocate(b + "/big", FALLOC_FL_ZERO_RANGE, 100, 50000)),
        ("setxattr", lambda: os.setxattr(b + "/d1/g", "user.new", b"w" * 300)),
        ("removexattr", lambda: os.removexattr(b + "/d1/f", "user.keep")),
        ("set-acl", lambda: os.setxattr(b + "/d2/h", "system.posix_acl_access",
                                        acl_blob(1000))),
        ("chmod", lambda: os.chmod(b + "/d1/g", 0o600)),
        # Changes of an xattr block that exists and stays (shared handles).
        ("setxattr-more", lambda: os.setxattr(b + "/d1/f", "user.new", b"w" * 300)),
        ("replacexattr", lambda: os.setxattr(b + "/big", "user.a", b"r" * 500)),
        ("removexattr-more", lambda: os.removexattr(b + "/big", "user.a")),
        ("set-acl-more", lambda: os.setxattr(b + "/big", "system.posix_acl_access",
                                             acl_blob(1000))),
        ("chattr", lambda: setflags(b + "/d1/g", FS_NODUMP_FL | FS_NOATIME_FL)),
    ]


def write_overwrite(path, off, n):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, os.urandom(n), off)
    finally:
        os.close(fd)


def knob(point, name, val=None):
    path = f"{K}/{point}/{name}"
    if val is None:
        with open(path) as f:
            return int(f.read())
    with open(path, "w") as f:
        f.write(f"{val}\n")
    return None


def diff(a, b):
    out = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            out.append(f"{k}: {a.get(k)!r} -> {b.get(k)!r}")
    return out


def absent(base, name):
    """Whether the name a failed call @name would have made is absent."""
    if name not in MADE:
        return True
    try:
        os.lstat(os.path.join(base, MADE[name]))
    except FileNotFoundError:
        return True
    return False


def run(mnt, points, names, strict=False):
    base = mnt + "/t"
    bad = 0
    for name, act in ops(base):
        if (names and name not in names) or (not names and name in NAMED_ONLY):
            continue
        line = []
        for point in points:
            fixture(base)
            failed = absorbed = 0
            before = None
            for n in range(MAX_STEPS):
                before = before or snapshot(base)
                inj = knob(point, "injected")
                knob(point, "skip", n)
                knob(point, "interval", 1)
                err = None
                try:
                    act()
                except OSError as e:
                    err = e.errno
                finally:
                    knob(point, "interval", 0)
                    knob(point, "skip", 0)
                hit = knob(point, "injected") > inj
                if err is None:
                    if not hit:
                        break
                    if strict:
                        print(f"FAIL {name}: {point} after {n}: the call succeeded "
                              "though a step of it failed")
                        bad += 1
                    absorbed += 1
                    fixture(base)	# the failure was absorbed: start again
                    before = None
                    continue
                failed += 1
                if err != errno.ENOMEM:
                    print(f"FAIL {name}: {point} after {n}: {errno.errorcode[err]}, "
                          "not ENOMEM")
                    bad += 1
                if not absent(base, name):
                    print(f"FAIL {name}: {point} after {n}: {MADE[name]} exists after "
                          "the failed call")
                    bad += 1
                after = snapshot(base)
                d = diff(before, after)
                if d:
                    bad += 1
                    print(f"FAIL {name}: {point} after {n} passes: the failed call "
                          "changed the tree:")
                    for x in d[:8]:
                        print("   ", x[:300])
                    fixture(base)
                    after = None
                before = after
            else:
                print(f"FAIL {name}: {point} still failing after {MAX_STEPS} steps")
                bad += 1
            line.append(f"{point}:{failed}" + (f"+{absorbed} absorbed" if absorbed else ""))
        print(f"{name}: failed calls " + " ".join(line))
    return bad


def main():
    mnt = sys.argv[1]
    strict = "--strict" in sys.argv[2:]
    args = [a for a in sys.argv[2:] if a != "--strict"]
    points = [a for a in args if os.path.isdir(f"{K}/{a}")] or \
        ["shadow_alloc", "page_alloc"]
    names = [a for a in args if a not in points]
    bad = run(mnt, points, names, strict)
    print(f"{bad} failed call(s) changed the tree" if bad else "every failed call changed nothing")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
