/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pure logic of the metadata journal, shared verbatim by the module,
 * fsck.vsmfs, vsmfs-inspect and the user-space unit tests: header decoding
 * and checks, byte-level deltas, the wear-ordered lists of free headers, the
 * order of garbage collection and the rules of recovery. Nothing here
 * touches PM ordering, allocates or locks: callers own the memory, the
 * flushes and the fences.
 */
#ifndef _VSMFS_JCORE_H
#define _VSMFS_JCORE_H

#include "verify.h"
#ifdef __KERNEL__
#include "pmem.h"
#else
#define __pm	/* PM is plain memory to the tools */
#endif

#define VSMFS_JNONE	U32_MAX

/**
 * struct vsmfs_jh - one journal header, decoded
 * @home: home block of the version the header holds
 * @jb: journal block the header maps
 * @wc: write count of that journal block
 * @flags: VSMFS_JH_* flags; 0 for a header past the checkpoint area
 */
struct vsmfs_jh {
	u64	home;
	u32	jb;
	u32	wc;
	u8	flags;
};

/* The two 8-byte words of header @pos holding @h, CPU order. */
static inline u64 vsmfs_jh_state(const struct vsmfs_jh *h, u32 pos)
{
	return h->flags | (u64)pos << VSMFS_JH_NUM_SHIFT | (u64)h->wc << VSMFS_JH_WC_SHIFT;
}

static inline u64 vsmfs_jh_map(const struct vsmfs_jh *h)
{
	return h->jb | h->home << VSMFS_JH_HOME_SHIFT;
}

/* Header number a stored header names. */
static inline u32 vsmfs_jh_num(const struct vsmfs_djhdr *d)
{
	return (u32)(le64_to_cpu(d->h_state) >> VSMFS_JH_NUM_SHIFT & VSMFS_JH_NUM_MASK);
}

static inline bool vsmfs_jh_is_latest(const struct vsmfs_jh *h)
{
	return (h->flags & (VSMFS_JH_VALID | VSMFS_JH_LATEST)) ==
	       (VSMFS_JH_VALID | VSMFS_JH_LATEST);
}

const char *vsmfs_jh_decode(const struct vsmfs_djhdr *d, u32 pos, u32 n, bool used,
			    const struct vsmfs_layout *l, struct vsmfs_jh *h);
const char *vsmfs_jcopies_check(const struct vsmfs_djhdr *copies, u32 count, u32 n,
				u32 *bad);

u32 vsmfs_jdelta(u64 __pm *dst, const u64 *src, u64 *lines);

/* A set of the 8-byte words of a block: bit w of mask[w / 64] is word w. */
#define VSMFS_JMASK_WORDS	(VSMFS_BLOCK_SIZE / 8 / 64)

void vsmfs_jdiff(const u64 *a, const u64 *b, u64 *mask);
u32 vsmfs_jdelta_mask(u64 __pm *dst, const u64 *src, const u64 *mask, const u64 *clear,
		      u64 *lines);

/*
 * A delta rewrites the journal block of the old version in place, so a
 * block changed by every commit would wear its two journal blocks alone.
 * With wear-aware allocation a delta goes into a journal block written at
 * most VSMFS_JWEAR_SLACK times more than the least-worn free one; past
 * that the new version is written whole into the least-worn block.
 */
#define VSMFS_JWEAR_SLACK	64

static inline bool vsmfs_jdelta_wear_ok(u32 wc, u32 least_free_wc)
{
	return wc <= least_free_wc + VSMFS_JWEAR_SLACK;
}

#ifndef __KERNEL__
#define __ffs64(x)	((u32)__builtin_ctzll(x))
#endif

/* Write counts the wear lists of struct vsmfs_wlists tell apart. */
#define VSMFS_WLISTS		256
/* The list of free headers worn past them. */
#define VSMFS_WOVER		VSMFS_WLISTS

/**
 * struct vsmfs_wlists - free headers, least-worn first
 * @h: the decoded headers, by write count
 * @link: per position, its neighbours in its list: the previous one (high
 *	32 bits) and the next (low 32 bits), VSMFS_JNONE at either end
 * @idx: per position, its list (VSMFS_WOVER for the overflow list), or
 *	VSMFS_JNONE if it is not free
 * @size: positions in the lists
 * @base: the write count of list 0
 * @head: the first position of each list, and of the overflow list
 * @mask: the lists that are not empty
 *
 * A bucket queue: list i holds the free headers written @base + i times,
 * the overflow list those written more, unordered. The least worn is the
 * first of the first list that is not empty, found in a few words; adding,
 * removing and moving a header costs a few stores, where a binary heap of
 * the journal's thousands of headers sifted through a dozen levels on each
 * commit. The lists move up when they run empty (the overflow list is then
 * sorted into them) and down when a header less worn than @base is added.
 * Headers as worn are taken newest first.
 *
 * The write count of a position must not change while it is in the
 * lists, unless vsmfs_wlists_update() is called for it next.
 */
struct vsmfs_wlists {
	const struct vsmfs_jh	*h;
	u64			*link;
	u32			*idx;
	u32			size;
	u32			base;
	u32			head[VSMFS_WLISTS + 1];
	u64			mask[VSMFS_WLISTS / 64];
};

void vsmfs_wlists_init(struct vsmfs_wlists *w, const struct vsmfs_jh *h, u64 *link,
		       u32 *idx, u32 n);
void vsmfs_wlists_add(struct vsmfs_wlists *w, u32 pos);
void vsmfs_wlists_del(struct vsmfs_wlists *w, u32 pos);
void vsmfs_wlists_update(struct vsmfs_wlists *w, u32 pos);

/* The least-worn free header, or VSMFS_JNONE. */
static inline u32 vsmfs_wlists_min(const struct vsmfs_wlists *w)
{
	unsigned int i;

	/* With every list empty, so is the overflow list. */
	for (i = 0; i < VSMFS_WLISTS / 64; i++)
		if (w->mask[i])
			return w->head[i * 64 + __ffs64(w->mask[i])];
	return VSMFS_JNONE;
}

static inline bool vsmfs_wlists_has(const struct vsmfs_wlists *w, u32 pos)
{
	return w->idx[pos] != VSMFS_JNONE;
}

bool vsmfs_jgc_next(const struct vsmfs_jh *h, u32 *first, u32 *end);

/**
 * struct vsmfs_jver - a valid version, for vsmfs_jrecover()
 * @home: its home block
 * @pos: its header
 */
struct vsmfs_jver {
	u64	home;
	u32	pos;
};

const char *vsmfs_jremap(struct vsmfs_jh *h, u32 n, u32 ckpt, u32 *owner, u32 *changed,
			 u32 *nchanged, u32 *bad);
const char *vsmfs_jrecover(struct vsmfs_jh *h, u32 ckpt, u32 last, struct vsmfs_jver *ver,
			   u32 *changed, u32 *nchanged, u32 *bad);

#endif /* _VSMFS_JCORE_H */
