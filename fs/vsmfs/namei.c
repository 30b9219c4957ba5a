// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs namespace operations: the inode operations of directories, lookup,
 * create (of every kind of inode, O_TMPFILE included), link, unlink, rmdir
 * and rename, each in one transaction, over the entries and the DRAM index
 * of dir.c.
 *
 * A create or an unlink runs in a shared metadata handle beside others of
 * its kind when the directory has room for the entry (vsmfs_mknod_common(),
 * vsmfs_do_unlink()), and again in a handle under s_trans_mutex if that
 * handle cannot finish it.
 *
 * PM ordering: entries and inodes change only in the DRAM copies of their
 * blocks and reach PM through the journal (journal.c); a long symlink's
 * target is written with non-temporal stores before the commit that
 * publishes it (vsmfs_mknod_trans()).
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include "vsmfs.h"
#include "vsp.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "trace.h"
#include "pmem.h"
#include "dir.h"

static struct dentry *vsmfs_do_lookup(struct inode *dir, struct dentry *dentry,
				      unsigned int flags)
{
	struct vsmfs_dir_index *idx;
	struct inode *inode = NULL;
	struct vsmfs_dpos pos;
	int ret;

	if (dentry->d_name.len > VSMFS_NAME_LEN)
		return ERR_PTR(-ENAMETOOLONG);
	idx = vsmfs_dir_index(dir);
	if (IS_ERR(idx))
		return ERR_CAST(idx);
	ret = vsmfs_find_entry(dir, idx, &dentry->d_name, &pos);
	if (!ret) {
		inode = vsmfs_iget(dir->i_sb, le64_to_cpu(pos.de->d_ino));
		if (IS_ERR(inode))
			return ERR_CAST(inode);
	} else if (ret != -ENOENT) {
		return ERR_PTR(ret);
	}
	return d_splice_alias(inode, dentry);
}

/*
 * Blocks a create dirties in a shared metadata handle: the inode bitmap,
 * the new inode's and the directory's inode table blocks, and the
 * directory block taking the entry. A new directory block adds the bitmap
 * block of its page and the index block naming it.
 */
#define VSMFS_CREATE_CREDITS	4
#define VSMFS_GROW_CREDITS	2

/*
 * Room for an entry of @len bytes in the directory of @idx, for a handle
 * beside others: a block that has it, or else the page of a new block,
 * reserved into @page from the CPU's pool (vsmfs_resv_take()), which the
 * handle claims (vsmfs_dir_new_block_shared()). Return: whether either
 * was found (@page->count is 0 but for the page).
 */
static bool vsmfs_entry_room(struct vsmfs_sb_info *sbi, struct vsmfs_dir_index *idx,
			     unsigned int len, struct vsmfs_resv *page)
{
	page->count = 0;
	return vsmfs_room_find(idx, len) != U64_MAX || !vsmfs_resv_take(sbi, 1, false, page);
}

/*
 * Begin shared metadata handle @t for a change that adds an entry and may
 * add @credits blocks, and with the page of vsmfs_entry_room() in @page
 * the blocks of a new directory block besides (vsmfs_resv_begin_shared()).
 */
static int vsmfs_entry_begin(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits,
			     struct vsmfs_resv *page)
{
	return vsmfs_resv_begin_shared(sbi, t, credits + (page->count ? VSMFS_GROW_CREDITS : 0),
				       page);
}

