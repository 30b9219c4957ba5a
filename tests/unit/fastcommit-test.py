#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the tools on file systems with fast-commit records.

An image made by mkfs.vsmfs gets, by hand, a root directory naming a
regular file of four pages, then records in its fast-commit areas: two of
the file's slot (times, and its last page given the frame of a free
logical page, as an overwrite does), one of the root's, and records a
reader must not take: one of a commit already durable, one past a record
whose checksum fails. fsck.vsmfs -n must find the file system sound as
the records leave it and say how many a mount will replay, changing
nothing, and so must -y when the journal holds nothing to replay;
vsmfs-inspect -c must list the valid records, and --map must show the
file as they leave it. A record of an append that moved the file's run
clears the old run's bits: the file system is sound as it leaves it,
and leaks the old run without them. With a committed version in the
journal too, -p must write both home, the records after the version, empty the journal
with the next commit number (the replay's) and zero the areas; a record
of that commit is then dead, one of the next commit valid. A j_sequence one
commit behind the number j_checkpoint carries must be read as that number,
the positions without its bits. A valid record naming a slot or a logical
page the file system has not (mount refuses the journal then) is reported,
and -y drops the records (-p replays the journal, and leaves them).
Fast-commit areas without the feature in the superblock, or the feature
without areas, are reported as corruption. An obfuscated metadata dump
keeps no fast symlink target or new entry's name a record holds, and its
records stay valid.

Records of creates: a new file's slot words, its inode bitmap bit, and the
directory's part (the directory's slot words and spans of its block) must
leave a file system fsck.vsmfs finds sound, with the new entry, and be
listed by vsmfs-inspect -c; -p replays them home. Two records of creates
in one directory apply their directory parts in the directory's order,
not in the order of the areas: the later order's words and spans win.
A create's record that carries an unlink before it (the entry gone, the
unlinked inode's link count 0) leaves that inode an orphan, which -p frees;
-n counts it as the next mount's to free, not as an error, when the file
system was not cleanly unmounted.

