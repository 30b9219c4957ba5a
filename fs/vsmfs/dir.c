// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs directories and namespace operations.
 *
 * A directory is a sequence of 4 KiB blocks (metadata, changed under
 * transactions) holding variable-length entries that never cross a block.
 * An entry's byte position in the directory never changes, so it is the
 * readdir offset (plus 2, after "." and ".."). A removed entry is marked
 * free and its space reused by later insertions.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include "vsmfs.h"
#include "pmem.h"

#define DIRENT_LEN(n)	round_up(VSMFS_DIRENT_BASE + (n), VSMFS_DIRENT_ALIGN)

struct vsmfs_dpos {
	struct vsmfs_mblk	*mb;
	struct vsmfs_ddirent	*de;
};

/* DRAM copy of directory block @blk, or NULL for a hole. */
static struct vsmfs_mblk *vsmfs_dir_block(struct inode *dir, u64 blk)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(dir->i_sb);
	u64 e = vsmfs_idx_lookup(dir, blk);

	if (!e)
		return NULL;
	return vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, vsmfs_idx_lpn(e)));
}

/* Sanity of one entry at @off of a block; false if corrupt. */
static bool vsmfs_de_ok(struct inode *dir, struct vsmfs_ddirent *de, unsigned int off)
{
	unsigned int rec = le16_to_cpu(de->d_rec_len);

	if (rec < VSMFS_DIRENT_BASE || rec % VSMFS_DIRENT_ALIGN ||
	    off + rec > VSMFS_BLOCK_SIZE ||
	    (de->d_ino && DIRENT_LEN(de->d_name_len) > rec)) {
		vsmfs_err_ratelimited(dir->i_sb, "directory %lu: corrupt entry at %u",
				      dir->i_ino, off);
		return false;
	}
	return true;
}

static int vsmfs_find_entry(struct inode *dir, const struct qstr *name,
			    struct vsmfs_dpos *pos)
{
	u64 nblk = dir->i_size >> VSMFS_BLOCK_SHIFT, b;

	for (b = 0; b < nblk; b++) {
		struct vsmfs_mblk *mb = vsmfs_dir_block(dir, b);
		unsigned int off = 0;

		if (IS_ERR_OR_NULL(mb)) {
			if (IS_ERR(mb))
				return PTR_ERR(mb);
			continue;
		}
		while (off < VSMFS_BLOCK_SIZE) {
			struct vsmfs_ddirent *de = (void *)mb->m_data + off;

			if (!vsmfs_de_ok(dir, de, off))
				return -EFSCORRUPTED;
			if (de->d_ino && de->d_name_len == name->len &&
			    !memcmp(de->d_name, name->name, name->len)) {
				pos->mb = mb;
				pos->de = de;
				return 0;
			}
			off += le16_to_cpu(de->d_rec_len);
		}
	}
	return -ENOENT;
}

static int vsmfs_add_entry(struct vsmfs_trans *t, struct inode *dir,
			   const struct qstr *name, struct inode *inode)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 nblk = dir->i_size >> VSMFS_BLOCK_SHIFT, b, lpn;
	unsigned int need = DIRENT_LEN(name->len);
	struct vsmfs_ddirent *de = NULL;
	struct vsmfs_mblk *mb = NULL;
	int ret;

	for (b = 0; b < nblk && !de; b++) {
		unsigned int off = 0;

		mb = vsmfs_dir_block(dir, b);
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		while (mb && off < VSMFS_BLOCK_SIZE) {
			struct vsmfs_ddirent *cur = (void *)mb->m_data + off;
			unsigned int rec = le16_to_cpu(cur->d_rec_len);

			if (!vsmfs_de_ok(dir, cur, off))
				return -EFSCORRUPTED;
			if (!cur->d_ino && rec >= need) {
				de = cur;
				break;
			}
			if (cur->d_ino && rec >= DIRENT_LEN(cur->d_name_len) + need) {
				unsigned int used = DIRENT_LEN(cur->d_name_len);

				cur->d_rec_len = cpu_to_le16(used);
				de = (void *)cur + used;
				de->d_rec_len = cpu_to_le16(rec - used);
				break;
			}
			off += rec;
		}
	}
	if (!de) {
		if (nblk >= VSMFS_MAX_KEY)
			return -ENOSPC;
		ret = vsmfs_alloc_pages(t, 1, false, &lpn);
		if (ret)
			return ret;
		VSMFS_I(dir)->i_pages++;
		ret = vsmfs_idx_set(t, dir, nblk, vsmfs_idx_make(lpn, 1));
		if (ret)
			return ret;
		mb = vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, lpn));
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		memset(mb->m_data, 0, VSMFS_BLOCK_SIZE);
		de = (void *)mb->m_data;
		de->d_rec_len = cpu_to_le16(VSMFS_BLOCK_SIZE);
		i_size_write(dir, (nblk + 1) << VSMFS_BLOCK_SHIFT);
		dir->i_blocks = VSMFS_I(dir)->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	}
	de->d_ino = cpu_to_le64(inode->i_ino);
	de->d_name_len = name->len;
	de->d_type = fs_umode_to_dtype(inode->i_mode);
	de->d_hash = 0;
	memcpy(de->d_name, name->name, name->len);
	vsmfs_trans_dirty(t, mb);
	dir->i_ctime = current_time(dir);
	dir->i_mtime = dir->i_ctime;
	return vsmfs_write_inode_t(t, dir);
}

