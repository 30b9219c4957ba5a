// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs mapping layer: every logical data page is mapped into one
 * contiguous kernel virtual range, with 4 KiB PTEs pointing at the frame
 * the persistent page table names. A 2 MiB aligned run of 512 logical pages
 * is a virtual superpage: contiguous in virtual space, not necessarily in
 * physical space. Kernel access to file data goes through this range,
 * except accesses inside one page, which reach the page's frame through
 * the device mapping (vsmfs_lpn_frame_ptr()).
 *
 * Pages change frames by swapping: vsmfs_swap_one() exchanges the frames
 * behind two logical pages in the DRAM copy of the persistent page table
 * and in the live kernel PTEs; the journaled update around it (the blocks'
 * place in the caller's handle) is ptable.c's (vsmfs_swap_pages()). Swaps
 * are batched: the TLB entries of the whole batch are shot down once, by
 * vsmfs_swap_flush(), before any page of the batch is accessed through the
 * range again.
 *
 * Shootdown (tlb=lazy, the default): the swapping CPU bumps a generation
 * count (its own, a stripe; beyond 16 CPUs, its group's), and every CPU,
 * the swapping one too, drops its entries of the batch before it next uses
 * the range, when it finds a count changed (vsmfs_vsp_enter()): the pages
 * of each of a stripe's last VSMFS_TLB_LOG small batches are logged by
 * generation, and a CPU that is behind by such batches only drops their
 * pages, else all of its entries. Only a CPU with a use of the range open
 * (a task between vsmfs_vsp_enter() and vsmfs_vsp_exit(), which may go on
 * using it after the swap) drops its entries at once. Single pages are
 * reached through the device mapping instead (vsmfs_lpn_frame_ptr()), whose
 * translations never change: a stream of small copy-on-write writes and
 * reads then invalidates nothing, and the entries it left stale are dropped
 * in one go when the CPU next uses the range. The scratch runs of staged
 * writes, which took the old frames and are freed by the next commit, are
 * shot down by that commit in one batch rather than one by one
 * (sw_defer_b). Every access to the range is made between vsmfs_vsp_enter()
 * and vsmfs_vsp_exit(), on one CPU, by a task that holds the locks keeping
 * the pages it touches from being swapped meanwhile (i_idx_sem, or the
 * transaction that owns them). So a stale entry a CPU may hold is never
 * used: the swap that made it stale ended before the access began, and
 * bumped the count first. No interprocessor interrupt is needed, where an
 * eager shootdown (tlb=eager) interrupts every CPU on every batch.
 *
 * Ordering: nothing here stores to PM. The persistent entries reach PM
 * with the running transaction (ptable.c); the live PTEs are DRAM state
 * and are rebuilt from the page table at mount.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/moduleparam.h>
#include <asm/tlbflush.h>
#include "vsmfs.h"
#include "vsp.h"
#include "trace.h"

/*
 * A stock kernel exports neither init_mm nor flush_tlb_kernel_range() to
 * modules: the kernel page tables are walked from the current mm (whose
 * kernel half is the same as init_mm's) and a batch ends with a flush of
 * the whole TLB on every CPU. Built into the kernel, or as a module of a
 * kernel carrying arch-patches/0002 (which defines the HAVE_EXPORTED_
 * macros next to the declarations), vsmfs walks from init_mm and shoots
 * down only the range of logical pages the batch swapped.
 */
#if !defined(MODULE) || defined(HAVE_EXPORTED_INIT_MM)
#define VSMFS_USE_INIT_MM
#endif
#if !defined(MODULE) || defined(HAVE_EXPORTED_FLUSH_TLB_KERNEL_RANGE)
#define VSMFS_USE_FLUSH_TLB_KERNEL_RANGE
#endif

/*
 * Stripes of the lazy shootdown. Each CPU counts and logs the batches it
 * flushes lazily in a stripe of its own: a writer bumps its stripe's
 * count, a line the writers of the other stripes never write, and a CPU
 * catching up reads the count of every stripe. So CPUs overwriting side
 * by side do not pass one cache line between them on every write; a use
 * of the range reads a line per stripe, most of them unchanged and
 * cached. Beyond VSMFS_TLB_STRIPES CPUs, groups of consecutive CPU
 * numbers (mostly cores of one package, whose lines move between them
 * cheaply) share a stripe, so that a use of the range never reads more
 * than VSMFS_TLB_STRIPES counts. The tlb_stripes parameter of test builds
 * (CONFIG_VSMFS_FAULT_INJECTION) asks for fewer stripes, so that the
 * shared case can be tested on few CPUs.
 */
#define VSMFS_TLB_STRIPES	16

#ifdef CONFIG_VSMFS_FAULT_INJECTION
static unsigned int tlb_stripes;
module_param(tlb_stripes, uint, 0444);
MODULE_PARM_DESC(tlb_stripes, "stripes of the lazy TLB shootdown (0: one per CPU, at most 16)");
#else
#define tlb_stripes 0U
#endif

/*
 * Batches logged per stripe, and pages a logged batch holds at most: up
 * to 32 pages are dropped one by one, beyond that the whole TLB, as the
 * kernel's own range flushes choose (tlb_single_page_flush_ceiling, 33).
 * An append that moves a small file's run swaps up to 16 pages at once.
 */
#define VSMFS_TLB_LOG		64
#define VSMFS_TLB_LOG_PAGES	32

/*
 * struct vsmfs_tlb_rec - the pages of the lazily flushed batch @gen
 * @lock: serializes writers of the slot (generations VSMFS_TLB_LOG apart)
 * @gen: the batch's generation, stored last (release); 0 while written
 * @n: pages in @va
 * @va: their addresses in the range
 *
 * Readers take no lock: they read @gen before and after the pages (as a
 * seqcount) and flush everything unless both are the generation they
 * look for.
 */
struct vsmfs_tlb_rec {
	spinlock_t		lock;	/* writers of the slot */
	u64			gen;
	unsigned int		n;
	unsigned long		va[VSMFS_TLB_LOG_PAGES];
} ____cacheline_aligned_in_smp;	/* consecutive batches, on other CPUs */

/*
 * struct vsmfs_tlb_stripe - the lazily flushed batches of a CPU (or group of CPUs)
 * @gen: batches its CPUs flushed lazily (generations from 1)
 * @log: batch g in slot g % VSMFS_TLB_LOG
 */
struct vsmfs_tlb_stripe {
	atomic64_t		gen ____cacheline_aligned_in_smp;
	struct vsmfs_tlb_rec	log[VSMFS_TLB_LOG];
};

/* The stripes (vsmfs_tlb_init()), and how many. */
static struct vsmfs_tlb_stripe *vsmfs_tlb;
static unsigned int vsmfs_tlb_nstripes __read_mostly;
/* How far each CPU has caught up with each stripe, and its own stripe. */
static DEFINE_PER_CPU(u64 [VSMFS_TLB_STRIPES], vsmfs_tlb_seen);
static DEFINE_PER_CPU(unsigned int, vsmfs_tlb_stripe);
/* Uses of the range open on this CPU (tasks kept on it meanwhile). */
static DEFINE_PER_CPU(unsigned int, vsmfs_vsp_users);

/**
 * vsmfs_tlb_init() - set up the stripes of the lazy shootdown
 *
 * Context: module load.
 * Return: 0 or -ENOMEM.
 */
int vsmfs_tlb_init(void)
{
	unsigned int s, i, cpu, per;

	s = tlb_stripes && tlb_stripes < VSMFS_TLB_STRIPES ? tlb_stripes : VSMFS_TLB_STRIPES;
	/* CPUs per stripe, consecutive numbers; fewer stripes if they do not fill them. */
	per = DIV_ROUND_UP(nr_cpu_ids, min_t(unsigned int, s, nr_cpu_ids));
	vsmfs_tlb_nstripes = DIV_ROUND_UP(nr_cpu_ids, per);
	/* Once here, not a division on every batch. */
	for_each_possible_cpu(cpu)
		per_cpu(vsmfs_tlb_stripe, cpu) = cpu / per;
	vsmfs_tlb = kvcalloc(vsmfs_tlb_nstripes, sizeof(*vsmfs_tlb), GFP_KERNEL);
	if (!vsmfs_tlb)
		return -ENOMEM;
	for (s = 0; s < vsmfs_tlb_nstripes; s++)
		for (i = 0; i < VSMFS_TLB_LOG; i++)
			spin_lock_init(&vsmfs_tlb[s].log[i].lock);
	return 0;
}

/**
 * vsmfs_tlb_exit() - free the stripes, at module unload
 */
void vsmfs_tlb_exit(void)
{
	kvfree(vsmfs_tlb);
}

/* Log the pages of @sw as batch @gen of @st, if it is small. */
static void vsmfs_tlb_log_batch(struct vsmfs_tlb_stripe *st, struct vsmfs_swap *sw, u64 gen)
{
	struct vsmfs_tlb_rec *rec = &st->log[gen % VSMFS_TLB_LOG];
	unsigned int r, n = 0;
	u64 i, pages = 0;

	/* Not logged, the slot left as it was: readers flush everything. */
	for (r = 0; r < sw->sw_nr; r++)
		pages += sw->sw_count[r];
	if (sw->sw_all || pages > VSMFS_TLB_LOG_PAGES)
		return;
	spin_lock(&rec->lock);
	/* A later batch took the slot: readers of @gen flush everything. */
	if (rec->gen > gen)
		goto out;
	WRITE_ONCE(rec->gen, 0);
	/* Gen 0 before the pages: pairs with vsmfs_tlb_catch_up()'s smp_rmb(). */
	smp_wmb();
	for (r = 0; r < sw->sw_nr; r++)
		for (i = 0; i < sw->sw_count[r]; i++)
			WRITE_ONCE(rec->va[n++],
				   (unsigned long)vsmfs_lpn_ptr(sw->sw_sbi, sw->sw_lpn[r] + i));
	WRITE_ONCE(rec->n, n);
	/* The pages before gen: pairs with the reader's smp_load_acquire(). */
	smp_store_release(&rec->gen, gen);
out:
	spin_unlock(&rec->lock);
}

/*
 * Drop this CPU's entries of the batches of @st after @seen up to @gen,
 * page by page. Return: false if one of them is not logged (too large, or
 * its slot taken or being written): the caller flushes everything.
 */
static bool vsmfs_tlb_catch_up(struct vsmfs_tlb_stripe *st, u64 seen, u64 gen)
{
	unsigned long va[VSMFS_TLB_LOG_PAGES];
	unsigned int n, i;
	u64 g;

	if (gen - seen > VSMFS_TLB_LOG || boot_cpu_has(X86_FEATURE_PTI))
		return false;
	for (g = seen + 1; g <= gen; g++) {
		struct vsmfs_tlb_rec *rec = &st->log[g % VSMFS_TLB_LOG];

		/* Gen before the pages: pairs with the writer's smp_store_release(). */
		if (smp_load_acquire(&rec->gen) != g)
			return false;
		n = READ_ONCE(rec->n);
		if (n > VSMFS_TLB_LOG_PAGES)
			return false;
		for (i = 0; i < n; i++)
			va[i] = READ_ONCE(rec->va[i]);
		/* The pages before gen again: pairs with the writer's smp_wmb(). */
		smp_rmb();
		if (READ_ONCE(rec->gen) != g)
			return false;
		for (i = 0; i < n; i++)
			asm volatile("invlpg (%0)" : : "r" (va[i]) : "memory");
	}
	return true;
}

/**
 * vsmfs_vsp_enter() - start using the mapping layer on this CPU
 *
 * Keeps the caller on this CPU until vsmfs_vsp_exit(), and drops this
 * CPU's translations of the range if any batch of swaps was flushed
 * lazily since it last did. Nests.
 *
 * Context: process context; may sleep afterwards.
 */
void vsmfs_vsp_enter(void)
{
	bool all = false;
	unsigned int s;
	u64 *seen, gen;

	migrate_disable();
	this_cpu_inc(vsmfs_vsp_users);
	preempt_disable();
	seen = *this_cpu_ptr(&vsmfs_tlb_seen);
	for (s = 0; s < vsmfs_tlb_nstripes; s++) {
		/* Pairs with the full barrier of atomic64_inc_return() in the flush. */
		gen = atomic64_read_acquire(&vsmfs_tlb[s].gen);
		if (seen[s] == gen)
			continue;
		/*
		 * The stripes counted before the whole flush below are
		 * caught up by it: their batches' PTE stores came before
		 * the counts read.
		 */
		if (!all && !vsmfs_tlb_catch_up(&vsmfs_tlb[s], seen[s], gen))
			all = true;
		seen[s] = gen;
	}
	if (all)
		__flush_tlb_all();
	preempt_enable();
}

/**
 * vsmfs_vsp_exit() - end a use of the mapping layer begun by vsmfs_vsp_enter()
 */
void vsmfs_vsp_exit(void)
{
	this_cpu_dec(vsmfs_vsp_users);
	migrate_enable();
}

/*
 * The kernel PTE behind an address of the mapping layer. Kernel page tables
 * of the vmalloc area are shared by every address space, so the walk may
 * start from the current one; they are never freed while the range is
 * mapped, so the pointer stays valid until vsmfs_vsp_unmap().
 */
static pte_t *vsmfs_kernel_pte(unsigned long addr)
{
#ifdef VSMFS_USE_INIT_MM
	pgd_t *pgd = pgd_offset_k(addr);
#else
	pgd_t *pgd = pgd_offset(current->active_mm, addr);
#endif
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;

	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud) || pud_bad(*pud) || pud_large(*pud))
		return NULL;
	pmd = pmd_offset(pud, addr);
	if (pmd_none(*pmd) || pmd_bad(*pmd) || pmd_large(*pmd))
		return NULL;
	return pte_offset_kernel(pmd, addr);
}

