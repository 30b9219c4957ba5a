/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DRAM state of the journal, shared by the files of the journal layer
 * (journal.c, jcommit.c, jgc.c) and its recovery at mount (recovery.c);
 * nothing else looks inside it.
 */
#ifndef _VSMFS_JOURNAL_H
#define _VSMFS_JOURNAL_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <crypto/hash.h>
#include <asm/unaligned.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#endif
#include "vsmfs.h"
#include "jcore.h"
#include "pmem.h"
#include "fault.h"

/* State of one journal header besides its DRAM mirror (struct vsmfs_jh). */
struct vsmfs_jslot {
	u8		batched;	/* in the pending header batch */
	u8		delta;		/* this commit writes a delta into it */
};

/* Versions of one home block in the checkpoint (and commit) area. */
struct vsmfs_jent {
	struct hlist_node	node;		/* in the hash, or on ent_free */
	struct list_head	live;		/* on ent_live while hashed */
	u64			home;
	u32			latest;		/* position, or VSMFS_JNONE */
	u32			old;
};

/*
 * struct vsmfs_jckpt - one checkpoint, shared by the threads that copy
 * @end: headers [0, @end) are checkpointed
 * @cursor: next header not yet claimed
 * @active: threads still copying
 * @count: versions copied home
 * @gen: bumped to start a checkpoint (release), read by the threads (acquire)
 */
struct vsmfs_jckpt {
	u32		end;
	atomic_t	cursor;
	atomic_t	active;
	atomic_t	count;
	u64		gen;
};

/*
 * struct vsmfs_journal - DRAM state of the journal
 *
 * Under s_jplace_mutex, except @ckpt and @ticket_done, which each commit
 * advances as it ends (and which are read under the lock with READ_ONCE),
 * @txs and @copy under @tx_lock, and @cp, shared with the checkpoint threads.
 * With no commit in flight (@ticket_done == @ticket_next) @ckpt == @resv.
 */
struct vsmfs_journal {
	struct vsmfs_sb_info	*sbi;
	struct vsmfs_djsb __pm	*jsb;		/* on PM */
	struct vsmfs_djhdr __pm	*hdr;		/* header table on PM */
	struct vsmfs_djhdr __pm	*copies;	/* header-copy region on PM */
	u8 __pm			*blocks;	/* journal block 0 on PM */
	void			*view;		/* vsmfs_mblk_commit_view(), placement */
	u32			n;		/* journal blocks and headers */
	u32			ckpt;		/* end of the committed area */
	u32			resv;		/* end of the placed area */
	u32			holes;		/* invalid headers below ckpt */
	u32			ndata;		/* hashed home blocks in the data area */
	bool			writethrough;	/* checkpoint after every commit */
	u64			ticket_next;	/* ticket of the next placement */
	u64			ticket_done;	/* tickets below it have committed */
	wait_queue_head_t	order_wq;	/* for @txs empty and @cp.active */
	spinlock_t		tx_lock;
	struct list_head	txs;		/* commits in flight, by ticket */
	/* Notes of a commit's frozen blocks, @copy_max of them, for the next one. */
	struct vsmfs_jcopy	*copy;		/* under @tx_lock */
	u32			copy_max;
	bool			committing;	/* a task runs vsmfs_jtx_finish() */
	struct vsmfs_jh		*h;		/* mirror of every header */
	struct vsmfs_jslot	*slot;
	struct vsmfs_wlists	free;		/* free headers, least-worn first */
	u64			*wlink;		/* its storage */
	u32			*wlist_idx;
	struct hlist_head	*hash;
	unsigned int		hash_bits;
	struct vsmfs_jent	*ents;
	struct hlist_head	ent_free;
	struct list_head	ent_live;	/* the hashed entries */
	u32			*post;		/* headers to re-flag after commit */
	u32			npost;
	u32			batch_n;
	u32			batch[VSMFS_JH_PER_BLOCK];
	u64			*post_state;	/* their new h_state */
	/* Checkpoint threads. */
	struct vsmfs_jckpt	cp;
	wait_queue_head_t	cp_wq;		/* the threads wait here */
	struct task_struct	**threads;
	unsigned int		nthreads;
	struct delayed_work	ckpt_work;
	/*
	 * Number of the last durable commit: stored by the commit that
	 * makes it durable (ticket order), read by fast commits once the
	 * transactions before theirs have finished.
	 */
	u64			count;
	/* Fast-commit areas (jfast.c); @fc_n 0 without them. */
	u32			fc_n;
	u32			fc_bytes;	/* bytes of each */
	u8 __pm			*fc_base;	/* the first on PM */
	struct vsmfs_fc_area	*fc;
	struct crypto_shash	*fc_crc;	/* crc32c of records, or NULL */
};

