// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs fault injection, for tests: /sys/kernel/debug/vsmfs/ holds one
 * directory per point of fault.h, each with
 *
 *   interval   fail every Nth pass through the point (1: every pass);
 *              0, the default, turns the point off
 *   skip       passes that succeed before the interval starts to count
 *              (counts down; 0, the default, for none): with interval 1,
 *              skip N fails the (N+1)th pass from now and every later one
 *   injected   failures injected so far (read-only)
 *
 * The points are shared by every mounted vsmfs. Injection changes nothing
 * on PM by itself: each call site fails the way it would on a real
 * allocation failure or memory error.
 */
#include <linux/debugfs.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/sched/signal.h>
#include "vsmfs.h"
#include "fault.h"

/*
 * struct vsmfs_fault_point - state of one injection point
 * @interval: fail every @interval-th pass, 0 for never (set through debugfs)
 * @skip: passes left that succeed before @interval counts (set through debugfs)
 * @passes: passes since the module was loaded
 * @injected: failures injected
 */
struct vsmfs_fault_point {
	u32		interval;
	atomic_t	skip;
	atomic_t	passes;
	atomic64_t	injected;
};

static const char * const vsmfs_fault_names[VSMFS_FAULT_NR] = {
	[VSMFS_FAULT_PAGE_ALLOC]	= "page_alloc",
	[VSMFS_FAULT_MBLK_ALLOC]	= "mblk_alloc",
	[VSMFS_FAULT_DIR_INDEX]		= "dir_index",
	[VSMFS_FAULT_JCOPY_ALLOC]	= "journal_copy_alloc",
	[VSMFS_FAULT_WSRC_ALLOC]	= "write_source_alloc",
	[VSMFS_FAULT_PM_READ]		= "pm_read",
	[VSMFS_FAULT_COW_STOP]		= "cow_stop",
	[VSMFS_FAULT_JCOMMIT_STOP]	= "journal_commit_stop",
	[VSMFS_FAULT_JPOST_STOP]	= "journal_post_stop",
	[VSMFS_FAULT_JGC_STOP]		= "journal_gc_stop",
	[VSMFS_FAULT_JCKPT_STOP]	= "journal_ckpt_stop",
	[VSMFS_FAULT_JHSWAP_STOP]	= "journal_hswap_stop",
	[VSMFS_FAULT_AGGR_STOP]		= "aggr_stop",
	[VSMFS_FAULT_SHADOW_ALLOC]	= "shadow_alloc",
	[VSMFS_FAULT_TRUNC_STOP]	= "truncate_stop",
	[VSMFS_FAULT_TRANS_OVERFLOW]	= "trans_overflow",
	[VSMFS_FAULT_NFS_NOCOMMIT]	= "nfs_nocommit",
	[VSMFS_FAULT_FSYNC_NOCOMMIT]	= "fsync_nocommit",
	[VSMFS_FAULT_AGGR_WAIT]		= "aggr_wait",
	[VSMFS_FAULT_FREE_RUN]		= "free_run",
	[VSMFS_FAULT_TRANS_FAIL]	= "trans_fail",
	[VSMFS_FAULT_COMMIT_WAIT]	= "commit_wait",
	[VSMFS_FAULT_GATHER_STOP]	= "gather_stop",
	[VSMFS_FAULT_POOL_FULL]		= "pool_full",
	[VSMFS_FAULT_FC_NOFENCE]	= "fc_nofence",
	[VSMFS_FAULT_JHOME_UNSAFE]	= "journal_home_unsafe",
	[VSMFS_FAULT_JTURN_WAIT]	= "journal_turn_wait",
};

static struct vsmfs_fault_point vsmfs_faults[VSMFS_FAULT_NR];

DEFINE_STATIC_KEY_FALSE(vsmfs_fault_armed);

static int vsmfs_interval_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct vsmfs_fault_point *)data)->interval);
	return 0;
}

/* An interval set arms the points (vsmfs_fault_armed) for good. */
static int vsmfs_interval_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	if (val)
		static_branch_enable(&vsmfs_fault_armed);
	WRITE_ONCE(((struct vsmfs_fault_point *)data)->interval, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vsmfs_interval_fops, vsmfs_interval_get, vsmfs_interval_set, "%llu\n");

static int vsmfs_injected_get(void *data, u64 *val)
{
	*val = atomic64_read(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vsmfs_injected_fops, vsmfs_injected_get, NULL, "%llu\n");

/**
 * __vsmfs_fault() - whether a fault injection point fails this time
 * @point: the point
 *
 * vsmfs_fault() once a point was armed.
 *
 * Context: any.
 * Return: true if the caller must fail as the point says.
 */
bool __vsmfs_fault(enum vsmfs_fault point)
{
	struct vsmfs_fault_point *f = &vsmfs_faults[point];
	u32 interval = READ_ONCE(f->interval);

	if (likely(!interval))
		return false;
	if (atomic_add_unless(&f->skip, -1, 0))
		return false;
	if ((u32)atomic_inc_return(&f->passes) % interval)
		return false;
	atomic64_inc(&f->injected);
	return true;
}

/**
 * __vsmfs_fault_stop() - a point where PM writes stop, for crash tests
 * @sb: the file system
 * @point: the point
 * @what: where it stops, for the log ("fault: @what")
 *
 * If the point fires, logs @what and waits, writing nothing more, until
 * the task is killed (a kernel thread waits for ever): the test harness
 * cuts the power when it sees the line. Otherwise returns at once.
 *
 * Context: process context, may sleep holding the caller's locks.
 */
void __vsmfs_fault_stop(struct super_block *sb, enum vsmfs_fault point, const char *what)
{
	if (!__vsmfs_fault(point))
		return;
	vsmfs_err(sb, "fault: %s", what);
	while (!fatal_signal_pending(current))
		msleep_interruptible(1000);
}

/* Longest wait at a point of __vsmfs_fault_wait(), in milliseconds. */
#define VSMFS_FAULT_WAIT_MS	10000

/**
 * __vsmfs_fault_wait() - a point where the task waits, for race tests
 * @point: the point
 *
 * If the point fires, waits until its interval is set to 0 again, or for
 * ten seconds at most, so that a test can change the file system while
 * the task stands between two steps (it sees the point's injected count
 * grow). Otherwise returns at once.
 *
 * Context: process context, may sleep holding the caller's locks.
 */
void __vsmfs_fault_wait(enum vsmfs_fault point)
{
	unsigned int waited;

	if (!__vsmfs_fault(point))
		return;
	for (waited = 0; waited < VSMFS_FAULT_WAIT_MS && READ_ONCE(vsmfs_faults[point].interval);
	     waited += 20)
		msleep(20);
}

/**
 * vsmfs_fault_init() - create the debugfs knobs
 * @dir: /sys/kernel/debug/vsmfs, removed with everything in it at exit
 *
 * Fault injection is a test aid: without debugfs the points stay off and
 * the module works as usual, so errors here are not reported.
 */
void vsmfs_fault_init(struct dentry *dir)
{
	int i;

	for (i = 0; i < VSMFS_FAULT_NR; i++) {
		struct dentry *d = debugfs_create_dir(vsmfs_fault_names[i], dir);

		debugfs_create_file_unsafe("interval", 0600, d, &vsmfs_faults[i],
					   &vsmfs_interval_fops);
		debugfs_create_u32("skip", 0600, d, (u32 *)&vsmfs_faults[i].skip.counter);
		debugfs_create_file_unsafe("injected", 0400, d, &vsmfs_faults[i].injected,
					   &vsmfs_injected_fops);
	}
}
