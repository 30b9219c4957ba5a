# SPDX-License-Identifier: GPL-2.0
"""Shared by the host tests that write vsmfs images by hand
(sparse-test.py, badframes-test.py, fastcommit-test.py): the tools' paths,
checks that count failures, fsck.vsmfs runs checked for their exit status
and output, the layout from fspoke (the fast-commit areas included), and
the on-media records (directory blocks, inodes, fast-commit records and
their entries) with an image file to put them in."""

import os
import struct
import subprocess

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKFS = os.path.join(TOP, "tools", "mkfs.vsmfs")
FSCK = os.path.join(TOP, "tools", "fsck.vsmfs")
INSPECT = os.path.join(TOP, "tools", "vsmfs-inspect")
POKE = os.path.join(TOP, "tests", "helpers", "fspoke")
SBEDIT = os.path.join(TOP, "tests", "helpers", "sbedit")
BS = 4096
VSP = 512
DT_DIR, DT_REG = 4, 8


class Checks:
    """Failed checks of the test @name, counted and printed."""

    def __init__(self, name):
        self.name = name
        self.failures = 0

    def check(self, cond, what):
        if not cond:
            self.failures += 1
            print(f"{self.name}: FAIL: {what}")

    def expect(self, img, opts, status, *says, what):
        """fsck.vsmfs OPTS IMG must exit @status and print each of @says."""
        res = run(FSCK, *opts, img)
        out = res.stdout + res.stderr
        self.check(res.returncode == status,
                   f"{what}: fsck.vsmfs {' '.join(opts)}: exit {res.returncode}, "
                   f"expected {status}\n{out}")
        for s in says:
            self.check(s in out, f"{what}: fsck.vsmfs {' '.join(opts)}: output lacks {s!r}\n{out}")
        return out


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def layout(img):
    res = run(POKE, img, "layout")
    if res.returncode:
        raise SystemExit(f"fspoke layout: {res.stderr.strip()}")
    return {k: int(v) for k, v in (line.split("=") for line in res.stdout.split())}


def name_hash(name):
    h = 2166136261
    for c in name:
        h = ((h ^ c) * 16777619) & 0xffffffff
    return h


def dir_block(entries):
    """A directory block holding (name, ino, type) entries; a free one if none."""
    if not entries:
        return struct.pack("<QHBBI", 0, BS, 0, 0, 0) + bytes(BS - 16)
    b = bytearray()
    for i, (name, ino, dtype) in enumerate(entries):
        n = name.encode()
        rec = (16 + len(n) + 7) // 8 * 8
        if i == len(entries) - 1:
            rec = BS - len(b)
        b += struct.pack("<QHBBI", ino, rec, len(n), dtype, name_hash(n)) + n
        b += bytes(rec - 16 - len(n))
    return bytes(b)


CRC32C_TABLE = []


def crc32c(data, crc=0xFFFFFFFF):
    """CRC-32C as the kernel's crc32c() computes it: no final inversion."""
    if not CRC32C_TABLE:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            CRC32C_TABLE.append(c)
    for b in data:
        crc = CRC32C_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


FC_KEY_BITMAP, FC_KEY_IBITMAP, FC_KEY_DIR, FC_KEY_SPAN = 8 << 60, 9 << 60, 10 << 60, 11 << 60
FC_KEY_BCLEAR, FC_KEY_GONE = 12 << 60, 13 << 60
FC_SPAN_MAX = 64


