// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs NVM metadata journal: placement of committed versions, the commit
 * pipeline, garbage collection, checkpoint, revocation and the checkpoint
 * timer. The DRAM copies of the metadata blocks are in mcache.c, the
 * handles and the running transaction in trans.c, mount-time recovery in
 * recovery.c.
 *
 * Handles change the DRAM copies one at a time (s_trans_mutex);
 * transactions place their journal blocks one at a time, in the same order
 * (s_jplace_mutex, taken before s_trans_mutex is released). A commit
 * freezes its blocks (no copy is taken: a task that changes one before the
 * commit has written it copies it for the commit first, as jbd2 keeps
 * frozen buffers) and hands s_trans_mutex over before its placement, so
 * that the next handle changes DRAM while this transaction is placed and
 * writes its journal blocks. Commits wait for their writes to be durable
 * and commit without either lock: each takes a ticket, and the commits
 * are made in ticket order by whichever task finds the next one ready (a
 * commit never waits for a sleeping task to wake). The journal holds the
 * committed versions of a block, and its home block on PM is brought up
 * to date only by a checkpoint (or by recovery at mount).
 *
 * The on-PM layout (journal superblock, 16-byte headers, the reserved
 * header-copy region, journal blocks; checkpoint, commit and free areas) is
 * described in vsmfs_format.h. In DRAM the journal keeps a mirror of every
 * header, a hash from home block to its old and latest version, and
 * lists of the free headers by write count. The pure parts (header
 * checks, deltas, the wear lists, the order of GC and the recovery rules)
 * are in jcore.c, shared with fsck.vsmfs, vsmfs-inspect and the unit
 * tests.
 *
 * Garbage collection moves valid versions between headers (swaps) in
 * batches through the header-copy region, see vsmfs_jbatch_flush():
 *   1. the new values of every header in the batch are written to the copy
 *      region, flushed, fence;
 *   2. j_hcopy = count, flushed, fence: from here recovery redoes the batch;
 *   3. the headers are written in place, flushed, fence;
 *   4. j_hcopy = 0, flushed, fence.
 *
 * Commit of a transaction of k blocks (vsmfs_journal_commit_trans()):
 *   0. file data the transaction makes reachable was written by its
 *      handles with non-temporal stores or flushed, and fenced by each
 *      handle that did not commit (trans.c), not yet by this one; with
 *      journal_commit=parallel (and at most VSMFS_JTX_COPY_MAX blocks)
 *      the blocks are frozen: each notes the commit (m_jc), and a task
 *      about to change one before step 4 has written it first copies it
 *      for the commit under the block's m_jlock (vsmfs_mblk_freeze());
 *      then s_jplace_mutex is taken and s_trans_mutex released; otherwise
 *      s_jplace_mutex is taken inside it. Steps 1-3 hold s_jplace_mutex;
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
 *      0 is written to its journal block (a full copy with non-temporal
 *      stores, or only the differing 8-byte words over the old version,
 *      flushed; which words, DRAM knows: vsmfs_trans_masks()).
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
 * Garbage collection (vsmfs_jgc()) compacts the checkpoint area with two
 * pointers, swapping the first invalid header with the last valid one
 * (batches as above), then moves the checkpoint pointer down with one
 * 8-byte store, flushed, fence. Checkpoint (vsmfs_jcheckpoint()) copies the
 * latest valid versions home with non-temporal stores, spread over the
 * checkpoint threads, which claim runs of headers by compare-and-swap and
 * each fence on their own CPU; once all have, it empties the journal with
 * one 8-byte store of j_checkpoint, flushed, fence. Both run only when no
 * commit is in flight.
 *
 * A metadata block in the data area (directory, index, xattr blocks) that is
 * freed may become file data: its versions are revoked at once
 * (vsmfs_journal_forget()), so that no later checkpoint or recovery writes
 * an old version over the data.
 *
 * A commit is synchronous for the task that makes it (the transaction is
 * durable when vsmfs_journal_commit_trans() returns); when a transaction
 * commits is decided in trans.c.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/blkdev.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/kthread.h>
#include <linux/wait_bit.h>
#include <linux/sched/mm.h>
#include "vsmfs.h"
#include "trace.h"
#include "pmem.h"
#include "fault.h"
#include "jcore.h"
#include "journal.h"

/* Re-flags a commit keeps in itself; more are allocated. */
#define VSMFS_JTX_POST_INLINE	8
/* Blocks of a commit placed after s_trans_mutex is released; more are not. */
#define VSMFS_JTX_COPY_MAX	64
/* Notes of frozen blocks a commit keeps in itself; more are allocated. */
#define VSMFS_JTX_COPY_INLINE	8

