/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs data path: what file.c (read, write, fsync), cow.c (copy-on-write
 * of data=atomic, run growth), dax.c (iomap, DAX faults, mmap, layouts)
 * and falloc.c (fallocate) share, and nothing else includes.
 */
#ifndef _VSMFS_DATA_H
#define _VSMFS_DATA_H

#include <linux/types.h>

struct file;
struct inode;
struct iomap_ops;
struct iov_iter;
struct vm_area_struct;
struct vsmfs_sb_info;
struct vsmfs_trans;

/* Files whose end passes this get runs starting at free superpages. */
#define VSMFS_LARGE_FILE	(256 * 1024)

#define VSMFS_PIECE_SIZE	(1ULL << VSMFS_VSP_SHIFT)

/* cow.c */
int vsmfs_extend_run(struct vsmfs_trans *t, struct inode *inode, u64 key,
		     u64 need, u64 wfrom, u64 wto, bool large, u64 *runp, u64 *havep);
int vsmfs_extend_sparse(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 have,
			u64 need, u64 wfrom, bool zfdm, u64 *nlpn);
ssize_t vsmfs_write_new(struct vsmfs_trans *t, struct inode *inode, u64 key,
			u64 wfrom, u64 wto, struct iov_iter *from, bool large);
u64 vsmfs_cow_blocks_at(unsigned int cow, u64 pos, u64 len);
u64 vsmfs_atomic_part(struct vsmfs_sb_info *sbi, unsigned int cow, u64 pos, u64 len,
		      u32 extra);
ssize_t vsmfs_cow_write_t(struct vsmfs_trans *t, struct inode *inode, loff_t pos,
			  size_t len, struct iov_iter *from, bool large,
			  unsigned int mode, int *errp);
void vsmfs_cow_span(unsigned int mode, loff_t *start, loff_t *end);
ssize_t vsmfs_write_atomic(struct inode *inode, loff_t pos, size_t len,
			   struct iov_iter *from, bool large, unsigned int mode, bool direct);

/* dax.c */
extern const struct iomap_ops vsmfs_iomap_ops;
extern const struct iomap_ops vsmfs_iomap_report_ops;
int vsmfs_file_mmap(struct file *file, struct vm_area_struct *vma);
int vsmfs_break_layouts_range(struct inode *inode, loff_t start, loff_t end);

/* falloc.c */
long vsmfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len);

#endif /* _VSMFS_DATA_H */
