// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs allocation of logical pages: the page bitmap, a metadata block
 * changed under the running transaction, its search, and the runs handles
 * allocate, reserve for themselves and free. Reservations outside any
 * handle and the per-CPU page pools are in resv.c, i-numbers in ialloc.c.
 *
 * Policy for logical pages: a run never crosses a virtual superpage (VSP).
 * Runs for large files start at a wholly free, aligned VSP, so they can
 * grow in place to a full superpage. Runs for small files are taken first
 * fit from VSPs already in use, so free VSPs are not broken up while
 * partly used ones have room.
 *
 * A run can also be reserved for one handle alone (vsmfs_reserve_pages()):
 * its bits are set in the DRAM copy of the bitmap without dirtying the
 * block, and cleared again by the commit of the running transaction before
 * it writes any block (vsmfs_unreserve_pages()), so a bitmap block whose
 * only change was such a run is not journaled. Handles change DRAM one at
 * a time (under s_trans_mutex, which a commit holds until its journal
 * blocks are written or frozen copies of them taken), and a bitmap block
 * reaches PM only through the journal blocks of a commit, so the reserved
 * bits never reach PM. Freed runs, too, are cleared only by the commit
 * (vsmfs_free_pages(), vsmfs_lbits_clear() through the transactions' call
 * back, resv.c). Runs reserved outside any handle (resv.c) outlive commits.
 *
 * On a sparse file system some logical pages have no frame (s_noframe).
 * Free space is counted in frames: s_free_pages is the number of free
 * logical pages that have one, and the runs handed out for data and
 * metadata are runs of such pages. Free pages without a frame are taken
 * only by vsmfs_reserve_holes(), to give frames back (hole punching).
 */
#include <linux/bitmap.h>
#include <linux/wait_bit.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include "vsmfs.h"
#include "ptable.h"
#include "ialloc.h"
#include "mcache.h"
#include "vsp.h"
#include "trans.h"
#include "fault.h"
#include "alloc.h"

static u64 vsmfs_count_free(struct vsmfs_sb_info *sbi, u64 start, u64 nbits)
{
	u64 used = 0, b;

	for (b = 0; b * BITS_PER_BLK < nbits; b++) {
		const unsigned long *map = vsmfs_pm_view(vsmfs_blk_ptr(sbi, start + b));

		used += bitmap_weight(map, min(nbits - b * BITS_PER_BLK, BITS_PER_BLK));
	}
	return nbits - used;
}

/* Free logical pages without a frame, which free space does not count. */
static u64 vsmfs_count_free_holes(struct vsmfs_sb_info *sbi)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 n = 0, lpn;

	if (!sbi->s_noframe)
		return 0;
	for (lpn = find_first_bit(sbi->s_noframe, l->lpages); lpn < l->lpages;
	     lpn = find_next_bit(sbi->s_noframe, l->lpages, lpn + 1)) {
		const unsigned long *map = vsmfs_pm_view(vsmfs_blk_ptr(sbi, l->lbitmap_start +
								       lpn / BITS_PER_BLK));

		n += !test_bit(lpn % BITS_PER_BLK, map);
	}
	return n;
}

/*
 * Mark the VSPs that have both pages in use and free pages with frames
 * (s_vsp_partly), from the bitmap on PM, a word at a time.
 */
static void vsmfs_vsp_partly_init(struct vsmfs_sb_info *sbi)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 vsp, p;

	for (vsp = 0; vsp * VSMFS_VSP_PAGES < l->lpages; vsp++) {
		u64 first = vsp * VSMFS_VSP_PAGES;
		u64 last = min_t(u64, first + VSMFS_VSP_PAGES, l->lpages);
		const unsigned long *map = vsmfs_pm_view(vsmfs_blk_ptr(sbi, l->lbitmap_start +
								       first / BITS_PER_BLK));
		unsigned long used = 0, avail = 0;

		for (p = first; p < last; p += BITS_PER_LONG) {
			unsigned long in = map[p % BITS_PER_BLK / BITS_PER_LONG];

			if (last - p < BITS_PER_LONG)
				in &= BIT(last - p) - 1;
			used |= in;
			avail |= vsmfs_free_framed(sbi, in, p, last);
		}
		/* Free VSPs with frames out of order too: for single pages. */
		if (avail && (used || test_bit(vsp, sbi->s_vsp_mixed)))
			__set_bit(vsp, sbi->s_vsp_partly);
	}
}

