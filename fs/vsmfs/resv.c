// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs reservations of logical pages outside any handle, and the per-CPU
 * page pools they are taken from.
 *
 * A write that copies its data into fresh pages before its handle begins
 * reserves them first (vsmfs_resv_take()), so that no file-system-wide
 * lock is held during the copy. Such runs outlive commits: their bits are
 * set in the DRAM copy of the bitmap, so the allocator skips them, and in
 * an overlay of the block (m_resv) that keeps them out of every version
 * the journal writes (vsmfs_mblk_commit_view()), so a crash finds them
 * free. A reservation ends in the write's handle, when the running
 * transaction commits (vsmfs_trans_defer_resv(), then vsmfs_resv_end()
 * through the ops this file registers with the transactions,
 * vsmfs_pool_init()), or goes back (vsmfs_resv_release()). As for any
 * allocation, no page freed by a commit not yet durable is taken
 * (vsmfs_wait_freed()).
 */
#include <linux/bitmap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include "vsmfs.h"
#include "ptable.h"
#include "mcache.h"
#include "vsp.h"
#include "trans.h"
#include "alloc.h"

/* Set or clear the bits of @count reserved pages in the bitmap and its overlay. */
static void vsmfs_resv_bits(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb, u64 lpn,
			    u64 count, bool set)
{
	u64 off = lpn % BITS_PER_BLK;

	vsmfs_vsp_changed(sbi, lpn / VSMFS_VSP_PAGES);
	vsmfs_mblk_freeze(sbi, mb);
	if (set) {
		bitmap_set((unsigned long *)mb->m_data, off, count);
		bitmap_set(mb->m_resv, off, count);
	} else {
		bitmap_clear((unsigned long *)mb->m_data, off, count);
		bitmap_clear(mb->m_resv, off, count);
	}
}

/*
 * The bitmap block of free pages about to be reserved from @lpn, with its
 * overlay, once no commit that freed pages is still on its way (they may
 * be among them). Context: s_trans_mutex held, allocations GFP_NOFS.
 */
static struct vsmfs_mblk *vsmfs_resv_block(struct vsmfs_sb_info *sbi, u64 lpn)
{
	struct vsmfs_mblk *mb = vsmfs_lbitmap(sbi, lpn);

	if (IS_ERR(mb))
		return mb;
	/* A commit writing the block reads the overlay: copied before it appears. */
	vsmfs_mblk_freeze(sbi, mb);
	if (!mb->m_resv)
		WRITE_ONCE(mb->m_resv, kzalloc(VSMFS_BLOCK_SIZE, GFP_NOFS));
	if (!mb->m_resv)
		return ERR_PTR(-ENOMEM);
	vsmfs_wait_freed(sbi);
	return mb;
}

/* Reserve the free pages [@lpn, @lpn + @count) of @mb. */
static void vsmfs_resv_add(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb, u64 lpn,
			   u64 count)
{
	vsmfs_resv_bits(sbi, mb, lpn, count, true);
	sbi->s_free_pages -= count;
}

/*
 * Reserve @count pages from @large's policy into @r.
 * Context: s_trans_mutex held, allocations GFP_NOFS.
 */
static int vsmfs_resv_get(struct vsmfs_sb_info *sbi, u64 count, bool large,
			  struct vsmfs_resv *r)
{
	struct vsmfs_mblk *mb;
	u64 lpn;
	int ret;

	ret = vsmfs_find_free(sbi, count, large, &lpn);
	if (ret)
		return ret;
	mb = vsmfs_resv_block(sbi, lpn);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	vsmfs_resv_add(sbi, mb, lpn, count);
	r->lpn = lpn;
	r->count = count;
	return 0;
}

/* End a reservation nothing took over. Context: s_trans_mutex held. */
static void vsmfs_resv_put(struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	struct vsmfs_mblk *mb = vsmfs_lbitmap(sbi, lpn);

	if (!IS_ERR(mb))
		vsmfs_resv_bits(sbi, mb, lpn, count, false);
	sbi->s_free_pages += vsmfs_frames_in(sbi, lpn, count);
}

