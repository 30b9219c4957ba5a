/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs persistence-ordering log (CONFIG_VSMFS_PMLOG, see pmlog.c): the
 * persistence primitives of pmem.h record their cached stores, flushes,
 * non-temporal stores and fences. Without the option every hook is an empty inline
 * function and the primitives compile to what they are without it.
 * Included through pmem.h, which defines __pm first.
 */
#ifndef _VSMFS_PMLOG_H
#define _VSMFS_PMLOG_H

#include <linux/types.h>

struct dentry;
struct vsmfs_sb_info;

#ifdef CONFIG_VSMFS_PMLOG
void vsmfs_pmlog_store(const void __pm *addr, size_t len);
void vsmfs_pmlog_flush(const void __pm *addr, size_t len);
void vsmfs_pmlog_nt(const void __pm *addr, size_t len);
void vsmfs_pmlog_fence(void);
void vsmfs_pmlog_settle(void);
void vsmfs_pmlog_attach(struct vsmfs_sb_info *sbi);
void vsmfs_pmlog_detach(struct vsmfs_sb_info *sbi);
void vsmfs_pmlog_init(struct dentry *dir);
void vsmfs_pmlog_exit(void);
bool vsmfs_pmlog_misorder_sb(void);
bool vsmfs_pmlog_remote_fence(void);
void vsmfs_pmlog_fence_elsewhere(void);
#else
static inline void vsmfs_pmlog_store(const void __pm *addr, size_t len)
{
}

static inline void vsmfs_pmlog_flush(const void __pm *addr, size_t len)
{
}

static inline void vsmfs_pmlog_nt(const void __pm *addr, size_t len)
{
}

static inline void vsmfs_pmlog_fence(void)
{
}

static inline void vsmfs_pmlog_settle(void)
{
}

static inline void vsmfs_pmlog_attach(struct vsmfs_sb_info *sbi)
{
}

static inline void vsmfs_pmlog_detach(struct vsmfs_sb_info *sbi)
{
}

static inline void vsmfs_pmlog_init(struct dentry *dir)
{
}

static inline void vsmfs_pmlog_exit(void)
{
}

static inline bool vsmfs_pmlog_misorder_sb(void)
{
	return false;
}

static inline bool vsmfs_pmlog_remote_fence(void)
{
	return false;
}

static inline void vsmfs_pmlog_fence_elsewhere(void)
{
}
#endif

#endif /* _VSMFS_PMLOG_H */
