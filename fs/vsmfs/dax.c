// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs DAX: the iomap of a file (for DAX faults, SEEK_DATA/SEEK_HOLE and
 * FIEMAP), DAX page faults and mmap, and writeback of mapped data. The
 * wait for pinned pages before their frames are freed or replaced is
 * vsmfs_break_layouts(), in iops.c.
 *
 * Ordering: pages a write fault allocates in a hole are zeroed and
 * reachable only once the fault's transaction commits (the write path's
 * VSMFS_WK_ALLOC, write.c, and vsmfs_extend_run() in grow.c); on a
 * MAP_SYNC mapping the fault commits the inode before the
 * page is mapped, see vsmfs_iomap_begin(). Data stored through a mapping
 * is written back by vsmfs_dax_writepages() and fenced by vsmfs_fsync() in
 * file.c.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/iomap.h>
#include <linux/dax.h>
#include <linux/pagemap.h>
#include <linux/writeback.h>
#include <linux/huge_mm.h>
#include <linux/pfn_t.h>
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
#include "badframe.h"

/*
 * iomap for DAX faults, SEEK_DATA/SEEK_HOLE and FIEMAP. A mapped extent is
 * a physically contiguous part of a run; a hole extends to the next piece
 * with data. A write fault on a hole allocates zeroed pages in a handle; on
 * a MAP_SYNC mapping, the fault commits the inode's changes before the
 * page is mapped (IOMAP_F_DIRTY).
 */
