// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs regular files: read and write through the mapping layer, DAX
 * mmap, fallocate, SEEK_DATA/SEEK_HOLE and FIEMAP.
 *
 * Each 2 MiB piece of a file is backed by one run of contiguous logical
 * pages, so a read or write of a piece is one copy through the kernel
 * virtual range. A run grows in place when the logical pages after it are
 * free; otherwise a longer run is allocated and the frames holding the
 * file's data are swapped into it (vsmfs_swap_pages()), so no data is
 * copied and the physical pages a user mapping points at stay the same.
 *
 * Ordering: new data is written with non-temporal stores (or flushed) and
 * the transaction that makes it reachable (index entry, page table swaps,
 * size) commits after a fence, so a crash never exposes unwritten pages.
 * Overwrites of existing pages are done in place.
 *
 * Locking: see struct vsmfs_inode_info. Copies to and from user memory
 * happen with page faults disabled while i_idx_sem or a transaction is
 * held, since the fault may be on a mapping of a vsmfs file. A read cut
 * short by a fault is retried after faulting the user pages in unlocked;
 * an atomic write cannot be cut (it has no way back once it has begun
 * changing the file), so its source is made unable to fault before it
 * starts, see vsmfs_wsrc_get().
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
#include "trace.h"
#include "pmem.h"
#include "fault.h"

/* Files whose end passes this get runs starting at free superpages. */
#define VSMFS_LARGE_FILE	(256 * 1024)

#define VSMFS_PIECE_SIZE	(1ULL << VSMFS_VSP_SHIFT)

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
		vsmfs_vsp_enter();
		pagefault_disable();
		if (e && in < vsmfs_idx_count(e)) {
			u64 run_end = ((key << VSMFS_VSP_SHIFT) +
				       (vsmfs_idx_count(e) << VSMFS_BLOCK_SHIFT));
			char __pm *p = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e));

			len = min_t(u64, len, run_end - pos);
			if (p)
				n = vsmfs_fault(VSMFS_FAULT_PM_READ) ? 0 :
				    vsmfs_copy_to_iter(p + (pos - (key << VSMFS_VSP_SHIFT)),
						       len, to);
			else
				done = done ?: -EFSCORRUPTED;
		} else {
			n = iov_iter_zero(len, to);
		}
		pagefault_enable();
		vsmfs_vsp_exit();
		up_read(&vi->i_idx_sem);
		pos += n;
		done += n;
		if (done < 0)
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

/*
 * Make the run of piece @key cover pages [0, @need) of the piece. New pages
 * outside [@wfrom, @wto) (byte offsets in the piece that the caller will
 * fill) are zeroed. The run's first logical page is returned in @runp, the
 * pages it had before in @havep.
 *
 * Where the run grows (ZFDM): into the reserved tail of its VSP if it owns
 * one; in place if the pages after it are free; otherwise into a new run
 * whose frames are swapped with the old one's (vsmfs_swap_pages()), so file
 * data keeps its frames and no data is copied. A large file whose tail was
 * given back at its last close takes a fresh VSP on its next append the
 * same way, and so does the last run of a small file that grows large. A
 * large file's last run that starts a VSP reserves the rest of it, so
 * further appends grow in place.
 *
 * Context: i_idx_sem held for writing, inside @t.
 */
static int vsmfs_extend_run(struct vsmfs_trans *t, struct inode *inode, u64 key,
			    u64 need, u64 wfrom, u64 wto, bool large, u64 *runp, u64 *havep)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 e = vsmfs_idx_lookup(inode, key);
	u64 have = e ? vsmfs_idx_count(e) : 0, lpn = vsmfs_idx_lpn(e), nlpn, freed;
	bool tail = vi->i_tail_key == key + 1, last = key + 1 >= vi->i_tail_key;
	/*
	 * The last run of a large file moves into a fresh VSP when it has none
	 * of its own: its tail was given back, or it started in a VSP shared
	 * with small files before the file grew large.
	 */
	bool zfdm = large && have && last && !tail &&
		    ((vi->i_flags & VSMFS_IFLAG_TAIL_RELEASED) || lpn % VSMFS_VSP_PAGES);
	struct vsmfs_swap sw;
	char __pm *base;
	int ret;

	*runp = lpn;
	*havep = have;
	if (have >= need)
		return 0;
	/* Index blocks first: once pages are taken, nothing below can fail. */
	ret = vsmfs_idx_set(t, inode, key, e);
	if (ret)
		return ret;
	if (tail && need > have + vsmfs_tail_pages(e)) {
		ret = vsmfs_tail_release_t(t, inode, &freed);
		if (ret)
			return ret;
		tail = false;
	}
	if (zfdm && lpn % VSMFS_VSP_PAGES == 0 &&
	    !vsmfs_alloc_pages_at(t, lpn + have, VSMFS_VSP_PAGES - have)) {
		/* The rest of the VSP is still free: reserve it again in place. */
		if (vi->i_tail_key) {
			ret = vsmfs_tail_release_t(t, inode, &freed);
			if (ret)
				return ret;
		}
		vi->i_pages += VSMFS_VSP_PAGES - have;
		vi->i_tail_key = key + 1;
		vi->i_flags &= ~VSMFS_IFLAG_TAIL_RELEASED;
		tail = true;
	}
	if (tail) {
		/* Pages of the reserved tail, owned and counted already. */
		nlpn = lpn;
	} else if (have && !zfdm && lpn % VSMFS_VSP_PAGES + need <= VSMFS_VSP_PAGES &&
		   !vsmfs_alloc_pages_at(t, lpn + have, need - have)) {
		/* Grown in place: the run stays inside its VSP. */
		nlpn = lpn;
		vi->i_pages += need - have;
	} else {
		ret = vsmfs_alloc_pages(t, need, large, &nlpn);
		if (ret)
			return ret;
		vi->i_pages += need;
		if (have) {
			/* Move the run: swap its frames in, free the old pages. */
			vsmfs_swap_init(sbi, &sw);
			ret = vsmfs_swap_pages(t, &sw, lpn, nlpn, have);
			if (!ret) {
				ret = vsmfs_free_pages(t, lpn, have);
				/*
				 * The index still names @lpn: its frames go
				 * back (the page table blocks are cached now,
				 * so this swap cannot fail).
				 */
				if (ret)
					vsmfs_swap_pages(t, &sw, lpn, nlpn, have);
			}
			vsmfs_swap_flush(&sw);
			if (ret) {
				vsmfs_free_pages(t, nlpn, need);
				vi->i_pages -= need;
				return ret;
			}
			vi->i_pages -= have;
			trace_vsmfs_zfdm(inode, key, have, true);
			vsmfs_stat_inc(sbi, zfdm_migrations);
			vsmfs_stat_add(sbi, zfdm_migrated_pages, have);
		}
	}
	base = vsmfs_lpn_ptr(sbi, nlpn);
	/* Zero the new pages around the part the caller fills. */
	if (wfrom > have << VSMFS_BLOCK_SHIFT)
		vsmfs_zero_pm(base + (have << VSMFS_BLOCK_SHIFT),
			      wfrom - (have << VSMFS_BLOCK_SHIFT));
	if (wto < need << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wto, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm(base + z, (need << VSMFS_BLOCK_SHIFT) - z);
	}
	if (tail && (nlpn + need) % VSMFS_VSP_PAGES == 0) {
		/* The run fills its VSP: nothing is reserved any more. */
		vi->i_tail_key = 0;
	} else if (!tail && large && last && nlpn % VSMFS_VSP_PAGES == 0 &&
		   need < VSMFS_VSP_PAGES &&
		   !vsmfs_alloc_pages_at(t, nlpn + need, VSMFS_VSP_PAGES - need)) {
		/* A large file's last run reserves the rest of its VSP. */
		if (vi->i_tail_key) {
			ret = vsmfs_tail_release_t(t, inode, &freed);
			if (ret) {
				vsmfs_free_pages(t, nlpn + need, VSMFS_VSP_PAGES - need);
				goto out;
			}
		}
		vi->i_pages += VSMFS_VSP_PAGES - need;
		vi->i_tail_key = key + 1;
		vi->i_flags &= ~VSMFS_IFLAG_TAIL_RELEASED;
	}
out:
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	*runp = nlpn;
	return vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, need));
}

/*
 * Write into pages of piece @key past its run: they are new, so they are
 * written directly and become visible with the transaction. [@wfrom, @wto)
 * are byte offsets in the piece. Returns the bytes copied, or an errno.
 */
