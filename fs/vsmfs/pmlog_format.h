/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Format of the persistence-ordering log (pmlog.c), as read from
 * /sys/kernel/debug/vsmfs/pmlog_data by tools/vsmfs-pmreplay: one header,
 * then records in the order they were made. Fixed width little-endian
 * fields; every record is 8-byte aligned.
 *
 * A MARK record changes no line: user space writes a number to
 * /sys/kernel/debug/vsmfs/pmlog_mark to say where in the log something it
 * did (e.g. an operation returning) happened. The ordering tests use marks
 * to know, at each crash point, which operations of each task had returned.
 */
#ifndef _VSMFS_PMLOG_FORMAT_H
#define _VSMFS_PMLOG_FORMAT_H

#include <linux/types.h>
#include <linux/build_bug.h>

#define VSMFS_PMLOG_MAGIC	0x474f4c4d50534d56ULL	/* bytes "VSMPMLOG" */
#define VSMFS_PMLOG_VERSION	4

/* ph_flags */
#define VSMFS_PMLOG_OVERFLOW	0x1	/* records were lost: the log is unusable */

struct vsmfs_pmlog_hdr {
	__le64	ph_magic;	/* VSMFS_PMLOG_MAGIC */
	__le32	ph_version;	/* VSMFS_PMLOG_VERSION */
	__le32	ph_flags;	/* VSMFS_PMLOG_* */
	__le64	ph_bytes;	/* bytes of records after this header */
	__le64	ph_records;	/* records after this header */
	__le64	ph_foreign;	/* flushes and stores outside the device, not logged */
	__le64	ph_dev_bytes;	/* size of the logged device */
	__le64	ph_reserved[2];	/* zero */
};

/* r_type */
#define VSMFS_PMLOG_FLUSH	1	/* cache lines written back; r_len bytes: their contents */
#define VSMFS_PMLOG_NT		2	/* non-temporal stores; r_len bytes: what was stored */
#define VSMFS_PMLOG_FENCE	3	/* store fence; no data */
#define VSMFS_PMLOG_STORE	4	/* cached stores; r_len bytes: what was stored */
#define VSMFS_PMLOG_MARK	5	/* a mark from user space; r_off: its value, no data */
/*
 * The task found its CPU with no store to order and did not fence
 * (vsmfs_fence_pending()); no data. What it flushed or stored
 * non-temporally on other CPUs is durable: it left them through a locked
 * instruction.
 */
#define VSMFS_PMLOG_SETTLE	6

struct vsmfs_pmlog_rec {
	__le16	r_type;		/* VSMFS_PMLOG_FLUSH, _NT, _FENCE, _STORE, _MARK, _SETTLE */
	__le16	r_cpu;		/* CPU that made the record */
	__le32	r_pid;		/* task that made it; 0: none (interrupt, idle) */
	__le64	r_off;		/* device offset (FLUSH: line aligned); MARK: value */
	__le32	r_len;		/* data bytes that follow, padded to 8 */
	__le32	r_reserved;	/* zero */
};

static_assert(sizeof(struct vsmfs_pmlog_hdr) == 64);
static_assert(sizeof(struct vsmfs_pmlog_rec) == 24);

#endif /* _VSMFS_PMLOG_FORMAT_H */
