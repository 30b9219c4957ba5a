# make dkms-install: DKMS builds the module from the sources installed in
# /usr/src for the running kernel and installs it; modprobe loads exactly
# that build, which mounts and works; make dkms-uninstall removes it again.
# (A build under TCG takes about five minutes, so there is one.)
. tests/lib/common.sh

kver=$(uname -r)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$VSMFS_TOP/dkms.conf")
command -v dkms >/dev/null || die "dkms not installed (tests/setup installs it)"
[ -d "/lib/modules/$kver/build" ] || die "no kernel build tree for $kver"

# The host root is shared read-only. DKMS writes to /usr/src, /var/lib/dkms
# and /lib/modules/$kver, so each gets a writable overlay in guest memory
# for the duration of the test; nothing reaches the host.
ovl=/tmp/dkms-overlay
dirs="/usr/src /var/lib/dkms /lib/modules/$kver"
undo() {
	for d in $dirs; do
		grep -q " $d overlay " /proc/mounts && umount "$d"
	done
	rm -rf "$ovl"
}
trap undo EXIT
n=0
for d in $dirs; do
	n=$((n + 1))
	mkdir -p "$ovl/$n/upper" "$ovl/$n/work"
	mount -t overlay overlay \
		-o "lowerdir=$d,upperdir=$ovl/$n/upper,workdir=$ovl/$n/work" "$d"
done

# Unload the module the runner loaded from the tree.
rmmod vsmfs
ko=/lib/modules/$kver/updates/dkms/vsmfs.ko
[ ! -e "$ko" ] || die "$ko exists before the install"

build_id() {
	readelf -n "$1" | sed -n 's/.*Build ID: *//p'
}

# What a loaded module's build ID is: the descriptor at the end of the
# GNU build-ID note in sysfs, as hex.
loaded_build_id() {
	od -An -tx1 -v /sys/module/vsmfs/notes/.note.gnu.build-id | tr -d ' \n' |
		tail -c $(($(build_id "$ko" | wc -c) - 1))
}

make -s -C "$VSMFS_TOP" dkms-install >/tmp/dkms.out 2>&1 ||
	{ cat /tmp/dkms.out; die "make dkms-install failed"; }
tail -n 4 /tmp/dkms.out
dkms status -m vsmfs
dkms status -m vsmfs | grep -q "vsmfs/$ver, $kver, .*: installed" ||
	die "dkms does not list vsmfs as installed for $kver"
[ -f /usr/src/vsmfs-$ver/dkms.conf ] || die "sources not in /usr/src/vsmfs-$ver"
assert_eq "$(modinfo -n vsmfs)" "$ko" "module modprobe would load"
[ "$(build_id "$ko")" != "$(build_id "$MODULE")" ] ||
	die "the installed module is the tree's build, not one by DKMS"
modprobe vsmfs
assert_eq "$(loaded_build_id)" "$(build_id "$ko")" "build ID of the loaded module"
grep -q vsmfs /proc/filesystems || die "vsmfs not registered"
mkfs_vsmfs -f "$DEV"
mount_vsmfs
echo dkms >"$MNT/f"
umount "$MNT"
mount_vsmfs
assert_eq "$(cat "$MNT/f")" dkms "file written with the DKMS module"
umount "$MNT"
rmmod vsmfs

make -s -C "$VSMFS_TOP" dkms-uninstall >/tmp/dkms.out 2>&1 ||
	{ cat /tmp/dkms.out; die "make dkms-uninstall failed"; }
assert_eq "$(dkms status -m vsmfs)" "" "dkms status after uninstall"
[ ! -e /usr/src/vsmfs-$ver ] || die "/usr/src/vsmfs-$ver left after uninstall"
[ ! -e "$ko" ] || die "$ko left after uninstall"
expect_fail modprobe -n vsmfs
insmod "$MODULE"
