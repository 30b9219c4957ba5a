// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs transactions: shared handles, which run beside each other without
 * s_trans_mutex, and the per-CPU shares of the running transaction they
 * take their room from.
 *
 * Shared handles. An operation that only swaps page table entries of pages
 * it owns and sets the times of the file it writes (the staged overwrite,
 * stage.c; the overwrite in place, file.c) runs in a shared handle (struct
 * vsmfs_whandle) beside other such handles, holding s_handles_sem shared
 * and not s_trans_mutex: it changes single words of page table blocks
 * and of its inode's slot (vsmfs_whandle_times(), under the inode's lock)
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
 */
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <linux/sched/clock.h>
#include <linux/workqueue.h>
#include "vsmfs.h"
#include "vsp.h"
#include "journal.h"
#include "pmem.h"
#include "fault.h"
#include "trans.h"

/**
 * vsmfs_handles_sem_idle() - whether no reader is in s_handles_sem
 * @sbi: the file system, whose s_excl a writer set
 *
 * A count taken on one CPU and given back on another is seen given back
 * only if it was seen taken: the reader took it before it found no mark,
 * which the writer set before it looks.
 *
 * Return: true if no shared handle runs.
 */
bool vsmfs_handles_sem_idle(struct vsmfs_sb_info *sbi)
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

/**
 * vsmfs_handles_enter_slow() - take s_handles_sem shared after a writer
 * @sbi: the file system
 * @ends: s_excl_ends, read before the fast path's try
 *
 * Take s_handles_sem shared, after the handle that holds it exclusive or
 * waits to (the fast path, vsmfs_handles_enter(), found its mark): once
 * that one has ended, the count of ends read before the try in @ends. If
 * another has begun since, the reader queues on s_trans_mutex behind it,
 * and enters while it holds the mutex, which no writer then holds: a
 * stream of handles under s_trans_mutex cannot keep a shared one out. It
 * spins for VSMFS_EXCL_SPIN_NS at most before it sleeps.
 *
 * Context: process context; may sleep.
 */
noinline void vsmfs_handles_enter_slow(struct vsmfs_sb_info *sbi, int ends)
{
	u64 until = local_clock() + VSMFS_EXCL_SPIN_NS;

	while (atomic_read(&sbi->s_excl) && atomic_read(&sbi->s_excl_ends) == ends &&
	       !need_resched() && local_clock() < until)
		cpu_relax();
	wait_event(sbi->s_excl_wq, !atomic_read(&sbi->s_excl) ||
		   atomic_read(&sbi->s_excl_ends) != ends);
	if (vsmfs_handles_try(sbi))
		return;
	vsmfs_trans_mutex_lock(sbi);
	/* A writer sets the mark only while it holds the mutex. */
	while (WARN_ON_ONCE(!vsmfs_handles_try(sbi)))
		cpu_relax();
	mutex_unlock(&sbi->s_trans_mutex);
}

/*
 * Per-CPU shares. A shared handle of either kind takes its room from its
 * CPU's share of the running transaction (struct vsmfs_cpu_share), not from
 * s_run: the share reserves a batch of blocks
 * and of entries of s_run.frees at a time (VSMFS_CPU_SHARE_CREDITS,
 * VSMFS_CPU_SHARE_FREES) under s_run.lock, and keeps the scratch runs and the
 * count of the handles that end into it, and the blocks its handles add
 * to the running transaction (vsmfs_cpu_share_add_block()). So the
 * writers of many CPUs do not all write s_run's cache line twice per
 * write, nor the links of each other's blocks. What a share holds is
 * reserved in s_run.shared_credits and s_run.shared_frees, so it never
 * overflows the journal or the array; its runs join s_run when it holds
 * VSMFS_CPU_SHARE_RUNS of them (its pages are counted in s_run.free_pages
 * when they are VSMFS_CPU_SHARE_PAGES, its runs kept, to grow), and when a
 * handle of the other kind or a commit takes s_handles_sem for writing
 * (vsmfs_cpu_share_fold()), which then sees every share whole. The room a
 * share holds stays its own across those handles and commits, into the
 * next transactions: a handle of the other kind counts it beside its own
 * blocks and entries, and takes it back from every share only when it
 * needs it (vsmfs_trans_full(), vsmfs_trans_fits(), vsmfs_trans_room();
 * vsmfs_cpu_share_reclaim()), so that the shared handles of every CPU do not
 * all come back to s_run.lock after each such handle. The first
 * handle of a transaction still counts itself in s_run.handles, and arms
 * the commit timer, under s_run.lock. A share takes no lock: only the
 * tasks on its CPU use it, with preemption disabled, and handles of the
 * other kind and commits only while no shared handle runs. A handle that
 * moved ends into the share of the CPU it ends on.
 */

