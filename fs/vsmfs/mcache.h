/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A commit's note of a block it has still to write (vsmfs_mblk.m_jc),
 * shared by the metadata cache, which gives the commit a copy of the block
 * before a task changes it (__vsmfs_mblk_freeze(), mcache.c), and the
 * commit pipeline that writes it (jcommit.c).
 */
#ifndef _VSMFS_MCACHE_H
#define _VSMFS_MCACHE_H

#include "vsmfs.h"
#include "jcore.h"

/*
 * struct vsmfs_jcopy - a block placed and written outside s_trans_mutex
 * @mb: its DRAM copy, which notes this (m_jc) until it is written
 * @home: its home block
 * @src: NULL while the DRAM block is as the transaction left it; else a
 *	 copy of it as it was, made by the first task that changed it
 *	 since (__vsmfs_mblk_freeze()); both under @mb->m_jlock
 * @dst: the journal block on PM, owned by the commit until it is committed
 * @delta: write only the words that differ from the old version in @dst
 * @mask: with @delta and @mask_ok, the words that may differ (m_dmask)
 * @mask_ok: @mask is known
 */
struct vsmfs_jcopy {
	struct vsmfs_mblk *mb;
	u64	home;
	void	*src;
	void __pm	*dst;
	bool	delta;
	bool	mask_ok;
	u64	mask[VSMFS_JMASK_WORDS];
};

#endif /* _VSMFS_MCACHE_H */
