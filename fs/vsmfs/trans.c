// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs transactions: exclusive handles and their undo log.
 *
 * An operation changes metadata in a handle (struct vsmfs_trans):
 * vsmfs_trans_begin(), then for each block vsmfs_trans_get_write_access(),
 * the change in its DRAM copy and vsmfs_trans_dirty(), then
 * vsmfs_trans_commit() or vsmfs_trans_abort(). The handles begun here
 * change DRAM one at a time, under s_trans_mutex, and exclude the shared
 * handles (trans_shared.c) with s_handles_sem held for writing. A handle
 * that ends joins the running transaction (sbi->s_run), which writes the
 * blocks of all its handles to the journal in one commit (trans_commit.c).
 * A handle never spans two transactions, so each operation is atomic.
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
 * create, an unlink, a chmod) has none.
 *
 * Abort. Each handle keeps a copy of every block it changes as it was
 * before its first change in the handle (m_shadow), or of just the words
 * it changes (sbi->s_undo: page table entries, inode slots, bitmap words;
 * vsmfs_trans_get_write_access_range()): vsmfs_trans_abort() puts them
 * back, takes the blocks the handle added out of the running
 * transaction (m_hnew), puts back those it dropped (t_forgot) and forgets
 * the runs it freed; an inode the handle created leaves the inode cache
 * first (t_new_inode). The inodes it changed are read again, the bitmap
 * words it put back are told to the allocator, through the ops the layers
 * above register (sbi->s_trans_iops, sbi->s_trans_aops): this layer names
 * neither. The running transaction as the earlier handles
 * left it stays. A handle whose step failed in a way the caller cannot
 * undo (a run it could not free) records the error (vsmfs_trans_fail()),
 * and its end aborts it: t_aborted tells the caller.
 *
 * Documentation/filesystems/vsmfs.rst, "Transactions and the journal",
 * tells the design as a whole.
 */
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <linux/sched/clock.h>
#include <linux/workqueue.h>
#include "vsmfs.h"
#include "mcache.h"
#include "vsp.h"
#include "journal.h"
#include "pmem.h"
#include "fault.h"
#include "jcore.h"
#include "trans.h"

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

/**
 * vsmfs_trans_setup() - what every handle starts with
 * @t: the handle
 * @sbi: the file system
 * @vsp: the handle may use the mapping layer
 *
 * Nothing changed, exclusive (undo log sbi->s_undo), no error.
 */
void vsmfs_trans_setup(struct vsmfs_trans *t, struct vsmfs_sb_info *sbi, bool vsp)
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
	t->t_keep = 0;
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
	t->t_dpage = NULL;
	t->t_fresh = NULL;
	t->t_ino_freed = false;
	t->t_new_inode = NULL;
	t->t_aborted = false;
	t->t_unw_count = 0;
	t->t_late = NULL;
	t->t_nlate = 0;
	t->t_fc_ok = false;
	t->t_fc_claim = 0;
	t->t_fc_move = 0;
	t->t_fc_inode = NULL;
	t->t_fc_mb = NULL;
	t->t_fc_dir = NULL;
	t->t_fc_ren = NULL;
	t->t_fc_gone = false;
	t->t_fc_imb = NULL;
	t->t_fc_dmb = NULL;
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
	u64 t0 = sbi->s_run.closing_ns;

	vsmfs_hold_end(sbi, t->t_locked);
	/* A commit's time with every other handle kept out (commit_excl_ns). */
	if (t0) {
		sbi->s_run.closing_ns = 0;
		vsmfs_stat_add(sbi, commit_excl_ns, ktime_get_ns() - t0);
	}
	memalloc_nofs_restore(t->t_nofs);
	rwsem_release(&sbi->s_handles_sem.dep_map, _RET_IP_);
	/* What the handle changed before the mark goes: readers see it after. */
	atomic_set_release(&sbi->s_excl, 0);
	atomic_inc(&sbi->s_excl_ends);
	if (wq_has_sleeper(&sbi->s_excl_wq))
		wake_up_all(&sbi->s_excl_wq);
	mutex_unlock(&sbi->s_trans_mutex);
}

/*
 * Take s_trans_mutex for a handle or a commit, counting the take and a
 * wait. Return: when the task began to wait for it, or 0.
 */