/* What a CPU's share takes from the running transaction at a time. */
#define VSMFS_CPU_SHARE_CREDITS	24
#define VSMFS_CPU_SHARE_FREES	16

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
static int vsmfs_cpu_share_refill(struct vsmfs_sb_info *sbi, struct vsmfs_cpu_share *res,
				  u32 credits, unsigned int frees)
{
	struct vsmfs_running *run = &sbi->s_run;
	u32 c = res->credits < credits ? credits - res->credits : 0;
	unsigned int f = res->frees < frees ? frees - res->frees : 0;
	u32 cb = c ? max_t(u32, c, VSMFS_CPU_SHARE_CREDITS - min_t(u32, res->credits,
							       VSMFS_CPU_SHARE_CREDITS)) : 0;
	unsigned int fb = f ? max_t(unsigned int, f, VSMFS_CPU_SHARE_FREES -
				    min_t(unsigned int, res->frees, VSMFS_CPU_SHARE_FREES)) : 0;
	int ret = 0;

	spin_lock(&run->lock);
	if (vsmfs_run_room(sbi, cb, fb)) {
		c = cb;
		f = fb;
	} else if (!vsmfs_run_room(sbi, c, f)) {
		/* Only the array short of entries: it can grow (vsmfs_run_frees_grow()). */
		ret = f && vsmfs_run_room(sbi, c, 0) ? -ENOBUFS : -EAGAIN;
		goto out;
	}
	run->shared_credits += c;
	run->shared_frees += f;
	/* Read by every shared handle that ends: written only when it flips. */
	if (!run->shared_used)
		WRITE_ONCE(run->shared_used, true);
	res->credits += c;
	res->frees += f;
out:
	spin_unlock(&run->lock);
	return ret;
}

/*
 * Grow s_run.frees so that @frees more entries fit beside those the
 * transaction and the shares hold, for a shared handle that found it
 * short: the array grows from where it is used, not only in a handle of
 * the other kind (vsmfs_trans_defer()), so that a fresh mount, or a
 * transaction that frees many runs, does not send shared handles to the
 * mutex. Shared handles add to the array only under s_run.lock (their
 * CPUs' shares, vsmfs_cpu_share_flush()), handles of the other kind and
 * commits only while no shared handle runs: the copy and the switch under
 * s_run.lock see it whole, unless a commit reads the entries meanwhile
 * without the lock (s_run.frees_busy): the handle then takes the mutex.
 * Context: s_handles_sem held shared, process context. Return: 0,
 * -ENOMEM or -EAGAIN.
 */
static int vsmfs_run_frees_grow(struct vsmfs_sb_info *sbi, unsigned int frees)
{
	struct vsmfs_running *run = &sbi->s_run;
	struct vsmfs_free_run *f, *old;
	unsigned int n, nofs;

	n = max3(2 * READ_ONCE(run->maxfrees), 2U * VSMFS_CPU_SHARE_FREES * num_online_cpus(),
		 READ_ONCE(run->maxfrees) + frees);
	nofs = memalloc_nofs_save();
	f = kvmalloc_array(n, sizeof(*f), GFP_KERNEL);
	memalloc_nofs_restore(nofs);
	if (!f)
		return -ENOMEM;
	spin_lock(&run->lock);
	/* A commit reads the entries in place (vsmfs_trans_frees_early()). */
	if (run->frees_busy) {
		spin_unlock(&run->lock);
		kvfree(f);
		return -EAGAIN;
	}
	old = f;
	if (run->maxfrees < n) {
		memcpy(f, run->frees, run->nfrees * sizeof(*f));
		old = run->frees;
		run->frees = f;
		run->maxfrees = n;
	}
	spin_unlock(&run->lock);
	kvfree(old);
	vsmfs_stat_inc(sbi, trans_frees_grown);
	return 0;
}

/*
 * Count the pages and handles @res holds in the running transaction; its
 * runs stay, and may still grow (vsmfs_cpu_share_add_run()). Locking as
 * vsmfs_cpu_share_flush_locked().
 */
static void vsmfs_cpu_share_count_locked(struct vsmfs_sb_info *sbi, struct vsmfs_cpu_share *res)
{
	struct vsmfs_running *run = &sbi->s_run;

	run->free_pages += res->pages;
	run->handles += res->handles;
	res->pages = 0;
	res->handles = 0;
}

