// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs staged writes, their end step: the short handle that makes the
 * file's what the begin and copy steps (write.c) copied, holding only the
 * inode's locks, into reserved pages or past the end, for two kinds of
 * write: an overwrite inside a file's runs and size (VSMFS_WK_STAGED,
 * vsmfs_staged_end()) and an append past its end (VSMFS_WK_APPEND, the
 * handle of vsmfs_append_grow(); write.c's end step calls it, or sets
 * the size alone). The handle is a shared one beside other writers
 * when it only swaps pages or sets the size and the times, else one under
 * s_trans_mutex.
 *
 * Ordering: the PM store ordering of the staged overwrite is given at
 * vsmfs_staged_begin() in write.c, that of the staged append at
 * vsmfs_append_begin() there, and each helper that writes PM states its
 * own beside its code.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include "vsmfs.h"
#include "ptable.h"
#include "vsp.h"
#include "journal.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "data.h"

static u64 vsmfs_stage_holes(struct vsmfs_sb_info *sbi, const struct vsmfs_stage *st,
			     unsigned int n)
{
	u64 holes = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		holes += st[i].r.count -
			 vsmfs_frames_in(sbi, vsmfs_idx_lpn(st[i].e) + st[i].pg, st[i].r.count);
	return holes;
}

/*
 * The handle of a staged write: each whole run is allocated and switched
 * into the index, the piece's old run freed when the transaction commits;
 * each partial run's frames are swapped with the file's pages, and the
 * run, now behind the old frames, is free once the commit is durable.
 * Return: 0 or a negative errno, with @t to be aborted.
 */
static int vsmfs_stage_switch(struct vsmfs_trans *t, struct inode *inode,
			      struct vsmfs_stage *st, unsigned int n, struct vsmfs_swap *sw)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned int i;
	u64 freed;
	int ret;

	/* The file's holes the write covers take frames (the runs have all). */
	vi->i_pages += vsmfs_stage_holes(t->t_sbi, st, n);
	for (i = 0; i < n; i++) {
		u64 e = st[i].e, lpn = vsmfs_idx_lpn(e);

		if (!st[i].whole) {
			ret = vsmfs_swap_pages(t, sw, lpn + st[i].pg, st[i].r.lpn,
					       st[i].r.count);
			if (!ret)
				ret = vsmfs_trans_defer_resv(t, &st[i].r, false);
			if (ret)
				return ret;
			vsmfs_stat_inc(t->t_sbi, mcow_fine);
			continue;
		}
		ret = vsmfs_resv_claim(t, &st[i].r);
		if (!ret && vi->i_tail_key == st[i].key + 1)
			ret = vsmfs_tail_release(t, inode, &freed);
		if (!ret)
			ret = vsmfs_idx_set(t, inode, st[i].key,
					    vsmfs_idx_make(st[i].r.lpn, st[i].r.count));
		if (!ret)
			ret = vsmfs_free_data_pages(t, lpn, vsmfs_idx_count(e));
		if (!ret)
			ret = vsmfs_trans_defer_resv(t, &st[i].r, true);
		if (ret)
			return ret;
		if (READ_ONCE(t->t_sbi->s_cow_mode) == VSMFS_COW_MULTI)
			vsmfs_stat_inc(t->t_sbi, mcow_coarse);
	}
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return 0;
}

/*
 * (c) of a staged write whose runs all swap pages into their pieces (none
 * replaces a piece whole) and that changes no word of the inode slot but
 * the times (when @now is set: the clock ticked since the file's last
 * change): in a shared handle (trans_shared.c), beside other writes of
 * the kind, with no file-system-wide lock held. The slot's block joins the
 * handle before the first swap, and the times are stored after the last,
 * when nothing can fail. Pages it replaces may be fallocated and unwritten
 * (the first write over a preallocated file): their flag, swapped to the
 * scratch pages, is cleared there, in the same handle. With @size set, the
 * write ends past the file's end, in pages the file keeps there
 * (FALLOC_FL_KEEP_SIZE): the size word is stored with the times. Ordering
 * as vsmfs_stage_switch() in a handle that ends in the running
 * transaction.
 *
 * The handle dirties at most the inode table block of the slot and, for
 * each run, the page table blocks of the file's pages and of the reserved
 * ones: one each, as a run lies in one VSP, whose entries fill one block.
 *
 * Return: 0, -EAGAIN if the write must take a handle of the other kind
 * (nothing done), or another negative errno (swaps undone).
 */
