# A write whose run takes its frames wherever they are free (the device
# too fragmented for a free run that long: frames_gathered) fails part
# way when the gather_stop fault point says the transaction ran out of
# room: the write fails with ENOSPC and nothing of it stays, neither in
# the file nor in free space (after the commit that gives back what it
# took), in DRAM or on PM; the same write then succeeds.
. tests/lib/common.sh

K=/sys/kernel/debug/vsmfs
[ -w $K/gather_stop/interval ] || die "fault point gather_stop missing"
S=/sys/fs/vsmfs/$(basename "$DEV")
"$MKFS" -q -f -J 4M "$DEV"
mount_vsmfs
# Every other 64 KiB file of a full device deleted: the free frames lie
# in runs of 16 pages.
python3 - "$MNT" <<'PY'
import os, sys
m = sys.argv[1]
os.mkdir(m + "/s")
i = 0
while True:
    try:
        with open(f"{m}/s/{i}", "wb") as f:
            f.write(bytes([i % 251]) * 65536)
    except OSError:
        os.unlink(f"{m}/s/{i}")
        break
    i += 1
for j in range(0, i, 2):
    os.unlink(f"{m}/s/{j}")
print(f"{i} files of 64 KiB, half of them deleted")
PY
sync
dd if=/dev/urandom of=/tmp/gs.data bs=1M count=1 status=none
free0=$(stat -f -c %f "$MNT")
g0=$(cat $S/frames_gathered)
i0=$(cat $K/gather_stop/injected)
echo 3 > $K/gather_stop/interval
if dd if=/tmp/gs.data of="$MNT/big" bs=1M count=1 status=none 2>/tmp/gs.err; then
	echo 0 > $K/gather_stop/interval
	die "a write whose gather stopped part way succeeded"
fi
echo 0 > $K/gather_stop/interval
grep -q "No space left on device" /tmp/gs.err || { cat /tmp/gs.err; die "not ENOSPC"; }
[ "$(cat $K/gather_stop/injected)" -gt "$i0" ] || die "the gather never reached gather_stop"
assert_eq "$(stat -c %s "$MNT/big")" 0 "size of the file the failed write was to fill"
sync
assert_eq "$(stat -f -c %f "$MNT")" "$free0" "free blocks after the failed write"
dd if=/tmp/gs.data of="$MNT/big" bs=1M count=1 status=none || die "the write again, without the fault"
[ "$(cat $S/frames_gathered)" -gt "$g0" ] || die "the write did not gather its frames"
cmp /tmp/gs.data "$MNT/big" || die "contents of the write"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after the failed gather"
mount_vsmfs
cmp /tmp/gs.data "$MNT/big" || die "contents after a remount"
python3 - "$MNT" <<'PY' || die "the files kept"
import os, sys
m = sys.argv[1]
for name in os.listdir(m + "/s"):
    with open(f"{m}/s/{name}", "rb") as f:
        assert f.read() == bytes([int(name) % 251]) * 65536, name
PY
umount "$MNT"
rm -f /tmp/gs.data /tmp/gs.err
