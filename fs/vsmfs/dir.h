/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs directories: what dir.c (entries and their DRAM index) gives
 * namei.c (the namespace operations), and nothing else includes.
 */
#ifndef _VSMFS_DIR_H
#define _VSMFS_DIR_H

#include <linux/math.h>
#include <linux/types.h>

struct inode;
struct qstr;
struct vsmfs_ddirent;
struct vsmfs_dir_index;
struct vsmfs_mblk;
struct vsmfs_trans;

/* Bytes an entry with a name of @n bytes takes. */
#define DIRENT_LEN(n)		round_up(VSMFS_DIRENT_BASE + (n), VSMFS_DIRENT_ALIGN)

/* Where an entry is: its block, its DRAM copy and the entry in it. */
struct vsmfs_dpos {
	u64			blk;
	struct vsmfs_mblk	*mb;
	struct vsmfs_ddirent	*de;
};

u64 vsmfs_room_find(const struct vsmfs_dir_index *idx, unsigned int need);
struct vsmfs_dir_index *vsmfs_dir_index(struct inode *dir);
struct vsmfs_dir_index *vsmfs_dir_reserve(struct inode *dir);
int vsmfs_find_entry(struct inode *dir, struct vsmfs_dir_index *idx,
		     const struct qstr *name, struct vsmfs_dpos *pos);
int vsmfs_add_entry(struct vsmfs_trans *t, struct inode *dir, struct vsmfs_dir_index *idx,
		    const struct qstr *name, struct inode *inode);
int vsmfs_de_write_access(struct vsmfs_trans *t, struct vsmfs_dpos *pos);
int vsmfs_del_entry(struct vsmfs_trans *t, struct inode *dir, struct vsmfs_dir_index *idx,
		    struct vsmfs_dpos *pos);
int vsmfs_check_empty(struct inode *dir);

#endif /* _VSMFS_DIR_H */
