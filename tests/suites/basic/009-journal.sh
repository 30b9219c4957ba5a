# The metadata journal at work, measured by its counters: byte-level deltas
# (a small update writes a few bytes, not a block, and the journal block is
# not read back to find them), garbage collection and
# checkpoint when many commits overflow a small journal, checkpoint at
# sync and by the timer, wear-aware allocation, and fsck clean after each.
. tests/lib/common.sh
# Per-commit costs of the journal's mechanisms: every operation commits
# (commit=sync); group commit is tested in 007-sysfs and crash tests.
mount_vsmfs() {
	mount -t vsmfs -o commit=sync "$@" "$DEV" "$MNT"
}

S=/sys/fs/vsmfs/$(basename "$DEV")
POKE=$HELPERS/fspoke
st() { cat "$S/$1"; }

# 300 appends of 30 bytes to one file, each followed by fsync.
appends() {
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(300):
    os.write(fd, b"%029d\n" % i)
    os.fsync(fd)
os.close(fd)' "$1"
}

# Deltas on (the default) and off: journal bytes per commit.
per_commit() {	# mount options
	mkfs_vsmfs -f "$DEV"
	mount_vsmfs -o "$1"
	appends "$MNT/warm"
	echo 1 > "$S/reset"
	appends "$MNT/log"
	c=$(st trans_commits)
	[ "$c" -ge 300 ] || die "$c commits for 300 fsync'd appends"
	echo "$1: $c commits, journal $(st journal_bytes) bytes (full $(st journal_full_bytes)," \
		"delta $(st journal_delta_bytes), headers $(st journal_header_bytes))," \
		"$(st journal_delta_blocks) delta blocks, $(st journal_absorbed) absorbed," \
		"$(st journal_read_bytes) bytes read back" >&2
	# Deltas are computed in DRAM: a block is read back from PM at most
	# once, for its first delta since it was read from PM.
	[ $(( $(st journal_read_bytes) / 4096 * 10 )) -le "$(st journal_delta_blocks)" ] ||
		die "$1: $(st journal_read_bytes) bytes read back for $(st journal_delta_blocks) deltas"
	echo $(( $(st journal_bytes) / c ))
	umount "$MNT"
}
on=$(per_commit journal_delta=on)
off=$(per_commit journal_delta=off)
echo "journal bytes per fsync'd 30-byte append: delta on $on, off $off"
[ "$on" -lt 256 ] || die "delta on: $on journal bytes per commit, expected < 256"
[ "$off" -ge 4096 ] || die "delta off: $off journal bytes per commit, expected a block or more"

# Creates of small files: journal bytes per create with each mechanism off.
per_create() {	# mount options
	mkfs_vsmfs -f "$DEV"
	mount_vsmfs -o "$1"
	mkdir "$MNT/c"
	echo 1 > "$S/reset"
	python3 -c '
import os, sys
for i in range(500):
    with open(os.path.join(sys.argv[1], "f%d" % i), "w") as f:
        f.write("x" * 100)' "$MNT/c"
	echo $(( $(st journal_bytes) / 500 ))
	umount "$MNT"
}
c_on=$(per_create journal_delta=on)
c_off=$(per_create journal_delta=off)
c_nowear=$(per_create journal_wear=off)
echo "journal bytes per 100-byte file create: delta on $c_on, delta off $c_off," \
	"wear-aware off $c_nowear"
[ "$c_on" -lt "$c_off" ] || die "creates: delta on $c_on >= delta off $c_off journal bytes"

# Small updates with deltas: delta bytes well below full-block bytes, and the
# total is the sum of its parts.
mkfs_vsmfs -f "$DEV"
mount_vsmfs
echo 1 > "$S/reset"
mkdir "$MNT/d"
for i in $(seq 1 50); do echo "$i" > "$MNT/d/f$i"; done
assert_eq "$(st journal_bytes)" \
	"$(( $(st journal_full_bytes) + $(st journal_delta_bytes) + $(st journal_header_bytes) + $(st journal_fc_bytes) ))" \
	"journal_bytes = full + delta + header + fast-commit bytes"
[ "$(st journal_delta_blocks)" -gt 0 ] || die "no delta updates for 50 creates"
# A delta stores the words a commit changed, a quarter of a block at most
# here; a whole version stores only the words that differ from what the
# free journal block held (zeros, here: fewer than all of them).
[ $(( $(st journal_delta_bytes) * 4 )) -lt $(( $(st journal_delta_blocks) * 4096 )) ] ||
	die "delta bytes $(st journal_delta_bytes) for $(st journal_delta_blocks) blocks"
[ "$(st journal_full_bytes)" -lt $(( $(st journal_full_blocks) * 4096 )) ] ||
	die "full bytes $(st journal_full_bytes) for $(st journal_full_blocks) blocks"
# Before a checkpoint only commits write home: blocks of which the journal
# held no version (the new directory block here), the words that differ.
h0=$(st home_bytes)
[ "$h0" -le $(( $(st journal_home_blocks) * 4096 )) ] ||
	die "home bytes $h0 before a checkpoint, $(st journal_home_blocks) blocks written home"
