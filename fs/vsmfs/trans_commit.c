// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs transactions: the running transaction and its commit triggers.
 *
 * A handle that ends joins the running transaction (sbi->s_run): its
 * blocks stay dirty in DRAM, and the running transaction writes them all
 * to the journal in one commit (compound transactions, as handles join
 * jbd2's running transaction). It commits
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
 * it would wait for; the writing is the journal's
 * (vsmfs_journal_commit_trans(), jcommit.c), which asks back what it
 * needs of this layer through the ops registered here (sbi->s_jclient).
 * A handle never spans two transactions, so each operation is atomic, and
 * a crash leaves the state after some prefix of the committed
 * transactions.
 *
 * Ordering. Pages a handle frees, and scratch pages that took old frames
 * in a copy-on-write, hold what a crash before the commit gives back to
 * their files: they are freed in DRAM only by the commit (s_run.frees,
 * vsmfs_trans_frees_early() before it keeps the handles out,
 * vsmfs_trans_apply_frees() after, through the allocator's ops), and
 * taken again only once it is durable (s_freeing, alloc.c). The commit
 * itself, and the order of its stores, is the journal's (jcommit.c).
 */
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include "vsmfs.h"
#include "vsp.h"
#include "journal.h"
#include "pmem.h"
#include "fault.h"
#include "trans.h"

/*
 * Make @f (@n entries, unused) the spare array of runs if there is none
 * and it is large enough; else free it.
 */
static void vsmfs_run_put_spare(struct vsmfs_running *run, struct vsmfs_free_run *f,
				unsigned int n)
{
	spin_lock(&run->lock);
	if (!run->spare && n >= run->maxfrees) {
		run->spare = f;
		run->spare_max = n;
		f = NULL;
	}
	spin_unlock(&run->lock);
	kvfree(f);
}

/*
 * The array of runs the next transaction frees, if one is spare: the
 * committing handle keeps this one's to free some late. Under s_run.lock,
 * as a commit that ended gives one back meanwhile (vsmfs_trans_spare()).
 * Context: s_handles_sem held for writing.
 */
static struct vsmfs_free_run *vsmfs_trans_take_spare(struct vsmfs_running *run, unsigned int *max)
{
	struct vsmfs_free_run *f;

	spin_lock(&run->lock);
	f = run->spare;
	*max = run->spare_max;
	run->spare = NULL;
	spin_unlock(&run->lock);
	/*
	 * As many entries as the shares may hold room for (@shared_frees):
	 * one given back before the array grew is too small.
	 */
	if (f && *max < run->maxfrees) {
		kvfree(f);
		f = NULL;
	}
	/*
	 * None: the commit before still holds its own (commits overlap), or
	 * none was made yet. One without waiting for memory, or none.
	 */
	if (!f) {
		*max = run->maxfrees;
		f = kmalloc_array(*max, sizeof(*f), GFP_NOWAIT | __GFP_NOWARN);
	}
	return f;
}

/*
 * Free run @f in DRAM for the commit, through @t (the allocator's
 * free_run()). A staged write's scratch run, behind old frames: its stale
 * translations (sw_defer_b) join batch @sw, flushed by the caller before
 * the pages can be taken again, at the earliest once the commit is
 * durable.
 */
static void vsmfs_trans_free_run(struct vsmfs_trans *t, struct vsmfs_swap *sw,
				 const struct vsmfs_free_run *f)
{
	if (f->resv && f->scratch)
		vsmfs_swap_add(sw, f->lpn, f->count);
	t->t_sbi->s_trans_aops->free_run(t, f);
}

/*
 * Free in DRAM the runs the handles of the committing transaction freed
 * (the allocator's free_run(), sbi->s_trans_aops): from here the commit
 * carries the bitmap changes. Freed runs clear their bits and dirty the
 * bitmap block; scratch runs were never in the bitmap on PM and only clear
 * their bits. The pages are taken again only once the commit is durable
 * (t_freed, s_freeing).
 *
 * Old frames that overwrites left behind (scratch runs a page pool can
 * take back) are not given back here, while every other handle waits for
 * the commit to let s_handles_sem go: the transaction's array keeps them,
 * for the committing handle to give back once the commit is durable
 * (vsmfs_trans_free_late()), and the next transaction takes a spare array.
 * Without a spare, every run is freed here. The pages kept are out of free
 * space until then, as in a pool: at most an eighth of it. A transaction
 * that freed nothing else (s_run.nplain, counted as runs join it) hands
 * its whole array over without a pass over the runs.
 */
static void vsmfs_trans_apply_frees(struct vsmfs_trans *t)
{
	const struct vsmfs_trans_aops *aops = t->t_sbi->s_trans_aops;
	struct vsmfs_running *run = &t->t_sbi->s_run;
	struct vsmfs_free_run *spare = NULL;
	u64 budget = t->t_sbi->s_free_pages / 8;
	unsigned int i, nlate = 0, max = 0;
	struct vsmfs_swap sw;

	/* Pages freed before the handles were kept out wait for it as well. */
	if (run->freed_early) {
		t->t_freed = true;
		run->freed_early = false;
	}
	/* Only whole scratch runs are kept: with none, no array is taken. */
	if (run->nfrees > run->nplain)
		spare = vsmfs_trans_take_spare(run, &max);
	/*
	 * Only whole scratch runs (the overwrites' old frames), which fit
	 * the budget and may all be kept: the array is kept as it is.
	 */
	if (spare && !run->nplain && run->free_pages <= budget && aops->late_ok(t->t_sbi, NULL)) {
		nlate = run->nfrees;
		goto late;
	}
	vsmfs_swap_init(t->t_sbi, &sw);
	for (i = 0; i < run->nfrees; i++) {
		struct vsmfs_free_run *f = &run->frees[i];

		/* Kept first in the array: @nlate <= @i. */
		if (spare && !vsmfs_free_run_plain(f) && f->frames <= budget &&
		    aops->late_ok(t->t_sbi, f)) {
			budget -= f->frames;
			run->frees[nlate++] = *f;
			continue;
		}
		vsmfs_trans_free_run(t, &sw, f);
	}
	vsmfs_swap_flush(&sw);
	if (run->nfrees > nlate)
		t->t_freed = true;
late:
	if (nlate) {
		t->t_late = run->frees;
		t->t_late_max = run->maxfrees;
		t->t_nlate = nlate;
		run->frees = spare;
		run->maxfrees = max;
	} else if (spare) {
		vsmfs_run_put_spare(run, spare, max);
	}
	run->nfrees = 0;
	run->nplain = 0;
	run->free_pages = 0;
}

/*
 * One pass of vsmfs_trans_frees_early(): the runs of s_run.frees from
 * *@kept (those before are whole scratch runs kept), through @e, the
 * scratch runs among them kept after the others. Return: runs freed.
 */
static unsigned int vsmfs_trans_frees_pass(struct vsmfs_sb_info *sbi, struct vsmfs_trans *e,
					   unsigned int *kept)
{
	struct vsmfs_running *run = &sbi->s_run;
	u32 max = vsmfs_trans_max_blocks(sbi), dirtied = e->t_nblocks;
	unsigned int i, n, from = *kept, k = *kept, done = 0;
	struct vsmfs_swap sw;
	u64 pages = 0;

	spin_lock(&run->lock);
	n = run->nplain && run->handles ? run->nfrees - from : 0;
	/* Each run changes one bitmap block at most (runs stay in a VSP). */
	n = min(n, max - min(max, run->nblocks + run->shared_credits));
	run->nblocks += n;
	run->frees_busy = n != 0;
	spin_unlock(&run->lock);
	if (!n)
		return 0;
	vsmfs_swap_init(sbi, &sw);
	for (i = from; i < from + n; i++) {
		struct vsmfs_free_run *f = &run->frees[i];

		if (!vsmfs_free_run_plain(f)) {
			run->frees[k++] = *f;
			continue;
		}
		pages += f->frames;
		vsmfs_trans_free_run(e, &sw, f);
		done++;
	}
	vsmfs_swap_flush(&sw);
	spin_lock(&run->lock);
	/* The runs the shares added meanwhile, after the kept ones. */
	memmove(&run->frees[k], &run->frees[from + n],
		(run->nfrees - from - n) * sizeof(*run->frees));
	run->nfrees -= from + n - k;
	run->nplain -= done;
	run->free_pages -= min(pages, run->free_pages);
	list_splice_tail_init(&e->t_dirty, &run->dirty);
	run->nblocks -= n - (e->t_nblocks - dirtied);
	run->ndata += e->t_ndata;
	e->t_ndata = 0;
	run->frees_busy = false;
	spin_unlock(&run->lock);
	*kept = k;
	return done;
}

/* Passes of vsmfs_trans_frees_early() over runs that joined during the last. */
#define VSMFS_FREES_EARLY_PASSES	3

/**
 * vsmfs_trans_frees_early() - free the runs the running transaction holds
 *	before its commit keeps the handles out
 * @sbi: the file system, whose running transaction is about to commit
 *
 * The runs that have joined s_run.frees when the commit takes
 * s_trans_mutex, those of its own CPU's share, and those the shared
 * handles that end meanwhile bring (vsmfs_shared_leave(): a share's runs
 * join s_run while a commit closes the transaction), over a few passes
 * (vsmfs_trans_frees_pass()), are freed in DRAM
 * here, as vsmfs_trans_apply_frees() frees them (the allocator's
 * free_run(): bits cleared, reservations claimed or ended, pages to the
 * pools' pending maps), while the shared handles still run: the commit
 * then keeps them out only for the runs that join after (the CPUs'
 * shares it folds). The whole scratch runs a
 * commit may keep until it is durable stay in the array for it, in their
 * order. Only the page bitmap changes, which no shared handle touches
 * (its blocks change only under s_trans_mutex, as do free space and the
 * pools' VSPs), and the blocks it dirties join the running transaction
 * (s_run.dirty), each within a block of room taken from s_run.nblocks
 * under s_run.lock first, so that no share's batch takes it meanwhile.
 * The entries read are those the array holds now: shares append after
 * them under s_run.lock, and the array does not move while the commit
 * reads it (s_run.frees_busy, vsmfs_run_frees_grow()).
 *
 * Ordering: as for the runs the commit frees with the handles out. The
 * freed pages are taken again only once the commit is durable
 * (s_run.freed_early gives t_freed, hence s_freeing, to the commit, which
 * holds s_trans_mutex, which every allocation from the bitmap takes,
 * from here to its count; pooled pages ripen only then), and the bitmap
 * blocks are written by this commit, as the running transaction's. Runs
 * freed here are always committed: the runs come from handles that ended
 * (s_run.handles), so the commit that follows finds its transaction not
 * empty.
 *
 * Context: s_trans_mutex held by the commit of @sbi's running
 * transaction, before it waits for the shared handles; process context.
 */
void vsmfs_trans_frees_early(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;
	struct vsmfs_trans e = { .t_sbi = sbi };
	unsigned int pass, kept = 0, done = 0, n, nofs;

	lockdep_assert_held(&sbi->s_trans_mutex);
	/* This CPU's runs join first; other CPUs' as their handles end. */
	vsmfs_cpu_share_flush_here(sbi);
	INIT_LIST_HEAD(&e.t_dirty);
	nofs = memalloc_nofs_save();
	for (pass = 0; pass < VSMFS_FREES_EARLY_PASSES; pass++) {
		n = vsmfs_trans_frees_pass(sbi, &e, &kept);
		if (!n)
			break;
		done += n;
	}
	memalloc_nofs_restore(nofs);
	if (!done)
		return;
	run->freed_early = true;
	if (e.t_overflow)
		run->early_overflow = true;
	vsmfs_stat_add(sbi, trans_frees_early, done);
}

/*
 * The commit of @t is durable: the scratch runs vsmfs_trans_apply_frees()
 * kept go back now, to their pools or to the bitmap. Ordering: the old
 * frames they hold are unreachable on PM since the commit's fence, so the
 * pages may be written again from here on; this CPU's and every other
 * CPU's translations of them as they were before the commit swapped them
 * go first (the batch's shootdown), as vsmfs_trans_apply_frees() drops
 * them before the pages can ripen in a pool. A commit that was dropped or
 * failed leaves them reserved, in DRAM only, until unmount: the old frames
 * may still be what PM maps (vsmfs_trans_spare() only drops the entries).
 */
static void vsmfs_trans_free_late(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_swap sw;
	unsigned int i;

	vsmfs_swap_init(sbi, &sw);
	for (i = 0; i < t->t_nlate; i++)
		vsmfs_swap_add(&sw, t->t_late[i].lpn, t->t_late[i].count);
	vsmfs_swap_flush(&sw);
	sbi->s_trans_aops->free_late(sbi, t->t_late, t->t_nlate);
	t->t_nlate = 0;
}

/*
 * Make a spare array of runs for the next commit (vsmfs_trans_take_spare())
 * if there is none; outside every lock of the transactions, without
 * recursion into the file system.
 */
static void vsmfs_run_make_spare(struct vsmfs_running *run)
{
	/* Read without the lock: a hint, checked again under it. */
	unsigned int n = READ_ONCE(run->maxfrees), nofs;
	struct vsmfs_free_run *f;

	if (READ_ONCE(run->spare) || !n)
		return;
	nofs = memalloc_nofs_save();
	f = kvmalloc_array(n, sizeof(*f), GFP_KERNEL | __GFP_NOWARN);
	memalloc_nofs_restore(nofs);
	if (f)
		vsmfs_run_put_spare(run, f, n);
}

/*
 * After a commit: the array of @t's late runs, emptied, becomes the spare
 * of s_run if there is none, or one is made for the next commit if this
 * one had none to take.
 */
static void vsmfs_trans_spare(struct vsmfs_trans *t)
{
	struct vsmfs_running *run = &t->t_sbi->s_run;
	struct vsmfs_free_run *f = t->t_late;

	t->t_late = NULL;
	t->t_nlate = 0;
	if (f)
		vsmfs_run_put_spare(run, f, t->t_late_max);
	else
		vsmfs_run_make_spare(run);
}

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

/*
 * Append to s_run.frees, which has room, or join the last run there if
 * it is one of handle @t's (an abort cuts the array back to @t_nfrees).
 */
static void vsmfs_run_add_free(struct vsmfs_trans *t, u64 lpn, u64 count, bool scratch,
			       u64 resv)
{
	struct vsmfs_running *run = &t->t_sbi->s_run;
	struct vsmfs_free_run *f = &run->frees[run->nfrees];

	run->free_pages += vsmfs_free_run_fill(t->t_sbi, f, lpn, count, scratch, resv);
	if (run->nfrees > t->t_nfrees) {
		struct vsmfs_free_run *g = f - 1;
		bool plain = vsmfs_free_run_plain(g);

		if (vsmfs_free_run_join(g, f)) {
			run->nplain += vsmfs_free_run_plain(g) - plain;
			return;
		}
	}
	run->nfrees++;
	run->nplain += vsmfs_free_run_plain(f);
}

/**
 * vsmfs_trans_defer() - add a run to those the running transaction frees
 * @t: the handle
 * @lpn: first page
 * @count: pages, within one VSP
 * @scratch: the run was reserved (vsmfs_reserve_pages()), not allocated
 * @resv: pages of the reservation from @lpn it ends (vsmfs_resv_end()), or 0
 *
 * Context: inside the handle.
 * Return: 0, -ENOMEM, or -EAGAIN in a shared metadata handle that has
 * as many runs as it reserved entries for (vsmfs_trans_begin_shared()).
 */
int vsmfs_trans_defer(struct vsmfs_trans *t, u64 lpn, u64 count, bool scratch, u64 resv)
{
	struct vsmfs_running *run = &t->t_sbi->s_run;
	struct vsmfs_undo_log *u = t->t_log;

	if (vsmfs_fault(VSMFS_FAULT_FREE_RUN))
		return -ENOMEM;
	/*
	 * A shared metadata handle keeps its runs in its log, in the entries
	 * it reserved as it began; they join the running transaction as it
	 * ends (vsmfs_trans_end_shared()), and an abort drops them.
	 */
	if (t->t_shared) {
		if (u->nfree == u->maxfree)
			return -EAGAIN;
		vsmfs_free_run_fill(t->t_sbi, &u->free[u->nfree++], lpn, count, scratch, resv);
		return 0;
	}
	/* The entries the CPUs' shares keep stay theirs. */
	if (run->nfrees + run->shared_frees >= run->maxfrees) {
		unsigned int n = max(16U, 2 * run->maxfrees);
		struct vsmfs_free_run *f = NULL;

		if (!vsmfs_fault(VSMFS_FAULT_SHADOW_ALLOC))
			f = kvrealloc(run->frees, run->maxfrees * sizeof(*f), n * sizeof(*f),
				      GFP_NOFS);
		if (!f)
			return -ENOMEM;
		run->frees = f;
		run->maxfrees = n;
	}
	vsmfs_run_add_free(t, lpn, count, scratch, resv);
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
	/* Waiters mostly spin (vsmfs_spin_until()); the cmpxchg orders the count first. */
	if (wq_has_sleeper(&sbi->s_commit_wq))
		wake_up_all(&sbi->s_commit_wq);
}

/* Forget the runs the running transaction would free, and its reservations. */
static void vsmfs_trans_drop_frees(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_running *run = &sbi->s_run;

	run->nfrees = 0;
	run->nplain = 0;
	run->free_pages = 0;
}

/*
 * Nothing of transaction @tid was written (it was empty, or dropped): it
 * has finished once @tid - 1 has, which a parallel commit may still be
 * writing. Waiters for @tid - 1 must not be woken before that.
 */
static void vsmfs_trans_done_unwritten(struct vsmfs_sb_info *sbi, u64 tid)
{
	if (!vsmfs_spin_until(atomic64_read(&sbi->s_commit_tid) >= (s64)tid - 1,
			      VSMFS_COMMIT_SPIN_NS))
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
		vsmfs_mblk_fc_forget(mb);
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
	u64 tid = run->tid, t0 = run->closing_ns, early = run->early_ns;
	bool empty;
	int err;

	vsmfs_fault_wait(VSMFS_FAULT_COMMIT_WAIT);
	if (vsmfs_trans_changed(t))
		run->handles++;
	vsmfs_trans_apply_frees(t);
	run->early_ns = 0;
	/* A block dirtied before the handles were kept out overflowed it. */
	if (run->early_overflow) {
		run->early_overflow = false;
		t->t_overflow = true;
		if (!t->t_error)
			t->t_error = -EFSCORRUPTED;
	}
	vsmfs_trans_handle_done(t);
	if (run->handles) {
		vsmfs_stat_add(sbi, trans_handles, run->handles);
		this_cpu_inc(sbi->s_stats->v[vsmfs_commit_stat[cause]]);
	}
	run->handles = 0;
	/* Read without the mutex by vsmfs_trans_commit_tid(). */
	WRITE_ONCE(run->tid, tid + 1);
	/* Its blocks are the handle's now: the next one starts empty. */
	run->nblocks = 0;
	run->ndata = 0;
	if (unlikely(READ_ONCE(sbi->s_error_ro) || t->t_overflow) && t->t_nblocks) {
		vsmfs_trans_drop_running(t);
		vsmfs_trans_park(t);
		vsmfs_trans_lost(sbi, tid);
		vsmfs_trans_done_unwritten(sbi, tid);
		vsmfs_trans_spare(t);
		return -EROFS;
	}
	empty = !t->t_nblocks;
	err = vsmfs_journal_commit_trans(t, tid);
	if (empty)
		vsmfs_trans_done_unwritten(sbi, tid);
	else
		vsmfs_trans_committed(sbi, tid);
	if (t->t_nlate && !err && !vsmfs_trans_tid_lost(sbi, tid))
		vsmfs_trans_free_late(t);
	vsmfs_trans_spare(t);
	/* From s_trans_mutex taken to durable (commit_ns). */
	if (t0)
		vsmfs_stat_add(sbi, commit_ns, ktime_get_ns() - t0 + early);
	return err;
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
	struct vsmfs_running *run = &sbi->s_run;
	struct vsmfs_trans t;
	u64 wait;

	if (!sbi->s_journal)
		return 0;
again:
	if ((s64)tid <= atomic64_read(&sbi->s_commit_tid))
		goto done;
	/*
	 * Being closed by a commit that holds the mutex: that commit writes
	 * every handle of @tid that ended (the task's own among them), or,
	 * if none did, gives @tid back and clears the mark; either wakes
	 * this task. It is waited for without queueing on the mutex, where
	 * this task would only delay the next commit.
	 */
	if (READ_ONCE(run->closing) == tid) {
		vsmfs_stat_inc(sbi, trans_commit_joined);
		if (!vsmfs_spin_until(atomic64_read(&sbi->s_commit_tid) >= (s64)tid ||
				      READ_ONCE(run->closing) != tid, VSMFS_COMMIT_SPIN_NS))
			wait_event(sbi->s_commit_wq,
				   atomic64_read(&sbi->s_commit_tid) >= (s64)tid ||
				   READ_ONCE(run->closing) != tid);
		goto again;
	}
	/*
	 * Closed already (a commit moved s_run.tid past it; it only grows):
	 * that commit is waited for without the mutex, and without stopping
	 * the shared handles that run meanwhile. A value read without the
	 * mutex that is not past @tid may be stale: the mutex settles it.
	 */
	wait = tid;
	if (READ_ONCE(run->tid) <= tid) {
		/*
		 * What the commit would allocate while it keeps every handle
		 * out, made before: a spare array of runs, room for the notes
		 * of its blocks (those folded, and those the CPUs' shares
		 * hold now).
		 */
		vsmfs_run_make_spare(run);
		vsmfs_journal_commit_prepare(sbi, READ_ONCE(run->nblocks) +
					     vsmfs_cpu_share_blocks(sbi));
		if (vsmfs_trans_lock_tid(sbi, &t, tid)) {
			if (run->handles)
				return vsmfs_trans_commit_all(&t, cause);
			/* No handle of it has ended: the one before it is waited for. */
			wait = tid - 1;
			WRITE_ONCE(run->closing, 0);
			run->early_ns = 0;
			vsmfs_trans_park(&t);
			/* Those that saw the mark look again (the wait's barriers order it). */
			if (wq_has_sleeper(&sbi->s_commit_wq))
				wake_up_all(&sbi->s_commit_wq);
		}
	}
	/* A commit in flight ends soon: spin a little before sleeping. */
	if (!vsmfs_spin_until(atomic64_read(&sbi->s_commit_tid) >= (s64)wait,
			      VSMFS_COMMIT_SPIN_NS))
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
 * __vsmfs_trans_sync_inode() - make every change of @inode durable
 * @inode: the inode
 * @cause: VSMFS_COMMIT_*, for the counters
 *
 * By the commit of the transaction that holds its last change (the caller
 * found it may not be durable, vsmfs_trans_synced()).
 *
 * Return: 0 or a negative errno from the commit.
 */
int __vsmfs_trans_sync_inode(struct inode *inode, unsigned int cause)
{
	return vsmfs_trans_commit_tid(VSMFS_SB(inode->i_sb), READ_ONCE(VSMFS_I(inode)->i_tid),
				      cause);
}

static void vsmfs_trans_commit_work(struct work_struct *work)
{
	struct vsmfs_sb_info *sbi = container_of(to_delayed_work(work), struct vsmfs_sb_info,
						 s_commit_work);

	vsmfs_trans_sync(sbi, VSMFS_COMMIT_TIMER);
}

/* A transaction that freed pages has committed: they may be taken. */
static void vsmfs_trans_freed(struct vsmfs_sb_info *sbi, bool freed)
{
	/* Full barrier: the commit's stores precede the count (alloc.c). */
	if (freed && atomic_dec_and_test(&sbi->s_freeing))
		wake_up_var(&sbi->s_freeing);
}

/* The blocks of the handle committing are placed or frozen. */
static void vsmfs_jclient_release(struct vsmfs_trans *t)
{
	vsmfs_trans_release(t);
}

/* The committing handle hands s_trans_mutex over. */
static void vsmfs_jclient_unlock(struct vsmfs_trans *t)
{
	vsmfs_trans_unlock(t);
}

/* What a commit or a checkpoint asks of this layer (journal.h, jcommit.c). */
static const struct vsmfs_jclient_ops vsmfs_trans_jclient = {
	.sync		= vsmfs_trans_sync,
	.release	= vsmfs_jclient_release,
	.unlock		= vsmfs_jclient_unlock,
	.freed		= vsmfs_trans_freed,
};

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
	unsigned int cpu;

	sbi->s_jclient = &vsmfs_trans_jclient;
	memset(run, 0, sizeof(*run));
	memset(&sbi->s_undo, 0, sizeof(sbi->s_undo));
	INIT_LIST_HEAD(&run->dirty);
	spin_lock_init(&run->lock);
	run->tid = 1;
	atomic64_set(&sbi->s_commit_tid, 0);
	atomic64_set(&sbi->s_lost_tid, 0);
	atomic64_set(&sbi->s_fc_seq, 0);
	atomic64_set(&sbi->s_fc_evict_tid, 0);
	init_waitqueue_head(&sbi->s_commit_wq);
	INIT_DELAYED_WORK(&sbi->s_commit_work, vsmfs_trans_commit_work);
	init_waitqueue_head(&sbi->s_handles_sem.writer);
	atomic_set(&sbi->s_turn_next, 0);
	atomic_set(&sbi->s_turn_served, 0);
	init_waitqueue_head(&sbi->s_turn_wq);
	lockdep_init_map(&sbi->s_handles_sem.dep_map, "vsmfs_handles", &vsmfs_handles_key, 0);
	sbi->s_handles_sem.readers = alloc_percpu(int);
	sbi->s_cpu_share = alloc_percpu(struct vsmfs_cpu_share);
	if (!sbi->s_cpu_share)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		INIT_LIST_HEAD(&per_cpu_ptr(sbi->s_cpu_share, cpu)->dirty);
	return sbi->s_handles_sem.readers ? 0 : -ENOMEM;
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
	unsigned int cpu;

	cancel_delayed_work_sync(&sbi->s_commit_work);
	/*
	 * Unmount committed the running transaction, unless an error made
	 * the file system read-only first (or a failed mount never had
	 * one): what it holds is dropped, PM keeps the last commit.
	 */
	if (sbi->s_cpu_share) {
		/* Blocks shared handles added since the last fold: with the others. */
		for_each_possible_cpu(cpu) {
			struct vsmfs_cpu_share *res = per_cpu_ptr(sbi->s_cpu_share, cpu);

			list_splice_init(&res->dirty, &sbi->s_run.dirty);
			sbi->s_run.nblocks += res->nblocks;
			res->nblocks = 0;
			res->ndata = 0;
		}
	}
	WARN_ON_ONCE(sbi->s_run.nblocks && !READ_ONCE(sbi->s_error_ro));
	list_for_each_entry_safe(mb, tmp, &sbi->s_run.dirty, m_dirty) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
	}
	sbi->s_run.nblocks = 0;
	sbi->s_run.ndata = 0;
	vsmfs_trans_drop_frees(sbi);
	if (sbi->s_pools) {
		for_each_possible_cpu(cpu) {
			struct vsmfs_page_pool *pool = per_cpu_ptr(sbi->s_pools, cpu);

			kfree(pool->ulog);
			pool->ulog = NULL;
		}
	}
	kvfree(sbi->s_run.frees);
	sbi->s_run.frees = NULL;
	kvfree(sbi->s_run.spare);
	sbi->s_run.spare = NULL;
	/* Their runs, if any, were dropped with the running transaction's. */
	free_percpu(sbi->s_cpu_share);
	sbi->s_cpu_share = NULL;
	free_percpu(sbi->s_handles_sem.readers);
	sbi->s_handles_sem.readers = NULL;
	while (sbi->s_undo.npool)
		kfree(sbi->s_undo.pool[--sbi->s_undo.npool]);
}
