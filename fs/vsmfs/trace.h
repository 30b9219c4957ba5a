/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsmfs tracepoints: one event at the end of every VFS entry point, with
 * its duration, and events for the journal (commit, GC, checkpoint, wear
 * swaps), copy-on-write writes, TLB shootdowns and tail migration (ZFDM).
 * Disabled, each costs a static branch. tools/bpftrace/ has scripts built
 * on them; Documentation/filesystems/vsmfs.rst lists the fields.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vsmfs

#ifndef _VSMFS_TRACE_HELPERS
#define _VSMFS_TRACE_HELPERS
#include <linux/fs.h>
#include <linux/ktime.h>

/* Start time of an operation whose end event @ev records, if it is on. */
#define vsmfs_trace_start(ev)	(trace_##ev##_enabled() ? ktime_get_ns() : 0)

/* Nanoseconds since @t0, a vsmfs_trace_start() value (0: not measured). */
static inline u64 vsmfs_trace_ns(u64 t0)
{
	return t0 ? ktime_get_ns() - t0 : 0;
}
#endif

#if !defined(_VSMFS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VSMFS_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(vsmfs_file_op,
	TP_PROTO(struct inode *inode, s64 pos, u64 len, s64 ret, u64 t0),
	TP_ARGS(inode, pos, len, ret, t0),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	ino)
		__field(s64,	pos)
		__field(u64,	len)
		__field(s64,	ret)
		__field(u64,	ns)
	),
	TP_fast_assign(
		__entry->dev = inode->i_sb->s_dev;
		__entry->ino = inode->i_ino;
		__entry->pos = pos;
		__entry->len = len;
		__entry->ret = ret;
		__entry->ns = vsmfs_trace_ns(t0);
	),
	TP_printk("dev %d:%d ino %llu pos %lld len %llu ret %lld ns %llu",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->ino,
		  __entry->pos, __entry->len, __entry->ret, __entry->ns)
);

#define VSMFS_FILE_OP_EVENT(name)					\
DEFINE_EVENT(vsmfs_file_op, name,					\
	TP_PROTO(struct inode *inode, s64 pos, u64 len, s64 ret, u64 t0), \
	TP_ARGS(inode, pos, len, ret, t0))

/* pos, len: the range (fsync: the range; setattr: new size or -1, ia_valid). */
VSMFS_FILE_OP_EVENT(vsmfs_read);
VSMFS_FILE_OP_EVENT(vsmfs_write);
VSMFS_FILE_OP_EVENT(vsmfs_fsync);
VSMFS_FILE_OP_EVENT(vsmfs_fallocate);
VSMFS_FILE_OP_EVENT(vsmfs_setattr);

DECLARE_EVENT_CLASS(vsmfs_dir_op,
	TP_PROTO(struct inode *dir, struct dentry *dentry, s64 ret, u64 t0),
	TP_ARGS(dir, dentry, ret, t0),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	dir)
		__field(u64,	ino)
		__field(u32,	namelen)
		__field(s64,	ret)
		__field(u64,	ns)
	),
	TP_fast_assign(
		__entry->dev = dir->i_sb->s_dev;
		__entry->dir = dir->i_ino;
		__entry->ino = d_really_is_positive(dentry) ? d_inode(dentry)->i_ino : 0;
		__entry->namelen = dentry->d_name.len;
		__entry->ret = ret;
		__entry->ns = vsmfs_trace_ns(t0);
	),
	TP_printk("dev %d:%d dir %llu ino %llu namelen %u ret %lld ns %llu",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->dir,
		  __entry->ino, __entry->namelen, __entry->ret, __entry->ns)
);

#define VSMFS_DIR_OP_EVENT(name)					\
DEFINE_EVENT(vsmfs_dir_op, name,					\
	TP_PROTO(struct inode *dir, struct dentry *dentry, s64 ret, u64 t0), \
	TP_ARGS(dir, dentry, ret, t0))

