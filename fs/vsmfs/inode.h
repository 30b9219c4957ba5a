/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs inode.h
 */
#ifndef _VSMFS_INODE_H
#define _VSMFS_INODE_H

#include "vsmfs.h"

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
int vsmfs_sync_inode(struct inode *inode, unsigned int cause);
void vsmfs_fc_evict(struct inode *inode);

int vsmfs_inode_slot(struct inode *inode, struct vsmfs_mblk **mbp, struct vsmfs_dinode **dip,
		     u64 *slotp);

/* Slot @slot in @mb, the DRAM copy of its inode-table block. */
static inline struct vsmfs_dinode *vsmfs_slot_in(struct vsmfs_mblk *mb, u64 slot)
{
	return (struct vsmfs_dinode *)(mb->m_data +
				       (slot % VSMFS_INODES_PER_BLOCK) * VSMFS_INODE_SIZE);
}

void vsmfs_set_ops(struct inode *inode);
void vsmfs_set_inode_flags(struct inode *inode);
void vsmfs_discard_new_inode(struct inode *inode);
int vsmfs_mark_inode_dirty(struct vsmfs_trans *t, struct inode *inode);
int vsmfs_inode_get_write_access(struct vsmfs_trans *t, struct inode *inode);
int vsmfs_whandle_inode(struct vsmfs_whandle *h, struct inode *inode,
			struct vsmfs_mblk **mbp, struct vsmfs_dinode **dip);
void vsmfs_whandle_times(struct inode *inode, struct vsmfs_mblk *mb, struct vsmfs_dinode *di,
			 struct timespec64 now);
void vsmfs_whandle_size(struct inode *inode, struct vsmfs_mblk *mb, struct vsmfs_dinode *di,
			loff_t size);
void vsmfs_whandle_direct(struct inode *inode, struct vsmfs_mblk *mb, struct vsmfs_dinode *di,
			  unsigned int key, u64 e, u32 tail_key, u64 pages);
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
void vsmfs_aggr_written(struct inode *inode);

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
