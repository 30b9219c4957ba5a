// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs fast commits: an fsync (and O_SYNC, O_DSYNC, the NFS
 * commit_metadata hook) whose inode changed in the running transaction
 * only in ways a fast record describes appends one record of the new
 * values to a fast-commit area of the journal (jfast.c) and returns,
 * without closing or waiting for the transaction.
 *
 * What a record describes: the words of the inode's slot that shared
 * handles changed in the transaction (m_cmask of the slot's block: times,
 * size, the entries of runs an append grew, the mode and owners a change
 * of attributes without a truncation or an ACL stored) and the page table
 * entries they changed (the swaps of copy-on-write overwrites, both
 * halves, and unwritten marks cleared), as they are now, and the bits of
 * the pages an append took from a reservation (which the commit would
 * set); for an append that moved a small file's run to the pages it took
 * (vsmfs_append_move()), the entries of both runs and the bits of the old
 * run, which the commit would clear; for an inode created in the
 * transaction beside other handles, in a block its directory had, also its
 * i-number's bit, the words of its entry and those of the directory's slot
 * the transaction changed: the directory's part of the record
 * (trans_fc.c); for a file renamed in its directory beside other handles,
 * to a name not in use, in one block the directory had, the words of both
 * entries so, and for a link the words of the new entry. An unlink in the
 * directory just before such a create, rename or link, of a file it left
 * with no links, rides along in the directory's part: the words of the
 * removed entry, and the unlinked inode's part, the words of its slot as
 * the unlink left them (vsmfs_trans_fc_unlink()). Every handle that
 * changes an inode notes it (trans_fc.c), and a handle of any other kind
 * (allocation, index, directory blocks added, other unlinks, renames over
 * a file or into another directory, xattrs) makes the inode's changes ones
 * no record describes until the transaction commits: its fsync commits it, as
 * without fast commits. So does a slot moved by aggregation, which notes
 * no inode: the inode map (vsmfs_fc_map_kept()).
 *
 * Ordering rules. A record depends only on the last durable commit and on
 * the earlier records of its inode and of its directory in the same
 * transaction:
 *   - it is written only when every transaction before the running one
 *     has finished (none in flight), so it belongs to the commit after the
 *     last durable one (vsmfs_journal_fc_count()) and recovery stores its
 *     words over what that commit left;
 *   - the slots it names (the inode's, a create's directory's) are those
 *     that commit's inode map gives their i-numbers: none moved in the
 *     transaction (vsmfs_fc_map_kept());
 *   - the pages it names were the inode's at that commit, scratch pages
 *     of its swaps, or pages it took from a reservation (free at that
 *     commit), which the transaction keeps reserved until it commits: no
 *     other inode's record of the transaction names them, so the inode
 *     parts of records of different inodes commute (bits set in a shared
 *     bitmap word too); those of one inode apply in the order of @r_seq,
 *     which eviction carries over (s_fc_seq), and its entries in the
 *     order the handles made them;
 *   - the bits a record clears are of pages the inode freed, which stay
 *     taken in memory until the transaction commits (its frees apply
 *     after the commit point): no record of the transaction sets them,
 *     but the inode's own earlier ones, if it took them in the
 *     transaction, which apply before (@r_seq, the order of its runs);
 *   - a create's (or rename's) record carries the directory's part only
 *     if records carry every earlier change of the directory in the
 *     transaction and none came after the create; it is made and written
 *     holding the directory's lock, which every change of the directory
 *     holds. So the
 *     directory's parts of a transaction are written in the order of its
 *     changes, each holding what the creates before it made of its slot
 *     and blocks, and apply in that order (the directory's own order,
 *     VSMFS_FC_KEY_DIR). A new or renamed file whose directory changed
 *     otherwise (a rename or create not fsync'd, an unlink, a new block,
 *     a directory itself new in the transaction) commits. A directory's
 *     fsync needs no record when records carry all its changes;
 *   - an unlink a record carries, the directory's change just before the
 *     create, applies with the directory's part; the unlinked inode's part
 *     holds the words of its slot the transaction changed, as the unlink
 *     left them, and applies after that inode's earlier records (an order
 *     taken from them as the unlink ended). Its later changes (the
 *     eviction that frees it) are in no record: its own fsync commits.
 *     After a crash before the commit it is in use with no links, an
 *     orphan, which the mount frees as it frees a file unlinked while
 *     open (vsmfs_orphan_cleanup()); what it held is free only after the
 *     commit, so no record of the transaction names it for another inode;
 *   - the new inode's slot and map entry were not changed in the
 *     transaction before the create (what the last commit left there is
 *     free), so its part names no word another inode needs;
 *   - the data the swaps made reachable was fenced by the handles that
 *     wrote it, before they ended; the record is fenced before fsync
 *     returns (jfast.c);
 *   - the words a record carries (of slots, of directory blocks) are
 *     noted in their block's m_fcmask only once it is durable
 *     (vsmfs_fc_carried()): a commit may write a block home in place
 *     before its commit point when every word the transaction changed in
 *     it is so carried (jcommit.c, "Home writes"), as a crash before that
 *     point replays the records;
 *   - the inode's lock, its invalidate_lock and s_handles_sem, held shared
 *     as by a shared handle (vsmfs_trans_hold()), keep its slot, its page
 *     table entries and the transaction as they are while the record is
 *     made: no write, fault, or commit runs beside it.
 * An fsync that cannot write a record (no room left in any area, a lost
 * transaction, an error that stopped commits, fast_commit=off) commits
 * instead, as does one that finds the directory locked by another task
 * (it does not wait for that lock, which its caller may hold: nfsd). One
 * that finds a commit in flight waits for it and tries again, a few times
 * before it commits (__vsmfs_sync_inode()).
 */
