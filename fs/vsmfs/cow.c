// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs copy-on-write of data=atomic and run growth: the worst case of the
 * metadata a copy-on-write transaction dirties and the length of an atomic
 * write it bounds, the copy of whole runs and of single pages
 * (vsmfs_cow_whole(), vsmfs_cow_fine()), the staged write of a piece
 * through a scratch run (vsmfs_write_staged()), the staged append
 * (vsmfs_write_append()), the atomic write itself
 * (vsmfs_write_atomic()), and the growth of a piece's run
 * (vsmfs_extend_run(), vsmfs_write_new()), which data=inplace writes,
 * DAX faults and fallocate share.
 *
 * Ordering: the PM store ordering of an atomic write is given at
 * vsmfs_write_atomic(), that of the staged write at vsmfs_write_staged(),
 * that of the staged append at vsmfs_write_append(), and each helper
 * that writes PM states its own beside its code. New pages written by
 * vsmfs_write_new() become reachable only when the caller's transaction
 * commits, after a fence.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include "vsmfs.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "data.h"

/*
 * Whether a write of [@wfrom, @wto) into a piece whose run has @have
 * pages, growing it to @need, skips whole pages past the run that a
 * sparse file system leaves without frames (@wfrom == @wto: pages from
 * @wfrom on are allocated, zeroed, and none written).
 */
static bool vsmfs_sparse_gap(struct vsmfs_sb_info *sbi, u64 have, u64 need, u64 wfrom, u64 wto)
{
	u64 first = wfrom >> VSMFS_BLOCK_SHIFT;

	return sbi->s_noframe && wto >= wfrom && first > have &&
	       READ_ONCE(sbi->s_free_pages) >= need - first;
}

/*
 * Whether a run growing from @have to @need pages, finding no free run that
 * long, may take its frames one by one wherever they are free (a sparse file
 * system, which needs no contiguous frames): each may cost a page table
 * block, and the running transaction keeps room for the rest of any
 * handle, half the journal, besides.
 */
static bool vsmfs_gather_ok(struct vsmfs_trans *t, u64 have, u64 need)
{
	return t->t_sbi->s_noframe && READ_ONCE(t->t_sbi->s_free_pages) >= need - have &&
	       vsmfs_trans_room(t) >= vsmfs_trans_max_blocks(t->t_sbi) / 2 + 2 * (need - have);
}

/**
 * vsmfs_extend_sparse() - grow a run with pages without frames
 * @t: the transaction
 * @inode: a regular file on a sparse file system
 * @lpn: the run's first logical page
 * @have: its pages (may be 0)
 * @need: the pages it is to have
 * @wfrom: byte offset in the piece of the first page to give a frame
 *	(@need << VSMFS_BLOCK_SHIFT for none)
 * @zfdm: the run must move (vsmfs_extend_run())
 * @nlpn: where the run is now
 *
 * Grow the run from @have to @need pages with pages without frames, in
 * place or in a new run into which the old one is moved, and give frames
 * (zeroed) to the pages from the one @wfrom is in: the pages skipped stay
 * holes. The caller sets the index entry.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: 0 or a negative errno; on error nothing has changed that the
 * caller sees (the handle may hold undone allocations, freed by its
 * commit).
 */
int vsmfs_extend_sparse(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 have,
			u64 need, u64 wfrom, bool zfdm, u64 *nlpn)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 first = wfrom >> VSMFS_BLOCK_SHIFT, pages = vi->i_pages, i;
	u64 old = have ? vsmfs_frames_in(sbi, lpn, have) : 0;
	bool in_place = have && !zfdm && lpn % VSMFS_VSP_PAGES + need <= VSMFS_VSP_PAGES &&
			!vsmfs_alloc_holes_at(t, lpn + have, need - have);
	struct vsmfs_swap sw;
	int ret;

	if (in_place) {
		*nlpn = lpn;
	} else {
		ret = vsmfs_alloc_holes(t, need, nlpn);
		if (ret)
			return ret;
	}
	/*
	 * New pages that came with frames (free space without a run of pages
	 * without): those skipped give them up, the others keep them, zeroed,
	 * as do skipped ones for which no page without a frame is left.
	 */
	if (first > have && vsmfs_frames_in(sbi, *nlpn + have, min(first, need) - have)) {
		ret = vsmfs_punch_frames_t(t, inode, *nlpn + have, min(first, need) - have, &i);
		if (ret)
			goto out;
	}
	for (i = have; i < need; i++)
		if (!vsmfs_lpn_hole(sbi, *nlpn + i))
			vsmfs_zero_pm(vsmfs_lpn_ptr(sbi, *nlpn + i), VSMFS_BLOCK_SIZE);
	/* The written pages first: the old run moves only once they have frames. */
	ret = vsmfs_fill_holes_t(t, inode, *nlpn + first, need - first, false);
	if (!ret && !in_place && have) {
		vsmfs_swap_init(t->t_sbi, &sw);
		ret = vsmfs_swap_pages(t, &sw, lpn, *nlpn, have);
		if (!ret) {
			ret = vsmfs_free_data_pages(t, lpn, have);
			/* The index still names @lpn: its frames go back. */
			if (ret)
				vsmfs_swap_pages(t, &sw, lpn, *nlpn, have);
		}
		vsmfs_swap_flush(&sw);
		if (!ret) {
			vsmfs_stat_inc(t->t_sbi, zfdm_migrations);
			vsmfs_stat_add(t->t_sbi, zfdm_migrated_pages, have);
		}
	}
out:
	if (ret) {
		/* Frames given to the new pages go back with them. */
		/* A run left allocated would be no file's: the handle fails. */
		if (in_place)
			vsmfs_trans_fail(t, vsmfs_free_data_pages(t, lpn + have, need - have));
		else
			vsmfs_trans_fail(t, vsmfs_free_data_pages(t, *nlpn, need));
		vi->i_pages = pages;
	} else {
		/* The file owns the frames of its new run now, and no longer the old's. */
		vi->i_pages = pages - old + vsmfs_frames_in(sbi, *nlpn, need);
	}
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return ret;
}

/*
 * Make the new run of @need pages at @nlpn, just allocated, the run of
 * piece @key, moving into it the @have pages of the old one at @lpn: its
 * frames are swapped in, and the old pages freed. On error the new run is
 * freed and nothing has changed.
 */
static int vsmfs_move_run(struct vsmfs_trans *t, struct inode *inode, u64 key, u64 lpn,
			  u64 nlpn, u64 have, u64 need)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_swap sw;
	int ret;

	vi->i_pages += need;
	if (!have)
		return 0;
	/* Move the run: swap its frames in, free the old pages. */
	vsmfs_swap_init(sbi, &sw);
	ret = vsmfs_swap_pages(t, &sw, lpn, nlpn, have);
	if (!ret) {
		ret = vsmfs_free_data_pages(t, lpn, have);
		/*
		 * The index still names @lpn: its frames go back (the page
		 * table blocks are cached now, so this swap cannot fail).
		 */
		if (ret)
			vsmfs_swap_pages(t, &sw, lpn, nlpn, have);
	}
	vsmfs_swap_flush(&sw);
	if (ret) {
		/* A run left allocated would be no file's: the handle fails. */
		vsmfs_trans_fail(t, vsmfs_free_data_pages(t, nlpn, need));
		vi->i_pages -= need;
		return ret;
	}
	vi->i_pages -= have;
	trace_vsmfs_zfdm(inode, key, have, true);
	vsmfs_stat_inc(sbi, zfdm_migrations);
	vsmfs_stat_add(sbi, zfdm_migrated_pages, have);
	return 0;
}

/**
 * vsmfs_extend_run() - make the run of a piece cover its first pages
 * @t: the transaction
 * @inode: a regular file
 * @key: the piece
 * @need: pages of the piece the run must cover
 * @wfrom: start of the bytes the caller will fill, in the piece
 * @wto: end of those bytes (exclusive)
 * @large: the file is large (its runs start at free superpages)
 * @runp: the run's first logical page, returned
 * @havep: the pages the run had before, returned
 *
 * Make the run of piece @key cover pages [0, @need) of the piece. New pages
 * outside [@wfrom, @wto) (byte offsets in the piece that the caller will
 * fill) are zeroed. The run's first logical page is returned in @runp, the
 * pages it had before in @havep.
 *
 * Where the run grows (ZFDM): into the reserved tail of its VSP if it owns
 * one; in place if the pages after it are free; otherwise into a new run
 * whose frames are swapped with the old one's (vsmfs_swap_pages()), so file
 * data keeps its frames and no data is copied. A large file whose tail was
 * given back at its last close takes a fresh VSP on its next append the
 * same way, and so does the last run of a small file that grows large. A
 * large file's last run that starts a VSP reserves the rest of it, so
 * further appends grow in place.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: 0 or a negative errno.
 */
