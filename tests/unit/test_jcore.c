// SPDX-License-Identifier: GPL-2.0
/*
 * User-space unit tests of the journal logic shared with the module
 * (fs/vsmfs/jcore.c): header decoding and its checks, byte-level deltas,
 * the wear-ordered lists against a brute-force minimum, garbage collection
 * compaction, and the recovery rules, the last against a model journal
 * cut at every step between a commit and the re-flagging that follows it.
 *
 * Usage: test_jcore [SEED]; prints the seed, so a failure can be replayed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vsmfs_format.h"
#include "jcore.h"

#include "check.h"

static u64 rng_state;

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static u32 below(u32 n)
{
	return (u32)(rnd() % n);
}

static const struct vsmfs_layout *layout(void)
{
	static struct vsmfs_layout l;

	/* As mkfs lays out a 256 MiB device by default: sparse. */
	if (!l.blocks)
		vsmfs_compute_layout_sparse(&l, 65536, vsmfs_default_journal_blocks(65536),
					    vsmfs_default_inodes(65536),
					    VSMFS_FEATURE_INCOMPAT_SB_LAST |
					    VSMFS_FEATURE_INCOMPAT_SPARSE,
					    vsmfs_default_lpages(65536));
	return &l;
}

static void store(struct vsmfs_djhdr *d, u8 flags, u64 num, u32 wc, u32 jb, u64 home)
{
	d->h_state = cpu_to_le64(flags | num << VSMFS_JH_NUM_SHIFT | (u64)wc << VSMFS_JH_WC_SHIFT);
	d->h_map = cpu_to_le64(jb | home << VSMFS_JH_HOME_SHIFT);
}

static void test_decode(void)
{
	const struct vsmfs_layout *l = layout();
	const u8 all = VSMFS_JH_USED | VSMFS_JH_VALID | VSMFS_JH_LATEST;
	u64 home = l->itable_start + 3;
	struct vsmfs_djhdr d, copies[3];
	struct vsmfs_jh h;
	const char *why;
	u32 bad;

	store(&d, all, 7, 12345, 99, home);
	why = vsmfs_jh_decode(&d, 7, 1000, true, l, &h);
	CHECK(!why, "good header: %s", why);
	CHECK(h.home == home && h.jb == 99 && h.wc == 12345 && h.flags == all,
	      "fields of a good header");
	CHECK(vsmfs_jh_state(&h, 7) == le64_to_cpu(d.h_state) &&
	      vsmfs_jh_map(&h) == le64_to_cpu(d.h_map), "encode(decode(x)) == x");
	CHECK(vsmfs_jh_is_latest(&h), "valid latest");

	/* Past the checkpoint area the flags do not count. */
	store(&d, 0x77, 7, 1, 99, 0);
	why = vsmfs_jh_decode(&d, 7, 1000, false, l, &h);
	CHECK(!why && h.flags == 0, "free header: %s, flags %u", why, h.flags);

	/* An invalid version reads as a hole, whatever its home block. */
	store(&d, VSMFS_JH_USED | VSMFS_JH_LATEST, 7, 1, 99, 0);
	why = vsmfs_jh_decode(&d, 7, 1000, true, l, &h);
	CHECK(!why && h.flags == VSMFS_JH_USED, "hole: %s, flags %u", why, h.flags);

	store(&d, all, 8, 1, 99, home);
	CHECK(vsmfs_jh_decode(&d, 7, 1000, true, l, &h), "wrong number accepted");
	store(&d, all, 7, 1, 1000, home);
	CHECK(vsmfs_jh_decode(&d, 7, 1000, true, l, &h), "journal block past the last accepted");
	store(&d, VSMFS_JH_VALID, 7, 1, 9, home);
	CHECK(vsmfs_jh_decode(&d, 7, 1000, true, l, &h), "valid but unused accepted");
	store(&d, all | 0x10, 7, 1, 9, home);
	CHECK(vsmfs_jh_decode(&d, 7, 1000, true, l, &h), "unknown flag accepted");
	store(&d, all, 7, 1, 9, VSMFS_SB_BACKUP_BLOCK);
	CHECK(vsmfs_jh_decode(&d, 7, 1000, true, l, &h), "superblock as home accepted");
	store(&d, all, 7, 1, 9, l->journal_start + 5);
	CHECK(vsmfs_jh_decode(&d, 7, 1000, true, l, &h), "journal block as home accepted");
	store(&d, all, 7, 1, 9, l->blocks);
	CHECK(vsmfs_jh_decode(&d, 7, 1000, true, l, &h), "home past the device accepted");

	store(&copies[0], all, 4, 1, 2, home);
	store(&copies[1], all, 999, 1, 3, home);
	store(&copies[2], all, 1000, 1, 3, home);
	CHECK(!vsmfs_jcopies_check(copies, 2, 1000, &bad), "good copies refused");
	CHECK(vsmfs_jcopies_check(copies, 3, 1000, &bad) && bad == 2, "copy of no header");
	CHECK(vsmfs_jcopies_check(copies, VSMFS_JH_PER_BLOCK + 1, 1000, &bad),
	      "too many copies accepted");
}

