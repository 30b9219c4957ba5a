// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs inode lifetime and attributes: making an inode (vsmfs_new_inode()),
 * changing its attributes and size (vsmfs_setattr()), freeing it when its
 * last link and reference are gone (vsmfs_evict_inode()) or at the next
 * mount after a crash (vsmfs_orphan_cleanup()), the operations of symlinks
 * and special files, and the wait for pinned pages before the frames of a
 * file are freed or replaced (vsmfs_break_layouts()).
 *
 * Ordering: an inode, its index and its extended attributes change in
 * handles, which reach PM through the journal; what a truncation zeroes in
 * place is ordered after the commit of the new size (vsmfs_do_setattr()),
 * and a large truncation or eviction commits each part in turn
 * (vsmfs_truncate()).
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/dax.h>
#include <linux/pagemap.h>
#include <linux/posix_acl.h>
#include "vsmfs.h"
#include "ialloc.h"
#include "vsp.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"

/**
 * vsmfs_new_inode() - allocate and initialize an inode
 * @t: running transaction
 * @dir: parent directory
 * @qstr: name of the new inode in @dir
 * @mode: type and permissions
 * @rdev: device number for device nodes
 *
 * The inode inherits @dir's default ACL, its no-dump and no-atime flags,
 * and gets the attributes security modules ask for, in the same
 * transaction. A directory records @dir as its parent.
 *
 * Return: the new inode (locked, I_NEW cleared by the caller through
 * d_instantiate_new()), which an abort of @t discards
 * (vsmfs_discard_new_inode()), or an ERR_PTR, after which the caller
 * aborts @t.
 */
struct inode *vsmfs_new_inode(struct vsmfs_trans *t, struct inode *dir,
			      const struct qstr *qstr, umode_t mode, dev_t rdev)
{
	struct super_block *sb = dir->i_sb;
	struct vsmfs_inode_info *vi;
	struct inode *inode;
	u64 ino;
	int ret;

	inode = new_inode(sb);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	ret = vsmfs_alloc_ino(t, &ino);
	if (ret) {
		make_bad_inode(inode);
		iput(inode);
		return ERR_PTR(ret);
	}
	vi = VSMFS_I(inode);
	inode_init_owner(&init_user_ns, inode, dir, mode);
	inode->i_ino = ino;
	inode->i_rdev = rdev;
	inode->i_generation = get_random_u32();
	inode->i_mtime = current_time(inode);
	inode->i_atime = inode->i_mtime;
	inode->i_ctime = inode->i_mtime;
	vi->i_crtime = inode->i_mtime;
	vi->i_flags = VSMFS_I(dir)->i_flags & (VSMFS_IFLAG_NODUMP | VSMFS_IFLAG_NOATIME);
	vi->i_tail_key = 0;
	vi->i_parent = S_ISDIR(mode) ? dir->i_ino : 0;
	vi->i_pages = 0;
	vi->i_xattr = 0;
	/* i_index too: they share their bytes. */
	memset(vi->i_inline, 0, sizeof(vi->i_inline));
	set_nlink(inode, S_ISDIR(mode) ? 2 : 1);
	vsmfs_set_ops(inode);
	vsmfs_set_inode_flags(inode);
	ret = insert_inode_locked(inode);
	if (ret < 0) {
		vsmfs_fs_error(sb, ino, "new inode already in the inode cache");
		make_bad_inode(inode);
		iput(inode);
		return ERR_PTR(-EFSCORRUPTED);
	}
	ret = vsmfs_init_acl(t, inode, dir);
	if (!ret)
		ret = vsmfs_init_security(t, inode, dir, qstr);
	if (!ret)
		ret = vsmfs_mark_inode_dirty(t, inode);
	if (ret) {
		/*
		 * Nothing refers to the inode yet: the caller aborts @t, which
		 * gives back what it got. It is made bad so that eviction,
		 * which cannot start a transaction inside this one, leaves it
		 * alone.
		 */
		vsmfs_discard_new_inode(inode);
		return ERR_PTR(ret);
	}
	vsmfs_stat_inc(VSMFS_SB(dir->i_sb), inodes_created);
	/* An abort of @t, wherever it comes from, discards the inode. */
	t->t_new_inode = inode;
	return inode;
}

/*
 * Blocks freeing an inode in a shared metadata handle dirties: its slot's,
 * the i-number bitmap's, the page bitmap's of each run it frees (one
 * piece's run, and its VSP's tail), and the page table block of their
 * entries, for the pages still marked unwritten (fallocated).
 */
