/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the vsmfs user-space tools. */
#ifndef _VSMFS_TOOLS_H
#define _VSMFS_TOOLS_H

#include <linux/kernel.h>

#define VSMFS_TOOLS_VERSION	"0.1"

extern const char *progname;

int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int parse_size(const char *s, u64 *out);
int parse_uuid(const char *s, u8 uuid[16]);
void format_uuid(const u8 uuid[16], char out[37]);
int open_device(const char *path, int flags, u64 *bytes);
struct vsmfs_dsb;
void sb_clear_errors(struct vsmfs_dsb *sb);
struct vsmfs_layout;
void print_lpages(const struct vsmfs_layout *l);

#endif /* _VSMFS_TOOLS_H */
