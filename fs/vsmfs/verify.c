// SPDX-License-Identifier: GPL-2.0
/*
 * Layout computation and superblock verification, shared verbatim by the
 * kernel module and the user-space tools. A verifier returns NULL when the
 * structure is sound and otherwise a short reason that names the field, so
 * that mount's dmesg line and fsck's report say the same thing.
 */
#include "verify.h"

/**
 * vsmfs_default_journal_blocks() - journal size mkfs picks for a device
 * @blocks: device size in blocks
 *
 * 128 MiB as in the papers, but at most 1/16 of the device and at least
 * 1 MiB.
 *
 * Return: journal size in blocks, journal superblock included.
 */
u64 vsmfs_default_journal_blocks(u64 blocks)
{
	u64 j = (128ULL << 20) >> VSMFS_BLOCK_SHIFT;

	if (j > blocks / 16)
		j = blocks / 16;
	if (j < (1ULL << 20) >> VSMFS_BLOCK_SHIFT)
		j = (1ULL << 20) >> VSMFS_BLOCK_SHIFT;
	return j;
}

/**
 * vsmfs_default_inodes() - inode count mkfs picks for a device
 * @blocks: device size in blocks
 *
 * One inode per 16 KiB of device, rounded up to a whole inode-table block.
 *
 * Return: number of inode slots, slot 0 included.
 */
u64 vsmfs_default_inodes(u64 blocks)
{
	return roundup(blocks / 4, (u64)VSMFS_INODES_PER_BLOCK);
}

/**
 * vsmfs_default_lpages() - default logical page count of a sparse file system
 * @blocks: blocks the file system spans
 *
 * Twice the device's blocks, in whole superpages: room for as many pages
 * of holes inside files as there can be data pages.
 *
 * Return: logical pages.
 */
u64 vsmfs_default_lpages(u64 blocks)
{
	u64 n = 2 * roundup(blocks, (u64)VSMFS_VSP_PAGES);

	return n < VSMFS_MAX_LPAGES ? n : VSMFS_MAX_LPAGES;
}

/**
 * vsmfs_compute_layout_sparse() - place every region of a file system
 * @l: filled in
 * @blocks: blocks the file system spans
 * @journal_blocks: journal size in blocks
 * @inodes: inode slots
 * @incompat: incompatible feature bits; VSMFS_FEATURE_INCOMPAT_SB_LAST
 *	keeps the last block for the backup superblock
 * @lpages: logical pages with VSMFS_FEATURE_INCOMPAT_SPARSE in @incompat
 *	(a multiple of VSMFS_VSP_PAGES, at least the data frames), else 0
 *
 * The layout is a pure function of its inputs, so a superblock can be
 * checked by recomputing it. Block 1 precedes the journal in both
 * layouts: it holds the backup superblock without
 * VSMFS_FEATURE_INCOMPAT_SB_LAST and is unused with it. The page table
 * and the logical page bitmap cover every logical page; the data area
 * takes what is left.
 *
 * Return: NULL, or why no valid layout exists.
 */
