/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs inode.h
 */
#ifndef _VSMFS_INODE_H
#define _VSMFS_INODE_H

#include "vsmfs.h"
#include "mcache.h"
#include "trans.h"

/* inode.c */
/* What __vsmfs_iget() accepts beyond an inode in use with links. */
enum vsmfs_iget_mode {
	VSMFS_IGET_LINKED,	/* only that: anything else is corruption */
	VSMFS_IGET_ORPHAN,	/* also one with no links (orphan cleanup) */
	VSMFS_IGET_HANDLE,	/* a file handle's: a free inode is -ESTALE */
	VSMFS_IGET_IF_USED,	/* one looked up with no lock: gone is -ENOENT */
};

struct inode *__vsmfs_iget(struct super_block *sb, u64 ino, enum vsmfs_iget_mode how);
struct inode *vsmfs_iget(struct super_block *sb, u64 ino);
struct inode *vsmfs_iget_handle(struct super_block *sb, u64 ino, u32 gen);
struct inode *vsmfs_iget_if_used(struct super_block *sb, u64 ino);
/* fcommit.c */
int __vsmfs_sync_inode(struct inode *inode, unsigned int cause);
void vsmfs_fc_evict(struct inode *inode);

int vsmfs_inode_slot_find(struct inode *inode, u64 gen, struct vsmfs_mblk **mbp,
			  struct vsmfs_dinode **dip, u64 *slotp);

/* Slot @slot in @mb, the DRAM copy of its inode-table block. */
static inline struct vsmfs_dinode *vsmfs_slot_in(struct vsmfs_mblk *mb, u64 slot)
{
	return (struct vsmfs_dinode *)(mb->m_data +
				       (slot % VSMFS_INODES_PER_BLOCK) * VSMFS_INODE_SIZE);
}

/**
 * vsmfs_inode_slot() - the slot of an inode in the DRAM copy of its block
 * @inode: the inode
 * @mbp: set to the inode-table block
 * @dip: set to the slot
 * @slotp: set to the slot's number
 *
 * The slot found last is taken without reading the inode map again if no
 * slots were exchanged since (@inode's i_slot_gen is s_slot_gen). Only
 * aggregation exchanges slots, in a handle of the other kind, which runs
 * alone and counts the exchange in s_slot_gen before it ends
 * (vsmfs_aggr_exchange()): no exchange runs while a caller finds or
 * takes the slot, and what a handle of the other kind stored is seen by
 * the handles after it. Callers beside each other store the same slot;
 * i_slot is stored before i_slot_gen, and read after it.
 *
 * Context: the caller keeps the slot where it is (a handle of either
 * kind, or vsmfs_trans_hold(): no handle of the other kind, which
 * aggregation moves slots in, runs beside it).
 * Return: 0 or a negative errno.
 */
static inline int vsmfs_inode_slot(struct inode *inode, struct vsmfs_mblk **mbp,
				   struct vsmfs_dinode **dip, u64 *slotp)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 gen = READ_ONCE(sbi->s_slot_gen), slot;
	struct vsmfs_mblk *mb;

	/* The generation before the slot: pairs with vsmfs_inode_slot_find(). */
	if (smp_load_acquire(&vi->i_slot_gen) != gen)
		return vsmfs_inode_slot_find(inode, gen, mbp, dip, slotp);
	slot = READ_ONCE(vi->i_slot);
	/* A block not cached yet: through the map, as the first time. */
	mb = vsmfs_mblk_fixed(sbi, sbi->s_layout.itable_start + slot / VSMFS_INODES_PER_BLOCK);
	if (!mb)
		return vsmfs_inode_slot_find(inode, gen, mbp, dip, slotp);
	*mbp = mb;
	*dip = vsmfs_slot_in(mb, slot);
	*slotp = slot;
	return 0;
}

/**
 * vsmfs_whandle_inode() - add an inode's slot to a shared handle
 * @h: a shared handle that has changed nothing yet
 * @inode: the inode, locked by the caller (i_rwsem)
 * @mbp: set to the slot's inode-table block
 * @dip: set to the slot
 *
 * The slot of an inode is changed by a shared handle only under the
 * inode's lock, and by a handle of the other kind (or moved by inode
 * aggregation) only while no shared handle runs: the slot found here, and
 * the words vsmfs_whandle_times() stores in it, are @h's alone until it
 * ends. Its block joins the running transaction now, so that what
 * follows cannot fail.
 *
 * Return: 0, or a negative errno (nothing changed).
 */
