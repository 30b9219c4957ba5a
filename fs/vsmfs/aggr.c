// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs hot-inode aggregation.
 *
 * Every inode is reached through the inode mapping table (i-number -> slot
 * of the inode table), so an inode can move to another slot without
 * changing its i-number. An inode open for writing counts the transactions
 * that write it; once the count reaches aggregate_threshold the inode is
 * listed (until its last close), and a worker moves the listed inodes
 * written that often into a window of adjacent slots at the start of the
 * inode table, so that the inodes changed together share few inode-table
 * blocks: fewer blocks per commit, fewer versions in the journal, fewer
 * blocks written home by a checkpoint, each with more changed inodes in it.
 *
 * A migration takes a slot of the window, in order of preference, that is
 * free (its i-number is not in use), lazy (in use, its inode not in
 * memory) or closed (in memory, not open for writing), and exchanges the
 * two slots' contents and their mapping-table entries in one transaction:
 * the journal makes the exchange atomic, so a crash leaves either mapping
 * whole. If the window has no such slot it grows by one inode-table block.
 *
 * A slot is looked up through the mapping table, under the transaction,
 * at every access, so writers of either inode simply see the new slot
 * after the commit. The in-memory inode of an in-use candidate is held
 * for the duration, so nothing reads its slot from the table meanwhile.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/bitops.h>
#include "vsmfs.h"
#include "mcache.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "trace.h"
#include "fault.h"

enum { VSMFS_CAND_NONE, VSMFS_CAND_FREE, VSMFS_CAND_LAZY, VSMFS_CAND_CLOSED };

static __le32 *vsmfs_imap_entry(struct vsmfs_sb_info *sbi, u64 ino, struct vsmfs_mblk **mbp)
{
	struct vsmfs_mblk *mb;

	mb = vsmfs_mblk_get(sbi, sbi->s_layout.imap_start + ino / (VSMFS_BLOCK_SIZE / 4));
	if (IS_ERR(mb))
		return ERR_CAST(mb);
	*mbp = mb;
	return (__le32 *)mb->m_data + ino % (VSMFS_BLOCK_SIZE / 4);
}

/*
 * The slot -> i-number map of the whole table, from the mapping table, a
 * block at a time: a block the cache holds from its copy, any other from
 * its home through one buffer (no version newer than home exists then:
 * mcache.c), so that the scan neither caches every block of the table
 * nor looks each entry up. Nothing but the worker, which runs this,
 * changes the table.
 */
static int vsmfs_aggr_map_init(struct vsmfs_sb_info *sbi)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 n = l->inodes, ino = 0, blk;
	struct vsmfs_mblk *mb;
	const __le32 *e;
	__le32 *buf;
	u32 *map;
	int ret = -ENOMEM;

	map = kvmalloc_array(n, sizeof(*map), GFP_KERNEL | __GFP_ZERO);
	buf = kmalloc(VSMFS_BLOCK_SIZE, GFP_KERNEL);
	if (!map || !buf)
		goto out;
	for (blk = l->imap_start; ino < n; blk++) {
		unsigned int i, k = min_t(u64, n - ino, VSMFS_BLOCK_SIZE / sizeof(*e));
		const void __pm *src;

		mb = vsmfs_mblk_find(sbi, blk);
		if (mb) {
			e = (const __le32 *)mb->m_data;
		} else {
			src = vsmfs_blk_ptr(sbi, blk);
			ret = src ? 0 : -EFSCORRUPTED;
			if (!ret && vsmfs_read_pm(buf, src, VSMFS_BLOCK_SIZE))
				ret = -EIO;
			if (ret)
				goto out;
			e = buf;
		}
		/* I-number 0 is not an inode. */
		for (i = ino ? 0 : 1; i < k; i++) {
			u32 slot = le32_to_cpu(e[i]);

			if (!slot || slot >= n || map[slot]) {
				vsmfs_fs_error(sbi->s_sb, ino + i,
					       "maps to invalid or shared slot %u", slot);
				ret = -EFSCORRUPTED;
				goto out;
			}
			map[slot] = ino + i;
		}
		ino += k;
	}
	sbi->s_slot_ino = map;
	map = NULL;
	ret = 0;
out:
	kfree(buf);
	kvfree(map);
	return ret;
}

static bool vsmfs_ino_used(struct vsmfs_sb_info *sbi, u64 ino)
{
	struct vsmfs_mblk *mb;

	mb = vsmfs_mblk_get(sbi, sbi->s_layout.ibitmap_start + ino / (VSMFS_BLOCK_SIZE * 8));
	if (IS_ERR(mb))
		return true;	/* not a candidate */
	return test_bit(ino % (VSMFS_BLOCK_SIZE * 8), (unsigned long *)mb->m_data);
}