int vsmfs_extend_run(struct vsmfs_trans *t, struct inode *inode, u64 key,
		     u64 need, u64 wfrom, u64 wto, bool large, u64 *runp, u64 *havep)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 e = vsmfs_idx_lookup(inode, key);
	u64 have = e ? vsmfs_idx_count(e) : 0, lpn = vsmfs_idx_lpn(e), nlpn, freed;
	bool tail = vi->i_tail_key == key + 1, last = key + 1 >= vi->i_tail_key;
	/*
	 * The last run of a large file moves into a fresh VSP when it has none
	 * of its own: its tail was given back, or it started in a VSP shared
	 * with small files before the file grew large.
	 */
	bool zfdm = large && have && last && !tail &&
		    ((vi->i_flags & VSMFS_IFLAG_TAIL_RELEASED) || lpn % VSMFS_VSP_PAGES);
	bool sparse = false;
	char __pm *base;
	int ret;

	*runp = lpn;
	*havep = have;
	if (have >= need)
		return 0;
	/* Index blocks first: once pages are taken, nothing below can fail. */
	ret = vsmfs_idx_set(t, inode, key, e);
	if (ret)
		return ret;
	if (tail && need > have + vsmfs_tail_pages(e)) {
		ret = vsmfs_tail_release_t(t, inode, &freed);
		if (ret)
			return ret;
		tail = false;
	}
	if (zfdm && lpn % VSMFS_VSP_PAGES == 0 &&
	    !vsmfs_alloc_pages_at(t, lpn + have, VSMFS_VSP_PAGES - have)) {
		/* The rest of the VSP is still free: reserve it again in place. */
		if (vi->i_tail_key) {
			ret = vsmfs_tail_release_t(t, inode, &freed);
			if (ret)
				return ret;
		}
		vi->i_pages += VSMFS_VSP_PAGES - have;
		vi->i_tail_key = key + 1;
		vi->i_flags &= ~VSMFS_IFLAG_TAIL_RELEASED;
		tail = true;
	}
	if (tail) {
		/* Pages of the reserved tail, owned and counted already. */
		nlpn = lpn;
	} else if (vsmfs_sparse_gap(sbi, have, need, wfrom, wto) &&
		   !vsmfs_extend_sparse(t, inode, lpn, have, need, wfrom, zfdm, &nlpn)) {
		/* New pages without frames but those written. */
		sparse = true;
	} else if (have && !zfdm && lpn % VSMFS_VSP_PAGES + need <= VSMFS_VSP_PAGES &&
		   !vsmfs_alloc_pages_at(t, lpn + have, need - have)) {
		/* Grown in place: the run stays inside its VSP. */
		nlpn = lpn;
		vi->i_pages += need - have;
	} else {
		ret = vsmfs_alloc_pages(t, need, large, &nlpn);
		if (ret == -ENOSPC && vsmfs_gather_ok(t, have, need) &&
		    !vsmfs_extend_sparse(t, inode, lpn, have, need,
					 max(wfrom, have << VSMFS_BLOCK_SHIFT), zfdm, &nlpn)) {
			/* No free run that long: frames gathered from all free space. */
			sparse = true;
			vsmfs_stat_inc(sbi, frames_gathered);
			ret = 0;
		} else if (!ret) {
			ret = vsmfs_move_run(t, inode, key, lpn, nlpn, have, need);
		}
		if (ret)
			return ret;
	}
	base = vsmfs_lpn_ptr(sbi, nlpn);
	/*
	 * Zero the new pages around the part the caller fills (on the sparse
	 * way, holes, and pages zeroed when they took frames).
	 */
	if (!sparse && wfrom > have << VSMFS_BLOCK_SHIFT)
		vsmfs_zero_pm(base + (have << VSMFS_BLOCK_SHIFT),
			      wfrom - (have << VSMFS_BLOCK_SHIFT));
	if (!sparse && wto < need << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wto, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm(base + z, (need << VSMFS_BLOCK_SHIFT) - z);
	}
	if (tail && (nlpn + need) % VSMFS_VSP_PAGES == 0) {
		/* The run fills its VSP: nothing is reserved any more. */
		vi->i_tail_key = 0;
	} else if (!tail && large && last && nlpn % VSMFS_VSP_PAGES == 0 &&
		   need < VSMFS_VSP_PAGES &&
		   !vsmfs_alloc_pages_at(t, nlpn + need, VSMFS_VSP_PAGES - need)) {
		/* A large file's last run reserves the rest of its VSP. */
		if (vi->i_tail_key) {
			ret = vsmfs_tail_release_t(t, inode, &freed);
			if (ret) {
				vsmfs_trans_fail(t, vsmfs_free_data_pages(t, nlpn + need,
									  VSMFS_VSP_PAGES - need));
				goto out;
			}
		}
		vi->i_pages += VSMFS_VSP_PAGES - need;
		vi->i_tail_key = key + 1;
		vi->i_flags &= ~VSMFS_IFLAG_TAIL_RELEASED;
	}
out:
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	*runp = nlpn;
	return vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, need));
}

/**
 * vsmfs_write_new() - write into pages of a piece past its run
 * @t: the transaction
 * @inode: a regular file
 * @key: the piece
 * @wfrom: start of the write, in bytes in the piece
 * @wto: end of the write (exclusive)
 * @from: the data
 * @large: the file is large (its runs start at free superpages)
 *
 * Write into pages of piece @key past its run: they are new, so they are
 * written directly and become visible with the transaction. [@wfrom, @wto)
 * are byte offsets in the piece.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: the bytes copied, or a negative errno.
 */
ssize_t vsmfs_write_new(struct vsmfs_trans *t, struct inode *inode, u64 key,
			u64 wfrom, u64 wto, struct iov_iter *from, bool large)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE), run, have;
	size_t n;
	char __pm *p;
	int ret;

	ret = vsmfs_extend_run(t, inode, key, need, wfrom, wto, large, &run, &have);
	/* Pages of the old run written in place need frames. */
	if (!ret && wfrom >> VSMFS_BLOCK_SHIFT < have)
		ret = vsmfs_fill_holes_t(t, inode, run + (wfrom >> VSMFS_BLOCK_SHIFT),
					 min(need, have) - (wfrom >> VSMFS_BLOCK_SHIFT), false);
	if (ret)
		return ret;
	p = vsmfs_lpn_ptr(sbi, run);
	pagefault_disable();
	n = vsmfs_copy_from_iter(p + wfrom, wto - wfrom, from);
	pagefault_enable();
	/* New pages the copy did not reach must not keep old contents. */
	if (wfrom + n < wto && wto > have << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wfrom + n, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm(p + z, wto - z);
	}
	if (have << VSMFS_BLOCK_SHIFT > wfrom)
		vsmfs_stat_add(sbi, data_inplace_bytes,
			       min(wfrom + n, have << VSMFS_BLOCK_SHIFT) - wfrom);
	vsmfs_stat_add(sbi, data_user_bytes, n);
	return n;
}

/* Worst case of vsmfs_cow_blocks() for @len bytes anywhere in a file. */
static u64 vsmfs_cow_blocks_any(unsigned int cow, u64 len)
{
	return vsmfs_cow_blocks(cow, DIV_ROUND_UP(len - 1, VSMFS_PIECE_SIZE) + 1,
				DIV_ROUND_UP(len - 1, VSMFS_BLOCK_SIZE) + 1);
}

/**
 * vsmfs_atomic_write_max() - the longest write() that is atomic
 * @sbi: the file system
 * @cow: cow= mode
 *
 * Every write() of up to this many bytes, wherever it lies in the file,
 * is made in one transaction, whose worst case (vsmfs_cow_blocks()) fits
 * in the journal; longer writes are split into parts that fit. At most
 * VSMFS_ATOMIC_MAX; at least one byte.
 *
 * Return: the length in bytes.
 */