/**
 * vsmfs_alloc_init() - count free pages and inodes
 * @sbi: the file system, journal replayed
 *
 * Logical page 0 and i-number 0 name nothing: mkfs marks them in use, and
 * an image where either is free is refused, as the allocators would hand
 * them out.
 *
 * Return: 0, -EINVAL for such an image, or -ENOMEM.
 */
int vsmfs_alloc_init(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_layout *l = &sbi->s_layout;
	unsigned int cpu;

	if (!test_bit(0, vsmfs_pm_view(vsmfs_blk_ptr(sbi, l->lbitmap_start))) ||
	    !test_bit(0, vsmfs_pm_view(vsmfs_blk_ptr(sbi, l->ibitmap_start)))) {
		vsmfs_err(sbi->s_sb, "corrupt bitmaps: logical page 0 or inode 0 marked free");
		return -EINVAL;
	}

	sbi->s_vsp_partly = bitmap_zalloc(DIV_ROUND_UP(l->lpages, VSMFS_VSP_PAGES), GFP_KERNEL);
	sbi->s_vsp_pooled = bitmap_zalloc(DIV_ROUND_UP(l->lpages, VSMFS_VSP_PAGES), GFP_KERNEL);
	if (!sbi->s_vsp_partly || !sbi->s_vsp_pooled) {
		vsmfs_alloc_destroy(sbi);
		return -ENOMEM;
	}
	vsmfs_vsp_partly_init(sbi);
	sbi->s_free_pages = vsmfs_count_free(sbi, l->lbitmap_start, l->lpages) -
			    vsmfs_count_free_holes(sbi);
	sbi->s_small_cursor = 0;
	sbi->s_vsp_cursor = 0;
	sbi->s_ino_cursors = alloc_percpu(u64);
	if (!sbi->s_ino_cursors ||
	    percpu_counter_init(&sbi->s_free_inodes,
				vsmfs_count_free(sbi, l->ibitmap_start, l->inodes), GFP_KERNEL)) {
		vsmfs_alloc_destroy(sbi);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu)
		per_cpu(*sbi->s_ino_cursors, cpu) = vsmfs_ino_region(sbi, cpu);
	return 0;
}

/**
 * vsmfs_alloc_destroy() - free what vsmfs_alloc_init() set up
 * @sbi: the file system, being torn down
 */
void vsmfs_alloc_destroy(struct vsmfs_sb_info *sbi)
{
	bitmap_free(sbi->s_vsp_partly);
	sbi->s_vsp_partly = NULL;
	bitmap_free(sbi->s_vsp_pooled);
	sbi->s_vsp_pooled = NULL;
	percpu_counter_destroy(&sbi->s_free_inodes);
	free_percpu(sbi->s_ino_cursors);
	sbi->s_ino_cursors = NULL;
}

/**
 * vsmfs_alloc_bits_restored() - an aborted handle put bitmap words back
 * @sbi: the file system
 * @blk: the block they are in
 * @off: their first byte in it
 * @len: their bytes
 *
 * The words may free pages again in VSPs the search passed over as full.
 *
 * Context: s_trans_mutex held.
 */
void vsmfs_alloc_bits_restored(struct vsmfs_sb_info *sbi, u64 blk, unsigned int off,
			       unsigned int len)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 first, last;

	if (!sbi->s_vsp_partly || blk < l->lbitmap_start ||
	    (blk - l->lbitmap_start) * BITS_PER_BLK >= l->lpages || !len)
		return;
	first = (blk - l->lbitmap_start) * BITS_PER_BLK + off * 8ULL;
	last = min_t(u64, first + len * 8ULL, l->lpages) - 1;
	bitmap_set(sbi->s_vsp_partly, first / VSMFS_VSP_PAGES,
		   last / VSMFS_VSP_PAGES - first / VSMFS_VSP_PAGES + 1);
}

/**
 * vsmfs_wait_freed() - wait for the commits whose freed pages are not yet free
 * @sbi: the file system
 *
 * Pages freed by a commit that released s_trans_mutex before it was
 * durable (journal_commit=parallel) are free in DRAM at once, but until that
 * commit a crash gives them back to their files: no data may be written
 * into them before it. The same holds for the scratch pages of a
 * copy-on-write, given back with the old frames behind them. So a
 * transaction that takes pages first waits for every such commit to end
 * (vsmfs_journal_commit_trans() counts them in s_freeing). Under s_trans_mutex
 * no new one can begin, and commits in flight need neither it nor
 * anything this transaction holds.
 */
