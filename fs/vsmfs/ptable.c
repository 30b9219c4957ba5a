// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs journaled page table updates: swaps of the frames behind logical
 * pages (vsmfs_swap_pages(), and vsmfs_swap_pages_shared() in a shared
 * handle) and the unwritten marks of fallocated pages
 * (vsmfs_pt_unwritten()). Each changes the entries in the DRAM copies of
 * the page table blocks, in the caller's handle, and the live mapping
 * through vsp.c, which holds the pure mapping (PTE swaps, TLB shootdowns,
 * uses of the range).
 *
 * Ordering: the persistent entries are metadata blocks of the running
 * transaction, so both halves of every swap in a batch reach PM together,
 * at commit, after the fence that makes the data written through the new
 * mapping durable. A crash before the commit leaves the old page table,
 * which still matches the old index.
 */
#include "vsmfs.h"
#include "ptable.h"
#include "mcache.h"
#include "vsp.h"
#include "trans.h"
#include "badframe.h"

/* Persistent page table slot of @lpn, in its DRAM copy. */
static __always_inline __le64 *vsmfs_pt_slot(struct vsmfs_sb_info *sbi, u64 lpn,
					     struct vsmfs_mblk **mbp)
{
	struct vsmfs_mblk *mb;

	mb = vsmfs_mblk_get(sbi, sbi->s_layout.ptable_start + lpn / (VSMFS_BLOCK_SIZE / 8));
	if (IS_ERR(mb))
		return NULL;
	*mbp = mb;
	return (__le64 *)mb->m_data + lpn % (VSMFS_BLOCK_SIZE / 8);
}

/*
 * Get write access in @t to the page table entries of @count logical pages
 * from @lpn: the words of each block they are in.
 */
