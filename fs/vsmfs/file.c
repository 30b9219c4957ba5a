// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs regular files: the read and write entry points, the source of an
 * atomic write, fsync, open and release, SEEK_DATA/SEEK_HOLE and FIEMAP.
 * A write is cut into parts, each made by the begin, copy and end steps
 * of write.c (vsmfs_write_part()), which staged writes (stage.c),
 * copy-on-write in a handle (cow.c) and run growth (grow.c) serve; iomap,
 * DAX faults and mmap are in dax.c, fallocate in falloc.c.
 *
 * Each 2 MiB piece of a file is backed by one run of contiguous logical
 * pages, so a read or write of a piece is one copy through the kernel
 * virtual range. A run grows in place when the logical pages after it are
 * free; otherwise a longer run is allocated and the frames holding the
 * file's data are swapped into it (vsmfs_swap_pages()), so no data is
 * copied and the physical pages a user mapping points at stay the same
 * (vsmfs_extend_run() in grow.c).
 *
 * Ordering: new data is written with non-temporal stores (or flushed) and
 * the transaction that makes it reachable (index entry, page table swaps,
 * size) commits after a fence, so a crash never exposes unwritten pages.
 * Overwrites of existing pages are done in place with data=inplace; with
 * data=atomic they are copied on write, whose ordering is given at
 * vsmfs_write_part() in write.c.
 *
 * Locking: see struct vsmfs_inode_info. Copies to and from user memory
 * happen with page faults disabled while i_idx_sem or a transaction is
 * held, since the fault may be on a mapping of a vsmfs file. A read cut
 * short by a fault is retried after faulting the user pages in unlocked;
 * an atomic write cannot be cut (it has no way back once it has begun
 * changing the file), so its source is made unable to fault before it
 * starts, see vsmfs_wsrc_get(). It is first tried straight from the
 * user's buffer, undone whole if the copy stops at a fault
 * (vsmfs_write_part() with VSMFS_WM_DIRECT).
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/iomap.h>
#include <linux/falloc.h>
#include <linux/uaccess.h>
#include <linux/pagemap.h>
#include <linux/writeback.h>
#include <linux/huge_mm.h>
#include "vsmfs.h"
#include "vsp.h"
#include "journal.h"
#include "trans.h"
#include "inode.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "data.h"
#include "badframe.h"
#include "ptable.h"

static ssize_t vsmfs_do_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t pos = iocb->ki_pos, size;
	ssize_t done = 0;
	int stalled = 0;

	if (!iov_iter_count(to))
		return 0;
	inode_lock_shared(inode);
	size = i_size_read(inode);
	while (iov_iter_count(to) && pos < size) {
		u64 pg = pos >> VSMFS_BLOCK_SHIFT;
		u64 key = pg / VSMFS_VSP_PAGES, in = pg % VSMFS_VSP_PAGES;
		u64 piece_end = (key + 1) << VSMFS_VSP_SHIFT;
		size_t len = min3((u64)iov_iter_count(to), (u64)(size - pos), piece_end - pos);
		size_t n = 0;
		u64 e;

		down_read(&vi->i_idx_sem);
		e = vsmfs_idx_lookup(inode, key);
		pagefault_disable();
		if (e && in < vsmfs_idx_count(e)) {
			u64 run_end = ((key << VSMFS_VSP_SHIFT) +
				       (vsmfs_idx_count(e) << VSMFS_BLOCK_SHIFT));
			u64 off = pos - (key << VSMFS_VSP_SHIFT);
			bool ranged;
			char __pm *p;

			len = min_t(u64, len, run_end - pos);
			/* Up to a page on a bad frame, which reads EIO. */
			if (vsmfs_any_bad(sbi)) {
				u64 first = off >> VSMFS_BLOCK_SHIFT;
				u64 np = ((off + len - 1) >> VSMFS_BLOCK_SHIFT) - first + 1;
				u64 b = vsmfs_first_bad(sbi, vsmfs_idx_lpn(e) + first, np);

				if (b < np)
					len = b ? ((first + b) << VSMFS_BLOCK_SHIFT) - off : 0;
				if (!len) {
					done = done ?: -EIO;
					goto next;
				}
			}
			p = vsmfs_data_begin(sbi, vsmfs_idx_lpn(e), off, len, &ranged);
			if (p)
				n = vsmfs_fault(VSMFS_FAULT_PM_READ) ? 0 :
				    vsmfs_copy_to_iter(p, len, to);
			else if (!ranged)
				n = iov_iter_zero(len, to);	/* a hole */
			else
				done = done ?: -EFSCORRUPTED;
			vsmfs_data_end(ranged);
		} else {
			n = iov_iter_zero(len, to);
		}
next:
		pagefault_enable();
		up_read(&vi->i_idx_sem);
		pos += n;
		done += n;
		if (done < 0 || !len)
			break;
		if (n < len) {
			/*
			 * A fault on the user buffer: fault it in unlocked and
			 * go on. No progress twice in a row with the buffer
			 * present means the PM page itself is poisoned.
			 */
			if (fault_in_iov_iter_writeable(to, len - n) == len - n) {
				done = done ?: -EFAULT;
				break;
			}
			if (!n && stalled++) {
				done = done ?: -EIO;
				break;
			}
		} else {
			stalled = 0;
		}
	}
	inode_unlock_shared(inode);
	iocb->ki_pos = pos;
	file_accessed(iocb->ki_filp);
	return done;
}

