// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs NVM metadata journal, garbage collection and checkpoint: the
 * compaction of the checkpoint area, the copy of the latest versions home
 * (by the checkpoint threads), the checkpoint timer, and the revocation of
 * a freed block's versions. Each waits for the commits in flight first
 * (vsmfs_jdrain()), under s_jplace_mutex.
 *
 * Garbage collection (vsmfs_jgc()) compacts the checkpoint area with two
 * pointers, swapping the first invalid header with the last valid one (in
 * header batches, vsmfs_jbatch_flush() in journal.c), then moves the
 * checkpoint pointer down with one 8-byte store, flushed, fence.
 * Checkpoint (vsmfs_jcheckpoint()) copies the latest valid versions home
 * (the words that differ from the home block, flushed; with
 * journal_delta=off all of it with non-temporal stores: either way the
 * home block is as the version after the fence, and a crash before it
 * leaves the version in the journal to copy again), spread over the
 * checkpoint threads, which
 * claim runs of headers by compare-and-swap and each fence on their own
 * CPU; once all have, it empties the journal with one 8-byte store of
 * j_checkpoint, flushed, fence. Both run only when no commit is in flight.
 *
 * A metadata block in the data area (directory, index, xattr blocks) that is
 * freed may become file data: its versions are revoked at once
 * (vsmfs_journal_revoke(), for vsmfs_journal_forget()), so that no later
 * checkpoint or recovery writes an old version over the data.
 */
#include <linux/slab.h>
#include <linux/kthread.h>
#include "vsmfs.h"
#include "mcache.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "jcore.h"
#include "journal.h"
#include "badframe.h"

/* Headers a checkpoint thread claims at a time. */
#define VSMFS_JCKPT_CHUNK	16
/* Fewer versions than this are checkpointed by the caller alone. */
#define VSMFS_JCKPT_PARALLEL_MIN	(4 * VSMFS_JCKPT_CHUNK)

/*
 * Wait until every placed transaction has committed: GC, checkpoint and
 * revocation move or read versions that commits in flight still write.
 * Commits in flight never take the lock, so waiting under it is safe.
 */
static void vsmfs_jdrain(struct vsmfs_journal *j)
{
	lockdep_assert_held(&j->sbi->s_jplace_mutex);
	/* Acquire: pairs with the release in vsmfs_jtx_finish(), so @ckpt is seen. */
	if (smp_load_acquire(&j->ticket_done) != j->ticket_next) {
		vsmfs_stat_inc(j->sbi, journal_drain_waits);
		/* Acquire as above. */
		wait_event(j->order_wq, smp_load_acquire(&j->ticket_done) == j->ticket_next);
	}
	WARN_ON_ONCE(j->ckpt != j->resv);
}

/* Two-pointer compaction of the checkpoint area; see the top of the file. */
static void vsmfs_jgc(struct vsmfs_journal *j)
{
	u32 first = 0, end, old, pos;

	if (!j->holes)
		return;
	vsmfs_jdrain(j);
	end = j->ckpt;
	old = j->ckpt;
	while (vsmfs_jgc_next(j->h, &first, &end)) {
		vsmfs_jbatch_room(j);
		vsmfs_jswap(j, first, end - 1);
	}
	vsmfs_jbatch_flush(j);
	vsmfs_fault_stop(j->sbi->s_sb, VSMFS_FAULT_JGC_STOP,
			 "journal stopped in GC, headers moved, pointers not");
	/* The compacted headers are durable (fenced by the batch). */
	vsmfs_jsb_store_commit(j, first);
	vsmfs_jsb_store_state(j, first, first);
	vsmfs_fence();
	for (pos = first; pos < old; pos++) {
		j->h[pos].flags = 0;
		j->h[pos].home = 0;
		vsmfs_wlists_add(&j->free, pos);
	}
	j->ckpt = first;
	j->resv = first;
	j->holes = 0;
	trace_vsmfs_journal_gc(j->sbi->s_sb, old, first);
	vsmfs_stat_inc(j->sbi, journal_gc_runs);
	vsmfs_stat_add(j->sbi, journal_gc_reclaimed, old - first);
}

/**
 * vsmfs_jcount_itable() - count the slots of an inode-table block gone home
 * @sbi: the file system
 * @home: the block, written home by a checkpoint or a commit
 *
 * Counts its inodes changed since it last was (dirty, m_dirty_slots, set
 * by handles with set_bit()) and the others (clean), the measure of how
 * well hot inodes are gathered. A checkpoint may run under s_jplace_mutex
 * alone, beside handles: the slots are taken with xchg().
 */
