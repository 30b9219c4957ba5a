/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs on-media format, shared verbatim by the kernel module and the
 * user-space tools (mkfs.vsmfs, fsck.vsmfs). Everything here is a fixed
 * width little-endian field; sizes and the offsets an atomicity argument
 * relies on are asserted at the end of the file.
 *
 * Device layout, in 4 KiB blocks, every region block aligned:
 *
 *   0                superblock (struct vsmfs_dsb)
 *   1                backup superblock, or unused (see below)
 *   s_journal_start  journal: superblock, headers, header copies, journal blocks
 *   s_itable_start   inode table (struct vsmfs_dinode slots)
 *   s_imap_start     inode mapping table (i-number -> slot, __le32 each)
 *   s_ptable_start   persistent page table (logical page -> frame, __le64)
 *   s_lbitmap_start  allocation bitmap of logical pages
 *   s_ibitmap_start  allocation bitmap of inode numbers
 *   s_data_start     data frames (2 MiB aligned), s_data_pages of them
 *
 * With VSMFS_FEATURE_INCOMPAT_SB_LAST (every file system mkfs makes now)
 * the backup superblock is the last block of the file system, s_blocks - 1,
 * which the data area leaves free, so that damage to the start of the
 * device cannot take both copies; block 1 is then unused. Without it the
 * backup is block 1 and the data area may reach the last block.
 *
 * Logical page N is mapped to the frame at block s_data_start + ptable[N].
 * Without VSMFS_FEATURE_INCOMPAT_SPARSE there are as many logical pages as
 * frames and the page table is a permutation: every frame backs exactly
 * one logical page. With it there are s_lpages logical pages, more than
 * frames: every frame backs exactly one logical page, and the other
 * logical pages hold VSMFS_PTE_NONE, "no frame". A logical page without a
 * frame reads as zeros; inside a file's run it is a hole of one page. mkfs
 * maps logical page N to frame N below s_data_pages and leaves the rest
 * without frames. Logical page 0 is reserved and never allocated, so an
 * index entry of 0 means "hole".
 */
#ifndef _VSMFS_FORMAT_H
#define _VSMFS_FORMAT_H

#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/build_bug.h>

#define VSMFS_MAGIC		0x464d5356	/* bytes "VSMF" on media */
#define VSMFS_FORMAT_VERSION	1

#define VSMFS_BLOCK_SHIFT	12
#define VSMFS_BLOCK_SIZE	(1U << VSMFS_BLOCK_SHIFT)
#define VSMFS_VSP_SHIFT		21		/* a virtual superpage is 2 MiB */
#define VSMFS_VSP_PAGES		(1U << (VSMFS_VSP_SHIFT - VSMFS_BLOCK_SHIFT))

#define VSMFS_SB_BLOCK		0
#define VSMFS_SB_BACKUP_BLOCK	1	/* without VSMFS_FEATURE_INCOMPAT_SB_LAST */

#define VSMFS_ROOT_INO		1		/* i-number 0 is never used */
#define VSMFS_NAME_LEN		255
#define VSMFS_LINK_MAX		65000		/* hard links to one inode */
#define VSMFS_LABEL_LEN		32

/* s_state */
#define VSMFS_STATE_CLEAN	0x0001		/* unmounted cleanly */
#define VSMFS_STATE_ERROR	0x0002		/* errors found while mounted, see s_error_count */

/* Feature bits. Unknown incompat bits refuse the mount. */
#define VSMFS_FEATURE_COMPAT_MOUNT_OPTS	0x0001	/* s_mount_opts holds default mount options */
#define VSMFS_FEATURE_INCOMPAT_SB_LAST	0x0001	/* backup superblock in the last block */
#define VSMFS_FEATURE_INCOMPAT_SPARSE	0x0002	/* s_lpages logical pages, frames optional */
#define VSMFS_FEATURE_INCOMPAT_FAST_COMMIT 0x0004	/* fast-commit areas in the journal */
#define VSMFS_FEATURE_RO_COMPAT_BADFRAMES 0x0001	/* bad-frame list in block 1 */

#define VSMFS_FEATURE_COMPAT_SUPP	VSMFS_FEATURE_COMPAT_MOUNT_OPTS
#define VSMFS_FEATURE_INCOMPAT_SUPP	(VSMFS_FEATURE_INCOMPAT_SB_LAST | \
					 VSMFS_FEATURE_INCOMPAT_SPARSE | \
					 VSMFS_FEATURE_INCOMPAT_FAST_COMMIT)
