// SPDX-License-Identifier: GPL-2.0
/*
 * The pure logic of the metadata journal (see jcore.h), built into the
 * module, the tools and tests/unit/test_jcore. The stores to PM and their
 * ordering stay with the callers (fs/vsmfs/journal.c describes them), but
 * for the words of a delta, stored here through vsmfs_pm_write() so that
 * the ordering checker sees each (pmem.h; a plain store in user space).
 */
#include <linux/sort.h>
#include "jcore.h"
#ifdef __KERNEL__
#include "pmem.h"
#else
#define vsmfs_pm_write(ptr, val)	WRITE_ONCE(*(ptr), (val))
#define vsmfs_pm_read(ptr)		READ_ONCE(*(ptr))
#endif

static bool vsmfs_jhome_ok(const struct vsmfs_layout *l, u64 home)
{
	return home > VSMFS_SB_BACKUP_BLOCK && home < l->blocks && home != l->sb_backup &&
	       (home < l->journal_start || home >= l->journal_start + l->journal_blocks);
}

/**
 * vsmfs_jh_decode() - decode and check one stored journal header
 * @d: the header as stored
 * @pos: its position (header number)
 * @n: journal blocks and headers
 * @used: whether @pos lies in the checkpoint area
 * @l: the file system layout, for the home block
 * @h: the decoded header
 *
 * A header of the checkpoint area must be in use, with known flags and,
 * if valid, a home block outside the superblocks and the journal; an
 * invalid one is normalised to VSMFS_JH_USED. Past the checkpoint area
 * only the number and the journal block matter, and the flags read as 0.
 * That no two headers map the same journal block is the caller's check.
 *
 * Return: NULL, or why the header is damaged.
 */
const char *vsmfs_jh_decode(const struct vsmfs_djhdr *d, u32 pos, u32 n, bool used,
			    const struct vsmfs_layout *l, struct vsmfs_jh *h)
{
	u64 state = le64_to_cpu(d->h_state), map = le64_to_cpu(d->h_map);
	u8 flags = state & VSMFS_JH_FLAGS;

	h->jb = map & VSMFS_JH_JB_MASK;
	h->home = map >> VSMFS_JH_HOME_SHIFT;
	h->wc = state >> VSMFS_JH_WC_SHIFT;
	h->flags = 0;
	if ((state >> VSMFS_JH_NUM_SHIFT & VSMFS_JH_NUM_MASK) != pos)
		return "wrong header number";
	if (h->jb >= n)
		return "journal block past the last";
	if (!used)
		return NULL;
	if (!(flags & VSMFS_JH_USED) ||
	    flags & ~(VSMFS_JH_USED | VSMFS_JH_VALID | VSMFS_JH_LATEST))
		return "bad flags in the checkpoint area";
	if (!(flags & VSMFS_JH_VALID)) {
		h->flags = VSMFS_JH_USED;
		return NULL;
	}
	if (!vsmfs_jhome_ok(l, h->home))
		return "bad home block";
	h->flags = flags;
	return NULL;
}

/**
 * vsmfs_jcopies_check() - check the header-copy region before a restore
 * @copies: the copy region
 * @count: copies in use (j_hcopy)
 * @n: journal headers
 * @bad: the index of the first bad copy
 *
 * Return: NULL, or why the copies cannot be restored.
 */
const char *vsmfs_jcopies_check(const struct vsmfs_djhdr *copies, u32 count, u32 n,
				u32 *bad)
{
	u32 i;

	if (count > VSMFS_JH_PER_BLOCK) {
		*bad = count;
		return "more header copies than the copy region holds";
	}
	for (i = 0; i < count; i++) {
		if (vsmfs_jh_num(&copies[i]) >= n) {
			*bad = i;
			return "header copy names no header";
		}
	}
	return NULL;
}