const char *vsmfs_compute_layout_sparse(struct vsmfs_layout *l, u64 blocks, u64 journal_blocks,
					u64 inodes, u32 incompat, u64 lpages)
{
	const u64 bits_per_block = VSMFS_BLOCK_SIZE * 8ULL;
	u64 pos, pages, meta, end, most;

	if (blocks < VSMFS_MIN_BLOCKS)
		return "device smaller than 16 MiB";
	if (blocks > (1ULL << 40))
		return "device larger than 4 PiB";
	if (journal_blocks < 16 || journal_blocks > blocks / 2 ||
	    journal_blocks > VSMFS_JOURNAL_MAX_BLOCKS)
		return "journal size out of range";
	if (inodes < 2 * VSMFS_INODES_PER_BLOCK || inodes % VSMFS_INODES_PER_BLOCK ||
	    inodes > (1ULL << 32))
		return "inode count out of range";
	if (!(incompat & VSMFS_FEATURE_INCOMPAT_SPARSE) != !lpages)
		return "logical page count without the sparse feature";
	if (lpages % VSMFS_VSP_PAGES || lpages > VSMFS_MAX_LPAGES)
		return "logical page count out of range";

	memset(l, 0, sizeof(*l));
	l->blocks = blocks;
	l->inodes = inodes;
	l->sb_backup = incompat & VSMFS_FEATURE_INCOMPAT_SB_LAST ? blocks - 1 :
		       VSMFS_SB_BACKUP_BLOCK;
	/* The data area ends before a backup in the last block. */
	end = incompat & VSMFS_FEATURE_INCOMPAT_SB_LAST ? blocks - 1 : blocks;
	l->journal_start = VSMFS_SB_BACKUP_BLOCK + 1;
	l->journal_blocks = journal_blocks;
	l->itable_start = l->journal_start + journal_blocks;
	l->itable_blocks = inodes / VSMFS_INODES_PER_BLOCK;
	l->imap_start = l->itable_start + l->itable_blocks;
	l->imap_blocks = DIV_ROUND_UP(inodes * 4, VSMFS_BLOCK_SIZE);
	l->ibitmap_start = l->imap_start + l->imap_blocks;
	l->ibitmap_blocks = DIV_ROUND_UP(inodes, bits_per_block);
	pos = l->ibitmap_start + l->ibitmap_blocks;
	if (pos >= end)
		return "inode table does not fit";

	/*
	 * Largest page count whose page table and bitmap fit in front of a
	 * 2 MiB aligned data area. Start from an upper bound and shrink.
	 */
	pages = end - pos;
	for (;;) {
		u64 pt, bm;

		most = pages > lpages ? pages : lpages;
		pt = DIV_ROUND_UP(most * 8, VSMFS_BLOCK_SIZE);
		bm = DIV_ROUND_UP(most, bits_per_block);

		meta = roundup(pos + pt + bm, (u64)VSMFS_VSP_PAGES);
		if (meta + pages <= end)
			break;
		if (meta >= end)
			return "no room for data";
		pages = end - meta;
	}
	if (pages < VSMFS_VSP_PAGES)
		return "no room for data";
	if (lpages && lpages < pages)
		return "fewer logical pages than data frames";
	l->sparse = lpages != 0;
	l->lpages = lpages ?: pages;
	l->ptable_start = pos;
	l->ptable_blocks = DIV_ROUND_UP(l->lpages * 8, VSMFS_BLOCK_SIZE);
	l->lbitmap_start = l->ptable_start + l->ptable_blocks;
	l->lbitmap_blocks = DIV_ROUND_UP(l->lpages, bits_per_block);
	l->data_start = meta;
	l->data_pages = pages;
	return NULL;
}

/**
 * vsmfs_compute_layout() - place every region of a file system without
 * VSMFS_FEATURE_INCOMPAT_SPARSE
 * @l: filled in
 * @blocks: blocks the file system spans
 * @journal_blocks: journal size in blocks
 * @inodes: inode slots
 * @incompat: incompatible feature bits, VSMFS_FEATURE_INCOMPAT_SPARSE clear
 *
 * As vsmfs_compute_layout_sparse() with as many logical pages as frames.
 *
 * Return: NULL, or why no valid layout exists.
 */
const char *vsmfs_compute_layout(struct vsmfs_layout *l, u64 blocks,
				 u64 journal_blocks, u64 inodes, u32 incompat)
{
	return vsmfs_compute_layout_sparse(l, blocks, journal_blocks, inodes, incompat, 0);
}

/**
 * vsmfs_layout_to_sb() - store a layout in an on-media superblock
 * @l: the layout
 * @dsb: superblock to fill in (other fields untouched)
 */
