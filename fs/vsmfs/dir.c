// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs directories: their blocks and entries, the DRAM index of each, and
 * readdir. The namespace operations that change entries (lookup, create,
 * link, unlink, rename) are in namei.c.
 *
 * A directory is a sequence of 4 KiB blocks (metadata, changed under
 * transactions) holding variable-length entries that never cross a block.
 * An entry's byte position in the directory never changes, so it is the
 * readdir offset (plus 2, after "." and ".."). A removed entry's space goes
 * to the entry before it in its block (the first entry of a block is marked
 * free instead) and is reused by later insertions.
 *
 * Every directory in use has a DRAM index (struct vsmfs_dir_index), built
 * by one walk over its blocks on first use and kept up to date by every
 * change: a hash table from name hash to entry position, so that lookup,
 * create and unlink read one block, not the directory; the largest free
 * span of each block in a max-tree, so that an insertion finds the first
 * block with room in O(log blocks); and per block where its last entry is
 * and the largest span the others offer, so that an insertion at the end
 * of a block (the usual one) and most removals walk no block at all. The
 * index holds nothing that is not in the blocks: it is freed when the
 * inode is evicted and rebuilt when the directory is used again. It costs
 * one 8-byte slot per entry at a load kept between 3/8 and 3/4 (11 to 22
 * bytes per entry) and 8 bytes per directory block.
 *
 * Locking: a directory changes only with its i_rwsem held exclusive;
 * lookup and readdir hold it shared. So the index changes only with
 * i_rwsem exclusive and is read with it at least shared. Lookups that find
 * no index each build one; the first to publish it in i_dir wins and the
 * others free theirs. A change reserves index memory before its
 * transaction starts, so a started change never fails for lack of DRAM.
 *
 * PM ordering: directory blocks change only in their DRAM copies and reach
 * PM through the journal (journal.c); the index is never on PM.
 */
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include "vsmfs.h"
#include "ptable.h"
#include "mcache.h"
#include "trans.h"
#include "alloc.h"
#include "inode.h"
#include "fault.h"
#include "dir.h"

#define VSMFS_DIR_MIN_BITS	4

/* A hash table slot: an entry's name hash and its position / 8 + 1. */
struct vsmfs_dslot {
	u32	hash;
	u32	key;		/* 0: empty slot */
};

/**
 * struct vsmfs_dir_index - DRAM index of one directory
 * @slots: hash table, linear probing, 1 << @bits slots
 * @bits: log2 of the table size
 * @count: live entries in the directory
 * @nblk: blocks in the directory
 * @cap: leaves of @room, a power of 2 larger than @nblk
 * @room: max-tree over the blocks; leaf @cap + b holds the largest span of
 *	block b an entry can be inserted into, node i the larger of its
 *	children 2i and 2i + 1; node 0 is unused
 * @tail: @cap offsets, in the same allocation as @room: that of the last
 *	entry of block b (the one that reaches the end of the block)
 * @inner: @cap spans, ditto: at least the largest span of block b an
 *	entry other than its last offers (exact after a walk of the block;
 *	an insertion or removal keeps a bound, and an insertion that finds
 *	less than the bound promised walks the block again); leaf b is the
 *	larger of it and the last's
 * @hint: @cap offsets, ditto: an entry of block b, the one the last removal
 *	in it left its room to (0, the first, before any): where an insertion
 *	looks for room first, and the walk for the entry before a removed one
 *	starts if it is before. Always the start of an entry: an insertion
 *	starts a new entry and keeps the others, and the removal of the entry
 *	it names moves it to the entry before, which takes over the space
 */
struct vsmfs_dir_index {
	struct vsmfs_dslot	*slots;
	unsigned int		bits;
	u32			count;
	u64			nblk;
	u64			cap;
	u16			*room;
	u16			*tail;
	u16			*inner;
	u16			*hint;
};

/*
 * struct vsmfs_dir_iter - walk over the entries of a directory, free ones
 * included, in position order. Holes (unmapped blocks) are passed over.
 */
struct vsmfs_dir_iter {
	struct inode		*dir;
	u64			blk;	/* block of @de */
	u64			end;	/* first block not walked */
	unsigned int		off;	/* offset of @de in its block */
	unsigned int		next;	/* offset of the entry after @de */
	unsigned int		skip;	/* entries before this offset are skipped */
	struct vsmfs_mblk	*mb;	/* block @blk, NULL before it is read */
	struct vsmfs_ddirent	*de;	/* the current entry */
};

