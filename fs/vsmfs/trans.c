// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs transactions: handles, the running transaction, and when it commits.
 *
 * An operation changes metadata in a handle (struct vsmfs_trans):
 * vsmfs_trans_begin(), then for each block vsmfs_trans_get_write_access(),
 * the change in its DRAM copy and vsmfs_trans_dirty(), then
 * vsmfs_trans_commit() or vsmfs_trans_abort(). Handles change DRAM one at a
 * time, under s_trans_mutex, and exclude shared handles (below) with
 * s_handles_sem held for writing. A handle that ends joins the running
 * transaction (sbi->s_run): its blocks stay dirty in DRAM, and the running
 * transaction writes them all to the journal in one commit (compound
 * transactions, as handles join jbd2's running transaction). It commits
 *   - when fsync, fdatasync, O_SYNC, O_DSYNC or NFS's commit of metadata
 *     needs a change it holds (vsmfs_trans_commit_tid()); an inode whose
 *     last change is already committed needs no commit;
 *   - commit= seconds after its first handle ended (s_commit_work);
 *   - when a handle begins and the journal might not hold the handle's
 *     blocks besides, or free space runs short while pages wait in it
 *     to be freed (vsmfs_trans_full());
 *   - at sync, syncfs, remount and unmount (vsmfs_trans_sync());
 *   - with commit=sync at the end of every handle (every operation durable
 *     on return), and at the end of handles that must be durable (t_sync:
 *     page faults that allocate, for MAP_SYNC).
 * The committer is the task that needs the commit, never a kernel thread
 * it would wait for; the writing is journal.c's
 * (vsmfs_journal_commit_trans()). A handle never spans two transactions,
 * so each operation is atomic, and a crash leaves the state after some
 * prefix of the committed transactions.
 *
 * Ordering. File data a handle makes reachable was written with
 * non-temporal stores, or cached stores written back, and is not fenced
 * by the caller. A handle that ends in the running transaction fences
 * once, on its own CPU, if that CPU stored to PM since its last fence
 * (vsmfs_fence_pending()): the commit that makes its data reachable may
 * be made by another task on another CPU, whose fence orders none of this
 * CPU's stores. The task's stores made on a CPU it has left are ordered
 * by the move (a migration acts as a fence). That fence is the only one
 * of a handle that does not commit, and a handle that wrote no data (a
 * create, an unlink, a chmod) has none. Pages a handle frees, and scratch
 * pages that took old frames in a copy-on-write, hold what a crash before
 * the commit gives back to their files: they are freed in DRAM only by
 * the commit (s_run.frees, vsmfs_trans_apply_frees()), and taken again
 * only once it is durable (s_freeing, alloc.c).
 *
 * Abort. Each handle keeps a copy of every block it changes as it was
 * before its first change in the handle (m_shadow), or of just the words
 * it changes (sbi->s_undo: page table entries, inode slots, bitmap words;
 * vsmfs_trans_get_write_access_range()): vsmfs_trans_abort() puts them
 * back, takes the blocks the handle added out of the running
 * transaction (m_hnew), puts back those it dropped (t_forgot) and forgets
 * the runs it freed; an inode the handle created leaves the inode cache
 * first (t_new_inode). The running transaction as the earlier handles
 * left it stays. A handle whose step failed in a way the caller cannot
 * undo (a run it could not free) records the error (vsmfs_trans_fail()),
 * and its end aborts it: t_aborted tells the caller.
 *
 * Shared handles. An operation that only swaps page table entries of pages
 * it owns and sets the times of the file it writes (the staged overwrite,
 * cow.c; the overwrite in place, file.c) runs in a shared handle (struct
 * vsmfs_shandle) beside other such handles, holding s_handles_sem shared
 * and not s_trans_mutex: it changes single words of page table blocks
 * and of its inode's slot (vsmfs_shandle_times(), under the inode's lock)
 * that no other handle changes, notes them in the blocks' m_cmask with
 * atomic bit operations and adds the blocks not yet dirty to the running
 * transaction under s_run.lock. The blocks join before the first change,
 * and the times are stored last, when nothing can fail. Its journal space
 * and its entries of s_run.frees are reserved when it begins (from its
 * CPU's share, below), so it never overflows the journal or grows the
 * array; if they do not fit,
 * or the handle must commit at once (commit=sync, write-through, an
 * error), the operation takes a handle of the other kind, which commits
 * first if needed. It undoes its swaps by swapping again. Its ordering is
 * that of any handle that ends in the running transaction: one fence on
 * its own CPU if that CPU stored to PM since its last fence. A commit
 * holds s_handles_sem for writing, so it sees every shared handle whole
 * or not at all.
 *
 * Per-CPU shares. A shared handle of either kind takes its room from its
 * CPU's share of the running transaction (struct vsmfs_shres), not from
 * s_run: the share reserves a batch of blocks
 * and of entries of s_run.frees at a time (VSMFS_SHRES_CREDITS,
 * VSMFS_SHRES_FREES) under s_run.lock, and keeps the scratch runs and the
 * count of the handles that end into it. So the writers of many CPUs do
 * not all write s_run's cache line twice per write. What a share holds is
 * reserved in s_run.shared_credits and s_run.shared_frees, so it never
 * overflows the journal or the array; it joins s_run when it holds
 * VSMFS_SHRES_RUNS runs or VSMFS_SHRES_PAGES pages, and when a handle of
 * the other kind or a commit takes s_handles_sem for writing
 * (vsmfs_shres_fold()), which then sees every share whole. The room a
 * share holds stays its own across those handles and commits, into the
 * next transactions: a handle of the other kind counts it beside its own
 * blocks and entries, and takes it back from every share only when it
 * needs it (vsmfs_trans_full(), vsmfs_trans_fits(), vsmfs_trans_room();
 * vsmfs_shres_reclaim()), so that the shared handles of every CPU do not
 * all come back to s_run.lock after each such handle. The first
 * handle of a transaction still counts itself in s_run.handles, and arms
 * the commit timer, under s_run.lock. A share takes no lock: only the
 * tasks on its CPU use it, with preemption disabled, and handles of the
 * other kind and commits only while no shared handle runs. A handle that
 * moved ends into the share of the CPU it ends on.
 *
 * Shared metadata handles. A create (vsmfs_mknod_common()) changes the
 * inode bitmap, the new inode's slot, an entry of its directory's block
 * and the directory's slot; an unlink or rmdir (vsmfs_do_unlink()) an
 * entry, the directory's slot and the inode's. But for the bitmap, these
 * are bytes no other handle changes meanwhile (a new inode is its own,
 * the VFS locks the directory and the inode unlinked). So each runs in a
 * handle like any other (struct vsmfs_trans, the same calls), begun by
 * vsmfs_trans_begin_shared(): with s_handles_sem shared, beside other
 * shared handles, and no file-system-wide mutex. Such a handle saves the
 * bytes it changes in an undo log of its own (t_log), never a whole
 * block; takes its i-number with an atomic set of its bit, starting at
 * its CPU's cursor (alloc.c), and gives it back by clearing the bit
 * atomically (the rest of the bitmap word may be other handles');
 * notes the words it changed in m_cmask with atomic bit operations; and
 * adds blocks to the running transaction under s_run.lock, from credits
 * reserved as it began. What it cannot do so (allocate pages: a directory
 * block, an xattr block; a change too large for its log; a commit at its
 * end) makes the call return -EAGAIN: the caller aborts it and does the
 * operation again in a handle of the other kind. An aborted shared handle
 * leaves the blocks it added in the running transaction, as they were.
 * Its ordering is that of any handle that ends in the running
 * transaction; it stores nothing to PM.
 *
 * Turns. A handle that may dirty most of the journal (a collapse or an
 * insert range asks for all of it, each part of a long atomic write for
 * as much as fits) must find the running transaction close to empty: it
 * commits it (VSMFS_COMMIT_FULL) and tries again, and while it commits,
 * handles on other CPUs, shared ones above all, may end in the new one,
 * again and again, while the journal commits tiny transactions. So a
 * handle that finds the running transaction too full a second time takes
 * a ticket (s_turn_next) before it commits, and tries again only when it
 * is served (s_turn_served); a handle that begins meanwhile, of either
 * kind and whatever room its CPU's share still keeps, waits until every
 * ticket taken before it came is served, before it takes s_trans_mutex or
 * s_handles_sem (vsmfs_turn_wait()). The handles that had begun end, a
 * commit empties the running transaction, and the ticket is served once
 * its handle has begun, holding s_trans_mutex: the handles that waited
 * then queue behind it there, as jbd2 keeps new handles out of a
 * transaction that must commit (t_state, j_barrier). Tickets are served in
 * the order they were taken. Commits without a handle (fsync, the commit
 * timer) do not wait: they only make room. A handle that begins reads
 * the two counts, which only handles that take a ticket write; the rest
 * is the slow path. A turn changes no PM, and no order of stores.
 *
 * Deltas in DRAM. A delta of a commit writes the new version of a block
 * over its old version in the journal, the version before the last one
 * committed (vsmfs_jplace()). So the words it must write are those the
 * last commit of the block changed (m_wmask) and those the handles of
 * this one changed (m_cmask, the union of each handle's difference
 * between the block and its shadow): m_dmask, known without reading the
 * journal block. A block read from PM since its last commit has no
 * m_wmask: its next delta reads PM, and sets m_wmask for the one after.
 */
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <linux/sched/clock.h>
#include <linux/workqueue.h>
#include "vsmfs.h"
#include "pmem.h"
#include "fault.h"
#include "jcore.h"

/*
 * Blocks a handle may dirty unless it says otherwise
 * (vsmfs_trans_begin_credits()): every metadata operation and every step
 * of one split into steps (truncate, fallocate) dirties fewer.
 */
#define VSMFS_HANDLE_CREDITS	64

/* The lock a handle holds while it changes DRAM. */
static void vsmfs_trans_assert(struct vsmfs_trans *t)
{
	if (t->t_shared)
		lockdep_assert_held_read(&t->t_sbi->s_handles_sem);
	else
		lockdep_assert_held(&t->t_sbi->s_trans_mutex);
}

/* What every handle starts with: nothing changed, exclusive, no error. */
static void vsmfs_trans_setup(struct vsmfs_trans *t, struct vsmfs_sb_info *sbi, bool vsp)
{
	t->t_sbi = sbi;
	t->t_vsp = vsp;
	INIT_LIST_HEAD(&t->t_dirty);
	INIT_LIST_HEAD(&t->t_undo);
	INIT_LIST_HEAD(&t->t_forgot);
	t->t_ninodes = 0;
	t->t_dirs = 0;
	t->t_nblocks = 0;
	t->t_ndata = 0;
	t->t_error = 0;
	t->t_freed = false;
	t->t_sync = false;
	t->t_overflow = false;
	t->t_log = &sbi->s_undo;
	t->t_shared = false;
	t->t_added = false;
	t->t_credits = 0;
	t->t_ino = 0;
	t->t_ino_mb = NULL;
	t->t_ino_freed = false;
	t->t_new_inode = NULL;
	t->t_aborted = false;
}

/* The allocator state an abort of a handle under s_trans_mutex puts back. */
static void vsmfs_trans_undo_init(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;

	t->t_free_pages = sbi->s_free_pages;
	t->t_ino_delta = 0;
	t->t_small_cursor = sbi->s_small_cursor;
	t->t_vsp_cursor = sbi->s_vsp_cursor;
	t->t_nfrees = sbi->s_run.nfrees;
}

/**
 * vsmfs_trans_unlock() - end a handle's hold of s_trans_mutex
 * @t: the handle
 */
void vsmfs_trans_unlock(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;

	vsmfs_hold_end(sbi, t->t_locked);
	memalloc_nofs_restore(t->t_nofs);
	rwsem_release(&sbi->s_handles_sem.dep_map, _RET_IP_);
	/* What the handle changed before the mark goes: readers see it after. */
	atomic_set_release(&sbi->s_excl, 0);
	atomic_inc(&sbi->s_excl_ends);
	if (wq_has_sleeper(&sbi->s_excl_wq))
		wake_up_all(&sbi->s_excl_wq);
	mutex_unlock(&sbi->s_trans_mutex);
}

static void vsmfs_shres_fold(struct vsmfs_sb_info *sbi);
static void vsmfs_shres_reclaim(struct vsmfs_sb_info *sbi);
static bool vsmfs_hsem_idle(struct vsmfs_sb_info *sbi);

/*
 * How long a task spins for s_handles_sem before it sleeps: a handle about
 * to begin beside others while a handle of the other kind or a commit
 * holds it exclusive or waits to (vsmfs_handles_enter()), and one of that
 * kind while shared handles hold it (vsmfs_trans_lock()). Holders of
 * either kind are short (a create, an overwrite's swaps, a commit's
 * freeze, an eviction), and when many tasks create, write and unlink at
 * once a sleep and a wake-up for each waiter cost more than the wait.
 */
#define VSMFS_EXCL_SPIN_NS	(50 * NSEC_PER_USEC)

/*
 * Take s_trans_mutex and set up @t, joined to the running transaction;
 * with @vsp, the handle may use the mapping layer.
 */
static void vsmfs_trans_lock(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, bool vsp)
{
	struct vsmfs_running *run = &sbi->s_run;
	u64 t0 = 0;

	if (!mutex_trylock(&sbi->s_trans_mutex)) {
		t0 = ktime_get_ns();
		vsmfs_stat_inc(sbi, journal_lock_waits);
		mutex_lock(&sbi->s_trans_mutex);
	}
	/*
	 * The shared handles running end first; those that would begin wait
	 * (rw_semaphore readers may otherwise overtake a waiting writer for
	 * a while, and this one holds s_trans_mutex).
	 */
	atomic_set(&sbi->s_excl, 1);
	/* The mark before the counts: pairs with vsmfs_handles_try()'s smp_mb(). */
	smp_mb__after_atomic();
	if (!vsmfs_hsem_idle(sbi)) {
		u64 until = local_clock() + VSMFS_EXCL_SPIN_NS;
		bool idle = false;

		if (!t0) {
			t0 = ktime_get_ns();
			vsmfs_stat_inc(sbi, journal_lock_waits);
		}
		/* Shared handles are short: as vsmfs_handles_enter(). */
		while (!idle && !need_resched() && local_clock() < until) {
			cpu_relax();
			idle = vsmfs_hsem_idle(sbi);
		}
		if (!idle)
			wait_event(sbi->s_handles_sem.writer, vsmfs_hsem_idle(sbi));
	}
	rwsem_acquire(&sbi->s_handles_sem.dep_map, 0, 0, _RET_IP_);
	vsmfs_shres_fold(sbi);
	t->t_locked = vsmfs_hold_start(sbi);
	if (t0)
		vsmfs_stat_add(sbi, journal_lock_wait_ns, (t->t_locked ?: ktime_get_ns()) - t0);
	/*
	 * No allocation under the mutex may recurse into the file system:
	 * reclaim may evict an inode, and eviction may need a transaction.
	 */
	t->t_nofs = memalloc_nofs_save();
	/* Short of space: pooled pages back first, before any change. */
	if (unlikely(vsmfs_pool_low(sbi)) && READ_ONCE(sbi->s_pools_on))
		vsmfs_pool_drain(sbi);
	/*
	 * Transactions reach file pages through the mapping layer, and stay
	 * on one CPU from begin to end either way.
	 */
	if (vsp)
		vsmfs_vsp_enter();
	else
		migrate_disable();
	vsmfs_trans_setup(t, sbi, vsp);
	list_splice_init(&run->dirty, &t->t_dirty);
	t->t_nblocks = run->nblocks;
	t->t_ndata = run->ndata;
	vsmfs_trans_undo_init(t);
}

/* Give the running transaction back, and s_trans_mutex up. */
static void vsmfs_trans_park(struct vsmfs_trans *t)
{
	struct vsmfs_running *run = &t->t_sbi->s_run;

	list_splice_init(&t->t_dirty, &run->dirty);
	run->nblocks = t->t_nblocks;
	run->ndata = t->t_ndata;
	vsmfs_trans_unlock(t);
	vsmfs_trans_cpu_end(t->t_vsp);
}

/*
 * Free space runs short while pages wait in the running transaction to be
 * freed: its commit gives them back. The pages CPUs' shares hold
 * (VSMFS_SHRES_PAGES each at most) are not counted. Exact under
 * s_trans_mutex; a hint beside shared handles.
 */
static bool vsmfs_trans_space_short(struct vsmfs_sb_info *sbi)
{
	u64 waiting = READ_ONCE(sbi->s_run.free_pages);

	return waiting &&
	       READ_ONCE(sbi->s_free_pages) < (sbi->s_layout.data_pages >> 4) + waiting;
}

/*
 * Whether the running transaction must commit before a handle that may
 * dirty @credits blocks begins: the journal holds one transaction at most,
 * and pages waiting in it to be freed are missed when free space runs
 * short.
 */
static bool vsmfs_trans_full(struct vsmfs_sb_info *sbi, u32 credits)
{
	struct vsmfs_running *run = &sbi->s_run;
	u32 max = vsmfs_trans_max_blocks(sbi);

	/* The room the CPUs' shares keep, if this handle may need it. */
	if (run->nblocks + run->shared_credits + min(credits, max) > max)
		vsmfs_shres_reclaim(sbi);
	if (!run->handles)
		return false;
	if (run->nblocks + min(credits, max) > max)
		return true;
	return vsmfs_trans_space_short(sbi);
}

/* Whether a ticket taken is not yet served (see "Turns"). */
static __always_inline bool vsmfs_turn_busy(struct vsmfs_sb_info *sbi)
{
	return atomic_read(&sbi->s_turn_next) != atomic_read(&sbi->s_turn_served);
}

/* Whether ticket @ticket is served, or was. */
static bool vsmfs_turn_reached(struct vsmfs_sb_info *sbi, unsigned int ticket)
{
	return (int)((unsigned int)atomic_read(&sbi->s_turn_served) - ticket) >= 0;
}

/*
 * A handle about to begin, while tickets are taken and not yet served:
 * wait until those taken before now are, behind their handles.
 */
static noinline void vsmfs_turn_wait(struct vsmfs_sb_info *sbi)
{
	/* Ticket N is done once N + 1 is served. */
	unsigned int next = atomic_read(&sbi->s_turn_next);

	vsmfs_stat_inc(sbi, trans_turn_waits);
	wait_event(sbi->s_turn_wq, vsmfs_turn_reached(sbi, next));
}

static void __vsmfs_trans_begin(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits,
				bool vsp)
{
	unsigned int ticket = 0;
	bool full = false, turn = false;

	if (unlikely(vsmfs_turn_busy(sbi)))
		vsmfs_turn_wait(sbi);
	for (;;) {
		vsmfs_trans_lock(sbi, t, vsp);
		if (!vsmfs_trans_full(sbi, credits))
			break;
		/* Too full a second time: a turn (see "Turns"). */
		if (full && !turn) {
			ticket = atomic_fetch_inc(&sbi->s_turn_next);
			turn = true;
			vsmfs_stat_inc(sbi, trans_turns);
		}
		full = true;
		vsmfs_trans_commit_all(t, VSMFS_COMMIT_FULL);
		if (turn)
			wait_event(sbi->s_turn_wq, vsmfs_turn_reached(sbi, ticket));
	}
	/* Begun, holding s_trans_mutex: the handles that waited queue behind. */
	if (turn) {
		atomic_inc(&sbi->s_turn_served);
		wake_up_all(&sbi->s_turn_wq);
	}
}

/**
 * vsmfs_trans_begin_credits() - start a handle that may dirty many blocks
 * @sbi: the file system
 * @t: the handle to initialize
 * @credits: the most blocks the handle may dirty
 *
 * Commits the running transaction first if it and @credits blocks might
 * not fit in the journal together (vsmfs_trans_room() then gives the
 * handle at least @credits, or the whole journal).
 *
 * Context: process context; takes s_trans_mutex until the handle ends, and
 * makes the task's allocations GFP_NOFS until then.
 */
void vsmfs_trans_begin_credits(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits)
{
	__vsmfs_trans_begin(sbi, t, credits, true);
}

/**
 * vsmfs_trans_begin_meta() - start a handle that reaches no file page
 * @sbi: the file system
 * @t: the handle to initialize
 * @credits: the most blocks the handle may dirty
 *
 * As vsmfs_trans_begin_credits(), for a handle that changes metadata
 * only (page table entries included) and reads or writes no page through
 * the mapping layer: it does not catch up with the swaps other handles
 * flushed lazily (vsp.c), and its own swaps leave this CPU's stale
 * translations to its next use of the range.
 *
 * Context: as vsmfs_trans_begin_credits().
 */
void vsmfs_trans_begin_meta(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits)
{
	__vsmfs_trans_begin(sbi, t, credits, false);
}

/**
 * vsmfs_trans_begin() - start a handle
 * @sbi: the file system
 * @t: the handle to initialize
 *
 * Context: process context; takes s_trans_mutex until the handle ends, and
 * makes the task's allocations GFP_NOFS until then.
 */
void vsmfs_trans_begin(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t)
{
	vsmfs_trans_begin_credits(sbi, t, VSMFS_HANDLE_CREDITS);
}

/**
 * vsmfs_trans_room() - blocks a handle may still dirty
 * @t: the handle
 *
 * Context: inside the handle.
 * Return: how many more blocks the running transaction, with @t, may hold
 * before it overflows.
 */
u32 vsmfs_trans_room(struct vsmfs_trans *t)
{
	u32 n = vsmfs_trans_max_blocks(t->t_sbi);

	/* A handle of the other kind may use what the shares keep. */
	if (!t->t_shared)
		vsmfs_shres_reclaim(t->t_sbi);

	return t->t_nblocks < n ? n - t->t_nblocks : 0;
}

/*
 * A transaction dirtied more blocks than the journal holds: an operation
 * that did not bound its work. Its DRAM changes cannot be committed as a
 * whole, and committing part of them would leave PM inconsistent, so
 * nothing of the handle is committed: its end aborts it. It is a file
 * system error (vsmfs_fs_error()): recorded in the superblock, and with
 * the default errors=remount-ro the file system stops writing.
 */
static void vsmfs_trans_overflow(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;

	if (t->t_overflow)
		return;
	t->t_overflow = true;
	t->t_error = -EFSCORRUPTED;
	vsmfs_fs_error(sbi->s_sb, 0,
		       "transaction dirtied more than the %u journal blocks: not committed",
		       vsmfs_trans_max_blocks(sbi));
}

/**
 * vsmfs_trans_fail() - make a handle's end abort it
 * @t: the handle
 * @err: the negative errno of a step that failed, or 0 (nothing done)
 *
 * For a step whose failure leaves the handle unable to commit what it
 * holds (a run it cannot free any more, whose pages would be left in use
 * by no file): the handle's end aborts it whatever the caller asks
 * (vsmfs_trans_commit()), and returns the first error recorded. The
 * operation then changes nothing.
 *
 * Context: inside the handle.
 */
void vsmfs_trans_fail(struct vsmfs_trans *t, int err)
{
	if (err && !t->t_error)
		t->t_error = err;
}

/*
 * Whether a handle of the other kind may add one more block to the
 * running transaction: beside the room the CPUs' shares keep, or else
 * once it is taken back from them.
 */
static bool vsmfs_trans_fits(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u32 max = vsmfs_trans_max_blocks(sbi);

	if (t->t_nblocks + 1 + sbi->s_run.shared_credits <= max)
		return true;
	vsmfs_shres_reclaim(sbi);
	return t->t_nblocks + 1 <= max;
}

/*
 * A shared metadata handle adds @mb to the running transaction from its
 * credits. The count is checked when it begins: a handle that needs more
 * is a bug, and the block joins all the same (the journal was reserved
 * for @credits blocks only, so this is reported).
 */
static void vsmfs_trans_dirty_shared(struct vsmfs_trans *t, struct vsmfs_mblk *mb)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_running *run = &sbi->s_run;

	lockdep_assert_held_read(&sbi->s_handles_sem);
	/* Cleared only by a commit, which no shared handle runs beside. */
	if (READ_ONCE(mb->m_is_dirty))
		return;
	spin_lock(&run->lock);
	if (!mb->m_is_dirty) {
		if (!WARN_ON_ONCE(!t->t_credits)) {
			t->t_credits--;
			run->shared_credits--;
		}
		WRITE_ONCE(mb->m_is_dirty, true);
		list_add_tail(&mb->m_dirty, &run->dirty);
		run->nblocks++;
		if (mb->m_blk >= sbi->s_layout.data_start)
			run->ndata++;
		t->t_added = true;
	}
	spin_unlock(&run->lock);
}

/**
 * vsmfs_trans_dirty() - add a changed metadata block to a transaction
 * @t: the handle
 * @mb: the block, changed in DRAM after vsmfs_trans_get_write_access()
 *
 * A transaction holds at most vsmfs_trans_max_blocks() blocks; a handle
 * that makes it hold more overflows (vsmfs_trans_overflow()) and is never
 * committed. The block is kept on the list all the same, so that the
 * handle still knows every block it changed.
 *
 * Context: inside the handle.
 */
void vsmfs_trans_dirty(struct vsmfs_trans *t, struct vsmfs_mblk *mb)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;

	if (t->t_shared) {
		vsmfs_trans_dirty_shared(t, mb);
		return;
	}
	lockdep_assert_held(&sbi->s_trans_mutex);
	/* Changed without vsmfs_trans_get_write_access(): abort cannot undo it. */
	WARN_ON_ONCE(!mb->m_shadow && !mb->m_ranged);
	if (mb->m_is_dirty)
		return;
	if (!vsmfs_trans_fits(t) || vsmfs_fault(VSMFS_FAULT_TRANS_OVERFLOW))
		vsmfs_trans_overflow(t);
	mb->m_is_dirty = true;
	mb->m_hnew = true;
	list_add_tail(&mb->m_dirty, &t->t_dirty);
	t->t_nblocks++;
	if (mb->m_blk >= sbi->s_layout.data_start)
		t->t_ndata++;
}