static void vsmfs_del_entry(struct vsmfs_trans *t, struct inode *dir, struct vsmfs_dpos *pos)
{
	pos->de->d_ino = 0;
	vsmfs_trans_dirty(t, pos->mb);
	dir->i_ctime = current_time(dir);
	dir->i_mtime = dir->i_ctime;
}

static bool vsmfs_dir_empty(struct inode *dir)
{
	u64 nblk = dir->i_size >> VSMFS_BLOCK_SHIFT, b;

	for (b = 0; b < nblk; b++) {
		struct vsmfs_mblk *mb = vsmfs_dir_block(dir, b);
		unsigned int off = 0;

		if (IS_ERR(mb))
			return false;
		while (mb && off < VSMFS_BLOCK_SIZE) {
			struct vsmfs_ddirent *de = (void *)mb->m_data + off;

			if (!vsmfs_de_ok(dir, de, off))
				return false;
			if (de->d_ino)
				return false;
			off += le16_to_cpu(de->d_rec_len);
		}
	}
	return true;
}

static int vsmfs_readdir(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	u64 nblk = dir->i_size >> VSMFS_BLOCK_SHIFT;

	if (!dir_emit_dots(file, ctx))
		return 0;
	while ((u64)(ctx->pos - 2) >> VSMFS_BLOCK_SHIFT < nblk) {
		u64 b = (ctx->pos - 2) >> VSMFS_BLOCK_SHIFT;
		unsigned int want = (ctx->pos - 2) & (VSMFS_BLOCK_SIZE - 1), off = 0;
		struct vsmfs_mblk *mb = vsmfs_dir_block(dir, b);

		if (IS_ERR(mb))
			return PTR_ERR(mb);
		while (mb && off < VSMFS_BLOCK_SIZE) {
			struct vsmfs_ddirent *de = (void *)mb->m_data + off;
			unsigned int rec = le16_to_cpu(de->d_rec_len);

			if (!vsmfs_de_ok(dir, de, off))
				return -EFSCORRUPTED;
			if (off >= want && de->d_ino) {
				ctx->pos = 2 + (b << VSMFS_BLOCK_SHIFT) + off;
				if (!dir_emit(ctx, de->d_name, de->d_name_len,
					      le64_to_cpu(de->d_ino), de->d_type))
					return 0;
			}
			off += rec;
		}
		ctx->pos = 2 + ((b + 1) << VSMFS_BLOCK_SHIFT);
	}
	return 0;
}

static struct dentry *vsmfs_lookup(struct inode *dir, struct dentry *dentry,
				   unsigned int flags)
{
	struct inode *inode = NULL;
	struct vsmfs_dpos pos;
	int ret;

	if (dentry->d_name.len > VSMFS_NAME_LEN)
		return ERR_PTR(-ENAMETOOLONG);
	ret = vsmfs_find_entry(dir, &dentry->d_name, &pos);
	if (!ret) {
		inode = vsmfs_iget(dir->i_sb, le64_to_cpu(pos.de->d_ino));
		if (IS_ERR(inode))
			return ERR_CAST(inode);
	} else if (ret != -ENOENT) {
		return ERR_PTR(ret);
	}
	return d_splice_alias(inode, dentry);
}

