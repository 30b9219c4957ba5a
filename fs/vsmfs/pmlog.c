// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs persistence-ordering log (CONFIG_VSMFS_PMLOG), for the ordering
 * checker: tools/vsmfs-pmreplay rebuilds from it the PM images a power cut
 * could leave, and tests/suites/ordering mounts and checks each one.
 *
 * What is logged. Every persistence primitive of pmem.h records what it did,
 * after doing it, while logging is on:
 *   vsmfs_pm_write(),        STORE: the bytes stored through the cache, as
 *   vsmfs_pm_store(),        read back right after the store (the value
 *   vsmfs_pm_memset()        written); one record per call and page
 *   vsmfs_flush()            FLUSH: the 64-byte lines of the range, with
 *                            their contents as the write-back took them
 *   vsmfs_memcpy_nt(),       NT: the bytes stored, exactly
 *   vsmfs_copy_from_iter()
 *   vsmfs_fence()            FENCE
 *   vsmfs_fence_pending()    FENCE, or SETTLE when the CPU had nothing
 *                            to order and no fence was made
 * each with the CPU and the task that made it (pid 0 outside a task's own
 * context: in an interrupt, such as the function call of another CPU, or
 * in the idle task, which has that pid on every CPU), the address turned
 * into a byte offset in the device (through the mapping layer for data
 * pages). A MARK record, written from user space through pmlog_mark, says
 * where in the log an event of the test happened (pmlog_format.h).
 * vsmfs_persist() is a flush and a fence, vsmfs_zero_pm() a STORE and a
 * flush. Only the device of one mount is logged: the first mounted after
 * the module was loaded, or after that one was unmounted.
 *
 * Every store the module makes to PM goes through these: metadata reaches
 * PM only through the journal (journal blocks, headers, journal
 * superblock), checkpoints and recovery (non-temporal copies home), and
 * the superblock; file data through non-temporal copies from user memory
 * or from other data pages, and zeroing. What is not logged: stores by
 * user space through a DAX mapping of a file (mmap), which the module
 * never sees; a line they dirty is still logged by a later flush of the
 * module (msync, fsync), as a change the replay did not know of. A call of
 * vsmfs_pm_store() or vsmfs_pm_memset() is one step of the model: the
 * replay never tears it within a line, so code that needs two stores to
 * one line ordered makes them separate calls (vsmfs_pm_write() is atomic
 * on the hardware as well).
 *
 * The model the replay applies (tools/vsmfs-pmreplay). Each line holds, in
 * the cache, the sequence of values the logged stores gave it. A dirty line
 * may be written back at any moment (eviction), so at a power cut a line
 * holds any value it took since it was last known durable, not only the
 * durable one or the one a flush wrote. A flushed line or a non-temporal
 * store is known durable after a fence on the same CPU or by the same task:
 * the Intel SDM (vol. 2A, CLWB) says CLWB is ordered by SFENCE, MFENCE and
 * locked instructions, and a task leaving a CPU passes through the
 * runqueue lock there, a locked instruction, so what it flushed on the
 * CPU it left is ordered before anything it does on the next one; a
 * SETTLE record (a task whose CPU had nothing to fence) makes the marks
 * the task made on other CPUs durable for that reason. The
 * model counts only the module's own fences: the locked instructions of
 * the kernel that happen to lie between a flush and a later store are no
 * ordering the module may rely on, as other architectures order a
 * write-back only by an explicit barrier on the same CPU. The images of a crash just
 * before each fence are the durable lines plus choices, within the
 * replay's bounds, among the values each other line took since.
 *
 * The log is a vmalloc'ed buffer of pmlog_mb MiB (module parameter),
 * allocated when logging is first turned on, in /sys/kernel/debug/vsmfs/:
 *   pmlog        write "on" (empties the log and starts it) or "off";
 *                read: the state, counts, and whether it overflowed
 *   pmlog_data   the log (pmlog_format.h), readable while logging is off
 *   pmlog_mark   write a number: a MARK record holding it (while on)
 * A log that ran out of room keeps what it had and says so in its header
 * (VSMFS_PMLOG_OVERFLOW): the replay refuses it rather than check a
 * truncated history.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/uaccess.h>
#include "vsmfs.h"
#include "pmlog.h"
#include "pmlog_format.h"
#include "pmem.h"

