// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs inode attributes and ioctls: the flags chattr and lsattr show
 * (FS_IOC_GETFLAGS/SETFLAGS, FS_IOC_FSGETXATTR/FSSETXATTR, through the
 * VFS fileattr interface), and the volume label (FS_IOC_GETFSLABEL,
 * FS_IOC_SETFSLABEL).
 *
 * The flags live in the on-media inode (VSMFS_IFLAG_USER) and are mirrored
 * in the VFS inode flags (S_IMMUTABLE, S_APPEND, S_NOATIME) by
 * vsmfs_set_inode_flags() in inode.c, through which the VFS refuses what an
 * immutable or append-only inode forbids. Every
 * file is DAX, so FS_XFLAG_DAX (FS_DAX_FL) is shown on regular files and
 * directories and cannot be cleared.
 */
#include <linux/fs.h>
#include <linux/fileattr.h>
#include <linux/mount.h>
#include <linux/uaccess.h>
#include <linux/compat.h>
#include "vsmfs.h"
#include "trans.h"
#include "inode.h"

/* FS_*_FL flags vsmfs keeps, and the VSMFS_IFLAG_* bit of each. */
static const struct {
	u32	fs_fl;
	u32	iflag;
} vsmfs_fl_map[] = {
	{ FS_IMMUTABLE_FL,	VSMFS_IFLAG_IMMUTABLE },
	{ FS_APPEND_FL,		VSMFS_IFLAG_APPEND },
	{ FS_NODUMP_FL,		VSMFS_IFLAG_NODUMP },
	{ FS_NOATIME_FL,	VSMFS_IFLAG_NOATIME },
};

#define VSMFS_FL_USER	(FS_IMMUTABLE_FL | FS_APPEND_FL | FS_NODUMP_FL | FS_NOATIME_FL)

/**
 * vsmfs_fileattr_get() - the attribute flags of an inode, for the VFS
 * @dentry: the file
 * @fa: filled with the flags, and the xflags the VFS derives from them
 *
 * Return: 0.
 */
int vsmfs_fileattr_get(struct dentry *dentry, struct fileattr *fa)
{
	struct inode *inode = d_inode(dentry);
	u32 f = READ_ONCE(VSMFS_I(inode)->i_flags), flags = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vsmfs_fl_map); i++)
		if (f & vsmfs_fl_map[i].iflag)
			flags |= vsmfs_fl_map[i].fs_fl;
	if (S_ISREG(inode->i_mode) || S_ISDIR(inode->i_mode))
		flags |= FS_DAX_FL;
	fileattr_fill_flags(fa, flags);
	return 0;
}

/* Store flags @iflags and the change time of @inode in handle @t, and end it. */
static int vsmfs_fileattr_change(struct vsmfs_trans *t, struct inode *inode, u32 iflags)
{
	int ret;

	vsmfs_trans_track(t, inode, false);
	/* An abort reloads both from the slot (vsmfs_inode_reload()). */
	WRITE_ONCE(VSMFS_I(inode)->i_flags, iflags);
	inode->i_ctime = current_time(inode);
	ret = vsmfs_mark_inode_dirty(t, inode);
	ret = vsmfs_trans_end(t, ret);
	if (!ret)
		vsmfs_set_inode_flags(inode);
	return ret;
}

/**
 * vsmfs_fileattr_set() - change the attribute flags of an inode
 * @mnt_userns: user namespace of the mount
 * @dentry: the file
 * @fa: the new flags; the VFS has checked the caller may change them
 *
 * The flags and the change time are committed in one transaction (in a
 * shared metadata handle beside other operations: they change the inode's
 * slot alone, which the inode lock keeps to this task; under
 * s_trans_mutex if that handle cannot finish, nothing changed); the VFS
 * inode flags follow only once it has committed. FS_DAX_FL is accepted set
 * or clear and changes nothing: every file is DAX.
 *
 * Context: the VFS holds the inode lock.
 * Return: 0, -EOPNOTSUPP for a flag or attribute vsmfs does not keep, or
 * the error of the transaction (which then changes nothing).
 */
