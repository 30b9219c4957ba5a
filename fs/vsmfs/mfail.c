// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs memory failure: what a failed range of PM means for the file
 * system. The platform reports it through the DAX holder operations
 * (vsmfs_notify_failure(), registered at mount with the superblock as the
 * holder); mount reports the device's bad blocks the same way
 * (vsmfs_mf_badblocks()).
 *
 * - A block outside the data area (superblock, journal, inode table and
 *   map, page table, bitmaps) is metadata that has no second copy: a file
 *   system error (errors=), naming the region and block.
 * - A data frame joins the bad frames (badframe.c, on PM too). If its
 *   logical page is free, or held by a page pool, it is retired at once
 *   (resv.c): never handed out again. If a file's page holds it, the
 *   processes that map the page are killed (SIGBUS, as the memory failure
 *   code does for any fsdax page) and the page reads and writes EIO until
 *   it is overwritten whole, which copy-on-write does into a fresh frame,
 *   or punched; the commit that frees it retires it. A directory, index or
 *   attribute block on it is a file system error; its copy in DRAM, if it
 *   has one, stays readable until unmount, and the next mount reads EIO.
 *
 * Ordering: the frame is in the DRAM set, and durable in the list, before
 * anything is done about it; no other PM store is made here (retiring is
 * a reservation in DRAM, see vsmfs_resv_retire()).
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/dax.h>
#include <linux/badblocks.h>
#include <linux/blkdev.h>
#include "vsmfs.h"
#include "ptable.h"
#include "mcache.h"
#include "alloc.h"
#include "inode.h"
#include "badframe.h"
#include "mfail.h"

/* Name of the region of device block @blk outside the data area. */
static const char *vsmfs_mf_region(struct vsmfs_sb_info *sbi, u64 blk)
{
	const struct vsmfs_layout *l = &sbi->s_layout;

	if (blk == VSMFS_SB_BLOCK)
		return "superblock";
	if (blk == l->sb_backup)
		return "backup superblock";
	if (blk == VSMFS_BADLIST_BLOCK)
		return "bad-frame list";
	if (blk >= l->journal_start && blk < l->journal_start + l->journal_blocks)
		return "journal";
	if (vsmfs_layout_itable(l, blk))
		return "inode table";
	if (blk >= l->imap_start && blk < l->imap_start + l->imap_blocks)
		return "inode map";
	if (blk >= l->ptable_start && blk < l->ptable_start + l->ptable_blocks)
		return "page table";
	if (blk >= l->lbitmap_start && blk < l->lbitmap_start + l->lbitmap_blocks)
		return "page bitmap";
	if (blk >= l->ibitmap_start && blk < l->ibitmap_start + l->ibitmap_blocks)
		return "inode bitmap";
	return NULL;
}

/*
 * Whether @inode holds logical page @lpn as a page of file data; its
 * offset in the file in *@pos. Directories and long symlinks hold blocks,
 * their metadata; those are found in the metadata cache instead.
 */
static bool vsmfs_mf_owns(struct inode *inode, u64 lpn, loff_t *pos)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	bool found = false;
	u64 key, e;

	if (!S_ISREG(inode->i_mode))
		return false;
	down_read(&vi->i_idx_sem);
	for (key = vsmfs_idx_next(inode, 0); key < VSMFS_MAX_KEY;
	     key = vsmfs_idx_next(inode, key + 1)) {
		e = vsmfs_idx_lookup(inode, key);
		if (e && lpn >= vsmfs_idx_lpn(e) && lpn < vsmfs_idx_lpn(e) + vsmfs_idx_count(e)) {
			*pos = ((loff_t)key << VSMFS_VSP_SHIFT) +
			       ((lpn - vsmfs_idx_lpn(e)) << VSMFS_BLOCK_SHIFT);
			found = true;
			break;
		}
	}
	up_read(&vi->i_idx_sem);
	return found;
}

