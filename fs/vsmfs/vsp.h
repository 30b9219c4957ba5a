/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs vsp.h
 */
#ifndef _VSMFS_VSP_H
#define _VSMFS_VSP_H

#include <linux/bug.h>
#include <linux/mm.h>
#include "vsmfs.h"

/* vsp.c */
int vsmfs_vsp_map(struct vsmfs_sb_info *sbi);
void vsmfs_vsp_unmap(struct vsmfs_sb_info *sbi);
void vsmfs_swap_add(struct vsmfs_swap *sw, u64 lpn, u64 count);
void vsmfs_swap_flush(struct vsmfs_swap *sw);
void vsmfs_swap_undo(struct vsmfs_swap *sw, u64 lpn, const __le64 *old, const __le64 *cur,
		     unsigned int n);
int vsmfs_tlb_init(void);
void vsmfs_tlb_exit(void);
void vsmfs_vsp_enter(void);
void vsmfs_vsp_exit(void);
void __pm *vsmfs_data_begin(struct vsmfs_sb_info *sbi, u64 lpn, u64 off, u64 len,
			    bool *ranged);

/*
 * Page swaps: inline, as every copy-on-write of a page makes a few of
 * them (vsmfs_swap_pages() and vsmfs_swap_pages_shared() in ptable.c).
 */
/* Index in s_vsp_ptes of the PTE page that maps @addr. */
static inline unsigned long vsmfs_vsp_chunk(struct vsmfs_sb_info *sbi, unsigned long addr)
{
	return (addr >> PMD_SHIFT) - ((unsigned long)sbi->s_vsp_base >> PMD_SHIFT);
}

/* The kernel PTE of logical page @lpn, which the caller checked is in range. */
static __always_inline pte_t *vsmfs_vsp_pte(struct vsmfs_sb_info *sbi, u64 lpn)
{
	unsigned long a = (__force unsigned long)sbi->s_vsp_base + (lpn << VSMFS_BLOCK_SHIFT);

	return sbi->s_vsp_ptes[vsmfs_vsp_chunk(sbi, a)] + pte_index(a);
}

/**
 * vsmfs_swap_init() - start a batch of page swaps
 * @sbi: the file system
 * @sw: the batch
 */
static inline void vsmfs_swap_init(struct vsmfs_sb_info *sbi, struct vsmfs_swap *sw)
{
	sw->sw_sbi = sbi;
	sw->sw_pages = 0;
	sw->sw_nr = 0;
	sw->sw_all = false;
	sw->sw_defer_b = false;
	sw->sw_unused = false;
}

static inline void vsmfs_swap_note(struct vsmfs_swap *sw, u64 lpn, u64 count)
{
	if (sw->sw_all)
		return;
	if (sw->sw_nr == VSMFS_SWAP_RANGES || 2 * sw->sw_pages > VSMFS_SWAP_INVLPG) {
		sw->sw_all = true;
		return;
	}
	sw->sw_lpn[sw->sw_nr] = lpn;
	sw->sw_count[sw->sw_nr] = count;
	sw->sw_nr++;
}

/*
 * Mark VSP @vsp as one whose frames may be out of order. Read first: once
 * marked, a VSP's word is not written again by the swaps of every CPU.
 */
static __always_inline void vsmfs_vsp_mix(struct vsmfs_sb_info *sbi, u64 vsp)
{
	if (!test_bit(vsp, sbi->s_vsp_mixed))
		set_bit(vsp, sbi->s_vsp_mixed);
}

/**
 * vsmfs_vsp_mix_swap() - note the VSPs of two runs about to be swapped
 * @sbi: the file system
 * @a: first logical page of one run
 * @b: first logical page of the other run
 * @count: pages in each run
 *
 * The frames of the @count pages at @a and @b are to be swapped: mark the
 * VSPs they are in (s_vsp_mixed) first, so that whoever owns the pages
 * after the swapping task finds the marks. Two whole VSPs swapped keep
 * their frames in order, unless either was out of order.
 */
static inline void vsmfs_vsp_mix_swap(struct vsmfs_sb_info *sbi, u64 a, u64 b, u64 count)
{
	u64 va = a / VSMFS_VSP_PAGES, vb = b / VSMFS_VSP_PAGES, v;

	if (count == VSMFS_VSP_PAGES && !(a % VSMFS_VSP_PAGES) && !(b % VSMFS_VSP_PAGES) &&
	    !test_bit(va, sbi->s_vsp_mixed) && !test_bit(vb, sbi->s_vsp_mixed))
		return;
	for (v = va; v <= (a + count - 1) / VSMFS_VSP_PAGES; v++)
		vsmfs_vsp_mix(sbi, v);
	for (v = vb; v <= (b + count - 1) / VSMFS_VSP_PAGES; v++)
		vsmfs_vsp_mix(sbi, v);
}