#define VSMFS_EVICT_CREDITS	(3 + VSMFS_SHARED_FREES)

/*
 * Whether the pages of regular file @inode are one run in a piece the
 * inode's slot indexes, and at most its VSP's tail besides: what a shared
 * metadata handle frees (vsmfs_truncate() to a size in that piece, or 0).
 * The caller holds i_idx_sem, or the inode is being evicted.
 */
static bool vsmfs_one_direct_run(struct inode *inode, u64 keep_pages)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 last;

	if (!S_ISREG(inode->i_mode) || (vi->i_flags & VSMFS_IFLAG_TRUNCATING) ||
	    vi->i_index[VSMFS_NDIRECT] || vi->i_index[VSMFS_NDIRECT + 1])
		return false;
	/* Runs before the piece of the new end are kept whole. */
	last = vsmfs_idx_prev(inode, VSMFS_MAX_KEY - 1);
	return last == VSMFS_MAX_KEY || last <= keep_pages / VSMFS_VSP_PAGES;
}

/*
 * Whether freeing @inode frees nothing but its slot and its i-number: no
 * page (an empty regular file, a special file, a symlink kept in the
 * inode), no extended attribute block, no tail of a VSP, no truncation
 * left to finish.
 */
static bool vsmfs_holds_nothing(struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned int i;

	if (S_ISDIR(inode->i_mode) || vi->i_pages || vi->i_xattr || vi->i_tail_key ||
	    (vi->i_flags & VSMFS_IFLAG_TRUNCATING))
		return false;
	if (vsmfs_inline_symlink(inode))
		return true;
	for (i = 0; i < ARRAY_SIZE(vi->i_index); i++)
		if (vi->i_index[i])
			return false;
	return true;
}

/*
 * Make @inode one whose slot vsmfs_mark_inode_dirty() stores free: mode 0,
 * and no fast symlink's target left in the bytes it shares with the
 * in-core index, which the slot of an inode of mode 0 takes.
 */
static void vsmfs_clear_mode(struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);

	if (vsmfs_inline_symlink(inode))
		memset(vi->i_inline, 0, sizeof(vi->i_inline));
	inode->i_mode = 0;
}

/*
 * Free an inode without links in a shared metadata handle, beside creates
 * and other such frees: one that holds nothing (vsmfs_holds_nothing()), or
 * a regular file with no extended attribute block whose pages are one run
 * in a piece its slot indexes and its VSP's tail (a small file). Its pages
 * are freed when the running transaction commits (vsmfs_free_data_pages():
 * never reused before), its slot cleared, then its i-number freed, the
 * handle's last change (vsmfs_free_ino()). Return: 0 or a negative errno,
 * -EAGAIN (nothing changed) if it must be done in a handle under
 * s_trans_mutex.
 */
static int vsmfs_evict_shared(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	bool nothing = vsmfs_holds_nothing(inode);
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	int ret = 0;

	if ((!nothing && (VSMFS_I(inode)->i_xattr || !vsmfs_one_direct_run(inode, 0))) ||
	    vsmfs_trans_begin_shared(sbi, &t, VSMFS_EVICT_CREDITS,
				     nothing ? 0 : VSMFS_SHARED_FREES))
		return -EAGAIN;
	vsmfs_trans_track(&t, inode, false);
	if (!nothing)
		ret = vsmfs_truncate(&t, inode, 0, NULL);
	/* An abort reloads the mode with the rest from the slot. */
	vsmfs_clear_mode(inode);
	if (!ret)
		ret = vsmfs_mark_inode_dirty(&t, inode);
	/* Its end would abort it (vsmfs_trans_commit()): not past this point. */
	if (!ret && (t.t_error || READ_ONCE(sbi->s_error_ro)))
		ret = t.t_error ?: -EROFS;
	if (!ret)
		ret = vsmfs_free_ino(&t, inode->i_ino);
	if (ret) {
		vsmfs_trans_abort(&t);
		return ret;
	}
	return vsmfs_trans_commit(&t);
}

/*
 * Free an inode without links under s_trans_mutex: its pages, its index,
 * its extended attribute block, its i-number and its slot. A step that
 * fails leaves the orphan whole, as it was.
 */
