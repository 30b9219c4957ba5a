/* SPDX-License-Identifier: GPL-2.0 */
/* User-space crc32c with the kernel's calling convention (no inversion). */
#ifndef _TOOLS_LINUX_CRC32C_H
#define _TOOLS_LINUX_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *address, unsigned int length);

#endif /* _TOOLS_LINUX_CRC32C_H */
