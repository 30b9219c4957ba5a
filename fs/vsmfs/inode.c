// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs inode I/O: the in-core inode and its on-media slot, reached through
 * the inode mapping table. Reading an inode (vsmfs_iget()), storing it in
 * a handle (vsmfs_mark_inode_dirty()), changing single words of its slot in a
 * shared handle beside other writers (vsmfs_whandle_inode() and those after
 * it, vsmfs_set_size_times(), vsmfs_update_time()), and putting it back as
 * its slot has it when a handle is aborted (vsmfs_inode_reload()).
 *
 * An inode read or made gets the operations of its kind from the table the
 * upper layers register at mount (struct vsmfs_inode_ops, sbi->s_iops).
 *
 * Ordering: a slot changes only in the DRAM copy of its block, which
 * reaches PM through the journal when the handle's transaction commits.
 */
#include <linux/fs.h>
#include "vsmfs.h"
#include "mcache.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"

/* DRAM copy of the block holding the on-media inode of @ino. */
static int vsmfs_dinode_get(struct vsmfs_sb_info *sbi, u64 ino,
			    struct vsmfs_mblk **mbp, struct vsmfs_dinode **dip, u64 *slotp)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_mblk *mb;
	u64 slot;

	if (!ino || ino >= l->inodes) {
		vsmfs_fs_error(sbi->s_sb, ino, "inode number out of range");
		return -EFSCORRUPTED;
	}
	mb = vsmfs_mblk_get(sbi, l->imap_start + ino / (VSMFS_BLOCK_SIZE / 4));
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	slot = le32_to_cpu(((__le32 *)mb->m_data)[ino % (VSMFS_BLOCK_SIZE / 4)]);
	if (!slot || slot >= l->inodes) {
		vsmfs_fs_error(sbi->s_sb, ino, "maps to invalid slot %llu", slot);
		return -EFSCORRUPTED;
	}
	mb = vsmfs_mblk_get(sbi, l->itable_start + slot / VSMFS_INODES_PER_BLOCK);
	if (IS_ERR(mb))
		return PTR_ERR(mb);
	*mbp = mb;
	*dip = vsmfs_slot_in(mb, slot);
	*slotp = slot;
	return 0;
}

/**
 * vsmfs_inode_slot_find() - vsmfs_inode_slot() through the inode map
 * @inode: the inode
 * @gen: s_slot_gen of the moment, kept with the slot found for the next
 * @mbp: set to the inode-table block
 * @dip: set to the slot
 * @slotp: set to the slot's number
 *
 * Context: as vsmfs_inode_slot().
 * Return: 0 or a negative errno.
 */
noinline int vsmfs_inode_slot_find(struct inode *inode, u64 gen, struct vsmfs_mblk **mbp,
				   struct vsmfs_dinode **dip, u64 *slotp)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	int ret;

	ret = vsmfs_dinode_get(VSMFS_SB(inode->i_sb), inode->i_ino, mbp, dip, slotp);
	if (ret)
		return ret;
	WRITE_ONCE(vi->i_slot, *slotp);
	/* The slot before its generation: pairs with vsmfs_inode_slot()'s acquire. */
	smp_store_release(&vi->i_slot_gen, gen);
	return 0;
}

/**
 * vsmfs_set_ops() - give an inode the operations of its kind
 * @inode: an inode being read or made, its mode set
 *
 * From the table of the mount (sbi->s_iops).
 */
void vsmfs_set_ops(struct inode *inode)
{
	const struct vsmfs_inode_ops *ops = VSMFS_SB(inode->i_sb)->s_iops;

	if (S_ISREG(inode->i_mode)) {
		inode->i_op = ops->file_iops;
		inode->i_fop = ops->file_fops;
		inode->i_mapping->a_ops = ops->file_aops;
		inode->i_flags |= S_DAX;
	} else if (S_ISDIR(inode->i_mode)) {
		inode->i_op = ops->dir_iops;
		inode->i_fop = ops->dir_fops;
	} else if (S_ISLNK(inode->i_mode)) {
		if (!vsmfs_inline_symlink(inode)) {
			inode->i_op = ops->symlink_iops;
		} else {
			inode->i_op = ops->fast_symlink_iops;
			inode->i_link = VSMFS_I(inode)->i_inline;
		}
		inode_nohighmem(inode);
	} else {
		inode->i_op = ops->special_iops;
		init_special_inode(inode, inode->i_mode, inode->i_rdev);
	}
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
	return __vsmfs_iget(sb, ino, VSMFS_IGET_LINKED);
}