/*
 * Move the runs and handles @res holds into the running transaction, whose
 * entries they hold. Under s_run.lock on @res's CPU, preemption disabled, or with
 * s_handles_sem held for writing.
 */
static void vsmfs_cpu_share_flush_locked(struct vsmfs_sb_info *sbi, struct vsmfs_cpu_share *res)
{
	struct vsmfs_running *run = &sbi->s_run;
	unsigned int i;

	for (i = 0; i < res->nruns; i++) {
		run->nplain += vsmfs_free_run_plain(&res->runs[i]);
		run->frees[run->nfrees++] = res->runs[i];
	}
	run->shared_frees -= res->nruns;
	res->nruns = 0;
	vsmfs_cpu_share_count_locked(sbi, res);
}

/* As vsmfs_cpu_share_flush_locked(), on @res's CPU, preemption disabled. */
static void vsmfs_cpu_share_flush(struct vsmfs_sb_info *sbi, struct vsmfs_cpu_share *res)
{
	spin_lock(&sbi->s_run.lock);
	vsmfs_cpu_share_flush_locked(sbi, res);
	spin_unlock(&sbi->s_run.lock);
}

/**
 * vsmfs_cpu_share_flush_here() - move this CPU's share into the running
 *	transaction
 * @sbi: the file system
 *
 * The runs and handles this CPU's share holds join s_run, as when the
 * share fills (vsmfs_cpu_share_add_run()): a commit about to free the
 * runs the running transaction holds takes those of its own CPU first.
 *
 * Context: process context, shared handles running on other CPUs.
 */
void vsmfs_cpu_share_flush_here(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_cpu_share *res;

	preempt_disable();
	res = this_cpu_ptr(sbi->s_cpu_share);
	if (res->nruns || res->handles)
		vsmfs_cpu_share_flush(sbi, res);
	preempt_enable();
}

/**
 * vsmfs_cpu_share_fold() - fold every CPU's share into the running transaction
 * @sbi: the file system
 *
 * The runs and handles the shares hold join the running transaction
 * before a handle of the other kind or a commit looks at it. Only the
 * shares that took a batch or ended a handle since the last fold can hold
 * anything (s_run.shared_used). The room they hold stays theirs, in this
 * transaction and the next ones, until a handle of the other kind needs
 * it (vsmfs_cpu_share_reclaim()).
 *
 * Context: s_handles_sem held for writing: no shared handle runs.
 */
void vsmfs_cpu_share_fold(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;
	unsigned int cpu;

	lockdep_assert_held_write(&sbi->s_handles_sem);
	if (!run->shared_used)
		return;
	/* As vsmfs_handles_sem_idle(). */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vsmfs_cpu_share *res;

		if (!cpu_possible(cpu))
			continue;
		res = per_cpu_ptr(sbi->s_cpu_share, cpu);
		if (res->nruns || res->handles)
			vsmfs_cpu_share_flush_locked(sbi, res);
		if (res->nblocks) {
			list_splice_tail_init(&res->dirty, &run->dirty);
			run->nblocks += res->nblocks;
			run->ndata += res->ndata;
			/* Each took one of the credits the shares hold. */
			run->shared_credits -= res->nblocks;
			res->nblocks = 0;
			res->ndata = 0;
		}
	}
	run->shared_used = false;
}

/**
 * vsmfs_cpu_share_blocks() - blocks the CPUs' shares hold for the next fold
 * @sbi: the file system
 *
 * Read without the locks, as shared handles add blocks: a hint, for the
 * size of what a commit prepares (vsmfs_trans_commit_tid()).
 *
 * Return: the sum of the shares' dirty blocks.
 */
unsigned int vsmfs_cpu_share_blocks(struct vsmfs_sb_info *sbi)
{
	unsigned int cpu, n = 0;

	if (!READ_ONCE(sbi->s_run.shared_used))
		return 0;
	/* As vsmfs_handles_sem_idle(). */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (cpu_possible(cpu))
			n += READ_ONCE(per_cpu_ptr(sbi->s_cpu_share, cpu)->nblocks);
	return n;
}

