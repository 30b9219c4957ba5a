# Persistence ordering of single operations: each one alone on a fresh
# file system, its stores (cached and non-temporal), flushes and fences
# logged by the instrumented module, and every crash image the log allows
# (within the bounds of ordering.py) mounted, checked with fsck and
# compared with the trees before and after the operation.
# VSMFS_ORDERING=long for the long run (make ordering-test),
# VSMFS_ORDERING_SEED for its random subsets.
. tests/lib/common.sh

load_pmlog_module
python3 tests/suites/ordering/ordering.py "${VSMFS_ORDERING:-short}" \
	--seed "${VSMFS_ORDERING_SEED:-1}" --workloads single \
	--optsets "${VSMFS_ORDERING_OPTSETS:-}"