/* vsmfs_mknod_common() in handle @t, which it ends. */
static int vsmfs_mknod_trans(struct vsmfs_trans *t, struct inode *dir,
			     struct vsmfs_dir_index *idx, struct dentry *dentry, umode_t mode,
			     dev_t rdev, const char *symname)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct inode *inode;
	int ret = 0;

	vsmfs_trans_track(t, dir, true);
	/* Beside other handles, a record may carry it (vsmfs_trans_fc_create()). */
	if (t->t_shared)
		t->t_fc_dir = dir;
	inode = vsmfs_new_inode(t, dir, &dentry->d_name, mode, rdev);
	if (IS_ERR(inode)) {
		vsmfs_trans_abort(t);
		return PTR_ERR(inode);
	}
	if (symname) {
		size_t len = strlen(symname);
		struct vsmfs_inode_info *vi = VSMFS_I(inode);

		if (len <= VSMFS_INLINE_LEN) {
			memcpy(vi->i_inline, symname, len);
			inode->i_link = vi->i_inline;
		} else {
			u64 lpn;
			void __pm *p;

			ret = vsmfs_alloc_pages(t, 1, false, &lpn);
			if (!ret) {
				vi->i_pages = 1;
				vi->i_index[0] = vsmfs_idx_make(lpn, 1);
				p = vsmfs_lpn_ptr(sbi, lpn);
				/* Target durable before the commit publishes it. */
				vsmfs_memcpy_nt(p, symname, len);
				inode->i_op = &vsmfs_symlink_inode_operations;
				inode->i_link = NULL;
			}
		}
		i_size_write(inode, len);
		inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
		if (!ret)
			ret = vsmfs_mark_inode_dirty(t, inode);
	}
	if (!ret)
		ret = vsmfs_add_entry(t, dir, idx, &dentry->d_name, inode);
	if (!ret && S_ISDIR(mode)) {
		inc_nlink(dir);
		ret = vsmfs_mark_inode_dirty(t, dir);
	}
	if (ret) {
		/* The abort discards the inode before its i-number is free. */
		vsmfs_trans_abort(t);
		return ret;
	}
	ret = vsmfs_trans_commit(t);
	/* An end that aborted the handle discarded the inode: no name. */
	if (t->t_aborted)
		return ret;
	d_instantiate_new(dentry, inode);
	return ret;
}

/*
 * Create an inode of @mode and link it at @dentry, in one transaction:
 * one beside other creates (vsmfs_trans_begin_shared()), done again under
 * s_trans_mutex if that handle cannot finish it. If the directory has no
 * room for the entry, the page of its new block is reserved first, from
 * the CPU's pool (vsmfs_resv_take()), and the handle that claims it runs
 * beside others too; if the handle does not end with it, it goes back.
 */
static int vsmfs_mknod_common(struct inode *dir, struct dentry *dentry, umode_t mode,
			      dev_t rdev, const char *symname)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(dir->i_sb);
	struct vsmfs_dir_index *idx;
	struct vsmfs_resv page;
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	int ret;

	if (dentry->d_name.len > VSMFS_NAME_LEN)
		return -ENAMETOOLONG;
	if (S_ISDIR(mode) && dir->i_nlink >= VSMFS_LINK_MAX)
		return -EMLINK;
	idx = vsmfs_dir_reserve(dir);
	if (IS_ERR(idx))
		return PTR_ERR(idx);
	if ((!symname || strlen(symname) <= VSMFS_INLINE_LEN) &&
	    vsmfs_entry_room(sbi, idx, DIRENT_LEN(dentry->d_name.len), &page)) {
		if (vsmfs_entry_begin(sbi, &t, VSMFS_CREATE_CREDITS, &page))
			goto excl;
		ret = vsmfs_mknod_trans(&t, dir, idx, dentry, mode, rdev, symname);
		vsmfs_resv_end_shared(sbi, &t, &page);
		if (ret != -EAGAIN)
			return ret;
		/* Its abort dropped the directory's index. */
		idx = vsmfs_dir_reserve(dir);
		if (IS_ERR(idx))
			return PTR_ERR(idx);
	}
excl:
	vsmfs_trans_begin(sbi, &t);
	return vsmfs_mknod_trans(&t, dir, idx, dentry, mode, rdev, symname);
}

/*
 * An unnamed regular file (O_TMPFILE), created with no links: an orphan
 * from its first commit, so a crash before it is linked or closed leaves
 * it to orphan cleanup at the next mount (vsmfs_orphan_cleanup()). The
 * in-core count drops to zero only in d_tmpfile(), which also lets linkat()
 * give it a name (vsmfs_do_link()).
 */
static int vsmfs_tmpfile(struct user_namespace *ns, struct inode *dir, struct file *file,
			 umode_t mode)
{
	struct vsmfs_trans t;
	struct inode *inode;
	int ret;

	vsmfs_trans_begin(VSMFS_SB(dir->i_sb), &t);
	inode = vsmfs_new_inode(&t, dir, &file->f_path.dentry->d_name, mode | S_IFREG, 0);
	if (IS_ERR(inode)) {
		vsmfs_trans_abort(&t);
		return PTR_ERR(inode);
	}
	/* On PM with no links; in core with the one d_tmpfile() drops. */
	clear_nlink(inode);
	ret = vsmfs_mark_inode_dirty(&t, inode);
	set_nlink(inode, 1);
	if (ret) {
		/* As in vsmfs_mknod_trans(): the abort discards the inode. */
		vsmfs_trans_abort(&t);
		return ret;
	}
	ret = vsmfs_trans_commit(&t);
	if (t.t_aborted)
		return ret;
	d_tmpfile(file, inode);
	unlock_new_inode(inode);
	return ret ?: finish_open_simple(file, 0);
}

