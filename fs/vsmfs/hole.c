// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs holes inside runs. On a sparse file system (feature sparse) there
 * are more logical pages than frames, and a page of a file's run may have
 * no frame: it reads as zeros (the mapping layer maps the zero page there,
 * read-only) and counts for nothing in the file's blocks or in free space.
 *
 * Frames move between logical pages only by swaps of page table entries
 * (vsmfs_swap_pages()), so every frame always backs exactly one logical
 * page. Punching a hole swaps the run's pages with free pages without
 * frames; filling one swaps them with free pages that have frames. The
 * free pages taken part in the swap are reserved for the transaction and
 * freed by its commit, so a frame a punch gives up is taken again only
 * once that commit is durable (vsmfs_wait_freed()): until then a crash
 * gives it back to the file.
 *
 * Ordering: the page table entries are metadata of the running
 * transaction, and reach PM at its commit. A filled page is zeroed with
 * non-temporal stores through its new mapping before the commit, whose
 * data fence makes the zeros durable before the entries that give the
 * frame to the file: a crash before the commit leaves the hole, one after
 * it a page of zeros, never the frame's old contents.
 */
#include <linux/bitmap.h>
#include "vsmfs.h"
#include "ptable.h"
#include "vsp.h"
#include "journal.h"
#include "trans.h"
#include "alloc.h"
#include "fault.h"

/* Pages from @lpn, up to @end, of the same kind as @lpn (hole or not). */
static u64 vsmfs_same_kind(struct vsmfs_sb_info *sbi, u64 lpn, u64 end)
{
	if (test_bit(lpn, sbi->s_noframe))
		return find_next_zero_bit(sbi->s_noframe, end, lpn) - lpn;
	return find_next_bit(sbi->s_noframe, end, lpn) - lpn;
}

/*
 * Swap @n pages from @lpn with the run @donor reserved for @t, give the
 * donor back (free once @t commits, with what the swap left behind it)
 * and drop the stale translations of both. If the donor cannot be given
 * back, @t fails as a whole (vsmfs_trans_fail()).
 */
static int vsmfs_swap_donor(struct vsmfs_trans *t, u64 lpn, u64 donor, u64 n)
{
	struct vsmfs_swap sw;
	int ret, err;

	vsmfs_swap_init(t->t_sbi, &sw);
	ret = vsmfs_swap_pages(t, &sw, lpn, donor, n);
	/*
	 * A donor left reserved would hold frames, or pages, of no file:
	 * the handle cannot commit, and its end aborts it.
	 */
	err = vsmfs_unreserve_pages(t, donor, n);
	vsmfs_trans_fail(t, err);
	vsmfs_swap_flush(&sw);
	return ret ?: err;
}

/**
 * vsmfs_fill_holes() - give frames to the holes of part of a run
 * @t: the running transaction
 * @inode: the file owning the run
 * @lpn: first logical page of the part
 * @count: pages in the part
 * @unwritten: for fallocate(): the pages filled are marked unwritten;
 *	else every page of the part is marked written
 *
 * Every page of the part without a frame takes one, zeroed, from free
 * space, so that it can be written in place (or is allocated, for
 * fallocate()). The file's block count grows by the pages filled.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: 0, or a negative errno (-ENOSPC without free frames, or when
 * only the room @t->t_keep keeps for the rest of the handle is left; -E2BIG
 * when the transaction has no room for more); the holes filled before an
 * error stay filled in @t.
 */
int vsmfs_fill_holes(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 count,
		     bool unwritten)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 end = lpn + count, i, n, donor;
	int ret = 0;

	if (!sbi->s_noframe)
		return 0;
	for (i = find_next_bit(sbi->s_noframe, end, lpn); i < end && !ret;
	     i = find_next_bit(sbi->s_noframe, end, i)) {
		/*
		 * Two page table blocks a run of swaps: the file's, the
		 * donor's; room the handle keeps for the rest is not used.
		 */
		if (vsmfs_trans_room(t) < t->t_keep + 2 ||
		    (t->t_keep && vsmfs_fault(VSMFS_FAULT_GATHER_STOP))) {
			ret = t->t_keep ? -ENOSPC : -E2BIG;
			break;
		}
		n = vsmfs_same_kind(sbi, i, end);
		/* Free frames in a run if there is one, else one at a time. */
		ret = vsmfs_reserve_frames(t, n, &donor);
		if (ret == -ENOSPC && n > 1) {
			n = 1;
			ret = vsmfs_reserve_frames(t, n, &donor);
		}
		/* The donor, now without frames, is free again. */
		if (!ret)
			ret = vsmfs_swap_donor(t, i, donor, n);
		if (ret)
			break;
		vsmfs_zero_pm(vsmfs_lpn_ptr(sbi, i), n << VSMFS_BLOCK_SHIFT);
		vi->i_pages += n;
		vsmfs_stat_add(sbi, holes_filled, n);
		if (unwritten)
			ret = vsmfs_pt_unwritten(t, i, n, true);
		if (ret)
			break;
		i += n;
	}
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	/* Written in place from now on: no longer fallocated and unwritten. */
	if (!ret && !unwritten)
		ret = vsmfs_pt_unwritten(t, lpn, count, false);
	return ret;
}

/**
 * vsmfs_punch_frames() - take the frames away from part of a run
 * @t: the running transaction
 * @inode: the file owning the run
 * @lpn: first logical page of the part
 * @count: pages in the part
 * @next: the first page of the part not made a hole, returned
 *
 * Every page of the part with a frame gives it up, in order, and reads as
 * zeros from then on; the frames are free once @t commits. Stops before a
 * page for which the transaction has no room left, or no free page
 * without a frame is left; the caller zeroes the rest of the part.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: 0 or a negative errno; the pages punched before an error stay
 * punched in @t.
 */
int vsmfs_punch_frames(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 count,
		       u64 *next)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 end = lpn + count, i = lpn, n, got, donor;
	int ret = 0;

	*next = lpn;
	if (!sbi->s_noframe)
		return 0;
	while (i < end) {
		i = find_next_zero_bit(sbi->s_noframe, end, i);
		if (i >= end)
			break;
		/* Two page table blocks a run of swaps, as vsmfs_fill_holes(). */
		if (vsmfs_trans_room(t) < t->t_keep + 2)
			break;
		n = vsmfs_same_kind(sbi, i, end);
		ret = vsmfs_reserve_holes(t, n, &donor, &got);
		if (ret == -ENOSPC) {
			ret = 0;
			break;
		}
		/* The donor holds the frames now: freed by the commit. */
		if (!ret)
			ret = vsmfs_swap_donor(t, i, donor, got);
		if (ret)
			break;
		vi->i_pages -= got;
		vsmfs_stat_add(sbi, holes_punched, got);
		i += got;
	}
	*next = min(i, end);
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return ret;
}
