// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs-fsx - randomized file operation tester.
 *
 * Runs a seeded, reproducible sequence of operations on one or more files
 * and keeps an in-memory model of each file's contents and size. Every
 * read (read, preadv, mmap) is compared with the model, the size is checked
 * with fstat after every operation, and the whole file is compared at
 * intervals and at the end. On a mismatch it prints the tail of the
 * operation log, the differing bytes and the last logged operation that
 * touched the first bad byte, and exits with status 1.
 *
 * Always enabled: write (pwrite, lseek + write), read, pwritev, preadv,
 * truncate up and down, O_APPEND writes, fsync, fdatasync, close and reopen.
 * Enabled by options: fallocate modes, mmap reads and writes, MAP_SYNC
 * mappings, SEEK_DATA/SEEK_HOLE checks and FIEMAP checks. "-P DIR" probes
 * which of these the file system under DIR supports and prints the options
 * that enable them.
 *
 * Model invariant: the model bytes past a file's size are zero, so growing
 * a file (truncate, fallocate, a write past the end) needs no model update
 * for the gap: it must read as zeros.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif

#define KIB		1024ULL
#define MIB		(1024 * KIB)
#define PAGE		(4 * KIB)
#define SUPERPAGE	(2 * MIB)
#define LOG_SLOTS	1024
#define MAX_IOV		8

enum op {
	OP_WRITE, OP_READ, OP_WRITEV, OP_READV, OP_TRUNCATE, OP_APPEND,
	OP_FSYNC, OP_REOPEN, OP_FALLOC, OP_MAPREAD, OP_MAPWRITE, OP_SEEK,
	OP_FIEMAP, OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"write", "read", "pwritev", "preadv", "truncate", "append",
	"fsync", "reopen", "fallocate", "mapread", "mapwrite", "seek",
	"fiemap",
};

/* Relative frequencies; disabled operation classes get 0. */
static unsigned int op_weight[OP_COUNT] = {
	[OP_WRITE] = 20, [OP_READ] = 18, [OP_WRITEV] = 6, [OP_READV] = 6,
	[OP_TRUNCATE] = 8, [OP_APPEND] = 6, [OP_FSYNC] = 3, [OP_REOPEN] = 2,
	[OP_FALLOC] = 8, [OP_MAPREAD] = 8, [OP_MAPWRITE] = 8, [OP_SEEK] = 5,
	[OP_FIEMAP] = 2,
};

/* fallocate modes, selectable one by one with -F */
enum falloc_kind { FA_ALLOC, FA_KEEP, FA_PUNCH, FA_ZERO, FA_ZERO_KEEP, FA_COUNT };

static const struct {
	const char *name;
	int mode;
} falloc_modes[FA_COUNT] = {
	[FA_ALLOC] = { "alloc", 0 },
	[FA_KEEP] = { "keep", FALLOC_FL_KEEP_SIZE },
	[FA_PUNCH] = { "punch", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE },
	[FA_ZERO] = { "zero", FALLOC_FL_ZERO_RANGE },
	[FA_ZERO_KEEP] = { "zero", FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE },
};

struct file {
	const char *path;
	int fd;			/* O_RDWR */
	int afd;		/* O_WRONLY | O_APPEND */
	uint64_t size;		/* model size */
	unsigned char *model;	/* max_size bytes, zero past size */
};

struct logent {
	long nr;
	int file;
	enum op op;
	int how;		/* variant: syscall flavour, mode, iovec count */
	uint64_t off, len;
	uint64_t size_before, size_after;
};

/* Options */
static uint64_t seed = 1;
static long nops = 10000;
static uint64_t max_len = 8 * MIB;
static uint64_t max_size = 32 * MIB;
static long check_every = 1000;
static unsigned int log_tail = 40;
static long inject_at = -1;
static bool falloc_on[FA_COUNT];
static bool use_mmap, use_map_sync, use_seek, use_fiemap, quiet;
static int big_pct = 3;

static struct file *files;
static int nfiles;
static struct logent oplog[LOG_SLOTS];
static long cur_op;
static unsigned long op_count[OP_COUNT];
static unsigned char *wbuf, *rbuf;
static uint64_t rng;
static long pagesize;
static char *const *saved_argv;
static int saved_argc;

/* splitmix64: the one random stream, so a seed reproduces a run. */
static uint64_t next64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static uint64_t rnd(uint64_t n)
{
	return next64() % n;
}

/* Uniform in [lo, hi]. */
static uint64_t rnd_range(uint64_t lo, uint64_t hi)
{
	return lo + rnd(hi - lo + 1);
}

