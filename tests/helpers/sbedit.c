// SPDX-License-Identifier: GPL-2.0
/*
 * sbedit - read or change fields of a vsmfs superblock, for tests.
 *
 *   sbedit [-b] [-k] DEVICE get FIELD
 *   sbedit [-b] [-k] DEVICE set FIELD=VALUE...
 *
 * -b works on the backup superblock, -k keeps the old checksum (so the
 * change shows up as a checksum mismatch); otherwise the checksum is
 * recomputed and only the changed field is wrong.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

#include "vsmfs_format.h"
#include "verify.h"

#define F(name) { #name, offsetof(struct vsmfs_dsb, s_##name), \
		  sizeof(((struct vsmfs_dsb *)0)->s_##name) }

static const struct field {
	const char *name;
	size_t off, size;
} fields[] = {
	F(magic), F(version), F(feature_compat), F(feature_incompat),
	F(feature_ro_compat), F(block_size), F(vsp_pages), F(inode_size),
	F(blocks), F(journal_start), F(journal_blocks), F(itable_start),
	F(itable_blocks), F(imap_start), F(ptable_start), F(lbitmap_start),
	F(ibitmap_start), F(data_start), F(data_pages), F(lpages), F(inodes),
	F(root_ino), F(mount_count), F(state), F(checksum), F(error_count),
	F(first_error_time), F(first_error_ino), F(last_error_time), F(last_error_ino),
};

static const struct field *lookup(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strlen(fields[i].name) == len && !strncmp(fields[i].name, name, len))
			return &fields[i];
	fprintf(stderr, "sbedit: unknown field '%.*s'\n", (int)len, name);
	exit(2);
}

/*
 * Block of the backup superblock: where the primary's layout puts it (its
 * checksum not checked, so that a primary changed with -k still names it),
 * else where mkfs puts it.
 */
static u64 backup_block(int fd, char *buf)
{
	const struct vsmfs_dsb *sb = (const struct vsmfs_dsb *)buf;
	struct vsmfs_layout l;
	off_t size = lseek(fd, 0, SEEK_END);
	u64 dev_blocks;

	if (size <= 0 && ioctl(fd, BLKGETSIZE64, &size))
		size = 0;
	dev_blocks = (u64)size >> VSMFS_BLOCK_SHIFT;
	if (pread(fd, buf, VSMFS_BLOCK_SIZE, 0) == VSMFS_BLOCK_SIZE &&
	    le32_to_cpu(sb->s_magic) == VSMFS_MAGIC &&
	    !vsmfs_compute_layout_sparse(&l, le64_to_cpu(sb->s_blocks),
					 le64_to_cpu(sb->s_journal_blocks),
					 le64_to_cpu(sb->s_inodes),
					 le32_to_cpu(sb->s_feature_incompat),
					 le64_to_cpu(sb->s_lpages)))
		return l.sb_backup;
	if (dev_blocks &&
	    pread(fd, buf, VSMFS_BLOCK_SIZE, (off_t)(dev_blocks - 1) * VSMFS_BLOCK_SIZE) ==
	    VSMFS_BLOCK_SIZE && le32_to_cpu(sb->s_magic) == VSMFS_MAGIC)
		return dev_blocks - 1;
	return VSMFS_SB_BACKUP_BLOCK;
}

int main(int argc, char **argv)
{
	int backup = 0, keep = 0, fd, i = 1;
	static char buf[VSMFS_BLOCK_SIZE] __attribute__((aligned(VSMFS_BLOCK_SIZE)));
	struct vsmfs_dsb sb;
	off_t off;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-b"))
			backup = 1;
		else if (!strcmp(argv[i], "-k"))
			keep = 1;
	}
	if (argc - i < 3) {
		fprintf(stderr, "usage: sbedit [-b] [-k] DEVICE get FIELD | set FIELD=VALUE...\n");
		return 2;
	}
	/*
	 * O_DIRECT: the module writes the device through DAX, not through the
	 * block device's page cache, which may hold stale copies.
	 */
	fd = open(argv[i], O_RDWR | O_DIRECT);
	if (fd < 0)
		fd = open(argv[i], O_RDWR);
	if (fd < 0) {
		perror(argv[i]);
		return 1;
	}
	off = backup ? backup_block(fd, buf) * VSMFS_BLOCK_SIZE : VSMFS_SB_BLOCK;
	if (pread(fd, buf, sizeof(buf), off) != sizeof(buf)) {
		perror("read");
		return 1;
	}
	memcpy(&sb, buf, sizeof(sb));
	if (!strcmp(argv[i + 1], "get")) {
		const struct field *f = lookup(argv[i + 2], strlen(argv[i + 2]));
		u64 v = 0;

		memcpy(&v, (char *)&sb + f->off, f->size);
		printf("%llu\n", (unsigned long long)le64_to_cpu(v));
		return 0;
	}
	for (i += 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		const struct field *f;
		u64 v;

		if (!eq)
			return 2;
		f = lookup(argv[i], (size_t)(eq - argv[i]));
		v = cpu_to_le64(strtoull(eq + 1, NULL, 0));
		memcpy((char *)&sb + f->off, &v, f->size);
	}
	if (!keep)
		sb.s_checksum = cpu_to_le32(vsmfs_sb_csum(&sb));
	memcpy(buf, &sb, sizeof(sb));
	if (pwrite(fd, buf, sizeof(buf), off) != sizeof(buf) || fsync(fd)) {
		perror("write");
		return 1;
	}
	return 0;
}