/*
 * The inode in memory whose file data holds @lpn, with a reference, or
 * NULL. Inodes not in memory are mapped by no one: their pages read EIO
 * when they are read.
 */
static struct inode *vsmfs_mf_owner(struct super_block *sb, u64 lpn, loff_t *pos)
{
	struct inode *inode, *prev = NULL, *found = NULL;

	spin_lock(&sb->s_inode_list_lock);
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list) {
		spin_lock(&inode->i_lock);
		if ((inode->i_state & (I_FREEING | I_WILL_FREE | I_NEW)) ||
		    !S_ISREG(inode->i_mode)) {
			spin_unlock(&inode->i_lock);
			continue;
		}
		__iget(inode);
		spin_unlock(&inode->i_lock);
		spin_unlock(&sb->s_inode_list_lock);
		iput(prev);
		prev = inode;
		if (vsmfs_mf_owns(inode, lpn, pos)) {
			found = inode;
			prev = NULL;
			goto out;
		}
		cond_resched();
		spin_lock(&sb->s_inode_list_lock);
	}
	spin_unlock(&sb->s_inode_list_lock);
out:
	iput(prev);
	return found;
}

/* A failed data frame: remember it, then act on what holds it. */
static void vsmfs_mf_frame(struct vsmfs_sb_info *sbi, u64 frame, int mf_flags, bool mounting)
{
	struct super_block *sb = sbi->s_sb;
	u64 blk = sbi->s_layout.data_start + frame, lpn;
	struct inode *inode;
	bool quiet;
	loff_t pos;
	int ret;

	ret = vsmfs_bad_add(sbi, frame);
	if (ret < 0) {
		vsmfs_err(sb, "cannot remember bad frame %llu (block %llu): error %d", frame, blk,
			  ret);
		return;
	}
	/* Known bad: acted on before, but at mount, where it is quietly retired. */
	if (!ret && !mounting)
		return;
	quiet = !ret;
	lpn = vsmfs_frame_lpn(sbi, frame);
	if (lpn == U64_MAX) {
		vsmfs_fs_error(sb, 0, "bad frame %llu (block %llu) backs no logical page", frame,
			       blk);
		return;
	}
	if (!lpn || vsmfs_resv_retire(sbi, lpn)) {
		if (!quiet)
			vsmfs_warn(sb, "memory failure in free block %llu: retired", blk);
		return;
	}
	if (vsmfs_mblk_find(sbi, blk)) {
		if (quiet)
			return;
		vsmfs_fs_error(sb, 0, "memory failure in metadata block %llu (logical page %llu)",
			       blk, lpn);
		return;
	}
	inode = vsmfs_mf_owner(sb, lpn, &pos);
	if (!inode) {
		if (!quiet)
			vsmfs_warn(sb, "memory failure in block %llu (logical page %llu): it reads EIO",
				   blk, lpn);
		return;
	}
	if (!quiet)
		vsmfs_warn(sb, "memory failure in inode %lu at offset %lld: the page reads EIO until overwritten whole",
			   inode->i_ino, pos);
	if (!mounting) {
		/* A 1 GiB mapping has no DAX entry: gone first, refaults stop short of the page. */
		filemap_invalidate_lock(inode->i_mapping);
		vsmfs_pud_unmap(inode, pos, pos + PAGE_SIZE - 1);
		filemap_invalidate_unlock(inode->i_mapping);
		mf_dax_kill_procs(inode->i_mapping, pos >> PAGE_SHIFT, 1, mf_flags);
	}
	iput(inode);
}

/* Act on a failure of device blocks [@first, @last]. */
static void vsmfs_mf_blocks(struct vsmfs_sb_info *sbi, u64 first, u64 last, int mf_flags,
			    bool mounting)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 blk;

	for (blk = first; blk <= last && blk < l->blocks; blk++) {
		vsmfs_stat_inc(sbi, mf_events);
		if (blk >= l->data_start && blk < l->data_start + l->data_pages) {
			vsmfs_mf_frame(sbi, blk - l->data_start, mf_flags, mounting);
			continue;
		}
		vsmfs_fs_error(sbi->s_sb, 0, "memory failure in the %s (block %llu)",
			       vsmfs_mf_region(sbi, blk) ?: "unused area", blk);
	}
}

