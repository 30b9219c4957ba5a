# Counters in /sys/fs/vsmfs/<device>/: present while mounted, one number per
# file (but "journal_wear", "errors" and "bad_frames", several lines each), counting what
# a workload did, reset by writing 1 to "reset", gone
# after unmount.
. tests/lib/common.sh

S=/sys/fs/vsmfs/$(basename "$DEV")
mkfs_vsmfs -f "$DEV"
# A commit interval the test never reaches: commits only when asked.
mount_vsmfs -o commit=300
[ -d "$S" ] || die "$S missing while mounted"
for f in "$S"/*; do
	case $(basename "$f") in reset|journal_wear|errors|bad_frames) continue ;; esac
	grep -Eqx '[0-9]+' "$f" || die "$f does not hold one number: $(cat "$f")"
done
echo 1 > "$S/reset"
assert_eq "$(cat "$S/inodes_created")" 0 "inodes_created after reset"
mkdir "$MNT/d"
for i in $(seq 1 25); do : > "$MNT/d/f$i"; done
assert_eq "$(cat "$S/inodes_created")" 26 "inodes_created after 25 files and a directory"
# 26 operations in the running transaction, none committed yet.
assert_eq "$(cat "$S/trans_commits")" 0 "trans_commits before any fsync"
# An fsync commits them all at once; a second finds nothing to commit.
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.fsync(fd)' "$MNT/d/f25"
assert_eq "$(cat "$S/trans_commits")" 1 "trans_commits after two fsyncs"
assert_eq "$(cat "$S/commits_fsync")" 1 "commits_fsync after two fsyncs"
h=$(cat "$S/trans_handles")
[ "$h" -ge 26 ] || die "trans_handles $h < 26 for 26 creates"
# sync commits what runs; commit=sync commits every operation.
: > "$MNT/d/g1"
sync
assert_eq "$(cat "$S/commits_syncfs")" 1 "commits_syncfs after sync"
mount -o remount,commit=sync "$MNT"
grep -q "$MNT vsmfs .*commit=sync" /proc/mounts || die "commit=sync not in /proc/mounts"
c0=$(cat "$S/commits_sync")
for i in 1 2 3; do : > "$MNT/d/h$i"; done
c=$(cat "$S/commits_sync")
[ $((c - c0)) -ge 3 ] || die "commit=sync: $((c - c0)) commits for 3 creates"
expect_fail sh -c "echo 2 > $S/reset"
expect_fail cat "$S/reset"
echo 1 > "$S/reset"
assert_eq "$(cat "$S/inodes_created")" 0 "inodes_created after the second reset"
umount "$MNT"
[ ! -e "$S" ] || die "$S still there after unmount"
