// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs NVM metadata journal, the commit pipeline: a transaction's blocks
 * placed (journal.c), written to their journal blocks and committed in
 * ticket order. A commit freezes its blocks (no copy is taken: a task that
 * changes one before the commit has written it copies it for the commit
 * first, __vsmfs_mblk_freeze(), as jbd2 keeps frozen buffers) and hands
 * s_trans_mutex over before its placement, so that the next handle changes
 * DRAM while this transaction is placed and writes its journal blocks.
 * Commits wait for their writes to be durable and commit without either
 * lock: each takes a ticket, and the commits are made in ticket order by
 * whichever task finds the next one ready (a commit never waits for a
 * sleeping task to wake). What a commit asks of the transactions above
 * (to release the handle's blocks and s_trans_mutex, to learn that pages
 * it freed may be taken) goes through the ops they register
 * (sbi->s_jclient).
 *
 * Commit of a transaction of k blocks (vsmfs_journal_commit_trans()):
 *   0. file data the transaction makes reachable was written by its
 *      handles with non-temporal stores or flushed, and fenced by each
 *      handle that did not commit (trans.c), not yet by this one; with
 *      journal_commit=parallel (and memory for the notes of its blocks)
 *      the blocks are frozen: each notes the commit (m_jc), and a task
 *      about to change one before step 4 has written it first takes its
 *      masks and copies it for the commit under the block's m_jlock
 *      (vsmfs_mblk_freeze()); then s_jplace_mutex is taken, s_trans_mutex
 *      released and the masks no task took are taken
 *      (vsmfs_jtx_masks_late()); otherwise s_jplace_mutex is taken inside
 *      s_trans_mutex, and the masks with it. Steps 1-3 hold
 *      s_jplace_mutex;
 *   1. GC or checkpoint if the journal would pass its fill threshold, once
 *      the commits in flight have finished;
 *   2. each block takes the next free header p: with wear-awareness the
 *      least-worn free block is first swapped into p; with deltas, a block
 *      that has an old and a latest version, both committed, swaps its old
 *      version out of the checkpoint area into p instead (leaving an
 *      invalid hole), unless its journal block is worn past the least-worn
 *      free one by VSMFS_JWEAR_SLACK writes (wear-awareness on). The
 *      other header of a swap (the free one, or the hole) is written in
 *      place at once, flushed; p is written in step 3. Neither holds a
 *      version recovery needs before the commit, so no header-copy batch
 *      is needed: a crash between the two leaves one journal block named
 *      by both (and one by none), which recovery gives back to the header
 *      that holds no committed version (vsmfs_jremap());
 *   3. j_commit = end of the placed area, flushed; the headers of the
 *      transaction are written and flushed; each block not frozen in step
 *      0 is written to its journal block: only the differing 8-byte
 *      words over the old version (which words, DRAM knows:
 *      vsmfs_mblk_commit_masks()), or a whole version into a free block: of
 *      an inode table block, the words that differ from what it holds
 *      (found by reading it), flushed; of others, or with
 *      journal_delta=off, a full copy with non-temporal stores. The
 *      block is the transaction's alone: no header names it before step
 *      5, and what it held is dead.
 *      The transaction takes the next ticket, keeps the header states step
 *      6 writes, and (journal_commit=parallel) releases the locks;
 *   4. the frozen blocks are written to their journal blocks as in 3, by
 *      as many tasks at once as there are commits in flight, each from
 *      the DRAM block under its m_jlock, or from the copy a task made
 *      before changing it; no PM store is made by the task that copies,
 *      so the order of the stores is that of step 3; fence, on this
 *      task's CPU: data, journal blocks and headers are durable; the
 *      transaction is ready;
 *   5. once every earlier ticket has finished step 6, by this task or by
 *      the one that finished the ticket before:
 *      j_checkpoint = start << 32 | end, one 8-byte store, flushed, fence:
 *      the transaction is committed;
 *   6. the previous latest version of each block is flagged old (and with
 *      deltas off the previous old one invalid), one 8-byte store of its
 *      h_state each, flushed, fence; then the next ticket, if ready, is
 *      committed by the same task, and the task of this one woken. A
 *      crash before that leaves two latest versions: recovery prefers the
 *      one inside the last transaction, which j_checkpoint records. As
 *      transactions commit one after another, only the last one can have
 *      versions left to re-flag.
 * A crash before 5 leaves the commit area, which recovery discards, and the
 * previous checkpoint area unchanged but for holes made of old versions
 * whose successors are committed. A hole's header may not be durable when
 * a delta is written over its old version in 3 or 4: the checkpoint area
 * may then still name a torn old version, which is harmless, as an old
 * version is never written home, and the first delta of a block after a
 * mount compares with what its journal block holds, whatever that is (the
 * later ones know from DRAM what the block holds). A delta
 * is written only over a version whose successor has finished step 6, so no
 * commit in flight needs what it overwrites. The headers and journal blocks
 * a commit writes in step 4 are its own until it is committed: later
 * placements take only free headers and committed old versions, and GC,
 * checkpoint and revocation wait for the commits in flight.
 *
 * Home writes. A block of which the journal holds no version
 * (vsmfs_jtx_home(), under s_jplace_mutex in step 2) and that either
 * (m_fchome, vsmfs_mblk_commit_masks()) changed in the transaction only in
 * words its fast records carry (inode-table blocks of fsync'd creates and
 * appends, directory blocks of fsync'd creates), or was made in the
 * transaction of a page free at the last commit (a new directory, index
 * or xattr block), is not placed: its home block holds its last committed
 * version, or nothing anyone reads, and the commit writes the new one over
 * it in place, the words that differ, flushed, in step 3 (or 4 when
 * frozen), fenced with the journal blocks in step 4 (of a carried block,
 * the words the transaction changed, m_fcwmask: its m_wmask, known
 * without reading the home block; of a new one, those found different by
 * reading it). A crash before step 5
 * leaves the last commit and the transaction's fast records, which are
 * valid then (its records were written once every earlier transaction had
 * committed): recovery stores each carried word as its records have it
 * over what the home block holds, so every word this commit wrote home is
 * as before or as its records say, and a new block's page is free again.
 * After step 5 the home block is the committed version. Later placements
 * of the block go to the journal as usual; a checkpoint waits for the
 * commits in flight, so none writes an older version home after this one.
 *
 * A commit is synchronous for the task that makes it (the transaction is
 * durable when vsmfs_journal_commit_trans() returns); when a transaction
 * commits is decided in trans_commit.c.
 */
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <linux/wait_bit.h>
#include "vsmfs.h"
#include "vsp.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "jcore.h"
#include "journal.h"
#include "mcache.h"
#include "badframe.h"

/* Re-flags a commit keeps in itself; more are allocated. */
#define VSMFS_JTX_POST_INLINE	8
/* Notes of frozen blocks a commit keeps in itself; more are allocated. */
#define VSMFS_JTX_COPY_INLINE	8
/* Most notes an array kept for the next commit holds (about 43 KiB). */
#define VSMFS_JTX_COPY_KEEP	256

/*
 * struct vsmfs_jtx - a transaction between placement and commit
 *
 * Its journal blocks and headers are written under the lock; what is left
 * (steps 4-6) needs neither the lock nor the DRAM state of the journal,
 * which later transactions change: the re-flags are kept here.
 */
struct vsmfs_jtx {
	u64			ticket;		/* commit order */
	u32			start, end;	/* its headers */
	u32			npost;
	u32			*post;		/* headers to re-flag */
	u64			*post_state;	/* and their new h_state */
	u32			post_inl[VSMFS_JTX_POST_INLINE];
	u64			state_inl[VSMFS_JTX_POST_INLINE];
	struct list_head	node;		/* in vsmfs_journal.txs, by ticket */
	struct completion	turn;		/* committed by another task */
	bool			ready;		/* journal writes durable (tx_lock) */
	u64			t0;		/* for the trace event */
	u32			delta_blocks;
	u64			delta_bytes, full_bytes;
	int			error;
	bool			frozen;		/* every block is in @copy */
	void			*view;		/* vsmfs_mblk_commit_view() */
	u32			ncopy, copy_max;
	struct vsmfs_jcopy	*copy;		/* @copy_inl, or allocated */
	struct vsmfs_jcopy	copy_inl[VSMFS_JTX_COPY_INLINE];
};

/*
 * Write only the 8-byte words of @new that differ from the journal block
 * @pm, flushing each cache line touched: those in @mask when it is given
 * (known from DRAM, vsmfs_mblk_commit_masks()), without the bits of @clear if
 * given, else those found different by reading @pm. Return: bytes written.
 */
static u32 vsmfs_jwrite_delta(struct vsmfs_sb_info *sbi, void __pm *pm, const void *new,
			      const u64 *mask, const unsigned long *clear)
{
	u64 lines;
	u32 bytes;

	if (mask) {
		bytes = vsmfs_jdelta_mask(pm, new, mask, (const u64 *)clear, &lines);
	} else {
		bytes = vsmfs_jdelta(pm, new, &lines);
		vsmfs_stat_add(sbi, journal_read_bytes, VSMFS_BLOCK_SIZE);
	}

	while (lines) {
		unsigned int i = __ffs64(lines);

		vsmfs_flush(pm + i * 64, 64);
		lines &= lines - 1;
	}
	return bytes;
}

/**
 * vsmfs_jwrite_diff() - make a block on PM hold a version, storing little
 * @sbi: the file system
 * @pm: a free journal block, or the version's home block
 * @new: the version
 *
 * Reads @pm and stores only the 8-byte words that differ from @new,
 * through the cache, each line touched then flushed (vsmfs_jdelta()); not
 * fenced. Whatever @pm held, it then holds @new: the words left alone
 * were equal.
 *
 * Return: bytes written.
 */
u32 vsmfs_jwrite_diff(struct vsmfs_sb_info *sbi, void __pm *pm, const void *new)
{
	return vsmfs_jwrite_delta(sbi, pm, new, NULL, NULL);
}

/*
 * Write one version of block @home into its journal block @dst: the words that
 * differ from the old version there (@delta; @mask, if known, names them,
 * and @clear, if given, the bits of them left out of @src), or the whole
 * version (of an inode table block with deltas on, the words that differ
 * from what the free block holds, else all of it with non-temporal
 * stores); flushed, not fenced.
 */
static void vsmfs_jwrite_block(struct vsmfs_journal *j, struct vsmfs_jtx *tx, u64 home,
			       void __pm *dst, const void *src, bool delta, const u64 *mask,
			       const unsigned long *clear)
{
	struct vsmfs_sb_info *sbi = j->sbi;

	WARN_ON_ONCE(clear && !(delta && mask));
	if (delta) {
		u32 n = vsmfs_jwrite_delta(sbi, dst, src, mask, clear);

		vsmfs_jstat_bytes(sbi, journal_delta_bytes, n);
		vsmfs_stat_inc(sbi, journal_delta_blocks);
		tx->delta_bytes += n;
		tx->delta_blocks++;
	} else {
		u32 n = VSMFS_BLOCK_SIZE;

		/*
		 * A whole version of an inode table block into a free journal
		 * block: with deltas on, only the words that differ from what
		 * it holds (a dead version, or zeros: inode slots share their
		 * zero words), which no header names until this transaction's
		 * commit. Other blocks (page tables) differ from a dead
		 * version in most words: copied whole.
		 */
		if (READ_ONCE(sbi->s_jopts.delta) && vsmfs_layout_itable(&sbi->s_layout, home))
			n = vsmfs_jwrite_diff(sbi, dst, src);
		else
			vsmfs_memcpy_nt(dst, src, VSMFS_BLOCK_SIZE);
		vsmfs_jstat_bytes(sbi, journal_full_bytes, n);
		vsmfs_stat_inc(sbi, journal_full_blocks);
		tx->full_bytes += n;
	}
}

/*
 * Whether block @home is written home in place instead of to the journal
 * (see "Home writes" at the top of the file): its transaction's fast
 * records carry every word it changed, or it made the block of a free
 * page (@fchome, from m_fchome), and the journal holds no version of it.
 * Under s_jplace_mutex: no placement or checkpoint runs beside it.
 */
static bool vsmfs_jtx_home(struct vsmfs_journal *j, u64 home, bool fchome)
{
	lockdep_assert_held(&j->sbi->s_jplace_mutex);
	if (!fchome && vsmfs_layout_itable(&j->sbi->s_layout, home) &&
	    vsmfs_fault(VSMFS_FAULT_JHOME_UNSAFE))
		fchome = true;
	return fchome && READ_ONCE(j->sbi->s_jopts.delta) && !vsmfs_jfind(j, home) &&
	       !vsmfs_blk_bad(j->sbi, home);
}

/*
 * Write the version @src of block @home over its home block: the words
 * that differ, flushed, not fenced. Those are the words in @mask, if
 * given: for a block its fast records carry (m_fcwmask), whose home holds
 * the last committed version (the journal holds none), the words this
 * transaction changed (m_wmask), known without reading the home block;
 * else those found different by reading it (vsmfs_jwrite_diff()).
 */
static void vsmfs_jwrite_home(struct vsmfs_journal *j, u64 home, const void *src,
			      const u64 *mask)
{
	struct vsmfs_sb_info *sbi = j->sbi;

	vsmfs_stat_add(sbi, home_bytes, vsmfs_jwrite_delta(sbi, vsmfs_blk_ptr(sbi, home), src,
							   mask, NULL));
	vsmfs_stat_inc(sbi, journal_home_blocks);
	vsmfs_jcount_itable(sbi, home);
}

/* The masks of every block of @t, committed as transaction @tid, in the blocks. */
static void vsmfs_jtx_masks(struct vsmfs_trans *t, u64 tid)
{
	bool delta = t->t_sbi->s_jopts.delta;
	struct vsmfs_mblk *mb;

	list_for_each_entry(mb, &t->t_dirty, m_dirty)
		mb->m_dmask_ok = vsmfs_mblk_commit_masks(mb, tid, delta, mb->m_dmask);
}

/*
 * Freeze @t, committed as transaction @tid, for a commit placed after
 * s_trans_mutex is released: each dirty block is noted in @tx, and notes
 * @tx (m_jc), so that neither the placement nor the journal writes read
 * @t, and a task that changes a block before this commit has written it
 * first takes the block's masks for the commit and gives it a copy of the
 * block (__vsmfs_mblk_freeze()). No block is copied here, nor are its
 * masks taken: the commit takes those left once it has let the next
 * handles in (vsmfs_jtx_masks_late()). Sets @tx->frozen, unless memory
 * for the notes of a larger transaction than @tx holds is short. However
 * large the transaction (the sync after a stream of handles that never
 * committed: thousands of blocks), only its notes are made under the
 * lock: its masks, its placement and its journal writes run beside the
 * next handles, which copy a block for it only if they change one it has
 * not written yet, or wait for it to be written if memory for the copy
 * is short.
 */
static void vsmfs_jtx_freeze(struct vsmfs_trans *t, struct vsmfs_jtx *tx, u64 tid)
{
	struct vsmfs_journal *j = t->t_sbi->s_journal;
	bool delta = t->t_sbi->s_jopts.delta;
	struct vsmfs_mblk *mb;
	unsigned int nofs;

	lockdep_assert_held(&t->t_sbi->s_trans_mutex);
	lockdep_assert_held_write(&t->t_sbi->s_handles_sem);
	tx->copy = tx->copy_inl;
	if (t->t_nblocks > VSMFS_JTX_COPY_INLINE) {
		/*
		 * The array the last commit kept, if large enough: every handle
		 * waits here, and a new one costs zeroing besides.
		 */
		spin_lock(&j->tx_lock);
		if (j->copy_max >= t->t_nblocks) {
			tx->copy = j->copy;
			tx->copy_max = j->copy_max;
			j->copy = NULL;
			j->copy_max = 0;
		}
		spin_unlock(&j->tx_lock);
	}
	if (t->t_nblocks > VSMFS_JTX_COPY_INLINE && !tx->copy_max) {
		/* Room for the next ones to grow, to be kept after. */
		tx->copy_max = t->t_nblocks <= VSMFS_JTX_COPY_KEEP ?
			       min(2 * t->t_nblocks, VSMFS_JTX_COPY_KEEP) : t->t_nblocks;
		/* Reclaim must not enter the file system, whose handles wait. */
		nofs = memalloc_nofs_save();
		tx->copy = kvmalloc_array(tx->copy_max, sizeof(*tx->copy),
					  GFP_KERNEL | __GFP_NOWARN);
		memalloc_nofs_restore(nofs);
		if (!tx->copy)
			return;
	}
	list_for_each_entry(mb, &t->t_dirty, m_dirty) {
		struct vsmfs_jcopy *c = &tx->copy[tx->ncopy++];

		/* Every change of a block noted by an earlier commit gave it a copy. */
		if (WARN_ON_ONCE(READ_ONCE(mb->m_jc)))
			__vsmfs_mblk_freeze(t->t_sbi, mb);
		c->mb = mb;
		c->src = NULL;
		c->tid = tid;
		c->jdelta = delta;
		c->masked = false;
		c->home_write = false;
		c->home = mb->m_blk;
		/* Seen by every later handle, which takes the locks held here. */
		WRITE_ONCE(mb->m_jc, c);
	}
	tx->frozen = true;
}

/*
 * The masks of the frozen blocks of @tx that no task took when it froze
 * one (vsmfs_jcopy_masks()), each under its m_jlock: once the commit has
 * let the next handles in, before it places the blocks, which needs
 * them.
 */
static void vsmfs_jtx_masks_late(struct vsmfs_jtx *tx)
{
	unsigned int i;

	for (i = 0; i < tx->ncopy; i++) {
		struct vsmfs_jcopy *c = &tx->copy[i];

		spin_lock(&c->mb->m_jlock);
		if (!c->masked)
			vsmfs_jcopy_masks(c);
		spin_unlock(&c->mb->m_jlock);
	}
}

/* Step 3 for the header at @p. */
static void vsmfs_jtx_header(struct vsmfs_journal *j, u32 p)
{
	vsmfs_jh_write(j, p);
	j->slot[p].delta = 0;
}

/*
 * Steps 1-3 of a commit, under s_jplace_mutex: place every block (of @t,
 * or of @tx's frozen blocks), write the headers (flushed, not fenced),
 * write the blocks of @t or note where the frozen ones go in step 4, and
 * queue @tx for its commit. Return: false if memory is short for the
 * re-flags, which are then left in j->post and j->post_state, or for the
 * copy a page bitmap block is written from, which is then j->view: the
 * commit must end under the lock.
 */
static bool vsmfs_jtx_place(struct vsmfs_journal *j, struct vsmfs_trans *t,
			    struct vsmfs_jtx *tx)
{
	struct vsmfs_mblk *mb;
	bool own = true;
	u32 p, i;

	lockdep_assert_held(&j->sbi->s_jplace_mutex);
	vsmfs_jreserve(j, tx->frozen ? tx->ncopy : t->t_nblocks);
	tx->start = j->resv;
	j->npost = 0;
	p = tx->start;
	if (tx->frozen) {
		for (i = 0; i < tx->ncopy; i++) {
			struct vsmfs_jcopy *c = &tx->copy[i];

			c->home_write = vsmfs_jtx_home(j, c->home, c->fchome);
			if (!c->home_write)
				vsmfs_jplace(j, c->home, p++);
		}
	} else {
		list_for_each_entry(mb, &t->t_dirty, m_dirty) {
			mb->m_fchome = vsmfs_jtx_home(j, mb->m_blk, mb->m_fchome);
			if (!mb->m_fchome)
				vsmfs_jplace(j, mb->m_blk, p++);
		}
	}
	tx->end = p;
	/* 3: recovery discards what lies past the checkpoint area. */
	vsmfs_jsb_store_commit(j, tx->end);
	p = tx->start;
	if (tx->frozen) {
		bool view = false;

		for (i = 0; i < tx->ncopy; i++) {
			struct vsmfs_jcopy *c = &tx->copy[i];

			if (c->home_write) {
				c->dst = vsmfs_blk_ptr(j->sbi, c->home);
				continue;
			}
			c->dst = vsmfs_jblock(j, j->h[p].jb);
			c->delta = j->slot[p].delta;
			/*
			 * A page bitmap block is written from a copy without
			 * its reserved bits, unless as a delta of known words,
			 * which leaves them out word by word. Its overlay may
			 * appear meanwhile only once the block has been
			 * copied for this commit (vsmfs_resv_block()).
			 */
			if (READ_ONCE(c->mb->m_resv) && !(c->delta && c->mask_ok))
				view = true;
			vsmfs_jtx_header(j, p++);
		}
		if (view && !vsmfs_fault(VSMFS_FAULT_JCOPY_ALLOC))
			tx->view = kmalloc(VSMFS_BLOCK_SIZE, GFP_NOFS | __GFP_NOWARN);
		if (view && !tx->view) {
			/* Step 4 then holds s_jplace_mutex, which guards j->view. */
			tx->view = j->view;
			own = false;
		}
		vsmfs_stat_add(j->sbi, journal_deferred_blocks, tx->ncopy);
	} else {
		list_for_each_entry(mb, &t->t_dirty, m_dirty) {
			if (mb->m_fchome) {
				vsmfs_jwrite_home(j, mb->m_blk, mb->m_data,
						  mb->m_fcwmask ? mb->m_wmask : NULL);
				continue;
			}
			vsmfs_jwrite_block(j, tx, mb->m_blk, vsmfs_jblock(j, j->h[p].jb),
					   vsmfs_mblk_commit_view(mb, j->view),
					   j->slot[p].delta, mb->m_dmask_ok ? mb->m_dmask : NULL,
					   NULL);
			vsmfs_jtx_header(j, p++);
		}
	}
	j->resv = tx->end;
	/* The re-flags, as they must be written: later placements change h[]. */
	for (i = 0; i < j->npost; i++)
		j->post_state[i] = vsmfs_jh_state(&j->h[j->post[i]], j->post[i]);
	tx->npost = j->npost;
	tx->post = tx->post_inl;
	tx->post_state = tx->state_inl;
	if (tx->npost > VSMFS_JTX_POST_INLINE) {
		tx->post_state = kvmalloc_array(tx->npost, sizeof(u32) + sizeof(u64),
						GFP_NOFS | __GFP_NOWARN);
		tx->post = tx->post_state ? (u32 *)(tx->post_state + tx->npost) : NULL;
	}
	if (tx->post) {
		memcpy(tx->post, j->post, tx->npost * sizeof(u32));
		memcpy(tx->post_state, j->post_state, tx->npost * sizeof(u64));
	} else {
		tx->post = j->post;
		tx->post_state = j->post_state;
		own = false;
	}
	tx->ticket = j->ticket_next++;
	tx->ready = false;
	init_completion(&tx->turn);
	spin_lock(&j->tx_lock);
	list_add_tail(&tx->node, &j->txs);
	spin_unlock(&j->tx_lock);
	return own;
}

/* Steps 5 and 6 of one commit; its journal writes are durable. */
static void vsmfs_jtx_commit(struct vsmfs_journal *j, struct vsmfs_jtx *tx)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	u32 i;

	u64 count = j->count + 1;

	WARN_ON_ONCE(READ_ONCE(j->ckpt) != tx->start);
	/*
	 * One 8-byte store commits, with the commit's number in it (fast
	 * commits); j_sequence, in the same line, after it.
	 */
	vsmfs_pm_write(&j->jsb->j_checkpoint,
		       cpu_to_le64(vsmfs_jckpt_state(j, tx->start, tx->end, count)));
	vsmfs_pm_write(&j->jsb->j_sequence, cpu_to_le64(count));
	vsmfs_persist(j->jsb, offsetofend(struct vsmfs_djsb, j_sequence));
	WRITE_ONCE(j->count, count);
	vsmfs_jstat_bytes(sbi, journal_header_bytes, 2 * sizeof(__le64));
	for (i = 0; i < tx->npost; i++) {
		struct vsmfs_djhdr __pm *d = &j->hdr[tx->post[i]];

		if (i == tx->npost / 2)
			vsmfs_fault_stop(sbi->s_sb, VSMFS_FAULT_JPOST_STOP,
					 "journal stopped re-flagging after a commit");
		vsmfs_pm_write(&d->h_state, cpu_to_le64(tx->post_state[i]));
		vsmfs_flush(&d->h_state, sizeof(__le64));
		vsmfs_jstat_bytes(sbi, journal_header_bytes, sizeof(__le64));
	}
	if (tx->npost)
		vsmfs_fence();
	vsmfs_stat_inc(sbi, trans_commits);
}

