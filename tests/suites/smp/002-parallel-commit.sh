# Commits that write the journal side by side: eight processes on eight
# vCPUs create files and append fsync'd records to them, on a 2 MiB
# journal that fills every few hundred commits, so that GC and the
# checkpoint threads run among the commits in flight. The counters must show
# commits waiting for their turn (they were in flight together), lock
# waits, commits placed while the next transaction changed DRAM, and
# checkpoints copied by several threads. A commit in flight with another
# is left to chance no longer: ten times during the run, one commit stops
# (fault point journal_turn_wait) once its journal blocks are durable,
# for 0.3 s, and the commits after it (of the fsyncs that follow an
# xattr's change, which no fast record carries) must write theirs and
# wait for their turn. Every record is in its file, across a remount;
# fsck finds nothing. The same run with journal_commit=serial is shown
# for comparison (numbers only).
. tests/lib/common.sh

[ "$(nproc)" -ge 8 ] || die "the group needs 8 CPUs, the VM has $(nproc)"
K=/sys/kernel/debug/vsmfs/journal_turn_wait
[ -w $K/interval ] || die "fault point journal_turn_wait missing"

# Stop one commit at a time before its turn, ten times, while $1 exists.
turn_stops() {
	local k n i
	for k in $(seq 10); do
		[ -e "$1" ] || break
		n=$(cat $K/injected)
		echo 1 > $K/interval
		for i in $(seq 100); do
			[ "$(cat $K/injected)" -gt "$n" ] && break
			sleep 0.05
		done
		# The stopped commit waits on; the others pass the point.
		echo 4294967295 > $K/interval
		sleep 0.3
		echo 0 > $K/interval
		sleep 1
	done
	echo 0 > $K/interval
}
cat > /tmp/commit.py <<'PY'
import hashlib, json, os, random, sys, time
from multiprocessing import Process

mnt, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]


def worker(i):
    rnd = random.Random(i)
    own = os.path.join(mnt, f"w{i}")
    os.mkdir(own)
    files, ops = {}, 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        name = os.path.join(own, f"f{rnd.randrange(40)}")
        rec = f"{i} {ops} {rnd.random()}\n".encode()
        fd = os.open(name, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
        os.write(fd, rec)
        os.fsync(fd)
        os.close(fd)
        files[name] = files.get(name, b"") + rec
        ops += 1
        if ops % 25 == 0:
            # Metadata only: a rename back and forth, an xattr.
            os.rename(name, name + ".r")
            os.rename(name + ".r", name)
            os.setxattr(name, "user.n", str(ops).encode())
            # No fast record carries an xattr: this fsync commits.
            fd = os.open(name, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    with open(f"{out}.{i}", "w") as f:
        json.dump({"ops": ops,
                   "files": {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}}, f)


procs = [Process(target=worker, args=(i,)) for i in range(8)]
for p in procs:
    p.start()
for p in procs:
    p.join()
if any(p.exitcode for p in procs):
    sys.exit("a process failed")
ops = sum(json.load(open(f"{out}.{i}"))["ops"] for i in range(8))
print(f"{ops} fsync'd appends by 8 processes in {secs:.0f} s")
PY
cat > /tmp/commit-check.py <<'PY'
import hashlib, json, sys

out, n = sys.argv[1], 0
for i in range(8):
    for k, sha in json.load(open(f"{out}.{i}"))["files"].items():
        with open(k, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != sha:
                sys.exit(f"{k}: content differs from what was appended")
        n += 1
print(f"{n} files hold every record appended")
PY

for mode in parallel serial; do
	mkfs_vsmfs -f -J 2M "$DEV"
	mount_vsmfs -o journal_commit=$mode,checkpoint_threads=4,checkpoint=1
	stops=$(cat $K/injected)
	if [ $mode = parallel ]; then
		touch /tmp/commit.running
		turn_stops /tmp/commit.running &
		stopper=$!
	fi
	python3 /tmp/commit.py "$MNT" 20 /tmp/commit.out
	if [ $mode = parallel ]; then
		rm -f /tmp/commit.running
		wait $stopper
		stops=$(($(cat $K/injected) - stops))
		echo "$stops commits stopped before their turn"
		[ "$stops" -gt 0 ] || die "no commit stopped at journal_turn_wait"
	fi
	echo "journal_commit=$mode: $(counter trans_commits) commits," \
		"$(counter journal_order_waits) waited for their turn," \
		"$(counter journal_lock_waits) lock waits, $(counter journal_deferred_blocks) blocks written after the lock," \
		"$(counter journal_pipelined) placed while the next changed DRAM," \
		"$(counter journal_frozen_copies) blocks copied for a commit in flight," \
		"$(counter journal_place_waits) placement waits," \
		"$(counter journal_drain_waits) drains," \
		"$(counter journal_checkpoints) checkpoints, $(counter journal_full_blocks) full $(counter journal_delta_blocks) delta blocks" \
		"($(counter journal_checkpoint_parallel) by 4 threads), $(counter journal_gc_runs) GC runs," \
		"mutex held $(($(counter journal_lock_hold_ns) / 1000000)) ms," \
		"waited for $(($(counter journal_lock_wait_ns) / 1000000)) ms"
	[ "$(counter journal_lock_hold_ns)" -gt 0 ] || die "no time counted under the mutex"
	if [ "$(counter journal_lock_waits)" -gt 0 ]; then
		[ "$(counter journal_lock_wait_ns)" -gt 0 ] || die "lock waits that took no time"
	fi
	if [ $mode = parallel ]; then
		[ "$(counter journal_order_waits)" -gt 0 ] || die "no commit was in flight with another"
		[ "$(counter journal_lock_waits)" -gt 0 ] || die "no lock wait counted"
		[ "$(counter journal_deferred_blocks)" -gt 0 ] ||
			die "no journal block written after the lock"
		[ "$(counter journal_pipelined)" -gt 0 ] ||
			die "no commit handed the transaction mutex over before its placement"
		[ "$(counter journal_frozen_copies)" -gt 0 ] ||
			die "no block was changed while its commit was in flight"
		[ "$(counter journal_checkpoint_parallel)" -gt 0 ] ||
			die "no checkpoint ran on several threads"
	else
		assert_eq "$(counter journal_order_waits)" 0 "turn waits with serial commits"
		assert_eq "$(counter journal_deferred_blocks)" 0 "blocks written after the lock, serial"
		assert_eq "$(counter journal_pipelined)" 0 "commits placed after the lock, serial"
		assert_eq "$(counter journal_frozen_copies)" 0 "blocks copied for commits, serial"
	fi
	python3 /tmp/commit-check.py /tmp/commit.out
	umount "$MNT"
	"$FSCK" -n "$DEV" || die "fsck after journal_commit=$mode"
	mount_vsmfs
	python3 /tmp/commit-check.py /tmp/commit.out
	umount "$MNT"
done