/*
 * struct vsmfs_jcopy - a block placed and written outside s_trans_mutex
 * @mb: its DRAM copy, which notes this (m_jc) until it is written
 * @home: its home block
 * @src: NULL while the DRAM block is as the transaction left it; else a
 *	 copy of it as it was, made by the first task that changed it
 *	 since (__vsmfs_mblk_freeze()); both under @mb->m_jlock
 * @dst: the journal block on PM, owned by the commit until it is committed
 * @delta: write only the words that differ from the old version in @dst
 * @mask: with @delta and @mask_ok, the words that may differ (m_dmask)
 * @mask_ok: @mask is known
 */
struct vsmfs_jcopy {
	struct vsmfs_mblk *mb;
	u64	home;
	void	*src;
	void __pm	*dst;
	bool	delta;
	bool	mask_ok;
	u64	mask[VSMFS_JMASK_WORDS];
};

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
	u32			ncopy;
	struct vsmfs_jcopy	*copy;		/* @copy_inl, or allocated */
	struct vsmfs_jcopy	copy_inl[VSMFS_JTX_COPY_INLINE];
};

/* Headers a checkpoint thread claims at a time. */
#define VSMFS_JCKPT_CHUNK	16
/* Fewer versions than this are checkpointed by the caller alone. */
#define VSMFS_JCKPT_PARALLEL_MIN	(4 * VSMFS_JCKPT_CHUNK)

/* Bytes written to the journal area: the total and one of its parts. */
#define vsmfs_jstat_bytes(sbi, part, n) do {				\
	struct vsmfs_sb_info *__sbi = (sbi);				\
	u64 __n = (n);							\
									\
	vsmfs_stat_add(__sbi, journal_bytes, __n);			\
	vsmfs_stat_add(__sbi, part, __n);				\
} while (0)

static void __pm *vsmfs_jblock(struct vsmfs_journal *j, u32 jb)
{
	return j->blocks + ((u64)jb << VSMFS_BLOCK_SHIFT);
}

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

static void vsmfs_jent_free(struct vsmfs_journal *j, struct vsmfs_jent *e)
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

static void vsmfs_jsb_store_state(struct vsmfs_journal *j, u32 start, u32 end)
{
	vsmfs_pm_write(&j->jsb->j_checkpoint, cpu_to_le64((u64)start << 32 | end));
	vsmfs_flush(&j->jsb->j_checkpoint, sizeof(__le64));
	vsmfs_jstat_bytes(j->sbi, journal_header_bytes, sizeof(__le64));
}

static void vsmfs_jsb_store_commit(struct vsmfs_journal *j, u32 end)
{
	vsmfs_pm_write(&j->jsb->j_commit, cpu_to_le64(end));
	vsmfs_flush(&j->jsb->j_commit, sizeof(__le64));
	vsmfs_jstat_bytes(j->sbi, journal_header_bytes, sizeof(__le64));
}

/*
 * Make the pending header batch durable as one atomic change, through the
 * header-copy region; the order of the stores is at the top of this file.
 */
static void vsmfs_jbatch_flush(struct vsmfs_journal *j)
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

/* Room for two more headers in the batch, flushing it if needed. */
static void vsmfs_jbatch_room(struct vsmfs_journal *j)
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

/* Exchange headers @a and @b and queue both for the next batch. */
static void vsmfs_jswap(struct vsmfs_journal *j, u32 a, u32 b)
{
	vsmfs_jexchange(j, a, b);
	vsmfs_jbatch_add(j, a);
	vsmfs_jbatch_add(j, b);
}

/* ---- GC and checkpoint ---- */

/*
 * Wait until every placed transaction has committed: GC, checkpoint and
 * revocation move or read versions that commits in flight still write.
 * Commits in flight never take the lock, so waiting under it is safe.
 */
static void vsmfs_jdrain(struct vsmfs_journal *j)
{
	lockdep_assert_held(&j->sbi->s_jplace_mutex);
	/* Acquire: pairs with the release in vsmfs_jtx_finish(), so @ckpt is seen. */
	if (smp_load_acquire(&j->ticket_done) != j->ticket_next) {
		vsmfs_stat_inc(j->sbi, journal_drain_waits);
		/* Acquire as above. */
		wait_event(j->order_wq, smp_load_acquire(&j->ticket_done) == j->ticket_next);
	}
	WARN_ON_ONCE(j->ckpt != j->resv);
}

