// SPDX-License-Identifier: GPL-2.0
/*
 * markops - a run of one kind of file operation between pmtrace markers,
 * for bench/pmtrace-ops.
 *
 *   markops append FILE N BS TAG        N times: append BS bytes, fsync
 *   markops create DIR N TAG            N times: create DIR/cNNNNN empty,
 *                                       fsync it, close
 *   markops layout FILE SIZE            write FILE whole (2 MiB writes),
 *                                       fsync; no markers
 *   markops overwrite FILE N BS SEED TAG
 *                                       N times: pwrite BS bytes at a
 *                                       random BS-aligned offset of FILE
 *   markops osync FILE N BS SEED TAG    the same, each pwrite followed by
 *                                       fsync
 *   markops rename DIR N TAG            N times: rename DIR/cNNNNN to
 *                                       DIR/rNNNNN, fsync it, close
 *   markops chmod DIR N TAG             N times: chmod DIR/rNNNNN 0600,
 *                                       fsync it, close
 *   markops unlink DIR N TAG            unlink DIR/r00000 ... r<N-1>
 *   markops spread DIR FILES N BS TAG   create DIR/s0 ... s<FILES-1>, then
 *                                       N times: append BS bytes to one of
 *                                       them (append30's sequence), fsync
 *   markops fsync FILE N TAG            N times: fsync FILE, which nothing
 *                                       changes meanwhile
 *   markops marker TAG                  one marker, TAG
 *
 * Markers (but for "marker"): TAG just before the first operation, TAG+1 just after the
 * last, TAG+2 after a sync() that follows.  A marker is the 7-byte NOP
 * "nopl 0x504dTTTT(%rax)" (TTTT the 16-bit tag), which the pmtrace QEMU
 * plugin turns into a snapshot of its counters; it does nothing anywhere
 * else, so the program also runs outside the plugin.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "marker.h"

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

/* Open @path with @flags (creating it with @mode), fsync it, close it. */
static void open_fsync(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags, mode);

	if (fd < 0)
		fail("open");
	if (fsync(fd))
		fail("fsync");
	close(fd);
}

static uint64_t rng;

static uint64_t next_random(void)
{
	/* xorshift64 */
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static long parse_count(const char *s)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "markops: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void begin(unsigned int tag)
{
	sync();
	marker(tag);
}

static void end(unsigned int tag)
{
	marker(tag + 1);
	sync();
	marker(tag + 2);
}

int main(int argc, char **argv)
{
	char name[4096];
	char *buf;
	long i, n;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "marker")) {
		marker(parse_count(argv[2]));
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "append")) {
		long bs = parse_count(argv[4]);

		n = parse_count(argv[3]);
		buf = malloc(bs);
		if (!buf)
			fail("malloc");
		memset(buf, 'a', bs);
		fd = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
		if (fd < 0)
			fail("open");
		begin(parse_count(argv[5]));
		for (i = 0; i < n; i++) {
			if (write(fd, buf, bs) != bs)
				fail("write");
			if (fsync(fd))
				fail("fsync");
		}
		end(parse_count(argv[5]));
		close(fd);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "create")) {
		n = parse_count(argv[3]);
		begin(parse_count(argv[4]));
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%s/c%05ld", argv[2], i);
			open_fsync(name, O_CREAT | O_EXCL | O_WRONLY, 0644);
		}
		end(parse_count(argv[4]));
		return 0;
	}
	if (argc == 5 && (!strcmp(argv[1], "rename") || !strcmp(argv[1], "chmod"))) {
		int ren = !strcmp(argv[1], "rename");
		char to[sizeof(name)];

		n = parse_count(argv[3]);
		begin(parse_count(argv[4]));
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%s/c%05ld", argv[2], i);
			snprintf(to, sizeof(to), "%s/r%05ld", argv[2], i);
			if (ren ? rename(name, to) : chmod(to, 0600))
				fail(argv[1]);
			open_fsync(to, O_RDONLY, 0);
		}
		end(parse_count(argv[4]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "layout")) {
		long size = parse_count(argv[3]), chunk = 2L << 20, off;

		buf = malloc(chunk);
		if (!buf)
			fail("malloc");
		memset(buf, 'l', chunk);
		fd = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0)
			fail("open");
		for (off = 0; off < size; off += chunk) {
			long len = size - off < chunk ? size - off : chunk;

			if (pwrite(fd, buf, len, off) != len)
				fail("pwrite");
		}
		if (fsync(fd))
			fail("fsync");
		close(fd);
		return 0;
	}
	if (argc == 7 && (!strcmp(argv[1], "overwrite") || !strcmp(argv[1], "osync"))) {
		int sync = !strcmp(argv[1], "osync");
		long bs = parse_count(argv[4]), blocks;
		off_t size;

		n = parse_count(argv[3]);
		rng = parse_count(argv[5]) | 1;
		buf = malloc(bs);
		if (!buf)
			fail("malloc");
		memset(buf, 'o', bs);
		fd = open(argv[2], O_WRONLY);
		if (fd < 0)
			fail("open");
		size = lseek(fd, 0, SEEK_END);
		blocks = size / bs;
		if (blocks < 1) {
			fprintf(stderr, "markops: %s is smaller than %ld bytes\n", argv[2], bs);
			return 1;
		}
		begin(parse_count(argv[6]));
		for (i = 0; i < n; i++) {
			off_t off = (off_t)(next_random() % blocks) * bs;

			if (pwrite(fd, buf, bs, off) != bs)
				fail("pwrite");
			if (sync && fsync(fd))
				fail("fsync");
		}
		end(parse_count(argv[6]));
		close(fd);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "fsync")) {
		n = parse_count(argv[3]);
		fd = open(argv[2], O_WRONLY);
		if (fd < 0)
			fail("open");
		begin(parse_count(argv[4]));
		for (i = 0; i < n; i++)
			if (fsync(fd))
				fail("fsync");
		end(parse_count(argv[4]));
		close(fd);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "unlink")) {
		n = parse_count(argv[3]);
		begin(parse_count(argv[4]));
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%s/r%05ld", argv[2], i);
			if (unlink(name))
				fail("unlink");
		}
		end(parse_count(argv[4]));
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "spread")) {
		long files = parse_count(argv[3]), bs = parse_count(argv[5]);
		int *fds;

		n = parse_count(argv[4]);
		/* The sequence and the file choice of bench/helpers/append30.c. */
		rng = 88172645463325252UL;
		buf = malloc(bs);
		fds = calloc(files, sizeof(*fds));
		if (!buf || !fds || !files)
			fail("malloc");
		memset(buf, 'a', bs);
		for (i = 0; i < files; i++) {
			snprintf(name, sizeof(name), "%s/s%ld", argv[2], i);
			fds[i] = open(name, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
			if (fds[i] < 0)
				fail("open");
		}
		begin(parse_count(argv[6]));
		for (i = 0; i < n; i++) {
			fd = fds[next_random() % files];
			if (write(fd, buf, bs) != bs)
				fail("write");
			if (fsync(fd))
				fail("fsync");
		}
		end(parse_count(argv[6]));
		for (i = 0; i < files; i++)
			close(fds[i]);
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of markops.c\n");
	return 2;
}