/*
 * Find the PTE page of every 2 MiB of addresses the range spans, once, so
 * that a swap reaches the PTE of a page with one load, not a walk.
 */
static int vsmfs_vsp_find_ptes(struct vsmfs_sb_info *sbi)
{
	unsigned long base = (unsigned long)sbi->s_vsp_base;
	unsigned long end = base + (sbi->s_layout.lpages << PAGE_SHIFT);
	unsigned long n = vsmfs_vsp_chunk(sbi, end - 1) + 1, i;

	sbi->s_vsp_ptes = kvcalloc(n, sizeof(*sbi->s_vsp_ptes), GFP_KERNEL);
	if (!sbi->s_vsp_ptes)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned long a = max(base, ((base >> PMD_SHIFT) + i) << PMD_SHIFT);
		pte_t *p = vsmfs_kernel_pte(a);

		if (!p) {
			vsmfs_err(sbi->s_sb, "no 4 KiB kernel PTE maps the range at %lx", a);
			return -EIO;
		}
		sbi->s_vsp_ptes[i] = p - pte_index(a);
	}
	return 0;
}

/**
 * vsmfs_lpn_frame_ptr() - logical pages' frames, through the device mapping
 * @sbi: the file system
 * @lpn: the first logical page
 * @n: pages from @lpn on
 *
 * The same bytes as vsmfs_lpn_ptr(sbi, @lpn) and the @n - 1 pages after
 * it, reached through the mapping of the whole device, whose translations
 * no swap changes: no vsmfs_vsp_enter() is needed, nor a catch-up with the
 * swaps of other CPUs. It exists for @n pages only if their frames are
 * consecutive, as the frames of a run are until partial overwrites swap
 * some away.
 *
 * Context: the caller keeps the pages from being swapped until it is done
 * with the address (i_idx_sem for a file's pages, a reservation for
 * reserved ones), as for the mapping layer.
 * Return: the first frame's address, or NULL if a page has no frame (a
 * hole) or the frames are not consecutive.
 */