static int vsmfs_pt_get_write_access(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	struct vsmfs_mblk *mb;
	__le64 *slot;
	u64 k;
	int ret;

	for (; count; lpn += k, count -= k) {
		k = min_t(u64, count, VSMFS_PTES_PER_BLOCK - lpn % VSMFS_PTES_PER_BLOCK);
		slot = vsmfs_pt_slot(t->t_sbi, lpn, &mb);
		if (!slot)
			return -ENOMEM;
		ret = vsmfs_trans_get_write_access_range(t, mb, (u8 *)slot - mb->m_data, k * 8);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * vsmfs_swap_pages() - exchange the frames behind two runs of logical pages
 * @t: running transaction; the page table blocks are dirtied in it
 * @sw: the batch this swap belongs to
 * @a: first logical page of one run
 * @b: first logical page of the other run
 * @count: pages in each run; the runs must not overlap
 *
 * After the swap, logical page @a + i reads what @b + i read before and
 * the other way round; no data is copied. The caller holds whatever keeps
 * others from using both runs, and must not access either through the
 * mapping layer before vsmfs_swap_flush() (nor @b ever, with
 * @sw->sw_defer_b: its stale translations are dropped when the commit
 * that frees it is made, vsmfs_trans_apply_frees()).
 *
 * Return: 0 or a negative errno; on error nothing has been changed.
 */
int vsmfs_swap_pages(struct vsmfs_trans *t, struct vsmfs_swap *sw, u64 a, u64 b, u64 count)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 i;
	int ret;

	if (!vsmfs_swap_valid(sbi, a, b, count))
		return -EINVAL;
	/*
	 * Get write access first, so a failure changes nothing: metadata
	 * blocks stay cached once read, so the second pass cannot fail.
	 */
	ret = vsmfs_pt_get_write_access(t, a, count);
	if (!ret)
		ret = vsmfs_pt_get_write_access(t, b, count);
	if (ret)
		return ret;
	vsmfs_vsp_mix_swap(sbi, a, b, count);
	for (i = 0; i < count; i++) {
		struct vsmfs_mblk *ma, *mb;
		__le64 *sa, *sb;

		sa = vsmfs_pt_slot(sbi, a + i, &ma);
		sb = vsmfs_pt_slot(sbi, b + i, &mb);
		if (WARN_ON_ONCE(!sa || !sb))
			return -EIO;
		vsmfs_swap_one(sbi, a + i, sa, b + i, sb);
		vsmfs_trans_dirty(t, ma);
		vsmfs_trans_dirty(t, mb);
	}
	vsmfs_swap_done(sw, a, b, count);
	return 0;
}

/* Whether marking @count pages from @lpn (un)written changes an entry. */
static bool vsmfs_unwritten_changes(struct vsmfs_sb_info *sbi, u64 lpn, u64 count, bool set)
{
	u64 i;

	if (!set)
		return vsmfs_any_unwritten(sbi, lpn, count);
	for (i = lpn; i < lpn + count; i++)
		if (!vsmfs_lpn_unwritten(sbi, i) && !vsmfs_lpn_hole(sbi, i))
			return true;
	return false;
}

/* Set or clear the unwritten flag of page @lpn, with write access to its block. */
static int vsmfs_pt_mark(struct vsmfs_trans *t, u64 lpn, bool set)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	__le64 *slot = vsmfs_pt_slot(sbi, lpn, &mb);

	if (WARN_ON_ONCE(!slot))
		return -EIO;
	if (set)
		*slot |= cpu_to_le64(VSMFS_PTE_UNWRITTEN);
	else
		*slot &= ~cpu_to_le64(VSMFS_PTE_UNWRITTEN);
	assign_bit(lpn, sbi->s_unwritten, set);
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/*
 * vsmfs_pt_unwritten() setting, in shared metadata handle @t: the pages
 * are a reservation's that @t makes a file's (fallocate() beside other
 * handles, vsmfs_falloc_pages()), which no other handle changes, none
 * marked yet, all with frames. Their page table blocks join @t first (the
 * only step that can fail); then each entry gets the flag with a
 * whole-word store, noted with an atomic bit operation, and its bit of
 * s_unwritten is set atomically (other handles change bits of the same
 * words). No copy is saved: an abort clears the flags again
 * (@t->t_unw_lpn). The change reaches PM with the commit of the running
 * transaction, with the rest of the handle.
 */
static int vsmfs_pt_unwritten_shared(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 i, k, end = lpn + count;
	struct vsmfs_mblk *mb;
	__le64 *slot;

	if (t->t_unw_count || vsmfs_any_unwritten(sbi, lpn, count) ||
	    vsmfs_frames_in(sbi, lpn, count) != count)
		return -EAGAIN;
	for (i = lpn; i < end; i += k) {
		k = min_t(u64, end - i, VSMFS_PTES_PER_BLOCK - i % VSMFS_PTES_PER_BLOCK);
		slot = vsmfs_pt_slot(sbi, i, &mb);
		if (!slot)
			return -ENOMEM;
		vsmfs_mblk_freeze(sbi, mb);
		vsmfs_trans_dirty(t, mb);
	}
	for (i = lpn; i < end; i++) {
		slot = vsmfs_pt_slot(sbi, i, &mb);
		WRITE_ONCE(*slot, *slot | cpu_to_le64(VSMFS_PTE_UNWRITTEN));
		vsmfs_note_word_shared(mb, i % VSMFS_PTES_PER_BLOCK);
		set_bit(i, sbi->s_unwritten);
	}
	t->t_unw_lpn = lpn;
	t->t_unw_count = count;
	return 0;
}

/*
 * vsmfs_pt_unwritten() clearing, in shared metadata handle @t: the pages
 * are those of a file the handle frees or truncates (its entries, which
 * the caller's locks keep to this task) or of a reservation it ends. In
 * each page table block with a flag to clear, the entries from the first
 * flagged to the last are saved in the handle's log, so that an abort puts
 * them and their bits of s_unwritten back (vsmfs_trans_put_words()), and
 * the block joins @t from a credit; both are checked for every block
 * before any entry changes (-EAGAIN: the log is full, or no credit is
 * left). Then each flagged entry loses the flag with a whole-word store,
 * its bit of s_unwritten cleared atomically (other handles change bits of
 * the same words); the handle's end notes the words that changed, with
 * atomic bit operations (vsmfs_trans_handle_done()).
 */
static int vsmfs_pt_written_meta_shared(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 i, k, first, last, end = lpn + count;
	u32 need = 0;
	struct vsmfs_mblk *mb;
	__le64 *slot;
	int ret;

	for (i = lpn; i < end; i += k) {
		k = min_t(u64, end - i, VSMFS_PTES_PER_BLOCK - i % VSMFS_PTES_PER_BLOCK);
		first = find_next_bit(sbi->s_unwritten, i + k, i);
		if (first >= i + k)
			continue;
		for (last = i + k - 1; !test_bit(last, sbi->s_unwritten); last--)
			;
		slot = vsmfs_pt_slot(sbi, first, &mb);
		if (!slot)
			return -ENOMEM;
		if (!READ_ONCE(mb->m_is_dirty) && ++need > t->t_credits)
			return -EAGAIN;
		ret = vsmfs_trans_get_write_access_range(t, mb, (u8 *)slot - mb->m_data,
							 (last - first + 1) * 8);
		if (ret)
			return ret;
	}
	i = lpn;
	for_each_set_bit_from(i, sbi->s_unwritten, end) {
		slot = vsmfs_pt_slot(sbi, i, &mb);
		WRITE_ONCE(*slot, *slot & ~cpu_to_le64(VSMFS_PTE_UNWRITTEN));
		clear_bit(i, sbi->s_unwritten);
		vsmfs_trans_dirty(t, mb);
	}
	return 0;
}

/**
 * vsmfs_pt_unwritten() - mark pages fallocated and not written, or not
 * @t: running transaction
 * @lpn: first logical page
 * @count: pages
 * @set: set VSMFS_PTE_UNWRITTEN in the entries of the pages with frames,
 *	or clear it in all of them
 *
 * The page table blocks join @t only where an entry changes. In a shared
 * metadata handle, only the pages of a reservation the handle makes a
 * file's may be marked, as its last change (vsmfs_pt_unwritten_shared());
 * the flags of pages it frees are cleared with their old entries saved
 * (vsmfs_pt_written_meta_shared()).
 *
 * Return: 0 or a negative errno (-EAGAIN in a shared metadata handle that
 * cannot make the change); on error nothing has changed.
 */
int vsmfs_pt_unwritten(struct vsmfs_trans *t, u64 lpn, u64 count, bool set)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 i, k, end = lpn + count;
	int ret;

	if (!sbi->s_unwritten)
		return 0;
	if (t->t_shared)
		return set ? vsmfs_pt_unwritten_shared(t, lpn, count) :
			     vsmfs_pt_written_meta_shared(t, lpn, count);
	/* Write access to every block first, so a failure changes nothing. */
	for (i = lpn; i < end; i += k) {
		k = min_t(u64, end - i, VSMFS_PTES_PER_BLOCK - i % VSMFS_PTES_PER_BLOCK);
		if (!vsmfs_unwritten_changes(sbi, i, k, set))
			continue;
		/* The DRAM bitmap of unwritten pages: not beside others. */
		if (t->t_shared)
			return -EAGAIN;
		ret = vsmfs_pt_get_write_access(t, i, k);
		if (ret)
			return ret;
	}
	if (!set) {
		/* Only the pages marked: a run freed has few or none. */
		i = lpn;
		for_each_set_bit_from(i, sbi->s_unwritten, end) {
			ret = vsmfs_pt_mark(t, i, false);
			if (ret)
				return ret;
		}
		return 0;
	}
	for (i = lpn; i < end; i++) {
		if (!vsmfs_unwritten_changes(sbi, i, 1, set))
			continue;
		ret = vsmfs_pt_mark(t, i, true);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Cache the page table block of @count pages from @lpn, which lie in one
 * VSP and so in one block, and add it to the running transaction in shared
 * handle @h, before any entry is changed: *@slot is then the entry of
 * @lpn, *@mbp its block.
 */
static __always_inline int vsmfs_pt_join_shared(struct vsmfs_whandle *h, u64 lpn, u64 count,
						__le64 **slot, struct vsmfs_mblk **mbp)
{
	if (WARN_ON_ONCE(lpn % VSMFS_PTES_PER_BLOCK + count > VSMFS_PTES_PER_BLOCK))
		return -EINVAL;
	*slot = vsmfs_pt_slot(h->h_sbi, lpn, mbp);
	if (!*slot)
		return -ENOMEM;
	return vsmfs_whandle_dirty(h, *mbp);
}

/*
 * Swap @count pages at @a and @b, whose entries from @sa and @sb lie in
 * blocks @ma and @mb, noting the changed words of the blocks.
 */
static __always_inline void vsmfs_swap_run_shared(struct vsmfs_sb_info *sbi,
						  u64 a, __le64 *sa, struct vsmfs_mblk *ma,
						  u64 b, __le64 *sb, struct vsmfs_mblk *mb,
						  u64 count)
{
	u64 i;

	for (i = 0; i < count; i++) {
		vsmfs_swap_one(sbi, a + i, sa + i, b + i, sb + i);
		/* Atomic: handles beside this one note words of the same block. */
		vsmfs_note_word_shared(ma, (a + i) % VSMFS_PTES_PER_BLOCK);
		vsmfs_note_word_shared(mb, (b + i) % VSMFS_PTES_PER_BLOCK);
	}
}

/**
 * vsmfs_swap_pages_shared() - vsmfs_swap_pages() in a shared handle
 * @h: the handle (vsmfs_whandle_begin())
 * @sw: the batch this swap belongs to
 * @a: first logical page of one run
 * @b: first logical page of the other run
 * @count: pages in each run, each run inside one VSP; the runs must not
 *	overlap
 *
 * As vsmfs_swap_pages(). Handles beside @h may change other entries of the
 * same page table blocks: each entry is changed only by the handle that
 * owns its page (the file's, under the caller's locks, or a reserved
 * run's), with whole-word stores, and the words changed are noted in the
 * blocks' m_cmask with atomic bit operations. A handle that changes
 * whole blocks, and may put them back from a copy, does not run beside
 * any (s_handles_sem).
 *
 * Return: 0 or a negative errno; on error nothing has been changed.
 */
int vsmfs_swap_pages_shared(struct vsmfs_whandle *h, struct vsmfs_swap *sw, u64 a, u64 b,
			    u64 count)
{
	struct vsmfs_sb_info *sbi = h->h_sbi;
	struct vsmfs_mblk *ma, *mb;
	__le64 *sa, *sb;
	int ret;

	if (!vsmfs_swap_valid(sbi, a, b, count) ||
	    WARN_ON_ONCE(h->h_nswaps == VSMFS_WHANDLE_SWAPS))
		return -EINVAL;
	/* Blocks cached and in the transaction first: the swap cannot fail. */
	ret = vsmfs_pt_join_shared(h, a, count, &sa, &ma);
	if (!ret)
		ret = vsmfs_pt_join_shared(h, b, count, &sb, &mb);
	if (ret)
		return ret;
	vsmfs_vsp_mix_swap(sbi, a, b, count);
	vsmfs_swap_run_shared(sbi, a, sa, ma, b, sb, mb, count);
	h->h_swap[h->h_nswaps][0] = a;
	h->h_swap[h->h_nswaps][1] = b;
	h->h_swap[h->h_nswaps][2] = count;
	h->h_nswaps++;
	vsmfs_swap_done(sw, a, b, count);
	return 0;
}

/**
 * vsmfs_pt_written_shared() - vsmfs_pt_unwritten() clearing, in a shared handle
 * @h: the handle (vsmfs_whandle_begin())
 * @lpn: first logical page
 * @count: pages, inside one VSP
 *
 * The pages, fallocated and zeroed, hold data from now: the flag goes from
 * the entries that have it. Each entry is changed only by the handle that
 * owns its page (a file's, under the caller's locks, or a reserved run's),
 * with a whole-word store, and the word is noted with an atomic bit
 * operation, as for vsmfs_swap_pages_shared(); the page's bit of
 * s_unwritten, which swaps beside this handle change too, atomically. The
 * change reaches PM with the commit of the running transaction, as the
 * swaps and index changes of the handle do, so a crash keeps the pages
 * unwritten, or written with those changes.
 *
 * Return: 0 or a negative errno (-ENOMEM: the block could not be cached);
 * on error nothing has changed.
 */
int vsmfs_pt_written_shared(struct vsmfs_whandle *h, u64 lpn, u64 count)
{
	struct vsmfs_sb_info *sbi = h->h_sbi;
	struct vsmfs_mblk *mb;
	__le64 *slot;
	u64 i;
	int ret;

	if (!vsmfs_any_unwritten(sbi, lpn, count))
		return 0;
	/* The block cached and in the transaction first: the rest cannot fail. */
	ret = vsmfs_pt_join_shared(h, lpn, count, &slot, &mb);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		if (!test_bit(lpn + i, sbi->s_unwritten))
			continue;
		WRITE_ONCE(slot[i], slot[i] & ~cpu_to_le64(VSMFS_PTE_UNWRITTEN));
		vsmfs_note_word_shared(mb, (lpn + i) % VSMFS_PTES_PER_BLOCK);
		clear_bit(lpn + i, sbi->s_unwritten);
	}
	/* For a fast record: one run, or more than one (no record). */
	if (!h->h_written[1]) {
		h->h_written[0] = lpn;
		h->h_written[1] = count;
	} else if (h->h_written[0] != lpn || h->h_written[1] != count) {
		h->h_written[1] = U64_MAX;
	}
	return 0;
}

/**
 * vsmfs_pt_entry() - a page table entry as the running transaction has it
 * @sbi: the file system
 * @lpn: logical page
 * @pte: set to the entry, as stored on PM
 *
 * Context: the caller keeps the entry from changing.
 * Return: 0, or -ENOMEM if its block could not be cached.
 */
int vsmfs_pt_entry(struct vsmfs_sb_info *sbi, u64 lpn, __le64 *pte)
{
	struct vsmfs_mblk *mb;
	__le64 *slot = vsmfs_pt_slot(sbi, lpn, &mb);

	if (!slot)
		return -ENOMEM;
	*pte = READ_ONCE(*slot);
	return 0;
}

/**
 * vsmfs_swap_back_shared() - undo the swaps of a shared handle
 * @h: the handle, which gives up
 * @sw: the batch the pages swapped back join (flushed by the caller)
 *
 * A swap is its own inverse: each run is swapped again, newest first. The
 * blocks stay in the running transaction, with their words as they were.
 */
void vsmfs_swap_back_shared(struct vsmfs_whandle *h, struct vsmfs_swap *sw)
{
	while (h->h_nswaps) {
		const u64 *s = h->h_swap[--h->h_nswaps];
		struct vsmfs_mblk *ma, *mb;
		/* The blocks the swap found: cached, found again. */
		__le64 *sa = vsmfs_pt_slot(h->h_sbi, s[0], &ma);
		__le64 *sb = vsmfs_pt_slot(h->h_sbi, s[1], &mb);

		vsmfs_swap_run_shared(h->h_sbi, s[0], sa, ma, s[1], sb, mb, s[2]);
		vsmfs_swap_add(sw, s[0], s[2]);
		vsmfs_swap_add(sw, s[1], s[2]);
	}
}

/**
 * vsmfs_lpn_blk() - device block behind a logical page
 * @sbi: the file system
 * @lpn: logical page
 *
 * Return: the device block of the frame the page table names, 0 on error.
 */
u64 vsmfs_lpn_blk(struct vsmfs_sb_info *sbi, u64 lpn)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_mblk *mb;
	u64 frame;

	if (!lpn || lpn >= l->lpages)
		return 0;
	mb = vsmfs_mblk_get(sbi, l->ptable_start + lpn / (VSMFS_BLOCK_SIZE / 8));
	if (IS_ERR(mb))
		return 0;
	frame = le64_to_cpu(((__le64 *)mb->m_data)[lpn % (VSMFS_BLOCK_SIZE / 8)]) &
		VSMFS_PTE_FRAME_MASK;
	return frame < l->data_pages ? l->data_start + frame : 0;
}

