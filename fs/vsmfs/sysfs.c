// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs sysfs interface: /sys/fs/vsmfs/<device>/ holds one read-only file
 * per counter of stats.h, each printing one decimal number, a write-only
 * "reset" file: writing 1 sets every counter to zero, "journal_wear",
 * the wear histogram of the journal blocks, "aggregate_window", the
 * slots of the hot-inode window now, "atomic_write_max", the longest
 * write() that is atomic with the journal and cow= mode now, and "errors",
 * the error state recorded in the superblock (vsmfs_fs_error()).
 */
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/slab.h>
#include "vsmfs.h"
#include "journal.h"
#include "badframe.h"

struct vsmfs_attr {
	struct attribute	attr;
	int			stat;	/* enum vsmfs_stat, or -1 for reset */
};

static const char * const vsmfs_stat_names[VSMFS_NR_STATS] = {
	[VSMFS_STAT_data_user_bytes]	= "data_user_bytes",
	[VSMFS_STAT_data_merge_bytes]	= "data_merge_bytes",
	[VSMFS_STAT_data_cow_copy_bytes]	= "data_cow_copy_bytes",
	[VSMFS_STAT_data_inplace_bytes]	= "data_inplace_bytes",
	[VSMFS_STAT_write_bounces]	= "write_bounces",
	[VSMFS_STAT_write_staged]	= "write_staged",
	[VSMFS_STAT_write_staged_appends] = "write_staged_appends",
	[VSMFS_STAT_write_shared_appends] = "write_shared_appends",
	[VSMFS_STAT_mcow_writes]	= "mcow_writes",
	[VSMFS_STAT_mcow_fine]	= "mcow_fine",
	[VSMFS_STAT_mcow_coarse]	= "mcow_coarse",
	[VSMFS_STAT_pte_swaps]	= "pte_swaps",
	[VSMFS_STAT_tlb_shootdowns]	= "tlb_shootdowns",
	[VSMFS_STAT_zfdm_reclaims]	= "zfdm_reclaims",
	[VSMFS_STAT_zfdm_reclaimed_pages]	= "zfdm_reclaimed_pages",
	[VSMFS_STAT_zfdm_migrations]	= "zfdm_migrations",
	[VSMFS_STAT_zfdm_migrated_pages]	= "zfdm_migrated_pages",
	[VSMFS_STAT_holes_punched]	= "holes_punched",
	[VSMFS_STAT_holes_filled]	= "holes_filled",
	[VSMFS_STAT_frames_gathered]	= "frames_gathered",
	[VSMFS_STAT_fault_pte]	= "fault_pte",
	[VSMFS_STAT_fault_pmd]	= "fault_pmd",
	[VSMFS_STAT_fault_pmd_fallback]	= "fault_pmd_fallback",
	[VSMFS_STAT_fault_pud]		= "fault_pud",
	[VSMFS_STAT_fault_pud_fallback]	= "fault_pud_fallback",
	[VSMFS_STAT_pud_writebacks]	= "pud_writebacks",
	[VSMFS_STAT_inodes_created]	= "inodes_created",
	[VSMFS_STAT_trans_commits]	= "trans_commits",
	[VSMFS_STAT_trans_aborts]	= "trans_aborts",
	[VSMFS_STAT_trans_handles]	= "trans_handles",
	[VSMFS_STAT_trans_shared_handles] = "trans_shared_handles",
	[VSMFS_STAT_trans_shared_hold_ns] = "trans_shared_hold_ns",
	[VSMFS_STAT_trans_shared_meta] = "trans_shared_meta",
	[VSMFS_STAT_trans_share_reclaims] = "trans_share_reclaims",
	[VSMFS_STAT_trans_frees_grown] = "trans_frees_grown",
	[VSMFS_STAT_trans_frees_early] = "trans_frees_early",
	[VSMFS_STAT_trans_turns] = "trans_turns",
	[VSMFS_STAT_trans_turn_waits] = "trans_turn_waits",
	[VSMFS_STAT_trans_commit_overtaken] = "trans_commit_overtaken",
	[VSMFS_STAT_trans_commit_joined] = "trans_commit_joined",
	[VSMFS_STAT_trans_excl] = "trans_excl",
	[VSMFS_STAT_commits_sync]	= "commits_sync",
	[VSMFS_STAT_commits_fsync]	= "commits_fsync",
	[VSMFS_STAT_fc_records]		= "fc_records",
	[VSMFS_STAT_fc_fallbacks]	= "fc_fallbacks",
	[VSMFS_STAT_fc_fallback_excl]	= "fc_fallback_excl",
	[VSMFS_STAT_fc_fallback_op]	= "fc_fallback_op",
	[VSMFS_STAT_fc_fallback_frees]	= "fc_fallback_frees",
	[VSMFS_STAT_fc_fallback_create]	= "fc_fallback_create",
	[VSMFS_STAT_fc_fallback_runs]	= "fc_fallback_runs",
	[VSMFS_STAT_fc_fallback_dir]	= "fc_fallback_dir",
	[VSMFS_STAT_fc_fallback_busy]	= "fc_fallback_busy",
	[VSMFS_STAT_fc_fallback_commit]	= "fc_fallback_commit",
	[VSMFS_STAT_fc_fallback_moved]	= "fc_fallback_moved",
	[VSMFS_STAT_fc_fallback_full]	= "fc_fallback_full",
	[VSMFS_STAT_fc_waits]		= "fc_waits",
	[VSMFS_STAT_commits_timer]	= "commits_timer",
	[VSMFS_STAT_commits_full]	= "commits_full",
	[VSMFS_STAT_commits_syncfs]	= "commits_syncfs",
	[VSMFS_STAT_journal_bytes]	= "journal_bytes",
	[VSMFS_STAT_home_bytes]	= "home_bytes",
	[VSMFS_STAT_journal_full_bytes]	= "journal_full_bytes",
	[VSMFS_STAT_journal_delta_bytes]	= "journal_delta_bytes",
	[VSMFS_STAT_journal_header_bytes]	= "journal_header_bytes",
	[VSMFS_STAT_journal_fc_bytes]		= "journal_fc_bytes",
	[VSMFS_STAT_journal_full_blocks]	= "journal_full_blocks",
	[VSMFS_STAT_journal_home_blocks]	= "journal_home_blocks",
	[VSMFS_STAT_journal_delta_blocks]	= "journal_delta_blocks",
	[VSMFS_STAT_journal_read_bytes]	= "journal_read_bytes",
	[VSMFS_STAT_journal_absorbed]	= "journal_absorbed",
	[VSMFS_STAT_journal_wear_swaps]	= "journal_wear_swaps",
	[VSMFS_STAT_journal_gc_runs]	= "journal_gc_runs",
	[VSMFS_STAT_journal_gc_reclaimed]	= "journal_gc_reclaimed",
	[VSMFS_STAT_journal_checkpoints]	= "journal_checkpoints",
	[VSMFS_STAT_journal_checkpoint_blocks]	= "journal_checkpoint_blocks",
	[VSMFS_STAT_journal_revoked]	= "journal_revoked",
	[VSMFS_STAT_journal_lock_takes]	= "journal_lock_takes",
	[VSMFS_STAT_journal_lock_waits]	= "journal_lock_waits",
	[VSMFS_STAT_journal_lock_wait_ns] = "journal_lock_wait_ns",
	[VSMFS_STAT_journal_lock_hold_ns] = "journal_lock_hold_ns",
	[VSMFS_STAT_commit_ns] = "commit_ns",
	[VSMFS_STAT_commit_excl_ns] = "commit_excl_ns",
	[VSMFS_STAT_journal_order_waits] = "journal_order_waits",
	[VSMFS_STAT_journal_deferred_blocks] = "journal_deferred_blocks",
	[VSMFS_STAT_journal_frozen_copies] = "journal_frozen_copies",
	[VSMFS_STAT_journal_drain_waits] = "journal_drain_waits",
	[VSMFS_STAT_journal_checkpoint_parallel] = "journal_checkpoint_parallel",
	[VSMFS_STAT_journal_pipelined] = "journal_pipelined",
	[VSMFS_STAT_journal_place_waits] = "journal_place_waits",
	[VSMFS_STAT_alloc_free_waits] = "alloc_free_waits",
	[VSMFS_STAT_alloc_pool_pages] = "alloc_pool_pages",
	[VSMFS_STAT_alloc_pool_runs] = "alloc_pool_runs",
	[VSMFS_STAT_alloc_pool_refills] = "alloc_pool_refills",
	[VSMFS_STAT_alloc_pool_shared_vsp] = "alloc_pool_shared_vsp",
	[VSMFS_STAT_alloc_pool_recycled] = "alloc_pool_recycled",
	[VSMFS_STAT_mf_events]		= "mf_events",
	[VSMFS_STAT_mf_retired]		= "mf_retired",
	[VSMFS_STAT_aggregate_migrations]	= "aggregate_migrations",
	[VSMFS_STAT_aggregate_window_growths]	= "aggregate_window_growths",
	[VSMFS_STAT_itable_home_blocks]	= "itable_home_blocks",
	[VSMFS_STAT_itable_home_dirty]	= "itable_home_dirty",
	[VSMFS_STAT_itable_home_clean]	= "itable_home_clean",
};

