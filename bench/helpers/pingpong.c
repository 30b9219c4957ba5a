// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong - known patterns of cache-line sharing, for the test of the
 * coherence model (bench/coherence).
 *
 *   pingpong shared N TAG     two threads, on CPUs 0 and 1, take turns N
 *                             times in all at incrementing one counter:
 *                             each turn moves its line twice (the load
 *                             that sees the other's increment, the store
 *                             that takes the line back), 2N moves
 *   pingpong private N TAG    each thread increments a counter of its own
 *                             line N times: no line moves but the start
 *                             and the end of the threads'
 *
 * Marker TAG (the no-op "nopl 0x504dTTTT(%rax)") once both threads are
 * running and before the first increment, TAG+1 after both are done.
 * Prints "pingpong MODE N" and the final counters.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marker.h"

struct line {
	volatile long v;
	char pad[64 - sizeof(long)];
} __attribute__((aligned(64)));

static struct line shared, own[2];
static int started;
static long n;
static int private_mode;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *run(void *arg)
{
	int me = (int)(long)arg;
	long i;

	pin(me);
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 3)
		;
	if (private_mode) {
		for (i = 0; i < n; i++)
			own[me].v++;
		return NULL;
	}
	/* Thread 0 increments the even values, thread 1 the odd ones. */
	for (;;) {
		long v = __atomic_load_n(&shared.v, __ATOMIC_ACQUIRE);

		if (v >= n)
			return NULL;
		if ((v & 1) == me)
			__atomic_store_n(&shared.v, v + 1, __ATOMIC_RELEASE);
	}
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	unsigned int tag;
	int i;

	if (argc != 4 || (strcmp(argv[1], "shared") && strcmp(argv[1], "private"))) {
		fprintf(stderr, "usage: pingpong shared|private N TAG\n");
		return 2;
	}
	private_mode = !strcmp(argv[1], "private");
	n = atol(argv[2]);
	tag = (unsigned int)atoi(argv[3]);
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(long)i)) {
			perror("pthread_create");
			return 1;
		}
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 2)
		;
	marker(tag);
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	marker(tag + 1);
	printf("pingpong %s %ld shared %ld own %ld %ld\n", argv[1], n, shared.v, own[0].v, own[1].v);
	return 0;
}
