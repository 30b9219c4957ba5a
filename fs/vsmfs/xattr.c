// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs extended attributes: the user., trusted. and security. namespaces
 * and the storage behind POSIX ACLs (acl.c), all in one 4 KiB block per
 * inode (format in vsmfs_format.h).
 *
 * The xattr block is a metadata block: it is read into DRAM once and
 * changed there under a transaction, whose commit makes the change durable
 * and atomic with the inode and allocation changes that go with it (see
 * journal.c for the order of the stores). An update rewrites the DRAM copy
 * in place: the old entry is cut out, the new one appended.
 *
 * Readers take only i_xattr_sem (shared); writers run inside a transaction
 * and take it exclusive, so a reader never sees a half-rewritten block
 * (the lock order is in vsmfs.h).
 */
#include <linux/fs.h>
#include <linux/xattr.h>
#include <linux/posix_acl_xattr.h>
#include <linux/security.h>
#include "vsmfs.h"
#include "ptable.h"
#include "mcache.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"

#define XENTRY_LEN(nlen, vlen) \
	round_up(sizeof(struct vsmfs_dxattr_entry) + (nlen) + (vlen), VSMFS_XATTR_ALIGN)

static inline struct vsmfs_dxattr_hdr *vsmfs_xhdr(struct vsmfs_mblk *mb)
{
	return (struct vsmfs_dxattr_hdr *)mb->m_data;
}

static inline unsigned int vsmfs_xentry_len(const struct vsmfs_dxattr_entry *e)
{
	return XENTRY_LEN(e->e_name_len, le16_to_cpu(e->e_value_len));
}

/* Check the header and every entry of an xattr block; false if corrupt. */
static bool vsmfs_xattr_block_ok(struct inode *inode, struct vsmfs_mblk *mb)
{
	const char *why = vsmfs_xattr_block_check(mb->m_data, inode->i_ino, NULL);

	if (why) {
		vsmfs_fs_error(inode->i_sb, inode->i_ino, "corrupt xattr block: %s", why);
		return false;
	}
	return true;
}

/*
 * DRAM copy of the xattr block of @inode, checked. NULL if the inode has
 * none, an ERR_PTR on error.
 */
static struct vsmfs_mblk *vsmfs_xattr_block(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 lpn = VSMFS_I(inode)->i_xattr, blk;
	struct vsmfs_mblk *mb;

	lockdep_assert_held(&VSMFS_I(inode)->i_xattr_sem);
	if (!lpn)
		return NULL;
	blk = vsmfs_lpn_blk(sbi, lpn);
	if (!blk) {
		vsmfs_fs_error(inode->i_sb, inode->i_ino, "bad xattr page %llu", lpn);
		return ERR_PTR(-EFSCORRUPTED);
	}
	mb = vsmfs_mblk_get(sbi, blk);
	if (IS_ERR(mb))
		return mb;
	if (!vsmfs_xattr_block_ok(inode, mb))
		return ERR_PTR(-EFSCORRUPTED);
	return mb;
}

/* The entry of (@index, @name) in a checked block, or NULL. */
static struct vsmfs_dxattr_entry *vsmfs_xattr_find(struct vsmfs_mblk *mb, int index,
						   const char *name, size_t name_len)
{
	unsigned int used = le16_to_cpu(vsmfs_xhdr(mb)->x_used);
	unsigned int off = sizeof(struct vsmfs_dxattr_hdr);

	while (off < used) {
		struct vsmfs_dxattr_entry *e = (void *)mb->m_data + off;

		if (e->e_name_index == index && e->e_name_len == name_len &&
		    !memcmp(e->e_name, name, name_len))
			return e;
		off += vsmfs_xentry_len(e);
	}
	return NULL;
}

/**
 * vsmfs_xattr_get() - read an extended attribute
 * @inode: the inode
 * @index: namespace, VSMFS_XATTR_INDEX_*
 * @name: name without the namespace prefix
 * @buf: where to copy the value, or NULL to ask for its size
 * @size: size of @buf; 0 to ask for the size of the value
 *
 * Context: takes i_xattr_sem shared; may be called inside a transaction.
 * Return: the size of the value, -ENODATA if there is no such attribute,
 * -ERANGE if @buf is too small, or another negative errno.
 */
