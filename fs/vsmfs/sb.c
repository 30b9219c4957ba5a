// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs superblock writes and the error state: the ordered update of both
 * superblock copies, the volume label, the clean flag, and the record and
 * handling of file system errors (errors=). The lowest layer: it calls
 * nothing of the rest of vsmfs, and everything may report an error.
 */
#include <linux/blkdev.h>
#include <linux/sysfs.h>
#include "vsmfs.h"
#include "pmem.h"

/* This CPU may have stores to PM no fence has ordered yet (pmem.h). */
DEFINE_PER_CPU(bool, vsmfs_pm_unfenced);

#ifdef CONFIG_VSMFS_PMLOG
/*
 * The negative control of the ordering checker (module parameter
 * pmlog_misorder_sb of the module built with CONFIG_VSMFS_PMLOG): the
 * superblock update in a wrong order. The primary is changed in place with
 * cached stores before the backup is durable, so a write-back of a dirty
 * line of the primary before the first fence can leave it torn while the
 * backup is torn too, and no valid superblock is left. tests/suites/ordering
 * expects the checker to report it.
 */
static void vsmfs_write_super_misordered(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_dsb __pm *primary = vsmfs_blk_ptr(sbi, VSMFS_SB_BLOCK);

	vsmfs_pm_store(primary, sbi->s_dsb, sizeof(*primary));
	vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, sbi->s_layout.sb_backup), sbi->s_dsb,
			sizeof(*primary));
	vsmfs_fence();
	vsmfs_persist(primary, sizeof(*primary));
}
#else
static void vsmfs_write_super_misordered(struct vsmfs_sb_info *sbi)
{
}
#endif

/**
 * vsmfs_write_super_locked() - write the superblock kept in DRAM to PM
 * @sbi: the file system; its s_sb_lock held
 *
 * The superblock update. The new superblock is built in DRAM
 * (sbi->s_dsb) and reaches PM only through non-temporal stores, so no line
 * of either copy can be written back before its turn. Order:
 *
 *   1. the backup (block 1, or the last block), non-temporal, fence:
 *      the backup is durable and whole;
 *   2. then the primary (block 0), non-temporal, fence.
 *
 * A crash during 1 tears at most the backup, the primary still holds the
 * old superblock; a crash during 2 tears at most the primary, and the
 * backup holds the new one. Mount and fsck fall back to the backup when
 * the primary fails its checksum.
 */
void vsmfs_write_super_locked(struct vsmfs_sb_info *sbi)
{
	struct vsmfs_dsb *dsb = sbi->s_dsb;

	lockdep_assert_held(&sbi->s_sb_lock);
	dsb->s_write_time = cpu_to_le64(ktime_get_real_seconds());
	dsb->s_checksum = cpu_to_le32(vsmfs_sb_csum(dsb));
	if (vsmfs_pmlog_misorder_sb()) {
		vsmfs_write_super_misordered(sbi);
		return;
	}
	vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, sbi->s_layout.sb_backup), dsb, sizeof(*dsb));
	vsmfs_fence();
	vsmfs_memcpy_nt(vsmfs_blk_ptr(sbi, VSMFS_SB_BLOCK), dsb, sizeof(*dsb));
	vsmfs_fence();
}

/**
 * vsmfs_set_label() - change the volume label
 * @sbi: the file system, mounted read-write
 * @label: the new label, not NUL terminated
 * @len: its length, at most VSMFS_LABEL_LEN
 *
 * The label is stored NUL padded in both superblock copies by
 * vsmfs_write_super_locked(), whose order keeps one copy whole across a
 * crash: after it, the old or the new label, never a torn one.
 *
 * Return: 0, or -EROFS if errors=remount-ro has acted.
 */
int vsmfs_set_label(struct vsmfs_sb_info *sbi, const char *label, size_t len)
{
	struct vsmfs_dsb *dsb = sbi->s_dsb;

	if (READ_ONCE(sbi->s_error_ro))
		return -EROFS;
	spin_lock(&sbi->s_sb_lock);
	memset(dsb->s_label, 0, sizeof(dsb->s_label));
	memcpy(dsb->s_label, label, min_t(size_t, len, sizeof(dsb->s_label)));
	vsmfs_write_super_locked(sbi);
	spin_unlock(&sbi->s_sb_lock);
	return 0;
}

/**
 * vsmfs_set_clean() - mark the file system in use or cleanly unmounted
 * @sbi: the file system
 * @clean: true at a clean unmount, false while mounted read-write
 */
void vsmfs_set_clean(struct vsmfs_sb_info *sbi, bool clean)
{
	struct vsmfs_dsb *dsb = sbi->s_dsb;
	u32 state;

	spin_lock(&sbi->s_sb_lock);
	state = le32_to_cpu(dsb->s_state);
	if (clean)
		state |= VSMFS_STATE_CLEAN;
	else
		state &= ~VSMFS_STATE_CLEAN;
	dsb->s_state = cpu_to_le32(state);
	vsmfs_write_super_locked(sbi);
	spin_unlock(&sbi->s_sb_lock);
}

const char * const vsmfs_errors_names[] = {
	[VSMFS_ERRORS_RO]	= "remount-ro",
	[VSMFS_ERRORS_CONTINUE]	= "continue",
	[VSMFS_ERRORS_PANIC]	= "panic",
};

