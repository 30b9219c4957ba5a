# A write() that fills a hole with data=inplace while a shared mapping of
# the hole is being faulted: once the write has returned, the mapping
# shows the data read() shows, never the zero page a fault mapped while
# the write was under way (tests/helpers/holefill-race.c: one page of a
# hole refaulted while it is written, over fresh and punched holes, round
# after round: the race is rare, seen in about 1 round in 1,500 when the
# write decided outside invalidate_lock whether to remove mappings, so
# many rounds run). With data=atomic as well, which removes the mappings
# of the range it writes, for fewer rounds.
. tests/lib/common.sh

RACE=$HELPERS/holefill-race
ROUNDS=${VSMFS_HOLEFILL_ROUNDS:-16000}

mkfs_vsmfs -f "$DEV"
for data in inplace atomic; do
	rounds=$ROUNDS
	[ $data = inplace ] || rounds=$((ROUNDS / 8))
	mount_vsmfs -o data=$data
	"$RACE" "$MNT/hf" "$rounds" > /tmp/holefill.out 2>&1 || {
		head -n 20 /tmp/holefill.out
		die "data=$data: the mapping of a filled hole differs from read()"
	}
	tail -n 1 /tmp/holefill.out
	rm "$MNT/hf"
	umount "$MNT"
done