/*
 * The best slot of the window for a hot inode: free, else lazy, else
 * closed. Returns its kind; *held is the in-memory inode of a closed one,
 * with a reference the caller drops.
 */
static int vsmfs_aggr_candidate(struct vsmfs_sb_info *sbi, u64 *slotp, struct inode **held)
{
	int best = VSMFS_CAND_NONE;
	u64 slot, best_slot = 0;
	struct inode *closed = NULL;

	*held = NULL;
	for (slot = 1; slot < sbi->s_window && best != VSMFS_CAND_FREE; slot++) {
		u64 ino = sbi->s_slot_ino[slot];
		struct inode *inode;

		if (ino == le64_to_cpu(sbi->s_dsb->s_root_ino))
			continue;
		if (!vsmfs_ino_used(sbi, ino)) {
			best = VSMFS_CAND_FREE;
			best_slot = slot;
			break;
		}
		if (best == VSMFS_CAND_LAZY)
			continue;
		inode = ilookup(sbi->s_sb, ino);
		if (!inode) {
			best = VSMFS_CAND_LAZY;
			best_slot = slot;
			continue;
		}
		if (best == VSMFS_CAND_NONE && atomic_read(&inode->i_writecount) <= 0 &&
		    list_empty(&VSMFS_I(inode)->i_hot)) {
			best = VSMFS_CAND_CLOSED;
			best_slot = slot;
			closed = inode;
			continue;
		}
		iput(inode);
	}
	if (best != VSMFS_CAND_CLOSED && closed)
		iput(closed);
	else if (closed)
		*held = closed;
	*slotp = best_slot;
	return best;
}

static struct vsmfs_dinode *vsmfs_slot_dinode(struct vsmfs_sb_info *sbi, u64 slot,
					      struct vsmfs_mblk **mbp)
{
	struct vsmfs_mblk *mb;

	mb = vsmfs_mblk_get(sbi, sbi->s_layout.itable_start + slot / VSMFS_INODES_PER_BLOCK);
	if (IS_ERR(mb))
		return ERR_CAST(mb);
	*mbp = mb;
	return vsmfs_slot_in(mb, slot);
}

/*
 * Exchange the slots of @hot (at @from) and of the i-number at slot @to,
 * and their mapping-table entries, in one transaction.
 */
static int vsmfs_aggr_exchange(struct vsmfs_sb_info *sbi, struct inode *hot, u64 from, u64 to,
			       int kind)
{
	u64 other = sbi->s_slot_ino[to];
	bool used = kind != VSMFS_CAND_FREE;
	struct vsmfs_mblk *ma, *mb, *mc, *md;
	struct vsmfs_dinode *a, *b, tmp;
	__le32 *ea, *eb;
	struct vsmfs_trans t;
	int ret;

	vsmfs_trans_begin(sbi, &t);
	ea = vsmfs_imap_entry(sbi, hot->i_ino, &mc);
	eb = IS_ERR(ea) ? ea : vsmfs_imap_entry(sbi, other, &md);
	ret = PTR_ERR_OR_ZERO(eb);
	if (ret)
		goto out;
	/* Nothing else moves inodes; a free candidate may have been taken. */
	ret = -EAGAIN;
	if (le32_to_cpu(*ea) != from || le32_to_cpu(*eb) != to ||
	    vsmfs_ino_used(sbi, other) != used)
		goto out;
	a = vsmfs_slot_dinode(sbi, from, &ma);
	b = IS_ERR(a) ? a : vsmfs_slot_dinode(sbi, to, &mb);
	ret = PTR_ERR_OR_ZERO(b);
	if (!ret)
		ret = vsmfs_trans_get_write_access(&t, ma);
	if (!ret)
		ret = vsmfs_trans_get_write_access(&t, mb);
	if (!ret)
		ret = vsmfs_trans_get_write_access(&t, mc);
	if (!ret)
		ret = vsmfs_trans_get_write_access(&t, md);
	if (ret)
		goto out;
	tmp = *a;
	*a = *b;
	*b = tmp;
	*ea = cpu_to_le32(to);
	*eb = cpu_to_le32(from);
	/* The slots in-core inodes found are stale (vsmfs_inode_slot()). */
	WRITE_ONCE(sbi->s_slot_gen, sbi->s_slot_gen + 1);
	vsmfs_slot_dirty(ma, from % VSMFS_INODES_PER_BLOCK);
	vsmfs_slot_dirty(mb, to % VSMFS_INODES_PER_BLOCK);
	vsmfs_trans_dirty(&t, ma);
	vsmfs_trans_dirty(&t, mb);
	vsmfs_trans_dirty(&t, mc);
	vsmfs_trans_dirty(&t, md);
	/* For crash tests: the exchange made in DRAM, nothing committed. */
	vsmfs_fault_stop(sbi->s_sb, VSMFS_FAULT_AGGR_STOP,
			 "inode migration stopped before its commit");
	ret = vsmfs_trans_commit(&t);
	if (ret)
		return ret;
	sbi->s_slot_ino[to] = hot->i_ino;
	sbi->s_slot_ino[from] = other;
	return 0;
out:
	vsmfs_trans_abort(&t);
	return ret;
}

