// SPDX-License-Identifier: GPL-2.0
/*
 * createlat DIR FILES [WRITEFILE]: create FILES files in the new directory
 * DIR, each created (open O_CREAT|O_EXCL), written with 4 KiB and closed,
 * one after the other, timing the create and the whole file with
 * clock_gettime(CLOCK_MONOTONIC). With WRITEFILE (an existing file, laid
 * out beforehand), a second thread overwrites it sequentially in 2 MiB
 * pwrites, wrapping at its end, from before the first create until after
 * the last. Prints one line:
 *
 *   files N secs S create_ns P50 P90 P99 P99.9 MAX file_ns P50 P90 P99 P99.9 MAX writer_kib_s W
 *
 * (nearest-rank percentiles, W is 0 without a writer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WRITE_SIZE	(2UL << 20)

static atomic_int stop;
static atomic_int writer_started;
static atomic_ullong written;
static int writer_err;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *writer(void *arg)
{
	const char *path = arg;
	struct stat st;
	char *buf;
	off_t off = 0;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)WRITE_SIZE) {
		writer_err = fd < 0 ? errno : EINVAL;
		atomic_store(&writer_started, 1);
		return NULL;
	}
	buf = malloc(WRITE_SIZE);
	if (!buf) {
		writer_err = ENOMEM;
		atomic_store(&writer_started, 1);
		return NULL;
	}
	memset(buf, 0x5a, WRITE_SIZE);
	while (!atomic_load(&stop)) {
		if (st.st_size - off < (off_t)WRITE_SIZE)
			off = 0;
		if (pwrite(fd, buf, WRITE_SIZE, off) != (ssize_t)WRITE_SIZE) {
			writer_err = errno ? errno : EIO;
			break;
		}
		off += WRITE_SIZE;
		atomic_fetch_add(&written, WRITE_SIZE);
		atomic_store(&writer_started, 1);
	}
	atomic_store(&writer_started, 1);
	free(buf);
	close(fd);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p of them at or below it. */
static unsigned long long pct(const unsigned long long *v, size_t n, double p)
{
	size_t rank = (size_t)(p * n + 0.999999);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static void print_pcts(const char *name, unsigned long long *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	printf(" %s %llu %llu %llu %llu %llu", name, pct(v, n, 0.50), pct(v, n, 0.90),
	       pct(v, n, 0.99), pct(v, n, 0.999), v[n - 1]);
}

int main(int argc, char **argv)
{
	unsigned long long *create_ns, *file_ns, t0, t1, t2, start, end, w0, w1;
	static char data[4096];
	pthread_t tid;
	long files, i;
	char path[4096];
	int fd;

	files = argc > 2 ? atol(argv[2]) : 0;
	if (argc < 3 || argc > 4 || files < 1) {
		fprintf(stderr, "usage: createlat DIR FILES [WRITEFILE]\n");
		return 2;
	}
	if (mkdir(argv[1], 0755)) {
		perror(argv[1]);
		return 1;
	}
	create_ns = calloc(files, sizeof(*create_ns));
	file_ns = calloc(files, sizeof(*file_ns));
	if (!create_ns || !file_ns) {
		perror("calloc");
		return 1;
	}
	memset(data, 0xa5, sizeof(data));
	if (argc == 4) {
		if (pthread_create(&tid, NULL, writer, argv[3])) {
			perror("pthread_create");
			return 1;
		}
		/* The writer is under way before the first create. */
		while (!atomic_load(&writer_started))
			usleep(1000);
		if (writer_err) {
			fprintf(stderr, "createlat: writer: %s\n", strerror(writer_err));
			return 1;
		}
	}
	w0 = atomic_load(&written);
	start = now_ns();
	for (i = 0; i < files; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
		t0 = now_ns();
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		t1 = now_ns();
		if (fd < 0) {
			perror(path);
			return 1;
		}
		if (write(fd, data, sizeof(data)) != sizeof(data)) {
			perror("write");
			return 1;
		}
		if (close(fd)) {
			perror("close");
			return 1;
		}
		t2 = now_ns();
		create_ns[i] = t1 - t0;
		file_ns[i] = t2 - t0;
	}
	end = now_ns();
	w1 = atomic_load(&written);
	if (argc == 4) {
		atomic_store(&stop, 1);
		pthread_join(tid, NULL);
		if (writer_err) {
			fprintf(stderr, "createlat: writer: %s\n", strerror(writer_err));
			return 1;
		}
	}
	printf("files %ld secs %.3f", files, (end - start) / 1e9);
	print_pcts("create_ns", create_ns, files);
	print_pcts("file_ns", file_ns, files);
	/* What the writer completed while the creates ran (0 without one). */
	printf(" writer_kib_s %.0f\n", (w1 - w0) / 1024.0 / ((end - start) / 1e9));
	return 0;
}
