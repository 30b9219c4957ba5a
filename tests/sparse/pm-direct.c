// SPDX-License-Identifier: GPL-2.0
/*
 * The negative test of the __pm address space (fs/vsmfs/pmem.h), run by
 * tests/hygiene: sparse must report each line marked "sparse: MESSAGE"
 * below with that message, and nothing else. Each marked line touches PM
 * the way the module must not: a store and a load through a __pm pointer,
 * and a PM address taken as a plain pointer. The lines between show the
 * same through the accessors, which sparse must accept. Compiled only to
 * be checked: never linked or loaded.
 */
#include "vsmfs.h"

u32 vsmfs_pm_direct(struct vsmfs_sb_info *sbi);

u32 vsmfs_pm_direct(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_dsb __pm *dsb = vsmfs_blk_ptr(sbi, VSMFS_SB_BLOCK);
	struct vsmfs_dsb *plain;
	u32 state;

	plain = vsmfs_blk_ptr(sbi, VSMFS_SB_BLOCK);	/* sparse: different address spaces */
	vsmfs_pm_write(&dsb->s_state, cpu_to_le32(VSMFS_STATE_CLEAN));
	vsmfs_persist(&dsb->s_state, sizeof(dsb->s_state));
	dsb->s_state = cpu_to_le32(VSMFS_STATE_CLEAN);	/* sparse: dereference of noderef expression */
	state = le32_to_cpu(vsmfs_pm_read(&dsb->s_state));
	state |= le32_to_cpu(dsb->s_state);	/* sparse: dereference of noderef expression */
	state |= vsmfs_sb_csum(vsmfs_pm_view(dsb));
	return state | (plain != NULL);
}
