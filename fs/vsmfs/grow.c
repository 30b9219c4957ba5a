// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs run growth: making the run of a file's piece cover more pages
 * (vsmfs_extend_run()): into the reserved tail of its VSP, in place when
 * the logical pages after it are free, or into a new run into which the
 * frames of the old one are swapped (vsmfs_swap_pages()), so that file data
 * keeps its frames and no data is copied; on a sparse file system with
 * pages without frames for those a write skips (vsmfs_extend_sparse()).
 * And the write into the new pages of a piece past its run
 * (vsmfs_write_new()). Writes of either data= mode, DAX write faults and
 * fallocate share them.
 *
 * Ordering: new pages are zeroed or written with non-temporal stores (or
 * flushed) and become reachable only when the caller's transaction
 * commits, after a fence; a crash before it shows none of them.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include "vsmfs.h"
#include "ptable.h"
#include "vsp.h"
#include "journal.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "trace.h"
#include "pmem.h"
#include "data.h"

/*
 * Whether a write of [@wfrom, @wto) into a piece whose run has @have
 * pages, growing it to @need, skips whole pages past the run that a
 * sparse file system leaves without frames (@wfrom == @wto: pages from
 * @wfrom on are allocated, zeroed, and none written).
 */
static bool vsmfs_sparse_gap(struct vsmfs_sb_info *sbi, u64 have, u64 need, u64 wfrom, u64 wto)
{
	u64 first = wfrom >> VSMFS_BLOCK_SHIFT;

	return sbi->s_noframe && wto >= wfrom && first > have &&
	       READ_ONCE(sbi->s_free_pages) >= need - first;
}

/*
 * Whether a run growing from @have to @need pages, finding no free run that
 * long, may take its frames wherever they are free (a sparse file system,
 * which needs no contiguous frames). Each run of free frames it takes
 * costs up to two page table blocks (vsmfs_fill_holes()), and the frames
 * of a device that has been written for long lie in many runs: how many,
 * only the taking finds out. So it needs room for one run beside what the
 * running transaction keeps for the rest of any handle, half the journal
 * (@t->t_keep while it takes them, so that it stops, and the write fails
 * with -ENOSPC, before it eats into that).
 */
static bool vsmfs_gather_ok(struct vsmfs_trans *t, u64 have, u64 need)
{
	return t->t_sbi->s_noframe && READ_ONCE(t->t_sbi->s_free_pages) >= need - have &&
	       vsmfs_trans_room(t) >= vsmfs_trans_max_blocks(t->t_sbi) / 2 + 2;
}

/* vsmfs_extend_sparse() for a run whose frames are gathered (vsmfs_gather_ok()). */
static int vsmfs_gather(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 have,
			u64 need, u64 wfrom, bool zfdm, u64 *nlpn)
{
	int ret;

	t->t_keep = vsmfs_trans_max_blocks(t->t_sbi) / 2;
	ret = vsmfs_extend_sparse(t, inode, lpn, have, need, wfrom, zfdm, nlpn);
	t->t_keep = 0;
	return ret;
}

/**
 * vsmfs_extend_sparse() - grow a run with pages without frames
 * @t: the transaction
 * @inode: a regular file on a sparse file system
 * @lpn: the run's first logical page
 * @have: its pages (may be 0)
 * @need: the pages it is to have
 * @wfrom: byte offset in the piece of the first page to give a frame
 *	(@need << VSMFS_BLOCK_SHIFT for none)
 * @zfdm: the run must move (vsmfs_extend_run())
 * @nlpn: where the run is now
 *
 * Grow the run from @have to @need pages with pages without frames, in
 * place or in a new run into which the old one is moved, and give frames
 * (zeroed) to the pages from the one @wfrom is in: the pages skipped stay
 * holes. The caller sets the index entry.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: 0 or a negative errno; on error nothing has changed that the
 * caller sees (the handle may hold undone allocations, freed by its
 * commit).
 */
