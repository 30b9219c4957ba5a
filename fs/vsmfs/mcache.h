/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A commit's note of a block it has still to write (vsmfs_mblk.m_jc),
 * shared by the metadata cache, which gives the commit a copy of the block
 * before a task changes it (__vsmfs_mblk_freeze(), mcache.c), and the
 * commit pipeline that writes it (jcommit.c).
 */
#ifndef _VSMFS_MCACHE_H
#define _VSMFS_MCACHE_H

#include "vsmfs.h"
#include "jcore.h"

/*
 * struct vsmfs_jcopy - a block placed and written outside s_trans_mutex
 * @mb: its DRAM copy, which notes this (m_jc) until it is written
 * @home: its home block
 * @src: NULL while the DRAM block is as the transaction left it; else a
 *	 copy of it as it was, made by the first task that changed it
 *	 since (__vsmfs_mblk_freeze()); both under @mb->m_jlock
 * @dst: the journal block on PM, owned by the commit until it is committed
 * @delta: write only the words that differ from the old version in @dst
 * @mask: with @delta and @mask_ok, the words that may differ (m_dmask)
 * @mask_ok: @mask is known
 * @fchome: m_fchome of the block in this commit
 * @wmask: with @wmask_ok (m_fcwmask), the words a home write stores (m_wmask)
 * @home_write: the block is written home in place, not to the journal
 *	(@dst is its home block)
 * @tid: the committed transaction, and @jdelta: deltas on in it, for the
 *	masks
 * @masked: @mask, @mask_ok, @fchome, @wmask and @wmask_ok are taken
 *	(vsmfs_jcopy_masks(), under @mb->m_jlock): after the commit let
 *	the next handles in, by the commit or by the first task that
 *	changes the block, whichever comes first
 */
struct vsmfs_jcopy {
	struct vsmfs_mblk *mb;
	u64	home;
	void	*src;
	void __pm	*dst;
	u64	tid;
	bool	delta;
	bool	mask_ok;
	bool	fchome;
	bool	wmask_ok;
	bool	home_write;
	bool	jdelta;
	bool	masked;
	u64	mask[VSMFS_JMASK_WORDS];
	u64	wmask[VSMFS_JMASK_WORDS];
};

/* Forget the words of @mb fast records carried (m_fcmask): no record runs. */
static inline void vsmfs_mblk_fc_forget(struct vsmfs_mblk *mb)
{
	unsigned int i;

	for (i = 0; i < VSMFS_JMASK_WORDS; i++)
		atomic_long_set(&mb->m_fcmask[i], 0);
}

/* mcache.c */
const void *vsmfs_mblk_commit_view(struct vsmfs_mblk *mb, void *buf);
bool vsmfs_mblk_commit_masks(struct vsmfs_mblk *mb, u64 tid, bool delta, u64 *dmask);
void vsmfs_jcopy_masks(struct vsmfs_jcopy *c);
int vsmfs_mcache_init(struct vsmfs_sb_info *sbi);
int vsmfs_mblk_cache_create(void);
void vsmfs_mblk_cache_destroy(void);
struct vsmfs_mblk *vsmfs_mblk_find(struct vsmfs_sb_info *sbi, u64 blk);
void vsmfs_mcache_destroy(struct vsmfs_sb_info *sbi);
struct vsmfs_mblk *__vsmfs_mblk_get(struct vsmfs_sb_info *sbi, u64 blk);
void __vsmfs_mblk_freeze(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb);

/*
 * Before a change of @mb's bytes or of its reserved bits: a commit that has
 * still to write the block gets a copy of it first (__vsmfs_mblk_freeze()).
 * The caller holds s_trans_mutex or s_handles_sem, of which a commit that
 * notes blocks holds both, the semaphore for writing: a NULL @m_jc seen
 * here stays NULL until the change is made.
 */
static inline void vsmfs_mblk_freeze(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb)
{
	if (unlikely(READ_ONCE(mb->m_jc)))
		__vsmfs_mblk_freeze(sbi, mb);
}

/*
 * Make @mb->m_cmask the running transaction's alone, for a task that reads
 * it without changing the block: the masks of a commit in flight that
 * froze the block and has not taken them yet are taken now
 * (vsmfs_jcopy_masks()). A block no commit notes (m_jc NULL) had them
 * taken before it was frozen or written.
 */
static inline void vsmfs_mblk_masks_settle(struct vsmfs_mblk *mb)
{
	/*
	 * Acquire: pairs with the release that clears it once the block is
	 * written, after its masks were taken.
	 */
	if (likely(!smp_load_acquire(&mb->m_jc)))
		return;
	spin_lock(&mb->m_jlock);
	if (mb->m_jc && !mb->m_jc->masked)
		vsmfs_jcopy_masks(mb->m_jc);
	spin_unlock(&mb->m_jlock);
}

/* The DRAM copy of block @blk of the fixed regions if it is cached, else NULL. */
static inline struct vsmfs_mblk *vsmfs_mblk_fixed(struct vsmfs_sb_info *sbi, u64 blk)
{
	/* Pairs with the cmpxchg_release() of __vsmfs_mblk_get(). */
	return blk < sbi->s_nmfix ? smp_load_acquire(&sbi->s_mfix[blk]) : NULL;
}

/*
 * The DRAM copy of metadata block @blk (__vsmfs_mblk_get()): a block of the
 * fixed regions cached already, the page table and inode table blocks every
 * write looks up, is one load here.
 */
static inline struct vsmfs_mblk *vsmfs_mblk_get(struct vsmfs_sb_info *sbi, u64 blk)
{
	struct vsmfs_mblk *mb = vsmfs_mblk_fixed(sbi, blk);

	return mb ?: __vsmfs_mblk_get(sbi, blk);
}

#endif /* _VSMFS_MCACHE_H */
