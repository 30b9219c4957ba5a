// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs metadata cache: the DRAM copies of the metadata blocks.
 *
 * Metadata blocks (inode table, mapping table, page table, bitmaps,
 * directory, index and xattr blocks) are read into DRAM once and changed
 * there by handles, which join the running transaction (trans.c). The DRAM
 * copy is the current version of a block; the journal (journal.c) holds
 * its committed versions, and its home block on PM is brought up to date
 * only by a checkpoint (or by recovery at mount, recovery.c). A block is
 * read from its home block only when it is first cached (vsmfs_mblk_get()
 * says why that is its current version); the copies stay until unmount,
 * those of the fixed regions before the data frames (bitmaps, mapping
 * table, inode table, page table) in an array indexed by device block
 * (sbi->s_mfix: one load finds the inode slot or page table entry a write
 * changes), the others in an xarray (sbi->s_mblks).
 *
 * A commit that writes its blocks after it handed s_trans_mutex over
 * notes each of them (m_jc, jcommit.c); the first task to change such a
 * block before the commit has written it gives the commit a copy of it
 * first (__vsmfs_mblk_freeze()), as jbd2 gives a committing transaction a
 * frozen buffer. No store to PM is made here: the commit writes the copy.
 */
#include <linux/slab.h>
#include <linux/xarray.h>
#include <linux/bitmap.h>
#include <linux/wait_bit.h>
#include "vsmfs.h"
#include "pmem.h"
#include "fault.h"
#include "badframe.h"
#include "mcache.h"

static struct kmem_cache *vsmfs_mblk_cachep;

/**
 * vsmfs_mblk_cache_create() - the slab cache of metadata block structures
 *
 * Not SLAB_RECLAIM_ACCOUNT: cached blocks stay until unmount, no shrinker
 * gives them back.
 *
 * Context: module initialization.
 * Return: 0 or -ENOMEM.
 */
int vsmfs_mblk_cache_create(void)
{
	vsmfs_mblk_cachep = KMEM_CACHE(vsmfs_mblk, 0);
	return vsmfs_mblk_cachep ? 0 : -ENOMEM;
}

/**
 * vsmfs_mblk_cache_destroy() - destroy the cache of vsmfs_mblk_cache_create()
 *
 * Context: module exit, every file system unmounted.
 */
void vsmfs_mblk_cache_destroy(void)
{
	kmem_cache_destroy(vsmfs_mblk_cachep);
}

/**
 * vsmfs_mcache_init() - start an empty metadata cache
 * @sbi: the file system
 *
 * Context: mount, before the journal is recovered.
 * Return: 0 or -ENOMEM.
 */
int vsmfs_mcache_init(struct vsmfs_sb_info *sbi)
{
	xa_init(&sbi->s_mblks);
	sbi->s_mfix = kvcalloc(sbi->s_layout.data_start, sizeof(*sbi->s_mfix), GFP_KERNEL);
	if (!sbi->s_mfix)
		return -ENOMEM;
	sbi->s_nmfix = sbi->s_layout.data_start;
	return 0;
}

/**
 * vsmfs_mblk_find() - the DRAM copy of a metadata block, if it is cached
 * @sbi: the file system
 * @blk: device block
 *
 * Return: the copy, or NULL if the block was never read.
 */
struct vsmfs_mblk *vsmfs_mblk_find(struct vsmfs_sb_info *sbi, u64 blk)
{
	if (blk >= sbi->s_nmfix)
		return xa_load(&sbi->s_mblks, blk);
	/* Pairs with the cmpxchg_release() of __vsmfs_mblk_get(). */
	return smp_load_acquire(&sbi->s_mfix[blk]);
}

static void vsmfs_mblk_free(struct vsmfs_mblk *mb)
{
	kfree(mb->m_resv);
	free_page((unsigned long)mb->m_data);
	kmem_cache_free(vsmfs_mblk_cachep, mb);
}

