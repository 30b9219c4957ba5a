# Fast commits: an fsync after overwrites, writes within the last page,
# appends into pages the file owns, time updates, changes of attributes,
# creates, links and renames in a directory (and an unlink just before
# one) appends a record and commits nothing, in the next areas when its
# CPU's area is full; any other change of
# the file commits, counted under its reason (fc_fallback_*, which add up
# to fc_fallbacks); fast_commit=off commits every time; a file system made
# without the feature commits every time; an unchanged file's fsync writes
# nothing; the commit after fsync'd creates writes the inode-table blocks
# home without reading them back; fsck clean, contents kept across a
# remount.
. tests/lib/common.sh

st() { counter "$1"; }

# $1 overwrites of 4 KiB at page $2 of $3, each followed by fsync; then
# prints the commits, fast records, fallbacks and fast-commit bytes taken.
fsync_loop() {
	python3 - "$@" <<'EOF'
import os, sys
n, page, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
fd = os.open(path, os.O_WRONLY)
for i in range(n):
    os.pwrite(fd, bytes([i % 251]) * 4096, page * 4096)
    os.fsync(fd)
os.close(fd)
EOF
}

snap() { echo "$(st trans_commits) $(st fc_records) $(st fc_fallbacks) $(st journal_fc_bytes)"; }
delta() {	# before after field: the field's growth
	echo "$1 $2" | awk -v f="$3" '{ print $(f + 4) - $f }'
}
# The reasons of fallbacks: their counters (read by one cat), and which
# of them grew.
REASONS="excl op frees create runs dir busy commit moved full"
WHY_FILES=
for r in $REASONS; do WHY_FILES="$WHY_FILES /sys/fs/vsmfs/$(basename "$DEV")/fc_fallback_$r"; done
whys() { echo $(cat $WHY_FILES); }
grew() {	# before after: "reason+n" for each counter that grew
	echo "$1 | $2 | $REASONS" | awk -F'|' '{
		n = split($1, b, " "); split($2, a, " "); split($3, r, " ")
		for (i = 1; i <= n; i++) if (a[i] > b[i]) printf "%s+%d ", r[i], a[i] - b[i] }'
}

mkfs_vsmfs -f "$DEV"
"$VSMFS_TOP/tools/vsmfs-inspect" "$DEV" 2>/dev/null | grep -qi "fast" ||
	die "a new file system has no fast-commit areas"
# No commit by the timer in the middle of a count (commit=300).
mount -t vsmfs -o commit=300 "$DEV" "$MNT"
grep -q "fast_commit" /proc/mounts && die "fast_commit shown though the default"
dd if=/dev/urandom of="$MNT/f" bs=64k count=4 status=none
sync
cmp_ref() { cp "$MNT/f" /tmp/fc-ref; }

b=$(snap)
fsync_loop 200 3 "$MNT/f"
a=$(snap)
commits=$(delta "$b" "$a" 1); recs=$(delta "$b" "$a" 2)
falls=$(delta "$b" "$a" 3); bytes=$(delta "$b" "$a" 4)
echo "200 overwrites + fsync: $commits commits, $recs records ($bytes bytes), $falls fallbacks"
[ "$recs" -ge 190 ] || die "$recs fast records for 200 fsync'd overwrites"
[ "$commits" -le 10 ] || die "$commits commits for 200 fsync'd overwrites"
[ "$bytes" -le $(( recs * 192 )) ] || die "$bytes bytes for $recs records"

# More records in one transaction than the CPU's area holds (32 blocks):
# they go on in the next areas, nothing commits for want of room.
sync
b=$(snap)
fsync_loop 1500 3 "$MNT/f"
a=$(snap)
bytes=$(delta "$b" "$a" 4)
echo "1500 overwrites + fsync: $(delta "$b" "$a" 1) commits, $(delta "$b" "$a" 2) records ($bytes bytes)"
[ "$bytes" -gt 131072 ] || die "$bytes bytes of records: no more than one area holds"
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 3)" "0 0" \
	"commits and fallbacks of records past one area"

# An fsync of a file nothing changed since: no record, no commit.
b=$(snap)
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); [os.fsync(fd) for _ in range(50)]' "$MNT/f"
a=$(snap)
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2)" "0 0" "commits and records of unchanged fsyncs"

