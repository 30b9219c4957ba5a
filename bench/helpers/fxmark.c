// SPDX-License-Identifier: GPL-2.0
/*
 * fxmark: the private-object loops of the FxMark scalability suite
 * (Min et al., "Understanding manycore scalability of file systems",
 * USENIX ATC 2016), written for the vsmfs benchmarks.
 *
 *   fxmark WORKLOAD DIR NPROC SECS
 *
 * NPROC processes, process i pinned to CPU i modulo the CPUs it may use,
 * each lay out what it works on, then all start together and loop for
 * SECS seconds:
 *
 *   DWAL  append 4 KiB to a private file (a new page each time; the file
 *         is emptied, uncounted, when it reaches 128 MiB)
 *   DWOL  overwrite the first 4 KiB of a private 1 MiB file
 *   DWOM  overwrite a private 4 KiB page of one file all share
 *   DWTL  shrink a private file by 4 KiB with ftruncate (16 MiB, written
 *         again, uncounted, once empty)
 *   DWSL  overwrite the first 4 KiB of a private file, then fsync it
 *   DWPL  write the next 4 KiB page of a private file preallocated with
 *         fallocate (each page written once; emptied and preallocated
 *         again, uncounted, after 16 MiB)
 *   DWKL  append 4 KiB to a private file preallocated past its end
 *         (FALLOC_FL_KEEP_SIZE, as a log; emptied and preallocated
 *         again, uncounted, at 16 MiB)
 *   MWCL  create an empty file in a private directory
 *   MWCM  create an empty file in one directory all share (a process
 *         that finds no free inode for either stops)
 *   MWUL  unlink a 4 KiB file of a private directory (FX_FILES of them,
 *         5000 by default, made first; a process that runs out stops)
 *   MWRL  rename a file of a private directory, to and fro
 *
 * Prints one line:
 *   fxmark WORKLOAD NPROC ops OPS secs SECS rate OPS_PER_S per P1,P2,...
 * where the rate is the sum of each process's operations over its own
 * time. With FX_RESET=FILE in the environment, writes 1 to FILE once every
 * process has laid out its files, before the clock starts (the vsmfs
 * counters' reset file). With FX_MARK=TAG, executes the marker TAG (the
 * no-op "nopl 0x504dTTTT(%rax)", bench/helpers/marker.h) just before the
 * processes start their loops and TAG+1 once all have ended, for the
 * QEMU plugins of the benchmarks. Exits non-zero on any unexpected error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "marker.h"

#define PAGE		4096
#define APPEND_CAP	(128L << 20)
#define TRUNC_SIZE	(16L << 20)
#define PREALLOC_SIZE	(16L << 20)

/* A cache line each: the counts of one process are not another's to move. */
struct result {
	long ops;
	double secs;
	int err;
} __attribute__((aligned(64)));

static const char *workload, *dir;
static int nproc;
static double secs;
static long nfiles = 5000;
static char buf[PAGE];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *what, const char *path)
{
	fprintf(stderr, "fxmark %s: %s %s: %s\n", workload, what, path, strerror(errno));
	exit(1);
}

static int is(const char *w)
{
	return !strcmp(workload, w);
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd < 0)
		fail("open", path);
	return fd;
}

static void write_all(int fd, long size, const char *path)
{
	static char big[1 << 20];
	long done = 0;

	while (done < size) {
		long n = size - done < (long)sizeof(big) ? size - done : (long)sizeof(big);

		if (pwrite(fd, big, n, done) != n)
			fail("write", path);
		done += n;
	}
}

/* What process @i works on: laid out before the clock starts. */
struct priv {
	char path[512], path2[512];
	int fd;
	long size, next;
};

/*
 * Empty the file of @p and preallocate PREALLOC_SIZE bytes of it again:
 * with its size (DWPL) or past it (DWKL).
 */
static void prealloc(struct priv *p)
{
	if (ftruncate(p->fd, 0))
		fail("ftruncate", p->path);
	if (fallocate(p->fd, is("DWKL") ? FALLOC_FL_KEEP_SIZE : 0, 0, PREALLOC_SIZE))
		fail("fallocate", p->path);
	p->size = 0;
}