void vsmfs_jcount_itable(struct vsmfs_sb_info *sbi, u64 home)
{
	struct vsmfs_mblk *mb;
	unsigned int dirty;

	if (!vsmfs_layout_itable(&sbi->s_layout, home))
		return;
	mb = vsmfs_mblk_find(sbi, home);
	if (!mb)
		return;
	/* The next transaction may be setting bits (s_trans_mutex). */
	dirty = hweight_long(xchg(&mb->m_dirty_slots, 0));
	vsmfs_stat_inc(sbi, itable_home_blocks);
	vsmfs_stat_add(sbi, itable_home_dirty, dirty);
	vsmfs_stat_add(sbi, itable_home_clean, VSMFS_INODES_PER_BLOCK - dirty);
}

/*
 * Write the version in journal block @jb home to @home, flushed, not
 * fenced: with deltas on, only the words that differ from the home block
 * (most of an inode table block is as the last checkpoint left it), else
 * all of it with non-temporal stores, as a home block known bad (a
 * directory, index or xattr block on a frame that failed) is: it is not
 * read. Return: bytes written.
 */
static u32 vsmfs_jhome_write(struct vsmfs_journal *j, u64 home, u32 jb)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	void __pm *dst = vsmfs_blk_ptr(sbi, home);
	const void *src = vsmfs_pm_view(vsmfs_jblock(j, jb));

	if (READ_ONCE(sbi->s_jopts.delta) && !vsmfs_blk_bad(sbi, home))
		return vsmfs_jwrite_diff(sbi, dst, src);
	vsmfs_memcpy_nt(dst, src, VSMFS_BLOCK_SIZE);
	return VSMFS_BLOCK_SIZE;
}

/*
 * Copy home the latest versions among headers [0, cp.end), claiming
 * VSMFS_JCKPT_CHUNK headers at a time by compare-and-swap of the cursor,
 * then fence this CPU's stores.
 */
static void vsmfs_jckpt_copy(struct vsmfs_journal *j)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	u32 end = j->cp.end, count = 0, pos, stop;
	int c = atomic_read(&j->cp.cursor);
	u64 bytes = 0;

	for (;;) {
		do {
			if ((u32)c >= end)
				goto done;
		} while (!atomic_try_cmpxchg(&j->cp.cursor, &c, c + VSMFS_JCKPT_CHUNK));
		stop = min_t(u32, c + VSMFS_JCKPT_CHUNK, end);
		for (pos = c; pos < stop; pos++) {
			struct vsmfs_jh *h = &j->h[pos];

			if (!vsmfs_jh_is_latest(h))
				continue;
			bytes += vsmfs_jhome_write(j, h->home, h->jb);
			vsmfs_jcount_itable(sbi, h->home);
			count++;
		}
		c = atomic_read(&j->cp.cursor);
	}
done:
	/* This CPU's copies durable before the caller learns it is done. */
	vsmfs_fence();
	vsmfs_stat_add(sbi, home_bytes, bytes);
	atomic_add(count, &j->cp.count);
}

static int vsmfs_jckpt_thread(void *arg)
{
	struct vsmfs_journal *j = arg;
	u64 seen = 0;

	for (;;) {
		wait_event_idle(j->cp_wq, kthread_should_stop() ||
				READ_ONCE(j->cp.gen) != seen);
		if (kthread_should_stop())
			return 0;
		/* Acquire: pairs with the release in vsmfs_jcheckpoint(). */
		seen = smp_load_acquire(&j->cp.gen);
		vsmfs_jckpt_copy(j);
		/* Full barrier: the copies and the count precede it. */
		if (atomic_dec_and_test(&j->cp.active))
			wake_up_all(&j->order_wq);
	}
}

/**
 * vsmfs_jcheckpoint() - write the latest versions home and empty the journal
 * @j: the journal
 *
 * Context: s_jplace_mutex held; waits for the commits in flight.
 */
