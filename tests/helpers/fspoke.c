// SPDX-License-Identifier: GPL-2.0
/*
 * fspoke - read or change single on-media fields of a vsmfs image, for the
 * fsck tests. Offsets are computed from the superblock's layout; the
 * device is accessed with O_DIRECT (the module writes through DAX, so the
 * block device's page cache may be stale).
 *
 *   fspoke [-j] DEV layout   (with the fast-commit areas the journal superblock gives)
 *   fspoke [-j] DEV inode INO get FIELD | set FIELD=VALUE...
 *   fspoke [-j] DEV dirent DIRINO NAME get FIELD | set FIELD=VALUE... [name=NEW]
 *   fspoke [-j] DEV imap INO [SLOT]
 *   fspoke [-j] DEV ptable LPN [FRAME|none]
 *   fspoke [-j] DEV lbit LPN [0|1]
 *   fspoke [-j] DEV ibit INO [0|1]
 *   fspoke DEV lpnblock LPN
 *   fspoke DEV jsb get FIELD | set FIELD=VALUE...
 *   fspoke DEV jhdr N get FIELD | set FIELD=VALUE...   (flags number wc jblock home)
 *
 * Without a value a command prints the current one ("ptable" prints a
 * logical page without a frame as "none"). With -j a changed
 * block is not written home but appended to the journal as a committed
 * version in the last transaction, as a crash after the commit would leave
 * it: reads with -j see the latest committed versions.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vsmfs_format.h"
#include "verify.h"

static int fd, journal;
static struct vsmfs_layout L;

#define BS VSMFS_BLOCK_SIZE

static void die(const char *what)
{
	fprintf(stderr, "fspoke: %s\n", what);
	exit(1);
}

static void *balloc(void)
{
	void *p;

	if (posix_memalign(&p, BS, BS))
		die("out of memory");
	return p;
}

static void io(int wr, u64 blk, void *buf)
{
	ssize_t n = wr ? pwrite(fd, buf, BS, (off_t)(blk * BS)) :
			 pread(fd, buf, BS, (off_t)(blk * BS));

	if (n != BS)
		die(wr ? "write failed" : "read failed");
}

/*
 * The journal: superblock and headers. With -j, reads see the latest
 * committed version of a block, and a change is appended as a committed
 * version in the last transaction (the previous versions re-flagged as a
 * commit leaves them).
 */
static struct vsmfs_djsb *jsb;
static struct vsmfs_djhdr *hdr;
static u32 jn, jhdr_blocks;
static u64 fc_start;	/* first block of the fast-commit areas, 0 without */

/* The positions j_checkpoint holds, without the commit number's bits. */
static u32 jckpt(void)
{
	return (u32)(le64_to_cpu(jsb->j_checkpoint) & VSMFS_JCKPT_POS_MASK);
}

static u32 jlast(void)
{
	return (u32)((le64_to_cpu(jsb->j_checkpoint) & VSMFS_JCKPT_POS_MASK) >> 32);
}

static u64 jh_state(u32 i)
{
	return le64_to_cpu(hdr[i].h_state);
}

static u64 jh_map(u32 i)
{
	return le64_to_cpu(hdr[i].h_map);
}

static u64 jblock(u32 i)
{
	return L.journal_start + 2 + jhdr_blocks + (jh_map(i) & VSMFS_JH_JB_MASK);
}

static void jload(void)
{
	u64 fc;
	u32 b;

	jsb = balloc();
	io(0, L.journal_start, jsb);
	/* The fast-commit areas are the last blocks of the region, when they fit. */
	fc = (u64)le32_to_cpu(jsb->j_fc_areas) * le32_to_cpu(jsb->j_fc_area_blocks);
	if (fc > L.journal_blocks / 4 || L.journal_blocks - fc < 16)
		fc = 0;
	fc_start = fc ? L.journal_start + L.journal_blocks - fc : 0;
	jn = vsmfs_journal_geometry(L.journal_blocks - fc, &jhdr_blocks);
	if (posix_memalign((void **)&hdr, BS, (size_t)jhdr_blocks * BS))
		die("out of memory");
	for (b = 0; b < jhdr_blocks; b++)
		io(0, L.journal_start + 1 + b, (char *)hdr + (size_t)b * BS);
}

static void jsave(void)
{
	u32 b;

	for (b = 0; b < jhdr_blocks; b++)
		io(1, L.journal_start + 1 + b, (char *)hdr + (size_t)b * BS);
	if (fsync(fd))
		die("fsync failed");
}