static void setup(int i, struct priv *p)
{
	char d[256];
	long k;

	snprintf(d, sizeof(d), "%s/p%d", dir, i);
	if (mkdir(d, 0755) && errno != EEXIST)
		fail("mkdir", d);
	p->fd = -1;
	p->next = 0;
	if (is("DWAL") || is("DWOL") || is("DWSL") || is("DWTL")) {
		snprintf(p->path, sizeof(p->path), "%s/f", d);
		p->fd = open_or_die(p->path, O_CREAT | O_RDWR);
		p->size = is("DWOL") || is("DWSL") ? 1L << 20 : is("DWTL") ? TRUNC_SIZE : 0;
		write_all(p->fd, p->size, p->path);
		if (fsync(p->fd))
			fail("fsync", p->path);
	} else if (is("DWPL") || is("DWKL")) {
		snprintf(p->path, sizeof(p->path), "%s/f", d);
		p->fd = open_or_die(p->path, O_CREAT | O_RDWR);
		prealloc(p);
		if (fsync(p->fd))
			fail("fsync", p->path);
	} else if (is("DWOM")) {
		snprintf(p->path, sizeof(p->path), "%s/shared", dir);
		p->fd = open_or_die(p->path, O_RDWR);
	} else if (is("MWUL")) {
		for (k = 0; k < nfiles; k++) {
			int fd;

			snprintf(p->path, sizeof(p->path), "%s/u%ld", d, k);
			fd = open_or_die(p->path, O_CREAT | O_WRONLY);
			if (write(fd, buf, PAGE) != PAGE)
				fail("write", p->path);
			close(fd);
		}
	} else if (is("MWRL")) {
		snprintf(p->path, sizeof(p->path), "%s/a", d);
		snprintf(p->path2, sizeof(p->path2), "%s/b", d);
		close(open_or_die(p->path, O_CREAT | O_WRONLY));
	}
}

/* One operation of process @i; 0, or 1 if it has nothing left to do. */
static int step(int i, struct priv *p)
{
	char name[512];
	int fd;

	if (is("DWAL")) {
		if (p->size >= APPEND_CAP) {
			if (ftruncate(p->fd, 0))
				fail("ftruncate", p->path);
			p->size = 0;
		}
		if (pwrite(p->fd, buf, PAGE, p->size) != PAGE)
			fail("append", p->path);
		p->size += PAGE;
	} else if (is("DWOL")) {
		if (pwrite(p->fd, buf, PAGE, 0) != PAGE)
			fail("overwrite", p->path);
	} else if (is("DWOM")) {
		if (pwrite(p->fd, buf, PAGE, (off_t)i * PAGE) != PAGE)
			fail("overwrite", p->path);
	} else if (is("DWSL")) {
		if (pwrite(p->fd, buf, PAGE, 0) != PAGE)
			fail("overwrite", p->path);
		if (fsync(p->fd))
			fail("fsync", p->path);
	} else if (is("DWPL") || is("DWKL")) {
		if (p->size >= PREALLOC_SIZE)
			prealloc(p);
		if (pwrite(p->fd, buf, PAGE, p->size) != PAGE)
			fail("write", p->path);
		p->size += PAGE;
	} else if (is("DWTL")) {
		if (!p->size) {
			write_all(p->fd, TRUNC_SIZE, p->path);
			p->size = TRUNC_SIZE;
		}
		p->size -= PAGE;
		if (ftruncate(p->fd, p->size))
			fail("ftruncate", p->path);
	} else if (is("MWCL") || is("MWCM")) {
		if (is("MWCL"))
			snprintf(name, sizeof(name), "%s/p%d/c%ld", dir, i, p->next++);
		else
			snprintf(name, sizeof(name), "%s/shared/p%d-%ld", dir, i, p->next++);
		fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0644);
		/* Out of inodes: this process is done. */
		if (fd < 0 && errno == ENOSPC)
			return 1;
		if (fd < 0)
			fail("create", name);
		close(fd);
	} else if (is("MWUL")) {
		if (p->next == nfiles)
			return 1;
		snprintf(name, sizeof(name), "%s/p%d/u%ld", dir, i, p->next++);
		if (unlink(name))
			fail("unlink", name);
	} else if (is("MWRL")) {
		if (rename(p->next & 1 ? p->path2 : p->path, p->next & 1 ? p->path : p->path2))
			fail("rename", p->path);
		p->next++;
	}
	return 0;
}