/*
 * struct vsmfs_fc_area - DRAM state of one fast-commit area
 * @lock: taken by the task that appends to it
 * @count: commit number of the records in it
 * @off: bytes of them, from the area's start
 */
struct vsmfs_fc_area {
	spinlock_t	lock;		/* @count, @off and the area on PM */
	u64		count;
	u32		off;
} ____cacheline_aligned_in_smp;

/* The j_checkpoint value of positions @start and @end, with the commit number. */
static inline u64 vsmfs_jckpt_state(struct vsmfs_journal *j, u32 start, u32 end, u64 count)
{
	u64 state = (u64)start << 32 | end;

	return j->fc_n ? vsmfs_jckpt_set_count(state, count) : state;
}

static inline bool vsmfs_jvalid(struct vsmfs_journal *j, u32 pos)
{
	return j->h[pos].flags & VSMFS_JH_VALID;
}

/* Journal block @jb on PM. */
static inline void __pm *vsmfs_jblock(struct vsmfs_journal *j, u32 jb)
{
	return j->blocks + ((u64)jb << VSMFS_BLOCK_SHIFT);
}

/* Bytes written to the journal area: the total and one of its parts. */
#define vsmfs_jstat_bytes(sbi, part, n) do {				\
	struct vsmfs_sb_info *__sbi = (sbi);				\
	u64 __n = (n);							\
									\
	vsmfs_stat_add(__sbi, journal_bytes, __n);			\
	vsmfs_stat_add(__sbi, part, __n);				\
} while (0)

/* journal.c: placement */
struct vsmfs_jent *vsmfs_jfind(struct vsmfs_journal *j, u64 home);
struct vsmfs_jent *vsmfs_jent_new(struct vsmfs_journal *j, u64 home);
void vsmfs_jent_free(struct vsmfs_journal *j, struct vsmfs_jent *e);
void vsmfs_jrehash(struct vsmfs_journal *j, u32 pos);
void vsmfs_jh_write(struct vsmfs_journal *j, u32 pos);
void vsmfs_jh_write_state(struct vsmfs_journal *j, u32 pos);
void vsmfs_jsb_store_state(struct vsmfs_journal *j, u32 start, u32 end);
void vsmfs_jsb_store_commit(struct vsmfs_journal *j, u32 end);
void vsmfs_jbatch_flush(struct vsmfs_journal *j);
void vsmfs_jbatch_room(struct vsmfs_journal *j);
void vsmfs_jswap(struct vsmfs_journal *j, u32 a, u32 b);
void vsmfs_jplace(struct vsmfs_journal *j, u64 home, u32 p);

/* jcommit.c: journal and home writes */
u32 vsmfs_jwrite_diff(struct vsmfs_sb_info *sbi, void __pm *pm, const void *new);

/* jgc.c: GC, checkpoint, revocation */
void vsmfs_jcheckpoint(struct vsmfs_journal *j);
void vsmfs_jcount_itable(struct vsmfs_sb_info *sbi, u64 home);
void vsmfs_jreserve(struct vsmfs_journal *j, u32 k);
void vsmfs_jtimer_fn(struct work_struct *work);
void vsmfs_jthreads_start(struct vsmfs_journal *j, unsigned int total);

/* recovery.c */
int vsmfs_journal_init(struct vsmfs_sb_info *sbi);

/* jfast.c */
int vsmfs_jfc_init(struct vsmfs_journal *j, const struct vsmfs_jsb_state *js);
int vsmfs_jfc_replay(struct vsmfs_journal *j, bool read_only);
u64 vsmfs_journal_fc_count(struct vsmfs_sb_info *sbi);
u32 vsmfs_journal_fc_crc(struct vsmfs_sb_info *sbi, const void *p, u32 len);

#ifdef CONFIG_X86_64
/*
 * crc32c(@crc, @p, @len) with SSE4.2's crc32 instruction, 8 bytes at a
 * time: a fast record is a few lines, for which the transform's call, its
 * descriptor and the checks of a copy of any length cost more than the
 * sum.
 */
#define vsmfs_crc32q(c, b)						\
	asm("crc32q %1, %0" : "+r" (c) : "rm" (get_unaligned((const u64 *)(b))))

static __always_inline u32 vsmfs_crc32c_sse42(u32 crc, const void *p, u32 len)
{
	const u8 *b = p;
	unsigned long c = crc;

	for (; len >= 32; len -= 32, b += 32) {
		vsmfs_crc32q(c, b);
		vsmfs_crc32q(c, b + 8);
		vsmfs_crc32q(c, b + 16);
		vsmfs_crc32q(c, b + 24);
	}
	for (; len >= 8; len -= 8, b += 8)
		vsmfs_crc32q(c, b);
	for (; len; len--, b++)
		asm("crc32b %1, %k0" : "+r" (c) : "rm" (*b));
	return c;
}
#endif