/* Create an inode of @mode and link it at @dentry, in one transaction. */
static int vsmfs_mknod_common(struct inode *dir, struct dentry *dentry, umode_t mode,
			      dev_t rdev, const char *symname)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(dir->i_sb);
	struct vsmfs_trans t;
	struct inode *inode;
	int ret = 0;

	if (dentry->d_name.len > VSMFS_NAME_LEN)
		return -ENAMETOOLONG;
	if (S_ISDIR(mode) && dir->i_nlink >= U16_MAX)
		return -EMLINK;
	vsmfs_trans_begin(sbi, &t);
	inode = vsmfs_new_inode(&t, dir, &dentry->d_name, mode, rdev);
	if (IS_ERR(inode)) {
		vsmfs_trans_commit(&t);
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
			void *p;

			ret = vsmfs_alloc_pages(&t, 1, false, &lpn);
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
			ret = vsmfs_write_inode_t(&t, inode);
	}
	if (!ret)
		ret = vsmfs_add_entry(&t, dir, &dentry->d_name, inode);
	if (!ret && S_ISDIR(mode)) {
		inc_nlink(dir);
		ret = vsmfs_write_inode_t(&t, dir);
	}
	if (ret) {
		/* Undo in DRAM what the failed step did not publish. */
		vsmfs_xattr_drop_t(&t, inode);
		clear_nlink(inode);
		inode->i_mode = 0;
		vsmfs_free_ino(&t, inode->i_ino);
		vsmfs_write_inode_t(&t, inode);
		vsmfs_trans_commit(&t);
		make_bad_inode(inode);
		discard_new_inode(inode);
		return ret;
	}
	ret = vsmfs_trans_commit(&t);
	d_instantiate_new(dentry, inode);
	return ret;
}

static int vsmfs_create(struct user_namespace *ns, struct inode *dir,
			struct dentry *dentry, umode_t mode, bool excl)
{
	return vsmfs_mknod_common(dir, dentry, mode | S_IFREG, 0, NULL);
}

static int vsmfs_mknod(struct user_namespace *ns, struct inode *dir,
		       struct dentry *dentry, umode_t mode, dev_t rdev)
{
	if (MAJOR(rdev) >= 4096 || MINOR(rdev) >= (1U << 20))
		return -EINVAL;	/* does not fit new_encode_dev() */
	return vsmfs_mknod_common(dir, dentry, mode, rdev, NULL);
}

static int vsmfs_mkdir(struct user_namespace *ns, struct inode *dir,
		       struct dentry *dentry, umode_t mode)
{
	return vsmfs_mknod_common(dir, dentry, mode | S_IFDIR, 0, NULL);
}

static int vsmfs_symlink(struct user_namespace *ns, struct inode *dir,
			 struct dentry *dentry, const char *symname)
{
	if (strlen(symname) >= VSMFS_BLOCK_SIZE)
		return -ENAMETOOLONG;
	return vsmfs_mknod_common(dir, dentry, S_IFLNK | 0777, 0, symname);
}

static int vsmfs_link(struct dentry *old, struct inode *dir, struct dentry *dentry)
{
	struct inode *inode = d_inode(old);
	struct vsmfs_trans t;
	int ret;

	if (dentry->d_name.len > VSMFS_NAME_LEN)
		return -ENAMETOOLONG;
	if (inode->i_nlink >= U16_MAX)
		return -EMLINK;
	vsmfs_trans_begin(VSMFS_SB(dir->i_sb), &t);
	ret = vsmfs_add_entry(&t, dir, &dentry->d_name, inode);
	if (!ret) {
		inc_nlink(inode);
		inode->i_ctime = current_time(inode);
		ret = vsmfs_write_inode_t(&t, inode);
	}
	ret = vsmfs_trans_commit(&t) ?: ret;
	if (!ret) {
		ihold(inode);
		d_instantiate(dentry, inode);
	}
	return ret;
}

/* Remove @dentry's entry and drop the link it held, in transaction @t. */
static int vsmfs_unlink_t(struct vsmfs_trans *t, struct inode *dir, struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct vsmfs_dpos pos;
	int ret;

	ret = vsmfs_find_entry(dir, &dentry->d_name, &pos);
	if (ret)
		return ret;
	vsmfs_del_entry(t, dir, &pos);
	inode->i_ctime = dir->i_ctime;
	if (S_ISDIR(inode->i_mode)) {
		clear_nlink(inode);
		drop_nlink(dir);
	} else {
		drop_nlink(inode);
	}
	ret = vsmfs_write_inode_t(t, dir);
	if (!ret)
		ret = vsmfs_write_inode_t(t, inode);
	return ret;
}

static int vsmfs_unlink(struct inode *dir, struct dentry *dentry)
{
	struct vsmfs_trans t;
	int ret;

	vsmfs_trans_begin(VSMFS_SB(dir->i_sb), &t);
	ret = vsmfs_unlink_t(&t, dir, dentry);
	return vsmfs_trans_commit(&t) ?: ret;
}

static int vsmfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	if (!vsmfs_dir_empty(d_inode(dentry)))
		return -ENOTEMPTY;
	return vsmfs_unlink(dir, dentry);
}

