/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs journaled page table updates (ptable.c): page swaps made in a
 * handle, the unwritten flag of page table entries, and the device block
 * behind a logical page.
 */
#ifndef _VSMFS_PTABLE_H
#define _VSMFS_PTABLE_H

#include "vsmfs.h"

int vsmfs_swap_pages(struct vsmfs_trans *t, struct vsmfs_swap *sw, u64 a, u64 b, u64 count);
int vsmfs_swap_pages_shared(struct vsmfs_whandle *h, struct vsmfs_swap *sw, u64 a, u64 b,
			    u64 count);
void vsmfs_swap_back_shared(struct vsmfs_whandle *h, struct vsmfs_swap *sw);
int vsmfs_pt_unwritten(struct vsmfs_trans *t, u64 lpn, u64 count, bool set);
int vsmfs_pt_written_shared(struct vsmfs_whandle *h, u64 lpn, u64 count);
int vsmfs_pt_entry(struct vsmfs_sb_info *sbi, u64 lpn, __le64 *pte);
u64 vsmfs_lpn_blk(struct vsmfs_sb_info *sbi, u64 lpn);
u64 vsmfs_frame_lpn(struct vsmfs_sb_info *sbi, u64 frame);
u64 vsmfs_first_bad(struct vsmfs_sb_info *sbi, u64 lpn, u64 count);
bool vsmfs_vsp_frames_from(struct vsmfs_sb_info *sbi, u64 vsp, u64 blk);

#endif /* _VSMFS_PTABLE_H */
