#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host test of mkfs.vsmfs and vsmfs-inspect on image files as a user runs
# them: mkfs refuses an image holding a swap area, a DOS partition table or
# an ext4 file system, naming it, and with -f erases the signature so that
# blkid no longer reports it; vsmfs-inspect --export prints the udev
# properties of the new file system and nothing for anything else; every
# tool answers --help and --version; option values out of range are
# refused with the range; the fast-commit areas are made by default, as
# many as fit the journal region, and left out on request or when none
# fits.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
mkfs=$top/tools/mkfs.vsmfs fsck=$top/tools/fsck.vsmfs inspect=$top/tools/vsmfs-inspect
dir=$(mktemp -d "${TMPDIR:-/tmp}/vsmfs-mkfs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
img=$dir/img
fail() { echo "mkfs-test: FAIL: $*"; exit 1; }
for t in mkswap sfdisk mkfs.ext4 blkid; do
	command -v "$t" >/dev/null || fail "$t not found (tests/setup installs it)"
done

# Run a command that must fail with exit status $1; its output in $dir/out.
refused() {
	want=$1
	shift
	set +e
	"$@" >"$dir/out" 2>&1
	got=$?
	set -e
	[ "$got" = "$want" ] || { cat "$dir/out"; fail "$*: exit $got, expected $want"; }
}
says() { grep -qF -- "$1" "$dir/out" || { cat "$dir/out"; fail "output lacks '$1'"; }; }
blkid_value() {	# TAG: what blkid -p finds on the image
	blkid -p -o value -s "$1" "$img" 2>/dev/null || true
}

fresh() {
	rm -f "$img"
	truncate -s 64M "$img"
}

# A swap area.
fresh
mkswap "$img" >/dev/null 2>&1
[ "$(blkid_value TYPE)" = swap ] || fail "mkswap left no swap signature"
refused 1 "$mkfs" -q "$img"
says "appears to contain a swap signature"
says "use -f"
[ "$(blkid_value TYPE)" = swap ] || fail "a refused mkfs changed the image"
"$mkfs" -f "$img" >"$dir/out"
says "erased a swap signature"
[ -z "$(blkid_value TYPE)" ] || fail "blkid still finds $(blkid_value TYPE) after mkfs -f"
"$fsck" -n "$img" >/dev/null

# A DOS partition table.
fresh
printf 'label: dos\n,16M,L\n,,L\n' | sfdisk -q "$img"
[ "$(blkid_value PTTYPE)" = dos ] || fail "sfdisk wrote no DOS partition table"
refused 1 "$mkfs" -q "$img"
says "appears to contain a dos partition table"
"$mkfs" -q -f "$img"
[ -z "$(blkid_value PTTYPE)" ] || fail "blkid still finds a $(blkid_value PTTYPE) table"
"$fsck" -n "$img" >/dev/null

# An ext4 file system, and a vsmfs: both refused without -f.
fresh
mkfs.ext4 -q -F "$img"
refused 1 "$mkfs" -q "$img"
says "appears to contain an existing ext4 file system"
"$mkfs" -q -f -L "data set 1" -U 0f5b6d2e-4c1a-4f3e-9b8a-2d7c6e5f4a3b "$img"
[ -z "$(blkid_value TYPE)" ] || fail "blkid still finds $(blkid_value TYPE)"
refused 1 "$mkfs" -q "$img"
says "contains a vsmfs file system"

# The udev properties; nothing, exit status 8, for what is not vsmfs.
"$inspect" --export "$img" >"$dir/out"
cat >"$dir/want" <<'EOT'
ID_FS_TYPE=vsmfs
ID_FS_USAGE=filesystem
ID_FS_VERSION=1
ID_FS_UUID=0f5b6d2e-4c1a-4f3e-9b8a-2d7c6e5f4a3b
ID_FS_UUID_ENC=0f5b6d2e-4c1a-4f3e-9b8a-2d7c6e5f4a3b
ID_FS_LABEL=data_set_1
ID_FS_LABEL_ENC=data\x20set\x201
EOT
diff -u "$dir/want" "$dir/out" || fail "vsmfs-inspect --export"
fresh
mkfs.ext4 -q -F "$img"
refused 8 "$inspect" --export "$img"
[ ! -s "$dir/out" ] || { cat "$dir/out"; fail "--export printed something for ext4"; }
refused 16 "$inspect" --export --json "$img"

# UUIDs differ from one mkfs to the next, and are RFC 4122 random ones.
fresh
"$mkfs" -q "$img"
u1=$("$inspect" --export "$img" | sed -n 's/^ID_FS_UUID=//p')
"$mkfs" -q -f "$img"
u2=$("$inspect" --export "$img" | sed -n 's/^ID_FS_UUID=//p')
[ "$u1" != "$u2" ] || fail "two mkfs runs made the same UUID $u1"
echo "$u2" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ||
	fail "UUID $u2 is not a random (version 4) UUID"

# --help and --version on every tool.
for t in "$mkfs" "$fsck" "$inspect" "$top/tools/vsmfs-pmreplay"; do
	"$t" --help >"$dir/out" 2>&1 || { cat "$dir/out"; fail "$t --help"; }
	grep -qi "^usage" "$dir/out" || { cat "$dir/out"; fail "$t --help prints no usage"; }
	"$t" --version >"$dir/out" 2>&1 || { cat "$dir/out"; fail "$t --version"; }
	grep -Eq "^$(basename "$t") [0-9]" "$dir/out" || { cat "$dir/out"; fail "$t --version"; }
done

# Values out of range name the range.
refused 1 "$mkfs" -q -f -J 8K "$img"
says "the range is 64K to 64G"
refused 1 "$mkfs" -q -f --journal-size 48M "$img"
says "the range is 64 KiB to half the device, 32768 KiB"
refused 1 "$mkfs" -q -f -N 3 "$img"
says "the range is 16 to 4294967295"
refused 1 "$mkfs" -q -f -L 0123456789abcdef0123456789abcdefX "$img"
says "label longer than 32 bytes"
refused 1 "$mkfs" -q -f -l 3M "$img"
says "a multiple of 2M, from the size of the data area to 4P"
refused 1 "$mkfs" -q -f -l 5P "$img"
says "a multiple of 2M, from the size of the data area to 4P"
refused 1 "$mkfs" -q -f --logical-size 10M "$img"
says "logical size 10 MiB too small: the range is the data area rounded up to 2 MiB, 58 MiB"
refused 1 "$mkfs" -q -f -l 4P "$img"
says "too large for the device"
refused 1 "$mkfs" -q -f -l 1G -O ^sparse "$img"
says "not with -O ^sparse"
refused 1 "$mkfs" -q -f -O sb_last,nosuch "$img"
says "unknown feature in 'sb_last,nosuch'"

# The logical size: the default is twice the device; -l sets it.
"$mkfs" -q -f "$img"
"$fsck" -n "$img" >"$dir/out"
says "0/32767 logical pages"
"$mkfs" -q -f -l 1G "$img"
"$fsck" -n "$img" >"$dir/out"
says "0/262143 logical pages"
"$mkfs" -q -f -O ^sparse "$img"
"$fsck" -n "$img" >"$dir/out"
says "0/14846 logical pages in use; no errors found"
# Fast-commit areas: the last blocks of the journal region, 16 of 32 blocks
# by default; fewer where the region is small (a quarter of it at most, a
# journal of 16 blocks left); none with -O ^fast_commit, nor in a region
# of 16 blocks (with a message). fsck.vsmfs finds each image sound and
# vsmfs-inspect shows the areas.
fc_row() {	# the "fast-commit areas" row of mkfs.vsmfs -n OPTS...
	"$mkfs" -n "$@" "$img" | sed -n 's/^  fast-commit areas *//p'
}
fc_areas() {	# the areas of the image: "AREAS BLOCKS START"
	"$inspect" -j --json "$img" | python3 -c 'import json, sys
f = json.load(sys.stdin)["journal"]["fast_commit"]
print(" ".join(str(f[k]) for k in ("areas", "area_blocks", "start")) if f else "none")'
}
fresh
[ "$(fc_row)" = "770        256  (8 areas of 32 blocks, in the journal)" ] ||
	fail "default fast-commit areas: '$(fc_row)'"
"$mkfs" -q "$img"
[ "$(fc_areas)" = "8 32 770" ] || fail "default image: fast-commit areas $(fc_areas)"
"$top/tools/vsmfs-admin" -l "$img" >"$dir/out"
says "sb_last sparse fast_commit"
"$inspect" "$img" >"$dir/out"
says "features: sb_last sparse fast_commit"
says "fast-commit areas             770        256  (8 areas of 32 blocks, in the journal)"
says "fast commits         8 areas of 32 blocks from block 770; 0 valid records of commit 1"
"$fsck" -n -v "$img" >"$dir/out"
says "journal: 8 fast-commit areas of 32 blocks from block 770, 0 valid records (commit 1)"
says "no errors found"

"$mkfs" -q -f -O ^fast_commit "$img"
[ "$(fc_areas)" = none ] || fail "-O ^fast_commit: fast-commit areas $(fc_areas)"
[ -z "$(fc_row -O ^fast_commit)" ] || fail "-O ^fast_commit: a fast-commit row in the layout"
"$inspect" "$img" >"$dir/out"
says "features: sb_last sparse"
! grep -q "fast" "$dir/out" ||
	{ cat "$dir/out"; fail "-O ^fast_commit: inspect shows fast commits"; }
"$fsck" -n -v "$img" >"$dir/out"
says "no errors found"

"$mkfs" -q -f -J 256K "$img"
[ "$(fc_areas)" = "1 16 50" ] || fail "256 KiB journal: fast-commit areas $(fc_areas)"
"$fsck" -n "$img" >"$dir/out"
says "no errors found"
"$mkfs" -f -J 64K "$img" >"$dir/out" 2>&1
says "a journal of 16 blocks has no room for fast-commit areas: made without fast_commit"
[ "$(fc_areas)" = none ] || fail "64 KiB journal: fast-commit areas $(fc_areas)"
"$fsck" -n "$img" >"$dir/out"
says "no errors found"

# The smallest device: 16 MiB, a journal of 1 MiB, 2 areas of 32 blocks.
rm -f "$img"
truncate -s 16M "$img"
"$mkfs" -q "$img"
[ "$(fc_areas)" = "2 32 194" ] || fail "16 MiB device: fast-commit areas $(fc_areas)"
"$fsck" -n "$img" >"$dir/out"
says "no errors found"
echo "mkfs-test: ok"
