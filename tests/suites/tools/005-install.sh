# make install / uninstall with DESTDIR (the tools, their manual pages, the
# udev rule and the module), and mkfs(8) / fsck(8) of util-linux finding
# mkfs.vsmfs and fsck.vsmfs ("-t vsmfs") on the PATH. The module installed
# is the production build: it carries a version, and loaded it has none of
# the fault injection knobs or the persistence-ordering log of the test
# build.
. tests/lib/common.sh
. tests/lib/fsck.sh

inst=/tmp/inst
rm -rf "$inst"
make -s -C "$VSMFS_TOP" install DESTDIR="$inst" >/tmp/install.out 2>&1 ||
	{ cat /tmp/install.out; die "make install failed"; }
for f in sbin/mkfs.vsmfs sbin/fsck.vsmfs sbin/vsmfs-inspect \
	 usr/local/share/man/man8/mkfs.vsmfs.8 usr/local/share/man/man8/fsck.vsmfs.8 \
	 usr/local/share/man/man8/vsmfs-inspect.8 usr/local/share/man/man5/vsmfs.5 \
	 usr/local/share/vsmfs/bpftrace/vsmfs-latency.bt \
	 usr/local/share/vsmfs/bpftrace/vsmfs-commit.bt \
	 usr/local/share/vsmfs/bpftrace/vsmfs-mcow.bt \
	 usr/local/share/vsmfs/bpftrace/vsmfs-wear.bt \
	 lib/udev/rules.d/61-vsmfs.rules; do
	[ -f "$inst/$f" ] || die "$f not installed"
done
[ -x "$inst/sbin/fsck.vsmfs" ] || die "fsck.vsmfs not executable"
[ -x "$inst/sbin/vsmfs-inspect" ] || die "vsmfs-inspect not executable"
grep -q 'IMPORT{program}="/sbin/vsmfs-inspect --export $devnode"' \
	"$inst/lib/udev/rules.d/61-vsmfs.rules" || die "udev rule without the path of vsmfs-inspect"
[ -x "$inst/sbin/vsmfs-admin" ] || die "vsmfs-admin not installed"
[ -f "$inst/usr/local/share/man/man8/vsmfs-admin.8" ] || die "vsmfs-admin.8 not installed"
kver=$(modinfo -F vermagic "$MODULE" | cut -d' ' -f1)
assert_eq "$kver" "$(uname -r)" "kernel the module was built for"
ko=$inst/lib/modules/$kver/extra/vsmfs.ko
[ -f "$ko" ] || die "module not installed"
cmp -s "$MODULE" "$ko" && die "make install installed the test build"
assert_eq "$(modinfo -F version "$ko")" \
	"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$VSMFS_TOP/dkms.conf")" \
	"module version (that of dkms.conf)"
assert_eq "$(modinfo -F parm "$ko")" "" "parameters of the installed module"
# The test build has its knobs in debugfs; the installed one has none.
[ -d /sys/kernel/debug/vsmfs/page_alloc ] || die "the test module has no fault injection knobs"
rmmod vsmfs
insmod "$ko"
assert_eq "$(cat /sys/module/vsmfs/version)" "$(modinfo -F version "$ko")" "loaded module version"
if [ -e /sys/kernel/debug/vsmfs ]; then
	ls -R /sys/kernel/debug/vsmfs
	die "the installed module has fault injection or the ordering log"
fi
mkfs_vsmfs -f "$DEV"
mount_vsmfs
echo data >"$MNT/f"
umount "$MNT"
rmmod vsmfs
insmod "$MODULE"
man -l "$inst/usr/local/share/man/man8/fsck.vsmfs.8" 2>/dev/null | grep -q "EXIT STATUS" ||
	die "fsck.vsmfs.8 does not render"

PATH=$inst/sbin:$PATH
export PATH
mkfs -t vsmfs -f -q -L inst "$DEV"
assert_eq "$("$HELPERS/sbedit" "$DEV" get magic)" $((0x464d5356)) "magic after mkfs -t vsmfs"
fsck -t vsmfs "$DEV" >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck -t vsmfs failed"; }
cat /tmp/fsck.out
grep -q "no errors found" /tmp/fsck.out || die "fsck -t vsmfs did not run fsck.vsmfs"
"$POKE" "$DEV" inode 1 set nlink=5
set +e
fsck -t vsmfs -n "$DEV" >/tmp/fsck.out 2>&1
rc=$?
set -e
cat /tmp/fsck.out
assert_eq "$rc" 4 "fsck -t vsmfs -n on a damaged file system"
set +e
fsck -t vsmfs -y "$DEV" >/tmp/fsck.out 2>&1
rc=$?
set -e
cat /tmp/fsck.out
assert_eq "$rc" 1 "fsck -t vsmfs -y"
fsck -t vsmfs -n "$DEV"
mount_vsmfs
assert_eq "$(stat -c %h "$MNT")" 2 "root link count after the repair"
umount "$MNT"

make -s -C "$VSMFS_TOP" uninstall DESTDIR="$inst"
[ -z "$(find "$inst" -type f)" ] || { find "$inst" -type f; die "files left after uninstall"; }
rm -rf "$inst"