static void test_delta(void)
{
	static u64 old[VSMFS_BLOCK_SIZE / 8], new[VSMFS_BLOCK_SIZE / 8], dst[VSMFS_BLOCK_SIZE / 8];
	const u32 words = VSMFS_BLOCK_SIZE / 8;
	u32 round, w, bytes;
	u64 lines;

	for (round = 0; round < 2000; round++) {
		u32 changes = round % 4 == 0 ? 0 : round % 4 == 1 ? words : below(40);
		u64 want_lines = 0;
		u32 want = 0;

		for (w = 0; w < words; w++)
			old[w] = rnd();
		memcpy(new, old, sizeof(new));
		while (changes--) {
			w = below(words);
			/* One byte of a word, like a link count or a time. */
			new[w] ^= (u64)(1 + below(255)) << (8 * below(8));
		}
		for (w = 0; w < words; w++) {
			if (new[w] != old[w]) {
				want++;
				want_lines |= 1ULL << (w / 8);
			}
		}
		memcpy(dst, old, sizeof(dst));
		bytes = vsmfs_jdelta(dst, new, &lines);
		CHECK(!memcmp(dst, new, sizeof(dst)), "round %u: delta did not produce the block",
		      round);
		CHECK(bytes == want * 8, "round %u: %u bytes written, %u words differ", round,
		      bytes, want);
		CHECK(lines == want_lines, "round %u: lines %#llx, want %#llx", round,
		      (unsigned long long)lines, (unsigned long long)want_lines);
	}
}

/* Change up to @n random bytes of @b, one byte of a word at a time. */
static void scribble(u64 *b, u32 n)
{
	while (n--)
		b[below(VSMFS_BLOCK_SIZE / 8)] ^= (u64)(1 + below(255)) << (8 * below(8));
}

/*
 * Deltas from DRAM: a chain of versions v0, v1, v2, ... of one block, each
 * written over the one two before it (the old version in the journal)
 * with only the words that the two last commits changed, must give the
 * block each time, and never write more than those words.
 */
