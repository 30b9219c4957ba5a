// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs bad data frames: the frames the platform reported failed (a
 * memory failure, vsmfs_notify_failure() in mfail.c) or the device listed
 * as bad blocks at mount. They are kept as a set in DRAM (sbi->s_bad, the
 * frame numbers relative to the data area), which the read, write, fault
 * and metadata paths look into while it is not empty, and on PM as the
 * bad-frame list of the format (struct vsmfs_dbadlist, block 1), read at
 * mount. What a bad frame means for what holds it is mfail.c's.
 *
 * Ordering of an append (vsmfs_bad_add()): the entry is stored, flushed
 * and fenced; then the word of magic and count, one 8-byte store, flushed
 * and fenced; then the superblock gets VSMFS_FEATURE_RO_COMPAT_BADFRAMES
 * (vsmfs_write_super_locked(), its own ordered update) if it has not. A
 * crash before the count leaves the entry outside the list; before the
 * flag, a list no mount reads. Either way the frame is only not
 * remembered: the platform reports a failed frame again (its bad blocks,
 * read at the next mount).
 */
#include <linux/xarray.h>
#include "vsmfs.h"
#include "badframe.h"

static struct vsmfs_dbadlist __pm *vsmfs_badlist(struct vsmfs_sb_info *sbi)
{
	return vsmfs_blk_ptr(sbi, VSMFS_BADLIST_BLOCK);
}

/* Whether the format has the place of the list: block 1 unused. */
static bool vsmfs_badlist_place(struct vsmfs_sb_info *sbi)
{
	return le32_to_cpu(sbi->s_dsb->s_feature_incompat) & VSMFS_FEATURE_INCOMPAT_SB_LAST;
}

/**
 * vsmfs_bad_load() - read the bad-frame list at mount
 * @sbi: the file system, its superblock and layout read, s_bad and
 *	s_bad_mutex initialized
 *
 * Return: 0, -EFSCORRUPTED if the superblock has the feature and the list
 * is damaged (fsck.vsmfs repairs it), or -ENOMEM.
 */
int vsmfs_bad_load(struct vsmfs_sb_info *sbi)
{
	const struct vsmfs_dbadlist *bl;
	u32 i, n;
	int ret;

	if (!(le32_to_cpu(sbi->s_dsb->s_feature_ro_compat) & VSMFS_FEATURE_RO_COMPAT_BADFRAMES))
		return 0;
	if (!vsmfs_badlist_place(sbi)) {
		vsmfs_err(sbi->s_sb, "bad-frame list without the sb_last feature: run fsck.vsmfs");
		return -EFSCORRUPTED;
	}
	bl = vsmfs_pm_view(vsmfs_badlist(sbi));
	n = le32_to_cpu(bl->b_count);
	if (le32_to_cpu(bl->b_magic) != VSMFS_BADLIST_MAGIC || n > VSMFS_BADLIST_MAX) {
		vsmfs_err(sbi->s_sb, "bad-frame list in block %u is damaged: run fsck.vsmfs",
			  VSMFS_BADLIST_BLOCK);
		return -EFSCORRUPTED;
	}
	for (i = 0; i < n; i++) {
		u64 f = le64_to_cpu(bl->b_frames[i]);

		if (f >= sbi->s_layout.data_pages) {
			vsmfs_err(sbi->s_sb, "bad-frame list entry %u (%llu) out of range: run fsck.vsmfs",
				  i, f);
			return -EFSCORRUPTED;
		}
		ret = xa_insert(&sbi->s_bad, f, xa_mk_value(1), GFP_KERNEL);
		if (ret && ret != -EBUSY)
			return ret;
		if (!ret)
			sbi->s_nbad++;
	}
	sbi->s_bad_listed = n;
	if (n)
		vsmfs_warn(sbi->s_sb, "%u data frames are bad (fsck.vsmfs -n lists the files that hold them)",
			   n);
	return 0;
}