/**
 * vsmfs_iget_handle() - get the in-core inode a file handle names
 * @sb: super block
 * @ino: i-number from the handle, not trusted
 * @gen: generation from the handle
 *
 * A handle outlives its file: an i-number out of range, a free inode, one
 * with no links left, or one reused since (another generation) is a stale
 * handle, not damage.
 *
 * Context: process context, may sleep.
 * Return: the inode with a reference held, or an ERR_PTR (-ESTALE for a
 * stale handle).
 */
struct inode *vsmfs_iget_handle(struct super_block *sb, u64 ino, u32 gen)
{
	struct inode *inode;

	if (ino < VSMFS_ROOT_INO || ino >= VSMFS_SB(sb)->s_layout.inodes)
		return ERR_PTR(-ESTALE);
	inode = __vsmfs_iget(sb, ino, VSMFS_IGET_HANDLE);
	if (IS_ERR(inode))
		return inode;
	if (!inode->i_nlink || inode->i_generation != gen) {
		iput(inode);
		return ERR_PTR(-ESTALE);
	}
	return inode;
}

/**
 * vsmfs_iget_if_used() - get the in-core inode of an i-number seen in use
 * @sb: super block
 * @ino: i-number, in range, seen in use with no lock held
 *
 * For a caller that picked @ino from state it read without a lock (the
 * aggregation worker): the inode may have been unlinked, or unlinked and
 * freed, since. That is not damage, and is returned quietly; everything
 * else is checked as vsmfs_iget() checks it.
 *
 * Context: process context, may sleep.
 * Return: the inode with a reference held, -ENOENT if it is free or has no
 * links left, or another ERR_PTR.
 */
struct inode *vsmfs_iget_if_used(struct super_block *sb, u64 ino)
{
	struct inode *inode = __vsmfs_iget(sb, ino, VSMFS_IGET_IF_USED);

	if (!IS_ERR(inode) && !inode->i_nlink) {
		iput(inode);
		return ERR_PTR(-ENOENT);
	}
	return inode;
}

/**
 * __vsmfs_iget() - get the in-core inode of an i-number, as asked
 * @sb: super block
 * @ino: i-number
 * @how: what is accepted beyond an inode in use with links
 *	(enum vsmfs_iget_mode)
 *
 * Context: process context, may sleep.
 * Return: the inode with a reference held, or an ERR_PTR.
 */
struct inode *__vsmfs_iget(struct super_block *sb, u64 ino, enum vsmfs_iget_mode how)
{
	struct vsmfs_inode_info *vi;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	struct inode *inode;
	const char *why;
	u64 slot;
	int ret, i;

