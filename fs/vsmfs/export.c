// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs file handles, for NFS export and name_to_handle_at() /
 * open_by_handle_at().
 *
 * A handle holds the i-number and generation of the inode, and with a
 * parent those of the parent directory (FILEID_INO32_GEN and
 * FILEID_INO32_GEN_PARENT: i-numbers are below the inode count, at most
 * 2^32). Both are on PM, so a handle names the same file after a remount
 * or a reboot; the generation, new and random for every inode created,
 * makes a handle of a removed file stale (ESTALE) even once its i-number
 * is reused. A directory finds its parent through the i_parent field of
 * its inode (vsmfs_format.h), for a handle whose dentries have left the
 * cache.
 */
#include <linux/fs.h>
#include <linux/exportfs.h>
#include "vsmfs.h"
#include "trans.h"
#include "inode.h"
#include "fault.h"

static int vsmfs_encode_fh(struct inode *inode, __u32 *fh, int *max_len,
			   struct inode *parent)
{
	int len = parent ? 4 : 2;

	if (*max_len < len) {
		*max_len = len;
		return FILEID_INVALID;
	}
	/* The layout keeps every i-number below 2^32 (vsmfs_compute_layout()). */
	fh[0] = (u32)inode->i_ino;
	fh[1] = inode->i_generation;
	if (parent) {
		fh[2] = (u32)parent->i_ino;
		fh[3] = parent->i_generation;
	}
	*max_len = len;
	return parent ? FILEID_INO32_GEN_PARENT : FILEID_INO32_GEN;
}

static struct inode *vsmfs_nfs_get_inode(struct super_block *sb, u64 ino, u32 gen)
{
	return vsmfs_iget_handle(sb, ino, gen);
}

static struct dentry *vsmfs_fh_to_dentry(struct super_block *sb, struct fid *fid,
					 int fh_len, int fh_type)
{
	return generic_fh_to_dentry(sb, fid, fh_len, fh_type, vsmfs_nfs_get_inode);
}

static struct dentry *vsmfs_fh_to_parent(struct super_block *sb, struct fid *fid,
					 int fh_len, int fh_type)
{
	return generic_fh_to_parent(sb, fid, fh_len, fh_type, vsmfs_nfs_get_inode);
}

/*
 * The parent of a directory. One that no module version with i_parent has
 * written since it was made or moved does not know it: its handle fails to
 * reconnect (ESTALE) until it is renamed, or its dentries are cached again
 * by a lookup through its path.
 */
static struct dentry *vsmfs_get_parent(struct dentry *child)
{
	struct inode *dir = d_inode(child);
	u64 pino = READ_ONCE(VSMFS_I(dir)->i_parent);
	struct inode *inode;

	if (!pino)
		return ERR_PTR(-ESTALE);
	inode = vsmfs_iget(dir->i_sb, pino);
	if (IS_ERR(inode))
		return ERR_CAST(inode);
	if (!S_ISDIR(inode->i_mode)) {
		vsmfs_fs_error(dir->i_sb, dir->i_ino, "parent %llu is not a directory", pino);
		iput(inode);
		return ERR_PTR(-EFSCORRUPTED);
	}
	return d_obtain_alias(inode);
}

/*
 * Make every change of @inode durable, for nfsd after an operation on a
 * sync export (CREATE, MKDIR, REMOVE, RENAME, SETATTR...), as fsync
 * does: times the VFS changed on its own are written first, then the
 * transaction of the inode's last change is committed, unless it has
 * committed already. nfsd passes the directories of a REMOVE and a
 * RENAME; every operation changes a directory's inode (its times, its
 * size or link count) in the handle that changes its entries, so that
 * commit holds the entries too. A create commits the transaction of the
 * new inode and of its directory, the same one. Nothing is stored to PM
 * here but by the commit, in the order it keeps (journal.c): the
 * transaction's blocks before its commit record.
 *
 * With the nfs_nocommit fault point armed (test builds), returns 0 and
 * commits nothing, for crash tests that must see such a loss caught.
 */
static int vsmfs_commit_metadata(struct inode *inode)
{
	errseq_t since = errseq_sample(&inode->i_mapping->wb_err);
	int ret;

	if (vsmfs_fault(VSMFS_FAULT_NFS_NOCOMMIT))
		return 0;
	ret = sync_inode_metadata(inode, 1);
	if (!ret)
		ret = vsmfs_sync_inode(inode, VSMFS_COMMIT_FSYNC);
	/*
	 * A transaction of the inode dropped unwritten, before this call
	 * (an error no one has seen: errseq_sample() gave 0) or while it
	 * waited, marked the mapping before s_commit_tid moved past it.
	 */
	if (!ret) {
		smp_rmb();	/* s_commit_tid, read above, before the mark */
		ret = errseq_check(&inode->i_mapping->wb_err, since);
	}
	return ret;
}

const struct export_operations vsmfs_export_ops = {
	.encode_fh	= vsmfs_encode_fh,
	.fh_to_dentry	= vsmfs_fh_to_dentry,
	.fh_to_parent	= vsmfs_fh_to_parent,
	.get_parent	= vsmfs_get_parent,
	.commit_metadata = vsmfs_commit_metadata,
};