static void __pm *vsmfs_lpn_frame_ptr(struct vsmfs_sb_info *sbi, u64 lpn, u64 n)
{
	unsigned long pfn, a;
	pte_t *pte;
	u64 f, i;

	if (WARN_ON_ONCE(!lpn || lpn >= sbi->s_layout.lpages))
		return NULL;
	if (n > sbi->s_layout.lpages - lpn)
		return NULL;
	pte = vsmfs_vsp_pte(sbi, lpn);
	pfn = pte_pfn(ptep_get(pte));
	f = pfn - sbi->s_frame_pfn0;
	if (f >= sbi->s_layout.data_pages || n > sbi->s_layout.data_pages - f)
		return NULL;
	/*
	 * Inside one VSP whose frames are in order (s_vsp_mixed): every swap
	 * that changed one of these pages marked it before the caller came
	 * to own them, as the swapping task released the locks the caller
	 * then took.
	 */
	if (n > 1 && lpn / VSMFS_VSP_PAGES == (lpn + n - 1) / VSMFS_VSP_PAGES &&
	    !test_bit(lpn / VSMFS_VSP_PAGES, sbi->s_vsp_mixed))
		goto found;
	a = (unsigned long)sbi->s_vsp_base + (lpn << VSMFS_BLOCK_SHIFT);
	for (i = 1; i < n; i++) {
		a += PAGE_SIZE;
		/* The PTEs of one 2 MiB of addresses are consecutive. */
		pte = IS_ALIGNED(a, PMD_SIZE) ? vsmfs_vsp_pte(sbi, lpn + i) : pte + 1;
		if (pte_pfn(ptep_get(pte)) != pfn + i)
			return NULL;
	}
found:
	return sbi->s_virt + ((sbi->s_layout.data_start + f) << VSMFS_BLOCK_SHIFT);
}