static inline int vsmfs_whandle_inode(struct vsmfs_whandle *h, struct inode *inode,
				      struct vsmfs_mblk **mbp, struct vsmfs_dinode **dip)
{
	u64 slot;
	int ret;

	/* A block read for the first time is allocated GFP_NOFS (mcache.c). */
	ret = vsmfs_inode_slot(inode, mbp, dip, &slot);
	return ret ?: vsmfs_whandle_dirty(h, *mbp);
}

/**
 * vsmfs_sync_inode() - make every change of an inode durable
 * @inode: the inode
 * @cause: VSMFS_COMMIT_*, for the counters
 *
 * Nothing to do for an inode whose last change is durable (the fsync of an
 * unchanged file), without a call; else __vsmfs_sync_inode().
 *
 * Return: 0 or a negative errno.
 */
static inline int vsmfs_sync_inode(struct inode *inode, unsigned int cause)
{
	return vsmfs_trans_synced(inode) ? 0 : __vsmfs_sync_inode(inode, cause);
}

/* Note word @off (a byte offset in the slot @di of @mb) as changed. */
static inline void vsmfs_slot_word_changed(struct vsmfs_mblk *mb, struct vsmfs_dinode *di,
					   size_t off)
{
	vsmfs_note_word_shared(mb, ((u8 *)di - mb->m_data + off) / 8);
}

/*
 * Store @v in the field at @f of slot @di (of @mb) in a shared handle if
 * it differs, noting its word: a fast record carries each word noted in
 * the transaction.
 */
static inline void vsmfs_slot_set64(struct vsmfs_mblk *mb, struct vsmfs_dinode *di, __le64 *f,
				    __le64 v)
{
	if (*f != v) {
		*f = v;
		vsmfs_slot_word_changed(mb, di, (u8 *)f - (u8 *)di);
	}
}

static inline void vsmfs_slot_set32(struct vsmfs_mblk *mb, struct vsmfs_dinode *di, __le32 *f,
				    __le32 v)
{
	if (*f != v) {
		*f = v;
		vsmfs_slot_word_changed(mb, di, (u8 *)f - (u8 *)di);
	}
}

/**
 * vsmfs_whandle_times() - set an inode's modification and change times in
 *	a shared handle
 * @inode: the inode, still locked by the caller, in a shared handle to
 *	which vsmfs_whandle_inode() added @mb
 * @mb: the slot's block
 * @di: the slot
 * @now: the time, which becomes both
 *
 * Changes only the words of the two times in the slot that differ (a
 * nanosecond field shares its word with another time's, which stays as
 * the slot has it), with their bits set in m_cmask by atomic operations:
 * other shared handles change other slots of the block meanwhile. Stores
 * nothing to PM: the commit that takes @h writes the slot. The caller
 * notes the inode in @h (vsmfs_whandle_note_inode()) as for any change.
 */
static inline void vsmfs_whandle_times(struct inode *inode, struct vsmfs_mblk *mb,
				       struct vsmfs_dinode *di, struct timespec64 now)
{
	inode->i_mtime = now;
	inode->i_ctime = now;
	/* The seconds seldom move: their words are mostly left unnoted. */
	vsmfs_slot_set64(mb, di, &di->i_mtime, cpu_to_le64(now.tv_sec));
	vsmfs_slot_set64(mb, di, &di->i_ctime, cpu_to_le64(now.tv_sec));
	vsmfs_slot_set32(mb, di, &di->i_mtime_ns, cpu_to_le32(now.tv_nsec));
	vsmfs_slot_set32(mb, di, &di->i_ctime_ns, cpu_to_le32(now.tv_nsec));
	vsmfs_slot_dirty(mb, ((u8 *)di - mb->m_data) / VSMFS_INODE_SIZE);
}

/**
 * vsmfs_whandle_size() - set an inode's size in a shared handle
 * @inode: the inode, still locked by the caller, in a shared handle to
 *	which vsmfs_whandle_inode() added @mb
 * @mb: the slot's block
 * @di: the slot
 * @size: the new size
 *
 * As vsmfs_whandle_times(), for the size word: a write that grows a file
 * within its last page changes no other word of the slot but the times.
 */