/**
 * vsmfs_trans_dirty_commit() - add a block the commit itself changed
 * @t: the handle committing the running transaction
 * @mb: the block, changed with the changed words noted in m_cmask
 *
 * As vsmfs_trans_dirty(), for changes the commit makes (freeing deferred
 * runs), which need no undo copy: the committing handle is not aborted.
 *
 * Context: inside the committing handle.
 */
void vsmfs_trans_dirty_commit(struct vsmfs_trans *t, struct vsmfs_mblk *mb)
{
	if (mb->m_is_dirty)
		return;
	/* The handles that freed the runs dirtied their blocks: not reached. */
	if (WARN_ON_ONCE(!vsmfs_trans_fits(t)))
		vsmfs_trans_overflow(t);
	mb->m_is_dirty = true;
	list_add_tail(&mb->m_dirty, &t->t_dirty);
	t->t_nblocks++;
	if (mb->m_blk >= t->t_sbi->s_layout.data_start)
		t->t_ndata++;
}

/* An undo copy of a whole block: one an ended handle gave back, or new. */
static u8 *vsmfs_shadow_alloc(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_undo_log *u = &sbi->s_undo;

	if (vsmfs_fault(VSMFS_FAULT_SHADOW_ALLOC))
		return NULL;
	if (u->npool)
		return u->pool[--u->npool];
	return kmalloc(VSMFS_BLOCK_SIZE, GFP_NOFS);
}

