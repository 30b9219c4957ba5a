/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs internal definitions: DRAM structures of a mounted file system and
 * the functions each source file offers the others, grouped by file.
 */
#ifndef _VSMFS_H
#define _VSMFS_H

#include <linux/fs.h>
#include <linux/dax.h>
#include <linux/ratelimit.h>
#include "vsmfs_format.h"
#include "verify.h"

#define EFSCORRUPTED	EUCLEAN		/* file system is corrupted */

/* Mount options (struct vsmfs_sb_info.s_mount_opt). */
#define VSMFS_MOUNT_DAX_SHOWN	0x0001	/* "dax" or "dax=always" given */

/*
 * struct vsmfs_sb_info - a mounted vsmfs
 *
 * Fields are set once in fill_super and read-only afterwards unless a
 * comment says otherwise.
 */
struct vsmfs_sb_info {
	struct super_block	*s_sb;
	struct dax_device	*s_daxdev;
	u64			s_dax_part_off;	/* byte offset of the partition */
	void			*s_virt;	/* kernel address of block 0 */
	u64			s_dev_blocks;	/* usable device size in blocks */
	struct vsmfs_dsb	*s_dsb;		/* primary superblock on PM */
	struct vsmfs_layout	s_layout;	/* regions, from the superblock */
	unsigned int		s_mount_opt;	/* VSMFS_MOUNT_*, changed by remount */
};

/*
 * struct vsmfs_inode_info - in-core inode
 */
struct vsmfs_inode_info {
	u32			i_flags;	/* VSMFS_IFLAG_*, under i_rwsem */
	struct inode		vfs_inode;
};

static inline struct vsmfs_sb_info *VSMFS_SB(struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct vsmfs_inode_info *VSMFS_I(struct inode *inode)
{
	return container_of(inode, struct vsmfs_inode_info, vfs_inode);
}

/*
 * Kernel address of device block @blk. The one place where a block number
 * becomes a pointer; an out-of-range block is a bug.
 */
static inline void *vsmfs_blk_ptr(struct vsmfs_sb_info *sbi, u64 blk)
{
	if (WARN_ON_ONCE(blk >= sbi->s_dev_blocks))
		return NULL;
	return sbi->s_virt + (blk << VSMFS_BLOCK_SHIFT);
}

/* Messages name the device and the function. */
#define vsmfs_err(sb, fmt, ...) \
	pr_err("vsmfs (%s): %s: " fmt "\n", (sb)->s_id, __func__, ##__VA_ARGS__)
#define vsmfs_err_ratelimited(sb, fmt, ...) \
	pr_err_ratelimited("vsmfs (%s): %s: " fmt "\n", (sb)->s_id, __func__, ##__VA_ARGS__)
#define vsmfs_warn(sb, fmt, ...) \
	pr_warn("vsmfs (%s): %s: " fmt "\n", (sb)->s_id, __func__, ##__VA_ARGS__)
#define vsmfs_info(sb, fmt, ...) \
	pr_info("vsmfs (%s): " fmt "\n", (sb)->s_id, ##__VA_ARGS__)

/* inode.c */
struct inode *vsmfs_iget(struct super_block *sb, u64 ino);
struct inode *vsmfs_alloc_inode(struct super_block *sb);
void vsmfs_free_inode(struct inode *inode);

/* dir.c */
extern const struct file_operations vsmfs_dir_operations;
extern const struct inode_operations vsmfs_dir_inode_operations;

#endif /* _VSMFS_H */