static int vsmfs_do_create(struct user_namespace *ns, struct inode *dir,
			   struct dentry *dentry, umode_t mode, bool excl)
{
	return vsmfs_mknod_common(dir, dentry, mode | S_IFREG, 0, NULL);
}

static int vsmfs_do_mknod(struct user_namespace *ns, struct inode *dir,
			  struct dentry *dentry, umode_t mode, dev_t rdev)
{
	if (MAJOR(rdev) >= 4096 || MINOR(rdev) >= (1U << 20))
		return -EINVAL;	/* does not fit new_encode_dev() */
	return vsmfs_mknod_common(dir, dentry, mode, rdev, NULL);
}

static int vsmfs_do_mkdir(struct user_namespace *ns, struct inode *dir,
			  struct dentry *dentry, umode_t mode)
{
	return vsmfs_mknod_common(dir, dentry, mode | S_IFDIR, 0, NULL);
}

static int vsmfs_do_symlink(struct user_namespace *ns, struct inode *dir,
			    struct dentry *dentry, const char *symname)
{
	if (strlen(symname) >= VSMFS_BLOCK_SIZE)
		return -ENAMETOOLONG;
	return vsmfs_mknod_common(dir, dentry, S_IFLNK | 0777, 0, symname);
}

/* vsmfs_do_link() in handle @t, which it ends. */
static int vsmfs_link_trans(struct vsmfs_trans *t, struct inode *inode, struct inode *dir,
			    struct vsmfs_dir_index *idx, struct dentry *dentry)
{
	int ret;

	vsmfs_trans_track(t, dir, true);
	vsmfs_trans_track(t, inode, false);
	/* Beside other handles, a record may carry it, as a rename's. */
	if (t->t_shared) {
		t->t_fc_dir = dir;
		t->t_fc_ren = inode;
	}
	ret = vsmfs_add_entry(t, dir, idx, &dentry->d_name, inode);
	if (!ret) {
		inc_nlink(inode);
		inode->i_ctime = current_time(inode);
		ret = vsmfs_mark_inode_dirty(t, inode);
	}
	return vsmfs_trans_end(t, ret);
}

/*
 * Blocks a link or a rename of a file dirties in a shared metadata handle
 * at most: the directory blocks of the entries it adds, changes and
 * removes, and the inode table blocks of both directories and of the
 * inodes named.
 */
#define VSMFS_LINK_CREDITS	3
#define VSMFS_RENAME_CREDITS	6

/*
 * Link @old's inode at @dentry in one transaction: one beside other such
 * handles (the VFS locks the directory and the inode) if the directory
 * has room for the entry or the page of a new block is reserved
 * (vsmfs_entry_room()), done again under s_trans_mutex if that handle
 * cannot finish it.
 */
static int vsmfs_do_link(struct dentry *old, struct inode *dir, struct dentry *dentry)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(dir->i_sb);
	struct inode *inode = d_inode(old);
	struct vsmfs_dir_index *idx;
	struct vsmfs_resv page;
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	int ret = -EAGAIN;

	if (dentry->d_name.len > VSMFS_NAME_LEN)
		return -ENAMETOOLONG;
	if (inode->i_nlink >= VSMFS_LINK_MAX)
		return -EMLINK;
	idx = vsmfs_dir_reserve(dir);
	if (IS_ERR(idx))
		return PTR_ERR(idx);
	if (vsmfs_entry_room(sbi, idx, DIRENT_LEN(dentry->d_name.len), &page) &&
	    !vsmfs_entry_begin(sbi, &t, VSMFS_LINK_CREDITS, &page)) {
		ret = vsmfs_link_trans(&t, inode, dir, idx, dentry);
		vsmfs_resv_end_shared(sbi, &t, &page);
		/* Its abort dropped the directory's index. */
		if (ret == -EAGAIN)
			idx = vsmfs_dir_reserve(dir);
		if (IS_ERR(idx))
			return PTR_ERR(idx);
	}
	if (ret == -EAGAIN) {
		vsmfs_trans_begin(sbi, &t);
		ret = vsmfs_link_trans(&t, inode, dir, idx, dentry);
	}
	if (!ret) {
		ihold(inode);
		d_instantiate(dentry, inode);
	}
	return ret;
}