/**
 * vsmfs_cpu_share_add_block() - add a block a shared handle changes to the
 *	running transaction
 * @sbi: the file system
 * @mb: the block, before the handle changes it
 * @credited: the handle has a credit left for it; without one (a bug,
 *	which the caller reports) the block joins all the same, and one more
 *	block is reserved for it
 *
 * The block goes on the list of the share of the CPU the task runs on,
 * not on s_run.dirty: the handles of many CPUs that each add blocks of
 * their own (inode-table blocks of their own i-number regions, blocks of
 * their own directories) write no line in common, neither s_run's nor the
 * last block added by another CPU, whose list link the next addition
 * would write. The credit it takes stays counted in s_run.shared_credits
 * until vsmfs_cpu_share_fold() moves the block to s_run.dirty. Two
 * handles that add one block at once (a shared directory's) agree on
 * which adds it with an atomic exchange of m_is_dirty.
 *
 * Context: s_handles_sem held shared.
 * Return: true if this call added it (and took the credit), false if it
 * was in the running transaction already.
 */
bool vsmfs_cpu_share_add_block(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb, bool credited)
{
	struct vsmfs_running *run = &sbi->s_run;
	struct vsmfs_cpu_share *res;

	lockdep_assert_held_read(&sbi->s_handles_sem);
	if (cmpxchg(&mb->m_is_dirty, false, true))
		return false;
	if (unlikely(!credited)) {
		spin_lock(&run->lock);
		run->shared_credits++;
		spin_unlock(&run->lock);
	}
	preempt_disable();
	res = this_cpu_ptr(sbi->s_cpu_share);
	list_add_tail(&mb->m_dirty, &res->dirty);
	res->nblocks++;
	if (mb->m_blk >= sbi->s_layout.data_start)
		res->ndata++;
	preempt_enable();
	/* Cleared only by the fold: written once per transaction. */
	if (!READ_ONCE(run->shared_used))
		WRITE_ONCE(run->shared_used, true);
	return true;
}

/**
 * vsmfs_cpu_share_reclaim() - take back the room every CPU's share holds
 * @sbi: the file system
 *
 * For a handle of the other kind that needs it: the next shared handle on
 * each CPU takes a batch again.
 *
 * Context: s_handles_sem held for writing, after vsmfs_cpu_share_fold().
 */
