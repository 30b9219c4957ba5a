// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs write path. Every change of a file's data, by write(), a write
 * fault or fallocate(), goes through the same steps, in the shape of
 * iomap's begin and end:
 *
 * - vsmfs_wmap_begin() takes the inode's locks for the range, looks it up
 *   and decides how it is made (enum vsmfs_wkind in data.h), per data= and
 *   cow= mode and per range, then reserves the runs a staged write copies
 *   into, begins the handle the others allocate in, or allocates zeroed
 *   pages (faults, fallocate);
 * - vsmfs_wmap_copy() copies the data, one way per kind;
 * - vsmfs_wmap_end() publishes what was copied (index entries switched,
 *   page table entries swapped, new pages joined to the run), sets the
 *   size and the times, ends the handle and drops the locks, or undoes
 *   it all.
 *
 * A write() is cut into parts (vsmfs_do_write_iter() in file.c), each made
 * by vsmfs_write_part(); a DAX write fault (dax.c) and fallocate()
 * (falloc.c) call the begin and end steps alone.
 *
 * Ordering: a kind that writes data in place (VSMFS_WK_INPLACE,
 * VSMFS_WK_NEW) makes it durable with the fence that ends it, not
 * atomically (data=inplace promises no atomicity); a staged kind fences
 * its copies before the short handle of its end step makes them
 * reachable (vsmfs_staged_end() in stage.c, vsmfs_append_end()); a
 * handle fences its copies in its commit, before the metadata that makes
 * them reachable (vsmfs_cow_write() in cow.c, and the atomic write's
 * steps (1) to (6) given at vsmfs_write_part()).
 */
#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include "vsmfs.h"
#include "ptable.h"
#include "vsp.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "pmem.h"
#include "fault.h"
#include "trace.h"
#include "data.h"
#include "badframe.h"

/* No index entry looked up yet: vsmfs_idx_lookup() never returns it (a count past a VSP). */
#define VSMFS_IDX_UNKNOWN	U64_MAX

/*
 * The locks of a write that changes more than data in place: the inode's
 * invalidate_lock, held until the end, and i_idx_sem for writing.
 *
 * With data=atomic, (1) user mappings of the range (of its superpages with
 * cow=superpage) are removed and pinned pages waited for, so no user
 * mapping can reach an old frame once it is freed. A file no one maps and
 * with no DAX entry has no user mapping to remove and no pinned page
 * (every mapping of a page comes from a fault, which inserts its entry
 * under invalidate_lock, held here): both calls would find nothing.
 *
 * In place, a hole the write fills, inside a run or past it, may be
 * mapped (the zero page, by a read fault): the mappings of the range go
 * first, and no fault maps it again until the write is done. Whole pages
 * go: partial ones would keep their mappings.
 */
static __always_inline int vsmfs_wmap_lock(struct vsmfs_wmap *m)
{
	struct inode *inode = m->inode;
	struct address_space *mapping = inode->i_mapping;
	loff_t start = m->pos, end = m->pos + m->len;
	int ret;

	filemap_invalidate_lock(mapping);
	if (m->flags & VSMFS_WM_ATOMIC) {
		if (mapping_mapped(mapping) || !mapping_empty(mapping)) {
			vsmfs_cow_span(m->cow, &start, &end);
			ret = vsmfs_break_layouts_range(inode, start, end - 1);
			if (ret) {
				filemap_invalidate_unlock(mapping);
				return ret;
			}
			truncate_pagecache_range(inode, start, end - 1);
		}
	} else if (!mapping_empty(mapping)) {
		truncate_pagecache_range(inode, round_down(start, PAGE_SIZE),
					 round_up(end, PAGE_SIZE) - 1);
	}
	down_write(&VSMFS_I(inode)->i_idx_sem);
	return 0;
}

static void vsmfs_wmap_unlock(struct vsmfs_wmap *m)
{
	up_write(&VSMFS_I(m->inode)->i_idx_sem);
	if (!(m->flags & (VSMFS_WM_FAULT | VSMFS_WM_FALLOC)))
		filemap_invalidate_unlock(m->inode->i_mapping);
	m->kind = VSMFS_WK_NONE;
}

/**
 * vsmfs_mark_written() - fallocated pages hold data from now
 * @inode: their file
 * @lpn: the first page
 * @count: how many
 *
 * Pages [@lpn, @lpn + @count) of @inode, fallocated (frames, zeroed,
 * marked unwritten), inside one piece, hold data from now: a write fault
 * on them, or a write in place over them. Only their page table entries
 * change, in a shared handle beside other writers
 * (vsmfs_pt_written_shared()), and the inode is noted for fsync and
 * MAP_SYNC: the handle ends in the running transaction, whose commit makes
 * the change durable; until then a crash leaves the pages unwritten (data
 * written in place, which promises no atomicity, stays as it reached PM).
 * Context: the caller's locks keep the file's index as it is (i_idx_sem).
 * Return: 0, -EAGAIN if a handle of the other kind must do it (nothing
 * done), or another negative errno.
 */
noinline int vsmfs_mark_written(struct inode *inode, u64 lpn, u64 count)
{
	struct vsmfs_whandle h;
	int ret;

	/* One credit: the page table block of the entries. */
	ret = vsmfs_whandle_begin(VSMFS_SB(inode->i_sb), &h, 1, 0);
	if (ret)
		return ret;
	ret = vsmfs_pt_written_shared(&h, lpn, count);
	if (!ret)
		vsmfs_whandle_note_inode(&h, inode);
	vsmfs_whandle_end(&h);
	return ret;
}

/*
 * VSMFS_WK_INPLACE: [pos, pos + len) of one piece lies inside the piece's
 * run and the file's size, over pages with frames and data (data=inplace):
 * no page is allocated and the index does not change, so the copy needs
 * no transaction, only the inode's locks and i_idx_sem for reading. The
 * timestamps are updated here, before the copy, in a handle of their own
 * and only if they change (as file_update_time() does), so a failure
 * writes nothing: a shared handle when it can (vsmfs_set_size_times()).
 * Return: 0 with i_idx_sem held, -EAGAIN if the write is not of that kind,
 * or another negative errno (nothing held).
 */