int vsmfs_xattr_get(struct inode *inode, int index, const char *name, void *buf,
		    size_t size)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_dxattr_entry *e;
	struct vsmfs_mblk *mb;
	int ret;

	down_read(&vi->i_xattr_sem);
	mb = vsmfs_xattr_block(inode);
	ret = PTR_ERR_OR_ZERO(mb);
	if (ret)
		goto out;
	e = mb ? vsmfs_xattr_find(mb, index, name, strlen(name)) : NULL;
	if (!e) {
		ret = -ENODATA;
		goto out;
	}
	ret = le16_to_cpu(e->e_value_len);
	if (size) {
		if (ret > size)
			ret = -ERANGE;
		else
			memcpy(buf, e->e_name + e->e_name_len, ret);
	}
out:
	up_read(&vi->i_xattr_sem);
	return ret;
}

/* Give back the xattr block of @inode; the caller writes the inode. */
static int vsmfs_xattr_free_block(struct vsmfs_trans *t, struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	int ret;

	ret = vsmfs_free_pages(t, vi->i_xattr, 1);
	if (ret)
		return ret;
	vi->i_xattr = 0;
	vi->i_pages--;
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return 0;
}

/*
 * Allocate and initialize an empty xattr block for @inode; in a shared
 * metadata handle, of the page its caller reserved (vsmfs_resv_new_block()).
 */
static struct vsmfs_mblk *vsmfs_xattr_new_block(struct vsmfs_trans *t, struct inode *inode)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_dxattr_hdr *h;
	struct vsmfs_mblk *mb;
	u64 lpn, blk;
	int ret;

	if (t->t_shared) {
		mb = vsmfs_resv_new_block(t);
		if (IS_ERR(mb))
			return mb;
		lpn = t->t_dpage->lpn;
		goto init;
	}
	ret = vsmfs_alloc_pages(t, 1, false, &lpn);
	if (ret)
		return ERR_PTR(ret);
	blk = vsmfs_lpn_blk(sbi, lpn);
	mb = blk ? vsmfs_mblk_get(sbi, blk) : ERR_PTR(-EFSCORRUPTED);
	ret = PTR_ERR_OR_ZERO(mb);
	if (!ret)
		ret = vsmfs_trans_get_write_access(t, mb);
	if (ret) {
		/* Left allocated, it would be no file's: the handle fails. */
		vsmfs_trans_fail(t, vsmfs_free_pages(t, lpn, 1));
		return ERR_PTR(ret);
	}
	/* The frame may have held anything before; the DRAM copy is the truth. */
	memset(mb->m_data, 0, VSMFS_BLOCK_SIZE);
	vsmfs_trans_new_block(t, mb);
init:
	h = vsmfs_xhdr(mb);
	h->x_magic = cpu_to_le32(VSMFS_XATTR_MAGIC);
	h->x_count = 0;
	h->x_used = cpu_to_le16(sizeof(*h));
	h->x_ino = cpu_to_le64(inode->i_ino);
	vi->i_xattr = lpn;
	vi->i_pages++;
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return mb;
}

/*
 * In a shared metadata handle, the parts of xattr block @mb a change
 * saves: its header and the bytes from the entry that goes (@e, @old
 * bytes long), or from the end of those used (@used) if none goes, to the
 * end of those used before or after. The block is the inode's alone, and
 * its inode's lock and i_xattr_sem (held) keep it to this task. The first
 * attribute's block is made of the page the handle's caller reserved
 * (vsmfs_xattr_new_block()): nothing to save. Without such a page, and
 * for a block to free (the last attribute removed), the change is made
 * in a handle under s_trans_mutex: -EAGAIN, nothing saved; so is a change
 * larger than the handle's undo log holds.
 */
static int vsmfs_xattr_shared_access(struct vsmfs_trans *t, struct vsmfs_mblk *mb,
				     struct vsmfs_dxattr_entry *e, unsigned int old,
				     unsigned int used, unsigned int need)
{
	unsigned int from;

	if (!mb)
		return t->t_dpage ? 0 : -EAGAIN;
	if (e && !need && le16_to_cpu(vsmfs_xhdr(mb)->x_count) == 1)
		return -EAGAIN;
	from = e ? (u8 *)e - mb->m_data : used;
	return vsmfs_trans_get_write_access_range(t, mb, 0, sizeof(struct vsmfs_dxattr_hdr)) ?:
	       vsmfs_trans_get_write_access_range(t, mb, from,
						  max(used, used - old + need) - from);
}

/**
 * vsmfs_xattr_room() - whether an attribute change may run in a shared handle
 * @inode: the inode, its lock held
 * @value: the value set, or NULL for a removal
 * @page: filled with the page of a new xattr block, or a count of 0
 *
 * An inode with an xattr block changes it in a shared metadata handle
 * (vsmfs_xattr_set()); one without, for its first attribute, first
 * reserves the block's page from the CPU's pool (vsmfs_resv_take()), for
 * vsmfs_resv_begin_shared() (one block more: the page's bitmap block).
 *
 * Return: whether the change may begin a shared handle.
 */
