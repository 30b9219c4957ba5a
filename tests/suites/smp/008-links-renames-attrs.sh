# Links, renames of files, attribute changes and truncations beside each
# other: on eight vCPUs, eight processes, each in a directory of its own
# over files laid out before, chmod, chown, utimes, link, rename (to a new
# name or over another file's name, freeing that file and its pages) and
# unlink names, shrink files by a page and grow them again, and write
# through shared mappings (the modification time set by the fault), while
# a ninth renames files between two shared directories. Each keeps a model
# of its names, modes, owners, sizes and times. These operations run in
# shared handles beside each other (trans_shared_meta counts at least half
# of them), and nothing of them is lost: every name, link count, mode,
# owner, size, time set by utimes, and byte written holds what the model says,
# before and after a remount (noatime: the checks read the files); fsck
# finds nothing.
. tests/lib/common.sh

[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
cat > /tmp/lra.py <<'PY'
import json, mmap, os, random, sys, time
from multiprocessing import Process

mnt, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
FILES = 8


def worker(i):
    rnd = random.Random(i)
    d = f"{mnt}/p{i}"
    # name -> file number; per file: mode, uid, gid, utimes (or None once
    # a write fault changed the times), the byte written at each page.
    names = {f"f{k}": k for k in range(FILES)}
    attrs = {k: {"mode": 0o644, "uid": 0, "gid": 0, "times": None, "pages": {},
                 "size": 4 * 4096} for k in range(FILES)}
    ops = {"chmod": 0, "chown": 0, "utime": 0, "link": 0, "rename": 0,
           "unlink": 0, "shrink": 0, "grow": 0, "mmap": 0}
    end = time.monotonic() + secs
    while time.monotonic() < end:
        name = rnd.choice(sorted(names))
        k = names[name]
        a = attrs[k]
        op = rnd.choice(list(ops))
        path = f"{d}/{name}"
        if op == "chmod":
            a["mode"] = rnd.choice((0o600, 0o640, 0o604, 0o755, 0o700))
            os.chmod(path, a["mode"])
        elif op == "chown":
            a["uid"], a["gid"] = rnd.randrange(1000, 1100), rnd.randrange(1000, 1100)
            os.chown(path, a["uid"], a["gid"])
        elif op == "utime":
            a["times"] = (rnd.randrange(10**18), rnd.randrange(10**18))
            os.utime(path, ns=a["times"])
        elif op == "link":
            new = f"l{rnd.randrange(40)}"
            if new in names:
                continue
            os.link(path, f"{d}/{new}")
            names[new] = k
        elif op == "rename":
            new = f"r{rnd.randrange(40)}" if rnd.random() < 0.7 else rnd.choice(sorted(names))
            if new == name or (new in names and names[new] == k):
                continue
            os.rename(path, f"{d}/{new}")
            names[new] = names.pop(name)
        elif op == "unlink":
            if sum(1 for v in names.values() if v == k) < 2:
                continue
            os.unlink(path)
            del names[name]
        elif op == "shrink":
            if a["size"] <= 4096:
                continue
            a["size"] -= 4096
            os.truncate(path, a["size"])
            a["pages"].pop(str(a["size"] // 4096), None)
            a["times"] = None
        elif op == "grow":
            if a["size"] >= 4 * 4096:
                continue
            val = rnd.randrange(1, 256)
            fd = os.open(path, os.O_WRONLY)
            os.pwrite(fd, bytes([val]) * 4096, a["size"])
            os.close(fd)
            a["pages"][str(a["size"] // 4096)] = val
            a["size"] += 4096
            a["times"] = None
        else:
            pg = rnd.randrange(a["size"] // 4096)
            val = rnd.randrange(1, 256)
            fd = os.open(path, os.O_RDWR)
            with mmap.mmap(fd, a["size"]) as mm:
                mm[pg * 4096] = val
            os.close(fd)
            a["pages"][str(pg)] = val
            a["times"] = None
        ops[op] += 1
    live = {k for k in names.values()}
    return {"ops": ops, "names": names, "attrs": {str(k): attrs[k] for k in live}}


def mover(secs):
    """Renames between two shared directories, and back."""
    rnd = random.Random(99)
    where = {f"s{k}": "a" for k in range(16)}
    n, end = 0, time.monotonic() + secs
    while time.monotonic() < end:
        name = rnd.choice(sorted(where))
        to = "b" if where[name] == "a" else "a"
        os.rename(f"{mnt}/{where[name]}/{name}", f"{mnt}/{to}/{name}")
        where[name] = to
        n += 1
    return {"ops": {"rename": n}, "where": where}


def run(i):
    res = mover(secs) if i == 8 else worker(i)
    with open(f"{out}.{i}", "w") as f:
        json.dump(res, f)


procs = [Process(target=run, args=(i,)) for i in range(9)]
for p in procs:
    p.start()
for p in procs:
    p.join()
if any(p.exitcode for p in procs):
    sys.exit("a process failed")
total = 0
for i in range(9):
    ops = json.load(open(f"{out}.{i}"))["ops"]
    total += sum(v for k, v in ops.items() if k not in ("mmap", "grow"))
    print(f"process {i}:", " ".join(f"{k} {v}" for k, v in ops.items()))
    if not sum(ops.values()):
        sys.exit(f"process {i} made no progress")
open(f"{out}.total", "w").write(f"{total}\n")
PY
cat > /tmp/lra-check.py <<'PY'
import json, os, sys

mnt, out = sys.argv[1], sys.argv[2]
n = 0
for i in range(8):
    res = json.load(open(f"{out}.{i}"))
    d = f"{mnt}/p{i}"
    got = sorted(os.listdir(d))
    if got != sorted(res["names"]):
        sys.exit(f"p{i}: names {got}, expected {sorted(res['names'])}")
    for name, k in res["names"].items():
        a = res["attrs"][str(k)]
        st = os.lstat(f"{d}/{name}")
        want_nlink = sum(1 for v in res["names"].values() if v == k)
        have = (st.st_mode & 0o7777, st.st_uid, st.st_gid, st.st_nlink, st.st_size)
        want = (a["mode"], a["uid"], a["gid"], want_nlink, a["size"])
        if have != want:
            sys.exit(f"p{i}/{name}: mode, uid, gid, nlink, size {have}, expected {want}")
        if a["times"] and (st.st_atime_ns, st.st_mtime_ns) != tuple(a["times"]):
            sys.exit(f"p{i}/{name}: times {(st.st_atime_ns, st.st_mtime_ns)}, "
                     f"expected {tuple(a['times'])}")
        with open(f"{d}/{name}", "rb") as f:
            data = f.read()
        for pg, val in a["pages"].items():
            if data[int(pg) * 4096] != val:
                sys.exit(f"p{i}/{name}: page {pg} holds {data[int(pg) * 4096]}, "
                         f"expected {val}")
        n += 1
where = json.load(open(f"{out}.8"))["where"]
for name, d in where.items():
    if not os.path.exists(f"{mnt}/{d}/{name}"):
        sys.exit(f"{name} is not in {d}")
print(f"{n} names in 8 directories and {len(where)} moved files as the model says")
PY

setup() {
	for i in 0 1 2 3 4 5 6 7; do
		mkdir "$MNT/p$i"
		for k in 0 1 2 3 4 5 6 7; do
			head -c 16384 /dev/zero > "$MNT/p$i/f$k"
		done
	done
	mkdir "$MNT/a" "$MNT/b"
	for k in $(seq 0 15); do
		echo "$k" > "$MNT/a/s$k"
	done
	sync
}

mkfs_vsmfs -f "$DEV"
mount_vsmfs -o noatime
setup
meta0=$(counter trans_shared_meta)
python3 /tmp/lra.py "$MNT" 12 /tmp/lra.out
ops=$(cat /tmp/lra.out.total)
meta=$(($(counter trans_shared_meta) - meta0))
echo "$ops links, renames, unlinks, truncations and attribute changes; $meta in shared handles;" \
	"$(counter trans_commits) commits"
[ "$meta" -ge $((ops / 2)) ] || die "only $meta of $ops operations ran in shared handles"
python3 /tmp/lra-check.py "$MNT" /tmp/lra.out
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the run"
mount_vsmfs -o noatime
python3 /tmp/lra-check.py "$MNT" /tmp/lra.out
umount "$MNT"
