# Negative control of the generated workloads: the fault point
# fsync_nocommit makes fsync return 0 without committing. Workloads of
# gen.py that make a change and fsync what they changed, under group
# commit, must pass unarmed and, armed, each have a crash image the
# oracle rejects for a promise of the fsync not kept.
. tests/lib/common.sh

load_pmlog_module
[ -f /sys/kernel/debug/vsmfs/fsync_nocommit/interval ] ||
	die "the module has no fault point fsync_nocommit"
python3 tests/suites/ordering/gen.py control