/* DRAM copy of directory block @blk, or NULL for a hole. */
static struct vsmfs_mblk *vsmfs_dir_block(struct inode *dir, u64 blk)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(dir->i_sb);
	u64 e = vsmfs_idx_lookup(dir, blk);

	if (!e)
		return NULL;
	return vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, vsmfs_idx_lpn(e)));
}

/* A corrupt entry at @off of a block of @dir, for @why: a file system error. */
static void vsmfs_de_corrupt(struct inode *dir, unsigned int off, const char *why)
{
	vsmfs_fs_error(dir->i_sb, dir->i_ino, "directory: corrupt entry at %u: %s", off, why);
}

/* Sanity of one entry at @off of a block; false if corrupt. */
static bool vsmfs_de_ok(struct inode *dir, struct vsmfs_ddirent *de, unsigned int off)
{
	const char *why = vsmfs_dirent_check(de, off);

	if (why)
		vsmfs_de_corrupt(dir, off, why);
	return !why;
}

/* Bytes of @de an inserted entry can take: all of a free one, the slack of a live one. */
static unsigned int vsmfs_de_room(const struct vsmfs_ddirent *de)
{
	unsigned int rec = le16_to_cpu(de->d_rec_len);

	return de->d_ino ? rec - DIRENT_LEN(de->d_name_len) : rec;
}

/* Walk blocks [@pos's block, @end), from the entry at or after byte position @pos. */
static void vsmfs_iter_init(struct vsmfs_dir_iter *it, struct inode *dir, u64 pos, u64 end)
{
	it->dir = dir;
	it->blk = pos >> VSMFS_BLOCK_SHIFT;
	it->skip = pos & (VSMFS_BLOCK_SIZE - 1);
	it->end = end;
	it->next = 0;
	it->mb = NULL;
	it->de = NULL;
}

/* Step to the next entry: 1 with it->de set, 0 at the end, or a negative errno. */
static int vsmfs_iter_next(struct vsmfs_dir_iter *it)
{
	struct vsmfs_mblk *mb;

	for (;;) {
		if (!it->mb) {
			if (it->blk >= it->end)
				return 0;
			mb = vsmfs_dir_block(it->dir, it->blk);
			if (IS_ERR(mb))
				return PTR_ERR(mb);
			if (!mb) {
				it->blk++;
				it->skip = 0;
				continue;
			}
			it->mb = mb;
			it->next = 0;
			it->de = NULL;
		}
		if (it->next >= VSMFS_BLOCK_SIZE) {
			it->mb = NULL;
			it->blk++;
			it->skip = 0;
			continue;
		}
		it->off = it->next;
		it->de = (void *)it->mb->m_data + it->off;
		if (!vsmfs_de_ok(it->dir, it->de, it->off))
			return -EFSCORRUPTED;
		it->next += le16_to_cpu(it->de->d_rec_len);
		if (it->off >= it->skip)
			return 1;
	}
}

/* Zeroed index memory. Never reclaims through the file system. */
static void *vsmfs_index_alloc(size_t n, size_t size)
{
	unsigned int nofs = memalloc_nofs_save();
	void *p = vsmfs_fault(VSMFS_FAULT_DIR_INDEX) ? NULL : kvcalloc(n, size, GFP_KERNEL);

	memalloc_nofs_restore(nofs);
	return p;
}

static u32 vsmfs_pos_key(u64 pos)
{
	return (pos >> 3) + 1;
}

static u64 vsmfs_key_pos(u32 key)
{
	return (u64)(key - 1) << 3;
}

/* Put an entry in a table that has a free slot. */
static void vsmfs_slot_put(struct vsmfs_dslot *slots, unsigned int bits, u32 hash, u32 key)
{
	u32 mask = (1U << bits) - 1, i = hash_32(hash, bits);

	while (slots[i].key)
		i = (i + 1) & mask;
	slots[i].hash = hash;
	slots[i].key = key;
}

/* Move the entries to a table of 1 << @bits slots. */
static int vsmfs_index_resize(struct vsmfs_dir_index *idx, unsigned int bits)
{
	struct vsmfs_dslot *slots = vsmfs_index_alloc(1UL << bits, sizeof(*slots));
	u32 i;

	if (!slots)
		return -ENOMEM;
	for (i = 0; idx->slots && i < 1U << idx->bits; i++)
		if (idx->slots[i].key)
			vsmfs_slot_put(slots, bits, idx->slots[i].hash, idx->slots[i].key);
	kvfree(idx->slots);
	idx->slots = slots;
	idx->bits = bits;
	return 0;
}

