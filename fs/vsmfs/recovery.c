// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs journal recovery at mount: vsmfs_journal_init() loads the journal
 * before anything reads metadata. It finds the journal as a crash at any
 * point of a commit, GC, checkpoint or revocation may leave it (the order
 * of their stores is at the top of journal.c), and in order:
 *
 *   1. a header batch cut short (j_hcopy != 0) is redone from the
 *      header-copy region, whose copies are durable once j_hcopy is set:
 *      the headers are written in place, flushed, fence; j_hcopy = 0,
 *      flushed, fence (vsmfs_jrestore_copies());
 *   2. every header is read into DRAM and checked; a journal block left
 *      named by two headers by a swap cut short in step 2 of a commit is
 *      given back to the one that holds no committed version, and the
 *      other is given the block no header names (vsmfs_jscan());
 *   3. the recovery rules (vsmfs_jrecover() in jcore.c) settle the flags
 *      of the checkpoint area: of two latest versions of a block, left by
 *      a commit cut short in step 6, the one inside the last transaction
 *      (which j_checkpoint records) wins; the headers changed are written,
 *      one 8-byte store of h_state each, flushed, fence; the hash is
 *      rebuilt from the checkpoint area (vsmfs_jrebuild());
 *   4. then, in vsmfs_journal_init(): the commit area past the checkpoint
 *      pointer is discarded (j_commit, flushed, fence), the latest valid
 *      versions are written home with non-temporal stores, fence, and the
 *      headers past the checkpoint area become free;
 *   5. valid fast-commit records are replayed over the homes, and the
 *      journal emptied by a commit that makes them dead (jfast.c).
 *
 * The pure rules are in jcore.c, shared with fsck.vsmfs, which checks a
 * journal the same way.
 */
#include <linux/slab.h>
#include <linux/blkdev.h>
#include "vsmfs.h"
#include "pmem.h"
#include "jcore.h"
#include "journal.h"
#include "mcache.h"

static int vsmfs_jcorrupt(struct vsmfs_sb_info *sbi, const char *what, u32 pos)
{
	vsmfs_err(sbi->s_sb, "journal: header %u: %s", pos, what);
	return -EFSCORRUPTED;
}

/**
 * vsmfs_jrestore_copies() - redo an interrupted header batch
 * @j: the journal, headers not yet read
 * @count: j_hcopy, the headers in the copy region
 *
 * Restores the batch from the header-copy region (step 1 above).
 *
 * Return: 0, or -EFSCORRUPTED if a copy is corrupt.
 */
static int vsmfs_jrestore_copies(struct vsmfs_journal *j, u32 count)
{
	const char *why;
	u32 i, bad;

	why = vsmfs_jcopies_check(vsmfs_pm_view(j->copies), count, j->n, &bad);
	if (why) {
		vsmfs_err(j->sbi->s_sb, "journal: header copy %u: %s", bad, why);
		return -EFSCORRUPTED;
	}
	/* Copies are durable (step 2 of a batch); redo step 3, then 4. */
	for (i = 0; i < count; i++) {
		u32 num = vsmfs_jh_num(vsmfs_pm_view(&j->copies[i]));

		vsmfs_pm_store(&j->hdr[num], vsmfs_pm_view(&j->copies[i]),
			       sizeof(struct vsmfs_djhdr));
		vsmfs_flush(&j->hdr[num], sizeof(struct vsmfs_djhdr));
	}
	vsmfs_fence();
	vsmfs_pm_write(&j->jsb->j_hcopy, 0);
	vsmfs_persist(&j->jsb->j_hcopy, sizeof(__le32));
	vsmfs_info(j->sbi->s_sb, "journal: restored %u header copies", count);
	return 0;
}

/**
 * vsmfs_jscan() - read and check every header
 * @j: the journal
 * @ckpt: the checkpoint pointer
 *
 * Read every header into DRAM and check it; a journal block left named by
 * two headers by a swap cut short (vsmfs_jremap()) is given back, and the
 * headers that changed are written (unless the device is read-only: then
 * nothing is committed that could use them).
 *
 * Return: 0, or -EFSCORRUPTED.
 */
