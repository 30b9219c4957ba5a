// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs fallocate: preallocation (keeping the size or not), hole punching
 * and zeroing of a range; under data=atomic, zeroing is a copy-on-write of
 * zeros (vsmfs_cow_zero(), through cow.c).
 *
 * Ordering: the PM store ordering of each step is stated beside its code
 * here and, for the copy-on-write of zeros, at vsmfs_write_part() in
 * write.c; preallocation is the write path's VSMFS_WK_ALLOC (write.c).
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include <linux/falloc.h>
#include <linux/pagemap.h>
#include "vsmfs.h"
#include "ptable.h"
#include "vsp.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "data.h"

/* Make the size @size in @t; bytes past the old end are zeroed first. */
static void vsmfs_fallocate_size(struct inode *inode, loff_t size)
{
	loff_t old = i_size_read(inode);

	vsmfs_zero_mapped(inode, old, min_t(loff_t, size, round_up(old, VSMFS_BLOCK_SIZE)));
	i_size_write(inode, size);
	inode->i_ctime = current_time(inode);
}

/*
 * Zero [@from, @to) of the file by copy-on-write in @t, as a write of zeros
 * would (vsmfs_cow_write()): the range is zero once @t commits and
 * untouched before. Returns the bytes zeroed (short if pages ran out part
 * way), or the errno of another error, after which the part before it is
 * zero once @t commits.
 */
