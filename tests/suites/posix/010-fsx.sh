# Random operations against an in-memory model (tests/helpers/vsmfs-fsx):
# 12,500 operations (VSMFS_FSX_OPS) in each of two seeded runs of two
# files each (VSMFS_FSX_SEEDS, "1 2"; make fsx-test takes eight), two runs
# at a time on the same mount. The optional operation classes (fallocate modes,
# mmap, MAP_SYNC, SEEK_DATA/SEEK_HOLE, FIEMAP) and the hole checks (-G: page
# by page, SEEK_DATA/SEEK_HOLE, FIEMAP and st_blocks agree with what was
# written, allocated and punched) are those a probe on the mount finds
# supported; the probe result is printed.
. tests/lib/common.sh

FSX=$HELPERS/vsmfs-fsx
OPS=${VSMFS_FSX_OPS:-12500}
SEEDS=${VSMFS_FSX_SEEDS:-1 2}
[ -x "$FSX" ] || die "$FSX not built (make -C tests/unit)"

mkfs_vsmfs -f "$DEV"
mount_vsmfs
opts=$("$FSX" -P "$MNT")
echo "optional operations in use: ${opts:-none}"
free0=$(stat -f -c %f "$MNT")

# run SEED: one tester process on two files of its own.
run() {
	# shellcheck disable=SC2086
	"$FSX" -q -S "$1" -N "$OPS" -s 16M -l 8M $opts "$MNT/fsx$1.a" "$MNT/fsx$1.b" \
		>/tmp/fsx.$1.out 2>&1
}
failed=
runs=0
# shellcheck disable=SC2086
set -- $SEEDS
while [ $# -gt 0 ]; do
	run "$1" & p1=$!
	s1=$1
	shift
	s2=
	if [ $# -gt 0 ]; then
		run "$1" & p2=$!
		s2=$1
		shift
	fi
	wait $p1 || failed="$failed $s1"
	cat /tmp/fsx.$s1.out
	runs=$((runs + 1))
	if [ -n "$s2" ]; then
		wait $p2 || failed="$failed $s2"
		cat /tmp/fsx.$s2.out
		runs=$((runs + 1))
	fi
done
[ -z "$failed" ] || die "vsmfs-fsx failed for seed(s)$failed"
[ "$runs" -gt 0 ] || die "no seed given (VSMFS_FSX_SEEDS)"
echo "$((runs * OPS)) operations passed"

rm -f "$MNT"/fsx*
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after deleting the files"
umount "$MNT"