u64 vsmfs_atomic_write_max(struct vsmfs_sb_info *sbi, unsigned int cow)
{
	u64 room = vsmfs_trans_max_blocks(sbi), lo = 1, hi = VSMFS_ATOMIC_MAX;

	if (vsmfs_cow_blocks_any(cow, hi) <= room)
		return hi;
	/* vsmfs_cow_blocks_any() grows with the length: the last that fits. */
	while (lo < hi) {
		u64 mid = lo + (hi - lo + 1) / 2;

		if (vsmfs_cow_blocks_any(cow, mid) <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/**
 * __vsmfs_atomic_part() - the next part of an atomic write too long for
 *	one transaction
 * @sbi: the file system
 * @cow: cow= mode
 * @pos: where the write goes on
 * @len: the bytes left to write, more than vsmfs_atomic_part() takes whole
 * @extra: blocks the caller dirties besides, in the same transaction
 *
 * Return: the length of the longest part from @pos whose worst case, and
 * @extra blocks besides, fits in the journal (at least one byte).
 */
u64 __vsmfs_atomic_part(struct vsmfs_sb_info *sbi, unsigned int cow, u64 pos, u64 len,
			u32 extra)
{
	u64 room = vsmfs_trans_max_blocks(sbi) - extra, lo = 1, hi;

	hi = min_t(u64, len, VSMFS_ATOMIC_MAX);
	while (lo < hi) {
		u64 mid = lo + (hi - lo + 1) / 2;

		if (vsmfs_cow_blocks_at(cow, pos, mid) <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * A run of logical pages freed when a copy-on-write write commits; a
 * scratch run was only reserved (vsmfs_reserve_pages()).
 */
struct vsmfs_cow_run {
	u64	lpn, count;
	bool	scratch;
};

/* Runs a small write keeps on the stack rather than in an allocation. */
#define VSMFS_COW_FREE_STACK	8

/*
 * struct vsmfs_cow - one copy-on-write write() in progress
 *
 * @free holds runs that become free when the write commits: the old runs
 * of pieces replaced whole, and the fresh pages that received the old
 * frames of swapped pages. They still hold the old version, which a crash
 * before the commit must find intact, so they are freed only at the end,
 * when no allocation of this transaction can take them any more. The
 * fresh pages are free before the write and after it: they are only
 * reserved in DRAM (vsmfs_reserve_pages()), so the bitmap is not journaled
 * for them.
 */
struct vsmfs_cow {
	struct vsmfs_trans	*t;
	struct vsmfs_swap	sw;
	unsigned int		mode;		/* VSMFS_COW_* */
	bool			large;
	bool			cowed;		/* existing pages were replaced */
	unsigned int		nfree, maxfree;
	struct vsmfs_cow_run	*free;
	/* For the trace event: pieces replaced whole or in part, and so on. */
	unsigned int		ncoarse, nfine;
	u64			nswapped, nmerged;
};

static int vsmfs_cow_defer_free(struct vsmfs_cow *c, u64 lpn, u64 count, bool scratch)
{
	if (WARN_ON_ONCE(c->nfree >= c->maxfree))
		return -EINVAL;
	c->free[c->nfree].lpn = lpn;
	c->free[c->nfree].count = count;
	c->free[c->nfree].scratch = scratch;
	c->nfree++;
	return 0;
}

/*
 * Fresh logical pages for up to *@count pages, fewer if space is scattered,
 * reserved for this write alone: given back before it commits.
 */
static int vsmfs_cow_alloc(struct vsmfs_cow *c, u64 *count, u64 *lpn)
{
	int ret;

	for (;;) {
		ret = vsmfs_reserve_pages(c->t, *count, lpn);
		if (ret != -ENOSPC || *count == 1)
			return ret;
		*count /= 2;
	}
}

/*
 * Merge @len bytes of an old page at @src into the fresh page at @dst:
 * durable after the next fence (vsmfs_copy_mc_pm()). A poisoned @src
 * fails the merge rather than the machine, and the caller gives up the
 * fresh page, so the file keeps its old page.
 * Return: 0, or -EIO if @src could not be read.
 */
static int vsmfs_merge_old(void __pm *dst, const void __pm *src, size_t len)
{
	if (!len)
		return 0;
	if (vsmfs_fault(VSMFS_FAULT_PM_READ) || vsmfs_copy_mc_pm(dst, src, len))
		return -EIO;
	return 0;
}

/*
 * Replace piece @key whole (cow=multi: the write covers it; cow=superpage:
 * any write): a new run gets the user data, and the old content the write
 * does not cover, then the index entry is switched to it. Returns the
 * bytes written, or an errno; -ENOSPC before anything changed if no run of
 * the size is free, -EIO before anything changed if old content to keep
 * cannot be read.
 */
static ssize_t vsmfs_cow_whole(struct vsmfs_cow *c, struct inode *inode, u64 key,
			       u64 wfrom, u64 wto, struct iov_iter *from)
{
	struct vsmfs_trans *t = c->t;
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 e = vsmfs_idx_lookup(inode, key), lpn = vsmfs_idx_lpn(e);
	u64 have = vsmfs_idx_count(e), oldend = have << VSMFS_BLOCK_SHIFT;
	u64 cnt = max_t(u64, have, DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE)), nlpn, freed, end, copied;
	char __pm *new, *old;
	size_t n;
	int ret;

	ret = vsmfs_alloc_pages(t, cnt, c->large || cnt == VSMFS_VSP_PAGES, &nlpn);
	if (ret)
		return ret;
	new = vsmfs_lpn_ptr(sbi, nlpn);
	old = vsmfs_lpn_ptr(sbi, lpn);
	pagefault_disable();
	n = vsmfs_copy_from_iter(new + wfrom, wto - wfrom, from);
	pagefault_enable();
	end = wfrom + n;
	/* The old content around what was written, zeros past the old run. */
	ret = vsmfs_merge_old(new, old, min(wfrom, oldend));
	if (!ret && end < oldend)
		ret = vsmfs_merge_old(new + end, old + end, oldend - end);
	if (ret)
		goto fail;
	if (wfrom > oldend)
		vsmfs_zero_pm(new + oldend, wfrom - oldend);
	end = max(end, oldend);
	if (end < cnt << VSMFS_BLOCK_SHIFT)
		vsmfs_zero_pm(new + end, (cnt << VSMFS_BLOCK_SHIFT) - end);
	copied = min(wfrom, oldend) + (wfrom + n < oldend ? oldend - wfrom - n : 0);
	if (c->mode == VSMFS_COW_SUPERPAGE)
		vsmfs_stat_add(sbi, data_cow_copy_bytes, copied);
	else
		vsmfs_stat_add(sbi, data_merge_bytes, copied);
	c->nmerged += copied;

	if (vi->i_tail_key == key + 1) {
		ret = vsmfs_tail_release_t(t, inode, &freed);
		if (ret)
			goto fail;
	}
	ret = vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, cnt));
	if (ret)
		goto fail;
	vsmfs_cow_defer_free(c, lpn, have, false);
	/* The new run has a frame for every page, the old one may not have. */
	vi->i_pages += cnt - vsmfs_frames_in(sbi, lpn, have);
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	c->cowed = true;
	c->ncoarse++;
	if (c->mode == VSMFS_COW_MULTI)
		vsmfs_stat_inc(sbi, mcow_coarse);
	vsmfs_stat_add(sbi, data_user_bytes, n);
	return n;
fail:
	/* A run left allocated would be no file's: the handle fails. */
	vsmfs_trans_fail(t, vsmfs_free_data_pages(t, nlpn, cnt));
	return ret;
}

/*
 * Copy-on-write of part of piece @key (fine grain): pages past the run are
 * added and written directly; each existing page the write touches is
 * written into a fresh logical page, with the untouched bytes of a partly
 * written page merged from the old one, and the page table entries of old
 * and fresh pages are swapped. The file's logical pages then reach the new
 * frames; the fresh logical pages, holding the old frames, are freed at the
 * end of the write. Returns the bytes written, or an errno. A page whose old
 * bytes cannot be read (-EIO) is left as it is, and so is the rest.
 */
static ssize_t vsmfs_cow_fine(struct vsmfs_cow *c, struct inode *inode, u64 key,
			      u64 wfrom, u64 wto, struct iov_iter *from)
{
	struct vsmfs_trans *t = c->t;
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE), lpn, have, pg, exend, holes;
	ssize_t done = 0;
	int ret;

	ret = vsmfs_extend_run(t, inode, key, need, wfrom, wto, c->large, &lpn, &have);
	if (ret)
		return ret;
	exend = min(need, have);
	for (pg = wfrom >> VSMFS_BLOCK_SHIFT; pg < exend;) {
		u64 m = c->mode == VSMFS_COW_PAGE ? 1 : exend - pg, scr;
		u64 cs, ce, ws, we;
		char __pm *sp, *op;
		size_t n;

		ret = vsmfs_cow_alloc(c, &m, &scr);
		if (ret)
			goto short_write;
		cs = pg << VSMFS_BLOCK_SHIFT;
		ce = (pg + m) << VSMFS_BLOCK_SHIFT;
		ws = max(wfrom, cs);
		we = min(wto, ce);
		sp = vsmfs_lpn_ptr(sbi, scr);
		op = vsmfs_lpn_ptr(sbi, lpn + pg);
		ret = vsmfs_merge_old(sp, op, ws - cs);
		if (!ret) {
			pagefault_disable();
			n = vsmfs_copy_from_iter(sp + (ws - cs), we - ws, from);
			pagefault_enable();
			ret = vsmfs_merge_old(sp + (ws + n - cs), op + (ws + n - cs),
					      ce - ws - n);
		}
		if (ret) {
			/* Left reserved, it would be no file's: the handle fails. */
			vsmfs_trans_fail(t, vsmfs_unreserve_pages(t, scr, m));
			goto short_write;
		}
		vsmfs_stat_add(sbi, data_merge_bytes, (ws - cs) + (ce - ws - n));
		c->nmerged += (ws - cs) + (ce - ws - n);
		/* Holes of the file take frames: the scratch pages give theirs. */
		holes = m - vsmfs_frames_in(sbi, lpn + pg, m);
		ret = vsmfs_swap_pages(t, &c->sw, lpn + pg, scr, m);
		if (ret) {
			vsmfs_trans_fail(t, vsmfs_unreserve_pages(t, scr, m));
			goto short_write;
		}
		if (holes) {
			VSMFS_I(inode)->i_pages += holes;
			inode->i_blocks = VSMFS_I(inode)->i_pages << (VSMFS_BLOCK_SHIFT - 9);
		}
		vsmfs_cow_defer_free(c, scr, m, true);
		c->cowed = true;
		c->nswapped += m;
		done += n;
		vsmfs_stat_add(sbi, data_user_bytes, n);
		if (n < we - ws)
			goto short_write;
		pg += m;
	}
	vsmfs_stat_inc(sbi, mcow_fine);
	c->nfine++;
	if (need > have) {
		/* Pages past the old run: new, written directly. */
		u64 ws = max(wfrom, have << VSMFS_BLOCK_SHIFT);
		char __pm *p = vsmfs_lpn_ptr(sbi, lpn);
		size_t n;

		pagefault_disable();
		n = vsmfs_copy_from_iter(p + ws, wto - ws, from);
		pagefault_enable();
		if (ws + n < wto)
			vsmfs_zero_pm(p + ws + n, wto - ws - n);
		vsmfs_stat_add(sbi, data_user_bytes, n);
		done += n;
	}
	return done;

short_write:
	/* New pages past the old run that were not reached hold zeros. */
	if (need > have) {
		u64 ws = max(wfrom, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm((char __pm *)vsmfs_lpn_ptr(sbi, lpn) + ws, wto - ws);
	}
	return done ?: ret;
}

/*
 * Write bytes past the end of the file into the page holding its last byte,
 * in place: they belong to no version of the file yet, and the transaction
 * that moves the end over them makes them visible. After a crash before
 * it, they lie past the end, where growing the file zeroes them first.
 */
static ssize_t vsmfs_write_eof_page(struct vsmfs_trans *t, struct inode *inode, u64 e,
				    u64 wfrom, u64 wto, struct iov_iter *from)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	char __pm *p = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e));
	u64 pg = wfrom >> VSMFS_BLOCK_SHIFT;
	size_t n;
	int ret;

	if (!p)
		return -EFSCORRUPTED;
	ret = vsmfs_fill_holes_t(t, inode, vsmfs_idx_lpn(e) + pg,
				 DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE) - pg, false);
	if (ret)
		return ret;
	pagefault_disable();
	n = vsmfs_copy_from_iter(p + wfrom, wto - wfrom, from);
	pagefault_enable();
	vsmfs_stat_add(sbi, data_user_bytes, n);
	return n;
}