/**
 * vsmfs_fc_crc() - crc32c of a fast-commit record's bytes
 * @sbi: the file system, with fast-commit areas
 * @p: the bytes
 * @len: their number
 *
 * What crc32c(~0U, @p, @len) returns (recovery and fsck check it so,
 * verify.c): with the crc32 instruction where the CPU has it, else
 * vsmfs_journal_fc_crc().
 *
 * Return: the sum.
 */
static inline u32 vsmfs_fc_crc(struct vsmfs_sb_info *sbi, const void *p, u32 len)
{
#ifdef CONFIG_X86_64
	if (static_cpu_has(X86_FEATURE_XMM4_2))
		return vsmfs_crc32c_sse42(~0U, p, len);
#endif
	return vsmfs_journal_fc_crc(sbi, p, len);
}

/**
 * vsmfs_jfc_append() - append a fast-commit record to one area
 * @j: the journal, with fast-commit areas
 * @a: the area
 * @rec: as vsmfs_journal_fc_write()
 * @len: as vsmfs_journal_fc_write()
 * @count: as vsmfs_journal_fc_write()
 *
 * Return: 0, or -ENOSPC if the area has no room for it (nothing written).
 */
static inline int vsmfs_jfc_append(struct vsmfs_journal *j, struct vsmfs_fc_area *a,
				   const void *rec, u32 len, u64 count)
{
	int ret = -ENOSPC;

	spin_lock(&a->lock);
	if (a->count != count) {
		a->count = count;
		a->off = 0;
	}
	if (a->off + len <= j->fc_bytes) {
		vsmfs_memcpy_nt_lines(j->fc_base + (u64)(a - j->fc) * j->fc_bytes + a->off, rec,
				      len);
		if (!vsmfs_fault(VSMFS_FAULT_FC_NOFENCE))
			vsmfs_fence();
		a->off += len;
		ret = 0;
	}
	spin_unlock(&a->lock);
	return ret;
}

int vsmfs_jfc_spill(struct vsmfs_journal *j, unsigned int first, const void *rec, u32 len,
		    u64 count);

/**
 * vsmfs_journal_fc_write() - append a fast-commit record
 * @sbi: the file system, with fast-commit areas
 * @rec: the record, its crc32c set, @len bytes, 8-byte aligned
 * @len: a multiple of 64
 * @count: its commit number (vsmfs_journal_fc_count())
 *
 * To the area of this CPU, or if it has no room to the next one that has
 * (vsmfs_jfc_spill()). Ordering at the top of jfast.c: the record is
 * durable on return.
 *
 * Return: 0, or -ENOSPC if no area has room for it (nothing written).
 */
static inline int vsmfs_journal_fc_write(struct vsmfs_sb_info *sbi, const void *rec, u32 len,
					 u64 count)
{
	struct vsmfs_journal *j = sbi->s_journal;
	unsigned int first = raw_smp_processor_id() % j->fc_n;
	int ret = vsmfs_jfc_append(j, &j->fc[first], rec, len, count);

	if (unlikely(ret))
		ret = vsmfs_jfc_spill(j, first, rec, len, count);
	if (!ret)
		vsmfs_jstat_bytes(sbi, journal_fc_bytes, len);
	return ret;
}

/**
 * vsmfs_journal_writethrough() - whether every commit is checkpointed
 * @sbi: the file system
 *
 * Context: s_trans_mutex held, or read beside shared handles (it is set
 * under that mutex, around orphan cleanup at mount only).
 * Return: true while code that reads home blocks directly runs.
 */
static inline bool vsmfs_journal_writethrough(struct vsmfs_sb_info *sbi)
{
	return READ_ONCE(sbi->s_journal->writethrough);
}

/* journal.c, jcommit.c, jgc.c */
void vsmfs_journal_destroy(struct vsmfs_sb_info *sbi);
void vsmfs_journal_commit_prepare(struct vsmfs_sb_info *sbi, u32 nblocks);
int vsmfs_journal_commit_trans(struct vsmfs_trans *t, u64 tid);
u32 vsmfs_journal_blocks(struct vsmfs_sb_info *sbi);
bool vsmfs_journal_has_data(struct vsmfs_sb_info *sbi);
bool vsmfs_journal_revoke(struct vsmfs_sb_info *sbi, u64 blk);
void vsmfs_journal_checkpoint(struct vsmfs_sb_info *sbi);
void vsmfs_journal_set_writethrough(struct vsmfs_sb_info *sbi, bool on);
void vsmfs_journal_timer_start(struct vsmfs_sb_info *sbi);
void vsmfs_journal_timer_stop(struct vsmfs_sb_info *sbi);
ssize_t vsmfs_journal_wear_show(struct vsmfs_sb_info *sbi, char *buf);

void vsmfs_journal_free(struct vsmfs_journal *j);

#endif /* _VSMFS_JOURNAL_H */
