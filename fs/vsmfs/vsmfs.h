/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs internal definitions: DRAM structures of a mounted file system and
 * the functions each source file offers the others, grouped by file.
 *
 * The files stand in layers, lowest first. A file calls its own layer and
 * the ones below; where a lower layer must reach up (a commit making freed
 * pages free, the abort of a handle reloading inodes), it does so through
 * a callback or an ops table that the upper layer registers. tests/layering
 * checks this table against the module's object files:
 *
 *   1 primitives: verify.c jcore.c pmlog.c fault.c trace.c sb.c badframe.c
 *   2 mapping: mcache.c vsp.c
 *   3 journal: journal.c jcommit.c jgc.c jfast.c recovery.c
 *   4 transactions: trans.c trans_shared.c trans_commit.c trans_fc.c
 *   5 allocation: alloc.c resv.c ialloc.c hole.c ptable.c
 *   6 inodes: index.c inode.c aggr.c xattr.c acl.c ioctl.c fcommit.c iops.c
 *   7 namespace and data: grow.c stage.c cow.c write.c dax.c falloc.c
 *         file.c dir.c namei.c export.c mfail.c
 *   8 vfs glue: super.c sysfs.c
 *
 * In layers 6 and 7 a file is listed after those it calls (inode.c and
 * aggr.c call each other). The inode layer takes the operations of each
 * kind of inode, and a hook of eviction, from the layers above it (struct
 * vsmfs_inode_ops). aggr.c and ioctl.c stand in it, as they call nothing
 * above it: every handle that writes an inode counts the write for
 * aggregation, which moves inode slots; ioctl.c keeps the attribute flags
 * of inodes.
 *
 * Documentation/filesystems/vsmfs.rst ("Source layout") says what each holds.
 */
#ifndef _VSMFS_H
#define _VSMFS_H

#include <linux/fs.h>
#include <linux/dax.h>
#include <linux/ratelimit.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <linux/list.h>
#include <linux/rwsem.h>
#include <linux/kobject.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <linux/percpu_counter.h>
#include <linux/sched/clock.h>
#include "vsmfs_format.h"
#include "verify.h"
#include "stats.h"
#include "pmem.h"
#include "jcore.h"

#define EFSCORRUPTED	EUCLEAN		/* file system is corrupted */

/*
 * How long a task spins for work another CPU is finishing before it sleeps:
 * a commit in flight that an fsync needs, the commit of the ticket before
 * its own, the commits whose freed pages an allocation waits for. Each takes
 * a few microseconds on PM; a sleep and a wake-up cost both CPUs more than
 * that, and with several tasks each fsync'ing, most fsyncs wait for one.
 */
#define VSMFS_COMMIT_SPIN_NS	(50 * NSEC_PER_USEC)

/*
 * vsmfs_spin_until() - spin until @cond holds, for at most @ns nanoseconds,
 * and only while the task need not give up its CPU. Return: whether @cond
 * held; the caller then sleeps on it if it did not. @cond is read with the
 * ordering its own accessors give.
 */
#define vsmfs_spin_until(cond, ns)						\
({										\
	u64 __until = local_clock() + (ns);					\
	bool __ok;								\
										\
	while (!(__ok = (cond)) && !need_resched() && local_clock() < __until)	\
		cpu_relax();							\
	__ok;									\
})

struct vsmfs_journal;

/*
 * struct vsmfs_jopts - journal mount options
 * @delta: byte-level delta updates (journal_delta=)
 * @wear: wear-aware journal block allocation (journal_wear=)
 * @gc: garbage collection before checkpoint (journal_gc=)
 * @checkpoint_secs: checkpoint timer period in seconds, 0 for none
 * @threshold: fill of the journal, in percent, that starts GC and checkpoint
 * @parallel: commits write the journal outside s_trans_mutex (journal_commit=)
 * @threads: threads that copy a checkpoint home, the caller included
 *	(checkpoint_threads=, fixed at mount)
 * @threads_given: @threads was a mount option
 */
struct vsmfs_jopts {
	bool		delta;
	bool		wear;
	bool		gc;
	bool		parallel;
	bool		fast;		/* fast_commit= */
	unsigned int	checkpoint_secs;
	unsigned int	commit_secs;
	unsigned int	threshold;
	unsigned int	threads;
	bool		threads_given;
};

#define VSMFS_CHECKPOINT_SECS_DEFAULT	300
/* commit=: seconds a change may wait for its commit; 0 is commit=sync. */
#define VSMFS_COMMIT_SECS_DEFAULT	5
#define VSMFS_COMMIT_SECS_MAX		300
#define VSMFS_CHECKPOINT_THRESHOLD_DEFAULT	75
#define VSMFS_CHECKPOINT_THREADS_MAX	8

/*
 * struct vsmfs_aopts - hot-inode aggregation mount options
 * @on: aggregate=
 * @threshold: writes of an inode open for writing that make it hot
 *	(aggregate_threshold=)
 * @window: slots of the window at mount (aggregate_window=)
 */
struct vsmfs_aopts {
	bool		on;
	unsigned int	threshold;
	unsigned int	window;
};

#define VSMFS_AGGR_THRESHOLD_DEFAULT	16
#define VSMFS_AGGR_WINDOW_DEFAULT	64

/*
 * A run of logical pages a handle freed (or, @scratch, gave back after
 * reserving it), free only once the running transaction commits.
 */
struct vsmfs_free_run {
	u64			lpn;
	/*
	 * Within one VSP, so 16 bits each: an entry is 16 bytes, four to a
	 * cache line, as the CPUs' shares hand their runs to the commit.
	 */
	u16			count;
	u16			frames;	/* of its pages, those with frames */
	/* Pages of the reservation from @lpn it ends, or 0 (vsmfs_resv_end()). */
	u16			resv;
	bool			scratch;
};

/*
 * struct vsmfs_resv - logical pages reserved in DRAM for a write that
 * copies its data before its handle begins (vsmfs_resv_take()): their
 * bits are set in the DRAM bitmap and in its overlay (m_resv), which keeps
 * them out of what the journal writes. A value its holder keeps: the
 * bitmaps are the only record, so a reservation needs no memory of its own.
 */
struct vsmfs_resv {
	u64			lpn, count;
};

/* Bits of an allocation bitmap block. */
#define BITS_PER_BLK	(VSMFS_BLOCK_SIZE * 8ULL)

/*
 * struct vsmfs_page_pool - pages of one VSP kept reserved for one CPU's
 * writes, so that they reserve their fresh pages without s_trans_mutex
 * (resv.c)
 * @lock: protects the fields below (the owning CPU's writers, refills and
 *	draining, which also hold s_trans_mutex to change @vsp), and @ulog
 * @vsp: 1 + the VSP the pool keeps to, or 0 (set in sbi->s_vsp_pooled)
 * @shared: another pool keeps to @vsp too (no VSP had a free page else)
 * @map: of the pages of @vsp, those held (with @pend, the pool's size)
 * @pend: pages of @vsp a commit gave back, held from the moment transaction
 *	@pend_tid is durable, when they join @map (vsmfs_pool_ripen())
 * @pend_tid: the last commit that gave pages back, 0 if @pend is empty
 */