void vsmfs_cpu_share_reclaim(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;
	unsigned int cpu;

	lockdep_assert_held_write(&sbi->s_handles_sem);
	if (!run->shared_credits && !run->shared_frees)
		return;
	vsmfs_stat_inc(sbi, trans_share_reclaims);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vsmfs_cpu_share *res;

		if (!cpu_possible(cpu))
			continue;
		res = per_cpu_ptr(sbi->s_cpu_share, cpu);
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
 * under s_run.lock when it runs short (see "Per-CPU shares" above).
 * Return: 0, or -EAGAIN with nothing taken.
 */
static __always_inline int vsmfs_shared_enter(struct vsmfs_sb_info *sbi, u32 credits,
					      unsigned int frees)
{
	struct vsmfs_cpu_share *res;
	bool grown = false;
	int ret = 0;

	/*
	 * A handle of the other kind running or about to: wait for it to end
	 * (vsmfs_handles_enter()) rather than queue on the mutex behind every
	 * handle waiting there and then hold it, which kept all other
	 * handles out while this one ran.
	 */
	if (!vsmfs_shared_ok(sbi))
		return -EAGAIN;
	/* A handle that had to retry begins first (see "Turns", trans.c). */
	if (unlikely(vsmfs_turn_busy(sbi)))
		vsmfs_turn_wait(sbi);
	vsmfs_handles_enter(sbi);
	/* Short of space: the commit that frees pages comes first. */
	if (unlikely(vsmfs_trans_space_short(sbi))) {
		vsmfs_handles_exit(sbi);
		return -EAGAIN;
	}
again:
	/* This CPU's share, to itself until preemption is enabled again. */
	preempt_disable();
	res = this_cpu_ptr(sbi->s_cpu_share);
	if (unlikely(res->credits < credits || res->frees < frees))
		ret = vsmfs_cpu_share_refill(sbi, res, credits, frees);
	if (!ret) {
		res->credits -= credits;
		res->frees -= frees;
	}
	preempt_enable();
	/* The array of runs to free was short: grown, the share tries again. */
	if (unlikely(ret == -ENOBUFS) && !grown && !vsmfs_run_frees_grow(sbi, frees)) {
		grown = true;
		ret = 0;
		goto again;
	}
	if (ret)
		vsmfs_handles_exit(sbi);
	return ret ? -EAGAIN : 0;
}

/*
 * Add run @f, which a shared handle ends, to the runs of @res: as part of
 * one of them if the two meet (vsmfs_free_run_join()), else in an entry
 * of its own. Only here: no handle that could still be aborted, and so
 * cut s_run.frees back to where it began (vsmfs_trans_abort()), runs
 * beside a shared handle, and a run of @res is only grown on its CPU. On
 * @res's CPU, preemption disabled.
 * Return: 1 if the run took a new entry (one of those the handle
 * reserved), else 0.
 */
static __always_inline unsigned int vsmfs_cpu_share_add_run(struct vsmfs_sb_info *sbi,
							    struct vsmfs_cpu_share *res,
							    const struct vsmfs_free_run *f)
{
	unsigned int i, took = 0;

	for (i = res->nruns; i > 0; i--)
		if (vsmfs_free_run_join(&res->runs[i - 1], f))
			break;
	if (!i) {
		if (res->nruns == VSMFS_CPU_SHARE_RUNS)
			vsmfs_cpu_share_flush(sbi, res);
		res->runs[res->nruns++] = *f;
		took = 1;
	}
	res->pages += f->frames;
	return took;
}

/*
 * The scratch run of reservation [@lpn, @lpn + @count) a shared handle
 * ends (the old frames its pages took), to the runs of @res as
 * vsmfs_cpu_share_add_run() adds it. Return: as that.
 */
static unsigned int vsmfs_cpu_share_add_scratch(struct vsmfs_sb_info *sbi,
						struct vsmfs_cpu_share *res, u64 lpn, u64 count)
{
	struct vsmfs_free_run f;

	vsmfs_free_run_fill(sbi, &f, lpn, count, true, count);
	return vsmfs_cpu_share_add_run(sbi, res, &f);
}

/*
 * End what vsmfs_shared_enter() began: the reservations @resv[0..@nresv)
 * join the runs this CPU's share holds for the running transaction, in
 * at most @nresv of the @frees entries reserved
 * (vsmfs_cpu_share_add_scratch()), as do the runs @runs[0..@nruns) a
 * shared metadata handle frees, in at most one entry each
 * (vsmfs_cpu_share_add_run()); the room left of @credits and @frees goes
 * back to the share; with @counted the handle is one of the running
 * transaction's (the first arms the commit timer); the time since @t0
 * (vsmfs_hold_clock(), 0 for none) adds to trans_shared_hold_ns. s_run.lock
 * only for the first handle of a transaction, when the share holds more
 * runs or pages than it keeps, and when it holds runs while a commit
 * closes the transaction.
 */
static __always_inline void vsmfs_shared_leave(struct vsmfs_sb_info *sbi, u32 credits,
					       unsigned int frees, const struct vsmfs_resv *resv,
					       unsigned int nresv,
					       const struct vsmfs_free_run *runs,
					       unsigned int nruns, bool counted, u64 t0)
{
	struct vsmfs_running *run = &sbi->s_run;
	struct vsmfs_cpu_share *res;
	bool first = false, closing;
	unsigned int i;

	/* The share of the CPU the handle ends on (it may have moved). */
	preempt_disable();
	res = this_cpu_ptr(sbi->s_cpu_share);
	for (i = 0; i < nresv; i++)
		frees -= vsmfs_cpu_share_add_scratch(sbi, res, resv[i].lpn, resv[i].count);
	for (i = 0; i < nruns; i++)
		frees -= vsmfs_cpu_share_add_run(sbi, res, &runs[i]);
	res->credits += credits;
	res->frees += frees;
	/*
	 * A commit, which would clear s_run.handles and move s_run.tid on,
	 * waits for s_handles_sem: a count seen set, in this transaction by
	 * this share or now, stays set until the share is folded, and the
	 * handles it holds then join it.
	 */
	if (counted && (res->counted_tid == run->tid || READ_ONCE(run->handles))) {
		res->counted_tid = run->tid;
		res->handles++;
		counted = false;
	}
	/*
	 * Room handed back on another CPU than it was taken from piles up:
	 * what is over two batches goes back to the running transaction.
	 * While a commit closes it, the runs go to it too, for the commit to
	 * free before it keeps the handles out (vsmfs_trans_frees_early()).
	 */
	closing = res->nruns && READ_ONCE(run->closing) == READ_ONCE(run->tid);
	if (unlikely(counted || closing || res->pages >= VSMFS_CPU_SHARE_PAGES ||
		     res->credits > 2 * VSMFS_CPU_SHARE_CREDITS ||
		     res->frees > 2 * VSMFS_CPU_SHARE_FREES)) {
		spin_lock(&run->lock);
		if (counted) {
			first = !run->handles++;
			res->counted_tid = run->tid;
		}
		if (closing)
			vsmfs_cpu_share_flush_locked(sbi, res);
		else
			vsmfs_cpu_share_count_locked(sbi, res);
		if (res->credits > 2 * VSMFS_CPU_SHARE_CREDITS) {
			run->shared_credits -= res->credits - VSMFS_CPU_SHARE_CREDITS;
			res->credits = VSMFS_CPU_SHARE_CREDITS;
		}
		if (res->frees > 2 * VSMFS_CPU_SHARE_FREES) {
			run->shared_frees -= res->frees - VSMFS_CPU_SHARE_FREES;
			res->frees = VSMFS_CPU_SHARE_FREES;
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
		vsmfs_stat_add(sbi, trans_shared_hold_ns, vsmfs_hold_ns(t0));
	vsmfs_handles_exit(sbi);
}

/*
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
 * adds blocks to the running transaction on its CPU's share's list, from
 * credits reserved as it began (vsmfs_cpu_share_add_block()). It
 * allocates no page: a change that needs a new block (a directory's, the
 * first attribute's) claims a page its caller
 * reserved before it began and writes its block whole
 * (vsmfs_resv_new_block(), vsmfs_trans_fresh_block()). What it cannot do
 * so (a block with no page reserved, an index block, a block to free; a
 * change too large for its log; a commit at its end) makes the call
 * return -EAGAIN: the caller aborts it and does the operation again in a
 * handle of the other kind. An aborted shared handle leaves the blocks it
 * added in the running transaction, as they were, but the block of a
 * reserved page, which it takes out (vsmfs_trans_drop_fresh()).
 * Its ordering is that of any handle that ends in the running
 * transaction; it stores nothing to PM.
 */

/*
 * An undo log for a shared metadata handle on this CPU: the one the CPU
 * keeps, or a new one. Migration is disabled.
 */
static struct vsmfs_undo_log *vsmfs_spare_log_get(struct vsmfs_sb_info *sbi)
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
		u->nfree = 0;
	}
	return u;
}

/* Keep @u for this CPU's next shared metadata handle, or free it. */
static void vsmfs_spare_log_put(struct vsmfs_sb_info *sbi, struct vsmfs_undo_log *u)
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
 * @frees: the most runs of data pages it may free (at most
 *	VSMFS_SHARED_FREES; vsmfs_trans_defer())
 *
 * See "Shared metadata handles" above. The handle is
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
int vsmfs_trans_begin_shared(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits,
			     unsigned int frees)
{
	struct vsmfs_undo_log *u;
	u64 ended;

	if (WARN_ON_ONCE(frees > VSMFS_SHARED_FREES) || vsmfs_shared_enter(sbi, credits, frees))
		return -EAGAIN;
	migrate_disable();
	u = vsmfs_spare_log_get(sbi);
	if (!u) {
		migrate_enable();
		vsmfs_shared_leave(sbi, credits, frees, NULL, 0, NULL, 0, false, 0);
		return -EAGAIN;
	}
	u->maxfree = frees;
	vsmfs_trans_setup(t, sbi, false);
	t->t_log = u;
	t->t_shared = true;
	t->t_credits = credits;
	t->t_nofs = memalloc_nofs_save();
	/* Sampled, as a shared handle's: numbered by those ended on this CPU. */
	ended = this_cpu_read(sbi->s_stats->v[VSMFS_STAT_trans_shared_meta]);
	t->t_locked = vsmfs_hold_clock(ended);
	return 0;
}

/**
 * vsmfs_trans_end_shared() - end a shared metadata handle
 * @t: the handle
 * @changed: it changed something
 *
 * Its credits left go back, the runs it frees join the running
 * transaction, and if it changed anything or added a block it is one of
 * the running transaction's handles (which commits the blocks it added,
 * changed or not).
 */
void vsmfs_trans_end_shared(struct vsmfs_trans *t, bool changed)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_undo_log *u = t->t_log;

	vsmfs_stat_inc(sbi, trans_shared_meta);
	t->t_log = NULL;
	memalloc_nofs_restore(t->t_nofs);
	/* Migration is disabled: the log goes back to this CPU's pool after. */
	vsmfs_shared_leave(sbi, t->t_credits, u->maxfree, NULL, 0, u->free, u->nfree,
			   changed || t->t_added, t->t_locked);
	vsmfs_spare_log_put(sbi, u);
	migrate_enable();
}