/*
 * Drop a link of @inode, which a directory entry held; a directory keeps
 * at least two (its entry in its parent and its own "."). A link count too
 * low for that is damage on PM: it is reported and left, not wrapped
 * around or taken to zero, which would free an inode still linked.
 */
static void vsmfs_drop_link(struct inode *inode)
{
	unsigned int min = S_ISDIR(inode->i_mode) ? 2 : 0;

	if (inode->i_nlink > min) {
		drop_nlink(inode);
		return;
	}
	vsmfs_fs_error(inode->i_sb, inode->i_ino, "link count %u too low to drop, left",
		       inode->i_nlink);
}

/* Remove @dentry's entry and drop the link it held, in transaction @t. */
static int __vsmfs_unlink(struct vsmfs_trans *t, struct inode *dir,
			  struct vsmfs_dir_index *idx, struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct vsmfs_dpos pos;
	int ret;

	ret = vsmfs_find_entry(dir, idx, &dentry->d_name, &pos);
	if (!ret)
		ret = vsmfs_del_entry(t, dir, idx, &pos);
	if (ret)
		return ret;
	inode->i_ctime = dir->i_ctime;
	if (S_ISDIR(inode->i_mode)) {
		clear_nlink(inode);
		vsmfs_drop_link(dir);
	} else {
		vsmfs_drop_link(inode);
	}
	ret = vsmfs_mark_inode_dirty(t, dir);
	if (!ret)
		ret = vsmfs_mark_inode_dirty(t, inode);
	return ret;
}

/* vsmfs_do_unlink() in handle @t, which it ends. */
static int vsmfs_unlink_trans(struct vsmfs_trans *t, struct inode *dir,
			      struct vsmfs_dir_index *idx, struct dentry *dentry)
{
	int ret;

	vsmfs_trans_track(t, dir, true);
	vsmfs_trans_track(t, d_inode(dentry), false);
	/* Beside other handles, a record may carry it (vsmfs_trans_fc_unlink()). */
	if (t->t_shared) {
		t->t_fc_dir = dir;
		t->t_fc_ren = d_inode(dentry);
		t->t_fc_gone = true;
	}
	ret = __vsmfs_unlink(t, dir, idx, dentry);
	if (ret) {
		vsmfs_trans_abort(t);
		return ret;
	}
	return vsmfs_trans_commit(t);
}

/*
 * Blocks an unlink dirties in a shared metadata handle: the directory
 * block losing the entry, and the inode table blocks of the directory and
 * of the inode.
 */
#define VSMFS_UNLINK_CREDITS	3

/*
 * Remove @dentry's entry and drop its link, in one transaction: one beside
 * other such handles (the directory and the inode are locked by the VFS;
 * an inode left with no links is freed by its eviction,
 * vsmfs_evict_inode()), done again under s_trans_mutex if that handle
 * cannot finish it.
 */
static int vsmfs_do_unlink(struct inode *dir, struct dentry *dentry)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(dir->i_sb);
	struct vsmfs_dir_index *idx = vsmfs_dir_index(dir);
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	int ret;

	if (IS_ERR(idx))
		return PTR_ERR(idx);
	if (!vsmfs_trans_begin_shared(sbi, &t, VSMFS_UNLINK_CREDITS, 0)) {
		ret = vsmfs_unlink_trans(&t, dir, idx, dentry);
		if (ret != -EAGAIN)
			return ret;
		/* Its abort dropped the directory's index. */
		idx = vsmfs_dir_index(dir);
		if (IS_ERR(idx))
			return PTR_ERR(idx);
	}
	vsmfs_trans_begin(sbi, &t);
	return vsmfs_unlink_trans(&t, dir, idx, dentry);
}

static int vsmfs_do_rmdir(struct inode *dir, struct dentry *dentry)
{
	int ret = vsmfs_check_empty(d_inode(dentry));

	return ret ?: vsmfs_do_unlink(dir, dentry);
}