#include <linux/fs.h>
#include "vsmfs.h"
#include "mcache.h"
#include "journal.h"
#include "trans.h"
#include "ptable.h"
#include "inode.h"
#include "fault.h"

/*
 * Words of a block a record carries (of a slot, of a span of a directory
 * block): @mask from word @w0 on, noted in the block's m_fcmask once the
 * record is written (vsmfs_fc_carried()).
 */
struct vsmfs_fc_carry {
	struct vsmfs_mblk	*mb;
	unsigned int		w0;
	u64			mask;
};

/*
 * Why vsmfs_fc_commit() wrote no record where one may be written after a
 * wait, past the reasons counted (enum vsmfs_fc_why): a commit in flight,
 * of the transaction before the running one or of that of the inode's
 * last change. An fsync waits for it and tries again, up to VSMFS_FC_TRIES
 * times, then commits (fc_fallback_commit).
 */
#define VSMFS_FC_AGAIN		(VSMFS_FCB_FULL + 1)
#define VSMFS_FC_TRIES		4

/* Slot words, two spans of a create's directory part, two of an unlink's. */
#define VSMFS_FC_CARRY		6

/*
 * Store at @*pp the words of slot @di (in @mb) the running transaction
 * changed, lowest first, and move @*pp past them; note them in @c.
 * Return: their mask.
 */
static __always_inline u32 vsmfs_fc_slot_words(struct vsmfs_mblk *mb,
					       const struct vsmfs_dinode *di, __le64 **pp,
					       struct vsmfs_fc_carry *c)
{
	unsigned int w0 = ((const u8 *)di - mb->m_data) / 8;
	/* A slot's 32 words are half of a mask word. */
	u32 words = mb->m_cmask[w0 / 64] >> (w0 % 64), left = words;
	__le64 *p = *pp;

	for (; left; left &= left - 1)
		*p++ = ((const __le64 *)di)[__ffs(left)];
	*pp = p;
	c->mb = mb;
	c->w0 = w0;
	c->mask = words;
	return words;
}

