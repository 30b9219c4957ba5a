// SPDX-License-Identifier: GPL-2.0
/*
 * User-space unit tests of the shared format code (fs/vsmfs/verify.c):
 * checksum, name hash, layout computation over many device sizes (sparse
 * and not), the superblock verifier against good and damaged superblocks,
 * and the checks of directory entries, xattr blocks, inodes, the journal
 * superblock (with fast-commit areas or not) and fast-commit records, each
 * against a sound structure and every kind of damage it finds (a record
 * also torn at every byte); the commit number j_checkpoint carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vsmfs_format.h"
#include "verify.h"

#include "check.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Change a copy of sb, checksum it, expect vsmfs_sb_check() to refuse it. */
#define MUTATE_SB(stmt, what) do {					\
	bad = sb;							\
	stmt;								\
	bad.s_checksum = cpu_to_le32(vsmfs_sb_csum(&bad));		\
	CHECK(vsmfs_sb_check(&bad, blocks) != NULL, "%s refused", what);	\
} while (0)

static void make_sb(struct vsmfs_dsb *sb, u64 blocks)
{
	struct vsmfs_layout l;
	const char *why;

	why = vsmfs_compute_layout(&l, blocks, vsmfs_default_journal_blocks(blocks),
				   vsmfs_default_inodes(blocks), VSMFS_FEATURE_INCOMPAT_SB_LAST);
	CHECK(!why, "layout of %llu blocks: %s", (unsigned long long)blocks, why);
	memset(sb, 0, sizeof(*sb));
	sb->s_magic = cpu_to_le32(VSMFS_MAGIC);
	sb->s_feature_incompat = cpu_to_le32(VSMFS_FEATURE_INCOMPAT_SB_LAST);
	sb->s_version = cpu_to_le32(VSMFS_FORMAT_VERSION);
	sb->s_block_size = cpu_to_le32(VSMFS_BLOCK_SIZE);
	sb->s_vsp_pages = cpu_to_le32(VSMFS_VSP_PAGES);
	sb->s_inode_size = cpu_to_le32(VSMFS_INODE_SIZE);
	sb->s_root_ino = cpu_to_le64(VSMFS_ROOT_INO);
	vsmfs_layout_to_sb(&l, sb);
	sb->s_checksum = cpu_to_le32(vsmfs_sb_csum(sb));
}

static void test_crc(void)
{
	/* The standard CRC-32C check value. */
	CHECK((crc32c(~0U, "123456789", 9) ^ ~0U) == 0xe3069283U, "crc32c check value");
}

static void test_layouts(void)
{
	static const u64 sizes_mib[] = { 16, 17, 31, 64, 100, 256, 1000, 1024, 4096, 65536 };
	size_t i;

	for (i = 0; i < 2 * sizeof(sizes_mib) / sizeof(sizes_mib[0]); i++) {
		/* Each size with the backup in the last block, then in block 1. */
		bool last = i % 2 == 0;
		u64 blocks = sizes_mib[i / 2] << (20 - VSMFS_BLOCK_SHIFT);
		u64 end = last ? blocks - 1 : blocks;
		struct vsmfs_layout l;
		const char *why;

		why = vsmfs_compute_layout(&l, blocks, vsmfs_default_journal_blocks(blocks),
					   vsmfs_default_inodes(blocks),
					   last ? VSMFS_FEATURE_INCOMPAT_SB_LAST : 0);
		CHECK(!why, "%llu MiB: %s", (unsigned long long)sizes_mib[i / 2], why);
		if (why)
			continue;
		CHECK(l.sb_backup == (last ? blocks - 1 : VSMFS_SB_BACKUP_BLOCK),
		      "backup superblock at block %llu", (unsigned long long)l.sb_backup);
		CHECK(l.journal_start == 2, "journal after the superblocks");
		CHECK(l.itable_start == l.journal_start + l.journal_blocks, "itable follows journal");
		CHECK(l.imap_start == l.itable_start + l.itable_blocks, "imap follows itable");
		CHECK(l.ibitmap_start == l.imap_start + l.imap_blocks, "ibitmap follows imap");
		CHECK(l.ptable_start == l.ibitmap_start + l.ibitmap_blocks, "ptable follows ibitmap");
		CHECK(l.lbitmap_start == l.ptable_start + l.ptable_blocks, "lbitmap follows ptable");
		CHECK(l.data_start >= l.lbitmap_start + l.lbitmap_blocks, "data after lbitmap");
		CHECK(l.data_start % VSMFS_VSP_PAGES == 0, "data 2 MiB aligned");
		CHECK(l.data_start + l.data_pages <= end, "data within the device, before a backup");
		CHECK(l.ptable_blocks * VSMFS_BLOCK_SIZE / 8 >= l.data_pages, "page table covers data");
		CHECK(l.lbitmap_blocks * VSMFS_BLOCK_SIZE * 8 >= l.data_pages, "bitmap covers data");
		CHECK(l.itable_blocks * VSMFS_INODES_PER_BLOCK == l.inodes, "itable holds inodes");
		/* No waste beyond alignment: one more page would not fit. */
		CHECK(end - (l.data_start + l.data_pages) < VSMFS_VSP_PAGES + 2,
		      "%llu MiB: %llu blocks unused at the end", (unsigned long long)sizes_mib[i / 2],
		      (unsigned long long)(end - l.data_start - l.data_pages));
	}
	{
		struct vsmfs_layout l;

		CHECK(vsmfs_compute_layout(&l, 1000, 64, 64, 0) != NULL, "tiny device refused");
		CHECK(vsmfs_compute_layout(&l, 8192, 8000, 64, 0) != NULL, "huge journal refused");
		CHECK(vsmfs_compute_layout(&l, 8192, 64, 65, 0) != NULL, "odd inode count refused");
	}
}

static void test_sb_check(void)
{
	struct vsmfs_layout l;
	struct vsmfs_dsb sb, bad;
	u64 blocks = 262144;

	make_sb(&sb, blocks);
	CHECK(!vsmfs_sb_check(&sb, blocks), "good superblock accepted");
	CHECK(vsmfs_sb_check(&sb, blocks - 1) != NULL, "device smaller than fs refused");

#define MUTATE(stmt, what) do {						\
	bad = sb;							\
	stmt;								\
	bad.s_checksum = cpu_to_le32(vsmfs_sb_csum(&bad));		\
	CHECK(vsmfs_sb_check(&bad, blocks) != NULL, "%s refused", what);	\
} while (0)
	MUTATE(bad.s_magic = 0, "bad magic");
	MUTATE(bad.s_version = cpu_to_le32(99), "unknown version");
	MUTATE(bad.s_feature_incompat = cpu_to_le32(1U << 31), "unknown incompat feature");
	MUTATE(bad.s_block_size = cpu_to_le32(8192), "block size");
	MUTATE(bad.s_blocks = cpu_to_le64(1ULL << 50), "absurd size");
	MUTATE(bad.s_inodes = cpu_to_le64(3), "absurd inode count");
	MUTATE(bad.s_data_start = cpu_to_le64(5), "moved data region");
	MUTATE(bad.s_itable_start = cpu_to_le64(1), "itable over the superblock");
	MUTATE(bad.s_root_ino = 0, "root inode 0");
	bad = sb;
	bad.s_mount_count = cpu_to_le32(7);
	CHECK(!strcmp(vsmfs_sb_check(&bad, blocks), "superblock checksum mismatch"),
	      "stale checksum reported as such");

	/* A backup is accepted only at the place its own layout gives it. */
	CHECK(!vsmfs_sb_backup_check(&sb, blocks - 1, blocks), "backup in the last block");
	CHECK(vsmfs_sb_backup_check(&sb, VSMFS_SB_BACKUP_BLOCK, blocks) != NULL,
	      "sb_last backup in block 1 refused");
	CHECK(vsmfs_sb_backup_guess(blocks, 0) == blocks - 1 &&
	      vsmfs_sb_backup_guess(blocks, 1) == VSMFS_SB_BACKUP_BLOCK, "backup places");
	bad = sb;
	bad.s_feature_incompat = 0;
	vsmfs_compute_layout(&l, blocks, le64_to_cpu(sb.s_journal_blocks),
			     le64_to_cpu(sb.s_inodes), 0);
	vsmfs_layout_to_sb(&l, &bad);
	bad.s_checksum = cpu_to_le32(vsmfs_sb_csum(&bad));
	CHECK(!vsmfs_sb_check(&bad, blocks), "superblock without sb_last accepted");
	CHECK(!vsmfs_sb_backup_check(&bad, VSMFS_SB_BACKUP_BLOCK, blocks), "old backup in block 1");
	CHECK(vsmfs_sb_backup_check(&bad, blocks - 1, blocks) != NULL,
	      "old backup in the last block refused");
	CHECK(l.data_start + l.data_pages > le64_to_cpu(sb.s_data_start) +
	      le64_to_cpu(sb.s_data_pages), "sb_last gives the last block to the backup");
}