struct vsmfs_page_pool {
	spinlock_t		lock;		/* the fields below, @ulog */
	bool			shared;
	u64			vsp;
	DECLARE_BITMAP(map, VSMFS_VSP_PAGES);
	DECLARE_BITMAP(pend, VSMFS_VSP_PAGES);
	u64			pend_tid;
	/* An undo log kept for the next shared metadata handle on this CPU. */
	struct vsmfs_undo_log	*ulog;
};

/*
 * struct vsmfs_running - the running transaction between its handles
 * @dirty: blocks changed since the last commit (vsmfs_mblk.m_dirty), but
 *	those shared handles added since the CPUs' shares were last folded,
 *	which are on their shares' lists (struct vsmfs_cpu_share)
 * @nblocks, @ndata: blocks on @dirty; of them, blocks in the data area
 * @tid: its number; the commit of transaction N makes N durable
 * @handles: handles ended in it
 * @frees: runs to free when it commits, @nfrees of @maxfrees
 * @spare: the next transaction's @frees (@spare_max entries) or NULL: a
 *	commit that frees runs late takes it, and gives one back, under @lock
 * @free_pages, @nplain: pages in @frees; its runs that are not whole scratch runs
 * @lock: with s_handles_sem held shared, protects @handles, @frees,
 *	@nfrees, @free_pages and the three below (shared handles do not
 *	change @dirty, @nblocks and @ndata; see trans_shared.c)
 * @shared_credits: blocks the CPUs' shares (struct vsmfs_cpu_share) hold for
 *	shared handles to dirty, kept across transactions, and those they
 *	dirtied since they were last folded
 * @shared_frees: entries of @frees the shares hold for shared handles to add
 * @shared_used: a share took some of the two above, ended a handle or
 *	added a block, since the shares were last folded into the transaction
 * @frees_busy, @freed_early, @early_overflow, @early_ns: vsmfs_trans_lock_tid()
 */
struct vsmfs_running {
	/*
	 * What a CPU's share writes as it takes a batch or gives its runs
	 * back, and the first shared handle of a transaction: one line.
	 */
	spinlock_t		lock;	/* shared handles: see above */
	unsigned int		shared_credits;
	unsigned int		shared_frees;
	unsigned int		handles;
	struct vsmfs_free_run	*frees, *spare;
	unsigned int		nfrees, maxfrees, spare_max, nplain;
	u64			free_pages;
	struct list_head	dirty;
	unsigned int		nblocks;
	unsigned int		ndata;
	/*
	 * Read by every handle, written by a commit (and @shared_used by the
	 * first share to take room after it): a line of their own, which the
	 * shares' writes above do not take from the CPUs' caches.
	 */
	u64			tid ____cacheline_aligned_in_smp;
	/*
	 * The running transaction as a commit that holds s_trans_mutex to
	 * close it saw it (vsmfs_trans_lock_tid()), or 0: an fsync of it
	 * waits for that commit without queueing on the mutex. And when that
	 * commit took the mutex, for commit_ns and commit_excl_ns, or 0.
	 */
	u64			closing;
	u64			closing_ns;
	bool			shared_used;
	bool			frees_busy, freed_early, early_overflow;
	u64			early_ns;
};

/*
 * struct vsmfs_handles_sem - the semaphore of shared handles (s_handles_sem), a
 * reader-writer semaphore whose readers count on their own CPU, so that
 * the shared handles of many CPUs write no cache line in common
 * (trans_shared.c, vsmfs_handles_enter())
 * @readers: per CPU, the readers that entered on it less those that left
 *	on it; a reader may leave on another CPU, so only the sum counts
 * @writer: where a writer waits for the readers to leave
 * @dep_map: lockdep's view of it, as of an rw_semaphore
 */
struct vsmfs_handles_sem {
	int __percpu		*readers;
	wait_queue_head_t	writer;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	struct lockdep_map	dep_map;
#endif
};

struct vsmfs_cpu_share;	/* a CPU's share of the running transaction (trans.h) */
struct vsmfs_trans;

/*
 * struct vsmfs_trans_aops - what the transactions ask of the allocator
 * above them (resv.c registers them, vsmfs_pool_init())
 * @handle_begin: a handle takes s_trans_mutex, before any change: pooled
 *	pages go back first if free space is short
 * @free_run: the committing handle frees in DRAM a run a handle of its
 *	transaction freed, or ends a reservation (@f->resv)
 * @late_ok: whether the committing handle may keep whole scratch run @f (any
 *	if NULL) out of @free_run, for @free_late once its commit is durable
 * @free_late: give back the @n scratch runs @late_ok took, once their commit
 *	is durable, without s_trans_mutex (which it takes if it must)
 * @bits_restored: an aborted handle put back @len bytes at @off of block
 *	@blk (vsmfs_alloc_bits_restored())
 */
struct vsmfs_trans_aops {
	void (*handle_begin)(struct vsmfs_sb_info *sbi);
	void (*free_run)(struct vsmfs_trans *t, const struct vsmfs_free_run *f);
	bool (*late_ok)(struct vsmfs_sb_info *sbi, const struct vsmfs_free_run *f);
	void (*free_late)(struct vsmfs_sb_info *sbi, struct vsmfs_free_run *f, unsigned int n);
	void (*bits_restored)(struct vsmfs_sb_info *sbi, u64 blk, unsigned int off,
			      unsigned int len);
};

/*
 * struct vsmfs_trans_iops - what an abort asks of the inodes above the
 * transactions (super.c registers them)
 * @reload: read an in-core inode again from its slot
 * @discard_new: drop an inode the aborted handle created
 * @dir_index_free: drop a directory's DRAM index, rebuilt at its next use
 */
struct vsmfs_trans_iops {
	void (*reload)(struct inode *inode);
	void (*discard_new)(struct inode *inode);
	void (*dir_index_free)(struct inode *inode);
};

/*
 * struct vsmfs_jclient_ops - what a commit or a checkpoint asks of the
 * transactions above the journal (trans_commit.c registers them,
 * vsmfs_trans_init())
 * @sync: commit the running transaction, before a checkpoint
 * @release: the blocks of the committing handle are placed or frozen, no
 *	longer dirty in it
 * @unlock: the committing handle hands s_trans_mutex over
 * @freed: the commit ended; @freed: it freed pages, which may be taken now
 */
struct vsmfs_jclient_ops {
	int (*sync)(struct vsmfs_sb_info *sbi, unsigned int cause);
	void (*release)(struct vsmfs_trans *t);
	void (*unlock)(struct vsmfs_trans *t);
	void (*freed)(struct vsmfs_sb_info *sbi, bool freed);
};

/*
 * struct vsmfs_undo_rec - bytes of a metadata block as they were before
 * the running handle changed them (vsmfs_trans_get_write_access_range())
 * @mb: the block
 * @off: first byte, a multiple of 8
 * @len: bytes, a multiple of 8 (0: the block joins the handle unchanged)
 * @at: where the old bytes are in vsmfs_undo_log.bytes
 */
