# O_TMPFILE and file handles: an unnamed file linked with linkat() keeps
# its name and content across a remount; one never linked is freed at its
# close (and at the next mount after a crash: posix/009-orphans).
# name_to_handle_at() handles of a file and of a
# directory two levels down, moved to another directory, open with
# open_by_handle_at() after a remount; a handle of a removed file, or of
# an i-number since reused, gives ESTALE.
. tests/lib/common.sh

# On one CPU throughout: each CPU takes i-numbers from a region of its
# own, and the reuse of an i-number below is looked for in CPU 0's.
taskset -pc 0 $$ > /dev/null || die "cannot bind the test to CPU 0"
API="python3 $VSMFS_TOP/tests/lib/fsapi.py"
counts() { stat -f -c '%f %d' "$MNT"; }

mkfs_vsmfs -f "$DEV"
mount_vsmfs
mkdir -p "$MNT/a/b" "$MNT/c"
touch "$MNT/first" && rm "$MNT/first"
free0=$(counts)

echo "== O_TMPFILE"
assert_eq "$($API tmpfile "$MNT/a" "atomic content" named)" linked "tmpfile linked"
assert_eq "$(cat "$MNT/a/named")" "atomic content" "content of the linked tmpfile"
assert_eq "$(stat -c %h "$MNT/a/named")" 1 "links of the linked tmpfile"
# Not linked: freed at the last close.
echo | $API tmpfile "$MNT" "gone" > /dev/null
assert_eq "$(stat -f -c %d "$MNT")" $(( $(echo "$free0" | cut -d' ' -f2) - 1 )) \
	"free inodes after an unlinked tmpfile closed"
# O_TMPFILE | O_EXCL cannot be linked.
python3 - "$MNT" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_TMPFILE | os.O_EXCL | os.O_WRONLY, 0o600)
try:
    os.link(f"/proc/self/fd/{fd}", sys.argv[1] + "/excl", src_dir_fd=os.open("/", os.O_RDONLY),
            follow_symlinks=True)
    sys.exit("FAIL: O_EXCL tmpfile linked")
except OSError as e:
    if e.errno != errno.ENOENT:
        sys.exit(f"FAIL: link of an O_EXCL tmpfile: {e}")
PY

echo "== handles"
echo "file content" > "$MNT/a/b/file"
$API handle "$MNT/a/b/file" /tmp/h.file
$API handle "$MNT/a/b" /tmp/h.dir
echo "doomed" > "$MNT/doomed"
$API handle "$MNT/doomed" /tmp/h.doomed
dino=$(stat -c %i "$MNT/doomed")
assert_eq "$($API byhandle "$MNT" /tmp/h.file)" "file content" "file by handle"
rm "$MNT/doomed"
assert_eq "$($API byhandle "$MNT" /tmp/h.doomed)" ESTALE "handle of a removed file"
# The directory moves: its recorded parent follows.
mv "$MNT/a/b" "$MNT/c/b"

echo "== after a remount"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck after tmpfile and rename"
mount_vsmfs
assert_eq "$(cat "$MNT/a/named")" "atomic content" "linked tmpfile after the remount"
assert_eq "$($API byhandle "$MNT" /tmp/h.file)" "file content" "file by handle after remount"
assert_eq "$($API byhandle "$MNT" /tmp/h.dir)" dir "directory by handle after remount"
assert_eq "$($API byhandle "$MNT" /tmp/h.doomed)" ESTALE "removed file after remount"
# Its i-number given to a new file: the generation tells them apart.
for i in 1 2 3 4 5 6 7 8; do touch "$MNT/new$i"; done
ls -i "$MNT" | grep -qw "^ *$dino" || die "i-number $dino not reused: $(ls -i "$MNT")"
assert_eq "$($API byhandle "$MNT" /tmp/h.doomed)" ESTALE "handle of a reused i-number"
# A corrupt handle is stale, not damage.
echo "1 ffffff7f00000000" > /tmp/h.bad
assert_eq "$($API byhandle "$MNT" /tmp/h.bad)" ESTALE "handle of an i-number out of range"
echo "1 0000000000000000" > /tmp/h.bad
assert_eq "$($API byhandle "$MNT" /tmp/h.bad)" ESTALE "handle of i-number 0"
grep -q "^state 0" "/sys/fs/vsmfs/$(basename "$DEV")/errors" || \
	die "stale handles recorded as errors: $(cat "/sys/fs/vsmfs/$(basename "$DEV")/errors")"

echo "== an unlinked tmpfile freed at its close"
rm -f "$MNT"/new* "$MNT/a/named"
before=$(counts)
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_TMPFILE | os.O_RDWR, 0o600)
os.write(fd, b"x" * 3000000)
os.close(fd)' "$MNT"
assert_eq "$(counts)" "$before" "space and inode of the tmpfile freed at its close"
umount "$MNT"