int vsmfs_extend_sparse(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 have,
			u64 need, u64 wfrom, bool zfdm, u64 *nlpn)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 first = wfrom >> VSMFS_BLOCK_SHIFT, pages = vi->i_pages, i;
	u64 old = have ? vsmfs_frames_in(sbi, lpn, have) : 0;
	bool in_place = have && !zfdm && lpn % VSMFS_VSP_PAGES + need <= VSMFS_VSP_PAGES &&
			!vsmfs_alloc_holes_at(t, lpn + have, need - have);
	struct vsmfs_swap sw;
	int ret;

	if (in_place) {
		*nlpn = lpn;
	} else {
		ret = vsmfs_alloc_holes(t, need, nlpn);
		if (ret)
			return ret;
	}
	/*
	 * New pages that came with frames (free space without a run of pages
	 * without): those skipped give them up, the others keep them, zeroed,
	 * as do skipped ones for which no page without a frame is left.
	 */
	if (first > have && vsmfs_frames_in(sbi, *nlpn + have, min(first, need) - have)) {
		ret = vsmfs_punch_frames(t, inode, *nlpn + have, min(first, need) - have, &i);
		if (ret)
			goto out;
	}
	for (i = have; i < need; i++)
		if (!vsmfs_lpn_hole(sbi, *nlpn + i))
			vsmfs_zero_pm(vsmfs_lpn_ptr(sbi, *nlpn + i), VSMFS_BLOCK_SIZE);
	/* The written pages first: the old run moves only once they have frames. */
	ret = vsmfs_fill_holes(t, inode, *nlpn + first, need - first, false);
	if (!ret && !in_place && have) {
		vsmfs_swap_init(t->t_sbi, &sw);
		ret = vsmfs_swap_pages(t, &sw, lpn, *nlpn, have);
		if (!ret) {
			ret = vsmfs_free_data_pages(t, lpn, have);
			/* The index still names @lpn: its frames go back. */
			if (ret)
				vsmfs_swap_pages(t, &sw, lpn, *nlpn, have);
		}
		vsmfs_swap_flush(&sw);
		if (!ret) {
			vsmfs_stat_inc(t->t_sbi, zfdm_migrations);
			vsmfs_stat_add(t->t_sbi, zfdm_migrated_pages, have);
		}
	}
out:
	if (ret) {
		/* Frames given to the new pages go back with them. */
		/* A run left allocated would be no file's: the handle fails. */
		if (in_place)
			vsmfs_trans_fail(t, vsmfs_free_data_pages(t, lpn + have, need - have));
		else
			vsmfs_trans_fail(t, vsmfs_free_data_pages(t, *nlpn, need));
		vi->i_pages = pages;
	} else {
		/* The file owns the frames of its new run now, and no longer the old's. */
		vi->i_pages = pages - old + vsmfs_frames_in(sbi, *nlpn, need);
	}
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return ret;
}

/*
 * Make the new run of @need pages at @nlpn, just allocated, the run of
 * piece @key, moving into it the @have pages of the old one at @lpn: its
 * frames are swapped in, and the old pages freed. On error the new run is
 * freed and nothing has changed.
 */
static int vsmfs_move_run(struct vsmfs_trans *t, struct inode *inode, u64 key, u64 lpn,
			  u64 nlpn, u64 have, u64 need)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_swap sw;
	int ret;

	vi->i_pages += need;
	if (!have)
		return 0;
	/* Move the run: swap its frames in, free the old pages. */
	vsmfs_swap_init(sbi, &sw);
	ret = vsmfs_swap_pages(t, &sw, lpn, nlpn, have);
	if (!ret) {
		ret = vsmfs_free_data_pages(t, lpn, have);
		/*
		 * The index still names @lpn: its frames go back (the page
		 * table blocks are cached now, so this swap cannot fail).
		 */
		if (ret)
			vsmfs_swap_pages(t, &sw, lpn, nlpn, have);
	}
	vsmfs_swap_flush(&sw);
	if (ret) {
		/* A run left allocated would be no file's: the handle fails. */
		vsmfs_trans_fail(t, vsmfs_free_data_pages(t, nlpn, need));
		vi->i_pages -= need;
		return ret;
	}
	vi->i_pages -= have;
	trace_vsmfs_zfdm(inode, key, have, true);
	vsmfs_stat_inc(sbi, zfdm_migrations);
	vsmfs_stat_add(sbi, zfdm_migrated_pages, have);
	return 0;
}

