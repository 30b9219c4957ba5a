// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs fast-commit areas of the journal: the append of a record by an
 * fsync that needs only words of one inode's slot, page table entries
 * and, for a create, words of its directory to be durable
 * (vsmfs_journal_fc_write(); what a record holds and when an fsync may
 * write one, fcommit.c), and their replay at mount
 * (vsmfs_jfc_replay()). The format is at struct vsmfs_dfc_rec.
 *
 * Append: a record belongs to the commit number its transaction will
 * commit as (the last durable one's plus one: it is written only when no
 * commit is in flight). The task takes its CPU's area (CPU number modulo
 * the areas) and its lock, or if that area has no room left, the next
 * area after it that has (vsmfs_jfc_spill()): a transaction's records
 * fill every area before an fsync commits for want of room. An area that
 * holds records of another number starts over at its first byte. The
 * record is stored with non-temporal stores, fence on this CPU (the lock
 * keeps the task on it): durable before the fsync returns, and before the
 * next record of the area is stored. The data the record makes reachable
 * was fenced by the handle that wrote it. A crash inside the stores leaves a record whose crc32c
 * fails (or an earlier one, of a dead number, after it): the scan of the
 * area stops there, and the fsync that wrote it had not returned.
 *
 * The commit that makes the transaction durable changes j_checkpoint's
 * commit number with the store that commits (jcommit.c): every record of
 * the number dies with it, with nothing erased.
 *
 * Replay, at mount, after the journal's own recovery has written the
 * latest versions home: the parts of the valid records of every area (a
 * record's own, a create's directory's, an unlinked inode's; at most
 * three), sorted by slot and order,
 * store their words over the home blocks and set their bits, flushed,
 * fence; then
 * the journal is emptied and the replay committed, as a checkpoint does
 * but with the next commit number: j_commit = 0, flushed; j_checkpoint =
 * 0 with the number, and j_sequence, flushed, fence. The records are dead
 * from then on; a crash before it replays them again, over the same
 * homes, to the same values. The journal must be emptied: a version of an
 * inode table or page table block it still held would be written home
 * over the replayed words by a later checkpoint.
 */
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/crc32c.h>
#include <crypto/hash.h>
#include "vsmfs.h"
#include "pmem.h"
#include "fault.h"
#include "journal.h"

/**
 * vsmfs_jfc_init() - set up the fast-commit areas of a journal
 * @j: the journal being loaded
 * @js: its superblock, decoded
 *
 * Return: 0 or -ENOMEM.
 */
int vsmfs_jfc_init(struct vsmfs_journal *j, const struct vsmfs_jsb_state *js)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	u32 i;

	j->count = js->count;
	if (!js->fc_areas)
		return 0;
	j->fc = kcalloc(js->fc_areas, sizeof(*j->fc), GFP_KERNEL);
	if (!j->fc)
		return -ENOMEM;
	/*
	 * The crc32c transform, for records summed with a descriptor of
	 * their own (vsmfs_journal_fc_crc()); without it, or with one that
	 * keeps more than the sum, the library's crc32c().
	 */
	j->fc_crc = crypto_alloc_shash("crc32c", 0, 0);
	if (IS_ERR(j->fc_crc) || crypto_shash_descsize(j->fc_crc) != sizeof(u32)) {
		if (!IS_ERR(j->fc_crc))
			crypto_free_shash(j->fc_crc);
		j->fc_crc = NULL;
	}
	for (i = 0; i < js->fc_areas; i++)
		spin_lock_init(&j->fc[i].lock);
	j->fc_n = js->fc_areas;
	j->fc_bytes = js->fc_area_blocks << VSMFS_BLOCK_SHIFT;
	j->fc_base = vsmfs_blk_ptr(sbi, sbi->s_layout.journal_start + js->fc_start);
	return 0;
}

static const struct vsmfs_dfc_rec __pm *vsmfs_jfc_rec(struct vsmfs_journal *j, u32 at)
{
	return (const struct vsmfs_dfc_rec __pm *)(j->fc_base + at);
}

struct vsmfs_jfc_key {
	u64	seq;
	u32	slot;
	u32	at;		/* offset from the first area */
	u32	part;		/* 0: the slot's, 1: the directory's, 2: the unlinked's */
};

