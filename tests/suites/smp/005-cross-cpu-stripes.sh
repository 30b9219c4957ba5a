# Overwrites on one CPU are seen by the next read on another, on eight
# vCPUs, where the lazy shootdown counts the swap batches of CPUs 0-3 and
# of CPUs 4-7 apart (two stripes, vsp.c): three pairs at once, each on a
# file of its own (tests/lib/crosscpu.py). Two readers (CPUs 0 and 1) have
# their writers in the other stripe (CPUs 4 and 5), so they must catch up
# with a stripe that is not their own, with the batches of two writers
# interleaved; the third reader (CPU 6) has its writer in its own stripe
# (CPU 7), beside the batches of the other two writers.
. tests/lib/common.sh
[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
mkfs_vsmfs -f "$DEV"
mount_vsmfs
export PYTHONPATH=tests/lib
pids=""
for pair in 0:4 1:5 6:7; do
	python3 tests/lib/crosscpu.py "$MNT/f${pair%:*}" "${pair%:*}" "${pair#*:}" 1500 \
		"${pair%:*}" &
	pids="$pids $!"
done
fail=0
for p in $pids; do
	wait "$p" || fail=1
done
[ $fail = 0 ] || die "a read missed an overwrite made on another CPU"
umount "$MNT"
