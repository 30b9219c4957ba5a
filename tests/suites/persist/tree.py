# SPDX-License-Identifier: GPL-2.0
"""Guest side of the persist group: build a tree of files on the mounted
file system and record it in a manifest on the host (the project tree), or
compare the file system with a manifest.

  tree.py create MNT MANIFEST     build the tree, write the manifest
  tree.py verify MNT MANIFEST     compare everything, statfs included
  tree.py synced MNT MANIFEST     write and fsync files, one manifest line
                                  per file once it is durable, until killed
  tree.py check-synced MNT MANIFEST   every file of the manifest must match
  tree.py meta MNT MANIFEST       metadata-heavy work (creates, small writes,
                                  renames, unlinks, directories, symlinks),
                                  recording each fsync'd file, until killed
                                  at a random point
  tree.py check-meta MNT MANIFEST every recorded file must match
"""

import hashlib
import json
import os
import random
import shutil
import stat
import sys
import time

KIB, MIB = 1 << 10, 1 << 20


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def data(rnd, n):
    return rnd.randbytes(n)


def build(mnt):
    rnd = random.Random(20240601)
    os.chdir(mnt)
    sizes = [1, 7, 511, 4095, 4096, 4097, 65539, 2 * MIB - 1, 2 * MIB, 2 * MIB + 1,
             3 * MIB + 123, 5 * MIB + 4095, 8 * MIB]
    os.makedirs("a/b/c/d")
    os.mkdir("empty")
    os.mkdir("many")
    for i, n in enumerate(sizes):
        with open(f"a/size{n}", "wb") as f:
            f.write(data(rnd, n))
        with open(f"a/b/off{i}", "wb") as f:
            f.seek(rnd.choice([1, 4095, 4096, 2 * MIB - 3, 2 * MIB]))
            f.write(data(rnd, n % (1 * MIB) + 1))
    open("a/b/c/d/zero", "wb").close()
    # Sparse: hole first, hole in the middle, trailing hole.
    with open("sparse-head", "wb") as f:
        f.seek(6 * MIB + 5)
        f.write(b"after the hole")
    with open("sparse-mid", "wb") as f:
        f.write(data(rnd, 3 * KIB))
        f.seek(4 * MIB)
        f.write(data(rnd, 2 * MIB + 17))
    with open("sparse-tail", "wb") as f:
        f.write(data(rnd, 100 * KIB))
        f.truncate(7 * MIB + 1)
    with open("shrunk", "wb") as f:
        f.write(data(rnd, 3 * MIB))
        f.truncate(2 * MIB + 5000)
    for i in range(300):
        with open(f"many/f{i:03d}", "wb") as f:
            f.write(data(rnd, rnd.randrange(0, 9000)))
    for i in range(0, 300, 3):
        os.unlink(f"many/f{i:03d}")
    os.symlink("a/size4096", "fastlink")
    os.symlink("../" * 40 + "long/target/" * 10, "a/longlink")
    os.symlink("nowhere", "a/b/dangling")
    os.link("a/size7", "hard1")
    os.link("a/size7", "a/b/c/hard2")
    os.mkfifo("fifo", 0o640)
    os.mknod("chardev", stat.S_IFCHR | 0o600, os.makedev(1, 7))
    os.mknod("blockdev", stat.S_IFBLK | 0o660, os.makedev(259, 70000))
    os.chown("a/size1", 1000, 100)
    os.chmod("a/size1", 0o4751)
    os.chown("a/b", 1234, 5678)
    os.chmod("empty", 0o1777)
    os.lchown("fastlink", 42, 43)
    os.rename("a/size511", "a/b/c/moved")
    os.utime("a/size4097", ns=(1_000_000_123, 1_600_000_000_987_654_321))
    os.utime("a/b/c/d", ns=(5, 1_234_567_890_000_000_001))
    os.chdir("/")


def describe(mnt):
    """Everything the tree should keep: path -> attributes, plus statfs."""
    entries = {}
    for root, dirs, files in os.walk(mnt):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, mnt)
            e = {"mode": st.st_mode, "uid": st.st_uid, "gid": st.st_gid,
                 "size": st.st_size, "nlink": st.st_nlink, "ino": st.st_ino,
                 "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    e["sha256"] = hashlib.sha256(f.read()).hexdigest()
                e["blocks"] = st.st_blocks
            elif stat.S_ISLNK(st.st_mode):
                e["target"] = os.readlink(path)
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                e["rdev"] = [os.major(st.st_rdev), os.minor(st.st_rdev)]
            entries[rel] = e
    sv = os.statvfs(mnt)
    fs = {k: getattr(sv, k) for k in ("f_bsize", "f_blocks", "f_bfree", "f_bavail",
                                      "f_files", "f_ffree", "f_namemax")}
    st = os.stat(mnt)
    entries["."] = {"mode": st.st_mode, "nlink": st.st_nlink, "ino": st.st_ino,
                    "mtime_ns": st.st_mtime_ns}
    return {"entries": entries, "statfs": fs}


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())