/* ino: the inode the name refers to when the operation ends, or 0. */
VSMFS_DIR_OP_EVENT(vsmfs_lookup);
VSMFS_DIR_OP_EVENT(vsmfs_create);
VSMFS_DIR_OP_EVENT(vsmfs_mknod);
VSMFS_DIR_OP_EVENT(vsmfs_mkdir);
VSMFS_DIR_OP_EVENT(vsmfs_symlink);
VSMFS_DIR_OP_EVENT(vsmfs_link);
VSMFS_DIR_OP_EVENT(vsmfs_unlink);
VSMFS_DIR_OP_EVENT(vsmfs_rmdir);
VSMFS_DIR_OP_EVENT(vsmfs_rename);

TRACE_EVENT(vsmfs_fault,
	TP_PROTO(struct inode *inode, pgoff_t pgoff, bool pmd, unsigned int ret, u64 t0),
	TP_ARGS(inode, pgoff, pmd, ret, t0),
	TP_STRUCT__entry(
		__field(dev_t,		dev)
		__field(u64,		ino)
		__field(u64,		pgoff)
		__field(bool,		pmd)
		__field(unsigned int,	ret)
		__field(u64,		ns)
	),
	TP_fast_assign(
		__entry->dev = inode->i_sb->s_dev;
		__entry->ino = inode->i_ino;
		__entry->pgoff = pgoff;
		__entry->pmd = pmd;
		__entry->ret = ret;
		__entry->ns = vsmfs_trace_ns(t0);
	),
	TP_printk("dev %d:%d ino %llu pgoff %llu %s ret %#x ns %llu",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->ino,
		  __entry->pgoff, __entry->pmd ? "pmd" : "pte", __entry->ret,
		  __entry->ns)
);

TRACE_EVENT(vsmfs_trans_commit,
	TP_PROTO(struct super_block *sb, u32 blocks, u32 delta_blocks, u64 delta_bytes,
		 u64 full_bytes, int ret, u64 t0),
	TP_ARGS(sb, blocks, delta_blocks, delta_bytes, full_bytes, ret, t0),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u32,	blocks)
		__field(u32,	delta_blocks)
		__field(u64,	delta_bytes)
		__field(u64,	full_bytes)
		__field(int,	ret)
		__field(u64,	ns)
	),
	TP_fast_assign(
		__entry->dev = sb->s_dev;
		__entry->blocks = blocks;
		__entry->delta_blocks = delta_blocks;
		__entry->delta_bytes = delta_bytes;
		__entry->full_bytes = full_bytes;
		__entry->ret = ret;
		__entry->ns = vsmfs_trace_ns(t0);
	),
	TP_printk("dev %d:%d blocks %u delta_blocks %u delta_bytes %llu full_bytes %llu ret %d ns %llu",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->blocks,
		  __entry->delta_blocks, __entry->delta_bytes, __entry->full_bytes,
		  __entry->ret, __entry->ns)
);

TRACE_EVENT(vsmfs_journal_gc,
	TP_PROTO(struct super_block *sb, u32 before, u32 after),
	TP_ARGS(sb, before, after),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u32,	before)
		__field(u32,	after)
	),
	TP_fast_assign(
		__entry->dev = sb->s_dev;
		__entry->before = before;
		__entry->after = after;
	),
	TP_printk("dev %d:%d used %u -> %u journal blocks",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->before, __entry->after)
);

TRACE_EVENT(vsmfs_checkpoint,
	TP_PROTO(struct super_block *sb, u32 home_blocks, u64 t0),
	TP_ARGS(sb, home_blocks, t0),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u32,	home_blocks)
		__field(u64,	ns)
	),
	TP_fast_assign(
		__entry->dev = sb->s_dev;
		__entry->home_blocks = home_blocks;
		__entry->ns = vsmfs_trace_ns(t0);
	),
	TP_printk("dev %d:%d home_blocks %u ns %llu",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->home_blocks, __entry->ns)
);

