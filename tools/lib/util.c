// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the vsmfs user-space tools. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vsmfs_format.h"
#include "verify.h"
#include "../tools.h"

const char *progname = "vsmfs";

/* Print "progname: message" on stderr and return @code. */
int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/*
 * Called by fatal() before it exits: a tool that can go on without the
 * part that failed jumps back from here.
 */
void (*fatal_hook)(void);

/* Print "progname: message" on stderr and exit with an operational error. */
void fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (fatal_hook)
		fatal_hook();
	exit(EXIT_OPERATIONAL);
}

/* Zeroed, block aligned memory (O_DIRECT buffers); running out is fatal. */
void *xalloc(u64 size)
{
	void *p;

	size = roundup(size ? size : 1, (u64)VSMFS_BLOCK_SIZE);
	if (posix_memalign(&p, VSMFS_BLOCK_SIZE, size))
		fatal("out of memory (%" PRIu64 " bytes)", size);
	memset(p, 0, size);
	return p;
}

/*
 * Room for element @n in the array @p of *@cap elements of @size bytes:
 * @p, or a copy twice as large (*@cap updated) when it is full. Running
 * out of memory is fatal.
 */
void *xgrow(void *p, u64 n, u64 *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	p = realloc(p, *cap * size);
	if (!p)
		fatal("out of memory");
	return p;
}

/*
 * The end of every tool's getopt switch: -V prints the version, -h the
 * help, both on stdout and exit 0; any other option is a usage error.
 */
void common_option(int c, void (*usage)(FILE *f), int usage_status)
{
	if (c == 'V') {
		printf("%s %s (format %d)\n", progname, VSMFS_TOOLS_VERSION, VSMFS_FORMAT_VERSION);
		exit(0);
	}
	if (c == 'h') {
		usage(stdout);
		exit(0);
	}
	usage(stderr);
	exit(usage_status);
}

/* Parse "123", "64K", "128M", "2G", "1T", "4P" into bytes (or plain counts). */
int parse_size(const char *s, u64 *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	case 'P':
		shift = 50;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1])
		return -EINVAL;
	if (shift && v > (~0ULL >> shift))
		return -ERANGE;
	*out = (u64)v << shift;
	return 0;
}

int parse_uuid(const char *s, u8 uuid[16])
{
	int i = 0;

	while (*s && i < 32) {
		if (*s == '-') {
			s++;
			continue;
		}
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]))
			return -EINVAL;
		sscanf(s, "%2hhx", &uuid[i / 2]);
		i += 2;
		s += 2;
	}
	return (i == 32 && !*s) ? 0 : -EINVAL;
}

void format_uuid(const u8 u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/*
 * Open a block device or an image file and return its size. Block devices
 * opened for writing are opened exclusively, so a mounted device is refused.
 */
int open_device(const char *path, int flags, u64 *bytes)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return -fail(1, "%s: %s", path, strerror(errno));
	if (S_ISBLK(st.st_mode) && (flags & O_ACCMODE) != O_RDONLY)
		flags |= O_EXCL;
	else if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return -fail(1, "%s: not a block device or regular file", path);
	fd = open(path, flags);
	if (fd < 0) {
		if (errno == EBUSY)
			return -fail(1, "%s: device is in use (mounted?)", path);
		return -fail(1, "%s: %s", path, strerror(errno));
	}
	if (S_ISBLK(st.st_mode)) {
		unsigned long long sz;

		if (ioctl(fd, BLKGETSIZE64, &sz)) {
			fail(1, "%s: cannot get size: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		*bytes = sz;
	} else {
		*bytes = (u64)st.st_size;
	}
	return fd;
}

/* Forget the error state the module recorded in superblock @sb. */
void sb_clear_errors(struct vsmfs_dsb *sb)
{
	sb->s_state = cpu_to_le32(le32_to_cpu(sb->s_state) & ~VSMFS_STATE_ERROR);
	sb->s_error_count = 0;
	sb->s_first_error_line = sb->s_last_error_line = 0;
	sb->s_first_error_time = sb->s_last_error_time = 0;
	sb->s_first_error_ino = sb->s_last_error_ino = 0;
	memset(sb->s_first_error_func, 0, sizeof(sb->s_first_error_func));
	memset(sb->s_last_error_func, 0, sizeof(sb->s_last_error_func));
}

/*
 * The row of the region table (mkfs.vsmfs, vsmfs-inspect) of the
 * fast-commit areas, the last blocks of the journal region; none without.
 */
void print_fc_areas(const struct vsmfs_layout *l, u32 areas, u32 area_blocks)
{
	u64 blocks = (u64)areas * area_blocks;

	if (!areas)
		return;
	printf("  %-22s %10" PRIu64 " %10" PRIu64 "  (%u area%s of %u block%s, in the journal)\n",
	       "fast-commit areas", l->journal_start + l->journal_blocks - blocks, blocks, areas,
	       areas == 1 ? "" : "s", area_blocks, area_blocks == 1 ? "" : "s");
}

/*
 * The row of the region table (mkfs.vsmfs, vsmfs-inspect) that gives the
 * logical pages and whether the file system is sparse.
 */
void print_lpages(const struct vsmfs_layout *l)
{
	if (l->sparse)
		printf("  %-22s %10s %10" PRIu64 "  (%" PRIu64 " MiB; sparse, %" PRIu64
		       " frames)\n", "logical pages", "", l->lpages,
		       l->lpages >> (20 - VSMFS_BLOCK_SHIFT), l->data_pages);
	else
		printf("  %-22s %10s %10" PRIu64 "  (not sparse, one frame each)\n",
		       "logical pages", "", l->lpages);
}