/* One attribute per counter, filled in by vsmfs_sysfs_init(), and reset. */
static struct vsmfs_attr vsmfs_stat_attrs[VSMFS_NR_STATS];

static struct vsmfs_attr vsmfs_attr_reset = {
	.attr = { .name = "reset", .mode = 0200 },
	.stat = -1,
};

/* The wear histogram of the journal blocks, several lines (journal.c). */
static struct vsmfs_attr vsmfs_attr_journal_wear = {
	.attr = { .name = "journal_wear", .mode = 0444 },
	.stat = -2,
};

/* Slots in the hot-inode window (aggr.c). */
static struct vsmfs_attr vsmfs_attr_aggregate_window = {
	.attr = { .name = "aggregate_window", .mode = 0444 },
	.stat = -3,
};

/* Longest atomic write() with the journal and cow= mode now (cow.c). */
static struct vsmfs_attr vsmfs_attr_atomic_write_max = {
	.attr = { .name = "atomic_write_max", .mode = 0444 },
	.stat = -4,
};

/* The error state of the superblock, several lines (super.c). */
static struct vsmfs_attr vsmfs_attr_errors = {
	.attr = { .name = "errors", .mode = 0444 },
	.stat = -5,
};

/* The data frames found bad, one device block a line (badframe.c). */
static struct vsmfs_attr vsmfs_attr_bad_frames = {
	.attr = { .name = "bad_frames", .mode = 0444 },
	.stat = -6,
};

