// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs NVM metadata journal, placement: where the committed versions of a
 * block go. In DRAM the journal keeps a mirror of every header, a hash
 * from home block to its old and latest version, and lists of the free
 * headers by write count; this file holds them, the header writes and
 * their atomic batches, the choice of a header for each block a commit
 * places (vsmfs_jplace(), step 2 of a commit), and the journal's setup at
 * mount. The commit pipeline is in jcommit.c, garbage collection,
 * checkpoint and revocation in jgc.c, mount-time recovery in recovery.c;
 * the DRAM copies of the metadata blocks are in mcache.c, and the handles
 * and the running transaction above the journal in trans.c.
 *
 * Handles change the DRAM copies one at a time (s_trans_mutex);
 * transactions place their journal blocks one at a time, in the same order
 * (s_jplace_mutex, taken before s_trans_mutex is released). The journal
 * holds the committed versions of a block, and its home block on PM is
 * brought up to date only by a checkpoint (or by recovery at mount).
 *
 * The on-PM layout (journal superblock, 16-byte headers, the reserved
 * header-copy region, journal blocks; checkpoint, commit and free areas) is
 * described in vsmfs_format.h. The pure parts (header checks, deltas, the
 * wear lists, the order of GC and the recovery rules) are in jcore.c,
 * shared with fsck.vsmfs, vsmfs-inspect and the unit tests.
 *
 * Garbage collection moves valid versions between headers (swaps) in
 * batches through the header-copy region, see vsmfs_jbatch_flush():
 *   1. the new values of every header in the batch are written to the copy
 *      region, flushed, fence;
 *   2. j_hcopy = count, flushed, fence: from here recovery redoes the batch;
 *   3. the headers are written in place, flushed, fence;
 *   4. j_hcopy = 0, flushed, fence.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/blkdev.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/kthread.h>
#include "vsmfs.h"
#include "mcache.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "jcore.h"
#include "journal.h"

/* ---- hash: home block -> versions ---- */

/**
 * vsmfs_jfind() - the versions of a home block
 * @j: the journal
 * @home: home block
 *
 * Return: the hash entry of @home, or NULL if it has no valid version.
 */
struct vsmfs_jent *vsmfs_jfind(struct vsmfs_journal *j, u64 home)
{
	struct vsmfs_jent *e;

	hlist_for_each_entry(e, &j->hash[hash_64(home, j->hash_bits)], node)
		if (e->home == home)
			return e;
	return NULL;
}

/**
 * vsmfs_jent_new() - hash a home block that has no entry yet
 * @j: the journal
 * @home: home block, not in the hash
 *
 * There is an entry for every home block with a valid version: the free
 * list is never empty.
 *
 * Return: the new entry, with no version.
 */
struct vsmfs_jent *vsmfs_jent_new(struct vsmfs_journal *j, u64 home)
{
	struct vsmfs_jent *e = hlist_entry(j->ent_free.first, struct vsmfs_jent, node);

	hlist_del(&e->node);
	e->home = home;
	e->latest = VSMFS_JNONE;
	e->old = VSMFS_JNONE;
	hlist_add_head(&e->node, &j->hash[hash_64(home, j->hash_bits)]);
	list_add(&e->live, &j->ent_live);
	if (home >= j->sbi->s_layout.data_start)
		j->ndata++;
	return e;
}

/**
 * vsmfs_jent_free() - unhash a home block that has no version left
 * @j: the journal
 * @e: its entry
 */
void vsmfs_jent_free(struct vsmfs_journal *j, struct vsmfs_jent *e)
{
	if (e->home >= j->sbi->s_layout.data_start)
		j->ndata--;
	hlist_del(&e->node);
	list_del(&e->live);
	hlist_add_head(&e->node, &j->ent_free);
}

/* ---- headers ---- */

static void vsmfs_jh_store(struct vsmfs_journal *j, u32 pos, struct vsmfs_djhdr __pm *dst)
{
	vsmfs_pm_write(&dst->h_state, cpu_to_le64(vsmfs_jh_state(&j->h[pos], pos)));
	vsmfs_pm_write(&dst->h_map, cpu_to_le64(vsmfs_jh_map(&j->h[pos])));
}

/**
 * vsmfs_jh_write() - write a header in place
 * @j: the journal
 * @pos: the header, as its DRAM mirror holds it
 *
 * Both halves of header @pos are stored and flushed; durable after the
 * next fence.
 */
