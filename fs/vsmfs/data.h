/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs data path: what file.c (read, write, fsync), grow.c (run growth),
 * stage.c (staged writes), cow.c (the atomic write engine of data=atomic),
 * dax.c (iomap, DAX faults, mmap) and falloc.c (fallocate) share, and
 * nothing else includes.
 */
#ifndef _VSMFS_DATA_H
#define _VSMFS_DATA_H

#include <linux/math.h>
#include <linux/time64.h>
#include <linux/types.h>
#include "pmem.h"
#include "fault.h"
#include "trans.h"

struct file;
struct inode;
struct iomap_ops;
struct iov_iter;
struct vm_area_struct;
struct vsmfs_sb_info;
struct vsmfs_trans;

/* Files whose end passes this get runs starting at free superpages. */
#define VSMFS_LARGE_FILE	(256 * 1024)

#define VSMFS_PIECE_SIZE	(1ULL << VSMFS_VSP_SHIFT)

/*
 * Longest part of a write made in one transaction, whatever the journal
 * size: it bounds the user pages held and the scratch runs remembered.
 */
#define VSMFS_ATOMIC_MAX	(64ULL << 20)

/* grow.c */
int vsmfs_extend_run(struct vsmfs_trans *t, struct inode *inode, u64 key,
		     u64 need, u64 wfrom, u64 wto, bool large, u64 *runp, u64 *havep);
int vsmfs_extend_sparse(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 have,
			u64 need, u64 wfrom, bool zfdm, u64 *nlpn);
ssize_t vsmfs_write_new(struct vsmfs_trans *t, struct inode *inode, u64 key,
			u64 wfrom, u64 wto, struct iov_iter *from, bool large);

/* stage.c */
ssize_t vsmfs_write_staged(struct inode *inode, loff_t pos, size_t len,
			   struct iov_iter *from, bool large, unsigned int mode);
ssize_t vsmfs_write_append(struct inode *inode, loff_t pos, size_t len,
			   struct iov_iter *from, bool large);

/*
 * Merge @len bytes of an old page at @src into the fresh page at @dst:
 * durable after the next fence (vsmfs_copy_mc_pm()). A poisoned @src
 * fails the merge rather than the machine, and the caller gives up the
 * fresh page, so the file keeps its old page.
 * Return: 0, or -EIO if @src could not be read.
 */
static inline int vsmfs_merge_old(void __pm *dst, const void __pm *src, size_t len)
{
	if (!len)
		return 0;
	if (vsmfs_fault(VSMFS_FAULT_PM_READ) || vsmfs_copy_mc_pm(dst, src, len))
		return -EIO;
	return 0;
}

/* cow.c */

/*
 * Worst case of the metadata blocks one copy-on-write transaction dirties
 * (vsmfs_write_atomic()) for a range spanning @keys pieces and @pages
 * pages, with cow= mode @cow. Each term counts distinct blocks, as if no
 * two of them shared a block:
 *
 * - the inode's block: 1;
 * - index blocks: a range within one piece reaches one entry, in the
 *   inode, the single indirect block, or the double indirect block and
 *   one block below it; each may be new, and then dirties its bitmap
 *   block as well: 4. A longer range reaches at most 2 +
 *   DIV_ROUND_UP(@keys, 512) index blocks (the single indirect block, the
 *   double indirect block and the blocks below it), each with its bitmap
 *   block;
 * - per piece, growing its run (vsmfs_extend_run()): the bitmap blocks of
 *   the old run, the new run and a tail given back, the page table blocks
 *   of the old and the new run: 5; replacing it whole (vsmfs_cow_whole())
 *   takes the bitmap blocks of the new and the old run, fewer;
 * - fine grain (cow=multi falls back to it when no whole run is free,
 *   cow=page always): the page table block of the run, 1 more per piece,
 *   and one page table block per scratch run, at worst one per page, as
 *   scattered free space gives runs of one page. Scratch runs are never
 *   journaled in the bitmap (vsmfs_reserve_pages()).
 */
static inline u64 vsmfs_cow_blocks(unsigned int cow, u64 keys, u64 pages)
{
	u64 n = 1;

	n += keys == 1 ? 4 : 2 * (2 + DIV_ROUND_UP(keys, VSMFS_IND_ENTRIES));
	if (cow == VSMFS_COW_SUPERPAGE)
		return n + 5 * keys;
	return n + 6 * keys + pages;
}

/**
 * vsmfs_cow_blocks_at() - metadata blocks a copy-on-write of a range dirties
 * @cow: cow= mode
 * @pos: start of the range
 * @len: its length, > 0
 *
 * Return: the worst case of vsmfs_cow_blocks() for [@pos, @pos + @len).
 */
static inline u64 vsmfs_cow_blocks_at(unsigned int cow, u64 pos, u64 len)
{
	u64 last = pos + len - 1;

	return vsmfs_cow_blocks(cow, (last >> VSMFS_VSP_SHIFT) - (pos >> VSMFS_VSP_SHIFT) + 1,
				(last >> VSMFS_BLOCK_SHIFT) - (pos >> VSMFS_BLOCK_SHIFT) + 1);
}

/*
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
static inline u64 __vsmfs_atomic_part(struct vsmfs_sb_info *sbi, unsigned int cow, u64 pos,
				      u64 len, u32 extra)
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

/**
 * vsmfs_atomic_part() - the next part of an atomic write
 * @sbi: the file system
 * @cow: cow= mode
 * @pos: where the write goes on
 * @len: the bytes left to write
 * @extra: blocks the caller dirties besides, in the same transaction
 *
 * The next part of an atomic write of @len bytes at @pos: all of it if no
 * longer than vsmfs_atomic_write_max(), else the longest part from @pos
 * whose worst case, and @extra blocks the caller dirties besides, fits in
 * the journal (at least one byte).
 *
 * Return: the length of the part in bytes.
 */
static inline u64 vsmfs_atomic_part(struct vsmfs_sb_info *sbi, unsigned int cow, u64 pos,
				    u64 len, u32 extra)
{
	u64 room = vsmfs_trans_max_blocks(sbi) - extra;

	/*
	 * The worst case of this very range: a write no longer than
	 * vsmfs_atomic_write_max() always fits, as it bounds this one.
	 */
	if (!len || (len <= VSMFS_ATOMIC_MAX && vsmfs_cow_blocks_at(cow, pos, len) <= room))
		return len;
	return __vsmfs_atomic_part(sbi, cow, pos, len, extra);
}

ssize_t vsmfs_cow_write(struct vsmfs_trans *t, struct inode *inode, loff_t pos,
			size_t len, struct iov_iter *from, bool large,
			  unsigned int mode, int *errp);
void vsmfs_cow_span(unsigned int mode, loff_t *start, loff_t *end);
ssize_t vsmfs_write_atomic(struct inode *inode, loff_t pos, size_t len,
			   struct iov_iter *from, bool large, unsigned int mode, bool direct);

/* dax.c */
extern const struct iomap_ops vsmfs_iomap_ops;
extern const struct iomap_ops vsmfs_iomap_report_ops;
int vsmfs_file_mmap(struct file *file, struct vm_area_struct *vma);

/* falloc.c */
long vsmfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len);

#endif /* _VSMFS_DATA_H */
