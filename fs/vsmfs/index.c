// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs per-inode index: lookups and changes of the index of an inode,
 * zeroing of the allocated bytes of a file range, the reserved tail of a
 * file's last VSP, and truncation.
 *
 * The index maps a key to a run of logical pages: for regular files a key
 * is a 2 MiB piece of the file (a virtual superpage), for directories and
 * long symlinks a 4 KiB block. Keys 0..7 are in the inode; then a single
 * and a double indirect block of 512 entries each. Index blocks are
 * metadata, changed under transactions.
 *
 * Ordering: index blocks change only in their DRAM copies, which reach PM
 * through the journal; the ordering of zeroed data bytes is given at
 * vsmfs_zero_mapped() and vsmfs_truncate().
 */
#include <linux/fs.h>
#include "vsmfs.h"
#include "ptable.h"
#include "mcache.h"
#include "vsp.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "pmem.h"

/*
 * The DRAM copy of index block @blk, found at level @d of @vi's index: the
 * one a lookup at that level found last if it is @blk's (a copy is the only
 * one of its block and lives until unmount: what vsmfs_mblk_get() would
 * return), else vsmfs_mblk_get()'s, kept for the next lookup. Lookups under
 * i_idx_sem shared may race to keep theirs; any copy kept is checked.
 */
static struct vsmfs_mblk *vsmfs_idx_mblk(struct vsmfs_sb_info *sbi,
					 struct vsmfs_inode_info *vi, int d, u64 blk)
{
	struct vsmfs_mblk *mb = READ_ONCE(vi->i_idx_mb[d]);

	if (mb && mb->m_blk == blk)
		return mb;
	mb = vsmfs_mblk_get(sbi, blk);
	if (!IS_ERR(mb))
		WRITE_ONCE(vi->i_idx_mb[d], mb);
	return mb;
}

/*
 * Walk the index to @key. Returns a pointer to the entry in DRAM (the
 * inode's own array or an index block's DRAM copy) and the block holding
 * it, allocating index blocks on the way when @t is given.
 */
static __le64 *vsmfs_idx_slot(struct vsmfs_trans *t, struct inode *inode, u64 key,
			      struct vsmfs_mblk **mbp, int *err)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 path[2], *root;
	int depth, d;
	struct vsmfs_mblk *mb = NULL;
	__le64 *slot = NULL;

	*err = 0;
	if (key < VSMFS_NDIRECT)
		return NULL;	/* caller uses vi->i_index directly */
	key -= VSMFS_NDIRECT;
	if (key < VSMFS_IND_ENTRIES) {
		depth = 1;
		root = &vi->i_index[VSMFS_NDIRECT];
		path[0] = key;
	} else {
		key -= VSMFS_IND_ENTRIES;
		if (key >= (u64)VSMFS_IND_ENTRIES * VSMFS_IND_ENTRIES) {
			*err = -EFBIG;
			return NULL;
		}
		depth = 2;
		root = &vi->i_index[VSMFS_NDIRECT + 1];
		path[0] = key / VSMFS_IND_ENTRIES;
		path[1] = key % VSMFS_IND_ENTRIES;
	}
	for (d = 0; d < depth; d++) {
		u64 lpn = slot ? le64_to_cpu(*slot) : *root;

		if (!lpn) {
			if (!t)
				return NULL;
			*err = vsmfs_alloc_pages(t, 1, false, &lpn);
			if (*err)
				return NULL;
			mb = vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, lpn));
			*err = PTR_ERR_OR_ZERO(mb);
			if (!*err)
				*err = vsmfs_trans_get_write_access(t, mb);
			if (!*err && slot) {
				unsigned int at = (u8 *)slot - (*mbp)->m_data;

				*err = vsmfs_trans_get_write_access_range(t, *mbp, at,
									  sizeof(*slot));
			}
			if (*err) {
				/* Not linked anywhere: give the page back, or fail. */
				vsmfs_trans_fail(t, vsmfs_free_pages(t, lpn, 1));
				return NULL;
			}
			vi->i_pages++;
			memset(mb->m_data, 0, VSMFS_BLOCK_SIZE);
			vsmfs_trans_new_block(t, mb);
			vsmfs_trans_dirty(t, mb);
			if (slot) {
				*slot = cpu_to_le64(lpn);
				vsmfs_trans_dirty(t, *mbp);
			} else {
				*root = lpn;
			}
		} else {
			u64 blk = vsmfs_lpn_blk(sbi, lpn & VSMFS_IDX_LPN_MASK);

			if (!blk)
				vsmfs_fs_error(sbi->s_sb, inode->i_ino,
					       "index block at logical page %llu has no frame",
					       lpn & VSMFS_IDX_LPN_MASK);
			mb = blk ? vsmfs_idx_mblk(sbi, vi, d, blk) : ERR_PTR(-EFSCORRUPTED);
			if (IS_ERR(mb)) {
				*err = PTR_ERR(mb);
				return NULL;
			}
		}
		slot = (__le64 *)mb->m_data + path[d];
		*mbp = mb;
	}
	return slot;
}