static int vsmfs_jfc_cmp(const void *a, const void *b)
{
	const struct vsmfs_jfc_key *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	/* Never two of one slot and order: but sort() is not stable. */
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->part - y->part;
}

/* Store @n words from @src at @dst, flushed (@apply), or nothing. */
static void vsmfs_jfc_store(__le64 __pm *dst, const __le64 *src, u32 n, bool apply)
{
	if (!apply)
		return;
	while (n--) {
		vsmfs_pm_write(dst, *src++);
		vsmfs_flush(dst++, sizeof(*dst));
	}
}

/* Set (or, @clear, clear) the bits @src names in @dst, flushed (@apply). */
static void vsmfs_jfc_or(__le64 __pm *dst, const __le64 *src, bool clear, bool apply)
{
	__le64 v;

	if (!apply)
		return;
	v = vsmfs_pm_read(dst);
	vsmfs_pm_write(dst, clear ? v & ~*src : v | *src);
	vsmfs_flush(dst, sizeof(*dst));
}

/* Store words of @slot named by @mask from @src (@apply); or what is wrong. */
static const char *vsmfs_jfc_slot(struct vsmfs_sb_info *sbi, u64 slot, unsigned long mask,
				  const __le64 *src, bool apply)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	__le64 __pm *home;
	unsigned int b;

	if (!slot || slot >= l->inodes)
		return "slot out of range";
	home = (__le64 __pm *)(vsmfs_blk_ptr(sbi, l->itable_start + slot / VSMFS_INODES_PER_BLOCK) +
			       slot % VSMFS_INODES_PER_BLOCK * VSMFS_INODE_SIZE);
	for_each_set_bit(b, &mask, VSMFS_INODE_SIZE / 8)
		vsmfs_jfc_store(home + b, src++, 1, apply);
	return NULL;
}

/* One entry of a record, as vsmfs_jfc_apply(). */
static const char *vsmfs_jfc_entry(struct vsmfs_sb_info *sbi, const struct vsmfs_fc_ent *e,
				   bool apply)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 w = e->where;
	__le64 __pm *map;

	switch (e->kind) {
	case VSMFS_FC_KIND(VSMFS_FC_KEY_BITMAP):
	case VSMFS_FC_KIND(VSMFS_FC_KEY_BCLEAR):
		if (w >= DIV_ROUND_UP(l->lpages, 64))
			return "bitmap word out of range";
		map = (__le64 __pm *)vsmfs_blk_ptr(sbi, l->lbitmap_start);
		vsmfs_jfc_or(map + w, e->val, e->kind == VSMFS_FC_KIND(VSMFS_FC_KEY_BCLEAR), apply);
		return NULL;
	case VSMFS_FC_KIND(VSMFS_FC_KEY_IBITMAP):
		if (w >= DIV_ROUND_UP(l->inodes, 64))
			return "inode bitmap word out of range";
		map = (__le64 __pm *)vsmfs_blk_ptr(sbi, l->ibitmap_start);
		vsmfs_jfc_or(map + w, e->val, false, apply);
		return NULL;
	case VSMFS_FC_KIND(VSMFS_FC_KEY_DIR):
	case VSMFS_FC_KIND(VSMFS_FC_KEY_GONE):
		return vsmfs_jfc_slot(sbi, w, e->mask, e->val, apply);
	case VSMFS_FC_KIND(VSMFS_FC_KEY_SPAN):
		if (w >> 9 < l->data_start || w >> 9 >= l->blocks)
			return "directory block out of range";
		vsmfs_jfc_store((__le64 __pm *)vsmfs_blk_ptr(sbi, w >> 9) + w % 512, e->val, e->n,
				apply);
		return NULL;
	}
	if (!w || w >= l->lpages)
		return "logical page out of range";
	vsmfs_jfc_store((__le64 __pm *)vsmfs_blk_ptr(sbi, l->ptable_start +
						     w / VSMFS_PTES_PER_BLOCK) +
			w % VSMFS_PTES_PER_BLOCK, e->val, 1, apply);
	return NULL;
}

