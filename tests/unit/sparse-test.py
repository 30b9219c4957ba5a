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
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKFS = os.path.join(TOP, "tools", "mkfs.vsmfs")
FSCK = os.path.join(TOP, "tools", "fsck.vsmfs")
INSPECT = os.path.join(TOP, "tools", "vsmfs-inspect")
POKE = os.path.join(TOP, "tests", "helpers", "fspoke")
BS = 4096
VSP = 512
NONE = (1 << 40) - 1
DT_DIR, DT_REG = 4, 8

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"sparse-test: FAIL: {what}")


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def fsck(img, *opts):
    res = run(FSCK, *opts, img)
    return res.returncode, res.stdout + res.stderr


def expect(img, opts, status, *says, what):
    got, out = fsck(img, *opts)
    check(got == status, f"{what}: fsck.vsmfs {' '.join(opts)}: exit {got}, expected {status}\n{out}")
    for s in says:
        check(s in out, f"{what}: fsck.vsmfs {' '.join(opts)}: output lacks {s!r}\n{out}")
    return out


def layout(img):
    res = run(POKE, img, "layout")
    if res.returncode:
        raise SystemExit(f"sparse-test: fspoke layout: {res.stderr.strip()}")
    return {k: int(v) for k, v in (line.split("=") for line in res.stdout.split())}


def name_hash(name):
    h = 2166136261
    for c in name:
        h = ((h ^ c) * 16777619) & 0xffffffff
    return h


def dir_block(entries):
    """A directory block holding (name, ino, type) entries."""
    b = bytearray()
    for i, (name, ino, dtype) in enumerate(entries):
        n = name.encode()
        rec = (16 + len(n) + 7) // 8 * 8
        if i == len(entries) - 1:
            rec = BS - len(b)
        b += struct.pack("<QHBBI", ino, rec, len(n), dtype, name_hash(n)) + n
        b += bytes(rec - 16 - len(n))
    return bytes(b)


def dinode(mode, nlink, size, pages, direct=(), ind=0, xattr=0):
    d = struct.pack("<HHIIIIIQQ", mode, 0, nlink, 0, 0, 0, 0, size, pages)
    d += bytes(48) + struct.pack("<IIQ", 0, 0, xattr)
    d += b"".join(struct.pack("<Q", e) for e in list(direct) + [0] * (8 - len(direct)))
    d += struct.pack("<QQQ", ind, 0, 0) + bytes(64)
    assert len(d) == 256
    return d


class Image:
    def __init__(self, path):
        self.path = path
        self.L = layout(path)

    def put(self, off, data):
        with open(self.path, "r+b") as f:
            f.seek(off)
            f.write(data)

    def get(self, off, n):
        with open(self.path, "rb") as f:
            f.seek(off)
            return f.read(n)

    def inode(self, slot, data):
        self.put(self.L["itable_start"] * BS + slot * 256, data)

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

    def frame_of(self, lpn):
        return struct.unpack("<Q", self.get(self.L["ptable_start"] * BS + lpn * 8, 8))[0]

    def bits(self, start, lo, hi, value=1):
        off = start * BS + lo // 8
        b = bytearray(self.get(off, (hi - 1) // 8 - lo // 8 + 1))
        for n in range(lo, hi):
            i = n // 8 - lo // 8
            if value:
                b[i] |= 1 << (n % 8)
            else:
                b[i] &= ~(1 << (n % 8)) & 0xff
        self.put(off, bytes(b))

    def lbits(self, lo, hi, value=1):
        self.bits(self.L["lbitmap_start"], lo, hi, value)

    def frame_block(self, frame, data):
        self.put((self.L["data_start"] + frame) * BS, data)


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
    if failures:
        print(f"sparse-test: {failures} checks failed")
        return 1
    print("sparse-test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