/*
 * Per-CPU page pools. A write that replaces one page (the common 4 KiB
 * overwrite) reserves its fresh page from the pool of the CPU it runs on,
 * under that pool's spinlock, instead of taking s_trans_mutex: writers on
 * different CPUs share no lock until their handles. A pooled page is an
 * ordinary reservation (bits set in the DRAM bitmap and in its overlay),
 * so no version the journal writes has it and a crash finds it free; a
 * pool is refilled with up to VSMFS_POOL_PAGES of them in one hold of
 * s_trans_mutex. When free space runs short (vsmfs_pool_low()), pools are
 * not refilled and the next handle empties them (vsmfs_pool_drain())
 * before it allocates anything, so no allocation fails for pages a pool
 * holds. statfs counts pooled pages as free.
 */
static bool vsmfs_pool_pop(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool, u64 *lpn)
{
	bool got = false;

	spin_lock(&pool->lock);
	if (pool->n) {
		*lpn = pool->lpn[--pool->n];
		got = true;
	}
	spin_unlock(&pool->lock);
	return got;
}

/*
 * Take from @pool a run of @count pages if they are the next ones it hands
 * out, in order: from *@lpn, or with @any from whichever page is next. A
 * refill stacks its pages so that they come out in ascending order
 * (vsmfs_pool_refill()): a small file whose first page came from the pool
 * finds the pages right after its run next in it, and a small run of a
 * few pages is there whole, so neither takes s_trans_mutex. The run stays
 * within one VSP. Return: whether it was taken (*@lpn then its first page).
 */
static bool vsmfs_pool_take_run(struct vsmfs_page_pool *pool, u64 *lpn, u64 count, bool any)
{
	bool got = false;
	unsigned int i;
	u64 first;

	spin_lock(&pool->lock);
	if (pool->n >= count) {
		first = any ? pool->lpn[pool->n - 1] : *lpn;
		for (i = 0; i < count && pool->lpn[pool->n - 1 - i] == first + i; i++)
			;
		if (i == count &&
		    first / VSMFS_VSP_PAGES == (first + count - 1) / VSMFS_VSP_PAGES) {
			pool->n -= count;
			*lpn = first;
			got = true;
		}
	}
	spin_unlock(&pool->lock);
	return got;
}

/*
 * Put the pages @lpn[0..@n) in @pool as far as it has room, if pools are
 * in use. Return: how many it took (the first ones).
 */
static unsigned int vsmfs_pool_push(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool,
				    const u64 *lpn, unsigned int n)
{
	unsigned int i = 0;

	spin_lock(&pool->lock);
	/* Read under the lock: a drain clears it before taking each lock. */
	if (READ_ONCE(sbi->s_pools_on))
		for (; i < n && pool->n < VSMFS_POOL_PAGES; i++)
			pool->lpn[pool->n++] = lpn[i];
	spin_unlock(&pool->lock);
	return i;
}

/*
 * Reserve into @lpn[@n..@max) free pages with frames of VSP @vsp from its
 * page @from on, a bitmap word at a time: the bits of each page are set
 * with the word in hand, not looked for again. Return: the new @n.
 * Context: s_trans_mutex held.
 */
static unsigned int vsmfs_resv_vsp_pages(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb,
					 u64 vsp, u64 from, u64 *lpn, unsigned int n,
					 unsigned int max)
{
	u64 first = vsp * VSMFS_VSP_PAGES;
	u64 last = min_t(u64, first + VSMFS_VSP_PAGES, sbi->s_layout.lpages);
	u64 base = first - first % BITS_PER_BLK, p;
	unsigned long *map = (unsigned long *)mb->m_data;
	unsigned int start = n;

	/* VSPs and bitmap blocks start on word boundaries. */
	BUILD_BUG_ON(VSMFS_VSP_PAGES % BITS_PER_LONG);
	vsmfs_mblk_freeze(sbi, mb);
	for (p = round_down(from, BITS_PER_LONG); p < last && n < max; p += BITS_PER_LONG) {
		u64 w = (p - base) / BITS_PER_LONG;
		unsigned long f = vsmfs_free_framed(sbi, map[w], p, last), taken = 0;

		for (; f && n < max; f &= f - 1) {
			taken |= f & -f;
			lpn[n++] = p + __ffs(f);
		}
		map[w] |= taken;
		mb->m_resv[w] |= taken;
	}
	sbi->s_free_pages -= n - start;
	vsmfs_vsp_changed(sbi, vsp);
	return n;
}

