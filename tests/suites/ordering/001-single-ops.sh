# Persistence ordering of single operations: each one alone on a fresh
# file system, its stores (cached and non-temporal), flushes and fences
# logged by the instrumented module, and every crash image the log allows
# (within the bounds of ordering.py) mounted, checked with fsck and
# compared with the trees before and after the operation.
# VSMFS_ORDERING=long for the long run (make ordering-test),
# VSMFS_ORDERING_SEED for its random subsets.
. tests/lib/common.sh

pmlog_ko=$VSMFS_TOP/build/pmlog/vsmfs.ko
[ -f "$pmlog_ko" ] || die "$pmlog_ko not built: run make"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
rmmod vsmfs
trap 'umount "$MNT" 2>/dev/null || true; rmmod vsmfs; insmod "$MODULE"' EXIT
insmod "$pmlog_ko" pmlog_mb=64
python3 tests/suites/ordering/ordering.py "${VSMFS_ORDERING:-short}" \
	--seed "${VSMFS_ORDERING_SEED:-1}" --workloads single \
	--optsets "${VSMFS_ORDERING_OPTSETS:-}"
