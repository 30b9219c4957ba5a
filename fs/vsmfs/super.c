// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs super block operations: mount through fs_context, superblock
 * verification and update, statfs, remount, unmount, and module init.
 *
 * Mount maps the whole pmem device once with dax_direct_access() and keeps
 * the kernel address; all metadata is reached through vsmfs_blk_ptr().
 */
#include <linux/module.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/blkdev.h>
#include <linux/statfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/pfn_t.h>
#include <linux/bitmap.h>
#include <linux/debugfs.h>
#include <linux/exportfs.h>
#include "vsmfs.h"
#include "mcache.h"
#include "vsp.h"
#include "journal.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "pmem.h"
#include "fault.h"
#include "badframe.h"
#include "mfail.h"

static struct kmem_cache *vsmfs_inode_cachep;
/* What an aborted handle asks of the inodes (vsmfs.h, trans.c). */
static const struct vsmfs_trans_iops vsmfs_trans_iops = {
	.reload		= vsmfs_inode_reload,
	.discard_new	= vsmfs_discard_new_inode,
	.dir_index_free	= vsmfs_dir_index_free,
};

/* /sys/kernel/debug/vsmfs: the test aids of fault.c and pmlog.c, if built. */
static struct dentry *vsmfs_debugfs;

/*
 * errors=remount-ro, after the file system was made read-only: stop the
 * checkpoint timer and the aggregation worker, which write PM without a
 * writer of their own. Not done by vsmfs_fs_error() itself, which may run
 * inside a transaction these workers wait for.
 */
static void vsmfs_error_work(struct work_struct *work)
{
	struct vsmfs_sb_info *sbi = container_of(work, struct vsmfs_sb_info, s_error_work);

	/*
	 * The running transaction can no longer be committed: drop it now,
	 * so that every file it changed reports the loss at its next fsync
	 * (vsmfs_trans_commit_all()), not only after the commit timer.
	 */
	vsmfs_trans_sync(sbi, VSMFS_COMMIT_SYNC);
	vsmfs_journal_timer_stop(sbi);
	vsmfs_aggr_stop(sbi);
}

/*
 * Free the orphan inodes on PM (vsmfs_orphan_cleanup()). A failure is
 * reported and noted in s_orphans_left, as is an eviction that failed on
 * the way: the file system then stays marked in use. Return: true if no
 * orphan is left.
 */
static bool vsmfs_free_orphans(struct vsmfs_sb_info *sbi)
{
	int ret;

	WRITE_ONCE(sbi->s_orphans_left, false);
	/* It reads the inode table on PM: keep it current. */
	vsmfs_journal_set_writethrough(sbi, true);
	ret = vsmfs_orphan_cleanup(sbi->s_sb);
	vsmfs_journal_set_writethrough(sbi, false);
	if (ret) {
		vsmfs_err(sbi->s_sb, "freeing orphan inodes failed: %d", ret);
		WRITE_ONCE(sbi->s_orphans_left, true);
	}
	return !READ_ONCE(sbi->s_orphans_left);
}

/*
 * Unmount: inodes were evicted after the last sync, so the journal is
 * checkpointed once more; home blocks are current before the superblock
 * says clean.
 */
static void vsmfs_put_super(struct super_block *sb)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);

	vsmfs_journal_timer_stop(sbi);
	if (sb_rdonly(sb))
		return;
	/*
	 * Inodes whose freeing failed at eviction (no memory) are orphans
	 * on PM: free them now, or leave the file system marked in use so
	 * that the next mount does.
	 */
	if (READ_ONCE(sbi->s_orphans_left) && !vsmfs_free_orphans(sbi)) {
		vsmfs_journal_checkpoint(sbi);
		vsmfs_warn(sb, "orphan inodes left for the next mount to free");
		return;
	}
	vsmfs_journal_checkpoint(sbi);
	vsmfs_set_clean(sbi, true);
}

/*
 * sync(2), syncfs(2), remount and unmount: every home block up to date.
 * A commit that failed (the file system stopped writing) is reported.
 */
static int vsmfs_sync_fs(struct super_block *sb, int wait)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);
	int err;

	if (!wait || sb_rdonly(sb))
		return 0;
	err = vsmfs_trans_sync(sbi, VSMFS_COMMIT_SYNCFS);
	vsmfs_journal_checkpoint(sbi);
	return err;
}

static int vsmfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct super_block *sb = dentry->d_sb;
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);
	struct vsmfs_layout *l = &sbi->s_layout;
	u64 id = huge_encode_dev(sb->s_bdev->bd_dev), free;
	unsigned int tries;

	buf->f_type = VSMFS_MAGIC;
	buf->f_bsize = VSMFS_BLOCK_SIZE;
	buf->f_frsize = VSMFS_BLOCK_SIZE;
	buf->f_blocks = l->data_pages - 1;
	/*
	 * Pages waiting for the commit of the running transaction, and those
	 * the CPUs' pools keep, are free. Read without s_trans_mutex, so
	 * that df neither waits for a commit nor holds off handles. Pages
	 * move between the free count and the other two in steps that change
	 * the free count (a commit's frees, a pool's refill): the sum is read
	 * again while that count changed under it (a few times at most). It
	 * is exact when nothing runs, and otherwise off by what moves while
	 * it is read (a CPU's share handing its runs to the running
	 * transaction, say), as any count of a busy file system is.
	 */
	for (tries = 0; tries < 4; tries++) {
		free = READ_ONCE(sbi->s_free_pages);
		buf->f_bfree = free + vsmfs_trans_waiting_pages(sbi) + vsmfs_pool_count(sbi);
		/* The counts above before the free count again. */
		smp_rmb();
		if (READ_ONCE(sbi->s_free_pages) == free)
			break;
	}
	buf->f_ffree = percpu_counter_sum_positive(&sbi->s_free_inodes);
	buf->f_bavail = buf->f_bfree;
	buf->f_files = l->inodes - 1;
	buf->f_namelen = VSMFS_NAME_LEN;
	buf->f_fsid = u64_to_fsid(id);
	return 0;
}

static const char * const vsmfs_data_names[] = {
	[VSMFS_DATA_ATOMIC]	= "atomic",
	[VSMFS_DATA_INPLACE]	= "inplace",
};

static const char * const vsmfs_cow_names[] = {
	[VSMFS_COW_MULTI]	= "multi",
	[VSMFS_COW_PAGE]	= "page",
	[VSMFS_COW_SUPERPAGE]	= "superpage",
};

