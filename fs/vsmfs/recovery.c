// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs journal recovery at mount, run by vsmfs_journal_init() (journal.c)
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
 *      headers past the checkpoint area become free.
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
int vsmfs_jrestore_copies(struct vsmfs_journal *j, u32 count)
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
int vsmfs_jscan(struct vsmfs_journal *j, u32 ckpt)
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
int vsmfs_jrebuild(struct vsmfs_journal *j, u32 last)
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
