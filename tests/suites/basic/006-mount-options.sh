# Mount options: dax and dax=always accepted and shown; anything else
# refused with a message.
. tests/lib/common.sh

mkfs_vsmfs -f "$DEV"
for o in dax dax=always; do
	mount_vsmfs -o "$o"
	grep -q "^$DEV $MNT vsmfs rw,.*dax=always" /proc/mounts || die "-o $o not shown"
	umount "$MNT"
done
dmesg -C
assert_eq "$(mount_errno "$DEV" "$MNT" dax=never)" EINVAL "dax=never"
dmesg_has "dax=never not supported"
dmesg -C
assert_eq "$(mount_errno "$DEV" "$MNT" nosuchoption)" EINVAL "unknown option"
dmesg_has "Unknown parameter 'nosuchoption'"
