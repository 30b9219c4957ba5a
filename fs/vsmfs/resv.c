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
#include "badframe.h"
#include "fault.h"

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
static int vsmfs_resv_get(struct vsmfs_sb_info *sbi, u64 count, unsigned int large,
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
 * Per-CPU page pools. A write reserves its fresh pages (the single page of
 * a 4 KiB overwrite, the run a small file grows into) from the pool of the
 * CPU it runs on, under that pool's spinlock, instead of taking
 * s_trans_mutex: writers on different CPUs share no lock until their
 * handles. A pool keeps to one VSP: it holds reserved, with frames, the
 * free pages of that VSP it was given, as a bitmap of the VSP's pages, and
 * hands out the first that fit (a single page, a run, or the pages right
 * after a small file's run, vsmfs_pool_take()). A pooled page is an
 * ordinary reservation (bits set in the DRAM bitmap and in its overlay),
 * so no version the journal writes has it and a crash finds it free.
 *
 * A commit gives back to the pool of their VSP the scratch pages that took
 * the old frames of the overwrites it served (vsmfs_pool_recycle()), and
 * the pages it frees outright (vsmfs_pool_recycle_freed()), which the pool
 * hands out again once that commit is durable. A pool that cannot
 * serve a reservation is refilled in one hold of s_trans_mutex
 * (vsmfs_pool_refill()): with the pages of its VSP freed since, else from
 * another VSP. When free space runs short
 * (vsmfs_pool_low()), pools are not refilled and the next handle empties
 * them (vsmfs_pool_drain()) before it allocates anything, so no allocation
 * fails for pages a pool holds; the pools together never hold more than
 * half of that margin (vsmfs_pool_max()). statfs counts pooled pages as
 * free.
 */

/* The first page of the VSP @pool keeps to (@pool->vsp not 0). */
static inline u64 vsmfs_pool_base(const struct vsmfs_page_pool *pool)
{
	return (pool->vsp - 1) * VSMFS_VSP_PAGES;
}

/* Pages one pool may hold: all pools together, a 32nd of the device at most. */
static unsigned int vsmfs_pool_max(struct vsmfs_sb_info *sbi)
{
	u64 most = (sbi->s_layout.data_pages >> 5) / num_possible_cpus();

	return min_t(u64, most, VSMFS_VSP_PAGES);
}

/* Pages @pool holds (bitmaps of one VSP: eight words each), those pending included. */
static inline unsigned int vsmfs_pool_held(const struct vsmfs_page_pool *pool)
{
	return bitmap_weight(pool->map, VSMFS_VSP_PAGES) +
	       bitmap_weight(pool->pend, VSMFS_VSP_PAGES);
}

/*
 * The pages a commit gave back to @pool join those it hands out once
 * that commit is durable. Commits end in order, so s_commit_tid at or past
 * @pool->pend_tid makes every page of @pend durably free: the fence that
 * made the commit durable came before s_commit_tid moved (a full barrier,
 * vsmfs_trans_committed()), and the stores the pages take after this
 * read depend on it. Context: @pool->lock.
 */
static inline void vsmfs_pool_ripen(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool)
{
	if (!pool->pend_tid || (s64)pool->pend_tid > atomic64_read(&sbi->s_commit_tid))
		return;
	bitmap_or(pool->map, pool->map, pool->pend, VSMFS_VSP_PAGES);
	bitmap_zero(pool->pend, VSMFS_VSP_PAGES);
	pool->pend_tid = 0;
}

/*
 * The first of @count pages in a row that @pool holds, as an index in its
 * VSP, or VSMFS_VSP_PAGES if it holds no such run. Context: @pool->lock.
 */
static unsigned long vsmfs_pool_run(const struct vsmfs_page_pool *pool, u64 count)
{
	unsigned long s, e = 0;

	for (s = find_first_bit(pool->map, VSMFS_VSP_PAGES); s < VSMFS_VSP_PAGES;
	     s = find_next_bit(pool->map, VSMFS_VSP_PAGES, e)) {
		/* A single page: any held one. */
		if (count == 1)
			break;
		e = find_next_zero_bit(pool->map, VSMFS_VSP_PAGES, s);
		if (e - s >= count)
			break;
	}
	return s;
}

/*
 * Take from @pool @count pages in a row: at *@lpn with @at, else the first
 * that fit. Return: 0 if they were taken (*@lpn then the first), -ENOSPC
 * if pages at *@lpn lie in the pool's VSP but not all in the pool (in use,
 * most likely: the refill took every free one), else -EAGAIN.
 */
static int vsmfs_pool_take(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool, u64 *lpn,
			   u64 count, bool at)
{
	int ret = -EAGAIN;
	unsigned long s;
	u64 base;

	spin_lock(&pool->lock);
	if (!pool->vsp)
		goto out;
	vsmfs_pool_ripen(sbi, pool);
	base = vsmfs_pool_base(pool);
	if (at) {
		if (*lpn < base || *lpn - base + count > VSMFS_VSP_PAGES)
			goto out;
		s = *lpn - base;
		ret = -ENOSPC;
		if (find_next_zero_bit(pool->map, s + count, s) < s + count)
			goto out;
	} else {
		s = vsmfs_pool_run(pool, count);
		if (s >= VSMFS_VSP_PAGES)
			goto out;
	}
	bitmap_clear(pool->map, s, count);
	*lpn = base + s;
	ret = 0;
out:
	spin_unlock(&pool->lock);
	return ret;
}

/*
 * Put the reserved pages [@lpn, @lpn + @count) back in @pool, if pools are
 * in use, they lie in its VSP and it has room. Return: whether it took them.
 */
static bool vsmfs_pool_put(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool, u64 lpn,
			   u64 count)
{
	unsigned int most = vsmfs_pool_max(sbi);
	bool took = false;
	u64 base;

	if (vsmfs_fault(VSMFS_FAULT_POOL_FULL))
		return false;
	spin_lock(&pool->lock);
	/* Read under the lock: a drain clears it before taking each lock. */
	if (!READ_ONCE(sbi->s_pools_on) || !pool->vsp ||
	    vsmfs_pool_held(pool) + count > most)
		goto out;
	base = vsmfs_pool_base(pool);
	if (lpn < base || lpn - base + count > VSMFS_VSP_PAGES)
		goto out;
	bitmap_set(pool->map, lpn - base, count);
	took = true;
out:
	spin_unlock(&pool->lock);
	return took;
}

/* Whether @pool holds @count pages in a row (vsmfs_pool_take() finds them). */
static bool vsmfs_pool_fits(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool, u64 count)
{
	bool fits;

	spin_lock(&pool->lock);
	if (pool->vsp)
		vsmfs_pool_ripen(sbi, pool);
	fits = pool->vsp && vsmfs_pool_run(pool, count) < VSMFS_VSP_PAGES;
	spin_unlock(&pool->lock);
	return fits;
}

/*
 * Reserve for @pool the free pages with frames of the VSP it keeps to,
 * those it does not hold yet, up to vsmfs_pool_max() in all, a bitmap
 * word at a time: the bits of each page are set with the word in hand,
 * not looked for again. Return: the pages reserved.
 * Context: s_trans_mutex held, allocations GFP_NOFS.
 */
static unsigned int vsmfs_pool_fill(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool)
{
	unsigned long got[BITS_TO_LONGS(VSMFS_VSP_PAGES)] = { 0 };
	u64 first = vsmfs_pool_base(pool), vsp = pool->vsp - 1;
	u64 last = min_t(u64, first + VSMFS_VSP_PAGES, sbi->s_layout.lpages);
	u64 base = first - first % BITS_PER_BLK, p;
	unsigned int n = 0, most;
	struct vsmfs_mblk *mb;
	unsigned long *map;

	/* VSPs and bitmap blocks start on word boundaries. */
	BUILD_BUG_ON(VSMFS_VSP_PAGES % BITS_PER_LONG);
	mb = vsmfs_resv_block(sbi, first);
	if (IS_ERR(mb))
		return 0;
	/* Only this task adds to the pool but vsmfs_pool_put(), which keeps to the bound. */
	spin_lock(&pool->lock);
	most = vsmfs_pool_max(sbi) - min(vsmfs_pool_held(pool), vsmfs_pool_max(sbi));
	spin_unlock(&pool->lock);
	/* Free space counts these pages: never more than it has. */
	most = min_t(u64, most, sbi->s_free_pages);
	map = (unsigned long *)mb->m_data;
	vsmfs_mblk_freeze(sbi, mb);
	for (p = first; p < last && n < most; p += BITS_PER_LONG) {
		u64 w = (p - base) / BITS_PER_LONG;
		unsigned long f = vsmfs_free_framed(sbi, map[w], p, last), taken = 0;

		for (; f && n < most; f &= f - 1, n++)
			taken |= f & -f;
		map[w] |= taken;
		mb->m_resv[w] |= taken;
		got[(p - first) / BITS_PER_LONG] = taken;
	}
	if (!n)
		return 0;
	sbi->s_free_pages -= n;
	vsmfs_vsp_changed(sbi, vsp);
	spin_lock(&pool->lock);
	bitmap_or(pool->map, pool->map, got, VSMFS_VSP_PAGES);
	spin_unlock(&pool->lock);
	return n;
}

/*
 * @pool gives back the pages it holds and keeps to no VSP any more, those
 * a commit not yet durable gave it too: as the pages it freed, they are
 * not taken before it is (s_freeing, vsmfs_wait_freed()).
 * Context: s_trans_mutex held.
 */
static void vsmfs_pool_unclaim(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool)
{
	unsigned long map[BITS_TO_LONGS(VSMFS_VSP_PAGES)];
	unsigned int s, e;
	bool shared;
	u64 base;

	spin_lock(&pool->lock);
	if (!pool->vsp) {
		spin_unlock(&pool->lock);
		return;
	}
	base = vsmfs_pool_base(pool);
	shared = pool->shared;
	bitmap_or(map, pool->map, pool->pend, VSMFS_VSP_PAGES);
	bitmap_zero(pool->map, VSMFS_VSP_PAGES);
	bitmap_zero(pool->pend, VSMFS_VSP_PAGES);
	pool->pend_tid = 0;
	pool->vsp = 0;
	pool->shared = false;
	spin_unlock(&pool->lock);
	if (!shared)
		__clear_bit(base / VSMFS_VSP_PAGES, sbi->s_vsp_pooled);
	for_each_set_bitrange(s, e, map, VSMFS_VSP_PAGES)
		vsmfs_resv_put(sbi, base + s, e - s);
}

/*
 * Refill @pool (this CPU's, unless the task moved), with the mutex held,
 * so that it serves @count pages in a row, unless free space is short:
 * with the free pages of its VSP first (a commit freed there the scratch
 * pages of the overwrites it served). If they do not serve, and the pool
 * is empty or down to a quarter of a VSP, it gives back what it holds and
 * takes the first partly used VSP at the small-run cursor that no other
 * pool keeps to and that has such a run (for a single page, any VSP if all
 * are kept), and its free pages. Each fresh page of a write lies in its
 * CPU's VSP, and so does the scratch page that takes its old frame until
 * the commit frees it back there: the swaps of writers on different CPUs
 * change entries of different page table blocks, with their changed-word
 * masks, and different kernel page table lines, rather than sharing them.
 *
 * Context: s_trans_mutex held, allocations GFP_NOFS.
 */
static void vsmfs_pool_refill(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool,
			      u64 count)
{
	bool shared;
	u64 first, vsp;

	if (vsmfs_pool_low(sbi) || count > vsmfs_pool_max(sbi))
		return;
	WRITE_ONCE(sbi->s_pools_on, true);
	if (pool->vsp) {
		if (vsmfs_pool_fill(sbi, pool))
			vsmfs_stat_inc(sbi, alloc_pool_refills);
		/* A quarter of a VSP still held, read without the lock, is enough to keep it. */
		if (vsmfs_pool_fits(sbi, pool, count) ||
		    vsmfs_pool_held(pool) > VSMFS_VSP_PAGES / 4)
			return;
	}
	/*
	 * Partly used VSPs first (vsmfs_find_small()), so that those with
	 * frames in order stay whole for large files. Another pool's VSP only
	 * when no other has a free page.
	 */
	if (vsmfs_find_small(sbi, count, count, &first, NULL, sbi->s_vsp_pooled) &&
	    (count > 1 || vsmfs_find_small(sbi, 1, 1, &first, NULL, NULL)))
		return;
	vsmfs_pool_unclaim(sbi, pool);
	vsp = first / VSMFS_VSP_PAGES;
	shared = __test_and_set_bit(vsp, sbi->s_vsp_pooled);
	if (shared)
		vsmfs_stat_inc(sbi, alloc_pool_shared_vsp);
	spin_lock(&pool->lock);
	pool->vsp = vsp + 1;
	pool->shared = shared;
	spin_unlock(&pool->lock);
	if (vsmfs_pool_fill(sbi, pool))
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
 * The pool that keeps to VSP @vsp - 1, if one does: the one a commit last
 * gave pages back to, this CPU's, then any. Read without the pools'
 * locks: a pool's VSP changes only under s_trans_mutex, held here.
 */
static struct vsmfs_page_pool *vsmfs_pool_of(struct vsmfs_sb_info *sbi, u64 vsp)
{
	struct vsmfs_page_pool *pool = sbi->s_pool_hint;
	int cpu;

	if (pool && pool->vsp == vsp)
		return pool;
	pool = raw_cpu_ptr(sbi->s_pools);
	if (pool->vsp != vsp) {
		pool = NULL;
		for_each_possible_cpu(cpu)
			if (per_cpu_ptr(sbi->s_pools, cpu)->vsp == vsp) {
				pool = per_cpu_ptr(sbi->s_pools, cpu);
				break;
			}
	}
	if (pool)
		sbi->s_pool_hint = pool;
	return pool;
}

/*
 * A scratch run @f, reserved whole, each page with a frame (the file's old
 * frames of an overwrite), goes back to the pool that keeps to its VSP
 * rather than to the bitmap, reserved as it is: in @pend until the commit
 * is durable (vsmfs_pool_ripen()), then handed out again without
 * s_trans_mutex, to a writer on the CPU whose writes freed it. The
 * bitmap, its overlay and free space do not change: the pages were never
 * in the bitmap on PM, and pooled pages are out of s_free_pages already.
 * Return: whether the pool took the run.
 * Context: s_trans_mutex held, in the commit (vsmfs_trans_apply_frees()),
 * before s_run.tid moves past the committing transaction. The mutex keeps
 * s_pools_on and every pool's @vsp as they are; the pool's lock is for
 * the pages its writers take meanwhile.
 */
static bool vsmfs_pool_recycle(struct vsmfs_sb_info *sbi, const struct vsmfs_free_run *f)
{
	struct vsmfs_page_pool *pool;
	bool took = false;

	if (f->resv != f->count || f->frames != f->count || !sbi->s_pools_on ||
	    vsmfs_pool_low(sbi))
		return false;
	pool = vsmfs_pool_of(sbi, f->lpn / VSMFS_VSP_PAGES + 1);
	if (!pool)
		return false;
	spin_lock(&pool->lock);
	if (vsmfs_pool_held(pool) + f->count <= vsmfs_pool_max(sbi)) {
		bitmap_set(pool->pend, f->lpn - vsmfs_pool_base(pool), f->count);
		pool->pend_tid = sbi->s_run.tid;
		took = true;
	}
	spin_unlock(&pool->lock);
	if (took)
		vsmfs_stat_add(sbi, alloc_pool_recycled, f->count);
	return took;
}

/*
 * A run @f the commit frees outright (pages a truncation or a delete gave
 * up: their bits are set on PM), each page with a frame, goes to the pool
 * that keeps to its VSP as vsmfs_pool_recycle() gives it scratch runs,
 * into @pend until the commit is durable. The commit still writes the
 * pages free, but as a reservation does: their bits set in the bitmap's
 * overlay, which every version the journal writes leaves out
 * (vsmfs_mblk_commit_view()), and noted for the delta; in DRAM they stay
 * set, so nothing else takes them. They were out of s_free_pages while in
 * use and stay out while pooled; the VSP's use, as DRAM counts it, does
 * not change. Ordering: the version of the bitmap block without these
 * bits is written and committed in the journal's order (jcommit.c) as for
 * any freed run; a page is written again only after s_commit_tid reached
 * this commit, i.e. after the fence that made it durable (pool ripen).
 * Return: whether the pool took the run.
 * Context: as vsmfs_pool_recycle().
 */
static bool vsmfs_pool_recycle_freed(struct vsmfs_trans *t, const struct vsmfs_free_run *f)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 off = f->lpn % BITS_PER_BLK;
	struct vsmfs_page_pool *pool;
	struct vsmfs_mblk *mb;
	bool took = false;

	if (!f->count || f->frames != f->count || !sbi->s_pools_on || vsmfs_pool_low(sbi))
		return false;
	pool = vsmfs_pool_of(sbi, f->lpn / VSMFS_VSP_PAGES + 1);
	if (!pool)
		return false;
	mb = vsmfs_lbitmap(sbi, f->lpn);
	/*
	 * Anything odd is vsmfs_lbits_clear()'s to report. A page still
	 * reserved (its overlay bit set) is claimed by a run of this same
	 * commit, which may come later in its list (the CPUs' shares are
	 * joined in their order): the claim would clear the overlay bit set
	 * here and leave the page in use on PM while the pool hands it out.
	 * vsmfs_lbits_clear() gives the same result in either order.
	 */
	if (IS_ERR(mb) || off + f->count > BITS_PER_BLK ||
	    find_next_zero_bit((unsigned long *)mb->m_data, off + f->count, off) < off + f->count ||
	    (mb->m_resv && find_next_bit(mb->m_resv, off + f->count, off) < off + f->count))
		return false;
	/* A commit writing the block reads the overlay: copied before it changes. */
	vsmfs_mblk_freeze(sbi, mb);
	if (!mb->m_resv)
		WRITE_ONCE(mb->m_resv, kzalloc(VSMFS_BLOCK_SIZE, GFP_NOFS | __GFP_NOFAIL));
	spin_lock(&pool->lock);
	if (vsmfs_pool_held(pool) + f->count <= vsmfs_pool_max(sbi)) {
		bitmap_set(pool->pend, f->lpn - vsmfs_pool_base(pool), f->count);
		pool->pend_tid = sbi->s_run.tid;
		took = true;
	}
	spin_unlock(&pool->lock);
	if (!took)
		return false;
	bitmap_set(mb->m_resv, off, f->count);
	vsmfs_note_bits(mb, off, f->count);
	vsmfs_trans_dirty_commit(t, mb);
	vsmfs_stat_add(sbi, alloc_pool_recycled, f->count);
	return true;
}

/*
 * Keep free logical page @lpn, whose frame is bad, from use until unmount:
 * reserved in DRAM as a run no one ends (its bit set in the bitmap and the
 * overlay), so that the allocator skips it while every version the journal
 * writes, and so every later mount, has it free (the mount retires it
 * again from the bad-frame list, vsmfs_resv_retire()). A page a pool holds
 * leaves the pool, still reserved.
 *
 * Context: s_trans_mutex held; in a commit too, so it neither waits for
 * freed pages nor fails for want of memory.
 * Return: whether @lpn is retired (it was free or pooled).
 */
static bool __vsmfs_retire(struct vsmfs_sb_info *sbi, u64 lpn)
{
	struct vsmfs_mblk *mb = vsmfs_lbitmap(sbi, lpn);
	u64 off = lpn % BITS_PER_BLK, vsp = lpn / VSMFS_VSP_PAGES + 1;
	bool done = false;
	int cpu;

	if (IS_ERR(mb) || !lpn)
		return false;
	if (!test_bit(off, (unsigned long *)mb->m_data)) {
		vsmfs_mblk_freeze(sbi, mb);
		if (!mb->m_resv)
			WRITE_ONCE(mb->m_resv, kzalloc(VSMFS_BLOCK_SIZE, GFP_NOFS | __GFP_NOFAIL));
		vsmfs_resv_add(sbi, mb, lpn, 1);
		vsmfs_stat_inc(sbi, mf_retired);
		return true;
	}
	for_each_possible_cpu(cpu) {
		struct vsmfs_page_pool *pool = per_cpu_ptr(sbi->s_pools, cpu);

		spin_lock(&pool->lock);
		if (pool->vsp == vsp) {
			u64 i = lpn - vsmfs_pool_base(pool);

			if (test_and_clear_bit(i, pool->map) | test_and_clear_bit(i, pool->pend))
				done = true;
		}
		spin_unlock(&pool->lock);
	}
	if (done)
		vsmfs_stat_inc(sbi, mf_retired);
	return done;
}

/* Retire the pages of a freed run that are on bad frames. Context: as __vsmfs_retire(). */
static void vsmfs_retire_run(struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	u64 i;

	for (i = 0; i < count; i++)
		if (vsmfs_blk_bad(sbi, vsmfs_lpn_blk(sbi, lpn + i)))
			__vsmfs_retire(sbi, lpn + i);
}

/**
 * vsmfs_resv_retire() - keep a logical page on a bad frame from use
 * @sbi: the file system
 * @lpn: the page
 *
 * A free page, or one a page pool holds, is retired at once, until
 * unmount; a page in use is retired when it is freed (the commit that
 * frees it, or the end of a reservation, finds its frame bad).
 *
 * Context: process context; takes s_trans_mutex.
 * Return: whether the page was free and is retired now.
 */
bool vsmfs_resv_retire(struct vsmfs_sb_info *sbi, u64 lpn)
{
	unsigned int nofs;
	bool ret;

	vsmfs_trans_mutex_lock(sbi);
	nofs = memalloc_nofs_save();
	ret = __vsmfs_retire(sbi, lpn);
	memalloc_nofs_restore(nofs);
	mutex_unlock(&sbi->s_trans_mutex);
	return ret;
}

/* Whether any of logical pages [@lpn, @lpn + @count) is on a bad frame. */
static bool vsmfs_run_bad(struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	return vsmfs_any_bad(sbi) && count && vsmfs_first_bad(sbi, lpn, count) < count;
}

/*
 * End a reservation nothing took over, to the bitmap, its pages on bad
 * frames retired. Context: s_trans_mutex held.
 */
static void vsmfs_resv_put_retire(struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	vsmfs_resv_put(sbi, lpn, count);
	if (vsmfs_run_bad(sbi, lpn, count))
		vsmfs_retire_run(sbi, lpn, count);
}

/*
 * Give back reserved pages [@lpn, @lpn + @count) that hold nothing
 * reachable: to @pool if it takes them, else to the bitmap, under
 * s_trans_mutex, and pages on bad frames retired. Context: process
 * context, no handle running in the task. Return: whether @pool took them.
 */
static bool vsmfs_resv_give_back(struct vsmfs_sb_info *sbi, struct vsmfs_page_pool *pool,
				 u64 lpn, u64 count)
{
	if (!vsmfs_run_bad(sbi, lpn, count) && vsmfs_pool_put(sbi, pool, lpn, count))
		return true;
	vsmfs_trans_mutex_lock(sbi);
	vsmfs_resv_put_retire(sbi, lpn, count);
	mutex_unlock(&sbi->s_trans_mutex);
	return false;
}

/*
 * Whether the committing handle may keep whole scratch run @f (a
 * reservation whose pages took a file's old frames, vsmfs_free_run_plain()
 * false), or any such run if @f is NULL, for vsmfs_alloc_free_late(): no
 * page on a bad frame, with pools in use and free space not short, which a
 * pool takes back as vsmfs_pool_recycle() would, but once the commit is
 * durable, into the pages it hands out, and with no lock but the pool's.
 * Context: as vsmfs_alloc_free_run().
 */
static bool vsmfs_alloc_late_ok(struct vsmfs_sb_info *sbi, const struct vsmfs_free_run *f)
{
	if (!sbi->s_pools_on || vsmfs_pool_low(sbi))
		return false;
	return f ? !vsmfs_run_bad(sbi, f->lpn, f->count) : !vsmfs_any_bad(sbi);
}

/* The pool that keeps to @vsp, this CPU's first; looked for without the locks. */
static struct vsmfs_page_pool *vsmfs_pool_near(struct vsmfs_sb_info *sbi, u64 vsp)
{
	struct vsmfs_page_pool *pool = raw_cpu_ptr(sbi->s_pools);
	int cpu;

	/* As vsmfs_pool_of(); vsmfs_pool_put() checks under the pool's lock. */
	if (READ_ONCE(pool->vsp) != vsp) {
		for_each_possible_cpu(cpu)
			if (READ_ONCE(per_cpu_ptr(sbi->s_pools, cpu)->vsp) == vsp)
				return per_cpu_ptr(sbi->s_pools, cpu);
	}
	return pool;
}

/* Runs given back to the bitmap under one hold of s_trans_mutex. */
#define VSMFS_LATE_BATCH	64

/*
 * The commit that freed the @n scratch runs @f (vsmfs_alloc_late_ok()) is
 * durable: their pages go to the pool that keeps to their VSP, this CPU's
 * first, if it has room (vsmfs_pool_put() checks both under the pool's
 * lock, as a pool may have moved to another VSP or been drained since the
 * commit let s_trans_mutex go); else to the bitmap, under s_trans_mutex
 * taken once for up to VSMFS_LATE_BATCH of them, and pages on frames
 * found bad meanwhile retired. Space short meanwhile, the pages were out
 * of s_free_pages for that while, as they were in the reservation. @f is
 * the caller's to reuse after. Context: process context, no lock held.
 */
static void vsmfs_alloc_free_late(struct vsmfs_sb_info *sbi, struct vsmfs_free_run *f,
				  unsigned int n)
{
	struct vsmfs_page_pool *pool = NULL;
	unsigned int i, j, left = 0;
	u64 vsp = 0, recycled = 0;

	for (i = 0; i < n; i++) {
		if (f[i].lpn / VSMFS_VSP_PAGES + 1 != vsp) {
			vsp = f[i].lpn / VSMFS_VSP_PAGES + 1;
			pool = vsmfs_pool_near(sbi, vsp);
		}
		if (!vsmfs_run_bad(sbi, f[i].lpn, f[i].count) &&
		    vsmfs_pool_put(sbi, pool, f[i].lpn, f[i].count))
			recycled += f[i].count;
		else
			f[left++] = f[i];
	}
	if (recycled)
		vsmfs_stat_add(sbi, alloc_pool_recycled, recycled);
	for (i = 0; i < left; i = j) {
		vsmfs_trans_mutex_lock(sbi);
		for (j = i; j < left && j < i + VSMFS_LATE_BATCH; j++)
			vsmfs_resv_put_retire(sbi, f[j].lpn, f[j].count);
		mutex_unlock(&sbi->s_trans_mutex);
		cond_resched();
	}
}

/*
 * The committing handle frees in DRAM run @f of its transaction: a
 * reservation ends (claimed, or a scratch run behind old frames, which
 * goes back to its pool if it can), else the run's bits are cleared (an
 * error is the bitmap's, reported by vsmfs_fs_error()). Freed pages on
 * bad frames are retired (never back to a pool).
 */
static void vsmfs_alloc_free_run(struct vsmfs_trans *t, const struct vsmfs_free_run *f)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	bool bad = vsmfs_run_bad(sbi, f->lpn, f->count);

	if (!bad && f->resv && f->scratch && vsmfs_pool_recycle(sbi, f))
		return;
	if (!bad && !f->resv && !f->scratch && vsmfs_pool_recycle_freed(t, f))
		return;
	if (f->resv)
		vsmfs_resv_end(t, f->lpn, f->resv, !f->scratch);
	else
		vsmfs_lbits_clear(t, f->lpn, f->count, !f->scratch);
	if (bad)
		vsmfs_retire_run(sbi, f->lpn, f->count);
}

/* What the transactions ask of the allocator (vsmfs.h). */
static const struct vsmfs_trans_aops vsmfs_alloc_trans_aops = {
	.handle_begin	= vsmfs_alloc_handle_begin,
	.free_run	= vsmfs_alloc_free_run,
	.late_ok	= vsmfs_alloc_late_ok,
	.free_late	= vsmfs_alloc_free_late,
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
	for_each_possible_cpu(cpu)
		vsmfs_pool_unclaim(sbi, per_cpu_ptr(sbi->s_pools, cpu));
}

/**
 * vsmfs_pool_count() - pages the per-CPU pools hold
 * @sbi: the file system
 *
 * Return: the sum, read without the pools' locks (for statfs).
 */
u64 vsmfs_pool_count(struct vsmfs_sb_info *sbi)
{
	u64 n = 0;
	int cpu;

	if (!READ_ONCE(sbi->s_pools_on))
		return 0;
	for_each_possible_cpu(cpu)
		n += vsmfs_pool_held(per_cpu_ptr(sbi->s_pools, cpu));
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
		struct vsmfs_page_pool *pool = per_cpu_ptr(sbi->s_pools, cpu);

		pool->vsp = 0;
		pool->shared = false;
		bitmap_zero(pool->map, VSMFS_VSP_PAGES);
		bitmap_zero(pool->pend, VSMFS_VSP_PAGES);
		pool->pend_tid = 0;
	}
	sbi->s_pool_hint = NULL;
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
 * (vsmfs_wait_freed()). The pages of a small file's run come from the
 * CPU's page pool, refilled when it has no such run.
 *
 * Context: process context; takes s_trans_mutex unless the pool has the
 * pages (vsmfs_pool_take()).
 * Return: 0, -ENOSPC or -ENOMEM.
 */
int vsmfs_resv_take(struct vsmfs_sb_info *sbi, u64 count, unsigned int large,
		    struct vsmfs_resv *r)
{
	/* Any CPU's pool will do if the task moves: its lock guards it. */
	struct vsmfs_page_pool *pool = raw_cpu_ptr(sbi->s_pools);
	unsigned int nofs;
	bool got = false;
	u64 t0;
	int ret;

	if (!large && !vsmfs_pool_take(sbi, pool, &r->lpn, count, false))
		goto pooled;
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
	/* The pages from the refilled pool, in the VSP it keeps to. */
	if (!large) {
		vsmfs_pool_refill(sbi, pool, count);
		got = !vsmfs_pool_take(sbi, pool, &r->lpn, count, false);
	}
	ret = got ? 0 : vsmfs_resv_get(sbi, count, large, r);
	memalloc_nofs_restore(nofs);
	vsmfs_hold_end(sbi, t0);
	mutex_unlock(&sbi->s_trans_mutex);
	if (!got)
		return ret;
pooled:
	r->count = count;
	if (count == 1)
		vsmfs_stat_inc(sbi, alloc_pool_pages);
	else
		vsmfs_stat_inc(sbi, alloc_pool_runs);
	return 0;
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
 * Context: process context; takes s_trans_mutex unless the pages are in
 * this CPU's pool (vsmfs_pool_take()).
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
	/*
	 * The pages in this CPU's pool (reserved, with frames); pages of its
	 * VSP it does not hold are most likely in use: not looked for again.
	 */
	ret = vsmfs_pool_take(sbi, raw_cpu_ptr(sbi->s_pools), &lpn, count, true);
	if (!ret) {
		r->lpn = lpn;
		r->count = count;
		vsmfs_stat_inc(sbi, alloc_pool_runs);
		return 0;
	}
	if (ret == -ENOSPC)
		return ret;
	/*
	 * Pages in use seen without the mutex (a page freed meanwhile is
	 * only not grown into): the pages after a small file's run are most
	 * often another file's.
	 */
	mb = vsmfs_lbitmap(sbi, lpn);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	if (find_next_bit((unsigned long *)mb->m_data, off + count, off) < off + count)
		return -ENOSPC;
	ret = -ENOSPC;
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
 * vsmfs_whandle_claim() - let a shared handle allocate a reserved run
 * @h: the handle, begun with a free entry and a credit for the run's
 *	bitmap block (vsmfs_whandle_begin())
 * @r: the reservation, from vsmfs_resv_take()
 *
 * As vsmfs_resv_claim(): the bitmap block joins the running transaction
 * now, unchanged; the run becomes allocated in the versions the journal
 * writes when the transaction commits, which ends the reservation (the
 * handle hands it to the transaction as it ends, vsmfs_whandle_end()).
 * Called once nothing else the handle does can fail.
 *
 * Return: 0, or a negative errno with the reservation still the caller's.
 */
int vsmfs_whandle_claim(struct vsmfs_whandle *h, const struct vsmfs_resv *r)
{
	struct vsmfs_mblk *mb = vsmfs_lbitmap(h->h_sbi, r->lpn);
	int ret;

	if (IS_ERR(mb))
		return PTR_ERR(mb);
	ret = vsmfs_whandle_dirty(h, mb);
	if (!ret)
		h->h_claim = *r;
	return ret;
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
 * Pages of the VSP the CPU's pool keeps to go back to it if it has room.
 *
 * Context: process context, no handle running in the task; takes
 * s_trans_mutex unless the page goes back to the pool.
 */
void vsmfs_resv_release(struct vsmfs_sb_info *sbi, const struct vsmfs_resv *r)
{
	vsmfs_resv_give_back(sbi, raw_cpu_ptr(sbi->s_pools), r->lpn, r->count);
}