/* Would one more entry take the table past 3/4 full? */
static bool vsmfs_index_full(const struct vsmfs_dir_index *idx)
{
	return ((u64)idx->count + 1) * 4 > 3ULL << idx->bits;
}

/*
 * Empty slot @i, moving later entries of its probe run back so that every
 * entry stays reachable from its home slot (no tombstones).
 */
static void vsmfs_slot_remove(struct vsmfs_dir_index *idx, u32 i)
{
	u32 mask = (1U << idx->bits) - 1, j = i, home;

	for (;;) {
		j = (j + 1) & mask;
		if (!idx->slots[j].key)
			break;
		home = hash_32(idx->slots[j].hash, idx->bits);
		/* An entry whose home lies in (i, j] must stay. */
		if (((j - home) & mask) < ((j - i) & mask))
			continue;
		idx->slots[i] = idx->slots[j];
		i = j;
	}
	idx->slots[i].key = 0;
	idx->count--;
}

/* Recompute the inner nodes of the max-tree from its leaves. */
static void vsmfs_room_fix(struct vsmfs_dir_index *idx)
{
	u64 i;

	for (i = idx->cap - 1; i; i--)
		idx->room[i] = max(idx->room[2 * i], idx->room[2 * i + 1]);
}

static void vsmfs_room_set(struct vsmfs_dir_index *idx, u64 blk, unsigned int room)
{
	u64 i = idx->cap + blk;

	idx->room[i] = room;
	for (i /= 2; i; i /= 2)
		idx->room[i] = max(idx->room[2 * i], idx->room[2 * i + 1]);
}

/**
 * vsmfs_room_find() - the first block of a directory with room for an entry
 * @idx: the directory's index
 * @need: bytes of the entry (DIRENT_LEN())
 *
 * Return: the first block with a span of @need bytes free, or U64_MAX.
 */
u64 vsmfs_room_find(const struct vsmfs_dir_index *idx, unsigned int need)
{
	u64 i = 1;

	if (idx->room[1] < need)
		return U64_MAX;
	while (i < idx->cap)
		i = idx->room[2 * i] >= need ? 2 * i : 2 * i + 1;
	return i - idx->cap;
}

/* Give the max-tree @cap leaves (more than it has). */
static int vsmfs_room_resize(struct vsmfs_dir_index *idx, u64 cap)
{
	u16 *room = vsmfs_index_alloc(5 * cap, sizeof(*room));

	if (!room)
		return -ENOMEM;
	if (idx->room) {
		memcpy(room + cap, idx->room + idx->cap, idx->cap * sizeof(*room));
		memcpy(room + 2 * cap, idx->tail, idx->cap * sizeof(*room));
		memcpy(room + 3 * cap, idx->inner, idx->cap * sizeof(*room));
		memcpy(room + 4 * cap, idx->hint, idx->cap * sizeof(*room));
	}
	kvfree(idx->room);
	idx->room = room;
	idx->tail = room + 2 * cap;
	idx->inner = room + 3 * cap;
	idx->hint = room + 4 * cap;
	idx->cap = cap;
	vsmfs_room_fix(idx);
	return 0;
}

/* Block @blk of @mb changed with its last entry and @idx->inner kept: its leaf. */
static void vsmfs_block_set(struct vsmfs_dir_index *idx, struct vsmfs_mblk *mb, u64 blk)
{
	const struct vsmfs_ddirent *last = (void *)mb->m_data + idx->tail[blk];

	vsmfs_room_set(idx, blk, max_t(unsigned int, idx->inner[blk], vsmfs_de_room(last)));
}

/* Walk block @blk for its last entry, @idx->inner and its leaf. */
static int vsmfs_block_scan(struct inode *dir, struct vsmfs_dir_index *idx, u64 blk)
{
	unsigned int room = 0, inner = 0;
	struct vsmfs_dir_iter it;
	int ret;

	vsmfs_iter_init(&it, dir, blk << VSMFS_BLOCK_SHIFT, blk + 1);
	while ((ret = vsmfs_iter_next(&it)) > 0) {
		room = max(room, vsmfs_de_room(it.de));
		if (it.next == VSMFS_BLOCK_SIZE)
			idx->tail[blk] = it.off;
		else
			inner = max(inner, vsmfs_de_room(it.de));
	}
	if (ret)
		return ret;
	idx->inner[blk] = inner;
	vsmfs_room_set(idx, blk, room);
	return 0;
}