static __always_inline int vsmfs_inplace_begin(struct vsmfs_wmap *m)
{
	struct inode *inode = m->inode;
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 key = m->pos >> VSMFS_VSP_SHIFT, wfrom = m->pos - (key << VSMFS_VSP_SHIFT);
	struct timespec64 now;
	int ret = -EAGAIN;
	u64 e, pg, npg;

	down_read(&vi->i_idx_sem);
	e = vsmfs_idx_lookup(inode, key);
	if (!e || m->pos + m->len > i_size_read(inode) ||
	    DIV_ROUND_UP(wfrom + m->len, VSMFS_BLOCK_SIZE) > vsmfs_idx_count(e))
		goto out;
	/*
	 * Holes take frames in a handle; unwritten pages become written
	 * first, in a shared one if they can (vsmfs_mark_written()).
	 */
	pg = wfrom >> VSMFS_BLOCK_SHIFT;
	npg = DIV_ROUND_UP(wfrom + m->len, VSMFS_BLOCK_SIZE) - pg;
	if (vsmfs_frames_in(sbi, vsmfs_idx_lpn(e) + pg, npg) < npg)
		goto out;
	if (vsmfs_any_unwritten(sbi, vsmfs_idx_lpn(e) + pg, npg)) {
		ret = vsmfs_mark_written(inode, vsmfs_idx_lpn(e) + pg, npg);
		if (ret)
			goto out;
	}
	now = current_time(inode);
	if (!timespec64_equal(&inode->i_mtime, &now) ||
	    !timespec64_equal(&inode->i_ctime, &now)) {
		ret = vsmfs_set_size_times(inode, i_size_read(inode), now);
		if (ret)
			goto out;
	}
	m->e = e;
	m->kind = VSMFS_WK_INPLACE;
	return 0;
out:
	up_read(&vi->i_idx_sem);
	return ret;
}

/*
 * The bytes are fenced at the end (the kernel's non-temporal copy, and
 * vsmfs_fence_pending() for any written-back edges), as a write that
 * commits a handle: durable then, not atomic. Framed pages (checked at
 * begin): vsmfs_data_begin() never returns NULL.
 */
static ssize_t vsmfs_inplace_copy(struct vsmfs_wmap *m, struct iov_iter *from)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(m->inode->i_sb);
	char __pm *p;
	bool ranged;
	size_t n;

	p = vsmfs_data_begin(sbi, vsmfs_idx_lpn(m->e), m->pos & (VSMFS_PIECE_SIZE - 1), m->len,
			     &ranged);
	pagefault_disable();
	n = vsmfs_copy_from_iter(p, m->len, from);
	pagefault_enable();
	vsmfs_data_end(ranged);
	return n;
}

static __always_inline ssize_t vsmfs_inplace_end(struct vsmfs_wmap *m, ssize_t n)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(m->inode->i_sb);

	vsmfs_fence_pending();
	vsmfs_stat_add(sbi, data_inplace_bytes, n);
	vsmfs_stat_add(sbi, data_user_bytes, n);
	up_read(&VSMFS_I(m->inode)->i_idx_sem);
	m->kind = VSMFS_WK_NONE;
	return n;
}

/*
 * VSMFS_WK_COW and VSMFS_WK_NEW: the part in one handle, its pages
 * allocated as it copies. Copy-on-write (data=atomic) reserves room for
 * its worst case; in place, data stored stays, so the inode is written
 * whatever follows and its slot is made writable first.
 */
static int vsmfs_handle_begin(struct vsmfs_wmap *m)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(m->inode->i_sb);
	int ret;

	if (m->flags & VSMFS_WM_ATOMIC) {
		vsmfs_trans_begin_credits(sbi, &m->t, vsmfs_cow_blocks_at(m->cow, m->pos, m->len));
		vsmfs_trans_track(&m->t, m->inode, false);
		m->kind = VSMFS_WK_COW;
		return 0;
	}
	vsmfs_trans_begin(sbi, &m->t);
	vsmfs_trans_track(&m->t, m->inode, false);
	ret = vsmfs_inode_get_write_access(&m->t, m->inode);
	if (ret) {
		vsmfs_trans_abort(&m->t);
		return ret;
	}
	m->kind = VSMFS_WK_NEW;
	return 0;
}

static ssize_t vsmfs_handle_copy(struct vsmfs_wmap *m, struct iov_iter *from)
{
	struct inode *inode = m->inode;
	u64 key = m->pos >> VSMFS_VSP_SHIFT, wfrom = m->pos - (key << VSMFS_VSP_SHIFT);
	bool large = m->flags & VSMFS_WM_LARGE;
	loff_t size;

	m->err = 0;
	if (m->kind == VSMFS_WK_COW)
		return vsmfs_cow_write(&m->t, inode, m->pos, m->len, from, large, m->cow, &m->err);
	/* Bytes between the old end and the write may have been mapped. */
	size = i_size_read(inode);
	if (m->pos > size)
		vsmfs_zero_mapped(inode, size,
				  min_t(loff_t, m->pos, round_up(size, VSMFS_BLOCK_SIZE)));
	return vsmfs_write_new(&m->t, inode, key, wfrom, wfrom + m->len, from, large);
}

/*
 * Set the size and the times of what was copied, and end the handle:
 * committed (its fence makes the data durable before the metadata that
 * reaches it), or aborted if nothing was written (the pages allocated for
 * it are given back; a copy-on-write leaves the old version, swaps
 * undone). A copy from user memory cut short by a fault (with
 * VSMFS_WM_DIRECT, and no other error) undoes the copy-on-write whole, to
 * be made again from a source that cannot fault: -EAGAIN. A commit that
 * fails commits nothing, not even the part done.
 */
static ssize_t vsmfs_handle_end(struct vsmfs_wmap *m, ssize_t n)
{
	struct inode *inode = m->inode;
	int err;

	if (m->kind == VSMFS_WK_COW && (m->flags & VSMFS_WM_DIRECT) && n >= 0 && n < m->len &&
	    !m->err) {
		vsmfs_trans_abort(&m->t);
		vsmfs_wmap_revert(m);
		return -EAGAIN;
	}
	if (n > 0) {
		if (m->pos + n > i_size_read(inode))
			i_size_write(inode, m->pos + n);
		inode->i_mtime = current_time(inode);
		inode->i_ctime = inode->i_mtime;
	}
	err = vsmfs_mark_inode_dirty(&m->t, inode);
	if (n <= 0 || err) {
		vsmfs_trans_abort(&m->t);
		if (n >= 0)
			n = err ?: n;
		return n;
	}
	err = vsmfs_trans_commit(&m->t);
	return err ?: n;
}

