// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs allocation of i-numbers, from the inode bitmap, a metadata block
 * changed under the running transaction: under s_trans_mutex with plain
 * bit operations (vsmfs_ibit()), or in a shared metadata handle beside
 * others with atomic ones, from the cursor of the CPU the task runs on
 * (vsmfs_ino_find()), the free count kept per CPU (s_free_inodes).
 * Ordering: the bitmap reaches PM only with the commit of the running
 * transaction, as every metadata block; a crash before it leaves the
 * i-number free.
 */
#include <linux/bitmap.h>
#include <linux/percpu_counter.h>
#include "vsmfs.h"
#include "ialloc.h"
#include "mcache.h"
#include "trans.h"

/* I-numbers in a cache line of the inode bitmap. */
#define VSMFS_INO_CHUNK		(64 * BITS_PER_BYTE)

/**
 * vsmfs_ino_region() - where a CPU starts looking for free i-numbers
 * @sbi: the file system
 * @cpu: the CPU
 *
 * The i-numbers are cut
 * in one region per possible CPU, each a whole number of cache lines of
 * the inode bitmap (VSMFS_INO_CHUNK i-numbers), so that CPUs creating side
 * by side set bits in bitmap lines, and fill inode-table blocks, of their
 * own. A CPU whose region is full goes on into the next ones; where there
 * are too few i-numbers for a region each, regions are shared.
 *
 * Return: the first i-number of @cpu's region.
 */
u64 vsmfs_ino_region(struct vsmfs_sb_info *sbi, unsigned int cpu)
{
	u64 n = sbi->s_layout.inodes;
	u64 per = max_t(u64, rounddown(div_u64(n, nr_cpu_ids), VSMFS_INO_CHUNK), VSMFS_INO_CHUNK);
	u64 start;

	div64_u64_rem(per * cpu, n, &start);
	return max_t(u64, start, VSMFS_ROOT_INO);
}

static int vsmfs_ibit(struct vsmfs_trans *t, u64 ino, bool set)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	int ret;

	/* Shared handles: vsmfs_alloc_ino_shared(), vsmfs_free_ino(). */
	if (WARN_ON_ONCE(t->t_shared))
		return -EAGAIN;
	mb = vsmfs_mblk_get(sbi, sbi->s_layout.ibitmap_start + ino / BITS_PER_BLK);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	if (test_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data) == set) {
		vsmfs_fs_error(sbi->s_sb, ino, "inode already %s", set ? "in use" : "free");
		return -EFSCORRUPTED;
	}
	ret = vsmfs_trans_get_write_access_range(t, mb, ino % BITS_PER_BLK / BITS_PER_LONG * 8, 8);
	if (ret)
		return ret;
	/* No shared handle runs beside this one: plain bit operations. */
	if (set) {
		__set_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data);
		percpu_counter_dec(&sbi->s_free_inodes);
		t->t_ino_delta--;
	} else {
		__clear_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data);
		percpu_counter_inc(&sbi->s_free_inodes);
		t->t_ino_delta++;
	}
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/*
 * Find a free i-number from the cursor of the CPU the task runs on
 * (vsmfs_ino_region()) on, around to it again. In a shared handle the
 * bit is taken with an atomic set, as other shared handles take bits of
 * the same words beside it with no lock; under s_trans_mutex it is only
 * found, for vsmfs_ibit() to set. The cursor is a hint that the tasks on
 * one CPU read and move with no lock (a shared handle keeps its task on
 * the CPU: vsmfs_trans_begin_shared()).
 *
 * Return: 0 with @*ino and its bitmap block in @*mbp, or a negative errno.
 */