/* @pool refills from no VSP any more. Context: s_trans_mutex held. */
static void vsmfs_pool_unclaim(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool)
{
	if (pool->vsp) {
		__clear_bit(pool->vsp - 1, sbi->s_vsp_pooled);
		pool->vsp = 0;
	}
}

/*
 * Reserve up to @max single pages for @pool into @lpn: every free page
 * with a frame of the VSP the pool refills from, in one pass over the
 * VSP's bitmap words, then of the next VSPs vsmfs_find_small() finds.
 *
 * A pool keeps to its VSP while the VSP has free pages, and a new one is
 * first looked for among the VSPs no other pool keeps to (s_vsp_pooled).
 * Each fresh page of a write lies in its CPU's VSP, and so does the
 * scratch page that takes its old frame until the commit frees it back
 * there: the swaps of writers on different CPUs change entries of
 * different page table blocks, with their changed-word masks, and
 * different kernel page table lines, rather than sharing them.
 *
 * Return: the pages reserved. Context: s_trans_mutex held, allocations
 * GFP_NOFS.
 */
static unsigned int vsmfs_resv_singles(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool,
				       u64 *lpn, unsigned int max)
{
	unsigned int n = 0, most, was;
	struct vsmfs_mblk *mb;
	u64 first, vsp;

	while (n < max && !vsmfs_pool_low(sbi)) {
		if (pool->vsp) {
			vsp = pool->vsp - 1;
			first = vsp * VSMFS_VSP_PAGES;
		} else {
			/* Another pool's VSP only when no other has a free page. */
			if (vsmfs_find_small(sbi, 1, 1, &first, NULL, sbi->s_vsp_pooled) &&
			    vsmfs_find_small(sbi, 1, 1, &first, NULL, NULL))
				break;
			vsp = first / VSMFS_VSP_PAGES;
			if (!__test_and_set_bit(vsp, sbi->s_vsp_pooled))
				pool->vsp = vsp + 1;
			else
				vsmfs_stat_inc(sbi, alloc_pool_shared_vsp);
		}
		mb = vsmfs_resv_block(sbi, first);
		if (IS_ERR(mb))
			break;
		/* Free space counts these pages: never more than it has. */
		most = n + min_t(u64, max - n, sbi->s_free_pages);
		was = n;
		n = vsmfs_resv_vsp_pages(sbi, mb, vsp, first, lpn, n, most);
		if (n < most && pool->vsp == vsp + 1) {
			/* No free page left in it: the pool looks for another. */
			vsmfs_pool_unclaim(sbi, pool);
		} else if (n == was) {
			break;
		}
	}
	return n;
}

/*
 * Refill @pool (this CPU's, unless the task moved), with the mutex held,
 * unless free space is short: up to VSMFS_POOL_PAGES single pages, fewer
 * if memory or space runs short (what the pool got is kept).
 */
static void vsmfs_pool_refill(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool)
{
	u64 lpn[VSMFS_POOL_PAGES];
	unsigned int n, i;

	if (vsmfs_pool_low(sbi))
		return;
	WRITE_ONCE(sbi->s_pools_on, true);
	n = vsmfs_resv_singles(sbi, pool, lpn, VSMFS_POOL_PAGES);
	/* Taken in ascending order, stacked to come out so (vsmfs_pool_take_run()). */
	for (i = 0; i < n / 2; i++)
		swap(lpn[i], lpn[n - 1 - i]);
	i = vsmfs_pool_push(sbi, pool, lpn, n);
	/* What did not fit goes back. */
	for (; i < n; i++)
		vsmfs_resv_put(sbi, lpn[i], 1);
	if (n)
		vsmfs_stat_inc(sbi, alloc_pool_refills);
}

