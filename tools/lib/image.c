// SPDX-License-Identifier: GPL-2.0
/*
 * The image reader of fsck.vsmfs and vsmfs-inspect: blocks of a device or
 * image file as a mount would see them after journal recovery. The
 * journal is read as recovery reads it (jcore.c holds the rules): header
 * copies of an interrupted update applied, a swap cut short undone, the
 * commit area discarded, and of the versions of each block, the latest
 * committed one in place of its home block.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vsmfs_format.h"
#include "../tools.h"

struct image img = { .fd = -1 };

/*
 * Open the device or image file @path with @flags (O_RDONLY or O_RDWR,
 * O_EXCL to refuse a mounted block device): a block device with O_DIRECT,
 * as the module writes it through DAX and its page cache may be stale.
 * Returns 0, or -1 after saying why not.
 */
int image_open(const char *path, int flags)
{
	struct stat st;
	u64 bytes;

	img.path = path;
	if (stat(path, &st))
		return -fail(1, "%s: %s", path, strerror(errno));
	if (S_ISBLK(st.st_mode))
		flags |= O_DIRECT;
	else
		flags &= ~O_EXCL;
	img.fd = open_device(path, flags, &bytes);
	if (img.fd < 0)
		return -1;
	img.blocks = bytes >> VSMFS_BLOCK_SHIFT;
	return 0;
}

