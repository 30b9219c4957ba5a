# A copy-on-write overwrite on one CPU is seen by a read on another CPU
# that starts after the write returned, even when that CPU read the same
# pages just before: no stale translation of the mapping layer survives an
# overwrite (tests/lib/crosscpu.py: the writer on CPU 1, the reader on CPU
# 0, 4 KiB, 1 KiB, two-page and 64 KiB writes, bursts of more batches than
# are logged). Both shootdown modes: tlb=lazy (the default) and tlb=eager.
. tests/lib/common.sh

[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
for tlb in lazy eager; do
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o tlb=$tlb
if [ $tlb = eager ]; then
	grep -q "^$DEV $MNT vsmfs .*,tlb=eager" /proc/mounts || die "tlb=eager not in /proc/mounts"
else
	! grep -q "^$DEV $MNT vsmfs .*tlb=" /proc/mounts || die "default tlb= shown in /proc/mounts"
fi
echo "tlb=$tlb:"
PYTHONPATH=tests/lib python3 tests/lib/crosscpu.py "$MNT/shared" 0 1 3000 7 ||
	die "a read on CPU 0 missed an overwrite on CPU 1 (tlb=$tlb)"
umount "$MNT"
done
