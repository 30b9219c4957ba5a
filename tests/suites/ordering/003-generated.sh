# Generated crash workloads (gen.py): operations of every kind on the
# files, directories and links of a base tree, alone and in sequences of
# two and three with and without syncs between, under commit=sync and
# group commit, and one workload per class of bug Chipmunk found in PM
# file systems. Every crash point of each: the image must mount, pass
# fsck and hold the tree after a prefix of the operations that keeps
# every promise of the syncs returned; a sample of images is then used
# (everything created, read back, deleted). make test runs the chipmunk
# workloads and a seeded slice; VSMFS_GEN=long (make crash-long) the
# whole length-1 set and the samples, VSMFS_GEN_SHARD=I/N a shard of it.
. tests/lib/common.sh

load_pmlog_module
python3 tests/suites/ordering/gen.py "${VSMFS_GEN:-short}" \
	--seed "${VSMFS_GEN_SEED:-1}" --shard "${VSMFS_GEN_SHARD:-1/1}" \
	${VSMFS_GEN_ONLY:+--only "$VSMFS_GEN_ONLY"}