static void test_delta_mask(void)
{
	static u64 v[3][VSMFS_BLOCK_SIZE / 8], jb[2][VSMFS_BLOCK_SIZE / 8];
	const u32 words = VSMFS_BLOCK_SIZE / 8;
	u64 wmask[VSMFS_JMASK_WORDS], now[VSMFS_JMASK_WORDS], dmask[VSMFS_JMASK_WORDS];
	u32 round, w, i, bytes, want;
	u64 lines;

	for (w = 0; w < words; w++)
		v[0][w] = rnd();
	scribble(memcpy(v[1], v[0], sizeof(v[1])), 30);
	/* Two journal blocks, written in full: v0 (old) and v1 (latest). */
	memcpy(jb[0], v[0], sizeof(jb[0]));
	memcpy(jb[1], v[1], sizeof(jb[1]));
	vsmfs_jdiff(v[0], v[1], wmask);
	for (round = 2; round < 3000; round++) {
		u64 *prev = v[(round - 1) % 3], *cur = v[round % 3], *old = jb[round % 2];

		memcpy(cur, prev, sizeof(v[0]));
		scribble(cur, round % 5 == 0 ? 0 : round % 7 == 0 ? words : below(40));
		vsmfs_jdiff(prev, cur, now);
		want = 0;
		for (i = 0; i < VSMFS_JMASK_WORDS; i++) {
			dmask[i] = wmask[i] | now[i];
			want += __builtin_popcountll(dmask[i]);
		}
		bytes = vsmfs_jdelta_mask(old, cur, dmask, NULL, &lines);
		CHECK(!memcmp(old, cur, sizeof(v[0])), "round %u: masked delta did not give the block",
		      round);
		CHECK(bytes == want * 8, "round %u: %u bytes written, %u words in the mask", round,
		      bytes, want);
		for (w = 0; w < words; w++)
			if (dmask[w / 64] >> (w % 64) & 1)
				CHECK(lines >> (w / 8) & 1, "round %u: line of word %u not reported",
				      round, w);
		memcpy(wmask, now, sizeof(wmask));
	}
	/*
	 * With bits to leave out (a page bitmap block's reserved pages):
	 * each word of the mask is stored without them, no other word.
	 */
	for (round = 0; round < 200; round++) {
		static u64 src[VSMFS_BLOCK_SIZE / 8], clear[VSMFS_BLOCK_SIZE / 8],
			   dst[VSMFS_BLOCK_SIZE / 8], was[VSMFS_BLOCK_SIZE / 8];

		for (w = 0; w < words; w++) {
			src[w] = rnd();
			clear[w] = below(3) ? 0 : rnd();
			dst[w] = was[w] = rnd();
		}
		for (i = 0; i < VSMFS_JMASK_WORDS; i++)
			dmask[i] = below(4) ? rnd() & rnd() : 0;
		vsmfs_jdelta_mask(dst, src, dmask, clear, &lines);
		for (w = 0; w < words; w++) {
			u64 want_w = dmask[w / 64] >> (w % 64) & 1 ? src[w] & ~clear[w] : was[w];

			CHECK(dst[w] == want_w, "round %u: word %u is %#llx, not %#llx", round, w,
			      (unsigned long long)dst[w], (unsigned long long)want_w);
		}
	}
}

static bool wless(const struct vsmfs_jh *h, u32 a, u32 b)
{
	return h[a].wc < h[b].wc || (h[a].wc == h[b].wc && a < b);
}

/*
 * The free headers' lists against a scan of all headers, with write counts
 * spread over @spread: wider than the lists tell apart, the overflow list
 * fills, is sorted back, and the lists move both ways.
 */
static void test_wlists_spread(u32 spread)
{
	enum { N = 300 };
	static struct vsmfs_jh h[N];
	static u64 link[N];
	static u32 idx[N];
	static bool in[N];
	struct vsmfs_wlists w;
	u32 op, i, size = 0;

	memset(in, 0, sizeof(in));
	for (i = 0; i < N; i++)
		h[i].wc = below(spread);
	vsmfs_wlists_init(&w, h, link, idx, N);
	CHECK(vsmfs_wlists_min(&w) == VSMFS_JNONE, "no free header, yet a least worn");
	for (op = 0; op < 200000; op++) {
		u32 pos = below(N), want = VSMFS_JNONE;

		switch (below(5)) {
		case 4:
			/* A free header's count changes: up, or down by a swap. */
			h[pos].wc = below(2) ? h[pos].wc + below(5) : below(spread);
			vsmfs_wlists_update(&w, pos);
			break;
		case 0:
		case 1:
			vsmfs_wlists_add(&w, pos);
			size += !in[pos];
			in[pos] = true;
			break;
		case 2:
			vsmfs_wlists_del(&w, pos);
			size -= in[pos];
			in[pos] = false;
			break;
		case 3:
			/* A header that is not free is written: its count grows. */
			if (!in[pos])
				h[pos].wc++;
			/* Take the minimum, as a commit does. */
			pos = vsmfs_wlists_min(&w);
			if (pos != VSMFS_JNONE) {
				vsmfs_wlists_del(&w, pos);
				in[pos] = false;
				size--;
			}
			break;
		}
		for (i = 0; i < N; i++)
			if (in[i] && (want == VSMFS_JNONE || wless(h, i, want)))
				want = i;
		CHECK(w.size == size, "op %u: %u free, want %u", op, w.size, size);
		/* Any of the least worn: headers as worn are taken in any order. */
		i = vsmfs_wlists_min(&w);
		CHECK(i == want || (i != VSMFS_JNONE && want != VSMFS_JNONE && in[i] &&
				    h[i].wc == h[want].wc),
		      "op %u: least-worn %u (written %u times), want %u (%u)", op, i,
		      i == VSMFS_JNONE ? 0 : h[i].wc, want, want == VSMFS_JNONE ? 0 : h[want].wc);
		for (i = 0; i < N; i += 37)
			CHECK(vsmfs_wlists_has(&w, i) == in[i], "op %u: membership of %u", op, i);
	}
}