/*
 * Step 5 in ticket order, without waiting for a turn: @tx's journal writes
 * are durable (fenced on the CPU that made them). If every earlier ticket
 * has committed and no other task is committing, this task commits @tx and
 * then every later one whose writes are durable too, and wakes their
 * tasks; otherwise the task committing the ticket before @tx will commit
 * it, and this one sleeps until then. So a commit never waits for a
 * sleeping task to wake up before the next can go.
 */
static void vsmfs_jtx_finish(struct vsmfs_journal *j, struct vsmfs_jtx *tx)
{
	struct vsmfs_jtx *cur;
	bool empty;

	spin_lock(&j->tx_lock);
	tx->ready = true;
	cur = list_first_entry(&j->txs, struct vsmfs_jtx, node);
	if (cur != tx || j->committing) {
		spin_unlock(&j->tx_lock);
		vsmfs_stat_inc(j->sbi, journal_order_waits);
		/* The task before is committing: spin a little before sleeping. */
		vsmfs_spin_until(completion_done(&tx->turn), VSMFS_COMMIT_SPIN_NS);
		wait_for_completion(&tx->turn);
		return;
	}
	j->committing = true;
	spin_unlock(&j->tx_lock);
	for (;;) {
		vsmfs_jtx_commit(j, cur);
		spin_lock(&j->tx_lock);
		list_del(&cur->node);
		WRITE_ONCE(j->ckpt, cur->end);
		/* Release: a drain that sees the ticket sees @ckpt too. */
		smp_store_release(&j->ticket_done, cur->ticket + 1);
		/* @cur may leave (its stack) once completed: not used after. */
		if (cur != tx)
			complete(&cur->turn);
		cur = list_first_entry_or_null(&j->txs, struct vsmfs_jtx, node);
		if (!cur || !cur->ready) {
			j->committing = false;
			empty = !cur;
			spin_unlock(&j->tx_lock);
			break;
		}
		spin_unlock(&j->tx_lock);
	}
	if (empty && wq_has_sleeper(&j->order_wq))
		wake_up_all(&j->order_wq);
}