#define VSMFS_FEATURE_RO_COMPAT_SUPP	VSMFS_FEATURE_RO_COMPAT_BADFRAMES

/* Smallest device mkfs accepts: room for every region and some data. */
#define VSMFS_MIN_BLOCKS	(16U << (20 - VSMFS_BLOCK_SHIFT))	/* 16 MiB */

#define VSMFS_ERROR_FUNC_LEN	32
#define VSMFS_MOUNT_OPTS_LEN	64	/* s_mount_opts, its NUL included */

/*
 * struct vsmfs_dsb - on-media superblock, at block 0 and its backup (block
 * 1, or the last block with VSMFS_FEATURE_INCOMPAT_SB_LAST)
 *
 * The checksum is crc32c over the bytes before @s_checksum.
 *
 * The error fields record corruption the module found at run time: the
 * module sets VSMFS_STATE_ERROR with the first error and counts every
 * error (saturating); fsck.vsmfs clears them all after a check that finds
 * or leaves no error. Images made before they existed hold zero there.
 *
 * @s_mount_opts holds default mount options, as mount(8) takes them
 * ("errors=continue,data=inplace"), NUL terminated and padded, set with
 * VSMFS_FEATURE_COMPAT_MOUNT_OPTS by vsmfs-admin -o. The module applies
 * them at mount before the options the user gives, which override them. A
 * kernel that does not know the feature ignores them; they are zero
 * without it.
 */
struct vsmfs_dsb {
	__le32	s_magic;		/* VSMFS_MAGIC */
	__le32	s_version;		/* VSMFS_FORMAT_VERSION */
	__le32	s_feature_compat;	/* features any kernel may ignore */
	__le32	s_feature_incompat;	/* features a kernel must know */
	__le32	s_feature_ro_compat;	/* features needed to write */
	__le32	s_block_size;		/* VSMFS_BLOCK_SIZE */
	__le32	s_vsp_pages;		/* pages per virtual superpage */
	__le32	s_inode_size;		/* sizeof(struct vsmfs_dinode) */
	__le64	s_blocks;		/* device blocks the file system spans */
	__le64	s_journal_start;	/* first block of the journal */
	__le64	s_journal_blocks;	/* journal size in blocks */
	__le64	s_itable_start;		/* first block of the inode table */
	__le64	s_itable_blocks;	/* inode table size in blocks */
	__le64	s_imap_start;		/* first block of the inode mapping table */
	__le64	s_imap_blocks;		/* inode mapping table size in blocks */
	__le64	s_ptable_start;		/* first block of the page table */
	__le64	s_ptable_blocks;	/* page table size in blocks */
	__le64	s_lbitmap_start;	/* first block of the logical page bitmap */
	__le64	s_lbitmap_blocks;	/* logical page bitmap size in blocks */
	__le64	s_ibitmap_start;	/* first block of the inode bitmap */
	__le64	s_ibitmap_blocks;	/* inode bitmap size in blocks */
	__le64	s_data_start;		/* first data frame, 2 MiB aligned */
	__le64	s_data_pages;		/* data frames (and logical pages, unless sparse) */
	__le64	s_inodes;		/* inode slots, including unused slot 0 */
	__le64	s_root_ino;		/* i-number of the root directory */
	__le64	s_mkfs_time;		/* seconds since the epoch */
	__le64	s_mount_time;		/* last mount */
	__le64	s_write_time;		/* last superblock write */
	__le32	s_mount_count;		/* mounts since mkfs */
	__le32	s_state;		/* VSMFS_STATE_* */
	__u8	s_uuid[16];		/* file system UUID */
	__u8	s_label[VSMFS_LABEL_LEN];	/* volume label, NUL padded */
	__le32	s_error_count;		/* errors found since the last fsck */
	__le32	s_first_error_line;	/* source line that found the first */
	__le64	s_first_error_time;	/* seconds since the epoch */
	__le64	s_first_error_ino;	/* inode involved, 0 if none */
	__u8	s_first_error_func[VSMFS_ERROR_FUNC_LEN];	/* function, NUL padded */
	__le64	s_last_error_time;	/* the same for the latest error */
	__le64	s_last_error_ino;
	__u8	s_last_error_func[VSMFS_ERROR_FUNC_LEN];
	__le32	s_last_error_line;
	__u8	s_mount_opts[VSMFS_MOUNT_OPTS_LEN];	/* default mount options, NUL padded */
	__le32	s_reserved1;		/* zero */
	__le64	s_lpages;		/* logical pages with ..._SPARSE, else 0 */
	__u8	s_reserved[76];		/* zero */
	__le32	s_checksum;		/* crc32c of the bytes above */
};