void vsmfs_wait_freed(struct vsmfs_sb_info *sbi)
{
	/* Acquire: pairs with the full barrier of the commit's decrement. */
	if (likely(!atomic_read_acquire(&sbi->s_freeing)))
		return;
	vsmfs_stat_inc(sbi, alloc_free_waits);
	if (!vsmfs_spin_until(!atomic_read_acquire(&sbi->s_freeing), VSMFS_COMMIT_SPIN_NS))
		wait_var_event(&sbi->s_freeing, !atomic_read_acquire(&sbi->s_freeing));
}

/*
 * Set or clear @count bits from @lpn (within one VSP) in the page bitmap;
 * the block joins the transaction if @dirty.
 */
static int vsmfs_lbits(struct vsmfs_trans *t, u64 lpn, u64 count, bool set, bool dirty)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	unsigned long *map;
	u64 off = lpn % BITS_PER_BLK, i;
	int ret;

	/* Pages are allocated under s_trans_mutex only (every path ends here). */
	if (t->t_shared)
		return -EAGAIN;
	mb = vsmfs_lbitmap(sbi, lpn);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	/* A run inside one VSP never crosses a bitmap block. */
	if (WARN_ON_ONCE(off + count > BITS_PER_BLK))
		return -EFSCORRUPTED;
	map = (unsigned long *)mb->m_data;
	for (i = 0; i < count; i++) {
		if (test_bit(off + i, map) == set) {
			vsmfs_fs_error(sbi->s_sb, 0, "logical page %llu already %s", lpn + i,
				       set ? "in use" : "free");
			return -EFSCORRUPTED;
		}
	}
	/* The bitmap words of the run. */
	ret = vsmfs_trans_get_write_access_range(t, mb, off / BITS_PER_LONG * 8,
						 (round_up(off + count, BITS_PER_LONG) -
						  round_down(off, BITS_PER_LONG)) / 8);
	if (ret)
		return ret;
	if (set) {
		vsmfs_wait_freed(sbi);
		bitmap_set(map, off, count);
	} else {
		bitmap_clear(map, off, count);
	}
	vsmfs_vsp_changed(sbi, lpn / VSMFS_VSP_PAGES);
	if (dirty)
		vsmfs_trans_dirty(t, mb);
	if (set)
		sbi->s_free_pages -= vsmfs_frames_in(sbi, lpn, count);
	else
		sbi->s_free_pages += vsmfs_frames_in(sbi, lpn, count);
	return 0;
}

/**
 * vsmfs_alloc_pages_at() - allocate a given run of logical pages
 * @t: running transaction
 * @lpn: first page
 * @count: pages; the run must not cross a VSP
 *
 * Return: 0, -ENOSPC if any page is in use, or another negative errno.
 */
int vsmfs_alloc_pages_at(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	u64 off = lpn % BITS_PER_BLK;

	if (!count || lpn + count > sbi->s_layout.lpages ||
	    lpn / VSMFS_VSP_PAGES != (lpn + count - 1) / VSMFS_VSP_PAGES)
		return -ENOSPC;
	mb = vsmfs_lbitmap(sbi, lpn);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	if (find_next_bit((unsigned long *)mb->m_data, off + count, off) < off + count ||
	    !vsmfs_framed(sbi, lpn, count))
		return -ENOSPC;
	return vsmfs_lbits(t, lpn, count, true, true);
}

/* The pages a run is to be made of. */
enum vsmfs_run_kind {
	VSMFS_RUN_FRAMED,	/* pages with frames */
	VSMFS_RUN_HOLES,	/* pages without */
	VSMFS_RUN_ANY,		/* either */
};

/*
 * The first free run of pages of @kind within VSP @vsp that is at least
 * @need pages long, cut at @most pages: its first page (its length in
 * @got if not NULL), or 0.
 */
static u64 vsmfs_find_run(struct vsmfs_sb_info *sbi, u64 vsp, u64 need, u64 most,
			  enum vsmfs_run_kind kind, u64 *got)
{
	u64 first = vsp * VSMFS_VSP_PAGES;
	u64 last = min_t(u64, first + VSMFS_VSP_PAGES, sbi->s_layout.lpages);
	struct vsmfs_mblk *mb = vsmfs_lbitmap(sbi, first);
	unsigned long *map;
	u64 base = first - first % BITS_PER_BLK, pos, end;