static int vsmfs_evict_free(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_trans t;
	bool more = false;
	int ret = 0;

	vsmfs_trans_begin(sbi, &t);
	vsmfs_trans_track(&t, inode, false);
	if (!vsmfs_inline_symlink(inode))
		ret = vsmfs_truncate(&t, inode, 0, &more);
	/*
	 * A large inode is emptied in several transactions: each commits an
	 * orphan that names what it still holds, which the next mount frees
	 * if this one stops.
	 */
	while (!ret && more) {
		ret = vsmfs_mark_inode_dirty(&t, inode);
		if (ret)
			break;		/* this part is aborted below */
		ret = vsmfs_trans_commit(&t);
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_TRUNC_STOP,
				 "truncation stopped between two parts");
		vsmfs_trans_begin(sbi, &t);
		vsmfs_trans_track(&t, inode, false);
		if (!ret)
			ret = vsmfs_truncate(&t, inode, 0, &more);
	}
	if (!ret)
		ret = vsmfs_xattr_drop(&t, inode);
	if (!ret)
		ret = vsmfs_free_ino(&t, inode->i_ino);
	if (!ret) {
		vsmfs_clear_mode(inode);
		ret = vsmfs_mark_inode_dirty(&t, inode);
	}
	return vsmfs_trans_end(&t, ret);
}

/**
 * vsmfs_evict_inode() - drop an inode; free it if it has no links
 * @inode: the inode
 *
 * Context: last reference dropped.
 */
void vsmfs_evict_inode(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_trans t;
	int ret = 0;

	truncate_inode_pages_final(&inode->i_data);
	vsmfs_fc_evict(inode);
	/* Written back before the last reference went (I_DIRTY_PAGES). */
	xa_destroy(&VSMFS_I(inode)->i_pud);
	vsmfs_aggr_evict(inode);
	if (!inode->i_nlink && !is_bad_inode(inode)) {
		ret = vsmfs_evict_shared(inode);
		if (ret == -EAGAIN)
			ret = vsmfs_evict_free(inode);
		if (ret) {
			/* Left as an orphan: unmount tries again (vsmfs_put_super()). */
			vsmfs_err(inode->i_sb, "freeing inode %lu failed: %d", inode->i_ino, ret);
			WRITE_ONCE(sbi->s_orphans_left, true);
		}
	} else if (VSMFS_I(inode)->i_tail_key && !is_bad_inode(inode) &&
		   !sb_rdonly(inode->i_sb)) {
		/* A reservation left by a crash while the file was open. */
		u64 freed;

		vsmfs_trans_begin(sbi, &t);
		vsmfs_trans_track(&t, inode, false);
		ret = vsmfs_tail_release(&t, inode, &freed);
		if (!ret)
			ret = vsmfs_mark_inode_dirty(&t, inode);
		ret = vsmfs_trans_end(&t, ret);
		if (ret)
			vsmfs_err(inode->i_sb, "releasing the tail of inode %lu failed: %d",
				  inode->i_ino, ret);
	}
	/* What the upper layers keep for the inode (a directory's index). */
	sbi->s_iops->evict(inode);
	clear_inode(inode);
}

/*
 * One part of a truncation of @inode to @size in a transaction of its own
 * (vsmfs_truncate()); *@more is set if more parts are left. The caller
 * holds what vsmfs_truncate() asks for.
 */
static int vsmfs_truncate_part(struct inode *inode, loff_t size, bool *more)
{
	struct vsmfs_trans t;
	int ret;

	vsmfs_trans_begin(VSMFS_SB(inode->i_sb), &t);
	vsmfs_trans_track(&t, inode, false);
	ret = vsmfs_truncate(&t, inode, size, more);
	if (!ret)
		ret = vsmfs_mark_inode_dirty(&t, inode);
	return vsmfs_trans_end(&t, ret);
}

/*
 * Finish the truncation a crash stopped between two parts: free what the
 * inode owns past its size (VSMFS_IFLAG_TRUNCATING), under the locks a
 * truncation takes. No user mapping of the file can exist yet.
 */
static int vsmfs_truncate_finish(struct inode *inode)
{
	bool more = true;
	int ret = 0;

	inode_lock(inode);
	filemap_invalidate_lock(inode->i_mapping);
	down_write(&VSMFS_I(inode)->i_idx_sem);
	while (!ret && more)
		ret = vsmfs_truncate_part(inode, inode->i_size, &more);
	up_write(&VSMFS_I(inode)->i_idx_sem);
	filemap_invalidate_unlock(inode->i_mapping);
	inode_unlock(inode);
	return ret;
}

