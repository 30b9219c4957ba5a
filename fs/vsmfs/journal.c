// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs metadata cache, transactions and the redo journal.
 *
 * Metadata blocks (inode table, mapping table, page table, bitmaps,
 * directory and index blocks) are read into DRAM once and changed there
 * under a transaction. One transaction runs at a time (s_trans_mutex).
 *
 * Commit, and the order of its stores:
 *   1. file data the transaction makes reachable was written with
 *      non-temporal stores or flushed by the caller;
 *   2. a descriptor (home block of each logged block) and full copies of
 *      the dirty blocks are written to the log with non-temporal stores;
 *   3. fence: data and log are durable;
 *   4. j_commit = seq << 32 | count, one 8-byte store, flushed and fenced:
 *      the transaction is committed;
 *   5. the blocks are copied home with non-temporal stores, fence;
 *   6. j_commit = 0, flushed and fenced: the log may be reused.
 * A crash before 4 leaves the old metadata at home and the transaction
 * lost; after 4, mount replays the log home (idempotent), so a crash in
 * 5 or 6 is repaired.
 */
#include <linux/slab.h>
#include <linux/blkdev.h>
#include "vsmfs.h"
#include "pmem.h"
#include "fault.h"

static struct vsmfs_djsb *vsmfs_jsb(struct vsmfs_sb_info *sbi)
{
	return vsmfs_blk_ptr(sbi, sbi->s_layout.journal_start);
}

static void *vsmfs_log_blk(struct vsmfs_sb_info *sbi, u64 idx)
{
	return vsmfs_blk_ptr(sbi, sbi->s_layout.journal_start + 1 + idx);
}

/* Replay a committed transaction home. Idempotent. */
static int vsmfs_journal_replay(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_djsb *jsb = vsmfs_jsb(sbi);
	u64 commit = le64_to_cpu(READ_ONCE(jsb->j_commit));
	struct vsmfs_djdesc *desc = vsmfs_log_blk(sbi, 0);
	u32 count = commit & 0xffffffff, i;
	struct super_block *sb = sbi->s_sb;

	if (!commit)
		return 0;
	if (count > VSMFS_JDESC_MAX || count + 1 > le32_to_cpu(jsb->j_blocks) ||
	    le32_to_cpu(desc->d_magic) != VSMFS_JDESC_MAGIC ||
	    le32_to_cpu(desc->d_count) != count ||
	    (le64_to_cpu(desc->d_sequence) & 0xffffffff) != commit >> 32) {
		vsmfs_err(sb, "journal: committed transaction has a bad descriptor");
		return -EFSCORRUPTED;
	}
	for (i = 0; i < count; i++) {
		u64 home = le64_to_cpu(desc->d_home[i]);

		if (home <= VSMFS_SB_BACKUP_BLOCK || home >= sbi->s_layout.blocks ||
		    (home >= sbi->s_layout.journal_start &&
		     home < sbi->s_layout.journal_start + sbi->s_layout.journal_blocks)) {
			vsmfs_err(sb, "journal: bad home block %llu", home);
			return -EFSCORRUPTED;
		}
	}
	for (i = 0; i < count; i++)
		vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, le64_to_cpu(desc->d_home[i])),
				vsmfs_log_blk(sbi, i + 1), VSMFS_BLOCK_SIZE);
	/* Home blocks durable before the commit record is retired. */
	vsmfs_fence();
	WRITE_ONCE(jsb->j_commit, 0);
	vsmfs_persist(&jsb->j_commit, sizeof(jsb->j_commit));
	vsmfs_info(sb, "journal: replayed %u blocks", count);
	return 0;
}

/**
 * vsmfs_journal_init() - check the journal and replay it if needed
 * @sbi: the file system, mapped, superblock verified
 *
 * Context: mount, before anything reads metadata.
 * Return: 0 or a negative errno.
 */
int vsmfs_journal_init(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_djsb *jsb = vsmfs_jsb(sbi);
	int ret;

	mutex_init(&sbi->s_trans_mutex);
	xa_init(&sbi->s_mblks);
	if (le32_to_cpu(jsb->j_magic) != VSMFS_JOURNAL_MAGIC ||
	    le32_to_cpu(jsb->j_blocks) != sbi->s_layout.journal_blocks - 1) {
		vsmfs_err(sbi->s_sb, "journal superblock is corrupt");
		return -EINVAL;
	}
	if (jsb->j_commit && sb_rdonly(sbi->s_sb) &&
	    bdev_read_only(sbi->s_sb->s_bdev)) {
		vsmfs_err(sbi->s_sb, "journal needs replay but the device is read-only");
		return -EROFS;
	}
	ret = vsmfs_journal_replay(sbi);
	if (ret)
		return ret;
	sbi->s_journal_seq = le64_to_cpu(jsb->j_sequence);
	return 0;
}

/**
 * vsmfs_journal_destroy() - free the metadata cache
 * @sbi: the file system
 *
 * Context: unmount, no transaction running.
 */
void vsmfs_journal_destroy(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_mblk *mb;
	unsigned long idx;

	xa_for_each(&sbi->s_mblks, idx, mb)
		kfree(mb);
	xa_destroy(&sbi->s_mblks);
}

/**
 * vsmfs_mblk_get() - DRAM copy of a metadata block
 * @sbi: the file system
 * @blk: device block
 *
 * Context: process context. The copy lives until unmount.
 * Return: the block, or an ERR_PTR.
 */
struct vsmfs_mblk *vsmfs_mblk_get(struct vsmfs_sb_info *sbi, u64 blk)
{
	struct vsmfs_mblk *mb, *old;
	void *src;

