# SPDX-License-Identifier: GPL-2.0
"""Guest side of the hostile-image fuzzer (tests/suites/crash/fuzz drives it).

  imgfuzz.py build SEEDIMG
        mkfs the test device, populate it so that every on-media structure
        is in use (directories of one and many blocks, direct, single and
        double indirect indexes, fast and long symlinks, extended
        attributes, special files, a logged journal transaction), unmount,
        and save the image to SEEDIMG (O_DIRECT reads).
  imgfuzz.py run SEEDIMG SEED FIRST COUNT
        for mutant FIRST .. FIRST+COUNT-1 of SEED: restore the seed image on
        the device, apply the mutant (a few byte patches chosen from SEED and
        the mutant number only; some are fast-commit records whose checksum
        holds, which mount replays), mount it and exercise it in a child process
        (walk, stat, read, readlink, xattrs, create, write, mkdir, rename,
        unlink, rmdir, truncate, statfs, unmount).
  imgfuzz.py corpus SEEDIMG FILE...
        the same for reproducer files (the patch lists the fuzzer printed).

Console protocol, read by the host driver:
  FUZZ-MUT <id> <patches>        the mutant about to be tried
  FUZZ-END <id> <outcome>        refused:<errno> or mounted:<ops ok>/<ops failed>
  FUZZ-HANG <id>                 the exercise did not end in time
  FUZZ-DONE                      every mutant asked for was tried
A patch is OFFSET:HEX, and "csum" recomputes the superblock checksums
after the patches. The mutant is written to the device in place, never to
a second copy.
"""

import ctypes
import errno
import mmap
import os
import random
import signal
import stat
import struct
import subprocess
import sys
import time
import zlib

BS = 4096
DEV = os.environ.get("VSMFS_PMEM0", "/dev/pmem0")
MNT = "/mnt/vsmfs"
TOP = os.environ.get("VSMFS_TOP", os.getcwd())
EXERCISE_TIMEOUT = float(os.environ.get("FUZZ_EXERCISE_TIMEOUT", "60"))
UUID = "5eed5eed-0000-4000-8000-00000000f022"

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                       ctypes.c_ulong, ctypes.c_void_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
MNT_DETACH = 2


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


# ---- device I/O with O_DIRECT (the module writes through DAX) ----

