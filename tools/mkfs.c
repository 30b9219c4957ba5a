// SPDX-License-Identifier: GPL-2.0
/*
 * mkfs.vsmfs - create a vsmfs file system on a pmem device or image file.
 *
 * Every region is written before the superblocks, and the primary
 * superblock last of all, after an fsync: a device on which mkfs was
 * interrupted does not carry a valid vsmfs superblock.
 *
 * Before that, every signature libblkid knows (file systems, swap, RAID
 * and LVM members, partition tables) is looked for: without -f mkfs names
 * what it found and refuses, with -f it erases each, so that no prober
 * takes the device for its old contents afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <blkid/blkid.h>
#include <uuid/uuid.h>

#include "../fs/vsmfs/verify.h"
#include "tools.h"

#define JOURNAL_MIN_BYTES	(16ULL << VSMFS_BLOCK_SHIFT)
#define JOURNAL_MAX_BYTES	(VSMFS_JOURNAL_MAX_BLOCKS << VSMFS_BLOCK_SHIFT)
#define INODES_MAX		((1ULL << 32) - 1)
#define VSP_BYTES		(1ULL << VSMFS_VSP_SHIFT)
#define LSIZE_MAX_BYTES		(VSMFS_MAX_LPAGES << VSMFS_BLOCK_SHIFT)	/* 4 PiB */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: mkfs.vsmfs [options] DEVICE\n"
		"Create a vsmfs file system on DEVICE (a pmem block device or an image file).\n\n"
		"  -J, --journal-size SIZE  journal size (K, M, G suffixes; from 64K to half\n"
		"                   the device, at most 64G; default 128M, at most 1/16 of the device)\n"
		"  -N, --inodes COUNT  number of inodes (default one per 16 KiB)\n"
		"  -L, --label LABEL   volume label (up to %d bytes)\n"
		"  -U, --uuid UUID     file system UUID, or \"random\" (the default) or \"time\"\n"
		"  -l, --logical-size SIZE  logical space (K, M, G, T, P suffixes; a multiple\n"
		"                   of 2M, from the data area to 4P; implies sparse; default\n"
		"                   twice the device): bounds the holes all files may have\n"
		"  -O FEATURE[,...]  features, ^FEATURE to leave one out:\n"
		"               sb_last  backup superblock in the last block (default on;\n"
		"                        ^sb_last puts it in block 1 for older kernels)\n"
		"               sparse   more logical pages than frames: holes in files take\n"
		"                        no space (default on; ^sparse for older kernels)\n"
		"               fast_commit  fast-commit areas at the end of the journal, for\n"
		"                        fsyncs that need no full commit (default on;\n"
		"                        ^fast_commit for older kernels)\n"
		"  -f, --force      overwrite an existing file system, swap area, RAID or LVM\n"
		"                   member or partition table, erasing its signatures\n"
		"  -n, --dry-run    print the layout, write nothing\n"
		"  -q, --quiet      quiet\n"
		"  -V, --version    print the version and exit\n"
		"  -h, --help       this help\n", VSMFS_LABEL_LEN);
}

static int write_at(int fd, const void *buf, size_t len, u64 off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += (u64)n;
	}
	return 0;
}

/* Fill @count blocks from @start with what @fill() puts in each block. */
/* Journal headers: header i maps journal block i, free, write count 0. */
static void fill_jhdr(void *blk, u64 idx, void *arg)
{
	struct vsmfs_djhdr *h = blk;
	u32 n = *(u32 *)arg, k;

	for (k = 0; k < VSMFS_JH_PER_BLOCK; k++) {
		u64 i = idx * VSMFS_JH_PER_BLOCK + k;

		if (i >= n)
			break;
		h[k].h_state = cpu_to_le64(i << VSMFS_JH_NUM_SHIFT);
		h[k].h_map = cpu_to_le64(i);
	}
}

