/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs fault injection (CONFIG_VSMFS_FAULT_INJECTION): points in the
 * allocation and PM access paths that fail on demand, set through
 * /sys/kernel/debug/vsmfs/<point>/. Without the option every point is a
 * constant false and compiles away.
 */
#ifndef _VSMFS_FAULT_H
#define _VSMFS_FAULT_H

#include <linux/types.h>

struct super_block;
struct dentry;

/* Each point makes its call site fail the way the real failure would. */
enum vsmfs_fault {
	VSMFS_FAULT_PAGE_ALLOC,		/* logical page allocation: -ENOMEM */
	VSMFS_FAULT_MBLK_ALLOC,		/* metadata cache block kmalloc: -ENOMEM */
	VSMFS_FAULT_DIR_INDEX,		/* directory index memory: -ENOMEM */
	VSMFS_FAULT_JCOPY_ALLOC,	/* copy of a frozen block: the task waits */
	VSMFS_FAULT_WSRC_ALLOC,		/* DRAM copy of a write's source: -ENOMEM */
	VSMFS_FAULT_PM_READ,		/* PM read as from poisoned memory: -EIO */
	VSMFS_FAULT_COW_STOP,		/* copy-on-write write stops before commit */
	/* The journal stops, PM as it is, for a power cut (journal.c): */
	VSMFS_FAULT_JCOMMIT_STOP,	/* before the commit store (step 5) */
	VSMFS_FAULT_JPOST_STOP,		/* in the middle of re-flagging (step 6) */
	VSMFS_FAULT_JGC_STOP,		/* GC: headers moved, pointers not */
	VSMFS_FAULT_JCKPT_STOP,		/* checkpoint: blocks home, journal full */
	VSMFS_FAULT_JHSWAP_STOP,	/* header batch: half in place */
	VSMFS_FAULT_AGGR_STOP,		/* inode migration, before its commit */
	/*
	 * Undo copy of a metadata block: -ENOMEM; in a shared metadata
	 * handle, its undo log full: the operation is undone and done again
	 * under s_trans_mutex.
	 */
	VSMFS_FAULT_SHADOW_ALLOC,
	VSMFS_FAULT_TRUNC_STOP,		/* truncation between two transactions */
	VSMFS_FAULT_TRANS_OVERFLOW,	/* a dirty block overflows the journal */
	/*
	 * NFS commit of metadata (export.c) returns 0 and commits nothing: a
	 * negative control for crash tests, which must see the loss.
	 */
	VSMFS_FAULT_NFS_NOCOMMIT,
	VSMFS_FAULT_FSYNC_NOCOMMIT,	/* fsync returns 0, commits nothing */
	/*
	 * The aggregation worker waits between picking a slot whose inode
	 * is not in memory and reading that inode (vsmfs_fault_wait()).
	 */
	VSMFS_FAULT_AGGR_WAIT,
	/*
	 * A run freed or given back when the running transaction commits
	 * (vsmfs_trans_defer()): -ENOMEM, as when the array of such runs
	 * cannot grow.
	 */
	VSMFS_FAULT_FREE_RUN,
	/* A handle's end finds a step failed (vsmfs_trans_fail()): -ENOMEM. */
	VSMFS_FAULT_TRANS_FAIL,
	/*
	 * A commit waits once it closed the running transaction, before it
	 * writes or drops it (vsmfs_fault_wait()).
	 */
	VSMFS_FAULT_COMMIT_WAIT,
	/*
	 * A growing run that takes its frames wherever they are free runs
	 * out of room part way (vsmfs_fill_holes()): -ENOSPC.
	 */
	VSMFS_FAULT_GATHER_STOP,
	/*
	 * A page pool takes no page back (vsmfs_pool_put()): they go to
	 * the bitmap under s_trans_mutex.
	 */
	VSMFS_FAULT_POOL_FULL,
	/*
	 * A fast-commit record is stored without its fence: a negative
	 * control for crash tests, which must see the loss.
	 */
	VSMFS_FAULT_FC_NOFENCE,
	/*
	 * A commit writes an inode-table block home in place whether fast
	 * records carry its changes or not (jcommit.c, "Home writes"): a
	 * negative control for crash tests, which must see the damage.
	 */
	VSMFS_FAULT_JHOME_UNSAFE,
	/*
	 * A commit whose journal blocks are durable waits before it takes
	 * its turn to write its commit block (vsmfs_fault_wait()): the
	 * commits placed after it reach theirs first and wait for it.
	 */
	VSMFS_FAULT_JTURN_WAIT,
	VSMFS_FAULT_NR
};

#ifdef CONFIG_VSMFS_FAULT_INJECTION
#include <linux/jump_label.h>

/*
 * Set once a point is armed, and from then on until the module goes: until
 * then every point is a no-op in the code, and a build with the points
 * costs what one without them does.
 */
DECLARE_STATIC_KEY_FALSE(vsmfs_fault_armed);

bool __vsmfs_fault(enum vsmfs_fault point);
void __vsmfs_fault_stop(struct super_block *sb, enum vsmfs_fault point, const char *what);
void __vsmfs_fault_wait(enum vsmfs_fault point);
void vsmfs_fault_init(struct dentry *dir);

/*
 * Whether the fault injection point @point fails this time (__vsmfs_fault()).
 * Context: any.
 */
static __always_inline bool vsmfs_fault(enum vsmfs_fault point)
{
	return static_branch_unlikely(&vsmfs_fault_armed) && __vsmfs_fault(point);
}

/* A point where PM writes stop, for crash tests (__vsmfs_fault_stop()). */
static __always_inline void vsmfs_fault_stop(struct super_block *sb, enum vsmfs_fault point,
					     const char *what)
{
	if (static_branch_unlikely(&vsmfs_fault_armed))
		__vsmfs_fault_stop(sb, point, what);
}

/* A point where the task waits while the point is armed (__vsmfs_fault_wait()). */
static __always_inline void vsmfs_fault_wait(enum vsmfs_fault point)
{
	if (static_branch_unlikely(&vsmfs_fault_armed))
		__vsmfs_fault_wait(point);
}
#else
static inline bool vsmfs_fault(enum vsmfs_fault point)
{
	return false;
}

static inline void vsmfs_fault_stop(struct super_block *sb, enum vsmfs_fault point,
				    const char *what)
{
}

static inline void vsmfs_fault_wait(enum vsmfs_fault point)
{
}

static inline void vsmfs_fault_init(struct dentry *dir)
{
}
#endif

#endif /* _VSMFS_FAULT_H */