static int __vsmfs_iomap_begin(struct inode *inode, loff_t pos, loff_t length,
			       unsigned int flags, struct iomap *iomap, bool report)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 key = pos >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
	u64 pg = (pos - pstart) >> VSMFS_BLOCK_SHIFT, e, cnt;
	int ret = 0;

	if (pos >= sbi->s_sb->s_maxbytes)
		return -EFBIG;
	iomap->flags = 0;
	iomap->bdev = inode->i_sb->s_bdev;
	iomap->dax_dev = sbi->s_daxdev;
	iomap->offset = pos & ~(loff_t)(VSMFS_BLOCK_SIZE - 1);

	down_read(&vi->i_idx_sem);
	e = vsmfs_idx_lookup(inode, key);
	cnt = e ? vsmfs_idx_count(e) : 0;
	/*
	 * A write fault on a page past the run, a hole in it or an unwritten
	 * page: the write path's begin and end steps allocate it, zeroed, in
	 * one transaction (pages before it stay holes where they can), and it
	 * is written from now. The caller holds invalidate_lock shared, so no
	 * truncate, hole punch or copy-on-write takes the page away before it
	 * is looked up again. A page that has its frame and data needs only
	 * the lookup above.
	 */
	if ((flags & IOMAP_WRITE) && (flags & IOMAP_FAULT) &&
	    (pg >= cnt || vsmfs_lpn_hole(sbi, vsmfs_idx_lpn(e) + pg) ||
	     vsmfs_lpn_unwritten(sbi, vsmfs_idx_lpn(e) + pg))) {
		bool large = i_size_read(inode) >= VSMFS_LARGE_FILE;
		struct vsmfs_wmap m __uninitialized;

		up_read(&vi->i_idx_sem);
		ret = vsmfs_wmap_begin(&m, inode, pos, 1,
				       VSMFS_WM_FAULT | (large ? VSMFS_WM_LARGE : 0));
		if (ret)
			return ret;
		if (m.kind == VSMFS_WK_ALLOC)
			iomap->flags |= IOMAP_F_NEW;
		ret = vsmfs_wmap_end(&m, 0);
		if (ret)
			return ret;
		down_read(&vi->i_idx_sem);
		e = vsmfs_idx_lookup(inode, key);
		cnt = e ? vsmfs_idx_count(e) : 0;
	}
	if (pg < cnt && vsmfs_lpn_hole(sbi, vsmfs_idx_lpn(e) + pg)) {
		u64 lpn = vsmfs_idx_lpn(e) + pg;

		/* Reads see the zero page; the hole ends where a frame is. */
		iomap->length = (find_next_zero_bit(sbi->s_noframe, vsmfs_idx_lpn(e) + cnt, lpn) -
				 lpn) << VSMFS_BLOCK_SHIFT;
		iomap->type = IOMAP_HOLE;
		iomap->addr = IOMAP_NULL_ADDR;
		goto out;
	}
	if (pg < cnt) {
		u64 lpn = vsmfs_idx_lpn(e) + pg, blk = vsmfs_lpn_blk(sbi, lpn), n = 1;
		u64 want = DIV_ROUND_UP(pos + length - iomap->offset, VSMFS_BLOCK_SIZE);
		bool unw = report && vsmfs_lpn_unwritten(sbi, lpn);

		if (!blk) {
			vsmfs_fs_error(inode->i_sb, inode->i_ino, "logical page %llu has no frame",
				       lpn);
			ret = -EFSCORRUPTED;
			goto out;
		}
		/*
		 * A page on a bad frame is never mapped: the fault gets
		 * SIGBUS, and a huge mapping stops short of it.
		 */
		if (!report && vsmfs_blk_bad(sbi, blk)) {
			ret = -EIO;
			goto out;
		}
		want = min(want, cnt - pg);
		while (n < want && vsmfs_lpn_blk(sbi, lpn + n) == blk + n &&
		       (!report || vsmfs_lpn_unwritten(sbi, lpn + n) == unw) &&
		       (report || !vsmfs_blk_bad(sbi, blk + n)))
			n++;
		/*
		 * A write fault that maps more than its page (a PMD over a
		 * fallocated superpage) lets stores reach every page mapped
		 * with no other fault: all hold data from now. If that needs
		 * a handle of the other kind, only the faulting page (made
		 * written above) is mapped, and the fault falls back to PTEs.
		 */
		if ((flags & (IOMAP_WRITE | IOMAP_FAULT)) == (IOMAP_WRITE | IOMAP_FAULT) &&
		    n > 1 && vsmfs_any_unwritten(sbi, lpn, n)) {
			ret = vsmfs_mark_written(inode, lpn, n);
			if (ret == -EAGAIN) {
				n = 1;
				ret = 0;
			}
			if (ret)
				goto out;
		}
		iomap->type = unw ? IOMAP_UNWRITTEN : IOMAP_MAPPED;
		iomap->addr = (blk << VSMFS_BLOCK_SHIFT) + sbi->s_dax_part_off;
		iomap->length = n << VSMFS_BLOCK_SHIFT;
		/*
		 * MAP_SYNC: a write fault returns only once what reaches the
		 * page is committed (dax_finish_sync_fault() calls fsync).
		 */
		if ((flags & IOMAP_WRITE) &&
		    (s64)READ_ONCE(vi->i_tid) > atomic64_read(&sbi->s_commit_tid))
			iomap->flags |= IOMAP_F_DIRTY;
	} else {
		/* The hole runs on to the next piece that has pages. */
		u64 next = min_t(u64, vsmfs_idx_next(inode, key + 1), VSMFS_MAX_KEY);

		iomap->length = (next << VSMFS_VSP_SHIFT) - iomap->offset;
		iomap->type = IOMAP_HOLE;
		iomap->addr = IOMAP_NULL_ADDR;
	}
out:
	up_read(&vi->i_idx_sem);
	return ret;
}

static int vsmfs_iomap_begin(struct inode *inode, loff_t pos, loff_t length,
			     unsigned int flags, struct iomap *iomap, struct iomap *srcmap)
{
	return __vsmfs_iomap_begin(inode, pos, length, flags, iomap, false);
}

/*
 * FIEMAP also tells fallocated pages not written since (unwritten
 * extents). Faults map them as any page, and SEEK_DATA counts them as
 * data: they are allocated, and read as the zeros they hold.
 */
static int vsmfs_iomap_begin_report(struct inode *inode, loff_t pos, loff_t length,
				    unsigned int flags, struct iomap *iomap, struct iomap *srcmap)
{
	return __vsmfs_iomap_begin(inode, pos, length, flags, iomap, true);
}

/* Also SEEK_DATA/SEEK_HOLE, in file.c. */
const struct iomap_ops vsmfs_iomap_ops = {
	.iomap_begin	= vsmfs_iomap_begin,
};