static int write_region(int fd, u64 start, u64 count,
			void (*fill)(void *blk, u64 idx, void *arg), void *arg)
{
	enum { CHUNK = 256 };
	static char buf[CHUNK * VSMFS_BLOCK_SIZE];
	u64 done = 0;
	int ret;

	while (done < count) {
		u64 n = count - done < CHUNK ? count - done : CHUNK;
		u64 i;

		memset(buf, 0, n * VSMFS_BLOCK_SIZE);
		if (fill)
			for (i = 0; i < n; i++)
				fill(buf + i * VSMFS_BLOCK_SIZE, done + i, arg);
		ret = write_at(fd, buf, n * VSMFS_BLOCK_SIZE,
			       (start + done) << VSMFS_BLOCK_SHIFT);
		if (ret)
			return ret;
		done += n;
	}
	return 0;
}

/* Identity inode map: i-number N lives in slot N. */
static void fill_imap(void *blk, u64 idx, void *arg)
{
	__le32 *e = blk;
	u64 i, per = VSMFS_BLOCK_SIZE / 4;

	(void)arg;
	for (i = 0; i < per; i++)
		e[i] = cpu_to_le32((u32)(idx * per + i));
}

/*
 * Identity page table: logical page N is backed by frame N below
 * @arg->data_pages, and the logical pages past them (sparse file systems)
 * have no frame. Entries past the last logical page stay zero.
 */
static void fill_ptable(void *blk, u64 idx, void *arg)
{
	const struct vsmfs_layout *l = arg;
	__le64 *e = blk;
	u64 i, n;

	for (i = 0; i < VSMFS_PTES_PER_BLOCK; i++) {
		n = idx * VSMFS_PTES_PER_BLOCK + i;
		if (n >= l->lpages)
			break;
		e[i] = cpu_to_le64(n < l->data_pages ? n : VSMFS_PTE_NONE);
	}
}

/*
 * Bitmap with the first @arg[0] bits and every bit at or past @arg[1] set:
 * reserved entries at the start, nonexistent ones at the end.
 */
static void fill_bitmap(void *blk, u64 idx, void *arg)
{
	const u64 *lim = arg;
	u8 *b = blk;
	u64 i, bits = VSMFS_BLOCK_SIZE * 8ULL;

	for (i = 0; i < bits; i++) {
		u64 bit = idx * bits + i;

		if (bit < lim[0] || bit >= lim[1])
			b[i / 8] |= (u8)(1U << (i % 8));
	}
}

/* Inode table: all slots free but the root directory's. */
static void fill_itable(void *blk, u64 idx, void *arg)
{
	const struct vsmfs_dinode *root = arg;

	if (idx == VSMFS_ROOT_INO / VSMFS_INODES_PER_BLOCK)
		memcpy((char *)blk + (VSMFS_ROOT_INO % VSMFS_INODES_PER_BLOCK) *
		       VSMFS_INODE_SIZE, root, sizeof(*root));
}

static void print_layout(const char *dev, const struct vsmfs_layout *l,
			 const char *label, const u8 *uuid, u32 fc_areas, u32 fc_area_blocks)
{
	char us[40];

	format_uuid(uuid, us);
	printf("vsmfs on %s: %" PRIu64 " blocks of %u bytes (%" PRIu64 " MiB)\n",
	       dev, l->blocks, VSMFS_BLOCK_SIZE, l->blocks >> (20 - VSMFS_BLOCK_SHIFT));
	printf("  uuid %s%s%s%s\n", us, *label ? ", label \"" : "", label, *label ? "\"" : "");
	printf("  %-22s %10s %10s\n", "region", "start", "blocks");
	printf("  %-22s %10d %10d\n", "superblock", VSMFS_SB_BLOCK, 1);
	printf("  %-22s %10" PRIu64 " %10d\n", "backup superblock", l->sb_backup, 1);
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "\n", "journal", l->journal_start, l->journal_blocks);
	print_fc_areas(l, fc_areas, fc_area_blocks);
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "  (%" PRIu64 " inodes)\n", "inode table",
	       l->itable_start, l->itable_blocks, l->inodes);
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "\n", "inode mapping table", l->imap_start, l->imap_blocks);
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "\n", "inode bitmap", l->ibitmap_start, l->ibitmap_blocks);
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "\n", "page table", l->ptable_start, l->ptable_blocks);
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "\n", "logical page bitmap",
	       l->lbitmap_start, l->lbitmap_blocks);
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "  (%" PRIu64 " virtual superpages)\n", "data",
	       l->data_start, l->data_pages, l->data_pages / VSMFS_VSP_PAGES);
	print_lpages(l);
}

