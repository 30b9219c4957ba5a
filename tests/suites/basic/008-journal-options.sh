# Journal mount options: journal_delta=, journal_wear=, journal_gc=,
# checkpoint= and checkpoint_threshold= are accepted, shown in /proc/mounts
# when not the default, changed by remount, and bad values are refused with
# a message.
. tests/lib/common.sh

opts() { awk -v d="$DEV" '$1 == d { print $4 }' /proc/mounts; }

mkfs_vsmfs -f "$DEV"
mount_vsmfs -o journal_delta=on,journal_wear=on,journal_gc=on,checkpoint=300,checkpoint_threshold=75
case $(opts) in *journal*|*checkpoint*) die "defaults shown: $(opts)" ;; esac
umount "$MNT"

for o in journal_delta=off journal_wear=off journal_gc=off checkpoint=0 checkpoint=60 \
	checkpoint_threshold=50 checkpoint_threshold=100; do
	mount_vsmfs -o "$o"
	case ,$(opts), in *,"$o",*) ;; *) die "-o $o not shown: $(opts)" ;; esac
	echo x > "$MNT/f"
	umount "$MNT"
done

# Remount changes them, and a later remount keeps what it does not name.
mount_vsmfs
mount -o remount,journal_delta=off,checkpoint=10 "$MNT"
case $(opts) in *journal_delta=off*checkpoint=10*) ;; *) die "remount: $(opts)" ;; esac
mount -o remount,journal_gc=off "$MNT"
case $(opts) in *journal_delta=off*journal_gc=off*checkpoint=10*) ;; *) die "remount 2: $(opts)" ;; esac
mount -o remount,journal_delta=on,journal_gc=on,checkpoint=300 "$MNT"
case $(opts) in *journal*|*checkpoint*) die "back to defaults: $(opts)" ;; esac
umount "$MNT"

bad() {	# option message
	dmesg -C
	assert_eq "$(mount_errno "$DEV" "$MNT" "$1")" EINVAL "$1"
	dmesg_has "$2"
}
bad journal_delta=maybe "Bad value for 'journal_delta'"
bad journal_wear=1x "Bad value for 'journal_wear'"
bad journal_gc= "journal_gc"
bad checkpoint=abc "Bad value for 'checkpoint'"
bad checkpoint=-5 "Bad value for 'checkpoint'"
bad checkpoint=86401 "checkpoint=86401: at most 86400 seconds"
bad checkpoint_threshold=0 "checkpoint_threshold=0: a percentage from 1 to 100"
bad checkpoint_threshold=101 "checkpoint_threshold=101: a percentage from 1 to 100"
bad commit=5 "Unknown parameter 'commit'"
