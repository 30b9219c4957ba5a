# Space of removed entries is found again without walking the block: a
# directory whose entries are unlinked, renamed to longer and shorter
# names and created at random, in the order a mail spool or a rename loop
# makes, holds exactly the names it should (readdir, lookups, after a
# remount and after dropping the index with the inode cache), and the
# final fsck finds every entry sound.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
mount_vsmfs
D="$MNT/spool"
mkdir "$D"

python3 - "$D" <<'EOF'
import os, random, sys

d = sys.argv[1]
rng = random.Random(7)
live = set()


def name(i, n):
    return ("m%d" % i).ljust(n, "x")


def check(what):
    got = set(os.listdir(d))
    if got != live:
        sys.exit("%s: %d names missing, %d unexpected" %
                 (what, len(live - got), len(got - live)))


n = 0
for _ in range(3000):
    nm = name(n, rng.choice((2, 7, 20, 60)))
    open(os.path.join(d, nm), "w").close()
    live.add(nm)
    n += 1
check("after the creates")
# In order: each rename finds the room its removal left.
for old in sorted(live):
    new = "r" + old[1:]
    os.rename(os.path.join(d, old), os.path.join(d, new))
    live.discard(old)
    live.add(new)
check("after the in-order renames")
size = None
for rnd in range(6):
    for _ in range(2500):
        op = rng.random()
        if op < 0.35 and live:
            victim = rng.choice(sorted(live))
            os.unlink(os.path.join(d, victim))
            live.discard(victim)
        elif op < 0.7 and live:
            old = rng.choice(sorted(live))
            new = name(n, rng.choice((1, 9, 33, 120)))
            n += 1
            os.rename(os.path.join(d, old), os.path.join(d, new))
            live.discard(old)
            live.add(new)
        else:
            nm = name(n, rng.choice((3, 12, 40, 200)))
            n += 1
            with open(os.path.join(d, nm), "w") as f:
                f.write(nm)
            live.add(nm)
        if rng.random() < 0.01:
            fd = os.open(d, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    check("after round %d" % rnd)
    for nm in rng.sample(sorted(live), min(200, len(live))):
        os.stat(os.path.join(d, nm))
    if rnd == 3:
        size = os.stat(d).st_size
with open("/tmp/spool-names", "w") as f:
    f.write("\n".join(sorted(live)) + "\n")
print("entries %d, directory size %d after round 3, %d at the end" %
      (len(live), size, os.stat(d).st_size))
EOF

# The index is built again from the blocks: the same names.
umount "$MNT"
mount_vsmfs
ls -f "$D" | grep -v '^\.\.\?$' | sort > /tmp/spool-after
cmp -s /tmp/spool-names /tmp/spool-after || die "names differ after a remount"
echo 2 > /proc/sys/vm/drop_caches
for f in $(head -n 50 /tmp/spool-names); do
	[ -e "$D/$f" ] || die "$f not found after the caches were dropped"
done
umount "$MNT"