Torn records: a crash inside a record's stores leaves its bytes from some
k on what the area held, zeros or a dead record of the last durable
commit. For every byte k of the last record (a create's) it is not taken
unless whole, and the record before it still is; the first record torn,
the create's after it is not taken either. fsck.vsmfs finds the file
system sound each time, with the new file only when its record is whole.
"""

import json
import os
import shutil
import struct
import sys
import tempfile

from imgcraft import (BS, DT_REG, INSPECT, MKFS, POKE, SBEDIT, Checks, dinode, dir_block,
                      fc_bitmap, fc_dir, fc_gone, fc_ibitmap, fc_record, fc_span, fc_spans,
                      run)
import imgcraft

FAST_COMMIT = 0x4
T = Checks("fastcommit-test")
check, expect = T.check, T.expect


class Image(imgcraft.Image):
    def poke(self, *args):
        res = run(POKE, self.path, *args)
        check(res.returncode == 0, f"fspoke {' '.join(args)}: {res.stderr.strip()}")
        return res.stdout.strip()

    def areas(self):
        n = self.L["fc_areas"] * self.L["fc_area_blocks"]
        return self.get(self.L["fc_start"] * BS, n * BS)


def inspect(img, *opts, status=0):
    res = run(INSPECT, *opts, img)
    check(res.returncode == status, f"vsmfs-inspect {' '.join(opts)}: exit {res.returncode}\n"
          f"{res.stdout}{res.stderr}")
    return res.stdout + res.stderr


def populate(img):
    """Root (slot 1, lpn 1) naming file f (slot 2, lpns 512..515)."""
    img.inode(1, dinode(0o40755, 2, BS, 1, (1 | 1 << 48,)))
    img.frame(img.frame_of(1), dir_block([("f", 2, DT_REG)]))
    img.inode(2, dinode(0o100644, 1, 4 * BS, 4, (512 | 4 << 48,)))
    for i in range(4):
        img.frame(img.frame_of(512 + i), bytes([0x41 + i]) * BS)
    img.lbits(1, 2)
    img.lbits(512, 516)
    img.bits(img.L["ibitmap_start"], 2, 3)


def put_records(img, count):
    """The records of commit @count (and two no reader takes)."""
    img.fc_put(0, 0, fc_record(count, 2, 0, {6: 1000}, [(515, 701), (701, 515)]))
    img.fc_put(0, 128, fc_record(count, 2, 1, {6: 2000, 7: 3000}))
    img.fc_put(5, 0, fc_record(count, 1, 0, {6: 4000}))
    img.fc_put(5, 64, fc_record(count - 1, 1, 1, {6: 5000}))     # dead: stops the area
    img.fc_put(5, 128, fc_record(count, 1, 2, {6: 6000}))        # past it
    bad = bytearray(fc_record(count, 2, 2, {6: 7000}))
    bad[40] ^= 1
    img.fc_put(7, 0, bytes(bad))                                  # checksum fails
    img.fc_put(7, 64, fc_record(count, 2, 3, {6: 8000}))         # past it


def test_records(tmp, base):
    p = os.path.join(tmp, "records.img")
    shutil.copyfile(base, p)
    img = Image(p)
    put_records(img, 1)
    before = img.get(0, 64 << 20)
    fstart = img.L["fc_start"]

    expect(p, ["-n"], 0, "journal: 3 fast-commit records of commit 1 to replay at mount",
           "no errors found", what="records")
    expect(p, ["-n", "-v"], 0, f"journal: 8 fast-commit areas of 32 blocks from block {fstart},"
           " 3 valid records (commit 1)", what="records, -v")
    expect(p, ["-y"], 0, "journal: 3 fast-commit records of commit 1 to replay at mount",
           "no errors found", what="records, -y")
    check(img.get(0, 64 << 20) == before, "records: fsck.vsmfs changed the image")

    out = inspect(p, "-c")
    for s in (f"Fast commits: 8 areas of 32 blocks from block {fstart}; 3 valid records of"
              " commit 1\n"
              "  area 0 offset 0: slot 2 (inode 2), seq 0, 128 bytes\n"
              "    words 6=0x3e8\n"
              "    page table entries 515=0x2bd 701=0x203\n"
              "  area 0 offset 128: slot 2 (inode 2), seq 1, 64 bytes\n"
              "    words 6=0x7d0 7=0xbb8\n"
              "    page table entries none\n"
              "  area 5 offset 0: slot 1 (inode 1), seq 0, 64 bytes\n"
              "    words 6=0xfa0\n"
              "    page table entries none\n",):
        check(s == out, f"vsmfs-inspect -c:\n{out}\nexpected:\n{s}")
    r = json.loads(inspect(p, "-c", "--json"))["fast_commit"]
    check(r["problem"] is None and r["commit"] == 1 and
          [(x["area"], x["offset"], x["slot"], x["ino"], x["seq"]) for x in r["records"]] ==
          [(0, 0, 2, 2, 0), (0, 128, 2, 2, 1), (5, 0, 1, 1, 0)] and
          r["records"][0]["ptes"] == [{"lpn": 515, "pte": 701}, {"lpn": 701, "pte": 515}] and
          r["records"][1]["words"] == [{"index": 6, "value": 2000}, {"index": 7, "value": 3000}],
          f"vsmfs-inspect -c --json: {r}")
    j = json.loads(inspect(p, "-j", "--json"))["journal"]
    check(j["fast_commit"]["records"] == 3 and j["fast_commit"]["replayed"] == 3,
          f"vsmfs-inspect -j --json: {j['fast_commit']}")
    out = inspect(p, "-j")
    check(f"  fast commits         8 areas of 32 blocks from block {fstart}; 3 valid records of"
          " commit 1 (applied here; a mount replays them)" in out, f"vsmfs-inspect -j\n{out}")
    # The file as the records leave it: its last page on frame 701.
    rows = json.loads(inspect(p, "--map", "2", "--json"))["map"]["rows"]
    check([(x["lpn"], x["frame"], x["pages"]) for x in rows] == [(512, 512, 3), (515, 701, 1)],
          f"vsmfs-inspect --map 2: {rows}")
    inspect(p, "-c", "-j", status=16)
    return p


def test_replay(tmp, records):
    p = os.path.join(tmp, "replay.img")
    shutil.copyfile(records, p)
    img = Image(p)
    run(POKE, "-j", p, "inode", "2", "set", "uid=5")
    check(img.poke("inode", "2", "get", "uid") == "0", "replay: home uid before")
    expect(p, ["-n"], 4, "committed blocks not yet written home (replay needed)",
           "journal: 3 fast-commit records of commit 1 to replay at mount", what="replay")
    expect(p, ["-p"], 1, "(replay needed); 0 header copies, 0 uncommitted blocks, 0 journal"
           " blocks named twice: repaired",
           "journal: 3 fast-commit records of commit 1 replayed", what="replay")
    for ino, field, want in ((2, "uid", 5), (2, "mtime", 2000), (1, "mtime", 4000)):
        got = img.poke("inode", str(ino), "get", field)
        check(got == str(want), f"replay: inode {ino} {field} {got}, expected {want}")
    check(img.frame_of(515) == 701 and img.frame_of(701) == 515,
          f"replay: page table entries {img.frame_of(515)}, {img.frame_of(701)}")
    check((img.poke("jsb", "get", "checkpoint"), img.poke("jsb", "get", "commit"),
           img.poke("jsb", "get", "sequence")) == (str(jckpt_set_count(0, 1)), "0", "1"),
          "replay: the journal emptied with the next commit number, in j_checkpoint too")
    check(img.poke("jsb", "get", "fc_areas") == "8", "replay: the areas kept")
    check(img.areas() == bytes(len(img.areas())), "replay: the areas zeroed")
    out = expect(p, ["-n", "-v"], 0, "0 valid records (commit 2)", "no errors found",
                 what="replayed")
    check("to replay" not in out, f"replayed: records left\n{out}")

    # The replay was commit 1: its records are dead now, those of commit 2 valid.
    img.fc_put(0, 0, fc_record(1, 2, 0, {6: 9000}))
    expect(p, ["-n", "-v"], 0, "0 valid records (commit 2)", what="dead record")
    img.fc_put(1, 0, fc_record(2, 2, 0, {6: 9000}))
    expect(p, ["-n"], 0, "journal: 1 fast-commit records of commit 2 to replay at mount",
           what="record of the next commit")


def test_claim(tmp, base):
    """A record of an append that took page 516: f's size, pages and index
    entry, and the page's bit set in the bitmap word that holds it: the
    file system as a mount will leave it is sound; without the bit, not."""
    p = os.path.join(tmp, "claim.img")
    shutil.copyfile(base, p)
    img = Image(p)
    img.frame(img.frame_of(516), bytes([0x45]) * BS)
    words = {3: 5 * BS, 4: 5, 13: 512 | 5 << 48}
    img.fc_put(0, 0, fc_record(1, 2, 0, words, [(1 << 63 | 516 // 64, 1 << (516 % 64))]))
    out = inspect(p, "-c")
    check("page table entries bitmap word 8=0x10\n" in out, f"vsmfs-inspect -c:\n{out}")
    expect(p, ["-n"], 0, "journal: 1 fast-commit records of commit 1 to replay at mount",
           "no errors found", what="claim")
    # Without the bit, the page would be in use but free in the bitmap.
    img.fc_put(0, 0, fc_record(1, 2, 0, {3: 6 * BS, 4: 6, 13: 512 | 6 << 48}))
    img.frame(img.frame_of(517), bytes([0x46]) * BS)
    out = expect(p, ["-n"], 4, what="claim without its bit")
    check("517" in out, f"claim without its bit: page 517 not named\n{out}")


def lbit(img, lpn):
    """Bit @lpn of the logical page bitmap."""
    return img.get(img.L["lbitmap_start"] * BS + lpn // 8, 1)[0] >> lpn % 8 & 1


def test_move(tmp, base):
    """A record of an append that moved f's four pages to six it took
    (520..525): f's size, pages and index entry, the bits of the pages
    taken set, the page table entries of both runs swapped and the bits
    of the old run cleared. The file system as a mount will leave it is
    sound, f's data on the new run. Without the bits
    cleared, the old run is in use in the bitmap but no file's."""
    p = os.path.join(tmp, "move.img")
    shutil.copyfile(base, p)
    img = Image(p)
    for i in range(4, 6):
        img.frame(img.frame_of(520 + i), bytes([0x41 + i]) * BS)
    words = {3: 6 * BS, 4: 6, 13: 520 | 6 << 48}
    swaps = [(520 + i, img.frame_of(512 + i)) for i in range(4)]
    swaps += [(512 + i, img.frame_of(520 + i)) for i in range(4)]
    bits = sum(1 << (n % 64) for n in range(520, 526))
    old = sum(1 << (n % 64) for n in range(512, 516))
    img.fc_put(0, 0, fc_record(1, 2, 0, words, [fc_bitmap(8, bits)] + swaps +
                               [imgcraft.fc_bclear(8, old)]))
    out = inspect(p, "-c")
    check(f"page table entries bitmap word 8=0x{bits:x} 520=0x200 " in out and
          f" bitmap word 8&=~0x{old:x}\n" in out, f"vsmfs-inspect -c:\n{out}")
    r = json.loads(inspect(p, "-c", "--json"))["fast_commit"]["records"][0]["ptes"]
    check(r[0] == {"bitmap_word": 8, "set": bits} and r[-1] == {"bitmap_word": 8, "clear": old},
          f"vsmfs-inspect -c --json: {r}")
    out = expect(p, ["-n"], 0, "journal: 1 fast-commit records of commit 1 to replay at mount",
                 "no errors found", what="move")
    check("2/4095 inodes, 7/32767 logical pages" in out, f"move: pages in use\n{out}")
    rows = json.loads(inspect(p, "--map", "2", "--json"))["map"]["rows"]
    check([(x["lpn"], x["frame"], x["pages"]) for x in rows] == [(520, 512, 4), (524, 524, 2)],
          f"move: vsmfs-inspect --map 2: {rows}")

    # The same record without the bits cleared: pages 512..515 leak.
    p = os.path.join(tmp, "move-leak.img")
    shutil.copyfile(base, p)
    img = Image(p)
    for i in range(4, 6):
        img.frame(img.frame_of(520 + i), bytes([0x41 + i]) * BS)
    img.fc_put(0, 0, fc_record(1, 2, 0, words, [fc_bitmap(8, bits)] + swaps))
    out = expect(p, ["-n"], 4, what="move without the bits cleared")
    check("512" in out, f"move without the bits cleared: page 512 not named\n{out}")


def slot_words(data):
    """The nonzero words of the 256 bytes of a slot, {index: value}."""
    return {i: v for i, v in enumerate(struct.unpack("<32Q", data)) if v}


def dir_entries(block):
    """The entries of a directory block: (ino, rec_len, name_len, type, name, hash)."""
    out, off = [], 0
    while off < BS:
        ino, rec, nl, dtype, h = struct.unpack_from("<QHBBI", block, off)
        out.append((ino, rec, nl, dtype, block[off + 16:off + 16 + nl], h))
        if rec < 16:
            break
        off += rec
    return out


def root_block(img):
    """The device block of the root's directory block (logical page 1)."""
    return img.L["data_start"] + img.frame_of(1)


def test_create(tmp, base):
    """A record of the create of g (inode and slot 3) in the root: g's slot
    words, its inode bitmap bit, and the root's part: its mtime and a span
    of its block with g's entry."""
    p = os.path.join(tmp, "create.img")
    shutil.copyfile(base, p)
    img = Image(p)
    blk = root_block(img)
    home = img.get(blk * BS, BS)
    new = dir_block([("f", 2, DT_REG), ("g", 3, DT_REG)])
    spans = fc_spans(blk, home, new)
    # f's record length, and g's entry after it.
    check([(x[0] >> 9 & (1 << 39) - 1, x[0] & 511, len(x) - 1) for x in spans] ==
          [(blk, 1, 1), (blk, 3, 3)], f"create: the spans of the root's block {spans}")

    def record(ibit=True, span=True):
        ents = [fc_ibitmap(0, 1 << 3)] if ibit else []
        ents += [fc_dir(1, 0, {6: 7777})] + (spans if span else [])
        return fc_record(1, 3, 0, slot_words(dinode(0o100644, 1, 0, 0)), ents)

    img.fc_put(2, 0, record())
    expect(p, ["-n"], 0, "journal: 1 fast-commit records of commit 1 to replay at mount",
           "no errors found", what="create")
    out = inspect(p, "-c")
    want = ("  area 2 offset 0: slot 3 (inode 3), seq 0, 192 bytes\n"
            f"    words 0=0x{1 << 32 | 0o100644:x}\n"
            "    page table entries none\n"
            "    ibitmap word 0 |= 0x8\n"
            "    dir slot 1 (inode 1), order 0, words 6=0x1e61\n"
            f"      span block {blk} word 1 n 1\n"
            f"      span block {blk} word 3 n 3\n")
    check(out.endswith(want), f"create: vsmfs-inspect -c:\n{out}\nexpected:\n{want}")
    r = json.loads(inspect(p, "-c", "--json"))["fast_commit"]["records"]
    vals = struct.unpack("<6Q", new[:48])
    check(len(r) == 1 and r[0]["ptes"] == [] and
          r[0]["ibitmap"] == [{"word": 0, "set": 8}] and
          r[0]["dir"] == {"slot": 1, "ino": 1, "order": 0,
                          "words": [{"index": 6, "value": 7777}],
                          "spans": [{"block": blk, "word": 1, "values": [vals[1]]},
                                    {"block": blk, "word": 3, "values": list(vals[3:6])}],
                          "gone": None},
          f"create: vsmfs-inspect -c --json: {r}")
    # Without g's bit, or without its entry, the file system is not sound.
    for what, rec, says in (
            ("without its inode bitmap bit", record(ibit=False),
             "inode bitmap: inode 3 in use but marked free"),
            ("without the span", record(span=False),
             "inode 3 (regular file): link count 1 but no directory entry refers to it")):
        img.fc_put(2, 0, rec)
        expect(p, ["-n"], 4, says, what=f"create {what}")

    # Replayed by -p with a version in the journal: g home, with its entry.
    img.fc_put(2, 0, record())
    run(POKE, "-j", p, "inode", "2", "set", "uid=5")
    expect(p, ["-p"], 1, "journal: 1 fast-commit records of commit 1 replayed",
           what="create, replay")
    check(img.get(blk * BS, BS) == new, "create, replayed: the root's block")
    for args, want in ((("ibit", "3"), "1"), (("inode", "1", "get", "mtime"), "7777"),
                       (("inode", "3", "get", "nlink"), "1"),
                       (("dirent", "1", "g", "get", "ino"), "3")):
        got = img.poke(*args)
        check(got == want, f"create, replayed: {' '.join(args)}: {got}, expected {want}")
    expect(p, ["-n"], 0, "no errors found", what="create, replayed")


def test_unlink(tmp, base):
    """A record of the create of g (inode and slot 3) in the root that
    carries the unlink of f (inode and slot 2, four pages) before it: the
    root's part has f's entry gone and g's in its span, and f's part sets
    f's link count to 0. As the records leave it f is an orphan, which -p
    frees after the replay; without f's part f keeps a link no entry
    holds. Not cleanly unmounted, -n counts the orphan, not as an error."""
    p = os.path.join(tmp, "unlink.img")
    shutil.copyfile(base, p)
    img = Image(p)
    blk = root_block(img)
    home = img.get(blk * BS, BS)
    new = dir_block([("g", 3, DT_REG)])
    gone = slot_words(dinode(0o100644, 0, 4 * BS, 4, (512 | 4 << 48,)))

    def record(f_part=True):
        ents = [fc_ibitmap(0, 1 << 3), fc_dir(1, 0, {6: 7777})] + fc_spans(blk, home, new)
        ents += [fc_gone(2, 1, {0: gone[0]})] if f_part else []
        return fc_record(1, 3, 0, slot_words(dinode(0o100644, 1, 0, 0)), ents)

    img.fc_put(2, 0, record(f_part=False))
    expect(p, ["-n"], 4, "inode 2 (regular file): link count 1 but no directory entry refers"
           " to it", what="unlink without the unlinked inode's part")
    img.fc_put(2, 0, record())
    expect(p, ["-n"], 4, "journal: 1 fast-commit records of commit 1 to replay at mount",
           "inode 2 (regular file, 4 pages): orphan, no links and no directory entry",
           what="unlink")
    out = inspect(p, "-c")
    check(f"    unlinked slot 2 (inode 2), order 1, words 0=0x{0o100644:x}\n" in out,
          f"unlink: vsmfs-inspect -c:\n{out}")
    r = json.loads(inspect(p, "-c", "--json"))["fast_commit"]["records"]
    check(len(r) == 1 and r[0]["dir"]["gone"] == {"slot": 2, "ino": 2, "order": 1,
                                                  "words": [{"index": 0, "value": 0o100644}]},
          f"unlink: vsmfs-inspect -c --json: {r}")
    # Not cleanly unmounted, as after the crash that left the record: the
    # orphan is what the next mount frees, not an error of a check.
    for copy in ((), ("-b",)):
        run(SBEDIT, *copy, p, "set", "state=0")
    expect(p, ["-n"], 0, "1 orphan inodes (unlinked while open, or by fast-commit records),"
           " which the next mount frees", "no errors found", what="unlink, not clean")
    run(POKE, "-j", p, "inode", "1", "set", "uid=5")
    expect(p, ["-p"], 1, "journal: 1 fast-commit records of commit 1 replayed",
           "orphan, no links and no directory entry", what="unlink, replay")
    check(img.get(blk * BS, BS) == new, "unlink, replayed: the root's block")
    for args, want in ((("ibit", "3"), "1"), (("ibit", "2"), "0"),
                       (("dirent", "1", "g", "get", "ino"), "3")):
        got = img.poke(*args)
        check(got == want, f"unlink, replayed: {' '.join(args)}: {got}, expected {want}")
    expect(p, ["-n"], 0, "no errors found", what="unlink, replayed")


def test_dir_order(tmp, base):
    """Records of the creates of h (inode 4) and then g (inode 3) in the
    root, g's first in the areas: the root's parts apply in the root's
    order, h's (order 2) before g's (order 5), whose mtime and span win."""
    p = os.path.join(tmp, "order.img")
    shutil.copyfile(base, p)
    img = Image(p)
    blk = root_block(img)
    home = img.get(blk * BS, BS)
    b1 = dir_block([("f", 2, DT_REG), ("h", 4, DT_REG)])
    b2 = dir_block([("f", 2, DT_REG), ("h", 4, DT_REG), ("g", 3, DT_REG)])
    file_words = slot_words(dinode(0o100644, 1, 0, 0))

    def put(g_order, h_order):
        g = fc_record(1, 3, 0, file_words, [fc_ibitmap(0, 1 << 3),
                                            fc_dir(1, g_order, {6: 5555})] +
                      fc_spans(blk, b1, b2))
        h = fc_record(1, 4, 0, file_words, [fc_ibitmap(0, 1 << 4),
                                            fc_dir(1, h_order, {6: 2222})] +
                      fc_spans(blk, home, b1))
        img.fc_put(0, 0, g)
        img.fc_put(0, len(g), h)

    # Applied in the order of the areas, h's span would hide g's entry.
    put(2, 5)
    expect(p, ["-n"], 4, "inode 3 (regular file): link count 1 but no directory entry refers"
           " to it", what="directory order, reversed")
    put(5, 2)
    expect(p, ["-n"], 0, "journal: 2 fast-commit records of commit 1 to replay at mount",
           "no errors found", what="directory order")
    r = json.loads(inspect(p, "-c", "--json"))["fast_commit"]["records"]
    check([(x["slot"], x["dir"]["order"]) for x in r] == [(3, 5), (4, 2)],
          f"directory order: vsmfs-inspect -c --json: {r}")
    run(POKE, "-j", p, "inode", "2", "set", "uid=5")
    expect(p, ["-p"], 1, "journal: 2 fast-commit records of commit 1 replayed",
           what="directory order, replay")
    check(img.get(blk * BS, BS) == b2, "directory order, replayed: the root's block")
    for args, want in ((("inode", "1", "get", "mtime"), "5555"),
                       (("dirent", "1", "g", "get", "ino"), "3"),
                       (("dirent", "1", "h", "get", "ino"), "4"),
                       (("ibit", "3"), "1"), (("ibit", "4"), "1")):
        got = img.poke(*args)
        check(got == want, f"directory order, replayed: {' '.join(args)}: {got}, expected"
              f" {want}")
    expect(p, ["-n"], 0, "no errors found", what="directory order, replayed")


def torn_state(p):
    """fsck.vsmfs -n -v and vsmfs-inspect -c --json on @p: fsck's exit status,
    the valid records it counts and those it says a mount replays (None
    if it names none), the inodes in use as the records leave them, and
    the records vsmfs-inspect lists: (area, offset, slot, length)."""
    res = run(imgcraft.FSCK, "-n", "-v", p)
    out = res.stdout + res.stderr
    valid = replay = inodes = None
    for line in out.splitlines():
        if " valid records (commit " in line:
            valid = int(line.rsplit(", ", 1)[1].split()[0])
        elif " fast-commit records of commit " in line and "to replay at mount" in line:
            replay = int(line.split("journal: ", 1)[1].split()[0])
        elif "no errors found" in line and " inodes" in line:
            inodes = int(line.split(": ", 1)[1].split("/")[0])
    ins = run(INSPECT, "-c", "--json", p)
    try:
        recs = tuple((x["area"], x["offset"], x["slot"], x["length"])
                     for x in json.loads(ins.stdout)["fast_commit"]["records"])
    except (ValueError, KeyError, TypeError):
        recs = f"vsmfs-inspect -c --json: exit {ins.returncode}: {ins.stdout}{ins.stderr}"
    return (res.returncode, valid, replay, inodes, recs), out


def test_torn(tmp, base):
    """Records are appended with non-temporal stores and one fence: a crash
    inside them leaves the last one torn, its bytes [k, r_len) what the
    area held before, zeros or a dead record of the last durable commit
    (commit 0 here). Area 0 holds an overwrite record of f (times only, 64
    bytes) and then one of the create of new-file (inode 3; 192 bytes),
    over two dead records of commit 0 (a create of inode 4, an overwrite
    of f). Neither new record ends in bytes the old ones share, so a tear
    at any k < r_len changes it. For every byte k from 0 to r_len, torn
    into zeros and into the dead records' bytes: the create's record torn
    (k < r_len) is not taken, the file system is sound without new-file
    and the overwrite's record still replays; whole (k == r_len) both are
    taken and new-file is there. The overwrite's record torn stops the
    scan: the create's record after it, intact, is not taken either."""
    p = os.path.join(tmp, "torn.img")
    shutil.copyfile(base, p)
    img = Image(p)
    blk = root_block(img)
    home = img.get(blk * BS, BS)
    t, crns = 1700000000, 0x1e89c0ce
    # f's crtime nanoseconds, which its record's word 10 keeps.
    img.put(img.L["itable_start"] * BS + 2 * 256 + 84, struct.pack("<I", crns))

    def create(count, slot, name, when):
        """A create's record: the new file's slot words, its inode bitmap
        bit, the root's times and spans of its block with the entry (an
        8-byte name: the record's last word, no zeros after it)."""
        words = {0: 1 << 32 | 0o100644, 1: 1000 | 1000 << 32, 2: (slot * 7919) << 32,
                 5: when, 6: when, 7: when, 8: when}
        spans = fc_spans(blk, home, dir_block([("f", 2, DT_REG), (name, slot, DT_REG)]))
        return fc_record(count, slot, 0, words, [fc_ibitmap(0, 1 << slot),
                                                 fc_dir(1, 0, {6: when, 7: when})] + spans)

    def overwrite(count, seq, when, ns):
        return fc_record(count, 2, seq, {6: when, 7: when, 9: ns << 32 | ns, 10: crns << 32 | ns})

    dead = create(0, 4, "old-file", t - 50) + overwrite(0, 1, t - 40, 111111111)
    a, b = overwrite(1, 0, t, 222222222), create(1, 3, "new-file", t + 10)
    intact = a + b
    check((len(a), len(b), len(dead)) == (64, 192, 256) and a[-1] and b[-1] and
          a[-1] != dead[len(a) - 1] and b[-1] != dead[len(intact) - 1],
          f"torn: records of {len(a)} and {len(b)} bytes, dead ones of {len(dead)}, ending in"
          " their own bytes")
    old = {"zeros": bytes(len(intact)), "a dead record": dead.ljust(len(intact), b"\0")}
    ra, rb = (0, 0, 2, len(a)), (0, len(a), 3, len(b))
    both = (0, 2, 2, 3, (ra, rb))

    # The areas whole, over the dead records.
    img.fc_put(0, 0, dead)
    state, out = torn_state(p)
    check(state == (0, 0, None, 2, ()), f"torn: dead records only: {state}\n{out}")
    img.fc_put(0, 0, intact)
    state, out = torn_state(p)
    check(state == both, f"torn: both records whole: {state}\n{out}")

    runs = 0
    for which, off, length, want in (
            ("the create's record", len(a), len(b), (0, 1, 1, 2, (ra,))),
            ("the overwrite's record", 0, len(a), (0, 0, None, 2, ()))):
        for fill, before in old.items():
            bad = []
            for k in range(length + 1):
                area = intact[:off + k] + before[off + k:off + length] + intact[off + length:]
                check(k == length or area != intact, f"torn: {which} at {k} into {fill}:"
                      " the bytes unchanged")
                img.fc_put(0, 0, area)
                state, out = torn_state(p)
                runs += 1
                exp = both if k == length else want
                if state != exp:
                    bad.append((k, state, out))
            check(not bad, f"torn: {which} torn into {fill}: {len(bad)} of {length + 1} byte"
                  f" offsets wrong, at {[x[0] for x in bad][:20]}; first: got {bad[0][1]},"
                  f" expected {both if bad[0][0] == length else want}\n{bad[0][2]}"
                  if bad else "")
    check(runs == 2 * (len(a) + len(b) + 2), f"torn: {runs} byte offsets")
    # Whole again: -p replays both, new-file home.
    img.fc_put(0, 0, intact)
    run(POKE, "-j", p, "inode", "2", "set", "uid=5")
    expect(p, ["-p"], 1, "journal: 2 fast-commit records of commit 1 replayed",
           what="torn: whole, replay")
    for args, want in ((("dirent", "1", "new-file", "get", "ino"), "3"), (("ibit", "3"), "1"),
                       (("inode", "2", "get", "mtime"), str(t)),
                       (("inode", "3", "get", "mtime"), str(t + 10))):
        got = img.poke(*args)
        check(got == want, f"torn, replayed: {' '.join(args)}: {got}, expected {want}")
    expect(p, ["-n"], 0, "no errors found", what="torn, replayed")


def jckpt_set_count(state, count):
    """vsmfs_jckpt_set_count(): the commit number's bits in j_checkpoint."""
    return (state & 0x01ffffff01ffffff) | (count & 0x7f) << 25 | (count >> 7 & 0x7f) << 57


def test_lagging(tmp, base):
    """j_sequence one behind the number in j_checkpoint, a journal to replay."""
    p = os.path.join(tmp, "lagging.img")
    shutil.copyfile(base, p)
    img = Image(p)
    run(POKE, "-j", p, "inode", "2", "set", "uid=6")
    ckpt = int(img.poke("jsb", "get", "checkpoint"))
    img.poke("jsb", "set", f"checkpoint={jckpt_set_count(ckpt, 389)}", "sequence=388")
    img.fc_put(2, 0, fc_record(389, 2, 0, {6: 1234}))       # dead
    expect(p, ["-n", "-v"], 4, "replay needed", "0 valid records (commit 390)", what="lagging")
    img.fc_put(3, 0, fc_record(390, 2, 0, {6: 4321}))
    expect(p, ["-n"], 4, "journal: 1 fast-commit records of commit 390 to replay at mount",
           what="lagging")
    out = inspect(p, "-j")
    check("fast commits         8 areas of 32 blocks from block"
          f" {img.L['fc_start']}; 1 valid records of commit 390" in out and
          "transactions         389\n" in out and
          "pointers             checkpoint 1, last transaction at 0, commit 1\n" in out,
          f"lagging: vsmfs-inspect -j\n{out}")
    expect(p, ["-y"], 1, "journal: 1 fast-commit records of commit 390 replayed",
           what="lagging")
    check((img.poke("inode", "2", "get", "uid"), img.poke("inode", "2", "get", "mtime"),
           img.poke("jsb", "get", "sequence")) == ("6", "4321", "390"), "lagging: replayed")
    expect(p, ["-n"], 0, "no errors found", what="lagging, replayed")


def test_bad_names(tmp, base):
    data_start, blocks = imgcraft.layout(base)["data_start"], (64 << 20) // BS
    for what, rec, why in (
            ("slot 0", fc_record(1, 0, 0, {6: 1}), "slot out of range"),
            ("slot past the table", fc_record(1, 4096, 0, {6: 1}), "slot out of range"),
            ("logical page 0", fc_record(1, 2, 0, {}, [(0, 5)]), "logical page out of range"),
            ("logical page past the last", fc_record(1, 2, 0, {}, [(32768, 5)]),
             "logical page out of range"),
            ("bitmap word past the bitmap", fc_record(1, 2, 0, {}, [fc_bitmap(512, 1)]),
             "bitmap word out of range"),
            ("inode bitmap word past the bitmap", fc_record(1, 2, 0, {}, [fc_ibitmap(64, 1)]),
             "inode bitmap word out of range"),
            ("directory slot 0", fc_record(1, 2, 0, {}, [fc_dir(0, 0, {6: 1})]),
             "slot out of range"),
            ("directory slot past the table",
             fc_record(1, 2, 0, {}, [fc_dir(4096, 0, {6: 1})]), "slot out of range"),
            ("span before the data area",
             fc_record(1, 2, 0, {}, [fc_dir(1, 0, {}), fc_span(data_start - 1, 0, [1])]),
             "directory block out of range"),
            ("span past the device",
             fc_record(1, 2, 0, {}, [fc_dir(1, 0, {}), fc_span(blocks, 0, [1])]),
             "directory block out of range")):
        p = os.path.join(tmp, "names.img")
        shutil.copyfile(base, p)
        img = Image(p)
        img.fc_put(4, 0, fc_record(1, 2, 0, {6: 1}))
        img.fc_put(4, 64, rec)
        msg = (f"journal: fast-commit area 4, record at 64: {why}: mount refuses the journal"
               " and replays none of the 2 records of commit 1")
        expect(p, ["-n"], 4, msg, what=what)
        expect(p, ["-p"], 4, msg + " (not repaired in preen mode", what=what)
        out = inspect(p, "-c")
        check(f"2 valid records of commit 1; area 4, record at 64: {why}: mount refuses the"
              " journal (run fsck.vsmfs)" in out, f"{what}: vsmfs-inspect -c\n{out}")
        expect(p, ["-y"], 1, msg + ": repaired", what=what)
        check(img.areas() == bytes(len(img.areas())), f"{what}: the areas zeroed")
        expect(p, ["-n"], 0, "no errors found", what=f"{what}, repaired")
    # Preen replays the journal and keeps the records it does not drop.
    img.fc_put(4, 0, fc_record(1, 2, 0, {6: 1}))
    img.fc_put(4, 64, fc_record(1, 0, 0, {6: 1}))
    run(POKE, "-j", p, "inode", "2", "set", "uid=5")
    expect(p, ["-p"], 5, "replay needed", "record at 64: slot out of range", what="preen")
    check(img.poke("inode", "2", "get", "uid") == "5", "preen: the journal replayed")
    expect(p, ["-n"], 4, "record at 64: slot out of range", what="preen, records kept")
    expect(p, ["-y"], 1, "record at 64: slot out of range", what="preen, then -y")
    expect(p, ["-n"], 0, "no errors found", what="preen, then -y")


def test_feature(tmp, base):
    p = os.path.join(tmp, "feature.img")
    shutil.copyfile(base, p)
    img = Image(p)
    incompat = int(run(SBEDIT, p, "get", "feature_incompat").stdout)
    for opt in ([], ["-b"]):
        run(SBEDIT, *opt, p, "set", f"feature_incompat={incompat & ~FAST_COMMIT}")
    expect(p, ["-n"], 4, "journal superblock (block 2): 8 fast-commit areas without the"
           " fast_commit feature", what="areas without the feature")

    # The feature, and a journal laid out over the whole region.
    for opt in ([], ["-b"]):
        run(SBEDIT, *opt, p, "set", f"feature_incompat={incompat}")
    jb = img.L["journal_blocks"]
    avail = jb - 2
    n = avail * 256 // 257
    while n + (n + 255) // 256 > avail:
        n -= 1
    img.poke("jsb", "set", "fc_areas=0", "fc_area_blocks=0", f"blocks={n}",
             f"hdr_blocks={(n + 255) // 256}")
    expect(p, ["-n"], 4, "journal superblock (block 2): 0 fast-commit areas with the"
           " fast_commit feature", what="the feature without areas")

    p = os.path.join(tmp, "nofc.img")
    with open(p, "wb") as f:
        f.truncate(64 << 20)
    res = run(MKFS, "-q", "-O", "^fast_commit", p)
    check(res.returncode == 0, f"mkfs.vsmfs -O ^fast_commit: {res.stderr.strip()}")
    out = expect(p, ["-n", "-v"], 0, "no errors found", what="without the feature")
    check("fast-commit" not in out, f"without the feature: {out}")
    check("Fast commits: no areas (the fast_commit feature is not set)" in inspect(p, "-c"),
          "without the feature: vsmfs-inspect -c")
    check(json.loads(inspect(p, "-c", "--json")) == {"fast_commit": None},
          "without the feature: vsmfs-inspect -c --json")


def test_metadump(tmp, base):
    """An obfuscated dump keeps no name a record holds: a fast symlink's
    target, a new entry's name in a span of a directory block."""
    p = os.path.join(tmp, "symlink.img")
    shutil.copyfile(base, p)
    img = Image(p)
    target = b"secret-target"
    img.inode(1, dinode(0o40755, 2, BS, 1, (1 | 1 << 48,)))
    img.frame(img.frame_of(1), dir_block([("f", 2, DT_REG), ("l", 3, 10)]))
    img.inode(3, dinode(0o120777, 1, len(target), 0) [:104] + target.ljust(80, b"\0") +
              bytes(72))
    img.bits(img.L["ibitmap_start"], 3, 4)
    expect(p, ["-n"], 0, "no errors found", what="symlink")
    words = target.ljust(16, b"\0")
    img.fc_put(0, 0, fc_record(1, 3, 0, {3: len(target), 13: struct.unpack("<Q", words[:8])[0],
                                        14: struct.unpack("<Q", words[8:])[0]}))
    img.fc_put(0, 64, fc_record(1, 2, 0, {6: 1000}))
    # A create's record: the new entry's name in a span of the root's block.
    blk = root_block(img)
    new = dir_block([("f", 2, DT_REG), ("l", 3, 10), ("secret-entry", 4, DT_REG)])
    img.fc_put(0, 128, fc_record(1, 4, 0, slot_words(dinode(0o100644, 1, 0, 0)),
                                 [fc_ibitmap(0, 1 << 4), fc_dir(1, 0, {6: 1234})] +
                                 fc_spans(blk, img.get(blk * BS, BS), new)))
    expect(p, ["-n"], 0, "journal: 3 fast-commit records of commit 1 to replay at mount",
           "no errors found", what="symlink and create")
    dump, back = os.path.join(tmp, "dump"), os.path.join(tmp, "restored.img")
    for opts, kept in (([], False), (["--no-obfuscate"], True)):
        res = run(INSPECT, "--metadump", dump, *opts, p)
        check(res.returncode == 0, f"metadump {opts}: {res.stderr.strip()}")
        with open(dump, "rb") as f:
            data = f.read()
        check((b"secret" in data) == kept,
              f"metadump {opts}: the target {'lost' if kept else 'kept'}")
        res = run(INSPECT, "--restore", dump, back)
        check(res.returncode == 0, f"restore {opts}: {res.stderr.strip()}")
        expect(back, ["-n"], 0, "journal: 3 fast-commit records of commit 1 to replay at mount",
               "no errors found", what=f"restored {opts}")
        # The record's words are the target as the inode table has it.
        r = json.loads(inspect(back, "-c", "--json"))["fast_commit"]["records"][0]
        home = Image(back)
        got = [w["value"] for w in r["words"]][1:]
        want = [int(home.poke("inode", "3", "get", f)) for f in ("direct0", "direct1")]
        check(got == want, f"restored {opts}: record words {got}, inode table {want}")
        check(r["words"][0] == {"index": 3, "value": len(target)}, f"restored {opts}: size")
        # Replayed, the root's block is the dump's, the new entry's name as it has it.
        run(POKE, "-j", back, "inode", "2", "set", "uid=5")
        expect(back, ["-p"], 1, "journal: 3 fast-commit records of commit 1 replayed",
               what=f"restored {opts}, replay")
        got = home.get(blk * BS, BS)
        got, want = dir_entries(home.get(blk * BS, BS)), dir_entries(new)
        check([e[:4] for e in got] == [e[:4] for e in want] and
              all((g[4] == w[4]) == kept for g, w in zip(got, want)) and
              all(imgcraft.name_hash(g[4]) == g[5] for g in got),
              f"restored {opts}: the root's block replayed: {got}")
        expect(back, ["-n"], 0, "no errors found", what=f"restored {opts}, replayed")


def main():
    tmp = tempfile.mkdtemp(prefix="vsmfs-fastcommit.")
    try:
        base = os.path.join(tmp, "base.img")
        with open(base, "wb") as f:
            f.truncate(64 << 20)
        res = run(MKFS, "-q", base)
        check(res.returncode == 0, f"mkfs.vsmfs: {res.stderr.strip()}")
        img = Image(base)
        check((img.L["fc_areas"], img.L["fc_area_blocks"]) == (8, 32), f"areas: {img.L}")
        populate(img)
        expect(base, ["-n"], 0, "no errors found", what="populated")
        records = test_records(tmp, base)
        test_replay(tmp, records)
        test_claim(tmp, base)
        test_move(tmp, base)
        test_create(tmp, base)
        test_unlink(tmp, base)
        test_dir_order(tmp, base)
        test_torn(tmp, base)
        test_lagging(tmp, base)
        test_bad_names(tmp, base)
        test_feature(tmp, base)
        test_metadump(tmp, base)
    finally:
        shutil.rmtree(tmp)
    if T.failures:
        print(f"fastcommit-test: {T.failures} checks failed")
        return 1
    print("fastcommit-test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