static void child(int i, struct result *res, int ready, int go)
{
	cpu_set_t all, one;
	struct priv p;
	double t0, end;
	char c;
	int cpu, n = 0;

	if (!sched_getaffinity(0, sizeof(all), &all)) {
		int want = i % CPU_COUNT(&all);

		for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (CPU_ISSET(cpu, &all) && n++ == want) {
				CPU_ZERO(&one);
				CPU_SET(cpu, &one);
				sched_setaffinity(0, sizeof(one), &one);
				break;
			}
		}
	}
	setup(i, &p);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		exit(1);
	t0 = now();
	end = t0 + secs;
	do {
		int k;

		/* The clock read once every 16 operations. */
		for (k = 0; k < 16; k++) {
			if (step(i, &p))
				goto out;
			res->ops++;
		}
	} while (now() < end);
out:
	res->secs = now() - t0;
	exit(0);
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "DWAL", "DWOL", "DWOM", "DWTL", "DWSL",
					     "DWPL", "DWKL", "MWCL", "MWCM", "MWUL", "MWRL" };
	int ready[2], go[2], i, status, bad = 0, found = 0;
	struct result *res;
	double rate = 0, longest = 0;
	long ops = 0;
	const char *reset = getenv("FX_RESET"), *mark = getenv("FX_MARK");
	char path[512], c;
	pid_t *pids;

	if (argc != 5) {
		fprintf(stderr, "usage: fxmark WORKLOAD DIR NPROC SECS\n");
		return 2;
	}
	workload = argv[1];
	dir = argv[2];
	nproc = atoi(argv[3]);
	secs = atof(argv[4]);
	if (getenv("FX_FILES"))
		nfiles = atol(getenv("FX_FILES"));
	for (i = 0; i < (int)(sizeof(known) / sizeof(known[0])); i++)
		found |= is(known[i]);
	if (!found || nproc < 1 || secs <= 0 || nfiles < 1 || strlen(dir) > 200) {
		fprintf(stderr, "fxmark: bad workload, directory, process count or time\n");
		return 2;
	}
	memset(buf, 'x', sizeof(buf));
	if (is("DWOM")) {
		int fd;

		snprintf(path, sizeof(path), "%s/shared", dir);
		fd = open_or_die(path, O_CREAT | O_RDWR);
		write_all(fd, (long)nproc * PAGE, path);
		fsync(fd);
		close(fd);
	} else if (is("MWCM")) {
		snprintf(path, sizeof(path), "%s/shared", dir);
		if (mkdir(path, 0755))
			fail("mkdir", path);
	}
	res = mmap(NULL, nproc * sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	pids = calloc(nproc, sizeof(*pids));
	if (res == MAP_FAILED || !pids || pipe(ready) || pipe(go))
		fail("set up", "");
	memset(res, 0, nproc * sizeof(*res));
	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			fail("fork", "");
		if (!pids[i])
			child(i, &res[i], ready[1], go[0]);
	}
	for (i = 0; i < nproc; i++) {
		if (read(ready[0], &c, 1) != 1) {
			bad = 1;
			break;
		}
	}
	if (!bad && reset) {
		FILE *f = fopen(reset, "w");

		if (f) {
			fputs("1\n", f);
			fclose(f);
		}
	}
	if (!bad && mark)
		marker(atoi(mark));
	for (i = 0; i < nproc && !bad; i++)
		if (write(go[1], "g", 1) != 1)
			bad = 1;
	for (i = 0; i < nproc; i++) {
		if (bad)
			kill(pids[i], SIGKILL);
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	}
	if (!bad && mark)
		marker(atoi(mark) + 1);
	if (bad) {
		fprintf(stderr, "fxmark %s: a process failed\n", workload);
		return 1;
	}
	printf("fxmark %s %d", workload, nproc);
	for (i = 0; i < nproc; i++) {
		ops += res[i].ops;
		if (res[i].secs > 0)
			rate += res[i].ops / res[i].secs;
		if (res[i].secs > longest)
			longest = res[i].secs;
	}
	printf(" ops %ld secs %.3f rate %.1f per", ops, longest, rate);
	for (i = 0; i < nproc; i++)
		printf("%c%.1f", i ? ',' : ' ', res[i].secs > 0 ? res[i].ops / res[i].secs : 0.0);
	printf("\n");
	return 0;
}
