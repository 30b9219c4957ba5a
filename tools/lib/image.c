// SPDX-License-Identifier: GPL-2.0
/*
 * The image reader of fsck.vsmfs and vsmfs-inspect: blocks of a device or
 * image file as a mount would see them after journal recovery. The
 * journal is read as recovery reads it (jcore.c holds the rules): header
 * copies of an interrupted update applied, a swap cut short undone, the
 * commit area discarded, and of the versions of each block, the latest
 * committed one in place of its home block. The valid records of the
 * fast-commit areas are then applied over that, in the order a mount
 * replays them.
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

/* The first block of the overlay (sorted by home) at or past @blk. */
static u32 ov_find(u64 blk)
{
	u32 lo = 0, hi = img.ov_count;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (img.ov_home[mid] < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where block @blk is in the overlay; it must be there. */
static u8 *ov_block(u64 blk)
{
	return img.ov_data + ((u64)ov_find(blk) << VSMFS_BLOCK_SHIFT);
}

/* Read blocks as they are after the journal replay, if one is pending. */
void read_blocks(u64 blk, u64 count, void *buf)
{
	u32 i;

	dev_io(false, blk, count, buf);
	for (i = ov_find(blk); i < img.ov_count && img.ov_home[i] < blk + count; i++)
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

/* Replay order of the parts of fast-commit records: by slot, then by order in the slot. */
static int fc_part_cmp(const void *a, const void *b)
{
	const struct fc_part *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->dir < y->dir ? -1 : x->dir > y->dir;
}

/*
 * Where the parts of records store (fc_apply()): over the overlay, which
 * then holds every block they name; or, @gather, nowhere, the blocks
 * gathered in @blk instead.
 */
struct fc_sink {
	bool	gather;
	u64	*blk, n, cap;
};

/* How fc_store() stores: the words, their bits set, their bits cleared. */
enum { FC_WORDS, FC_SET, FC_CLEAR };

/* @n words from @val at word @word of block @blk to @s, or (@bits) their bits set or cleared. */
static void fc_store(struct fc_sink *s, u64 blk, u32 word, const __le64 *val, u32 n, int bits)
{
	__le64 *dst;

	if (s->gather) {
		if (s->n && s->blk[s->n - 1] == blk)
			return;
		s->blk = xgrow(s->blk, s->n, &s->cap, sizeof(*s->blk));
		s->blk[s->n++] = blk;
		return;
	}
	dst = (__le64 *)ov_block(blk) + word;
	if (bits == FC_SET)
		*dst |= *val;
	else if (bits == FC_CLEAR)
		*dst &= ~*val;
	else
		memcpy(dst, val, (size_t)n * 8);
}

#define FC_BLOCK_WORDS	(VSMFS_BLOCK_SIZE / 8)

/* The words of @slot that @mask names, from @val, to @s (NULL: only checked). */
static const char *fc_slot(const struct vsmfs_layout *l, u64 slot, u32 mask, const __le64 *val,
			   struct fc_sink *s)
{
	u64 blk = l->itable_start + slot / VSMFS_INODES_PER_BLOCK;
	u32 first = slot % VSMFS_INODES_PER_BLOCK * (VSMFS_INODE_SIZE / 8), b;

	if (!slot || slot >= l->inodes)
		return "slot out of range";
	for (b = 0; s && b < VSMFS_INODE_SIZE / 8; b++)
		if (mask & 1U << b)
			fc_store(s, blk, first + b, val++, 1, FC_WORDS);
	return NULL;
}

/* Entry @e of a record to @s (NULL: only checked), or what it names that @l has not. */
static const char *fc_entry(const struct vsmfs_layout *l, const struct vsmfs_fc_ent *e,
			    struct fc_sink *s)
{
	u64 w = e->where, blk;
	int bits = FC_WORDS;

	switch (e->kind) {
	case VSMFS_FC_KIND(VSMFS_FC_KEY_BITMAP):
	case VSMFS_FC_KIND(VSMFS_FC_KEY_BCLEAR):
		if (w >= DIV_ROUND_UP(l->lpages, 64))
			return "bitmap word out of range";
		blk = l->lbitmap_start + w / FC_BLOCK_WORDS;
		bits = e->kind == VSMFS_FC_KIND(VSMFS_FC_KEY_BCLEAR) ? FC_CLEAR : FC_SET;
		break;
	case VSMFS_FC_KIND(VSMFS_FC_KEY_IBITMAP):
		if (w >= DIV_ROUND_UP(l->inodes, 64))
			return "inode bitmap word out of range";
		blk = l->ibitmap_start + w / FC_BLOCK_WORDS;
		bits = FC_SET;
		break;
	case VSMFS_FC_KIND(VSMFS_FC_KEY_DIR):
	case VSMFS_FC_KIND(VSMFS_FC_KEY_GONE):
		return fc_slot(l, w, e->mask, e->val, s);
	case VSMFS_FC_KIND(VSMFS_FC_KEY_SPAN):
		blk = w / FC_BLOCK_WORDS;
		if (blk < l->data_start || blk >= l->blocks)
			return "directory block out of range";
		break;
	default:	/* a page table entry: vsmfs_fc_next() knows no other kind */
		if (!w || w >= l->lpages)
			return "logical page out of range";
		blk = l->ptable_start + w / VSMFS_PTES_PER_BLOCK;
		break;
	}
	if (s)
		fc_store(s, blk, w % FC_BLOCK_WORDS, e->val, e->n, bits);
	return NULL;
}

/*
 * Part @part of the valid record @r (0: its slot's, 1: its directory's,
 * 2: an unlinked inode's, -1: all) to @s, or, @s NULL, only checked against the layout @l, as
 * mount replays and checks it. Return: NULL, or what the part names that
 * @l has not.
 */
static const char *fc_apply(const struct vsmfs_dfc_rec *r, int part,
			    const struct vsmfs_layout *l, struct fc_sink *s)
{
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	const char *why = NULL;
	int cur = 0;

	if (part <= 0)
		why = fc_slot(l, le32_to_cpu(r->r_slot), le32_to_cpu(r->r_words),
			      (const __le64 *)(r + 1), s);
	vsmfs_fc_iter_init(&it, r);
	while (!why && !vsmfs_fc_next(&it, &e)) {
		if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR))
			cur = 1;
		else if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_GONE))
			cur = 2;
		if (part < 0 || part == cur)
			why = fc_entry(l, &e, s);
	}
	return why;
}