/*
 * The entry at @off of block @mb, which the index names (the last, or the
 * hint), if it offers @need bytes, with *@last set if it is the last. A
 * corrupt one is left to the walk that reports it.
 */
static __always_inline struct vsmfs_ddirent *
vsmfs_block_entry(struct vsmfs_mblk *mb, unsigned int off, unsigned int need, bool *last)
{
	struct vsmfs_ddirent *de = (void *)mb->m_data + off;
	unsigned int rec;

	if (off % VSMFS_DIRENT_ALIGN || !vsmfs_dirent_rec_ok(de, off))
		return NULL;
	rec = le16_to_cpu(de->d_rec_len);
	if ((de->d_ino && DIRENT_LEN(de->d_name_len) > rec) || vsmfs_de_room(de) < need)
		return NULL;
	*last = off + rec == VSMFS_BLOCK_SIZE;
	return de;
}

static void vsmfs_index_destroy(struct vsmfs_dir_index *idx)
{
	kvfree(idx->slots);
	kvfree(idx->room);
	kfree(idx);
}

/* Build the index of @dir by one walk over its blocks. */
static struct vsmfs_dir_index *vsmfs_index_build(struct inode *dir)
{
	u64 nblk = dir->i_size >> VSMFS_BLOCK_SHIFT;
	struct vsmfs_dir_index *idx;
	struct vsmfs_dir_iter it;
	int ret;

	idx = kzalloc(sizeof(*idx), GFP_NOFS);
	if (!idx)
		return ERR_PTR(-ENOMEM);
	idx->nblk = nblk;
	ret = vsmfs_index_resize(idx, VSMFS_DIR_MIN_BITS);
	if (!ret)
		ret = vsmfs_room_resize(idx, roundup_pow_of_two(nblk + 1));
	if (ret)
		goto fail;
	vsmfs_iter_init(&it, dir, 0, nblk);
	while ((ret = vsmfs_iter_next(&it)) > 0) {
		u16 *leaf = &idx->room[idx->cap + it.blk];
		struct vsmfs_ddirent *de = it.de;

		*leaf = max_t(unsigned int, *leaf, vsmfs_de_room(de));
		if (it.next == VSMFS_BLOCK_SIZE)
			idx->tail[it.blk] = it.off;
		else
			idx->inner[it.blk] = max_t(unsigned int, idx->inner[it.blk],
						   vsmfs_de_room(de));
		if (!de->d_ino)
			continue;
		if (vsmfs_index_full(idx)) {
			ret = vsmfs_index_resize(idx, idx->bits + 1);
			if (ret)
				goto fail;
		}
		vsmfs_slot_put(idx->slots, idx->bits, vsmfs_name_hash(de->d_name, de->d_name_len),
			       vsmfs_pos_key((it.blk << VSMFS_BLOCK_SHIFT) + it.off));
		idx->count++;
	}
	if (ret)
		goto fail;
	vsmfs_room_fix(idx);
	return idx;
fail:
	vsmfs_index_destroy(idx);
	return ERR_PTR(ret);
}

/**
 * vsmfs_dir_index() - the DRAM index of a directory
 * @dir: the directory
 *
 * The index of @dir, built if there is none yet.
 *
 * Context: i_rwsem of @dir held, shared or exclusive.
 * Return: the index, or an ERR_PTR.
 */
struct vsmfs_dir_index *vsmfs_dir_index(struct inode *dir)
{
	struct vsmfs_inode_info *vi = VSMFS_I(dir);
	struct vsmfs_dir_index *idx;

	lockdep_assert_held(&dir->i_rwsem);
	/* Pairs with the cmpxchg_release() below: the contents are visible. */
	idx = smp_load_acquire(&vi->i_dir);
	if (idx)
		return idx;
	idx = vsmfs_index_build(dir);
	if (IS_ERR(idx))
		return idx;
	/* Publish the built index: release orders its contents before the pointer. */
	if (cmpxchg_release(&vi->i_dir, NULL, idx)) {
		vsmfs_index_destroy(idx);
		/* Another lookup published first; acquire its contents. */
		idx = smp_load_acquire(&vi->i_dir);
	}
	return idx;
}