/*
 * struct vsmfs_dbadlist - the bad-frame list, block VSMFS_BADLIST_BLOCK
 *
 * Data frames found bad (a memory failure the platform reported while
 * mounted, or a bad block the device listed at mount), as frame numbers
 * relative to s_data_start, in the order they were found, no duplicates.
 * Only with VSMFS_FEATURE_RO_COMPAT_BADFRAMES, which needs
 * VSMFS_FEATURE_INCOMPAT_SB_LAST: block 1 is otherwise unused there, and
 * mkfs zeroes it. A kernel without the feature would hand the frames out
 * again, so it may mount the file system read-only only.
 *
 * A frame in the list is never given to a new logical page: a file page
 * that holds it reads and writes EIO until it is overwritten whole (which
 * gives the page a fresh frame) or punched out; the logical page left
 * holding the frame stays allocated for as long as the file system is
 * mounted, and free in the logical page bitmap.
 *
 * Appending entry i: b_frames[i] stored, flushed and fenced, then the word
 * of @b_magic and @b_count with one 8-byte store, flushed and fenced: a
 * crash leaves the old count or the new one, and no entry below the count
 * torn. The feature flag is set in the superblock after the first entry is
 * durable.
 */
#define VSMFS_BADLIST_BLOCK	1
#define VSMFS_BADLIST_MAGIC	0x44414256	/* bytes "VBAD" on media */
#define VSMFS_BADLIST_MAX	((VSMFS_BLOCK_SIZE - 16) / 8)

struct vsmfs_dbadlist {
	__le32	b_magic;		/* VSMFS_BADLIST_MAGIC */
	__le32	b_count;		/* valid entries in b_frames */
	__le64	b_reserved;		/* zero */
	__le64	b_frames[VSMFS_BADLIST_MAX];	/* bad frames, relative to s_data_start */
};

/*
 * Metadata journal (NJS): the journal region holds, in this order,
 *
 *   block 0                    journal superblock (struct vsmfs_djsb)
 *   blocks 1 .. j_hdr_blocks   journal headers (struct vsmfs_djhdr), one per
 *                              journal block, VSMFS_JH_PER_BLOCK a block
 *   next block                 reserved header-copy region: new values of
 *                              headers GC changes together (up to
 *                              VSMFS_JH_PER_BLOCK), valid while j_hcopy != 0
 *   the rest                   j_blocks journal blocks
 *
 * Header i (its "number") always sits at position i; what moves between
 * headers is the journal block, its write count and home block. The
 * headers form three contiguous areas:
 *
 *   [0, checkpoint)            checkpoint area: committed versions of
 *                              metadata blocks (valid) and holes (invalid)
 *   [checkpoint, commit)       commit area: the committing transaction,
 *                              discarded by recovery
 *   [commit, j_blocks)         free area
 *
 * Headers at or past the checkpoint pointer are free whatever their flags
 * say. Every journal block is named by one header, except after a crash
 * inside a commit, which moves journal blocks between headers one header
 * at a time: a block may then be named by two headers, at most one of them
 * holding a committed version (valid, below the checkpoint pointer), and
 * another by none; recovery gives that one to the other header.
 *
 * A committed home block has at most two valid versions, the latest and
 * an old one. A transaction commits with one 8-byte store of
 * j_checkpoint, which also records where that transaction starts: if a home
 * block has two versions flagged latest (a crash before the previous
 * latest was flagged old), the one at or past that start is the newer.
 */
#define VSMFS_JOURNAL_MAGIC	0x324c4e4a	/* "JNL2" */
#define VSMFS_JH_PER_BLOCK	(VSMFS_BLOCK_SIZE / 16)

/* h_state: flags, header number, write count */
#define VSMFS_JH_USED		0x01	/* f: holds a version or a hole */
#define VSMFS_JH_VALID		0x02	/* v: a committed version of its home block */
#define VSMFS_JH_LATEST		0x04	/* l: the latest version, else the old one */
#define VSMFS_JH_FLAGS		0xff
#define VSMFS_JH_NUM_SHIFT	8
#define VSMFS_JH_NUM_MASK	((1ULL << 28) - 1)
#define VSMFS_JH_WC_SHIFT	36
#define VSMFS_JH_WC_MAX		((1ULL << 28) - 1)	/* write counts saturate */
/* h_map: journal block, home block */
#define VSMFS_JH_JB_MASK	((1ULL << 24) - 1)
#define VSMFS_JH_HOME_SHIFT	24		/* 40 bits: any device block */