/*
 * The holder operation: @offset and @len are bytes of the DAX device,
 * which the file system's partition may start into.
 */
static int vsmfs_notify_failure(struct dax_device *dax_dev, u64 offset, u64 len, int mf_flags)
{
	struct super_block *sb = dax_holder(dax_dev);
	struct vsmfs_sb_info *sbi;
	u64 start, end;

	if (!sb || !len)
		return -EOPNOTSUPP;
	sbi = VSMFS_SB(sb);
	/* Before the mount is whole (or after it began to end): the generic handling. */
	if (!smp_load_acquire(&sbi->s_mf_ready))
		return -EOPNOTSUPP;
	start = sbi->s_dax_part_off;
	end = start + (sbi->s_dev_blocks << VSMFS_BLOCK_SHIFT);
	if (offset + len <= start || offset >= end)
		return -ENXIO;		/* not this partition */
	offset = max(offset, start);
	len = min(offset + len, end) - offset;
	vsmfs_mf_blocks(sbi, (offset - start) >> VSMFS_BLOCK_SHIFT,
			(offset - start + len - 1) >> VSMFS_BLOCK_SHIFT, mf_flags, false);
	return 0;
}

const struct dax_holder_operations vsmfs_dax_holder_ops = {
	.notify_failure	= vsmfs_notify_failure,
};

/**
 * vsmfs_mf_mount() - the known bad frames at mount
 * @sbi: the file system, mounted but for its root
 *
 * Retires the free logical pages on frames of the bad-frame list, then
 * takes in the bad blocks the device lists (its badblocks, filled from
 * the platform's records and address range scrubs) as memory failures of
 * their blocks.
 *
 * Context: fill_super, no handle running.
 */
void vsmfs_mf_mount(struct vsmfs_sb_info *sbi)
{
	struct block_device *bdev = sbi->s_sb->s_bdev;
	struct badblocks *bb = bdev->bd_disk->bb;
	sector_t part = get_start_sect(bdev);
	u64 secs = sbi->s_dev_blocks << (VSMFS_BLOCK_SHIFT - SECTOR_SHIFT);
	unsigned int seq, n, i;
	unsigned long f;
	void *entry;
	u64 *tab;

	xa_for_each(&sbi->s_bad, f, entry)
		vsmfs_mf_frame(sbi, f, 0, true);
	if (!bb || !READ_ONCE(bb->count))
		return;
	tab = (u64 *)__get_free_page(GFP_KERNEL);
	if (!tab) {
		vsmfs_warn(sbi->s_sb, "no memory to read the device's bad blocks");
		return;
	}
	/* A copy of the table, not torn by a change meanwhile. */
	do {
		seq = read_seqbegin(&bb->lock);
		n = min_t(unsigned int, READ_ONCE(bb->count), PAGE_SIZE / sizeof(u64));
		memcpy(tab, bb->page, n * sizeof(u64));
	} while (read_seqretry(&bb->lock, seq));
	for (i = 0; i < n; i++) {
		u64 s = BB_OFFSET(tab[i]), e = s + BB_LEN(tab[i]);

		if (e <= part || s >= part + secs)
			continue;
		s = max_t(u64, s, part) - part;
		e = min_t(u64, e - part, secs);
		vsmfs_info(sbi->s_sb, "the device lists sectors %llu-%llu as bad", s, e - 1);
		vsmfs_mf_blocks(sbi, s >> (VSMFS_BLOCK_SHIFT - SECTOR_SHIFT),
				(e - 1) >> (VSMFS_BLOCK_SHIFT - SECTOR_SHIFT), 0, true);
	}
	free_page((unsigned long)tab);
}
