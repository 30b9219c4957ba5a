# Fast commits beside commits: the fsync of a new file that finds a
# commit in flight (another task calls syncfs in a loop) waits for it,
# then writes its record, or returns if that commit holds the file
# (fc_waits), instead of committing (fc_fallback_commit); every file as
# written across a remount, fsck clean.
. tests/lib/common.sh

st() { counter "$1"; }

mkfs_vsmfs -f "$DEV"
# No commit by the timer in the middle of a count (commit=300).
mount -t vsmfs -o commit=300 "$DEV" "$MNT"
mkdir "$MNT/d"
sync
w0=$(st fc_waits); c0=$(st fc_fallback_commit); r0=$(st fc_records); f0=$(st fc_fallbacks)

# 400 files created, written and fsync'd in $MNT/d on CPU 0 while another
# process calls syncfs in a loop on CPU 1.
python3 - "$MNT/d" <<'PY'
import ctypes, os, sys
d = sys.argv[1]
pid = os.fork()
if pid == 0:
    os.sched_setaffinity(0, {1})
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(d, os.O_RDONLY)
    while not os.path.exists(d + "/done"):
        if libc.syncfs(fd) != 0:
            os._exit(1)
    os._exit(0)
os.sched_setaffinity(0, {0})
for i in range(400):
    fd = os.open("%s/f-%d" % (d, i), os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"file %d\n" % i)
    os.fsync(fd)
    os.close(fd)
open(d + "/done", "w").close()
_, status = os.waitpid(pid, 0)
os.unlink(d + "/done")
sys.exit("syncfs failed" if status else 0)
PY
waits=$(( $(st fc_waits) - w0 )); commit=$(( $(st fc_fallback_commit) - c0 ))
recs=$(( $(st fc_records) - r0 )); falls=$(( $(st fc_fallbacks) - f0 ))
echo "400 creates + fsync beside syncs: records $recs, waits $waits, fallbacks $falls" \
	"(commit $commit)"
[ "$waits" -ge 1 ] || die "no fsync found a commit in flight beside 400 syncs"
# Four tries each: a fallback only if a new commit began each time.
[ "$commit" -le 2 ] || die "$commit fsyncs committed as a commit was in flight"
[ "$recs" -ge 1 ] || die "no fast record beside the syncs"

umount "$MNT"
"$FSCK" -n "$DEV" >/dev/null || die "fsck after the loop"
mount -t vsmfs "$DEV" "$MNT"
for i in 0 1 199 398 399; do
	[ "$(cat "$MNT/d/f-$i")" = "file $i" ] || die "d/f-$i not as written"
done
[ "$(ls "$MNT/d" | wc -l)" -eq 400 ] || die "$(ls "$MNT/d" | wc -l) files in d, not 400"
umount "$MNT"
