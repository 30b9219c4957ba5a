// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs regular files: read and write through the mapping layer, DAX
 * mmap, fallocate, SEEK_DATA/SEEK_HOLE and FIEMAP.
 *
 * Each 2 MiB piece of a file is backed by one run of contiguous logical
 * pages, so a read or write of a piece is one copy through the kernel
 * virtual range. A run grows in place when the logical pages after it are
 * free; otherwise a longer run is allocated and the frames holding the
 * file's data are swapped into it (vsmfs_swap_pages()), so no data is
 * copied and the physical pages a user mapping points at stay the same.
 *
 * Ordering: new data is written with non-temporal stores (or flushed) and
 * the transaction that makes it reachable (index entry, page table swaps,
 * size) commits after a fence, so a crash never exposes unwritten pages.
 * Overwrites of existing pages are done in place.
 *
 * Locking: see struct vsmfs_inode_info. Copies to and from user memory
 * happen with page faults disabled while i_idx_sem or a transaction is
 * held, since the fault may be on a mapping of a vsmfs file; a copy cut
 * short by a fault is retried after faulting the user pages in unlocked.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/iomap.h>
#include <linux/falloc.h>
#include <linux/uaccess.h>
#include <linux/pagemap.h>
#include <linux/writeback.h>
#include "vsmfs.h"
#include "pmem.h"
#include "fault.h"

/* Files whose end passes this get runs starting at free superpages. */
#define VSMFS_LARGE_FILE	(256 * 1024)

#define VSMFS_PIECE_SIZE	(1ULL << VSMFS_VSP_SHIFT)

static ssize_t vsmfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t pos = iocb->ki_pos, size;
	ssize_t done = 0;
	int stalled = 0;

	if (!iov_iter_count(to))
		return 0;
	inode_lock_shared(inode);
	size = i_size_read(inode);
	while (iov_iter_count(to) && pos < size) {
		u64 pg = pos >> VSMFS_BLOCK_SHIFT;
		u64 key = pg / VSMFS_VSP_PAGES, in = pg % VSMFS_VSP_PAGES;
		u64 piece_end = (key + 1) << VSMFS_VSP_SHIFT;
		size_t len = min3((u64)iov_iter_count(to), (u64)(size - pos), piece_end - pos);
		size_t n = 0;
		u64 e;

		down_read(&vi->i_idx_sem);
		e = vsmfs_idx_lookup(inode, key);
		pagefault_disable();
		if (e && in < vsmfs_idx_count(e)) {
			u64 run_end = ((key << VSMFS_VSP_SHIFT) +
				       (vsmfs_idx_count(e) << VSMFS_BLOCK_SHIFT));
			char *p = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e));

			len = min_t(u64, len, run_end - pos);
			if (p)
				n = vsmfs_fault(VSMFS_FAULT_PM_READ) ? 0 :
				    vsmfs_copy_to_iter(p + (pos - (key << VSMFS_VSP_SHIFT)),
						       len, to);
			else
				done = done ?: -EFSCORRUPTED;
		} else {
			n = iov_iter_zero(len, to);
		}
		pagefault_enable();
		up_read(&vi->i_idx_sem);
		pos += n;
		done += n;
		if (done < 0)
			break;
		if (n < len) {
			/*
			 * A fault on the user buffer: fault it in unlocked and
			 * go on. No progress twice in a row with the buffer
			 * present means the PM page itself is poisoned.
			 */
			if (fault_in_iov_iter_writeable(to, len - n) == len - n) {
				done = done ?: -EFAULT;
				break;
			}
			if (!n && stalled++) {
				done = done ?: -EIO;
				break;
			}
		} else {
			stalled = 0;
		}
	}
	inode_unlock_shared(inode);
	iocb->ki_pos = pos;
	file_accessed(iocb->ki_filp);
	return done;
}

/*
 * Make the run of piece @key cover pages [0, @need) of the piece. New pages
 * outside [@wfrom, @wto) (byte offsets in the piece that the caller will
 * fill) are zeroed. When the run cannot grow in place, a new run is taken
 * and the frames of the old one are swapped into it: file data keeps its
 * frames. The run's first logical page is returned in @runp, the pages it
 * had before in @havep.
 *
 * Context: i_idx_sem held for writing, inside @t.
 */
