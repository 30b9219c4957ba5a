// SPDX-License-Identifier: GPL-2.0
/*
 * maptouch FILE LOADS - map a whole file shared, store to every 4 KiB page
 * once (the minor faults that takes, and the time), then make LOADS random
 * 8-byte loads over the mapping (the time per load). Markers 0x5103/0x5104
 * bracket the stores, 0x5101/0x5102 the loads, for the pmtrace meter
 * (marker.h). Prints one line:
 *   faults=N touch_s=S loads=N load_ns=T sum=X
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "marker.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

int main(int argc, char **argv)
{
	uint64_t x = 88172645463325252ULL, sum = 0, i, n, words;
	struct stat st;
	double t0, t1;
	long f0, f1;
	uint8_t *m;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: maptouch FILE LOADS\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 0);
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	m = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	marker(0x5103);
	f0 = minflt();
	t0 = now();
	for (i = 0; i < (uint64_t)st.st_size; i += 4096)
		m[i] = (uint8_t)(i >> 12);
	t1 = now();
	f1 = minflt();
	marker(0x5104);
	printf("faults=%ld touch_s=%.3f ", f1 - f0, t1 - t0);
	words = st.st_size / 8;
	marker(0x5101);
	t0 = now();
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += ((volatile uint64_t *)m)[x % words];
	}
	t1 = now();
	marker(0x5102);
	printf("loads=%llu load_ns=%.1f sum=%llu\n", (unsigned long long)n,
	       n ? (t1 - t0) * 1e9 / n : 0.0, (unsigned long long)sum);
	return 0;
}