/*
 * Check what part @part (-1: both) of the valid record at @at names
 * against the layout; store it home (@apply) or only check. The record
 * is read in place (vsmfs_pm_view()). Return: NULL or what is wrong.
 */
static const char *vsmfs_jfc_apply(struct vsmfs_journal *j, u32 at, int part, bool apply)
{
	const struct vsmfs_dfc_rec *r = vsmfs_pm_view(vsmfs_jfc_rec(j, at));
	struct vsmfs_sb_info *sbi = j->sbi;
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	const char *why = NULL;
	int cur = 0;

	if (part <= 0)
		why = vsmfs_jfc_slot(sbi, le32_to_cpu(r->r_slot), le32_to_cpu(r->r_words),
				     (const __le64 *)(r + 1), apply);
	vsmfs_fc_iter_init(&it, r);
	while (!why && !vsmfs_fc_next(&it, &e)) {
		if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR))
			cur = 1;
		else if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_GONE))
			cur = 2;
		if (part < 0 || part == cur)
			why = vsmfs_jfc_entry(sbi, &e, apply);
	}
	return why;
}

/*
 * The directory's and the unlinked inode's parts of the valid record at
 * @at: their slots and orders, in @k. Return: how many it has.
 */
static u32 vsmfs_jfc_parts(struct vsmfs_journal *j, u32 at, struct vsmfs_jfc_key *k)
{
	const struct vsmfs_dfc_rec *r = vsmfs_pm_view(vsmfs_jfc_rec(j, at));
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	u32 n = 0;

	vsmfs_fc_iter_init(&it, r);
	while (!vsmfs_fc_next(&it, &e)) {
		if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR) ||
		    e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_GONE)) {
			k[n].slot = e.where;
			k[n].seq = e.seq;
			k[n].at = at;
			k[n].part = e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR) ? 1 : 2;
			n++;
		}
	}
	return n;
}

/* Empty the journal, committing the replay; see the top of the file. */
static void vsmfs_jfc_commit_replay(struct vsmfs_journal *j)
{
	struct vsmfs_jent *e, *tmp;
	u64 count = j->count + 1;
	u32 pos;

	vsmfs_jsb_store_commit(j, 0);
	vsmfs_pm_write(&j->jsb->j_checkpoint, cpu_to_le64(vsmfs_jckpt_state(j, 0, 0, count)));
	vsmfs_pm_write(&j->jsb->j_sequence, cpu_to_le64(count));
	vsmfs_persist(j->jsb, offsetofend(struct vsmfs_djsb, j_sequence));
	j->count = count;
	for (pos = 0; pos < j->ckpt; pos++) {
		j->h[pos].flags = 0;
		j->h[pos].home = 0;
	}
	list_for_each_entry_safe(e, tmp, &j->ent_live, live)
		vsmfs_jent_free(j, e);
	j->ckpt = 0;
	j->holes = 0;
}

/**
 * vsmfs_jfc_replay() - replay the valid fast-commit records
 * @j: the journal, recovered, its latest versions written home
 * @read_only: the device cannot be written
 *
 * See the top of the file. Afterwards @j->ckpt is 0 if records were
 * replayed (the journal is empty).
 *
 * Return: 0, -EROFS if there are records and the device is read-only,
 * -EFSCORRUPTED if a valid record names what the layout has not, or
 * -ENOMEM.
 */
