/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure format logic shared by the module and the user-space tools: layout
 * computation, checksums and verifiers. Built into vsmfs.ko and into the
 * tools, so that mount, mkfs and fsck agree on what a valid image is.
 */
#ifndef _VSMFS_VERIFY_H
#define _VSMFS_VERIFY_H

#include <linux/kernel.h>
#include <linux/crc32c.h>
#include <linux/string.h>
#include "vsmfs_format.h"

/**
 * struct vsmfs_layout - where every region of a file system lies
 * @blocks: blocks the file system spans
 * @sb_backup: block of the backup superblock
 * @journal_start: first block of the journal
 * @journal_blocks: journal size
 * @itable_start: first block of the inode table
 * @itable_blocks: inode table size
 * @imap_start: first block of the inode mapping table
 * @imap_blocks: inode mapping table size
 * @ptable_start: first block of the page table
 * @ptable_blocks: page table size
 * @lbitmap_start: first block of the logical page bitmap
 * @lbitmap_blocks: logical page bitmap size
 * @ibitmap_start: first block of the inode bitmap
 * @ibitmap_blocks: inode bitmap size
 * @data_start: first data frame
 * @data_pages: data frames
 * @lpages: logical pages: @data_pages, or more on a sparse file system
 * @sparse: VSMFS_FEATURE_INCOMPAT_SPARSE: logical pages may lack frames
 * @inodes: inode slots, slot 0 included
 *
 * All values are in blocks except @inodes, @data_pages and @lpages.
 */
struct vsmfs_layout {
	u64 blocks;
	u64 sb_backup;
	u64 journal_start, journal_blocks;
	u64 itable_start, itable_blocks;
	u64 imap_start, imap_blocks;
	u64 ptable_start, ptable_blocks;
	u64 lbitmap_start, lbitmap_blocks;
	u64 ibitmap_start, ibitmap_blocks;
	u64 data_start, data_pages;
	u64 lpages;
	bool sparse;
	u64 inodes;
};

u64 vsmfs_default_journal_blocks(u64 blocks);
u64 vsmfs_default_inodes(u64 blocks);
u64 vsmfs_default_lpages(u64 blocks);
const char *vsmfs_compute_layout(struct vsmfs_layout *l, u64 blocks,
				 u64 journal_blocks, u64 inodes, u32 incompat);
const char *vsmfs_compute_layout_sparse(struct vsmfs_layout *l, u64 blocks, u64 journal_blocks,
					u64 inodes, u32 incompat, u64 lpages);
void vsmfs_layout_to_sb(const struct vsmfs_layout *l, struct vsmfs_dsb *dsb);
u32 vsmfs_sb_csum(const struct vsmfs_dsb *dsb);
const char *vsmfs_sb_check(const struct vsmfs_dsb *dsb, u64 dev_blocks);
const char *vsmfs_sb_backup_check(const struct vsmfs_dsb *dsb, u64 blk, u64 dev_blocks);
const char *vsmfs_sb_mount_opts_check(const struct vsmfs_dsb *dsb);
u64 vsmfs_sb_backup_guess(u64 dev_blocks, int i);
void vsmfs_layout_of_sb(struct vsmfs_layout *l, const struct vsmfs_dsb *dsb);
u32 vsmfs_name_hash(const char *name, unsigned int len);

#endif /* _VSMFS_VERIFY_H */
