// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs-admin - show and change the superblock of an unmounted vsmfs file
 * system: label, UUID, the error state the module records, and the default
 * mount options the module applies before the user's.
 *
 * Only a superblock that verifies is changed; a damaged one is left to
 * fsck.vsmfs. Every change is written as the module writes the superblock:
 * the backup (block 1, or the last block with the sb_last feature) first
 * and synced, then the primary and synced, both with a new checksum, so a
 * crash in between leaves one whole copy of the old or of the new
 * superblock, which mount and fsck.vsmfs take.
 *
 * Exit status: 0 success, 1 error, 16 usage error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../fs/vsmfs/verify.h"
#include "tools.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *dev;
static int fd = -1;
static u64 dev_blocks;
static struct vsmfs_dsb sb;
static struct vsmfs_layout L;
static u8 *blk;		/* one block, aligned for O_DIRECT */

/*
 * Mount options the module knows, and whether they take a value: what
 * -o checks before storing (the module checks the values at mount).
 */
static const struct {
	const char *name;
	bool value;
} known_opts[] = {
	{ "dax", false }, { "dax", true }, { "acl", false }, { "noacl", false },
	{ "user_xattr", false }, { "data", true }, { "cow", true }, { "tlb", true },
	{ "journal_delta", true }, { "journal_wear", true }, { "journal_gc", true },
	{ "checkpoint", true }, { "checkpoint_threshold", true }, { "aggregate", true },
	{ "aggregate_threshold", true }, { "aggregate_window", true },
	{ "journal_commit", true }, { "checkpoint_threads", true }, { "errors", true },
};

static int blk_io(bool wr, u64 b)
{
	ssize_t n = wr ? pwrite(fd, blk, VSMFS_BLOCK_SIZE, (off_t)(b << VSMFS_BLOCK_SHIFT)) :
			 pread(fd, blk, VSMFS_BLOCK_SIZE, (off_t)(b << VSMFS_BLOCK_SHIFT));

	if (n == VSMFS_BLOCK_SIZE)
		return 0;
	return fail(1, "%s: %s block %" PRIu64 ": %s", dev, wr ? "write" : "read", b,
		    n < 0 ? strerror(errno) : "short transfer");
}

/*
 * Is @path, or the block device it names, mounted? /proc/self/mounts names
 * the device a file system was mounted from; a block device is matched by
 * device number, so that another name of it (a symlink in /dev/disk) is
 * caught too. O_EXCL on a block device catches the rest.
 */
static bool is_mounted(const char *path, const struct stat *st)
{
	char src[4096], real[4096];
	struct stat ms;
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "r");

	if (!f)
		return false;
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	while (!found && fscanf(f, "%4095s %*s %*s %*s %*d %*d", src) == 1) {
		if (!strcmp(src, path) || !strcmp(src, real))
			found = true;
		else if (S_ISBLK(st->st_mode) && src[0] == '/' && !stat(src, &ms) &&
			 S_ISBLK(ms.st_mode) && ms.st_rdev == st->st_rdev)
			found = true;
	}
	fclose(f);
	return found;
}

/* Read and verify the primary superblock. */
static int read_super(void)
{
	const char *why;

	if (blk_io(false, VSMFS_SB_BLOCK))
		return 1;
	memcpy(&sb, blk, sizeof(sb));
	why = vsmfs_sb_check(&sb, dev_blocks);
	if (why) {
		if (le32_to_cpu(sb.s_magic) != VSMFS_MAGIC)
			return fail(1, "%s: no vsmfs file system found", dev);
		return fail(1, "%s: superblock: %s (run fsck.vsmfs)", dev, why);
	}
	vsmfs_layout_of_sb(&L, &sb);
	return 0;
}

