// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs fallocate: preallocation (keeping the size or not), hole punching
 * and zeroing of a range; under data=atomic, zeroing is a copy-on-write of
 * zeros (vsmfs_cow_zero_t(), through cow.c).
 *
 * Ordering: the PM store ordering of each step is stated beside its code
 * here and, for the copy-on-write of zeros, at vsmfs_write_atomic() in
 * cow.c.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include <linux/falloc.h>
#include <linux/pagemap.h>
#include "vsmfs.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "data.h"

/* Make the size @size in @t; bytes past the old end are zeroed first. */
static void vsmfs_fallocate_size_t(struct inode *inode, loff_t size)
{
	loff_t old = i_size_read(inode);

	vsmfs_zero_mapped(inode, old, min_t(loff_t, size, round_up(old, VSMFS_BLOCK_SIZE)));
	i_size_write(inode, size);
	inode->i_ctime = current_time(inode);
}

/*
 * Zero [@from, @to) of the file by copy-on-write in @t, as a write of zeros
 * would (vsmfs_cow_write_t()): the range is zero once @t commits and
 * untouched before. Returns the bytes zeroed (short if pages ran out part
 * way), or the errno of another error, after which the part before it is
 * zero once @t commits.
 */
static ssize_t vsmfs_cow_zero_t(struct vsmfs_trans *t, struct inode *inode, loff_t from,
				loff_t to)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	size_t len = to - from, nseg = DIV_ROUND_UP(len, PAGE_SIZE), i;
	struct bio_vec *bv;
	struct iov_iter it;
	ssize_t n;
	int err;

	bv = kvmalloc_array(nseg, sizeof(*bv), GFP_KERNEL);
	if (!bv)
		return -ENOMEM;
	for (i = 0; i < nseg; i++) {
		bv[i].bv_page = ZERO_PAGE(0);
		bv[i].bv_offset = 0;
		bv[i].bv_len = min_t(size_t, len - i * PAGE_SIZE, PAGE_SIZE);
	}
	iov_iter_bvec(&it, ITER_SOURCE, bv, nseg, len);
	n = vsmfs_cow_write_t(t, inode, from, len, &it,
			      i_size_read(inode) >= VSMFS_LARGE_FILE,
			      READ_ONCE(sbi->s_cow_mode), &err);
	kvfree(bv);
	/* Zeros never come up short: say which error stopped them. */
	if (n >= 0 && n < len && err)
		return err;
	return n;
}

/*
 * Punch or zero [from, to) of piece @key, in one transaction, which also
 * makes the size @size if it is not 0. Pages of the run wholly inside a
 * punched range that reaches its end are freed; the rest of the range
 * inside the run is zeroed. With @atomic (data=atomic) the zeroing is a
 * copy-on-write, as a write of zeros would be, which for a zero range also
 * allocates the pages past the run, so that a crash finds the piece as it
 * was or as it is after; otherwise the caller allocated them, and the
 * zeroing is in place, which only the fence of the commit orders before
 * the index shrinks. Pages of the old version are freed here after the
 * copy-on-write has allocated what it needs, so that it cannot write over
 * a page the old version still reaches. A punch that finds too little
 * free space for copy-on-write zeroes in place.
 */
/* Blocks vsmfs_clear_piece() dirties besides its copy-on-write: 2 bitmaps. */
#define VSMFS_CLEAR_BLOCKS	2