static void test_wlists(void)
{
	test_wlists_spread(50);
	test_wlists_spread(3 * VSMFS_WLISTS);
	test_wlists_spread(40 * VSMFS_WLISTS);
}

static void test_gc(void)
{
	enum { N = 200 };
	static struct vsmfs_jh h[N];
	u32 round;

	for (round = 0; round < 5000; round++) {
		u32 ckpt = below(N + 1), density = below(101), i, valid = 0, holes_below = 0;
		u32 first = 0, end = ckpt, swaps = 0;
		u64 sum = 0, sum_after = 0;

		for (i = 0; i < ckpt; i++) {
			bool v = below(100) < density;

			h[i].flags = VSMFS_JH_USED | (v ? VSMFS_JH_VALID : 0);
			h[i].home = v ? 1000 + i : 0;
			valid += v;
			sum += h[i].home;
		}
		for (i = 0; i < valid; i++)
			holes_below += !(h[i].flags & VSMFS_JH_VALID);
		while (vsmfs_jgc_next(h, &first, &end)) {
			struct vsmfs_jh t = h[first];

			CHECK(!(h[first].flags & VSMFS_JH_VALID) &&
			      (h[end - 1].flags & VSMFS_JH_VALID) && first < end - 1,
			      "round %u: exchange of %u and %u", round, first, end - 1);
			CHECK(end - 1 >= valid, "round %u: moved %u, below the new end %u", round,
			      end - 1, valid);
			h[first] = h[end - 1];
			h[end - 1] = t;
			if (++swaps > ckpt)
				break;
		}
		CHECK(first == end && first == valid, "round %u: end %u/%u, %u valid", round,
		      first, end, valid);
		CHECK(swaps == holes_below, "round %u: %u exchanges, %u holes to fill", round,
		      swaps, holes_below);
		for (i = 0; i < ckpt; i++) {
			CHECK(!(h[i].flags & VSMFS_JH_VALID) == (i >= valid),
			      "round %u: header %u after compaction", round, i);
			sum_after += h[i].home;
		}
		CHECK(sum == sum_after, "round %u: versions lost or duplicated", round);
	}
}

/* ---- recovery ---- */

static const char *recover(struct vsmfs_jh *h, u32 ckpt, u32 last, u32 *nchanged, u32 *bad)
{
	static struct vsmfs_jver ver[4096];
	static u32 changed[4096];
	u32 i, j;
	const char *why = vsmfs_jrecover(h, ckpt, last, ver, changed, nchanged, bad);

	for (i = 0; !why && i < *nchanged; i++)
		for (j = 0; j < i; j++)
			CHECK(changed[i] != changed[j], "header %u changed twice", changed[i]);
	return why;
}

#define V	(VSMFS_JH_USED | VSMFS_JH_VALID)
#define VL	(VSMFS_JH_USED | VSMFS_JH_VALID | VSMFS_JH_LATEST)