/* A superblock of a sparse file system of @blocks with @lpages logical pages. */
static const char *make_sparse_sb(struct vsmfs_dsb *sb, u64 blocks, u64 lpages)
{
	const u32 incompat = VSMFS_FEATURE_INCOMPAT_SB_LAST | VSMFS_FEATURE_INCOMPAT_SPARSE;
	struct vsmfs_layout l;
	const char *why;

	make_sb(sb, blocks);
	why = vsmfs_compute_layout_sparse(&l, blocks, vsmfs_default_journal_blocks(blocks),
					  vsmfs_default_inodes(blocks), incompat, lpages);
	if (why)
		return why;
	sb->s_feature_incompat = cpu_to_le32(incompat);
	vsmfs_layout_to_sb(&l, sb);
	sb->s_checksum = cpu_to_le32(vsmfs_sb_csum(sb));
	return NULL;
}

static void test_sparse_layouts(void)
{
	static const u64 sizes_mib[] = { 16, 17, 31, 64, 100, 256, 1000, 1024, 4096, 65536 };
	const u32 sparse = VSMFS_FEATURE_INCOMPAT_SPARSE;
	size_t i;

	CHECK(vsmfs_default_lpages(16384) == 32768, "default: twice the blocks");
	CHECK(vsmfs_default_lpages(16383) == 32768, "default: whole superpages");
	CHECK(vsmfs_default_lpages(1ULL << 40) == VSMFS_MAX_LPAGES, "default: at most 2^40");

	for (i = 0; i < 2 * sizeof(sizes_mib) / sizeof(sizes_mib[0]); i++) {
		bool last = i % 2 == 0;
		u64 blocks = sizes_mib[i / 2] << (20 - VSMFS_BLOCK_SHIFT);
		u64 end = last ? blocks - 1 : blocks, lp = vsmfs_default_lpages(blocks);
		u32 incompat = sparse | (last ? VSMFS_FEATURE_INCOMPAT_SB_LAST : 0);
		u64 j = vsmfs_default_journal_blocks(blocks), n = vsmfs_default_inodes(blocks);
		struct vsmfs_layout l, flat;
		const char *why;

		why = vsmfs_compute_layout_sparse(&l, blocks, j, n, incompat, lp);
		CHECK(!why, "%llu MiB sparse: %s", (unsigned long long)sizes_mib[i / 2], why);
		if (why)
			continue;
		CHECK(!vsmfs_compute_layout(&flat, blocks, j, n, incompat & ~sparse),
		      "%llu MiB not sparse", (unsigned long long)sizes_mib[i / 2]);
		CHECK(l.sparse && l.lpages == lp, "sparse layout keeps its logical pages");
		CHECK(!flat.sparse && flat.lpages == flat.data_pages,
		      "without the feature, one logical page a frame");
		CHECK(l.ptable_start == flat.ptable_start, "page table at the same place");
		CHECK(l.ptable_blocks == lp / VSMFS_PTES_PER_BLOCK, "page table covers every"
		      " logical page: %llu blocks", (unsigned long long)l.ptable_blocks);
		CHECK(l.lbitmap_start == l.ptable_start + l.ptable_blocks,
		      "lbitmap follows ptable");
		CHECK(l.lbitmap_blocks == DIV_ROUND_UP(lp, VSMFS_BLOCK_SIZE * 8ULL),
		      "bitmap covers every logical page");
		CHECK(l.data_start >= l.lbitmap_start + l.lbitmap_blocks, "data after lbitmap");
		CHECK(l.data_start % VSMFS_VSP_PAGES == 0, "data 2 MiB aligned");
		CHECK(l.data_start + l.data_pages <= end, "data within the device");
		CHECK(end - (l.data_start + l.data_pages) < VSMFS_VSP_PAGES + 2,
		      "%llu MiB sparse: %llu blocks unused at the end",
		      (unsigned long long)sizes_mib[i / 2],
		      (unsigned long long)(end - l.data_start - l.data_pages));
		CHECK(l.data_pages <= flat.data_pages && l.data_pages < l.lpages,
		      "fewer frames than logical pages");
		/* As many logical pages as frames, rounded up, is the least. */
		lp = roundup(flat.data_pages, (u64)VSMFS_VSP_PAGES);
		CHECK(!vsmfs_compute_layout_sparse(&l, blocks, j, n, incompat, lp) &&
		      l.lpages >= l.data_pages, "%llu MiB: %llu logical pages accepted",
		      (unsigned long long)sizes_mib[i / 2], (unsigned long long)lp);
		CHECK(vsmfs_compute_layout_sparse(&l, blocks, j, n, incompat,
						  lp - VSMFS_VSP_PAGES) != NULL,
		      "%llu MiB: fewer logical pages than frames refused",
		      (unsigned long long)sizes_mib[i / 2]);
	}
}

static void test_sparse_sb(void)
{
	const u32 both = VSMFS_FEATURE_INCOMPAT_SB_LAST | VSMFS_FEATURE_INCOMPAT_SPARSE;
	u64 blocks = 262144, lp = vsmfs_default_lpages(blocks);
	u64 j = vsmfs_default_journal_blocks(blocks), n = vsmfs_default_inodes(blocks);
	struct vsmfs_layout l, back;
	struct vsmfs_dsb sb, bad;
	const char *why;

	why = make_sparse_sb(&sb, blocks, lp);
	CHECK(!why, "sparse superblock: %s", why);
	CHECK(le64_to_cpu(sb.s_lpages) == lp, "s_lpages stored");
	CHECK(!vsmfs_sb_check(&sb, blocks), "sparse superblock accepted: %s",
	      vsmfs_sb_check(&sb, blocks));
	CHECK(!vsmfs_sb_backup_check(&sb, blocks - 1, blocks), "sparse backup accepted");
	vsmfs_compute_layout_sparse(&l, blocks, j, n, both, lp);
	memset(&back, 0xa5, sizeof(back));
	vsmfs_layout_of_sb(&back, &sb);
	CHECK(back.sparse && back.lpages == lp && back.data_pages == l.data_pages &&
	      back.ptable_blocks == l.ptable_blocks && back.lbitmap_blocks == l.lbitmap_blocks &&
	      back.data_start == l.data_start, "layout of the superblock round trips");
	make_sb(&bad, blocks);
	CHECK(!le64_to_cpu(bad.s_lpages), "s_lpages 0 without the feature");
	vsmfs_layout_of_sb(&back, &bad);
	CHECK(!back.sparse && back.lpages == back.data_pages, "layout without the feature");

	/* Refused by the layout itself. */
	CHECK(vsmfs_compute_layout_sparse(&l, blocks, j, n, both, lp + 1) != NULL,
	      "logical pages not a multiple of 512 refused");
	CHECK(vsmfs_compute_layout_sparse(&l, blocks, j, n, both, VSMFS_VSP_PAGES) != NULL,
	      "fewer logical pages than frames refused");
	CHECK(vsmfs_compute_layout_sparse(&l, blocks, j, n, VSMFS_FEATURE_INCOMPAT_SB_LAST,
					  lp) != NULL, "logical pages without the feature refused");
	CHECK(vsmfs_compute_layout_sparse(&l, blocks, j, n, both, 0) != NULL,
	      "the feature without logical pages refused");
	CHECK(vsmfs_compute_layout_sparse(&l, blocks, j, n, both, VSMFS_MAX_LPAGES + 512) != NULL,
	      "more than 2^40 logical pages refused");
	CHECK(vsmfs_compute_layout_sparse(&l, blocks, j, n, both, VSMFS_MAX_LPAGES) != NULL,
	      "a page table larger than the device refused");
	CHECK(make_sparse_sb(&bad, blocks, lp + 1) != NULL, "odd count refused by mkfs's path");

	/* Refused by the superblock verifier. */
	MUTATE_SB(bad.s_lpages = cpu_to_le64(lp + 1), "s_lpages not a multiple of 512");
	MUTATE_SB(bad.s_lpages = cpu_to_le64(lp + VSMFS_VSP_PAGES),
		  "s_lpages other than the region table says");
	MUTATE_SB(bad.s_lpages = cpu_to_le64(VSMFS_VSP_PAGES), "s_lpages below the frames");
	MUTATE_SB(bad.s_lpages = 0, "the sparse feature with s_lpages 0");
	MUTATE_SB(bad.s_feature_incompat = cpu_to_le32(VSMFS_FEATURE_INCOMPAT_SB_LAST),
		  "s_lpages with the feature clear");
	make_sb(&bad, blocks);
	bad.s_lpages = cpu_to_le64(lp);
	bad.s_checksum = cpu_to_le32(vsmfs_sb_csum(&bad));
	CHECK(vsmfs_sb_check(&bad, blocks) != NULL, "s_lpages on a superblock without the feature");
}