/* Whether the last-level index block holding double-indirect @key exists. */
static bool vsmfs_idx_block_exists(struct inode *inode, u64 key)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	u64 top = VSMFS_I(inode)->i_index[VSMFS_NDIRECT + 1];
	struct vsmfs_mblk *mb;

	if (!top)
		return false;
	key -= VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
	top = vsmfs_lpn_blk(sbi, top & VSMFS_IDX_LPN_MASK);
	if (!top)
		return false;
	mb = vsmfs_mblk_get(sbi, top);
	if (IS_ERR(mb))
		return false;
	return ((__le64 *)mb->m_data)[key / VSMFS_IND_ENTRIES] != 0;
}

/**
 * vsmfs_idx_lookup() - index entry of a key
 * @inode: the inode
 * @key: file piece (regular files) or block (directories, symlinks)
 *
 * Return: the entry, 0 for a hole.
 */
u64 vsmfs_idx_lookup(struct inode *inode, u64 key)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_mblk *mb;
	u64 e, lpn, cnt;
	__le64 *slot;
	int err;

	if (key < VSMFS_NDIRECT) {
		e = VSMFS_I(inode)->i_index[key];
	} else {
		slot = vsmfs_idx_slot(NULL, inode, key, &mb, &err);
		e = slot ? le64_to_cpu(*slot) : 0;
	}
	/*
	 * An entry naming pages outside the mapping layer, or a run crossing
	 * a VSP, is damage, never an address to use: it reads as a hole.
	 */
	lpn = vsmfs_idx_lpn(e);
	cnt = S_ISREG(inode->i_mode) ? vsmfs_idx_count(e) : 1;
	if (e && (!lpn || lpn % VSMFS_VSP_PAGES + cnt > VSMFS_VSP_PAGES ||
		  lpn + max_t(u64, cnt, 1) > sbi->s_layout.lpages)) {
		vsmfs_fs_error(inode->i_sb, inode->i_ino, "bad index entry %llx at key %llu",
			       e, key);
		return 0;
	}
	return e;
}

/**
 * vsmfs_idx_set() - set the index entry of a key
 * @t: running transaction
 * @inode: the inode; the caller writes it afterwards
 * @key: the key
 * @val: the entry
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_idx_set(struct vsmfs_trans *t, struct inode *inode, u64 key, u64 val)
{
	struct vsmfs_mblk *mb;
	__le64 *slot;
	int err;

	if (key < VSMFS_NDIRECT) {
		VSMFS_I(inode)->i_index[key] = val;
		return 0;
	}
	slot = vsmfs_idx_slot(t, inode, key, &mb, &err);
	if (!slot)
		return err ? err : -EIO;
	err = vsmfs_trans_get_write_access_range(t, mb, (u8 *)slot - mb->m_data, sizeof(*slot));
	if (err)
		return err;
	*slot = cpu_to_le64(val);
	vsmfs_trans_dirty(t, mb);
	return 0;
}

/**
 * vsmfs_idx_next() - the first key at or after @key that has an entry
 * @inode: the inode
 * @key: where to start
 *
 * Index blocks that do not exist are skipped whole, so finding the next
 * piece of a sparse file does not look at every key.
 *
 * Return: the key, or VSMFS_MAX_KEY if there is none.
 */
u64 vsmfs_idx_next(struct inode *inode, u64 key)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 span;

	for (; key < VSMFS_NDIRECT; key++)
		if (vi->i_index[key])
			return key;
	while (key < VSMFS_MAX_KEY) {
		if (key < VSMFS_NDIRECT + VSMFS_IND_ENTRIES) {
			if (!vi->i_index[VSMFS_NDIRECT]) {
				key = VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
				continue;
			}
			span = 1;
		} else {
			if (!vi->i_index[VSMFS_NDIRECT + 1])
				break;
			span = VSMFS_IND_ENTRIES;
		}
		if (vsmfs_idx_lookup(inode, key))
			return key;
		/* A missing second-level block: skip its whole span. */
		if (span > 1 && !vsmfs_idx_block_exists(inode, key))
			key = round_up(key - VSMFS_NDIRECT - VSMFS_IND_ENTRIES + 1, span) +
			      VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
		else
			key++;
	}
	return VSMFS_MAX_KEY;
}