/* Steps 4-6 of a commit, with or without the lock. */
static void vsmfs_jtx_end(struct vsmfs_journal *j, struct vsmfs_jtx *tx)
{
	struct super_block *sb = j->sbi->s_sb;
	u32 i;

	/*
	 * 4: the journal blocks left from step 3, from their frozen copies:
	 * their headers belong to this commit until it is committed, and a
	 * delta's old version was committed before it was placed here.
	 */
	for (i = 0; i < tx->ncopy; i++) {
		struct vsmfs_jcopy *c = &tx->copy[i];
		struct vsmfs_mblk *mb = c->mb;
		bool wake = false;

		/*
		 * Held while the block is written: a task about to change it
		 * copies it first, or finds it written and m_jc cleared.
		 */
		spin_lock(&mb->m_jlock);
		if (!c->src) {
			const unsigned long *resv = mb->m_resv;
			const u64 *mask = c->mask_ok ? c->mask : NULL;
			const void *src = mb->m_data;

			WARN_ON_ONCE(mb->m_jc != c);
			if (c->home_write) {
				vsmfs_jwrite_home(j, mb->m_blk, src, c->wmask_ok ? c->wmask : NULL);
			} else {
				if (resv && !(c->delta && mask) && !WARN_ON_ONCE(!tx->view)) {
					src = vsmfs_mblk_commit_view(mb, tx->view);
					resv = NULL;
				}
				vsmfs_jwrite_block(j, tx, mb->m_blk, c->dst, src, c->delta, mask,
						   resv);
			}
			/*
			 * Read before a task that sees NULL without the lock
			 * changes it (vsmfs_mblk_freeze(): a control
			 * dependency orders its stores after that load).
			 */
			smp_store_release(&mb->m_jc, NULL);
			wake = mb->m_jwait;
			mb->m_jwait = false;
		}
		spin_unlock(&mb->m_jlock);
		if (c->src) {
			if (c->home_write)
				vsmfs_jwrite_home(j, mb->m_blk, c->src,
						  c->wmask_ok ? c->wmask : NULL);
			else
				vsmfs_jwrite_block(j, tx, mb->m_blk, c->dst, c->src, c->delta,
						   c->mask_ok ? c->mask : NULL, NULL);
			kfree(c->src);
		}
		if (wake) {
			/* The store of m_jc before the waiter's queue is read. */
			smp_mb();
			wake_up_var(&mb->m_jc);
		}
	}
	/*
	 * Data (written by the caller), journal blocks, headers durable: the
	 * fence is on this CPU, where they were flushed, or where the task
	 * flushed them before it moved here (vsmfs_journal_commit_trans()). The
	 * negative control of the ordering checker (pmlog.c) makes it on
	 * another CPU instead, which orders none of them.
	 */
	if (unlikely(vsmfs_pmlog_remote_fence()))
		vsmfs_pmlog_fence_elsewhere();
	else
		vsmfs_fence();
	vsmfs_fault_stop(sb, VSMFS_FAULT_JCOMMIT_STOP, "journal stopped before a commit");
	vsmfs_fault_wait(VSMFS_FAULT_JTURN_WAIT);
	/* 5, 6: in ticket order. */
	vsmfs_jtx_finish(j, tx);
	trace_vsmfs_trans_commit(sb, tx->end - tx->start, tx->delta_blocks, tx->delta_bytes,
				 tx->full_bytes, tx->error, tx->t0);
}