static int vsmfs_extend_run(struct vsmfs_trans *t, struct inode *inode, u64 key,
			    u64 need, u64 wfrom, u64 wto, bool large, u64 *runp, u64 *havep)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 e = vsmfs_idx_lookup(inode, key);
	u64 have = e ? vsmfs_idx_count(e) : 0, lpn = vsmfs_idx_lpn(e), nlpn;
	struct vsmfs_swap sw;
	char *base;
	int ret;

	*runp = lpn;
	*havep = have;
	if (have >= need)
		return 0;
	/* Index blocks first: once pages are taken, nothing below can fail. */
	ret = vsmfs_idx_set(t, inode, key, e);
	if (ret)
		return ret;
	if (have && !vsmfs_alloc_pages_at(t, lpn + have, need - have)) {
		nlpn = lpn;
	} else {
		ret = vsmfs_alloc_pages(t, need, large, &nlpn);
		if (ret)
			return ret;
		if (have) {
			/* Move the run: swap its frames in, free the old pages. */
			vsmfs_swap_init(sbi, &sw);
			ret = vsmfs_swap_pages(t, &sw, lpn, nlpn, have);
			vsmfs_swap_flush(&sw);
			if (!ret)
				ret = vsmfs_free_pages(t, lpn, have);
			if (ret) {
				vsmfs_free_pages(t, nlpn, need);
				return ret;
			}
		}
	}
	base = vsmfs_lpn_ptr(sbi, nlpn);
	/* Zero the new pages around the part the caller fills. */
	if (wfrom > have << VSMFS_BLOCK_SHIFT)
		vsmfs_zero_pm(base + (have << VSMFS_BLOCK_SHIFT),
			      wfrom - (have << VSMFS_BLOCK_SHIFT));
	if (wto < need << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wto, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm(base + z, (need << VSMFS_BLOCK_SHIFT) - z);
	}
	VSMFS_I(inode)->i_pages += need - have;
	inode->i_blocks = VSMFS_I(inode)->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	*runp = nlpn;
	return vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, need));
}

/*
 * Write the part of one piece at @pos, at most @len bytes, in one
 * transaction. Returns the bytes copied (possibly short after a fault on
 * the user buffer) or a negative errno.
 */
static ssize_t vsmfs_write_piece(struct inode *inode, loff_t pos, size_t len,
				 struct iov_iter *from, bool large)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 key = pos >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
	u64 wfrom = pos - pstart, wto = wfrom + len;
	u64 need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE), run, have;
	loff_t size = i_size_read(inode);
	struct vsmfs_trans t;
	size_t n = 0;
	int ret, err;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	/* Bytes between the old end and the write may have been mapped. */
	if (pos > size)
		vsmfs_zero_mapped(inode, size,
				  min_t(loff_t, pos, round_up(size, VSMFS_BLOCK_SIZE)));
	ret = vsmfs_extend_run(&t, inode, key, need, wfrom, wto, large, &run, &have);
	if (!ret) {
		char *p = vsmfs_lpn_ptr(sbi, run);

		pagefault_disable();
		n = vsmfs_copy_from_iter(p + wfrom, len, from);
		pagefault_enable();
		/* New pages the copy did not reach must not keep old contents. */
		if (n < len && wto > have << VSMFS_BLOCK_SHIFT) {
			u64 z = max(wfrom + n, have << VSMFS_BLOCK_SHIFT);

			vsmfs_zero_pm(p + z, wto - z);
		}
		if (n) {
			if (pos + n > size)
				i_size_write(inode, pos + n);
			inode->i_mtime = current_time(inode);
			inode->i_ctime = inode->i_mtime;
		}
	}
	err = vsmfs_write_inode_t(&t, inode);
	/* The fence in the commit makes the data durable before the index. */
	err = vsmfs_trans_commit(&t) ?: err;
	up_write(&vi->i_idx_sem);
	if (ret)
		return ret;
	if (err)
		return err;
	return n;
}

static ssize_t vsmfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	loff_t pos, end;
	ssize_t ret, done = 0;
	bool large;

	inode_lock(inode);
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out_unlock;
	ret = file_remove_privs(file);
	if (ret)
		goto out_unlock;
	pos = iocb->ki_pos;
	end = pos + iov_iter_count(from);
	large = end >= VSMFS_LARGE_FILE;

	while (pos < end) {
		size_t len = min_t(u64, end - pos,
				   VSMFS_PIECE_SIZE - (pos & (VSMFS_PIECE_SIZE - 1)));
		ssize_t n;

		if (fault_in_iov_iter_readable(from, len) == len) {
			ret = -EFAULT;
			break;
		}
		n = vsmfs_write_piece(inode, pos, len, from, large);
		if (n < 0) {
			ret = n;
			break;
		}
		pos += n;
		done += n;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	iocb->ki_pos = pos;
out_unlock:
	inode_unlock(inode);
	if (done > 0)
		return generic_write_sync(iocb, done);
	return ret;
}