/*
 * Zero @len bytes at @off in the run at logical page @lpn, mapped at @p,
 * but for its pages without frames (zero already, and mapped read-only).
 */
static void vsmfs_zero_holey(struct vsmfs_sb_info *sbi, u64 lpn, char __pm *p, u64 off,
			     u64 len)
{
	u64 end = off + len, n;

	if (!sbi->s_noframe) {
		vsmfs_zero_pm(p + off, len);
		return;
	}
	while (off < end) {
		n = min(end, round_down(off, VSMFS_BLOCK_SIZE) + VSMFS_BLOCK_SIZE) - off;
		if (!vsmfs_lpn_hole(sbi, lpn + (off >> VSMFS_BLOCK_SHIFT)))
			vsmfs_zero_pm(p + off, n);
		off += n;
	}
}

/**
 * vsmfs_zero_mapped() - zero the allocated bytes of a file range
 * @inode: a regular file
 * @from: first byte
 * @to: end of the range
 *
 * Holes in the range are left alone; they read as zeros already. The
 * zeros are written back to PM and durable after the next fence.
 *
 * Context: the caller holds i_idx_sem.
 */
void vsmfs_zero_mapped(struct inode *inode, loff_t from, loff_t to)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);

	while (from < to) {
		u64 key = from >> VSMFS_VSP_SHIFT, pstart = key << VSMFS_VSP_SHIFT;
		u64 e = vsmfs_idx_lookup(inode, key);
		u64 run_end = pstart + (vsmfs_idx_count(e) << VSMFS_BLOCK_SHIFT);
		u64 end = min_t(u64, to, pstart + (1ULL << VSMFS_VSP_SHIFT));
		char __pm *p;

		if (e && (u64)from < run_end) {
			end = min(end, run_end);
			p = vsmfs_lpn_ptr(sbi, vsmfs_idx_lpn(e));
			if (p)
				vsmfs_zero_holey(sbi, vsmfs_idx_lpn(e), p, from - pstart,
						 end - from);
		}
		from = end;
	}
}

/**
 * vsmfs_zero_past_end() - zero the bytes past a file's end in its last
 *	page, before a shared handle grows the size
 * @inode: a regular file, its size not yet grown
 *
 * Outside any handle, with this CPU caught up with page swaps
 * (vsmfs_vsp_enter()), and fenced on this CPU before the handle begins:
 * past the end on PM until the handle that grows the size commits, so a
 * crash shows nothing of them, and that commit finds them zero.
 *
 * Context: as vsmfs_zero_mapped().
 */
void vsmfs_zero_past_end(struct inode *inode)
{
	loff_t size = i_size_read(inode);

	vsmfs_vsp_enter();
	vsmfs_zero_mapped(inode, size, round_up(size, VSMFS_BLOCK_SIZE));
	vsmfs_vsp_exit();
	vsmfs_fence_pending();
}

/**
 * vsmfs_tail_pages() - pages of a run's superpage after the run
 * @e: index entry of the run
 *
 * Return: how many logical pages follow the run in its VSP.
 */
u64 vsmfs_tail_pages(u64 e)
{
	u64 end = vsmfs_idx_lpn(e) + vsmfs_idx_count(e);

	return round_up(end, VSMFS_VSP_PAGES) - end;
}

/**
 * vsmfs_tail_release() - give back the reserved tail of a file's last VSP
 * @t: running transaction
 * @inode: a regular file; written by the caller afterwards
 * @freed: pages given back
 *
 * A growing large file owns the rest of the VSP its last run starts in,
 * so appends extend the run in place (ZFDM). The reservation is recorded
 * by i_tail_key and released here: at the last close of the file, before
 * its runs are cut or replaced, and when it is evicted.
 *
 * Context: i_idx_sem held for writing.
 * Return: 0 or a negative errno.
 */
int vsmfs_tail_release(struct vsmfs_trans *t, struct inode *inode, u64 *freed)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 e, n;
	int ret;

	*freed = 0;
	if (!vi->i_tail_key)
		return 0;
	e = vsmfs_idx_lookup(inode, vi->i_tail_key - 1);
	n = e ? vsmfs_tail_pages(e) : 0;
	if (n) {
		ret = vsmfs_free_data_pages(t, vsmfs_idx_lpn(e) + vsmfs_idx_count(e), n);
		if (ret)
			return ret;
		vi->i_pages -= vsmfs_frames_in(t->t_sbi, vsmfs_idx_lpn(e) + vsmfs_idx_count(e), n);
		inode->i_blocks = vi->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	}
	vi->i_tail_key = 0;
	*freed = n;
	return 0;
}

