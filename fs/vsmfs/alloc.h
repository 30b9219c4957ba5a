/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the allocator share among themselves: the page bitmaps
 * and their search (alloc.c), reservations and the per-CPU page pools
 * (resv.c), i-numbers (ialloc.c). The rest of the module uses the calls
 * in vsmfs.h.
 */
#ifndef _VSMFS_ALLOC_H
#define _VSMFS_ALLOC_H

#include <linux/bitmap.h>
#include "vsmfs.h"
#include "mcache.h"

static inline struct vsmfs_mblk *vsmfs_lbitmap(struct vsmfs_sb_info *sbi, u64 lpn)
{
	return vsmfs_mblk_get(sbi, sbi->s_layout.lbitmap_start + lpn / BITS_PER_BLK);
}

/* Whether @count pages from @lpn all have frames. */
static inline bool vsmfs_framed(struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	return !sbi->s_noframe ||
	       find_next_bit(sbi->s_noframe, lpn + count, lpn) >= lpn + count;
}

/*
 * Of the bitmap word @in holding the bits of pages [@p, @p + BITS_PER_LONG)
 * (@p word-aligned), the free pages with frames below @last.
 */
static inline unsigned long vsmfs_free_framed(struct vsmfs_sb_info *sbi, unsigned long in,
					      u64 p, u64 last)
{
	unsigned long f = ~in;

	if (last - p < BITS_PER_LONG)
		f &= BIT(last - p) - 1;
	if (sbi->s_noframe)
		f &= ~sbi->s_noframe[p / BITS_PER_LONG];
	return f;
}

/*
 * The page bits of VSP @vsp changed: the small-run search looks at it
 * again (s_vsp_partly). Context: s_trans_mutex held.
 */
static inline void vsmfs_vsp_changed(struct vsmfs_sb_info *sbi, u64 vsp)
{
	__set_bit(vsp, sbi->s_vsp_partly);
}

/*
 * Note for the delta the 8-byte words of bitmap block @mb holding bits
 * [@off, @off + @count), changed without an undo copy to compare with.
 */
static inline void vsmfs_note_bits(struct vsmfs_mblk *mb, u64 off, u64 count)
{
	u64 w;

	for (w = off / 64; w <= (off + count - 1) / 64; w++)
		mb->m_cmask[w / 64] |= 1ULL << (w % 64);
}

/* alloc.c */
void vsmfs_wait_freed(struct vsmfs_sb_info *sbi);
int vsmfs_find_small(struct vsmfs_sb_info *sbi, u64 need, u64 most, u64 *lpn, u64 *got,
		     const unsigned long *skip);
/* @large of the allocators: a large file's piece at a GiB of the file. */
#define VSMFS_LARGE_GIB	2
int vsmfs_find_free(struct vsmfs_sb_info *sbi, u64 count, unsigned int large, u64 *lpn);

/* alloc.c, resv.c */
void vsmfs_lbits_clear(struct vsmfs_trans *t, u64 lpn, u64 count, bool dirty);
int vsmfs_resv_take(struct vsmfs_sb_info *sbi, u64 count, unsigned int large,
		    struct vsmfs_resv *r);
int vsmfs_resv_take_at(struct vsmfs_sb_info *sbi, u64 lpn, u64 count, struct vsmfs_resv *r);
int vsmfs_resv_claim(struct vsmfs_trans *t, const struct vsmfs_resv *r);
int vsmfs_whandle_claim(struct vsmfs_whandle *h, const struct vsmfs_resv *r);
int vsmfs_resv_begin_shared(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t, u32 credits,
			    struct vsmfs_resv *page);
void vsmfs_resv_end_shared(struct vsmfs_sb_info *sbi, struct vsmfs_trans *t,
			   struct vsmfs_resv *page);
struct vsmfs_mblk *vsmfs_resv_new_block(struct vsmfs_trans *t);
void vsmfs_resv_end(struct vsmfs_trans *t, u64 lpn, u64 count, bool claimed);
void vsmfs_resv_release(struct vsmfs_sb_info *sbi, const struct vsmfs_resv *r);
bool vsmfs_resv_retire(struct vsmfs_sb_info *sbi, u64 lpn);
int vsmfs_trans_defer_resv(struct vsmfs_trans *t, const struct vsmfs_resv *r, bool claimed);
int vsmfs_pool_init(struct vsmfs_sb_info *sbi);
void vsmfs_pool_drain(struct vsmfs_sb_info *sbi);
u64 vsmfs_pool_count(struct vsmfs_sb_info *sbi);
void vsmfs_pool_forget(struct vsmfs_sb_info *sbi);

/*
 * Whether free space is short enough that page pools are emptied and not
 * refilled: under a sixteenth of the device.
 */
static inline bool vsmfs_pool_low(struct vsmfs_sb_info *sbi)
{
	return sbi->s_free_pages < (sbi->s_layout.data_pages >> 4);
}

int vsmfs_alloc_init(struct vsmfs_sb_info *sbi);
void vsmfs_alloc_destroy(struct vsmfs_sb_info *sbi);
void vsmfs_alloc_bits_restored(struct vsmfs_sb_info *sbi, u64 blk, unsigned int off,
			       unsigned int len);
int vsmfs_alloc_pages(struct vsmfs_trans *t, u64 count, unsigned int large, u64 *lpn);
int vsmfs_alloc_pages_at(struct vsmfs_trans *t, u64 lpn, u64 count);
int vsmfs_free_pages(struct vsmfs_trans *t, u64 lpn, u64 count);
int vsmfs_free_data_pages(struct vsmfs_trans *t, u64 lpn, u64 count);
int vsmfs_reserve_pages(struct vsmfs_trans *t, u64 count, u64 *lpn);
int vsmfs_unreserve_pages(struct vsmfs_trans *t, u64 lpn, u64 count);
int vsmfs_reserve_holes(struct vsmfs_trans *t, u64 count, u64 *lpn, u64 *got);
int vsmfs_alloc_holes(struct vsmfs_trans *t, u64 count, u64 *lpn);
int vsmfs_reserve_frames(struct vsmfs_trans *t, u64 count, u64 *lpn);
int vsmfs_alloc_holes_at(struct vsmfs_trans *t, u64 lpn, u64 count);

/* hole.c */
int vsmfs_fill_holes(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 count,
		     bool unwritten);
int vsmfs_punch_frames(struct vsmfs_trans *t, struct inode *inode, u64 lpn, u64 count,
		       u64 *next);

#endif /* _VSMFS_ALLOC_H */