/**
 * vsmfs_dir_reserve() - the DRAM index of a directory, with room to grow
 * @dir: the directory
 *
 * The index of @dir with room for one more entry, and for one more block,
 * so that a change that has begun its transaction never fails for lack of
 * DRAM.
 *
 * Context: i_rwsem of @dir held exclusive, no transaction running.
 * Return: the index, or an ERR_PTR.
 */
struct vsmfs_dir_index *vsmfs_dir_reserve(struct inode *dir)
{
	struct vsmfs_dir_index *idx = vsmfs_dir_index(dir);
	int ret = 0;

	lockdep_assert_held_write(&dir->i_rwsem);
	if (IS_ERR(idx))
		return idx;
	if (vsmfs_index_full(idx))
		ret = vsmfs_index_resize(idx, idx->bits + 1);
	if (!ret && idx->nblk >= idx->cap)
		ret = vsmfs_room_resize(idx, idx->cap * 2);
	return ret ? ERR_PTR(ret) : idx;
}

/**
 * vsmfs_dir_index_free() - free the DRAM index of a directory
 * @inode: the inode; any inode may be passed
 *
 * Context: inode eviction.
 */
void vsmfs_dir_index_free(struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);

	if (vi->i_dir) {
		vsmfs_index_destroy(vi->i_dir);
		vi->i_dir = NULL;
	}
}

/* The live entry at byte position @p the index names. */
static int vsmfs_dir_entry(struct inode *dir, u64 p, struct vsmfs_dpos *pos)
{
	unsigned int off = p & (VSMFS_BLOCK_SIZE - 1);

	pos->blk = p >> VSMFS_BLOCK_SHIFT;
	pos->mb = vsmfs_dir_block(dir, pos->blk);
	if (IS_ERR(pos->mb))
		return PTR_ERR(pos->mb);
	if (WARN_ON_ONCE(!pos->mb))
		return -EIO;
	pos->de = (void *)pos->mb->m_data + off;
	if (WARN_ON_ONCE(!pos->de->d_ino))
		return -EIO;
	return 0;
}

/**
 * vsmfs_find_entry() - the live entry of a name in a directory
 * @dir: the directory
 * @idx: its index (vsmfs_dir_index())
 * @name: the name
 * @pos: set to where the entry is
 *
 * Return: 0, -ENOENT if @dir has no entry of @name, or another negative
 * errno.
 */
int vsmfs_find_entry(struct inode *dir, struct vsmfs_dir_index *idx,
		     const struct qstr *name, struct vsmfs_dpos *pos)
{
	u32 hash = vsmfs_name_hash(name->name, name->len);
	u32 mask = (1U << idx->bits) - 1, i;
	int ret;

	/* The table is never full, so the probe ends at an empty slot. */
	for (i = hash_32(hash, idx->bits); idx->slots[i].key; i = (i + 1) & mask) {
		if (idx->slots[i].hash != hash)
			continue;
		ret = vsmfs_dir_entry(dir, vsmfs_key_pos(idx->slots[i].key), pos);
		if (ret)
			return ret;
		if (pos->de->d_name_len == name->len &&
		    !memcmp(pos->de->d_name, name->name, name->len))
			return 0;
	}
	return -ENOENT;
}

/*
 * A new block @blk of @dir, zeroed, its page allocated in @t and named by
 * the index. Return: the block, or an ERR_PTR() (a page allocated is freed
 * by @t, or @t fails).
 */
static struct vsmfs_mblk *vsmfs_dir_new_block(struct vsmfs_trans *t, struct inode *dir, u64 blk)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *mb;
	u64 lpn;
	int ret;

	ret = vsmfs_alloc_pages(t, 1, false, &lpn);
	if (ret)
		return ERR_PTR(ret);
	/* Block and index slot first: a failure leaves the page unlinked. */
	mb = vsmfs_mblk_get(sbi, vsmfs_lpn_blk(sbi, lpn));
	ret = PTR_ERR_OR_ZERO(mb);
	if (!ret)
		ret = vsmfs_trans_get_write_access(t, mb);
	if (!ret)
		ret = vsmfs_idx_set(t, dir, blk, vsmfs_idx_make(lpn, 1));
	if (ret) {
		/* Left allocated, it would be no file's: the handle fails. */
		vsmfs_trans_fail(t, vsmfs_free_pages(t, lpn, 1));
		return ERR_PTR(ret);
	}
	memset(mb->m_data, 0, VSMFS_BLOCK_SIZE);
	vsmfs_trans_new_block(t, mb);
	return mb;
}