static void test_name_hash(void)
{
	/* Published FNV-1a 32-bit test vectors. */
	CHECK(vsmfs_name_hash("", 0) == 0x811c9dc5U, "hash of the empty name");
	CHECK(vsmfs_name_hash("a", 1) == 0xe40c292cU, "hash of \"a\"");
	CHECK(vsmfs_name_hash("foobar", 6) == 0xbf9cf968U, "hash of \"foobar\"");
	/* The colliding pair tests/suites/posix/006-bigdir.sh relies on. */
	CHECK(vsmfs_name_hash("c001113d", 8) == vsmfs_name_hash("c00bd088", 8),
	      "colliding names");
}

static void test_mount_opts(void)
{
	struct vsmfs_dsb sb;
	const char *why;

	make_sb(&sb, 16384);
	CHECK(!vsmfs_sb_mount_opts_check(&sb), "no options, no feature");
	sb.s_feature_compat = cpu_to_le32(VSMFS_FEATURE_COMPAT_MOUNT_OPTS);
	why = vsmfs_sb_mount_opts_check(&sb);
	CHECK(why && strstr(why, "empty"), "feature without options refused: %s", why);
	strcpy((char *)sb.s_mount_opts, "errors=continue,data=inplace");
	CHECK(!vsmfs_sb_mount_opts_check(&sb), "options with the feature");
	sb.s_mount_opts[VSMFS_MOUNT_OPTS_LEN - 1] = 'x';
	why = vsmfs_sb_mount_opts_check(&sb);
	CHECK(why && strstr(why, "not zero padded"), "junk after the options refused: %s", why);
	memset(sb.s_mount_opts, 'a', VSMFS_MOUNT_OPTS_LEN);
	why = vsmfs_sb_mount_opts_check(&sb);
	CHECK(why && strstr(why, "not terminated"), "unterminated options refused: %s", why);
	memset(sb.s_mount_opts, 0, VSMFS_MOUNT_OPTS_LEN);
	strcpy((char *)sb.s_mount_opts, "errors=continue data=inplace");
	why = vsmfs_sb_mount_opts_check(&sb);
	CHECK(why && strstr(why, "space"), "a space refused: %s", why);
	sb.s_feature_compat = 0;
	why = vsmfs_sb_mount_opts_check(&sb);
	CHECK(why && strstr(why, "without the mount_opts feature"),
	      "options without the feature refused: %s", why);
}

/* @why is a reason that contains @want (NULL: none expected). */
#define CHECK_WHY(why, want, what) do {						\
	const char *__w = (why), *__x = (want);					\
	if (__x)								\
		CHECK(__w && strstr(__w, __x), "%s: '%s', expected '%s'", what,	\
		      __w ? __w : "(none)", __x);					\
	else									\
		CHECK(!__w, "%s: sound, refused: %s", what, __w);		\
} while (0)

static u8 blk[VSMFS_BLOCK_SIZE] __attribute__((aligned(8)));

/* Put an entry for @name at @off of blk, taking @rec bytes. */
static struct vsmfs_ddirent *put_dirent(unsigned int off, unsigned int rec, u64 ino,
					const char *name)
{
	struct vsmfs_ddirent *de = (struct vsmfs_ddirent *)(blk + off);

	memset(de, 0, rec < VSMFS_DIRENT_BASE ? VSMFS_DIRENT_BASE : rec);
	de->d_ino = cpu_to_le64(ino);
	de->d_rec_len = cpu_to_le16(rec);
	de->d_name_len = strlen(name);
	de->d_type = 8;
	memcpy(de->d_name, name, strlen(name));
	de->d_hash = cpu_to_le32(vsmfs_name_hash(name, strlen(name)));
	return de;
}

static void test_dirent(void)
{
	struct vsmfs_ddirent *de;

	memset(blk, 0, sizeof(blk));
	de = put_dirent(0, 24, 5, "file");
	CHECK_WHY(vsmfs_dirent_check(de, 0), NULL, "an entry");
	CHECK_WHY(vsmfs_dirent_name_check(de), NULL, "its name");
	de = put_dirent(24, VSMFS_BLOCK_SIZE - 24, 0, "");
	CHECK_WHY(vsmfs_dirent_check(de, 24), NULL, "a free entry to the end of the block");
	CHECK(vsmfs_dirent_len(1) == 24 && vsmfs_dirent_len(8) == 24 &&
	      vsmfs_dirent_len(9) == 32, "entry lengths");

	de = put_dirent(0, 13, 5, "f");
	CHECK_WHY(vsmfs_dirent_check(de, 0), "bad record length", "record shorter than a header");
	CHECK(!vsmfs_dirent_rec_ok(de, 0), "record shorter than a header: walk stops");
	de = put_dirent(0, 28, 5, "f");
	CHECK_WHY(vsmfs_dirent_check(de, 0), "bad record length", "unaligned record");
	de = put_dirent(4080, 24, 5, "f");
	CHECK_WHY(vsmfs_dirent_check(de, 4080), "bad record length", "record past the block");
	de = (struct vsmfs_ddirent *)(blk + VSMFS_BLOCK_SIZE - 16);
	CHECK(vsmfs_dirent_rec_ok(de, VSMFS_BLOCK_SIZE - 16) == (le16_to_cpu(de->d_rec_len) == 16),
	      "last 16 bytes");
	/* The header itself would cross the end: nothing of it is read. */
	CHECK_WHY(vsmfs_dirent_check((struct vsmfs_ddirent *)(blk + VSMFS_BLOCK_SIZE - 8),
				     VSMFS_BLOCK_SIZE - 8), "bad record length", "header past the block");
	de = put_dirent(0, 24, 5, "");
	CHECK_WHY(vsmfs_dirent_check(de, 0), "without a name", "entry in use without a name");
	de->d_ino = 0;
	CHECK_WHY(vsmfs_dirent_check(de, 0), NULL, "a free entry without a name");
	de = put_dirent(0, 24, 5, "ninechars");
	CHECK_WHY(vsmfs_dirent_check(de, 0), "does not fit", "name longer than the record");
	CHECK(vsmfs_dirent_rec_ok(de, 0), "name longer than the record: walk goes on");

	de = put_dirent(0, 24, 5, "a/b");
	CHECK_WHY(vsmfs_dirent_name_check(de), "'/' or NUL", "a slash");
	de = put_dirent(0, 24, 5, "a");
	de->d_name[0] = 0;
	de->d_hash = cpu_to_le32(vsmfs_name_hash(de->d_name, 1));
	CHECK_WHY(vsmfs_dirent_name_check(de), "'/' or NUL", "a NUL");
	de = put_dirent(0, 24, 5, ".");
	CHECK_WHY(vsmfs_dirent_name_check(de), "implicit", "'.'");
	de = put_dirent(0, 24, 5, "..");
	CHECK_WHY(vsmfs_dirent_name_check(de), "implicit", "'..'");
	de = put_dirent(0, 24, 5, "...");
	CHECK_WHY(vsmfs_dirent_name_check(de), NULL, "'...'");
	de->d_hash = cpu_to_le32(le32_to_cpu(de->d_hash) ^ 1);
	CHECK_WHY(vsmfs_dirent_name_check(de), "hash", "a wrong hash");
}

