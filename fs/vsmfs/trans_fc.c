// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs transactions: what the handles note for fast commits (fcommit.c).
 * Every handle that changes an inode notes it (vsmfs_fc_note()): with the
 * page table entries a shared handle changed (vsmfs_whandle_note_inode()),
 * with the words of the slot a shared metadata handle of an append or of
 * a change of attributes changed (vsmfs_trans_fc_settle()), with the
 * entry a create added or the two a rename changed
 * (vsmfs_trans_fc_create()), or as a change no record describes, which
 * the inode's next fsync commits.
 *
 * A directory counts the changes of the transaction (@i_fc_gen) and those
 * the records of its new and renamed inodes carry (@i_fc_cov): a
 * create's (or rename's) record carries the directory's part (the words
 * of its slot the transaction changed, and the entries') only if every
 * earlier change of the directory in the transaction is carried already
 * and none came after it, so that what the record stores of the
 * directory is what earlier records and this create (or rename) made of
 * it. The notes change under the locks of the handles that make the
 * changes: the inode's, the directory's i_rwsem for its entries.
 */
#include "vsmfs.h"
#include "trans.h"
#include "mcache.h"

/*
 * Note @count page table entries from @lpn as changed in the running
 * transaction, for @vi's next fast record: a run already noted, or
 * following one, takes them; past VSMFS_FC_RUNS runs, or on a count no
 * run can hold (U64_MAX: more than the handle could note), no record
 * describes the inode's changes until the transaction commits.
 */
static void vsmfs_fc_add_run(struct vsmfs_inode_info *vi, u64 lpn, u64 count)
{
	unsigned int i;

	if (vi->i_fc_bad)
		return;
	for (i = 0; i < vi->i_fc_nruns; i++) {
		u64 r = vi->i_fc_runs[i], start = r & VSMFS_FC_LPN_MASK, n = r >> 48;

		if (lpn >= start && lpn + count <= start + n)
			return;
		if (lpn == start + n && n + count <= VSMFS_FC_MAX_PTES) {
			vi->i_fc_runs[i] = start | (n + count) << 48;
			return;
		}
	}
	/* A run of bits costs a word for every 64 pages, not an entry a page. */
	if (vi->i_fc_nruns == VSMFS_FC_RUNS ||
	    count > (lpn & (VSMFS_FC_RUN_CLAIM | VSMFS_FC_RUN_FREE) ? VSMFS_VSP_PAGES :
		     VSMFS_FC_MAX_PTES)) {
		vi->i_fc_bad = VSMFS_FCB_RUNS;
		return;
	}
	vi->i_fc_runs[vi->i_fc_nruns++] = lpn | count << 48;
}

/* @why is @vi's first change of the transaction no record describes, if none came before. */
static void vsmfs_fc_spoil(struct vsmfs_inode_info *vi, enum vsmfs_fc_why why)
{
	if (!vi->i_fc_bad)
		vi->i_fc_bad = why;
}

/**
 * vsmfs_fc_note() - an inode changes in a transaction
 * @vi: the inode
 * @tid: the running transaction
 * @why: VSMFS_FCB_OK, or the way no fast record describes
 *
 * Its next fsync must make the change durable: with a record only if every
 * change of the transaction was VSMFS_FCB_OK (fcommit.c), else it counts
 * the first other @why.
 */
void vsmfs_fc_note(struct vsmfs_inode_info *vi, u64 tid, enum vsmfs_fc_why why)
{
	vi->i_fc_done = 0;
	if (vi->i_fc_tid != tid) {
		vi->i_fc_tid = tid;
		vi->i_fc_bad = VSMFS_FCB_OK;
		vi->i_fc_nruns = 0;
		vi->i_fc_gen = 0;
		vi->i_fc_cov = 0;
		vi->i_fc_dir = 0;
	}
	vi->i_fc_gen++;
	vsmfs_fc_spoil(vi, why);
}

/*
 * The way handle @t changed what it changed that no record describes:
 * under s_trans_mutex, or beside others with pages freed (noted before
 * the inode), or else.
 */
static enum vsmfs_fc_why vsmfs_fc_why(const struct vsmfs_trans *t)
{
	const struct vsmfs_undo_log *u = t->t_log;
	unsigned int i;