void vsmfs_jcheckpoint(struct vsmfs_journal *j)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	struct vsmfs_jent *e, *tmp;
	u64 t0 = vsmfs_trace_start(vsmfs_checkpoint);
	unsigned int helpers = 0;
	u32 pos, count;

	if (!j->resv)
		return;
	vsmfs_jdrain(j);
	j->cp.end = j->ckpt;
	atomic_set(&j->cp.cursor, 0);
	atomic_set(&j->cp.count, 0);
	if (j->ckpt >= VSMFS_JCKPT_PARALLEL_MIN)
		helpers = j->nthreads;
	if (helpers) {
		atomic_set(&j->cp.active, helpers);
		/* Release: the threads see @cp and the headers set up before. */
		smp_store_release(&j->cp.gen, j->cp.gen + 1);
		wake_up_all(&j->cp_wq);
		vsmfs_stat_inc(sbi, journal_checkpoint_parallel);
	}
	vsmfs_jckpt_copy(j);
	if (helpers)
		wait_event(j->order_wq, !atomic_read(&j->cp.active));
	/* Home blocks durable (each thread fenced) before the journal is emptied. */
	smp_mb();
	count = atomic_read(&j->cp.count);
	vsmfs_fault_stop(sbi->s_sb, VSMFS_FAULT_JCKPT_STOP,
			 "journal stopped in a checkpoint, blocks home, journal full");
	vsmfs_jsb_store_commit(j, 0);
	vsmfs_jsb_store_state(j, 0, 0);
	vsmfs_fence();
	for (pos = 0; pos < j->ckpt; pos++) {
		j->h[pos].flags = 0;
		j->h[pos].home = 0;
		vsmfs_wlists_add(&j->free, pos);
	}
	/* The entries in use, not every bucket of the hash. */
	list_for_each_entry_safe(e, tmp, &j->ent_live, live)
		vsmfs_jent_free(j, e);
	j->ckpt = 0;
	j->resv = 0;
	j->holes = 0;
	trace_vsmfs_checkpoint(sbi->s_sb, count, t0);
	vsmfs_stat_inc(sbi, journal_checkpoints);
	vsmfs_stat_add(sbi, journal_checkpoint_blocks, count);
}

/**
 * vsmfs_jreserve() - make room for more versions
 * @j: the journal
 * @k: versions about to be placed
 *
 * GC, then checkpoint, once the journal would pass its fill threshold.
 *
 * Context: s_jplace_mutex held.
 */
void vsmfs_jreserve(struct vsmfs_journal *j, u32 k)
{
	const struct vsmfs_jopts *o = &j->sbi->s_jopts;
	u64 limit = (u64)j->n * o->threshold / 100;

	if (j->resv + k <= limit)
		return;
	if (o->gc)
		vsmfs_jgc(j);
	if (j->resv + k <= limit)
		return;
	vsmfs_jcheckpoint(j);
}

/**
 * vsmfs_journal_checkpoint() - write every committed block home
 * @sbi: the file system, mounted read-write
 *
 * Empties the journal: afterwards every home block of a change committed
 * before the call is current. Used at unmount, remount read-only and sync.
 * Handles run on beside it: the copies read the versions in the journal,
 * never a DRAM block a handle changes, and only placements (commits) wait
 * for s_jplace_mutex, as for a checkpoint of a full journal.
 *
 * Context: process context; takes s_jplace_mutex.
 */
void vsmfs_journal_checkpoint(struct vsmfs_sb_info *sbi)
{
	/* What the running transaction holds goes home too. */
	sbi->s_jclient->sync(sbi, VSMFS_COMMIT_SYNCFS);
	mutex_lock(&sbi->s_jplace_mutex);
	if (sbi->s_journal)
		vsmfs_jcheckpoint(sbi->s_journal);
	mutex_unlock(&sbi->s_jplace_mutex);
}

/**
 * vsmfs_journal_set_writethrough() - checkpoint after every commit
 * @sbi: the file system
 * @on: whether to
 *
 * For code that reads metadata home blocks on PM directly while it commits
 * transactions (orphan cleanup at mount).
 */
void vsmfs_journal_set_writethrough(struct vsmfs_sb_info *sbi, bool on)
{
	/* Home blocks hold every change made so far. */
	if (on)
		sbi->s_jclient->sync(sbi, VSMFS_COMMIT_SYNCFS);
	vsmfs_trans_mutex_lock(sbi);
	mutex_lock(&sbi->s_jplace_mutex);
	sbi->s_journal->writethrough = on;
	if (on)
		vsmfs_jcheckpoint(sbi->s_journal);
	mutex_unlock(&sbi->s_jplace_mutex);
	mutex_unlock(&sbi->s_trans_mutex);
}

/**
 * vsmfs_jtimer_fn() - the checkpoint timer
 * @work: vsmfs_journal.ckpt_work
 *
 * Checkpoints, beside handles as vsmfs_journal_checkpoint() does, and
 * queues itself again checkpoint= seconds later.
 */