/**
 * vsmfs_trans_fresh_block() - let a shared metadata handle write the block
 *	of a fresh page whole
 * @t: the shared handle
 * @mb: the block of a page only @t has, which its caller reserved
 *
 * Zeroes @mb and notes every word of it for the commit; nothing of it is
 * saved for an abort, which takes the block out of the running
 * transaction instead (vsmfs_trans_drop_fresh()). The caller adds it to
 * the transaction (vsmfs_trans_dirty()) once it has written it.
 *
 * Return: 0, or -EAGAIN if @t has such a block already.
 */
int vsmfs_trans_fresh_block(struct vsmfs_trans *t, struct vsmfs_mblk *mb)
{
	if (WARN_ON_ONCE(!t->t_shared) || t->t_fresh)
		return -EAGAIN;
	/* A commit still to write what the page held before has its copy. */
	vsmfs_mblk_freeze(t->t_sbi, mb);
	memset(mb->m_data, 0, VSMFS_BLOCK_SIZE);
	memset(mb->m_cmask, 0xff, sizeof(mb->m_cmask));
	vsmfs_trans_new_block(t, mb);
	t->t_fresh = mb;
	return 0;
}

/*
 * Take the block of a fresh page that shared handle @t added whole
 * (@t->t_fresh) out of the running transaction: the page goes back free,
 * and a commit must not write it, home or in the journal. No other handle
 * has the page, and no commit runs beside a shared handle. Its DRAM copy
 * is read again from PM: as it was before, a block no version names.
 */