static struct attribute *vsmfs_sb_attrs[VSMFS_NR_STATS + 7];
ATTRIBUTE_GROUPS(vsmfs_sb);

/**
 * vsmfs_stat_read() - current value of a counter
 * @sbi: the file system
 * @stat: the counter
 *
 * Return: the sum over all CPUs.
 */
u64 vsmfs_stat_read(struct vsmfs_sb_info *sbi, enum vsmfs_stat stat)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sbi->s_stats, cpu)->v[stat];
	return sum;
}

static ssize_t vsmfs_attr_show(struct kobject *kobj, struct attribute *attr, char *buf)
{
	struct vsmfs_sb_info *sbi = container_of(kobj, struct vsmfs_sb_info, s_kobj);
	struct vsmfs_attr *a = container_of(attr, struct vsmfs_attr, attr);

	if (a == &vsmfs_attr_journal_wear)
		return vsmfs_journal_wear_show(sbi, buf);
	if (a == &vsmfs_attr_aggregate_window)
		return sysfs_emit(buf, "%llu\n", READ_ONCE(sbi->s_window));
	if (a == &vsmfs_attr_atomic_write_max)
		return sysfs_emit(buf, "%llu\n",
				  vsmfs_atomic_write_max(sbi, READ_ONCE(sbi->s_cow_mode)));
	if (a == &vsmfs_attr_errors)
		return vsmfs_errors_show(sbi, buf);
	if (a == &vsmfs_attr_bad_frames)
		return vsmfs_bad_show(sbi, buf);
	if (a->stat < 0)
		return -EPERM;
	return sysfs_emit(buf, "%llu\n", vsmfs_stat_read(sbi, a->stat));
}

/*
 * A reset races with concurrent increments on other CPUs: an increment
 * made during the reset may survive it. Quiesce the file system first when
 * exact counts matter.
 */