/*
 * Room a part of a truncation leaves in its transaction for the caller:
 * the inode's block, the i-number bitmap block, an extended attribute
 * block and its bitmap block (eviction, or an ACL set with the size),
 * and the bitmap block of a released tail.
 */
#define VSMFS_TRUNC_RESERVE	5
/* Blocks freeing one run dirties: its bitmap block and its index block. */
#define VSMFS_TRUNC_STEP	2

/* Whether @t has room for one more step of a truncation. */
static bool vsmfs_trunc_room(struct vsmfs_trans *t, bool *more)
{
	if (!more || vsmfs_trans_room(t) >= VSMFS_TRUNC_RESERVE + VSMFS_TRUNC_STEP)
		return true;
	*more = true;
	return false;
}

/**
 * vsmfs_idx_prev() - the last key at or before @key that has an entry
 * @inode: the inode
 * @key: where to start
 *
 * Index blocks that do not exist are skipped whole.
 *
 * Return: the key, or VSMFS_MAX_KEY if there is none.
 */
u64 vsmfs_idx_prev(struct inode *inode, u64 key)
{
	const u64 dind = VSMFS_NDIRECT + VSMFS_IND_ENTRIES;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);

	for (;;) {
		if (key >= dind) {
			if (!vi->i_index[VSMFS_NDIRECT + 1]) {
				key = dind - 1;
				continue;
			}
			if (vsmfs_idx_lookup(inode, key))
				return key;
			/* A missing second-level block: skip its whole span. */
			if (!vsmfs_idx_block_exists(inode, key))
				key = round_down(key - dind, VSMFS_IND_ENTRIES) + dind;
			key--;
		} else if (key >= VSMFS_NDIRECT) {
			if (!vi->i_index[VSMFS_NDIRECT]) {
				key = VSMFS_NDIRECT - 1;
				continue;
			}
			if (vsmfs_idx_lookup(inode, key))
				return key;
			key--;
		} else {
			if (vsmfs_idx_lookup(inode, key))
				return key;
			if (!key)
				return VSMFS_MAX_KEY;
			key--;
		}
	}
}

/*
 * Free the index blocks of an inode whose entries are all gone, as many
 * as @t has room for (all if @more is NULL). A block below the double
 * indirect one leaves its slot there before it is freed, so every part
 * commits an index that names only blocks still owned.
 */