static void vsmfs_shadow_free(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb)
{
	struct vsmfs_undo_log *u = &sbi->s_undo;

	if (u->npool < VSMFS_SHADOW_POOL)
		u->pool[u->npool++] = mb->m_shadow;
	else
		kfree(mb->m_shadow);
	mb->m_shadow = NULL;
	list_del_init(&mb->m_undo);
}

/**
 * vsmfs_trans_get_write_access() - let a handle change a metadata block
 * @t: the handle
 * @mb: the block, before the caller changes it
 *
 * Called before every change of @mb->m_data in @t (then marked with
 * vsmfs_trans_dirty()). The first call in @t keeps a copy of the block as
 * it is, which vsmfs_trans_abort() puts back; the end of the handle drops
 * it.
 *
 * Context: inside the handle.
 * Return: 0, or -ENOMEM with @mb unchanged and not in @t; -EAGAIN in a
 * shared metadata handle, which saves parts of blocks only.
 */
int vsmfs_trans_get_write_access(struct vsmfs_trans *t, struct vsmfs_mblk *mb)
{
	if (t->t_shared)
		return -EAGAIN;
	lockdep_assert_held(&t->t_sbi->s_trans_mutex);
	if (mb->m_shadow)
		return 0;
	vsmfs_mblk_freeze(t->t_sbi, mb);
	mb->m_shadow = vsmfs_shadow_alloc(t->t_sbi);
	if (!mb->m_shadow)
		return -ENOMEM;
	memcpy(mb->m_shadow, mb->m_data, VSMFS_BLOCK_SIZE);
	list_add_tail(&mb->m_undo, &t->t_undo);
	return 0;
}

/**
 * vsmfs_trans_get_write_access_range() - let a handle change part of a block
 * @t: the handle
 * @mb: the block, before the caller changes the part
 * @off: first byte of the part
 * @len: its bytes; 0 for a block that joins the handle unchanged (the
 *	commit changes it)
 *
 * As vsmfs_trans_get_write_access(), for a change of the bytes
 * [@off, @off + @len) only: the handle saves just those (widened to whole
 * words) in the file system's undo log, which vsmfs_trans_abort() puts
 * back newest first, and the end of the handle notes the words that
 * changed. A handle that changes a page table entry or an inode slot so
 * copies 8 or 256 bytes, not the block. When the log is full it takes
 * the whole block's copy (a shared metadata handle cannot: -EAGAIN).
 * The log is the handle's (t_log): a shared metadata handle has its own.
 *
 * Context: inside the handle.
 * Return: 0, or -ENOMEM with @mb unchanged and not in @t; -EAGAIN in a
 * shared metadata handle whose log is full.
 */
int vsmfs_trans_get_write_access_range(struct vsmfs_trans *t, struct vsmfs_mblk *mb,
				       unsigned int off, unsigned int len)
{
	struct vsmfs_undo_log *u = t->t_log;
	unsigned int end = round_up(off + len, 8), i;
	struct vsmfs_undo_rec *r;

	vsmfs_trans_assert(t);
	if (mb->m_shadow)
		return 0;
	if (WARN_ON_ONCE(end > VSMFS_BLOCK_SIZE))
		return -EFSCORRUPTED;
	vsmfs_mblk_freeze(t->t_sbi, mb);
	off = round_down(off, 8);
	/*
	 * Saved already, before the handle's first change of it (m_ranged:
	 * the block is in the log of the handle holding s_trans_mutex).
	 */
	for (i = 0; (mb->m_ranged || t->t_shared) && i < u->n; i++) {
		r = &u->rec[i];
		if (r->mb == mb && r->off <= off && end <= r->off + r->len)
			return 0;
	}
	/* The fault point stands for a shared handle's log running full. */
	if (u->n == VSMFS_UNDO_RECS || end - off > VSMFS_UNDO_BYTES - u->used ||
	    (t->t_shared && vsmfs_fault(VSMFS_FAULT_SHADOW_ALLOC)))
		return vsmfs_trans_get_write_access(t, mb);
	r = &u->rec[u->n++];
	r->mb = mb;
	r->off = off;
	r->len = end - off;
	r->at = u->used;
	memcpy((u8 *)u->bytes + r->at, mb->m_data + off, r->len);
	u->used += r->len;
	if (!t->t_shared)
		mb->m_ranged = true;
	return 0;
}

/**
 * vsmfs_trans_track() - an in-core inode the handle may change
 * @t: the handle
 * @inode: an inode that exists on PM (not one created in @t), held by the
 *	caller until @t ends
 * @entries: @inode is a directory whose entries @t may change, locked
 *	exclusive by the caller
 *
 * Called before the first change of @inode's in-core fields in @t. If @t
 * is aborted, @inode is read again from its slot, as it was, and with
 * @entries the DRAM index of the directory is dropped, to be rebuilt from
 * its blocks at its next use. At most VSMFS_TRANS_INODES inodes.
 *
 * Context: inside the handle.
 */
void vsmfs_trans_track(struct vsmfs_trans *t, struct inode *inode, bool entries)
{
	unsigned int i;

	for (i = 0; i < t->t_ninodes && t->t_inodes[i] != inode; i++)
		;
	if (i == t->t_ninodes) {
		if (WARN_ON_ONCE(i == VSMFS_TRANS_INODES))
			return;
		t->t_inodes[t->t_ninodes++] = inode;
	}
	if (entries)
		t->t_dirs |= 1U << i;
}

/**
 * vsmfs_trans_note_inode() - the handle changes an inode's slot
 * @t: the handle
 * @inode: the inode
 *
 * An fsync of @inode then waits for the commit of the running transaction
 * (vsmfs_trans_sync_inode()).
 *
 * Context: inside the handle.
 */
void vsmfs_trans_note_inode(struct vsmfs_trans *t, struct inode *inode)
{
	VSMFS_I(inode)->i_tid = t->t_sbi->s_run.tid;
}