	if (!t->t_shared)
		return VSMFS_FCB_EXCL;
	for (i = 0; i < u->nfree; i++)
		if (u->free[i].count)
			return VSMFS_FCB_FREES;
	return VSMFS_FCB_OP;
}

/* Ranges of one directory block a create or rename may change. */
#define VSMFS_FC_RANGES		8

/*
 * Whether the ranges @t saved (its undo log) are only the new (renamed,
 * unlinked) inode's slot (@islot in @imb), the directory's (@dslot in
 * @dmb), and ranges of one other block (the directory block of the
 * entries) that at most two spans cover, which go to @span (2). A
 * span may cover words between the ranges that the handle did not
 * change: the record stores what they hold, which is what the records
 * before it and the last commit left there, as every change of the
 * directory in the transaction is carried when it is written
 * (vsmfs_fc_lock_dir()).
 */
static bool vsmfs_fc_create_ranges(struct vsmfs_trans *t, u64 *span,
				   const struct vsmfs_mblk *imb, const u8 *islot,
				   const struct vsmfs_mblk *dmb, const u8 *dslot)
{
	struct vsmfs_undo_log *u = t->t_log;
	const struct vsmfs_mblk *blk = NULL;
	unsigned int rs[VSMFS_FC_RANGES], re[VSMFS_FC_RANGES];
	unsigned int i, j, k, n, nr = 0;

	for (i = 0; i < u->n; i++) {
		const struct vsmfs_undo_rec *r = &u->rec[i];
		const u8 *p = r->mb->m_data + r->off;
		unsigned int s, e;

		if (!r->len ||
		    (r->mb == imb && p >= islot && p + r->len <= islot + VSMFS_INODE_SIZE) ||
		    (r->mb == dmb && p >= dslot && p + r->len <= dslot + VSMFS_INODE_SIZE))
			continue;
		/* A directory block is a page: what replay takes (jfast.c). */
		if ((blk && r->mb != blk) || nr == VSMFS_FC_RANGES ||
		    r->mb->m_blk < t->t_sbi->s_layout.data_start)
			return false;
		blk = r->mb;
		/* In words, sorted by their start. */
		s = r->off / 8;
		e = DIV_ROUND_UP(r->off + r->len, 8);
		for (j = nr++; j && rs[j - 1] > s; j--) {
			rs[j] = rs[j - 1];
			re[j] = re[j - 1];
		}
		rs[j] = s;
		re[j] = e;
	}
	if (!blk)
		return false;
	/*
	 * Spans: the two nearest ranges merge while they touch (a gap of one
	 * word costs what a span's key does) or more are left than spans;
	 * none longer than a span holds.
	 */
	for (n = nr; n > 1; n--) {
		int gap = 0, g;

		for (k = n, i = 0; i + 1 < n; i++) {
			g = (int)rs[i + 1] - (int)re[i];
			if (max(re[i], re[i + 1]) - rs[i] <= VSMFS_FC_SPAN_MAX &&
			    (k == n || g < gap)) {
				k = i;
				gap = g;
			}
		}
		if (k == n || (gap > 1 && n <= 2))
			break;
		re[k] = max(re[k], re[k + 1]);
		for (j = k + 1; j + 1 < n; j++) {
			rs[j] = rs[j + 1];
			re[j] = re[j + 1];
		}
	}
	if (n > 2)
		return false;
	for (i = 0; i < n; i++) {
		if (re[i] - rs[i] > VSMFS_FC_SPAN_MAX)
			return false;
		span[i] = blk->m_blk << 9 | rs[i] | (u64)(re[i] - rs[i]) << 48;
	}
	while (n < 2)
		span[n++] = 0;
	return true;
}

/*
 * The words @t changed are those a create's record carries
 * (vsmfs_fc_create_ranges()), and for a create the new inode's slot and
 * its place in the inode map are as the last commit left them: a slot or
 * map entry the transaction changed (an inode freed, a slot moved) holds
 * on PM what another inode needs. A renamed inode's slot was in use at
 * that commit: its record carries every word of it the transaction
 * changed.
 */