/* Set @bits in mask word @m, beside records of other CPUs. */
static void vsmfs_fc_carry_bits(atomic_long_t *m, unsigned long bits)
{
	if ((atomic_long_read(m) & bits) != bits)
		atomic_long_or(bits, m);
}

/*
 * A record is written (fenced): the words @c are carried, for the commit
 * of the transaction (vsmfs_mblk_commit_masks()). Records of other CPUs may
 * note words of the same block at once: an atomic OR, only if a bit is
 * missing.
 */
static inline void vsmfs_fc_carried(const struct vsmfs_fc_carry *c)
{
	unsigned int k = c->w0 / 64, sh = c->w0 % 64;

	if (!c->mask)
		return;
	vsmfs_fc_carry_bits(&c->mb->m_fcmask[k], c->mask << sh);
	if (sh && c->mask >> (64 - sh))
		vsmfs_fc_carry_bits(&c->mb->m_fcmask[k + 1], c->mask >> (64 - sh));
}

/*
 * Span @span (as i_fc_span) of a directory block, its key and its words as
 * they are now, at @p; the words it carries in @c. Return: past its last
 * word, or an ERR_PTR.
 */
static __le64 *vsmfs_fc_build_span(struct vsmfs_sb_info *sbi, u64 span, __le64 *p,
				   u16 *nent, struct vsmfs_fc_carry *c)
{
	u64 at = span & VSMFS_FC_LPN_MASK, n = span >> 48;
	struct vsmfs_mblk *mb;

	c->mask = 0;
	if (!n)
		return p;
	mb = vsmfs_mblk_get(sbi, at >> 9);
	if (IS_ERR(mb))
		return ERR_CAST(mb);
	*p++ = cpu_to_le64(VSMFS_FC_KEY_SPAN | (n - 1) << 48 | at);
	vsmfs_copy_words(p, mb->m_data + at % 512 * 8, n);
	(*nent)++;
	c->mb = mb;
	c->w0 = at % 512;
	c->mask = n < 64 ? BIT_ULL(n) - 1 : ~0ULL;
	return p + n;
}

/*
 * The directory's part of the record of a create (trans_fc.c): the
 * i-number's bit (of the inode's part, before it), the words of the
 * directory's slot the transaction changed and the entry's words, from
 * @p on, with @end the end of the buffer; the words it carries in @c (the
 * slot's, then the spans'). With @g, an unlink the directory's part
 * carries too: its spans, and the unlinked inode's part after them.
 * Return: past the last word, or an ERR_PTR.
 */
static __le64 *vsmfs_fc_build_dir(struct inode *inode, struct inode *dir,
				  const struct vsmfs_fc_gone *g, __le64 *p, const __le64 *end,
				  u16 *nent, struct vsmfs_fc_carry *c)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	unsigned int i, need = 5 + VSMFS_INODE_SIZE / 8;
	__le64 *head;
	u64 slot;
	int ret;

	for (i = 0; i < ARRAY_SIZE(vi->i_fc_span); i++) {
		need += vi->i_fc_span[i] ? 1 + (vi->i_fc_span[i] >> 48) : 0;
		if (g)
			need += g->span[i] ? 1 + (g->span[i] >> 48) : 0;
	}
	if (g)
		need += 3 + hweight32(g->mask);
	if (end - p < need)
		return ERR_PTR(-E2BIG);
	ret = vsmfs_inode_slot(dir, &mb, &di, &slot);
	if (ret)
		return ERR_PTR(ret);
	*p++ = cpu_to_le64(VSMFS_FC_KEY_IBITMAP | inode->i_ino / 64);
	*p++ = cpu_to_le64(1ULL << inode->i_ino % 64);
	head = p;
	p += 3;
	head[0] = cpu_to_le64(VSMFS_FC_KEY_DIR | slot);
	head[1] = cpu_to_le64(VSMFS_I(dir)->i_fc_seq + 1);
	head[2] = cpu_to_le64(vsmfs_fc_slot_words(mb, di, &p, &c[0]));
	*nent += 2;
	for (i = 0; i < ARRAY_SIZE(vi->i_fc_span); i++) {
		p = vsmfs_fc_build_span(sbi, vi->i_fc_span[i], p, nent, &c[1 + i]);
		if (!IS_ERR(p))
			p = vsmfs_fc_build_span(sbi, g ? g->span[i] : 0, p, nent, &c[3 + i]);
		if (IS_ERR(p))
			return p;
	}
	if (!g)
		return p;
	/*
	 * The unlinked inode's words as the unlink left them: not noted as
	 * carried, its eviction changed them since.
	 */
	*p++ = cpu_to_le64(VSMFS_FC_KEY_GONE | g->slot);
	*p++ = cpu_to_le64(g->seq);
	*p++ = cpu_to_le64(g->mask);
	memcpy(p, g->words, hweight32(g->mask) * 8);
	(*nent)++;
	return p + hweight32(g->mask);
}