static void vsmfs_trans_drop_fresh(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb = t->t_fresh;
	void __pm *src = vsmfs_blk_ptr(sbi, mb->m_blk);
	struct vsmfs_cpu_share *res;

	/*
	 * On the list of this CPU's share, where @t added it (the handle
	 * stays on its CPU), which only the tasks on this CPU change beside
	 * shared handles.
	 */
	if (mb->m_is_dirty) {
		preempt_disable();
		res = this_cpu_ptr(sbi->s_cpu_share);
		list_del_init(&mb->m_dirty);
		WRITE_ONCE(mb->m_is_dirty, false);
		res->nblocks--;
		if (mb->m_blk >= sbi->s_layout.data_start)
			res->ndata--;
		preempt_enable();
		/* The credit it took goes back with the handle's others. */
		t->t_credits++;
	}
	memset(mb->m_cmask, 0, sizeof(mb->m_cmask));
	/* A page that cannot be read keeps what the handle wrote: it is free. */
	if (src)
		vsmfs_read_pm(mb->m_data, src, VSMFS_BLOCK_SIZE);
	t->t_fresh = NULL;
}

/*
 * The pages shared handle @t marked unwritten with no copy saved
 * (@t->t_unw_lpn, pages of a reservation it made a file's: none had the
 * flag) lose it again: whole-word stores of their entries, in page table
 * blocks the handle joined (cached), and their bits of s_unwritten,
 * atomically. The words stay noted: a commit writes them as they were.
 */
static void vsmfs_trans_unwritten_back(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 i, end = t->t_unw_lpn + t->t_unw_count;

	for (i = t->t_unw_lpn; i < end; i++) {
		struct vsmfs_mblk *mb = vsmfs_mblk_find(sbi, sbi->s_layout.ptable_start +
							i / VSMFS_PTES_PER_BLOCK);
		__le64 *slot;

		if (WARN_ON_ONCE(!mb))
			continue;
		slot = (__le64 *)mb->m_data + i % VSMFS_PTES_PER_BLOCK;
		WRITE_ONCE(*slot, *slot & ~cpu_to_le64(VSMFS_PTE_UNWRITTEN));
		clear_bit(i, sbi->s_unwritten);
	}
	t->t_unw_count = 0;
}

/**
 * vsmfs_trans_abort_shared() - vsmfs_trans_abort() of a shared metadata handle
 * @t: the handle
 *
 * The parts it saved go back, newest first (no other handle changed them
 * meanwhile), with the live mapping of the pages whose frames it swapped
 * (one shootdown), its i-number's bit is cleared alone, and the runs it
 * would have freed stay its file's. The blocks it added stay in the
 * running transaction, as they were, but the block of a fresh page it
 * wrote whole (vsmfs_trans_drop_fresh()).
 */
