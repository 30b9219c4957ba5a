// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs inodes: reading and writing on-media inodes (reached through the
 * inode mapping table), allocation and eviction, the per-inode index, and
 * truncation.
 *
 * The index maps a key to a run of logical pages: for regular files a key
 * is a 2 MiB piece of the file (a virtual superpage), for directories and
 * long symlinks a 4 KiB block. Keys 0..7 are in the inode; then a single
 * and a double indirect block of 512 entries each. Index blocks are
 * metadata, changed under transactions.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/posix_acl.h>
#include "vsmfs.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"

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
	*dip = (struct vsmfs_dinode *)(mb->m_data +
				       (slot % VSMFS_INODES_PER_BLOCK) * VSMFS_INODE_SIZE);
	*slotp = slot;
	return 0;
}

/**
 * vsmfs_lpn_blk() - device block behind a logical page
 * @sbi: the file system
 * @lpn: logical page
 *
 * Return: the device block of the frame the page table names, 0 on error.
 */
u64 vsmfs_lpn_blk(struct vsmfs_sb_info *sbi, u64 lpn)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_mblk *mb;
	u64 frame;

	if (!lpn || lpn >= l->lpages)
		return 0;
	mb = vsmfs_mblk_get(sbi, l->ptable_start + lpn / (VSMFS_BLOCK_SIZE / 8));
	if (IS_ERR(mb))
		return 0;
	frame = le64_to_cpu(((__le64 *)mb->m_data)[lpn % (VSMFS_BLOCK_SIZE / 8)]) &
		VSMFS_PTE_FRAME_MASK;
	return frame < l->data_pages ? l->data_start + frame : 0;
}

/* What __vsmfs_iget() accepts beyond an inode in use with links. */
enum vsmfs_iget_mode {
	VSMFS_IGET_LINKED,	/* only that: anything else is corruption */
	VSMFS_IGET_ORPHAN,	/* also one with no links (orphan cleanup) */
	VSMFS_IGET_HANDLE,	/* a file handle's: a free inode is -ESTALE */
	VSMFS_IGET_IF_USED,	/* one looked up with no lock: gone is -ENOENT */
};

static struct inode *__vsmfs_iget(struct super_block *sb, u64 ino, enum vsmfs_iget_mode how);

static void vsmfs_set_ops(struct inode *inode)
{
	if (S_ISREG(inode->i_mode)) {
		inode->i_op = &vsmfs_file_inode_operations;
		inode->i_fop = &vsmfs_file_operations;
		inode->i_mapping->a_ops = &vsmfs_dax_aops;
		inode->i_flags |= S_DAX;
	} else if (S_ISDIR(inode->i_mode)) {
		inode->i_op = &vsmfs_dir_inode_operations;
		inode->i_fop = &vsmfs_dir_operations;
	} else if (S_ISLNK(inode->i_mode)) {
		if (!vsmfs_inline_symlink(inode)) {
			inode->i_op = &vsmfs_symlink_inode_operations;
		} else {
			inode->i_op = &vsmfs_fast_symlink_inode_operations;
			inode->i_link = VSMFS_I(inode)->i_inline;
		}
		inode_nohighmem(inode);
	} else {
		inode->i_op = &vsmfs_special_inode_operations;
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

/* An in-core inode, found as @how says (enum vsmfs_iget_mode). */
static struct inode *__vsmfs_iget(struct super_block *sb, u64 ino, enum vsmfs_iget_mode how)
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
	memset(vi->i_inline, 0, sizeof(vi->i_inline));
	why = vsmfs_dinode_check(di);
	if (why) {
		vsmfs_fs_error(sb, ino, "%s (mode 0%o, size %lld)", why, inode->i_mode,
			       inode->i_size);
		goto bad;
	}
	if (vsmfs_inline_symlink(inode)) {
		memcpy(vi->i_inline, di->i_inline, inode->i_size);
		memset(vi->i_index, 0, sizeof(vi->i_index));
	} else {
		for (i = 0; i < VSMFS_NDIRECT; i++)
			vi->i_index[i] = le64_to_cpu(di->i_direct[i]);
		vi->i_index[VSMFS_NDIRECT] = le64_to_cpu(di->i_ind);
		vi->i_index[VSMFS_NDIRECT + 1] = le64_to_cpu(di->i_dind);
	}
	vsmfs_set_ops(inode);
	vsmfs_set_inode_flags(inode);
	unlock_new_inode(inode);
	return inode;
bad:
	iget_failed(inode);
	return ERR_PTR(ret);
}

/* The on-media form of an in-core inode. */
static void vsmfs_dinode_fill(struct inode *inode, struct vsmfs_dinode *di)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	int i;

	memset(di, 0, sizeof(*di));
	di->i_mode = cpu_to_le16(inode->i_mode);
	di->i_nlink = cpu_to_le32(inode->i_nlink);
	di->i_uid = cpu_to_le32(i_uid_read(inode));
	di->i_gid = cpu_to_le32(i_gid_read(inode));
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
	if (S_ISDIR(inode->i_mode))
		di->i_parent = cpu_to_le64(vi->i_parent);
	if (vsmfs_inline_symlink(inode)) {
		memcpy(di->i_inline, vi->i_inline, min_t(u64, inode->i_size, VSMFS_INLINE_LEN));
	} else {
		for (i = 0; i < VSMFS_NDIRECT; i++)
			di->i_direct[i] = cpu_to_le64(vi->i_index[i]);
		di->i_ind = cpu_to_le64(vi->i_index[VSMFS_NDIRECT]);
		di->i_dind = cpu_to_le64(vi->i_index[VSMFS_NDIRECT + 1]);
	}
}