static int vsmfs_clear_piece(struct inode *inode, u64 key, loff_t from, loff_t to,
			     bool punch, bool atomic, loff_t size)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 pstart = key << VSMFS_VSP_SHIFT, e, cnt, first, freed;
	loff_t zto = to;
	bool shrink, fits, in_place = false;
	struct vsmfs_trans t;
	int ret = 0;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	vsmfs_trans_track(&t, inode, false);
	e = vsmfs_idx_lookup(inode, key);
	cnt = vsmfs_idx_count(e);
	/* First page wholly inside the range. */
	first = DIV_ROUND_UP(from - pstart, VSMFS_BLOCK_SIZE);
	/* The range covers the end of the run: its tail is freed. */
	shrink = e && punch && first < cnt && to >= pstart + (cnt << VSMFS_BLOCK_SHIFT);
	if (shrink)
		zto = pstart + (first << VSMFS_BLOCK_SHIFT);
	/* Pages inside the run, and for an atomic zero range past it: zeroed. */
	if (punch || !atomic)
		zto = min_t(loff_t, zto, pstart + (cnt << VSMFS_BLOCK_SHIFT));
	if (from < zto && (e || !punch)) {
		ssize_t n = -ENOSPC;

		/*
		 * A copy-on-write too large for the journal: a hole is zeroed
		 * in place (a zero range is split by the caller).
		 */
		fits = vsmfs_cow_blocks_at(READ_ONCE(sbi->s_cow_mode), from, zto - from) <=
		       vsmfs_trans_room(&t) - VSMFS_CLEAR_BLOCKS;
		if (atomic && fits)
			n = vsmfs_cow_zero_t(&t, inode, from, zto);
		if (n == -ENOSPC && (punch || !atomic))
			in_place = true;
		else if (n < 0)
			ret = n;
		else if (n < zto - from)
			ret = -ENOSPC;	/* pages ran out part way */
	}
	/* A run that shrinks gives up the reserved tail after it first. */
	if (!ret && shrink && vi->i_tail_key == key + 1)
		ret = vsmfs_tail_release_t(&t, inode, &freed);
	if (!ret && shrink) {
		/* The copy-on-write may have moved the run: look it up again. */
		e = vsmfs_idx_lookup(inode, key);
		ret = vsmfs_free_pages(&t, vsmfs_idx_lpn(e) + first, cnt - first);
		if (!ret) {
			vi->i_pages -= cnt - first;
			inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
			ret = vsmfs_idx_set(&t, inode, key,
					    first ? vsmfs_idx_make(vsmfs_idx_lpn(e), first) : 0);
		}
	}
	/*
	 * Only an atomic zero range passes @size, and its copy-on-write has
	 * zeroed the bytes between the old end and the range already.
	 */
	if (!ret && size)
		i_size_write(inode, size);
	inode->i_mtime = current_time(inode);
	inode->i_ctime = inode->i_mtime;
	if (!ret)
		ret = vsmfs_write_inode_t(&t, inode);
	/*
	 * Zeros written in place cannot be taken back by an abort: they are
	 * written once nothing else can fail, over pages the run keeps.
	 */
	if (!ret && in_place)
		vsmfs_zero_mapped(inode, from, zto);
	if (ret)
		vsmfs_trans_abort(&t);
	else
		/* Zeros are durable (fence in the commit) before the index shrinks. */
		ret = vsmfs_trans_commit(&t);
	up_write(&vi->i_idx_sem);
	return ret;
}

/*
 * Allocate zeroed pages up to @to in piece @key, in one transaction, which
 * also makes the size @size if it is not 0 (and the pages were allocated).
 * The end of what the run held before (and so may hold data) goes to
 * @oldend.
 */
static int vsmfs_alloc_piece(struct inode *inode, u64 key, loff_t to, bool large,
			     loff_t size, loff_t *oldend)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 need = DIV_ROUND_UP(to - (key << VSMFS_VSP_SHIFT), VSMFS_BLOCK_SIZE), run, have;
	struct vsmfs_trans t;
	int ret;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	vsmfs_trans_track(&t, inode, false);
	ret = vsmfs_extend_run(&t, inode, key, need, 0, 0, large, &run, &have);
	if (!ret && size)
		vsmfs_fallocate_size_t(inode, size);
	if (!ret)
		ret = vsmfs_write_inode_t(&t, inode);
	ret = vsmfs_trans_end(&t, ret);
	up_write(&vi->i_idx_sem);
	*oldend = (key << VSMFS_VSP_SHIFT) + (have << VSMFS_BLOCK_SHIFT);
	return ret;
}