void vsmfs_trans_abort_shared(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_undo_log *u = t->t_log;
	struct vsmfs_swap sw;

	/*
	 * Another create may already have taken the i-number it freed; only
	 * a file system that stopped writing since may abort it (its end).
	 */
	WARN_ON_ONCE(t->t_ino_freed && !READ_ONCE(sbi->s_error_ro));
	vsmfs_trans_discard_new(t);
	if (t->t_fresh)
		vsmfs_trans_drop_fresh(t);
	if (t->t_unw_count)
		vsmfs_trans_unwritten_back(t);
	vsmfs_swap_init(sbi, &sw);
	while (u->n) {
		struct vsmfs_undo_rec *r = &u->rec[--u->n];

		vsmfs_trans_put_words(t, &sw, r->mb, r->off, u->bytes + r->at / 8, r->len);
	}
	/* Before the pages swapped back can be taken again. */
	vsmfs_swap_flush(&sw);
	u->used = 0;
	u->nfree = 0;
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
 * vsmfs_whandle_begin() - start a shared handle
 * @sbi: the file system
 * @h: the handle to initialize
 * @credits: the most blocks it may add to the running transaction
 * @frees: the most runs it may give vsmfs_whandle_defer_resv()
 *
 * See "Shared handles" at the top of this file.
 *
 * Context: process context; holds s_handles_sem shared until
 * vsmfs_whandle_end().
 * Return: 0, or -EAGAIN (nothing taken) if the operation must use a
 * handle of the other kind.
 */
int vsmfs_whandle_begin(struct vsmfs_sb_info *sbi, struct vsmfs_whandle *h, u32 credits,
			unsigned int frees)
{
	if (vsmfs_shared_enter(sbi, credits, frees))
		return -EAGAIN;
	h->h_sbi = sbi;
	h->h_credits = credits;
	h->h_frees = frees;
	h->h_nswaps = 0;
	h->h_nresv = 0;
	h->h_claim.count = 0;
	h->h_written[1] = 0;
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
 * __vsmfs_whandle_dirty() - add a block to the running transaction
 * @h: a shared handle
 * @mb: the block, before the handle changes it, found not dirty by
 *	vsmfs_whandle_dirty()
 *
 * Return: 0, or -EFSCORRUPTED if the handle has dirtied more blocks than
 * it said it would (nothing done).
 */
int __vsmfs_whandle_dirty(struct vsmfs_whandle *h, struct vsmfs_mblk *mb)
{
	if (unlikely(!h->h_credits)) {
		/* Added meanwhile by another handle: no credit needed. */
		if (READ_ONCE(mb->m_is_dirty))
			return 0;
		WARN_ON_ONCE(1);
		return -EFSCORRUPTED;
	}
	if (vsmfs_cpu_share_add_block(h->h_sbi, mb, true))
		h->h_credits--;
	return 0;
}

/**
 * vsmfs_whandle_defer_resv() - free a reservation's pages when the
 *	running transaction commits
 * @h: a shared handle, with one of the entries it reserved left
 * @r: scratch pages that took a file's old frames in page swaps
 *
 * As vsmfs_trans_defer_resv() with @claimed false; the handle adds it to
 * the running transaction as it ends (no commit runs beside it).
 */
void vsmfs_whandle_defer_resv(struct vsmfs_whandle *h, const struct vsmfs_resv *r)
{
	if (WARN_ON_ONCE(h->h_nresv == h->h_frees || h->h_nresv == VSMFS_WHANDLE_SWAPS))
		return;
	h->h_resv[h->h_nresv++] = *r;
}

/**
 * vsmfs_whandle_end() - end a shared handle in the running transaction
 * @h: the handle; one that gave up has swapped back
 *	(vsmfs_swap_back_shared()) and ends all the same, its blocks
 *	unchanged in the running transaction
 *
 * Context: releases s_handles_sem.
 */
void vsmfs_whandle_end(struct vsmfs_whandle *h)
{
	struct vsmfs_sb_info *sbi = h->h_sbi;
	struct vsmfs_free_run claim;
	unsigned int nclaim = 0;

	/* The data the handle made reachable: see vsmfs_trans_commit(). */
	vsmfs_fence_pending();
	vsmfs_stat_inc(sbi, trans_shared_handles);
	if (h->h_t0)
		vsmfs_stat_add(sbi, trans_shared_hold_ns, vsmfs_hold_ns(h->h_t0));
	/* A run claimed ends its reservation, as a shared metadata handle's. */
	if (h->h_claim.count) {
		vsmfs_free_run_fill(sbi, &claim, h->h_claim.lpn, 0, false, h->h_claim.count);
		nclaim = 1;
	}
	vsmfs_shared_leave(sbi, h->h_credits, h->h_frees, h->h_resv, h->h_nresv, &claim, nclaim,
			   true, 0);
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
		n += READ_ONCE(per_cpu_ptr(sbi->s_cpu_share, cpu)->pages);
	return n;
}
