// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs allocation of logical pages and i-numbers, from bitmaps that are
 * metadata blocks changed under the running transaction.
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
 * (vsmfs_free_pages()). Runs reserved outside any handle, by writes that
 * copy their data first (vsmfs_resv_take()), outlive commits: their bits
 * are also set in an overlay of the block (m_resv) that keeps them out of
 * every version the journal writes (vsmfs_mblk_commit_view()).
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
#include "fault.h"

#define BITS_PER_BLK	(VSMFS_BLOCK_SIZE * 8ULL)

static struct vsmfs_mblk *vsmfs_lbitmap(struct vsmfs_sb_info *sbi, u64 lpn)
{
	return vsmfs_mblk_get(sbi, sbi->s_layout.lbitmap_start + lpn / BITS_PER_BLK);
}

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

/* Whether @count pages from @lpn all have frames. */
static bool vsmfs_framed(struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	return !sbi->s_noframe ||
	       find_next_bit(sbi->s_noframe, lpn + count, lpn) >= lpn + count;
}

/*
 * Of the bitmap word @in holding the bits of pages [@p, @p + BITS_PER_LONG)
 * (@p word-aligned), the free pages with frames below @last.
 */
static unsigned long vsmfs_free_framed(struct vsmfs_sb_info *sbi, unsigned long in, u64 p,
				       u64 last)
{
	unsigned long f = ~in;

	if (last - p < BITS_PER_LONG)
		f &= BIT(last - p) - 1;
	if (sbi->s_noframe)
		f &= ~sbi->s_noframe[p / BITS_PER_LONG];
	return f;
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

/* I-numbers in a cache line of the inode bitmap. */
#define VSMFS_INO_CHUNK		(64 * BITS_PER_BYTE)

/*
 * Where CPU @cpu starts looking for free i-numbers: the i-numbers are cut
 * in one region per possible CPU, each a whole number of cache lines of
 * the inode bitmap (VSMFS_INO_CHUNK i-numbers), so that CPUs creating side
 * by side set bits in bitmap lines, and fill inode-table blocks, of their
 * own. A CPU whose region is full goes on into the next ones; where there
 * are too few i-numbers for a region each, regions are shared.
 */
static u64 vsmfs_ino_region(struct vsmfs_sb_info *sbi, unsigned int cpu)
{
	u64 n = sbi->s_layout.inodes;
	u64 per = max_t(u64, rounddown(div_u64(n, nr_cpu_ids), VSMFS_INO_CHUNK), VSMFS_INO_CHUNK);
	u64 start;

	div64_u64_rem(per * cpu, n, &start);
	return max_t(u64, start, VSMFS_ROOT_INO);
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
	/* Reservations live in the DRAM bitmaps, which go with the mount. */
	vsmfs_pool_forget(sbi);
}

/*
 * The page bits of VSP @vsp changed: the small-run search looks at it
 * again (s_vsp_partly). Context: s_trans_mutex held.
 */
static void vsmfs_vsp_changed(struct vsmfs_sb_info *sbi, u64 vsp)
{
	__set_bit(vsp, sbi->s_vsp_partly);
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

/*
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
static void vsmfs_wait_freed(struct vsmfs_sb_info *sbi)
{
	/* Acquire: pairs with the full barrier of the commit's decrement. */
	if (likely(!atomic_read_acquire(&sbi->s_freeing)))
		return;
	vsmfs_stat_inc(sbi, alloc_free_waits);
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

/*
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
 */
static int vsmfs_find_small(struct vsmfs_sb_info *sbi, u64 need, u64 most, u64 *lpn,
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
 * Find a free run of @count pages: for a large file at a wholly free VSP,
 * else as vsmfs_find_small(). Moves the cursors.
 */
static int vsmfs_find_free(struct vsmfs_sb_info *sbi, u64 count, bool large, u64 *lpn)
{
	u64 nvsp = DIV_ROUND_UP(sbi->s_layout.lpages, VSMFS_VSP_PAGES);
	u64 i, vsp;

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

static int __vsmfs_alloc_pages(struct vsmfs_trans *t, u64 count, bool large, u64 *lpn,
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
 * @large: the run belongs to a large file: start it at a free VSP
 * @lpn: first page of the run
 *
 * Return: 0, -ENOSPC, or another negative errno.
 */
int vsmfs_alloc_pages(struct vsmfs_trans *t, u64 count, bool large, u64 *lpn)
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
 * (vsmfs_fill_holes_t()): a run of pages without frames if one is free,
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
	ret = vsmfs_pt_unwritten_t(t, lpn, count, false);
	return ret ?: vsmfs_trans_defer_free(t, lpn, count, true);
}

static int __vsmfs_free_pages(struct vsmfs_trans *t, u64 lpn, u64 count, bool meta)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	u64 off = lpn % BITS_PER_BLK;
	int ret;

	if (t->t_shared)
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
	ret = vsmfs_pt_unwritten_t(t, lpn, count, false);
	if (!ret)
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

/*
 * Note for the delta the 8-byte words of bitmap block @mb holding bits
 * [@off, @off + @count), changed without an undo copy to compare with.
 */
static void vsmfs_note_bits(struct vsmfs_mblk *mb, u64 off, u64 count)
{
	u64 w;

	for (w = off / 64; w <= (off + count - 1) / 64; w++)
		mb->m_cmask[w / 64] |= 1ULL << (w % 64);
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
static void vsmfs_alloc_free_run(struct vsmfs_trans *t, const struct vsmfs_frun *f)
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
 * Context: process context; takes s_trans_mutex unless the pool has a page.
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
	/*
	 * Commits in flight that freed pages end without s_trans_mutex: they
	 * are waited for before it is taken, so that the tasks queued on it
	 * do not sleep behind a holder that sleeps (one that begins freeing
	 * meanwhile is waited for under the mutex, vsmfs_resv_block()).
	 */
	vsmfs_wait_freed(sbi);
	mutex_lock(&sbi->s_trans_mutex);
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
 * Context: process context; takes s_trans_mutex.
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
	/* As vsmfs_resv_take(). */
	vsmfs_wait_freed(sbi);
	mutex_lock(&sbi->s_trans_mutex);
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
	int ret = claimed ? 0 : vsmfs_pt_unwritten_t(t, r->lpn, r->count, false);

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
	mutex_lock(&sbi->s_trans_mutex);
	vsmfs_resv_put(sbi, r->lpn, r->count);
	mutex_unlock(&sbi->s_trans_mutex);
}

static int vsmfs_ibit(struct vsmfs_trans *t, u64 ino, bool set)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	int ret;

	/* Shared handles: vsmfs_alloc_ino_shared(), vsmfs_free_ino(). */
	if (WARN_ON_ONCE(t->t_shared))
		return -EAGAIN;
	mb = vsmfs_mblk_get(sbi, sbi->s_layout.ibitmap_start + ino / BITS_PER_BLK);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	if (test_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data) == set) {
		vsmfs_fs_error(sbi->s_sb, ino, "inode already %s", set ? "in use" : "free");
		return -EFSCORRUPTED;
	}
	ret = vsmfs_trans_get_write_access_range(t, mb, ino % BITS_PER_BLK / BITS_PER_LONG * 8, 8);
	if (ret)
		return ret;
	/* No shared handle runs beside this one: plain bit operations. */
	if (set) {
		__set_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data);
		percpu_counter_dec(&sbi->s_free_inodes);
		t->t_ino_delta--;
	} else {
		__clear_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data);
		percpu_counter_inc(&sbi->s_free_inodes);
		t->t_ino_delta++;
	}
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/*
 * Find a free i-number from the cursor of the CPU the task runs on
 * (vsmfs_ino_region()) on, around to it again. In a shared handle the
 * bit is taken with an atomic set, as other shared handles take bits of
 * the same words beside it with no lock; under s_trans_mutex it is only
 * found, for vsmfs_ibit() to set. The cursor is a hint that the tasks on
 * one CPU read and move with no lock (a shared handle keeps its task on
 * the CPU: vsmfs_trans_begin_shared()).
 *
 * Return: 0 with @*ino and its bitmap block in @*mbp, or a negative errno.
 */
static int vsmfs_ino_find(struct vsmfs_trans *t, u64 *ino, struct vsmfs_mblk **mbp)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 *cursor = raw_cpu_ptr(sbi->s_ino_cursors);
	u64 n = sbi->s_layout.inodes, start = READ_ONCE(*cursor), i;

	/*
	 * Summed over the CPUs only near zero, so that a full file system is
	 * not scanned by every create; exact under s_trans_mutex.
	 */
	if (percpu_counter_compare(&sbi->s_free_inodes, 1) < 0)
		return -ENOSPC;
	if (start >= n)
		start = 0;
	for (i = 0; i < n; ) {
		u64 cand = start + i < n ? start + i : start + i - n;
		u64 base = cand - cand % BITS_PER_BLK, lim = min(n - base, BITS_PER_BLK), z;
		struct vsmfs_mblk *mb;
		unsigned long *map;

		mb = vsmfs_mblk_get(sbi, sbi->s_layout.ibitmap_start + cand / BITS_PER_BLK);
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		if (t->t_shared)
			vsmfs_mblk_freeze(sbi, mb);
		map = (unsigned long *)mb->m_data;
		z = cand - base;
		while ((z = find_next_zero_bit(map, lim, z)) < lim) {
			if (!t->t_shared || !test_and_set_bit(z, map)) {
				*ino = base + z;
				*mbp = mb;
				WRITE_ONCE(*cursor, *ino + 1);
				return 0;
			}
			z++;
		}
		i += lim - (cand - base);
	}
	return -ENOSPC;
}