static __always_inline int vsmfs_stage_switch_shared(struct inode *inode,
						     struct vsmfs_stage *st, unsigned int n,
						     const struct timespec64 *now, loff_t size)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	/* Set up by vsmfs_whandle_begin(), vsmfs_swap_init(): not zeroed as well. */
	struct vsmfs_whandle h __uninitialized;
	struct vsmfs_swap sw __uninitialized;
	struct vsmfs_dinode *di = NULL;
	struct vsmfs_mblk *imb = NULL;
	unsigned int i;
	int ret;

	BUILD_BUG_ON(VSMFS_STAGE_RUNS > VSMFS_WHANDLE_SWAPS);
	ret = vsmfs_whandle_begin(sbi, &h, 1 + 2 * n, n);
	if (ret)
		return ret;
	if (now || size) {
		ret = vsmfs_whandle_inode(&h, inode, &imb, &di);
		if (ret) {
			vsmfs_whandle_end(&h);
			return ret;
		}
	}
	vsmfs_swap_init(sbi, &sw);
	sw.sw_defer_b = true;
	for (i = 0; i < n && !ret; i++)
		ret = vsmfs_swap_pages_shared(&h, &sw, vsmfs_idx_lpn(st[i].e) + st[i].pg,
					      st[i].r.lpn, st[i].r.count);
	/*
	 * Fallocated pages replaced leave their unwritten flag to the scratch
	 * pages, which are never freed with it: cleared here, in blocks the
	 * swaps joined to the handle (so it does not fail).
	 */
	for (i = 0; i < n && !ret; i++)
		ret = vsmfs_pt_written_shared(&h, st[i].r.lpn, st[i].r.count);
	if (ret)
		vsmfs_swap_back_shared(&h, &sw);
	/* One shootdown, before the commit frees any page swapped out. */
	vsmfs_swap_flush(&sw);
	if (!ret) {
		for (i = 0; i < n; i++)
			vsmfs_whandle_defer_resv(&h, &st[i].r);
		vsmfs_stat_add(sbi, mcow_fine, n);
		if (now)
			vsmfs_whandle_times(inode, imb, di, *now);
		if (size)
			vsmfs_whandle_size(inode, imb, di, size);
		vsmfs_whandle_note_inode(&h, inode);
		vsmfs_aggr_written(inode);
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_COW_STOP,
				 "copy-on-write stopped before its commit");
	}
	vsmfs_whandle_end(&h);
	return ret;
}

/*
 * End the handle @t of a staged write or append whose reserved runs it
 * takes: aborted on @ret, or by its end (an error recorded in it,
 * errors=remount-ro), and the runs are the caller's again; else it ends,
 * and the runs are the transaction's even if its commit fails (*@owned).
 * Return: @ret, or what the abort or the commit returned.
 */
static int vsmfs_stage_commit(struct vsmfs_trans *t, int ret, bool *owned)
{
	if (ret) {
		vsmfs_trans_abort(t);
		return ret;
	}
	ret = vsmfs_trans_commit(t);
	*owned = !t->t_aborted;
	return ret;
}

/*
 * (c) of a staged write in a handle that ends in the running transaction
 * under s_trans_mutex (vsmfs_stage_switch()), for what a shared handle
 * cannot do; apart from vsmfs_staged_begin() so that the common write,
 * which swaps pages in a shared handle, does not set up this frame.
 * @size: the new size of a write that ends past the end (into pages kept
 *	there), else 0
 * @owned: set if the transaction took the runs (committed, even if the
 *	commit failed); else the handle was aborted and they are the
 *	caller's again.
 * Return: 0 or a negative errno.
 */