/* Two-pointer compaction of the checkpoint area; see the top of the file. */
static void vsmfs_jgc(struct vsmfs_journal *j)
{
	u32 first = 0, end, old, pos;

	if (!j->holes)
		return;
	vsmfs_jdrain(j);
	end = j->ckpt;
	old = j->ckpt;
	while (vsmfs_jgc_next(j->h, &first, &end)) {
		vsmfs_jbatch_room(j);
		vsmfs_jswap(j, first, end - 1);
	}
	vsmfs_jbatch_flush(j);
	vsmfs_fault_stop(j->sbi->s_sb, VSMFS_FAULT_JGC_STOP,
			 "journal stopped in GC, headers moved, pointers not");
	/* The compacted headers are durable (fenced by the batch). */
	vsmfs_jsb_store_commit(j, first);
	vsmfs_jsb_store_state(j, first, first);
	vsmfs_fence();
	for (pos = first; pos < old; pos++) {
		j->h[pos].flags = 0;
		j->h[pos].home = 0;
		vsmfs_wlists_add(&j->free, pos);
	}
	j->ckpt = first;
	j->resv = first;
	j->holes = 0;
	trace_vsmfs_journal_gc(j->sbi->s_sb, old, first);
	vsmfs_stat_inc(j->sbi, journal_gc_runs);
	vsmfs_stat_add(j->sbi, journal_gc_reclaimed, old - first);
}

/*
 * An inode-table block is written home: count its inodes changed since it
 * last was (dirty) and the others (clean), the measure of how well hot
 * inodes are gathered.
 */
static void vsmfs_jcount_itable(struct vsmfs_sb_info *sbi, u64 home)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_mblk *mb;
	unsigned int dirty;

	if (home < l->itable_start || home >= l->itable_start + l->itable_blocks)
		return;
	mb = vsmfs_mblk_find(sbi, home);
	if (!mb)
		return;
	/* The next transaction may be setting bits (s_trans_mutex). */
	dirty = hweight_long(xchg(&mb->m_dirty_slots, 0));
	vsmfs_stat_inc(sbi, itable_home_blocks);
	vsmfs_stat_add(sbi, itable_home_dirty, dirty);
	vsmfs_stat_add(sbi, itable_home_clean, VSMFS_INODES_PER_BLOCK - dirty);
}

/*
 * Copy home the latest versions among headers [0, cp.end), claiming
 * VSMFS_JCKPT_CHUNK headers at a time by compare-and-swap of the cursor,
 * then fence this CPU's non-temporal stores.
 */
static void vsmfs_jckpt_copy(struct vsmfs_journal *j)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	u32 end = j->cp.end, count = 0, pos, stop;
	int c = atomic_read(&j->cp.cursor);

	for (;;) {
		do {
			if ((u32)c >= end)
				goto done;
		} while (!atomic_try_cmpxchg(&j->cp.cursor, &c, c + VSMFS_JCKPT_CHUNK));
		stop = min_t(u32, c + VSMFS_JCKPT_CHUNK, end);
		for (pos = c; pos < stop; pos++) {
			struct vsmfs_jh *h = &j->h[pos];

			if (!vsmfs_jh_is_latest(h))
				continue;
			vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, h->home),
					vsmfs_pm_view(vsmfs_jblock(j, h->jb)), VSMFS_BLOCK_SIZE);
			vsmfs_jcount_itable(sbi, h->home);
			count++;
		}
		c = atomic_read(&j->cp.cursor);
	}
done:
	/* This CPU's copies durable before the caller learns it is done. */
	vsmfs_fence();
	atomic_add(count, &j->cp.count);
}

static int vsmfs_jckpt_thread(void *arg)
{
	struct vsmfs_journal *j = arg;
	u64 seen = 0;

	for (;;) {
		wait_event_idle(j->cp_wq, kthread_should_stop() ||
				READ_ONCE(j->cp.gen) != seen);
		if (kthread_should_stop())
			return 0;
		/* Acquire: pairs with the release in vsmfs_jcheckpoint(). */
		seen = smp_load_acquire(&j->cp.gen);
		vsmfs_jckpt_copy(j);
		/* Full barrier: the copies and the count precede it. */
		if (atomic_dec_and_test(&j->cp.active))
			wake_up_all(&j->order_wq);
	}
}