/*
 * Whether a regular file owns pages past the page that holds its last
 * byte (pages fallocate() reserved with FALLOC_FL_KEEP_SIZE, kept when a
 * truncation grew the file over part of them), or has a truncation left
 * to finish. The caller holds the inode lock.
 */
static bool vsmfs_owns_past_end(struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 keep = DIV_ROUND_UP((u64)inode->i_size, VSMFS_BLOCK_SIZE), key;
	bool past;

	down_read(&vi->i_idx_sem);
	/* Runs follow their keys: the last one ends last. */
	key = vsmfs_idx_prev(inode, VSMFS_MAX_KEY - 1);
	past = (vi->i_flags & VSMFS_IFLAG_TRUNCATING) ||
	       (key < VSMFS_MAX_KEY &&
		key * VSMFS_VSP_PAGES + vsmfs_idx_count(vsmfs_idx_lookup(inode, key)) > keep);
	up_read(&vi->i_idx_sem);
	return past;
}

/*
 * Blocks a change of attributes dirties in a shared metadata handle: the
 * inode table block, and with a truncation the page bitmap's of each run
 * it frees and the page table block of the pages still marked unwritten;
 * with an access ACL, the xattr block besides.
 */
#define VSMFS_SETATTR_CREDITS	(2 + VSMFS_SHARED_FREES)

/*
 * Change what @iattr asks of @inode in a shared metadata handle
 * (vsmfs_trans_begin_shared()) beside other operations: the mode (and
 * the access ACL @acl that follows it, stored in the inode's xattr block,
 * vsmfs_xattr_set()), the owners, the times, and with @trunc a shrinking
 * truncation of a
 * regular file to a whole number of pages that frees a part of one run in
 * a piece the slot indexes (and its VSP's tail). The inode's slot and the
 * runs' bitmap blocks are what it changes; the VFS's lock on the inode
 * (and for a truncation i_idx_sem) keeps the slot to this task, and freed
 * pages are freed when the running transaction commits
 * (vsmfs_free_data_pages()). For a truncation the caller holds what
 * vsmfs_do_setattr() takes; a size that ends inside a page needs its
 * bytes past the end zeroed once the size is durable, which this handle
 * cannot wait for: not here. A truncation that grows a regular file (no
 * tail of a VSP to give back, no truncation left to finish) changes only
 * the size: the bytes past the old end in its page, which the grown file
 * shows, are zeroed first, outside the handle (they are past the end on
 * PM until it commits), and fenced on this CPU before the handle begins,
 * so a commit that makes the size durable finds them zero. Return: 0 or
 * a negative errno, -EAGAIN (nothing changed) if it must be done in a
 * handle under s_trans_mutex.
 */
static int vsmfs_setattr_shared(struct user_namespace *mnt_userns, struct inode *inode,
				struct iattr *iattr, struct posix_acl *acl, bool trunc,
				bool resize)
{
	bool grow = trunc && iattr->ia_size > inode->i_size;
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	int ret = 0;

	if (grow) {
		if (VSMFS_I(inode)->i_tail_key ||
		    (VSMFS_I(inode)->i_flags & VSMFS_IFLAG_TRUNCATING))
			return -EAGAIN;
	} else if (trunc && ((iattr->ia_size & (VSMFS_BLOCK_SIZE - 1)) ||
			     !vsmfs_one_direct_run(inode,
						   (u64)iattr->ia_size >> VSMFS_BLOCK_SHIFT))) {
		return -EAGAIN;
	}
	if (grow)
		vsmfs_zero_past_end(inode);
	if (vsmfs_trans_begin_shared(VSMFS_SB(inode->i_sb), &t, VSMFS_SETATTR_CREDITS + !!acl,
				     trunc && !grow ? VSMFS_SHARED_FREES : 0))
		return -EAGAIN;
	vsmfs_trans_track(&t, inode, false);
	/*
	 * Without a truncation or an ACL, the words of the slot are all it
	 * changes: a fast record can describe that (the inode's next fsync
	 * appends one; vsmfs_trans_fc_settle() checks). A directory's
	 * changes are carried only by the records of creates in it.
	 */
	t.t_fc_ok = (!trunc || grow) && !acl && !S_ISDIR(inode->i_mode);
	if (grow)
		i_size_write(inode, iattr->ia_size);
	else if (trunc)
		ret = vsmfs_truncate(&t, inode, iattr->ia_size, NULL);
	if (!ret && acl)
		ret = __vsmfs_set_acl(&t, inode, acl, ACL_TYPE_ACCESS);
	if (!ret) {
		if (resize) {
			inode->i_mtime = current_time(inode);
			inode->i_ctime = inode->i_mtime;
		}
		setattr_copy(mnt_userns, inode, iattr);
		ret = vsmfs_mark_inode_dirty(&t, inode);
	}
	if (ret) {
		/* The in-core inode, its index and size, go back to its slot's. */
		vsmfs_xattr_abort(&t, inode);
		if (acl)
			forget_cached_acl(inode, ACL_TYPE_ACCESS);
		return ret;
	}
	ret = vsmfs_trans_commit(&t);
	/* An end that aborted put the old ACL back: read it again. */
	if (ret && acl)
		forget_cached_acl(inode, ACL_TYPE_ACCESS);
	return ret;
}