/**
 * vsmfs_data_begin() - the address of file data for one access
 * @sbi: the file system
 * @lpn: first logical page of the run
 * @off: byte offset of the access in the run
 * @len: its length
 * @ranged: set if the access uses the mapping layer; the caller ends it
 *	with vsmfs_data_end(@ranged)
 *
 * An access inside one page goes through the device mapping
 * (vsmfs_lpn_frame_ptr(): no catch-up with swaps), and so does a longer
 * one whose pages' frames are consecutive: one translation per large page
 * of the kernel's mapping of the device where the range takes one per
 * 4 KiB page, which a 2 MiB copy would pay 512 times. Any other access
 * goes through the range, between vsmfs_vsp_enter() and vsmfs_vsp_exit().
 *
 * Context: as vsmfs_lpn_frame_ptr().
 * Return: the address of byte @off, or NULL: a page without a frame (a
 * hole) for an access inside one page, a bad @lpn otherwise.
 */
void __pm *vsmfs_data_begin(struct vsmfs_sb_info *sbi, u64 lpn, u64 off, u64 len,
			    bool *ranged)
{
	u64 in = off & (VSMFS_BLOCK_SIZE - 1);
	char __pm *p;

	*ranged = false;
	p = vsmfs_lpn_frame_ptr(sbi, lpn + (off >> VSMFS_BLOCK_SHIFT),
				DIV_ROUND_UP(in + len, VSMFS_BLOCK_SIZE));
	if (p || in + len <= VSMFS_BLOCK_SIZE)
		return p ? p + in : NULL;
	*ranged = true;
	vsmfs_vsp_enter();
	p = vsmfs_lpn_ptr(sbi, lpn);
	return p ? p + off : NULL;
}