void vsmfs_layout_to_sb(const struct vsmfs_layout *l, struct vsmfs_dsb *dsb)
{
	dsb->s_blocks = cpu_to_le64(l->blocks);
	dsb->s_journal_start = cpu_to_le64(l->journal_start);
	dsb->s_journal_blocks = cpu_to_le64(l->journal_blocks);
	dsb->s_itable_start = cpu_to_le64(l->itable_start);
	dsb->s_itable_blocks = cpu_to_le64(l->itable_blocks);
	dsb->s_imap_start = cpu_to_le64(l->imap_start);
	dsb->s_imap_blocks = cpu_to_le64(l->imap_blocks);
	dsb->s_ptable_start = cpu_to_le64(l->ptable_start);
	dsb->s_ptable_blocks = cpu_to_le64(l->ptable_blocks);
	dsb->s_lbitmap_start = cpu_to_le64(l->lbitmap_start);
	dsb->s_lbitmap_blocks = cpu_to_le64(l->lbitmap_blocks);
	dsb->s_ibitmap_start = cpu_to_le64(l->ibitmap_start);
	dsb->s_ibitmap_blocks = cpu_to_le64(l->ibitmap_blocks);
	dsb->s_data_start = cpu_to_le64(l->data_start);
	dsb->s_data_pages = cpu_to_le64(l->data_pages);
	dsb->s_lpages = cpu_to_le64(l->sparse ? l->lpages : 0);
	dsb->s_inodes = cpu_to_le64(l->inodes);
}

/**
 * vsmfs_sb_csum() - checksum of an on-media superblock
 * @dsb: the superblock
 *
 * Return: crc32c of every byte before s_checksum.
 */
u32 vsmfs_sb_csum(const struct vsmfs_dsb *dsb)
{
	return crc32c(~0U, dsb, offsetof(struct vsmfs_dsb, s_checksum)) ^ ~0U;
}

/**
 * vsmfs_sb_check() - verify an on-media superblock
 * @dsb: the superblock
 * @dev_blocks: size of the device holding it, in blocks
 *
 * Checks magic, version, checksum, feature bits, constants, and that the
 * region fields are exactly the layout mkfs computes for the superblock's
 * size, journal size and inode count.
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_sb_check(const struct vsmfs_dsb *dsb, u64 dev_blocks)
{
	struct vsmfs_layout l;
	struct vsmfs_dsb want;
	const char *why;

	if (le32_to_cpu(dsb->s_magic) != VSMFS_MAGIC)
		return "bad magic (not a vsmfs file system)";
	if (le32_to_cpu(dsb->s_checksum) != vsmfs_sb_csum(dsb))
		return "superblock checksum mismatch";
	if (le32_to_cpu(dsb->s_version) != VSMFS_FORMAT_VERSION)
		return "unsupported format version";
	if (le32_to_cpu(dsb->s_feature_incompat) & ~VSMFS_FEATURE_INCOMPAT_SUPP)
		return "unknown incompatible features";
	if (le32_to_cpu(dsb->s_block_size) != VSMFS_BLOCK_SIZE)
		return "unsupported block size";
	if (le32_to_cpu(dsb->s_vsp_pages) != VSMFS_VSP_PAGES)
		return "unsupported superpage size";
	if (le32_to_cpu(dsb->s_inode_size) != VSMFS_INODE_SIZE)
		return "unsupported inode size";
	if (le64_to_cpu(dsb->s_blocks) > dev_blocks)
		return "file system larger than the device";
	why = vsmfs_compute_layout_sparse(&l, le64_to_cpu(dsb->s_blocks),
					  le64_to_cpu(dsb->s_journal_blocks),
					  le64_to_cpu(dsb->s_inodes),
					  le32_to_cpu(dsb->s_feature_incompat),
					  le64_to_cpu(dsb->s_lpages));
	if (why)
		return why;
	memcpy(&want, dsb, sizeof(want));
	vsmfs_layout_to_sb(&l, &want);
	if (memcmp(&want, dsb, sizeof(want)))
		return "region table inconsistent with sizes";
	if (le64_to_cpu(dsb->s_root_ino) != VSMFS_ROOT_INO)
		return "bad root inode number";
	return NULL;
}

/**
 * vsmfs_sb_mount_opts_check() - verify the stored default mount options
 * @dsb: a superblock
 *
 * With VSMFS_FEATURE_COMPAT_MOUNT_OPTS, @s_mount_opts must hold a non-empty
 * NUL terminated string of printable characters without spaces, zero after
 * its end; without it, zero. Whether the kernel knows the options is for
 * mount to say.
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_sb_mount_opts_check(const struct vsmfs_dsb *dsb)
{
	const u8 *o = dsb->s_mount_opts;
	size_t len = strnlen((const char *)o, VSMFS_MOUNT_OPTS_LEN), i;

	if (!(le32_to_cpu(dsb->s_feature_compat) & VSMFS_FEATURE_COMPAT_MOUNT_OPTS))
		len = 0;
	else if (!len)
		return "default mount options flagged but empty";
	else if (len == VSMFS_MOUNT_OPTS_LEN)
		return "default mount options not terminated";
	for (i = 0; i < len; i++)
		if (o[i] <= ' ' || o[i] >= 0x7f)
			return "default mount options hold a space or unprintable character";
	for (; i < VSMFS_MOUNT_OPTS_LEN; i++)
		if (o[i])
			return len ? "default mount options not zero padded" :
			       "default mount options without the mount_opts feature";
	return NULL;
}

/**
 * vsmfs_layout_of_sb() - the layout a verified superblock describes
 * @l: filled in
 * @dsb: a superblock vsmfs_sb_check() accepted
 */