static noinline int vsmfs_stage_switch_excl(struct inode *inode, struct vsmfs_stage *st,
					    unsigned int n, bool slot, loff_t size, u32 credits,
					    bool *owned)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct timespec64 now;
	struct vsmfs_swap sw;
	struct vsmfs_trans t;
	int ret;

	*owned = false;
	/* Metadata only from here: no page is read or written. */
	vsmfs_trans_begin_meta(sbi, &t, credits);
	vsmfs_trans_track(&t, inode, false);
	vsmfs_swap_init(sbi, &sw);
	sw.sw_defer_b = true;
	/* Nor are the swapped pages. */
	sw.sw_unused = true;
	ret = vsmfs_stage_switch(&t, inode, st, n, &sw);
	/* One shootdown for the write, before any page freed here is reused. */
	vsmfs_swap_flush(&sw);
	if (!ret) {
		now = current_time(inode);
		/*
		 * Page swaps alone leave the slot as it is while the clock
		 * does not tick: no copy of it to save, write and journal.
		 * An fsync still needs this transaction.
		 */
		if (slot || size || !timespec64_equal(&inode->i_mtime, &now) ||
		    !timespec64_equal(&inode->i_ctime, &now)) {
			inode->i_mtime = now;
			inode->i_ctime = now;
			if (size)
				i_size_write(inode, size);
			ret = vsmfs_mark_inode_dirty(&t, inode);
		} else {
			vsmfs_trans_note_inode(&t, inode);
			vsmfs_aggr_written(inode);
		}
	}
	if (!ret)
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_COW_STOP,
				 "copy-on-write stopped before its commit");
	return vsmfs_stage_commit(&t, ret, owned);
}

/**
 * vsmfs_staged_end() - (c) of a staged overwrite: the switch
 * @m: the part, copied by vsmfs_staged_copy()
 * @ret: what the copy returned
 *
 * See vsmfs_staged_begin(). A part undone gives back its runs and the
 * bytes it took from the source.
 *
 * Return: the bytes written, or a negative errno (nothing written).
 */
ssize_t vsmfs_staged_end(struct vsmfs_wmap *m, int ret)
{
	struct inode *inode = m->inode;
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_stage *st = m->st;
	unsigned int n = m->nst, i, ncoarse;
	struct timespec64 now;
	bool slot, owned;
	/* A write into pages kept past the end grows the file. */
	loff_t size = m->pos + m->len > i_size_read(inode) ? m->pos + m->len : 0;

	if (ret)
		goto undo;
	/*
	 * (b) durable before the handle begins: the handle stores
	 * nothing to PM, so it fences no more (vsmfs_trans_commit()), and no
	 * other writer waits for this fence.
	 */
	vsmfs_fence_pending();
	for (i = 0, ncoarse = 0; i < n; i++)
		ncoarse += st[i].whole;
	/*
	 * Holes filled change the block count: the slot is written, in a
	 * handle of the other kind. Unwritten pages replaced leave their flag
	 * to the scratch pages, cleared in either kind.
	 */
	slot = ncoarse;
	for (i = 0; i < n && !slot; i++) {
		u64 old = vsmfs_idx_lpn(st[i].e) + st[i].pg;

		slot = vsmfs_frames_in(sbi, old, st[i].r.count) < st[i].r.count;
	}
	now = current_time(inode);
	if (!slot) {
		bool tick = !timespec64_equal(&inode->i_mtime, &now) ||
			    !timespec64_equal(&inode->i_ctime, &now);

		ret = vsmfs_stage_switch_shared(inode, st, n, tick ? &now : NULL, size);
		if (!ret)
			goto done;
		if (ret != -EAGAIN)
			goto undo;
		ret = 0;
	}
	ret = vsmfs_stage_switch_excl(inode, st, n, slot, size,
				      vsmfs_cow_blocks_at(m->cow, m->pos, m->len), &owned);
	/* Swaps and index switches undone: the runs are the write's again. */
	if (!owned)
		goto undo;
done:
	vsmfs_stat_inc(sbi, mcow_writes);
	vsmfs_stat_inc(sbi, write_staged);
	trace_vsmfs_mcow_write(inode, m->pos, m->len, ncoarse, n - ncoarse, 0, 0, ret ?: m->len);
	return ret ?: m->len;

undo:
	/* Nothing is written: the source as it came. */
	vsmfs_wmap_revert(m);
	for (i = 0; i < n; i++)
		vsmfs_resv_release(sbi, &st[i].r);
	return ret;
}