/* Append an attribute to the xattr block in blk. */
static void put_xattr(int index, const char *name, unsigned int vlen)
{
	struct vsmfs_dxattr_hdr *h = (struct vsmfs_dxattr_hdr *)blk;
	unsigned int used = le16_to_cpu(h->x_used), nl = strlen(name);
	struct vsmfs_dxattr_entry *e = (struct vsmfs_dxattr_entry *)(blk + used);

	e->e_name_index = index;
	e->e_name_len = nl;
	e->e_value_len = cpu_to_le16(vlen);
	memcpy(e->e_name, name, nl);
	memset(e->e_name + nl, 'v', vlen);
	h->x_used = cpu_to_le16(used + vsmfs_xentry_size(nl, vlen));
	h->x_count = cpu_to_le16(le16_to_cpu(h->x_count) + 1);
}

static void make_xattr(void)
{
	struct vsmfs_dxattr_hdr *h = (struct vsmfs_dxattr_hdr *)blk;

	memset(blk, 0, sizeof(blk));
	h->x_magic = cpu_to_le32(VSMFS_XATTR_MAGIC);
	h->x_used = cpu_to_le16(sizeof(*h));
	h->x_ino = cpu_to_le64(12);
	put_xattr(VSMFS_XATTR_INDEX_USER, "color", 3);
	put_xattr(VSMFS_XATTR_INDEX_ACL_ACCESS, "", 28);
	put_xattr(VSMFS_XATTR_INDEX_SECURITY, "selinux", 0);
	put_xattr(VSMFS_XATTR_INDEX_USER, "colour", 5);
}

/* The first entry, at the header's end. */
#define XE0	((struct vsmfs_dxattr_entry *)(blk + sizeof(struct vsmfs_dxattr_hdr)))

static void test_xattr(void)
{
	struct vsmfs_dxattr_hdr *h = (struct vsmfs_dxattr_hdr *)blk;
	struct vsmfs_xattr_scan xs;
	const struct vsmfs_dxattr_entry *e;
	unsigned int off, n;

	memset(blk, 0, sizeof(blk));
	h->x_magic = cpu_to_le32(VSMFS_XATTR_MAGIC);
	h->x_used = cpu_to_le16(sizeof(*h));
	h->x_ino = cpu_to_le64(12);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), NULL, "an empty block");
	make_xattr();
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), NULL, "four attributes");
	CHECK(xs.count == 4 && xs.derivable, "four attributes: %u counted", xs.count);
	for (off = sizeof(*h), n = 0; (e = vsmfs_xattr_next(blk, &off, le16_to_cpu(h->x_used)));)
		n++;
	CHECK(n == 4 && off == le16_to_cpu(h->x_used), "walk: %u entries, end %u", n, off);

	make_xattr();
	h->x_magic = 0;
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), "magic", "bad magic");
	CHECK(!xs.derivable, "bad magic: not derivable");
	make_xattr();
	h->x_used = cpu_to_le16(VSMFS_BLOCK_SIZE + 4);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), "used size", "used past the block");
	make_xattr();
	h->x_used = cpu_to_le16(le16_to_cpu(h->x_used) - 2);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), "used size", "unaligned used size");
	make_xattr();
	h->x_used = cpu_to_le16(le16_to_cpu(h->x_used) - 4);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), "crosses", "last entry past the used size");
	CHECK(!xs.derivable && xs.bad > sizeof(*h), "crossing entry at %u", xs.bad);
	make_xattr();
	XE0->e_value_len = cpu_to_le16(VSMFS_BLOCK_SIZE);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), "crosses", "value past the block");
	CHECK(xs.bad == sizeof(*h), "bad entry at %u", xs.bad);
	make_xattr();
	XE0->e_name_index = 9;
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), "name index", "unknown namespace");
	make_xattr();
	XE0->e_name_index = 0;
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), "name index", "namespace 0");
	make_xattr();
	XE0->e_name_index = VSMFS_XATTR_INDEX_ACL_DEFAULT;
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), "name on an ACL", "an ACL with a name");
	make_xattr();
	XE0->e_name_len = 0;
	XE0->e_value_len = cpu_to_le16(3 + 5);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), "empty name", "user. without a name");
	make_xattr();
	put_xattr(VSMFS_XATTR_INDEX_USER, "color", 1);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), "two entries", "one attribute twice");
	CHECK(!xs.derivable, "one attribute twice: not derivable");
	make_xattr();
	put_xattr(VSMFS_XATTR_INDEX_TRUSTED, "color", 1);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, NULL), NULL, "one name in two namespaces");

	/* What follows from sound entries. */
	make_xattr();
	h->x_count = cpu_to_le16(7);
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), "count", "wrong count");
	CHECK(xs.derivable && xs.count == 4, "wrong count: derivable, %u entries", xs.count);
	make_xattr();
	CHECK_WHY(vsmfs_xattr_block_check(blk, 13, &xs), "another inode", "another owner");
	CHECK(xs.derivable, "another owner: derivable");
	make_xattr();
	h->x_reserved[15] = 1;
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), "reserved", "reserved bytes");
	CHECK(xs.derivable, "reserved bytes: derivable");
	make_xattr();
	blk[VSMFS_BLOCK_SIZE - 1] = 1;
	CHECK_WHY(vsmfs_xattr_block_check(blk, 12, &xs), "past the used size", "junk at the end");
	CHECK(xs.derivable, "junk at the end: derivable");
}

static void make_dinode(struct vsmfs_dinode *di, u16 mode, u64 size)
{
	memset(di, 0, sizeof(*di));
	di->i_mode = cpu_to_le16(mode);
	di->i_nlink = cpu_to_le32(1);
	di->i_size = cpu_to_le64(size);
}

static void test_dinode(void)
{
	static const u16 types[] = { 0010644, 0020644, 0040755, 0060644, 0100644, 0120777,
				     0140755 };
	u64 max_file = VSMFS_IDX_KEYS << VSMFS_VSP_SHIFT;
	struct vsmfs_dinode di;
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		make_dinode(&di, types[i], types[i] >> 12 == 10 ? 1 : 0);
		if (types[i] >> 12 == 10)
			di.i_inline[0] = 'x';
		CHECK(vsmfs_dinode_type(&di) == types[i] >> 12, "type of mode 0%o", types[i]);
		CHECK_WHY(vsmfs_dinode_check(&di), NULL, "an inode");
		CHECK_WHY(vsmfs_dinode_fields_check(&di), NULL, "its fields");
	}
	make_dinode(&di, 0170644, 0);
	CHECK(!vsmfs_dinode_type(&di), "no type in mode 0170644");
	CHECK_WHY(vsmfs_dinode_check(&di), "invalid mode", "mode 0170644");
	make_dinode(&di, 0, 0);
	CHECK_WHY(vsmfs_dinode_check(&di), "invalid mode", "mode 0");

	make_dinode(&di, 0100644, max_file);
	CHECK_WHY(vsmfs_dinode_check(&di), NULL, "the largest file");
	make_dinode(&di, 0100644, max_file + 1);
	CHECK_WHY(vsmfs_dinode_check(&di), "largest file", "a file one byte larger");
	make_dinode(&di, 0100644, ~0ULL);
	CHECK_WHY(vsmfs_dinode_check(&di), "largest file", "a negative size");
	make_dinode(&di, 0040755, 5000);
	CHECK_WHY(vsmfs_dinode_check(&di), "whole number of blocks", "directory of 5000 bytes");
	make_dinode(&di, 0040755, (VSMFS_IDX_KEYS + 1) << VSMFS_BLOCK_SHIFT);
	CHECK_WHY(vsmfs_dinode_check(&di), "whole number of blocks", "directory past the index");
	make_dinode(&di, 0040755, VSMFS_IDX_KEYS << VSMFS_BLOCK_SHIFT);
	CHECK_WHY(vsmfs_dinode_check(&di), NULL, "largest directory");
	make_dinode(&di, 0120777, 0);
	CHECK_WHY(vsmfs_dinode_check(&di), "symlink size", "empty symlink");
	make_dinode(&di, 0120777, VSMFS_BLOCK_SIZE);
	CHECK_WHY(vsmfs_dinode_check(&di), "symlink size", "symlink of a block");
	make_dinode(&di, 0120777, VSMFS_BLOCK_SIZE - 1);
	CHECK_WHY(vsmfs_dinode_check(&di), NULL, "long symlink");
	CHECK_WHY(vsmfs_dinode_fields_check(&di), NULL, "long symlink's fields");