static bool vsmfs_fc_create_ok(struct vsmfs_trans *t, struct vsmfs_inode_info *vi, u64 ino)
{
	struct vsmfs_mblk *imb = t->t_fc_imb;
	unsigned int w0 = t->t_fc_ioff / 8;

	if (!imb || !t->t_fc_dmb ||
	    !vsmfs_fc_create_ranges(t, vi->i_fc_span, imb, imb->m_data + t->t_fc_ioff,
				    t->t_fc_dmb, t->t_fc_dmb->m_data + t->t_fc_doff))
		return false;
	if (t->t_fc_ren)
		return true;
	/* A slot's 32 words are half of a mask word. */
	if ((u32)(imb->m_cmask[w0 / 64] >> (w0 % 64)))
		return false;
	return vsmfs_fc_map_kept(t->t_sbi, ino);
}

/* Spans of a directory block a create's or an unlink's record carries. */
static_assert(sizeof_field(struct vsmfs_inode_info, i_fc_span) == 2 * sizeof(u64));
static_assert(sizeof_field(struct vsmfs_fc_gone, span) == 2 * sizeof(u64));

/*
 * The words of the slot @islot (in @imb) that the running transaction
 * changed before @t (m_cmask) or @t did (its undo log): a mask of the
 * slot's words.
 */
static u32 vsmfs_fc_slot_changed(const struct vsmfs_trans *t, const struct vsmfs_mblk *imb,
				 unsigned int ioff)
{
	const struct vsmfs_undo_log *u = t->t_log;
	unsigned int w0 = ioff / 8, i, s, e;
	/* A slot's 32 words are half of a mask word. */
	u32 mask = imb->m_cmask[w0 / 64] >> (w0 % 64);

	for (i = 0; i < u->n; i++) {
		const struct vsmfs_undo_rec *r = &u->rec[i];

		if (r->mb != imb || !r->len || r->off < ioff ||
		    r->off + r->len > ioff + VSMFS_INODE_SIZE)
			continue;
		s = (r->off - ioff) / 8;
		e = DIV_ROUND_UP(r->off + r->len - ioff, 8);
		mask |= (u32)(GENMASK_ULL(e - 1, s));
	}
	return mask;
}

/*
 * An unlink of @t->t_fc_ren in directory @t->t_fc_dir, beside other
 * handles (vsmfs_trans_fc_create()). The directory's next create, rename
 * or link record carries it (vsmfs_fc_lock_dir()) if the unlink left the
 * inode (not a directory) with no links, changed only its slot, the
 * directory's and the words of one directory block that two spans cover,
 * and came when records carried every change of the directory in the
 * transaction, and if every change of the inode in the transaction is of
 * its slot's words (none of its page table entries waits for a record,
 * no create in a directory does) and its slot did not move: the record
 * then holds the spans, as it holds a create's, and the unlinked inode's
 * part, the words of its slot the transaction changed as the unlink left
 * them (taken now: its eviction changes them next), which apply after
 * its earlier records (an order taken from them). A crash after that
 * record leaves the inode in use with no links: an orphan, which the
 * mount frees. Its eviction, and any later change of it, are then left
 * to the commit: its own fsync commits. Else neither the directory nor
 * the inode has a record until the transaction commits. @plain: @t made
 * nothing new and freed nothing (vsmfs_trans_fc_create()).
 */