static const char * const vsmfs_tlb_names[] = {
	[VSMFS_TLB_LAZY]	= "lazy",
	[VSMFS_TLB_EAGER]	= "eager",
};

static int vsmfs_show_options(struct seq_file *seq, struct dentry *root)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(root->d_sb);
	struct vsmfs_jopts o;

	/* DAX is the only data path, so it is always on. */
	seq_puts(seq, ",dax=always");
	/* What an error does is always shown, as the data path. */
	seq_printf(seq, ",errors=%s", vsmfs_errors_names[READ_ONCE(sbi->s_errors)]);
	/* The data path is always shown: it decides what a crash can do. */
	seq_printf(seq, ",data=%s", vsmfs_data_names[sbi->s_data_mode]);
	if (sbi->s_data_mode == VSMFS_DATA_ATOMIC)
		seq_printf(seq, ",cow=%s", vsmfs_cow_names[sbi->s_cow_mode]);
	if (sbi->s_tlb_mode != VSMFS_TLB_LAZY)
		seq_printf(seq, ",tlb=%s", vsmfs_tlb_names[sbi->s_tlb_mode]);
	if (READ_ONCE(sbi->s_huge_pud))
		seq_puts(seq, ",huge=1g");
	/* acl and user_xattr are the defaults. */
	if (!(root->d_sb->s_flags & SB_POSIXACL))
		seq_puts(seq, ",noacl");
	/* Changed only by remount: a racing read shows old or new values. */
	o = sbi->s_jopts;
	/* Journal options are shown when they are not the default. */
	if (!o.delta)
		seq_puts(seq, ",journal_delta=off");
	if (!o.wear)
		seq_puts(seq, ",journal_wear=off");
	if (!o.gc)
		seq_puts(seq, ",journal_gc=off");
	if (!o.commit_secs)
		seq_puts(seq, ",commit=sync");
	else if (o.commit_secs != VSMFS_COMMIT_SECS_DEFAULT)
		seq_printf(seq, ",commit=%u", o.commit_secs);
	if (o.checkpoint_secs != VSMFS_CHECKPOINT_SECS_DEFAULT)
		seq_printf(seq, ",checkpoint=%u", o.checkpoint_secs);
	if (o.threshold != VSMFS_CHECKPOINT_THRESHOLD_DEFAULT)
		seq_printf(seq, ",checkpoint_threshold=%u", o.threshold);
	if (!o.parallel)
		seq_puts(seq, ",journal_commit=serial");
	if (!o.fast)
		seq_puts(seq, ",fast_commit=off");
	/* The default follows the CPUs online at mount. */
	if (o.threads_given)
		seq_printf(seq, ",checkpoint_threads=%u", o.threads);
	/* So are the aggregation options. */
	if (!READ_ONCE(sbi->s_aopts.on))
		seq_puts(seq, ",aggregate=off");
	if (sbi->s_aopts.threshold != VSMFS_AGGR_THRESHOLD_DEFAULT)
		seq_printf(seq, ",aggregate_threshold=%u", sbi->s_aopts.threshold);
	if (sbi->s_aopts.window != VSMFS_AGGR_WINDOW_DEFAULT)
		seq_printf(seq, ",aggregate_window=%u", sbi->s_aopts.window);
	return 0;
}

/*
 * The operations of each kind of inode, and the hook of eviction, that the
 * inode layer takes from the layers above it (struct vsmfs_inode_ops).
 */
static const struct vsmfs_inode_ops vsmfs_iops = {
	.file_iops		= &vsmfs_file_inode_operations,
	.file_fops		= &vsmfs_file_operations,
	.file_aops		= &vsmfs_dax_aops,
	.dir_iops		= &vsmfs_dir_inode_operations,
	.dir_fops		= &vsmfs_dir_operations,
	.symlink_iops		= &vsmfs_symlink_inode_operations,
	.fast_symlink_iops	= &vsmfs_fast_symlink_inode_operations,
	.special_iops		= &vsmfs_special_inode_operations,
	.evict			= vsmfs_dir_index_free,
};

static const struct super_operations vsmfs_sops = {
	.alloc_inode	= vsmfs_alloc_inode,
	.evict_inode	= vsmfs_evict_inode,
	.write_inode	= vsmfs_write_inode,
	.free_inode	= vsmfs_free_inode,
	.put_super	= vsmfs_put_super,
	.sync_fs	= vsmfs_sync_fs,
	.statfs		= vsmfs_statfs,
	.show_options	= vsmfs_show_options,
};

/*
 * struct vsmfs_fs_context - mount options given, applied by fill_super
 * (new mount) or reconfigure (remount)
 */
struct vsmfs_fs_context {
	bool	acl_set;	/* acl or noacl given */
	bool	acl;		/* acl given last */
	int	data_mode;	/* VSMFS_DATA_*, or -1 if not given */
	int	cow_mode;	/* VSMFS_COW_*, or -1 if not given */
	int	tlb_mode;	/* VSMFS_TLB_*, or -1 if not given */
	int	huge;		/* 1: huge=1g, 0: huge=2m, -1: not given */
	int	errors;		/* VSMFS_ERRORS_*, or -1 if not given */
	unsigned int		jset;	/* VSMFS_JOPT_* given */
	struct vsmfs_jopts	jopts;	/* their values */
	unsigned int		aset;	/* VSMFS_AOPT_* given */
	struct vsmfs_aopts	aopts;	/* their values */
};

#define VSMFS_AOPT_ON		0x01
#define VSMFS_AOPT_THRESHOLD	0x02
#define VSMFS_AOPT_WINDOW	0x04

#define VSMFS_JOPT_DELTA	0x01
#define VSMFS_JOPT_WEAR		0x02
#define VSMFS_JOPT_GC		0x04
#define VSMFS_JOPT_CKPT		0x08
#define VSMFS_JOPT_THRESHOLD	0x10
#define VSMFS_JOPT_COMMIT	0x20
#define VSMFS_JOPT_THREADS	0x40
#define VSMFS_JOPT_INTERVAL	0x80
#define VSMFS_JOPT_FAST		0x100