/* Change attributes, including the size (vsmfs_setattr()). */
static int vsmfs_do_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
			    struct iattr *iattr)
{
	struct inode *inode = d_inode(dentry);
	bool resize = (iattr->ia_valid & ATTR_SIZE) && iattr->ia_size != inode->i_size;
	bool shrink = resize && iattr->ia_size < inode->i_size;
	struct posix_acl *acl = NULL;
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	bool more = false;
	bool trunc;
	int ret;

	ret = setattr_prepare(mnt_userns, dentry, iattr);
	if (ret)
		return ret;
	if ((iattr->ia_valid & ATTR_SIZE) && !S_ISREG(inode->i_mode))
		return -EINVAL;
	/*
	 * A truncation to the size the file has changes neither its size nor
	 * its times, but gives back the pages it owns past its end, as ext4
	 * and XFS do: as any truncation (vsmfs_truncate()).
	 */
	trunc = resize || ((iattr->ia_valid & ATTR_SIZE) && vsmfs_owns_past_end(inode));
	/* The access ACL follows the new mode, in the same transaction. */
	if (IS_ENABLED(CONFIG_FS_POSIX_ACL) && (iattr->ia_valid & ATTR_MODE) &&
	    !S_ISLNK(inode->i_mode) && IS_POSIXACL(inode)) {
		acl = get_acl(inode, ACL_TYPE_ACCESS);
		if (IS_ERR(acl))
			return PTR_ERR(acl);
		/* Only the permission bits count, which setattr_copy() keeps. */
		if (acl) {
			ret = __posix_acl_chmod(&acl, GFP_KERNEL, iattr->ia_mode);
			if (ret)
				return ret;
		}
	}
	if (trunc) {
		/*
		 * No fault maps a page while the size changes, no pinned
		 * page is freed, and user mappings past the new end go
		 * before their pages are freed.
		 */
		filemap_invalidate_lock(inode->i_mapping);
		ret = vsmfs_break_layouts(inode);
		if (ret)
			goto out_invalidate;
		if (iattr->ia_size < inode->i_size)
			truncate_pagecache(inode, iattr->ia_size);
		down_write(&VSMFS_I(inode)->i_idx_sem);
	}
	ret = vsmfs_setattr_shared(mnt_userns, inode, iattr, acl, trunc, resize);
	if (ret == -EAGAIN) {
		vsmfs_trans_begin(VSMFS_SB(inode->i_sb), &t);
		vsmfs_trans_track(&t, inode, false);
		ret = 0;
		if (trunc) {
			ret = vsmfs_truncate(&t, inode, iattr->ia_size, &more);
			if (!ret && resize) {
				inode->i_mtime = current_time(inode);
				inode->i_ctime = inode->i_mtime;
			}
		}
		/* On error it changes nothing: then neither does the mode. */
		if (!ret && acl)
			ret = __vsmfs_set_acl(&t, inode, acl, ACL_TYPE_ACCESS);
		if (!ret)
			setattr_copy(mnt_userns, inode, iattr);
		if (!ret)
			ret = vsmfs_mark_inode_dirty(&t, inode);
		if (ret) {
			/* Nothing changes, the cached ACL included. */
			vsmfs_xattr_abort(&t, inode);
			if (acl)
				forget_cached_acl(inode, ACL_TYPE_ACCESS);
		} else {
			/*
			 * Bytes past the new end in its page are zeroed in
			 * place below, once the new size is durable: the
			 * handle commits.
			 */
			if (shrink && (iattr->ia_size & (VSMFS_BLOCK_SIZE - 1)))
				t.t_sync = true;
			ret = vsmfs_trans_commit(&t);
			if (ret && acl)
				forget_cached_acl(inode, ACL_TYPE_ACCESS);
		}
	}
	/*
	 * The rest of a truncation too large for one transaction, one part
	 * per transaction. The size is already the new one; a part that
	 * fails changes nothing but leaves pages past the end not yet
	 * zeroed, which growing the file would show: that is a file system
	 * error (remount-ro by default), and the next mount finishes.
	 */
	while (!ret && more) {
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_TRUNC_STOP,
				 "truncation stopped between two parts");
		ret = vsmfs_truncate_part(inode, iattr->ia_size, &more);
		if (ret) {
			WRITE_ONCE(VSMFS_SB(inode->i_sb)->s_orphans_left, true);
			vsmfs_fs_error(inode->i_sb, inode->i_ino,
				       "truncation stopped part way: %d", ret);
		}
	}
	/*
	 * The bytes past the new end, in its page, once they are past the end
	 * on PM too (the handle above committed): zeroed before the commit, a
	 * crash would leave the old size over zeros. Left as they are by a
	 * crash now, they are zeroed again before the file grows over them
	 * (vsmfs_truncate(), the write and fallocate paths).
	 */
	if (shrink && !ret) {
		/* Outside the transaction: this CPU may hold old translations. */
		vsmfs_vsp_enter();
		vsmfs_zero_mapped(inode, inode->i_size,
				  round_up(inode->i_size, VSMFS_BLOCK_SIZE));
		vsmfs_vsp_exit();
	}
	if (trunc) {
		up_write(&VSMFS_I(inode)->i_idx_sem);
out_invalidate:
		filemap_invalidate_unlock(inode->i_mapping);
	}
	posix_acl_release(acl);
	return ret;
}