#define FIELD_CASE(mode, size, stmt, want) do {				\
	make_dinode(&di, mode, size);					\
	stmt;								\
	CHECK_WHY(vsmfs_dinode_check(&di), NULL, want " (core)");	\
	CHECK_WHY(vsmfs_dinode_fields_check(&di), want, want);		\
} while (0)
	FIELD_CASE(0100644, 0, di.i_reserved0 = cpu_to_le16(1), "reserved fields");
	FIELD_CASE(0100644, 0, di.i_reserved2[63] = 1, "reserved fields");
	FIELD_CASE(0100644, 0, di.i_flags = cpu_to_le32(0x80), "unknown flags");
	FIELD_CASE(0010644, 0, di.i_flags = cpu_to_le32(VSMFS_IFLAG_TRUNCATING),
		   "truncation flag");
	FIELD_CASE(0040755, 0, di.i_tail_key = cpu_to_le32(1), "tail key");
	FIELD_CASE(0100644, 0, di.i_parent = cpu_to_le64(1), "parent");
	FIELD_CASE(0100644, 0, di.i_mtime_ns = cpu_to_le32(1000000000), "nanoseconds");
	FIELD_CASE(0100644, 0, di.i_rdev = cpu_to_le32(0x103), "device number");
	FIELD_CASE(0120777, 3, memcpy(di.i_inline, "a\0b", 3), "fast symlink target");
	FIELD_CASE(0010644, 0, di.i_ind = cpu_to_le64(9), "index entries");
#undef FIELD_CASE
	make_dinode(&di, 0100644, 5);
	di.i_flags = cpu_to_le32(VSMFS_IFLAG_ALL);
	di.i_tail_key = cpu_to_le32(3);
	CHECK_WHY(vsmfs_dinode_fields_check(&di), NULL, "every flag and a tail key on a file");
	make_dinode(&di, 0020644, 0);
	di.i_rdev = cpu_to_le32(0x103);
	CHECK_WHY(vsmfs_dinode_fields_check(&di), NULL, "a device number on a device");
	make_dinode(&di, 0010644, 1);
	CHECK_WHY(vsmfs_dinode_fields_check(&di), "size set on a special", "a fifo with a size");
}

static void make_jsb(struct vsmfs_djsb *jsb, u64 journal_blocks)
{
	u32 hb, n = vsmfs_journal_geometry(journal_blocks, &hb);

	memset(jsb, 0, sizeof(*jsb));
	jsb->j_magic = cpu_to_le32(VSMFS_JOURNAL_MAGIC);
	jsb->j_blocks = cpu_to_le32(n);
	jsb->j_hdr_blocks = cpu_to_le32(hb);
	jsb->j_checkpoint = cpu_to_le64(5 | 2ULL << 32);
	jsb->j_commit = cpu_to_le64(7);
	jsb->j_hcopy = cpu_to_le32(1);
	jsb->j_sequence = cpu_to_le64(99);
}

static void test_jsb(void)
{
	static struct vsmfs_djsb jsb;
	struct vsmfs_jsb_state js;
	const u64 jb = 2048;
	u32 hb, n = vsmfs_journal_geometry(jb, &hb);

	make_jsb(&jsb, jb);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), NULL, "a journal superblock");
	CHECK(js.n == n && js.hdr_blocks == hb && js.ckpt == 5 && js.last == 2 &&
	      js.commit == 7 && js.hcopy == 1 && js.sequence == 99, "decoded fields");

	make_jsb(&jsb, jb);
	jsb.j_magic = cpu_to_le32(0x1234);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "bad magic", "bad magic");
	CHECK(!js.only_reserved, "bad magic is not only the reserved bytes");
	make_jsb(&jsb, jb);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb + 16, &js), "journal size", "another journal size");
	make_jsb(&jsb, jb);
	jsb.j_hdr_blocks = cpu_to_le32(hb + 1);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "journal size", "header blocks");
	make_jsb(&jsb, jb);
	jsb.j_checkpoint = cpu_to_le64(3 | 5ULL << 32);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "checkpoint pointer", "last transaction past it");
	CHECK(js.ckpt == 3 && js.last == 5, "fields decoded whatever is wrong");
	make_jsb(&jsb, jb);
	jsb.j_checkpoint = cpu_to_le64(n + 1);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "checkpoint pointer", "checkpoint past the headers");
	make_jsb(&jsb, jb);
	jsb.j_checkpoint = cpu_to_le64(n | (u64)n << 32);
	jsb.j_commit = cpu_to_le64(n);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), NULL, "a full journal");
	make_jsb(&jsb, jb);
	jsb.j_commit = cpu_to_le64(n + 1);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "commit pointer", "commit past the headers");
	make_jsb(&jsb, jb);
	jsb.j_commit = cpu_to_le64(1ULL << 32);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "commit pointer", "commit in the high word");
	make_jsb(&jsb, jb);
	jsb.j_hcopy = cpu_to_le32(VSMFS_JH_PER_BLOCK + 1);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "header copies", "too many header copies");
	make_jsb(&jsb, jb);
	jsb.j_reserved[sizeof(jsb.j_reserved) - 1] = 1;
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "reserved", "reserved bytes");
	CHECK(js.only_reserved, "reserved bytes: nothing else wrong");
}

/* A journal superblock of a region of @jb blocks whose last @areas * @ab are fast-commit areas. */
static void make_fc_jsb(struct vsmfs_djsb *jsb, u64 jb, u32 areas, u32 ab)
{
	make_jsb(jsb, jb - (u64)areas * ab);
	jsb->j_fc_areas = cpu_to_le32(areas);
	jsb->j_fc_area_blocks = cpu_to_le32(ab);
}

static void test_jsb_fc(void)
{
	static struct vsmfs_djsb jsb;
	struct vsmfs_jsb_state js;
	const u64 jb = 2048;
	u32 hb, n = vsmfs_journal_geometry(jb - 128, &hb);

	make_fc_jsb(&jsb, jb, 16, 8);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), NULL, "fast-commit areas");
	CHECK(js.n == n && js.hdr_blocks == hb && js.fc_areas == 16 && js.fc_area_blocks == 8 &&
	      js.fc_start == jb - 128 && js.ckpt == 5 && js.last == 2,
	      "fields decoded with fast-commit areas");
	make_jsb(&jsb, jb);
	jsb.j_fc_areas = cpu_to_le32(16);
	jsb.j_fc_area_blocks = cpu_to_le32(8);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "journal size",
		  "journal blocks of the whole region with areas");
	make_fc_jsb(&jsb, jb, 16, 8);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb + 16, &js), "journal size",
		  "fast-commit areas, another journal size");

	/* A quarter of the region, a journal of 16 blocks left, at most. */
	make_fc_jsb(&jsb, jb, 1, jb / 4);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), NULL, "areas of a quarter of the region");
	make_fc_jsb(&jsb, 20, 1, 4);
	CHECK_WHY(vsmfs_jsb_check(&jsb, 20, &js), NULL, "a journal of 16 blocks left");
	make_fc_jsb(&jsb, jb, 16, 0);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "do not fit", "areas of 0 blocks");
	make_fc_jsb(&jsb, jb, 16, jb / 64 + 1);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "do not fit", "more than a quarter");
	make_fc_jsb(&jsb, 1 << 16, 25, 41);
	CHECK_WHY(vsmfs_jsb_check(&jsb, 1 << 16, &js), "do not fit",
		  "more than VSMFS_FC_MAX_BLOCKS");
	make_fc_jsb(&jsb, 1 << 16, 32, VSMFS_FC_MAX_BLOCKS / 32);
	CHECK_WHY(vsmfs_jsb_check(&jsb, 1 << 16, &js), NULL, "VSMFS_FC_MAX_BLOCKS");
	make_fc_jsb(&jsb, 20, 1, 5);
	CHECK_WHY(vsmfs_jsb_check(&jsb, 20, &js), "do not fit", "a journal of 15 blocks left");
	make_fc_jsb(&jsb, jb, 0x10000, 0x10000);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "do not fit", "areas past the region");
	make_jsb(&jsb, jb);
	jsb.j_fc_area_blocks = cpu_to_le32(8);
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), "without areas", "area blocks without areas");

	/* The commit number: j_sequence, or one more when the bits say so. */
	make_fc_jsb(&jsb, jb, 16, 8);
	jsb.j_checkpoint = cpu_to_le64(vsmfs_jckpt_set_count(5 | 2ULL << 32, 100));
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), NULL, "commit number bits");
	CHECK(js.ckpt == 5 && js.last == 2 && js.sequence == 99 && js.count == 100,
	      "positions without the bits, j_sequence one commit behind");
	jsb.j_checkpoint = cpu_to_le64(vsmfs_jckpt_set_count(5 | 2ULL << 32, 99));
	CHECK_WHY(vsmfs_jsb_check(&jsb, jb, &js), NULL, "commit number bits");
	CHECK(js.count == 99, "j_sequence the commit number");
}

