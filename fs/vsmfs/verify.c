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

/**
 * vsmfs_all_zero() - whether bytes are all zero
 * @p: the bytes
 * @len: how many
 *
 * Return: true if every byte of [@p, @p + @len) is zero.
 */
bool vsmfs_all_zero(const void *p, size_t len)
{
	const u8 *b = p;

	while (len--)
		if (*b++)
			return false;
	return true;
}

/**
 * vsmfs_dirent_check() - verify one entry of a directory block
 * @de: the entry, at byte @off of its block
 * @off: its offset in the block, a multiple of VSMFS_DIRENT_ALIGN
 *
 * What every walk of a directory block needs: a sound record
 * (vsmfs_dirent_rec_ok()) and, for an entry in use, a name that is not
 * empty and fits the record. The name itself is for
 * vsmfs_dirent_name_check().
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_dirent_check(const struct vsmfs_ddirent *de, unsigned int off)
{
	if (!vsmfs_dirent_rec_ok(de, off))
		return "bad record length";
	if (!de->d_ino)
		return NULL;
	if (!de->d_name_len)
		return "entry in use without a name";
	if (vsmfs_dirent_len(de->d_name_len) > le16_to_cpu(de->d_rec_len))
		return "name length does not fit the record length";
	return NULL;
}

/**
 * vsmfs_dirent_name_check() - verify the name of an entry in use
 * @de: an entry vsmfs_dirent_check() accepted, in use
 *
 * A name holds neither '/' nor NUL, is neither "." nor ".." (they are
 * implicit, never stored), and @d_hash is its vsmfs_name_hash().
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_dirent_name_check(const struct vsmfs_ddirent *de)
{
	unsigned int nl = de->d_name_len;

	if (memchr(de->d_name, '/', nl) || memchr(de->d_name, 0, nl))
		return "name contains '/' or NUL";
	if (de->d_name[0] == '.' && (nl == 1 || (nl == 2 && de->d_name[1] == '.')))
		return "'.' and '..' are implicit and never stored";
	if (le32_to_cpu(de->d_hash) != vsmfs_name_hash(de->d_name, nl))
		return "name hash mismatch";
	return NULL;
}

/**
 * vsmfs_xattr_next() - step to the next entry of an xattr block
 * @blk: the block
 * @off: offset of the entry; set to the offset of the one after it
 * @end: where the entries end (x_used, or the block size for a walk that
 *	does not trust the header)
 *
 * Return: the entry at *@off if all of it (header, name, value, padding)
 * lies before @end, else NULL (and *@off is left alone).
 */
const struct vsmfs_dxattr_entry *vsmfs_xattr_next(const void *blk, unsigned int *off,
						  unsigned int end)
{
	const struct vsmfs_dxattr_entry *e = blk + *off;
	unsigned int len;

	if (end > VSMFS_BLOCK_SIZE || *off > end || end - *off < sizeof(*e))
		return NULL;
	len = vsmfs_xentry_size(e->e_name_len, le16_to_cpu(e->e_value_len));
	if (len > end - *off)
		return NULL;
	*off += len;
	return e;
}

/* Whether two entries name the same attribute. */
static bool vsmfs_xattr_same(const struct vsmfs_dxattr_entry *a,
			     const struct vsmfs_dxattr_entry *b)
{
	return a->e_name_index == b->e_name_index && a->e_name_len == b->e_name_len &&
	       !memcmp(a->e_name, b->e_name, a->e_name_len);
}