/*
 * The directory's and the unlinked inode's parts of valid record @rec
 * (@r), if it has them, at @p: their slots and orders. Return: how many.
 */
static u32 fc_more_parts(const struct vsmfs_dfc_rec *r, u32 rec, struct fc_part *p)
{
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	u32 n = 0;

	vsmfs_fc_iter_init(&it, r);
	while (!vsmfs_fc_next(&it, &e)) {
		if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR) ||
		    e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_GONE)) {
			p[n].rec = rec;
			p[n].slot = (u32)e.where;
			p[n].seq = e.seq;
			p[n].dir = e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR) ? 1 : 2;
			n++;
		}
	}
	return n;
}

/*
 * Read the fast-commit areas of @j and find their valid records: in each
 * area from its start, up to the first record vsmfs_fc_rec_check()
 * refuses. Each is checked against the layout @l as mount checks it, in
 * the order of the areas: the first that names what @l has not sets
 * @j->fc_why. Then the parts of the records, in the order mount applies
 * them.
 */
static void fc_load(struct journal *j, const struct vsmfs_layout *l)
{
	u32 areas = j->s.fc_areas, a, off, len;
	u64 blocks = (u64)areas * j->s.fc_area_blocks;

	if (!areas)
		return;
	j->fc_bytes = j->s.fc_area_blocks << VSMFS_BLOCK_SHIFT;
	j->fc = xalloc(blocks << VSMFS_BLOCK_SHIFT);
	dev_io(false, l->journal_start + j->s.fc_start, blocks, j->fc);
	j->rec = xalloc(blocks * (VSMFS_BLOCK_SIZE / 64) * sizeof(*j->rec));
	for (a = 0; a < areas; a++) {
		for (off = 0; off < j->fc_bytes; off += len) {
			u32 at = a * j->fc_bytes + off;
			const struct vsmfs_dfc_rec *r = (const void *)(j->fc + at);
			struct fc_ref *f = &j->rec[j->nrec];

			if (vsmfs_fc_rec_check(r, j->fc_bytes - off, j->s.count, &len))
				break;
			f->at = at;
			f->len = len;
			f->slot = le32_to_cpu(r->r_slot);
			f->seq = le64_to_cpu(r->r_seq);
			if (!j->fc_why) {
				j->fc_why = fc_apply(r, -1, l, NULL);
				j->fc_at = j->nrec;
			}
			j->nrec++;
		}
	}
	j->part = xalloc((u64)j->nrec * 3 * sizeof(*j->part));
	for (a = 0; a < j->nrec; a++) {
		struct fc_part *p = &j->part[j->npart++];

		p->rec = a;
		p->slot = j->rec[a].slot;
		p->seq = j->rec[a].seq;
		p->dir = 0;
		j->npart += fc_more_parts(fc_record(j, &j->rec[a]), a, p + 1);
	}
	qsort(j->part, j->npart, sizeof(*j->part), fc_part_cmp);
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
	fc_load(j, l);
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

static int u64_cmp(const void *a, const void *b)
{
	const u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/*
 * Apply the valid fast-commit records of @j over the overlay, part after
 * part in the order of @j->part, as mount replays them over the home
 * blocks: the blocks they change (inode table, page table, bitmaps,
 * directory blocks) are added to it.
 */
static void fc_overlay(const struct journal *j, const struct vsmfs_layout *l)
{
	struct fc_sink want = { .gather = true }, ov = { .gather = false };
	u64 *home, i, k, m = 0;
	u8 *data;

	for (i = 0; i < j->nrec; i++)
		fc_apply(fc_record(j, &j->rec[i]), -1, l, &want);
	if (want.n)
		qsort(want.blk, want.n, sizeof(*want.blk), u64_cmp);

	/* The blocks of the overlay and those wanted, merged, each once. */
	home = xalloc((img.ov_count + want.n) * sizeof(*home));
	data = xalloc((img.ov_count + want.n) << VSMFS_BLOCK_SHIFT);
	for (i = 0, k = 0; i < img.ov_count || k < want.n; m++) {
		u8 *d = data + (m << VSMFS_BLOCK_SHIFT);

		if (k == want.n || (i < img.ov_count && img.ov_home[i] <= want.blk[k])) {
			home[m] = img.ov_home[i];
			memcpy(d, img.ov_data + (i << VSMFS_BLOCK_SHIFT), VSMFS_BLOCK_SIZE);
			i++;
		} else {
			home[m] = want.blk[k];
			dev_io(false, want.blk[k], 1, d);
		}
		while (k < want.n && want.blk[k] == home[m])
			k++;
	}
	free(img.ov_home);
	free(img.ov_data);
	free(want.blk);
	img.ov_home = home;
	img.ov_data = data;
	img.ov_count = (u32)m;

	for (i = 0; i < j->npart; i++)
		fc_apply(fc_record(j, &j->rec[j->part[i].rec]), j->part[i].dir, l, &ov);
}

/*
 * Make read_blocks() see the latest versions of @j that differ from their
 * home block; those equal to it (a mount replayed them, or a checkpoint
 * was cut short) are dropped from @j->ver. Then, unless one of them names
 * what the file system laid out as @l has not, the valid fast-commit
 * records are applied over them as mount replays them: the overlay then
 * also holds the inode table and page table blocks they change, and its
 * blocks are no longer those of @j->ver, one for one.
 */
void journal_overlay(struct journal *j, const struct vsmfs_layout *l)
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
	if (j->nrec && !j->fc_why)
		fc_overlay(j, l);
}

/*
 * The journal blocks of a journal region of @journal_blocks and the header
 * blocks (*@hdr_blocks) its superblock @jsb calls for, whether it is sound
 * or not: with fast-commit areas that do not fit the region, those of the
 * whole region.
 */
u32 journal_geometry_of(const struct vsmfs_djsb *jsb, u64 journal_blocks, u32 *hdr_blocks)
{
	u64 fc = (u64)le32_to_cpu(jsb->j_fc_areas) * le32_to_cpu(jsb->j_fc_area_blocks);

	if (fc > journal_blocks / 4 || journal_blocks - fc < 16)
		fc = 0;
	return vsmfs_journal_geometry(journal_blocks - fc, hdr_blocks);
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
			 ", %u header copies, %u fast-commit areas of %u blocks)", l->journal_start,
			 j->why, le32_to_cpu(j->jsb->j_magic), le32_to_cpu(j->jsb->j_blocks),
			 le32_to_cpu(j->jsb->j_hdr_blocks), j->s.n, j->s.hdr_blocks, j->s.ckpt,
			 j->s.last, j->s.commit, j->s.hcopy, j->s.fc_areas, j->s.fc_area_blocks);
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
	free(j->fc);
	free(j->rec);
	free(j->part);
	memset(j, 0, sizeof(*j));
}
