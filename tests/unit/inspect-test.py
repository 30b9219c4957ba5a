#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of tools/vsmfs-inspect on image files made by tools/mkfs.vsmfs.

Fresh images of several sizes, journal sizes, inode counts and logical
sizes, sparse (the default) or not, with fast-commit areas (the default)
or not, must show the layout "mkfs.vsmfs -n" prints, the usage fsck.vsmfs
reports, an empty journal laid out in what the fast-commit areas leave of
its region, and only free virtual superpages. An image whose bitmaps, page table, journal and inode
table are edited here must show the counts the edits imply, including a
bitmap block read through the journal and the holes (logical pages
without a frame) in the runs of a file. A file that
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
    """Create the file system and return the table "mkfs.vsmfs -n" prints.
    Its row "fast-commit areas" is (start, blocks, areas, blocks of each),
    (0, 0, 0, 0) when there is none."""
    res = run(MKFS, "-n", *opts, img)
    eq(res.returncode, 0, f"mkfs.vsmfs -n {opts}")
    rows, inodes, vsps, lpages = {"fast-commit areas": (0, 0, 0, 0)}, None, None, None
    table = res.stdout.splitlines()[2:]
    for line in res.stdout.splitlines():
        m = re.match(r"\s+logical pages\s+(\d+)\s+\((\d+ MiB; sparse|not sparse)", line)
        if m:
            lpages = (int(m.group(1)), m.group(2) != "not sparse")
            continue
        m = re.match(r"\s+fast-commit areas\s+(\d+)\s+(\d+)\s+\((\d+) areas? of (\d+) blocks?,"
                     r" in the journal\)$", line)
        if m:
            rows["fast-commit areas"] = tuple(int(x) for x in m.groups())
            continue
        m = re.match(r"\s+([a-z ]+?)\s+(\d+)\s+(\d+)(?:\s+\((\d+) (inodes|virtual))?", line)
        if not m or m.group(1) not in REGIONS:
            continue
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        if m.group(5) == "inodes":
            inodes = int(m.group(4))
        elif m.group(5) == "virtual":
            vsps = int(m.group(4))
    eq(len(rows), len(REGIONS) + 1, f"regions printed by mkfs.vsmfs -n {opts}")
    check(lpages is not None, f"logical pages printed by mkfs.vsmfs -n {opts}")
    res = run(MKFS, "-q", "-f", *opts, img)
    eq(res.returncode, 0, f"mkfs.vsmfs {opts}: {res.stderr.strip()}")
    rows["logical pages"] = lpages
    return rows, inodes, vsps, table


def journal_of(rows):
    """The journal blocks and header blocks of the journal region of
    @rows, without its fast-commit areas, and those areas' blocks."""
    fc = rows["fast-commit areas"][1]
    return journal_geometry(rows["journal"][1] - fc) + (fc,)