/**
 * vsmfs_jdelta() - write only the differing words of a block
 * @dst: the journal block holding the old version
 * @src: the new version
 * @lines: set to the 64-byte lines of @dst written (bit i: line i)
 *
 * Compares the block as 8-byte words and stores each word that differs;
 * the caller flushes the lines in @lines. A block is 64 lines.
 *
 * Return: bytes written.
 */
u32 vsmfs_jdelta(u64 __pm *dst, const u64 *src, u64 *lines)
{
	u32 l, w, words = 0;
	u64 mask = 0;

	static_assert(VSMFS_BLOCK_SIZE / 64 == 64);
	/*
	 * A line at a time: most lines are equal and need one test, of the
	 * eight words written out (no loop, nothing kept); the words of a
	 * line that differs are read again.
	 */
	for (l = 0; l < VSMFS_BLOCK_SIZE / 64; l++) {
		u64 __pm *d = dst + l * 8;
		const u64 *s = src + l * 8;

		if (!((vsmfs_pm_read(&d[0]) ^ s[0]) | (vsmfs_pm_read(&d[1]) ^ s[1]) |
		      (vsmfs_pm_read(&d[2]) ^ s[2]) | (vsmfs_pm_read(&d[3]) ^ s[3]) |
		      (vsmfs_pm_read(&d[4]) ^ s[4]) | (vsmfs_pm_read(&d[5]) ^ s[5]) |
		      (vsmfs_pm_read(&d[6]) ^ s[6]) | (vsmfs_pm_read(&d[7]) ^ s[7])))
			continue;
		for (w = 0; w < 8; w++) {
			if (vsmfs_pm_read(&d[w]) == s[w])
				continue;
			vsmfs_pm_write(&d[w], s[w]);
			words++;
		}
		mask |= 1ULL << l;
	}
	*lines = mask;
	return words * 8;
}

/**
 * vsmfs_jdiff() - the words in which two versions of a block differ
 * @a: one version, in DRAM
 * @b: the other, in DRAM
 * @mask: set to the words that differ (VSMFS_JMASK_WORDS words)
 */
void vsmfs_jdiff(const u64 *a, const u64 *b, u64 *mask)
{
	u32 i, w;

	for (i = 0; i < VSMFS_JMASK_WORDS; i++) {
		u64 m = 0;

		for (w = 0; w < 64; w++)
			m |= (u64)(a[i * 64 + w] != b[i * 64 + w]) << w;
		mask[i] = m;
	}
}

/**
 * vsmfs_jdelta_mask() - write the words of a block named by a mask
 * @dst: the journal block holding the old version
 * @src: the new version
 * @mask: the words in which the two may differ (vsmfs_jdiff())
 * @clear: NULL, or bits to leave out of @src (a page bitmap block's
 *	reserved pages): each word stored is @src's without them
 * @lines: set to the 64-byte lines of @dst written (bit i: line i)
 *
 * As vsmfs_jdelta(), without reading @dst: the caller knows from DRAM which
 * words the old version in @dst can differ in, and each of them is stored.
 *
 * Return: bytes written.
 */
u32 vsmfs_jdelta_mask(u64 __pm *dst, const u64 *src, const u64 *mask, const u64 *clear,
		      u64 *lines)
{
	u32 i, words = 0;
	u64 touched = 0;

	for (i = 0; i < VSMFS_JMASK_WORDS; i++) {
		u64 m = mask[i];

		while (m) {
			u32 w = i * 64 + __ffs64(m);

			vsmfs_pm_write(&dst[w], clear ? src[w] & ~clear[w] : src[w]);
			touched |= 1ULL << (w / 8);
			words++;
			m &= m - 1;
		}
	}
	*lines = touched;
	return words * 8;
}

/* ---- the wear-ordered lists of free headers ---- */

/* Put @pos first in list @l. */
static void vsmfs_wlink(struct vsmfs_wlists *w, u32 l, u32 pos)
{
	u32 first = w->head[l];

	w->link[pos] = (u64)VSMFS_JNONE << 32 | first;
	if (first != VSMFS_JNONE)
		w->link[first] = (u64)pos << 32 | (u32)w->link[first];
	w->head[l] = pos;
	w->idx[pos] = l;
	if (l < VSMFS_WLISTS)
		w->mask[l / 64] |= 1ULL << (l % 64);
}