/**
 * vsmfs_extend_run() - make the run of a piece cover its first pages
 * @t: the transaction
 * @inode: a regular file
 * @key: the piece
 * @need: pages of the piece the run must cover
 * @wfrom: start of the bytes the caller will fill, in the piece
 * @wto: end of those bytes (exclusive)
 * @large: the file is large (its runs start at free superpages)
 * @runp: the run's first logical page, returned
 * @havep: the pages the run had before, returned
 *
 * Make the run of piece @key cover pages [0, @need) of the piece. New pages
 * outside [@wfrom, @wto) (byte offsets in the piece that the caller will
 * fill) are zeroed. The run's first logical page is returned in @runp, the
 * pages it had before in @havep.
 *
 * Where the run grows (ZFDM): into the reserved tail of its VSP if it owns
 * one; in place if the pages after it are free; otherwise into a new run
 * whose frames are swapped with the old one's (vsmfs_swap_pages()), so file
 * data keeps its frames and no data is copied. A large file whose tail was
 * given back at its last close takes a fresh VSP on its next append the
 * same way, and so does the last run of a small file that grows large. A
 * large file's last run that starts a VSP reserves the rest of it, so
 * further appends grow in place.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: 0 or a negative errno.
 */
int vsmfs_extend_run(struct vsmfs_trans *t, struct inode *inode, u64 key,
		     u64 need, u64 wfrom, u64 wto, bool large, u64 *runp, u64 *havep)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 e = vsmfs_idx_lookup(inode, key);
	u64 have = e ? vsmfs_idx_count(e) : 0, lpn = vsmfs_idx_lpn(e), nlpn, freed;
	bool tail = vi->i_tail_key == key + 1, last = key + 1 >= vi->i_tail_key;
	/*
	 * The last run of a large file moves into a fresh VSP when it has none
	 * of its own: its tail was given back, or it started in a VSP shared
	 * with small files before the file grew large.
	 */
	bool zfdm = large && have && last && !tail &&
		    ((vi->i_flags & VSMFS_IFLAG_TAIL_RELEASED) || lpn % VSMFS_VSP_PAGES);
	bool sparse = false;
	char __pm *base;
	int ret;

	*runp = lpn;
	*havep = have;
	if (have >= need)
		return 0;
	/* Index blocks first: once pages are taken, nothing below can fail. */
	ret = vsmfs_idx_set(t, inode, key, e);
	if (ret)
		return ret;
	if (tail && need > have + vsmfs_tail_pages(e)) {
		ret = vsmfs_tail_release(t, inode, &freed);
		if (ret)
			return ret;
		tail = false;
	}
	if (zfdm && lpn % VSMFS_VSP_PAGES == 0 &&
	    !vsmfs_alloc_pages_at(t, lpn + have, VSMFS_VSP_PAGES - have)) {
		/* The rest of the VSP is still free: reserve it again in place. */
		if (vi->i_tail_key) {
			ret = vsmfs_tail_release(t, inode, &freed);
			if (ret)
				return ret;
		}
		vi->i_pages += VSMFS_VSP_PAGES - have;
		vi->i_tail_key = key + 1;
		vi->i_flags &= ~VSMFS_IFLAG_TAIL_RELEASED;
		tail = true;
	}
	if (tail) {
		/* Pages of the reserved tail, owned and counted already. */
		nlpn = lpn;
	} else if (vsmfs_sparse_gap(sbi, have, need, wfrom, wto) &&
		   !vsmfs_extend_sparse(t, inode, lpn, have, need, wfrom, zfdm, &nlpn)) {
		/* New pages without frames but those written. */
		sparse = true;
	} else if (have && !zfdm && lpn % VSMFS_VSP_PAGES + need <= VSMFS_VSP_PAGES &&
		   !vsmfs_alloc_pages_at(t, lpn + have, need - have)) {
		/* Grown in place: the run stays inside its VSP. */
		nlpn = lpn;
		vi->i_pages += need - have;
	} else {
		ret = vsmfs_alloc_pages(t, need, large && !have &&
					!(key % (PUD_SIZE >> VSMFS_VSP_SHIFT)) ?
					VSMFS_LARGE_GIB : large, &nlpn);
		if (ret == -ENOSPC && vsmfs_gather_ok(t, have, need) &&
		    !vsmfs_gather(t, inode, lpn, have, need,
				  max(wfrom, have << VSMFS_BLOCK_SHIFT), zfdm, &nlpn)) {
			/* No free run that long: frames gathered from all free space. */
			sparse = true;
			vsmfs_stat_inc(sbi, frames_gathered);
			ret = 0;
		} else if (!ret) {
			ret = vsmfs_move_run(t, inode, key, lpn, nlpn, have, need);
		}
		if (ret)
			return ret;
	}
	base = vsmfs_lpn_ptr(sbi, nlpn);
	/*
	 * Zero the new pages around the part the caller fills (on the sparse
	 * way, holes, and pages zeroed when they took frames).
	 */
	if (!sparse && wfrom > have << VSMFS_BLOCK_SHIFT)
		vsmfs_zero_pm(base + (have << VSMFS_BLOCK_SHIFT),
			      wfrom - (have << VSMFS_BLOCK_SHIFT));
	if (!sparse && wto < need << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wto, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm(base + z, (need << VSMFS_BLOCK_SHIFT) - z);
	}
	if (tail && (nlpn + need) % VSMFS_VSP_PAGES == 0) {
		/* The run fills its VSP: nothing is reserved any more. */
		vi->i_tail_key = 0;
	} else if (!tail && large && last && nlpn % VSMFS_VSP_PAGES == 0 &&
		   need < VSMFS_VSP_PAGES &&
		   !vsmfs_alloc_pages_at(t, nlpn + need, VSMFS_VSP_PAGES - need)) {
		/* A large file's last run reserves the rest of its VSP. */
		if (vi->i_tail_key) {
			ret = vsmfs_tail_release(t, inode, &freed);
			if (ret) {
				vsmfs_trans_fail(t, vsmfs_free_data_pages(t, nlpn + need,
									  VSMFS_VSP_PAGES - need));
				goto out;
			}
		}
		vi->i_pages += VSMFS_VSP_PAGES - need;
		vi->i_tail_key = key + 1;
		vi->i_flags &= ~VSMFS_IFLAG_TAIL_RELEASED;
	}