/**
 * vsmfs_xattr_block_check() - verify an extended attribute block
 * @blk: the block, VSMFS_BLOCK_SIZE bytes
 * @ino: i-number of the inode whose @i_xattr names it
 * @s: filled in with what was found, or NULL
 *
 * The header has the magic and a used size inside the block; the entries
 * before it each lie there whole, name a known namespace, have a name
 * (none for an ACL), and no two name the same attribute (the kernel finds
 * the first and would leave the other for good). Entries are kept in no
 * order. Checked last, as what can be derived from sound entries: the
 * entry count, the owner, the reserved bytes and the bytes past the used
 * size, all zero.
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_xattr_block_check(const void *blk, u64 ino, struct vsmfs_xattr_scan *s)
{
	const struct vsmfs_dxattr_hdr *h = blk;
	unsigned int used = le16_to_cpu(h->x_used), off = sizeof(*h), n = 0, prev, at;
	const struct vsmfs_dxattr_entry *e, *o;
	struct vsmfs_xattr_scan dummy;
	bool acl;

	if (!s)
		s = &dummy;
	memset(s, 0, sizeof(*s));
	if (le32_to_cpu(h->x_magic) != VSMFS_XATTR_MAGIC)
		return "bad magic";
	if (used < sizeof(*h) || used > VSMFS_BLOCK_SIZE || used % VSMFS_XATTR_ALIGN)
		return "bad used size";
	while (off < used) {
		prev = off;
		e = vsmfs_xattr_next(blk, &off, used);
		s->bad = prev;
		if (!e)
			return "entry crosses the used size";
		if (e->e_name_index < VSMFS_XATTR_INDEX_USER ||
		    e->e_name_index > VSMFS_XATTR_INDEX_ACL_DEFAULT)
			return "unknown name index";
		acl = e->e_name_index >= VSMFS_XATTR_INDEX_ACL_ACCESS;
		if (acl != !e->e_name_len)
			return e->e_name_len ? "name on an ACL" : "empty name";
		for (at = sizeof(*h); at < prev;) {
			o = vsmfs_xattr_next(blk, &at, used);
			if (vsmfs_xattr_same(o, e))
				return "two entries of one attribute";
		}
		n++;
	}
	s->bad = 0;
	s->count = n;
	s->derivable = true;
	if (le16_to_cpu(h->x_count) != n)
		return "entry count mismatch";
	if (le64_to_cpu(h->x_ino) != ino)
		return "owned by another inode";
	if (!vsmfs_all_zero(h->x_reserved, sizeof(h->x_reserved)))
		return "reserved bytes are not zero";
	if (!vsmfs_all_zero(blk + used, VSMFS_BLOCK_SIZE - used))
		return "bytes past the used size are not zero";
	return NULL;
}

/* File types as i_mode holds them (bits 12-15), the DT_* values of entries. */
#define VSMFS_FT_FIFO	1
#define VSMFS_FT_CHR	2
#define VSMFS_FT_DIR	4
#define VSMFS_FT_BLK	6
#define VSMFS_FT_REG	8
#define VSMFS_FT_LNK	10
#define VSMFS_FT_SOCK	12

/**
 * vsmfs_dinode_type() - the file type of an on-media inode
 * @di: the inode
 *
 * Return: the type as a directory entry stores it (DT_REG, DT_DIR, ...),
 * or 0 if @i_mode holds none (a free inode, or a damaged mode).
 */
u8 vsmfs_dinode_type(const struct vsmfs_dinode *di)
{
	u8 t = le16_to_cpu(di->i_mode) >> 12 & 0xf;

	switch (t) {
	case VSMFS_FT_FIFO: case VSMFS_FT_CHR: case VSMFS_FT_DIR: case VSMFS_FT_BLK:
	case VSMFS_FT_REG: case VSMFS_FT_LNK: case VSMFS_FT_SOCK:
		return t;
	}
	return 0;
}