/*
 * Whether every word of block @mb (of the inode table, or of a directory)
 * the handles of the committing transaction changed is carried by one of
 * its fast records (m_fcmask, vsmfs_fc_carried()); clears m_fcmask for the
 * next transaction. No record is being written: none is while a commit is
 * in flight (fcommit.c), and the commit's exclusive pass holds
 * s_handles_sem for writing, as each record holds it shared.
 */
static bool vsmfs_mblk_fc_carried(struct vsmfs_mblk *mb)
{
	bool carried = true;
	unsigned long fc, any = 0;
	unsigned int i;

	for (i = 0; i < VSMFS_JMASK_WORDS; i++) {
		fc = atomic_long_read(&mb->m_fcmask[i]);
		if (mb->m_cmask[i] & ~fc)
			carried = false;
		any |= fc;
	}
	if (!any)
		return false;
	vsmfs_mblk_fc_forget(mb);
	return carried;
}

/**
 * vsmfs_mblk_commit_masks() - the masks of a block in the commit of its changes
 * @mb: the block, changed by the committing transaction
 * @tid: that transaction
 * @delta: deltas are on for it (journal_delta)
 * @dmask: the delta mask, filled if known
 *
 * Deltas in DRAM. A delta of a commit writes the new version of a block
 * over its old version in the journal, the version before the last one
 * committed (vsmfs_jplace()). So the words it must write are those the
 * last commit of the block changed (m_wmask) and those the handles of
 * this one changed (m_cmask, the union of each handle's difference
 * between the block and its shadow): the delta mask, known without
 * reading the journal block. A block read from PM since its last commit
 * has no m_wmask: its next delta reads PM, and sets m_wmask for the one
 * after. m_cmask, which becomes the next m_wmask, starts empty for the
 * next transaction; and whether the commit may write the block home
 * (m_fchome, m_fcwmask) is decided.
 *
 * Context: no handle changes the block or notes its words: the commit
 * keeps every handle out, or, for a block a commit froze
 * (vsmfs_jcopy_masks()), @mb->m_jlock held and the block as the
 * transaction left it.
 * Return: whether @dmask is known.
 */
bool vsmfs_mblk_commit_masks(struct vsmfs_mblk *mb, u64 tid, bool delta, u64 *dmask)
{
	/* Home writes (jcommit.c): carried, or made of a free page. */
	bool carried = vsmfs_mblk_fc_carried(mb), known = false;
	unsigned int i;

	mb->m_fchome = delta && (carried || mb->m_newtid == tid);
	/*
	 * Carried, of a page in use at the last commit: its home holds that
	 * commit's version if the commit writes it there, and differs from
	 * this one in the words m_wmask gets below.
	 */
	mb->m_fcwmask = mb->m_fchome && mb->m_newtid != tid;
	mb->m_dmask_ok = false;
	/*
	 * With deltas off (journal_delta=off, which a remount may turn on
	 * again) the commit's change is not noted: forget the last.
	 */
	if (!delta) {
		mb->m_wmask_ok = false;
	} else {
		if (mb->m_wmask_ok) {
			for (i = 0; i < VSMFS_JMASK_WORDS; i++)
				dmask[i] = mb->m_wmask[i] | mb->m_cmask[i];
			known = true;
		}
		memcpy(mb->m_wmask, mb->m_cmask, sizeof(mb->m_wmask));
		mb->m_wmask_ok = true;
	}
	memset(mb->m_cmask, 0, sizeof(mb->m_cmask));
	return known;
}

/**
 * vsmfs_jcopy_masks() - take the masks of a block a commit froze
 * @c: the commit's note of the block (m_jc), not yet masked
 *
 * vsmfs_mblk_commit_masks() into @c, with what the commit needs to place
 * and write the block. A commit freezes its blocks while it keeps every
 * handle out, and takes their masks only after it has let them in: so
 * the pass over each block's masks is not part of the time every other
 * handle waits. Whichever comes first takes them: the commit, before it
 * places the blocks, or the first task that changes the block
 * (__vsmfs_mblk_freeze()), before it changes the block or its masks. Until
 * then no task changes the block (each freezes it first), nor its masks
 * (each notes its words after its change); and no fast record runs while
 * the commit is in flight.
 *
 * Context: @c->mb->m_jlock held.
 */
