# Overwrites on one CPU are seen by the next read on another, on eight
# vCPUs, with each CPU counting its swap batches in a stripe of its own
# (vsp.c), then with the module loaded with tlb_stripes=2, where CPUs 0-3
# and CPUs 4-7 share a stripe each, as CPUs beyond the sixteenth do. Three
# pairs at once, each on a file of its own (tests/lib/crosscpu.py). Two
# readers (CPUs 0 and 1) have their writers in another stripe (CPUs 4 and
# 5), so they must catch up with a stripe that is not their own, with the
# batches of two writers interleaved in it when stripes are shared; the
# third reader (CPU 6) has its writer (CPU 7) in its own stripe when
# stripes are shared, beside the batches of the other two writers.
. tests/lib/common.sh
[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
export PYTHONPATH=tests/lib

pairs() {
	mkfs_vsmfs -f "$DEV"
	mount_vsmfs
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
	[ $fail = 0 ] || die "$1: a read missed an overwrite made on another CPU"
	umount "$MNT"
}

reload() {
	rmmod vsmfs || die "cannot unload vsmfs"
	insmod "$MODULE" "$@" || die "insmod $MODULE $* failed"
}

pairs "a stripe per CPU"
# The rest of the group runs with the default layout, whatever happens here.
trap 'umount "$MNT" 2>/dev/null || true; rmmod vsmfs; insmod "$MODULE"' EXIT
reload tlb_stripes=2
[ "$(cat /sys/module/vsmfs/parameters/tlb_stripes)" = 2 ] || die "tlb_stripes did not take"
pairs "CPUs 0-3 and 4-7 sharing stripes"