/*
 * As vsmfs_dir_new_block(), in a shared metadata handle: the page is the
 * one the caller reserved before the handle began (vsmfs_resv_new_block()),
 * named in the index here. Without one, or where the index needs a block
 * of its own, -EAGAIN: the caller does it again under s_trans_mutex.
 */
static struct vsmfs_mblk *vsmfs_dir_new_block_shared(struct vsmfs_trans *t, struct inode *dir,
						     u64 blk)
{
	struct vsmfs_mblk *mb = vsmfs_resv_new_block(t);
	int ret;

	if (IS_ERR(mb))
		return mb;
	ret = vsmfs_idx_set(t, dir, blk, vsmfs_idx_make(t->t_dpage->lpn, 1));
	return ret ? ERR_PTR(ret) : mb;
}

/**
 * vsmfs_add_entry() - add an entry to a directory
 * @t: running transaction
 * @dir: the directory; written here
 * @idx: its index, from vsmfs_dir_reserve()
 * @name: the name of the entry
 * @inode: the inode it names
 *
 * Add an entry for @inode named @name, into the first block with room or a
 * new block at the end. Only the bytes the entry changes in an existing
 * block are saved for an abort: the header of the entry whose space it
 * takes and the new entry.
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_add_entry(struct vsmfs_trans *t, struct inode *dir, struct vsmfs_dir_index *idx,
		    const struct qstr *name, struct inode *inode)
{
	unsigned int need = DIRENT_LEN(name->len), off;
	u32 hash = vsmfs_name_hash(name->name, name->len);
	struct vsmfs_ddirent *de;
	struct vsmfs_dir_iter it;
	struct vsmfs_mblk *mb;
	bool last = true;
	u64 blk;
	int ret;

again:
	blk = vsmfs_room_find(idx, need);
	if (blk != U64_MAX) {
		mb = vsmfs_dir_block(dir, blk);
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		de = mb ? vsmfs_block_entry(mb, idx->tail[blk], need, &last) : NULL;
		if (!de || !last)
			de = mb ? vsmfs_block_entry(mb, idx->hint[blk], need, &last) : NULL;
		if (!de) {
			/* Room before the last entry: the first that has it. */
			vsmfs_iter_init(&it, dir, blk << VSMFS_BLOCK_SHIFT, blk + 1);
			while ((ret = vsmfs_iter_next(&it)) > 0 && vsmfs_de_room(it.de) < need)
				;
			if (ret < 0)
				return ret;
			if (!ret) {
				/*
				 * Less than the bound of @idx->inner: the block
				 * as it is, and another one (or a new one).
				 */
				ret = vsmfs_block_scan(dir, idx, blk);
				if (ret)
					return ret;
				if (WARN_ON_ONCE(vsmfs_room_find(idx, need) == blk))
					return -EIO;
				goto again;
			}
			mb = it.mb;
			de = it.de;
			last = it.next == VSMFS_BLOCK_SIZE;
		}
		off = (u8 *)de - mb->m_data;
		if (de->d_ino) {
			unsigned int rec = le16_to_cpu(de->d_rec_len);
			unsigned int used = DIRENT_LEN(de->d_name_len);

			ret = vsmfs_trans_get_write_access_range(t, mb, off, VSMFS_DIRENT_BASE);
			if (!ret)
				ret = vsmfs_trans_get_write_access_range(t, mb, off + used, need);
			if (ret)
				return ret;
			de->d_rec_len = cpu_to_le16(used);
			de = (void *)de + used;
			de->d_rec_len = cpu_to_le16(rec - used);
			off += used;
		} else {
			ret = vsmfs_trans_get_write_access_range(t, mb, off, need);
			if (ret)
				return ret;
		}
		/* The entry it splits, if any, is left with no room. */
		if (last)
			idx->tail[blk] = off;
	} else {
		blk = idx->nblk;
		if (blk >= VSMFS_MAX_KEY)
			return -ENOSPC;
		mb = t->t_shared ? vsmfs_dir_new_block_shared(t, dir, blk) :
				   vsmfs_dir_new_block(t, dir, blk);
		if (IS_ERR(mb))
			return PTR_ERR(mb);
		VSMFS_I(dir)->i_pages++;
		de = (void *)mb->m_data;
		de->d_rec_len = cpu_to_le16(VSMFS_BLOCK_SIZE);
		i_size_write(dir, (blk + 1) << VSMFS_BLOCK_SHIFT);
		dir->i_blocks = VSMFS_I(dir)->i_pages << (VSMFS_BLOCK_SHIFT - 9);
		idx->nblk = blk + 1;
		idx->tail[blk] = 0;
		idx->inner[blk] = 0;
		idx->hint[blk] = 0;
	}
	de->d_ino = cpu_to_le64(inode->i_ino);
	de->d_name_len = name->len;
	de->d_type = fs_umode_to_dtype(inode->i_mode);
	de->d_hash = cpu_to_le32(hash);
	memcpy(de->d_name, name->name, name->len);
	vsmfs_trans_dirty(t, mb);

	vsmfs_slot_put(idx->slots, idx->bits, hash,
		       vsmfs_pos_key((blk << VSMFS_BLOCK_SHIFT) + ((u8 *)de - mb->m_data)));
	idx->count++;
	/*
	 * An entry before the last that lost room leaves @idx->inner a bound
	 * still: no walk of the block.
	 */
	vsmfs_block_set(idx, mb, blk);

	dir->i_ctime = current_time(dir);
	dir->i_mtime = dir->i_ctime;
	return vsmfs_mark_inode_dirty(t, dir);
}