/* Fill @len bytes with pseudo-random data derived from the stream. */
static void fill_random(unsigned char *p, uint64_t len)
{
	uint64_t x = next64() | 1, i;

	for (i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static void describe(const struct logent *e, char *buf, size_t size)
{
	const char *how = "";
	char tmp[64];

	switch (e->op) {
	case OP_WRITE:
		how = e->how ? " (lseek+write)" : " (pwrite)";
		break;
	case OP_READ:
		how = e->how ? " (lseek+read)" : " (pread)";
		break;
	case OP_WRITEV:
	case OP_READV:
		snprintf(tmp, sizeof(tmp), " (%d iovecs)", e->how);
		how = tmp;
		break;
	case OP_FSYNC:
		how = e->how ? " (fdatasync)" : " (fsync)";
		break;
	case OP_FALLOC:
		snprintf(tmp, sizeof(tmp), " (%s%s)", falloc_modes[e->how].name,
			 e->how == FA_ZERO_KEEP ? ",keep" : "");
		how = tmp;
		break;
	case OP_MAPWRITE:
		how = e->how == 2 ? " (MAP_SYNC)" : e->how ? " (msync)" : " (no msync)";
		break;
	case OP_REOPEN:
		how = e->how ? " (full check)" : "";
		break;
	default:
		break;
	}
	snprintf(buf, size, "#%-7ld f%d %-9s 0x%09" PRIx64 " +0x%07" PRIx64
		 " size 0x%" PRIx64 " -> 0x%" PRIx64 "%s", e->nr, e->file, op_names[e->op],
		 e->off, e->len, e->size_before, e->size_after, how);
}

static void print_log_tail(void)
{
	long first = cur_op - (long)log_tail + 1;
	char line[200];
	long i;

	if (first < 0)
		first = 0;
	if (cur_op - first >= LOG_SLOTS)
		first = cur_op - LOG_SLOTS + 1;
	fprintf(stderr, "operation log (last %ld of %ld):\n", cur_op - first + 1, cur_op + 1);
	for (i = first; i <= cur_op; i++) {
		describe(&oplog[i % LOG_SLOTS], line, sizeof(line));
		fprintf(stderr, "  %s\n", line);
	}
}

/* Does a logged operation change (or define) the byte at @off of file @f? */
static bool touches(const struct logent *e, int f, uint64_t off)
{
	if (e->file != f)
		return false;
	switch (e->op) {
	case OP_WRITE: case OP_WRITEV: case OP_APPEND: case OP_MAPWRITE: case OP_FALLOC:
		return off >= e->off && off < e->off + e->len;
	case OP_TRUNCATE:
		return off >= e->off && off < e->size_before;
	default:
		return false;
	}
}

static void print_last_writer(int f, uint64_t off)
{
	char line[200];
	long i;

	for (i = cur_op; i >= 0 && cur_op - i < LOG_SLOTS; i--) {
		if (touches(&oplog[i % LOG_SLOTS], f, off)) {
			describe(&oplog[i % LOG_SLOTS], line, sizeof(line));
			fprintf(stderr, "last logged operation changing offset 0x%" PRIx64 ":\n  %s\n",
				off, line);
			return;
		}
	}
	fprintf(stderr, "no logged operation changed offset 0x%" PRIx64
		" (never written: it must read as zero)\n", off);
}

static void __attribute__((noreturn)) failed(void)
{
	int i;

	print_log_tail();
	fprintf(stderr, "reproduce with:");
	for (i = 0; i < saved_argc; i++)
		fprintf(stderr, " %s", saved_argv[i]);
	fprintf(stderr, "\nvsmfs-fsx: FAILED at operation %ld (seed %" PRIu64 ")\n",
		cur_op, seed);
	exit(1);
}

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vsmfs-fsx: operation %ld: ", cur_op);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failed();
}

static void dump_row(const char *what, const unsigned char *p, const unsigned char *other,
		     uint64_t off, uint64_t n)
{
	uint64_t i;

	fprintf(stderr, "  %-8s 0x%09" PRIx64 ":", what, off);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%c%02x", p[i] != other[i] ? '*' : ' ', p[i]);
	fputc('\n', stderr);
}

/*
 * Compare @got (read from file @f at @off) with the model; on a difference
 * print where and what, and fail.
 */
static void compare(int f, uint64_t off, const unsigned char *got, uint64_t len, const char *how)
{
	const unsigned char *want = files[f].model + off;
	uint64_t first, last = 0, bad = 0, i, row;

	if (!memcmp(got, want, len))
		return;
	for (first = 0; got[first] == want[first]; first++)
		;
	for (i = first; i < len; i++) {
		if (got[i] != want[i]) {
			bad++;
			last = i;
		}
	}
	fprintf(stderr, "vsmfs-fsx: operation %ld: %s of %s at 0x%" PRIx64 " +0x%" PRIx64
		": data mismatch\n", cur_op, how, files[f].path, off, len);
	fprintf(stderr, "  %" PRIu64 " bytes differ in [0x%" PRIx64 ", 0x%" PRIx64
		"], first at file offset 0x%" PRIx64 " (size 0x%" PRIx64 ")\n",
		bad, off + first, off + last, off + first, files[f].size);
	row = first & ~15ULL;
	if (row >= 16)
		row -= 16;
	for (i = 0; i < 3 && row < len; i++, row += 16) {
		uint64_t n = len - row < 16 ? len - row : 16;

		dump_row("expected", want + row, got + row, off + row, n);
		dump_row("got", got + row, want + row, off + row, n);
	}
	print_last_writer(f, off + first);
	failed();
}

static void check_zero_model(int f, uint64_t from, uint64_t to, const char *what)
{
	static const unsigned char zero[PAGE];
	const unsigned char *m = files[f].model;
	uint64_t i = from;

	/* Skip zero pages quickly, then find the byte. */
	while (i + PAGE <= to && !memcmp(m + i, zero, PAGE))
		i += PAGE;
	for (; i < to; i++) {
		if (m[i]) {
			fprintf(stderr, "vsmfs-fsx: operation %ld: %s of %s: [0x%" PRIx64
				", 0x%" PRIx64 ") is reported without data but the model has"
				" 0x%02x at 0x%" PRIx64 "\n", cur_op, what, files[f].path,
				from, to, m[i], i);
			print_last_writer(f, i);
			failed();
		}
	}
}

/* Check a system call result: a full transfer, or fail. */
static void check_io(ssize_t ret, uint64_t want, const char *what, int f, uint64_t off)
{
	if (ret < 0)
		fail("%s of %s at 0x%" PRIx64 " +0x%" PRIx64 ": %s", what, files[f].path, off,
		     want, strerror(errno));
	if ((uint64_t)ret != want)
		fail("%s of %s at 0x%" PRIx64 ": %zd bytes instead of %" PRIu64, what,
		     files[f].path, off, ret, want);
}

static void open_file(struct file *fl, int extra)
{
	fl->fd = open(fl->path, O_RDWR | O_CREAT | extra, 0644);
	if (fl->fd < 0)
		fail("open %s: %s", fl->path, strerror(errno));
	fl->afd = open(fl->path, O_WRONLY | O_APPEND);
	if (fl->afd < 0)
		fail("open %s O_APPEND: %s", fl->path, strerror(errno));
}

static void close_file(struct file *fl)
{
	if (close(fl->fd) || close(fl->afd))
		fail("close %s: %s", fl->path, strerror(errno));
}

/* Compare the whole file, and that it ends where the model does. */
static void check_file(int f)
{
	struct file *fl = &files[f];
	uint64_t off, n;
	ssize_t ret;

	for (off = 0; off < fl->size; off += n) {
		n = fl->size - off < 4 * MIB ? fl->size - off : 4 * MIB;
		ret = pread(fl->fd, rbuf, n, off);
		check_io(ret, n, "full-file read", f, off);
		compare(f, off, rbuf, n, "full-file read");
	}
	ret = pread(fl->fd, rbuf, 4096, fl->size);
	if (ret != 0)
		fail("read at EOF 0x%" PRIx64 " of %s returned %zd", fl->size, fl->path, ret);
}

/* An offset at or near a boundary that tends to break things. */
static uint64_t pick_offset(const struct file *fl, uint64_t limit)
{
	uint64_t r = rnd(100), off;
	int64_t delta;

	if (r < 30) {
		off = rnd(limit);
	} else if (r < 50) {
		delta = (int64_t)rnd(5) - 2;
		if (!rnd(3))
			delta = (int64_t)rnd(257) - 128;
		off = rnd(limit / PAGE + 1) * PAGE + delta;
	} else if (r < 70) {
		static const int64_t d[] = { 0, 1, -1, PAGE, -(int64_t)PAGE, 512, -512, 3 };

		off = rnd(limit / SUPERPAGE + 1) * SUPERPAGE + d[rnd(8)];
	} else if (r < 93) {
		delta = (int64_t)rnd(5) - 2;
		if (!rnd(2))
			delta = (int64_t)rnd(2 * PAGE + 1) - (int64_t)PAGE;
		off = fl->size + delta;
	} else {
		off = rnd(3) ? 0 : rnd(64);
	}
	if ((int64_t)off < 0)
		off = 0;
	if (off >= limit)
		off = limit - 1;
	return off;
}

/* A transfer length, mostly small, with boundary sizes and a few large. */
static uint64_t pick_len(uint64_t max)
{
	uint64_t r = rnd(100), len;

	if (r < 35) {
		len = rnd_range(1, 512);
	} else if (r < 60) {
		len = rnd_range(1, 64 * KIB);
	} else if (r < 80) {
		static const uint64_t sz[] = { PAGE, PAGE, 2 * PAGE, SUPERPAGE };

		len = sz[rnd(4)] + rnd(3) - 1;
	} else if (r < 100 - (uint64_t)big_pct) {
		len = rnd_range(1, 256 * KIB);
	} else {
		len = rnd_range(1, max_len);
	}
	if (len > max)
		len = max;
	return len ? len : 1;
}

/* Pick a range for an operation that writes, inside the size limit. */
static void pick_range(const struct file *fl, uint64_t *off, uint64_t *len)
{
	*off = pick_offset(fl, max_size);
	*len = pick_len(max_len < max_size - *off ? max_len : max_size - *off);
}

/* Pick a range inside the current size (size > 0). */
static void pick_inside(const struct file *fl, uint64_t *off, uint64_t *len)
{
	*off = pick_offset(fl, fl->size);
	*len = pick_len(fl->size - *off);
}

static int split_iov(unsigned char *buf, uint64_t len, struct iovec *iov)
{
	int n = (int)rnd_range(1, MAX_IOV), i;
	uint64_t left = len;

	for (i = 0; i < n; i++) {
		uint64_t piece = i == n - 1 ? left : rnd(left + 1);

		if (!rnd(8) && i != n - 1)
			piece = 0;	/* empty iovecs are legal */
		iov[i].iov_base = buf;
		iov[i].iov_len = piece;
		buf += piece;
		left -= piece;
	}
	return n;
}

static void model_write(struct file *fl, uint64_t off, const unsigned char *p, uint64_t len)
{
	memcpy(fl->model + off, p, len);
	if (off + len > fl->size)
		fl->size = off + len;
}

static void do_write(int f, struct logent *e, bool vec)
{
	struct file *fl = &files[f];
	struct iovec iov[MAX_IOV];
	ssize_t ret;

	pick_range(fl, &e->off, &e->len);
	fill_random(wbuf, e->len);
	if (vec) {
		e->how = split_iov(wbuf, e->len, iov);
		ret = pwritev(fl->fd, iov, e->how, e->off);
		check_io(ret, e->len, "pwritev", f, e->off);
	} else if ((e->how = !rnd(4))) {
		if (lseek(fl->fd, e->off, SEEK_SET) != (off_t)e->off)
			fail("lseek to 0x%" PRIx64 ": %s", e->off, strerror(errno));
		ret = write(fl->fd, wbuf, e->len);
		check_io(ret, e->len, "write", f, e->off);
		if (lseek(fl->fd, 0, SEEK_CUR) != (off_t)(e->off + e->len))
			fail("file position after write is not 0x%" PRIx64, e->off + e->len);
	} else {
		ret = pwrite(fl->fd, wbuf, e->len, e->off);
		check_io(ret, e->len, "pwrite", f, e->off);
	}
	model_write(fl, e->off, wbuf, e->len);
}

static void do_read(int f, struct logent *e, bool vec)
{
	struct file *fl = &files[f];
	struct iovec iov[MAX_IOV];
	uint64_t want;
	ssize_t ret;

	e->off = pick_offset(fl, max_size);
	e->len = pick_len(max_size - e->off);
	want = e->off >= fl->size ? 0 :
	       e->len < fl->size - e->off ? e->len : fl->size - e->off;
	if (vec) {
		e->how = split_iov(rbuf, e->len, iov);
		ret = preadv(fl->fd, iov, e->how, e->off);
		check_io(ret, want, "preadv", f, e->off);
	} else if ((e->how = !rnd(4))) {
		if (lseek(fl->fd, e->off, SEEK_SET) != (off_t)e->off)
			fail("lseek to 0x%" PRIx64 ": %s", e->off, strerror(errno));
		ret = read(fl->fd, rbuf, e->len);
		check_io(ret, want, "read", f, e->off);
	} else {
		ret = pread(fl->fd, rbuf, e->len, e->off);
		check_io(ret, want, "pread", f, e->off);
	}
	compare(f, e->off, rbuf, want, vec ? "preadv" : "read");
}

static uint64_t pick_size(const struct file *fl)
{
	uint64_t r = rnd(100), s;

	if (r < 40)		/* into the middle of a superpage */
		s = rnd(max_size / SUPERPAGE) * SUPERPAGE + rnd_range(1, SUPERPAGE - 1);
	else if (r < 60)
		s = rnd(max_size / PAGE) * PAGE + rnd(3) - 1;
	else if (r < 85)
		s = fl->size + rnd(128 * KIB + 1) - 64 * KIB;
	else if (r < 92)
		s = rnd(3) ? 0 : rnd(4097);
	else
		s = rnd(max_size + 1);
	if ((int64_t)s < 0)
		s = 0;
	return s > max_size ? max_size : s;
}

static void do_truncate(int f, struct logent *e)
{
	struct file *fl = &files[f];

	e->off = pick_size(fl);
	if (ftruncate(fl->fd, e->off))
		fail("ftruncate %s to 0x%" PRIx64 ": %s", fl->path, e->off, strerror(errno));
	if (e->off < fl->size)
		memset(fl->model + e->off, 0, fl->size - e->off);
	fl->size = e->off;
}

static void do_append(int f, struct logent *e)
{
	struct file *fl = &files[f];
	ssize_t ret;

	e->off = fl->size;
	if (fl->size >= max_size) {
		e->len = 0;
		return;
	}
	e->len = pick_len(max_size - fl->size < max_len ? max_size - fl->size : max_len);
	fill_random(wbuf, e->len);
	ret = write(fl->afd, wbuf, e->len);
	check_io(ret, e->len, "O_APPEND write", f, e->off);
	model_write(fl, e->off, wbuf, e->len);
	if (lseek(fl->afd, 0, SEEK_CUR) != (off_t)fl->size)
		fail("O_APPEND descriptor position is not the new size 0x%" PRIx64, fl->size);
}

static void do_fsync(int f, struct logent *e)
{
	struct file *fl = &files[f];

	e->how = (int)rnd(2);
	if (e->how ? fdatasync(fl->fd) : fsync(fl->fd))
		fail("%s %s: %s", e->how ? "fdatasync" : "fsync", fl->path, strerror(errno));
}

static void do_reopen(int f, struct logent *e)
{
	close_file(&files[f]);
	open_file(&files[f], 0);
	e->how = !rnd(4);
	if (e->how)
		check_file(f);
}

static void do_falloc(int f, struct logent *e)
{
	struct file *fl = &files[f];
	int kinds[FA_COUNT], n = 0, k, mode;

	for (k = 0; k < FA_COUNT; k++)
		if (falloc_on[k])
			kinds[n++] = k;
	k = kinds[rnd(n)];
	mode = falloc_modes[k].mode;
	e->how = k;
	pick_range(fl, &e->off, &e->len);
	if (fallocate(fl->fd, mode, e->off, e->len))
		fail("fallocate %s of %s at 0x%" PRIx64 " +0x%" PRIx64 ": %s",
		     falloc_modes[k].name, fl->path, e->off, e->len, strerror(errno));
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		uint64_t end = e->off + e->len;

		if (end > fl->size)
			end = fl->size;	/* the model is zero past the size */
		if (e->off < end)
			memset(fl->model + e->off, 0, end - e->off);
	}
	if (!(mode & FALLOC_FL_KEEP_SIZE) && e->off + e->len > fl->size)
		fl->size = e->off + e->len;
}