enum { OPT_DAX, OPT_DAX_TYPE, OPT_ACL, OPT_USER_XATTR, OPT_DATA, OPT_COW, OPT_TLB,
	OPT_JDELTA, OPT_JWEAR, OPT_JGC, OPT_CHECKPOINT, OPT_THRESHOLD, OPT_AGGR,
	OPT_AGGR_THRESHOLD, OPT_AGGR_WINDOW, OPT_JCOMMIT, OPT_CKPT_THREADS, OPT_ERRORS,
	OPT_COMMIT, OPT_HUGE, OPT_FAST };

static const struct constant_table vsmfs_param_errors[] = {
	{ "continue",	VSMFS_ERRORS_CONTINUE },
	{ "remount-ro",	VSMFS_ERRORS_RO },
	{ "panic",	VSMFS_ERRORS_PANIC },
	{}
};

static const struct constant_table vsmfs_param_commit[] = {
	{ "parallel",	1 },
	{ "serial",	0 },
	{}
};

static const struct constant_table vsmfs_param_onoff[] = {
	{ "on",		1 },
	{ "off",	0 },
	{}
};

static const struct constant_table vsmfs_param_data[] = {
	{ "atomic",	VSMFS_DATA_ATOMIC },
	{ "inplace",	VSMFS_DATA_INPLACE },
	{}
};

static const struct constant_table vsmfs_param_cow[] = {
	{ "multi",	VSMFS_COW_MULTI },
	{ "page",	VSMFS_COW_PAGE },
	{ "superpage",	VSMFS_COW_SUPERPAGE },
	{}
};

static const struct constant_table vsmfs_param_tlb[] = {
	{ "lazy",	VSMFS_TLB_LAZY },
	{ "eager",	VSMFS_TLB_EAGER },
	{}
};

/* The largest page a fault maps, and with 1g placement for it. */
static const struct constant_table vsmfs_param_huge[] = {
	{ "2m",	0 },
	{ "1g",	1 },
	{}
};

static const struct constant_table vsmfs_param_dax[] = {
	{ "always",	1 },
	{ "never",	0 },
	{ "inode",	0 },
	{}
};

static const struct fs_parameter_spec vsmfs_fs_parameters[] = {
	fsparam_flag("dax",		OPT_DAX),
	fsparam_enum("dax",		OPT_DAX_TYPE, vsmfs_param_dax),
	fsparam_flag_no("acl",		OPT_ACL),
	fsparam_flag("user_xattr",	OPT_USER_XATTR),
	fsparam_enum("data",		OPT_DATA, vsmfs_param_data),
	fsparam_enum("cow",		OPT_COW, vsmfs_param_cow),
	fsparam_enum("tlb",		OPT_TLB, vsmfs_param_tlb),
	fsparam_enum("huge",		OPT_HUGE, vsmfs_param_huge),
	fsparam_enum("journal_delta",	OPT_JDELTA, vsmfs_param_onoff),
	fsparam_enum("journal_wear",	OPT_JWEAR, vsmfs_param_onoff),
	fsparam_enum("journal_gc",	OPT_JGC, vsmfs_param_onoff),
	fsparam_u32("checkpoint",	OPT_CHECKPOINT),
	fsparam_u32("checkpoint_threshold", OPT_THRESHOLD),
	fsparam_enum("aggregate",	OPT_AGGR, vsmfs_param_onoff),
	fsparam_u32("aggregate_threshold", OPT_AGGR_THRESHOLD),
	fsparam_u32("aggregate_window",	OPT_AGGR_WINDOW),
	fsparam_enum("journal_commit",	OPT_JCOMMIT, vsmfs_param_commit),
	fsparam_enum("fast_commit",	OPT_FAST, vsmfs_param_onoff),
	fsparam_u32("checkpoint_threads", OPT_CKPT_THREADS),
	fsparam_enum("errors",		OPT_ERRORS, vsmfs_param_errors),
	fsparam_string("commit",	OPT_COMMIT),
	{}
};

static int vsmfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct vsmfs_fs_context *ctx = fc->fs_private;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fc, vsmfs_fs_parameters, param, &result);
	if (opt < 0)
		return opt;

	switch (opt) {
	case OPT_DAX:
		break;
	case OPT_DAX_TYPE:
		if (!result.uint_32)
			return invalfc(fc, "dax=%s not supported: vsmfs always uses DAX",
				       param->string);
		break;
	case OPT_ACL:
		if (!IS_ENABLED(CONFIG_FS_POSIX_ACL) && !result.negated)
			return invalfc(fc, "acl not supported: kernel built without POSIX ACLs");
		ctx->acl_set = true;
		ctx->acl = !result.negated;
		break;
	case OPT_USER_XATTR:
		/* user. attributes are always on. */
		break;
	case OPT_DATA:
		ctx->data_mode = result.uint_32;
		break;
	case OPT_COW:
		ctx->cow_mode = result.uint_32;
		break;
	case OPT_TLB:
		ctx->tlb_mode = result.uint_32;
		break;
	case OPT_HUGE:
		ctx->huge = result.uint_32;
		break;
	case OPT_ERRORS:
		ctx->errors = result.uint_32;
		break;
	case OPT_JDELTA:
		ctx->jset |= VSMFS_JOPT_DELTA;
		ctx->jopts.delta = result.uint_32;
		break;
	case OPT_JWEAR:
		ctx->jset |= VSMFS_JOPT_WEAR;
		ctx->jopts.wear = result.uint_32;
		break;
	case OPT_JGC:
		ctx->jset |= VSMFS_JOPT_GC;
		ctx->jopts.gc = result.uint_32;
		break;
	case OPT_CHECKPOINT:
		/* 0 turns the timer off; at most a day. */
		if (result.uint_32 > 86400)
			return invalfc(fc, "checkpoint=%u: at most 86400 seconds", result.uint_32);
		ctx->jset |= VSMFS_JOPT_CKPT;
		ctx->jopts.checkpoint_secs = result.uint_32;
		break;
	case OPT_THRESHOLD:
		if (result.uint_32 < 1 || result.uint_32 > 100)
			return invalfc(fc, "checkpoint_threshold=%u: a percentage from 1 to 100",
				       result.uint_32);
		ctx->jset |= VSMFS_JOPT_THRESHOLD;
		ctx->jopts.threshold = result.uint_32;
		break;
	case OPT_JCOMMIT:
		ctx->jset |= VSMFS_JOPT_COMMIT;
		ctx->jopts.parallel = result.uint_32;
		break;
	case OPT_FAST:
		ctx->jset |= VSMFS_JOPT_FAST;
		ctx->jopts.fast = result.uint_32;
		break;
	case OPT_COMMIT: {
		unsigned int secs;

		/* commit=0 is the default, as ext4 has it. */
		if (!strcmp(param->string, "sync"))
			secs = 0;
		else if (kstrtouint(param->string, 10, &secs) || secs > VSMFS_COMMIT_SECS_MAX)
			return invalfc(fc, "commit=%s: sync, or seconds from 0 to %u",
				       param->string, VSMFS_COMMIT_SECS_MAX);
		else if (!secs)
			secs = VSMFS_COMMIT_SECS_DEFAULT;
		ctx->jset |= VSMFS_JOPT_INTERVAL;
		ctx->jopts.commit_secs = secs;
		break;
	}
	case OPT_CKPT_THREADS:
		if (result.uint_32 < 1 || result.uint_32 > VSMFS_CHECKPOINT_THREADS_MAX)
			return invalfc(fc, "checkpoint_threads=%u: from 1 to %u threads",
				       result.uint_32, VSMFS_CHECKPOINT_THREADS_MAX);
		ctx->jset |= VSMFS_JOPT_THREADS;
		ctx->jopts.threads = result.uint_32;
		break;
	case OPT_AGGR:
		ctx->aset |= VSMFS_AOPT_ON;
		ctx->aopts.on = result.uint_32;
		break;
	case OPT_AGGR_THRESHOLD:
		if (result.uint_32 < 1 || result.uint_32 > 1000000)
			return invalfc(fc, "aggregate_threshold=%u: from 1 to 1000000 writes",
				       result.uint_32);
		ctx->aset |= VSMFS_AOPT_THRESHOLD;
		ctx->aopts.threshold = result.uint_32;
		break;
	case OPT_AGGR_WINDOW:
		if (result.uint_32 < VSMFS_INODES_PER_BLOCK ||
		    result.uint_32 % VSMFS_INODES_PER_BLOCK)
			return invalfc(fc, "aggregate_window=%u: a multiple of %u inodes",
				       result.uint_32, VSMFS_INODES_PER_BLOCK);
		ctx->aset |= VSMFS_AOPT_WINDOW;
		ctx->aopts.window = result.uint_32;
		break;
	}
	return 0;
}

