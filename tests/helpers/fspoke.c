// SPDX-License-Identifier: GPL-2.0
/*
 * fspoke - read or change single on-media fields of a vsmfs image, for the
 * fsck tests. Offsets are computed from the superblock's layout; the
 * device is accessed with O_DIRECT (the module writes through DAX, so the
 * block device's page cache may be stale).
 *
 *   fspoke [-j] DEV layout
 *   fspoke [-j] DEV inode INO get FIELD | set FIELD=VALUE...
 *   fspoke [-j] DEV dirent DIRINO NAME get FIELD | set FIELD=VALUE... [name=NEW]
 *   fspoke [-j] DEV imap INO [SLOT]
 *   fspoke [-j] DEV ptable LPN [FRAME]
 *   fspoke [-j] DEV lbit LPN [0|1]
 *   fspoke [-j] DEV ibit INO [0|1]
 *   fspoke DEV lpnblock LPN
 *   fspoke DEV jsb get FIELD | set FIELD=VALUE...
 *   fspoke DEV jdesc get FIELD | set FIELD=VALUE...
 *
 * Without a value a command prints the current one. With -j a changed
 * block is not written home but added to a committed journal transaction
 * (started if none is pending), as a crash after the commit would leave it:
 * reads with -j see the staged copies.
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

/* Pending transaction: descriptor and journal superblock. */
static struct vsmfs_djsb *jsb;
static struct vsmfs_djdesc *desc;

static u32 jcount(void)
{
	return le64_to_cpu(jsb->j_commit) ? le64_to_cpu(jsb->j_commit) & 0xffffffff : 0;
}

static void jload(void)
{
	jsb = balloc();
	desc = balloc();
	io(0, L.journal_start, jsb);
	io(0, L.journal_start + 1, desc);
}

static void get_blk(u64 blk, void *buf)
{
	u32 i;

	io(0, blk, buf);
	if (!journal)
		return;
	for (i = 0; i < jcount(); i++)
		if (le64_to_cpu(desc->d_home[i]) == blk)
			io(0, L.journal_start + 2 + i, buf);
}

/* Stage @buf as the new content of @blk in the committed transaction. */
static void put_blk(u64 blk, void *buf)
{
	u32 i, n;
	u64 seq;

	if (!journal) {
		io(1, blk, buf);
		if (fsync(fd))
			die("fsync failed");
		return;
	}
	n = jcount();
	if (!n) {
		memset(desc, 0, BS);
		desc->d_magic = cpu_to_le32(VSMFS_JDESC_MAGIC);
	}
	seq = le64_to_cpu(jsb->j_sequence);
	for (i = 0; i < n; i++)
		if (le64_to_cpu(desc->d_home[i]) == blk)
			break;
	if (i == n)
		n++;
	io(1, L.journal_start + 2 + i, buf);
	desc->d_home[i] = cpu_to_le64(blk);
	desc->d_count = cpu_to_le32(n);
	desc->d_sequence = cpu_to_le64(seq);
	io(1, L.journal_start + 1, desc);
	if (fsync(fd))
		die("fsync failed");
	jsb->j_commit = cpu_to_le64((seq & 0xffffffff) << 32 | n);
	io(1, L.journal_start, jsb);
	if (fsync(fd))
		die("fsync failed");
}

struct field {
	const char *name;
	size_t off, size;
};

#define FI(n, m) { n, offsetof(struct vsmfs_dinode, m), sizeof(((struct vsmfs_dinode *)0)->m) }
#define FD(n, m) { n, offsetof(struct vsmfs_ddirent, m), sizeof(((struct vsmfs_ddirent *)0)->m) }
#define FJ(n, m) { n, offsetof(struct vsmfs_djsb, m), sizeof(((struct vsmfs_djsb *)0)->m) }
#define FX(n, m) { n, offsetof(struct vsmfs_djdesc, m), sizeof(((struct vsmfs_djdesc *)0)->m) }

static const struct field inode_fields[] = {
	FI("mode", i_mode), FI("reserved0", i_reserved0), FI("nlink", i_nlink),
	FI("uid", i_uid), FI("gid", i_gid), FI("flags", i_flags),
	FI("generation", i_generation), FI("size", i_size), FI("pages", i_pages),
	FI("mtime", i_mtime), FI("mtime_ns", i_mtime_ns), FI("rdev", i_rdev),
	FI("tail_key", i_tail_key), FI("xattr", i_xattr),
	FI("direct0", i_direct[0]), FI("direct1", i_direct[1]), FI("direct2", i_direct[2]),
	FI("direct3", i_direct[3]), FI("direct4", i_direct[4]), FI("direct5", i_direct[5]),
	FI("direct6", i_direct[6]), FI("direct7", i_direct[7]),
	FI("ind", i_ind), FI("dind", i_dind), { "reserved2", offsetof(struct vsmfs_dinode,
	i_reserved2), 8 }, { NULL, 0, 0 }
};

static const struct field dirent_fields[] = {
	FD("ino", d_ino), FD("rec_len", d_rec_len), FD("name_len", d_name_len),
	FD("type", d_type), FD("hash", d_hash), { "name0", VSMFS_DIRENT_BASE, 1 },
	{ NULL, 0, 0 }
};

static const struct field jsb_fields[] = {
	FJ("magic", j_magic), FJ("blocks", j_blocks), FJ("commit", j_commit),
	FJ("sequence", j_sequence), { NULL, 0, 0 }
};

static const struct field jdesc_fields[] = {
	FX("magic", d_magic), FX("count", d_count), FX("sequence", d_sequence),
	FX("home0", d_home[0]), { NULL, 0, 0 }
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

	if (lpn >= L.data_pages)
		die("logical page out of range");
	get_blk(L.ptable_start + lpn / (BS / 8), pt);
	frame = le64_to_cpu(pt[lpn % (BS / 8)]) & VSMFS_PTE_FRAME_MASK;
	free(pt);
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
	if (vsmfs_compute_layout(&L, le64_to_cpu(sb->s_blocks), le64_to_cpu(sb->s_journal_blocks),
				 le64_to_cpu(sb->s_inodes)))
		die("superblock has no valid layout");
	jload();
	cmd = argv[i + 1];
	argv += i + 2;
	argc -= i + 2;
	n = argc ? strtoull(argv[0], NULL, 0) : 0;

	if (!strcmp(cmd, "layout")) {
		printf("journal_start=%llu\nitable_start=%llu\nimap_start=%llu\n"
		       "ptable_start=%llu\nlbitmap_start=%llu\nibitmap_start=%llu\n"
		       "data_start=%llu\ndata_pages=%llu\ninodes=%llu\n",
		       (unsigned long long)L.journal_start, (unsigned long long)L.itable_start,
		       (unsigned long long)L.imap_start, (unsigned long long)L.ptable_start,
		       (unsigned long long)L.lbitmap_start, (unsigned long long)L.ibitmap_start,
		       (unsigned long long)L.data_start, (unsigned long long)L.data_pages,
		       (unsigned long long)L.inodes);
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
			printf("%llu\n", (unsigned long long)le64_to_cpu(p[n % (BS / 8)]));
			return 0;
		}
		p[n % (BS / 8)] = cpu_to_le64(strtoull(argv[1], NULL, 0));
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
	if (!strcmp(cmd, "jdesc") && argc >= 2) {
		if (fields(jdesc_fields, desc, argv, argc))
			io(1, L.journal_start + 1, desc);
		return fsync(fd) ? 1 : 0;
	}
	fprintf(stderr, "fspoke: bad command\n");
	return 2;
}