/* FIEMAP, in file.c. */
const struct iomap_ops vsmfs_iomap_report_ops = {
	.iomap_begin	= vsmfs_iomap_begin_report,
};

#ifdef CONFIG_HAVE_ARCH_TRANSPARENT_HUGEPAGE_PUD
#define VSMFS_PUD_PIECES	(PUD_SIZE >> VSMFS_VSP_SHIFT)
#define VSMFS_PUD_PAGES		(PUD_SIZE >> PAGE_SHIFT)

/*
 * The first device block of the GiB of @inode from @key, if its frames
 * can be mapped with one PUD: 512 whole pieces whose frames are one run,
 * the first 1 GiB aligned in physical memory, none bad. Written since they
 * were fallocated, for a write (else 0, as for a fallback).
 * Context: invalidate_lock held shared, i_idx_sem held shared.
 */
static u64 vsmfs_pud_blk(struct inode *inode, u64 key, bool write)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 k, e, lpn, blk0 = 0;

	for (k = 0; k < VSMFS_PUD_PIECES; k++) {
		e = vsmfs_idx_lookup(inode, key + k);
		lpn = vsmfs_idx_lpn(e);
		if (!e || vsmfs_idx_count(e) != VSMFS_VSP_PAGES || lpn % VSMFS_VSP_PAGES)
			return 0;
		if (!k) {
			blk0 = vsmfs_lpn_blk(sbi, lpn);
			if (!blk0 || (sbi->s_dev_pfn + blk0) % VSMFS_PUD_PAGES)
				return 0;
		}
		if (!vsmfs_vsp_frames_from(sbi, lpn / VSMFS_VSP_PAGES, blk0 + k * VSMFS_VSP_PAGES))
			return 0;
		if (vsmfs_any_bad(sbi) &&
		    vsmfs_first_bad(sbi, lpn, VSMFS_VSP_PAGES) < VSMFS_VSP_PAGES)
			return 0;
		/* Stores reach every page: all hold data from now. */
		if (write && vsmfs_any_unwritten(sbi, lpn, VSMFS_VSP_PAGES) &&
		    vsmfs_mark_written(inode, lpn, VSMFS_VSP_PAGES))
			return 0;
	}
	return blk0;
}

/*
 * A 1 GiB fault (huge=1g): map the GiB of the file with one PUD where its
 * frames allow, else fall back to 2 MiB and 4 KiB (VM_FAULT_FALLBACK).
 * The core DAX code keeps no entry for such a mapping, so vsmfs tracks it
 * in i_pud: a write fault marks the GiB dirty (and the inode's pages
 * dirty, for sync), and vsmfs_pud_writeback() writes the GiB back. A
 * private mapping is mapped read-only; its first write splits the PUD and
 * copies at the smaller size. A MAP_SYNC write fault commits the inode's
 * changes first.
 */
static vm_fault_t vsmfs_pud_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct inode *inode = file_inode(vma->vm_file);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned long addr = vmf->address & PUD_MASK;
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	vm_fault_t ret = VM_FAULT_FALLBACK;
	pgoff_t pgoff;
	loff_t pos;
	u64 blk;

	if (!READ_ONCE(sbi->s_huge_pud) || addr < vma->vm_start || addr + PUD_SIZE > vma->vm_end)
		return VM_FAULT_FALLBACK;
	pgoff = linear_page_index(vma, addr);
	pos = (loff_t)pgoff << PAGE_SHIFT;
	if (pgoff % VSMFS_PUD_PAGES || pos + PUD_SIZE > i_size_read(inode) ||
	    (write && !(vma->vm_flags & VM_SHARED)))
		goto out;
	down_read(&vi->i_idx_sem);
	blk = vsmfs_pud_blk(inode, pos >> VSMFS_VSP_SHIFT, write);
	up_read(&vi->i_idx_sem);
	/*
	 * The GiB's pieces are whole: no allocation changes them, and
	 * invalidate_lock keeps truncation and copy-on-write out until the
	 * mapping is in. MAP_SYNC: the inode's changes (the pages marked
	 * written, the time of the write) committed before it is mapped, as
	 * dax_finish_sync_fault() does for the smaller faults.
	 */
	if (blk && write && (vma->vm_flags & VM_SYNC) &&
	    (s64)READ_ONCE(vi->i_tid) > atomic64_read(&sbi->s_commit_tid) &&
	    vfs_fsync_range(vma->vm_file, pos, pos + PUD_SIZE - 1, 1)) {
		ret = VM_FAULT_SIGBUS;
		goto out;
	}
	if (blk) {
		unsigned long i = pos >> PUD_SHIFT;

		/* Known before any store through it: write-back and unmaps see it. */
		if (xa_err(xa_store(&vi->i_pud, i, xa_mk_value(blk), GFP_NOFS)))
			return VM_FAULT_OOM;
		xa_set_mark(&vi->i_pud, i, VSMFS_PUD_MAPPED);
		if (write) {
			xa_set_mark(&vi->i_pud, i, VSMFS_PUD_DIRTY);
			__mark_inode_dirty(inode, I_DIRTY_PAGES);
		}
		ret = vmf_insert_pfn_pud(vmf, __pfn_to_pfn_t(sbi->s_dev_pfn + blk,
							     sbi->s_pfn_flags), write);
	}