/*
 * The live PTE of a logical page whose page table entry is @entry: its
 * frame, writable, or for a page without one the zero page, read-only, so
 * that a hole reads as zeros and a stray store into one faults instead of
 * changing the zero page.
 */
static pte_t vsmfs_vsp_mkpte(struct vsmfs_sb_info *sbi, u64 entry)
{
	u64 frame = entry & VSMFS_PTE_FRAME_MASK;

	if (frame == VSMFS_PTE_NONE)
		return pfn_pte(page_to_pfn(ZERO_PAGE(0)), PAGE_KERNEL_RO);
	return pfn_pte(sbi->s_frame_pfn0 + frame, PAGE_KERNEL);
}

/*
 * Mark the VSPs whose pages do not all have frames in order (@pages: the
 * page of each logical page's frame, the zero page for none), and the
 * last one if the logical space ends inside it.
 */
static void vsmfs_vsp_mixed_init(struct vsmfs_sb_info *sbi, struct page **pages)
{
	u64 n = sbi->s_layout.lpages, vsp, i;

	for (vsp = 0; vsp * VSMFS_VSP_PAGES < n; vsp++) {
		u64 first = vsp * VSMFS_VSP_PAGES;
		unsigned long pfn = page_to_pfn(pages[first]);

		if (n - first < VSMFS_VSP_PAGES || pages[first] == ZERO_PAGE(0)) {
			__set_bit(vsp, sbi->s_vsp_mixed);
			continue;
		}
		for (i = 1; i < VSMFS_VSP_PAGES; i++)
			if (page_to_pfn(pages[first + i]) != pfn + i) {
				__set_bit(vsp, sbi->s_vsp_mixed);
				break;
			}
	}
}