static ssize_t vsmfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	u64 t0 = vsmfs_trace_start(vsmfs_read);
	loff_t pos = iocb->ki_pos;
	size_t len = iov_iter_count(to);
	ssize_t ret = vsmfs_do_read_iter(iocb, to);

	trace_vsmfs_read(file_inode(iocb->ki_filp), pos, len, ret, t0);
	return ret;
}

/* Source pages of an atomic write kept on the stack. */
#define VSMFS_WSRC_INLINE	4

/*
 * struct vsmfs_wsrc - the source of one atomic write, unable to fault
 * @iter: what the write copies from: held user pages, or a DRAM copy
 * @len: bytes in @iter, taken from the caller's iterator
 * @pages: the held user pages, @npages of them
 * @bvec: the segments of @iter over @pages
 * @bounce: the DRAM copy, or NULL
 */
struct vsmfs_wsrc {
	struct iov_iter		iter;
	size_t			len;
	struct page		**pages;
	struct bio_vec		*bvec;
	unsigned int		npages;
	void			*bounce;
	struct kvec		kvec;
	struct page		*pages_inl[VSMFS_WSRC_INLINE];
	struct bio_vec		bvec_inl[VSMFS_WSRC_INLINE];
};

static void vsmfs_wsrc_put(struct vsmfs_wsrc *s)
{
	unsigned int i;

	for (i = 0; i < s->npages; i++)
		put_page(s->pages[i]);
	s->npages = 0;
	if (s->pages != s->pages_inl)
		kvfree(s->pages);
	if (s->bvec != s->bvec_inl)
		kvfree(s->bvec);
	s->pages = s->pages_inl;
	s->bvec = s->bvec_inl;
	kvfree(s->bounce);
	s->bounce = NULL;
}

/*
 * Take up to @len bytes of @from as the source of an atomic write, in a
 * form the write can copy with page faults disabled and never come up
 * short: a write has no way back once it has begun swapping pages, so a
 * fault midway would commit half of it. User pages are held for the copy.
 * Pages of a DAX mapping (which may be the range being written: the write
 * removes its user mappings and waits for its pages to be released) and
 * memory the pages of which cannot be held are copied to DRAM instead,
 * with faults enabled, before the write takes any lock but the inode's.
 *
 * @from is advanced by s->len, which is short of @len only where the user
 * memory stops being readable.
 *
 * Return: 0, -EFAULT if no byte is readable, -ENOMEM.
 */
static int vsmfs_wsrc_get(struct vsmfs_sb_info *sbi, struct vsmfs_wsrc *s,
			  struct iov_iter *from, size_t len)
{
	size_t got = 0, off;
	bool bounce = false;
	ssize_t n;
	int maxp;