struct vsmfs_undo_rec {
	struct vsmfs_mblk	*mb;
	u16			off, len, at;
};

#define VSMFS_UNDO_RECS		32	/* records of one handle */
#define VSMFS_UNDO_BYTES	2048	/* old bytes they save */
#define VSMFS_SHADOW_POOL	8	/* whole-block undo copies kept for reuse */
#define VSMFS_SHARED_FREES	2	/* runs a shared metadata handle may free */

/*
 * struct vsmfs_undo_log - what the running handle saved to undo its
 * changes of parts of blocks, in the order it saved them; and undo copies
 * of whole blocks that ended handles gave back (@pool, @npool). A shared
 * metadata handle's log also holds the runs it frees (@free, @nfree; at
 * most @maxfree, the entries of s_run.frees it reserved), which join the
 * running transaction when it ends.
 */
struct vsmfs_undo_log {
	unsigned int		n, used;
	struct vsmfs_undo_rec	rec[VSMFS_UNDO_RECS];
	u64			bytes[VSMFS_UNDO_BYTES / 8];
	u8			*pool[VSMFS_SHADOW_POOL];
	unsigned int		npool;
	unsigned int		nfree, maxfree;
	struct vsmfs_free_run	free[VSMFS_SHARED_FREES];
};

/* Why the running transaction was committed (commits_* counters). */
enum {
	VSMFS_COMMIT_SYNC,	/* commit=sync, or a handle that must be durable */
	VSMFS_COMMIT_FSYNC,	/* fsync, fdatasync, O_SYNC, O_DSYNC, NFS */
	VSMFS_COMMIT_TIMER,	/* commit= seconds passed */
	VSMFS_COMMIT_FULL,	/* the journal or free space ran short */
	VSMFS_COMMIT_SYNCFS,	/* sync, syncfs, remount, unmount */
};

/*
 * Lock order, outermost first, as the code takes them. A lock may be taken
 * with any lock above it held, never with one below it held.
 *
 *  1. sb_start_write() (freeze protection, VFS);
 *  2. i_rwsem (inode_lock()), held by the VFS (a directory before the
 *     inodes in it) or taken by vsmfs (read, write, fallocate, truncate);
 *  3. mmap_lock, then sb_start_pagefault(), in a page fault. For a user
 *     buffer mmap_lock is taken with i_rwsem at most: a buffer is faulted
 *     in or pinned before the locks below are taken or after they are
 *     released, and copied under them with page faults disabled
 *     (vsmfs_do_read_iter(), vsmfs_do_write_iter());
 *  4. mapping->invalidate_lock (filemap_invalidate_lock()): exclusive for
 *     copy-on-write, fallocate and truncate, shared by a DAX fault;
 *  5. vsmfs_inode_info.i_idx_sem: the index of a file; a fault takes it
 *     without the inode lock (vsmfs_iomap_begin());
 *  6. s_trans_mutex: a handle, from vsmfs_trans_begin() to its end
 *     (no allocation in it may enter the file system: memalloc_nofs), and
 *     code that reads what handles change without one (the aggregation
 *     worker);
 *     s_handles_sem: exclusive with s_trans_mutex in every handle (taken
 *     right after it, released right before it); shared, without
 *     s_trans_mutex, by a shared handle (vsmfs_whandle_begin()) and a
 *     shared metadata handle (vsmfs_trans_begin_shared(): a create, an
 *     unlink), which take no other lock of this list but the leaves (a
 *     reader that a writer came before twice enters while it holds
 *     s_trans_mutex for a moment: vsmfs_handles_enter()); an
 *     access time's shared handle (vsmfs_update_time()) is begun with
 *     i_rwsem taken shared by trylock, with mmap_lock or i_rwsem itself
 *     held shared by the caller;
 *  7. vsmfs_inode_info.i_xattr_sem: exclusive inside a handle; readers of
 *     the xattr block take it shared and no other lock but the leaves;
 *  8. s_jplace_mutex: placement in the journal, GC, checkpoint and
 *     revocation. A commit takes it before it releases s_trans_mutex and
 *     may then hold it alone (vsmfs_journal_commit_trans()); GC and
 *     checkpoint hold it alone, beside handles (they read the versions in
 *     the journal, not the DRAM blocks);
 *  9. vsmfs_journal.tx_lock: the commits in flight, under s_jplace_mutex or
 *     alone.
 * Leaves, taken under any of these, with no lock of vsmfs inside them but
 * pmlog.lock: s_run.lock (the running transaction, in shared handles),
 * the lock of a per-CPU page pool, s_sb_lock (the superblock in DRAM, also taken by
 * vsmfs_fs_error() inside a handle), s_aggr_lock (the inodes open for
 * writing), the xarray lock of s_mblks and vsmfs_mblk.m_jlock (a block a
 * commit writes outside s_trans_mutex). The ordering checker (pmlog.c)
 * takes pmlog.mutex alone, to turn the log on and off and read it out, and
 * pmlog.lock, innermost of all, at every logged PM store.
 *
 * Waits: a handle may wait, with s_trans_mutex held, for commits that
 * released it (vsmfs_wait_freed(); a reservation waits for them first
 * without it, then again under it if one began meanwhile), and any task
 * changing a block, with s_trans_mutex or s_handles_sem held, for the
 * commit that has still to write it, when no memory is left for a copy
 * (__vsmfs_mblk_freeze());
 * GC, checkpoint and revocation wait, with s_jplace_mutex held, for the
 * commits in flight (vsmfs_jdrain()). No commit takes either mutex again
 * once it has released it.
 */

/*
 * struct vsmfs_sb_info - a mounted vsmfs
 *
 * Fields are set once in fill_super and read-only afterwards unless a
 * comment says otherwise.
 */
struct vsmfs_sb_info {
	struct super_block	*s_sb;
	struct dax_device	*s_daxdev;
	u64			s_dax_part_off;	/* byte offset of the partition */
	void __pm		*s_virt;	/* kernel address of block 0 */
	u64			s_dev_blocks;	/* usable device size in blocks */
	u64			s_dev_pfn;	/* pfn of block 0 */
	/*
	 * The superblock is kept in DRAM, changed under s_sb_lock and
	 * written to both copies on PM by vsmfs_write_super() (super.c);
	 * s_dsb points to s_dsb_mem.
	 */
	spinlock_t		s_sb_lock;
	struct vsmfs_dsb	*s_dsb;
	struct vsmfs_dsb	s_dsb_mem;
	struct vsmfs_layout	s_layout;	/* regions, from the superblock */

	/* Errors found at run time (vsmfs_fs_error()). */
	unsigned int		s_errors;	/* VSMFS_ERRORS_*, errors=; remount */
	/* errors=remount-ro acted: set once, then no commit reaches PM. */
	bool			s_error_ro;
	struct work_struct	s_error_work;	/* stops the workers after it */
	struct ratelimit_state	s_error_rs;	/* messages of vsmfs_fs_error() */