/* Write the latest versions home and empty the journal. */
static void vsmfs_jcheckpoint(struct vsmfs_journal *j)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	struct vsmfs_jent *e, *tmp;
	u64 t0 = vsmfs_trace_start(vsmfs_checkpoint);
	unsigned int helpers = 0;
	u32 pos, count;

	if (!j->resv)
		return;
	vsmfs_jdrain(j);
	j->cp.end = j->ckpt;
	atomic_set(&j->cp.cursor, 0);
	atomic_set(&j->cp.count, 0);
	if (j->ckpt >= VSMFS_JCKPT_PARALLEL_MIN)
		helpers = j->nthreads;
	if (helpers) {
		atomic_set(&j->cp.active, helpers);
		/* Release: the threads see @cp and the headers set up before. */
		smp_store_release(&j->cp.gen, j->cp.gen + 1);
		wake_up_all(&j->cp_wq);
		vsmfs_stat_inc(sbi, journal_checkpoint_parallel);
	}
	vsmfs_jckpt_copy(j);
	if (helpers)
		wait_event(j->order_wq, !atomic_read(&j->cp.active));
	/* Home blocks durable (each thread fenced) before the journal is emptied. */
	smp_mb();
	count = atomic_read(&j->cp.count);
	vsmfs_fault_stop(sbi->s_sb, VSMFS_FAULT_JCKPT_STOP,
			 "journal stopped in a checkpoint, blocks home, journal full");
	vsmfs_jsb_store_commit(j, 0);
	vsmfs_jsb_store_state(j, 0, 0);
	vsmfs_fence();
	for (pos = 0; pos < j->ckpt; pos++) {
		j->h[pos].flags = 0;
		j->h[pos].home = 0;
		vsmfs_wlists_add(&j->free, pos);
	}
	/* The entries in use, not every bucket of the hash. */
	list_for_each_entry_safe(e, tmp, &j->ent_live, live)
		vsmfs_jent_free(j, e);
	j->ckpt = 0;
	j->resv = 0;
	j->holes = 0;
	trace_vsmfs_checkpoint(sbi->s_sb, count, t0);
	vsmfs_stat_inc(sbi, journal_checkpoints);
	vsmfs_stat_add(sbi, journal_checkpoint_blocks, count);
	vsmfs_stat_add(sbi, home_bytes, (u64)count * VSMFS_BLOCK_SIZE);
}

/* Make room for @k more versions: GC, then checkpoint, at the threshold. */
static void vsmfs_jreserve(struct vsmfs_journal *j, u32 k)
{
	const struct vsmfs_jopts *o = &j->sbi->s_jopts;
	u64 limit = (u64)j->n * o->threshold / 100;

	if (j->resv + k <= limit)
		return;
	if (o->gc)
		vsmfs_jgc(j);
	if (j->resv + k <= limit)
		return;
	vsmfs_jcheckpoint(j);
}

/**
 * vsmfs_journal_checkpoint() - write every committed block home
 * @sbi: the file system, mounted read-write
 *
 * Empties the journal: afterwards every home block is current. Used at
 * unmount, remount read-only and sync, and by the checkpoint timer.
 *
 * Context: process context; takes s_trans_mutex and s_jplace_mutex.
 */
void vsmfs_journal_checkpoint(struct vsmfs_sb_info *sbi)
{
	/* What the running transaction holds goes home too. */
	vsmfs_trans_sync(sbi, VSMFS_COMMIT_SYNCFS);
	mutex_lock(&sbi->s_trans_mutex);
	mutex_lock(&sbi->s_jplace_mutex);
	if (sbi->s_journal)
		vsmfs_jcheckpoint(sbi->s_journal);
	mutex_unlock(&sbi->s_jplace_mutex);
	mutex_unlock(&sbi->s_trans_mutex);
}

/**
 * vsmfs_journal_set_writethrough() - checkpoint after every commit
 * @sbi: the file system
 * @on: whether to
 *
 * For code that reads metadata home blocks on PM directly while it commits
 * transactions (orphan cleanup at mount).
 */
void vsmfs_journal_set_writethrough(struct vsmfs_sb_info *sbi, bool on)
{
	/* Home blocks hold every change made so far. */
	if (on)
		vsmfs_trans_sync(sbi, VSMFS_COMMIT_SYNCFS);
	mutex_lock(&sbi->s_trans_mutex);
	mutex_lock(&sbi->s_jplace_mutex);
	sbi->s_journal->writethrough = on;
	if (on)
		vsmfs_jcheckpoint(sbi->s_journal);
	mutex_unlock(&sbi->s_jplace_mutex);
	mutex_unlock(&sbi->s_trans_mutex);
}

static void vsmfs_jtimer_fn(struct work_struct *work)
{
	struct vsmfs_journal *j = container_of(to_delayed_work(work), struct vsmfs_journal,
					       ckpt_work);
	struct vsmfs_sb_info *sbi = j->sbi;
	unsigned int secs;

	mutex_lock(&sbi->s_trans_mutex);
	mutex_lock(&sbi->s_jplace_mutex);
	vsmfs_jcheckpoint(j);
	secs = sbi->s_jopts.checkpoint_secs;
	mutex_unlock(&sbi->s_jplace_mutex);
	mutex_unlock(&sbi->s_trans_mutex);
	if (secs)
		queue_delayed_work(system_long_wq, &j->ckpt_work, secs * HZ);
}

