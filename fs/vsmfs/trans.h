/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the transaction layer share among themselves: exclusive
 * handles and their undo log (trans.c), shared handles and the per-CPU
 * shares (trans_shared.c), the running transaction and its commit
 * (trans_commit.c). The rest of the module uses the calls in vsmfs.h.
 */
#ifndef _VSMFS_TRANS_H
#define _VSMFS_TRANS_H

#include "vsmfs.h"
#include "mcache.h"
#include "journal.h"
#include "vsp.h"

/*
 * In a run of an inode's fast record (i_fc_runs): pages the inode took,
 * whose bits the record sets; pages it freed, whose bits it clears.
 */
#define VSMFS_FC_RUN_CLAIM	(1ULL << 47)
#define VSMFS_FC_RUN_FREE	(1ULL << 46)

/* Scratch runs a CPU keeps for the running transaction, and their pages. */
#define VSMFS_CPU_SHARE_RUNS	8
#define VSMFS_CPU_SHARE_PAGES	256

/*
 * struct vsmfs_cpu_share - a CPU's share of the running transaction, from which
 * shared handles begin and into which they end without s_run.lock
 * (trans_shared.c, "Per-CPU shares"); used by the tasks on its CPU with
 * preemption disabled, and with s_handles_sem held for writing
 * @credits: blocks reserved in s_run.shared_credits, for no handle yet
 * @frees: entries of s_run.frees reserved in s_run.shared_frees, for no
 *	handle or run yet
 * @handles: shared handles ended here, not yet counted in s_run.handles
 * @counted_tid: a transaction this share found with handles counted in
 *	s_run.handles: while it runs, a handle ending here need not read
 *	s_run.handles (a line the other shares write) to know
 * @nruns: scratch runs ended here, not yet in s_run.frees, each holding
 *	one of the entries reserved
 * @pages: their frames
 * @runs: those runs
 * @dirty: blocks the shared handles on this CPU added to the running
 *	transaction, not yet on s_run.dirty, each with a credit still counted
 *	in s_run.shared_credits
 * @nblocks: how many
 * @ndata: how many of them lie in the data area
 */
struct vsmfs_cpu_share {
	unsigned int		credits;
	unsigned int		frees;
	unsigned int		handles;
	u64			counted_tid;
	unsigned int		nruns;
	u64			pages;
	struct vsmfs_free_run	runs[VSMFS_CPU_SHARE_RUNS];
	struct list_head	dirty;
	unsigned int		nblocks;
	unsigned int		ndata;
};

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
 * Copy @n 8-byte words from @src to @dst, which do not overlap: the few
 * words of an inode's slot or of a saved part of a block, for which a
 * string move costs more to start than the loop does in all.
 */
static __always_inline void vsmfs_copy_words(void *dst, const void *src, unsigned int n)
{
	u64 *d = dst;
	const u64 *s = src;

	while (n--)
		*d++ = *s++;
}

/*
 * Free space runs short while pages wait in the running transaction to be
 * freed: its commit gives them back. The pages CPUs' shares hold, not yet
 * counted (VSMFS_CPU_SHARE_PAGES each at most), are not. Exact under
 * s_trans_mutex; a hint beside shared handles.
 */
static inline bool vsmfs_trans_space_short(struct vsmfs_sb_info *sbi)
{
	u64 waiting = READ_ONCE(sbi->s_run.free_pages);

	return waiting &&
	       READ_ONCE(sbi->s_free_pages) < (sbi->s_layout.data_pages >> 4) + waiting;
}

/*
 * Hold times of the file-system-wide locks are sampled: of the holds of
 * one kind begun on a CPU, numbered by @tick, one in VSMFS_HOLD_SAMPLE is
 * timed and stands for all of them (two clock reads per hold were a
 * fiftieth of an append with its fsync, of a 4 KiB overwrite). A clock
 * that is one across CPUs, as the holder may move.
 * Return: the time for a hold to time, else 0.
 */
static inline u64 vsmfs_hold_clock(u64 tick)
{
	return tick & (VSMFS_HOLD_SAMPLE - 1) ? 0 : ktime_get_ns();
}

/* Nanoseconds a hold timed from @t0 (vsmfs_hold_clock()) stands for, or 0. */
static inline u64 vsmfs_hold_ns(u64 t0)
{
	return t0 ? (ktime_get_ns() - t0) * VSMFS_HOLD_SAMPLE : 0;
}

/* The start of a hold of s_trans_mutex, for journal_lock_hold_ns. */
static inline u64 vsmfs_hold_start(struct vsmfs_sb_info *sbi)
{
	return vsmfs_hold_clock(this_cpu_inc_return(sbi->s_stats->hold_tick));
}