static int vsmfs_jscan(struct vsmfs_journal *j, u32 ckpt)
{
	struct super_block *sb = j->sbi->s_sb;
	const char *why = NULL;
	struct vsmfs_djhdr d;
	u32 pos, nchanged, i;

	for (pos = 0; pos < j->n; pos++) {
		d.h_state = vsmfs_pm_read(&j->hdr[pos].h_state);
		d.h_map = vsmfs_pm_read(&j->hdr[pos].h_map);
		why = vsmfs_jh_decode(&d, pos, j->n, pos < ckpt, &j->sbi->s_layout, &j->h[pos]);
		if (why)
			return vsmfs_jcorrupt(j->sbi, why, pos);
	}
	/*
	 * Until the free lists are built and the first commit, j->wlink is free
	 * (scratch for the owners: j->n words of 8 bytes hold j->n of 4) and
	 * so is j->post (the changed headers).
	 */
	why = vsmfs_jremap(j->h, j->n, ckpt, (u32 *)j->wlink, j->post, &nchanged, &pos);
	if (why)
		return vsmfs_jcorrupt(j->sbi, why, pos);
	if (!nchanged || bdev_read_only(sb->s_bdev))
		return 0;
	for (i = 0; i < nchanged; i++)
		vsmfs_jh_write(j, j->post[i]);
	vsmfs_fence();
	vsmfs_info(sb, "journal: remapped %u journal blocks of a swap cut short", nchanged);
	return 0;
}

/**
 * vsmfs_jrebuild() - apply the recovery rules and rebuild the hash
 * @j: the journal, headers scanned, j->ckpt set
 * @last: the first header of the last committed transaction
 *
 * Apply the recovery rules (vsmfs_jrecover()) and write the headers they
 * change; then rebuild the hash from the checkpoint area.
 *
 * Return: 0, -ENOMEM or -EFSCORRUPTED.
 */
static int vsmfs_jrebuild(struct vsmfs_journal *j, u32 last)
{
	struct vsmfs_jver *ver;
	const char *why;
	u32 pos, nchanged, bad, i;

	ver = kvmalloc_array(max(j->ckpt, 1U), sizeof(*ver), GFP_KERNEL);
	if (!ver)
		return -ENOMEM;
	/* j->post is free until the first commit: the changed headers. */
	why = vsmfs_jrecover(j->h, j->ckpt, last, ver, j->post, &nchanged, &bad);
	kvfree(ver);
	if (why)
		return vsmfs_jcorrupt(j->sbi, why, bad);
	for (i = 0; i < nchanged; i++)
		vsmfs_jh_write_state(j, j->post[i]);
	vsmfs_fence();
	if (nchanged)
		vsmfs_info(j->sbi->s_sb, "journal: re-flagged %u versions", nchanged);
	for (pos = 0; pos < j->ckpt; pos++) {
		if (!vsmfs_jvalid(j, pos)) {
			j->holes++;
			continue;
		}
		if (!vsmfs_jfind(j, j->h[pos].home))
			vsmfs_jent_new(j, j->h[pos].home);
		vsmfs_jrehash(j, pos);
	}
	return 0;
}

static struct vsmfs_journal *vsmfs_journal_alloc(struct vsmfs_sb_info *sbi, u32 n)
{
	struct vsmfs_journal *j;
	u32 i;

	j = kzalloc(sizeof(*j), GFP_KERNEL);
	if (!j)
		return NULL;
	j->sbi = sbi;
	j->n = n;
	j->hash_bits = ilog2(roundup_pow_of_two(n));
	j->h = kvcalloc(n, sizeof(*j->h), GFP_KERNEL);
	j->slot = kvcalloc(n, sizeof(*j->slot), GFP_KERNEL);
	j->wlink = kvcalloc(n, sizeof(*j->wlink), GFP_KERNEL);
	j->wlist_idx = kvcalloc(n, sizeof(*j->wlist_idx), GFP_KERNEL);
	j->hash = kvcalloc(1U << j->hash_bits, sizeof(*j->hash), GFP_KERNEL);
	j->ents = kvcalloc(n, sizeof(*j->ents), GFP_KERNEL);
	j->post = kvcalloc(2 * n, sizeof(*j->post), GFP_KERNEL);
	j->post_state = kvcalloc(2 * n, sizeof(*j->post_state), GFP_KERNEL);
	j->view = kmalloc(VSMFS_BLOCK_SIZE, GFP_KERNEL);
	if (!j->h || !j->slot || !j->wlink || !j->wlist_idx || !j->hash || !j->ents || !j->post ||
	    !j->post_state || !j->view) {
		vsmfs_journal_free(j);
		return NULL;
	}
	INIT_HLIST_HEAD(&j->ent_free);
	INIT_LIST_HEAD(&j->ent_live);
	for (i = 0; i < n; i++)
		hlist_add_head(&j->ents[i].node, &j->ent_free);
	vsmfs_wlists_init(&j->free, j->h, j->wlink, j->wlist_idx, n);
	init_waitqueue_head(&j->order_wq);
	spin_lock_init(&j->tx_lock);
	INIT_LIST_HEAD(&j->txs);
	init_waitqueue_head(&j->cp_wq);
	INIT_DELAYED_WORK(&j->ckpt_work, vsmfs_jtimer_fn);
	return j;
}