static void vsmfs_trans_fc_unlink(struct vsmfs_trans *t, bool plain)
{
	struct inode *dir = t->t_fc_dir, *inode = t->t_fc_ren;
	struct vsmfs_inode_info *dvi = VSMFS_I(dir), *vi = VSMFS_I(inode);
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_mblk *imb = t->t_fc_imb;
	struct vsmfs_fc_gone *g = dvi->i_fc_gone;
	enum vsmfs_fc_why why = vsmfs_fc_why(t);
	u64 tid = sbi->s_run.tid, span[2];
	u32 mask, w;
	const __le64 *src;

	if (!plain || inode->i_nlink || S_ISDIR(inode->i_mode) || !imb || !t->t_fc_dmb)
		goto spoil;
	/* Every earlier change of the directory carried; the inode's of its slot alone. */
	if (dvi->i_fc_tid == tid && (dvi->i_fc_bad || dvi->i_fc_cov != dvi->i_fc_gen))
		goto spoil;
	if (vi->i_fc_tid == tid && (vi->i_fc_bad || vi->i_fc_nruns || vi->i_fc_dir))
		goto spoil;
	if (!vsmfs_fc_create_ranges(t, span, imb, imb->m_data + t->t_fc_ioff, t->t_fc_dmb,
				    t->t_fc_dmb->m_data + t->t_fc_doff) ||
	    !vsmfs_fc_map_kept(sbi, inode->i_ino))
		goto spoil;
	if (!g) {
		/* Under the directory's lock, in a handle: no reclaim of this file system. */
		g = kmalloc(sizeof(*g), GFP_NOFS | __GFP_NOWARN);
		if (!g)
			goto spoil;
		dvi->i_fc_gone = g;
	}
	vsmfs_fc_note(dvi, tid, VSMFS_FCB_OK);
	mask = vsmfs_fc_slot_changed(t, imb, t->t_fc_ioff);
	src = (const __le64 *)(imb->m_data + t->t_fc_ioff);
	g->tid = tid;
	g->gen = dvi->i_fc_gen;
	g->ino = inode->i_ino;
	/* Found by the handle, which keeps aggregation out. */
	g->slot = READ_ONCE(vi->i_slot);
	g->seq = ++vi->i_fc_seq;
	g->mask = mask;
	g->span[0] = span[0];
	g->span[1] = span[1];
	for (w = 0; mask; mask &= mask - 1)
		g->words[w++] = src[__ffs(mask)];
	vsmfs_fc_note(vi, tid, VSMFS_FCB_OP);
	return;
spoil:
	vsmfs_fc_note(dvi, tid, why);
	vsmfs_fc_note(vi, tid, why);
}

/**
 * vsmfs_trans_fc_create() - what a fast record may carry of a create
 * @t: a shared metadata handle that created an inode in directory
 *	@t->t_fc_dir, or renamed @t->t_fc_ren in it, or unlinked it
 *	(@t->t_fc_gone, vsmfs_trans_fc_unlink()), ending, before
 *	vsmfs_trans_handle_done()
 *
 * If @t took an i-number whose slot the transaction had not changed,
 * wrote that slot, an entry in a block the directory has and the
 * directory's slot (its link count too for a new directory, which has no
 * block), and nothing else (no new block, no attribute block, nothing
 * freed), the new inode's next record carries the create: its
 * i-number's bit, its slot's words, the entry's words and the
 * directory's slot words (fcommit.c); else neither the new inode nor
 * the directory has a record until the transaction commits. A rename in
 * one directory to a name not in use is alike: it removes an entry and
 * adds one, in one block the directory has, and changes the renamed
 * inode's slot (its ctime) and the directory's; the renamed inode's next
 * record carries that (its bit, set already, with it). So is a link: an
 * entry added, the inode's link count and ctime. Not for an inode whose
 * create in another directory waits for its record: that record would
 * never be written, and the link count would count an entry a crash may
 * lose.
 */
void vsmfs_trans_fc_create(struct vsmfs_trans *t)
{
	struct inode *dir = t->t_fc_dir, *inode = t->t_fc_ren ?: t->t_new_inode;
	struct vsmfs_inode_info *vi = inode ? VSMFS_I(inode) : NULL;
	struct vsmfs_inode_info *dvi = VSMFS_I(dir);
	u64 tid = t->t_sbi->s_run.tid;
	bool ok = vi && list_empty(&t->t_undo) && !t->t_fresh && !t->t_ino_freed &&
		  !t->t_unw_count && list_empty(&t->t_forgot) && !t->t_log->nfree;

	if (t->t_fc_gone) {
		vsmfs_trans_fc_unlink(t, ok);
		return;
	}
	/*
	 * A create took the i-number; a renamed or linked inode has no entry
	 * in another directory waiting for its record.
	 */
	if (ok && t->t_fc_ren)
		ok = vi->i_fc_tid != tid || !vi->i_fc_dir || vi->i_fc_dir == dir->i_ino;
	else if (ok)
		ok = t->t_ino == inode->i_ino;

	ok = ok && vsmfs_fc_create_ok(t, vi, inode->i_ino);
	vsmfs_fc_note(dvi, tid, ok ? VSMFS_FCB_OK : VSMFS_FCB_CREATE);
	if (vi) {
		vsmfs_fc_note(vi, tid, ok ? VSMFS_FCB_OK : VSMFS_FCB_CREATE);
		if (ok) {
			vi->i_fc_dir = dir->i_ino;
			vi->i_fc_dgen = dvi->i_fc_gen;
		}
	}
}