/*
 * Keep @copy (@n notes, or NULL) for the next commit if the array kept is
 * smaller; free the other.
 */
static void vsmfs_jcopy_keep(struct vsmfs_journal *j, struct vsmfs_jcopy *copy, u32 n)
{
	if (copy) {
		spin_lock(&j->tx_lock);
		if (j->copy_max < n) {
			swap(j->copy, copy);
			j->copy_max = n;
		}
		spin_unlock(&j->tx_lock);
	}
	kvfree(copy);
}

/* What a commit allocated for itself. */
static void vsmfs_jtx_free(struct vsmfs_journal *j, struct vsmfs_jtx *tx)
{
	if (tx->post_state != tx->state_inl && tx->post_state != j->post_state)
		kvfree(tx->post_state);
	if (tx->view != j->view)
		kfree(tx->view);
	if (tx->copy == tx->copy_inl)
		return;
	/* Kept for the next commit, unless it is too large. */
	if (tx->copy_max <= VSMFS_JTX_COPY_KEEP)
		vsmfs_jcopy_keep(j, tx->copy, tx->copy_max);
	else
		kvfree(tx->copy);
}

/**
 * vsmfs_journal_commit_prepare() - make room for the notes of a commit
 * @sbi: the file system
 * @nblocks: blocks the commit is expected to hold
 *
 * Before a commit keeps every handle out to freeze its blocks: the array
 * of their notes it takes then (struct vsmfs_journal.copy) is made here,
 * with room for @nblocks and a quarter more, if the one kept is smaller.
 * Without one large enough, the commit allocates its own as before.
 *
 * Context: process context, no handle running in the task.
 */