/*
 * A handle takes s_trans_mutex, before any change: if free space is short,
 * pooled pages go back first (vsmfs_pool_drain()).
 */
static void vsmfs_alloc_handle_begin(struct vsmfs_sb_info *sbi)
{
	if (unlikely(vsmfs_pool_low(sbi)) && READ_ONCE(sbi->s_pools_on))
		vsmfs_pool_drain(sbi);
}

/*
 * The committing handle frees in DRAM run @f of its transaction: a
 * reservation ends (claimed, or a scratch run behind old frames), else the
 * run's bits are cleared (an error is the bitmap's, reported by
 * vsmfs_fs_error()).
 */
static void vsmfs_alloc_free_run(struct vsmfs_trans *t, const struct vsmfs_free_run *f)
{
	if (f->resv)
		vsmfs_resv_end(t, f->lpn, f->resv, !f->scratch);
	else
		vsmfs_lbits_clear(t, f->lpn, f->count, !f->scratch);
}

/* What the transactions ask of the allocator (vsmfs.h). */
static const struct vsmfs_trans_aops vsmfs_alloc_trans_aops = {
	.handle_begin	= vsmfs_alloc_handle_begin,
	.free_run	= vsmfs_alloc_free_run,
	.bits_restored	= vsmfs_alloc_bits_restored,
};

/**
 * vsmfs_pool_init() - set up the per-CPU page pools of a mount
 * @sbi: the file system
 *
 * Also registers what the transactions below ask of the allocator
 * (sbi->s_trans_aops), before the first handle.
 *
 * Return: 0 or -ENOMEM.
 */
int vsmfs_pool_init(struct vsmfs_sb_info *sbi)
{
	int cpu;

	sbi->s_trans_aops = &vsmfs_alloc_trans_aops;

	sbi->s_pools = alloc_percpu(struct vsmfs_page_pool);
	if (!sbi->s_pools)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		spin_lock_init(&per_cpu_ptr(sbi->s_pools, cpu)->lock);
	return 0;
}

/**
 * vsmfs_pool_drain() - give every pooled page back to the allocator
 * @sbi: the file system
 *
 * Called by a handle as it begins, before it changes anything, when free
 * space is short: the bits of pooled pages are cleared in the DRAM bitmap
 * and its overlay at once, so the versions the journal writes, which never
 * had them, do not change.
 *
 * Context: s_trans_mutex held, outside any handle's changes.
 */
void vsmfs_pool_drain(struct vsmfs_sb_info *sbi)
{
	int cpu;

	lockdep_assert_held(&sbi->s_trans_mutex);
	WRITE_ONCE(sbi->s_pools_on, false);
	for_each_possible_cpu(cpu) {
		struct vsmfs_page_pool *pool = per_cpu_ptr(sbi->s_pools, cpu);
		u64 lpn[VSMFS_POOL_PAGES];
		unsigned int n;

		spin_lock(&pool->lock);
		n = pool->n;
		memcpy(lpn, pool->lpn, n * sizeof(lpn[0]));
		pool->n = 0;
		spin_unlock(&pool->lock);
		vsmfs_pool_unclaim(sbi, pool);
		while (n)
			vsmfs_resv_put(sbi, lpn[--n], 1);
	}
}

/**
 * vsmfs_pool_count() - pages the per-CPU pools hold
 * @sbi: the file system
 *
 * Return: the sum, as of each pool's last change (for statfs).
 */
u64 vsmfs_pool_count(struct vsmfs_sb_info *sbi)
{
	u64 n = 0;
	int cpu;

	if (!READ_ONCE(sbi->s_pools_on))
		return 0;
	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(sbi->s_pools, cpu)->n);
	return n;
}

/**
 * vsmfs_pool_forget() - empty the pools without touching the bitmaps
 * @sbi: the file system, being torn down
 */
void vsmfs_pool_forget(struct vsmfs_sb_info *sbi)
{
	int cpu;

	if (!sbi->s_pools)
		return;
	for_each_possible_cpu(cpu) {
		per_cpu_ptr(sbi->s_pools, cpu)->n = 0;
		per_cpu_ptr(sbi->s_pools, cpu)->vsp = 0;
	}
}

