/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs i-number allocation (ialloc.c): the regions of the CPUs, and
 * the allocation and free of an i-number in a handle.
 */
#ifndef _VSMFS_IALLOC_H
#define _VSMFS_IALLOC_H

#include "vsmfs.h"

u64 vsmfs_ino_region(struct vsmfs_sb_info *sbi, unsigned int cpu);
int vsmfs_alloc_ino(struct vsmfs_trans *t, u64 *ino);
int vsmfs_free_ino(struct vsmfs_trans *t, u64 ino);

#endif /* _VSMFS_IALLOC_H */