static ssize_t vsmfs_write_new(struct vsmfs_trans *t, struct inode *inode, u64 key,
			       u64 wfrom, u64 wto, struct iov_iter *from, bool large)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE), run, have;
	size_t n;
	char __pm *p;
	int ret;

	ret = vsmfs_extend_run(t, inode, key, need, wfrom, wto, large, &run, &have);
	if (ret)
		return ret;
	p = vsmfs_lpn_ptr(sbi, run);
	pagefault_disable();
	n = vsmfs_copy_from_iter(p + wfrom, wto - wfrom, from);
	pagefault_enable();
	/* New pages the copy did not reach must not keep old contents. */
	if (wfrom + n < wto && wto > have << VSMFS_BLOCK_SHIFT) {
		u64 z = max(wfrom + n, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm(p + z, wto - z);
	}
	if (have << VSMFS_BLOCK_SHIFT > wfrom)
		vsmfs_stat_add(sbi, data_inplace_bytes,
			       min(wfrom + n, have << VSMFS_BLOCK_SHIFT) - wfrom);
	vsmfs_stat_add(sbi, data_user_bytes, n);
	return n;
}

/*
 * Write the part of one piece at @pos, at most @len bytes, in place, in one
 * transaction (data=inplace). Returns the bytes copied (possibly short
 * after a fault on the user buffer) or a negative errno.
 */
static ssize_t vsmfs_write_inplace(struct inode *inode, loff_t pos, size_t len,
				   struct iov_iter *from, bool large)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 key = pos >> VSMFS_VSP_SHIFT, wfrom = pos - (key << VSMFS_VSP_SHIFT);
	loff_t size = i_size_read(inode);
	struct vsmfs_trans t;
	ssize_t n;
	int err;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	vsmfs_trans_track(&t, inode, false);
	/* Data stored in place stays: the inode is written whatever follows. */
	err = vsmfs_inode_get_write_access(&t, inode);
	if (err) {
		vsmfs_trans_abort(&t);
		up_write(&vi->i_idx_sem);
		return err;
	}
	/* Bytes between the old end and the write may have been mapped. */
	if (pos > size)
		vsmfs_zero_mapped(inode, size,
				  min_t(loff_t, pos, round_up(size, VSMFS_BLOCK_SIZE)));
	n = vsmfs_write_new(&t, inode, key, wfrom, wfrom + len, from, large);
	if (n > 0) {
		if (pos + n > size)
			i_size_write(inode, pos + n);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
	}
	err = vsmfs_write_inode_t(&t, inode);
	/* Nothing written: the pages allocated for it are given back. */
	if (n <= 0 || err)
		vsmfs_trans_abort(&t);
	else
		/* The fence in the commit makes the data durable before the index. */
		err = vsmfs_trans_commit(&t);
	up_write(&vi->i_idx_sem);
	if (n < 0)
		return n;
	return err ?: n;
}

static int vsmfs_break_layouts_range(struct inode *inode, loff_t start, loff_t end);

/*
 * Longest part of a write made in one transaction, whatever the journal
 * size: it bounds the user pages held and the scratch runs remembered.
 */
#define VSMFS_ATOMIC_MAX	(64ULL << 20)

/*
 * Worst case of the metadata blocks one copy-on-write transaction dirties
 * (vsmfs_write_atomic()) for a range spanning @keys pieces and @pages
 * pages, with cow= mode @cow. Each term counts distinct blocks, as if no
 * two of them shared a block:
 *
 * - the inode's block: 1;
 * - index blocks: a range within one piece reaches one entry, in the
 *   inode, the single indirect block, or the double indirect block and
 *   one block below it; each may be new, and then dirties its bitmap
 *   block as well: 4. A longer range reaches at most 2 +
 *   DIV_ROUND_UP(@keys, 512) index blocks (the single indirect block, the
 *   double indirect block and the blocks below it), each with its bitmap
 *   block;
 * - per piece, growing its run (vsmfs_extend_run()): the bitmap blocks of
 *   the old run, the new run and a tail given back, the page table blocks
 *   of the old and the new run: 5; replacing it whole (vsmfs_cow_whole())
 *   takes the bitmap blocks of the new and the old run, fewer;
 * - fine grain (cow=multi falls back to it when no whole run is free,
 *   cow=page always): the page table block of the run, 1 more per piece,
 *   and one page table block per scratch run, at worst one per page, as
 *   scattered free space gives runs of one page. Scratch runs are never
 *   journaled in the bitmap (vsmfs_reserve_pages()).
 */
static u64 vsmfs_cow_blocks(unsigned int cow, u64 keys, u64 pages)
{
	u64 n = 1;

	n += keys == 1 ? 4 : 2 * (2 + DIV_ROUND_UP(keys, VSMFS_IND_ENTRIES));
	if (cow == VSMFS_COW_SUPERPAGE)
		return n + 5 * keys;
	return n + 6 * keys + pages;
}

/* Worst case of vsmfs_cow_blocks() for [@pos, @pos + @len), @len > 0. */
static u64 vsmfs_cow_blocks_at(unsigned int cow, u64 pos, u64 len)
{
	u64 last = pos + len - 1;

	return vsmfs_cow_blocks(cow, (last >> VSMFS_VSP_SHIFT) - (pos >> VSMFS_VSP_SHIFT) + 1,
				(last >> VSMFS_BLOCK_SHIFT) - (pos >> VSMFS_BLOCK_SHIFT) + 1);
}

/* Worst case of vsmfs_cow_blocks() for @len bytes anywhere in a file. */
static u64 vsmfs_cow_blocks_any(unsigned int cow, u64 len)
{
	return vsmfs_cow_blocks(cow, DIV_ROUND_UP(len - 1, VSMFS_PIECE_SIZE) + 1,
				DIV_ROUND_UP(len - 1, VSMFS_BLOCK_SIZE) + 1);
}

/**
 * vsmfs_atomic_write_max() - the longest write() that is atomic
 * @sbi: the file system
 * @cow: cow= mode
 *
 * Every write() of up to this many bytes, wherever it lies in the file,
 * is made in one transaction, whose worst case (vsmfs_cow_blocks()) fits
 * in the journal; longer writes are split into parts that fit. At most
 * VSMFS_ATOMIC_MAX; at least one byte.
 *
 * Return: the length in bytes.
 */