void vsmfs_jtimer_fn(struct work_struct *work)
{
	struct vsmfs_journal *j = container_of(to_delayed_work(work), struct vsmfs_journal,
					       ckpt_work);
	struct vsmfs_sb_info *sbi = j->sbi;
	unsigned int secs;

	/* A remount changes the options with s_jplace_mutex held too. */
	mutex_lock(&sbi->s_jplace_mutex);
	vsmfs_jcheckpoint(j);
	secs = sbi->s_jopts.checkpoint_secs;
	mutex_unlock(&sbi->s_jplace_mutex);
	if (secs)
		queue_delayed_work(system_long_wq, &j->ckpt_work, secs * HZ);
}

/**
 * vsmfs_journal_timer_start() - start the periodic checkpoint
 * @sbi: the file system, mounted read-write
 *
 * Does nothing when the checkpoint= option is 0.
 */
void vsmfs_journal_timer_start(struct vsmfs_sb_info *sbi)
{
	unsigned int secs = sbi->s_jopts.checkpoint_secs;

	if (secs)
		mod_delayed_work(system_long_wq, &sbi->s_journal->ckpt_work, secs * HZ);
}

/**
 * vsmfs_journal_timer_stop() - stop the periodic checkpoint
 * @sbi: the file system
 *
 * Context: process context, s_trans_mutex not held.
 */
void vsmfs_journal_timer_stop(struct vsmfs_sb_info *sbi)
{
	if (sbi->s_journal)
		cancel_delayed_work_sync(&sbi->s_journal->ckpt_work);
}

/**
 * vsmfs_jthreads_start() - start the checkpoint threads
 * @j: the journal
 * @total: threads that copy a checkpoint home, the caller included
 *
 * Starts @total - 1 threads besides the caller. Without them a checkpoint
 * runs on fewer CPUs, so failing to start some is not an error.
 */
void vsmfs_jthreads_start(struct vsmfs_journal *j, unsigned int total)
{
	struct super_block *sb = j->sbi->s_sb;
	unsigned int i;

	if (total < 2)
		return;
	j->threads = kcalloc(total - 1, sizeof(*j->threads), GFP_KERNEL);
	if (!j->threads)
		goto partial;
	for (i = 0; i < total - 1; i++) {
		struct task_struct *task;

		task = kthread_run(vsmfs_jckpt_thread, j, "vsmfscp/%s/%u", sb->s_id,
				   i + 1);
		if (IS_ERR(task))
			goto partial;
		j->threads[i] = task;
		j->nthreads++;
	}
	return;
partial:
	vsmfs_warn(sb, "journal: %u of %u checkpoint threads started",
		   j->nthreads + 1, total);
}

/* Revoke every version of @e: home block current, versions invalid. */
static void vsmfs_jrevoke(struct vsmfs_journal *j, struct vsmfs_jent *e)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	u32 pos;

	/* Its versions may be in a commit in flight, not yet written. */
	vsmfs_jdrain(j);
	if (e->latest != VSMFS_JNONE)
		vsmfs_stat_add(sbi, home_bytes, vsmfs_jhome_write(j, e->home, j->h[e->latest].jb));
	/* The home block is durable before its versions are invalidated. */
	vsmfs_fence();
	for (pos = 0; pos < 2; pos++) {
		u32 p = pos ? e->latest : e->old;

		if (p == VSMFS_JNONE)
			continue;
		j->h[p].flags &= ~(VSMFS_JH_VALID | VSMFS_JH_LATEST);
		vsmfs_jh_write_state(j, p);
		j->holes++;
	}
	vsmfs_fence();
	vsmfs_jent_free(j, e);
	vsmfs_stat_inc(sbi, journal_revoked);
}

/**
 * vsmfs_journal_has_data() - whether freed blocks may have versions
 * @sbi: the file system
 *
 * Context: s_jplace_mutex held.
 * Return: whether the journal holds versions of blocks of the data area.
 */
bool vsmfs_journal_has_data(struct vsmfs_sb_info *sbi)
{
	return sbi->s_journal->ndata;
}

/**
 * vsmfs_journal_revoke() - a freed block of the data area is metadata no more
 * @sbi: the file system
 * @blk: the block, which may become file data, written directly to PM
 *
 * The journal must then never write an old metadata version over it: each
 * version of @blk is revoked now (vsmfs_jrevoke(): its home block first
 * brought up to date, so the state before the running transaction stays
 * whole).
 *
 * Context: s_jplace_mutex held (vsmfs_journal_forget()).
 * Return: vsmfs_journal_has_data() afterwards.
 */
bool vsmfs_journal_revoke(struct vsmfs_sb_info *sbi, u64 blk)
{
	struct vsmfs_journal *j = sbi->s_journal;
	struct vsmfs_jent *e = j->ndata ? vsmfs_jfind(j, blk) : NULL;

	if (e)
		vsmfs_jrevoke(j, e);
	return j->ndata;
}