	/*
	 * Data frames found bad (badframe.c): frame -> a value entry. s_nbad
	 * counts them (0: no path looks); s_bad_listed the entries of the
	 * list on PM. Appends under s_bad_mutex.
	 */
	struct xarray		s_bad;
	unsigned int		s_nbad;
	u32			s_bad_listed;
	struct mutex		s_bad_mutex;	/* appends to the list on PM */
	/* huge=1g: faults map 1 GiB pages, and large files are placed for them. */
	bool			s_huge_pud;
	u64			s_pfn_flags;	/* of the device's pfn_t (PFN_DEV, PFN_MAP) */
	/* The DAX device reports failures to this mount (mfail.c). */
	bool			s_dax_holder;
	bool			s_mf_ready;	/* the mount acts on them */

	/* Mapping layer (vsp.c): logical page N is at s_vsp_base + N pages. */
	void __pm		*s_vsp_base;
	u64			s_frame_pfn0;	/* pfn of data frame 0 */
	/* The kernel PTE pages of the range, one per 2 MiB of addresses. */
	pte_t			**s_vsp_ptes;
	/*
	 * Sparse file systems: a bit per logical page without a frame, kept
	 * with the page table by the swaps (atomic bit operations); NULL
	 * when every logical page has one.
	 */
	unsigned long		*s_noframe;
	/* The same for pages whose entry is VSMFS_PTE_UNWRITTEN. */
	unsigned long		*s_unwritten;
	/*
	 * A bit per VSP whose pages may not all have frames in order (frame
	 * of page i == frame of page 0 + i): found at mount, set by every
	 * swap since (atomic, read before set), never cleared while
	 * mounted. A VSP without it is reached whole through the device
	 * mapping, and the allocator keeps such VSPs for large runs.
	 */
	unsigned long		*s_vsp_mixed;

	/* Callbacks the upper layers register below them (set at mount). */
	const struct vsmfs_trans_aops	*s_trans_aops;
	const struct vsmfs_trans_iops	*s_trans_iops;
	const struct vsmfs_jclient_ops	*s_jclient;

	/*
	 * Metadata cache (mcache.c), transactions (trans*.c) and the journal
	 * (journal.c, jcommit.c, jgc.c, recovery.c); the lock order is above.
	 */
	/*
	 * What every CPU's handles write is kept on cache lines of its own,
	 * apart from what they only read (the fields above, s_mfix):
	 * otherwise each write of one CPU would make the others miss on
	 * both.
	 */
	struct mutex		s_trans_mutex ____cacheline_aligned_in_smp;
	struct mutex		s_jplace_mutex;	/* journal placement (journal.c) */
	/*
	 * A handle wants s_handles_sem for writing, or holds it: shared
	 * handles wait on @s_excl_wq instead of taking it before the writer,
	 * until it ends (@s_excl_ends counts the ends). Every shared handle
	 * reads the first two; only handles of the other kind write them.
	 */
	atomic_t		s_excl ____cacheline_aligned_in_smp;
	atomic_t		s_excl_ends;
	struct vsmfs_handles_sem	s_handles_sem;	/* shared handles (trans_shared.c) */
	wait_queue_head_t	s_excl_wq;
	/*
	 * Transactions that freed logical pages and released s_trans_mutex
	 * before their commit (vsmfs_wait_freed()).
	 */
	atomic_t		s_freeing;
	/*
	 * Turns of handles that found the running transaction too full for
	 * them twice (trans.c, "Turns"): the tickets taken, and the one
	 * served, on a line of their own that every handle reads as it
	 * begins and only such handles write. Handles wait on @s_turn_wq.
	 */
	atomic_t		s_turn_next ____cacheline_aligned_in_smp;
	atomic_t		s_turn_served;
	wait_queue_head_t	s_turn_wq;
	/* Device block -> vsmfs_mblk. */
	struct xarray		s_mblks ____cacheline_aligned_in_smp;
	struct vsmfs_mblk	**s_mfix;	/* the same, below data_start */
	u64			s_nmfix;	/* entries of s_mfix */
	/*
	 * The running transaction (compound, under s_trans_mutex): what the
	 * handles ended since the last commit left for the next one.
	 */
	struct vsmfs_running	s_run ____cacheline_aligned_in_smp;
	struct vsmfs_undo_log	s_undo;		/* the running handle's, s_trans_mutex */
	/*
	 * Last transaction whose commit has finished (s_commit_wq), written
	 * to PM or dropped unwritten.
	 */
	atomic64_t		s_commit_tid;
	/*
	 * First transaction dropped unwritten once errors=remount-ro acted, 0
	 * if none: it and every later one are lost (vsmfs_trans_commit_tid()).
	 */
	atomic64_t		s_lost_tid;
	/* Above every fast-record order an evicted inode used; its changes' tid (fcommit.c). */
	atomic64_t		s_fc_seq, s_fc_evict_tid;
	wait_queue_head_t	s_commit_wq;
	struct delayed_work	s_commit_work;	/* commit= timer */
	struct vsmfs_journal	*s_journal;	/* under s_trans_mutex */
	u32			s_trans_max;	/* its blocks: vsmfs_trans_max_blocks() */
	struct vsmfs_jopts	s_jopts;	/* mount options, under both */

	/* Allocation (alloc.c), under s_trans_mutex. */
	u64			s_free_pages;
	u64			s_small_cursor;	/* next logical page for small runs */
	/*
	 * VSPs that may be partly used: those found so at mount, and those
	 * whose page bits changed since the small-run search last found them
	 * wholly free or without a free page (alloc.c). Under s_trans_mutex.
	 */
	unsigned long		*s_vsp_partly;
	/*
	 * VSPs a CPU's page pool refills from (struct vsmfs_page_pool.vsp):
	 * passed over by the other pools' refills. Under s_trans_mutex.
	 */
	unsigned long		*s_vsp_pooled;
	u64			s_vsp_cursor;	/* next VSP to try for large runs */
	/*
	 * I-numbers: the free count, per CPU as shared metadata handles take
	 * them beside each other (with atomic sets of their bits), exact
	 * under s_trans_mutex with no shared handle running (its total, in
	 * the line of its lock, changes once per batch of a CPU); and each
	 * CPU's cursor, a hint of where to look next (vsmfs_ino_region()),
	 * in the read-mostly line below.
	 */
	struct percpu_counter	s_free_inodes;
	/*
	 * Per-CPU shares of the running transaction (trans_shared.c). This
	 * line is read on every shared handle and write, and written by none of
	 * them: the locks above and below keep to lines of their own.
	 */
	struct vsmfs_cpu_share __percpu *s_cpu_share ____cacheline_aligned_in_smp;
	u64 __percpu		*s_ino_cursors;
	/* Per-CPU page pools; they may hold pages while @s_pools_on. */
	struct vsmfs_page_pool __percpu *s_pools;
	bool			s_pools_on;
	/* The pool a commit last gave pages back to (s_trans_mutex). */
	struct vsmfs_page_pool	*s_pool_hint;
	/* An unlinked inode could not be freed at eviction (set once). */
	bool			s_orphans_left;