/* What a rename names, and the indexes of its directories. */
struct vsmfs_rename {
	struct inode		*old_dir;
	struct dentry		*old_dentry;
	struct inode		*new_dir;
	struct dentry		*new_dentry;
	unsigned int		flags;
	struct vsmfs_dir_index	*oidx;
	struct vsmfs_dir_index	*nidx;
};

/* vsmfs_do_rename() in handle @t, which it ends. */
static int vsmfs_rename_trans(struct vsmfs_trans *t, struct vsmfs_rename *r)
{
	struct inode *old_dir = r->old_dir, *new_dir = r->new_dir;
	struct inode *old_inode = d_inode(r->old_dentry);
	struct inode *new_inode = d_inode(r->new_dentry);
	struct vsmfs_dir_index *oidx = r->oidx, *nidx = r->nidx;
	struct dentry *old_dentry = r->old_dentry, *new_dentry = r->new_dentry;
	bool is_dir = S_ISDIR(old_inode->i_mode);
	unsigned int flags = r->flags;
	struct vsmfs_dpos opos, npos;
	int ret;

	vsmfs_trans_track(t, old_dir, true);
	vsmfs_trans_track(t, new_dir, true);
	vsmfs_trans_track(t, old_inode, false);
	if (new_inode)
		vsmfs_trans_track(t, new_inode, false);
	/*
	 * A file renamed in its directory to a name not in use, beside other
	 * handles: a record may carry it (vsmfs_trans_fc_create()).
	 */
	if (t->t_shared && old_dir == new_dir && !new_inode && !is_dir) {
		t->t_fc_dir = old_dir;
		t->t_fc_ren = old_inode;
	}
	ret = vsmfs_find_entry(old_dir, oidx, &old_dentry->d_name, &opos);
	if (ret)
		goto out;
	if (flags & RENAME_EXCHANGE) {
		ret = vsmfs_find_entry(new_dir, nidx, &new_dentry->d_name, &npos);
		if (!ret)
			ret = vsmfs_de_write_access(t, &opos);
		if (!ret)
			ret = vsmfs_de_write_access(t, &npos);
		if (ret)
			goto out;
		opos.de->d_ino = cpu_to_le64(new_inode->i_ino);
		opos.de->d_type = fs_umode_to_dtype(new_inode->i_mode);
		npos.de->d_ino = cpu_to_le64(old_inode->i_ino);
		npos.de->d_type = fs_umode_to_dtype(old_inode->i_mode);
		vsmfs_trans_dirty(t, opos.mb);
		vsmfs_trans_dirty(t, npos.mb);
		if (old_dir != new_dir) {
			if (is_dir)
				VSMFS_I(old_inode)->i_parent = new_dir->i_ino;
			if (S_ISDIR(new_inode->i_mode))
				VSMFS_I(new_inode)->i_parent = old_dir->i_ino;
		}
		if (old_dir != new_dir && S_ISDIR(new_inode->i_mode) != is_dir) {
			if (is_dir) {
				vsmfs_drop_link(old_dir);
				inc_nlink(new_dir);
			} else {
				inc_nlink(old_dir);
				vsmfs_drop_link(new_dir);
			}
		}
		old_dir->i_ctime = current_time(old_dir);
		old_dir->i_mtime = old_dir->i_ctime;
		new_dir->i_mtime = old_dir->i_ctime;
		new_dir->i_ctime = old_dir->i_ctime;
		old_inode->i_ctime = old_dir->i_ctime;
		new_inode->i_ctime = old_dir->i_ctime;
		ret = vsmfs_mark_inode_dirty(t, old_inode);
		if (!ret)
			ret = vsmfs_mark_inode_dirty(t, new_inode);
		goto dirs;
	}
	if (new_inode) {
		ret = vsmfs_find_entry(new_dir, nidx, &new_dentry->d_name, &npos);
		if (!ret)
			ret = vsmfs_de_write_access(t, &npos);
		if (ret)
			goto out;
		npos.de->d_ino = cpu_to_le64(old_inode->i_ino);
		npos.de->d_type = fs_umode_to_dtype(old_inode->i_mode);
		vsmfs_trans_dirty(t, npos.mb);
		new_inode->i_ctime = current_time(new_inode);
		if (is_dir)
			clear_nlink(new_inode);
		else
			vsmfs_drop_link(new_inode);
		ret = vsmfs_mark_inode_dirty(t, new_inode);
		if (ret)
			goto out;
		new_dir->i_mtime = new_inode->i_ctime;
		new_dir->i_ctime = new_inode->i_ctime;
		if (is_dir)
			vsmfs_drop_link(new_dir);
	} else {
		ret = vsmfs_add_entry(t, new_dir, nidx, &new_dentry->d_name, old_inode);
		if (ret)
			goto out;
	}
	/* Entries never move: opos still holds the old entry. */
	ret = vsmfs_del_entry(t, old_dir, oidx, &opos);
	if (ret)
		goto out;
	if (is_dir && old_dir != new_dir) {
		vsmfs_drop_link(old_dir);
		inc_nlink(new_dir);
		VSMFS_I(old_inode)->i_parent = new_dir->i_ino;
	}
	old_inode->i_ctime = current_time(old_inode);
	ret = vsmfs_mark_inode_dirty(t, old_inode);
dirs:
	if (!ret)
		ret = vsmfs_mark_inode_dirty(t, old_dir);
	if (!ret && new_dir != old_dir)
		ret = vsmfs_mark_inode_dirty(t, new_dir);
out:
	if (ret) {
		vsmfs_trans_abort(t);
		return ret;
	}
	return vsmfs_trans_commit(t);
}

