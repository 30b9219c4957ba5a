/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the vsmfs user-space tools. */
#ifndef _VSMFS_TOOLS_H
#define _VSMFS_TOOLS_H

#include <getopt.h>
#include <stdio.h>
#include <linux/kernel.h>

#include "verify.h"
#include "jcore.h"

#define VSMFS_TOOLS_VERSION	"0.1"

/* Exit status of a usage error (fsck(8)'s, shared by the other tools). */
#define EXIT_USAGE		16
/* Exit status of an operational error: unreadable device, out of memory. */
#define EXIT_OPERATIONAL	8

extern const char *progname;

int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
extern void (*fatal_hook)(void);
void *xalloc(u64 size);
void *xgrow(void *p, u64 n, u64 *cap, size_t size);
int parse_size(const char *s, u64 *out);
int parse_uuid(const char *s, u8 uuid[16]);
void format_uuid(const u8 uuid[16], char out[37]);
int open_device(const char *path, int flags, u64 *bytes);
struct vsmfs_dsb;
void sb_clear_errors(struct vsmfs_dsb *sb);
struct vsmfs_layout;
void print_lpages(const struct vsmfs_layout *l);
void print_fc_areas(const struct vsmfs_layout *l, u32 areas, u32 area_blocks);

/* The last rows of every tool's table of long options. */
#define COMMON_LONG_OPTIONS					\
	{ "version", no_argument, NULL, 'V' },			\
	{ "help", no_argument, NULL, 'h' },			\
	{ NULL, 0, NULL, 0 }

void common_option(int c, void (*usage)(FILE *f), int usage_status)
	__attribute__((noreturn));

static inline bool tbit(const u8 *map, u64 n)
{
	return map[n / 8] >> (n % 8) & 1;
}

/*
 * The device or image file a tool reads (tools/lib/image.c), with the
 * overlay of the latest committed versions still in the journal.
 */
struct image {
	const char	*path;
	int		fd;
	u64		blocks;		/* device blocks */
	u32		ov_count;	/* versions in the overlay */
	u64		*ov_home;	/* their home blocks, ascending */
	u8		*ov_data;	/* their contents */
};

extern struct image img;

int image_open(const char *path, int flags);
void dev_io(bool wr, u64 blk, u64 count, void *buf);
void read_blocks(u64 blk, u64 count, void *buf);
void *read_region(u64 start, u64 blocks);

/**
 * struct fc_ref - a valid fast-commit record of a journal (journal_load())
 * @at: its offset from the start of the first area
 * @len: its length in bytes
 * @slot: the inode table slot it changes
 * @seq: its order among the records of the slot
 */
struct fc_ref {
	u32	at, len, slot;
	u64	seq;
};

/**
 * struct fc_part - a part of a valid fast-commit record (journal_load())
 * @rec: the record (an index into journal.rec)
 * @dir: 0 for the record's own part (its slot's words, page table entries
 *	and bitmap bits), 1 for its directory's (VSMFS_FC_KEY_DIR and the
 *	spans after it), 2 for an unlinked inode's (VSMFS_FC_KEY_GONE)
 * @slot: the slot the part applies in the order of: the record's, the
 *	directory's, the unlinked inode's
 * @seq: its order there: the record's, or that of its key
 */
struct fc_part {
	u32	rec, dir, slot;
	u64	seq;
};

/* Where journal_load() stopped. */
enum jstage { J_OK, J_SUPER, J_COPY, J_HEADER, J_REMAP, J_RECOVER };

/**
 * struct journal - a journal, as recovery at mount sees it
 * @jsb: the journal superblock
 * @s: its fields, decoded
 * @sb_why: what vsmfs_jsb_check() said, NULL if nothing
 * @stage: J_OK, or the step that found the journal unrecoverable
 * @why: why, at @stage
 * @at: the header (or header copy) at fault
 * @nbad: headers vsmfs_jh_decode() refused
 * @hdr: the headers, header copies applied and a swap cut short undone
 * @jh: the headers, decoded
 * @jb_owner: the header naming each journal block
 * @nremap: headers changed to undo a swap cut short
 * @ver: the latest committed versions that differ from their home block,
 *	by home block
 * @nver: how many
 * @start: first journal block on the device
 * @fc: the fast-commit areas as read, NULL without them
 * @fc_bytes: bytes of each area
 * @rec: the valid records of every area, in the order of the areas and,
 *	in each, of their offsets
 * @nrec: how many
 * @part: the parts of the records, in the order a mount applies them (by
 *	slot, then order; then by record and part, where mount leaves it open)
 * @npart: how many
 * @fc_why: what a valid record names that the file system has not, NULL if
 *	nothing: a mount then refuses the journal, and no record is applied
 * @fc_at: the first such record in the order of @rec (an index into @rec)
 */
struct journal {
	struct vsmfs_djsb	*jsb;
	struct vsmfs_jsb_state	s;
	const char		*sb_why;
	enum jstage		stage;
	const char		*why;
	u32			at, nbad;
	struct vsmfs_djhdr	*hdr;
	struct vsmfs_jh		*jh;
	u32			*jb_owner;
	u32			nremap;
	struct vsmfs_jver	*ver;
	u32			nver;
	u64			start;
	u8			*fc;
	u32			fc_bytes;
	struct fc_ref		*rec;
	u32			nrec;
	struct fc_part		*part;
	u32			npart;
	const char		*fc_why;
	u32			fc_at;
};

/**
 * struct index_walk - a walk over the index of an inode (index_walk())
 * @entry: called for each entry of the index, 0 for none, with its key
 * @block: gives the entries of the index block at logical page @ptr, read
 *	into a buffer of its own for each @depth (1 for a block of entries,
 *	2 for a block of single indirect pointers), or NULL to pass it over
 */
struct index_walk {
	void (*entry)(struct index_walk *w, u64 key, u64 e);
	const __le64 *(*block)(struct index_walk *w, u64 ptr, int depth);
};

void index_walk(struct index_walk *w, const struct vsmfs_dinode *di);

bool journal_load(struct journal *j, const struct vsmfs_layout *l);
void journal_overlay(struct journal *j, const struct vsmfs_layout *l);
u32 journal_geometry_of(const struct vsmfs_djsb *jsb, u64 journal_blocks, u32 *hdr_blocks);

/* The fast-commit record @r of @j, its area and its offset in the area. */
static inline const struct vsmfs_dfc_rec *fc_record(const struct journal *j,
						    const struct fc_ref *r)
{
	return (const struct vsmfs_dfc_rec *)(j->fc + r->at);
}

static inline u32 fc_area(const struct journal *j, const struct fc_ref *r)
{
	return r->at / j->fc_bytes;
}

static inline u32 fc_offset(const struct journal *j, const struct fc_ref *r)
{
	return r->at % j->fc_bytes;
}
const char *journal_problem(const struct journal *j, const struct vsmfs_layout *l);
void journal_free(struct journal *j);

#endif /* _VSMFS_TOOLS_H */
