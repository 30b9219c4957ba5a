// SPDX-License-Identifier: GPL-2.0
/*
 * mix: filebench-like file-system mixes without filebench (not in Debian).
 *
 *   mix varmail|fileserver DIR FILES THREADS LOOPS [SEED]
 *
 * A file set of FILES entries under DIR, 80% of them created and written
 * first (filebench's prealloc=80); then THREADS threads each run LOOPS
 * iterations of the personality's flow over randomly chosen entries:
 *
 * varmail (filebench's varmail.f, a mail server's spool: one directory,
 * files of 16 KiB on average, 16 threads):
 *   delete a file; create a file, append to it, fsync, close;
 *   open a file, read it whole, append, fsync, close;
 *   open a file, read it whole, close.
 *
 * fileserver (fileserver.f: 20 files a directory, 128 KiB files, 50
 * threads):
 *   create a file, write it whole, close; open a file, append, close;
 *   open a file, read it whole, close; delete a file; stat a file.
 *
 * Appends are 1 to 32 KiB (16 KiB on average, filebench's meanappendsize);
 * varmail file sizes are 1 to 32 KiB, fileserver ones 128 KiB. Each step
 * (open, create, read, write, append, fsync, close, delete, stat) counts as
 * one operation, as filebench counts flowops. Prints
 *   ops SECS OPS bytes_read R bytes_written W
 * and exits non-zero on any unexpected error. With MIX_RESET=FILE in the
 * environment it writes 1 to FILE once the file set is laid out, before the
 * clock starts (the vsmfs counters' reset file).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct entry {
	pthread_mutex_t lock;
	int exists;
};

static const char *dir;
static struct entry *set;
static long nfiles, loops;
static int dirwidth, varmail;
static long mean_size, max_append = 32768;

struct worker {
	pthread_t tid;
	uint64_t rng;
	long ops, rbytes, wbytes;
	char *buf;
};

static void die(const char *what, const char *path)
{
	fprintf(stderr, "mix: %s %s: %s\n", what, path ? path : "", strerror(errno));
	exit(1);
}

static uint64_t rnd(struct worker *w)
{
	/* xorshift64* */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 2685821657736338717ULL;
}

static void path_of(long i, char *p, size_t n)
{
	if (dirwidth)
		snprintf(p, n, "%s/d%ld/f%ld", dir, i / dirwidth, i);
	else
		snprintf(p, n, "%s/f%ld", dir, i);
}

static long file_size(struct worker *w)
{
	return varmail ? 1 + (long)(rnd(w) % (2 * mean_size)) : mean_size;
}

/* Lock an entry that exists (want = 1) or does not (want = 0). */
static long pick(struct worker *w, int want)
{
	for (;;) {
		long i = (long)(rnd(w) % nfiles);

		if (pthread_mutex_trylock(&set[i].lock))
			continue;
		if (set[i].exists == want)
			return i;
		pthread_mutex_unlock(&set[i].lock);
	}
}

static void put(long i, int exists)
{
	set[i].exists = exists;
	pthread_mutex_unlock(&set[i].lock);
}

static void write_all(struct worker *w, int fd, long len, const char *p)
{
	while (len > 0) {
		long n = len > 1 << 20 ? 1 << 20 : len;
		ssize_t r = write(fd, w->buf, n);

		if (r <= 0)
			die("write", p);
		len -= r;
		w->wbytes += r;
	}
}

static void read_all(struct worker *w, int fd, const char *p)
{
	ssize_t r;

	while ((r = read(fd, w->buf, 1 << 20)) > 0)
		w->rbytes += r;
	if (r < 0)
		die("read", p);
}

static void append(struct worker *w, int fd, const char *p)
{
	long n = 1 + (long)(rnd(w) % max_append);

	if (lseek(fd, 0, SEEK_END) < 0)
		die("lseek", p);
	write_all(w, fd, n, p);
	w->ops++;
}

/* Create entry i and write it whole: create, write (, close by caller). */
static int create_write(struct worker *w, long i, char *p, size_t n)
{
	int fd;

	path_of(i, p, n);
	fd = open(p, O_CREAT | O_EXCL | O_RDWR, 0644);
	if (fd < 0)
		die("create", p);
	w->ops++;
	return fd;
}

static void varmail_loop(struct worker *w)
{
	char p[4096];
	long i;
	int fd;

	/* deletefile1 */
	i = pick(w, 1);
	path_of(i, p, sizeof(p));
	if (unlink(p))
		die("unlink", p);
	w->ops++;
	put(i, 0);
	/* createfile2, appendfilerand2, fsyncfile2, closefile2 */
	i = pick(w, 0);
	fd = create_write(w, i, p, sizeof(p));
	append(w, fd, p);
	if (fsync(fd))
		die("fsync", p);
	close(fd);
	w->ops += 2;
	put(i, 1);
	/* openfile3, readwholefile3, appendfilerand3, fsyncfile3, closefile3 */
	i = pick(w, 1);
	path_of(i, p, sizeof(p));
	fd = open(p, O_RDWR);
	if (fd < 0)
		die("open", p);
	read_all(w, fd, p);
	append(w, fd, p);
	if (fsync(fd))
		die("fsync", p);
	close(fd);
	w->ops += 4;
	put(i, 1);
	/* openfile4, readwholefile4, closefile4 */
	i = pick(w, 1);
	path_of(i, p, sizeof(p));
	fd = open(p, O_RDONLY);
	if (fd < 0)
		die("open", p);
	read_all(w, fd, p);
	close(fd);
	w->ops += 3;
	put(i, 1);
}