/* Whether [@lpn, @end) lies in run @run (lpn | count << 48). */
static bool vsmfs_fc_in_run(u64 lpn, u64 end, u64 run)
{
	u64 start = run & VSMFS_FC_LPN_MASK;

	return lpn >= start && end <= start + (run >> 48);
}

/*
 * Whether the range @r saved is of page table entries of the run @t moved
 * (@t->t_fc_move) or of as many pages of the run it took, which the move
 * swapped (vsmfs_append_move()).
 */
static bool vsmfs_fc_move_range(const struct vsmfs_trans *t, const struct vsmfs_undo_rec *r)
{
	const struct vsmfs_layout *l = &t->t_sbi->s_layout;
	u64 have = t->t_fc_move >> 48, first, lpn, end;

	if (!have || r->mb->m_blk < l->ptable_start ||
	    r->mb->m_blk >= l->ptable_start + l->ptable_blocks)
		return false;
	first = (r->mb->m_blk - l->ptable_start) * VSMFS_PTES_PER_BLOCK;
	lpn = first + r->off / 8;
	end = first + DIV_ROUND_UP(r->off + r->len, 8);
	return vsmfs_fc_in_run(lpn, end, t->t_fc_move) ||
	       vsmfs_fc_in_run(lpn, end, (t->t_fc_claim & VSMFS_FC_LPN_MASK) | have << 48);
}

/*
 * Whether free entry @f of @t is one a record describes: the end of the
 * reservation @t took its pages from (@t->t_fc_claim), or the run it
 * moved (@t->t_fc_move), whose bits the record clears.
 */
static bool vsmfs_fc_free_ok(const struct vsmfs_trans *t, const struct vsmfs_free_run *f)
{
	if (!f->count)
		return t->t_fc_claim && f->lpn == (t->t_fc_claim & VSMFS_FC_LPN_MASK) &&
		       f->resv == t->t_fc_claim >> 48;
	return t->t_fc_move && !f->scratch && !f->resv &&
	       f->lpn == (t->t_fc_move & VSMFS_FC_LPN_MASK) && f->count == t->t_fc_move >> 48;
}

/**
 * vsmfs_trans_fc_settle() - what a fast record may carry of a shared handle
 * @t: a shared metadata handle its caller said changes only words of one
 *	inode's slot (@t->t_fc_ok), ending, before vsmfs_trans_handle_done()
 *
 * If @t changed no other block but the page table entries of a run it
 * moved (@t->t_fc_move) and of the pages it moved it to, freed nothing but
 * that run and made nothing new, the inode's next fast record carries
 * those words (the slot block's m_cmask, after vsmfs_trans_handle_done()),
 * the bits of the pages it took from a reservation (@t->t_fc_claim: the
 * commit would set them), the entries of both runs and the bits of the
 * run moved (the commit would clear them); else no record describes the
 * inode until the transaction commits.
 */