/**
 * vsmfs_dinode_check() - verify what an inode in use needs to be used
 * @di: the inode, @i_mode not zero
 *
 * The mode names a file type, and the size fits it: a regular file no
 * larger than its index maps, a directory a whole number of blocks its
 * index can hold, a symlink target of 1 to VSMFS_BLOCK_SIZE - 1 bytes.
 * What the kernel can live with is left to vsmfs_dinode_fields_check().
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_dinode_check(const struct vsmfs_dinode *di)
{
	u64 size = le64_to_cpu(di->i_size);

	switch (vsmfs_dinode_type(di)) {
	case 0:
		return "invalid mode";
	case VSMFS_FT_REG:
		if (size > VSMFS_IDX_KEYS << VSMFS_VSP_SHIFT)
			return "size past the largest file";
		break;
	case VSMFS_FT_DIR:
		if (size % VSMFS_BLOCK_SIZE || size >> VSMFS_BLOCK_SHIFT > VSMFS_IDX_KEYS)
			return "directory size is not a whole number of blocks";
		break;
	case VSMFS_FT_LNK:
		if (!size || size >= VSMFS_BLOCK_SIZE)
			return "symlink size out of range";
		break;
	}
	return NULL;
}

/**
 * vsmfs_dinode_fields_check() - verify the other fields of an inode in use
 * @di: an inode vsmfs_dinode_check() accepted
 *
 * Fields that are zero, or known values, for every inode or for its type;
 * mount does not look at them, fsck.vsmfs does: reserved fields, flags,
 * the tail key of regular files, the parent of directories, nanoseconds,
 * the device number of devices, the target of a fast symlink, and the
 * size and index of special files.
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_dinode_fields_check(const struct vsmfs_dinode *di)
{
	u32 flags = le32_to_cpu(di->i_flags);
	u64 size = le64_to_cpu(di->i_size);
	u8 t = vsmfs_dinode_type(di);
	bool special = t != VSMFS_FT_REG && t != VSMFS_FT_DIR && t != VSMFS_FT_LNK;

	if (di->i_reserved0 || !vsmfs_all_zero(di->i_reserved2, sizeof(di->i_reserved2)))
		return "reserved fields are not zero";
	if (flags & ~VSMFS_IFLAG_ALL)
		return "unknown flags";
	if ((flags & VSMFS_IFLAG_TRUNCATING) && special)
		return "truncation flag set on a special file";
	if (di->i_tail_key && t != VSMFS_FT_REG)
		return "tail key set on an inode that is not a regular file";
	if (di->i_parent && t != VSMFS_FT_DIR)
		return "parent set on an inode that is not a directory";
	if (le32_to_cpu(di->i_atime_ns) >= 1000000000 ||
	    le32_to_cpu(di->i_mtime_ns) >= 1000000000 ||
	    le32_to_cpu(di->i_ctime_ns) >= 1000000000 ||
	    le32_to_cpu(di->i_crtime_ns) >= 1000000000)
		return "timestamp nanoseconds out of range";
	if (di->i_rdev && t != VSMFS_FT_CHR && t != VSMFS_FT_BLK)
		return "device number set on an inode that is not a device";
	if (t == VSMFS_FT_LNK && size <= VSMFS_INLINE_LEN &&
	    strnlen((const char *)di->i_inline, size) != size)
		return "fast symlink target shorter than its size";
	if (special && size)
		return "size set on a special file";
	if (special && !vsmfs_all_zero(di->i_inline, sizeof(di->i_inline)))
		return "index entries set on a special file";
	return NULL;
}

/**
 * vsmfs_jsb_check() - verify a journal superblock
 * @jsb: the journal superblock
 * @journal_blocks: size of the journal region (s_journal_blocks)
 * @js: filled in with the decoded fields, whatever is found
 *
 * The magic; the journal blocks and header blocks the region's size calls
 * for; the checkpoint pointer inside the headers and not before the start
 * of the last transaction; the commit pointer inside the headers; no more
 * header copies than the copy region holds; and, last, the reserved bytes
 * zero (@js->only_reserved tells that nothing else is wrong).
 *
 * Return: NULL if sound, otherwise the reason.
 */
const char *vsmfs_jsb_check(const struct vsmfs_djsb *jsb, u64 journal_blocks,
			    struct vsmfs_jsb_state *js)
{
	u64 state = le64_to_cpu(jsb->j_checkpoint), fc_blocks;

