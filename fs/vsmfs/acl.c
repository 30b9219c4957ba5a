// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs POSIX ACLs: conversion between struct posix_acl and the on-media
 * encoding (struct vsmfs_dacl_hdr and entries, vsmfs_format.h), kept as
 * the value of the ACL attributes in the xattr block (xattr.c).
 *
 * An ACL and the mode bits it implies are changed in one transaction.
 * The VFS caches ACLs in the inode; they are cached here when written.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include "vsmfs.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"

/* The on-media tags are the Linux ACL API's values. */
static_assert(VSMFS_ACL_USER_OBJ == ACL_USER_OBJ);
static_assert(VSMFS_ACL_USER == ACL_USER);
static_assert(VSMFS_ACL_GROUP_OBJ == ACL_GROUP_OBJ);
static_assert(VSMFS_ACL_GROUP == ACL_GROUP);
static_assert(VSMFS_ACL_MASK == ACL_MASK);
static_assert(VSMFS_ACL_OTHER == ACL_OTHER);
static_assert(VSMFS_ACL_PERM_MASK == (ACL_READ | ACL_WRITE | ACL_EXECUTE));

/* Largest on-media ACL: alone in an xattr block, with an empty name. */
#define VSMFS_ACL_MAX_SIZE	(VSMFS_XATTR_SPACE - sizeof(struct vsmfs_dxattr_entry))

static int vsmfs_acl_index(int type)
{
	return type == ACL_TYPE_ACCESS ? VSMFS_XATTR_INDEX_ACL_ACCESS :
					 VSMFS_XATTR_INDEX_ACL_DEFAULT;
}

/* Decode an on-media ACL; an ERR_PTR if it is malformed. */
static struct posix_acl *vsmfs_acl_from_media(const void *value, size_t size)
{
	const struct vsmfs_dacl_hdr *h = value;
	const struct vsmfs_dacl_entry *de = value + sizeof(*h);
	struct posix_acl *acl;
	size_t count, i;

	if (size < sizeof(*h) || (size - sizeof(*h)) % sizeof(*de) ||
	    le32_to_cpu(h->a_version) != VSMFS_ACL_VERSION)
		return ERR_PTR(-EFSCORRUPTED);
	count = (size - sizeof(*h)) / sizeof(*de);
	if (!count)
		return NULL;
	acl = posix_acl_alloc(count, GFP_NOFS);
	if (!acl)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < count; i++, de++) {
		struct posix_acl_entry *pa = &acl->a_entries[i];
		u32 id = le32_to_cpu(de->e_id);

		pa->e_tag = le16_to_cpu(de->e_tag);
		pa->e_perm = le16_to_cpu(de->e_perm);
		if (pa->e_perm & ~VSMFS_ACL_PERM_MASK)
			goto bad;
		switch (pa->e_tag) {
		case ACL_USER_OBJ:
		case ACL_GROUP_OBJ:
		case ACL_MASK:
		case ACL_OTHER:
			break;
		case ACL_USER:
			pa->e_uid = make_kuid(&init_user_ns, id);
			break;
		case ACL_GROUP:
			pa->e_gid = make_kgid(&init_user_ns, id);
			break;
		default:
			goto bad;
		}
	}
	return acl;
bad:
	posix_acl_release(acl);
	return ERR_PTR(-EFSCORRUPTED);
}

/* Encode an ACL for the media; a kmalloc'ed buffer or an ERR_PTR. */
static void *vsmfs_acl_to_media(const struct posix_acl *acl, size_t *size)
{
	struct vsmfs_dacl_entry *de;
	struct vsmfs_dacl_hdr *h;
	size_t i;

	*size = sizeof(*h) + acl->a_count * sizeof(*de);
	if (*size > VSMFS_ACL_MAX_SIZE)
		return ERR_PTR(-E2BIG);
	h = kmalloc(*size, GFP_NOFS);
	if (!h)
		return ERR_PTR(-ENOMEM);
	h->a_version = cpu_to_le32(VSMFS_ACL_VERSION);
	de = (void *)(h + 1);
	for (i = 0; i < acl->a_count; i++, de++) {
		const struct posix_acl_entry *pa = &acl->a_entries[i];
		u32 id = 0;

		if (pa->e_tag == ACL_USER)
			id = from_kuid(&init_user_ns, pa->e_uid);
		else if (pa->e_tag == ACL_GROUP)
			id = from_kgid(&init_user_ns, pa->e_gid);
		de->e_tag = cpu_to_le16(pa->e_tag);
		de->e_perm = cpu_to_le16(pa->e_perm);
		de->e_id = cpu_to_le32(id);
	}
	return h;
}

/**
 * vsmfs_get_acl() - read an ACL from the xattr block
 * @inode: the inode
 * @type: ACL_TYPE_ACCESS or ACL_TYPE_DEFAULT
 * @rcu: called in RCU path walk: not supported, the block lock may sleep
 *
 * Context: process context; may be called inside a transaction (creating
 * an inode reads the directory's default ACL).
 * Return: the ACL, NULL if there is none, or an ERR_PTR.
 */
struct posix_acl *vsmfs_get_acl(struct inode *inode, int type, bool rcu)
{
	struct posix_acl *acl;
	void *value;
	int ret;