/**
 * vsmfs_journal_timer_start() - start the periodic checkpoint
 * @sbi: the file system, mounted read-write
 *
 * Does nothing when the checkpoint= option is 0.
 */
void vsmfs_journal_timer_start(struct vsmfs_sb_info *sbi)
{
	unsigned int secs = sbi->s_jopts.checkpoint_secs;

	if (secs)
		mod_delayed_work(system_long_wq, &sbi->s_journal->ckpt_work, secs * HZ);
}

/**
 * vsmfs_journal_timer_stop() - stop the periodic checkpoint
 * @sbi: the file system
 *
 * Context: process context, s_trans_mutex not held.
 */
void vsmfs_journal_timer_stop(struct vsmfs_sb_info *sbi)
{
	if (sbi->s_journal)
		cancel_delayed_work_sync(&sbi->s_journal->ckpt_work);
}

static void vsmfs_journal_free(struct vsmfs_journal *j)
{
	unsigned int i;

	if (!j)
		return;
	for (i = 0; i < j->nthreads; i++)
		kthread_stop(j->threads[i]);
	kfree(j->threads);
	kfree(j->view);
	kvfree(j->post_state);
	kvfree(j->post);
	kvfree(j->ents);
	kvfree(j->hash);
	kvfree(j->wlist_idx);
	kvfree(j->wlink);
	kvfree(j->slot);
	kvfree(j->h);
	kfree(j);
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

/*
 * Start the checkpoint threads besides the caller: @total - 1 of them.
 * Without them a checkpoint runs on fewer CPUs, so failing to start some
 * is not an error.
 */
static void vsmfs_jthreads_start(struct vsmfs_journal *j, unsigned int total)
{
	struct super_block *sb = j->sbi->s_sb;
	unsigned int i;

	if (total < 2)
		return;
	j->threads = kcalloc(total - 1, sizeof(*j->threads), GFP_KERNEL);
	if (!j->threads)
		goto partial;
	for (i = 0; i < total - 1; i++) {
		struct task_struct *task;

		task = kthread_run(vsmfs_jckpt_thread, j, "vsmfscp/%s/%u", sb->s_id,
				   i + 1);
		if (IS_ERR(task))
			goto partial;
		j->threads[i] = task;
		j->nthreads++;
	}
	return;
partial:
	vsmfs_warn(sb, "journal: %u of %u checkpoint threads started",
		   j->nthreads + 1, total);
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
	for (pos = ckpt; pos < n; pos++)
		vsmfs_wlists_add(&j->free, pos);
	j->resv = ckpt;
	vsmfs_jthreads_start(j, sbi->s_jopts.threads);
	return 0;
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

/* Revoke every version of @e: home block current, versions invalid. */
static void vsmfs_jrevoke(struct vsmfs_journal *j, struct vsmfs_jent *e)
{
	struct vsmfs_sb_info *sbi = j->sbi;
	u32 pos;

	/* Its versions may be in a commit in flight, not yet written. */
	vsmfs_jdrain(j);
	if (e->latest != VSMFS_JNONE) {
		vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, e->home),
				vsmfs_pm_view(vsmfs_jblock(j, j->h[e->latest].jb)),
				VSMFS_BLOCK_SIZE);
		vsmfs_stat_add(sbi, home_bytes, VSMFS_BLOCK_SIZE);
	}
	/* The home block is durable before its versions are invalidated. */
	vsmfs_fence();
	for (pos = 0; pos < 2; pos++) {
		u32 p = pos ? e->latest : e->old;

		if (p == VSMFS_JNONE)
			continue;
		j->h[p].flags &= ~(VSMFS_JH_VALID | VSMFS_JH_LATEST);
		vsmfs_jh_write_state(j, p);
		j->holes++;
	}
	vsmfs_fence();
	vsmfs_jent_free(j, e);
	vsmfs_stat_inc(sbi, journal_revoked);
}

/* Longest dirty list searched by walking it rather than the block cache. */
#define VSMFS_FORGET_WALK	16

/* Block @blk if it is dirty in @t, else NULL. */
static struct vsmfs_mblk *vsmfs_trans_find_dirty(struct vsmfs_trans *t, u64 blk)
{
	struct vsmfs_mblk *mb;