static unsigned int pmlog_mb = 64;
module_param(pmlog_mb, uint, 0644);
MODULE_PARM_DESC(pmlog_mb, "size of the persistence-ordering log in MiB (taken when it is turned on)");

/*
 * The negative control of the checker: a superblock update in a torn order
 * (super.c), which the ordering tests expect the checker to catch.
 */
static bool pmlog_misorder_sb;
module_param(pmlog_misorder_sb, bool, 0644);
MODULE_PARM_DESC(pmlog_misorder_sb, "test aid: update the superblock in a wrong order that a crash can tear (the ordering checker must catch it)");

/**
 * vsmfs_pmlog_misorder_sb() - whether to update the superblock out of order
 *
 * Return: the pmlog_misorder_sb module parameter.
 */
bool vsmfs_pmlog_misorder_sb(void)
{
	return READ_ONCE(pmlog_misorder_sb);
}

/*
 * The negative control of the per-CPU fence rule: the fence that makes a
 * commit's journal writes durable before its commit record (journal.c,
 * step 4) made on another CPU than the one that wrote and flushed them.
 * That fence orders nothing of this CPU's, so the commit record may reach
 * PM before the journal blocks it commits; the ordering tests expect the
 * checker to catch it in logs of several tasks committing at once.
 */
static bool pmlog_remote_fence;
module_param(pmlog_remote_fence, bool, 0644);
MODULE_PARM_DESC(pmlog_remote_fence, "test aid: make the fence before a commit record on another CPU (the ordering checker must catch it)");

/**
 * vsmfs_pmlog_remote_fence() - whether a commit fences on another CPU
 *
 * Return: the pmlog_remote_fence module parameter.
 */
bool vsmfs_pmlog_remote_fence(void)
{
	return READ_ONCE(pmlog_remote_fence);
}

static void vsmfs_pmlog_fence_fn(void *unused)
{
	vsmfs_fence();
}

/**
 * vsmfs_pmlog_fence_elsewhere() - make a fence on another CPU, not here
 *
 * Runs vsmfs_fence() on another online CPU through a function call
 * interrupt and waits for it; on a machine of one CPU, fences here. The
 * fence is logged with that CPU and no task (pid 0), as it is made in an
 * interrupt there. The interrupt's own path runs locked instructions on
 * this CPU too; the model does not count them (see the top of this file).
 *
 * Context: process context, interrupts enabled.
 */
void vsmfs_pmlog_fence_elsewhere(void)
{
	int cpu = get_cpu();
	int other = cpumask_any_but(cpu_online_mask, cpu);

	if (other < nr_cpu_ids)
		smp_call_function_single(other, vsmfs_pmlog_fence_fn, NULL, 1);
	else
		vsmfs_fence();
	put_cpu();
}

/*
 * struct vsmfs_pmlog - the log and the device it covers
 *
 * @mutex serializes turning the log on and off and reading it out; @lock
 * protects everything else and is taken by every record (the lock order
 * is in vsmfs.h).
 */
static struct vsmfs_pmlog {
	struct mutex		mutex;		/* on and off, reading out */
	spinlock_t		lock;		/* the rest, every record */
	bool			on;
	bool			overflow;
	void			*buf;		/* allocated under mutex */
	size_t			size;
	size_t			used;
	u64			records;
	u64			foreign;
	/* The logged device: its mount, kernel address, size and first pfn. */
	struct vsmfs_sb_info	*sbi;
	void			*virt;
	u64			bytes;
	unsigned long		pfn0;
} pmlog = {
	.mutex	= __MUTEX_INITIALIZER(pmlog.mutex),
	.lock	= __SPIN_LOCK_UNLOCKED(pmlog.lock),
};

/*
 * Device offset of @p, which must not cross a page boundary with the bytes
 * it stands for: the direct mapping of the device, or the mapping layer
 * (vsp.c) whose pages are frames of the device in any order.
 */