/**
 * vsmfs_resv_take() - reserve logical pages in DRAM, outside any handle
 * @sbi: the file system
 * @count: pages, 1..VSMFS_VSP_PAGES, within one VSP
 * @large: for a large file's run: start it at a free VSP
 * @r: the reservation, filled in
 *
 * For a write that copies its data into fresh pages before its handle
 * begins, so that no file-system-wide lock is held during the copy. The
 * bits of the run are set in the DRAM bitmap, so the allocator skips the
 * run, and in the block's overlay (m_resv), so that no version the
 * journal writes has them (vsmfs_mblk_commit_view()): a commit may write
 * the block meanwhile, and a crash must find the pages free. The run ends
 * in the write's handle (vsmfs_resv_claim(), vsmfs_trans_defer_resv()) or,
 * if the write gives up, with vsmfs_resv_release(). As for any
 * allocation, the run holds no page freed by a commit not yet durable
 * (vsmfs_wait_freed()). A single page of a small run comes from the CPU's
 * page pool, refilled when empty.
 *
 * Context: process context; takes s_trans_mutex unless the pool has the
 * page, or the small run (vsmfs_pool_take_run()).
 * Return: 0, -ENOSPC or -ENOMEM.
 */
int vsmfs_resv_take(struct vsmfs_sb_info *sbi, u64 count, bool large, struct vsmfs_resv *r)
{
	/* Any CPU's pool will do if the task moves: its lock guards it. */
	struct vsmfs_page_pool *pool = raw_cpu_ptr(sbi->s_pools);
	bool single = count == 1 && !large;
	unsigned int nofs;
	u64 t0;
	int ret;

	if (single && vsmfs_pool_pop(sbi, pool, &r->lpn)) {
		r->count = 1;
		vsmfs_stat_inc(sbi, alloc_pool_pages);
		return 0;
	}
	/* A small run the pool has whole, next in line. */
	if (!large && count > 1 && count <= VSMFS_POOL_RUN_MAX &&
	    vsmfs_pool_take_run(pool, &r->lpn, count, true)) {
		r->count = count;
		vsmfs_stat_inc(sbi, alloc_pool_runs);
		return 0;
	}
	/*
	 * Commits in flight that freed pages end without s_trans_mutex: they
	 * are waited for before it is taken, so that the tasks queued on it
	 * do not sleep behind a holder that sleeps (one that begins freeing
	 * meanwhile is waited for under the mutex, vsmfs_resv_block()).
	 */
	vsmfs_wait_freed(sbi);
	vsmfs_trans_mutex_lock(sbi);
	t0 = vsmfs_hold_start(sbi);
	nofs = memalloc_nofs_save();
	/* The page from the refilled pool, in the VSP it keeps to. */
	if (single) {
		vsmfs_pool_refill(sbi, pool);
		if (vsmfs_pool_pop(sbi, pool, &r->lpn)) {
			r->count = 1;
			ret = 0;
			goto out;
		}
	}
	ret = vsmfs_resv_get(sbi, count, large, r);
out:
	memalloc_nofs_restore(nofs);
	vsmfs_hold_end(sbi, t0);
	mutex_unlock(&sbi->s_trans_mutex);
	return ret;
}

/**
 * vsmfs_resv_take_at() - reserve a given run of logical pages in DRAM
 * @sbi: the file system
 * @lpn: first page
 * @count: pages; the run must not cross a VSP
 * @r: the reservation, filled in
 *
 * As vsmfs_resv_take(), for the pages right after a run that is to grow
 * in place: each must be free and have a frame.
 *
 * Context: process context; takes s_trans_mutex unless the pages are next
 * in this CPU's pool (vsmfs_pool_take_run()).
 * Return: 0, -ENOSPC if any page is in use or has no frame, or -ENOMEM.
 */