	mb = xa_load(&sbi->s_mblks, blk);
	if (mb)
		return mb;
	/*
	 * A block number from a damaged index (0 when a logical page is out
	 * of range) must not become a metadata block written home.
	 */
	if (blk <= VSMFS_SB_BACKUP_BLOCK ||
	    (blk >= sbi->s_layout.journal_start &&
	     blk < sbi->s_layout.journal_start + sbi->s_layout.journal_blocks))
		return ERR_PTR(-EFSCORRUPTED);
	src = vsmfs_blk_ptr(sbi, blk);
	if (!src)
		return ERR_PTR(-EFSCORRUPTED);
	mb = vsmfs_fault(VSMFS_FAULT_MBLK_ALLOC) ? NULL : kmalloc(sizeof(*mb), GFP_NOFS);
	if (!mb)
		return ERR_PTR(-ENOMEM);
	mb->m_blk = blk;
	mb->m_is_dirty = false;
	INIT_LIST_HEAD(&mb->m_dirty);
	if (copy_mc_to_kernel(mb->m_data, src, VSMFS_BLOCK_SIZE)) {
		kfree(mb);
		return ERR_PTR(-EIO);
	}
	old = xa_cmpxchg(&sbi->s_mblks, blk, NULL, mb, GFP_NOFS);
	if (old) {
		kfree(mb);
		return xa_is_err(old) ? ERR_PTR(xa_err(old)) : old;
	}
	return mb;
}

/**
 * vsmfs_trans_begin() - start a transaction
 * @sbi: the file system
 * @t: transaction to initialize
 *
 * Context: process context; takes s_trans_mutex until commit.
 */
void vsmfs_trans_begin(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t)
{
	mutex_lock(&sbi->s_trans_mutex);
	t->t_sbi = sbi;
	INIT_LIST_HEAD(&t->t_dirty);
	t->t_nblocks = 0;
	t->t_error = 0;
}

/**
 * vsmfs_trans_dirty() - add a changed metadata block to a transaction
 * @t: the transaction
 * @mb: the block, changed in DRAM
 *
 * Context: inside the transaction.
 */
void vsmfs_trans_dirty(struct vsmfs_trans *t, struct vsmfs_mblk *mb)
{
	lockdep_assert_held(&t->t_sbi->s_trans_mutex);
	if (mb->m_is_dirty)
		return;
	if (t->t_nblocks + 2 > min_t(u64, VSMFS_JDESC_MAX,
				     t->t_sbi->s_layout.journal_blocks - 1)) {
		WARN_ON_ONCE(1);
		t->t_error = -ENOSPC;
		return;
	}
	mb->m_is_dirty = true;
	list_add_tail(&mb->m_dirty, &t->t_dirty);
	t->t_nblocks++;
}

/**
 * vsmfs_trans_commit() - commit a transaction and end it
 * @t: the transaction
 *
 * Writes the dirty blocks to the journal, commits, writes them home. See
 * the ordering argument at the top of this file.
 *
 * Context: inside the transaction; releases s_trans_mutex.
 * Return: 0, or the first error recorded in the transaction.
 */
int vsmfs_trans_commit(struct vsmfs_trans *t)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_djsb *jsb = vsmfs_jsb(sbi);
	struct vsmfs_djdesc *desc = vsmfs_log_blk(sbi, 0);
	struct vsmfs_mblk *mb, *tmp;
	u64 seq = sbi->s_journal_seq;
	u32 i = 0;
	int ret = t->t_error;

	if (!t->t_nblocks)
		goto out;

	list_for_each_entry(mb, &t->t_dirty, m_dirty) {
		vsmfs_memcpy_nt(vsmfs_log_blk(sbi, i + 1), mb->m_data, VSMFS_BLOCK_SIZE);
		desc->d_home[i] = cpu_to_le64(mb->m_blk);
		i++;
	}
	desc->d_magic = cpu_to_le32(VSMFS_JDESC_MAGIC);
	desc->d_count = cpu_to_le32(i);
	desc->d_sequence = cpu_to_le64(seq);
	vsmfs_flush(desc, offsetof(struct vsmfs_djdesc, d_home) + i * sizeof(__le64));
	/* Data and log durable before the commit record. */
	vsmfs_fence();
	WRITE_ONCE(jsb->j_commit, cpu_to_le64((seq & 0xffffffff) << 32 | i));
	vsmfs_persist(&jsb->j_commit, sizeof(jsb->j_commit));

	list_for_each_entry(mb, &t->t_dirty, m_dirty)
		vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, mb->m_blk), mb->m_data, VSMFS_BLOCK_SIZE);
	/* Home blocks durable before the log is retired. */
	vsmfs_fence();
	jsb->j_sequence = cpu_to_le64(seq + 1);
	WRITE_ONCE(jsb->j_commit, 0);
	vsmfs_persist(jsb, offsetofend(struct vsmfs_djsb, j_sequence));
	sbi->s_journal_seq = seq + 1;
	vsmfs_stat_inc(sbi, trans_commits);
	vsmfs_stat_add(sbi, journal_bytes, (u64)(i + 1) * VSMFS_BLOCK_SIZE);
	vsmfs_stat_add(sbi, home_bytes, (u64)i * VSMFS_BLOCK_SIZE);
out:
	list_for_each_entry_safe(mb, tmp, &t->t_dirty, m_dirty) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
	}
	mutex_unlock(&sbi->s_trans_mutex);
	return ret;
}