/* Upper bound of the logical pages a copy-on-write of [pos, end) takes. */
static u64 vsmfs_cow_pages(struct inode *inode, loff_t pos, loff_t end, unsigned int mode)
{
	u64 need = 4;	/* index blocks */
	loff_t p;

	for (p = pos; p < end;) {
		u64 key = p >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);
		u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;
		u64 pages = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE);

		/*
		 * A run that must grow elsewhere takes all its pages anew; on a
		 * sparse file system, frames only for the new ones (it moves
		 * into logical pages without frames, vsmfs_extend_sparse()).
		 */
		if (pages > have)
			need += VSMFS_SB(inode->i_sb)->s_noframe ? pages - have : pages;
		if (have && mode == VSMFS_COW_SUPERPAGE)
			need += max(pages, have);
		else if (have > (p - pstart) >> VSMFS_BLOCK_SHIFT)
			need += min(pages, have) - ((p - pstart) >> VSMFS_BLOCK_SHIFT);
		p = pstart + wto;
	}
	return need;
}

/**
 * vsmfs_cow_write_t() - copy-on-write of a range in a transaction
 * @t: the transaction
 * @inode: a regular file
 * @pos: start of the range
 * @len: its length
 * @from: the new data
 * @large: the file is large (its runs start at free superpages)
 * @mode: cow= mode
 * @errp: where the error that cut the write short goes, or NULL
 *
 * The copy-on-write of [@pos, @pos + @len), steps (2) to (5) of
 * vsmfs_write_atomic(), in transaction @t: the caller holds invalidate_lock
 * and i_idx_sem for writing, has removed the user mappings of the range
 * and sets the size and times. An error after part of the range was done
 * leaves the part done, which the transaction commits as a whole, and is
 * put in *@errp unless it is NULL (0 if the write was not cut short by an
 * error).
 *
 * Return: the bytes written; -ENOSPC before anything changed if the pages
 * the write needs are not free, or another negative errno.
 */
ssize_t vsmfs_cow_write_t(struct vsmfs_trans *t, struct inode *inode, loff_t pos,
			  size_t len, struct iov_iter *from, bool large,
			  unsigned int mode, int *errp)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t end = pos + len, size = i_size_read(inode), p;
	u64 npages = DIV_ROUND_UP(end, VSMFS_BLOCK_SIZE) - (pos >> VSMFS_BLOCK_SHIFT);
	struct vsmfs_cow c = {
		.t = t,
		.mode = mode,
		.large = large,
		.maxfree = npages + (len >> VSMFS_VSP_SHIFT) + 2,
	};
	struct vsmfs_cow_run free_stack[VSMFS_COW_FREE_STACK];
	ssize_t done = 0, n;
	unsigned int i;
	int ret = 0, err;

	if (c.maxfree <= ARRAY_SIZE(free_stack))
		c.free = free_stack;
	else
		c.free = kvmalloc_array(c.maxfree, sizeof(*c.free), GFP_KERNEL);
	if (!c.free) {
		ret = -ENOMEM;
		goto out;
	}
	if (vsmfs_cow_pages(inode, pos, end, mode) > sbi->s_free_pages) {
		ret = -ENOSPC;
		goto out;
	}
	vsmfs_swap_init(sbi, &c.sw);
	/* Bytes between the old end and the write may have been mapped. */
	if (pos > size)
		vsmfs_zero_mapped(inode, size,
				  min_t(loff_t, pos, round_up(size, VSMFS_BLOCK_SIZE)));
	for (p = pos; p < end; p += n) {
		u64 key = p >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 wfrom = p - pstart, wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);
		u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;

		if (p >= size && (size & (VSMFS_BLOCK_SIZE - 1)) &&
		    p >> VSMFS_BLOCK_SHIFT == (size - 1) >> VSMFS_BLOCK_SHIFT &&
		    wfrom >> VSMFS_BLOCK_SHIFT < have) {
			/* Past the end in the last page: nothing old to keep. */
			wto = min_t(u64, wto, round_up(wfrom + 1, VSMFS_BLOCK_SIZE));
			n = vsmfs_write_eof_page(t, inode, e, wfrom, wto, from);
		} else if (!have || wfrom >> VSMFS_BLOCK_SHIFT >= have) {
			n = vsmfs_write_new(t, inode, key, wfrom, wto, from, large);
		} else if (mode == VSMFS_COW_SUPERPAGE ||
			   (mode == VSMFS_COW_MULTI && !wfrom && wto == VSMFS_PIECE_SIZE)) {
			n = vsmfs_cow_whole(&c, inode, key, wfrom, wto, from);
		} else {
			n = -ENOSPC;
		}
		/* No free run for a whole piece: copy it page by page. */
		if (n == -ENOSPC && have && mode != VSMFS_COW_SUPERPAGE &&
		    wfrom >> VSMFS_BLOCK_SHIFT < have)
			n = vsmfs_cow_fine(&c, inode, key, wfrom, wto, from);
		if (n < 0) {
			ret = n;
			break;
		}
		done += n;
		if (n < wto - wfrom)
			break;
	}
	/* (4), then (5): see vsmfs_write_atomic(). */
	vsmfs_swap_flush(&c.sw);
	for (i = 0; i < c.nfree; i++) {
		if (c.free[i].scratch)
			err = vsmfs_unreserve_pages(t, c.free[i].lpn, c.free[i].count);
		else
			err = vsmfs_free_data_pages(t, c.free[i].lpn, c.free[i].count);
		/*
		 * Pages replaced or scratch pages holding old frames, left in
		 * use by no file: the part written cannot be committed either.
		 */
		vsmfs_trans_fail(t, err);
		ret = ret ?: err;
	}
	if (c.cowed)
		vsmfs_stat_inc(sbi, mcow_writes);
	/*
	 * For crash tests: new pages written, swaps and index switches made
	 * in DRAM, nothing committed.
	 */
	if (c.cowed)
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_COW_STOP,
				 "copy-on-write stopped before its commit");