bool vsmfs_xattr_room(struct inode *inode, const void *value, struct vsmfs_resv *page)
{
	page->count = 0;
	if (READ_ONCE(VSMFS_I(inode)->i_xattr))
		return true;
	return value && !vsmfs_resv_take(VSMFS_SB(inode->i_sb), 1, false, page);
}

/**
 * vsmfs_xattr_set() - create, replace or remove an extended attribute
 * @t: running transaction
 * @inode: the inode; the caller writes it afterwards (i_xattr and i_pages
 *	may have changed)
 * @index: namespace, VSMFS_XATTR_INDEX_*
 * @name: name without the namespace prefix
 * @value: the value, or NULL to remove the attribute
 * @size: size of @value
 * @flags: XATTR_CREATE (fail if it exists), XATTR_REPLACE (fail if not)
 *
 * The block is allocated with the first attribute and freed with the
 * last. On error nothing has changed. A shared metadata handle changes
 * only a block that exists and stays (vsmfs_xattr_shared_access()).
 *
 * Context: inside the transaction; takes i_xattr_sem exclusive.
 * Return: 0; -EEXIST or -ENODATA for @flags or a missing attribute to
 * remove; -E2BIG if the attribute cannot fit in an xattr block even alone,
 * -ENOSPC if the other attributes leave too little room; -EAGAIN in a
 * shared metadata handle that cannot make the change; or another negative
 * errno.
 */
int vsmfs_xattr_set(struct vsmfs_trans *t, struct inode *inode, int index,
		    const char *name, const void *value, size_t size, int flags)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	size_t name_len = strlen(name);
	unsigned int used, count, need, old = 0;
	struct vsmfs_dxattr_entry *e = NULL;
	struct vsmfs_dxattr_hdr *h;
	struct vsmfs_mblk *mb;
	int ret = 0;

	if (!t->t_shared)
		lockdep_assert_held(&t->t_sbi->s_trans_mutex);
	if (name_len > U8_MAX)
		return -ERANGE;
	if (value && (size > U16_MAX || XENTRY_LEN(name_len, size) > VSMFS_XATTR_SPACE))
		return -E2BIG;
	need = value ? XENTRY_LEN(name_len, size) : 0;

	down_write(&vi->i_xattr_sem);
	mb = vsmfs_xattr_block(inode);
	if (IS_ERR(mb)) {
		ret = PTR_ERR(mb);
		goto out;
	}
	if (mb)
		e = vsmfs_xattr_find(mb, index, name, name_len);
	if (e && (flags & XATTR_CREATE)) {
		ret = -EEXIST;
		goto out;
	}
	if (!e && (!value || (flags & XATTR_REPLACE))) {
		ret = -ENODATA;
		goto out;
	}
	used = mb ? le16_to_cpu(vsmfs_xhdr(mb)->x_used) : sizeof(*h);
	if (e)
		old = vsmfs_xentry_len(e);
	if (used - old + need > VSMFS_BLOCK_SIZE) {
		ret = -ENOSPC;
		goto out;
	}
	if (t->t_shared) {
		ret = vsmfs_xattr_shared_access(t, mb, e, old, used, need);
		if (ret)
			goto out;
	}
	if (!mb) {
		mb = vsmfs_xattr_new_block(t, inode);
		if (IS_ERR(mb)) {
			ret = PTR_ERR(mb);
			goto out;
		}
	}
	h = vsmfs_xhdr(mb);
	count = le16_to_cpu(h->x_count);
	if (e && !value && count == 1) {
		/* The last one goes with its block; on error both stay. */
		ret = vsmfs_xattr_free_block(t, inode);
		goto out;
	}
	/* A shared handle saved its parts above. */
	ret = t->t_shared ? 0 : vsmfs_trans_get_write_access(t, mb);
	if (ret)
		goto out;
	if (e) {
		unsigned int off = (u8 *)e - mb->m_data;

		memmove(e, (u8 *)e + old, used - off - old);
		used -= old;
		memset(mb->m_data + used, 0, old);
		count--;
	}
	if (value) {
		e = (void *)mb->m_data + used;
		memset(e, 0, need);
		e->e_name_index = index;
		e->e_name_len = name_len;
		e->e_value_len = cpu_to_le16(size);
		memcpy(e->e_name, name, name_len);
		memcpy(e->e_name + name_len, value, size);
		used += need;
		count++;
	}
	h->x_count = cpu_to_le16(count);
	h->x_used = cpu_to_le16(used);
	vsmfs_trans_dirty(t, mb);