/* Largest journal region: journal block numbers are 24 bits. */
#define VSMFS_JOURNAL_MAX_BLOCKS	(1ULL << 24)

/*
 * struct vsmfs_djhdr - journal header, 16 bytes
 *
 * @h_state and @h_map are each changed with one 8-byte store: a flag
 * change (latest to old, valid to invalid) is atomic. Changing which
 * journal block a header maps (a swap) goes through the header-copy
 * region.
 */
struct vsmfs_djhdr {
	__le64	h_state;		/* flags | number << 8 | write count << 36 */
	__le64	h_map;			/* journal block | home block << 24 */
};

/*
 * struct vsmfs_djsb - journal superblock
 */
struct vsmfs_djsb {
	__le32	j_magic;		/* VSMFS_JOURNAL_MAGIC */
	__le32	j_blocks;		/* journal blocks, and headers */
	__le64	j_checkpoint;		/* checkpoint end | last transaction start << 32 */
	__le64	j_commit;		/* end of the commit area: the first free header */
	__le32	j_hdr_blocks;		/* blocks of headers */
	__le32	j_hcopy;		/* header copies to restore, 0 when none */
	__le64	j_sequence;		/* transactions committed since mkfs */
	__le32	j_fc_areas;		/* fast-commit areas, 0 without the feature */
	__le32	j_fc_area_blocks;	/* blocks of each */
	__u8	j_reserved[4048];	/* zero */
};

/*
 * Fast commits (VSMFS_FEATURE_INCOMPAT_FAST_COMMIT). The last j_fc_areas *
 * j_fc_area_blocks blocks of the journal region are fast-commit areas,
 * the rest is laid out as above (vsmfs_journal_geometry() of what is
 * left). An fsync that needs only words of one inode's slot and page
 * table entries to be durable appends a record of their new values
 * (struct vsmfs_dfc_rec) to an area, instead of committing the running
 * transaction; the record belongs to that transaction's commit, whose
 * number it carries. The number of every commit (j_sequence after it) is
 * also kept, its low VSMFS_JCOUNT_BITS bits, in bits of j_checkpoint that
 * journal positions never use, set by the same 8-byte store that commits:
 * j_sequence, stored beside it, may lag one commit behind after a crash,
 * the bits never do. A record is valid iff its crc32c holds and its
 * number is the last durable commit's plus one: the commit that makes
 * its transaction durable makes the record dead at the same time. An
 * area is written from its start, record after record, each starting on
 * a cache line; a reader stops at the first record not valid.
 */
#define VSMFS_JCOUNT_BITS	14
#define VSMFS_JCKPT_POS_MASK	0x01ffffff01ffffffULL	/* positions are at most 2^24 */

/* The commit number bits of a j_checkpoint value. */
static inline __u64 vsmfs_jckpt_count(__u64 state)
{
	return (state >> 25 & 0x7f) | (state >> 57 & 0x7f) << 7;
}

/* @state with its commit number bits set from @count. */
static inline __u64 vsmfs_jckpt_set_count(__u64 state, __u64 count)
{
	return (state & VSMFS_JCKPT_POS_MASK) | (count & 0x7f) << 25 | (count >> 7 & 0x7f) << 57;
}

/*
 * vsmfs_jcount_exact() - the number of the last durable commit
 * @sequence: j_sequence as found, at most one commit behind
 * @state: j_checkpoint as found
 *
 * Return: the number, or @sequence if the bits name neither candidate
 * (a journal reset by fsck.vsmfs).
 */
static inline __u64 vsmfs_jcount_exact(__u64 sequence, __u64 state)
{
	__u64 bits = vsmfs_jckpt_count(state), mask = (1ULL << VSMFS_JCOUNT_BITS) - 1;

	if (((sequence + 1) & mask) == bits)
		return sequence + 1;
	return sequence;
}

/* Default fast-commit areas mkfs makes, and the blocks of each. */
#define VSMFS_FC_AREAS		16
#define VSMFS_FC_AREA_BLOCKS	32
#define VSMFS_FC_MAX_BLOCKS	1024	/* most blocks of all areas */

/*
 * Fast-commit record: page table entries it carries at most (a run of 16
 * pages moved, both halves).
 */
