# ENOSPC: fill the device, delete, fill again: the same capacity.
. tests/lib/common.sh

# A journal whose atomic write limit (vsmfs(5)) holds the 1 MiB writes
# whole, so that both fills grow their runs the same way.
"$MKFS" -q -f -J 4M "$DEV"
mount_vsmfs
fill() {
	i=0
	while dd if=/dev/zero of="$MNT/fill$i" bs=1M count=64 2>/tmp/dd.err; do
		i=$((i + 1))
	done
	grep -q "No space left on device" /tmp/dd.err || { cat /tmp/dd.err; die "no ENOSPC"; }
	du -sk "$MNT" | cut -f1
}
first=$(fill)
# A growing run takes its frames wherever they are free (frames_gathered):
# the 1 MiB write that fails finds fewer free pages than it needs (256,
# and an index block).
avail=$(stat -f -c %a "$MNT")
total=$(stat -f -c %b "$MNT")
[ "$avail" -le 257 ] || die "a 1 MiB write failed with $avail of $total blocks free"
rm -f "$MNT"/fill*
# Single-page overwrites on both CPUs fill the per-CPU page pools; the
# pooled pages count as free, and give no less capacity: the handles of
# the next fill give them back once space runs short.
S=/sys/fs/vsmfs/$(basename "$DEV")
dd if=/dev/urandom of=/tmp/pool.ref bs=1M count=4 2>/dev/null
cp /tmp/pool.ref "$MNT/pool"
sync
free0=$(stat -f -c %f "$MNT")
pooled0=$(cat "$S/alloc_pool_pages")
for cpu in 0 1; do
	taskset -c $cpu dd if=/dev/urandom of=/tmp/pool.$cpu bs=4k count=128 2>/dev/null
	taskset -c $cpu dd if=/tmp/pool.$cpu of="$MNT/pool" bs=4k seek=$((cpu * 128)) \
		conv=notrunc 2>/dev/null || die "4 KiB overwrites on CPU $cpu failed"
	dd if=/tmp/pool.$cpu of=/tmp/pool.ref bs=4k seek=$((cpu * 128)) conv=notrunc 2>/dev/null
done
cmp "$MNT/pool" /tmp/pool.ref || die "4 KiB overwrites from page pools: wrong content"
pooled=$(($(cat "$S/alloc_pool_pages") - pooled0))
[ "$pooled" -ge 200 ] || die "only $pooled of 256 single-page overwrites used a page pool"
sync
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after overwrites (pooled pages count as free)"
rm -f "$MNT/pool"
second=$(fill)
assert_eq "$second" "$first" "capacity after delete and refill"
# What the big writes left is scattered single pages: 4 KiB files take
# them all, pooled ones included, but the 4 a write keeps in hand for
# index blocks (vsmfs_cow_pages()).
python3 - "$MNT/small" <<'PY' || die "small files until ENOSPC"
import errno, os, sys
os.mkdir(sys.argv[1])
n = synced = 0
while True:
    try:
        with open(f"{sys.argv[1]}/{n}", "wb") as f:
            f.write(b"s" * 4096)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        st = os.statvfs(sys.argv[1])
        print(f"ENOSPC after {n} small files, {st.f_bfree} blocks free")
        if synced:
            break
        # Pages freed by the running transaction are free once it commits.
        os.sync()
        synced = 1
        continue
    n += 1
PY
left=$(stat -f -c %f "$MNT")
[ "$left" -le 4 ] || die "$left blocks reported free after ENOSPC for 4 KiB files"
echo "capacity ${first} KiB"
rm -f "$MNT"/fill*
umount "$MNT"