	if (rcu)
		return ERR_PTR(-ECHILD);
	value = kmalloc(VSMFS_ACL_MAX_SIZE, GFP_NOFS);
	if (!value)
		return ERR_PTR(-ENOMEM);
	ret = vsmfs_xattr_get(inode, vsmfs_acl_index(type), "", value, VSMFS_ACL_MAX_SIZE);
	if (ret == -ENODATA)
		acl = NULL;
	else if (ret < 0)
		acl = ERR_PTR(ret);
	else
		acl = vsmfs_acl_from_media(value, ret);
	kfree(value);
	if (acl == ERR_PTR(-EFSCORRUPTED))
		vsmfs_fs_error(inode->i_sb, inode->i_ino, "corrupt %s ACL",
			       type == ACL_TYPE_ACCESS ? "access" : "default");
	return acl;
}

/**
 * __vsmfs_set_acl() - store or remove an ACL in a transaction
 * @t: running transaction
 * @inode: the inode; the caller writes it
 * @acl: the ACL, NULL to remove it
 * @type: ACL_TYPE_ACCESS or ACL_TYPE_DEFAULT
 *
 * Context: inside the transaction.
 * Return: 0, or a negative errno and nothing changed.
 */
int __vsmfs_set_acl(struct vsmfs_trans *t, struct inode *inode, struct posix_acl *acl,
		    int type)
{
	void *value = NULL;
	size_t size = 0;
	int ret;

	if (acl) {
		value = vsmfs_acl_to_media(acl, &size);
		if (IS_ERR(value))
			return PTR_ERR(value);
	}
	ret = vsmfs_xattr_set(t, inode, vsmfs_acl_index(type), "", value, size, 0);
	kfree(value);
	if (ret == -ENODATA && !acl)
		ret = 0;	/* removing an ACL that is not there */
	if (!ret)
		set_cached_acl(inode, type, acl);
	return ret;
}

/* Set or remove an ACL and the mode that goes with it in handle @t, and end it. */
static int vsmfs_set_acl_in(struct vsmfs_trans *t, struct inode *inode, struct posix_acl *acl,
			    int type, umode_t mode)
{
	int ret;

	vsmfs_trans_track(t, inode, false);
	ret = __vsmfs_set_acl(t, inode, acl, type);
	if (!ret) {
		inode->i_mode = mode;
		inode->i_ctime = current_time(inode);
		ret = vsmfs_mark_inode_dirty(t, inode);
	}
	if (ret) {
		vsmfs_xattr_abort(t, inode);
		forget_cached_acl(inode, type);
		return ret;
	}
	ret = vsmfs_trans_commit(t);
	/* An end that aborted put the old ACL back: read it again. */
	if (ret)
		forget_cached_acl(inode, type);
	return ret;
}

/**
 * vsmfs_set_acl() - set or remove an ACL
 * @mnt_userns: user namespace of the mount
 * @inode: the inode
 * @acl: the new ACL, NULL to remove it
 * @type: ACL_TYPE_ACCESS or ACL_TYPE_DEFAULT
 *
 * An access ACL that the mode bits express alone is not stored; the mode
 * bits change with the ACL, in the same transaction: in a shared metadata
 * handle beside other operations when the inode's xattr block exists and
 * stays, else (or if that handle cannot finish, nothing changed) in a
 * handle under s_trans_mutex.
 *
 * Context: the VFS holds the inode lock.
 * Return: 0 or a negative errno.
 */
int vsmfs_set_acl(struct user_namespace *mnt_userns, struct inode *inode,
		  struct posix_acl *acl, int type)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	umode_t mode = inode->i_mode;
	struct vsmfs_resv page;
	struct vsmfs_trans t;
	int ret;

	if (type == ACL_TYPE_ACCESS && acl) {
		ret = posix_acl_update_mode(mnt_userns, inode, &mode, &acl);
		if (ret)
			return ret;
	}
	/* Beside other operations if it can (vsmfs_xattr_set()). */
	if (vsmfs_xattr_room(inode, acl, &page) &&
	    !vsmfs_resv_begin_shared(sbi, &t, VSMFS_XATTR_SHARED_CREDITS + !!page.count, &page)) {
		ret = vsmfs_set_acl_in(&t, inode, acl, type, mode);
		vsmfs_resv_end_shared(sbi, &t, &page);
		if (ret != -EAGAIN)
			return ret;
	}
	vsmfs_trans_begin(sbi, &t);
	return vsmfs_set_acl_in(&t, inode, acl, type, mode);
}

/**
 * vsmfs_init_acl() - ACLs of a new inode, from its directory's default ACL
 * @t: running transaction
 * @inode: the new inode; its mode may change; the caller writes it
 * @dir: its directory
 *
 * Without a default ACL on @dir (or on a noacl mount) the umask applies.
 *
 * Context: inside the transaction.
 * Return: 0 or a negative errno.
 */
int vsmfs_init_acl(struct vsmfs_trans *t, struct inode *inode, struct inode *dir)
{
	struct posix_acl *default_acl, *acl;
	int ret;

	ret = posix_acl_create(dir, &inode->i_mode, &default_acl, &acl);
	if (ret)
		return ret;
	if (default_acl)
		ret = __vsmfs_set_acl(t, inode, default_acl, ACL_TYPE_DEFAULT);
	else
		set_cached_acl(inode, ACL_TYPE_DEFAULT, NULL);
	if (acl && !ret)
		ret = __vsmfs_set_acl(t, inode, acl, ACL_TYPE_ACCESS);
	else if (!acl)
		set_cached_acl(inode, ACL_TYPE_ACCESS, NULL);
	posix_acl_release(default_acl);
	posix_acl_release(acl);
	return ret;
}