/**
 * vsmfs_write_inode_t() - store an in-core inode in its on-media slot
 * @t: running transaction
 * @inode: the inode
 *
 * Only the span of 8-byte words that differ from the slot is saved for
 * an abort, stored, and compared again when the handle ends (a write
 * changes the size, block count and times: a few words of the 32).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_write_inode_t(struct vsmfs_trans *t, struct inode *inode)
{
	/* Filled whole by vsmfs_dinode_fill(): not zeroed at entry as well. */
	struct vsmfs_dinode nd __uninitialized;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	unsigned int first = 0, end = sizeof(nd) / 8;
	const u64 *src = (const u64 *)&nd;
	u64 *dst, slot;
	int ret;

	ret = vsmfs_dinode_get(t->t_sbi, inode->i_ino, &mb, &di, &slot);
	if (ret)
		return ret;
	vsmfs_dinode_fill(inode, &nd);
	dst = (u64 *)di;
	while (first < end && src[first] == dst[first])
		first++;
	while (end > first && src[end - 1] == dst[end - 1])
		end--;
	/* As the slot was: nothing for the transaction to carry. */
	if (first < end) {
		ret = vsmfs_trans_get_write_access_range(t, mb,
							 (u8 *)(dst + first) - mb->m_data,
							 (end - first) * 8);
		if (ret)
			return ret;
		memcpy(dst + first, src + first, (end - first) * 8);
		set_bit(slot % VSMFS_INODES_PER_BLOCK, &mb->m_dirty_slots);
		vsmfs_trans_dirty(t, mb);
	}
	vsmfs_trans_note_inode(t, inode);
	vsmfs_aggr_written(inode);
	return 0;
}

/**
 * vsmfs_shandle_inode() - add an inode's slot to a shared handle
 * @h: a shared handle that has changed nothing yet
 * @inode: the inode, locked by the caller (i_rwsem)
 * @mbp: set to the slot's inode-table block
 * @dip: set to the slot
 *
 * The slot of an inode is changed by a shared handle only under the
 * inode's lock, and by a handle of the other kind (or moved by inode
 * aggregation) only while no shared handle runs: the slot found here, and
 * the words vsmfs_shandle_times() stores in it, are @h's alone until it
 * ends. Its block joins the running transaction now, so that what
 * follows cannot fail.
 *
 * Return: 0, or a negative errno (nothing changed).
 */
int vsmfs_shandle_inode(struct vsmfs_shandle *h, struct inode *inode,
			struct vsmfs_mblk **mbp, struct vsmfs_dinode **dip)
{
	u64 slot;
	int ret;

	/* A block read for the first time is allocated GFP_NOFS (mcache.c). */
	ret = vsmfs_dinode_get(h->h_sbi, inode->i_ino, mbp, dip, &slot);
	return ret ?: vsmfs_shandle_dirty(h, *mbp);
}

/* Note word @off (a byte offset in the slot @di of @mb) as changed. */
static void vsmfs_slot_word_changed(struct vsmfs_mblk *mb, struct vsmfs_dinode *di,
				    size_t off)
{
	vsmfs_note_word_shared(mb, ((u8 *)di - mb->m_data + off) / 8);
}

/**
 * vsmfs_shandle_times() - set an inode's modification and change times in
 *	a shared handle
 * @inode: the inode, still locked by the caller, in a shared handle to
 *	which vsmfs_shandle_inode() added @mb
 * @mb: the slot's block
 * @di: the slot
 * @now: the time, which becomes both
 *
 * Changes only the words of the two times in the slot (a nanosecond
 * field shares its word with another time's, which stays as the slot has
 * it), with their bits set in m_cmask by atomic operations: other shared
 * handles change other slots of the block meanwhile. Stores nothing to
 * PM: the commit that takes @h writes the slot. The caller notes the
 * inode in @h (vsmfs_shandle_note_inode()) as for any change.
 */
void vsmfs_shandle_times(struct inode *inode, struct vsmfs_mblk *mb, struct vsmfs_dinode *di,
			 struct timespec64 now)
{
	inode->i_mtime = now;
	inode->i_ctime = now;
	di->i_mtime = cpu_to_le64(now.tv_sec);
	di->i_ctime = cpu_to_le64(now.tv_sec);
	di->i_mtime_ns = cpu_to_le32(now.tv_nsec);
	di->i_ctime_ns = cpu_to_le32(now.tv_nsec);
	vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_mtime));
	vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_ctime));
	vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_mtime_ns));
	vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_ctime_ns));
	set_bit(((u8 *)di - mb->m_data) / VSMFS_INODE_SIZE, &mb->m_dirty_slots);
}