/* Take @pos out of its list. */
static void vsmfs_wunlink(struct vsmfs_wlists *w, u32 pos)
{
	u32 l = w->idx[pos], prev = w->link[pos] >> 32, next = (u32)w->link[pos];

	if (prev != VSMFS_JNONE)
		w->link[prev] = (w->link[prev] & ~(u64)U32_MAX) | next;
	else
		w->head[l] = next;
	if (next != VSMFS_JNONE)
		w->link[next] = (u64)prev << 32 | (u32)w->link[next];
	w->idx[pos] = VSMFS_JNONE;
	if (l < VSMFS_WLISTS && w->head[l] == VSMFS_JNONE)
		w->mask[l / 64] &= ~(1ULL << (l % 64));
}

/* The list for write count @wc, given @base. */
static u32 vsmfs_wlist(u32 base, u32 wc)
{
	return wc - base < VSMFS_WLISTS ? wc - base : VSMFS_WOVER;
}

/*
 * Give list 0 the write count @base: every header goes to the overflow
 * list, then those worn less than @base + VSMFS_WLISTS times back to
 * theirs. Costs a pass over the free headers, once the least worn have
 * moved VSMFS_WLISTS / 2 counts or more away from where the lists were.
 */
static void vsmfs_wrebase(struct vsmfs_wlists *w, u32 base)
{
	u32 l, pos, next;

	for (l = 0; l < VSMFS_WLISTS; l++)
		while (w->head[l] != VSMFS_JNONE) {
			pos = w->head[l];
			vsmfs_wunlink(w, pos);
			vsmfs_wlink(w, VSMFS_WOVER, pos);
		}
	w->base = base;
	for (pos = w->head[VSMFS_WOVER]; pos != VSMFS_JNONE; pos = next) {
		next = (u32)w->link[pos];
		l = vsmfs_wlist(base, w->h[pos].wc);
		if (l != VSMFS_WOVER) {
			vsmfs_wunlink(w, pos);
			vsmfs_wlink(w, l, pos);
		}
	}
}

/*
 * The lists ran empty with headers left in the overflow list: move the
 * lists up to the least worn of them.
 */
static void vsmfs_wrefill(struct vsmfs_wlists *w)
{
	u32 least = U32_MAX, pos;

	for (pos = w->head[VSMFS_WOVER]; pos != VSMFS_JNONE; pos = (u32)w->link[pos])
		if (w->h[pos].wc < least)
			least = w->h[pos].wc;
	vsmfs_wrebase(w, least);
}

/**
 * vsmfs_wlists_init() - no free header yet
 * @w: the lists
 * @h: the decoded headers
 * @link: room for @n links
 * @idx: room for @n list numbers
 * @n: journal headers
 */
void vsmfs_wlists_init(struct vsmfs_wlists *w, const struct vsmfs_jh *h, u64 *link,
		       u32 *idx, u32 n)
{
	u32 i;

	w->h = h;
	w->link = link;
	w->idx = idx;
	w->size = 0;
	w->base = 0;
	for (i = 0; i <= VSMFS_WLISTS; i++)
		w->head[i] = VSMFS_JNONE;
	memset(w->mask, 0, sizeof(w->mask));
	for (i = 0; i < n; i++)
		idx[i] = VSMFS_JNONE;
}

/**
 * vsmfs_wlists_add() - a header becomes free
 * @w: the lists
 * @pos: the header; nothing happens if it is free already
 */
void vsmfs_wlists_add(struct vsmfs_wlists *w, u32 pos)
{
	u32 wc = w->h[pos].wc;

	if (w->idx[pos] != VSMFS_JNONE)
		return;
	if (!w->size)
		w->base = wc;
	else if (wc < w->base)
		/* Room below, so that a run of ever less worn costs few moves. */
		vsmfs_wrebase(w, wc > VSMFS_WLISTS / 2 ? wc - VSMFS_WLISTS / 2 : 0);
	vsmfs_wlink(w, vsmfs_wlist(w->base, wc), pos);
	w->size++;
}

