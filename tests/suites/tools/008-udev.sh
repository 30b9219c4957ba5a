# udev identifies vsmfs: with the rule make install puts in place
# (installed into /run/udev/rules.d, running the vsmfs-inspect of this
# tree) and systemd-udevd running, a new file system gets its
# /dev/disk/by-uuid and by-label links, mounts by UUID= and LABEL=, and
# lsblk -f shows its type, label and UUID.
. tests/lib/common.sh

UDEVD=/lib/systemd/systemd-udevd
[ -x "$UDEVD" ] || die "systemd-udevd not installed (tests/setup installs udev)"
[ ! -e /run/udev/control ] || die "a udevd is running already"
make -s -C "$VSMFS_TOP/tools" install-udev UDEVRULESDIR=/run/udev/rules.d \
	SBINDIR="$VSMFS_TOP/tools"
grep -q "IMPORT{program}=\"$VSMFS_TOP/tools/vsmfs-inspect --export" \
	/run/udev/rules.d/61-vsmfs.rules || die "rule not installed with the tools' path"

"$UDEVD" >/tmp/udevd.log 2>&1 &
udevd=$!
stop_udevd() {
	kill "$udevd" 2>/dev/null && wait "$udevd" 2>/dev/null
	rm -rf /run/udev /dev/disk
}
trap stop_udevd EXIT
i=0
until udevadm control --ping 2>/dev/null; do
	i=$((i + 1))
	[ $i -le 100 ] || { cat /tmp/udevd.log; die "udevd did not start"; }
	sleep 0.1
done

uuid=6c0e9a4e-3d2b-4f1a-8e7d-5b4c3a291807
mkfs_vsmfs -f -L "pm data" -U "$uuid" "$DEV"
udevadm trigger --settle --action=change --subsystem-match=block \
	--sysname-match="$(basename "$DEV")"
udevadm info --query=property "$DEV" | grep '^ID_FS_'
[ "$(readlink -f "/dev/disk/by-uuid/$uuid")" = "$DEV" ] ||
	{ ls -l /dev/disk/by-uuid 2>&1; die "no /dev/disk/by-uuid/$uuid"; }
[ "$(readlink -f "/dev/disk/by-label/pm\\x20data")" = "$DEV" ] ||
	{ ls -l /dev/disk/by-label 2>&1; die "no /dev/disk/by-label link"; }

lsblk -f -n -o NAME,FSTYPE,FSVER,LABEL,UUID "$DEV" | tee /tmp/lsblk.out
assert_eq "$(cat /tmp/lsblk.out | tr -s ' ')" "$(basename "$DEV") vsmfs 1 pm data $uuid" "lsblk -f"

mount UUID="$uuid" "$MNT"
assert_eq "$(awk -v m="$MNT" '$2 == m { print $1 " " $3 }' /proc/mounts)" "$DEV vsmfs" \
	"mount UUID=..."
umount "$MNT"
mount -t vsmfs LABEL="pm data" "$MNT"
echo data >"$MNT/f"
umount "$MNT"

# A new file system on the device: the links follow it, the old ones go.
mkfs_vsmfs -f -L other "$DEV"
udevadm trigger --settle --action=change --subsystem-match=block \
	--sysname-match="$(basename "$DEV")"
[ ! -e "/dev/disk/by-uuid/$uuid" ] || die "/dev/disk/by-uuid/$uuid left behind"
[ "$(readlink -f /dev/disk/by-label/other)" = "$DEV" ] || die "no link for the new label"
# A torn primary superblock (its checksum wrong): mount uses the backup,
# and so does udev.
retrigger() {
	udevadm trigger --settle --action=change --subsystem-match=block \
		--sysname-match="$(basename "$DEV")"
}
printf X | dd of="$DEV" bs=1 seek=216 conv=notrunc,fsync 2>/dev/null
retrigger
[ "$(readlink -f /dev/disk/by-label/other)" = "$DEV" ] ||
	die "no link with a torn primary superblock and the backup in place"
# No vsmfs magic in block 0: not vsmfs any more (mount does not look for a
# backup either), nothing left in the udev database.
dd if=/dev/zero of="$DEV" bs=4096 count=1 conv=fsync 2>/dev/null
retrigger
[ -z "$(udevadm info --query=property "$DEV" | grep '^ID_FS_TYPE=')" ] ||
	die "ID_FS_TYPE still set without a superblock"
[ ! -e /dev/disk/by-label/other ] || die "/dev/disk/by-label/other left behind"
mkfs_vsmfs -f "$DEV"