/* Backup, then primary, each synced: see the top of the file. */
static int write_super(void)
{
	sb.s_write_time = cpu_to_le64((u64)time(NULL));
	sb.s_checksum = cpu_to_le32(vsmfs_sb_csum(&sb));
	memset(blk, 0, VSMFS_BLOCK_SIZE);
	memcpy(blk, &sb, sizeof(sb));
	if (blk_io(true, L.sb_backup))
		return 1;
	if (fsync(fd))
		return fail(1, "%s: sync: %s", dev, strerror(errno));
	if (blk_io(true, VSMFS_SB_BLOCK))
		return 1;
	if (fsync(fd))
		return fail(1, "%s: sync: %s", dev, strerror(errno));
	return 0;
}

/*
 * A new UUID: random (version 4), or time based (version 1: 100 ns ticks
 * since 1582-10-15, a random clock sequence and a random node with the
 * multicast bit set, as RFC 4122 asks of a node that is no MAC address).
 */
static int new_uuid(const char *how, u8 uuid[16])
{
	bool by_time = !strcmp(how, "time");
	struct timespec ts;
	u64 t;

	if (!by_time && strcmp(how, "random"))
		return parse_uuid(how, uuid) ? fail(1, "invalid UUID '%s'", how) : 0;
	if (getrandom(uuid, 16, 0) != 16)
		return fail(1, "cannot get random bytes: %s", strerror(errno));
	if (!by_time) {
		uuid[6] = (uuid[6] & 0x0f) | 0x40;
		uuid[8] = (uuid[8] & 0x3f) | 0x80;
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	t = (u64)ts.tv_sec * 10000000 + (u64)ts.tv_nsec / 100 + 0x01b21dd213814000ULL;
	uuid[0] = t >> 24;
	uuid[1] = t >> 16;
	uuid[2] = t >> 8;
	uuid[3] = t;
	uuid[4] = t >> 40;
	uuid[5] = t >> 32;
	uuid[6] = ((t >> 56) & 0x0f) | 0x10;
	uuid[7] = t >> 48;
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
	uuid[10] |= 0x01;
	return 0;
}

/* Check a comma-separated option list before it is stored. */
static int check_opts(const char *opts, bool force)
{
	size_t len = strlen(opts), i, n;
	const char *p = opts;

	if (len >= VSMFS_MOUNT_OPTS_LEN)
		return fail(1, "mount options '%s': %zu bytes, at most %d", opts, len,
			    VSMFS_MOUNT_OPTS_LEN - 1);
	for (i = 0; i < len; i++)
		if ((u8)opts[i] <= ' ' || (u8)opts[i] >= 0x7f)
			return fail(1, "mount options '%s': no spaces or unprintable characters",
				    opts);
	while (*p) {
		const char *end = strchrnul(p, ','), *eq = memchr(p, '=', (size_t)(end - p));
		size_t klen = eq ? (size_t)(eq - p) : (size_t)(end - p);
		bool ok = false;

		if (end == p || (eq && eq + 1 == end))
			return fail(1, "mount options '%s': empty option or value", opts);
		for (n = 0; n < ARRAY_SIZE(known_opts) && !ok; n++)
			ok = strlen(known_opts[n].name) == klen &&
			     !strncmp(known_opts[n].name, p, klen) && known_opts[n].value == !!eq;
		if (!ok && !force)
			return fail(1, "mount options '%s': unknown option '%.*s'%s (-f stores it"
				    " anyway; mount will refuse it)", opts, (int)(end - p), p,
				    eq ? "" : " or a value missing");
		p = *end ? end + 1 : end;
	}
	return 0;
}

static void show_time(const char *what, u64 t)
{
	char buf[64];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t) {
		printf("%-24s never\n", what);
		return;
	}
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&tt, &tm));
	printf("%-24s %s (%" PRIu64 ")\n", what, buf, t);
}