/*
 * The run of piece @key (index entry @e) becomes the first @a->need pages
 * of @a's reserved run, the @have pages of the old one moved into it by
 * swapping their frames (as vsmfs_move_run() does), and the old pages
 * freed by the commit. A large file's first run owns the rest of its VSP
 * too (its tail, i_tail_key): reserved with it when a whole free VSP was
 * (the claim allocates it), else allocated here, under s_trans_mutex; the
 * tail of the file's previous VSP is given back.
 */
static int vsmfs_append_move(struct vsmfs_trans *t, struct inode *inode, u64 key, u64 e,
			     u64 have, const struct vsmfs_append *a, bool large)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 lpn = vsmfs_idx_lpn(e), freed;
	struct vsmfs_swap sw;
	int ret;

	ret = vsmfs_resv_claim(t, &a->r);
	if (!ret)
		ret = vsmfs_idx_set(t, inode, key, vsmfs_idx_make(a->r.lpn, a->need));
	if (ret || !have)
		goto out;
	vsmfs_swap_init(t->t_sbi, &sw);
	ret = vsmfs_swap_pages(t, &sw, lpn, a->r.lpn, have);
	if (!ret)
		ret = vsmfs_free_data_pages(t, lpn, have);
	vsmfs_swap_flush(&sw);
	if (!ret) {
		trace_vsmfs_zfdm(inode, key, have, true);
		vsmfs_stat_inc(t->t_sbi, zfdm_migrations);
		vsmfs_stat_add(t->t_sbi, zfdm_migrated_pages, have);
	}
out:
	if (!ret)
		ret = vsmfs_trans_defer_resv(t, &a->r, true);
	if (!ret)
		vi->i_pages += a->r.count - have;
	/*
	 * A large file's run reserves the rest of its VSP, as it would grown;
	 * a run that fills it has none.
	 */
	if (!ret && large && a->need < VSMFS_VSP_PAGES &&
	    (a->r.count == VSMFS_VSP_PAGES ||
	     !vsmfs_alloc_pages_at(t, a->r.lpn + a->r.count, VSMFS_VSP_PAGES - a->r.count))) {
		/* On error the handle is aborted, the pages with it. */
		if (vi->i_tail_key)
			ret = vsmfs_tail_release(t, inode, &freed);
		if (!ret) {
			vi->i_pages += VSMFS_VSP_PAGES - a->r.count;
			vi->i_tail_key = key + 1;
			vi->i_flags &= ~VSMFS_IFLAG_TAIL_RELEASED;
		}
	}
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return ret;
}

/*
 * Blocks a shared handle of vsmfs_append_grow() may add: the inode's,
 * the index block of the piece's entry, and the bitmap block of a
 * reservation; a run that moves adds the page table blocks of the two
 * runs (each lies in one VSP, whose entries fill one block) and the old
 * run's bitmap block; a large file's first run the bitmap block of the
 * tail it gives back. The runs it frees when the transaction commits:
 * the reservation's, and the old run or tail.
 */
#define VSMFS_APPEND_SHARED_CREDITS	3
#define VSMFS_MOVE_SHARED_CREDITS	(VSMFS_APPEND_SHARED_CREDITS + 3)
#define VSMFS_LARGE_FIRST_CREDITS	(VSMFS_APPEND_SHARED_CREDITS + 1)