/* Move one hot inode into the window, growing it if it has no room. */
static void vsmfs_aggr_migrate(struct vsmfs_sb_info *sbi, struct inode *hot)
{
	struct inode *held = NULL;
	struct vsmfs_mblk *mb;
	u64 from, to, other;
	__le32 *e;
	int kind, ret;

	/*
	 * No lock: only this worker changes the mapping table (the exchange
	 * below checks the entry again under its transaction).
	 */
	e = vsmfs_imap_entry(sbi, hot->i_ino, &mb);
	from = IS_ERR(e) ? 0 : le32_to_cpu(READ_ONCE(*e));
	if (!from || from < sbi->s_window)
		goto done;	/* damaged (reported elsewhere), or in the window */
	for (;;) {
		kind = vsmfs_aggr_candidate(sbi, &to, &held);
		if (kind != VSMFS_CAND_NONE)
			break;
		if (sbi->s_window + VSMFS_INODES_PER_BLOCK > from)
			goto done;	/* nothing better than where it is */
		WRITE_ONCE(sbi->s_window, sbi->s_window + VSMFS_INODES_PER_BLOCK);
		vsmfs_stat_inc(sbi, aggregate_window_growths);
	}
	other = sbi->s_slot_ino[to];
	if (kind == VSMFS_CAND_LAZY) {
		/* For tests: the candidate was picked, its inode not yet read. */
		vsmfs_fault_wait(VSMFS_FAULT_AGGR_WAIT);
		/*
		 * In memory for the exchange: nothing reads its old slot. It
		 * was picked with no lock held, and may have been unlinked or
		 * freed since: then there is nothing to do, and no damage.
		 */
		held = vsmfs_iget_if_used(sbi->s_sb, other);
		if (IS_ERR(held)) {
			held = NULL;
			goto done;
		}
	}
	ret = vsmfs_aggr_exchange(sbi, hot, from, to, kind);
	if (ret) {
		if (ret != -EAGAIN)
			vsmfs_err_ratelimited(sbi->s_sb, "moving inode %lu failed: %d",
					      hot->i_ino, ret);
		goto done;
	}
	trace_vsmfs_inode_migrate(hot, from, to, other, kind);
	vsmfs_stat_inc(sbi, aggregate_migrations);
done:
	atomic_set(&VSMFS_I(hot)->i_wcount, 0);
	if (held)
		iput(held);
}

#define VSMFS_AGGR_BATCH	32

static void vsmfs_aggr_work(struct work_struct *work)
{
	struct vsmfs_sb_info *sbi = container_of(work, struct vsmfs_sb_info,
						 s_aggr_work.work);
	struct inode *batch[VSMFS_AGGR_BATCH];
	struct vsmfs_inode_info *vi;
	unsigned int n = 0, i, threshold = READ_ONCE(sbi->s_aopts.threshold);

	if (!READ_ONCE(sbi->s_aopts.on) || sb_rdonly(sbi->s_sb))
		return;
	if (!sbi->s_slot_ino && vsmfs_aggr_map_init(sbi)) {
		vsmfs_warn(sbi->s_sb, "inode aggregation off: no map of the inode table");
		WRITE_ONCE(sbi->s_aopts.on, false);
		return;
	}
	spin_lock(&sbi->s_aggr_lock);
	list_for_each_entry(vi, &sbi->s_hot, i_hot) {
		if (atomic_read(&vi->i_wcount) < threshold)
			continue;
		/* Open for writing: a reference is there to take. */
		batch[n++] = igrab(&vi->vfs_inode);
		if (!batch[n - 1])
			n--;
		if (n == VSMFS_AGGR_BATCH)
			break;
	}
	spin_unlock(&sbi->s_aggr_lock);
	for (i = 0; i < n; i++) {
		vsmfs_aggr_migrate(sbi, batch[i]);
		iput(batch[i]);
	}
	if (n == VSMFS_AGGR_BATCH)
		queue_delayed_work(system_long_wq, &sbi->s_aggr_work, 0);
}