out:
	if (ret & VM_FAULT_FALLBACK)
		vsmfs_stat_inc(sbi, fault_pud_fallback);
	else if (!(ret & VM_FAULT_ERROR))
		vsmfs_stat_inc(sbi, fault_pud);
	return ret;
}

/**
 * __vsmfs_pud_writeback() - write back what stores reached through 1 GiB
 *	mappings
 * @inode: a regular file
 * @start: first byte of the range
 * @end: last byte of the range (inclusive)
 *
 * Each GiB of the range mapped writable since its last write-back is
 * unmapped first (its next store faults, maps it again and marks it
 * dirty again), then its lines are flushed: every store before the unmap
 * is written back. Ordering: the flushes are fenced by the caller
 * (vsmfs_dax_writepages(), vsmfs_fsync()) on this CPU.
 *
 * Return: whether any GiB was written back.
 */
bool __vsmfs_pud_writeback(struct inode *inode, loff_t start, loff_t end)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned long i, last = end >> PUD_SHIFT;
	bool done = false;
	void *entry;

	xa_for_each_marked(&vi->i_pud, i, entry, VSMFS_PUD_DIRTY) {
		if (i < (start >> PUD_SHIFT) || i > last)
			continue;
		xa_clear_mark(&vi->i_pud, i, VSMFS_PUD_DIRTY);
		unmap_mapping_range(inode->i_mapping, (loff_t)i << PUD_SHIFT, PUD_SIZE, 1);
		vsmfs_flush(vsmfs_blk_ptr(sbi, xa_to_value(entry)), PUD_SIZE);
		vsmfs_stat_inc(sbi, pud_writebacks);
		done = true;
		cond_resched();
	}
	return done;
}
#else
static vm_fault_t vsmfs_pud_fault(struct vm_fault *vmf)
{
	return VM_FAULT_FALLBACK;
}

bool __vsmfs_pud_writeback(struct inode *inode, loff_t start, loff_t end)
{
	return false;
}
#endif

