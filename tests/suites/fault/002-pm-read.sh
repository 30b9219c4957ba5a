# Reads of PM that fail as from poisoned memory: read(2) returns EIO and
# nothing else; other files, later reads and the file system are intact.
# A copy-on-write that must keep old bytes it cannot read (a partial page
# or superpage written, punched or zeroed) fails with EIO and leaves the
# file as it was, in every copy-on-write grain; so does a symbolic link's
# target. Appends, which move frames rather than copy data, go on.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -d $K ] || skip "module built without CONFIG_VSMFS_FAULT_INJECTION"
load="python3 tests/lib/faultload.py"

mkfs_vsmfs -f "$DEV"
mount_vsmfs
$load prepare "$MNT"
echo 1 > $K/pm_read/interval
out=$($load readall "$MNT" EIO) || { echo "$out"; die "unexpected errors"; }
echo "$out"
echo 0 > $K/pm_read/interval
echo "$out" | grep -q "EIO" || die "no read failed with EIO"
[ "$(cat $K/pm_read/injected)" -gt 0 ] || die "no failure injected"
# Every other read fails: partial reads or EIO, never wrong data.
echo 2 > $K/pm_read/interval
$load readall "$MNT" EIO
$load stress "$MNT" EIO
echo 0 > $K/pm_read/interval
$load verify "$MNT"
umount "$MNT"
"$FSCK" -n "$DEV"
mount_vsmfs
$load verify "$MNT"
umount "$MNT"
for cow in multi page superpage; do
	echo "cow=$cow:"
	mount_vsmfs -o cow=$cow
	$load cowfail "$MNT" $K/pm_read/interval
	umount "$MNT"
	"$FSCK" -n "$DEV"
done
[ "$(cat $K/pm_read/interval)" = 0 ] || die "pm_read left on"