	if (IS_ERR(mb))
		return 0;
	map = (unsigned long *)mb->m_data;
	pos = first - base;
	end = last - base;
	while (pos + need <= end) {
		u64 z = find_next_zero_bit(map, end, pos), o, k;

		if (z + need > end)
			return 0;
		o = find_next_bit(map, min_t(u64, end, z + most), z);
		if (o < z + need) {
			pos = o + 1;
			continue;
		}
		/* Pages [z, o) free: now those of the kind wanted from z. */
		if (sbi->s_noframe && kind != VSMFS_RUN_ANY) {
			k = kind == VSMFS_RUN_HOLES ?
			    find_next_zero_bit(sbi->s_noframe, base + o, base + z) :
			    find_next_bit(sbi->s_noframe, base + o, base + z);
			if (k < base + z + need) {
				/* On from the next page of the kind wanted. */
				k = kind == VSMFS_RUN_HOLES ?
				    find_next_bit(sbi->s_noframe, base + end, k) :
				    find_next_zero_bit(sbi->s_noframe, base + end, k);
				pos = k - base;
				continue;
			}
			o = k - base;
		}
		if (got)
			*got = o - z;
		return base + z;
	}
	return 0;
}

static bool vsmfs_vsp_free(struct vsmfs_sb_info *sbi, u64 vsp)
{
	u64 first = vsp * VSMFS_VSP_PAGES;
	struct vsmfs_mblk *mb;

	if (first + VSMFS_VSP_PAGES > sbi->s_layout.lpages ||
	    !vsmfs_framed(sbi, first, VSMFS_VSP_PAGES))
		return false;
	mb = vsmfs_lbitmap(sbi, first);
	if (IS_ERR(mb))
		return false;
	return find_next_bit((unsigned long *)mb->m_data,
			     first % BITS_PER_BLK + VSMFS_VSP_PAGES,
			     first % BITS_PER_BLK) >= first % BITS_PER_BLK + VSMFS_VSP_PAGES;
}

/**
 * vsmfs_find_small() - find a free run for a small file
 * @sbi: the file system
 * @need: fewest pages
 * @most: most pages
 * @lpn: the run's first page, found
 * @got: its length, if not NULL
 * @skip: VSPs to pass over, or NULL
 *
 * The first free run of pages with frames at least @need and at most
 * @most pages long (@got: its length, if not NULL), for a small file's run:
 * first fit in partly used VSPs, then anywhere, passing over the VSPs set
 * in @skip (if not NULL). Moves the small-run cursor.
 *
 * Partly used VSPs are looked for among those s_vsp_partly marks (found
 * so at mount, or changed since), from the cursor on: one found wholly
 * free, or without a free page, is taken off it, so that a search does not
 * pass over the same full or empty VSPs again (on a large device, each of
 * them would cost a bitmap scan for every refill of a page pool). A
 * change of a VSP's bits marks it again. Single pages (a page pool's
 * refill) also take wholly free VSPs whose frames are out of order
 * (s_vsp_mixed), which stay marked: copy-on-write of single pages, which
 * swaps the frames of its scratch pages with the file's, then stirs the
 * frames of VSPs it stirred before, and leaves VSPs with frames in order
 * for large runs, which are then reached through the device mapping.
 *
 * Context: s_trans_mutex held.
 * Return: 0 or -ENOSPC.
 */