	s->pages = s->pages_inl;
	s->bvec = s->bvec_inl;
	s->npages = 0;
	s->bounce = NULL;
	if (!user_backed_iter(from)) {
		/* Kernel memory: the copy cannot fault. */
		s->iter = *from;
		iov_iter_truncate(&s->iter, len);
		s->len = iov_iter_count(&s->iter);
		iov_iter_advance(from, s->len);
		return 0;
	}
	maxp = iov_iter_npages_cap(from, INT_MAX, len);
	if (maxp > VSMFS_WSRC_INLINE) {
		s->pages = kvmalloc_array(maxp, sizeof(*s->pages), GFP_KERNEL);
		s->bvec = kvmalloc_array(maxp, sizeof(*s->bvec), GFP_KERNEL);
		if (!s->pages || !s->bvec)
			goto nomem;
	}
	while (got < len && s->npages < maxp && !bounce) {
		n = iov_iter_get_pages2(from, s->pages + s->npages, len - got,
					maxp - s->npages, &off);
		if (n <= 0)
			break;
		got += n;
		while (n > 0) {
			struct bio_vec *bv = &s->bvec[s->npages];

			bv->bv_page = s->pages[s->npages++];
			bv->bv_offset = off;
			bv->bv_len = min_t(size_t, n, PAGE_SIZE - off);
			if (is_zone_device_page(bv->bv_page))
				bounce = true;
			n -= bv->bv_len;
			off = 0;
		}
	}
	if (got == len && !bounce) {
		iov_iter_bvec(&s->iter, ITER_SOURCE, s->bvec, s->npages, got);
		s->len = got;
		return 0;
	}
	/* A DAX page, or memory get_user_pages() cannot take: copy it. */
	vsmfs_wsrc_put(s);
	iov_iter_revert(from, got);
	s->bounce = vsmfs_fault(VSMFS_FAULT_WSRC_ALLOC) ? NULL :
		    kvmalloc(len, GFP_KERNEL);
	if (!s->bounce)
		return -ENOMEM;
	s->len = copy_from_iter(s->bounce, len, from);
	if (!s->len) {
		vsmfs_wsrc_put(s);
		return -EFAULT;
	}
	s->kvec.iov_base = s->bounce;
	s->kvec.iov_len = s->len;
	iov_iter_kvec(&s->iter, ITER_SOURCE, &s->kvec, 1, s->len);
	vsmfs_stat_inc(sbi, write_bounces);
	return 0;
nomem:
	vsmfs_wsrc_put(s);
	return -ENOMEM;
}

/*
 * vsmfs_write_part() of up to @len bytes of @from taken first in a form
 * that cannot fault (vsmfs_wsrc_get()); apart from vsmfs_do_write_iter()
 * so that the common write does not set up this frame.
 * Return: the bytes written, or a negative errno (-EFAULT if none of @from
 * is readable).
 */
static noinline ssize_t vsmfs_write_held(struct inode *inode, loff_t pos, size_t len,
					 struct iov_iter *from, unsigned int flags)
{
	struct vsmfs_wsrc src;
	ssize_t n;
	int err;

	err = vsmfs_wsrc_get(VSMFS_SB(inode->i_sb), &src, from, len);
	if (err)
		return err;
	n = vsmfs_write_part(inode, pos, src.len, &src.iter, flags);
	/* Give back what the write did not take. */
	iov_iter_revert(from, src.len - max_t(ssize_t, n, 0));
	vsmfs_wsrc_put(&src);
	return n;
}

static ssize_t vsmfs_do_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	unsigned int data = READ_ONCE(sbi->s_data_mode);
	unsigned int cow = READ_ONCE(sbi->s_cow_mode);
	unsigned int flags;
	loff_t pos, end;
	ssize_t ret, done = 0;

	inode_lock(inode);
	/*
	 * A descriptor opened for writing before chattr +i or +a: the flags
	 * hold from then on, as they do for a new open (may_open()).
	 */
	ret = -EPERM;
	if (IS_IMMUTABLE(inode) || (IS_APPEND(inode) && !(iocb->ki_flags & IOCB_APPEND)))
		goto out_unlock;
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out_unlock;
	ret = file_remove_privs(file);
	if (ret)
		goto out_unlock;
	pos = iocb->ki_pos;
	end = pos + iov_iter_count(from);
	flags = end >= VSMFS_LARGE_FILE ? VSMFS_WM_LARGE : 0;
	if (data == VSMFS_DATA_ATOMIC)
		flags |= VSMFS_WM_ATOMIC | VSMFS_WM_COW(cow);

	while (pos < end) {
		size_t len;
		ssize_t n;

		if (data == VSMFS_DATA_ATOMIC) {
			len = vsmfs_atomic_part(sbi, cow, pos, end - pos, 0);
			/*
			 * Straight from the user's buffer, with faults
			 * disabled; a copy that stops at a fault leaves
			 * nothing done, and the part is made again from a
			 * source that cannot fault.
			 */
			n = -EAGAIN;
			if (user_backed_iter(from))
				n = vsmfs_write_part(inode, pos, len, from,
						     flags | VSMFS_WM_DIRECT);
			if (n == -EAGAIN)
				n = vsmfs_write_held(inode, pos, len, from, flags);
		} else {
			len = min_t(u64, end - pos,
				    VSMFS_PIECE_SIZE - (pos & (VSMFS_PIECE_SIZE - 1)));
			if (fault_in_iov_iter_readable(from, len) == len) {
				ret = -EFAULT;
				break;
			}
			n = vsmfs_write_part(inode, pos, len, from, flags);
		}
		if (n < 0) {
			ret = n;
			break;
		}
		pos += n;
		done += n;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	iocb->ki_pos = pos;
out_unlock:
	inode_unlock(inode);
	if (done > 0)
		return generic_write_sync(iocb, done);
	return ret;
}