static int vsmfs_free_index(struct vsmfs_trans *t, struct inode *inode, bool *more)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 top = vi->i_index[VSMFS_NDIRECT + 1];
	struct vsmfs_mblk *mb;
	int i, ret;

	if (top) {
		mb = vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, top));
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		for (i = VSMFS_IND_ENTRIES - 1; i >= 0; i--) {
			__le64 *slot = (__le64 *)mb->m_data + i;
			u64 lpn = le64_to_cpu(*slot);

			if (!lpn)
				continue;
			if (!vsmfs_trunc_room(t, more))
				return 0;
			ret = vsmfs_trans_get_write_access_range(t, mb, i * sizeof(*slot),
								 sizeof(*slot));
			if (ret)
				return ret;
			*slot = 0;
			vsmfs_trans_dirty(t, mb);
			vi->i_pages--;
			ret = vsmfs_free_pages(t, lpn, 1);
			if (ret)
				return ret;
		}
		if (!vsmfs_trunc_room(t, more))
			return 0;
		vi->i_index[VSMFS_NDIRECT + 1] = 0;
		vi->i_pages--;
		ret = vsmfs_free_pages(t, top, 1);
		if (ret)
			return ret;
	}
	top = vi->i_index[VSMFS_NDIRECT];
	if (top) {
		if (!vsmfs_trunc_room(t, more))
			return 0;
		vi->i_index[VSMFS_NDIRECT] = 0;
		vi->i_pages--;
		ret = vsmfs_free_pages(t, top, 1);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * vsmfs_truncate() - change the size of an inode, freeing what is past it
 * @t: running transaction
 * @inode: the inode; written by the caller afterwards
 * @size: new size
 * @more: set if the truncation needs more transactions; NULL if the caller
 *	knows that what it frees is small (a long symlink's block)
 *
 * Regular files keep the part of the last run up to the new end. Growing,
 * the rest of the page holding the old end is zeroed, so bytes past the
 * end (which a shared mapping of the last page can change) read as zeros
 * in the grown file; they are past the end until the commit, so a crash
 * before it shows nothing of that, and pages allocated past the old end
 * (fallocate with FALLOC_FL_KEEP_SIZE) stay, as ext4 and XFS keep them.
 * Shrinking, the bytes past the new end are inside the file until the
 * commit: the caller zeroes them after it, with vsmfs_zero_mapped(); pages
 * allocated past the old end are freed too when they lie past the new one,
 * and so are they by a truncation to the size the file has.
 *
 * A transaction holds only so many blocks (vsmfs_trans_room()): the runs
 * are freed from the last one down, as many as fit, then the index
 * blocks. When more is left, *@more is set and the caller commits, begins
 * a new transaction and calls again with the same @size. The first part
 * already commits the new size, with VSMFS_IFLAG_TRUNCATING set on the
 * inode until the last part: a crash between parts leaves the file at its
 * new size, as a truncation in one transaction would, and the next
 * read-write mount frees the pages past it (vsmfs_orphan_cleanup()), as
 * it frees an unlinked inode left in use with no links.
 *
 * Context: the caller holds i_idx_sem for writing, and for regular files
 * has removed user mappings past @size.
 * Return: 0 or a negative errno.
 */
int vsmfs_truncate(struct vsmfs_trans *t, struct inode *inode, loff_t size, bool *more)
{
	bool reg = S_ISREG(inode->i_mode);
	u64 keep_pages = DIV_ROUND_UP((u64)size, VSMFS_BLOCK_SIZE);
	u64 key, first, freed;
	int ret;

	if (more)
		*more = false;
	if (reg) {
		ret = vsmfs_tail_release(t, inode, &freed);
		if (ret)
			return ret;

		if (size > inode->i_size)
			vsmfs_zero_mapped(inode, inode->i_size,
					  round_up(inode->i_size, VSMFS_BLOCK_SIZE));
	}
	/*
	 * Growing frees nothing: pages past the old end were reserved by
	 * fallocate, and keep their promise past the new one too (they hold
	 * zeros). Not while a truncation is left to finish, whose pages past
	 * the end may hold old data.
	 */
	if (reg && size > inode->i_size &&
	    !(VSMFS_I(inode)->i_flags & VSMFS_IFLAG_TRUNCATING)) {
		i_size_write(inode, size);
		goto out;
	}
	/* Runs past the new end, wholly or in part, from the last one. */
	first = reg ? keep_pages / VSMFS_VSP_PAGES : keep_pages;
	for (key = vsmfs_idx_prev(inode, VSMFS_MAX_KEY - 1);
	     key < VSMFS_MAX_KEY && key >= first;
	     key = key ? vsmfs_idx_prev(inode, key - 1) : VSMFS_MAX_KEY) {
		u64 e = vsmfs_idx_lookup(inode, key), keep, cnt;

		cnt = reg ? vsmfs_idx_count(e) : 1;
		keep = reg && keep_pages > key * VSMFS_VSP_PAGES ?
		       keep_pages - key * VSMFS_VSP_PAGES : 0;
		if (keep >= cnt)
			continue;
		if (!vsmfs_trunc_room(t, more)) {
			/*
			 * The rest is for the next parts. The file has its
			 * new size from this part on; the pages past it that
			 * it still owns are marked for the next mount to free
			 * should a crash stop the truncation here.
			 */
			VSMFS_I(inode)->i_flags |= VSMFS_IFLAG_TRUNCATING;
			i_size_write(inode, size);
			goto out;
		}
		/* A directory's pages are metadata, a regular file's data. */
		ret = reg ? vsmfs_free_data_pages(t, vsmfs_idx_lpn(e) + keep, cnt - keep) :
			    vsmfs_free_pages(t, vsmfs_idx_lpn(e) + keep, cnt - keep);
		if (ret)
			return ret;
		VSMFS_I(inode)->i_pages -= vsmfs_frames_in(t->t_sbi, vsmfs_idx_lpn(e) + keep,
							   cnt - keep);
		ret = vsmfs_idx_set(t, inode, key,
				    keep ? vsmfs_idx_make(vsmfs_idx_lpn(e), keep) : 0);
		if (ret)
			return ret;
	}
	if (!size) {
		ret = vsmfs_free_index(t, inode, more);
		if (ret)
			return ret;
		if (more && *more) {
			VSMFS_I(inode)->i_flags |= VSMFS_IFLAG_TRUNCATING;
			i_size_write(inode, size);
			goto out;
		}
	}
	VSMFS_I(inode)->i_flags &= ~VSMFS_IFLAG_TRUNCATING;
	i_size_write(inode, size);
out:
	inode->i_blocks = VSMFS_I(inode)->i_pages << (VSMFS_BLOCK_SHIFT - 9);
	return 0;
}