# A write within the last page grows the size: a record too.
b=$(snap)
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
for i in range(20):
    os.write(fd, b"%09d\n" % i)
    os.fsync(fd)' "$MNT/f"
a=$(snap)
[ "$(delta "$b" "$a" 2)" -ge 18 ] || die "$(delta "$b" "$a" 2) records for 20 small appends"

# Appends of whole pages to a large file (256 KiB and more), into the
# pages it owns past its end (the reserved tail of its superpage): a
# record each, but for the first.
dd if=/dev/zero of="$MNT/g" bs=64k count=8 status=none
sync
b=$(snap)
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
for i in range(50):
    os.write(fd, bytes([i]) * 4096)
    os.fsync(fd)' "$MNT/g"
a=$(snap)
echo "50 appends of 4 KiB + fsync: $(delta "$b" "$a" 1) commits, $(delta "$b" "$a" 2) records"
[ "$(delta "$b" "$a" 2)" -ge 40 ] || die "$(delta "$b" "$a" 2) records for 50 appends of 4 KiB"
python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
want = bytes(512 * 1024) + b"".join(bytes([i]) * 4096 for i in range(50))
assert d == want, "appended contents"' "$MNT/g"

# Appends of whole pages to a small file, into pages reserved after its
# run: the record sets their bits in the bitmap; most fsyncs commit nothing.
printf 'x' > "$MNT/h"
sync
b=$(snap)
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
for i in range(30):
    os.write(fd, bytes([i + 1]) * 4096)
    os.fsync(fd)' "$MNT/h"
a=$(snap)
echo "30 appends of 4 KiB + fsync to a small file: $(delta "$b" "$a" 1) commits," \
	"$(delta "$b" "$a" 2) records"
[ "$(delta "$b" "$a" 2)" -ge 15 ] || die "$(delta "$b" "$a" 2) records for 30 appends of 4 KiB"

# Small files side by side, each appended to past the pages after its run
# (another file's): the append moves the run to pages it takes, and the
# record carries both runs' page table entries (up to 20 here) and clears
# the old run's bits; no fsync commits for what the move freed, nor for a
# record too large.
mkdir "$MNT/mv"
sync
b=$(snap); bw=$(whys); bm=$(st zfdm_migrations)
python3 -c '
import os, sys
d = sys.argv[1]
fds = [os.open("%s/m%02d" % (d, i), os.O_CREAT | os.O_WRONLY | os.O_APPEND) for i in range(16)]
for r in range(5):
    for i, fd in enumerate(fds):
        os.write(fd, bytes([16 * r + i + 1]) * (4096 * (r + 1)))
        os.fsync(fd)
for fd in fds:
    os.close(fd)' "$MNT/mv"
a=$(snap); aw=$(whys); am=$(st zfdm_migrations)
echo "80 appends + fsync to 16 small files: $((am - bm)) runs moved, $(delta "$b" "$a" 1)" \
	"commits, $(delta "$b" "$a" 2) records, fallbacks: $(grew "$bw" "$aw")"
[ $((am - bm)) -ge 16 ] || die "$((am - bm)) runs moved by 64 appends past other files' runs"
case " $(grew "$bw" "$aw")" in *" frees+"* | *" full+"* | *" runs+"*)
	die "an fsync after a run moved committed";; esac
[ "$(delta "$b" "$a" 2)" -ge 60 ] || die "$(delta "$b" "$a" 2) records for 80 appends"
python3 -c '
import sys
for i in range(16):
    d = open("%s/m%02d" % (sys.argv[1], i), "rb").read()
    want = b"".join(bytes([16 * r + i + 1]) * (4096 * (r + 1)) for r in range(5))
    assert d == want, "contents of m%02d" % i' "$MNT/mv"

fsync_path() {
	python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$1"
}
# Create empty files (open(O_CREAT) alone: touch would set their times too).
create() {
	python3 -c 'import os,sys; [os.close(os.open(p, os.O_CREAT | os.O_WRONLY)) for p in sys.argv[1:]]' "$@"
}

