// SPDX-License-Identifier: GPL-2.0
/*
 * Print the host's TSC frequency in kHz, measured against CLOCK_MONOTONIC_RAW
 * over 200 ms (the median of five tries).
 *
 * Under QEMU TCG the guest's TSC counts at the host's rate. The guest
 * kernel calibrates it at boot against the emulated PIT and HPET, and on a
 * loaded host that calibration can be off by a factor of ten or more, so
 * that the guest's clock runs that much fast or slow (and timeouts in the
 * guest fire that much early or late). vsmfs-vm passes the measured rate
 * as tsc_early_khz= instead.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	uint64_t khz[5];
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t t0 = ns(), c0 = __rdtsc(), t1, c1;
		struct timespec nap = { 0, 40000000 };

		nanosleep(&nap, NULL);
		t1 = ns();
		c1 = __rdtsc();
		khz[i] = (c1 - c0) * 1000000ull / (t1 - t0);
	}
	qsort(khz, 5, sizeof(khz[0]), cmp);
	printf("%llu\n", (unsigned long long)khz[2]);
	return 0;
}