/**
 * vsmfs_wlists_del() - a header leaves the free set
 * @w: the lists
 * @pos: the header; nothing happens if it is not free
 */
void vsmfs_wlists_del(struct vsmfs_wlists *w, u32 pos)
{
	if (w->idx[pos] == VSMFS_JNONE)
		return;
	vsmfs_wunlink(w, pos);
	w->size--;
	/* Lists run empty, headers left worn past them: sort those back. */
	if (w->head[VSMFS_WOVER] != VSMFS_JNONE && vsmfs_wlists_min(w) == VSMFS_JNONE)
		vsmfs_wrefill(w);
}

/**
 * vsmfs_wlists_update() - a free header's write count changed
 * @w: the lists
 * @pos: the header, whose count changed since it was added; nothing
 *	happens if it is not free
 */
void vsmfs_wlists_update(struct vsmfs_wlists *w, u32 pos)
{
	if (!vsmfs_wlists_has(w, pos))
		return;
	vsmfs_wlists_del(w, pos);
	vsmfs_wlists_add(w, pos);
}

/**
 * vsmfs_jgc_next() - the next exchange of a two-pointer compaction
 * @h: the headers of the checkpoint area
 * @first: in: 0 at the start; out: the first invalid header
 * @end: in: the checkpoint pointer at the start; out: one past the last
 *	valid header
 *
 * Garbage collection exchanges the first invalid header with the last
 * valid one until the valid headers are contiguous from 0: call this until
 * it returns false, exchanging @first and @end - 1 after each true return.
 * At the end @first == @end is the new checkpoint pointer. Each valid
 * header moves at most once, only from above the final pointer.
 *
 * Return: whether an exchange is due.
 */
bool vsmfs_jgc_next(const struct vsmfs_jh *h, u32 *first, u32 *end)
{
	while (*first < *end && (h[*first].flags & VSMFS_JH_VALID))
		(*first)++;
	while (*end > *first && !(h[*end - 1].flags & VSMFS_JH_VALID))
		(*end)--;
	return *first < *end;
}

/* ---- recovery ---- */

/* A header whose journal block holds a committed version. */
static bool vsmfs_jh_holds(const struct vsmfs_jh *h, u32 pos, u32 ckpt)
{
	return pos < ckpt && (h->flags & VSMFS_JH_VALID);
}

/**
 * vsmfs_jremap() - make the headers map every journal block once
 * @h: decoded headers, all @n checked by vsmfs_jh_decode()
 * @n: journal headers and blocks
 * @ckpt: the checkpoint pointer
 * @owner: set to the header naming each journal block (room for @n); on
 *	   failure, that of @bad's block is the committed version found first
 * @changed: set to the headers given another journal block (room for @n)
 * @nchanged: set to how many
 * @bad: the header at fault on failure
 *
 * A commit moves journal blocks between headers one header at a time
 * (journal.c, step 2): a crash between the two halves of such a swap
 * leaves one journal block named by two headers and another by none. At
 * most one of the two holds a committed version (the other is free, past
 * the checkpoint pointer, or a hole); the other header is given a block
 * no header names. Its write count is lost: the highest of all headers
 * is taken, so that wear-aware allocation uses that block last. Two
 * headers holding committed versions in one journal block cannot come
 * from a crash.
 *
 * Return: NULL, or why the journal cannot be recovered.
 */