/* Map [off, off + len) of file @f, page-aligned; returns the byte at off. */
static unsigned char *map_range(int f, uint64_t off, uint64_t len, int prot, int flags,
				void **base, size_t *maplen)
{
	uint64_t start = off & ~((uint64_t)pagesize - 1);
	uint64_t end = (off + len + pagesize - 1) & ~((uint64_t)pagesize - 1);

	*maplen = end - start;
	*base = mmap(NULL, *maplen, prot, flags, files[f].fd, start);
	if (*base == MAP_FAILED)
		fail("mmap of %s at 0x%" PRIx64 " +0x%zx%s: %s", files[f].path, start, *maplen,
		     flags & MAP_SYNC ? " with MAP_SYNC" : "", strerror(errno));
	return (unsigned char *)*base + (off - start);
}

static void do_mapread(int f, struct logent *e)
{
	struct file *fl = &files[f];
	unsigned char *p;
	size_t maplen;
	void *base;
	uint64_t tail;

	if (!fl->size)
		return;
	pick_inside(fl, &e->off, &e->len);
	p = map_range(f, e->off, e->len, PROT_READ, MAP_SHARED, &base, &maplen);
	compare(f, e->off, p, e->len, "mmap read");
	/* The part of the last page past EOF must read as zeros. */
	if (e->off + e->len == fl->size && (tail = fl->size % pagesize)) {
		uint64_t i;

		for (i = 0; i < (uint64_t)pagesize - tail; i++)
			if (p[e->len + i])
				fail("mmap of %s: byte 0x%02x at 0x%" PRIx64 " past EOF 0x%"
				     PRIx64 " in the last page", fl->path, p[e->len + i],
				     fl->size + i, fl->size);
	}
	if (munmap(base, maplen))
		fail("munmap: %s", strerror(errno));
}