static void test_jcount(void)
{
	static const u64 counts[] = { 0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x4001, 0x123456789ULL,
				      ~0ULL };
	const u64 pos = (u64)VSMFS_JOURNAL_MAX_BLOCKS << 32 | VSMFS_JOURNAL_MAX_BLOCKS;
	const u64 mask = (1ULL << VSMFS_JCOUNT_BITS) - 1;
	size_t i;

	/* Positions up to 2^24 and the number's bits share no bit. */
	CHECK((pos & VSMFS_JCKPT_POS_MASK) == pos, "positions inside the mask");
	CHECK(!(vsmfs_jckpt_set_count(0, mask) & VSMFS_JCKPT_POS_MASK) &&
	      vsmfs_jckpt_count(VSMFS_JCKPT_POS_MASK) == 0, "commit number bits outside the mask");
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		u64 c = counts[i], st = vsmfs_jckpt_set_count(pos, c);

		CHECK(vsmfs_jckpt_count(st) == (c & mask), "count %llx: bits %llx",
		      (unsigned long long)c, (unsigned long long)vsmfs_jckpt_count(st));
		CHECK((st & VSMFS_JCKPT_POS_MASK) == pos, "count %llx: positions kept",
		      (unsigned long long)c);
		CHECK(vsmfs_jckpt_count(vsmfs_jckpt_set_count(st, c + 1)) == ((c + 1) & mask),
		      "count %llx: set again", (unsigned long long)c);
		/* j_sequence equal, one behind, or neither (a reset journal). */
		CHECK(vsmfs_jcount_exact(c, st) == c, "count %llx: sequence equal",
		      (unsigned long long)c);
		CHECK(vsmfs_jcount_exact(c - 1, st) == c, "count %llx: sequence one behind",
		      (unsigned long long)c);
		CHECK(vsmfs_jcount_exact(c - 2, st) == c - 2,
		      "count %llx: bits two ahead name neither", (unsigned long long)c);
		CHECK(vsmfs_jcount_exact(c + 1, st) == c + 1,
		      "count %llx: bits behind name neither", (unsigned long long)c);
	}
	CHECK(vsmfs_jcount_exact(99, 5) == 99, "no bits set");
}

/*
 * A fast-commit record in @buf of commit @count: words 0, 3 and 31 of the
 * slot, then the @nent words of @ent as its @npte entries, @len bytes, its
 * crc32c set.
 */
static void make_fc_rec_ents(u8 *buf, u64 count, const u64 *ent, u32 nent, u32 npte, u32 len)
{
	struct vsmfs_dfc_rec *r = (struct vsmfs_dfc_rec *)buf;
	__le64 *w = (__le64 *)(r + 1);
	u32 i;

	memset(buf, 0, VSMFS_BLOCK_SIZE);
	r->r_len = cpu_to_le16(len);
	r->r_npte = cpu_to_le16(npte);
	r->r_count = cpu_to_le64(count);
	r->r_words = cpu_to_le32(1U << 0 | 1U << 3 | 1U << 31);
	for (i = 0; i < 3; i++)
		*w++ = cpu_to_le64(0x1000 + i);
	for (i = 0; i < nent && (u8 *)w < buf + VSMFS_BLOCK_SIZE; i++)
		*w++ = cpu_to_le64(ent[i]);
	r->r_crc = cpu_to_le32(crc32c(~0U, buf + 4, len > 4 ? len - 4 : 0));
}

/* The same with @npte page table entries. */
static void make_fc_rec(u8 *buf, u64 count, u32 npte, u32 len)
{
	u64 ent[2 * (VSMFS_FC_MAX_ENTRIES + 1)];
	u32 i;

	for (i = 0; i < npte && i <= VSMFS_FC_MAX_ENTRIES; i++) {
		ent[2 * i] = 100 + i;
		ent[2 * i + 1] = 200 + i;
	}
	make_fc_rec_ents(buf, count, ent, 2 * i, npte, len);
}

/* Span entry: @n words at word @word of block @blk. */
#define FC_SPAN(blk, word, n)	\
	(VSMFS_FC_KEY_SPAN | (u64)((n) - 1) << 48 | (u64)(blk) << 9 | (word))

/* A record with entries of every kind, walked: what vsmfs_fc_next() gives of each. */
static void test_fc_walk(void)
{
	static u8 buf[VSMFS_BLOCK_SIZE];
	static const u64 ent[] = {
		515, 701,					/* page table entry */
		VSMFS_FC_KEY_BITMAP | 8, 0x10,			/* page bitmap bits */
		VSMFS_FC_KEY_BCLEAR | 9, 0x20,			/* page bitmap bits cleared */
		VSMFS_FC_KEY_IBITMAP | 1, 1ULL << 5,		/* inode bitmap bits */
		VSMFS_FC_KEY_DIR | 7, 42, 1U << 3 | 1U << 6, 0x3000, 0x3001,
		FC_SPAN(1000, 4, 3), 0x5000, 0x5001, 0x5002,
		FC_SPAN(1001, 511, 1), 0x6000,
		VSMFS_FC_KEY_GONE | 9, 43, 1U << 0 | 1U << 9, 0x7000, 0x7009,
	};
	const struct vsmfs_dfc_rec *r = (const struct vsmfs_dfc_rec *)buf;
	const __le64 *slot_words = (const __le64 *)(r + 1);
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	u32 len = 0;

	make_fc_rec_ents(buf, 8, ent, ARRAY_SIZE(ent), 8, 256);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "a record of every kind");
	vsmfs_fc_iter_init(&it, r);
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 0 && e.where == 515 && e.n == 1 &&
	      e.val == slot_words + 4 && le64_to_cpu(e.val[0]) == 701, "walk: page table entry");
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 8 && e.where == 8 && e.n == 1 &&
	      le64_to_cpu(e.val[0]) == 0x10, "walk: bitmap word");
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 12 && e.where == 9 && e.n == 1 &&
	      le64_to_cpu(e.val[0]) == 0x20, "walk: bitmap word cleared");
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 9 && e.where == 1 && e.n == 1 &&
	      le64_to_cpu(e.val[0]) == 1ULL << 5, "walk: inode bitmap word");
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 10 && e.where == 7 && e.seq == 42 &&
	      e.mask == (1U << 3 | 1U << 6) && e.n == 2 && le64_to_cpu(e.val[0]) == 0x3000 &&
	      le64_to_cpu(e.val[1]) == 0x3001, "walk: directory part");
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 11 && e.where == (1000 << 9 | 4) &&
	      e.n == 3 && le64_to_cpu(e.val[0]) == 0x5000 && le64_to_cpu(e.val[2]) == 0x5002,
	      "walk: span");
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 11 && e.where == (1001 << 9 | 511) &&
	      e.n == 1 && le64_to_cpu(e.val[0]) == 0x6000, "walk: span of a block's last word");
	CHECK(!vsmfs_fc_next(&it, &e) && e.kind == 13 && e.where == 9 && e.seq == 43 &&
	      e.mask == (1U << 0 | 1U << 9) && e.n == 2 && le64_to_cpu(e.val[0]) == 0x7000 &&
	      le64_to_cpu(e.val[1]) == 0x7009, "walk: unlinked inode's part");
	CHECK_WHY(vsmfs_fc_next(&it, &e), "", "walk: the end");
	CHECK(it.p == slot_words + 3 + ARRAY_SIZE(ent), "walk: every word taken");
}

/* @ent as the entries (@npte) of a 1024-byte record: what vsmfs_fc_rec_check() says. */
static const char *fc_check_ents(const u64 *ent, u32 nent, u32 npte)
{
	static u8 buf[VSMFS_BLOCK_SIZE];
	u32 len;

	make_fc_rec_ents(buf, 8, ent, nent, npte, VSMFS_FC_REC_MAX);
	return vsmfs_fc_rec_check((const struct vsmfs_dfc_rec *)buf, 4096, 7, &len);
}

