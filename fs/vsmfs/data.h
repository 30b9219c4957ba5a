/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs data path: what file.c (read, write, fsync), write.c (the write
 * path's begin, copy and end steps), grow.c (run growth), stage.c (staged
 * writes), cow.c (copy-on-write in a handle), dax.c (iomap, DAX faults,
 * mmap) and falloc.c (fallocate) share, and nothing else includes.
 */
#ifndef _VSMFS_DATA_H
#define _VSMFS_DATA_H

#include <linux/math.h>
#include <linux/time64.h>
#include <linux/types.h>
#include <linux/uio.h>
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

/*
 * How a part of a write is made, decided by vsmfs_wmap_begin() (write.c)
 * per data= and cow= mode and per range.
 */
enum vsmfs_wkind {
	VSMFS_WK_NONE,		/* nothing held: done, or nothing to do */
	VSMFS_WK_INPLACE,	/* over framed, written pages inside the size; no handle */
	VSMFS_WK_STAGED,	/* into runs reserved at begin, switched in at end */
	VSMFS_WK_APPEND,	/* past the end: the last page and pages reserved at begin */
	VSMFS_WK_COW,		/* copy-on-write in one handle, allocating as it copies */
	VSMFS_WK_NEW,		/* in place in one handle, allocating as it copies */
	VSMFS_WK_ALLOC,		/* zeroed pages allocated at begin in one handle; no copy */
};

/* vsmfs_wmap_begin() flags */
#define VSMFS_WM_ATOMIC		(1U << 0)	/* data=atomic */
#define VSMFS_WM_DIRECT		(1U << 1)	/* the source is user memory that may fault */
#define VSMFS_WM_LARGE		(1U << 2)	/* runs start at free superpages */
#define VSMFS_WM_FAULT		(1U << 3)	/* a write fault: one page, no copy */
#define VSMFS_WM_FALLOC		(1U << 4)	/* fallocate: unwritten pages, no copy */
/* With VSMFS_WM_ATOMIC: the cow= mode the part was sized for. */
#define VSMFS_WM_COW_SHIFT	8
#define VSMFS_WM_COW(mode)	((mode) << VSMFS_WM_COW_SHIFT)

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
 * struct vsmfs_append - a staged append's piece and new pages
 * @kind: VSMFS_APPEND_*
 * @r: the pages reserved, for every kind but VSMFS_APPEND_TAIL
 * @dst: the first logical page the new pages' data is copied into
 * @key: the piece
 * @e: its index entry
 * @have: pages of its run
 * @need: pages it has after the append
 * @size: the file's size after it
 * @credits: blocks the handle may dirty
 *
 * fallocate() adds pages the same way (vsmfs_falloc_pages()), zeroed and
 * marked unwritten, with VSMFS_WM_FALLOC.
 */
struct vsmfs_append {
	enum vsmfs_append_kind	kind;
	struct vsmfs_resv	r;
	u64			dst, key, e, have, need;
	loff_t			size;
	u32			credits;
};

/**
 * struct vsmfs_wmap - one part of a write, from its begin step to its end
 * @inode: the file
 * @pos: start of the part
 * @len: its length
 * @flags: VSMFS_WM_*
 * @cow: cow= mode
 * @kind: how it is made (enum vsmfs_wkind); VSMFS_WK_NONE once it ended
 * @from: the source, from the copy step on
 * @count: the bytes in @from when the copy began, to give back what a
 *	part undone took
 * @err: the error that cut a copy in a handle short, or 0
 * @e: VSMFS_WK_INPLACE: the piece's index entry
 * @have: VSMFS_WK_ALLOC: the pages the piece's run had before
 * @more: VSMFS_WK_ALLOC: pages of the range are still without frames,
 *	for another handle (the journal had no room for all)
 * @nst: VSMFS_WK_STAGED: entries of @st in use
 * @st: VSMFS_WK_STAGED: the reserved runs
 * @ap: VSMFS_WK_APPEND: the new pages
 * @t: the handle of VSMFS_WK_COW, VSMFS_WK_NEW and VSMFS_WK_ALLOC
 *
 * Only the fields of @kind are set (vsmfs_wmap_begin() leaves the rest as
 * the caller's stack had them).
 */
struct vsmfs_wmap {
	struct inode		*inode;
	loff_t			pos;
	size_t			len;
	unsigned int		flags;
	unsigned int		cow;
	enum vsmfs_wkind	kind;
	struct iov_iter		*from;
	size_t			count;
	int			err;
	u64			have;
	bool			more;
	union {
		u64		e;
		struct {
			unsigned int		nst;
			struct vsmfs_stage	st[VSMFS_STAGE_RUNS];
		};
		struct vsmfs_append	ap;
		struct vsmfs_trans	t;
	};
};

/* Give back to @m->from the bytes a part undone took from it. */
static inline void vsmfs_wmap_revert(struct vsmfs_wmap *m)
{
	iov_iter_revert(m->from, m->count - iov_iter_count(m->from));
}

/* write.c */
int vsmfs_mark_written(struct inode *inode, u64 lpn, u64 count);
int vsmfs_falloc_pages(struct inode *inode, loff_t from, loff_t to, bool large, loff_t size);
int vsmfs_wmap_begin(struct vsmfs_wmap *m, struct inode *inode, loff_t pos, size_t len,
		     unsigned int flags);
ssize_t vsmfs_wmap_end(struct vsmfs_wmap *m, ssize_t ret);
ssize_t vsmfs_write_part(struct inode *inode, loff_t pos, size_t len, struct iov_iter *from,
			 unsigned int flags);

/* stage.c */
ssize_t vsmfs_staged_end(struct vsmfs_wmap *m, int ret);
int vsmfs_append_grow(const struct vsmfs_wmap *m, bool *owned);

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

/* dax.c */
extern const struct iomap_ops vsmfs_iomap_ops;
extern const struct iomap_ops vsmfs_iomap_report_ops;
int vsmfs_file_mmap(struct file *file, struct vm_area_struct *vma);
unsigned long vsmfs_get_unmapped_area(struct file *file, unsigned long addr, unsigned long len,
				      unsigned long pgoff, unsigned long flags);
bool __vsmfs_pud_writeback(struct inode *inode, loff_t start, loff_t end);

/*
 * __vsmfs_pud_writeback(), without a call for a file that no 1 GiB
 * mapping ever reached (every fsync and writeback of every other file).
 */
static inline bool vsmfs_pud_writeback(struct inode *inode, loff_t start, loff_t end)
{
	return !xa_empty(&VSMFS_I(inode)->i_pud) && __vsmfs_pud_writeback(inode, start, end);
}

/* falloc.c */
long vsmfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len);

#endif /* _VSMFS_DATA_H */