/**
 * vsmfs_fsync() - make a file's data and metadata durable
 * @file: the file
 * @start: start of the range
 * @end: end of the range
 * @datasync: only data
 *
 * write() data is durable when the call returns (non-temporal stores and
 * the fence of its commit) and so are all metadata changes (synchronous
 * commits). What can be left is data stored through a shared mapping,
 * which sits in CPU caches until written back here, and timestamps the
 * VFS changed without a transaction.
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct inode *inode = file_inode(file);
	int ret;

	ret = file_write_and_wait_range(file, start, end);
	if (!ret && !datasync)
		ret = sync_inode_metadata(inode, 1);
	vsmfs_fence();
	return ret;
}

/*
 * iomap for DAX faults, SEEK_DATA/SEEK_HOLE and FIEMAP. A mapped extent is
 * a physically contiguous part of a run; a hole extends to the next piece
 * with data. A write fault on a hole allocates zeroed pages and commits
 * before the page is mapped, so MAP_SYNC needs no further flush.
 */
static int vsmfs_iomap_begin(struct inode *inode, loff_t pos, loff_t length,
			     unsigned int flags, struct iomap *iomap, struct iomap *srcmap)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	bool alloc = (flags & IOMAP_WRITE) && (flags & IOMAP_FAULT);
	u64 key = pos >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
	u64 pg = (pos - pstart) >> VSMFS_BLOCK_SHIFT, e, cnt;
	int ret = 0;

	if (pos >= sbi->s_sb->s_maxbytes)
		return -EFBIG;
	iomap->flags = 0;
	iomap->bdev = inode->i_sb->s_bdev;
	iomap->dax_dev = sbi->s_daxdev;
	iomap->offset = pos & ~(loff_t)(VSMFS_BLOCK_SIZE - 1);

	if (alloc)
		down_write(&vi->i_idx_sem);
	else
		down_read(&vi->i_idx_sem);
	e = vsmfs_idx_lookup(inode, key);
	cnt = e ? vsmfs_idx_count(e) : 0;
	if (pg >= cnt && alloc) {
		struct vsmfs_trans t;
		u64 run, have;
		int err;

		vsmfs_trans_begin(sbi, &t);
		ret = vsmfs_extend_run(&t, inode, key, pg + 1, 0, 0,
				       i_size_read(inode) >= VSMFS_LARGE_FILE, &run, &have);
		err = vsmfs_write_inode_t(&t, inode);
		err = vsmfs_trans_commit(&t) ?: err;
		ret = ret ?: err;
		if (ret)
			goto out;
		iomap->flags |= IOMAP_F_NEW;
		e = vsmfs_idx_lookup(inode, key);
		cnt = vsmfs_idx_count(e);
	}
	if (pg < cnt) {
		u64 lpn = vsmfs_idx_lpn(e) + pg, blk = vsmfs_lpn_blk(sbi, lpn), n = 1;
		u64 want = DIV_ROUND_UP(pos + length - iomap->offset, VSMFS_BLOCK_SIZE);

		if (!blk) {
			ret = -EFSCORRUPTED;
			goto out;
		}
		want = min(want, cnt - pg);
		while (n < want && vsmfs_lpn_blk(sbi, lpn + n) == blk + n)
			n++;
		iomap->type = IOMAP_MAPPED;
		iomap->addr = (blk << VSMFS_BLOCK_SHIFT) + sbi->s_dax_part_off;
		iomap->length = n << VSMFS_BLOCK_SHIFT;
	} else {
		/* The hole runs on to the next piece that has pages. */
		u64 next = min_t(u64, vsmfs_idx_next(inode, key + 1), VSMFS_MAX_KEY);

		iomap->length = (next << VSMFS_VSP_SHIFT) - iomap->offset;
		iomap->type = IOMAP_HOLE;
		iomap->addr = IOMAP_NULL_ADDR;
	}
out:
	if (alloc)
		up_write(&vi->i_idx_sem);
	else
		up_read(&vi->i_idx_sem);
	return ret;
}

static const struct iomap_ops vsmfs_iomap_ops = {
	.iomap_begin	= vsmfs_iomap_begin,
};