int vsmfs_find_small(struct vsmfs_sb_info *sbi, u64 need, u64 most, u64 *lpn,
		     u64 *got, const unsigned long *skip)
{
	u64 nvsp = DIV_ROUND_UP(sbi->s_layout.lpages, VSMFS_VSP_PAGES);
	u64 cur = sbi->s_small_cursor % nvsp, i, vsp, from, to, found;
	unsigned long *partly = sbi->s_vsp_partly;

	if (!need || need > most)
		return -ENOSPC;
	/* Partly used VSPs first: from the cursor to the end, then before it. */
	for (i = 0; i < 2; i++) {
		from = i ? 0 : cur;
		to = i ? cur : nvsp;
		for (vsp = find_next_bit(partly, to, from); vsp < to;
		     vsp = find_next_bit(partly, to, vsp + 1)) {
			bool mixed = test_bit(vsp, sbi->s_vsp_mixed);

			if (skip && test_bit(vsp, skip))
				continue;
			if ((need > 1 || !mixed) && vsmfs_vsp_free(sbi, vsp)) {
				if (!mixed)
					__clear_bit(vsp, partly);
				continue;
			}
			found = vsmfs_find_run(sbi, vsp, need, most, VSMFS_RUN_FRAMED, got);
			if (found) {
				sbi->s_small_cursor = vsp;
				*lpn = found;
				return 0;
			}
			if (need == 1)
				__clear_bit(vsp, partly);
		}
	}
	/* Then any. */
	for (i = 0; i < nvsp; i++) {
		vsp = (cur + i) % nvsp;
		if (skip && test_bit(vsp, skip))
			continue;
		found = vsmfs_find_run(sbi, vsp, need, most, VSMFS_RUN_FRAMED, got);
		if (found) {
			sbi->s_small_cursor = vsp;
			*lpn = found;
			return 0;
		}
	}
	return -ENOSPC;
}

/*
 * With huge=1g: move the cursor of large runs to the first of 512 VSPs in
 * a row, wholly free, whose frames are one run starting 1 GiB aligned in
 * physical memory (a file that fills them from a GiB of its own is mapped
 * with one PUD, dax.c), unless it is at one already. None free: the
 * cursor stays, and the file is mapped with 2 MiB pages.
 * Context: s_trans_mutex held.
 */
static void vsmfs_place_gib(struct vsmfs_sb_info *sbi)
{
	const u64 per = PUD_SIZE >> VSMFS_VSP_SHIFT, pud_pages = PUD_SIZE >> PAGE_SHIFT;
	u64 nvsp = sbi->s_layout.data_pages / VSMFS_VSP_PAGES, v0, j, blk0;

	/* Under mkfs's mapping VSP v has the frames from v * 512: start there. */
	v0 = ((pud_pages - sbi->s_frame_pfn0 % pud_pages) % pud_pages) / VSMFS_VSP_PAGES;
	for (; v0 + per <= nvsp; v0 += per) {
		blk0 = vsmfs_lpn_blk(sbi, v0 * VSMFS_VSP_PAGES);
		if (!blk0 || (sbi->s_dev_pfn + blk0) % pud_pages)
			continue;
		if (v0 == sbi->s_vsp_cursor && vsmfs_vsp_free(sbi, v0))
			return;
		for (j = 0; j < per; j++)
			if (test_bit(v0 + j, sbi->s_vsp_mixed) || !vsmfs_vsp_free(sbi, v0 + j) ||
			    !vsmfs_vsp_frames_from(sbi, v0 + j, blk0 + j * VSMFS_VSP_PAGES))
				break;
		if (j == per) {
			sbi->s_vsp_cursor = v0;
			return;
		}
		cond_resched();
	}
}

/**
 * vsmfs_find_free() - find a free run of pages with frames
 * @sbi: the file system
 * @count: pages
 * @large: for a large file (true), its piece at a GiB of the file
 *	(VSMFS_LARGE_GIB), or not (false)
 * @lpn: the run's first page, found
 *
 * Find a free run of @count pages: for a large file at a wholly free VSP
 * (with huge=1g, a piece at a GiB of the file at the first of a GiB of
 * VSPs a 1 GiB page can map, where one is free: vsmfs_place_gib()), else
 * as vsmfs_find_small(). Moves the cursors.
 *
 * Context: s_trans_mutex held.
 * Return: 0, -ENOSPC or -ENOMEM.
 */
int vsmfs_find_free(struct vsmfs_sb_info *sbi, u64 count, unsigned int large, u64 *lpn)
{
	u64 nvsp = DIV_ROUND_UP(sbi->s_layout.lpages, VSMFS_VSP_PAGES);
	u64 i, vsp;

	if (large == VSMFS_LARGE_GIB && READ_ONCE(sbi->s_huge_pud))
		vsmfs_place_gib(sbi);

	if (!count || count > VSMFS_VSP_PAGES || count > sbi->s_free_pages)
		return -ENOSPC;
	if (vsmfs_fault(VSMFS_FAULT_PAGE_ALLOC))
		return -ENOMEM;
	if (large) {
		/* The VSPs with frames in order first, then the others (s_vsp_mixed). */
		for (i = 0; i < 2 * nvsp; i++) {
			bool second = i >= nvsp;

			vsp = (sbi->s_vsp_cursor + i) % nvsp;
			if (test_bit(vsp, sbi->s_vsp_mixed) != second)
				continue;
			if (vsmfs_vsp_free(sbi, vsp)) {
				sbi->s_vsp_cursor = vsp + 1;
				*lpn = vsp * VSMFS_VSP_PAGES;
				return 0;
			}
		}
	}
	return vsmfs_find_small(sbi, count, count, lpn, NULL, NULL);
}