/* Header of the latest committed version of @blk, or -1. */
static long jlatest(u64 blk)
{
	long found = -1;
	u32 i;

	for (i = 0; i < jckpt() && i < jn; i++) {
		u64 st = jh_state(i);

		if ((st & (VSMFS_JH_VALID | VSMFS_JH_LATEST)) != (VSMFS_JH_VALID | VSMFS_JH_LATEST) ||
		    jh_map(i) >> VSMFS_JH_HOME_SHIFT != blk)
			continue;
		if (found < 0 || i >= jlast())
			found = i;
	}
	return found;
}

static void get_blk(u64 blk, void *buf)
{
	long i;

	io(0, blk, buf);
	if (!journal)
		return;
	i = jlatest(blk);
	if (i >= 0)
		io(0, jblock((u32)i), buf);
}

/* Stage @buf as the new content of @blk, committed in the last transaction. */
static void put_blk(u64 blk, void *buf)
{
	u32 i, p = jckpt();
	u64 count;
	long cur;

	if (!journal) {
		io(1, blk, buf);
		if (fsync(fd))
			die("fsync failed");
		return;
	}
	cur = jlatest(blk);
	if (cur >= (long)jlast()) {
		io(1, jblock((u32)cur), buf);
		if (fsync(fd))
			die("fsync failed");
		return;
	}
	if (p >= jn)
		die("journal full");
	for (i = 0; i < p; i++) {
		u64 st = jh_state(i);

		if (!(st & VSMFS_JH_VALID) || jh_map(i) >> VSMFS_JH_HOME_SHIFT != blk)
			continue;
		st &= ~(u64)(st & VSMFS_JH_LATEST ? VSMFS_JH_LATEST : VSMFS_JH_VALID);
		hdr[i].h_state = cpu_to_le64(st);
	}
	io(1, jblock(p), buf);
	hdr[p].h_state = cpu_to_le64((VSMFS_JH_USED | VSMFS_JH_VALID | VSMFS_JH_LATEST) |
				     (u64)p << VSMFS_JH_NUM_SHIFT |
				     ((jh_state(p) >> VSMFS_JH_WC_SHIFT) + 1) << VSMFS_JH_WC_SHIFT);
	hdr[p].h_map = cpu_to_le64((jh_map(p) & VSMFS_JH_JB_MASK) | blk << VSMFS_JH_HOME_SHIFT);
	jsave();
	/* The last transaction grows: the commit number stays. */
	count = vsmfs_jckpt_count(le64_to_cpu(jsb->j_checkpoint));
	jsb->j_checkpoint = cpu_to_le64(vsmfs_jckpt_set_count((u64)jlast() << 32 | (p + 1), count));
	jsb->j_commit = cpu_to_le64(p + 1);
	io(1, L.journal_start, jsb);
	if (fsync(fd))
		die("fsync failed");
}

/* jhdr N get FIELD | set FIELD=VALUE...: fields of header N. */
static int cmd_jhdr(u32 n, char **argv, int argc)
{
	static const char *const names[] = { "flags", "number", "wc", "jblock", "home" };
	int i, f;

	if (n >= jn || argc < 2)
		die("jhdr: header out of range or no get/set");
	for (i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
		u64 st = jh_state(n), map = jh_map(n), v = eq ? strtoull(eq + 1, NULL, 0) : 0;

		for (f = 0; f < 5; f++)
			if (strlen(names[f]) == len && !strncmp(names[f], argv[i], len))
				break;
		if (f == 5)
			die("jhdr: unknown field");
		if (!strcmp(argv[0], "get")) {
			u64 vals[5] = { st & VSMFS_JH_FLAGS,
					st >> VSMFS_JH_NUM_SHIFT & VSMFS_JH_NUM_MASK,
					st >> VSMFS_JH_WC_SHIFT, map & VSMFS_JH_JB_MASK,
					map >> VSMFS_JH_HOME_SHIFT };

			printf("%llu\n", (unsigned long long)vals[f]);
			return 0;
		}
		switch (f) {
		case 0: st = (st & ~(u64)VSMFS_JH_FLAGS) | (v & VSMFS_JH_FLAGS); break;
		case 1: st = (st & ~(VSMFS_JH_NUM_MASK << VSMFS_JH_NUM_SHIFT)) |
			     (v & VSMFS_JH_NUM_MASK) << VSMFS_JH_NUM_SHIFT; break;
		case 2: st = (st & ((1ULL << VSMFS_JH_WC_SHIFT) - 1)) | v << VSMFS_JH_WC_SHIFT; break;
		case 3: map = (map & ~VSMFS_JH_JB_MASK) | (v & VSMFS_JH_JB_MASK); break;
		case 4: map = (map & VSMFS_JH_JB_MASK) | v << VSMFS_JH_HOME_SHIFT; break;
		}
		hdr[n].h_state = cpu_to_le64(st);
		hdr[n].h_map = cpu_to_le64(map);
	}
	jsave();
	return 0;
}

