// SPDX-License-Identifier: GPL-2.0
/*
 * holefill-race - write() into a hole while a shared mapping of the hole
 * is read, and check that the mapping shows what read() shows.
 *
 *   holefill-race FILE ROUNDS [PAGES]
 *
 * FILE (created) is PAGES pages long (16 by default). Each round makes
 * every page a hole again, the even rounds by truncating the file to 0
 * and back, the odd ones by punching the whole file (holes inside a run
 * on a sparse file system), so that no page of the file is mapped. Then
 * the main thread pwrite()s one page of the round's pattern into one of
 * the holes while a second thread refaults that page (MADV_DONTNEED, then
 * a load through the shared mapping), which maps the zero page as long as
 * the page is a hole. Once the write has returned, the page read through
 * the mapping must equal the page pread() returns.
 *
 * The writer and the refaulting thread share one CPU, so that the
 * refaulting thread never runs while the writer checks a round. It wakes
 * from short sleeps of random length, which preempts the writer where the
 * kernel may next reschedule it: inside write() too, so that the refault
 * lands at any such point of the write.
 *
 * Prints one line per round whose mapping differs and a summary; exits 1
 * if any round differed, 2 on a usage or system call error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define PG	4096L

static int fd;
static unsigned char *map;
static long pages;
/* Odd while a round's write is under way; -1 at the end. */
static atomic_long phase;
static atomic_long target;
static atomic_long refaults;
static __thread sigjmp_buf bus_jmp;

static void fail(const char *what)
{
	fprintf(stderr, "holefill-race: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("sched_setaffinity");
}

/* A refault that a preemption delayed into the next round's truncation. */
static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static void *refaulter(void *arg)
{
	struct timespec nap = { 0, 0 };
	unsigned int seed = 2;

	pin_to_cpu(*(int *)arg);
	signal(SIGBUS, on_sigbus);
	for (;;) {
		/* Each wakeup preempts the writer where it next can be. */
		nap.tv_nsec = 1000 + rand_r(&seed) % 50000;
		nanosleep(&nap, NULL);
		if (atomic_load(&phase) < 0)
			return NULL;
		if (atomic_load(&phase) % 2 && !sigsetjmp(bus_jmp, 1)) {
			unsigned char *p = map + atomic_load(&target) * PG;

			if (madvise(p, PG, MADV_DONTNEED))
				fail("madvise");
			(void)*(volatile unsigned char *)p;
			atomic_fetch_add(&refaults, 1);
		}
	}
}

/* Make every page of the file a hole, with nothing of it mapped. */
static void make_holes(long round)
{
	if (round % 2 == 0) {
		if (ftruncate(fd, 0) || ftruncate(fd, pages * PG))
			fail("ftruncate");
	} else if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, pages * PG)) {
		fail("fallocate");
	}
}

int main(int argc, char **argv)
{
	static unsigned char buf[PG], got[PG];
	long rounds, r, bad = 0, i;
	pthread_t th;
	int cpu;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: holefill-race FILE ROUNDS [PAGES]\n");
		return 2;
	}
	rounds = atol(argv[2]);
	pages = argc > 3 ? atol(argv[3]) : 16;
	if (rounds <= 0 || pages <= 0)
		return 2;
	fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		fail(argv[1]);
	if (ftruncate(fd, pages * PG))
		fail("ftruncate");
	map = mmap(NULL, pages * PG, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		fail("mmap");
	cpu = sched_getcpu();
	if (cpu < 0)
		fail("sched_getcpu");
	pin_to_cpu(cpu);
	srandom(1);
	/* Sleeps as short as asked for: more wakeups, more preemptions. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (pthread_create(&th, NULL, refaulter, &cpu))
		fail("pthread_create");

	for (r = 0; r < rounds; r++) {
		long pg = random() % pages;

		make_holes(r);
		memset(buf, 'a' + r % 26, sizeof(buf));
		memcpy(buf, &r, sizeof(r));
		atomic_store(&target, pg);
		atomic_store(&phase, 2 * r + 1);
		if (pwrite(fd, buf, PG, pg * PG) != PG)
			fail("pwrite");
		atomic_store(&phase, 2 * r + 2);
		if (pread(fd, got, PG, pg * PG) != PG)
			fail("pread");
		if (memcmp(got, buf, PG))
			fprintf(stderr, "round %ld page %ld: read() does not return the data written\n",
				r, pg);
		if (memcmp(map + pg * PG, got, PG)) {
			for (i = 0; i < PG && map[pg * PG + i] == got[i]; i++)
				;
			printf("round %ld page %ld: the mapping shows 0x%02x at byte %ld, read() 0x%02x\n",
			       r, pg, map[pg * PG + i], i, got[i]);
			bad++;
		}
	}
	atomic_store(&phase, -1);
	pthread_join(th, NULL);
	printf("%ld rounds, %ld refaults, %ld with the mapping unlike read()\n",
	       rounds, atomic_load(&refaults), bad);
	return bad ? 1 : 0;
}