static long vsmfs_do_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(file);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t end = offset + len, pos, size, newsize = 0;
	bool punch = mode & FALLOC_FL_PUNCH_HOLE, zero = mode & FALLOC_FL_ZERO_RANGE;
	bool atomic = READ_ONCE(sbi->s_data_mode) == VSMFS_DATA_ATOMIC;
	struct vsmfs_trans t;
	int ret;

	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (punch && (!(mode & FALLOC_FL_KEEP_SIZE) || zero))
		return -EOPNOTSUPP;
	if (!S_ISREG(inode->i_mode))
		return -ENODEV;

	inode_lock(inode);
	size = i_size_read(inode);
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > size) {
		ret = inode_newsize_ok(inode, end);
		if (ret)
			goto out_unlock;
	} else if (end > inode->i_sb->s_maxbytes) {
		ret = -EFBIG;
		goto out_unlock;
	}
	ret = file_modified(file);
	if (ret)
		goto out_unlock;

	filemap_invalidate_lock(inode->i_mapping);
	if (punch || zero) {
		ret = vsmfs_break_layouts(inode);
		if (ret)
			goto out_invalidate;
		loff_t ustart = offset, uend = end;

		/*
		 * User mappings of every page touched go, partial ones too:
		 * copy-on-write gives them new frames.
		 */
		vsmfs_cow_span(READ_ONCE(sbi->s_cow_mode), &ustart, &uend);
		truncate_pagecache_range(inode, ustart, uend - 1);
	}
	/*
	 * A plain allocation that extends the file sets the size in the
	 * transaction of its last piece: one that fits in a piece is atomic,
	 * and a crash in a longer one leaves pages past the end, zeroed, as
	 * FALLOC_FL_KEEP_SIZE would.
	 */
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > size && (!zero || atomic))
		newsize = end;
	for (pos = offset; pos < end && !ret;) {
		u64 key = pos >> VSMFS_VSP_SHIFT;
		loff_t pend;

		if (punch) {
			/* Pieces without pages have nothing to punch. */
			u64 next = vsmfs_idx_next(inode, key);

			if (next >= VSMFS_MAX_KEY || (loff_t)(next << VSMFS_VSP_SHIFT) >= end)
				break;
			if (next != key) {
				key = next;
				pos = key << VSMFS_VSP_SHIFT;
			}
		}
		pend = min_t(loff_t, end, (key + 1) << VSMFS_VSP_SHIFT);
		if (punch) {
			ret = vsmfs_clear_piece(inode, key, pos, pend, true, atomic, 0);
		} else if (zero && atomic) {
			/* In parts that fit in the journal. */
			pend = pos + vsmfs_atomic_part(sbi, READ_ONCE(sbi->s_cow_mode), pos,
						       pend - pos, VSMFS_CLEAR_BLOCKS);
			ret = vsmfs_clear_piece(inode, key, pos, pend, false, true,
						pend == end ? newsize : 0);
		} else {
			loff_t oldend;

			ret = vsmfs_alloc_piece(inode, key, pend, end >= VSMFS_LARGE_FILE,
						pend == end ? newsize : 0, &oldend);
			/* Newly allocated pages are zero already. */
			if (!ret && zero && pos < oldend)
				ret = vsmfs_clear_piece(inode, key, pos, min(pend, oldend),
							false, false, 0);
		}
		pos = pend;
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	if (!ret && !(mode & FALLOC_FL_KEEP_SIZE) && end > size && !newsize) {
		down_write(&VSMFS_I(inode)->i_idx_sem);
		vsmfs_trans_begin(sbi, &t);
		vsmfs_trans_track(&t, inode, false);
		vsmfs_fallocate_size_t(inode, end);
		ret = vsmfs_write_inode_t(&t, inode);
		ret = vsmfs_trans_end(&t, ret);
		up_write(&VSMFS_I(inode)->i_idx_sem);
	}
out_invalidate:
	filemap_invalidate_unlock(inode->i_mapping);
out_unlock:
	inode_unlock(inode);
	return ret;
}

/**
 * vsmfs_fallocate() - the fallocate() of a regular file
 * @file: the file
 * @mode: FALLOC_FL_* flags: KEEP_SIZE, PUNCH_HOLE (with KEEP_SIZE) or
 *        ZERO_RANGE; none allocates
 * @offset: start of the range
 * @len: its length
 *
 * Return: 0 or a negative errno.
 */
long vsmfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	u64 t0 = vsmfs_trace_start(vsmfs_fallocate);
	long ret = vsmfs_do_fallocate(file, mode, offset, len);

	trace_vsmfs_fallocate(file_inode(file), offset, len, ret, t0);
	return ret;
}