def dev_size():
    fd = os.open(DEV, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def read_device(nbytes):
    buf = mmap.mmap(-1, nbytes)
    fd = os.open(DEV, os.O_RDONLY | os.O_DIRECT)
    try:
        done = 0
        while done < nbytes:
            n = os.preadv(fd, [memoryview(buf)[done:min(nbytes, done + (8 << 20))]], done)
            if n <= 0:
                raise OSError("short read of the device")
            done += n
    finally:
        os.close(fd)
    return buf


def write_device(buf, ranges):
    """Write [off, off+len) ranges of buf (block aligned) to the device."""
    fd = os.open(DEV, os.O_WRONLY | os.O_DIRECT)
    try:
        view = memoryview(buf)
        for off, length in ranges:
            done = 0
            while done < length:
                n = min(length - done, 8 << 20)
                os.pwritev(fd, [view[off + done:off + done + n]], off + done)
                done += n
        os.fsync(fd)
    finally:
        os.close(fd)


# ---- on-media format (fs/vsmfs/vsmfs_format.h) ----

SB_FIELDS = [  # name, offset, size
    ("magic", 0, 4), ("version", 4, 4), ("feature_compat", 8, 4),
    ("feature_incompat", 12, 4), ("feature_ro_compat", 16, 4),
    ("block_size", 20, 4), ("vsp_pages", 24, 4), ("inode_size", 28, 4),
    ("blocks", 32, 8), ("journal_start", 40, 8), ("journal_blocks", 48, 8),
    ("itable_start", 56, 8), ("itable_blocks", 64, 8), ("imap_start", 72, 8),
    ("imap_blocks", 80, 8), ("ptable_start", 88, 8), ("ptable_blocks", 96, 8),
    ("lbitmap_start", 104, 8), ("lbitmap_blocks", 112, 8),
    ("ibitmap_start", 120, 8), ("ibitmap_blocks", 128, 8),
    ("data_start", 136, 8), ("data_pages", 144, 8), ("inodes", 152, 8),
    ("root_ino", 160, 8), ("mount_time", 176, 8), ("state", 204, 4),
]

INODE_FIELDS = [
    ("mode", 0, 2), ("nlink", 4, 4), ("uid", 8, 4), ("flags", 16, 4),
    ("size", 24, 8), ("pages", 32, 8), ("rdev", 88, 4), ("xattr", 96, 8),
] + [(f"direct{i}", 104 + 8 * i, 8) for i in range(8)] + [
    ("ind", 168, 8), ("dind", 176, 8),
]

CRC32C_TABLE = []


def crc32c(data):
    if not CRC32C_TABLE:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            CRC32C_TABLE.append(c)
    crc = 0xFFFFFFFF
    tab = CRC32C_TABLE
    for b in data:
        crc = tab[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def u(buf, off, size):
    return int.from_bytes(buf[off:off + size], "little")


def jcount_exact(sequence, state):
    """vsmfs_jcount_exact(): the last durable commit's number."""
    bits = (state >> 25 & 0x7f) | (state >> 57 & 0x7f) << 7
    return sequence + 1 if (sequence + 1) & 0x3fff == bits else sequence


FC_KEY_BITMAP, FC_KEY_IBITMAP, FC_KEY_DIR, FC_KEY_SPAN = 8 << 60, 9 << 60, 10 << 60, 11 << 60
FC_KEY_BCLEAR = 12 << 60


def fc_record(count, slot, seq, words, ptes, length=None, npte=None):
    """A fast-commit record (struct vsmfs_dfc_rec) whose crc32c holds: the
    words of @slot ({index: value}) and the entries @ptes, each a tuple of
    its words: (lpn, entry) pairs, or those fc_ibitmap(), fc_dir() and
    fc_span() make; padded to a multiple of 64 bytes; r_len and r_npte
    say so unless given (a length given is out of range: the checksum
    covers the record's bytes)."""
    mask = sum(1 << w for w in words)
    body = b"".join(struct.pack("<Q", words[w] & (1 << 64) - 1) for w in sorted(words))
    body += b"".join(struct.pack("<Q", x & (1 << 64) - 1) for e in ptes for x in e)
    size = (32 + len(body) + 63) // 64 * 64
    tail = struct.pack("<HHQQII", (size if length is None else length) & 0xffff,
                       (len(ptes) if npte is None else npte) & 0xffff,
                       count & (1 << 64) - 1, seq, slot & 0xffffffff, mask) + body
    tail += bytes(size - 4 - len(tail))
    crc = crc32c(tail) ^ 0xFFFFFFFF     # the kernel's crc32c(~0, ...): no final inversion
    return struct.pack("<I", crc) + tail


def fc_ibitmap(word, bits):
    """Entry: @bits set in word @word of the inode bitmap."""
    return (FC_KEY_IBITMAP | word & (1 << 60) - 1, bits)


def fc_dir(slot, order, words):
    """Entry: a directory's part, slot @slot (past 32 bits: refused), its
    order, the words of its slot ({index: value})."""
    return (FC_KEY_DIR | slot & (1 << 60) - 1, order, sum(1 << w for w in words)) + \
        tuple(words[w] for w in sorted(words))


def fc_span(block, word, values, n=None):
    """Entry: words @values stored from word @word of device block @block;
    the count @n (1 to 256) says len(@values) unless given."""
    n = len(values) if n is None else n
    return (FC_KEY_SPAN | (n - 1 & 0xff) << 48 | (block << 9 | word) & (1 << 48) - 1,) + \
        tuple(values)


class Image:
    """Where each structure of the seed image lies, by walking it."""

    def __init__(self, buf):
        self.buf = buf
        sb = buf[0:512]
        self.sb = {name: u(sb, off, size) for name, off, size in SB_FIELDS}
        s = self.sb
        self.data_start = s["data_start"]
        self.data_pages = s["data_pages"]
        self.inodes = s["inodes"]
        self.regions = {}   # kind -> list of (offset, length, label)
        self.ino_slot = {}
        self.dir_slots = []
        self.lpns_used = []
        self.values = set([0, 1, 2, 3, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0xffffffff,
                           0xffffffffffffffff, 0x8000000000000000, BS, BS - 1, BS + 1,
                           s["blocks"], s["blocks"] - 1, s["inodes"], s["inodes"] - 1,
                           s["data_pages"], s["data_pages"] - 1, 512, 511, 513,
                           1 << 40, (1 << 40) - 1, 1 << 48, (512 << 48) | 1, (513 << 48) | 1])
        self.add("sb", 0, 512, "superblock")
        # sb_last (feature_incompat bit 0): the backup is the last block.
        backup = s["blocks"] - 1 if s["feature_incompat"] & 1 else 1
        self.add("sb", backup * BS, 512, "backup superblock")
        js = s["journal_start"] * BS
        self.add("journal", js, 48, "journal superblock")
        self.add("journal", js + BS, BS, "journal descriptor")
        self.add("journal", js + 2 * BS, 4 * BS, "journal log blocks")
        # Fast-commit areas (feature_incompat bit 2): the last blocks of the
        # journal region; records are made whole there (fc_patches()).
        self.fc_areas, self.fc_area_blocks = u(buf, js + 40, 4), u(buf, js + 44, 4)
        fc_blocks = self.fc_areas * self.fc_area_blocks
        self.fc_start = s["journal_start"] + s["journal_blocks"] - fc_blocks
        if s["feature_incompat"] & 4 and fc_blocks and fc_blocks <= s["journal_blocks"] // 4:
            self.fc_count = jcount_exact(u(buf, js + 32, 8), u(buf, js + 8, 8))
            self.add("fcrec", self.fc_start * BS, fc_blocks * BS, "fast-commit areas")
        self.add("ibitmap", s["ibitmap_start"] * BS, s["ibitmap_blocks"] * BS, "inode bitmap")
        self.add("lbitmap", s["lbitmap_start"] * BS, s["lbitmap_blocks"] * BS, "page bitmap")
        used = [i for i in range(1, self.inodes) if self.bit(s["ibitmap_start"], i)]
        for ino in used:
            self.values.add(ino)
            slot = u(buf, s["imap_start"] * BS + 4 * ino, 4)
            if not slot or slot >= self.inodes:
                continue
            self.ino_slot[ino] = slot
            self.add("imap", s["imap_start"] * BS + 4 * ino, 4, f"imap[{ino}]")
            self.add("inode", self.inode_off(ino), 256, f"inode {ino}")
            self.walk_inode(ino)
        pt = s["ptable_start"] * BS
        lpns = sorted(set(self.lpns_used))
        for lpn in lpns[:2000]:
            self.add("ptable", pt + 8 * lpn, 8, f"pte[{lpn}]")
            self.values.add(lpn)

    def bit(self, start_blk, n):
        return self.buf[start_blk * BS + n // 8] >> (n % 8) & 1

    def add(self, kind, off, length, label):
        self.regions.setdefault(kind, []).append((off, length, label))

    def inode_off(self, ino):
        slot = self.ino_slot[ino]
        return self.sb["itable_start"] * BS + slot * 256

    def lpn_off(self, lpn):
        if not lpn or lpn >= self.data_pages:
            return None
        frame = u(self.buf, self.sb["ptable_start"] * BS + 8 * lpn, 8) & ((1 << 40) - 1)
        if frame >= self.data_pages:
            return None
        return (self.data_start + frame) * BS

    def walk_inode(self, ino):
        off = self.inode_off(ino)
        di = self.buf[off:off + 256]
        mode = u(di, 0, 2)
        size = u(di, 24, 8)
        xattr = u(di, 96, 8)
        if xattr:
            self.lpns_used.append(xattr)
            o = self.lpn_off(xattr)
            if o is not None:
                self.add("xattr", o, BS, f"xattr block of inode {ino}")
        if stat.S_ISLNK(mode) and size <= 80:
            return
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            return
        kind = "dirblk" if stat.S_ISDIR(mode) else "symblk" if stat.S_ISLNK(mode) else "data"
        if kind == "dirblk":
            self.dir_slots.append(self.ino_slot[ino])
        entries = [u(di, 104 + 8 * i, 8) for i in range(8)]
        ind, dind = u(di, 168, 8), u(di, 176, 8)
        for lpn, depth in ((ind, 1), (dind, 2)):
            entries += self.walk_tree(ino, lpn & ((1 << 40) - 1), depth)
        for e in entries:
            lpn, count = e & ((1 << 40) - 1), e >> 48
            if not lpn:
                continue
            self.values.add(e)
            for i in range(max(1, count) if kind == "data" else 1):
                self.lpns_used.append(lpn + i)
            if kind != "data" or len(self.regions.get("data", [])) < 40:
                o = self.lpn_off(lpn)
                if o is not None:
                    self.add(kind, o, BS, f"{kind} of inode {ino}")

    def walk_tree(self, ino, lpn, depth):
        if not lpn:
            return []
        self.lpns_used.append(lpn)
        o = self.lpn_off(lpn)
        if o is None:
            return []
        self.add("index", o, BS, f"index block (depth {depth}) of inode {ino}")
        ents = [u(self.buf, o + 8 * i, 8) for i in range(512)]
        if depth == 1:
            return [e for e in ents if e]
        out = []
        for e in ents:
            if e:
                out += self.walk_tree(ino, e & ((1 << 40) - 1), 1)
        return out


# ---- mutations ----

KIND_WEIGHTS = [("sb", 10), ("journal", 8), ("inode", 20), ("imap", 4), ("dirblk", 16),
                ("index", 10), ("ptable", 8), ("lbitmap", 5), ("ibitmap", 5), ("xattr", 8),
                ("symblk", 3), ("replay", 6), ("fcrec", 6)]


def pick_value(rnd, img, size):
    v = rnd.choice(sorted(img.values)) if rnd.random() < 0.7 else rnd.getrandbits(8 * size)
    if rnd.random() < 0.2:
        v += rnd.choice([-1, 1])
    return v & ((1 << (8 * size)) - 1)


def field_patch(rnd, img, base, fields):
    name, off, size = rnd.choice(fields)
    return name, (base + off, pick_value(rnd, img, size).to_bytes(size, "little"))


def byte_patch(rnd, img, off, length):
    """Bit flip, random byte, or an interesting value in an aligned field."""
    r = rnd.random()
    if r < 0.35:
        at = off + rnd.randrange(length)
        return "flip", (at, bytes([img.buf[at] ^ (1 << rnd.randrange(8))]))
    if r < 0.55:
        at = off + rnd.randrange(length)
        return "byte", (at, bytes([rnd.getrandbits(8)]))
    size = rnd.choice([s for s in (2, 4, 8) if s <= length])
    at = off + rnd.randrange(length // size) * size
    return f"u{8 * size}", (at, pick_value(rnd, img, size).to_bytes(size, "little"))


def dirent_patch(rnd, img, off):
    """A field of a directory entry of a directory block."""
    ents, pos = [], 0
    while pos < BS:
        rec = u(img.buf, off + pos + 8, 2)
        ents.append(pos)
        if rec < 16 or rec % 8 or pos + rec > BS:
            break
        pos += rec
    at = off + rnd.choice(ents)
    name, foff, size = rnd.choice([("d_ino", 0, 8), ("d_rec_len", 8, 2), ("d_name_len", 10, 1),
                                   ("d_type", 11, 1), ("d_hash", 12, 4), ("d_name", 16, 1)])
    if name == "d_name":
        return name, (at + 16 + rnd.randrange(4), bytes([rnd.choice([0, ord("/"), ord("."),
                                                                     rnd.getrandbits(8)])]))
    return name, (at + foff, pick_value(rnd, img, size).to_bytes(size, "little"))


def replay_patches(rnd, img):
    """Make the journal hold a committed transaction (the last one logged),
    with its descriptor or logged blocks damaged."""
    js = img.sb["journal_start"] * BS
    desc = js + BS
    count = u(img.buf, desc + 4, 4)
    seq = u(img.buf, desc + 8, 8)
    patches = []
    if rnd.random() < 0.3:
        count = rnd.choice([0, 1, count + 1, 510, 511, 0xffffffff])
    if rnd.random() < 0.2:
        seq = seq + 1
    commit = ((seq & 0xffffffff) << 32) | (count & 0xffffffff)
    patches.append((js + 8, commit.to_bytes(8, "little")))
    r = rnd.random()
    if r < 0.4 and count:
        i = rnd.randrange(min(count, 510))
        home = rnd.choice([0, 1, 2, img.sb["journal_start"], img.sb["journal_start"] + 1,
                           img.sb["blocks"], img.sb["blocks"] - 1, img.sb["itable_start"],
                           img.sb["imap_start"], img.sb["ptable_start"],
                           img.sb["lbitmap_start"], img.sb["ibitmap_start"],
                           img.data_start, rnd.getrandbits(64)])
        patches.append((desc + 16 + 8 * i, home.to_bytes(8, "little")))
    elif r < 0.8 and count:
        i = rnd.randrange(min(count, 4))
        _, p = byte_patch(rnd, img, js + 2 * BS + i * BS, BS)
        patches.append(p)
    return patches


def fc_dir_part(rnd, img):
    """A directory's part (a create's): a directory's slot (or one out of
    range), its order, words of its slot, and spans of directory blocks
    (or of blocks out of the data area), within their block or not."""
    slot = rnd.choice(img.dir_slots or [1]) if rnd.random() < 0.8 else \
        rnd.choice([0, img.inodes, 0xffffffff, 1 << 32])
    words = {w: pick_value(rnd, img, 8) for w in rnd.sample(range(32), rnd.choice([0, 1, 2, 4]))}
    part = [fc_dir(slot, rnd.choice([0, 1, 2, rnd.getrandbits(64)]), words)]
    blocks = [off // BS for off, _, _ in img.regions.get("dirblk", [])] or [img.data_start]
    for _ in range(rnd.choice([0, 1, 1, 2, 3])):
        blk = rnd.choice(blocks) if rnd.random() < 0.85 else \
            rnd.choice([img.data_start - 1, img.sb["blocks"], img.sb["blocks"] - 1, 0, 1 << 38])
        word = rnd.choice([0, 1, 2, 3, rnd.randrange(512), 510, 511])
        n = rnd.choice([1, 2, 3, 5, 8, 16])
        if rnd.random() < 0.9:
            n = max(1, min(n, 512 - word))
        values = [pick_value(rnd, img, 8) for _ in range(min(n, 64))]
        part.append(fc_span(blk, word, values, n if rnd.random() < 0.05 else None))
    return part


def fc_patches(rnd, img):
    """Records the next mount replays (their crc32c holds, of the commit
    after the last durable one) in one fast-commit area, with hostile
    contents: slots, logical pages, bitmap words and directory blocks in
    range or not, any words, any entries (page table entries, page bitmap
    bits set and cleared, inode bitmap bits, a create's directory part with its spans); now and
    then of another commit, with a length or an entry count out of range,
    entries out of order, or a byte changed after the checksum."""
    area = rnd.randrange(img.fc_areas)
    base = (img.fc_start + area * img.fc_area_blocks) * BS
    room = img.fc_area_blocks * BS
    slots = sorted(img.ino_slot.values()) or [1]
    lpns = sorted(set(img.lpns_used)) or [1]
    iwords = (img.inodes + 63) // 64
    off, patches = 0, []
    for seq in range(rnd.choice([1, 1, 2, 3, 8])):
        slot = rnd.choice(slots) if rnd.random() < 0.8 else \
            rnd.choice([0, img.inodes - 1, img.inodes, 0xffffffff])
        nw = rnd.choice([1, 1, 2, 4, 32])
        words = {w: pick_value(rnd, img, 8) for w in rnd.sample(range(32), nw)}
        ptes = [(rnd.choice(lpns) if rnd.random() < 0.8 else
                 rnd.choice([0, img.data_pages, 1 << 40, (1 << 64) - 1]),
                 pick_value(rnd, img, 8)) for _ in range(rnd.choice([0, 0, 1, 2, 16, 32]))]
        for key in (FC_KEY_BITMAP, FC_KEY_BCLEAR):
            if rnd.random() < 0.3:
                ptes.append((key | rnd.choice([0, 1, img.data_pages // 64,
                                               rnd.getrandbits(20)]),
                             pick_value(rnd, img, 8)))
        if rnd.random() < 0.4:
            ptes.append(fc_ibitmap(rnd.choice([0, rnd.randrange(iwords), iwords - 1, iwords,
                                               1 << 40]), pick_value(rnd, img, 8)))
        if rnd.random() < 0.4:
            ptes += fc_dir_part(rnd, img)
        count = img.fc_count + 1
        length = npte = None
        r = rnd.random()
        if r < 0.05:
            count = rnd.choice([img.fc_count, img.fc_count + 2])
        elif r < 0.1:
            length = rnd.choice([0, 63, 96, room + 64, 1088, 0xffc0])
        elif r < 0.15:
            npte = rnd.choice([33, 41, 0xffff, len(ptes) + 1])
        elif r < 0.2 and ptes:
            # Out of order: a span or a directory part first, or an unknown kind.
            ptes.insert(0, rnd.choice([fc_span(img.data_start, 0, [0]), fc_dir(1, 0, {}),
                                       (rnd.choice([1, 7, 12, 15]) << 60, 0)]))
        rec = bytearray(fc_record(count, slot, seq, words, ptes, length, npte))
        if rnd.random() < 0.05:
            rec[rnd.randrange(4, len(rec))] ^= 1 << rnd.randrange(8)
        if off + len(rec) > room:
            break
        patches.append((base + off, bytes(rec)))
        off += (len(rec) + 63) // 64 * 64
    return patches


def make_mutant(img, seed, idx):
    rnd = random.Random(f"{seed}:{idx}")
    kinds = [k for k, w in KIND_WEIGHTS for _ in range(w) if k == "replay" or img.regions.get(k)]
    patches, csum = [], False
    for _ in range(rnd.choice([1, 1, 1, 2, 3])):
        kind = rnd.choice(kinds)
        if kind == "replay":
            patches += replay_patches(rnd, img)
            continue
        if kind == "fcrec":
            patches += fc_patches(rnd, img)
            continue
        off, length, _ = rnd.choice(img.regions[kind])
        if kind == "sb":
            _, p = field_patch(rnd, img, off, SB_FIELDS) if rnd.random() < 0.8 \
                else byte_patch(rnd, img, off, 508)
            csum = csum or rnd.random() < 0.85
        elif kind == "inode" and rnd.random() < 0.75:
            _, p = field_patch(rnd, img, off, INODE_FIELDS)
        elif kind == "dirblk" and rnd.random() < 0.75:
            _, p = dirent_patch(rnd, img, off)
        elif kind == "xattr" and rnd.random() < 0.5:
            _, p = field_patch(rnd, img, off, [("x_magic", 0, 4), ("x_count", 4, 2),
                                               ("x_used", 6, 2), ("x_ino", 8, 8),
                                               ("e_name_index", 32, 1), ("e_name_len", 33, 1),
                                               ("e_value_len", 34, 2)])
        else:
            _, p = byte_patch(rnd, img, off, length)
        patches.append(p)
    return patches, csum


def format_mutant(patches, csum):
    return " ".join(f"{off}:{data.hex()}" for off, data in patches) + (" csum" if csum else "")


def parse_mutant(text):
    patches, csum = [], False
    for word in text.split():
        if word == "csum":
            csum = True
        else:
            off, _, hexdata = word.partition(":")
            patches.append((int(off), bytes.fromhex(hexdata)))
    return patches, csum


def apply_mutant(seed_buf, work, patches, csum):
    """The seed image with the patches applied, in work."""
    work[:] = seed_buf
    for off, data in patches:
        if 0 <= off and off + len(data) <= len(work):
            work[off:off + len(data)] = data
    if csum:
        # Block 1, and the last block (the backup with sb_last).
        for blk in (0, 1, len(work) // BS - 1):
            o = blk * BS
            work[o + 508:o + 512] = struct.pack("<I", crc32c(bytes(work[o:o + 508])))


# ---- exercising a mounted mutant (in a child process) ----

class Ops:
    def __init__(self):
        self.ok = 0
        self.failed = 0

    def __call__(self, fn, *args, **kwargs):
        try:
            r = fn(*args, **kwargs)
            self.ok += 1
            return r
        except OSError:
            self.failed += 1
            return None


def exercise(mnt):
    ops = Ops()
    files, dirs, links = [], [mnt], []
    todo = [mnt]
    seen = 0
    while todo and seen < 4000:
        d = todo.pop()
        names = ops(os.listdir, d) or []
        for name in names[:1500]:
            seen += 1
            p = os.path.join(d, name)
            st = ops(os.lstat, p)
            if st is None:
                continue
            if stat.S_ISDIR(st.st_mode):
                if len(dirs) < 300 and p.count("/") < 40:
                    dirs.append(p)
                    todo.append(p)
            elif stat.S_ISREG(st.st_mode):
                files.append((p, st.st_size))
            elif stat.S_ISLNK(st.st_mode):
                links.append(p)
            ops(os.listxattr, p, follow_symlinks=False)
    for p in links[:50]:
        ops(os.readlink, p)
        ops(os.stat, p)
    for p, size in files[:200]:
        fd = ops(os.open, p, os.O_RDONLY)
        if fd is None:
            continue
        ops(os.read, fd, 1 << 20)
        for off in (size - 5000, size // 2, 20 << 20, 1100 << 20):
            if 0 <= off:
                ops(os.pread, fd, 8192, off)
        ops(os.lseek, fd, 0, 3)    # SEEK_DATA
        ops(os.lseek, fd, 0, 4)    # SEEK_HOLE
        for name in (ops(os.listxattr, fd) or [])[:8]:
            ops(os.getxattr, fd, name)
        ops(os.close, fd)
    # Changes: a new file, appends and overwrites, directories, renames,
    # links, unlinks, truncation.
    for i, d in enumerate(dirs[:6]):
        p = os.path.join(d, f"fuzz-new{i}")
        fd = ops(os.open, p, os.O_RDWR | os.O_CREAT, 0o644)
        if fd is not None:
            ops(os.write, fd, b"x" * 70000)
            ops(os.pwrite, fd, b"y" * 5000, 3 << 20)
            ops(os.fsync, fd)
            ops(os.close, fd)
        ops(os.mkdir, os.path.join(d, f"fuzz-dir{i}"))
        ops(os.symlink, "t" * 200, os.path.join(d, f"fuzz-sym{i}"))
        ops(os.setxattr, p, "user.fuzz", b"v" * 300)
        ops(os.rename, p, os.path.join(d, f"fuzz-moved{i}"))
    for p, size in files[:12]:
        fd = ops(os.open, p, os.O_WRONLY)
        if fd is not None:
            ops(os.pwrite, fd, b"z" * 6000, max(0, min(size, 1 << 30) - 100))
            ops(os.write, fd, b"w" * 100)
            ops(os.close, fd)
        ops(os.truncate, p, size // 3)
        ops(os.link, p, p + ".fuzzlink")
        ops(os.setxattr, p, "user.fuzz2", b"q")
    for p, _ in files[12:30]:
        ops(os.unlink, p)
    for d in reversed(dirs[1:20]):
        ops(os.rmdir, d)
    ops(os.statvfs, mnt)
    ops(os.sync)
    return ops


def child(mnt):
    if libc.mount(DEV.encode(), mnt.encode(), b"vsmfs", 0, None):
        e = ctypes.get_errno()
        log(f"refused:{errno.errorcode.get(e, e)}")
        os._exit(0)
    ops = exercise(mnt)
    os.chdir("/")
    if libc.umount2(mnt.encode(), 0):
        e = ctypes.get_errno()
        log(f"umount-failed:{errno.errorcode.get(e, e)}")
        os._exit(3)
    log(f"mounted:{ops.ok}/{ops.failed}")
    os._exit(0)


def try_image(tag):
    """Mount and exercise the device in a child; return the outcome or None on a hang."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        try:
            child(MNT)
        except BaseException as e:  # reported as the outcome
            print(f"exception:{type(e).__name__}:{e}", flush=True)
        os._exit(4)
    os.close(w)
    deadline = time.monotonic() + EXERCISE_TIMEOUT
    status = None
    while time.monotonic() < deadline:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got:
            break
        time.sleep(0.02)
    else:
        os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            got, status = os.waitpid(pid, os.WNOHANG)
            if got:
                break
            time.sleep(0.1)
        else:
            os.close(r)
            return None
        out = os.read(r, 4096).decode(errors="replace").strip()
        os.close(r)
        libc.umount2(MNT.encode(), MNT_DETACH)
        return f"killed-after-{EXERCISE_TIMEOUT:.0f}s {out}".strip()
    out = os.read(r, 4096).decode(errors="replace").strip()
    os.close(r)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return out
    libc.umount2(MNT.encode(), MNT_DETACH)
    return f"error(status {status}) {out}"


def load_seed(path):
    size = os.path.getsize(path)
    buf = mmap.mmap(-1, size)
    with open(path, "rb") as f:
        f.readinto(buf)
    return buf


def run_mutants(seed_path, mutants):
    """mutants: iterable of (id, patches, csum)."""
    seed_buf = load_seed(seed_path)
    work = mmap.mmap(-1, len(seed_buf))
    for tag, patches, csum in mutants:
        log(f"FUZZ-MUT {tag} {format_mutant(patches, csum)}")
        t0 = time.monotonic()
        apply_mutant(seed_buf, work, patches, csum)
        # The whole image goes back: the previous mutant's exercise may
        # have written anywhere.
        write_device(work, [(0, len(work))])
        t1 = time.monotonic()
        out = try_image(tag)
        if out is None:
            log(f"FUZZ-HANG {tag}")
            return 1
        log(f"FUZZ-END {tag} {out} ({t1 - t0:.2f}s + {time.monotonic() - t1:.2f}s)")
    log("FUZZ-DONE")
    return 0


# ---- the seed image ----

def populate(mnt):
    """Every structure in use, deterministically (same layout every time)."""
    rnd = random.Random(8)
    os.chdir(mnt)

    def wr(path, data, off=0):
        with open(path, "r+b" if os.path.exists(path) else "wb") as f:
            f.seek(off)
            f.write(data)

    os.makedirs("d1/d2/d3/d4")
    wr("d1/small", b"hello\n")
    wr("d1/d2/page", rnd.randbytes(4096))
    wr("d1/d2/d3/page1", rnd.randbytes(4097))
    wr("medium", rnd.randbytes(300 * 1024))         # a large-file run
    wr("twopieces", rnd.randbytes(2 * 1048576 + 8192))
    wr("ind", b"single indirect", 20 << 20)         # key 10
    wr("dind", b"double indirect", 1100 << 20)      # key 550
    wr("dind", b"head")
    os.mkdir("big")
    wr("big/target", rnd.randbytes(100))
    for i in range(700):                            # > 8 directory blocks
        os.link("big/target", f"big/link-with-a-longish-name-{i:04d}")
    for i in range(0, 700, 7):
        os.unlink(f"big/link-with-a-longish-name-{i:04d}")
    os.symlink("d1/small", "fast")
    os.symlink("/".join(["component"] * 30), "d1/long")
    os.mkfifo("fifo")
    os.mknod("cdev", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    for i in range(20):
        os.setxattr("d1/small", f"user.attr{i}", rnd.randbytes(i * 7))
    os.setxattr("d1", "user.dir", b"on a directory")
    os.setxattr("fast", "trusted.t", b"on a symlink")
    # A POSIX ACL (version 2, user_obj rw, group_obj r, other r, as the VFS encodes it).
    acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, 0xffffffff)
                                          for tag, perm in ((1, 6), (4, 4), (32, 4)))
    try:
        os.setxattr("medium", "system.posix_acl_access", acl)
    except OSError:
        pass
    os.rename("d1/d2/d3/page1", "d1/moved")
    os.truncate("twopieces", 2 * 1048576 + 100)
    os.chdir("/")


def build(seed_path):
    subprocess.run([os.path.join(TOP, "tools", "mkfs.vsmfs"), "-q", "-f", "-U", UUID, DEV],
                   check=True)
    os.makedirs(MNT, exist_ok=True)
    subprocess.run(["mount", "-t", "vsmfs", DEV, MNT], check=True)
    populate(MNT)
    subprocess.run(["umount", MNT], check=True)
    buf = read_device(dev_size())
    os.makedirs(os.path.dirname(seed_path), exist_ok=True)
    tmp = seed_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(buf)
    os.replace(tmp, seed_path)
    img = Image(buf)
    log("seed image: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(img.regions.items())))


def main():
    os.makedirs(MNT, exist_ok=True)
    sys.argv[2:] = [os.path.abspath(a) if os.path.exists(a) or a.endswith(".img") else a
                    for a in sys.argv[2:]]
    cmd = sys.argv[1]
    if cmd == "build":
        build(sys.argv[2])
        return 0
    if cmd == "run":
        seed_path, seed, first, count = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
            int(sys.argv[5])
        img = Image(load_seed(seed_path))
        return run_mutants(seed_path, ((f"{seed}/{i}", *make_mutant(img, seed, i))
                                       for i in range(first, first + count)))
    if cmd == "corpus":
        seed_path = sys.argv[2]
        items = []
        for path in sys.argv[3:]:
            with open(path) as f:
                text = " ".join(line.split("#", 1)[0] for line in f)
            items.append((os.path.basename(path), *parse_mutant(text)))
        return run_mutants(seed_path, items)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