/**
 * vsmfs_shandle_size() - set an inode's size in a shared handle
 * @inode: the inode, still locked by the caller, in a shared handle to
 *	which vsmfs_shandle_inode() added @mb
 * @mb: the slot's block
 * @di: the slot
 * @size: the new size
 *
 * As vsmfs_shandle_times(), for the size word: a write that grows a file
 * within its last page changes no other word of the slot but the times.
 */
void vsmfs_shandle_size(struct inode *inode, struct vsmfs_mblk *mb, struct vsmfs_dinode *di,
			loff_t size)
{
	i_size_write(inode, size);
	di->i_size = cpu_to_le64(size);
	vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_size));
	set_bit(((u8 *)di - mb->m_data) / VSMFS_INODE_SIZE, &mb->m_dirty_slots);
}

/**
 * vsmfs_inode_get_write_access() - prepare to write an inode in a transaction
 * @t: running transaction
 * @inode: the inode
 *
 * After this, vsmfs_write_inode_t() of @inode in @t cannot fail: for a
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

	ret = vsmfs_dinode_get(t->t_sbi, inode->i_ino, &mb, &di, &slot);
	return ret ?: vsmfs_trans_get_write_access_range(t, mb, (u8 *)di - mb->m_data,
							  sizeof(*di));
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
	memset(vi->i_index, 0, sizeof(vi->i_index));
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
	ret = vsmfs_init_acl_t(t, inode, dir);
	if (!ret)
		ret = vsmfs_init_security_t(t, inode, dir, qstr);
	if (!ret)
		ret = vsmfs_write_inode_t(t, inode);
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
 * The DRAM copy of index block @blk, found at level @d of @vi's index: the
 * one a lookup at that level found last if it is @blk's (a copy is the only
 * one of its block and lives until unmount: what vsmfs_mblk_get() would
 * return), else vsmfs_mblk_get()'s, kept for the next lookup. Lookups under
 * i_idx_sem shared may race to keep theirs; any copy kept is checked.
 */
static struct vsmfs_mblk *vsmfs_idx_mblk(struct vsmfs_sb_info *sbi,
					 struct vsmfs_inode_info *vi, int d, u64 blk)
{
	struct vsmfs_mblk *mb = READ_ONCE(vi->i_idx_mb[d]);

	if (mb && mb->m_blk == blk)
		return mb;
	mb = vsmfs_mblk_get(sbi, blk);
	if (!IS_ERR(mb))
		WRITE_ONCE(vi->i_idx_mb[d], mb);
	return mb;
}

/*
 * Walk the index to @key. Returns a pointer to the entry in DRAM (the
 * inode's own array or an index block's DRAM copy) and the block holding
 * it, allocating index blocks on the way when @t is given.
 */
static __le64 *vsmfs_idx_slot(struct vsmfs_trans *t, struct inode *inode, u64 key,
			      struct vsmfs_mblk **mbp, int *err)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 path[2], *root;
	int depth, d;
	struct vsmfs_mblk *mb = NULL;
	__le64 *slot = NULL;

	*err = 0;
	if (key < VSMFS_NDIRECT)
		return NULL;	/* caller uses vi->i_index directly */
	key -= VSMFS_NDIRECT;
	if (key < VSMFS_IND_ENTRIES) {
		depth = 1;
		root = &vi->i_index[VSMFS_NDIRECT];
		path[0] = key;
	} else {
		key -= VSMFS_IND_ENTRIES;
		if (key >= (u64)VSMFS_IND_ENTRIES * VSMFS_IND_ENTRIES) {
			*err = -EFBIG;
			return NULL;
		}
		depth = 2;
		root = &vi->i_index[VSMFS_NDIRECT + 1];
		path[0] = key / VSMFS_IND_ENTRIES;
		path[1] = key % VSMFS_IND_ENTRIES;
	}
	for (d = 0; d < depth; d++) {
		u64 lpn = slot ? le64_to_cpu(*slot) : *root;

		if (!lpn) {
			if (!t)
				return NULL;
			*err = vsmfs_alloc_pages(t, 1, false, &lpn);
			if (*err)
				return NULL;
			mb = vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, lpn));
			*err = PTR_ERR_OR_ZERO(mb);
			if (!*err)
				*err = vsmfs_trans_get_write_access(t, mb);
			if (!*err && slot) {
				unsigned int at = (u8 *)slot - (*mbp)->m_data;

				*err = vsmfs_trans_get_write_access_range(t, *mbp, at,
									  sizeof(*slot));
			}
			if (*err) {
				/* Not linked anywhere: give the page back, or fail. */
				vsmfs_trans_fail(t, vsmfs_free_pages(t, lpn, 1));
				return NULL;
			}
			vi->i_pages++;
			memset(mb->m_data, 0, VSMFS_BLOCK_SIZE);
			vsmfs_trans_dirty(t, mb);
			if (slot) {
				*slot = cpu_to_le64(lpn);
				vsmfs_trans_dirty(t, *mbp);
			} else {
				*root = lpn;
			}
		} else {
			u64 blk = vsmfs_lpn_blk(sbi, lpn & VSMFS_IDX_LPN_MASK);

			if (!blk)
				vsmfs_fs_error(sbi->s_sb, inode->i_ino,
					       "index block at logical page %llu has no frame",
					       lpn & VSMFS_IDX_LPN_MASK);
			mb = blk ? vsmfs_idx_mblk(sbi, vi, d, blk) : ERR_PTR(-EFSCORRUPTED);
			if (IS_ERR(mb)) {
				*err = PTR_ERR(mb);
				return NULL;
			}
		}
		slot = (__le64 *)mb->m_data + path[d];
		*mbp = mb;
	}
	return slot;
}