/*
 * vsmfs_alloc_ino() in a shared metadata handle: the bit set atomically
 * (vsmfs_ino_find()) and the free count per CPU, with no lock. The
 * handle notes the word it changed at once (a word another handle
 * changes too is written by the commit all the same) and, if it is
 * aborted, clears just its bit (vsmfs_trans_abort_shared()).
 */
static int vsmfs_alloc_ino_shared(struct vsmfs_trans *t, u64 *ino)
{
	struct vsmfs_mblk *mb;
	int ret;

	if (WARN_ON_ONCE(t->t_ino))
		return -EFSCORRUPTED;
	ret = vsmfs_ino_find(t, ino, &mb);
	if (ret)
		return ret;
	percpu_counter_dec(&t->t_sbi->s_free_inodes);
	vsmfs_note_word_shared(mb, *ino % BITS_PER_BLK / 64);
	t->t_ino = *ino;
	t->t_ino_mb = mb;
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/**
 * vsmfs_alloc_ino() - allocate an i-number
 * @t: running transaction
 * @ino: the i-number
 *
 * Return: 0, -ENOSPC, or another negative errno.
 */
int vsmfs_alloc_ino(struct vsmfs_trans *t, u64 *ino)
{
	struct vsmfs_mblk *mb;
	int ret;

	if (t->t_shared)
		return vsmfs_alloc_ino_shared(t, ino);
	ret = vsmfs_ino_find(t, ino, &mb);
	return ret ?: vsmfs_ibit(t, *ino, true);
}

/**
 * vsmfs_free_ino() - free an i-number
 * @t: running transaction
 * @ino: the i-number
 *
 * In a shared metadata handle (vsmfs_evict_inode()) the bit is cleared at
 * once, and a create beside it may take the i-number: this must be the
 * handle's last change, with no abort after it.
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_free_ino(struct vsmfs_trans *t, u64 ino)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;

	if (!t->t_shared)
		return vsmfs_ibit(t, ino, false);
	mb = vsmfs_mblk_get(sbi, sbi->s_layout.ibitmap_start + ino / BITS_PER_BLK);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	vsmfs_mblk_freeze(sbi, mb);
	/* Atomic: other shared handles take and free bits of the word. */
	if (!test_and_clear_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data)) {
		vsmfs_fs_error(sbi->s_sb, ino, "inode already free");
		return -EFSCORRUPTED;
	}
	t->t_ino_freed = true;
	percpu_counter_inc(&sbi->s_free_inodes);
	vsmfs_note_word_shared(mb, ino % BITS_PER_BLK / 64);
	vsmfs_trans_dirty(t, mb);
	return 0;
}
