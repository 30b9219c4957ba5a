// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs-inspect - print the layout, usage, journal state, virtual
 * superpage fragmentation and bad frames of a vsmfs file system on an
 * unmounted pmem device or image file, or the pages of one inode, without
 * changing anything.
 *
 * The device is opened read-only; a block device with O_DIRECT, as the
 * module writes it through DAX and the page cache may hold stale copies.
 * Metadata is read as a mount would see it after journal recovery: the
 * latest committed version of a block still in the journal is used in
 * place of its home block (header copies of an interrupted update are
 * applied first, the uncommitted commit area is ignored).
 *
 * Exit status: 0 success, 8 operational error (unreadable device, no vsmfs
 * file system, damaged structures that prevent the inspection), 16 usage
 * error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <blkid/blkid.h>

#include "../fs/vsmfs/verify.h"
#include "../fs/vsmfs/jcore.h"
#include "tools.h"

#define IDX_COUNT_MASK		(0x3ffULL << VSMFS_IDX_COUNT_SHIFT)
#define PTE_PER_BLOCK		(VSMFS_BLOCK_SIZE / 8)
#define WEAR_BUCKETS		16
#define VSP_CHUNK		64	/* VSPs of page table read at a time */
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

static u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static struct vsmfs_dsb sb;
static struct vsmfs_layout L;
/* With the badframes feature: block 1, and the frames its entries name. */
static struct vsmfs_dbadlist *badlist;
static u8 *badframe;
static bool json;
static bool export;			/* --export: udev properties only */
static bool sb_backup;			/* the backup superblock is in use */

/* Journal state, gathered by read_journal(). */
struct jstate {
	u32 n, hdr_blocks, ckpt, last, commit, hcopy;
	u64 sequence, count;
	u32 fc_areas, fc_area_blocks;	/* fast-commit areas, 0 without */
	u64 fc_start;			/* their first block */
	u32 used, valid, latest, holes, pending;
	u32 wc_min, wc_max, wc_width;
	u64 wc_sum;
	u32 bucket[WEAR_BUCKETS];
};

static struct jstate js;
/* The journal read_journal() loaded: its fast-commit records. */
static struct journal jl;

/* While set, fatal() returns there: a metadata dump goes on without the part. */
static jmp_buf *soft_fail;

/* fatal_hook: a metadata dump goes on without the part that failed. */
static void soft_return(void)
{
	if (soft_fail)
		longjmp(*soft_fail, 1);
}

/* Bits set in [from, to) of @map. */
static u64 count_bits(const u8 *map, u64 from, u64 to)
{
	u64 n = 0, i = from;

	for (; i < to && i % 8; i++)
		n += tbit(map, i);
	for (; i + 8 <= to; i += 8)
		n += (u64)__builtin_popcount(map[i / 8]);
	for (; i < to; i++)
		n += tbit(map, i);
	return n;
}

/* ---- JSON and text output helpers ---- */

