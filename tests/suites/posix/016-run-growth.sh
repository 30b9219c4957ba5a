# A small file's run that ends at the last page of its virtual superpage
# must not grow in place into the next one when the file is appended to,
# even though the pages there are free: a run never crosses a superpage.
# (Where the boundary is also that of a page bitmap block, a run crossing
# it was once counted in the wrong bitmap block, and its pages were given
# to other files.) The run moves instead; the data stays, and fsck agrees.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os, sys
from vsmfs_test import P, check

mnt = sys.argv[1]


def used():
    st = os.statvfs(mnt)
    # Logical page 0 is reserved and not counted in f_blocks.
    return st.f_blocks - st.f_bfree + 1


# Small files (under 256 KiB) take pages first fit from the first, partly
# used superpage of a fresh file system; its last file ends at page 511.
names = ["fill%d" % i for i in range(12)] + ["edge"]
for n in names:
    open(os.path.join(mnt, n), "wb").close()
files = {}
for n in names[:-1]:
    left = 512 - used()
    if left <= 0:
        break
    pages = min(50, left - 20)
    if pages <= 0:
        break
    files[n] = bytes([len(files) + 1]) * (pages * P)
    with open(os.path.join(mnt, n), "wb") as f:
        f.write(files[n])
left = 512 - used()
check(0 < left < 64, "pages left in the first superpage: %d" % left)
files["edge"] = b"e" * (left * P)
with open(os.path.join(mnt, "edge"), "wb") as f:
    f.write(files["edge"])
check(used() == 512, "first superpage full: %d pages used" % used())
print("edge file: %d pages up to the end of the first superpage" % left)

# Appends of one page each: the run cannot grow in place any more.
with open(os.path.join(mnt, "edge"), "ab") as f:
    for i in range(3):
        f.write(b"%d" % i * P)
        files["edge"] += b"%d" % i * P
for n, data in files.items():
    with open(os.path.join(mnt, n), "rb") as f:
        check(f.read() == data, "content of %s" % n)
print("%d files intact after the appends" % len(files))
PY
umount "$MNT"
out=$("$FSCK" -n "$DEV" 2>&1) || { echo "$out"; die "fsck.vsmfs found errors"; }
echo "fsck.vsmfs: clean"
mount_vsmfs
for f in "$MNT"/*; do rm "$f"; done
umount "$MNT"