int vsmfs_fileattr_set(struct user_namespace *mnt_userns, struct dentry *dentry,
		       struct fileattr *fa)
{
	struct inode *inode = d_inode(dentry);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_trans t;
	u32 iflags;
	unsigned int i;
	int ret;

	if (fileattr_has_fsx(fa))
		return -EOPNOTSUPP;
	if (fa->flags & ~(VSMFS_FL_USER | FS_DAX_FL))
		return -EOPNOTSUPP;
	iflags = vi->i_flags & ~VSMFS_IFLAG_USER;
	for (i = 0; i < ARRAY_SIZE(vsmfs_fl_map); i++)
		if (fa->flags & vsmfs_fl_map[i].fs_fl)
			iflags |= vsmfs_fl_map[i].iflag;

	/* The slot alone: beside other operations if the log holds it. */
	if (!vsmfs_trans_begin_shared(VSMFS_SB(inode->i_sb), &t, 1, 0)) {
		ret = vsmfs_fileattr_change(&t, inode, iflags);
		if (ret != -EAGAIN)
			return ret;
	}
	vsmfs_trans_begin(VSMFS_SB(inode->i_sb), &t);
	return vsmfs_fileattr_change(&t, inode, iflags);
}

/* FS_IOC_GETFSLABEL: the label, NUL terminated. */
static int vsmfs_ioc_getfslabel(struct super_block *sb, char __user *arg)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);
	char label[FSLABEL_MAX];

	BUILD_BUG_ON(VSMFS_LABEL_LEN >= FSLABEL_MAX);
	memset(label, 0, sizeof(label));
	spin_lock(&sbi->s_sb_lock);
	memcpy(label, sbi->s_dsb->s_label, VSMFS_LABEL_LEN);
	spin_unlock(&sbi->s_sb_lock);
	if (copy_to_user(arg, label, sizeof(label)))
		return -EFAULT;
	return 0;
}

/* FS_IOC_SETFSLABEL: a label of up to VSMFS_LABEL_LEN bytes. */
static int vsmfs_ioc_setfslabel(struct file *file, const char __user *arg)
{
	struct super_block *sb = file_inode(file)->i_sb;
	char label[FSLABEL_MAX];
	size_t len;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(label, arg, sizeof(label)))
		return -EFAULT;
	len = strnlen(label, sizeof(label));
	if (len > VSMFS_LABEL_LEN)
		return -EINVAL;
	ret = mnt_want_write_file(file);
	if (ret)
		return ret;
	ret = vsmfs_set_label(VSMFS_SB(sb), label, len);
	mnt_drop_write_file(file);
	return ret;
}

/**
 * vsmfs_ioctl() - the ioctls of vsmfs files and directories
 * @file: the file
 * @cmd: FS_IOC_GETFSLABEL or FS_IOC_SETFSLABEL; the flag ioctls are
 *	handled by the VFS through vsmfs_fileattr_get()/vsmfs_fileattr_set()
 * @arg: the user buffer
 *
 * Return: 0, a negative errno, or -ENOTTY for any other command.
 */
long vsmfs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case FS_IOC_GETFSLABEL:
		return vsmfs_ioc_getfslabel(file_inode(file)->i_sb, (char __user *)arg);
	case FS_IOC_SETFSLABEL:
		return vsmfs_ioc_setfslabel(file, (const char __user *)arg);
	default:
		return -ENOTTY;
	}
}

#ifdef CONFIG_COMPAT
/**
 * vsmfs_compat_ioctl() - vsmfs_ioctl() for 32-bit callers
 * @file: the file
 * @cmd: the command
 * @arg: the user buffer, a 32-bit pointer
 *
 * Return: as vsmfs_ioctl().
 */
long vsmfs_compat_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return vsmfs_ioctl(file, cmd, (unsigned long)compat_ptr(arg));
}
#endif