struct field {
	const char *name;
	size_t off, size;
};

#define FI(n, m) { n, offsetof(struct vsmfs_dinode, m), sizeof(((struct vsmfs_dinode *)0)->m) }
#define FD(n, m) { n, offsetof(struct vsmfs_ddirent, m), sizeof(((struct vsmfs_ddirent *)0)->m) }
#define FJ(n, m) { n, offsetof(struct vsmfs_djsb, m), sizeof(((struct vsmfs_djsb *)0)->m) }

static const struct field inode_fields[] = {
	FI("mode", i_mode), FI("reserved0", i_reserved0), FI("nlink", i_nlink),
	FI("uid", i_uid), FI("gid", i_gid), FI("flags", i_flags),
	FI("generation", i_generation), FI("size", i_size), FI("pages", i_pages),
	FI("mtime", i_mtime), FI("mtime_ns", i_mtime_ns), FI("rdev", i_rdev),
	FI("tail_key", i_tail_key), FI("xattr", i_xattr),
	FI("direct0", i_direct[0]), FI("direct1", i_direct[1]), FI("direct2", i_direct[2]),
	FI("direct3", i_direct[3]), FI("direct4", i_direct[4]), FI("direct5", i_direct[5]),
	FI("direct6", i_direct[6]), FI("direct7", i_direct[7]),
	FI("ind", i_ind), FI("dind", i_dind), FI("parent", i_parent), { "reserved2", offsetof(struct vsmfs_dinode,
	i_reserved2), 8 }, { NULL, 0, 0 }
};

static const struct field dirent_fields[] = {
	FD("ino", d_ino), FD("rec_len", d_rec_len), FD("name_len", d_name_len),
	FD("type", d_type), FD("hash", d_hash), { "name0", VSMFS_DIRENT_BASE, 1 },
	{ NULL, 0, 0 }
};

static const struct field jsb_fields[] = {
	FJ("magic", j_magic), FJ("blocks", j_blocks), FJ("checkpoint", j_checkpoint),
	FJ("commit", j_commit), FJ("hdr_blocks", j_hdr_blocks), FJ("hcopy", j_hcopy),
	FJ("sequence", j_sequence), FJ("fc_areas", j_fc_areas),
	FJ("fc_area_blocks", j_fc_area_blocks), { NULL, 0, 0 }
};

static const struct field *lookup(const struct field *f, const char *name, size_t len)
{
	for (; f->name; f++)
		if (strlen(f->name) == len && !strncmp(f->name, name, len))
			return f;
	fprintf(stderr, "fspoke: unknown field '%.*s'\n", (int)len, name);
	exit(2);
}

/* get FIELD | set FIELD=VALUE... on the structure at @p. Returns 1 if changed. */
static int fields(const struct field *tab, void *p, char **argv, int argc)
{
	int i;

	if (argc < 2)
		die("get FIELD or set FIELD=VALUE expected");
	if (!strcmp(argv[0], "get")) {
		const struct field *f = lookup(tab, argv[1], strlen(argv[1]));
		u64 v = 0;

		memcpy(&v, (char *)p + f->off, f->size);
		printf("%llu\n", (unsigned long long)le64_to_cpu(v));
		return 0;
	}
	if (strcmp(argv[0], "set"))
		die("get or set expected");
	for (i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		const struct field *f;
		u64 v;

		if (!eq)
			die("FIELD=VALUE expected");
		f = lookup(tab, argv[i], (size_t)(eq - argv[i]));
		v = cpu_to_le64(strtoull(eq + 1, NULL, 0));
		memcpy((char *)p + f->off, &v, f->size);
	}
	return 1;
}