/* The end of a hold begun at @t0, a vsmfs_hold_start() value. */
static inline void vsmfs_hold_end(struct vsmfs_sb_info *sbi, u64 t0)
{
	if (t0)
		vsmfs_stat_add(sbi, journal_lock_hold_ns, vsmfs_hold_ns(t0));
}

/* Whether a ticket taken is not yet served (see "Turns"). */
static __always_inline bool vsmfs_turn_busy(struct vsmfs_sb_info *sbi)
{
	return atomic_read(&sbi->s_turn_next) != atomic_read(&sbi->s_turn_served);
}

/* trans.c */
void vsmfs_trans_setup(struct vsmfs_trans *t, struct vsmfs_sb_info *sbi, bool vsp);
void vsmfs_trans_lock(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, bool vsp);
bool vsmfs_trans_lock_tid(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u64 tid);
void vsmfs_trans_park(struct vsmfs_trans *t);
void vsmfs_turn_wait(struct vsmfs_sb_info *sbi);
bool vsmfs_trans_changed(struct vsmfs_trans *t);
void vsmfs_trans_handle_done(struct vsmfs_trans *t);
void vsmfs_trans_reload_inodes(struct vsmfs_trans *t);
void vsmfs_trans_put_words(struct vsmfs_trans *t, struct vsmfs_swap *sw, struct vsmfs_mblk *mb,
			   unsigned int off, const void *old, unsigned int len);
void vsmfs_trans_discard_new(struct vsmfs_trans *t);
void vsmfs_trans_release(struct vsmfs_trans *t);

/* trans_shared.c */
bool vsmfs_handles_sem_idle(struct vsmfs_sb_info *sbi);
void vsmfs_cpu_share_fold(struct vsmfs_sb_info *sbi);
void vsmfs_cpu_share_flush_here(struct vsmfs_sb_info *sbi);
unsigned int vsmfs_cpu_share_blocks(struct vsmfs_sb_info *sbi);
void vsmfs_cpu_share_reclaim(struct vsmfs_sb_info *sbi);
bool vsmfs_cpu_share_add_block(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb, bool credited);
void vsmfs_trans_end_shared(struct vsmfs_trans *t, bool changed);
void vsmfs_trans_abort_shared(struct vsmfs_trans *t);

/* Runs to free at commit (trans.c, trans_shared.c, trans_commit.c). */
/*
 * vsmfs_free_run_fill() - fill in a run to free at commit
 * @sbi: the file system
 * @f: the run
 * @lpn: its first logical page
 * @count: its pages
 * @scratch: the run was reserved, not allocated
 * @resv: pages of the reservation from @lpn it ends, or 0
 *
 * Return: the frames of its pages (free space counts frames).
 */
static inline u64 vsmfs_free_run_fill(struct vsmfs_sb_info *sbi, struct vsmfs_free_run *f,
				      u64 lpn, u64 count, bool scratch, u64 resv)
{
	/* Runs stay within one VSP (struct vsmfs_free_run). */
	BUILD_BUG_ON(VSMFS_VSP_PAGES > U16_MAX);
	WARN_ON_ONCE(count > VSMFS_VSP_PAGES || resv > VSMFS_VSP_PAGES);
	f->lpn = lpn;
	f->count = count;
	/* Free space counts frames: pages without one free none. */
	f->frames = vsmfs_frames_in(sbi, lpn, count);
	f->scratch = scratch;
	f->resv = resv;
	return f->frames;
}

/*
 * What a run to free at commit is, for vsmfs_free_run_join(): pages freed
 * outright, the claim of a reservation (its pages stay in use, none is
 * freed), a whole scratch run (a reservation whose pages took old
 * frames), or another kind, which joins no run.
 */
enum { VSMFS_RUN_FREED, VSMFS_RUN_CLAIM, VSMFS_RUN_SCRATCH, VSMFS_RUN_OTHER };

static inline unsigned int vsmfs_free_run_kind(const struct vsmfs_free_run *f)
{
	if (f->scratch)
		return f->resv && f->resv == f->count ? VSMFS_RUN_SCRATCH : VSMFS_RUN_OTHER;
	if (!f->resv)
		return VSMFS_RUN_FREED;
	return f->count ? VSMFS_RUN_OTHER : VSMFS_RUN_CLAIM;
}

/* Whether @f is not a whole scratch run, which a commit may free late. */
static inline bool vsmfs_free_run_plain(const struct vsmfs_free_run *f)
{
	return vsmfs_free_run_kind(f) != VSMFS_RUN_SCRATCH || f->frames != f->count;
}