/*
 * Build the record of @inode's changes in the running transaction, for
 * commit number @count, into @buf (VSMFS_FC_REC_MAX bytes and 7 words),
 * with the create's directory @dir if it carries a create, and @g, an
 * unlink in it, if it carries that too; the words it carries in @carry
 * (the inode's slot's, the directory's, the spans'). Return: its length,
 * 0 if it carries nothing, -E2BIG if it would carry too much, or a
 * negative errno.
 */
static int vsmfs_fc_build(struct inode *inode, struct inode *dir,
			  const struct vsmfs_fc_gone *g, u64 count, u64 *buf,
			  struct vsmfs_fc_carry *carry)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct vsmfs_dfc_rec *r = (struct vsmfs_dfc_rec *)buf;
	__le64 *p = (__le64 *)(r + 1);
	u64 slot;
	struct vsmfs_dinode *di;
	struct vsmfs_mblk *mb;
	unsigned int i, npte = 0;
	u16 nent = 0;
	u32 words, len;
	int ret;

	ret = vsmfs_inode_slot(inode, &mb, &di, &slot);
	if (ret)
		return ret;
	words = vsmfs_fc_slot_words(mb, di, &p, &carry[0]);
	for (i = 0; i < vi->i_fc_nruns; i++) {
		u64 lpn = vi->i_fc_runs[i] & VSMFS_FC_LPN_MASK, n = vi->i_fc_runs[i] >> 48;

		if (lpn & (VSMFS_FC_RUN_CLAIM | VSMFS_FC_RUN_FREE)) {
			u64 key = lpn & VSMFS_FC_RUN_CLAIM ? VSMFS_FC_KEY_BITMAP :
				  VSMFS_FC_KEY_BCLEAR;

			/* Pages taken or freed: their bits, a pair per bitmap word. */
			for (lpn &= ~(VSMFS_FC_RUN_CLAIM | VSMFS_FC_RUN_FREE); n; nent++, p += 2) {
				u64 k = min(n, 64 - lpn % 64);

				if (nent == VSMFS_FC_MAX_ENTRIES)
					return -E2BIG;
				p[0] = cpu_to_le64(key | lpn / 64);
				p[1] = cpu_to_le64(GENMASK_ULL(lpn % 64 + k - 1, lpn % 64));
				lpn += k;
				n -= k;
			}
			continue;
		}
		if (npte + n > VSMFS_FC_MAX_PTES || nent + n > VSMFS_FC_MAX_ENTRIES)
			return -E2BIG;
		for (; n; n--, lpn++, npte++, nent++) {
			ret = vsmfs_pt_entry(sbi, lpn, &p[1]);
			if (ret)
				return ret;
			p[0] = cpu_to_le64(lpn);
			p += 2;
		}
	}
	if (dir) {
		p = vsmfs_fc_build_dir(inode, dir, g, p, (__le64 *)((u8 *)buf + VSMFS_FC_REC_MAX),
				       &nent, &carry[1]);
		if (IS_ERR(p))
			return PTR_ERR(p);
	}
	if (nent > VSMFS_FC_MAX_ENTRIES)
		return -E2BIG;
	if (!words && !nent)
		return 0;
	len = round_up((u8 *)p - (u8 *)buf, 64);
	/* The rest of the last line is among the 7 words after (@buf has room). */
	memset(p, 0, 7 * 8);
	r->r_len = cpu_to_le16(len);
	r->r_npte = cpu_to_le16(nent);
	r->r_count = cpu_to_le64(count);
	r->r_seq = cpu_to_le64(vi->i_fc_seq + 1);
	r->r_slot = cpu_to_le32(slot);
	r->r_words = cpu_to_le32(words);
	r->r_crc = cpu_to_le32(vsmfs_fc_crc(sbi, (u8 *)buf + 4, len - 4));
	return len;
}

