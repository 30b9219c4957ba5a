/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for <linux/string.h>. */
#ifndef _TOOLS_LINUX_STRING_H
#define _TOOLS_LINUX_STRING_H

#include <string.h>

#endif /* _TOOLS_LINUX_STRING_H */