/*
 * vsmfs_free_run_join() - make one run of two that meet
 * @g: a run to free at commit, which grows
 * @f: another, of a handle that cannot be aborted after @g's
 *
 * Runs of one kind (vsmfs_free_run_kind()) in the same VSP that meet end
 * at commit with one change over their pages (vsmfs_alloc_free_run()),
 * which over both is the change over each: a CPU's pool hands out the
 * pages of a refill one after the other, so appends claim, overwrites
 * give back, and a file truncated page by page or the files of a
 * directory unlinked in the order they were written free, runs that
 * meet, and the commit takes one entry where it would take one per page.
 *
 * Return: whether @f is now part of @g.
 */
static inline bool vsmfs_free_run_join(struct vsmfs_free_run *g,
				       const struct vsmfs_free_run *f)
{
	unsigned int kind = vsmfs_free_run_kind(f);

	/* A claim spans its reservation, the others their pages. */
	if (kind == VSMFS_RUN_OTHER || kind != vsmfs_free_run_kind(g) ||
	    f->lpn / VSMFS_VSP_PAGES != g->lpn / VSMFS_VSP_PAGES ||
	    (f->lpn + max(f->count, f->resv) != g->lpn &&
	     g->lpn + max(g->count, g->resv) != f->lpn))
		return false;
	g->lpn = min(g->lpn, f->lpn);
	g->count += f->count;
	g->resv += f->resv;
	g->frames += f->frames;
	return true;
}

/* trans_commit.c */
void vsmfs_trans_frees_early(struct vsmfs_sb_info *sbi);

/* trans.c, trans_shared.c, trans_commit.c */
int vsmfs_trans_init(struct vsmfs_sb_info *sbi);
u64 vsmfs_trans_waiting_pages(struct vsmfs_sb_info *sbi);
void vsmfs_trans_stop(struct vsmfs_sb_info *sbi);
void vsmfs_trans_destroy(struct vsmfs_sb_info *sbi);
void vsmfs_trans_begin(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t);
int vsmfs_trans_begin_shared(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits,
			     unsigned int frees);
int vsmfs_trans_fresh_block(struct vsmfs_trans *t, struct vsmfs_mblk *mb);

/*
 * Note that @t made metadata block @mb of a page that was free at the last
 * commit (zeroed): nothing that commit left names the page, so the commit
 * of @t may write the block home in place (jcommit.c, "Home writes").
 * Inside the handle, which keeps s_run.tid as it is.
 */
static inline void vsmfs_trans_new_block(struct vsmfs_trans *t, struct vsmfs_mblk *mb)
{
	mb->m_newtid = t->t_sbi->s_run.tid;
}

void vsmfs_trans_begin_credits(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits);
void vsmfs_trans_begin_meta(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits);
void vsmfs_trans_unlock(struct vsmfs_trans *t);
void vsmfs_trans_dirty(struct vsmfs_trans *t, struct vsmfs_mblk *mb);
void vsmfs_trans_dirty_commit(struct vsmfs_trans *t, struct vsmfs_mblk *mb);
int vsmfs_trans_get_write_access(struct vsmfs_trans *t, struct vsmfs_mblk *mb);
int vsmfs_trans_get_write_access_range(struct vsmfs_trans *t, struct vsmfs_mblk *mb,
				       unsigned int off, unsigned int len);
void vsmfs_trans_track(struct vsmfs_trans *t, struct inode *inode, bool entries);
void vsmfs_trans_note_inode(struct vsmfs_trans *t, struct inode *inode);
int vsmfs_trans_defer_free(struct vsmfs_trans *t, u64 lpn, u64 count, bool scratch);
int vsmfs_trans_defer(struct vsmfs_trans *t, u64 lpn, u64 count, bool scratch, u64 resv);
void vsmfs_journal_forget(struct vsmfs_trans *t, u64 lpn, u64 count);
int vsmfs_trans_commit(struct vsmfs_trans *t);
int vsmfs_trans_commit_all(struct vsmfs_trans *t, unsigned int cause);
void vsmfs_trans_abort(struct vsmfs_trans *t);
void vsmfs_trans_fail(struct vsmfs_trans *t, int err);
int vsmfs_trans_end(struct vsmfs_trans *t, int err);
int vsmfs_trans_commit_tid(struct vsmfs_sb_info *sbi, u64 tid, unsigned int cause);
int vsmfs_trans_sync(struct vsmfs_sb_info *sbi, unsigned int cause);
int __vsmfs_trans_sync_inode(struct inode *inode, unsigned int cause);