static void json_str(const char *s, size_t len)
{
	size_t i;

	putchar('"');
	for (i = 0; i < len && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* ---- superblock ---- */

static void read_super(void)
{
	u8 *blk = xalloc(VSMFS_BLOCK_SIZE);
	struct vsmfs_dsb *p = (struct vsmfs_dsb *)blk;
	const char *pw, *bw = NULL;
	bool magic;
	int i;

	dev_io(false, VSMFS_SB_BLOCK, 1, blk);
	pw = vsmfs_sb_check(p, img.blocks);
	magic = le32_to_cpu(p->s_magic) == VSMFS_MAGIC;
	/* As mount: without the magic in block 0 the device holds no vsmfs. */
	if (export && !magic)
		exit(EXIT_OPERATIONAL);
	if (!pw) {
		sb = *p;
		goto found;
	}
	/* The primary cannot say where its backup is: look where mkfs puts it. */
	for (i = 0; i < 2; i++) {
		u64 at = vsmfs_sb_backup_guess(img.blocks, i);
		const char *w;

		dev_io(false, at, 1, blk);
		w = vsmfs_sb_backup_check(p, at, img.blocks);
		if (!w) {
			sb = *p;
			sb_backup = true;
			fprintf(stderr, "%s: primary superblock: %s; using the backup (block %" PRIu64
				")\n", progname, pw, at);
			goto found;
		}
		if (le32_to_cpu(p->s_magic) == VSMFS_MAGIC) {
			magic = true;
			bw = w;
		}
	}
	if (!magic)
		fatal("%s: not a vsmfs file system (no vsmfs superblock found)", img.path);
	fatal("%s: no usable vsmfs superblock: %s; backup: %s", img.path, pw, bw ? bw : pw);
found:
	free(blk);
	vsmfs_layout_of_sb(&L, &sb);
}

/* ---- journal ---- */

/*
 * Read the journal as recovery does (journal_load()): counts, wear
 * histogram, and the latest committed version of every block with the
 * valid fast-commit records applied over them, the overlay read_blocks()
 * uses.
 */
static void read_journal(void)
{
	struct journal *j = &jl;
	u32 i;

	if (!journal_load(j, &L))
		fatal("%s: %s (run fsck.vsmfs)", img.path, journal_problem(j, &L));
	js.n = j->s.n;
	js.hdr_blocks = j->s.hdr_blocks;
	js.ckpt = j->s.ckpt;
	js.last = j->s.last;
	js.commit = (u32)j->s.commit;
	js.hcopy = j->s.hcopy;
	js.sequence = j->s.sequence;
	js.count = j->s.count;
	js.fc_areas = j->s.fc_areas;
	js.fc_area_blocks = j->s.fc_area_blocks;
	js.fc_start = L.journal_start + j->s.fc_start;
	js.wc_min = UINT32_MAX;
	for (i = 0; i < js.n; i++) {
		const struct vsmfs_jh *h = &j->jh[i];

		js.wc_min = h->wc < js.wc_min ? h->wc : js.wc_min;
		js.wc_max = h->wc > js.wc_max ? h->wc : js.wc_max;
		js.wc_sum += h->wc;
		if (i >= js.ckpt)
			continue;	/* free, whatever the flags said */
		js.used++;
		if (!(h->flags & VSMFS_JH_VALID)) {
			js.holes++;
			continue;
		}
		js.valid++;
		if (h->flags & VSMFS_JH_LATEST)
			js.latest++;
	}
	if (!js.n)
		js.wc_min = 0;
	js.wc_width = DIV_ROUND_UP(js.wc_max - js.wc_min + 1, WEAR_BUCKETS);
	for (i = 0; i < js.n; i++)
		js.bucket[(j->jh[i].wc - js.wc_min) / js.wc_width]++;
	/* What a mount writes home: versions equal to their home block need no replay. */
	journal_overlay(j, &L);
	js.pending = j->nver;
}

/* The records a mount replays: none when one names what the file system has not. */
static u32 fc_replayed(void)
{
	return jl.fc_why ? 0 : jl.nrec;
}

/* Why a mount refuses the records, as the end of a sentence; "" if it does not. */
static const char *fc_problem(void)
{
	static char buf[160];

	if (!jl.fc_why)
		return "";
	snprintf(buf, sizeof(buf), "; area %u, record at %u: %s: mount refuses the journal"
		 " (run fsck.vsmfs)", fc_area(&jl, &jl.rec[jl.fc_at]),
		 fc_offset(&jl, &jl.rec[jl.fc_at]), jl.fc_why);
	return buf;
}

static void print_journal(void)
{
	u32 commit_len = js.commit > js.ckpt ? js.commit - js.ckpt : 0;
	u64 mean100 = js.n ? js.wc_sum * 100 / js.n : 0;
	u32 fill100 = js.n ? (u32)((u64)js.ckpt * 10000 / js.n) : 0;
	u32 i;

	if (json) {
		printf("\"journal\":{\"start\":%" PRIu64 ",\"region_blocks\":%" PRIu64
		       ",\"header_blocks\":%u,\"journal_blocks\":%u,\"checkpoint\":%u,"
		       "\"last_transaction\":%u,\"commit\":%u,\"header_copies\":%u,"
		       "\"sequence\":%" PRIu64 ",\"checkpoint_area\":%u,\"valid\":%u,"
		       "\"latest\":%u,\"old\":%u,\"holes\":%u,\"uncommitted\":%u,\"free\":%u,"
		       "\"fill_percent\":%u.%02u,\"pending_home\":%u,"
		       "\"wear\":{\"min\":%u,\"max\":%u,\"mean\":%" PRIu64 ".%02" PRIu64
		       ",\"width\":%u,\"buckets\":[",
		       L.journal_start, L.journal_blocks, js.hdr_blocks, js.n, js.ckpt, js.last,
		       js.commit, js.hcopy, js.sequence, js.used, js.valid, js.latest,
		       js.valid - js.latest, js.holes, commit_len, js.n - js.ckpt,
		       fill100 / 100, fill100 % 100, js.pending, js.wc_min, js.wc_max,
		       mean100 / 100, mean100 % 100, js.wc_width);
		for (i = 0; i < WEAR_BUCKETS; i++)
			printf("%s{\"first\":%" PRIu64 ",\"blocks\":%u}", i ? "," : "",
			       (u64)js.wc_min + (u64)i * js.wc_width, js.bucket[i]);
		printf("]},\"commits\":%" PRIu64 ",\"fast_commit\":", js.count);
		if (js.fc_areas)
			printf("{\"areas\":%u,\"area_blocks\":%u,\"start\":%" PRIu64
			       ",\"commit\":%" PRIu64 ",\"records\":%u,\"replayed\":%u}",
			       js.fc_areas, js.fc_area_blocks, js.fc_start, js.count + 1, jl.nrec,
			       fc_replayed());
		else
			printf("null");
		printf("}");
		return;
	}
	printf("Journal\n");
	printf("  region               start %" PRIu64 ", %" PRIu64 " blocks (%u header"
	       " blocks, 1 header-copy block, %u journal blocks", L.journal_start,
	       L.journal_blocks, js.hdr_blocks, js.n);
	if (js.fc_areas)
		printf(", %" PRIu64 " fast-commit blocks", (u64)js.fc_areas * js.fc_area_blocks);
	printf(")\n");
	printf("  pointers             checkpoint %u, last transaction at %u, commit %u\n",
	       js.ckpt, js.last, js.commit);
	printf("  header copies        %u%s\n", js.hcopy,
	       js.hcopy ? " (an interrupted header update; applied here)" : "");
	printf("  transactions         %" PRIu64 "\n", js.count);
	if (js.fc_areas)
		printf("  fast commits         %u areas of %u blocks from block %" PRIu64 "; %u"
		       " valid records of commit %" PRIu64 "%s%s\n", js.fc_areas,
		       js.fc_area_blocks, js.fc_start, jl.nrec, js.count + 1,
		       fc_replayed() ? " (applied here; a mount replays them)" : "",
		       fc_problem());
	printf("  headers              %u in the checkpoint area: %u valid (%u latest,"
	       " %u old), %u holes\n", js.used, js.valid, js.latest, js.valid - js.latest,
	       js.holes);
	printf("                       %u uncommitted, %u free\n", commit_len, js.n - js.ckpt);
	printf("  fill                 %u.%02u%%\n", fill100 / 100, fill100 % 100);
	printf("  not yet written home %u blocks\n", js.pending);
	printf("  wear (write counts)  min %u, max %u, mean %" PRIu64 ".%02" PRIu64 "\n",
	       js.wc_min, js.wc_max, mean100 / 100, mean100 % 100);
	for (i = 0; i < WEAR_BUCKETS; i++) {
		u64 first = (u64)js.wc_min + (u64)i * js.wc_width;

		if (!js.bucket[i])
			continue;
		if (js.wc_width == 1)
			printf("    %10" PRIu64 "             %10u blocks\n", first, js.bucket[i]);
		else
			printf("    %10" PRIu64 "-%-10" PRIu64 " %10u blocks\n", first,
			       first + js.wc_width - 1, js.bucket[i]);
	}
}

/* Slot numbers, ascending, for bsearch(). */
static int u32_cmp(const void *a, const void *b)
{
	const u32 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The slots fast-commit records name, each once, and the inode in each. */
struct fc_slots {
	u32 *slot, n;
	u64 *ino;
};

/* The inode the mapping table puts in @slot, named by a record: 0 if none. */
static u64 fc_ino(const struct fc_slots *fs, u32 slot)
{
	u32 *at = bsearch(&slot, fs->slot, fs->n, sizeof(*fs->slot), u32_cmp);

	return at ? fs->ino[at - fs->slot] : 0;
}

/* The slots the records and their directory parts name; the mapping table read once. */
static void fc_slots_load(struct fc_slots *fs)
{
	u32 i, k, n = 0;
	__le32 *imap;

	fs->slot = xalloc((jl.nrec ? 2 * jl.nrec : 1) * sizeof(*fs->slot));
	fs->ino = xalloc((jl.nrec ? 2 * jl.nrec : 1) * sizeof(*fs->ino));
	for (i = 0; i < jl.npart; i++)
		fs->slot[n++] = jl.part[i].slot;
	qsort(fs->slot, n, sizeof(*fs->slot), u32_cmp);
	for (i = 0, k = 0; i < n; i++)
		if (!k || fs->slot[k - 1] != fs->slot[i])
			fs->slot[k++] = fs->slot[i];
	fs->n = k;
	imap = read_region(L.imap_start, L.imap_blocks);
	for (i = 1; i < L.inodes; i++) {
		u32 slot = le32_to_cpu(imap[i]), *at;

		at = bsearch(&slot, fs->slot, fs->n, sizeof(*fs->slot), u32_cmp);
		if (at)
			fs->ino[at - fs->slot] = i;
	}
	free(imap);
}

/*
 * Words of a slot a record holds, those @mask names, from @w: as
 * " index=value" each, or JSON objects.
 */
static void print_fc_words(u32 mask, const __le64 *w)
{
	u32 k;
	int n = 0;

	for (k = 0; k < VSMFS_INODE_SIZE / 8; k++) {
		if (!(mask & 1U << k))
			continue;
		if (json)
			printf("%s{\"index\":%u,\"value\":%" PRIu64 "}", n++ ? "," : "", k,
			       (u64)le64_to_cpu(*w));
		else
			printf(" %u=0x%" PRIx64, k, (u64)le64_to_cpu(*w));
		w++;
	}
}

/*
 * A part of a record for another slot than its own, @e (VSMFS_FC_KEY_DIR,
 * VSMFS_FC_KEY_GONE): its slot and inode, order and words, on a line of
 * its own ("@label slot"), or (JSON) the member @key after the array
 * before it closes, left open after its words.
 */
static void print_fc_part(const struct vsmfs_fc_ent *e, const struct fc_slots *fs,
			  const char *key, const char *label)
{
	u64 in = fc_ino(fs, (u32)e->where);

	if (json) {
		printf("],\"%s\":{\"slot\":%" PRIu64 ",\"ino\":%" PRIu64 ",\"order\":%" PRIu64
		       ",\"words\":[", key, e->where, in, e->seq);
		print_fc_words(e->mask, e->val);
		printf("]");
		return;
	}
	printf("\n    %s slot %" PRIu64 " (%s%.0" PRIu64 "), order %" PRIu64 ", words",
	       label, e->where, in ? "inode " : "no inode", in, e->seq);
	print_fc_words(e->mask, e->val);
	if (!e->mask)
		printf(" none");
}

/*
 * The entries of the valid record @r: its page table entries and page
 * bitmap bits on one line (JSON: "ptes"), then a line for each entry of
 * inode bitmap bits ("ibitmap"), the directory's part and each of its
 * spans ("dir", null if none), and the part of the inode an unlink in it
 * left with no links ("gone" in "dir", null if none).
 */
static void print_fc_entries(const struct vsmfs_dfc_rec *r, const struct fc_slots *fs)
{
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	int n = 0, dir = 0, gone = 0;
	u32 k;

	if (json)
		printf(",\"ptes\":[");
	else
		printf("\n    page table entries");
	vsmfs_fc_iter_init(&it, r);
	while (!vsmfs_fc_next(&it, &e)) {
		bool clear = e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_BCLEAR);
		bool bits = clear || e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_BITMAP);

		if (e.kind && !bits)
			continue;
		if (json)
			printf("%s{\"%s\":%" PRIu64 ",\"%s\":%" PRIu64 "}", n ? "," : "",
			       bits ? "bitmap_word" : "lpn", e.where,
			       clear ? "clear" : bits ? "set" : "pte", (u64)le64_to_cpu(e.val[0]));
		else
			printf(" %s%" PRIu64 "%s0x%" PRIx64, bits ? "bitmap word " : "", e.where,
			       clear ? "&=~" : "=", (u64)le64_to_cpu(e.val[0]));
		n++;
	}
	if (json)
		printf("],\"ibitmap\":[");
	else if (!n)
		printf(" none");
	n = 0;
	vsmfs_fc_iter_init(&it, r);
	while (!vsmfs_fc_next(&it, &e)) {
		u64 blk;
		u32 word;

		switch (e.kind) {
		case VSMFS_FC_KIND(VSMFS_FC_KEY_IBITMAP):
			if (json)
				printf("%s{\"word\":%" PRIu64 ",\"set\":%" PRIu64 "}",
				       n++ ? "," : "", e.where, (u64)le64_to_cpu(e.val[0]));
			else
				printf("\n    ibitmap word %" PRIu64 " |= 0x%" PRIx64, e.where,
				       (u64)le64_to_cpu(e.val[0]));
			break;
		case VSMFS_FC_KIND(VSMFS_FC_KEY_DIR):
			print_fc_part(&e, fs, "dir", "dir");
			if (json)
				printf(",\"spans\":[");
			dir = 1;
			n = 0;
			break;
		case VSMFS_FC_KIND(VSMFS_FC_KEY_GONE):
			print_fc_part(&e, fs, "gone", "unlinked");
			if (json)
				printf("}");
			gone = 1;
			break;
		case VSMFS_FC_KIND(VSMFS_FC_KEY_SPAN):
			blk = e.where / (VSMFS_BLOCK_SIZE / 8);
			word = e.where % (VSMFS_BLOCK_SIZE / 8);
			if (!json) {
				printf("\n      span block %" PRIu64 " word %u n %u", blk, word,
				       e.n);
				break;
			}
			printf("%s{\"block\":%" PRIu64 ",\"word\":%u,\"values\":[",
			       n++ ? "," : "", blk, word);
			for (k = 0; k < e.n; k++)
				printf("%s%" PRIu64, k ? "," : "", (u64)le64_to_cpu(e.val[k]));
			printf("]}");
			break;
		}
	}
	if (json)
		printf(gone ? "}" : dir ? "],\"gone\":null}" : "],\"dir\":null");
}

/*
 * The valid fast-commit records, in the order of the areas: for each its
 * area, offset, length, slot (and the inode the mapping table puts
 * there), order, the words of the slot it holds, its page table entries
 * and bitmap bits, its inode bitmap bits, and its directory's part: the
 * directory's slot (and inode), order and words, and the spans of its
 * blocks.
 */
static void print_fast_commits(void)
{
	struct fc_slots fs = { NULL };
	u32 i;

	if (!js.fc_areas) {
		if (json)
			printf("\"fast_commit\":null");
		else
			printf("Fast commits: no areas (the fast_commit feature is not set)\n");
		return;
	}
	fc_slots_load(&fs);
	if (json)
		printf("\"fast_commit\":{\"areas\":%u,\"area_blocks\":%u,\"start\":%" PRIu64
		       ",\"commit\":%" PRIu64 ",\"problem\":", js.fc_areas, js.fc_area_blocks,
		       js.fc_start, js.count + 1);
	else
		printf("Fast commits: %u areas of %u blocks from block %" PRIu64 "; %u valid"
		       " records of commit %" PRIu64 "%s\n", js.fc_areas, js.fc_area_blocks,
		       js.fc_start, jl.nrec, js.count + 1, fc_problem());
	if (json && jl.fc_why)
		printf("{\"area\":%u,\"offset\":%u,\"why\":\"%s\"}",
		       fc_area(&jl, &jl.rec[jl.fc_at]), fc_offset(&jl, &jl.rec[jl.fc_at]),
		       jl.fc_why);
	else if (json)
		printf("null");
	if (json)
		printf(",\"records\":[");
	/* jl.rec is in the order of the areas. */
	for (i = 0; i < jl.nrec; i++) {
		const struct fc_ref *f = &jl.rec[i];
		const struct vsmfs_dfc_rec *r = fc_record(&jl, f);
		u32 words = le32_to_cpu(r->r_words);
		u64 in = fc_ino(&fs, f->slot);	/* 0: no inode is mapped there */

		if (json)
			printf("%s{\"area\":%u,\"offset\":%u,\"length\":%u,\"slot\":%u,"
			       "\"ino\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"words\":[", i ? "," : "",
			       fc_area(&jl, f), fc_offset(&jl, f), f->len, f->slot, in, f->seq);
		else	/* "%.0" prints no digit of 0: "no inode" alone */
			printf("  area %u offset %u: slot %u (%s%.0" PRIu64 "), seq %" PRIu64
			       ", %u bytes\n    words", fc_area(&jl, f), fc_offset(&jl, f), f->slot,
			       in ? "inode " : "no inode", in, f->seq, f->len);
		print_fc_words(words, (const __le64 *)(r + 1));
		if (json)
			printf("]");
		else if (!words)
			printf(" none");
		print_fc_entries(r, &fs);
		printf(json ? "}" : "\n");
	}
	if (json)
		printf("]}");
	free(fs.slot);
	free(fs.ino);
}

/* ---- layout, superblock, usage ---- */

struct region {
	const char *name, *key;
	u64 start, blocks;
};

/* The error state the module records (VSMFS_STATE_ERROR), fsck clears. */
static void print_errors(void)
{
	static const char * const which[2] = { "first", "last" };
	u64 t[2] = { le64_to_cpu(sb.s_first_error_time), le64_to_cpu(sb.s_last_error_time) };
	u64 ino[2] = { le64_to_cpu(sb.s_first_error_ino), le64_to_cpu(sb.s_last_error_ino) };
	u32 line[2] = { le32_to_cpu(sb.s_first_error_line), le32_to_cpu(sb.s_last_error_line) };
	const u8 *func[2] = { sb.s_first_error_func, sb.s_last_error_func };
	bool set = le32_to_cpu(sb.s_state) & VSMFS_STATE_ERROR;
	u32 count = le32_to_cpu(sb.s_error_count);
	int i;

	if (json) {
		printf("\"errors\":{\"state\":%s,\"count\":%u", set ? "true" : "false", count);
		for (i = 0; i < 2 && count; i++) {
			printf(",\"%s\":{\"time\":%" PRIu64 ",\"function\":", which[i], t[i]);
			json_str((const char *)func[i], VSMFS_ERROR_FUNC_LEN);
			printf(",\"line\":%u,\"inode\":%" PRIu64 "}", line[i], ino[i]);
		}
		printf("},");
		return;
	}
	if (!set && !count) {
		printf("  errors: none recorded\n");
		return;
	}
	printf("  errors: %u found while mounted, not checked since (run fsck.vsmfs)\n", count);
	for (i = 0; i < 2; i++)
		printf("    %-5s at %" PRIu64 " in %.*s:%u, inode %" PRIu64 "\n", which[i], t[i],
		       VSMFS_ERROR_FUNC_LEN, (const char *)func[i], line[i], ino[i]);
}

/*
 * Frames in use: those behind allocated logical pages (bit set in
 * @lbitmap), page 0 (reserved) left out; @total: the frames but the one
 * behind page 0. Without the sparse feature every logical page has one.
 */
/*
 * Call @fn(@lpn, @frame, @arg) for every logical page and the frame its
 * page table entry names (VSMFS_PTE_FRAME_MASK of it), reading the page
 * table a chunk of superpages at a time.
 */
static void for_each_pte(void (*fn)(u64 lpn, u64 frame, void *arg), void *arg)
{
	__le64 *pt = xalloc((u64)VSP_CHUNK * VSMFS_VSP_PAGES * 8);
	u64 first, lpn;

	for (first = 0; first < L.lpages; first += (u64)VSP_CHUNK * VSMFS_VSP_PAGES) {
		u64 end = min_u64(first + (u64)VSP_CHUNK * VSMFS_VSP_PAGES, L.lpages);

		read_blocks(L.ptable_start + first / PTE_PER_BLOCK,
			    DIV_ROUND_UP(end, PTE_PER_BLOCK) - first / PTE_PER_BLOCK, pt);
		for (lpn = first; lpn < end; lpn++)
			fn(lpn, le64_to_cpu(pt[lpn - first]) & VSMFS_PTE_FRAME_MASK, arg);
	}
	free(pt);
}

struct frame_count {
	const u8 *lbitmap;
	u64 used, total;
};

static void count_frame(u64 lpn, u64 f, void *arg)
{
	struct frame_count *c = arg;

	if (f >= L.data_pages)
		return;		/* no frame, or a bad one */
	if (!lpn)
		c->total--;
	else
		c->used += tbit(c->lbitmap, lpn);
}

static void count_frames(const u8 *lbitmap, u64 *used, u64 *total)
{
	struct frame_count c = { .lbitmap = lbitmap, .used = 0, .total = L.data_pages };

	if (!L.sparse) {
		*used = count_bits(lbitmap, 1, L.lpages);
		*total = L.lpages - 1;
		return;
	}
	for_each_pte(count_frame, &c);
	*used = c.used;
	*total = c.total;
}

/* The names of the features set, each between @pre and @post, @sep between them. */
static void print_features(const char *pre, const char *post, const char *sep)
{
	static const struct {
		int word;	/* 0 compat, 1 incompat, 2 ro_compat */
		u32 bit;
		const char *name;
	} names[] = {
		{ 1, VSMFS_FEATURE_INCOMPAT_SB_LAST, "sb_last" },
		{ 1, VSMFS_FEATURE_INCOMPAT_SPARSE, "sparse" },
		{ 1, VSMFS_FEATURE_INCOMPAT_FAST_COMMIT, "fast_commit" },
		{ 0, VSMFS_FEATURE_COMPAT_MOUNT_OPTS, "mount_opts" },
		{ 2, VSMFS_FEATURE_RO_COMPAT_BADFRAMES, "badframes" },
	};
	u32 word[3] = { le32_to_cpu(sb.s_feature_compat), le32_to_cpu(sb.s_feature_incompat),
			le32_to_cpu(sb.s_feature_ro_compat) };
	size_t i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (word[names[i].word] & names[i].bit)
			printf("%s%s%s%s", n++ ? sep : "", pre, names[i].name, post);
	if (!n && !json)
		printf("%snone", pre);
}

static void print_summary(void)
{
	struct region r[] = {
		{ "superblock", "superblock", VSMFS_SB_BLOCK, 1 },
		{ "backup superblock", "backup_superblock", L.sb_backup, 1 },
		{ "journal", "journal", L.journal_start, L.journal_blocks },
		{ "inode table", "inode_table", L.itable_start, L.itable_blocks },
		{ "inode mapping table", "inode_map", L.imap_start, L.imap_blocks },
		{ "inode bitmap", "inode_bitmap", L.ibitmap_start, L.ibitmap_blocks },
		{ "page table", "page_table", L.ptable_start, L.ptable_blocks },
		{ "logical page bitmap", "page_bitmap", L.lbitmap_start, L.lbitmap_blocks },
		{ "data", "data", L.data_start, L.data_pages },
	};
	u8 *lbitmap = read_region(L.lbitmap_start, L.lbitmap_blocks);
	u8 *ibitmap = read_region(L.ibitmap_start, L.ibitmap_blocks);
	u64 pages = L.lpages - 1, inodes = L.inodes - 1;	/* 0 is reserved */
	u64 pused = count_bits(lbitmap, 1, L.lpages);
	u64 iused = count_bits(ibitmap, 1, L.inodes);
	u64 fused, frames;
	u32 state = le32_to_cpu(sb.s_state);
	char uuid[40];
	size_t i;

	count_frames(lbitmap, &fused, &frames);
	format_uuid(sb.s_uuid, uuid);
	if (json) {
		printf("\"superblock\":{\"uuid\":\"%s\",\"label\":", uuid);
		json_str((const char *)sb.s_label, VSMFS_LABEL_LEN);
		printf(",\"version\":%u,\"state\":\"%s\",\"backup_in_use\":%s,"
		       "\"mount_count\":%u,\"blocks\":%" PRIu64 ",\"block_size\":%u,"
		       "\"inodes\":%" PRIu64 ",\"data_pages\":%" PRIu64 ",\"vsps\":%" PRIu64
		       ",\"mkfs_time\":%" PRIu64 ",\"mount_time\":%" PRIu64
		       ",\"write_time\":%" PRIu64 ",\"mount_options\":",
		       le32_to_cpu(sb.s_version), state & VSMFS_STATE_CLEAN ? "clean" : "in use",
		       sb_backup ? "true" : "false", le32_to_cpu(sb.s_mount_count), L.blocks,
		       VSMFS_BLOCK_SIZE, L.inodes, L.data_pages, L.data_pages / VSMFS_VSP_PAGES,
		       le64_to_cpu(sb.s_mkfs_time), le64_to_cpu(sb.s_mount_time),
		       le64_to_cpu(sb.s_write_time));
		json_str((const char *)sb.s_mount_opts, VSMFS_MOUNT_OPTS_LEN);
		printf(",\"sparse\":%s,\"logical_pages\":%" PRIu64 ",\"features\":[",
		       L.sparse ? "true" : "false", L.lpages);
		print_features("\"", "\"", ",");
		printf("]},");
		print_errors();
		printf("\"layout\":{");
		for (i = 0; i < ARRAY_SIZE(r); i++)
			printf("%s\"%s\":{\"start\":%" PRIu64 ",\"blocks\":%" PRIu64 "}",
			       i ? "," : "", r[i].key, r[i].start, r[i].blocks);
		if (js.fc_areas)
			printf(",\"fast_commit_areas\":{\"start\":%" PRIu64 ",\"blocks\":%" PRIu64
			       ",\"areas\":%u,\"area_blocks\":%u}", js.fc_start,
			       (u64)js.fc_areas * js.fc_area_blocks, js.fc_areas,
			       js.fc_area_blocks);
		printf("},\"usage\":{\"pages\":%" PRIu64 ",\"pages_used\":%" PRIu64
		       ",\"pages_free\":%" PRIu64 ",\"frames\":%" PRIu64 ",\"frames_used\":%"
		       PRIu64 ",\"frames_free\":%" PRIu64 ",\"inodes\":%" PRIu64
		       ",\"inodes_used\":%" PRIu64 ",\"inodes_free\":%" PRIu64 "},", pages, pused,
		       pages - pused, frames, fused, frames - fused, inodes, iused, inodes - iused);
	} else {
		printf("vsmfs on %s: %" PRIu64 " blocks of %u bytes (%" PRIu64 " MiB)\n", img.path,
		       L.blocks, VSMFS_BLOCK_SIZE, L.blocks >> (20 - VSMFS_BLOCK_SHIFT));
		printf("  uuid %s", uuid);
		if (sb.s_label[0]) {
			printf(", label ");
			json_str((const char *)sb.s_label, VSMFS_LABEL_LEN);
		}
		printf("\n  state %s, %u mounts since mkfs, format version %u%s\n",
		       state & VSMFS_STATE_CLEAN ? "clean" : "in use (not cleanly unmounted)",
		       le32_to_cpu(sb.s_mount_count), le32_to_cpu(sb.s_version),
		       sb_backup ? ", backup superblock in use" : "");
		printf("  %-22s %10s %10s\n", "region", "start", "blocks");
		for (i = 0; i < ARRAY_SIZE(r); i++) {
			printf("  %-22s %10" PRIu64 " %10" PRIu64, r[i].name, r[i].start,
			       r[i].blocks);
			if (r[i].start == L.itable_start)
				printf("  (%" PRIu64 " inodes)", L.inodes);
			else if (r[i].start == L.data_start)
				printf("  (%" PRIu64 " virtual superpages)",
				       L.data_pages / VSMFS_VSP_PAGES);
			putchar('\n');
			if (!strcmp(r[i].key, "journal"))
				print_fc_areas(&L, js.fc_areas, js.fc_area_blocks);
		}
		print_lpages(&L);
		printf("  features:");
		print_features(" ", "", "");
		putchar('\n');
		printf("  default mount options: ");
		if (sb.s_mount_opts[0])
			json_str((const char *)sb.s_mount_opts, VSMFS_MOUNT_OPTS_LEN);
		else
			printf("none");
		putchar('\n');
		print_errors();
		printf("Usage\n");
		if (L.sparse) {
			printf("  logical pages        %" PRIu64 " used, %" PRIu64 " free of %"
			       PRIu64 "\n", pused, pages - pused, pages);
			printf("  frames               %" PRIu64 " used, %" PRIu64 " free of %"
			       PRIu64 " (%" PRIu64 " virtual superpages)\n", fused, frames - fused,
			       frames, L.data_pages / VSMFS_VSP_PAGES);
		} else {
			printf("  data pages           %" PRIu64 " used, %" PRIu64 " free of %"
			       PRIu64 " (%" PRIu64 " virtual superpages)\n", pused, pages - pused,
			       pages, L.data_pages / VSMFS_VSP_PAGES);
		}
		printf("  inodes               %" PRIu64 " used, %" PRIu64 " free of %" PRIu64
		       "\n", iused, inodes - iused, inodes);
	}
	free(lbitmap);
	free(ibitmap);
}

/* ---- virtual superpage fragmentation ---- */

static void print_frag(void)
{
	u8 *lbitmap = read_region(L.lbitmap_start, L.lbitmap_blocks);
	u64 nvsp = DIV_ROUND_UP(L.lpages, VSMFS_VSP_PAGES);
	u64 full = 0, contig = 0, aligned = 0, partial = 0, empty = 0, v, c;
	__le64 *pt = xalloc((u64)VSP_CHUNK * VSMFS_VSP_PAGES * 8);

	for (c = 0; c < nvsp; c += VSP_CHUNK) {
		u64 first = c * VSMFS_VSP_PAGES;
		u64 end = min_u64(first + (u64)VSP_CHUNK * VSMFS_VSP_PAGES, L.lpages);
		u64 pblk = first / PTE_PER_BLOCK;
		u64 nblk = DIV_ROUND_UP(end, PTE_PER_BLOCK) - pblk;

		read_blocks(L.ptable_start + pblk, nblk, pt);
		for (v = c; v < c + VSP_CHUNK && v < nvsp; v++) {
			u64 lo = v * VSMFS_VSP_PAGES;
			u64 hi = min_u64(lo + VSMFS_VSP_PAGES, L.lpages);
			u64 from = lo ? lo : 1;		/* logical page 0 is reserved */
			u64 used = count_bits(lbitmap, from, hi), f0, p;

			if (!used) {
				empty++;
				continue;
			}
			if (used < hi - from) {
				partial++;
				continue;
			}
			full++;
			f0 = le64_to_cpu(pt[lo - first]) & VSMFS_PTE_FRAME_MASK;
			for (p = lo + 1; p < hi; p++)
				if ((le64_to_cpu(pt[p - first]) & VSMFS_PTE_FRAME_MASK) !=
				    f0 + (p - lo))
					break;
			if (p < hi)
				continue;
			contig++;
			if (f0 % VSMFS_VSP_PAGES == 0)
				aligned++;
		}
	}
	if (json) {
		printf("\"fragmentation\":{\"vsps\":%" PRIu64 ",\"full\":%" PRIu64
		       ",\"full_contiguous\":%" PRIu64 ",\"full_aligned\":%" PRIu64
		       ",\"partial\":%" PRIu64 ",\"free\":%" PRIu64 "}", nvsp, full, contig,
		       aligned, partial, empty);
	} else {
		printf("Virtual superpages (%u pages each)\n", VSMFS_VSP_PAGES);
		printf("  total                %" PRIu64 "\n", nvsp);
		printf("  fully used           %" PRIu64 ": %" PRIu64 " physically contiguous"
		       " (%" PRIu64 " of them 2 MiB aligned), %" PRIu64 " fragmented\n", full,
		       contig, aligned, full - contig);
		printf("  partly used          %" PRIu64 "\n", partial);
		printf("  free                 %" PRIu64 "\n", empty);
	}
	free(pt);
	free(lbitmap);
}

/* ---- per-file summary ---- */

static __le64 *pt_cache;
static u64 pt_cache_blk = ~0ULL;
static u8 *idx_buf[2];

/* Page table entry of logical page @lpn (frame or VSMFS_PTE_NONE). */
static u64 pte_of(u64 lpn)
{
	u64 blk = lpn / PTE_PER_BLOCK;

	if (blk != pt_cache_blk) {
		read_blocks(L.ptable_start + blk, 1, pt_cache);
		pt_cache_blk = blk;
	}
	return le64_to_cpu(pt_cache[lpn % PTE_PER_BLOCK]) & VSMFS_PTE_FRAME_MASK;
}

/* Device block backing logical page @lpn, 0 if out of range or without a frame. */
static u64 lpn_block(u64 lpn)
{
	u64 frame;

	if (!lpn || lpn >= L.lpages)
		return 0;
	frame = pte_of(lpn);
	return frame < L.data_pages ? L.data_start + frame : 0;
}

/*
 * Is @frame in the bad-frame list? Such a frame is never read: on a pmem
 * device the read fails where the platform reported the poison.
 */
static bool frame_bad(u64 frame)
{
	return badframe && frame < L.data_pages && tbit(badframe, frame);
}

/* Is logical page @lpn, with a frame (lpn_block()), on a bad frame? */
static bool lpn_bad(u64 lpn)
{
	return lpn_block(lpn) && frame_bad(pte_of(lpn));
}

/* A run of a regular file with pages that have no frame. */
struct hole_run {
	u64 key, lpn, pages, holes;
};

/* The runs of one regular file. */
struct file_runs {
	struct index_walk iw;		/* first: walked with index_walk() */
	u64 runs, holes, nhr, cap;
	struct hole_run *hr;		/* runs with holes, in key order */
};

/* Index entry @key (@e) of a regular file: a run, and its holes. */
static void visit_run(struct index_walk *iw, u64 key, u64 e)
{
	struct file_runs *fr = (struct file_runs *)iw;
	u64 lpn = e & VSMFS_IDX_LPN_MASK, cnt = (e & IDX_COUNT_MASK) >> VSMFS_IDX_COUNT_SHIFT;
	u64 holes = 0, i;

	if (!e || !cnt)
		return;
	fr->runs++;
	if (!L.sparse || !lpn || cnt > VSMFS_VSP_PAGES || lpn + cnt > L.lpages)
		return;
	for (i = 0; i < cnt; i++)
		holes += pte_of(lpn + i) == VSMFS_PTE_NONE;
	if (!holes)
		return;
	fr->holes += holes;
	fr->hr = xgrow(fr->hr, fr->nhr, &fr->cap, sizeof(*fr->hr));
	fr->hr[fr->nhr++] = (struct hole_run){ key, lpn, cnt, holes };
}

/* The entries of the index block at logical page @ptr, @depth levels above them. */
static const __le64 *runs_block(struct index_walk *iw, u64 ptr, int depth)
{
	u64 blk = lpn_block(ptr);

	(void)iw;	/* the buffers are shared by every walk */
	if (!blk || lpn_bad(ptr))
		return NULL;
	read_blocks(blk, 1, idx_buf[depth - 1]);
	return (const __le64 *)idx_buf[depth - 1];
}

/* Runs with holes listed in the text output of a file, at most. */
#define HOLE_RUNS_SHOWN	8

static void print_hole_runs(const struct file_runs *fr)
{
	u64 i;

	for (i = 0; i < fr->nhr; i++) {
		const struct hole_run *h = &fr->hr[i];

		if (json) {
			printf("%s{\"key\":%" PRIu64 ",\"lpn\":%" PRIu64 ",\"pages\":%" PRIu64
			       ",\"framed\":%" PRIu64 ",\"holes\":%" PRIu64 "}", i ? "," : "",
			       h->key, h->lpn, h->pages, h->pages - h->holes, h->holes);
			continue;
		}
		if (i == HOLE_RUNS_SHOWN) {
			printf("  %10s piece ...: %" PRIu64 " more runs with holes\n", "",
			       fr->nhr - i);
			break;
		}
		printf("  %10s piece %" PRIu64 ": run lpn %" PRIu64 "+%" PRIu64 ", %" PRIu64
		       " framed, %" PRIu64 " holes\n", "", h->key, h->lpn, h->pages,
		       h->pages - h->holes, h->holes);
	}
}

/*
 * The on-media inode in slot @slot of the inode table, read through @iblk,
 * a block buffer that keeps the table block numbered *@cached.
 */
static const struct vsmfs_dinode *dinode_at(u64 slot, u8 *iblk, u64 *cached)
{
	if (slot / VSMFS_INODES_PER_BLOCK != *cached) {
		*cached = slot / VSMFS_INODES_PER_BLOCK;
		read_blocks(L.itable_start + *cached, 1, iblk);
	}
	return (const struct vsmfs_dinode *)(iblk + (slot % VSMFS_INODES_PER_BLOCK) *
					     VSMFS_INODE_SIZE);
}

static void print_files(void)
{
	u8 *ibitmap = read_region(L.ibitmap_start, L.ibitmap_blocks);
	__le32 *imap = read_region(L.imap_start, L.imap_blocks);
	u8 *iblk = xalloc(VSMFS_BLOCK_SIZE);
	u64 ino, cached = ~0ULL, nfiles = 0;

	pt_cache = xalloc(VSMFS_BLOCK_SIZE);
	idx_buf[0] = xalloc(VSMFS_BLOCK_SIZE);
	idx_buf[1] = xalloc(VSMFS_BLOCK_SIZE);
	if (json)
		printf("\"files\":[");
	else
		printf("Regular files\n  %10s %14s %10s %8s %10s %8s %s\n", "inode", "size",
		       "pages", "runs", "holes", "tail key", "flags");
	for (ino = 1; ino < L.inodes; ino++) {
		struct file_runs fr = { .iw = { visit_run, runs_block } };
		const struct vsmfs_dinode *di;
		u64 slot;
		u32 flags;

		if (!tbit(ibitmap, ino))
			continue;
		slot = le32_to_cpu(imap[ino]);
		if (slot >= L.inodes)
			continue;
		di = dinode_at(slot, iblk, &cached);
		if (!S_ISREG(le16_to_cpu(di->i_mode)))
			continue;
		/* The index blocks are read through the page table cache too. */
		index_walk(&fr.iw, di);
		flags = le32_to_cpu(di->i_flags);
		if (json) {
			printf("%s{\"ino\":%" PRIu64 ",\"size\":%" PRIu64 ",\"pages\":%" PRIu64
			       ",\"runs\":%" PRIu64 ",\"holes\":%" PRIu64 ",\"tail_key\":%u,"
			       "\"zfdm_tail_released\":%s,\"truncating\":%s,\"hole_runs\":[",
			       nfiles ? "," : "", ino, le64_to_cpu(di->i_size),
			       le64_to_cpu(di->i_pages), fr.runs, fr.holes,
			       le32_to_cpu(di->i_tail_key),
			       flags & VSMFS_IFLAG_TAIL_RELEASED ? "true" : "false",
			       flags & VSMFS_IFLAG_TRUNCATING ? "true" : "false");
			print_hole_runs(&fr);
			printf("]}");
		} else {
			printf("  %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %8" PRIu64 " %10" PRIu64
			       " %8u %s%s\n", ino, le64_to_cpu(di->i_size),
			       le64_to_cpu(di->i_pages), fr.runs, fr.holes,
			       le32_to_cpu(di->i_tail_key),
			       flags & VSMFS_IFLAG_TAIL_RELEASED ? "zfdm" :
			       flags & VSMFS_IFLAG_TRUNCATING ? "" : "-",
			       flags & VSMFS_IFLAG_TRUNCATING ?
			       (flags & VSMFS_IFLAG_TAIL_RELEASED ? ",truncating" : "truncating") : "");
			print_hole_runs(&fr);
		}
		free(fr.hr);
		nfiles++;
	}
	if (json)
		printf("]");
	else if (!nfiles)
		printf("  (none)\n");
	free(pt_cache);
	free(idx_buf[0]);
	free(idx_buf[1]);
	free(iblk);
	free(imap);
	free(ibitmap);
}

/* ---- the pages of inodes: --map, and the owners of bad frames ---- */

/* What a page of an inode holds (page_names). */
enum { PK_DATA, PK_TAIL, PK_DIR, PK_INDEX, PK_XATTR, PK_SYMLINK };

static const char * const page_names[] = {
	[PK_DATA] = "data",
	[PK_TAIL] = "tail",		/* the reserved tail of a file's last superpage */
	[PK_DIR] = "directory",
	[PK_INDEX] = "index",
	[PK_XATTR] = "xattr",
	[PK_SYMLINK] = "symlink",
};

/* No offset in the file: index and xattr blocks. */
#define NO_OFFSET	(~0ULL)

/* A walk over every logical page an inode owns (walk_pages()). */
struct page_walk {
	struct index_walk iw;		/* first: walked with index_walk() */
	u64 ino;
	u16 mode;
	u32 tail_key;			/* regular files: 1 + key of the run owning the tail */
	void (*page)(struct page_walk *pw, u8 kind, u64 off, u64 lpn);
};

static void pw_entry(struct index_walk *iw, u64 key, u64 e)
{
	struct page_walk *pw = (struct page_walk *)iw;
	u64 lpn = e & VSMFS_IDX_LPN_MASK, cnt = (e & IDX_COUNT_MASK) >> VSMFS_IDX_COUNT_SHIFT;
	u64 i, end;

	if (!e || !lpn || !cnt || cnt > VSMFS_VSP_PAGES || lpn + cnt > L.lpages)
		return;		/* damaged: fsck.vsmfs says so */
	if (S_ISDIR(pw->mode)) {
		pw->page(pw, PK_DIR, key << VSMFS_BLOCK_SHIFT, lpn);
		return;
	}
	if (S_ISLNK(pw->mode)) {
		pw->page(pw, PK_SYMLINK, 0, lpn);
		return;
	}
	for (i = 0; i < cnt; i++)
		pw->page(pw, PK_DATA, (key * VSMFS_VSP_PAGES + i) << VSMFS_BLOCK_SHIFT, lpn + i);
	end = (lpn / VSMFS_VSP_PAGES + 1) * VSMFS_VSP_PAGES;
	if (pw->tail_key != key + 1 || end > L.lpages)
		return;
	for (i = cnt; lpn + i < end; i++)
		pw->page(pw, PK_TAIL, (key * VSMFS_VSP_PAGES + i) << VSMFS_BLOCK_SHIFT, lpn + i);
}

static const __le64 *pw_block(struct index_walk *iw, u64 ptr, int depth)
{
	struct page_walk *pw = (struct page_walk *)iw;

	if (!ptr || ptr >= L.lpages)
		return NULL;
	pw->page(pw, PK_INDEX, NO_OFFSET, ptr);
	return runs_block(iw, ptr, depth);
}

/* Call @pw->page for every logical page inode @pw->ino (@di) owns. */
static void walk_pages(struct page_walk *pw, const struct vsmfs_dinode *di)
{
	u64 xattr = le64_to_cpu(di->i_xattr);

	pw->iw.entry = pw_entry;
	pw->iw.block = pw_block;
	pw->mode = le16_to_cpu(di->i_mode);
	pw->tail_key = le32_to_cpu(di->i_tail_key);
	if (xattr && xattr < L.lpages)
		pw->page(pw, PK_XATTR, NO_OFFSET, xattr);
	if (S_ISREG(pw->mode) || S_ISDIR(pw->mode) ||
	    (S_ISLNK(pw->mode) && le64_to_cpu(di->i_size) > VSMFS_INLINE_LEN))
		index_walk(&pw->iw, di);
}

static void walk_bufs_alloc(void)
{
	pt_cache = xalloc(VSMFS_BLOCK_SIZE);
	pt_cache_blk = ~0ULL;
	idx_buf[0] = xalloc(VSMFS_BLOCK_SIZE);
	idx_buf[1] = xalloc(VSMFS_BLOCK_SIZE);
}

static void walk_bufs_free(void)
{
	free(pt_cache);
	free(idx_buf[0]);
	free(idx_buf[1]);
	pt_cache = NULL;
}

/* --map: runs of pages of one kind with consecutive offsets, logical pages and frames. */
struct map_row {
	u8 kind;
	bool bad;
	u64 off, lpn, frame, pages;	/* frame VSMFS_PTE_NONE: none */
};

static struct map_row map_cur;
static u64 map_rows;

static void map_flush(void)
{
	const struct map_row *r = &map_cur;
	bool framed = r->frame != VSMFS_PTE_NONE;

	if (!r->pages)
		return;
	if (json) {
		printf("%s{\"kind\":\"%s\",\"offset\":", map_rows ? "," : "", page_names[r->kind]);
		if (r->off == NO_OFFSET)
			printf("null");
		else
			printf("%" PRIu64, r->off);
		printf(",\"pages\":%" PRIu64 ",\"lpn\":%" PRIu64, r->pages, r->lpn);
		if (framed)
			printf(",\"frame\":%" PRIu64 ",\"block\":%" PRIu64, r->frame,
			       L.data_start + r->frame);
		else
			printf(",\"frame\":null,\"block\":null");
		printf(",\"bad\":%s}", r->bad ? "true" : "false");
	} else {
		char off[24] = "-", frame[24] = "-", block[24] = "-";

		if (r->off != NO_OFFSET)
			snprintf(off, sizeof(off), "%" PRIu64, r->off);
		if (framed) {
			snprintf(frame, sizeof(frame), "%" PRIu64, r->frame);
			snprintf(block, sizeof(block), "%" PRIu64, L.data_start + r->frame);
		}
		printf("  %-10s %14s %6" PRIu64 " %14" PRIu64 " %12s %12s%s\n",
		       page_names[r->kind], off, r->pages, r->lpn, frame, block,
		       r->bad ? "  bad frame" : "");
	}
	map_rows++;
	map_cur.pages = 0;
}

static void map_page(struct page_walk *pw, u8 kind, u64 off, u64 lpn)
{
	struct map_row *r = &map_cur;
	u64 frame = pte_of(lpn);
	bool bad;

	(void)pw;
	if (frame >= L.data_pages)
		frame = VSMFS_PTE_NONE;		/* none, or past the frames: fsck says which */
	bad = frame_bad(frame);
	if (r->pages && kind == r->kind && bad == r->bad && off != NO_OFFSET &&
	    off == r->off + (r->pages << VSMFS_BLOCK_SHIFT) && lpn == r->lpn + r->pages &&
	    (frame == VSMFS_PTE_NONE ? r->frame == VSMFS_PTE_NONE :
	     r->frame != VSMFS_PTE_NONE && frame == r->frame + r->pages)) {
		r->pages++;
		return;
	}
	map_flush();
	*r = (struct map_row){ kind, bad, off, lpn, frame, 1 };
}

/* The on-media inode of i-number @ino, in @iblk; fatal if it is not in use. */
static const struct vsmfs_dinode *inode_of(u64 ino, u8 *iblk)
{
	__le32 *imap = read_region(L.imap_start, L.imap_blocks);
	const struct vsmfs_dinode *di;
	u64 slot, cached = ~0ULL;

	if (!ino || ino >= L.inodes)
		fatal("%s: inode %" PRIu64 " does not exist (inodes 1..%" PRIu64 ")", img.path,
		      ino, L.inodes - 1);
	slot = le32_to_cpu(imap[ino]);
	free(imap);
	if (!slot || slot >= L.inodes)
		fatal("%s: inode %" PRIu64 " maps invalid slot %" PRIu64 " (run fsck.vsmfs)",
		      img.path, ino, slot);
	di = dinode_at(slot, iblk, &cached);
	if (!di->i_mode)
		fatal("%s: inode %" PRIu64 " is not in use", img.path, ino);
	return di;
}

static const char *mode_name(u16 mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "regular file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	}
	return "invalid type";
}

/*
 * --map INO: every logical page inode @ino owns, what it holds, its
 * offset in the file, and the frame and device block behind it.
 */
static void print_map(u64 ino)
{
	u8 *iblk = xalloc(VSMFS_BLOCK_SIZE);
	const struct vsmfs_dinode *di = inode_of(ino, iblk);
	struct page_walk pw = { .ino = ino, .page = map_page };
	u16 mode = le16_to_cpu(di->i_mode);

	walk_bufs_alloc();
	if (json)
		printf("\"map\":{\"ino\":%" PRIu64 ",\"type\":\"%s\",\"size\":%" PRIu64
		       ",\"pages\":%" PRIu64 ",\"rows\":[", ino, mode_name(mode),
		       le64_to_cpu(di->i_size), le64_to_cpu(di->i_pages));
	else
		printf("Inode %" PRIu64 " (%s): %" PRIu64 " bytes, %" PRIu64 " pages\n"
		       "  %-10s %14s %6s %14s %12s %12s\n", ino, mode_name(mode),
		       le64_to_cpu(di->i_size), le64_to_cpu(di->i_pages), "kind", "offset",
		       "pages", "logical page", "frame", "block");
	walk_pages(&pw, di);
	map_flush();
	if (json)
		printf("]}");
	else if (!map_rows)
		printf("  (no pages)\n");
	walk_bufs_free();
	free(iblk);
}

/* --badframes: each entry of the list, and what holds it. */
struct bad_entry {
	u64 frame;
	u64 lpn;			/* + 1; 0 if no logical page maps it */
	u64 ino, off;			/* owner, 0 if none found */
	u8 kind;
	const char *why;		/* why the entry is not valid, NULL if it is */
};

static struct bad_entry *bad_ent;
static u64 nbad_ent;

static int bad_frame_cmp(const void *a, const void *b)
{
	const struct bad_entry *x = *(const struct bad_entry * const *)a;
	const struct bad_entry *y = *(const struct bad_entry * const *)b;

	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int bad_lpn_cmp(const void *a, const void *b)
{
	const struct bad_entry *x = *(const struct bad_entry * const *)a;
	const struct bad_entry *y = *(const struct bad_entry * const *)b;

	return x->lpn < y->lpn ? -1 : x->lpn > y->lpn;
}

static struct bad_entry **bad_by_lpn;
static u64 nbad_by_lpn;

static void bad_owner(struct page_walk *pw, u8 kind, u64 off, u64 lpn)
{
	struct bad_entry key = { .lpn = lpn + 1 }, *k = &key, **e;

	e = bsearch(&k, bad_by_lpn, nbad_by_lpn, sizeof(*bad_by_lpn), bad_lpn_cmp);
	if (!e || (*e)->ino)
		return;
	(*e)->ino = pw->ino;
	(*e)->kind = kind;
	(*e)->off = off;
}

static struct {
	struct bad_entry **by_frame;
	u64 n;
} bad_lookup;

/* The logical page behind a listed frame, as 1 + its number. */
static void bad_frame_lpn(u64 lpn, u64 frame, void *arg)
{
	struct bad_entry key = { .frame = frame }, *k = &key, **e;
	typeof(bad_lookup) *b = arg;

	if (!frame_bad(frame))
		return;
	e = bsearch(&k, b->by_frame, b->n, sizeof(*b->by_frame), bad_frame_cmp);
	if (e && !(*e)->lpn)
		(*e)->lpn = lpn + 1;
}

/*
 * Read block 1 when the badframes feature is set: the valid entries (frames
 * below s_data_pages, named once) go into the badframe bitmap, which keeps
 * the rest of the inspection from reading those frames.
 */
static void read_badlist(void)
{
	u64 i, count;

	if (!(le32_to_cpu(sb.s_feature_ro_compat) & VSMFS_FEATURE_RO_COMPAT_BADFRAMES) ||
	    !(le32_to_cpu(sb.s_feature_incompat) & VSMFS_FEATURE_INCOMPAT_SB_LAST))
		return;
	badlist = xalloc(VSMFS_BLOCK_SIZE);
	badframe = xalloc(DIV_ROUND_UP(L.data_pages, 8));
	read_blocks(VSMFS_BADLIST_BLOCK, 1, badlist);
	count = min_u64(le32_to_cpu(badlist->b_count), VSMFS_BADLIST_MAX);
	bad_ent = xalloc((count ? count : 1) * sizeof(*bad_ent));
	for (i = 0; i < count; i++) {
		struct bad_entry *e = &bad_ent[nbad_ent++];

		e->frame = le64_to_cpu(badlist->b_frames[i]);
		if (e->frame >= L.data_pages)
			e->why = "past the last frame";
		else if (tbit(badframe, e->frame))
			e->why = "listed before";
		else
			badframe[e->frame / 8] |= (u8)(1U << (e->frame % 8));
	}
}

static void print_badframes(void)
{
	u32 ro = le32_to_cpu(sb.s_feature_ro_compat), magic, count;
	struct bad_entry **by_frame;
	u8 *ibitmap, *iblk;
	__le32 *imap;
	u64 ino, i, n = 0, cached = ~0ULL;

	if (!(ro & VSMFS_FEATURE_RO_COMPAT_BADFRAMES) || !badlist) {
		if (json)
			printf("\"badframes\":null");
		else if (ro & VSMFS_FEATURE_RO_COMPAT_BADFRAMES)
			printf("Bad frames: the badframes feature without sb_last: no list"
			       " (run fsck.vsmfs)\n");
		else
			printf("Bad frames: no list (the badframes feature is not set)\n");
		return;
	}
	/* The logical page behind each frame listed. */
	by_frame = xalloc((nbad_ent ? nbad_ent : 1) * sizeof(*by_frame));
	for (i = 0; i < nbad_ent; i++)
		if (!bad_ent[i].why)
			by_frame[n++] = &bad_ent[i];
	qsort(by_frame, n, sizeof(*by_frame), bad_frame_cmp);
	bad_lookup.by_frame = by_frame;
	bad_lookup.n = n;
	for_each_pte(bad_frame_lpn, &bad_lookup);
	bad_by_lpn = by_frame;		/* reused: sorted by logical page now */
	for (i = 0; i < n; i++)
		if (by_frame[i]->lpn)
			bad_by_lpn[nbad_by_lpn++] = by_frame[i];
	qsort(bad_by_lpn, nbad_by_lpn, sizeof(*bad_by_lpn), bad_lpn_cmp);

	/* Their owners: every inode in use, walked. */
	ibitmap = read_region(L.ibitmap_start, L.ibitmap_blocks);
	imap = read_region(L.imap_start, L.imap_blocks);
	iblk = xalloc(VSMFS_BLOCK_SIZE);
	walk_bufs_alloc();
	for (ino = 1; ino < L.inodes && nbad_by_lpn; ino++) {
		struct page_walk pw = { .ino = ino, .page = bad_owner };
		const struct vsmfs_dinode *di;
		u64 slot = le32_to_cpu(imap[ino]);

		if (!tbit(ibitmap, ino) || !slot || slot >= L.inodes)
			continue;
		di = dinode_at(slot, iblk, &cached);
		if (di->i_mode)
			walk_pages(&pw, di);
	}
	walk_bufs_free();
	free(iblk);
	free(imap);
	free(ibitmap);

	magic = le32_to_cpu(badlist->b_magic);
	count = le32_to_cpu(badlist->b_count);
	if (json)
		printf("\"badframes\":{\"block\":%d,\"magic_ok\":%s,\"count\":%u,\"entries\":[",
		       VSMFS_BADLIST_BLOCK, magic == VSMFS_BADLIST_MAGIC ? "true" : "false",
		       count);
	else
		printf("Bad frames (block %d): %u listed%s%s\n", VSMFS_BADLIST_BLOCK, count,
		       magic != VSMFS_BADLIST_MAGIC ? ", bad magic (run fsck.vsmfs)" : "",
		       count > VSMFS_BADLIST_MAX ? ", more than fit (run fsck.vsmfs)" : "");
	if (!json && nbad_ent)
		printf("  %12s %12s %14s  %s\n", "frame", "block", "logical page", "owner");
	for (i = 0; i < nbad_ent; i++) {
		const struct bad_entry *e = &bad_ent[i];
		const char *state = e->why ? "invalid" : !e->lpn ? "unmapped" :
				    e->ino ? "in use" : e->lpn == 1 ? "reserved" : "retired";

		if (json) {
			printf("%s{\"frame\":%" PRIu64 ",\"block\":", i ? "," : "", e->frame);
			if (e->why)
				printf("null,\"lpn\":null");
			else if (e->lpn)
				printf("%" PRIu64 ",\"lpn\":%" PRIu64, L.data_start + e->frame,
				       e->lpn - 1);
			else
				printf("%" PRIu64 ",\"lpn\":null", L.data_start + e->frame);
			printf(",\"state\":\"%s\"", state);
			if (e->ino) {
				printf(",\"ino\":%" PRIu64 ",\"kind\":\"%s\",\"offset\":", e->ino,
				       page_names[e->kind]);
				if (e->off == NO_OFFSET)
					printf("null");
				else
					printf("%" PRIu64, e->off);
			}
			printf("}");
			continue;
		}
		if (e->why) {
			printf("  %12" PRIu64 " %12s %14s  invalid entry: %s (run fsck.vsmfs)\n",
			       e->frame, "-", "-", e->why);
		} else if (!e->lpn) {
			printf("  %12" PRIu64 " %12" PRIu64 " %14s  none (no logical page maps it;"
			       " run fsck.vsmfs)\n", e->frame, L.data_start + e->frame, "-");
		} else {
			printf("  %12" PRIu64 " %12" PRIu64 " %14" PRIu64 "  ", e->frame,
			       L.data_start + e->frame, e->lpn - 1);
			if (!e->ino)
				printf("%s\n", e->lpn == 1 ? "reserved logical page 0" :
				       "free (retired)");
			else if (e->off == NO_OFFSET)
				printf("inode %" PRIu64 " (%s)\n", e->ino, page_names[e->kind]);
			else
				printf("inode %" PRIu64 " offset %" PRIu64 " (%s)\n", e->ino,
				       e->off, page_names[e->kind]);
		}
	}
	if (json)
		printf("]}");
	free(bad_by_lpn);
}

/*
 * Hot-inode aggregation as the mapping table shows it: mkfs maps every
 * i-number to the slot of the same number, so an inode at a lower slot was
 * moved into the window (a hot inode) and one at a higher slot was moved
 * out to make room. The window reaches at least past the highest slot a
 * hot inode holds; the window itself is not kept on PM.
 */
static void print_aggr(void)
{
	u8 *ibitmap = read_region(L.ibitmap_start, L.ibitmap_blocks);
	__le32 *imap = read_region(L.imap_start, L.imap_blocks);
	u64 ino, hot = 0, out = 0, top = 0, shown = 0;

	if (json)
		printf("\"aggregation\":{\"hot\":[");
	else
		printf("Hot-inode aggregation\n  moved into the window:");
	for (ino = 1; ino < L.inodes; ino++) {
		u64 slot = le32_to_cpu(imap[ino]);

		if (slot == ino || slot >= L.inodes)
			continue;
		if (slot > ino) {
			out++;
			continue;
		}
		hot++;
		top = slot > top ? slot : top;
		if (json)
			printf("%s{\"ino\":%" PRIu64 ",\"slot\":%" PRIu64 ",\"in_use\":%s}",
			       hot > 1 ? "," : "", ino, slot, tbit(ibitmap, ino) ? "true" : "false");
		else if (shown++ < 16)
			printf(" %" PRIu64 "@%" PRIu64, ino, slot);
	}
	top = hot ? roundup(top + 1, (u64)VSMFS_INODES_PER_BLOCK) : 0;
	if (json) {
		printf("],\"moved_out\":%" PRIu64 ",\"window_at_least\":%" PRIu64 "}", out, top);
	} else {
		printf("%s%s\n", hot ? "" : " none", shown < hot ? " ..." : "");
		printf("  inodes moved in      %" PRIu64 " (i-number@slot above)\n", hot);
		printf("  inodes moved out     %" PRIu64 "\n", out);
		printf("  window at least      %" PRIu64 " slots\n", top);
	}
	free(imap);
	free(ibitmap);
}

/*
 * --export: the properties udev's blkid builtin sets for a file system it
 * recognises, in the KEY=value form of IMPORT{program}, with the label made
 * safe and the _ENC values encoded by the libblkid functions udev uses.
 */
static void print_export(void)
{
	char label[VSMFS_LABEL_LEN + 1], safe[VSMFS_LABEL_LEN + 1], uuid[40];
	char enc[4 * VSMFS_LABEL_LEN + 1];

	format_uuid(sb.s_uuid, uuid);
	memcpy(label, sb.s_label, VSMFS_LABEL_LEN);
	label[VSMFS_LABEL_LEN] = '\0';
	printf("ID_FS_TYPE=vsmfs\n");
	printf("ID_FS_USAGE=filesystem\n");
	printf("ID_FS_VERSION=%u\n", le32_to_cpu(sb.s_version));
	printf("ID_FS_UUID=%s\n", uuid);
	blkid_encode_string(uuid, enc, sizeof(enc));
	printf("ID_FS_UUID_ENC=%s\n", enc);
	if (label[0]) {
		blkid_encode_string(label, enc, sizeof(enc));
		blkid_safe_string(label, safe, sizeof(safe));
		printf("ID_FS_LABEL=%s\n", safe);
		printf("ID_FS_LABEL_ENC=%s\n", enc);
	}
}

/* ---- metadata dump and restore ---- */

/*
 * A metadata dump holds every block a check of the file system reads,
 * without file data: the blocks before the data area (superblock, block 1,
 * journal, inode table, inode mapping table, bitmaps, page table), the
 * backup superblock, and the blocks of the data area that inodes name as
 * metadata (directory, long symlink, index and xattr blocks), found both
 * through the latest journal versions and through the home blocks. Pages
 * past the end of a regular file are kept too: fsck.vsmfs checks that they
 * are zero. Blocks are copied raw (the journal as it is, not replayed), so
 * the restored image is checked as the original is.
 *
 * Unless asked not to, names are replaced by others of the same length,
 * the same replacement for the same name everywhere and a different one
 * for a different name, so duplicates, lookups and hard links keep their
 * shape: directory entry names (with their d_hash recomputed when it was
 * right, and left wrong when it was wrong), extended attribute names, and
 * the components of symlink targets, in home blocks, in their versions
 * in the journal and in fast-commit records (md_fc_areas()). "." and ".."
 * are kept.
 *
 * File: struct md_hdr, then runs of consecutive blocks: a struct md_run
 * and its blocks. All-zero blocks are left out; a restored image reads
 * zero wherever the dump has nothing.
 */
#define MD_MAGIC	"VSMFSMD1"
#define MD_VERSION	1
#define MD_OBFUSCATED	0x1
#define MD_RUN_MAX	256		/* blocks written in one run at most */

struct md_hdr {
	char	magic[8];		/* MD_MAGIC */
	__le32	version;		/* MD_VERSION */
	__le32	flags;			/* MD_OBFUSCATED */
	__le32	block_size;		/* VSMFS_BLOCK_SIZE */
	__le32	reserved;		/* zero */
	__le64	bytes;			/* size of the device dumped */
	__le64	runs;			/* runs that follow */
	__le64	blocks;			/* blocks they hold */
};

struct md_run {
	__le64	start;			/* first block */
	__le64	count;			/* blocks that follow */
};

static_assert(sizeof(struct md_hdr) == 48);
static_assert(sizeof(struct md_run) == 16);

/* What a block holds, for the obfuscation of its names. */
enum { MK_NONE, MK_DIR, MK_SYMLINK, MK_XATTR, MK_ITABLE };

struct md_kind {
	u64 blk;
	u8 kind;
};

static u8 *md_want;			/* bitmap of the blocks to dump */
static struct md_kind *md_kinds;
static u64 md_nkinds, md_kinds_cap;

static void md_mark(u64 b, u8 kind)
{
	if (b >= img.blocks)
		return;
	md_want[b / 8] |= 1U << (b % 8);
	if (kind == MK_NONE)
		return;
	md_kinds = xgrow(md_kinds, md_nkinds, &md_kinds_cap, sizeof(*md_kinds));
	md_kinds[md_nkinds].blk = b;
	md_kinds[md_nkinds++].kind = kind;
}

/* A page on a bad frame is left out: its content is lost, and reading it fails. */
static void md_mark_lpn(u64 lpn, u8 kind)
{
	u64 b = lpn_block(lpn);

	if (b && !lpn_bad(lpn))
		md_mark(b, kind);
}

/* Pages @first.. of a run of @cnt at @lpn: as metadata, or past the end. */
static void md_mark_run(u64 lpn, u64 cnt, u64 first, u8 kind)
{
	u64 i;

	if (!lpn || cnt > VSMFS_VSP_PAGES || lpn >= L.lpages)
		return;
	for (i = first; i < cnt && lpn + i < L.lpages; i++)
		md_mark_lpn(lpn + i, kind);
}

/* The walk of the index of an inode of @kind, @size bytes. */
struct md_walk {
	struct index_walk iw;		/* first: walked with index_walk() */
	u8 kind;
	u64 size;
};

/*
 * Index entry @key of an inode of @kind (MK_NONE: a regular file of @size
 * bytes, whose runs are data except pages past the end).
 */
static void md_entry(struct index_walk *iw, u64 key, u64 e)
{
	const struct md_walk *mw = (const struct md_walk *)iw;
	u8 kind = mw->kind;
	u64 size = mw->size;
	u64 lpn = e & VSMFS_IDX_LPN_MASK, cnt = (e & IDX_COUNT_MASK) >> VSMFS_IDX_COUNT_SHIFT;
	u64 first = key * VSMFS_VSP_PAGES, eof = DIV_ROUND_UP(size, VSMFS_BLOCK_SIZE);

	if (!e)
		return;
	if (kind != MK_NONE)
		md_mark_run(lpn, cnt, 0, kind);
	else
		md_mark_run(lpn, cnt, eof > first ? eof - first : 0, MK_NONE);
}

/* Index blocks are metadata: dumped. */
static const __le64 *md_block(struct index_walk *iw, u64 ptr, int depth)
{
	const __le64 *e = runs_block(iw, ptr, depth);

	if (e)
		md_mark(lpn_block(ptr), MK_NONE);
	return e;
}

/* The metadata blocks in the data area every inode in use names. */
static void md_walk_inodes(void)
{
	__le32 *imap = read_region(L.imap_start, L.imap_blocks);
	u8 *iblk = xalloc(VSMFS_BLOCK_SIZE);
	u64 ino, cached = ~0ULL;

	pt_cache_blk = ~0ULL;
	for (ino = 1; ino < L.inodes; ino++) {
		struct md_walk mw = { .iw = { md_entry, md_block } };
		const struct vsmfs_dinode *di;
		u64 slot = le32_to_cpu(imap[ino]), size;
		u16 mode;
		u8 kind;

		if (slot >= L.inodes)
			continue;
		di = dinode_at(slot, iblk, &cached);
		mode = le16_to_cpu(di->i_mode);
		size = le64_to_cpu(di->i_size);
		if (!mode)
			continue;
		if (di->i_xattr && le64_to_cpu(di->i_xattr) < L.lpages)
			md_mark_lpn(le64_to_cpu(di->i_xattr), MK_XATTR);
		if (S_ISDIR(mode))
			kind = MK_DIR;
		else if (S_ISLNK(mode) && size > VSMFS_INLINE_LEN)
			kind = MK_SYMLINK;
		else if (S_ISREG(mode))
			kind = MK_NONE;
		else
			continue;	/* no index, or a fast symlink */
		mw.kind = kind;
		mw.size = size;
		index_walk(&mw.iw, di);
	}
	free(iblk);
	free(imap);
}

/* ---- name obfuscation ---- */

struct md_name {
	u8 len;
	u8 orig[VSMFS_NAME_LEN], obf[VSMFS_NAME_LEN];
};

static struct md_name *md_names;
static u32 md_nnames, *md_fwd, *md_rev, md_tab;	/* tables of index + 1 */

static u64 md_hash(const u8 *s, u8 len)
{
	u64 h = 0xcbf29ce484222325ULL ^ len;

	while (len--) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Slot of @s in @tab (by original if @fwd, else by replacement). */
static u32 md_slot(const u32 *tab, bool fwd, const u8 *s, u8 len)
{
	u32 i = (u32)md_hash(s, len) & (md_tab - 1);

	for (;; i = (i + 1) & (md_tab - 1)) {
		const struct md_name *n = tab[i] ? &md_names[tab[i] - 1] : NULL;

		if (!n || (n->len == len && !memcmp(fwd ? n->orig : n->obf, s, len)))
			return i;
	}
}

static void md_grow(void)
{
	u32 i;

	md_tab = md_tab ? 2 * md_tab : 4096;
	free(md_fwd);
	free(md_rev);
	md_fwd = calloc(md_tab, sizeof(*md_fwd));
	md_rev = calloc(md_tab, sizeof(*md_rev));
	md_names = realloc(md_names, (size_t)md_tab / 2 * sizeof(*md_names));
	if (!md_fwd || !md_rev || !md_names)
		fatal("out of memory");
	for (i = 0; i < md_nnames; i++) {
		md_fwd[md_slot(md_fwd, true, md_names[i].orig, md_names[i].len)] = i + 1;
		md_rev[md_slot(md_rev, false, md_names[i].obf, md_names[i].len)] = i + 1;
	}
}

static bool md_dots(const u8 *s, u8 len)
{
	return (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.');
}

/*
 * The replacement of a name: letters, digits, '_' and '-' drawn from a hash
 * of the name, drawn again while another name has it; should that go on
 * (very many names of one or two bytes), the first free name in byte order
 * (without '/' and NUL), which exists: originals are names of that kind.
 */
static const u8 *md_replace(const u8 *s, u8 len)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
	struct md_name *n;
	u32 f, attempt;
	u64 h;
	u8 i;

	if (md_nnames + 1 > md_tab / 2)
		md_grow();
	f = md_slot(md_fwd, true, s, len);
	if (md_fwd[f])
		return md_names[md_fwd[f] - 1].obf;
	n = &md_names[md_nnames];
	n->len = len;
	memcpy(n->orig, s, len);
	for (attempt = 0; attempt < 64; attempt++) {
		h = md_hash(s, len) + attempt * 0x9e3779b97f4a7c15ULL;
		for (i = 0; i < len; i++) {
			h ^= h >> 31;
			h *= 0xbf58476d1ce4e5b9ULL;
			h ^= h >> 29;
			n->obf[i] = (u8)set[h % (sizeof(set) - 1)];
		}
		if (!md_rev[md_slot(md_rev, false, n->obf, len)])
			goto found;
	}
	memset(n->obf, 1, len);
	while (md_rev[md_slot(md_rev, false, n->obf, len)] || md_dots(n->obf, len)) {
		for (i = len; i--; ) {
			n->obf[i] += n->obf[i] == '/' - 1 ? 2 : 1;
			if (n->obf[i])
				break;
			n->obf[i] = 1;
		}
	}
found:
	md_fwd[f] = md_nnames + 1;
	md_rev[md_slot(md_rev, false, n->obf, len)] = md_nnames + 1;
	md_nnames++;
	return n->obf;
}

/*
 * A name holding '/' or NUL (damage) is kept: a replacement never holds
 * them, so it stays as wrong as it was, and no replacement equals it.
 */
static void md_name(u8 *s, u8 len)
{
	if (len && !md_dots(s, len) && !memchr(s, '/', len) && !memchr(s, 0, len))
		memcpy(s, md_replace(s, len), len);
}

/* A symlink target: each component between slashes. */
static void md_path(u8 *s, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		size_t k;

		for (j = i; j < len && s[j] != '/' && s[j]; j++)
			;
		/* A component may be longer than a name: in pieces. */
		for (k = i; k < j; k += VSMFS_NAME_LEN)
			md_name(s + k, (u8)min_u64(j - k, VSMFS_NAME_LEN));
		if (j < len && !s[j])
			break;
		i = j + 1;
	}
}

static void md_dir_block(u8 *b)
{
	unsigned int off = 0;

	/* Free entries too: a removed entry keeps its name. */
	while (off < VSMFS_BLOCK_SIZE) {
		struct vsmfs_ddirent *de = (struct vsmfs_ddirent *)(b + off);
		unsigned int rec, nl;
		u32 old, now;

		if (!vsmfs_dirent_rec_ok(de, off))
			break;
		rec = le16_to_cpu(de->d_rec_len);
		nl = de->d_name_len;
		if (nl && vsmfs_dirent_len(nl) <= rec) {
			old = vsmfs_name_hash(de->d_name, nl);
			md_name((u8 *)de->d_name, (u8)nl);
			now = vsmfs_name_hash(de->d_name, nl);
			if (le32_to_cpu(de->d_hash) == old)
				de->d_hash = cpu_to_le32(now);
			else if (le32_to_cpu(de->d_hash) == now)
				de->d_hash = cpu_to_le32(now ^ 1);	/* stays wrong */
		}
		off += rec;
	}
}

static void md_xattr_block(u8 *b)
{
	const struct vsmfs_dxattr_hdr *h = (const struct vsmfs_dxattr_hdr *)b;
	unsigned int off = sizeof(*h), i;
	const struct vsmfs_dxattr_entry *e;

	if (le32_to_cpu(h->x_magic) != VSMFS_XATTR_MAGIC)
		return;
	/* The whole block, whatever x_used says: a damaged header hides no name. */
	for (i = 0; i < le16_to_cpu(h->x_count); i++) {
		e = vsmfs_xattr_next(b, &off, VSMFS_BLOCK_SIZE);
		if (!e)
			break;
		if (e->e_name_index == VSMFS_XATTR_INDEX_USER ||
		    e->e_name_index == VSMFS_XATTR_INDEX_TRUSTED ||
		    e->e_name_index == VSMFS_XATTR_INDEX_SECURITY)
			md_name((u8 *)e->e_name, e->e_name_len);
	}
}

/* Fast symlink targets in a block of the inode table. */
static void md_itable_block(u8 *b)
{
	unsigned int i;

	for (i = 0; i < VSMFS_INODES_PER_BLOCK; i++) {
		struct vsmfs_dinode *di = (struct vsmfs_dinode *)(b + i * VSMFS_INODE_SIZE);
		u64 size = le64_to_cpu(di->i_size);

		if (S_ISLNK(le16_to_cpu(di->i_mode)) && size && size <= VSMFS_INLINE_LEN)
			md_path(di->i_inline, size);
	}
}

static void md_obfuscate(u8 *b, u8 kind)
{
	switch (kind) {
	case MK_DIR:
		md_dir_block(b);
		break;
	case MK_SYMLINK:
		md_path(b, VSMFS_BLOCK_SIZE);
		break;
	case MK_XATTR:
		md_xattr_block(b);
		break;
	case MK_ITABLE:
		md_itable_block(b);
		break;
	}
}

/*
 * Words @w of slot @at that a record holds, those @mask names: if that
 * inode is a fast symlink (as the records leave the slot, with these
 * words) and they hold words of its target, those are replaced by the
 * words of the target obfuscated as in the inode table (md_itable_block()).
 */
static void md_fc_slot(u64 at, u32 mask, __le64 *w, u8 *iblk)
{
	const size_t lo = offsetof(struct vsmfs_dinode, i_inline);
	__le64 slot[VSMFS_INODE_SIZE / 8];
	struct vsmfs_dinode *di = (struct vsmfs_dinode *)slot;
	u32 k, m;
	u64 size;

	if (!at || at >= L.inodes)
		return;
	read_blocks(L.itable_start + at / VSMFS_INODES_PER_BLOCK, 1, iblk);
	memcpy(slot, iblk + at % VSMFS_INODES_PER_BLOCK * VSMFS_INODE_SIZE, sizeof(slot));
	for (k = 0, m = 0; k < ARRAY_SIZE(slot); k++)
		if (mask & 1U << k)
			slot[k] = w[m++];
	size = le64_to_cpu(di->i_size);
	if (!S_ISLNK(le16_to_cpu(di->i_mode)) || !size || size > VSMFS_INLINE_LEN)
		return;
	md_path(di->i_inline, size);
	for (k = 0, m = 0; k < ARRAY_SIZE(slot); k++) {
		if (!(mask & 1U << k))
			continue;
		if (k * 8 >= lo && k * 8 < lo + VSMFS_INLINE_LEN)
			w[m] = slot[k];
		m++;
	}
}

/*
 * The words of span @e, words of a directory block: replaced by those of
 * the block as the records leave it, obfuscated as a directory block
 * (md_dir_block()); the last record to store a word stores what the dump
 * of that block, obfuscated, holds after it. A span of a block outside
 * the data area, which mount refuses, is zeroed.
 */
static void md_fc_span(const struct vsmfs_fc_ent *e, u8 *blk)
{
	u64 b = e->where / (VSMFS_BLOCK_SIZE / 8);
	__le64 *w = (__le64 *)e->val;

	if (b < L.data_start || b >= L.blocks || b >= img.blocks) {
		memset(w, 0, (size_t)e->n * 8);
		return;
	}
	read_blocks(b, 1, blk);
	md_dir_block(blk);
	memcpy(w, blk + e->where % (VSMFS_BLOCK_SIZE / 8) * 8, (size_t)e->n * 8);
}

/*
 * The fast-commit areas as an obfuscated dump holds them, NULL when they
 * hold no valid record. A record holds names in words of fast symlinks'
 * slots (its own slot's words, its directory's and an unlinked inode's:
 * md_fc_slot()) and in the spans of directory blocks of its directory's
 * part (md_fc_span()). Those are replaced, and the record's checksum set
 * again.
 */
static u8 *md_fc_areas(void)
{
	u64 bytes = (u64)jl.s.fc_areas * jl.fc_bytes;
	struct vsmfs_fc_iter it;
	struct vsmfs_fc_ent e;
	u8 *fc, *blk;
	u32 i;

	if (!jl.fc || !jl.nrec)
		return NULL;
	fc = xalloc(bytes);
	blk = xalloc(VSMFS_BLOCK_SIZE);
	memcpy(fc, jl.fc, bytes);
	for (i = 0; i < jl.nrec; i++) {
		struct vsmfs_dfc_rec *r = (struct vsmfs_dfc_rec *)(fc + jl.rec[i].at);

		md_fc_slot(jl.rec[i].slot, le32_to_cpu(r->r_words), (__le64 *)(r + 1), blk);
		vsmfs_fc_iter_init(&it, r);
		while (!vsmfs_fc_next(&it, &e)) {
			if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_DIR) ||
			    e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_GONE))
				md_fc_slot(e.where, e.mask, (__le64 *)e.val, blk);
			else if (e.kind == VSMFS_FC_KIND(VSMFS_FC_KEY_SPAN))
				md_fc_span(&e, blk);
		}
		r->r_crc = cpu_to_le32(crc32c(~0U, (u8 *)r + 4, jl.rec[i].len - 4));
	}
	free(blk);
	return fc;
}

