/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for the kernel's static_assert and offsetof helpers. */
#ifndef _TOOLS_LINUX_BUILD_BUG_H
#define _TOOLS_LINUX_BUILD_BUG_H

#include <assert.h>
#include <stddef.h>

#ifndef offsetofend
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))
#endif

#endif /* _TOOLS_LINUX_BUILD_BUG_H */