#define VSMFS_FC_MAX_PTES	32
/*
 * The kind of a record's entry is in the top 4 bits of its first word
 * (VSMFS_FC_KIND()); the rest names what it changes:
 *   0  page table entry: logical page; then the entry (2 words);
 *   8  VSMFS_FC_KEY_BITMAP, word of the logical page bitmap; then the bits
 *	recovery sets in it (2 words);
 *   9  VSMFS_FC_KEY_IBITMAP, word of the inode bitmap; then the bits
 *	recovery sets (2 words): the i-number of a create;
 *  10  VSMFS_FC_KEY_DIR, the slot of the directory a create added its
 *	entry to; then the directory's order (as @r_seq), a word whose low
 *	32 bits name words of the directory's slot, those words (3 words and
 *	one per bit): the directory's part, which runs to the end of the
 *	record and holds only spans besides;
 *  11  VSMFS_FC_KEY_SPAN, words of a directory block: block << 9 | first
 *	word, the count less one in bits 48-55; then the words (1 + count
 *	words);
 *  12  VSMFS_FC_KEY_BCLEAR, word of the logical page bitmap; then the
 *	bits recovery clears in it (2 words): pages the inode freed;
 *  13  VSMFS_FC_KEY_GONE, the slot of an inode an unlink in the
 *	directory left with no links; then the inode's order (as @r_seq),
 *	a word whose low 32 bits name words of its slot, those words, as
 *	the unlink left them (3 words and one per bit): the unlinked inode's
 *	part, after the directory's spans; orphan cleanup at mount frees
 *	the inode.
 */
#define VSMFS_FC_KIND(key)	((key) >> 60)
#define VSMFS_FC_KEY_BITMAP	(1ULL << 63)
#define VSMFS_FC_KEY_IBITMAP	(9ULL << 60)
#define VSMFS_FC_KEY_DIR	(10ULL << 60)
#define VSMFS_FC_KEY_SPAN	(11ULL << 60)
#define VSMFS_FC_KEY_BCLEAR	(12ULL << 60)
#define VSMFS_FC_KEY_GONE	(13ULL << 60)
#define VSMFS_FC_SPAN_MAX	64	/* words a span holds at most */

/*
 * struct vsmfs_dfc_rec - fast-commit record, 32 bytes of header
 *
 * Followed by the words of the inode's slot named in @r_words, lowest
 * first, then @r_npte entries (above), then zeros up to @r_len: new values
 * of words of the inode table, the page table and the blocks of a
 * directory, and bits of the bitmaps, which recovery stores over (sets in,
 * clears in) what the last durable commit left. The record has up to three
 * parts: its slot's (the words, the page table entries, the bits), if it
 * has VSMFS_FC_KEY_DIR its directory's, and after that, if it has
 * VSMFS_FC_KEY_GONE, an unlinked inode's. Each part applies in the order
 * of its slot's records of the transaction: @r_seq for the first, the
 * order its key gives for the others; the entries of a part in their
 * order. No two slots' parts name the same word, but for bits of the
 * bitmaps, which commute: no page one slot's part clears is set by
 * another's (a page freed is not taken again before the commit); a
 * directory's part names words of its slot and of its blocks.
 */
struct vsmfs_dfc_rec {
	__le32	r_crc;			/* crc32c of the r_len - 4 bytes after it */
	__le16	r_len;			/* bytes, a multiple of 64, header included */
	__le16	r_npte;			/* entries */
	__le64	r_count;		/* the commit number it belongs to */
	__le64	r_seq;			/* order among the slot's records */
	__le32	r_slot;			/* the inode's slot in the inode table */
	__le32	r_words;		/* bit w: word w of the slot follows */
};

/* Bytes of a record at most, and of its entries. */
#define VSMFS_FC_REC_MAX	1024
#define VSMFS_FC_MAX_ENTRIES	40
/* A slot's part of two-word entries fits: its words, its entries. */
static_assert(sizeof(struct vsmfs_dfc_rec) + 8 * 32 + 16 * VSMFS_FC_MAX_ENTRIES <=
	      VSMFS_FC_REC_MAX);

/*
 * vsmfs_journal_geometry() - headers and journal blocks of a journal region
 * @journal_blocks: size of the journal region in blocks (at least 16)
 * @hdr_blocks: set to the number of header blocks
 *
 * Return: the number of journal blocks (and headers).
 */