/*
 * VSMFS_WK_ALLOC: zeroed pages over [pos, pos + len) of one piece, in one
 * handle: the run grows to the end of the range (pages before its start
 * that the run does not reach stay holes where they can), and its pages
 * without frames in the range take frames. A write fault makes its page
 * written from now (a fallocated page alone: vsmfs_mark_written());
 * fallocate() makes the new pages unwritten, and if the
 * journal has no room for all the frames, takes the rest in more handles
 * (@m->more). Pages a write fault allocates are zeroed and reachable only
 * once the handle commits (vsmfs_extend_run()).
 * Return: 0, or a negative errno with nothing held.
 */
static int vsmfs_alloc_begin(struct vsmfs_wmap *m)
{
	struct inode *inode = m->inode;
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 key = m->pos >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
	u64 first = (m->pos - pstart) >> VSMFS_BLOCK_SHIFT;
	u64 last = DIV_ROUND_UP(m->pos + m->len - pstart, VSMFS_BLOCK_SIZE), need = last;
	bool falloc = m->flags & VSMFS_WM_FALLOC;
	u64 e, cnt, run;
	int ret;

	down_write(&VSMFS_I(inode)->i_idx_sem);
	e = vsmfs_idx_lookup(inode, key);
	cnt = e ? vsmfs_idx_count(e) : 0;
	if (!falloc) {
		/* A fault on a page that has a frame and data: nothing to do. */
		if (first < cnt && !vsmfs_lpn_hole(sbi, vsmfs_idx_lpn(e) + first) &&
		    (!vsmfs_lpn_unwritten(sbi, vsmfs_idx_lpn(e) + first) ||
		     !vsmfs_mark_written(inode, vsmfs_idx_lpn(e) + first, 1))) {
			up_write(&VSMFS_I(inode)->i_idx_sem);
			m->kind = VSMFS_WK_NONE;
			return 0;
		}
		need = max(cnt, last);
	}
	vsmfs_trans_begin(sbi, &m->t);
	vsmfs_trans_track(&m->t, inode, false);
	m->kind = VSMFS_WK_ALLOC;
	m->more = false;
	ret = vsmfs_extend_run(&m->t, inode, key, need, first << VSMFS_BLOCK_SHIFT,
			       first << VSMFS_BLOCK_SHIFT, m->flags & VSMFS_WM_LARGE, &run,
			       &m->have);
	/* New pages are fallocated and unwritten (zeroed already). */
	if (!ret && falloc && m->have < need)
		ret = vsmfs_pt_unwritten(&m->t, run + m->have, need - m->have, true);
	if (!ret)
		ret = vsmfs_fill_holes(&m->t, inode, run + first, last - first, falloc);
	if (falloc && ret == -E2BIG) {
		m->more = true;
		ret = 0;
	}
	if (ret) {
		vsmfs_trans_end(&m->t, ret);
		vsmfs_wmap_unlock(m);
	}
	return ret;
}

static int vsmfs_alloc_end(struct vsmfs_wmap *m, int ret)
{
	if (!ret)
		ret = vsmfs_mark_inode_dirty(&m->t, m->inode);
	ret = vsmfs_trans_end(&m->t, ret);
	vsmfs_wmap_unlock(m);
	return ret;
}

/*
 * The begin and copy steps of the staged kinds, VSMFS_WK_STAGED and
 * VSMFS_WK_APPEND; their end steps, the short handles that publish what
 * they copied, are in stage.c.
 */

/*
 * Copy into the reserved run @st the bytes [@wfrom, @wto) of its piece
 * from @from, and the old bytes of the pages it replaces around them:
 * durable at the next fence on this CPU, or after a switch to another
 * CPU and a fence there. Return: 0, -EIO if old bytes could not be read,
 * -EFAULT if the copy came up short.
 */
static int vsmfs_stage_copy_run(struct vsmfs_sb_info *sbi, struct vsmfs_stage *st, u64 wfrom,
				u64 wto, struct iov_iter *from)
{
	u64 old = vsmfs_idx_lpn(st->e) + st->pg, bytes = st->r.count << VSMFS_BLOCK_SHIFT;
	bool ranged, old_ranged = false;
	char __pm *sp, *op;
	u64 cs, ce, ws, we, n;
	int ret = 0;

	/*
	 * A single page, or a run of consecutive frames, through the device
	 * mapping, which needs no catch-up with the swaps of other writes,
	 * any other run as one range (vsmfs_data_begin()). An old page
	 * without a frame reads as zeros.
	 */
	sp = vsmfs_data_begin(sbi, st->r.lpn, 0, bytes, &ranged);
	if (!sp) {
		vsmfs_data_end(ranged);
		return -EFSCORRUPTED;
	}
	cs = st->pg << VSMFS_BLOCK_SHIFT;
	ce = (st->pg + st->r.count) << VSMFS_BLOCK_SHIFT;
	ws = max(wfrom, cs);
	we = min(wto, ce);
	/*
	 * The old bytes first, if the new ones leave any (not for whole
	 * pages): a copy from a user buffer that fences by itself then
	 * orders them too (vsmfs_copy_from_iter()).
	 */
	if (ws > cs || we < ce) {
		op = vsmfs_data_begin(sbi, old, 0, bytes, &old_ranged);
		if (op) {
			ret = vsmfs_merge_old(sp, op, ws - cs);
			if (!ret)
				ret = vsmfs_merge_old(sp + (we - cs), op + (we - cs), ce - we);
		} else {
			vsmfs_zero_pm(sp, ws - cs);
			vsmfs_zero_pm(sp + (we - cs), ce - we);
			ret = 0;
		}
		if (ret)
			goto out;
	}
	pagefault_disable();
	n = vsmfs_copy_from_iter(sp + (ws - cs), we - ws, from);
	pagefault_enable();
	if (n < we - ws) {
		ret = -EFAULT;
		goto out;
	}
	vsmfs_stat_add(sbi, data_user_bytes, n);
	vsmfs_stat_add(sbi, data_merge_bytes, (ws - cs) + (ce - we));
out:
	vsmfs_data_end(old_ranged);
	vsmfs_data_end(ranged);
	return ret;
}

/* Pages without frames among the file's pages staged runs replace. */

