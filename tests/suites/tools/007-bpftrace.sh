# The bpftrace scripts of tools/bpftrace/ against a live mount: each
# attaches to the vsmfs tracepoints, a short workload runs under it
# (bpftrace -c), and what it prints at the end holds the histograms and
# counts the workload must have produced.
. tests/lib/common.sh

command -v bpftrace >/dev/null || die "bpftrace not installed (tests/setup installs it)"
BT=$VSMFS_TOP/tools/bpftrace
mkfs_vsmfs -f -J 256K "$DEV"
mount_vsmfs
[ -d /sys/kernel/tracing/events/vsmfs ] ||
	[ -d /sys/kernel/debug/tracing/events/vsmfs ] || die "no vsmfs tracepoints"

# run SCRIPT WORKLOAD: the script's output while the workload runs.
run() {
	out=/tmp/bt.$(basename "$1" .bt)
	# bpftrace -c splits its command at spaces, without a shell.
	printf '%s\n' "set -e" "$2" >/tmp/bt-work.sh
	bpftrace -c "/bin/sh /tmp/bt-work.sh" "$BT/$1" >"$out" 2>&1 ||
		{ cat "$out"; die "$1 failed"; }
	echo "--- $1"
	cat "$out"
}

# has SCRIPT PATTERN...: the output has a line matching each pattern.
has() {
	s=$1
	shift
	for p in "$@"; do
		grep -Eq -- "$p" "/tmp/bt.$(basename "$s" .bt)" ||
			die "$s: no line matching '$p'"
	done
}

work="cd $MNT && mkdir -p d && for i in \$(seq 40); do
	echo x > d/f\$i; dd if=/dev/zero of=d/f\$i bs=4k count=4 conv=notrunc,fsync 2>/dev/null;
	cat d/f\$i >/dev/null; mv d/f\$i d/g\$i; done; rm -f d/g*; rmdir d"
run vsmfs-latency.bt "$work"
has vsmfs-latency.bt '^@us\[tracepoint:vsmfs:vsmfs_write\]:' '^@us\[tracepoint:vsmfs:vsmfs_read\]:' \
	'^@us\[tracepoint:vsmfs:vsmfs_create\]:' '^@us\[tracepoint:vsmfs:vsmfs_rename\]:' \
	'^@us\[tracepoint:vsmfs:vsmfs_unlink\]:' '^\[[0-9]+.*\|@+ *\|$'

run vsmfs-commit.bt "$work"
has vsmfs-commit.bt '^@commits: [1-9]' '^@blocks:' '^@delta_bytes:' '^\[[0-9]+.*\|@+ *\|$'
# Operations join running transactions: each file's fsync commits one.
commits=$(sed -n 's/^@commits: //p' /tmp/bt.vsmfs-commit)
[ "$commits" -ge 40 ] || die "vsmfs-commit.bt: $commits commits for 40 fsync'd files"

# Overwrites: 4 KiB pages (fine) and a whole 2 MiB piece (coarse), on a
# journal whose atomic write limit (vsmfs(5)) holds the 2 MiB write whole:
# with the 256 KiB one it would go in parts.
umount "$MNT"
mkfs_vsmfs -f -J 4M "$DEV"
mount_vsmfs
dd if=/dev/zero of="$MNT/big" bs=1M count=4 2>/dev/null
run vsmfs-mcow.bt "dd if=/dev/urandom of=$MNT/big bs=4k count=50 seek=10 conv=notrunc 2>/dev/null;
	dd if=/dev/urandom of=$MNT/big bs=2M count=1 seek=1 conv=notrunc 2>/dev/null"
has vsmfs-mcow.bt '^@writes: 51$' '^pieces: coarse 1, fine 50, fine share 98 percent$' \
	'^@swapped_pages:' '^@tlb_flushes_lazy: [1-9]'
rm "$MNT/big"

# A small journal and many metadata changes, committed: wear-aware
# allocation swaps blocks. Creates, utimes and unlinks run beside each
# other and join one running transaction until it fills or is synced, so
# the syncs make the commits. The per-second lines come and go; the
# totals stay.
umount "$MNT"
mkfs_vsmfs -f -J 256K "$DEV"
mount_vsmfs
run vsmfs-wear.bt "cd $MNT && for i in \$(seq 300); do touch w\$i; done; sync; rm -f w*; sync"
has vsmfs-wear.bt '^@total_swaps: [1-9]' '^@taken_writes:' '^@passed_over_writes:'
umount "$MNT"