out:
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	*runp = nlpn;
	return vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, need));
}

/**
 * vsmfs_write_new() - write into pages of a piece past its run
 * @t: the transaction
 * @inode: a regular file
 * @key: the piece
 * @wfrom: start of the write, in bytes in the piece
 * @wto: end of the write (exclusive)
 * @from: the data
 * @large: the file is large (its runs start at free superpages)
 *
 * Write into pages of piece @key past its run: they are new, so they are
 * written directly and become visible with the transaction. [@wfrom, @wto)
 * are byte offsets in the piece.
 *
 * Context: i_idx_sem held for writing, inside @t.
 * Return: the bytes copied, or a negative errno.
 */
ssize_t vsmfs_write_new(struct vsmfs_trans *t, struct inode *inode, u64 key,
			u64 wfrom, u64 wto, struct iov_iter *from, bool large)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE), run, have;
	size_t n;
	char __pm *p;
	int ret;

	ret = vsmfs_extend_run(t, inode, key, need, wfrom, wto, large, &run, &have);
	/* Pages of the old run written in place need frames. */
	if (!ret && wfrom >> VSMFS_BLOCK_SHIFT < have)
		ret = vsmfs_fill_holes(t, inode, run + (wfrom >> VSMFS_BLOCK_SHIFT),
				       min(need, have) - (wfrom >> VSMFS_BLOCK_SHIFT), false);
	if (ret)
		return ret;
	p = vsmfs_lpn_ptr(sbi, run);
	pagefault_disable();
	n = vsmfs_copy_from_iter(p + wfrom, wto - wfrom, from);
	pagefault_enable();
	/* New pages the copy did not reach must not keep old contents. */
	if (wfrom + n < wto && wto > have << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wfrom + n, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm(p + z, wto - z);
	}
	if (have << VSMFS_BLOCK_SHIFT > wfrom)
		vsmfs_stat_add(sbi, data_inplace_bytes,
			       min(wfrom + n, have << VSMFS_BLOCK_SHIFT) - wfrom);
	vsmfs_stat_add(sbi, data_user_bytes, n);
	return n;
}