static u64 inode_loc(u64 ino, u64 *off)
{
	__le32 *m = balloc();
	u64 slot;

	if (ino >= L.inodes)
		die("inode number out of range");
	get_blk(L.imap_start + ino / (BS / 4), m);
	slot = le32_to_cpu(m[ino % (BS / 4)]);
	free(m);
	*off = (slot % VSMFS_INODES_PER_BLOCK) * VSMFS_INODE_SIZE;
	return L.itable_start + slot / VSMFS_INODES_PER_BLOCK;
}

static u64 lpn_block(u64 lpn)
{
	__le64 *pt = balloc();
	u64 frame;

	if (lpn >= L.lpages)
		die("logical page out of range");
	get_blk(L.ptable_start + lpn / (BS / 8), pt);
	frame = le64_to_cpu(pt[lpn % (BS / 8)]) & VSMFS_PTE_FRAME_MASK;
	free(pt);
	if (frame >= L.data_pages)
		die("logical page has no frame");
	return L.data_start + frame;
}

/* Entry of @key in the index of @di (directories: 4 KiB blocks). */
static u64 idx_lookup(const struct vsmfs_dinode *di, u64 key)
{
	__le64 *b = balloc();
	u64 v;

	if (key < VSMFS_NDIRECT)
		return le64_to_cpu(di->i_direct[key]);
	key -= VSMFS_NDIRECT;
	if (key >= VSMFS_IND_ENTRIES)
		die("directory too large for fspoke");
	get_blk(lpn_block(le64_to_cpu(di->i_ind)), b);
	v = le64_to_cpu(b[key]);
	free(b);
	return v;
}

static int cmd_dirent(u64 dir, const char *name, char **argv, int argc)
{
	struct vsmfs_dinode *di;
	u8 *blk = balloc();
	u64 off, b, nblk;

	get_blk(inode_loc(dir, &off), blk);
	di = malloc(sizeof(*di));
	memcpy(di, blk + off, sizeof(*di));
	nblk = le64_to_cpu(di->i_size) / BS;
	for (b = 0; b < nblk; b++) {
		u64 e = idx_lookup(di, b), home = lpn_block(e & VSMFS_IDX_LPN_MASK);
		unsigned int o = 0;

		get_blk(home, blk);
		while (o < BS) {
			struct vsmfs_ddirent *de = (void *)(blk + o);
			unsigned int rec = le16_to_cpu(de->d_rec_len);

			if (de->d_ino && de->d_name_len == strlen(name) &&
			    !memcmp(de->d_name, name, de->d_name_len)) {
				int i, k = 1, named = 0;

				/* set name=STRING renames in place (the record must fit). */
				for (i = 1; i < argc && !strcmp(argv[0], "set"); i++) {
					if (strncmp(argv[i], "name=", 5)) {
						argv[k++] = argv[i];
						continue;
					}
					de->d_name_len = (u8)strlen(argv[i] + 5);
					memcpy(de->d_name, argv[i] + 5, de->d_name_len);
					named = 1;
				}
				if (named)
					argc = k;
				if ((named && argc == 1) || fields(dirent_fields, de, argv, argc))
					put_blk(home, blk);
				return 0;
			}
			if (rec < VSMFS_DIRENT_BASE)
				die("corrupt directory block");
			o += rec;
		}
	}
	die("no such entry");
	return 1;
}

/* Get or set bit @n of the bitmap at @start. */
static int cmd_bit(u64 start, u64 n, const char *val)
{
	u8 *b = balloc();
	u64 blk = start + n / (BS * 8ULL), bit = n % (BS * 8ULL);

	get_blk(blk, b);
	if (!val) {
		printf("%d\n", b[bit / 8] >> (bit % 8) & 1);
		return 0;
	}
	if (atoi(val))
		b[bit / 8] |= (u8)(1U << (bit % 8));
	else
		b[bit / 8] &= (u8)~(1U << (bit % 8));
	put_blk(blk, b);
	return 0;
}