/**
 * vsmfs_staged_begin() - begin a staged overwrite: (a), the runs reserved
 * @m: the part (data=atomic, not cow=superpage): a non-empty range inside
 *	the size, or from inside it or its end into pages kept past it, the
 *	inode's locks held (vsmfs_wmap_begin())
 *
 * A staged write makes [pos, pos + len) atomic, copying the data with no
 * file-system-wide lock held: an overwrite inside the file's runs and its
 * size (no run grows, no page is new). (a) Fresh runs are reserved in
 * DRAM (vsmfs_resv_take(), s_trans_mutex for each only; no version the
 * journal writes has their bits); (b) the user data and the old bytes
 * around it are copied into them under the locks of the inode alone
 * (inode lock, invalidate_lock, i_idx_sem), with non-temporal stores and
 * written-back cached stores (vsmfs_staged_copy()); (c) one short handle
 * switches the index entries or swaps the page table entries
 * (vsmfs_stage_switch()) and ends (in a shared handle, beside others, if
 * it only swaps pages and changes no word of the inode slot but the
 * times: vsmfs_stage_switch_shared()), in vsmfs_staged_end(). A fence
 * between (b) and (c), with no file-system-wide lock held, makes (b)
 * durable before the handle makes it reachable (a migration to another
 * CPU during (b) orders what came before it); a copy from a user buffer
 * that ends with a fence of its own is that fence
 * (vsmfs_copy_from_iter()), the old bytes merged before it. A crash
 * before the commit leaves the old index and page table, whose frames
 * were never written, and the reserved runs free.
 *
 * Return: 0, -EAGAIN if the write is not of that kind, or another
 * negative errno (nothing reserved in either case).
 */
static __always_inline int vsmfs_staged_begin(struct vsmfs_wmap *m)
{
	struct inode *inode = m->inode;
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_stage *st = m->st;
	bool large = m->flags & VSMFS_WM_LARGE;
	loff_t end = m->pos + m->len, p;
	unsigned int n = 0, i;
	int ret = 0;

	/* Which runs, and that every page written exists. */
	for (p = m->pos; p < end;) {
		u64 key = p >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 wfrom = p - pstart, wto = min_t(u64, end - pstart, VSMFS_PIECE_SIZE);
		u64 e = vsmfs_idx_lookup(inode, key), have = e ? vsmfs_idx_count(e) : 0;
		u64 pg = wfrom >> VSMFS_BLOCK_SHIFT, need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE);
		bool whole = m->cow == VSMFS_COW_MULTI && !wfrom && wto == VSMFS_PIECE_SIZE;

		if (!have || need > have) {
			ret = -EAGAIN;
			goto release;
		}
		if (whole) {
			pg = 0;
			need = have;
		}
		while (pg < need) {
			u64 k = m->cow == VSMFS_COW_PAGE ? 1 : need - pg;

			if (n == VSMFS_STAGE_RUNS) {
				ret = -EAGAIN;
				goto release;
			}
			for (;;) {
				bool big = whole && (large || k == VSMFS_VSP_PAGES);

				ret = vsmfs_resv_take(sbi, k, big, &st[n].r);
				/* Scattered free space: smaller runs, page swaps. */
				if (ret != -ENOSPC || k == 1)
					break;
				k /= 2;
				whole = false;
			}
			if (ret == -ENOSPC)
				ret = -EAGAIN;
			if (ret)
				goto release;
			st[n].key = key;
			st[n].e = e;
			st[n].pg = pg;
			st[n].whole = whole && k == have;
			st[n].wfrom = wfrom;
			st[n].wto = wto;
			n++;
			pg += k;
		}
		p = pstart + wto;
	}
	m->nst = n;
	m->kind = VSMFS_WK_STAGED;
	return 0;

release:
	for (i = 0; i < n; i++)
		vsmfs_resv_release(sbi, &st[i].r);
	return ret;
}

/**
 * vsmfs_staged_copy() - (b) of a staged overwrite: the copies
 * @m: the part, begun by vsmfs_staged_begin()
 * @from: the data; a copy that stops at a fault leaves nothing done
 *
 * Return: 0, -EIO if old bytes could not be read, -EFAULT if the copy
 * came up short, or -EFSCORRUPTED.
 */
static int vsmfs_staged_copy(struct vsmfs_wmap *m, struct iov_iter *from)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(m->inode->i_sb);
	unsigned int i;
	int ret = 0;

	for (i = 0; i < m->nst && !ret; i++)
		ret = vsmfs_stage_copy_run(sbi, &m->st[i], m->st[i].wfrom, m->st[i].wto, from);
	return ret;
}

/*
 * Choose where the new pages [@have, @need) of piece @key (index entry
 * @e) are written, as vsmfs_extend_run() would place them, and reserve
 * them: in a large file's own tail; a large file's first run of the piece
 * at a free VSP (reserved whole, the rest its tail); for a small file right
 * after its run, or else in a fresh run that becomes the piece's, the old
 * run's frames swapped into it. A large file's run that must move into a
 * fresh VSP, and a small file that kept a tail, grow in their handle.
 * Return: 0, -EAGAIN if the append is not staged, -ENOSPC or -ENOMEM.
 */
static int vsmfs_append_plan(struct inode *inode, u64 key, u64 e, u64 have, u64 need,
			     bool large, struct vsmfs_append *a)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 lpn = vsmfs_idx_lpn(e), k = need - have, tail = VSMFS_I(inode)->i_tail_key;
	int ret;

	if (tail == key + 1) {
		if (need > have + vsmfs_tail_pages(e) || vsmfs_frames_in(sbi, lpn + have, k) != k ||
		    vsmfs_any_unwritten(sbi, lpn + have, k))
			return -EAGAIN;
		a->kind = VSMFS_APPEND_TAIL;
		a->dst = lpn + have;
		return 0;
	}
	if (large || tail) {
		if (have || !large)
			return -EAGAIN;
		a->kind = VSMFS_APPEND_FIRST;
		/* A whole free VSP, its tail with it (vsmfs_append_move()). */
		ret = vsmfs_resv_take(sbi, VSMFS_VSP_PAGES,
				      key % (PUD_SIZE >> VSMFS_VSP_SHIFT) ? true : VSMFS_LARGE_GIB,
				      &a->r);
		if (ret == -ENOSPC)
			ret = vsmfs_resv_take(sbi, need, true, &a->r);
		a->dst = a->r.lpn;
		return ret;
	}
	if (have && lpn % VSMFS_VSP_PAGES + need <= VSMFS_VSP_PAGES &&
	    !vsmfs_resv_take_at(sbi, lpn + have, k, &a->r)) {
		a->kind = VSMFS_APPEND_AFTER;
		a->dst = a->r.lpn;
		return 0;
	}
	ret = vsmfs_resv_take(sbi, need, false, &a->r);
	a->kind = have ? VSMFS_APPEND_MOVE : VSMFS_APPEND_FIRST;
	a->dst = a->r.lpn + have;
	return ret;
}