# Creates of empty files, each fsync'd: a record carries the new inode, its
# i-number's bit, its entry and the directory's changed words; a create
# that takes a new directory block commits. The directory's fsync then
# has nothing to commit: records carry every change of it.
mkdir "$MNT/cd"
sync
b=$(snap)
python3 -c '
import os, sys
for i in range(100):
    fd = os.open("%s/file-%03d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY, 0o640)
    os.fsync(fd)
    os.close(fd)' "$MNT/cd"
a=$(snap)
echo "100 creates + fsync: $(delta "$b" "$a" 1) commits, $(delta "$b" "$a" 2) records" \
	"($(delta "$b" "$a" 4) bytes), $(delta "$b" "$a" 3) fallbacks"
[ "$(delta "$b" "$a" 2)" -ge 90 ] || die "$(delta "$b" "$a" 2) records for 100 creates + fsync"
[ "$(delta "$b" "$a" 1)" -le 10 ] || die "$(delta "$b" "$a" 1) commits for 100 creates + fsync"
[ "$(delta "$b" "$a" 4)" -le $(( $(delta "$b" "$a" 2) * 320 )) ] ||
	die "$(delta "$b" "$a" 4) bytes for $(delta "$b" "$a" 2) create records"
b=$(snap)
fsync_path "$MNT/cd"
a=$(snap)
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2)" "0 0" \
	"commits and records of a directory fsync after fsync'd creates"
# The commit that supersedes those records writes the inode-table blocks
# they carry home in place, the words the transaction changed, known from
# DRAM: none of those blocks is read back from PM (journal_read_bytes) to
# find them (a home write read each before).
h=$(st journal_home_blocks)
r=$(st journal_read_bytes)
sync
h=$(( $(st journal_home_blocks) - h ))
r=$(( $(st journal_read_bytes) - r ))
echo "the sync after them: $h blocks written home, $r bytes read back"
[ "$h" -ge 2 ] || die "$h blocks written home by the commit of 100 fsync'd creates"
[ "$r" -lt $(( h * 4096 )) ] || die "$r bytes read back for $h blocks written home"

# A create, a first write of 100 bytes into a page taken from the CPU's
# pool, an fsync: one record carries both.
b=$(snap)
python3 -c '
import os, sys
for i in range(50):
    fd = os.open("%s/w-%03d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"%099d\n" % i)
    os.fsync(fd)
    os.close(fd)' "$MNT/cd"
a=$(snap)
echo "50 creates + write + fsync: $(delta "$b" "$a" 1) commits, $(delta "$b" "$a" 2) records"
[ "$(delta "$b" "$a" 2)" -ge 40 ] || die "$(delta "$b" "$a" 2) records for 50 creates + write + fsync"
for i in 0 17 49; do
	assert_eq "$(cat "$MNT/cd/w-0$(printf %02d $i)")" "$(printf %099d $i)" "contents of w-0$i"
done

# Two creates, then an fsync of the first: the directory changed after
# it, no record carries that: the fsync commits. So does a create in a
# directory made in the transaction.
b=$(snap); wb=$(whys)
create "$MNT/cd/two-1" "$MNT/cd/two-2"
fsync_path "$MNT/cd/two-1"
a=$(snap); wa=$(whys)
[ "$(delta "$b" "$a" 1)" -ge 1 ] || die "fsync of a create another create followed committed nothing"
assert_eq "$(delta "$b" "$a" 2)" 0 "fast records of a create another create followed"
assert_eq "$(grew "$wb" "$wa")" "dir+1 " "reason of the fallback of a create another followed"
b=$(snap); wb=$(whys)
mkdir "$MNT/newdir"
create "$MNT/newdir/x"
fsync_path "$MNT/newdir/x"
a=$(snap); wa=$(whys)
[ "$(delta "$b" "$a" 1)" -ge 1 ] || die "fsync of a create in a new directory committed nothing"
assert_eq "$(delta "$b" "$a" 2)" 0 "fast records of a create in a new directory"
# Its create took the new directory's first block: more than a record carries.
assert_eq "$(grew "$wb" "$wa")" "create+1 " "reason of the fallback of a create in a new directory"

# A new directory, fsync'd: a record (the directory's link count with
# the entry); its fsync again, nothing.
b=$(snap)
mkdir "$MNT/cd/sub"
fsync_path "$MNT/cd/sub"
fsync_path "$MNT/cd/sub"
a=$(snap)
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2)" "0 1" "commits and records of mkdir + fsync"