/**
 * vsmfs_vsp_map() - map all logical pages from the persistent page table
 * @sbi: the file system, journal replayed
 *
 * Context: mount.
 * Return: 0 or a negative errno; -EFSCORRUPTED if the page table does not
 * name a valid frame for every logical page (on a sparse file system: a
 * frame or none), or names one twice, or leaves one out.
 */
int vsmfs_vsp_map(struct vsmfs_sb_info *sbi)
{
	const struct vsmfs_layout *l = &sbi->s_layout;
	u64 n = l->lpages, frames = l->data_pages, lpn, none = 0;
	struct page **pages;
	unsigned long *seen;
	int ret = -EFSCORRUPTED;

	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	seen = bitmap_zalloc(frames, GFP_KERNEL);
	sbi->s_vsp_mixed = bitmap_zalloc(DIV_ROUND_UP(n, VSMFS_VSP_PAGES), GFP_KERNEL);
	if (l->sparse) {
		sbi->s_noframe = bitmap_zalloc(n, GFP_KERNEL);
		sbi->s_unwritten = bitmap_zalloc(n, GFP_KERNEL);
	}
	if (!pages || !seen || !sbi->s_vsp_mixed ||
	    (l->sparse && (!sbi->s_noframe || !sbi->s_unwritten))) {
		ret = -ENOMEM;
		goto out;
	}
	for (lpn = 0; lpn < n; lpn++) {
		const __le64 __pm *pt = vsmfs_blk_ptr(sbi, l->ptable_start +
						       lpn / VSMFS_PTES_PER_BLOCK);
		u64 entry = le64_to_cpu(vsmfs_pm_read(&pt[lpn % VSMFS_PTES_PER_BLOCK]));
		u64 frame = entry & VSMFS_PTE_FRAME_MASK;

		if (frame == VSMFS_PTE_NONE && l->sparse && lpn) {
			/* Mapped read-only once the range exists. */
			__set_bit(lpn, sbi->s_noframe);
			pages[lpn] = ZERO_PAGE(0);
			none++;
			continue;
		}
		if (frame >= frames || test_and_set_bit(frame, seen)) {
			vsmfs_err(sbi->s_sb, "page table: logical page %llu maps %s frame %llu",
				  lpn, frame >= frames ? "invalid" : "already used", frame);
			goto out;
		}
		pages[lpn] = pfn_to_page(sbi->s_frame_pfn0 + frame);
		if (l->sparse && (entry & VSMFS_PTE_UNWRITTEN))
			__set_bit(lpn, sbi->s_unwritten);
	}
	vsmfs_vsp_mixed_init(sbi, pages);
	if (n - none != frames) {
		vsmfs_err(sbi->s_sb, "page table: %llu of %llu frames mapped", n - none, frames);
		goto out;
	}
	/*
	 * Its pages are frames of the device: a pointer into PM (pmem.h).
	 * vm_map_ram(), as vmap() refuses more pages than DRAM has, which a
	 * large device (and any sparse logical space) may well exceed.
	 */
	if (n <= UINT_MAX)
		sbi->s_vsp_base = (__force void __pm *)vm_map_ram(pages, n, NUMA_NO_NODE);
	ret = sbi->s_vsp_base ? 0 : -ENOMEM;
	if (ret) {
		vsmfs_err(sbi->s_sb, "cannot map %llu pages of kernel virtual space", n);
		goto out;
	}
	ret = vsmfs_vsp_find_ptes(sbi);
	if (ret || !none)
		goto out;
	/* Nothing used the range yet: no stale translation to drop. */
	for (lpn = find_first_bit(sbi->s_noframe, n); lpn < n;
	     lpn = find_next_bit(sbi->s_noframe, n, lpn + 1))
		set_pte(vsmfs_vsp_pte(sbi, lpn), vsmfs_vsp_mkpte(sbi, VSMFS_PTE_NONE));
out:
	bitmap_free(seen);
	kvfree(pages);
	return ret;
}

