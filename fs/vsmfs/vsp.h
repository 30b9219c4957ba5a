/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs vsp.h
 */
#ifndef _VSMFS_VSP_H
#define _VSMFS_VSP_H

#include "vsmfs.h"

/* vsp.c */
int vsmfs_vsp_map(struct vsmfs_sb_info *sbi);
void vsmfs_vsp_unmap(struct vsmfs_sb_info *sbi);
void vsmfs_swap_init(struct vsmfs_sb_info *sbi, struct vsmfs_swap *sw);
bool vsmfs_swap_valid(struct vsmfs_sb_info *sbi, u64 a, u64 b, u64 count);
void vsmfs_vsp_mix_swap(struct vsmfs_sb_info *sbi, u64 a, u64 b, u64 count);
void vsmfs_swap_one(struct vsmfs_sb_info *sbi, u64 a, __le64 *sa, u64 b, __le64 *sb);
void vsmfs_swap_done(struct vsmfs_swap *sw, u64 a, u64 b, u64 count);
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