u64 vsmfs_atomic_write_max(struct vsmfs_sb_info *sbi, unsigned int cow)
{
	u64 room = vsmfs_trans_max_blocks(sbi), lo = 1, hi = VSMFS_ATOMIC_MAX;

	if (vsmfs_cow_blocks_any(cow, hi) <= room)
		return hi;
	/* vsmfs_cow_blocks_any() grows with the length: the last that fits. */
	while (lo < hi) {
		u64 mid = lo + (hi - lo + 1) / 2;

		if (vsmfs_cow_blocks_any(cow, mid) <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * The next part of an atomic write of @len bytes at @pos: all of it if no
 * longer than vsmfs_atomic_write_max(), else the longest part from @pos
 * whose worst case, and @extra blocks the caller dirties besides, fits in
 * the journal (at least one byte).
 */
static u64 vsmfs_atomic_part(struct vsmfs_sb_info *sbi, unsigned int cow, u64 pos, u64 len,
			     u32 extra)
{
	u64 room = vsmfs_trans_max_blocks(sbi) - extra, lo = 1, hi;

	if (!extra && len <= vsmfs_atomic_write_max(sbi, cow))
		return len;
	hi = min_t(u64, len, VSMFS_ATOMIC_MAX);
	while (lo < hi) {
		u64 mid = lo + (hi - lo + 1) / 2;

		if (vsmfs_cow_blocks_at(cow, pos, mid) <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * A run of logical pages freed when a copy-on-write write commits; a
 * scratch run was only reserved (vsmfs_reserve_pages()).
 */
struct vsmfs_cow_run {
	u64	lpn, count;
	bool	scratch;
};

/* Runs a small write keeps on the stack rather than in an allocation. */
#define VSMFS_COW_FREE_STACK	8

/*
 * struct vsmfs_cow - one copy-on-write write() in progress
 *
 * @free holds runs that become free when the write commits: the old runs
 * of pieces replaced whole, and the fresh pages that received the old
 * frames of swapped pages. They still hold the old version, which a crash
 * before the commit must find intact, so they are freed only at the end,
 * when no allocation of this transaction can take them any more. The
 * fresh pages are free before the write and after it: they are only
 * reserved in DRAM (vsmfs_reserve_pages()), so the bitmap is not journaled
 * for them.
 */
struct vsmfs_cow {
	struct vsmfs_trans	*t;
	struct vsmfs_swap	sw;
	unsigned int		mode;		/* VSMFS_COW_* */
	bool			large;
	bool			cowed;		/* existing pages were replaced */
	unsigned int		nfree, maxfree;
	struct vsmfs_cow_run	*free;
	/* For the trace event: pieces replaced whole or in part, and so on. */
	unsigned int		ncoarse, nfine;
	u64			nswapped, nmerged;
};

static int vsmfs_cow_defer_free(struct vsmfs_cow *c, u64 lpn, u64 count, bool scratch)
{
	if (WARN_ON_ONCE(c->nfree >= c->maxfree))
		return -EINVAL;
	c->free[c->nfree].lpn = lpn;
	c->free[c->nfree].count = count;
	c->free[c->nfree].scratch = scratch;
	c->nfree++;
	return 0;
}

/*
 * Fresh logical pages for up to *@count pages, fewer if space is scattered,
 * reserved for this write alone: given back before it commits.
 */
static int vsmfs_cow_alloc(struct vsmfs_cow *c, u64 *count, u64 *lpn)
{
	int ret;

	for (;;) {
		ret = vsmfs_reserve_pages(c->t, *count, lpn);
		if (ret != -ENOSPC || *count == 1)
			return ret;
		*count /= 2;
	}
}

/*
 * Merge @len bytes of an old page at @src into the fresh page at @dst:
 * durable after the next fence (vsmfs_copy_mc_pm()). A poisoned @src
 * fails the merge rather than the machine, and the caller gives up the
 * fresh page, so the file keeps its old page.
 * Return: 0, or -EIO if @src could not be read.
 */
static int vsmfs_merge_old(void __pm *dst, const void __pm *src, size_t len)
{
	if (!len)
		return 0;
	if (vsmfs_fault(VSMFS_FAULT_PM_READ) || vsmfs_copy_mc_pm(dst, src, len))
		return -EIO;
	return 0;
}

/*
 * Replace piece @key whole (cow=multi: the write covers it; cow=superpage:
 * any write): a new run gets the user data, and the old content the write
 * does not cover, then the index entry is switched to it. Returns the
 * bytes written, or an errno; -ENOSPC before anything changed if no run of
 * the size is free, -EIO before anything changed if old content to keep
 * cannot be read.
 */
static ssize_t vsmfs_cow_whole(struct vsmfs_cow *c, struct inode *inode, u64 key,
			       u64 wfrom, u64 wto, struct iov_iter *from)
{
	struct vsmfs_trans *t = c->t;
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 e = vsmfs_idx_lookup(inode, key), lpn = vsmfs_idx_lpn(e);
	u64 have = vsmfs_idx_count(e), oldend = have << VSMFS_BLOCK_SHIFT;
	u64 cnt = max_t(u64, have, DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE)), nlpn, freed, end, copied;
	char __pm *new, *old;
	size_t n;
	int ret;

	ret = vsmfs_alloc_pages(t, cnt, c->large || cnt == VSMFS_VSP_PAGES, &nlpn);
	if (ret)
		return ret;
	new = vsmfs_lpn_ptr(sbi, nlpn);
	old = vsmfs_lpn_ptr(sbi, lpn);
	pagefault_disable();
	n = vsmfs_copy_from_iter(new + wfrom, wto - wfrom, from);
	pagefault_enable();
	end = wfrom + n;
	/* The old content around what was written, zeros past the old run. */
	ret = vsmfs_merge_old(new, old, min(wfrom, oldend));
	if (!ret && end < oldend)
		ret = vsmfs_merge_old(new + end, old + end, oldend - end);
	if (ret)
		goto fail;
	if (wfrom > oldend)
		vsmfs_zero_pm(new + oldend, wfrom - oldend);
	end = max(end, oldend);
	if (end < cnt << VSMFS_BLOCK_SHIFT)
		vsmfs_zero_pm(new + end, (cnt << VSMFS_BLOCK_SHIFT) - end);
	copied = min(wfrom, oldend) + (wfrom + n < oldend ? oldend - wfrom - n : 0);
	if (c->mode == VSMFS_COW_SUPERPAGE)
		vsmfs_stat_add(sbi, data_cow_copy_bytes, copied);
	else
		vsmfs_stat_add(sbi, data_merge_bytes, copied);
	c->nmerged += copied;

	if (vi->i_tail_key == key + 1) {
		ret = vsmfs_tail_release_t(t, inode, &freed);
		if (ret)
			goto fail;
	}
	ret = vsmfs_idx_set(t, inode, key, vsmfs_idx_make(nlpn, cnt));
	if (ret)
		goto fail;
	vsmfs_cow_defer_free(c, lpn, have, false);
	vi->i_pages += cnt - have;
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	c->cowed = true;
	c->ncoarse++;
	if (c->mode == VSMFS_COW_MULTI)
		vsmfs_stat_inc(sbi, mcow_coarse);
	vsmfs_stat_add(sbi, data_user_bytes, n);
	return n;
fail:
	vsmfs_free_pages(t, nlpn, cnt);
	return ret;
}

/*
 * Copy-on-write of part of piece @key (fine grain): pages past the run are
 * added and written directly; each existing page the write touches is
 * written into a fresh logical page, with the untouched bytes of a partly
 * written page merged from the old one, and the page table entries of old
 * and fresh pages are swapped. The file's logical pages then reach the new
 * frames; the fresh logical pages, holding the old frames, are freed at the
 * end of the write. Returns the bytes written, or an errno. A page whose old
 * bytes cannot be read (-EIO) is left as it is, and so is the rest.
 */
static ssize_t vsmfs_cow_fine(struct vsmfs_cow *c, struct inode *inode, u64 key,
			      u64 wfrom, u64 wto, struct iov_iter *from)
{
	struct vsmfs_trans *t = c->t;
	struct vsmfs_sb_info *sbi = t->t_sbi;
	u64 need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE), lpn, have, pg, exend;
	ssize_t done = 0;
	int ret;

	ret = vsmfs_extend_run(t, inode, key, need, wfrom, wto, c->large, &lpn, &have);
	if (ret)
		return ret;
	exend = min(need, have);
	for (pg = wfrom >> VSMFS_BLOCK_SHIFT; pg < exend;) {
		u64 m = c->mode == VSMFS_COW_PAGE ? 1 : exend - pg, scr;
		u64 cs, ce, ws, we;
		char __pm *sp, *op;
		size_t n;

		ret = vsmfs_cow_alloc(c, &m, &scr);
		if (ret)
			goto short_write;
		cs = pg << VSMFS_BLOCK_SHIFT;
		ce = (pg + m) << VSMFS_BLOCK_SHIFT;
		ws = max(wfrom, cs);
		we = min(wto, ce);
		sp = vsmfs_lpn_ptr(sbi, scr);
		op = vsmfs_lpn_ptr(sbi, lpn + pg);
		ret = vsmfs_merge_old(sp, op, ws - cs);
		if (!ret) {
			pagefault_disable();
			n = vsmfs_copy_from_iter(sp + (ws - cs), we - ws, from);
			pagefault_enable();
			ret = vsmfs_merge_old(sp + (ws + n - cs), op + (ws + n - cs),
					      ce - ws - n);
		}
		if (ret) {
			vsmfs_unreserve_pages(t, scr, m);
			goto short_write;
		}
		vsmfs_stat_add(sbi, data_merge_bytes, (ws - cs) + (ce - ws - n));
		c->nmerged += (ws - cs) + (ce - ws - n);
		ret = vsmfs_swap_pages(t, &c->sw, lpn + pg, scr, m);
		if (ret) {
			vsmfs_unreserve_pages(t, scr, m);
			goto short_write;
		}
		vsmfs_cow_defer_free(c, scr, m, true);
		c->cowed = true;
		c->nswapped += m;
		done += n;
		vsmfs_stat_add(sbi, data_user_bytes, n);
		if (n < we - ws)
			goto short_write;
		pg += m;
	}
	vsmfs_stat_inc(sbi, mcow_fine);
	c->nfine++;
	if (need > have) {
		/* Pages past the old run: new, written directly. */
		u64 ws = max(wfrom, have << VSMFS_BLOCK_SHIFT);
		char __pm *p = vsmfs_lpn_ptr(sbi, lpn);
		size_t n;

		pagefault_disable();
		n = vsmfs_copy_from_iter(p + ws, wto - ws, from);
		pagefault_enable();
		if (ws + n < wto)
			vsmfs_zero_pm(p + ws + n, wto - ws - n);
		vsmfs_stat_add(sbi, data_user_bytes, n);
		done += n;
	}
	return done;

short_write:
	/* New pages past the old run that were not reached hold zeros. */
	if (need > have) {
		u64 ws = max(wfrom, have << VSMFS_BLOCK_SHIFT);

		vsmfs_zero_pm((char __pm *)vsmfs_lpn_ptr(sbi, lpn) + ws, wto - ws);
	}
	return done ?: ret;
}

/*
 * Write bytes past the end of the file into the page holding its last byte,
 * in place: they belong to no version of the file yet, and the transaction
 * that moves the end over them makes them visible. After a crash before
 * it, they lie past the end, where growing the file zeroes them first.
 */
static ssize_t vsmfs_write_eof_page(struct vsmfs_trans *t, struct inode *inode, u64 e,
				    u64 wfrom, u64 wto, struct iov_iter *from)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	char __pm *p = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e));
	size_t n;

	if (!p)
		return -EFSCORRUPTED;
	pagefault_disable();
	n = vsmfs_copy_from_iter(p + wfrom, wto - wfrom, from);
	pagefault_enable();
	vsmfs_stat_add(sbi, data_user_bytes, n);
	return n;
}

/* Upper bound of the logical pages a copy-on-write of [pos, end) takes. */
static u64 vsmfs_cow_pages(struct inode *inode, loff_t pos, loff_t end, unsigned int mode)
{
	u64 need = 4;	/* index blocks */
	loff_t p;

	for (p = pos; p < end;) {
		u64 key = p >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);
		u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;
		u64 pages = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE);

		/* A run that must grow elsewhere takes all its pages anew. */
		if (pages > have)
			need += pages;
		if (have && mode == VSMFS_COW_SUPERPAGE)
			need += max(pages, have);
		else if (have > (p - pstart) >> VSMFS_BLOCK_SHIFT)
			need += min(pages, have) - ((p - pstart) >> VSMFS_BLOCK_SHIFT);
		p = pstart + wto;
	}
	return need;
}