static ssize_t vsmfs_cow_zero(struct vsmfs_trans *t, struct inode *inode, loff_t from,
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
	n = vsmfs_cow_write(t, inode, from, len, &it,
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
/*
 * Whether [@from, @to) of piece @key, with index entry @e, lies in one
 * page of its run that has no frame: zero already.
 */
static bool vsmfs_range_hole(struct inode *inode, u64 e, u64 key, loff_t from, loff_t to)
{
	u64 pg = (from - (key << VSMFS_VSP_SHIFT)) >> VSMFS_BLOCK_SHIFT;

	return e && (from >> VSMFS_BLOCK_SHIFT) == ((to - 1) >> VSMFS_BLOCK_SHIFT) &&
	       pg < vsmfs_idx_count(e) &&
	       vsmfs_lpn_hole(VSMFS_SB(inode->i_sb), vsmfs_idx_lpn(e) + pg);
}

/* Blocks vsmfs_clear_piece() dirties besides its copy-on-write: 2 bitmaps. */
#define VSMFS_CLEAR_BLOCKS	2

static int vsmfs_clear_piece(struct inode *inode, u64 key, loff_t from, loff_t to,
			     bool punch, bool atomic, loff_t size)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 pstart = key << VSMFS_VSP_SHIFT, e, cnt, first, last, next, freed;
	loff_t zto = to, zfrom[2], zend[2];
	bool shrink, fits, in_place[2] = { false, false };
	struct vsmfs_trans t;
	unsigned int nz = 1, i;
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
	zfrom[0] = from;
	zend[0] = zto;
	/*
	 * Whole pages inside the run give their frames back on a sparse file
	 * system; what is left to zero are the partial pages at the edges,
	 * and the pages after @next if the journal had no room for more.
	 */
	last = zto > from ? (zto - pstart) >> VSMFS_BLOCK_SHIFT : 0;
	if (punch && sbi->s_noframe && e && first < last) {
		ret = vsmfs_punch_frames(&t, inode, vsmfs_idx_lpn(e) + first, last - first,
					 &next);
		next -= vsmfs_idx_lpn(e);
		zend[0] = min_t(loff_t, zto, pstart + (first << VSMFS_BLOCK_SHIFT));
		zfrom[1] = max_t(loff_t, from, pstart + (next << VSMFS_BLOCK_SHIFT));
		zend[1] = zto;
		nz = 2;
	}
	for (i = 0; i < nz && !ret; i++) {
		ssize_t n = -ENOSPC;

		/* A punch leaves a hole alone; a zero range allocates it. */
		if (zfrom[i] >= zend[i] || (punch && !e) ||
		    (punch && vsmfs_range_hole(inode, e, key, zfrom[i], zend[i])))
			continue;
		/*
		 * A copy-on-write too large for the journal: a hole is zeroed
		 * in place (a zero range is split by the caller).
		 */
		fits = vsmfs_cow_blocks_at(READ_ONCE(sbi->s_cow_mode), zfrom[i],
					   zend[i] - zfrom[i]) <=
		       vsmfs_trans_room(&t) - VSMFS_CLEAR_BLOCKS;
		if (atomic && fits)
			n = vsmfs_cow_zero(&t, inode, zfrom[i], zend[i]);
		if (n == -ENOSPC && (punch || !atomic))
			in_place[i] = true;
		else if (n < 0)
			ret = n;
		else if (n < zend[i] - zfrom[i])
			ret = -ENOSPC;	/* pages ran out part way */
		/* The copy-on-write may have moved the run: look it up again. */
		e = vsmfs_idx_lookup(inode, key);
	}
	/* A run that shrinks gives up the reserved tail after it first. */
	if (!ret && shrink && vi->i_tail_key == key + 1)
		ret = vsmfs_tail_release(&t, inode, &freed);
	if (!ret && shrink) {
		/* The copy-on-write may have moved the run: look it up again. */
		e = vsmfs_idx_lookup(inode, key);
		ret = vsmfs_free_data_pages(&t, vsmfs_idx_lpn(e) + first, cnt - first);
		if (!ret) {
			vi->i_pages -= vsmfs_frames_in(sbi, vsmfs_idx_lpn(e) + first, cnt - first);
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
		ret = vsmfs_mark_inode_dirty(&t, inode);
	/*
	 * Zeros written in place cannot be taken back by an abort: they are
	 * written once nothing else can fail, over pages the run keeps.
	 */
	for (i = 0; i < nz && !ret; i++)
		if (in_place[i])
			vsmfs_zero_mapped(inode, zfrom[i], zend[i]);
	if (ret)
		vsmfs_trans_abort(&t);
	else
		/* Zeros are durable (fence in the commit) before the index shrinks. */
		ret = vsmfs_trans_commit(&t);
	up_write(&vi->i_idx_sem);
	return ret;
}

/*
 * Allocate zeroed pages over [@from, @to) in piece @key with the write
 * path's begin and end steps (VSMFS_WK_ALLOC), in one transaction, which
 * also makes the size @size if it is not 0 (and the pages were allocated):
 * the run grows to @to, and its pages without frames in the range (sparse
 * file systems) take frames, zeroed, in more transactions if the journal
 * has no room for all in one. The end of what the run held before (and so
 * may hold data) goes to @oldend.
 */
static int vsmfs_alloc_piece(struct inode *inode, u64 key, loff_t from, loff_t to, bool large,
			     loff_t size, loff_t *oldend)
{
	/* Only the fields of VSMFS_WK_ALLOC are set: not zeroed at entry. */
	struct vsmfs_wmap m __uninitialized;
	bool first = true;
	u64 have = 0;
	int ret;

	do {
		ret = vsmfs_wmap_begin(&m, inode, from, to - from,
				       VSMFS_WM_FALLOC | (large ? VSMFS_WM_LARGE : 0));
		if (ret)
			break;
		if (first)
			have = m.have;
		first = false;
		if (size && !m.more)
			vsmfs_fallocate_size(inode, size);
		ret = vsmfs_wmap_end(&m, 0);
	} while (!ret && m.more);
	*oldend = (key << VSMFS_VSP_SHIFT) + (have << VSMFS_BLOCK_SHIFT);
	return ret;
}

/*
 * Collapse and insert range move file pages by swapping page table
 * entries: page i of the file takes the frame of page i + n (collapse) or
 * page i + n that of page i (insert), and a page without a frame moves as
 * a hole. Only a sparse file system has pages without frames, so only it
 * can leave the range a collapse drops, or the one an insert opens, as
 * holes the swaps carry along.
 *
 * The whole shift is one transaction, atomic: a crash leaves the file as
 * it was or as it is after. It takes the whole journal: the running
 * transaction commits first, and a shift that would dirty more page table,
 * index and bitmap blocks than the journal holds fails with EFBIG before
 * anything is committed (with the default journal, shifting a file of
 * tens of GiB).
 *
 * Ordering: no data is written; the page table entries, index entries,
 * bitmaps and the size reach PM together with the commit.
 */

/*
 * Blocks one step of a shift may dirty: two page table blocks, a run
 * growing (two bitmap blocks, two page table blocks, the index blocks).
 */
#define VSMFS_SHIFT_STEP_BLOCKS	10

/* The logical page of file page @i, 0 if no run reaches it. */
static u64 vsmfs_file_lpn(struct inode *inode, u64 i, u64 *left)
{
	u64 e = vsmfs_idx_lookup(inode, i / VSMFS_VSP_PAGES), pg = i % VSMFS_VSP_PAGES;

	if (!e || pg >= vsmfs_idx_count(e)) {
		/* Pages up to the end of the piece have none either. */
		*left = VSMFS_VSP_PAGES - pg;
		return 0;
	}
	*left = vsmfs_idx_count(e) - pg;
	return vsmfs_idx_lpn(e) + pg;
}

/* Make the run of the piece of file page @i reach @i + @n - 1, with holes. */
static int vsmfs_shift_cover(struct vsmfs_trans *t, struct inode *inode, u64 i, u64 n)
{
	u64 key = i / VSMFS_VSP_PAGES, need = i % VSMFS_VSP_PAGES + n, nlpn;
	u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;
	int ret;

	if (have >= need)
		return 0;
	/* Index blocks first, as vsmfs_extend_run(). */
	ret = vsmfs_idx_set(t, inode, key, e);
	if (!ret)
		ret = vsmfs_extend_sparse(t, inode, vsmfs_idx_lpn(e), have, need,
					  need << VSMFS_BLOCK_SHIFT, false, &nlpn);
	/* No page is written: those that came with frames give them up there. */
	return ret ?: vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, need));
}

/*
 * Move up to @n pages from file page @src to @dst, which are holes, fewer
 * where a run or piece ends; @n is at most the distance between them, so
 * the two ranges never overlap. With @down the ranges end at @src and
 * @dst and the shift goes on below them. Pages without a logical page at
 * @src need no move: @dst is a hole already. Returns the pages done, or a
 * negative errno.
 */
static long vsmfs_shift_step(struct vsmfs_trans *t, struct vsmfs_swap *sw, struct inode *inode,
			     u64 src, u64 dst, u64 n, bool down)
{
	u64 ls, ld, left_s, left_d, b, e, cnt;
	int ret;

	if (vsmfs_trans_room(t) < VSMFS_SHIFT_STEP_BLOCKS)
		return -EFBIG;
	if (down) {
		b = min3(n, src % VSMFS_VSP_PAGES + 1, dst % VSMFS_VSP_PAGES + 1);
		e = vsmfs_idx_lookup(inode, src / VSMFS_VSP_PAGES);
		cnt = e ? vsmfs_idx_count(e) : 0;
		if (src % VSMFS_VSP_PAGES >= cnt)
			return min(b, src % VSMFS_VSP_PAGES - cnt + 1);
		src -= b - 1;
		dst -= b - 1;
	} else {
		if (!vsmfs_file_lpn(inode, src, &left_s))
			return min(n, left_s);
		b = min3(n, left_s, VSMFS_VSP_PAGES - dst % VSMFS_VSP_PAGES);
	}
	ret = vsmfs_shift_cover(t, inode, dst, b);
	if (ret)
		return ret;
	/* Growing the run may have moved it. */
	ls = vsmfs_file_lpn(inode, src, &left_s);
	ld = vsmfs_file_lpn(inode, dst, &left_d);
	if (!ls || !ld || left_d < b || left_s < b)
		return -EFSCORRUPTED;
	ret = vsmfs_swap_pages(t, sw, ld, ls, b);
	return ret ?: b;
}

/*
 * FALLOC_FL_COLLAPSE_RANGE and FALLOC_FL_INSERT_RANGE of [@offset, @offset +
 * @len), both page aligned, under the inode and invalidate locks.
 */
static int vsmfs_shift_range(struct inode *inode, loff_t offset, loff_t len, bool insert)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	loff_t size = i_size_read(inode), nsize = insert ? size + len : size - len;
	u64 s = offset >> VSMFS_BLOCK_SHIFT, n = len >> VSMFS_BLOCK_SHIFT;
	u64 npages = DIV_ROUND_UP(size, VSMFS_BLOCK_SIZE), i, lpn, left, next, freed;
	struct vsmfs_swap sw;
	struct vsmfs_trans t;
	bool more;
	long done;
	int ret;

	ret = vsmfs_break_layouts(inode);
	if (ret)
		return ret;
	/* Every mapping past the offset now reaches other pages. */
	truncate_pagecache_range(inode, offset, LLONG_MAX);
	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin_credits(sbi, &t, vsmfs_trans_max_blocks(sbi));
	vsmfs_trans_track(&t, inode, false);
	vsmfs_swap_init(sbi, &sw);
	/* No reserved tail, and nothing past the end, to move along. */
	ret = vsmfs_tail_release(&t, inode, &freed);
	if (!ret)
		ret = vsmfs_truncate(&t, inode, size, &more);
	if (!ret && more)
		ret = -EFBIG;
	if (!ret && !insert) {
		/* The range dropped becomes holes; they move to the end. */
		for (i = s; !ret && i < s + n; i += left) {
			lpn = vsmfs_file_lpn(inode, i, &left);
			left = min(left, s + n - i);
			if (!lpn)
				continue;
			ret = vsmfs_punch_frames(&t, inode, lpn, left, &next);
			if (!ret && next != lpn + left)
				ret = vsmfs_trans_room(&t) < 2 ? -EFBIG : -ENOSPC;
		}
		for (i = s; !ret && i + n < npages; i += done) {
			done = vsmfs_shift_step(&t, &sw, inode, i + n, i,
						min(n, npages - n - i), false);
			if (done < 0)
				ret = done;
		}
	} else if (!ret) {
		for (i = npages; !ret && i > s; i -= done) {
			done = vsmfs_shift_step(&t, &sw, inode, i - 1, i - 1 + n, min(n, i - s),
						true);
			if (done < 0)
				ret = done;
		}
	}
	vsmfs_swap_flush(&sw);
	if (!ret && !insert)
		ret = vsmfs_truncate(&t, inode, nsize, &more);
	if (!ret && !insert && more)
		ret = -EFBIG;
	if (!ret) {
		i_size_write(inode, nsize);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
		ret = vsmfs_mark_inode_dirty(&t, inode);
	}
	/* Nothing of a shift that failed part way is kept. */
	if (ret)
		vsmfs_trans_abort(&t);
	else
		ret = vsmfs_trans_commit(&t);
	up_write(&vi->i_idx_sem);
	return ret;
}

