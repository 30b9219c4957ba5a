#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host test of vsmfs-admin and of the metadata dump of vsmfs-inspect on
# image files, with the tools as a user runs them: a label and a UUID set
# by vsmfs-admin are shown by vsmfs-inspect and vsmfs-admin -l, written to
# both superblocks, and fsck.vsmfs finds nothing wrong; default mount
# options are checked, stored, shown and cleared, and fsck.vsmfs drops a
# malformed field; the recorded error state is shown and cleared. A dump of
# a sound image and of one damaged through a journal version restores into
# an image that fsck.vsmfs and vsmfs-inspect see as they see the original.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
mkfs=$top/tools/mkfs.vsmfs fsck=$top/tools/fsck.vsmfs inspect=$top/tools/vsmfs-inspect
admin=$top/tools/vsmfs-admin sbedit=$top/tests/helpers/sbedit poke=$top/tests/helpers/fspoke
dir=$(mktemp -d "${TMPDIR:-/tmp}/vsmfs-admin.XXXXXX")
trap 'rm -rf "$dir"' EXIT
img=$dir/img
fail() { echo "admin-test: FAIL: $*"; exit 1; }

run() {	# expected-status command...
	want=$1
	shift
	set +e
	"$@" >"$dir/out" 2>&1
	got=$?
	set -e
	[ "$got" = "$want" ] || { cat "$dir/out"; fail "$*: exit $got, expected $want"; }
}
says() { grep -qF -- "$1" "$dir/out" || { cat "$dir/out"; fail "output lacks '$1'"; }; }
both_sb_equal() {
	last=$("$poke" "$img" layout | sed -n 's/^sb_backup=//p')
	dd if="$img" of="$dir/b0" bs=4096 count=1 2>/dev/null
	dd if="$img" of="$dir/bl" bs=4096 skip="$last" count=1 2>/dev/null
	cmp -s "$dir/b0" "$dir/bl" || fail "backup superblock differs from the primary"
}

truncate -s 64M "$img"
"$mkfs" -q -f "$img"

# Label and UUID.
run 0 "$admin" -L backups -U 0f1e2d3c-4b5a-4697-8877-665544332211 "$img"
run 0 "$inspect" "$img"
says 'uuid 0f1e2d3c-4b5a-4697-8877-665544332211, label "backups"'
run 0 "$admin" -l "$img"
says "backups"
says "0f1e2d3c-4b5a-4697-8877-665544332211"
both_sb_equal
run 0 "$fsck" -n "$img"
says "no errors found"
run 0 "$admin" -U random "$img"
run 0 "$admin" -l "$img"
grep -Eq '^UUID: +[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "$dir/out" ||
	{ cat "$dir/out"; fail "-U random: not a version 4 UUID"; }
run 0 "$admin" -U time "$img"
run 0 "$admin" -l "$img"
grep -Eq '^UUID: +[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "$dir/out" ||
	{ cat "$dir/out"; fail "-U time: not a version 1 UUID"; }
run 0 "$admin" -L "" "$img"
run 0 "$inspect" "$img"
grep -q 'label' "$dir/out" && fail "-L '' kept a label"
both_sb_equal
run 0 "$fsck" -n "$img"
run 1 "$admin" -L 0123456789abcdef0123456789abcdefX "$img"
says "at most 32"
run 1 "$admin" -U not-a-uuid "$img"
says "invalid UUID"
run 16 "$admin" "$img"
run 16 "$admin" -e fix "$img"
run 1 "$admin" -l "$dir/nonexistent"
run 1 "$admin" -L x /dev/null

# Default mount options.
run 0 "$admin" -o errors=continue,data=inplace "$img"
run 0 "$inspect" "$img"
says 'default mount options: "errors=continue,data=inplace"'
[ "$("$inspect" --json "$img" | python3 -c 'import json, sys; print(json.load(sys.stdin)["superblock"]["mount_options"])')" = errors=continue,data=inplace ] ||
	fail "--json lacks the mount options"