/*
 * The copy-on-write of [@pos, @pos + @len), steps (2) to (5) of
 * vsmfs_write_atomic(), in transaction @t: the caller holds invalidate_lock
 * and i_idx_sem for writing, has removed the user mappings of the range
 * and sets the size and times. Returns the bytes written; -ENOSPC before
 * anything changed if the pages the write needs are not free, or another
 * errno. An error after part of the range was done leaves the part done,
 * which the transaction commits as a whole, and is put in *@errp unless
 * it is NULL (0 if the write was not cut short by an error).
 */
static ssize_t vsmfs_cow_write_t(struct vsmfs_trans *t, struct inode *inode, loff_t pos,
				 size_t len, struct iov_iter *from, bool large,
				 unsigned int mode, int *errp)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t end = pos + len, size = i_size_read(inode), p;
	u64 npages = DIV_ROUND_UP(end, VSMFS_BLOCK_SIZE) - (pos >> VSMFS_BLOCK_SHIFT);
	struct vsmfs_cow c = {
		.t = t,
		.mode = mode,
		.large = large,
		.maxfree = npages + (len >> VSMFS_VSP_SHIFT) + 2,
	};
	struct vsmfs_cow_run free_stack[VSMFS_COW_FREE_STACK];
	ssize_t done = 0, n;
	unsigned int i;
	int ret = 0, err;

	if (c.maxfree <= ARRAY_SIZE(free_stack))
		c.free = free_stack;
	else
		c.free = kvmalloc_array(c.maxfree, sizeof(*c.free), GFP_KERNEL);
	if (!c.free) {
		ret = -ENOMEM;
		goto out;
	}
	if (vsmfs_cow_pages(inode, pos, end, mode) > sbi->s_free_pages) {
		ret = -ENOSPC;
		goto out;
	}
	vsmfs_swap_init(sbi, &c.sw);
	/* Bytes between the old end and the write may have been mapped. */
	if (pos > size)
		vsmfs_zero_mapped(inode, size,
				  min_t(loff_t, pos, round_up(size, VSMFS_BLOCK_SIZE)));
	for (p = pos; p < end; p += n) {
		u64 key = p >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 wfrom = p - pstart, wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);
		u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;

		if (p >= size && (size & (VSMFS_BLOCK_SIZE - 1)) &&
		    p >> VSMFS_BLOCK_SHIFT == (size - 1) >> VSMFS_BLOCK_SHIFT &&
		    wfrom >> VSMFS_BLOCK_SHIFT < have) {
			/* Past the end in the last page: nothing old to keep. */
			wto = min_t(u64, wto, round_up(wfrom + 1, VSMFS_BLOCK_SIZE));
			n = vsmfs_write_eof_page(t, inode, e, wfrom, wto, from);
		} else if (!have || wfrom >> VSMFS_BLOCK_SHIFT >= have) {
			n = vsmfs_write_new(t, inode, key, wfrom, wto, from, large);
		} else if (mode == VSMFS_COW_SUPERPAGE ||
			   (mode == VSMFS_COW_MULTI && !wfrom && wto == VSMFS_PIECE_SIZE)) {
			n = vsmfs_cow_whole(&c, inode, key, wfrom, wto, from);
		} else {
			n = -ENOSPC;
		}
		/* No free run for a whole piece: copy it page by page. */
		if (n == -ENOSPC && have && mode != VSMFS_COW_SUPERPAGE &&
		    wfrom >> VSMFS_BLOCK_SHIFT < have)
			n = vsmfs_cow_fine(&c, inode, key, wfrom, wto, from);
		if (n < 0) {
			ret = n;
			break;
		}
		done += n;
		if (n < wto - wfrom)
			break;
	}
	/* (4), then (5): see vsmfs_write_atomic(). */
	vsmfs_swap_flush(&c.sw);
	for (i = 0; i < c.nfree; i++) {
		if (c.free[i].scratch)
			err = vsmfs_unreserve_pages(t, c.free[i].lpn, c.free[i].count);
		else
			err = vsmfs_free_pages(t, c.free[i].lpn, c.free[i].count);
		ret = ret ?: err;
	}
	if (c.cowed)
		vsmfs_stat_inc(sbi, mcow_writes);
	/*
	 * For crash tests: new pages written, swaps and index switches made
	 * in DRAM, nothing committed.
	 */
	if (c.cowed)
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_COW_STOP,
				 "copy-on-write stopped before its commit");
out:
	if (c.free != free_stack)
		kvfree(c.free);
	trace_vsmfs_mcow_write(inode, pos, len, c.ncoarse, c.nfine, c.nswapped, c.nmerged,
			       done ?: ret);
	if (errp)
		*errp = ret;
	return done ?: ret;
}

/*
 * Widen [*@start, *@end) to the pages whose frames a copy-on-write of it
 * replaces: with cow=superpage, every superpage it touches is copied whole.
 */
static void vsmfs_cow_span(unsigned int mode, loff_t *start, loff_t *end)
{
	u64 unit = mode == VSMFS_COW_SUPERPAGE ? VSMFS_PIECE_SIZE : PAGE_SIZE;

	*start = round_down(*start, unit);
	*end = round_up(*end, unit);
}

/* Runs a staged write reserves at most; a write needing more is not staged. */
#define VSMFS_STAGE_RUNS	8

/*
 * struct vsmfs_stage - one reserved run of a staged write
 * @r: the reservation
 * @key: the piece it belongs to
 * @pg: with @whole false, the first page of the piece it replaces; its
 *	frames are swapped in
 * @whole: the run replaces the piece's run whole (index switch)
 */
struct vsmfs_stage {
	struct vsmfs_resv	*r;
	u64			key, pg;
	bool			whole;
};

/*
 * Copy into the reserved run @st the bytes [@wfrom, @wto) of its piece
 * from @from, and the old bytes of the pages it replaces around them:
 * durable at the next fence on this CPU, or after a switch to another
 * CPU and a fence there. Return: 0, -EIO if old bytes could not be read,
 * -EFAULT if the copy came up short.
 */
static int vsmfs_stage_copy(struct vsmfs_sb_info *sbi, struct inode *inode,
			    struct vsmfs_stage *st, u64 wfrom, u64 wto, struct iov_iter *from)
{
	u64 e = vsmfs_idx_lookup(inode, st->key), cs, ce, ws, we, n;
	char __pm *sp = vsmfs_lpn_ptr(sbi, st->r->lpn);
	char __pm *op = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e) + st->pg);
	int ret;

	cs = st->pg << VSMFS_BLOCK_SHIFT;
	ce = (st->pg + st->r->count) << VSMFS_BLOCK_SHIFT;
	ws = max(wfrom, cs);
	we = min(wto, ce);
	ret = vsmfs_merge_old(sp, op, ws - cs);
	if (ret)
		return ret;
	pagefault_disable();
	n = vsmfs_copy_from_iter(sp + (ws - cs), we - ws, from);
	pagefault_enable();
	if (n < we - ws)
		return -EFAULT;
	ret = vsmfs_merge_old(sp + (we - cs), op + (we - cs), ce - we);
	if (ret)
		return ret;
	vsmfs_stat_add(sbi, data_user_bytes, n);
	vsmfs_stat_add(sbi, data_merge_bytes, (ws - cs) + (ce - we));
	return 0;
}