/*
 * The changes of vsmfs_append_grow() in @t: the piece (index entry @m->ap.e)
 * gets the new pages [have, need) and the file the size @m->ap.size; for
 * fallocate() (VSMFS_WM_FALLOC) the new pages are marked unwritten, last.
 * In a shared metadata handle every call that cannot be made beside other
 * handles returns -EAGAIN. Return: 0 or a negative errno, @t to be aborted.
 */
static int vsmfs_append_grow_trans(struct vsmfs_trans *t, const struct vsmfs_wmap *m)
{
	struct inode *inode = m->inode;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	const struct vsmfs_append *a = &m->ap;
	u64 key = a->key, e = a->e, have = a->have, need = a->need, run, had;
	bool large = m->flags & VSMFS_WM_LARGE;
	int ret;

	vsmfs_trans_track(t, inode, false);
	switch (a->kind) {
	case VSMFS_APPEND_AFTER:
		/*
		 * Beside other handles, the entry in the slot, the size, the
		 * page count and the times, and the pages taken, may be all it
		 * changes: a fast record can describe that (the bits of the
		 * pages with the rest; vsmfs_trans_fc_settle() checks).
		 */
		t->t_fc_ok = t->t_shared && !(m->flags & VSMFS_WM_FALLOC);
		t->t_fc_claim = a->r.lpn | a->r.count << 48;
		ret = vsmfs_resv_claim(t, &a->r);
		if (!ret)
			ret = vsmfs_idx_set(t, inode, key, vsmfs_idx_make(vsmfs_idx_lpn(e), need));
		if (!ret)
			ret = vsmfs_trans_defer_resv(t, &a->r, true);
		if (!ret) {
			vi->i_pages += a->r.count;
			inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
		}
		break;
	case VSMFS_APPEND_FIRST:
	case VSMFS_APPEND_MOVE:
		/*
		 * A small file's first or moved run, beside other handles: the
		 * entry in the slot and the pages taken, as above, and the
		 * entries of the page table the move swaps and the old pages
		 * it frees, may be all it changes (a large file's reserves
		 * the rest of its VSP).
		 */
		if (!large) {
			t->t_fc_ok = t->t_shared && !(m->flags & VSMFS_WM_FALLOC);
			t->t_fc_claim = a->r.lpn | a->r.count << 48;
			if (have)
				t->t_fc_move = vsmfs_idx_lpn(e) | have << 48;
		}
		ret = vsmfs_append_move(t, inode, key, e, have, a, large);
		break;
	case VSMFS_APPEND_TAIL:
		/*
		 * Pages the file owns, written by the caller: none is zeroed.
		 * Beside other handles, the run's entry in the slot, the size
		 * and the times may be all it changes: a fast record can
		 * describe that (vsmfs_trans_fc_settle() checks).
		 */
		t->t_fc_ok = t->t_shared && !(m->flags & VSMFS_WM_FALLOC);
		ret = vsmfs_extend_run(t, inode, key, need, have << VSMFS_BLOCK_SHIFT,
				       need << VSMFS_BLOCK_SHIFT, large, &run, &had);
		if (!ret && WARN_ON_ONCE(had != have || run + have != a->dst))
			ret = -EFSCORRUPTED;
		break;
	default:
		ret = -EFSCORRUPTED;
		break;
	}
	if (!ret) {
		i_size_write(inode, a->size);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
		ret = vsmfs_mark_inode_dirty(t, inode);
	}
	if (!ret && (m->flags & VSMFS_WM_FALLOC))
		ret = vsmfs_pt_unwritten(t, a->dst, need - have, true);
	return ret;
}

/*
 * Whether the handle of staged append @m may run beside others: it
 * allocates nothing, and swaps and frees only pages of its file and of
 * its reservation (see vsmfs_append_grow()). A large file's first run
 * whose reservation is not its whole VSP would allocate the rest in the
 * handle: not beside others. Return: the blocks the shared handle may
 * add, with the runs it frees in *@frees, or 0 if it may not run so.
 */
