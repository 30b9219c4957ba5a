# Attribute flags and the volume label, as chattr, lsattr, xfs_io and an
# e2label-like caller see them: immutable refuses writes (new and already
# open descriptors), truncation, removal, renaming, links, attribute and
# xattr changes; append-only allows only appends and no removal; no-dump
# and no-atime are kept; every file shows DAX; a birth time is set at
# creation and kept; reads and listings set access times; the flags,
# the birth and access times and the label survive a remount, and fsck
# accepts them.
. tests/lib/common.sh

API="python3 $VSMFS_TOP/tests/lib/fsapi.py"
letters() { lsattr -d "$1" | cut -d' ' -f1 | tr -d -; }

mkfs_vsmfs -f -L before "$DEV"
mount_vsmfs
F=$MNT/f
echo one > "$F"
mkdir "$MNT/d"

echo "== DAX shown, nothing else"
assert_eq "$(letters "$F")" x "lsattr of a new file"
assert_eq "$(letters "$MNT/d")" x "lsattr of a new directory"
xfs_io -r -c 'lsattr -v' "$F" | grep -q '\[dax\]' || die "xfs_io lsattr: $(xfs_io -r -c 'lsattr -v' "$F")"

echo "== immutable"
# A descriptor opened for writing before the flag is set is refused too.
out=$(python3 -c "import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
subprocess.run(['chattr', '+i', sys.argv[1]], check=True)
try:
    os.write(fd, b'two')
    print('written')
except OSError as e:
    print(e.errno)" "$F")
assert_eq "$out" 1 "errno of a write through a descriptor opened before chattr +i"
assert_eq "$(letters "$F")" ix "lsattr after chattr +i"
expect_fail sh -c "echo two >> '$F'"
expect_fail truncate -s 0 "$F"
expect_fail rm -f "$F"
expect_fail mv "$F" "$MNT/g"
expect_fail ln "$F" "$MNT/h"
expect_fail chmod 600 "$F"
expect_fail touch "$F"
expect_fail setfattr -n user.x -v 1 "$F"
expect_fail fallocate -l 1M "$F"
assert_eq "$(cat "$F")" one "content of the immutable file"
# The errno a program sees is EPERM.
out=$(python3 -c "import os,sys
try: os.open(sys.argv[1], os.O_WRONLY)
except PermissionError as e: print(e.errno)" "$F")
assert_eq "$out" 1 "errno of an open for writing"
# Only CAP_LINUX_IMMUTABLE changes it.
expect_fail as_nobody chattr -i "$F"

echo "== append-only, through xfs_io"
echo one > "$MNT/log"
xfs_io -r -c 'chattr +a' "$MNT/log"
xfs_io -r -c 'lsattr -v' "$MNT/log" | grep -q 'append-only' || die "xfs_io lsattr: $(xfs_io -r -c 'lsattr -v' "$MNT/log")"
echo two >> "$MNT/log"
expect_fail sh -c "echo three > '$MNT/log'"
expect_fail truncate -s 0 "$MNT/log"
expect_fail rm -f "$MNT/log"
assert_eq "$(cat "$MNT/log" | tr '\n' ' ')" "one two " "append-only file"

echo "== no-dump, no-atime, on a directory and inherited"
chattr +d +A "$MNT/d"
assert_eq "$(letters "$MNT/d")" dAx "lsattr of the directory"
echo x > "$MNT/d/child"
assert_eq "$(letters "$MNT/d/child")" dAx "flags a new file inherits"
a0=$(stat -c %X "$MNT/d/child")
sleep 1.1
cat "$MNT/d/child" > /dev/null
assert_eq "$(stat -c %X "$MNT/d/child")" "$a0" "atime of a no-atime file"
expect_fail chattr +c "$MNT/d/child"

echo "== birth time"
# Set at creation (by mkfs for the root), kept by later changes of the slot.
b0=$(stat -c %W "$F")
[ "$b0" -gt 0 ] && [ "$b0" -le "$(date +%s)" ] || die "birth time of a new file: $b0"
[ "$(stat -c %W "$MNT")" -gt 0 ] || die "birth time of the root: $(stat -c %W "$MNT")"
mkdir "$MNT/bt"
btd=$(stat -c %.9W "$MNT/bt")
sleep 1.1
touch "$MNT/bt/x"
chmod 700 "$MNT/bt"
assert_eq "$(stat -c %.9W "$MNT/bt")" "$btd" "birth time after changes"
[ "$(stat -c %Y "$MNT/bt")" -gt "$(stat -c %W "$MNT/bt")" ] || die "mtime not past the birth time"
rootb=$(stat -c %.9W "$MNT")

echo "== access times"
# relatime: a read, a listing after a change set them; a remount keeps them.
echo y > "$MNT/at"
mkdir "$MNT/atd"
touch -a -d @1000000000 "$MNT/at" "$MNT/atd"
cat "$MNT/at" > /dev/null
ls "$MNT/atd" > /dev/null
at=$(stat -c %.9X "$MNT/at")
atd=$(stat -c %.9X "$MNT/atd")
[ "${at%.*}" -gt 1000000000 ] || die "atime not set by a read: $at"
[ "${atd%.*}" -gt 1000000000 ] || die "atime not set by a listing: $atd"

echo "== label"
assert_eq "$($API label "$MNT")" before "label from mkfs"
assert_eq "$($API label "$MNT" new-label)" new-label "label set"
assert_eq "$($API label "$MNT/d" "$(printf '%032d' 7)")" "$(printf '%032d' 7)" "32-byte label"
assert_eq "$($API label "$MNT" "$(printf '%033d' 7)")" EINVAL "33-byte label"
assert_eq "$(as_nobody $API label "$MNT" x)" EPERM "label set without CAP_SYS_ADMIN"
$API label "$MNT" after-remount > /dev/null

echo "== after a remount"
umount "$MNT"
"$FSCK" -n "$DEV" || die "fsck with flags set"
"$VSMFS_TOP/tools/vsmfs-inspect" "$DEV" | grep -q after-remount || die "label not on the device"
mount_vsmfs
assert_eq "$(letters "$F")" ix "immutable after the remount"
assert_eq "$(letters "$MNT/log")" ax "append-only after the remount"
assert_eq "$(letters "$MNT/d/child")" dAx "inherited flags after the remount"
assert_eq "$(stat -c %.9W "$MNT/bt")" "$btd" "birth time after the remount"
assert_eq "$(stat -c %.9W "$MNT")" "$rootb" "root's birth time after the remount"
assert_eq "$(stat -c %.9X "$MNT/at")" "$at" "atime of a file after the remount"
assert_eq "$(stat -c %.9X "$MNT/atd")" "$atd" "atime of a directory after the remount"
expect_fail sh -c "echo two >> '$F'"
assert_eq "$($API label "$MNT")" after-remount "label after the remount"
mount -o remount,ro "$MNT"
assert_eq "$($API label "$MNT" x)" EROFS "label set on a read-only mount"
expect_fail chattr -i "$F"
mount -o remount,rw "$MNT"
chattr -i "$F"
chattr -a "$MNT/log"
rm "$F" "$MNT/log"
assert_eq "$(letters "$MNT/d")" dAx "flags unchanged by the others"
umount "$MNT"