/* Whether the handle changed anything. */
static bool vsmfs_trans_changed(struct vsmfs_trans *t)
{
	if (t->t_shared)
		return t->t_log->n || t->t_ino;
	return !list_empty(&t->t_undo) || t->t_log->n ||
	       t->t_sbi->s_run.nfrees != t->t_nfrees ||
	       !list_empty(&t->t_forgot);
}

/*
 * The handle's changes are final: what each block changed joins its
 * m_cmask, the undo copies are dropped and the blocks it added are the
 * running transaction's.
 */
static void vsmfs_trans_handle_done(struct vsmfs_trans *t)
{
	struct vsmfs_undo_log *u = t->t_log;
	struct vsmfs_mblk *mb, *tmp;
	unsigned int i, w;

	list_for_each_entry_safe(mb, tmp, &t->t_undo, m_undo) {
		u64 now[VSMFS_JMASK_WORDS];

		vsmfs_jdiff((const u64 *)mb->m_shadow, (const u64 *)mb->m_data, now);
		for (i = 0; i < VSMFS_JMASK_WORDS; i++)
			mb->m_cmask[i] |= now[i];
		mb->m_hnew = false;
		vsmfs_shadow_free(t->t_sbi, mb);
	}
	/* Saved parts: the words that differ from what they were. */
	for (i = 0; i < u->n; i++) {
		struct vsmfs_undo_rec *r = &u->rec[i];
		const u64 *old = u->bytes + r->at / 8;
		const u64 *cur = (const u64 *)r->mb->m_data + r->off / 8;

		/* Other shared handles may note words of the same block. */
		if (t->t_shared) {
			for (w = 0; w < r->len / 8; w++)
				if (old[w] != cur[w])
					vsmfs_note_word_shared(r->mb, r->off / 8 + w);
			continue;
		}
		for (w = 0; w < r->len / 8; w++)
			if (old[w] != cur[w])
				__set_bit(r->off / 8 + w, (unsigned long *)r->mb->m_cmask);
		r->mb->m_hnew = false;
		r->mb->m_ranged = false;
	}
	u->n = 0;
	u->used = 0;
	/* Dropped for good: the pages they were on are freed. */
	list_for_each_entry_safe(mb, tmp, &t->t_forgot, m_dirty) {
		list_del_init(&mb->m_dirty);
		memset(mb->m_cmask, 0, sizeof(mb->m_cmask));
		mb->m_wmask_ok = false;
	}
	t->t_ninodes = 0;
	t->t_dirs = 0;
}

/*
 * The delta masks of the commit (see the top of this file): m_dmask from
 * the last commit's m_wmask and the handles' m_cmask, which becomes the
 * next m_wmask.
 */
static void vsmfs_trans_masks(struct vsmfs_trans *t)
{
	bool delta = t->t_sbi->s_jopts.delta;
	struct vsmfs_mblk *mb;
	unsigned int i;

	list_for_each_entry(mb, &t->t_dirty, m_dirty) {
		mb->m_dmask_ok = false;
		/*
		 * With deltas off (journal_delta=off, which a remount may turn
		 * on again) the commit's change is not noted: forget the last.
		 */
		if (!delta) {
			mb->m_wmask_ok = false;
		} else {
			if (mb->m_wmask_ok) {
				for (i = 0; i < VSMFS_JMASK_WORDS; i++)
					mb->m_dmask[i] = mb->m_wmask[i] | mb->m_cmask[i];
				mb->m_dmask_ok = true;
			}
			memcpy(mb->m_wmask, mb->m_cmask, sizeof(mb->m_wmask));
			mb->m_wmask_ok = true;
		}
		memset(mb->m_cmask, 0, sizeof(mb->m_cmask));
	}
}

/*
 * Free in DRAM the runs the handles of the committing transaction freed:
 * from here the commit carries the bitmap changes. Freed runs clear their
 * bits and dirty the bitmap block; scratch runs were never in the bitmap
 * on PM and only clear their bits. The pages are taken again only once
 * the commit is durable (t_freed, s_freeing).
 */
static void vsmfs_trans_apply_frees(struct vsmfs_trans *t)
{
	struct vsmfs_running *run = &t->t_sbi->s_run;
	struct vsmfs_swap sw;
	unsigned int i;

	vsmfs_swap_init(t->t_sbi, &sw);
	for (i = 0; i < run->nfrees; i++) {
		struct vsmfs_frun *f = &run->frees[i];

		if (f->resv) {
			/*
			 * A staged write's scratch run, behind old frames: its
			 * stale translations (sw_defer_b) go before it can be
			 * taken again, at the earliest once this commit is
			 * durable.
			 */
			if (f->scratch)
				vsmfs_swap_add(&sw, f->lpn, f->count);
			/* Claimed, or a scratch run behind old frames. */
			vsmfs_resv_end(t, f->lpn, f->resv, !f->scratch);
			continue;
		}
		/* An error is the bitmap's, reported by vsmfs_fs_error(). */
		vsmfs_lbits_clear(t, f->lpn, f->count, !f->scratch);
	}
	vsmfs_swap_flush(&sw);
	if (run->nfrees)
		t->t_freed = true;
	run->nfrees = 0;
	run->free_pages = 0;
}

static int vsmfs_trans_defer(struct vsmfs_trans *t, u64 lpn, u64 count, bool scratch,
			     u64 resv);

/**
 * vsmfs_trans_defer_free() - free a run of logical pages when the
 *	running transaction commits
 * @t: the handle
 * @lpn: first page
 * @count: pages, within one VSP
 * @scratch: the run was reserved (vsmfs_reserve_pages()), not allocated
 *
 * Context: inside the handle.
 * Return: 0 or -ENOMEM.
 */
int vsmfs_trans_defer_free(struct vsmfs_trans *t, u64 lpn, u64 count, bool scratch)
{
	return vsmfs_trans_defer(t, lpn, count, scratch, 0);
}

/**
 * vsmfs_trans_defer_resv() - end a reservation when the running
 *	transaction commits
 * @t: the handle
 * @r: the reservation (vsmfs_resv_take())
 * @claimed: @t allocated its pages (vsmfs_resv_claim()); else they are
 *	scratch pages that took a file's old frames in page swaps, free once
 *	the commit is durable
 *
 * If @t is aborted, the reservation is the caller's again.
 *
 * Context: inside the handle.
 * Return: 0 or -ENOMEM.
 */
int vsmfs_trans_defer_resv(struct vsmfs_trans *t, const struct vsmfs_resv *r, bool claimed)
{
	/* Scratch pages given back are never marked unwritten. */
	int ret = claimed ? 0 : vsmfs_pt_unwritten_t(t, r->lpn, r->count, false);

	return ret ?: vsmfs_trans_defer(t, r->lpn, claimed ? 0 : r->count, !claimed, r->count);
}

/* Fill in @f for the run [@lpn, @lpn + @count). Return: its frames. */
static u64 vsmfs_frun_fill(struct vsmfs_sb_info *sbi, struct vsmfs_frun *f, u64 lpn, u64 count,
			   bool scratch, u64 resv)
{
	f->lpn = lpn;
	f->count = count;
	/* Free space counts frames: pages without one free none. */
	f->frames = vsmfs_frames_in(sbi, lpn, count);
	f->scratch = scratch;
	f->resv = resv;
	return f->frames;
}

/* Append to s_run.frees, which has room. */
static void vsmfs_run_add_free(struct vsmfs_sb_info *sbi, u64 lpn, u64 count, bool scratch,
			       u64 resv)
{
	struct vsmfs_running *run = &sbi->s_run;

	run->free_pages += vsmfs_frun_fill(sbi, &run->frees[run->nfrees++], lpn, count, scratch,
					   resv);
}

static int vsmfs_trans_defer(struct vsmfs_trans *t, u64 lpn, u64 count, bool scratch,
			     u64 resv)
{
	struct vsmfs_running *run = &t->t_sbi->s_run;

	if (t->t_shared)
		return -EAGAIN;
	if (vsmfs_fault(VSMFS_FAULT_FREE_RUN))
		return -ENOMEM;
	/* The entries the CPUs' shares keep stay theirs. */
	if (run->nfrees + run->shared_frees >= run->maxfrees) {
		unsigned int n = max(16U, 2 * run->maxfrees);
		struct vsmfs_frun *f = NULL;

		if (!vsmfs_fault(VSMFS_FAULT_SHADOW_ALLOC))
			f = kvrealloc(run->frees, run->maxfrees * sizeof(*f), n * sizeof(*f),
				      GFP_NOFS);
		if (!f)
			return -ENOMEM;
		run->frees = f;
		run->maxfrees = n;
	}
	vsmfs_run_add_free(t->t_sbi, lpn, count, scratch, resv);
	return 0;
}

/* Transaction @tid has finished, and every one before it: wake their waiters. */
static void vsmfs_trans_committed(struct vsmfs_sb_info *sbi, u64 tid)
{
	s64 old = atomic64_read(&sbi->s_commit_tid);

	/* Commits finish in order, but their tasks may return out of it. */
	while (old < (s64)tid) {
		s64 prev = atomic64_cmpxchg(&sbi->s_commit_tid, old, tid);

		if (prev == old)
			break;
		old = prev;
	}
	wake_up_all(&sbi->s_commit_wq);
}

/* Forget the runs the running transaction would free, and its reservations. */
static void vsmfs_trans_drop_frees(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;

	run->nfrees = 0;
	run->free_pages = 0;
}

/*
 * Nothing of transaction @tid was written (it was empty, or dropped): it
 * has finished once @tid - 1 has, which a parallel commit may still be
 * writing. Waiters for @tid - 1 must not be woken before that.
 */
static void vsmfs_trans_done_unwritten(struct vsmfs_sb_info *sbi, u64 tid)
{
	wait_event(sbi->s_commit_wq, atomic64_read(&sbi->s_commit_tid) >= (s64)tid - 1);
	vsmfs_trans_committed(sbi, tid);
}

/*
 * Transaction @tid was dropped unwritten: the changes it held are lost.
 * Every inode it changed reports -EIO once to each file description open
 * on it (its mapping's errseq_t, which fsync checks), and so does the file
 * system to syncfs (s_wb_err, which mapping_set_error() sets too). Once
 * errors=remount-ro acted, every later transaction is dropped as well:
 * vsmfs_trans_commit_tid() fails for @tid and after (s_lost_tid). An
 * overflow under errors=continue loses this one only.
 */
static void vsmfs_trans_lost(struct vsmfs_sb_info *sbi, u64 tid)
{
	struct super_block *sb = sbi->s_sb;
	struct inode *inode;

	if (READ_ONCE(sbi->s_error_ro))
		atomic64_cmpxchg(&sbi->s_lost_tid, 0, tid);
	errseq_set(&sb->s_wb_err, -EIO);
	spin_lock(&sb->s_inode_list_lock);
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list) {
		if ((s64)READ_ONCE(VSMFS_I(inode)->i_tid) >= (s64)tid)
			mapping_set_error(inode->i_mapping, -EIO);
	}
	spin_unlock(&sb->s_inode_list_lock);
	vsmfs_warn(sb, "transaction %llu dropped unwritten: its changes are lost", tid);
}