int vsmfs_jfc_replay(struct vsmfs_journal *j, bool read_only)
{
	struct super_block *sb = j->sbi->s_sb;
	struct vsmfs_jfc_key *keys = NULL;
	u32 a, n = 0, nrec = 0, max;
	const char *why;
	int ret = 0;

	if (!j->fc_n)
		return 0;
	/* At most three parts of a record, of a line at least. */
	max = 3 * j->fc_n * (j->fc_bytes / 64);
	for (a = 0; a < j->fc_n; a++) {
		u32 off = 0, len;

		while (off < j->fc_bytes) {
			u32 at = a * j->fc_bytes + off;

			if (vsmfs_fc_rec_check(vsmfs_pm_view(vsmfs_jfc_rec(j, at)),
					       j->fc_bytes - off, j->count, &len))
				break;
			why = vsmfs_jfc_apply(j, at, -1, false);
			if (why) {
				vsmfs_err(sb, "fast-commit area %u, record at %u: %s", a, off, why);
				ret = -EFSCORRUPTED;
				goto out;
			}
			if (!keys) {
				keys = kvmalloc_array(max, sizeof(*keys), GFP_KERNEL);
				if (!keys)
					return -ENOMEM;
			}
			keys[n].slot = le32_to_cpu(vsmfs_pm_read(&vsmfs_jfc_rec(j, at)->r_slot));
			keys[n].seq = le64_to_cpu(vsmfs_pm_read(&vsmfs_jfc_rec(j, at)->r_seq));
			keys[n].at = at;
			keys[n].part = 0;
			n++;
			n += vsmfs_jfc_parts(j, at, &keys[n]);
			nrec++;
			off += len;
		}
	}
	if (!n)
		goto out;
	if (read_only) {
		vsmfs_err(sb, "%u fast-commit records need replay but the device is read-only",
			  nrec);
		ret = -EROFS;
		goto out;
	}
	sort(keys, n, sizeof(*keys), vsmfs_jfc_cmp, NULL);
	for (a = 0; a < n; a++)
		vsmfs_jfc_apply(j, keys[a].at, keys[a].part, true);
	/* The words home before the commit that makes the records dead. */
	vsmfs_fence();
	vsmfs_jfc_commit_replay(j);
	vsmfs_info(sb, "journal: replayed %u fast-commit records", nrec);
out:
	kvfree(keys);
	return ret;
}

/**
 * vsmfs_jfc_spill() - append a record its CPU's area has no room for
 * @j: the journal, with fast-commit areas
 * @first: the area that had no room
 * @rec: as vsmfs_journal_fc_write()
 * @len: as vsmfs_journal_fc_write()
 * @count: as vsmfs_journal_fc_write()
 *
 * To the first of the areas after @first (in their order, around) that
 * has room. Each is locked in turn, as its own CPU's tasks lock it: the
 * record is durable, fenced, before the lock is released, so before the
 * next record stored after it in that area.
 *
 * Return: 0, or -ENOSPC if none has room (nothing written).
 */
int vsmfs_jfc_spill(struct vsmfs_journal *j, unsigned int first, const void *rec, u32 len,
		    u64 count)
{
	unsigned int i;

	for (i = 1; i < j->fc_n; i++)
		if (!vsmfs_jfc_append(j, &j->fc[(first + i) % j->fc_n], rec, len, count))
			return 0;
	return -ENOSPC;
}

/**
 * vsmfs_journal_fc_count() - commit number of a fast record
 * @sbi: the file system
 *
 * Context: no commit in flight, none can start (the caller holds the
 * running transaction, vsmfs_trans_hold()), and the transactions before
 * the running one finished, seen with acquire ordering.
 * Return: the number the running transaction will commit as.
 */
u64 vsmfs_journal_fc_count(struct vsmfs_sb_info *sbi)
{
	return READ_ONCE(sbi->s_journal->count) + 1;
}

/**
 * vsmfs_journal_fc_crc() - crc32c of a fast-commit record's bytes
 * @sbi: the file system, with fast-commit areas
 * @p: the bytes
 * @len: their number
 *
 * What crc32c(~0U, @p, @len) returns, through the transform of the
 * journal with a descriptor that holds only the sum: the library's own
 * clears a descriptor of the largest size any hash needs first.
 *
 * Return: the sum.
 */
u32 vsmfs_journal_fc_crc(struct vsmfs_sb_info *sbi, const void *p, u32 len)
{
	struct crypto_shash *tfm = sbi->s_journal->fc_crc;
	struct {
		struct shash_desc desc;
		u32 ctx;
	} d;

	if (!tfm)
		return crc32c(~0U, p, len);
	d.desc.tfm = tfm;
	d.ctx = ~0U;
	/* A crc32c update neither fails nor reads a key. */
	if (WARN_ON_ONCE(crypto_shash_update(&d.desc, p, len)))
		return crc32c(~0U, p, len);
	return d.ctx;
}
