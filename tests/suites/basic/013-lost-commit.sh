# fsync and syncfs tell the truth when the file system stopped writing:
# with errors=remount-ro and group commit, a write not yet committed when
# an error made the file system read-only is lost, and every fsync of the
# file (and syncfs, once per open file) fails, whether the commit timer
# dropped the transaction first or the fsync found it still running
# (tests/lib/lost_commit.py). After a remount the write is absent, the
# rest of the tree is as committed, and fsck is clean once the corrupt
# entry is put back and the recorded error cleared.
. tests/lib/common.sh

POKE=$HELPERS/fspoke

for mode in wait nowait; do
	echo "--- $mode"
	mkfs_vsmfs -f "$DEV"
	mount_vsmfs -o commit=5,errors=remount-ro
	mkdir "$MNT/d"
	touch "$MNT/d/f1" "$MNT/d/f2"
	echo kept > "$MNT/kept"
	dino=$(stat -c %i "$MNT/d")
	umount "$MNT"
	good=$("$POKE" "$DEV" dirent "$dino" f2 get rec_len)
	"$POKE" "$DEV" dirent "$dino" f2 set rec_len=13

	dmesg -C
	mount_vsmfs -o commit=5,errors=remount-ro
	python3 "$VSMFS_TOP/tests/lib/lost_commit.py" "$MNT" "$mode" ||
		die "a lost change was reported durable ($mode)"
	dmesg_has "file system made read-only after an error"
	dmesg_has "dropped unwritten: its changes are lost"
	umount "$MNT"

	"$POKE" "$DEV" dirent "$dino" f2 set rec_len="$good"
	st=0
	"$FSCK" -y "$DEV" > /tmp/fsck.out 2>&1 || st=$?
	[ "$st" -le 1 ] || { cat /tmp/fsck.out; die "fsck -y found more than the error state"; }
	"$FSCK" -n "$DEV" || die "fsck -n after clearing the error state"
	mount_vsmfs
	[ -e "$MNT/lost" ] && die "the lost write is there after a remount"
	assert_eq "$(cat "$MNT/kept")" kept "committed file"
	ls "$MNT/d" > /dev/null
	umount "$MNT"
done

# errors=continue keeps writing after a transaction is dropped for an
# overflow, and records no lost transaction for later fsyncs: the fsync
# that waited for that very commit must fail all the same. The commit of
# a syncfs waits at the commit_wait fault point, holding the transaction
# closed, while a second task's fsync of a file the transaction changed
# waits for it (the file's mode changed); then the trans_overflow point
# makes the commit overflow as it clears the bits of a truncation's frees,
# and the transaction is dropped.
echo "--- errors=continue, fsync waiting for a dropped commit"
K=/sys/kernel/debug/vsmfs
[ -w $K/commit_wait/interval ] || die "fault point commit_wait missing"
mkfs_vsmfs -f "$DEV"
mount_vsmfs -o commit=60,errors=continue
head -c 64K /dev/urandom > /tmp/lc-g
cp /tmp/lc-g "$MNT/g"
head -c 1M /dev/urandom > "$MNT/t"
sync
dmesg -C
python3 - "$MNT" "$K" <<'PY' || die "an fsync of a dropped transaction returned success"
import errno, os, sys, threading, time, ctypes
mnt, k = sys.argv[1:3]
libc = ctypes.CDLL(None, use_errno=True)
def knob(p, v=None):
    path = os.path.join(k, p)
    if v is None:
        return int(open(path).read())
    with open(path, "w") as f:
        f.write(str(v))
fd = os.open(os.path.join(mnt, "g"), os.O_WRONLY)
os.fchmod(fd, 0o600)
os.truncate(os.path.join(mnt, "t"), 0)
res = {}
def syncfs():
    d = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    res["syncfs"] = 0 if libc.syncfs(d) == 0 else ctypes.get_errno()
    os.close(d)
def fsync():
    try:
        os.fsync(fd)
        res["fsync"] = 0
    except OSError as e:
        res["fsync"] = e.errno
waits = knob("commit_wait/injected")
knob("trans_overflow/interval", 1)
knob("commit_wait/interval", 1)
a = threading.Thread(target=syncfs)
a.start()
for _ in range(500):
    if knob("commit_wait/injected") > waits:
        break
    time.sleep(0.02)
else:
    knob("commit_wait/interval", 0)
    knob("trans_overflow/interval", 0)
    sys.exit("FAIL: the commit never reached commit_wait")
b = threading.Thread(target=fsync)
b.start()
time.sleep(2)
alive = b.is_alive()
knob("commit_wait/interval", 0)
a.join()
b.join()
knob("trans_overflow/interval", 0)
print(f"syncfs: {errno.errorcode.get(res['syncfs'], res['syncfs'])}, "
      f"fsync: {errno.errorcode.get(res['fsync'], res['fsync'])}, "
      f"fsync waited for the commit: {alive}")
if not alive:
    sys.exit("FAIL: the fsync did not wait for the commit held at commit_wait")
if res["fsync"] != errno.EIO:
    sys.exit(1)
# Reported once to this descriptor; nothing new is lost after it.
os.pwrite(fd, b"z" * 4096, 8192)
os.fsync(fd)
PY
dmesg_has "dropped unwritten: its changes are lost"
grep -q "^$DEV $MNT vsmfs rw" /proc/mounts || die "errors=continue made the file system read-only"
umount "$MNT"
"$FSCK" -y "$DEV" > /dev/null 2>&1 || true
"$FSCK" -n "$DEV" || die "fsck -n after clearing the error state"
mount_vsmfs
[ "$(dd if="$MNT/g" bs=4096 skip=2 count=1 status=none | tr -d z | wc -c)" = 0 ] ||
	die "the write fsynced after the loss is not durable"
umount "$MNT"
rm -f /tmp/lc-g