static ssize_t vsmfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	u64 t0 = vsmfs_trace_start(vsmfs_write);
	loff_t pos = iocb->ki_pos;
	size_t len = iov_iter_count(from);
	ssize_t ret = vsmfs_do_write_iter(iocb, from);

	/* pos as asked: with O_APPEND the write went to the end. */
	trace_vsmfs_write(file_inode(iocb->ki_filp), pos, len, ret, t0);
	return ret;
}

/*
 * file_write_and_wait_range() when the mapping holds no DAX entry (nothing
 * to write back) and no error @file has not seen: nothing to do, and none
 * of its atomic clears of the mapping's legacy error bits, which would
 * have every fsync write a line the fsyncs of other CPUs write too.
 */
static int vsmfs_write_and_wait(struct file *file, loff_t start, loff_t end)
{
	struct address_space *mapping = file->f_mapping;

	if (!READ_ONCE(mapping->nrpages) &&
	    !errseq_check(&mapping->wb_err, READ_ONCE(file->f_wb_err)) &&
	    !(READ_ONCE(mapping->flags) & (BIT(AS_EIO) | BIT(AS_ENOSPC))))
		return 0;
	return file_write_and_wait_range(file, start, end);
}

/**
 * vsmfs_fsync() - make a file's data and metadata durable
 * @file: the file
 * @start: start of the range
 * @end: end of the range
 * @datasync: only data
 *
 * write() data is durable once the handle that made it reachable ended
 * (non-temporal stores and its fence); its metadata, and every other
 * change of the inode, once the running transaction that holds it
 * commits: this commits it, unless the inode's last change is committed
 * already. Data stored through a shared mapping sits in CPU caches until
 * written back here, and timestamps the VFS changed without a handle are
 * written first (with @datasync only when the size changed).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct inode *inode = file_inode(file);
	u64 t0 = vsmfs_trace_start(vsmfs_fsync);
	int ret;

	/* Stores through 1 GiB mappings, which no DAX entry tracks. */
	if (vsmfs_pud_writeback(inode, start, end))
		vsmfs_fence();
	ret = vsmfs_write_and_wait(file, start, end);
	/*
	 * An inode neither dirty nor being written back has nothing for
	 * the VFS to write: its last write_inode() set i_tid before the
	 * flusher cleared I_SYNC under i_lock (a release), read here first.
	 */
	if (!ret && !datasync && (smp_load_acquire(&inode->i_state) & (I_DIRTY_ALL | I_SYNC)))
		ret = sync_inode_metadata(inode, 1);
	/*
	 * Mapped data written back above was fenced where it was flushed
	 * (vsmfs_dax_writepages()); a file never dirtied through a mapping
	 * needs no fence here.
	 */
	if (!ret)
		ret = vsmfs_sync_inode(inode, VSMFS_COMMIT_FSYNC);
	/*
	 * A transaction of the inode dropped unwritten (an overflow under
	 * errors=continue, which leaves s_lost_tid alone) marked the mapping
	 * before s_commit_tid moved past it (vsmfs_trans_lost()): the commit
	 * this fsync waited for may be that one.
	 */
	if (!ret) {
		smp_rmb();	/* s_commit_tid, read above, before the mark */
		if (errseq_check(&file->f_mapping->wb_err, READ_ONCE(file->f_wb_err)))
			ret = file_check_and_advance_wb_err(file);
	}
	trace_vsmfs_fsync(inode, start, end - start + 1, ret, t0);
	return ret;
}

static int vsmfs_open(struct inode *inode, struct file *file)
{
	int ret = generic_file_open(inode, file);

	if (!ret)
		vsmfs_aggr_open(inode, file);
	return ret;
}

/* Blocks the shared handle of a tail's release may add: the inode's, a bitmap block. */
#define VSMFS_TAIL_SHARED_CREDITS	2

/* Release @inode's tail in @t: see vsmfs_release(). Return: 0 or a negative errno. */
static int vsmfs_release_tail(struct vsmfs_trans *t, struct inode *inode, u64 *freed)
{
	int ret;

	vsmfs_trans_track(t, inode, false);
	ret = vsmfs_tail_release(t, inode, freed);
	if (!ret && *freed)
		VSMFS_I(inode)->i_flags |= VSMFS_IFLAG_TAIL_RELEASED;
	return ret ?: vsmfs_mark_inode_dirty(t, inode);
}

