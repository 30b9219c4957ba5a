// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs fast-commit areas of the journal: the append of a record by an
 * fsync that needs only words of one inode's slot and page table entries
 * to be durable (vsmfs_journal_fc_write(); what a record holds and when an
 * fsync may write one, fcommit.c), and their replay at mount
 * (vsmfs_jfc_replay()). The format is at struct vsmfs_dfc_rec.
 *
 * Append: a record belongs to the commit number its transaction will
 * commit as (the last durable one's plus one: it is written only when no
 * commit is in flight). The task takes its CPU's area (CPU number modulo
 * the areas) and its lock; an area that holds records of another number
 * starts over at its first byte. The record is stored with non-temporal
 * stores, fence on this CPU (the lock keeps the task on it): durable
 * before the fsync returns, and before the next record of the area is
 * stored. The data the record makes reachable was fenced by the handle
 * that wrote it. A crash inside the stores leaves a record whose crc32c
 * fails (or an earlier one, of a dead number, after it): the scan of the
 * area stops there, and the fsync that wrote it had not returned.
 *
 * The commit that makes the transaction durable changes j_checkpoint's
 * commit number with the store that commits (jcommit.c): every record of
 * the number dies with it, with nothing erased.
 *
 * Replay, at mount, after the journal's own recovery has written the
 * latest versions home: the valid records of every area, sorted by slot
 * and order, store their words over the home blocks, flushed, fence; then
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
};

static int vsmfs_jfc_cmp(const void *a, const void *b)
{
	const struct vsmfs_jfc_key *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/*
 * Check what the valid record at @at names against the layout; store it
 * home (@apply) or only check. Return: NULL or what is wrong.
 */
static const char *vsmfs_jfc_apply(struct vsmfs_journal *j, u32 at, bool apply)
{
	const struct vsmfs_dfc_rec __pm *r = vsmfs_jfc_rec(j, at);
	struct vsmfs_sb_info *sbi = j->sbi;
	const struct vsmfs_layout *l = &sbi->s_layout;
	const __le64 __pm *w = (const __le64 __pm *)(r + 1);
	u64 slot = le32_to_cpu(vsmfs_pm_read(&r->r_slot));
	unsigned long words = le32_to_cpu(vsmfs_pm_read(&r->r_words));
	u32 i, npte = le16_to_cpu(vsmfs_pm_read(&r->r_npte));
	u8 __pm *home;
	unsigned int b;

	if (!slot || slot >= l->inodes)
		return "slot out of range";
	home = vsmfs_blk_ptr(sbi, l->itable_start + slot / VSMFS_INODES_PER_BLOCK) +
	       slot % VSMFS_INODES_PER_BLOCK * VSMFS_INODE_SIZE;
	for_each_set_bit(b, &words, VSMFS_INODE_SIZE / 8) {
		__le64 __pm *dst = (__le64 __pm *)home + b;

		if (apply) {
			vsmfs_pm_write(dst, vsmfs_pm_read(w));
			vsmfs_flush(dst, sizeof(*dst));
		}
		w++;
	}
	for (i = 0; i < npte; i++, w += 2) {
		u64 lpn = le64_to_cpu(vsmfs_pm_read(w));
		__le64 __pm *dst;

		if (lpn & VSMFS_FC_KEY_BITMAP) {
			lpn &= ~VSMFS_FC_KEY_BITMAP;
			if (lpn >= DIV_ROUND_UP(l->lpages, 64))
				return "bitmap word out of range";
			dst = (__le64 __pm *)vsmfs_blk_ptr(sbi, l->lbitmap_start) + lpn;
			if (apply) {
				vsmfs_pm_write(dst, vsmfs_pm_read(dst) | vsmfs_pm_read(w + 1));
				vsmfs_flush(dst, sizeof(*dst));
			}
			continue;
		}
		if (!lpn || lpn >= l->lpages)
			return "logical page out of range";
		dst = (__le64 __pm *)vsmfs_blk_ptr(sbi, l->ptable_start +
						    lpn / VSMFS_PTES_PER_BLOCK) +
		      lpn % VSMFS_PTES_PER_BLOCK;
		if (apply) {
			vsmfs_pm_write(dst, vsmfs_pm_read(w + 1));
			vsmfs_flush(dst, sizeof(*dst));
		}
	}
	return NULL;
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
	u32 a, n = 0, max;
	const char *why;
	int ret = 0;

	if (!j->fc_n)
		return 0;
	max = j->fc_n * (j->fc_bytes / 64);
	for (a = 0; a < j->fc_n; a++) {
		u32 off = 0, len;

		while (off < j->fc_bytes) {
			u32 at = a * j->fc_bytes + off;

			if (vsmfs_fc_rec_check(vsmfs_pm_view(vsmfs_jfc_rec(j, at)),
					       j->fc_bytes - off, j->count, &len))
				break;
			why = vsmfs_jfc_apply(j, at, false);
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
			n++;
			off += len;
		}
	}
	if (!n)
		goto out;
	if (read_only) {
		vsmfs_err(sb, "%u fast-commit records need replay but the device is read-only", n);
		ret = -EROFS;
		goto out;
	}
	sort(keys, n, sizeof(*keys), vsmfs_jfc_cmp, NULL);
	for (a = 0; a < n; a++)
		vsmfs_jfc_apply(j, keys[a].at, true);
	/* The words home before the commit that makes the records dead. */
	vsmfs_fence();
	vsmfs_jfc_commit_replay(j);
	vsmfs_info(sb, "journal: replayed %u fast-commit records", n);
out:
	kvfree(keys);
	return ret;
}

/**
 * vsmfs_journal_fc_count() - commit number of a fast record
 * @sbi: the file system
 *
 * Context: no commit in flight, none can start (the caller's shared
 * handle), and the transactions before the running one finished, seen
 * with acquire ordering.
 * Return: the number the running transaction will commit as.
 */
u64 vsmfs_journal_fc_count(struct vsmfs_sb_info *sbi)
{
	return READ_ONCE(sbi->s_journal->count) + 1;
}

/**
 * vsmfs_journal_fc_write() - append a fast-commit record
 * @sbi: the file system, with fast-commit areas
 * @rec: the record, its crc32c set, @len bytes
 * @len: a multiple of 64
 * @count: its commit number (vsmfs_journal_fc_count())
 *
 * Ordering at the top of the file: the record is durable on return.
 *
 * Return: 0, or -ENOSPC if the area has no room for it (nothing written).
 */
int vsmfs_journal_fc_write(struct vsmfs_sb_info *sbi, const void *rec, u32 len, u64 count)
{
	struct vsmfs_journal *j = sbi->s_journal;
	struct vsmfs_fc_area *a = &j->fc[raw_smp_processor_id() % j->fc_n];
	int ret = -ENOSPC;

	spin_lock(&a->lock);
	if (a->count != count) {
		a->count = count;
		a->off = 0;
	}
	if (a->off + len <= j->fc_bytes) {
		vsmfs_memcpy_nt(j->fc_base + (u64)(a - j->fc) * j->fc_bytes + a->off, rec, len);
		if (!vsmfs_fault(VSMFS_FAULT_FC_NOFENCE))
			vsmfs_fence();
		a->off += len;
		ret = 0;
	}
	spin_unlock(&a->lock);
	if (!ret)
		vsmfs_jstat_bytes(sbi, journal_fc_bytes, len);
	return ret;
}