out:
	up_write(&vi->i_xattr_sem);
	return ret;
}

/**
 * vsmfs_xattr_abort() - abort a transaction that changed extended attributes
 * @t: the transaction
 * @inode: the inode whose attributes it changed
 *
 * The xattr block's DRAM copy is put back under i_xattr_sem, which its
 * readers hold without the inode lock.
 *
 * Context: inside the transaction; ends it.
 */
void vsmfs_xattr_abort(struct vsmfs_trans *t, struct inode *inode)
{
	down_write(&VSMFS_I(inode)->i_xattr_sem);
	vsmfs_trans_abort(t);
	up_write(&VSMFS_I(inode)->i_xattr_sem);
}

/**
 * vsmfs_xattr_drop() - free all extended attributes of an inode
 * @t: running transaction
 * @inode: the inode, being freed; the caller writes it afterwards
 *
 * Context: inside the transaction, no other user of the inode.
 * Return: 0 or a negative errno.
 */
int vsmfs_xattr_drop(struct vsmfs_trans *t, struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	int ret = 0;

	down_write(&vi->i_xattr_sem);
	if (vi->i_xattr)
		ret = vsmfs_xattr_free_block(t, inode);
	up_write(&vi->i_xattr_sem);
	return ret;
}

static const struct xattr_handler vsmfs_xattr_user_handler;
static const struct xattr_handler vsmfs_xattr_trusted_handler;
static const struct xattr_handler vsmfs_xattr_security_handler;

static const struct xattr_handler *vsmfs_xattr_handler(int index)
{
	switch (index) {
	case VSMFS_XATTR_INDEX_USER:
		return &vsmfs_xattr_user_handler;
	case VSMFS_XATTR_INDEX_TRUSTED:
		return &vsmfs_xattr_trusted_handler;
	case VSMFS_XATTR_INDEX_SECURITY:
		return &vsmfs_xattr_security_handler;
#ifdef CONFIG_FS_POSIX_ACL
	case VSMFS_XATTR_INDEX_ACL_ACCESS:
		return &posix_acl_access_xattr_handler;
	case VSMFS_XATTR_INDEX_ACL_DEFAULT:
		return &posix_acl_default_xattr_handler;
#endif
	}
	return NULL;
}

/**
 * vsmfs_listxattr() - list the names of the extended attributes
 * @dentry: the file
 * @buf: where to put the NUL-terminated names, or NULL to ask for the size
 * @size: size of @buf
 *
 * Names of namespaces the caller may not see (trusted. without
 * CAP_SYS_ADMIN, ACLs on a noacl mount) are left out.
 *
 * Context: takes i_xattr_sem shared.
 * Return: bytes used or needed, -ERANGE if @buf is too small, or another
 * negative errno.
 */
ssize_t vsmfs_listxattr(struct dentry *dentry, char *buf, size_t size)
{
	struct inode *inode = d_inode(dentry);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_mblk *mb;
	unsigned int off, used;
	ssize_t total = 0;

	down_read(&vi->i_xattr_sem);
	mb = vsmfs_xattr_block(inode);
	if (IS_ERR_OR_NULL(mb)) {
		total = PTR_ERR_OR_ZERO(mb);
		goto out;
	}
	used = le16_to_cpu(vsmfs_xhdr(mb)->x_used);
	for (off = sizeof(struct vsmfs_dxattr_hdr); off < used;) {
		struct vsmfs_dxattr_entry *e = (void *)mb->m_data + off;
		const struct xattr_handler *handler = vsmfs_xattr_handler(e->e_name_index);
		const char *prefix;
		size_t plen, len;

		off += vsmfs_xentry_len(e);
		if (!handler || (handler->list && !handler->list(dentry)))
			continue;
		prefix = xattr_prefix(handler);
		plen = strlen(prefix);
		len = plen + e->e_name_len + 1;
		if (buf) {
			if (total + len > size) {
				total = -ERANGE;
				goto out;
			}
			memcpy(buf + total, prefix, plen);
			memcpy(buf + total + plen, e->e_name, e->e_name_len);
			buf[total + len - 1] = 0;
		}
		total += len;
	}
out:
	up_read(&vi->i_xattr_sem);
	return total;
}

static int vsmfs_xattr_handler_get(const struct xattr_handler *handler,
				   struct dentry *unused, struct inode *inode,
				   const char *name, void *buf, size_t size)
{
	return vsmfs_xattr_get(inode, handler->flags, name, buf, size);
}