static u64 vsmfs_trans_mutex_wait(struct vsmfs_sb_info *sbi)
{
	u64 t0 = 0;

	if (!mutex_trylock(&sbi->s_trans_mutex)) {
		t0 = ktime_get_ns();
		vsmfs_stat_inc(sbi, journal_lock_waits);
		mutex_lock(&sbi->s_trans_mutex);
	}
	vsmfs_stat_inc(sbi, journal_lock_takes);
	return t0;
}

/*
 * The rest of vsmfs_trans_lock(), with s_trans_mutex held: @t0 is when the
 * task began to wait for it, or 0.
 */
static void vsmfs_trans_lock_held(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, bool vsp,
				  u64 t0)
{
	struct vsmfs_running *run = &sbi->s_run;

	/*
	 * The shared handles running end first; those that would begin wait
	 * (rw_semaphore readers may otherwise overtake a waiting writer for
	 * a while, and this one holds s_trans_mutex).
	 */
	atomic_set(&sbi->s_excl, 1);
	vsmfs_stat_inc(sbi, trans_excl);
	/* The mark before the counts: pairs with vsmfs_handles_try()'s smp_mb(). */
	smp_mb__after_atomic();
	if (!vsmfs_handles_sem_idle(sbi)) {
		u64 until = local_clock() + VSMFS_EXCL_SPIN_NS;
		bool idle = false;

		if (!t0) {
			t0 = ktime_get_ns();
			vsmfs_stat_inc(sbi, journal_lock_waits);
		}
		/* Shared handles are short: as vsmfs_handles_enter(). */
		while (!idle && !need_resched() && local_clock() < until) {
			cpu_relax();
			idle = vsmfs_handles_sem_idle(sbi);
		}
		if (!idle)
			wait_event(sbi->s_handles_sem.writer, vsmfs_handles_sem_idle(sbi));
	}
	rwsem_acquire(&sbi->s_handles_sem.dep_map, 0, 0, _RET_IP_);
	vsmfs_cpu_share_fold(sbi);
	t->t_locked = vsmfs_hold_start(sbi);
	if (t0)
		vsmfs_stat_add(sbi, journal_lock_wait_ns, (t->t_locked ?: ktime_get_ns()) - t0);
	/*
	 * No allocation under the mutex may recurse into the file system:
	 * reclaim may evict an inode, and eviction may need a transaction.
	 */
	t->t_nofs = memalloc_nofs_save();
	/* Short of space: pooled pages back first, before any change. */
	sbi->s_trans_aops->handle_begin(sbi);
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

/**
 * vsmfs_trans_lock() - take s_trans_mutex for a handle
 * @sbi: the file system
 * @t: the handle to set up, joined to the running transaction
 * @vsp: the handle may use the mapping layer
 *
 * Takes s_trans_mutex, then s_handles_sem for writing once the shared
 * handles running have ended, folds the CPUs' shares into the running
 * transaction and gives its blocks to @t.
 *
 * Context: process context; makes the task's allocations GFP_NOFS and
 * keeps it on its CPU until vsmfs_trans_park() or the commit.
 */
void vsmfs_trans_lock(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, bool vsp)
{
	u64 t0 = vsmfs_trans_mutex_wait(sbi);

	vsmfs_trans_lock_held(sbi, t, vsp, t0);
}

/**
 * vsmfs_trans_lock_tid() - take s_trans_mutex to commit transaction @tid
 * @sbi: the file system
 * @t: the handle to set up, joined to the running transaction
 * @tid: the transaction a commit is wanted for
 *
 * As vsmfs_trans_lock(), unless @tid is no longer the running transaction
 * once the mutex is held: a commit closed it while the task waited for
 * the mutex, and the task only waits for that commit to end. The mutex
 * then goes at once, and the shared handles running are not waited for,
 * nor those about to begin kept out.
 *
 * Context: process context, no handle running in the task.
 * Return: true if @tid is running and the handle holds the mutex as
 * vsmfs_trans_lock() leaves it, false if @tid was closed (nothing held).
 */
bool vsmfs_trans_lock_tid(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u64 tid)
{
	u64 t0 = vsmfs_trans_mutex_wait(sbi), t1;

	/* Only a commit moves it on, under the mutex. */
	if (sbi->s_run.tid != tid) {
		mutex_unlock(&sbi->s_trans_mutex);
		if (t0)
			vsmfs_stat_add(sbi, journal_lock_wait_ns, ktime_get_ns() - t0);
		vsmfs_stat_inc(sbi, trans_commit_overtaken);
		return false;
	}
	/*
	 * Before the shared handles are waited for: fsyncs of @tid that
	 * begin meanwhile wait for this commit, not for the mutex after it
	 * (vsmfs_trans_commit_tid()).
	 */
	WRITE_ONCE(sbi->s_run.closing, tid);
	t1 = ktime_get_ns();
	/* What can be freed beside the shared handles is, first. */
	vsmfs_trans_frees_early(sbi);
	/*
	 * A commit still placing its blocks holds s_jplace_mutex, which this
	 * one takes next: waited for before the handles are kept out.
	 */
	if (mutex_is_locked(&sbi->s_jplace_mutex)) {
		mutex_lock(&sbi->s_jplace_mutex);
		mutex_unlock(&sbi->s_jplace_mutex);
	}
	sbi->s_run.closing_ns = ktime_get_ns();
	sbi->s_run.early_ns = sbi->s_run.closing_ns - t1;
	vsmfs_trans_lock_held(sbi, t, false, t0);
	return true;
}

/**
 * vsmfs_trans_park() - give the running transaction back, and s_trans_mutex up
 * @t: the handle, which ends
 */
void vsmfs_trans_park(struct vsmfs_trans *t)
{
	struct vsmfs_running *run = &t->t_sbi->s_run;

	list_splice_init(&t->t_dirty, &run->dirty);
	run->nblocks = t->t_nblocks;
	run->ndata = t->t_ndata;
	vsmfs_trans_unlock(t);
	vsmfs_trans_cpu_end(t->t_vsp);
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
		vsmfs_cpu_share_reclaim(sbi);
	if (!run->handles)
		return false;
	if (run->nblocks + min(credits, max) > max)
		return true;
	return vsmfs_trans_space_short(sbi);
}

/*
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
 */

/* Whether ticket @ticket is served, or was. */
static bool vsmfs_turn_reached(struct vsmfs_sb_info *sbi, unsigned int ticket)
{
	return (int)((unsigned int)atomic_read(&sbi->s_turn_served) - ticket) >= 0;
}

/**
 * vsmfs_turn_wait() - wait for the turns taken before a handle begins
 * @sbi: the file system, with tickets taken and not yet served
 *
 * A handle about to begin waits until the tickets taken before now are
 * served, behind their handles (see "Turns").
 */
void vsmfs_turn_wait(struct vsmfs_sb_info *sbi)
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
		vsmfs_cpu_share_reclaim(t->t_sbi);

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
	vsmfs_cpu_share_reclaim(sbi);
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
	bool credited = t->t_credits;

	/* Cleared only by a commit, which no shared handle runs beside. */
	if (READ_ONCE(mb->m_is_dirty))
		return;
	if (vsmfs_cpu_share_add_block(t->t_sbi, mb, credited)) {
		if (!WARN_ON_ONCE(!credited))
			t->t_credits--;
		t->t_added = true;
	}
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
	/* For tests: as if the frees had outgrown the journal (not reached). */
	if (vsmfs_fault(VSMFS_FAULT_TRANS_OVERFLOW))
		vsmfs_trans_overflow(t);
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
	vsmfs_copy_words((u8 *)u->bytes + r->at, mb->m_data + off, r->len / 8);
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
 * vsmfs_trans_changed() - whether a handle changed anything
 * @t: the handle
 *
 * Return: true if it has something to commit or to undo.
 */
bool vsmfs_trans_changed(struct vsmfs_trans *t)
{
	if (t->t_shared)
		return t->t_log->n || t->t_ino || t->t_unw_count;
	return !list_empty(&t->t_undo) || t->t_log->n ||
	       t->t_sbi->s_run.nfrees != t->t_nfrees ||
	       !list_empty(&t->t_forgot);
}

/**
 * vsmfs_trans_handle_done() - make a handle's changes final
 * @t: the handle, ending in the running transaction
 *
 * What each block changed joins its m_cmask, the undo copies are dropped
 * and the blocks it added are the running transaction's.
 */
void vsmfs_trans_handle_done(struct vsmfs_trans *t)
{
	struct vsmfs_undo_log *u = t->t_log;
	struct vsmfs_mblk *mb, *tmp;
	unsigned int i;

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

		vsmfs_note_changed(r->mb, old, cur, r->off / 8, r->len / 8, t->t_shared);
		if (t->t_shared)
			continue;
		r->mb->m_hnew = false;
		r->mb->m_ranged = false;
	}
	u->n = 0;
	u->used = 0;
	/*
	 * Dropped for good: the pages they were on are freed. Words records
	 * carried go too: no commit of this transaction clears them.
	 */
	list_for_each_entry_safe(mb, tmp, &t->t_forgot, m_dirty) {
		list_del_init(&mb->m_dirty);
		memset(mb->m_cmask, 0, sizeof(mb->m_cmask));
		vsmfs_mblk_fc_forget(mb);
		mb->m_wmask_ok = false;
	}
	t->t_ninodes = 0;
	t->t_dirs = 0;
}