/*
 * Apply the journal options given in @ctx; the checkpoint threads only at
 * mount. Context: s_trans_mutex and s_jplace_mutex held, or mount.
 */
static void vsmfs_apply_jopts(struct vsmfs_jopts *o, const struct vsmfs_fs_context *ctx,
			      bool mount)
{
	if (ctx->jset & VSMFS_JOPT_DELTA)
		o->delta = ctx->jopts.delta;
	if (ctx->jset & VSMFS_JOPT_WEAR)
		o->wear = ctx->jopts.wear;
	if (ctx->jset & VSMFS_JOPT_GC)
		o->gc = ctx->jopts.gc;
	if (ctx->jset & VSMFS_JOPT_CKPT)
		o->checkpoint_secs = ctx->jopts.checkpoint_secs;
	if (ctx->jset & VSMFS_JOPT_THRESHOLD)
		o->threshold = ctx->jopts.threshold;
	if (ctx->jset & VSMFS_JOPT_COMMIT)
		o->parallel = ctx->jopts.parallel;
	if (ctx->jset & VSMFS_JOPT_FAST)
		WRITE_ONCE(o->fast, ctx->jopts.fast);
	if (ctx->jset & VSMFS_JOPT_INTERVAL)
		o->commit_secs = ctx->jopts.commit_secs;
	if (mount && (ctx->jset & VSMFS_JOPT_THREADS)) {
		o->threads = ctx->jopts.threads;
		o->threads_given = true;
	}
}

/* Apply the aggregation options given in @ctx; the window only at mount. */
static void vsmfs_apply_aopts(struct vsmfs_aopts *o, const struct vsmfs_fs_context *ctx,
			      bool mount)
{
	if (ctx->aset & VSMFS_AOPT_ON)
		WRITE_ONCE(o->on, ctx->aopts.on);
	if (ctx->aset & VSMFS_AOPT_THRESHOLD)
		WRITE_ONCE(o->threshold, ctx->aopts.threshold);
	if (mount && (ctx->aset & VSMFS_AOPT_WINDOW))
		o->window = ctx->aopts.window;
}

/*
 * Data path options of a mount or remount. cow= is kept with data=inplace
 * and applies once data=atomic is chosen: mount(8) passes the options of
 * the mount being changed along with new ones on a remount.
 */
static void vsmfs_apply_data_opts(const struct vsmfs_fs_context *ctx,
				  struct vsmfs_sb_info *sbi)
{
	if (ctx->data_mode >= 0)
		sbi->s_data_mode = ctx->data_mode;
	if (ctx->cow_mode >= 0)
		sbi->s_cow_mode = ctx->cow_mode;
	if (ctx->tlb_mode >= 0)
		WRITE_ONCE(sbi->s_tlb_mode, ctx->tlb_mode);
	if (ctx->huge >= 0)
		WRITE_ONCE(sbi->s_huge_pud, ctx->huge);
	if (ctx->errors >= 0)
		WRITE_ONCE(sbi->s_errors, ctx->errors);
}

static void vsmfs_fs_context_init(struct vsmfs_fs_context *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->data_mode = -1;
	ctx->cow_mode = -1;
	ctx->tlb_mode = -1;
	ctx->huge = -1;
	ctx->errors = -1;
}

/*
 * The default mount options stored in the superblock (vsmfs-admin -o),
 * parsed into @defs by the parser of the options the user gives. The
 * parser reads its context from fc->fs_private, which points to @defs
 * meanwhile. An option the parser rejects fails the mount: the
 * administrator asked for it and it cannot be honoured.
 */
static int vsmfs_parse_stored_opts(struct fs_context *fc, struct super_block *sb,
				   struct vsmfs_fs_context *defs)
{
	const struct vsmfs_dsb *dsb = VSMFS_SB(sb)->s_dsb;
	void *user = fc->fs_private;
	char *buf, *p, *key;
	const char *why;
	int ret = 0;