int vsmfs_resv_take_at(struct vsmfs_sb_info *sbi, u64 lpn, u64 count, struct vsmfs_resv *r)
{
	struct vsmfs_mblk *mb;
	unsigned int nofs;
	u64 off = lpn % BITS_PER_BLK, t0;
	int ret = -ENOSPC;

	if (!count || lpn + count > sbi->s_layout.lpages ||
	    lpn / VSMFS_VSP_PAGES != (lpn + count - 1) / VSMFS_VSP_PAGES)
		return -ENOSPC;
	/* The pages next in line in this CPU's pool (reserved, with frames). */
	if (vsmfs_pool_take_run(raw_cpu_ptr(sbi->s_pools), &lpn, count, false)) {
		r->lpn = lpn;
		r->count = count;
		vsmfs_stat_inc(sbi, alloc_pool_runs);
		return 0;
	}
	/* As vsmfs_resv_take(). */
	vsmfs_wait_freed(sbi);
	vsmfs_trans_mutex_lock(sbi);
	t0 = vsmfs_hold_start(sbi);
	nofs = memalloc_nofs_save();
	mb = vsmfs_resv_block(sbi, lpn);
	if (IS_ERR(mb)) {
		ret = PTR_ERR(mb);
	} else if (find_next_bit((unsigned long *)mb->m_data, off + count, off) >= off + count &&
		   vsmfs_framed(sbi, lpn, count)) {
		vsmfs_resv_add(sbi, mb, lpn, count);
		r->lpn = lpn;
		r->count = count;
		ret = 0;
	}
	memalloc_nofs_restore(nofs);
	vsmfs_hold_end(sbi, t0);
	mutex_unlock(&sbi->s_trans_mutex);
	return ret;
}

/**
 * vsmfs_resv_claim() - let a handle allocate a reserved run
 * @t: the handle
 * @r: the reservation, from vsmfs_resv_take()
 *
 * The bitmap block joins the transaction now (the handle counts it); the
 * run becomes allocated in the versions the journal writes when the
 * running transaction commits, which ends the reservation
 * (vsmfs_trans_defer_resv() with @claimed). If the handle is aborted, the
 * reservation is the caller's again (vsmfs_resv_release()).
 *
 * Context: inside the handle.
 * Return: 0 or a negative errno.
 */