	/* Hot-inode aggregation (aggr.c). */
	struct vsmfs_aopts	s_aopts;	/* changed only by remount */
	spinlock_t		s_aggr_lock ____cacheline_aligned_in_smp; /* s_hot, i_hot */
	struct list_head	s_hot;		/* hot inodes open for writing */
	struct delayed_work	s_aggr_work;
	/* Used by the worker only: slot -> i-number, and the window size. */
	u32			*s_slot_ino;
	u64			s_window;
	u64			s_slot_gen;	/* exchanges of slots, from 1 (i_slot_gen) */

	/* Data path, from the mount options; changed only by remount. */
	unsigned int		s_data_mode;	/* VSMFS_DATA_* */
	unsigned int		s_cow_mode;	/* VSMFS_COW_* */
	unsigned int		s_tlb_mode;	/* VSMFS_TLB_* */

	/* What the inode layer takes from the upper layers (super.c). */
	const struct vsmfs_inode_ops *s_iops;

	/* Counters (stats.h) and their sysfs directory (sysfs.c). */
	struct vsmfs_stats __percpu *s_stats;
	struct kobject		s_kobj;
	struct completion	s_kobj_unregister;
};

/* data= mount option: how overwrites reach PM. */
enum {
	VSMFS_DATA_ATOMIC,	/* copy-on-write: every write() is atomic */
	VSMFS_DATA_INPLACE,	/* overwrite in place: not atomic */
};

/* errors= mount option: what a corruption found at run time does. */
enum {
	VSMFS_ERRORS_RO,	/* make the file system read-only (default) */
	VSMFS_ERRORS_CONTINUE,	/* go on, the error is only recorded */
	VSMFS_ERRORS_PANIC,	/* panic the kernel */
};

/* cow= mount option: the grain of copy-on-write with data=atomic. */
enum {
	VSMFS_COW_MULTI,	/* whole superpages by index, parts by PTE swap */
	VSMFS_COW_PAGE,		/* every page on its own */
	VSMFS_COW_SUPERPAGE,	/* every touched superpage copied whole */
};

/* How stale translations of swapped pages are shot down (tlb=). */
enum {
	VSMFS_TLB_LAZY,		/* by each CPU before it next uses the range */
	VSMFS_TLB_EAGER,	/* on every CPU before the write returns */
};

/*
 * struct vsmfs_mblk - DRAM copy of a metadata block
 *
 * The DRAM copy is the current version; a commit writes it to the journal,
 * and the home block on PM is brought up to date only by a checkpoint, so
 * metadata is never read from its home block while mounted.
 */
struct vsmfs_jcopy;

struct vsmfs_mblk {
	u64			m_blk;		/* device block */
	struct list_head	m_dirty;	/* on the transaction's list */
	bool			m_is_dirty;
	/* Inode table: slots written since it last went home (vsmfs_jcount_itable()). */
	unsigned long		m_dirty_slots;
	/*
	 * The block as it was before the running handle first changed it
	 * (vsmfs_trans_get_write_access()), NULL when that handle has not;
	 * on the handle's undo list through @m_undo. @m_ranged: the handle
	 * saved parts of it instead (vsmfs_trans_get_write_access_range(),
	 * s_undo). All under s_trans_mutex.
	 */
	u8			*m_shadow;
	struct list_head	m_undo;
	bool			m_ranged;
	/*
	 * For deltas computed in DRAM (vsmfs_mblk_commit_masks()), under
	 * s_trans_mutex, or m_jlock for a commit that froze the block
	 * (vsmfs_jcopy_masks()): @m_wmask, the words the last commit of the block
	 * changed; @m_dmask, of a commit that does not freeze it, those in
	 * which the version its delta overwrites (the one before the last)
	 * may differ from the new one. Each is known only if its _ok flag is
	 * set: not for a block read from PM since its last commit.
	 */
	u64			m_wmask[VSMFS_JMASK_WORDS];
	u64			m_dmask[VSMFS_JMASK_WORDS];
	bool			m_wmask_ok, m_dmask_ok;
	/*
	 * @m_cmask: the words the handles ended in the running transaction
	 * changed; @m_hnew: the block joined the running transaction in the
	 * handle now running (an abort takes it out again). @m_fcmask: those
	 * its fast records carry (vsmfs_fc_carried()); @m_newtid: the
	 * transaction that made it of a free page (vsmfs_trans_new_block());
	 * @m_fchome: the commit may write it home (jcommit.c, "Home writes"),
	 * @m_fcwmask: as its fast records carry it, only the words in m_wmask.
	 */
	u64			m_cmask[VSMFS_JMASK_WORDS];
	atomic_long_t		m_fcmask[VSMFS_JMASK_WORDS];
	u64			m_newtid;
	bool			m_hnew, m_fchome, m_fcwmask;
	/*
	 * Page bitmap blocks: bits of runs reserved in DRAM
	 * (vsmfs_resv_take()), also set in @m_data so that the allocator
	 * skips them, and left out of every version the journal writes
	 * (vsmfs_mblk_commit_view()). NULL until the block has one; under
	 * s_trans_mutex.
	 */
	unsigned long		*m_resv;
	/*
	 * The block's bytes: a page of its own, so that the structure fits a
	 * small slab object and a cached block takes one page of DRAM, not
	 * the two of an 8 KiB kmalloc object.
	 */
	u8			*m_data;
	/*
	 * A commit that handed s_trans_mutex over before writing the block
	 * to the journal (journal.c, step 0): @m_jc, its note of the block,
	 * is set by the commit under s_trans_mutex and s_handles_sem (held
	 * for writing), and cleared under @m_jlock by the commit once it has
	 * written the block, or before that by the first task to change the
	 * block, which gives the commit a copy (vsmfs_mblk_freeze()).
	 * @m_jwait: a task waits for the commit to clear @m_jc.
	 */
	spinlock_t		m_jlock;
	struct vsmfs_jcopy	*m_jc;
	bool			m_jwait;
};

/*
 * Note word @w of @mb in m_cmask from a shared handle, beside others that
 * note words of the same block: atomically, but only if it is not noted
 * yet. Bits are cleared only by a commit or a handle of the other kind,
 * which hold s_handles_sem for writing, so a bit found set stays set
 * until the handle ends. Most words a stream of handles changes are noted
 * already (the times of a file, a bitmap word, the page table entries of
 * a file overwritten at random), and a bit found set then costs no locked
 * write to a line the handles of other CPUs note words in too.
 */
static inline void vsmfs_note_word_shared(struct vsmfs_mblk *mb, unsigned int w)
{
	if (!test_bit(w, (unsigned long *)mb->m_cmask))
		set_bit(w, (unsigned long *)mb->m_cmask);
}

/*
 * Note in @mb's m_cmask the words of [@w0, @w0 + @n) that differ between
 * @old and @cur: a mask word at a time. With @shared, beside the shared
 * handles of other CPUs noting words of the same block: one test, and an
 * atomic OR only if a bit is missing (see vsmfs_note_word_shared()).
 */
