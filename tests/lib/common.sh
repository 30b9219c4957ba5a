# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the vsmfs test scripts. Tests run inside the VM with
# "sh -eu": any failing command fails the test. Environment:
#   VSMFS_TOP      project tree (the current directory)
#   VSMFS_PMEM0    the test device (/dev/pmem0)
#   VSMFS_PMEM1    a scratch device, when the group asks for one
#   MNT            mount point for the test device

: "${VSMFS_TOP:=$(pwd)}"
DEV=${VSMFS_PMEM0:-/dev/pmem0}
SCRATCH=${VSMFS_PMEM1:-}
MNT=/mnt/vsmfs
MKFS="$VSMFS_TOP/tools/mkfs.vsmfs"
FSCK="$VSMFS_TOP/tools/fsck.vsmfs"
MODULE="$VSMFS_TOP/fs/vsmfs/vsmfs.ko"
HELPERS="$VSMFS_TOP/tests/helpers"
mkdir -p "$MNT"

# Fail the current test with a message.
die() {
	echo "FAIL: $*"
	exit 1
}

# Skip the current test.
skip() {
	echo "SKIP: $*"
	exit 77
}

# Run a command that must fail; print what it said.
expect_fail() {
	if "$@" >/tmp/expect_fail.out 2>&1; then
		cat /tmp/expect_fail.out
		die "expected failure: $*"
	fi
	sed 's/^/  (expected) /' /tmp/expect_fail.out
}

# Assert that two values are equal.
assert_eq() {
	[ "$1" = "$2" ] || die "${3:-value}: expected '$2', got '$1'"
}

# Assert that the kernel log contains a pattern (grep -E).
dmesg_has() {
	dmesg | grep -Eq -- "$1" || { dmesg | tail -n 10; die "dmesg lacks '$1'"; }
}

# Counter $1 of the vsmfs mounted from $DEV (/sys/fs/vsmfs/<device>/).
counter() {
	cat "/sys/fs/vsmfs/$(basename "$DEV")/$1"
}

# Free blocks of the file system mounted on $MNT, as statfs counts them.
free_blocks() {
	stat -f -c %f "$MNT"
}

mkfs_vsmfs() {
	"$MKFS" -q "$@"
}

mount_vsmfs() {
	mount -t vsmfs "$@" "$DEV" "$MNT"
}

# Mount errno as a name (EINVAL...), or OK: mount(2) itself, not mount(8).
mount_errno() {
	python3 "$VSMFS_TOP/tests/lib/mount_errno.py" "$@"
}

# Unmount everything vsmfs (between tests, and on the way out).
cleanup_mounts() {
	for m in $(awk '$3 == "vsmfs" { print $2 }' /proc/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	grep -q '^vsmfs ' /proc/modules || insmod "$MODULE"
}

# After each passing test the runner checks every test device that holds a
# vsmfs with "fsck.vsmfs -n" and fails the test if fsck finds an error. A
# test that ends with a damaged file system on purpose opts out, saying why.
skip_final_fsck() {
	echo "$*" > /tmp/vsmfs-skip-fsck
}

# Extended attribute calls with the errno as the result (see the script).
xattr_errno() {
	python3 "$VSMFS_TOP/tests/lib/xattr_errno.py" "$@"
}

# Run a command as user nobody, group nogroup, without capabilities.
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# Replace the test module by the instrumented one (build/pmlog/vsmfs.ko,
# its log in debugfs), and put the test module back when the test exits.
load_pmlog_module() {
	pmlog_ko=$VSMFS_TOP/build/pmlog/vsmfs.ko
	[ -f "$pmlog_ko" ] || die "$pmlog_ko not built: run make"
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	rmmod vsmfs
	trap 'umount "$MNT" 2>/dev/null || true; rmmod vsmfs; insmod "$MODULE"' EXIT
	insmod "$pmlog_ko" pmlog_mb=64
}
