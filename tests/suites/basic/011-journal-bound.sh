# Transactions never outgrow the journal. On the smallest journal mkfs
# makes: a 16 MiB write() and a 16 MiB overwrite with each cow= mode, then
# deleting and truncating sparse files of 100 GiB whose index spans 100
# index blocks, all succeed, read back, leave fsck clean and free the
# space. An overflow forced by a fault point commits nothing and makes
# the file system read-only. The longest atomic write in sysfs is the one
# the formula of vsmfs(5) gives for the journal size, and the mount says
# it too.
. tests/lib/common.sh

S=/sys/fs/vsmfs/$(basename "$DEV")

# The formula of vsmfs(5): the longest write() anywhere in a file whose
# worst case of dirty metadata blocks fits in J journal blocks.
atomic_max() {	# journal-blocks cow-mode
	python3 - "$1" "$2" <<'PY'
import sys
J, cow = int(sys.argv[1]), sys.argv[2]
def blocks(n):
    keys = -(-(n - 1) // (2 << 20)) + 1
    pages = -(-(n - 1) // 4096) + 1
    b = 1 + (4 if keys == 1 else 2 * (2 + -(-keys // 512)))
    return b + (5 * keys if cow == "superpage" else 6 * keys + pages)
lo, hi = 1, 64 << 20
while lo < hi:
    mid = lo + (hi - lo + 1) // 2
    if blocks(mid) <= J:
        lo = mid
    else:
        hi = mid - 1
print(lo)
PY
}
start=$(date +%s)
took() { echo "$(($(date +%s) - start))s"; }
jblocks() { awk '$1 == "blocks" { print $2 }' "$S/journal_wear"; }
no_overflow() {
	if dmesg | grep -q "journal blocks: not committed"; then
		dmesg | grep vsmfs | tail -n 5
		die "$1: a transaction overflowed the journal"
	fi
}

head -c 16M /dev/urandom > /tmp/jb-a
head -c 16M /dev/urandom > /tmp/jb-b
# What the file holds after the overwrite at 4 KiB: a's first page, then b.
{ head -c 4096 /tmp/jb-a; cat /tmp/jb-b; } > /tmp/jb-want

for cow in multi page superpage; do
	mkfs_vsmfs -f -J 64K "$DEV"
	dmesg -C
	mount_vsmfs -o cow=$cow
	j=$(jblocks)
	want=$(atomic_max "$j" $cow)
	assert_eq "$(cat "$S/atomic_write_max")" "$want" "cow=$cow: atomic_write_max with $j journal blocks"
	dmesg_has "every write\(\) of up to $want bytes is atomic"
	echo "cow=$cow: $j journal blocks, writes of up to $want bytes atomic ($(took))"
	# One write() of 16 MiB, then one overwriting it from its second page.
	dd if=/tmp/jb-a of="$MNT/f" bs=16M count=1 status=none
	cmp /tmp/jb-a "$MNT/f" || die "cow=$cow: 16 MiB write reads back wrong"
	dd if=/tmp/jb-b of="$MNT/f" bs=16M count=1 seek=4096 oflag=seek_bytes conv=notrunc \
		status=none
	cmp /tmp/jb-want "$MNT/f" || die "cow=$cow: 16 MiB overwrite reads back wrong"
	no_overflow "cow=$cow"
	touch "$MNT/still-writable" || die "cow=$cow: read-only after the writes"
	umount "$MNT"
	"$FSCK" -n "$DEV" || die "cow=$cow: fsck after the writes"
	mount_vsmfs
	cmp /tmp/jb-want "$MNT/f" || die "cow=$cow: file changed across the remount"
	umount "$MNT"
done
rm -f /tmp/jb-a /tmp/jb-b /tmp/jb-want

# The journal size sets the limit: a 256 KiB journal, and one of 128 MiB,
# the default on a device of 2 GiB and more, which allows 64 MiB. The
# limit follows the cow= mode of a remount.
for j in 256K 128M; do
	mkfs_vsmfs -f -J $j "$DEV"
	mount_vsmfs
	jb=$(jblocks)
	for cow in multi page superpage; do
		mount -o remount,cow=$cow "$MNT"
		want=$(atomic_max "$jb" $cow)
		assert_eq "$(cat "$S/atomic_write_max")" "$want" \
			"cow=$cow: atomic_write_max with a journal of $j"
	done
	umount "$MNT"
	echo "journal $j: $jb blocks, writes of up to $want bytes atomic (cow=$cow, $(took))"
done
[ "$want" = $((64 << 20)) ] || die "a 128 MiB journal allows atomic writes of $want bytes"

# A page every GiB: each piece of the file has an index block of its own.
sparse() {	# file
	python3 - "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
for k in range(1, 101):
    os.pwrite(fd, b"%4095d\n" % k, k << 30)
os.close(fd)
PY
}
mkfs_vsmfs -f -J 64K "$DEV"
dmesg -C
mount_vsmfs
# The root directory's first block comes with the first name.
touch "$MNT/big1" "$MNT/big2"
free0=$(free_blocks)
sparse "$MNT/big1"
sparse "$MNT/big2"
assert_eq "$(stat -c %s "$MNT/big1")" $(((100 << 30) + 4096)) "size of the sparse file"
[ "$(free_blocks)" -lt $((free0 - 200)) ] || die "the sparse files take no space"
rm "$MNT/big1"
truncate -s 0 "$MNT/big2"
no_overflow "unlink and truncate"
assert_eq "$(stat -c %s "$MNT/big2")" 0 "size after truncate"
echo "unlink and truncate done ($(took))"
assert_eq "$(free_blocks)" "$((free0 - 0))" "free blocks after unlink and truncate"
touch "$MNT/still-writable" || die "read-only after unlink and truncate"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after unlink and truncate"
mount_vsmfs
assert_eq "$(free_blocks)" "$free0" "free blocks after the remount"
umount "$MNT"

# An overflow that still happens commits nothing, is a recorded error and
# (errors=remount-ro) stops writing. The
# trans_overflow fault point makes a transaction overflow at once.
knob=/sys/kernel/debug/vsmfs/trans_overflow/interval
[ -w "$knob" ] || die "fault point $knob missing"
mkfs_vsmfs -f "$DEV"
mount_vsmfs
head -c 1M /dev/urandom > /tmp/jb-old
cp /tmp/jb-old "$MNT/f"
sync
dmesg -C
echo 1 > "$knob"
# A write past the end, in a transaction of its own: an overwrite may end
# in a shared handle, which the fault point does not reach.
if dd if=/dev/zero of="$MNT/f" bs=64K seek=16 count=1 conv=notrunc status=none 2>/tmp/jb-err; then
	echo 0 > "$knob"
	die "a write whose transaction overflowed succeeded"
fi
echo 0 > "$knob"
echo "  (expected) $(cat /tmp/jb-err)"
dmesg_has "journal blocks: not committed"
dmesg_has "file system made read-only after an error"
expect_fail touch "$MNT/new"
cmp /tmp/jb-old "$MNT/f" || die "the write whose transaction overflowed changed the file"
umount "$MNT"
# The overflow is a recorded file system error: fsck reports it and clears
# it, and nothing else is wrong.
rc=0
"$FSCK" -n "$DEV" >/tmp/jb-fsck 2>&1 || rc=$?
[ $rc = 4 ] || { cat /tmp/jb-fsck; die "fsck -n after the overflow exited $rc, expected 4"; }
grep -qi error /tmp/jb-fsck || { cat /tmp/jb-fsck; die "fsck -n does not name the recorded error"; }
"$FSCK" -y "$DEV" >/dev/null 2>&1 || true
"$FSCK" -n "$DEV" || die "fsck after clearing the recorded error"
mount_vsmfs
cmp /tmp/jb-old "$MNT/f" || die "the write whose transaction overflowed reached PM"
touch "$MNT/new" || die "read-only after a remount"
umount "$MNT"
rm -f /tmp/jb-old /tmp/jb-err