def test_fresh(tmp, size, opts, fc_areas=None):
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

    # A fresh file system: every logical page and frame free (page 0 is
    # reserved, the empty root directory owns none), every inode free but
    # the root.
    data_pages = rows["data"][1]
    lpages, sparse = rows["logical pages"]
    eq((sb["sparse"], sb["logical_pages"]), (sparse, lpages), f"{what}: logical pages")
    eq("sparse" in sb["features"], sparse, f"{what}: sparse feature")
    if sparse:
        check(lpages > data_pages and lpages % VSP == 0, f"{what}: {lpages} logical pages")
    else:
        eq(lpages, data_pages, f"{what}: logical pages without the sparse feature")
    u = r["usage"]
    eq((u["pages"], u["pages_used"], u["pages_free"]), (lpages - 1, 0, lpages - 1),
       f"{what}: logical pages")
    eq((u["frames"], u["frames_used"], u["frames_free"]), (data_pages - 1, 0, data_pages - 1),
       f"{what}: frames")
    eq((u["inodes"], u["inodes_used"], u["inodes_free"]), (inodes - 1, 1, inodes - 2),
       f"{what}: inodes")
    fsck = run(FSCK, "-n", img)
    eq(fsck.returncode, 0, f"{what}: fsck.vsmfs -n")
    m = re.search(r"(\d+)/(\d+) inodes, (\d+)/(\d+) logical pages", fsck.stdout)
    check(m is not None, f"{what}: fsck.vsmfs summary line")
    if m:
        eq((u["inodes_used"], u["inodes"], u["pages_used"], u["pages"]),
           tuple(int(x) for x in m.groups()), f"{what}: usage against fsck.vsmfs")
    m = re.search(r"(\d+)/(\d+) frames in use", fsck.stdout)
    eq(m is not None, sparse, f"{what}: frames in the fsck.vsmfs summary line")
    if m:
        eq((u["frames_used"], u["frames"]), tuple(int(x) for x in m.groups()),
           f"{what}: frames against fsck.vsmfs")

    # The fast-commit areas: the last blocks of the journal region, as
    # many as mkfs can fit (a quarter of the region at most, a journal of
    # 16 blocks left), the feature set with them.
    js, jb = rows["journal"]
    fstart, fblocks, areas, area_blocks = rows["fast-commit areas"]
    if fc_areas is not None:
        eq((areas, area_blocks), fc_areas, f"{what}: fast-commit areas")
    eq("fast_commit" in sb["features"], areas > 0, f"{what}: fast_commit feature")
    if areas:
        eq((fstart, fblocks), (js + jb - areas * area_blocks, areas * area_blocks),
           f"{what}: fast-commit areas at the end of the journal region")
        check(fblocks <= jb // 4 and jb - fblocks >= 16 and fblocks <= 1024,
              f"{what}: {fblocks} fast-commit blocks fit a journal region of {jb}")
        eq(r["layout"]["fast_commit_areas"], {"start": fstart, "blocks": fblocks, "areas": areas,
                                              "area_blocks": area_blocks},
           f"{what}: fast-commit areas in the layout")
        eq(r["journal"]["fast_commit"], {"areas": areas, "area_blocks": area_blocks,
                                         "start": fstart, "commit": 1, "records": 0,
                                         "replayed": 0}, f"{what}: journal fast commits")
    else:
        check("fast_commit_areas" not in r["layout"], f"{what}: no fast-commit areas")
        eq(r["journal"]["fast_commit"], None, f"{what}: journal without fast commits")
    n, hdr_blocks, _ = journal_of(rows)
    j = r["journal"]
    eq((j["journal_blocks"], j["header_blocks"]), (n, hdr_blocks), f"{what}: journal geometry")
    eq((j["checkpoint"], j["commit"], j["checkpoint_area"], j["valid"], j["free"]),
       (0, 0, 0, 0, n), f"{what}: empty journal")
    eq(j["fill_percent"], 0, f"{what}: journal fill")
    eq((j["wear"]["min"], j["wear"]["max"], j["wear"]["buckets"][0]["blocks"]), (0, 0, n),
       f"{what}: journal wear")
    # The fragmentation report covers the logical pages, and counts a last
    # superpage cut short (by the backup superblock in the last block) too.
    nvsp = -(-lpages // VSP)
    eq(r["fragmentation"], {"vsps": nvsp, "full": 0, "full_contiguous": 0, "full_aligned": 0,
                            "partial": 0, "free": nvsp}, f"{what}: fragmentation")

    # -j and -f select one part; text output carries the same numbers.
    eq(sorted(inspect_json(img, "-j")), ["device", "journal"], f"{what}: -j parts")
    eq(sorted(inspect_json(img, "-f")), ["device", "fragmentation"], f"{what}: -f parts")
    text = run(INSPECT, img)
    eq(text.returncode, 0, f"{what}: text output")
    check(f"0 used, {data_pages - 1} free of {data_pages - 1}" in text.stdout,
          f"{what}: text usage line")
    check(f"0 used, {lpages - 1} free of {lpages - 1}" in text.stdout,
          f"{what}: text usage line of the logical pages")
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
    lpages = rows["logical pages"][0]
    lb, pt = rows["logical page bitmap"][0], rows["page table"][0]
    ib, it = rows["inode bitmap"][0], rows["inode table"][0]
    js = rows["journal"][0]
    n, hdr_blocks, _ = journal_of(rows)
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

        # Inode 5 (slot 5): a sparse file, a run of the last superpage of
        # the logical space (no frame at all) and a run of 100 pages of
        # which 10 have no frame.
        di = struct.pack("<HHIIIIIQQ", 0o100644, 0, 1, 0, 0, 0, 0, 3 << 20, 90)
        di += bytes(32 + 16) + struct.pack("<II", 0, 0) + struct.pack("<Q", 0)
        di += struct.pack("<QQ", (lpages - 512) | 512 << 48, 2560 | 100 << 48)
        put(f, it * BS + 5 * 256, di)
        put(f, pt * BS + 2560 * 8, struct.pack("<Q", (1 << 40) - 1) * 10)

        # Aggregation moved inode 40 into slot 3, and inode 3 out to 40.
        imap = rows["inode mapping table"][0]
        put(f, imap * BS + 3 * 4, struct.pack("<I", 40))
        put(f, imap * BS + 40 * 4, struct.pack("<I", 3))

    r = inspect_json(img, "-i")
    what = "edited image"
    nvsp = -(-lpages // VSP)
    eq(r["fragmentation"], {"vsps": nvsp, "full": 3, "full_contiguous": 2, "full_aligned": 1,
                            "partial": 1, "free": nvsp - 4}, f"{what}: fragmentation")
    eq(r["usage"]["pages_used"], 1024 + 1 + 512, f"{what}: pages used")
    eq(r["usage"]["frames_used"], 1024 + 1 + 512, f"{what}: frames used")
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
                     "holes": 0, "tail_key": 3, "zfdm_tail_released": True,
                     "truncating": False, "hole_runs": []},
                    {"ino": 5, "size": 3 << 20, "pages": 90, "runs": 2, "holes": 522,
                     "tail_key": 0, "zfdm_tail_released": False, "truncating": False,
                     "hole_runs": [{"key": 0, "lpn": lpages - 512, "pages": 512, "framed": 0,
                                    "holes": 512},
                                   {"key": 1, "lpn": 2560, "pages": 100, "framed": 90,
                                    "holes": 10}]}], f"{what}: files")
    text = run(INSPECT, "-i", img).stdout
    check(f"piece 0: run lpn {lpages - 512}+512, 0 framed, 512 holes" in text,
          f"{what}: text run of holes")
    check("piece 1: run lpn 2560+100, 90 framed, 10 holes" in text,
          f"{what}: text run with holes")


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
                           (256 << 20, ["-N", "20000"]), (1 << 30, ["-J", "16M"]),
                           (16 << 20, ["-O", "^sparse"]), (64 << 20, ["-O", "^sparse,^sb_last"]),
                           (64 << 20, ["-l", "1G"]), (100 << 20, ["--logical-size", "98M"])):
            test_fresh(tmp, size, opts + common)
        # The default areas, fewer on a small journal region (areas halved,
        # then blocks taken off the one left), none on the smallest or
        # without the feature.
        for size, opts, areas in ((64 << 20, [], (8, 32)), (64 << 20, ["-J", "256K"], (1, 16)),
                                  (64 << 20, ["-J", "96K"], (1, 6)),
                                  (64 << 20, ["-J", "64K"], (0, 0)),
                                  (64 << 20, ["-O", "^fast_commit"], (0, 0)),
                                  (64 << 20, ["-O", "^fast_commit,fast_commit"], (8, 32))):
            test_fresh(tmp, size, opts + common, areas)
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
