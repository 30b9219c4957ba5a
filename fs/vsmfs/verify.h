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

/* Whether block @blk is one of the inode table's. */
static inline bool vsmfs_layout_itable(const struct vsmfs_layout *l, u64 blk)
{
	return blk >= l->itable_start && blk - l->itable_start < l->itable_blocks;
}

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
bool vsmfs_all_zero(const void *p, size_t len);

/* Keys an inode's index maps: direct, single and double indirect entries. */
#define VSMFS_IDX_KEYS	(VSMFS_NDIRECT + VSMFS_IND_ENTRIES + \
			 (u64)VSMFS_IND_ENTRIES * VSMFS_IND_ENTRIES)

/* Bytes a directory entry with a name of @name_len bytes takes at least. */
static inline unsigned int vsmfs_dirent_len(unsigned int name_len)
{
	return roundup(VSMFS_DIRENT_BASE + name_len, VSMFS_DIRENT_ALIGN);
}

/**
 * vsmfs_dirent_rec_ok() - whether the record of a directory entry is sound
 * @de: the entry, at byte @off of its block
 * @off: its offset in the block, a multiple of VSMFS_DIRENT_ALIGN
 *
 * The entry's header lies inside the block (nothing else of it is read
 * otherwise), and its record length is aligned, holds a header and ends
 * inside the block: the walk of the block can go on to the next entry.
 *
 * Inline: every walk of a directory block takes it per entry.
 *
 * Return: true if so.
 */
static inline bool vsmfs_dirent_rec_ok(const struct vsmfs_ddirent *de, unsigned int off)
{
	unsigned int rec;

	if (off > VSMFS_BLOCK_SIZE - VSMFS_DIRENT_BASE)
		return false;
	rec = le16_to_cpu(de->d_rec_len);
	return rec >= VSMFS_DIRENT_BASE && !(rec % VSMFS_DIRENT_ALIGN) &&
	       rec <= VSMFS_BLOCK_SIZE - off;
}

const char *vsmfs_dirent_check(const struct vsmfs_ddirent *de, unsigned int off);
const char *vsmfs_dirent_name_check(const struct vsmfs_ddirent *de);

/* Bytes an xattr entry with @name_len bytes of name and @value_len of value takes. */
static inline unsigned int vsmfs_xentry_size(unsigned int name_len, unsigned int value_len)
{
	return roundup(sizeof(struct vsmfs_dxattr_entry) + name_len + value_len,
		       VSMFS_XATTR_ALIGN);
}

/**
 * struct vsmfs_xattr_scan - what vsmfs_xattr_block_check() found
 * @count: entries walked
 * @bad: offset of the entry found wrong, or 0
 * @derivable: the entries are sound; what is wrong, if anything, can be
 *	derived from them and the owner (count, owner, zero bytes)
 */
struct vsmfs_xattr_scan {
	unsigned int count;
	unsigned int bad;
	bool derivable;
};

const struct vsmfs_dxattr_entry *vsmfs_xattr_next(const void *blk, unsigned int *off,
						  unsigned int end);
const char *vsmfs_xattr_block_check(const void *blk, u64 ino, struct vsmfs_xattr_scan *s);

u8 vsmfs_dinode_type(const struct vsmfs_dinode *di);
const char *vsmfs_dinode_check(const struct vsmfs_dinode *di);
const char *vsmfs_dinode_fields_check(const struct vsmfs_dinode *di);

/**
 * struct vsmfs_jsb_state - a journal superblock, decoded
 * @n: journal blocks (and headers) the journal size calls for
 * @hdr_blocks: header blocks the journal size calls for
 * @ckpt: checkpoint pointer
 * @last: first header of the last committed transaction
 * @commit: end of the commit area
 * @hcopy: header copies to restore
 * @sequence: transactions committed since mkfs (j_sequence as found)
 * @count: number of the last durable commit (vsmfs_jcount_exact())
 * @fc_areas: fast-commit areas, 0 without them
 * @fc_area_blocks: blocks of each
 * @fc_start: first block of the first area, from the journal region's start
 * @only_reserved: nothing is wrong but (perhaps) the reserved bytes
 */
struct vsmfs_jsb_state {
	u32 n, hdr_blocks, ckpt, last, hcopy;
	u64 commit, sequence, count;
	u32 fc_areas, fc_area_blocks;
	u64 fc_start;
	bool only_reserved;
};

const char *vsmfs_jsb_check(const struct vsmfs_djsb *jsb, u64 journal_blocks,
			    struct vsmfs_jsb_state *js);

const char *vsmfs_fc_rec_check(const struct vsmfs_dfc_rec *rec, u32 room, u64 count, u32 *len);

/**
 * struct vsmfs_fc_ent - an entry of a fast-commit record (vsmfs_fc_next())
 * @kind: VSMFS_FC_KIND() of its first word
 * @where: the first word without the kind: a logical page, a bitmap word,
 *	a slot (VSMFS_FC_KEY_DIR, VSMFS_FC_KEY_GONE), or block << 9 | word
 *	(VSMFS_FC_KEY_SPAN, the count taken out)
 * @seq: VSMFS_FC_KEY_DIR, VSMFS_FC_KEY_GONE: the slot's order
 * @mask: VSMFS_FC_KEY_DIR, VSMFS_FC_KEY_GONE: the words of the slot that follow
 * @n: the words in @val
 * @val: the entry's values: the page table entry, the bits, the words
 */
struct vsmfs_fc_ent {
	unsigned int kind;
	u64 where, seq;
	u32 mask, n;
	const __le64 *val;
};

/**
 * struct vsmfs_fc_iter - a walk over the entries of a record
 * @p: the next entry
 * @end: the end of the record
 * @left: entries not walked yet
 */
struct vsmfs_fc_iter {
	const __le64 *p, *end;
	u32 left;
};

void vsmfs_fc_iter_init(struct vsmfs_fc_iter *it, const struct vsmfs_dfc_rec *rec);
const char *vsmfs_fc_next(struct vsmfs_fc_iter *it, struct vsmfs_fc_ent *e);

#endif /* _VSMFS_VERIFY_H */