static void set(struct vsmfs_jh *h, u32 pos, u8 flags, u64 home)
{
	h[pos].flags = flags;
	h[pos].home = home;
}

static void test_recover_cases(void)
{
	struct vsmfs_jh h[16];
	u32 nchanged, bad;
	const char *why;

	/* One latest and one old of each block: nothing to do. */
	memset(h, 0, sizeof(h));
	set(h, 0, V, 10);
	set(h, 1, VL, 10);
	set(h, 2, VL, 11);
	set(h, 3, VSMFS_JH_USED, 0);
	why = recover(h, 4, 2, &nchanged, &bad);
	CHECK(!why && nchanged == 0, "clean journal: %s, %u changed", why, nchanged);

	/* Cut before re-flagging: the version in the last transaction wins. */
	memset(h, 0, sizeof(h));
	set(h, 0, V, 10);
	set(h, 1, VL, 10);
	set(h, 2, VL, 10);
	why = recover(h, 3, 2, &nchanged, &bad);
	CHECK(!why && nchanged == 2, "two latest: %s, %u changed", why, nchanged);
	CHECK(h[2].flags == VL && h[1].flags == V && h[0].flags == VSMFS_JH_USED,
	      "two latest: flags %x %x %x", h[0].flags, h[1].flags, h[2].flags);

	/* The same, with the winner below the loser (after a GC moved it). */
	memset(h, 0, sizeof(h));
	set(h, 0, VL, 10);
	set(h, 1, VL, 10);
	why = recover(h, 2, 0, &nchanged, &bad);
	CHECK(why && bad == 1, "two latest both in the last transaction accepted");
	memset(h, 0, sizeof(h));
	set(h, 0, VL, 10);
	set(h, 1, VL, 10);
	why = recover(h, 2, 2, &nchanged, &bad);
	CHECK(why, "two latest both before the last transaction accepted");
	memset(h, 0, sizeof(h));
	set(h, 0, VL, 10);
	set(h, 1, VL, 10);
	set(h, 2, VL, 10);
	why = recover(h, 3, 1, &nchanged, &bad);
	CHECK(why, "three latest accepted");

	/* A revoke cut short: an old version without a latest one goes. */
	memset(h, 0, sizeof(h));
	set(h, 0, V, 10);
	set(h, 1, VL, 11);
	why = recover(h, 2, 1, &nchanged, &bad);
	CHECK(!why && nchanged == 1 && h[0].flags == VSMFS_JH_USED && h[1].flags == VL,
	      "orphan old version: %s, %u changed", why, nchanged);

	/* Two old versions and one latest: the first old one stays. */
	memset(h, 0, sizeof(h));
	set(h, 0, V, 10);
	set(h, 1, V, 10);
	set(h, 2, VL, 10);
	why = recover(h, 3, 2, &nchanged, &bad);
	CHECK(!why && nchanged == 1 && h[0].flags == V && h[1].flags == VSMFS_JH_USED,
	      "two old versions: %s, %u changed", why, nchanged);

	/* Past the checkpoint pointer nothing counts. */
	memset(h, 0, sizeof(h));
	set(h, 0, VL, 10);
	set(h, 1, VL, 10);
	why = recover(h, 1, 1, &nchanged, &bad);
	CHECK(!why && nchanged == 0 && h[0].flags == VL, "commit area counted: %s", why);
}

/*
 * A model journal without GC: each transaction appends one version of each
 * block it changes, then re-flags the previous versions (step 6 of a
 * commit). The model is cut after the commit with any subset of its
 * re-flagging done, or before the commit with some of the new headers
 * written past the checkpoint pointer; recovery must then pick, for each
 * block, the version of the last committed transaction that changed it.
 */
