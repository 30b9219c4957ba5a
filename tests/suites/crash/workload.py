# SPDX-License-Identifier: GPL-2.0
"""Power-cut workload and checker, run inside the VM (tests/suites/crash/power-cut
drives them).

  workload.py run MNT ORACLE SEED     steps of SEED until killed
  workload.py check MNT ORACLE        compare the file system with the oracle

The workload is a deterministic sequence of steps drawn from SEED:
create, append, overwrite, a write past the end leaving a gap (a sparse
file), hole punching, collapse and insert range of whole pages, truncate
(shrink and extend), rename (over existing names too), link, unlink,
mkdir, rmdir, with data sizes from 1 byte to several MiB. Every step
ends with fsync of the files and directories it changed; then "done K"
is appended to ORACLE (in the project tree, outside the PM device) and
the oracle is fsync'd. The oracle holds only the seed, the mount mode
and the step count: the checker replays the same sequence in memory to
know the state after step K and the step K+1 that may have been in
flight when the power went.

Every byte written is part of a 32-byte record naming the inode, the write
(version) and the offset, so a torn write is recognizable.

The check after the reboot: every name of the state after step K exists
with the right type, size and content, and directories hold no other
names, except the names step K+1 touches, which must be as before or as
after it (a metadata step, a collapse or an insert entirely one or the
other; a data step byte by byte old or new, and with data=atomic each
overwritten range entirely one version).
"""

import ctypes
import hashlib
import os
import random
import stat
import sys

KIB, MIB = 1 << 10, 1 << 20
REC = 32
DIRS = ["", "d0", "d1", "d0/e0"]
BUDGET = 24 * MIB       # model data kept below this, so no step hits ENOSPC
SIZES = [1, 31, 32, 33, 511, 4095, 4096, 4097, 8191, 65536, 65537, 300 * KIB,
         2 * MIB - 1, 2 * MIB, 2 * MIB + 1, 3 * MIB + 123]


def pattern(ino, ver, off, length):
    """Bytes [off, off+length) of write ver of inode ino."""
    first = off // REC
    last = (off + length + REC - 1) // REC
    recs = b"".join(b"<i%05d v%07d @ %010x >\n" % (ino, ver, r * REC) for r in range(first, last))
    assert len(recs) == (last - first) * REC
    start = off - first * REC
    return recs[start:start + length]


class Inode:
    def __init__(self, ino, kind):
        self.ino = ino
        self.kind = kind        # "f" or "d"
        self.data = bytearray()
        self.nlink = 0


