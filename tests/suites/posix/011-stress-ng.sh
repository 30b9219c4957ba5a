# stress-ng file system stressors in the vsmfs mount, one stressor at a
# time (two instances, two seconds each, with --verify). A stressor passes
# if stress-ng reports no failure and did not skip it: a stressor that
# finds an operation missing says "skipping stressor" and may still exit
# 0. Only stressors that need an operation vsmfs does not implement may
# skip (listed in ALLOWED_SKIP with the reason); any other skip, failure or
# crash fails the test. Free blocks and inodes
# must be back where they were after each stressor has removed its files.
. tests/lib/common.sh

command -v stress-ng >/dev/null || die "stress-ng not installed (tests/setup)"
SECS=${VSMFS_STRESS_SECS:-2}
STRESSORS="access chdir chmod chown copy-file dentry dir dirdeep dirmany fallocate
	fcntl fiemap file-ioctl filename flock fpunch fsize fstat getdent hdd
	inode-flags io iomix link locka lockf lockofd mknod open readahead rename
	seek symlink sync-file touch utime xattr"
# Operations vsmfs has no support for: the inode flags ioctls
# (FS_IOC_GETFLAGS/FS_IOC_SETFLAGS: append-only, immutable, ...). The
# stress-ng of Debian 12 runs inode-flags all the same, every ioctl of it
# refused with ENOTTY; a stress-ng that checks first skips it.
ALLOWED_SKIP="inode-flags"
SIZES="--hdd-bytes 32M --iomix-bytes 32M --fallocate-bytes 32M --seek-size 32M
	--readahead-bytes 16M --sync-file-bytes 16M --dirmany-bytes 0"

mkfs_vsmfs -f "$DEV"
mount_vsmfs
# fsize writes at offsets up to the largest a file may have. A module whose
# s_maxbytes is above the documented largest file size (8 + 512 + 512 * 512
# pieces of 2 MiB, see 012-limits) refuses those writes only in the file
# index, after allocating: that is a failure, and fsize is not run.
passed= skipped= failed= leaked=
largest=$(( (8 + 512 + 512 * 512) << 21 ))
if truncate -s $((largest + 1)) "$MNT/probe" 2>/dev/null; then
	echo "fsize: s_maxbytes is larger than the documented largest file size $largest"
	STRESSORS=$(echo $STRESSORS | sed 's/ fsize / /')
	failed=" fsize"
fi
rm -f "$MNT/probe"
mkdir "$MNT/stress"
touch "$MNT/stress/x" && rm "$MNT/stress/x"	# its first block stays
free_counts() { stat -f -c '%f %d' "$MNT"; }

for s in $STRESSORS; do
	before=$(free_counts)
	# shellcheck disable=SC2086
	stress-ng --$s 2 --timeout "${SECS}s" --verify --temp-path "$MNT/stress" \
		$SIZES --log-brief >/tmp/stress.out 2>&1 && rc=0 || rc=$?
	why=$(grep -Ei "skipping" /tmp/stress.out | head -n 1)
	[ "$rc" != 0 ] || [ -z "$why" ] || rc=4
	case $rc in
	0) passed="$passed $s" ;;
	3|4)
		why=${why:-$(grep -Ei "not supported|not implemented" /tmp/stress.out | head -n 1)}
		echo "$s: skipped: ${why:-exit status $rc}"
		case " $ALLOWED_SKIP " in
		*" $s "*) skipped="$skipped $s" ;;
		*) sed 's/^/  | /' /tmp/stress.out; failed="$failed $s" ;;
		esac ;;
	*)
		echo "$s: stress-ng exit status $rc"
		sed 's/^/  | /' /tmp/stress.out
		failed="$failed $s" ;;
	esac
	after=$(free_counts)
	if [ "$after" != "$before" ]; then
		echo "$s: free blocks and inodes '$before' before, '$after' after"
		leaked="$leaked $s"
	fi
done
echo "passed:$passed"
echo "skipped:${skipped:- none}"
[ -z "$failed" ] || die "stressors failed:$failed"
assert_eq "$(ls -A "$MNT/stress")" "" "files left by stress-ng"
[ -z "$leaked" ] || die "space or inodes not returned after:$leaked"
umount "$MNT"
mount_vsmfs
umount "$MNT"