def fc_record(count, slot, seq, words=None, ptes=(), pad=0):
    """A fast-commit record (struct vsmfs_dfc_rec) of commit @count: the new
    values of words of inode table slot @slot ({index: value}) and its
    entries @ptes: page table entries (lpn, entry), or the tuples of words
    fc_bitmap(), fc_bclear(), fc_ibitmap(), fc_dir() and fc_span() make (a directory's
    part, fc_dir() and its spans, last), its length rounded up to 64 bytes
    (and @pad more), its crc32c set."""
    words = words or {}
    mask = 0
    for w in words:
        mask |= 1 << w
    body = b"".join(struct.pack("<Q", words[w]) for w in sorted(words))
    body += b"".join(struct.pack("<Q", x) for e in ptes for x in e)
    length = (32 + len(body) + 63) // 64 * 64 + pad
    tail = struct.pack("<HHQQII", length, len(ptes), count, seq, slot, mask) + body
    tail += bytes(length - 4 - len(tail))
    return struct.pack("<I", crc32c(tail)) + tail


def fc_bitmap(word, bits):
    """A record's entry: @bits set in word @word of the logical page bitmap."""
    return (FC_KEY_BITMAP | word, bits)


def fc_bclear(word, bits):
    """A record's entry: @bits cleared in word @word of the logical page bitmap."""
    return (FC_KEY_BCLEAR | word, bits)


def fc_ibitmap(word, bits):
    """A record's entry: @bits set in word @word of the inode bitmap."""
    return (FC_KEY_IBITMAP | word, bits)


def fc_dir(slot, order, words):
    """A record's directory part: directory slot @slot, its order @order,
    the new values of words of its slot ({index: value})."""
    mask = sum(1 << w for w in words)
    return (FC_KEY_DIR | slot, order, mask) + tuple(words[w] for w in sorted(words))


def fc_gone(slot, order, words):
    """A record's unlinked inode's part: slot @slot, its order @order, the
    words of its slot as the unlink left them ({index: value})."""
    mask = sum(1 << w for w in words)
    return (FC_KEY_GONE | slot, order, mask) + tuple(words[w] for w in sorted(words))


def fc_span(block, word, values):
    """A record's entry: the words @values stored from word @word of device
    block @block (a directory block)."""
    n = len(values)
    return (FC_KEY_SPAN | (n - 1) << 48 | block << 9 | word,) + tuple(values)


def fc_spans(block, old, new):
    """The spans that make the bytes @old of device block @block into
    @new: one per run of changed 8-byte words (at most FC_SPAN_MAX words,
    inside the block)."""
    ow = struct.unpack(f"<{BS // 8}Q", old)
    nw = struct.unpack(f"<{BS // 8}Q", new)
    spans, w = [], 0
    while w < BS // 8:
        if ow[w] == nw[w]:
            w += 1
            continue
        end = w
        while end < BS // 8 and end - w < FC_SPAN_MAX and ow[end] != nw[end]:
            end += 1
        spans.append(fc_span(block, w, nw[w:end]))
        w = end
    return spans


def dinode(mode, nlink, size, pages, direct=(), ind=0, xattr=0):
    d = struct.pack("<HHIIIIIQQ", mode, 0, nlink, 0, 0, 0, 0, size, pages)
    d += bytes(48) + struct.pack("<IIQ", 0, 0, xattr)
    d += b"".join(struct.pack("<Q", e) for e in list(direct) + [0] * (8 - len(direct)))
    d += struct.pack("<QQQ", ind, 0, 0) + bytes(64)
    assert len(d) == 256
    return d


class Image:
    """An image file: bytes put and got, inode slots, page table entries."""

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

    def frame_of(self, lpn):
        return struct.unpack("<Q", self.get(self.L["ptable_start"] * BS + lpn * 8, 8))[0]

    def bits(self, start, lo, hi, value=1):
        """Bits [@lo, @hi) of the bitmap at block @start, set or cleared."""
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

    def fc_put(self, area, off, data):
        """Write @data at byte @off of fast-commit area @area."""
        start = self.L["fc_start"] + area * self.L["fc_area_blocks"]
        self.put(start * BS + off, data)

    def frame(self, frame, data=None):
        """The block of data frame @frame, or write @data there."""
        if data is None:
            return self.get((self.L["data_start"] + frame) * BS, BS)
        self.put((self.L["data_start"] + frame) * BS, data)
        return None
