// SPDX-License-Identifier: GPL-2.0
/*
 * User-space unit tests of the shared format code (fs/vsmfs/verify.c):
 * checksum, name hash, layout computation over many device sizes (sparse
 * and not), and the superblock verifier against good and damaged
 * superblocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vsmfs_format.h"
#include "verify.h"

#include "check.h"

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

int main(void)
{
	test_crc();
	test_mount_opts();
	test_name_hash();
	test_layouts();
	test_sb_check();
	test_sparse_layouts();
	test_sparse_sb();
	printf("test_verify: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
