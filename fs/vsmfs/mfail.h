/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs memory failure (mfail.c): the DAX holder operations and the bad
 * frames known at mount.
 */
#ifndef _VSMFS_MFAIL_H
#define _VSMFS_MFAIL_H

#include <linux/dax.h>
#include "vsmfs.h"

extern const struct dax_holder_operations vsmfs_dax_holder_ops;
void vsmfs_mf_mount(struct vsmfs_sb_info *sbi);

#endif /* _VSMFS_MFAIL_H */