/*
 * The handle of a staged write: each whole run is allocated and switched
 * into the index, the piece's old run freed when the transaction commits;
 * each partial run's frames are swapped with the file's pages, and the
 * run, now behind the old frames, is free once the commit is durable.
 * Return: 0 or a negative errno, with @t to be aborted.
 */
static int vsmfs_stage_switch(struct vsmfs_trans *t, struct inode *inode,
			      struct vsmfs_stage *st, unsigned int n, struct vsmfs_swap *sw)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	unsigned int i;
	u64 freed;
	int ret;

	for (i = 0; i < n; i++) {
		u64 e = vsmfs_idx_lookup(inode, st[i].key), lpn = vsmfs_idx_lpn(e);

		if (!st[i].whole) {
			ret = vsmfs_swap_pages(t, sw, lpn + st[i].pg, st[i].r->lpn,
					       st[i].r->count);
			if (!ret)
				ret = vsmfs_trans_defer_resv(t, st[i].r, false);
			if (ret)
				return ret;
			vsmfs_stat_inc(t->t_sbi, mcow_fine);
			continue;
		}
		ret = vsmfs_resv_claim(t, st[i].r);
		if (!ret && vi->i_tail_key == st[i].key + 1)
			ret = vsmfs_tail_release_t(t, inode, &freed);
		if (!ret)
			ret = vsmfs_idx_set(t, inode, st[i].key,
					    vsmfs_idx_make(st[i].r->lpn, st[i].r->count));
		if (!ret)
			ret = vsmfs_free_pages(t, lpn, vsmfs_idx_count(e));
		if (!ret)
			ret = vsmfs_trans_defer_resv(t, st[i].r, true);
		if (ret)
			return ret;
		if (READ_ONCE(t->t_sbi->s_cow_mode) == VSMFS_COW_MULTI)
			vsmfs_stat_inc(t->t_sbi, mcow_coarse);
	}
	inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return 0;
}

/*
 * Write [@pos, @pos + @len) atomically, copying the data with no
 * file-system-wide lock held: an overwrite inside the file's runs and its
 * size (no run grows, no page is new). (a) Fresh runs are reserved in
 * DRAM (vsmfs_resv_take(), s_trans_mutex for each only; no version the
 * journal writes has their bits); (b) the user
 * data and the old bytes around it are copied into them under the locks
 * of the inode alone (inode lock, invalidate_lock, i_idx_sem), with
 * non-temporal stores and written-back cached stores; (c) one short
 * handle switches the index entries or swaps the page table entries
 * (vsmfs_stage_switch()) and ends: its fence, or the commit's on this
 * CPU, makes (b) durable before the transaction that makes it reachable
 * commits (a migration to another CPU between (b) and (c) orders them
 * too). A crash before the commit leaves the old index and page table,
 * whose frames were never written, and the reserved runs free.
 *
 * Return: the bytes written, or -EAGAIN if the write is not of that kind
 * (nothing done, @from untouched), or another negative errno (nothing
 * written).
 */
static ssize_t vsmfs_write_staged(struct inode *inode, loff_t pos, size_t len,
				  struct iov_iter *from, bool large, unsigned int mode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_stage st[VSMFS_STAGE_RUNS];
	loff_t end = pos + len, p;
	unsigned int n = 0, i;
	struct vsmfs_swap sw;
	struct vsmfs_trans t;
	int ret = 0;

	if (mode == VSMFS_COW_SUPERPAGE || !len || end > i_size_read(inode))
		return -EAGAIN;
	/* (a) Which runs, and that every page written exists. */
	for (p = pos; p < end;) {
		u64 key = p >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 wfrom = p - pstart, wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);
		u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;
		u64 pg = wfrom >> VSMFS_BLOCK_SHIFT, need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE);
		bool whole = mode == VSMFS_COW_MULTI && !wfrom && wto == VSMFS_PIECE_SIZE;

		if (!have || need > have) {
			ret = -EAGAIN;
			goto release;
		}
		if (whole) {
			pg = 0;
			need = have;
		}
		while (pg < need) {
			u64 m = mode == VSMFS_COW_PAGE ? 1 : need - pg;

			if (n == VSMFS_STAGE_RUNS) {
				ret = -EAGAIN;
				goto release;
			}
			for (;;) {
				bool big = whole && (large || m == VSMFS_VSP_PAGES);

				ret = vsmfs_resv_take(sbi, m, big, &st[n].r);
				/* Scattered free space: smaller runs, page swaps. */
				if (ret != -ENOSPC || m == 1)
					break;
				m /= 2;
				whole = false;
			}
			if (ret == -ENOSPC)
				ret = -EAGAIN;
			if (ret)
				goto release;
			st[n].key = key;
			st[n].pg = pg;
			st[n].whole = whole && m == have;
			n++;
			pg += m;
		}
		p = pstart + wto;
	}
	/* (b) The copies, with no file-system-wide lock. */
	vsmfs_vsp_enter();
	for (i = 0; i < n && !ret; i++) {
		u64 pstart = st[i].key << VSMFS_VSP_SHIFT;
		u64 wfrom = max_t(u64, pos, pstart) - pstart;
		u64 wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);

		ret = vsmfs_stage_copy(sbi, inode, &st[i], wfrom, wto, from);
	}
	vsmfs_vsp_exit();
	if (ret) {
		/* Nothing is written: @from as it came. */
		iov_iter_revert(from, len - iov_iter_count(from));
		goto release;
	}
	/* (c) The switch, in one short handle. */
	vsmfs_trans_begin_credits(sbi, &t, vsmfs_cow_blocks_at(mode, pos, len));
	vsmfs_trans_track(&t, inode, false);
	vsmfs_swap_init(sbi, &sw);
	ret = vsmfs_stage_switch(&t, inode, st, n, &sw);
	/* One shootdown for the write, before any page freed here is reused. */
	vsmfs_swap_flush(&sw);
	if (!ret) {
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
		ret = vsmfs_write_inode_t(&t, inode);
	}
	if (!ret)
		vsmfs_fault_stop(inode->i_sb, VSMFS_FAULT_COW_STOP,
				 "copy-on-write stopped before its commit");
	/* A handle its end would abort (vsmfs_trans_commit()): abort it here. */
	if (!ret && (t.t_overflow || READ_ONCE(sbi->s_error_ro)))
		ret = t.t_overflow ? -EFSCORRUPTED : -EROFS;
	if (ret) {
		/* Swaps and index switches undone: the runs are the write's again. */
		vsmfs_trans_abort(&t);
		iov_iter_revert(from, len - iov_iter_count(from));
		goto release;
	}
	vsmfs_stat_inc(sbi, mcow_writes);
	vsmfs_stat_inc(sbi, write_staged);
	/* The runs are the transaction's now, even if its commit fails. */
	ret = vsmfs_trans_commit(&t);
	trace_vsmfs_mcow_write(inode, pos, len, 0, n, 0, 0, ret ?: len);
	return ret ?: len;

release:
	for (i = 0; i < n; i++)
		vsmfs_resv_release(sbi, st[i].r);
	return ret;
}

/*
 * Write [@pos, @pos + @len) atomically (data=atomic): the new content of
 * every page reaches PM in fresh pages, and one transaction switches the
 * file to them, so after a crash the file holds the old or the new
 * content of the whole range, never a mix.
 *
 * Ordering: (1) user mappings of the range (of its superpages with
 * cow=superpage) are removed and pinned pages waited for, under
 * invalidate_lock held until the end, so no user mapping can reach an old
 * frame once it is freed; (2) new data is written to fresh pages with
 * non-temporal stores, the merged old bytes with cached stores that are
 * written back (vsmfs_merge_old()), both durable at the next fence;
 * (3) the page table entries are swapped and the index switched in the
 * transaction's DRAM copies, and the live kernel PTEs are changed; (4) one
 * TLB shootdown for the whole write, before any page freed below can be
 * allocated again; (5) the replaced pages are freed in the transaction,
 * and the scratch pages that took the old frames of swapped pages, only
 * reserved in DRAM, are given back (the bitmap on PM never had them);
 * (6) commit: a fence makes (2) durable, then the metadata of (3) and (5)
 * is committed at once. A crash before (6) leaves the old page table and
 * index, whose frames were never written; after it, the new ones.
 *
 * The copy from @from must not come up short (see vsmfs_wsrc_get()).
 * Returns the bytes written, or an errno. An error after part of the write
 * was done commits the part done, which is atomic by itself.
 */