void vsmfs_journal_commit_prepare(struct vsmfs_sb_info *sbi, u32 nblocks)
{
	struct vsmfs_journal *j = sbi->s_journal;
	struct vsmfs_jcopy *copy;
	unsigned int nofs;
	u32 n;

	if (!j || !sbi->s_jopts.parallel || j->writethrough || nblocks <= VSMFS_JTX_COPY_INLINE ||
	    READ_ONCE(j->copy_max) >= nblocks)
		return;
	n = nblocks + nblocks / 4;
	/* As the commit's own allocation: reclaim does not enter the file system. */
	nofs = memalloc_nofs_save();
	copy = kvmalloc_array(n, sizeof(*copy), GFP_KERNEL | __GFP_NOWARN);
	memalloc_nofs_restore(nofs);
	vsmfs_jcopy_keep(j, copy, n);
}

/**
 * vsmfs_journal_commit_trans() - write a transaction to the journal and end it
 * @t: the handle that commits the running transaction, with every block of
 *	it on @t->t_dirty and the undo copies dropped (vsmfs_trans_commit_all())
 * @tid: the number of the transaction
 *
 * Takes the masks of the dirty blocks (vsmfs_mblk_commit_masks(): the handles'
 * changes noted, the next transaction's to come; of frozen blocks, once
 * the next handles run, vsmfs_jcopy_masks()), places the blocks in the
 * journal and writes them, then
 * (journal_commit=parallel) waits for them to be durable and commits
 * without either lock, in the order of placement; see the steps at the top
 * of this file. With journal_commit=parallel (and memory for the notes of
 * the blocks) the blocks are frozen and s_trans_mutex is handed over before
 * the placement: the next handle changes DRAM while this
 * commit is placed under s_jplace_mutex, which it takes before releasing
 * s_trans_mutex, so placements keep the order of the transactions. The
 * transaction is durable when this returns, and so is every transaction
 * committed before it.
 *
 * Context: holds s_trans_mutex; releases it.
 * Return: 0, or the first error recorded in @t.
 */