#define FC_CHECK(want, what, ...) do {						\
	static const u64 __e[] = { __VA_ARGS__ };				\
	CHECK_WHY(fc_check_ents(__e, ARRAY_SIZE(__e), fc_entries(__e, ARRAY_SIZE(__e))), \
		  want, what);							\
} while (0)

/* The entries in @n words of entries, as vsmfs_fc_next() would count them. */
static u32 fc_entries(const u64 *w, u32 n)
{
	u32 i = 0, count = 0;

	while (i < n) {
		u64 key = w[i];

		if (VSMFS_FC_KIND(key) == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR) ||
		    VSMFS_FC_KIND(key) == VSMFS_FC_KIND(VSMFS_FC_KEY_GONE))
			i += 3 + hweight32(i + 2 < n ? (u32)w[i + 2] : 0);
		else if (VSMFS_FC_KIND(key) == VSMFS_FC_KIND(VSMFS_FC_KEY_SPAN))
			i += 2 + (key >> 48 & 0xff);
		else
			i += 2;
		count++;
	}
	return count;
}

/* The structure of records with inode bitmap, directory and span entries. */
static void test_fc_kinds(void)
{
	FC_CHECK(NULL, "inode bitmap bits, a directory's part with spans",
		 VSMFS_FC_KEY_IBITMAP | 0, 1 << 9,
		 VSMFS_FC_KEY_DIR | 1, 3, 1U << 6 | 1U << 7, 5000, 6000,
		 FC_SPAN(900, 2, 3), 1, 2, 3,
		 FC_SPAN(901, 0, 1), 4);
	FC_CHECK(NULL, "a directory's part without words or spans", VSMFS_FC_KEY_DIR | 1, 3, 0);
	FC_CHECK(NULL, "a span of VSMFS_FC_SPAN_MAX words", VSMFS_FC_KEY_DIR | 1, 3, 0,
		 FC_SPAN(900, 448, VSMFS_FC_SPAN_MAX));
	FC_CHECK("span past its block", "a span crossing its block's end",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, FC_SPAN(900, 510, 3), 1, 2, 3);
	FC_CHECK("span past its block", "a span past VSMFS_FC_SPAN_MAX",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, FC_SPAN(900, 0, VSMFS_FC_SPAN_MAX + 1));
	FC_CHECK("span outside", "a span before the directory's part",
		 FC_SPAN(900, 2, 1), 1, VSMFS_FC_KEY_DIR | 1, 3, 0);
	FC_CHECK("span outside", "a span without a directory's part", 515, 701,
		 FC_SPAN(900, 2, 1), 1);
	FC_CHECK("two directory parts", "two directory parts",
		 VSMFS_FC_KEY_DIR | 1, 3, 1U << 6, 5000, VSMFS_FC_KEY_DIR | 2, 4, 0);
	FC_CHECK("not a span", "a page table entry in the directory's part",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, 515, 701);
	FC_CHECK("not a span", "inode bitmap bits in the directory's part",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, VSMFS_FC_KEY_IBITMAP | 0, 1);
	FC_CHECK("bad slot key", "a directory slot past 32 bits",
		 VSMFS_FC_KEY_DIR | 1ULL << 32, 3, 0);
	FC_CHECK("bad slot key", "a word mask past 32 bits",
		 VSMFS_FC_KEY_DIR | 1, 3, 1ULL << 32);
	FC_CHECK("unknown entry", "kind 1", 1ULL << 60 | 5, 1);
	FC_CHECK("unknown entry", "kind 7", 7ULL << 60 | 5, 1);
	FC_CHECK("unknown entry", "kind 14", 14ULL << 60 | 5, 1);
	FC_CHECK("unknown entry", "kind 15", 15ULL << 60 | 5, 1);
	FC_CHECK("unknown entry", "an unknown kind after a page table entry", 515, 701,
		 14ULL << 60, 0);
	FC_CHECK(NULL, "a directory's part with spans, then an unlinked inode's",
		 VSMFS_FC_KEY_IBITMAP | 0, 1 << 9,
		 VSMFS_FC_KEY_DIR | 1, 3, 1U << 6, 5000, FC_SPAN(900, 2, 1), 1,
		 VSMFS_FC_KEY_GONE | 5, 8, 1U << 0 | 1U << 7, 0x81a4, 77);
	FC_CHECK(NULL, "an unlinked inode's part without words",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, VSMFS_FC_KEY_GONE | 5, 8, 0);
	FC_CHECK("without a directory's", "an unlinked inode's part alone",
		 VSMFS_FC_KEY_GONE | 5, 8, 1U << 0, 0x81a4);
	FC_CHECK("without a directory's", "an unlinked inode's part before the directory's",
		 VSMFS_FC_KEY_GONE | 5, 8, 0, VSMFS_FC_KEY_DIR | 1, 3, 0);
	FC_CHECK("after the unlinked", "a span after the unlinked inode's part",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, VSMFS_FC_KEY_GONE | 5, 8, 0, FC_SPAN(900, 2, 1), 1);
	FC_CHECK("after the unlinked", "two unlinked inodes' parts",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, VSMFS_FC_KEY_GONE | 5, 8, 0,
		 VSMFS_FC_KEY_GONE | 6, 9, 0);
	FC_CHECK("bad slot key", "an unlinked inode's slot past 32 bits",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, VSMFS_FC_KEY_GONE | 1ULL << 32, 8, 0);
	FC_CHECK("not a span", "page bitmap bits cleared in the directory's part",
		 VSMFS_FC_KEY_DIR | 1, 3, 0, VSMFS_FC_KEY_BCLEAR | 8, 0x10);
}

/* Entries that pass the end of the record, and counts of entries. */
static void test_fc_bounds(void)
{
	static u8 buf[VSMFS_BLOCK_SIZE];
	const struct vsmfs_dfc_rec *r = (const struct vsmfs_dfc_rec *)buf;
	/* In 128 bytes: 3 words of the slot, then 9 of these. */
	static const u64 dir6[] = { VSMFS_FC_KEY_DIR | 1, 3, 0x3f, 1, 2, 3, 4, 5, 6 };
	static const u64 dir7[] = { VSMFS_FC_KEY_DIR | 1, 3, 0x7f, 1, 2, 3, 4, 5, 6 };
	static const u64 span5[] = { VSMFS_FC_KEY_DIR | 1, 3, 0, FC_SPAN(900, 0, 5),
				     1, 2, 3, 4, 5 };
	static const u64 span6[] = { VSMFS_FC_KEY_DIR | 1, 3, 0, FC_SPAN(900, 0, 6),
				     1, 2, 3, 4, 5 };
	u64 ent[2 * (VSMFS_FC_MAX_ENTRIES + 1)];
	u32 len, i;

	make_fc_rec(buf, 8, 5, 128);	/* 3 + 10 words of 12 */
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "past the end", "entries past r_len");
	make_fc_rec(buf, 8, 5, 192);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "the same entries in r_len");
	make_fc_rec_ents(buf, 8, dir6, ARRAY_SIZE(dir6), 1, 128);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "a directory's words up to r_len");
	make_fc_rec_ents(buf, 8, dir7, ARRAY_SIZE(dir7), 1, 128);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "past the end",
		  "a directory's words past r_len");
	make_fc_rec_ents(buf, 8, span5, ARRAY_SIZE(span5), 2, 128);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "a span up to r_len");
	make_fc_rec_ents(buf, 8, span6, ARRAY_SIZE(span6), 2, 128);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "past the end", "a span past r_len");
	make_fc_rec_ents(buf, 8, dir6, 1, 1, 64);	/* its key the last word */
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "past the end",
		  "a directory entry past r_len");
	make_fc_rec_ents(buf, 8, span5, ARRAY_SIZE(span5), 3, 128);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "past the end",
		  "an entry more than r_len holds");

	/* At most VSMFS_FC_MAX_ENTRIES entries, VSMFS_FC_MAX_PTES of them page table entries. */
	for (i = 0; i < VSMFS_FC_MAX_ENTRIES + 1; i++) {
		ent[2 * i] = i < VSMFS_FC_MAX_PTES ? 100 + i : VSMFS_FC_KEY_BITMAP | i;
		ent[2 * i + 1] = 1;
	}
	make_fc_rec_ents(buf, 8, ent, 2 * VSMFS_FC_MAX_ENTRIES, VSMFS_FC_MAX_ENTRIES,
			 roundup(32 + 8 * (3 + 2 * VSMFS_FC_MAX_ENTRIES), 64));
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "VSMFS_FC_MAX_ENTRIES entries");
	make_fc_rec_ents(buf, 8, ent, 2 * VSMFS_FC_MAX_ENTRIES + 2, VSMFS_FC_MAX_ENTRIES + 1,
			 roundup(32 + 8 * (3 + 2 * VSMFS_FC_MAX_ENTRIES + 2), 64));
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "length",
		  "more than VSMFS_FC_MAX_ENTRIES entries");
	ent[2 * VSMFS_FC_MAX_PTES] = 100 + VSMFS_FC_MAX_PTES;
	make_fc_rec_ents(buf, 8, ent, 2 * VSMFS_FC_MAX_ENTRIES, VSMFS_FC_MAX_ENTRIES,
			 roundup(32 + 8 * (3 + 2 * VSMFS_FC_MAX_ENTRIES), 64));
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "length",
		  "more than VSMFS_FC_MAX_PTES page table entries among the entries");
	make_fc_rec(buf, 8, 0, VSMFS_FC_REC_MAX);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "VSMFS_FC_REC_MAX bytes");
	CHECK(len == VSMFS_FC_REC_MAX, "its length %u", len);
	make_fc_rec(buf, 8, 0, VSMFS_FC_REC_MAX + 64);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "length", "longer than any record");
}