/* Whether the last-level index block holding double-indirect @key exists. */
static bool vsmfs_idx_block_exists(struct inode *inode, u64 key)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 top = VSMFS_I(inode)->i_index[VSMFS_NDIRECT + 1];
	struct vsmfs_mblk *mb;

	if (!top)
		return false;
	key -= VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
	top = vsmfs_lpn_blk(sbi, top & VSMFS_IDX_LPN_MASK);
	if (!top)
		return false;
	mb = vsmfs_mblk_get(sbi, top);
	if (IS_ERR(mb))
		return false;
	return ((__le64 *)mb->m_data)[key / VSMFS_IND_ENTRIES] != 0;
}

/**
 * vsmfs_idx_lookup() - index entry of a key
 * @inode: the inode
 * @key: file piece (regular files) or block (directories, symlinks)
 *
 * Return: the entry, 0 for a hole.
 */
u64 vsmfs_idx_lookup(struct inode *inode, u64 key)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_mblk *mb;
	u64 e, lpn, cnt;
	__le64 *slot;
	int err;

	if (key < VSMFS_NDIRECT) {
		e = VSMFS_I(inode)->i_index[key];
	} else {
		slot = vsmfs_idx_slot(NULL, inode, key, &mb, &err);
		e = slot ? le64_to_cpu(*slot) : 0;
	}
	/*
	 * An entry naming pages outside the mapping layer, or a run crossing
	 * a VSP, is damage, never an address to use: it reads as a hole.
	 */
	lpn = vsmfs_idx_lpn(e);
	cnt = S_ISREG(inode->i_mode) ? vsmfs_idx_count(e) : 1;
	if (e && (!lpn || lpn % VSMFS_VSP_PAGES + cnt > VSMFS_VSP_PAGES ||
		  lpn + max_t(u64, cnt, 1) > sbi->s_layout.lpages)) {
		vsmfs_fs_error(inode->i_sb, inode->i_ino, "bad index entry %llx at key %llu",
			       e, key);
		return 0;
	}
	return e;
}

/**
 * vsmfs_idx_set() - set the index entry of a key
 * @t: running transaction
 * @inode: the inode; the caller writes it afterwards
 * @key: the key
 * @val: the entry
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_idx_set(struct vsmfs_trans *t, struct inode *inode, u64 key, u64 val)
{
	struct vsmfs_mblk *mb;
	__le64 *slot;
	int err;

	if (key < VSMFS_NDIRECT) {
		VSMFS_I(inode)->i_index[key] = val;
		return 0;
	}
	slot = vsmfs_idx_slot(t, inode, key, &mb, &err);
	if (!slot)
		return err ? err : -EIO;
	err = vsmfs_trans_get_write_access_range(t, mb, (u8 *)slot - mb->m_data, sizeof(*slot));
	if (err)
		return err;
	*slot = cpu_to_le64(val);
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/**
 * vsmfs_idx_next() - the first key at or after @key that has an entry
 * @inode: the inode
 * @key: where to start
 *
 * Index blocks that do not exist are skipped whole, so finding the next
 * piece of a sparse file does not look at every key.
 *
 * Return: the key, or VSMFS_MAX_KEY if there is none.
 */
u64 vsmfs_idx_next(struct inode *inode, u64 key)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 span;

	for (; key < VSMFS_NDIRECT; key++)
		if (vi->i_index[key])
			return key;
	while (key < VSMFS_MAX_KEY) {
		if (key < VSMFS_NDIRECT + VSMFS_IND_ENTRIES) {
			if (!vi->i_index[VSMFS_NDIRECT]) {
				key = VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
				continue;
			}
			span = 1;
		} else {
			if (!vi->i_index[VSMFS_NDIRECT + 1])
				break;
			span = VSMFS_IND_ENTRIES;
		}
		if (vsmfs_idx_lookup(inode, key))
			return key;
		/* A missing second-level block: skip its whole span. */
		if (span > 1 && !vsmfs_idx_block_exists(inode, key))
			key = round_up(key - VSMFS_NDIRECT - VSMFS_IND_ENTRIES + 1, span) +
			      VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
		else
			key++;
	}
	return VSMFS_MAX_KEY;
}

