/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs bad data frames: the set in DRAM and the list on PM (badframe.c).
 */
#ifndef _VSMFS_BADFRAME_H
#define _VSMFS_BADFRAME_H

#include "vsmfs.h"

int vsmfs_bad_load(struct vsmfs_sb_info *sbi);
int vsmfs_bad_add(struct vsmfs_sb_info *sbi, u64 frame);
void vsmfs_bad_destroy(struct vsmfs_sb_info *sbi);
ssize_t vsmfs_bad_show(struct vsmfs_sb_info *sbi, char *buf);

/*
 * vsmfs_blk_bad() - whether device block @blk is a data frame found bad.
 * One load and a branch while none is (the common case).
 */
static inline bool vsmfs_blk_bad(struct vsmfs_sb_info *sbi, u64 blk)
{
	return unlikely(READ_ONCE(sbi->s_nbad)) && blk >= sbi->s_layout.data_start &&
	       xa_load(&sbi->s_bad, blk - sbi->s_layout.data_start);
}

/* Whether any data frame was found bad in this mount or before it. */
static inline bool vsmfs_any_bad(struct vsmfs_sb_info *sbi)
{
	return unlikely(READ_ONCE(sbi->s_nbad));
}

#endif /* _VSMFS_BADFRAME_H */