	inode = iget_locked(sb, ino);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(inode->i_state & I_NEW))
		return inode;
	vi = VSMFS_I(inode);

	ret = vsmfs_dinode_get(VSMFS_SB(sb), ino, &mb, &di, &slot);
	if (ret)
		goto bad;
	ret = -EFSCORRUPTED;
	if ((how != VSMFS_IGET_ORPHAN && !le32_to_cpu(di->i_nlink)) || !le16_to_cpu(di->i_mode)) {
		if (how == VSMFS_IGET_HANDLE || how == VSMFS_IGET_IF_USED) {
			ret = how == VSMFS_IGET_HANDLE ? -ESTALE : -ENOENT;
			goto bad;
		}
		vsmfs_fs_error(sb, ino, "inode is not in use");
		goto bad;
	}
	inode->i_mode = le16_to_cpu(di->i_mode);
	set_nlink(inode, le32_to_cpu(di->i_nlink));
	i_uid_write(inode, le32_to_cpu(di->i_uid));
	i_gid_write(inode, le32_to_cpu(di->i_gid));
	inode->i_size = le64_to_cpu(di->i_size);
	vi->i_pages = le64_to_cpu(di->i_pages);
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	inode->i_atime.tv_sec = le64_to_cpu(di->i_atime);
	inode->i_atime.tv_nsec = le32_to_cpu(di->i_atime_ns);
	inode->i_mtime.tv_sec = le64_to_cpu(di->i_mtime);
	inode->i_mtime.tv_nsec = le32_to_cpu(di->i_mtime_ns);
	inode->i_ctime.tv_sec = le64_to_cpu(di->i_ctime);
	inode->i_ctime.tv_nsec = le32_to_cpu(di->i_ctime_ns);
	vi->i_crtime.tv_sec = le64_to_cpu(di->i_crtime);
	vi->i_crtime.tv_nsec = le32_to_cpu(di->i_crtime_ns);
	inode->i_generation = le32_to_cpu(di->i_generation);
	inode->i_rdev = new_decode_dev(le32_to_cpu(di->i_rdev));
	vi->i_flags = le32_to_cpu(di->i_flags);
	vi->i_tail_key = S_ISREG(inode->i_mode) ? le32_to_cpu(di->i_tail_key) : 0;
	vi->i_parent = S_ISDIR(inode->i_mode) ? le64_to_cpu(di->i_parent) : 0;
	vi->i_xattr = le64_to_cpu(di->i_xattr);
	/* i_index too: they share their bytes. */
	memset(vi->i_inline, 0, sizeof(vi->i_inline));
	why = vsmfs_dinode_check(di);
	if (why) {
		vsmfs_fs_error(sb, ino, "%s (mode 0%o, size %lld)", why, inode->i_mode,
			       inode->i_size);
		goto bad;
	}
	if (vsmfs_inline_symlink(inode)) {
		memcpy(vi->i_inline, di->i_inline, inode->i_size);
	} else {
		for (i = 0; i < VSMFS_NDIRECT; i++)
			vi->i_index[i] = le64_to_cpu(di->i_direct[i]);
		vi->i_index[VSMFS_NDIRECT] = le64_to_cpu(di->i_ind);
		vi->i_index[VSMFS_NDIRECT + 1] = le64_to_cpu(di->i_dind);
	}
	/*
	 * An earlier in-core inode of it may have changed it in a transaction
	 * not yet durable and been evicted (vsmfs_fc_evict()): its fsync
	 * commits that transaction, and no record describes it in there.
	 */
	vi->i_tid = atomic64_read(&VSMFS_SB(sb)->s_fc_evict_tid);
	vi->i_fc_tid = vi->i_tid;
	vi->i_fc_bad = VSMFS_FCB_COMMIT;
	vsmfs_set_ops(inode);
	vsmfs_set_inode_flags(inode);
	unlock_new_inode(inode);
	return inode;
bad:
	iget_failed(inode);
	return ERR_PTR(ret);
}

/*
 * i_uid_read() and i_gid_read(), with the file system's namespace the
 * initial one (as it is unless mounted in another) taken as the identity
 * map it is, without a walk of its map at each change of an inode.
 */
static u32 vsmfs_uid_read(const struct inode *inode)
{
	return i_user_ns(inode) == &init_user_ns ? __kuid_val(inode->i_uid) : i_uid_read(inode);
}

static u32 vsmfs_gid_read(const struct inode *inode)
{
	return i_user_ns(inode) == &init_user_ns ? __kgid_val(inode->i_gid) : i_gid_read(inode);
}

/* The on-media form of an in-core inode: every byte of @di is set. */
static void vsmfs_dinode_fill(struct inode *inode, struct vsmfs_dinode *di)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	int i;

	di->i_mode = cpu_to_le16(inode->i_mode);
	di->i_reserved0 = 0;
	di->i_nlink = cpu_to_le32(inode->i_nlink);
	di->i_uid = cpu_to_le32(vsmfs_uid_read(inode));
	di->i_gid = cpu_to_le32(vsmfs_gid_read(inode));
	di->i_flags = cpu_to_le32(vi->i_flags);
	di->i_tail_key = cpu_to_le32(vi->i_tail_key);
	di->i_generation = cpu_to_le32(inode->i_generation);
	di->i_size = cpu_to_le64(inode->i_size);
	di->i_pages = cpu_to_le64(vi->i_pages);
	di->i_atime = cpu_to_le64(inode->i_atime.tv_sec);
	di->i_atime_ns = cpu_to_le32(inode->i_atime.tv_nsec);
	di->i_mtime = cpu_to_le64(inode->i_mtime.tv_sec);
	di->i_mtime_ns = cpu_to_le32(inode->i_mtime.tv_nsec);
	di->i_ctime = cpu_to_le64(inode->i_ctime.tv_sec);
	di->i_ctime_ns = cpu_to_le32(inode->i_ctime.tv_nsec);
	di->i_crtime = cpu_to_le64(vi->i_crtime.tv_sec);
	di->i_crtime_ns = cpu_to_le32(vi->i_crtime.tv_nsec);
	di->i_rdev = cpu_to_le32(new_encode_dev(inode->i_rdev));
	di->i_xattr = cpu_to_le64(vi->i_xattr);
	di->i_parent = S_ISDIR(inode->i_mode) ? cpu_to_le64(vi->i_parent) : 0;
	memset(di->i_reserved2, 0, sizeof(di->i_reserved2));
	if (vsmfs_inline_symlink(inode)) {
		memset(di->i_inline, 0, sizeof(di->i_inline));
		memcpy(di->i_inline, vi->i_inline, min_t(u64, inode->i_size, VSMFS_INLINE_LEN));
	} else {
		for (i = 0; i < VSMFS_NDIRECT; i++)
			di->i_direct[i] = cpu_to_le64(vi->i_index[i]);
		di->i_ind = cpu_to_le64(vi->i_index[VSMFS_NDIRECT]);
		di->i_dind = cpu_to_le64(vi->i_index[VSMFS_NDIRECT + 1]);
	}
}

