// SPDX-License-Identifier: GPL-2.0
/*
 * cohere - a QEMU TCG plugin that counts the cache lines that move between
 * the guest's CPUs, and which instructions move them.
 *
 * Every load and store the guest makes to RAM (emulated NVDIMMs included)
 * updates the state of its 64-byte line in a model of coherent caches with
 * one cache per vCPU, each of unbounded size:
 *
 *   - a line holds a set of vCPUs with a copy, and is dirty when one of
 *     them has written it since the others last had a copy;
 *   - a load by a vCPU without a copy of a line that another vCPU holds
 *     dirty moves the line (a transfer from that vCPU's cache: a "load"
 *     move); the line is then clean, and both have it;
 *   - a store by a vCPU to a line that another vCPU has a copy of moves it
 *     (a read-for-ownership that invalidates the others: a "store" move);
 *     the line is then dirty, and only the writer has it;
 *   - a non-temporal store (movnti, movntdq, movntps/pd and their VEX
 *     forms, movdiri, movdir64b) moves the line as a store does when
 *     another vCPU has a copy, and leaves it in no cache: it goes to
 *     memory;
 *   - every other access (a hit, a first touch, a clean copy read) moves
 *     nothing.
 *
 * With unbounded caches, a line written by one CPU and read by another a
 * long time later counts as moved although a real cache might have
 * evicted it meanwhile: the model counts sharing, the thing a design that
 * scales avoids, not the cost of a particular processor.
 *
 * Windows. The guest executes the 7-byte no-op "nopl 0x504dTTTT(%rax)"
 * (0f 1f 80 TT TT 4d 50, the marker bench/helpers emit; it does nothing
 * outside the plugin) to close a window: the plugin appends one JSON line
 * with the tag TTTT, the vCPU, and the moves since the last marker, in all
 * and per guest instruction address, then starts the next window. The
 * cache state stays across windows.
 *
 * Arguments: out=FILE (JSON lines, appended; default stderr), ram=SIZE
 * (the RAM addresses to model, K/M/G suffixes; default 8G), from=on (see
 * "Where a line came from" below; off by default). QEMU 7.2 gives
 * a plugin the RAMBlock offset of an access, not its guest-physical
 * address: each block of the machine's RAM and each memory backend has its
 * own range from 0 up, which ram= must cover. Accesses past it, and to
 * devices, are not modelled (counted in "unmodelled").
 *
 * Where a line came from: with from=on, each line also keeps the
 * instruction whose access last changed its state (a store that dirtied
 * it, a load that took a copy, a non-temporal store that sent it to
 * memory). A move is then counted per pair of the instruction that moved
 * the line and that one: the access of another vCPU that put the line
 * where it was taken from (the store whose data a load moves; the load or
 * store of another vCPU that held the copy a store invalidates). Each
 * window's record lists them as "from": [[PC, FROM_PC, MOVES], ...] (a
 * FROM_PC of 0: the line had no such access since the plugin started).
 * It costs 4 bytes per modelled line.
 *
 * Up to 63 vCPUs. vCPUs run in threads of their own (MTTCG): a line's
 * state is one 64-bit word changed by compare-and-swap, and each access
 * that changes nothing reads it only.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <qemu-plugin.h>

#include "marker.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT	6
#define DIRTY		(1ULL << 63)
#define MAX_VCPUS	63
#define NBUCKETS	(1u << 20)
#define MAX_SITES	(1u << 22)	/* sites numbered for from=on */
#define NPAIRS		(1u << 20)	/* distinct (site, from) pairs kept */

/* A guest instruction that accesses memory, and the lines it moved. */
struct site {
	uint64_t	pc;
	bool		nt;		/* a non-temporal store */
	uint64_t	load_moves;	/* atomic */
	uint64_t	store_moves;	/* atomic */
	uint32_t	id;		/* its number, from 1 (from=on) */
	struct site	*next;		/* in its bucket */
	struct site	*all;		/* every site, newest first */
};