static inline void vsmfs_whandle_size(struct inode *inode, struct vsmfs_mblk *mb,
				      struct vsmfs_dinode *di, loff_t size)
{
	i_size_write(inode, size);
	di->i_size = cpu_to_le64(size);
	vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_size));
	vsmfs_slot_dirty(mb, ((u8 *)di - mb->m_data) / VSMFS_INODE_SIZE);
}

/**
 * vsmfs_whandle_direct() - set a direct index entry of a file in a shared
 *	handle
 * @inode: a regular file, still locked by the caller with its i_idx_sem
 *	held for writing, in a shared handle to which vsmfs_whandle_inode()
 *	added @mb
 * @mb: the slot's block
 * @di: the slot
 * @key: the piece, below VSMFS_NDIRECT
 * @e: its new entry
 * @tail_key: the file's tail key from now (1 + key of the run owning its
 *	VSP's tail, or 0)
 * @pages: the logical pages it owns from now
 *
 * As vsmfs_whandle_times(), for the entry's word and, those that change,
 * the words of the tail key and of the page count: an append that grows
 * a run changes no other word of the slot but the size and the times.
 * The page fault path reads the entry in core under i_idx_sem shared,
 * which the caller keeps out.
 */
static inline void vsmfs_whandle_direct(struct inode *inode, struct vsmfs_mblk *mb,
					struct vsmfs_dinode *di, unsigned int key, u64 e,
					u32 tail_key, u64 pages)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);

	vi->i_index[key] = e;
	vi->i_tail_key = tail_key;
	vi->i_pages = pages;
	inode->i_blocks = pages << (VSMFS_BLOCK_SHIFT - 9);
	di->i_direct[key] = cpu_to_le64(e);
	vsmfs_slot_word_changed(mb, di, offsetof(struct vsmfs_dinode, i_direct) + key * 8);
	vsmfs_slot_set32(mb, di, &di->i_tail_key, cpu_to_le32(tail_key));
	vsmfs_slot_set64(mb, di, &di->i_pages, cpu_to_le64(pages));
	vsmfs_slot_dirty(mb, ((u8 *)di - mb->m_data) / VSMFS_INODE_SIZE);
}

void vsmfs_set_ops(struct inode *inode);
void vsmfs_set_inode_flags(struct inode *inode);
void vsmfs_discard_new_inode(struct inode *inode);
int vsmfs_mark_inode_dirty(struct vsmfs_trans *t, struct inode *inode);
int vsmfs_inode_get_write_access(struct vsmfs_trans *t, struct inode *inode);
int vsmfs_set_size_times(struct inode *inode, loff_t size, struct timespec64 now);
void vsmfs_inode_reload(struct inode *inode);
int vsmfs_write_inode(struct inode *inode, struct writeback_control *wbc);
int vsmfs_update_time(struct inode *inode, struct timespec64 *now, int flags);

/* index.c */
u64 vsmfs_idx_lookup(struct inode *inode, u64 key);
u64 vsmfs_idx_next(struct inode *inode, u64 key);
u64 vsmfs_idx_prev(struct inode *inode, u64 key);
void vsmfs_zero_mapped(struct inode *inode, loff_t from, loff_t to);
void vsmfs_zero_past_end(struct inode *inode);
int vsmfs_idx_set(struct vsmfs_trans *t, struct inode *inode, u64 key, u64 val);
int vsmfs_truncate(struct vsmfs_trans *t, struct inode *inode, loff_t size, bool *more);
u64 vsmfs_tail_pages(u64 e);
int vsmfs_tail_release(struct vsmfs_trans *t, struct inode *inode, u64 *freed);

/* iops.c */
extern const struct inode_operations vsmfs_special_inode_operations;
extern const struct inode_operations vsmfs_symlink_inode_operations;
extern const struct inode_operations vsmfs_fast_symlink_inode_operations;
struct inode *vsmfs_new_inode(struct vsmfs_trans *t, struct inode *dir,
			      const struct qstr *qstr, umode_t mode, dev_t rdev);
void vsmfs_evict_inode(struct inode *inode);
int vsmfs_getattr(struct user_namespace *mnt_userns, const struct path *path,
		  struct kstat *stat, u32 request_mask, unsigned int query_flags);
int vsmfs_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
		  struct iattr *iattr);