static ssize_t vsmfs_write_atomic(struct inode *inode, loff_t pos, size_t len,
				  struct iov_iter *from, bool large, unsigned int mode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct address_space *mapping = inode->i_mapping;
	loff_t end = pos + len, ustart = pos, uend = end;
	struct vsmfs_trans t;
	ssize_t n;
	int err;

	filemap_invalidate_lock(mapping);
	vsmfs_cow_span(mode, &ustart, &uend);
	n = vsmfs_break_layouts_range(inode, ustart, uend - 1);
	if (n)
		goto out_unlock;
	truncate_pagecache_range(inode, ustart, uend - 1);

	down_write(&vi->i_idx_sem);
	n = vsmfs_write_staged(inode, pos, len, from, large, mode);
	if (n != -EAGAIN) {
		up_write(&vi->i_idx_sem);
		goto out_unlock;
	}
	/* The whole write in one handle: room for its worst case. */
	vsmfs_trans_begin_credits(sbi, &t, vsmfs_cow_blocks_at(mode, pos, len));
	vsmfs_trans_track(&t, inode, false);
	n = vsmfs_cow_write_t(&t, inode, pos, len, from, large, mode, NULL);
	if (n > 0) {
		if (pos + n > i_size_read(inode))
			i_size_write(inode, pos + n);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
	}
	err = vsmfs_write_inode_t(&t, inode);
	if (n <= 0 || err) {
		/* A failed copy-on-write leaves the old version, swaps undone. */
		vsmfs_trans_abort(&t);
		if (n >= 0)
			n = err ?: n;
	} else {
		/* A commit that fails commits nothing, not even the part done. */
		err = vsmfs_trans_commit(&t);
		if (err)
			n = err;
	}
	up_write(&vi->i_idx_sem);
out_unlock:
	filemap_invalidate_unlock(mapping);
	return n;
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

static ssize_t vsmfs_do_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	unsigned int data = READ_ONCE(sbi->s_data_mode);
	unsigned int cow = READ_ONCE(sbi->s_cow_mode);
	loff_t pos, end;
	ssize_t ret, done = 0;
	bool large;

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
	large = end >= VSMFS_LARGE_FILE;

	while (pos < end) {
		size_t len;
		ssize_t n;

		if (data == VSMFS_DATA_ATOMIC)
			len = vsmfs_atomic_part(sbi, cow, pos, end - pos, 0);
		else
			len = min_t(u64, end - pos,
				    VSMFS_PIECE_SIZE - (pos & (VSMFS_PIECE_SIZE - 1)));
		if (data == VSMFS_DATA_ATOMIC) {
			struct vsmfs_wsrc src;
			int err = vsmfs_wsrc_get(sbi, &src, from, len);

			if (err) {
				ret = err;
				break;
			}
			n = vsmfs_write_atomic(inode, pos, src.len, &src.iter, large, cow);
			/* Give back what the write did not take. */
			iov_iter_revert(from, src.len - max_t(ssize_t, n, 0));
			vsmfs_wsrc_put(&src);
		} else {
			if (fault_in_iov_iter_readable(from, len) == len) {
				ret = -EFAULT;
				break;
			}
			n = vsmfs_write_inplace(inode, pos, len, from, large);
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

	ret = file_write_and_wait_range(file, start, end);
	if (!ret && !datasync)
		ret = sync_inode_metadata(inode, 1);
	/* Written-back mapped data, on this CPU. */
	vsmfs_fence();
	if (!ret)
		ret = vsmfs_trans_sync_inode(inode, VSMFS_COMMIT_FSYNC);
	trace_vsmfs_fsync(inode, start, end - start + 1, ret, t0);
	return ret;
}

/*
 * iomap for DAX faults, SEEK_DATA/SEEK_HOLE and FIEMAP. A mapped extent is
 * a physically contiguous part of a run; a hole extends to the next piece
 * with data. A write fault on a hole allocates zeroed pages in a handle; on
 * a MAP_SYNC mapping, the fault commits the inode's changes before the
 * page is mapped (IOMAP_F_DIRTY).
 */
static int vsmfs_iomap_begin(struct inode *inode, loff_t pos, loff_t length,
			     unsigned int flags, struct iomap *iomap, struct iomap *srcmap)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	bool alloc = (flags & IOMAP_WRITE) && (flags & IOMAP_FAULT);
	u64 key = pos >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
	u64 pg = (pos - pstart) >> VSMFS_BLOCK_SHIFT, e, cnt;
	int ret = 0;

	if (pos >= sbi->s_sb->s_maxbytes)
		return -EFBIG;
	iomap->flags = 0;
	iomap->bdev = inode->i_sb->s_bdev;
	iomap->dax_dev = sbi->s_daxdev;
	iomap->offset = pos & ~(loff_t)(VSMFS_BLOCK_SIZE - 1);

	if (alloc)
		down_write(&vi->i_idx_sem);
	else
		down_read(&vi->i_idx_sem);
	e = vsmfs_idx_lookup(inode, key);
	cnt = e ? vsmfs_idx_count(e) : 0;
	if (pg >= cnt && alloc) {
		struct vsmfs_trans t;
		u64 run, have;

		vsmfs_trans_begin(sbi, &t);
		vsmfs_trans_track(&t, inode, false);
		ret = vsmfs_extend_run(&t, inode, key, pg + 1, 0, 0,
				       i_size_read(inode) >= VSMFS_LARGE_FILE, &run, &have);
		if (!ret)
			ret = vsmfs_write_inode_t(&t, inode);
		ret = vsmfs_trans_end(&t, ret);
		if (ret)
			goto out;
		iomap->flags |= IOMAP_F_NEW;
		e = vsmfs_idx_lookup(inode, key);
		cnt = vsmfs_idx_count(e);
	}
	if (pg < cnt) {
		u64 lpn = vsmfs_idx_lpn(e) + pg, blk = vsmfs_lpn_blk(sbi, lpn), n = 1;
		u64 want = DIV_ROUND_UP(pos + length - iomap->offset, VSMFS_BLOCK_SIZE);

		if (!blk) {
			vsmfs_fs_error(inode->i_sb, inode->i_ino, "logical page %llu has no frame",
				       lpn);
			ret = -EFSCORRUPTED;
			goto out;
		}
		want = min(want, cnt - pg);
		while (n < want && vsmfs_lpn_blk(sbi, lpn + n) == blk + n)
			n++;
		iomap->type = IOMAP_MAPPED;
		iomap->addr = (blk << VSMFS_BLOCK_SHIFT) + sbi->s_dax_part_off;
		iomap->length = n << VSMFS_BLOCK_SHIFT;
		/*
		 * MAP_SYNC: a write fault returns only once what reaches the
		 * page is committed (dax_finish_sync_fault() calls fsync).
		 */
		if ((flags & IOMAP_WRITE) &&
		    (s64)READ_ONCE(vi->i_tid) > atomic64_read(&sbi->s_commit_tid))
			iomap->flags |= IOMAP_F_DIRTY;
	} else {
		/* The hole runs on to the next piece that has pages. */
		u64 next = min_t(u64, vsmfs_idx_next(inode, key + 1), VSMFS_MAX_KEY);

		iomap->length = (next << VSMFS_VSP_SHIFT) - iomap->offset;
		iomap->type = IOMAP_HOLE;
		iomap->addr = IOMAP_NULL_ADDR;
	}
out:
	if (alloc)
		up_write(&vi->i_idx_sem);
	else
		up_read(&vi->i_idx_sem);
	return ret;
}

static const struct iomap_ops vsmfs_iomap_ops = {
	.iomap_begin	= vsmfs_iomap_begin,
};

static vm_fault_t vsmfs_dax_huge_fault(struct vm_fault *vmf, enum page_entry_size pe_size)
{
	struct inode *inode = file_inode(vmf->vma->vm_file);
	struct super_block *sb = inode->i_sb;
	bool write = (vmf->flags & FAULT_FLAG_WRITE) && (vmf->vma->vm_flags & VM_SHARED);
	u64 t0 = vsmfs_trace_start(vsmfs_fault);
	vm_fault_t ret;
	pfn_t pfn;

	if (write) {
		sb_start_pagefault(sb);
		file_update_time(vmf->vma->vm_file);
	}
	filemap_invalidate_lock_shared(inode->i_mapping);
	ret = dax_iomap_fault(vmf, pe_size, &pfn, NULL, &vsmfs_iomap_ops);
	if (ret & VM_FAULT_NEEDDSYNC)
		ret = dax_finish_sync_fault(vmf, pe_size, pfn);
	/*
	 * A PMD fault maps a whole VSP as one 2 MiB page only where its frames
	 * are physically contiguous and aligned; else it falls back to PTEs.
	 */
	if (pe_size == PE_SIZE_PMD) {
		if (ret & VM_FAULT_FALLBACK)
			vsmfs_stat_inc(VSMFS_SB(sb), fault_pmd_fallback);
		else if (!(ret & VM_FAULT_ERROR))
			vsmfs_stat_inc(VSMFS_SB(sb), fault_pmd);
	} else if (!(ret & VM_FAULT_ERROR)) {
		vsmfs_stat_inc(VSMFS_SB(sb), fault_pte);
	}
	filemap_invalidate_unlock_shared(inode->i_mapping);
	if (write)
		sb_end_pagefault(sb);
	trace_vsmfs_fault(inode, vmf->pgoff, pe_size == PE_SIZE_PMD, (__force unsigned int)ret, t0);
	return ret;
}

static vm_fault_t vsmfs_dax_fault(struct vm_fault *vmf)
{
	return vsmfs_dax_huge_fault(vmf, PE_SIZE_PTE);
}

static const struct vm_operations_struct vsmfs_dax_vm_ops = {
	.fault		= vsmfs_dax_fault,
	.huge_fault	= vsmfs_dax_huge_fault,
	.page_mkwrite	= vsmfs_dax_fault,
	.pfn_mkwrite	= vsmfs_dax_fault,
};

static int vsmfs_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(file);

	if (!daxdev_mapping_supported(vma, VSMFS_SB(inode->i_sb)->s_daxdev))
		return -EOPNOTSUPP;
	file_accessed(file);
	vma->vm_ops = &vsmfs_dax_vm_ops;
	vma->vm_flags |= VM_HUGEPAGE;
	return 0;
}

