// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs mapping layer: every logical data page is mapped into one
 * contiguous kernel virtual range, with 4 KiB PTEs pointing at the frame
 * the persistent page table names. A 2 MiB aligned run of 512 logical pages
 * is a virtual superpage: contiguous in virtual space, not necessarily in
 * physical space. All kernel access to file data goes through this range.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include "vsmfs.h"

/**
 * vsmfs_vsp_map() - map all logical pages from the persistent page table
 * @sbi: the file system, journal replayed
 *
 * Context: mount.
 * Return: 0 or a negative errno; -EFSCORRUPTED if the page table does not
 * name a valid frame for every logical page.
 */
int vsmfs_vsp_map(struct vsmfs_sb_info *sbi)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 n = l->data_pages, lpn;
	struct page **pages;
	unsigned long *seen;
	int ret = -EFSCORRUPTED;

	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	seen = bitmap_zalloc(n, GFP_KERNEL);
	if (!pages || !seen) {
		ret = -ENOMEM;
		goto out;
	}
	for (lpn = 0; lpn < n; lpn++) {
		const __le64 *pt = vsmfs_blk_ptr(sbi, l->ptable_start +
						  lpn / (VSMFS_BLOCK_SIZE / 8));
		u64 frame = le64_to_cpu(pt[lpn % (VSMFS_BLOCK_SIZE / 8)]) &
			    VSMFS_PTE_FRAME_MASK;

		if (frame >= n || test_and_set_bit(frame, seen)) {
			vsmfs_err(sbi->s_sb, "page table: logical page %llu maps %s frame %llu",
				  lpn, frame >= n ? "invalid" : "already used", frame);
			goto out;
		}
		pages[lpn] = pfn_to_page(sbi->s_frame_pfn0 + frame);
	}
	sbi->s_vsp_base = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	ret = sbi->s_vsp_base ? 0 : -ENOMEM;
	if (ret)
		vsmfs_err(sbi->s_sb, "cannot map %llu pages of kernel virtual space", n);
out:
	bitmap_free(seen);
	kvfree(pages);
	return ret;
}

/**
 * vsmfs_vsp_unmap() - tear the mapping down
 * @sbi: the file system
 *
 * Context: unmount, or a failed mount.
 */
void vsmfs_vsp_unmap(struct vsmfs_sb_info *sbi)
{
	if (sbi->s_vsp_base)
		vunmap(sbi->s_vsp_base);
	sbi->s_vsp_base = NULL;
}