run 0 "$admin" -l "$img"
says "Features:                sb_last sparse fast_commit mount_opts"
run 0 "$fsck" -n -v "$img"
says "default mount options errors=continue,data=inplace"
says "no errors found"
both_sb_equal
run 1 "$admin" -o nosuchoption "$img"
says "unknown option 'nosuchoption'"
run 1 "$admin" -o "errors=continue data=inplace" "$img"
run 1 "$admin" -o "$(printf 'checkpoint=1,%.0s' $(seq 1 6))" "$img"
says "at most 63"
run 0 "$inspect" "$img"
says 'default mount options: "errors=continue,data=inplace"'
run 0 "$admin" -f -o nosuchoption "$img"
run 0 "$fsck" -n "$img"
run 0 "$admin" -o "" "$img"
[ "$("$sbedit" "$img" get feature_compat)" = 0 ] || fail "-o '' left the feature set"
run 0 "$inspect" "$img"
says "default mount options: none"
# The feature without options: fsck drops it.
"$sbedit" "$img" set feature_compat=1
"$sbedit" -b "$img" set feature_compat=1
run 4 "$fsck" -n "$img"
says "default mount options flagged but empty"
run 1 "$fsck" -y "$img"
run 0 "$fsck" -n "$img"
[ "$("$sbedit" "$img" get feature_compat)" = 0 ] || fail "fsck left the feature set"

# The error state.
"$sbedit" "$img" set state=3 error_count=4 last_error_ino=13 last_error_time=1700000001
run 0 "$admin" -e show "$img"
says "4 found while mounted, not checked since (run fsck.vsmfs)"
says "inode 13"
run 0 "$admin" -e clear "$img"
run 0 "$admin" -e show "$img"
says "none recorded"
[ "$("$sbedit" -b "$img" get error_count)" = 0 ] || fail "-e clear left the backup's count"
[ "$("$sbedit" "$img" get state)" = 1 ] || fail "-e clear: state"
run 0 "$fsck" -n "$img"

# Metadata dumps: a sound image, then one damaged through a journal version.
md_same() {	# what
	set +e
	"$fsck" -n "$img" >"$dir/fsck.orig" 2>&1
	orig=$?
	set -e
	run 0 "$inspect" --metadump "$dir/dump" "$img"
	says "names obfuscated"
	run 0 "$inspect" --restore "$dir/dump" "$dir/restored"
	[ "$(stat -c %s "$dir/restored")" = "$(stat -c %s "$img")" ] ||
		fail "$1: restored image has another size"
	set +e
	"$fsck" -n "$dir/restored" >"$dir/fsck.rest" 2>&1
	rest=$?
	set -e
	[ "$rest" = "$orig" ] || fail "$1: fsck.vsmfs exit $rest on the restored image, $orig on the original"
	sed "s#$dir/restored#IMG#" "$dir/fsck.rest" >"$dir/a"
	sed "s#$img#IMG#" "$dir/fsck.orig" >"$dir/b"
	diff "$dir/b" "$dir/a" || fail "$1: fsck.vsmfs says other things on the restored image"
	"$inspect" -i "$img" | sed 1d >"$dir/a"
	"$inspect" -i "$dir/restored" | sed 1d >"$dir/b"
	diff "$dir/a" "$dir/b" || fail "$1: vsmfs-inspect shows another file system"
}
md_same "fresh image"
[ "$(stat -c %s "$dir/dump")" -lt 1048576 ] || fail "dump of a fresh 64 MiB image takes 1 MiB"
"$poke" -j "$img" inode 1 set nlink=7
md_same "root link count changed in the journal"
grep -q "inode 1 " "$dir/fsck.orig" || { cat "$dir/fsck.orig"; fail "damage not reported"; }

# Broken dumps are refused.
head -c 100 "$dir/dump" >"$dir/short"
run 8 "$inspect" --restore "$dir/short" "$dir/r2"
says "truncated"
run 8 "$inspect" --restore "$img" "$dir/r2"
says "not a vsmfs metadata dump"
run 16 "$inspect" --no-obfuscate "$img"
run 16 "$inspect" --metadump "$dir/d2" -j "$img"
echo "admin-test: passed"
