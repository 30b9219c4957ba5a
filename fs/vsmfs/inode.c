// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs inodes: reading on-media inodes into the inode cache. An i-number
 * is translated to its inode-table slot through the inode mapping table.
 */
#include <linux/fs.h>
#include "vsmfs.h"

/* On-media inode of @ino, or an ERR_PTR if the mapping table is corrupt. */
static struct vsmfs_dinode *vsmfs_dinode(struct super_block *sb, u64 ino)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);
	const struct vsmfs_layout *l = &sbi->s_layout;
	__le32 *imap = vsmfs_blk_ptr(sbi, l->imap_start);
	u64 slot;

	if (!ino || ino >= l->inodes)
		return ERR_PTR(-EFSCORRUPTED);
	slot = le32_to_cpu(imap[ino]);
	if (!slot || slot >= l->inodes) {
		vsmfs_err(sb, "inode %llu maps to invalid slot %llu", ino, slot);
		return ERR_PTR(-EFSCORRUPTED);
	}
	return vsmfs_blk_ptr(sbi, l->itable_start) + slot * VSMFS_INODE_SIZE;
}

/**
 * vsmfs_iget() - get the in-core inode of an i-number
 * @sb: super block
 * @ino: i-number
 *
 * Context: process context, may sleep.
 * Return: the inode with a reference held, or an ERR_PTR.
 */
struct inode *vsmfs_iget(struct super_block *sb, u64 ino)
{
	struct vsmfs_dinode *di;
	struct inode *inode;

	inode = iget_locked(sb, ino);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(inode->i_state & I_NEW))
		return inode;

	di = vsmfs_dinode(sb, ino);
	if (IS_ERR(di)) {
		iget_failed(inode);
		return ERR_CAST(di);
	}
	if (!le32_to_cpu(di->i_nlink) || !le16_to_cpu(di->i_mode)) {
		vsmfs_err(sb, "inode %llu is not in use", ino);
		iget_failed(inode);
		return ERR_PTR(-EFSCORRUPTED);
	}
	inode->i_mode = le16_to_cpu(di->i_mode);
	set_nlink(inode, le32_to_cpu(di->i_nlink));
	i_uid_write(inode, le32_to_cpu(di->i_uid));
	i_gid_write(inode, le32_to_cpu(di->i_gid));
	inode->i_size = le64_to_cpu(di->i_size);
	inode->i_blocks = le64_to_cpu(di->i_pages) << (VSMFS_BLOCK_SHIFT - 9);
	inode->i_atime.tv_sec = le64_to_cpu(di->i_atime);
	inode->i_atime.tv_nsec = le32_to_cpu(di->i_atime_ns);
	inode->i_mtime.tv_sec = le64_to_cpu(di->i_mtime);
	inode->i_mtime.tv_nsec = le32_to_cpu(di->i_mtime_ns);
	inode->i_ctime.tv_sec = le64_to_cpu(di->i_ctime);
	inode->i_ctime.tv_nsec = le32_to_cpu(di->i_ctime_ns);
	inode->i_generation = le32_to_cpu(di->i_generation);
	VSMFS_I(inode)->i_flags = le32_to_cpu(di->i_flags);

	if (S_ISDIR(inode->i_mode)) {
		inode->i_op = &vsmfs_dir_inode_operations;
		inode->i_fop = &vsmfs_dir_operations;
	} else {
		vsmfs_err(sb, "inode %llu has unsupported mode 0%o", ino, inode->i_mode);
		iget_failed(inode);
		return ERR_PTR(-EFSCORRUPTED);
	}
	unlock_new_inode(inode);
	return inode;
}
