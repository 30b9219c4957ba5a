/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The marker the guest executes to close a window of a plugin of this
 * directory (cohere.c, insns.c): the 7-byte no-op "nopl 0x504dTTTT(%rax)"
 * (0f 1f 80 TT TT 4d 50) that bench/helpers/marker.h emits.
 */
#ifndef BENCH_COHERENCE_MARKER_H
#define BENCH_COHERENCE_MARKER_H

#include <stdint.h>
#include <string.h>

#include <qemu-plugin.h>

#define MARK_MAGIC	0x504d0000u

/* The tag of a marker instruction, or -1. */
static inline int marker_tag(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return -1;
	memcpy(&disp, b + 3, 4);
	if ((disp & 0xffff0000u) != MARK_MAGIC)
		return -1;
	return disp & 0xffff;
}

#endif
