/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for the kernel's sort(): the C library's qsort().
 * The swap function is always the default one here.
 */
#ifndef _TOOLS_LINUX_SORT_H
#define _TOOLS_LINUX_SORT_H

#include <stdlib.h>

static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *), void *swap)
{
	(void)swap;
	qsort(base, num, size, cmp);
}

#endif /* _TOOLS_LINUX_SORT_H */