void vsmfs_jh_write(struct vsmfs_journal *j, u32 pos)
{
	vsmfs_jh_store(j, pos, &j->hdr[pos]);
	vsmfs_flush(&j->hdr[pos], sizeof(j->hdr[pos]));
	vsmfs_jstat_bytes(j->sbi, journal_header_bytes, sizeof(struct vsmfs_djhdr));
}

/**
 * vsmfs_jh_write_state() - write the flags of a header in place
 * @j: the journal
 * @pos: the header, as its DRAM mirror holds it
 *
 * Flags only: one 8-byte store of h_state, flushed; durable after the next
 * fence.
 */
void vsmfs_jh_write_state(struct vsmfs_journal *j, u32 pos)
{
	vsmfs_pm_write(&j->hdr[pos].h_state, cpu_to_le64(vsmfs_jh_state(&j->h[pos], pos)));
	vsmfs_flush(&j->hdr[pos].h_state, sizeof(__le64));
	vsmfs_jstat_bytes(j->sbi, journal_header_bytes, sizeof(__le64));
}

/**
 * vsmfs_jsb_store_state() - store the checkpoint pointer
 * @j: the journal
 * @start: first header of the last transaction
 * @end: end of the checkpoint area
 *
 * One 8-byte store of j_checkpoint, flushed; durable after the next fence.
 */
void vsmfs_jsb_store_state(struct vsmfs_journal *j, u32 start, u32 end)
{
	/* No commit in flight: @count is the last durable one's. */
	vsmfs_pm_write(&j->jsb->j_checkpoint,
		       cpu_to_le64(vsmfs_jckpt_state(j, start, end, j->count)));
	vsmfs_flush(&j->jsb->j_checkpoint, sizeof(__le64));
	vsmfs_jstat_bytes(j->sbi, journal_header_bytes, sizeof(__le64));
}

/**
 * vsmfs_jsb_store_commit() - store the end of the placed area
 * @j: the journal
 * @end: end of the commit area
 *
 * One 8-byte store of j_commit, flushed; durable after the next fence.
 */
void vsmfs_jsb_store_commit(struct vsmfs_journal *j, u32 end)
{
	vsmfs_pm_write(&j->jsb->j_commit, cpu_to_le64(end));
	vsmfs_flush(&j->jsb->j_commit, sizeof(__le64));
	vsmfs_jstat_bytes(j->sbi, journal_header_bytes, sizeof(__le64));
}

/**
 * vsmfs_jbatch_flush() - make the pending header batch durable
 * @j: the journal
 *
 * The batch becomes durable as one atomic change, through the header-copy
 * region; the order of the stores is at the top of this file.
 */
void vsmfs_jbatch_flush(struct vsmfs_journal *j)
{
	u32 i, n = j->batch_n;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		vsmfs_jh_store(j, j->batch[i], &j->copies[i]);
	vsmfs_flush(j->copies, n * sizeof(struct vsmfs_djhdr));
	vsmfs_fence();
	vsmfs_pm_write(&j->jsb->j_hcopy, cpu_to_le32(n));
	vsmfs_persist(&j->jsb->j_hcopy, sizeof(__le32));
	for (i = 0; i < n; i++) {
		u32 pos = j->batch[i];

		if (i == n / 2)
			vsmfs_fault_stop(j->sbi->s_sb, VSMFS_FAULT_JHSWAP_STOP,
					 "journal stopped in a header batch, half in place");
		vsmfs_jh_store(j, pos, &j->hdr[pos]);
		vsmfs_flush(&j->hdr[pos], sizeof(struct vsmfs_djhdr));
		j->slot[pos].batched = 0;
	}
	vsmfs_fence();
	vsmfs_pm_write(&j->jsb->j_hcopy, 0);
	vsmfs_persist(&j->jsb->j_hcopy, sizeof(__le32));
	vsmfs_jstat_bytes(j->sbi, journal_header_bytes,
			  2 * n * sizeof(struct vsmfs_djhdr) + 2 * sizeof(__le32));
	j->batch_n = 0;
}

static void vsmfs_jbatch_add(struct vsmfs_journal *j, u32 pos)
{
	if (j->slot[pos].batched)
		return;
	j->slot[pos].batched = 1;
	j->batch[j->batch_n++] = pos;
}

/**
 * vsmfs_jbatch_room() - room for two more headers in the batch
 * @j: the journal
 *
 * Flushes the batch (vsmfs_jbatch_flush()) if it has no room.
 */
void vsmfs_jbatch_room(struct vsmfs_journal *j)
{
	if (j->batch_n + 2 > VSMFS_JH_PER_BLOCK)
		vsmfs_jbatch_flush(j);
}