static inline __u32 vsmfs_journal_geometry(__u64 journal_blocks, __u32 *hdr_blocks)
{
	__u64 avail = journal_blocks - 2;	/* superblock, header copies */
	__u64 n = avail * VSMFS_JH_PER_BLOCK / (VSMFS_JH_PER_BLOCK + 1);

	while (n + (n + VSMFS_JH_PER_BLOCK - 1) / VSMFS_JH_PER_BLOCK > avail)
		n--;
	*hdr_blocks = (__u32)((n + VSMFS_JH_PER_BLOCK - 1) / VSMFS_JH_PER_BLOCK);
	return (__u32)n;
}

/* Inode index: direct entries, then single and double indirect blocks. */
#define VSMFS_NDIRECT		8
#define VSMFS_IND_ENTRIES	(VSMFS_BLOCK_SIZE / 8)
#define VSMFS_INLINE_LEN	(VSMFS_NDIRECT * 8 + 16)	/* fast symlink */

/* i_flags */
#define VSMFS_IFLAG_TAIL_RELEASED	0x0001	/* tail of last VSP returned (ZFDM) */
/*
 * A truncation too large for one transaction is under way: i_size is the
 * new size, the pages past it are still owned and not yet zeroed, and the
 * next read-write mount frees them (set by the first part, cleared by the
 * last; only a crash between two parts leaves it on PM).
 */
#define VSMFS_IFLAG_TRUNCATING		0x0002
/*
 * Attribute flags users set with chattr (FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR).
 * Module versions that predate them keep them as they are, unenforced.
 */
#define VSMFS_IFLAG_IMMUTABLE		0x0100	/* no change, no new link, no removal */
#define VSMFS_IFLAG_APPEND		0x0200	/* writes only append; no removal */
#define VSMFS_IFLAG_NODUMP		0x0400	/* left out by dump(8) */
#define VSMFS_IFLAG_NOATIME		0x0800	/* access time not updated */
#define VSMFS_IFLAG_USER		(VSMFS_IFLAG_IMMUTABLE | VSMFS_IFLAG_APPEND | \
					 VSMFS_IFLAG_NODUMP | VSMFS_IFLAG_NOATIME)
#define VSMFS_IFLAG_ALL			(VSMFS_IFLAG_TAIL_RELEASED | VSMFS_IFLAG_TRUNCATING | \
					 VSMFS_IFLAG_USER)

/*
 * struct vsmfs_dinode - on-media inode, one slot of the inode table
 *
 * For regular files an index entry maps one 2 MiB piece of the file: the
 * low 40 bits are the first logical page of a contiguous run, bits 48..57
 * the number of pages in the run (1..512) holding file pages from the start
 * of that piece. For directories and long symlinks an entry maps one 4 KiB
 * block to its logical page.
 *
 * @i_parent names the parent of a directory, for file handles that outlive
 * the dentry cache (NFS export, open_by_handle_at()). It is 0 in any other
 * inode, and in a directory that a module version predating it last wrote
 * (such a version clears it): a hint, then unknown, never stale.
 */
struct vsmfs_dinode {
	__le16	i_mode;			/* file type and permissions */
	__le16	i_reserved0;		/* zero */
	__le32	i_nlink;		/* hard links */
	__le32	i_uid;			/* owner */
	__le32	i_gid;			/* group */
	__le32	i_flags;		/* VSMFS_IFLAG_* */
	__le32	i_generation;		/* NFS-style generation */
	__le64	i_size;			/* bytes */
	__le64	i_pages;		/* logical pages owned, index blocks included */
	__le64	i_atime;		/* seconds */
	__le64	i_mtime;
	__le64	i_ctime;
	__le64	i_crtime;
	__le32	i_atime_ns;		/* nanoseconds */
	__le32	i_mtime_ns;
	__le32	i_ctime_ns;
	__le32	i_crtime_ns;
	__le32	i_rdev;			/* device number (new_encode_dev) */
	__le32	i_tail_key;		/* 1 + key of the run owning its VSP's tail, 0 if none */
	__le64	i_xattr;		/* logical page of the xattr block, 0 if none */
	union {
		struct {
			__le64	i_direct[VSMFS_NDIRECT];
			__le64	i_ind;		/* single indirect index block */
			__le64	i_dind;		/* double indirect index block */
		};
		__u8	i_inline[VSMFS_INLINE_LEN];	/* fast symlink target */
	};
	__le64	i_parent;		/* directory: i-number of its parent, or 0 */
	__u8	i_reserved2[64];	/* zero */
};

#define VSMFS_INODE_SIZE	256
#define VSMFS_INODES_PER_BLOCK	(VSMFS_BLOCK_SIZE / VSMFS_INODE_SIZE)