/* Whether transaction @tid, seen finished in s_commit_tid, was lost. */
static bool vsmfs_trans_tid_lost(struct vsmfs_sb_info *sbi, u64 tid)
{
	s64 lost;

	/*
	 * The drop set s_lost_tid before it advanced s_commit_tid (with the
	 * full barrier of the cmpxchg there): read them in the other order.
	 */
	smp_rmb();
	lost = atomic64_read(&sbi->s_lost_tid);
	return lost && (s64)tid >= lost;
}

/*
 * The running transaction cannot be committed (errors=remount-ro acted):
 * its blocks leave it unwritten, and PM keeps the last committed state.
 */
static void vsmfs_trans_drop_running(struct vsmfs_trans *t)
{
	struct vsmfs_mblk *mb, *tmp;

	list_for_each_entry_safe(mb, tmp, &t->t_dirty, m_dirty) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
		memset(mb->m_cmask, 0, sizeof(mb->m_cmask));
		mb->m_wmask_ok = false;
	}
	t->t_nblocks = 0;
	t->t_ndata = 0;
	vsmfs_trans_drop_frees(t->t_sbi);
}

/* The commits_* counter of each VSMFS_COMMIT_* cause. */
static const enum vsmfs_stat vsmfs_commit_stat[] = {
	[VSMFS_COMMIT_SYNC]	= VSMFS_STAT_commits_sync,
	[VSMFS_COMMIT_FSYNC]	= VSMFS_STAT_commits_fsync,
	[VSMFS_COMMIT_TIMER]	= VSMFS_STAT_commits_timer,
	[VSMFS_COMMIT_FULL]	= VSMFS_STAT_commits_full,
	[VSMFS_COMMIT_SYNCFS]	= VSMFS_STAT_commits_syncfs,
};

/**
 * vsmfs_trans_commit_all() - end a handle and commit the running transaction
 * @t: the handle, joined to the running transaction
 * @cause: VSMFS_COMMIT_*, for the counters
 *
 * Context: inside the handle; releases s_trans_mutex.
 * Return: 0 or a negative errno (-EROFS once errors=remount-ro acted).
 */
int vsmfs_trans_commit_all(struct vsmfs_trans *t, unsigned int cause)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_running *run = &sbi->s_run;
	u64 tid = run->tid;
	bool empty;
	int err;

	if (vsmfs_trans_changed(t))
		run->handles++;
	vsmfs_trans_apply_frees(t);
	vsmfs_trans_handle_done(t);
	if (run->handles) {
		vsmfs_stat_add(sbi, trans_handles, run->handles);
		this_cpu_inc(sbi->s_stats->v[vsmfs_commit_stat[cause]]);
	}
	run->handles = 0;
	run->tid++;
	/* Its blocks are the handle's now: the next one starts empty. */
	run->nblocks = 0;
	run->ndata = 0;
	if (unlikely(READ_ONCE(sbi->s_error_ro) || t->t_overflow) && t->t_nblocks) {
		vsmfs_trans_drop_running(t);
		vsmfs_trans_park(t);
		vsmfs_trans_lost(sbi, tid);
		vsmfs_trans_done_unwritten(sbi, tid);
		return -EROFS;
	}
	empty = !t->t_nblocks;
	vsmfs_trans_masks(t);
	err = vsmfs_journal_commit_trans(t);
	if (empty)
		vsmfs_trans_done_unwritten(sbi, tid);
	else
		vsmfs_trans_committed(sbi, tid);
	return err;
}

/*
 * Put back @len bytes at @off of @mb as @old saved them (the live mapping
 * follows page table entries back, in batch @sw) and take @mb out of the
 * transaction if the aborted handle added it.
 */
static void vsmfs_trans_put_back(struct vsmfs_trans *t, struct vsmfs_swap *sw,
				 struct vsmfs_mblk *mb, unsigned int off, const void *old,
				 unsigned int len)
{
	const struct vsmfs_layout *l = &t->t_sbi->s_layout;

	if (mb->m_blk >= l->ptable_start && mb->m_blk < l->ptable_start + l->ptable_blocks)
		vsmfs_swap_undo(sw, (mb->m_blk - l->ptable_start) * VSMFS_PTES_PER_BLOCK + off / 8,
				old, (__le64 *)mb->m_data + off / 8, len / 8);
	memcpy(mb->m_data + off, old, len);
	vsmfs_alloc_bits_restored(t->t_sbi, mb->m_blk, off, len);
	if (mb->m_is_dirty && mb->m_hnew) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
		t->t_nblocks--;
		if (mb->m_blk >= l->data_start)
			t->t_ndata--;
	}
	mb->m_hnew = false;
}

/* Put back the in-core inodes the handle tracked (vsmfs_trans_track()). */
static void vsmfs_trans_reload_inodes(struct vsmfs_trans *t)
{
	unsigned int i;

	for (i = 0; i < t->t_ninodes; i++) {
		vsmfs_inode_reload(t->t_inodes[i]);
		if (t->t_dirs & (1U << i))
			vsmfs_dir_index_free(t->t_inodes[i]);
	}
	t->t_ninodes = 0;
	t->t_dirs = 0;
}

static void vsmfs_trans_end_shared(struct vsmfs_trans *t, bool changed);

/*
 * The inode the handle created (vsmfs_new_inode()) leaves the inode cache
 * before the abort gives its i-number back: a create beside this one may
 * take the i-number at once, and would find the discarded inode hashed.
 * Nothing links it: the abort takes its entry out as well.
 */
static void vsmfs_trans_discard_new(struct vsmfs_trans *t)
{
	t->t_aborted = true;
	if (t->t_new_inode) {
		vsmfs_discard_new_inode(t->t_new_inode);
		t->t_new_inode = NULL;
	}
}

/*
 * vsmfs_trans_abort() of a shared metadata handle: the parts it saved go
 * back, newest first (no other handle changed them meanwhile), and its
 * i-number's bit is cleared alone. The blocks it added stay in the
 * running transaction, as they were.
 */
static void vsmfs_trans_abort_shared(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_undo_log *u = t->t_log;

	/*
	 * Another create may already have taken the i-number it freed; only
	 * a file system that stopped writing since may abort it (its end).
	 */
	WARN_ON_ONCE(t->t_ino_freed && !READ_ONCE(sbi->s_error_ro));
	vsmfs_trans_discard_new(t);
	while (u->n) {
		struct vsmfs_undo_rec *r = &u->rec[--u->n];

		memcpy(r->mb->m_data + r->off, u->bytes + r->at / 8, r->len);
	}
	u->used = 0;
	if (t->t_ino) {
		/* Atomic: other shared handles set bits of the word. */
		clear_bit(t->t_ino % (VSMFS_BLOCK_SIZE * BITS_PER_BYTE),
			  (unsigned long *)t->t_ino_mb->m_data);
		percpu_counter_inc(&sbi->s_free_inodes);
		t->t_ino = 0;
	}
	vsmfs_trans_reload_inodes(t);
	vsmfs_stat_inc(sbi, trans_aborts);
	vsmfs_trans_end_shared(t, false);
}

/**
 * vsmfs_trans_abort() - end a handle without any of its changes
 * @t: the handle
 *
 * Every metadata block changed in @t gets back the content it had when @t
 * first changed it, and leaves the running transaction if @t added it;
 * so does the allocator state, the runs @t freed, the live mapping of
 * logical pages whose page table entries @t swapped (with one TLB
 * shootdown), and each inode given to vsmfs_trans_track(). Nothing is
 * written to PM. Pages @t freed whose metadata versions
 * vsmfs_journal_forget() revoked stay correct: their home blocks hold the
 * last committed version, and the blocks earlier handles changed are put
 * back in the running transaction. An inode @t created
 * (vsmfs_new_inode()) is discarded first. Changes @t made to file data in
 * place are the caller's.
 *
 * Context: inside the handle; releases s_trans_mutex.
 */
void vsmfs_trans_abort(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_undo_log *u = t->t_log;
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_running *run = &sbi->s_run;
	struct vsmfs_mblk *mb, *tmp;
	struct vsmfs_swap sw;
	unsigned int i;

	if (t->t_shared) {
		vsmfs_trans_abort_shared(t);
		return;
	}
	lockdep_assert_held(&sbi->s_trans_mutex);
	vsmfs_trans_discard_new(t);
	vsmfs_swap_init(sbi, &sw);
	list_for_each_entry_safe(mb, tmp, &t->t_forgot, m_dirty) {
		list_move_tail(&mb->m_dirty, &t->t_dirty);
		mb->m_is_dirty = true;
		t->t_nblocks++;
		if (mb->m_blk >= l->data_start)
			t->t_ndata++;
	}
	list_for_each_entry(mb, &t->t_undo, m_undo)
		vsmfs_trans_put_back(t, &sw, mb, 0, mb->m_shadow, VSMFS_BLOCK_SIZE);
	/* Saved parts, newest first, after the whole blocks saved later. */
	while (u->n) {
		struct vsmfs_undo_rec *r = &u->rec[--u->n];

		vsmfs_trans_put_back(t, &sw, r->mb, r->off, u->bytes + r->at / 8, r->len);
		r->mb->m_ranged = false;
	}
	u->used = 0;
	vsmfs_swap_flush(&sw);
	/* A block changed without a copy cannot go back: it is committed. */
	WARN_ON_ONCE(t->t_nblocks != run->nblocks);
	for (i = t->t_nfrees; i < run->nfrees; i++)
		run->free_pages -= run->frees[i].frames;
	run->nfrees = t->t_nfrees;
	sbi->s_free_pages = t->t_free_pages;
	percpu_counter_sub(&sbi->s_free_inodes, t->t_ino_delta);
	sbi->s_small_cursor = t->t_small_cursor;
	sbi->s_vsp_cursor = t->t_vsp_cursor;
	vsmfs_trans_reload_inodes(t);
	list_for_each_entry_safe(mb, tmp, &t->t_undo, m_undo)
		vsmfs_shadow_free(sbi, mb);
	vsmfs_stat_inc(sbi, trans_aborts);
	vsmfs_trans_park(t);
}

/**
 * vsmfs_trans_commit() - end a handle
 * @t: the handle
 *
 * With commit=sync, for a handle marked t_sync, and while the journal is
 * written through, commits the running transaction with the handle
 * (durable on return). Otherwise the handle joins the running
 * transaction, after one fence that makes the file data it wrote durable
 * (see the top of this file), and is committed later.
 *
 * A handle that recorded an error (an overflow of the journal, a step
 * that failed with vsmfs_trans_fail()), or any that changed something
 * after errors=remount-ro made the file system read-only, is aborted
 * instead (vsmfs_trans_abort()): nothing of it is written, and DRAM goes
 * back to the running transaction as it was.
 *
 * Context: inside the handle; releases s_trans_mutex.
 * Return: 0, or, the handle aborted, the first error recorded in it
 * (-EFSCORRUPTED after an overflow) or -EROFS after errors=remount-ro
 * acted; or an error of the commit of the running transaction.
 */