int vsmfs_orphan_cleanup(struct super_block *sb);
int vsmfs_break_layouts(struct inode *inode);
int vsmfs_break_layouts_range(struct inode *inode, loff_t start, loff_t end);
void vsmfs_pud_unmap(struct inode *inode, loff_t start, loff_t end);

/* aggr.c */
void vsmfs_aggr_init(struct vsmfs_sb_info *sbi);
void vsmfs_aggr_stop(struct vsmfs_sb_info *sbi);
void vsmfs_aggr_destroy(struct vsmfs_sb_info *sbi);
void vsmfs_aggr_open(struct inode *inode, struct file *file);
bool vsmfs_aggr_release(struct inode *inode, struct file *file);
void vsmfs_aggr_evict(struct inode *inode);
void __vsmfs_aggr_written(struct inode *inode);

/**
 * vsmfs_aggr_written() - a transaction wrote an inode
 * @inode: the inode
 *
 * Counts the write of an inode open for writing, while aggregation is on
 * (with aggregate=off a write changes nothing here). When the count
 * reaches the threshold, lists the inode (__vsmfs_aggr_written()).
 * Inline: every write of every file looks, and most find nothing to do.
 *
 * Context: inside the transaction.
 */
static inline void vsmfs_aggr_written(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned int threshold;

	if (!READ_ONCE(vi->i_writers) || !READ_ONCE(sbi->s_aopts.on))
		return;
	/*
	 * Counted up to the threshold only: past it (hot, listed or left
	 * out, until the worker sets it back to 0) a write changes nothing,
	 * and leaves the count alone rather than write its line again.
	 */
	threshold = READ_ONCE(sbi->s_aopts.threshold);
	if (atomic_read(&vi->i_wcount) < threshold &&
	    atomic_inc_return(&vi->i_wcount) == threshold)
		__vsmfs_aggr_written(inode);
}

/* ioctl.c */
struct fileattr;
int vsmfs_fileattr_get(struct dentry *dentry, struct fileattr *fa);
int vsmfs_fileattr_set(struct user_namespace *mnt_userns, struct dentry *dentry,
		       struct fileattr *fa);
long vsmfs_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
#ifdef CONFIG_COMPAT
long vsmfs_compat_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
#else
#define vsmfs_compat_ioctl	NULL
#endif

/* xattr.c */

/*
 * Blocks an attribute or ACL change dirties in a shared metadata handle:
 * the inode table block and the xattr block.
 */
#define VSMFS_XATTR_SHARED_CREDITS	2

extern const struct xattr_handler *vsmfs_xattr_handlers[];
int vsmfs_xattr_get(struct inode *inode, int index, const char *name, void *buf,
		    size_t size);
int vsmfs_xattr_set(struct vsmfs_trans *t, struct inode *inode, int index,
		    const char *name, const void *value, size_t size, int flags);
int vsmfs_xattr_drop(struct vsmfs_trans *t, struct inode *inode);
bool vsmfs_xattr_room(struct inode *inode, const void *value, struct vsmfs_resv *page);
void vsmfs_xattr_abort(struct vsmfs_trans *t, struct inode *inode);
ssize_t vsmfs_listxattr(struct dentry *dentry, char *buf, size_t size);
int vsmfs_init_security(struct vsmfs_trans *t, struct inode *inode, struct inode *dir,
			const struct qstr *qstr);

/* acl.c */
#ifdef CONFIG_FS_POSIX_ACL
struct posix_acl *vsmfs_get_acl(struct inode *inode, int type, bool rcu);
int vsmfs_set_acl(struct user_namespace *mnt_userns, struct inode *inode,
		  struct posix_acl *acl, int type);
int __vsmfs_set_acl(struct vsmfs_trans *t, struct inode *inode, struct posix_acl *acl,
		    int type);
int vsmfs_init_acl(struct vsmfs_trans *t, struct inode *inode, struct inode *dir);
#else
#define vsmfs_get_acl	NULL
#define vsmfs_set_acl	NULL
static inline int __vsmfs_set_acl(struct vsmfs_trans *t, struct inode *inode,
				  struct posix_acl *acl, int type)
{
	return -EOPNOTSUPP;
}

static inline int vsmfs_init_acl(struct vsmfs_trans *t, struct inode *inode,
				 struct inode *dir)
{
	return 0;
}
#endif

#endif /* _VSMFS_INODE_H */