/**
 * vsmfs_de_write_access() - prepare to change the header of an entry
 * @t: running transaction
 * @pos: the entry
 *
 * Let @t change the header of the entry at @pos (its inode and type).
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_de_write_access(struct vsmfs_trans *t, struct vsmfs_dpos *pos)
{
	return vsmfs_trans_get_write_access_range(t, pos->mb, (u8 *)pos->de - pos->mb->m_data,
						  VSMFS_DIRENT_BASE);
}

/*
 * The entry before @pos's in its block (NULL if it is the first) in
 * *@prevp, and the offset after @pos's in *@nextp: a walk of the record
 * lengths alone, as the entry was found by the index and checked, and
 * those before it are not read otherwise; from the block's hint if that
 * is before the entry (an entry's start), else from the block's start.
 * Return: 0, or -EFSCORRUPTED if a record length is unsound or the walk
 * passes over the entry.
 */
static int vsmfs_de_prev(struct inode *dir, const struct vsmfs_dir_index *idx,
			 const struct vsmfs_dpos *pos, struct vsmfs_ddirent **prevp,
			 unsigned int *nextp)
{
	u8 *base = pos->mb->m_data;
	unsigned int at = (u8 *)pos->de - base, from = idx->hint[pos->blk], off;
	struct vsmfs_ddirent *prev, *d;

	if (from >= at)
		from = 0;
again:
	prev = NULL;
	for (off = from; off < at; off += le16_to_cpu(d->d_rec_len)) {
		d = (void *)base + off;
		if (!vsmfs_dirent_rec_ok(d, off))
			break;
		prev = d;
	}
	/* What the block's start says, not the hint, before it is corrupt. */
	if (off != at && from) {
		from = 0;
		goto again;
	}
	if (off != at || !vsmfs_dirent_rec_ok(pos->de, at)) {
		vsmfs_de_corrupt(dir, off, "bad record length");
		return -EFSCORRUPTED;
	}
	*prevp = prev;
	*nextp = at + le16_to_cpu(pos->de->d_rec_len);
	return 0;
}

/**
 * vsmfs_del_entry() - remove an entry from a directory
 * @t: running transaction
 * @dir: the directory; the caller writes it
 * @idx: its index
 * @pos: the entry, found through @idx
 *
 * Return: 0 or a negative errno.
 */
int vsmfs_del_entry(struct vsmfs_trans *t, struct inode *dir, struct vsmfs_dir_index *idx,
		    struct vsmfs_dpos *pos)
{
	struct vsmfs_ddirent *de = pos->de, *prev;
	u32 hash = vsmfs_name_hash(de->d_name, de->d_name_len);
	u32 key = vsmfs_pos_key((pos->blk << VSMFS_BLOCK_SHIFT) + ((u8 *)de - pos->mb->m_data));
	u32 mask = (1U << idx->bits) - 1, i;
	unsigned int free, next;
	int ret;