static vm_fault_t vsmfs_dax_huge_fault(struct vm_fault *vmf, enum page_entry_size pe_size)
{
	struct inode *inode = file_inode(vmf->vma->vm_file);
	struct super_block *sb = inode->i_sb;
	bool write = (vmf->flags & FAULT_FLAG_WRITE) && (vmf->vma->vm_flags & VM_SHARED);
	u64 t0 = vsmfs_trace_start(vsmfs_fault);
	vm_fault_t ret;
	pfn_t pfn;

	if (write) {
		sb_start_pagefault(sb);
		file_update_time(vmf->vma->vm_file);
	}
	filemap_invalidate_lock_shared(inode->i_mapping);
	if (pe_size == PE_SIZE_PUD) {
		ret = vsmfs_pud_fault(vmf);
		goto out;
	}
	ret = dax_iomap_fault(vmf, pe_size, &pfn, NULL, &vsmfs_iomap_ops);
	if (ret & VM_FAULT_NEEDDSYNC)
		ret = dax_finish_sync_fault(vmf, pe_size, pfn);
	/*
	 * A PMD fault maps a whole VSP as one 2 MiB page only where its frames
	 * are physically contiguous and aligned; else it falls back to PTEs.
	 */
	if (pe_size == PE_SIZE_PMD) {
		if (ret & VM_FAULT_FALLBACK)
			vsmfs_stat_inc(VSMFS_SB(sb), fault_pmd_fallback);
		else if (!(ret & VM_FAULT_ERROR))
			vsmfs_stat_inc(VSMFS_SB(sb), fault_pmd);
	} else if (!(ret & VM_FAULT_ERROR)) {
		vsmfs_stat_inc(VSMFS_SB(sb), fault_pte);
	}
out:
	filemap_invalidate_unlock_shared(inode->i_mapping);
	if (write)
		sb_end_pagefault(sb);
	trace_vsmfs_fault(inode, vmf->pgoff, pe_size == PE_SIZE_PMD, (__force unsigned int)ret, t0);
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

/**
 * vsmfs_get_unmapped_area() - where to map a file
 * @file: the file
 * @addr: the address asked for, or 0
 * @len: length of the mapping
 * @pgoff: its offset in the file, in pages
 * @flags: MAP_* flags
 *
 * With huge=1g, a mapping of a GiB or more is placed so that its GiBs of
 * the file fall on 1 GiB aligned addresses, as thp_get_unmapped_area()
 * does with 2 MiB for all mappings (and here for the rest).
 *
 * Return: the address, or a negative errno.
 */
unsigned long vsmfs_get_unmapped_area(struct file *file, unsigned long addr, unsigned long len,
				      unsigned long pgoff, unsigned long flags)
{
#ifdef CONFIG_HAVE_ARCH_TRANSPARENT_HUGEPAGE_PUD
	struct vsmfs_sb_info *sbi = VSMFS_SB(file_inode(file)->i_sb);
	loff_t off = (loff_t)pgoff << PAGE_SHIFT, off_end = off + len;
	loff_t off_align = round_up(off, PUD_SIZE);
	unsigned long len_pad = len + PUD_SIZE, ret;

	if (READ_ONCE(sbi->s_huge_pud) && !addr && !(flags & MAP_FIXED) &&
	    off_end > off_align && off_end - off_align >= PUD_SIZE && len_pad > len &&
	    off + len_pad > off) {
		ret = current->mm->get_unmapped_area(file, 0, len_pad, pgoff, flags);
		if (!IS_ERR_VALUE(ret))
			return ret + ((off - ret) & (PUD_SIZE - 1));
	}
#endif
	return thp_get_unmapped_area(file, addr, len, pgoff, flags);
}

/**
 * vsmfs_file_mmap() - map a file: its pages are mapped by DAX faults
 * @file: the file
 * @vma: the new mapping
 *
 * Return: 0, or -EOPNOTSUPP if the device does not support the mapping
 * asked for (MAP_SYNC on a device without it).
 */
int vsmfs_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(file);

	if (!daxdev_mapping_supported(vma, VSMFS_SB(inode->i_sb)->s_daxdev))
		return -EOPNOTSUPP;
	file_accessed(file);
	vma->vm_ops = &vsmfs_dax_vm_ops;
	vma->vm_flags |= VM_HUGEPAGE;
	return 0;
}

/*
 * Write back the lines of mapped pages user stores dirtied, and fence on
 * this CPU, where they were flushed: durable when this returns, whoever
 * called it (fsync, msync, sync, or the flusher thread, whose flushes no
 * later fence on another CPU would order).
 */
static int vsmfs_dax_writepages(struct address_space *mapping,
				struct writeback_control *wbc)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(mapping->host->i_sb);
	int ret;

	ret = dax_writeback_mapping_range(mapping, sbi->s_daxdev, wbc);
	vsmfs_pud_writeback(mapping->host, wbc->range_start, wbc->range_end);
	vsmfs_fence();
	return ret;
}

/* Data is never in the page cache: DAX entries only. */
const struct address_space_operations vsmfs_dax_aops = {
	.writepages	= vsmfs_dax_writepages,
	.direct_IO	= noop_direct_IO,
	.dirty_folio	= noop_dirty_folio,
};
