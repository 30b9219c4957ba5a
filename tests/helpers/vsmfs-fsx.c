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
 * Enabled by options: fallocate modes (allocate, keep size, punch hole, zero
 * range, and collapse and insert range of whole pages), mmap reads and
 * writes, MAP_SYNC mappings, SEEK_DATA/SEEK_HOLE checks, FIEMAP checks and
 * page-granular hole checks. "-P DIR" probes which of these the file system
 * under DIR supports and prints the options that enable them.
 *
 * Model invariant: the model bytes past a file's size are zero, so growing
 * a file (truncate, fallocate, a write past the end) needs no model update
 * for the gap: it must read as zeros.
 *
 * Hole checks (-G), for file systems that allocate and free space in 4 KiB
 * pages: each file also has a state per 4 KiB page. A page is
 *  - known data once a write (write, pwritev, O_APPEND, mmap) touches it;
 *  - known allocated once fallocate (allocate, keep size, zero range)
 *    touches it while not known data, or a zero range covers it whole (it
 *    may become unwritten);
 *  - a known hole once a punch covers it whole inside the size, or an
 *    insert range puts it in;
 *  - unknown otherwise: never touched, past the size after a truncation
 *    that did not grow the file, newly inside the size after one that did,
 *    past the size or holding it when a punch reaching the size covers it
 *    (ext4 frees that last page whole), or a known hole in a 2 MiB
 *    superpage that was mapped (a fault may allocate the holes of a whole
 *    large folio or huge page).
 * A punch that covers a page partially zeroes it and leaves its state. A
 * collapse or insert range moves the states of the pages from its offset on
 * with the pages; those past the size become unknown first (a file system
 * may move them along or free them).
 * After every punch, collapse and insert, at the SEEK_DATA/SEEK_HOLE and
 * FIEMAP operations and at every whole-file compare the file must agree
 * with the states:
 *  - SEEK_DATA from a known hole inside the size does not return an offset
 *    in that page and SEEK_HOLE returns its start; SEEK_DATA from known data
 *    returns its start and SEEK_HOLE the end of the page or later (up to 16
 *    random pages of each kind per check; known-allocated pages may be
 *    reported either way, as unwritten extents are);
 *  - with -E, FIEMAP (FIEMAP_FLAG_SYNC): no extent overlaps a known hole and
 *    every known data or allocated page inside the size lies in extents;
 *  - st_blocks covers the known data and allocated pages, and exceeds the
 *    pages below the allocation end (the size or the end of the highest
 *    FALLOC_FL_KEEP_SIZE allocation since the last shrinking truncation,
 *    moved by collapse and insert ranges, whichever is larger, rounded up
 *    to 2 MiB) that are not known holes by at most 2 MiB + 64 KiB
 *    (reservations up to a superpage, index blocks).
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
#define HOLE_PROBES	16		/* pages of each kind probed per hole check */
#define HOLE_SLACK	(SUPERPAGE + 64 * KIB)	/* st_blocks past the pages allowed */

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
enum falloc_kind {
	FA_ALLOC, FA_KEEP, FA_PUNCH, FA_ZERO, FA_ZERO_KEEP, FA_COLLAPSE, FA_INSERT, FA_COUNT
};

static const struct {
	const char *name;
	int mode;
} falloc_modes[FA_COUNT] = {
	[FA_ALLOC] = { "alloc", 0 },
	[FA_KEEP] = { "keep", FALLOC_FL_KEEP_SIZE },
	[FA_PUNCH] = { "punch", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE },
	[FA_ZERO] = { "zero", FALLOC_FL_ZERO_RANGE },
	[FA_ZERO_KEEP] = { "zero", FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE },
	[FA_COLLAPSE] = { "collapse", FALLOC_FL_COLLAPSE_RANGE },
	[FA_INSERT] = { "insert", FALLOC_FL_INSERT_RANGE },
};