/**
 * vsmfs_mark_inode_dirty() - store an in-core inode in its on-media slot
 * @t: running transaction
 * @inode: the inode
 *
 * Only the span of 8-byte words that differ from the slot is saved for
 * an abort, stored, and compared again when the handle ends (a write
 * changes the size, block count and times: a few words of the 32).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_mark_inode_dirty(struct vsmfs_trans *t, struct inode *inode)
{
	/* Filled whole by vsmfs_dinode_fill(): not zeroed at entry as well. */
	struct vsmfs_dinode nd __uninitialized;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	const u64 *src = (const u64 *)&nd;
	unsigned int first, end, lines = 0, l;
	u64 *dst, slot;
	int ret;

	ret = vsmfs_inode_slot(inode, &mb, &di, &slot);
	if (ret)
		return ret;
	vsmfs_dinode_fill(inode, &nd);
	dst = (u64 *)di;
	/*
	 * The cache lines of the slot that differ, each by one test of its
	 * eight words, then the first and last differing words in them.
	 */
	static_assert(VSMFS_INODE_SIZE % 64 == 0);
	for (l = 0; l < VSMFS_INODE_SIZE / 64; l++) {
		const u64 *a = src + l * 8, *b = dst + l * 8;

		if ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) |
		    (a[4] ^ b[4]) | (a[5] ^ b[5]) | (a[6] ^ b[6]) | (a[7] ^ b[7]))
			lines |= 1U << l;
	}
	/* As the slot was: nothing for the transaction to carry. */
	if (lines) {
		first = __ffs(lines) * 8;
		end = (__fls(lines) + 1) * 8;
		while (src[first] == dst[first])
			first++;
		while (src[end - 1] == dst[end - 1])
			end--;
		ret = vsmfs_trans_get_write_access_range(t, mb,
							 (u8 *)(dst + first) - mb->m_data,
							 (end - first) * 8);
		if (ret)
			return ret;
		vsmfs_copy_words(dst + first, src + first, end - first);
		vsmfs_slot_dirty(mb, slot % VSMFS_INODES_PER_BLOCK);
		vsmfs_trans_dirty(t, mb);
	}
	t->t_fc_mb = mb;
	t->t_fc_off = (u8 *)di - mb->m_data;
	vsmfs_trans_note_inode(t, inode);
	vsmfs_aggr_written(inode);
	return 0;
}

/**
 * vsmfs_inode_get_write_access() - prepare to write an inode in a transaction
 * @t: running transaction
 * @inode: the inode
 *
 * After this, vsmfs_mark_inode_dirty() of @inode in @t cannot fail: for a
 * change that cannot be undone (data stored in place), made only once
 * nothing else can fail.
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_inode_get_write_access(struct vsmfs_trans *t, struct inode *inode)
{
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	u64 slot;
	int ret;

	ret = vsmfs_inode_slot(inode, &mb, &di, &slot);
	return ret ?: vsmfs_trans_get_write_access_range(t, mb, (u8 *)di - mb->m_data,
							  sizeof(*di));
}

/**
 * vsmfs_set_size_times() - set a file's size and times in a short handle
 * @inode: the file, locked
 * @size: its new size (its size, for the times alone)
 * @now: the time, which becomes the modification and change times
 *
 * In a shared handle beside other writers when the running transaction
 * has room for it, storing only the words that change; else in a handle
 * of the other kind. Ordering as any handle that ends in the running
 * transaction. Used where the data is in place already: an overwrite in
 * place, a staged append that stays in the file's last page.
 *
 * Return: 0 or a negative errno (nothing changed).
 */
