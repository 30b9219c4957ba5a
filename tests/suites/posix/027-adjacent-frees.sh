# Runs freed beside each other in one CPU's share of the running
# transaction: a small file's page freed by its unlink (a shared metadata
# handle), a new small file's first page (a reservation its shared handle
# claimed), and the scratch page of a 4 KiB overwrite, which the CPU's
# pool hands out next to them. Each must end as what it is when the
# transaction commits: the freed page free, the claimed page the file's,
# the scratch page free. After many rounds on one CPU and a remount, fsck
# finds no page in use that no file uses, and once every file is gone the
# free page count is what it was on the empty file system. (Failed before
# a share merged only scratch runs: a freed or claimed run that met a
# scratch page was ended as one reservation, 31 pages left in use.)
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer: every round's runs meet in one transaction.
mount_vsmfs -o commit=300
# The root directory's block, which it keeps, counted in both.
touch "$MNT/x" && rm "$MNT/x" && sync
free0=$(stat -f -c %f "$MNT")
PYTHONPATH=tests/lib python3 - "$MNT" <<'PY'
import os, random, sys
from vsmfs_test import P, check
mnt = sys.argv[1]
os.sched_setaffinity(0, [0])
rnd = random.Random(27)
o = os.path.join(mnt, "o")
with open(o, "wb") as f:
    f.write(rnd.randbytes(64 * P))
os.fsync(os.open(o, os.O_RDONLY))
fd = os.open(o, os.O_WRONLY)
model = bytearray(open(o, "rb").read())
live = {}
for i in range(200):
    # A small file's first page, a free of another's, an overwrite's scratch.
    name = os.path.join(mnt, "s%d" % i)
    data = rnd.randbytes(rnd.choice((100, P, 2 * P)))
    with open(name, "wb") as f:
        f.write(data)
    live[name] = data
    if len(live) > 3:
        victim = rnd.choice(sorted(live))
        os.unlink(victim)
        del live[victim]
    off = rnd.randrange(64) * P
    buf = rnd.randbytes(P)
    check(os.pwrite(fd, buf, off) == P, "short overwrite")
    model[off:off + P] = buf
os.close(fd)
check(open(o, "rb").read() == model, "o: content differs")
for name, data in live.items():
    check(open(name, "rb").read() == data, name + ": content differs")
print("200 rounds: %d small files left, o as written" % len(live))
PY
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the rounds"
mount_vsmfs
rm -f "$MNT"/*
sync
free1=$(stat -f -c %f "$MNT")
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after removing every file"
[ "$free1" = "$free0" ] || die "free pages $free1 with every file gone, $free0 at first"
echo "free pages $free1 as on the empty file system"