/*
 * For a record that carries @inode's create or rename: its directory,
 * locked, if every earlier change of it in transaction @tid is carried by
 * records, or by them and this record (an unlink just before, noted in
 * @*gonep, vsmfs_trans_fc_unlink()), and none came after the create
 * (trans_fc.c), in @*dirp with a reference on its dentry in @*parentp,
 * and 0; else VSMFS_FCB_DIR, or VSMFS_FCB_BUSY if another task holds its
 * lock. The references dropped here are never the last (the caller's
 * file or nfsd holds the alias, which holds its parent): no eviction runs
 * inside the caller's handle.
 */
static int vsmfs_fc_lock_dir(struct inode *inode, u64 tid, struct dentry **parentp,
			     struct inode **dirp, const struct vsmfs_fc_gone **gonep)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode), *dvi;
	struct dentry *dentry = d_find_any_alias(inode), *parent;
	const struct vsmfs_fc_gone *g;
	struct inode *dir;

	if (!dentry)
		return VSMFS_FCB_DIR;
	parent = dget_parent(dentry);
	dput(dentry);
	dir = d_inode(parent);
	if (dir->i_ino != vi->i_fc_dir) {
		dput(parent);
		return VSMFS_FCB_DIR;
	}
	if (!inode_trylock(dir)) {
		dput(parent);
		return VSMFS_FCB_BUSY;
	}
	dvi = VSMFS_I(dir);
	g = dvi->i_fc_gone;
	if (g && (g->tid != tid || g->gen != vi->i_fc_dgen - 1 || dvi->i_fc_cov != g->gen - 1 ||
		  !vsmfs_fc_map_kept(VSMFS_SB(dir->i_sb), g->ino)))
		g = NULL;
	if (dvi->i_fc_tid != tid || dvi->i_fc_bad || dvi->i_fc_gen != vi->i_fc_dgen ||
	    dvi->i_fc_cov != vi->i_fc_dgen - (g ? 2 : 1) ||
	    !vsmfs_fc_map_kept(VSMFS_SB(dir->i_sb), dir->i_ino)) {
		inode_unlock(dir);
		dput(parent);
		return VSMFS_FCB_DIR;
	}
	*parentp = parent;
	*dirp = dir;
	*gonep = g;
	return 0;
}

/*
 * Make @inode's changes durable with a fast record. Return: 0 if they
 * are, why the running transaction must commit instead (VSMFS_FCB_*), a
 * negative errno, or VSMFS_FC_AGAIN if a commit in flight keeps the record
 * back: of the transaction before the running one, or of that of the
 * inode's last change, in @*prevp.
 */
