# Persistence ordering of concurrent workloads: two tasks, each pinned to a
# CPU of its own (or moved between CPUs all along), doing operations at
# the same time, so that commits are in flight together and the log holds
# the flushes and fences of several CPUs and tasks. Each task marks the log
# as each of its operations returns; every crash image checked (a sample of
# the crash points in the short run) must mount, pass fsck, and hold for
# each task the state after the operations it had returned from, or after
# one more. A commit that makes its ordering fence on the wrong CPU must be
# caught. VSMFS_ORDERING=long for the long run (make ordering-test):
# every crash point.
. tests/lib/common.sh

pmlog_ko=$VSMFS_TOP/build/pmlog/vsmfs.ko
[ -f "$pmlog_ko" ] || die "$pmlog_ko not built: run make"
[ "$(nproc)" -ge 2 ] || die "the concurrent workloads need 2 CPUs, the VM has $(nproc)"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
rmmod vsmfs
trap 'umount "$MNT" 2>/dev/null || true; rmmod vsmfs; insmod "$MODULE"' EXIT
insmod "$pmlog_ko" pmlog_mb=64
python3 tests/suites/ordering/ordering.py "${VSMFS_ORDERING:-short}" \
	--seed "${VSMFS_ORDERING_SEED:-1}" --workloads concurrent \
	--optsets "${VSMFS_ORDERING_OPTSETS:-}" ${VSMFS_ORDERING_ONLY:+--only "$VSMFS_ORDERING_ONLY"}