/**
 * vsmfs_getattr() - attributes for stat and statx
 * @mnt_userns: user namespace of the mount
 * @path: the file
 * @stat: filled in
 * @request_mask: what the caller asks for (STATX_*)
 * @query_flags: AT_STATX_* synchronization flags
 *
 * The generic attributes and the creation time, kept in the slot from
 * the inode's creation on.
 *
 * Return: 0.
 */
int vsmfs_getattr(struct user_namespace *mnt_userns, const struct path *path,
		  struct kstat *stat, u32 request_mask, unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);

	if (request_mask & STATX_BTIME) {
		stat->result_mask |= STATX_BTIME;
		stat->btime = VSMFS_I(inode)->i_crtime;
	}
	generic_fillattr(mnt_userns, inode, stat);
	return 0;
}

/**
 * vsmfs_setattr() - change attributes, including the size
 * @mnt_userns: user namespace of the mount
 * @dentry: the file
 * @iattr: what to change
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
		  struct iattr *iattr)
{
	u64 t0 = vsmfs_trace_start(vsmfs_setattr);
	int ret = vsmfs_do_setattr(mnt_userns, dentry, iattr);

	trace_vsmfs_setattr(d_inode(dentry), iattr->ia_valid & ATTR_SIZE ? iattr->ia_size : -1,
			    iattr->ia_valid, ret, t0);
	return ret;
}

static const char *vsmfs_get_link(struct dentry *dentry, struct inode *inode,
				  struct delayed_call *done)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 e;
	char *buf, __pm *src;

	if (!dentry)
		return ERR_PTR(-ECHILD);
	e = vsmfs_idx_lookup(inode, 0);
	src = e ? vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e)) : NULL;
	if (!src || inode->i_size >= VSMFS_BLOCK_SIZE) {
		vsmfs_fs_error(inode->i_sb, inode->i_ino, "symlink block missing or too long");
		return ERR_PTR(-EFSCORRUPTED);
	}
	buf = kmalloc(inode->i_size + 1, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	vsmfs_vsp_enter();
	/* A poisoned page fails the lookup, not the machine. */
	if (vsmfs_fault(VSMFS_FAULT_PM_READ) || vsmfs_read_pm(buf, src, inode->i_size)) {
		vsmfs_vsp_exit();
		kfree(buf);
		return ERR_PTR(-EIO);
	}
	vsmfs_vsp_exit();
	buf[inode->i_size] = 0;
	set_delayed_call(done, kfree_link, buf);
	return buf;
}