int vsmfs_trans_commit(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_running *run = &sbi->s_run;
	bool changed = vsmfs_trans_changed(t);
	int err;

	/*
	 * For tests: a step of the handle failed (vsmfs_trans_fail()). Not
	 * after an i-number was freed beside other handles, which no abort
	 * may follow (vsmfs_free_ino()).
	 */
	if (changed && !t->t_ino_freed && vsmfs_fault(VSMFS_FAULT_TRANS_FAIL))
		vsmfs_trans_fail(t, -ENOMEM);
	err = t->t_error;
	if (t->t_shared) {
		if (unlikely(err || (READ_ONCE(sbi->s_error_ro) && changed))) {
			vsmfs_trans_abort(t);
			return err ?: -EROFS;
		}
		vsmfs_trans_handle_done(t);
		/* As below; a create stored nothing to PM. */
		vsmfs_fence_pending();
		vsmfs_trans_end_shared(t, changed);
		return 0;
	}
	if (unlikely(err || (READ_ONCE(sbi->s_error_ro) && changed))) {
		vsmfs_trans_abort(t);
		return err ?: -EROFS;
	}
	if (!changed) {
		vsmfs_trans_handle_done(t);
		vsmfs_trans_park(t);
		return 0;
	}
	if (t->t_sync || !sbi->s_jopts.commit_secs || vsmfs_journal_writethrough(sbi))
		return vsmfs_trans_commit_all(t, VSMFS_COMMIT_SYNC);
	vsmfs_trans_handle_done(t);
	/*
	 * The data this handle made reachable, before any commit of it: if
	 * this CPU stored to PM since its last fence (a handle that only
	 * changed metadata in DRAM, and a task whose data stores were on
	 * another CPU before it moved here, have nothing to order).
	 */
	vsmfs_fence_pending();
	if (!run->handles++)
		queue_delayed_work(system_long_wq, &sbi->s_commit_work,
				   sbi->s_jopts.commit_secs * HZ);
	vsmfs_trans_park(t);
	return 0;
}

/**
 * vsmfs_trans_end() - end a handle as its operation turned out
 * @t: the handle
 * @err: 0 if the operation succeeded, else its error
 *
 * Ends @t if @err is 0 (vsmfs_trans_commit()), else aborts it
 * (vsmfs_trans_abort()).
 *
 * Context: inside the handle; releases s_trans_mutex.
 * Return: @err, or what vsmfs_trans_commit() returned.
 */
int vsmfs_trans_end(struct vsmfs_trans *t, int err)
{
	if (err) {
		vsmfs_trans_abort(t);
		return err;
	}
	return vsmfs_trans_commit(t);
}

/**
 * vsmfs_trans_commit_tid() - make transaction @tid durable
 * @sbi: the file system
 * @tid: a transaction number, as vsmfs_trans_note_inode() noted it
 * @cause: VSMFS_COMMIT_*, for the counters
 *
 * Returns at once if @tid is committed; commits it if it is running;
 * else waits for the commit in flight.
 *
 * Context: process context, no handle running in the task.
 * Return: 0 or a negative errno from the commit.
 */
int vsmfs_trans_commit_tid(struct vsmfs_sb_info *sbi, u64 tid, unsigned int cause)
{
	struct vsmfs_trans t;
	u64 wait;

	if (!sbi->s_journal)
		return 0;
	if ((s64)tid <= atomic64_read(&sbi->s_commit_tid))
		goto done;
	vsmfs_trans_lock(sbi, &t, false);
	if (sbi->s_run.tid == tid && sbi->s_run.handles)
		return vsmfs_trans_commit_all(&t, cause);
	/* Nothing of it is left running: committed, or being committed. */
	wait = min(tid, sbi->s_run.tid - 1);
	vsmfs_trans_park(&t);
	wait_event(sbi->s_commit_wq, atomic64_read(&sbi->s_commit_tid) >= (s64)wait);
done:
	/* Finished is not durable: a transaction dropped unwritten is lost. */
	return vsmfs_trans_tid_lost(sbi, tid) ? -EROFS : 0;
}

/**
 * vsmfs_trans_sync() - commit the running transaction
 * @sbi: the file system
 * @cause: VSMFS_COMMIT_*, for the counters
 *
 * Context: process context, no handle running in the task.
 * Return: 0 or a negative errno from the commit.
 */
int vsmfs_trans_sync(struct vsmfs_sb_info *sbi, unsigned int cause)
{
	if (!sbi->s_journal)
		return 0;
	return vsmfs_trans_commit_tid(sbi, READ_ONCE(sbi->s_run.tid), cause);
}

/**
 * vsmfs_trans_sync_inode() - make every change of @inode durable
 * @inode: the inode
 * @cause: VSMFS_COMMIT_*, for the counters
 *
 * Return: 0 or a negative errno from the commit.
 */
int vsmfs_trans_sync_inode(struct inode *inode, unsigned int cause)
{
	if (vsmfs_fault(VSMFS_FAULT_FSYNC_NOCOMMIT))
		return 0;
	return vsmfs_trans_commit_tid(VSMFS_SB(inode->i_sb), READ_ONCE(VSMFS_I(inode)->i_tid),
				      cause);
}

static void vsmfs_trans_commit_work(struct work_struct *work)
{
	struct vsmfs_sb_info *sbi = container_of(to_delayed_work(work), struct vsmfs_sb_info,
						 s_commit_work);

	vsmfs_trans_sync(sbi, VSMFS_COMMIT_TIMER);
}

/* Whether handles may end without committing, so beside each other. */
static bool vsmfs_shared_ok(struct vsmfs_sb_info *sbi)
{
	return READ_ONCE(sbi->s_jopts.commit_secs) && !READ_ONCE(sbi->s_error_ro) &&
	       !vsmfs_journal_writethrough(sbi);
}

/*
 * Enter s_handles_sem as a reader if no writer holds it or waits to:
 * count on this CPU, then look for the writer's mark (each side's store
 * before its load, the Dekker pattern of vsmfs_trans_lock()); a reader
 * that finds it takes its count back on the same CPU, so that a writer
 * that saw the count and not the mark waits only until then.
 * Return: whether the task entered.
 */
static bool vsmfs_handles_try(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_hsem *hs = &sbi->s_handles_sem;
	bool ok;

	preempt_disable();
	this_cpu_inc(*hs->readers);
	/* The count before the mark: pairs with vsmfs_trans_lock()'s barrier. */
	smp_mb();
	ok = !atomic_read(&sbi->s_excl);
	if (!ok) {
		this_cpu_dec(*hs->readers);
		/* The count before the writer's wait is looked at. */
		if (wq_has_sleeper(&hs->writer))
			wake_up(&hs->writer);
	}
	preempt_enable();
	return ok;
}

/*
 * Whether no reader is in s_handles_sem, for a writer that set s_excl.
 * A count taken on one CPU and given back on another is seen given back
 * only if it was seen taken: the reader took it before it found no mark,
 * which the writer set before it looks.
 */
static bool vsmfs_hsem_idle(struct vsmfs_sb_info *sbi)
{
	unsigned int cpu;
	int n = 0;

	/* Every handle of the other kind looks: a plain loop, no bitmap search. */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (cpu_possible(cpu))
			n += READ_ONCE(*per_cpu_ptr(sbi->s_handles_sem.readers, cpu));
	/* What the readers did before they left: pairs with vsmfs_handles_exit(). */
	smp_mb();
	return !n;
}

/*
 * Take s_handles_sem shared, after the handle that holds it exclusive or
 * waits to: once that one has ended. If another has begun since, the
 * reader queues on s_trans_mutex behind it, and enters while it holds
 * the mutex, which no writer then holds: a stream of handles under
 * s_trans_mutex cannot keep a shared one out. It spins for
 * VSMFS_EXCL_SPIN_NS at most before it sleeps.
 */
static void vsmfs_handles_enter(struct vsmfs_sb_info *sbi)
{
	int ends = atomic_read(&sbi->s_excl_ends);
	u64 until;

	/* Read the count first: pairs with the unlock's set, then increment. */
	smp_rmb();
	if (likely(vsmfs_handles_try(sbi)))
		goto out;
	until = local_clock() + VSMFS_EXCL_SPIN_NS;
	while (atomic_read(&sbi->s_excl) && atomic_read(&sbi->s_excl_ends) == ends &&
	       !need_resched() && local_clock() < until)
		cpu_relax();
	wait_event(sbi->s_excl_wq, !atomic_read(&sbi->s_excl) ||
		   atomic_read(&sbi->s_excl_ends) != ends);
	if (vsmfs_handles_try(sbi))
		goto out;
	mutex_lock(&sbi->s_trans_mutex);
	/* A writer sets the mark only while it holds the mutex. */
	while (WARN_ON_ONCE(!vsmfs_handles_try(sbi)))
		cpu_relax();
	mutex_unlock(&sbi->s_trans_mutex);
out:
	rwsem_acquire_read(&sbi->s_handles_sem.dep_map, 0, 0, _RET_IP_);
}

/* Leave s_handles_sem as a reader, and wake a writer that waits for it. */
static void vsmfs_handles_exit(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_hsem *hs = &sbi->s_handles_sem;

	rwsem_release(&hs->dep_map, _RET_IP_);
	/*
	 * A CPU's count is changed only by tasks on that CPU, in process
	 * context, with preemption disabled: a load and a store do what
	 * this_cpu_dec() would.
	 */
	preempt_disable();
	/* The handle's loads and stores before the count: pairs with vsmfs_hsem_idle(). */
	smp_store_release(this_cpu_ptr(hs->readers), __this_cpu_read(*hs->readers) - 1);
	preempt_enable();
	/* The count before the mark: a writer that missed it is woken. */
	smp_mb();
	if (unlikely(atomic_read(&sbi->s_excl)))
		wake_up(&hs->writer);
}

/* What a CPU's share takes from the running transaction at a time. */
#define VSMFS_SHRES_CREDITS	24
#define VSMFS_SHRES_FREES	8

/*
 * Whether the running transaction has room for @credits more blocks and
 * @frees more entries of s_run.frees reserved. Under s_run.lock.
 */
static bool vsmfs_run_room(struct vsmfs_sb_info *sbi, u32 credits, unsigned int frees)
{
	struct vsmfs_running *run = &sbi->s_run;

	return run->nblocks + run->shared_credits + credits <= vsmfs_trans_max_blocks(sbi) &&
	       run->nfrees + run->shared_frees + frees <= run->maxfrees &&
	       !vsmfs_trans_space_short(sbi);
}

/*
 * Give @res at least @credits blocks and @frees entries, reserved in the
 * running transaction: a batch of each it lacks if there is room for one,
 * else just what it lacks. On @res's CPU, preemption disabled.
 * Return: 0, or -EAGAIN if the running transaction has no room.
 */