static int vsmfs_dax_writepages(struct address_space *mapping,
				struct writeback_control *wbc)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(mapping->host->i_sb);

	return dax_writeback_mapping_range(mapping, sbi->s_daxdev, wbc);
}

/* Data is never in the page cache: DAX entries only. */
const struct address_space_operations vsmfs_dax_aops = {
	.writepages	= vsmfs_dax_writepages,
	.direct_IO	= noop_direct_IO,
	.dirty_folio	= noop_dirty_folio,
};

static int vsmfs_wait_dax_page(struct inode *inode)
{
	filemap_invalidate_unlock(inode->i_mapping);
	schedule();
	filemap_invalidate_lock(inode->i_mapping);
	return 0;
}

/*
 * Wait until no page of [@start, @end] (bytes, inclusive) of a file is
 * pinned. Context and return: as vsmfs_break_layouts().
 */
static int vsmfs_break_layouts_range(struct inode *inode, loff_t start, loff_t end)
{
	struct page *page;
	int ret;

	do {
		page = dax_layout_busy_page_range(inode->i_mapping, start, end);
		if (!page)
			return 0;
		ret = ___wait_var_event(&page->_refcount,
					atomic_read(&page->_refcount) == 1,
					TASK_INTERRUPTIBLE, 0, 0,
					vsmfs_wait_dax_page(inode));
	} while (!ret);
	return ret;
}

/**
 * vsmfs_break_layouts() - wait until no page of a file is pinned
 * @inode: a regular file
 *
 * Pages pinned by get_user_pages() (direct I/O of another file into a
 * mapping of this one, RDMA) must not be freed or given other contents
 * under the pin. Called before truncation, hole punching and zeroing, and
 * (for the range written) before a copy-on-write write.
 *
 * Context: inode lock and invalidate_lock held for writing.
 * Return: 0, or -ERESTARTSYS if a signal ended the wait.
 */
int vsmfs_break_layouts(struct inode *inode)
{
	return vsmfs_break_layouts_range(inode, 0, LLONG_MAX);
}

/* Make the size @size in @t; bytes past the old end are zeroed first. */
static void vsmfs_fallocate_size_t(struct inode *inode, loff_t size)
{
	loff_t old = i_size_read(inode);

	vsmfs_zero_mapped(inode, old, min_t(loff_t, size, round_up(old, VSMFS_BLOCK_SIZE)));
	i_size_write(inode, size);
	inode->i_ctime = current_time(inode);
}

/*
 * Zero [@from, @to) of the file by copy-on-write in @t, as a write of zeros
 * would (vsmfs_cow_write_t()): the range is zero once @t commits and
 * untouched before. Returns the bytes zeroed (short if pages ran out part
 * way), or the errno of another error, after which the part before it is
 * zero once @t commits.
 */
static ssize_t vsmfs_cow_zero_t(struct vsmfs_trans *t, struct inode *inode, loff_t from,
				loff_t to)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	size_t len = to - from, nseg = DIV_ROUND_UP(len, PAGE_SIZE), i;
	struct bio_vec *bv;
	struct iov_iter it;
	ssize_t n;
	int err;

	bv = kvmalloc_array(nseg, sizeof(*bv), GFP_KERNEL);
	if (!bv)
		return -ENOMEM;
	for (i = 0; i < nseg; i++) {
		bv[i].bv_page = ZERO_PAGE(0);
		bv[i].bv_offset = 0;
		bv[i].bv_len = min_t(size_t, len - i * PAGE_SIZE, PAGE_SIZE);
	}
	iov_iter_bvec(&it, ITER_SOURCE, bv, nseg, len);
	n = vsmfs_cow_write_t(t, inode, from, len, &it,
			      i_size_read(inode) >= VSMFS_LARGE_FILE,
			      READ_ONCE(sbi->s_cow_mode), &err);
	kvfree(bv);
	/* Zeros never come up short: say which error stopped them. */
	if (n >= 0 && n < len && err)
		return err;
	return n;
}

/*
 * Punch or zero [from, to) of piece @key, in one transaction, which also
 * makes the size @size if it is not 0. Pages of the run wholly inside a
 * punched range that reaches its end are freed; the rest of the range
 * inside the run is zeroed. With @atomic (data=atomic) the zeroing is a
 * copy-on-write, as a write of zeros would be, which for a zero range also
 * allocates the pages past the run, so that a crash finds the piece as it
 * was or as it is after; otherwise the caller allocated them, and the
 * zeroing is in place, which only the fence of the commit orders before
 * the index shrinks. Pages of the old version are freed here after the
 * copy-on-write has allocated what it needs, so that it cannot write over
 * a page the old version still reaches. A punch that finds too little
 * free space for copy-on-write zeroes in place.
 */
/* Blocks vsmfs_clear_piece() dirties besides its copy-on-write: 2 bitmaps. */
#define VSMFS_CLEAR_BLOCKS	2

static int vsmfs_clear_piece(struct inode *inode, u64 key, loff_t from, loff_t to,
			     bool punch, bool atomic, loff_t size)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 pstart = key << VSMFS_VSP_SHIFT, e, cnt, first, freed;
	loff_t zto = to;
	bool shrink, fits, in_place = false;
	struct vsmfs_trans t;
	int ret = 0;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	vsmfs_trans_track(&t, inode, false);
	e = vsmfs_idx_lookup(inode, key);
	cnt = vsmfs_idx_count(e);
	/* First page wholly inside the range. */
	first = DIV_ROUND_UP(from - pstart, VSMFS_BLOCK_SIZE);
	/* The range covers the end of the run: its tail is freed. */
	shrink = e && punch && first < cnt && to >= pstart + (cnt << VSMFS_BLOCK_SHIFT);
	if (shrink)
		zto = pstart + (first << VSMFS_BLOCK_SHIFT);
	/* Pages inside the run, and for an atomic zero range past it: zeroed. */
	if (punch || !atomic)
		zto = min_t(loff_t, zto, pstart + (cnt << VSMFS_BLOCK_SHIFT));
	if (from < zto && (e || !punch)) {
		ssize_t n = -ENOSPC;

		/*
		 * A copy-on-write too large for the journal: a hole is zeroed
		 * in place (a zero range is split by the caller).
		 */
		fits = vsmfs_cow_blocks_at(READ_ONCE(sbi->s_cow_mode), from, zto - from) <=
		       vsmfs_trans_room(&t) - VSMFS_CLEAR_BLOCKS;
		if (atomic && fits)
			n = vsmfs_cow_zero_t(&t, inode, from, zto);
		if (n == -ENOSPC && (punch || !atomic))
			in_place = true;
		else if (n < 0)
			ret = n;
		else if (n < zto - from)
			ret = -ENOSPC;	/* pages ran out part way */
	}
	/* A run that shrinks gives up the reserved tail after it first. */
	if (!ret && shrink && vi->i_tail_key == key + 1)
		ret = vsmfs_tail_release_t(&t, inode, &freed);
	if (!ret && shrink) {
		/* The copy-on-write may have moved the run: look it up again. */
		e = vsmfs_idx_lookup(inode, key);
		ret = vsmfs_free_pages(&t, vsmfs_idx_lpn(e) + first, cnt - first);
		if (!ret) {
			vi->i_pages -= cnt - first;
			inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
			ret = vsmfs_idx_set(&t, inode, key,
					    first ? vsmfs_idx_make(vsmfs_idx_lpn(e), first) : 0);
		}
	}
	/*
	 * Only an atomic zero range passes @size, and its copy-on-write has
	 * zeroed the bytes between the old end and the range already.
	 */
	if (!ret && size)
		i_size_write(inode, size);
	inode->i_mtime = current_time(inode);
	inode->i_ctime = inode->i_mtime;
	if (!ret)
		ret = vsmfs_write_inode_t(&t, inode);
	/*
	 * Zeros written in place cannot be taken back by an abort: they are
	 * written once nothing else can fail, over pages the run keeps.
	 */
	if (!ret && in_place)
		vsmfs_zero_mapped(inode, from, zto);
	if (ret)
		vsmfs_trans_abort(&t);
	else
		/* Zeros are durable (fence in the commit) before the index shrinks. */
		ret = vsmfs_trans_commit(&t);
	up_write(&vi->i_idx_sem);
	return ret;
}