/**
 * vsmfs_swap_one() - exchange the frames behind two logical pages
 * @sbi: the file system
 * @a: one logical page
 * @sa: its page table entry, in the DRAM copy of its block
 * @b: the other logical page
 * @sb: its entry
 *
 * Exchanges the entries and the live PTEs (and the pages' bits of
 * s_noframe and s_unwritten). The caller has the entries' blocks in its
 * handle, and shoots the pages down with its batch (vsmfs_swap_done()).
 */
static inline void vsmfs_swap_one(struct vsmfs_sb_info *sbi, u64 a, __le64 *sa, u64 b, __le64 *sb)
{
	pte_t *pa = vsmfs_vsp_pte(sbi, a), *pb = vsmfs_vsp_pte(sbi, b);
	__le64 tmp = *sa;
	pte_t x;

	*sa = *sb;
	*sb = tmp;
	x = ptep_get(pa);
	set_pte(pa, ptep_get(pb));
	set_pte(pb, x);
	/* Atomic: swaps beside this one change bits of the same words. */
	if (sbi->s_noframe && test_bit(a, sbi->s_noframe) != test_bit(b, sbi->s_noframe)) {
		change_bit(a, sbi->s_noframe);
		change_bit(b, sbi->s_noframe);
	}
	if (sbi->s_unwritten && test_bit(a, sbi->s_unwritten) != test_bit(b, sbi->s_unwritten)) {
		change_bit(a, sbi->s_unwritten);
		change_bit(b, sbi->s_unwritten);
	}
}

/**
 * vsmfs_swap_valid() - whether two runs may be swapped
 * @sbi: the file system
 * @a: first logical page of one run
 * @b: first logical page of the other run
 * @count: pages in each run
 *
 * Return: true if both runs are in range and apart (else a warning).
 */
static inline bool vsmfs_swap_valid(struct vsmfs_sb_info *sbi, u64 a, u64 b, u64 count)
{
	u64 n = sbi->s_layout.lpages;

	return !WARN_ON_ONCE(!a || !b || a + count > n || b + count > n ||
			     (a < b + count && b < a + count));
}

/**
 * vsmfs_swap_done() - pages swapped, to be shot down by their batch
 * @sw: the batch
 * @a: first logical page of one run swapped
 * @b: first logical page of the other (not with @sw->sw_defer_b)
 * @count: pages in each run
 */
static inline void vsmfs_swap_done(struct vsmfs_swap *sw, u64 a, u64 b, u64 count)
{
	sw->sw_pages += count;
	vsmfs_swap_note(sw, a, count);
	if (!sw->sw_defer_b)
		vsmfs_swap_note(sw, b, count);
	vsmfs_stat_add(sw->sw_sbi, pte_swaps, count);
}

/* The end of an access begun by vsmfs_data_begin(). */
static inline void vsmfs_data_end(bool ranged)
{
	if (ranged)
		vsmfs_vsp_exit();
}

/* The end of a handle's stay on its CPU (@vsp: its t_vsp). */
static inline void vsmfs_trans_cpu_end(bool vsp)
{
	if (vsp)
		vsmfs_vsp_exit();
	else
		migrate_enable();
}

/* Whether logical page @lpn has no frame: it reads as zeros, a hole. */
static inline bool vsmfs_lpn_hole(const struct vsmfs_sb_info *sbi, u64 lpn)
{
	return sbi->s_noframe && test_bit(lpn, sbi->s_noframe);
}

/* Whether logical page @lpn was fallocated and not written since. */
static inline bool vsmfs_lpn_unwritten(const struct vsmfs_sb_info *sbi, u64 lpn)
{
	return sbi->s_unwritten && test_bit(lpn, sbi->s_unwritten);
}

/* Whether any of @count pages from @lpn is unwritten. */
static inline bool vsmfs_any_unwritten(const struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	if (!sbi->s_unwritten)
		return false;
	if (count == 1)
		return test_bit(lpn, sbi->s_unwritten);
	return find_next_bit(sbi->s_unwritten, lpn + count, lpn) < lpn + count;
}

u64 __vsmfs_frames_in(const struct vsmfs_sb_info *sbi, u64 lpn, u64 count);

/* How many of @count logical pages from @lpn have frames. */
static inline u64 vsmfs_frames_in(const struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	if (!sbi->s_noframe)
		return count;
	/* One page, as most overwrites: its bit alone. */
	if (count == 1)
		return !test_bit(lpn, sbi->s_noframe);
	return __vsmfs_frames_in(sbi, lpn, count);
}

/* Kernel address of logical page @lpn in the mapping layer. */
static inline void __pm *vsmfs_lpn_ptr(struct vsmfs_sb_info *sbi, u64 lpn)
{
	if (WARN_ON_ONCE(!lpn || lpn >= sbi->s_layout.lpages))
		return NULL;
	return sbi->s_vsp_base + (lpn << VSMFS_BLOCK_SHIFT);
}

#endif /* _VSMFS_VSP_H */