static int vsmfs_shres_refill(struct vsmfs_sb_info *sbi, struct vsmfs_shres *res, u32 credits,
			      unsigned int frees)
{
	struct vsmfs_running *run = &sbi->s_run;
	u32 c = res->credits < credits ? credits - res->credits : 0;
	unsigned int f = res->frees < frees ? frees - res->frees : 0;
	u32 cb = c ? max_t(u32, c, VSMFS_SHRES_CREDITS - min_t(u32, res->credits,
							       VSMFS_SHRES_CREDITS)) : 0;
	unsigned int fb = f ? max_t(unsigned int, f, VSMFS_SHRES_FREES -
				    min_t(unsigned int, res->frees, VSMFS_SHRES_FREES)) : 0;
	int ret = 0;

	spin_lock(&run->lock);
	if (vsmfs_run_room(sbi, cb, fb)) {
		c = cb;
		f = fb;
	} else if (!vsmfs_run_room(sbi, c, f)) {
		ret = -EAGAIN;
		goto out;
	}
	run->shared_credits += c;
	run->shared_frees += f;
	run->shared_used = true;
	res->credits += c;
	res->frees += f;
out:
	spin_unlock(&run->lock);
	return ret;
}

/*
 * Move the runs and handles @res holds into the running transaction, whose
 * entries they hold. Under s_run.lock on @res's CPU, preemption disabled, or with
 * s_handles_sem held for writing.
 */
static void vsmfs_shres_flush_locked(struct vsmfs_sb_info *sbi, struct vsmfs_shres *res)
{
	struct vsmfs_running *run = &sbi->s_run;
	unsigned int i;

	for (i = 0; i < res->nruns; i++)
		run->frees[run->nfrees++] = res->runs[i];
	run->free_pages += res->pages;
	run->shared_frees -= res->nruns;
	run->handles += res->handles;
	res->nruns = 0;
	res->pages = 0;
	res->handles = 0;
}

/* As vsmfs_shres_flush_locked(), on @res's CPU, preemption disabled. */
static void vsmfs_shres_flush(struct vsmfs_sb_info *sbi, struct vsmfs_shres *res)
{
	spin_lock(&sbi->s_run.lock);
	vsmfs_shres_flush_locked(sbi, res);
	spin_unlock(&sbi->s_run.lock);
}

/*
 * Fold every CPU's share into the running transaction (runs, handles)
 * before a handle of the other kind or a commit looks at it. Only the
 * shares that took a batch or ended a handle since the last fold can hold
 * anything (s_run.shared_used). The room they hold stays theirs, in this
 * transaction and the next ones, until a handle of the other kind needs
 * it (vsmfs_shres_reclaim()).
 * With s_handles_sem held for writing: no shared handle runs.
 */
static void vsmfs_shres_fold(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;
	unsigned int cpu;

	lockdep_assert_held_write(&sbi->s_handles_sem);
	if (!run->shared_used)
		return;
	/* As vsmfs_hsem_idle(). */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vsmfs_shres *res;

		if (!cpu_possible(cpu))
			continue;
		res = per_cpu_ptr(sbi->s_shres, cpu);
		if (res->nruns || res->handles)
			vsmfs_shres_flush_locked(sbi, res);
	}
	run->shared_used = false;
}

/*
 * Take back the room every CPU's share holds, for a handle of the other
 * kind that needs it: the next shared handle on each CPU takes a batch
 * again. With s_handles_sem held for writing, after vsmfs_shres_fold().
 */
static void vsmfs_shres_reclaim(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;
	unsigned int cpu;

	lockdep_assert_held_write(&sbi->s_handles_sem);
	if (!run->shared_credits && !run->shared_frees)
		return;
	vsmfs_stat_inc(sbi, trans_share_reclaims);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vsmfs_shres *res;

		if (!cpu_possible(cpu))
			continue;
		res = per_cpu_ptr(sbi->s_shres, cpu);
		run->shared_credits -= res->credits;
		run->shared_frees -= res->frees;
		res->credits = 0;
		res->frees = 0;
	}
	WARN_ON_ONCE(run->shared_credits || run->shared_frees);
	run->shared_credits = 0;
	run->shared_frees = 0;
}

/*
 * Begin a handle beside others (either kind): s_handles_sem shared, and
 * room for @credits blocks and @frees entries of s_run.frees reserved in
 * the running transaction, as vsmfs_trans_full() asks of the others. The
 * room comes from this CPU's share, refilled from the running transaction
 * under s_run.lock when it runs short (see "Per-CPU shares").
 * Return: 0, or -EAGAIN with nothing taken.
 */
static __always_inline int vsmfs_shared_enter(struct vsmfs_sb_info *sbi, u32 credits,
					      unsigned int frees)
{
	struct vsmfs_shres *res;
	int ret = 0;

	/*
	 * A handle of the other kind running or about to: wait for it to end
	 * (vsmfs_handles_enter()) rather than queue on the mutex behind every
	 * handle waiting there and then hold it, which kept all other
	 * handles out while this one ran.
	 */
	if (!vsmfs_shared_ok(sbi))
		return -EAGAIN;
	/* A handle that had to retry begins first (see "Turns"). */
	if (unlikely(vsmfs_turn_busy(sbi)))
		vsmfs_turn_wait(sbi);
	vsmfs_handles_enter(sbi);
	/* Short of space: the commit that frees pages comes first. */
	if (unlikely(vsmfs_trans_space_short(sbi))) {
		vsmfs_handles_exit(sbi);
		return -EAGAIN;
	}
	/* This CPU's share, to itself until preemption is enabled again. */
	preempt_disable();
	res = this_cpu_ptr(sbi->s_shres);
	if (unlikely(res->credits < credits || res->frees < frees))
		ret = vsmfs_shres_refill(sbi, res, credits, frees);
	if (!ret) {
		res->credits -= credits;
		res->frees -= frees;
	}
	preempt_enable();
	if (ret)
		vsmfs_handles_exit(sbi);
	return ret;
}

/*
 * Add the scratch run of reservation [@lpn, @lpn + @count) a shared handle
 * ends to the runs of @res, as the pages of one of them if it is such a
 * run in the same VSP and the two meet: a CPU's pool hands out the pages
 * of a refill one after the other, so a stream of 4 KiB overwrites gives
 * back runs that meet, and the commit then ends them, and shoots down
 * their translations, run by run rather than page by page. Only here: no
 * handle that could still be aborted, and so cut s_run.frees back to where
 * it began (vsmfs_trans_abort()), runs beside a shared handle, and a run
 * of @res is only grown on its CPU. On @res's CPU, preemption disabled.
 * Return: 1 if the run took a new entry (one of those the handle
 * reserved), else 0.
 */
static unsigned int vsmfs_shres_add_scratch(struct vsmfs_sb_info *sbi, struct vsmfs_shres *res,
					    u64 lpn, u64 count)
{
	struct vsmfs_frun *f;
	unsigned int i;
	u64 frames;

	for (i = res->nruns; i > 0; i--) {
		f = &res->runs[i - 1];
		if (lpn / VSMFS_VSP_PAGES == f->lpn / VSMFS_VSP_PAGES &&
		    (lpn + count == f->lpn || f->lpn + f->count == lpn)) {
			frames = vsmfs_frames_in(sbi, lpn, count);
			f->lpn = min(f->lpn, lpn);
			f->count += count;
			f->resv += count;
			f->frames += frames;
			res->pages += frames;
			return 0;
		}
	}
	if (res->nruns == VSMFS_SHRES_RUNS)
		vsmfs_shres_flush(sbi, res);
	res->pages += vsmfs_frun_fill(sbi, &res->runs[res->nruns++], lpn, count, true, count);
	return 1;
}

/*
 * End what vsmfs_shared_enter() began: the reservations @resv[0..@nresv)
 * join the runs this CPU's share holds for the running transaction, in
 * at most @nresv of the @frees entries reserved
 * (vsmfs_shres_add_scratch()), and the room left of @credits and @frees
 * goes back to the share; with @counted the handle is one of the running
 * transaction's (the first arms the commit timer); the time since @t0
 * (local_clock(), 0 for none) adds to trans_shared_hold_ns. s_run.lock
 * only for the first handle of a transaction, and when the share holds
 * more runs or pages than it keeps.
 */
static __always_inline void vsmfs_shared_leave(struct vsmfs_sb_info *sbi, u32 credits,
					       unsigned int frees, const struct vsmfs_resv *resv,
					       unsigned int nresv, bool counted, u64 t0)
{
	struct vsmfs_running *run = &sbi->s_run;
	struct vsmfs_shres *res;
	bool first = false;
	unsigned int i;

	/* The share of the CPU the handle ends on (it may have moved). */
	preempt_disable();
	res = this_cpu_ptr(sbi->s_shres);
	for (i = 0; i < nresv; i++)
		frees -= vsmfs_shres_add_scratch(sbi, res, resv[i].lpn, resv[i].count);
	res->credits += credits;
	res->frees += frees;
	/*
	 * A commit, which would clear s_run.handles, waits for
	 * s_handles_sem: a count seen set stays set until the share is
	 * folded, and the handles it holds then join it.
	 */
	if (counted && READ_ONCE(run->handles)) {
		res->handles++;
		counted = false;
	}
	/*
	 * Room handed back on another CPU than it was taken from piles up:
	 * what is over two batches goes back to the running transaction.
	 */
	if (unlikely(counted || res->pages >= VSMFS_SHRES_PAGES ||
		     res->credits > 2 * VSMFS_SHRES_CREDITS ||
		     res->frees > 2 * VSMFS_SHRES_FREES)) {
		spin_lock(&run->lock);
		if (counted)
			first = !run->handles++;
		vsmfs_shres_flush_locked(sbi, res);
		if (res->credits > 2 * VSMFS_SHRES_CREDITS) {
			run->shared_credits -= res->credits - VSMFS_SHRES_CREDITS;
			res->credits = VSMFS_SHRES_CREDITS;
		}
		if (res->frees > 2 * VSMFS_SHRES_FREES) {
			run->shared_frees -= res->frees - VSMFS_SHRES_FREES;
			res->frees = VSMFS_SHRES_FREES;
		}
		spin_unlock(&run->lock);
	}
	/*
	 * A share that kept its room took no batch since the last fold: the
	 * next one must still look at what it holds now.
	 */
	if ((res->nruns || res->handles) && !READ_ONCE(run->shared_used))
		WRITE_ONCE(run->shared_used, true);
	preempt_enable();
	/* Before the lock goes: no commit can have taken this handle yet. */
	if (first)
		queue_delayed_work(system_long_wq, &sbi->s_commit_work,
				   READ_ONCE(sbi->s_jopts.commit_secs) * HZ);
	if (t0)
		vsmfs_stat_add(sbi, trans_shared_hold_ns, local_clock() - t0);
	vsmfs_handles_exit(sbi);
}

/*
 * An undo log for a shared metadata handle on this CPU: the one the CPU
 * keeps, or a new one. Migration is disabled.
 */
static struct vsmfs_undo_log *vsmfs_slog_get(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_page_pool *pool = this_cpu_ptr(sbi->s_pools);
	struct vsmfs_undo_log *u;

	spin_lock(&pool->lock);
	u = pool->ulog;
	pool->ulog = NULL;
	spin_unlock(&pool->lock);
	if (!u && !vsmfs_fault(VSMFS_FAULT_SHADOW_ALLOC))
		u = kmalloc(sizeof(*u), GFP_NOFS);
	if (u) {
		u->n = 0;
		u->used = 0;
	}
	return u;
}