/*
 * Allocate zeroed pages up to @to in piece @key, in one transaction, which
 * also makes the size @size if it is not 0 (and the pages were allocated).
 * The end of what the run held before (and so may hold data) goes to
 * @oldend.
 */
static int vsmfs_alloc_piece(struct inode *inode, u64 key, loff_t to, bool large,
			     loff_t size, loff_t *oldend)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 need = DIV_ROUND_UP(to - (key << VSMFS_VSP_SHIFT), VSMFS_BLOCK_SIZE), run, have;
	struct vsmfs_trans t;
	int ret;

	down_write(&vi->i_idx_sem);
	vsmfs_trans_begin(sbi, &t);
	vsmfs_trans_track(&t, inode, false);
	ret = vsmfs_extend_run(&t, inode, key, need, 0, 0, large, &run, &have);
	if (!ret && size)
		vsmfs_fallocate_size_t(inode, size);
	if (!ret)
		ret = vsmfs_write_inode_t(&t, inode);
	ret = vsmfs_trans_end(&t, ret);
	up_write(&vi->i_idx_sem);
	*oldend = (key << VSMFS_VSP_SHIFT) + (have << VSMFS_BLOCK_SHIFT);
	return ret;
}

static long vsmfs_do_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(file);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	loff_t end = offset + len, pos, size, newsize = 0;
	bool punch = mode & FALLOC_FL_PUNCH_HOLE, zero = mode & FALLOC_FL_ZERO_RANGE;
	bool atomic = READ_ONCE(sbi->s_data_mode) == VSMFS_DATA_ATOMIC;
	struct vsmfs_trans t;
	int ret;

	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (punch && (!(mode & FALLOC_FL_KEEP_SIZE) || zero))
		return -EOPNOTSUPP;
	if (!S_ISREG(inode->i_mode))
		return -ENODEV;

	inode_lock(inode);
	size = i_size_read(inode);
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > size) {
		ret = inode_newsize_ok(inode, end);
		if (ret)
			goto out_unlock;
	} else if (end > inode->i_sb->s_maxbytes) {
		ret = -EFBIG;
		goto out_unlock;
	}
	ret = file_modified(file);
	if (ret)
		goto out_unlock;

	filemap_invalidate_lock(inode->i_mapping);
	if (punch || zero) {
		ret = vsmfs_break_layouts(inode);
		if (ret)
			goto out_invalidate;
		loff_t ustart = offset, uend = end;

		/*
		 * User mappings of every page touched go, partial ones too:
		 * copy-on-write gives them new frames.
		 */
		vsmfs_cow_span(READ_ONCE(sbi->s_cow_mode), &ustart, &uend);
		truncate_pagecache_range(inode, ustart, uend - 1);
	}
	/*
	 * A plain allocation that extends the file sets the size in the
	 * transaction of its last piece: one that fits in a piece is atomic,
	 * and a crash in a longer one leaves pages past the end, zeroed, as
	 * FALLOC_FL_KEEP_SIZE would.
	 */
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > size && (!zero || atomic))
		newsize = end;
	for (pos = offset; pos < end && !ret;) {
		u64 key = pos >> VSMFS_VSP_SHIFT;
		loff_t pend;

		if (punch) {
			/* Pieces without pages have nothing to punch. */
			u64 next = vsmfs_idx_next(inode, key);

			if (next >= VSMFS_MAX_KEY || (loff_t)(next << VSMFS_VSP_SHIFT) >= end)
				break;
			if (next != key) {
				key = next;
				pos = key << VSMFS_VSP_SHIFT;
			}
		}
		pend = min_t(loff_t, end, (key + 1) << VSMFS_VSP_SHIFT);
		if (punch) {
			ret = vsmfs_clear_piece(inode, key, pos, pend, true, atomic, 0);
		} else if (zero && atomic) {
			/* In parts that fit in the journal. */
			pend = pos + vsmfs_atomic_part(sbi, READ_ONCE(sbi->s_cow_mode), pos,
						       pend - pos, VSMFS_CLEAR_BLOCKS);
			ret = vsmfs_clear_piece(inode, key, pos, pend, false, true,
						pend == end ? newsize : 0);
		} else {
			loff_t oldend;

			ret = vsmfs_alloc_piece(inode, key, pend, end >= VSMFS_LARGE_FILE,
						pend == end ? newsize : 0, &oldend);
			/* Newly allocated pages are zero already. */
			if (!ret && zero && pos < oldend)
				ret = vsmfs_clear_piece(inode, key, pos, min(pend, oldend),
							false, false, 0);
		}
		pos = pend;
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	if (!ret && !(mode & FALLOC_FL_KEEP_SIZE) && end > size && !newsize) {
		down_write(&VSMFS_I(inode)->i_idx_sem);
		vsmfs_trans_begin(sbi, &t);
		vsmfs_trans_track(&t, inode, false);
		vsmfs_fallocate_size_t(inode, end);
		ret = vsmfs_write_inode_t(&t, inode);
		ret = vsmfs_trans_end(&t, ret);
		up_write(&VSMFS_I(inode)->i_idx_sem);
	}
out_invalidate:
	filemap_invalidate_unlock(inode->i_mapping);
out_unlock:
	inode_unlock(inode);
	return ret;
}

static long vsmfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	u64 t0 = vsmfs_trace_start(vsmfs_fallocate);
	long ret = vsmfs_do_fallocate(file, mode, offset, len);

	trace_vsmfs_fallocate(file_inode(file), offset, len, ret, t0);
	return ret;
}

/*
 * Last close of a file open for writing (ZFDM): the reserved tail of its
 * last VSP goes back to the allocator and the inode is flagged, so the
 * next append moves the last run into a fresh VSP by swapping entries.
 */
static int vsmfs_open(struct inode *inode, struct file *file)
{
	int ret = generic_file_open(inode, file);

	if (!ret)
		vsmfs_aggr_open(inode, file);
	return ret;
}

static int vsmfs_release(struct inode *inode, struct file *file)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_trans t;
	u64 freed = 0;
	int ret;

	if (!vsmfs_aggr_release(inode, file) || !READ_ONCE(vi->i_tail_key))
		return 0;
	inode_lock(inode);
	down_write(&vi->i_idx_sem);
	if (vi->i_tail_key && !sb_rdonly(inode->i_sb)) {
		u64 key = vi->i_tail_key - 1;

		vsmfs_trans_begin(sbi, &t);
		vsmfs_trans_track(&t, inode, false);
		ret = vsmfs_tail_release_t(&t, inode, &freed);
		if (!ret && freed)
			vi->i_flags |= VSMFS_IFLAG_TAIL_RELEASED;
		if (!ret)
			ret = vsmfs_write_inode_t(&t, inode);
		ret = vsmfs_trans_end(&t, ret);
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
	ret = iomap_fiemap(inode, fieinfo, start, len, &vsmfs_iomap_ops);
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
	.get_unmapped_area = thp_get_unmapped_area,
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
	.setattr	= vsmfs_setattr,
	.fiemap		= vsmfs_fiemap,
	.fileattr_get	= vsmfs_fileattr_get,
	.fileattr_set	= vsmfs_fileattr_set,
	.listxattr	= vsmfs_listxattr,
	.get_acl	= vsmfs_get_acl,
	.set_acl	= vsmfs_set_acl,
};