/**
 * vsmfs_append_begin() - begin a staged append: (a), its new pages reserved
 * @m: the part, at or past the size, the inode's locks held
 *	(vsmfs_wmap_begin())
 * @e: the index entry of the piece holding the part's last byte, if
 *	vsmfs_kept_past() looked it up, else VSMFS_IDX_UNKNOWN
 *
 * A staged append writes [pos, pos + len) past the end of the file,
 * copying the data with no file-system-wide lock held, as a staged
 * overwrite does (vsmfs_staged_begin()): an append within one piece that
 * starts in the file's last page or right after it, where the piece's run
 * ends with that page. The append is atomic (no version of the file shows
 * part of it), whatever the data= mode.
 *
 * (a) The new pages, if any, are chosen and reserved in DRAM
 * (vsmfs_append_plan()); (b) the bytes that fall in the last page are
 * written in place, past the end (they belong to no version of the file
 * yet; a gap between the end and the write is zeroed), and the rest into
 * the new pages, the end of the last one zeroed, with non-temporal stores
 * and written-back cached stores, holding only the inode's locks
 * (vsmfs_append_copy()); a fence on this CPU makes (b) durable before
 * (c), one short handle, makes it reachable (vsmfs_append_end()): the
 * size and the times alone in a shared handle (vsmfs_set_size_times(),
 * inode.c), or the new pages joined to the run and the size in a shared
 * metadata handle, or under s_trans_mutex where that cannot be
 * (vsmfs_append_grow()). A crash before the commit
 * leaves the old size, the bytes written past it (which growing the file
 * zeroes first, as it does any), and the reserved pages free.
 *
 * An append within one piece takes @e rather than looking it up again.
 *
 * Return: 0, -EAGAIN if the write is not of that kind, or another
 * negative errno (nothing reserved in either case).
 */
static __always_inline int vsmfs_append_begin(struct vsmfs_wmap *m, u64 e)
{
	struct inode *inode = m->inode;
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_append *a = &m->ap;
	u64 size = i_size_read(inode), key = m->pos >> VSMFS_VSP_SHIFT;
	u64 pstart = key << VSMFS_VSP_SHIFT, wfrom = m->pos - pstart, wto = wfrom + m->len;
	u64 have, hb;
	int ret;

	/* The entry vsmfs_kept_past() found is this piece's if the write stays in it. */
	if (e == VSMFS_IDX_UNKNOWN || (m->pos + m->len - 1) >> VSMFS_VSP_SHIFT != key)
		e = vsmfs_idx_lookup(inode, key);
	have = e ? vsmfs_idx_count(e) : 0;
	hb = have << VSMFS_BLOCK_SHIFT;
	a->key = key;
	a->e = e;
	a->have = have;
	a->need = DIV_ROUND_UP(wto, VSMFS_BLOCK_SIZE);
	a->size = m->pos + m->len;
	a->credits = vsmfs_cow_blocks_at(VSMFS_COW_MULTI, m->pos, m->len);
	a->r.count = 0;
	/*
	 * The end in this piece, the run ending with the end's page, no
	 * whole page skipped, and the handle's worst case in the journal.
	 */
	if (size < pstart || wto > VSMFS_PIECE_SIZE || wfrom > hb ||
	    a->credits > vsmfs_trans_max_blocks(sbi))
		return -EAGAIN;
	if (DIV_ROUND_UP(size - pstart, VSMFS_BLOCK_SIZE) != have) {
		/*
		 * A run that goes on past the end's page (pages kept past the
		 * end): a write that stays in that page, in place past the
		 * end as any; its last page is the end's.
		 */
		have = DIV_ROUND_UP(size - pstart, VSMFS_BLOCK_SIZE);
		hb = have << VSMFS_BLOCK_SHIFT;
		if (!have || have > vsmfs_idx_count(e) || wto > hb)
			return -EAGAIN;
		a->have = have;
	}
	/* A last page written into needs its frame, and data in it. */
	if (wfrom < hb && (!vsmfs_frames_in(sbi, vsmfs_idx_lpn(e) + have - 1, 1) ||
			   vsmfs_any_unwritten(sbi, vsmfs_idx_lpn(e) + have - 1, 1)))
		return -EAGAIN;
	if (a->need > have) {
		ret = vsmfs_append_plan(inode, key, e, have, a->need, m->flags & VSMFS_WM_LARGE, a);
		if (ret)
			return ret == -ENOSPC ? -EAGAIN : ret;
	}
	m->kind = VSMFS_WK_APPEND;
	return 0;
}

/**
 * vsmfs_append_copy() - (b) of a staged append: the copies
 * @m: the part, begun by vsmfs_append_begin()
 * @from: the data; a copy that stops at a fault leaves nothing done
 *
 * Return: 0, -EFAULT if the copy stopped at a fault, or -EFSCORRUPTED.
 */
static int vsmfs_append_copy(struct vsmfs_wmap *m, struct iov_iter *from)
{
	struct inode *inode = m->inode;
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	const struct vsmfs_append *a = &m->ap;
	u64 size = i_size_read(inode), pstart = a->key << VSMFS_VSP_SHIFT;
	u64 wfrom = m->pos - pstart, wto = wfrom + m->len, hb = a->have << VSMFS_BLOCK_SHIFT;
	bool ranged;
	char __pm *p;
	size_t n;
	int ret;

	/* The last page. */
	if (wfrom < hb) {
		u64 pg = hb - VSMFS_BLOCK_SIZE, to = min(wto, hb);

		p = vsmfs_data_begin(sbi, vsmfs_idx_lpn(a->e) + a->have - 1, 0, VSMFS_BLOCK_SIZE,
				     &ranged);
		ret = -EFSCORRUPTED;
		if (p) {
			if (wfrom > size - pstart)
				vsmfs_zero_pm(p + (size - pstart - pg), wfrom - (size - pstart));
			pagefault_disable();
			n = vsmfs_copy_from_iter(p + (wfrom - pg), to - wfrom, from);
			pagefault_enable();
			ret = n < to - wfrom ? -EFAULT : 0;
		}
		vsmfs_data_end(ranged);
		if (ret)
			return ret;
	}
	/* The new pages, from the start of the first. */
	if (a->need > a->have) {
		u64 nb = a->need << VSMFS_BLOCK_SHIFT;

		p = vsmfs_data_begin(sbi, a->dst, 0, nb - hb, &ranged);
		ret = -EFSCORRUPTED;
		if (p) {
			pagefault_disable();
			n = vsmfs_copy_from_iter(p, wto - hb, from);
			pagefault_enable();
			ret = n < wto - hb ? -EFAULT : 0;
			/* Nothing to zero stores nothing, and leaves nothing to fence. */
			if (!ret && wto < nb)
				vsmfs_zero_pm(p + (wto - hb), nb - wto);
		}
		vsmfs_data_end(ranged);
		if (ret)
			return ret;
	}
	vsmfs_stat_add(sbi, data_user_bytes, m->len);
	return 0;
}