	vsmfs_fs_context_init(defs);
	why = vsmfs_sb_mount_opts_check(dsb);
	if (why) {
		vsmfs_err(sb, "superblock: %s; change them with vsmfs-admin -o", why);
		return -EINVAL;
	}
	if (!(le32_to_cpu(dsb->s_feature_compat) & VSMFS_FEATURE_COMPAT_MOUNT_OPTS))
		return 0;
	buf = kmemdup_nul(dsb->s_mount_opts, VSMFS_MOUNT_OPTS_LEN, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	fc->fs_private = defs;
	p = buf;
	while ((key = strsep(&p, ",")) != NULL) {
		struct fs_parameter param = { .key = key, .type = fs_value_is_flag };
		char *value = strchr(key, '=');

		if (!*key)
			continue;
		if (value) {
			*value++ = '\0';
			param.type = fs_value_is_string;
			param.string = value;
			param.size = strlen(value);
		}
		ret = vsmfs_parse_param(fc, &param);
		if (ret) {
			vsmfs_err(sb, "invalid default mount option '%s%s%s' in the superblock (\"%s\"): mount refused; change them with vsmfs-admin -o",
				  key, value ? "=" : "", value ?: "", dsb->s_mount_opts);
			ret = ret == -ENOMEM ? ret : -EINVAL;
			break;
		}
	}
	fc->fs_private = user;
	kfree(buf);
	return ret;
}

/*
 * Find a valid superblock and copy it to DRAM: the primary, or the backup
 * if the primary fails its checksum (a torn superblock update). The backup
 * is looked for where the file systems mkfs makes keep it, the last block
 * of the device, then in block 1, where older ones keep it
 * (vsmfs_sb_backup_guess()); it must name its own place. A primary without
 * the vsmfs magic means the device holds no vsmfs, and no backup is
 * consulted: fsck.vsmfs restores such a primary from the backup.
 */
static int vsmfs_load_super(struct super_block *sb, struct vsmfs_sb_info *sbi)
{
	struct vsmfs_dsb __pm *dsb = vsmfs_blk_ptr(sbi, VSMFS_SB_BLOCK);
	struct vsmfs_dsb __pm *backup = NULL;
	const char *why, *bwhy = NULL;
	bool restore = false;
	u64 blk = 0;
	int i;

	why = vsmfs_sb_check(vsmfs_pm_view(dsb), sbi->s_dev_blocks);
	if (!why)
		goto found;
	if (le32_to_cpu(vsmfs_pm_read(&dsb->s_magic)) != VSMFS_MAGIC) {
		vsmfs_err(sb, "no vsmfs file system found: %s", why);
		return -EINVAL;
	}
	for (i = 0; i < 2; i++) {
		const char *w;

		blk = vsmfs_sb_backup_guess(sbi->s_dev_blocks, i);
		backup = vsmfs_blk_ptr(sbi, blk);
		w = vsmfs_sb_backup_check(vsmfs_pm_view(backup), blk, sbi->s_dev_blocks);
		if (!w)
			break;
		/* Report the copy that looks like a superblock at all. */
		if (!bwhy || le32_to_cpu(vsmfs_pm_read(&backup->s_magic)) == VSMFS_MAGIC)
			bwhy = w;
		backup = NULL;
	}
	if (!backup) {
		vsmfs_err(sb, "invalid superblock: %s; backup: %s", why, bwhy);
		return -EINVAL;
	}
	if (le32_to_cpu(vsmfs_pm_read(&dsb->s_checksum)) == vsmfs_sb_csum(vsmfs_pm_view(dsb))) {
		/* The primary is intact but wrong: no torn write explains it. */
		vsmfs_err(sb, "invalid superblock: %s", why);
		return -EINVAL;
	}
	vsmfs_warn(sb, "primary superblock damaged (%s), using the backup (block %llu)", why,
		   blk);
	dsb = backup;
	restore = !sb_rdonly(sb);
found:
	vsmfs_pm_load(&sbi->s_dsb_mem, dsb, sizeof(sbi->s_dsb_mem));
	sbi->s_dsb = &sbi->s_dsb_mem;
	vsmfs_layout_of_sb(&sbi->s_layout, sbi->s_dsb);
	if (restore) {
		spin_lock(&sbi->s_sb_lock);
		vsmfs_write_super_locked(sbi);
		spin_unlock(&sbi->s_sb_lock);
	}
	if (le32_to_cpu(sbi->s_dsb->s_feature_ro_compat) & ~VSMFS_FEATURE_RO_COMPAT_SUPP &&
	    !sb_rdonly(sb)) {
		vsmfs_err(sb, "unknown read-only compatible features: mount read-only");
		return -EINVAL;
	}
	return 0;
}

/* Say so at mount when errors were found before and fsck has not run since. */
static void vsmfs_warn_errors(struct super_block *sb, const struct vsmfs_dsb *dsb)
{
	if (!(le32_to_cpu(dsb->s_state) & VSMFS_STATE_ERROR))
		return;
	vsmfs_warn(sb, "file system has errors: %u found since the last check, first at %llu in %.*s:%u (inode %llu), last at %llu in %.*s:%u (inode %llu); run fsck.vsmfs",
		   le32_to_cpu(dsb->s_error_count), le64_to_cpu(dsb->s_first_error_time),
		   VSMFS_ERROR_FUNC_LEN, dsb->s_first_error_func,
		   le32_to_cpu(dsb->s_first_error_line), le64_to_cpu(dsb->s_first_error_ino),
		   le64_to_cpu(dsb->s_last_error_time),
		   VSMFS_ERROR_FUNC_LEN, dsb->s_last_error_func,
		   le32_to_cpu(dsb->s_last_error_line), le64_to_cpu(dsb->s_last_error_ino));
}

/* Map the whole device. The mapping lives as long as the mount. */
/*
 * Map a device that has bad blocks: with DAX_RECOVERY_WRITE the driver
 * maps up to the first of them, and a device whose mapping is linear (the
 * last page where the first says) is then mapped whole.
 * Context: dax_read_lock() held. Return: @nr, or -EIO.
 */
static long vsmfs_map_bad_device(struct vsmfs_sb_info *sbi, long nr, void **kaddr,
				 pfn_t *pfn)
{
	pgoff_t first = sbi->s_dax_part_off >> PAGE_SHIFT;
	void *last_addr;
	pfn_t last_pfn;

	if (dax_direct_access(sbi->s_daxdev, first, 1, DAX_RECOVERY_WRITE, kaddr, pfn) < 1 ||
	    dax_direct_access(sbi->s_daxdev, first + nr - 1, 1, DAX_RECOVERY_WRITE,
			      &last_addr, &last_pfn) < 1)
		return -EIO;
	if (last_addr != *kaddr + (nr - 1) * PAGE_SIZE ||
	    pfn_t_to_pfn(last_pfn) != pfn_t_to_pfn(*pfn) + nr - 1)
		return -EIO;
	vsmfs_warn(sbi->s_sb, "the device has bad blocks");
	return nr;
}

static int vsmfs_map_device(struct super_block *sb, struct vsmfs_sb_info *sbi)
{
	u64 bytes = bdev_nr_bytes(sb->s_bdev);
	long nr = bytes >> PAGE_SHIFT, avail;
	void *kaddr;
	pfn_t pfn;
	int id;

	id = dax_read_lock();
	avail = dax_direct_access(sbi->s_daxdev, sbi->s_dax_part_off >> PAGE_SHIFT,
				  nr, DAX_ACCESS, &kaddr, &pfn);
	/*
	 * A device with bad blocks refuses to map them for reads; they are
	 * known to the file system, which reads none of them
	 * (vsmfs_mf_mount()): map around them.
	 */
	if (avail == -EIO)
		avail = vsmfs_map_bad_device(sbi, nr, &kaddr, &pfn);
	dax_read_unlock(id);
	if (avail < 0) {
		vsmfs_err(sb, "cannot map the device: error %ld", avail);
		return avail;
	}
	if (avail < nr) {
		vsmfs_err(sb, "device not contiguously mappable (%ld of %ld pages)",
			  avail, nr);
		return -EINVAL;
	}
	if (bytes < (u64)VSMFS_MIN_BLOCKS << VSMFS_BLOCK_SHIFT) {
		vsmfs_err(sb, "device too small: %llu KiB, a vsmfs needs %u MiB",
			  bytes >> 10, VSMFS_MIN_BLOCKS >> (20 - VSMFS_BLOCK_SHIFT));
		return -EINVAL;
	}
	if (!pfn_t_has_page(pfn)) {
		vsmfs_err(sb, "device pages have no struct page (use an fsdax namespace)");
		return -EINVAL;
	}
	sbi->s_virt = (__force void __pm *)kaddr;	/* the device: PM (pmem.h) */
	sbi->s_dev_pfn = pfn_t_to_pfn(pfn);
	sbi->s_pfn_flags = pfn.val & PFN_FLAGS_MASK;
	sbi->s_dev_blocks = bytes >> VSMFS_BLOCK_SHIFT;
	return 0;
}

/*
 * fill_super returns as soon as something fails: vsmfs_kill_sb() tears
 * down whatever part of the mount was built.
 */
static int vsmfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct vsmfs_fs_context *ctx = fc->fs_private;
	struct vsmfs_fs_context defs;
	struct vsmfs_sb_info *sbi;
	struct inode *root;
	bool acl;
	int ret;

	sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);
	if (!sbi)
		return -ENOMEM;
	sb->s_fs_info = sbi;
	sbi->s_sb = sb;
	/* Before any inode is read, or evicted by a teardown. */
	sbi->s_iops = &vsmfs_iops;
	/* No in-core inode's i_slot_gen (0 when it is made) matches it. */
	sbi->s_slot_gen = 1;
	spin_lock_init(&sbi->s_sb_lock);
	INIT_WORK(&sbi->s_error_work, vsmfs_error_work);
	xa_init(&sbi->s_bad);
	mutex_init(&sbi->s_bad_mutex);
	sbi->s_trans_iops = &vsmfs_trans_iops;
	ret = vsmfs_trans_init(sbi);
	if (ret)
		return ret;
	ratelimit_state_init(&sbi->s_error_rs, 5 * HZ, 10);
	sbi->s_aopts = (struct vsmfs_aopts) {
		.on = true, .threshold = VSMFS_AGGR_THRESHOLD_DEFAULT,
		.window = VSMFS_AGGR_WINDOW_DEFAULT,
	};
	vsmfs_aggr_init(sbi);
	sbi->s_data_mode = VSMFS_DATA_ATOMIC;
	sbi->s_cow_mode = VSMFS_COW_MULTI;
	sbi->s_tlb_mode = VSMFS_TLB_LAZY;
	/* The user's errors= holds while the superblock is looked for. */
	vsmfs_apply_data_opts(ctx, sbi);
	sbi->s_stats = alloc_percpu(struct vsmfs_stats);
	if (!sbi->s_stats)
		return -ENOMEM;
	ret = vsmfs_pool_init(sbi);
	if (ret)
		return ret;

	/* Memory failures of the device are reported to its holder: this mount. */
	sbi->s_daxdev = fs_dax_get_by_bdev(sb->s_bdev, &sbi->s_dax_part_off, sb,
					   &vsmfs_dax_holder_ops);
	sbi->s_dax_holder = sbi->s_daxdev;
	if (!sbi->s_daxdev) {
		sbi->s_daxdev = fs_dax_get_by_bdev(sb->s_bdev, &sbi->s_dax_part_off,
						   NULL, NULL);
		if (sbi->s_daxdev)
			vsmfs_warn(sb, "another holder takes the memory failures of the device, not this mount");
	}
	if (!sbi->s_daxdev) {
		vsmfs_err(sb, "device does not support DAX (need a pmem device in fsdax mode)");
		return -EINVAL;
	}
	if (!sb_set_blocksize(sb, VSMFS_BLOCK_SIZE)) {
		vsmfs_err(sb, "device does not support %u-byte blocks", VSMFS_BLOCK_SIZE);
		return -EINVAL;
	}
	ret = vsmfs_map_device(sb, sbi);
	if (ret)
		return ret;
	vsmfs_pmlog_attach(sbi);
	ret = vsmfs_load_super(sb, sbi);
	if (ret)
		return ret;
	ret = vsmfs_bad_load(sbi);
	if (ret)
		return ret;
	vsmfs_warn_errors(sb, sbi->s_dsb);
	/*
	 * The stored defaults first, then the user's options over them, as
	 * /proc/mounts shows the result.
	 */
	ret = vsmfs_parse_stored_opts(fc, sb, &defs);
	if (ret)
		return ret;
	vsmfs_apply_aopts(&sbi->s_aopts, &defs, true);
	vsmfs_apply_aopts(&sbi->s_aopts, ctx, true);
	vsmfs_apply_data_opts(&defs, sbi);
	vsmfs_apply_data_opts(ctx, sbi);
	acl = ctx->acl_set ? ctx->acl : !defs.acl_set || defs.acl;
	sbi->s_frame_pfn0 = sbi->s_dev_pfn + sbi->s_layout.data_start;
	sbi->s_jopts = (struct vsmfs_jopts) {
		.delta = true, .wear = true, .gc = true,
		.checkpoint_secs = VSMFS_CHECKPOINT_SECS_DEFAULT,
		.commit_secs = VSMFS_COMMIT_SECS_DEFAULT,
		.threshold = VSMFS_CHECKPOINT_THRESHOLD_DEFAULT,
		.parallel = true, .fast = true,
		.threads = min_t(unsigned int, num_online_cpus(), VSMFS_CHECKPOINT_THREADS_MAX),
	};
	vsmfs_apply_jopts(&sbi->s_jopts, &defs, true);
	vsmfs_apply_jopts(&sbi->s_jopts, ctx, true);
	ret = vsmfs_journal_init(sbi);
	if (ret)
		return ret;
	/* The map first: free space is counted in frames it finds. */
	ret = vsmfs_vsp_map(sbi);
	if (ret)
		return ret;
	ret = vsmfs_alloc_init(sbi);
	if (ret)
		return ret;
	/* Bad frames kept from use before anything allocates. */
	vsmfs_mf_mount(sbi);
	/* The window starts at the first slot and grows toward the end. */
	sbi->s_window = min_t(u64, sbi->s_aopts.window, sbi->s_layout.inodes);

	sb->s_magic = VSMFS_MAGIC;
	sb->s_op = &vsmfs_sops;
	sb->s_export_op = &vsmfs_export_ops;
	sb->s_maxbytes = VSMFS_MAX_FILE_SIZE;
	sb->s_max_links = VSMFS_LINK_MAX;
	sb->s_time_gran = 1;
	sb->s_time_min = 0;
	sb->s_time_max = S64_MAX;
	sb->s_flags |= SB_NOSEC;
	sb->s_xattr = vsmfs_xattr_handlers;
	if (IS_ENABLED(CONFIG_FS_POSIX_ACL) && acl)
		sb->s_flags |= SB_POSIXACL;
	import_uuid(&sb->s_uuid, sbi->s_dsb->s_uuid);

	root = vsmfs_iget(sb, le64_to_cpu(sbi->s_dsb->s_root_ino));
	if (IS_ERR(root))
		return PTR_ERR(root);
	if (!S_ISDIR(root->i_mode)) {
		iput(root);
		vsmfs_err(sb, "root inode is not a directory");
		return -EINVAL;
	}
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;

	if (!sb_rdonly(sb)) {
		struct vsmfs_dsb *dsb = sbi->s_dsb;

		/* A failure does not refuse the mount (vsmfs_free_orphans()). */
		if (!(le32_to_cpu(dsb->s_state) & VSMFS_STATE_CLEAN))
			vsmfs_free_orphans(sbi);

		spin_lock(&sbi->s_sb_lock);
		le32_add_cpu(&dsb->s_mount_count, 1);
		dsb->s_mount_time = cpu_to_le64(ktime_get_real_seconds());
		spin_unlock(&sbi->s_sb_lock);
		vsmfs_set_clean(sbi, false);
		vsmfs_journal_timer_start(sbi);
	}
	if (sbi->s_data_mode == VSMFS_DATA_ATOMIC)
		vsmfs_info(sb, "journal of %u blocks, cow=%s: every write() of up to %llu bytes is atomic",
			   vsmfs_trans_max_blocks(sbi), vsmfs_cow_names[sbi->s_cow_mode],
			   vsmfs_atomic_write_max(sbi, sbi->s_cow_mode));
	/* Pairs with vsmfs_notify_failure(). */
	smp_store_release(&sbi->s_mf_ready, true);
	return vsmfs_sysfs_register(sbi);
}

