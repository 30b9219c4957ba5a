# Allocation failures injected during a workload (logical pages, metadata
# cache blocks, directory indexes, commits' frozen copies, through
# /sys/kernel/debug/vsmfs/): calls fail with ENOMEM and nothing else, the
# files written before are intact, and the file system is consistent after
# unmount.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -d $K ] || skip "module built without CONFIG_VSMFS_FAULT_INJECTION"
load="python3 tests/crash/faultload.py"

mkfs_vsmfs -f "$DEV"
mount_vsmfs
$load prepare "$MNT"
for point in page_alloc mblk_alloc dir_index; do
	for interval in 1 2 5; do
		echo $interval > $K/$point/interval
		echo "$point every $interval:"
		rc=0
		$load stress "$MNT" ENOMEM >/tmp/stress.out 2>&1 || rc=$?
		echo 0 > $K/$point/interval
		sed 's/^/  /' /tmp/stress.out
		[ $rc = 0 ] || die "unexpected errors with $point failing"
		# Each round starts with the same free space.
		rm -rf "$MNT/work"
		# A fresh mount: the metadata cache and directory indexes
		# start empty, so the next round reaches their allocations.
		umount "$MNT"
		"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after $point"; }
		mount_vsmfs
		$load verify "$MNT"
	done
	echo "$point: $(cat $K/$point/injected) failures injected"
	[ "$(cat $K/$point/injected)" -gt 0 ] || die "no failure injected at $point"
done

# A commit that cannot allocate the frozen copies of its blocks writes them
# under the lock instead: no call fails at all. Copies are taken only when
# another transaction waits for the lock, so two more processes create and
# remove files meanwhile.
echo 1 > $K/journal_copy_alloc/interval
rm -f /tmp/bg.stop
for b in 1 2; do
	mkdir "$MNT/bg$b"
	(
		i=0
		while [ ! -e /tmp/bg.stop ]; do
			: > "$MNT/bg$b/f$((i % 50))"
			rm -f "$MNT/bg$b/f$(((i + 25) % 50))"
			i=$((i + 1))
		done
	) &
done
rc=0
$load stress "$MNT" >/tmp/stress.out 2>&1 || rc=$?
touch /tmp/bg.stop
wait
rm -rf "$MNT/bg1" "$MNT/bg2"
echo 0 > $K/journal_copy_alloc/interval
sed 's/^/  /' /tmp/stress.out
[ $rc = 0 ] || die "errors with journal_copy_alloc failing"
echo "journal_copy_alloc: $(cat $K/journal_copy_alloc/injected) failures injected"
[ "$(cat $K/journal_copy_alloc/injected)" -gt 0 ] || die "no failure injected at journal_copy_alloc"
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after journal_copy_alloc"; }
mount_vsmfs
$load verify "$MNT"
umount "$MNT"