	if (t->t_nblocks > VSMFS_FORGET_WALK) {
		mb = vsmfs_mblk_find(t->t_sbi, blk);
		return mb && mb->m_is_dirty ? mb : NULL;
	}
	list_for_each_entry(mb, &t->t_dirty, m_dirty)
		if (mb->m_blk == blk)
			return mb;
	return NULL;
}

/**
 * vsmfs_journal_forget() - logical pages freed: they are metadata no more
 * @t: the transaction freeing them
 * @lpn: first logical page
 * @count: pages
 *
 * A freed page may become file data, written directly to PM. The journal
 * must then never write an old metadata version over it: each version of
 * the page's block is revoked now (its home block first brought up to
 * date, so the state before this transaction stays whole), and the block
 * leaves the transaction if it was dirty in it.
 *
 * The frames are read from the page table block (looked up once per block,
 * not per page), and a short dirty list is searched directly: freeing a
 * superpage costs no cache lookup per page.
 *
 * Context: inside the transaction; takes s_jplace_mutex (a commit placed
 * before may still hold it).
 */
void vsmfs_journal_forget(struct vsmfs_trans *t, u64 lpn, u64 count)
{
	struct vsmfs_sb_info *sbi = t->t_sbi;
	const struct vsmfs_layout *l = &sbi->s_layout;
	struct vsmfs_journal *j = sbi->s_journal;
	struct vsmfs_mblk *pt = NULL;
	u64 i;

	lockdep_assert_held(&sbi->s_trans_mutex);
	mutex_lock(&sbi->s_jplace_mutex);
	for (i = 0; i < count && (j->ndata || t->t_ndata); i++) {
		u64 p = lpn + i, frame, blk;
		struct vsmfs_mblk *mb;
		struct vsmfs_jent *e;

		if (!p || p >= l->lpages)
			continue;
		if (!pt || p % VSMFS_PTES_PER_BLOCK == 0) {
			pt = vsmfs_mblk_get(sbi, l->ptable_start + p / VSMFS_PTES_PER_BLOCK);
			if (IS_ERR(pt)) {
				pt = NULL;
				continue;
			}
		}
		frame = le64_to_cpu(((__le64 *)pt->m_data)[p % VSMFS_PTES_PER_BLOCK]) &
			VSMFS_PTE_FRAME_MASK;
		if (frame >= l->data_pages)
			continue;
		blk = l->data_start + frame;
		if (t->t_ndata) {
			mb = vsmfs_trans_find_dirty(t, blk);
			if (mb) {
				/*
				 * Dirtied by an earlier handle: an abort of
				 * this one puts it back (vsmfs_trans_abort()).
				 */
				if (mb->m_hnew)
					list_del_init(&mb->m_dirty);
				else
					list_move_tail(&mb->m_dirty, &t->t_forgot);
				mb->m_is_dirty = false;
				t->t_nblocks--;
				t->t_ndata--;
			}
		}
		e = j->ndata ? vsmfs_jfind(j, blk) : NULL;
		if (e)
			vsmfs_jrevoke(j, e);
	}
	mutex_unlock(&sbi->s_jplace_mutex);
}

/*
 * Write only the 8-byte words of @new that differ from the journal block
 * @pm, flushing each cache line touched: those in @mask when it is given
 * (known from DRAM, vsmfs_trans_masks()), without the bits of @clear if
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

/*
 * Write one version of a block into its journal block @dst: the words that
 * differ from the old version there (@delta; @mask, if known, names them,
 * and @clear, if given, the bits of them left out of @src), or the whole
 * block with non-temporal stores; flushed, not fenced.
 */
static void vsmfs_jwrite_block(struct vsmfs_journal *j, struct vsmfs_jtx *tx, void __pm *dst,
			       const void *src, bool delta, const u64 *mask,
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
		vsmfs_memcpy_nt(dst, src, VSMFS_BLOCK_SIZE);
		vsmfs_jstat_bytes(sbi, journal_full_bytes, VSMFS_BLOCK_SIZE);
		vsmfs_stat_inc(sbi, journal_full_blocks);
		tx->full_bytes += VSMFS_BLOCK_SIZE;
	}
}

/* Choose a header for block @home at position @p (step 2 of a commit). */
static void vsmfs_jplace(struct vsmfs_journal *j, u64 home, u32 p)
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

/*
 * Freeze @t for a commit placed after s_trans_mutex is released: each
 * dirty block is noted in @tx with its delta mask, and notes @tx (m_jc),
 * so that neither the placement nor the journal writes read @t, and a task
 * that changes a block before this commit has written it first gives the
 * commit a copy of it (__vsmfs_mblk_freeze()). No block is copied here.
 * Sets @tx->frozen, unless the transaction is too large, or memory for the
 * notes of a larger one than @tx holds is short.
 */