	js->fc_areas = le32_to_cpu(jsb->j_fc_areas);
	js->fc_area_blocks = le32_to_cpu(jsb->j_fc_area_blocks);
	fc_blocks = (u64)js->fc_areas * js->fc_area_blocks;
	js->fc_start = fc_blocks < journal_blocks ? journal_blocks - fc_blocks : 0;
	js->n = vsmfs_journal_geometry(journal_blocks - (js->fc_areas ? fc_blocks : 0),
				       &js->hdr_blocks);
	js->ckpt = (u32)(state & VSMFS_JCKPT_POS_MASK);
	js->last = (u32)((state & VSMFS_JCKPT_POS_MASK) >> 32);
	js->commit = le64_to_cpu(jsb->j_commit);
	js->hcopy = le32_to_cpu(jsb->j_hcopy);
	js->sequence = le64_to_cpu(jsb->j_sequence);
	js->count = js->fc_areas ? vsmfs_jcount_exact(js->sequence, state) : js->sequence;
	js->only_reserved = false;
	if (le32_to_cpu(jsb->j_magic) != VSMFS_JOURNAL_MAGIC)
		return "bad magic";
	/* The rest of the region must hold a journal of 16 blocks at least. */
	if (js->fc_areas && (!js->fc_area_blocks || fc_blocks > VSMFS_FC_MAX_BLOCKS ||
			     fc_blocks > journal_blocks / 4 || journal_blocks - fc_blocks < 16))
		return "fast-commit areas do not fit the journal region";
	if (!js->fc_areas && js->fc_area_blocks)
		return "fast-commit area blocks set without areas";
	if (le32_to_cpu(jsb->j_blocks) != js->n || le32_to_cpu(jsb->j_hdr_blocks) != js->hdr_blocks)
		return "journal and header blocks not those the journal size calls for";
	if (js->ckpt > js->n || js->last > js->ckpt)
		return "checkpoint pointer past the headers or before the last transaction";
	if (js->commit > js->n)
		return "commit pointer past the headers";
	if (js->hcopy > VSMFS_JH_PER_BLOCK)
		return "more header copies than the copy region holds";
	js->only_reserved = true;
	if (!vsmfs_all_zero(jsb->j_reserved, sizeof(jsb->j_reserved)))
		return "reserved bytes are not zero";
	return NULL;
}

/**
 * vsmfs_fc_iter_init() - start a walk over a record's entries
 * @it: the walk
 * @rec: a record whose length vsmfs_fc_rec_check() found valid
 */
void vsmfs_fc_iter_init(struct vsmfs_fc_iter *it, const struct vsmfs_dfc_rec *rec)
{
	it->p = (const __le64 *)(rec + 1) + hweight32(le32_to_cpu(rec->r_words));
	it->end = (const __le64 *)((const u8 *)rec + le16_to_cpu(rec->r_len));
	it->left = le16_to_cpu(rec->r_npte);
}

/**
 * vsmfs_fc_next() - the next entry of a record
 * @it: the walk (vsmfs_fc_iter_init())
 * @e: set to the entry
 *
 * Return: NULL with @e set, "" at the end, or what is wrong with the
 * entry (it does not fit the record, its kind is unknown, a span is
 * empty or crosses its block's end); the entries of the directory's part
 * (VSMFS_FC_KEY_DIR and after) and of an unlinked inode's
 * (VSMFS_FC_KEY_GONE) are checked by vsmfs_fc_rec_check().
 */