static uint64_t *lines;			/* state of each line: sharers | DIRTY */
static uint64_t nlines;
static struct site **buckets;
static struct site *sites;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static uint64_t unmodelled;		/* atomic */
static uint64_t accesses;		/* atomic, per window */

/*
 * from=on: per line, the number of the site whose access last changed its
 * state; the sites by number; and the moves of the window per pair
 * (site << 32 | from), an open-addressed table whose keys stay once set.
 */
struct pair {
	uint64_t	key;		/* atomic; 0: empty */
	uint64_t	moves;		/* atomic */
};

static uint32_t *line_from;
static struct site **site_by_id;
static uint32_t nsites;
static struct pair *pairs;
static uint64_t pairs_lost;		/* atomic: moves of pairs that found no room */

/* The site of @pc, made on first use. Translation time only. */
static struct site *site_get(uint64_t pc, bool nt)
{
	unsigned int b = (unsigned int)((pc * 0x9e3779b97f4a7c15ULL) >> 44) & (NBUCKETS - 1);
	struct site *s;

	pthread_mutex_lock(&sites_lock);
	for (s = buckets[b]; s; s = s->next)
		if (s->pc == pc)
			goto out;
	s = calloc(1, sizeof(*s));
	if (!s) {
		perror("cohere: calloc");
		abort();
	}
	s->pc = pc;
	s->nt = nt;
	if (site_by_id && nsites + 1 < MAX_SITES) {
		s->id = nsites + 1;
		site_by_id[s->id] = s;
		/* The site before its number: mark_cb() reads them in the other order. */
		__atomic_store_n(&nsites, s->id, __ATOMIC_RELEASE);
	}
	s->next = buckets[b];
	buckets[b] = s;
	s->all = sites;
	/* Published after its fields: read by marker callbacks without the lock. */
	__atomic_store_n(&sites, s, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&sites_lock);
	return s;
}

/* What an access did to its line. */
enum { SAME, CHANGED, MOVED };

/*
 * One access by @vcpu to line @l: the new state, and whether it changed
 * the state and moved the line (see the top of this file).
 */