/* Append @frame to the list on PM. Context: s_bad_mutex held. */
static void vsmfs_badlist_append(struct vsmfs_sb_info *sbi, u64 frame)
{
	struct vsmfs_dbadlist __pm *bl = vsmfs_badlist(sbi);
	u32 n = sbi->s_bad_listed;
	u64 word;

	/* A list not started yet: block 1 is zero (mkfs), or left over. */
	if (!n && le32_to_cpu(vsmfs_pm_read(&bl->b_magic)) != VSMFS_BADLIST_MAGIC)
		vsmfs_pm_write(&bl->b_reserved, 0);
	vsmfs_pm_write(&bl->b_frames[n], cpu_to_le64(frame));
	vsmfs_flush(&bl->b_frames[n], sizeof(bl->b_frames[n]));
	vsmfs_flush(&bl->b_reserved, sizeof(bl->b_reserved));
	vsmfs_fence();
	/* Magic and count in one store: b_count follows b_magic, 8-byte aligned. */
	word = (u64)VSMFS_BADLIST_MAGIC | (u64)(n + 1) << 32;
	vsmfs_pm_write((__le64 __pm *)&bl->b_magic, cpu_to_le64(word));
	vsmfs_persist(&bl->b_magic, 8);
	sbi->s_bad_listed = n + 1;
	if (!(le32_to_cpu(sbi->s_dsb->s_feature_ro_compat) & VSMFS_FEATURE_RO_COMPAT_BADFRAMES)) {
		spin_lock(&sbi->s_sb_lock);
		le32_add_cpu(&sbi->s_dsb->s_feature_ro_compat, VSMFS_FEATURE_RO_COMPAT_BADFRAMES);
		vsmfs_write_super_locked(sbi);
		spin_unlock(&sbi->s_sb_lock);
	}
}

/**
 * vsmfs_bad_add() - remember a data frame as bad
 * @sbi: the file system
 * @frame: the frame, relative to the data area
 *
 * From now on the read, write, fault and metadata paths see the frame bad.
 * It is also appended to the list on PM unless the file system is
 * read-only, the format has no place for it (no sb_last) or the list is
 * full: then it is remembered for this mount only, with a warning.
 *
 * Context: process context; takes s_bad_mutex and s_sb_lock.
 * Return: 1 if the frame was not known bad, 0 if it was, or -ENOMEM.
 */
int vsmfs_bad_add(struct vsmfs_sb_info *sbi, u64 frame)
{
	struct super_block *sb = sbi->s_sb;
	int ret;

	if (frame >= sbi->s_layout.data_pages)
		return 0;
	mutex_lock(&sbi->s_bad_mutex);
	ret = xa_insert(&sbi->s_bad, frame, xa_mk_value(1), GFP_KERNEL);
	if (ret) {
		mutex_unlock(&sbi->s_bad_mutex);
		return ret == -EBUSY ? 0 : ret;
	}
	/*
	 * Seen by the paths that check (vsmfs_blk_bad(): the count, then the
	 * set) before anything is done about the frame: the entry is stored
	 * before the count (xa_insert() releases its lock), and the barrier
	 * orders both before what the caller does next.
	 */
	WRITE_ONCE(sbi->s_nbad, sbi->s_nbad + 1);
	smp_mb(); /* the count before the caller's next loads and stores */
	if (sb_rdonly(sb) || READ_ONCE(sbi->s_error_ro))
		vsmfs_warn(sb, "bad frame %llu remembered until unmount only (read-only)", frame);
	else if (!vsmfs_badlist_place(sbi))
		vsmfs_warn(sb, "bad frame %llu remembered until unmount only (no sb_last feature)",
			   frame);
	else if (sbi->s_bad_listed >= VSMFS_BADLIST_MAX)
		vsmfs_warn(sb, "bad frame %llu remembered until unmount only (bad-frame list full)",
			   frame);
	else
		vsmfs_badlist_append(sbi, frame);
	mutex_unlock(&sbi->s_bad_mutex);
	return 1;
}

/**
 * vsmfs_bad_show() - the bad frames, for sysfs
 * @sbi: the file system
 * @buf: a page
 *
 * Return: bytes written: one device block number a line, as many as fit.
 */
ssize_t vsmfs_bad_show(struct vsmfs_sb_info *sbi, char *buf)
{
	unsigned long f;
	void *entry;
	ssize_t n = 0;

	xa_for_each(&sbi->s_bad, f, entry) {
		if (n > PAGE_SIZE - 24)
			break;
		n += sysfs_emit_at(buf, n, "%llu\n", sbi->s_layout.data_start + f);
	}
	return n;
}

/**
 * vsmfs_bad_destroy() - forget the bad frames at unmount
 * @sbi: the file system
 */
void vsmfs_bad_destroy(struct vsmfs_sb_info *sbi)
{
	xa_destroy(&sbi->s_bad);
}
