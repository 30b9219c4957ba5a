# Random operations against an in-memory model (tests/helpers/vsmfs-fsx):
# 50,000 operations in four seeded runs of two files each, two runs at a
# time on the same mount. The optional operation classes (fallocate modes,
# mmap, MAP_SYNC, SEEK_DATA/SEEK_HOLE, FIEMAP) and the hole checks (-G: page
# by page, SEEK_DATA/SEEK_HOLE, FIEMAP and st_blocks agree with what was
# written, allocated and punched) are those a probe on the mount finds
# supported; the probe result is printed.
. tests/lib/common.sh

FSX=$HELPERS/vsmfs-fsx
OPS=${VSMFS_FSX_OPS:-12500}
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
for pair in "1 2" "3 4"; do
	set -- $pair
	run "$1" & p1=$!
	run "$2" & p2=$!
	wait $p1 || failed="$failed $1"
	wait $p2 || failed="$failed $2"
	for s in $pair; do
		cat /tmp/fsx.$s.out
	done
done
[ -z "$failed" ] || die "vsmfs-fsx failed for seed(s)$failed"
echo "$((4 * OPS)) operations passed"

rm -f "$MNT"/fsx*
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after deleting the files"
umount "$MNT"
