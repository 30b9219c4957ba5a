// SPDX-License-Identifier: GPL-2.0
/*
 * fsck.vsmfs - check and repair a vsmfs file system on an unmounted pmem
 * device or image file.
 *
 * The check is always complete (there is no "clean, skipped" shortcut) and
 * runs in passes:
 *
 *   1. superblock and backup superblock (shared verifier, layout recomputed)
 *   2. journal: superblock, headers, committed versions not yet written home,
 *      then the bad-frame list (with the badframes feature)
 *   3. persistent page table: every frame backs exactly one logical page (a
 *      permutation, unless the file system is sparse: then the other
 *      logical pages have no frame)
 *   4. inode mapping table: a permutation of the inode slots
 *   5. every inode: mode, flags, sizes, index entries, pages owned
 *   6. every directory block: record chain, names, hash, types, references
 *   7. connectivity, directory hard links, link counts, orphans, the
 *      parent recorded in each directory
 *   8. logical page bitmap and inode bitmap against what is in use; on a
 *      sparse file system, frames that back no logical page (space leaked);
 *      file pages on a bad frame
 *
 * A block device is opened exclusively (a mounted device is refused) and
 * read and written with O_DIRECT: the module writes the device through DAX,
 * so the block device's page cache may hold stale copies.
 *
 * Repairs (with -y, or -p for the automatic subset) are limited to what can
 * be derived from the rest of the file system: the journal is replayed as a
 * mount would, the primary or backup superblock is restored from the other
 * copy, bitmaps, link counts and page counts are recomputed, orphan
 * inodes are freed, frames leaked on a sparse file system are given to
 * free logical pages without one, a damaged bad-frame list keeps its valid
 * entries, and a file page on a bad frame is given a zeroed frame of a
 * free logical page, which keeps the bad one. Nothing else is rebuilt. A
 * repair that frees anything (clearing bitmap bits, lowering a link count,
 * freeing an orphan, giving a leaked frame away) is only made when no
 * structural problem remains, so that a damaged directory, index or page
 * table can never cause live data to be freed; a file page takes the frame
 * of a free logical page only when the free logical pages are known.
 *
 * Exit status as in fsck(8): 0 no errors, 1 errors corrected, 4 errors left
 * uncorrected (ORed with 1 when some were corrected), 8 operational error,
 * 16 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fs/vsmfs/verify.h"
#include "../fs/vsmfs/jcore.h"
#include "tools.h"

#define EXIT_FIXED		1
#define EXIT_UNCORRECTED	4

#define BITS_PER_BLK	(VSMFS_BLOCK_SIZE * 8ULL)
#define IDX_COUNT_MASK	(0x3ffULL << VSMFS_IDX_COUNT_SHIFT)
#define MAX_MESSAGES	1000

/* File types as directory entries store them (DT_*). */
enum { T_FIFO = 1, T_CHR = 2, T_DIR = 4, T_BLK = 6, T_REG = 8, T_LNK = 10, T_SOCK = 12 };

enum run_mode { RUN_CHECK, RUN_YES, RUN_PREEN };

/* Which runs may repair a problem; FIX_FREES marks repairs that free. */
#define FIX_NONE	0x0
#define FIX_YES		0x1	/* -y only */
#define FIX_PREEN	0x3	/* -y and -p */
#define FIX_FREES	0x10

enum istate { I_FREE, I_USED, I_UNKNOWN };

struct ino_info {
	u8	state;		/* enum istate */
	u8	dtype;		/* T_* of an inode in use, 0 if the mode is invalid */
	u8	reach;		/* directories: 0 unknown, 1 reachable, 2 not, 3 on a walk */
	bool	bad;		/* the inode itself is damaged */
	u32	refs;		/* directory entries naming it */
	u32	subdirs;	/* directories: entries naming a directory */
	u64	slot;		/* inode table slot */
	u64	parent;		/* directories: the directory holding its entry */
	u64	entries;	/* directories: live entries */
	u64	pages;		/* logical pages found in its index that have a frame */
};

static enum run_mode run = RUN_CHECK;
static int verbose;

static struct vsmfs_dsb sb;		/* the superblock checked against */
static struct vsmfs_layout L;
static bool sb_write;			/* rewrite both superblock copies */

static u64 nfixed, nleft, nfixable, nstruct, nshown, nhidden;
/* Orphans of a file system not cleanly unmounted, left by a check (-n). */
static u64 norphans;

/*
 * Damage that hides part of the picture: the owners of some pages, or some
 * directory entries, could not be found. Checks that need the whole
 * picture (leaked pages; link counts, orphans, connectivity) are skipped.
 */
static bool owners_incomplete, dirs_incomplete;

static u8 *itable, *itable_dirty;
static __le32 *imap;
static __le64 *ptable;
static u8 *lbitmap, *lbitmap_dirty, *ibitmap, *ibitmap_dirty;
static struct ino_info *ii;
static u32 *owner;			/* logical page -> owning inode */
static u8 *multi;			/* logical pages owned more than once */
static u8 *lpn_bad;			/* logical pages with a bad or shared frame */
static u8 *ptable_dirty;
static u64 *unused;			/* sparse: frames backing no logical page */
static u64 nunused;
static bool ptable_damaged;		/* the page table pass found a problem */

/* What a page on a bad frame holds, for a message (bad_names). */
enum { BP_DATA, BP_TAIL, BP_DIR, BP_INDEX, BP_XATTR, BP_SYMLINK };

static const char * const bad_names[] = {
	[BP_DATA] = "data page",
	[BP_TAIL] = "page of the reserved tail",
	[BP_DIR] = "directory block",
	[BP_INDEX] = "index block",
	[BP_XATTR] = "xattr block",
	[BP_SYMLINK] = "symlink block",
};

/* A page of a regular file on a bad frame, repaired after the bitmap pass. */
struct bad_page {
	u64	ino;
	u64	lpn;
	u64	off;		/* byte offset in the file */
	u8	kind;		/* BP_DATA or BP_TAIL */
};

static bool badlist_on;			/* VSMFS_FEATURE_RO_COMPAT_BADFRAMES, list read */
static struct vsmfs_dbadlist *badlist;	/* block 1, repaired in place */
static bool badlist_dirty;
static u8 *badframe;			/* frames the list names (its valid entries) */
static u64 nbadframes;
static struct bad_page *bad_pages;
static u64 nbad_pages, bad_pages_cap;

static void sbit(u8 *map, u64 n, bool v)
{
	if (v)
		map[n / 8] |= (u8)(1U << (n % 8));
	else
		map[n / 8] &= (u8)~(1U << (n % 8));
}

static void msg_prefix(void)
{
	if (run == RUN_PREEN)
		printf("%s: ", img.path);
}