static int md_kind_cmp(const void *a, const void *b)
{
	const struct md_kind *x = a, *y = b;

	return x->blk < y->blk ? -1 : x->blk > y->blk;
}

static u8 md_kind_of(u64 b)
{
	struct md_kind key = { .blk = b }, *k;

	if (vsmfs_layout_itable(&L, b))
		return MK_ITABLE;
	k = bsearch(&key, md_kinds, md_nkinds, sizeof(*k), md_kind_cmp);
	return k ? k->kind : MK_NONE;
}

/*
 * What each journal block holds a version of: the kind of the home block
 * its header (or a header copy) names. A block no header names as a
 * directory, symlink, xattr or inode table block is copied as it is.
 */
static u8 *md_journal_kinds(u64 *jstart, u32 *n)
{
	u32 hdr_blocks, i, jb;
	struct vsmfs_djhdr *hdr;
	u8 *kinds;

	/* Laid out as the journal superblock says, whether the journal is sound or not. */
	hdr = xalloc(VSMFS_BLOCK_SIZE);
	dev_io(false, L.journal_start, 1, hdr);
	*n = journal_geometry_of((const struct vsmfs_djsb *)hdr, L.journal_blocks, &hdr_blocks);
	free(hdr);
	*jstart = L.journal_start + 2 + hdr_blocks;
	kinds = xalloc(*n ? *n : 1);
	hdr = xalloc((u64)(hdr_blocks + 1) << VSMFS_BLOCK_SHIFT);
	dev_io(false, L.journal_start + 1, hdr_blocks + 1, hdr);
	for (i = 0; i < (hdr_blocks + 1) * VSMFS_JH_PER_BLOCK; i++) {
		u64 map = le64_to_cpu(hdr[i].h_map);

		jb = (u32)(map & VSMFS_JH_JB_MASK);
		if (jb < *n && !kinds[jb])
			kinds[jb] = md_kind_of(map >> VSMFS_JH_HOME_SHIFT);
	}
	free(hdr);
	return kinds;
}

