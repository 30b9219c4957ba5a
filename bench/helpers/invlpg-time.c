// SPDX-License-Identifier: GPL-2.0
/*
 * invlpg-time: the cost of one kernel TLB invalidation to a system call,
 * with the debugfs files of the tlbcost module (bench/helpers/tlbcost/).
 *
 *   invlpg-time DIR [BLOCKS [WRITES]]
 *
 * Times BLOCKS blocks (default 300) of WRITES one-byte writes (default 200)
 * to DIR/noop and as many to DIR/invlpg, alternately, and prints
 * "invlpg_ns N syscall_ns M": the median over blocks of the extra time per
 * write that invalidates a page, and of the time per write that does not.
 * Whole blocks are timed, so that the refills an invalidation causes in the
 * code that runs after it are counted; medians keep out the blocks the host
 * happened to preempt.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Nanoseconds per write of one block of @n writes to @fd. */
static double block(int fd, int n)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		if (write(fd, "", 1) != 1) {
			perror("invlpg-time: write");
			exit(1);
		}
	}
	return (now_ns() - t0) / n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int blocks = argc > 2 ? atoi(argv[2]) : 300;
	int writes = argc > 3 ? atoi(argv[3]) : 200;
	char path[4096];
	double *base, *diff;
	int noop, inv, b;

	if (argc < 2 || blocks < 1 || writes < 1) {
		fprintf(stderr, "usage: invlpg-time DIR [BLOCKS [WRITES]]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/noop", argv[1]);
	noop = open(path, O_WRONLY);
	snprintf(path, sizeof(path), "%s/invlpg", argv[1]);
	inv = open(path, O_WRONLY);
	if (noop < 0 || inv < 0) {
		perror("invlpg-time: open");
		return 1;
	}
	base = calloc(blocks, sizeof(*base));
	diff = calloc(blocks, sizeof(*diff));
	if (!base || !diff)
		return 1;
	block(noop, writes);	/* warm up */
	for (b = 0; b < blocks; b++) {
		base[b] = block(noop, writes);
		diff[b] = block(inv, writes) - base[b];
	}
	printf("invlpg_ns %.0f syscall_ns %.0f\n", median(diff, blocks), median(base, blocks));
	return 0;
}