class Model:
    """The namespace and file contents the workload creates."""

    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.names = {}         # path -> Inode
        self.next_ino = 1
        self.ver = 0
        for d in DIRS:
            if d:
                self.names[d] = Inode(0, "d")

    def files(self):
        return sorted(p for p, i in self.names.items() if i.kind == "f")

    def total(self):
        seen = {}
        for i in self.names.values():
            seen[id(i)] = len(i.data)
        return sum(seen.values())

    def dirs(self):
        return [""] + sorted(p for p, i in self.names.items() if i.kind == "d")

    def newname(self):
        d = self.rnd.choice(self.dirs())
        return os.path.join(d, f"f{self.rnd.randrange(40):02d}")

    def size(self):
        return self.rnd.choice(SIZES) + (self.rnd.randrange(4096) if self.rnd.random() < 0.3 else 0)

    def next_step(self):
        """The next step: (op, args, touched paths). Does not apply it."""
        rnd = self.rnd
        files = self.files()
        room = BUDGET - self.total()
        while True:
            op = rnd.choice(["create", "create", "append", "append", "overwrite", "overwrite",
                             "overwrite", "truncate", "rename", "link", "unlink", "mkdir",
                             "rmdir", "gapwrite", "punch", "shift"])
            if op == "create":
                p = self.newname()
                if p in self.names:
                    continue
                return op, (p,), [p]
            if op in ("append", "overwrite", "truncate", "link", "unlink", "rename", "gapwrite",
                      "punch", "shift") and not files:
                continue
            if op in ("append", "overwrite", "truncate", "gapwrite", "punch", "shift"):
                p = rnd.choice(files)
                cur = len(self.names[p].data)
                links = [q for q in files if self.names[q] is self.names[p]]
                self.ver += 1
                if op == "append":
                    n = min(self.size(), max(0, room - 8192))
                    if not n:
                        continue
                    return op, (p, cur, n, self.ver), links
                if op == "gapwrite":
                    gap = rnd.choice([4096, 5000, 300 * KIB, 2 * MIB - 4096, 3 * MIB])
                    n = min(self.size(), max(0, room - 8192 - gap))
                    if not n:
                        continue
                    return op, (p, cur + gap, n, self.ver), links
                if op == "punch":
                    if not cur:
                        continue
                    n = min(self.size() + 8192, cur)
                    off = rnd.randrange(0, cur - n + 1)
                    return op, (p, off, n), links
                if op == "shift":
                    # Collapse (ends before the end of the file) or insert
                    # (starts before it) of whole pages: one transaction.
                    last = (cur - 1) // 4096 if cur else 0
                    if rnd.random() < 0.5:
                        if last < 1:
                            continue
                        n = rnd.randint(1, min(last, 300))
                        off = rnd.randint(0, last - n)
                        return op, (p, off * 4096, n * 4096, False), links
                    pages = min(300, max(0, room - 8192) // 4096)
                    if not cur or not pages:
                        continue
                    n = rnd.randint(1, pages)
                    return op, (p, rnd.randint(0, last) * 4096, n * 4096, True), links
                if op == "overwrite":
                    if not cur:
                        continue
                    n = min(self.size(), cur)
                    off = rnd.randrange(0, cur - n + 1)
                    if rnd.random() < 0.3:
                        off -= off % 4096
                    return op, (p, off, n, self.ver), links
                n = rnd.choice([0, cur // 2, max(0, cur - 1), cur + 1, cur + 5000,
                                cur + 3 * MIB])
                if n > cur and n - cur > room - 8192:
                    continue
                return op, (p, n), links
            if op == "rename":
                a = rnd.choice(files)
                b = self.newname()
                if a == b or (b in self.names and self.names[b].kind != "f"):
                    continue
                return op, (a, b), [a, b]
            if op == "link":
                a = rnd.choice(files)
                b = self.newname()
                if b in self.names:
                    continue
                return op, (a, b), [b]
            if op == "unlink":
                p = rnd.choice(files)
                return op, (p,), [p]
            if op == "mkdir":
                p = os.path.join(rnd.choice(self.dirs()), f"m{rnd.randrange(6)}")
                if p in self.names:
                    continue
                return op, (p,), [p]
            if op == "rmdir":
                cands = [d for d in self.dirs() if d and d not in DIRS and
                         not any(n.startswith(d + "/") for n in self.names)]
                if not cands:
                    continue
                p = rnd.choice(cands)
                return op, (p,), [p]

    def apply(self, step):
        op, args, _ = step
        if op == "create":
            self.names[args[0]] = Inode(self.next_ino, "f")
            self.next_ino += 1
        elif op in ("append", "overwrite", "gapwrite"):
            p, off, n, ver = args
            ino = self.names[p]
            if off + n > len(ino.data):
                ino.data.extend(bytes(off + n - len(ino.data)))
            ino.data[off:off + n] = pattern(ino.ino, ver, off, n)
        elif op == "punch":
            p, off, n = args
            self.names[p].data[off:off + n] = bytes(n)
        elif op == "shift":
            p, off, n, insert = args
            if insert:
                self.names[p].data[off:off] = bytes(n)
            else:
                del self.names[p].data[off:off + n]
        elif op == "truncate":
            p, n = args
            ino = self.names[p]
            if n < len(ino.data):
                del ino.data[n:]
            else:
                ino.data.extend(bytes(n - len(ino.data)))
        elif op == "rename":
            a, b = args
            # Two links of one inode: rename(2) leaves both.
            if self.names.get(b) is not self.names[a]:
                self.names[b] = self.names.pop(a)
        elif op == "link":
            self.names[args[1]] = self.names[args[0]]
        elif op in ("unlink", "rmdir"):
            del self.names[args[0]]
        elif op == "mkdir":
            self.names[args[0]] = Inode(0, "d")


LIBC = ctypes.CDLL(None, use_errno=True)
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 0x01, 0x02
FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE = 0x08, 0x20


def fallocate_fsync(path, mode, off, n):
    fd = os.open(path, os.O_WRONLY)
    try:
        if LIBC.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(n)):
            raise OSError(ctypes.get_errno(), f"fallocate {path} mode {mode:#x} {off}+{n}")
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_path(path, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def do_step(mnt, model, step):
    op, args, _ = step
    P = lambda p: os.path.join(mnt, p)    # noqa: E731
    parent = lambda p: os.path.dirname(P(p)) or mnt   # noqa: E731
    if op == "create":
        fd = os.open(P(args[0]), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        os.fsync(fd)
        os.close(fd)
        fsync_path(parent(args[0]))
    elif op == "punch":
        p, off, n = args
        fallocate_fsync(P(p), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
    elif op == "shift":
        p, off, n, insert = args
        fallocate_fsync(P(p), FALLOC_FL_INSERT_RANGE if insert else FALLOC_FL_COLLAPSE_RANGE,
                        off, n)
    elif op in ("append", "overwrite", "gapwrite"):
        p, off, n, ver = args
        ino = model.names[p]
        fd = os.open(P(p), os.O_WRONLY)
        data = pattern(ino.ino, ver, off, n)
        done = 0
        while done < n:
            done += os.pwrite(fd, data[done:], off + done)
        os.fsync(fd)
        os.close(fd)
    elif op == "truncate":
        os.truncate(P(args[0]), args[1])
        fsync_path(P(args[0]))
    elif op == "rename":
        os.rename(P(args[0]), P(args[1]))
        fsync_path(parent(args[0]))
        fsync_path(parent(args[1]))
    elif op == "link":
        os.link(P(args[0]), P(args[1]))
        fsync_path(parent(args[1]))
    elif op == "unlink":
        os.unlink(P(args[0]))
        fsync_path(parent(args[0]))
    elif op == "mkdir":
        os.mkdir(P(args[0]))
        fsync_path(parent(args[0]))
    elif op == "rmdir":
        os.rmdir(P(args[0]))
        fsync_path(parent(args[0]))


def run(mnt, oracle, seed, mode):
    model = Model(seed)
    for d in DIRS:
        if d:
            os.mkdir(os.path.join(mnt, d))
    fsync_path(mnt)
    with open(oracle, "w") as f:
        f.write(f"seed {seed} mode {mode}\n")
        f.flush()
        os.fsync(f.fileno())
        print("WORKLOAD-START", flush=True)
        k = 0
        while True:
            step = model.next_step()
            do_step(mnt, model, step)
            model.apply(step)
            k += 1
            f.write(f"done {k}\n")
            f.flush()
            os.fsync(f.fileno())


# ---- checking ----

def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    return 1


def scan(mnt):
    """Everything on the file system: path -> ("d", None) or ("f", bytes) or other."""
    out = {}
    for root, dirs, files in os.walk(mnt):
        rel = os.path.relpath(root, mnt)
        for name in dirs + files:
            p = os.path.normpath(os.path.join(rel, name))
            st = os.lstat(os.path.join(root, name))
            if stat.S_ISDIR(st.st_mode):
                out[p] = ("d", None)
            elif stat.S_ISREG(st.st_mode):
                with open(os.path.join(root, name), "rb") as f:
                    out[p] = ("f", f.read())
            else:
                out[p] = ("?", None)
    return out


def expect(model):
    return {p: (i.kind, bytes(i.data) if i.kind == "f" else None) for p, i in model.names.items()}


def describe(v):
    if v is None:
        return "absent"
    kind, data = v
    if kind != "f":
        return {"d": "a directory"}.get(kind, "not a file")
    return f"a file of {len(data)} bytes (sha1 {hashlib.sha1(data).hexdigest()[:12]})"


def data_ok(got, old, new, rng, atomic):
    """A data step in flight: size between old and new, each byte old or
    new (or zero in space the step adds), and with atomic overwrites the
    range old or new as a whole."""
    if not (min(len(old), len(new)) <= len(got) <= max(len(old), len(new))):
        return f"size {len(got)} not between {len(old)} and {len(new)}"
    for c in range(0, len(got), 4096):
        g = got[c:c + 4096]
        if g == new[c:c + len(g)] or g == old[c:c + len(g)]:
            continue
        for i in range(c, c + len(g)):
            b = got[i]
            if (i < len(new) and b == new[i]) or (i < len(old) and b == old[i]) or \
               (i >= len(old) and b == 0):
                continue
            return f"byte {i} is neither old nor new data"
    if atomic and rng:
        off, n = rng
        end = min(off + n, len(old))
        if off < end and got[off:end] != old[off:end] and got[off:end] != new[off:end]:
            return f"overwrite [{off}, {end}) holds parts of two versions"
    return None


def check(mnt, oracle):
    with open(oracle) as f:
        lines = f.read().split("\n")
    head = lines[0].split()
    if len(head) < 4 or head[0] != "seed":
        print("no workload ran before the power cut: nothing to check")
        return 0
    seed, mode = int(head[1]), head[3]
    done = max([int(line.split()[1]) for line in lines[1:] if line.startswith("done ")] or [0])
    model = Model(seed)
    for _ in range(done):
        model.apply(model.next_step())
    before = expect(model)
    step = model.next_step()
    model.apply(step)
    after = expect(model)
    touched = set(step[2])
    op, args, _ = step
    atomic = mode == "atomic"
    print(f"{done} steps durable; step {done + 1} in flight: {op} {args[:2]}"
          f"{'' if atomic else '; overwrite atomicity not checked (no data=atomic)'}")
    got = scan(mnt)
    errors = 0
    for p in sorted(set(before) | set(after) | set(got)):
        g, b, a = got.get(p), before.get(p), after.get(p)
        if p not in touched:
            if g != b:
                errors += fail(f"{p}: expected {describe(b)}, found {describe(g)}")
            continue
        if g == b or g == a:
            continue
        if op in ("append", "overwrite", "gapwrite", "punch") and g and b and g[0] == "f":
            why = data_ok(g[1], b[1], a[1], (args[1], args[2]) if op == "overwrite" else None,
                          atomic)
            if why is None:
                continue
            errors += fail(f"{p} ({op} in flight): {why}")
            continue
        errors += fail(f"{p} ({op} in flight): expected {describe(b)} or {describe(a)}, "
                       f"found {describe(g)}")
    # A metadata step is one transaction: all of its names old, or all new.
    if op in ("rename",) and not errors:
        olds = all(got.get(p) == before.get(p) for p in touched)
        news = all(got.get(p) == after.get(p) for p in touched)
        if not (olds or news):
            errors += fail(f"rename {args[0]} -> {args[1]} half done")
    if errors:
        return 1
    print(f"oracle: {len(before)} names checked")
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == "run":
        mode = os.environ.get("WORKLOAD_MODE", "plain")
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), mode)
        return 0
    if cmd == "check":
        return check(sys.argv[2], sys.argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
