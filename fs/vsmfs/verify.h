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
 *
 * All values are in blocks except @inodes and @data_pages.
 */
struct vsmfs_layout {
	u64 blocks;
	u64 journal_start, journal_blocks;
	u64 itable_start, itable_blocks;
	u64 imap_start, imap_blocks;
	u64 ptable_start, ptable_blocks;
	u64 lbitmap_start, lbitmap_blocks;
	u64 ibitmap_start, ibitmap_blocks;
	u64 data_start, data_pages;
	u64 inodes;
};

u64 vsmfs_default_journal_blocks(u64 blocks);
u64 vsmfs_default_inodes(u64 blocks);
const char *vsmfs_compute_layout(struct vsmfs_layout *l, u64 blocks,
				 u64 journal_blocks, u64 inodes);
void vsmfs_layout_to_sb(const struct vsmfs_layout *l, struct vsmfs_dsb *dsb);
u32 vsmfs_sb_csum(const struct vsmfs_dsb *dsb);
const char *vsmfs_sb_check(const struct vsmfs_dsb *dsb, u64 dev_blocks);

#endif /* _VSMFS_VERIFY_H */
