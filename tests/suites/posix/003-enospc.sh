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
# A file piece needs contiguous logical pages; what is left when a 64 MiB
# write fails is scattered single pages (index and directory blocks).
avail=$(stat -f -c %a "$MNT")
total=$(stat -f -c %b "$MNT")
[ $((avail * 100)) -lt "$total" ] || die "$avail of $total blocks left when full"
rm -f "$MNT"/fill*
second=$(fill)
assert_eq "$second" "$first" "capacity after delete and refill"
echo "capacity ${first} KiB"
rm -f "$MNT"/fill*
umount "$MNT"