static int vsmfs_rename(struct user_namespace *ns, struct inode *old_dir,
			struct dentry *old_dentry, struct inode *new_dir,
			struct dentry *new_dentry, unsigned int flags)
{
	struct inode *old_inode = d_inode(old_dentry);
	struct inode *new_inode = d_inode(new_dentry);
	bool is_dir = S_ISDIR(old_inode->i_mode);
	struct vsmfs_dpos opos, npos;
	struct vsmfs_trans t;
	int ret;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if (new_dentry->d_name.len > VSMFS_NAME_LEN)
		return -ENAMETOOLONG;
	if (new_inode && S_ISDIR(new_inode->i_mode) && !(flags & RENAME_EXCHANGE) &&
	    !vsmfs_dir_empty(new_inode))
		return -ENOTEMPTY;

	vsmfs_trans_begin(VSMFS_SB(old_dir->i_sb), &t);
	ret = vsmfs_find_entry(old_dir, &old_dentry->d_name, &opos);
	if (ret)
		goto out;
	if (flags & RENAME_EXCHANGE) {
		ret = vsmfs_find_entry(new_dir, &new_dentry->d_name, &npos);
		if (ret)
			goto out;
		opos.de->d_ino = cpu_to_le64(new_inode->i_ino);
		opos.de->d_type = fs_umode_to_dtype(new_inode->i_mode);
		npos.de->d_ino = cpu_to_le64(old_inode->i_ino);
		npos.de->d_type = fs_umode_to_dtype(old_inode->i_mode);
		vsmfs_trans_dirty(&t, opos.mb);
		vsmfs_trans_dirty(&t, npos.mb);
		if (old_dir != new_dir && S_ISDIR(new_inode->i_mode) != is_dir) {
			if (is_dir) {
				drop_nlink(old_dir);
				inc_nlink(new_dir);
			} else {
				inc_nlink(old_dir);
				drop_nlink(new_dir);
			}
		}
		old_dir->i_ctime = current_time(old_dir);
		old_dir->i_mtime = old_dir->i_ctime;
		new_dir->i_mtime = old_dir->i_ctime;
		new_dir->i_ctime = old_dir->i_ctime;
		old_inode->i_ctime = old_dir->i_ctime;
		new_inode->i_ctime = old_dir->i_ctime;
		ret = vsmfs_write_inode_t(&t, old_inode);
		if (!ret)
			ret = vsmfs_write_inode_t(&t, new_inode);
		goto dirs;
	}
	if (new_inode) {
		ret = vsmfs_find_entry(new_dir, &new_dentry->d_name, &npos);
		if (ret)
			goto out;
		npos.de->d_ino = cpu_to_le64(old_inode->i_ino);
		npos.de->d_type = fs_umode_to_dtype(old_inode->i_mode);
		vsmfs_trans_dirty(&t, npos.mb);
		new_inode->i_ctime = current_time(new_inode);
		if (is_dir)
			clear_nlink(new_inode);
		else
			drop_nlink(new_inode);
		ret = vsmfs_write_inode_t(&t, new_inode);
		if (ret)
			goto out;
		new_dir->i_mtime = new_inode->i_ctime;
		new_dir->i_ctime = new_inode->i_ctime;
		if (is_dir)
			drop_nlink(new_dir);
	} else {
		ret = vsmfs_add_entry(&t, new_dir, &new_dentry->d_name, old_inode);
		if (ret)
			goto out;
	}
	/* The old entry may have moved if the new one was added to its block. */
	ret = vsmfs_find_entry(old_dir, &old_dentry->d_name, &opos);
	if (ret)
		goto out;
	vsmfs_del_entry(&t, old_dir, &opos);
	if (is_dir && old_dir != new_dir) {
		drop_nlink(old_dir);
		inc_nlink(new_dir);
	}
	old_inode->i_ctime = current_time(old_inode);
	ret = vsmfs_write_inode_t(&t, old_inode);
dirs:
	if (!ret)
		ret = vsmfs_write_inode_t(&t, old_dir);
	if (!ret && new_dir != old_dir)
		ret = vsmfs_write_inode_t(&t, new_dir);
out:
	return vsmfs_trans_commit(&t) ?: ret;
}

const struct file_operations vsmfs_dir_operations = {
	.llseek		= generic_file_llseek,
	.read		= generic_read_dir,
	.iterate_shared	= vsmfs_readdir,
	.fsync		= vsmfs_fsync,
};

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
	.setattr	= vsmfs_setattr,
	.listxattr	= vsmfs_listxattr,
	.get_acl	= vsmfs_get_acl,
	.set_acl	= vsmfs_set_acl,
};