# A new file: a record. Renamed in its directory to a name not in use:
# a record (both entries, the directory's words), and the directory's
# fsync then commits nothing.
b=$(snap)
create "$MNT/new"
fsync_path "$MNT/new"
a=$(snap)
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2)" "0 1" "commits and records of a create + fsync"
b=$(snap)
mv "$MNT/new" "$MNT/new1"
fsync_path "$MNT/new1"
fsync_path "$MNT"
a=$(snap)
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2)" "0 1" \
	"commits and records of a rename in its directory + fsync"

# Renamed over another file, into another directory and back, truncated
# shorter: the fsync commits.
dd if=/dev/urandom of="$MNT/new1" bs=4k count=4 status=none
create "$MNT/victim"
sync
for op in "mv $MNT/new1 $MNT/victim:$MNT/victim" "mv $MNT/victim $MNT/cd/moved:$MNT/cd/moved" \
	  "mv $MNT/cd/moved $MNT/new2:$MNT/new2" "truncate -s 8k $MNT/new2:$MNT/new2"; do
	b=$(snap); wb=$(whys)
	${op%%:*}
	fsync_path "${op#*:}"
	a=$(snap); wa=$(whys)
	[ "$(delta "$b" "$a" 1)" -ge 1 ] || die "'${op%%:*}' then fsync committed nothing"
	assert_eq "$(delta "$b" "$a" 2)" 0 "fast records after '${op%%:*}'"
	echo "'${op%%:*}' then fsync: fallback $(grew "$wb" "$wa")"
	[ -n "$(grew "$wb" "$wa")" ] || die "no reason counted for the fallback after '${op%%:*}'"
done

# Changes of attributes (mode, owners, times, a size that grows the
# file): a record each, no commit; the values as set.
for op in "chmod 604 $MNT/new2" "chown 12:34 $MNT/new2" "truncate -s 1M $MNT/new2" \
	  "touch -m -d @1000000000.5 $MNT/new2" "chmod 4755 $MNT/new2"; do
	b=$(snap)
	$op
	fsync_path "$MNT/new2"
	a=$(snap)
	assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2)" "0 1" "commits and records of '$op' + fsync"
done
attrs=$(stat -c '%a %u %g %s %Y' "$MNT/new2")
assert_eq "$attrs" "4755 12 34 1048576 1000000000" "attributes after their records"

# A link: a record (the entry, the link count). A link of a file whose
# create in another directory has no record yet: the fsync commits.
b=$(snap)
ln "$MNT/new2" "$MNT/cd/lnk"
fsync_path "$MNT/cd/lnk"
a=$(snap)
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2)" "0 1" "commits and records of a link + fsync"
create "$MNT/cd/pending"
b=$(snap)
ln "$MNT/cd/pending" "$MNT/pending2"
fsync_path "$MNT/pending2"
a=$(snap)
[ "$(delta "$b" "$a" 1)" -ge 1 ] || die "a link of a file created without a record: no commit"

# An extended attribute set (beside other operations, in a handle no
# record describes), then fsync: counted under op. A directory moved to
# another (a handle that runs alone), then fsync'd: under excl.
b=$(snap); wb=$(whys)
python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.fc", b"1"); fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$MNT/new2"
a=$(snap); wa=$(whys)
assert_eq "$(delta "$b" "$a" 2) $(grew "$wb" "$wa")" "0 op+1 " "fsync after setxattr"
mkdir "$MNT/cd/sub2"
sync
b=$(snap); wb=$(whys)
mv "$MNT/cd/sub2" "$MNT/sub2"
fsync_path "$MNT/sub2"
a=$(snap); wa=$(whys)
assert_eq "$(delta "$b" "$a" 2) $(grew "$wb" "$wa")" "0 excl+1 " "fsync of a directory moved"
# A file of the directory deleted, then a new one created, written and
# fsync'd (a mail spool's loop): the create's record carries the removal,
# no commit. Two files deleted before the create: the first removal is a
# change of the directory no record carries, counted under dir.
dd if=/dev/urandom of="$MNT/cd/old" bs=4k count=2 status=none
dd if=/dev/urandom of="$MNT/cd/old2" bs=4k count=2 status=none
dd if=/dev/urandom of="$MNT/cd/old3" bs=4k count=2 status=none
sync
b=$(snap); wb=$(whys)
rm "$MNT/cd/old"
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY); os.write(fd, b"x" * 100); os.fsync(fd)' "$MNT/cd/mail"
a=$(snap); wa=$(whys)
assert_eq "$(delta "$b" "$a" 1) $(delta "$b" "$a" 2) $(grew "$wb" "$wa")" "0 1 " \
	"fsync of a create after an unlink"