/* Do fast-commit areas of @blocks in all fit a journal region of @jblocks? */
static bool fc_fits(u64 jblocks, u64 blocks)
{
	return blocks <= jblocks / 4 && blocks <= VSMFS_FC_MAX_BLOCKS && jblocks - blocks >= 16;
}

/*
 * The fast-commit areas of a journal region of @jblocks blocks: the
 * default ones, with fewer areas (halved, down to one), then fewer blocks
 * in the one area, until they take at most a quarter of the region and
 * leave a journal of 16 blocks at least. Returns false when not even an
 * area of one block fits.
 */
static bool fc_geometry(u64 jblocks, u32 *areas, u32 *area_blocks)
{
	*areas = VSMFS_FC_AREAS;
	*area_blocks = VSMFS_FC_AREA_BLOCKS;
	while (*areas > 1 && !fc_fits(jblocks, (u64)*areas * *area_blocks))
		*areas /= 2;
	while (*area_blocks > 1 && !fc_fits(jblocks, (u64)*areas * *area_blocks))
		(*area_blocks)--;
	return fc_fits(jblocks, (u64)*areas * *area_blocks);
}

/* Is there a vsmfs on the device already? libblkid does not know it. */
static bool has_vsmfs(int fd)
{
	char buf[4];

	return pread(fd, buf, sizeof(buf), VSMFS_SB_BLOCK << VSMFS_BLOCK_SHIFT) ==
		(ssize_t)sizeof(buf) && !memcmp(buf, "VSMF", 4);
}

/*
 * Look for every signature libblkid knows on the open device: without
 * @force, print each ("appears to contain ...") and return how many there
 * are; with @force erase each (blkid_do_wipe() clears the magic string the
 * prober matched, and the next blkid_do_probe() looks again at the same
 * place, so every copy goes). Return: the count, or -1 on an error.
 */
static int other_signatures(int fd, const char *dev, bool force, bool quiet)
{
	blkid_probe pr = blkid_new_probe();
	bool table = false;
	int found = 0, ret;

	if (!pr || blkid_probe_set_device(pr, fd, 0, 0)) {
		fail(1, "%s: cannot probe for other signatures", dev);
		goto err;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
					  BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);

	while ((ret = blkid_do_probe(pr)) == 0) {
		const char *type = NULL, *usage = "", *off = "?";
		char what[128];

		if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
			blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
			blkid_probe_lookup_value(pr, "SBMAGIC_OFFSET", &off, NULL);
			if (!strcmp(type, "vsmfs"))
				continue;	/* overwritten by mkfs itself */
			if (!strcmp(usage, "filesystem"))
				snprintf(what, sizeof(what), "an existing %s file system", type);
			else if (!strcmp(usage, "raid"))
				snprintf(what, sizeof(what), "a %s RAID or volume member", type);
			else if (!strcmp(usage, "crypto"))
				snprintf(what, sizeof(what), "a %s encrypted volume", type);
			else
				snprintf(what, sizeof(what), "a %s signature", type);
		} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
			blkid_probe_lookup_value(pr, "PTMAGIC_OFFSET", &off, NULL);
			snprintf(what, sizeof(what), "a %s partition table", type);
			table = true;
		} else {
			continue;
		}
		found++;
		if (!force) {
			fprintf(stderr, "%s: %s appears to contain %s (at offset %s)\n",
				progname, dev, what, off);
			continue;
		}
		if (blkid_do_wipe(pr, 0)) {
			fail(1, "%s: cannot erase %s at offset %s", dev, what, off);
			goto err;
		}
		if (!quiet)
			printf("%s: erased %s at offset %s\n", dev, what, off);
	}
	if (ret < 0) {
		fail(1, "%s: probing for other signatures failed", dev);
		goto err;
	}
	/*
	 * The kernel still has the partitions of an erased table: have it
	 * read the (now missing) table again. It refuses while one of them is
	 * open, which mkfs cannot help; the partitions then go at the next
	 * reread or boot.
	 */
	if (force && table) {
		struct stat st;

		if (!fstat(fd, &st) && S_ISBLK(st.st_mode) && fsync(fd) == 0)
			ioctl(fd, BLKRRPART);
	}
	blkid_free_probe(pr);
	return found;