static int vsmfs_get_tree(struct fs_context *fc)
{
	return get_tree_bdev(fc, vsmfs_fill_super);
}

static int vsmfs_reconfigure(struct fs_context *fc)
{
	struct super_block *sb = fc->root->d_sb;
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);
	struct vsmfs_fs_context *ctx = fc->fs_private;
	bool to_ro = fc->sb_flags & SB_RDONLY;

	if (!to_ro && sb_rdonly(sb) &&
	    le32_to_cpu(sbi->s_dsb->s_feature_ro_compat) & ~VSMFS_FEATURE_RO_COMPAT_SUPP) {
		vsmfs_err(sb, "unknown read-only compatible features: stays read-only");
		return -EINVAL;
	}
	/* Its DRAM metadata may be ahead of PM (commits were refused). */
	if (!to_ro && READ_ONCE(sbi->s_error_ro)) {
		vsmfs_err(sb, "made read-only after an error: unmount and run fsck.vsmfs");
		return -EROFS;
	}
	sync_filesystem(sb);
	/* Writers read the modes once; a write in progress keeps its mode. */
	vsmfs_apply_data_opts(ctx, sbi);
	/* Commits read them under either lock: a placement holds only the second. */
	vsmfs_trans_mutex_lock(sbi);
	mutex_lock(&sbi->s_jplace_mutex);
	vsmfs_apply_jopts(&sbi->s_jopts, ctx, false);
	mutex_unlock(&sbi->s_jplace_mutex);
	mutex_unlock(&sbi->s_trans_mutex);
	vsmfs_apply_aopts(&sbi->s_aopts, ctx, false);
	if (ctx->acl_set) {
		if (ctx->acl)
			sb->s_flags |= SB_POSIXACL;
		else
			sb->s_flags &= ~SB_POSIXACL;
	}
	vsmfs_journal_timer_stop(sbi);
	if (to_ro)
		vsmfs_aggr_stop(sbi);
	if (to_ro && !sb_rdonly(sb)) {
		/* Home blocks current before the file system is marked clean. */
		vsmfs_journal_checkpoint(sbi);
		/* Orphans left keep it marked in use, for a later mount. */
		if (!READ_ONCE(sbi->s_orphans_left))
			vsmfs_set_clean(sbi, true);
	} else if (!to_ro && sb_rdonly(sb)) {
		/* A read-only mount of an unclean image left its orphans. */
		if (!(le32_to_cpu(sbi->s_dsb->s_state) & VSMFS_STATE_CLEAN))
			vsmfs_free_orphans(sbi);
		vsmfs_set_clean(sbi, false);
	}
	if (!to_ro)
		vsmfs_journal_timer_start(sbi);
	return 0;
}

static void vsmfs_free_fc(struct fs_context *fc)
{
	kfree(fc->fs_private);
}