static vm_fault_t vsmfs_dax_huge_fault(struct vm_fault *vmf, enum page_entry_size pe_size)
{
	struct inode *inode = file_inode(vmf->vma->vm_file);
	struct super_block *sb = inode->i_sb;
	bool write = (vmf->flags & FAULT_FLAG_WRITE) && (vmf->vma->vm_flags & VM_SHARED);
	vm_fault_t ret;
	pfn_t pfn;

	if (write) {
		sb_start_pagefault(sb);
		file_update_time(vmf->vma->vm_file);
	}
	filemap_invalidate_lock_shared(inode->i_mapping);
	ret = dax_iomap_fault(vmf, pe_size, &pfn, NULL, &vsmfs_iomap_ops);
	if (ret & VM_FAULT_NEEDDSYNC)
		ret = dax_finish_sync_fault(vmf, pe_size, pfn);
	filemap_invalidate_unlock_shared(inode->i_mapping);
	if (write)
		sb_end_pagefault(sb);
	return ret;
}

static vm_fault_t vsmfs_dax_fault(struct vm_fault *vmf)
{
	return vsmfs_dax_huge_fault(vmf, PE_SIZE_PTE);
}

static const struct vm_operations_struct vsmfs_dax_vm_ops = {
	.fault		= vsmfs_dax_fault,
	.huge_fault	= vsmfs_dax_huge_fault,
	.page_mkwrite	= vsmfs_dax_fault,
	.pfn_mkwrite	= vsmfs_dax_fault,
};

static int vsmfs_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(file);

	if (!daxdev_mapping_supported(vma, VSMFS_SB(inode->i_sb)->s_daxdev))
		return -EOPNOTSUPP;
	file_accessed(file);
	vma->vm_ops = &vsmfs_dax_vm_ops;
	vma->vm_flags |= VM_HUGEPAGE;
	return 0;
}

static int vsmfs_dax_writepages(struct address_space *mapping,
				struct writeback_control *wbc)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(mapping->host->i_sb);

	return dax_writeback_mapping_range(mapping, sbi->s_daxdev, wbc);
}

/* Data is never in the page cache: DAX entries only. */
const struct address_space_operations vsmfs_dax_aops = {
	.writepages	= vsmfs_dax_writepages,
	.direct_IO	= noop_direct_IO,
	.dirty_folio	= noop_dirty_folio,
};

static int vsmfs_wait_dax_page(struct inode *inode)
{
	filemap_invalidate_unlock(inode->i_mapping);
	schedule();
	filemap_invalidate_lock(inode->i_mapping);
	return 0;
}

/**
 * vsmfs_break_layouts() - wait until no page of a file is pinned
 * @inode: a regular file
 *
 * Pages pinned by get_user_pages() (direct I/O of another file into a
 * mapping of this one, RDMA) must not be freed or given other contents
 * under the pin. Called before truncation, hole punching and zeroing.
 *
 * Context: inode lock and invalidate_lock held for writing.
 * Return: 0, or -ERESTARTSYS if a signal ended the wait.
 */
int vsmfs_break_layouts(struct inode *inode)
{
	struct page *page;
	int ret;

	do {
		page = dax_layout_busy_page(inode->i_mapping);
		if (!page)
			return 0;
		ret = ___wait_var_event(&page->_refcount,
					atomic_read(&page->_refcount) == 1,
					TASK_INTERRUPTIBLE, 0, 0,
					vsmfs_wait_dax_page(inode));
	} while (!ret);
	return ret;
}

/* Punch or zero [from, to) of piece @key, in one transaction. */
static int vsmfs_clear_piece(struct inode *inode, u64 key, loff_t from, loff_t to,
			     bool punch)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 pstart = key << VSMFS_VSP_SHIFT, e, cnt, first;
	struct vsmfs_trans t;
	int ret = 0, err;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	e = vsmfs_idx_lookup(inode, key);
	cnt = vsmfs_idx_count(e);
	/* First page wholly inside the range. */
	first = DIV_ROUND_UP(from - pstart, VSMFS_BLOCK_SIZE);
	if (e && punch && first < cnt && to >= pstart + (cnt << VSMFS_BLOCK_SHIFT)) {
		/* The range covers the end of the run: free its tail. */
		ret = vsmfs_free_pages(&t, vsmfs_idx_lpn(e) + first, cnt - first);
		if (!ret) {
			vi->i_pages -= cnt - first;
			inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
			ret = vsmfs_idx_set(&t, inode, key,
					    first ? vsmfs_idx_make(vsmfs_idx_lpn(e), first) : 0);
		}
		to = pstart + (first << VSMFS_BLOCK_SHIFT);
	}
	/* Pages inside the run: zeroed in place. */
	if (!ret && from < to)
		vsmfs_zero_mapped(inode, from, to);
	inode->i_mtime = current_time(inode);
	inode->i_ctime = inode->i_mtime;
	err = vsmfs_write_inode_t(&t, inode);
	/* Zeros are durable (fence in the commit) before the index shrinks. */
	ret = vsmfs_trans_commit(&t) ?: ret ?: err;
	up_write(&vi->i_idx_sem);
	return ret;
}