static inline void vsmfs_note_changed(struct vsmfs_mblk *mb, const u64 *old, const u64 *cur,
				      unsigned int w0, unsigned int n, bool shared)
{
	while (n) {
		unsigned int sh = w0 % 64, k = min(n, 64 - sh), w;
		unsigned long *m = (unsigned long *)&mb->m_cmask[w0 / 64], bits = 0;

		for (w = 0; w < k; w++)
			if (old[w] != cur[w])
				bits |= 1UL << (sh + w);
		if (!shared)
			*m |= bits;
		else if ((READ_ONCE(*m) & bits) != bits)
			atomic_long_or(bits, (atomic_long_t *)m);
		old += k;
		cur += k;
		w0 += k;
		n -= k;
	}
}

/*
 * Note slot @slot of inode-table block @mb as written since the block was
 * last written home (m_dirty_slots, a statistic of hot-inode aggregation):
 * atomically, but only if it is not noted yet, so that the handles of
 * several CPUs changing slots of one block (hot inodes aggregated into it)
 * do not all write the line that holds the word.
 */
static inline void vsmfs_slot_dirty(struct vsmfs_mblk *mb, unsigned int slot)
{
	if (!test_bit(slot, &mb->m_dirty_slots))
		set_bit(slot, &mb->m_dirty_slots);
}

/* In-core inodes an aborted transaction reloads from their slots. */
#define VSMFS_TRANS_INODES	4

/*
 * struct vsmfs_trans - a running transaction
 *
 * The undo state (@t_undo to @t_vsp_cursor) lets vsmfs_trans_abort() put
 * DRAM back as it was at vsmfs_trans_begin().
 */
struct vsmfs_trans {
	struct vsmfs_sb_info	*t_sbi;
	struct list_head	t_dirty;	/* vsmfs_mblk.m_dirty */
	struct list_head	t_undo;		/* vsmfs_mblk.m_undo */
	struct inode		*t_inodes[VSMFS_TRANS_INODES];
	unsigned int		t_ninodes;
	unsigned int		t_dirs;		/* of t_inodes: entries changed */
	u64			t_free_pages;	/* allocator state at begin */
	s64			t_ino_delta;	/* s_free_inodes changed since */
	u64			t_small_cursor;
	u64			t_vsp_cursor;
	unsigned int		t_nblocks;
	unsigned int		t_ndata;	/* dirty blocks in the data area */
	/* Room vsmfs_fill_holes() and vsmfs_punch_frames() leave to the rest. */
	unsigned int		t_keep;
	int			t_error;
	bool			t_freed;	/* logical pages freed */
	bool			t_overflow;	/* more blocks than the journal holds */
	/* The handle may use the mapping layer (vsmfs_trans_begin_meta()). */
	bool			t_vsp;
	/*
	 * Compound transactions: the handle ends in the running transaction
	 * unless @t_sync; @t_nfrees is the length of s_run.frees at begin,
	 * and @t_forgot holds blocks that earlier handles dirtied and this
	 * one dropped from the transaction (vsmfs_journal_forget()).
	 */
	bool			t_sync;
	unsigned int		t_nfrees;
	struct list_head	t_forgot;
	/* vsmfs_hold_start() at s_trans_mutex; vsmfs_hold_clock() if @t_shared */
	u64			t_locked;
	unsigned int		t_nofs;		/* memalloc_nofs_save() */
	/*
	 * Where the handle saves parts of blocks: sbi->s_undo, or with
	 * @t_shared (vsmfs_trans_begin_shared()) a log of its own. A shared
	 * metadata handle may still add @t_credits blocks to the running
	 * transaction (@t_added: it added one), and allocated i-number
	 * @t_ino (0 if none) in bitmap block @t_ino_mb. @t_ino_freed: it
	 * freed an i-number, its last change, which no abort may follow.
	 */
	struct vsmfs_undo_log	*t_log;
	bool			t_shared;
	bool			t_added;
	bool			t_ino_freed;
	u32			t_credits;
	u64			t_ino;
	struct vsmfs_mblk	*t_ino_mb;
	/*
	 * A page its caller reserved for a new metadata block (a directory's,
	 * the first attribute's: vsmfs_resv_begin_shared()), or NULL; the
	 * block the shared handle made of it (vsmfs_resv_new_block()), which
	 * an abort takes out of the running transaction
	 * (vsmfs_trans_abort_shared()), or NULL.
	 */
	const struct vsmfs_resv	*t_dpage;
	struct vsmfs_mblk	*t_fresh;
	/*
	 * The inode the handle created (vsmfs_new_inode()), which an abort
	 * discards; @t_aborted: the handle was aborted, by its caller or by
	 * its end (an error recorded, errors=remount-ro).
	 */
	struct inode		*t_new_inode;
	bool			t_aborted;
	/*
	 * Pages a shared metadata handle marked unwritten as its last change,
	 * with no copy saved (vsmfs_pt_unwritten()): an abort marks them
	 * written again (vsmfs_trans_abort_shared()).
	 */
	u64			t_unw_lpn;
	u64			t_unw_count;
	/*
	 * Scratch runs of the committing handle's transaction that go back
	 * to their page pools once the commit is durable, after it let the
	 * locks go (vsmfs_trans_apply_frees()): @t_nlate of them, first in
	 * @t_late, the transaction's array of runs (@t_late_max entries).
	 */
	struct vsmfs_free_run	*t_late;
	unsigned int		t_nlate, t_late_max;
	/*
	 * Fast commits: @t_fc_ok, the caller's word that a shared metadata
	 * handle changes only words of one inode's slot (an append into
	 * pages its file owns, a change of attributes) and, @t_fc_move, the
	 * page table entries of a run moved to the pages it took; @t_fc_inode,
	 * that inode, noted; @t_fc_mb and @t_fc_off, its slot. Checked as the
	 * handle ends (vsmfs_trans_fc_settle()).
	 */
	bool			t_fc_ok;
	u64			t_fc_claim, t_fc_move;	/* taken, moved: lpn | count << 48 */
	struct inode		*t_fc_inode;
	struct vsmfs_mblk	*t_fc_mb;
	unsigned int		t_fc_off;
	/* A create; a rename in a directory, link, unlink (@t_fc_gone) of @t_fc_ren: trans_fc.c. */
	struct inode		*t_fc_dir, *t_fc_ren;
	bool			t_fc_gone;
	struct vsmfs_mblk	*t_fc_imb, *t_fc_dmb;
	unsigned int		t_fc_ioff, t_fc_doff;
};

/* Runs of page swaps a shared handle can take back. */
#define VSMFS_WHANDLE_SWAPS	8
/* Runs of page table entries an inode's fast record may carry. */
#define VSMFS_FC_RUNS		8
#define VSMFS_FC_LPN_MASK	((1ULL << 48) - 1)
/* One shared handle in this many has its hold time measured (a power of 2). */
#define VSMFS_HOLD_SAMPLE	16