static bool vsmfs_pmlog_off(const void *p, u64 *off)
{
	unsigned long pfn;

	lockdep_assert_held(&pmlog.lock);
	if (!pmlog.sbi)
		return false;
	if (p >= pmlog.virt && p < pmlog.virt + pmlog.bytes) {
		*off = p - pmlog.virt;
		return true;
	}
	if (!is_vmalloc_addr(p))
		return false;
	pfn = vmalloc_to_pfn(p);
	if (pfn < pmlog.pfn0 || pfn - pmlog.pfn0 >= pmlog.bytes >> PAGE_SHIFT)
		return false;
	*off = ((u64)(pfn - pmlog.pfn0) << PAGE_SHIFT) + offset_in_page(p);
	return true;
}

/*
 * Append one record: @len bytes of @data, within one page of the device,
 * or with no data (@data NULL) @val as its r_off. Called with lock held.
 */
static void vsmfs_pmlog_add(u16 type, const void *data, u32 len, u64 val)
{
	size_t need = sizeof(struct vsmfs_pmlog_rec) + ALIGN(len, 8);
	struct vsmfs_pmlog_rec *r;
	u64 off = val;

	lockdep_assert_held(&pmlog.lock);
	if (!pmlog.on)
		return;
	if (data && !vsmfs_pmlog_off(data, &off)) {
		pmlog.foreign++;
		return;
	}
	if (pmlog.used + need > pmlog.size) {
		pmlog.overflow = true;
		return;
	}
	r = pmlog.buf + pmlog.used;
	r->r_type = cpu_to_le16(type);
	r->r_cpu = cpu_to_le16(smp_processor_id());
	r->r_pid = cpu_to_le32(in_task() ? current->pid : 0);
	r->r_off = cpu_to_le64(off);
	r->r_len = cpu_to_le32(len);
	r->r_reserved = 0;
	if (len) {
		memcpy(r + 1, data, len);
		memset((u8 *)(r + 1) + len, 0, ALIGN(len, 8) - len);
	}
	pmlog.used += need;
	pmlog.records++;
}

/*
 * Records of type @type for [addr, addr+len), one per page it touches.
 * @addr is PM as a plain address (the hooks cast the __pm away): the log
 * copies the bytes there and turns the address into a device offset.
 */
static void vsmfs_pmlog_range(u16 type, const void *addr, size_t len)
{
	const u8 *p = addr, *end = p + len;
	unsigned long flags;

	spin_lock_irqsave(&pmlog.lock, flags);
	while (p < end) {
		size_t n = min_t(size_t, end - p, PAGE_SIZE - offset_in_page(p));

		vsmfs_pmlog_add(type, p, n, 0);
		p += n;
	}
	spin_unlock_irqrestore(&pmlog.lock, flags);
}

/**
 * vsmfs_pmlog_store() - record cached stores to [addr, addr+len)
 * @addr: first byte stored
 * @len: bytes
 *
 * Records the bytes as they are now, right after the stores.
 *
 * Context: any; called by the store accessors of pmem.h after the stores.
 */
void vsmfs_pmlog_store(const void __pm *addr, size_t len)
{
	if (!READ_ONCE(pmlog.on) || !len)
		return;
	vsmfs_pmlog_range(VSMFS_PMLOG_STORE, (__force const void *)addr, len);
}

/**
 * vsmfs_pmlog_flush() - record a write-back of [addr, addr+len)
 * @addr: start, anywhere in its line
 * @len: bytes
 *
 * Records the whole lines the range touches, with their contents now.
 *
 * Context: any; called by vsmfs_flush() after the write-back.
 */
void vsmfs_pmlog_flush(const void __pm *addr, size_t len)
{
	unsigned long start = (unsigned long)addr & ~63UL;
	unsigned long end = ALIGN((unsigned long)addr + len, 64);

	if (!READ_ONCE(pmlog.on) || !len)
		return;
	vsmfs_pmlog_range(VSMFS_PMLOG_FLUSH, (const void *)start, end - start);
}

/**
 * vsmfs_pmlog_nt() - record non-temporal stores to [addr, addr+len)
 * @addr: first byte stored
 * @len: bytes
 *
 * Context: any; called after the stores.
 */
void vsmfs_pmlog_nt(const void __pm *addr, size_t len)
{
	if (!READ_ONCE(pmlog.on) || !len)
		return;
	vsmfs_pmlog_range(VSMFS_PMLOG_NT, (__force const void *)addr, len);
}