/**
 * vsmfs_frame_lpn() - the logical page a data frame backs
 * @sbi: the file system
 * @frame: the frame, relative to the data area
 *
 * The reverse of the page table, for the rare caller that starts from a
 * frame (a memory failure): mkfs's identity first, then a scan. A page
 * table block cached in DRAM holds the current entries, one that is not
 * has none changed since it was last written home.
 *
 * Context: process context. Entries that swaps change meanwhile may be
 * seen old or new: only pages whose frames do not move (free pages, those
 * a pool holds) are found for certain.
 * Return: the logical page (0 is never allocated), or U64_MAX if none
 * names @frame.
 */
u64 vsmfs_frame_lpn(struct vsmfs_sb_info *sbi, u64 frame)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 b, i, nblk = DIV_ROUND_UP(l->lpages, VSMFS_PTES_PER_BLOCK);

	if (frame && frame < l->lpages && vsmfs_lpn_blk(sbi, frame) == l->data_start + frame)
		return frame;
	for (b = 0; b < nblk; b++) {
		u64 blk = l->ptable_start + b, n = min_t(u64, VSMFS_PTES_PER_BLOCK,
							  l->lpages - b * VSMFS_PTES_PER_BLOCK);
		struct vsmfs_mblk *mb = vsmfs_mblk_find(sbi, blk);
		const __le64 *pt = mb ? (const __le64 *)mb->m_data :
				   vsmfs_pm_view((__le64 __pm *)vsmfs_blk_ptr(sbi, blk));

		for (i = 0; i < n; i++)
			if ((le64_to_cpu(READ_ONCE(pt[i])) & VSMFS_PTE_FRAME_MASK) == frame)
				return b * VSMFS_PTES_PER_BLOCK + i;
		cond_resched();
	}
	return U64_MAX;
}