[ "$(st journal_home_blocks)" -gt 0 ] || die "the new directory block went to the journal"
# sync checkpoints.
sync
[ "$(st journal_checkpoints)" -ge 1 ] || die "sync did not checkpoint"
[ "$(st home_bytes)" -gt "$h0" ] || die "checkpoint wrote nothing home"
# Only the words that differ from the home blocks.
[ $(( $(st home_bytes) - h0 )) -lt $(( $(st journal_checkpoint_blocks) * 4096 )) ] ||
	die "home bytes $(( $(st home_bytes) - h0 )) for $(st journal_checkpoint_blocks) blocks"
# The checkpoint pointer: the low 25 bits (the commit number has bits above).
assert_eq "$(( $("$POKE" "$DEV" jsb get checkpoint) & 0x1ffffff ))" 0 "journal after sync"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the delta workload"

# A 256 KiB journal (61 journal blocks) and 400 files: GC runs and reclaims
# blocks; checkpoints follow. Without GC only checkpoints make room.
churn() {	# in one process: a program started per file costs more than the file
	python3 -c '
import os, sys
m = sys.argv[1]
for i in range(1, 401):
    for name in ("f%d" % i, "g%d" % (i % 40)):
        with open(os.path.join(m, name), "w") as f:
            f.write("%d\n" % i)
    if i % 7 == 0:
        try:
            os.unlink(os.path.join(m, "f%d" % (i - 3)))
        except FileNotFoundError:
            pass' "$MNT"
}
mkfs_vsmfs -f -J 256K "$DEV"
mount_vsmfs -o checkpoint_threshold=60
echo 1 > "$S/reset"
churn
echo "small journal: $(st trans_commits) commits, $(st journal_gc_runs) GC runs reclaiming" \
	"$(st journal_gc_reclaimed), $(st journal_checkpoints) checkpoints of" \
	"$(st journal_checkpoint_blocks) blocks"
[ "$(st journal_gc_runs)" -gt 0 ] || die "no GC run"
[ "$(st journal_gc_reclaimed)" -gt 0 ] || die "GC reclaimed nothing"
[ "$(st journal_checkpoints)" -gt 0 ] || die "no checkpoint"
ls "$MNT" > /tmp/before
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after GC and checkpoints"
mount_vsmfs -o journal_gc=off
ls "$MNT" > /tmp/after
cmp /tmp/before /tmp/after || die "names changed across the remount"
echo 1 > "$S/reset"
churn
assert_eq "$(st journal_gc_runs)" 0 "GC runs with journal_gc=off"
[ "$(st journal_checkpoints)" -gt 0 ] || die "no checkpoint with journal_gc=off"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after checkpoints without GC"

# Wear: the same workload with wear-aware allocation on and off.
wear() {	# mount options
	mkfs_vsmfs -f -J 256K "$DEV"
	mount_vsmfs -o "$1"
	churn
	churn
	w=$(cat "$S/journal_wear")
	echo "$w" | grep -Eq '^width [0-9]+$' || die "journal_wear: $w"
	assert_eq "$(echo "$w" | grep -Ec '^[0-9]+ [0-9]+$')" 128 "histogram buckets"
	echo "$1: journal blocks $(echo "$w" | awk '$1 == "blocks" { print $2 }')," \
		"write count min $(echo "$w" | awk '$1 == "min" { print $2 }')" \
		"max $(echo "$w" | awk '$1 == "max" { print $2 }')" \
		"mean $(echo "$w" | awk '$1 == "mean" { print $2 }')," \
		"$(st journal_wear_swaps) wear swaps"
	umount "$MNT"
}
wear journal_wear=on
wear journal_wear=off

# One hot inode: 2000 fsync'd appends to one file change the same blocks in
# every commit. Deltas would rewrite their two journal blocks 1000 times
# each; wear-aware allocation moves them on once they are 64 writes ahead.
hot() {	# mount options; prints the highest write count
	mkfs_vsmfs -f -J 1M "$DEV"
	mount_vsmfs -o "$1"
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
for i in range(2000):
    os.write(fd, b"%029d\n" % i)
    os.fsync(fd)
os.close(fd)' "$MNT/hot"
	assert_eq "$(stat -c %s "$MNT/hot")" 60000 "hot file size"
	awk '$1 == "max" { print $2 }' "$S/journal_wear"
	umount "$MNT"
	"$FSCK" -n "$DEV" >/dev/null || die "fsck after the hot inode ($1)"
}
hot_on=$(hot journal_wear=on)
hot_off=$(hot journal_wear=off)
echo "hot inode, 2000 commits: highest journal block write count $hot_on with" \
	"wear-aware allocation, $hot_off without"
[ "$hot_off" -ge 500 ] || die "without wear-awareness deltas spread the writes ($hot_off)"
[ "$hot_on" -le 250 ] || die "wear-aware allocation let one block take $hot_on writes"

# The checkpoint timer: with checkpoint=1 a commit is checkpointed without a
# sync (waiting at most a minute for it).
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o checkpoint=1
echo 1 > "$S/reset"
echo x > "$MNT/timer"
n=0
while [ "$(st journal_checkpoints)" = 0 ] && [ $n -lt 60 ]; do
	sleep 1
	n=$((n + 1))
done
[ "$(st journal_checkpoints)" -gt 0 ] || die "no checkpoint from the timer"
umount "$MNT"
