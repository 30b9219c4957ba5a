// SPDX-License-Identifier: GPL-2.0
/*
 * insns - a QEMU TCG plugin that counts the guest instructions executed
 * per translation block between markers: an exact profile of where a
 * guest's instructions go, by function once the addresses are named.
 *
 * Each translation block gets a counter, incremented inline every time the
 * block executes (no callback, so the guest runs at nearly TCG's speed);
 * its instructions are the executions times the block's length. A block
 * left early (an interrupt or a fault in it) counts as executed whole; a
 * block translated again gets a second counter (summed per address in the
 * output). The inline add is not atomic: blocks that two vCPUs execute at
 * the same moment may lose counts. Profile one CPU's work, or read the
 * figures of several as close, not exact.
 *
 * Windows. As in cohere.c: the guest executes the 7-byte no-op
 * "nopl 0x504dTTTT(%rax)" to close a window; the plugin appends one JSON
 * line with the tag TTTT, the vCPU, the instructions executed since the
 * last marker (all, and the kernel's: the upper half of the address
 * space) and "blocks": [["PC", INSNS], ...], the kernel's blocks that ran
 * (per start address), then starts the next window.
 *
 * Arguments: out=FILE (JSON lines, appended; default stderr).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "marker.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define NBUCKETS	(1u << 16)

/* One translation of a block: its address, length and executions. */
struct block {
	uint64_t pc;
	uint64_t execs;		/* inline add, reset by a marker */
	uint32_t n;
	struct block *all;	/* every block, newest first */
};

/* Per start address, while a window's output is summed. */
struct sum {
	uint64_t pc;
	uint64_t insns;
	struct sum *next;
};

static struct block *blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

/* A marker: the window's instructions per block address, and a new window. */
static void mark_cb(unsigned int vcpu, void *udata)
{
	unsigned int tag = (unsigned int)(uintptr_t)udata;
	struct sum **hash = calloc(NBUCKETS, sizeof(*hash)), *s, *next;
	uint64_t all = 0, kernel = 0;
	struct block *b;
	bool first = true;
	unsigned int i;

	pthread_mutex_lock(&lock);
	for (b = blocks; b; b = b->all) {
		uint64_t e = __atomic_exchange_n(&b->execs, 0, __ATOMIC_RELAXED);
		uint64_t insns = e * b->n;

		if (!e)
			continue;
		all += insns;
		if (!(b->pc >> 63))
			continue;
		kernel += insns;
		if (!hash)
			continue;
		i = (b->pc >> 2) & (NBUCKETS - 1);
		for (s = hash[i]; s && s->pc != b->pc; s = s->next)
			;
		if (!s) {
			s = calloc(1, sizeof(*s));
			if (!s)
				continue;
			s->pc = b->pc;
			s->next = hash[i];
			hash[i] = s;
		}
		s->insns += insns;
	}
	fputs("{\"blocks\":[", out);
	for (i = 0; hash && i < NBUCKETS; i++) {
		for (s = hash[i]; s; s = next) {
			next = s->next;
			fprintf(out, "%s[\"%#" PRIx64 "\",%" PRIu64 "]", first ? "" : ",",
				s->pc, s->insns);
			first = false;
			free(s);
		}
	}
	fprintf(out, "],\"tag\":%u,\"vcpu\":%u,\"insns\":%" PRIu64 ",\"kernel_insns\":%"
		PRIu64 ",\"complete\":%s}\n", tag, vcpu, all, kernel, hash ? "true" : "false");
	fflush(out);
	pthread_mutex_unlock(&lock);
	free(hash);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct block *b = calloc(1, sizeof(*b));

	if (!b) {
		fprintf(stderr, "insns: out of memory\n");
		abort();
	}
	b->pc = qemu_plugin_tb_vaddr(tb);
	b->n = n;
	pthread_mutex_lock(&lock);
	b->all = blocks;
	blocks = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->execs, 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		int tag = marker_tag(insn);

		if (tag >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_cb, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)tag);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	if (out && out != stderr)
		fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	if (!info->system_emulation) {
		fprintf(stderr, "insns: system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else {
			fprintf(stderr, "insns: unknown argument %s (out=FILE)\n", argv[i]);
			return -1;
		}
	}
	out = path ? fopen(path, "a") : stderr;
	if (!out) {
		perror(path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