static u32 vsmfs_append_shared(const struct vsmfs_wmap *m, unsigned int *frees)
{
	bool large = m->flags & VSMFS_WM_LARGE;

	*frees = 1;
	switch (m->ap.kind) {
	case VSMFS_APPEND_TAIL:
	case VSMFS_APPEND_AFTER:
		return VSMFS_APPEND_SHARED_CREDITS;
	case VSMFS_APPEND_FIRST:
		if (!large)
			return VSMFS_APPEND_SHARED_CREDITS;
		*frees = 2;
		return m->ap.r.count == VSMFS_VSP_PAGES ? VSMFS_LARGE_FIRST_CREDITS : 0;
	case VSMFS_APPEND_MOVE:
		*frees = 2;
		return large ? 0 : VSMFS_MOVE_SHARED_CREDITS;
	default:
		return 0;
	}
}

/*
 * (c) of a staged append that adds pages to a piece with a direct entry
 * in the slot, beside other handles with no undo: into the reserved tail
 * of the file's VSP (VSMFS_APPEND_TAIL: pages the file owns and counts,
 * with frames), or into a small file's reserved pages right after its run
 * or its first run (VSMFS_APPEND_AFTER, VSMFS_APPEND_FIRST), which it
 * claims. The pages were written (and zeroed past the write) by
 * vsmfs_append_copy(); what it changes are words of the slot (the entry's
 * page count, or the whole entry of a first run, the page count, the
 * size, the times, and the tail key when the run now fills its VSP),
 * stored in a shared handle as an append that stays in the last page
 * stores the size (vsmfs_set_size_times()), each noted in the block's
 * m_cmask, and for a claim the bitmap block joins the transaction
 * unchanged: its commit sets the bits and ends the reservation
 * (vsmfs_whandle_claim()). Nothing fails once the first word is stored.
 * Ordering: the data was fenced before the handle began
 * (vsmfs_append_end()); nothing is stored to PM here; the commit that
 * takes the handle, or the fast record of an fsync (the words of the slot
 * and the claimed bits), makes it durable whole.
 * Return: 0 (*@owned set for a claim), -EAGAIN if the append must take a
 * metadata handle (nothing done), or another negative errno (nothing done).
 */
static int vsmfs_append_words_shared(const struct vsmfs_wmap *m, bool *owned)
{
	struct inode *inode = m->inode;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	const struct vsmfs_append *a = &m->ap;
	bool claim = a->kind != VSMFS_APPEND_TAIL;
	u64 lpn = a->kind == VSMFS_APPEND_FIRST ? a->r.lpn : vsmfs_idx_lpn(a->e);
	u64 pages = vi->i_pages + (claim ? a->r.count : 0);
	u32 tail_key = vi->i_tail_key;
	/* Set up by vsmfs_whandle_begin(): not zeroed at entry as well. */
	struct vsmfs_whandle h __uninitialized;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	int ret;

	/* The run fills its VSP: nothing is reserved any more. */
	if (!claim && (lpn + a->need) % VSMFS_VSP_PAGES == 0)
		tail_key = 0;
	if (vsmfs_whandle_begin(sbi, &h, 1 + claim, claim))
		return -EAGAIN;
	ret = vsmfs_whandle_inode(&h, inode, &mb, &di);
	if (!ret && claim)
		ret = vsmfs_whandle_claim(&h, &a->r);
	if (!ret) {
		*owned = claim;
		vsmfs_whandle_direct(inode, mb, di, a->key, vsmfs_idx_make(lpn, a->need), tail_key,
				     pages);
		vsmfs_whandle_size(inode, mb, di, a->size);
		/* Notes only the time words that change. */
		vsmfs_whandle_times(inode, mb, di, current_time(inode));
		vsmfs_whandle_note_inode(&h, inode);
		vsmfs_aggr_written(inode);
		vsmfs_stat_inc(sbi, write_shared_appends);
	}
	vsmfs_whandle_end(&h);
	return ret;
}

