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
 *
 * Every pointer into PM is a __pm pointer: the direct mapping of the
 * device (sbi->s_virt, vsmfs_blk_ptr()), the mapping layer of data pages
 * (sbi->s_vsp_base, vsmfs_lpn_ptr()) and all that is derived from them.
 * __pm is an address space of its own, as __user and __iomem are, so
 * sparse (make check) rejects a load or a store through such a pointer,
 * and its conversion to or from a plain pointer without __force. PM is
 * read only through vsmfs_pm_read() (an aligned scalar), vsmfs_pm_load()
 * (bytes), vsmfs_pm_view() (in place, with code that takes plain
 * pointers), vsmfs_read_pm() and vsmfs_copy_to_iter() (which stop at
 * poisoned memory), and written only through the primitives below. The
 * __force casts are in this file and in the log of pmlog.c, and where a
 * kernel interface gives or takes PM as a plain pointer, each with a
 * comment: dax_direct_access() at mount (super.c), vmap() and vunmap() of
 * the mapping layer (vsp.c). Without __CHECKER__, __pm is empty: the
 * annotation changes no generated code. tests/sparse/pm-direct.c checks
 * that sparse rejects a direct access to PM.
 */
#ifndef _VSMFS_PMEM_H
#define _VSMFS_PMEM_H

#include <linux/compiler.h>
#include <linux/libnvdimm.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#ifdef __CHECKER__
#define __pm	__attribute__((noderef, address_space(__pm)))
#else
#define __pm
#endif

/* Nothing at run time: sparse checks that @p is a __pm pointer. */
static inline void vsmfs_chk_pm_ptr(const void __pm *p)
{
}

#include "pmlog.h"

/*
 * Set on a CPU by every store, non-temporal store and flush to PM made
 * through the primitives below, cleared by each fence on it: whether the
 * CPU may have stores to PM not yet ordered by a fence. A task that moves
 * to another CPU leaves its stores ordered (a migration acts as a fence,
 * see trans.c), so the flag of the CPU a task runs on covers all the
 * task's own unfenced stores. Set after the stores and cleared before the
 * fence, so a preemption in between only makes a later check fence once
 * more than needed.
 */
DECLARE_PER_CPU(bool, vsmfs_pm_unfenced);

static inline void vsmfs_pm_stored(void)
{
	this_cpu_write(vsmfs_pm_unfenced, true);
}

/* Write back [addr, addr+len) to the persistence domain; no ordering. */
static inline void vsmfs_flush(const void __pm *addr, size_t len)
{
	arch_wb_cache_pmem((__force void *)addr, len);
	vsmfs_pmlog_flush(addr, len);
	vsmfs_pm_stored();
}

/* Order earlier flushes and non-temporal stores before later stores. */
static inline void vsmfs_fence(void)
{
	this_cpu_write(vsmfs_pm_unfenced, false);
	pmem_wmb();
	vsmfs_pmlog_fence();
}

/*
 * vsmfs_fence() if this CPU stored to PM since its last fence: where only
 * the task's own earlier stores need ordering (the end of a handle).
 */
static inline void vsmfs_fence_pending(void)
{
	if (this_cpu_read(vsmfs_pm_unfenced))
		vsmfs_fence();
	else
		vsmfs_pmlog_settle();
}

/* Flush then fence: [addr, addr+len) is durable when this returns. */
static inline void vsmfs_persist(const void __pm *addr, size_t len)
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
		vsmfs_chk_pm_ptr(__pm_p);				\
		WRITE_ONCE(*(__force typeof(*__pm_p) *)__pm_p, (val));	\
		vsmfs_pmlog_store(__pm_p, sizeof(*__pm_p));		\
		vsmfs_pm_stored();					\
	} while (0)

/*
 * One aligned load of a scalar from PM, e.g.
 * le64_to_cpu(vsmfs_pm_read(&jsb->j_checkpoint)): single-copy atomic (at
 * most 8 bytes, naturally aligned), made once and not torn by the compiler
 * (READ_ONCE()). A machine check on poisoned memory is not caught: blocks
 * that may hold it are read through vsmfs_read_pm().
 */