/* fallocate() with FALLOC_FL_COLLAPSE_RANGE or FALLOC_FL_INSERT_RANGE. */
static long vsmfs_fallocate_shift(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(file);
	bool insert = mode & FALLOC_FL_INSERT_RANGE;
	loff_t size;
	int ret;

	if (mode != FALLOC_FL_COLLAPSE_RANGE && mode != FALLOC_FL_INSERT_RANGE)
		return -EINVAL;
	if (!S_ISREG(inode->i_mode))
		return -ENODEV;
	if (!VSMFS_SB(inode->i_sb)->s_noframe)
		return -EOPNOTSUPP;
	if ((offset | len) & (VSMFS_BLOCK_SIZE - 1))
		return -EINVAL;
	inode_lock(inode);
	size = i_size_read(inode);
	/* As ext4 and XFS: a collapse ends before the end, an insert starts before it. */
	if (insert ? offset >= size : offset + len >= size)
		ret = -EINVAL;
	else
		ret = insert ? inode_newsize_ok(inode, size + len) : 0;
	if (!ret)
		ret = file_modified(file);
	if (!ret) {
		filemap_invalidate_lock(inode->i_mapping);
		ret = vsmfs_shift_range(inode, offset, len, insert);
		filemap_invalidate_unlock(inode->i_mapping);
	}
	inode_unlock(inode);
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

	if (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE))
		return vsmfs_fallocate_shift(file, mode, offset, len);
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
			bool large = end >= VSMFS_LARGE_FILE;
			loff_t sz = pend == end ? newsize : 0, oldend = 0;

			/*
			 * Beside other handles where it can (with no old bytes
			 * to zero), else in a handle of the other kind.
			 */
			ret = zero ? -EAGAIN : vsmfs_falloc_pages(inode, pos, pend, large, sz);
			if (ret == -EAGAIN)
				ret = vsmfs_alloc_piece(inode, key, pos, pend, large, sz, &oldend);
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
		vsmfs_fallocate_size(inode, end);
		ret = vsmfs_mark_inode_dirty(&t, inode);
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
 * @mode: FALLOC_FL_* flags: KEEP_SIZE, PUNCH_HOLE (with KEEP_SIZE),
 *        ZERO_RANGE, COLLAPSE_RANGE or INSERT_RANGE (sparse file systems);
 *        none allocates
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