static __always_inline int vsmfs_fc_commit(struct inode *inode, u64 *prevp)
{
	struct vsmfs_inode_info *vi = VSMFS_I(inode);
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	struct address_space *mapping = inode->i_mapping;
	/*
	 * Filled by vsmfs_fc_build() as far as it is written: not zeroed
	 * first. 7 words more than a record, for the zeros after its end.
	 */
	u64 buf[VSMFS_FC_REC_MAX / 8 + 7] __uninitialized;
	/* Set by vsmfs_fc_build() as far as it carries words: not zeroed first. */
	struct vsmfs_fc_carry carry[VSMFS_FC_CARRY] __uninitialized;
	const struct vsmfs_fc_gone *gone = NULL;
	struct dentry *parent = NULL;
	struct inode *dir = NULL;
	u64 tid, count;
	unsigned int i;
	u8 why = READ_ONCE(vi->i_fc_bad);
	int ret = VSMFS_FCB_BUSY;

	/*
	 * Changes no record describes, in the transaction running now: they
	 * stay so until it commits (a hint read without the locks below: a
	 * transaction that moved on meanwhile is committed by the caller).
	 */
	if (why && READ_ONCE(vi->i_fc_tid) == READ_ONCE(sbi->s_run.tid))
		return why;
	/* A caller may hold the lock (NFS): it commits instead. */
	if (!inode_trylock(inode))
		return ret;
	if (!down_write_trylock(&mapping->invalidate_lock))
		goto out_inode;
	if (vsmfs_trans_hold(sbi))
		goto out_mapping;
	tid = sbi->s_run.tid;
	/* Its last change in a transaction being committed: wait for that. */
	if (vi->i_tid != tid) {
		*prevp = vi->i_tid;
		ret = VSMFS_FC_AGAIN;
		goto out_handle;
	}
	/* Unnoted. */
	ret = VSMFS_FCB_OP;
	if (vi->i_fc_tid != tid)
		goto out_handle;
	ret = vi->i_fc_bad;
	if (ret)
		goto out_handle;
	if (vi->i_fc_done == tid)
		goto out_handle;
	ret = VSMFS_FCB_MOVED;
	if (!vsmfs_fc_map_kept(sbi, inode->i_ino))
		goto out_handle;
	/*
	 * After an error stopped commits (errors=remount-ro), the commit path
	 * reports what is lost: no record claims it durable.
	 */
	ret = VSMFS_FCB_COMMIT;
	if (atomic64_read(&sbi->s_lost_tid) || READ_ONCE(sbi->s_error_ro))
		goto out_handle;
	/* The transaction before still being written: a record may follow it. */
	if (atomic64_read(&sbi->s_commit_tid) != (s64)tid - 1) {
		*prevp = tid - 1;
		ret = VSMFS_FC_AGAIN;
		goto out_handle;
	}
	/* A directory: durable if records carry every change of it. */
	if (S_ISDIR(inode->i_mode) && !vi->i_fc_dir) {
		ret = vi->i_fc_cov != vi->i_fc_gen ? VSMFS_FCB_DIR : 0;
		goto out_handle;
	}
	/* A new directory: its record carries its create, its first change. */
	ret = VSMFS_FCB_DIR;
	if (S_ISDIR(inode->i_mode) && vi->i_fc_gen != 1)
		goto out_handle;
	if (vi->i_fc_dir) {
		ret = vsmfs_fc_lock_dir(inode, tid, &parent, &dir, &gone);
		if (ret)
			goto out_handle;
	}
	/* The count the finished transactions left, after s_commit_tid. */
	smp_rmb();
	count = vsmfs_journal_fc_count(sbi);
	ret = vsmfs_fc_build(inode, dir, gone, count, buf, carry);
	if (ret > 0)
		ret = vsmfs_journal_fc_write(sbi, buf, ret, count);
	if (!ret) {
		for (i = 0; i < (dir ? ARRAY_SIZE(carry) : 1); i++)
			vsmfs_fc_carried(&carry[i]);
		vi->i_fc_seq++;
		vi->i_fc_nruns = 0;
		vi->i_fc_done = tid;
		if (dir) {
			vi->i_fc_dir = 0;
			/* A new directory: its create carried (vsmfs_fc_lock_dir()). */
			vi->i_fc_cov = vi->i_fc_gen;
			VSMFS_I(dir)->i_fc_seq++;
			VSMFS_I(dir)->i_fc_cov = VSMFS_I(dir)->i_fc_gen;
		}
		vsmfs_stat_inc(sbi, fc_records);
	} else if (ret == -ENOSPC || ret == -E2BIG) {
		ret = VSMFS_FCB_FULL;
	}
	if (dir)
		inode_unlock(dir);
out_handle:
	vsmfs_trans_unhold(sbi);
out_mapping:
	up_write(&mapping->invalidate_lock);
out_inode:
	inode_unlock(inode);
	if (parent)
		dput(parent);
	return ret;
}