/*
 * Allocate zeroed pages up to @to in piece @key, in one transaction. The
 * end of what the run held before (and so may hold data) goes to @oldend.
 */
static int vsmfs_alloc_piece(struct inode *inode, u64 key, loff_t to, bool large,
			     loff_t *oldend)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 need = DIV_ROUND_UP(to - (key << VSMFS_VSP_SHIFT), VSMFS_BLOCK_SIZE), run, have;
	struct vsmfs_trans t;
	int ret, err;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	ret = vsmfs_extend_run(&t, inode, key, need, 0, 0, large, &run, &have);
	err = vsmfs_write_inode_t(&t, inode);
	ret = vsmfs_trans_commit(&t) ?: ret ?: err;
	up_write(&vi->i_idx_sem);
	*oldend = (key << VSMFS_VSP_SHIFT) + (have << VSMFS_BLOCK_SHIFT);
	return ret;
}

static long vsmfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(file);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t end = offset + len, pos, size;
	bool punch = mode & FALLOC_FL_PUNCH_HOLE, zero = mode & FALLOC_FL_ZERO_RANGE;
	struct vsmfs_trans t;
	int ret, err;

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
		/* User mappings of whole pages go; a partial page is zeroed under them. */
		truncate_pagecache_range(inode, offset, end - 1);
	}
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
			ret = vsmfs_clear_piece(inode, key, pos, pend, true);
		} else {
			loff_t oldend;

			ret = vsmfs_alloc_piece(inode, key, pend, end >= VSMFS_LARGE_FILE,
						&oldend);
			/* Newly allocated pages are zero already. */
			if (!ret && zero && pos < oldend)
				ret = vsmfs_clear_piece(inode, key, pos, min(pend, oldend), false);
		}
		pos = pend;
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	if (!ret && !(mode & FALLOC_FL_KEEP_SIZE) && end > size) {
		down_write(&VSMFS_I(inode)->i_idx_sem);
		vsmfs_trans_begin(sbi, &t);
		vsmfs_zero_mapped(inode, size,
				  min_t(loff_t, end, round_up(size, VSMFS_BLOCK_SIZE)));
		i_size_write(inode, end);
		inode->i_ctime = current_time(inode);
		err = vsmfs_write_inode_t(&t, inode);
		ret = vsmfs_trans_commit(&t) ?: err;
		up_write(&VSMFS_I(inode)->i_idx_sem);
	}
out_invalidate:
	filemap_invalidate_unlock(inode->i_mapping);
out_unlock:
	inode_unlock(inode);
	return ret;
}

static loff_t vsmfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct inode *inode = file_inode(file);

	switch (whence) {
	case SEEK_DATA:
	case SEEK_HOLE:
		inode_lock_shared(inode);
		if (whence == SEEK_DATA)
			offset = iomap_seek_data(inode, offset, &vsmfs_iomap_ops);
		else
			offset = iomap_seek_hole(inode, offset, &vsmfs_iomap_ops);
		inode_unlock_shared(inode);
		if (offset < 0)
			return offset;
		return vfs_setpos(file, offset, inode->i_sb->s_maxbytes);
	default:
		return generic_file_llseek(file, offset, whence);
	}
}

static int vsmfs_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
			u64 start, u64 len)
{
	int ret;

	inode_lock_shared(inode);
	ret = iomap_fiemap(inode, fieinfo, start, len, &vsmfs_iomap_ops);
	inode_unlock_shared(inode);
	return ret;
}

const struct file_operations vsmfs_file_operations = {
	.llseek		= vsmfs_llseek,
	.read_iter	= vsmfs_read_iter,
	.write_iter	= vsmfs_write_iter,
	.mmap		= vsmfs_file_mmap,
	.mmap_supported_flags = MAP_SYNC,
	.open		= generic_file_open,
	.fsync		= vsmfs_fsync,
	.fallocate	= vsmfs_fallocate,
	.splice_read	= generic_file_splice_read,
	.splice_write	= iter_file_splice_write,
};

const struct inode_operations vsmfs_file_inode_operations = {
	.setattr	= vsmfs_setattr,
	.fiemap		= vsmfs_fiemap,
	.listxattr	= vsmfs_listxattr,
	.get_acl	= vsmfs_get_acl,
	.set_acl	= vsmfs_set_acl,
};