#define vsmfs_pm_read(ptr)						\
	({								\
		typeof(ptr) __pm_p = (ptr);				\
		vsmfs_chk_pm_ptr(__pm_p);				\
		READ_ONCE(*(__force typeof(*__pm_p) *)__pm_p);		\
	})

/*
 * Copy PM to DRAM with plain loads (mount copies the superblock so). Not
 * atomic, and a machine check on poisoned memory is not caught:
 * vsmfs_read_pm() is the copy that stops there.
 */
static inline void vsmfs_pm_load(void *dst, const void __pm *src, size_t len)
{
	memcpy(dst, (__force const void *)src, len);
}

/*
 * PM at @ptr as a plain pointer to const, to read it in place with code
 * that takes plain pointers: the bitmap functions, the checks shared with
 * the tools (verify.c, jcore.c), the source of a copy from PM to PM. Loads
 * only: the pointer is const, so a store through it does not compile. As
 * with vsmfs_pm_load(), a machine check on poisoned memory is not caught.
 */
#define vsmfs_pm_view(ptr)						\
	({								\
		typeof(ptr) __pm_p = (ptr);				\
		vsmfs_chk_pm_ptr(__pm_p);				\
		(__force const typeof(*__pm_p) *)__pm_p;		\
	})

/*
 * Copy to PM through the cache. Not atomic: the lines may reach PM in any
 * order, each at any moment from here on; durable after their flush and a
 * fence.
 */
static inline void vsmfs_pm_store(void __pm *dst, const void *src, size_t len)
{
	memcpy((__force void *)dst, src, len);
	vsmfs_pmlog_store(dst, len);
	vsmfs_pm_stored();
}

/* Fill [dst, dst+len) of PM through the cache, as vsmfs_pm_store(). */
static inline void vsmfs_pm_memset(void __pm *dst, int c, size_t len)
{
	memset((__force void *)dst, c, len);
	vsmfs_pmlog_store(dst, len);
	vsmfs_pm_stored();
}

/* Zero [addr, addr+len) of PM; durable after the next fence. */
static inline void vsmfs_zero_pm(void __pm *addr, size_t len)
{
	vsmfs_pm_memset(addr, 0, len);
	vsmfs_flush(addr, len);
}

/* Copy to PM with non-temporal stores; durable after the next fence. */
static inline void vsmfs_memcpy_nt(void __pm *dst, const void *src, size_t len)
{
	memcpy_flushcache((__force void *)dst, src, len);
	vsmfs_pmlog_nt(dst, len);
	vsmfs_pm_stored();
}

/*
 * vsmfs_memcpy_nt() of whole cache lines, @dst and @len multiples of 64:
 * on x86-64 eight movnti a line, inline, without the alignment checks of
 * memcpy_flushcache() (a fast-commit record is one or a few lines).
 */
static __always_inline void vsmfs_memcpy_nt_lines(void __pm *dst, const u64 *src, size_t len)
{
#ifdef CONFIG_X86_64
	u64 *d = (__force u64 *)dst, *end = d + len / 8;

	for (; d < end; d += 8, src += 8) {
		asm volatile("movnti %1, %0" : "=m" (d[0]) : "r" (src[0]));
		asm volatile("movnti %1, %0" : "=m" (d[1]) : "r" (src[1]));
		asm volatile("movnti %1, %0" : "=m" (d[2]) : "r" (src[2]));
		asm volatile("movnti %1, %0" : "=m" (d[3]) : "r" (src[3]));
		asm volatile("movnti %1, %0" : "=m" (d[4]) : "r" (src[4]));
		asm volatile("movnti %1, %0" : "=m" (d[5]) : "r" (src[5]));
		asm volatile("movnti %1, %0" : "=m" (d[6]) : "r" (src[6]));
		asm volatile("movnti %1, %0" : "=m" (d[7]) : "r" (src[7]));
	}
	vsmfs_pmlog_nt(dst, len);
	vsmfs_pm_stored();
#else
	vsmfs_memcpy_nt(dst, src, len);
#endif
}

