# Negative control of the generated workloads: the fault point
# fsync_nocommit makes fsync return 0 without committing. Workloads of
# gen.py that make a change and fsync what they changed, under group
# commit, must pass unarmed and, armed, each have a crash image the
# oracle rejects for a promise of the fsync not kept.
. tests/lib/common.sh

pmlog_ko=$VSMFS_TOP/build/pmlog/vsmfs.ko
[ -f "$pmlog_ko" ] || die "$pmlog_ko not built: run make"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
rmmod vsmfs
trap 'umount "$MNT" 2>/dev/null || true; rmmod vsmfs; insmod "$MODULE"' EXIT
insmod "$pmlog_ko" pmlog_mb=64
[ -f /sys/kernel/debug/vsmfs/fsync_nocommit/interval ] ||
	die "the module has no fault point fsync_nocommit"
python3 tests/suites/ordering/gen.py control