/*
 * vsmfs_append_end() - (c) of a staged append: the size, and the new pages
 * @m: the part, copied by vsmfs_append_copy()
 * @ret: what the copy returned
 *
 * See vsmfs_append_begin(). A part undone gives back its pages and the
 * bytes it took from the source.
 *
 * Return: the bytes written, -EAGAIN if the append found no room for its
 * reserved pages beside the run's (a handle that needs the run's alone
 * can make it), -EFAULT if the copy stopped at a fault (nothing done that
 * the file shows), or another negative errno (the same).
 */
static __always_inline ssize_t vsmfs_append_end(struct vsmfs_wmap *m, int ret)
{
	struct inode *inode = m->inode;
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	const struct vsmfs_append *a = &m->ap;
	bool owned = false;

	if (ret)
		goto undo;
	/* (b) durable before (c) begins. */
	vsmfs_fence_pending();
	if (a->need > a->have)
		ret = vsmfs_append_grow(m, &owned);
	else
		ret = vsmfs_set_size_times(inode, m->pos + m->len, current_time(inode));
	if (ret && !owned)
		goto undo;
	vsmfs_stat_inc(sbi, write_staged_appends);
	trace_vsmfs_mcow_write(inode, m->pos, m->len, 0, 0, 0, 0, ret ?: m->len);
	return ret ?: m->len;

undo:
	/* Nothing is written that the file shows: the source as it came. */
	vsmfs_wmap_revert(m);
	if (a->r.count)
		vsmfs_resv_release(sbi, &m->ap.r);
	/*
	 * Out of space with the reserved pages taken besides the run's own
	 * (vsmfs_append_grow() swapping them in): the write is made in one
	 * handle, which needs the run's alone.
	 */
	return ret == -ENOSPC ? -EAGAIN : ret;
}

/**
 * vsmfs_falloc_pages() - fallocate() of new pages of one piece, beside
 *	other handles
 * @inode: a regular file, locked for writing, its invalidate_lock held
 *	for writing
 * @from: start of the range
 * @to: its end, in the same piece
 * @large: runs start at free superpages (a large file)
 * @size: the size the file takes (the last piece of a fallocate() that
 *	extends it), or 0 for none
 *
 * The pages of the range the piece's run does not reach yet, and those
 * between its end and the range, are added as an append adds pages
 * (vsmfs_append_plan()): chosen and reserved in DRAM, zeroed with
 * non-temporal stores holding only the inode's locks, and a fence on this
 * CPU makes the zeros durable before the one short handle that makes them
 * the file's, marked unwritten, with the size: a shared metadata handle
 * where it can, beside other operations, else one under s_trans_mutex
 * (vsmfs_append_grow()). With @size past the end, the bytes past the old
 * end in its page are zeroed first, outside the handle (past the end on
 * PM until it commits). A crash before the commit leaves the file as it
 * was and the reserved pages free; after it, the pages zeroed and
 * unwritten, and the size.
 *
 * Return: 0, -EAGAIN if the range is not of that kind (pages of the run
 * without frames in it, or no room to reserve: nothing done, the caller
 * allocates in a handle, vsmfs_wmap_begin() with VSMFS_WM_FALLOC), or
 * another negative errno (nothing done).
 */
int vsmfs_falloc_pages(struct inode *inode, loff_t from, loff_t to, bool large, loff_t size)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	/* Only the fields of an append are set: not zeroed at entry. */
	struct vsmfs_wmap m __uninitialized;
	struct vsmfs_append *a = &m.ap;
	u64 key = from >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
	u64 first = (from - pstart) >> VSMFS_BLOCK_SHIFT, e, have;
	bool owned, ranged;
	char __pm *p;
	int ret;

	m.inode = inode;
	m.pos = from;
	m.len = to - from;
	m.flags = VSMFS_WM_FALLOC | (large ? VSMFS_WM_LARGE : 0);
	down_write(&VSMFS_I(inode)->i_idx_sem);
	e = vsmfs_idx_lookup(inode, key);
	have = e ? vsmfs_idx_count(e) : 0;
	a->key = key;
	a->e = e;
	a->have = have;
	a->need = DIV_ROUND_UP(to - pstart, VSMFS_BLOCK_SIZE);
	a->size = max_t(loff_t, size, i_size_read(inode));
	/* An append's, and the page table block of the pages marked. */
	a->credits = vsmfs_cow_blocks_at(VSMFS_COW_MULTI, from, to - from) + 1;
	a->r.count = 0;
	/*
	 * Pages to add, and the run's pages in the range with frames: holes
	 * a sparse file keeps in it (and before the range, past the run) are
	 * filled or kept in a handle of the other kind.
	 */
	ret = -EAGAIN;
	/* Nothing to add: done, but for a size to set. */
	if (a->need <= have && !(size > i_size_read(inode)) &&
	    vsmfs_frames_in(sbi, vsmfs_idx_lpn(e) + first, a->need - first) == a->need - first)
		ret = 0;
	if (a->need <= have || a->credits > vsmfs_trans_max_blocks(sbi) ||
	    (sbi->s_noframe && first > have) ||
	    (first < have && vsmfs_frames_in(sbi, vsmfs_idx_lpn(e) + first, have - first) !=
	     have - first))
		goto out;
	ret = vsmfs_append_plan(inode, key, e, have, a->need, large, a);
	if (ret)
		goto out_nospc;
	p = vsmfs_data_begin(sbi, a->dst, 0, (a->need - have) << VSMFS_BLOCK_SHIFT, &ranged);
	if (p)
		vsmfs_zero_pm(p, (a->need - have) << VSMFS_BLOCK_SHIFT);
	vsmfs_data_end(ranged);
	ret = -EFSCORRUPTED;
	if (!p)
		goto out_release;
	/* The zeros durable before the handle that makes them the file's. */
	if (size > i_size_read(inode))
		vsmfs_zero_past_end(inode);
	else
		vsmfs_fence_pending();
	ret = vsmfs_append_grow(&m, &owned);
	if (owned)
		goto out;
out_release:
	if (a->r.count)
		vsmfs_resv_release(sbi, &a->r);
out_nospc:
	/* No room beside the run's pages: a handle that needs the run's alone. */
	if (ret == -ENOSPC)
		ret = -EAGAIN;
