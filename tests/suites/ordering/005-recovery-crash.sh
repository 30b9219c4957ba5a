# Crashes during recovery: crash images of workloads that leave recovery
# work (committed transactions to replay, journal garbage collection and
# checkpoints cut short, orphans, a hot-inode migration) are mounted with
# the log on, and the recovery each mount makes is cut at every one of
# its crash points: each image of those must mount, pass fsck and hold
# the tree of the uninterrupted recovery. VSMFS_RECOVERY=long for the long run (make
# crash-recovery), VSMFS_RECOVERY_SEED for its samples.
. tests/lib/common.sh

load_pmlog_module
python3 tests/suites/ordering/recovery.py "${VSMFS_RECOVERY:-short}" \
	--seed "${VSMFS_RECOVERY_SEED:-1}" ${VSMFS_RECOVERY_ONLY:+--only "$VSMFS_RECOVERY_ONLY"}