	ret = vsmfs_de_prev(dir, idx, pos, &prev, &next);
	if (ret)
		return ret;
	for (i = hash_32(hash, idx->bits); idx->slots[i].key != key; i = (i + 1) & mask)
		if (WARN_ON_ONCE(!idx->slots[i].key))
			return -EIO;

	ret = vsmfs_trans_get_write_access_range(t, pos->mb, (u8 *)de - pos->mb->m_data,
						 VSMFS_DIRENT_BASE);
	if (!ret && prev)
		ret = vsmfs_trans_get_write_access_range(t, pos->mb,
							 (u8 *)prev - pos->mb->m_data,
							 VSMFS_DIRENT_BASE);
	if (ret)
		return ret;
	/* The entry before it in the block takes over its space. */
	de->d_ino = 0;
	if (prev)
		le16_add_cpu(&prev->d_rec_len, le16_to_cpu(de->d_rec_len));
	vsmfs_trans_dirty(t, pos->mb);
	vsmfs_slot_remove(idx, i);
	/*
	 * Spans only grow: that of the entry before it, or its own, now
	 * free. The last entry stays the last, or the one before it becomes
	 * the last (@idx->inner may count its span still: a bound).
	 */
	free = vsmfs_de_room(prev ?: de);
	/* Where the next insertion looks first; the entry removed starts no more. */
	idx->hint[pos->blk] = (u8 *)(prev ?: de) - pos->mb->m_data;
	if (next != VSMFS_BLOCK_SIZE)
		idx->inner[pos->blk] = max_t(unsigned int, idx->inner[pos->blk], free);
	else if (prev)
		idx->tail[pos->blk] = (u8 *)prev - pos->mb->m_data;
	vsmfs_block_set(idx, pos->mb, pos->blk);
	dir->i_ctime = current_time(dir);
	dir->i_mtime = dir->i_ctime;
	return 0;
}

/**
 * vsmfs_check_empty() - whether a directory has no entries
 * @dir: the directory
 *
 * Return: 0 if @dir has no entries, -ENOTEMPTY if it has, or another
 * negative errno.
 */
int vsmfs_check_empty(struct inode *dir)
{
	struct vsmfs_dir_index *idx;
	struct vsmfs_dir_iter it;
	int ret;

	/* Pairs with the publishing cmpxchg_release() in vsmfs_dir_index(). */
	idx = smp_load_acquire(&VSMFS_I(dir)->i_dir);

	if (idx)
		return idx->count ? -ENOTEMPTY : 0;
	/* No index: walk until the first live entry. */
	vsmfs_iter_init(&it, dir, 0, dir->i_size >> VSMFS_BLOCK_SHIFT);
	while ((ret = vsmfs_iter_next(&it)) > 0)
		if (it.de->d_ino)
			return -ENOTEMPTY;
	return ret;
}

static int vsmfs_readdir(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	u64 nblk = dir->i_size >> VSMFS_BLOCK_SHIFT;
	struct vsmfs_dir_iter it;
	int ret;

	if (!dir_emit_dots(file, ctx))
		return 0;
	vsmfs_iter_init(&it, dir, ctx->pos - 2, nblk);
	while ((ret = vsmfs_iter_next(&it)) > 0) {
		struct vsmfs_ddirent *de = it.de;

		if (!de->d_ino)
			continue;
		ctx->pos = 2 + (it.blk << VSMFS_BLOCK_SHIFT) + it.off;
		if (!dir_emit(ctx, de->d_name, de->d_name_len, le64_to_cpu(de->d_ino),
			      de->d_type))
			return 0;
		/*
		 * Past the entry once it is emitted: a corrupt entry after it
		 * fails the next call instead of emitting this one again.
		 */
		ctx->pos = 2 + (it.blk << VSMFS_BLOCK_SHIFT) + it.next;
	}
	if (ret)
		return ret;
	ctx->pos = max_t(loff_t, ctx->pos, 2 + (nblk << VSMFS_BLOCK_SHIFT));
	return 0;
}

const struct file_operations vsmfs_dir_operations = {
	.llseek		= generic_file_llseek,
	.read		= generic_read_dir,
	.iterate_shared	= vsmfs_readdir,
	.fsync		= vsmfs_fsync,
	.unlocked_ioctl	= vsmfs_ioctl,
	.compat_ioctl	= vsmfs_compat_ioctl,
};