/* File index entry encoding. */
#define VSMFS_IDX_LPN_MASK	((1ULL << 40) - 1)
#define VSMFS_IDX_COUNT_SHIFT	48

/*
 * Page table entry: frame number relative to s_data_start, or
 * VSMFS_PTE_NONE for a logical page without a frame (sparse file systems).
 * With VSMFS_FEATURE_INCOMPAT_SPARSE, VSMFS_PTE_UNWRITTEN in an entry with
 * a frame marks a page fallocate() allocated (zeroed) and nothing wrote
 * since: it reads as zeros, and FIEMAP calls it unwritten. Only pages of
 * files carry it: a page is freed with the flag clear.
 */
#define VSMFS_PTE_FRAME_MASK	((1ULL << 40) - 1)
#define VSMFS_PTE_NONE		VSMFS_PTE_FRAME_MASK
#define VSMFS_PTE_UNWRITTEN	(1ULL << 62)
#define VSMFS_PTES_PER_BLOCK	(VSMFS_BLOCK_SIZE / 8)
/* A VSP's entries fill one page table block: a run's entries lie in one. */
static_assert(VSMFS_VSP_PAGES == VSMFS_PTES_PER_BLOCK);
/* Most logical pages: an index entry names one in 40 bits. */
#define VSMFS_MAX_LPAGES	(1ULL << 40)

/*
 * struct vsmfs_ddirent - directory entry
 *
 * Entries never cross a block; @d_rec_len spans free space after an entry,
 * and an entry with @d_ino 0 is free. Entries never move, so the position
 * of an entry is a stable readdir offset.
 */
struct vsmfs_ddirent {
	__le64	d_ino;			/* i-number, 0 if free */
	__le16	d_rec_len;		/* bytes to the next entry */
	__u8	d_name_len;		/* name length */
	__u8	d_type;			/* DT_* */
	__le32	d_hash;			/* vsmfs_name_hash() of the name */
	char	d_name[];		/* name, not NUL terminated */
};

#define VSMFS_DIRENT_BASE	16
#define VSMFS_DIRENT_ALIGN	8

/*
 * Extended attributes: one 4 KiB block per inode, a metadata block reached
 * through the page table like directory blocks, named by the inode's
 * @i_xattr (0 when the inode has no attributes; the block is freed when
 * the last attribute goes). Layout:
 *
 *   struct vsmfs_dxattr_hdr          32 bytes
 *   struct vsmfs_dxattr_entry + name + value, padded to 4 bytes, repeated
 *                                    @x_count times, packed, in no order
 *   zero                             up to the end of the block
 *
 * @x_used counts the bytes from the start of the block to the end of the
 * last entry. A name is stored without its namespace prefix ("user." etc.),
 * which @e_name_index encodes; POSIX ACLs have an empty name. All names and
 * values of one inode, each with 4 bytes of entry header and padded to 4
 * bytes, share VSMFS_XATTR_SPACE bytes.
 */
#define VSMFS_XATTR_MAGIC	0x52545841	/* "AXTR" */

/* e_name_index: the namespace of an attribute */
#define VSMFS_XATTR_INDEX_USER		1	/* user. */
#define VSMFS_XATTR_INDEX_TRUSTED	2	/* trusted. */
#define VSMFS_XATTR_INDEX_SECURITY	3	/* security. */
#define VSMFS_XATTR_INDEX_ACL_ACCESS	4	/* system.posix_acl_access */
#define VSMFS_XATTR_INDEX_ACL_DEFAULT	5	/* system.posix_acl_default */

/*
 * struct vsmfs_dxattr_hdr - header of an extended attribute block
 */
struct vsmfs_dxattr_hdr {
	__le32	x_magic;		/* VSMFS_XATTR_MAGIC */
	__le16	x_count;		/* entries that follow */
	__le16	x_used;			/* bytes in use, this header included */
	__le64	x_ino;			/* i-number of the owner */
	__u8	x_reserved[16];		/* zero */
};

/*
 * struct vsmfs_dxattr_entry - one extended attribute
 *
 * Followed by @e_name_len bytes of name (not NUL terminated) and
 * @e_value_len bytes of value; the next entry starts at the next multiple
 * of VSMFS_XATTR_ALIGN.
 */
struct vsmfs_dxattr_entry {
	__u8	e_name_index;		/* VSMFS_XATTR_INDEX_* */
	__u8	e_name_len;		/* name bytes, prefix not included */
	__le16	e_value_len;		/* value bytes */
	__u8	e_name[];		/* name, then value */
};