/*
 * Zero @len bytes at @off in the run at logical page @lpn, mapped at @p,
 * but for its pages without frames (zero already, and mapped read-only).
 */
static void vsmfs_zero_holey(struct vsmfs_sb_info *sbi, u64 lpn, char __pm *p, u64 off,
			     u64 len)
{
	u64 end = off + len, n;

	if (!sbi->s_noframe) {
		vsmfs_zero_pm(p + off, len);
		return;
	}
	while (off < end) {
		n = min(end, round_down(off, VSMFS_BLOCK_SIZE) + VSMFS_BLOCK_SIZE) - off;
		if (!vsmfs_lpn_hole(sbi, lpn + (off >> VSMFS_BLOCK_SHIFT)))
			vsmfs_zero_pm(p + off, n);
		off += n;
	}
}

/**
 * vsmfs_zero_mapped() - zero the allocated bytes of a file range
 * @inode: a regular file
 * @from: first byte
 * @to: end of the range
 *
 * Holes in the range are left alone; they read as zeros already. The
 * zeros are written back to PM and durable after the next fence.
 *
 * Context: the caller holds i_idx_sem.
 */
void vsmfs_zero_mapped(struct inode *inode, loff_t from, loff_t to)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);

	while (from < to) {
		u64 key = from >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 e = vsmfs_idx_lookup(inode, key);
		u64 run_end = pstart + (vsmfs_idx_count(e) << VSMFS_BLOCK_SHIFT);
		u64 end = min_t(u64, to, pstart + (1ULL << VSMFS_VSP_SHIFT));
		char __pm *p;

		if (e && (u64)from < run_end) {
			end = min(end, run_end);
			p = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e));
			if (p)
				vsmfs_zero_holey(sbi, vsmfs_idx_lpn(e), p, from - pstart,
						 end - from);
		}
		from = end;
	}
}

/**
 * vsmfs_tail_pages() - pages of a run's superpage after the run
 * @e: index entry of the run
 *
 * Return: how many logical pages follow the run in its VSP.
 */
u64 vsmfs_tail_pages(u64 e)
{
	u64 end = vsmfs_idx_lpn(e) + vsmfs_idx_count(e);

	return round_up(end, VSMFS_VSP_PAGES) - end;
}

/**
 * vsmfs_tail_release_t() - give back the reserved tail of a file's last VSP
 * @t: running transaction
 * @inode: a regular file; written by the caller afterwards
 * @freed: pages given back
 *
 * A growing large file owns the rest of the VSP its last run starts in,
 * so appends extend the run in place (ZFDM). The reservation is recorded
 * by i_tail_key and released here: at the last close of the file, before
 * its runs are cut or replaced, and when it is evicted.
 *
 * Context: i_idx_sem held for writing.
 * Return: 0 or a negative errno.
 */
int vsmfs_tail_release_t(struct vsmfs_trans *t, struct inode *inode, u64 *freed)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 e, n;
	int ret;

	*freed = 0;
	if (!vi->i_tail_key)
		return 0;
	e = vsmfs_idx_lookup(inode, vi->i_tail_key - 1);
	n = e ? vsmfs_tail_pages(e) : 0;
	if (n) {
		ret = vsmfs_free_data_pages(t, vsmfs_idx_lpn(e) + vsmfs_idx_count(e), n);
		if (ret)
			return ret;
		vi->i_pages -= vsmfs_frames_in(t->t_sbi, vsmfs_idx_lpn(e) + vsmfs_idx_count(e), n);
		inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	}
	vi->i_tail_key = 0;
	*freed = n;
	return 0;
}

/*
 * Room a part of a truncation leaves in its transaction for the caller:
 * the inode's block, the i-number bitmap block, an extended attribute
 * block and its bitmap block (eviction, or an ACL set with the size),
 * and the bitmap block of a released tail.
 */
#define VSMFS_TRUNC_RESERVE	5
/* Blocks freeing one run dirties: its bitmap block and its index block. */
#define VSMFS_TRUNC_STEP	2

/* Whether @t has room for one more step of a truncation. */
static bool vsmfs_trunc_room(struct vsmfs_trans *t, bool *more)
{
	if (!more || vsmfs_trans_room(t) >= VSMFS_TRUNC_RESERVE + VSMFS_TRUNC_STEP)
		return true;
	*more = true;
	return false;
}

/*
 * The last key at or before @key that has an entry, or VSMFS_MAX_KEY if
 * there is none; index blocks that do not exist are skipped whole.
 */
