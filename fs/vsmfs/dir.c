// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs directories: lookup and readdir.
 */
#include <linux/fs.h>
#include "vsmfs.h"

static int vsmfs_readdir(struct file *file, struct dir_context *ctx)
{
	dir_emit_dots(file, ctx);
	return 0;
}

static struct dentry *vsmfs_lookup(struct inode *dir, struct dentry *dentry,
				   unsigned int flags)
{
	if (dentry->d_name.len > VSMFS_NAME_LEN)
		return ERR_PTR(-ENAMETOOLONG);
	return d_splice_alias(NULL, dentry);
}

const struct file_operations vsmfs_dir_operations = {
	.llseek		= generic_file_llseek,
	.read		= generic_read_dir,
	.iterate_shared	= vsmfs_readdir,
};

const struct inode_operations vsmfs_dir_inode_operations = {
	.lookup		= vsmfs_lookup,
};
