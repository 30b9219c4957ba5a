/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the transaction layer share among themselves: exclusive
 * handles and their undo log (trans.c), shared handles and the per-CPU
 * shares (trans_shared.c), the running transaction and its commit
 * (trans_commit.c). The rest of the module uses the calls in vsmfs.h.
 */
#ifndef _VSMFS_TRANS_H
#define _VSMFS_TRANS_H

#include "vsmfs.h"

/* Scratch runs a CPU keeps for the running transaction, and their pages. */
#define VSMFS_SHRES_RUNS	8
#define VSMFS_SHRES_PAGES	256

/*
 * struct vsmfs_shres - a CPU's share of the running transaction, from which
 * shared handles begin and into which they end without s_run.lock
 * (trans_shared.c, "Per-CPU shares"); used by the tasks on its CPU with
 * preemption disabled, and with s_handles_sem held for writing
 * @credits: blocks reserved in s_run.shared_credits, for no handle yet
 * @frees: entries of s_run.frees reserved in s_run.shared_frees, for no
 *	handle or run yet
 * @handles: shared handles ended here, not yet counted in s_run.handles
 * @nruns: scratch runs ended here, not yet in s_run.frees, each holding
 *	one of the entries reserved
 * @pages: their frames
 * @runs: those runs
 */
struct vsmfs_shres {
	unsigned int		credits;
	unsigned int		frees;
	unsigned int		handles;
	unsigned int		nruns;
	u64			pages;
	struct vsmfs_frun	runs[VSMFS_SHRES_RUNS];
};

/*
 * How long a task spins for s_handles_sem before it sleeps: a handle about
 * to begin beside others while a handle of the other kind or a commit
 * holds it exclusive or waits to (vsmfs_handles_enter()), and one of that
 * kind while shared handles hold it (vsmfs_trans_lock()). Holders of
 * either kind are short (a create, an overwrite's swaps, a commit's
 * freeze, an eviction), and when many tasks create, write and unlink at
 * once a sleep and a wake-up for each waiter cost more than the wait.
 */
#define VSMFS_EXCL_SPIN_NS	(50 * NSEC_PER_USEC)

/*
 * Free space runs short while pages wait in the running transaction to be
 * freed: its commit gives them back. The pages CPUs' shares hold
 * (VSMFS_SHRES_PAGES each at most) are not counted. Exact under
 * s_trans_mutex; a hint beside shared handles.
 */
static inline bool vsmfs_trans_space_short(struct vsmfs_sb_info *sbi)
{
	u64 waiting = READ_ONCE(sbi->s_run.free_pages);

	return waiting &&
	       READ_ONCE(sbi->s_free_pages) < (sbi->s_layout.data_pages >> 4) + waiting;
}

/* Whether a ticket taken is not yet served (see "Turns"). */
static __always_inline bool vsmfs_turn_busy(struct vsmfs_sb_info *sbi)
{
	return atomic_read(&sbi->s_turn_next) != atomic_read(&sbi->s_turn_served);
}

/* trans.c */
void vsmfs_trans_setup(struct vsmfs_trans *t, struct vsmfs_sb_info *sbi, bool vsp);
void vsmfs_trans_lock(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, bool vsp);
void vsmfs_trans_park(struct vsmfs_trans *t);
void vsmfs_turn_wait(struct vsmfs_sb_info *sbi);
bool vsmfs_trans_changed(struct vsmfs_trans *t);
void vsmfs_trans_handle_done(struct vsmfs_trans *t);
void vsmfs_trans_reload_inodes(struct vsmfs_trans *t);
void vsmfs_trans_discard_new(struct vsmfs_trans *t);
void vsmfs_trans_release(struct vsmfs_trans *t);

/* trans_shared.c */
bool vsmfs_hsem_idle(struct vsmfs_sb_info *sbi);
void vsmfs_shres_fold(struct vsmfs_sb_info *sbi);
void vsmfs_shres_reclaim(struct vsmfs_sb_info *sbi);
void vsmfs_trans_end_shared(struct vsmfs_trans *t, bool changed);
void vsmfs_trans_abort_shared(struct vsmfs_trans *t);

/* trans_commit.c */
u64 vsmfs_frun_fill(struct vsmfs_sb_info *sbi, struct vsmfs_frun *f, u64 lpn, u64 count,
		    bool scratch, u64 resv);

#endif /* _VSMFS_TRANS_H */