/* vsmfs_jremap() on a journal of @n headers; checks the result is whole. */
static const char *remap(struct vsmfs_jh *h, u32 n, u32 ckpt, u32 *nchanged, u32 *bad)
{
	u32 owner[64], changed[64], i, seen[64] = { 0 };
	const char *why;

	why = vsmfs_jremap(h, n, ckpt, owner, changed, nchanged, bad);
	if (why)
		return why;
	for (i = 0; i < n; i++)
		seen[h[i].jb]++;
	for (i = 0; i < n; i++)
		CHECK(seen[i] == 1, "journal block %u named %u times after remap", i, seen[i]);
	for (i = 0; i < *nchanged; i++)
		CHECK(!(changed[i] < ckpt && (h[changed[i]].flags & VSMFS_JH_VALID)),
		      "committed version at header %u given another block", changed[i]);
	return NULL;
}

static void test_remap(void)
{
	struct vsmfs_jh h[64], before[64];
	u32 nchanged, bad, round, i;
	const char *why;

	/* Every block named once: nothing changes. */
	memset(h, 0, sizeof(h));
	for (i = 0; i < 8; i++) {
		h[i].jb = 7 - i;
		h[i].wc = i;
	}
	set(h, 0, VL, 10);
	set(h, 1, VSMFS_JH_USED, 0);
	why = remap(h, 8, 2, &nchanged, &bad);
	CHECK(!why && nchanged == 0, "whole journal: %s, %u changed", why, nchanged);

	/* Two committed versions in one block: not from a crash. */
	h[1].flags = V;
	h[1].home = 11;
	h[1].jb = h[0].jb;
	why = remap(h, 8, 2, &nchanged, &bad);
	CHECK(why && bad == 1, "one block under two committed versions accepted");

	/* A committed version and a free header: the free one moves. */
	set(h, 1, VSMFS_JH_USED, 0);
	h[1].jb = 6;
	h[5].jb = h[0].jb;
	why = remap(h, 8, 2, &nchanged, &bad);
	CHECK(!why && nchanged == 1 && h[0].jb == 7 && h[5].jb == 2 && h[5].wc == 7,
	      "free header under a committed block: %s, %u changed, jb %u wc %u", why,
	      nchanged, h[5].jb, h[5].wc);

	/*
	 * A model journal cut between the two header writes of a swap, as a
	 * commit makes them: a wear swap of two free headers, or an old
	 * committed version swapped with a free header (which leaves a hole).
	 */
	for (round = 0; round < 2000; round++) {
		u32 n = 8 + below(56), ckpt = below(n), a, p, wc = 0;

		memset(h, 0, sizeof(h));
		for (i = 0; i < n; i++) {
			u32 k = below(i + 1);

			h[i].jb = h[k].jb;
			h[k].jb = i;
			h[i].wc = below(1000);
			if (i < ckpt)
				set(h, i, below(3) ? V : VSMFS_JH_USED, 100 + i);
		}
		if (ckpt + 2 > n)
			continue;
		for (i = 0; i < n; i++)
			wc = h[i].wc > wc ? h[i].wc : wc;
		p = ckpt + below(n - ckpt);
		a = below(2) || !ckpt ? ckpt + below(n - ckpt) : below(ckpt);
		if (a == p)
			continue;
		memcpy(before, h, sizeof(h));
		/* Only the first write of the swap reached PM. */
		if (a < ckpt) {
			h[a].jb = before[p].jb;
			if (below(2))
				h[a].flags = VSMFS_JH_USED;
		} else if (below(2)) {
			h[a].jb = before[p].jb;
		} else {
			h[p].jb = before[a].jb;
		}
		why = remap(h, n, ckpt, &nchanged, &bad);
		CHECK(!why && nchanged <= 1, "swap %u <-> %u cut: %s, %u changed", a, p, why,
		      nchanged);
		for (i = 0; i < n; i++) {
			if (i < ckpt && (h[i].flags & VSMFS_JH_VALID) && i != a)
				CHECK(h[i].jb == before[i].jb, "committed header %u moved", i);
			if (h[i].jb != before[i].jb && i != a && i != p)
				CHECK(0, "header %u outside the swap changed", i);
		}
		if (nchanged)
			CHECK(h[a].wc == wc || h[p].wc == wc, "remapped header keeps a write count");
	}
}