/*
 * Whether a copy from a user buffer to PM ends with a fence of its own:
 * on x86-64 (Linux 6.1, arch/x86/lib), _copy_from_iter_flushcache()
 * copies a user buffer with __copy_user_nocache(), which ends with an
 * sfence on every path out, and it writes nothing through the cache when
 * the destination and the length are 8-byte aligned
 * (__copy_user_flushcache()).
 */
#ifdef CONFIG_X86_64
#define VSMFS_USER_COPY_FENCES	1
#else
#define VSMFS_USER_COPY_FENCES	0
#endif

/*
 * Copy a user buffer to PM without the fence of the copy from user
 * (VSMFS_USER_COPY_FENCES) where it would not make the copy durable (an
 * unaligned edge is written through the cache after it): through a buffer
 * on the stack, then non-temporal stores; durable after the next fence.
 */
static noinline size_t vsmfs_copy_from_user_nt(void __pm *dst, size_t len, struct iov_iter *i)
{
	u8 buf[256];
	size_t done = 0, n, got;

	while (done < len) {
		n = min(len - done, sizeof(buf));
		got = copy_from_iter(buf, n, i);
		vsmfs_memcpy_nt((char __pm *)dst + done, buf, got);
		done += got;
		if (got < n)
			break;
	}
	return done;
}

/*
 * Copy to PM with non-temporal stores from @i; durable after the next
 * fence. From one user buffer (ITER_UBUF: write(2), pwrite(2)) of 8-byte
 * aligned destination and length copied whole, the copy's own fence (see
 * VSMFS_USER_COPY_FENCES) makes it durable on return, and with it every
 * earlier store and flush of this CPU: the CPU's flag is cleared before
 * the copy, as vsmfs_fence() clears it before its fence, and left clear,
 * so the next vsmfs_fence_pending() fences only what comes after. Other
 * user buffers of at most a page go through vsmfs_copy_from_user_nt(),
 * which fences nothing; a longer copy is worth its fence.
 */
static inline size_t vsmfs_copy_from_iter(void __pm *dst, size_t len, struct iov_iter *i)
{
	bool fences = VSMFS_USER_COPY_FENCES && iter_is_ubuf(i) && len >= 8 &&
		      IS_ALIGNED((__force unsigned long)dst | len, 8);
	size_t n;

	if (VSMFS_USER_COPY_FENCES && !fences && len <= PAGE_SIZE && user_backed_iter(i))
		return vsmfs_copy_from_user_nt(dst, len, i);
	if (fences)
		this_cpu_write(vsmfs_pm_unfenced, false);
	n = _copy_from_iter_flushcache((__force void *)dst, len, i);
	vsmfs_pmlog_nt(dst, n);
	if (fences && n == len)
		vsmfs_pmlog_fence();
	else
		vsmfs_pm_stored();
	return n;
}

/*
 * Copy PM to PM, stopping at poisoned memory in @src (copy_mc_to_kernel(),
 * which a machine check on a load ends with an error return rather than a
 * panic). The stores are cached and written back here, the part copied
 * durable after the next fence, as with vsmfs_zero_pm().
 * Return: the bytes not copied, 0 if all were.
 */
static inline size_t vsmfs_copy_mc_pm(void __pm *dst, const void __pm *src, size_t len)
{
	size_t left = copy_mc_to_kernel((__force void *)dst, (__force const void *)src, len);

	vsmfs_flush(dst, len - left);
	return left;
}

/*
 * Copy PM to DRAM, stopping at poisoned memory in @src.
 * Return: the bytes not copied, 0 if all were.
 */
static inline size_t vsmfs_read_pm(void *dst, const void __pm *src, size_t len)
{
	return copy_mc_to_kernel(dst, (__force const void *)src, len);
}

/* Copy from PM to user, stopping short at poisoned memory. */
static inline size_t vsmfs_copy_to_iter(const void __pm *src, size_t len, struct iov_iter *i)
{
	return _copy_mc_to_iter((__force const void *)src, len, i);
}

#endif /* _VSMFS_PMEM_H */