void vsmfs_trans_fc_settle(struct vsmfs_trans *t)
{
	struct vsmfs_inode_info *vi = VSMFS_I(t->t_fc_inode);
	struct vsmfs_undo_log *u = t->t_log;
	bool ok = t->t_fc_ok && list_empty(&t->t_undo) && !t->t_fresh &&
		  !t->t_ino && !t->t_ino_freed && !t->t_unw_count && list_empty(&t->t_forgot);
	u64 claim = t->t_fc_claim & VSMFS_FC_LPN_MASK, have = t->t_fc_move >> 48;
	unsigned int i;

	/* Words of the slot; a bitmap block joined for a claim changes none. */
	for (i = 0; ok && i < u->n; i++) {
		const struct vsmfs_undo_rec *r = &u->rec[i];

		ok = !r->len || (r->mb == t->t_fc_mb && r->off >= t->t_fc_off &&
				 r->off + r->len <= t->t_fc_off + VSMFS_INODE_SIZE) ||
		     vsmfs_fc_move_range(t, r);
	}
	for (i = 0; ok && i < u->nfree; i++)
		ok = vsmfs_fc_free_ok(t, &u->free[i]);
	if (!ok) {
		vsmfs_fc_spoil(vi, vsmfs_fc_why(t));
		return;
	}
	if (t->t_fc_claim)
		vsmfs_fc_add_run(vi, claim | VSMFS_FC_RUN_CLAIM, t->t_fc_claim >> 48);
	if (have) {
		vsmfs_fc_add_run(vi, claim, have);
		vsmfs_fc_add_run(vi, t->t_fc_move & VSMFS_FC_LPN_MASK, have);
		vsmfs_fc_add_run(vi, (t->t_fc_move & VSMFS_FC_LPN_MASK) | VSMFS_FC_RUN_FREE, have);
	}
}

/**
 * vsmfs_trans_note_inode() - the handle changes an inode's slot
 * @t: the handle
 * @inode: the inode
 *
 * An fsync of @inode then waits for the commit of the running transaction
 * (vsmfs_sync_inode()).
 *
 * Context: inside the handle.
 */
void vsmfs_trans_note_inode(struct vsmfs_trans *t, struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	u64 tid = t->t_sbi->s_run.tid;

	vi->i_tid = tid;
	if (t->t_fc_dir && (inode == t->t_fc_dir || inode == t->t_fc_ren ||
			    inode->i_ino == t->t_ino)) {
		/* A create, a rename: settled as the handle ends (vsmfs_trans_fc_create()). */
		if (inode == t->t_fc_dir) {
			t->t_fc_dmb = t->t_fc_mb;
			t->t_fc_doff = t->t_fc_off;
		} else {
			t->t_fc_imb = t->t_fc_mb;
			t->t_fc_ioff = t->t_fc_off;
		}
		return;
	}
	if (t->t_fc_ok && (!t->t_fc_inode || t->t_fc_inode == inode)) {
		/* Settled as the handle ends (vsmfs_trans_fc_settle()). */
		t->t_fc_inode = inode;
		vsmfs_fc_note(vi, tid, VSMFS_FCB_OK);
		return;
	}
	/* What handles of this kind change, no fast record describes. */
	if (t->t_fc_inode && t->t_fc_inode != inode)
		vsmfs_fc_spoil(VSMFS_I(t->t_fc_inode), vsmfs_fc_why(t));
	t->t_fc_ok = false;
	vsmfs_fc_note(vi, tid, vsmfs_fc_why(t));
}

/**
 * vsmfs_whandle_note_inode() - as vsmfs_trans_note_inode()
 * @h: a shared handle
 * @inode: the inode, whose next fsync needs the running transaction
 */
void vsmfs_whandle_note_inode(struct vsmfs_whandle *h, struct inode *inode)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	/* Changed only by a commit, which no shared handle runs beside. */
	u64 tid = h->h_sbi->s_run.tid;
	unsigned int i;

	vi->i_tid = tid;
	/*
	 * A shared handle changes words of the slot, noted in its block's
	 * m_cmask, and page table entries: those of its swaps and of the
	 * pages it marked written. A fast record of the inode carries them.
	 */
	vsmfs_fc_note(vi, tid, VSMFS_FCB_OK);
	for (i = 0; i < h->h_nswaps; i++) {
		vsmfs_fc_add_run(vi, h->h_swap[i][0], h->h_swap[i][2]);
		vsmfs_fc_add_run(vi, h->h_swap[i][1], h->h_swap[i][2]);
	}
	if (h->h_written[1])
		vsmfs_fc_add_run(vi, h->h_written[0], h->h_written[1]);
	/* Pages taken from a reservation: their bits, which the commit would set. */
	if (h->h_claim.count)
		vsmfs_fc_add_run(vi, h->h_claim.lpn | VSMFS_FC_RUN_CLAIM, h->h_claim.count);
}