static_assert(VSMFS_STAT_fc_fallback_full - VSMFS_STAT_fc_fallback_excl ==
	      VSMFS_FCB_FULL - VSMFS_FCB_EXCL);

/**
 * __vsmfs_sync_inode() - make every change of an inode durable
 * @inode: the inode, with changes not yet durable (vsmfs_sync_inode())
 * @cause: VSMFS_COMMIT_*, for the counters
 *
 * With a fast record when it can (see the top of the file), else by the
 * commit of the transaction that holds its last change
 * (__vsmfs_trans_sync_inode()). A record kept back by a commit in flight
 * is tried again once it has ended (fc_waits).
 *
 * Return: 0 or a negative errno.
 */
int __vsmfs_sync_inode(struct inode *inode, unsigned int cause)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);
	unsigned int tries = 0;
	u64 prev;
	int ret;

	if (vsmfs_fault(VSMFS_FAULT_FSYNC_NOCOMMIT))
		return 0;
	if (sbi->s_journal && sbi->s_journal->fc_n && READ_ONCE(sbi->s_jopts.fast)) {
		/*
		 * A commit in flight: waited for without a lock held, as a
		 * commit of the running transaction would wait for it first.
		 */
		while ((ret = vsmfs_fc_commit(inode, &prev)) == VSMFS_FC_AGAIN) {
			if (++tries == VSMFS_FC_TRIES) {
				ret = VSMFS_FCB_COMMIT;
				break;
			}
			vsmfs_stat_inc(sbi, fc_waits);
			/* Closed already (below the running one): waited for, not committed. */
			ret = vsmfs_trans_commit_tid(sbi, prev, cause);
			if (ret)
				return ret;
			/* Its last change committed: as a commit of it would return. */
			if (vsmfs_trans_synced(inode))
				return __vsmfs_trans_sync_inode(inode, cause);
		}
		if (ret <= 0)
			return ret;
		vsmfs_stat_inc(sbi, fc_fallbacks);
		/* fc_fallback_<why>: the counters follow the reasons' order. */
		if (!WARN_ON_ONCE(ret > VSMFS_FCB_FULL))
			this_cpu_inc(sbi->s_stats->v[VSMFS_STAT_fc_fallback_excl + ret -
						     VSMFS_FCB_EXCL]);
	}
	return __vsmfs_trans_sync_inode(inode, cause);
}

/* Raise @v to @val unless it is above already. */
static void vsmfs_fc_max(atomic64_t *v, s64 val)
{
	s64 old = atomic64_read(v);

	while (val > old) {
		s64 cur = atomic64_cmpxchg(v, old, val);

		if (cur == old)
			break;
		old = cur;
	}
}

/**
 * vsmfs_fc_evict() - what an evicted inode leaves to its next in-core inode
 * @inode: the inode, evicted
 *
 * The next in-core inode of its slot numbers its records after this one's
 * (vsmfs_alloc_inode()). If it keeps its links and its last change is not
 * durable, the next in-core inode of any file takes that change's
 * transaction as its last (s_fc_evict_tid, __vsmfs_iget()): its fsync
 * commits that transaction, as the notes of this one's changes are lost.
 */
void vsmfs_fc_evict(struct inode *inode)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(inode->i_sb);

	vsmfs_fc_max(&sbi->s_fc_seq, VSMFS_I(inode)->i_fc_seq);
	if (inode->i_nlink && !vsmfs_trans_synced(inode))
		vsmfs_fc_max(&sbi->s_fc_evict_tid, READ_ONCE(VSMFS_I(inode)->i_tid));
}
