# Reads of PM that fail as from poisoned memory: read(2) returns EIO and
# nothing else; other files, later reads and the file system are intact.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -d $K ] || skip "module built without CONFIG_VSMFS_FAULT_INJECTION"
load="python3 tests/crash/faultload.py"

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