static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void info(const char *fmt, ...)
{
	va_list ap;

	msg_prefix();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * Report a problem. @fix says which runs may repair it. Returns true when
 * the caller is to repair it now.
 */
static bool problem(int fix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool problem(int fix, const char *fmt, ...)
{
	bool allowed = (run == RUN_YES && (fix & FIX_YES)) ||
		       (run == RUN_PREEN && (fix & FIX_PREEN) == FIX_PREEN);
	bool held = allowed && (fix & FIX_FREES) && nstruct;
	bool repair = allowed && !held;
	va_list ap;

	if (repair)
		nfixed++;
	else
		nleft++;
	if (!repair && (fix & FIX_YES))
		nfixable++;
	if (!(fix & FIX_YES))
		nstruct++;
	if (nshown >= MAX_MESSAGES) {
		nhidden++;
		return repair;
	}
	nshown++;
	msg_prefix();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (repair)
		fputs(": repaired", stdout);
	else if (held)
		fputs(" (not repaired while other errors remain)", stdout);
	else if (run == RUN_PREEN && (fix & FIX_YES))
		fputs(" (not repaired in preen mode: run fsck.vsmfs -y)", stdout);
	putchar('\n');
	return repair;
}

static void write_blocks(u64 blk, u64 count, const void *buf)
{
	dev_io(true, blk, count, (void *)buf);
}

static void dev_sync(void)
{
	if (fsync(img.fd))
		fatal("%s: fsync: %s", img.path, strerror(errno));
}

static const char *type_name(u8 t)
{
	switch (t) {
	case T_REG: return "regular file";
	case T_DIR: return "directory";
	case T_LNK: return "symlink";
	case T_CHR: return "character device";
	case T_BLK: return "block device";
	case T_FIFO: return "fifo";
	case T_SOCK: return "socket";
	}
	return "invalid type";
}

/* A name fit to print: non-printable bytes shown as '?'. */
static const char *show_name(const char *name, unsigned int len)
{
	static char buf[VSMFS_NAME_LEN + 1];
	unsigned int i;

	for (i = 0; i < len && i < VSMFS_NAME_LEN; i++)
		buf[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
	buf[i] = 0;
	return buf;
}

/* ---- pass 1: superblocks ---- */

/*
 * Returns false when no superblock can be used. Unlike mount, a primary
 * without the vsmfs magic (the start of the device overwritten) is
 * restored from the backup too, if one is found where mkfs puts it
 * (vsmfs_sb_backup_guess()) and names that place as its own.
 */
static bool check_super(void)
{
	u8 *blk = xalloc(VSMFS_BLOCK_SIZE);
	struct vsmfs_dsb *p = xalloc(sizeof(*p)), *b = (struct vsmfs_dsb *)blk;
	const char *pw, *bw = NULL, *why;
	bool magic;
	u64 i, at;

	dev_io(false, VSMFS_SB_BLOCK, 1, blk);
	memcpy(p, blk, sizeof(*p));
	pw = vsmfs_sb_check(p, img.blocks);
	magic = le32_to_cpu(p->s_magic) == VSMFS_MAGIC;

	if (!pw) {
		sb = *p;
		vsmfs_layout_of_sb(&L, &sb);
		dev_io(false, L.sb_backup, 1, blk);
		bw = vsmfs_sb_backup_check(b, L.sb_backup, img.blocks);
		if (memcmp(p, b, sizeof(*p)) &&
		    problem(FIX_PREEN, "backup superblock (block %" PRIu64
			    ") differs from the primary%s%s", L.sb_backup, bw ? ": " : "",
			    bw ? bw : ""))
			sb_write = true;
		goto found;
	}
	for (i = 0; i < 2; i++) {
		const char *w;

		at = vsmfs_sb_backup_guess(img.blocks, (int)i);
		dev_io(false, at, 1, blk);
		w = vsmfs_sb_backup_check(b, at, img.blocks);
		if (!w) {
			/* A torn update (bad checksum) is what mount itself repairs. */
			bool torn = magic && le32_to_cpu(p->s_checksum) != vsmfs_sb_csum(p);

			sb = *b;
			vsmfs_layout_of_sb(&L, &sb);
			if (problem(torn ? FIX_PREEN : FIX_YES,
				    "primary superblock: %s; the backup (block %" PRIu64
				    ") is valid and is used", pw, at))
				sb_write = true;
			goto found;
		}
		/* Report the copy that looks like a superblock at all. */
		if (!bw || le32_to_cpu(b->s_magic) == VSMFS_MAGIC) {
			if (le32_to_cpu(b->s_magic) == VSMFS_MAGIC)
				magic = true;
			bw = w;
		}
	}
	if (!magic)
		fatal("%s: no vsmfs file system found (%s)", img.path, pw);
	problem(FIX_NONE, "superblock: %s; backup superblock: %s", pw, bw);
	free(blk);
	free(p);
	return false;
found:
	free(blk);
	free(p);

	if (le32_to_cpu(sb.s_feature_ro_compat) & ~VSMFS_FEATURE_RO_COMPAT_SUPP)
		fatal("%s: unknown read-only compatible features 0x%x: cannot check", img.path,
		      le32_to_cpu(sb.s_feature_ro_compat) & ~VSMFS_FEATURE_RO_COMPAT_SUPP);
	for (i = 0; i < sizeof(sb.s_reserved); i++)
		if (sb.s_reserved[i])
			break;
	if (i < sizeof(sb.s_reserved))
		problem(FIX_NONE, "superblock: reserved byte %" PRIu64 " is not zero", i);
	if (sb.s_reserved1)
		problem(FIX_NONE, "superblock: reserved field before s_lpages is not zero");
	/* Mount refuses what it cannot parse; dropping the defaults is safe. */
	why = vsmfs_sb_mount_opts_check(&sb);
	if (why && problem(FIX_YES, "superblock: %s (dropped)", why)) {
		memset(sb.s_mount_opts, 0, sizeof(sb.s_mount_opts));
		sb.s_feature_compat = cpu_to_le32(le32_to_cpu(sb.s_feature_compat) &
						  ~VSMFS_FEATURE_COMPAT_MOUNT_OPTS);
		sb_write = true;
	}
	if (verbose && !why && sb.s_mount_opts[0])
		info("superblock: default mount options %s", (const char *)sb.s_mount_opts);
	if (verbose)
		info("superblock: %" PRIu64 " blocks, %" PRIu64 " inodes, %" PRIu64
		     " logical pages, %" PRIu64 " frames%s, journal %" PRIu64 " blocks",
		     L.blocks, L.inodes, L.lpages, L.data_pages, L.sparse ? " (sparse)" : "",
		     L.journal_blocks);
	return true;
}

/* ---- pass 2: journal ---- */

/* Zero the fast-commit areas of @j: no record there can become valid. */
static void zero_fc_areas(const struct journal *j)
{
	u64 blocks = (u64)j->s.fc_areas * j->s.fc_area_blocks;
	u8 *zero;

	if (!blocks)
		return;
	zero = xalloc(blocks << VSMFS_BLOCK_SHIFT);
	write_blocks(L.journal_start + j->s.fc_start, blocks, zero);
	dev_sync();
	free(zero);
}

/*
 * The journal as recovery at mount sees it (journal_load()): header copies
 * of an interrupted update restored, the commit area discarded, the latest
 * valid version of each block to be written home (of two flagged latest,
 * the one inside the last transaction), then the valid fast-commit
 * records applied over them. "-n" checks the file system through those
 * versions and records; a repair writes them home and empties the
 * journal, which also makes the records dead, as the replay at mount
 * does. Records alone are no error: mount replays them.
 */
static void check_journal(void)
{
	bool feature = le32_to_cpu(sb.s_feature_incompat) & VSMFS_FEATURE_INCOMPAT_FAST_COMMIT;
	struct journal j;
	u32 i, uncommitted, nrec;
	bool loaded;
	u64 count;

	loaded = journal_load(&j, &L);
	/*
	 * Mount lays the journal out by its superblock: the superblock of
	 * the file system must say the same, or the journal is not read.
	 */
	if ((loaded || j.stage != J_SUPER) && feature != !!j.s.fc_areas) {
		problem(FIX_NONE, "journal superblock (block %" PRIu64 "): %u fast-commit areas %s"
			" the fast_commit feature", L.journal_start, j.s.fc_areas,
			feature ? "with" : "without");
		goto out;
	}
	if (!loaded) {
		problem(FIX_NONE, "%s", journal_problem(&j, &L));
		goto out;
	}
	/* Nothing else is wrong: nothing keeps the reserved bytes from being zeroed. */
	if (j.sb_why &&
	    problem(FIX_YES, "journal superblock (block %" PRIu64 "): %s", L.journal_start,
		    j.sb_why)) {
		memset(j.jsb->j_reserved, 0, sizeof(j.jsb->j_reserved));
		write_blocks(L.journal_start, 1, j.jsb);
		dev_sync();
	}
	if (verbose && j.s.fc_areas)
		info("journal: %u fast-commit areas of %u blocks from block %" PRIu64 ", %u valid"
		     " records (commit %" PRIu64 ")", j.s.fc_areas, j.s.fc_area_blocks,
		     L.journal_start + j.s.fc_start, j.nrec, j.s.count + 1);
	/*
	 * Mount replays no record when one names what the file system has
	 * not, and refuses the journal: the records are dropped (the file
	 * system without them is sound).
	 */
	if (j.fc_why &&
	    problem(FIX_YES, "journal: fast-commit area %u, record at %u: %s: mount refuses the"
		    " journal and replays none of the %u records of commit %" PRIu64,
		    fc_area(&j, &j.rec[j.fc_at]), fc_offset(&j, &j.rec[j.fc_at]), j.fc_why,
		    j.nrec, j.s.count + 1)) {
		zero_fc_areas(&j);
		j.nrec = 0;
		j.fc_why = NULL;
	}
	nrec = j.fc_why ? 0 : j.nrec;
	journal_overlay(&j, &L);
	uncommitted = j.s.commit > j.s.ckpt ? (u32)j.s.commit - j.s.ckpt : 0;
	if (!j.nver && !j.s.hcopy && j.s.commit <= j.s.ckpt && !j.nremap)
		goto records;
	if (problem(FIX_PREEN, "journal: %u committed blocks not yet written home (replay needed)"
		    "; %u header copies, %u uncommitted blocks, %u journal blocks named twice",
		    j.nver, j.s.hcopy, uncommitted, j.nremap)) {
		/*
		 * As a checkpoint: blocks home and durable (with the words
		 * of the records), then the headers (copies restored), then
		 * the journal emptied. Records replayed, that commits them
		 * as mount does, with the next commit number: they are dead
		 * from then on. Zeroing the areas after that leaves no
		 * record a later count could make valid again. Records
		 * mount refuses and this run does not drop stay as they
		 * are, valid: j_sequence is the number they follow.
		 */
		for (i = 0; i < img.ov_count; i++)
			write_blocks(img.ov_home[i], 1,
				     img.ov_data + ((u64)i << VSMFS_BLOCK_SHIFT));
		dev_sync();
		write_blocks(L.journal_start + 1, j.s.hdr_blocks, j.hdr);
		dev_sync();
		count = j.s.count + (nrec ? 1 : 0);
		/* The commit number's bits too: j_sequence alone is not exact. */
		j.jsb->j_checkpoint = cpu_to_le64(j.s.fc_areas ? vsmfs_jckpt_set_count(0, count) : 0);
		j.jsb->j_commit = 0;
		j.jsb->j_hcopy = 0;
		j.jsb->j_sequence = cpu_to_le64(count);
		write_blocks(L.journal_start, 1, j.jsb);
		dev_sync();
		if (!j.fc_why)
			zero_fc_areas(&j);
		if (nrec)
			info("journal: %u fast-commit records of commit %" PRIu64 " replayed", nrec,
			     count);
		/* The home blocks now hold what the overlay did. */
		img.ov_count = 0;
		goto out;
	}
records:
	if (nrec)
		info("journal: %u fast-commit records of commit %" PRIu64 " to replay at mount",
		     nrec, j.s.count + 1);
out:
	journal_free(&j);
}

/* ---- pass 2b: bad-frame list ---- */

/*
 * The list of bad frames in block 1 (struct vsmfs_dbadlist), with the
 * badframes feature, which needs sb_last (block 1 is the backup
 * superblock without it). Its valid entries, frames below s_data_pages
 * named once, are the bad frames the rest of the check knows; a repair
 * keeps them, in their order, and drops the others. The feature is never
 * dropped: a kernel without it would hand the frames out again.
 */
static void check_badlist(void)
{
	u64 count, i, n = 0, max = VSMFS_BADLIST_MAX;
	struct vsmfs_dbadlist *b;
	u64 *kept;
	u32 magic;
	bool fix = false;

	if (!(le32_to_cpu(sb.s_feature_ro_compat) & VSMFS_FEATURE_RO_COMPAT_BADFRAMES))
		return;
	if (!(le32_to_cpu(sb.s_feature_incompat) & VSMFS_FEATURE_INCOMPAT_SB_LAST)) {
		problem(FIX_NONE, "superblock: the badframes feature without sb_last: block %d"
			" holds the backup superblock, not a bad-frame list", VSMFS_BADLIST_BLOCK);
		return;
	}
	badlist = xalloc(VSMFS_BLOCK_SIZE);
	b = badlist;
	badframe = xalloc(DIV_ROUND_UP(L.data_pages, 8));
	kept = xalloc(sizeof(b->b_frames));
	badlist_on = true;
	read_blocks(VSMFS_BADLIST_BLOCK, 1, b);
	magic = le32_to_cpu(b->b_magic);
	count = le32_to_cpu(b->b_count);
	if (magic != VSMFS_BADLIST_MAGIC &&
	    problem(FIX_PREEN, "bad-frame list (block %d): bad magic 0x%08x", VSMFS_BADLIST_BLOCK,
		    magic))
		fix = true;
	if (count > max) {
		if (problem(FIX_PREEN, "bad-frame list (block %d): %" PRIu64 " entries, more than"
			    " the %" PRIu64 " that fit", VSMFS_BADLIST_BLOCK, count, max))
			fix = true;
		count = max;
	}
	if (b->b_reserved &&
	    problem(FIX_PREEN, "bad-frame list (block %d): reserved field is not zero",
		    VSMFS_BADLIST_BLOCK))
		fix = true;
	for (i = 0; i < count; i++) {
		u64 f = le64_to_cpu(b->b_frames[i]);

		if (f >= L.data_pages) {
			if (problem(FIX_PREEN, "bad-frame list (block %d): entry %" PRIu64
				    " (frame %" PRIu64 ") is past the last frame %" PRIu64,
				    VSMFS_BADLIST_BLOCK, i, f, L.data_pages - 1))
				fix = true;
			continue;
		}
		if (tbit(badframe, f)) {
			if (problem(FIX_PREEN, "bad-frame list (block %d): entry %" PRIu64
				    " (frame %" PRIu64 ") repeats an earlier entry",
				    VSMFS_BADLIST_BLOCK, i, f))
				fix = true;
			continue;
		}
		sbit(badframe, f, true);
		kept[n++] = f;
	}
	nbadframes = n;
	if (fix) {
		/* Entries past the count are not read: zero, as in a new list. */
		memset(b, 0, VSMFS_BLOCK_SIZE);
		b->b_magic = cpu_to_le32(VSMFS_BADLIST_MAGIC);
		b->b_count = cpu_to_le32((u32)n);
		for (i = 0; i < n; i++)
			b->b_frames[i] = cpu_to_le64(kept[i]);
		badlist_dirty = true;
	}
	free(kept);
}

/* ---- pass 3: page table ---- */

/*
 * Does logical page @lpn have a frame? Every page of a file system without
 * VSMFS_FEATURE_INCOMPAT_SPARSE has one (a bad one is in lpn_bad).
 */
static bool lpn_framed(u64 lpn)
{
	return !L.sparse ||
	       (le64_to_cpu(ptable[lpn]) & VSMFS_PTE_FRAME_MASK) != VSMFS_PTE_NONE;
}

/* The first few numbers of @v, for a message. */
static const char *some_numbers(const u64 *v, u64 n)
{
	static char buf[160];
	size_t len = 0;
	u64 i;

	buf[0] = 0;
	for (i = 0; i < n && i < 8; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%" PRIu64,
					i ? ", " : "", v[i]);
	if (n > 8)
		snprintf(buf + len, sizeof(buf) - len, ", ...");
	return buf;
}

/*
 * Every frame must back exactly one logical page. Without the sparse
 * feature the page table is a permutation; with it, the logical pages
 * that have no frame hold VSMFS_PTE_NONE, and a frame backing none is
 * space leaked, which check_unused_frames() reports once the free logical
 * pages are known.
 */
static void check_ptable(void)
{
	u64 n = L.data_pages, lp = L.lpages, per = VSMFS_PTES_PER_BLOCK, lpn, unmapped = 0;
	u64 *frame_of = calloc(n, sizeof(u64));	/* frame -> logical page + 1 */
	u64 before = nstruct;

	if (!frame_of)
		fatal("out of memory");
	ptable = read_region(L.ptable_start, L.ptable_blocks);
	ptable_dirty = xalloc(L.ptable_blocks);
	lpn_bad = xalloc(DIV_ROUND_UP(roundup(lp, (u64)VSMFS_VSP_PAGES), 8));
	for (lpn = 0; lpn < lp; lpn++) {
		u64 e = le64_to_cpu(ptable[lpn]), frame = e & VSMFS_PTE_FRAME_MASK;
		/* Sparse file systems mark fallocated pages not written since. */
		u64 flags = L.sparse && frame != VSMFS_PTE_NONE ? VSMFS_PTE_UNWRITTEN : 0;

		if (e & ~(VSMFS_PTE_FRAME_MASK | flags))
			problem(FIX_NONE, "page table: logical page %" PRIu64
				": reserved bits set in entry 0x%" PRIx64, lpn, e);
		if (L.sparse && frame == VSMFS_PTE_NONE)
			continue;
		if (frame >= n) {
			problem(FIX_NONE, "page table: logical page %" PRIu64 " maps frame %" PRIu64
				", past the last frame %" PRIu64, lpn, frame, n - 1);
			sbit(lpn_bad, lpn, true);
		} else if (frame_of[frame]) {
			problem(FIX_NONE, "page table: logical page %" PRIu64 " maps frame %" PRIu64
				", already mapped by logical page %" PRIu64,
				lpn, frame, frame_of[frame] - 1);
			sbit(lpn_bad, lpn, true);
		} else {
			frame_of[frame] = lpn + 1;
		}
	}
	for (lpn = 0; lpn < n; lpn++)
		unmapped += !frame_of[lpn];
	if (unmapped && L.sparse) {
		unused = calloc(unmapped, sizeof(*unused));
		if (!unused)
			fatal("out of memory");
		for (lpn = 0; lpn < n; lpn++)
			if (!frame_of[lpn])
				unused[nunused++] = lpn;
	} else if (unmapped) {
		problem(FIX_NONE, "page table: %" PRIu64 " frames are mapped by no logical page",
			unmapped);
	}
	for (lpn = lp; lpn < L.ptable_blocks * per; lpn++)
		if (ptable[lpn]) {
			problem(FIX_NONE, "page table: entry %" PRIu64
				" past the last logical page is not zero", lpn);
			break;
		}
	free(frame_of);
	/* Every problem above is structural: nothing here is repaired. */
	ptable_damaged = nstruct != before;
}

/* Device block behind logical page @lpn, 0 if it has none. */
static u64 lpn_block(u64 lpn)
{
	if (!lpn || lpn >= L.lpages || tbit(lpn_bad, lpn) || !lpn_framed(lpn))
		return 0;
	return L.data_start + (le64_to_cpu(ptable[lpn]) & VSMFS_PTE_FRAME_MASK);
}

/*
 * Is the frame behind logical page @lpn in the bad-frame list? Such a
 * frame is never read: on a pmem device the read fails (the poison the
 * platform reported is still there).
 */
static bool on_bad_frame(u64 lpn)
{
	u64 f;

	if (!badframe || lpn >= L.lpages || !lpn_framed(lpn))
		return false;
	f = le64_to_cpu(ptable[lpn]) & VSMFS_PTE_FRAME_MASK;
	return f < L.data_pages && tbit(badframe, f);
}

static u64 frame_of_lpn(u64 lpn)
{
	return le64_to_cpu(ptable[lpn]) & VSMFS_PTE_FRAME_MASK;
}

static bool read_lpn(u64 lpn, void *buf)
{
	u64 blk = lpn_block(lpn);

	if (!blk || on_bad_frame(lpn))
		return false;
	read_blocks(blk, 1, buf);
	return true;
}

/* ---- pass 4: inode mapping table ---- */

static void check_imap(void)
{
	u64 n = L.inodes, ino, slot;
	u64 *ino_of = calloc(n, sizeof(u64));	/* slot -> i-number + 1 */

	if (!ino_of)
		fatal("out of memory");
	imap = read_region(L.imap_start, L.imap_blocks);
	ii = calloc(n, sizeof(*ii));
	if (!ii)
		fatal("out of memory");
	if (le32_to_cpu(imap[0]) != 0)
		problem(FIX_NONE, "inode mapping table: reserved inode 0 maps slot %u, not 0",
			le32_to_cpu(imap[0]));
	ii[0].state = I_UNKNOWN;
	ino_of[0] = 1;
	for (ino = 1; ino < n; ino++) {
		slot = le32_to_cpu(imap[ino]);
		if (!slot || slot >= n) {
			problem(FIX_NONE, "inode mapping table: inode %" PRIu64
				" maps invalid slot %" PRIu64, ino, slot);
			ii[ino].state = I_UNKNOWN;
			owners_incomplete = dirs_incomplete = true;
		} else if (ino_of[slot]) {
			problem(FIX_NONE, "inode mapping table: inode %" PRIu64 " maps slot %" PRIu64
				", already used by inode %" PRIu64, ino, slot, ino_of[slot] - 1);
			ii[ino].state = I_UNKNOWN;
			ii[ino_of[slot] - 1].state = I_UNKNOWN;
			owners_incomplete = dirs_incomplete = true;
		} else {
			ino_of[slot] = ino + 1;
			ii[ino].slot = slot;
		}
	}
	free(ino_of);
}

static struct vsmfs_dinode *dinode(u64 ino)
{
	return (struct vsmfs_dinode *)(itable + ii[ino].slot * VSMFS_INODE_SIZE);
}

static void dinode_dirty(u64 ino)
{
	itable_dirty[ii[ino].slot / VSMFS_INODES_PER_BLOCK] = 1;
}

/* ---- pass 5: inodes and the pages they own ---- */

static void ibad(u64 ino, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ibad(u64 ino, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	problem(FIX_NONE, "inode %" PRIu64 " (%s): %s", ino, type_name(ii[ino].dtype), buf);
	ii[ino].bad = true;
}

struct walk {
	struct index_walk iw;	/* first: a walk is its index walk */
	u64	ino;
	u8	type;
	u64	size;
	u64	nblk;		/* directories: blocks */
	bool	release;	/* give the pages up instead of claiming them */
	u64	tail_key;	/* regular files: 1 + key of the run owning its VSP's tail */
	bool	tail_seen;
	bool	truncating;	/* VSMFS_IFLAG_TRUNCATING: pages past the end may hold data */
	u8	buf[2][VSMFS_BLOCK_SIZE] __attribute__((aligned(VSMFS_BLOCK_SIZE)));
};

static void claim(struct walk *w, u64 lpn, u64 count, const char *what)
{
	u64 p, clash = 0, first = 0, by = 0, framed = 0;

	for (p = lpn; p < lpn + count; p++) {
		framed += lpn_framed(p);
		if (w->release) {
			if (owner[p] == w->ino && !tbit(multi, p)) {
				owner[p] = 0;
				sbit(lbitmap, p, false);
				lbitmap_dirty[p / BITS_PER_BLK] = 1;
			}
			continue;
		}
		if (!owner[p]) {
			owner[p] = (u32)w->ino;
			continue;
		}
		if (!clash++) {
			first = p;
			by = owner[p];
		}
		ii[owner[p]].bad = true;
		sbit(multi, p, true);
	}
	if (w->release)
		return;
	/* i_pages counts the pages that have a frame: holes take no space. */
	ii[w->ino].pages += framed;
	if (clash)
		ibad(w->ino, "%s at logical page%s %" PRIu64 "%s%.0" PRIu64
		     ": %" PRIu64 " page%s already owned (page %" PRIu64 " by inode %" PRIu64 ")",
		     what, count > 1 ? "s" : "", lpn, count > 1 ? "-" : "",
		     count > 1 ? lpn + count - 1 : 0, clash, clash > 1 ? "s" : "", first, by);
}

/* End of the virtual superpage holding logical page @lpn. */
static u64 vsp_end(u64 lpn)
{
	return (lpn / VSMFS_VSP_PAGES + 1) * VSMFS_VSP_PAGES;
}

/* No offset in the file: index and xattr blocks. */
#define NO_OFFSET	(~0ULL)

/*
 * A metadata block of inode @ino, at logical page @lpn, on a bad frame:
 * its content is lost, and nothing it held (entries, index entries,
 * attributes, a symlink target) can be derived from the rest.
 */
static void bad_meta(u64 ino, u64 lpn, u8 kind, u64 off)
{
	char at[40] = "";

	if (off != NO_OFFSET)
		snprintf(at, sizeof(at), " offset %" PRIu64, off);
	problem(FIX_NONE, "inode %" PRIu64 " (%s)%s: %s on bad frame %" PRIu64
		" (logical page %" PRIu64 ")", ino, type_name(ii[ino].dtype), at, bad_names[kind],
		frame_of_lpn(lpn), lpn);
	ii[ino].bad = true;
}

/*
 * Pages of a regular file's piece @key on a bad frame: @cnt logical pages
 * from @lpn, page @first of the piece the first of them. Reported and
 * repaired once the free logical pages are known (check_bad_pages()).
 */
static void bad_run(struct walk *w, u64 key, u64 lpn, u64 first, u64 cnt, u8 kind)
{
	u64 i;

	for (i = 0; i < cnt; i++) {
		if (!on_bad_frame(lpn + i))
			continue;
		bad_pages = xgrow(bad_pages, nbad_pages, &bad_pages_cap, sizeof(*bad_pages));
		bad_pages[nbad_pages++] = (struct bad_page){
			.ino = w->ino, .lpn = lpn + i, .kind = kind,
			.off = (key * VSMFS_VSP_PAGES + first + i) << VSMFS_BLOCK_SHIFT,
		};
	}
}

/*
 * Pages of a run past the end of a regular file are allowed (fallocate with
 * FALLOC_FL_KEEP_SIZE, or one cut off by a crash before the commit that
 * sets the size) but read as zero: writes past the end rely on it, and
 * data there means a size that lost its high bits.
 */
static void eof_pages(struct walk *w, u64 key, u64 lpn, u64 cnt)
{
	u64 first = key * VSMFS_VSP_PAGES, eof = DIV_ROUND_UP(w->size, VSMFS_BLOCK_SIZE), i;
	static u8 buf[VSMFS_BLOCK_SIZE] __attribute__((aligned(VSMFS_BLOCK_SIZE)));

	if (w->truncating)
		return;		/* the next read-write mount frees them */
	for (i = eof > first ? eof - first : 0; i < cnt; i++) {
		if (!read_lpn(lpn + i, buf) || vsmfs_all_zero(buf, sizeof(buf)))
			continue;
		ibad(w->ino, "index entry %" PRIu64 ": page %" PRIu64 " of its run is past"
		     " the end of the file (size %" PRIu64 ") and not zero", key, i, w->size);
		return;
	}
}

static void walk_entry(struct index_walk *iw, u64 key, u64 e)
{
	struct walk *w = (struct walk *)iw;
	u64 lpn = e & VSMFS_IDX_LPN_MASK, cnt = (e & IDX_COUNT_MASK) >> VSMFS_IDX_COUNT_SHIFT;

	if (w->release) {
		if (e)
			claim(w, lpn, cnt, "");
		if (e && w->tail_key == key + 1 && lpn + cnt <= L.lpages)
			claim(w, lpn + cnt, vsp_end(lpn) - lpn - cnt, "");
		return;
	}
	if (!e) {
		if (w->type == T_DIR && key < w->nblk) {
			dirs_incomplete = true;
			ibad(w->ino, "directory block %" PRIu64 " is missing (a hole)", key);
		} else if (w->type == T_LNK && key == 0)
			ibad(w->ino, "long symlink has no target block");
		return;
	}
	if (e & ~(VSMFS_IDX_LPN_MASK | IDX_COUNT_MASK)) {
		owners_incomplete = true;
		ibad(w->ino, "index entry %" PRIu64 " (0x%" PRIx64 ") has reserved bits set", key, e);
		return;
	}
	if (!cnt || cnt > VSMFS_VSP_PAGES) {
		owners_incomplete = true;
		ibad(w->ino, "index entry %" PRIu64 ": run of %" PRIu64 " pages (must be 1..%u)",
		     key, cnt, VSMFS_VSP_PAGES);
		return;
	}
	if (!lpn || lpn + cnt > L.lpages) {
		owners_incomplete = true;
		ibad(w->ino, "index entry %" PRIu64 ": logical pages %" PRIu64 "+%" PRIu64
		     " out of range (1..%" PRIu64 ")", key, lpn, cnt, L.lpages - 1);
		return;
	}
	if (lpn / VSMFS_VSP_PAGES != (lpn + cnt - 1) / VSMFS_VSP_PAGES) {
		owners_incomplete = true;
		ibad(w->ino, "index entry %" PRIu64 ": run %" PRIu64 "+%" PRIu64
		     " crosses a virtual superpage", key, lpn, cnt);
		return;
	}
	switch (w->type) {
	case T_REG:
		eof_pages(w, key, lpn, cnt);
		claim(w, lpn, cnt, "data");
		bad_run(w, key, lpn, 0, cnt, BP_DATA);
		if (w->tail_key == key + 1) {
			w->tail_seen = true;
			if (lpn + cnt == vsp_end(lpn)) {
				ibad(w->ino, "index entry %" PRIu64 " owns the tail of its"
				     " virtual superpage but fills it", key);
			} else {
				claim(w, lpn + cnt, vsp_end(lpn) - lpn - cnt,
				      "reserved tail of the last superpage");
				bad_run(w, key, lpn + cnt, cnt, vsp_end(lpn) - lpn - cnt, BP_TAIL);
			}
		}
		break;
	case T_DIR:
		if (cnt != 1)
			ibad(w->ino, "index entry %" PRIu64 ": run of %" PRIu64
			     " pages for a directory block", key, cnt);
		if (key >= w->nblk)
			ibad(w->ino, "index entry %" PRIu64 " is past the end of the directory"
			     " (%" PRIu64 " blocks)", key, w->nblk);
		claim(w, lpn, cnt, "directory block");
		if (!lpn_framed(lpn)) {
			dirs_incomplete = true;
			ibad(w->ino, "directory block %" PRIu64 " at logical page %" PRIu64
			     " has no frame", key, lpn);
		} else if (on_bad_frame(lpn)) {
			dirs_incomplete = true;
			bad_meta(w->ino, lpn, BP_DIR, key << VSMFS_BLOCK_SHIFT);
		}
		break;
	default:
		if (cnt != 1 || key)
			ibad(w->ino, "index entry %" PRIu64 " (0x%" PRIx64
			     ") in a long symlink", key, e);
		claim(w, lpn, cnt, "symlink block");
		if (!lpn_framed(lpn))
			ibad(w->ino, "symlink block at logical page %" PRIu64 " has no frame", lpn);
		else if (on_bad_frame(lpn))
			bad_meta(w->ino, lpn, BP_SYMLINK, key << VSMFS_BLOCK_SHIFT);
		break;
	}
}

/* The entries of the index block at logical page @ptr, @depth levels above them. */
static const __le64 *walk_block(struct index_walk *iw, u64 ptr, int depth)
{
	struct walk *w = (struct walk *)iw;

	if (ptr >= L.lpages) {
		owners_incomplete = true;
		if (!w->release)
			ibad(w->ino, "%s indirect index pointer 0x%" PRIx64 " is invalid",
			     depth == 2 ? "double" : "single", ptr);
		return NULL;
	}
	claim(w, ptr, 1, "index block");
	if (on_bad_frame(ptr)) {
		/* What it maps is not known: neither are the owners of those pages. */
		owners_incomplete = true;
		if (!w->release)
			bad_meta(w->ino, ptr, BP_INDEX, NO_OFFSET);
		return NULL;
	}
	if (!read_lpn(ptr, w->buf[depth - 1])) {
		owners_incomplete = true;
		if (!w->release)
			ibad(w->ino, "index block at logical page %" PRIu64 " has no %sframe",
			     ptr, lpn_framed(ptr) ? "valid " : "");
		return NULL;
	}
	return (const __le64 *)w->buf[depth - 1];
}

static void walk_index(struct walk *w, const struct vsmfs_dinode *di)
{
	w->iw.entry = walk_entry;
	w->iw.block = walk_block;
	index_walk(&w->iw, di);
}

static struct walk walker;

/*
 * The xattr block of inode @ino at logical page @lpn (vsmfs_xattr_block_check()).
 * With sound entries, what is wrong follows from them and from the owner,
 * provided no other inode claims the block: the entry count, the owner,
 * bytes that must be zero. That much is repaired; damaged entries are not
 * (which attribute, or which of two copies of one, is lost is not known).
 */
static void check_xattr(u64 ino, u64 lpn)
{
	static u8 blk[VSMFS_BLOCK_SIZE] __attribute__((aligned(VSMFS_BLOCK_SIZE)));
	struct vsmfs_dxattr_hdr *h = (struct vsmfs_dxattr_hdr *)blk;
	struct vsmfs_xattr_scan xs;
	const char *why;
	unsigned int used;

	if (!read_lpn(lpn, blk))
		return;		/* a bad frame: the page table pass said so, or bad_meta() */
	why = vsmfs_xattr_block_check(blk, ino, &xs);
	if (!why)
		return;
	if (!xs.derivable || owner[lpn] != ino || tbit(multi, lpn)) {
		ibad(ino, "xattr block at logical page %" PRIu64 ": %s (entry at %u)", lpn, why,
		     xs.bad);
		return;
	}
	if (!problem(FIX_YES, "inode %" PRIu64 " (%s): xattr block at logical page %" PRIu64
		     ": %s (%u entries, %u counted, owner %" PRIu64 ")", ino,
		     type_name(ii[ino].dtype), lpn, why, xs.count, le16_to_cpu(h->x_count),
		     (u64)le64_to_cpu(h->x_ino)))
		return;
	used = le16_to_cpu(h->x_used);
	h->x_count = cpu_to_le16(xs.count);
	h->x_ino = cpu_to_le64(ino);
	memset(h->x_reserved, 0, sizeof(h->x_reserved));
	memset(blk + used, 0, VSMFS_BLOCK_SIZE - used);
	write_blocks(lpn_block(lpn), 1, blk);
}

static void check_inode(u64 ino)
{
	struct vsmfs_dinode *di = dinode(ino);
	struct ino_info *in = &ii[ino];
	struct walk *w = &walker;
	u16 mode = le16_to_cpu(di->i_mode);
	u64 size = le64_to_cpu(di->i_size), xattr = le64_to_cpu(di->i_xattr);
	u64 stored, want;
	u32 flags = le32_to_cpu(di->i_flags);
	u8 t = vsmfs_dinode_type(di);
	const char *why;
	bool size_ok;

	if (!mode) {
		in->state = I_FREE;
		return;
	}
	in->state = I_USED;
	in->dtype = t;
	if (!t) {
		owners_incomplete = true;
		dirs_incomplete = true;
		ibad(ino, "invalid mode 0%o", mode);
		return;
	}
	why = vsmfs_dinode_check(di);
	size_ok = !why;
	if (why)
		ibad(ino, "%s (size %" PRIu64 ")", why, size);
	why = vsmfs_dinode_fields_check(di);
	if (why)
		ibad(ino, "%s (flags 0x%x, tail key %u, parent %" PRIu64 ", device 0x%x)", why,
		     flags, le32_to_cpu(di->i_tail_key), (u64)le64_to_cpu(di->i_parent),
		     le32_to_cpu(di->i_rdev));

	memset(w, 0, offsetof(struct walk, buf));
	w->ino = ino;
	w->type = t;
	w->size = size;
	w->truncating = flags & VSMFS_IFLAG_TRUNCATING;
	if (w->truncating)
		info("inode %" PRIu64 ": a truncation to %" PRIu64 " bytes stopped part way;"
		     " the next read-write mount finishes it", ino, size);
	switch (t) {
	case T_REG:
		w->tail_key = le32_to_cpu(di->i_tail_key);
		walk_index(w, di);
		if (w->tail_key && !w->tail_seen)
			ibad(ino, "tail key %" PRIu64 " names a piece without pages",
			     w->tail_key);
		break;
	case T_DIR:
		if (!size_ok) {
			owners_incomplete = true;
			dirs_incomplete = true;
			break;
		}
		w->nblk = size / VSMFS_BLOCK_SIZE;
		walk_index(w, di);
		break;
	case T_LNK:
		if (size_ok && size > VSMFS_INLINE_LEN)
			walk_index(w, di);
		break;
	}
	if (xattr) {
		if (xattr >= L.lpages) {
			owners_incomplete = true;
			ibad(ino, "xattr block at logical page %" PRIu64 " out of range", xattr);
		} else {
			claim(w, xattr, 1, "xattr block");
			if (!lpn_framed(xattr))
				ibad(ino, "xattr block at logical page %" PRIu64 " has no frame",
				     xattr);
			else if (on_bad_frame(xattr))
				bad_meta(ino, xattr, BP_XATTR, NO_OFFSET);
			else
				check_xattr(ino, xattr);
		}
	}

	stored = le64_to_cpu(di->i_pages);
	want = in->pages;
	if (stored != want && !(xattr && stored == want - 1) &&
	    problem(in->bad ? FIX_NONE : FIX_PREEN, "inode %" PRIu64 " (%s): i_pages %" PRIu64
		    ", should be %" PRIu64, ino, type_name(t), stored, want)) {
		di->i_pages = cpu_to_le64(want);
		dinode_dirty(ino);
	}
}

static void check_inodes(void)
{
	u64 ino;

	itable = read_region(L.itable_start, L.itable_blocks);
	itable_dirty = calloc(L.itable_blocks, 1);
	/* Whole superpages: a reserved tail may reach the end of the last. */
	owner = calloc(roundup(L.lpages, (u64)VSMFS_VSP_PAGES), sizeof(*owner));
	multi = xalloc(DIV_ROUND_UP(roundup(L.lpages, (u64)VSMFS_VSP_PAGES), 8));
	if (!itable_dirty || !owner)
		fatal("out of memory");
	for (ino = 1; ino < L.inodes; ino++)
		if (ii[ino].state != I_UNKNOWN)
			check_inode(ino);
	if (ii[VSMFS_ROOT_INO].state != I_USED || ii[VSMFS_ROOT_INO].dtype != T_DIR) {
		owners_incomplete = dirs_incomplete = true;
		problem(FIX_NONE, "root inode %d is %s", VSMFS_ROOT_INO,
			ii[VSMFS_ROOT_INO].state == I_FREE ? "not in use" :
			ii[VSMFS_ROOT_INO].state == I_UNKNOWN ? "unreadable" : "not a directory");
	}
}

/* ---- pass 6: directories ---- */

struct dname {
	u64	blk;
	u32	off;
	u32	len;
	char	name[VSMFS_NAME_LEN];
};

static int dname_cmp(const void *a, const void *b)
{
	const struct dname *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->name, y->name, x->len);
}

static void dbad(u64 dir, u64 blk, unsigned int off, const struct vsmfs_ddirent *de,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void dbad(u64 dir, u64 blk, unsigned int off, const struct vsmfs_ddirent *de,
		 const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (de && de->d_ino && vsmfs_dirent_len(de->d_name_len) <= VSMFS_BLOCK_SIZE - off)
		problem(FIX_NONE, "directory %" PRIu64 ", block %" PRIu64 ", entry at %u ('%s'): %s",
			dir, blk, off, show_name(de->d_name, de->d_name_len), buf);
	else
		problem(FIX_NONE, "directory %" PRIu64 ", block %" PRIu64 ", entry at %u: %s",
			dir, blk, off, buf);
}

/* Index entry of @key of a directory, 0 for none or unreadable. */
static u64 dir_lookup(struct walk *w, const struct vsmfs_dinode *di, u64 key)
{
	static u64 cached[2] = { ~0ULL, ~0ULL };
	u64 ptr, idx[2];
	int depth, d;

	if (key < VSMFS_NDIRECT)
		return le64_to_cpu(di->i_direct[key]);
	key -= VSMFS_NDIRECT;
	if (key < VSMFS_IND_ENTRIES) {
		depth = 1;
		ptr = le64_to_cpu(di->i_ind);
		idx[0] = key;
	} else {
		key -= VSMFS_IND_ENTRIES;
		depth = 2;
		ptr = le64_to_cpu(di->i_dind);
		idx[0] = key / VSMFS_IND_ENTRIES;
		idx[1] = key % VSMFS_IND_ENTRIES;
	}
	for (d = 0; d < depth; d++) {
		if (!ptr || ptr >= L.lpages)
			return 0;
		if (cached[d] != ptr) {
			if (!read_lpn(ptr, w->buf[d]))
				return 0;
			cached[d] = ptr;
			if (d == 0)
				cached[1] = ~0ULL;
		}
		ptr = le64_to_cpu(((const __le64 *)w->buf[d])[idx[d]]);
	}
	return ptr;
}

static void check_dir(u64 dir)
{
	const struct vsmfs_dinode *di = dinode(dir);
	u64 nblk = le64_to_cpu(di->i_size) / VSMFS_BLOCK_SIZE, b, i, nnames = 0, cap = 0;
	u8 *blk = xalloc(VSMFS_BLOCK_SIZE);
	struct dname *names = NULL;
	struct walk *w = &walker;

	for (b = 0; b < nblk; b++) {
		u64 e = dir_lookup(w, di, b), lpn = e & VSMFS_IDX_LPN_MASK;
		unsigned int off = 0;

		/* Bad entries were reported by the inode pass. */
		if (!e || !lpn || lpn >= L.lpages || tbit(multi, lpn) || !read_lpn(lpn, blk)) {
			dirs_incomplete = true;
			continue;
		}
		while (off < VSMFS_BLOCK_SIZE) {
			const struct vsmfs_ddirent *de = (const void *)(blk + off);
			const char *why = vsmfs_dirent_check(de, off);
			unsigned int rec, nl;
			struct ino_info *t;
			u64 ino;

			if (why) {
				/* Past this, not even the header of the entry is in the block. */
				bool whole = off <= VSMFS_BLOCK_SIZE - VSMFS_DIRENT_BASE;

				dbad(dir, b, off, NULL, "%s (record length %u, name length %u)", why,
				     whole ? le16_to_cpu(de->d_rec_len) : 0, whole ? de->d_name_len : 0);
				dirs_incomplete = true;
				if (!vsmfs_dirent_rec_ok(de, off))
					break;
				off += le16_to_cpu(de->d_rec_len);
				continue;
			}
			rec = le16_to_cpu(de->d_rec_len);
			nl = de->d_name_len;
			ino = le64_to_cpu(de->d_ino);
			if (!ino)
				goto next;
			why = vsmfs_dirent_name_check(de);
			if (why)
				dbad(dir, b, off, de, "%s (hash 0x%08x, of the name 0x%08x)", why,
				     le32_to_cpu(de->d_hash), vsmfs_name_hash(de->d_name, nl));
			if (ino >= L.inodes) {
				dbad(dir, b, off, de, "inode %" PRIu64 " is past the last inode %"
				     PRIu64, ino, L.inodes - 1);
				goto next;
			}
			t = &ii[ino];
			if (t->state == I_FREE) {
				dbad(dir, b, off, de, "refers to free inode %" PRIu64, ino);
				goto next;
			}
			if (t->state == I_USED && de->d_type != t->dtype)
				dbad(dir, b, off, de, "type %u, but inode %" PRIu64 " is of type %u (%s)",
				     de->d_type, ino, t->dtype, type_name(t->dtype));
			names = xgrow(names, nnames, &cap, sizeof(*names));
			names[nnames].blk = b;
			names[nnames].off = off;
			names[nnames].len = nl;
			memcpy(names[nnames].name, de->d_name, nl);
			nnames++;
			t->refs++;
			ii[dir].entries++;
			if (t->state == I_USED && t->dtype == T_DIR) {
				ii[dir].subdirs++;
				if (ino == VSMFS_ROOT_INO)
					dbad(dir, b, off, de, "hard link to the root directory");
				else if (t->parent)
					dbad(dir, b, off, de, "second link to directory %" PRIu64
					     " (first in directory %" PRIu64 "): directories have"
					     " one link", ino, t->parent);
				else
					t->parent = dir;
			}
next:
			off += rec;
		}
	}
	qsort(names, nnames, sizeof(*names), dname_cmp);
	for (i = 1; i < nnames; i++)
		if (!dname_cmp(&names[i - 1], &names[i]))
			problem(FIX_NONE, "directory %" PRIu64 ", block %" PRIu64
				", entry at %u: duplicate name '%s'", dir, names[i].blk,
				names[i].off, show_name(names[i].name, names[i].len));
	free(names);
	free(blk);
}

static void check_dirs(void)
{
	u64 ino;

	for (ino = 1; ino < L.inodes; ino++)
		if (ii[ino].state == I_USED && ii[ino].dtype == T_DIR &&
		    !(le64_to_cpu(dinode(ino)->i_size) % VSMFS_BLOCK_SIZE))
			check_dir(ino);
}

/* ---- pass 7: connectivity, link counts, orphans ---- */

static u8 reach(u64 d)
{
	u64 cur = d;
	u8 r;

	for (;;) {
		if (ii[cur].reach == 1 || ii[cur].reach == 2) {
			r = ii[cur].reach;
			break;
		}
		if (ii[cur].reach == 3 || !ii[cur].parent) {
			r = 2;
			break;
		}
		ii[cur].reach = 3;
		cur = ii[cur].parent;
	}
	for (cur = d; ii[cur].reach == 3; cur = ii[cur].parent)
		ii[cur].reach = r;
	return r;
}

static void free_orphan(u64 ino)
{
	struct vsmfs_dinode *di = dinode(ino);
	struct walk *w = &walker;
	u64 xattr = le64_to_cpu(di->i_xattr);
	u8 t = ii[ino].dtype;

	memset(w, 0, offsetof(struct walk, buf));
	w->ino = ino;
	w->type = t;
	w->release = true;
	if (t == T_REG)
		w->tail_key = le32_to_cpu(di->i_tail_key);
	if (t == T_REG || t == T_DIR ||
	    (t == T_LNK && le64_to_cpu(di->i_size) > VSMFS_INLINE_LEN))
		walk_index(w, di);
	if (xattr)
		claim(w, xattr, 1, "");
	memset(di, 0, sizeof(*di));
	dinode_dirty(ino);
	ii[ino].state = I_FREE;
	sbit(ibitmap, ino, false);
	ibitmap_dirty[ino / BITS_PER_BLK] = 1;
}

static void check_links(void)
{
	u64 ino;

	if (dirs_incomplete) {
		info("some directory entries could not be read: link counts, orphans and"
		     " connectivity not checked");
		return;
	}
	if (ii[VSMFS_ROOT_INO].state == I_USED)
		ii[VSMFS_ROOT_INO].reach = 1;
	for (ino = 1; ino < L.inodes; ino++)
		if (ii[ino].state == I_USED && ii[ino].dtype == T_DIR && ii[ino].refs &&
		    ino != VSMFS_ROOT_INO && reach(ino) != 1)
			problem(FIX_NONE, "directory %" PRIu64 " is not reachable from the root"
				" (its entry is in directory %" PRIu64 ")", ino, ii[ino].parent);

	for (ino = 1; ino < L.inodes; ino++) {
		struct ino_info *in = &ii[ino];
		struct vsmfs_dinode *di;
		u64 want;
		u32 nl;

		if (in->state != I_USED || !in->dtype)
			continue;
		di = dinode(ino);
		nl = le32_to_cpu(di->i_nlink);
		if (!in->refs && ino != VSMFS_ROOT_INO) {
			/*
			 * An orphan (in use, no links, no entry) of a file system
			 * not cleanly unmounted: a file unlinked while open, or
			 * by a fast-commit record, as a crash leaves it, which the
			 * next mount frees. A check (-n) counts it, not as an
			 * error; a repair frees it, as one left by a clean
			 * unmount (which leaves none: that one is damage).
			 */
			bool orphan = !nl && !in->bad && !(in->dtype == T_DIR && in->entries);

			if (orphan && run == RUN_CHECK &&
			    !(le32_to_cpu(sb.s_state) & VSMFS_STATE_CLEAN)) {
				norphans++;
				continue;
			}
			if (orphan) {
				if (problem(FIX_PREEN | FIX_FREES, "inode %" PRIu64 " (%s, %" PRIu64
					    " pages): orphan, no links and no directory entry",
					    ino, type_name(in->dtype), in->pages))
					free_orphan(ino);
			} else {
				problem(FIX_NONE, "inode %" PRIu64 " (%s): link count %u but no"
					" directory entry refers to it", ino, type_name(in->dtype), nl);
			}
			continue;
		}
		/* 0 is "not known" (vsmfs_format.h): only another value is wrong. */
		if (in->dtype == T_DIR && ino != VSMFS_ROOT_INO && di->i_parent &&
		    le64_to_cpu(di->i_parent) != in->parent &&
		    problem(in->bad ? FIX_NONE : FIX_PREEN, "directory %" PRIu64 ": parent %"
			    PRIu64 ", should be %" PRIu64, ino, le64_to_cpu(di->i_parent),
			    in->parent)) {
			di->i_parent = cpu_to_le64(in->parent);
			dinode_dirty(ino);
		}
		want = in->dtype == T_DIR ? 2 + (u64)in->subdirs : in->refs;
		if (nl != want &&
		    problem(in->bad ? FIX_NONE : want < nl ? FIX_PREEN | FIX_FREES : FIX_PREEN,
			    "inode %" PRIu64 " (%s): link count %u, should be %" PRIu64,
			    ino, type_name(in->dtype), nl, want)) {
			di->i_nlink = cpu_to_le32((u32)want);
			dinode_dirty(ino);
		}
	}
}

/* ---- pass 8: bitmaps ---- */

/*
 * Compare @map (@nblocks blocks) bit by bit with what @want() says, and
 * report each run of differences once. Bits before 1 and at or past @n are
 * reserved and set.
 */
static void check_bitmap(const char *what, const char *unit, u8 *map, u8 *dirty, u64 nblocks,
			 u64 n, int (*want)(u64 i), u64 *used)
{
	u64 total = nblocks * BITS_PER_BLK, i = 0, j, k;

	*used = 0;
	while (i < total) {
		int have = tbit(map, i), w = i == 0 || i >= n ? 1 : want(i);
		bool reserved = i == 0 || i >= n;
		int fix;

		if (w < 0)
			w = have;
		if (have && w && !reserved)
			(*used)++;
		if (have == w) {
			i++;
			continue;
		}
		for (j = i + 1; j < total; j++) {
			int wj = j >= n ? 1 : want(j);

			if (wj < 0)
				wj = tbit(map, j);
			if (tbit(map, j) != have || wj != w || (j >= n) != reserved)
				break;
		}
		if (reserved)
			fix = problem(FIX_PREEN, "%s: reserved %s%s %" PRIu64 "%s%.0" PRIu64
				      " marked free", what, unit, j - i > 1 ? "s" : "", i,
				      j - i > 1 ? "-" : "", j - i > 1 ? j - 1 : 0);
		else if (w)
			fix = problem(FIX_PREEN, "%s: %s%s %" PRIu64 "%s%.0" PRIu64
				      " in use but marked free", what, unit, j - i > 1 ? "s" : "",
				      i, j - i > 1 ? "-" : "", j - i > 1 ? j - 1 : 0);
		else
			fix = problem(FIX_PREEN | FIX_FREES, "%s: %s%s %" PRIu64 "%s%.0" PRIu64
				      " marked in use but not used", what, unit,
				      j - i > 1 ? "s" : "", i, j - i > 1 ? "-" : "",
				      j - i > 1 ? j - 1 : 0);
		if (fix) {
			for (k = i; k < j; k++) {
				sbit(map, k, w);
				dirty[k / BITS_PER_BLK] = 1;
			}
		}
		if (w && !reserved)
			*used += j - i;
		i = j;
	}
}

static int want_page(u64 lpn)
{
	if (owner[lpn] || tbit(multi, lpn))
		return 1;
	return owners_incomplete ? -1 : 0;
}

/*
 * Frames that back no logical page, on a sparse file system: space leaked
 * (the kernel counts as free only frames behind free logical pages). Each
 * is given to a free logical page without a frame, once the bitmap is
 * right and nothing else is wrong: a damaged page table entry may be the
 * real owner of such a frame.
 */
static void check_unused_frames(void)
{
	u64 lpn, i = 0, room = 0;

	if (!nunused)
		return;
	for (lpn = 1; lpn < L.lpages && room < nunused; lpn++)
		room += !lpn_framed(lpn) && !tbit(lbitmap, lpn) && !owner[lpn] &&
			!tbit(multi, lpn);
	if (room < nunused || owners_incomplete) {
		problem(FIX_NONE, "page table: %" PRIu64 " frames back no logical page"
			" (frame%s %s): space leaked, and %s", nunused, nunused > 1 ? "s" : "",
			some_numbers(unused, nunused), owners_incomplete ?
			"the free logical pages are not known" :
			"too few free logical pages without a frame to give them to");
		return;
	}
	if (!problem(FIX_PREEN | FIX_FREES, "page table: %" PRIu64 " frames back no logical page"
		     " (frame%s %s): space leaked", nunused, nunused > 1 ? "s" : "",
		     some_numbers(unused, nunused)))
		return;
	for (lpn = 1; lpn < L.lpages && i < nunused; lpn++) {
		if (lpn_framed(lpn) || tbit(lbitmap, lpn) || owner[lpn] || tbit(multi, lpn))
			continue;
		ptable[lpn] = cpu_to_le64(unused[i++]);
		ptable_dirty[lpn / VSMFS_PTES_PER_BLOCK] = 1;
	}
}

/* A free page is never marked unwritten: the module clears it on freeing. */
static void check_unwritten_free(void)
{
	u64 lpn;

	if (!L.sparse || owners_incomplete)
		return;
	for (lpn = 1; lpn < L.lpages; lpn++) {
		if (!(le64_to_cpu(ptable[lpn]) & VSMFS_PTE_UNWRITTEN) || tbit(lbitmap, lpn) ||
		    owner[lpn] || tbit(multi, lpn))
			continue;
		if (problem(FIX_PREEN, "page table: free logical page %" PRIu64
			    " marked unwritten", lpn)) {
			ptable[lpn] &= ~cpu_to_le64(VSMFS_PTE_UNWRITTEN);
			ptable_dirty[lpn / VSMFS_PTES_PER_BLOCK] = 1;
		}
	}
}

/*
 * Logical page @z is free and its frame may replace a bad one: not owned,
 * marked free, a frame of its own that is not bad, and (as every free
 * page) not marked unwritten.
 */
static bool free_good_page(u64 z)
{
	return z && z < L.lpages && !tbit(lbitmap, z) && !owner[z] && !tbit(multi, z) &&
	       !tbit(lpn_bad, z) && lpn_framed(z) && !on_bad_frame(z) &&
	       !(le64_to_cpu(ptable[z]) & VSMFS_PTE_UNWRITTEN);
}

/*
 * A free logical page whose frame can replace the bad frame of logical
 * page @lpn, 0 if there is none: one in the same virtual superpage if it
 * can be, whose page table entry is then in the same block.
 */
static u64 replacement_for(u64 lpn)
{
	static u64 next = 1;
	u64 z, v = lpn - lpn % VSMFS_VSP_PAGES;

	for (z = v; z < vsp_end(lpn); z++)
		if (free_good_page(z))
			return z;
	for (; next < L.lpages; next++)
		if (free_good_page(next))
			return next;
	return 0;
}

/*
 * Pages of regular files on a bad frame read EIO until they are written
 * whole or punched. The repair makes them read as zeros: the file keeps
 * its logical page (i_pages and the bitmap unchanged), which swaps frames
 * with a free logical page whose frame is good, zeroed first; the free
 * logical page keeps the bad frame, retired, as the module leaves one
 * after a copy-on-write. The bad frame is neither read nor written.
 *
 * Only when the free logical pages are known for sure: not with damage to
 * the page table or to an index, or with the page owned twice.
 */
static void check_bad_pages(void)
{
	static u8 zero[VSMFS_BLOCK_SIZE] __attribute__((aligned(VSMFS_BLOCK_SIZE)));
	u64 i;

	for (i = 0; i < nbad_pages; i++) {
		const struct bad_page *bp = &bad_pages[i];
		u64 lpn = bp->lpn, z = 0, fb, fz;
		bool safe = !owners_incomplete && !ptable_damaged && !tbit(multi, lpn);
		int fix = safe ? FIX_YES : FIX_YES | FIX_FREES;

		/* Freed with an orphan: a free page on a bad frame, as it should be. */
		if (owner[lpn] != bp->ino && !tbit(multi, lpn))
			continue;
		if (safe && run == RUN_YES) {
			z = replacement_for(lpn);
			if (!z)
				fix = FIX_NONE;
		}
		if (!problem(fix, "inode %" PRIu64 " (%s) offset %" PRIu64 ": %s on bad frame %"
			     PRIu64 " (logical page %" PRIu64 ")%s", bp->ino,
			     type_name(ii[bp->ino].dtype), bp->off, bad_names[bp->kind],
			     frame_of_lpn(lpn), lpn, fix == FIX_NONE ?
			     "; no free logical page with a good frame to replace it" : "") || !z)
			continue;
		fb = frame_of_lpn(lpn);
		fz = frame_of_lpn(z);
		/* Zeroed before a page table entry names it: synced before those are written. */
		write_blocks(L.data_start + fz, 1, zero);
		ptable[lpn] = cpu_to_le64((le64_to_cpu(ptable[lpn]) & ~VSMFS_PTE_FRAME_MASK) | fz);
		ptable[z] = cpu_to_le64(fb);
		ptable_dirty[lpn / VSMFS_PTES_PER_BLOCK] = 1;
		ptable_dirty[z / VSMFS_PTES_PER_BLOCK] = 1;
	}
}

/*
 * With the badframes feature, where the bad frames are once the check (and
 * any repair) is done: behind pages of inodes, or behind free logical
 * pages (retired, as the module leaves them), or, on a damaged page
 * table, behind none. Printed when the list is not empty, or with -v.
 */
static void report_bad_frames(void)
{
	u64 lpn, used = 0, retired = 0, unknown = 0, none;
	char more[96] = "";
	size_t len = 0;
	u8 *seen;

	if (!badlist_on || (!nbadframes && !verbose))
		return;
	seen = xalloc(DIV_ROUND_UP(L.data_pages, 8));
	for (lpn = 0; lpn < L.lpages; lpn++) {
		u64 f;

		if (!on_bad_frame(lpn))
			continue;
		f = frame_of_lpn(lpn);
		if (tbit(seen, f))
			continue;
		sbit(seen, f, true);
		if (lpn && (owner[lpn] || tbit(multi, lpn)))
			used++;
		else if (lpn && owners_incomplete)
			unknown++;
		else
			retired++;
	}
	none = nbadframes - used - retired - unknown;
	if (unknown)
		len = (size_t)snprintf(more, sizeof(more), ", %" PRIu64 " of unknown owner",
				       unknown);
	if (none)
		snprintf(more + len, sizeof(more) - len, ", %" PRIu64 " behind no logical page",
			 none);
	info("bad frames: %" PRIu64 " (%" PRIu64 " in use by files, %" PRIu64 " retired%s)",
	     nbadframes, used, retired, more);
	free(seen);
}

/* Frames behind logical pages in use, and frames not behind reserved page 0. */
static void count_frames(u64 *used, u64 *total)
{
	u64 lpn;

	*used = 0;
	*total = L.data_pages - (lpn_framed(0) && !tbit(lpn_bad, 0));
	for (lpn = 1; lpn < L.lpages; lpn++)
		*used += tbit(lbitmap, lpn) && lpn_framed(lpn) && !tbit(lpn_bad, lpn);
}

static int want_inode(u64 ino)
{
	return ii[ino].state == I_UNKNOWN ? -1 : ii[ino].state == I_USED;
}

static void write_dirty(u64 start, u64 nblocks, const u8 *buf, const u8 *dirty)
{
	u64 b;

	for (b = 0; b < nblocks; b++)
		if (dirty[b])
			write_blocks(start + b, 1, buf + (b << VSMFS_BLOCK_SHIFT));
}

static void write_super(void)
{
	u8 *blk = xalloc(VSMFS_BLOCK_SIZE);

	sb.s_checksum = cpu_to_le32(vsmfs_sb_csum(&sb));
	memcpy(blk, &sb, sizeof(sb));
	/* Backup first, then the primary, as the module updates them. */
	write_blocks(L.sb_backup, 1, blk);
	dev_sync();
	write_blocks(VSMFS_SB_BLOCK, 1, blk);
	dev_sync();
	free(blk);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fsck.vsmfs [-n | -y | -p | -a] [-f] [-v] DEVICE\n"
		"Check a vsmfs file system on DEVICE (an unmounted pmem device or image file).\n\n"
		"  -n     check only, change nothing (the default)\n"
		"  -y     repair what can be repaired safely\n"
		"  -p/-a  preen: repair only what is safe without a person deciding\n"
		"  -f     check even if clean (every check is always complete)\n"
		"  -v     verbose\n"
		"  -V, --version  print the version and exit\n"
		"  -h, --help     this help\n"
		"Exit status: 0 no errors, 1 errors corrected, 4 errors left uncorrected,\n"
		"8 operational error, 16 usage error.\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		COMMON_LONG_OPTIONS,
	};
	u64 used_pages = 0, used_inodes = 0, used_frames = 0, frames = 0;
	int c, modes = 0, ret;
	bool clean;

	progname = "fsck.vsmfs";
	while ((c = getopt_long(argc, argv, "nypafvVhC:", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			run = RUN_CHECK;
			modes |= 1;
			break;
		case 'y':
			run = RUN_YES;
			modes |= 2;
			break;
		case 'p':
		case 'a':
			run = RUN_PREEN;
			modes |= 4;
			break;
		case 'f':
		case 'C':	/* progress reporting of fsck(8): not supported */
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			common_option(c, usage, EXIT_USAGE);
		}
	}
	if (optind != argc - 1 || (modes & (modes - 1))) {
		if (modes & (modes - 1))
			fprintf(stderr, "fsck.vsmfs: only one of -n, -y and -p may be given\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	/* Exclusive, also to check: a mounted device is refused. */
	if (image_open(argv[optind], (run == RUN_CHECK ? O_RDONLY : O_RDWR) | O_EXCL))
		return EXIT_OPERATIONAL;
	if (img.blocks < 2)
		fatal("%s: no vsmfs file system found (device too small)", img.path);

	if (!check_super())
		goto done;
	/* Every check is always complete: nothing is skipped in either case. */
	if (le32_to_cpu(sb.s_state) & VSMFS_STATE_ERROR)
		info("the module recorded %u errors while mounted (last in %.*s, inode %" PRIu64
		     "): checking everything", le32_to_cpu(sb.s_error_count),
		     VSMFS_ERROR_FUNC_LEN, (const char *)sb.s_last_error_func,
		     (u64)le64_to_cpu(sb.s_last_error_ino));
	check_journal();
	check_badlist();
	check_ptable();
	check_imap();
	check_inodes();
	check_dirs();
	lbitmap = read_region(L.lbitmap_start, L.lbitmap_blocks);
	ibitmap = read_region(L.ibitmap_start, L.ibitmap_blocks);
	lbitmap_dirty = calloc(L.lbitmap_blocks, 1);
	ibitmap_dirty = calloc(L.ibitmap_blocks, 1);
	if (!lbitmap_dirty || !ibitmap_dirty)
		fatal("out of memory");
	check_links();
	if (norphans)
		info("%" PRIu64 " orphan inodes (unlinked while open, or by fast-commit records),"
		     " which the next mount frees", norphans);

	if (owners_incomplete)
		info("the owners of some logical pages are unknown: leaked pages not checked");
	check_bitmap("logical page bitmap", "logical page", lbitmap, lbitmap_dirty,
		     L.lbitmap_blocks, L.lpages, want_page, &used_pages);
	check_bitmap("inode bitmap", "inode", ibitmap, ibitmap_dirty, L.ibitmap_blocks,
		     L.inodes, want_inode, &used_inodes);
	check_unused_frames();
	check_unwritten_free();
	check_bad_pages();
	report_bad_frames();
	if (L.sparse)
		count_frames(&used_frames, &frames);

	if (run != RUN_CHECK) {
		if (badlist_dirty) {
			write_blocks(VSMFS_BADLIST_BLOCK, 1, badlist);
			dev_sync();
		}
		/* Inodes first: a crash in between leaves leaks, never a double use. */
		write_dirty(L.itable_start, L.itable_blocks, itable, itable_dirty);
		dev_sync();
		write_dirty(L.lbitmap_start, L.lbitmap_blocks, lbitmap, lbitmap_dirty);
		write_dirty(L.ibitmap_start, L.ibitmap_blocks, ibitmap, ibitmap_dirty);
		dev_sync();
		/* Frames to free logical pages: a crash before leaves them leaked. */
		write_dirty(L.ptable_start, L.ptable_blocks, (const u8 *)ptable, ptable_dirty);
		dev_sync();
	}
done:
	clean = le32_to_cpu(sb.s_state) & VSMFS_STATE_CLEAN;
	if (L.inodes && !nstruct && !clean) {
		if (run != RUN_CHECK && !nleft) {
			sb.s_state = cpu_to_le32(le32_to_cpu(sb.s_state) | VSMFS_STATE_CLEAN);
			sb_write = true;
			info("file system was not cleanly unmounted: marked clean");
		} else {
			info("file system was not cleanly unmounted");
		}
	}
	/*
	 * The recorded error state is cleared by a check that leaves nothing
	 * wrong: the errors the module saw were repaired, or are gone.
	 */
	if (L.inodes && !nstruct && !nleft &&
	    (le32_to_cpu(sb.s_state) & VSMFS_STATE_ERROR || sb.s_error_count) &&
	    problem(FIX_PREEN, "superblock: error state recorded while mounted (%u errors)",
		    le32_to_cpu(sb.s_error_count))) {
		sb_clear_errors(&sb);
		sb_write = true;
	}
	if (sb_write && run != RUN_CHECK)
		write_super();
	if (nhidden)
		info("%" PRIu64 " further problems not shown", nhidden);
	printf("%s: ", img.path);
	if (L.inodes && L.sparse)
		printf("%" PRIu64 "/%" PRIu64 " inodes, %" PRIu64 "/%" PRIu64 " logical pages, %"
		       PRIu64 "/%" PRIu64 " frames in use; ", used_inodes, L.inodes - 1,
		       used_pages, L.lpages - 1, used_frames, frames);
	else if (L.inodes)
		printf("%" PRIu64 "/%" PRIu64 " inodes, %" PRIu64 "/%" PRIu64
		       " logical pages in use; ", used_inodes, L.inodes - 1, used_pages,
		       L.data_pages - 1);
	if (!nfixed && !nleft)
		printf("no errors found\n");
	else if (!nleft)
		printf("%" PRIu64 " errors repaired\n", nfixed);
	else
		printf("%" PRIu64 " errors repaired, %" PRIu64 " left uncorrected%s\n",
		       nfixed, nleft, nfixable && run != RUN_YES ? " (run with -y to repair)" : "");
	if (close(img.fd))
		fatal("%s: close: %s", img.path, strerror(errno));
	ret = (nfixed ? EXIT_FIXED : 0) | (nleft ? EXIT_UNCORRECTED : 0);
	return ret;
}