static int __vsmfs_alloc_pages(struct vsmfs_trans *t, u64 count, unsigned int large, u64 *lpn,
			       bool dirty)
{
	int ret;

	/* The search moves the allocation cursors: not beside others either. */
	if (t->t_shared)
		return -EAGAIN;
	ret = vsmfs_find_free(t->t_sbi, count, large, lpn);

	return ret ?: vsmfs_lbits(t, *lpn, count, true, dirty);
}

/**
 * vsmfs_alloc_pages() - allocate a run of logical pages
 * @t: running transaction
 * @count: pages, 1..VSMFS_VSP_PAGES
 * @large: the run belongs to a large file: start it at a free VSP (as
 *	vsmfs_find_free())
 * @lpn: first page of the run
 *
 * Return: 0, -ENOSPC, or another negative errno.
 */
int vsmfs_alloc_pages(struct vsmfs_trans *t, u64 count, unsigned int large, u64 *lpn)
{
	return __vsmfs_alloc_pages(t, count, large, lpn, true);
}

/**
 * vsmfs_reserve_pages() - take a run of logical pages for this transaction only
 * @t: running transaction
 * @count: pages, 1..VSMFS_VSP_PAGES
 * @lpn: first page of the run
 *
 * The run is taken as vsmfs_alloc_pages() takes a small file's run, but the
 * bitmap block does not join the transaction: the caller gives the run back
 * with vsmfs_unreserve_pages() before the transaction commits, so the
 * bitmap on PM never records it. For a scratch run that is free again when
 * the transaction ends.
 *
 * Return: 0, -ENOSPC, or another negative errno.
 */
int vsmfs_reserve_pages(struct vsmfs_trans *t, u64 count, u64 *lpn)
{
	return __vsmfs_alloc_pages(t, count, false, lpn, false);
}

/*
 * A free run of @count logical pages of @kind (without frames, or any),
 * or 0. The search starts past the frames, where mkfs left the pages
 * without any.
 */
static u64 vsmfs_find_holes(struct vsmfs_sb_info *sbi, u64 count, enum vsmfs_run_kind kind)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 nvsp = DIV_ROUND_UP(l->lpages, VSMFS_VSP_PAGES), i, found;

	if (!sbi->s_noframe || !count || count > VSMFS_VSP_PAGES)
		return 0;
	for (i = 0; i < nvsp; i++) {
		found = vsmfs_find_run(sbi, (l->data_pages / VSMFS_VSP_PAGES + i) % nvsp,
				       count, count, kind, NULL);
		if (found)
			return found;
	}
	return 0;
}

/**
 * vsmfs_reserve_holes() - take free logical pages without frames for this
 *	transaction only
 * @t: running transaction
 * @count: pages wanted, 1..VSMFS_VSP_PAGES
 * @lpn: first page of the run taken
 * @got: pages taken, up to @count (fewer if free space without frames is
 *	scattered)
 *
 * As vsmfs_reserve_pages(), for pages without frames (sparse file systems):
 * the frames a hole punch swaps into them are free once the transaction
 * commits, when vsmfs_unreserve_pages() gives them back.
 *
 * Return: 0, or -ENOSPC if no free page without a frame is left.
 */
int vsmfs_reserve_holes(struct vsmfs_trans *t, u64 count, u64 *lpn, u64 *got)
{
	u64 found;

	for (; count; count /= 2) {
		found = vsmfs_find_holes(t->t_sbi, count, VSMFS_RUN_HOLES);
		if (found) {
			*lpn = found;
			*got = count;
			return vsmfs_lbits(t, found, count, true, false);
		}
	}
	return -ENOSPC;
}