static void do_mapwrite(int f, struct logent *e)
{
	struct file *fl = &files[f];
	unsigned char *p;
	size_t maplen;
	void *base;
	int flags = MAP_SHARED;

	if (!fl->size)
		return;
	pick_inside(fl, &e->off, &e->len);
	e->how = (int)rnd(2);
	if (use_map_sync && rnd(2)) {
		flags = MAP_SHARED_VALIDATE | MAP_SYNC;
		e->how = 2;
	}
	fill_random(wbuf, e->len);
	p = map_range(f, e->off, e->len, PROT_READ | PROT_WRITE, flags, &base, &maplen);
	memcpy(p, wbuf, e->len);
	model_write(fl, e->off, wbuf, e->len);
	if (e->how == 1 && msync(base, maplen, rnd(2) ? MS_SYNC : MS_ASYNC))
		fail("msync: %s", strerror(errno));
	if (munmap(base, maplen))
		fail("munmap: %s", strerror(errno));
}

/*
 * SEEK_DATA and SEEK_HOLE may report zeros as data (a file system may not
 * track holes at all), but never skip bytes that hold non-zero data: the
 * bytes from @off to the data offset, and from a hole offset to the next
 * data, must be zero in the model. Past the size both calls fail with ENXIO.
 */
static void do_seek(int f, struct logent *e)
{
	struct file *fl = &files[f];
	off_t d, h, d2;

	e->off = pick_offset(fl, max_size);
	d = lseek(fl->fd, e->off, SEEK_DATA);
	h = lseek(fl->fd, e->off, SEEK_HOLE);
	if (e->off >= fl->size) {
		if (d != -1 || h != -1)
			fail("SEEK_DATA/SEEK_HOLE at 0x%" PRIx64 " past EOF 0x%" PRIx64
			     " of %s returned %jd/%jd, not ENXIO", e->off, fl->size, fl->path,
			     (intmax_t)d, (intmax_t)h);
		return;
	}
	if (d == -1 && errno != ENXIO)
		fail("SEEK_DATA at 0x%" PRIx64 ": %s", e->off, strerror(errno));
	if (d == -1)
		d = fl->size;	/* no data up to EOF */
	if ((uint64_t)d < e->off || (uint64_t)d > fl->size)
		fail("SEEK_DATA at 0x%" PRIx64 " returned 0x%jx (size 0x%" PRIx64 ")", e->off,
		     (intmax_t)d, fl->size);
	check_zero_model(f, e->off, d, "SEEK_DATA");
	if (h == -1)
		fail("SEEK_HOLE at 0x%" PRIx64 ": %s", e->off, strerror(errno));
	if ((uint64_t)h < e->off || (uint64_t)h > fl->size)
		fail("SEEK_HOLE at 0x%" PRIx64 " returned 0x%jx (size 0x%" PRIx64 ")", e->off,
		     (intmax_t)h, fl->size);
	if ((uint64_t)h == fl->size)
		return;
	d2 = lseek(fl->fd, h, SEEK_DATA);
	if (d2 == -1 && errno != ENXIO)
		fail("SEEK_DATA at 0x%jx: %s", (intmax_t)h, strerror(errno));
	if (d2 == -1)
		d2 = fl->size;
	if (d2 <= h)
		fail("SEEK_HOLE returned 0x%jx but SEEK_DATA there returned 0x%jx",
		     (intmax_t)h, (intmax_t)d2);
	e->len = d2 - h;
	check_zero_model(f, h, d2, "SEEK_HOLE");
}