/**
 * vsmfs_append_grow() - (c) of a staged append that adds pages: its handle
 * @m: a staged append (VSMFS_WK_APPEND), copied, with new pages in @m->ap
 * @owned: set if the transaction took @m->ap's reservation (committed,
 *	even if the commit failed); else the handle was aborted and the
 *	reservation is the caller's again
 *
 * Gives the piece (index entry @m->ap.e) the new pages [have, need) and
 * the file the size at the end of @m. Ordering as vsmfs_stage_switch():
 * the data was fenced before the handle began, nothing here is stored to
 * PM, and a moved run's stale translations are shot down before its old
 * pages can be taken again.
 *
 * An append into the reserved tail of the file's VSP (pages the file
 * owns), into pages reserved right after its run or into a small file's
 * first run, whose piece has a direct entry, stores the words it changes
 * in a shared handle with no undo (vsmfs_append_words_shared()). One of
 * those kinds whose piece an index block indexes, or that handle could
 * not begin, and an append into a fresh reserved run the small file's run
 * moves into, run in a shared metadata handle
 * (vsmfs_trans_begin_shared()), beside other operations: what it
 * changes is the piece's index entry and the inode's slot, which the
 * inode's locks keep to this task, and for a reservation it adds the
 * bitmap block, whose bits the commit that ends the reservation sets
 * (vsmfs_resv_claim()). A move swaps the frames of the old run's pages
 * with those of the reservation's first ones (entries of pages the file
 * and the reservation own, which no other handle changes: words of the
 * page table blocks, noted atomically) and frees the old run when the
 * transaction commits, through the entries the handle reserved as it
 * began; an abort swaps them back (vsmfs_trans_abort_shared()). A large
 * file's first run, reserved with the rest of its VSP (a whole free VSP),
 * claims it all, and gives back the tail of the file's previous VSP,
 * freed by the commit. No page is allocated in the handle. A large file's
 * first run that found no free VSP (the rest of its VSP is allocated in
 * the handle), or an append whose shared handle cannot finish (a new
 * index block, a full undo log, a page marked unwritten, no room in the
 * CPU's share) is made in a handle under s_trans_mutex.
 *
 * Return: 0 or a negative errno.
 */
noinline int vsmfs_append_grow(const struct vsmfs_wmap *m, bool *owned)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(m->inode->i_sb);
	const struct vsmfs_append *a = &m->ap;
	unsigned int frees;
	u32 credits = vsmfs_append_shared(m, &frees);
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	int ret;

	*owned = false;
	if (a->key < VSMFS_NDIRECT && !(m->flags & VSMFS_WM_FALLOC) &&
	    (a->kind == VSMFS_APPEND_TAIL || a->kind == VSMFS_APPEND_AFTER ||
	     (a->kind == VSMFS_APPEND_FIRST && !(m->flags & VSMFS_WM_LARGE)))) {
		ret = vsmfs_append_words_shared(m, owned);
		if (ret != -EAGAIN)
			return ret;
	}
	/* fallocate() marks the new pages: their page table block besides. */
	if (credits && (m->flags & VSMFS_WM_FALLOC))
		credits++;
	if (credits && !vsmfs_trans_begin_shared(sbi, &t, credits, frees)) {
		ret = vsmfs_append_grow_trans(&t, m);
		if (ret != -EAGAIN) {
			if (!ret)
				vsmfs_stat_inc(sbi, write_shared_appends);
			return vsmfs_stage_commit(&t, ret, owned);
		}
		/* The in-core inode goes back to its slot's; the reservation stays. */
		vsmfs_trans_abort(&t);
	}
	vsmfs_trans_begin_credits(sbi, &t, a->credits);
	ret = vsmfs_append_grow_trans(&t, m);
	return vsmfs_stage_commit(&t, ret, owned);
}
