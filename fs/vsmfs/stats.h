/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs counters, shown one per file in /sys/fs/vsmfs/<device>/.
 *
 * A counter is added here and named in sysfs.c. Counters are per-CPU sums:
 * cheap to bump on hot paths, summed when read.
 */
#ifndef _VSMFS_STATS_H
#define _VSMFS_STATS_H

#include <linux/percpu.h>

/* The sysfs file of VSMFS_STAT_<name> is <name>; documented in vsmfs(5). */
enum vsmfs_stat {
	VSMFS_STAT_data_user_bytes,
	VSMFS_STAT_data_merge_bytes,
	VSMFS_STAT_data_cow_copy_bytes,
	VSMFS_STAT_data_inplace_bytes,
	VSMFS_STAT_write_bounces,
	VSMFS_STAT_write_staged,
	VSMFS_STAT_write_staged_appends,
	VSMFS_STAT_write_shared_appends,
	VSMFS_STAT_mcow_writes,
	VSMFS_STAT_mcow_fine,
	VSMFS_STAT_mcow_coarse,
	VSMFS_STAT_pte_swaps,
	VSMFS_STAT_tlb_shootdowns,
	VSMFS_STAT_zfdm_reclaims,
	VSMFS_STAT_zfdm_reclaimed_pages,
	VSMFS_STAT_zfdm_migrations,
	VSMFS_STAT_zfdm_migrated_pages,
	VSMFS_STAT_holes_punched,
	VSMFS_STAT_holes_filled,
	VSMFS_STAT_frames_gathered,
	VSMFS_STAT_fault_pte,
	VSMFS_STAT_fault_pmd,
	VSMFS_STAT_fault_pmd_fallback,
	VSMFS_STAT_fault_pud,
	VSMFS_STAT_fault_pud_fallback,
	VSMFS_STAT_pud_writebacks,
	VSMFS_STAT_inodes_created,
	VSMFS_STAT_trans_commits,
	VSMFS_STAT_trans_aborts,
	VSMFS_STAT_trans_handles,
	VSMFS_STAT_trans_shared_handles,
	VSMFS_STAT_trans_shared_hold_ns,
	VSMFS_STAT_trans_shared_meta,
	VSMFS_STAT_trans_share_reclaims,
	VSMFS_STAT_trans_frees_grown,
	VSMFS_STAT_trans_frees_early,
	VSMFS_STAT_trans_turns,
	VSMFS_STAT_trans_turn_waits,
	VSMFS_STAT_trans_commit_overtaken,
	VSMFS_STAT_trans_commit_joined,
	VSMFS_STAT_trans_excl,
	VSMFS_STAT_commits_sync,
	VSMFS_STAT_commits_fsync,
	VSMFS_STAT_fc_records,
	VSMFS_STAT_fc_fallbacks,
	VSMFS_STAT_fc_fallback_excl,
	VSMFS_STAT_fc_fallback_op,
	VSMFS_STAT_fc_fallback_frees,
	VSMFS_STAT_fc_fallback_create,
	VSMFS_STAT_fc_fallback_runs,
	VSMFS_STAT_fc_fallback_dir,
	VSMFS_STAT_fc_fallback_busy,
	VSMFS_STAT_fc_fallback_commit,
	VSMFS_STAT_fc_fallback_moved,
	VSMFS_STAT_fc_fallback_full,
	VSMFS_STAT_fc_waits,
	VSMFS_STAT_commits_timer,
	VSMFS_STAT_commits_full,
	VSMFS_STAT_commits_syncfs,
	VSMFS_STAT_journal_bytes,
	VSMFS_STAT_home_bytes,
	VSMFS_STAT_journal_full_bytes,
	VSMFS_STAT_journal_delta_bytes,
	VSMFS_STAT_journal_header_bytes,
	VSMFS_STAT_journal_fc_bytes,
	VSMFS_STAT_journal_full_blocks,
	VSMFS_STAT_journal_home_blocks,
	VSMFS_STAT_journal_delta_blocks,
	VSMFS_STAT_journal_read_bytes,
	VSMFS_STAT_journal_absorbed,
	VSMFS_STAT_journal_wear_swaps,
	VSMFS_STAT_journal_gc_runs,
	VSMFS_STAT_journal_gc_reclaimed,
	VSMFS_STAT_journal_checkpoints,
	VSMFS_STAT_journal_checkpoint_blocks,
	VSMFS_STAT_journal_revoked,
	VSMFS_STAT_journal_lock_takes,
	VSMFS_STAT_journal_lock_waits,
	VSMFS_STAT_journal_lock_wait_ns,
	VSMFS_STAT_journal_lock_hold_ns,
	VSMFS_STAT_commit_ns,
	VSMFS_STAT_commit_excl_ns,
	VSMFS_STAT_journal_order_waits,
	VSMFS_STAT_journal_deferred_blocks,
	VSMFS_STAT_journal_frozen_copies,
	VSMFS_STAT_journal_drain_waits,
	VSMFS_STAT_journal_checkpoint_parallel,
	VSMFS_STAT_journal_pipelined,
	VSMFS_STAT_journal_place_waits,
	VSMFS_STAT_alloc_free_waits,
	VSMFS_STAT_alloc_pool_pages,
	VSMFS_STAT_alloc_pool_runs,
	VSMFS_STAT_alloc_pool_refills,
	VSMFS_STAT_alloc_pool_shared_vsp,
	VSMFS_STAT_alloc_pool_recycled,
	VSMFS_STAT_mf_events,
	VSMFS_STAT_mf_retired,
	VSMFS_STAT_aggregate_migrations,
	VSMFS_STAT_aggregate_window_growths,
	VSMFS_STAT_itable_home_blocks,
	VSMFS_STAT_itable_home_dirty,
	VSMFS_STAT_itable_home_clean,
	VSMFS_NR_STATS
};

/*
 * struct vsmfs_stats - one CPU's counters
 * @v: the counters, VSMFS_STAT_*
 * @hold_tick: holds of s_trans_mutex begun on this CPU (vsmfs_hold_start())
 */
struct vsmfs_stats {
	u64		v[VSMFS_NR_STATS];
	unsigned int	hold_tick;
};

struct vsmfs_sb_info;

int vsmfs_sysfs_init(void);
void vsmfs_sysfs_exit(void);
int vsmfs_sysfs_register(struct vsmfs_sb_info *sbi);
void vsmfs_sysfs_unregister(struct vsmfs_sb_info *sbi);

#endif /* _VSMFS_STATS_H */