/**
 * vsmfs_trans_put_words() - put back part of a block an aborted handle saved
 * @t: the handle, being aborted
 * @sw: the batch the pages of page table entries put back join (flushed
 *	by the caller)
 * @mb: the block
 * @off: first byte of the part, a multiple of 8
 * @old: the part as the handle saved it
 * @len: its bytes, a multiple of 8
 *
 * The live mapping follows page table entries back (vsmfs_swap_undo()):
 * a logical page whose frame a swap of the handle changed is mapped to
 * its old frame again.
 */
void vsmfs_trans_put_words(struct vsmfs_trans *t, struct vsmfs_swap *sw, struct vsmfs_mblk *mb,
			   unsigned int off, const void *old, unsigned int len)
{
	const struct vsmfs_layout *l = &t->t_sbi->s_layout;

	if (mb->m_blk >= l->ptable_start && mb->m_blk < l->ptable_start + l->ptable_blocks)
		vsmfs_swap_undo(sw, (mb->m_blk - l->ptable_start) * VSMFS_PTES_PER_BLOCK + off / 8,
				old, (__le64 *)mb->m_data + off / 8, len / 8);
	memcpy(mb->m_data + off, old, len);
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

	vsmfs_trans_put_words(t, sw, mb, off, old, len);
	t->t_sbi->s_trans_aops->bits_restored(t->t_sbi, mb->m_blk, off, len);
	if (mb->m_is_dirty && mb->m_hnew) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
		t->t_nblocks--;
		if (mb->m_blk >= l->data_start)
			t->t_ndata--;
	}
	mb->m_hnew = false;
}