/**
 * vsmfs_reserve_frames() - take free logical pages with frames, to give
 *	their frames to holes, for this transaction only
 * @t: running transaction
 * @count: pages, 1..VSMFS_VSP_PAGES
 * @lpn: first page of the run taken
 *
 * As vsmfs_reserve_pages(), but searching first past the frames mkfs
 * placed, where hole punching leaves the frames it gives back: the pages
 * left without frames there do not break up the runs that files take.
 *
 * Return: 0, or -ENOSPC if no such run is free.
 */
int vsmfs_reserve_frames(struct vsmfs_trans *t, u64 count, u64 *lpn)
{
	u64 found = count <= t->t_sbi->s_free_pages ?
		    vsmfs_find_holes(t->t_sbi, count, VSMFS_RUN_FRAMED) : 0;

	if (!found)
		return -ENOSPC;
	*lpn = found;
	return vsmfs_lbits(t, found, count, true, false);
}

/**
 * vsmfs_alloc_holes() - allocate a run of logical pages, frames or not
 * @t: running transaction
 * @count: pages, 1..VSMFS_VSP_PAGES
 * @lpn: first page of the run
 *
 * For a file's run whose pages get frames only where they are written
 * (vsmfs_fill_holes()): a run of pages without frames if one is free,
 * which leaves free space untouched, else any free run, whose pages with
 * frames (vsmfs_frames_in()) are taken from free space.
 *
 * Return: 0, -ENOSPC if no such run is free, or another negative errno.
 */
int vsmfs_alloc_holes(struct vsmfs_trans *t, u64 count, u64 *lpn)
{
	u64 found = vsmfs_find_holes(t->t_sbi, count, VSMFS_RUN_HOLES);

	if (!found)
		found = vsmfs_find_holes(t->t_sbi, count, VSMFS_RUN_ANY);

	if (!found)
		return -ENOSPC;
	*lpn = found;
	return vsmfs_lbits(t, found, count, true, true);
}

/**
 * vsmfs_alloc_holes_at() - allocate a given run of logical pages without frames
 * @t: running transaction
 * @lpn: first page
 * @count: pages; the run must not cross a VSP
 *
 * Return: 0, -ENOSPC if any page is in use or has a frame, or another
 * negative errno.
 */
int vsmfs_alloc_holes_at(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	u64 off = lpn % BITS_PER_BLK;

	if (!sbi->s_noframe || !count || lpn + count > sbi->s_layout.lpages ||
	    lpn / VSMFS_VSP_PAGES != (lpn + count - 1) / VSMFS_VSP_PAGES ||
	    find_next_zero_bit(sbi->s_noframe, lpn + count, lpn) < lpn + count)
		return -ENOSPC;
	mb = vsmfs_lbitmap(sbi, lpn);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	if (find_next_bit((unsigned long *)mb->m_data, off + count, off) < off + count)
		return -ENOSPC;
	return vsmfs_lbits(t, lpn, count, true, true);
}

/**
 * vsmfs_unreserve_pages() - give back a run taken by vsmfs_reserve_pages()
 * @t: the handle that reserved it
 * @lpn: first page
 * @count: pages, as reserved
 *
 * The pages were free when the handle began and never held metadata in
 * it, so the journal has no version of them to revoke. But a copy-on-write
 * may have swapped them with a file's pages: they then reach the file's
 * old frames, which a crash before the commit gives back to the file. So
 * they stay taken until the running transaction commits, which clears
 * their bits before it writes any bitmap block (vsmfs_trans_defer_free()),
 * and no data is written into them before that commit is durable
 * (vsmfs_wait_freed()).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_unreserve_pages(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	int ret;

	if (!lpn || !count || lpn + count > t->t_sbi->s_layout.lpages ||
	    lpn / VSMFS_VSP_PAGES != (lpn + count - 1) / VSMFS_VSP_PAGES) {
		vsmfs_fs_error(t->t_sbi->s_sb, 0, "unreserving bad run %llu+%llu", lpn, count);
		return -EFSCORRUPTED;
	}
	/* Free pages are never marked unwritten (a swap may have brought it). */
	ret = vsmfs_pt_unwritten(t, lpn, count, false);
	return ret ?: vsmfs_trans_defer_free(t, lpn, count, true);
}