def compare(want, got):
    bad = []
    for path in sorted(set(want["entries"]) | set(got["entries"])):
        w, g = want["entries"].get(path), got["entries"].get(path)
        if w is None:
            bad.append(f"{path}: not in the manifest")
        elif g is None:
            bad.append(f"{path}: missing")
        else:
            for k in sorted(set(w) | set(g)):
                if w.get(k) != g.get(k):
                    bad.append(f"{path}: {k} is {g.get(k)}, was {w.get(k)}")
    for k in sorted(want["statfs"]):
        if want["statfs"][k] != got["statfs"][k]:
            bad.append(f"statfs {k} is {got['statfs'][k]}, was {want['statfs'][k]}")
    return bad


def synced(mnt, manifest):
    """Write files and fsync them; record each once durable. Prints the
    marker after a first batch and keeps going until the power is cut."""
    rnd = random.Random(7)
    # The root's first block is allocated by the first entry and stays.
    os.mkdir(os.path.join(mnt, "pre"))
    os.rmdir(os.path.join(mnt, "pre"))
    sv = os.statvfs(mnt)
    write_json(manifest + ".statfs", {"f_bfree": sv.f_bfree, "f_ffree": sv.f_ffree})
    os.mkdir(os.path.join(mnt, "s"))
    man = open(manifest, "w")
    i = 0
    while True:
        name = os.path.join("s", f"f{i}")
        n = rnd.choice([1, 4096, 4097, 65536, 2 * MIB + 1, rnd.randrange(1, 3 * MIB)])
        buf = data(rnd, n)
        fd = os.open(os.path.join(mnt, name), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.pwrite(fd, buf, rnd.choice([0, 0, 4095, 2 * MIB - 1]))
        if i % 5 == 3:
            os.ftruncate(fd, os.fstat(fd).st_size // 2)
        os.fsync(fd)
        st = os.fstat(fd)
        os.close(fd)
        dfd = os.open(os.path.join(mnt, "s"), os.O_RDONLY)
        os.fsync(dfd)
        os.close(dfd)
        with open(os.path.join(mnt, name), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        man.write(json.dumps({"name": name, "size": st.st_size, "mode": st.st_mode,
                              "sha256": digest}) + "\n")
        man.flush()
        os.fsync(man.fileno())
        # Churn that is not recorded: overwrites, renames and deletions of
        # other files, so the cut lands in the middle of transactions.
        junk = os.path.join(mnt, "s", f"junk{i % 7}")
        with open(junk, "wb") as f:
            f.write(data(rnd, rnd.randrange(1, 600 * KIB)))
        if i % 3 == 0:
            os.rename(junk, junk + ".old")
        i += 1
        if i == 40:
            print("PERSIST-CUT-NOW", flush=True)


def check_synced(mnt, manifest):
    lines = open(manifest).read().split("\n")
    good = 0
    for idx, line in enumerate(lines):
        if not line:
            continue
        try:
            e = json.loads(line)
        except ValueError:
            if idx == len(lines) - 1:
                continue	# torn last line: that file was not recorded
            fail(f"manifest line {idx + 1} is corrupt")
        path = os.path.join(mnt, e["name"])
        try:
            st = os.stat(path)
        except OSError as err:
            fail(f"{e['name']}: fsync'd before the power cut, now {err.strerror}")
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if st.st_size != e["size"] or st.st_mode != e["mode"] or digest != e["sha256"]:
            fail(f"{e['name']}: size {st.st_size} mode {st.st_mode:o} differ from the "
                 f"fsync'd {e['size']} {e['mode']:o}, or the content does")
        good += 1
    if good < 40:
        fail(f"only {good} files recorded before the power cut")
    print(f"{good} fsync'd files intact after the power cut")
    # Allocation state after the replay: deleting everything gives back
    # exactly what the empty file system had.
    shutil.rmtree(os.path.join(mnt, "s"))
    with open(manifest + ".statfs") as f:
        want = json.load(f)
    sv = os.statvfs(mnt)
    got = {"f_bfree": sv.f_bfree, "f_ffree": sv.f_ffree}
    if got != want:
        fail(f"after deleting every file: {got}, the empty file system had {want}")
    print(f"free blocks and inodes after deleting everything: as before ({got})")


def meta(mnt, manifest):
    """One round of metadata-heavy work in a fresh directory; appends to the
    manifest. The cut marker comes after a random number of operations. With
    VSMFS_META_LIMIT=N in the environment the round ends after N operations
    (for a cut that a fault point makes, not the marker)."""
    limit = int(os.environ.get("VSMFS_META_LIMIT", "0"))
    seed = int.from_bytes(os.urandom(4), "little")
    rnd = random.Random(seed)
    # Workers running side by side name their own directories.
    prefix = os.environ.get("VSMFS_META_PREFIX", "r")
    rounds = [e for e in os.listdir(mnt) if e.startswith(prefix) and e[len(prefix):].isdigit()]
    top = f"{prefix}{len(rounds)}"
    nocut = "VSMFS_META_PREFIX" in os.environ
    os.mkdir(os.path.join(mnt, top))
    cut = rnd.randrange(150, 600)
    print(f"round {top}, seed {seed}, cut marker after {cut} operations", flush=True)
    man = open(manifest, "a")
    i = 0
    while True:
        d = os.path.join(top, f"d{i % 5}")
        os.makedirs(os.path.join(mnt, d), exist_ok=True)
        name = os.path.join(d, f"f{i}")
        buf = data(rnd, rnd.randrange(0, 300))
        fd = os.open(os.path.join(mnt, name), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.write(fd, buf)
        os.fsync(fd)
        os.close(fd)
        dfd = os.open(os.path.join(mnt, d), os.O_RDONLY)
        os.fsync(dfd)
        os.close(dfd)
        man.write(json.dumps({"name": name, "size": len(buf),
                              "sha256": hashlib.sha256(buf).hexdigest()}) + "\n")
        man.flush()
        os.fsync(man.fileno())
        # Unrecorded churn: temporary files, renames, unlinks, directories,
        # symlinks, hard links and attributes.
        t = os.path.join(mnt, d, f"t{i % 11}")
        with open(t, "wb") as f:
            f.write(data(rnd, rnd.randrange(1, 5000)))
        op = i % 6
        if op == 0:
            os.rename(t, t + ".r")
        elif op == 1:
            os.unlink(t)
        elif op == 2:
            sub = os.path.join(mnt, d, f"s{i % 3}")
            if os.path.isdir(sub):
                shutil.rmtree(sub)
            else:
                os.mkdir(sub)
        elif op == 3:
            link = t + ".l"
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink("x" * rnd.randrange(1, 200), link)
        elif op == 4:
            hard = t + ".h"
            if os.path.lexists(hard):
                os.unlink(hard)
            os.link(t, hard)
        else:
            os.setxattr(t, "user.k", data(rnd, rnd.randrange(1, 100)))
        i += 1
        if i == cut and not nocut:
            print("PERSIST-CUT-NOW", flush=True)
        if i == limit:
            print(f"{i} operations done", flush=True)
            return


def hot(mnt, manifest):
    """Files kept open and appended to, each append fsync'd and recorded as
    a prefix the file must start with: inode aggregation moves them. Ends
    after VSMFS_META_LIMIT appends (default 3000)."""
    limit = int(os.environ.get("VSMFS_META_LIMIT", "3000"))
    seed = int.from_bytes(os.urandom(4), "little")
    rnd = random.Random(seed)
    top = f"h{len([e for e in os.listdir(mnt) if e.startswith('h')])}"
    os.mkdir(os.path.join(mnt, top))
    print(f"hot round {top}, seed {seed}", flush=True)
    man = open(manifest, "a")
    names = [os.path.join(top, f"f{i}") for i in range(200)]
    content = {}
    for n in names:
        content[n] = data(rnd, rnd.randrange(0, 200))
        fd = os.open(os.path.join(mnt, n), os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, content[n])
        os.fsync(fd)
        os.close(fd)
    dfd = os.open(os.path.join(mnt, top), os.O_RDONLY)
    os.fsync(dfd)
    os.close(dfd)
    # Any of them may be appended to later: each record is a prefix.
    for n in names:
        man.write(json.dumps({"name": n, "size": len(content[n]), "prefix": True,
                              "sha256": hashlib.sha256(content[n]).hexdigest()}) + "\n")
    man.flush()
    os.fsync(man.fileno())
    hot_names = rnd.sample(names, 30)
    fds = {n: os.open(os.path.join(mnt, n), os.O_WRONLY | os.O_APPEND) for n in hot_names}
    for i in range(limit):
        n = rnd.choice(hot_names)
        rec = data(rnd, rnd.randrange(1, 100))
        os.write(fds[n], rec)
        os.fsync(fds[n])
        content[n] += rec
        man.write(json.dumps({"name": n, "size": len(content[n]), "prefix": True,
                              "sha256": hashlib.sha256(content[n]).hexdigest()}) + "\n")
        man.flush()
        os.fsync(man.fileno())
    print(f"{limit} appends done", flush=True)


def parallel(mnt, manifest, sysfs):
    """Six processes run meta() side by side, each with its own manifest
    (MANIFEST.K) and directories. The cut marker comes once they have
    recorded 400 files and commits have been in flight together (the
    journal_order_waits counter of sysfs directory SYSFS moved)."""
    workers = 6
    print(f"{workers} processes of metadata-heavy work", flush=True)
    for k in range(workers):
        if os.fork() == 0:
            os.environ["VSMFS_META_PREFIX"] = f"w{k}."
            try:
                sys.stdout = open(os.devnull, "w")
                meta(mnt, f"{manifest}.{k}")
            except BaseException as err:	# pylint: disable=broad-except
                print(f"process {k}: {err!r}", file=sys.__stdout__, flush=True)
            os._exit(1)
    start = time.monotonic()
    waits0 = int(open(os.path.join(sysfs, "journal_order_waits")).read())
    while True:
        time.sleep(1)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid:
            fail(f"a process of the work ended before the power cut (status {status})")
        files = 0
        for k in range(workers):
            try:
                files += open(f"{manifest}.{k}").read().count("\n")
            except OSError:
                pass
        waits = int(open(os.path.join(sysfs, "journal_order_waits")).read()) - waits0
        if files >= 400 and waits > 0:
            print(f"{files} files recorded, {waits} commits completed by an earlier one",
                  flush=True)
            print("PERSIST-CUT-NOW", flush=True)
            while True:
                time.sleep(60)
        if time.monotonic() - start > 600:
            fail(f"after 600 s: {files} files recorded, {waits} commits in flight together")


def check_meta(mnt, manifest):
    """Every file the manifest records is intact; at least VSMFS_META_MIN
    (default 150) were recorded."""
    least = int(os.environ.get("VSMFS_META_MIN", "150"))
    good = 0
    lines = open(manifest).read().split("\n")
    for idx, line in enumerate(lines):
        if not line:
            continue
        try:
            e = json.loads(line)
        except ValueError:
            if idx == len(lines) - 1:
                continue	# torn last line: that file was not recorded
            fail(f"manifest line {idx + 1} is corrupt")
        try:
            with open(os.path.join(mnt, e["name"]), "rb") as f:
                buf = f.read()
        except OSError as err:
            fail(f"{e['name']}: fsync'd before the power cut, now {err.strerror}")
        if e.get("prefix"):
            # Appended after: the recorded length is there, maybe more.
            buf = buf[:e["size"]] if len(buf) >= e["size"] else buf
        if len(buf) != e["size"] or hashlib.sha256(buf).hexdigest() != e["sha256"]:
            fail(f"{e['name']}: {len(buf)} bytes, differs from the fsync'd {e['size']}")
        good += 1
    if good < least:
        fail(f"only {good} files recorded before the power cuts")
    print(f"{good} fsync'd files intact after the power cuts")


def main():
    cmd, mnt, manifest = sys.argv[1:4]
    if cmd == "create":
        build(mnt)
        desc = describe(mnt)
        write_json(manifest, desc)
        print(f"{len(desc['entries'])} entries recorded, statfs {desc['statfs']}")
    elif cmd == "verify":
        with open(manifest) as f:
            want = json.load(f)
        bad = compare(want, describe(mnt))
        for b in bad[:40]:
            print(f"  {b}")
        if bad:
            fail(f"{len(bad)} differences from the manifest")
        print(f"{len(want['entries'])} entries and statfs identical to the manifest")
    elif cmd == "synced":
        synced(mnt, manifest)
    elif cmd == "check-synced":
        check_synced(mnt, manifest)
    elif cmd == "meta":
        meta(mnt, manifest)
    elif cmd == "hot":
        hot(mnt, manifest)
    elif cmd == "check-meta":
        check_meta(mnt, manifest)
    elif cmd == "parallel":
        parallel(mnt, manifest, sys.argv[4])
    elif cmd == "check-parallel":
        for k in range(6):
            check_meta(mnt, f"{manifest}.{k}")
    else:
        fail(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