TRACE_EVENT(vsmfs_wear_swap,
	TP_PROTO(struct super_block *sb, u32 jblock, u32 worn_jblock, u32 writes, u32 worn_writes),
	TP_ARGS(sb, jblock, worn_jblock, writes, worn_writes),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u32,	jblock)
		__field(u32,	worn_jblock)
		__field(u32,	writes)
		__field(u32,	worn_writes)
	),
	TP_fast_assign(
		__entry->dev = sb->s_dev;
		__entry->jblock = jblock;
		__entry->worn_jblock = worn_jblock;
		__entry->writes = writes;
		__entry->worn_writes = worn_writes;
	),
	TP_printk("dev %d:%d journal block %u (%u writes) used instead of %u (%u writes)",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->jblock, __entry->writes,
		  __entry->worn_jblock, __entry->worn_writes)
);

TRACE_EVENT(vsmfs_mcow_write,
	TP_PROTO(struct inode *inode, s64 pos, u64 len, u32 coarse, u32 fine, u64 swapped,
		 u64 merged, s64 ret),
	TP_ARGS(inode, pos, len, coarse, fine, swapped, merged, ret),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	ino)
		__field(s64,	pos)
		__field(u64,	len)
		__field(u32,	coarse)
		__field(u32,	fine)
		__field(u64,	swapped)
		__field(u64,	merged)
		__field(s64,	ret)
	),
	TP_fast_assign(
		__entry->dev = inode->i_sb->s_dev;
		__entry->ino = inode->i_ino;
		__entry->pos = pos;
		__entry->len = len;
		__entry->coarse = coarse;
		__entry->fine = fine;
		__entry->swapped = swapped;
		__entry->merged = merged;
		__entry->ret = ret;
	),
	TP_printk("dev %d:%d ino %llu pos %lld len %llu coarse %u fine %u swapped %llu merged %llu ret %lld",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->ino, __entry->pos,
		  __entry->len, __entry->coarse, __entry->fine, __entry->swapped,
		  __entry->merged, __entry->ret)
);

TRACE_EVENT(vsmfs_tlb_flush,
	TP_PROTO(struct super_block *sb, u64 pages, bool all, bool lazy),
	TP_ARGS(sb, pages, all, lazy),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	pages)
		__field(bool,	all)
		__field(bool,	lazy)
	),
	TP_fast_assign(
		__entry->dev = sb->s_dev;
		__entry->pages = pages;
		__entry->all = all;
		__entry->lazy = lazy;
	),
	TP_printk("dev %d:%d pages %llu %s %s",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->pages,
		  __entry->all ? "whole TLB" : "by page", __entry->lazy ? "lazy" : "eager")
);

TRACE_EVENT(vsmfs_zfdm,
	TP_PROTO(struct inode *inode, u64 key, u64 pages, bool migrate),
	TP_ARGS(inode, key, pages, migrate),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	ino)
		__field(u64,	key)
		__field(u64,	pages)
		__field(bool,	migrate)
	),
	TP_fast_assign(
		__entry->dev = inode->i_sb->s_dev;
		__entry->ino = inode->i_ino;
		__entry->key = key;
		__entry->pages = pages;
		__entry->migrate = migrate;
	),
	TP_printk("dev %d:%d ino %llu superpage %llu %s %llu pages",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->ino, __entry->key,
		  __entry->migrate ? "migrated" : "tail released", __entry->pages)
);

/* kind: 1 free, 2 lazy, 3 closed slot taken (aggr.c). */
TRACE_EVENT(vsmfs_inode_migrate,
	TP_PROTO(struct inode *inode, u64 from, u64 to, u64 other, int kind),
	TP_ARGS(inode, from, to, other, kind),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	ino)
		__field(u64,	from)
		__field(u64,	to)
		__field(u64,	other)
		__field(int,	kind)
	),
	TP_fast_assign(
		__entry->dev = inode->i_sb->s_dev;
		__entry->ino = inode->i_ino;
		__entry->from = from;
		__entry->to = to;
		__entry->other = other;
		__entry->kind = kind;
	),
	TP_printk("dev %d:%d ino %llu slot %llu -> %llu, exchanged with %s inode %llu",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->ino, __entry->from,
		  __entry->to, __print_symbolic(__entry->kind, { 1, "free" }, { 2, "lazy" },
						{ 3, "closed" }), __entry->other)
);

#endif /* _VSMFS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