static int __vsmfs_free_pages(struct vsmfs_trans *t, u64 lpn, u64 count, bool meta)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	u64 off = lpn % BITS_PER_BLK;
	int ret;

	/*
	 * A shared metadata handle frees data pages (no journal version to
	 * forget): it changes no bit, only notes the run (vsmfs_trans_defer())
	 * and adds the bitmap block, whose bits the commit clears.
	 */
	if (t->t_shared && meta)
		return -EAGAIN;
	if (!lpn || !count || lpn + count > sbi->s_layout.lpages ||
	    lpn / VSMFS_VSP_PAGES != (lpn + count - 1) / VSMFS_VSP_PAGES) {
		vsmfs_fs_error(sbi->s_sb, 0, "freeing bad run %llu+%llu", lpn, count);
		return -EFSCORRUPTED;
	}
	mb = vsmfs_lbitmap(sbi, lpn);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	if (find_next_zero_bit((unsigned long *)mb->m_data, off + count, off) < off + count) {
		vsmfs_fs_error(sbi->s_sb, 0, "freeing free logical pages %llu+%llu", lpn, count);
		return -EFSCORRUPTED;
	}
	/*
	 * The bitmap block joins the transaction now, so that the handle
	 * counts it (vsmfs_trans_room()); the commit changes it. Free pages
	 * are never marked unwritten.
	 */
	ret = vsmfs_pt_unwritten(t, lpn, count, false);
	if (!ret && !t->t_shared)
		ret = vsmfs_trans_get_write_access_range(t, mb, 0, 0);
	if (!ret)
		ret = vsmfs_trans_defer_free(t, lpn, count, false);
	if (ret)
		return ret;
	vsmfs_trans_dirty(t, mb);
	/* Metadata versions of the pages are never to be written over them. */
	if (meta)
		vsmfs_journal_forget(t, lpn, count);
	return 0;
}

/**
 * vsmfs_free_pages() - free a run of logical pages
 * @t: the handle
 * @lpn: first page
 * @count: pages; the run must not cross a VSP
 *
 * The pages hold what a crash before the commit gives back to their file:
 * they are freed when the running transaction commits
 * (vsmfs_trans_defer_free()).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_free_pages(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	return __vsmfs_free_pages(t, lpn, count, true);
}

/**
 * vsmfs_free_data_pages() - free a run of a regular file's data pages
 * @t: the handle
 * @lpn: first page
 * @count: pages; the run must not cross a VSP
 *
 * As vsmfs_free_pages(), for pages that held file data and nothing else
 * since they were allocated. A page has no metadata version in the
 * journal or in a transaction once it is free (vsmfs_journal_forget() ran
 * when it was freed as metadata, and recovery writes every version home),
 * and file data never gets one: the journal has nothing to forget, and a
 * freed superpage costs no walk over its 512 pages (as for the scratch
 * pages of vsmfs_unreserve_pages()).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_free_data_pages(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	return __vsmfs_free_pages(t, lpn, count, false);
}

/**
 * vsmfs_lbits_clear() - clear a run's bits in the page bitmap at commit
 * @t: the handle committing the running transaction
 * @lpn: first page
 * @count: pages, within one VSP
 * @dirty: the bitmap block joins the transaction (not for scratch runs,
 *	which the bitmap on PM never had)
 *
 * A commit cannot fail for want of memory: no undo copy is taken (the
 * committing handle is never aborted), and the words changed are noted for
 * the delta directly. The bitmap block was read when the run was taken, so
 * it is cached.
 */
void vsmfs_lbits_clear(struct vsmfs_trans *t, u64 lpn, u64 count, bool dirty)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb = vsmfs_lbitmap(sbi, lpn);
	u64 off = lpn % BITS_PER_BLK;
	unsigned long *map;

	if (IS_ERR(mb) || off + count > BITS_PER_BLK) {
		vsmfs_fs_error(sbi->s_sb, 0, "cannot free logical pages %llu+%llu", lpn, count);
		return;
	}
	map = (unsigned long *)mb->m_data;
	if (find_next_zero_bit(map, off + count, off) < off + count) {
		vsmfs_fs_error(sbi->s_sb, 0, "logical pages %llu+%llu already free", lpn, count);
		return;
	}
	vsmfs_mblk_freeze(sbi, mb);
	bitmap_clear(map, off, count);
	vsmfs_note_bits(mb, off, count);
	vsmfs_vsp_changed(sbi, lpn / VSMFS_VSP_PAGES);
	if (dirty)
		vsmfs_trans_dirty_commit(t, mb);
	sbi->s_free_pages += vsmfs_frames_in(sbi, lpn, count);
}