/* The directory indexes a rename uses: a new entry only where none of its name exists. */
static int vsmfs_rename_indexes(struct vsmfs_rename *r)
{
	r->oidx = vsmfs_dir_index(r->old_dir);
	if (IS_ERR(r->oidx))
		return PTR_ERR(r->oidx);
	r->nidx = d_inode(r->new_dentry) ? vsmfs_dir_index(r->new_dir) :
		  vsmfs_dir_reserve(r->new_dir);
	return PTR_ERR_OR_ZERO(r->nidx);
}

/*
 * Rename in one transaction: one beside other such handles if no
 * directory moves and the new directory has room for a new entry or the
 * page of a new block is reserved (vsmfs_entry_room()), done again under
 * s_trans_mutex if that handle cannot finish it. The
 * VFS locks both directories and the inodes of both names, but not a
 * directory that moves, whose slot (its parent, its times) another
 * operation in it may change meanwhile: that rename runs alone.
 */
static int vsmfs_do_rename(struct user_namespace *ns, struct inode *old_dir,
			   struct dentry *old_dentry, struct inode *new_dir,
			   struct dentry *new_dentry, unsigned int flags)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(old_dir->i_sb);
	struct vsmfs_rename r = {
		.old_dir = old_dir, .old_dentry = old_dentry,
		.new_dir = new_dir, .new_dentry = new_dentry, .flags = flags,
	};
	struct inode *old_inode = d_inode(old_dentry);
	struct inode *new_inode = d_inode(new_dentry);
	struct vsmfs_resv page = { };
	/* Set up by the calls that begin it: not zeroed at entry as well. */
	struct vsmfs_trans t __uninitialized;
	int ret;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if (new_dentry->d_name.len > VSMFS_NAME_LEN)
		return -ENAMETOOLONG;
	if (new_inode && S_ISDIR(new_inode->i_mode) && !(flags & RENAME_EXCHANGE)) {
		ret = vsmfs_check_empty(new_inode);
		if (ret)
			return ret;
	}
	ret = vsmfs_rename_indexes(&r);
	if (ret)
		return ret;
	if (!S_ISDIR(old_inode->i_mode) && !(new_inode && S_ISDIR(new_inode->i_mode)) &&
	    (new_inode || vsmfs_entry_room(sbi, r.nidx, DIRENT_LEN(new_dentry->d_name.len),
					   &page)) &&
	    !vsmfs_entry_begin(sbi, &t, VSMFS_RENAME_CREDITS, &page)) {
		ret = vsmfs_rename_trans(&t, &r);
		vsmfs_resv_end_shared(sbi, &t, &page);
		if (ret != -EAGAIN)
			return ret;
		/* Its abort dropped the directories' indexes. */
		ret = vsmfs_rename_indexes(&r);
		if (ret)
			return ret;
	}
	vsmfs_trans_begin(sbi, &t);
	return vsmfs_rename_trans(&t, &r);
}

