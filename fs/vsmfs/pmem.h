/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Persistence primitives of vsmfs: every store to PM that must survive a
 * crash goes through these, named for what they guarantee. They are built
 * on what Linux 6.1 exports (arch_wb_cache_pmem, __memcpy_flushcache,
 * pmem_wmb). With CONFIG_VSMFS_PMLOG each also records what it did, for
 * the persistence-ordering checker (pmlog.c); without it the hooks are
 * empty.
 *
 * A plain (cached) store to PM goes through vsmfs_pm_write(),
 * vsmfs_pm_store() or vsmfs_pm_memset(), never through a bare pointer: the
 * checker must see it, because a dirty line may be written back by the
 * cache at any moment, before the flush and fence meant to order it.
 */
#ifndef _VSMFS_PMEM_H
#define _VSMFS_PMEM_H

#include <linux/libnvdimm.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include "pmlog.h"

/* Write back [addr, addr+len) to the persistence domain; no ordering. */
static inline void vsmfs_flush(const void *addr, size_t len)
{
	arch_wb_cache_pmem((void *)addr, len);
	vsmfs_pmlog_flush(addr, len);
}

/* Order earlier flushes and non-temporal stores before later stores. */
static inline void vsmfs_fence(void)
{
	pmem_wmb();
	vsmfs_pmlog_fence();
}

/* Flush then fence: [addr, addr+len) is durable when this returns. */
static inline void vsmfs_persist(const void *addr, size_t len)
{
	vsmfs_flush(addr, len);
	vsmfs_fence();
}

/*
 * One aligned store of a scalar to PM through the cache, e.g.
 * vsmfs_pm_write(&hdr->h_state, cpu_to_le64(state)): single-copy atomic
 * (at most 8 bytes, naturally aligned), durable only after a flush of its
 * line and a fence, and possibly on PM earlier (a write-back of the line).
 */
#define vsmfs_pm_write(ptr, val)					\
	do {								\
		typeof(ptr) __pm_p = (ptr);				\
		WRITE_ONCE(*__pm_p, (val));				\
		vsmfs_pmlog_store(__pm_p, sizeof(*__pm_p));		\
	} while (0)

/*
 * Copy to PM through the cache. Not atomic: the lines may reach PM in any
 * order, each at any moment from here on; durable after their flush and a
 * fence.
 */
static inline void vsmfs_pm_store(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	vsmfs_pmlog_store(dst, len);
}

/* Fill [dst, dst+len) of PM through the cache, as vsmfs_pm_store(). */
static inline void vsmfs_pm_memset(void *dst, int c, size_t len)
{
	memset(dst, c, len);
	vsmfs_pmlog_store(dst, len);
}

/* Zero [addr, addr+len) of PM; durable after the next fence. */
static inline void vsmfs_zero_pm(void *addr, size_t len)
{
	vsmfs_pm_memset(addr, 0, len);
	vsmfs_flush(addr, len);
}

/* Copy to PM with non-temporal stores; durable after the next fence. */
static inline void vsmfs_memcpy_nt(void *dst, const void *src, size_t len)
{
	memcpy_flushcache(dst, src, len);
	vsmfs_pmlog_nt(dst, len);
}

/* Copy from user to PM with non-temporal stores; durable after a fence. */
static inline size_t vsmfs_copy_from_iter(void *dst, size_t len, struct iov_iter *i)
{
	size_t n = _copy_from_iter_flushcache(dst, len, i);

	vsmfs_pmlog_nt(dst, n);
	return n;
}

/*
 * Copy PM to PM, stopping at poisoned memory in @src (copy_mc_to_kernel(),
 * which a machine check on a load ends with an error return rather than a
 * panic). The stores are cached and written back here, the part copied
 * durable after the next fence, as with vsmfs_zero_pm().
 * Return: the bytes not copied, 0 if all were.
 */
static inline size_t vsmfs_copy_mc_pm(void *dst, const void *src, size_t len)
{
	size_t left = copy_mc_to_kernel(dst, src, len);

	vsmfs_flush(dst, len - left);
	return left;
}

/*
 * Copy PM to DRAM, stopping at poisoned memory in @src.
 * Return: the bytes not copied, 0 if all were.
 */
static inline size_t vsmfs_read_pm(void *dst, const void *src, size_t len)
{
	return copy_mc_to_kernel(dst, src, len);
}

/* Copy from PM to user, stopping short at poisoned memory. */
static inline size_t vsmfs_copy_to_iter(const void *src, size_t len, struct iov_iter *i)
{
	return _copy_mc_to_iter(src, len, i);
}

#endif /* _VSMFS_PMEM_H */