void vsmfs_layout_of_sb(struct vsmfs_layout *l, const struct vsmfs_dsb *dsb)
{
	vsmfs_compute_layout_sparse(l, le64_to_cpu(dsb->s_blocks),
				    le64_to_cpu(dsb->s_journal_blocks), le64_to_cpu(dsb->s_inodes),
				    le32_to_cpu(dsb->s_feature_incompat),
				    le64_to_cpu(dsb->s_lpages));
}

/**
 * vsmfs_sb_backup_check() - verify a backup superblock found at a block
 * @dsb: the superblock read from block @blk
 * @blk: where it was read
 * @dev_blocks: size of the device holding it, in blocks
 *
 * A backup must be sound and must say that its own place is @blk, so that
 * a stale copy (block 1 of an image reformatted with the backup at the
 * end, or data in the last block of an image with the backup in block 1)
 * is never taken for the backup.
 *
 * Return: NULL if @dsb is the backup of its file system, otherwise why not.
 */
const char *vsmfs_sb_backup_check(const struct vsmfs_dsb *dsb, u64 blk, u64 dev_blocks)
{
	struct vsmfs_layout l;
	const char *why = vsmfs_sb_check(dsb, dev_blocks);

	if (why)
		return why;
	vsmfs_layout_of_sb(&l, dsb);
	if (l.sb_backup != blk)
		return "not at the place of the backup superblock";
	return NULL;
}

/**
 * vsmfs_sb_backup_guess() - where to look for a backup superblock
 * @dev_blocks: size of the device, in blocks
 * @i: 0 or 1
 *
 * Used when the primary superblock cannot say where its backup is: mkfs
 * makes a file system span the whole device, so its backup is the last
 * block of the device (0), or block 1 for file systems without
 * VSMFS_FEATURE_INCOMPAT_SB_LAST (1). Check what is found there with
 * vsmfs_sb_backup_check().
 *
 * Return: the block to try.
 */
u64 vsmfs_sb_backup_guess(u64 dev_blocks, int i)
{
	return i ? VSMFS_SB_BACKUP_BLOCK : dev_blocks - 1;
}

/**
 * vsmfs_name_hash() - hash of a directory entry name, as stored in d_hash
 * @name: the name, not NUL terminated
 * @len: its length in bytes
 *
 * 32-bit FNV-1a over the bytes of the name.
 *
 * Return: the hash.
 */
u32 vsmfs_name_hash(const char *name, unsigned int len)
{
	u32 h = 2166136261U;

	while (len--) {
		h ^= (u8)*name++;
		h *= 16777619U;
	}
	return h;
}
