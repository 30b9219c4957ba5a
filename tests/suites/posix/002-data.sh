# Data integrity: writes and reads at many alignments and sizes, across
# superpage boundaries, sparse files, truncate down and up, persistence
# across umount/mount, and space returned after deletion.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
# The root directory's first block stays allocated once it exists.
touch "$MNT/first" && rm "$MNT/first"
free0=$(stat -f -c %f "$MNT")
python3 - "$MNT" <<'PY'
import os, random, sys, hashlib
mnt = sys.argv[1]
rnd = random.Random(1234)
model = {}
sizes = [1, 7, 4095, 4096, 4097, 65536, 2 * 1024 * 1024 - 1, 2 * 1024 * 1024,
         2 * 1024 * 1024 + 1, 3 * 1024 * 1024 + 123, 8 * 1024 * 1024]
for i, size in enumerate(sizes):
    for off in [0, 1, 4095, 4096, 2 * 1024 * 1024 - 3]:
        name = os.path.join(mnt, f"f{i}_{off}")
        data = rnd.randbytes(size)
        with open(name, "wb") as f:
            f.seek(off)
            f.write(data)
        model[name] = b"\0" * off + data
# Overwrites in the middle, spanning a superpage boundary.
name = os.path.join(mnt, "f10_0")
buf = bytearray(model[name])
for pos, n in [(2 * 1024 * 1024 - 100, 300), (5, 5), (4 * 1024 * 1024, 1 << 20)]:
    d = rnd.randbytes(n)
    with open(name, "r+b") as f:
        f.seek(pos)
        f.write(d)
    buf[pos:pos + n] = d
model[name] = bytes(buf)
# Truncate down into the middle of a superpage, then up again: zeros.
name = os.path.join(mnt, "f9_1")
os.truncate(name, 1_000_000)
os.truncate(name, 3_000_000)
model[name] = model[name][:1_000_000] + b"\0" * 2_000_000
# Sparse file with a hole of whole superpages.
name = os.path.join(mnt, "sparse")
with open(name, "wb") as f:
    f.seek(10 * 1024 * 1024)
    f.write(b"end")
model[name] = b"\0" * (10 * 1024 * 1024) + b"end"
assert os.stat(name).st_blocks * 512 < 1024 * 1024, "hole allocated"
for name, want in model.items():
    got = open(name, "rb").read()
    assert got == want, f"{name}: content differs (len {len(got)} vs {len(want)})"
with open(os.path.join(mnt, "MODEL"), "w") as f:
    for name, want in sorted(model.items()):
        f.write(f"{os.path.basename(name)} {hashlib.sha256(want).hexdigest()}\n")
print(f"{len(model)} files verified")
PY
umount "$MNT"
mount_vsmfs
cd "$MNT"
while read -r name sum; do
	assert_eq "$(sha256sum "$name" | cut -d' ' -f1)" "$sum" "$name after remount"
done < MODEL
cd /
rm -rf "${MNT:?}"/*
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after deleting everything"
umount "$MNT"
mount_vsmfs
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after remount"
umount "$MNT"