static u64 vsmfs_idx_prev(struct inode *inode, u64 key)
{
	const u64 dind = VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);

	for (;;) {
		if (key >= dind) {
			if (!vi->i_index[VSMFS_NDIRECT + 1]) {
				key = dind - 1;
				continue;
			}
			if (vsmfs_idx_lookup(inode, key))
				return key;
			/* A missing second-level block: skip its whole span. */
			if (!vsmfs_idx_block_exists(inode, key))
				key = round_down(key - dind, VSMFS_IND_ENTRIES) + dind;
			key--;
		} else if (key >= VSMFS_NDIRECT) {
			if (!vi->i_index[VSMFS_NDIRECT]) {
				key = VSMFS_NDIRECT - 1;
				continue;
			}
			if (vsmfs_idx_lookup(inode, key))
				return key;
			key--;
		} else {
			if (vsmfs_idx_lookup(inode, key))
				return key;
			if (!key)
				return VSMFS_MAX_KEY;
			key--;
		}
	}
}

/*
 * Free the index blocks of an inode whose entries are all gone, as many
 * as @t has room for (all if @more is NULL). A block below the double
 * indirect one leaves its slot there before it is freed, so every part
 * commits an index that names only blocks still owned.
 */
static int vsmfs_free_index(struct vsmfs_trans *t, struct inode *inode, bool *more)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 top = vi->i_index[VSMFS_NDIRECT + 1];
	struct vsmfs_mblk *mb;
	int i, ret;

	if (top) {
		mb = vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, top));
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		for (i = VSMFS_IND_ENTRIES - 1; i >= 0; i--) {
			__le64 *slot = (__le64 *)mb->m_data + i;
			u64 lpn = le64_to_cpu(*slot);

			if (!lpn)
				continue;
			if (!vsmfs_trunc_room(t, more))
				return 0;
			ret = vsmfs_trans_get_write_access_range(t, mb, i * sizeof(*slot),
								 sizeof(*slot));
			if (ret)
				return ret;
			*slot = 0;
			vsmfs_trans_dirty(t, mb);
			vi->i_pages--;
			ret = vsmfs_free_pages(t, lpn, 1);
			if (ret)
				return ret;
		}
		if (!vsmfs_trunc_room(t, more))
			return 0;
		vi->i_index[VSMFS_NDIRECT + 1] = 0;
		vi->i_pages--;
		ret = vsmfs_free_pages(t, top, 1);
		if (ret)
			return ret;
	}
	top = vi->i_index[VSMFS_NDIRECT];
	if (top) {
		if (!vsmfs_trunc_room(t, more))
			return 0;
		vi->i_index[VSMFS_NDIRECT] = 0;
		vi->i_pages--;
		ret = vsmfs_free_pages(t, top, 1);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * vsmfs_truncate_t() - change the size of an inode, freeing what is past it
 * @t: running transaction
 * @inode: the inode; written by the caller afterwards
 * @size: new size
 * @more: set if the truncation needs more transactions; NULL if the caller
 *	knows that what it frees is small (a long symlink's block)
 *
 * Regular files keep the part of the last run up to the new end. Growing,
 * the rest of the page holding the old end is zeroed, so bytes past the
 * end (which a shared mapping of the last page can change) read as zeros
 * in the grown file; they are past the end until the commit, so a crash
 * before it shows nothing of that, and pages allocated past the old end
 * (fallocate with FALLOC_FL_KEEP_SIZE) stay, as ext4 and XFS keep them.
 * Shrinking, the bytes past the new end are inside the file until the
 * commit: the caller zeroes them after it, with vsmfs_zero_mapped(); pages
 * allocated past the old end are freed too when they lie past the new one,
 * and so are they by a truncation to the size the file has.
 *
 * A transaction holds only so many blocks (vsmfs_trans_room()): the runs
 * are freed from the last one down, as many as fit, then the index
 * blocks. When more is left, *@more is set and the caller commits, begins
 * a new transaction and calls again with the same @size. The first part
 * already commits the new size, with VSMFS_IFLAG_TRUNCATING set on the
 * inode until the last part: a crash between parts leaves the file at its
 * new size, as a truncation in one transaction would, and the next
 * read-write mount frees the pages past it (vsmfs_orphan_cleanup()), as
 * it frees an unlinked inode left in use with no links.
 *
 * Context: the caller holds i_idx_sem for writing, and for regular files
 * has removed user mappings past @size.
 * Return: 0 or a negative errno.
 */
int vsmfs_truncate_t(struct vsmfs_trans *t, struct inode *inode, loff_t size, bool *more)
{
	bool reg = S_ISREG(inode->i_mode);
	u64 keep_pages = DIV_ROUND_UP((u64)size, VSMFS_BLOCK_SIZE);
	u64 key, first, freed;
	int ret;

	if (more)
		*more = false;
	if (reg) {
		ret = vsmfs_tail_release_t(t, inode, &freed);
		if (ret)
			return ret;

		if (size > inode->i_size)
			vsmfs_zero_mapped(inode, inode->i_size,
					  round_up(inode->i_size, VSMFS_BLOCK_SIZE));
	}
	/*
	 * Growing frees nothing: pages past the old end were reserved by
	 * fallocate, and keep their promise past the new one too (they hold
	 * zeros). Not while a truncation is left to finish, whose pages past
	 * the end may hold old data.
	 */
	if (reg && size > inode->i_size &&
	    !(VSMFS_I(inode)->i_flags & VSMFS_IFLAG_TRUNCATING)) {
		i_size_write(inode, size);
		goto out;
	}
	/* Runs past the new end, wholly or in part, from the last one. */
	first = reg ? keep_pages / VSMFS_VSP_PAGES : keep_pages;
	for (key = vsmfs_idx_prev(inode, VSMFS_MAX_KEY - 1);
	     key < VSMFS_MAX_KEY && key >= first;
	     key = key ? vsmfs_idx_prev(inode, key - 1) : VSMFS_MAX_KEY) {
		u64 e = vsmfs_idx_lookup(inode, key), keep, cnt;

		cnt = reg ? vsmfs_idx_count(e) : 1;
		keep = reg && keep_pages > key * VSMFS_VSP_PAGES ?
		       keep_pages - key * VSMFS_VSP_PAGES : 0;
		if (keep >= cnt)
			continue;
		if (!vsmfs_trunc_room(t, more)) {
			/*
			 * The rest is for the next parts. The file has its
			 * new size from this part on; the pages past it that
			 * it still owns are marked for the next mount to free
			 * should a crash stop the truncation here.
			 */
			VSMFS_I(inode)->i_flags |= VSMFS_IFLAG_TRUNCATING;
			i_size_write(inode, size);
			goto out;
		}
		/* A directory's pages are metadata, a regular file's data. */
		ret = reg ? vsmfs_free_data_pages(t, vsmfs_idx_lpn(e) + keep, cnt - keep) :
			    vsmfs_free_pages(t, vsmfs_idx_lpn(e) + keep, cnt - keep);
		if (ret)
			return ret;
		VSMFS_I(inode)->i_pages -= vsmfs_frames_in(t->t_sbi, vsmfs_idx_lpn(e) + keep,
							   cnt - keep);
		ret = vsmfs_idx_set(t, inode, key,
				    keep ? vsmfs_idx_make(vsmfs_idx_lpn(e), keep) : 0);
		if (ret)
			return ret;
	}
	if (!size) {
		ret = vsmfs_free_index(t, inode, more);
		if (ret)
			return ret;
		if (more && *more) {
			VSMFS_I(inode)->i_flags |= VSMFS_IFLAG_TRUNCATING;
			i_size_write(inode, size);
			goto out;
		}
	}
	VSMFS_I(inode)->i_flags &= ~VSMFS_IFLAG_TRUNCATING;
	i_size_write(inode, size);
out:
	inode->i_blocks = VSMFS_I(inode)->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return 0;
}

/* Blocks freeing an inode that holds nothing dirties: its slot's, the bitmap's. */
#define VSMFS_EVICT_CREDITS	2

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
 * Free an inode without links that holds nothing (vsmfs_holds_nothing())
 * in a shared metadata handle, beside creates and other such frees: its
 * slot cleared, then its i-number freed, the handle's last change
 * (vsmfs_free_ino()). Return: 0 or a negative errno, -EAGAIN (nothing
 * changed) if it must be done in a handle under s_trans_mutex.
 */
static int vsmfs_evict_shared(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_trans t;
	int ret;

	if (!vsmfs_holds_nothing(inode) ||
	    vsmfs_trans_begin_shared(sbi, &t, VSMFS_EVICT_CREDITS))
		return -EAGAIN;
	vsmfs_trans_track(&t, inode, false);
	/* An abort reloads the mode with the rest from the slot. */
	inode->i_mode = 0;
	ret = vsmfs_write_inode_t(&t, inode);
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
		ret = vsmfs_truncate_t(&t, inode, 0, &more);
	/*
	 * A large inode is emptied in several transactions: each commits an
	 * orphan that names what it still holds, which the next mount frees
	 * if this one stops.
	 */
	while (!ret && more) {
		ret = vsmfs_write_inode_t(&t, inode);
		if (ret)
			break;		/* this part is aborted below */
		ret = vsmfs_trans_commit(&t);
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_TRUNC_STOP,
				 "truncation stopped between two parts");
		vsmfs_trans_begin(sbi, &t);
		vsmfs_trans_track(&t, inode, false);
		if (!ret)
			ret = vsmfs_truncate_t(&t, inode, 0, &more);
	}
	if (!ret)
		ret = vsmfs_xattr_drop_t(&t, inode);
	if (!ret)
		ret = vsmfs_free_ino(&t, inode->i_ino);
	if (!ret) {
		inode->i_mode = 0;
		ret = vsmfs_write_inode_t(&t, inode);
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
		ret = vsmfs_tail_release_t(&t, inode, &freed);
		if (!ret)
			ret = vsmfs_write_inode_t(&t, inode);
		ret = vsmfs_trans_end(&t, ret);
		if (ret)
			vsmfs_err(inode->i_sb, "releasing the tail of inode %lu failed: %d",
				  inode->i_ino, ret);
	}
	vsmfs_dir_index_free(inode);
	clear_inode(inode);
}

/*
 * One part of a truncation of @inode to @size in a transaction of its own
 * (vsmfs_truncate_t()); *@more is set if more parts are left. The caller
 * holds what vsmfs_truncate_t() asks for.
 */
static int vsmfs_truncate_part(struct inode *inode, loff_t size, bool *more)
{
	struct vsmfs_trans t;
	int ret;

	vsmfs_trans_begin(VSMFS_SB(inode->i_sb), &t);
	vsmfs_trans_track(&t, inode, false);
	ret = vsmfs_truncate_t(&t, inode, size, more);
	if (!ret)
		ret = vsmfs_write_inode_t(&t, inode);
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

/* Change attributes, including the size (vsmfs_setattr()). */
static int vsmfs_do_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
			    struct iattr *iattr)
{
	struct inode *inode = d_inode(dentry);
	bool resize = (iattr->ia_valid & ATTR_SIZE) && iattr->ia_size != inode->i_size;
	bool shrink = resize && iattr->ia_size < inode->i_size;
	struct posix_acl *acl = NULL;
	struct vsmfs_trans t;
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
	 * and XFS do: as any truncation (vsmfs_truncate_t()).
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
	vsmfs_trans_begin(VSMFS_SB(inode->i_sb), &t);
	vsmfs_trans_track(&t, inode, false);
	if (trunc) {
		ret = vsmfs_truncate_t(&t, inode, iattr->ia_size, &more);
		if (!ret && resize) {
			inode->i_mtime = current_time(inode);
			inode->i_ctime = inode->i_mtime;
		}
	}
	/* On error it changes nothing: then neither does the mode. */
	if (!ret && acl)
		ret = vsmfs_set_acl_t(&t, inode, acl, ACL_TYPE_ACCESS);
	if (!ret)
		setattr_copy(mnt_userns, inode, iattr);
	if (!ret)
		ret = vsmfs_write_inode_t(&t, inode);
	if (ret) {
		/* Nothing changes, the cached ACL included. */
		vsmfs_xattr_abort(&t, inode);
		if (acl)
			forget_cached_acl(inode, ACL_TYPE_ACCESS);
	} else {
		/*
		 * Bytes past the new end in its page are zeroed in place
		 * below, once the new size is durable: the handle commits.
		 */
		if (shrink && (iattr->ia_size & (VSMFS_BLOCK_SIZE - 1)))
			t.t_sync = true;
		ret = vsmfs_trans_commit(&t);
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
	 * (vsmfs_truncate_t(), the write and fallocate paths).
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
	ret = vsmfs_write_inode_t(&t, inode);
	return vsmfs_trans_commit(&t) ?: ret;
}

/**
 * vsmfs_update_time() - set the times the VFS updates on its own
 * @inode: the inode, its lock held shared or not at all
 * @now: the time
 * @flags: which times (S_ATIME, S_MTIME, S_CTIME, S_VERSION)
 *
 * An access time (a read, a directory listing, an mmap) is set in a
 * shared handle beside the writers, storing the two words of the slot it
 * changes; the commit that takes the handle writes them, as for any
 * change. Without this the VFS marks the inode dirty and writeback
 * stores the slot in a handle of the other kind, which waits for every
 * shared handle to end. A shared handle changes a slot only under the
 * inode's lock: taken shared here by trylock, as the caller may hold it
 * shared already (a listing) or hold mmap_lock, which comes after it.
 * Readers holding it shared meet only each other in these two words,
 * and i_lock keeps the in-core time and the slot's in step. Anything
 * else, or a lock or handle not had at once, takes the generic way.
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_update_time(struct inode *inode, struct timespec64 *now, int flags)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_shandle h;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	int ret;

	if (flags != S_ATIME || !inode->i_nlink || is_bad_inode(inode) ||
	    !inode_trylock_shared(inode))
		return generic_update_time(inode, now, flags);
	if (vsmfs_shandle_begin(sbi, &h, 1, 0)) {
		inode_unlock_shared(inode);
		return generic_update_time(inode, now, flags);
	}
	ret = vsmfs_shandle_inode(&h, inode, &mb, &di);
	if (!ret) {
		spin_lock(&inode->i_lock);
		inode->i_atime = *now;
		di->i_atime = cpu_to_le64(now->tv_sec);
		di->i_atime_ns = cpu_to_le32(now->tv_nsec);
		spin_unlock(&inode->i_lock);
		vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_atime));
		vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_atime_ns));
		set_bit(((u8 *)di - mb->m_data) / VSMFS_INODE_SIZE, &mb->m_dirty_slots);
		vsmfs_shandle_note_inode(&h, inode);
	}
	vsmfs_shandle_end(&h);
	inode_unlock_shared(inode);
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
			inode = __vsmfs_iget(sb, ino, VSMFS_IGET_LINKED);
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