/**
 * vsmfs_first_bad() - the first of some logical pages on a bad frame
 * @sbi: the file system, with bad frames (vsmfs_any_bad())
 * @lpn: first page
 * @count: pages
 *
 * Return: the index of the first page from @lpn whose frame is bad, or
 * @count if none is. Pages without a frame are not bad.
 */
u64 vsmfs_first_bad(struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	u64 i;

	for (i = 0; i < count; i++)
		if (vsmfs_blk_bad(sbi, vsmfs_lpn_blk(sbi, lpn + i)))
			break;
	return i;
}

/**
 * vsmfs_vsp_frames_from() - whether a VSP's pages have frames in a row
 * @sbi: the file system
 * @vsp: the VSP (its page table entries fill one block)
 * @blk: device block wanted behind its first page
 *
 * Return: whether page i of the VSP is backed by block @blk + i, for
 * every i (the unwritten flag aside).
 */
bool vsmfs_vsp_frames_from(struct vsmfs_sb_info *sbi, u64 vsp, u64 blk)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_mblk *mb;
	const __le64 *pt;
	u64 i;

	if (blk < l->data_start || (vsp + 1) * VSMFS_VSP_PAGES > l->lpages)
		return false;
	mb = vsmfs_mblk_get(sbi, l->ptable_start + vsp);
	if (IS_ERR(mb))
		return false;
	pt = (const __le64 *)mb->m_data;
	for (i = 0; i < VSMFS_VSP_PAGES; i++)
		if ((le64_to_cpu(READ_ONCE(pt[i])) & VSMFS_PTE_FRAME_MASK) !=
		    blk - l->data_start + i)
			return false;
	return true;
}
