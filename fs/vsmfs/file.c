// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs regular files: read and write through the mapping layer.
 *
 * Each 2 MiB piece of a file is backed by one run of contiguous logical
 * pages, so a read or write of a piece is one copy through the kernel
 * virtual range. A run grows in place when the logical pages after it are
 * free, and is moved to a longer run otherwise.
 *
 * Ordering: new data is written with non-temporal stores (or flushed) and
 * the transaction that makes it reachable (index entry, size) commits
 * after a fence, so a crash never exposes unwritten pages. Overwrites of
 * existing pages are done in place.
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include "vsmfs.h"
#include "pmem.h"

/* Files whose end passes this get runs starting at free superpages. */
#define VSMFS_LARGE_FILE	(256 * 1024)

static ssize_t vsmfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t pos = iocb->ki_pos, size;
	ssize_t done = 0;

	if (!iov_iter_count(to))
		return 0;
	inode_lock_shared(inode);
	size = i_size_read(inode);
	while (iov_iter_count(to) && pos < size) {
		u64 pg = pos >> VSMFS_BLOCK_SHIFT;
		u64 key = pg / VSMFS_VSP_PAGES, in = pg % VSMFS_VSP_PAGES;
		u64 e = vsmfs_idx_lookup(inode, key);
		u64 piece_end = (key + 1) << VSMFS_VSP_SHIFT;
		size_t len = min3((u64)iov_iter_count(to), (u64)(size - pos), piece_end - pos);
		size_t n;

		if (e && in < vsmfs_idx_count(e)) {
			u64 run_end = ((key << VSMFS_VSP_SHIFT) +
				       (vsmfs_idx_count(e) << VSMFS_BLOCK_SHIFT));
			char *p = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e));

			len = min_t(u64, len, run_end - pos);
			if (!p) {
				done = done ?: -EFSCORRUPTED;
				break;
			}
			p += pos - (key << VSMFS_VSP_SHIFT);
			n = vsmfs_copy_to_iter(p, len, to);
		} else {
			if (e)
				len = min_t(u64, len, piece_end - pos);
			n = iov_iter_zero(len, to);
		}
		pos += n;
		done += n;
		if (n < len) {
			if (!done)
				done = -EFAULT;
			break;
		}
	}
	inode_unlock_shared(inode);
	iocb->ki_pos = pos;
	file_accessed(iocb->ki_filp);
	return done;
}

/* Zero [from, to) of the kernel range, durable after the next fence. */
static void vsmfs_zero(char *p, size_t len)
{
	memset(p, 0, len);
	vsmfs_flush(p, len);
}

/*
 * Make the run of piece @key cover pages [0, @need) of the piece. New pages
 * outside [@wfrom, @wto) (byte offsets in the piece that the write will
 * fill) are zeroed. The run's first logical page is returned in @runp.
 */
static int vsmfs_extend_run(struct vsmfs_trans *t, struct inode *inode, u64 key,
			    u64 need, u64 wfrom, u64 wto, bool large, u64 *runp)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 e = vsmfs_idx_lookup(inode, key);
	u64 have = e ? vsmfs_idx_count(e) : 0, lpn = vsmfs_idx_lpn(e), nlpn;
	char *base;
	int ret;

	*runp = lpn;
	if (have >= need)
		return 0;
	if (have && !vsmfs_alloc_pages_at(t, lpn + have, need - have)) {
		nlpn = lpn;
	} else {
		ret = vsmfs_alloc_pages(t, need, large, &nlpn);
		if (ret)
			return ret;
		if (have) {
			/* Move the run: copy its pages, then free the old ones. */
			vsmfs_memcpy_nt(vsmfs_lpn_ptr(sbi, nlpn), vsmfs_lpn_ptr(sbi, lpn),
					have << VSMFS_BLOCK_SHIFT);
			ret = vsmfs_free_pages(t, lpn, have);
			if (ret)
				return ret;
		}
	}
	base = vsmfs_lpn_ptr(sbi, nlpn);
	/* Zero the new pages around the part the write fills. */
	if (wfrom > have << VSMFS_BLOCK_SHIFT)
		vsmfs_zero(base + (have << VSMFS_BLOCK_SHIFT),
			   wfrom - (have << VSMFS_BLOCK_SHIFT));
	if (wto < need << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wto, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero(base + z, (need << VSMFS_BLOCK_SHIFT) - z);
	}
	VSMFS_I(inode)->i_pages += need - have;
	*runp = nlpn;
	return vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, need));
}

static ssize_t vsmfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_trans t;
	loff_t pos, end, old_size;
	ssize_t ret, done = 0;
	bool large;

	inode_lock(inode);
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out_unlock;
	ret = file_remove_privs(file);
	if (ret)
		goto out_unlock;
	pos = iocb->ki_pos;
	end = pos + iov_iter_count(from);
	old_size = i_size_read(inode);
	large = end >= VSMFS_LARGE_FILE;

	vsmfs_trans_begin(sbi, &t);
	while (pos < end) {
		u64 key = pos >> VSMFS_VSP_SHIFT;
		u64 pstart = key << VSMFS_VSP_SHIFT;
		u64 wto = min_t(u64, end, pstart + (1ULL << VSMFS_VSP_SHIFT));
		u64 need = DIV_ROUND_UP(wto - pstart, VSMFS_BLOCK_SIZE);
		size_t len = wto - pos, n;
		u64 run;

		ret = vsmfs_extend_run(&t, inode, key, need, pos - pstart, wto - pstart, large,
				       &run);
		if (ret)
			break;
		n = vsmfs_copy_from_iter(vsmfs_lpn_ptr(sbi, run) +
					      (pos - pstart), len, from);
		pos += n;
		done += n;
		if (n < len) {
			ret = -EFAULT;
			break;
		}
	}
	if (done) {
		if (pos > old_size)
			i_size_write(inode, pos);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
		inode->i_blocks = VSMFS_I(inode)->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	}
	/*
	 * Pages allocated past what was written (a short copy, or a failed
	 * allocation in a later piece) are released again.
	 */
	if (ret && i_size_read(inode) < end) {
		loff_t real = i_size_read(inode);

		i_size_write(inode, end);
		vsmfs_truncate_t(&t, inode, real);
	}
	{
		int err = vsmfs_write_inode_t(&t, inode);

		err = vsmfs_trans_commit(&t) ?: err;
		if (err && !ret)
			ret = err;
	}
	iocb->ki_pos = pos;
out_unlock:
	inode_unlock(inode);
	if (done > 0) {
		done = generic_write_sync(iocb, done);
		return done;
	}
	return ret;
}

/**
 * vsmfs_fsync() - make a file's data and metadata durable
 * @file: the file
 * @start: start of the range
 * @end: end of the range
 * @datasync: only data
 *
 * Every write and metadata change is durable when its system call returns
 * (data by non-temporal stores and a fence, metadata by a synchronous
 * commit), so there is nothing left to write.
 *
 * Return: 0.
 */
int vsmfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	vsmfs_fence();
	return 0;
}

const struct file_operations vsmfs_file_operations = {
	.llseek		= generic_file_llseek,
	.read_iter	= vsmfs_read_iter,
	.write_iter	= vsmfs_write_iter,
	.open		= generic_file_open,
	.fsync		= vsmfs_fsync,
	.splice_read	= generic_file_splice_read,
};

const struct inode_operations vsmfs_file_inode_operations = {
	.setattr	= vsmfs_setattr,
	.listxattr	= vsmfs_listxattr,
	.get_acl	= vsmfs_get_acl,
	.set_acl	= vsmfs_set_acl,
};