static void vsmfs_jtx_freeze(struct vsmfs_trans *t, struct vsmfs_jtx *tx)
{
	struct vsmfs_mblk *mb;

	lockdep_assert_held(&t->t_sbi->s_trans_mutex);
	lockdep_assert_held_write(&t->t_sbi->s_handles_sem);
	if (t->t_nblocks > VSMFS_JTX_COPY_MAX)
		return;
	tx->copy = tx->copy_inl;
	if (t->t_nblocks > VSMFS_JTX_COPY_INLINE) {
		tx->copy = kmalloc_array(t->t_nblocks, sizeof(*tx->copy), GFP_NOFS | __GFP_NOWARN);
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
		c->mask_ok = mb->m_dmask_ok;
		if (c->mask_ok)
			memcpy(c->mask, mb->m_dmask, sizeof(c->mask));
		c->home = mb->m_blk;
		/* Seen by every later handle, which takes the locks held here. */
		WRITE_ONCE(mb->m_jc, c);
	}
	tx->frozen = true;
}

/**
 * __vsmfs_mblk_freeze() - copy a block for the commit that has still to write it
 * @sbi: the file system
 * @mb: the block, about to be changed, noted by a commit (m_jc) that may
 *	have written it meanwhile
 *
 * As jbd2 gives a committing transaction a frozen copy of a buffer that a
 * handle is about to change: the commit then writes the block as its
 * transaction left it, and the caller may change the DRAM block at once.
 * If no memory is left for the copy, this waits for the commit to write
 * the block, which needs neither s_trans_mutex nor s_handles_sem.
 *
 * Context: holds s_trans_mutex or s_handles_sem; may sleep.
 */