static void show_errors(void)
{
	u32 count = le32_to_cpu(sb.s_error_count);
	bool set = le32_to_cpu(sb.s_state) & VSMFS_STATE_ERROR;

	if (!set && !count) {
		printf("%-24s none recorded\n", "Errors:");
		return;
	}
	printf("%-24s %u found while mounted%s\n", "Errors:", count,
	       set ? ", not checked since (run fsck.vsmfs)" : "");
	show_time("First error time:", le64_to_cpu(sb.s_first_error_time));
	printf("%-24s %.*s:%u, inode %" PRIu64 "\n", "First error at:", VSMFS_ERROR_FUNC_LEN,
	       (const char *)sb.s_first_error_func, le32_to_cpu(sb.s_first_error_line),
	       (u64)le64_to_cpu(sb.s_first_error_ino));
	show_time("Last error time:", le64_to_cpu(sb.s_last_error_time));
	printf("%-24s %.*s:%u, inode %" PRIu64 "\n", "Last error at:", VSMFS_ERROR_FUNC_LEN,
	       (const char *)sb.s_last_error_func, le32_to_cpu(sb.s_last_error_line),
	       (u64)le64_to_cpu(sb.s_last_error_ino));
}

static void list_super(void)
{
	u32 state = le32_to_cpu(sb.s_state), incompat = le32_to_cpu(sb.s_feature_incompat);
	u32 compat = le32_to_cpu(sb.s_feature_compat), ro = le32_to_cpu(sb.s_feature_ro_compat);
	char uuid[37];

	format_uuid(sb.s_uuid, uuid);
	printf("%-24s %.*s\n", "Label:", VSMFS_LABEL_LEN, (const char *)sb.s_label);
	printf("%-24s %s\n", "UUID:", uuid);
	printf("%-24s %u\n", "Format version:", le32_to_cpu(sb.s_version));
	printf("%-24s%s%s%s%s%s%s\n", "Features:", incompat & VSMFS_FEATURE_INCOMPAT_SB_LAST ?
	       " sb_last" : "", incompat & VSMFS_FEATURE_INCOMPAT_SPARSE ? " sparse" : "",
	       incompat & VSMFS_FEATURE_INCOMPAT_FAST_COMMIT ? " fast_commit" : "",
	       compat & VSMFS_FEATURE_COMPAT_MOUNT_OPTS ? " mount_opts" : "",
	       ro & VSMFS_FEATURE_RO_COMPAT_BADFRAMES ? " badframes" : "",
	       incompat | compat | ro ? "" : " none");
	printf("%-24s %s%s\n", "State:", state & VSMFS_STATE_CLEAN ? "clean" :
	       "not cleanly unmounted", state & VSMFS_STATE_ERROR ? ", with errors" : "");
	printf("%-24s %s\n", "Default mount options:",
	       sb.s_mount_opts[0] ? (const char *)sb.s_mount_opts : "none");
	printf("%-24s %" PRIu64 " of %u bytes\n", "Blocks:", L.blocks, VSMFS_BLOCK_SIZE);
	printf("%-24s %" PRIu64 "\n", "Inodes:", L.inodes - 1);
	printf("%-24s %" PRIu64 "\n", "Data pages:", L.data_pages - 1);
	printf("%-24s %" PRIu64 "%s\n", "Logical pages:", L.lpages - 1,
	       L.sparse ? " (sparse: holes in files take no data pages)" : "");
	printf("%-24s %" PRIu64 " blocks\n", "Journal:", L.journal_blocks);
	printf("%-24s %" PRIu64 "\n", "Backup superblock:", L.sb_backup);
	printf("%-24s %u\n", "Mount count:", le32_to_cpu(sb.s_mount_count));
	show_time("Created:", le64_to_cpu(sb.s_mkfs_time));
	show_time("Last mounted:", le64_to_cpu(sb.s_mount_time));
	show_time("Last written:", le64_to_cpu(sb.s_write_time));
	show_errors();
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: vsmfs-admin [options] DEVICE\n"
		"Show or change the superblock of an unmounted vsmfs file system on DEVICE\n"
		"(a pmem device or an image file).\n\n"
		"  -l            list the superblock\n"
		"  -L LABEL      set the volume label (up to %d bytes; \"\" clears it)\n"
		"  -U UUID       set the UUID: a UUID, random or time\n"
		"  -e show|clear show the error state recorded while mounted, or clear it\n"
		"  -o OPTS       default mount options, applied before those given to mount\n"
		"                (\"\" clears them; at most %d bytes)\n"
		"  -f            store options -o does not know\n"
		"  -V, --version print the version and exit\n"
		"  -h, --help    this help\n"
		"Exit status: 0 success, 1 error, 16 usage error.\n",
		VSMFS_LABEL_LEN, VSMFS_MOUNT_OPTS_LEN - 1);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		COMMON_LONG_OPTIONS,
	};
	const char *label = NULL, *uuid_arg = NULL, *errs = NULL, *opts = NULL;
	bool list = false, force = false, change;
	struct stat st;
	u64 bytes;
	int c, flags;

	progname = "vsmfs-admin";
	while ((c = getopt_long(argc, argv, "lL:U:e:o:fVh", lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			list = true;
			break;
		case 'L':
			label = optarg;
			break;
		case 'U':
			uuid_arg = optarg;
			break;
		case 'e':
			errs = optarg;
			break;
		case 'o':
			opts = optarg;
			break;
		case 'f':
			force = true;
			break;
		default:
			common_option(c, usage, EXIT_USAGE);
		}
	}
	if (optind != argc - 1 || (errs && strcmp(errs, "show") && strcmp(errs, "clear")) ||
	    (!list && !label && !uuid_arg && !errs && !opts)) {
		if (errs && strcmp(errs, "show") && strcmp(errs, "clear"))
			fprintf(stderr, "%s: -e takes show or clear\n", progname);
		usage(stderr);
		return EXIT_USAGE;
	}
	dev = argv[optind];
	change = label || uuid_arg || opts || (errs && !strcmp(errs, "clear"));
	if (label && strlen(label) > VSMFS_LABEL_LEN)
		return fail(1, "label '%s': %zu bytes, at most %d", label, strlen(label),
			    VSMFS_LABEL_LEN);
	if (opts && check_opts(opts, force))
		return 1;

	if (stat(dev, &st))
		return fail(1, "%s: %s", dev, strerror(errno));
	if (change && is_mounted(dev, &st))
		return fail(1, "%s: is mounted: unmount it first", dev);
	flags = change ? O_RDWR : O_RDONLY;
	if (S_ISBLK(st.st_mode))
		flags |= O_DIRECT;	/* no stale page cache over DAX writes */
	fd = open_device(dev, flags, &bytes);
	if (fd < 0)
		return 1;
	dev_blocks = bytes >> VSMFS_BLOCK_SHIFT;
	if (posix_memalign((void **)&blk, VSMFS_BLOCK_SIZE, VSMFS_BLOCK_SIZE))
		return fail(1, "out of memory");
	if (dev_blocks < 2)
		return fail(1, "%s: no vsmfs file system found (device too small)", dev);
	if (read_super())
		return 1;

	if (label) {
		memset(sb.s_label, 0, sizeof(sb.s_label));
		memcpy(sb.s_label, label, strlen(label));
	}
	if (uuid_arg && new_uuid(uuid_arg, sb.s_uuid))
		return 1;
	if (opts) {
		u32 compat = le32_to_cpu(sb.s_feature_compat);

		memset(sb.s_mount_opts, 0, sizeof(sb.s_mount_opts));
		memcpy(sb.s_mount_opts, opts, strlen(opts));
		if (*opts)
			compat |= VSMFS_FEATURE_COMPAT_MOUNT_OPTS;
		else
			compat &= ~VSMFS_FEATURE_COMPAT_MOUNT_OPTS;
		sb.s_feature_compat = cpu_to_le32(compat);
	}
	if (errs && !strcmp(errs, "show"))
		show_errors();
	if (errs && !strcmp(errs, "clear"))
		sb_clear_errors(&sb);
	if (change && write_super())
		return 1;
	if (list)
		list_super();
	if (close(fd))
		return fail(1, "%s: close: %s", dev, strerror(errno));
	return 0;
}
