/* SPDX-License-Identifier: GPL-2.0 */
/*
 * marker() - execute the no-op "nopl 0x504dTTTT(%rax)" with a tag known at
 * run time, from a page written then: the QEMU TCG plugins the benchmarks
 * use (the pmtrace meter of bench/pmtrace-ops, the coherence model of
 * bench/coherence) turn it into a snapshot of their counters, labelled
 * TTTT. It does nothing anywhere else.
 */
#ifndef VSMFS_BENCH_MARKER_H
#define VSMFS_BENCH_MARKER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static inline void marker(unsigned int tag)
{
	static uint8_t *code;

	if (!code) {
		code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (code == MAP_FAILED) {
			perror("marker: mmap");
			exit(1);
		}
	}
	code[0] = 0x0f;
	code[1] = 0x1f;
	code[2] = 0x80;
	code[3] = tag & 0xff;
	code[4] = (tag >> 8) & 0xff;
	code[5] = 0x4d;
	code[6] = 0x50;
	code[7] = 0xc3;		/* ret */
	__builtin___clear_cache((char *)code, (char *)code + 8);
	((void (*)(void))code)();
}

#endif