/*
 * The record @rec (@len bytes, of commit 8) torn at every byte k from 0 to
 * @len: its bytes from k on, and the area after it, @old's. It must be
 * valid, @len bytes, exactly when no byte changed. Return: how many k <
 * @len left it unchanged (the bytes it lost were @old's anyway).
 */
static u32 fc_torn(const u8 *rec, const u8 *old, u32 len, const char *what)
{
	static u8 buf[VSMFS_BLOCK_SIZE];
	const char *why, *bad = NULL;
	u32 k, n, same = 0, wrong = 0, first = 0;

	for (k = 0; k <= len; k++) {
		memcpy(buf, rec, k);
		memcpy(buf + k, old + k, sizeof(buf) - k);
		why = vsmfs_fc_rec_check((const struct vsmfs_dfc_rec *)buf, 4096, 7, &n);
		if (!memcmp(buf, rec, len)) {
			same += k < len;
			if (!why && n == len)
				continue;
		} else if (why) {
			continue;
		}
		if (!wrong++) {
			first = k;
			bad = why;
		}
	}
	CHECK(!wrong, "%s: %u of %u tears wrong, first at %u: %s", what, wrong, len + 1, first,
	      bad ? bad : "valid");
	return same;
}

/*
 * A record torn by a crash inside its stores: any prefix of its bytes new,
 * the rest what the area held, zeros or an older, dead record (of commit
 * 7, the last durable one). vsmfs_fc_rec_check() refuses it at every k <
 * r_len, unless the bytes it lost are those it held anyway: the zeros
 * padding a record.
 */
static void test_fc_torn(void)
{
	static u8 rec[VSMFS_BLOCK_SIZE], dead[VSMFS_BLOCK_SIZE], zero[VSMFS_BLOCK_SIZE];
	/* 3 slot words and these 17: 192 bytes, the last word's bytes all set. */
	static const u64 ent[] = {
		515, 701,
		VSMFS_FC_KEY_BITMAP | 8, 0x10,
		VSMFS_FC_KEY_IBITMAP | 1, 1ULL << 5,
		VSMFS_FC_KEY_DIR | 7, 42, 1U << 3 | 1U << 6, 0x3000, 0x3001,
		FC_SPAN(1000, 4, 3), 0x5000, 0x5001, 0x5002,
		FC_SPAN(1001, 511, 1), 0x8877665544332211ULL,
	};
	/* The dead one: 3 slot words and these, a span of words with no zero byte. */
	u64 old[7 + 30] = {
		VSMFS_FC_KEY_IBITMAP | 0, 1ULL << 9,
		VSMFS_FC_KEY_DIR | 7, 41, 1U << 6, 0x2999,
		FC_SPAN(1000, 0, 30),
	};
	u32 len = 0, z, i;

	for (i = 0; i < 30; i++)
		old[7 + i] = 0x0101010101010101ULL * (i + 1);

	make_fc_rec_ents(rec, 8, ent, ARRAY_SIZE(ent), 6, 192);
	make_fc_rec_ents(dead, 7, old, ARRAY_SIZE(old), 3, 384);
	CHECK_WHY(vsmfs_fc_rec_check((const struct vsmfs_dfc_rec *)dead, 4096, 6, &len), NULL,
		  "the dead record, valid in its time");
	CHECK(len == 384, "the dead record's length %u", len);
	CHECK(fc_torn(rec, zero, 192, "torn into zeros") == 0, "a tear into zeros left it whole");
	CHECK(fc_torn(rec, dead, 192, "torn into a dead record") == 0,
	      "a tear into a dead record left it whole");
	/* Without the last span: torn into zeros after its last nonzero byte, it is whole. */
	make_fc_rec_ents(rec, 8, ent, ARRAY_SIZE(ent) - 2, 5, 192);
	for (z = 192; z && !rec[z - 1]; z--)
		;
	CHECK(z == 170, "the padded record's last nonzero byte at %u", z - 1);
	CHECK(fc_torn(rec, zero, 192, "padded, torn into zeros") == 192 - z,
	      "a tear into zeros after its last nonzero byte leaves it whole");
	CHECK(fc_torn(rec, dead, 192, "padded, torn into a dead record") == 0,
	      "a tear into a dead record never leaves it whole");
}

static void test_fc_rec(void)
{
	static u8 buf[VSMFS_BLOCK_SIZE];
	const struct vsmfs_dfc_rec *r = (const struct vsmfs_dfc_rec *)buf;
	u32 len = 0, big = roundup(sizeof(*r) + 3 * 8 + (VSMFS_FC_MAX_PTES + 1) * 16, 64);

	make_fc_rec(buf, 8, 2, 128);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "a record");
	CHECK(len == 128, "its length %u", len);
	CHECK_WHY(vsmfs_fc_rec_check(r, 128, 7, &len), NULL, "a record filling the room");
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 8, &len), "not of the commit", "its own commit");
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 6, &len), "not of the commit", "a later commit");
	CHECK_WHY(vsmfs_fc_rec_check(r, 16, 7, &len), "not of the commit",
		  "less room than a header");
	CHECK_WHY(vsmfs_fc_rec_check(r, 64, 7, &len), "length", "past the room");
	buf[100] ^= 1;
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "checksum", "a byte changed");
	make_fc_rec(buf, 8, 2, 128);
	buf[0] ^= 1;
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "checksum", "the crc changed");
	make_fc_rec(buf, 8, 2, 96);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "length", "not a multiple of 64");
	make_fc_rec(buf, 8, 0, 64);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "words only");
	make_fc_rec(buf, 8, 2, 64);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "past the end",
		  "shorter than its entries");
	make_fc_rec(buf, 8, VSMFS_FC_MAX_PTES, big);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), NULL, "VSMFS_FC_MAX_PTES entries");
	make_fc_rec(buf, 8, VSMFS_FC_MAX_PTES + 1, big);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "length", "too many page table entries");
	make_fc_rec(buf, 8, 0, 0);
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, 7, &len), "length", "no length");
	memset(buf, 0, sizeof(buf));
	CHECK_WHY(vsmfs_fc_rec_check(r, 4096, ~0ULL, &len), "length", "zeros");
	test_fc_walk();
	test_fc_kinds();
	test_fc_bounds();
	test_fc_torn();
}

static void test_all_zero(void)
{
	static const u8 z[9], nz[9] = { [8] = 1 };

	CHECK(vsmfs_all_zero(z, sizeof(z)) && vsmfs_all_zero(nz, 0) &&
	      vsmfs_all_zero(nz, 8) && !vsmfs_all_zero(nz, 9), "all zero");
}

int main(void)
{
	test_crc();
	test_all_zero();
	test_dirent();
	test_xattr();
	test_dinode();
	test_jsb();
	test_jsb_fc();
	test_jcount();
	test_fc_rec();
	test_mount_opts();
	test_name_hash();
	test_layouts();
	test_sb_check();
	test_sparse_layouts();
	test_sparse_sb();
	printf("test_verify: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