static void md_write(FILE *f, const void *p, size_t len, const char *out)
{
	if (fwrite(p, 1, len, f) != len)
		fatal("%s: write: %s", out, strerror(errno));
}

static void md_flush(FILE *f, const char *out, const u8 *buf, u64 start, u32 cnt)
{
	struct md_run r = { .start = cpu_to_le64(start), .count = cpu_to_le64(cnt) };

	md_write(f, &r, sizeof(r), out);
	md_write(f, buf, (size_t)cnt << VSMFS_BLOCK_SHIFT, out);
}

/* Walk the inodes as recovery sees them and as the home blocks hold them. */
/* Run @fn; should it fail (fatal()), say that @what and go on. */
static void md_try(void (*fn)(void), const char *what)
{
	jmp_buf jb;

	soft_fail = &jb;
	if (setjmp(jb))
		fprintf(stderr, "%s: %s\n", progname, what);
	else
		fn();
	soft_fail = NULL;
}

static void md_walk(void)
{
	u32 saved = img.ov_count;

	md_try(md_walk_inodes, "inodes as the journal has them not walked: their blocks"
	       " may be missing from the dump");
	img.ov_count = 0;
	md_try(md_walk_inodes, "inodes as their home blocks hold them not walked: their"
	       " blocks may be missing from the dump");
	img.ov_count = saved;
}