/*
 * FIEMAP: extents in order, not overlapping, the last one flagged LAST,
 * and every non-zero model byte inside an extent that is not unwritten.
 */
static void do_fiemap(int f, struct logent *e)
{
	struct file *fl = &files[f];
	enum { N = 256 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + N * sizeof(struct fiemap_extent));
	uint64_t start = 0, covered = 0;
	bool last = false;
	unsigned int i;

	if (!fm)
		fail("out of memory");
	while (!last) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = N;
		if (ioctl(fl->fd, FS_IOC_FIEMAP, fm))
			fail("FIEMAP of %s: %s", fl->path, strerror(errno));
		if (!fm->fm_mapped_extents)
			break;
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			struct fiemap_extent *x = &fm->fm_extents[i];
			uint64_t lo = x->fe_logical, hi = lo + x->fe_length;

			if (!x->fe_length || lo < covered)
				fail("FIEMAP of %s: extent [0x%llx, +0x%llx) empty or before 0x%"
				     PRIx64, fl->path, (unsigned long long)x->fe_logical,
				     (unsigned long long)x->fe_length, covered);
			if (last)
				fail("FIEMAP of %s: extent after the one flagged LAST", fl->path);
			last = x->fe_flags & FIEMAP_EXTENT_LAST;
			/* Gap before the extent, or an unwritten extent: zeros. */
			if (covered < fl->size)
				check_zero_model(f, covered, lo < fl->size ? lo : fl->size,
						 "FIEMAP gap");
			if ((x->fe_flags & FIEMAP_EXTENT_UNWRITTEN) && lo < fl->size)
				check_zero_model(f, lo, hi < fl->size ? hi : fl->size,
						 "FIEMAP unwritten extent");
			covered = hi;
			e->len++;
		}
		if (fm->fm_mapped_extents < N)
			break;
		start = covered;
	}
	if (!last && fm->fm_mapped_extents)
		fail("FIEMAP of %s: no extent flagged LAST", fl->path);
	if (covered < fl->size)
		check_zero_model(f, covered, fl->size, "FIEMAP past the last extent");
	free(fm);
}