b=$(snap); wb=$(whys)
rm "$MNT/cd/old2" "$MNT/cd/old3"
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY); os.write(fd, b"x" * 100); os.fsync(fd)' "$MNT/cd/mail2"
a=$(snap); wa=$(whys)
assert_eq "$(delta "$b" "$a" 2) $(grew "$wb" "$wa")" "0 dir+1 " "fsync of a create after two unlinks"
# Every fallback counted under one reason.
assert_eq "$(whys | awk '{ for (i = 1; i <= NF; i++) s += $i; print s + 0 }')" \
	"$(st fc_fallbacks)" "fallbacks against the sum of their reasons"

# Contents and times survive a remount; fsck clean.
cmp_ref
cp "$MNT/g" /tmp/fc-ref-g
cp "$MNT/h" /tmp/fc-ref-h
mt=$(stat -c %y "$MNT/f")
umount "$MNT"
"$FSCK" -n "$DEV" >/dev/null || die "fsck after fast commits"
mount -t vsmfs -o commit=300 "$DEV" "$MNT"
cmp "$MNT/f" /tmp/fc-ref || die "contents changed across a remount"
cmp "$MNT/g" /tmp/fc-ref-g || die "appended contents changed across a remount"
cmp "$MNT/h" /tmp/fc-ref-h || die "small file's contents changed across a remount"
assert_eq "$(stat -c %y "$MNT/f")" "$mt" "mtime across a remount"
assert_eq "$(find "$MNT/cd" -name 'file-*' -size 0 -perm 640 | wc -l)" 100 \
	"created files across a remount"
assert_eq "$(cat "$MNT/cd/w-017")" "$(printf %099d 17)" "a written new file across a remount"
[ -d "$MNT/cd/sub" ] || die "a new directory fsync'd, lost across a remount"
assert_eq "$(stat -c '%a %u %g %s %Y' "$MNT/new2")" "$attrs" "attributes across a remount"
assert_eq "$(stat -c %h "$MNT/new2") $(stat -c %i "$MNT/new2")" \
	"2 $(stat -c %i "$MNT/cd/lnk")" "a linked file across a remount"
[ -e "$MNT/new" ] || [ -e "$MNT/new1" ] || [ -e "$MNT/victim" ] &&
	die "a renamed file under an old name across a remount"

# fast_commit=off: shown, and every fsync commits; on again by remount.
mount -o remount,fast_commit=off "$MNT"
grep -q "fast_commit=off" /proc/mounts || die "fast_commit=off not shown"
b=$(snap)
fsync_loop 20 5 "$MNT/f"
a=$(snap)
[ "$(delta "$b" "$a" 1)" -ge 20 ] || die "$(delta "$b" "$a" 1) commits for 20 fsyncs with fast_commit=off"
assert_eq "$(delta "$b" "$a" 2)" 0 "records with fast_commit=off"
mount -o remount,fast_commit=on "$MNT"
grep -q "fast_commit" /proc/mounts && die "fast_commit shown after remount to the default"
expect_fail mount -o remount,fast_commit=maybe "$MNT"
umount "$MNT"

# Without the feature: every fsync commits, no record.
mkfs_vsmfs -f -O ^fast_commit "$DEV"
mount -t vsmfs "$DEV" "$MNT"
dd if=/dev/zero of="$MNT/f" bs=64k count=1 status=none
sync
b=$(snap)
fsync_loop 20 1 "$MNT/f"
a=$(snap)
[ "$(delta "$b" "$a" 1)" -ge 20 ] || die "$(delta "$b" "$a" 1) commits for 20 fsyncs without the feature"
assert_eq "$(delta "$b" "$a" 2)" 0 "records without the feature"
umount "$MNT"
"$FSCK" -n "$DEV" >/dev/null || die "fsck without the feature"
echo "fast commits: ok"