int main(int argc, char **argv)
{
	struct vsmfs_dsb *sb;
	u8 *blk;
	const char *cmd;
	u64 n, off;
	int i = 1;

	if (i < argc && !strcmp(argv[i], "-j")) {
		journal = 1;
		i++;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: see the head of tests/helpers/fspoke.c\n");
		return 2;
	}
	fd = open(argv[i], O_RDWR | O_DIRECT);
	if (fd < 0)
		fd = open(argv[i], O_RDWR);
	if (fd < 0) {
		perror(argv[i]);
		return 1;
	}
	blk = balloc();
	io(0, VSMFS_SB_BLOCK, blk);
	sb = (struct vsmfs_dsb *)blk;
	if (vsmfs_compute_layout_sparse(&L, le64_to_cpu(sb->s_blocks),
					le64_to_cpu(sb->s_journal_blocks),
					le64_to_cpu(sb->s_inodes),
					le32_to_cpu(sb->s_feature_incompat),
					le64_to_cpu(sb->s_lpages)))
		die("superblock has no valid layout");
	jload();
	cmd = argv[i + 1];
	argv += i + 2;
	argc -= i + 2;
	n = argc ? strtoull(argv[0], NULL, 0) : 0;

	if (!strcmp(cmd, "layout")) {
		printf("journal_start=%llu\njournal_blocks=%llu\nfc_start=%llu\nfc_areas=%u\n"
		       "fc_area_blocks=%u\nitable_start=%llu\nimap_start=%llu\n"
		       "ptable_start=%llu\nlbitmap_start=%llu\nibitmap_start=%llu\n"
		       "data_start=%llu\ndata_pages=%llu\ninodes=%llu\nsb_backup=%llu\n"
		       "lpages=%llu\nsparse=%d\n",
		       (unsigned long long)L.journal_start, (unsigned long long)L.journal_blocks,
		       (unsigned long long)fc_start,
		       fc_start ? le32_to_cpu(jsb->j_fc_areas) : 0,
		       fc_start ? le32_to_cpu(jsb->j_fc_area_blocks) : 0,
		       (unsigned long long)L.itable_start,
		       (unsigned long long)L.imap_start, (unsigned long long)L.ptable_start,
		       (unsigned long long)L.lbitmap_start, (unsigned long long)L.ibitmap_start,
		       (unsigned long long)L.data_start, (unsigned long long)L.data_pages,
		       (unsigned long long)L.inodes, (unsigned long long)L.sb_backup,
		       (unsigned long long)L.lpages, L.sparse);
		return 0;
	}
	if (!strcmp(cmd, "inode") && argc >= 3) {
		u64 home = inode_loc(n, &off);

		get_blk(home, blk);
		if (fields(inode_fields, blk + off, argv + 1, argc - 1))
			put_blk(home, blk);
		return 0;
	}
	if (!strcmp(cmd, "dirent") && argc >= 4)
		return cmd_dirent(n, argv[1], argv + 2, argc - 2);
	if (!strcmp(cmd, "imap") && argc >= 1) {
		__le32 *m = (__le32 *)blk;
		u64 home = L.imap_start + n / (BS / 4);

		get_blk(home, m);
		if (argc == 1) {
			printf("%u\n", le32_to_cpu(m[n % (BS / 4)]));
			return 0;
		}
		m[n % (BS / 4)] = cpu_to_le32((u32)strtoul(argv[1], NULL, 0));
		put_blk(home, m);
		return 0;
	}
	if (!strcmp(cmd, "ptable") && argc >= 1) {
		__le64 *p = (__le64 *)blk;
		u64 home = L.ptable_start + n / (BS / 8);

		get_blk(home, p);
		if (argc == 1) {
			u64 e = le64_to_cpu(p[n % (BS / 8)]);

			if (e == VSMFS_PTE_NONE)
				printf("none\n");
			else
				printf("%llu\n", (unsigned long long)e);
			return 0;
		}
		p[n % (BS / 8)] = cpu_to_le64(strcmp(argv[1], "none") ?
					      strtoull(argv[1], NULL, 0) : VSMFS_PTE_NONE);
		put_blk(home, p);
		return 0;
	}
	if (!strcmp(cmd, "lbit") && argc >= 1)
		return cmd_bit(L.lbitmap_start, n, argc > 1 ? argv[1] : NULL);
	if (!strcmp(cmd, "ibit") && argc >= 1)
		return cmd_bit(L.ibitmap_start, n, argc > 1 ? argv[1] : NULL);
	if (!strcmp(cmd, "lpnblock") && argc >= 1) {
		printf("%llu\n", (unsigned long long)lpn_block(n));
		return 0;
	}
	if (!strcmp(cmd, "jsb") && argc >= 2) {
		if (fields(jsb_fields, jsb, argv, argc))
			io(1, L.journal_start, jsb);
		return fsync(fd) ? 1 : 0;
	}
	if (!strcmp(cmd, "jhdr") && argc >= 3)
		return cmd_jhdr((u32)n, argv + 1, argc - 1);
	fprintf(stderr, "fspoke: bad command\n");
	return 2;
}