const char *vsmfs_jremap(struct vsmfs_jh *h, u32 n, u32 ckpt, u32 *owner, u32 *changed,
			 u32 *nchanged, u32 *bad)
{
	u32 pos, jb = 0, wc = 0, pass;

	*nchanged = 0;
	for (pos = 0; pos < n; pos++) {
		owner[pos] = VSMFS_JNONE;
		wc = h[pos].wc > wc ? h[pos].wc : wc;
	}
	/* Committed versions first: each keeps its block. */
	for (pass = 0; pass < 2; pass++) {
		for (pos = 0; pos < n; pos++) {
			if (vsmfs_jh_holds(&h[pos], pos, ckpt) != !pass)
				continue;
			if (owner[h[pos].jb] == VSMFS_JNONE) {
				owner[h[pos].jb] = pos;
				continue;
			}
			if (!pass) {
				*bad = pos;
				return "journal block mapped twice";
			}
			changed[(*nchanged)++] = pos;
		}
	}
	/* As many blocks are named by no header as headers were left out. */
	for (pos = 0; pos < *nchanged; pos++) {
		while (owner[jb] != VSMFS_JNONE)
			jb++;
		h[changed[pos]].jb = jb;
		h[changed[pos]].wc = wc;
		owner[jb] = changed[pos];
	}
	return NULL;
}

static int vsmfs_jver_cmp(const void *a, const void *b)
{
	const struct vsmfs_jver *x = a, *y = b;

	if (x->home != y->home)
		return x->home < y->home ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/**
 * vsmfs_jrecover() - the recovery rules over the checkpoint area
 * @h: decoded headers, the first @ckpt checked by vsmfs_jh_decode()
 * @ckpt: the checkpoint pointer
 * @last: the first header of the last committed transaction
 * @ver: scratch room for @ckpt versions
 * @changed: set to the headers whose flags this changed (room for @ckpt)
 * @nchanged: set to how many
 * @bad: the header at fault on failure
 *
 * A crash between a commit and the re-flagging of the versions it made
 * old leaves two versions of a block flagged latest: the one inside the
 * last transaction wins, the other becomes an old version. More than two,
 * or two on the same side of @last, cannot come from a crash. A block
 * keeps at most one old version (the one that lost, else the first found);
 * further old versions, and old versions of a block without a latest one
 * (its revoke was cut short after its home block was written), are made
 * invalid. Afterwards the valid headers flagged latest are what recovery
 * writes home.
 *
 * Return: NULL, or why the journal cannot be recovered.
 */
const char *vsmfs_jrecover(struct vsmfs_jh *h, u32 ckpt, u32 last, struct vsmfs_jver *ver,
			   u32 *changed, u32 *nchanged, u32 *bad)
{
	u32 nver = 0, i, e, k;

	*nchanged = 0;
	for (i = 0; i < ckpt; i++) {
		if (!(h[i].flags & VSMFS_JH_VALID))
			continue;
		ver[nver].home = h[i].home;
		ver[nver++].pos = i;
	}
	sort(ver, nver, sizeof(*ver), vsmfs_jver_cmp, NULL);
	for (i = 0; i < nver; i = e) {
		u32 win = VSMFS_JNONE, loser = VSMFS_JNONE, keep;

		for (e = i; e < nver && ver[e].home == ver[i].home; e++) {
			u32 p = ver[e].pos;

			if (!(h[p].flags & VSMFS_JH_LATEST))
				continue;
			if (win == VSMFS_JNONE) {
				win = p;
				continue;
			}
			if (loser != VSMFS_JNONE || !(win >= last) == !(p >= last)) {
				*bad = p;
				return "latest versions the last transaction does not order";
			}
			loser = p >= last ? win : p;
			win = p >= last ? p : win;
		}
		if (loser != VSMFS_JNONE) {
			h[loser].flags &= ~VSMFS_JH_LATEST;
			changed[(*nchanged)++] = loser;
		}
		keep = loser;
		for (k = i; k < e; k++) {
			u32 p = ver[k].pos;

			if (p == win || p == keep)
				continue;
			if (keep == VSMFS_JNONE && win != VSMFS_JNONE) {
				keep = p;
				continue;
			}
			h[p].flags = VSMFS_JH_USED;
			changed[(*nchanged)++] = p;
		}
	}
	return NULL;
}