/* Keep @u for this CPU's next shared metadata handle, or free it. */
static void vsmfs_slog_put(struct vsmfs_sb_info *sbi, struct vsmfs_undo_log *u)
{
	struct vsmfs_page_pool *pool = this_cpu_ptr(sbi->s_pools);

	spin_lock(&pool->lock);
	if (!pool->ulog) {
		pool->ulog = u;
		u = NULL;
	}
	spin_unlock(&pool->lock);
	kfree(u);
}

/**
 * vsmfs_trans_begin_shared() - start a metadata handle beside others
 * @sbi: the file system
 * @t: the handle to initialize
 * @credits: the most blocks it may add to the running transaction
 *
 * See "Shared metadata handles" at the top of this file. The handle is
 * used and ended as one from vsmfs_trans_begin(); a call in it that it
 * cannot make returns -EAGAIN, after which the caller aborts it and does
 * the operation in a handle from vsmfs_trans_begin().
 *
 * Context: process context; holds s_handles_sem shared, and makes the
 * task's allocations GFP_NOFS, until the handle ends.
 * Return: 0, or -EAGAIN (nothing taken) if the operation must use a
 * handle of the other kind: the running transaction must commit first,
 * or every handle commits as it ends.
 */
int vsmfs_trans_begin_shared(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits)
{
	struct vsmfs_undo_log *u;

	if (vsmfs_shared_enter(sbi, credits, 0))
		return -EAGAIN;
	migrate_disable();
	u = vsmfs_slog_get(sbi);
	if (!u) {
		migrate_enable();
		vsmfs_shared_leave(sbi, credits, 0, NULL, 0, false, 0);
		return -EAGAIN;
	}
	vsmfs_trans_setup(t, sbi, false);
	t->t_log = u;
	t->t_shared = true;
	t->t_credits = credits;
	t->t_nofs = memalloc_nofs_save();
	t->t_locked = local_clock();
	return 0;
}

/*
 * End a shared metadata handle: its credits left go back, and if it
 * changed anything or added a block it is one of the running
 * transaction's handles (which commits the blocks it added, changed or
 * not).
 */
static void vsmfs_trans_end_shared(struct vsmfs_trans *t, bool changed)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;

	vsmfs_stat_inc(sbi, trans_shared_meta);
	vsmfs_slog_put(sbi, t->t_log);
	t->t_log = NULL;
	memalloc_nofs_restore(t->t_nofs);
	vsmfs_shared_leave(sbi, t->t_credits, 0, NULL, 0, changed || t->t_added, t->t_locked);
	migrate_enable();
}

/**
 * vsmfs_shandle_begin() - start a shared handle
 * @sbi: the file system
 * @h: the handle to initialize
 * @credits: the most blocks it may add to the running transaction
 * @frees: the most runs it may give vsmfs_shandle_defer_resv()
 *
 * See "Shared handles" at the top of this file.
 *
 * Context: process context; holds s_handles_sem shared until
 * vsmfs_shandle_end().
 * Return: 0, or -EAGAIN (nothing taken) if the operation must use a
 * handle of the other kind.
 */
int vsmfs_shandle_begin(struct vsmfs_sb_info *sbi, struct vsmfs_shandle *h, u32 credits,
			unsigned int frees)
{
	if (vsmfs_shared_enter(sbi, credits, frees))
		return -EAGAIN;
	h->h_sbi = sbi;
	h->h_credits = credits;
	h->h_frees = frees;
	h->h_nswaps = 0;
	h->h_nresv = 0;
	/*
	 * A shared handle swaps page table entries and never reads or
	 * writes pages through the mapping layer: no vsmfs_vsp_enter(), and
	 * so no catch-up with the swaps flushed lazily before it (vsp.c).
	 * It may move to another CPU. Its hold time is sampled
	 * (trans_shared_hold_ns, vsmfs_hold_clock()), the handles numbered
	 * by the count of those ended on this CPU.
	 */
	h->h_t0 = vsmfs_hold_clock(this_cpu_read(sbi->s_stats->v[VSMFS_STAT_trans_shared_handles]));
	return 0;
}

/**
 * __vsmfs_shandle_dirty() - add a block to the running transaction
 * @h: a shared handle
 * @mb: the block, before the handle changes it, found not dirty by
 *	vsmfs_shandle_dirty()
 *
 * Return: 0, or -EFSCORRUPTED if the handle has dirtied more blocks than
 * it said it would (nothing done).
 */
int __vsmfs_shandle_dirty(struct vsmfs_shandle *h, struct vsmfs_mblk *mb)
{
	struct vsmfs_running *run = &h->h_sbi->s_run;
	int ret = 0;

	spin_lock(&run->lock);
	if (!mb->m_is_dirty) {
		if (WARN_ON_ONCE(!h->h_credits)) {
			ret = -EFSCORRUPTED;
			goto out;
		}
		h->h_credits--;
		run->shared_credits--;
		WRITE_ONCE(mb->m_is_dirty, true);
		list_add_tail(&mb->m_dirty, &run->dirty);
		run->nblocks++;
		if (mb->m_blk >= h->h_sbi->s_layout.data_start)
			run->ndata++;
	}
out:
	spin_unlock(&run->lock);
	return ret;
}

/**
 * vsmfs_shandle_defer_resv() - free a reservation's pages when the
 *	running transaction commits
 * @h: a shared handle, with one of the entries it reserved left
 * @r: scratch pages that took a file's old frames in page swaps
 *
 * As vsmfs_trans_defer_resv() with @claimed false; the handle adds it to
 * the running transaction as it ends (no commit runs beside it).
 */
void vsmfs_shandle_defer_resv(struct vsmfs_shandle *h, const struct vsmfs_resv *r)
{
	if (WARN_ON_ONCE(h->h_nresv == h->h_frees || h->h_nresv == VSMFS_SHANDLE_SWAPS))
		return;
	h->h_resv[h->h_nresv++] = *r;
}

/**
 * vsmfs_shandle_note_inode() - as vsmfs_trans_note_inode()
 * @h: a shared handle
 * @inode: the inode, whose next fsync needs the running transaction
 */
void vsmfs_shandle_note_inode(struct vsmfs_shandle *h, struct inode *inode)
{
	/* Changed only by a commit, which no shared handle runs beside. */
	VSMFS_I(inode)->i_tid = h->h_sbi->s_run.tid;
}

/**
 * vsmfs_shandle_end() - end a shared handle in the running transaction
 * @h: the handle; one that gave up has swapped back
 *	(vsmfs_swap_back_shared()) and ends all the same, its blocks
 *	unchanged in the running transaction
 *
 * Context: releases s_handles_sem.
 */
void vsmfs_shandle_end(struct vsmfs_shandle *h)
{
	struct vsmfs_sb_info *sbi = h->h_sbi;

	/* The data the handle made reachable: see vsmfs_trans_commit(). */
	vsmfs_fence_pending();
	vsmfs_stat_inc(sbi, trans_shared_handles);
	if (h->h_t0)
		vsmfs_stat_add(sbi, trans_shared_hold_ns, vsmfs_hold_ns(h->h_t0));
	vsmfs_shared_leave(sbi, h->h_credits, h->h_frees, h->h_resv, h->h_nresv, true, 0);
}

static struct lock_class_key vsmfs_handles_key;

/**
 * vsmfs_trans_init() - set up the running transaction
 * @sbi: the file system, before its first handle
 *
 * Return: 0 or -ENOMEM (vsmfs_trans_destroy() then cleans up).
 */
int vsmfs_trans_init(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;

	memset(run, 0, sizeof(*run));
	memset(&sbi->s_undo, 0, sizeof(sbi->s_undo));
	INIT_LIST_HEAD(&run->dirty);
	spin_lock_init(&run->lock);
	run->tid = 1;
	atomic64_set(&sbi->s_commit_tid, 0);
	atomic64_set(&sbi->s_lost_tid, 0);
	init_waitqueue_head(&sbi->s_commit_wq);
	INIT_DELAYED_WORK(&sbi->s_commit_work, vsmfs_trans_commit_work);
	init_waitqueue_head(&sbi->s_handles_sem.writer);
	atomic_set(&sbi->s_turn_next, 0);
	atomic_set(&sbi->s_turn_served, 0);
	init_waitqueue_head(&sbi->s_turn_wq);
	lockdep_init_map(&sbi->s_handles_sem.dep_map, "vsmfs_handles", &vsmfs_handles_key, 0);
	sbi->s_handles_sem.readers = alloc_percpu(int);
	sbi->s_shres = alloc_percpu(struct vsmfs_shres);
	if (!sbi->s_shres || !sbi->s_handles_sem.readers)
		return -ENOMEM;
	return 0;
}

/**
 * vsmfs_trans_waiting_pages() - pages the running transaction frees
 * @sbi: the file system
 *
 * Context: a count of the moment beside shared handles.
 * Return: the frames of the runs it frees when it commits.
 */
u64 vsmfs_trans_waiting_pages(struct vsmfs_sb_info *sbi)
{
	u64 n = READ_ONCE(sbi->s_run.free_pages);
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(sbi->s_shres, cpu)->pages);
	return n;
}

/**
 * vsmfs_trans_stop() - commit what runs and stop the commit timer
 * @sbi: the file system
 *
 * Context: process context, no handle running in the task.
 */
void vsmfs_trans_stop(struct vsmfs_sb_info *sbi)
{
	vsmfs_trans_sync(sbi, VSMFS_COMMIT_SYNCFS);
	cancel_delayed_work_sync(&sbi->s_commit_work);
}

/**
 * vsmfs_trans_destroy() - free the running transaction's state
 * @sbi: the file system, after its last handle
 */
void vsmfs_trans_destroy(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_mblk *mb, *tmp;

	cancel_delayed_work_sync(&sbi->s_commit_work);
	/*
	 * Unmount committed the running transaction, unless an error made
	 * the file system read-only first (or a failed mount never had
	 * one): what it holds is dropped, PM keeps the last commit.
	 */
	WARN_ON_ONCE(sbi->s_run.nblocks && !READ_ONCE(sbi->s_error_ro));
	list_for_each_entry_safe(mb, tmp, &sbi->s_run.dirty, m_dirty) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
	}
	sbi->s_run.nblocks = 0;
	sbi->s_run.ndata = 0;
	vsmfs_trans_drop_frees(sbi);
	/* Reservations live in the DRAM bitmaps, which go with the mount. */
	vsmfs_pool_forget(sbi);
	if (sbi->s_pools) {
		int cpu;

		for_each_possible_cpu(cpu) {
			struct vsmfs_page_pool *pool = per_cpu_ptr(sbi->s_pools, cpu);

			kfree(pool->ulog);
			pool->ulog = NULL;
		}
	}
	kvfree(sbi->s_run.frees);
	sbi->s_run.frees = NULL;
	/* Their runs, if any, were dropped with the running transaction's. */
	free_percpu(sbi->s_shres);
	sbi->s_shres = NULL;
	free_percpu(sbi->s_handles_sem.readers);
	sbi->s_handles_sem.readers = NULL;
	while (sbi->s_undo.npool)
		kfree(sbi->s_undo.pool[--sbi->s_undo.npool]);
}
