# SPDX-License-Identifier: GPL-2.0
"""File system calls the shell cannot make, for test scripts; each prints
its result, or the errno name and exits 1:

  fsapi.py handle PATH FILE      name_to_handle_at(PATH), saved in FILE
  fsapi.py byhandle MNT FILE     open_by_handle_at(), prints the first line
                                 of a file, or "dir" for a directory
  fsapi.py label PATH [LABEL]    FS_IOC_GETFSLABEL, after FS_IOC_SETFSLABEL
  fsapi.py tmpfile DIR TEXT [NAME]
                                 O_TMPFILE in DIR holding TEXT, linked at
                                 DIR/NAME with linkat() if NAME is given,
                                 else kept open until stdin closes
"""

import ctypes
import errno
import fcntl
import os
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
MAX_HANDLE_SZ = 128
FSLABEL_MAX = 256
FS_IOC_GETFSLABEL = 0x81009431
FS_IOC_SETFSLABEL = 0x41009432


def die(what):
    e = ctypes.get_errno() if isinstance(what, str) else what.errno
    print(errno.errorcode.get(e, str(e)))
    sys.exit(1)


def handle(path, out):
    buf = ctypes.create_string_buffer(8 + MAX_HANDLE_SZ)
    struct.pack_into("I", buf, 0, MAX_HANDLE_SZ)
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, path.encode(), buf, ctypes.byref(mount_id), 0):
        die("name_to_handle_at")
    size, htype = struct.unpack_from("Ii", buf, 0)
    with open(out, "w") as f:
        f.write(f"{htype} {buf.raw[8:8 + size].hex()}\n")
    print(f"type {htype} size {size}")


def byhandle(mnt, saved):
    htype, hexbytes = open(saved).read().split()
    raw = bytes.fromhex(hexbytes)
    buf = ctypes.create_string_buffer(struct.pack("Ii", len(raw), int(htype)) + raw)
    mfd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    fd = libc.open_by_handle_at(mfd, buf, os.O_RDONLY)
    if fd < 0:
        die("open_by_handle_at")
    st = os.fstat(fd)
    if (st.st_mode & 0o170000) == 0o040000:
        print("dir")
    else:
        print(os.read(fd, 4096).decode().split("\n")[0])


def label(path, new=None):
    fd = os.open(path, os.O_RDONLY)
    try:
        if new is not None:
            fcntl.ioctl(fd, FS_IOC_SETFSLABEL, new.encode().ljust(FSLABEL_MAX, b"\0"))
        out = fcntl.ioctl(fd, FS_IOC_GETFSLABEL, bytes(FSLABEL_MAX))
    except OSError as e:
        die(e)
    print(out.split(b"\0")[0].decode())


def tmpfile(d, text, name=None):
    try:
        fd = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o644)
        os.write(fd, text.encode())
        if name is None:
            print("open", flush=True)
            sys.stdin.read()
            return
        # linkat(AT_FDCWD, "/proc/self/fd/N", ..., AT_SYMLINK_FOLLOW)
        if libc.linkat(-100, f"/proc/self/fd/{fd}".encode(), -100,
                       os.path.join(d, name).encode(), 0x400):
            die("linkat")
    except OSError as e:
        die(e)
    print("linked")


cmds = {"handle": handle, "byhandle": byhandle, "label": label, "tmpfile": tmpfile}
if len(sys.argv) < 2 or sys.argv[1] not in cmds:
    sys.exit(__doc__)
cmds[sys.argv[1]](*sys.argv[2:])