/**
 * vsmfs_journal_init() - recover the journal
 * @sbi: the file system, mapped, superblock verified
 *
 * Restores an interrupted header batch, discards the uncommitted area,
 * writes the latest valid version of every block home and rebuilds the
 * hash and the free tree. Reads only the journal superblock, the headers
 * and the journal blocks it replays.
 *
 * Context: mount, before anything reads metadata.
 * Return: 0 or a negative errno.
 */
int vsmfs_journal_init(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_djsb __pm *jsb = vsmfs_blk_ptr(sbi, sbi->s_layout.journal_start);
	struct super_block *sb = sbi->s_sb;
	struct vsmfs_journal *j;
	u32 n, hdr_blocks, ckpt, last, commit, hcopy, pos, count = 0;
	struct vsmfs_jsb_state js;
	const char *why;
	int ret;

	mutex_init(&sbi->s_trans_mutex);
	atomic_set(&sbi->s_excl, 0);
	atomic_set(&sbi->s_excl_ends, 0);
	init_waitqueue_head(&sbi->s_excl_wq);
	mutex_init(&sbi->s_jplace_mutex);
	atomic_set(&sbi->s_freeing, 0);
	ret = vsmfs_mcache_init(sbi);
	if (ret)
		return ret;
	why = vsmfs_jsb_check(vsmfs_pm_view(jsb), sbi->s_layout.journal_blocks, &js);
	if (why) {
		vsmfs_err(sb, "journal superblock is corrupt: %s", why);
		return -EFSCORRUPTED;
	}
	n = js.n;
	hdr_blocks = js.hdr_blocks;
	ckpt = js.ckpt;
	last = js.last;
	commit = js.commit;
	hcopy = js.hcopy;
	if ((ckpt || hcopy || commit != ckpt) && bdev_read_only(sb->s_bdev)) {
		vsmfs_err(sb, "journal needs recovery but the device is read-only");
		return -EROFS;
	}

	j = vsmfs_journal_alloc(sbi, n);
	if (!j)
		return -ENOMEM;
	j->jsb = jsb;
	j->hdr = (void __pm *)jsb + VSMFS_BLOCK_SIZE;
	j->copies = (void __pm *)jsb + ((u64)(1 + hdr_blocks) << VSMFS_BLOCK_SHIFT);
	j->blocks = (void __pm *)jsb + ((u64)(2 + hdr_blocks) << VSMFS_BLOCK_SHIFT);
	sbi->s_journal = j;
	sbi->s_trans_max = n;
	ret = vsmfs_jfc_init(j, &js);
	if (ret)
		return ret;

	if (hcopy) {
		ret = vsmfs_jrestore_copies(j, hcopy);
		if (ret)
			return ret;
	}
	ret = vsmfs_jscan(j, ckpt);
	if (ret)
		return ret;
	j->ckpt = ckpt;
	ret = vsmfs_jrebuild(j, last);
	if (ret)
		return ret;
	if (commit != ckpt) {
		if (commit > ckpt)
			vsmfs_info(sb, "journal: discarded %u uncommitted blocks", commit - ckpt);
		vsmfs_jsb_store_commit(j, ckpt);
		vsmfs_fence();
	}
	for (pos = 0; pos < ckpt; pos++) {
		struct vsmfs_jh *h = &j->h[pos];

		if (!vsmfs_jh_is_latest(h))
			continue;
		vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, h->home), vsmfs_pm_view(vsmfs_jblock(j, h->jb)),
				VSMFS_BLOCK_SIZE);
		count++;
	}
	/* Home blocks durable before anything reads or changes them. */
	vsmfs_fence();
	vsmfs_stat_add(sbi, home_bytes, (u64)count * VSMFS_BLOCK_SIZE);
	if (count)
		vsmfs_info(sb, "journal: replayed %u blocks", count);
	/* Fast records after the commits they follow; may empty the journal. */
	ret = vsmfs_jfc_replay(j, bdev_read_only(sb->s_bdev));
	if (ret)
		return ret;
	for (pos = j->ckpt; pos < n; pos++)
		vsmfs_wlists_add(&j->free, pos);
	j->resv = j->ckpt;
	vsmfs_jthreads_start(j, sbi->s_jopts.threads);
	return 0;
}