void vsmfs_jcopy_masks(struct vsmfs_jcopy *c)
{
	struct vsmfs_mblk *mb = c->mb;

	lockdep_assert_held(&mb->m_jlock);
	c->mask_ok = vsmfs_mblk_commit_masks(mb, c->tid, c->jdelta, c->mask);
	c->fchome = mb->m_fchome;
	c->wmask_ok = mb->m_fcwmask;
	if (c->wmask_ok)
		memcpy(c->wmask, mb->m_wmask, sizeof(c->wmask));
	c->masked = true;
}

/**
 * vsmfs_mblk_commit_view() - a block as the journal is to write it
 * @mb: the block
 * @buf: a block-sized buffer, used if needed
 *
 * Bits of runs reserved in DRAM (m_resv) are left out: a crash must find
 * their pages free.
 *
 * Context: s_trans_mutex held, or the block noted by a commit that has
 * still to write it and @mb->m_jlock held (journal.c).
 * Return: @mb->m_data, or @buf holding it without the reserved bits.
 */
const void *vsmfs_mblk_commit_view(struct vsmfs_mblk *mb, void *buf)
{
	if (!mb->m_resv)
		return mb->m_data;
	bitmap_andnot(buf, (const unsigned long *)mb->m_data, mb->m_resv,
		      VSMFS_BLOCK_SIZE * BITS_PER_BYTE);
	return buf;
}

/**
 * vsmfs_mcache_destroy() - free every cached metadata block
 * @sbi: the file system
 *
 * Context: unmount or failed mount, no transaction running.
 */
void vsmfs_mcache_destroy(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_mblk *mb;
	unsigned long idx;
	u64 i;

	for (i = 0; i < sbi->s_nmfix; i++)
		if (sbi->s_mfix[i])
			vsmfs_mblk_free(sbi->s_mfix[i]);
	kvfree(sbi->s_mfix);
	sbi->s_mfix = NULL;
	sbi->s_nmfix = 0;
	xa_for_each(&sbi->s_mblks, idx, mb)
		vsmfs_mblk_free(mb);
	xa_destroy(&sbi->s_mblks);
}

/**
 * __vsmfs_mblk_get() - DRAM copy of a metadata block
 * @sbi: the file system
 * @blk: device block
 *
 * A block not yet cached has no version in the journal newer than its home
 * block: recovery wrote every committed version home, and a block committed
 * since is cached until unmount.
 *
 * Context: process context. The copy lives until unmount.
 * Return: the block, or an ERR_PTR.
 */
struct vsmfs_mblk *__vsmfs_mblk_get(struct vsmfs_sb_info *sbi, u64 blk)
{
	struct vsmfs_mblk *mb, *old;
	void __pm *src;