noinline int vsmfs_set_size_times(struct inode *inode, loff_t size, struct timespec64 now)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_whandle h;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	struct vsmfs_trans t;
	int ret;

	if (!vsmfs_whandle_begin(sbi, &h, 1, 0)) {
		ret = vsmfs_whandle_inode(&h, inode, &mb, &di);
		if (!ret) {
			if (size != i_size_read(inode))
				vsmfs_whandle_size(inode, mb, di, size);
			/* Words that do not change are not journaled. */
			if (!timespec64_equal(&inode->i_mtime, &now) ||
			    !timespec64_equal(&inode->i_ctime, &now))
				vsmfs_whandle_times(inode, mb, di, now);
			vsmfs_whandle_note_inode(&h, inode);
			vsmfs_aggr_written(inode);
		}
		vsmfs_whandle_end(&h);
		return ret;
	}
	vsmfs_trans_begin_meta(sbi, &t, 1);
	vsmfs_trans_track(&t, inode, false);
	i_size_write(inode, size);
	inode->i_mtime = now;
	inode->i_ctime = now;
	return vsmfs_trans_end(&t, vsmfs_mark_inode_dirty(&t, inode));
}

/**
 * vsmfs_inode_reload() - put an in-core inode back as its slot has it
 * @inode: an inode on PM, locked by the caller as for the change undone
 *
 * For an aborted transaction (vsmfs_trans_abort()), once the DRAM copy of
 * the slot is back to the version before it: every field an operation
 * changes is read again. The access time, which the VFS may have changed
 * in core without a transaction, is kept. Index entries are stored only
 * where they differ, so the page fault path, which may read them under
 * i_idx_sem shared, never sees one torn.
 *
 * Context: inside the transaction being aborted.
 */
void vsmfs_inode_reload(struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	u64 slot, e;
	int i;

	if (vsmfs_dinode_get(VSMFS_SB(inode->i_sb), inode->i_ino, &mb, &di, &slot))
		return;
	/* Only an inode that exists on PM is tracked. */
	if (WARN_ON_ONCE(!di->i_mode))
		return;
	inode->i_mode = le16_to_cpu(di->i_mode);
	set_nlink(inode, le32_to_cpu(di->i_nlink));
	i_uid_write(inode, le32_to_cpu(di->i_uid));
	i_gid_write(inode, le32_to_cpu(di->i_gid));
	i_size_write(inode, le64_to_cpu(di->i_size));
	vi->i_pages = le64_to_cpu(di->i_pages);
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	inode->i_mtime.tv_sec = le64_to_cpu(di->i_mtime);
	inode->i_mtime.tv_nsec = le32_to_cpu(di->i_mtime_ns);
	inode->i_ctime.tv_sec = le64_to_cpu(di->i_ctime);
	inode->i_ctime.tv_nsec = le32_to_cpu(di->i_ctime_ns);
	vi->i_flags = le32_to_cpu(di->i_flags);
	vsmfs_set_inode_flags(inode);
	vi->i_tail_key = S_ISREG(inode->i_mode) ? le32_to_cpu(di->i_tail_key) : 0;
	vi->i_parent = S_ISDIR(inode->i_mode) ? le64_to_cpu(di->i_parent) : 0;
	vi->i_xattr = le64_to_cpu(di->i_xattr);
	if (vsmfs_inline_symlink(inode))
		return;
	for (i = 0; i < VSMFS_NDIRECT + 2; i++) {
		if (i < VSMFS_NDIRECT)
			e = le64_to_cpu(di->i_direct[i]);
		else if (i == VSMFS_NDIRECT)
			e = le64_to_cpu(di->i_ind);
		else
			e = le64_to_cpu(di->i_dind);
		if (vi->i_index[i] != e)
			WRITE_ONCE(vi->i_index[i], e);
	}
}

/**
 * vsmfs_discard_new_inode() - drop a new inode whose transaction is aborted
 * @inode: an inode from vsmfs_new_inode(), still I_NEW
 *
 * Nothing of it reaches PM. It is made bad so that eviction, which would
 * otherwise free its slot in a transaction of its own, leaves it alone:
 * the abort gives the slot back. Called inside the handle, before the
 * abort, so that the inode leaves the inode cache before its i-number
 * can be taken again (by a create beside it, in a shared handle).
 */
void vsmfs_discard_new_inode(struct inode *inode)
{
	clear_nlink(inode);
	make_bad_inode(inode);
	discard_new_inode(inode);
}