static const struct fs_context_operations vsmfs_context_ops = {
	.free		= vsmfs_free_fc,
	.parse_param	= vsmfs_parse_param,
	.get_tree	= vsmfs_get_tree,
	.reconfigure	= vsmfs_reconfigure,
};

static int vsmfs_init_fs_context(struct fs_context *fc)
{
	struct vsmfs_fs_context *ctx;

	ctx = kmalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	vsmfs_fs_context_init(ctx);
	fc->fs_private = ctx;
	fc->ops = &vsmfs_context_ops;
	return 0;
}

/* Tears down a mount in any state fill_super left it. */
static void vsmfs_kill_sb(struct super_block *sb)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);

	if (sbi) {
		WRITE_ONCE(sbi->s_mf_ready, false);
		vsmfs_sysfs_unregister(sbi);
		/* A mount that failed after starting the timer. */
		vsmfs_journal_timer_stop(sbi);
		/* No file is open: nothing queues the worker again. */
		vsmfs_aggr_stop(sbi);
	}
	kill_block_super(sb);
	if (!sbi)
		return;
	/* No error can be reported any more: wait for its work. */
	flush_work(&sbi->s_error_work);
	vsmfs_pmlog_detach(sbi);
	vsmfs_aggr_destroy(sbi);
	vsmfs_vsp_unmap(sbi);
	vsmfs_trans_destroy(sbi);
	/* Reservations live in the DRAM bitmaps, which go with the mount. */
	vsmfs_pool_forget(sbi);
	vsmfs_alloc_destroy(sbi);
	vsmfs_journal_destroy(sbi);
	fs_put_dax(sbi->s_daxdev, sbi->s_dax_holder ? sb : NULL);
	vsmfs_bad_destroy(sbi);
	free_percpu(sbi->s_stats);
	free_percpu(sbi->s_pools);
	kfree(sbi);
}

static struct file_system_type vsmfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "vsmfs",
	.init_fs_context	= vsmfs_init_fs_context,
	.parameters		= vsmfs_fs_parameters,
	.kill_sb		= vsmfs_kill_sb,
	.fs_flags		= FS_REQUIRES_DEV,
};
MODULE_ALIAS_FS("vsmfs");

struct inode *vsmfs_alloc_inode(struct super_block *sb)
{
	struct vsmfs_inode_info *vi;

	vi = alloc_inode_sb(sb, vsmfs_inode_cachep, GFP_KERNEL);
	if (!vi)
		return NULL;
	vi->i_dir = NULL;
	vi->i_flags = 0;
	vi->i_pages = 0;
	vi->i_tid = 0;
	vi->i_slot_gen = 0;
	vi->i_fc_tid = 0;
	vi->i_fc_done = 0;
	vi->i_fc_bad = VSMFS_FCB_OK;
	vi->i_fc_nruns = 0;
	vi->i_fc_gen = 0;
	vi->i_fc_cov = 0;
	vi->i_fc_dir = 0;
	vi->i_fc_gone = NULL;
	vi->i_fc_seq = atomic64_read(&VSMFS_SB(sb)->s_fc_seq);
	vi->i_idx_mb[0] = NULL;
	vi->i_idx_mb[1] = NULL;
	INIT_LIST_HEAD(&vi->i_hot);
	atomic_set(&vi->i_wcount, 0);
	spin_lock_init(&vi->i_aggr_lock);
	vi->i_writers = 0;
	xa_init(&vi->i_pud);
	return &vi->vfs_inode;
}

void vsmfs_free_inode(struct inode *inode)
{
	kfree(VSMFS_I(inode)->i_fc_gone);
	kmem_cache_free(vsmfs_inode_cachep, VSMFS_I(inode));
}

static void vsmfs_inode_init_once(void *obj)
{
	struct vsmfs_inode_info *vi = obj;

	init_rwsem(&vi->i_idx_sem);
	init_rwsem(&vi->i_xattr_sem);
	inode_init_once(&vi->vfs_inode);
}

static int __init vsmfs_init(void)
{
	int ret;

	/* Fast symlink targets are copied to user space from i_inline. */
	vsmfs_inode_cachep =
		kmem_cache_create_usercopy("vsmfs_inode_cache",
					   sizeof(struct vsmfs_inode_info), 0,
					   SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					   offsetof(struct vsmfs_inode_info, i_inline),
					   sizeof_field(struct vsmfs_inode_info, i_inline),
					   vsmfs_inode_init_once);
	if (!vsmfs_inode_cachep)
		return -ENOMEM;
	ret = vsmfs_mblk_cache_create();
	if (ret)
		goto out_destroy_cache;
	ret = vsmfs_tlb_init();
	if (ret)
		goto out_mblk_cache;
	ret = vsmfs_sysfs_init();
	if (ret)
		goto out_tlb;
	ret = register_filesystem(&vsmfs_fs_type);
	if (ret)
		goto out_sysfs;
	if (IS_ENABLED(CONFIG_VSMFS_FAULT_INJECTION) || IS_ENABLED(CONFIG_VSMFS_PMLOG))
		vsmfs_debugfs = debugfs_create_dir("vsmfs", NULL);
	vsmfs_fault_init(vsmfs_debugfs);
	vsmfs_pmlog_init(vsmfs_debugfs);
	return 0;

out_sysfs:
	vsmfs_sysfs_exit();
out_tlb:
	vsmfs_tlb_exit();
out_mblk_cache:
	vsmfs_mblk_cache_destroy();
out_destroy_cache:
	kmem_cache_destroy(vsmfs_inode_cachep);
	return ret;
}

static void __exit vsmfs_exit(void)
{
	unregister_filesystem(&vsmfs_fs_type);
	debugfs_remove(vsmfs_debugfs);
	vsmfs_pmlog_exit();
	vsmfs_sysfs_exit();
	/* Inodes are freed after an RCU grace period. */
	rcu_barrier();
	vsmfs_tlb_exit();
	vsmfs_mblk_cache_destroy();
	kmem_cache_destroy(vsmfs_inode_cachep);
}

module_init(vsmfs_init);
module_exit(vsmfs_exit);
MODULE_DESCRIPTION("vsmfs: a file system for persistent memory with virtual superpages");
/* The release: PACKAGE_VERSION of dkms.conf and VSMFS_TOOLS_VERSION agree. */
MODULE_VERSION("0.1");
MODULE_LICENSE("GPL");
MODULE_SOFTDEP("pre: crc32c");