out:
	if (c.free != free_stack)
		kvfree(c.free);
	trace_vsmfs_mcow_write(inode, pos, len, c.ncoarse, c.nfine, c.nswapped, c.nmerged,
			       done ?: ret);
	if (errp)
		*errp = ret;
	return done ?: ret;
}

/**
 * vsmfs_cow_span() - the pages a copy-on-write of a range replaces
 * @mode: cow= mode
 * @start: start of the range, widened
 * @end: end of the range (exclusive), widened
 *
 * Widen [*@start, *@end) to the pages whose frames a copy-on-write of it
 * replaces: with cow=superpage, every superpage it touches is copied whole.
 */
void vsmfs_cow_span(unsigned int mode, loff_t *start, loff_t *end)
{
	u64 unit = mode == VSMFS_COW_SUPERPAGE ? VSMFS_PIECE_SIZE : PAGE_SIZE;

	*start = round_down(*start, unit);
	*end = round_up(*end, unit);
}

/* Runs a staged write reserves at most; a write needing more is not staged. */
#define VSMFS_STAGE_RUNS	8

/*
 * struct vsmfs_stage - one reserved run of a staged write
 * @r: the reservation
 * @key: the piece it belongs to
 * @e: the piece's index entry (unchanged until the switch: i_idx_sem)
 * @pg: with @whole false, the first page of the piece it replaces; its
 *	frames are swapped in
 * @whole: the run replaces the piece's run whole (index switch)
 * @wfrom: where the write begins in the piece
 * @wto: where it ends there
 */
struct vsmfs_stage {
	struct vsmfs_resv	r;
	u64			key, e, pg;
	bool			whole;
	u32			wfrom, wto;
};

/*
 * Copy into the reserved run @st the bytes [@wfrom, @wto) of its piece
 * from @from, and the old bytes of the pages it replaces around them:
 * durable at the next fence on this CPU, or after a switch to another
 * CPU and a fence there. Return: 0, -EIO if old bytes could not be read,
 * -EFAULT if the copy came up short.
 */
static int vsmfs_stage_copy(struct vsmfs_sb_info *sbi, struct inode *inode,
			    struct vsmfs_stage *st, u64 wfrom, u64 wto, struct iov_iter *from)
{
	u64 old = vsmfs_idx_lpn(st->e) + st->pg, bytes = st->r.count << VSMFS_BLOCK_SHIFT;
	bool ranged, old_ranged = false;
	char __pm *sp, *op;
	u64 cs, ce, ws, we, n;
	int ret = 0;

	/*
	 * A single page, or a run of consecutive frames, through the device
	 * mapping, which needs no catch-up with the swaps of other writes,
	 * any other run as one range (vsmfs_data_begin()). An old page
	 * without a frame reads as zeros.
	 */
	sp = vsmfs_data_begin(sbi, st->r.lpn, 0, bytes, &ranged);
	if (!sp) {
		vsmfs_data_end(ranged);
		return -EFSCORRUPTED;
	}
	cs = st->pg << VSMFS_BLOCK_SHIFT;
	ce = (st->pg + st->r.count) << VSMFS_BLOCK_SHIFT;
	ws = max(wfrom, cs);
	we = min(wto, ce);
	/*
	 * The old bytes first, if the new ones leave any (not for whole
	 * pages): a copy from a user buffer that fences by itself then
	 * orders them too (vsmfs_copy_from_iter()).
	 */
	if (ws > cs || we < ce) {
		op = vsmfs_data_begin(sbi, old, 0, bytes, &old_ranged);
		if (op) {
			ret = vsmfs_merge_old(sp, op, ws - cs);
			if (!ret)
				ret = vsmfs_merge_old(sp + (we - cs), op + (we - cs), ce - we);
		} else {
			vsmfs_zero_pm(sp, ws - cs);
			vsmfs_zero_pm(sp + (we - cs), ce - we);
			ret = 0;
		}
		if (ret)
			goto out;
	}
	pagefault_disable();
	n = vsmfs_copy_from_iter(sp + (ws - cs), we - ws, from);
	pagefault_enable();
	if (n < we - ws) {
		ret = -EFAULT;
		goto out;
	}
	vsmfs_stat_add(sbi, data_user_bytes, n);
	vsmfs_stat_add(sbi, data_merge_bytes, (ws - cs) + (ce - we));
out:
	vsmfs_data_end(old_ranged);
	vsmfs_data_end(ranged);
	return ret;
}

/* Pages without frames among the file's pages staged runs replace. */
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
			ret = vsmfs_tail_release_t(t, inode, &freed);
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
 * change): in a shared handle (trans.c), beside other writes of the kind,
 * with no file-system-wide lock held. The slot's block joins the handle
 * before the first swap, and the times are stored after the last, when
 * nothing can fail. Ordering as vsmfs_stage_switch() in a handle that ends
 * in the running transaction.
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
						     const struct timespec64 *now)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	/* Set up by vsmfs_shandle_begin(), vsmfs_swap_init(): not zeroed as well. */
	struct vsmfs_shandle h __uninitialized;
	struct vsmfs_swap sw __uninitialized;
	struct vsmfs_dinode *di = NULL;
	struct vsmfs_mblk *imb = NULL;
	unsigned int i;
	int ret;

	BUILD_BUG_ON(VSMFS_STAGE_RUNS > VSMFS_SHANDLE_SWAPS);
	ret = vsmfs_shandle_begin(sbi, &h, 1 + 2 * n, n);
	if (ret)
		return ret;
	if (now) {
		ret = vsmfs_shandle_inode(&h, inode, &imb, &di);
		if (ret) {
			vsmfs_shandle_end(&h);
			return ret;
		}
	}
	vsmfs_swap_init(sbi, &sw);
	sw.sw_defer_b = true;
	for (i = 0; i < n && !ret; i++)
		ret = vsmfs_swap_pages_shared(&h, &sw, vsmfs_idx_lpn(st[i].e) + st[i].pg,
					      st[i].r.lpn, st[i].r.count);
	if (ret)
		vsmfs_swap_back_shared(&h, &sw);
	/* One shootdown, before the commit frees any page swapped out. */
	vsmfs_swap_flush(&sw);
	if (!ret) {
		for (i = 0; i < n; i++)
			vsmfs_shandle_defer_resv(&h, &st[i].r);
		vsmfs_stat_add(sbi, mcow_fine, n);
		if (now)
			vsmfs_shandle_times(inode, imb, di, *now);
		vsmfs_shandle_note_inode(&h, inode);
		vsmfs_aggr_written(inode);
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_COW_STOP,
				 "copy-on-write stopped before its commit");
	}
	vsmfs_shandle_end(&h);
	return ret;
}