/* A damaged journal is dumped as it is, and its versions not used. */
static void md_read_journal(void)
{
	md_try(read_journal, "the journal is dumped as it is; blocks only its versions"
	       " name may be missing");
}

static int metadump(const char *out, bool obfuscate)
{
	struct md_hdr h = { .magic = MD_MAGIC };
	u8 *buf = xalloc((u64)MD_RUN_MAX << VSMFS_BLOCK_SHIFT), *jkinds, *fc = NULL;
	u64 b, run_start = 0, runs = 0, blocks = 0, jstart, fc_start, fc_blocks = 0;
	u32 n, cnt = 0;
	FILE *f;

	md_want = xalloc(DIV_ROUND_UP(img.blocks, 8));
	pt_cache = xalloc(VSMFS_BLOCK_SIZE);
	idx_buf[0] = xalloc(VSMFS_BLOCK_SIZE);
	idx_buf[1] = xalloc(VSMFS_BLOCK_SIZE);
	md_read_journal();
	for (b = 0; b < L.data_start && b < img.blocks; b++)
		md_mark(b, MK_NONE);
	md_mark(L.sb_backup, MK_NONE);
	md_mark(vsmfs_sb_backup_guess(img.blocks, 0), MK_NONE);
	md_walk();
	qsort(md_kinds, md_nkinds, sizeof(*md_kinds), md_kind_cmp);
	jkinds = md_journal_kinds(&jstart, &n);
	if (obfuscate)
		fc = md_fc_areas();
	/* The journal superblock was read whether the journal is sound or not. */
	fc_start = L.journal_start + jl.s.fc_start;
	if (fc)
		fc_blocks = (u64)jl.s.fc_areas * jl.s.fc_area_blocks;

	f = fopen(out, "w");
	if (!f)
		fatal("%s: %s", out, strerror(errno));
	md_write(f, &h, sizeof(h), out);	/* completed at the end */
	for (b = 0; b <= img.blocks; b++) {
		u8 *p;
		bool take = b < img.blocks && tbit(md_want, b);

		if (cnt == MD_RUN_MAX || (cnt && !take)) {
			md_flush(f, out, buf, run_start, cnt);
			runs++;
			blocks += cnt;
			cnt = 0;
		}
		if (!take)
			continue;
		p = buf + ((u64)cnt << VSMFS_BLOCK_SHIFT);
		dev_io(false, b, 1, p);
		if (b - fc_start < fc_blocks)
			memcpy(p, fc + ((b - fc_start) << VSMFS_BLOCK_SHIFT), VSMFS_BLOCK_SIZE);
		else if (obfuscate && b >= jstart && b < jstart + n)
			md_obfuscate(p, jkinds[b - jstart]);
		else if (obfuscate)
			md_obfuscate(p, md_kind_of(b));
		if (vsmfs_all_zero(p, VSMFS_BLOCK_SIZE)) {
			if (cnt) {
				md_flush(f, out, buf, run_start, cnt);
				runs++;
				blocks += cnt;
				cnt = 0;
			}
			continue;
		}
		if (!cnt)
			run_start = b;
		cnt++;
	}
	h.version = cpu_to_le32(MD_VERSION);
	h.flags = cpu_to_le32(obfuscate ? MD_OBFUSCATED : 0);
	h.block_size = cpu_to_le32(VSMFS_BLOCK_SIZE);
	h.bytes = cpu_to_le64(img.blocks << VSMFS_BLOCK_SHIFT);
	h.runs = cpu_to_le64(runs);
	h.blocks = cpu_to_le64(blocks);
	if (fseek(f, 0, SEEK_SET))
		fatal("%s: seek: %s", out, strerror(errno));
	md_write(f, &h, sizeof(h), out);
	if (fclose(f))
		fatal("%s: write: %s", out, strerror(errno));
	printf("%s: %" PRIu64 " metadata blocks of %s (%" PRIu64 " blocks) in %" PRIu64
	       " runs%s\n", out, blocks, img.path, img.blocks, runs,
	       obfuscate ? ", names obfuscated" : "");
	return 0;
}