/**
 * vsmfs_aggr_open() - a file is opened
 * @inode: its inode
 * @file: the open file
 *
 * Counts the files open for writing on a regular file's inode, under the
 * inode's own lock: opening and closing files takes no lock of the whole
 * file system. The inode is listed only once its writes reach the
 * threshold (vsmfs_aggr_written(), inode.h).
 */
void vsmfs_aggr_open(struct inode *inode, struct file *file)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);

	if (!(file->f_mode & FMODE_WRITE))
		return;
	spin_lock(&vi->i_aggr_lock);
	WRITE_ONCE(vi->i_writers, vi->i_writers + 1);
	spin_unlock(&vi->i_aggr_lock);
}

/**
 * vsmfs_aggr_release() - a file is closed
 * @inode: its inode
 * @file: the file
 *
 * The last writer gone, the count of writes is forgotten (a closed file is
 * no longer hot) and the inode leaves the list if it is on it. The files
 * are counted here rather than read from i_writecount, which drops only
 * after ->release: two writers closing at once, or one closing while
 * truncate(2) holds write access, would each see another.
 *
 * Return: true if @file was the last file open for writing on @inode.
 */
bool vsmfs_aggr_release(struct inode *inode, struct file *file)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	bool last;

	if (!(file->f_mode & FMODE_WRITE))
		return false;
	spin_lock(&vi->i_aggr_lock);
	WRITE_ONCE(vi->i_writers, vi->i_writers - 1);
	last = !vi->i_writers;
	if (last) {
		atomic_set(&vi->i_wcount, 0);
		/* Listed and unlisted only under i_aggr_lock: stable here. */
		if (!list_empty(&vi->i_hot)) {
			spin_lock(&sbi->s_aggr_lock);
			list_del_init(&vi->i_hot);
			spin_unlock(&sbi->s_aggr_lock);
		}
	}
	spin_unlock(&vi->i_aggr_lock);
	return last;
}

/**
 * vsmfs_aggr_evict() - an inode is evicted
 * @inode: the inode
 *
 * Every file open for writing was released before, so the inode is not
 * listed; were it, it leaves the list before its memory is freed.
 */
void vsmfs_aggr_evict(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);

	if (WARN_ON_ONCE(!list_empty_careful(&vi->i_hot))) {
		spin_lock(&sbi->s_aggr_lock);
		list_del_init(&vi->i_hot);
		spin_unlock(&sbi->s_aggr_lock);
	}
}

/**
 * __vsmfs_aggr_written() - an inode's count of writes reached the threshold
 * @inode: the inode
 *
 * Lists the inode (if aggregation is still on and a file is still open
 * for writing on it, both looked at under i_aggr_lock, which the last
 * close takes to unlist it) and starts the worker.
 *
 * Context: inside the transaction (vsmfs_aggr_written()).
 */
void __vsmfs_aggr_written(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	bool listed;

	spin_lock(&vi->i_aggr_lock);
	listed = vi->i_writers && READ_ONCE(sbi->s_aopts.on);
	if (listed && list_empty(&vi->i_hot)) {
		spin_lock(&sbi->s_aggr_lock);
		list_add_tail(&vi->i_hot, &sbi->s_hot);
		spin_unlock(&sbi->s_aggr_lock);
	}
	spin_unlock(&vi->i_aggr_lock);
	/* A short delay gathers the inodes that turn hot together. */
	if (listed)
		queue_delayed_work(system_long_wq, &sbi->s_aggr_work, HZ / 10);
}

/**
 * vsmfs_aggr_init() - aggregation state of a new mount
 * @sbi: the file system
 */
void vsmfs_aggr_init(struct vsmfs_sb_info *sbi)
{
	spin_lock_init(&sbi->s_aggr_lock);
	INIT_LIST_HEAD(&sbi->s_hot);
	INIT_DELAYED_WORK(&sbi->s_aggr_work, vsmfs_aggr_work);
}

/**
 * vsmfs_aggr_stop() - wait for the worker and keep it from running
 * @sbi: the file system
 *
 * Context: unmount or remount; no transaction held.
 */
void vsmfs_aggr_stop(struct vsmfs_sb_info *sbi)
{
	cancel_delayed_work_sync(&sbi->s_aggr_work);
}

/**
 * vsmfs_aggr_destroy() - free the aggregation state
 * @sbi: the file system, worker stopped
 */
void vsmfs_aggr_destroy(struct vsmfs_sb_info *sbi)
{
	kvfree(sbi->s_slot_ino);
	sbi->s_slot_ino = NULL;
}