/* Store @func in a NUL padded error field of the superblock. */
static void vsmfs_error_func(u8 *field, const char *func)
{
	strscpy_pad((char *)field, func, VSMFS_ERROR_FUNC_LEN);
}

/**
 * vsmfs_errors_show() - the error state, for /sys/fs/vsmfs/<device>/errors
 * @sbi: the file system
 * @buf: a sysfs page
 *
 * Prints "state" (1 if VSMFS_STATE_ERROR is set), "count", then for the
 * first and the last error its time, function, line and inode, each as
 * "NAME VALUE" on a line of its own, and the errors= mode.
 *
 * Return: bytes printed.
 */
ssize_t vsmfs_errors_show(struct vsmfs_sb_info *sbi, char *buf)
{
	struct vsmfs_dsb d;

	spin_lock(&sbi->s_sb_lock);
	d = *sbi->s_dsb;
	spin_unlock(&sbi->s_sb_lock);
	return sysfs_emit(buf, "state %u\ncount %u\n"
			  "first_time %llu\nfirst_function %.*s\nfirst_line %u\nfirst_inode %llu\n"
			  "last_time %llu\nlast_function %.*s\nlast_line %u\nlast_inode %llu\n"
			  "mode %s\n",
			  !!(le32_to_cpu(d.s_state) & VSMFS_STATE_ERROR),
			  le32_to_cpu(d.s_error_count), le64_to_cpu(d.s_first_error_time),
			  VSMFS_ERROR_FUNC_LEN, d.s_first_error_func,
			  le32_to_cpu(d.s_first_error_line), le64_to_cpu(d.s_first_error_ino),
			  le64_to_cpu(d.s_last_error_time), VSMFS_ERROR_FUNC_LEN,
			  d.s_last_error_func, le32_to_cpu(d.s_last_error_line),
			  le64_to_cpu(d.s_last_error_ino),
			  vsmfs_errors_names[READ_ONCE(sbi->s_errors)]);
}

/**
 * __vsmfs_fs_error() - report, record and act on a file system error
 * @sb: the file system
 * @func: function that found it
 * @line: its source line
 * @ino: inode involved, 0 if none
 * @fmt: printf format of the message
 *
 * Called through vsmfs_fs_error(), which vsmfs.h documents. The error
 * state is written with vsmfs_write_super_locked(): durable on return.
 */
void __vsmfs_fs_error(struct super_block *sb, const char *func, unsigned int line,
		      u64 ino, const char *fmt, ...)
{
	struct vsmfs_sb_info *sbi = VSMFS_SB(sb);
	struct vsmfs_dsb *dsb = sbi->s_dsb;
	struct va_format vaf;
	va_list args;
	u64 now;
	u32 count;

	if (__ratelimit(&sbi->s_error_rs)) {
		va_start(args, fmt);
		vaf.fmt = fmt;
		vaf.va = &args;
		if (ino)
			pr_crit("vsmfs (%s): error: %s:%u: inode %llu: %pV\n", sb->s_id, func,
				line, ino, &vaf);
		else
			pr_crit("vsmfs (%s): error: %s:%u: %pV\n", sb->s_id, func, line, &vaf);
		va_end(args);
	}

	/* Not before the superblock is loaded, nor on a read-only device. */
	if (dsb && !bdev_read_only(sb->s_bdev)) {
		now = ktime_get_real_seconds();
		spin_lock(&sbi->s_sb_lock);
		dsb->s_state = cpu_to_le32(le32_to_cpu(dsb->s_state) | VSMFS_STATE_ERROR);
		count = le32_to_cpu(dsb->s_error_count);
		if (!count) {
			dsb->s_first_error_time = cpu_to_le64(now);
			dsb->s_first_error_ino = cpu_to_le64(ino);
			dsb->s_first_error_line = cpu_to_le32(line);
			vsmfs_error_func(dsb->s_first_error_func, func);
		}
		if (count < U32_MAX)
			dsb->s_error_count = cpu_to_le32(count + 1);
		dsb->s_last_error_time = cpu_to_le64(now);
		dsb->s_last_error_ino = cpu_to_le64(ino);
		dsb->s_last_error_line = cpu_to_le32(line);
		vsmfs_error_func(dsb->s_last_error_func, func);
		vsmfs_write_super_locked(sbi);
		spin_unlock(&sbi->s_sb_lock);
	}

	switch (READ_ONCE(sbi->s_errors)) {
	case VSMFS_ERRORS_PANIC:
		panic("vsmfs (%s): panic forced after error\n", sb->s_id);
	case VSMFS_ERRORS_RO:
		if (xchg(&sbi->s_error_ro, true))
			break;
		/*
		 * New writers see SB_RDONLY and fail with EROFS; writers
		 * already past mnt_want_write() find their commit refused
		 * (vsmfs_trans_commit()), so PM keeps the last transaction
		 * committed before the error. The store of s_error_ro is
		 * ordered before the flag, as ext4 orders its own.
		 */
		smp_wmb();
		/*
		 * What the running transaction holds will be dropped, and
		 * syncfs(2) of a read-only file system asks nothing of it:
		 * report the loss to each file open here (s_wb_err) now.
		 */
		errseq_set(&sb->s_wb_err, -EIO);
		sb->s_flags |= SB_RDONLY;
		pr_crit("vsmfs (%s): file system made read-only after an error\n", sb->s_id);
		schedule_work(&sbi->s_error_work);
		break;
	default:
		break;
	}
}
