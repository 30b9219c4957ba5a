#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Put vsmfs into a Linux 6.1 source tree for an in-tree build:
#
#   arch-patches/apply.sh [-x] KERNEL_TREE
#
# applies 0001 (fs/Kconfig, fs/Makefile, the documentation index), with -x
# also 0002 (exports flush_tlb_kernel_range() and init_mm), and copies
# fs/vsmfs/, Documentation/filesystems/vsmfs.rst and
# Documentation/ABI/testing/sysfs-fs-vsmfs into the tree. Every
# patch is tried with --dry-run first, so a patch that does not apply
# changes nothing; one that is already applied is left alone. Running it
# again refreshes the copied sources.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")

usage() {
	echo "usage: $0 [-x] KERNEL_TREE" >&2
	exit 2
}

exports=0
while getopts x opt; do
	case $opt in
	x) exports=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || usage
tree=$1

[ -f "$tree/Makefile" ] && [ -f "$tree/fs/Kconfig" ] ||
	{ echo "$tree: not a Linux source tree" >&2; exit 1; }
version=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p' "$tree/Makefile" | paste -sd.)
[ "$version" = 6.1 ] ||
	echo "warning: $tree is Linux $version; the patches are against 6.1" >&2

patches="$here/0001-fs-add-vsmfs-to-the-build.patch"
[ $exports = 0 ] ||
	patches="$patches $here/0002-x86-mm-export-flush_tlb_kernel_range-and-init_mm.patch"
for p in $patches; do
	name=$(basename "$p")
	if patch -d "$tree" -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1; then
		echo "$name: already applied"
	elif patch -d "$tree" -p1 -N -s --dry-run <"$p" >/dev/null 2>&1; then
		patch -d "$tree" -p1 -N -s --no-backup-if-mismatch <"$p"
		echo "$name: applied"
	else
		echo "$name: does not apply to $tree:" >&2
		patch -d "$tree" -p1 -N --dry-run <"$p" >&2 || true
		exit 1
	fi
done

mkdir -p "$tree/fs/vsmfs"
for f in "$top"/fs/vsmfs/Kconfig "$top"/fs/vsmfs/Makefile "$top"/fs/vsmfs/*.[ch]; do
	case $f in
	*.mod.c) continue ;;
	esac
	cp "$f" "$tree/fs/vsmfs/"
done
cp "$top/Documentation/filesystems/vsmfs.rst" "$tree/Documentation/filesystems/"
cp "$top/Documentation/ABI/testing/sysfs-fs-vsmfs" "$tree/Documentation/ABI/testing/"
echo "fs/vsmfs, Documentation/filesystems/vsmfs.rst and" \
	"Documentation/ABI/testing/sysfs-fs-vsmfs copied to $tree"