void __vsmfs_mblk_freeze(struct vsmfs_sb_info *sbi, struct vsmfs_mblk *mb)
{
	const void *view;
	void *buf = NULL;
	bool wait = false;

	if (!vsmfs_fault(VSMFS_FAULT_JCOPY_ALLOC))
		buf = kmalloc(VSMFS_BLOCK_SIZE, GFP_NOFS | __GFP_NOWARN);
	spin_lock(&mb->m_jlock);
	if (mb->m_jc && buf) {
		view = vsmfs_mblk_commit_view(mb, buf);
		if (view != buf)
			memcpy(buf, view, VSMFS_BLOCK_SIZE);
		mb->m_jc->src = buf;
		WRITE_ONCE(mb->m_jc, NULL);
		buf = NULL;
		vsmfs_stat_inc(sbi, journal_frozen_copies);
	} else if (mb->m_jc) {
		mb->m_jwait = true;
		wait = true;
	}
	spin_unlock(&mb->m_jlock);
	kfree(buf);
	if (wait)
		wait_var_event(&mb->m_jc, !READ_ONCE(mb->m_jc));
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
		for (i = 0; i < tx->ncopy; i++)
			vsmfs_jplace(j, tx->copy[i].home, p++);
	} else {
		list_for_each_entry(mb, &t->t_dirty, m_dirty)
			vsmfs_jplace(j, mb->m_blk, p++);
	}
	tx->end = p;
	/* 3: recovery discards what lies past the checkpoint area. */
	vsmfs_jsb_store_commit(j, tx->end);
	p = tx->start;
	if (tx->frozen) {
		bool view = false;

		for (i = 0; i < tx->ncopy; i++, p++) {
			struct vsmfs_jcopy *c = &tx->copy[i];

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
			vsmfs_jtx_header(j, p);
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
			vsmfs_jwrite_block(j, tx, vsmfs_jblock(j, j->h[p].jb),
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

	WARN_ON_ONCE(READ_ONCE(j->ckpt) != tx->start);
	vsmfs_pm_write(&j->jsb->j_checkpoint, cpu_to_le64((u64)tx->start << 32 | tx->end));
	vsmfs_pm_write(&j->jsb->j_sequence,
		       cpu_to_le64(le64_to_cpu(vsmfs_pm_read(&j->jsb->j_sequence)) + 1));
	vsmfs_persist(j->jsb, offsetofend(struct vsmfs_djsb, j_sequence));
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

/* The blocks of @t are no longer dirty in it. */
static void vsmfs_trans_release(struct vsmfs_trans *t)
{
	struct vsmfs_mblk *mb, *tmp;

	list_for_each_entry_safe(mb, tmp, &t->t_dirty, m_dirty) {
		list_del_init(&mb->m_dirty);
		mb->m_is_dirty = false;
	}
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
			if (resv && !(c->delta && mask) && !WARN_ON_ONCE(!tx->view)) {
				src = vsmfs_mblk_commit_view(mb, tx->view);
				resv = NULL;
			}
			vsmfs_jwrite_block(j, tx, c->dst, src, c->delta, mask, resv);
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
			vsmfs_jwrite_block(j, tx, c->dst, c->src, c->delta,
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
	/* 5, 6: in ticket order. */
	vsmfs_jtx_finish(j, tx);
	trace_vsmfs_trans_commit(sb, tx->end - tx->start, tx->delta_blocks, tx->delta_bytes,
				 tx->full_bytes, tx->error, tx->t0);
}

/* What a commit allocated for itself. */
static void vsmfs_jtx_free(struct vsmfs_journal *j, struct vsmfs_jtx *tx)
{
	if (tx->post_state != tx->state_inl && tx->post_state != j->post_state)
		kvfree(tx->post_state);
	if (tx->view != j->view)
		kfree(tx->view);
	if (tx->copy != tx->copy_inl)
		kfree(tx->copy);
}

/* A transaction that freed pages has committed: they may be taken. */
static void vsmfs_trans_freed(struct vsmfs_sb_info *sbi, bool freed)
{
	/* Full barrier: the commit's stores precede the count (alloc.c). */
	if (freed && atomic_dec_and_test(&sbi->s_freeing))
		wake_up_var(&sbi->s_freeing);
}

/**
 * vsmfs_journal_commit_trans() - write a transaction to the journal and end it
 * @t: the handle that commits the running transaction, with every block of
 *	it on @t->t_dirty, the delta masks computed and the undo copies
 *	dropped (vsmfs_trans_commit_all())
 *
 * Places the dirty blocks in the journal and writes them, then
 * (journal_commit=parallel) waits for them to be durable and commits
 * without either lock, in the order of placement; see the steps at the top
 * of this file. With journal_commit=parallel (at most VSMFS_JTX_COPY_MAX
 * blocks) the blocks are frozen and s_trans_mutex is handed over before
 * the placement: the next handle changes DRAM while this
 * commit is placed under s_jplace_mutex, which it takes before releasing
 * s_trans_mutex, so placements keep the order of the transactions. The
 * transaction is durable when this returns, and so is every transaction
 * committed before it.
 *
 * Context: holds s_trans_mutex; releases it.
 * Return: 0, or the first error recorded in @t.
 */
int vsmfs_journal_commit_trans(struct vsmfs_trans *t)
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
		vsmfs_jtx_freeze(t, &tx);
	if (!mutex_trylock(&sbi->s_jplace_mutex)) {
		vsmfs_stat_inc(sbi, journal_place_waits);
		mutex_lock(&sbi->s_jplace_mutex);
	}
	if (tx.frozen) {
		/* The next handle may change DRAM from here on. */
		vsmfs_trans_release(t);
		vsmfs_trans_unlock(t);
		vsmfs_stat_inc(sbi, journal_pipelined);
		t = NULL;
	}
	own = vsmfs_jtx_place(j, t, &tx);
	if (t)
		vsmfs_trans_release(t);
	if (own && parallel) {
		mutex_unlock(&sbi->s_jplace_mutex);
		if (t)
			vsmfs_trans_unlock(t);
		/*
		 * The journal is reached through the device's own mapping, so
		 * the task may move to another CPU now: the switch orders the
		 * stores and flushes made here before the fence made there.
		 */
		vsmfs_trans_cpu_end(vsp);
		vsmfs_jtx_end(j, &tx);
		vsmfs_trans_freed(sbi, freed);
		vsmfs_jtx_free(j, &tx);
		return tx.error;
	}
	vsmfs_jtx_end(j, &tx);
	vsmfs_trans_freed(sbi, freed);
	vsmfs_jtx_free(j, &tx);
	if (j->writethrough)
		vsmfs_jcheckpoint(j);
	mutex_unlock(&sbi->s_jplace_mutex);
	if (!t) {
		vsmfs_trans_cpu_end(vsp);
		return tx.error;
	}
unlock:
	vsmfs_trans_unlock(t);
	vsmfs_trans_cpu_end(vsp);
	return tx.error;
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
 * vsmfs_journal_writethrough() - whether every commit is checkpointed
 * @sbi: the file system
 *
 * Context: s_trans_mutex held.
 * Return: true while code that reads home blocks directly runs.
 */
bool vsmfs_journal_writethrough(struct vsmfs_sb_info *sbi)
{
	return sbi->s_journal->writethrough;
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
