#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the tools on sparse file systems (VSMFS_FEATURE_INCOMPAT_SPARSE).

An image made by mkfs.vsmfs gets, by hand, a root directory block and a
regular file whose runs hold logical pages without a frame (one-page holes
of a run that has frames, and a run of the logical space past the frames
without any): fsck.vsmfs must find it sound, with i_pages counting only
the pages that have a frame, and vsmfs-inspect must show the holes. Copies
of it are then damaged: two logical pages sharing a frame, a frame backing
no logical page (leaked, repaired by giving it to a free logical page),
directory, index and xattr blocks without a frame, i_pages counting holes;
fsck.vsmfs must report each. A metadata dump of the image restores to an
image fsck.vsmfs finds as sound, with the same usage. An image without the
feature (-O ^sparse) keeps the old rule: no logical page without a frame.
"""

import os
import re
import shutil
import struct
import sys
import tempfile

from imgcraft import (BS, DT_REG, FSCK, INSPECT, MKFS, VSP, Checks, dinode, dir_block,
                      run)
import imgcraft

NONE = (1 << 40) - 1
T = Checks("sparse-test")
check, expect = T.check, T.expect


def fsck(img, *opts):
    res = run(FSCK, *opts, img)
    return res.returncode, res.stdout + res.stderr


class Image(imgcraft.Image):
    def root(self, **fields):
        """Rewrite fields of the root inode mkfs made (slot 1)."""
        off = self.L["itable_start"] * BS + 256
        d = bytearray(self.get(off, 256))
        if "size" in fields:
            d[24:32] = struct.pack("<Q", fields["size"])
        if "pages" in fields:
            d[32:40] = struct.pack("<Q", fields["pages"])
        if "direct0" in fields:
            d[104:112] = struct.pack("<Q", fields["direct0"])
        self.put(off, bytes(d))

    def pte(self, lpn, frame):
        self.put(self.L["ptable_start"] * BS + lpn * 8, struct.pack("<Q", frame))

    def frame_block(self, frame, data):
        self.frame(frame, data)


def populate(img):
    """Root directory with one file of 522 pages of holes: returns its numbers."""
    L = img.L
    dp, lp = L["data_pages"], L["lpages"]
    far = (dp + VSP - 1) // VSP * VSP + VSP      # a superpage past the frames
    spare = far + VSP                            # free logical pages without frames
    # Root: one directory block at logical page 1 (frame 1), naming the file.
    img.root(size=BS, pages=1, direct0=1 | 1 << 48)
    img.frame_block(1, dir_block([("f", 2, DT_REG)]))
    img.lbits(1, 2)
    # Inode 2: piece 0 is the run 512+512, ten pages of which (600..609)
    # lost their frames to free logical pages past the frames (a hole
    # punched); piece 1 is the run far+512 with no frame at all.
    for i in range(10):
        img.pte(spare + i, 600 + i)
        img.pte(600 + i, NONE)
    img.inode(2, dinode(0o100644, 1, 3 << 20, 502, (512 | 512 << 48, far | 512 << 48)))
    img.lbits(512, 1024)
    img.lbits(far, far + VSP)
    img.bits(L["ibitmap_start"], 2, 3)
    check(lp >= far + 2 * VSP, f"room in {lp} logical pages")
    return far, spare


def test_sparse(tmp):
    base = os.path.join(tmp, "base.img")
    with open(base, "wb") as f:
        f.truncate(64 << 20)
    res = run(MKFS, "-q", "-f", base)
    check(res.returncode == 0, f"mkfs.vsmfs: {res.stderr.strip()}")
    img = Image(base)
    L = img.L
    dp, lp = L["data_pages"], L["lpages"]
    check(L["sparse"] == 1 and lp == 32768, f"default: sparse, 32768 logical pages: {L}")
    check(img.frame_of(dp - 1) == dp - 1 and img.frame_of(dp) == NONE
          and img.frame_of(lp - 1) == NONE, "mkfs: page N on frame N, no frame past them")
    expect(base, ["-n"], 0, "no errors found",
           f"1/4095 inodes, 0/{lp - 1} logical pages, 0/{dp - 1} frames in use",
           what="fresh")
    far, spare = populate(img)
    used = 1 + 512 + 512
    expect(base, ["-n", "-v"], 0, "no errors found",
           f"2/4095 inodes, {used}/{lp - 1} logical pages, {1 + 502}/{dp - 1} frames in use",
           f"{lp} logical pages, {dp} frames (sparse)", what="file with holes")
    res = run(INSPECT, "-i", base)
    check("piece 0: run lpn 512+512, 502 framed, 10 holes" in res.stdout and
          f"piece 1: run lpn {far}+512, 0 framed, 512 holes" in res.stdout,
          f"vsmfs-inspect -i shows the holes:\n{res.stdout}")
    check(re.search(r"frames +503 used, %d free of %d" % (dp - 504, dp - 1), res.stdout),
          f"vsmfs-inspect: frames in use\n{res.stdout}")

    # A metadata dump holds the whole page table and bitmap.
    dump, back = os.path.join(tmp, "md"), os.path.join(tmp, "md.img")
    res = run(INSPECT, "--metadump", dump, base)
    check(res.returncode == 0, f"--metadump: {res.stderr.strip()}")
    res = run(INSPECT, "--restore", dump, back)
    check(res.returncode == 0, f"--restore: {res.stderr.strip()}")
    expect(back, ["-n"], 0, "no errors found",
           f"2/4095 inodes, {used}/{lp - 1} logical pages, 503/{dp - 1} frames in use",
           what="restored metadata dump")

    def case(name, damage, opts, status, *says):
        img_path = os.path.join(tmp, name + ".img")
        shutil.copyfile(base, img_path)
        damage(Image(img_path))
        out = expect(img_path, opts, status, *says, what=name)
        return img_path, out

    # i_pages counting the holes too.
    p, _ = case("ipages", lambda i: i.inode(2, dinode(0o100644, 1, 3 << 20, 1024,
                                                      (512 | 512 << 48, far | 512 << 48))),
                ["-n"], 4, "inode 2 (regular file): i_pages 1024, should be 502")
    expect(p, ["-p"], 1, "i_pages 1024, should be 502: repaired", what="ipages")
    expect(p, ["-n"], 0, "no errors found", what="ipages repaired")

    # Two logical pages sharing a frame (and so a frame backing none).
    p, _ = case("shared", lambda i: i.pte(700, 701), ["-n"], 4,
                "page table: logical page 701 maps frame 701, already mapped by logical page 700",
                "page table: 1 frames back no logical page (frame 700): space leaked")
    expect(p, ["-y"], 4, "(frame 700): space leaked (not repaired while other errors remain)",
           what="shared")

    # A frame leaked: backing no logical page; given to a free page.
    p, _ = case("leaked", lambda i: i.pte(100, NONE), ["-n"], 4,
                "page table: 1 frames back no logical page (frame 100): space leaked")
    expect(p, ["-p"], 1, "(frame 100): space leaked: repaired", what="leaked")
    expect(p, ["-n"], 0, "no errors found", f"503/{dp - 1} frames in use",
           what="leaked frame repaired")
    check(Image(p).frame_of(100) == 100, "the leaked frame went to the first free page")
    # A page of the file lost its frame (now a hole): the frame goes to the
    # first free logical page without one, never back into the file.
    p, _ = case("leaked2", lambda i: i.pte(700, NONE), ["-n"], 4,
                "i_pages 502, should be 501", "(frame 700): space leaked")
    expect(p, ["-p"], 1, "(frame 700): space leaked: repaired", what="leaked2")
    expect(p, ["-n"], 0, "no errors found", f"502/{dp - 1} frames in use",
           what="hole repaired")
    check(Image(p).frame_of(700) == NONE and Image(p).frame_of(dp) == 700,
          "the leaked frame went to the first free page without one")

    def no_frame_dir(i):
        i.root(direct0=(spare + 200) | 1 << 48)
        i.lbits(1, 2, 0)
        i.lbits(spare + 200, spare + 201)
    case("dirblock", no_frame_dir, ["-n"], 4,
         f"inode 1 (directory): directory block 0 at logical page {spare + 200} has no frame")

    def no_frame_index(i):
        i.inode(2, dinode(0o100644, 1, 3 << 20, 502, (512 | 512 << 48, far | 512 << 48),
                          ind=spare + 100))
        i.lbits(spare + 100, spare + 101)
    case("indblock", no_frame_index, ["-n"], 4,
         f"inode 2 (regular file): index block at logical page {spare + 100} has no frame")

    def no_frame_xattr(i):
        i.inode(2, dinode(0o100644, 1, 3 << 20, 502, (512 | 512 << 48, far | 512 << 48),
                          xattr=spare + 101))
        i.lbits(spare + 101, spare + 102)
    case("xattr", no_frame_xattr, ["-n"], 4,
         f"inode 2 (regular file): xattr block at logical page {spare + 101} has no frame")

    # Entries past the frames, and runs past the logical pages.
    case("range", lambda i: i.pte(5, dp + 5), ["-n"], 4,
         f"page table: logical page 5 maps frame {dp + 5}, past the last frame {dp - 1}")
    case("runrange", lambda i: i.inode(2, dinode(0o100644, 1, 3 << 20, 0,
                                                 ((lp + 1) | 1 << 48,))),
         ["-n"], 4, f"index entry 0: logical pages {lp + 1}+1 out of range (1..{lp - 1})")


def test_flat(tmp):
    img = os.path.join(tmp, "flat.img")
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    res = run(MKFS, "-q", "-f", "-O", "^sparse", img)
    check(res.returncode == 0, f"mkfs.vsmfs -O ^sparse: {res.stderr.strip()}")
    i = Image(img)
    dp = i.L["data_pages"]
    check(i.L["sparse"] == 0 and i.L["lpages"] == dp, f"-O ^sparse: {i.L}")
    expect(img, ["-n"], 0, "no errors found", f"1/4095 inodes, 0/{dp - 1} logical pages in use",
           what="not sparse")
    i.pte(5, NONE)
    expect(img, ["-n"], 4, f"page table: logical page 5 maps frame {NONE}, past the last frame",
           "page table: 1 frames are mapped by no logical page", what="not sparse, no frame")


def main():
    tmp = tempfile.mkdtemp(prefix="vsmfs-sparse.")
    try:
        test_sparse(tmp)
        test_flat(tmp)
    finally:
        shutil.rmtree(tmp)
    if T.failures:
        print(f"sparse-test: {T.failures} checks failed")
        return 1
    print("sparse-test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
