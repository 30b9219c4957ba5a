#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the tools on file systems with a bad-frame list (badframes).

An image made by mkfs.vsmfs gets, by hand, a root directory naming a
regular file of four pages and a subdirectory, then the badframes feature
(set in both superblocks with sbedit) and a list in block 1 naming a frame
behind a free logical page, the frame of the file's second page, a frame
past the last one and the first entry again. fsck.vsmfs -n must report the
file page and the two bad entries and exit 4; -y must drop the entries and
give the page a zeroed frame of a free logical page, never writing the bad
frame; a second check must find nothing, with both frames retired.
vsmfs-inspect must name the feature, list the entries with what holds each
frame, and map the pages of an inode to their device blocks. Copies are
damaged further: directory, index and xattr blocks on bad frames (reported,
left uncorrected), a list with a bad magic and a reserved field set
(repaired by -p), the feature without sb_last, and an image without the
sparse feature.
"""

import json
import os
import re
import shutil
import struct
import sys
import tempfile

from imgcraft import (BS, DT_DIR, DT_REG, INSPECT, MKFS, SBEDIT, Checks, dinode, dir_block,
                      run)
import imgcraft

BADLIST_MAGIC = 0x44414256
BADFRAMES = 0x1
T = Checks("badframes-test")
check, expect = T.check, T.expect


class Image(imgcraft.Image):
    def pte(self, lpn):
        return self.frame_of(lpn)

    def badlist(self, frames, magic=BADLIST_MAGIC, count=None, reserved=0):
        """Block 1: the list, and the feature set in both superblocks."""
        blk = struct.pack("<IIQ", magic, len(frames) if count is None else count, reserved)
        blk += b"".join(struct.pack("<Q", f) for f in frames)
        self.put(BS, blk + bytes(BS - len(blk)))
        for opt in ([], ["-b"]):
            res = run(SBEDIT, *opt, self.path, "set", f"feature_ro_compat={BADFRAMES}")
            check(res.returncode == 0, f"sbedit {opt}: {res.stderr.strip()}")


def populate(img):
    """Root (lpn 1) naming file f (inode 2, lpns 512..515) and directory d (inode 3, lpn 2)."""
    img.inode(1, dinode(0o40755, 3, BS, 1, (1 | 1 << 48,)))
    img.frame(img.pte(1), dir_block([("f", 2, DT_REG), ("d", 3, DT_DIR)]))
    img.inode(2, dinode(0o100644, 1, 4 * BS, 4, (512 | 4 << 48,)))
    for i in range(4):
        img.frame(img.pte(512 + i), bytes([0x41 + i]) * BS)
    img.inode(3, dinode(0o40755, 2, BS, 1, (2 | 1 << 48,)))
    img.frame(img.pte(2), dir_block([]))
    img.lbits(1, 3)
    img.lbits(512, 516)
    img.bits(img.L["ibitmap_start"], 2, 4)


def inspect(img, *opts):
    res = run(INSPECT, *opts, img)
    check(res.returncode == 0, f"vsmfs-inspect {' '.join(opts)}: exit {res.returncode}\n"
          f"{res.stdout}{res.stderr}")
    return res.stdout


def test_main(tmp):
    base = os.path.join(tmp, "base.img")
    with open(base, "wb") as f:
        f.truncate(64 << 20)
    res = run(MKFS, "-q", "-f", base)
    check(res.returncode == 0, f"mkfs.vsmfs: {res.stderr.strip()}")
    check(Image(base).get(BS, BS) == bytes(BS), "mkfs.vsmfs leaves block 1 zero")
    img = Image(base)
    L = img.L
    dp = L["data_pages"]
    populate(img)
    expect(base, ["-n"], 0, "no errors found", what="populated")
    clean = os.path.join(tmp, "clean.img")
    shutil.copyfile(base, clean)

    # The feature with an empty list: nothing wrong, nothing to say but with -v.
    Image(clean).badlist([])
    out = expect(clean, ["-n"], 0, "no errors found", what="empty list")
    check("bad frames" not in out, f"empty list: a summary without -v\n{out}")
    expect(clean, ["-n", "-v"], 0, "bad frames: 0 (0 in use by files, 0 retired)",
           what="empty list, -v")
    check(re.search(r"features: sb_last sparse fast_commit badframes\n", inspect(clean)),
          f"vsmfs-inspect names the feature\n{inspect(clean)}")
    check("Bad frames (block 1): 0 listed" in inspect(clean, "-b"), "vsmfs-inspect -b, empty")

    # Frame 700 behind free logical page 700, the file's second page, a
    # frame past the last, and 700 again.
    free_frame = img.pte(700)
    page_frame = img.pte(513)
    check(free_frame == 700 and page_frame == 513, "mkfs: page N on frame N")
    img.badlist([free_frame, page_frame, dp + 5, free_frame])
    img.frame(page_frame, b"BAD!" * (BS // 4))
    img.frame(516, b"old!" * (BS // 4))      # the frame the repair takes, not zero yet
    before = img.get(0, 64 << 20)

    out = inspect(base)
    check(re.search(r"features: sb_last sparse fast_commit badframes\n", out),
          f"vsmfs-inspect: features\n{out}")
    out = inspect(base, "-b")
    blk = L["data_start"]
    for line in ("Bad frames (block 1): 4 listed",
                 f"{free_frame:>14} {blk + free_frame:>12} {700:>14}  free (retired)",
                 f"{page_frame:>14} {blk + page_frame:>12} {513:>14}  inode 2 offset 4096 (data)",
                 f"{dp + 5:>14} {'-':>12} {'-':>14}  invalid entry: past the last frame",
                 f"{free_frame:>14} {'-':>12} {'-':>14}  invalid entry: listed before"):
        check(line in out, f"vsmfs-inspect -b lacks {line!r}\n{out}")
    js = json.loads(inspect(base, "-b", "--json"))["badframes"]
    check(js["count"] == 4 and js["entries"][1] == {
        "frame": page_frame, "block": blk + page_frame, "lpn": 513, "state": "in use",
        "ino": 2, "kind": "data", "offset": 4096}, f"vsmfs-inspect -b --json: {js}")
    full = json.loads(inspect(base, "--json"))
    check("badframes" in full["superblock"]["features"] and
          len(full["badframes"]["entries"]) == 4, "vsmfs-inspect --json: features, list")
    out = inspect(base, "--map", "3")
    check(re.search(r"^  directory +0 +1 +2 +2 +%d$" % (blk + 2), out, re.M),
          f"vsmfs-inspect --map 3: the directory block and its device block\n{out}")
    out = inspect(base, "--map", "2")
    for row in (r"^  data +0 +1 +512 +512 +%d$" % (blk + 512),
                r"^  data +4096 +1 +513 +513 +%d  bad frame$" % (blk + 513),
                r"^  data +8192 +2 +514 +514 +%d$" % (blk + 514)):
        check(re.search(row, out, re.M), f"vsmfs-inspect --map 2 lacks {row!r}\n{out}")

    out = expect(base, ["-n"], 4,
                 "bad-frame list (block 1): entry 2 (frame %d) is past the last frame %d"
                 % (dp + 5, dp - 1),
                 "bad-frame list (block 1): entry 3 (frame 700) repeats an earlier entry",
                 "inode 2 (regular file) offset 4096: data page on bad frame 513"
                 " (logical page 513)",
                 "bad frames: 2 (1 in use by files, 1 retired)",
                 "3 left uncorrected (run with -y to repair)", what="list")
    check(img.get(0, 64 << 20) == before, "fsck.vsmfs -n changed the image")
    # Preen repairs the list, not the file.
    p = os.path.join(tmp, "preen.img")
    shutil.copyfile(base, p)
    expect(p, ["-p"], 5, "entry 2 (frame %d) is past the last frame %d: repaired" % (dp + 5, dp - 1),
           "data page on bad frame 513 (logical page 513) (not repaired in preen mode",
           what="preen")

    expect(base, ["-y"], 1, "entry 2 (frame %d) is past the last frame %d: repaired"
           % (dp + 5, dp - 1), "entry 3 (frame 700) repeats an earlier entry: repaired",
           "inode 2 (regular file) offset 4096: data page on bad frame 513 (logical page 513)"
           ": repaired", "bad frames: 2 (0 in use by files, 2 retired)", what="repair")
    check(img.get(BS, 32) == struct.pack("<IIQQQ", BADLIST_MAGIC, 2, 0, 700, 513),
          f"repaired list: {img.get(BS, 32).hex()}")
    # The page swapped frames with free logical page 516 (same superpage),
    # whose frame was zeroed; the bad frame was never written.
    check(img.pte(513) == 516 and img.pte(516) == 513,
          f"page table after the repair: 513 -> {img.pte(513)}, 516 -> {img.pte(516)}")
    check(img.frame(516) == bytes(BS), "the frame given to the file page is zeroed")
    check(img.frame(513) == b"BAD!" * (BS // 4), "the bad frame was written")
    check(img.frame(512) == b"A" * BS and img.frame(514) == b"C" * BS,
          "the other pages of the file")
    out = expect(base, ["-n"], 0, "no errors found",
                 "bad frames: 2 (0 in use by files, 2 retired)", what="repaired")
    check("3/4095 inodes, 6/32767 logical pages" in out, f"usage after the repair\n{out}")
    out = inspect(base, "-b")
    for line in (f"{700:>14} {blk + 700:>12} {700:>14}  free (retired)",
                 f"{513:>14} {blk + 513:>12} {516:>14}  free (retired)"):
        check(line in out, f"vsmfs-inspect -b after the repair lacks {line!r}\n{out}")
    out = inspect(base, "--map", "2")
    check(re.search(r"^  data +4096 +1 +513 +516 +%d$" % (blk + 516), out, re.M),
          f"vsmfs-inspect --map 2 after the repair\n{out}")
    return clean


def test_meta(tmp, clean):
    """Directory, index and xattr blocks on bad frames: reported, not repaired."""
    p = os.path.join(tmp, "meta.img")
    shutil.copyfile(clean, p)
    img = Image(p)
    # Inode 2 gets an index block (lpn 3) and an xattr block (lpn 4), neither read.
    img.inode(2, dinode(0o100644, 1, 4 * BS, 5, (512 | 4 << 48,), ind=3, xattr=4))
    img.lbits(3, 5)
    img.badlist([2, 3, 4, 514])
    expect(p, ["-n"], 4, "inode 3 (directory) offset 0: directory block on bad frame 2"
           " (logical page 2)",
           "inode 2 (regular file): index block on bad frame 3 (logical page 3)",
           "inode 2 (regular file): xattr block on bad frame 4 (logical page 4)",
           "inode 2 (regular file) offset 8192: data page on bad frame 514 (logical page 514)",
           "bad frames: 4 (4 in use by files, 0 retired)", what="metadata on bad frames")
    # Not repaired; nor is the data page, with an index unreadable.
    expect(p, ["-y"], 4, "directory block on bad frame 2 (logical page 2)",
           "data page on bad frame 514 (logical page 514) (not repaired while other errors"
           " remain)", what="metadata on bad frames, -y")
    out = inspect(p, "-b")
    for s in ("inode 3 offset 0 (directory)", "inode 2 (index)", "inode 2 (xattr)",
              "inode 2 offset 8192 (data)"):
        check(s in out, f"vsmfs-inspect -b lacks {s!r}\n{out}")
    out = inspect(p, "--map", "2")
    check(re.search(r"^  index +- +1 +3 +3 +\d+  bad frame$", out, re.M) and
          re.search(r"^  xattr +- +1 +4 +4 +\d+  bad frame$", out, re.M),
          f"vsmfs-inspect --map 2: index and xattr blocks\n{out}")


def test_list_damage(tmp, clean):
    p = os.path.join(tmp, "magic.img")
    shutil.copyfile(clean, p)
    img = Image(p)
    img.badlist([700], magic=0x12345678, reserved=7)
    expect(p, ["-n"], 4, "bad-frame list (block 1): bad magic 0x12345678",
           "bad-frame list (block 1): reserved field is not zero", what="list header")
    expect(p, ["-p"], 1, "bad magic 0x12345678: repaired", "reserved field is not zero: repaired",
           "bad frames: 1 (0 in use by files, 1 retired)", what="list header")
    check(img.get(BS, 24) == struct.pack("<IIQQ", BADLIST_MAGIC, 1, 0, 700),
          "the list keeps its entry")
    expect(p, ["-n"], 0, "no errors found", what="list header repaired")
    # A count past the entries that fit: the block's entries are kept.
    img.badlist(list(range(1000, 1510)), count=600)
    expect(p, ["-n"], 4, "bad-frame list (block 1): 600 entries, more than the 510 that fit",
           what="count")
    expect(p, ["-y"], 1, "600 entries, more than the 510 that fit: repaired", what="count")
    expect(p, ["-n"], 0, "bad frames: 510 (0 in use by files, 510 retired)",
           what="count repaired")


def test_no_sb_last(tmp):
    p = os.path.join(tmp, "nosblast.img")
    with open(p, "wb") as f:
        f.truncate(64 << 20)
    res = run(MKFS, "-q", "-f", "-O", "^sb_last", p)
    check(res.returncode == 0, f"mkfs.vsmfs -O ^sb_last: {res.stderr.strip()}")
    for opt in ([], ["-b"]):
        run(SBEDIT, *opt, p, "set", f"feature_ro_compat={BADFRAMES}")
    backup = Image(p).get(BS, BS)
    expect(p, ["-n"], 4, "superblock: the badframes feature without sb_last", what="no sb_last")
    expect(p, ["-y"], 4, "superblock: the badframes feature without sb_last", what="no sb_last")
    check(Image(p).get(BS, BS) == backup, "block 1 (the backup superblock) changed")


def test_flat(tmp):
    p = os.path.join(tmp, "flat.img")
    with open(p, "wb") as f:
        f.truncate(64 << 20)
    res = run(MKFS, "-q", "-f", "-O", "^sparse", p)
    check(res.returncode == 0, f"mkfs.vsmfs -O ^sparse: {res.stderr.strip()}")
    img = Image(p)
    populate(img)
    img.badlist([515])
    expect(p, ["-n"], 4, "inode 2 (regular file) offset 12288: data page on bad frame 515",
           what="not sparse")
    expect(p, ["-y"], 1, "offset 12288: data page on bad frame 515 (logical page 515): repaired",
           what="not sparse")
    check(img.pte(515) == 516 and img.pte(516) == 515, "not sparse: frames swapped")
    expect(p, ["-n"], 0, "no errors found", "bad frames: 1 (0 in use by files, 1 retired)",
           what="not sparse, repaired")


def main():
    tmp = tempfile.mkdtemp(prefix="vsmfs-badframes.")
    try:
        clean = test_main(tmp)
        test_meta(tmp, clean)
        test_list_damage(tmp, clean)
        test_no_sb_last(tmp)
        test_flat(tmp)
    finally:
        shutil.rmtree(tmp)
    if T.failures:
        print(f"badframes-test: {T.failures} checks failed")
        return 1
    print("badframes-test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