/* One attribute change, the inode's ctime with it, in handle @t. */
static int vsmfs_xattr_change(struct vsmfs_trans *t, int index, struct inode *inode,
			      const char *name, const void *value, size_t size, int flags)
{
	int ret;

	vsmfs_trans_track(t, inode, false);
	ret = vsmfs_xattr_set(t, inode, index, name, value, size, flags);
	if (!ret) {
		inode->i_ctime = current_time(inode);
		ret = vsmfs_mark_inode_dirty(t, inode);
	}
	if (ret) {
		vsmfs_xattr_abort(t, inode);
		return ret;
	}
	return vsmfs_trans_commit(t);
}

/*
 * One attribute change in one transaction: in a shared metadata handle
 * (vsmfs_trans_begin_shared()) beside other operations when the inode's
 * xattr block exists and stays, else (or when the shared handle cannot
 * finish: -EAGAIN, nothing changed) in a handle under s_trans_mutex. The
 * VFS holds the inode lock, which keeps the slot and the block to this
 * task.
 */
static int vsmfs_xattr_handler_set(const struct xattr_handler *handler,
				   struct user_namespace *mnt_userns,
				   struct dentry *unused, struct inode *inode,
				   const char *name, const void *value,
				   size_t size, int flags)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_resv page;
	struct vsmfs_trans t;
	int ret;

	if (vsmfs_xattr_room(inode, value, &page) &&
	    !vsmfs_resv_begin_shared(sbi, &t, VSMFS_XATTR_SHARED_CREDITS + !!page.count, &page)) {
		ret = vsmfs_xattr_change(&t, handler->flags, inode, name, value, size, flags);
		vsmfs_resv_end_shared(sbi, &t, &page);
		if (ret != -EAGAIN)
			return ret;
	}
	vsmfs_trans_begin(sbi, &t);
	return vsmfs_xattr_change(&t, handler->flags, inode, name, value, size, flags);
}

/* trusted.: the VFS checks CAP_SYS_ADMIN for get and set; list hides them. */
static bool vsmfs_xattr_trusted_list(struct dentry *dentry)
{
	return capable(CAP_SYS_ADMIN);
}

static const struct xattr_handler vsmfs_xattr_user_handler = {
	.prefix	= XATTR_USER_PREFIX,
	.flags	= VSMFS_XATTR_INDEX_USER,
	.get	= vsmfs_xattr_handler_get,
	.set	= vsmfs_xattr_handler_set,
};

static const struct xattr_handler vsmfs_xattr_trusted_handler = {
	.prefix	= XATTR_TRUSTED_PREFIX,
	.flags	= VSMFS_XATTR_INDEX_TRUSTED,
	.list	= vsmfs_xattr_trusted_list,
	.get	= vsmfs_xattr_handler_get,
	.set	= vsmfs_xattr_handler_set,
};

static const struct xattr_handler vsmfs_xattr_security_handler = {
	.prefix	= XATTR_SECURITY_PREFIX,
	.flags	= VSMFS_XATTR_INDEX_SECURITY,
	.get	= vsmfs_xattr_handler_get,
	.set	= vsmfs_xattr_handler_set,
};

const struct xattr_handler *vsmfs_xattr_handlers[] = {
	&vsmfs_xattr_user_handler,
	&vsmfs_xattr_trusted_handler,
	&vsmfs_xattr_security_handler,
#ifdef CONFIG_FS_POSIX_ACL
	&posix_acl_access_xattr_handler,
	&posix_acl_default_xattr_handler,
#endif
	NULL
};

/* Store the attributes a security module gives a new inode. */
static int vsmfs_initxattrs(struct inode *inode, const struct xattr *xattrs, void *fs_info)
{
	const struct xattr *x;
	int ret = 0;

	for (x = xattrs; x->name && !ret; x++)
		ret = vsmfs_xattr_set(fs_info, inode, VSMFS_XATTR_INDEX_SECURITY, x->name,
				      x->value, x->value_len, 0);
	return ret;
}

/**
 * vsmfs_init_security() - security attributes of a new inode
 * @t: running transaction
 * @inode: the new inode; the caller writes it afterwards
 * @dir: its directory
 * @qstr: its name
 *
 * Context: inside the transaction.
 * Return: 0 or a negative errno.
 */
int vsmfs_init_security(struct vsmfs_trans *t, struct inode *inode, struct inode *dir,
			const struct qstr *qstr)
{
	return security_inode_init_security(inode, dir, qstr, vsmfs_initxattrs, t);
}