/**
 * vsmfs_trans_synced() - whether every change of an inode is durable
 * @inode: the inode
 *
 * A few loads: the inode's last change is committed already, or a fast
 * record made it durable (fcommit.c), on a file system that lost no
 * transaction (an fsync of a file nothing changed since its last).
 * s_lost_tid is set before s_commit_tid moves past a lost transaction
 * (vsmfs_trans_commit_tid()): read after it.
 *
 * Return: true if nothing is left to make durable.
 */
static inline bool vsmfs_trans_synced(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	s64 tid = READ_ONCE(VSMFS_I(inode)->i_tid);

	if (tid <= atomic64_read(&sbi->s_commit_tid) ||
	    tid == (s64)READ_ONCE(VSMFS_I(inode)->i_fc_done)) {
		/* s_commit_tid before s_lost_tid: a drop stores them the other way. */
		smp_rmb();
		return !atomic64_read(&sbi->s_lost_tid);
	}
	return false;
}

/**
 * vsmfs_trans_max_blocks() - most blocks one transaction may dirty
 * @sbi: the file system
 *
 * A commit needs a free journal block for each dirty block, and a
 * checkpoint empties the journal for it: the limit is the number of
 * journal blocks. Operations that may dirty more split their work into
 * several handles (vsmfs_trans_room()).
 *
 * Return: the number of journal blocks.
 */
static inline u32 vsmfs_trans_max_blocks(const struct vsmfs_sb_info *sbi)
{
	return sbi->s_trans_max;
}

u32 vsmfs_trans_room(struct vsmfs_trans *t);
int vsmfs_whandle_begin(struct vsmfs_sb_info *sbi, struct vsmfs_whandle *h, u32 credits,
			unsigned int frees);
int __vsmfs_whandle_dirty(struct vsmfs_whandle *h, struct vsmfs_mblk *mb);

/*
 * Add @mb to the running transaction in shared handle @h, before the handle
 * changes it, unless it is there already (__vsmfs_whandle_dirty()).
 */
static inline int vsmfs_whandle_dirty(struct vsmfs_whandle *h, struct vsmfs_mblk *mb)
{
	vsmfs_mblk_freeze(h->h_sbi, mb);
	/* Cleared only by a commit, which no shared handle runs beside. */
	if (READ_ONCE(mb->m_is_dirty))
		return 0;
	return __vsmfs_whandle_dirty(h, mb);
}

void vsmfs_whandle_defer_resv(struct vsmfs_whandle *h, const struct vsmfs_resv *r);
void vsmfs_whandle_note_inode(struct vsmfs_whandle *h, struct inode *inode);
void vsmfs_whandle_end(struct vsmfs_whandle *h);
void vsmfs_handles_enter_slow(struct vsmfs_sb_info *sbi, int ends);

