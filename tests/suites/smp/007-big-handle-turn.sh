# A handle that needs the whole journal gets its turn beside writers that
# keep ending handles in the running transaction: two fio jobs overwrite
# 4 KiB pages of one file at random (shared handles), and a third creates
# small files, writes them a page at a time and removes them (shared
# metadata handles, appends under the transaction mutex), while
# fallocate -c and fallocate -i (collapse and insert range, each of which
# asks for the whole journal) run 40 times in turn on another file. The
# journal is 128 KiB (32 blocks), so that every handle of an append needs
# all of it too. Each fallocate must complete within 60 s, beside the
# writers: the slowest took under 10 s under emulation on a loaded host,
# and without a turn one can commit tiny transactions for as long as the
# writers run. Most handles of the appends need a turn here (trans_turns),
# which the others, shared ones included, wait for (trans_turn_waits).
# Without turns the full-journal commits run into the tens of thousands:
# fewer than 20,000 are allowed. The file then holds the pages the
# collapses and inserts imply, also after a remount; fsck finds nothing.
. tests/lib/common.sh

[ "$(nproc)" -ge 2 ] || die "the test needs 2 CPUs, the VM has $(nproc)"
mkfs_vsmfs -f -J 128K "$DEV"
mount_vsmfs
head -c 16M /dev/urandom > "$MNT/load"
sync
turns0=$(counter trans_turns)
python3 tests/lib/shiftload.py run "$MNT/shifted" "$MNT/load" 7 40 60 /tmp/shift.model \
	"$MNT/small"
full=$(counter commits_full)
echo "$(($(counter trans_turns) - turns0)) turns taken," \
	"$(counter trans_turn_waits) handles waited for one," \
	"$full commits for a full journal"
# Without turns the big handles commit tiny transactions again and again
# while the writers end handles in each new one: 54,811 such commits in
# one run of the module before turns (whose fallocates still completed
# within the bound there), 1,621 with them.
[ "$full" -lt 20000 ] || die "$full commits for a full journal: big handles did not get a turn"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the collapses and inserts"
mount_vsmfs
python3 tests/lib/shiftload.py check "$MNT/shifted" /tmp/shift.model
umount "$MNT"