/* A record with no address and no data, while logging is on. */
static void vsmfs_pmlog_event(u16 type)
{
	unsigned long flags;

	if (!READ_ONCE(pmlog.on))
		return;
	spin_lock_irqsave(&pmlog.lock, flags);
	vsmfs_pmlog_add(type, NULL, 0, 0);
	spin_unlock_irqrestore(&pmlog.lock, flags);
}

/**
 * vsmfs_pmlog_fence() - record a store fence
 *
 * Context: any; called by vsmfs_fence() after the fence.
 */
void vsmfs_pmlog_fence(void)
{
	vsmfs_pmlog_event(VSMFS_PMLOG_FENCE);
}

/**
 * vsmfs_pmlog_settle() - record a fence left out for want of stores
 *
 * Called by vsmfs_fence_pending() when this CPU has no store to order:
 * the replay learns that the task runs here now, so that what it flushed
 * on the CPUs it left is durable (left through a locked instruction).
 */
void vsmfs_pmlog_settle(void)
{
	vsmfs_pmlog_event(VSMFS_PMLOG_SETTLE);
}

/**
 * vsmfs_pmlog_attach() - log the device of a mount, if none is logged
 * @sbi: the mount, its device mapped
 *
 * Context: fill_super.
 */
void vsmfs_pmlog_attach(struct vsmfs_sb_info *sbi)
{
	unsigned long flags;

	spin_lock_irqsave(&pmlog.lock, flags);
	if (!pmlog.sbi) {
		pmlog.sbi = sbi;
		pmlog.virt = (__force void *)sbi->s_virt;
		pmlog.bytes = sbi->s_dev_blocks << VSMFS_BLOCK_SHIFT;
		pmlog.pfn0 = sbi->s_dev_pfn;
	}
	spin_unlock_irqrestore(&pmlog.lock, flags);
}

/**
 * vsmfs_pmlog_detach() - stop logging the device of a mount going away
 * @sbi: the mount
 *
 * Context: kill_sb, after the last store of the mount.
 */
void vsmfs_pmlog_detach(struct vsmfs_sb_info *sbi)
{
	unsigned long flags;

	spin_lock_irqsave(&pmlog.lock, flags);
	if (pmlog.sbi == sbi)
		pmlog.sbi = NULL;
	spin_unlock_irqrestore(&pmlog.lock, flags);
}

static int vsmfs_pmlog_start(void)
{
	size_t size = (size_t)pmlog_mb << 20;
	unsigned long flags;

	lockdep_assert_held(&pmlog.mutex);
	if (!size)
		return -EINVAL;
	if (size != pmlog.size) {
		void *buf = vmalloc(size);

		if (!buf)
			return -ENOMEM;
		spin_lock_irqsave(&pmlog.lock, flags);
		swap(buf, pmlog.buf);
		pmlog.size = size;
		spin_unlock_irqrestore(&pmlog.lock, flags);
		vfree(buf);
	}
	spin_lock_irqsave(&pmlog.lock, flags);
	pmlog.used = 0;
	pmlog.records = 0;
	pmlog.foreign = 0;
	pmlog.overflow = false;
	WRITE_ONCE(pmlog.on, true);
	spin_unlock_irqrestore(&pmlog.lock, flags);
	return 0;
}

static ssize_t vsmfs_pmlog_ctl_write(struct file *file, const char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	unsigned long flags;
	char cmd[8];
	int ret = 0;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = 0;
	mutex_lock(&pmlog.mutex);
	if (sysfs_streq(cmd, "on")) {
		ret = vsmfs_pmlog_start();
	} else if (sysfs_streq(cmd, "off")) {
		spin_lock_irqsave(&pmlog.lock, flags);
		WRITE_ONCE(pmlog.on, false);
		spin_unlock_irqrestore(&pmlog.lock, flags);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&pmlog.mutex);
	return ret ? ret : count;
}