int vsmfs_journal_commit_trans(struct vsmfs_trans *t, u64 tid)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	struct vsmfs_journal *j = sbi->s_journal;
	struct vsmfs_jtx tx = {
		.t0 = vsmfs_trace_start(vsmfs_trans_commit),
		.error = t->t_error,
	};
	bool parallel = sbi->s_jopts.parallel && !j->writethrough;
	/* Only a commit that ends without s_trans_mutex can be overtaken. */
	bool freed = t->t_freed && parallel;
	bool vsp = t->t_vsp, own;

	if (!t->t_nblocks)
		goto unlock;
	/* Its freed pages are not taken before it commits (alloc.c). */
	if (freed)
		atomic_inc(&sbi->s_freeing);
	/*
	 * Freezing copies nothing: the next handle, or a shared handle waiting
	 * for s_handles_sem, may change DRAM while this commit is placed.
	 */
	if (parallel)
		vsmfs_jtx_freeze(t, &tx, tid);
	if (!tx.frozen)
		vsmfs_jtx_masks(t, tid);
	if (!mutex_trylock(&sbi->s_jplace_mutex)) {
		vsmfs_stat_inc(sbi, journal_place_waits);
		mutex_lock(&sbi->s_jplace_mutex);
	}
	if (tx.frozen) {
		/* The next handle may change DRAM from here on. */
		sbi->s_jclient->release(t);
		sbi->s_jclient->unlock(t);
		vsmfs_stat_inc(sbi, journal_pipelined);
		t = NULL;
		vsmfs_jtx_masks_late(&tx);
	}
	own = vsmfs_jtx_place(j, t, &tx);
	if (t)
		sbi->s_jclient->release(t);
	if (own && parallel) {
		mutex_unlock(&sbi->s_jplace_mutex);
		if (t)
			sbi->s_jclient->unlock(t);
		/*
		 * The journal is reached through the device's own mapping, so
		 * the task may move to another CPU now: the switch orders the
		 * stores and flushes made here before the fence made there.
		 */
		vsmfs_trans_cpu_end(vsp);
		vsmfs_jtx_end(j, &tx);
		sbi->s_jclient->freed(sbi, freed);
		vsmfs_jtx_free(j, &tx);
		return tx.error;
	}
	vsmfs_jtx_end(j, &tx);
	sbi->s_jclient->freed(sbi, freed);
	vsmfs_jtx_free(j, &tx);
	if (j->writethrough)
		vsmfs_jcheckpoint(j);
	mutex_unlock(&sbi->s_jplace_mutex);
	if (!t) {
		vsmfs_trans_cpu_end(vsp);
		return tx.error;
	}
unlock:
	sbi->s_jclient->unlock(t);
	vsmfs_trans_cpu_end(vsp);
	return tx.error;
}
