/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs counters, shown one per file in /sys/fs/vsmfs/<device>/.
 *
 * Each counter is declared once here, with its sysfs name; the enum and the
 * sysfs attributes are generated from the list. Counters are per-CPU sums:
 * cheap to bump on hot paths, summed when read.
 */
#ifndef _VSMFS_STATS_H
#define _VSMFS_STATS_H

#include <linux/percpu.h>

/* X(name): the sysfs file is the name. Documented in vsmfs(5). */
#define VSMFS_STATS(X)			\
	X(data_user_bytes)		\
	X(data_merge_bytes)		\
	X(data_cow_copy_bytes)		\
	X(data_inplace_bytes)		\
	X(mcow_writes)			\
	X(mcow_fine)			\
	X(mcow_coarse)			\
	X(pte_swaps)			\
	X(tlb_shootdowns)		\
	X(zfdm_reclaims)		\
	X(zfdm_reclaimed_pages)		\
	X(zfdm_migrations)		\
	X(zfdm_migrated_pages)		\
	X(fault_pte)			\
	X(fault_pmd)			\
	X(fault_pmd_fallback)		\
	X(inodes_created)		\
	X(trans_commits)		\
	X(journal_bytes)		\
	X(home_bytes)			\
	X(journal_full_bytes)		\
	X(journal_delta_bytes)		\
	X(journal_header_bytes)		\
	X(journal_full_blocks)		\
	X(journal_delta_blocks)		\
	X(journal_absorbed)		\
	X(journal_wear_swaps)		\
	X(journal_gc_runs)		\
	X(journal_gc_reclaimed)		\
	X(journal_checkpoints)		\
	X(journal_checkpoint_blocks)	\
	X(journal_revoked)

#define VSMFS_STAT_ENUM(name)	VSMFS_STAT_##name,
enum vsmfs_stat {
	VSMFS_STATS(VSMFS_STAT_ENUM)
	VSMFS_NR_STATS
};
#undef VSMFS_STAT_ENUM

struct vsmfs_stats {
	u64	v[VSMFS_NR_STATS];
};

struct vsmfs_sb_info;

int vsmfs_sysfs_init(void);
void vsmfs_sysfs_exit(void);
int vsmfs_sysfs_register(struct vsmfs_sb_info *sbi);
void vsmfs_sysfs_unregister(struct vsmfs_sb_info *sbi);

#endif /* _VSMFS_STATS_H */