err:
	if (pr)
		blkid_free_probe(pr);
	return -1;
}

/*
 * Apply -O FEATURE[,FEATURE...]: each of sb_last, sparse and fast_commit,
 * or ^ and the name to leave it out. Returns false on an unknown name.
 */
static bool parse_features(const char *arg, u32 *incompat, bool *sparse_off)
{
	char *list = strdup(arg), *save = NULL, *f;
	bool ok = true;

	if (!list)
		return false;
	for (f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		bool off = *f == '^';
		const char *name = f + off;
		u32 bit;

		if (!strcmp(name, "sb_last")) {
			bit = VSMFS_FEATURE_INCOMPAT_SB_LAST;
		} else if (!strcmp(name, "sparse")) {
			bit = VSMFS_FEATURE_INCOMPAT_SPARSE;
		} else if (!strcmp(name, "fast_commit")) {
			bit = VSMFS_FEATURE_INCOMPAT_FAST_COMMIT;
		} else {
			ok = false;
			break;
		}
		if (off)
			*incompat &= ~bit;
		else
			*incompat |= bit;
		if (bit == VSMFS_FEATURE_INCOMPAT_SPARSE)
			*sparse_off = off;
	}
	free(list);
	return ok;
}

int main(int argc, char **argv)
{
	u64 journal_bytes = 0, inodes = 0, lbytes = 0, lpages, jblocks, dev_bytes, blocks;
	static const struct option lopts[] = {
		{ "journal-size", required_argument, NULL, 'J' },
		{ "inodes", required_argument, NULL, 'N' },
		{ "label", required_argument, NULL, 'L' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "logical-size", required_argument, NULL, 'l' },
		{ "force", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		COMMON_LONG_OPTIONS,
	};
	const char *label = "", *uuid_arg = NULL, *why, *dev;
	bool force = false, dry = false, quiet = false, sparse_off = false;
	int fd, ret, c, others;
	u32 incompat = VSMFS_FEATURE_INCOMPAT_SB_LAST | VSMFS_FEATURE_INCOMPAT_SPARSE |
		       VSMFS_FEATURE_INCOMPAT_FAST_COMMIT;
	struct vsmfs_dinode root;
	struct vsmfs_layout l;
	struct vsmfs_dsb dsb;
	struct vsmfs_djsb jsb;
	struct vsmfs_jsb_state js;
	u32 jn, jhdr_blocks, fc_areas = 0, fc_area_blocks = 0;
	u8 uuid[16];
	char blk[VSMFS_BLOCK_SIZE];
	struct vsmfs_layout base;
	u64 lim[2];
	time_t now;

	progname = "mkfs.vsmfs";
	while ((c = getopt_long(argc, argv, "J:N:L:U:O:l:fnqVh", lopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			if (parse_size(optarg, &journal_bytes) ||
			    journal_bytes < JOURNAL_MIN_BYTES ||
			    journal_bytes > JOURNAL_MAX_BYTES)
				return fail(1, "invalid journal size '%s': the range is 64K to 64G,"
					    " and at most half the device", optarg);
			break;
		case 'N':
			if (parse_size(optarg, &inodes) || inodes < VSMFS_INODES_PER_BLOCK ||
			    inodes > INODES_MAX)
				return fail(1, "invalid inode count '%s': the range is %u to %llu",
					    optarg, VSMFS_INODES_PER_BLOCK, INODES_MAX);
			break;
		case 'L':
			if (strlen(optarg) > VSMFS_LABEL_LEN)
				return fail(1, "label longer than %d bytes", VSMFS_LABEL_LEN);
			label = optarg;
			break;
		case 'U':
			uuid_arg = optarg;
			break;
		case 'O':
			if (!parse_features(optarg, &incompat, &sparse_off))
				return fail(1, "unknown feature in '%s' (known: sb_last, sparse,"
					    " fast_commit, each with ^ to leave it out)", optarg);
			break;
		case 'l':
			if (parse_size(optarg, &lbytes) || !lbytes || lbytes % VSP_BYTES ||
			    lbytes > LSIZE_MAX_BYTES)
				return fail(1, "invalid logical size '%s': a multiple of 2M,"
					    " from the size of the data area to 4P", optarg);
			break;
		case 'f':
			force = true;
			break;
		case 'n':
			dry = true;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			common_option(c, usage, 1);
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 1;
	}
	dev = argv[optind];

	fd = open_device(dev, dry ? O_RDONLY : O_RDWR, &dev_bytes);
	if (fd < 0)
		return 1;
	blocks = dev_bytes >> VSMFS_BLOCK_SHIFT;
	if (blocks < VSMFS_MIN_BLOCKS)
		return fail(1, "%s: device too small (%" PRIu64 " KiB, need at least %u MiB)",
			    dev, dev_bytes >> 10, VSMFS_MIN_BLOCKS >> (20 - VSMFS_BLOCK_SHIFT));
	if (!inodes)
		inodes = vsmfs_default_inodes(blocks);
	else
		inodes = (inodes + 1 + VSMFS_INODES_PER_BLOCK - 1) /
			 VSMFS_INODES_PER_BLOCK * VSMFS_INODES_PER_BLOCK;
	if (journal_bytes > (blocks / 2) << VSMFS_BLOCK_SHIFT)
		return fail(1, "%s: journal size %" PRIu64 " KiB too large: the range is 64 KiB"
			    " to half the device, %" PRIu64 " KiB", dev, journal_bytes >> 10,
			    (blocks / 2) << (VSMFS_BLOCK_SHIFT - 10));
	if (lbytes && sparse_off)
		return fail(1, "-l sets the logical size of a sparse file system: not with"
			    " -O ^sparse");
	jblocks = journal_bytes ? (journal_bytes + VSMFS_BLOCK_SIZE - 1) >> VSMFS_BLOCK_SHIFT :
		  vsmfs_default_journal_blocks(blocks);
	/* The layout with as many logical pages as frames bounds -l from below. */
	why = vsmfs_compute_layout(&base, blocks, jblocks, inodes,
				   incompat & ~VSMFS_FEATURE_INCOMPAT_SPARSE);
	if (why)
		return fail(1, "%s: cannot lay out a file system: %s", dev, why);
	lpages = 0;
	if (incompat & VSMFS_FEATURE_INCOMPAT_SPARSE) {
		u64 least = roundup(base.data_pages, (u64)VSMFS_VSP_PAGES);

		lpages = lbytes ? lbytes >> VSMFS_BLOCK_SHIFT : vsmfs_default_lpages(blocks);
		if (lpages < least)
			return fail(1, "%s: logical size %" PRIu64 " MiB too small: the range is"
				    " the data area rounded up to 2 MiB, %" PRIu64 " MiB, to 4 PiB",
				    dev, lpages >> (20 - VSMFS_BLOCK_SHIFT),
				    least >> (20 - VSMFS_BLOCK_SHIFT));
	}
	why = vsmfs_compute_layout_sparse(&l, blocks, jblocks, inodes, incompat, lpages);
	if (why && lbytes)
		return fail(1, "%s: logical size %" PRIu64 " MiB too large for the device: its"
			    " page table (8 bytes a logical page) leaves no room for data", dev,
			    lpages >> (20 - VSMFS_BLOCK_SHIFT));
	if (why)
		return fail(1, "%s: cannot lay out a file system: %s", dev, why);
	/* The fast-commit areas are the last blocks of the journal region. */
	if ((incompat & VSMFS_FEATURE_INCOMPAT_FAST_COMMIT) &&
	    !fc_geometry(l.journal_blocks, &fc_areas, &fc_area_blocks)) {
		incompat &= ~VSMFS_FEATURE_INCOMPAT_FAST_COMMIT;
		fc_areas = 0;
		fc_area_blocks = 0;
		if (!quiet)
			fprintf(stderr, "%s: %s: a journal of %" PRIu64 " blocks has no room for"
				" fast-commit areas: made without fast_commit\n", progname, dev,
				l.journal_blocks);
	}

	if (!uuid_arg || !strcmp(uuid_arg, "random"))
		uuid_generate(uuid);
	else if (!strcmp(uuid_arg, "time"))
		uuid_generate_time(uuid);
	else if (parse_uuid(uuid_arg, uuid))
		return fail(1, "invalid UUID '%s'", uuid_arg);

	if (has_vsmfs(fd) && !force && !dry)
		return fail(1, "%s contains a vsmfs file system; use -f to overwrite it", dev);
	if (!dry) {
		others = other_signatures(fd, dev, force, quiet);
		if (others < 0)
			return 1;
		if (others && !force)
			return fail(1, "%s: use -f to overwrite %s", dev,
				    others == 1 ? "it" : "them");
	}

	if (!quiet || dry)
		print_layout(dev, &l, label, uuid, fc_areas, fc_area_blocks);
	if (dry)
		return 0;

	now = time(NULL);

	/* Root directory: empty, "." and ".." are implicit. */
	memset(&root, 0, sizeof(root));
	root.i_mode = cpu_to_le16(040755);
	root.i_nlink = cpu_to_le32(2);
	root.i_atime = root.i_mtime = root.i_ctime = root.i_crtime = cpu_to_le64((u64)now);
	root.i_uid = cpu_to_le32((u32)getuid());
	root.i_gid = cpu_to_le32((u32)getgid());

	/* Invalidate old superblocks first: a partial mkfs must not mount. */
	memset(blk, 0, sizeof(blk));
	ret = write_at(fd, blk, sizeof(blk), VSMFS_SB_BLOCK << VSMFS_BLOCK_SHIFT);
	if (!ret)
		ret = write_at(fd, blk, sizeof(blk), VSMFS_SB_BACKUP_BLOCK << VSMFS_BLOCK_SHIFT);
	if (!ret)
		ret = write_at(fd, blk, sizeof(blk), (blocks - 1) << VSMFS_BLOCK_SHIFT);
	if (!ret && fsync(fd))
		ret = -errno;

	/*
	 * Journal: empty (checkpoint and commit pointers 0, commit number 0),
	 * header i maps journal block i, never written; no header copies
	 * pending. The journal blocks themselves need no initialization. The
	 * fast-commit areas after them are zeroed: no record is found there.
	 */
	memset(&jsb, 0, sizeof(jsb));
	jsb.j_magic = cpu_to_le32(VSMFS_JOURNAL_MAGIC);
	jn = vsmfs_journal_geometry(l.journal_blocks - (u64)fc_areas * fc_area_blocks,
				    &jhdr_blocks);
	jsb.j_blocks = cpu_to_le32(jn);
	jsb.j_hdr_blocks = cpu_to_le32(jhdr_blocks);
	jsb.j_fc_areas = cpu_to_le32(fc_areas);
	jsb.j_fc_area_blocks = cpu_to_le32(fc_area_blocks);
	why = vsmfs_jsb_check(&jsb, l.journal_blocks, &js);
	if (why)
		return fail(1, "internal error: new journal superblock fails verification: %s",
			    why);
	if (!ret)
		ret = write_region(fd, l.journal_start + 1, jhdr_blocks, fill_jhdr, &jn);
	if (!ret)
		ret = write_region(fd, l.journal_start + 1 + jhdr_blocks, 1, NULL, NULL);
	if (!ret && fc_areas)
		ret = write_region(fd, l.journal_start + l.journal_blocks -
				   (u64)fc_areas * fc_area_blocks,
				   (u64)fc_areas * fc_area_blocks, NULL, NULL);
	if (!ret)
		ret = write_at(fd, &jsb, sizeof(jsb), l.journal_start << VSMFS_BLOCK_SHIFT);
	if (!ret)
		ret = write_region(fd, l.itable_start, l.itable_blocks, fill_itable, &root);
	if (!ret)
		ret = write_region(fd, l.imap_start, l.imap_blocks, fill_imap, NULL);
	lim[0] = VSMFS_ROOT_INO + 1;		/* i-number 0 reserved, 1 is root */
	lim[1] = l.inodes;
	if (!ret)
		ret = write_region(fd, l.ibitmap_start, l.ibitmap_blocks, fill_bitmap, lim);
	if (!ret)
		ret = write_region(fd, l.ptable_start, l.ptable_blocks, fill_ptable, &l);
	lim[0] = 1;				/* logical page 0 reserved */
	lim[1] = l.lpages;
	if (!ret)
		ret = write_region(fd, l.lbitmap_start, l.lbitmap_blocks, fill_bitmap, lim);
	if (!ret && fsync(fd))
		ret = -errno;
	if (ret)
		return fail(1, "%s: write failed: %s", dev, strerror(-ret));

	memset(&dsb, 0, sizeof(dsb));
	dsb.s_magic = cpu_to_le32(VSMFS_MAGIC);
	dsb.s_version = cpu_to_le32(VSMFS_FORMAT_VERSION);
	dsb.s_block_size = cpu_to_le32(VSMFS_BLOCK_SIZE);
	dsb.s_vsp_pages = cpu_to_le32(VSMFS_VSP_PAGES);
	dsb.s_feature_incompat = cpu_to_le32(incompat);
	dsb.s_inode_size = cpu_to_le32(VSMFS_INODE_SIZE);
	vsmfs_layout_to_sb(&l, &dsb);
	dsb.s_root_ino = cpu_to_le64(VSMFS_ROOT_INO);
	dsb.s_mkfs_time = cpu_to_le64((u64)now);
	dsb.s_write_time = cpu_to_le64((u64)now);
	dsb.s_state = cpu_to_le32(VSMFS_STATE_CLEAN);
	memcpy(dsb.s_uuid, uuid, sizeof(uuid));
	strncpy((char *)dsb.s_label, label, VSMFS_LABEL_LEN);
	dsb.s_checksum = cpu_to_le32(vsmfs_sb_csum(&dsb));
	why = vsmfs_sb_check(&dsb, blocks);
	if (why)
		return fail(1, "internal error: new superblock fails verification: %s", why);

	memset(blk, 0, sizeof(blk));
	memcpy(blk, &dsb, sizeof(dsb));
	ret = write_at(fd, blk, sizeof(blk), l.sb_backup << VSMFS_BLOCK_SHIFT);
	if (!ret && fsync(fd))
		ret = -errno;
	if (!ret)
		ret = write_at(fd, blk, sizeof(blk), VSMFS_SB_BLOCK << VSMFS_BLOCK_SHIFT);
	if (!ret && fsync(fd))
		ret = -errno;
	if (ret)
		return fail(1, "%s: writing the superblock failed: %s", dev, strerror(-ret));
	close(fd);
	return 0;
}