static ssize_t vsmfs_attr_store(struct kobject *kobj, struct attribute *attr,
				const char *buf, size_t len)
{
	struct vsmfs_sb_info *sbi = container_of(kobj, struct vsmfs_sb_info, s_kobj);
	struct vsmfs_attr *a = container_of(attr, struct vsmfs_attr, attr);
	unsigned int v;
	int cpu, ret;

	if (a != &vsmfs_attr_reset)
		return -EPERM;
	ret = kstrtouint(buf, 0, &v);
	if (ret)
		return ret;
	if (v != 1)
		return -EINVAL;
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(sbi->s_stats, cpu), 0, sizeof(struct vsmfs_stats));
	return len;
}

static const struct sysfs_ops vsmfs_attr_ops = {
	.show	= vsmfs_attr_show,
	.store	= vsmfs_attr_store,
};

static void vsmfs_sb_release(struct kobject *kobj)
{
	struct vsmfs_sb_info *sbi = container_of(kobj, struct vsmfs_sb_info, s_kobj);

	complete(&sbi->s_kobj_unregister);
}

static struct kobj_type vsmfs_sb_ktype = {
	.default_groups	= vsmfs_sb_groups,
	.sysfs_ops	= &vsmfs_attr_ops,
	.release	= vsmfs_sb_release,
};

static struct kobj_type vsmfs_root_ktype = {
	.sysfs_ops	= &vsmfs_attr_ops,
};

static struct kset vsmfs_root = {
	.kobj	= { .ktype = &vsmfs_root_ktype },
};

/**
 * vsmfs_sysfs_register() - create /sys/fs/vsmfs/<device>/
 * @sbi: the file system; s_stats allocated
 *
 * Context: mount.
 * Return: 0 or a negative errno.
 */
int vsmfs_sysfs_register(struct vsmfs_sb_info *sbi)
{
	int ret;

	sbi->s_kobj.kset = &vsmfs_root;
	init_completion(&sbi->s_kobj_unregister);
	ret = kobject_init_and_add(&sbi->s_kobj, &vsmfs_sb_ktype, NULL, "%s",
				   sbi->s_sb->s_id);
	if (ret) {
		kobject_put(&sbi->s_kobj);
		wait_for_completion(&sbi->s_kobj_unregister);
	}
	return ret;
}

/**
 * vsmfs_sysfs_unregister() - remove /sys/fs/vsmfs/<device>/
 * @sbi: the file system
 *
 * Context: unmount or failed mount; waits until no reader holds the files.
 */
void vsmfs_sysfs_unregister(struct vsmfs_sb_info *sbi)
{
	if (!sbi->s_kobj.state_in_sysfs)
		return;
	kobject_del(&sbi->s_kobj);
	kobject_put(&sbi->s_kobj);
	wait_for_completion(&sbi->s_kobj_unregister);
}

/**
 * vsmfs_sysfs_init() - create /sys/fs/vsmfs
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int __init vsmfs_sysfs_init(void)
{
	int i;

	for (i = 0; i < VSMFS_NR_STATS; i++) {
		vsmfs_stat_attrs[i].attr.name = vsmfs_stat_names[i];
		vsmfs_stat_attrs[i].attr.mode = 0444;
		vsmfs_stat_attrs[i].stat = i;
		vsmfs_sb_attrs[i] = &vsmfs_stat_attrs[i].attr;
	}
	vsmfs_sb_attrs[VSMFS_NR_STATS] = &vsmfs_attr_reset.attr;
	vsmfs_sb_attrs[VSMFS_NR_STATS + 1] = &vsmfs_attr_journal_wear.attr;
	vsmfs_sb_attrs[VSMFS_NR_STATS + 2] = &vsmfs_attr_aggregate_window.attr;
	vsmfs_sb_attrs[VSMFS_NR_STATS + 3] = &vsmfs_attr_atomic_write_max.attr;
	vsmfs_sb_attrs[VSMFS_NR_STATS + 4] = &vsmfs_attr_errors.attr;
	vsmfs_sb_attrs[VSMFS_NR_STATS + 5] = &vsmfs_attr_bad_frames.attr;
	kobject_set_name(&vsmfs_root.kobj, "vsmfs");
	vsmfs_root.kobj.parent = fs_kobj;
	return kset_register(&vsmfs_root);
}

/**
 * vsmfs_sysfs_exit() - remove /sys/fs/vsmfs
 *
 * Context: module exit.
 */
void vsmfs_sysfs_exit(void)
{
	kset_unregister(&vsmfs_root);
}
