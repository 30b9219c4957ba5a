# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the fsck tests (tests/suites/tools): a populated reference
# image, saved and restored around each deliberate corruption, and fsck
# runs checked for their exit status and messages.

POKE="$HELPERS/fspoke"

# Run fsck.vsmfs, show its output, and check the exit status.
fsck_expect() {	# expected-status fsck-arguments...
	want=$1
	shift
	set +e
	"$FSCK" "$@" >/tmp/fsck.out 2>&1
	got=$?
	set -e
	sed 's/^/  fsck: /' /tmp/fsck.out
	assert_eq "$got" "$want" "exit status of fsck.vsmfs $*"
}

# Like fsck_expect, for a run that repairs part and leaves errors (4 or 5).
fsck_expect_left() {	# fsck-arguments...
	set +e
	"$FSCK" "$@" >/tmp/fsck.out 2>&1
	got=$?
	set -e
	sed 's/^/  fsck: /' /tmp/fsck.out
	[ $((got & 4)) = 4 ] && [ "$got" -lt 8 ] ||
		die "fsck.vsmfs $*: exit status $got, expected errors left uncorrected"
}

# The last fsck run printed a line containing every one of the strings.
fsck_says() {	# string...
	line=$(grep -F -- "$1" /tmp/fsck.out | head -n 1)
	[ -n "$line" ] || die "fsck output lacks '$1'"
	shift
	for s in "$@"; do
		echo "$line" | grep -qF -- "$s" || die "fsck line '$line' lacks '$s'"
	done
}

# The last fsck run printed no line containing the string.
fsck_silent() {	# string
	if grep -qF -- "$1" /tmp/fsck.out; then
		die "fsck output unexpectedly mentions '$1'"
	fi
}

save_image() {
	dd if="$DEV" of=/tmp/base.img bs=1M iflag=direct 2>/dev/null
}

restore_image() {
	dd if=/tmp/base.img of="$DEV" bs=1M oflag=direct conv=fsync 2>/dev/null
}

# A file system with files of every type, hard links, fast and long
# symlinks, a multi-superpage file, a sparse file, a directory large enough
# for an indirect index block, and removed entries. The i-numbers are
# saved in /tmp/base.env (F1 BIG MID SL LONGSL FIFO D1 D2 D3 EMPTY).
make_base() {
	# Made from one CPU, so that i-numbers follow the order of creation
	# (each CPU takes them from a region of its own), as the cases that
	# name the first of two owners expect.
	taskset -pc 0 $$ > /dev/null || die "cannot bind the test to CPU 0"
	mkfs_vsmfs -f "$DEV"
	mount_vsmfs
	(
		cd "$MNT"
		mkdir -p d1/d2 d3 empty
		echo hello > f1
		ln f1 d1/f1link
		dd if=/dev/urandom of=big bs=1M count=5 2>/dev/null
		head -c 36864 /dev/urandom > d1/d2/mid
		ln -s f1 sl
		ln -s "$(printf 'y%.0s' $(seq 1 200))" longsl
		mkfifo d3/fifo
		mknod d3/null c 1 3
		python3 -c 'import os
for i in range(1500):
    open("d3/file%d" % i, "w").close()'
		rm d3/file7 d3/file77
		truncate -s 100M sparse
		echo x | dd of=sparse bs=1 seek=50000000 conv=notrunc 2>/dev/null
		echo tmp > gone
		rm gone
		mv d1/f1link d1/f1hard
		{
			echo "F1=$(stat -c %i f1) BIG=$(stat -c %i big) MID=$(stat -c %i d1/d2/mid)"
			echo "SL=$(stat -c %i sl) LONGSL=$(stat -c %i longsl) FIFO=$(stat -c %i d3/fifo)"
			echo "D1=$(stat -c %i d1) D2=$(stat -c %i d1/d2) D3=$(stat -c %i d3)"
			echo "EMPTY=$(stat -c %i empty) ROOT=$(stat -c %i .)"
			echo "FREE=$(stat -f -c %f .)"
		} > /tmp/base.env
	)
	umount "$MNT"
	. /tmp/base.env
	save_image
}

# Index entry fields.
lpn_of() {	# entry
	echo $(($1 & 0xffffffffff))
}