static int line_access(uint64_t *l, unsigned int vcpu, bool store, bool nt)
{
	uint64_t me = 1ULL << vcpu, old = __atomic_load_n(l, __ATOMIC_RELAXED), new;
	bool moved;

	do {
		if (nt) {
			if (!old)
				return SAME;
			moved = (old & ~DIRTY & ~me) != 0;
			new = 0;
		} else if (store) {
			if (old == (DIRTY | me))
				return SAME;
			moved = (old & ~DIRTY & ~me) != 0;
			new = DIRTY | me;
		} else {
			if (old & me)
				return SAME;
			moved = (old & DIRTY) != 0;
			new = (old & ~DIRTY) | me;
		}
	} while (!__atomic_compare_exchange_n(l, &old, new, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return moved ? MOVED : CHANGED;
}

/* Count a move by site @id of a line site @from put where it was taken. */
static void pair_add(uint32_t id, uint32_t from)
{
	uint64_t key = (uint64_t)id << 32 | from, k;
	unsigned int h = (unsigned int)((key * 0x9e3779b97f4a7c15ULL) >> 40), i;

	for (i = 0; i < 64; i++) {
		struct pair *p = &pairs[(h + i) & (NPAIRS - 1)];

		k = __atomic_load_n(&p->key, __ATOMIC_RELAXED);
		if (!k) {
			uint64_t zero = 0;

			if (__atomic_compare_exchange_n(&p->key, &zero, key, false,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				k = key;
			else
				k = zero;
		}
		if (k == key) {
			__atomic_fetch_add(&p->moves, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_fetch_add(&pairs_lost, 1, __ATOMIC_RELAXED);
}

static void mem_cb(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	struct site *s = udata;
	bool store = qemu_plugin_mem_is_store(info);
	unsigned int size = 1u << qemu_plugin_mem_size_shift(info);
	uint64_t pa, first, last, i;

	if (!hw || qemu_plugin_hwaddr_is_io(hw) || vcpu >= MAX_VCPUS) {
		__atomic_fetch_add(&unmodelled, 1, __ATOMIC_RELAXED);
		return;
	}
	pa = qemu_plugin_hwaddr_phys_addr(hw);
	first = pa >> LINE_SHIFT;
	last = (pa + size - 1) >> LINE_SHIFT;
	if (last >= nlines) {
		__atomic_fetch_add(&unmodelled, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&accesses, 1, __ATOMIC_RELAXED);
	/* An access that straddles two lines touches both. */
	for (i = first; i <= last; i++) {
		int what = line_access(&lines[i], vcpu, store, store && s->nt);

		if (what == SAME)
			continue;
		if (line_from) {
			uint32_t from = __atomic_exchange_n(&line_from[i], s->id, __ATOMIC_RELAXED);

			if (what == MOVED && s->id)
				pair_add(s->id, from);
		}
		if (what == CHANGED)
			continue;
		if (store)
			__atomic_fetch_add(&s->store_moves, 1, __ATOMIC_RELAXED);
		else
			__atomic_fetch_add(&s->load_moves, 1, __ATOMIC_RELAXED);
	}
}

/* A marker: the window's moves, per site, and a new window. */
static void mark_cb(unsigned int vcpu, void *udata)
{
	unsigned int tag = (unsigned int)(uintptr_t)udata;
	uint64_t load = 0, store = 0, kload = 0, kstore = 0;
	struct site *s;
	bool first = true;

	pthread_mutex_lock(&out_lock);
	for (s = __atomic_load_n(&sites, __ATOMIC_ACQUIRE); s; s = s->all) {
		uint64_t l = __atomic_exchange_n(&s->load_moves, 0, __ATOMIC_RELAXED);
		uint64_t st = __atomic_exchange_n(&s->store_moves, 0, __ATOMIC_RELAXED);

		if (!l && !st)
			continue;
		load += l;
		store += st;
		/* The kernel's half of the address space. */
		if (s->pc >> 63) {
			kload += l;
			kstore += st;
		}
		fprintf(out, "%s[\"%#" PRIx64 "\",%" PRIu64 ",%" PRIu64 "]",
			first ? "{\"sites\":[" : ",", s->pc, l, st);
		first = false;
	}
	fputs(first ? "{\"sites\":[]," : "],", out);
	if (pairs) {
		uint32_t n = __atomic_load_n(&nsites, __ATOMIC_ACQUIRE);
		unsigned int i;

		fputs("\"from\":[", out);
		first = true;
		for (i = 0; i < NPAIRS; i++) {
			uint64_t key = __atomic_load_n(&pairs[i].key, __ATOMIC_RELAXED), m;
			uint32_t id = key >> 32, from = (uint32_t)key;
			const struct site *a, *b = NULL;

			if (!key || id > n || from > n)
				continue;
			m = __atomic_exchange_n(&pairs[i].moves, 0, __ATOMIC_RELAXED);
			if (!m)
				continue;
			a = site_by_id[id];
			if (from)
				b = site_by_id[from];
			fprintf(out, "%s[\"%#" PRIx64 "\",\"%#" PRIx64 "\",%" PRIu64 "]",
				first ? "" : ",", a ? a->pc : 0, b ? b->pc : 0, m);
			first = false;
		}
		fprintf(out, "],\"pairs_lost\":%" PRIu64 ",",
			__atomic_exchange_n(&pairs_lost, 0, __ATOMIC_RELAXED));
	}
	fprintf(out, "\"tag\":%u,\"vcpu\":%u,\"load_moves\":%" PRIu64 ",\"store_moves\":%"
		PRIu64 ",\"kernel_load_moves\":%" PRIu64 ",\"kernel_store_moves\":%" PRIu64
		",\"accesses\":%" PRIu64 ",\"unmodelled\":%" PRIu64 "}\n",
		tag, vcpu, load, store, kload, kstore,
		__atomic_exchange_n(&accesses, 0, __ATOMIC_RELAXED),
		__atomic_exchange_n(&unmodelled, 0, __ATOMIC_RELAXED));
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

/*
 * Whether the instruction at @b (@n bytes) is a non-temporal store:
 * movnti (0f c3), movntps/pd (0f 2b), movntq/movntdq (0f e7), their VEX
 * forms (map 0f, 2b or e7), movdiri (0f 38 f9) and movdir64b (66 0f 38 f8),
 * after any legacy and REX prefixes.
 */
static bool nt_store(const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 || b[i] == 0xf2 ||
			 b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
			 b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65))
		i++;
	if (i < n && (b[i] & 0xf0) == 0x40)
		i++;
	if (i + 1 < n && b[i] == 0xc5)
		return i + 2 < n && (b[i + 2] == 0x2b || b[i + 2] == 0xe7);
	if (i + 3 < n && b[i] == 0xc4)
		return (b[i + 1] & 0x1f) == 1 && (b[i + 3] == 0x2b || b[i + 3] == 0xe7);
	if (i + 1 >= n || b[i] != 0x0f)
		return false;
	if (b[i + 1] == 0xc3 || b[i + 1] == 0x2b || b[i + 1] == 0xe7)
		return true;
	return i + 2 < n && b[i + 1] == 0x38 && (b[i + 2] == 0xf8 || b[i + 2] == 0xf9);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		int tag = marker_tag(insn);

		if (tag >= 0) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_cb, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)tag);
			continue;
		}
		/* Loads come to a store callback too in QEMU 7.2: RW, told apart in it. */
		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 site_get(qemu_plugin_insn_vaddr(insn),
							  nt_store(qemu_plugin_insn_data(insn),
								   qemu_plugin_insn_size(insn))));
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	if (out && out != stderr)
		fclose(out);
}

/* A size with an optional K, M or G suffix; 0 if it is not one. */
static uint64_t parse_size(const char *v)
{
	char *end;
	uint64_t n;

	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || end == v)
		return 0;
	switch (*end) {
	case 'G': case 'g': n <<= 10; /* fall through */
	case 'M': case 'm': n <<= 10; /* fall through */
	case 'K': case 'k': n <<= 10; end++; break;
	case '\0': break;
	default: return 0;
	}
	return *end ? 0 : n;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	uint64_t ram = 8ULL << 30;
	const char *path = NULL;
	bool from = false;
	int i;

	if (!info->system_emulation) {
		fprintf(stderr, "cohere: system emulation only\n");
		return -1;
	}
	if (info->system.max_vcpus > MAX_VCPUS) {
		fprintf(stderr, "cohere: at most %d vCPUs\n", MAX_VCPUS);
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strcmp(argv[i], "from=on")) {
			from = true;
		} else if (!strcmp(argv[i], "from=off")) {
			from = false;
		} else if (!strncmp(argv[i], "ram=", 4)) {
			ram = parse_size(argv[i] + 4);
			if (!ram) {
				fprintf(stderr, "cohere: bad size %s\n", argv[i]);
				return -1;
			}
		} else {
			fprintf(stderr, "cohere: unknown argument %s (out=FILE, ram=SIZE, from=on)\n",
				argv[i]);
			return -1;
		}
	}
	out = path ? fopen(path, "a") : stderr;
	if (!out) {
		perror(path);
		return -1;
	}
	nlines = ram >> LINE_SHIFT;
	/* Untouched pages of the state cost nothing. */
	lines = mmap(NULL, nlines * sizeof(*lines), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	buckets = calloc(NBUCKETS, sizeof(*buckets));
	if (lines == MAP_FAILED || !buckets) {
		fprintf(stderr, "cohere: no memory for %" PRIu64 " lines\n", nlines);
		return -1;
	}
	if (from) {
		line_from = mmap(NULL, nlines * sizeof(*line_from), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		site_by_id = mmap(NULL, MAX_SITES * sizeof(*site_by_id), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		pairs = calloc(NPAIRS, sizeof(*pairs));
		if (line_from == MAP_FAILED || site_by_id == MAP_FAILED || !pairs) {
			fprintf(stderr, "cohere: no memory for from=on\n");
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