/*
 * struct vsmfs_whandle - a handle that runs beside others (trans_shared.c)
 * @h_sbi: the file system
 * @h_credits: blocks it may still add to the running transaction
 * @h_frees: entries of s_run.frees it reserved
 * @h_nswaps: runs of page swaps it made, in @h_swap: {a, b, count}
 * @h_nresv: reservations it ends, in @h_resv, added to s_run.frees when
 *	it ends (vsmfs_whandle_defer_resv())
 * @h_t0: vsmfs_hold_clock() once it held s_handles_sem, for the handles whose
 *	hold time is sampled (trans_shared_hold_ns), else 0
 * @h_claim: a reservation whose pages it takes, ended by the commit that
 *	sets their bits (vsmfs_whandle_claim()); count 0 if none
 */
struct vsmfs_whandle {
	struct vsmfs_sb_info	*h_sbi;
	u32			h_credits;
	unsigned int		h_frees;
	unsigned int		h_nswaps;
	unsigned int		h_nresv;
	u64			h_t0;
	u64			h_swap[VSMFS_WHANDLE_SWAPS][3];
	struct vsmfs_resv	h_resv[VSMFS_WHANDLE_SWAPS], h_claim;
	/* Entries marked written outside the swaps (lpn, count), for fast commits. */
	u64			h_written[2];
};

struct vsmfs_dir_index;

#define VSMFS_SWAP_RANGES	8	/* ranges invalidated one page at a time */
#define VSMFS_SWAP_INVLPG	64	/* most pages invalidated one at a time */

/*
 * struct vsmfs_swap - a batch of page swaps sharing one TLB shootdown
 *
 * A small batch remembers the logical page ranges it changed, so the
 * shootdown invalidates just those pages; a larger one flushes the TLB.
 */
struct vsmfs_swap {
	struct vsmfs_sb_info	*sw_sbi;
	u64			sw_pages;	/* pages swapped since the last flush */
	unsigned int		sw_nr;		/* ranges in sw_lpn/sw_count */
	bool			sw_all;		/* too many: flush everything */
	/*
	 * The second run of each swap is not shot down by this batch: it is
	 * a staged write's scratch run, shot down by the commit that frees
	 * it (vsmfs_trans_apply_frees()), as nothing reads it before.
	 */
	bool			sw_defer_b;
	/*
	 * The caller uses none of the swapped pages through the mapping
	 * layer before its use of it ends (tlb=lazy): this CPU drops its
	 * entries at its next vsmfs_vsp_enter(), as the others do, even
	 * with a use open (vsmfs_swap_flush()).
	 */
	bool			sw_unused;
	u64			sw_lpn[VSMFS_SWAP_RANGES];
	u64			sw_count[VSMFS_SWAP_RANGES];
};

/*
 * struct vsmfs_inode_info - in-core inode
 *
 * @i_idx_sem protects the index and the runs behind it against the page
 * fault path, which cannot take the inode lock: shared to look up and
 * copy through runs, exclusive to change them. The lock order is above
 * struct vsmfs_sb_info.
 *
 * @i_dir is the DRAM index of a directory (dir.c), NULL until first use:
 * published with a release store, changed under the directory's i_rwsem
 * held exclusive, freed at eviction.
 */
struct vsmfs_inode_info {
	struct rw_semaphore	i_idx_sem;
	struct vsmfs_dir_index	*i_dir;
	u32			i_flags;	/* VSMFS_IFLAG_* */
	u32			i_tail_key;	/* 1 + key owning its VSP's tail, or 0 */
	u64			i_parent;	/* directory: parent i-number, 0 if unknown */
	u64			i_pages;	/* logical pages owned */
	struct timespec64	i_crtime;	/* creation (statx btime) */
	/* Last transaction that changed the inode (fsync), s_trans_mutex. */
	u64			i_tid;
	/* Its slot, found while s_slot_gen was @i_slot_gen (inode.c). */
	u64			i_slot_gen;
	u32			i_slot;
	/*
	 * Fast commits (fcommit.c), of transaction @i_fc_tid: @i_fc_bad,
	 * why no fast record describes its changes in it (VSMFS_FCB_*);
	 * @i_fc_runs, the page table entries its shared handles changed in
	 * it since its last record (lpn | count << 48); @i_fc_done, a
	 * record made its changes in @i_tid durable; @i_fc_seq, order of
	 * its records. Changed by the handles that change the inode, read
	 * by an fsync that keeps them out (i_rwsem, invalidate_lock and a
	 * shared handle).
	 */
	u64			i_fc_tid, i_fc_done, i_fc_seq;
	u8			i_fc_nruns, i_fc_bad;
	u64			i_fc_runs[VSMFS_FC_RUNS];
	/*
	 * @i_fc_gen, changes in @i_fc_tid; @i_fc_cov, those records carry (a
	 * directory). A create a record has still to carry: @i_fc_dir, its
	 * directory, whose @i_fc_gen it made @i_fc_dgen, @i_fc_span, the
	 * entry's words (block << 9 | word, count << 48). @i_fc_gone, an
	 * unlink in a directory its next record may carry. See trans_fc.c.
	 */
	u32			i_fc_gen, i_fc_cov, i_fc_dgen;
	u64			i_fc_dir;
	u64			i_fc_span[2];
	struct vsmfs_fc_gone	*i_fc_gone;
	/* The xattr block's logical page (0: none); it and its copy: i_xattr_sem. */
	u64			i_xattr;
	struct rw_semaphore	i_xattr_sem;
	union {		/* a fast symlink's target, or its index */
		u64		i_index[VSMFS_NDIRECT + 2];	/* direct, ind, dind */
		char		i_inline[VSMFS_INLINE_LEN + 1];
	};
	/* The index blocks a lookup found last, per level (vsmfs_idx_mblk()). */
	struct vsmfs_mblk	*i_idx_mb[2];
	/*
	 * The files open for writing (i_writers) and the transactions that
	 * wrote the inode meanwhile (i_wcount); on sbi->s_hot from the
	 * count's reaching the threshold to the last close. Listed, unlisted
	 * and i_writers changed under i_aggr_lock (then sbi->s_aggr_lock).
	 */
	struct list_head	i_hot;
	atomic_t		i_wcount;
	spinlock_t		i_aggr_lock;	/* i_writers, listing on s_hot */
	unsigned int		i_writers;
	/*
	 * GiBs of the file a fault mapped with one PUD (dax.c): index the
	 * GiB, value its first device block; VSMFS_PUD_DIRTY when mapped
	 * writable since its last write-back, VSMFS_PUD_MAPPED until a
	 * truncation or copy-on-write unmapped it and waited for its pins.
	 */
	struct xarray		i_pud;
#define VSMFS_PUD_DIRTY		XA_MARK_0
#define VSMFS_PUD_MAPPED	XA_MARK_1
	struct inode		vfs_inode;
};