/* Write a dump back as an image file of the size of the device dumped. */
static int restore(const char *in, const char *img)
{
	u8 *buf = xalloc((u64)MD_RUN_MAX << VSMFS_BLOCK_SHIFT);
	u64 i, blocks = 0, nblk;
	struct md_hdr h;
	struct md_run r;
	struct stat st;
	FILE *f = fopen(in, "r");
	int out;

	if (!f)
		fatal("%s: %s", in, strerror(errno));
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, MD_MAGIC, sizeof(h.magic)))
		fatal("%s: not a vsmfs metadata dump", in);
	if (le32_to_cpu(h.version) != MD_VERSION ||
	    le32_to_cpu(h.block_size) != VSMFS_BLOCK_SIZE)
		fatal("%s: metadata dump version %u with %u-byte blocks: not supported", in,
		      le32_to_cpu(h.version), le32_to_cpu(h.block_size));
	nblk = le64_to_cpu(h.bytes) >> VSMFS_BLOCK_SHIFT;
	if (!stat(img, &st) && !S_ISREG(st.st_mode))
		fatal("%s: not a regular file: a dump is restored into an image file", img);
	out = open(img, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		fatal("%s: %s", img, strerror(errno));
	if (ftruncate(out, (off_t)le64_to_cpu(h.bytes)))
		fatal("%s: cannot size to %" PRIu64 " bytes: %s", img,
		      (u64)le64_to_cpu(h.bytes), strerror(errno));
	for (i = 0; i < le64_to_cpu(h.runs); i++) {
		u64 start, cnt;
		size_t len;

		if (fread(&r, sizeof(r), 1, f) != 1)
			fatal("%s: truncated after %" PRIu64 " runs", in, i);
		start = le64_to_cpu(r.start);
		cnt = le64_to_cpu(r.count);
		if (!cnt || cnt > MD_RUN_MAX || start >= nblk || cnt > nblk - start)
			fatal("%s: run %" PRIu64 " (blocks %" PRIu64 "+%" PRIu64
			      ") outside the %" PRIu64 " blocks of the device", in, i, start, cnt,
			      nblk);
		len = (size_t)cnt << VSMFS_BLOCK_SHIFT;
		if (fread(buf, 1, len, f) != len)
			fatal("%s: truncated in run %" PRIu64, in, i);
		if (pwrite(out, buf, len, (off_t)(start << VSMFS_BLOCK_SHIFT)) != (ssize_t)len)
			fatal("%s: write: %s", img, strerror(errno));
		blocks += cnt;
	}
	if (blocks != le64_to_cpu(h.blocks) || fgetc(f) != EOF)
		fatal("%s: inconsistent: %" PRIu64 " blocks in its runs, the header says %" PRIu64,
		      in, blocks, (u64)le64_to_cpu(h.blocks));
	if (fsync(out) || close(out))
		fatal("%s: write: %s", img, strerror(errno));
	fclose(f);
	printf("%s: %" PRIu64 " metadata blocks restored (%" PRIu64 " blocks)%s\n", img,
	       blocks, nblk, le32_to_cpu(h.flags) & MD_OBFUSCATED ? ", names obfuscated" : "");
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: vsmfs-inspect [-j | -f | -b | -c] [-i] [--json] DEVICE\n"
		"       vsmfs-inspect --map INO [--json] DEVICE\n"
		"       vsmfs-inspect --export DEVICE\n"
		"       vsmfs-inspect --metadump FILE [--no-obfuscate] DEVICE\n"
		"       vsmfs-inspect --restore FILE IMAGE\n"
		"Show the layout, usage, journal state, superpage fragmentation, hot-inode\n"
		"aggregation and bad frames of a vsmfs\n"
		"file system on DEVICE (an unmounted pmem device or image file). Read only.\n\n"
		"  -j, --journal   journal state only\n"
		"  -f, --frag      virtual superpage fragmentation only\n"
		"  -b, --badframes the bad-frame list only: each frame, its device block, the\n"
		"                  logical page behind it and what holds it\n"
		"  -c, --fast-commits  the valid fast-commit records only: each one's area,\n"
		"                  offset, slot and inode, order, slot words, page table\n"
		"                  entries, bitmap bits and a create's directory part\n"
		"  -i, --files     also list every regular file (size, runs, holes, tail, flags)\n"
		"  -m, --map INO   only the pages of inode INO: what each holds, its offset,\n"
		"                  logical page, frame and device block\n"
		"      --json      print one JSON object\n"
		"      --export    print the udev properties (ID_FS_TYPE=vsmfs, ID_FS_UUID, ...)\n"
		"                  as KEY=value lines; exit status 8, silently, if block 0\n"
		"                  has no vsmfs magic\n"
		"      --metadump FILE  write every metadata block, without file data and with\n"
		"                  names obfuscated, to FILE (for bug reports)\n"
		"      --no-obfuscate   keep the names in a metadata dump\n"
		"      --restore   write the metadata dump FILE back as the image file IMAGE\n"
		"  -V, --version   print the version and exit\n"
		"  -h, --help      this help\n"
		"Exit status: 0 success, 8 operational error, 16 usage error.\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "journal", no_argument, NULL, 'j' },
		{ "frag", no_argument, NULL, 'f' },
		{ "badframes", no_argument, NULL, 'b' },
		{ "fast-commits", no_argument, NULL, 'c' },
		{ "map", required_argument, NULL, 'm' },
		{ "files", no_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'J' },
		{ "export", no_argument, NULL, 'E' },
		{ "metadump", required_argument, NULL, 'M' },
		{ "no-obfuscate", no_argument, NULL, 'N' },
		{ "restore", no_argument, NULL, 'R' },
		COMMON_LONG_OPTIONS,
	};
	bool only_journal = false, only_frag = false, only_bad = false, only_fc = false;
	bool files = false;
	bool obfuscate = true, do_restore = false;
	const char *dump = NULL, *map = NULL;
	u64 map_ino = 0;
	char *end;
	int c;

	progname = "vsmfs-inspect";
	fatal_hook = soft_return;
	while ((c = getopt_long(argc, argv, "jfbcm:iVh", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			only_journal = true;
			break;
		case 'f':
			only_frag = true;
			break;
		case 'b':
			only_bad = true;
			break;
		case 'c':
			only_fc = true;
			break;
		case 'm':
			map = optarg;
			errno = 0;
			map_ino = strtoull(optarg, &end, 10);
			if (errno || !*optarg || *end || *optarg == '-') {
				fprintf(stderr, "%s: --map: '%s' is not an i-number\n", progname,
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'i':
			files = true;
			break;
		case 'J':
			json = true;
			break;
		case 'E':
			export = true;
			break;
		case 'M':
			dump = optarg;
			break;
		case 'N':
			obfuscate = false;
			break;
		case 'R':
			do_restore = true;
			break;
		default:
			common_option(c, usage, EXIT_USAGE);
		}
	}
	if (export && (json || only_journal || only_frag || only_bad || only_fc || map || files ||
		       dump || do_restore || !obfuscate)) {
		fprintf(stderr, "%s: --export takes no other option\n", progname);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (do_restore) {
		if (optind != argc - 2 || dump || only_journal || only_frag || only_bad ||
		    only_fc || map || files || json || !obfuscate) {
			usage(stderr);
			return EXIT_USAGE;
		}
		return restore(argv[optind], argv[optind + 1]);
	}
	if ((dump && (only_journal || only_frag || only_bad || only_fc || map || files || json)) ||
	    (!obfuscate && !dump)) {
		fprintf(stderr, "%s: --metadump takes no other option than --no-obfuscate\n",
			progname);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (map && (only_journal || only_frag || only_bad || only_fc || files)) {
		fprintf(stderr, "%s: --map takes no other option than --json\n", progname);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (optind != argc - 1 || only_journal + only_frag + only_bad + only_fc > 1) {
		if (only_journal + only_frag + only_bad + only_fc > 1)
			fprintf(stderr, "%s: only one of -j, -f, -b and -c may be given\n",
				progname);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (image_open(argv[optind], O_RDONLY))
		return EXIT_OPERATIONAL;
	if (img.blocks < 2) {
		if (export)
			return EXIT_OPERATIONAL;
		fatal("%s: not a vsmfs file system (device too small)", img.path);
	}

	read_super();
	if (export) {
		print_export();
		if (fflush(stdout) || ferror(stdout))
			fatal("write error on standard output");
		close(img.fd);
		return 0;
	}
	if (dump) {
		read_badlist();
		return metadump(dump, obfuscate);
	}
	read_journal();
	read_badlist();
	if (map) {
		if (json)
			printf("{");
		print_map(map_ino);
		printf(json ? "}\n" : "");
		goto out;
	}
	if (only_bad) {
		if (json)
			printf("{");
		print_badframes();
		printf(json ? "}\n" : "");
		goto out;
	}
	if (only_fc) {
		if (json)
			printf("{");
		print_fast_commits();
		printf(json ? "}\n" : "");
		goto out;
	}

	if (json)
		printf("{\"device\":");
	if (json) {
		json_str(img.path, strlen(img.path));
		printf(",");
	}
	if (!only_journal && !only_frag) {
		print_summary();
		if (!json)
			putchar('\n');
		/* With the badframes feature only: the report is unchanged without it. */
		if (le32_to_cpu(sb.s_feature_ro_compat) & VSMFS_FEATURE_RO_COMPAT_BADFRAMES) {
			print_badframes();
			printf(json ? "," : "\n");
		}
	}
	if (!only_frag) {
		print_journal();
		if (json && !only_journal)
			printf(",");
		else if (!json && !only_journal)
			putchar('\n');
	}
	if (!only_journal) {
		print_frag();
		if (!only_frag) {
			printf(json ? "," : "\n");
			print_aggr();
		}
		if (files) {
			printf(json ? "," : "\n");
			print_files();
		}
	}
	if (json)
		printf("}\n");
out:
	if (fflush(stdout) || ferror(stdout))
		fatal("write error on standard output");
	close(img.fd);
	return 0;
}
