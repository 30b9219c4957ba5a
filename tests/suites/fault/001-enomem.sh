# Allocation failures injected during a workload (logical pages, metadata
# cache blocks, directory indexes, commits' frozen copies, through
# /sys/kernel/debug/vsmfs/): calls fail with ENOMEM and nothing else, the
# files written before are intact, and the file system is consistent after
# unmount.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -d $K ] || skip "module built without CONFIG_VSMFS_FAULT_INJECTION"
load="python3 tests/lib/faultload.py"

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

# A task about to change a block that a commit has still to write copies
# it for the commit; if it cannot allocate the copy, it waits for the
# commit to write the block. A commit that cannot allocate the buffer its
# page bitmap blocks are written from is placed and written under the
# lock. No call fails at all. Copies are made only when a block changes
# while its commit is in flight, so four more processes create and remove
# files meanwhile, and go on after the workload until an allocation has
# failed (how soon depends on how the vCPUs are scheduled; at most 60 s).
# Their calls must not fail either. Each operation commits (commit=sync),
# so that commits are in flight all the time.
mount -o remount,commit=sync "$MNT"
echo 1 > $K/journal_copy_alloc/interval
rm -f /tmp/bg.stop /tmp/bg.fail
for b in 1 2 3 4; do
	mkdir "$MNT/bg$b"
	(
		i=0
		while [ ! -e /tmp/bg.stop ]; do
			: > "$MNT/bg$b/f$((i % 50))" || echo "create f$((i % 50))" >> /tmp/bg.fail
			rm -f "$MNT/bg$b/f$(((i + 25) % 50))" || echo "rm" >> /tmp/bg.fail
			i=$((i + 1))
		done
	) 2>>/tmp/bg.fail &
done
rc=0
$load stress "$MNT" >/tmp/stress.out 2>&1 || rc=$?
n=0
while [ "$(cat $K/journal_copy_alloc/injected)" -eq 0 ] && [ $n -lt 60 ]; do
	sleep 1
	n=$((n + 1))
done
touch /tmp/bg.stop
wait
rm -rf "$MNT/bg1" "$MNT/bg2" "$MNT/bg3" "$MNT/bg4"
echo 0 > $K/journal_copy_alloc/interval
sed 's/^/  /' /tmp/stress.out
if [ -s /tmp/bg.fail ]; then
	sed 's/^/  /' /tmp/bg.fail
	die "background calls failed with journal_copy_alloc failing"
fi
[ $rc = 0 ] || die "errors with journal_copy_alloc failing"
echo "journal_copy_alloc: $(cat $K/journal_copy_alloc/injected) failures injected"
[ "$(cat $K/journal_copy_alloc/injected)" -gt 0 ] || die "no failure injected at journal_copy_alloc"
umount "$MNT"
"$FSCK" -n "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck after journal_copy_alloc"; }
mount_vsmfs
$load verify "$MNT"
umount "$MNT"