static enum op pick_op(void)
{
	unsigned int total = 0, r, i;

	for (i = 0; i < OP_COUNT; i++)
		total += op_weight[i];
	r = (unsigned int)rnd(total);
	for (i = 0; r >= op_weight[i]; i++)
		r -= op_weight[i];
	return (enum op)i;
}

static void check_size(int f)
{
	struct stat st;

	if (fstat(files[f].fd, &st))
		fail("fstat %s: %s", files[f].path, strerror(errno));
	if ((uint64_t)st.st_size != files[f].size)
		fail("%s: st_size 0x%jx, model size 0x%" PRIx64, files[f].path,
		     (intmax_t)st.st_size, files[f].size);
}

/* Try each optional operation on a scratch file under @dir. */
static int probe(const char *dir)
{
	char path[4096], opts[256] = "";
	char fa[64] = "";
	unsigned char buf[8192];
	struct fiemap fm;
	void *p;
	int fd, k;

	snprintf(path, sizeof(path), "%s/.vsmfs-fsx-probe.%d", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "vsmfs-fsx: %s: %s\n", path, strerror(errno));
		return 2;
	}
	memset(buf, 0x5a, sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		fprintf(stderr, "vsmfs-fsx: write %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		return 2;
	}
	for (k = 0; k < FA_COUNT; k++) {
		if (k == FA_ZERO_KEEP)
			continue;	/* enabled together with "zero" */
		if (!fallocate(fd, falloc_modes[k].mode, PAGE, PAGE)) {
			strcat(fa, *fa ? "," : "");
			strcat(fa, falloc_modes[k].name);
		}
		if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			break;
	}
	if (*fa)
		snprintf(opts, sizeof(opts), "-F %s", fa);
	p = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		strcat(opts, " -M");
		munmap(p, sizeof(buf));
		p = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE,
			 MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
		if (p != MAP_FAILED) {
			strcat(opts, " -Y");
			munmap(p, sizeof(buf));
		}
	}
	if (lseek(fd, 0, SEEK_DATA) == 0 && lseek(fd, 0, SEEK_HOLE) > 0)
		strcat(opts, " -H");
	memset(&fm, 0, sizeof(fm));
	fm.fm_length = FIEMAP_MAX_OFFSET;
	if (!ioctl(fd, FS_IOC_FIEMAP, &fm))
		strcat(opts, " -E");
	close(fd);
	unlink(path);
	printf("%s\n", opts[0] == ' ' ? opts + 1 : opts);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vsmfs-fsx [options] FILE...\n"
		"       vsmfs-fsx -P DIR   print the options the file system under DIR supports\n"
		"  -S seed       random seed (default 1)\n"
		"  -N ops        operations in total, over all files (default 10000)\n"
		"  -l bytes      largest transfer (default 8M; suffixes K M G)\n"
		"  -s bytes      largest file size (default 32M)\n"
		"  -b percent    share of transfers drawn up to the largest size (default 3)\n"
		"  -c ops        compare whole files every this many operations (default 1000)\n"
		"  -L n          operations to show from the log on failure (default 40)\n"
		"  -F modes      fallocate: comma list of alloc,keep,punch,zero or all\n"
		"  -M            mmap reads and writes (MAP_SHARED, msync)\n"
		"  -Y            also MAP_SYNC mappings (with -M)\n"
		"  -H            SEEK_DATA/SEEK_HOLE checks\n"
		"  -E            FIEMAP checks\n"
		"  -X op         corrupt the model after this operation (self-test)\n"
		"  -q            no progress output\n");
	exit(2);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': case 'k': v *= KIB; end++; break;
	case 'M': case 'm': v *= MIB; end++; break;
	case 'G': case 'g': v *= 1024 * MIB; end++; break;
	}
	if (*end || end == s) {
		fprintf(stderr, "vsmfs-fsx: bad size '%s'\n", s);
		usage();
	}
	return v;
}