/**
 * vsmfs_jrehash() - point the hash at a header
 * @j: the journal
 * @pos: the header
 *
 * If header @pos holds a valid version, its home block's entry, which must
 * exist, names @pos as its latest or old version, as the flags say.
 */
void vsmfs_jrehash(struct vsmfs_journal *j, u32 pos)
{
	struct vsmfs_jent *e;

	if (!vsmfs_jvalid(j, pos))
		return;
	e = vsmfs_jfind(j, j->h[pos].home);
	if (WARN_ON_ONCE(!e))
		return;
	if (j->h[pos].flags & VSMFS_JH_LATEST)
		e->latest = pos;
	else
		e->old = pos;
}

/*
 * Exchange what headers @a and @b hold (journal block, write count, home,
 * flags) in DRAM. Neither may be on the free tree.
 */
static void vsmfs_jexchange(struct vsmfs_journal *j, u32 a, u32 b)
{
	swap(j->h[a], j->h[b]);
	vsmfs_jrehash(j, a);
	vsmfs_jrehash(j, b);
}

/**
 * vsmfs_jswap() - exchange two headers in the next batch
 * @j: the journal
 * @a: one header
 * @b: the other
 *
 * Exchanges what @a and @b hold in DRAM and queues both for the next batch.
 */
void vsmfs_jswap(struct vsmfs_journal *j, u32 a, u32 b)
{
	vsmfs_jexchange(j, a, b);
	vsmfs_jbatch_add(j, a);
	vsmfs_jbatch_add(j, b);
}

/**
 * vsmfs_journal_free() - free the DRAM state of a journal
 * @j: the journal, or NULL
 */
void vsmfs_journal_free(struct vsmfs_journal *j)
{
	unsigned int i;

	if (!j)
		return;
	for (i = 0; i < j->nthreads; i++)
		kthread_stop(j->threads[i]);
	kfree(j->threads);
	kfree(j->view);
	kvfree(j->copy);
	kvfree(j->post_state);
	kvfree(j->post);
	kvfree(j->ents);
	kvfree(j->hash);
	kvfree(j->wlist_idx);
	kvfree(j->wlink);
	kvfree(j->slot);
	kvfree(j->h);
	kfree(j->fc);
	if (j->fc_crc)
		crypto_free_shash(j->fc_crc);
	kfree(j);
}

/**
 * vsmfs_journal_destroy() - free the metadata cache and the journal state
 * @sbi: the file system
 *
 * Context: unmount or failed mount, no transaction running, timer stopped.
 */
void vsmfs_journal_destroy(struct vsmfs_sb_info *sbi)
{
	vsmfs_mcache_destroy(sbi);
	vsmfs_journal_free(sbi->s_journal);
	sbi->s_journal = NULL;
}

/**
 * vsmfs_jplace() - choose a header for a block a commit places
 * @j: the journal
 * @home: the block's home block
 * @p: the next free header, which is to hold the block's new version
 *
 * Step 2 of a commit (jcommit.c): with deltas, a block whose old and
 * latest versions are committed swaps its old version out of the
 * checkpoint area into @p; with wear-awareness the least-worn free block
 * is first swapped into @p. The other header of a swap is written in
 * place at once, flushed; @p is written by the caller. The headers whose
 * flags the commit must write once it is committed are left in j->post.
 *
 * Context: s_jplace_mutex held.
 */