const struct inode_operations vsmfs_symlink_inode_operations = {
	.get_link	= vsmfs_get_link,
	.getattr	= vsmfs_getattr,
	.update_time	= vsmfs_update_time,
	.setattr	= vsmfs_setattr,
	.listxattr	= vsmfs_listxattr,
};

const struct inode_operations vsmfs_fast_symlink_inode_operations = {
	.get_link	= simple_get_link,
	.getattr	= vsmfs_getattr,
	.update_time	= vsmfs_update_time,
	.setattr	= vsmfs_setattr,
	.listxattr	= vsmfs_listxattr,
};

const struct inode_operations vsmfs_special_inode_operations = {
	.getattr	= vsmfs_getattr,
	.update_time	= vsmfs_update_time,
	.setattr	= vsmfs_setattr,
	.fileattr_get	= vsmfs_fileattr_get,
	.fileattr_set	= vsmfs_fileattr_set,
	.listxattr	= vsmfs_listxattr,
	.get_acl	= vsmfs_get_acl,
	.set_acl	= vsmfs_set_acl,
};

/**
 * vsmfs_orphan_cleanup() - free inodes left in use with no links
 * @sb: super block, mounted read-write after an unclean shutdown
 *
 * A file unlinked while open keeps its inode until the last close; a crash
 * before that leaves the inode in use with a link count of zero. Such
 * inodes are found by one pass over the inode table and freed the way
 * eviction frees them. The same pass finishes truncations that a crash
 * stopped between two parts (VSMFS_IFLAG_TRUNCATING).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_orphan_cleanup(struct super_block *sb)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 ino, freed = 0, truncated = 0;

	for (ino = VSMFS_ROOT_INO; ino < l->inodes; ino++) {
		const __le32 __pm *imap = vsmfs_blk_ptr(sbi, l->imap_start +
							ino / (VSMFS_BLOCK_SIZE / 4));
		const struct vsmfs_dinode __pm *di;
		struct inode *inode;
		u64 slot;

		if (!imap)
			return -EFSCORRUPTED;
		slot = le32_to_cpu(vsmfs_pm_read(&imap[ino % (VSMFS_BLOCK_SIZE / 4)]));
		if (!slot || slot >= l->inodes)
			continue;	/* reported when the inode is used */
		di = vsmfs_blk_ptr(sbi, l->itable_start + slot / VSMFS_INODES_PER_BLOCK) +
		     (slot % VSMFS_INODES_PER_BLOCK) * VSMFS_INODE_SIZE;
		if (!vsmfs_pm_read(&di->i_mode))
			continue;
		if (vsmfs_pm_read(&di->i_nlink)) {
			int ret;

			if (!(vsmfs_pm_read(&di->i_flags) & cpu_to_le32(VSMFS_IFLAG_TRUNCATING)))
				continue;
			inode = vsmfs_iget(sb, ino);
			if (IS_ERR(inode))
				return PTR_ERR(inode);
			ret = vsmfs_truncate_finish(inode);
			iput(inode);
			if (ret)
				return ret;
			truncated++;
			continue;
		}
		inode = __vsmfs_iget(sb, ino, VSMFS_IGET_ORPHAN);
		if (IS_ERR(inode))
			return PTR_ERR(inode);
		/* The last reference: eviction frees the pages and the inode. */
		iput(inode);
		freed++;
	}
	if (freed)
		vsmfs_info(sb, "freed %llu orphan inode%s", freed, freed == 1 ? "" : "s");
	if (truncated)
		vsmfs_info(sb, "finished %llu interrupted truncation%s", truncated,
			   truncated == 1 ? "" : "s");
	return 0;
}

/* The GiBs that [@start, @end] meets, as indices of i_pud. */
#define VSMFS_PUD_FIRST(start)	((unsigned long)((start) >> PUD_SHIFT))
#define VSMFS_PUD_LAST(end)	((unsigned long)((end) >> PUD_SHIFT))

/**
 * vsmfs_pud_unmap() - remove the 1 GiB mappings that meet a range
 * @inode: a regular file
 * @start: first byte of the range
 * @end: last byte of the range (inclusive)
 *
 * Before the frames of [@start, @end] are replaced or freed: the mappings
 * of every GiB that a fault mapped whole and that meets the range are
 * removed whole, so that no partial unmap splits a PUD, which the core
 * memory code does only with the mapping's mmap lock held.
 *
 * Context: invalidate_lock held for writing.
 */