int vsmfs_resv_claim(struct vsmfs_trans *t, const struct vsmfs_resv *r)
{
	struct vsmfs_mblk *mb = vsmfs_lbitmap(t->t_sbi, r->lpn);
	int ret;

	if (IS_ERR(mb))
		return PTR_ERR(mb);
	/* Unchanged in the handle: the commit sets the bits. */
	ret = vsmfs_trans_get_write_access_range(t, mb, 0, 0);
	if (ret)
		return ret;
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/**
 * vsmfs_resv_begin_shared() - begin a shared metadata handle that may take
 *	a reserved page for a new metadata block
 * @sbi: the file system
 * @t: the handle to begin
 * @credits: blocks it may add, the page's bitmap block among them if @page
 *	holds a page
 * @page: a single page the caller reserved (vsmfs_resv_take()) for a block
 *	the handle may make (vsmfs_resv_new_block()), or @page->count 0
 *
 * A change that needs a new block (a directory's, the first extended
 * attribute's) runs beside other operations when its page is reserved
 * first, outside any handle, from the CPU's pool: the handle allocates
 * nothing. The caller ends the handle, then calls vsmfs_resv_end_shared().
 *
 * Return: 0, or -EAGAIN with nothing begun and the page given back.
 */
int vsmfs_resv_begin_shared(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits,
			    struct vsmfs_resv *page)
{
	bool grow = page->count;

	if (vsmfs_trans_begin_shared(sbi, t, credits, grow)) {
		if (grow)
			vsmfs_resv_release(sbi, page);
		page->count = 0;
		return -EAGAIN;
	}
	t->t_dpage = grow ? page : NULL;
	return 0;
}

/**
 * vsmfs_resv_end_shared() - after a handle of vsmfs_resv_begin_shared() ended
 * @sbi: the file system
 * @t: the handle, ended or aborted
 * @page: its reserved page, or @page->count 0
 *
 * A handle that ended with the block it made of the page (@t->t_fresh,
 * vsmfs_resv_new_block()) leaves the page to its transaction; else
 * (aborted, which takes the block out, or it needed no block) the page
 * goes back.
 */
void vsmfs_resv_end_shared(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t,
			   struct vsmfs_resv *page)
{
	if (page->count && !t->t_fresh)
		vsmfs_resv_release(sbi, page);
	page->count = 0;
}

/**
 * vsmfs_resv_new_block() - the page a shared handle's caller reserved, as
 *	a new metadata block
 * @t: shared metadata handle begun by vsmfs_resv_begin_shared()
 *
 * The handle claims the page (the commit that ends the reservation sets
 * its bits, vsmfs_resv_claim()) and writes its block whole
 * (vsmfs_trans_fresh_block()): no other handle has the page. The caller
 * names the block (an index entry, the inode's xattr block) in @t.
 *
 * Return: the block, zeroed; ERR_PTR(-EAGAIN) without a reserved page
 * that has a frame (a sparse file system's page takes one in a handle
 * under s_trans_mutex), or another ERR_PTR().
 */
struct vsmfs_mblk *vsmfs_resv_new_block(struct vsmfs_trans *t)
{
	const struct vsmfs_resv *r = t->t_dpage;
	struct vsmfs_mblk *mb;
	u64 blk;
	int ret;

	/* One block per handle: a second change that needs one waits for the mutex. */
	if (!r || r->count != 1 || t->t_fresh || vsmfs_frames_in(t->t_sbi, r->lpn, 1) != 1)
		return ERR_PTR(-EAGAIN);
	ret = vsmfs_resv_claim(t, r);
	if (!ret)
		ret = vsmfs_trans_defer_resv(t, r, true);
	if (ret)
		return ERR_PTR(ret);
	blk = vsmfs_lpn_blk(t->t_sbi, r->lpn);
	mb = blk ? vsmfs_mblk_get(t->t_sbi, blk) : ERR_PTR(-EFSCORRUPTED);
	if (IS_ERR(mb))
		return mb;
	ret = vsmfs_trans_fresh_block(t, mb);
	return ret ? ERR_PTR(ret) : mb;
}

/**
 * vsmfs_resv_end() - end a reservation when its transaction commits
 * @t: the handle committing the running transaction
 * @lpn: the reservation's first page
 * @count: its pages
 * @claimed: its pages are allocated (vsmfs_resv_claim()): their bits stay
 *	set and from now on reach the journal; else they are free again
 *
 * As vsmfs_lbits_clear(), the change needs no memory and notes the words
 * it changes for the delta.
 *
 * Context: inside the committing handle.
 */
void vsmfs_resv_end(struct vsmfs_trans *t, u64 lpn, u64 count, bool claimed)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;

	if (!claimed) {
		vsmfs_resv_put(sbi, lpn, count);
		return;
	}
	mb = vsmfs_lbitmap(sbi, lpn);
	if (IS_ERR(mb))
		return;
	vsmfs_mblk_freeze(sbi, mb);
	bitmap_clear(mb->m_resv, lpn % BITS_PER_BLK, count);
	vsmfs_note_bits(mb, lpn % BITS_PER_BLK, count);
	vsmfs_trans_dirty_commit(t, mb);
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
	int ret = claimed ? 0 : vsmfs_pt_unwritten(t, r->lpn, r->count, false);

	return ret ?: vsmfs_trans_defer(t, r->lpn, claimed ? 0 : r->count, !claimed, r->count);
}

/**
 * vsmfs_resv_release() - give back a reservation no handle took over
 * @sbi: the file system
 * @r: the reservation; its pages hold nothing reachable
 *
 * A single page goes back to the CPU's pool if it has room.
 *
 * Context: process context, no handle running in the task; takes
 * s_trans_mutex unless the page goes back to the pool.
 */
void vsmfs_resv_release(struct vsmfs_sb_info *sbi, const struct vsmfs_resv *r)
{
	if (r->count == 1 && vsmfs_pool_push(sbi, raw_cpu_ptr(sbi->s_pools), &r->lpn, 1))
		return;
	vsmfs_trans_mutex_lock(sbi);
	vsmfs_resv_put(sbi, r->lpn, r->count);
	mutex_unlock(&sbi->s_trans_mutex);
}
