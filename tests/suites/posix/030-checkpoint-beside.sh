# A checkpoint runs beside handles: the timer's (checkpoint=) holds only
# the journal's placement mutex, never the transaction mutex that stops
# every handle, while it copies the journal's latest versions home. After
# files are created and committed, the checkpoints of five idle seconds
# empty the journal (journal_checkpoints) with no take of the transaction
# mutex (journal_lock_takes); the files are there after a remount. Then
# commits are timed: commit_ns, and commit_excl_ns no longer. A large
# transaction (2,000 creates, no fsync) is committed by sync as a small
# one is: its blocks frozen and the transaction mutex handed over before
# they are placed and written (journal_pipelined counts every commit).
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
# No commit by the timer; a checkpoint every two seconds.
mount_vsmfs -o commit=300,checkpoint=2
S=/sys/fs/vsmfs/$(basename "$DEV")
mkdir "$MNT/d"
# A checkpoint between the commit and the reset would leave the journal
# empty for the window: then again, with more files.
for try in 1 2 3; do
	for i in 0 1 2 3 4 5 6 7; do
		: > "$MNT/d/f$try$i"
	done
	python3 -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_RDONLY))' "$MNT/d"
	echo 1 > "$S/reset"
	sleep 5
	ckpts=$(cat "$S/journal_checkpoints")
	takes=$(cat "$S/journal_lock_takes")
	echo "try $try: $ckpts checkpoints ($(cat "$S/journal_checkpoint_blocks") blocks home)" \
		"in five idle seconds, transaction mutex taken $takes times"
	assert_eq "$takes" 0 "transaction mutex takes while the timer checkpoints"
	[ "$ckpts" -ge 1 ] && break
done
[ "$ckpts" -ge 1 ] || die "no checkpoint of a committed change in five seconds with checkpoint=2"
umount "$MNT"
mount_vsmfs
for i in 0 1 2 3 4 5 6 7; do
	[ -f "$MNT/d/f1$i" ] || die "d/f1$i missing after a remount"
done
# Commits are timed: in all (commit_ns), and the part that keeps every
# other handle out (commit_excl_ns), which is no longer.
echo 1 > "$S/reset"
for i in $(seq 1 20); do
	: > "$MNT/d/t$i"
	sync
done
total=$(cat "$S/commit_ns")
excl=$(cat "$S/commit_excl_ns")
echo "20 commits: $total ns, $excl ns of them with every other handle kept out"
[ "$total" -gt 0 ] && [ "$excl" -gt 0 ] || die "commits not timed ($total, $excl ns)"
[ "$excl" -le "$total" ] || die "commit_excl_ns ($excl) above commit_ns ($total)"
mkdir "$MNT/big"
sync
echo 1 > "$S/reset"
(cd "$MNT/big" && for i in $(seq 1 2000); do : > "f$i"; done)
sync
commits=$(cat "$S/trans_commits")
piped=$(cat "$S/journal_pipelined")
blocks=$(cat "$S/journal_deferred_blocks")
echo "2,000 creates then sync: $commits commits, $piped pipelined, $blocks blocks" \
	"placed and written after the transaction mutex was handed over"
[ "$commits" -ge 1 ] || die "no commit of 2,000 creates"
assert_eq "$piped" "$commits" "commits pipelined"
[ "$blocks" -gt 64 ] || die "only $blocks blocks written outside the transaction mutex"
[ "$(ls "$MNT/big" | wc -l)" = 2000 ] || die "files of big/ missing"
umount "$MNT"
mount_vsmfs
[ "$(ls "$MNT/big" | wc -l)" = 2000 ] || die "files of big/ missing after a remount"
umount "$MNT"