static int vsmfs_ino_find(struct vsmfs_trans *t, u64 *ino, struct vsmfs_mblk **mbp)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 *cursor = raw_cpu_ptr(sbi->s_ino_cursors);
	u64 n = sbi->s_layout.inodes, start = READ_ONCE(*cursor), i;

	/*
	 * Summed over the CPUs only near zero, so that a full file system is
	 * not scanned by every create; exact under s_trans_mutex.
	 */
	if (percpu_counter_compare(&sbi->s_free_inodes, 1) < 0)
		return -ENOSPC;
	if (start >= n)
		start = 0;
	for (i = 0; i < n; ) {
		u64 cand = start + i < n ? start + i : start + i - n;
		u64 base = cand - cand % BITS_PER_BLK, lim = min(n - base, BITS_PER_BLK), z;
		struct vsmfs_mblk *mb;
		unsigned long *map;

		mb = vsmfs_mblk_get(sbi, sbi->s_layout.ibitmap_start + cand / BITS_PER_BLK);
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		if (t->t_shared)
			vsmfs_mblk_freeze(sbi, mb);
		map = (unsigned long *)mb->m_data;
		z = cand - base;
		while ((z = find_next_zero_bit(map, lim, z)) < lim) {
			if (!t->t_shared || !test_and_set_bit(z, map)) {
				*ino = base + z;
				*mbp = mb;
				WRITE_ONCE(*cursor, *ino + 1);
				return 0;
			}
			z++;
		}
		i += lim - (cand - base);
	}
	return -ENOSPC;
}

/*
 * vsmfs_alloc_ino() in a shared metadata handle: the bit set atomically
 * (vsmfs_ino_find()) and the free count per CPU, with no lock. The
 * handle notes the word it changed at once (a word another handle
 * changes too is written by the commit all the same) and, if it is
 * aborted, clears just its bit (vsmfs_trans_abort_shared()).
 */
static int vsmfs_alloc_ino_shared(struct vsmfs_trans *t, u64 *ino)
{
	struct vsmfs_mblk *mb;
	int ret;

	if (WARN_ON_ONCE(t->t_ino))
		return -EFSCORRUPTED;
	ret = vsmfs_ino_find(t, ino, &mb);
	if (ret)
		return ret;
	percpu_counter_dec(&t->t_sbi->s_free_inodes);
	vsmfs_note_word_shared(mb, *ino % BITS_PER_BLK / 64);
	t->t_ino = *ino;
	t->t_ino_mb = mb;
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/**
 * vsmfs_alloc_ino() - allocate an i-number
 * @t: running transaction
 * @ino: the i-number
 *
 * Return: 0, -ENOSPC, or another negative errno.
 */
int vsmfs_alloc_ino(struct vsmfs_trans *t, u64 *ino)
{
	struct vsmfs_mblk *mb;
	int ret;

	if (t->t_shared)
		return vsmfs_alloc_ino_shared(t, ino);
	ret = vsmfs_ino_find(t, ino, &mb);
	return ret ?: vsmfs_ibit(t, *ino, true);
}

/**
 * vsmfs_free_ino() - free an i-number
 * @t: running transaction
 * @ino: the i-number
 *
 * In a shared metadata handle (vsmfs_evict_inode()) the bit is cleared at
 * once, and a create beside it may take the i-number: this must be the
 * handle's last change, with no abort after it.
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_free_ino(struct vsmfs_trans *t, u64 ino)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;

	if (!t->t_shared)
		return vsmfs_ibit(t, ino, false);
	mb = vsmfs_mblk_get(sbi, sbi->s_layout.ibitmap_start + ino / BITS_PER_BLK);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	vsmfs_mblk_freeze(sbi, mb);
	/* Atomic: other shared handles take and free bits of the word. */
	if (!test_and_clear_bit(ino % BITS_PER_BLK, (unsigned long *)mb->m_data)) {
		vsmfs_fs_error(sbi->s_sb, ino, "inode already free");
		return -EFSCORRUPTED;
	}
	t->t_ino_freed = true;
	percpu_counter_inc(&sbi->s_free_inodes);
	vsmfs_note_word_shared(mb, ino % BITS_PER_BLK / 64);
	vsmfs_trans_dirty(t, mb);
	return 0;
}