/*
 * End the handle @t of a staged write or append whose reserved runs it
 * takes: aborted on @ret, or by its end (an error recorded in it,
 * errors=remount-ro), and the runs are the caller's again; else it ends,
 * and the runs are the transaction's even if its commit fails (*@owned).
 * Return: @ret, or what the abort or the commit returned.
 */
static int vsmfs_stage_end(struct vsmfs_trans *t, int ret, bool *owned)
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
 * cannot do; apart from vsmfs_write_staged() so that the common write,
 * which swaps pages in a shared handle, does not set up this frame.
 * @owned: set if the transaction took the runs (committed, even if the
 *	commit failed); else the handle was aborted and they are the
 *	caller's again.
 * Return: 0 or a negative errno.
 */
static noinline int vsmfs_stage_switch_excl(struct inode *inode, struct vsmfs_stage *st,
					    unsigned int n, bool slot, u32 credits, bool *owned)
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
		if (slot || !timespec64_equal(&inode->i_mtime, &now) ||
		    !timespec64_equal(&inode->i_ctime, &now)) {
			inode->i_mtime = now;
			inode->i_ctime = now;
			ret = vsmfs_write_inode_t(&t, inode);
		} else {
			vsmfs_trans_note_inode(&t, inode);
			vsmfs_aggr_written(inode);
		}
	}
	if (!ret)
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_COW_STOP,
				 "copy-on-write stopped before its commit");
	return vsmfs_stage_end(&t, ret, owned);
}

/*
 * Write [@pos, @pos + @len) atomically, copying the data with no
 * file-system-wide lock held: an overwrite inside the file's runs and its
 * size (no run grows, no page is new). (a) Fresh runs are reserved in
 * DRAM (vsmfs_resv_take(), s_trans_mutex for each only; no version the
 * journal writes has their bits); (b) the user
 * data and the old bytes around it are copied into them under the locks
 * of the inode alone (inode lock, invalidate_lock, i_idx_sem), with
 * non-temporal stores and written-back cached stores; (c) one short
 * handle switches the index entries or swaps the page table entries
 * (vsmfs_stage_switch()) and ends (in a shared handle, beside others,
 * if it only swaps pages and changes no word of the inode slot but the
 * times: vsmfs_stage_switch_shared()). A fence between (b) and (c), with no
 * file-system-wide lock held, makes (b) durable before the handle makes
 * it reachable (a migration to another CPU during (b) orders what came
 * before it); a copy from a user buffer that ends with a fence of its own
 * is that fence (vsmfs_copy_from_iter()), the old bytes merged before it.
 * A crash before the commit leaves the old index and page table, whose
 * frames were never written, and the reserved runs free.
 *
 * Context: @mode is not cow=superpage, and [@pos, @pos + @len) is a
 * non-empty range inside the size (the caller checks, so that other writes
 * do not pay for this function's frame).
 * Return: the bytes written, or -EAGAIN if the write is not of that kind
 * (nothing done, @from untouched), or another negative errno (nothing
 * written).
 */
static ssize_t vsmfs_write_staged(struct inode *inode, loff_t pos, size_t len,
				  struct iov_iter *from, bool large, unsigned int mode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	/* Entries [0, n) are filled before they are read: not zeroed at entry. */
	struct vsmfs_stage st[VSMFS_STAGE_RUNS] __uninitialized;
	size_t count = iov_iter_count(from);
	loff_t end = pos + len, p;
	unsigned int n = 0, i, ncoarse;
	bool slot, owned;
	struct timespec64 now;
	int ret = 0;

	/* (a) Which runs, and that every page written exists. */
	for (p = pos; p < end;) {
		u64 key = p >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 wfrom = p - pstart, wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);
		u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;
		u64 pg = wfrom >> VSMFS_BLOCK_SHIFT, need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE);
		bool whole = mode == VSMFS_COW_MULTI && !wfrom && wto == VSMFS_PIECE_SIZE;

		if (!have || need > have) {
			ret = -EAGAIN;
			goto release;
		}
		if (whole) {
			pg = 0;
			need = have;
		}
		while (pg < need) {
			u64 m = mode == VSMFS_COW_PAGE ? 1 : need - pg;

			if (n == VSMFS_STAGE_RUNS) {
				ret = -EAGAIN;
				goto release;
			}
			for (;;) {
				bool big = whole && (large || m == VSMFS_VSP_PAGES);

				ret = vsmfs_resv_take(sbi, m, big, &st[n].r);
				/* Scattered free space: smaller runs, page swaps. */
				if (ret != -ENOSPC || m == 1)
					break;
				m /= 2;
				whole = false;
			}
			if (ret == -ENOSPC)
				ret = -EAGAIN;
			if (ret)
				goto release;
			st[n].key = key;
			st[n].e = e;
			st[n].pg = pg;
			st[n].whole = whole && m == have;
			st[n].wfrom = wfrom;
			st[n].wto = wto;
			n++;
			pg += m;
		}
		p = pstart + wto;
	}
	/* (b) The copies, with no file-system-wide lock. */
	for (i = 0; i < n && !ret; i++)
		ret = vsmfs_stage_copy(sbi, inode, &st[i], st[i].wfrom, st[i].wto, from);
	if (ret) {
		/* Nothing is written: @from as it came. */
		iov_iter_revert(from, count - iov_iter_count(from));
		goto release;
	}
	/*
	 * (b) durable before the handle begins: the handle stores
	 * nothing to PM, so it fences no more (vsmfs_trans_commit()), and no
	 * other writer waits for this fence.
	 */
	vsmfs_fence_pending();
	/* (c) The switch, in one short handle. */
	for (i = 0, ncoarse = 0; i < n; i++)
		ncoarse += st[i].whole;
	/*
	 * Holes filled change the block count: the slot is written. Unwritten
	 * pages replaced leave their flag to the scratch pages, cleared in a
	 * handle of the other kind (vsmfs_trans_defer_resv()).
	 */
	slot = ncoarse;
	for (i = 0; i < n && !slot; i++) {
		u64 old = vsmfs_idx_lpn(st[i].e) + st[i].pg;

		slot = vsmfs_frames_in(sbi, old, st[i].r.count) < st[i].r.count ||
		       vsmfs_any_unwritten(sbi, old, st[i].r.count);
	}
	now = current_time(inode);
	if (!slot) {
		bool tick = !timespec64_equal(&inode->i_mtime, &now) ||
			    !timespec64_equal(&inode->i_ctime, &now);

		ret = vsmfs_stage_switch_shared(inode, st, n, tick ? &now : NULL);
		if (!ret)
			goto done;
		if (ret != -EAGAIN) {
			iov_iter_revert(from, count - iov_iter_count(from));
			goto release;
		}
		ret = 0;
	}
	ret = vsmfs_stage_switch_excl(inode, st, n, slot, vsmfs_cow_blocks_at(mode, pos, len),
				      &owned);
	if (!owned) {
		/* Swaps and index switches undone: the runs are the write's again. */
		iov_iter_revert(from, count - iov_iter_count(from));
		goto release;
	}
done:
	vsmfs_stat_inc(sbi, mcow_writes);
	vsmfs_stat_inc(sbi, write_staged);
	trace_vsmfs_mcow_write(inode, pos, len, ncoarse, n - ncoarse, 0, 0, ret ?: len);
	return ret ?: len;

release:
	for (i = 0; i < n; i++)
		vsmfs_resv_release(sbi, &st[i].r);
	return ret;
}

/*
 * Where a staged append writes the new pages of its piece, and how its
 * handle makes them the file's (vsmfs_append_plan()).
 */
enum vsmfs_append_kind {
	VSMFS_APPEND_TAIL,	/* the reserved tail of a large file's VSP: its own */
	VSMFS_APPEND_AFTER,	/* reserved pages right after the run: grown in place */
	VSMFS_APPEND_FIRST,	/* a reserved run, the piece's first */
	VSMFS_APPEND_MOVE,	/* a reserved run the old one moves into */
};

/*
 * struct vsmfs_append - a staged append's new pages
 * @kind: VSMFS_APPEND_*
 * @r: the pages reserved, for every kind but VSMFS_APPEND_TAIL
 * @dst: the first logical page the new pages' data is copied into
 */
struct vsmfs_append {
	enum vsmfs_append_kind	kind;
	struct vsmfs_resv	r;
	u64			dst;
};