/**
 * __vsmfs_frames_in() - how many of a run of logical pages have frames
 * @sbi: the file system, with pages without frames
 * @lpn: first logical page
 * @count: pages
 *
 * vsmfs_frames_in() for a run of more than one page.
 *
 * Return: @count less the pages without a frame.
 */
u64 __vsmfs_frames_in(const struct vsmfs_sb_info *sbi, u64 lpn, u64 count)
{
	u64 holes = 0, i;

	for (i = find_next_bit(sbi->s_noframe, lpn + count, lpn); i < lpn + count;
	     i = find_next_bit(sbi->s_noframe, lpn + count, i + 1))
		holes++;
	return count - holes;
}

/**
 * vsmfs_vsp_unmap() - tear the mapping down
 * @sbi: the file system
 *
 * Context: unmount, or a failed mount.
 */
void vsmfs_vsp_unmap(struct vsmfs_sb_info *sbi)
{
	kvfree(sbi->s_vsp_ptes);
	sbi->s_vsp_ptes = NULL;
	if (sbi->s_vsp_base)
		vm_unmap_ram((__force void *)sbi->s_vsp_base, sbi->s_layout.lpages);
	sbi->s_vsp_base = NULL;
	bitmap_free(sbi->s_noframe);
	sbi->s_noframe = NULL;
	bitmap_free(sbi->s_unwritten);
	sbi->s_unwritten = NULL;
	bitmap_free(sbi->s_vsp_mixed);
	sbi->s_vsp_mixed = NULL;
}

/**
 * vsmfs_swap_add() - shoot down more pages with a batch
 * @sw: the batch
 * @lpn: first logical page
 * @count: pages, whose mapping changed since this CPU, or any, last
 *	used them
 */
void vsmfs_swap_add(struct vsmfs_swap *sw, u64 lpn, u64 count)
{
	sw->sw_pages += count;
	vsmfs_swap_note(sw, lpn, count);
}

/**
 * vsmfs_swap_undo() - put the live mapping back after an aborted transaction
 * @sw: the batch the pages put back join (flushed by the caller)
 * @lpn: logical page of the first entry
 * @old: page table entries as they were before the transaction
 * @cur: the entries as the transaction left them
 * @n: entries
 *
 * Each logical page whose entry the transaction changed (by swaps) is
 * mapped again to the frame its old entry names. Nothing reaches PM: the
 * transaction was never committed.
 *
 * Context: inside the transaction being aborted, which swapped the pages.
 */
void vsmfs_swap_undo(struct vsmfs_swap *sw, u64 lpn, const __le64 *old, const __le64 *cur,
		     unsigned int n)
{
	struct vsmfs_sb_info *sbi = sw->sw_sbi;
	unsigned int i;

	for (i = 0; i < n; i++) {
		u64 frame = le64_to_cpu(old[i]) & VSMFS_PTE_FRAME_MASK;
		bool none = frame == VSMFS_PTE_NONE && sbi->s_noframe;

		if (old[i] == cur[i] || !(lpn + i) || lpn + i >= sbi->s_layout.lpages ||
		    (frame >= sbi->s_layout.data_pages && !none))
			continue;
		set_pte(vsmfs_vsp_pte(sbi, lpn + i), vsmfs_vsp_mkpte(sbi, frame));
		if (!sbi->s_noframe)
			continue;
		assign_bit(lpn + i, sbi->s_noframe, none);
		assign_bit(lpn + i, sbi->s_unwritten, le64_to_cpu(old[i]) & VSMFS_PTE_UNWRITTEN);
		sw->sw_pages++;
		vsmfs_swap_note(sw, lpn + i, 1);
	}
}