/**
 * vsmfs_trans_reload_inodes() - put back the in-core inodes a handle tracked
 * @t: the handle, being aborted
 *
 * Each inode given to vsmfs_trans_track() is read again from its slot,
 * and a directory's DRAM index dropped, through sbi->s_trans_iops.
 */
void vsmfs_trans_reload_inodes(struct vsmfs_trans *t)
{
	const struct vsmfs_trans_iops *iops = t->t_sbi->s_trans_iops;
	unsigned int i;

	for (i = 0; i < t->t_ninodes; i++) {
		iops->reload(t->t_inodes[i]);
		if (t->t_dirs & (1U << i))
			iops->dir_index_free(t->t_inodes[i]);
	}
	t->t_ninodes = 0;
	t->t_dirs = 0;
}

/**
 * vsmfs_trans_discard_new() - drop the inode an aborted handle created
 * @t: the handle, being aborted
 *
 * The inode the handle created (vsmfs_new_inode()) leaves the inode cache
 * before the abort gives its i-number back: a create beside this one may
 * take the i-number at once, and would find the discarded inode hashed.
 * Nothing links it: the abort takes its entry out as well.
 */
void vsmfs_trans_discard_new(struct vsmfs_trans *t)
{
	t->t_aborted = true;
	if (t->t_new_inode) {
		t->t_sbi->s_trans_iops->discard_new(t->t_new_inode);
		t->t_new_inode = NULL;
	}
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
	for (i = t->t_nfrees; i < run->nfrees; i++) {
		run->free_pages -= run->frees[i].frames;
		run->nplain -= vsmfs_free_run_plain(&run->frees[i]);
	}
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
		if (t->t_fc_inode)
			vsmfs_trans_fc_settle(t);
		else if (t->t_fc_dir)
			vsmfs_trans_fc_create(t);
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

/* Longest dirty list searched by walking it rather than the block cache. */
#define VSMFS_FORGET_WALK	16

/* Block @blk if it is dirty in @t, else NULL. */
static struct vsmfs_mblk *vsmfs_trans_find_dirty(struct vsmfs_trans *t, u64 blk)
{
	struct vsmfs_mblk *mb;

	if (t->t_nblocks > VSMFS_FORGET_WALK) {
		mb = vsmfs_mblk_find(t->t_sbi, blk);
		return mb && mb->m_is_dirty ? mb : NULL;
	}
	list_for_each_entry(mb, &t->t_dirty, m_dirty)
		if (mb->m_blk == blk)
			return mb;
	return NULL;
}

/**
 * vsmfs_journal_forget() - logical pages freed: they are metadata no more
 * @t: the transaction freeing them
 * @lpn: first logical page
 * @count: pages
 *
 * A freed page may become file data, written directly to PM. The journal
 * must then never write an old metadata version over it: each version of
 * the page's block is revoked now (vsmfs_journal_revoke(): its home block
 * first brought up to date, so the state before this transaction stays
 * whole), and the block leaves the transaction if it was dirty in it.
 *
 * The frames are read from the page table block (looked up once per block,
 * not per page), and a short dirty list is searched directly: freeing a
 * superpage costs no cache lookup per page.
 *
 * Context: inside the transaction; takes s_jplace_mutex (a commit placed
 * before may still hold it).
 */
void vsmfs_journal_forget(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_mblk *pt = NULL;
	bool jdata;
	u64 i;

	lockdep_assert_held(&sbi->s_trans_mutex);
	mutex_lock(&sbi->s_jplace_mutex);
	jdata = vsmfs_journal_has_data(sbi);
	for (i = 0; i < count && (jdata || t->t_ndata); i++) {
		u64 p = lpn + i, frame, blk;
		struct vsmfs_mblk *mb;

		if (!p || p >= l->lpages)
			continue;
		if (!pt || p % VSMFS_PTES_PER_BLOCK == 0) {
			pt = vsmfs_mblk_get(sbi, l->ptable_start + p / VSMFS_PTES_PER_BLOCK);
			if (IS_ERR(pt)) {
				pt = NULL;
				continue;
			}
		}
		frame = le64_to_cpu(((__le64 *)pt->m_data)[p % VSMFS_PTES_PER_BLOCK]) &
			VSMFS_PTE_FRAME_MASK;
		if (frame >= l->data_pages)
			continue;
		blk = l->data_start + frame;
		if (t->t_ndata) {
			mb = vsmfs_trans_find_dirty(t, blk);
			if (mb) {
				/*
				 * Dirtied by an earlier handle: an abort of
				 * this one puts it back (vsmfs_trans_abort()).
				 */
				if (mb->m_hnew)
					list_del_init(&mb->m_dirty);
				else
					list_move_tail(&mb->m_dirty, &t->t_forgot);
				mb->m_is_dirty = false;
				t->t_nblocks--;
				t->t_ndata--;
			}
		}
		if (jdata)
			jdata = vsmfs_journal_revoke(sbi, blk);
	}
	mutex_unlock(&sbi->s_jplace_mutex);
}

/**
 * vsmfs_trans_release() - the blocks of a committing handle leave it
 * @t: the handle committing the running transaction
 *
 * Its blocks are no longer dirty in it: placed in the journal, or frozen
 * for a commit that writes them after it handed s_trans_mutex over
 * (sbi->s_jclient, jcommit.c).
 */
void vsmfs_trans_release(struct vsmfs_trans *t)
{
	struct vsmfs_mblk *mb, *tmp;

	list_for_each_entry_safe(mb, tmp, &t->t_dirty, m_dirty) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
	}
}