/*
 * Choose where the new pages [@have, @need) of piece @key (index entry
 * @e) are written, as vsmfs_extend_run() would place them, and reserve
 * them: in a large file's own tail; a large file's first run of the piece
 * at a free VSP (whose rest it then reserves); for a small file right
 * after its run, or else in a fresh run that becomes the piece's, the old
 * run's frames swapped into it. A large file's run that must move into a
 * fresh VSP, and a small file that kept a tail, grow in their handle.
 * Return: 0, -EAGAIN if the append is not staged, -ENOSPC or -ENOMEM.
 */
static int vsmfs_append_plan(struct inode *inode, u64 key, u64 e, u64 have, u64 need,
			     bool large, struct vsmfs_append *a)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 lpn = vsmfs_idx_lpn(e), k = need - have, tail = VSMFS_I(inode)->i_tail_key;
	int ret;

	if (tail == key + 1) {
		if (need > have + vsmfs_tail_pages(e) || vsmfs_frames_in(sbi, lpn + have, k) != k ||
		    vsmfs_any_unwritten(sbi, lpn + have, k))
			return -EAGAIN;
		a->kind = VSMFS_APPEND_TAIL;
		a->dst = lpn + have;
		return 0;
	}
	if (large || tail) {
		if (have || !large)
			return -EAGAIN;
		a->kind = VSMFS_APPEND_FIRST;
		ret = vsmfs_resv_take(sbi, need, true, &a->r);
		a->dst = a->r.lpn;
		return ret;
	}
	if (have && lpn % VSMFS_VSP_PAGES + need <= VSMFS_VSP_PAGES &&
	    !vsmfs_resv_take_at(sbi, lpn + have, k, &a->r)) {
		a->kind = VSMFS_APPEND_AFTER;
		a->dst = a->r.lpn;
		return 0;
	}
	ret = vsmfs_resv_take(sbi, need, false, &a->r);
	a->kind = have ? VSMFS_APPEND_MOVE : VSMFS_APPEND_FIRST;
	a->dst = a->r.lpn + have;
	return ret;
}

/*
 * The run of piece @key (index entry @e) becomes @a's reserved run, the
 * @have pages of the old one moved into it by swapping their frames (as
 * vsmfs_move_run() does), and the old pages freed by the commit.
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
		ret = vsmfs_idx_set(t, inode, key, vsmfs_idx_make(a->r.lpn, a->r.count));
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
	/* A large file's run reserves the rest of its VSP, as it would grown. */
	if (!ret && large && a->r.count < VSMFS_VSP_PAGES &&
	    !vsmfs_alloc_pages_at(t, a->r.lpn + a->r.count, VSMFS_VSP_PAGES - a->r.count)) {
		/* On error the handle is aborted, the pages with it. */
		if (vi->i_tail_key)
			ret = vsmfs_tail_release_t(t, inode, &freed);
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
 * The handle of a staged append that gives piece @key (index entry @e)
 * the new pages [@have, @need), whose data @a holds, and the file the size
 * @size. Ordering as vsmfs_stage_switch(): the data was fenced before the
 * handle began, nothing here is stored to PM, and a moved run's stale
 * translations are shot down before its old pages can be taken again.
 * @owned: set if the transaction took @a's reservation (committed, even
 *	if the commit failed); else the handle was aborted and it is the
 *	caller's again.
 * Return: 0 or a negative errno.
 */
static noinline int vsmfs_append_grow(struct inode *inode, u64 key, u64 e, u64 have, u64 need,
				      const struct vsmfs_append *a, bool large, loff_t size,
				      u32 credits, bool *owned)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_trans t;
	u64 run, had;
	int ret;

	*owned = false;
	vsmfs_trans_begin_credits(sbi, &t, credits);
	vsmfs_trans_track(&t, inode, false);
	switch (a->kind) {
	case VSMFS_APPEND_AFTER:
		ret = vsmfs_resv_claim(&t, &a->r);
		if (!ret)
			ret = vsmfs_idx_set(&t, inode, key, vsmfs_idx_make(vsmfs_idx_lpn(e), need));
		if (!ret)
			ret = vsmfs_trans_defer_resv(&t, &a->r, true);
		if (!ret) {
			vi->i_pages += a->r.count;
			inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
		}
		break;
	case VSMFS_APPEND_FIRST:
	case VSMFS_APPEND_MOVE:
		ret = vsmfs_append_move(&t, inode, key, e, have, a, large);
		break;
	case VSMFS_APPEND_TAIL:
		/* Pages the file owns, written by the caller: none is zeroed. */
		ret = vsmfs_extend_run(&t, inode, key, need, have << VSMFS_BLOCK_SHIFT,
				       need << VSMFS_BLOCK_SHIFT, large, &run, &had);
		if (!ret && WARN_ON_ONCE(had != have || run + have != a->dst))
			ret = -EFSCORRUPTED;
		break;
	}
	if (!ret) {
		i_size_write(inode, size);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
		ret = vsmfs_write_inode_t(&t, inode);
	}
	return vsmfs_stage_end(&t, ret, owned);
}

/**
 * vsmfs_write_append() - append with no file-system-wide lock held
 * @inode: a regular file
 * @pos: start of the range, at or past the size
 * @len: its length, > 0
 * @from: the data; a copy that stops at a fault leaves nothing done
 * @large: the file is large (its runs start at free superpages)
 *
 * Write [@pos, @pos + @len) past the end of the file, copying the data
 * with no file-system-wide lock held, as vsmfs_write_staged() does for an
 * overwrite: an append within one piece that starts in the file's last
 * page or right after it, where the piece's run ends with that page. The
 * append is atomic (no version of the file shows part of it), whatever
 * the data= mode.
 *
 * (a) The new pages, if any, are chosen and reserved in DRAM
 * (vsmfs_append_plan()); (b) the bytes that fall in the last page are
 * written in place, past the end (they belong to no version of the file
 * yet; a gap between the end and the write is zeroed), and the rest into
 * the new pages, the end of the last one zeroed, with non-temporal stores
 * and written-back cached stores, holding only the inode's locks; a fence
 * on this CPU makes (b) durable before (c), one short handle, makes it
 * reachable: the size and the times alone in a shared handle
 * (vsmfs_set_size_times(), file.c), or the new pages joined to the run and the size
 * in a handle under s_trans_mutex (vsmfs_append_grow()). A crash before
 * the commit leaves the old size, the bytes written past it (which
 * growing the file zeroes first, as it does any), and the reserved pages
 * free.
 *
 * Context: inode lock and i_idx_sem held for writing, user mappings of
 * the range removed (invalidate_lock held if any could be made).
 * Return: the bytes written, -EAGAIN if the write is not of that kind or
 * found no room for its reserved pages beside the run's, -EFAULT if the
 * copy stopped at a fault (nothing done that the file shows, @from as it
 * came), or another negative errno (the same).
 */
