// SPDX-License-Identifier: GPL-2.0
/*
 * append30: small appends spread over many files, each made durable by
 * fsync, as in the inode aggregation paper's microbenchmark.
 *
 *   append30 DIR FILES OPS [BYTES]
 *
 * Creates FILES files in DIR, then makes OPS appends of BYTES (default 30)
 * bytes, each to a file chosen by a fixed pseudo-random sequence, each
 * followed by fsync. Prints "ops N secs S" for the append phase.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long files, ops, bytes = 30, i, x = 88172645463325252UL;
	struct timespec a, b;
	char buf[4096], path[4096];
	int *fd;

	if (argc < 4) {
		fprintf(stderr, "usage: append30 DIR FILES OPS [BYTES]\n");
		return 2;
	}
	files = strtoul(argv[2], NULL, 0);
	ops = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		bytes = strtoul(argv[4], NULL, 0);
	if (!files || bytes > sizeof(buf)) {
		fprintf(stderr, "append30: bad FILES or BYTES\n");
		return 2;
	}
	memset(buf, 'a', sizeof(buf));
	fd = calloc(files, sizeof(*fd));
	if (!fd)
		return 1;
	for (i = 0; i < files; i++) {
		snprintf(path, sizeof(path), "%s/a%lu", argv[1], i);
		fd[i] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
		if (fd[i] < 0) {
			perror(path);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < ops; i++) {
		unsigned long f;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		f = x % files;
		if (write(fd[f], buf, bytes) != (ssize_t)bytes || fsync(fd[f])) {
			perror("append");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ops %lu secs %.6f\n", ops,
	       (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	for (i = 0; i < files; i++)
		close(fd[i]);
	return 0;
}
