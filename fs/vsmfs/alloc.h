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

#define BITS_PER_BLK	(VSMFS_BLOCK_SIZE * 8ULL)

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
int vsmfs_find_free(struct vsmfs_sb_info *sbi, u64 count, bool large, u64 *lpn);

/* ialloc.c */
u64 vsmfs_ino_region(struct vsmfs_sb_info *sbi, unsigned int cpu);

#endif /* _VSMFS_ALLOC_H */