static void parse_falloc(char *list)
{
	char *tok;
	int k;

	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		bool found = false;

		for (k = 0; k < FA_COUNT; k++) {
			if (!strcmp(tok, "all") || !strcmp(tok, falloc_modes[k].name)) {
				falloc_on[k] = true;
				found = true;
			}
		}
		if (!found) {
			fprintf(stderr, "vsmfs-fsx: unknown fallocate mode '%s'\n", tok);
			usage();
		}
	}
}

static void inject(void)
{
	int f;

	for (f = 0; f < nfiles; f++) {
		struct file *fl = &files[f];

		if (fl->size) {
			uint64_t off = rnd(fl->size);

			fl->model[off] ^= 0x5a;
			fprintf(stderr, "vsmfs-fsx: self-test: model of %s changed at 0x%"
				PRIx64 " after operation %ld\n", fl->path, off, cur_op);
			inject_at = -1;
			return;
		}
	}
	inject_at++;	/* every file empty: try after the next operation */
}

int main(int argc, char **argv)
{
	bool any_falloc = false;
	int c, f, i;

	saved_argc = argc;
	saved_argv = argv;
	pagesize = sysconf(_SC_PAGESIZE);
	while ((c = getopt(argc, argv, "S:N:l:s:b:c:L:F:MYHEX:qP:h")) != -1) {
		switch (c) {
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'N': nops = strtol(optarg, NULL, 0); break;
		case 'l': max_len = parse_size(optarg); break;
		case 's': max_size = parse_size(optarg); break;
		case 'b': big_pct = atoi(optarg); break;
		case 'c': check_every = strtol(optarg, NULL, 0); break;
		case 'L': log_tail = (unsigned int)atoi(optarg); break;
		case 'F': parse_falloc(optarg); break;
		case 'M': use_mmap = true; break;
		case 'Y': use_map_sync = true; break;
		case 'H': use_seek = true; break;
		case 'E': use_fiemap = true; break;
		case 'X': inject_at = strtol(optarg, NULL, 0); break;
		case 'q': quiet = true; break;
		case 'P': return probe(optarg);
		default: usage();
		}
	}
	if (optind >= argc || nops < 0 || big_pct < 0 || big_pct > 20 ||
	    max_size < 4 * SUPERPAGE || max_len < 1 || max_len > max_size ||
	    log_tail > LOG_SLOTS || (use_map_sync && !use_mmap))
		usage();
	for (i = 0; i < FA_COUNT; i++)
		any_falloc |= falloc_on[i];
	if (!any_falloc)
		op_weight[OP_FALLOC] = 0;
	if (!use_mmap)
		op_weight[OP_MAPREAD] = op_weight[OP_MAPWRITE] = 0;
	if (!use_seek)
		op_weight[OP_SEEK] = 0;
	if (!use_fiemap)
		op_weight[OP_FIEMAP] = 0;

	rng = seed;
	nfiles = argc - optind;
	files = calloc(nfiles, sizeof(*files));
	wbuf = malloc(max_len);
	rbuf = malloc(max_len > 4 * MIB ? max_len : 4 * MIB);
	if (!files || !wbuf || !rbuf) {
		fprintf(stderr, "vsmfs-fsx: out of memory\n");
		return 2;
	}
	for (f = 0; f < nfiles; f++) {
		files[f].path = argv[optind + f];
		files[f].model = calloc(1, max_size);
		if (!files[f].model) {
			fprintf(stderr, "vsmfs-fsx: out of memory for the models\n");
			return 2;
		}
		open_file(&files[f], O_TRUNC);
	}
	if (!quiet) {
		fprintf(stderr, "vsmfs-fsx: seed %" PRIu64 ", %ld operations, %d file(s), "
			"size <= %" PRIu64 ", transfers <= %" PRIu64 "; optional:", seed, nops,
			nfiles, max_size, max_len);
		for (i = 0; i < FA_COUNT; i++)
			if (falloc_on[i] && i != FA_ZERO_KEEP)
				fprintf(stderr, " fallocate-%s", falloc_modes[i].name);
		fprintf(stderr, "%s%s%s%s%s\n", use_mmap ? " mmap" : "",
			use_map_sync ? " map-sync" : "", use_seek ? " seek-data-hole" : "",
			use_fiemap ? " fiemap" : "", any_falloc || use_mmap || use_seek ||
			use_fiemap ? "" : " none");
	}

	for (cur_op = 0; cur_op < nops; cur_op++) {
		struct logent *e = &oplog[cur_op % LOG_SLOTS];

		f = (int)rnd(nfiles);
		memset(e, 0, sizeof(*e));
		e->nr = cur_op;
		e->file = f;
		e->op = pick_op();
		e->size_before = files[f].size;
		e->size_after = files[f].size;
		switch (e->op) {
		case OP_WRITE: do_write(f, e, false); break;
		case OP_WRITEV: do_write(f, e, true); break;
		case OP_READ: do_read(f, e, false); break;
		case OP_READV: do_read(f, e, true); break;
		case OP_TRUNCATE: do_truncate(f, e); break;
		case OP_APPEND: do_append(f, e); break;
		case OP_FSYNC: do_fsync(f, e); break;
		case OP_REOPEN: do_reopen(f, e); break;
		case OP_FALLOC: do_falloc(f, e); break;
		case OP_MAPREAD: do_mapread(f, e); break;
		case OP_MAPWRITE: do_mapwrite(f, e); break;
		case OP_SEEK: do_seek(f, e); break;
		case OP_FIEMAP: do_fiemap(f, e); break;
		case OP_COUNT: break;
		}
		e->size_after = files[f].size;
		op_count[e->op]++;
		check_size(f);
		if (cur_op == inject_at)
			inject();
		if (check_every && (cur_op + 1) % check_every == 0) {
			for (i = 0; i < nfiles; i++)
				check_file(i);
			if (!quiet)
				fprintf(stderr, "vsmfs-fsx: %ld operations done\n", cur_op + 1);
		}
	}
	cur_op = nops - 1;
	for (f = 0; f < nfiles; f++) {
		check_file(f);
		close_file(&files[f]);
	}
	printf("vsmfs-fsx: seed %" PRIu64 ": %ld operations on %d file(s) passed:", seed,
	       nops, nfiles);
	for (i = 0; i < OP_COUNT; i++)
		if (op_count[i])
			printf(" %s %lu", op_names[i], op_count[i]);
	printf("\n");
	return 0;
}