/* Whether handles may end without committing, so beside each other. */
static inline bool vsmfs_shared_ok(struct vsmfs_sb_info *sbi)
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
static __always_inline bool vsmfs_handles_try(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_handles_sem *hs = &sbi->s_handles_sem;
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

/* Take s_handles_sem shared; inlined into each handle's begin and vsmfs_trans_hold(). */
static __always_inline void vsmfs_handles_enter(struct vsmfs_sb_info *sbi)
{
	int ends = atomic_read(&sbi->s_excl_ends);

	/* Read the count first: pairs with the unlock's set, then increment. */
	smp_rmb();
	if (unlikely(!vsmfs_handles_try(sbi)))
		vsmfs_handles_enter_slow(sbi, ends);
	rwsem_acquire_read(&sbi->s_handles_sem.dep_map, 0, 0, _RET_IP_);
}

/* Leave s_handles_sem as a reader, and wake a writer that waits for it. */
static __always_inline void vsmfs_handles_exit(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_handles_sem *hs = &sbi->s_handles_sem;

	rwsem_release(&hs->dep_map, _RET_IP_);
	/*
	 * A CPU's count is changed only by tasks on that CPU, in process
	 * context, with preemption disabled: a load and a store do what
	 * this_cpu_dec() would.
	 */
	preempt_disable();
	/* The handle's loads and stores before the count: pairs with vsmfs_handles_sem_idle(). */
	smp_store_release(this_cpu_ptr(hs->readers), __this_cpu_read(*hs->readers) - 1);
	preempt_enable();
	/* The count before the mark: a writer that missed it is woken. */
	smp_mb();
	if (unlikely(atomic_read(&sbi->s_excl)))
		wake_up(&hs->writer);
}

/**
 * vsmfs_trans_hold() - keep the running transaction from committing
 * @sbi: the file system
 *
 * For a task that reads what the running transaction changed and writes
 * it elsewhere (a fast commit, fcommit.c): s_handles_sem shared, as a
 * shared handle takes it, with no room reserved and nothing to end. The
 * transaction neither becomes one to commit nor arms its timer.
 *
 * Context: process context; holds s_handles_sem shared until
 * vsmfs_trans_unhold().
 * Return: 0, or -EAGAIN (nothing taken) if handles do not run beside
 * each other now (the caller commits instead).
 */
static inline int vsmfs_trans_hold(struct vsmfs_sb_info *sbi)
{
	if (!vsmfs_shared_ok(sbi))
		return -EAGAIN;
	vsmfs_handles_enter(sbi);
	return 0;
}

/**
 * vsmfs_trans_unhold() - let the running transaction commit again
 * @sbi: the file system, held by vsmfs_trans_hold()
 *
 * Context: releases s_handles_sem.
 */
static inline void vsmfs_trans_unhold(struct vsmfs_sb_info *sbi)
{
	vsmfs_handles_exit(sbi);
}

/*
 * Why an fsync commits instead of writing a fast record (fcommit.c),
 * counted in fc_fallback_<reason> (the same order from VSMFS_FCB_EXCL on):
 * the first five are the ways an inode changes in the running transaction
 * that no record describes (i_fc_bad, trans_fc.c), the rest what the
 * fsync finds.
 */
enum vsmfs_fc_why {
	VSMFS_FCB_OK,		/* a record describes it */
	VSMFS_FCB_EXCL,		/* a handle under s_trans_mutex */
	VSMFS_FCB_OP,		/* a shared handle of a kind records do not carry */
	VSMFS_FCB_FREES,	/* a shared handle that freed pages */
	VSMFS_FCB_CREATE,	/* a create, rename or link that changed more */
	VSMFS_FCB_RUNS,		/* more page table entries than a record holds */
	VSMFS_FCB_DIR,		/* the directory of its create changed otherwise */
	VSMFS_FCB_BUSY,		/* the inode or directory locked, or no hold */
	VSMFS_FCB_COMMIT,	/* a commit in flight or failed; an evicted inode's changes */
	VSMFS_FCB_MOVED,	/* its slot moved (aggregation) */
	VSMFS_FCB_FULL,		/* no room in the area, or too large a record */
};

/**
 * struct vsmfs_fc_gone - an unlink a directory's next record may carry
 * @tid: the transaction of the unlink
 * @gen: the directory's change the unlink was (its i_fc_gen then)
 * @ino: the inode the unlink left with no links
 * @slot: its slot
 * @seq: the order of its part, taken from its records' (i_fc_seq)
 * @mask: the words of its slot in @words
 * @span: the words of the directory block the unlink changed (as
 *	i_fc_span)
 * @words: those words of the slot, as the unlink left them
 *
 * Kept by the directory's in-core inode (i_fc_gone) from its first such
 * unlink on; see vsmfs_trans_fc_unlink().
 */
struct vsmfs_fc_gone {
	u64	tid, ino, seq;
	u32	gen, slot, mask;
	u64	span[2];
	__le64	words[VSMFS_INODE_SIZE / 8];
};

void vsmfs_fc_note(struct vsmfs_inode_info *vi, u64 tid, enum vsmfs_fc_why why);
void vsmfs_trans_fc_settle(struct vsmfs_trans *t);
void vsmfs_trans_fc_create(struct vsmfs_trans *t);

/**
 * vsmfs_fc_map_kept() - whether an i-number keeps its slot of the last commit
 * @sbi: the file system
 * @ino: the i-number
 *
 * A fast record names slots, which recovery finds through the inode map
 * as the last commit left it. Its entry of @ino changed in the running
 * transaction (hot-inode aggregation moved the slot, aggr.c, in a handle
 * that notes no inode) if its word of the map block is among the words
 * the transaction changed (m_cmask, which the commit clears): no record
 * may then name @ino's slot until the transaction commits.
 *
 * Context: the running transaction kept from committing.
 * Return: true if the entry is as the last commit left it.
 */
static inline bool vsmfs_fc_map_kept(struct vsmfs_sb_info *sbi, u64 ino)
{
	struct vsmfs_mblk *map = vsmfs_mblk_get(sbi, sbi->s_layout.imap_start +
						ino / (VSMFS_BLOCK_SIZE / 4));

	if (IS_ERR(map))
		return false;
	/* Not the bits of a commit in flight that has still to take them. */
	vsmfs_mblk_masks_settle(map);
	/* Two 4-byte entries to a mask bit's word. */
	return !test_bit(ino % (VSMFS_BLOCK_SIZE / 4) / 2, (const unsigned long *)map->m_cmask);
}

#endif /* _VSMFS_TRANS_H */
