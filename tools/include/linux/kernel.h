/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for the few kernel helpers the shared format code
 * (fs/vsmfs/verify.c, fs/vsmfs/jcore.c, vsmfs_format.h) uses.
 */
#ifndef _TOOLS_LINUX_KERNEL_H
#define _TOOLS_LINUX_KERNEL_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define U32_MAX		((u32)~0U)

#define READ_ONCE(x)		(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

#define hweight32(x)		((unsigned int)__builtin_popcount(x))

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define roundup(x, y)		((((x) + ((y) - 1)) / (y)) * (y))

#define cpu_to_le16(x)	((__le16)htole16(x))
#define cpu_to_le32(x)	((__le32)htole32(x))
#define cpu_to_le64(x)	((__le64)htole64(x))
#define le16_to_cpu(x)	le16toh(x)
#define le32_to_cpu(x)	le32toh(x)
#define le64_to_cpu(x)	le64toh(x)

#endif /* _TOOLS_LINUX_KERNEL_H */