/*
 * struct vsmfs_inode_ops - what the inode layer takes from the layers above
 * it, which register it at mount (sbi->s_iops, super.c): the operations it
 * gives each kind of inode it reads or makes (vsmfs_set_ops()), and what it
 * calls as an inode is evicted
 * @file_iops: regular files
 * @file_fops: their file operations
 * @file_aops: their address space operations
 * @dir_iops: directories
 * @dir_fops: their file operations
 * @symlink_iops: symlinks whose target is in a block
 * @fast_symlink_iops: symlinks whose target is in the inode
 * @special_iops: device nodes, FIFOs and sockets
 * @evict: frees what the upper layers keep in DRAM for an inode (a
 *	directory's index), before clear_inode(); any inode may be passed
 */
struct vsmfs_inode_ops {
	const struct inode_operations		*file_iops;
	const struct file_operations		*file_fops;
	const struct address_space_operations	*file_aops;
	const struct inode_operations		*dir_iops;
	const struct file_operations		*dir_fops;
	const struct inode_operations		*symlink_iops;
	const struct inode_operations		*fast_symlink_iops;
	const struct inode_operations		*special_iops;
	void (*evict)(struct inode *inode);
};

/* Index entries: the run of logical pages behind one key. */
static inline u64 vsmfs_idx_lpn(u64 e)
{
	return e & VSMFS_IDX_LPN_MASK;
}

static inline u64 vsmfs_idx_count(u64 e)
{
	return e >> VSMFS_IDX_COUNT_SHIFT;
}

static inline u64 vsmfs_idx_make(u64 lpn, u64 count)
{
	return lpn | count << VSMFS_IDX_COUNT_SHIFT;
}

/* Symlink targets that fit in the inode are stored there. */
static inline bool vsmfs_inline_symlink(struct inode *inode)
{
	return S_ISLNK(inode->i_mode) && inode->i_size <= VSMFS_INLINE_LEN;
}

#define VSMFS_MAX_KEY	(VSMFS_NDIRECT + VSMFS_IND_ENTRIES + \
			 (u64)VSMFS_IND_ENTRIES * VSMFS_IND_ENTRIES)

/* Largest regular file: every index key maps one 2 MiB piece. */
#define VSMFS_MAX_FILE_SIZE	((loff_t)VSMFS_MAX_KEY << VSMFS_VSP_SHIFT)

static inline struct vsmfs_sb_info *VSMFS_SB(struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct vsmfs_inode_info *VSMFS_I(struct inode *inode)
{
	return container_of(inode, struct vsmfs_inode_info, vfs_inode);
}

/*
 * Kernel address of device block @blk. The one place where a block number
 * becomes a pointer; an out-of-range block is a bug.
 */
static inline void __pm *vsmfs_blk_ptr(struct vsmfs_sb_info *sbi, u64 blk)
{
	if (WARN_ON_ONCE(blk >= sbi->s_dev_blocks))
		return NULL;
	return sbi->s_virt + (blk << VSMFS_BLOCK_SHIFT);
}

/* Add @n to counter @stat of @sbi. */
#define vsmfs_stat_add(sbi, stat, n) \
	this_cpu_add((sbi)->s_stats->v[VSMFS_STAT_##stat], (n))
#define vsmfs_stat_inc(sbi, stat)	vsmfs_stat_add(sbi, stat, 1)

/*
 * Take s_trans_mutex, the file-system-wide lock, counting it
 * (journal_lock_takes): what an operation that should run beside others
 * must not do.
 */
static inline void vsmfs_trans_mutex_lock(struct vsmfs_sb_info *sbi)
{
	mutex_lock(&sbi->s_trans_mutex);
	vsmfs_stat_inc(sbi, journal_lock_takes);
}

/* Messages name the device and the function. */
#define vsmfs_err(sb, fmt, ...) \
	pr_err("vsmfs (%s): %s: " fmt "\n", (sb)->s_id, __func__, ##__VA_ARGS__)
#define vsmfs_err_ratelimited(sb, fmt, ...) \
	pr_err_ratelimited("vsmfs (%s): %s: " fmt "\n", (sb)->s_id, __func__, ##__VA_ARGS__)
#define vsmfs_warn(sb, fmt, ...) \
	pr_warn("vsmfs (%s): %s: " fmt "\n", (sb)->s_id, __func__, ##__VA_ARGS__)
#define vsmfs_info(sb, fmt, ...) \
	pr_info("vsmfs (%s): " fmt "\n", (sb)->s_id, ##__VA_ARGS__)

/* super.c */
struct inode *vsmfs_alloc_inode(struct super_block *sb);
void vsmfs_free_inode(struct inode *inode);

/* sb.c */
extern const char * const vsmfs_errors_names[];
void vsmfs_write_super_locked(struct vsmfs_sb_info *sbi);
void vsmfs_set_clean(struct vsmfs_sb_info *sbi, bool clean);
__printf(5, 6)
void __vsmfs_fs_error(struct super_block *sb, const char *func, unsigned int line,
		      u64 ino, const char *fmt, ...);

/*
 * vsmfs_fs_error() - report a file system error found at run time
 * @sb: the file system
 * @ino: the inode involved, 0 if none
 * @fmt: printf format of the message, then its arguments
 *
 * For corruption of what is on PM (a check that fails on metadata read
 * back), and for anything else that shows the file system inconsistent:
 * never for a failure the file system handles (no memory, no space, a
 * full journal refused before any change), unless it leaves a state only
 * the next mount can finish (a truncation whose later part failed). It logs the message with the
 * device, function, line and inode (rate limited), records the error in
 * the superblock on PM (VSMFS_STATE_ERROR, the error count, the first and
 * the last error's time, function, line and inode; durable when it
 * returns, unless the device is read-only), then acts as the errors=
 * mount option says: continue, make the file system read-only (no commit
 * reaches PM any more, and writes fail with EROFS), or panic.
 *
 * Context: process context, any vsmfs lock held, inside a transaction or
 * not: it takes only s_sb_lock and does not sleep.
 */
#define vsmfs_fs_error(sb, ino, fmt, ...) \
	__vsmfs_fs_error(sb, __func__, __LINE__, ino, fmt, ##__VA_ARGS__)

ssize_t vsmfs_errors_show(struct vsmfs_sb_info *sbi, char *buf);
int vsmfs_set_label(struct vsmfs_sb_info *sbi, const char *label, size_t len);

/* sysfs.c */
u64 vsmfs_stat_read(struct vsmfs_sb_info *sbi, enum vsmfs_stat stat);

/* file.c */
int vsmfs_fsync(struct file *file, loff_t start, loff_t end, int datasync);
extern const struct file_operations vsmfs_file_operations;
extern const struct inode_operations vsmfs_file_inode_operations;

/* cow.c */
u64 vsmfs_atomic_write_max(struct vsmfs_sb_info *sbi, unsigned int cow);

/* dax.c */
extern const struct address_space_operations vsmfs_dax_aops;

/* export.c */
extern const struct export_operations vsmfs_export_ops;

/* dir.c */
extern const struct file_operations vsmfs_dir_operations;
void vsmfs_dir_index_free(struct inode *inode);

/* namei.c */
extern const struct inode_operations vsmfs_dir_inode_operations;

#endif /* _VSMFS_H */
