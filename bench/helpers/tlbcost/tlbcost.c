// SPDX-License-Identifier: GPL-2.0
/*
 * tlbcost: what one kernel TLB invalidation costs on this machine.
 *
 * A copy-on-write overwrite of vsmfs swaps kernel page table entries and
 * invalidates the stale translations with invlpg (fs/vsmfs/vsp.c); in
 * place and on ext4-DAX nothing is invalidated. On hardware invlpg takes
 * on the order of a hundred cycles, but an emulator may pay much more for
 * it (QEMU TCG drops cached translations with it, which the code run
 * afterwards refills), and that weighs on every small atomic overwrite a
 * benchmark in that VM makes. The benchmarks time it in their VM and
 * report it next to the ratios it affects (bench/fio-overwrite).
 *
 * The module makes two debugfs files, tlbcost/noop and tlbcost/invlpg: a
 * write to either returns at once, and a write to invlpg first invalidates
 * one page of a vmalloc() buffer (mapped with 4 KiB kernel PTEs, like the
 * vsmfs mapping). The difference between the time of a write(2) to one and
 * to the other, over many of them (bench/helpers/tlbcost.sh), is what the
 * invalidation costs a system call, the refills it causes included.
 */
#include <linux/module.h>
#include <linux/vmalloc.h>
#include <linux/debugfs.h>
#include <linux/fs.h>

#define TLBCOST_PAGES	64

static char *tlbcost_buf;
static unsigned int tlbcost_next;
static struct dentry *tlbcost_dir;

/* file->private_data (simple_open()) is NULL for noop, the buffer for invlpg. */
static ssize_t tlbcost_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char *buf = file->private_data, *page;

	if (buf) {
		/* A page of the buffer in turn; the counter may race, harmlessly. */
		page = buf + (tlbcost_next++ % TLBCOST_PAGES) * PAGE_SIZE;
		READ_ONCE(*page);
		asm volatile("invlpg (%0)" : : "r" (page) : "memory");
	}
	return count;
}

static const struct file_operations tlbcost_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= tlbcost_write,
	.llseek	= noop_llseek,
};

static int __init tlbcost_init(void)
{
	tlbcost_buf = vzalloc(TLBCOST_PAGES * PAGE_SIZE);
	if (!tlbcost_buf)
		return -ENOMEM;
	tlbcost_dir = debugfs_create_dir("tlbcost", NULL);
	debugfs_create_file("noop", 0200, tlbcost_dir, NULL, &tlbcost_fops);
	debugfs_create_file("invlpg", 0200, tlbcost_dir, tlbcost_buf, &tlbcost_fops);
	return 0;
}

static void __exit tlbcost_exit(void)
{
	debugfs_remove(tlbcost_dir);
	vfree(tlbcost_buf);
}

module_init(tlbcost_init);
module_exit(tlbcost_exit);
MODULE_DESCRIPTION("Cost of one kernel TLB invalidation, for the vsmfs benchmarks");
MODULE_LICENSE("GPL");