void vsmfs_pud_unmap(struct inode *inode, loff_t start, loff_t end)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned long i;
	void *entry;

	if (xa_empty(&vi->i_pud))
		return;
	xa_for_each_range(&vi->i_pud, i, entry, VSMFS_PUD_FIRST(start), VSMFS_PUD_LAST(end))
		if (xa_get_mark(&vi->i_pud, i, VSMFS_PUD_MAPPED))
			unmap_mapping_range(inode->i_mapping, (loff_t)i << PUD_SHIFT, PUD_SIZE, 1);
}

/*
 * A page of a GiB mapped whole that meets [@start, @end] and that someone
 * pins (get_user_pages() through the 1 GiB mapping), or NULL. Such pages
 * have no DAX entry for dax_layout_busy_page_range() to find.
 */
static struct page *vsmfs_pud_busy_page(struct inode *inode, loff_t start, loff_t end)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned long i, k;
	void *entry;

	if (xa_empty(&vi->i_pud))
		return NULL;
	xa_for_each_range(&vi->i_pud, i, entry, VSMFS_PUD_FIRST(start), VSMFS_PUD_LAST(end)) {
		u64 pfn = sbi->s_dev_pfn + xa_to_value(entry);

		if (!xa_get_mark(&vi->i_pud, i, VSMFS_PUD_MAPPED))
			continue;
		for (k = 0; k < PUD_SIZE / PAGE_SIZE; k++) {
			struct page *page = pfn_to_page(pfn + k);

			if (page_ref_count(page) > 1)
				return page;
		}
		cond_resched();
	}
	return NULL;
}

/*
 * The GiBs meeting [@start, @end] are unmapped and their pages unpinned:
 * no longer mapped; forgotten unless their stores still need a write-back.
 */
static void vsmfs_pud_unmapped(struct inode *inode, loff_t start, loff_t end)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned long i;
	void *entry;

	if (xa_empty(&vi->i_pud))
		return;
	xa_lock(&vi->i_pud);
	xa_for_each_range(&vi->i_pud, i, entry, VSMFS_PUD_FIRST(start), VSMFS_PUD_LAST(end)) {
		if (xa_get_mark(&vi->i_pud, i, VSMFS_PUD_DIRTY))
			__xa_clear_mark(&vi->i_pud, i, VSMFS_PUD_MAPPED);
		else
			__xa_erase(&vi->i_pud, i);
	}
	xa_unlock(&vi->i_pud);
}

static int vsmfs_wait_dax_page(struct inode *inode)
{
	filemap_invalidate_unlock(inode->i_mapping);
	schedule();
	filemap_invalidate_lock(inode->i_mapping);
	return 0;
}

/**
 * vsmfs_break_layouts_range() - wait until no page of a range is pinned
 * @inode: a regular file
 * @start: first byte of the range
 * @end: last byte of the range (inclusive)
 *
 * Wait until no page of [@start, @end] of a file is pinned, as
 * vsmfs_break_layouts() does for the whole file.
 *
 * Context: inode lock and invalidate_lock held for writing.
 * Return: 0, or -ERESTARTSYS if a signal ended the wait.
 */
int vsmfs_break_layouts_range(struct inode *inode, loff_t start, loff_t end)
{
	struct page *page;
	int ret;

	vsmfs_pud_unmap(inode, start, end);
	do {
		page = dax_layout_busy_page_range(inode->i_mapping, start, end) ?:
		       vsmfs_pud_busy_page(inode, start, end);
		if (!page) {
			vsmfs_pud_unmapped(inode, start, end);
			return 0;
		}
		ret = ___wait_var_event(&page->_refcount,
					atomic_read(&page->_refcount) == 1,
					TASK_INTERRUPTIBLE, 0, 0,
					vsmfs_wait_dax_page(inode));
	} while (!ret);
	return ret;
}

/**
 * vsmfs_break_layouts() - wait until no page of a file is pinned
 * @inode: a regular file
 *
 * Pages pinned by get_user_pages() (direct I/O of another file into a
 * mapping of this one, RDMA) must not be freed or given other contents
 * under the pin. Called before truncation, hole punching and zeroing, and
 * (for the range written) before a copy-on-write write.
 *
 * Context: inode lock and invalidate_lock held for writing.
 * Return: 0, or -ERESTARTSYS if a signal ended the wait.
 */
int vsmfs_break_layouts(struct inode *inode)
{
	return vsmfs_break_layouts_range(inode, 0, LLONG_MAX);
}
