#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of tools/vsmfs-inspect on image files made by tools/mkfs.vsmfs.

Fresh images of several sizes, journal sizes and inode counts must show the
layout "mkfs.vsmfs -n" prints, the usage fsck.vsmfs reports, an empty
journal and only free virtual superpages. An image whose bitmaps, page
table, journal and inode table are edited here must show the counts the
edits imply, including a bitmap block read through the journal. A file that
is not a vsmfs file system must give exit status 8 and a message.
"""

import json
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
BS = 4096
VSP = 512
JH_PER_BLOCK = BS // 16

REGIONS = {  # mkfs.vsmfs -n row name -> vsmfs-inspect --json layout key
    "superblock": "superblock",
    "backup superblock": "backup_superblock",
    "journal": "journal",
    "inode table": "inode_table",
    "inode mapping table": "inode_map",
    "inode bitmap": "inode_bitmap",
    "page table": "page_table",
    "logical page bitmap": "page_bitmap",
    "data": "data",
}

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"inspect-test: FAIL: {what}")


def eq(got, want, what):
    check(got == want, f"{what}: got {got!r}, expected {want!r}")


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def inspect_json(img, *opts):
    res = run(INSPECT, "--json", *opts, img)
    if res.returncode != 0:
        raise SystemExit(f"inspect-test: vsmfs-inspect {' '.join(opts)} {img} failed:"
                         f" {res.stderr.strip()}")
    return json.loads(res.stdout)


def journal_geometry(blocks):
    avail = blocks - 2
    n = avail * JH_PER_BLOCK // (JH_PER_BLOCK + 1)
    while n + (n + JH_PER_BLOCK - 1) // JH_PER_BLOCK > avail:
        n -= 1
    return n, (n + JH_PER_BLOCK - 1) // JH_PER_BLOCK


def mkfs_layout(img, opts):
    """Create the file system and return the table "mkfs.vsmfs -n" prints."""
    res = run(MKFS, "-n", *opts, img)
    eq(res.returncode, 0, f"mkfs.vsmfs -n {opts}")
    rows, inodes, vsps = {}, None, None
    table = res.stdout.splitlines()[2:]
    for line in res.stdout.splitlines():
        m = re.match(r"\s+([a-z ]+?)\s+(\d+)\s+(\d+)(?:\s+\((\d+) (inodes|virtual))?", line)
        if not m or m.group(1) not in REGIONS:
            continue
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        if m.group(5) == "inodes":
            inodes = int(m.group(4))
        elif m.group(5) == "virtual":
            vsps = int(m.group(4))
    eq(len(rows), len(REGIONS), f"regions printed by mkfs.vsmfs -n {opts}")
    res = run(MKFS, "-q", "-f", *opts, img)
    eq(res.returncode, 0, f"mkfs.vsmfs {opts}: {res.stderr.strip()}")
    return rows, inodes, vsps, table


def test_fresh(tmp, size, opts):
    img = os.path.join(tmp, "fresh.img")
    with open(img, "wb") as f:
        f.truncate(size)
    rows, inodes, vsps, table = mkfs_layout(img, opts)
    what = f"{size >> 20} MiB {' '.join(opts) or 'defaults'}"
    r = inspect_json(img)

    for name, key in REGIONS.items():
        got = r["layout"][key]
        eq((got["start"], got["blocks"]), rows[name], f"{what}: region {name}")
    sb = r["superblock"]
    eq(sb["inodes"], inodes, f"{what}: inode slots")
    eq(sb["vsps"], vsps, f"{what}: virtual superpages")
    eq(sb["blocks"], size // BS, f"{what}: blocks")
    eq(sb["state"], "clean", f"{what}: state")
    eq(sb["mount_count"], 0, f"{what}: mount count")
    eq(sb["label"], "inspect", f"{what}: label")
    eq(sb["uuid"], "0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9", f"{what}: uuid")

    # A fresh file system: every data page free (page 0 is reserved, the
    # empty root directory owns none), every inode free but the root.
    data_pages = rows["data"][1]
    u = r["usage"]
    eq((u["pages"], u["pages_used"], u["pages_free"]), (data_pages - 1, 0, data_pages - 1),
       f"{what}: data pages")
    eq((u["inodes"], u["inodes_used"], u["inodes_free"]), (inodes - 1, 1, inodes - 2),
       f"{what}: inodes")
    fsck = run(FSCK, "-n", img)
    eq(fsck.returncode, 0, f"{what}: fsck.vsmfs -n")
    m = re.search(r"(\d+)/(\d+) inodes, (\d+)/(\d+) logical pages", fsck.stdout)
    check(m is not None, f"{what}: fsck.vsmfs summary line")
    if m:
        eq((u["inodes_used"], u["inodes"], u["pages_used"], u["pages"]),
           tuple(int(x) for x in m.groups()), f"{what}: usage against fsck.vsmfs")

    n, hdr_blocks = journal_geometry(rows["journal"][1])
    j = r["journal"]
    eq((j["journal_blocks"], j["header_blocks"]), (n, hdr_blocks), f"{what}: journal geometry")
    eq((j["checkpoint"], j["commit"], j["checkpoint_area"], j["valid"], j["free"]),
       (0, 0, 0, 0, n), f"{what}: empty journal")
    eq(j["fill_percent"], 0, f"{what}: journal fill")
    eq((j["wear"]["min"], j["wear"]["max"], j["wear"]["buckets"][0]["blocks"]), (0, 0, n),
       f"{what}: journal wear")
    # The fragmentation report counts a last superpage cut short (by the
    # backup superblock in the last block) too.
    nvsp = -(-data_pages // VSP)
    eq(r["fragmentation"], {"vsps": nvsp, "full": 0, "full_contiguous": 0, "full_aligned": 0,
                            "partial": 0, "free": nvsp}, f"{what}: fragmentation")

    # -j and -f select one part; text output carries the same numbers.
    eq(sorted(inspect_json(img, "-j")), ["device", "journal"], f"{what}: -j parts")
    eq(sorted(inspect_json(img, "-f")), ["device", "fragmentation"], f"{what}: -f parts")
    text = run(INSPECT, img)
    eq(text.returncode, 0, f"{what}: text output")
    check(f"0 used, {data_pages - 1} free of {data_pages - 1}" in text.stdout,
          f"{what}: text usage line")
    lines = text.stdout.splitlines()
    eq(lines[3:3 + len(table)], table, f"{what}: text region table against mkfs.vsmfs -n")


def put(f, off, data):
    f.seek(off)
    f.write(data)


def test_edited(tmp):
    """Set up bitmaps, page table, journal and an inode by hand and check the counts."""
    img = os.path.join(tmp, "edited.img")
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    rows, inodes, vsps, _ = mkfs_layout(img, ["-J", "1M"])
    lb, pt = rows["logical page bitmap"][0], rows["page table"][0]
    ib, it = rows["inode bitmap"][0], rows["inode table"][0]
    js = rows["journal"][0]
    n, hdr_blocks = journal_geometry(rows["journal"][1])
    with open(img, "r+b") as f:
        # VSP 1, 2 and 4 fully used, VSP 3 partly (one page).
        f.seek(lb * BS)
        bitmap = bytearray(f.read(BS))
        for p in list(range(512, 1536)) + [1600] + list(range(2048, 2560)):
            bitmap[p // 8] |= 1 << (p % 8)
        put(f, lb * BS, bitmap)
        # Page table: VSP 2 with two frames swapped (not contiguous); VSP 4
        # and 5 rotated by half a superpage (VSP 4 contiguous, not aligned).
        put(f, pt * BS + 1024 * 8, struct.pack("<QQ", 1025, 1024))
        put(f, pt * BS + 2048 * 8,
            b"".join(struct.pack("<Q", 2048 + (i + 256) % 1024) for i in range(1024)))

        # Journal: checkpoint area of 3 headers: a latest version of the
        # inode bitmap (inodes 1..9 in use), a hole, an old version; one
        # free header with write count 100.
        put(f, js * BS, struct.pack("<IIQQII", 0x324C4E4A, n, 3, 0, hdr_blocks, 0))
        hdr = js * BS + BS

        def header(i, flags, jb, home, wc=0):
            put(f, hdr + i * 16, struct.pack("<QQ", flags | i << 8 | wc << 36, jb | home << 24))

        header(0, 0x7, 0, ib, 3)
        header(1, 0x1, 1, 0, 2)
        header(2, 0x3, 2, ib, 1)
        header(5, 0x0, 5, 0, 100)
        jblk = (js + 2 + hdr_blocks) * BS
        put(f, jblk, bytes([0xff, 0x03]) + bytes(BS - 2))
        put(f, jblk + 2 * BS, bytes(BS))

        # Inode 2 (slot 2): a regular file of three runs, the last owning
        # the tail of its superpage, tail released.
        di = struct.pack("<HHIIIIIQQ", 0o100644, 0, 1, 0, 0, 1, 0, (4 << 20) + 4096, 1024)
        di += bytes(32 + 16) + struct.pack("<II", 0, 3) + struct.pack("<Q", 0)
        di += struct.pack("<QQQ", 512 | 512 << 48, 1024 | 512 << 48, 1536 | 1 << 48)
        put(f, it * BS + 2 * 256, di)

        # Aggregation moved inode 40 into slot 3, and inode 3 out to 40.
        imap = rows["inode mapping table"][0]
        put(f, imap * BS + 3 * 4, struct.pack("<I", 40))
        put(f, imap * BS + 40 * 4, struct.pack("<I", 3))

    r = inspect_json(img, "-i")
    what = "edited image"
    nvsp = -(-rows["data"][1] // VSP)
    eq(r["fragmentation"], {"vsps": nvsp, "full": 3, "full_contiguous": 2, "full_aligned": 1,
                            "partial": 1, "free": nvsp - 4}, f"{what}: fragmentation")
    eq(r["usage"]["pages_used"], 1024 + 1 + 512, f"{what}: pages used")
    eq(r["usage"]["inodes_used"], 9, f"{what}: inodes used (bitmap read through the journal)")
    j = r["journal"]
    eq((j["checkpoint_area"], j["valid"], j["latest"], j["old"], j["holes"], j["free"],
        j["pending_home"]), (3, 2, 1, 1, 1, n - 3, 1), f"{what}: journal headers")
    eq(j["fill_percent"], int(3 * 10000 // n) / 100, f"{what}: journal fill")
    eq((j["wear"]["min"], j["wear"]["max"]), (0, 100), f"{what}: wear range")
    eq(sum(b["blocks"] for b in j["wear"]["buckets"]), n, f"{what}: wear histogram total")
    worn = [b for b in j["wear"]["buckets"] if b["first"] <= 100 < b["first"] + j["wear"]["width"]]
    eq([b["blocks"] for b in worn], [1], f"{what}: bucket of the most worn block")
    eq(r["aggregation"], {"hot": [{"ino": 40, "slot": 3, "in_use": False}], "moved_out": 1,
                          "window_at_least": 16}, f"{what}: aggregation")
    eq(r["files"], [{"ino": 2, "size": (4 << 20) + 4096, "pages": 1024, "runs": 3,
                     "tail_key": 3, "zfdm_tail_released": True,
                     "truncating": False}], f"{what}: files")


def test_errors(tmp):
    zero = os.path.join(tmp, "zero.img")
    with open(zero, "wb") as f:
        f.truncate(20 << 20)
    text = os.path.join(tmp, "text")
    with open(text, "w") as f:
        f.write("not a file system\n")
    for path in (zero, text, os.path.join(tmp, "missing")):
        res = run(INSPECT, path)
        eq(res.returncode, 8, f"exit status on {os.path.basename(path)}")
        check(res.stderr.startswith("vsmfs-inspect: ") and path in res.stderr,
              f"message on {os.path.basename(path)}: {res.stderr.strip()!r}")
        eq(res.stdout, "", f"no report on {os.path.basename(path)}")
    check("not a vsmfs file system" in run(INSPECT, zero).stderr, "message on a zeroed image")
    eq(run(INSPECT).returncode, 16, "exit status without a device")
    eq(run(INSPECT, "-j", "-f", zero).returncode, 16, "exit status with -j and -f")


def main():
    tmp = tempfile.mkdtemp(prefix="vsmfs-inspect.")
    try:
        common = ["-L", "inspect", "-U", "0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9"]
        for size, opts in ((16 << 20, []), (64 << 20, ["-J", "4M"]),
                           (100 << 20, ["-J", "1M", "-N", "100"]),
                           (256 << 20, ["-N", "20000"]), (1 << 30, ["-J", "16M"])):
            test_fresh(tmp, size, opts + common)
        test_edited(tmp)
        test_errors(tmp)
    finally:
        shutil.rmtree(tmp)
    if failures:
        print(f"inspect-test: {failures} checks failed")
        return 1
    print("inspect-test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