/* Drop this CPU's translations of the pages of a batch. */
static void vsmfs_flush_tlb_local(void *arg)
{
	struct vsmfs_swap *sw = arg;
	unsigned int r;
	u64 i;

	/*
	 * Without page table isolation, kernel mappings are global and invlpg
	 * drops them for every address space (and PCID is used only then).
	 * With it, they are cached per address space: flush everything.
	 */
	if (sw->sw_all || boot_cpu_has(X86_FEATURE_PTI)) {
		__flush_tlb_all();
		return;
	}
	for (r = 0; r < sw->sw_nr; r++)
		for (i = 0; i < sw->sw_count[r]; i++)
			asm volatile("invlpg (%0)" : : "r"
				     (vsmfs_lpn_ptr(sw->sw_sbi, sw->sw_lpn[r] + i)) : "memory");
}

/**
 * vsmfs_swap_flush() - end a batch: shoot down stale translations
 * @sw: the batch
 *
 * One TLB shootdown covers all swaps of the batch: the pages swapped one
 * by one for a small batch, the whole TLB for a large one. With tlb=lazy,
 * on every CPU before its next use of the range, now on this one if a use
 * is open on it (see the top of this file); with tlb=eager, on every CPU
 * now, by the
 * kernel's ranged flush where it lets a module use it.
 */
void vsmfs_swap_flush(struct vsmfs_swap *sw)
{
	unsigned int s;
	u64 gen;

	if (!sw->sw_pages)
		return;
	trace_vsmfs_tlb_flush(sw->sw_sbi->s_sb, sw->sw_pages, sw->sw_all,
			      READ_ONCE(sw->sw_sbi->s_tlb_mode) == VSMFS_TLB_LAZY);
	if (READ_ONCE(sw->sw_sbi->s_tlb_mode) == VSMFS_TLB_LAZY) {
		/*
		 * Every CPU at its next vsmfs_vsp_enter(). The PTE stores
		 * above are ordered before the count of this CPU's stripe by
		 * the full barrier of atomic64_inc_return(). The batch's
		 * pages are logged after the count: a CPU that finds the
		 * count first flushes everything (vsmfs_tlb_catch_up()).
		 * This CPU, if it flushes now and was up to date with the
		 * stripe before this batch, is up to date after it.
		 */
		preempt_disable();
		s = __this_cpu_read(vsmfs_tlb_stripe);
		gen = atomic64_inc_return(&vsmfs_tlb[s].gen);
		vsmfs_tlb_log_batch(&vsmfs_tlb[s], sw, gen);
		/*
		 * A use of the range open on this CPU may go on after the
		 * swap: our entries go now. Else at the next use.
		 */
		if (__this_cpu_read(vsmfs_vsp_users) && !sw->sw_unused) {
			vsmfs_flush_tlb_local(sw);
			if (__this_cpu_read(vsmfs_tlb_seen[s]) == gen - 1)
				__this_cpu_write(vsmfs_tlb_seen[s], gen);
		}
		preempt_enable();
		goto done;
	}
#ifdef VSMFS_USE_FLUSH_TLB_KERNEL_RANGE
	if (sw->sw_all) {
		flush_tlb_kernel_range((unsigned long)vsmfs_lpn_ptr(sw->sw_sbi, 1),
				       (unsigned long)sw->sw_sbi->s_vsp_base +
				       (sw->sw_sbi->s_layout.lpages << VSMFS_BLOCK_SHIFT));
	} else {
		unsigned int r;

		for (r = 0; r < sw->sw_nr; r++) {
			unsigned long va = (unsigned long)vsmfs_lpn_ptr(sw->sw_sbi, sw->sw_lpn[r]);

			flush_tlb_kernel_range(va, va + (sw->sw_count[r] << VSMFS_BLOCK_SHIFT));
		}
	}
#else
	on_each_cpu(vsmfs_flush_tlb_local, sw, 1);
#endif
done:
	sw->sw_pages = 0;
	sw->sw_nr = 0;
	sw->sw_all = false;
	vsmfs_stat_inc(sw->sw_sbi, tlb_shootdowns);
}
