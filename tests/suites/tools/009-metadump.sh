# vsmfs-inspect --metadump and --restore on a populated file system and
# on a damaged copy: the restored image holds no file data, fsck.vsmfs
# gives the same exit status and messages (names and their hashes aside,
# exactly the same with --no-obfuscate) and vsmfs-inspect
# shows the same file system; names of entries, xattrs and symlink targets,
# also in journal versions, are obfuscated unless --no-obfuscate.
. tests/lib/common.sh
. tests/lib/fsck.sh

INSPECT="$VSMFS_TOP/tools/vsmfs-inspect"
SECRET="file-content-left-out-of-dumps"

# Every kind of metadata block: a directory with an indirect index block
# (300 long names), hard links, fast and long symlinks, an xattr, a file
# of several runs and a sparse one.
mkfs_vsmfs -f "$DEV"
mount_vsmfs
(
	cd "$MNT"
	mkdir -p big/sub secretdirname
	python3 -c 'import os
for i in range(300):
    open("big/%s%04d" % ("n" * 96, i), "w").close()'
	echo "$SECRET" > secretdirname/secretfilename
	ln secretdirname/secretfilename big/sub/hardlink
	setfattr -n user.secretattrname -v 1 secretdirname/secretfilename
	ln -s secretlinkdir/secretlinkfile fastlink
	ln -s "secretlongtarget/$(printf 'w%.0s' $(seq 1 200))" longlink
	head -c 3000000 /dev/zero | tr '\0' 'd' > data
	truncate -s 40M sparse
	echo x | dd of=sparse bs=1 seek=30000000 conv=notrunc 2>/dev/null
)
D=$(stat -c %i "$MNT/big")
F=$(stat -c %i "$MNT/data")
umount "$MNT"
save_image

# Dump, restore, check both: same fsck exit status and messages.
check_dump() {	# what [--no-obfuscate]
	what=$1
	shift
	set +e
	"$FSCK" -n "$DEV" >/tmp/md.orig 2>&1
	orig=$?
	set -e
	"$INSPECT" --metadump /tmp/md.dump "$@" "$DEV"
	"$INSPECT" --restore /tmp/md.dump /tmp/md.img
	set +e
	"$FSCK" -n /tmp/md.img >/tmp/md.rest 2>&1
	rest=$?
	set -e
	sed 's/^/  original: /' /tmp/md.orig
	assert_eq "$rest" "$orig" "$what: fsck.vsmfs exit status on the restored image"
	# Obfuscated names, and the hashes of names, differ; nothing else.
	mask="s/'[^']*'/'NAME'/g; s/(hash 0x[0-9a-f]*, of the name 0x[0-9a-f]*)/(hash H)/"
	[ $# = 0 ] || mask=
	sed "s#^$DEV:#IMG:#; $mask" /tmp/md.orig >/tmp/md.a
	sed "s#^/tmp/md.img:#IMG:#; $mask" /tmp/md.rest >/tmp/md.b
	diff /tmp/md.a /tmp/md.b || die "$what: fsck.vsmfs says other things on the restored image"
	if [ $# = 0 ]; then
		"$INSPECT" -i "$DEV" | sed 1d >/tmp/md.a
		"$INSPECT" -i /tmp/md.img | sed 1d >/tmp/md.b
		diff /tmp/md.a /tmp/md.b || die "$what: vsmfs-inspect shows another file system"
	fi
	! grep -qF "$SECRET" /tmp/md.dump || die "$what: file data in the dump"
	! grep -qF dddddddddddddddddddddddddddddddd /tmp/md.dump || die "$what: file data in the dump"
}

leaks() {
	for n in secretdirname secretfilename secretattrname secretlinkdir secretlinkfile \
		 secretlongtarget nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn0299 hardlink; do
		grep -qF "$n" /tmp/md.dump && echo "$n"
	done
	true
}

check_dump "sound"
assert_eq "$(leaks)" "" "names left in the obfuscated dump"
check_dump "sound, names kept" --no-obfuscate
assert_eq "$(leaks | wc -l)" 8 "names in the dump made with --no-obfuscate"
grep -qF 'no errors found' /tmp/md.rest || die "restored image not clean"
# The restored image mounts and lists what the original holds.
dd if=/tmp/md.img of="$DEV" bs=1M oflag=direct conv=fsync 2>/dev/null
mount_vsmfs -o ro
ls "$MNT/secretdirname" | grep -qx secretfilename || die "restored tree lacks a name"
assert_eq "$(getfattr --only-values -n user.secretattrname "$MNT/secretdirname/secretfilename")" 1 \
	"xattr of the restored tree"
assert_eq "$(stat -c %s "$MNT/data")" 3000000 "size of a file in the restored tree"
assert_eq "$(head -c 4096 "$MNT/data" | tr -d '\0' | wc -c)" 0 "data of the restored tree"
umount "$MNT"

# Damage: a wrong entry hash, a bad link count, and a rename committed to
# the journal but not written home.
restore_image
"$POKE" "$DEV" dirent "$D" "$(printf 'n%.0s' $(seq 1 96))0005" set hash=1
"$POKE" "$DEV" inode "$F" set nlink=5
"$POKE" -j "$DEV" dirent "$D" "$(printf 'n%.0s' $(seq 1 96))0006" set name=secretjn
check_dump "damaged"
assert_eq "$(leaks)" "" "names left in the obfuscated dump of the damaged image"
grep -qF secretjn /tmp/md.dump && die "a name in a journal version left in the dump"
grep -qF "link count 5" /tmp/md.rest || die "damage not reported on the restored image"
"$INSPECT" --metadump /tmp/md.dump --no-obfuscate "$DEV"
grep -qF secretjn /tmp/md.dump || die "--no-obfuscate: journal version name missing"
restore_image
rm -f /tmp/md.dump /tmp/md.img /tmp/md.orig /tmp/md.rest /tmp/md.a /tmp/md.b