out:
	up_write(&VSMFS_I(inode)->i_idx_sem);
	return ret;
}

/*
 * Whether a write ending at @end reaches pages past the last page of a
 * file of @size bytes that the file keeps (FALLOC_FL_KEEP_SIZE): the run
 * of the piece holding byte @end - 1 reaches it. Such a write, from
 * inside the file or its end, overwrites those pages by page swaps rather
 * than appending pages. Their frames are zeroed (unwritten) or hold bytes
 * past the end, which no version of the file shows: swapping fresh pages
 * in keeps them so until the handle that grows the size commits, where a
 * write in place would leave its bytes there if a crash came first. A
 * write that stays in the last page is an append (vsmfs_append_begin()).
 * The index entry looked up, of the piece holding byte @end - 1, is left
 * in @*ep (left alone if none was).
 * Context: i_idx_sem held.
 */
static __always_inline bool vsmfs_kept_past(struct inode *inode, loff_t size, loff_t end,
					    u64 *ep)
{
	u64 key = (end - 1) >> VSMFS_VSP_SHIFT, e;

	if (DIV_ROUND_UP(end, VSMFS_BLOCK_SIZE) <= DIV_ROUND_UP(size, VSMFS_BLOCK_SIZE))
		return false;
	e = vsmfs_idx_lookup(inode, key);
	*ep = e;
	return e && DIV_ROUND_UP(end - (key << VSMFS_VSP_SHIFT), VSMFS_BLOCK_SIZE) <=
		    vsmfs_idx_count(e);
}

/*
 * A write over pages on bad frames: each must be overwritten whole, which
 * copy-on-write does into fresh pages (data=inplace too, for this write),
 * leaving the bad frames to be retired when the commit frees them. A
 * write that would keep bytes of such a page fails with EIO, as its read
 * does. Context: the inode locked for writing.
 */
static noinline int vsmfs_wmap_bad(struct inode *inode, loff_t pos, size_t len,
				   unsigned int *flags)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 pg, first = pos >> VSMFS_BLOCK_SHIFT, last = (pos + len - 1) >> VSMFS_BLOCK_SHIFT;
	bool bad = false;
	int ret = 0;

	down_read(&vi->i_idx_sem);
	for (pg = first; pg <= last; pg++) {
		u64 e = vsmfs_idx_lookup(inode, pg / VSMFS_VSP_PAGES), in = pg % VSMFS_VSP_PAGES;

		if (!e || in >= vsmfs_idx_count(e) ||
		    !vsmfs_blk_bad(sbi, vsmfs_lpn_blk(sbi, vsmfs_idx_lpn(e) + in)))
			continue;
		if ((pg << VSMFS_BLOCK_SHIFT) < pos ||
		    ((pg + 1) << VSMFS_BLOCK_SHIFT) > pos + len) {
			ret = -EIO;
			break;
		}
		bad = true;
	}
	up_read(&vi->i_idx_sem);
	if (!ret && bad && !(*flags & VSMFS_WM_ATOMIC))
		*flags |= VSMFS_WM_ATOMIC | VSMFS_WM_COW(VSMFS_COW_MULTI);
	return ret;
}

/* vsmfs_wmap_begin(), inlined into vsmfs_write_part(). */
static __always_inline int __vsmfs_wmap_begin(struct vsmfs_wmap *m, struct inode *inode,
					      loff_t pos, size_t len, unsigned int flags)
{
	u64 e = VSMFS_IDX_UNKNOWN;
	loff_t size;
	int ret;

	if (flags & (VSMFS_WM_FAULT | VSMFS_WM_FALLOC)) {
		m->inode = inode;
		m->pos = pos;
		m->len = len;
		m->flags = flags;
		return vsmfs_alloc_begin(m);
	}
	if (vsmfs_any_bad(VSMFS_SB(inode->i_sb))) {
		ret = vsmfs_wmap_bad(inode, pos, len, &flags);
		if (ret)
			return ret;
	}
	m->inode = inode;
	m->pos = pos;
	m->len = len;
	m->flags = flags;
	if (!(flags & VSMFS_WM_ATOMIC)) {
		ret = vsmfs_inplace_begin(m);
		if (ret != -EAGAIN)
			return ret;
	} else {
		m->cow = flags >> VSMFS_WM_COW_SHIFT;
	}
	ret = vsmfs_wmap_lock(m);
	if (ret)
		return ret;
	size = i_size_read(inode);
	ret = -EAGAIN;
	/*
	 * Overwrites inside the size are staged, and so are writes from
	 * inside it or its end into pages the file keeps past it; appends
	 * past it too: see there.
	 */
	if ((flags & VSMFS_WM_ATOMIC) && m->cow != VSMFS_COW_SUPERPAGE &&
	    (pos + len <= size || (pos <= size && vsmfs_kept_past(inode, size, pos + len, &e))))
		ret = vsmfs_staged_begin(m);
	else if (pos >= size)
		ret = vsmfs_append_begin(m, e);
	if (ret == -EAGAIN)
		ret = vsmfs_handle_begin(m);
	if (ret)
		vsmfs_wmap_unlock(m);
	return ret;
}

/**
 * vsmfs_wmap_begin() - the begin step of a write: locks, lookup, decision
 * @m: the part, set up here
 * @inode: a regular file, locked for writing
 * @pos: start of the part
 * @len: its length, > 0; within one piece unless @flags has
 *	VSMFS_WM_ATOMIC (vsmfs_atomic_part() bounds it)
 * @flags: VSMFS_WM_*, and VSMFS_WM_COW() of the cow= mode with
 *	VSMFS_WM_ATOMIC
 *
 * Decide how [@pos, @pos + @len) is made, and prepare it:
 *
 * - a write fault (VSMFS_WM_FAULT: the caller holds invalidate_lock
 *   shared) or fallocate() (VSMFS_WM_FALLOC: the caller holds it for
 *   writing) allocates the range's zeroed pages in a handle
 *   (VSMFS_WK_ALLOC; VSMFS_WK_NONE, nothing held, for a fault on a page
 *   that needs none);
 * - data=inplace overwrites framed, written pages inside the size with no
 *   handle (VSMFS_WK_INPLACE), else stages an append (VSMFS_WK_APPEND),
 *   else writes in place in one handle (VSMFS_WK_NEW);
 * - data=atomic stages an overwrite inside the size (VSMFS_WK_STAGED, not
 *   with cow=superpage) or an append (VSMFS_WK_APPEND), else makes the
 *   copy-on-write in one handle (VSMFS_WK_COW).
 *
 * Return: 0 with what @m->kind needs held, or a negative errno with
 * nothing held.
 */