const char *vsmfs_fc_next(struct vsmfs_fc_iter *it, struct vsmfs_fc_ent *e)
{
	u64 key;
	u32 head = 1;

	if (!it->left)
		return "";
	if (it->end - it->p < 2)
		return "entry past the end of the record";
	key = le64_to_cpu(it->p[0]);
	e->kind = VSMFS_FC_KIND(key);
	e->where = key & ((1ULL << 60) - 1);
	e->n = 1;
	switch (e->kind) {
	case 0:
	case VSMFS_FC_KIND(VSMFS_FC_KEY_BITMAP):
	case VSMFS_FC_KIND(VSMFS_FC_KEY_IBITMAP):
	case VSMFS_FC_KIND(VSMFS_FC_KEY_BCLEAR):
		break;
	case VSMFS_FC_KIND(VSMFS_FC_KEY_DIR):
	case VSMFS_FC_KIND(VSMFS_FC_KEY_GONE):
		if (it->end - it->p < 3)
			return "entry past the end of the record";
		e->seq = le64_to_cpu(it->p[1]);
		e->mask = le64_to_cpu(it->p[2]);
		if (e->where >> 32 || le64_to_cpu(it->p[2]) >> 32)
			return "bad slot key";
		e->n = hweight32(e->mask);
		head = 3;
		break;
	case VSMFS_FC_KIND(VSMFS_FC_KEY_SPAN):
		e->n = (e->where >> 48 & 0xff) + 1;
		e->where &= (1ULL << 48) - 1;
		if (e->n > VSMFS_FC_SPAN_MAX ||
		    e->where % (VSMFS_BLOCK_SIZE / 8) + e->n > VSMFS_BLOCK_SIZE / 8)
			return "span past its block";
		break;
	default:
		return "unknown entry";
	}
	if (it->end - it->p < head + e->n)
		return "entry past the end of the record";
	e->val = it->p + head;
	it->p += head + e->n;
	it->left--;
	return NULL;
}

/**
 * vsmfs_fc_rec_check() - whether a fast-commit record is valid
 * @rec: the record, as found at a cache-line boundary of an area
 * @room: bytes from @rec to the end of the area
 * @count: the number of the last durable commit (vsmfs_jcount_exact())
 * @len: set to the record's length when it is valid
 *
 * Valid: of the commit after @count, a length that fits @room, a multiple
 * of 64 holding its words and entries, its crc32c, entries of known kinds
 * (vsmfs_fc_next()), at most VSMFS_FC_MAX_PTES page table entries, at
 * most one directory's part, of spans only, after the slot's, and at most
 * one unlinked inode's, after the directory's. A reader of an area
 * stops at the first record that is not. Whether what the entries name
 * lies where the layout says is the reader's to check.
 *
 * Return: NULL if valid, otherwise the reason.
 */
const char *vsmfs_fc_rec_check(const struct vsmfs_dfc_rec *rec, u32 room, u64 count, u32 *len)
{
	u32 n = le16_to_cpu(rec->r_len), npte = le16_to_cpu(rec->r_npte), ptes = 0;
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	bool dir = false, gone = false;
	const char *why;

	if (room < sizeof(*rec) || le64_to_cpu(rec->r_count) != count + 1)
		return "not of the commit after the last durable one";
	if (!n || n % 64 || n > room || n > VSMFS_FC_REC_MAX || npte > VSMFS_FC_MAX_ENTRIES ||
	    sizeof(*rec) + 8 * hweight32(le32_to_cpu(rec->r_words)) > n)
		return "length out of range";
	if (crc32c(~0U, (const u8 *)rec + 4, n - 4) != le32_to_cpu(rec->r_crc))
		return "bad checksum";
	vsmfs_fc_iter_init(&it, rec);
	while (!(why = vsmfs_fc_next(&it, &e))) {
		if (gone) {
			return "an entry after the unlinked inode's part";
		} else if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_GONE)) {
			if (!dir)
				return "an unlinked inode's part without a directory's";
			gone = true;
		} else if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR)) {
			if (dir)
				return "two directory parts";
			dir = true;
		} else if ((e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_SPAN)) != dir) {
			return dir ? "not a span in the directory's part" :
				     "a span outside the directory's part";
		} else if (!e.kind && ++ptes > VSMFS_FC_MAX_PTES) {
			return "length out of range";
		}
	}
	if (*why)
		return why;
	*len = n;
	return NULL;
}