static void fileserver_loop(struct worker *w)
{
	char p[4096];
	struct stat st;
	long i;
	int fd;

	/* createfile1, writewholefile1, closefile1 */
	i = pick(w, 0);
	fd = create_write(w, i, p, sizeof(p));
	write_all(w, fd, file_size(w), p);
	close(fd);
	w->ops += 2;
	put(i, 1);
	/* openfile2, appendfilerand2, closefile2 */
	i = pick(w, 1);
	path_of(i, p, sizeof(p));
	fd = open(p, O_WRONLY);
	if (fd < 0)
		die("open", p);
	append(w, fd, p);
	close(fd);
	w->ops += 2;
	put(i, 1);
	/* openfile3, readwholefile3, closefile3 */
	i = pick(w, 1);
	path_of(i, p, sizeof(p));
	fd = open(p, O_RDONLY);
	if (fd < 0)
		die("open", p);
	read_all(w, fd, p);
	close(fd);
	w->ops += 3;
	put(i, 1);
	/* deletefile1 */
	i = pick(w, 1);
	path_of(i, p, sizeof(p));
	if (unlink(p))
		die("unlink", p);
	w->ops++;
	put(i, 0);
	/* statfile1 */
	i = pick(w, 1);
	path_of(i, p, sizeof(p));
	if (stat(p, &st))
		die("stat", p);
	w->ops++;
	put(i, 1);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	long n;

	for (n = 0; n < loops; n++) {
		if (varmail)
			varmail_loop(w);
		else
			fileserver_loop(w);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long threads, i, ops = 0, rbytes = 0, wbytes = 0;
	unsigned long seed;
	struct worker *ws, pre = { 0 };
	char p[4096];
	const char *reset;
	double t0, t1;

	if (argc < 6) {
		fprintf(stderr, "usage: mix varmail|fileserver DIR FILES THREADS LOOPS [SEED]\n");
		return 2;
	}
	varmail = !strcmp(argv[1], "varmail");
	if (!varmail && strcmp(argv[1], "fileserver")) {
		fprintf(stderr, "mix: unknown personality %s\n", argv[1]);
		return 2;
	}
	dir = argv[2];
	nfiles = atol(argv[3]);
	threads = atol(argv[4]);
	loops = atol(argv[5]);
	seed = argc > 6 ? strtoul(argv[6], NULL, 0) : 42;
	if (nfiles < 2 * threads + 4 || threads < 1 || loops < 1) {
		fprintf(stderr, "mix: need FILES >= 2 * THREADS + 4, THREADS and LOOPS >= 1\n");
		return 2;
	}
	dirwidth = varmail ? 0 : 20;
	mean_size = varmail ? 16384 : 131072;
	set = calloc(nfiles, sizeof(*set));
	ws = calloc(threads, sizeof(*ws));
	pre.buf = malloc(1 << 20);
	if (!set || !ws || !pre.buf)
		die("malloc", NULL);
	memset(pre.buf, 'm', 1 << 20);
	pre.rng = seed | 1;

	/* The file set, 80% of it there before the clock starts. */
	for (i = 0; dirwidth && i < nfiles; i += dirwidth) {
		snprintf(p, sizeof(p), "%s/d%ld", dir, i / dirwidth);
		if (mkdir(p, 0755) && errno != EEXIST)
			die("mkdir", p);
	}
	for (i = 0; i < nfiles; i++) {
		pthread_mutex_init(&set[i].lock, NULL);
		if (rnd(&pre) % 10 < 8) {
			int fd = create_write(&pre, i, p, sizeof(p));

			write_all(&pre, fd, file_size(&pre), p);
			close(fd);
			set[i].exists = 1;
		}
	}
	sync();
	reset = getenv("MIX_RESET");
	if (reset && *reset) {
		int fd = open(reset, O_WRONLY);

		if (fd < 0 || write(fd, "1", 1) != 1)
			die("reset", reset);
		close(fd);
	}

	for (i = 0; i < threads; i++) {
		ws[i].rng = (seed + 0x9e3779b97f4a7c15ULL * (i + 1)) | 1;
		ws[i].buf = malloc(1 << 20);
		if (!ws[i].buf)
			die("malloc", NULL);
		memset(ws[i].buf, 'w', 1 << 20);
	}
	t0 = now();
	for (i = 0; i < threads; i++)
		if (pthread_create(&ws[i].tid, NULL, run, &ws[i]))
			die("pthread_create", NULL);
	for (i = 0; i < threads; i++) {
		pthread_join(ws[i].tid, NULL);
		ops += ws[i].ops;
		rbytes += ws[i].rbytes;
		wbytes += ws[i].wbytes;
	}
	t1 = now();
	printf("ops %ld secs %.6f bytes_read %ld bytes_written %ld\n", ops, t1 - t0, rbytes, wbytes);
	return 0;
}
