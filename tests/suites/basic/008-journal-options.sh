# Journal mount options: journal_delta=, journal_wear=, journal_gc=,
# checkpoint=, checkpoint_threshold=, journal_commit=, commit= and
# checkpoint_threads= are accepted, shown in /proc/mounts
# when not the default, changed by remount, and bad values are refused with
# a message.
. tests/lib/common.sh

opts() { awk -v d="$DEV" '$1 == d { print $4 }' /proc/mounts; }

mkfs_vsmfs -f "$DEV"
mount_vsmfs -o journal_delta=on,journal_wear=on,journal_gc=on,checkpoint=300,checkpoint_threshold=75,journal_commit=parallel,commit=5
case $(opts) in *journal*|*checkpoint*|*commit*) die "defaults shown: $(opts)" ;; esac
umount "$MNT"
# commit=0 is the default, as for ext4.
mount_vsmfs -o commit=0
case $(opts) in *commit*) die "commit=0 shown: $(opts)" ;; esac
umount "$MNT"

for o in journal_delta=off journal_wear=off journal_gc=off checkpoint=0 checkpoint=60 \
	checkpoint_threshold=50 checkpoint_threshold=100 journal_commit=serial \
	commit=sync commit=1 commit=300 checkpoint_threads=1 checkpoint_threads=8; do
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
mount -o remount,journal_commit=serial "$MNT"
case $(opts) in *journal_commit=serial*) ;; *) die "remount serial: $(opts)" ;; esac
echo y > "$MNT/g"
sync
mount -o remount,journal_commit=parallel "$MNT"
case $(opts) in *journal_commit*) die "remount parallel: $(opts)" ;; esac
mount -o remount,commit=sync "$MNT"
case $(opts) in *commit=sync*) ;; *) die "remount commit=sync: $(opts)" ;; esac
mount -o remount,commit=30 "$MNT"
case $(opts) in *commit=30*) ;; *) die "remount commit=30: $(opts)" ;; esac
umount "$MNT"

# The checkpoint threads are set at mount; a remount keeps them. They
# are kernel threads named after the device.
mount_vsmfs -o checkpoint_threads=3
assert_eq "$(pgrep -c "^vsmfscp/${DEV##*/}/")" 2 "checkpoint threads besides the caller"
mount -o remount,checkpoint_threads=5 "$MNT"
case $(opts) in *checkpoint_threads=3*) ;; *) die "threads changed by remount: $(opts)" ;; esac
umount "$MNT"
assert_eq "$(pgrep -c "^vsmfscp/${DEV##*/}/")" 0 "checkpoint threads left after unmount"

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
bad commit=301 "commit=301: sync, or seconds from 0 to 300"
bad commit=soon "commit=soon: sync, or seconds from 0 to 300"
bad journal_commit=fast "Bad value for 'journal_commit'"
bad checkpoint_threads=0 "checkpoint_threads=0: from 1 to 8 threads"
bad checkpoint_threads=9 "checkpoint_threads=9: from 1 to 8 threads"