/* Read or write @count blocks from @blk; any failure is fatal. */
void dev_io(bool wr, u64 blk, u64 count, void *buf)
{
	u64 len = count << VSMFS_BLOCK_SHIFT, off = blk << VSMFS_BLOCK_SHIFT;
	char *p = buf;

	if (blk + count > img.blocks || blk + count < blk)
		fatal("%s: block %" PRIu64 "+%" PRIu64 " is past the end of the device",
		      img.path, blk, count);
	while (len) {
		ssize_t n = wr ? pwrite(img.fd, p, len, (off_t)off) :
				 pread(img.fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("%s: %s at block %" PRIu64 ": %s", img.path, wr ? "write" : "read",
			      off >> VSMFS_BLOCK_SHIFT, n ? strerror(errno) : "short transfer");
		p += n;
		len -= (u64)n;
		off += (u64)n;
	}
}

/* Read blocks as they are after the journal replay, if one is pending. */
void read_blocks(u64 blk, u64 count, void *buf)
{
	u32 lo = 0, hi = img.ov_count, i;

	dev_io(false, blk, count, buf);
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (img.ov_home[mid] < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < img.ov_count && img.ov_home[i] < blk + count; i++)
		memcpy((u8 *)buf + ((img.ov_home[i] - blk) << VSMFS_BLOCK_SHIFT),
		       img.ov_data + ((u64)i << VSMFS_BLOCK_SHIFT), VSMFS_BLOCK_SIZE);
}

/* A whole region, read through the overlay into new memory. */
void *read_region(u64 start, u64 blocks)
{
	u8 *buf = xalloc(blocks << VSMFS_BLOCK_SHIFT);
	u64 done = 0;

	while (done < blocks) {
		u64 n = blocks - done < 1024 ? blocks - done : 1024;

		read_blocks(start + done, n, buf + (done << VSMFS_BLOCK_SHIFT));
		done += n;
	}
	return buf;
}

static void index_tree(struct index_walk *w, u64 ptr, int depth, u64 key0)
{
	const __le64 *e;
	u64 i;

	if (!ptr)
		return;
	e = w->block(w, ptr, depth);
	if (!e)
		return;
	for (i = 0; i < VSMFS_IND_ENTRIES; i++) {
		if (depth == 1)
			w->entry(w, key0 + i, le64_to_cpu(e[i]));
		else
			index_tree(w, le64_to_cpu(e[i]), 1, key0 + i * VSMFS_IND_ENTRIES);
	}
}

/*
 * Walk the index of @di: its direct entries, then its single and double
 * indirect trees, the entries in key order.
 */
void index_walk(struct index_walk *w, const struct vsmfs_dinode *di)
{
	int i;

	for (i = 0; i < VSMFS_NDIRECT; i++)
		w->entry(w, i, le64_to_cpu(di->i_direct[i]));
	index_tree(w, le64_to_cpu(di->i_ind), 1, VSMFS_NDIRECT);
	index_tree(w, le64_to_cpu(di->i_dind), 2, VSMFS_NDIRECT + VSMFS_IND_ENTRIES);
}

static int ver_home_cmp(const void *a, const void *b)
{
	const struct vsmfs_jver *x = a, *y = b;

	return x->home < y->home ? -1 : x->home > y->home;
}

/* Stop at @stage: @why about header @at. */
static bool jstop(struct journal *j, enum jstage stage, const char *why, u32 at)
{
	j->stage = stage;
	j->why = why;
	j->at = at;
	return false;
}

/*
 * Read the journal of the file system laid out as @l and apply the
 * recovery rules to the headers in DRAM; @j->stage says how far it got.
 * Nothing is written, and the overlay is not set (journal_overlay()).
 * Returns true if the journal can be recovered.
 */
bool journal_load(struct journal *j, const struct vsmfs_layout *l)
{
	struct vsmfs_djhdr *copies;
	u32 n, i, nchanged, *changed;
	const char *why;

	memset(j, 0, sizeof(*j));
	j->jsb = xalloc(VSMFS_BLOCK_SIZE);
	dev_io(false, l->journal_start, 1, j->jsb);
	j->sb_why = vsmfs_jsb_check(j->jsb, l->journal_blocks, &j->s);
	if (j->sb_why && !j->s.only_reserved)
		return jstop(j, J_SUPER, j->sb_why, 0);
	n = j->s.n;
	j->start = l->journal_start + 2 + j->s.hdr_blocks;
	j->hdr = xalloc(((u64)j->s.hdr_blocks + 1) << VSMFS_BLOCK_SHIFT);
	dev_io(false, l->journal_start + 1, j->s.hdr_blocks + 1, j->hdr);
	copies = j->hdr + (u64)j->s.hdr_blocks * VSMFS_JH_PER_BLOCK;
	why = vsmfs_jcopies_check(copies, j->s.hcopy, n, &j->at);
	if (why)
		return jstop(j, J_COPY, why, j->at);
	for (i = 0; i < j->s.hcopy; i++)
		j->hdr[vsmfs_jh_num(&copies[i])] = copies[i];

	j->jh = xalloc((u64)n * sizeof(*j->jh));
	for (i = 0; i < n; i++) {
		why = vsmfs_jh_decode(&j->hdr[i], i, n, i < j->s.ckpt, l, &j->jh[i]);
		if (why && !j->nbad++)
			jstop(j, J_HEADER, why, i);
	}
	if (j->nbad)
		return false;

	/* A journal block named by two headers (a swap cut short) is given back. */
	j->jb_owner = xalloc((u64)n * sizeof(*j->jb_owner));
	changed = xalloc((u64)n * sizeof(*changed));
	why = vsmfs_jremap(j->jh, n, j->s.ckpt, j->jb_owner, changed, &j->nremap, &j->at);
	if (why) {
		free(changed);
		return jstop(j, J_REMAP, why, j->at);
	}
	for (i = 0; i < j->nremap; i++) {
		j->hdr[changed[i]].h_state = cpu_to_le64(vsmfs_jh_state(&j->jh[changed[i]],
									changed[i]));
		j->hdr[changed[i]].h_map = cpu_to_le64(vsmfs_jh_map(&j->jh[changed[i]]));
	}
	j->ver = xalloc((u64)(j->s.ckpt ? j->s.ckpt : 1) * sizeof(*j->ver));
	why = vsmfs_jrecover(j->jh, j->s.ckpt, j->s.last, j->ver, changed, &nchanged, &j->at);
	free(changed);
	if (why)
		return jstop(j, J_RECOVER, why, j->at);
	for (i = 0; i < j->s.ckpt; i++) {
		if (!vsmfs_jh_is_latest(&j->jh[i]))
			continue;
		j->ver[j->nver].home = j->jh[i].home;
		j->ver[j->nver++].pos = i;
	}
	qsort(j->ver, j->nver, sizeof(*j->ver), ver_home_cmp);
	return true;
}

/*
 * Make read_blocks() see the latest versions of @j that differ from their
 * home block; those equal to it (a mount replayed them, or a checkpoint
 * was cut short) are dropped from @j->ver.
 */
void journal_overlay(struct journal *j)
{
	u8 *home = xalloc(VSMFS_BLOCK_SIZE);
	u32 i, m = 0;

	img.ov_data = xalloc((u64)j->nver << VSMFS_BLOCK_SHIFT);
	img.ov_home = xalloc((u64)(j->nver ? j->nver : 1) * sizeof(*img.ov_home));
	for (i = 0; i < j->nver; i++) {
		u8 *v = img.ov_data + ((u64)m << VSMFS_BLOCK_SHIFT);

		dev_io(false, j->start + j->jh[j->ver[i].pos].jb, 1, v);
		dev_io(false, j->ver[i].home, 1, home);
		if (!memcmp(v, home, VSMFS_BLOCK_SIZE))
			continue;
		img.ov_home[m] = j->ver[i].home;
		j->ver[m++] = j->ver[i];
	}
	j->nver = m;
	img.ov_count = m;
	free(home);
}

/* What stopped journal_load(), as a message naming the place; NULL if nothing. */
const char *journal_problem(const struct journal *j, const struct vsmfs_layout *l)
{
	static char buf[512];
	const struct vsmfs_djhdr *d = j->hdr ? &j->hdr[j->at] : NULL;

	switch (j->stage) {
	case J_OK:
		return NULL;
	case J_SUPER:
		snprintf(buf, sizeof(buf), "journal superblock (block %" PRIu64 "): %s (magic"
			 " 0x%08x, %u journal blocks in %u header blocks for %u in %u,"
			 " checkpoint %u, last transaction at %u, commit %" PRIu64
			 ", %u header copies)", l->journal_start, j->why,
			 le32_to_cpu(j->jsb->j_magic), le32_to_cpu(j->jsb->j_blocks),
			 le32_to_cpu(j->jsb->j_hdr_blocks), j->s.n, j->s.hdr_blocks, j->s.ckpt,
			 j->s.last, j->s.commit, j->s.hcopy);
		break;
	case J_COPY:
		snprintf(buf, sizeof(buf), "journal: header copy %u: %s", j->at, j->why);
		break;
	case J_HEADER:
		snprintf(buf, sizeof(buf), "journal: header %u: %s (number %u, journal block %u,"
			 " flags 0x%x, home block %" PRIu64 ")%s", j->at, j->why, vsmfs_jh_num(d),
			 (u32)(le64_to_cpu(d->h_map) & VSMFS_JH_JB_MASK),
			 (u32)(le64_to_cpu(d->h_state) & VSMFS_JH_FLAGS),
			 (u64)(le64_to_cpu(d->h_map) >> VSMFS_JH_HOME_SHIFT),
			 j->nbad > 1 ? "; more headers are bad" : "");
		break;
	case J_REMAP:
		snprintf(buf, sizeof(buf), "journal: header %u maps journal block %u, already"
			 " mapped by header %u", j->at, j->jh[j->at].jb,
			 j->jb_owner[j->jh[j->at].jb]);
		break;
	case J_RECOVER:
		snprintf(buf, sizeof(buf), "journal: header %u, block %" PRIu64 ": %s", j->at,
			 j->jh[j->at].home, j->why);
		break;
	}
	return buf;
}

void journal_free(struct journal *j)
{
	free(j->jsb);
	free(j->hdr);
	free(j->jh);
	free(j->jb_owner);
	free(j->ver);
	memset(j, 0, sizeof(*j));
}
