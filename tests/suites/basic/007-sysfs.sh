# Counters in /sys/fs/vsmfs/<device>/: present while mounted, one number per
# file (but "journal_wear" and "errors", several lines each), counting what
# a workload did, reset by writing 1 to "reset", gone
# after unmount.
. tests/lib/common.sh

S=/sys/fs/vsmfs/$(basename "$DEV")
mkfs_vsmfs -f "$DEV"
mount_vsmfs
[ -d "$S" ] || die "$S missing while mounted"
for f in "$S"/*; do
	case $(basename "$f") in reset|journal_wear|errors) continue ;; esac
	grep -Eqx '[0-9]+' "$f" || die "$f does not hold one number: $(cat "$f")"
done
echo 1 > "$S/reset"
assert_eq "$(cat "$S/inodes_created")" 0 "inodes_created after reset"
mkdir "$MNT/d"
for i in $(seq 1 25); do : > "$MNT/d/f$i"; done
assert_eq "$(cat "$S/inodes_created")" 26 "inodes_created after 25 files and a directory"
c=$(cat "$S/trans_commits")
[ "$c" -ge 26 ] || die "trans_commits $c < 26"
expect_fail sh -c "echo 2 > $S/reset"
expect_fail cat "$S/reset"
echo 1 > "$S/reset"
assert_eq "$(cat "$S/inodes_created")" 0 "inodes_created after the second reset"
umount "$MNT"
[ ! -e "$S" ] || die "$S still there after unmount"