/**
 * vsmfs_set_inode_flags() - mirror the on-media flags in the VFS inode
 * @inode: the inode, its VSMFS_I(inode)->i_flags just set
 *
 * Context: the inode locked, or not yet visible (iget, inode creation).
 */
void vsmfs_set_inode_flags(struct inode *inode)
{
	u32 f = VSMFS_I(inode)->i_flags;
	unsigned int flags = 0;

	if (f & VSMFS_IFLAG_IMMUTABLE)
		flags |= S_IMMUTABLE;
	if (f & VSMFS_IFLAG_APPEND)
		flags |= S_APPEND;
	if (f & VSMFS_IFLAG_NOATIME)
		flags |= S_NOATIME;
	inode_set_flags(inode, flags, S_IMMUTABLE | S_APPEND | S_NOATIME);
}

/**
 * vsmfs_write_inode() - write back what the VFS changed on its own
 * @inode: the inode
 * @wbc: writeback control
 *
 * vsmfs changes inodes in handles, which join the running transaction;
 * only timestamps the VFS updates by itself (atime, mtime on a write
 * fault) reach the inode through writeback, in a handle of their own.
 * Like any handle it is durable once that transaction commits (fsync,
 * NFS's commit of metadata, sync_fs).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_write_inode(struct inode *inode, struct writeback_control *wbc)
{
	struct vsmfs_trans t;
	int ret;

	if (!inode->i_nlink || is_bad_inode(inode))
		return 0;
	vsmfs_trans_begin(VSMFS_SB(inode->i_sb), &t);
	ret = vsmfs_mark_inode_dirty(&t, inode);
	return vsmfs_trans_commit(&t) ?: ret;
}

/**
 * vsmfs_update_time() - set the times the VFS updates on its own
 * @inode: the inode, its lock held shared or not at all
 * @now: the time
 * @flags: which times (S_ATIME, S_MTIME, S_CTIME, S_VERSION)
 *
 * An access time (a read, a directory listing, an mmap), or the
 * modification and change times of a write fault on a shared mapping, are
 * set in a shared handle beside the writers, storing only the words of
 * the slot they change; the commit that takes the handle writes them, as
 * for any change. Without this the VFS marks the inode dirty and
 * writeback stores the slot in a handle of the other kind, which waits
 * for every shared handle to end. A shared handle changes a slot only
 * under the inode's lock: taken shared here by trylock, as the caller may
 * hold it shared already (a listing) or hold mmap_lock, which comes after
 * it. Holders of it shared meet only each other in these words, and
 * i_lock keeps the in-core times and the slot's in step. Anything else
 * (S_VERSION), or a lock or handle not had at once, takes the generic way.
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_update_time(struct inode *inode, struct timespec64 *now, int flags)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_whandle h;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	int ret;

	if ((flags & ~(S_ATIME | S_MTIME | S_CTIME)) || !inode->i_nlink ||
	    is_bad_inode(inode) || !inode_trylock_shared(inode))
		return generic_update_time(inode, now, flags);
	if (vsmfs_whandle_begin(sbi, &h, 1, 0)) {
		inode_unlock_shared(inode);
		return generic_update_time(inode, now, flags);
	}
	ret = vsmfs_whandle_inode(&h, inode, &mb, &di);
	if (!ret) {
		spin_lock(&inode->i_lock);
		if (flags & S_ATIME) {
			inode->i_atime = *now;
			di->i_atime = cpu_to_le64(now->tv_sec);
			di->i_atime_ns = cpu_to_le32(now->tv_nsec);
			vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_atime));
			vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_atime_ns));
		}
		if (flags & S_MTIME) {
			inode->i_mtime = *now;
			di->i_mtime = cpu_to_le64(now->tv_sec);
			di->i_mtime_ns = cpu_to_le32(now->tv_nsec);
			vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_mtime));
			vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_mtime_ns));
		}
		if (flags & S_CTIME) {
			inode->i_ctime = *now;
			di->i_ctime = cpu_to_le64(now->tv_sec);
			di->i_ctime_ns = cpu_to_le32(now->tv_nsec);
			vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_ctime));
			vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_ctime_ns));
		}
		spin_unlock(&inode->i_lock);
		vsmfs_slot_dirty(mb, ((u8 *)di - mb->m_data) / VSMFS_INODE_SIZE);
		vsmfs_whandle_note_inode(&h, inode);
	}
	vsmfs_whandle_end(&h);
	inode_unlock_shared(inode);
	return ret;
}