/*
 * Last close of a file open for writing (ZFDM): the reserved tail of its
 * last VSP goes back to the allocator (vsmfs_tail_release()) and the inode
 * is flagged, so the next append moves the last run into a fresh VSP by
 * swapping entries. In a shared metadata handle beside other operations
 * (vsmfs_trans_begin_shared()), which frees the tail's pages when the
 * running transaction commits and changes the inode's slot, or else in a
 * handle under s_trans_mutex.
 */
static int vsmfs_release(struct inode *inode, struct file *file)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	/* Set up by the calls that begin it: not zeroed at every close. */
	struct vsmfs_trans t __uninitialized;
	u64 freed = 0;
	int ret;

	if (!vsmfs_aggr_release(inode, file) || !READ_ONCE(vi->i_tail_key))
		return 0;
	inode_lock(inode);
	down_write(&vi->i_idx_sem);
	if (vi->i_tail_key && !sb_rdonly(inode->i_sb)) {
		u64 key = vi->i_tail_key - 1;

		ret = -EAGAIN;
		if (!vsmfs_trans_begin_shared(sbi, &t, VSMFS_TAIL_SHARED_CREDITS, 1)) {
			ret = vsmfs_release_tail(&t, inode, &freed);
			/* The in-core inode goes back to its slot's. */
			if (ret == -EAGAIN)
				vsmfs_trans_abort(&t);
			else
				ret = vsmfs_trans_end(&t, ret);
		}
		if (ret == -EAGAIN) {
			vsmfs_trans_begin(sbi, &t);
			ret = vsmfs_trans_end(&t, vsmfs_release_tail(&t, inode, &freed));
		}
		if (ret)
			vsmfs_err_ratelimited(inode->i_sb, "inode %lu: releasing the tail failed: %d",
					      inode->i_ino, ret);
		else if (freed) {
			trace_vsmfs_zfdm(inode, key, freed, false);
			vsmfs_stat_inc(sbi, zfdm_reclaims);
			vsmfs_stat_add(sbi, zfdm_reclaimed_pages, freed);
		}
	}
	up_write(&vi->i_idx_sem);
	inode_unlock(inode);
	return 0;
}

static loff_t vsmfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct inode *inode = file_inode(file);

	switch (whence) {
	case SEEK_DATA:
	case SEEK_HOLE:
		inode_lock_shared(inode);
		if (whence == SEEK_DATA)
			offset = iomap_seek_data(inode, offset, &vsmfs_iomap_ops);
		else
			offset = iomap_seek_hole(inode, offset, &vsmfs_iomap_ops);
		inode_unlock_shared(inode);
		if (offset < 0)
			return offset;
		return vfs_setpos(file, offset, inode->i_sb->s_maxbytes);
	default:
		return generic_file_llseek(file, offset, whence);
	}
}

static int vsmfs_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
			u64 start, u64 len)
{
	int ret;

	inode_lock_shared(inode);
	ret = iomap_fiemap(inode, fieinfo, start, len, &vsmfs_iomap_report_ops);
	inode_unlock_shared(inode);
	return ret;
}

const struct file_operations vsmfs_file_operations = {
	.llseek		= vsmfs_llseek,
	.read_iter	= vsmfs_read_iter,
	.write_iter	= vsmfs_write_iter,
	.mmap		= vsmfs_file_mmap,
	.mmap_supported_flags = MAP_SYNC,
	/* 2 MiB aligned addresses, so a superpage can be mapped with one PMD. */
	.get_unmapped_area = vsmfs_get_unmapped_area,
	.open		= vsmfs_open,
	.release	= vsmfs_release,
	.fsync		= vsmfs_fsync,
	.fallocate	= vsmfs_fallocate,
	.unlocked_ioctl	= vsmfs_ioctl,
	.compat_ioctl	= vsmfs_compat_ioctl,
	.splice_read	= generic_file_splice_read,
	.splice_write	= iter_file_splice_write,
};

const struct inode_operations vsmfs_file_inode_operations = {
	.getattr	= vsmfs_getattr,
	.update_time	= vsmfs_update_time,
	.setattr	= vsmfs_setattr,
	.fiemap		= vsmfs_fiemap,
	.fileattr_get	= vsmfs_fileattr_get,
	.fileattr_set	= vsmfs_fileattr_set,
	.listxattr	= vsmfs_listxattr,
	.get_acl	= vsmfs_get_acl,
	.set_acl	= vsmfs_set_acl,
};