void vsmfs_jplace(struct vsmfs_journal *j, u64 home, u32 p)
{
	const struct vsmfs_jopts *o = &j->sbi->s_jopts;
	struct vsmfs_jent *e = vsmfs_jfind(j, home);
	struct vsmfs_jh *h = &j->h[p];
	u32 done = READ_ONCE(j->ckpt);

	/*
	 * A delta overwrites the old version: only once the latest one is
	 * committed and re-flagged (below @done), so that no commit in flight
	 * needs the old one.
	 */
	if (o->delta && e && e->old < done && e->latest < done &&
	    (!o->wear || vsmfs_jdelta_wear_ok(j->h[e->old].wc,
					      j->h[vsmfs_wlists_min(&j->free)].wc))) {
		u32 a = e->old, l = e->latest;

		/*
		 * The old version leaves the checkpoint area; a hole is left,
		 * holding the free journal block, written now. Its home stays:
		 * either 8-byte half of the header alone names a hole or an old
		 * version, never a valid version of block 0.
		 */
		vsmfs_wlists_del(&j->free, p);
		vsmfs_jexchange(j, a, p);
		j->h[a].flags = VSMFS_JH_USED;
		j->h[a].home = home;
		vsmfs_jh_write(j, a);
		j->holes++;
		h->flags = VSMFS_JH_USED | VSMFS_JH_VALID | VSMFS_JH_LATEST;
		h->wc = min_t(u64, (u64)h->wc + 1, VSMFS_JH_WC_MAX);
		j->slot[p].delta = 1;
		j->h[l].flags &= ~VSMFS_JH_LATEST;
		j->post[j->npost++] = l;
		e->old = l;
		e->latest = p;
		vsmfs_stat_inc(j->sbi, journal_absorbed);
		return;
	}
	if (o->wear) {
		u32 m = vsmfs_wlists_min(&j->free);

		/* No swap for a block that is as little worn already. */
		if (m != p && j->h[m].wc < j->h[p].wc) {
			/*
			 * @p leaves the free set; @m, still free, takes the
			 * more worn block and moves to its list.
			 */
			vsmfs_wlists_del(&j->free, p);
			vsmfs_jexchange(j, m, p);
			vsmfs_jh_write(j, m);
			vsmfs_wlists_update(&j->free, m);
			trace_vsmfs_wear_swap(j->sbi->s_sb, j->h[p].jb, j->h[m].jb,
					      j->h[p].wc, j->h[m].wc);
			vsmfs_stat_inc(j->sbi, journal_wear_swaps);
		}
	}
	vsmfs_wlists_del(&j->free, p);
	h->home = home;
	h->flags = VSMFS_JH_USED | VSMFS_JH_VALID | VSMFS_JH_LATEST;
	h->wc = min_t(u64, (u64)h->wc + 1, VSMFS_JH_WC_MAX);
	j->slot[p].delta = 0;
	if (!e) {
		e = vsmfs_jent_new(j, home);
		e->latest = p;
		return;
	}
	if (e->old != VSMFS_JNONE) {
		j->h[e->old].flags &= ~VSMFS_JH_VALID;
		j->post[j->npost++] = e->old;
		j->holes++;
	}
	j->h[e->latest].flags &= ~VSMFS_JH_LATEST;
	j->post[j->npost++] = e->latest;
	e->old = e->latest;
	e->latest = p;
	vsmfs_stat_inc(j->sbi, journal_absorbed);
}

/**
 * vsmfs_journal_blocks() - the number of journal blocks
 * @sbi: the file system
 *
 * Return: how many blocks the journal has, the most one transaction holds.
 */
u32 vsmfs_journal_blocks(struct vsmfs_sb_info *sbi)
{
	return sbi->s_journal->n;
}

/**
 * vsmfs_journal_wear_show() - the wear histogram of the journal blocks
 * @sbi: the file system
 * @buf: a sysfs page
 *
 * Prints the number of journal blocks, the minimum, maximum and mean write
 * count and the width of a bucket, then 128 lines "FIRST COUNT": the
 * journal blocks whose write count lies in [FIRST, FIRST + width).
 *
 * Return: bytes printed.
 */
ssize_t vsmfs_journal_wear_show(struct vsmfs_sb_info *sbi, char *buf)
{
	struct vsmfs_journal *j;
	u32 *bucket, lo = U32_MAX, hi = 0, width, pos, i;
	u64 sum = 0, mean100;
	ssize_t len;

	bucket = kcalloc(128, sizeof(*bucket), GFP_KERNEL);
	if (!bucket)
		return -ENOMEM;
	mutex_lock(&sbi->s_jplace_mutex);
	j = sbi->s_journal;
	for (pos = 0; pos < j->n; pos++) {
		lo = min(lo, j->h[pos].wc);
		hi = max(hi, j->h[pos].wc);
		sum += j->h[pos].wc;
	}
	width = DIV_ROUND_UP(hi - lo + 1, 128);
	for (pos = 0; pos < j->n; pos++)
		bucket[(j->h[pos].wc - lo) / width]++;
	mean100 = div_u64(sum * 100, j->n);
	len = sysfs_emit(buf, "blocks %u\nmin %u\nmax %u\nmean %llu.%02llu\nwidth %u\n",
			 j->n, lo, hi, mean100 / 100, mean100 % 100, width);
	mutex_unlock(&sbi->s_jplace_mutex);
	for (i = 0; i < 128; i++)
		len += sysfs_emit_at(buf, len, "%u %u\n", lo + i * width, bucket[i]);
	kfree(bucket);
	return len;
}