/* Allocation state of a 4 KiB page, for the hole checks (-G) */
enum pstate { PS_UNKNOWN, PS_DATA, PS_ALLOC, PS_HOLE };

static const char *const pstate_names[] = {
	[PS_UNKNOWN] = "unknown", [PS_DATA] = "data (written)",
	[PS_ALLOC] = "allocated (fallocate)", [PS_HOLE] = "a hole (punched)",
};

struct file {
	const char *path;
	int fd;			/* O_RDWR */
	int afd;		/* O_WRONLY | O_APPEND */
	uint64_t size;		/* model size */
	unsigned char *model;	/* max_size bytes, zero past size */
	unsigned char *pst;	/* with -G: enum pstate of each 4 KiB page */
	uint64_t alloc_hi;	/* with -G: end of the highest keep-size allocation */
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
static bool use_mmap, use_map_sync, use_seek, use_fiemap, use_holes, quiet;
static int big_pct = 3;

static struct file *files;
static int nfiles;
static struct logent oplog[LOG_SLOTS];
static long cur_op;
static unsigned long op_count[OP_COUNT];
static unsigned long shift_count[2], shift_skips;	/* collapse, insert */
static unsigned char *wbuf, *rbuf;
static uint64_t rng, hole_rng;
static uint64_t npages;		/* 4 KiB pages in max_size */
static unsigned char *extent_cov;	/* per page: covered by FIEMAP extents */
static unsigned long hole_checks, hole_probes[2];	/* data, holes */
static long pagesize;
static char *const *saved_argv;
static int saved_argc;

/* splitmix64 */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The one random stream of the operations, so a seed reproduces a run. The
 * hole checks draw their probes from a stream of their own (hole_rng), so
 * -G does not change the operations a seed runs.
 */
static uint64_t next64(void)
{
	return splitmix64(&rng);
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
			 e->how == FA_ZERO_KEEP ? ",keep" :
			 (e->how == FA_COLLAPSE || e->how == FA_INSERT) && !e->len ?
			 ", skipped" : "");
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
	case OP_FALLOC:
		/* A collapse or insert moves every byte from its offset on. */
		if ((e->how == FA_COLLAPSE || e->how == FA_INSERT) && e->len)
			return off >= e->off && (off < e->size_before || off < e->size_after);
		return off >= e->off && off < e->off + e->len;
	case OP_WRITE: case OP_WRITEV: case OP_APPEND: case OP_MAPWRITE:
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
	if (len > max_len)	/* the boundary sizes, with -l below them */
		len = max_len;
	return len ? len : 1;
}