#define VSMFS_XATTR_ALIGN	4
#define VSMFS_XATTR_SPACE	(VSMFS_BLOCK_SIZE - sizeof(struct vsmfs_dxattr_hdr))

/*
 * POSIX ACL encoding, the value of the ACL attributes: a struct
 * vsmfs_dacl_hdr followed by one struct vsmfs_dacl_entry per ACL entry, in
 * the order the kernel keeps them (sorted by tag, then id). The tags and
 * permission bits have the values of the Linux ACL API.
 */
#define VSMFS_ACL_VERSION	1

#define VSMFS_ACL_USER_OBJ	0x01	/* owner */
#define VSMFS_ACL_USER		0x02	/* named user, e_id is the uid */
#define VSMFS_ACL_GROUP_OBJ	0x04	/* owning group */
#define VSMFS_ACL_GROUP		0x08	/* named group, e_id is the gid */
#define VSMFS_ACL_MASK		0x10	/* upper bound for group class */
#define VSMFS_ACL_OTHER		0x20	/* everyone else */

#define VSMFS_ACL_PERM_MASK	0x07	/* read 4, write 2, execute 1 */

/*
 * struct vsmfs_dacl_hdr - header of an on-media ACL
 */
struct vsmfs_dacl_hdr {
	__le32	a_version;		/* VSMFS_ACL_VERSION */
};

/*
 * struct vsmfs_dacl_entry - one ACL entry
 */
struct vsmfs_dacl_entry {
	__le16	e_tag;			/* VSMFS_ACL_* */
	__le16	e_perm;			/* VSMFS_ACL_PERM_MASK bits */
	__le32	e_id;			/* uid or gid for named entries, else 0 */
};

static_assert(sizeof(struct vsmfs_dsb) == 512);
static_assert(offsetof(struct vsmfs_dsb, s_checksum) == 508);
static_assert(offsetof(struct vsmfs_dsb, s_error_count) == 248);
static_assert(offsetof(struct vsmfs_dsb, s_first_error_time) % 8 == 0);
static_assert(offsetof(struct vsmfs_dsb, s_mount_opts) == 356);
static_assert(offsetof(struct vsmfs_dsb, s_last_error_time) % 8 == 0);
static_assert(offsetof(struct vsmfs_dsb, s_lpages) == 424);
static_assert(sizeof(struct vsmfs_djsb) == VSMFS_BLOCK_SIZE);
static_assert(offsetof(struct vsmfs_djsb, j_checkpoint) % 8 == 0);	/* 8-byte atomic commit */
static_assert(sizeof(struct vsmfs_dfc_rec) == 32);
static_assert(VSMFS_INODE_SIZE / 8 == 32);	/* r_words */
static_assert(offsetof(struct vsmfs_djsb, j_hcopy) % 4 == 0);
static_assert(sizeof(struct vsmfs_djhdr) == 16);
static_assert(VSMFS_BLOCK_SIZE % sizeof(struct vsmfs_djhdr) == 0);
static_assert(sizeof(struct vsmfs_dinode) == VSMFS_INODE_SIZE);
static_assert(offsetof(struct vsmfs_dinode, i_direct) % 8 == 0);
static_assert(offsetof(struct vsmfs_dinode, i_size) % 8 == 0);
static_assert(offsetof(struct vsmfs_dinode, i_parent) == 184);
static_assert(sizeof(struct vsmfs_ddirent) == VSMFS_DIRENT_BASE);
static_assert(VSMFS_BLOCK_SIZE % VSMFS_INODE_SIZE == 0);
static_assert(sizeof(struct vsmfs_dxattr_hdr) == 32);
static_assert(sizeof(struct vsmfs_dxattr_entry) == 4);
static_assert(sizeof(struct vsmfs_dxattr_hdr) % VSMFS_XATTR_ALIGN == 0);
static_assert(VSMFS_BLOCK_SIZE <= 0xffff);	/* x_used, e_value_len are 16 bits */
static_assert(sizeof(struct vsmfs_dacl_hdr) == 4);
static_assert(sizeof(struct vsmfs_dacl_entry) == 8);
static_assert(sizeof(struct vsmfs_dbadlist) == VSMFS_BLOCK_SIZE);
/* Magic and count: one 8-byte store. */
static_assert(offsetof(struct vsmfs_dbadlist, b_count) == 4);

#endif /* _VSMFS_FORMAT_H */