static void test_recover_model(void)
{
	enum { N = 2048, HOMES = 24 };
	static struct vsmfs_jh h[N], cut[N];
	static u32 post[N];
	u32 round;

	for (round = 0; round < 3000; round++) {
		u32 ckpt = 0, last = 0, latest[HOMES], old[HOMES], want[HOMES];
		u32 txns = 1 + below(12), t, i, npost = 0, nchanged, bad, k;
		bool delta = below(2);
		const char *why;

		memset(h, 0, sizeof(h));
		for (i = 0; i < HOMES; i++)
			latest[i] = old[i] = want[i] = VSMFS_JNONE;
		for (t = 0; t < txns && ckpt + HOMES < N; t++) {
			u32 start = ckpt, n = 1 + below(HOMES);
			bool final = t == txns - 1;
			u32 cut_post = below(2 * HOMES + 1);

			npost = 0;
			for (k = 0; k < n; k++) {
				u32 b = below(HOMES), p = ckpt;

				if (latest[b] != VSMFS_JNONE && latest[b] >= start)
					continue;	/* once per transaction */
				if (delta && old[b] != VSMFS_JNONE) {
					/* The old version's header turns into a hole. */
					h[old[b]].flags = VSMFS_JH_USED;
					h[old[b]].home = 0;
				} else if (old[b] != VSMFS_JNONE) {
					post[npost++] = old[b];
				}
				set(h, p, VL, 100 + b);
				if (latest[b] != VSMFS_JNONE)
					post[npost++] = latest[b] | 1U << 31;
				old[b] = latest[b];
				latest[b] = p;
				ckpt++;
			}
			last = start;
			if (final && below(3) == 0) {
				/* Cut before the commit: the new headers are past ckpt. */
				ckpt = start;
				last = below(start + 1);
				break;
			}
			for (i = 0; i < HOMES; i++)
				want[i] = latest[i];
			/* Step 6, in full, or cut after cut_post stores. */
			for (i = 0; i < npost; i++) {
				u32 p = post[i] & ~(1U << 31);

				if (final && i >= cut_post)
					break;
				if (post[i] >> 31)
					h[p].flags &= ~VSMFS_JH_LATEST;
				else
					h[p].flags = VSMFS_JH_USED;
			}
		}
		/* The journal of the cut: @last as j_checkpoint recorded it. */
		if (last > ckpt)
			last = ckpt;
		memcpy(cut, h, sizeof(h));
		why = recover(cut, ckpt, last, &nchanged, &bad);
		CHECK(!why, "round %u: recovery refused: %s (header %u)", round, why, bad);
		if (why)
			continue;
		for (i = 0; i < HOMES; i++) {
			u32 got = VSMFS_JNONE, olds = 0;

			for (k = 0; k < ckpt; k++) {
				if (cut[k].home != 100 + i || !(cut[k].flags & VSMFS_JH_VALID))
					continue;
				if (vsmfs_jh_is_latest(&cut[k])) {
					CHECK(got == VSMFS_JNONE, "round %u: block %u has two latest",
					      round, i);
					got = k;
				} else {
					olds++;
				}
			}
			CHECK(olds <= 1, "round %u: block %u keeps %u old versions", round, i, olds);
			CHECK(got != VSMFS_JNONE || !olds, "round %u: block %u: old version kept"
			      " without a latest one", round, i);
			CHECK(got == want[i], "round %u: block %u recovers header %u, want %u",
			      round, i, got, want[i]);
		}
		/* Recovery is idempotent: a second mount changes nothing. */
		why = recover(cut, ckpt, last, &nchanged, &bad);
		CHECK(!why && nchanged == 0, "round %u: second recovery changed %u headers",
		      round, nchanged);
	}
}

int main(int argc, char **argv)
{
	u64 seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (u64)time(NULL);

	rng_state = seed ? seed : 1;
	printf("test_jcore: seed %llu\n", (unsigned long long)seed);
	test_decode();
	test_delta();
	test_delta_mask();
	test_wlists();
	test_gc();
	test_recover_cases();
	test_recover_model();
	test_remap();
	printf("test_jcore: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