/* Entry points: the operations above, timed for their trace events. */
static struct dentry *vsmfs_lookup(struct inode *dir, struct dentry *dentry,
				   unsigned int flags)
{
	u64 t0 = vsmfs_trace_start(vsmfs_lookup);
	struct dentry *d = vsmfs_do_lookup(dir, dentry, flags);

	trace_vsmfs_lookup(dir, IS_ERR_OR_NULL(d) ? dentry : d, PTR_ERR_OR_ZERO(d), t0);
	return d;
}

static int vsmfs_create(struct user_namespace *ns, struct inode *dir,
			struct dentry *dentry, umode_t mode, bool excl)
{
	u64 t0 = vsmfs_trace_start(vsmfs_create);
	int ret = vsmfs_do_create(ns, dir, dentry, mode, excl);

	trace_vsmfs_create(dir, dentry, ret, t0);
	return ret;
}

static int vsmfs_mknod(struct user_namespace *ns, struct inode *dir,
		       struct dentry *dentry, umode_t mode, dev_t rdev)
{
	u64 t0 = vsmfs_trace_start(vsmfs_mknod);
	int ret = vsmfs_do_mknod(ns, dir, dentry, mode, rdev);

	trace_vsmfs_mknod(dir, dentry, ret, t0);
	return ret;
}

static int vsmfs_mkdir(struct user_namespace *ns, struct inode *dir,
		       struct dentry *dentry, umode_t mode)
{
	u64 t0 = vsmfs_trace_start(vsmfs_mkdir);
	int ret = vsmfs_do_mkdir(ns, dir, dentry, mode);

	trace_vsmfs_mkdir(dir, dentry, ret, t0);
	return ret;
}

static int vsmfs_symlink(struct user_namespace *ns, struct inode *dir,
			 struct dentry *dentry, const char *symname)
{
	u64 t0 = vsmfs_trace_start(vsmfs_symlink);
	int ret = vsmfs_do_symlink(ns, dir, dentry, symname);

	trace_vsmfs_symlink(dir, dentry, ret, t0);
	return ret;
}

static int vsmfs_link(struct dentry *old, struct inode *dir, struct dentry *dentry)
{
	u64 t0 = vsmfs_trace_start(vsmfs_link);
	int ret = vsmfs_do_link(old, dir, dentry);

	trace_vsmfs_link(dir, dentry, ret, t0);
	return ret;
}

static int vsmfs_unlink(struct inode *dir, struct dentry *dentry)
{
	u64 t0 = vsmfs_trace_start(vsmfs_unlink);
	int ret = vsmfs_do_unlink(dir, dentry);

	trace_vsmfs_unlink(dir, dentry, ret, t0);
	return ret;
}

static int vsmfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	u64 t0 = vsmfs_trace_start(vsmfs_rmdir);
	int ret = vsmfs_do_rmdir(dir, dentry);

	trace_vsmfs_rmdir(dir, dentry, ret, t0);
	return ret;
}

static int vsmfs_rename(struct user_namespace *ns, struct inode *old_dir,
			struct dentry *old_dentry, struct inode *new_dir,
			struct dentry *new_dentry, unsigned int flags)
{
	u64 t0 = vsmfs_trace_start(vsmfs_rename);
	int ret = vsmfs_do_rename(ns, old_dir, old_dentry, new_dir, new_dentry, flags);

	trace_vsmfs_rename(new_dir, new_dentry, ret, t0);
	return ret;
}

const struct inode_operations vsmfs_dir_inode_operations = {
	.lookup		= vsmfs_lookup,
	.create		= vsmfs_create,
	.link		= vsmfs_link,
	.unlink		= vsmfs_unlink,
	.symlink	= vsmfs_symlink,
	.mkdir		= vsmfs_mkdir,
	.rmdir		= vsmfs_rmdir,
	.mknod		= vsmfs_mknod,
	.rename		= vsmfs_rename,
	.tmpfile	= vsmfs_tmpfile,
	.getattr	= vsmfs_getattr,
	.update_time	= vsmfs_update_time,
	.setattr	= vsmfs_setattr,
	.fileattr_get	= vsmfs_fileattr_get,
	.fileattr_set	= vsmfs_fileattr_set,
	.listxattr	= vsmfs_listxattr,
	.get_acl	= vsmfs_get_acl,
	.set_acl	= vsmfs_set_acl,
};
