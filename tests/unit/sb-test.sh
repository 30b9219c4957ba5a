#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the backup superblock and the recorded error state on image
# files, with the tools as a user runs them: the start of an image made by
# mkfs.vsmfs is wiped (primary superblock and block 1), and fsck.vsmfs
# restores the primary from the backup in the last block; an image with the
# backup in block 1 (-O ^sb_last) still has its torn primary repaired from
# there; an error state recorded in the superblock is shown by
# vsmfs-inspect and cleared by a repair run of fsck.vsmfs.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
mkfs=$top/tools/mkfs.vsmfs fsck=$top/tools/fsck.vsmfs inspect=$top/tools/vsmfs-inspect
sbedit=$top/tests/helpers/sbedit
dir=$(mktemp -d "${TMPDIR:-/tmp}/vsmfs-sb.XXXXXX")
trap 'rm -rf "$dir"' EXIT
img=$dir/img
fail() { echo "sb-test: FAIL: $*"; exit 1; }

fsck_status() {	# expected-status args...
	want=$1
	shift
	set +e
	"$fsck" "$@" "$img" >"$dir/out" 2>&1
	got=$?
	set -e
	[ "$got" = "$want" ] || { cat "$dir/out"; fail "fsck.vsmfs $*: exit $got, expected $want"; }
}
says() { grep -qF -- "$1" "$dir/out" || { cat "$dir/out"; fail "output lacks '$1'"; }; }

# New images: the backup is the last block, and the data area ends before it.
truncate -s 64M "$img"
"$mkfs" -q -f "$img"
last=$(( (64 << 20) / 4096 - 1 ))
"$inspect" "$img" >"$dir/out"
grep -Eq "^  backup superblock +$last +1\$" "$dir/out" || { cat "$dir/out"; fail "backup not in block $last"; }
dd if="$img" of="$dir/b0" bs=4096 count=1 2>/dev/null
dd if="$img" of="$dir/bl" bs=4096 skip="$last" count=1 2>/dev/null
cmp -s "$dir/b0" "$dir/bl" || fail "backup differs from the primary after mkfs"

# Wipe blocks 0 and 1: no vsmfs at the start any more.
dd if=/dev/zero of="$img" bs=4096 count=2 conv=notrunc 2>/dev/null
fsck_status 4 -n
says "primary superblock: bad magic (not a vsmfs file system); the backup (block $last) is valid and is used"
fsck_status 4 -p
says "(not repaired in preen mode: run fsck.vsmfs -y)"
fsck_status 1 -y
says "the backup (block $last) is valid and is used: repaired"
fsck_status 0 -n
says "no errors found"
dd if="$img" of="$dir/b0" bs=4096 count=1 2>/dev/null
cmp -s "$dir/b0" "$dir/bl" || fail "primary not restored from the backup"

# Both copies gone: nothing to use.
dd if=/dev/zero of="$img" bs=4096 seek="$last" count=1 conv=notrunc 2>/dev/null
dd if=/dev/zero of="$img" bs=4096 count=1 conv=notrunc 2>/dev/null
fsck_status 8 -y
says "no vsmfs file system found"

# Images with the backup in block 1, as mkfs.vsmfs made them before (and
# without the sparse and fast_commit features, which came later).
"$mkfs" -q -f -O ^sb_last,^sparse,^fast_commit "$img"
"$inspect" "$img" >"$dir/out"
grep -Eq "^  backup superblock +1 +1\$" "$dir/out" || { cat "$dir/out"; fail "backup not in block 1"; }
[ "$("$sbedit" "$img" get feature_incompat)" = 0 ] ||
	fail "-O ^sb_last,^sparse,^fast_commit set a feature"
[ "$("$sbedit" "$img" get lpages)" = 0 ] || fail "s_lpages set without the sparse feature"
"$sbedit" -k "$img" set mount_count=9
fsck_status 1 -p
says "primary superblock: superblock checksum mismatch; the backup (block 1) is valid and is used: repaired"
fsck_status 0 -n

# The backup in block 1 on a sparse file system: -O ^sb_last alone.
"$mkfs" -q -f -O ^sb_last "$img"
[ "$("$sbedit" "$img" get feature_incompat)" = 6 ] ||
	fail "-O ^sb_last: not sparse and fast_commit alone"
[ "$("$sbedit" "$img" get lpages)" = 32768 ] || fail "default s_lpages of 64 MiB"
fsck_status 0 -n
says "no errors found"
"$sbedit" -k "$img" set mount_count=9
fsck_status 1 -p
says "the backup (block 1) is valid and is used: repaired"

# The error state the module records: shown, then cleared by a clean check.
"$mkfs" -q -f "$img"
"$sbedit" "$img" set state=3 error_count=2 first_error_ino=12 last_error_ino=13 \
	first_error_time=1700000000 last_error_time=1700000001
"$sbedit" -b "$img" set state=3 error_count=2 first_error_ino=12 last_error_ino=13 \
	first_error_time=1700000000 last_error_time=1700000001
"$inspect" "$img" >"$dir/out"
says "errors: 2 found while mounted, not checked since (run fsck.vsmfs)"
says "last  at 1700000001 in :0, inode 13"
"$inspect" -j "$img" >/dev/null
fsck_status 4 -n
says "the module recorded 2 errors while mounted"
says "superblock: error state recorded while mounted (2 errors)"
fsck_status 1 -p
says "error state recorded while mounted (2 errors): repaired"
fsck_status 0 -n
"$inspect" "$img" >"$dir/out"
says "errors: none recorded"
[ "$("$sbedit" -b "$img" get error_count)" = 0 ] || fail "backup keeps the error count"
[ "$("$sbedit" "$img" get state)" = 1 ] || fail "state after fsck"
echo "sb-test: passed"
