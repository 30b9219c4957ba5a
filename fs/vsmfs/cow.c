// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs copy-on-write in a handle, the copy step (write.c) of a data=atomic
 * write that is not staged (VSMFS_WK_COW) and of fallocate's zeroing: the
 * longest write() that is atomic and the parts a longer one is cut into
 * (vsmfs_atomic_write_max(), __vsmfs_atomic_part() in data.h), bounded by
 * the worst case of the metadata a copy-on-write transaction dirties
 * (vsmfs_cow_blocks() in data.h); the copy-on-write of a range in one
 * transaction (vsmfs_cow_write()), by whole runs or single pages
 * (vsmfs_cow_whole(), vsmfs_cow_fine()).
 *
 * Ordering: the PM store ordering of an atomic write is given at
 * vsmfs_write_part() in write.c, and each helper that writes PM states its
 * own beside its code.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
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
		ret = vsmfs_tail_release(t, inode, &freed);
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
	ret = vsmfs_fill_holes(t, inode, vsmfs_idx_lpn(e) + pg,
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
 * vsmfs_cow_write() - copy-on-write of a range in a transaction
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
 * vsmfs_write_part(), in transaction @t: the caller holds invalidate_lock
 * and i_idx_sem for writing, has removed the user mappings of the range
 * and sets the size and times. An error after part of the range was done
 * leaves the part done, which the transaction commits as a whole, and is
 * put in *@errp unless it is NULL (0 if the write was not cut short by an
 * error).
 *
 * Return: the bytes written; -ENOSPC before anything changed if the pages
 * the write needs are not free, or another negative errno.
 */
ssize_t vsmfs_cow_write(struct vsmfs_trans *t, struct inode *inode, loff_t pos,
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
	/* (4), then (5): see vsmfs_write_part(). */
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