	mb = vsmfs_mblk_find(sbi, blk);
	if (mb)
		return mb;
	/*
	 * A block number from a damaged index (0 when a logical page is out
	 * of range) must not become a metadata block written home.
	 */
	if (blk <= VSMFS_SB_BACKUP_BLOCK || blk == sbi->s_layout.sb_backup ||
	    (blk >= sbi->s_layout.journal_start &&
	     blk < sbi->s_layout.journal_start + sbi->s_layout.journal_blocks))
		return ERR_PTR(-EFSCORRUPTED);
	src = vsmfs_blk_ptr(sbi, blk);
	if (!src)
		return ERR_PTR(-EFSCORRUPTED);
	/* A directory, index or attribute block on a frame found bad. */
	if (vsmfs_blk_bad(sbi, blk)) {
		vsmfs_fs_error(sbi->s_sb, 0, "metadata block %llu is on a bad frame", blk);
		return ERR_PTR(-EIO);
	}
	mb = vsmfs_fault(VSMFS_FAULT_MBLK_ALLOC) ? NULL :
	     kmem_cache_alloc(vsmfs_mblk_cachep, GFP_NOFS);
	if (!mb)
		return ERR_PTR(-ENOMEM);
	BUILD_BUG_ON(VSMFS_BLOCK_SIZE > PAGE_SIZE);
	mb->m_data = (u8 *)__get_free_page(GFP_NOFS);
	if (!mb->m_data) {
		kmem_cache_free(vsmfs_mblk_cachep, mb);
		return ERR_PTR(-ENOMEM);
	}
	mb->m_blk = blk;
	mb->m_is_dirty = false;
	mb->m_dirty_slots = 0;
	mb->m_shadow = NULL;
	mb->m_ranged = false;
	mb->m_hnew = false;
	memset(mb->m_cmask, 0, sizeof(mb->m_cmask));
	memset(mb->m_fcmask, 0, sizeof(mb->m_fcmask));
	mb->m_fchome = false;
	mb->m_fcwmask = false;
	mb->m_newtid = 0;
	mb->m_resv = NULL;
	mb->m_wmask_ok = false;
	mb->m_dmask_ok = false;
	spin_lock_init(&mb->m_jlock);
	mb->m_jc = NULL;
	mb->m_jwait = false;
	INIT_LIST_HEAD(&mb->m_dirty);
	INIT_LIST_HEAD(&mb->m_undo);
	if (vsmfs_read_pm(mb->m_data, src, VSMFS_BLOCK_SIZE)) {
		vsmfs_mblk_free(mb);
		return ERR_PTR(-EIO);
	}
	if (blk < sbi->s_nmfix) {
		/*
		 * Filled in before it is seen: pairs with vsmfs_mblk_find()
		 * and vsmfs_mblk_get().
		 */
		old = cmpxchg_release(&sbi->s_mfix[blk], NULL, mb);
		if (!old)
			return mb;
		vsmfs_mblk_free(mb);
		return vsmfs_mblk_find(sbi, blk);
	}
	old = xa_cmpxchg(&sbi->s_mblks, blk, NULL, mb, GFP_NOFS);
	if (old) {
		vsmfs_mblk_free(mb);
		return xa_is_err(old) ? ERR_PTR(xa_err(old)) : old;
	}
	return mb;
}

/**
 * __vsmfs_mblk_freeze() - copy a block for the commit that has still to write it
 * @sbi: the file system
 * @mb: the block, about to be changed, noted by a commit (m_jc) that may
 *	have written it meanwhile
 *
 * As jbd2 gives a committing transaction a frozen copy of a buffer that a
 * handle is about to change: the commit then writes the block as its
 * transaction left it, and the caller may change the DRAM block at once.
 * If no memory is left for the copy, this waits for the commit to write
 * the block, which needs neither s_trans_mutex nor s_handles_sem.
 *
 * Context: holds s_trans_mutex or s_handles_sem; may sleep.
 */
void __vsmfs_mblk_freeze(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb)
{
	const void *view;
	void *buf = NULL;
	bool wait = false;

	if (!vsmfs_fault(VSMFS_FAULT_JCOPY_ALLOC))
		buf = kmalloc(VSMFS_BLOCK_SIZE, GFP_NOFS | __GFP_NOWARN);
	spin_lock(&mb->m_jlock);
	/* Its masks as the committing transaction left them, before any change. */
	if (mb->m_jc && !mb->m_jc->masked)
		vsmfs_jcopy_masks(mb->m_jc);
	if (mb->m_jc && buf) {
		view = vsmfs_mblk_commit_view(mb, buf);
		if (view != buf)
			memcpy(buf, view, VSMFS_BLOCK_SIZE);
		mb->m_jc->src = buf;
		WRITE_ONCE(mb->m_jc, NULL);
		buf = NULL;
		vsmfs_stat_inc(sbi, journal_frozen_copies);
	} else if (mb->m_jc) {
		mb->m_jwait = true;
		wait = true;
	}
	spin_unlock(&mb->m_jlock);
	kfree(buf);
	if (wait)
		wait_var_event(&mb->m_jc, !READ_ONCE(mb->m_jc));
}