int vsmfs_wmap_begin(struct vsmfs_wmap *m, struct inode *inode, loff_t pos, size_t len,
		     unsigned int flags)
{
	return __vsmfs_wmap_begin(m, inode, pos, len, flags);
}

/* The copy step: the data from @from, one way per kind. */
static __always_inline ssize_t vsmfs_wmap_copy(struct vsmfs_wmap *m, struct iov_iter *from)
{
	m->from = from;
	m->count = iov_iter_count(from);
	switch (m->kind) {
	case VSMFS_WK_INPLACE:
		return vsmfs_inplace_copy(m, from);
	case VSMFS_WK_STAGED:
		return vsmfs_staged_copy(m, from);
	case VSMFS_WK_APPEND:
		return vsmfs_append_copy(m, from);
	case VSMFS_WK_COW:
	case VSMFS_WK_NEW:
		return vsmfs_handle_copy(m, from);
	default:
		return 0;
	}
}

/* vsmfs_wmap_end(), inlined into vsmfs_write_part(). */
static __always_inline ssize_t __vsmfs_wmap_end(struct vsmfs_wmap *m, ssize_t ret)
{
	bool direct = m->flags & VSMFS_WM_DIRECT;

	switch (m->kind) {
	case VSMFS_WK_INPLACE:
		return vsmfs_inplace_end(m, ret);
	case VSMFS_WK_ALLOC:
		return vsmfs_alloc_end(m, ret);
	case VSMFS_WK_STAGED:
		ret = vsmfs_staged_end(m, ret);
		break;
	case VSMFS_WK_APPEND:
		ret = vsmfs_append_end(m, ret);
		/*
		 * A copy stopped at a fault: in place, made again in a handle,
		 * where a short copy is a short write; with data=atomic, from a
		 * source that cannot fault. No room: in a handle, which needs
		 * the run's pages alone.
		 */
		if (ret == -EAGAIN || (ret == -EFAULT && !(m->flags & VSMFS_WM_ATOMIC))) {
			ret = vsmfs_handle_begin(m);
			if (!ret)
				return -EAGAIN;
		}
		break;
	case VSMFS_WK_COW:
	case VSMFS_WK_NEW:
		ret = vsmfs_handle_end(m, ret);
		break;
	default:
		return ret;
	}
	/* With VSMFS_WM_DIRECT, a copy stopped at a fault: made again. */
	if (direct && ret == -EFAULT)
		ret = -EAGAIN;
	vsmfs_wmap_unlock(m);
	return ret;
}

/**
 * vsmfs_wmap_end() - the end step of a write: publish, or undo
 * @m: the part, as vsmfs_wmap_begin() and the copy step left it
 * @ret: what the copy step returned (0 for VSMFS_WK_ALLOC, whose caller
 *	may have changed the inode in its handle meanwhile)
 *
 * Make what was copied the file's, with its size and times, and end the
 * handle; or, if the copy failed, undo the part. A staged append that
 * cannot be made so (its copy stopped at a fault in place, or no room
 * beside the run's pages) is begun again in one handle, with the locks
 * kept: @m->kind is then VSMFS_WK_COW or VSMFS_WK_NEW, and the caller
 * copies again. Else @m->kind is VSMFS_WK_NONE: nothing is held.
 *
 * Return: the bytes written (0 for VSMFS_WK_ALLOC), -EAGAIN if the part
 * must be copied again (into the new kind, or with VSMFS_WM_DIRECT from a
 * source that cannot fault: nothing done, the source as it came), or
 * another negative errno.
 */
ssize_t vsmfs_wmap_end(struct vsmfs_wmap *m, ssize_t ret)
{
	return __vsmfs_wmap_end(m, ret);
}

/**
 * vsmfs_write_part() - make one part of a write
 * @inode: a regular file, locked for writing
 * @pos: start of the part
 * @len: its length, > 0 (see vsmfs_wmap_begin())
 * @from: the data: with VSMFS_WM_ATOMIC and without VSMFS_WM_DIRECT, a
 *	source whose copy cannot come up short (see vsmfs_write_held())
 * @flags: VSMFS_WM_ATOMIC with VSMFS_WM_COW(), VSMFS_WM_DIRECT,
 *	VSMFS_WM_LARGE
 *
 * Begin, copy, end (see the top of this file). With VSMFS_WM_ATOMIC
 * (data=atomic), the part is written atomically: the new content of
 * every page reaches PM in fresh pages, and one transaction switches the
 * file to them, so after a crash the file holds the old or the new
 * content of the whole part, never a mix.
 *
 * Ordering of an atomic part: (1) user mappings of the range are removed
 * and pinned pages waited for (vsmfs_wmap_lock()); (2) new data is written
 * to fresh pages with non-temporal stores, the merged old bytes with
 * cached stores that are written back (vsmfs_merge_old()), both durable
 * at the next fence; (3) the page table entries are swapped and the
 * index switched in the transaction's DRAM copies, and the live kernel
 * PTEs are changed; (4) one TLB shootdown for the whole part, before any
 * page freed below can be allocated again; (5) the replaced pages are
 * freed in the transaction, and the scratch pages that took the old frames
 * of swapped pages, only reserved in DRAM, are given back (the bitmap on PM
 * never had them); (6) commit: a fence makes (2) durable, then the
 * metadata of (3) and (5) is committed at once. A crash before (6) leaves
 * the old page table and index, whose frames were never written; after
 * it, the new ones. An error after part of it was done commits the part
 * done, which is atomic by itself, unless a run it replaced or reserved
 * could not be freed: then the handle fails (vsmfs_trans_fail()) and the
 * whole part with it.
 *
 * Return: the bytes written (short after a fault on the user buffer, in
 * place), -EAGAIN with VSMFS_WM_DIRECT if the part must be made again
 * from a source that cannot fault (nothing done, @from untouched), or
 * another negative errno.
 */
ssize_t vsmfs_write_part(struct inode *inode, loff_t pos, size_t len, struct iov_iter *from,
			 unsigned int flags)
{
	/* Only the fields of the kind chosen are set: not zeroed at entry. */
	struct vsmfs_wmap m __uninitialized;
	ssize_t n;

	n = __vsmfs_wmap_begin(&m, inode, pos, len, flags);
	if (n)
		return n;
	do {
		n = vsmfs_wmap_copy(&m, from);
		n = __vsmfs_wmap_end(&m, n);
	} while (n == -EAGAIN && m.kind != VSMFS_WK_NONE);
	return n;
}