static ssize_t vsmfs_pmlog_ctl_read(struct file *file, char __user *ubuf, size_t count,
				    loff_t *ppos)
{
	unsigned long flags;
	char buf[256];
	int len;

	spin_lock_irqsave(&pmlog.lock, flags);
	len = scnprintf(buf, sizeof(buf),
			"state %s\nrecords %llu\nbytes %zu\nsize %zu\noverflow %d\nforeign %llu\ndevice %s\n",
			pmlog.on ? "on" : "off", pmlog.records, pmlog.used, pmlog.size,
			pmlog.overflow, pmlog.foreign, pmlog.sbi ? pmlog.sbi->s_sb->s_id : "none");
	spin_unlock_irqrestore(&pmlog.lock, flags);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

/* A MARK record holding the number written, if the log is on. */
static ssize_t vsmfs_pmlog_mark_write(struct file *file, const char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	unsigned long flags;
	u64 val;
	int ret;

	ret = kstrtou64_from_user(ubuf, count, 0, &val);
	if (ret)
		return ret;
	spin_lock_irqsave(&pmlog.lock, flags);
	vsmfs_pmlog_add(VSMFS_PMLOG_MARK, NULL, 0, val);
	spin_unlock_irqrestore(&pmlog.lock, flags);
	return count;
}

static const struct file_operations vsmfs_pmlog_mark_fops = {
	.owner	= THIS_MODULE,
	.write	= vsmfs_pmlog_mark_write,
	.llseek	= noop_llseek,
};

static const struct file_operations vsmfs_pmlog_ctl_fops = {
	.owner	= THIS_MODULE,
	.read	= vsmfs_pmlog_ctl_read,
	.write	= vsmfs_pmlog_ctl_write,
	.llseek	= default_llseek,
};

/* The header, then the records: a file of sizeof(hdr) + used bytes. */
static ssize_t vsmfs_pmlog_data_read(struct file *file, char __user *ubuf, size_t count,
				     loff_t *ppos)
{
	struct vsmfs_pmlog_hdr hdr = {
		.ph_magic	= cpu_to_le64(VSMFS_PMLOG_MAGIC),
		.ph_version	= cpu_to_le32(VSMFS_PMLOG_VERSION),
	};
	ssize_t ret = 0;
	loff_t pos;

	mutex_lock(&pmlog.mutex);
	if (READ_ONCE(pmlog.on)) {
		ret = -EBUSY;
		goto out;
	}
	/* Off, and the mutex held: nothing changes the log meanwhile. */
	hdr.ph_flags = cpu_to_le32(pmlog.overflow ? VSMFS_PMLOG_OVERFLOW : 0);
	hdr.ph_bytes = cpu_to_le64(pmlog.used);
	hdr.ph_records = cpu_to_le64(pmlog.records);
	hdr.ph_foreign = cpu_to_le64(pmlog.foreign);
	hdr.ph_dev_bytes = cpu_to_le64(pmlog.bytes);
	if (*ppos < sizeof(hdr)) {
		pos = *ppos;
		ret = simple_read_from_buffer(ubuf, count, &pos, &hdr, sizeof(hdr));
		if (ret < 0)
			goto out;
		*ppos = pos;
		ubuf += ret;
		count -= ret;
	}
	if (count && pmlog.buf && *ppos >= sizeof(hdr)) {
		ssize_t n;

		pos = *ppos - sizeof(hdr);
		n = simple_read_from_buffer(ubuf, count, &pos, pmlog.buf, pmlog.used);
		if (n < 0) {
			ret = ret ? ret : n;
			goto out;
		}
		*ppos = pos + sizeof(hdr);
		ret += n;
	}
out:
	mutex_unlock(&pmlog.mutex);
	return ret;
}

static const struct file_operations vsmfs_pmlog_data_fops = {
	.owner	= THIS_MODULE,
	.read	= vsmfs_pmlog_data_read,
	.llseek	= default_llseek,
};

/**
 * vsmfs_pmlog_init() - create the debugfs files of the log
 * @dir: /sys/kernel/debug/vsmfs
 *
 * A test aid: without debugfs the log cannot be turned on and nothing is
 * logged, so errors here are not reported.
 */
void vsmfs_pmlog_init(struct dentry *dir)
{
	debugfs_create_file("pmlog", 0600, dir, NULL, &vsmfs_pmlog_ctl_fops);
	debugfs_create_file("pmlog_data", 0400, dir, NULL, &vsmfs_pmlog_data_fops);
	debugfs_create_file("pmlog_mark", 0200, dir, NULL, &vsmfs_pmlog_mark_fops);
}

/**
 * vsmfs_pmlog_exit() - free the log
 *
 * Context: module exit, after the debugfs files are gone.
 */
void vsmfs_pmlog_exit(void)
{
	vfree(pmlog.buf);
	pmlog.buf = NULL;
}