/* A length of whole pages up to @max (a multiple of PAGE, at least PAGE). */
static uint64_t pick_page_len(uint64_t max)
{
	uint64_t len = (pick_len(max) + PAGE - 1) / PAGE * PAGE;

	return len < max ? len : max;
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

/*
 * Page states (-G). The pages [*first, *end) that [off, off + len) touches,
 * or with @whole only those it covers whole.
 */
static void page_span(uint64_t off, uint64_t len, bool whole, uint64_t *first, uint64_t *end)
{
	if (whole) {
		*first = (off + PAGE - 1) / PAGE;
		*end = (off + len) / PAGE;
	} else {
		*first = off / PAGE;
		*end = (off + len + PAGE - 1) / PAGE;
	}
	if (*end > npages)
		*end = npages;
	if (*first > *end)
		*first = *end;
}

static void ps_write(struct file *fl, uint64_t off, uint64_t len)
{
	uint64_t p, end;

	if (!fl->pst || !len)
		return;
	page_span(off, len, false, &p, &end);
	memset(fl->pst + p, PS_DATA, end - p);
}

/* fallocate of mode @k over [off, off + len), before the size is updated */
static void ps_falloc(struct file *fl, int k, uint64_t off, uint64_t len)
{
	uint64_t p, end, wp, wend;

	if (!fl->pst || !len)
		return;
	if (k == FA_PUNCH) {
		/*
		 * Pages covered whole are freed. A punch that reaches the
		 * size may free the last page whole (ext4 does), and past the
		 * size a file system may keep or free pages: unknown.
		 */
		end = (fl->size + PAGE - 1) / PAGE * PAGE;
		if (off + len >= fl->size && off + len < end)
			len = end - off;
		page_span(off, len, true, &wp, &wend);
		for (p = wp; p < wend; p++)
			fl->pst[p] = (p + 1) * PAGE <= fl->size ? PS_HOLE : PS_UNKNOWN;
		return;
	}
	page_span(off, len, true, &wp, &wend);
	page_span(off, len, false, &p, &end);
	for (; p < end; p++) {
		if (fl->pst[p] != PS_DATA || ((k == FA_ZERO || k == FA_ZERO_KEEP) &&
					      p >= wp && p < wend))
			fl->pst[p] = PS_ALLOC;
	}
	if (off + len > fl->alloc_hi)
		fl->alloc_hi = off + len;
}

static void ps_truncate(struct file *fl, uint64_t newsize)
{
	uint64_t p, end;

	if (!fl->pst)
		return;
	/*
	 * Pages past the new size (freed, or kept reserved), or newly
	 * inside it (whatever they were past the old size), are unknown.
	 */
	p = (newsize <= fl->size ? newsize : fl->size) + PAGE - 1;
	end = newsize <= fl->size ? max_size : newsize;
	p /= PAGE;
	end = (end + PAGE - 1) / PAGE;
	if (end > npages)
		end = npages;
	if (p < end)
		memset(fl->pst + p, PS_UNKNOWN, end - p);
	if (newsize < fl->size && fl->alloc_hi > newsize)
		fl->alloc_hi = newsize;
}

/*
 * A collapse (or with @insert an insert) of the pages [off, off + len), before
 * the size is updated: the states of the pages from @off on move down (up)
 * with them, the inserted pages are holes. Past the size a file system may
 * move its pages along or free them (vsmfs frees them): unknown. The
 * allocation end moves with the pages, which bounds it either way.
 */
static void ps_shift(struct file *fl, uint64_t off, uint64_t len, bool insert)
{
	uint64_t p = off / PAGE, n = len / PAGE, inside = (fl->size + PAGE - 1) / PAGE;

	if (!fl->pst || !len)
		return;
	if (inside < npages)
		memset(fl->pst + inside, PS_UNKNOWN, npages - inside);
	if (insert) {
		memmove(fl->pst + p + n, fl->pst + p, npages - p - n);
		memset(fl->pst + p, PS_HOLE, n);
	} else {
		memmove(fl->pst + p, fl->pst + p + n, npages - p - n);
		memset(fl->pst + npages - n, PS_UNKNOWN, n);
	}
	if (fl->alloc_hi > off && insert)
		fl->alloc_hi += len;
	else if (fl->alloc_hi > off)
		fl->alloc_hi = fl->alloc_hi > off + len ? fl->alloc_hi - len : off;
}

/*
 * A mapping of [off, off + len): a fault may allocate the holes of all the
 * folio or huge page it hits (ext4 with large folios does on write faults),
 * so the known holes of the 2 MiB superpages it touches become unknown.
 */
static void ps_mapped(struct file *fl, uint64_t off, uint64_t len)
{
	uint64_t p, end, start = off / SUPERPAGE * SUPERPAGE;

	if (!fl->pst || !len)
		return;
	page_span(start, (off + len + SUPERPAGE - 1) / SUPERPAGE * SUPERPAGE - start, false,
		  &p, &end);
	for (; p < end; p++)
		if (fl->pst[p] == PS_HOLE)
			fl->pst[p] = PS_UNKNOWN;
}

static void model_write(struct file *fl, uint64_t off, const unsigned char *p, uint64_t len)
{
	memcpy(fl->model + off, p, len);
	ps_write(fl, off, len);
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
	ps_truncate(fl, e->off);
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

/*
 * fallocate FALLOC_FL_COLLAPSE_RANGE, or with @insert FALLOC_FL_INSERT_RANGE,
 * of whole pages: a collapse ends before the size, an insert starts before
 * it and keeps the file within the size limit. Skipped (length 0) when the
 * file is too small or too large for one page.
 */
static void do_shift(int f, struct logent *e, bool insert)
{
	struct file *fl = &files[f];
	uint64_t cap = max_len < PAGE ? PAGE : max_len / PAGE * PAGE, lim;
	int k = insert ? FA_INSERT : FA_COLLAPSE;

	if (insert) {
		lim = fl->size < max_size ? (max_size - fl->size) / PAGE * PAGE : 0;
		if (!fl->size || lim < PAGE) {
			e->off = fl->size;
			return;
		}
		e->off = pick_offset(fl, fl->size) / PAGE * PAGE;
		e->len = pick_page_len(lim < cap ? lim : cap);
	} else {
		/* The last page boundary before the size. */
		lim = fl->size ? (fl->size - 1) / PAGE * PAGE : 0;
		if (lim < PAGE) {
			e->off = fl->size;
			return;
		}
		e->off = pick_offset(fl, lim) / PAGE * PAGE;
		e->len = pick_page_len(lim - e->off < cap ? lim - e->off : cap);
	}
	if (fallocate(fl->fd, falloc_modes[k].mode, e->off, e->len))
		fail("fallocate %s of %s at 0x%" PRIx64 " +0x%" PRIx64 ": %s",
		     falloc_modes[k].name, fl->path, e->off, e->len, strerror(errno));
	ps_shift(fl, e->off, e->len, insert);
	if (insert) {
		memmove(fl->model + e->off + e->len, fl->model + e->off, fl->size - e->off);
		memset(fl->model + e->off, 0, e->len);
		fl->size += e->len;
	} else {
		memmove(fl->model + e->off, fl->model + e->off + e->len,
			fl->size - e->off - e->len);
		fl->size -= e->len;
		memset(fl->model + fl->size, 0, e->len);	/* zero past the size */
	}
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
	if (k == FA_COLLAPSE || k == FA_INSERT) {
		do_shift(f, e, k == FA_INSERT);
		return;
	}
	pick_range(fl, &e->off, &e->len);
	if (fallocate(fl->fd, mode, e->off, e->len))
		fail("fallocate %s of %s at 0x%" PRIx64 " +0x%" PRIx64 ": %s",
		     falloc_modes[k].name, fl->path, e->off, e->len, strerror(errno));
	ps_falloc(fl, k, e->off, e->len);
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
	ps_mapped(fl, e->off & ~((uint64_t)pagesize - 1), maplen);
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
	ps_mapped(fl, e->off & ~((uint64_t)pagesize - 1), maplen);
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

/* FS_IOC_FIEMAP of @fl from @start to the end, synced, up to @n extents. */
static void fiemap_from(const struct file *fl, struct fiemap *fm, uint64_t start, unsigned int n)
{
	memset(fm, 0, sizeof(*fm));
	fm->fm_start = start;
	fm->fm_length = FIEMAP_MAX_OFFSET - start;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = n;
	if (ioctl(fl->fd, FS_IOC_FIEMAP, fm))
		fail("FIEMAP of %s: %s", fl->path, strerror(errno));
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
		fiemap_from(fl, fm, start, N);
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

/* Runs of page states of file @f up to page @end, for a failure report. */
static void print_pstates(int f, uint64_t end)
{
	static const char code[] = { [PS_UNKNOWN] = '?', [PS_DATA] = 'D', [PS_ALLOC] = 'A',
				     [PS_HOLE] = 'H' };
	const unsigned char *ps = files[f].pst;
	unsigned int runs = 0;
	uint64_t p, q;

	fprintf(stderr, "page states (D data, A allocated, H hole, ? unknown) at run starts:");
	for (p = 0; p < end && runs < 256; p = q, runs++) {
		for (q = p + 1; q < end && ps[q] == ps[p]; q++)
			;
		fprintf(stderr, "%s%c 0x%" PRIx64, runs % 8 ? ", " : "\n  ", code[ps[p]], p);
	}
	fprintf(stderr, "%s\n", p < end ? ", ..." : "");
}

/* Report page @p of file @f that the file system contradicts, and fail. */
static void __attribute__((format(printf, 4, 5), noreturn))
hole_fail(int f, const char *why, uint64_t p, const char *fmt, ...)
{
	const struct file *fl = &files[f];
	va_list ap;

	fprintf(stderr, "vsmfs-fsx: operation %ld: hole check of %s %s: page 0x%" PRIx64
		" (offset 0x%" PRIx64 ", size 0x%" PRIx64 ") should be %s, but ", cur_op,
		fl->path, why, p, (uint64_t)(p * PAGE), fl->size, pstate_names[fl->pst[p]]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_last_writer(f, p * PAGE);
	failed();
}

static const char *seek_result(off_t ret, char *buf, size_t size)
{
	if (ret == -1)
		return "ENXIO";
	snprintf(buf, size, "0x%jx", (intmax_t)ret);
	return buf;
}

/* SEEK_DATA and SEEK_HOLE from the start of page @p (a known hole or data). */
static void hole_seek(int f, const char *why, uint64_t p)
{
	const struct file *fl = &files[f];
	uint64_t start = p * PAGE, end = start + PAGE < fl->size ? start + PAGE : fl->size;
	off_t d, h;
	char buf[32];

	d = lseek(fl->fd, start, SEEK_DATA);
	if (d == -1 && errno != ENXIO)
		fail("SEEK_DATA of %s at 0x%" PRIx64 ": %s", fl->path, start, strerror(errno));
	h = lseek(fl->fd, start, SEEK_HOLE);
	if (h == -1)
		fail("SEEK_HOLE of %s at 0x%" PRIx64 ": %s", fl->path, start, strerror(errno));
	if (fl->pst[p] == PS_HOLE) {
		if (d != -1 && (uint64_t)d < end)
			hole_fail(f, why, p, "SEEK_DATA from 0x%" PRIx64 " returned 0x%jx", start,
				  (intmax_t)d);
		if ((uint64_t)h != start)
			hole_fail(f, why, p, "SEEK_HOLE from 0x%" PRIx64 " returned 0x%jx", start,
				  (intmax_t)h);
	} else {
		if (d != (off_t)start)
			hole_fail(f, why, p, "SEEK_DATA from 0x%" PRIx64 " returned %s", start,
				  seek_result(d, buf, sizeof(buf)));
		if ((uint64_t)h < end)
			hole_fail(f, why, p, "SEEK_HOLE from 0x%" PRIx64 " returned 0x%jx", start,
				  (intmax_t)h);
	}
}

/*
 * Extents merged into the run [lo, hi): no known hole inside the size
 * overlaps it; mark the pages it covers whole.
 */
static void hole_run(int f, const char *why, uint64_t lo, uint64_t hi, uint64_t inside)
{
	const struct file *fl = &files[f];
	uint64_t p, end;

	if (lo >= hi || lo >= npages * PAGE)
		return;
	end = hi >= npages * PAGE ? npages : (hi + PAGE - 1) / PAGE;
	for (p = lo / PAGE; p < end; p++) {
		if (fl->pst[p] == PS_HOLE && p < inside)
			hole_fail(f, why, p, "FIEMAP maps [0x%" PRIx64 ", 0x%" PRIx64 ")", lo, hi);
		if (p * PAGE >= lo && (p + 1) * PAGE <= hi)
			extent_cov[p] = 1;
	}
}

/* FIEMAP (synced) against the page states of the pages inside the size. */
static void hole_fiemap(int f, const char *why, uint64_t inside)
{
	const struct file *fl = &files[f];
	enum { N = 256 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + N * sizeof(struct fiemap_extent));
	uint64_t start = 0, lo = 0, hi = 0, p;
	bool last = false;
	unsigned int i;

	if (!fm)
		fail("out of memory");
	memset(extent_cov, 0, npages);
	while (!last) {
		fiemap_from(fl, fm, start, N);
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *x = &fm->fm_extents[i];

			if (x->fe_logical != hi) {
				hole_run(f, why, lo, hi, inside);
				lo = x->fe_logical;
			}
			hi = x->fe_logical + x->fe_length;
			last = x->fe_flags & FIEMAP_EXTENT_LAST;
		}
		if (fm->fm_mapped_extents < N)
			break;
		start = hi;
	}
	free(fm);
	hole_run(f, why, lo, hi, inside);
	for (p = 0; p < inside; p++)
		if ((fl->pst[p] == PS_DATA || fl->pst[p] == PS_ALLOC) && !extent_cov[p])
			hole_fail(f, why, p, "FIEMAP extents do not cover it whole");
}

/*
 * The hole checks (-G) of file @f, @why it runs: SEEK_DATA/SEEK_HOLE from
 * up to HOLE_PROBES random known holes and known data pages inside the size,
 * st_blocks against the page counts, and with -E FIEMAP.
 */
static void hole_check(int f, const char *why)
{
	const struct file *fl = &files[f];
	uint64_t inside = (fl->size + PAGE - 1) / PAGE, aend, end, known = 0, nothole, p, r;
	uint64_t pick[2][HOLE_PROBES], seen[2] = { 0, 0 }, bytes, lower, upper;
	unsigned int n[2] = { 0, 0 }, i, k;
	struct stat st;

	aend = fl->size > fl->alloc_hi ? fl->size : fl->alloc_hi;
	aend = (aend + SUPERPAGE - 1) / SUPERPAGE * (SUPERPAGE / PAGE);
	end = aend < npages ? aend : npages;
	nothole = aend - end;	/* pages past the model, never holes */
	for (p = 0; p < end; p++) {
		unsigned char s = fl->pst[p];

		known += s == PS_DATA || s == PS_ALLOC;
		nothole += s != PS_HOLE;
		if (p >= inside || (s != PS_DATA && s != PS_HOLE))
			continue;
		/* Reservoir sampling: each page is picked with equal chance. */
		k = s == PS_HOLE;
		r = n[k] < HOLE_PROBES ? n[k]++ : splitmix64(&hole_rng) % (seen[k] + 1);
		if (r < HOLE_PROBES)
			pick[k][r] = p;
		seen[k]++;
	}
	for (k = 0; k < 2; k++)
		for (i = 0; i < n[k]; i++)
			hole_seek(f, why, pick[k][i]);
	hole_checks++;
	hole_probes[0] += n[0];
	hole_probes[1] += n[1];

	if (fstat(fl->fd, &st))
		fail("fstat %s: %s", fl->path, strerror(errno));
	bytes = (uint64_t)st.st_blocks * 512;
	lower = known * PAGE;
	upper = nothole * PAGE + HOLE_SLACK;
	if (bytes < lower || bytes > upper) {
		fprintf(stderr, "vsmfs-fsx: operation %ld: hole check of %s %s: st_blocks %jd"
			" (0x%" PRIx64 " bytes) should be at least 0x%" PRIx64 " (%" PRIu64
			" pages written or allocated) and at most 0x%" PRIx64 " (%" PRIu64
			" pages below the allocation end 0x%" PRIx64 " that are not holes, + 0x%"
			PRIx64 "); size 0x%" PRIx64 "\n", cur_op, fl->path, why,
			(intmax_t)st.st_blocks, bytes, lower, known, upper, nothole,
			(uint64_t)(aend * PAGE), (uint64_t)HOLE_SLACK, fl->size);
		print_pstates(f, end);
		failed();
	}
	if (use_fiemap)
		hole_fiemap(f, why, inside);
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

/* Does the probe file hold @n pages, page i filled with @want[i], and no more? */
static bool probe_pages(int fd, const unsigned char *want, int n)
{
	unsigned char page[PAGE];
	struct stat st;
	int i, j;

	if (fstat(fd, &st) || st.st_size != n * (off_t)PAGE)
		return false;
	for (i = 0; i < n; i++) {
		if (pread(fd, page, PAGE, i * PAGE) != PAGE)
			return false;
		for (j = 0; j < (int)PAGE; j++)
			if (page[j] != want[i])
				return false;
	}
	return true;
}

/* Make the probe file @n pages, page i filled with @bytes[i]. */
static bool probe_fill(int fd, const unsigned char *bytes, int n)
{
	unsigned char page[PAGE];
	int i;

	if (ftruncate(fd, 0))
		return false;
	for (i = 0; i < n; i++) {
		memset(page, bytes[i], PAGE);
		if (pwrite(fd, page, PAGE, i * PAGE) != PAGE)
			return false;
	}
	return true;
}

/*
 * Collapse and insert: a file of 4 pages loses page 1 to a collapse, then
 * gets a page of zeros inserted at page 1; each is enabled if it succeeds
 * and the data reads back moved.
 */
static void probe_shift(int fd, char *fa)
{
	static const unsigned char four[] = { 1, 2, 3, 4 }, three[] = { 1, 3, 4 };
	static const unsigned char inserted[] = { 1, 0, 3, 4 };
	bool ok;

	if (!probe_fill(fd, four, 4))
		return;
	ok = !fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, PAGE, PAGE) && probe_pages(fd, three, 3);
	if (ok) {
		strcat(fa, *fa ? "," : "");
		strcat(fa, falloc_modes[FA_COLLAPSE].name);
	} else if (!probe_fill(fd, three, 3)) {
		return;
	}
	if (!fallocate(fd, FALLOC_FL_INSERT_RANGE, PAGE, PAGE) && probe_pages(fd, inserted, 4)) {
		strcat(fa, *fa ? "," : "");
		strcat(fa, falloc_modes[FA_INSERT].name);
	}
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
	for (k = 0; k < FA_COLLAPSE; k++) {
		if (k == FA_ZERO_KEEP)
			continue;	/* enabled together with "zero" */
		if (!fallocate(fd, falloc_modes[k].mode, PAGE, PAGE)) {
			strcat(fa, *fa ? "," : "");
			strcat(fa, falloc_modes[k].name);
		}
		if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			break;
	}
	probe_shift(fd, fa);
	/* As before the shifts, for the probes below. */
	if (ftruncate(fd, 0) || pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		fprintf(stderr, "vsmfs-fsx: write %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		return 2;
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
	/* Page-granular holes: punching the middle one of three pages frees it. */
	if (!ftruncate(fd, 0) && pwrite(fd, buf, PAGE, 0) == PAGE &&
	    pwrite(fd, buf, PAGE, PAGE) == PAGE && pwrite(fd, buf, PAGE, 2 * PAGE) == PAGE &&
	    !fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, PAGE, PAGE) &&
	    !fsync(fd) && lseek(fd, 0, SEEK_HOLE) == PAGE)
		strcat(opts, " -G");
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
		"  -F modes      fallocate: comma list of alloc,keep,punch,zero,collapse,insert\n"
		"                or all\n"
		"  -M            mmap reads and writes (MAP_SHARED, msync)\n"
		"  -Y            also MAP_SYNC mappings (with -M)\n"
		"  -H            SEEK_DATA/SEEK_HOLE checks\n"
		"  -E            FIEMAP checks\n"
		"  -G            hole checks: the file system allocates and frees 4 KiB pages;\n"
		"                SEEK_DATA/SEEK_HOLE, st_blocks and (with -E) FIEMAP must\n"
		"                agree with the pages written, allocated and punched\n"
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

static void parse_falloc(const char *arg)
{
	char *list = strdup(arg), *tok;	/* argv stays whole for the report */
	int k;

	if (!list) {
		fprintf(stderr, "vsmfs-fsx: out of memory\n");
		exit(2);
	}
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
	free(list);
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
	while ((c = getopt(argc, argv, "S:N:l:s:b:c:L:F:MYHEGX:qP:h")) != -1) {
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
		case 'G': use_holes = true; break;
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
	hole_rng = ~seed;
	npages = (max_size + PAGE - 1) / PAGE;
	nfiles = argc - optind;
	files = calloc(nfiles, sizeof(*files));
	wbuf = malloc(max_len);
	rbuf = malloc(max_len > 4 * MIB ? max_len : 4 * MIB);
	if (use_holes)
		extent_cov = malloc(npages);
	if (!files || !wbuf || !rbuf || (use_holes && !extent_cov)) {
		fprintf(stderr, "vsmfs-fsx: out of memory\n");
		return 2;
	}
	for (f = 0; f < nfiles; f++) {
		files[f].path = argv[optind + f];
		files[f].model = calloc(1, max_size);
		if (use_holes)
			files[f].pst = calloc(1, npages);
		if (!files[f].model || (use_holes && !files[f].pst)) {
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
		fprintf(stderr, "%s%s%s%s%s%s\n", use_mmap ? " mmap" : "",
			use_map_sync ? " map-sync" : "", use_seek ? " seek-data-hole" : "",
			use_fiemap ? " fiemap" : "", use_holes ? " holes" : "",
			any_falloc || use_mmap || use_seek || use_fiemap || use_holes ?
			"" : " none");
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
		if (e->op == OP_FALLOC && (e->how == FA_COLLAPSE || e->how == FA_INSERT)) {
			if (e->len)
				shift_count[e->how == FA_INSERT]++;
			else
				shift_skips++;
		}
		check_size(f);
		if (use_holes && e->op == OP_FALLOC && e->how == FA_PUNCH)
			hole_check(f, "after punch");
		else if (use_holes && e->op == OP_FALLOC && e->len &&
			 (e->how == FA_COLLAPSE || e->how == FA_INSERT))
			hole_check(f, e->how == FA_INSERT ? "after insert" : "after collapse");
		else if (use_holes && (e->op == OP_SEEK || e->op == OP_FIEMAP))
			hole_check(f, e->op == OP_SEEK ? "at seek" : "at fiemap");
		if (cur_op == inject_at)
			inject();
		if (check_every && (cur_op + 1) % check_every == 0) {
			for (i = 0; i < nfiles; i++) {
				check_file(i);
				if (use_holes)
					hole_check(i, "at whole-file compare");
			}
			if (!quiet)
				fprintf(stderr, "vsmfs-fsx: %ld operations done\n", cur_op + 1);
		}
	}
	cur_op = nops - 1;
	for (f = 0; f < nfiles; f++) {
		check_file(f);
		if (use_holes)
			hole_check(f, "at the end");
		close_file(&files[f]);
	}
	printf("vsmfs-fsx: seed %" PRIu64 ": %ld operations on %d file(s) passed:", seed,
	       nops, nfiles);
	for (i = 0; i < OP_COUNT; i++) {
		if (op_count[i])
			printf(" %s %lu", op_names[i], op_count[i]);
		if (i == OP_FALLOC && (falloc_on[FA_COLLAPSE] || falloc_on[FA_INSERT]))
			printf(" (collapse %lu, insert %lu, skipped %lu)", shift_count[0],
			       shift_count[1], shift_skips);
	}
	if (use_holes)
		printf("; hole checks %lu (data pages probed %lu, holes %lu)", hole_checks,
		       hole_probes[0], hole_probes[1]);
	printf("\n");
	return 0;
}