ssize_t vsmfs_write_append(struct inode *inode, loff_t pos, size_t len,
			   struct iov_iter *from, bool large)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 size = i_size_read(inode), key = pos >> VSMFS_VSP_SHIFT;
	u64 pstart = key << VSMFS_VSP_SHIFT, wfrom = pos - pstart, wto = wfrom + len;
	u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;
	u64 need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE), hb = have << VSMFS_BLOCK_SHIFT;
	u32 credits = vsmfs_cow_blocks_at(VSMFS_COW_MULTI, pos, len);
	size_t count = iov_iter_count(from), n;
	struct vsmfs_append a = { };
	bool ranged, owned = false;
	char __pm *p;
	int ret;

	/*
	 * The end in this piece, the run ending with the end's page, no
	 * whole page skipped, and the handle's worst case in the journal.
	 */
	if (size < pstart || wto > VSMFS_PIECE_SIZE ||
	    DIV_ROUND_UP(size - pstart, VSMFS_BLOCK_SIZE) != have || wfrom > hb ||
	    credits > vsmfs_trans_max_blocks(sbi))
		return -EAGAIN;
	/* A last page written into needs its frame, and data in it. */
	if (wfrom < hb && (!vsmfs_frames_in(sbi, vsmfs_idx_lpn(e) + have - 1, 1) ||
			   vsmfs_any_unwritten(sbi, vsmfs_idx_lpn(e) + have - 1, 1)))
		return -EAGAIN;
	/* (a) */
	if (need > have) {
		ret = vsmfs_append_plan(inode, key, e, have, need, large, &a);
		if (ret)
			return ret == -ENOSPC ? -EAGAIN : ret;
	}
	/* (b) The last page. */
	if (wfrom < hb) {
		u64 pg = hb - VSMFS_BLOCK_SIZE, to = min(wto, hb);

		p = vsmfs_data_begin(sbi, vsmfs_idx_lpn(e) + have - 1, 0, VSMFS_BLOCK_SIZE,
				     &ranged);
		ret = -EFSCORRUPTED;
		if (p) {
			if (wfrom > size - pstart)
				vsmfs_zero_pm(p + (size - pstart - pg), wfrom - (size - pstart));
			pagefault_disable();
			n = vsmfs_copy_from_iter(p + (wfrom - pg), to - wfrom, from);
			pagefault_enable();
			ret = n < to - wfrom ? -EFAULT : 0;
		}
		vsmfs_data_end(ranged);
		if (ret)
			goto release;
	}
	/* (b) The new pages, from the start of the first. */
	if (need > have) {
		p = vsmfs_data_begin(sbi, a.dst, 0, (need - have) << VSMFS_BLOCK_SHIFT, &ranged);
		ret = -EFSCORRUPTED;
		if (p) {
			pagefault_disable();
			n = vsmfs_copy_from_iter(p, wto - hb, from);
			pagefault_enable();
			ret = n < wto - hb ? -EFAULT : 0;
			/* Nothing to zero stores nothing, and leaves nothing to fence. */
			if (!ret && wto < need << VSMFS_BLOCK_SHIFT)
				vsmfs_zero_pm(p + (wto - hb), (need << VSMFS_BLOCK_SHIFT) - wto);
		}
		vsmfs_data_end(ranged);
		if (ret)
			goto release;
	}
	vsmfs_stat_add(sbi, data_user_bytes, len);
	/* (b) durable before (c) begins. */
	vsmfs_fence_pending();
	/* (c) */
	if (need > have)
		ret = vsmfs_append_grow(inode, key, e, have, need, &a, large, pos + len, credits,
					&owned);
	else
		ret = vsmfs_set_size_times(inode, pos + len, current_time(inode));
	if (ret && !owned)
		goto release;
	vsmfs_stat_inc(sbi, write_staged_appends);
	trace_vsmfs_mcow_write(inode, pos, len, 0, 0, 0, 0, ret ?: len);
	return ret ?: len;

release:
	/* Nothing is written that the file shows: @from as it came. */
	iov_iter_revert(from, count - iov_iter_count(from));
	if (a.r.count)
		vsmfs_resv_release(sbi, &a.r);
	/*
	 * Out of space with the reserved pages taken besides the run's own
	 * (vsmfs_append_grow() swapping them in): the write is made in one
	 * handle, which needs the run's alone.
	 */
	return ret == -ENOSPC ? -EAGAIN : ret;
}

/*
 * The part of vsmfs_write_atomic() for a write that is not staged: the
 * whole write, copies included, in one handle. Apart so that a staged write
 * does not set up this frame. Same context, return values and ordering.
 */
static noinline ssize_t vsmfs_write_atomic_trans(struct inode *inode, loff_t pos, size_t len,
						 struct iov_iter *from, bool large,
						 unsigned int mode, bool direct)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_trans t;
	size_t count;
	ssize_t n;
	int err;

	/* The whole write in one handle: room for its worst case. */
	vsmfs_trans_begin_credits(sbi, &t, vsmfs_cow_blocks_at(mode, pos, len));
	vsmfs_trans_track(&t, inode, false);
	count = iov_iter_count(from);
	n = vsmfs_cow_write_t(&t, inode, pos, len, from, large, mode, &err);
	if (direct && n >= 0 && n < len && !err) {
		/* Cut short by a fault: undone whole, to be made again. */
		vsmfs_trans_abort(&t);
		iov_iter_revert(from, count - iov_iter_count(from));
		return -EAGAIN;
	}
	if (n > 0) {
		if (pos + n > i_size_read(inode))
			i_size_write(inode, pos + n);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
	}
	err = vsmfs_write_inode_t(&t, inode);
	if (n <= 0 || err) {
		/* A failed copy-on-write leaves the old version, swaps undone. */
		vsmfs_trans_abort(&t);
		if (n >= 0)
			n = err ?: n;
	} else {
		/* A commit that fails commits nothing, not even the part done. */
		err = vsmfs_trans_commit(&t);
		if (err)
			n = err;
	}
	return n;
}

/**
 * vsmfs_write_atomic() - write a range of a file atomically
 * @inode: a regular file
 * @pos: start of the range
 * @len: its length
 * @from: the data, which cannot fault (see vsmfs_wsrc_get()), unless
 *	@direct
 * @large: the file is large (its runs start at free superpages)
 * @mode: cow= mode
 * @direct: @from is the caller's user buffer, which may fault: a copy
 *	that stops at a fault leaves nothing done (a staged write copies
 *	into pages no one sees yet, vsmfs_write_staged(); a write in one
 *	handle is aborted) and the caller makes the write again
 *
 * Write [@pos, @pos + @len) atomically (data=atomic): the new content of
 * every page reaches PM in fresh pages, and one transaction switches the
 * file to them, so after a crash the file holds the old or the new
 * content of the whole range, never a mix.
 *
 * Ordering: (1) user mappings of the range (of its superpages with
 * cow=superpage) are removed and pinned pages waited for, under
 * invalidate_lock held until the end, so no user mapping can reach an old
 * frame once it is freed; (2) new data is written to fresh pages with
 * non-temporal stores, the merged old bytes with cached stores that are
 * written back (vsmfs_merge_old()), both durable at the next fence;
 * (3) the page table entries are swapped and the index switched in the
 * transaction's DRAM copies, and the live kernel PTEs are changed; (4) one
 * TLB shootdown for the whole write, before any page freed below can be
 * allocated again; (5) the replaced pages are freed in the transaction,
 * and the scratch pages that took the old frames of swapped pages, only
 * reserved in DRAM, are given back (the bitmap on PM never had them);
 * (6) commit: a fence makes (2) durable, then the metadata of (3) and (5)
 * is committed at once. A crash before (6) leaves the old page table and
 * index, whose frames were never written; after it, the new ones.
 *
 * Without @direct, the copy from @from must not come up short (see
 * vsmfs_wsrc_get()). An error after part of the write was done commits
 * the part done, which is atomic by itself, unless a run the write
 * replaced or reserved could not be freed: then the handle fails
 * (vsmfs_trans_fail()) and the whole write with it.
 *
 * Context: inode lock held for writing.
 * Return: the bytes written, -EAGAIN with @direct if the write must be
 * made again from a source that cannot fault (nothing done, @from
 * untouched), or another negative errno.
 */
ssize_t vsmfs_write_atomic(struct inode *inode, loff_t pos, size_t len,
			   struct iov_iter *from, bool large, unsigned int mode, bool direct)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct address_space *mapping = inode->i_mapping;
	loff_t end = pos + len, ustart = pos, uend = end;
	ssize_t n;

	filemap_invalidate_lock(mapping);
	/*
	 * (1) A file no one maps and with no DAX entry has no user mapping
	 * to remove and no pinned page (every mapping of a page comes from a
	 * fault, which inserts its entry under invalidate_lock, held here):
	 * both calls would find nothing.
	 */
	if (mapping_mapped(mapping) || !mapping_empty(mapping)) {
		vsmfs_cow_span(mode, &ustart, &uend);
		n = vsmfs_break_layouts_range(inode, ustart, uend - 1);
		if (n)
			goto out_unlock;
		truncate_pagecache_range(inode, ustart, uend - 1);
	}

	down_write(&vi->i_idx_sem);
	/* Overwrites inside the size and appends past it are staged: see there. */
	n = -EAGAIN;
	if (mode != VSMFS_COW_SUPERPAGE && len && end <= i_size_read(inode))
		n = vsmfs_write_staged(inode, pos, len, from, large, mode);
	else if (len && pos >= i_size_read(inode))
		n = vsmfs_write_append(inode, pos, len, from, large);
	if (n != -EAGAIN) {
		/* With @direct, a copy stopped at a fault: made again. */
		if (direct && n == -EFAULT)
			n = -EAGAIN;
		up_write(&vi->i_idx_sem);
		goto out_unlock;
	}
	n = vsmfs_write_atomic_trans(inode, pos, len, from, large, mode, direct);
	up_write(&vi->i_idx_sem);
out_unlock:
	filemap_invalidate_unlock(mapping);
	return n;
}
